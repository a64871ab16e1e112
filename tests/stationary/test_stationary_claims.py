"""Notebook 03's claims (symsgd_core.stationary.claims): they pass on what the notebook measures and fail on a
broken measurement; a claim with nothing to measure fails."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core.core.checking import make_result
from symsgd_core.stationary import claims
from symsgd_core.stationary.experiments import DiscreteSGDScan, DtRow
from symsgd_core.stationary.laws import DiagonalNetProblem, StationaryLaw, critical_temperature

PROB = DiagonalNetProblem.gaussian(k=1.0, sigma=1.0)
LAW = StationaryLaw(PROB, 0.15, 1)
P_LAW = float(LAW.cdf(np.array([0.05]))[0])


def _rows(p_fine=P_LAW, ks=0.01, err=0.005):
    return [DtRow(s, dt, err, ks, P_LAW, p_fine, P_LAW, 1 / np.sqrt(3000)) for s in ("euler", "weak2")
            for dt in (0.08, 0.04)]


def _plain(n=2000, stuck=200, seed=0):
    """Exact draws of the law, ``stuck`` of them replaced by chains lost far below v = 1e-5."""
    v = LAW.sample(n, seed=np.random.default_rng(seed))
    v[:stuck] = 1e-30
    return v


def _failed(rows):
    return {r.name for r in rows if not r.passed}


def test_integrator_claims_pass_on_a_biased_plain_ensemble_and_a_clean_study():
    rows = claims.integrator_claims(_rows(), 3000, _plain(), LAW)
    assert all(r.passed for r in rows), [str(r) for r in rows if not r.passed]
    assert len(rows) == 2 + 2 + 4  # bias, stuck, two weak2 KS rows, four P(v < 0.05) rows


def test_integrator_claims_fail_without_a_bias_or_with_a_study_off_the_law():
    unbiased = claims.integrator_claims(_rows(), 3000, _plain(stuck=0), LAW)
    assert "stationary.plain_euler_biased" in _failed(unbiased)
    spread = _plain(stuck=0)
    spread[:300] = 0.04  # an excess just below 0.05: biased, but not by stuck chains
    not_stuck = claims.integrator_claims(_rows(), 3000, spread, LAW)
    assert _failed(not_stuck) == {"stationary.plain_euler_bias_is_stuck_chains"}
    off = claims.integrator_claims(_rows(p_fine=P_LAW + 0.1, ks=0.5), 3000, _plain(), LAW)
    assert {"stationary.weak2_ks[dt=0.08]", "stationary.p_small[euler, dt=0.04]"} <= _failed(off)
    assert "stationary.plain_euler_biased" in _failed(claims.integrator_claims(_rows(), 3000, np.array([]), LAW))


def test_window_claims_hold_for_the_closed_forms_and_fail_for_a_wrong_transitional_temperature(monkeypatch):
    assert claims.bimodal_window(DiagonalNetProblem.gaussian(k=1.0, sigma=0.5)) == pytest.approx(1.0, abs=1e-14)
    assert all(r.passed for r in claims.window_claims())
    monkeypatch.setattr(claims, "transitional_temperature", lambda p: 0.9 * critical_temperature(p))
    assert "stationary.window_whole_at_half_k" in _failed(claims.window_claims())


def test_collapse_claim_counts_temperatures_at_or_above_the_critical_temperature_without_weight_decay():
    tc0 = critical_temperature(PROB)

    def collapse(*temps):
        return make_result("stationary.collapse_at_Tc", "", 5.0, 4.0, "", ">=",
                           details={"rows": [{"T": t} for t in temps]})

    assert claims.collapse_claims(collapse(0.8 * tc0, 0.9 * tc0), PROB)[0].passed
    assert not claims.collapse_claims(collapse(0.8 * tc0, 1.2 * tc0), PROB)[0].passed
    assert not claims.collapse_claims(collapse(), PROB)[0].passed  # nothing measured


def _scan(div=(0.0, 0.34), ks=(0.10, 0.28), crit=(0.18, 0.20), n=300):
    T = (0.05, 0.3)
    return DiscreteSGDScan(T, div, div, ks, ks, crit, crit, (0.0, 0.0), (0.1, 0.1), n, 5.0)


def test_discrete_scan_claims_pass_on_the_notebook_numbers_and_fail_when_a_trend_is_missing():
    assert all(r.passed for r in claims.discrete_scan_claims(_scan()))
    assert _failed(claims.discrete_scan_claims(_scan(div=(0.10, 0.12)))) == {"stationary.divergences_grow_with_T"}
    assert _failed(claims.discrete_scan_claims(_scan(ks=(0.25, 0.10)))) == {
        "stationary.sgd_follows_sde_at_small_T", "stationary.sgd_leaves_sde_near_Tc"}
    empty = DiscreteSGDScan((), (), (), (), (), (), (), (), (), 300, 5.0)
    assert not claims.discrete_scan_claims(empty)[0].passed
