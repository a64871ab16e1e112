"""Rescaling-symmetric models (numpy, float64, vectorised over R independent runs).

Each model has per-sample loss ``ℓ(θ, x) = (f_θ(x) − y)²`` (see :mod:`symsgd_core.core.conventions`),
per-sample gradients, and two symmetric blocks ``u``, ``w`` with
``ℓ(λu, w/λ) = ℓ(u, w)`` for all ``λ > 0``. Write ``B = diag(+1 on u, −1 on w, 0 elsewhere)``
and ``G(θ) = θᵀBθ = ‖u‖² − ‖w‖²``.

Shapes: ``theta`` is ``(R, P)`` (R runs, P parameters); a 1-D ``theta`` of shape ``(P,)`` is
accepted too and the leading ``R`` axis is then dropped from every result. Data ``x, y`` have
shape ``(N, ...)`` (shared by all runs) or ``(R, N, ...)`` (one batch per run); ``...`` is empty
for scalar-input models, ``d_in`` / ``d_out`` for :class:`Rank1LinearModel`.

Models:

* :class:`ScalarModel` — ``ℓ = (u w x − y)²``.
* :class:`Rank1LinearModel` — ``f(x) = u (wᵀx)``, ``u ∈ R^{d_out}``, ``w ∈ R^{d_in}``.
* :class:`DiagonalNet` — ``f(x) = (Σ_i Π_k u_i^(k)) x`` (paper Eq. 7 for depth 1, Section 4 for depth D).

Weight decay ``γ‖θ‖²`` (no ½) is added by :meth:`SymmetricModel.loss` and
:meth:`SymmetricModel.grad`, never to the per-sample (data) terms.
"""

from __future__ import annotations

import abc

import numpy as np

from ..core.validation import check_array, check_nonnegative, check_positive, check_positive_int
from .data import Moments
from .law import g_rate

__all__ = ["DiagonalNet", "Rank1LinearModel", "ScalarModel", "ScalarInputModel", "SymmetricModel",
           "OBSERVABLE_KEYS"]

#: The per-run observables returned by :meth:`SymmetricModel.evaluate` (and recorded by the dynamics).
OBSERVABLE_KEYS = ("u_sq", "w_sq", "G", "v", "loss", "tr_cov_u", "tr_cov_w", "dG_dt_theory")


class SymmetricModel(abc.ABC):
    """A model with a rescaling symmetry between parameter blocks ``u`` and ``w``.

    Attributes:
        name: short identifier.
        n_params: number of parameters ``P``.
        weight_decay: ``γ ≥ 0``; the loss adds ``γ‖θ‖²`` and the gradient ``2γθ``.
        u_index, w_index: int arrays into ``θ``: all u-entries and all w-entries.
        pairs: one ``(u_idx, w_idx)`` pair of int arrays per elementary symmetry
            (``ℓ`` is invariant under ``θ[u_idx] *= λ``, ``θ[w_idx] /= λ``).
    """

    name: str = "model"
    n_params: int
    weight_decay: float
    u_index: np.ndarray
    w_index: np.ndarray
    pairs: list

    def __init__(self, weight_decay: float = 0.0):
        self.weight_decay = check_nonnegative("weight_decay", weight_decay)

    # ------------------------------------------------------------------ structure
    def balance_signs(self) -> np.ndarray:
        """``(P,)`` vector: +1 on u, −1 on w, 0 elsewhere (``B = diag`` of it)."""
        s = np.zeros(self.n_params)
        s[self.u_index] = 1.0
        s[self.w_index] = -1.0
        return s

    def G(self, theta) -> np.ndarray:
        """``G = θᵀBθ = ‖u‖² − ‖w‖²``, shape ``(R,)``."""
        th, sq = self._theta(theta)
        return self._out(self._G(th), sq)

    def pair_G(self, theta) -> np.ndarray:
        """``‖u_p‖² − ‖w_p‖²`` for every symmetry pair ``p``, shape ``(R, n_pairs)``."""
        th, sq = self._theta(theta)
        out = np.stack([np.sum(th[:, u] ** 2, axis=1) - np.sum(th[:, w] ** 2, axis=1) for u, w in self.pairs],
                       axis=1)
        return self._out(out, sq)

    def rescale(self, theta, lam: float, pair: int | None = None) -> np.ndarray:
        """Apply the symmetry: ``u → λu``, ``w → w/λ`` (all of u/w, or only symmetry ``pairs[pair]``).

        Raises:
            ValueError: ``lam`` not > 0, or ``pair`` out of range.
        """
        lam = check_positive("lam", lam)
        th, sq = self._theta(theta)
        th = th.copy()
        if pair is None:
            u, w = self.u_index, self.w_index
        else:
            if not (isinstance(pair, (int, np.integer)) and 0 <= pair < len(self.pairs)):
                raise ValueError(f"pair must be an integer in [0, {len(self.pairs)}), got {pair!r}")
            u, w = self.pairs[pair]
        th[:, u] *= lam
        th[:, w] /= lam
        return self._out(th, sq)

    # ------------------------------------------------------------------ public API
    def per_sample_loss(self, theta, x, y) -> np.ndarray:
        """Data term ``ℓ(θ, x_n, y_n)`` (no weight decay), shape ``(R, N)``."""
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        return self._out(self._per_sample_loss(th, x, y), sq)

    def per_sample_grad(self, theta, x, y) -> np.ndarray:
        """Data-term gradients ``∇_θ ℓ(θ, x_n, y_n)``, shape ``(R, N, P)``."""
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        return self._out(self._per_sample_grad(th, x, y), sq)

    def loss(self, theta, x, y) -> np.ndarray:
        """``L = mean_n ℓ_n + γ‖θ‖²``, shape ``(R,)``."""
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        return self._out(self._loss(th, x, y), sq)

    def grad(self, theta, x, y) -> np.ndarray:
        """``∇L = mean_n ∇ℓ_n + 2γθ``, shape ``(R, P)``."""
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        return self._out(self._grad(th, x, y), sq)

    def noise_cov(self, theta, x, y) -> np.ndarray:
        """``C(θ) = mean_n g_n g_nᵀ − ḡ ḡᵀ`` of the per-sample data gradients (divide by N), ``(R, P, P)``."""
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        g = self._per_sample_grad(th, x, y)
        gc = g - g.mean(axis=1, keepdims=True)
        return self._out(np.einsum("rnp,rnq->rpq", gc, gc) / g.shape[1], sq)

    def noise_traces(self, theta, x, y) -> tuple[np.ndarray, np.ndarray]:
        """``(Tr Cov ∇_u ℓ, Tr Cov ∇_w ℓ)``, each ``(R,)``."""
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        tu, tw = self._noise_traces(th, x, y)
        return self._out(tu, sq), self._out(tw, sq)

    def G_rate(self, theta, x, y, temperature) -> np.ndarray:
        """The law of balance's ``dG/dt = T·(Tr Cov∇_uℓ − Tr Cov∇_wℓ) − 4γG`` (exact SDE drift of G), ``(R,)``.

        ``temperature`` is ``T`` (≥ 0; ``T = η/S`` for SGD), a scalar or an ``(R,)`` array.
        """
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        T = self._temperature(temperature, th.shape[0])
        tu, tw = self._noise_traces(th, x, y)
        return self._out(g_rate(T, tu, tw, self._G(th), self.weight_decay), sq)

    def symmetry_residual(self, theta, x, y) -> np.ndarray:
        """``θᵀB∇ℓ(θ, x_n)`` for every sample (zero by the symmetry), shape ``(R, N)``."""
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        g = self._per_sample_grad(th, x, y)
        return self._out(np.einsum("rnp,rp->rn", g, th * self.balance_signs()), sq)

    def v(self, theta) -> np.ndarray:
        """The function the model computes: ``uw`` (scalar), ``Σ_i Π_k u_i^(k)`` (diagonal), ``u wᵀ`` (rank-1).

        Shape ``(R,) + v_shape``.
        """
        th, sq = self._theta(theta)
        return self._out(self._v(th), sq)

    @property
    def v_shape(self) -> tuple:
        """Shape of ``v`` for one run (``()`` for scalar-output models)."""
        return ()

    def evaluate(self, theta, x, y, temperature: float = 0.0) -> dict:
        """All observables on the data ``(x, y)``: a dict over :data:`OBSERVABLE_KEYS`, each ``(R,)``.

        ``v`` has shape ``(R,) + v_shape``. ``dG_dt_theory`` is :meth:`G_rate` at ``temperature``.
        """
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        T = self._temperature(temperature, th.shape[0])
        obs = self._evaluate(th, x, y, T)
        return {k: self._out(val, sq) for k, val in obs.items()}

    # ------------------------------------------------------------------ internals (no validation)
    def _G(self, th):
        return np.sum(th[:, self.u_index] ** 2, axis=1) - np.sum(th[:, self.w_index] ** 2, axis=1)

    def _loss(self, th, x, y):
        out = self._per_sample_loss(th, x, y).mean(axis=1)
        if self.weight_decay:
            out = out + self.weight_decay * np.sum(th * th, axis=1)
        return out

    def _grad(self, th, x, y):
        out = self._per_sample_grad(th, x, y).mean(axis=1)
        if self.weight_decay:
            out = out + 2.0 * self.weight_decay * th
        return out

    def _noise_traces(self, th, x, y):
        g = self._per_sample_grad(th, x, y)
        gc = g - g.mean(axis=1, keepdims=True)
        tu = np.mean(np.sum(gc[:, :, self.u_index] ** 2, axis=2), axis=1)
        tw = np.mean(np.sum(gc[:, :, self.w_index] ** 2, axis=2), axis=1)
        return tu, tw

    def _evaluate(self, th, x, y, T):
        tu, tw = self._noise_traces(th, x, y)
        u_sq = np.sum(th[:, self.u_index] ** 2, axis=1)
        w_sq = np.sum(th[:, self.w_index] ** 2, axis=1)
        G = u_sq - w_sq
        return {"u_sq": u_sq, "w_sq": w_sq, "G": G, "v": self._v(th), "loss": self._loss(th, x, y),
                "tr_cov_u": tu, "tr_cov_w": tw, "dG_dt_theory": g_rate(T, tu, tw, G, self.weight_decay)}

    def _temperature(self, temperature, runs):
        if np.ndim(temperature) == 0:
            return check_nonnegative("temperature", float(temperature))
        T = check_array("temperature", temperature, shape=(runs,))
        if np.any(T < 0):
            raise ValueError("temperature must be >= 0")
        return T

    def _theta(self, theta):
        th = np.asarray(theta, dtype=np.float64)
        if th.ndim == 1:
            th = check_array("theta", th, shape=(self.n_params,))[None, :]
            return th, True
        return check_array("theta", th, shape=(None, self.n_params)), False

    @staticmethod
    def _out(arr, squeeze):
        return arr[0] if squeeze else arr

    @abc.abstractmethod
    def _data(self, x, y, runs):
        """Validate and normalise ``x, y`` to arrays with a leading run axis (length 1 or ``runs``)."""

    @abc.abstractmethod
    def _per_sample_loss(self, th, x, y):
        """(R, N) data losses for normalised inputs."""

    @abc.abstractmethod
    def _per_sample_grad(self, th, x, y):
        """(R, N, P) data gradients for normalised inputs."""

    @abc.abstractmethod
    def _v(self, th):
        """The computed function for each run."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(P={self.n_params}, weight_decay={self.weight_decay})"


def _scalar_data(x, y, runs):
    x = check_array("x", x)
    y = check_array("y", y)
    if x.ndim not in (1, 2):
        raise ValueError(f"x must have shape (N,) or (R, N) for a scalar-input model, got {x.shape}")
    if y.shape != x.shape:
        raise ValueError(f"y must have the same shape as x {x.shape}, got {y.shape}")
    if x.shape[-1] == 0:
        raise ValueError("x must contain at least one sample")
    if x.ndim == 2 and x.shape[0] != runs:
        raise ValueError(f"x of shape (R, N) must have R = {runs} rows (one per run), got {x.shape[0]}")
    if x.ndim == 1:
        x, y = x[None, :], y[None, :]
    return x, y


class ScalarInputModel(SymmetricModel):
    """Base class for models ``f(x) = v(θ) x`` with scalar input and output.

    Then ``∇ℓ_n = 2 (v x_n − y_n) x_n ∇v``, so ``C(θ) = 4 g(v) ∇v∇vᵀ`` (rank one) with the data
    moments' ``g(v) = α₁v² − 2α₂v + α₃`` (:class:`symsgd_core.balance.data.Moments`). Subclasses give
    ``_v(th) -> (R,)`` and ``_dv(th) -> (R, P)``.
    """

    def _data(self, x, y, runs):
        return _scalar_data(x, y, runs)

    @abc.abstractmethod
    def _dv(self, th):
        """(R, P) gradient of v."""

    def dv(self, theta) -> np.ndarray:
        """``∇_θ v``, shape ``(R, P)``."""
        th, sq = self._theta(theta)
        return self._out(self._dv(th), sq)

    def _residual(self, th, x, y):
        return self._v(th)[:, None] * x - y

    def _per_sample_loss(self, th, x, y):
        return self._residual(th, x, y) ** 2

    def _per_sample_grad(self, th, x, y):
        c = 2.0 * self._residual(th, x, y) * x  # (R, N) = ∂ℓ/∂v
        return c[:, :, None] * self._dv(th)[:, None, :]

    def _grad(self, th, x, y):
        c = np.mean(2.0 * self._residual(th, x, y) * x, axis=1)
        out = c[:, None] * self._dv(th)
        if self.weight_decay:
            out = out + 2.0 * self.weight_decay * th
        return out

    def _noise_traces(self, th, x, y):
        c = 2.0 * self._residual(th, x, y) * x
        var_c = np.mean((c - c.mean(axis=1, keepdims=True)) ** 2, axis=1)
        dv = self._dv(th)
        return (var_c * np.sum(dv[:, self.u_index] ** 2, axis=1),
                var_c * np.sum(dv[:, self.w_index] ** 2, axis=1))

    # ---------------------------------------------------------------- population (exact moments)
    def population_grad(self, theta, moments: Moments) -> np.ndarray:
        """``∇L`` under the data law with ``moments``: ``2(β₁v − β₂)∇v + 2γθ``, ``(R, P)``."""
        th, sq = self._theta(theta)
        return self._out(self._population_grad(th, moments), sq)

    def population_noise_factor(self, theta, moments: Moments) -> np.ndarray:
        """``b`` with ``C(θ) = b bᵀ`` under the data law: ``b = 2 sqrt(g(v)) ∇v``, ``(R, P)``."""
        th, sq = self._theta(theta)
        return self._out(self._population_noise_factor(th, moments), sq)

    def evaluate_moments(self, theta, moments: Moments, temperature: float = 0.0) -> dict:
        """:meth:`evaluate` under the data law with ``moments`` (exact for :class:`GaussianData`)."""
        th, sq = self._theta(theta)
        T = self._temperature(temperature, th.shape[0])
        return {k: self._out(val, sq) for k, val in self._evaluate_moments(th, moments, T).items()}

    def _population_grad(self, th, m):
        out = (2.0 * (m.beta1 * self._v(th) - m.beta2))[:, None] * self._dv(th)
        if self.weight_decay:
            out = out + 2.0 * self.weight_decay * th
        return out

    def _population_noise_factor(self, th, m):
        return (2.0 * np.sqrt(m.g(self._v(th))))[:, None] * self._dv(th)

    def _evaluate_moments(self, th, m, T):
        v = self._v(th)
        dv = self._dv(th)
        var_c = 4.0 * m.g(v)
        tu = var_c * np.sum(dv[:, self.u_index] ** 2, axis=1)
        tw = var_c * np.sum(dv[:, self.w_index] ** 2, axis=1)
        u_sq = np.sum(th[:, self.u_index] ** 2, axis=1)
        w_sq = np.sum(th[:, self.w_index] ** 2, axis=1)
        G = u_sq - w_sq
        loss = m.loss(v)
        if self.weight_decay:
            loss = loss + self.weight_decay * np.sum(th * th, axis=1)
        return {"u_sq": u_sq, "w_sq": w_sq, "G": G, "v": v, "loss": loss, "tr_cov_u": tu, "tr_cov_w": tw,
                "dG_dt_theory": g_rate(T, tu, tw, G, self.weight_decay)}


class ScalarModel(ScalarInputModel):
    """``ℓ = (u w x − y)²`` with ``θ = (u, w)``; ``v = uw``.

    Args:
        weight_decay: ``γ ≥ 0`` (loss adds ``γ(u² + w²)``).
    """

    name = "scalar"
    n_params = 2

    def __init__(self, weight_decay: float = 0.0):
        super().__init__(weight_decay)
        self.u_index = np.array([0])
        self.w_index = np.array([1])
        self.pairs = [(self.u_index, self.w_index)]

    def _v(self, th):
        return th[:, 0] * th[:, 1]

    def _dv(self, th):
        return th[:, ::-1].copy()

    def lifted_grad(self, theta, x, y) -> np.ndarray:
        """Per-sample ``A = ∂ℓ̃/∂M`` at ``M = uw`` for ``ℓ̃(M) = (M x − y)²``: ``A = 2(uwx − y)x``, ``(R, N, 1, 1)``.

        ``∂ℓ/∂u = A w`` and ``∂ℓ/∂w = Aᵀ u``.
        """
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        A = 2.0 * self._residual(th, x, y) * x
        return self._out(np.broadcast_to(A, (th.shape[0], A.shape[1]))[:, :, None, None].copy(), sq)


class DiagonalNet(ScalarInputModel):
    """Depth-D, width-d diagonal net: ``f(x) = (Σ_i Π_{k=0}^{D} u_i^(k)) x`` (paper Eq. 7 / Eq. 13).

    ``θ`` is layer-major: ``θ[k·width + i] = u_i^(k)``, ``P = (depth + 1)·width``. ``depth = 1`` is
    the two-layer diagonal net of Eq. 7 (``u`` = layer 0, ``w`` = layer 1). For ``depth ≥ 2`` the
    ``u``/``w`` blocks are layers 0/1 (any adjacent pair has the symmetry) and :attr:`pairs` lists
    every elementary symmetry: each neuron ``i`` of each adjacent-layer pair ``(k, k+1)``, ordered
    by ``k`` then ``i``. ``depth = 0`` (linear regression) has no symmetry and is refused.

    Args:
        width: number of diagonal paths ``d ≥ 1``.
        depth: ``D ≥ 1``.
        weight_decay: ``γ ≥ 0``.
    """

    name = "diagonal"

    def __init__(self, width: int, depth: int = 1, weight_decay: float = 0.0):
        super().__init__(weight_decay)
        self.width = check_positive_int("width", width)
        self.depth = check_positive_int("depth", depth)
        self.n_params = (self.depth + 1) * self.width
        W = self.width
        self.u_index = np.arange(0, W)
        self.w_index = np.arange(W, 2 * W)
        self.pairs = [(np.array([k * W + i]), np.array([(k + 1) * W + i]))
                      for k in range(self.depth) for i in range(W)]

    def layer_index(self, k: int) -> np.ndarray:
        """Indices of layer ``k`` (``0 ≤ k ≤ depth``) in ``θ``."""
        if not (isinstance(k, (int, np.integer)) and 0 <= k <= self.depth):
            raise ValueError(f"k must be an integer in [0, {self.depth}], got {k!r}")
        return np.arange(k * self.width, (k + 1) * self.width)

    def path_values(self, theta) -> np.ndarray:
        """``v_i = Π_k u_i^(k)``, shape ``(R, width)``."""
        th, sq = self._theta(theta)
        return self._out(self._layers(th).prod(axis=1), sq)

    def _layers(self, th):
        return th.reshape(th.shape[0], self.depth + 1, self.width)

    def _v(self, th):
        return self._layers(th).prod(axis=1).sum(axis=1)

    def _dv(self, th):
        lay = self._layers(th)  # (R, D+1, W)
        R, L, W = lay.shape
        # product over all layers except k, without division (zeros are allowed)
        pre = np.ones((R, L, W))
        suf = np.ones((R, L, W))
        for k in range(1, L):
            pre[:, k] = pre[:, k - 1] * lay[:, k - 1]
        for k in range(L - 2, -1, -1):
            suf[:, k] = suf[:, k + 1] * lay[:, k + 1]
        return (pre * suf).reshape(R, L * W)

    def __repr__(self) -> str:
        return f"DiagonalNet(width={self.width}, depth={self.depth}, weight_decay={self.weight_decay})"


def vector_batch(x: np.ndarray, y: np.ndarray, d_in: int, d_out: int, runs: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate vector data and give it a run axis.

    Args:
        x: ``(N, d_in)`` shared by all runs, or ``(R, N, d_in)`` one batch per run.
        y: ``(N, d_out)`` or ``(R, N, d_out)``, matching ``x``.
        runs: ``R``, the number of runs the batch is for.

    Returns:
        ``(x, y)`` of shapes ``(1|R, N, d_in)``, ``(1|R, N, d_out)``.

    Raises:
        ValueError: on a shape that does not fit, no samples, or a per-run batch for the wrong ``R``.
    """
    if x.ndim not in (2, 3) or x.shape[-1] != d_in:
        raise ValueError(f"x must have shape (N, {d_in}) or (R, N, {d_in}), got {x.shape}")
    if y.ndim != x.ndim or y.shape[-1] != d_out or y.shape[:-1] != x.shape[:-1]:
        raise ValueError(f"y must have shape {x.shape[:-1] + (d_out,)} to match x {x.shape}, got {y.shape}")
    if x.shape[-2] == 0:
        raise ValueError("x must contain at least one sample")
    if x.ndim == 3 and x.shape[0] != runs:
        raise ValueError(f"x of shape (R, N, d_in) must have R = {runs} (one batch per run), got {x.shape[0]}")
    if x.ndim == 2:
        x, y = x[None], y[None]
    return x, y


class Rank1LinearModel(SymmetricModel):
    """Rank-1 two-layer linear net ``f(x) = u (wᵀx)``, ``θ = (u ∈ R^{d_out}, w ∈ R^{d_in})``.

    ``ℓ = ‖u (wᵀx) − y‖²``; the symmetry is ``(u, w) → (λu, w/λ)``; ``v = u wᵀ`` (``d_out × d_in``).
    Data: ``x (N, d_in)`` or ``(R, N, d_in)``, ``y (N, d_out)`` or ``(R, N, d_out)``; a trailing
    dimension of size 1 may be omitted for shared 1-D data ``(N,)`` only.

    Args:
        d_in, d_out: input/output dimensions (≥ 1).
        weight_decay: ``γ ≥ 0``.
    """

    name = "rank1"

    def __init__(self, d_in: int, d_out: int, weight_decay: float = 0.0):
        super().__init__(weight_decay)
        self.d_in = check_positive_int("d_in", d_in)
        self.d_out = check_positive_int("d_out", d_out)
        self.n_params = self.d_in + self.d_out
        self.u_index = np.arange(0, self.d_out)
        self.w_index = np.arange(self.d_out, self.d_out + self.d_in)
        self.pairs = [(self.u_index, self.w_index)]

    @property
    def v_shape(self) -> tuple:
        return (self.d_out, self.d_in)

    def _data(self, x, y, runs):
        x = check_array("x", x)
        y = check_array("y", y)
        if self.d_in == 1 and x.ndim == 1:
            x = x[:, None]
        if self.d_out == 1 and y.ndim == 1:
            y = y[:, None]
        return vector_batch(x, y, self.d_in, self.d_out, runs)

    def _split(self, th):
        return th[:, : self.d_out], th[:, self.d_out:]

    def _v(self, th):
        u, w = self._split(th)
        return u[:, :, None] * w[:, None, :]

    def _residual(self, th, x, y):
        u, w = self._split(th)
        s = np.einsum("rnd,rd->rn", np.broadcast_to(x, (th.shape[0],) + x.shape[1:]), w)  # wᵀx, (R, N)
        return s, s[:, :, None] * u[:, None, :] - y  # (R, N), (R, N, d_out)

    def _per_sample_loss(self, th, x, y):
        _, r = self._residual(th, x, y)
        return np.sum(r * r, axis=2)

    def _per_sample_grad(self, th, x, y):
        u, _ = self._split(th)
        s, r = self._residual(th, x, y)
        gu = 2.0 * r * s[:, :, None]  # (R, N, d_out)
        gw = 2.0 * np.einsum("rno,ro->rn", r, u)[:, :, None] * x  # (R, N, d_in)
        return np.concatenate([gu, np.broadcast_to(gw, gu.shape[:2] + (self.d_in,))], axis=2)

    def lifted_grad(self, theta, x, y) -> np.ndarray:
        """Per-sample ``A = ∂ℓ̃/∂M = 2 r xᵀ`` at ``M = u wᵀ`` for ``ℓ̃(M) = ‖M x − y‖²``, ``(R, N, d_out, d_in)``.

        ``∂ℓ/∂u = A w`` and ``∂ℓ/∂w = Aᵀ u``.
        """
        th, sq = self._theta(theta)
        x, y = self._data(x, y, th.shape[0])
        _, r = self._residual(th, x, y)
        return self._out(2.0 * r[:, :, :, None] * np.broadcast_to(x, r.shape[:2] + (self.d_in,))[:, :, None, :], sq)

    def __repr__(self) -> str:
        return f"Rank1LinearModel(d_in={self.d_in}, d_out={self.d_out}, weight_decay={self.weight_decay})"
