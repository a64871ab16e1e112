"""Classroom mode: every notebook as a Voilà dashboard (``tools/classroom.py``), offline, in Chromium.

The Voilà server is started exactly as ``make classroom`` starts it (same command line,
same ``symsgd`` template), on a temporary copy of notebooks/. Every request the page makes
to a host other than 127.0.0.1/localhost is recorded and aborted (as in a classroom
without network), and the test fails if there is any. For each notebook: the dashboard
renders without code, without errors, with formulas typeset (no raw $…$ left), with every
widget and figure drawn; icons come from local fonts; a screenshot goes to
test-artifacts/browser/voila-<notebook>.png; then a slider of every controller is moved (latency in
the report). These per-notebook runs are benchmarks (marked ``bench``, ``make bench-browser``),
with the notebooks with the most figures repeated on a 6x slowed CPU, opened at localhost. In
``make test`` this module checks the classroom index page, the worked solutions and the instructor
variant, a figure whose code cannot load, and a figure that missed anywidget's start; classroom
mode itself is checked on the gallery notebook (test_gallery.py).
"""

from __future__ import annotations

import time

import pytest
from browser_report import write_record
from browser_setup import NOTEBOOK_TIMEOUT_S, VIEWPORT, discover_notebooks, notebook_has_math, notebook_params
from figure_inspection import PROBE_JS, format_output_errors, output_errors
from js_files import script
from notebook_run import ConsoleLog, NotebookRun, RequestLog, full_screenshot
from page_load import (
    SLOW_CPU_RATE,
    PageMetrics,
    kernel_connection_file,
    kernel_figure_count,
    slow_notebooks,
    wait_every_figure_drawn,
)
from page_waits import check_widgets_rendered, wait_classroom_cells_ran
from reader_checks import check_claim_cells, check_printed_text_is_compact, interact_and_recheck
from servers import Server, start_voila

from symsgd_jupyter import PLOTLY_BUNDLE_ENV

pytestmark = pytest.mark.browser

NOTEBOOKS = discover_notebooks()

#: Voilà shows one of these when a cell fails (with / without show_tracebacks).
VOILA_ERROR_TEXTS = ("Traceback (most recent call last)", "There was an error when executing cell")

#: Icons (Font Awesome, used by ipywidgets buttons) must be drawn with their icon font, loaded
#: from this machine: load the exact face each icon needs, then check it is available.
_ICONS_JS = script("icons")


@pytest.fixture(scope="module")
def voila_context(browser, latency_records):
    ctx = browser.new_context(viewport=VIEWPORT)
    ctx.add_init_script(PROBE_JS)
    yield ctx
    ctx.close()


def test_classroom_index_page_is_offline(voila_server, voila_context):
    """The page a teacher opens first (`make classroom` → http://127.0.0.1:8866/) lists the notebooks, offline."""
    page = voila_context.new_page()
    requests = RequestLog().attach(page)
    run = NotebookRun("voila", "index", page)
    try:
        with run.step("open the notebook list"):
            page.goto(voila_server.url("/"), timeout=run.ms(60))
            # the page's script draws the list after it fetched the folder; at the suite's busy start (four workers
            # starting servers and browsers on two cores) the first name once took over 30 s: 90 s, as for a page open
            for i, nb in enumerate(NOTEBOOKS):
                page.get_by_text(nb.name).first.wait_for(timeout=run.ms(90 if i == 0 else 30))
            page.wait_for_load_state("networkidle", timeout=run.ms(30))
        with run.step("no request left 127.0.0.1", fatal=False):
            assert not requests.external, f"requests leaving 127.0.0.1: {sorted(set(requests.external))}"
        with run.step("screenshot"):
            page.screenshot(path=str(run.screenshot_path()), full_page=True, timeout=run.ms(30))
    finally:
        page.close()


# Benchmarks (``make bench-browser``): every notebook's classroom page with every controller's slider moved
# (latencies to the report), and on a 6x slowed CPU. In ``make test`` classroom mode is checked on the gallery
# notebook (test_gallery.py: at 127.0.0.1, at localhost on a 6x slowed CPU), each notebook's content in JupyterLab
# (test_jupyterlab.py) and in the static edition (tests/static_site), so no notebook runs more than four times.
@pytest.mark.bench
@pytest.mark.parametrize("notebook", notebook_params(NOTEBOOKS))
def test_notebook_in_voila(notebook, voila_server, voila_context, classroom):
    run_notebook_in_voila(notebook, voila_server, voila_context, classroom, mode="voila")


@pytest.mark.bench
@pytest.mark.parametrize("notebook", notebook_params(slow_notebooks(NOTEBOOKS)))
def test_notebook_in_voila_on_a_slow_laptop(notebook, voila_server_via_localhost, voila_context, classroom):
    """6× slower CPU, and the page opened at localhost (not the 127.0.0.1 that `make classroom` prints)."""
    run_notebook_in_voila(notebook, voila_server_via_localhost, voila_context, classroom, mode="voila-slow",
                          throttle=SLOW_CPU_RATE, moves=1, exercises=False)


def run_notebook_in_voila(notebook, server, context, classroom, *, mode: str, throttle: float = 1.0,
                          moves: int | None = None, exercises: bool = True) -> None:
    """Open ``notebook``'s dashboard on ``server``, check what the class sees, move every controller's slider
    (``moves`` times; ``throttle``: Chromium's CPU slowdown), record everything under ``mode``."""
    name = notebook.name
    page = context.new_page()
    metrics = PageMetrics(page, throttle)
    run = NotebookRun(mode, name, page, timeout_s=NOTEBOOK_TIMEOUT_S * max(1.0, throttle / 2), server=server)
    console = ConsoleLog().attach(page)
    requests = RequestLog().attach(page)
    latencies, answered, load = [], [], None
    try:
        with run.step("open the dashboard (Voilà runs every cell)"):
            page.goto(server.url(classroom.page_path(server.cwd, name)), wait_until="commit",
                      timeout=run.ms(60 * throttle))
            page.wait_for_load_state("load", timeout=run.ms(60 * throttle))
            # the page comes first, each cell's outputs when the cell has run
            expected_views = wait_classroom_cells_ran(page, run)

        with run.step("no cell shows an error or traceback"):
            errs = output_errors(page)
            assert not errs, format_output_errors(errs)
            text = page.evaluate("() => document.body.innerText")
            found = [t for t in VOILA_ERROR_TEXTS if t in text]
            if found:
                at = text.find(found[0])
                raise AssertionError(f"{found}: …{text[max(0, at - 300):at + 1500]}")

        check_no_code_shown(page, run)

        with run.step("every figure the kernel made is drawn, with plotly's code fetched once"):
            kernel_id = page.evaluate("() => JSON.parse(document.getElementById('jupyter-config-data')"
                                      ".textContent).kernelId")
            expected = kernel_figure_count(kernel_connection_file(server, kernel_id))
            load = wait_every_figure_drawn(page, metrics, expected, 0.0, run)  # page time 0 = the page opened
            run.detail = load.summary()
            assert load.drawn == load.expected, (f"figures drawn ≠ figures shown: {load.summary()}; console errors: "
                                                 f"{console.errors[-8:] or 'none'}")
            assert load.bundle_requests == 1, f"plotly's widget code should load once per page: {load.summary()}"

        check_widgets_rendered(page, run, console, expected_views)

        with run.step("formulas typeset (no raw $…$ left)"):
            if notebook_has_math(notebook):
                page.wait_for_function("() => window.__symsgd.mathCount() > 0", timeout=run.ms(30 * throttle),
                                       polling=250)
            raw = page.evaluate("() => window.__symsgd.rawMath()")
            assert not raw, f"raw TeX still visible: {raw[:10]}"

        with run.step("icons drawn with a local font"):
            bad = page.evaluate(_ICONS_JS)
            assert not bad, f"icons without their font: {bad[:10]}"

        check_claim_cells(page, run, notebook, classroom=True)
        check_printed_text_is_compact(page, run, notebook)

        latencies, answered = interact_and_recheck(page, run, notebook, console,
                                                   kernel_idle=lambda: _wait_kernel_idle(page, run),
                                                   error_texts=VOILA_ERROR_TEXTS, moves=moves, throttle=throttle,
                                                   exercises=exercises)

        with run.step("screenshot"):
            metrics.unthrottle()
            full_screenshot(page, run.screenshot_path(), "#rendered_cells", run)

        with run.step("no request left 127.0.0.1", fatal=False):
            assert not requests.external, ("requests leaving 127.0.0.1 (they fail in a classroom without "
                                           f"network): {sorted(set(requests.external))}")
    finally:
        write_record(mode, name, {"mode": mode, "notebook": name, "address": server.base_url,
                                  "load": None if load is None else vars(load),
                                  "controllers": latencies, "exercises": answered,
                                  "accessibility": run.accessibility,
                                  "external_requests": sorted(set(requests.external)),
                                  "local_failures": sorted(set(requests.local_failures)),
                                  "failures": run.failures, "steps": run.step_seconds,
                                  "seconds": round(run.timeout_s - run.remaining_s(), 1)})
        _shutdown_page_kernel(page)
        page.close()
    run.finish()


def check_no_code_shown(page, run: NotebookRun) -> None:
    """Step: the classroom page shows no code input (the ``symsgd`` template hides every code cell's input)."""
    with run.step("no code shown"):
        code = page.evaluate("() => document.querySelectorAll('.jp-CodeCell:not(.jp-mod-noInput) .jp-InputArea,"
                             " .jp-CodeCell .jp-InputArea-editor').length")
        assert code == 0, f"{code} code inputs visible in the dashboard"


#: What Voilà's page does on `beforeunload` (a beacon to /voila/api/shutdown/<kernel>), done
#: explicitly so the kernel stops before the next notebook starts.
_SHUTDOWN_JS = script("shutdown_kernel")


#: The page's kernel state as the server sees it (GET /api/kernels/<id>, as Voilà's page does).
_KERNEL_STATE_JS = script("kernel_state")


def _wait_kernel_idle(page, run: NotebookRun, cap_s: float = 60) -> None:
    """Poll the kernel's execution state until it is idle (Voilà shows no kernel indicator)."""
    deadline = time.monotonic() + min(cap_s, run.remaining_s())
    state = None
    while time.monotonic() < deadline:
        state = page.evaluate(_KERNEL_STATE_JS)
        if state == "idle":
            return
        page.wait_for_timeout(100)  # polling interval of a state wait
    raise AssertionError(f"kernel not idle after {cap_s:.0f} s (state: {state})")


def _shutdown_page_kernel(page) -> None:
    try:
        page.evaluate(_SHUTDOWN_JS)
    except Exception:  # noqa: BLE001 - the server's process group is stopped at the end anyway
        pass


def _one_notebook_server(classroom, tmp_path_factory, name: str, source: str, **env) -> Server:
    """Voilà (as `make classroom` starts it, :func:`start_voila`) serving one notebook with one code cell,
    ``source``; ``env`` is added to the server's environment."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path_factory.mktemp(f"{name}-source") / f"{name}.ipynb"
    nbformat.write(nb, path)
    return start_voila(classroom, tmp_path_factory, "127.0.0.1", source=path, name=name, env=env)


def test_a_figure_whose_code_cannot_load_says_so_in_its_place(browser, classroom, tmp_path_factory):
    """If plotly's widget code cannot be fetched, the figure's place says what happened and what to do."""
    server = _one_notebook_server(
        classroom, tmp_path_factory, "one_figure",
        "from symsgd_core.ui import install\n"
        "install()  # gives FigureWidgets the loader (nothing is installed at import)\n"
        "import plotly.graph_objects as go\n"
        "go.FigureWidget(data=[go.Scatter(y=[1, 3, 2])])",
        **{PLOTLY_BUNDLE_ENV: "voila/static/plotly-widget-missing.js"})  # a file the server does not have
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(server.url(classroom.page_path(server.cwd, "one_figure.ipynb")), timeout=60_000)
        slot = page.locator(".symsgd-figure-slot[data-symsgd-figure=failed]")
        slot.wait_for(state="visible", timeout=60_000)
        text = slot.inner_text()
        assert "This figure could not be drawn" in text and "plotly-widget-missing.js" in text, text
        assert "make classroom" in text and "reload" in text, text  # and what to do
        assert slot.locator("[role=alert]").count() == 1
    finally:
        context.close()
        server.stop()


#: Blocks the page for 2.5 s while anywidget starts the first figure (it builds the figure's module from a Blob):
#: that figure misses anywidget's 2 s start, as a figure can on a busy laptop while plotly's code compiles.
_MISS_THE_START_JS = script("miss_the_start")


def test_a_figure_that_missed_anywidgets_start_still_draws_and_updates(browser, classroom, tmp_path_factory):
    """anywidget drops every message to a model that took over 2 s to start; the loader routes them to ipywidgets
    and asks the kernel for the figure's state again, so the figure draws its data and follows its slider."""
    server = _one_notebook_server(classroom, tmp_path_factory, "late_figure", _LIVE_CONTROLLER_CELL)
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(_MISS_THE_START_JS)
    context.add_init_script(PROBE_JS)
    try:
        page = context.new_page()
        page.goto(server.url(classroom.page_path(server.cwd, "late_figure.ipynb")), timeout=60_000)
        page.wait_for_function("() => window.__symsgd.drawnCount() === 1", timeout=60_000, polling=200)
        before = page.evaluate("() => window.__symsgd.dataJsonOf(0)")
        assert '"y":[0,1,4]' in before[0].replace(".0", ""), before  # the state the kernel sent after the start
        page.locator(".symsgd-controller .noUi-handle").first.press("ArrowRight")  # a = 1 → 2
        page.wait_for_function("(b) => window.__symsgd.dataJsonOf(0)[0] !== b", arg=before[0], timeout=30_000)
        after = page.evaluate("() => window.__symsgd.dataJsonOf(0)")
        assert '"y":[0,2,8]' in after[0].replace(".0", ""), after  # and every update after it
    finally:
        context.close()
        server.stop()


#: A controller with one slider a and the figure y = a·x² at x = 0, 1, 2, its traces added after the figure widget
#: exists (so the state the page gets at the widget's start is empty, as for most figures of the notebooks).
_LIVE_CONTROLLER_CELL = """
import ipywidgets as widgets
import plotly.graph_objects as go
from symsgd_core.ui.base import Controller

class Parabola(Controller):
    def __init__(self):
        super().__init__()
        self.controls = {"a": widgets.FloatSlider(value=1.0, min=0.0, max=4.0, step=1.0, description="a")}
        self.figures = [go.FigureWidget(layout=dict(height=250))]
        self.figure.add_scatter(x=[0, 1, 2], y=[0, 0, 0])
        self._wire()
        self.update()

    def _update(self, a):
        self.figure.data[0].y = [a * x * x for x in (0, 1, 2)]

Parabola()
"""


#: The controller of _LIVE_CONTROLLER_CELL and a button that moves its figure into a box of its own, as a page does
#: when a figure's box changes after it was drawn: the page removes the figure's view and draws a new one.
_MOVED_FIGURE_CELL = _LIVE_CONTROLLER_CELL.replace("\nParabola()\n", "") + """
parabola = Parabola()
root = parabola.view()
move = widgets.Button(description="move the figure")

def _move(_button):
    box = widgets.VBox([parabola.figure])
    box.add_class("symsgd-test-moved")
    root.children = [c for c in root.children if c is not parabola.figure] + [box]

move.on_click(_move)
display(root, move)
"""


def test_a_figure_whose_view_was_replaced_follows_its_slider(browser, classroom, tmp_path_factory):
    """A figure drawn anew after its first view left the page (notebook 04's covered figures in classroom mode) still
    follows its slider, and no update fails in the page: a view that has gone hears no more updates (plotly's own
    view keeps listening to the model after it has gone, and its error stopped the update before the live view)."""
    server = _one_notebook_server(classroom, tmp_path_factory, "moved_figure", _MOVED_FIGURE_CELL)
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(PROBE_JS)
    try:
        page = context.new_page()
        console = ConsoleLog().attach(page)
        page.goto(server.url(classroom.page_path(server.cwd, "moved_figure.ipynb")), timeout=60_000)
        page.wait_for_function("() => window.__symsgd.drawnCount() === 1", timeout=60_000, polling=200)
        page.get_by_role("button", name="move the figure").click()
        page.wait_for_function("() => { const d = document.querySelector('.symsgd-test-moved .js-plotly-plot');"
                               " return !!d && window.__symsgd.hasData(d); }", timeout=30_000, polling=200)
        before = page.evaluate("() => window.__symsgd.dataJsonOf(0)")
        assert len(before) == 1 and '"y":[0,1,4]' in before[0].replace(".0", ""), before  # one figure, a = 1
        page.locator(".symsgd-controller .noUi-handle").first.press("ArrowRight")  # a = 1 → 2
        page.wait_for_function("(b) => window.__symsgd.dataJsonOf(0)[0] !== b", arg=before[0], timeout=30_000)
        after = page.evaluate("() => window.__symsgd.dataJsonOf(0)")
        assert '"y":[0,2,8]' in after[0].replace(".0", ""), after
        failed = [e for e in console.errors if "Error setting state" in e]
        assert not failed, "updates that failed in the page:\n" + "\n".join(failed)
    finally:
        context.close()
        server.stop()


_PANEL_SOURCE = '''
from symsgd_core.core.exercises import Exercise, number_exercise
from symsgd_core.lesson.exercise_panel import ExercisePanel
from symsgd_core import balance

square = number_exercise("square", "What is 3 squared?", 9.0, "3 · 3 = 9.", "multiply.", solution=9.0)
square = Exercise(**{**square.__dict__, "worked": "By definition $x^2 = x \\\\cdot x$, so $3^2 = 9$.",
                     "hint": "square means times itself."})
closed = ExercisePanel([square], solutions=False)  # the reader opens it
opened = ExercisePanel([balance.EXERCISES["conserved_quantity"]])  # opened by the instructor variant
display(closed, opened)
'''


def test_worked_solutions_typeset_and_the_instructor_variant_in_classroom_mode(browser, classroom, tmp_path_factory):
    """A worked solution revealed by the reader is typeset by MathJax; with `make instructor`'s environment every
    worked solution is open from the start; a function exercise takes a formula in the page."""
    server = _one_notebook_server(classroom, tmp_path_factory, "panel", _PANEL_SOURCE,
                                  **{classroom.SOLUTIONS_ENV: classroom.SOLUTIONS_OPEN})
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(server.url(classroom.page_path(server.cwd, "panel.ipynb")), timeout=90_000)
        boxes = page.locator(".symsgd-exercise")
        boxes.nth(1).wait_for(state="visible", timeout=90_000)
        closed, opened = boxes.nth(0), boxes.nth(1)
        assert not closed.locator(".symsgd-worked").is_visible()
        opened.locator(".symsgd-worked").wait_for(state="visible", timeout=30_000)  # the instructor variant
        assert opened.get_by_role("button", name="Hide worked solution").is_visible()
        closed.get_by_role("button", name="Show worked solution").click()
        closed.locator(".symsgd-worked mjx-container").first.wait_for(state="attached", timeout=30_000)
        assert "$" not in closed.locator(".symsgd-worked").inner_text()  # typeset, no raw TeX
        field = opened.locator("input[type=text]")
        field.fill("u**2 - w**2")
        field.press("Enter")
        opened.locator(".symsgd-feedback-right").wait_for(state="visible", timeout=30_000)
        field.fill("__import__('os').getcwd()")
        field.press("Enter")
        opened.locator(".symsgd-feedback-wrong").filter(has_text="cannot be used").wait_for(state="visible",
                                                                                             timeout=30_000)
    finally:
        context.close()
        server.stop()
