"""How far a reader scrolls in JupyterLab before a lesson's first figure, in screens.

Each notebook is opened as a student opens it: JupyterLab (the browser suite's server, ``start_lab``, its kernels
importing this checkout's package) in headless Chromium at 1280×900 with the file browser open, Run → Run All Cells,
then, once every figure is drawn, the page is measured with the suite's reader's-path probe (``js/reader_path.js``):
the first figure's top offset and the notebook's whole height in screens (multiples of the notebook panel's visible
height), and the number of figures. ``--shots DIR`` also saves the first screen of each notebook as a PNG.

Usage, from the repository root::

    .venv/bin/python tests/browser/lesson_screens.py notebooks/*.ipynb [--shots DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path

from browser_setup import CHROMIUM_FLAGS, CHROMIUM_PATH, REPO
from figure_inspection import PROBE_JS
from js_files import script
from notebook_run import NotebookRun
from servers import start_lab

#: The student's window: a 1280×900 laptop screen (the lesson issue's measure).
VIEWPORT = {"width": 1280, "height": 900}
_PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
_READER_PATH_JS = script("reader_path")
#: A notebook's budget: open, Run All, every figure drawn, seconds.
TIMEOUT_S = 600.0
#: The figures count as all drawn when their number has not changed for this long after the kernel went idle, s.
SETTLED_S = 3.0


class _Temp:
    """What ``start_lab`` asks of pytest's ``tmp_path_factory``: fresh folders (under one temporary root)."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="lesson-screens-"))

    def mktemp(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.root))


def measure(page, server, notebook: Path, shots: Path | None = None) -> dict:
    """Open ``notebook`` (served by ``server``) in ``page``, Run All, wait for its figures; return the reader's path
    (``reader_path.js``: ``screens_to_first_figure``, ``screens_total``, …) with ``figures`` and ``seconds``."""
    from test_jupyterlab import _wait_kernel_idle, run_all_cells

    t0 = time.monotonic()
    run = NotebookRun("screens", notebook.name, page, timeout_s=TIMEOUT_S, server=server)
    try:
        page.goto(server.url(f"/lab/workspaces/s{uuid.uuid4().hex[:8]}/tree/{notebook.name}?reset"),
                  timeout=run.ms(90))
        page.wait_for_selector(f"{_PANEL} .jp-Notebook .jp-Cell", timeout=run.ms(90))
        _wait_kernel_idle(page, run, 90)
        if not page.evaluate("() => !!document.querySelector('.jp-FileBrowser:not(.lm-mod-hidden)')"):
            page.keyboard.press("Control+Shift+F")  # the file browser, open as a student's JupyterLab shows it
        run_all_cells(page, run)
        count, since = -1, time.monotonic()
        while time.monotonic() - since < SETTLED_S:
            n = page.evaluate(f"() => document.querySelectorAll('{_PANEL} .js-plotly-plot').length")
            if n != count:
                count, since = n, time.monotonic()
            run.ms()  # raises when the budget is used up
            time.sleep(0.25)  # polling interval while the figures draw, not a synchronisation
        path = page.evaluate(_READER_PATH_JS, _PANEL)
        if shots is not None:
            page.evaluate(f"() => {{ const p = document.querySelector('{_PANEL} .jp-WindowedPanel-outer'); "
                          "if (p) p.scrollTop = 0; }")
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / f"lab-first-screen-{notebook.stem}.png"))
    finally:
        run.watchdog.cancel()
        server.shutdown_kernels()
    return {**path, "figures": count, "file_browser_open": page.evaluate(
        "() => !!document.querySelector('.jp-FileBrowser:not(.lm-mod-hidden)')"),
        "seconds": round(time.monotonic() - t0, 1)}


def table(rows: dict[str, dict]) -> str:
    """The measurements as a text table, one notebook a line."""
    lines = [f"{'notebook':<30} {'screens before first figure':>27} {'screens total':>13} {'figures':>7}"]
    for name, r in rows.items():
        first = "-" if r.get("screens_to_first_figure") is None else f"{r['screens_to_first_figure']:.2f}"
        lines.append(f"{name:<30} {first:>27} {r['screens_total']:>13.1f} {r['figures']:>7}")
    lines.append(f"JupyterLab in Chromium at {VIEWPORT['width']}×{VIEWPORT['height']}, file browser open, after Run "
                 "All; a screen is the notebook panel's visible height.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--shots", type=Path, help="save each notebook's first screen as a PNG in this folder")
    parser.add_argument("--json", type=Path, help="also write the measurements as JSON")
    args = parser.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks]
    folders = {p.parent for p in notebooks}
    if len(folders) != 1:
        raise SystemExit("give notebooks of one folder")
    import browser_setup
    from playwright.sync_api import sync_playwright

    browser_setup.NOTEBOOK_DIR = folders.pop()  # the server serves a copy of this folder
    # the kernels import the package of this checkout (not another worktree's editable install)
    server = start_lab(_Temp(), name="lesson-screens",
                       env={"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))})
    rows: dict[str, dict] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_FLAGS)
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(PROBE_JS)
            for nb in notebooks:
                page = context.new_page()
                try:
                    rows[nb.stem] = measure(page, server, nb, args.shots)
                finally:
                    page.close()
                print(re.sub(r"\s+", " ", json.dumps({nb.stem: rows[nb.stem]})), flush=True)
            browser.close()
    finally:
        server.stop()
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
