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
variant, a figure whose code cannot load, a figure that missed anywidget's start, and that figures are laid out
at their box's width and follow the window (a figure drawn hidden, and every figure of notebook 05's page); classroom
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
from page_waits import check_widgets_rendered, wait_classroom_cells_ran, wait_widgets_rendered
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
# (test_jupyterlab.py) and in the static edition (tests/static_site), so no notebook runs more than four times
# (notebook 05 five: its classroom page's figure widths, test_every_figure_of_a_lesson_fits_its_box_…, below).
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


# Figures fit their box. plotly's view lays out a figure without a width of its own at its box's width once, when it
# draws it; drawn while its box is not laid out (not yet in the page, hidden) it gets plotly's default 700 px, and
# no figure follows the window by itself (seen in notebook 05's classroom page: the stored-grid figure at 700 px in a
# 1250 px box, its panel titles overlapping). The loader (symsgd_jupyter/plotly_loading.js, followBoxWidth) fits each
# figure to its box whenever the box changes.

#: Every laid-out figure of the page: its drawn width, its box, its container, a width of its own.
_FIGURE_WIDTHS_JS = script("figure_widths")
#: Figures of the page's controllers without a text alternative (role, name, description).
_FIGURES_WITHOUT_ALT_JS = script("figures_without_alt")
#: How plotly drew a figure: its plot area, its legend's place, its x tick labels.
_FIGURE_DRAWING_JS = script("figure_drawing")
#: How far a drawn width may be from its box: plotly's autosize keeps a width within 1 px of the box's computed width
#: (its own tolerance, Plots.plotAutoSize), and clientWidth rounds the box to a whole pixel (< 1 px).
FIT_TOLERANCE_PX = 2
#: The narrower window of the resize step (VIEWPORT is 1400 px wide): every figure's box shrinks by ~400 px.
NARROW_VIEWPORT = {"width": 1000, "height": 900}
#: The longest wait for the figures to fit their boxes after a change: the loader waits 100 ms for a box to settle,
#: then plotly lays the figure out again (well under a second for the notebooks' largest figures on a busy machine).
FIT_WAIT_S = 15


def misfit_figures(widths: list[dict]) -> list[dict]:
    """The figures of ``widths`` (:data:`_FIGURE_WIDTHS_JS`) not at the width they should have: one of its own, or
    else their box's (within :data:`FIT_TOLERANCE_PX`, and never wider than their container)."""
    bad = []
    for f in widths:
        if f["drawn"] is None:
            bad.append(f)
        elif f["own"] is not None:
            if abs(f["drawn"] - f["own"]) > FIT_TOLERANCE_PX:
                bad.append(f)
        elif abs(f["drawn"] - f["box"]) > FIT_TOLERANCE_PX or f["drawn"] > f["container"] + FIT_TOLERANCE_PX:
            bad.append(f)
    return bad


def _format_widths(widths: list[dict]) -> str:
    return "\n  ".join(f"figure {f['index']} {f['title']!r}: drawn {f['drawn']} px, box {f['box']} px, container "
                       f"{f['container']} px" + (f", own width {f['own']} px" if f["own"] else "") for f in widths)


def wait_figures_fit(page, expected: int, what: str) -> list[dict]:
    """Wait (≤ :data:`FIT_WAIT_S`) until the page shows ``expected`` laid-out figures, each at the width it should
    have (:func:`misfit_figures`); return their widths. ``what``: the moment, for the failure's message."""
    deadline = time.monotonic() + FIT_WAIT_S
    while True:
        widths = page.evaluate(_FIGURE_WIDTHS_JS)
        if len(widths) == expected and not misfit_figures(widths):
            return widths
        if time.monotonic() > deadline:
            break
        page.wait_for_timeout(200)  # polling interval of a layout wait
    assert len(widths) == expected, f"{what}: {len(widths)} laid-out figures, expected {expected}"
    raise AssertionError(f"{what}: figures not at their box's width after {FIT_WAIT_S} s:\n  "
                         f"{_format_widths(misfit_figures(widths))}\nall figures:\n  {_format_widths(widths)}")


def check_figures_follow_the_window(page, before: list[dict]) -> list[dict]:
    """Narrow the window (:data:`NARROW_VIEWPORT`): every figure follows its box (a figure with a width of its own
    keeps it); return the widths after. ``before``: the widths at the wider window (each box must have shrunk, or the
    step shows nothing)."""
    page.set_viewport_size(NARROW_VIEWPORT)
    page.wait_for_function("(w) => window.innerWidth === w", arg=NARROW_VIEWPORT["width"], timeout=10_000,
                           polling=100)
    page.wait_for_function("(widths) => widths.every((f, i) => { const d = document.querySelectorAll("
                           "'.js-plotly-plot')[f.index]; return d && d.clientWidth < f.box; })", arg=before,
                           timeout=10_000, polling=100)  # the boxes have followed the window (the figures may not)
    after = wait_figures_fit(page, len(before), f"after the window was narrowed to {NARROW_VIEWPORT['width']} px")
    unchanged = [a for a, b in zip(after, before, strict=True) if a["box"] >= b["box"]]
    assert not unchanged, f"boxes that did not shrink with the window:\n  {_format_widths(unchanged)}"
    return after


_FIGURES_IN_BOXES_CELL = """
from symsgd_core.ui import install
install()  # gives FigureWidgets the loader
import ipywidgets as widgets
import plotly.graph_objects as go
from symsgd_jupyter.plotly_loading import answer_state_requests, sync_figure_state

def figure(**layout):  # a legend below the x axis's title, one row wide, in rows at 700 px (as notebook 05's)
    traces = [go.Scatter(y=[k, 3 - k, 2], name=f"runs an integrator's rule stopped, setting {k}") for k in range(4)]
    fig = go.FigureWidget(data=traces, layout=dict(height=300, margin=dict(b=50), legend=dict(orientation="h", y=-0.2),
                                                   xaxis_title="time", **layout))
    sync_figure_state(fig)  # as a controller's view does: the page gets the figure's full state
    answer_state_requests(fig)
    return fig

shown, hidden, fixed = figure(), figure(), figure(width=400)
box = widgets.VBox([hidden], layout=widgets.Layout(display="none"))  # drawn while its box has no width
show = widgets.Button(description="show the hidden figure")

def _show(_button):
    box.layout.display = None

show.on_click(_show)
display(shown, fixed, box, show)
"""


def test_a_figure_fits_its_box_when_shown_and_follows_the_window(browser, classroom, tmp_path_factory):
    """A figure drawn while its box had no width is laid out at its box's width once shown, every figure follows a
    narrower window, and a figure with a width of its own keeps it."""
    server = _one_notebook_server(classroom, tmp_path_factory, "figure_boxes", _FIGURES_IN_BOXES_CELL)
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(PROBE_JS)
    try:
        page = context.new_page()
        console = ConsoleLog().attach(page)
        page.goto(server.url(classroom.page_path(server.cwd, "figure_boxes.ipynb")), timeout=60_000)
        page.wait_for_function("() => window.__symsgd.drawnCount() === 3", timeout=60_000, polling=200)
        wait_figures_fit(page, 2, "the two figures shown")
        page.get_by_role("button", name="show the hidden figure").click()
        widths = wait_figures_fit(page, 3, "the hidden figure shown")
        assert [f["own"] for f in widths] == [None, 400, None], widths  # the page's order: shown, fixed, hidden
        # drawn as if it had had its width from the start (plotly's relayout from 700 px leaves the legend elsewhere)
        drawn_at_once, fitted = (page.evaluate(_FIGURE_DRAWING_JS, i) for i in (0, 2))
        assert fitted == drawn_at_once, f"fitted {fitted}, drawn at that width at once {drawn_at_once}"
        check_figures_follow_the_window(page, widths)
        assert not [e for e in console.errors if "symsgd" in e], console.summary()
    finally:
        context.close()
        server.stop()


#: The lesson whose classroom page showed figures at plotly's default width: its figures are drawn as its cells'
#: outputs arrive (one of them after a 10 s cell).
FIT_NOTEBOOK = "05_sgd_noise_sde.ipynb"


def test_every_figure_of_a_lesson_fits_its_box_and_follows_the_window(voila_server, browser, classroom):
    """Every figure of notebook 05's classroom page is laid out at its box's width once the page has settled, and
    follows a narrower window."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(PROBE_JS)
    page = context.new_page()
    run = NotebookRun("voila", f"fit-{FIT_NOTEBOOK}", page, timeout_s=NOTEBOOK_TIMEOUT_S, server=voila_server)
    try:
        with run.step("open the dashboard (Voilà runs every cell)"):
            page.goto(voila_server.url(classroom.page_path(voila_server.cwd, FIT_NOTEBOOK)), wait_until="commit",
                      timeout=run.ms(60))
            expected_views = wait_classroom_cells_ran(page, run)
            wait_widgets_rendered(page, run, expected_views)
            expected = page.evaluate("() => window.__symsgd.drawnCount()")
            assert expected >= 4, f"notebook 05 shows 4 figures, the page {expected}"
        with run.step("every figure at its box's width"):
            widths = wait_figures_fit(page, expected, "the page settled")
            print(f"{FIT_NOTEBOOK}, window {VIEWPORT['width']} px:\n  {_format_widths(widths)}")
        with run.step("every figure follows a narrower window"):
            after = check_figures_follow_the_window(page, widths)
            print(f"window {NARROW_VIEWPORT['width']} px:\n  {_format_widths(after)}")
        with run.step("every figure drawn again keeps its data and its text alternative"):
            assert page.evaluate("() => window.__symsgd.drawnCount()") == expected
            missing = page.evaluate(_FIGURES_WITHOUT_ALT_JS)
            assert not missing, f"figures without a text alternative: {missing[:5]}"
    finally:
        _shutdown_page_kernel(page)
        context.close()
    run.finish()
