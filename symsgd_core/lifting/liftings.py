"""The rank-1 lifting ℓ̃(u wᵀ): explicit constructions, checked by autograd (torch, float64).

A loss with the rescaling symmetry ``ℓ(λu, w/λ) = ℓ(u, w)`` (λ > 0) is constant on each orbit
``{(λu, w/λ)}``, and every orbit maps to one matrix ``M = u wᵀ`` (entries ``M_ij = u_i w_j``).
This module makes the reviewer's question to the authors of arXiv 2308.06671 (on the lifted loss of their
Theorem 3.1) concrete: which functions of ``M`` reproduce ℓ, and what do their derivatives say.

Liftings (each a function of matrices, evaluated per sample):

* :func:`generic_lifting_loss` — ``ℓ̃(M, w) = ℓ(M w/‖w‖², w)``, defined for every ``M`` and every
  ``w ≠ 0``; equals ℓ on the rank-1 set; obeys Euler's identity ``Σ_j w_j ∂ℓ̃/∂w_j = 0`` but its
  ``∂ℓ̃/∂w`` is in general *not* zero.
* :func:`w_free_lifting_loss` — ``F(M) = ℓ(M ŵ(M), ŵ(M))`` with the power step
  ``ŵ(M) = MᵀM r/‖MᵀM r‖`` (:func:`power_step_direction`); no ``w`` at all; equals
  ``ℓ(u, w)`` on rank-1 ``M = u wᵀ`` with ``wᵀr > 0`` and gives ``∂ℓ/∂u = A w``,
  ``∂ℓ/∂w = Aᵀ u`` with ``A = ∂F/∂M``.
* :func:`natural_lifting_loss` — the model evaluated with weight matrix ``M`` (linear layer,
  bilinear attention score only; a ReLU neuron has none because of the sign caveat).

Models: :mod:`symsgd_core.lifting.models`. Index convention (tested): ``A_ij = ∂F/∂M_ij``, so
``∂ℓ/∂u = A w`` and ``∂ℓ/∂w = Aᵀ u``. Per-sample gradients use one backward pass over per-sample copies
of the parameters. Never build a lifting from ``svd``/``eigh`` at rank-1 points: with repeated zero
singular values their backward pass returns NaN; the power step has no such problem.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ..core.validation import check_array, check_finite, check_positive
from .models import DTYPE, LiftingCase, RankOneModel, _small_torch, model_loss, squared_error

__all__ = [
    "corrected_chain_rule", "generic_lifting_gradients", "generic_lifting_grid", "generic_lifting_loss",
    "generic_lifting_values", "loss_gradients", "majorant_scales", "matrix_from_slice_coordinates",
    "natural_lifting_gradient", "natural_lifting_loss", "noise_covariances_from_matrix_gradient", "noise_traces",
    "noise_traces_from_matrix_gradient", "orbit_point", "per_sample_losses", "polar", "power_step_direction",
    "predictions", "reference_condition", "rotation", "seed_chain_rule", "sign_flip_losses", "slice_coordinates",
    "tangent_projection", "w_free_lifting_gradient", "w_free_lifting_loss", "w_free_lifting_values",
]


def generic_lifting_loss(model: RankOneModel, M: torch.Tensor, w: torch.Tensor, data) -> torch.Tensor:
    """``ℓ̃(M, w, x) = ℓ(M w/‖w‖², w, x)`` per sample; ``M (N, m, n)``, ``w (N, n)`` -> ``(N,)``."""
    u_of_M = torch.einsum("kij,kj->ki", M, w) / (w * w).sum(-1, keepdim=True)
    return model_loss(model, u_of_M, w, data)


def power_step_direction(M: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """``ŵ(M) = MᵀM r / ‖MᵀM r‖`` (one power-iteration step), ``M (..., m, n)``, ``r (n,)``.

    For rank-1 ``M = u wᵀ`` (u ≠ 0) this is ``sign(wᵀr) w/‖w‖``. Smooth wherever ``MᵀMr ≠ 0``.
    """
    Mr = torch.einsum("...ij,j->...i", M, r)
    v = torch.einsum("...ij,...i->...j", M, Mr)
    return v / torch.linalg.vector_norm(v, dim=-1, keepdim=True)


def w_free_lifting_loss(model: RankOneModel, M: torch.Tensor, data, r: torch.Tensor,
                        direction: Callable = power_step_direction) -> torch.Tensor:
    """``F(M, x) = ℓ(M ŵ(M), ŵ(M), x)`` per sample; ``M (N, m, n)`` -> ``(N,)``. No ``w`` argument."""
    w_hat = direction(M, r)
    u_of_M = torch.einsum("kij,kj->ki", M, w_hat)
    return model_loss(model, u_of_M, w_hat, data)


def natural_lifting_loss(model: RankOneModel, M: torch.Tensor, data) -> torch.Tensor:
    """The model with weight matrix ``M`` (linear layer, attention score); ``M (N, m, n)`` -> ``(N,)``."""
    if model.natural_predict is None:
        raise ValueError(f"the {model.title} has no natural lifting (its loss depends on the sign of w, "
                         "not on u wᵀ alone)")
    return squared_error(model.natural_predict(M, data), data["y"])


def _per_sample_gradients(fn: Callable, params: list[np.ndarray], n_samples: int):
    """Gradients of ``fn`` per sample: one copy of every parameter per sample, one backward pass.

    Returns (values (N,), [grad (N, *param.shape)]) as numpy float64; an unused parameter gets zeros.
    """
    reps = [torch.as_tensor(p, dtype=DTYPE).expand(n_samples, *np.shape(p)).clone().requires_grad_(True)
            for p in params]
    out = fn(*reps)
    grads = torch.autograd.grad(out.sum(), reps, allow_unused=True)
    grads = [torch.zeros_like(r) if g is None else g for g, r in zip(grads, reps)]
    return out.detach().numpy(), [g.numpy() for g in grads]


@_small_torch
def predictions(case: LiftingCase, u=None, w=None) -> np.ndarray:
    """Model outputs ``f`` per sample, shape ``(N, k)`` (at ``(u, w)``, default the case's)."""
    u = case.u if u is None else u
    w = case.w if w is None else w
    with torch.no_grad():
        f = case.model.predict(torch.as_tensor(u, dtype=DTYPE), torch.as_tensor(w, dtype=DTYPE),
                               case.torch_data())
    return f.numpy()


@_small_torch
def per_sample_losses(case: LiftingCase, u=None, w=None) -> np.ndarray:
    """``ℓ(u, w, x_k)`` for every sample, shape ``(N,)``."""
    u = case.u if u is None else u
    w = case.w if w is None else w
    with torch.no_grad():
        out = model_loss(case.model, torch.as_tensor(u, dtype=DTYPE), torch.as_tensor(w, dtype=DTYPE),
                         case.torch_data())
    return out.numpy()


@_small_torch
def loss_gradients(case: LiftingCase, model: RankOneModel | None = None):
    """Per-sample ``∂ℓ/∂u (N, m)`` and ``∂ℓ/∂w (N, n)`` by autograd (``model`` overrides the case's)."""
    model = case.model if model is None else model
    data = case.torch_data()
    _, (du, dw) = _per_sample_gradients(lambda u, w: model_loss(model, u, w, data), [case.u, case.w],
                                        case.n_samples)
    return du, dw


@_small_torch
def generic_lifting_values(case: LiftingCase, lifting: Callable = generic_lifting_loss) -> np.ndarray:
    """``ℓ̃(u wᵀ, w, x_k)`` per sample, shape ``(N,)`` (``lifting`` overrides the construction)."""
    N = case.n_samples
    M = torch.as_tensor(case.M, dtype=DTYPE).expand(N, case.m, case.n)
    w = torch.as_tensor(case.w, dtype=DTYPE).expand(N, case.n)
    with torch.no_grad():
        return lifting(case.model, M, w, case.torch_data()).numpy()


@_small_torch
def generic_lifting_gradients(case: LiftingCase, lifting: Callable = generic_lifting_loss):
    """``∂ℓ̃/∂M (N, m, n)`` and ``∂ℓ̃/∂w (N, n)`` at ``M = u wᵀ``, per sample, by autograd."""
    data = case.torch_data()
    _, (G, gw) = _per_sample_gradients(lambda M, w: lifting(case.model, M, w, data), [case.M, case.w],
                                       case.n_samples)
    return G, gw


@_small_torch
def generic_lifting_grid(case: LiftingCase, w_points) -> np.ndarray:
    """Training loss ``mean_k ℓ̃(M, w', x_k)`` at fixed ``M = u wᵀ`` for each row ``w'`` of ``w_points (P, n)``.

    Returns ``(P,)``. Rows must be non-zero. Used to draw the level sets of ``ℓ̃(M, ·)``.
    """
    W = check_array("w_points", w_points, shape=(None, case.n))
    if np.any(np.all(W == 0, axis=1)):
        raise ValueError("w_points must not contain the zero vector")
    Wt = torch.as_tensor(W, dtype=DTYPE)
    M = torch.as_tensor(case.M, dtype=DTYPE)
    with torch.no_grad():
        u_of = (Wt @ M.T) / (Wt * Wt).sum(-1, keepdim=True)  # (P, m)
        losses = model_loss(case.model, u_of[:, None, :], Wt[:, None, :], case.torch_data())  # (P, N)
    return losses.mean(-1).numpy()


@_small_torch
def w_free_lifting_values(case: LiftingCase, direction: Callable = power_step_direction) -> np.ndarray:
    """``F(u wᵀ, x_k)`` per sample, shape ``(N,)``."""
    N = case.n_samples
    M = torch.as_tensor(case.M, dtype=DTYPE).expand(N, case.m, case.n)
    with torch.no_grad():
        return w_free_lifting_loss(case.model, M, case.torch_data(), torch.as_tensor(case.r, dtype=DTYPE),
                                   direction).numpy()


@_small_torch
def w_free_lifting_gradient(case: LiftingCase, direction: Callable = power_step_direction) -> np.ndarray:
    """``A_F = ∂F/∂M`` at ``M = u wᵀ`` per sample, shape ``(N, m, n)``."""
    data = case.torch_data()
    r = torch.as_tensor(case.r, dtype=DTYPE)
    _, (A,) = _per_sample_gradients(lambda M: w_free_lifting_loss(case.model, M, data, r, direction),
                                    [case.M], case.n_samples)
    return A


@_small_torch
def natural_lifting_gradient(case: LiftingCase, natural: Callable | None = None) -> np.ndarray:
    """``A_nat = ∂F_nat/∂M`` at ``M = u wᵀ`` per sample, ``(N, m, n)``; ``natural(M, data) -> (N,)``
    overrides the model's natural lifting. Raises ValueError for a model without one."""
    data = case.torch_data()
    fn = natural if natural is not None else (lambda M, d: natural_lifting_loss(case.model, M, d))
    if natural is None and not case.model.has_natural_lifting:
        natural_lifting_loss(case.model, None, data)  # raises the explanatory ValueError
    _, (A,) = _per_sample_gradients(lambda M: fn(M, data), [case.M], case.n_samples)
    return A


def corrected_chain_rule(G, gw, u, w):
    """``∂ℓ/∂u_i = Σ_j w_j ∂ℓ̃/∂M_ij`` and ``∂ℓ/∂w_j = Σ_i u_i ∂ℓ̃/∂M_ij + ∂ℓ̃/∂w_j``.

    Args: G ``(N, m, n)`` = ∂ℓ̃/∂M; gw ``(N, n)`` = ∂ℓ̃/∂w; u ``(m,)``; w ``(n,)``.
    Returns: (du ``(N, m)``, dw ``(N, n)``).
    """
    G, gw = np.asarray(G, dtype=float), np.asarray(gw, dtype=float)
    return G @ np.asarray(w, dtype=float), np.einsum("kij,i->kj", G, np.asarray(u, dtype=float)) + gw


def seed_chain_rule(G, gw, u, w):
    """The seed's display (the authors' reply to a reviewer on Theorem 3.1 of arXiv 2308.06671), with its index
    slip: the ``∂ℓ̃/∂w_j`` term attached to ``∂ℓ/∂u_i``.

    ``∂ℓ/∂w_j = Σ_i u_i ∂ℓ̃/∂M_ij`` and ``∂ℓ/∂u_i = Σ_j (w_j ∂ℓ̃/∂M_ij + ∂ℓ̃/∂w_j)``, reading the
    dangling index ``j`` as summed. Shapes as in :func:`corrected_chain_rule`. Kept to show the slip.
    """
    G, gw = np.asarray(G, dtype=float), np.asarray(gw, dtype=float)
    du = G @ np.asarray(w, dtype=float) + gw.sum(-1, keepdims=True)
    return du, np.einsum("kij,i->kj", G, np.asarray(u, dtype=float))


def tangent_projection(A, u, w) -> np.ndarray:
    """Orthogonal projection of ``A (..., m, n)`` on the tangent space ``{a wᵀ + u bᵀ}`` of the
    rank-1 set at ``u wᵀ``: ``P_u A + A P_w − P_u A P_w``."""
    u, w = np.asarray(u, dtype=float), np.asarray(w, dtype=float)
    Pu, Pw = np.outer(u, u) / (u @ u), np.outer(w, w) / (w @ w)
    A = np.asarray(A, dtype=float)
    return Pu @ A + A @ Pw - Pu @ A @ Pw


def noise_traces(du, dw) -> tuple[float, float]:
    """``(Tr Cov ∇_u ℓ, Tr Cov ∇_w ℓ)`` over the batch (population covariance, as in the conventions).

    Args: du ``(N, m)``, dw ``(N, n)`` per-sample gradients.
    """
    du, dw = np.asarray(du, dtype=float), np.asarray(dw, dtype=float)
    return float(du.var(axis=0).sum()), float(dw.var(axis=0).sum())


def noise_covariances_from_matrix_gradient(A) -> tuple[np.ndarray, np.ndarray]:
    """``C_right = E[AᵀA] − E[A]ᵀE[A]`` (n×n) and ``C_left = E[AAᵀ] − E[A]E[A]ᵀ`` (m×m) of per-sample
    ``A (N, m, n)``; with ``∂ℓ/∂u = A w``, ``Tr Cov ∇_u ℓ = wᵀ C_right w`` and
    ``Tr Cov ∇_w ℓ = uᵀ C_left u`` (the paper's ``wᵀC₂w`` and ``uᵀC₁u``)."""
    A = np.asarray(A, dtype=float)
    mean = A.mean(0)
    C_right = np.einsum("kij,kil->jl", A, A) / A.shape[0] - mean.T @ mean
    C_left = np.einsum("kij,klj->il", A, A) / A.shape[0] - mean @ mean.T
    return C_right, C_left


def noise_traces_from_matrix_gradient(A, u, w) -> tuple[float, float]:
    """``(wᵀ C_right w, uᵀ C_left u)`` from per-sample ``A (N, m, n)`` (see
    :func:`noise_covariances_from_matrix_gradient`): Theorem 3.1's two traces."""
    C_right, C_left = noise_covariances_from_matrix_gradient(A)
    u, w = np.asarray(u, dtype=float), np.asarray(w, dtype=float)
    return float(w @ C_right @ w), float(u @ C_left @ u)


def sign_flip_losses(case: LiftingCase) -> tuple[float, float]:
    """Training losses ``(L(u, w), L(−u, −w))`` (means over the batch): same ``u wᵀ``, maybe not same loss."""
    return float(per_sample_losses(case).mean()), float(per_sample_losses(case, -case.u, -case.w).mean())


def orbit_point(u, w, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """``(λu, w/λ)``; λ ≠ 0 (λ > 0 is the symmetry)."""
    lam = check_finite("lam", lam)
    if lam == 0:
        raise ValueError("lam must be non-zero")
    return lam * np.asarray(u, dtype=float), np.asarray(w, dtype=float) / lam


def slice_coordinates(M) -> np.ndarray:
    """``(p, q, r, s)`` of a 2×2 matrix ``M = [[p+q, r+s], [r−s, p−q]]``.

    ``p`` = half trace, ``(q, r)`` = symmetric traceless part, ``s`` = antisymmetric part;
    ``det M = p² + s² − q² − r²``, so at fixed ``s`` the rank-≤1 matrices form the surface
    ``q² + r² = p² + s²`` (a hyperboloid of one sheet; a double cone when ``s = 0``).
    """
    M = check_array("M", M, shape=(2, 2))
    return np.array([(M[0, 0] + M[1, 1]) / 2, (M[0, 0] - M[1, 1]) / 2, (M[0, 1] + M[1, 0]) / 2,
                     (M[0, 1] - M[1, 0]) / 2])


def matrix_from_slice_coordinates(p: float, q: float, r: float, s: float) -> np.ndarray:
    """The 2×2 matrix with coordinates ``(p, q, r, s)`` (inverse of :func:`slice_coordinates`)."""
    return np.array([[p + q, r + s], [r - s, p - q]], dtype=float)


def rotation(angle: float) -> np.ndarray:
    """2×2 rotation by ``angle`` (radians)."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


def polar(angle_deg: float, length: float = 1.0) -> np.ndarray:
    """The 2-vector ``length · (cos θ, sin θ)``, θ in degrees."""
    check_positive("length", length)
    t = np.deg2rad(check_finite("angle_deg", angle_deg))
    return float(length) * np.array([np.cos(t), np.sin(t)])


@_small_torch
def majorant_scales(case: LiftingCase) -> dict[str, np.ndarray]:
    """Forward-error majorants per sample: the loss and its gradients with every input replaced by
    its absolute value, ``ℓ_abs = Σ (f(|u|, |w|, |x|) + |y|)²``.

    Float64 evaluation of ℓ and of its autograd gradients errs by at most ``n · eps`` times these
    (the standard bound for sums of products; a ReLU only lowers the terms).

    Returns: ``{"loss": (N,), "grad_u": (N,), "grad_w": (N,)}`` (gradient entries are norms).
    """
    data = {k: torch.abs(v) for k, v in case.torch_data().items()}
    y_abs = data["y"]

    def majorant(u, w):
        return ((case.model.predict(u, w, data) + y_abs) ** 2).sum(-1)

    values, (gu, gw) = _per_sample_gradients(majorant, [np.abs(case.u), np.abs(case.w)], case.n_samples)
    return {"loss": values, "grad_u": np.linalg.norm(gu, axis=1), "grad_w": np.linalg.norm(gw, axis=1)}


def reference_condition(case: LiftingCase) -> float:
    """``κ_r = ‖w‖‖r‖/|wᵀr|``: the power step divides by ``‖MᵀMr‖ ∝ |wᵀr|``, so intermediate terms
    of ``∂F/∂M`` grow by up to ``κ_r`` before they cancel (inf when ``wᵀr = 0``)."""
    dot = abs(float(case.w @ case.r))
    return float(np.linalg.norm(case.w) * np.linalg.norm(case.r) / dot) if dot > 0 else float("inf")
