"""Waiting for a page to be built, on states, never on sleeps: every cell's outputs in (classroom mode), every widget
view rendered, no widget shown as failed."""

from __future__ import annotations

import contextlib
import json

from figure_inspection import _FIGURES_WITHOUT_ALT_JS, check_figures
from notebook_run import ConsoleLog, NotebookRun

#: Page text that means a widget failed to render.
WIDGET_FAILURE_TEXTS = ("Error displaying widget", "Failed to load view class", "Failed to create view",
                        "Could not create a view", "Model not found")



def widget_failures(page) -> list[str]:
    """Widget-rendering failure texts visible in the page."""
    text = page.evaluate("() => document.body.innerText")
    return [t for t in WIDGET_FAILURE_TEXTS if t in text]



def wait_widgets_rendered(page, run: NotebookRun, expected_views: int = 0, console: ConsoleLog | None = None) -> None:
    """Wait until every widget output is drawn (at least ``expected_views`` root views, none
    pending, every controller's figures plotted), or a widget failure text appears; then wait
    (≤ 20 s) for every figure to hold data. Failures are reported by the checks that follow."""
    run.detail = "views: " + json.dumps(page.evaluate(
        "() => ({rendered: window.__symsgd.renderedViews(), pending: window.__symsgd.pendingViews()})"))
    try:
        page.wait_for_function(
            "([n, texts]) => { const S = window.__symsgd; if (S.failureTexts(texts).length) return true;"
            " return S.renderedViews() >= n && S.pendingViews() === 0; }",
            arg=[expected_views, list(WIDGET_FAILURE_TEXTS)], timeout=run.ms(90), polling=200)
    except Exception:
        run.detail += "; not drawn: " + json.dumps(page.evaluate("() => window.__symsgd.pendingDetails()"))[:1500]
        if console is not None:
            run.detail += "; console errors: " + console.summary()
        raise
    if not widget_failures(page):
        with contextlib.suppress(Exception):  # check_figures names the figure without data
            page.wait_for_function("() => window.__symsgd.figures().every(window.__symsgd.hasData)",
                                   timeout=run.ms(20), polling=200)



#: The classroom page's progress, kept by its template (``tools/voila/templates/symsgd/static/progressive.js``): Voilà
#: sends the page before any cell runs, then each cell's outputs as the cell finishes (progressive rendering).
_CELLS_STATE_JS = "() => document.body ? (document.body.dataset.symsgdCells || '') : ''"



def wait_classroom_cells_ran(page, run: NotebookRun, timeout_s: float | None = None) -> int:
    """Wait until a classroom page shows its notebook (no spinner) and holds every cell's outputs; the page arrives
    before the cells run and each cell's outputs follow when the cell has run, so the page's ``load`` says nothing
    about the cells. ``timeout_s``: the longest wait for the cells (default: the rest of ``run``'s budget).

    Returns:
        The number of widget outputs the cells sent (each must become a drawn view).

    Raises:
        AssertionError: Voilà reported that it could not run the cells.
    """
    page.wait_for_selector("#rendered_cells", state="visible", timeout=run.ms())
    page.wait_for_function(f"() => ['done', 'error'].includes(({_CELLS_STATE_JS})())", timeout=run.ms(timeout_s),
                           polling=250)
    progress = page.evaluate("() => window.__symsgdClassroom")
    run.detail = f"classroom page progress: {progress}"
    assert page.evaluate(_CELLS_STATE_JS) == "done", f"Voilà could not run the cells: {progress}"
    return int(progress["widgetViews"])



def check_widgets_rendered(page, run: NotebookRun, console: ConsoleLog, expected_views: int = 0) -> None:
    """Step: every widget view drawn, no widget failure text, every figure holds data and has a text alternative
    (what a screen reader reads: what is plotted, the settings, the finding)."""
    with run.step("widgets and figures rendered"):
        wait_widgets_rendered(page, run, expected_views, console)
        run.detail = "console errors so far: " + console.summary()
        failures = widget_failures(page)
        assert not failures, f"widget failures shown: {failures}"
        check_figures(page)
        run.detail = "figures without a text alternative: waiting for the page's a11y helper to link them"
        try:  # the helper links them when the page is idle (symsgd_jupyter/a11y.py batches its passes)
            page.wait_for_function(f"() => ({_FIGURES_WITHOUT_ALT_JS})().length === 0", timeout=run.ms(20),
                                   polling=250)
        finally:
            missing = page.evaluate(_FIGURES_WITHOUT_ALT_JS)
            run.detail = f"figures without a text alternative: {missing[:5]}"
        assert not missing, f"figures without a text alternative: {missing[:5]}"
