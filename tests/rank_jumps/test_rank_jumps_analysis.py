"""symsgd_core.rank_jumps: closed forms, noise split by direction, perturbations, experiments, summaries, checks."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symsgd_core import dln, rank_jumps

EPS = 0.2


@pytest.fixture(scope="module")
def problem():
    return rank_jumps.epsilon_completion(EPS)


@pytest.fixture(scope="module")
def rank_one_point(problem):
    """An exactly balanced rank-1 point (not a minimum): a balanced factorisation of a rank-1 matrix."""
    arch = rank_jumps.make_architecture((2, 2), 4, 5)
    return dln.network.balanced_factorisation(np.outer([1.0, 0.7], [0.9, 0.3]), arch, seed=3)


# -- closed forms -------------------------------------------------------------------------------
def test_induced_penalty_closed_forms():
    """``L Σ s_k^{2/L}`` against facts that need no SVD: L = 1 is ‖A‖_F²; L = 2 is twice the nuclear norm, for a
    2×2 matrix ``2 sqrt(‖A‖_F² + 2|det A|)``; a diagonal A rotated on both sides has singular values |a_ii|."""
    A = np.array([[2.0, 0.3], [0.1, 0.5]])
    fro2, det = float(np.sum(A * A)), float(np.linalg.det(A))
    tol = 64 * np.finfo(float).eps                 # a few roundings of the SVD and the sum (64·eps, relative)
    assert dln.network.induced_penalty(A, 1) == pytest.approx(fro2, rel=tol)
    assert dln.network.induced_penalty(A, 2) == pytest.approx(2 * np.sqrt(fro2 + 2 * abs(det)), rel=tol)
    c, s = np.cos(0.7), np.sin(0.7)
    Q = np.array([[c, -s], [s, c]])
    d = np.array([1.7, -0.2])
    for L in (1, 2, 3, 5):
        expected = L * float(np.sum(np.abs(d) ** (2.0 / L)))
        assert dln.network.induced_penalty(Q @ np.diag(d) @ Q.T, L) == pytest.approx(expected, rel=tol)
        np.testing.assert_allclose(rank_jumps.analysis.schatten_penalty(np.abs(d), L), L * np.abs(d) ** (2.0 / L),
                                   rtol=0)
    batch = np.stack([A, np.diag(d)])
    np.testing.assert_allclose(dln.network.induced_penalty(batch, 3),
                               [dln.network.induced_penalty(A, 3), 3 * float(np.sum(np.abs(d) ** (2 / 3)))],
                               rtol=tol)


def test_closed_forms_validate_arguments():
    with pytest.raises(ValueError, match="s must be >= 0"):
        rank_jumps.analysis.schatten_penalty([-1.0], 3)
    with pytest.raises(ValueError, match="depth"):
        rank_jumps.analysis.schatten_penalty([1.0], 0)
    with pytest.raises(ValueError, match="weight_decay"):
        rank_jumps.analysis.barrier_width(3, 0.0, 1.0)
    with pytest.raises(ValueError, match="depth"):
        rank_jumps.basin_radius(2, 0.1, 1.0)
    with pytest.raises(ValueError, match="delta"):
        rank_jumps.analysis.new_direction_cost([-0.1], 3, 0.1, 0.1)


@settings(max_examples=40, deadline=None)
@given(L=st.integers(3, 8), weight_decay=st.floats(1e-3, 1.0), g=st.floats(1e-2, 10.0))
def test_barrier_width_is_the_positive_root(L, weight_decay, g):
    d_star = rank_jumps.analysis.barrier_width(L, weight_decay, g)
    assert d_star > 0
    assert abs(rank_jumps.analysis.new_direction_cost([d_star], L, weight_decay, g)[0]) <= 1e-9 * max(1.0, g * d_star)
    inside = rank_jumps.analysis.new_direction_cost(d_star * np.array([0.1, 0.5, 0.9]), L, weight_decay, g)
    outside = rank_jumps.analysis.new_direction_cost(d_star * np.array([1.1, 2.0]), L, weight_decay, g)
    assert np.all(inside > 0) and np.all(outside < 0)


def test_barrier_width_depth_two_and_one():
    assert rank_jumps.analysis.barrier_width(2, 0.1, 0.5) == 0.0
    assert rank_jumps.analysis.barrier_width(2, 0.5, 0.5) == np.inf
    assert rank_jumps.analysis.barrier_width(1, 0.1, 0.5) == 0.0


@pytest.mark.parametrize("L, weight_decay, expected", [(2, 0.5, False), (2, 1.5, True), (3, 1e-3, True),
                                                      (6, 1e-3, True), (1, 0.1, False)])
def test_origin_trap_agrees_with_finite_differences(L, weight_decay, expected):
    assert rank_jumps.analysis.origin_is_local_min(L, weight_decay) is expected
    h = 1e-3
    a = np.array([-h, 0.0, h])
    f = rank_jumps.analysis.scalar_chain_loss(a, L, weight_decay)
    is_min = bool(f[0] > f[1] and f[2] > f[1])
    assert is_min is expected


def test_basin_radius_formula_and_no_slope():
    assert rank_jumps.basin_radius(4, 0.027, 0.17) == pytest.approx((2 * 0.027 / 0.17) ** 0.5, rel=1e-15)
    assert rank_jumps.basin_radius(3, 0.01, -0.5) == pytest.approx(0.04, rel=1e-14)
    assert rank_jumps.basin_radius(4, 0.1, 0.0) == np.inf


def test_basin_boundary_brackets_the_edge():
    alphas = np.array([0.4, 0.1, 0.2, 0.8, 1.6])
    ranks = np.array([1, 1, 1, 2, 1])  # the largest push lands back at rank 1: ignored above the edge
    assert rank_jumps.analysis.basin_boundary(alphas, ranks) == (0.4, 0.8)
    assert np.isnan(rank_jumps.analysis.basin_boundary(alphas, np.full(5, 1))[1])
    assert np.isnan(rank_jumps.analysis.basin_boundary(alphas, np.full(5, 2))[0])
    with pytest.raises(ValueError, match="shape"):
        rank_jumps.analysis.basin_boundary(alphas, ranks[:3])


# -- noise split by direction -------------------------------------------------------------------
@pytest.mark.parametrize("by", dln.noise.GRADIENT_ROUTES)
def test_per_entry_gradients_average_to_the_full_gradient(problem, rank_one_point, by):
    g = dln.noise.per_entry_gradients(rank_one_point.flat, rank_one_point.arch, problem, by=by)[0]
    full = rank_jumps.gradient(rank_one_point, problem, 0.0).flat[0]
    assert g.shape == (problem.n_observed, rank_one_point.arch.n_params)
    assert np.allclose(g.mean(axis=0), full, rtol=1e-12, atol=1e-14)


def test_per_entry_gradient_routes_agree_to_round_off(problem, rank_one_point):
    theta = rank_one_point.flat + 0.1 * np.random.default_rng(1).standard_normal((3, rank_one_point.flat.shape[1]))
    a, b = (dln.noise.per_entry_gradients(theta, rank_one_point.arch, problem, by=by) for by in ("products", "masks"))
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14 * np.abs(a).max())
    with pytest.raises(ValueError, match="by"):
        dln.noise.per_entry_gradients(theta, rank_one_point.arch, problem, by="finite_differences")


@pytest.mark.parametrize("by", dln.noise.GRADIENT_ROUTES)
def test_per_entry_gradient_matches_finite_differences(problem, rank_one_point, by):
    g = dln.noise.per_entry_gradients(rank_one_point.flat, rank_one_point.arch, problem, by=by)[0][2]  # entry (1, 1)
    rng = np.random.default_rng(0)
    v = rng.normal(size=g.size)
    h = 1e-6

    def entry_loss(flat):
        A = dln.network.end_to_end(rank_jumps.Params(rank_one_point.arch, flat[None]))[0]
        return (A[1, 1] - problem.target[1, 1]) ** 2

    x = rank_one_point.flat[0]
    fd = (entry_loss(x + h * v) - entry_loss(x - h * v)) / (2 * h)
    assert fd == pytest.approx(g @ v, rel=1e-6)


def test_noise_covariance_matches_the_engine_temperature(problem, rank_one_point):
    C = dln.noise.sgd_noise_covariance(rank_one_point, problem)
    assert np.allclose(C, C.T)
    assert np.linalg.eigvalsh(C).min() > -1e-12 * np.trace(C)
    lr = 0.3
    tau = dln.noise.matched_langevin_temperature(rank_one_point, problem, lr, 0.01)[0]
    assert tau == pytest.approx(lr * np.trace(C) / (2 * rank_one_point.arch.n_params), rel=1e-12)


def test_rank_raising_basis_is_orthonormal_with_the_right_dimension(rank_one_point):
    raising, keeping = dln.noise.rank_raising_basis(rank_one_point, 1)
    P = rank_one_point.arch.n_params
    expected = sum((a - 1) * (b - 1) for a, b in rank_one_point.arch.layer_shapes)
    assert raising.shape == (P, expected) and keeping.shape == (P, P - expected)
    Q = np.concatenate([raising, keeping], axis=1)
    assert np.allclose(Q.T @ Q, np.eye(P), atol=1e-12)


def test_rank_raising_directions_raise_a_layer_rank(rank_one_point):
    raising, keeping = dln.noise.rank_raising_basis(rank_one_point, 1)
    h = 1e-4
    up = rank_jumps.Params(rank_one_point.arch, rank_one_point.flat + h * raising[:, 0])
    flat = rank_jumps.Params(rank_one_point.arch, rank_one_point.flat + h * keeping[:, -1])
    assert dln.network.layer_singular_values(up)[0, :, 1].max() > 0.5 * h
    assert dln.network.layer_singular_values(flat)[0, :, 1].max() < 1e-6  # second order only: O(h²)


def test_noise_has_no_raising_component_at_a_rank_one_point(problem, rank_one_point):
    spec = dln.noise.noise_spectrum_by_direction(rank_one_point, problem, 1, lr=0.3)
    check = rank_jumps.checks.check_raising_noise(spec, rank_one_point.arch.n_params)
    assert check.passed, check
    assert spec["trace_total"] > 0 and spec["keeping"].max() > 1e-6


def test_raising_noise_check_fails_at_a_rank_two_point(problem):
    """Broken input: at a rank-2 point, directions 'raising rank 1 → 2' do carry SGD noise."""
    p2 = rank_jumps.phase0_minima(eps=EPS, n_runs=1)
    spec = dln.noise.noise_spectrum_by_direction(p2, problem, 1, lr=0.3)
    assert not rank_jumps.checks.check_raising_noise(spec, p2.arch.n_params).passed


# -- perturbations and the rank-1 minimum -------------------------------------------------------
def test_rank_one_minimum_is_rank_one_and_stationary(problem):
    p1 = rank_jumps.rank_one_minimum(EPS, weight_decay=0.027)
    sv = rank_jumps.singular_values(p1)[0]
    assert sv[1] < 1e-12 < sv[0]
    grad = rank_jumps.gradient(p1, problem, 0.027).flat[0]
    assert np.linalg.norm(grad) < 1e-6
    fresh = rank_jumps.rank_one_minimum(EPS, weight_decay=0.027)
    assert fresh is not rank_jumps.rank_one_minimum(EPS, weight_decay=0.027)  # fresh copies


def test_perturbation_adds_alpha_to_every_layer_and_alpha_to_the_L_in_A(problem):
    p1 = rank_jumps.rank_one_minimum(EPS, weight_decay=0.027)
    alpha = 0.3
    pp = rank_jumps.analysis.perturb_new_direction(p1, problem, alpha, 1)
    lsv = dln.network.layer_singular_values(pp)[0]
    assert np.allclose(lsv[:, 1], alpha, rtol=1e-8)
    assert rank_jumps.singular_values(pp)[0, 1] == pytest.approx(alpha**4, rel=1e-6)
    assert pp.norm_sq()[0] == pytest.approx(p1.norm_sq()[0] + 4 * alpha**2, rel=1e-10)
    # the sign is the descent one: the fit improves to first order
    small = rank_jumps.analysis.perturb_new_direction(p1, problem, 0.05, 1)
    e2e = dln.network.end_to_end
    assert problem.fit_loss(e2e(small))[0] < problem.fit_loss(e2e(p1))[0]


def test_new_direction_needs_room():
    arch = rank_jumps.make_architecture((2, 2), 3, 2)
    p = dln.network.balanced_factorisation(np.diag([1.0, 0.5]), arch)
    with pytest.raises(ValueError, match="orthogonal"):
        rank_jumps.analysis.new_direction(p, 2)


# -- forced sampling ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def forced(problem):
    p0 = rank_jumps.phase0_minima(eps=EPS, n_runs=2)
    return rank_jumps.experiments.forced_row_run(p0, problem, [0], 2000, 0.3, 0.027, seed=1, n_records=10)


def test_forced_row_decays_exactly(forced):
    assert forced.unsampled_rows.tolist() == [1]
    assert forced.row_norms.shape == (2, 11, 1)
    check = rank_jumps.checks.check_exact_decay(forced, 4)
    assert check.passed, check
    assert check.details["records_compared"] == 22


def test_exact_decay_check_fails_for_a_wrong_factor(forced):
    """Broken formula: a law with 1 − ηγ (a ½ in the weight decay) must fail the check."""
    import dataclasses

    wrong = dataclasses.replace(forced, weight_decay=forced.weight_decay / 2)
    assert not rank_jumps.checks.check_exact_decay(wrong, 4).passed


def test_exact_decay_check_fails_when_nothing_was_compared(forced):
    """``max_relative_error`` returned 0.0 when no record was comparable, so the claim passed with
    nothing measured. Now the error is NaN and the check fails."""
    import dataclasses

    flushed = dataclasses.replace(forced, row_min_abs=np.zeros_like(forced.row_min_abs))  # below any threshold
    assert np.isnan(flushed.max_relative_error(dln.stepping.flush_threshold(4)))
    check = rank_jumps.checks.check_exact_decay(flushed, 4)
    assert not check.passed and check.details["records_compared"] == 0


def test_forced_run_validates(problem):
    p0 = rank_jumps.phase0_minima(eps=EPS, n_runs=1)
    with pytest.raises(ValueError, match="n_records"):
        rank_jumps.experiments.forced_row_run(p0, problem, [0], 10, 0.3, 0.027, n_records=20)


# -- summaries ----------------------------------------------------------------------------------
def test_rank_transitions_and_stay_fraction():
    rank = np.array([[2, 2, 1, 1, 1], [2, 1, 2, 1, 2], [2, 2, 2, -1, -1]])
    down, up = rank_jumps.analysis.rank_transitions(rank)
    assert down.tolist() == [1, 2, 0] and up.tolist() == [0, 2, 0]
    stay = rank_jumps.analysis.fraction_low_rank_after_first_visit(rank)
    assert stay[0] == 1.0 and stay[1] == pytest.approx(0.5) and np.isnan(stay[2])


def test_exponential_waiting_time_recovers_the_mean():
    rng = np.random.default_rng(0)
    tau, budget = 2000.0, 5000
    times = rng.exponential(tau, size=4000)
    js = np.where(times < budget, times, -1)
    est, se = rank_jumps.analysis.exponential_waiting_time(js, budget)
    assert abs(est - tau) <= 4 * se
    assert rank_jumps.analysis.exponential_waiting_time([-1, -1], 10) == (np.inf, np.inf)


def test_jump_histogram_counts_the_jumps_and_the_exponential_law_sums_to_the_runs():
    js = np.array([-1, 0, 50, 99, 100, 1200, -1])  # two runs never jumped
    centres, counts, width = rank_jumps.analysis.jump_histogram(js, 1200, n_bins=12)
    assert width == 100 and centres[0] == 50 and centres[-1] == 1150
    np.testing.assert_array_equal(counts, [3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])  # the budget itself is in the last
    # per bin of the histogram, the exponential law's expected counts sum to the runs (over a long enough time)
    t = np.arange(50, 200_000, 100.0)
    law = rank_jumps.analysis.exponential_counts(t, 8, 100.0, 2000.0)
    assert law.sum() == pytest.approx(8, rel=0.01) and law[0] == pytest.approx(8 * 100 / 2000 * np.exp(-50 / 2000))


def test_jump_durations_on_a_synthetic_record():
    steps = np.arange(0, 1000, 100)
    s2 = np.array([[0.3, 0.3, 0.3, 0.1, 1e-4, 1e-16, 1e-16, 1e-16, 1e-16, 1e-16],
                   [0.3] * 10])
    res = SimpleNamespace(steps=steps, singular_values=np.stack([np.ones_like(s2), s2], axis=-1),
                          settings={"rank_tol": 1e-3})
    assert rank_jumps.analysis.jump_durations(res).tolist() == [200, -1]


def _fake(rank, *, diverged=None):
    """A stand-in for rank_jumps.RunResult with the attributes experiments.jump_outcome / check_no_returns read."""
    rank = np.asarray(rank)
    R, K = rank.shape
    steps = np.arange(K) * 100
    res = SimpleNamespace(rank=rank, steps=steps, n_runs=R, final_rank=rank[:, -1],
                          diverged=np.zeros(R, bool) if diverged is None else np.asarray(diverged),
                          diverged_step=np.full(R, 50), collapsed=rank[:, -1] == 0)
    eff = np.where(rank < 0, 9, rank)
    res.returned_up = np.any(eff[:, 1:] > np.minimum.accumulate(eff, axis=1)[:, :-1], axis=1)

    def jump_step(to_rank):
        hit = (rank >= 0) & (rank <= to_rank)
        return np.where(hit.any(axis=1), steps[np.argmax(hit, axis=1)], -1)

    res.jump_step = jump_step
    return res


def test_no_returns_check_counts_exactly():
    assert rank_jumps.checks.check_no_returns(_fake([[2, 1, 1], [2, 2, 1]])).passed
    failing = rank_jumps.checks.check_no_returns(_fake([[2, 1, 2], [2, 2, 1]]))
    assert not failing.passed and failing.measured == 1


def test_balanced_norm_check_passes_and_fails_for_a_wrong_formula():
    A = np.array([[1.0, 0.2], [0.3, 1.0]])
    assert rank_jumps.check_balanced_norm(A, 4).passed
    def nuclear_like(M, L):  # exponent 1/L instead of 2/L
        return L * np.sum(np.linalg.svd(M, compute_uv=False) ** (1 / L))

    wrong = rank_jumps.check_balanced_norm(A, 4, penalty=nuclear_like)
    assert not wrong.passed


def test_minima_losses_order_depends_on_eps():
    hi = rank_jumps.minima_losses(0.2, 0.01)
    lo = rank_jumps.minima_losses(0.1, 0.01)
    assert hi["rank1"] < hi["rank2"] and lo["rank2"] < lo["rank1"]
    assert np.isnan(rank_jumps.minima_losses(0.3, 0.027)["rank2"])  # GD finds only rank 1 there


def _penalty_mp(x, eps, L):
    """L Σ s_k^{2/L} of [[1, ε], [x, 1]] at 40 digits, from the closed form s₁,₂² = (F ± sqrt(F² − 4 det²))/2."""
    import mpmath as mp

    F = 2 + eps**2 + x**2
    det = 1 - eps * x
    r = mp.sqrt(F**2 - 4 * det**2)
    return L * (((F + r) / 2) ** (mp.mpf(1) / L) + ((F - r) / 2) ** (mp.mpf(1) / L))


@pytest.mark.parametrize("eps, x_guess, rank", [(0.1, 0.3, 2), (0.2, 0.64, 2), (0.25, 0.84, 2), (0.3, 1.08, 1)])
def test_min_norm_completion_finds_the_rank2_local_minimum(eps, x_guess, rank):
    """Notebook 04's ε (and the exercise's 0.25) at L = 4. At ε = 0.3 the rank-2 local minimum x = 1.0847 (penalty
    7.7883) was returned as NaN: the lowest grid value lay on the cusp's flank, not at a rank-2 minimum.

    Reference: the root of the penalty's slope at 40 digits (mpmath, closed-form singular values). Tolerances: x
    within brentq's ``xtol + 4·eps·|x|`` plus the slope's float round-off over the curvature (64·eps·Σ|terms| /
    f''); the penalty within 64·eps per term of the two-term sum (its error from Δx is second order, < 1e-20).
    """
    import mpmath as mp

    from symsgd_core.rank_jumps.analysis import MIN_NORM_XTOL, completion_penalty_slope

    mp.mp.dps = 40
    L = 4
    e = mp.mpf(eps)
    x_ref = mp.findroot(lambda x: mp.diff(lambda y: _penalty_mp(y, e, L), x), mp.mpf(x_guess))
    p_ref = float(_penalty_mp(x_ref, e, L))
    curv = float(mp.diff(lambda y: _penalty_mp(y, e, L), x_ref, 2))
    m = rank_jumps.min_norm_completion(eps, L)
    f64 = np.finfo(float).eps
    s = np.linalg.svd(np.array([[1.0, eps], [float(x_ref), 1.0]]), compute_uv=False)
    slope_terms = 2 * np.sum(s ** (2 / L - 1))
    tol_x = MIN_NORM_XTOL + 4 * f64 * float(x_ref) + 64 * f64 * slope_terms / curv
    assert curv > 0 and abs(m["x_rank2"] - float(x_ref)) <= tol_x, (m, x_ref, tol_x)
    assert abs(m["penalty_rank2"] - p_ref) <= 64 * 2 * f64 * p_ref, (m, p_ref)
    assert abs(float(completion_penalty_slope(m["x_rank2"], eps, L))) <= 64 * f64 * slope_terms + curv * tol_x
    assert m["rank"] == rank and (m["penalty_rank2"] < m["penalty_rank1"]) == (rank == 2)


def test_min_norm_completion_at_eps_03_prints_the_rank2_minimum_not_the_cusp():
    m = rank_jumps.min_norm_completion(0.3, 4)  # notebook 04's ε = 0.3, depth 4
    assert f"{m['x_rank2']:.3f}" == "1.085" and f"{m['penalty_rank2']:.4f}" == "7.7883"
    assert m["rank"] == 1 and m["penalty_rank1"] < m["penalty_rank2"]  # the rank-1 completion is still the lowest
    # the cause: next to the cusp x = 1/ε the rank-2 branch dips below that minimum (it falls to the cusp's 7.62),
    # so the lowest grid value was the cusp's flank, and a search started there ran into the cusp
    step = 5 / 0.3 / 4000
    assert rank_jumps.analysis.completion_penalty(1 / 0.3 - 2 * step, 0.3, 4) < m["penalty_rank2"]
