"""symsgd_core.lesson.claims_cell: a cell's claims as one compact line in every notebook, asserted; deliberate failures
framed as caught."""

import pytest

from symsgd_core.lesson.claims_cell import assert_caught, assert_claims


def _results(n_ok: int, n_bad: int = 0):
    from symsgd_core.core.checking import make_result

    return ([make_result(f"ok{i}", "claim <a>", 1e-9, 1e-6, "round-off") for i in range(n_ok)]
            + [make_result(f"bad{i}", "claim", 2.0, 1.0, "src") for i in range(n_bad)])


def test_assert_claims_prints_every_line_outside_ipython(capsys):
    assert_claims(_results(6))
    assert capsys.readouterr().out.count("[PASS]") == 6


@pytest.mark.parametrize("mode", ["", "classroom"], ids=["jupyterlab", "classroom"])
def test_assert_claims_is_one_compact_line_in_every_notebook(monkeypatch, capsys, mode):
    """JupyterLab and the classroom alike: "✔ 6 claims checked", the table behind a click; every line as text."""
    import IPython
    import IPython.display

    from symsgd_core.core.checking import claims_html, claims_summary

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())  # a kernel
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append((obj, raw)))
    monkeypatch.setenv("SYMSGD_MODE", mode)
    assert_claims(_results(6))
    assert capsys.readouterr().out == "" and len(shown) == 1
    bundle, raw = shown[0]
    html = bundle["text/html"]
    assert raw and '<details class="symsgd-claims">' in html and "<summary" in html and "✔ 6 claims checked" in html
    assert html.count("<tr>") == 7 and "claim &lt;a&gt;" in html  # the table behind the click, escaped
    assert bundle["text/plain"].count("[PASS]") == 6  # a text-only front end still reads every claim
    with pytest.raises(AssertionError):
        assert_claims(_results(5, 1))
    html = shown[-1][0]["text/html"]
    assert "✘ 1 of 6 claims failed" in html and "<details class=\"symsgd-claims\" open>" in html
    assert claims_summary(_results(1)) == "✔ 1 claim checked" and "no claim" in claims_summary([])
    assert "open" in claims_html([])


def test_assert_caught_frames_deliberate_failures_and_fails_on_a_check_that_cannot_fail(monkeypatch):
    """A check fed a broken input on purpose: one line says it was caught (never a bare "[FAIL]" on the page), and
    a broken input that passes is an error."""
    import IPython
    import IPython.display

    from symsgd_core.core.checking import make_result

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append(obj))
    caught = [("rank-2 point", make_result("b1", "claim", 2.0, 1.0, "src")),
              ("wrong noise", make_result("lv", "claim", 3.0, 1.0, "src"))]
    assert_caught(caught)
    html = shown[-1]["text/html"]
    assert "✔ 2 broken inputs caught" in html and '<details class="symsgd-caught">' in html
    assert html.count("failed, as it must") == 2 and "rank-2 point" in html
    assert shown[-1]["text/plain"].splitlines()[0].startswith("broken on purpose (rank-2 point), caught: [FAIL]")
    with pytest.raises(AssertionError, match="passed a broken input"):
        assert_caught([*caught, ("nothing broken", make_result("ok", "claim", 0.5, 1.0, "src"))])
    assert "✘ a check passed a broken input (nothing broken)" in shown[-1]["text/html"]
    assert '<details class="symsgd-caught" open>' in shown[-1]["text/html"]
    with pytest.raises(AssertionError, match="no broken input"):
        assert_caught([])
    # a check that did not test the broken input (its precondition was not met) did not catch it
    from symsgd_core.core.checking import precondition_not_met

    untested = ("too short a forcing", precondition_not_met("ab", "claim", "forcing did not reach rank 1"))
    with pytest.raises(AssertionError, match="did not test a broken input"):
        assert_caught([*caught, untested])
    assert "✘ a check did not test a broken input (too short a forcing)" in shown[-1]["text/html"]
    assert "NOT caught: [PRECONDITION NOT MET] ab" in shown[-1]["text/plain"]
