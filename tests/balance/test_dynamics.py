"""Tests for symsgd_core.balance.dynamics: every method against a case with a known answer."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core.balance.data import Dataset, GaussianData
from symsgd_core.balance.dynamics import (
    Trajectory,
    langevin_noise_std,
    run_gd,
    run_gradient_flow,
    run_langevin,
    run_noise_amplified_sgd,
    run_sde,
    run_sgd,
)
from symsgd_core.balance.models import OBSERVABLE_KEYS, DiagonalNet, Rank1LinearModel, ScalarModel

EPS = np.finfo(np.float64).eps
LAW = GaussianData(k=1.0, sigma=1.0)
Z = 5.0  # Monte-Carlo tolerances: 5 standard errors


def assert_step_moments(delta, mean, cov):
    """Sample mean/covariance of one-step increments ``delta (R, P)`` match ``mean``/``cov`` within Z s.e.

    The standard error of each covariance entry is estimated from the sample of products.
    """
    R = delta.shape[0]
    m_emp = delta.mean(0)
    se_mean = np.sqrt(np.diag(cov) / R)
    assert np.all(np.abs(m_emp - mean) <= Z * se_mean + 1e-14), (m_emp, mean, se_mean)
    dc = delta - m_emp
    prods = dc[:, :, None] * dc[:, None, :]
    c_emp = prods.mean(0)
    se_cov = prods.std(0) / np.sqrt(R)
    assert np.all(np.abs(c_emp - cov) <= Z * se_cov + 1e-14), (c_emp, cov, se_cov)


def single(theta, runs):
    return np.tile(np.asarray(theta, float), (runs, 1))


# ---------------------------------------------------------------------------------------- SGD
@pytest.mark.parametrize("replace", [True, False])
def test_sgd_one_step_covariance_is_eta2_C_over_S(replace):
    """One SGD step from θ: mean −η∇L, covariance η²C/S (with replacement) or η²C/S·(N−S)/(N−1) without."""
    model = Rank1LinearModel(d_in=2, d_out=2, weight_decay=0.05)
    ds = GaussianData(d_in=2, d_out=2, k=0.8).dataset(12, 0)
    theta = np.array([0.9, -0.4, 0.6, 1.1])
    lr, S, R = 0.1, 3, 40_000
    tr = run_sgd(model, theta, ds, lr=lr, steps=1, batch_size=S, runs=R, seed=1, replace=replace)
    delta = tr.theta[1] - tr.theta[0]
    C = model.noise_cov(theta, *ds.full())
    factor = 1.0 if replace else (ds.n - S) / (ds.n - 1)
    assert_step_moments(delta, -lr * model.grad(theta, *ds.full()), lr**2 * C / S * factor)


def test_sgd_one_step_fresh_gaussian_samples():
    """Fresh samples: covariance η²C/S with the population C = b bᵀ (scalar-input model)."""
    model = DiagonalNet(width=2, weight_decay=0.1)
    theta = np.array([0.8, -0.5, 1.2, 0.4])
    lr, S, R = 0.05, 2, 40_000
    tr = run_sgd(model, theta, LAW, lr=lr, steps=1, batch_size=S, runs=R, seed=2)
    m = LAW.moments()
    b = model.population_noise_factor(theta, m)
    assert_step_moments(tr.theta[1] - tr.theta[0], -lr * model.population_grad(theta, m), lr**2 * np.outer(b, b) / S)


def test_sgd_scalar_discrete_identity():
    """Scalar model, any minibatch: u'² − w'² = (1 − η²ḡ²)(u² − w²), with ḡ read off the step itself."""
    lr = 0.05
    tr = run_sgd(ScalarModel(), [1.5, 0.5], LAW, lr=lr, steps=200, runs=20, seed=3, batch_size=2)
    th = tr.theta
    u, w = th[:-1, :, 0], th[:-1, :, 1]
    gbar = -(th[1:, :, 0] - u) / (lr * w)
    np.testing.assert_allclose(-(th[1:, :, 1] - w) / (lr * u), gbar, rtol=1e-9)
    G = tr.observables["G"]
    np.testing.assert_allclose(G[1:], (1 - lr**2 * gbar**2) * G[:-1], rtol=0, atol=1e-11)


def test_sgd_balances_on_average():
    """Corollary 3.3: E|u² − w²| ≤ |G₀| exp(−4Tσ²t) (T = η/S, σ = 1) within Monte-Carlo error."""
    lr = 0.02
    tr = run_sgd(ScalarModel(), [1.5, 0.5], LAW, lr=lr, steps=2000, runs=400, seed=4, record_every=500)
    absG = np.abs(tr.observables["G"])
    bound = 2.0 * np.exp(-4 * lr * 1.0 * tr.times)
    se = absG.std(1) / np.sqrt(absG.shape[1])
    assert np.all(absG.mean(1) <= bound + Z * se + 1e-12)
    assert absG.mean(1)[-1] < 0.5 * absG.mean(1)[0]
    assert tr.observables["v"][-1].mean() == pytest.approx(1.0, abs=0.1)


def test_sgd_observables_and_schedule():
    model = ScalarModel(weight_decay=0.01)
    ds = LAW.dataset(50, 0)
    tr = run_sgd(model, [1.0, 0.3], ds, lr=0.02, steps=25, runs=4, record_every=10, batch_size=5)
    assert isinstance(tr, Trajectory)
    np.testing.assert_array_equal(tr.steps, [0, 10, 20, 25])
    np.testing.assert_allclose(tr.times, 0.02 * tr.steps)
    assert tr.theta.shape == (4, 4, 2)
    assert set(tr.observables) == set(OBSERVABLE_KEYS)
    for key in OBSERVABLE_KEYS:
        assert tr.observables[key].shape == (4, 4)
    th = tr.theta[-1]
    np.testing.assert_allclose(tr.observables["dG_dt_theory"][-1], model.G_rate(th, *ds.full(), 0.02 / 5),
                               rtol=1e-10)
    np.testing.assert_allclose(tr.observables["loss"][-1], model.loss(th, *ds.full()), rtol=1e-10)
    np.testing.assert_allclose(tr.observables["v"][-1], th[:, 0] * th[:, 1])
    assert tr.settings["temperature"] == pytest.approx(0.02 / 5)
    assert "no run diverged" in tr.summary()
    np.testing.assert_array_equal(tr.final_theta, th)


def test_zero_steps_records_only_the_start():
    tr = run_sgd(ScalarModel(), [1.0, 0.5], LAW, lr=0.1, steps=0, runs=2)
    np.testing.assert_array_equal(tr.steps, [0])
    np.testing.assert_array_equal(tr.theta[0], [[1.0, 0.5], [1.0, 0.5]])


def test_sgd_gaussian_vector_model_uses_fixed_evaluation_sample():
    model = Rank1LinearModel(d_in=3, d_out=2)
    law = GaussianData(d_in=3, d_out=2)
    tr = run_sgd(model, np.full(5, 0.5), law, lr=0.01, steps=5, runs=3)
    assert tr.observables["v"].shape == (6, 3, 2, 3)
    assert "4096" in tr.settings["eval"]


# ---------------------------------------------------------------------------------------- fast path
@pytest.mark.parametrize("data,S,gamma", [(LAW, 1, 0.0), (LAW, 10, 0.1), (GaussianData(k=-0.5, sigma=0.3), 3, 0.0),
                                          ("dataset", 1, 0.0), ("dataset", 4, 0.2)])
def test_fast_path_matches_numpy_reference(data, S, gamma):
    if data == "dataset":
        data = LAW.dataset(37, 5)
    model = ScalarModel(weight_decay=gamma)
    theta0 = np.random.default_rng(0).standard_normal((30, 2))
    kw = dict(lr=0.03, steps=300, batch_size=S, record_every=7, seed=9)
    fast = run_sgd(model, theta0, data, engine="compiled", **kw)
    ref = run_sgd(model, theta0, data, engine="reference", **kw)
    assert fast.settings["engine"] == "compiled" and ref.settings["engine"] == "reference"
    np.testing.assert_allclose(fast.theta, ref.theta, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(fast.diverged_step, ref.diverged_step)


def test_fast_path_matches_reference_through_divergence():
    theta0 = np.array([[1.5, 0.5], [0.2, 0.1], [3.0, 3.0], [1.0, -1.0]])
    kw = dict(lr=0.4, steps=100, record_every=5, seed=2)
    for data in (LAW, LAW.dataset(20, 0)):
        fast = run_sgd(ScalarModel(), theta0, data, engine="compiled", **kw)
        ref = run_sgd(ScalarModel(), theta0, data, engine="reference", **kw)
        assert fast.n_diverged >= 1
        np.testing.assert_array_equal(fast.diverged_step, ref.diverged_step)
        np.testing.assert_allclose(fast.theta, ref.theta, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_divergence_is_flagged_and_other_runs_continue(engine):
    good = [[1.5, 0.5], [0.7, 0.9]]
    kw = dict(lr=0.05, steps=200, record_every=10, seed=5, engine=engine)
    bad = run_sgd(ScalarModel(), np.array(good + [[40.0, 40.0]]), LAW, **kw)
    fine = run_sgd(ScalarModel(), np.array(good + [[0.1, 0.1]]), LAW, **kw)
    assert bad.diverged_step[2] >= 1 and np.all(bad.diverged_step[:2] == -1)
    np.testing.assert_array_equal(bad.ok_runs, [True, True, False])
    np.testing.assert_array_equal(bad.theta[:, :2], fine.theta[:, :2])  # other runs unaffected
    for key in OBSERVABLE_KEYS:
        assert np.all(np.isfinite(bad.observables[key])), key
    frozen = bad.theta[-1, 2]
    assert np.all(np.abs(frozen) <= bad.settings["divergence_limit"])
    assert "diverged" in bad.summary() and "1 of 3" in bad.summary()


def test_same_seed_same_numbers():
    kw = dict(lr=0.02, steps=50, runs=5, batch_size=2)
    for data in (LAW, LAW.dataset(30, 1)):
        a = run_sgd(ScalarModel(), [1.0, 0.5], data, seed=11, **kw)
        b = run_sgd(ScalarModel(), [1.0, 0.5], data, seed=11, **kw)
        c = run_sgd(ScalarModel(), [1.0, 0.5], data, seed=12, **kw)
        np.testing.assert_array_equal(a.theta, b.theta)
        assert not np.array_equal(a.theta, c.theta)
    g1 = run_sgd(ScalarModel(), [1.0, 0.5], LAW, seed=np.random.default_rng(3), **kw)
    g2 = run_sgd(ScalarModel(), [1.0, 0.5], LAW, seed=3, **kw)
    np.testing.assert_array_equal(g1.theta, g2.theta)


# ---------------------------------------------------------------------------------------- GD and flow
def test_gd_per_step_identity():
    """Discrete GD is not exactly conserving: ΔG = η²(‖∇_uL‖² − ‖∇_wL‖²) each step (γ = 0)."""
    model = DiagonalNet(width=3)
    ds = LAW.dataset(40, 2)
    theta0 = np.random.default_rng(1).standard_normal((4, 6))
    lr = 0.05
    tr = run_gd(model, theta0, ds, lr=lr, steps=30)
    G = tr.observables["G"]
    for k in range(30):
        g = model.grad(tr.theta[k], *ds.full())
        pred = lr**2 * ((g[:, model.u_index] ** 2).sum(1) - (g[:, model.w_index] ** 2).sum(1))
        np.testing.assert_allclose(G[k + 1] - G[k], pred, rtol=1e-8, atol=1e-13)
    assert np.abs(G[-1] - G[0]).max() > 1e-6  # visibly not conserved at this η


@pytest.mark.parametrize("model", [ScalarModel(), DiagonalNet(width=3, depth=2), Rank1LinearModel(2, 3),
                                   DiagonalNet(width=2, weight_decay=0.1)], ids=repr)
def test_gradient_flow_conserves_G(model):
    """Gradient flow: G(t) = G(0) e^{−4γt} exactly; the integrator's error bounds the deviation.

    Bound: DOP853 keeps each step's local error ≤ rtol|θ| + atol per component, over ≤ nfev/12 steps,
    and |ΔG| ≤ 2 max|θ| · (global error of θ) · P.
    """
    if isinstance(model, Rank1LinearModel):
        data = GaussianData(d_in=2, d_out=3).dataset(30, 0)
    else:
        data = LAW.dataset(30, 0)
    theta0 = np.random.default_rng(2).standard_normal((3, model.n_params))
    tr = run_gradient_flow(model, theta0, data, t_end=5.0, n_records=50)
    assert tr.settings["status"] == 0 and tr.n_diverged == 0
    G = tr.observables["G"]
    G_exact = G[0] * np.exp(-4 * model.weight_decay * tr.times)[:, None]
    thmax = np.abs(tr.theta).max()
    st = tr.settings
    bound = 2 * thmax * model.n_params * (st["nfev"] / 12) * (st["rtol"] * thmax + st["atol"])
    assert np.abs(G - G_exact).max() <= bound
    assert tr.settings["G_error"] <= bound
    # the flow actually moved and lowered the loss
    assert np.all(tr.observables["loss"][-1] < tr.observables["loss"][0])


def test_gradient_flow_matches_small_step_gd():
    """GD with step η approximates the flow with error O(η)."""
    ds = LAW.dataset(30, 0)
    flow = run_gradient_flow(ScalarModel(), [1.5, 0.5], ds, t_end=2.0, n_records=3)
    errs = []
    for lr in (0.01, 0.005):
        gd = run_gd(ScalarModel(), [1.5, 0.5], ds, lr=lr, steps=round(2.0 / lr), record_every=10_000)
        errs.append(np.abs(gd.final_theta - flow.final_theta).max())
    assert errs[1] < 0.6 * errs[0]


def test_gradient_flow_population_law():
    tr = run_gradient_flow(ScalarModel(), [1.5, 0.5], LAW, t_end=20.0, n_records=5)
    assert tr.observables["v"][-1, 0] == pytest.approx(1.0, abs=1e-6)  # v → β₂/β₁ = k
    assert tr.observables["G"][-1, 0] == pytest.approx(2.0, abs=1e-8)


# ---------------------------------------------------------------------------------------- SDE
def test_sde_one_step_mean_and_covariance_dataset():
    """Euler–Maruyama step: mean −∇L dt, covariance T dt C(θ) (exact C over the dataset)."""
    model = DiagonalNet(width=2, weight_decay=0.1)
    ds = LAW.dataset(8, 3)
    theta = np.array([0.8, -0.5, 1.2, 0.4])
    T, dt, R = 0.2, 0.1, 40_000
    tr = run_sde(model, theta, ds, temperature=T, dt=dt, steps=1, runs=R, seed=4)
    C = model.noise_cov(theta, *ds.full())
    assert_step_moments(tr.theta[1] - tr.theta[0], -dt * model.grad(theta, *ds.full()), T * dt * C)
    np.testing.assert_allclose(tr.times, [0.0, dt])


def test_sde_one_step_full_rank_model():
    model = Rank1LinearModel(d_in=2, d_out=2)
    ds = GaussianData(d_in=2, d_out=2).dataset(10, 1)
    theta = np.array([0.9, -0.4, 0.6, 1.1])
    T, dt, R = 0.1, 0.05, 40_000
    tr = run_sde(model, theta, ds, temperature=T, dt=dt, steps=1, runs=R, seed=5)
    C = model.noise_cov(theta, *ds.full())
    assert_step_moments(tr.theta[1] - tr.theta[0], -dt * model.grad(theta, *ds.full()), T * dt * C)


def test_sde_one_step_population():
    model = ScalarModel()
    theta = np.array([1.5, 0.5])
    T, dt, R = 0.1, 0.05, 40_000
    tr = run_sde(model, theta, LAW, temperature=T, dt=dt, steps=1, runs=R, seed=6)
    m = LAW.moments()
    b = model.population_noise_factor(theta, m)
    assert_step_moments(tr.theta[1] - tr.theta[0], -dt * model.population_grad(theta, m), T * dt * np.outer(b, b))


def test_sde_zero_temperature_is_euler_gd():
    ds = LAW.dataset(20, 0)
    a = run_sde(ScalarModel(), [1.0, 0.4], ds, temperature=0.0, dt=0.01, steps=40, runs=2)
    b = run_gd(ScalarModel(), [1.0, 0.4], ds, lr=0.01, steps=40, runs=2)
    np.testing.assert_allclose(a.theta, b.theta, rtol=1e-13)


# ---------------------------------------------------------------------------------------- Langevin, amplified
def test_langevin_noise_std_and_one_step():
    model = DiagonalNet(width=2)
    ds = LAW.dataset(15, 2)
    theta = np.array([0.8, -0.5, 1.2, 0.4])
    lr, S = 0.05, 2
    s = langevin_noise_std(model, theta, ds, lr, batch_size=S)
    C = model.noise_cov(theta, *ds.full())
    assert s**2 * model.n_params == pytest.approx(lr**2 * np.trace(C) / S, rel=1e-12)
    R = 40_000
    tr = run_langevin(model, theta, ds, lr=lr, noise_std=s, steps=1, runs=R, seed=7)
    assert_step_moments(tr.theta[1] - tr.theta[0], -lr * model.grad(theta, *ds.full()), s**2 * np.eye(4))
    assert np.shape(langevin_noise_std(model, single(theta, 3), ds, lr)) == (3,)


def test_langevin_G_random_walks_while_sgd_balances():
    """Isotropic noise does not cancel in dG: the spread of G across runs grows; under SGD it stays small."""
    lr = 0.02
    s = langevin_noise_std(ScalarModel(), [1.5, 0.5], LAW, lr)
    lang = run_langevin(ScalarModel(), [1.5, 0.5], LAW, lr=lr, noise_std=s, steps=2000, runs=200, seed=8,
                        record_every=1000)
    sgd = run_sgd(ScalarModel(), [1.5, 0.5], LAW, lr=lr, steps=2000, runs=200, seed=8, record_every=1000)
    spread_l = lang.observables["G"].std(1)
    spread_s = sgd.observables["G"].std(1)
    assert spread_l[2] > spread_l[1] > 0
    assert spread_s[-1] < 0.2 * spread_l[-1]


def test_noise_amplified_sgd_one_step():
    """One step: mean −η∇L, covariance T η C (single-sample noise rescaled by sqrt(T/η))."""
    model = DiagonalNet(width=2, weight_decay=0.05)
    ds = LAW.dataset(10, 4)
    theta = np.array([0.8, -0.5, 1.2, 0.4])
    lr, T, R = 0.01, 0.2, 40_000
    tr = run_noise_amplified_sgd(model, theta, ds, lr=lr, target_temperature=T, steps=1, runs=R, seed=9)
    C = model.noise_cov(theta, *ds.full())
    assert_step_moments(tr.theta[1] - tr.theta[0], -lr * model.grad(theta, *ds.full()), T * lr * C)
    tr = run_noise_amplified_sgd(ScalarModel(), [1.5, 0.5], LAW, lr=lr, target_temperature=T, steps=1, runs=R, seed=9)
    m = LAW.moments()
    b = ScalarModel().population_noise_factor([1.5, 0.5], m)
    assert_step_moments(tr.theta[1] - tr.theta[0], -lr * ScalarModel().population_grad([1.5, 0.5], m),
                        T * lr * np.outer(b, b))


# ---------------------------------------------------------------------------------------- validation
def test_bad_arguments_raise_value_error_naming_the_argument():
    m = ScalarModel()
    ds = Dataset([0.1, 0.5, -1.0], [0.2, 0.4, -0.9])
    with pytest.raises(ValueError, match="lr"):
        run_sgd(m, [1.0, 1.0], ds, lr=0.0, steps=1)
    with pytest.raises(ValueError, match="lr"):
        run_sgd(m, [1.0, 1.0], ds, lr=-0.1, steps=1)
    with pytest.raises(ValueError, match="batch_size"):
        run_sgd(m, [1.0, 1.0], ds, lr=0.1, steps=1, batch_size=4, replace=False)
    with pytest.raises(ValueError, match="runs"):
        run_sgd(m, [1.0, 1.0], ds, lr=0.1, steps=1, runs=0)
    with pytest.raises(ValueError, match="runs"):
        run_sgd(m, np.ones((3, 2)), ds, lr=0.1, steps=1, runs=2)
    with pytest.raises(ValueError, match="theta0"):
        run_sgd(m, [1.0, 1.0, 1.0], ds, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="theta0"):
        run_sgd(m, [1.0, np.nan], ds, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="steps"):
        run_sgd(m, [1.0, 1.0], ds, lr=0.1, steps=-1)
    with pytest.raises(ValueError, match="record_every"):
        run_sgd(m, [1.0, 1.0], ds, lr=0.1, steps=1, record_every=0)
    with pytest.raises(ValueError, match="engine"):
        run_sgd(m, [1.0, 1.0], ds, lr=0.1, steps=1, engine="cuda")
    with pytest.raises(ValueError, match="compiled"):
        run_sgd(DiagonalNet(2), np.ones(4), ds, lr=0.1, steps=1, engine="compiled")
    with pytest.raises(ValueError, match="data"):
        run_sgd(m, [1.0, 1.0], (ds.x, ds.y), lr=0.1, steps=1)
    with pytest.raises(ValueError, match="data does not fit"):
        run_sgd(Rank1LinearModel(2, 2), np.ones(4), ds, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="eval_data"):
        run_sgd(m, [1.0, 1.0], ds, lr=0.1, steps=1, eval_data=LAW)
    with pytest.raises(ValueError, match="seed"):
        run_sgd(m, [1.0, 1.0], ds, lr=0.1, steps=1, seed=None)
    with pytest.raises(ValueError, match="temperature"):
        run_sde(m, [1.0, 1.0], ds, temperature=-1.0, dt=0.1, steps=1)
    with pytest.raises(ValueError, match="dt"):
        run_sde(m, [1.0, 1.0], ds, temperature=0.1, dt=0.0, steps=1)
    with pytest.raises(ValueError, match="t_end"):
        run_gradient_flow(m, [1.0, 1.0], ds, t_end=0.0)
    with pytest.raises(ValueError, match="n_records"):
        run_gradient_flow(m, [1.0, 1.0], ds, t_end=1.0, n_records=1)
    with pytest.raises(ValueError, match="noise_std"):
        run_langevin(m, [1.0, 1.0], ds, lr=0.1, noise_std=-1.0, steps=1)
    with pytest.raises(ValueError, match="target_temperature"):
        run_noise_amplified_sgd(m, [1.0, 1.0], ds, lr=0.1, target_temperature=0.0, steps=1)
    with pytest.raises(ValueError, match="Dataset"):
        run_gd(Rank1LinearModel(2, 2), np.ones(4), GaussianData(d_in=2, d_out=2), lr=0.1, steps=1)


def test_rank1_model_of_size_one_runs_on_scalar_data():
    """Regression: scalar data (1-D arrays) fed to Rank1LinearModel(1, 1) used to crash in einsum."""
    from symsgd_core.balance.models import Rank1LinearModel, ScalarModel

    theta0 = np.array([1.5, 0.5])
    for data in (GaussianData(), GaussianData().dataset(64, seed=1)):
        rank1 = run_sgd(Rank1LinearModel(1, 1), theta0, data, lr=0.01, steps=50, runs=3, seed=4)
        scalar = run_sgd(ScalarModel(), theta0, data, lr=0.01, steps=50, runs=3, seed=4, engine="reference")
        np.testing.assert_allclose(rank1.final_theta, scalar.final_theta, rtol=1e-12, atol=1e-14)
