"""Tests for symsgd_core.balance.relu: ReLU net gradients vs torch autograd, per-neuron symmetry, noise traces."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from symsgd_core.balance.data import GaussianData
from symsgd_core.balance.dynamics import run_sgd
from symsgd_core.balance.relu import ReLUNet

EPS = np.finfo(np.float64).eps
R, N = 2, 11


def make_case(net, seed=0):
    rng = np.random.default_rng(seed)
    theta = net.init_params(R, rng)
    if net.bias:
        b_idx = np.array([w[-1] for _, w in net.pairs])
        theta[:, b_idx] = 0.3 * rng.standard_normal((R, net.hidden))
    x, y = GaussianData(d_in=net.d_in, d_out=net.d_out, k=1.0).sample(N, rng)
    return theta, x, y


def torch_per_sample(net, theta, x, y):
    """Independent torch implementation (nn-style matrices) and a plain autograd loop."""
    losses = np.empty((R, N))
    grads = np.empty((R, N, net.n_params))
    for r in range(R):
        p = net.unpack(theta[r])
        for n in range(N):
            W1 = torch.tensor(p["W1"], requires_grad=True)
            b1 = torch.tensor(p["b1"], requires_grad=True)
            W2 = torch.tensor(p["W2"], requires_grad=True)
            f = W2 @ torch.relu(W1 @ torch.tensor(x[n]) + (b1 if net.bias else 0.0))
            ell = ((f - torch.tensor(y[n])) ** 2).sum()
            gW1, gb1, gW2 = torch.autograd.grad(ell, (W1, b1, W2), allow_unused=True)
            g = np.zeros(net.n_params)
            g[net._w1] = gW1.numpy()
            if net.bias:
                g[net._b1] = gb1.numpy()
            g[net._w2] = gW2.numpy()
            losses[r, n] = ell.item()
            grads[r, n] = g
    return losses, grads


NETS = [ReLUNet(3, 5, 2), ReLUNet(4, 6, 3, bias=False, weight_decay=0.05), ReLUNet(2, 4, 2, weight_decay=0.1)]


@pytest.mark.parametrize("net", NETS, ids=repr)
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_gradients_match_autograd(net, backend):
    net.grad_backend = backend
    try:
        theta, x, y = make_case(net)
        losses, grads = torch_per_sample(net, theta, x, y)
        scale = 1.0 + np.abs(grads).max()
        np.testing.assert_allclose(net.per_sample_loss(theta, x, y), losses, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(net.per_sample_grad(theta, x, y), grads, rtol=0, atol=64 * EPS * scale)
        gamma = net.weight_decay
        np.testing.assert_allclose(net.grad(theta, x, y), grads.mean(1) + 2 * gamma * theta, rtol=0,
                                   atol=64 * EPS * scale)
        np.testing.assert_allclose(net.loss(theta, x, y), losses.mean(1) + gamma * (theta**2).sum(1), rtol=1e-12)
    finally:
        net.grad_backend = "numpy"


@pytest.mark.parametrize("net", NETS, ids=repr)
def test_per_sample_and_per_neuron_symmetry_identity(net):
    theta, x, y = make_case(net, seed=1)
    g = net.per_sample_grad(theta, x, y)
    scale = np.abs(theta).max() * np.abs(g).max()
    assert np.abs(net.symmetry_residual(theta, x, y)).max() <= 64 * net.n_params * EPS * scale
    for u, w in net.pairs:  # one identity per hidden neuron
        res = np.einsum("rnp,rp->rn", g[:, :, u], theta[:, u]) - np.einsum("rnp,rp->rn", g[:, :, w], theta[:, w])
        assert np.abs(res).max() <= 64 * (len(u) + len(w)) * EPS * scale


def test_rescaling_a_neuron_leaves_the_function_unchanged_only_for_positive_lambda():
    net = ReLUNet(3, 5, 2)
    theta, x, y = make_case(net, seed=2)
    base = net.forward(theta, x)
    for i in (0, 3):
        moved = net.rescale(theta, 2.5, pair=i)
        np.testing.assert_allclose(net.forward(moved, x), base, rtol=1e-12, atol=1e-12)
    flipped = theta.copy()
    u, w = net.pairs[1]
    flipped[:, u] *= -1.0
    flipped[:, w] *= -1.0  # λ = −1 is not a symmetry of a ReLU neuron
    assert np.abs(net.forward(flipped, x) - base).max() > 1e-3


def test_structure_and_per_neuron_G():
    net = ReLUNet()  # the paper's Fig. 2 size
    assert net.n_params == 20 * 200 + 200 + 200 * 20
    assert len(net.pairs) == 200
    assert len(net.u_index) == 4000 and len(net.w_index) == 4200
    theta = net.init_params(2, 0)
    p = net.unpack(theta)
    assert p["W1"].shape == (2, 200, 20) and p["W2"].shape == (2, 20, 200) and p["b1"].shape == (2, 200)
    pg = net.per_neuron_G(theta)
    np.testing.assert_allclose(pg, (p["W2"] ** 2).sum(1) - (p["W1"] ** 2).sum(2) - p["b1"] ** 2)
    np.testing.assert_allclose(pg.sum(1), net.G(theta), rtol=1e-12)
    np.testing.assert_allclose(net.v(theta), np.linalg.norm(p["W2"] @ p["W1"], axis=(1, 2)))


@pytest.mark.parametrize("net", NETS, ids=repr)
def test_noise_traces_fast_path_matches_exact_two_pass(net):
    theta, x, y = make_case(net, seed=3)
    C = net.noise_cov(theta, x, y)
    tu_ref = np.trace(C[:, net.u_index][:, :, net.u_index], axis1=1, axis2=2)
    tw_ref = np.trace(C[:, net.w_index][:, :, net.w_index], axis1=1, axis2=2)
    for backend in ("numpy", "torch"):
        net.grad_backend = backend
        tu, tw = net.noise_traces(theta, x, y)
        np.testing.assert_allclose(tu, tu_ref, rtol=1e-10)
        np.testing.assert_allclose(tw, tw_ref, rtol=1e-10)
        pu, pw = net.per_neuron_noise_traces(theta, x, y)
        assert pu.shape == (R, net.hidden)
        np.testing.assert_allclose(pu.sum(1), tu_ref, rtol=1e-10)
        np.testing.assert_allclose(pw.sum(1), tw_ref, rtol=1e-10)
    net.grad_backend = "numpy"
    T = 0.1
    trCB = np.einsum("rpp,p->r", C, net.balance_signs())
    np.testing.assert_allclose(net.G_rate(theta, x, y, T), T * trCB - 4 * net.weight_decay * net.G(theta),
                               rtol=1e-9, atol=1e-12)


def test_sgd_runs_on_the_fig2_sized_net():
    net = ReLUNet()
    law = GaussianData(d_in=20, d_out=20)
    ev = law.dataset(128, 1)
    tr = run_sgd(net, net.init_params(1, 0)[0], law, lr=0.01, steps=20, record_every=10, batch_size=4,
                 eval_data=ev, seed=0)
    assert tr.n_diverged == 0
    for key, arr in tr.observables.items():
        assert arr.shape == (3, 1) and np.all(np.isfinite(arr)), key
    assert tr.observables["loss"][-1, 0] < tr.observables["loss"][0, 0]
    # the step is plain SGD: reproduce the first update by hand
    rng = np.random.default_rng(0)
    x, y = law.sample(4, rng)
    th0 = net.init_params(1, 0)
    manual = th0.copy()
    for _ in range(10):
        manual = manual - 0.01 * net.grad(manual, x[None], y[None])
        x, y = law.sample(4, rng)
    np.testing.assert_allclose(tr.theta[1], manual, rtol=1e-12, atol=1e-14)


def test_validation():
    net = ReLUNet(3, 4, 2)
    with pytest.raises(ValueError, match="hidden"):
        ReLUNet(hidden=0)
    with pytest.raises(ValueError, match="grad_backend"):
        ReLUNet(grad_backend="jax")
    with pytest.raises(ValueError, match="x must have shape"):
        net.loss(np.zeros(net.n_params), np.ones((5, 4)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="y must have shape"):
        net.loss(np.zeros(net.n_params), np.ones((5, 3)), np.ones((5, 3)))
    with pytest.raises(ValueError, match="theta"):
        net.loss(np.zeros(net.n_params + 1), np.ones((5, 3)), np.ones((5, 2)))
