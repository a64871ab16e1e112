"""A classroom page shows its prose at once and each output as its cell finishes.

Voilà used to run every cell before it showed anything: the class looked at a spinner for 16–43 s (74 s on a first
run). ``tools/classroom.py`` now starts Voilà with progressive rendering: the page (text, formulas, a place per code
cell) comes first, then each cell's outputs as the cell finishes. Checked on a tiny notebook served as
``make classroom`` serves it (:func:`servers.start_voila`): prose, a cell that takes
:data:`SLOW_CELL_S` seconds, then a cell that shows two controllers (a figure each).

* While the slow cell runs, the prose is on screen and nothing covers it; the two figures draw once it has run.
* The same when the page learns of the figures' widgets only after their cell's outputs arrived (a busy laptop; here
  the page's kernel messages are held back): Voilà's page would keep the first figure for later and drop the second
  (``tools/voila/templates/symsgd/static/progressive.js`` hands it one output at a time).

The slow cell writes ``<kernel id>.started`` in the notebook's folder when it starts and ``<kernel id>.finished``
when it ends, so the test knows, from outside, whether the cell is running.
"""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import pytest
from browser_setup import VIEWPORT
from figure_inspection import PROBE_JS
from js_files import script
from servers import start_voila

pytestmark = pytest.mark.browser

#: Seconds the slow cell takes (a sleep: the test checks the page while the kernel is busy, not the CPU).
SLOW_CELL_S = 8
NOTEBOOK = "progressive.ipynb"
HEADING = "Prose while the notebook runs"
PARAGRAPH = "This text is on the screen while the cells below still run."
#: Longest wait for the page's first state (the server starts a kernel for the page), and for the figures.
PAGE_S, FIGURES_S = 90.0, 120.0
#: Polling interval of the state waits below (a file appearing; not a synchronisation by sleeping).
POLL_MS = 100

_SLOW_CELL = f"""import os, pathlib, time
marker = pathlib.Path(os.environ["VOILA_KERNEL_ID"])
marker.with_suffix(".started").touch()
time.sleep({SLOW_CELL_S})
marker.with_suffix(".finished").touch()"""

#: Two controllers from one cell, as the notebooks show them (each controller's figure answers the page's request for
#: its full state, symsgd_jupyter/plotly_loading.py); a slider a and the figure y = a·x² at x = 0, 1, 2.
_FIGURES_CELL = """import ipywidgets as widgets
import plotly.graph_objects as go
from IPython.display import display
from symsgd_core.ui.base import Controller

class Parabola(Controller):
    def __init__(self, a):
        super().__init__()
        self.controls = {"a": widgets.FloatSlider(value=a, min=0.0, max=4.0, step=1.0, description="a")}
        self.figures = [go.FigureWidget(layout=dict(height=250))]
        self.figure.add_scatter(x=[0, 1, 2], y=[0, 0, 0])
        self._wire()
        self.update()

    def _update(self, a):
        self.figure.data[0].y = [a * x * x for x in (0, 1, 2)]

display(Parabola(1.0), Parabola(2.0))"""

#: Where the heading is, whether it is visible, and what is on top of its middle (the spinner would be).
_HEADING_JS = script("heading")

#: Holds back every message of the page's kernel connections for 2 s (in order): the page learns of a cell's widgets
#: after the cell's outputs arrived, as on a laptop busy compiling plotly's code.
_SLOW_KERNEL_MESSAGES_JS = script("slow_kernel_messages")


@pytest.fixture(scope="module")
def progressive_server(browser, classroom, tmp_path_factory):
    """Classroom mode serving the tiny notebook: prose, the slow cell, prose, two controllers' figures."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(f"# {HEADING}\n\n{PARAGRAPH}"),
        nbformat.v4.new_code_cell(_SLOW_CELL),
        nbformat.v4.new_markdown_cell("## Two controllers from one cell"),
        nbformat.v4.new_code_cell(_FIGURES_CELL),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path_factory.mktemp("progressive-source") / NOTEBOOK
    nbformat.write(nb, path)
    server = start_voila(classroom, tmp_path_factory, "127.0.0.1", source=path, name="progressive")
    yield server
    server.stop()


def _open(browser, server, classroom, *init_scripts: str):
    context = browser.new_context(viewport=VIEWPORT)
    for init in (PROBE_JS, *init_scripts):
        context.add_init_script(init)
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: page.console_errors.append(m.text[:300]) if m.type == "error" else None)
    page.goto(server.url(classroom.page_path(server.cwd, NOTEBOOK)), wait_until="commit", timeout=PAGE_S * 1000)
    return context, page


def _kernel_id(page) -> str:
    page.wait_for_selector("#jupyter-config-data", state="attached", timeout=PAGE_S * 1000)
    return page.evaluate("() => JSON.parse(document.getElementById('jupyter-config-data').textContent).kernelId")


def _wait_file(page, path: Path, what: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"waited {timeout_s:.0f} s for {what} ({path.name})"
        page.wait_for_timeout(POLL_MS)  # polling interval of a state wait


def _wait_figures_drawn(page, n: int, console: list | None = None) -> None:
    try:
        page.wait_for_function("(n) => window.__symsgd.drawnCount() >= n", arg=n, timeout=FIGURES_S * 1000,
                               polling=250)
    except Exception as exc:  # noqa: BLE001 - restated with what the page holds
        state = page.evaluate("() => ({drawn: window.__symsgd.drawnCount(), progress: window.__symsgdClassroom,"
                              " cells: document.body.dataset.symsgdCells, views: window.__symsgd.renderedViews(),"
                              " pending: window.__symsgd.pendingDetails(), slots: Array.from(document.querySelectorAll("
                              "'.symsgd-figure-slot')).map((e) => e.dataset.symsgdFigure),"
                              " outputs: document.querySelectorAll('.jp-OutputArea-output').length})")
        state["console"] = console[-8:] if console is not None else None
        raise AssertionError(f"{n} figures should be drawn once their cell has run; the page: {state}") from exc
    assert page.evaluate("() => window.__symsgd.drawnCount()") == n


def test_the_prose_is_on_screen_while_a_slow_cell_runs_and_the_figures_follow(browser, classroom,
                                                                              progressive_server):
    context, page = _open(browser, progressive_server, classroom)
    try:
        t0 = time.monotonic()
        page.get_by_role("heading", name=HEADING).wait_for(state="visible", timeout=PAGE_S * 1000)
        shown_after_s = time.monotonic() - t0
        marker = progressive_server.cwd / _kernel_id(page)
        started, finished = marker.with_suffix(".started"), marker.with_suffix(".finished")
        # the class reads the prose before the slow cell has run, not after every cell has
        assert not finished.exists(), (f"the prose appeared {shown_after_s:.1f} s after the page was opened, once "
                                       f"the {SLOW_CELL_S} s cell had run: the page waited for every cell")
        _wait_file(page, started, "the slow cell to start", PAGE_S)
        heading = page.evaluate(_HEADING_JS, HEADING)
        assert not finished.exists(), "the slow cell finished before the page could be looked at: make it slower"
        assert heading["shown"], f"while the slow cell runs the heading is not on screen: {heading['why']}"
        assert not heading["spinner"], "while the slow cell runs the spinner is still shown"
        assert page.get_by_text(PARAGRAPH).is_visible()
        assert page.evaluate("() => window.__symsgd.drawnCount()") == 0  # the figures' cell has not run yet
        _wait_figures_drawn(page, 2, page.console_errors)
        assert finished.exists()
        page.wait_for_function("() => document.body.dataset.symsgdCells === 'done'", timeout=30_000)
    finally:
        context.close()


def test_every_figure_of_a_cell_draws_when_the_page_learns_of_its_widgets_late(browser, classroom,
                                                                               progressive_server):
    context, page = _open(browser, progressive_server, classroom, _SLOW_KERNEL_MESSAGES_JS)
    try:
        page.get_by_role("heading", name=HEADING).wait_for(state="visible", timeout=PAGE_S * 1000)
        _wait_figures_drawn(page, 2, page.console_errors)
        progress = page.evaluate("() => window.__symsgdClassroom")
        assert progress["widgetViews"] == 2, progress
    finally:
        context.close()
