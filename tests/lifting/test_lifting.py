"""symsgd_core.lifting: models, liftings, chain rules, traces and the 2×2 geometry (autograd, float64)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from symsgd_core import lifting as lf
from symsgd_core.core.checking import EPS64

TOL = 1e-11  # these are O(1)-sized quantities from m, n ≤ 4: round-off is ~1e-15


@pytest.fixture(params=["linear", "attention", "relu"])
def case(request):
    return lf.make_case(request.param, 2, 3, 7, seed=11)


def test_models_registry_and_errors():
    assert set(lf.MODELS) == {"linear", "attention", "relu"}
    assert lf.get_model("relu").natural_predict is None and not lf.get_model("relu").negation_symmetric
    with pytest.raises(ValueError, match="model must be one of"):
        lf.get_model("mlp")


def test_loss_is_the_project_convention(case):
    f = lf.liftings.predictions(case)
    assert f.shape == (case.n_samples, case.data["y"].shape[1])
    np.testing.assert_allclose(lf.liftings.per_sample_losses(case), ((f - case.data["y"]) ** 2).sum(1), rtol=1e-14)


def test_predictions_match_hand_formulas():
    c = lf.make_case("linear", 2, 3, 5, seed=1)
    np.testing.assert_allclose(lf.liftings.predictions(c), (c.data["x"] @ c.w)[:, None] * c.u[None, :], rtol=1e-13)
    a = lf.make_case("attention", 2, 3, 5, seed=1)
    np.testing.assert_allclose(lf.liftings.predictions(a)[:, 0], (a.data["x"] @ a.u) * (a.data["z"] @ a.w), rtol=1e-13)
    r = lf.make_case("relu", 2, 3, 5, seed=1)
    np.testing.assert_allclose(lf.liftings.predictions(r), np.maximum(r.data["x"] @ r.w, 0)[:, None] * r.u, rtol=1e-13)


def test_case_validation():
    c = lf.make_case("linear", 2, 3, 4, seed=0)
    with pytest.raises(ValueError, match="w must be non-zero"):
        c.with_params(c.u, np.zeros(3))
    with pytest.raises(ValueError, match="r must have shape"):
        lf.LiftingCase(c.model, c.u, c.w, c.data, np.ones(2))
    with pytest.raises(ValueError, match="r must be non-zero"):
        lf.LiftingCase(c.model, c.u, c.w, c.data, np.zeros(3))
    with pytest.raises(ValueError, match="same N"):
        lf.LiftingCase(c.model, c.u, c.w, {"x": c.data["x"], "y": c.data["y"][:2]}, c.r)
    with pytest.raises(ValueError, match="finite"):
        c.with_params([np.nan, 1.0], c.w)
    with pytest.raises(ValueError, match="n_samples"):
        lf.make_case("linear", 2, 3, 0)
    with pytest.raises(ValueError, match="seed"):
        lf.make_case("linear", 2, 3, 4, seed=None)


def test_make_case_is_deterministic_and_picks_the_sign_class():
    a, b = lf.make_case("relu", 3, 2, 5, seed=9), lf.make_case("relu", 3, 2, 5, seed=9)
    assert np.array_equal(a.u, b.u) and np.array_equal(a.data["x"], b.data["x"])
    assert a.w @ a.r > 0


def test_per_sample_gradients_sum_to_the_batch_gradient(case):
    du, dw = lf.liftings.loss_gradients(case)
    u = torch.tensor(case.u, requires_grad=True)
    w = torch.tensor(case.w, requires_grad=True)
    lf.models.model_loss(case.model, u, w, case.torch_data()).sum().backward()
    np.testing.assert_allclose(du.sum(0), u.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dw.sum(0), w.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_generic_lifting_is_defined_off_the_set_and_invariant_in_w(case):
    """ℓ̃(M, λw) = ℓ̃(M, w) for λ > 0 and *every* M, not only rank-1 ones."""
    rng = np.random.default_rng(0)
    N = case.n_samples
    M = torch.tensor(rng.standard_normal((case.m, case.n))).expand(N, case.m, case.n)  # rank 2
    w = torch.tensor(case.w).expand(N, case.n)
    a = lf.generic_lifting_loss(case.model, M, w, case.torch_data())
    b = lf.generic_lifting_loss(case.model, M, 3.7 * w, case.torch_data())
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_corrected_chain_rule_and_the_seeds_slip(case):
    du, dw = lf.liftings.loss_gradients(case)
    G, gw = lf.liftings.generic_lifting_gradients(case)
    cu, cw = lf.liftings.corrected_chain_rule(G, gw, case.u, case.w)
    np.testing.assert_allclose(cu, du, atol=TOL)
    np.testing.assert_allclose(cw, dw, atol=TOL)
    su, sw = lf.seed_chain_rule(G, gw, case.u, case.w)
    assert np.abs(sw - dw).max() > 1e-3  # the ∂ℓ̃/∂w term is missing from ∂ℓ/∂w


def test_linear_layer_dl_tilde_dw_closed_form():
    """For the linear layer ∂ℓ̃/∂w = 2 (rᵀu) (I − P_w) x per sample (r = f − y): perpendicular to w."""
    c = lf.make_case("linear", 2, 3, 6, seed=5)
    _, gw = lf.liftings.generic_lifting_gradients(c)
    resid = lf.liftings.predictions(c) - c.data["y"]
    P = np.eye(3) - np.outer(c.w, c.w) / (c.w @ c.w)
    expected = 2 * (resid @ c.u)[:, None] * (c.data["x"] @ P)
    np.testing.assert_allclose(gw, expected, atol=TOL)


def test_power_step_direction_on_rank_one():
    rng = np.random.default_rng(3)
    u, w, r = rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal(4)
    M = torch.tensor(np.outer(u, w))
    got = lf.liftings.power_step_direction(M, torch.tensor(r)).numpy()
    np.testing.assert_allclose(got, np.sign(w @ r) * w / np.linalg.norm(w), atol=1e-14)


def test_power_step_has_finite_gradients_where_svd_is_nan():
    """At an exactly rank-1 3×3 matrix with repeated zero singular values, F's gradient is finite and right."""
    case = lf.make_case("linear", 3, 3, 4, seed=0, u=[1.0, 2.0, 0.0], w=[1.0, 0.0, 0.0], r=[1.0, 0.5, 0.25])
    A = lf.w_free_lifting_gradient(case)
    du, dw = lf.liftings.loss_gradients(case)
    assert np.all(np.isfinite(A))
    np.testing.assert_allclose(A @ case.w, du, atol=TOL)
    np.testing.assert_allclose(np.einsum("kij,i->kj", A, case.u), dw, atol=TOL)


def test_w_free_gradient_is_the_tangent_projection_of_the_natural_one():
    """F is flat along the normal space {(I−P_u) B (I−P_w)}, so A_F = Proj_T(A_nat)."""
    for key in ("linear", "attention"):
        c = lf.make_case(key, 3, 4, 5, seed=2)
        A_F, A_nat = lf.w_free_lifting_gradient(c), lf.natural_lifting_gradient(c)
        np.testing.assert_allclose(A_F, lf.liftings.tangent_projection(A_nat, c.u, c.w), atol=TOL)
        assert np.abs(A_F - A_nat).max() > 1e-3


def test_w_free_gradient_lies_in_the_tangent_space_for_relu():
    c = lf.make_case("relu", 3, 3, 6, seed=4)
    A = lf.w_free_lifting_gradient(c)
    np.testing.assert_allclose(lf.liftings.tangent_projection(A, c.u, c.w), A, atol=TOL)


def test_w_free_lifting_other_sign_class_for_relu():
    """With wᵀr < 0, F(u wᵀ) is the loss of (−u, −w): for the ReLU neuron that is another number."""
    c = lf.make_case("relu", 2, 3, 8, seed=0)
    other = lf.LiftingCase(c.model, c.u, c.w, c.data, -c.r)
    np.testing.assert_allclose(lf.liftings.w_free_lifting_values(other), lf.liftings.per_sample_losses(c, -c.u, -c.w),
                               atol=TOL)
    plus, minus = lf.liftings.sign_flip_losses(c)
    assert abs(plus - minus) > 1e-3


def test_natural_lifting_missing_for_relu():
    c = lf.make_case("relu", 2, 2, 3, seed=0)
    with pytest.raises(ValueError, match="no natural lifting"):
        lf.natural_lifting_gradient(c)


def test_noise_traces_index_convention():
    """With ∂ℓ/∂u = A w and ∂ℓ/∂w = Aᵀu, wᵀC_right w = Tr Cov(A w) and uᵀC_left u = Tr Cov(Aᵀu)."""
    rng = np.random.default_rng(8)
    A, u, w = rng.standard_normal((50, 2, 3)), rng.standard_normal(2), rng.standard_normal(3)
    tu, tw = lf.noise_traces(A @ w, np.einsum("kij,i->kj", A, u))
    au, aw = lf.liftings.noise_traces_from_matrix_gradient(A, u, w)
    assert abs(au - tu) < TOL * tu and abs(aw - tw) < TOL * tw
    C_right, C_left = lf.liftings.noise_covariances_from_matrix_gradient(A)
    assert C_right.shape == (3, 3) and C_left.shape == (2, 2)
    np.testing.assert_allclose(C_right, C_right.T, atol=1e-13)


def test_traces_scale_along_the_orbit(case):
    lam = 1.7
    tu, tw = lf.noise_traces(*lf.liftings.loss_gradients(case))
    moved = case.with_params(lam * case.u, case.w / lam)
    su, sw = lf.noise_traces(*lf.liftings.loss_gradients(moved))
    assert abs(su - tu / lam ** 2) <= 1e-10 * tu and abs(sw - tw * lam ** 2) <= 1e-10 * tw * lam ** 2


def test_generic_lifting_grid_is_constant_along_rays(case):
    rng = np.random.default_rng(1)
    W = rng.standard_normal((10, case.n))
    grid = lf.liftings.generic_lifting_grid
    np.testing.assert_allclose(grid(case, W), grid(case, 2.5 * W), rtol=1e-12)
    with pytest.raises(ValueError, match="zero vector"):
        lf.liftings.generic_lifting_grid(case, np.zeros((1, case.n)))


def test_slice_coordinates_and_determinant():
    rng = np.random.default_rng(0)
    for _ in range(5):
        M = rng.standard_normal((2, 2))
        p, q, r, s = lf.liftings.slice_coordinates(M)
        np.testing.assert_allclose(lf.liftings.matrix_from_slice_coordinates(p, q, r, s), M, atol=1e-15)
        assert abs(np.linalg.det(M) - (p * p + s * s - q * q - r * r)) < 1e-14
    u, w = rng.standard_normal(2), rng.standard_normal(2)
    p, q, r, s = lf.liftings.slice_coordinates(np.outer(u, w))
    assert abs(q * q + r * r - p * p - s * s) < 1e-14  # on the rank-1 surface
    with pytest.raises(ValueError, match="M must have shape"):
        lf.liftings.slice_coordinates(np.eye(3))


def test_orbit_point_polar_rotation():
    u, w = lf.liftings.orbit_point([1.0, 2.0], [3.0, 4.0], 2.0)
    assert np.allclose(u, [2, 4]) and np.allclose(w, [1.5, 2])
    with pytest.raises(ValueError, match="lam must be non-zero"):
        lf.liftings.orbit_point([1.0], [1.0], 0.0)
    np.testing.assert_allclose(lf.liftings.polar(90, 2.0), [0, 2], atol=1e-15)
    with pytest.raises(ValueError, match="length"):
        lf.liftings.polar(0, -1.0)
    R = lf.liftings.rotation(0.3)
    np.testing.assert_allclose(R @ R.T, np.eye(2), atol=1e-15)


def test_majorant_bounds_the_loss_and_reference_condition(case):
    maj = lf.liftings.majorant_scales(case)
    assert np.all(maj["loss"] >= lf.liftings.per_sample_losses(case) * (1 - 4 * EPS64))
    assert lf.liftings.reference_condition(case) >= 1.0
    degenerate = lf.make_case("linear", 2, 2, 3, seed=0, w=[0.0, 1.0], r=[1.0, 0.0])
    assert lf.liftings.reference_condition(degenerate) == np.inf


def test_one_thread_context_restores_the_thread_count():
    before = torch.get_num_threads()
    with lf.models._one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


# ---------------------------------------------------------------- what the figures read from the experiments
def test_sign_caveat_applies_only_to_the_other_class_of_a_model_not_even_under_negation():
    for key, even in (("linear", True), ("attention", True), ("relu", False)):
        c = lf.demo_case(key, [1.0, 0.5], [-1.0, 0.3])  # wᵀr < 0 with r = e₁
        assert c.other_sign_class and c.sign_caveat_applies == (not even)
        assert not c.with_params(c.u, -c.w).sign_caveat_applies  # wᵀr > 0: F describes this point


def test_rank_one_surface_is_the_set_of_the_slice():
    q = lf.experiments.rank_one_slice(theta_u=30.0, theta_w=-40.0, phi=120.0)
    X, Y, Z = q.surface(0.8, n_p=5, n_angle=7)
    assert X.shape == Y.shape == Z.shape == (5, 7)
    np.testing.assert_allclose(X ** 2 + Y ** 2, Z ** 2 + q.s ** 2, atol=1e-15)  # q² + h² = p² + z²: det = 0
    np.testing.assert_allclose(Z[:, 0], np.linspace(-0.8, 0.8, 5))
    for p, qc, h, _ in q.coords[:2]:  # M and M′ lie on it, the midpoint does not
        assert abs(qc ** 2 + h ** 2 - p ** 2 - q.s ** 2) < 1e-15
    p, qc, h, _ = q.coords[2]
    assert abs(qc ** 2 + h ** 2 - p ** 2 - q.s ** 2) > 1e-3


def test_euler_view_errors_against_autograd():
    q = lf.experiments.euler_view("linear")
    np.testing.assert_array_equal(q.autograd, np.concatenate([q.du, q.dw]))
    assert q.error("F") < 1e-12 and q.error("nat") < 1e-12
    relu = lf.experiments.euler_view("relu", theta_w=90.0)  # w ⟂ r: F undefined; the ReLU has no natural lifting
    assert relu.error("F") is None and relu.error("nat") is None


def test_sign_caveat_splits_the_inputs_w_acts_on():
    q = lf.experiments.sign_caveat("relu", theta_w=45.0)
    np.testing.assert_array_equal(q.w_inputs, q.case.data["x"])
    np.testing.assert_array_equal(q.w_active, q.case.data["x"] @ q.case.w > 0)
    assert q.w_active.any() and not q.w_active.all()
    att = lf.experiments.sign_caveat("attention", theta_w=45.0)
    np.testing.assert_array_equal(att.w_inputs, att.case.data["z"])


def test_traces_view_along_the_orbit_and_against_autograd():
    q = lf.experiments.traces_view("linear", lam=1.5)
    assert q.error("nat") < 1e-12 * max(q.direct) and q.error("F") < 1e-12 * max(q.direct)
    np.testing.assert_allclose(q.normal_part, q.A_nat - q.A_F)
    tr_u, tr_w = q.orbit_traces([1.0, q.lam, q.lam_star])
    np.testing.assert_allclose([tr_u[1], tr_w[1]], q.direct, rtol=1e-12)  # at the current λ: autograd's traces
    np.testing.assert_allclose([tr_u[2], tr_w[2]], [q.balanced_trace] * 2, rtol=1e-12)  # equal at λ*
    relu = lf.experiments.traces_view("relu")
    assert relu.normal_part is None and relu.error("nat") is None
    assert lf.experiments.TRACES_LAMBDAS[0] == 0.25 and lf.experiments.TRACES_LAMBDAS[-1] == 4.0
