"""Tests for symsgd_core.balance.models: gradients vs torch autograd, the symmetry identity, noise covariance."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from symsgd_core.balance.data import Dataset, GaussianData
from symsgd_core.balance.models import OBSERVABLE_KEYS, DiagonalNet, Rank1LinearModel, ScalarModel

EPS = np.finfo(np.float64).eps
R, N = 3, 9


def torch_loss(model, theta, x, y):
    """Per-sample data loss written independently in torch, for autograd. theta: (P,), x, y: one sample."""
    if isinstance(model, ScalarModel):
        return (theta[0] * theta[1] * x - y) ** 2
    if isinstance(model, DiagonalNet):
        layers = theta.reshape(model.depth + 1, model.width)
        return (layers.prod(dim=0).sum() * x - y) ** 2
    if isinstance(model, Rank1LinearModel):
        u, w = theta[: model.d_out], theta[model.d_out:]
        return ((u * (w @ x) - y) ** 2).sum()
    raise TypeError(model)


def make_case(model, seed=0):
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((R, model.n_params))
    if isinstance(model, Rank1LinearModel):
        x, y = GaussianData(d_in=model.d_in, d_out=model.d_out, k=0.7).sample(N, rng)
    else:
        x, y = GaussianData(k=0.7, sigma=0.5).sample(N, rng)
    return theta, x, y


MODELS = [
    ScalarModel(),
    ScalarModel(weight_decay=0.1),
    Rank1LinearModel(d_in=3, d_out=2),
    Rank1LinearModel(d_in=1, d_out=4, weight_decay=0.05),
    DiagonalNet(width=4),
    DiagonalNet(width=3, depth=1, weight_decay=0.2),
    DiagonalNet(width=2, depth=3),
]
IDS = [repr(m) for m in MODELS]


def autograd_per_sample(model, theta, x, y):
    losses = np.empty((R, N))
    grads = np.empty((R, N, model.n_params))
    for r in range(R):
        for n in range(N):
            th = torch.tensor(theta[r], requires_grad=True)
            ell = torch_loss(model, th, torch.as_tensor(np.array(x[n])), torch.as_tensor(np.array(y[n])))
            (g,) = torch.autograd.grad(ell, th)
            losses[r, n] = ell.item()
            grads[r, n] = g.numpy()
    return losses, grads


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_per_sample_loss_and_grad_match_autograd(model):
    theta, x, y = make_case(model)
    losses, grads = autograd_per_sample(model, theta, x, y)
    scale = np.abs(grads).max() + 1.0
    np.testing.assert_allclose(model.per_sample_loss(theta, x, y), losses, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(model.per_sample_grad(theta, x, y), grads, rtol=0, atol=64 * EPS * scale)
    # full loss and gradient add γ‖θ‖² and 2γθ
    gamma = model.weight_decay
    np.testing.assert_allclose(model.loss(theta, x, y), losses.mean(1) + gamma * (theta**2).sum(1), rtol=1e-12)
    np.testing.assert_allclose(model.grad(theta, x, y), grads.mean(1) + 2 * gamma * theta, rtol=0,
                               atol=64 * EPS * scale)


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_per_sample_symmetry_identity(model):
    """θᵀB∇ℓ(θ, x_n) = 0 for every sample, to float64 round-off (scale ‖θ‖·‖∇ℓ‖, P terms)."""
    theta, x, y = make_case(model, seed=1)
    res = model.symmetry_residual(theta, x, y)
    g = model.per_sample_grad(theta, x, y)
    scale = np.abs(theta).max() * np.abs(g).max()
    assert res.shape == (R, N)
    assert np.abs(res).max() <= 64 * model.n_params * EPS * scale
    # ... and θᵀBC(θ) = 0 (the noise covariance is degenerate along Bθ)
    C = model.noise_cov(theta, x, y)
    Bth = theta * model.balance_signs()
    assert np.abs(np.einsum("rp,rpq->rq", Bth, C)).max() <= 64 * model.n_params * N * EPS * scale * np.abs(g).max()


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_symmetry_pairs_leave_loss_invariant(model):
    theta, x, y = make_case(model, seed=2)
    base = model.per_sample_loss(theta, x, y)
    for pair in [None, *range(len(model.pairs))]:
        moved = model.rescale(theta, 1.7, pair=pair)
        assert not np.allclose(moved, theta)
        np.testing.assert_allclose(model.per_sample_loss(moved, x, y), base, rtol=1e-12, atol=1e-12)
        # per-pair identity θ_pᵀB_p∇ℓ = 0
    g = model.per_sample_grad(theta, x, y)
    for u, w in model.pairs:
        res = np.einsum("rnp,rp->rn", g[:, :, u], theta[:, u]) - np.einsum("rnp,rp->rn", g[:, :, w], theta[:, w])
        assert np.abs(res).max() <= 1e-12 * (1 + np.abs(g).max())


def test_symmetry_identity_can_fail():
    """A loss without the symmetry (an extra u³x term) gives a clearly non-zero residual."""

    class Broken(ScalarModel):
        def _per_sample_grad(self, th, x, y):
            g = super()._per_sample_grad(th, x, y)
            g[:, :, 0] += 3 * th[:, None, 0] ** 2 * x
            return g

    theta, x, y = make_case(ScalarModel(), seed=3)
    assert np.abs(Broken().symmetry_residual(theta, x, y)).max() > 1e-3


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_noise_cov_traces_and_G_rate(model):
    theta, x, y = make_case(model, seed=4)
    g = model.per_sample_grad(theta, x, y)
    gc = g - g.mean(1, keepdims=True)
    C_ref = np.einsum("rnp,rnq->rpq", gc, gc) / N
    C = model.noise_cov(theta, x, y)
    np.testing.assert_allclose(C, C_ref, rtol=1e-12, atol=1e-12 * np.abs(C_ref).max())
    tu, tw = model.noise_traces(theta, x, y)
    u, w = model.u_index, model.w_index
    np.testing.assert_allclose(tu, np.trace(C[:, u][:, :, u], axis1=1, axis2=2), rtol=1e-11)
    np.testing.assert_allclose(tw, np.trace(C[:, w][:, :, w], axis1=1, axis2=2), rtol=1e-11)
    T = 0.05
    trCB = np.einsum("rpp,p->r", C, model.balance_signs())
    G = model.G(theta)
    np.testing.assert_allclose(G, (theta[:, u] ** 2).sum(1) - (theta[:, w] ** 2).sum(1), rtol=1e-14)
    np.testing.assert_allclose(model.G_rate(theta, x, y, T), T * trCB - 4 * model.weight_decay * G, rtol=1e-10,
                               atol=1e-12 * (1 + np.abs(trCB).max()))


@pytest.mark.parametrize("model", [m for m in MODELS if not isinstance(m, Rank1LinearModel)],
                         ids=[i for m, i in zip(MODELS, IDS) if not isinstance(m, Rank1LinearModel)])
def test_scalar_input_moments_path_equals_per_sample_path(model):
    theta, x, y = make_case(model, seed=5)
    ds = Dataset(x, y)
    m = ds.moments()
    T = 0.03
    a = model.evaluate(theta, x, y, temperature=T)
    b = model.evaluate_moments(theta, m, temperature=T)
    assert set(a) == set(b) == set(OBSERVABLE_KEYS)
    for key in OBSERVABLE_KEYS:
        np.testing.assert_allclose(a[key], b[key], rtol=1e-10, atol=1e-12, err_msg=key)
    np.testing.assert_allclose(model.population_grad(theta, m), model.grad(theta, x, y), rtol=1e-10, atol=1e-12)
    bvec = model.population_noise_factor(theta, m)
    np.testing.assert_allclose(np.einsum("rp,rq->rpq", bvec, bvec), model.noise_cov(theta, x, y), rtol=1e-9,
                               atol=1e-12)


def test_scalar_model_closed_forms():
    """Paper: d(u² − w²)/dt = −4T g(v)(u² − w²) for ℓ = (uwx − y)², with g from the data moments."""
    model = ScalarModel()
    law = GaussianData(k=1.0, sigma=1.0)
    m = law.moments()
    theta = np.array([[1.5, 0.5], [0.3, -2.0]])
    T = 0.01
    ev = model.evaluate_moments(theta, m, T)
    v = theta[:, 0] * theta[:, 1]
    g = 2 * v**2 - 4 * v + 3  # α = (2, 2, 3) for k = σ = 1
    np.testing.assert_allclose(ev["dG_dt_theory"], -4 * T * g * (theta[:, 0] ** 2 - theta[:, 1] ** 2), rtol=1e-13)
    np.testing.assert_allclose(ev["loss"], (v - 1) ** 2 + 1, rtol=1e-13)


@pytest.mark.parametrize("model", [MODELS[0], MODELS[2], MODELS[3]], ids=[IDS[0], IDS[2], IDS[3]])
def test_lifted_grad(model):
    """A = ∂ℓ̃/∂M at M = u wᵀ (autograd of ℓ̃(M) = ‖Mx − y‖²): ∂ℓ/∂u = A w, ∂ℓ/∂w = Aᵀ u."""
    theta, x, y = make_case(model, seed=6)
    A = model.lifted_grad(theta, x, y)
    du = len(model.u_index)
    dw = len(model.w_index)
    assert A.shape == (R, N, du, dw)
    g = model.per_sample_grad(theta, x, y)
    u, w = theta[:, model.u_index], theta[:, model.w_index]
    np.testing.assert_allclose(np.einsum("rnij,rj->rni", A, w), g[:, :, model.u_index], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.einsum("rnij,ri->rnj", A, u), g[:, :, model.w_index], rtol=0, atol=1e-12)
    xs = x.reshape(N, -1)
    ys = y.reshape(N, -1)
    for r in range(R):
        for n in range(N):
            M = torch.tensor(np.outer(u[r], w[r]), requires_grad=True)
            ell = ((M @ torch.tensor(xs[n]) - torch.tensor(ys[n])) ** 2).sum()
            (gM,) = torch.autograd.grad(ell, M)
            np.testing.assert_allclose(A[r, n], gM.numpy(), rtol=0, atol=1e-12)


def test_diagonal_net_structure_and_zero_entries():
    net = DiagonalNet(width=3, depth=2)
    assert net.n_params == 9
    np.testing.assert_array_equal(net.u_index, [0, 1, 2])
    np.testing.assert_array_equal(net.w_index, [3, 4, 5])
    assert len(net.pairs) == 6
    np.testing.assert_array_equal(net.layer_index(2), [6, 7, 8])
    np.testing.assert_array_equal(net.balance_signs(), [1, 1, 1, -1, -1, -1, 0, 0, 0])
    theta = np.array([1.0, 0.0, 2.0, 3.0, 1.0, 0.0, 0.5, 4.0, -1.0])  # zeros: no division allowed
    np.testing.assert_allclose(net.path_values(theta), [1.5, 0.0, 0.0])
    assert net.v(theta) == pytest.approx(1.5)
    th = torch.tensor(theta, requires_grad=True)
    (dv,) = torch.autograd.grad(th.reshape(3, 3).prod(0).sum(), th)
    np.testing.assert_allclose(net.dv(theta), dv.numpy(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(net.pair_G(theta), [1.0 - 9, 0 - 1, 4 - 0, 9 - 0.25, 1 - 16, 0 - 1])


def test_per_run_data_equals_shared_data():
    model = Rank1LinearModel(d_in=2, d_out=3)
    theta, x, y = make_case(model, seed=7)
    xr = np.broadcast_to(x, (R,) + x.shape)
    yr = np.broadcast_to(y, (R,) + y.shape)
    np.testing.assert_allclose(model.per_sample_grad(theta, xr, yr), model.per_sample_grad(theta, x, y))
    smodel = ScalarModel()
    theta, x, y = make_case(smodel, seed=7)
    np.testing.assert_allclose(smodel.grad(theta, np.tile(x, (R, 1)), np.tile(y, (R, 1))), smodel.grad(theta, x, y))


def test_one_dimensional_theta_drops_run_axis():
    model = ScalarModel()
    x, y = GaussianData().sample(5, 0)
    assert model.loss([1.0, 2.0], x, y).shape == ()
    assert model.per_sample_grad([1.0, 2.0], x, y).shape == (5, 2)
    assert model.G([2.0, 1.0]) == pytest.approx(3.0)


def test_validation_errors():
    model = ScalarModel()
    x, y = GaussianData().sample(5, 0)
    with pytest.raises(ValueError, match="theta"):
        model.loss(np.ones((2, 3)), x, y)
    with pytest.raises(ValueError, match="theta"):
        model.loss([np.nan, 1.0], x, y)
    with pytest.raises(ValueError, match="x must contain only finite"):
        model.loss([1.0, 1.0], np.full(5, np.inf), y)
    with pytest.raises(ValueError, match="y must have the same shape"):
        model.loss([1.0, 1.0], x, y[:3])
    with pytest.raises(ValueError, match="R = 2"):
        model.loss(np.ones((2, 2)), np.ones((3, 5)), np.ones((3, 5)))
    with pytest.raises(ValueError, match="weight_decay"):
        ScalarModel(weight_decay=-0.1)
    with pytest.raises(ValueError, match="width"):
        DiagonalNet(width=0)
    with pytest.raises(ValueError, match="depth"):
        DiagonalNet(width=2, depth=0)
    with pytest.raises(ValueError, match="lam"):
        model.rescale([1.0, 1.0], -2.0)
    with pytest.raises(ValueError, match="pair"):
        model.rescale([1.0, 1.0], 2.0, pair=3)
    with pytest.raises(ValueError, match="temperature"):
        model.G_rate([1.0, 1.0], x, y, -0.1)
    r1 = Rank1LinearModel(d_in=3, d_out=2)
    with pytest.raises(ValueError, match="x must have shape"):
        r1.loss(np.ones(5), np.ones((4, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="y must have shape"):
        r1.loss(np.ones(5), np.ones((4, 3)), np.ones((4, 3)))


@settings(max_examples=25, deadline=None)
@given(theta=hnp.arrays(np.float64, (2, 6), elements=st.floats(-3, 3)),
       x=hnp.arrays(np.float64, (5,), elements=st.floats(-3, 3)),
       y=hnp.arrays(np.float64, (5,), elements=st.floats(-3, 3)))
def test_symmetry_identity_property(theta, x, y):
    """Property: θᵀB∇ℓ = 0 for any parameters and data (depth-2 diagonal net, width 2)."""
    model = DiagonalNet(width=2, depth=2)
    g = model.per_sample_grad(theta, x, y)
    scale = (1 + np.abs(theta).max()) * (1 + np.abs(g).max())
    assert np.abs(model.symmetry_residual(theta, x, y)).max() <= 64 * model.n_params * EPS * scale
