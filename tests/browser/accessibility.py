"""The browser suite's accessibility audit: axe-core (from ``axe-playwright-python``, whose ``axe.min.js`` ships in
the package, so it runs offline) on every page, in JupyterLab (light and dark theme) and in classroom mode.

What is audited, and why only that: the **notebooks' content** — every rendered Markdown cell and every output
area (:data:`AUDITED`: text, formulas, widgets, figures, the Check-yourself panels). JupyterLab's and Voilà's own
chrome (menus, toolbars, side bars, the code editors and prompts, Voilà's page frame) is not the project's and is
left out by this scoping, not by switching rules off: no axe rule is disabled inside the audited region.

A page fails on any violation of impact :data:`BLOCKING` (serious or critical) inside the audited region; every
finding of any impact is returned for the report (``test-artifacts/browser/latency_report.json``, key
``accessibility``).
"""

from __future__ import annotations

from functools import lru_cache

#: CSS selectors of the notebooks' own content, the same in JupyterLab and in Voilà's lab template.
AUDITED = (".jp-RenderedMarkdown", ".jp-OutputArea-output")
#: Impacts that fail the test.
BLOCKING = ("serious", "critical")


@lru_cache(maxsize=1)
def _axe():
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


def audit(page, scope: str = "", rules: list[str] | None = None) -> list[dict]:
    """Run axe-core on ``page``, limited to :data:`AUDITED` (inside ``scope``, e.g. the visible notebook panel).

    Args:
        page: a Playwright page that has rendered its notebook.
        scope: a CSS selector prefixed to each of :data:`AUDITED` (``""``: the whole page).
        rules: run only these axe rule ids (e.g. ``["color-contrast"]`` for the dark-theme check); default all.

    Returns:
        One dict per violation: ``id``, ``impact``, ``help``, ``count`` (elements) and up to three ``targets``
        with the offending HTML, in axe's order.
    """
    include = [[f"{scope} {sel}".strip()] for sel in AUDITED]
    present = [sel for sel in include if page.locator(sel[0]).count()]
    if not present:
        raise AssertionError(f"nothing to audit: no element matches {[s[0] for s in include]}")
    options: dict = {"resultTypes": ["violations"]}
    if rules:
        options["runOnly"] = {"type": "rule", "values": list(rules)}
    result = _axe().run(page, context={"include": present}, options=options)
    found = []
    for v in result.response.get("violations", []):
        nodes = v.get("nodes", [])
        found.append({"id": v["id"], "impact": v.get("impact"), "help": v.get("help", ""), "count": len(nodes),
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
        lines.append(f"{f['impact']}: {f['id']} ({f['count']} elements) — {f['help']}")
        for t in f["targets"]:
            lines.append(f"    {t['target']}: {t['html']}")
            if t["summary"]:
                lines.append(f"      {t['summary'].splitlines()[0] if t['summary'] else ''}")
    return "\n".join(lines)
