"""The outcomes of notebook 03's simulations (``stationary.experiments``): what a figure says is decided by its
experiment, so each outcome's numbers are the result's own (the figures' words read nothing else:
``tests/ui/test_ui_words_from_outcome.py``)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from symsgd_core.stationary import experiments as ex


def test_variance_outcome_lists_the_unrelaxed_points_in_order():
    points = {1: ([0.3, 0.5], [1.0, 2.0], [0.1, 0.2], [True, False]), 0: ([0.1, 0.2], [1.0, 1.0], [0.1, 0.1],
                                                                         [False, True])}
    o = ex.variance_outcome(points, n_chains=10, t_max=25.0, fourth_moment_T=0.2)
    assert o.kind == "unrelaxed" and not o.failure  # hollow points are drawn and said, not a failed figure
    assert o.numbers["unrelaxed_depth"] == (0, 1) and o.numbers["unrelaxed_T"] == (0.1, 0.5)  # depth 0 first
    assert (o.numbers["n_chains"], o.numbers["t_max"], o.numbers["fourth_moment_T"]) == (10, 25.0, 0.2)
    relaxed = {d: (T, v, s, [True] * len(T)) for d, (T, v, s, _) in points.items()}
    assert ex.variance_outcome(relaxed, 10, 25.0, 0.2).numbers["unrelaxed_T"] == ()


def test_variance_estimates_outcome_says_what_the_result_lists():
    r = ex.variance_estimates(n_chains=60, n_temps=2)
    n = r.outcome.numbers
    said = [f"L = {d} at T = {T:.3f}" for d, T in zip(n["unrelaxed_depth"], n["unrelaxed_T"])]
    assert said == r.unrelaxed and (r.outcome.kind == "unrelaxed") == bool(r.unrelaxed)
    prob = ex.gaussian_problem(1.0, 1.0, 0.0)
    assert n["fourth_moment_T"] == prob.beta1 / (3 * prob.alpha1) and n["t_max"] == r.t_max


def test_tail_outcome_counts_samples_strictly_beyond_the_far_level():
    samples = {1: np.array([1.0, ex.TAIL_FAR, 11.0, 20.0]), 2: np.array([5.0])}
    n = ex.tail_outcome(samples, n_chains=4, t_end=10.0).numbers
    assert (n["samples_L1"], n["far_L1"], n["samples_L2"], n["far_L2"]) == (4, 2, 1, 0)
    assert (n["n_chains"], n["t_end"]) == (4, 10.0)


def test_wrong_sign_outcome_leaves_out_the_median_of_no_surviving_run():
    amp = SimpleNamespace(diverged=100, n_runs=100)
    n = ex.wrong_sign_outcome(8.0, {1: 1e-5, 2: 0.1}, 4.6, amp, None, 0.2, 0.21).numbers
    assert "amp_median" not in n and (n["amp_diverged"], n["amp_runs"]) == (100, 100)
    assert (n["median_L1"], n["median_L2"], n["rate"]) == (1e-5, 0.1, 4.6)
    assert ex.wrong_sign_outcome(8.0, {1: 1e-5, 2: 0.1}, 4.6, amp, 0.3, 0.2, 0.21).numbers["amp_median"] == 0.3


def test_depth_outcome_marks_the_collapsed_depth_and_the_chain_count():
    r = ex.depth_comparison(temperature=0.45, n_chains=100)  # T ≥ T_c at depth 1 only
    n = r.outcome.numbers
    assert n["collapsed_L1"] and not n["collapsed_L0"] and n["n_chains"] == r.n_chains == 100


def test_discrete_sgd_outcome_is_in_the_order_of_its_fit_names():
    r = ex.discrete_sgd(temperature=0.1, n_runs=40)
    assert tuple(r.fits) == ex.FIT_NAMES and r.outcome.numbers["temperature"] == r.temperature
    assert r.outcome.numbers["ks"] == tuple(f.ks for f in r.fits.values())


# -- the closed forms drawn at once, before a Run: each an experiment with its outcome ---------------------------
def test_depth_laws_outcome_is_the_phase_with_each_depths_moments():
    from symsgd_core.stationary.laws import PHASES, phase_of

    prob = ex.gaussian_problem(1.0, 1.0, 0.0)
    r = ex.depth_laws(temperature=0.15)
    n = r.outcome.numbers
    assert r.outcome.kind == phase_of(0.15, prob) == r.phase and r.outcome.kind in PHASES and not r.outcome.failure
    assert n["T_c"] == r.critical_temperature and n["temperature"] == 0.15
    for depth in (0, 1):
        assert n[f"collapsed_L{depth}"] is False
        law = r.laws[depth]
        assert (n[f"mean_L{depth}"], n[f"variance_L{depth}"], n[f"mode_L{depth}"]) == (law.mean, law.variance,
                                                                                       law.mode)
    dead = ex.depth_laws(temperature=1.2 * r.critical_temperature)
    assert dead.outcome.kind == "dead" and dead.outcome.failure and dead.outcome.numbers["collapsed_L1"]
    assert "mean_L1" not in dead.outcome.numbers  # δ(v): no moments quoted, never a NaN printed


def test_variance_curves_outcome_quotes_the_peak_or_says_there_is_no_depth1_curve():
    r = ex.variance_curves()
    n = r.outcome.numbers
    assert r.outcome.kind == "peaks" and not r.outcome.failure
    assert (n["T_peak"], n["var_peak"], n["T_end"], n["var_end"], n["T0_max"]) == (r.T_peak, r.var_peak, r.T_end,
                                                                                   r.var_end, r.T0_max)
    assert r.summary() == ex.variance_summary(r.outcome) and f"{r.T_peak:.3f}" in r.summary()
    none = ex.variance_curves(k=0.5, weight_decay=0.5)  # γ ≥ k: T_c ≤ 0
    assert none.outcome.kind == "no_depth1" and none.outcome.failure and "T_peak" not in none.outcome.numbers
    assert none.summary().startswith("γ ≥ k: critical T = ")


def test_tail_view_outcome_holds_each_depths_slope():
    r = ex.tail_view(temperature=0.15)
    n = r.outcome.numbers
    assert [n[f"slope_L{d}"] for d in ex.TAIL_DEPTHS] == [r.slopes[d] for d in ex.TAIL_DEPTHS]
    assert n["rho0"] == r.rho0 and r.outcome.kind == "tails"


def test_setting_views_quote_the_setting_the_run_uses():
    from symsgd_core.stationary.laws import critical_temperature

    w = ex.wrong_sign_start(temperature=0.2)
    assert w.outcome.kind == "wrong_start" and w.outcome.numbers == {"temperature": 0.2}
    d = ex.discrete_sgd_setting(temperature=0.3)
    assert d.outcome.numbers == {"temperature": 0.3, "lr": 0.3, "batch_size": 1,
                                 "T_c": critical_temperature(ex.gaussian_problem(1.0, 1.0, 0.0))}
