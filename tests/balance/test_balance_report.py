"""symsgd_core.balance.report: notebook 01's printed tables, each line checked against the numbers it is made of,
and on broken input (a run that never balances raises; an eigenvalue list with two zeros fails its claim)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from symsgd_core import balance
from symsgd_core.balance import report as br
from symsgd_core.balance.checks import check_corollary_decay, check_one_zero_eigenvalue
from symsgd_core.balance.experiments import load_relu_balance
from symsgd_core.core.checking import make_result
from symsgd_core.core.report import Report
from symsgd_jupyter.text_checks import word_problems


def test_report_text_claims_and_values():
    row = make_result("x", "a claim", 0.0, 1.0, "stated")
    rep = Report(["a", "b"], [row], {"v": 1})
    assert str(rep) == "a\nb" and rep.lines() == ["a", "b"] and rep.claims == (row,) and rep["v"] == 1
    rep.lines().append("c")
    assert rep.lines() == ["a", "b"]
    with pytest.raises(TypeError):
        rep.values["v"] = 2
    joined = Report.join([rep, Report(["c"], values={"v": 2})])
    assert joined.lines() == ["a", "b", "c"] and joined.claims == (row,) and joined["v"] == 2
    with pytest.raises(ValueError, match="newlines"):
        Report(["a\nb"])
    with pytest.raises(TypeError, match="CheckResult"):
        Report(["a"], ["not a claim"])


def test_ito_spectra_one_line_and_two_claims_per_model():
    rep = br.ito_spectra_report()
    assert len(rep.lines()) == len(balance.ITO_MODELS) and len(rep.claims) == 2 * len(balance.ITO_MODELS)
    for line, model in zip(rep.lines(), balance.ITO_MODELS, strict=True):
        assert line.startswith(f"{model}: eigenvalues of C = [")
        shown = [float(x) for x in re.findall(r"-?\d\.\d+e[-+]\d+", line)]
        np.testing.assert_allclose(shown, balance.ito_point(model).eigenvalues, rtol=5e-3, atol=1e-12)
    assert all(c.passed for c in rep.claims) and not word_problems(str(rep))
    with pytest.raises(ValueError, match="no model"):
        br.ito_spectra_report(())


def test_a_second_zero_eigenvalue_fails_the_claim_the_report_asserts():
    """The report's claims are check_one_zero_eigenvalue's: a spectrum with two zeros fails it."""
    assert not all(c.passed for c in check_one_zero_eigenvalue([0.0, 0.0, 1.0], 3, "broken"))


def test_the_weight_decay_is_the_corollary_claims():
    assert br.corollary_weight_decay() > 0
    import inspect

    assert br.corollary_weight_decay() == inspect.signature(check_corollary_decay).parameters["weight_decay"].default


def test_ensemble_report_quotes_the_result():
    res = balance.balance_ensemble(runs=40)
    m = balance.SCALAR_DATA.moments()
    rep = br.ensemble_report(res, m)
    start, spread, rates = rep.lines()
    assert start == f"start (u, w) = {res.theta0}, duration t = {res.t_end:g}, seed {res.seed}"
    assert f"std G = {res.spread_G['std'][-1]:.4g};" in spread and f"bound = {res.bound[-1]:.4g}" in spread
    gamma = rep["weight_decay"]
    assert f"4TΔ/α₁ = {balance.corollary_rate(res.temperature, m):.4g} without" in rates
    assert f"4TΔ/α₁ + 4γ = {balance.corollary_rate(res.temperature, m, gamma):.4g} with γ = {gamma:g}" in rates
    assert balance.corollary_rate(res.temperature, m, gamma) > balance.corollary_rate(res.temperature, m)
    assert not word_problems(str(rep))


@pytest.fixture(scope="module")
def shipped():
    return load_relu_balance()


def test_relu_report_of_the_shipped_run(shipped):
    rep = br.relu_run_report(shipped)
    lines = rep.lines()
    assert lines[0] == f"precomputed run: {shipped.settings}" and len(lines) == 4
    ratio = shipped.tr_cov_u / shipped.tr_cov_w
    k = int(np.argmax(np.abs(np.log(ratio)) < br.WITHIN_ONE))
    assert k > 0 and f"first within 10 % of 1 at t = {shipped.times[k]:.3g}" in lines[1]
    assert all(abs(np.log(r)) >= br.WITHIN_ONE for r in ratio[:k])  # the first such record, not a later one
    assert lines[2].startswith("end of the shipped run: loss ") and lines[3].startswith("at the teacher (20 → 40 → 20")
    assert len(rep.claims) >= 3 and all(c.passed for c in rep.claims) and not word_problems(str(rep))


def test_a_run_that_never_balances_is_refused(shipped):
    never = dataclasses.replace(shipped, tr_cov_u=shipped.tr_cov_w * 3.0)
    with pytest.raises(ValueError, match="never comes within"):
        br.relu_run_report(never)
