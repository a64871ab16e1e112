"""Tests of symsgd_core.balance.observables: the computations behind Notebook 01."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsgd_core import balance as ba
from symsgd_core.balance.data import GaussianData
from symsgd_core.balance.dynamics import run_sgd
from symsgd_core.balance.models import Rank1LinearModel, ScalarInputModel, ScalarModel
from symsgd_core.core.checking import EPS64

GAUSS = GaussianData(k=1.0, sigma=1.0)


class NoSymmetry(ScalarInputModel):
    """f = (u w + 0.3 u) x: the same blocks as ScalarModel, but ℓ(λu, w/λ) ≠ ℓ(u, w)."""

    name = "broken"
    n_params = 2

    def __init__(self):
        super().__init__(0.0)
        self.u_index, self.w_index = np.array([0]), np.array([1])
        self.pairs = [(self.u_index, self.w_index)]

    def _v(self, th):
        return th[:, 0] * th[:, 1] + 0.3 * th[:, 0]

    def _dv(self, th):
        return np.stack([th[:, 1] + 0.3, th[:, 0]], axis=1)


@pytest.fixture(scope="module")
def scalar_data():
    return GAUSS.dataset(500, seed=3)


# ------------------------------------------------------------------------------------------- Itô terms
@pytest.mark.parametrize("theta", [(1.5, 0.5), (-0.7, 2.0), (0.3, -0.1)])
def test_ito_terms_of_G_match_the_law_and_cancel(theta):
    m = ScalarModel()
    T = 0.07
    tg = ba.observables.ito_terms(m, theta, GAUSS, T, "G")
    mom = GAUSS.moments()
    u, w = theta
    law = -4.0 * T * float(mom.g(u * w)) * (u * u - w * w)
    assert tg.ito_correction == pytest.approx(law, rel=1e-12, abs=1e-14)
    assert abs(tg.drift) <= 64 * 4 * EPS64 * max(tg.drift_scale, 1e-300)
    assert tg.noise_std <= 1e-6 * tg.noise_scale + 1e-300  # sqrt of round-off (square root of C)
    tu = ba.observables.ito_terms(m, theta, GAUSS, T, "u_sq")
    assert tu.noise_std > 1e-3 and abs(tu.drift) > 1e-3
    assert tu.noise_std == pytest.approx(np.linalg.norm(tu.noise_vector), rel=1e-6)


def test_ito_terms_detect_a_loss_without_the_symmetry(scalar_data):
    tg = ba.observables.ito_terms(NoSymmetry(), np.array([1.5, 0.5]), scalar_data, 0.05, "G")
    assert abs(tg.drift) > 1e-3 * tg.drift_scale
    assert tg.noise_std > 1e-3 * tg.noise_scale


def test_ito_terms_rank1_drift_noise_vanish_and_rate_matches_traces():
    m = Rank1LinearModel(3, 2)
    x, y = GaussianData(sigma=1.0, d_in=3, d_out=2, teacher=ba.observables.rank1_teacher(3, 2)).sample(300, 1)
    th = np.array([0.4, -1.1, 0.9, 0.3, -0.6])
    tg = ba.observables.ito_terms(m, th, (x, y), 0.1, "G")
    tu, tw = m.noise_traces(th, x, y)
    assert tg.rate == pytest.approx(0.1 * (tu - tw), rel=1e-10)
    assert abs(tg.drift) <= 1e-12 * tg.drift_scale


def test_ito_terms_validate_arguments(scalar_data):
    m = ScalarModel()
    with pytest.raises(ValueError, match="observable"):
        ba.observables.ito_terms(m, [1.0, 1.0], scalar_data, 0.1, "v")
    with pytest.raises(ValueError, match="temperature"):
        ba.observables.ito_terms(m, [1.0, 1.0], scalar_data, -0.1)
    with pytest.raises(ValueError, match="theta"):
        ba.observables.ito_terms(m, [1.0, 1.0, 2.0], scalar_data, 0.1)
    with pytest.raises(ValueError, match="GaussianData"):
        ba.observables.ito_terms(Rank1LinearModel(2, 2), np.ones(4), GaussianData(d_in=2, d_out=2), 0.1)
    with pytest.raises(ValueError, match="model"):
        ba.observables.ito_terms("scalar", [1.0, 1.0], scalar_data, 0.1)


# ------------------------------------------------------------------------------------------- spectrum
def test_noise_spectrum_marks_B_theta_as_null(scalar_data):
    spec = ba.observables.noise_spectrum(ScalarModel(), [1.5, 0.5], scalar_data)
    assert spec.rayleigh <= spec.null_tolerance
    assert spec.overlaps.sum() == pytest.approx(1.0)
    assert spec.overlaps[0] == pytest.approx(1.0)  # all weight on the smallest (zero) eigenvalue
    assert spec.rank == 1
    broken = ba.observables.noise_spectrum(NoSymmetry(), [1.5, 0.5], scalar_data)
    assert broken.rayleigh > 1e3 * broken.null_tolerance
    with pytest.raises(ValueError, match="direction"):
        ba.observables.noise_spectrum(ScalarModel(), [0.0, 0.0], scalar_data)


# ------------------------------------------------------------------------------------------- orbit
def test_orbit_invariance_passes_with_symmetry_and_fails_without():
    lams = np.geomspace(0.25, 4, 41)
    x, y = np.array([1.3, -0.4]), np.array([0.8, 2.0])
    good = ba.claims.orbit_invariance(ScalarModel(), [1.5, -0.5], x, y, lams)
    assert good.passed and good.details["G_min"] < good.details["G_max"]
    bad = ba.claims.orbit_invariance(NoSymmetry(), [1.5, -0.5], x, y, lams)
    assert not bad.passed
    with pytest.raises(ValueError, match="lambdas"):
        ba.claims.orbit_invariance(ScalarModel(), [1.0, 1.0], x, y, [1.0, -1.0])


# ------------------------------------------------------------------------------------------- mean field
def test_mean_field_conserves_G_at_zero_temperature_and_decays_with_weight_decay():
    t = np.linspace(0, 20, 50)
    out = ba.observables.mean_field_balance(GAUSS.moments(), [1.5, 0.5], 0.0, t)
    assert out["success"]
    assert np.max(np.abs(out["G"] - 2.0)) < 1e-8
    assert out["v"][-1] == pytest.approx(1.0, abs=1e-6)  # the flow learns v = β₂/β₁
    wd = ba.observables.mean_field_balance(GAUSS.moments(), [1.5, 0.5], 0.0, t, weight_decay=0.01)
    np.testing.assert_allclose(wd["G"], 2.0 * np.exp(-0.04 * t), rtol=1e-7)


def test_mean_field_G_decays_between_the_corollary_rates():
    t = np.linspace(0, 40, 81)
    T = 0.02
    out = ba.observables.mean_field_balance(GAUSS.moments(), [1.5, 0.5], T, t)
    assert np.all(np.diff(out["G"]) < 0)
    assert np.all(out["G"][1:] <= 2.0 * np.exp(-4 * T * 1.0 * t[1:]) * (1 + 1e-9))  # g ≥ Δ/α₁ = 1


# ------------------------------------------------------------------------------------------- discrete identity
def test_discrete_step_factors_on_an_engine_run_and_a_tampered_one():
    traj = run_sgd(ScalarModel(), [1.5, 0.5], GAUSS, lr=0.1, steps=300, batch_size=2, seed=4)
    th = traj.theta[:, 0, :]
    f = ba.observables.discrete_step_factors(th, 0.1)
    assert np.all(np.abs(f["residual"]) <= f["tolerance"])
    tampered = th.copy()
    tampered[150, 1] *= 1 + 1e-6  # one coordinate nudged: the common ḡ_B is gone
    g = ba.observables.discrete_step_factors(tampered, 0.1)
    assert np.any(np.abs(g["residual"]) > g["tolerance"])
    with pytest.raises(ValueError, match="shape"):
        ba.observables.discrete_step_factors(np.ones((5, 3)), 0.1)


def test_spread_summary_matches_numpy():
    a = np.random.default_rng(0).normal(size=(7, 50))
    s = ba.observables.spread_summary(a)
    np.testing.assert_allclose(s["std"], a.std(axis=1))
    np.testing.assert_allclose(s["q95"], np.quantile(a, 0.95, axis=1))
    assert s["stderr_std"] == pytest.approx(a[-1].std() / math.sqrt(98))
    with pytest.raises(ValueError, match="2 runs"):
        ba.observables.spread_summary(np.ones((3, 1)))


# ------------------------------------------------------------------------------------------- §5 pieces
def test_rank1_population_terms_match_a_large_sample():
    K = ba.observables.rank1_teacher(3, 2)
    th = np.array([0.5, -0.3, 1.0, 0.2, -0.7])
    m = Rank1LinearModel(3, 2)
    x, y = GaussianData(sigma=0.8, d_in=3, d_out=2, teacher=K).sample(200_000, 1)
    pop = ba.observables.rank1_population_terms(th, K, 0.8)
    g = m.per_sample_grad(th, x, y)
    gc = g - g.mean(axis=0)
    for key, idx in (("tr_u", m.u_index), ("tr_w", m.w_index)):
        d = np.sum(gc[:, idx] ** 2, axis=1)
        assert abs(d.mean() - pop[key]) <= 4 * d.std() / math.sqrt(d.size)  # z = 4 Monte-Carlo tolerance
    # the mean gradients have a Monte-Carlo error too: compare componentwise with z = 4
    for key, idx in (("grad_sq_u", m.u_index), ("grad_sq_w", m.w_index)):
        se = g[:, idx].std(axis=0) / math.sqrt(g.shape[0])
        exact = math.sqrt(pop[key])
        assert abs(np.linalg.norm(g[:, idx].mean(axis=0)) - exact) <= 4 * np.linalg.norm(se)


def test_relu_closed_form_traces_agree_with_torch():
    from symsgd_core.balance.relu import ReLUNet

    for dims, bias in (((3, 4, 2), True), ((5, 7, 3), False)):
        fast, ref = ReLUNet(*dims, bias=bias), ReLUNet(*dims, bias=bias, grad_backend="torch")
        th = ref.init_params(2, seed=1)
        if bias:
            th[:, ref._b1] = 0.3
        x = np.random.default_rng(2).normal(size=(40, dims[0]))
        y = np.random.default_rng(3).normal(size=(40, dims[2]))
        np.testing.assert_allclose(fast.noise_traces(th, x, y), ref.noise_traces(th, x, y), rtol=1e-11)
        for a, b in zip(fast.per_neuron_noise_traces(th, x, y), ref.per_neuron_noise_traces(th, x, y)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(fast.per_sample_loss(th, x, y), ref.per_sample_loss(th, x, y), rtol=1e-12)


def _synthetic_run(shift=1.0, seed=0):
    """A run that obeys the law in expectation: G increments = T(tu − tw)Δt + η·Δgrad Δt + noise."""
    rng = np.random.default_rng(seed)
    K, lr = 41, 0.01
    t = np.linspace(0, 40, K)
    tw = 10 + rng.normal(0, 0.5, K)
    tu = tw + 0.3 + rng.normal(0, 0.5, K)
    gu, gw = 0.2 + 0.01 * rng.random(K), 0.1 + 0.01 * rng.random(K)
    rate = lr * (tu - tw) + lr * (gu - gw)
    inc = 0.5 * (rate[1:] + rate[:-1]) * np.diff(t) + rng.normal(0, 1e-3, K - 1)
    G = np.concatenate([[1.0], 1.0 + np.cumsum(inc)])
    return dict(times=t, G=G, tr_u=tu * shift, tr_w=tw, grad_sq_u=gu, grad_sq_w=gw, lr=lr, batch_size=1,
                trace_se=(0.0, 0.0, 0.0))


def test_noise_balance_check_passes_a_consistent_run_and_fails_a_wrong_one():
    good = ba.claims.noise_balance_check(**_synthetic_run(), window=0.5)
    assert good.passed, good
    assert good.details["predicted_ratio"] == pytest.approx(good.details["trace_ratio"], abs=0.02)
    bad = ba.claims.noise_balance_check(**_synthetic_run(shift=1.3), window=0.5)
    assert not bad.passed, bad
    with pytest.raises(ValueError, match="intervals"):
        ba.claims.noise_balance_check(**_synthetic_run(), window=0.05)


def test_rank1_run_balances_noise_not_norms():
    run = ba.rank1_balance(4, 1, steps=3000, runs=4, n_records=61)
    nb, norms = ba.claims.noise_vs_norm_claims(run.mean, 0.015, 1, window=0.5)
    assert nb.passed and norms.passed
    assert norms.details["norm_ratio"] == pytest.approx(1 / 4, rel=0.3)  # isotropic estimate d_out/d_in


def test_relu_run_is_deterministic_and_chunking_does_not_change_it():
    small = {**ba.experiments.RELU_SMALL, "hidden": 6, "d_in": 2, "d_out": 2, "steps": 200, "n_records": 11,
             "n_eval": 64}
    a = ba.relu_balance_run(**small)
    seen = []
    b = ba.relu_balance_run(**small, chunks=5, progress=seen.append)
    assert seen == [0.2, 0.4, 0.6, 0.8, 1.0]
    for key in ("G", "tr_cov_u", "tr_cov_w", "u_sq", "grad_sq_w", "times"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))
    with pytest.raises(ValueError, match="multiple"):
        ba.relu_balance_run(**{**small, "steps": 205})


def test_shipped_relu_file_matches_a_regeneration_of_its_first_records(tmp_path):
    """The data file was made by relu_balance_run(**RELU_FIG2): regenerate its first record interval."""
    run = ba.experiments.load_relu_balance()
    assert run.settings == ba.RELU_FIG2
    K = ba.RELU_FIG2["n_records"]
    for key in ("times", "G", "tr_cov_u", "tr_cov_w", "u_sq", "w_sq", "grad_sq_u", "grad_sq_w", "loss"):
        assert getattr(run, key).shape == (K,) and np.all(np.isfinite(getattr(run, key)))
    every = ba.RELU_FIG2["steps"] // (K - 1)
    again = ba.relu_balance_run(**{**ba.RELU_FIG2, "steps": every, "n_records": 2})
    for key in ("times", "G", "tr_cov_u", "tr_cov_w", "u_sq", "w_sq", "loss"):
        np.testing.assert_allclose(getattr(again, key), getattr(run, key)[:2], rtol=1e-10, err_msg=key)
    # write/load round trip at a small size
    path = tmp_path / "small.npz"
    small = {"d_in": 2, "hidden": 4, "d_out": 2, "steps": 20, "n_records": 3, "n_eval": 16}
    written = ba.experiments.write_relu_balance(path, **small)
    loaded = ba.experiments.load_relu_balance(path)
    np.testing.assert_array_equal(written.G, loaded.G)
    assert loaded.settings == {**ba.RELU_FIG2, **small}
    with pytest.raises(ValueError, match="regenerate"):
        ba.experiments.load_relu_balance(tmp_path / "missing.npz")
