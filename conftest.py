"""Repository-wide pytest hooks: a closing summary that shows what the test command ran."""

from __future__ import annotations

import pytest


def _is_notebook(nodeid: str) -> bool:
    return nodeid.split("::")[0].endswith(".ipynb")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Tag the reports of tests marked ``browser`` (the tag survives pytest-xdist's transfer to the controller)."""
    outcome = yield
    if item.get_closest_marker("browser") is not None:
        outcome.get_result().user_properties.append(("symsgd_kind", "browser"))


def _kind(report) -> str:
    if _is_notebook(report.nodeid):
        return "notebook cells (nbval)"
    if any(tuple(prop) == ("symsgd_kind", "browser") for prop in getattr(report, "user_properties", [])):
        return "real-browser tests"
    return "unit tests"  # including tests/browser/test_classroom_launcher.py, which needs no browser


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    counts: dict[str, dict[str, int]] = {}
    notebooks: set[str] = set()
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if not nodeid or (outcome == "passed" and getattr(report, "when", "call") != "call"):
                continue
            kind = _kind(report)
            counts.setdefault(kind, {}).setdefault(outcome, 0)
            counts[kind][outcome] += 1
            if _is_notebook(nodeid):
                notebooks.add(nodeid.split("::")[0])
    if not counts:
        return
    terminalreporter.section("what ran")
    for kind in ("unit tests", "notebook cells (nbval)", "real-browser tests"):
        if kind in counts:
            parts = ", ".join(f"{n} {o}" for o, n in sorted(counts[kind].items()))
            extra = f" in {len(notebooks)} notebooks" if kind.startswith("notebook") else ""
            terminalreporter.write_line(f"{kind}: {parts}{extra}")
