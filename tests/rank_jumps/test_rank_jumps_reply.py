"""The authors' reply worked out (explosion, Eckart–Young, the origin, min-norm completion, full observation), the
balance threshold ε₂ of B_r (the imbalance SGD keeps), and the statistics of the jumps: each claim holds on the real
model and fails on a broken input."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import dln, rank_jumps
from symsgd_core.rank_jumps import analysis as an
from symsgd_core.rank_jumps import checks as rj
from symsgd_core.rank_jumps import experiments as ex


@pytest.fixture(scope="module")
def rank1_point():
    return rank_jumps.rank_one_minimum()


def test_explosion_costs_L_i_to_the_minus_2_over_L(rank1_point):
    dist, slope = rj.check_explosion(rank1_point)
    assert dist.passed and slope.passed, (dist, slope)
    assert slope.details["fitted_exponent"] == pytest.approx(-0.5, abs=1e-12)   # L = 4
    assert slope.details["dA_exponent"] == pytest.approx(-1.0, abs=1e-12)      # ‖A_i − Â‖ = 1/i
    assert dist.details["reconstruction_max"] < 1e-13 and dist.details["imbalance_max"] < 1e-12


def test_explosion_fails_with_the_replys_formula_as_printed(rank1_point):
    """The reply prints ‖θ_i − θ̂‖² = i^(−2/L), one layer's share: as the total it is off by the factor L."""
    dist, _ = rj.check_explosion(rank1_point, formula=lambda i, L: i ** (-2.0 / L))
    assert not dist.passed and dist.measured == pytest.approx(3.0)                 # L − 1 = 3 at L = 4
    assert "this project's" in dist.claim and "reply prints" in dist.claim
    assert "this project's construction" in rj.check_explosion.__doc__
    d = an.explosion_distances(rank1_point, np.array([4.0, 16.0]))
    np.testing.assert_allclose(d["per_layer"], np.array([[4.0 ** -0.5] * 4, [16.0 ** -0.5] * 4]), rtol=1e-12)


def test_explosion_rejects_bad_indices(rank1_point):
    with pytest.raises(ValueError):
        an.explosion_distances(rank1_point, np.array([0.5, 2.0]))


def test_eckart_young_holds_and_fails_with_a_wrong_bound():
    p0, _ = rank_jumps.start_minimum()
    A = p0.end_to_end()[0]
    assert rj.check_eckart_young(A, 1).passed
    d, A1 = an.distance_to_rank(A, 1)
    assert d == pytest.approx(np.linalg.svd(A, compute_uv=False)[1]) and np.linalg.matrix_rank(A1) == 1
    wrong = rj.check_eckart_young(A, 1, bound=lambda M, r: np.linalg.svd(M, compute_uv=False)[r - 1])
    assert not wrong.passed
    assert an.distance_to_rank(A, 2)[0] == 0.0


def test_origin_condition_at_L2_and_beyond():
    problem = rank_jumps.epsilon_completion(0.2)
    res = rj.check_origin_condition(problem)
    assert res.passed, res
    g = an.origin_threshold(problem)
    assert g == pytest.approx(0.5 * np.linalg.norm(2 / 3 * np.array([[1, 0.2], [0, 1]]), 2))
    broken = rj.check_origin_condition(problem, threshold=lambda p: 0.5 * np.linalg.norm(p.target * p.mask, 2))
    assert not broken.passed


def test_min_norm_completion_rank_per_eps():
    assert an.min_norm_completion(0.1, 4)["rank"] == 2
    m = an.min_norm_completion(0.2, 4)
    assert m["rank"] == 2 and m["penalty_rank2"] < m["penalty_rank1"]
    assert m["penalty_rank1"] == pytest.approx(4 * (1 + 0.04 + 25 + 1) ** 0.25)
    assert an.completion_penalty(m["x_rank2"], 0.2, 4) == pytest.approx(m["penalty_rank2"])
    # the rank-2 branch minimum is a local minimum in x
    for dx in (1e-3, -1e-3):
        assert an.completion_penalty(m["x_rank2"] + dx, 0.2, 4) > m["penalty_rank2"]
    assert an.min_norm_completion(0.3, 4)["rank"] == 1


def test_cold_sweep_changes_winner_as_gamma_goes_to_zero():
    sweep = ex.cold_weight_decay_sweep(0.2, (0.01, 0.0025))
    assert sweep[0]["rank1"] < sweep[0]["rank2"]       # rank 1 lower at γ = 0.01 ...
    assert sweep[1]["rank2"] < sweep[1]["rank1"]       # ... rank 2 lower at γ = 0.0025, as the min-norm one
    mn = an.min_norm_completion(0.2, 4)
    for row in sweep:                                  # exact completions are feasible: 𝓛_γ ≤ γ·penalty
        assert row["rank2"] <= row["weight_decay"] * mn["penalty_rank2"]
        assert row["rank1"] <= row["weight_decay"] * mn["penalty_rank1"]


def test_all_entries_observed_reaches_the_right_rank():
    res = ex.all_entries_observed(n_runs=4)
    assert rj.check_right_rank(res.full, res.target_rank).passed
    assert not rj.check_right_rank(res.partial, res.target_rank).passed   # three entries: GD is trapped at rank 2


def test_no_jumps_check_and_bound():
    assert an.zero_count_upper_bound(32) == pytest.approx(1 - 0.05 ** (1 / 32))
    assert an.zero_count_upper_bound(100) == pytest.approx(0.0295, abs=1e-3)   # ≈ 3/n
    ok = rj.check_no_jumps(np.full(32, -1))
    assert ok.passed and ok.details["jump_probability_upper_bound"] < 0.1
    assert not rj.check_no_jumps(np.array([-1, 500, -1])).passed
    with pytest.raises(ValueError):
        an.zero_count_upper_bound(5, 1.0)


def test_memoryless_accepts_exponential_and_rejects_clustered_times():
    rng = np.random.default_rng(1)
    T = 60_000
    t = rng.exponential(20_000, size=40)
    js = np.where(t < T, np.round(t, -2), -1)
    assert rj.check_memoryless(js, T).passed
    clustered = 30_000 + 100 * np.arange(20)
    assert not rj.check_memoryless(clustered, T).passed
    with pytest.raises(ValueError, match="at least 3 observed events"):
        an.censored_exponential_ks(np.array([np.nan, np.nan, 5]), T)
    with pytest.raises(ValueError, match="event_times"):       # the kernels' −1 is converted, never read as a time
        an.censored_exponential_ks(np.array([-1, 4, 5, 6]), T)


def test_raising_noise_scales_near_B1_and_the_rank_bound_is_an_artefact(rank1_point):
    problem = rank_jumps.epsilon_completion(0.2)
    near = an.raising_noise_near(rank1_point, problem, np.array([0.01, 0.02, 0.04, 0.08]), 0.3)
    scaling, bound = rj.check_raising_noise_scaling(near)
    assert scaling.passed and bound.passed, (scaling, bound)
    assert not rj.check_raising_noise_scaling(near, tolerance=1e-6)[0].passed
    p0, _ = rank_jumps.start_minimum()                       # the rank-2 minimum: rank C ≤ 2 there too
    assert an.raising_noise_near(p0, problem, np.array([0.0]), 0.3, rank=2)["rank_C"][0] <= 2


@pytest.fixture(scope="module")
def rank2_point():
    return rank_jumps.start_minimum()[0]


def test_one_sgd_step_moves_the_imbalance_by_eta_squared(rank2_point, rank1_point):
    """D_ℓ ← (1 − 2ηγ)²D_ℓ + η²X_ℓ exactly for one SGD step; the GD law (no η² term) fails for SGD."""
    problem = rank_jumps.epsilon_completion(0.2)
    for point in (rank2_point, rank1_point):
        res = rj.check_imbalance_step(point, problem, 0.3, 0.027)
        assert res.passed, res
        assert res.details["eta_sq_term_max"] > 1e6 * res.tolerance          # the η² term is far above round-off
        assert not rj.check_imbalance_step(point, problem, 0.3, 0.027, noise_factor=0.0).passed


def test_sgd_imbalance_scale_formulas(rank2_point):
    problem = rank_jumps.epsilon_completion(0.2)
    lr, weight_decay = 0.3, 0.027
    sc = an.sgd_imbalance_scale(rank2_point, problem, lr, weight_decay)
    drive = an.sgd_imbalance_drive(rank2_point, problem)
    assert len(drive) == 3 and drive[0].shape == (3, 8, 8)
    c2 = (1 - 2 * lr * weight_decay) ** 2
    mean_D = [lr**2 * x.mean(axis=0) / (1 - c2) for x in drive]
    assert sc["lower"] == pytest.approx(max(np.linalg.norm(m) for m in mean_D), rel=1e-12)
    assert sc["lower"] == pytest.approx(lr * max(np.linalg.norm(x.mean(axis=0)) for x in drive)
                                        / (4 * weight_decay * (1 - lr * weight_decay)), rel=1e-12)
    assert sc["lower"] < sc["upper"] and sc["lower"] < sc["bound"]
    ws = [w[0] for w in rank2_point.layers()]
    assert sc["layer_scale"] == pytest.approx(max(np.linalg.norm(w @ w.T) for w in ws))
    half = an.sgd_imbalance_scale(rank2_point, problem, lr / 2, weight_decay)                 # of order η/γ
    assert half["lower"] == pytest.approx(sc["lower"] / 2 * (1 - lr * weight_decay) / (1 - lr * weight_decay / 2),
                                          rel=1e-12)
    with pytest.raises(ValueError):
        an.sgd_imbalance_scale(rank2_point, problem, 0.3, 0.0)


def test_small_step_sgd_imbalance_matches_the_one_step_law_and_a_wrong_law_fails(rank2_point):
    problem = rank_jumps.epsilon_completion(0.2)
    res = rj.check_sgd_imbalance(rank2_point, problem, 0.027)
    assert res.passed, res
    for row in res.details["rows"]:
        assert row["lower"] <= row["measured_mean"] <= row["upper"]
        assert row["measured_max"] < 2.0 * row["upper"]

    def doubled(*args):                       # e.g. 1 − c ≈ 2ηγ used for 1 − c² ≈ 4ηγ: twice too much imbalance
        sc = an.sgd_imbalance_scale(*args)
        return {**sc, "lower": 2 * sc["lower"], "upper": 2 * sc["upper"]}

    assert not rj.check_sgd_imbalance(rank2_point, problem, 0.027, scale=doubled).passed


def test_each_layer_decays_by_the_weight_decay_factor_under_forced_sampling():
    import dataclasses

    m = rank_jumps.mechanism()
    res = rj.check_layer_decay(m.forced)
    assert res.passed, res
    p = np.array(res.details["exponents"])
    assert np.all(np.abs(p[1:] - 1) < 1e-4) and 1.0 < p[0] < 1.05     # W_2..W_L at the rate (a fit), W_1 faster
    bad = m.forced.layer_s2.copy()
    bad[:, :, 2] *= 1.0005 ** m.forced.steps[None, :]                 # one layer decaying more slowly
    assert not rj.check_layer_decay(dataclasses.replace(m.forced, layer_s2=bad)).passed
    with pytest.raises(ValueError):
        dataclasses.replace(m.forced, layer_s2=None).layer_decay_exponents()


def test_smallest_B_and_the_displayed_names_of_the_criterion():
    crit = dln.network.BrCriterion(C=50.0, eps1=1.5, alpha=0.2)
    assert (crit.R, crit.eps_balance, crit.eps_rank) == (50.0, 1.5, 0.2)
    records = np.array([[[False, False, True], [False, True, True], [False, False, False], [True, True, True]]])
    np.testing.assert_array_equal(dln.network.smallest_B(records), [[2, 1, -1, 0]])
    p2, _ = rank_jumps.start_minimum()
    assert dln.network.smallest_B(np.array([[rank_jumps.in_B(p2, r)[0] for r in range(3)]]))[0] == 2


def test_the_notebooks_jump_statistics_on_the_real_runs():
    """§2 and §6 of Notebook 04: the default ensemble's waiting times pass the memoryless test, and at ε = 0.1 the
    hot phase gives no jump in 32 runs (bound ≈ 0.089 on the per-run jump probability)."""
    ens = rank_jumps.ensemble()
    assert rj.check_memoryless(ens.jump_steps, rank_jumps.EPSILON_EXPERIMENT.hot_steps).passed
    quiet = rank_jumps.ensemble(eps=0.1, n_runs=32)
    res = rj.check_no_jumps(quiet.jump_steps)
    assert res.passed and res.details["jump_probability_upper_bound"] == pytest.approx(0.0894, abs=1e-3)
