"""Reading the page's figures and outputs: :data:`PROBE_JS` (a script injected into every page that reads plotly
figures and controllers, ``.symsgd-controller``, and times slider → figure updates), the controllers and figures it
reports, outputs that show an error or raw markup, figures without a text alternative."""

from __future__ import annotations

from js_files import script
from notebook_run import NotebookRun

#: Injected into every page (``context.add_init_script``): read figures and controllers,
#: time slider → figure updates. Everything lives under ``window.__symsgd``.
#: Controls a page's figures offer that would reach the internet: mode-bar buttons that share or upload a chart
#: (plotly.js 4's "Share chart…", ``sendChartToCloud``; Chart Studio) and any link inside a mode bar (plotly's logo).
#: Returns their titles; empty when the shared config (``symsgd_core.ui.style.PLOTLY_CONFIG``) took effect.
OFF_MACHINE_CONTROLS_JS = script("off_machine_controls")



PROBE_JS = script("probe")



def describe_controllers(page) -> list[dict]:
    return page.evaluate("() => window.__symsgd.describe()")



def figure_report(page) -> list[dict]:
    return page.evaluate("() => window.__symsgd.figureReport()")



def output_errors(page, scope: str = "body") -> list[dict]:
    """Outputs showing an error or traceback: ``[{cell, text}]`` (cell index in the page)."""
    return page.evaluate("(sel) => window.__symsgd.outputErrors(sel)", scope)



def format_output_errors(errs: list[dict]) -> str:
    return "\n".join(f"cell {e['cell']}: {e['text']}" for e in errs)



def check_figures(page) -> None:
    """Every plotly figure rendered with data; every controller has a rendered figure."""
    figs = figure_report(page)
    ctrls = describe_controllers(page)
    problems = [f"figure #{f['index']} has no data (traces: {f['traces']})" for f in figs if not f["has_data"]]
    problems += [f"figure #{f['index']} has zero size ({f['width']:.0f}x{f['height']:.0f} px)"
                 for f in figs if f["width"] < 1 or f["height"] < 1]
    problems += [f"controller #{c['index']} shows no figure" for c in ctrls if c["figures"] == 0]
    if problems:
        where = [f"figure #{f['index']}: {f['traces']} traces, {f['width']:.0f}x{f['height']:.0f} px"
                 + (" (in a controller)" if f["in_controller"] else "") for f in figs]
        ctl = [f"controller #{c['index']}: {c['figures_with_data']}/{c['figures']} figures with data, "
               f"status {str(c['status'])[:100]!r}" for c in ctrls]
        raise AssertionError("; ".join(problems) + "\n  " + "\n  ".join(where + ctl))



#: Figures of the page's controllers without a text alternative: a plot must have role "figure", a name, and an
#: ``aria-describedby`` naming an element with text (symsgd_jupyter/describe.py; linked by symsgd_jupyter/a11y.py).
_FIGURES_WITHOUT_ALT_JS = script("figures_without_alt")



def raw_markup(page, scope: str = "body") -> list[dict]:
    """Text on the page that shows markup instead of what it means (``window.__symsgd.rawMarkup``, probe.js): an
    HTML tag printed as text, Markdown asterisks, TeX outside typeset math; ``[{pattern, text}]``."""
    return page.evaluate("(sel) => [].concat(...Array.from(document.querySelectorAll(sel))"
                         ".map((n) => window.__symsgd.rawMarkup(n)))", scope)



def check_no_raw_markup(page, run: NotebookRun, scope: str = "body") -> None:
    """Step: no text inside ``scope`` (every element it matches) shows raw markup (:func:`raw_markup`), checked
    on every page a reader sees."""
    with run.step("no raw markup shown as text (HTML tags, Markdown asterisks, TeX)", fatal=False):
        chars = page.evaluate("(sel) => Array.from(document.querySelectorAll(sel))"
                              ".reduce((n, e) => n + (e.innerText || '').length, 0)", scope)
        assert chars > 0, f"no text inside {scope!r}: nothing was scanned"
        hits = raw_markup(page, scope)
        run.detail = f"{chars} characters scanned, {len(hits)} found"
        assert not hits, f"raw markup shown as text: {hits[:8]}"
