"""The browser suite's accessibility audit: axe-core (from ``axe-playwright-python``, whose ``axe.min.js`` ships in
the package, so it runs offline) on every page, in JupyterLab (light and dark theme) and in classroom mode.

What is audited, and why only that: the **notebooks' content** — every rendered Markdown cell and every output
area (:data:`AUDITED`: text, formulas, widgets, figures, the Check-yourself panels). JupyterLab's and Voilà's own
chrome (menus, toolbars, side bars, the code editors and prompts, Voilà's page frame) is not the project's and is
left out by this scoping, not by switching rules off: no axe rule is disabled inside the audited region. Nor are
plotly's own drawing surfaces inside a figure (:data:`NOT_AUDITED`); the figure's container, its accessible name and
its mode bar are audited.

A page fails on any violation of impact :data:`BLOCKING` (serious or critical) inside the audited region; every
finding of any impact is returned for the report (``test-artifacts/browser/latency_report.json``, key
``accessibility``).

**The whole notebook, not one screenful, and in JupyterLab at all**. axe-core's colour rules
(*color-contrast*, *link-in-text-block*) only judge elements it takes for visible on screen; an element it takes for
clipped away does not match the rule, so it is not a violation, not "needs review", not even listed. Two things hid
the notebook from them, so the audit passed links that JupyterLab's theme tells from the text by colour alone, at
1.86:1 (axe-core's serious *link-in-text-block*, on notebooks 01-05):

* Both modes scroll the notebook inside an element (Voilà's ``#rendered_cells``, JupyterLab's notebook panel), not
  the document, and the audit ran on the page as the previous steps left it (after Run All, the slider moves and
  the Check-yourself answers: the end of the notebook), so it judged one screenful of the classroom page and passed
  the rest unseen. :func:`audit` now grows the viewport by the height the notebook hides (as the full-page
  screenshot does) and scrolls it to the top, so that every cell is on screen.
* In JupyterLab not even that screenful: the ``<body>`` is 0 px tall with ``overflow: hidden`` (the shell is
  positioned absolutely), which the browser hands to the viewport but axe-core takes for a clipping box of height 0,
  so it took every element of the page for hidden. :func:`audit` gives the body the viewport's height meanwhile.

Both are undone afterwards (viewport, scroll positions, the body's style).

**Needs review counts for** :data:`FAIL_WHEN_UNSURE`: axe-core reports *link-in-text-block* as "incomplete" (needs
review) rather than as a violation when it cannot compute the contrast (a background gradient or image, another
layer over the text). The rule only gets that far for a link told apart from its text by colour alone (an
underlined link passes before any colour is computed), so an unsure answer there is counted as a finding of the
rule's impact, not dropped. What a scroller of fixed height inside a cell hides (JupyterLab's scrolled outputs,
say) still goes unseen: growing the viewport does not show it.
"""

from __future__ import annotations

from functools import lru_cache

from js_files import script

#: CSS selectors of the notebooks' own content, the same in JupyterLab and in Voilà's lab template.
AUDITED = (".jp-RenderedMarkdown", ".jp-OutputArea-output")
#: Inside the audited content, plotly's drawing surfaces (the ``<svg class="main-svg">`` layers of each figure: axes,
#: ticks, traces, legend and title drawn as SVG shapes and text). They are plotly's, not the project's, and axe-core
#: finds nothing it could fail there: no ARIA, no role, no links, and for SVG text its colour rule only answers "needs
#: review" (notebook 04: 449 such answers, none counted, see FAIL_WHEN_UNSURE). Left out, the audit of notebook 04
#: takes 6.8 s instead of 10.3 s, with the same findings. What the project puts on a figure stays audited: the
#: figure's container, its name and description (role "figure", symsgd_jupyter/a11y.js), and plotly's mode bar.
NOT_AUDITED = (".js-plotly-plot .main-svg",)
#: Impacts that fail the test.
BLOCKING = ("serious", "critical")
#: Rules whose "incomplete" (needs review) results count as findings (see the module docstring): a link that only
#: colour tells apart from its text, with a contrast axe-core could not compute, is not accepted as a pass.
FAIL_WHEN_UNSURE = ("link-in-text-block",)
#: Tallest viewport the audit grows the page to (px); a notebook that hides more fails the audit (nothing is
#: passed unseen). Chromium lays out and audits an 80 000 px viewport in about a second.
MAX_AUDIT_HEIGHT = 100_000

# The elements that scroll vertically and hold an audited element (``sels``), with how much each hides; each is
# scrolled to its top (its old position kept in data-symsgd-audit-scroll for _RESTORE_JS).
_SCROLLERS_JS = script("audit_scrollers")
# JupyterLab's <body> is 0 px tall (its shell is positioned absolutely) with overflow: hidden. A browser hands a
# body's overflow to the viewport, so nothing is clipped, but axe-core takes the body for a clipping box of height
# 0 and every element of the page for hidden: its colour rules then match nothing at all (all "inapplicable").
# For the audit the body gets the viewport's height (min-height: 100vh); _RESTORE_JS puts the old value back.
_BODY_JS = script("audit_body")
_RESTORE_JS = script("audit_restore")
_FRAMES_JS = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


@lru_cache(maxsize=1)
def _axe():
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


def audit(page, scope: str = "", rules: list[str] | None = None) -> list[dict]:
    """Run axe-core on ``page``, limited to :data:`AUDITED` (inside ``scope``, e.g. the visible notebook panel), with
    the whole notebook on screen (the viewport grown by what its scrolling element hides, then restored).

    Args:
        page: a Playwright page that has rendered its notebook.
        scope: a CSS selector prefixed to each of :data:`AUDITED` (``""``: the whole page).
        rules: run only these axe rule ids (e.g. ``["color-contrast"]`` for the dark-theme check); default all.

    Returns:
        One dict per violation (and per "incomplete" result of a :data:`FAIL_WHEN_UNSURE` rule, with
        ``unsure: True``): ``id``, ``impact``, ``help``, ``count`` (elements) and up to three ``targets`` with the
        offending HTML, in axe's order.

    Raises:
        AssertionError: nothing to audit, or a notebook taller than :data:`MAX_AUDIT_HEIGHT` (part of it would go
            unseen).
    """
    include = [[f"{scope} {sel}".strip()] for sel in AUDITED]
    present = [sel for sel in include if page.locator(sel[0]).count()]
    if not present:
        raise AssertionError(f"nothing to audit: no element matches {[s[0] for s in include]}")
    options: dict = {"resultTypes": ["violations", "incomplete"]}
    if rules:
        options["runOnly"] = {"type": "rule", "values": list(rules)}
    viewport = page.viewport_size
    sels = [sel[0] for sel in present]
    try:
        before = None
        for _ in range(4):  # a relayout at the new size may change the height again: grow until nothing hides
            scrollers = page.evaluate(_SCROLLERS_JS, sels)
            hidden = max((s["hidden"] for s in scrollers), default=0)
            if hidden <= 1 or (before is not None and hidden >= before):
                break  # (what still hides is a scroller of fixed height inside the notebook: see FAIL_WHEN_UNSURE)
            before, size = hidden, page.viewport_size
            if size is None:
                raise AssertionError(f"the notebook hides {hidden} px in {scrollers} and the page has no viewport "
                                     "to grow: axe-core would not see it")
            height = size["height"] + hidden + 40
            if height > MAX_AUDIT_HEIGHT:
                raise AssertionError(f"the notebook needs a {height} px viewport, over MAX_AUDIT_HEIGHT = "
                                     f"{MAX_AUDIT_HEIGHT}: axe-core would not see what stays scrolled away")
            page.set_viewport_size({"width": size["width"], "height": height})
            page.evaluate(_FRAMES_JS)
        page.evaluate(_BODY_JS)
        context = {"include": present, "exclude": [[sel] for sel in NOT_AUDITED]}
        result = _axe().run(page, context=context, options=options)
    finally:
        if viewport is not None and page.viewport_size != viewport:
            page.set_viewport_size(viewport)
        page.evaluate(_RESTORE_JS)
    found = []
    unsure = [v for v in result.response.get("incomplete", []) if v["id"] in FAIL_WHEN_UNSURE]
    for v in [*result.response.get("violations", []), *unsure]:
        nodes = v.get("nodes", [])
        found.append({"id": v["id"], "impact": v.get("impact"), "help": v.get("help", ""), "count": len(nodes),
                      "unsure": v in unsure,
                      "targets": [{"target": n.get("target"), "html": (n.get("html") or "")[:200],
                                   "summary": (n.get("failureSummary") or "")[:300]} for n in nodes[:3]]})
    return found


def blocking(findings: list[dict]) -> list[dict]:
    """The findings that fail a page (impact :data:`BLOCKING`)."""
    return [f for f in findings if f["impact"] in BLOCKING]


def describe(findings: list[dict]) -> str:
    """Findings as readable lines for an assertion message."""
    lines = []
    for f in findings:
        unsure = " (needs review: axe-core could not compute it)" if f.get("unsure") else ""
        lines.append(f"{f['impact']}: {f['id']}{unsure} ({f['count']} elements) — {f['help']}")
        for t in f["targets"]:
            lines.append(f"    {t['target']}: {t['html']}")
            if t["summary"]:
                lines.append(f"      {t['summary'].splitlines()[0] if t['summary'] else ''}")
    return "\n".join(lines)
