"""Does SGD's SDE explode? (sde_noise.explosion): the bound's exponents, the reduced SDE, the transverse share,
the passage table, their checks and claims."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from symsgd_core import registered_checks
from symsgd_core.core.conventions import Z_MC
from symsgd_core.dln.network import Params
from symsgd_core.dln.noise import per_entry_gradients
from symsgd_core.dln.problems import gradient
from symsgd_core.rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from symsgd_core.rank_jumps.experiments import rank_one_minimum, start_minimum
from symsgd_core.sde_noise import checks as C
from symsgd_core.sde_noise import claims as CL
from symsgd_core.sde_noise import explosion as E

T, GAMMA = EXP.lr_hot, EXP.weight_decay_hot
PROBLEM = EXP.problem


@pytest.fixture(scope="module")
def rank1():
    return rank_one_minimum()


@pytest.fixture(scope="module")
def rank2():
    return start_minimum()[0]


def _explicit_c(theta: np.ndarray, arch) -> np.ndarray:
    """C(θ) formed as a P × P matrix, the definition (1/N)Σ g_k g_kᵀ − ḡḡᵀ."""
    g = per_entry_gradients(theta[None], arch, PROBLEM)[0]
    gbar = g.mean(axis=0)
    return g.T @ g / g.shape[0] - np.outer(gbar, gbar)


# ------------------------------------------------------------------------------------------------ the SDE's terms
def test_sde_terms_match_the_gradient_and_the_explicit_covariance(rank2):
    theta = 1.3 * rank2.flat[0] + 0.1 * np.random.default_rng(0).standard_normal(rank2.arch.n_params)
    t = E.sde_terms(theta[None], PROBLEM, temperature=T, weight_decay=GAMMA, arch=rank2.arch)
    grad = gradient(Params(rank2.arch, theta[None]), PROBLEM, GAMMA).flat[0]
    np.testing.assert_allclose(t["drift"][0], -grad, rtol=1e-12, atol=1e-12 * np.abs(grad).max())
    Cm = _explicit_c(theta, rank2.arch)
    phi = theta / np.linalg.norm(theta)
    assert t["tr_c"][0] == pytest.approx(np.trace(Cm), rel=1e-12)
    assert t["radial_c"][0] == pytest.approx(phi @ Cm @ phi, rel=1e-10)
    assert t["pull"][0] == pytest.approx(2 * theta @ grad, rel=1e-12)
    assert t["noise"][0] == pytest.approx(T * np.trace(Cm), rel=1e-12)


def test_sde_terms_refuse_bad_input(rank2):
    with pytest.raises(ValueError, match="architecture"):
        E.sde_terms(rank2.flat, PROBLEM)
    with pytest.raises(ValueError, match="direction"):
        E.sde_terms(np.zeros((1, rank2.arch.n_params)), PROBLEM, arch=rank2.arch)
    with pytest.raises(ValueError, match="finite"):
        E.sde_terms(np.full((1, rank2.arch.n_params), np.nan), PROBLEM, arch=rank2.arch)


# ------------------------------------------------------------------------------------------------ 1. the bound
@pytest.mark.parametrize("depth", [1, 2, 4])
def test_growth_exponents_are_2L_and_4L_minus_2(depth):
    for r in E.khasminskii_rays(depth=depth, n_random=2):
        assert r.expected[:2] == (2 * depth, 4 * depth - 2)
        assert r.exponent_error < 0.01, (depth, r.label, r.pull_exponent, r.noise_exponent)
        if depth > 1:
            assert abs(r.ratio_exponent - (4 * depth - 4)) < 0.01
        else:  # depth 1: the left side is negative (the pull wins at T = 0.3): the bound holds with K = 0
            assert np.all(r.ratio < 0) and r.ratio_exponent == 0


def test_ray_growth_is_the_polynomial_the_homogeneity_gives(rank1):
    """−2⟨θ, D⟩ = (4L/N) Σ r_k A_k + 4γ‖θ‖² exactly (Euler's relation ⟨θ, ∇A_k⟩ = L A_k)."""
    phi = E.direction(rank1)
    lam = np.array([3.0, 30.0])
    r = E.ray_growth(phi, rank1.arch, PROBLEM, scales=lam)
    rows, cols, vals = PROBLEM.entries
    L, N = rank1.arch.depth, PROBLEM.n_observed
    A = Params(rank1.arch, lam[:, None] * phi[None]).end_to_end()[:, rows, cols]
    expected = 4 * L / N * np.sum((A - vals) * A, axis=1) + 4 * GAMMA * lam**2
    np.testing.assert_allclose(r.pull, expected, rtol=1e-10)


def test_ray_growth_refuses_one_scale(rank1):
    with pytest.raises(ValueError, match="two"):
        E.ray_growth(E.direction(rank1), rank1.arch, PROBLEM, scales=[10.0])


# ------------------------------------------------------------------------------------------------ 2. the reduction
def test_reduced_coefficients_have_the_closed_form(rank1):
    """On the ray: b = −(2L/N) s^{L−1} Σ α_k r_k − 2γs, σ² = 4L²T s^{2L−2} Var_k(α_k r_k), r_k = s^L α_k − A*_k."""
    arch, L, N = rank1.arch, rank1.arch.depth, PROBLEM.n_observed
    phi = E.direction(rank1)
    s = np.array([0.5, 2.0, 7.0, 40.0])
    b, sig2 = E.reduced_coefficients(s, phi, arch, PROBLEM)
    rows, cols, vals = PROBLEM.entries
    alpha = Params(arch, phi[None]).end_to_end()[0][rows, cols]
    r = s[:, None] ** L * alpha[None] - vals[None]
    np.testing.assert_allclose(b, -(2 * L / N) * s ** (L - 1) * np.sum(alpha * r, axis=1) - 2 * GAMMA * s, rtol=1e-9)
    np.testing.assert_allclose(sig2, 4 * L * L * T * s ** (2 * L - 2) * np.var(alpha * r, axis=1), rtol=1e-8)
    b2, _ = E.reduced_coefficients(s, phi, arch, PROBLEM, extra_ito=2.0)
    np.testing.assert_allclose(b2 - b, sig2 / s, rtol=1e-12)
    ac = E.asymptotic_coefficients(phi, arch, PROBLEM)
    big = np.array([1e5])
    bb, ss = E.reduced_coefficients(big, phi, arch, PROBLEM)
    assert -bb[0] / big[0] ** (2 * L - 1) == pytest.approx(ac["a"], rel=1e-12)
    assert ss[0] / big[0] ** (4 * L - 2) == pytest.approx(ac["c2"], rel=1e-10)


def _analytic(monkeypatch, k: float):
    """Replace the model by b = −s⁷ + (k/2)σ²/s, σ² = s¹⁴: p'(s) = exp(−(s^{−6} − s_ref^{−6})/3)·(s/s_ref)^{−k}."""
    def fake(s, phi, arch, problem, *, temperature=T, weight_decay=GAMMA, extra_ito=0.0):
        s = np.asarray(s, dtype=float)
        sig2 = s**14
        return -(s**7) + 0.5 * extra_ito * sig2 / s, sig2
    monkeypatch.setattr(E, "reduced_coefficients", fake)

    def p_exact(s, s_ref):
        return integrate.quad(lambda u: math.exp(-(u**-6 - s_ref**-6) / 3) * (u / s_ref) ** -k, s_ref, s,
                              epsabs=0, epsrel=1e-13, limit=200)[0]
    return p_exact


@pytest.mark.parametrize("k", [0.0, 2.0])
def test_scale_function_matches_quad_within_its_error_bound(monkeypatch, rank1, k):
    p_exact = _analytic(monkeypatch, k)
    levels = (0.8, 1.0, 3.0, 100.0)
    sf = E.scale_function(levels, E.direction(rank1), rank1.arch, PROBLEM, extra_ito=k, per_decade=200)
    exact = np.array([p_exact(s, 0.8) for s in levels])
    assert sf.p[0] == 0 and np.all(np.abs(sf.p - exact) <= sf.error + 1e-12 * exact)
    assert np.all(sf.error[1:] < 5e-3 * exact[1:])  # the bound is a useful one, not a trivially large number


def test_scale_function_grows_like_s_on_the_model_and_is_bounded_with_a_share_above_one(rank1):
    phi, arch = E.direction(rank1), rank1.arch
    sf = E.scale_function((10.0, 1e2, 1e3, 1e4), phi, arch, PROBLEM)
    inc = np.diff(sf.p)
    assert inc[2] / inc[1] == pytest.approx(10.0, rel=1e-4)
    bounded = E.scale_function((10.0, 1e2, 1e3, 1e4), phi, arch, PROBLEM, extra_ito=2.0)
    inc = np.diff(bounded.p)
    assert inc[2] / inc[1] == pytest.approx(0.1, rel=1e-4)  # p' ~ s^{−2}: 10^{1−k}


def test_passage_probability_and_the_power_formula(rank1):
    phi, arch = E.direction(rank1), rank1.arch
    sf = E.scale_function((10.0, 20.0, 100.0), phi, arch, PROBLEM)
    P, err = E.passage_probability(sf, 20.0, 10.0, 100.0)
    tau, _ = E.slope_variation(10.0, 100.0, phi, arch, PROBLEM)
    assert abs(P - E.power_passage(20.0, 10.0, 100.0)) <= E.power_passage(20.0, 10.0, 100.0) * math.expm1(tau) + err
    assert E.power_passage(20.0, 10.0, 100.0, beta=-1.0) == pytest.approx((1 / 10 - 1 / 20) / (1 / 10 - 1 / 100))
    assert E.power_passage(20.0, 10.0, 100.0, beta=1e-9) == pytest.approx(E.power_passage(20.0, 10.0, 100.0, 0.0))
    with pytest.raises(ValueError, match="a < s0 < b"):
        E.passage_probability(sf, 100.0, 10.0, 20.0)
    with pytest.raises(ValueError, match="levels"):
        sf.at(50.0)


# ------------------------------------------------------------------------------------------------ 3. the correction
def _gauss_hermite_expectation(func, N: int, n: int = 12) -> float:
    x, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / w.sum()
    grids = np.meshgrid(*([x] * N), indexing="ij")
    weights = np.prod(np.meshgrid(*([w] * N), indexing="ij"), axis=0).ravel()
    xi = np.stack([g.ravel() for g in grids], axis=1)
    return float(weights @ func(xi))


@pytest.mark.parametrize("scale", [1.5, 4.0])
def test_log_norm_drift_is_the_generator_of_log_s(rank1, scale):
    """E[log‖θ_h‖] − log‖θ‖ = h·(QV rate)·μ + O(h²) for one exact Gaussian step (3-D Gauss–Hermite, exact here to
    round-off); Richardson over h and h/2 removes the O(h) term. The lead's formula must match; a formula without
    the factor 2 on φᵀCφ must not."""
    theta = scale * rank1.flat[0]
    arch, N = rank1.arch, PROBLEM.n_observed
    g = per_entry_gradients(theta[None], arch, PROBLEM)[0]
    G = (g - g.mean(axis=0)) / math.sqrt(N)
    t = E.sde_terms(theta[None], PROBLEM, arch=arch)
    s, rc = t["s"][0], t["radial_c"][0]
    rate = T * rc / s**2

    def step_mean(h):
        return _gauss_hermite_expectation(
            lambda xi: np.log(np.linalg.norm(theta + h * t["drift"][0] + math.sqrt(T * h) * xi @ G, axis=1)), N)

    h = 1e-4 / rate
    e1, e2 = step_mean(h) - math.log(s), step_mean(h / 2) - math.log(s)
    extrapolated = (4 * e2 - e1) / h  # 2·e(h/2)/(h/2) − e(h)/h: the O(h) term cancels
    mu = E.log_norm_drift(theta[None], PROBLEM, arch=arch)[0]
    tol = abs(e1 - 2 * e2) / h + 1e-9 * abs(extrapolated)
    assert abs(extrapolated - rate * mu) <= tol
    wrong = (t["tr_c"][0] - rc) / (2 * rc) + t["radial_drift"][0] * s / (T * rc)
    assert abs(extrapolated - rate * wrong) > 10 * tol


def test_transverse_share_is_f_of_the_explicit_covariance_and_degree_zero(rank1):
    theta = 20.0 * rank1.flat[0]
    Cm = _explicit_c(theta, rank1.arch)
    phi = theta / np.linalg.norm(theta)
    f = E.transverse_share(theta[None], PROBLEM, arch=rank1.arch)[0]
    assert f == pytest.approx(np.trace(Cm) / (phi @ Cm @ phi) - 1, rel=1e-9)
    far = E.transverse_share(np.array([1e3, 1e4])[:, None] * rank1.flat, PROBLEM, arch=rank1.arch)
    assert far[0] == pytest.approx(far[1], rel=1e-9) and np.all(far >= 0)
    with pytest.raises(ValueError, match="architecture"):
        E.transverse_share(theta[None], PROBLEM)


def test_log_norm_drift_tends_to_half_of_f_minus_one(rank1):
    far = 1e3 * rank1.flat
    mu = E.log_norm_drift(far, PROBLEM, arch=rank1.arch)
    f = E.transverse_share(far, PROBLEM, arch=rank1.arch)
    assert mu[0] == pytest.approx((f[0] - 1) / 2, rel=1e-9)


def test_transverse_share_rows_and_the_subspace():
    rows = E.transverse_share_rows(n_random=1)
    assert len(rows) == 3 * len(E.SHARE_SCALES)
    by = {(r["label"], r["scale"]): r["f"] for r in rows}
    assert by[("rank-1 minimum", 100.0)] > 1 and by[("rank-2 minimum", 100.0)] > 1
    assert all(r["beta"] == pytest.approx(1 - r["f"]) for r in rows)
    f = E.rank_one_subspace_shares(n=200)
    assert f.shape == (200,) and np.all(f >= 0) and f.min() < 1 < np.median(f)


# ------------------------------------------------------------------------------------------------ 5. passages
def _heights(law: str, n: int, seed: int, a: float = 10.0, h0: float = 15.0, beta: float = 1.0) -> np.ndarray:
    """Exact excursion maxima of a diffusion with scale s^β from h0 (< s₀) until it hits a: P(M ≥ x) = (h0^β −
    a^β)/(x^β − a^β), sampled by inversion; ``"wrong"``: P(M ≥ x) = sqrt of the martingale's."""
    u = np.random.default_rng(seed).uniform(size=n)
    if law == "wrong":
        u = u**2
    return (a**beta + (h0**beta - a**beta) / u) ** (1 / beta)


LEVELS = (30.0, 50.0, 100.0, 300.0)


def test_passage_table_passes_on_the_law_it_predicts_and_fails_on_a_wrong_one():
    good = E.passage_table(_heights("martingale", 40_000, 1), 20.0, 10.0, LEVELS, z=Z_MC)
    assert all(r.martingale_inside for r in good)
    assert all(r.martingale == pytest.approx((20 - 10) / (r.level - 10)) for r in good)
    assert good[0].n > 1000 and all(r.n == good[0].n for r in good)
    bad = E.passage_table(_heights("wrong", 40_000, 1), 20.0, 10.0, LEVELS, z=Z_MC)
    assert not any(r.martingale_inside for r in bad)


def test_passage_table_corrected_prediction():
    h = _heights("power", 40_000, 2, beta=0.5)
    rows = E.passage_table(h, 20.0, 10.0, LEVELS, beta=0.5, z=Z_MC)
    assert all(r.corrected_inside for r in rows) and not all(r.martingale_inside for r in rows)


def test_passage_table_counts_open_excursions_only_where_decided():
    h = np.array([25.0, 35.0, 60.0, 12.0])
    rows = E.passage_table(h, 20.0, 10.0, (30.0, 50.0), open_=np.array([True, True, False, False]))
    assert (rows[0].n, rows[0].k) == (2, 2)  # the open 25 is undecided at 30; the open 35 reached it
    assert (rows[1].n, rows[1].k) == (1, 1)  # at 50 only the closed 60 counts
    with pytest.raises(ValueError, match="above s0"):
        E.passage_table(h, 20.0, 10.0, (15.0,))
    with pytest.raises(ValueError, match="finite"):
        E.passage_table([np.inf], 20.0, 10.0, (30.0,))


# ------------------------------------------------------------------------------------------------ 4. checks, claims
def test_the_explosion_checks_are_registered():
    assert {"sde_noise.khasminskii_fails", "sde_noise.feller_reduction"} <= set(registered_checks())


@pytest.mark.parametrize("check, broken", [(C.check_khasminskii_fails, "depth1"),
                                           (C.check_feller_reduction, "share_above_one")])
def test_explosion_checks_pass_and_fail_on_their_broken_input(check, broken):
    good = check()
    assert all(r.passed for r in good), good
    assert all(np.isfinite(r.measured) and r.tolerance_source for r in good)
    bad = check(broken=broken)
    assert not all(r.passed for r in bad), bad
    with pytest.raises(ValueError, match="broken"):
        check(broken="nonsense")


def test_the_feller_check_fails_both_rows_on_a_bounded_scale_function():
    bad = C.check_feller_reduction(broken="share_above_one")
    assert not any(r.passed for r in bad)
    assert bad[0].details["rho"] == pytest.approx(0.1, rel=1e-3)


def test_explosion_claims_pass_on_the_model_and_fail_on_broken_inputs():
    rays, rows = E.khasminskii_rays(n_random=1), E.transverse_share_rows(n_random=1)
    table = E.passage_table(_heights("martingale", 20_000, 3), 20.0, 10.0, LEVELS, z=Z_MC)
    good = CL.explosion_claims(rays, rows, table)
    assert all(r.passed for r in good) and len(good) == 4
    bad_rays = CL.explosion_claims(E.khasminskii_rays(depth=1, n_random=1), rows)
    assert not bad_rays[1].passed
    low = [dict(r, f=0.5) for r in rows]
    assert not CL.explosion_claims(rays, low)[2].passed
    wrong = E.passage_table(_heights("wrong", 20_000, 3), 20.0, 10.0, LEVELS, z=Z_MC)
    assert not CL.explosion_claims(rays, rows, wrong)[3].passed
    assert not CL.explosion_claims([], [])[0].passed
    assert "explosion_claims" in CL.__all__


# ------------------------------------------------------------------------------------------------ at infinity
def test_drift_at_infinity_starts_with_the_share_of_its_start_and_is_reproducible(rank1):
    one = E.drift_at_infinity(n_paths=3, n_steps=1, burn_in=0)
    far = E.transverse_share(1e5 * rank1.flat, PROBLEM, arch=rank1.arch)[0]
    assert one.f_median_end == pytest.approx(far, rel=1e-6)  # C∞ (target dropped) is C at large norm
    a, b = E.drift_at_infinity(n_paths=4, n_steps=50, burn_in=10), E.drift_at_infinity(n_paths=4, n_steps=50,
                                                                                       burn_in=10)
    np.testing.assert_array_equal(a.log_norm, b.log_norm)
    assert a.f_eff == pytest.approx(1 + 2 * a.log_norm.sum() / a.qv.sum()) and a.beta_eff == 1 - a.f_eff
    assert np.all(a.qv > 0) and np.isfinite(a.f_se)
    with pytest.raises(ValueError, match="burn_in"):
        E.drift_at_infinity(n_steps=5, burn_in=5)


def test_drift_at_infinity_step_has_the_generator_drift(rank1):
    """One step's mean log increment is (f − 1)/2 per unit of quadratic variation: over many one-step paths from a
    start whose f is well above 1 (the rank-1 minimum's, 4.33), the estimate lies within Z_MC SE of the start's f
    (the step's O(ρ²) relative bias, about 1 % at ρ = 0.1, is a third of the SE)."""
    d = E.drift_at_infinity(n_paths=20_000, n_steps=1, burn_in=0, rho=0.1)
    f0 = E.transverse_share(1e5 * rank1.flat, PROBLEM, arch=rank1.arch)[0]
    assert abs(d.f_eff - f0) <= Z_MC * d.f_se, (d.f_eff, d.f_se, f0)
    assert d.f_se < 0.25 * abs(f0 - 1)  # the test can tell f0 from a share of 1


def test_the_share_at_infinity_claim_needs_f_eff_below_one_by_Z_MC_errors():
    rays, rows = E.khasminskii_rays(n_random=0), E.transverse_share_rows(n_random=0)

    def at(f, se):
        return E.DriftAtInfinity(np.zeros(2), np.ones(2), f, se, f, {})
    assert CL.explosion_claims(rays, rows, infinity=at(0.54, 0.06))[-1].passed
    assert not CL.explosion_claims(rays, rows, infinity=at(0.8, 0.06))[-1].passed  # 0.8 + 4·0.06 > 1
    assert not CL.explosion_claims(rays, rows, infinity=at(float("nan"), 0.06))[-1].passed
