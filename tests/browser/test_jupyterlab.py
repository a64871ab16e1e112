"""Every notebook, opened and run in JupyterLab in headless Chromium, as a reader does.

For each notebook of notebooks/ (discovered at collection time): open it in JupyterLab,
Run → Run All Cells from the menu, wait until every code cell has run and the kernel is
idle, then check what a reader sees: no error or traceback in any output, every figure the
kernel made drawn with data (how soon, and the page's JS heap, go to the report), plotly's
widget code fetched once for the page, no widget failure text, no console error from the
page's widgets, the accessibility audit, nothing fetched from outside 127.0.0.1. A screenshot of
the notebook after it ran is saved to test-artifacts/browser/lab-<notebook>.png. That is the one
live pass of each notebook in ``make test``.

Benchmarks (marked ``bench``, run by ``make bench-browser``, not by ``make test``): the same, then
a slider of every controller moved with the keyboard (pressing Run where the controller
re-simulates), its figure's data checked to change, the slider → figure latencies written to the
latency report (see conftest.py); and the slow-laptop run for the notebooks with the most figures
(all of them with ``SYMSGD_SLOW_NOTEBOOKS=all``), Chromium's CPU slowed 6× on a JupyterLab server
under a base URL (``/user/symsgd-test/``, as under JupyterHub or Binder).
"""

from __future__ import annotations

import re
import uuid

import lesson_kernels
import pytest
from browser_report import write_record
from browser_setup import NOTEBOOK_TIMEOUT_S, VIEWPORT, discover_notebooks, notebook_params
from figure_inspection import PROBE_JS, check_no_raw_markup, format_output_errors, output_errors
from js_files import script
from notebook_run import ConsoleLog, NotebookRun, RequestLog, full_screenshot
from page_load import (
    SLOW_CPU_RATE,
    PageMetrics,
    kernel_connection_file,
    kernel_figure_count,
    kernel_subshells,
    slow_notebooks,
    start_figure_clock,
    wait_every_figure_drawn,
)
from page_waits import check_widgets_rendered
from reader_checks import audit_step, check_claim_cells, interact_and_recheck

pytestmark = pytest.mark.browser

NOTEBOOKS = discover_notebooks()

#: Console errors of JupyterLab itself, not of the notebook's widgets (each with its reason).
LAB_CONSOLE_NOISE = (
    # a page torn down while a request is in flight (we close pages between notebooks)
    r"net::ERR_ABORTED",
)

_PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"

#: State of "Run All": code cells with source, how many have an execution count, how many run.
_RUN_STATE_JS = script("run_state")
#: The reader's path after Run All: screens to the first figure, screens of test output.
_READER_PATH_JS = script("reader_path")


#: The kernel is connected and idle: the toolbar indicator says idle AND the status bar names
#: the kernel as Idle (before the kernel connects, the indicator already says "idle").
_KERNEL_IDLE_JS = script("kernel_idle").replace("__PANEL__", _PANEL)


def _wait_kernel_idle(page, run: NotebookRun, cap_s: float = 60) -> None:
    page.wait_for_function(_KERNEL_IDLE_JS, timeout=run.ms(cap_s), polling=100)


def run_all_cells(page, run: NotebookRun, throttle: float = 1.0) -> tuple[float, dict]:
    """Run → Run All Cells from the menu, as a reader does, then wait until every code cell has run and the kernel
    is idle, or a cell shows an error (``throttle``: the page's CPU slowdown, which scales the menu waits).

    Returns:
        (the page time of the click, where the figures' clock starts; the run state of :data:`_RUN_STATE_JS`).
    """
    with run.step("Run → Run All Cells"):
        page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*Run\s*$")).click(
            timeout=run.ms(20 * throttle))
        label = page.locator(".lm-Menu-itemLabel").filter(has_text=re.compile(r"^\s*Run All Cells\s*$"))
        t0 = start_figure_clock(page)
        page.locator(".lm-Menu-item").filter(has=label).click(timeout=run.ms(20 * throttle))
    with run.step("wait until every cell has run and the kernel is idle"):
        try:
            page.wait_for_function(
                "(sel) => { const s = (" + _RUN_STATE_JS + ")(sel);"
                " if (!s || !(" + _KERNEL_IDLE_JS + ")() || s.running) return false;"
                " if (s.done === s.total) return true;"
                " return window.__symsgd.outputErrors(sel).length > 0; }",
                arg=_PANEL, timeout=run.ms(), polling=250)
        finally:
            state = page.evaluate(_RUN_STATE_JS, _PANEL)
            run.detail = f"code cells run: {state}"
    return t0, state


@pytest.fixture(scope="module")
def lab_context(browser, latency_records):
    ctx = browser.new_context(viewport=VIEWPORT)
    ctx.add_init_script(PROBE_JS)
    yield ctx
    ctx.close()


@pytest.mark.parametrize("notebook", notebook_params(NOTEBOOKS, marks=lambda nb: lesson_kernels.group(nb.stem)))
def test_notebook_in_jupyterlab(notebook, lab_server, lab_context, request):
    """The one live pass of each notebook in ``make test``: Run All, then what a reader sees (no slider is moved:
    tests/ui/test_ui_every_slider.py moves every slider of every controller in Python, and the gallery notebook,
    tests/browser/test_gallery.py, checks in every mode that a keyboard move reaches the kernel). When the session
    also runs the notebook's edition page test, a pass without failures leaves its kernel running for it
    (tests/browser/lesson_kernels.py)."""
    run_notebook_in_jupyterlab(notebook, lab_server, lab_context, mode="lab", moves=0, exercises=False,
                               keep_kernel=lesson_kernels.wanted(request.session, notebook.stem))


# Benchmarks, not tests of ``make test`` (``make bench-browser``): every slider of every controller moved four
# times per notebook, for the slider → figure latency table, and the same on a 6x slowed CPU under a base URL.
@pytest.mark.bench
@pytest.mark.parametrize("notebook", notebook_params(NOTEBOOKS))
def test_slider_latency_in_jupyterlab(notebook, lab_server, lab_context):
    run_notebook_in_jupyterlab(notebook, lab_server, lab_context, mode="lab-bench", dark_theme=True)


@pytest.mark.bench
@pytest.mark.parametrize("notebook", notebook_params(slow_notebooks(NOTEBOOKS)))
def test_notebook_in_jupyterlab_on_a_slow_laptop(notebook, lab_server_with_base_url, lab_context):
    run_notebook_in_jupyterlab(notebook, lab_server_with_base_url, lab_context, mode="lab-slow",
                               throttle=SLOW_CPU_RATE, moves=1, exercises=False)


def run_notebook_in_jupyterlab(notebook, server, context, *, mode: str, throttle: float = 1.0,
                               moves: int | None = None, exercises: bool = True, dark_theme: bool = False,
                               keep_kernel: bool = False) -> None:
    """Open ``notebook`` on ``server``, Run All, check what a reader sees, move every controller's slider
    (``moves`` times; ``throttle``: Chromium's CPU slowdown), record everything under ``mode``.

    ``dark_theme``: also switch to JupyterLab Dark and check the contrast (:func:`check_dark_theme`). ``make test``
    checks the dark theme once, on the gallery notebook (tests/browser/test_gallery.py): a notebook's text takes
    its colours from the theme and the package (tests/notebooks/test_notebook_hygiene.py checks that no notebook sets a
    colour of its own; tests/ui/test_ui_style.py that status lines keep the theme's text colour and figures their
    white paper), so the dark theme is a property of the platform, not of a notebook's content."""
    name = notebook.name
    page = context.new_page()
    metrics = PageMetrics(page, throttle)
    run = NotebookRun(mode, name, page, timeout_s=NOTEBOOK_TIMEOUT_S * max(1.0, throttle / 2), server=server)
    console = ConsoleLog().attach(page)
    requests = RequestLog().attach(page)  # offline: requests leaving 127.0.0.1 are aborted and recorded
    latencies, answered, load, reader_path = [], [], None, None
    try:
        with run.step("open the notebook in JupyterLab"):
            page.goto(server.url(f"/lab/workspaces/t{uuid.uuid4().hex[:8]}/tree/{name}?reset"),
                      timeout=run.ms(90 * throttle))
            page.wait_for_selector(f"{_PANEL} .jp-Notebook .jp-Cell", timeout=run.ms(90 * throttle))
            _wait_kernel_idle(page, run, 90 * throttle)

        t0, state = run_all_cells(page, run, throttle)

        with run.step("no cell shows an error or traceback"):
            errs = output_errors(page, _PANEL)
            if errs:
                raise AssertionError(format_output_errors(errs))
            assert state["done"] == state["total"], f"only {state['done']} of {state['total']} code cells ran"

        with run.step("every figure the kernel made is drawn, with plotly's code fetched once"):
            expected = kernel_figure_count(_kernel_connection(server, name))
            load = wait_every_figure_drawn(page, metrics, expected, t0, run)
            run.detail = load.summary()
            assert load.drawn == load.expected, (f"figures drawn ≠ figures shown: {load.summary()}; console errors: "
                                                 f"{console.errors[-8:] or 'none'}")
            assert load.bundle_requests == 1, f"plotly's widget code should load once per page: {load.summary()}"

        check_widgets_rendered(page, run, console)
        with run.step("the reader's path: screens to the first figure, test output scrolled past"):
            reader_path = page.evaluate(_READER_PATH_JS, _PANEL)
            assert reader_path and reader_path["screen_px"] > 0, f"nothing measured: {reader_path}"
            run.detail = str(reader_path)
        check_claim_cells(page, run, notebook, classroom=False, scope=_PANEL)
        check_no_raw_markup(page, run, _PANEL)
        if throttle == 1.0:
            check_no_news_popup(page, server, run)
            check_code_lines_wrap(page, run)
        latencies, answered = interact_and_recheck(page, run, notebook, console,
                                                   kernel_idle=lambda: _wait_kernel_idle(page, run, 60 * throttle),
                                                   scope=_PANEL, console_noise=LAB_CONSOLE_NOISE, moves=moves,
                                                   throttle=throttle, exercises=exercises)
        check_widgets_on_the_main_thread(server, name, run)
        if dark_theme:
            check_dark_theme(page, run)

        with run.step("screenshot"):
            metrics.unthrottle()
            _full_notebook_screenshot(page, run)
    finally:
        write_record(mode, name, {"mode": mode, "notebook": name, "address": server.base_url,
                                  "load": None if load is None else vars(load),
                                  "controllers": latencies, "exercises": answered,
                                  "reader_path": reader_path, "accessibility": run.accessibility,
                                  "external_requests": sorted(set(requests.external)),
                                  "local_failures": sorted(set(requests.local_failures)),
                                  "failures": run.failures, "steps": run.step_seconds,
                                  "seconds": round(run.timeout_s - run.remaining_s(), 1)})
        page.close()
        kept = _keep_kernel(server, notebook) if keep_kernel and not run.failures else None
        server.shutdown_kernels(keep=(kept.kernel_id,) if kept else ())
    run.finish()


def _keep_kernel(server, notebook) -> lesson_kernels.KeptKernel:
    """Leave the kernel that ran ``notebook`` on ``server`` running, for its edition page test."""
    kernel_id = next(s["kernel"]["id"] for s in server.api("GET", "/api/sessions") if s["path"].endswith(notebook.name))
    kept = lesson_kernels.KeptKernel(server, kernel_id, kernel_connection_file(server, kernel_id))
    lesson_kernels.keep(notebook.stem, kept)
    return kept


def _kernel_connection(server, name: str):
    """The connection file of the kernel running notebook ``name`` on ``server``."""
    kernel_id = next(s["kernel"]["id"] for s in server.api("GET", "/api/sessions") if s["path"].endswith(name))
    return kernel_connection_file(server, kernel_id)


def check_widgets_on_the_main_thread(server, name: str, run: NotebookRun) -> None:
    """Step: after Run All and every slider move, the kernel has no subshell: the environment's settings override
    (``commsOverSubshells`` "disabled", see ``symsgd_jupyter.LAB_OVERRIDES``) keeps widget messages on the kernel's
    main thread, so no controller callback runs beside a running cell."""
    with run.step("widget messages ran on the kernel's main thread (no subshell)", fatal=False):
        subshells = kernel_subshells(_kernel_connection(server, name))
        assert subshells is not None, "this kernel has no subshells at all: the check measured nothing"
        assert subshells == [], f"the page started kernel subshells {subshells}: commsOverSubshells is not disabled"


#: JupyterLab's news/update question (a toast) and the setting that decides whether it is asked.
_NEWS_TOAST = "official Jupyter news"
_NOTIFICATION_SETTINGS = "/lab/api/settings/@jupyterlab/apputils-extension:notification"


def check_no_news_popup(page, server, run: NotebookRun) -> None:
    """Step: nothing covers the notebook on a projector — the environment's settings override (written by
    ``python -m symsgd_jupyter --enable``; the test server's user settings do not set it) answers JupyterLab's
    "Would you like to get notified about official Jupyter news?" with "never", and no such toast is shown."""
    with run.step("no 'Jupyter news' pop-up (the project's settings override)", fatal=False):
        data = server.api("GET", _NOTIFICATION_SETTINGS)
        user = (data.get("settings") or {}).get("fetchNews")  # the reader's own choice (none on this server)
        default = data["schema"]["properties"]["fetchNews"]["default"]  # JupyterLab applies overrides.json here
        assert user is None and default == "false", f"fetchNews: user {user!r}, default {default!r} (want 'false')"
        toasts = page.locator(".Toastify__toast").filter(has_text=_NEWS_TOAST)
        assert toasts.count() == 0, f"the news pop-up is shown: {toasts.all_inner_texts()}"


#: Code cells whose editor does not wrap long lines (CodeMirror marks a wrapping editor's content
#: ``cm-lineWrapping``), and code cells that scroll sideways, by their position.
_CODE_WRAP_JS = """(panel) => {
  const cells = [...document.querySelectorAll(panel + ' .jp-CodeCell')];
  const unwrapped = [], sideways = [];
  cells.forEach((cell, i) => {
    const content = cell.querySelector('.cm-content'), s = cell.querySelector('.cm-scroller');
    if (content && !content.classList.contains('cm-lineWrapping')) unwrapped.push(i);
    if (s && s.scrollWidth > s.clientWidth + 1) sideways.push([i, s.scrollWidth, s.clientWidth]);
  });
  return {cells: cells.length, unwrapped, sideways};
}"""


def check_code_lines_wrap(page, run: NotebookRun) -> None:
    """Step: every code cell wraps a line longer than the cell is wide, so none scrolls sideways at 1280 px beside
    the file browser — the project's settings override (``codeCellConfig.lineWrap``, ``symsgd_jupyter.LAB_OVERRIDES``).
    """
    with run.step("code lines wrap: every code cell's editor wraps, none scrolls sideways", fatal=False):
        seen = page.evaluate(_CODE_WRAP_JS, _PANEL)
        assert seen["cells"] > 0, f"no code cell measured: {seen}"
        assert not seen["unwrapped"] and not seen["sideways"], f"code cells that do not wrap: {seen}"


_THEME_JS = "() => document.body.dataset.jpThemeName || ''"


def _switch_theme(page, run: NotebookRun, theme: str) -> None:
    """Settings → Theme → ``theme`` from the menu, as a reader does; wait until the page uses it."""
    page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*Settings\s*$")).click(timeout=run.ms(20))
    label = page.locator(".lm-Menu-itemLabel").filter(has_text=re.compile(r"^\s*Theme\s*$"))
    page.locator(".lm-Menu-item").filter(has=label).hover(timeout=run.ms(20))
    target = page.locator(".lm-Menu-itemLabel").filter(has_text=re.compile(rf"^\s*{re.escape(theme)}\s*$"))
    page.locator(".lm-Menu-item").filter(has=target).click(timeout=run.ms(20))
    page.wait_for_function(f"() => ({_THEME_JS})() === {theme!r}", timeout=run.ms(30), polling=200)


#: Every figure keeps a white paper (symsgd_core.ui.style.FIGURE_LAYOUT): its colours were chosen against white.
_FIGURE_PAPERS_JS = f"""() => Array.from(document.querySelectorAll('{_PANEL} .js-plotly-plot'))
  .map(p => getComputedStyle(p.querySelector('svg.main-svg')).backgroundColor)"""


#: Text of the notebook's content whose colour has less contrast than WCAG AA against what is behind it (4.5 : 1,
#: 3 : 1 for large text), computed from the page's styles: axe-core reports text over widget and figure layers as
#: "incomplete" rather than as a violation, so the dark-theme check computes the ratio itself too.
_LOW_CONTRAST_JS = script("low_contrast")


def check_dark_theme(page, run: NotebookRun) -> None:
    """Step: in JupyterLab's dark theme the notebook's text, status lines, feedback and panels keep enough
    contrast (axe-core's color-contrast rule on the notebook's content), and every figure keeps its white paper;
    then back to the light theme (the server's settings are shared by the notebooks)."""
    with run.step("switch to JupyterLab Dark", fatal=False):
        _switch_theme(page, run, "JupyterLab Dark")
        page.wait_for_timeout(500)  # the theme's CSS applies in the next frames
    try:
        audit_step(page, run, _PANEL, label="dark theme", rules=["color-contrast"])
        with run.step("dark theme: all text of the notebook keeps WCAG AA contrast (computed)", fatal=False):
            low = page.evaluate(_LOW_CONTRAST_JS, _PANEL)
            run.accessibility["dark theme (computed contrast)"] = [{"id": "contrast", "impact": "serious",
                                                                    "help": t, "count": 1, "targets": []}
                                                                   for t in low[:20]]
            assert not low, f"{len(low)} texts with too little contrast in the dark theme: {low[:10]}"
        with run.step("dark theme: every figure keeps its white paper", fatal=False):
            papers = page.evaluate(_FIGURE_PAPERS_JS)
            assert all(p in ("rgb(255, 255, 255)", "rgba(255, 255, 255, 1)") for p in papers), papers
    finally:
        with run.step("back to JupyterLab Light"):
            if page.evaluate(_THEME_JS) != "JupyterLab Light":
                _switch_theme(page, run, "JupyterLab Light")


def _full_notebook_screenshot(page, run: NotebookRun) -> None:
    """The whole notebook, without the left sidebar."""
    if page.evaluate("() => !!document.querySelector('#jp-left-stack:not(.lm-mod-hidden)')"):
        page.locator(f"{_PANEL} .jp-Notebook").focus()
        page.keyboard.press("Control+b")
    full_screenshot(page, run.screenshot_path(), f"{_PANEL} .jp-WindowedPanel-outer", run)


_PANEL_NOTEBOOK = '''
from symsgd_core.core.exercises import Exercise, number_exercise
from symsgd_core.lesson.exercise_panel import ExercisePanel

square = number_exercise("square", "What is 3 squared?", 9.0, "3 · 3 = 9.", "multiply.", solution=9.0)
square = Exercise(**{**square.__dict__, "worked": "By definition $x^2 = x \\\\cdot x$, so $3^2 = 9$.",
                     "hint": "square means times itself."})
ExercisePanel([square])
'''


def test_a_worked_solution_is_typeset_in_jupyterlab(lab_server, lab_context):
    """JupyterLab's half of "MathJax works in both modes": a revealed worked solution is typeset (the classroom
    half is in test_voila.py)."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_PANEL_NOTEBOOK)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab_server.cwd / "zz_worked_panel.ipynb")
    page = lab_context.new_page()
    run = NotebookRun("lab", "zz_worked_panel.ipynb", page, timeout_s=240)
    try:
        with run.step("open and run the notebook"):
            page.goto(lab_server.url(f"/lab/workspaces/t{uuid.uuid4().hex[:8]}/tree/zz_worked_panel.ipynb?reset"),
                      timeout=run.ms(90))
            page.wait_for_selector(f"{_PANEL} .jp-Notebook .jp-Cell", timeout=run.ms(90))
            _wait_kernel_idle(page, run, 90)
            page.locator(".lm-MenuBar-item").filter(has_text=re.compile(r"^\s*Run\s*$")).click(timeout=run.ms(20))
            label = page.locator(".lm-Menu-itemLabel").filter(has_text=re.compile(r"^\s*Run All Cells\s*$"))
            page.locator(".lm-Menu-item").filter(has=label).click(timeout=run.ms(20))
            page.locator(f"{_PANEL} .symsgd-exercise").wait_for(state="visible", timeout=run.ms(120))
        with run.step("a wrong answer shows the hint; Show worked solution reveals typeset math"):
            box = page.locator(f"{_PANEL} .symsgd-exercise").first
            field = box.locator("input[type=text]")
            field.fill("8")
            field.press("Enter")
            box.locator(".symsgd-feedback-wrong").filter(has_text="times itself").wait_for(state="visible",
                                                                                            timeout=run.ms(30))
            box.get_by_role("button", name="Show worked solution").click()
            box.locator(".symsgd-worked mjx-container").first.wait_for(state="attached", timeout=run.ms(30))
            assert "$" not in box.locator(".symsgd-worked").inner_text()
    finally:
        page.close()
        lab_server.shutdown_kernels()
        (lab_server.cwd / "zz_worked_panel.ipynb").unlink(missing_ok=True)
    run.finish()
