"""Tests of the law-of-balance checks (symsgd_core.balance.checks).

Three kinds: every check passes on the engine (and deterministically); checks 1, 2, 4, 6 pass on
random instances drawn by hypothesis; and every check FAILS when fed a loss without the
symmetry, a wrong formula or a wrong dynamics — a check that cannot fail is not a check.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symsgd_core import registered_checks
from symsgd_core.balance import checks as bal
from symsgd_core.balance.attention import TorchSymmetricLoss, attention_score_model
from symsgd_core.balance.data import GaussianData
from symsgd_core.balance.dynamics import run_sde, run_sgd
from symsgd_core.balance.law import corollary_rate
from symsgd_core.balance.models import DiagonalNet, ScalarModel
from symsgd_core.balance.relu import ReLUNet


def by_name(results):
    return {r.name: r for r in results}


def assert_all_pass(results):
    failed = [str(r) for r in results if not r.passed]
    assert not failed, "\n".join(failed)


# ----------------------------------------------------------------------------- broken inputs


class BrokenScalar(ScalarModel):
    """``ℓ = ((uw + c·u)x − y)²``: the extra ``c·u·x`` breaks ``ℓ(λu, w/λ) = ℓ(u, w)``.

    It inherits ScalarModel's ``lifted_grad`` ``A = 2(vx − y)x``, for which ``∂ℓ/∂u = A w`` is now false.
    """

    name = "broken_scalar"
    c = 0.7

    def _v(self, th):
        return th[:, 0] * th[:, 1] + self.c * th[:, 0]

    def _dv(self, th):
        return np.stack([th[:, 1] + self.c, th[:, 0]], axis=1)


def broken_torch_instance(seed=0, runs=3, n=12):
    """Torch loss ``(uwx − y)² + (u + w)x``: the term ``(u + w)x`` breaks the symmetry."""

    def loss(theta, x, y):
        u, w = theta[0], theta[1]
        return (u * w * x[0] - y[0]) ** 2 + (u + w) * x[0]

    model = TorchSymmetricLoss("broken_torch", loss, 2, 1, 1, [0], [1], [([0], [1])])
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 1))
    return bal.Instance("broken_torch", model, rng.standard_normal((runs, 2)), x, x + rng.standard_normal((n, 1)))


def broken_engine_instance(seed=0, runs=3, n=12):
    rng = np.random.default_rng(seed)
    x, y = GaussianData().sample(n, rng)
    return bal.Instance("broken_scalar", BrokenScalar(), rng.standard_normal((runs, 2)), x, y)


class UncenteredTraces(DiagonalNet):
    """Wrong ``noise_traces``: second moments instead of covariances (forgets to subtract the mean)."""

    def _noise_traces(self, th, x, y):
        g = self._per_sample_grad(th, x, y)
        return (np.mean(np.sum(g[:, :, self.u_index] ** 2, axis=2), axis=1),
                np.mean(np.sum(g[:, :, self.w_index] ** 2, axis=2), axis=1))


class NoDecayRate(ScalarModel):
    """Wrong ``G_rate``: forgets the weight-decay term ``−4γG``."""

    def G_rate(self, theta, x, y, temperature):
        return super().G_rate(theta, x, y, temperature) + 4.0 * self.weight_decay * self.G(theta)


# ----------------------------------------------------------------------------- all pass, deterministic


def test_balance_checks_are_registered():
    names = set(registered_checks())
    for name in ("balance.symmetry", "balance.null_space", "balance.ito", "balance.theorem",
                 "balance.g_is_ode", "balance.discrete", "balance.conservation", "balance.corollary"):
        assert name in names


@pytest.mark.parametrize("check", [bal.check_symmetry_per_sample, bal.check_null_space, bal.check_ito_terms,
                                   bal.check_theorem_forms, bal.check_discrete_identity])
def test_algebraic_checks_pass_on_seed_1(check):
    results = check(seed=1)
    assert results and all(r.name.startswith("balance.") for r in results)
    assert_all_pass(results)


def test_symmetry_check_covers_relu_layer_and_attention():
    names = {r.name for r in bal.check_symmetry_per_sample(seed=0)}
    assert {"balance.symmetry[relu_layer]", "balance.symmetry[attention_k1]",
            "balance.symmetry[attention_k2]", "balance.symmetry[diagonal_depth2]"} <= names


def test_results_are_deterministic_given_seed():
    a = bal.check_discrete_identity(seed=3, runs=50)
    b = bal.check_discrete_identity(seed=3, runs=50)
    assert [r.measured for r in a] == [r.measured for r in b]
    c = bal.check_g_is_ode(seed=3, runs=500, n_boot=20)
    d = bal.check_g_is_ode(seed=3, runs=500, n_boot=20)
    assert [r.measured for r in c] == [r.measured for r in d]


def test_results_state_tolerance_source_and_serialise():
    for r in bal.check_null_space(seed=0) + bal.check_corollary_decay(seed=0, runs=200, t_end=5.0):
        assert r.tolerance_source and r.claim and np.isfinite(r.tolerance)
        assert "=" in r.claim or "≤" in r.claim  # the claim carries its equation
        r.as_dict()


def test_relu_instance_is_the_engine_net_with_its_drawn_parameters():
    inst = next(i for i in bal.symmetric_instances(0, d_in=2, hidden=3, d_out=2) if i.label == "relu_layer")
    m = inst.model
    assert isinstance(m, ReLUNet) and m.n_params == 2 * 3 + 3 + 2 * 3
    th, x, y = inst.theta[0], inst.x, inst.y
    W1, b1, W2 = th[:6].reshape(3, 2), th[6:9], th[9:].reshape(2, 3)  # the net's layout
    assert np.all(b1 >= 0)  # drawn positive, so that some neurons are active
    want = np.sum((np.maximum(x @ W1.T + b1, 0.0) @ W2.T - y) ** 2, axis=1)
    np.testing.assert_allclose(m.per_sample_loss(th, x, y), want, rtol=1e-13)
    # the per-neuron symmetry holds for the loss itself (λ > 0)
    th2 = th.copy()
    u, w = m.pairs[1]
    th2[u] *= 2.5
    th2[w] /= 2.5
    np.testing.assert_allclose(m.per_sample_loss(th2, x, y), m.per_sample_loss(th, x, y), rtol=1e-12)


def test_attention_lifted_grad_reproduces_the_gradients():
    m = attention_score_model(d=3, k=1)
    rng = np.random.default_rng(1)
    th, xz, y = rng.standard_normal((2, 6)), rng.standard_normal((5, 6)), rng.standard_normal((5, 1))
    A = m.lifted_grad(th, xz, y)  # (R, N, 3, 3)
    g = m.per_sample_grad(th, xz, y)
    u, w = th[:, :3], th[:, 3:]
    np.testing.assert_allclose(np.einsum("rnij,rj->rni", A, w), g[:, :, :3], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.einsum("rnij,ri->rnj", A, u), g[:, :, 3:], rtol=1e-12, atol=1e-12)


def test_instances_reject_bad_sizes():
    with pytest.raises(ValueError, match="n_samples"):
        bal.symmetric_instances(0, n_samples=0)
    with pytest.raises(ValueError, match="dts"):
        bal.check_g_is_ode(0, dts=[1e-3, 1e-2])
    with pytest.raises(ValueError, match="temperature"):
        bal.check_ito_terms(0, temperature=-1.0)


# ----------------------------------------------------------------------------- property-based (checks 1, 2, 4, 6)

sizes = st.fixed_dictionaries({
    "n_samples": st.integers(2, 20), "runs": st.integers(1, 3), "d_in": st.integers(1, 4),
    "d_out": st.integers(1, 4), "width": st.integers(1, 4), "hidden": st.integers(1, 5),
    "d_attn": st.integers(1, 4), "k_attn": st.integers(1, 3),
    "theta_scale": st.floats(0.05, 5.0, allow_nan=False, allow_infinity=False),
})
seeds = st.integers(0, 2**31 - 1)
prop = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@prop
@given(seed=seeds, sz=sizes)
def test_property_symmetry_per_sample(seed, sz):
    assert_all_pass(bal.check_symmetry_per_sample(seed, **sz))


@prop
@given(seed=seeds, sz=sizes)
def test_property_null_space(seed, sz):
    assert_all_pass(bal.check_null_space(seed, **sz))


@prop
@given(seed=seeds, sz=sizes, T=st.floats(1e-3, 10.0))
def test_property_theorem_forms(seed, sz, T):
    assert_all_pass(bal.check_theorem_forms(seed, temperature=T, **sz))


@prop
@given(seed=seeds, sz=sizes, lr=st.floats(1e-3, 1.0), S=st.integers(1, 8))
def test_property_discrete_identity(seed, sz, lr, S):
    sz = {**sz, "runs": 20}
    assert_all_pass(bal.check_discrete_identity(seed, lr=lr, batch_size=S, **sz))


# ----------------------------------------------------------------------------- every check can fail


@pytest.mark.parametrize("make", [broken_torch_instance, broken_engine_instance])
def test_symmetry_check_fails_without_the_symmetry(make):
    (res,) = bal.check_symmetry_per_sample(instances=[make()])
    assert not res.passed and res.measured > 1e-3


def test_null_space_check_fails_without_the_symmetry():
    res = by_name(bal.check_null_space(instances=[broken_torch_instance(), broken_engine_instance()]))
    assert not res["balance.null_space.C"].passed
    assert not res["balance.null_space.sqrtC"].passed


def test_ito_check_fails_without_symmetry_wrong_root_or_wrong_rate():
    res = by_name(bal.check_ito_terms(instances=[broken_engine_instance()]))
    assert not res["balance.ito.drift"].passed and not res["balance.ito.noise"].passed
    assert res["balance.ito.correction"].passed  # an identity of Itô's lemma, symmetric or not
    res = by_name(bal.check_ito_terms(seed=0, matrix_sqrt=lambda C: C))  # D = TC is not sqrt(TC)
    assert not res["balance.ito.correction"].passed
    rng = np.random.default_rng(0)
    x, y = GaussianData().sample(10, rng)
    wrong = bal.Instance("no_decay", NoDecayRate(weight_decay=0.1), rng.standard_normal((3, 2)), x, y)
    res = by_name(bal.check_ito_terms(rate_instances=[wrong]))
    assert not res["balance.ito.G_rate"].passed


def test_theorem_forms_check_fails_with_wrong_formula_lifting_or_traces():
    swapped = lambda A: bal.paper_c_matrices(A)[::-1]  # noqa: E731  (C₁ ↔ C₂)
    res = by_name(bal.check_theorem_forms(seed=0, c_matrices=swapped, d_in=3, d_out=3))
    assert not res["balance.theorem.paper_form"].passed
    res = by_name(bal.check_theorem_forms(seed=0, c_matrices=swapped, d_in=3, d_out=2))  # shapes do not fit
    assert not res["balance.theorem.paper_form"].passed and "errors" in res["balance.theorem.paper_form"].details
    sign = lambda A: tuple(-c for c in bal.paper_c_matrices(A))  # noqa: E731
    assert not by_name(bal.check_theorem_forms(seed=0, c_matrices=sign))["balance.theorem.paper_form"].passed
    res = by_name(bal.check_theorem_forms(instances=[broken_engine_instance()]))
    assert not res["balance.theorem.paper_form"].passed  # A w is no longer ∂ℓ/∂u
    rng = np.random.default_rng(0)
    x, y = GaussianData().sample(10, rng)
    wrong = bal.Instance("uncentered", UncenteredTraces(3), rng.standard_normal((2, 6)), x, y)
    res = by_name(bal.check_theorem_forms(instances=[wrong, broken_engine_instance()]))
    assert not res["balance.theorem.trace_form"].passed


def test_discrete_check_fails_with_wrong_factor_or_without_symmetry():
    res = by_name(bal.check_discrete_identity(seed=0, runs=50, factor=lambda lr, g: 1.0 - lr * g**2))
    assert not res["balance.discrete.scalar"].passed
    res = by_name(bal.check_discrete_identity(seed=0, runs=50, factor=lambda lr, g: np.ones_like(g)))
    assert not res["balance.discrete.scalar"].passed  # "GD conserves G exactly" is false
    res = by_name(bal.check_discrete_identity(seed=0, runs=20, instances=[broken_torch_instance(runs=20)]))
    assert not res["balance.discrete.general"].passed


def _isotropic_step(model, theta0, data, T, dt, runs, seed):
    """Euler–Maruyama with isotropic noise of the same total variance: not the SGD noise."""
    x, y = data.full()
    th = np.tile(theta0, (runs, 1))
    trC = np.trace(model.noise_cov(theta0, x, y))
    xi = np.random.default_rng(seed).standard_normal(th.shape)
    return th - dt * model.grad(th, x, y) + np.sqrt(T * dt * trC / model.n_params) * xi


def _double_noise_step(model, theta0, data, T, dt, runs, seed):
    return run_sde(model, theta0, data, temperature=2.0 * T, dt=dt, steps=1, runs=runs, seed=seed).theta[-1]


def test_g_is_ode_check_fails_for_isotropic_noise_broken_model_or_wrong_temperature():
    res = by_name(bal.check_g_is_ode(seed=0, runs=1000, n_boot=50, sde_step=_isotropic_step))
    assert not res["balance.g_is_ode.var_G"].passed
    assert res["balance.g_is_ode.var_G"].details["slope"] < 1.5
    res = by_name(bal.check_g_is_ode(seed=0, runs=1000, n_boot=50, model=BrokenScalar()))
    assert not res["balance.g_is_ode.var_G"].passed
    res = by_name(bal.check_g_is_ode(seed=0, runs=2000, n_boot=20, sde_step=_double_noise_step))
    assert not res["balance.g_is_ode.drift"].passed


def test_conservation_check_fails_with_weight_decay_broken_model_or_sgd_noise():
    res = by_name(bal.check_conservation(seed=0, runs=100, steps=500, models=[ScalarModel(weight_decay=0.1)]))
    assert not res["balance.conservation.flow"].passed
    res = by_name(bal.check_conservation(seed=0, runs=100, steps=500, models=[BrokenScalar()]))
    assert not res["balance.conservation.flow"].passed

    def sgd(model, theta0, data, lr, steps, runs, seed):  # SGD keeps G = 0 exactly: E|G| does not grow
        return run_sgd(model, theta0, data, lr=lr, steps=steps, seed=seed, record_every=steps)

    res = by_name(bal.check_conservation(seed=0, runs=100, steps=500, models=[ScalarModel()], noisy=sgd))
    assert not res["balance.conservation.isotropic_noise"].passed


def test_corollary_check_fails_with_wrong_rate_or_target():
    kw = {"seed": 0, "runs": 300, "t_end": 15.0}
    res = by_name(bal.check_corollary_decay(rate=lambda T, m, g: 2.0 * corollary_rate(T, m, g), **kw))
    assert not res["balance.corollary.decay"].passed
    assert not res["balance.corollary.weight_decay"].passed
    res = by_name(bal.check_corollary_decay(target=lambda m: 0.8 * m.beta2 / m.beta1, **kw))
    assert not res["balance.corollary.v_limit"].passed
    assert res["balance.corollary.decay"].passed


def test_torch_model_validates_inputs():
    m = attention_score_model(d=2, k=2)
    with pytest.raises(ValueError, match="x must have shape"):
        m.per_sample_grad(np.zeros(m.n_params), np.zeros((4, 3)), np.zeros((4, 1)))
    with pytest.raises(ValueError, match="lifted_loss_fn"):
        m.lifted_grad(np.zeros(m.n_params), np.zeros((4, 4)), np.zeros((4, 1)))
    g = m.per_sample_grad(np.ones(m.n_params), np.ones((4, 4)), np.ones((4, 1)))
    assert g.dtype == np.float64 and g.shape == (1, 4, m.n_params)


# ------------------------------------------------------------------ notebook 01's further claims
def test_destination_check_defaults_are_the_three_dynamics_figure():
    import inspect

    from symsgd_core.balance.experiments import three_dynamics

    fig = inspect.signature(three_dynamics).parameters
    chk = inspect.signature(bal.check_destination_seed_independent).parameters
    for name in ("lr", "steps", "noise"):
        assert chk[name].default == fig[name].default, name
    assert tuple(chk["theta0"].default) == (fig["u0"].default, fig["w0"].default)


def test_destination_does_not_depend_on_the_seed_and_the_check_can_fail():
    rows = by_name(bal.check_destination_seed_independent())
    assert_all_pass(rows.values())
    # seeds started on mirrored sides end at (1, 1) and (−1, −1): the u row must catch it
    starts = np.array([[2.0, -0.3]] * 6 + [[-2.0, 0.3]] * 6)
    mirrored = by_name(bal.check_destination_seed_independent(theta0=starts))
    assert not mirrored["balance.destination.u"].passed
    # without isotropic noise the "walker" is GD: its G does not spread, so the contrast row must fail
    assert not by_name(bal.check_destination_seed_independent(noise=0.0))["balance.destination.G"].passed


def test_destination_check_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n_seeds"):
        bal.check_destination_seed_independent(n_seeds=2)
    with pytest.raises(ValueError, match="theta0"):
        bal.check_destination_seed_independent(theta0=np.zeros((3, 2)))


def test_c_has_exactly_one_zero_eigenvalue_at_both_ito_models():
    from symsgd_core.balance.experiments import ITO_MODELS, ito_point

    for model in ITO_MODELS:
        pt = ito_point(model)
        assert_all_pass(bal.check_one_zero_eigenvalue(pt.eigenvalues, pt.theta.size, model))


def test_one_zero_eigenvalue_check_fails_on_none_and_on_two():
    none_zero = by_name(bal.check_one_zero_eigenvalue([1.0, 2.0, 3.0], 3))
    assert not none_zero["balance.spectrum.one_zero"].passed
    two_zero = by_name(bal.check_one_zero_eigenvalue([0.0, 1e-15, 3.0], 3))
    assert two_zero["balance.spectrum.one_zero"].passed and not two_zero["balance.spectrum.only_one"].passed
    with pytest.raises(ValueError):
        bal.check_one_zero_eigenvalue([1.0], 1)


def test_balanced_norm_is_the_minimum_over_factorisations():
    rows = by_name(bal.check_balanced_norm_minimal())
    assert_all_pass(rows.values())
    s = np.linalg.svd(np.array([[1.0, 0.2], [0.3, 1.0]]), compute_uv=False)
    assert rows["balance.dln.norm_minimum"].details["bound"] == pytest.approx(3 * np.sum(s ** (2 / 3)), rel=1e-14)
    assert_all_pass(bal.check_balanced_norm_minimal(np.diag([2.0, 0.5]), depth=4, seed=3, widths=(2,)))


@pytest.mark.parametrize("factor", [1.01, 0.99])
def test_balanced_norm_check_fails_on_a_wrong_penalty(factor):
    def wrong(A, L):
        return factor * L * np.sum(np.linalg.svd(A, compute_uv=False) ** (2 / L))

    rows = by_name(bal.check_balanced_norm_minimal(penalty=wrong))
    assert not rows["balance.dln.norm_minimum"].passed
    if factor < 1:  # a bound below the minimum is not violated by any factorisation; the minimum row catches it
        assert rows["balance.dln.norm_lower_bound"].passed


def test_shipped_relu_run_is_transient_and_a_converged_run_is_not():
    from dataclasses import replace

    from symsgd_core.balance.experiments import load_relu_balance

    run = load_relu_balance()
    rows = by_name(bal.check_relu_transient(run))
    assert_all_pass(rows.values())
    d = rows["balance.relu.above_floor"].details
    assert d["floor"] == run.settings["d_out"] * run.settings["sigma"] ** 2
    assert d["teacher_ratio"] == pytest.approx(20 / 21)
    rng = np.random.default_rng(0)
    K = len(run.times)
    settled = replace(run, loss=d["floor"] + 0.01 * rng.standard_normal(K),
                      w_sq=run.w_sq[-1] + 0.01 * rng.standard_normal(K))
    rows = by_name(bal.check_relu_transient(settled))
    assert not rows["balance.relu.above_floor"].passed and not rows["balance.relu.still_moving"].passed


def test_relu_teacher_gives_the_per_neuron_ratio_and_wrong_predictions_fail():
    from symsgd_core.balance.relu import ReLUNet

    net = ReLUNet(3, 6, 3)
    x = np.random.default_rng(0).standard_normal((50, 3))
    assert np.allclose(net.forward(bal.relu_identity_teacher(net)[None, :], x).reshape(50, 3), x, atol=1e-14)
    with pytest.raises(ValueError, match="identity teacher"):
        bal.relu_identity_teacher(ReLUNet(3, 5, 3))
    (row,) = bal.check_relu_teacher_ratio()
    assert row.passed, row
    assert row.details["predicted"] == pytest.approx(20 / 21)
    for wrong in (1.0, 20 / 22):  # norm balance; a wrong count of the bias entry
        assert not bal.check_relu_teacher_ratio(predicted=wrong)[0].passed
