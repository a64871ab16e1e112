"""Training data for the rescaling-symmetric models: a Gaussian teacher and finite datasets.

The data law used throughout the paper's worked examples is ``x ~ N(0, 1)``,
``y = k x + ε``, ``ε ~ N(0, σ²)``; :class:`GaussianData` also has a vector form
``x ~ N(0, I_{d_in})``, ``y = K x + ε``. Its exact moments (``α``, ``β``) are in
:meth:`GaussianData.moments`. A finite training set is a :class:`Dataset`, from which
SGD draws minibatches (:meth:`Dataset.minibatches`).

Shapes: scalar data are 1-D arrays ``x, y: (N,)``; vector data are ``x: (N, d_in)``,
``y: (N, d_out)``. Every array is float64.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from ..core.validation import as_generator, check_array, check_finite, check_nonnegative, check_positive_int

__all__ = ["Dataset", "GaussianData", "Moments", "moments_of_samples"]


@dataclass(frozen=True)
class Moments:
    """Data moments of a scalar regression law ``(x, y)`` (paper, Eq. 7 and Section 4).

    The one definition of the moments, ``Δ`` and ``g``: the stationary laws' problem
    (:class:`symsgd_core.stationary.laws.DiagonalNetProblem`) is these moments plus a weight decay.

    Attributes:
        alpha1: ``Var[x²]``.
        alpha2: ``E[x³y] − E[x²] E[xy]`` (= ``Cov[x², xy]``).
        alpha3: ``Var[xy]``.
        beta1: ``E[x²]``.
        beta2: ``E[xy]``.
        delta: ``Δ = α₁α₃ − α₂² ≥ 0``. Keyword-only; when not given it is computed as
            ``α₁α₃ − α₂²`` (:func:`moments_of_samples` and :meth:`GaussianData.moments` give it
            without cancellation).
        y2: ``E[y²]`` (keyword-only; ``None`` when unknown).
        loss_floor: ``min_v E[(v x − y)²] = E[y²] − β₂²/β₁`` (keyword-only; ``None`` when unknown;
            :func:`moments_of_samples` computes it without cancellation).

    For ``f = v x`` the per-sample gradient covariance is ``C = 4 g(v) ∇v ∇vᵀ`` with
    ``g(v) = α₁v² − 2α₂v + α₃`` (:meth:`g`, :meth:`g_polynomial`), and the loss is
    ``β₁(v − β₂/β₁)² + loss_floor`` (:meth:`loss`).

    A derived ``delta`` is stored, so ``dataclasses.replace`` of an ``alpha`` must also pass ``delta``.
    """

    alpha1: float
    alpha2: float
    alpha3: float
    beta1: float
    beta2: float
    _: KW_ONLY
    delta: float | None = None
    y2: float | None = None
    loss_floor: float | None = None

    def __post_init__(self) -> None:
        if self.delta is None:
            object.__setattr__(self, "delta", self.alpha1 * self.alpha3 - self.alpha2**2)

    def g(self, v):
        """``g(v) = α₁v² − 2α₂v + α₃``, written as ``α₁(v − α₂/α₁)² + Δ/α₁`` (no cancellation, ≥ 0).

        The stable form, used by the law-of-balance side (:mod:`symsgd_core.balance`): it stays
        ``≥ Δ/α₁`` at every ``v`` even when ``Δ`` is tiny next to ``α₁v²`` (finite datasets).
        """
        v = np.asarray(v, dtype=np.float64)
        if self.alpha1 > 0:
            return self.alpha1 * (v - self.alpha2 / self.alpha1) ** 2 + self.delta / self.alpha1
        return self.alpha3 - 2.0 * self.alpha2 * v

    def g_polynomial(self, v):
        """``g(v) = (α₁v − 2α₂)v + α₃``, the polynomial form (Horner), elementwise; real or complex ``v``.

        Used by the stationary laws and the v-SDE (:mod:`symsgd_core.stationary`), whose tabulated
        laws, checks and figures were computed with it: it equals :meth:`g` up to round-off, and
        keeping it keeps their numbers bit-identical. Accepts complex ``v`` (complex-step derivatives).
        """
        v = np.asarray(v)
        return (self.alpha1 * v - 2.0 * self.alpha2) * v + self.alpha3

    def loss(self, v):
        """Mean loss ``E[(v x − y)²] = β₁(v − β₂/β₁)² + loss_floor`` (≥ 0).

        Raises:
            ValueError: if ``loss_floor`` (or ``y2`` when ``β₁ = 0``) is unknown.
        """
        v = np.asarray(v, dtype=np.float64)
        if self.beta1 > 0:
            if self.loss_floor is None:
                raise ValueError("loss() needs the moments' loss_floor, which is unknown (None)")
            return self.beta1 * (v - self.beta2 / self.beta1) ** 2 + self.loss_floor
        if self.y2 is None:
            raise ValueError("loss() needs the moments' y2, which is unknown (None)")
        return np.full_like(v, self.y2)


def moments_of_samples(x, y) -> Moments:
    """Empirical (population-style, divide by N) :class:`Moments` of scalar samples.

    Args:
        x, y: arrays of shape ``(N,)``, finite.

    Returns:
        The moments of the empirical law of the ``N`` points.

    Raises:
        ValueError: if ``x``/``y`` are not finite 1-D arrays of the same length ``N ≥ 1``.
    """
    x = check_array("x", x, ndim=1)
    y = check_array("y", y, shape=x.shape)
    if x.size == 0:
        raise ValueError("x must contain at least one sample")
    x2, xy = x * x, x * y
    beta1, beta2, y2 = float(x2.mean()), float(xy.mean()), float((y * y).mean())
    alpha1 = float(((x2 - beta1) ** 2).mean())
    alpha2 = float(((x2 - beta1) * (xy - beta2)).mean())
    alpha3 = float(((xy - beta2) ** 2).mean())
    if alpha1 > 0:
        v0 = alpha2 / alpha1  # argmin of g: Δ/α₁ = Var[v0 x² − xy]
        resid = v0 * x2 - xy
        delta = alpha1 * float(((resid - resid.mean()) ** 2).mean())
    else:
        delta = alpha1 * alpha3 - alpha2**2
    if beta1 > 0:
        vstar = beta2 / beta1
        loss_floor = float(((vstar * x - y) ** 2).mean())
    else:
        loss_floor = y2
    return Moments(alpha1, alpha2, alpha3, beta1, beta2, delta=delta, y2=y2, loss_floor=loss_floor)


class Dataset:
    """A finite training set of ``N`` points (arrays are read-only copies).

    Args:
        x: inputs, ``(N,)`` (scalar) or ``(N, d_in)``.
        y: targets, ``(N,)`` (scalar) or ``(N, d_out)``; same ``N`` as ``x``.

    Raises:
        ValueError: non-finite values, wrong number of dimensions, ``N = 0`` or
            mismatched lengths (the message names ``x`` or ``y``).
    """

    def __init__(self, x, y):
        x = check_array("x", x)
        y = check_array("y", y)
        if x.ndim not in (1, 2):
            raise ValueError(f"x must have shape (N,) or (N, d_in), got {x.shape}")
        if y.ndim not in (1, 2):
            raise ValueError(f"y must have shape (N,) or (N, d_out), got {y.shape}")
        if x.shape[0] == 0:
            raise ValueError("x must contain at least one sample (N >= 1)")
        if y.shape[0] != x.shape[0]:
            raise ValueError(f"y must have the same number of samples as x ({x.shape[0]}), got {y.shape[0]}")
        x = np.array(x, dtype=np.float64, copy=True)
        y = np.array(y, dtype=np.float64, copy=True)
        x.setflags(write=False)
        y.setflags(write=False)
        self._x, self._y = x, y

    @property
    def x(self) -> np.ndarray:
        return self._x

    @property
    def y(self) -> np.ndarray:
        return self._y

    @property
    def n(self) -> int:
        """Number of training points ``N``."""
        return int(self._x.shape[0])

    @property
    def is_scalar(self) -> bool:
        """True when ``x`` and ``y`` are 1-D (scalar input and output)."""
        return self._x.ndim == 1 and self._y.ndim == 1

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"Dataset(n={self.n}, x{tuple(self._x.shape)}, y{tuple(self._y.shape)})"

    def full(self) -> tuple[np.ndarray, np.ndarray]:
        """The whole training set ``(x, y)`` (read-only views)."""
        return self._x, self._y

    def moments(self) -> Moments:
        """Empirical moments of a scalar dataset (see :func:`moments_of_samples`)."""
        if not self.is_scalar:
            raise ValueError("moments() needs a scalar dataset (x and y of shape (N,))")
        return moments_of_samples(self._x, self._y)

    def minibatch_indices(self, rng, runs: int, batch_size: int, replace: bool = True) -> np.ndarray:
        """Indices of one minibatch per run, shape ``(runs, batch_size)`` (int64).

        With ``replace=True`` (the paper's SGD: points drawn independently) the indices are
        ``rng.integers(0, N, size=(runs, batch_size))``. With ``replace=False`` each run's
        batch has ``batch_size`` distinct points (a uniformly random subset, in random order).

        Raises:
            ValueError: ``runs < 1``, ``batch_size < 1``, or ``batch_size > N`` without replacement.
        """
        rng = as_generator(rng)
        runs = check_positive_int("runs", runs)
        batch_size = check_positive_int("batch_size", batch_size)
        if not replace and batch_size > self.n:
            raise ValueError(f"batch_size must be <= N = {self.n} when sampling without replacement, "
                             f"got {batch_size}")
        if replace:
            return rng.integers(0, self.n, size=(runs, batch_size))
        keys = rng.random((runs, self.n))
        return np.argpartition(keys, batch_size - 1, axis=1)[:, :batch_size] if batch_size < self.n \
            else np.argsort(keys, axis=1)

    def minibatches(self, rng, runs: int, batch_size: int, replace: bool = True):
        """One minibatch per run: ``(x_b, y_b)`` with leading shape ``(runs, batch_size)``.

        See :meth:`minibatch_indices` for how points are drawn.
        """
        idx = self.minibatch_indices(rng, runs, batch_size, replace)
        return self._x[idx], self._y[idx]


@dataclass(frozen=True, eq=False)
class GaussianData:
    """The teacher law ``x ~ N(0, I_{d_in})``, ``y = K x + ε``, ``ε ~ N(0, σ² I_{d_out})``.

    Args:
        k: teacher slope for the scalar case, and the scale of the default teacher
            ``K = k · eye(d_out, d_in)`` in the vector case.
        sigma: label-noise standard deviation ``σ ≥ 0``.
        d_in, d_out: input and output dimensions; ``d_in = d_out = 1`` is the scalar case
            (1-D arrays, ``K = k``).
        teacher: optional explicit ``K`` of shape ``(d_out, d_in)`` (vector case).

    Draw order in :meth:`sample` (fixed, so a seed gives the same data everywhere):
    all of ``x`` first, then all of ``ε``.
    """

    k: float = 1.0
    sigma: float = 1.0
    d_in: int = 1
    d_out: int = 1
    teacher: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "k", check_finite("k", self.k))
        object.__setattr__(self, "sigma", check_nonnegative("sigma", self.sigma))
        object.__setattr__(self, "d_in", check_positive_int("d_in", self.d_in))
        object.__setattr__(self, "d_out", check_positive_int("d_out", self.d_out))
        if self.teacher is None:
            K = self.k * np.eye(self.d_out, self.d_in)
        else:
            K = check_array("teacher", self.teacher, shape=(self.d_out, self.d_in)).copy()
        K.setflags(write=False)
        object.__setattr__(self, "teacher", K)

    @property
    def is_scalar(self) -> bool:
        """True for ``d_in = d_out = 1`` (1-D arrays)."""
        return self.d_in == 1 and self.d_out == 1

    def sample(self, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` fresh points.

        Args:
            n: number of samples (≥ 1).
            rng: a seed (int) or a ``numpy.random.Generator``.

        Returns:
            ``(x, y)``: scalar case ``(n,), (n,)``; vector case ``(n, d_in), (n, d_out)``.
        """
        n = check_positive_int("n", n)
        rng = as_generator(rng)
        if self.is_scalar:
            x = rng.standard_normal(n)
            eps = rng.standard_normal(n)
            kk = float(self.teacher[0, 0])
            return x, kk * x + self.sigma * eps
        x = rng.standard_normal((n, self.d_in))
        eps = rng.standard_normal((n, self.d_out))
        return x, x @ self.teacher.T + self.sigma * eps

    def dataset(self, n: int, seed=0) -> Dataset:
        """A finite training set of ``n`` points drawn with ``seed`` (int or Generator)."""
        return Dataset(*self.sample(n, as_generator(seed)))

    def moments(self) -> Moments:
        """Exact moments of the scalar Gaussian law (paper, Section 3 example).

        ``α₁ = 2``, ``α₂ = 2k``, ``α₃ = 2k² + σ²``, ``β₁ = 1``, ``β₂ = k``, ``Δ = 2σ²``,
        ``E[y²] = k² + σ²``, ``loss_floor = σ²``.

        Raises:
            ValueError: for the vector case (``d_in`` or ``d_out`` > 1).
        """
        if not self.is_scalar:
            raise ValueError("moments() is defined for the scalar case only (d_in = d_out = 1)")
        k, s2 = float(self.teacher[0, 0]), self.sigma**2
        return Moments(alpha1=2.0, alpha2=2.0 * k, alpha3=2.0 * k * k + s2, beta1=1.0, beta2=k,
                       delta=2.0 * s2, y2=k * k + s2, loss_floor=s2)
