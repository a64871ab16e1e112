"""Closed forms of SGD's stationary distribution for diagonal networks (symsgd_core.stationary.laws)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from symsgd_core.stationary.laws import (
    PHASE_CODES,
    DiagonalNetProblem,
    StationaryLaw,
    critical_temperature,
    log_density_depth0,
    log_density_depth1,
    mode_onset_temperature,
    most_likely_roots_depth1,
    most_likely_value_depth0,
    most_likely_value_depth1,
    phase_diagram,
    phase_grid,
    phase_of,
    tail_exponent,
    transitional_temperature,
    variance_depth0,
)
from symsgd_core.stationary.v_sde import v_space_coefficients

P11 = DiagonalNetProblem.gaussian(1.0, 1.0)


def test_gaussian_moments_match_the_engine():
    from symsgd_core.balance.data import GaussianData

    for k, s in ((1.0, 1.0), (1.7, 0.4), (-0.5, 2.0)):
        mine = DiagonalNetProblem.gaussian(k, s)
        theirs = DiagonalNetProblem.from_moments(GaussianData(k=k, sigma=s).moments())
        assert mine == theirs
        assert mine.delta == pytest.approx(2 * s * s)


def test_gaussian_moments_by_monte_carlo():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(2_000_000)
    y = 1.5 * x + 0.7 * rng.standard_normal(x.size)
    p = DiagonalNetProblem.gaussian(1.5, 0.7)
    x2, xy = x * x, x * y
    est = (x2.var(), np.cov(x2, xy)[0, 1], xy.var(), x2.mean(), xy.mean())
    for e, t in zip(est, (p.alpha1, p.alpha2, p.alpha3, p.beta1, p.beta2)):
        assert abs(e - t) < 0.03 * max(1.0, abs(t))


@pytest.mark.parametrize("kwargs, word", [(dict(k=1.0, sigma=0.0), "sigma"), (dict(k=float("nan")), "k"),
                                          (dict(weight_decay=-0.1), "weight_decay")])
def test_problem_validation(kwargs, word):
    with pytest.raises(ValueError, match=word):
        DiagonalNetProblem.gaussian(**kwargs)
    with pytest.raises(ValueError, match="Δ"):
        DiagonalNetProblem(1.0, 1.0, 1.0, 1.0, 1.0)


def test_the_data_layers_moments_are_accepted():
    """Given GaussianData().moments(), these raised a bare AttributeError (no weight_decay)."""
    from symsgd_core.balance.data import GaussianData

    m = GaussianData(k=1.0, sigma=1.0).moments()
    assert critical_temperature(m) == critical_temperature(P11)
    assert phase_of(0.15, m) == phase_of(0.15, P11) == "bimodal"
    assert transitional_temperature(m) == transitional_temperature(P11)
    assert most_likely_value_depth1(0.05, m) == most_likely_value_depth1(0.05, P11)
    assert StationaryLaw(m, 0.15, 1).mean == StationaryLaw(P11, 0.15, 1).mean
    for bad in ("k=1", None, 3.0):
        with pytest.raises(ValueError, match="DiagonalNetProblem or data moments"):
            critical_temperature(bad)


def test_law_validation():
    with pytest.raises(ValueError, match="temperature"):
        StationaryLaw(P11, 0.0, 1)
    with pytest.raises(ValueError, match="depth"):
        StationaryLaw(P11, 0.1, -1)
    with pytest.raises(ValueError, match="branch"):
        StationaryLaw(P11, 0.1, 1, branch=0)
    with pytest.raises(ValueError, match="weight decay"):
        StationaryLaw(P11.with_weight_decay(0.1), 0.1, 2)
    with pytest.raises(ValueError, match="problem"):
        StationaryLaw("k=1", 0.1, 1)


def test_critical_temperatures_with_weight_decay():
    assert critical_temperature(P11) == pytest.approx(1 / 3)
    p = DiagonalNetProblem.gaussian(1.0, 1.0, 0.2)
    assert critical_temperature(p) == pytest.approx(0.8 / 3)
    assert mode_onset_temperature(p) == pytest.approx(0.8 / 9)
    assert StationaryLaw(p, 0.27, 1).collapsed and not StationaryLaw(p, 0.26, 1).collapsed


def test_transitional_temperature_value_and_brute_force():
    assert transitional_temperature(P11) == pytest.approx((16 + math.sqrt(672)) / 208, rel=1e-12)
    for k, s, g in ((1.0, 0.5, 0.0), (1.0, 1.5, 0.1), (2.0, 1.0, 0.3), (1.0, 2.2, 0.0)):
        p = DiagonalNetProblem.gaussian(k, s, g)
        tc = critical_temperature(p)
        grid = np.linspace(tc / 3, tc, 4001)[1:-1]
        peak = np.array([len(most_likely_roots_depth1(t, p)) == 2 for t in grid])
        brute = grid[peak].max() if peak.any() else tc / 3
        assert abs(transitional_temperature(p) - brute) <= 2 * (grid[1] - grid[0])


def test_phases_in_order_and_grid_matches_phase_of():
    assert [phase_of(t, P11) for t in (0.05, 0.15, 0.25, 0.34)] == ["peaked", "bimodal", "collapsing", "dead"]
    rng = np.random.default_rng(0)
    sig, temps = np.sort(rng.uniform(0.1, 2.0, 15)), np.sort(rng.uniform(0.01, 0.6, 17))
    codes = phase_grid(1.0, sig, temps, 0.1)
    for i, t in enumerate(temps):
        for j, s in enumerate(sig):
            assert codes[i, j] == PHASE_CODES[phase_of(t, DiagonalNetProblem.gaussian(1.0, s, 0.1))]
    d = phase_diagram(1.0, np.array([0.5, 1.0]))
    assert np.all(d["T_c_over_3"] <= d["T_star"]) and np.all(d["T_star"] <= d["T_c"])


def test_closed_forms_match_the_tabulated_law():
    for p, T in ((P11, 0.15), (DiagonalNetProblem.gaussian(1.5, 0.5, 0.2), 0.1)):
        v = np.linspace(0.05, 4.0, 50)
        for depth, f in ((0, log_density_depth0), (1, log_density_depth1)):
            diff = StationaryLaw(p, T, depth).log_pdf(v) - f(v, T, p)
            assert np.ptp(diff) < 1e-12


@settings(max_examples=40, deadline=None)
@given(k=st.floats(0.2, 2.0), sigma=st.floats(0.2, 2.0), gamma=st.floats(0.0, 0.5), temp=st.floats(0.01, 0.6),
       v=st.floats(0.01, 8.0))
def test_closed_forms_solve_zero_flux_fokker_planck(k, sigma, gamma, temp, v):
    p = DiagonalNetProblem.gaussian(k, sigma, gamma)
    for depth, f in ((0, log_density_depth0), (1, log_density_depth1)):
        x = np.array([v * (1 if depth else -0.5)]) if depth == 0 and v > 4 else np.array([v])
        h = 1e-30
        lhs = np.imag(f(x + 1j * h, temp, p)) / h
        a, b2, db2 = v_space_coefficients(x, p, temp, depth)
        rhs = (2 * a - db2) / b2
        assert abs(lhs[0] - rhs[0]) <= 1e-9 * (1 + abs(rhs[0]) + 1 / temp)


def test_depth0_gaussian_normaliser_is_a_student_t():
    # Gaussian data make α₂β₁ − α₁β₂ = 0, so Eq. 12 is g^{−n}: a Student-t with a closed-form normaliser
    for T in (0.05, 0.2, 0.45):
        p = P11
        n = 1 + p.beta1 / (2 * p.alpha1 * T)
        c = p.delta / p.alpha1
        Z = math.sqrt(math.pi) * math.exp(special.gammaln(n - 0.5) - special.gammaln(n)) * c ** (0.5 - n) / math.sqrt(
            p.alpha1)
        m = p.alpha2 / p.alpha1
        assert StationaryLaw(p, T, 0).pdf(np.array([m]))[0] == pytest.approx(c ** (-n) / Z, rel=1e-10)


@pytest.mark.parametrize("depth, T", [(0, 0.15), (0, 0.4), (1, 0.05), (1, 0.15), (1, 0.32), (2, 0.15), (4, 0.1)])
def test_laws_integrate_to_one_with_quad(depth, T):
    law = StationaryLaw(P11, T, depth)
    if depth == 0:
        total = sum(integrate.quad(lambda v: law.pdf(np.array([v]))[0], a, b, limit=300)[0]
                    for a, b in ((-np.inf, -1), (-1, 3), (3, np.inf)))
    else:
        f = lambda s: math.exp(s + law.log_pdf(np.array([math.exp(s)]))[0])  # noqa: E731
        a = law._tail_rates(0)[0]
        lower = f(-40.0) / a if math.isfinite(a) else 0.0
        total = lower + integrate.quad(f, -40, 0, limit=400)[0] + integrate.quad(
            lambda v: law.pdf(np.array([v]))[0], 1, np.inf, limit=300)[0]
    assert total == pytest.approx(1.0, abs=1e-8)


def test_depth2_density_matches_an_independent_quadrature():
    T, D = 0.15, 2
    law = StationaryLaw(P11, T, D)
    e = 2 * D / (D + 1)

    def logp(v):
        inner = integrate.quad(lambda u: -(P11.beta1 * u - P11.beta2) / ((D + 1) * T * P11.g(u) * u**e)
                               + D / ((D + 1) * u), 1.0, v, limit=200)[0]
        return -math.log(4 * (D + 1) ** 2 * T * P11.g(v) * v ** (2 * e)) + inner

    for v in (0.03, 0.3, 2.0, 9.0):
        assert law.log_pdf(np.array([v]))[0] - law.log_pdf(np.array([1.0]))[0] == pytest.approx(logp(v) - logp(1.0),
                                                                                                abs=1e-8)


def test_depth0_moments_and_monotone_variance():
    for T in (0.05, 0.2, 0.4):
        law = StationaryLaw(P11, T, 0)
        assert law.mean == pytest.approx(1.0, abs=1e-10)
        assert law.variance == pytest.approx(T / (1 - 2 * T), rel=1e-9)
        assert variance_depth0(T, P11) == pytest.approx(T / (1 - 2 * T))
    assert variance_depth0(0.5, P11) == math.inf
    assert StationaryLaw(P11, 0.5, 0).variance == math.inf


def test_depth1_stationarity_identity_and_fluctuation_inversion():
    var = []
    for T in np.linspace(0.02, 0.33, 25):
        law = StationaryLaw(P11, T, 1)
        m1, m2 = law.moment(1), law.moment(2)
        assert P11.beta1 * m1 - P11.beta2 + T * (P11.alpha1 * m2 - 2 * P11.alpha2 * m1 + P11.alpha3) == pytest.approx(
            0, abs=1e-9)
        var.append(law.variance)
    var = np.array(var)
    i = int(np.argmax(var))
    assert 0 < i < var.size - 1 and var[-1] < 0.1 * var[i]
    assert StationaryLaw(P11, 0.2, 1).moment(3) == math.inf  # tail v^(−7/2)


def test_most_likely_values():
    for T in (0.01, 0.05, 0.1):
        law = StationaryLaw(P11, T, 1)
        r = most_likely_value_depth1(T, P11)
        assert abs(law.grid_mode() - r) < 0.02 * r
    assert most_likely_value_depth1(0.2, P11) == 0.0  # density diverges at 0 above T_c/3
    assert most_likely_value_depth1(1e-9, P11) == pytest.approx(1.0, abs=1e-7)
    assert most_likely_value_depth0(0.1, P11) == pytest.approx((1 + 0.4) / (1 + 0.4))
    p = DiagonalNetProblem.gaussian(1.3, 0.8, 0.1)
    assert abs(StationaryLaw(p, 0.1, 0).grid_mode() - most_likely_value_depth0(0.1, p)) < 0.01
    assert len(most_likely_roots_depth1(0.15, P11)) == 2 and len(most_likely_roots_depth1(0.25, P11)) == 0


def test_tail_exponents():
    assert tail_exponent(1) == -3.5 and tail_exponent(2) == -4.0 and tail_exponent(4) == pytest.approx(-4.4)
    assert tail_exponent(0, 0.25, P11) == pytest.approx(-4.0)
    with pytest.raises(ValueError):
        tail_exponent(0)
    for D in (1, 2, 4):
        for T in (0.05, 0.2):
            law = StationaryLaw(P11, T, D)
            v = np.array([1e6, 2e6])
            slope = np.diff(law.log_pdf(v))[0] / math.log(2)
            assert slope == pytest.approx(tail_exponent(D), abs=1e-4)


def test_cdf_ppf_sample_and_collapsed_law():
    law = StationaryLaw(P11, 0.15, 1)
    q = np.array([0.01, 0.3, 0.5, 0.9, 0.999])
    assert np.allclose(law.cdf(law.ppf(q)), q, atol=1e-6)
    x = law.sample(3000, seed=3)
    assert stats.kstest(x, law.cdf).pvalue > 1e-4
    assert np.all(law.interval_probabilities(np.array([0, 0.5, 1, np.inf])) >= 0)
    dead = StationaryLaw(P11, 0.4, 1)
    assert dead.collapsed and dead.mean == 0 and dead.variance == 0 and dead.mode == 0
    with pytest.raises(ValueError, match="δ"):
        dead.pdf(np.array([1.0]))
    wrong = StationaryLaw(P11, 0.1, 1, branch=-1)
    assert wrong.collapsed  # the wrong sign never has a stationary density
    assert StationaryLaw(P11, 0.1, 2, branch=-1).collapsed


def test_tail_slope_bound_holds():
    for D in (0, 1, 2, 4):
        for T in (0.05, 0.3):
            law = StationaryLaw(P11, T, D)
            s, bound = law.tail_slope(1e3)
            assert abs(s - law.tail_exponent()) <= bound < 0.05
