"""The gallery's browser test (test_gallery.py), step by step: how a mode opens the gallery, and the checks of the
platform that every mode shares.

The gallery (``tests/gallery/gallery.ipynb``) is a small notebook, not a lesson, that holds at least as much as the
heaviest notebook (14 figures from the package's controllers, analytic and re-simulating, a long cell after the
first figures, formulas, a claim cell, a Check-yourself panel). Everything here reuses the suite's machinery
(``servers``, ``page_waits``, ``reader_checks``, ``page_load``) and the checks of ``test_jupyterlab`` and
``test_voila``; only what those do inline (open a notebook and Run All, open a classroom page) is written here.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from browser_report import ARTIFACTS, REPO
from browser_setup import NOTEBOOK_TIMEOUT_S
from figure_inspection import (
    OFF_MACHINE_CONTROLS_JS,
    check_figures,
    describe_controllers,
    format_output_errors,
    output_errors,
)
from js_files import script
from notebook_run import RECOVERED_START_MISSES, ConsoleLog, NotebookRun, explain
from page_load import FigureLoad, PageMetrics, kernel_figure_count, wait_every_figure_drawn
from page_waits import wait_classroom_cells_ran
from servers import Server
from slider_moves import ControllerLatency, exercise_controller
from test_jupyterlab import _PANEL, run_all_cells
from test_jupyterlab import _wait_kernel_idle as wait_lab_kernel_idle

#: The gallery notebook.
GALLERY = REPO / "tests" / "gallery" / "gallery.ipynb"
#: What the gallery's last cell prints: every cell before it ran.
DONE_MARK = "gallery: every cell ran"
#: The gallery must show at least this many figures (the heaviest notebook, 04, shows 11).
MIN_FIGURES = 12
#: JupyterLab's dark theme, as its Settings → Theme menu names it.
DARK_THEME = "JupyterLab Dark"
#: Moves of each slider tried (there and back, so the controller ends where it started).
MOVES = 2


@dataclass(frozen=True)
class Mode:
    """A way a reader opens the gallery.

    Attributes:
        name: the pytest id; also names the record and the screenshot (``gallery-<name>.png``).
        server: the fixture serving the gallery (test_gallery.py).
        voila: a classroom page (Voilà) rather than JupyterLab.
        host: the host name the page is opened at (servers listen on 127.0.0.1; ``localhost`` reaches them too).
        throttle: Chromium's CPU slowdown.
        dark: JupyterLab in its dark theme from the start (set in the server's user settings).
        cold: the server's kernels start on an empty compiled-kernel cache (:func:`~servers.cold_kernel_cache`):
            the page's kernel compiles every engine it runs, as on a clone that skipped the set-up's warm-up.
    """

    name: str
    server: str
    voila: bool = False
    host: str = "127.0.0.1"
    throttle: float = 1.0
    dark: bool = False
    cold: bool = False

    @property
    def scope(self) -> str:
        """CSS selector of the notebook's content in the page."""
        return "body" if self.voila else _PANEL


class GalleryRun(NotebookRun):
    """A :class:`NotebookRun` of the gallery in ``mode``, its budget scaled by the CPU slowdown as the suite's; the
    screenshots are ``test-artifacts/browser/gallery-<mode>.png`` (``-FAILED`` when a step failed)."""

    def __init__(self, mode: Mode, page, server: Server):
        super().__init__(mode.name, GALLERY.name, page, timeout_s=NOTEBOOK_TIMEOUT_S * max(1.0, mode.throttle / 2),
                         server=server)

    def screenshot_path(self, suffix: str = "") -> Path:
        return ARTIFACTS / f"gallery-{self.mode}{suffix}.png"


# ------------------------------------------------------------- servers (servers.start_lab, start_voila)


#: JupyterLab user settings that open every page in the dark theme.
DARK_SETTINGS = {"@jupyterlab/apputils-extension/themes.jupyterlab-settings": {"theme": DARK_THEME}}


def voila_page_url(server: Server, classroom, host: str) -> str:
    """The gallery's classroom page on ``server``, opened at ``host``."""
    url = server.url(classroom.page_path(server.cwd, GALLERY.name))
    return url.replace("://127.0.0.1:", f"://{host}:", 1)


# --------------------------------------------------------------------------- opening the gallery


def open_and_run_all_in_lab(page, server: Server, run: GalleryRun, mode: Mode) -> float:
    """Open the gallery in JupyterLab (in the dark theme if ``mode.dark``), Run → Run All Cells from the menu, and
    wait until every code cell has run and the kernel is idle (or a cell shows an error).

    Returns:
        The page time of Run All (where the figures' clock starts).
    """
    slow = mode.throttle
    with run.step("open the gallery in JupyterLab"):
        page.goto(server.url(f"/lab/workspaces/t{uuid.uuid4().hex[:8]}/tree/{GALLERY.name}?reset"),
                  timeout=run.ms(90 * slow))
        page.wait_for_selector(f"{_PANEL} .jp-Notebook .jp-Cell", timeout=run.ms(90 * slow))
        wait_lab_kernel_idle(page, run, 90 * slow)
    if mode.dark:
        with run.step(f"the page opened in {DARK_THEME} (the server's user settings)"):
            page.wait_for_function("(theme) => document.body.dataset.jpThemeName === theme", arg=DARK_THEME,
                                   timeout=run.ms(30 * slow), polling=200)
    t0, state = run_all_cells(page, run, slow)
    with run.step("every code cell ran"):
        assert state["done"] == state["total"], f"only {state['done']} of {state['total']} code cells ran"
    return t0


def open_in_voila(page, url: str, run: GalleryRun, mode: Mode) -> int:
    """Open the gallery's classroom page (Voilà sends the page, then runs the cells and sends each one's outputs) and
    wait until every cell's outputs are in the page.

    Returns:
        The number of widget views the cells sent (:func:`~page_waits.wait_classroom_cells_ran`).
    """
    with run.step("open the classroom page (Voilà runs every cell)"):
        page.goto(url, wait_until="commit", timeout=run.ms(60 * mode.throttle))
        page.wait_for_load_state("load", timeout=run.ms(60 * mode.throttle))
        return wait_classroom_cells_ran(page, run)  # the kernel runs the long cell meanwhile


def voila_kernel_id(page) -> str:
    """The id of the classroom page's kernel (from Voilà's page configuration)."""
    return page.evaluate("() => JSON.parse(document.getElementById('jupyter-config-data').textContent).kernelId")


# --------------------------------------------------------------------------- checks every mode shares


def check_every_cell_ran(page, run: GalleryRun, mode: Mode, error_texts: tuple[str, ...] = ()) -> None:
    """Step: no output shows an error or a traceback, no ``error_texts`` in the page, and the last cell's line is
    shown (so every cell before it ran)."""
    with run.step("every cell ran, no error or traceback shown"):
        errs = output_errors(page, mode.scope)
        assert not errs, format_output_errors(errs)
        text = page.evaluate("(sel) => document.querySelector(sel).innerText", mode.scope)
        found = [t for t in error_texts if t in text]
        assert not found, f"{found} shown: …{text[max(0, text.find(found[0]) - 300):][:1800]}"
        assert DONE_MARK in text, f"the last cell's line {DONE_MARK!r} is not shown"


def check_every_figure_drawn(page, metrics: PageMetrics, connection_file, t0_ms: float, run: GalleryRun,
                             console: ConsoleLog) -> FigureLoad:
    """Step: every figure the gallery's kernel made is drawn with data, and plotly's widget code was fetched once."""
    with run.step("every figure the kernel made is drawn, with plotly's code fetched once"):
        expected = kernel_figure_count(connection_file)
        assert expected >= MIN_FIGURES, f"the gallery's kernel shows {expected} figures, fewer than {MIN_FIGURES}"
        load = wait_every_figure_drawn(page, metrics, expected, t0_ms, run)
        run.detail = load.summary()
        assert load.drawn == load.expected, f"figures drawn ≠ figures shown: {load.summary()}; console errors: " \
                                            f"{console.errors[-8:] or 'none'}"
        assert load.bundle_requests == 1, f"plotly's widget code should load once per page: {load.summary()}"
        return load


#: TeX of the gallery's Markdown: ``$$…$$`` and ``$…$`` (as browser_setup.notebook_has_math finds it).
_TEX = re.compile(r"\$\$[^$]+\$\$|\$[^$\n]+\$")

#: ``[typeset formulas, raw TeX snippets]`` in the rendered Markdown inside ``sel``. (The probe's ``rawMath()`` skips
#: ``.jp-InputArea``, which in JupyterLab, and in Voilà's lab template, holds the rendered Markdown too.)
_MARKDOWN_MATH_JS = script("markdown_math")


def gallery_formulas() -> int:
    """How many formulas the gallery's Markdown cells hold."""
    nb = json.loads(GALLERY.read_text(encoding="utf-8"))
    return sum(len(_TEX.findall("".join(c["source"]))) for c in nb["cells"] if c["cell_type"] == "markdown")


def check_math_typeset(page, run: GalleryRun, mode: Mode) -> None:
    """Step: every formula of the gallery's Markdown is typeset by MathJax, and no raw ``$…$`` is left in the
    rendered Markdown or elsewhere in the page (outside code)."""
    with run.step("formulas typeset (no raw $…$ left)"):
        n = gallery_formulas()
        try:
            page.wait_for_function(f"(sel) => ({_MARKDOWN_MATH_JS})(sel)[0] >= {n}", arg=mode.scope,
                                   timeout=run.ms(30 * mode.throttle), polling=250)
        finally:
            typeset, raw = page.evaluate(_MARKDOWN_MATH_JS, mode.scope)
            run.detail = f"{typeset} of {n} formulas typeset; raw TeX in the Markdown: {raw[:10]}"
        raw += page.evaluate("() => window.__symsgd.rawMath()")
        assert not raw, f"raw TeX still visible: {raw[:10]}"


_FINE_PRINT_JS = script("fine_print")


def gallery_fine_print() -> int:
    """How many blocks of fine print (``<details class="symsgd-fine-print">``) the gallery's Markdown holds."""
    nb = json.loads(GALLERY.read_text(encoding="utf-8"))
    return sum(len(re.findall(r'^<details class="symsgd-fine-print">', "".join(c["source"]), re.MULTILINE))
               for c in nb["cells"] if c["cell_type"] == "markdown")


def check_fine_print(page, run: GalleryRun, mode: Mode) -> None:
    """Step: every block of the gallery's fine print is in the page (the sanitizer kept its class), closed, its
    content hidden, its summary tagged "fine print" (fine_print.css) and focusable; Enter on the summary opens it
    (its content and typeset formulas show), Enter again closes it."""
    with run.step("the fine print: closed, tagged, opened and closed again from the keyboard"):
        n = gallery_fine_print()
        assert n > 0, "the gallery holds no fine print: nothing to check"
        # its look comes with the accessibility helper's stylesheet (a11y.py), there once a figure is drawn
        blocks = _fine_print_when(page, run, mode, lambda bs: sum("fine print" in (b["tag"] or "") for b in bs) >= n)
        run.detail = f"{len(blocks)} blocks: {blocks}"
        assert len(blocks) == n, f"{n} blocks of fine print in the notebook, {len(blocks)} in the page"
        for b in blocks:
            assert b["summary"] and not b["open"] and not b["shown"], f"not closed with a summary: {b}"
            assert b["focusable"], f"its summary takes no keyboard focus: {b}"
            assert "fine print" in (b["tag"] or ""), f"its summary carries no 'fine print' tag (fine_print.css): {b}"
        summary = page.locator(f"{mode.scope} details.symsgd-fine-print > summary").first
        summary.focus()
        page.keyboard.press("Enter")
        opened = _fine_print_when(page, run, mode, lambda bs: bs[0]["shown"])[0]
        assert opened["open"] and opened["formulas"] >= 2, f"opened, its formulas not typeset: {opened}"
        page.keyboard.press("Enter")
        closed = _fine_print_when(page, run, mode, lambda bs: not bs[0]["shown"])[0]
        assert not closed["open"] and not closed["shown"], f"Enter did not close it again: {closed}"
        run.detail = f"{len(blocks)} blocks, closed; opened from the keyboard: {opened}"


def _fine_print_when(page, run: GalleryRun, mode: Mode, done, cap_s: float = 30.0) -> list[dict]:
    """The page's fine print (``js/fine_print.js``) once ``done(blocks)`` holds, or as it is after ``cap_s`` seconds
    (scaled by the CPU slowdown)."""
    deadline = time.monotonic() + cap_s * mode.throttle
    while True:
        blocks = page.evaluate(_FINE_PRINT_JS, mode.scope)
        if (blocks and done(blocks)) or time.monotonic() > deadline:
            return blocks
        run.ms()  # raises once the notebook's budget is used up
        time.sleep(0.2)  # polling interval while the page renders, not a synchronisation


def check_no_off_machine_controls(page, run: GalleryRun) -> None:
    """Step: no figure offers a control that reaches the internet (a share/cloud button, a logo link)."""
    with run.step("no figure offers a control that reaches the internet"):
        offers = page.evaluate(OFF_MACHINE_CONTROLS_JS)
        n_bars = page.evaluate("() => document.querySelectorAll('.modebar').length")
        run.detail = f"{n_bars} mode bars; off-machine controls: {offers[:5]}"
        assert n_bars > 0, "no plotly mode bar in the page: nothing was checked"
        assert not offers, f"controls that would reach the internet: {offers[:10]}"


def check_console(console: ConsoleLog, run: GalleryRun, noise: tuple[str, ...], since: int = 0,
                  when: str = "so far") -> None:
    """Step: no console error from the page's widgets since error number ``since`` (minus ``noise`` and the
    documented :data:`~notebook_run.RECOVERED_START_MISSES`)."""
    with run.step(f"no console errors from the page's widgets {when}", fatal=False):
        errors = ConsoleLog(console.errors[since:]).widget_errors((*noise, *RECOVERED_START_MISSES))
        assert not errors, "console errors:\n" + explain(errors)


def move_sliders_and_run(page, run: GalleryRun, kernel_idle, throttle: float) -> list[ControllerLatency]:
    """Move a slider with the keyboard on the first analytic controller (shown before the long cell) and on the
    last one (after it), on the first controller that re-simulates when a slider is released (the kernel's
    debounced Run after a move from the page) and on the first controller with a Run button, which must show its
    busy indicator (:func:`~slider_moves.exercise_controller`: every wait is on the kernel's
    ``symsgd-handled-<n>`` count and the figure's data). One non-fatal step each.

    Returns:
        The latency rows (for the record).
    """
    ctrls = describe_controllers(page)
    analytic = [c["index"] for c in ctrls if not c["run_button"] and not c["auto_run"] and c["sliders"]]
    auto_run = [c["index"] for c in ctrls if c["auto_run"] and c["sliders"]]
    with_run = [c["index"] for c in ctrls if c["run_button"] and c["sliders"]]
    rows: list[ControllerLatency] = []
    with run.step("the gallery has analytic controllers, one that re-simulates on a release and one with a Run button"):
        assert analytic and auto_run and with_run, f"controllers: {ctrls}"
    chosen = [("analytic, before the long cell", analytic[0]),
              ("re-simulating when a slider is released", auto_run[0]), ("with a Run button", with_run[0]),
              ("analytic, after the long cell", analytic[-1])]
    for what, ci in chosen:
        with run.step(f"keyboard: a slider of controller #{ci} ({what}) changes its figure", fatal=False):
            got = exercise_controller(page, ci, run, kernel_idle=kernel_idle, moves=MOVES, throttle=throttle)
            rows += got
            if "Run" in what:
                assert any(r.kind == "re-simulating" and r.busy_indicator for r in got), \
                    f"Run did not re-simulate with the busy indicator shown: {got}"
                # the gallery's Run asks for more work than the lesson's default: a first look, then the full Run
                # from the kernel's worker thread (symsgd_jupyter/background.py)
                seen = [t for r in got for t in r.statuses]
                assert any("First look" in t for t in seen), f"a long Run drew no first look; statuses seen: {seen}"
    return rows


def check_after_interaction(page, run: GalleryRun, mode: Mode, console: ConsoleLog, seen_errors: int,
                            noise: tuple[str, ...], error_texts: tuple[str, ...] = ()) -> None:
    """Steps: after the slider moves, Run and the answers, no error is shown, no new console error, and every figure
    still holds data."""
    with run.step("after the reader's inputs: no errors, figures still drawn", fatal=False):
        errs = output_errors(page, mode.scope)
        assert not errs, "after the inputs: " + format_output_errors(errs)
        text = page.evaluate("() => document.body.innerText")
        found = [t for t in error_texts if t in text]
        assert not found, f"error shown after the inputs: {found}"
        check_figures(page)
    check_console(console, run, noise, since=seen_errors, when="after the reader's inputs")
