"""Deep linear networks ``A_θ = W_L ⋯ W_1`` (Wang, Jacot, arXiv 2305.16038): parameters and measurements.

Network. ``W_ℓ ∈ R^{d_{ℓ+1} × d_ℓ}``, ``d_1 = n`` (columns of A) and ``d_{L+1} = m`` (rows of A). An
*ensemble* of R independent runs is stored as one float64 array ``flat`` of shape ``(R, P)``
(:class:`Params`), layer ℓ occupying ``flat[:, offsets[ℓ]:offsets[ℓ+1]]`` in C order. Init:
``W_ℓ ~ N(0, 1/d_ℓ)`` entrywise, run ``r`` from stream ``r`` of :func:`symsgd_core.core.seeding.streams`.

Measurements (formalisations stated here are this project's; the paper's f_α is not available):

* **Numerical rank** with threshold ``rank_tol`` (absolute, in the units of A's entries; default
  :data:`DEFAULT_RANK_TOL` = 1e-3): ``rank(A) = #{k : s_k(A) > rank_tol}``. Rank 0 means A = 0
  ("collapsed", B_0).
* **B_r** (:class:`BrCriterion`): ``B_r = {θ : ‖θ‖² ≤ R, max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F ≤ ε₂,
  max_ℓ s_{r+1}(W_ℓ) ≤ ε₁}`` (Frobenius norm for the imbalance; ``s_{r+1}(W) = 0`` when W has ≤ r
  singular values), the sets of the paper's Theorem (one-way jumps into B_r). Displayed names follow Notebook 04's
  notation (ε₁ rank, ε₂ balance, R norm); the criterion's fields are ``alpha``, ``eps1`` and ``C``.
* **Induced penalty** ``min_{θ: A_θ = A} ‖θ‖² = L Σ_k s_k(A)^{2/L}``, attained by balanced factorisations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.seeding import stream, streams
from ..core.validation import check_array, check_int, check_positive, check_positive_int

__all__ = ["DEFAULT_B_CRITERION", "DEFAULT_RANK_TOL", "replicate", "Architecture", "BrCriterion", "Params",
           "balanced_factorisation",
           "balancedness", "end_to_end", "exact_rank_tol", "in_B", "smallest_B", "induced_penalty", "schatten_penalty",
           "init_params",
           "layer_singular_values", "make_architecture", "numerical_rank", "singular_values"]


#: Absolute threshold of the numerical rank: ``rank(A) = #{k : s_k(A) > 1e-3}``.


#: Jumps drive the dropped singular value to round-off (≈1e-15) within a few hundred


#: steps, so any threshold between ~1e-2 and ~1e-10 gives the same jump times to


#: within those few hundred steps.
DEFAULT_RANK_TOL = 1e-3


@dataclass(frozen=True)
class Architecture:
    """Layer widths of a deep linear network ``A = W_L ⋯ W_1``.

    Attributes:
        dims: ``(d_1, …, d_{L+1})`` with ``d_1 = n`` (columns of A, input) and
            ``d_{L+1} = m`` (rows of A, output); ``W_ℓ`` has shape ``(d_{ℓ+1}, d_ℓ)``.
    """

    dims: tuple[int, ...]

    def __post_init__(self):
        dims = tuple(check_positive_int(f"dims[{k}]", d) for k, d in enumerate(self.dims))
        if len(dims) < 2:
            raise ValueError(f"dims must have at least 2 entries (depth >= 1), got {self.dims!r}")
        object.__setattr__(self, "dims", dims)

    @property
    def depth(self) -> int:
        """Number of layers L (≥ 1)."""
        return len(self.dims) - 1

    @property
    def out_shape(self) -> tuple[int, int]:
        """Shape ``(m, n)`` of the end-to-end matrix A."""
        return (self.dims[-1], self.dims[0])

    @property
    def layer_shapes(self) -> list[tuple[int, int]]:
        """``[(d_{ℓ+1}, d_ℓ) for ℓ = 1..L]``."""
        return [(self.dims[k + 1], self.dims[k]) for k in range(self.depth)]

    @property
    def offsets(self) -> np.ndarray:
        """int64 array (L+1,): layer ℓ (0-based) is ``flat[offsets[ℓ]:offsets[ℓ+1]]``."""
        sizes = [a * b for a, b in self.layer_shapes]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    @property
    def n_params(self) -> int:
        """Total number of parameters P."""
        return int(self.offsets[-1])

    @property
    def max_width(self) -> int:
        """Largest ``min(d_{ℓ+1}, d_ℓ)``: the number of singular values per layer recorded."""
        return max(min(a, b) for a, b in self.layer_shapes)


def make_architecture(shape: tuple[int, int], depth: int, width: int) -> Architecture:
    """Architecture for an ``m × n`` target with ``depth`` layers of hidden ``width``.

    Args:
        shape: ``(m, n)``, the shape of A.
        depth: L ≥ 1 (the one-way behaviour needs L ≥ 3; L = 1, 2 are allowed).
        width: hidden width w ≥ 1 (unused when L = 1).

    Returns:
        ``Architecture((n, w, …, w, m))``.

    Raises:
        ValueError: depth < 1, width < 1, or a bad shape.
    """
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise ValueError(f"shape must be a pair (m, n), got {shape!r}")
    m = check_positive_int("shape[0]", shape[0])
    n = check_positive_int("shape[1]", shape[1])
    depth = check_int("depth", depth, minimum=1)
    width = check_positive_int("width", width)
    return Architecture((n, *([width] * (depth - 1)), m))


@dataclass
class Params:
    """Parameters of an ensemble of R deep linear networks.

    Attributes:
        arch: the :class:`Architecture`.
        flat: float64 array ``(R, P)``, C-contiguous; layer ℓ of run r is
            ``flat[r, offsets[ℓ]:offsets[ℓ+1]].reshape(d_{ℓ+1}, d_ℓ)``.
    """

    arch: Architecture
    flat: np.ndarray

    def __post_init__(self):
        flat = np.ascontiguousarray(np.asarray(self.flat, dtype=np.float64))
        if flat.ndim == 1:
            flat = flat[None, :]
        if flat.ndim != 2 or flat.shape[1] != self.arch.n_params:
            raise ValueError(f"flat must have shape (R, {self.arch.n_params}), got {np.shape(self.flat)}")
        self.flat = flat

    @property
    def n_runs(self) -> int:
        """Number of runs R."""
        return self.flat.shape[0]

    def layer(self, ell: int) -> np.ndarray:
        """View ``(R, d_{ℓ+1}, d_ℓ)`` of layer ``ell`` (0-based: 0 is W_1, L−1 is W_L)."""
        off = self.arch.offsets
        a, b = self.arch.layer_shapes[ell]
        return self.flat[:, off[ell]:off[ell + 1]].reshape(self.n_runs, a, b)

    def layers(self) -> list[np.ndarray]:
        """``[W_1, …, W_L]``, each a view ``(R, d_{ℓ+1}, d_ℓ)``."""
        return [self.layer(k) for k in range(self.arch.depth)]

    def end_to_end(self) -> np.ndarray:
        """``A_θ = W_L ⋯ W_1`` for every run: ``(R, m, n)``."""
        return end_to_end(self)

    def norm_sq(self) -> np.ndarray:
        """``‖θ‖² = Σ_ℓ ‖W_ℓ‖_F²`` per run: ``(R,)``."""
        return np.einsum("rp,rp->r", self.flat, self.flat)

    def copy(self) -> Params:
        return Params(self.arch, self.flat.copy())

    def select(self, runs) -> Params:
        """A copy with only the given runs (index, slice, list or boolean mask)."""
        return Params(self.arch, np.atleast_2d(self.flat[runs]).copy())

    @classmethod
    def from_layers(cls, layers) -> Params:
        """Build from ``[W_1, …, W_L]``, each ``(d_{ℓ+1}, d_ℓ)`` (one run) or ``(R, d_{ℓ+1}, d_ℓ)``.

        Raises:
            ValueError: empty list, non-finite entries, or shapes that do not chain.
        """
        if len(layers) < 1:
            raise ValueError("layers must contain at least one matrix (depth >= 1)")
        arrs = [np.asarray(w, dtype=np.float64) for w in layers]
        batched = arrs[0].ndim == 3
        arrs = [check_array(f"layers[{k}]", w if batched else w[None], ndim=3) for k, w in enumerate(arrs)]
        dims = [arrs[0].shape[2]]
        for k, w in enumerate(arrs):
            if w.shape[2] != dims[-1] or w.shape[0] != arrs[0].shape[0]:
                raise ValueError(f"layers[{k}] has shape {w.shape[1:]}, expected (*, {dims[-1]})")
            dims.append(w.shape[1])
        arch = Architecture(tuple(dims))
        flat = np.concatenate([w.reshape(w.shape[0], -1) for w in arrs], axis=1)
        return cls(arch, flat)


def init_params(arch: Architecture, n_runs: int = 1, seed: int = 0, scale: float = 1.0) -> Params:
    """Random init ``W_ℓ ~ N(0, scale²/d_ℓ)`` entrywise (fan-in), independently per run.

    Args:
        arch: the architecture.
        n_runs: number of runs R.
        seed: integer; run r uses child r of ``SeedSequence(seed)``.
        scale: multiplies every entry (1 = the project's N(0, 1/fan_in)).

    Returns:
        :class:`Params` with ``flat`` of shape ``(R, P)``.
    """
    n_runs = check_positive_int("n_runs", n_runs)
    scale = check_positive("scale", scale)
    flat = np.empty((n_runs, arch.n_params))
    off = arch.offsets
    for r, rng in enumerate(streams(seed, n_runs)):
        for k, (a, b) in enumerate(arch.layer_shapes):
            flat[r, off[k]:off[k + 1]] = rng.normal(0.0, scale / math.sqrt(b), size=a * b)
    return Params(arch, flat)


def end_to_end(params: Params) -> np.ndarray:
    """``A_θ = W_L ⋯ W_1`` for every run: float64 ``(R, m, n)``."""
    ws = params.layers()
    A = ws[0]
    for w in ws[1:]:
        A = w @ A
    return A


def balanced_factorisation(A, arch: Architecture, seed: int | None = None) -> Params:
    """A balanced factorisation ``W_ℓ = U_{ℓ+1} Σ^{1/L} U_ℓᵀ`` of ``A = U Σ Vᵀ``.

    ``U_{L+1} = U``, ``U_1 = V``; the hidden frames ``U_2..U_L`` are the identity
    embedding (``seed=None``) or random orthonormal frames (``seed`` given). Every
    layer then has singular values ``s_k(A)^{1/L}``, so ``W_{ℓ+1}ᵀW_{ℓ+1} = W_ℓW_ℓᵀ`` and
    ``‖θ‖² = L Σ_k s_k(A)^{2/L}``.

    Singular values at or below :func:`exact_rank_tol` (round-off) are treated as 0.

    Args:
        A: ``(m, n)`` matrix with ``rank(A) ≤`` the smallest hidden width.
        arch: architecture with ``out_shape == A.shape``.
        seed: None or an integer for random hidden frames.

    Returns:
        :class:`Params` with one run.

    Raises:
        ValueError: shape mismatch or a hidden width smaller than ``min(m, n)``
            while A has that many non-zero singular values.
    """
    A = check_array("A", A, ndim=2)
    if A.shape != arch.out_shape:
        raise ValueError(f"A has shape {A.shape}, the architecture needs {arch.out_shape}")
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    L = arch.depth
    hidden = arch.dims[1:-1]
    rank = int(np.sum(s > exact_rank_tol(A))) if s.size else 0
    width = min(hidden) if hidden else s.size
    if rank > width:
        raise ValueError(f"A has rank {rank} > the smallest hidden width {width}; no exact factorisation")
    # keep exactly `rank` directions: round-off singular values (~1e−16) would cost
    # ~(1e−16)^{2/L} each in ‖θ‖² (the cusp of s^{2/L} at 0), so they are dropped
    k = rank if hidden else s.size
    s = np.where(np.arange(s.size) < rank, s, 0.0)
    U, s, Vt = U[:, :k], s[:k], Vt[:k]
    frames = [Vt.T]
    rng = None if seed is None else stream(seed)
    for d in hidden:
        if rng is None:
            frames.append(np.eye(d, k))
        else:
            frames.append(np.linalg.qr(rng.normal(size=(d, k)))[0])
    frames.append(U)
    root = s ** (1.0 / L)
    layers = [frames[ell + 1] @ np.diag(root) @ frames[ell].T for ell in range(L)]
    return Params.from_layers(layers)


def exact_rank_tol(A) -> float:
    """Round-off level of A's singular values: ``max(m, n) · eps · s_1(A)`` (numpy's matrix_rank rule)."""
    A = np.asarray(A, dtype=np.float64)
    if A.size == 0:
        return 0.0
    return max(A.shape[-2:]) * float(np.finfo(np.float64).eps) * float(np.linalg.norm(A, 2))


@dataclass(frozen=True)
class BrCriterion:
    """The project's formalisation of the paper's sets B_r (arXiv 2305.16038, the sets of its main theorem).

    ``θ ∈ B_r  ⇔  ‖θ‖² ≤ R  and  max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F ≤ ε₂
    and  max_ℓ s_{r+1}(W_ℓ) ≤ ε₁`` (rank ≤ r up to ε₁, balanced up to ε₂, norm bounded by R).

    The theorem asks for "large enough R, small enough α, ε₁, ε₂, η" (α: the constant of the paper's f_α, which
    this formalisation replaces by the plain threshold ε₁); the paper's constants are not available. Defaults,
    chosen for the ε-completion of :mod:`.experiments` (not tuned on any check): R = 100 (runs there have
    ‖θ‖² ≤ 10); ε₂ = 2 (hot-phase SGD at η = 0.3 keeps an O(η) imbalance, measured up to ≈ 1.3, also after a
    jump); ε₁ = 0.1 (the rank-2 minimum has s₂(W_ℓ) ≈ 0.76 in every layer, a jumped run ≲ 1e−15).

    Displayed names (Notebook 04 follows the notation table): the rank threshold is ε₁ (:attr:`eps_rank`, the field
    ``alpha``), the balance threshold ε₂ (:attr:`eps_balance`, the field ``eps1``) and the norm bound R
    (:attr:`R`, the field ``C``; the reply writes C). The field names stay for API stability.

    Attributes:
        C: bound R on ``‖θ‖²``.
        eps1: bound on the imbalance (displayed ε₂; Frobenius norm).
        alpha: bound on every layer's (r+1)-th singular value (displayed ε₁).
    """

    C: float = 100.0
    eps1: float = 2.0
    alpha: float = 0.1

    def __post_init__(self):
        check_positive("C", self.C)
        check_positive("eps1", self.eps1)
        check_positive("alpha", self.alpha)

    @property
    def R(self) -> float:
        """The norm bound R of B_r (the field ``C``)."""
        return self.C

    @property
    def eps_rank(self) -> float:
        """The rank threshold ε₁: ``max_ℓ s_{r+1}(W_ℓ) ≤ ε₁`` (the field ``alpha``)."""
        return self.alpha

    @property
    def eps_balance(self) -> float:
        """The balance threshold ε₂: ``max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F ≤ ε₂`` (the field ``eps1``)."""
        return self.eps1


#: Default B_r criterion (see :class:`BrCriterion`).
DEFAULT_B_CRITERION = BrCriterion()


def balancedness(params: Params) -> np.ndarray:
    """``max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F`` per run (0 for depth 1): ``(R,)``."""
    ws = params.layers()
    out = np.zeros(params.n_runs)
    for lo, hi in zip(ws[:-1], ws[1:]):
        D = np.swapaxes(hi, 1, 2) @ hi - lo @ np.swapaxes(lo, 1, 2)
        out = np.maximum(out, np.sqrt(np.einsum("rij,rij->r", D, D)))
    return out


def singular_values(params: Params) -> np.ndarray:
    """Singular values of ``A_θ``, descending: ``(R, min(m, n))``."""
    return np.linalg.svd(end_to_end(params), compute_uv=False)


def layer_singular_values(params: Params) -> np.ndarray:
    """Per-layer singular values, descending, zero-padded: ``(R, L, max_width)``."""
    return _layer_sv_flat(params.flat, params.arch)


def _schatten_sum(s: np.ndarray, depth: int) -> np.ndarray:
    """The induced penalty's one formula: ``L Σ_k s_k^{2/L}`` over the last axis of ``s`` (singular values)."""
    return depth * np.sum(s ** (2.0 / depth), axis=-1)


def schatten_penalty(s, depth: int) -> np.ndarray:
    """The induced penalty ``L · s^{2/L}`` of one singular value ``s`` (elementwise): the parameter-norm cost of a
    singular value of size ``s`` (:func:`induced_penalty` sums it over the singular values of A).

    Args:
        s: singular value(s) ≥ 0, any shape.
        depth: number of layers L ≥ 1.
    Returns:
        array of the same shape as ``s``: ``L · s^{2/L}``.
    Raises:
        ValueError: if ``s`` has a negative or non-finite entry, or ``depth`` < 1.
    """
    L = check_int("depth", depth, minimum=1)
    s = check_array("s", s)
    if np.any(s < 0):
        raise ValueError("s must be >= 0 (singular values)")
    return _schatten_sum(s[..., None], L)  # a sum of one term: exactly L · s^{2/L}


def induced_penalty(A, depth: int) -> np.ndarray | float:
    """``L Σ_k s_k(A)^{2/L}`` = min ``‖θ‖²`` over factorisations of A with L layers (attained by balanced ones).

    Args:
        A: ``(m, n)`` or ``(R, m, n)``.
        depth: L ≥ 1.

    Returns:
        float, or ``(R,)``: :func:`schatten_penalty` summed over the singular values of A.
    """
    depth = check_int("depth", depth, minimum=1)
    out = _schatten_sum(np.linalg.svd(np.asarray(A, dtype=np.float64), compute_uv=False), depth)
    return float(out) if np.ndim(out) == 0 else out


def numerical_rank(sv, tol: float = DEFAULT_RANK_TOL) -> np.ndarray:
    """``#{k : s_k > tol}`` along the last axis (NaN rows give −1).

    Args:
        sv: singular values ``(..., q)``.
        tol: absolute threshold (see :data:`DEFAULT_RANK_TOL`).
    """
    tol = check_positive("tol", tol)
    sv = np.asarray(sv, dtype=np.float64)
    rank = np.sum(sv > tol, axis=-1)
    return np.where(np.any(np.isnan(sv), axis=-1), -1, rank)


def smallest_B(in_B_records) -> np.ndarray:
    """The smallest r with θ ∈ B_r, from membership records ``(..., q+1)`` (``RunResult.in_B``); −1 where θ is in no
    B_r (norm or balance test failed). Since ``B_0 ⊂ B_1 ⊂ …``, this is the "rank" that B_r membership sees."""
    m = np.asarray(in_B_records, dtype=bool)
    return np.where(m.any(axis=-1), np.argmax(m, axis=-1), -1)


def in_B(params: Params, r: int, criterion: BrCriterion = DEFAULT_B_CRITERION) -> np.ndarray:
    """Membership ``θ ∈ B_r`` per run (:class:`BrCriterion`): bool ``(R,)``."""
    r = check_int("r", r, minimum=0)
    lsv = layer_singular_values(params)
    return _in_B_from(params.norm_sq(), balancedness(params), lsv, criterion)[:, min(r, lsv.shape[-1])]


def _svals(M: np.ndarray) -> np.ndarray:
    """Singular values of a batch ``(B, a, b)`` of small matrices, descending (compiled batched Jacobi)."""
    from ._kernels import batched_singular_values

    return batched_singular_values(M)


def _layer_sv_flat(flat: np.ndarray, arch: Architecture) -> np.ndarray:
    """Per-layer singular values of flat parameters ``(..., P)`` → ``(..., L, w)`` zero-padded."""
    lead = flat.shape[:-1]
    off = arch.offsets
    out = np.zeros((*lead, arch.depth, arch.max_width))
    for k, (a, b) in enumerate(arch.layer_shapes):
        W = flat[..., off[k]:off[k + 1]].reshape(*lead, a, b)
        s = _svals(W.reshape(-1, a, b)).reshape(*lead, min(a, b))
        out[..., k, :s.shape[-1]] = s
    return out


def _in_B_from(norm_sq: np.ndarray, imbalance: np.ndarray, layer_sv: np.ndarray, criterion: BrCriterion) -> np.ndarray:
    """B_r membership for r = 0..w from recorded quantities: bool ``(..., w+1)``."""
    base = (norm_sq <= criterion.C) & (imbalance <= criterion.eps1)
    # max_ℓ s_{r+1}(W_ℓ), r = 0..w (s_{w+1} = 0)
    smax = np.max(layer_sv, axis=-2)
    smax = np.concatenate([smax, np.zeros((*smax.shape[:-1], 1))], axis=-1)
    return base[..., None] & (smax <= criterion.alpha)


def replicate(params: Params, n_runs: int) -> Params:
    """``n_runs`` copies of run 0 of ``params`` (so that only the SGD draws differ between runs)."""
    n_runs = check_int("n_runs", n_runs, minimum=1)
    return Params(params.arch, np.repeat(params.flat[:1], n_runs, axis=0))
