"""A bilinear attention score with the rescaling symmetry, written in torch (float64).

``s = xᵀ W_Q W_Kᵀ z`` with the per-sample loss ``ℓ = (s − y)²``: ``W_Q → λW_Q``, ``W_K → W_K/λ`` leaves it
unchanged (the key/query example of arXiv 2308.06671, Section 2). The checks of
:mod:`symsgd_core.balance.checks` run on it beside the engine's models; :class:`TorchSymmetricLoss` gives any
per-sample torch loss the numpy interface of :class:`~symsgd_core.balance.models.SymmetricModel` (per-sample
gradients by ``torch.func``), so a check sees no difference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..core.validation import check_array, check_positive_int
from .models import SymmetricModel

__all__ = ["TorchSymmetricLoss", "attention_score_model"]


class TorchSymmetricLoss:
    """A per-sample loss written in torch (float64) with the engine models' numpy interface.

    Args:
        name: short identifier.
        loss_fn: ``loss_fn(theta (P,), x (dx,), y (dy,)) -> scalar`` torch function (one sample).
        n_params: ``P``.
        x_dim, y_dim: feature sizes of one sample's ``x`` and ``y``.
        u_index, w_index: int arrays into ``θ``: all u-entries and all w-entries.
        pairs: one ``(u_idx, w_idx)`` per elementary rescaling symmetry.
        lifted_loss_fn: optional ``F(M (du, dw), x, y) -> scalar`` with ``ℓ(θ) = F(u wᵀ)`` where
            ``u = θ[u_index]``, ``w = θ[w_index]``; enables :meth:`lifted_grad`.

    Data: ``x (N, dx)`` or ``(R, N, dx)``, ``y (N, dy)`` or ``(R, N, dy)``; ``theta (R, P)``.
    The loss has no weight decay (``weight_decay = 0``).
    """

    weight_decay = 0.0

    def __init__(self, name: str, loss_fn: Callable, n_params: int, x_dim: int, y_dim: int,
                 u_index, w_index, pairs: Sequence, lifted_loss_fn: Callable | None = None):
        self.name = str(name)
        self.loss_fn = loss_fn
        self.n_params = check_positive_int("n_params", n_params)
        self.x_dim = check_positive_int("x_dim", x_dim)
        self.y_dim = check_positive_int("y_dim", y_dim)
        self.u_index = np.asarray(u_index, dtype=np.int64)
        self.w_index = np.asarray(w_index, dtype=np.int64)
        self.pairs = [(np.asarray(u, dtype=np.int64), np.asarray(w, dtype=np.int64)) for u, w in pairs]
        self.lifted_loss_fn = lifted_loss_fn

    def __repr__(self) -> str:
        return f"TorchSymmetricLoss({self.name!r}, P={self.n_params})"

    #: ``(P,)``: +1 on u, −1 on w, 0 elsewhere (the engine models' structure, shared).
    balance_signs = SymmetricModel.balance_signs

    def G(self, theta) -> np.ndarray:
        """``‖u‖² − ‖w‖²``, shape ``(R,)``."""
        return SymmetricModel._G(self, self._theta(theta))

    def _theta(self, theta) -> np.ndarray:
        return check_array("theta", np.atleast_2d(theta), shape=(None, self.n_params))

    def _data(self, x, y, runs):
        x = check_array("x", x)
        y = check_array("y", y)
        if x.ndim not in (2, 3) or x.shape[-1] != self.x_dim:
            raise ValueError(f"x must have shape (N, {self.x_dim}) or (R, N, {self.x_dim}), got {x.shape}")
        if y.shape != x.shape[:-1] + (self.y_dim,):
            raise ValueError(f"y must have shape {x.shape[:-1] + (self.y_dim,)}, got {y.shape}")
        if x.ndim == 3 and x.shape[0] != runs:
            raise ValueError(f"x of shape (R, N, dx) must have R = {runs}, got {x.shape[0]}")
        return x, y

    def _vmapped(self, fn, arg, x, y):
        import torch
        from torch.func import vmap

        shared = x.ndim == 2
        per_sample = vmap(fn, in_dims=(None, 0, 0))
        per_run = vmap(per_sample, in_dims=(0, None, None) if shared else (0, 0, 0))
        t = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float64)  # noqa: E731
        return per_run(t(arg), t(x), t(y)).detach().numpy()

    def per_sample_loss(self, theta, x, y) -> np.ndarray:
        """``ℓ(θ, x_n, y_n)``, shape ``(R, N)``."""
        th = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        return self._vmapped(self.loss_fn, th, x, y)

    def per_sample_grad(self, theta, x, y) -> np.ndarray:
        """``∇_θ ℓ(θ, x_n, y_n)`` by ``torch.func.grad``, shape ``(R, N, P)``."""
        from torch.func import grad

        th = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        return self._vmapped(grad(self.loss_fn), th, x, y)

    def grad(self, theta, x, y) -> np.ndarray:
        """``∇L = mean_n ∇ℓ_n``, shape ``(R, P)``."""
        return self.per_sample_grad(theta, x, y).mean(axis=1)

    def noise_cov(self, theta, x, y) -> np.ndarray:
        """``C = mean_n (g_n − ḡ)(g_n − ḡ)ᵀ``, shape ``(R, P, P)``."""
        g = self.per_sample_grad(theta, x, y)
        gc = g - g.mean(axis=1, keepdims=True)
        return np.einsum("rnp,rnq->rpq", gc, gc) / g.shape[1]

    def noise_traces(self, theta, x, y) -> tuple[np.ndarray, np.ndarray]:
        """``(Tr Cov ∇_u ℓ, Tr Cov ∇_w ℓ)``, each ``(R,)``."""
        g = self.per_sample_grad(theta, x, y)
        gc = g - g.mean(axis=1, keepdims=True)
        return (np.mean(np.sum(gc[:, :, self.u_index] ** 2, axis=2), axis=1),
                np.mean(np.sum(gc[:, :, self.w_index] ** 2, axis=2), axis=1))

    def lifted_grad(self, theta, x, y) -> np.ndarray:
        """Per-sample ``A = ∂F/∂M`` at ``M = u wᵀ`` (autograd), shape ``(R, N, du, dw)``.

        Raises:
            ValueError: if the model was built without ``lifted_loss_fn``.
        """
        if self.lifted_loss_fn is None:
            raise ValueError(f"model {self.name!r} has no lifted_loss_fn, so no lifted_grad")
        from torch.func import grad

        th = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        M = th[:, self.u_index][:, :, None] * th[:, self.w_index][:, None, :]
        return self._vmapped(grad(self.lifted_loss_fn), M, x, y)




def attention_score_model(d: int = 3, k: int = 2) -> TorchSymmetricLoss:
    """A bilinear attention score ``s = xᵀ W_Q W_Kᵀ z`` with ``ℓ = (s − y)²`` (torch, float64).

    ``θ = (W_Q, W_K)``, each ``d × k`` row-major; one sample's input is ``(x, z)`` concatenated
    (``x_dim = 2d``), ``y`` is ``(1,)``. Symmetry: ``W_Q → λW_Q``, ``W_K → W_K/λ`` (u = W_Q,
    w = W_K), and one elementary symmetry per head column ``j``. For ``k = 1`` the model is
    rank-1 and has the natural lifting ``F(M) = (xᵀ M z − y)²``, ``M = W_Q W_Kᵀ`` (enables
    ``lifted_grad``).
    """

    d, k = check_positive_int("d", d), check_positive_int("k", k)
    nq = d * k

    def loss(theta, xz, y):
        WQ = theta[:nq].reshape(d, k)
        WK = theta[nq:].reshape(d, k)
        s = (xz[:d] @ WQ) @ (WK.T @ xz[d:])
        return (s - y[0]) ** 2

    def lifted(M, xz, y):
        return (xz[:d] @ M @ xz[d:] - y[0]) ** 2

    pairs = [(np.arange(d) * k + j, nq + np.arange(d) * k + j) for j in range(k)]
    return TorchSymmetricLoss(f"attention_score(d={d},k={k})", loss, 2 * nq, 2 * d, 1, np.arange(nq),
                              np.arange(nq, 2 * nq), pairs, lifted_loss_fn=lifted if k == 1 else None)
