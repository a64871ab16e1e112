"""A notebook cell's claims: :func:`assert_claims` and :func:`assert_caught` show checks-as-code results
(:class:`~symsgd_core.core.checking.CheckResult`) and assert them, the notebooks' proofs as code.

In a notebook (JupyterLab, a classroom page, the static edition) the cell shows one compact line, "✔ 6 claims
checked", with the table of claims, measured values and tolerances behind a click
(:func:`~symsgd_core.core.checking.claims_html`; opened when a claim failed). The same output carries every result
as a line of text (``text/plain``), which is what a terminal or a text-only front end shows. Outside IPython the
lines are printed.
"""

from __future__ import annotations

from symsgd_jupyter.compact_output import show
from symsgd_jupyter.kernel import install

from ..core.checking import caught_html, claims_html

__all__ = ["assert_caught", "assert_claims", "passed_claims"]


def assert_claims(results) -> None:
    """Show every ``CheckResult`` of ``results`` and assert that it passed. No claim at all is a failure too."""
    install()
    results = list(results)
    if results:
        show(claims_html(results), "\n".join(str(r) for r in results))
    passed_claims(results)


def passed_claims(results) -> list:
    """``results`` (``CheckResult`` rows) as a list, asserted: AssertionError when there is none or one failed."""
    results = list(results)
    if not results:
        raise AssertionError("no claim to check")
    for r in results:
        assert r.passed, r
    return results


def assert_caught(cases) -> None:
    """Show that checks fed a broken input on purpose fail on it, and assert it (a check that cannot fail proves
    nothing). ``cases``: ``(what was broken, CheckResult)`` pairs.

    Shown as :func:`assert_claims` shows claims: one line, "✔ 2 broken inputs caught: …", with what was broken and
    each measured value behind a click, so a deliberate "[FAIL]" never reaches the page without that framing. A
    check that reports an unmet precondition on the broken input did not test it: that is an error too.
    """
    install()
    cases = list(cases)
    if not cases:
        raise AssertionError("no broken input was fed to a check")
    lines = "\n".join(f"broken on purpose ({what}), caught: {r}" if not r.passed and not r.precondition else
                       f"broken on purpose ({what}), NOT caught: {r}" for what, r in cases)
    show(caught_html(cases), lines)
    for what, r in cases:
        assert not r.passed, f"the check passed a broken input ({what}): {r}"
        assert not r.precondition, f"the check did not test a broken input ({what}): {r}"
