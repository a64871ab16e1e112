"""The v-SDE engine (symsgd_core.stationary.v_sde), its numba kernels and the SGD comparison (stationary.sgd)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsgd_core.stationary import _kernels as kern
from symsgd_core.stationary import v_sde as sde_module
from symsgd_core.stationary.experiments import dt_convergence
from symsgd_core.stationary.laws import DiagonalNetProblem, StationaryLaw
from symsgd_core.stationary.sgd import sgd_v_samples
from symsgd_core.stationary.v_sde import (
    BLOCK_SIZE,
    NotRelaxedWarning,
    _kernel_params,
    _stiff_threshold,
    integrated_autocorrelation_time,
    numpy_euler_s,
    relaxation_rate,
    run_to_stationarity,
    sde_coefficients,
    simulate_v,
    simulate_v_coupled,
    v_space_coefficients,
)

P11 = DiagonalNetProblem.gaussian(1.0, 1.0)
PWD = DiagonalNetProblem.gaussian(1.3, 0.7, 0.15)


def test_same_seed_same_numbers_whatever_the_threads():
    kw = dict(n_chains=BLOCK_SIZE * 2 + 17, t_end=0.5, dt=0.01, n_records=3)
    a = simulate_v(P11, 0.15, 1, seed=5, threads=1, **kw)
    b = simulate_v(P11, 0.15, 1, seed=5, threads=2, **kw)
    c = simulate_v(P11, 0.15, 1, seed=6, threads=2, **kw)
    assert np.array_equal(a.v, b.v) and not np.array_equal(a.v, c.v)
    f1, c1 = simulate_v_coupled(P11, 0.15, 0, seed=2, threads=1, **kw)
    f2, c2 = simulate_v_coupled(P11, 0.15, 0, seed=2, threads=2, **kw)
    assert np.array_equal(f1.v, f2.v) and np.array_equal(c1.v, c2.v)
    assert a.v.shape == (3, kw["n_chains"]) and np.allclose(a.times, [0.17, 0.34, 0.51])


@pytest.mark.parametrize("kwargs, word", [
    (dict(temperature=0.0), "temperature"), (dict(depth=-1), "depth"), (dict(n_chains=0), "n_chains"),
    (dict(dt=2.0, t_end=1.0), "dt"), (dict(scheme="rk4"), "scheme"), (dict(v0=0.0), "v0"),
    (dict(v0=np.array([1.0, -1.0]), n_chains=2), "one sign"), (dict(v0=np.full(3, 1.0), n_chains=2), "v0"),
    (dict(seed=-1), "seed"), (dict(n_records=0), "n_records")])
def test_arguments_are_validated(kwargs, word):
    base = dict(temperature=0.1, depth=1, n_chains=4, t_end=0.1, dt=0.01)
    base.update(kwargs)
    T = base.pop("temperature")
    D = base.pop("depth")
    with pytest.raises(ValueError, match=word):
        simulate_v(P11, T, D, **base)


@pytest.fixture
def no_kernel_work(monkeypatch):
    """Any kernel call fails the test at once: a guard must refuse the run before any work (no timeout needed)."""
    def refuse(*args, **kwargs):
        raise AssertionError("the kernel was started: the work was not bounded before it began")
    monkeypatch.setattr(sde_module._k, "run_block", refuse)
    monkeypatch.setattr(sde_module._k, "run_block_coupled", refuse)


@pytest.mark.parametrize("call", ["simulate_v", "simulate_v_coupled", "run_to_stationarity"])
def test_a_run_of_too_many_steps_is_refused_before_any_work(no_kernel_work, call):
    """``simulate_v(t_end=1e12, dt=1e-6)`` asked for 10¹⁸ steps and hung without a word."""
    kw = dict(t_max=1e12, relax_times=1e12) if call == "run_to_stationarity" else dict(t_end=1e12)
    with pytest.raises(ValueError, match=r"1e\+18 steps of each of 1000 chains.*MAX_CHAIN_STEPS = 1e\+10.*raise dt"):
        getattr(sde_module, call)(P11, 0.15, 1, n_chains=1000, dt=1e-6, **kw)
    with pytest.raises(ValueError, match="inf steps"):  # t_end/dt beyond the float range: no OverflowError
        simulate_v(P11, 0.15, 1, n_chains=10, t_end=1e300, dt=1e-300)
    with pytest.raises(ValueError, match=r"n_steps = 1e\+12 steps"):
        numpy_euler_s(P11, 0.15, n_chains=1000, n_steps=10**12, dt=1e-3)


def test_the_work_limit_counts_chains_times_steps_and_records(no_kernel_work, monkeypatch):
    monkeypatch.setattr(sde_module, "MAX_CHAIN_STEPS", 1000)
    with pytest.raises(AssertionError, match="kernel was started"):  # 10 chains × 100 steps: at the limit, runs
        simulate_v(P11, 0.15, 1, n_chains=10, t_end=1.0, dt=0.01)
    with pytest.raises(ValueError, match=r"1\.11e\+03 chain-steps"):  # 10 × 111: over it
        simulate_v(P11, 0.15, 1, n_chains=10, t_end=1.0, dt=0.009)
    with pytest.raises(ValueError, match="3 kernel steps per step"):  # coupled: 2 fine + 1 coarse per step of dt
        simulate_v_coupled(P11, 0.15, 1, n_chains=10, t_end=0.5, dt=0.01)
    monkeypatch.setattr(sde_module, "MAX_CHAIN_STEPS", 10**10)
    with pytest.raises(ValueError, match="n_records × n_chains.*MAX_RECORDED"):
        simulate_v(P11, 0.15, 1, n_chains=1000, t_end=1e4, dt=1.0, n_records=10**5)


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_log_space_coefficients_follow_from_ito(depth):
    v = np.linspace(0.05, 6.0, 40)
    for p, branch in ((PWD, 1), (PWD, -1)):
        q = p if branch == 1 else p.mirrored()
        a_v, b2_v, _ = v_space_coefficients(v, q, 0.12, depth)
        a_s, b_s = sde_coefficients(np.log(v), p, 0.12, depth, branch)
        assert np.allclose(a_s, a_v / v - b2_v / (2 * v * v), rtol=1e-12, atol=1e-12)
        assert np.allclose(b_s**2, b2_v / v**2, rtol=1e-12)


def test_stiffness_threshold_is_a_safe_bound():
    for depth in (0, 1, 2):
        params = _kernel_params(PWD, 0.2, depth, 1)
        for dt in (0.001, 0.02, 0.1):
            xs = _stiff_threshold(params, dt, kern.STIFF)
            grid = np.linspace(-20, min(xs, 8.0), 400) if depth else np.linspace(-50, 50, 400)
            if not math.isfinite(xs) and xs < 0:
                continue
            lam = np.array([kern.stiffness(x, *params) for x in grid])
            assert np.all(lam * dt <= kern.STIFF * (1 + 1e-9))


def test_relaxation_rate_exact_for_linear_drift_and_bounded_for_depth1():
    # depth 0 has a linear drift, so v − m is an eigenfunction with eigenvalue −2β₁'
    assert relaxation_rate(P11, 0.15, 0) == pytest.approx(2.0, rel=1e-3)
    assert relaxation_rate(PWD, 0.1, 0) == pytest.approx(2 * (1 + 0.15), rel=1e-3)
    # depth 1: small v is Brownian motion with drift; the gap sits at (β₂' − Tα₃)²/(2Tα₃)
    T = 0.15
    edge = (1 - 3 * T) ** 2 / (2 * T * 3)
    assert relaxation_rate(P11, T, 1) == pytest.approx(edge, rel=0.02)
    assert relaxation_rate(P11, 0.4, 1) == 0.0  # collapsed


def test_depth0_mean_follows_the_linear_ode():
    # E v(t) = m + (v0 − m) e^{−2β₁t} exactly for the SDE; Euler's mean is (1 − 2β₁dt)^n
    run = simulate_v(P11, 0.2, 0, n_chains=20000, t_end=0.5, dt=0.01, v0=3.0, scheme="euler", seed=1)
    exact_discrete = 1 + 2 * (1 - 2 * 0.01) ** 50
    se = run.final.std() / math.sqrt(run.n_chains)
    assert abs(run.final.mean() - exact_discrete) < 4 * se
    run2 = simulate_v(P11, 0.2, 0, n_chains=20000, t_end=0.5, dt=0.05, v0=3.0, scheme="weak2", seed=1)
    assert abs(run2.final.mean() - (1 + 2 * math.exp(-1.0))) < 4 * run2.final.std() / math.sqrt(2e4) + 2e-3


def test_weak2_beats_euler_on_the_stationary_law():
    law = StationaryLaw(P11, 0.15, 1)
    v0 = law.sample(6000, seed=4)
    errs = {}
    for scheme in ("euler", "weak2"):
        run = simulate_v(P11, 0.15, 1, n_chains=6000, t_end=3.0, dt=0.05, v0=v0, scheme=scheme, seed=3)
        errs[scheme] = abs(np.median(run.final) - law.ppf(np.array([0.5]))[0])
    assert errs["weak2"] < errs["euler"]


def test_wrong_sign_and_collapse():
    run = simulate_v(P11, 0.15, 1, n_chains=300, t_end=8.0, dt=0.01, v0=-1.0, scheme="euler", seed=0)
    assert run.branch == -1 and np.all(run.final < 0) and np.all(np.abs(run.final) < 1e-6)
    dead = simulate_v(P11, 0.5, 1, n_chains=300, t_end=40.0, dt=0.02, v0=1.0, seed=0)
    assert np.median(dead.final) < 1e-6 and dead.non_finite == 0


def test_run_to_stationarity_reports_relaxation():
    run = run_to_stationarity(P11, 0.15, 1, n_chains=50, relax_times=2.0)
    assert run.relaxed and run.t_end >= 2.0 / run.lambda1
    with pytest.warns(NotRelaxedWarning):
        run = run_to_stationarity(P11, 0.32, 1, n_chains=50, t_max=5.0)
    assert not run.relaxed and "NOT relaxed" in run.summary()


def test_run_to_stationarity_warns_when_the_default_stops_early():
    """At T = 0.25 the default (5 relaxation times, capped at t = 60) stops at λ₁·t ≈ 2.5, and said so
    only inside an info dict. Now a NotRelaxedWarning is issued and the result says relaxed=False."""
    with pytest.warns(NotRelaxedWarning, match="before 5 relaxation times"):
        run = run_to_stationarity(P11, 0.25, 1, n_chains=20)
    assert not run.relaxed and run.lambda1 * run.t_end < 5 and run.t_end == pytest.approx(60.0)
    assert run.settings["relax_times"] == 5.0
    import warnings

    with warnings.catch_warnings():  # callers that report it themselves can ask for no warning
        warnings.simplefilter("error")
        assert not run_to_stationarity(P11, 0.25, 1, n_chains=20, warn=False).relaxed


def test_result_shape_and_divergence_rule():
    """VRun is the one engine result shape: steps, times, diverged_step, settings, then the records."""
    run = simulate_v(P11, 0.15, 1, n_chains=3, t_end=0.04, dt=0.01, n_records=2, v0=np.array([1.0, 1.0, 1e300]),
                     seed=0)
    np.testing.assert_array_equal(run.steps, [2, 4])
    np.testing.assert_allclose(run.times, run.settings["dt"] * run.steps)
    np.testing.assert_array_equal(run.diverged_step, [-1, -1, 2])  # non-finite from the first record on
    assert run.n_diverged == 1 == run.non_finite and run.settings["seed"] == 0 and run.settings["scheme"] == "weak2"


def test_integrated_autocorrelation_time_of_ar1():
    rng = np.random.default_rng(0)
    phi, K, R = 0.8, 4000, 20
    x = np.zeros((K, R))
    for k in range(1, K):
        x[k] = phi * x[k - 1] + rng.standard_normal(R)
    tau = integrated_autocorrelation_time(x, 1.0)
    assert tau == pytest.approx(0.5 + phi / (1 - phi), rel=0.1)


def test_numpy_baseline_agrees_with_the_kernel_in_distribution():
    a = numpy_euler_s(P11, 0.15, n_chains=3000, n_steps=2000, dt=2e-3, seed=0)
    b = simulate_v(P11, 0.15, 1, n_chains=3000, t_end=4.0, dt=2e-3, scheme="euler", seed=0).final
    from scipy import stats

    assert stats.ks_2samp(a, b).pvalue > 1e-4


def test_sgd_on_the_actual_parameters_runs_and_keeps_the_sign():
    out = sgd_v_samples(1.0, 1.0, 0.1, method="amplified", lr=5e-3, n_runs=40, t_end=0.5, v0=-1.0)
    assert out.v.size + out.diverged == 40 and np.all(out.v <= 0)
    out = sgd_v_samples(1.0, 1.0, 0.05, method="sgd", n_runs=40, t_end=1.0)
    assert out.lr == 0.05 and out.steps == 20
    with pytest.raises(ValueError, match="method"):
        sgd_v_samples(1.0, 1.0, 0.05, method="adam")


def test_deep_chains_stay_stationary_through_large_v_excursions():
    # regression: excursions to huge v once overflowed the sub-step count and threw chains to v = 0
    law = StationaryLaw(P11, 0.15, 4)
    run = simulate_v(P11, 0.15, 4, n_chains=4000, t_end=4.0, dt=0.005, v0=law.sample(4000, seed=1), seed=2)
    q = float(law.ppf(np.array([0.01]))[0])
    p = float(np.mean(run.final < q))
    assert run.non_finite == 0 and abs(p - 0.01) < 4 * math.sqrt(0.01 * 0.99 / 4000) + 0.003


def test_states_beyond_float_range_are_reported_not_hidden():
    params = _kernel_params(P11, 0.15, 1, 1)
    x, extra = kern._advance_stiff(800.0, 0.01, 0.0, np.random.default_rng(0), 0, *params, kern.STIFF)
    assert math.isnan(x)
    run = simulate_v(P11, 0.15, 1, n_chains=3, t_end=0.02, dt=0.01, v0=np.array([1.0, 1.0, 1e300]), seed=0)
    assert run.non_finite == 1 and "non-finite" in run.summary()


def test_dt_convergence_rows():
    """The step-size study agrees with the closed form within its stated error budget (sampling quantile + the
    measured dt-error); it replaces a test that only asserted 0 ≤ KS ≤ 1, which could not fail."""
    from symsgd_core.stationary.experiments import ks_threshold

    n = 2000
    rows = dt_convergence(P11, 0.15, 1, dts=(0.08, 0.04), schemes=("weak2",), n_chains=n)
    assert [(r.scheme, r.dt) for r in rows] == [("weak2", 0.08), ("weak2", 0.04)]
    p_law = float(StationaryLaw(P11, 0.15, 1).cdf(np.array([0.05]))[0])
    se = math.sqrt(p_law * (1 - p_law) / n)
    for r in rows:
        assert r.p_small_law == pytest.approx(p_law) and r.ks_noise_scale == pytest.approx(1 / math.sqrt(n))
        assert r.ks_fine_vs_law <= ks_threshold(n) + r.sup_F_dt_minus_F_dt2, r
        assert abs(r.p_small_fine - p_law) <= 4 * se + r.sup_F_dt_minus_F_dt2, r
    # ... and the same budget rejects a law at the wrong temperature
    p_wrong = float(StationaryLaw(P11, 0.2, 1).cdf(np.array([0.05]))[0])
    for r in rows:
        assert abs(p_wrong - r.p_small_fine) > 4 * se + r.sup_F_dt_minus_F_dt2, (p_wrong, r)
    with pytest.raises(ValueError, match="no stationary density"):
        dt_convergence(P11, 0.4, 1)


def test_plain_euler_without_step_control_loses_chains():
    # plain Euler–Maruyama's "bias": overshoots from large-v excursions strand chains near v = 0
    v = numpy_euler_s(P11, 0.15, n_chains=1000, n_steps=5000, dt=1e-3)
    assert np.sum(v < 1e-30) > 0


def test_sgd_paths_are_recorded():
    out = sgd_v_samples(1.0, 1.0, 0.1, method="sgd", n_runs=20, t_end=1.0, n_records=5)
    assert out.v_path.shape[0] == 6 and out.times.shape == (6,)


@pytest.mark.parametrize("scheme, claimed, band, dts, n_chains", [
    ("euler", 1.0, 0.25, (0.04, 0.02, 0.01), 200_000),
    ("weak2", 2.0, 0.5, (0.06, 0.03, 0.015), 400_000),
])
def test_empirical_weak_order(scheme, claimed, band, dts, n_chains):
    """The promised weak orders (Euler–Maruyama 1, Platen's explicit order-2.0 scheme 2), measured as in diffrax's
    test/test_sde1.py: fit log(error) against log(dt), and the fitted order must lie within ``band`` of the claim.

    Statistic: E[tanh v(1)] of depth 0 (linear drift, multiplicative noise 2 sqrt(T g(v))) from v₀ = 3 at T = 0.2.
    The error of step dt is estimated by the coupled difference to dt/2 on the same Brownian paths,
    E f(X_dt) − E f(X_dt/2) = C dt^p (1 − 2^−p) + …, whose variance is small; each difference must be at least
    3 standard errors (a measured signal, not noise). These dt keep every step below the stiffness split
    (substeps = 0), so the order is the scheme's own. Over seeds 0–5 the fitted orders were 1.05–1.07 (Euler)
    and 1.75–2.12 (weak2).
    """
    diffs = []
    for dt in dts:
        fine, coarse = simulate_v_coupled(P11, 0.2, 0, n_chains=n_chains, t_end=1.0, dt=dt, v0=3.0, scheme=scheme,
                                          seed=0)
        assert coarse.substeps == 0 and fine.non_finite == coarse.non_finite == 0
        d = np.tanh(coarse.final) - np.tanh(fine.final)
        assert abs(d.mean()) >= 3 * d.std() / math.sqrt(n_chains), (dt, d.mean())
        diffs.append(abs(d.mean()))
    order = np.polyfit(np.log(dts), np.log(diffs), 1)[0]
    assert abs(order - claimed) <= band, (scheme, order)
