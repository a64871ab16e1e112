"""The one ReLU network of the package: two layers with a per-neuron rescaling symmetry, vectorised over R runs.

``f(x) = W2 relu(W1 x + b1)`` with ``W1 (hidden, d_in)``, ``b1 (hidden,)``, ``W2 (d_out, hidden)``;
per-sample loss ``ℓ = ‖f(x) − y‖²`` (conventions: no ½), optional weight decay ``γ‖θ‖²``.
For every hidden neuron ``i`` and ``λ > 0``, ``(W1[i,:], b1[i]) → (W1[i,:], b1[i])/λ`` and
``W2[:, i] → λ W2[:, i]`` leaves ``f`` unchanged (``relu(z/λ) = relu(z)/λ``); ``u`` = the columns of
``W2``, ``w`` = the rows of ``W1`` with the biases. The paper's Fig. 2 (arXiv 2308.06671, Thm 3.2) uses
20 → 200 → 20.

Parameter layout of ``θ (P,)``: ``W1`` (row-major, ``hidden·d_in``), then ``b1`` (``hidden``, if
``bias``), then ``W2`` (row-major, ``d_out·hidden``). The public methods take and return numpy arrays
with the shapes of :class:`~symsgd_core.balance.models.SymmetricModel`. Two implementations, chosen by
``grad_backend``: hand-written numpy (backpropagation, and the noise traces in closed form, never forming
the ``(N, P)`` per-sample gradients) and torch (autograd, ``torch.func`` per-sample gradients), the reference
the numpy one is tested against.
"""

from __future__ import annotations

import numpy as np

from ..core.validation import as_generator, check_array, check_choice, check_positive, check_positive_int
from .models import SymmetricModel, vector_batch

__all__ = ["ReLUNet"]

_CHUNK = 256  # samples per torch.func chunk when streaming per-sample gradients


class ReLUNet(SymmetricModel):
    """``f(x) = W2 relu(W1 x + b1)`` with one rescaling symmetry per hidden neuron.

    Args:
        d_in, hidden, d_out: layer widths (default 20 → 200 → 20, the paper's Fig. 2).
        bias: include the hidden bias ``b1`` (part of the ``w`` block of its neuron).
        weight_decay: ``γ ≥ 0``.
        grad_backend: ``"numpy"`` (hand-written backprop and closed-form noise traces, the default: fast for
            SGD's small batches and for the traces) or ``"torch"`` (autograd for the gradient,
            ``torch.func.vmap(grad)`` for per-sample gradients, the reference); both give the same numbers to
            round-off (tested).

    Data: ``x (N, d_in)`` or ``(R, N, d_in)``, ``y (N, d_out)`` or ``(R, N, d_out)``.
    ``v(θ)`` is the symmetry-invariant summary ``‖W2 W1‖_F`` (a scalar per run).
    """

    name = "relu"

    def __init__(self, d_in: int = 20, hidden: int = 200, d_out: int = 20, bias: bool = True,
                 weight_decay: float = 0.0, grad_backend: str = "numpy"):
        super().__init__(weight_decay)
        self.grad_backend = check_choice("grad_backend", grad_backend, {"numpy", "torch"})
        self.d_in = check_positive_int("d_in", d_in)
        self.hidden = check_positive_int("hidden", hidden)
        self.d_out = check_positive_int("d_out", d_out)
        self.bias = bool(bias)
        H, di, do = self.hidden, self.d_in, self.d_out
        self._w1 = np.arange(0, H * di).reshape(H, di)
        off = H * di
        if self.bias:
            self._b1 = np.arange(off, off + H)
            off += H
        else:
            self._b1 = np.zeros(0, dtype=np.int64)
        self._w2 = np.arange(off, off + do * H).reshape(do, H)
        self.n_params = off + do * H
        self.u_index = self._w2.ravel()
        self.w_index = np.concatenate([self._w1.ravel(), self._b1])
        self.pairs = []
        for i in range(H):
            w_idx = self._w1[i] if not self.bias else np.append(self._w1[i], self._b1[i])
            self.pairs.append((self._w2[:, i].copy(), w_idx))

    # ------------------------------------------------------------------ parameters
    def init_params(self, runs: int = 1, seed=0, scale: float = 1.0) -> np.ndarray:
        """Random initial ``θ (runs, P)``: ``W1 ~ N(0, scale²/d_in)``, ``b1 = 0``, ``W2 ~ N(0, scale²/hidden)``.

        Draw order: ``W1`` for all runs, then ``W2`` for all runs.
        """
        runs = check_positive_int("runs", runs)
        scale = check_positive("scale", scale)
        rng = as_generator(seed)
        th = np.zeros((runs, self.n_params))
        th[:, self._w1.ravel()] = rng.standard_normal((runs, self.hidden * self.d_in)) * scale / np.sqrt(self.d_in)
        th[:, self._w2.ravel()] = rng.standard_normal((runs, self.d_out * self.hidden)) * scale / np.sqrt(self.hidden)
        return th

    def unpack(self, theta) -> dict:
        """``{"W1": (R, hidden, d_in), "b1": (R, hidden), "W2": (R, d_out, hidden)}`` (copies)."""
        th, sq = self._theta(theta)
        out = {"W1": th[:, self._w1], "b1": th[:, self._b1] if self.bias else np.zeros((th.shape[0], self.hidden)),
               "W2": th[:, self._w2]}
        return {k: self._out(v, sq) for k, v in out.items()}

    def per_neuron_G(self, theta) -> np.ndarray:
        """``‖W2[:, i]‖² − ‖W1[i, :]‖² − b1[i]²`` for every hidden neuron, shape ``(R, hidden)``."""
        th, sq = self._theta(theta)
        out = np.sum(th[:, self._w2] ** 2, axis=1) - np.sum(th[:, self._w1] ** 2, axis=2)
        if self.bias:
            out = out - th[:, self._b1] ** 2
        return self._out(out, sq)

    def forward(self, theta, x) -> np.ndarray:
        """Network output ``f(x)``, shape ``(R, N, d_out)``."""
        import torch

        th, sq = self._theta(theta)
        x, _ = self._data(x, np.zeros(np.shape(x)[:-1] + (self.d_out,)), th.shape[0])
        with torch.no_grad():
            f = self._forward_t(torch.from_numpy(th), torch.from_numpy(x))
        return self._out(f.numpy(), sq)

    def per_neuron_noise_traces(self, theta, x, y) -> tuple[np.ndarray, np.ndarray]:
        """``(Tr Cov ∇_{u_i} ℓ, Tr Cov ∇_{w_i} ℓ)`` for every neuron ``i``, each ``(R, hidden)`` (Thm 3.2)."""
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        tu, tw = self._centered_sq_sums(th, x, y, per_neuron=True)
        return self._out(tu, sq), self._out(tw, sq)

    # ------------------------------------------------------------------ torch core
    def _split_t(self, th):
        """Views W1 (R,H,d_in), b1 (R,H) or None, W2 (R,d_out,H) of a torch ``(R, P)`` tensor."""
        R = th.shape[0]
        H, di, do = self.hidden, self.d_in, self.d_out
        W1 = th[:, : H * di].reshape(R, H, di)
        off = H * di
        b1 = None
        if self.bias:
            b1 = th[:, off: off + H]
            off += H
        W2 = th[:, off:].reshape(R, do, H)
        return W1, b1, W2

    def _forward_t(self, th, x):
        import torch

        W1, b1, W2 = self._split_t(th)
        h = torch.einsum("rhd,rnd->rnh", W1, x.expand(th.shape[0], *x.shape[1:]))
        if b1 is not None:
            h = h + b1[:, None, :]
        return torch.einsum("roh,rnh->rno", W2, torch.relu(h))

    def _single_loss(self, th, x, y):
        """Per-sample loss for one run and one sample (for torch.func)."""
        import torch

        H, di = self.hidden, self.d_in
        W1 = th[: H * di].reshape(H, di)
        off = H * di
        h = W1 @ x
        if self.bias:
            h = h + th[off: off + H]
            off += H
        W2 = th[off:].reshape(self.d_out, H)
        return ((W2 @ torch.relu(h) - y) ** 2).sum()

    def _per_sample_grad_t(self, th, x, y):
        """(R, n, P) torch per-sample gradients for torch inputs th (R,P), x (1|R, n, d_in), y (1|R, n, d_out)."""
        from torch.func import grad as func_grad
        from torch.func import vmap

        per_sample = vmap(func_grad(self._single_loss), in_dims=(None, 0, 0))
        in_x = 0 if x.shape[0] > 1 or th.shape[0] == 1 else None
        if in_x is None:
            return vmap(per_sample, in_dims=(0, None, None))(th, x[0], y[0])
        return vmap(per_sample, in_dims=(0, 0, 0))(th, x, y)

    # ------------------------------------------------------------------ SymmetricModel hooks
    def _data(self, x, y, runs):
        x, y = vector_batch(check_array("x", x), check_array("y", y), self.d_in, self.d_out, runs)
        # torch.from_numpy needs writable, contiguous memory (Dataset arrays are read-only)
        x = x if x.flags.writeable and x.flags.c_contiguous else np.array(x)
        y = y if y.flags.writeable and y.flags.c_contiguous else np.array(y)
        return x, y

    def _hidden(self, th, x):
        """``(x broadcast to (R, N, d_in), pre-activations h (R, N, hidden))`` in numpy."""
        xb = np.broadcast_to(x, (th.shape[0],) + x.shape[1:])
        h = np.matmul(xb, th[:, self._w1].transpose(0, 2, 1))
        if self.bias:
            h = h + th[:, None, self._b1]
        return xb, h

    def _per_sample_loss(self, th, x, y):
        if self.grad_backend == "numpy":  # a numpy forward pass (no torch threads at every record)
            _, h = self._hidden(th, x)
            f = np.matmul(np.maximum(h, 0.0), th[:, self._w2].transpose(0, 2, 1))
            return np.sum((f - y) ** 2, axis=2)
        import torch

        with torch.no_grad():
            f = self._forward_t(torch.from_numpy(np.ascontiguousarray(th)), torch.from_numpy(x))
            return ((f - torch.from_numpy(y)) ** 2).sum(-1).numpy()

    def _grad(self, th, x, y):
        if self.grad_backend == "numpy":
            return self._grad_numpy(th, x, y)
        return self._grad_torch(th, x, y)

    def _grad_numpy(self, th, x, y):
        """Hand-written backpropagation (tested against torch autograd); fast for small batches."""
        n = x.shape[1]
        W2 = th[:, self._w2]
        xb, h = self._hidden(th, x)  # (R, n, d_in), (R, n, H)
        a = np.maximum(h, 0.0)
        r = np.matmul(a, W2.transpose(0, 2, 1)) - y  # (R, n, d_out)
        out = np.empty_like(th)
        out[:, self._w2] = (2.0 / n) * np.matmul(r.transpose(0, 2, 1), a)
        dh = (2.0 / n) * np.matmul(r, W2) * (h > 0)  # (R, n, H)
        out[:, self._w1] = np.matmul(dh.transpose(0, 2, 1), xb)
        if self.bias:
            out[:, self._b1] = dh.sum(axis=1)
        if self.weight_decay:
            out += 2.0 * self.weight_decay * th
        return out

    def _grad_torch(self, th, x, y):
        import torch

        tt = torch.tensor(th, requires_grad=True)
        f = self._forward_t(tt, torch.from_numpy(x))
        # runs are independent: the gradient of the sum over runs gives each run's own gradient
        total = ((f - torch.from_numpy(y)) ** 2).sum(-1).mean(-1).sum()
        (g,) = torch.autograd.grad(total, tt)
        out = g.numpy()
        if self.weight_decay:
            out = out + 2.0 * self.weight_decay * th
        return out

    def _per_sample_grad_numpy(self, th, x, y):
        """Hand-written per-sample backpropagation, (R, n, P) (tested against torch.func)."""
        R, n = th.shape[0], x.shape[1]
        W2 = th[:, self._w2]
        xb, h = self._hidden(th, x)
        a = np.maximum(h, 0.0)
        r = np.matmul(a, W2.transpose(0, 2, 1)) - y  # (R, n, d_out)
        dh = 2.0 * np.matmul(r, W2) * (h > 0)  # (R, n, H)
        out = np.empty((R, n, self.n_params))
        out[:, :, self._w2] = 2.0 * r[:, :, :, None] * a[:, :, None, :]
        out[:, :, self._w1] = dh[:, :, :, None] * xb[:, :, None, :]
        if self.bias:
            out[:, :, self._b1] = dh
        return out

    def _per_sample_chunk(self, th, x, y):
        if self.grad_backend == "numpy":
            return self._per_sample_grad_numpy(th, x, y)
        import torch

        tt = torch.from_numpy(np.ascontiguousarray(th))
        return self._per_sample_grad_t(tt, torch.from_numpy(np.array(x)), torch.from_numpy(np.array(y))).numpy()

    def _per_sample_grad(self, th, x, y):
        N = x.shape[1]
        out = np.empty((th.shape[0], N, self.n_params))
        for start in range(0, N, _CHUNK):
            sl = slice(start, min(start + _CHUNK, N))
            out[:, sl] = self._per_sample_chunk(th, x[:, sl], y[:, sl])
        return out

    def _centered_sq_sums(self, th, x, y, per_neuron=False):
        """``mean_n ‖g_n − ḡ‖²`` over the u and w blocks (total, or per neuron ``(R, hidden)``).

        ``grad_backend="numpy"``: in closed form. With ``r_n = 2(f(x_n) − y_n)`` and ``a_n = relu(h_n)``, neuron
        ``i``'s per-sample gradients are ``∇_{u_i}ℓ_n = r_n a_ni`` and ``∇_{w_i}ℓ_n = δ_ni (x_n, 1)`` with
        ``δ_ni = (W2[:, i]·r_n)·1[h_ni > 0]``, so ``Tr Cov∇_{u_i}ℓ = mean_n ‖r_n‖² a_ni² − ‖mean_n r_n a_ni‖²`` and
        ``Tr Cov∇_{w_i}ℓ = mean_n δ_ni²(‖x_n‖² + 1) − ‖mean_n δ_ni (x_n, 1)‖²``: ``O(N·hidden·(d_in + d_out))``
        instead of ``N`` backward passes over all ``P`` parameters. Its round-off is ``~eps · mean‖g_n‖²`` (not
        ``eps · Tr Cov``): it loses digits only when the mean gradient dwarfs the noise by many orders of
        magnitude. ``"torch"``: two passes over materialised per-sample gradients (``torch.func``). The two agree
        to ~1e-12 relative in the tests.
        """
        if self.grad_backend == "numpy":
            W2 = th[:, self._w2]  # (R, d_out, H)
            xb, h = self._hidden(th, x)
            a = np.maximum(h, 0.0)  # (R, N, H)
            r = 2.0 * (np.matmul(a, W2.transpose(0, 2, 1)) - y)  # (R, N, d_out)
            n = x.shape[1]
            gbar_u = np.matmul(r.transpose(0, 2, 1), a) / n  # (R, d_out, H)
            tu = np.einsum("rn,rnh->rh", np.sum(r * r, axis=2), a * a) / n - np.sum(gbar_u**2, axis=1)
            delta = np.matmul(r, W2) * (h > 0)  # (R, N, H)
            feat_sq = np.sum(xb * xb, axis=2) + (1.0 if self.bias else 0.0)  # (R, N)
            gbar_w = np.matmul(delta.transpose(0, 2, 1), xb) / n  # (R, H, d_in)
            tw = np.einsum("rn,rnh->rh", feat_sq, delta * delta) / n - np.sum(gbar_w**2, axis=2)
            if self.bias:
                tw = tw - (delta.mean(axis=1)) ** 2
            if per_neuron:
                return tu, tw
            return tu.sum(axis=1), tw.sum(axis=1)
        gbar = self._grad(th, x, y)
        if self.weight_decay:
            gbar = gbar - 2.0 * self.weight_decay * th
        N = x.shape[1]
        R = th.shape[0]
        shape = (R, self.hidden) if per_neuron else (R,)
        tu, tw = np.zeros(shape), np.zeros(shape)
        for start in range(0, N, _CHUNK):
            sl = slice(start, min(start + _CHUNK, N))
            g = self._per_sample_chunk(th, x[:, sl], y[:, sl])
            g -= gbar[:, None, :]
            d2 = g * g  # (R, n, P)
            if per_neuron:
                tu += d2[:, :, self._w2].sum(axis=(1, 2))
                tw += d2[:, :, self._w1].sum(axis=(1, 3))
                if self.bias:
                    tw += d2[:, :, self._b1].sum(axis=1)
            else:
                tu += d2[:, :, self.u_index].sum(axis=(1, 2))
                tw += d2[:, :, self.w_index].sum(axis=(1, 2))
        return tu / N, tw / N

    def _noise_traces(self, th, x, y):
        return self._centered_sq_sums(th, x, y, per_neuron=False)

    def _v(self, th):
        W1 = th[:, self._w1]
        W2 = th[:, self._w2]
        return np.linalg.norm(W2 @ W1, axis=(1, 2))

    def __repr__(self) -> str:
        return (f"ReLUNet(d_in={self.d_in}, hidden={self.hidden}, d_out={self.d_out}, bias={self.bias}, "
                f"weight_decay={self.weight_decay})")
