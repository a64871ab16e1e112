"""Classroom mode: serve the notebooks as code-free dashboards with Voilà, offline, on 127.0.0.1.

Usage (from the repository root, with the project's virtual environment)::

    .venv/bin/python tools/classroom.py                 # notebooks/ at http://127.0.0.1:8866/
    .venv/bin/python tools/classroom.py --port 9000 --no-browser
    .venv/bin/python tools/classroom.py notebooks/01_some_notebook.ipynb
    .venv/bin/python tools/classroom.py --solutions     # the instructor variant (make instructor)

Each notebook runs top to bottom in its own kernel when its page is opened; the page shows
the narrative, formulas, sliders and figures, but no code. The server listens on 127.0.0.1
only. Everything the page needs comes from this machine: Voilà's own "lab" template asks a
CDN for Font Awesome CSS, so we serve the notebooks with the ``symsgd`` template
(``tools/voila/templates/symsgd``), which drops those links (the icons are bundled with
Voilà). ``tests/browser/test_voila.py`` opens every notebook this way in Chromium and fails
if any request leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from symsgd_jupyter import PLOTLY_BUNDLE_ENV, plotly_bundle

#: Tells the kernels they serve a classroom page (read by ``symsgd_core.ui.mode.classroom_mode``: one compact line per
#: claim cell); the same names as in ``symsgd_core/ui/mode.py`` (not imported: the launcher stays light).
MODE_ENV, CLASSROOM = "SYMSGD_MODE", "classroom"
#: The instructor variant: every worked solution of the Check-yourself panels shown open (``solutions_open``).
SOLUTIONS_ENV, SOLUTIONS_OPEN = "SYMSGD_SOLUTIONS", "open"

REPO = Path(__file__).resolve().parents[1]
#: A Jupyter data directory holding ``voila/templates/symsgd``.
TEMPLATE_ROOT = Path(__file__).resolve().parent
TEMPLATE = "symsgd"
DEFAULT_PORT = 8866
#: URL folder, relative to Voilà's base URL, where Voilà serves the template's static files (plotly's bundle too).
STATIC_URL_FOLDER = "voila/static"


def prepare_template_root(dest: Path | str) -> Path:
    """Build a Jupyter data directory with the ``symsgd`` template plus plotly's widget module.

    Every plotly ``FigureWidget`` normally carries its ~5 MB of JavaScript in its own widget
    state, and the page compiles it once per figure. anywidget gives each widget model 2 s to
    load that code; on a dashboard that creates all its figures at once (Voilà) the later ones
    miss the limit on a busy machine and stay frozen. Served as one static file, the module is
    fetched and compiled once per page (and cached by the browser). The kernels learn where it is,
    relative to the page's base URL, from ``SYMSGD_PLOTLY_BUNDLE`` (:func:`voila_env`; read by
    ``symsgd_core/ui/plotly_loading.py``), so the page works under any host name, port or prefix.

    Args:
        dest: an empty or new directory (e.g. a temporary one).

    Returns:
        ``dest``, to be put first on ``JUPYTER_PATH``.
    """
    dest = Path(dest)
    target = dest / "voila" / "templates" / TEMPLATE
    shutil.copytree(TEMPLATE_ROOT / "voila" / "templates" / TEMPLATE, target, dirs_exist_ok=True)
    src, name = plotly_bundle()
    if src.is_file():
        (target / "static").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target / "static" / name)
    return dest


def voila_env(template_root: Path | str = TEMPLATE_ROOT, base: dict | None = None, solutions: bool = False) -> dict:
    """Environment for Voilà and its kernels.

    Args:
        template_root: Jupyter data directory holding ``voila/templates/symsgd`` (prepended to
            ``JUPYTER_PATH``); from :func:`prepare_template_root` to also serve plotly's module.
        base: environment to extend (default: ``os.environ``); not modified.
        solutions: the instructor variant (every worked solution shown open).

    Returns:
        A new dict. ``SYMSGD_PLOTLY_BUNDLE`` (the module's URL relative to the base URL) is set when
        ``template_root`` serves plotly's module, and removed otherwise; ``SYMSGD_MODE=classroom`` always;
        ``SYMSGD_SOLUTIONS=open`` with ``solutions`` (removed otherwise, so a lecturer's shell cannot leak it).
    """
    env = dict(os.environ if base is None else base)
    env[MODE_ENV] = CLASSROOM
    if solutions:
        env[SOLUTIONS_ENV] = SOLUTIONS_OPEN
    else:
        env.pop(SOLUTIONS_ENV, None)
    root = Path(template_root)
    paths = [str(root)] + [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    env["JUPYTER_PATH"] = os.pathsep.join(paths)
    _, name = plotly_bundle()
    if (root / "voila" / "templates" / TEMPLATE / "static" / name).is_file():
        env[PLOTLY_BUNDLE_ENV] = f"{STATIC_URL_FOLDER}/{name}"
    else:
        env.pop(PLOTLY_BUNDLE_ENV, None)
    return env


#: Seconds Voilà waits for a cell's outputs after the cell finished (nbclient's default is 4 s; a late figure
#: display would otherwise be dropped from the page without a word: "Timeout waiting for IOPub output").
IOPUB_TIMEOUT_S = 120


def voila_argv(target: Path | str, port: int = DEFAULT_PORT, open_browser: bool = False,
               python: str = sys.executable) -> list[str]:
    """Command line that serves ``target`` (a notebook or a folder of notebooks) with Voilà.

    Args:
        target: notebook file or directory.
        port: TCP port on 127.0.0.1 (must be free: no silent move to another port).
        open_browser: open the system browser on the page once the server is up.
        python: interpreter that has Voilà installed (the kernels use it too).

    Returns:
        The argument list for :func:`subprocess.run`.

    Raises:
        ValueError: ``port`` is not in 1..65535.
    """
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"port must be an int in 1..65535, got {port!r}")
    argv = [python, "-m", "voila", str(target),
            "--Voila.ip=127.0.0.1", f"--Voila.port={port}", "--Voila.port_retries=0",
            f"--VoilaConfiguration.template={TEMPLATE}",
            # a teacher at the projector needs to see what went wrong, not a generic message
            "--VoilaConfiguration.show_tracebacks=True",
            # Voilà executes each cell, then waits IOPUB_TIMEOUT_S for the cell's outputs; nbclient's default (4 s)
            # silently drops a figure whose display arrives later, as it does on a busy or slow machine
            f"--VoilaExecutor.iopub_timeout={IOPUB_TIMEOUT_S}"]
    if not open_browser:
        argv.append("--no-browser")
    return argv


def page_path(target: Path | str, notebook: str) -> str:
    """URL path of ``notebook``'s dashboard when Voilà serves ``target`` (a folder: one page per notebook
    under ``/voila/render/``; a single notebook: the root page)."""
    return f"/voila/render/{notebook}" if Path(target).is_dir() else "/"


def page_urls(target: Path | str, port: int = DEFAULT_PORT) -> dict[str, str]:
    """Notebook file name → the address of its dashboard, for every notebook Voilà serves from ``target``."""
    target = Path(target)
    names = sorted(p.name for p in target.glob("*.ipynb")) if target.is_dir() else [target.name]
    return {name: f"http://127.0.0.1:{port}{page_path(target, name)}" for name in names}


def check_template() -> None:
    """Raise FileNotFoundError if the offline template is missing."""
    conf = TEMPLATE_ROOT / "voila" / "templates" / TEMPLATE / "conf.json"
    if not conf.is_file():
        raise FileNotFoundError(f"the offline Voilà template is missing: {conf} (restore tools/voila/ from git)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the symsgd notebooks as code-free, offline Voilà dashboards "
                                                 "on 127.0.0.1.")
    parser.add_argument("target", nargs="?", default=str(REPO / "notebooks"),
                        help="notebook or folder of notebooks (default: notebooks/)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT})")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser window")
    parser.add_argument("--solutions", action="store_true",
                        help="instructor variant: every Check-yourself worked solution shown open (make instructor)")
    args = parser.parse_args(argv)
    target = Path(args.target)
    if not target.exists():
        parser.error(f"{target} does not exist")
    check_template()
    variant = " — instructor variant, every worked solution open" if args.solutions else ""
    print(f"Classroom mode{variant}: {target} at http://127.0.0.1:{args.port}/ (offline; Ctrl+C stops it)")
    if target.is_dir():
        print("Double-click a notebook in that list (it opens in a new tab), or open its page directly:")
    for name, url in page_urls(target, args.port).items():
        print(f"  {Path(name).stem:32} {url}")
    print("A page runs its notebook when it is opened: open a heavy one (03, 04) a minute before you need it.",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="symsgd-classroom-") as tmp:
        root = prepare_template_root(tmp)
        try:
            return subprocess.call(voila_argv(target, args.port, open_browser=not args.no_browser),
                                   env=voila_env(root, solutions=args.solutions))
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
