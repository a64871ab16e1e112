"""Strip notebooks before committing: no outputs, no execution counts, no saved widget state,
and the ``python3`` kernelspec (so JupyterLab opens them without a kernel-picker dialog).

Usage: ``python tools/strip_notebooks.py notebooks/*.ipynb`` (``make strip`` does exactly this).
``--check`` reports notebooks that would change and exits 1 instead of writing.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def strip(nb: dict) -> dict:
    """Return ``nb`` (a notebook as a JSON dict) stripped in place."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        meta = cell.get("metadata", {})
        for key in ("execution", "collapsed", "scrolled"):
            meta.pop(key, None)
    meta = nb.setdefault("metadata", {})
    meta.pop("widgets", None)
    meta["kernelspec"] = dict(KERNELSPEC)
    return nb


def dumps(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="+", type=pathlib.Path)
    parser.add_argument("--check", action="store_true", help="only report; exit 1 if any would change")
    args = parser.parse_args(argv)
    changed = []
    for path in args.paths:
        text = path.read_text(encoding="utf-8")
        new = dumps(strip(json.loads(text)))
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in changed:
        print(("would strip " if args.check else "stripped ") + str(path))
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
