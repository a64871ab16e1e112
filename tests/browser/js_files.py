"""The browser suite's JavaScript (page probes, audits, expressions for ``page.evaluate``) lives in ``.js`` files in
``js/`` next to this module; :func:`script` reads one by name."""

from __future__ import annotations

from pathlib import Path

#: The folder of the browser suite's scripts.
JS_DIR = Path(__file__).resolve().with_name("js")


def script(name: str, folder: Path = JS_DIR) -> str:
    """The source of ``<folder>/<name>.js`` (a script, or an expression that ``page.evaluate`` calls)."""
    return (folder / f"{name}.js").read_text(encoding="utf-8")
