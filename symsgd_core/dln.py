"""Deep linear networks on matrix completion: network, problems, dynamics, records.

The engine behind notebook 03 (one-way rank jumps; Wang & Jacot, ICLR 2024).

Network. ``A_θ = W_L ⋯ W_1`` with ``W_ℓ ∈ R^{d_{ℓ+1} × d_ℓ}``, ``d_1 = n`` (columns of
A) and ``d_{L+1} = m`` (rows of A). An *ensemble* of R independent runs is stored as
one float64 array ``flat`` of shape ``(R, P)`` (:class:`Params`), layer ℓ occupying
``flat[:, offsets[ℓ]:offsets[ℓ+1]]`` in C order. Init: ``W_ℓ ~ N(0, 1/d_ℓ)`` entrywise.

Loss (project normalisation, brief §1)::

    𝓛_λ(θ) = (1/N) Σ_{(i,j)∈Ω} (A_ij − A*_ij)² + λ ‖θ‖²,   ‖θ‖² = Σ_ℓ ‖W_ℓ‖_F².

Dynamics (:func:`run`), all with step size η and weight decay λ (both may follow a
:class:`Schedule`):

* ``"sgd"`` — each step draws B observed entries uniformly, i.i.d. (with
  replacement; B = ``batch_size``, default 1) and descends the mean of
  ``ℓ_ij = (A_ij − A*_ij)² + λ‖θ‖²``:
  ``W_ℓ ← (1 − 2ηλ) W_ℓ − (2η/B) Σ_b r_b Q_ℓ[i_b,:]ᵀ P_ℓ[:,j_b]ᵀ`` with
  ``r = A_ij − A*_ij``, ``P_ℓ = W_{ℓ−1}⋯W_1``, ``Q_ℓ = W_L⋯W_{ℓ+1}``;
* ``"forced"`` — the same SGD, but drawing only from a chosen subset of the
  observed entries (the proof's mechanism, brief §3);
* ``"gd"`` — full gradient, ``dC/dA = (2/N)(A − A*) ⊙ mask``;
  ``W_ℓ ← (1 − 2ηλ) W_ℓ − η Q_ℓᵀ (dC/dA) P_ℓᵀ``;
* ``"langevin"`` — GD plus isotropic Gaussian noise at temperature τ:
  ``θ ← θ − η ∇𝓛_λ + sqrt(2ητ) ξ``, ξ ~ N(0, I), whose stationary density is
  ``∝ exp(−𝓛_λ/τ)``. :func:`matched_langevin_temperature` gives the τ whose
  per-step noise has the same total variance as SGD's at a point.

Randomness. Every run r of an ensemble owns the child ``r`` of
``np.random.SeedSequence(seed)``: the same seed gives the same numbers, and run r
does not depend on how many other runs are simulated. Sampled entries (and
Langevin noise) are drawn in numpy in chunks and passed to the compiled kernels, so
the fast path (numba, :mod:`._dln_kernels`) and the readable reference
(:func:`run_reference`) consume identical draws and agree step for step.

Performance. At these sizes the cost is per-step interpreter overhead, so the steps
run in compiled numba kernels (:mod:`._dln_kernels`, serial, deterministic) that
loop over the runs of the ensemble innermost (SIMD across runs); records are reduced
in batches (per-layer singular values by a compiled batched Jacobi SVD). The brief's
hot phase, 32 runs × 6·10⁴ SGD steps with full records every 100 steps, takes about
0.5 s of CPU (``python -m symsgd_core bench --only rank_jumps``). The first call in a
fresh environment compiles the kernels (a few seconds; cached on disk afterwards).

Formalisations stated here (brief §3, project):

* **Numerical rank** with threshold ``rank_tol`` (absolute, in the units of A's
  entries; default :data:`DEFAULT_RANK_TOL` = 1e-3):
  ``rank(A) = #{k : s_k(A) > rank_tol}``. Rank 0 means A = 0 ("collapsed", B_0).
* **B_r** (:class:`BrCriterion`): ``B_r = {θ : ‖θ‖² ≤ C,
  max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F ≤ ε₁, max_ℓ s_{r+1}(W_ℓ) ≤ α}``
  (Frobenius norm for the imbalance; ``s_{r+1}(W) = 0`` when W has ≤ r singular values).
  The paper measures approximate rank through a function f_α that is not available;
  this is the project's replacement.
* **Divergence**: a run diverges at the first step where a sampled residual
  ``|A_ij − A*_ij|`` (SGD) or the largest residual on Ω (GD/Langevin) exceeds
  :data:`DIVERGENCE_RESIDUAL`, or is not finite. The run is then frozen, its later
  records are NaN, and ``RunResult.diverged`` / ``diverged_step`` say so: a NaN in a
  record always comes with that flag, never silently.
* **Tiny entries**: every 64 steps, parameters below ``10^(−280/L)`` in magnitude are
  set to 0 (:func:`flush_threshold`), so decaying directions never reach float64
  denormals (which are ~100× slower); far below any recorded quantity.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from .core.conventions import LOSS_HALF_FACTOR
from .core.validation import (
    as_generator,
    check_array,
    check_choice,
    check_in_range,
    check_int,
    check_nonnegative,
    check_positive,
    check_positive_int,
)

__all__ = [
    "DEFAULT_RANK_TOL",
    "DIVERGENCE_RESIDUAL",
    "Architecture",
    "BrCriterion",
    "CompletionProblem",
    "DEFAULT_B_CRITERION",
    "EPSILON_EXPERIMENT",
    "EpsilonExperiment",
    "Params",
    "RunResult",
    "Schedule",
    "balanced_factorisation",
    "balancedness",
    "end_to_end",
    "epsilon_completion",
    "exact_rank_tol",
    "gradient",
    "in_B",
    "induced_penalty",
    "init_params",
    "layer_singular_values",
    "loss",
    "make_architecture",
    "matched_langevin_temperature",
    "numerical_rank",
    "phase0_minima",
    "random_low_rank_completion",
    "run",
    "run_reference",
    "singular_values",
]

if LOSS_HALF_FACTOR:  # pragma: no cover - guards the factor 2 in every update below
    raise ImportError("symsgd_core.dln assumes the loss (f − y)² without ½ (conventions.LOSS_HALF_FACTOR)")

#: Absolute threshold of the numerical rank: ``rank(A) = #{k : s_k(A) > 1e-3}``.
#: Jumps drive the dropped singular value to round-off (≈1e-15) within a few hundred
#: steps, so any threshold between ~1e-2 and ~1e-10 gives the same jump times to
#: within those few hundred steps.
DEFAULT_RANK_TOL = 1e-3

#: A residual larger than this (in units of A's entries) counts as divergence.
DIVERGENCE_RESIDUAL = 1e6

METHODS = ("sgd", "forced", "gd", "langevin")


# ---------------------------------------------------------------------------
# Network
# ---------------------------------------------------------------------------
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


def _child_seeds(seed, n: int) -> list[np.random.SeedSequence]:
    """The per-run seed sequences ``SeedSequence(seed).spawn(n)``."""
    if isinstance(seed, np.random.Generator):
        raise ValueError("seed must be an integer here (each run gets its own child stream)")
    seed = check_int("seed", seed, minimum=0)
    return np.random.SeedSequence(seed).spawn(n)


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
    for r, ss in enumerate(_child_seeds(seed, n_runs)):
        rng = np.random.default_rng(ss)
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
    rng = None if seed is None else as_generator(seed)
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


# ---------------------------------------------------------------------------
# Problems
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CompletionProblem:
    """A matrix-completion problem: target ``A*`` and observed mask Ω.

    Attributes:
        target: float64 ``(m, n)``; entries outside Ω are kept only for reference.
        mask: bool ``(m, n)``; True where the entry is observed (N = mask.sum() ≥ 1).
        name: a label for figures.
    """

    target: np.ndarray
    mask: np.ndarray
    name: str = "completion"

    def __post_init__(self):
        target = check_array("target", self.target, ndim=2)
        mask = np.asarray(self.mask)
        if mask.shape != target.shape:
            raise ValueError(f"mask must have the target's shape {target.shape}, got {mask.shape}")
        if mask.dtype != bool:
            if not np.all(np.isin(mask, (0, 1))):
                raise ValueError("mask must be boolean (or 0/1)")
            mask = mask.astype(bool)
        if not mask.any():
            raise ValueError("mask has no observed entries: the loss would be 0/0 (N = 0)")
        target = target.copy()
        target.setflags(write=False)
        mask = mask.copy()
        mask.setflags(write=False)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "mask", mask)

    @property
    def shape(self) -> tuple[int, int]:
        return self.target.shape

    @property
    def n_observed(self) -> int:
        """N = |Ω|."""
        return int(self.mask.sum())

    @property
    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, cols, values)`` of the observed entries in row-major order (int64, int64, float64)."""
        rows, cols = np.nonzero(self.mask)
        return rows.astype(np.int64), cols.astype(np.int64), self.target[rows, cols].astype(np.float64)

    def row_entries(self, rows) -> np.ndarray:
        """Boolean ``(m, n)`` mask: the observed entries lying in the given rows (for ``"forced"``)."""
        sel = np.zeros(self.shape, dtype=bool)
        sel[np.atleast_1d(rows)] = True
        return sel & self.mask

    def column_entries(self, cols) -> np.ndarray:
        """Boolean ``(m, n)`` mask: the observed entries lying in the given columns."""
        sel = np.zeros(self.shape, dtype=bool)
        sel[:, np.atleast_1d(cols)] = True
        return sel & self.mask

    def fit_loss(self, A) -> np.ndarray:
        """Data term ``(1/N) Σ_Ω (A_ij − A*_ij)²`` for ``A`` of shape ``(m, n)`` or ``(R, m, n)``."""
        A = np.asarray(A, dtype=np.float64)
        res = (A - self.target) * self.mask
        return np.sum(res * res, axis=(-2, -1)) / self.n_observed


def epsilon_completion(eps: float = 0.2) -> CompletionProblem:
    """The 2×2 ε-completion of brief §5.

    Observed ``A₁₁ = 1, A₁₂ = ε, A₂₂ = 1``; ``A₂₁`` unobserved. ``A* = [[1, ε], [1/ε, 1]]``
    (the only rank-1 completion), mask ``[[1, 1], [0, 1]]``, N = 3.

    Raises:
        ValueError: ε not in (0, 10].
    """
    eps = check_in_range("eps", eps, 0.0, 10.0)
    if eps == 0.0:
        raise ValueError("eps must be > 0 (the rank-1 completion needs 1/eps)")
    target = np.array([[1.0, eps], [1.0 / eps, 1.0]])
    mask = np.array([[True, True], [False, True]])
    return CompletionProblem(target, mask, name=f"ε-completion (ε = {eps:g})")


def random_low_rank_completion(shape: tuple[int, int] = (10, 10), rank: int = 2, observed_fraction: float = 0.5,
                               seed: int = 0, scale: float = 1.0) -> CompletionProblem:
    """A random rank-r target ``A* = scale · U Vᵀ / sqrt(r)`` (U, V standard normal) with a random mask.

    Each entry is observed independently with probability ``observed_fraction``;
    at least one entry is always observed (re-drawn if none).

    Args:
        shape: ``(m, n)``.
        rank: r ≥ 1, ≤ min(m, n).
        observed_fraction: in (0, 1].
        seed: integer seed.
        scale: entry scale of the target.
    """
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise ValueError(f"shape must be a pair (m, n), got {shape!r}")
    m = check_positive_int("shape[0]", shape[0])
    n = check_positive_int("shape[1]", shape[1])
    rank = check_int("rank", rank, minimum=1, maximum=min(m, n))
    p = check_in_range("observed_fraction", observed_fraction, 0.0, 1.0)
    if p == 0.0:
        raise ValueError("observed_fraction must be > 0 (a mask with no observed entries)")
    scale = check_positive("scale", scale)
    rng = as_generator(seed)
    target = scale * rng.normal(size=(m, rank)) @ rng.normal(size=(rank, n)) / math.sqrt(rank)
    mask = rng.random((m, n)) < p
    while not mask.any():
        mask = rng.random((m, n)) < p
    return CompletionProblem(target, mask, name=f"random rank-{rank} {m}×{n}, {mask.sum()} observed")


# ---------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class BrCriterion:
    """The project's formalisation of the paper's sets B_r (brief §3).

    ``θ ∈ B_r  ⇔  ‖θ‖² ≤ C  and  max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F ≤ ε₁
    and  max_ℓ s_{r+1}(W_ℓ) ≤ α``.

    The theorem asks for "large enough C, small enough ε₁, α, η"; the paper's constants
    are not available. Defaults, chosen for the ε-completion of brief §5 (not tuned on
    any check): C = 100 (runs there have ‖θ‖² ≤ 10); ε₁ = 2 (hot-phase SGD at η = 0.3
    keeps an O(η) imbalance, measured up to ≈ 1.3, also after a jump); α = 0.1 (the
    rank-2 minimum has s₂(W_ℓ) ≈ 0.76 in every layer, a jumped run ≲ 1e−15).

    Attributes:
        C: bound on ``‖θ‖²``.
        eps1: bound on the imbalance ε₁ (Frobenius norm).
        alpha: bound α on every layer's (r+1)-th singular value.
    """

    C: float = 100.0
    eps1: float = 2.0
    alpha: float = 0.1

    def __post_init__(self):
        check_positive("C", self.C)
        check_positive("eps1", self.eps1)
        check_positive("alpha", self.alpha)


#: Default B_r criterion (see :class:`BrCriterion`).
DEFAULT_B_CRITERION = BrCriterion()


def loss(params: Params, problem: CompletionProblem, lam: float) -> np.ndarray:
    """``𝓛_λ(θ) = (1/N) Σ_Ω (A_ij − A*_ij)² + λ‖θ‖²`` per run: ``(R,)``."""
    lam = check_nonnegative("lam", lam)
    _check_problem_fits(params.arch, problem)
    return problem.fit_loss(end_to_end(params)) + lam * params.norm_sq()


def gradient(params: Params, problem: CompletionProblem, lam: float) -> Params:
    """Full gradient ``∇𝓛_λ``: ``∇_{W_ℓ} = Q_ℓᵀ (dC/dA) P_ℓᵀ + 2λ W_ℓ``, ``dC/dA = (2/N)(A − A*) ⊙ mask``.

    Returns:
        :class:`Params` holding the gradient (same layout as ``params``).
    """
    lam = check_nonnegative("lam", lam)
    _check_problem_fits(params.arch, problem)
    ws = params.layers()
    L = len(ws)
    R = params.n_runs
    prefix = [np.broadcast_to(np.eye(params.arch.dims[0]), (R, *(2 * [params.arch.dims[0]])))]
    for w in ws:
        prefix.append(w @ prefix[-1])  # prefix[ℓ] = P_{ℓ+1} = W_ℓ ⋯ W_1
    A = prefix[-1]
    dA = 2.0 / problem.n_observed * (A - problem.target) * problem.mask
    grads = [None] * L
    back = dA  # Q_ℓᵀ dA, starting from ℓ = L
    for ell in range(L - 1, -1, -1):
        grads[ell] = back @ np.swapaxes(prefix[ell], 1, 2) + 2.0 * lam * ws[ell]
        back = np.swapaxes(ws[ell], 1, 2) @ back
    return Params(params.arch, np.concatenate([g.reshape(R, -1) for g in grads], axis=1))


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


def induced_penalty(A, depth: int) -> np.ndarray | float:
    """``L Σ_k s_k(A)^{2/L}`` = min ``‖θ‖²`` over factorisations of A with L layers.

    Args:
        A: ``(m, n)`` or ``(R, m, n)``.
        depth: L ≥ 1.

    Returns:
        float, or ``(R,)``.
    """
    depth = check_int("depth", depth, minimum=1)
    s = np.linalg.svd(np.asarray(A, dtype=np.float64), compute_uv=False)
    out = depth * np.sum(s ** (2.0 / depth), axis=-1)
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


def in_B(params: Params, r: int, criterion: BrCriterion = DEFAULT_B_CRITERION) -> np.ndarray:
    """Membership ``θ ∈ B_r`` per run (:class:`BrCriterion`): bool ``(R,)``."""
    r = check_int("r", r, minimum=0)
    lsv = layer_singular_values(params)
    return _in_B_from(params.norm_sq(), balancedness(params), lsv, criterion)[:, min(r, lsv.shape[-1])]


def matched_langevin_temperature(params: Params, problem: CompletionProblem, lr: float, lam: float,
                                 batch_size: int = 1) -> np.ndarray:
    """Langevin temperature τ whose per-step noise matches SGD's total variance at ``params``.

    SGD's step noise has covariance ``η² Σ/B`` (Σ = covariance over observed entries of
    the per-entry gradient); Langevin's is ``2ητ I``. Equal traces give
    ``τ = η tr(Σ) / (2 B P)``.

    Returns:
        ``(R,)`` temperatures.
    """
    lr = check_positive("lr", lr)
    lam = check_nonnegative("lam", lam)
    batch_size = check_positive_int("batch_size", batch_size)
    _check_problem_fits(params.arch, problem)
    rows, cols, _ = problem.entries
    grads = []
    for i, j in zip(rows, cols):
        single = np.zeros(problem.shape, dtype=bool)
        single[i, j] = True
        grads.append(gradient(params, CompletionProblem(problem.target, single), lam).flat)
    g = np.stack(grads)  # (N, R, P); weight decay is common to all entries and cancels
    trace = np.mean(np.sum((g - g.mean(axis=0)) ** 2, axis=-1), axis=0)
    return lr * trace / (2.0 * batch_size * params.arch.n_params)


# ---------------------------------------------------------------------------
# Schedules
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Schedule:
    """Step size η and weight decay λ as functions of the step index.

    Build with :meth:`constant`, :meth:`phases` (e.g. hot → cold annealing) or
    :meth:`cyclic` (triangular cyclic learning rate). ``values(n_steps)`` gives
    the per-step arrays the kernels consume.

    Attributes:
        kind: ``"phases"`` or ``"cyclic"``.
        segments: for ``"phases"``: tuple of ``(n_steps, lr, lam)``; the last
            segment's values continue after its end.
        lr_min, lr_max, period, lam: for ``"cyclic"``: η goes linearly
            ``lr_min → lr_max → lr_min`` over ``period`` steps, λ fixed.
    """

    kind: str
    segments: tuple = ()
    lr_min: float = 0.0
    lr_max: float = 0.0
    period: int = 1
    lam: float = 0.0

    @classmethod
    def constant(cls, lr: float, lam: float) -> Schedule:
        """Fixed η and λ."""
        return cls.phases([(1, lr, lam)])

    @classmethod
    def phases(cls, segments) -> Schedule:
        """Piecewise-constant ``[(n_steps, lr, lam), …]``, e.g. hot then cold.

        Raises:
            ValueError: empty list, n_steps < 1, lr ≤ 0, lam < 0 or 2·lr·lam ≥ 1.
        """
        segs = []
        if len(segments) < 1:
            raise ValueError("segments must contain at least one (n_steps, lr, lam)")
        for k, seg in enumerate(segments):
            if len(seg) != 3:
                raise ValueError(f"segments[{k}] must be (n_steps, lr, lam), got {seg!r}")
            n = check_positive_int(f"segments[{k}].n_steps", seg[0])
            lr, lam = _check_lr_lam(seg[1], seg[2], where=f"segments[{k}]")
            segs.append((n, lr, lam))
        return cls("phases", segments=tuple(segs))

    @classmethod
    def anneal(cls, hot_steps: int, lr_hot: float, lam_hot: float, lr_cold: float, lam_cold: float) -> Schedule:
        """Hot phase ``(lr_hot, lam_hot)`` for ``hot_steps`` steps, then cold ``(lr_cold, lam_cold)``."""
        return cls.phases([(hot_steps, lr_hot, lam_hot), (1, lr_cold, lam_cold)])

    @classmethod
    def cyclic(cls, lr_min: float, lr_max: float, period: int, lam: float) -> Schedule:
        """Triangular cyclic learning rate between ``lr_min`` and ``lr_max`` with ``period`` steps."""
        lr_min, lam = _check_lr_lam(lr_min, lam, where="cyclic")
        lr_max, _ = _check_lr_lam(lr_max, lam, where="cyclic")
        if lr_max < lr_min:
            raise ValueError(f"lr_max must be >= lr_min, got {lr_max} < {lr_min}")
        period = check_int("period", period, minimum=2)
        return cls("cyclic", lr_min=lr_min, lr_max=lr_max, period=period, lam=lam)

    def values(self, n_steps: int, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Per-step ``(lr, lam)`` float64 arrays of length ``n_steps`` for steps ``start .. start+n_steps−1``."""
        n_steps = check_int("n_steps", n_steps, minimum=0)
        t = np.arange(start, start + n_steps)
        if self.kind == "cyclic":
            phase = (t % self.period) / self.period
            tri = 1.0 - np.abs(2.0 * phase - 1.0)  # 0 → 1 → 0 over a period
            lr = self.lr_min + (self.lr_max - self.lr_min) * tri
            return lr, np.full(n_steps, self.lam)
        ends = np.cumsum([s[0] for s in self.segments])
        idx = np.minimum(np.searchsorted(ends, t, side="right"), len(self.segments) - 1)
        lrs = np.array([s[1] for s in self.segments])
        lams = np.array([s[2] for s in self.segments])
        return lrs[idx], lams[idx]


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------
@dataclass
class RunResult:
    """Records of one :func:`run` over an ensemble of R runs, K record times.

    Attributes:
        steps: int64 ``(K,)``: step counts at which records were taken (0 = start).
        time: ``(K,)`` continuous time ``t = Σ η`` up to each record (``= η·steps`` for fixed η).
        singular_values: ``(R, K, q)``, q = min(m, n): singular values of A_θ, descending.
        layer_singular_values: ``(R, K, L, w)`` per-layer singular values (zero-padded),
            or None if ``record_layers=False``.
        loss: ``(R, K)`` 𝓛_λ with the λ in force at that step.
        fit: ``(R, K)`` data term ``(1/N) Σ_Ω (A − A*)²``.
        norm_sq: ``(R, K)`` ``‖θ‖²``.
        balancedness: ``(R, K)`` ``max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F``.
        rank: int ``(R, K)`` numerical rank of A with ``rank_tol`` (−1 after divergence).
        in_B: bool ``(R, K, q+1)``: ``in_B[r, k, j]`` ⇔ θ ∈ B_j (needs layer records; else None).
        first_step_at_rank: int ``(R, q+1)``: first recorded step at each rank (−1 if never).
        returned_up: bool ``(R,)``: the rank ever rose above an earlier lower rank.
        first_return_step: int ``(R,)``: first recorded step of such a rise (−1 if never).
        collapsed: bool ``(R,)``: rank 0 (A ≈ 0, B_0) at the last record.
        diverged: bool ``(R,)``; diverged_step: int ``(R,)`` (−1 if not diverged).
        final: :class:`Params` after the last step (diverged runs: frozen at divergence).
        settings: dict of the call's settings (method, schedule, seed, rank_tol, criterion, …).
    """

    steps: np.ndarray
    time: np.ndarray
    singular_values: np.ndarray
    layer_singular_values: np.ndarray | None
    loss: np.ndarray
    fit: np.ndarray
    norm_sq: np.ndarray
    balancedness: np.ndarray
    rank: np.ndarray
    in_B: np.ndarray | None
    first_step_at_rank: np.ndarray
    returned_up: np.ndarray
    first_return_step: np.ndarray
    collapsed: np.ndarray
    diverged: np.ndarray
    diverged_step: np.ndarray
    final: Params
    settings: dict = field(default_factory=dict)

    @property
    def n_runs(self) -> int:
        return self.rank.shape[0]

    @property
    def final_rank(self) -> np.ndarray:
        """Rank at the last record, ``(R,)`` (−1 for diverged runs)."""
        return self.rank[:, -1]

    @property
    def max_rank(self) -> int:
        """q = min(m, n), the largest possible rank of A."""
        return self.singular_values.shape[-1]

    def jump_step(self, to_rank: int) -> np.ndarray:
        """First recorded step at rank ≤ ``to_rank`` (0 ≤ rank; −1 if never): int ``(R,)``."""
        to_rank = check_int("to_rank", to_rank, minimum=0)
        hit = (self.rank >= 0) & (self.rank <= to_rank)
        first = np.argmax(hit, axis=1)
        return np.where(hit.any(axis=1), self.steps[first], -1)

    def fraction_at_rank(self) -> np.ndarray:
        """``(K, q+2)``: fraction of runs at rank 0..q at each record; last column = diverged."""
        q = self.max_rank
        out = np.zeros((self.steps.size, q + 2))
        for k in range(q + 1):
            out[:, k] = np.mean(self.rank == k, axis=0)
        out[:, q + 1] = np.mean(self.rank < 0, axis=0)
        return out

    def outcome(self, run: int) -> str:
        """One line for run ``run``: diverged / collapsed to A = 0 / rank path with the step of the last change."""
        run = check_int("run", run, minimum=0, maximum=self.n_runs - 1)
        if self.diverged[run]:
            return (f"diverged at step {self.diverged_step[run]}: a residual exceeded {DIVERGENCE_RESIDUAL:g} "
                    "(step size too large for this problem)")
        ranks = self.rank[run]
        r0, r1 = int(ranks[0]), int(ranks[-1])
        if self.collapsed[run]:
            text = f"collapsed to A = 0 (rank 0, B_0) at step {self.first_step_at_rank[run, 0]}"
        elif r0 == r1:
            text = f"stayed at rank {r1}" if np.all(ranks == r1) else f"rank {r1} at start and end"
        else:
            text = f"rank {r0} → {r1}, first at rank {r1} at step {self.first_step_at_rank[run, r1]}"
        if self.returned_up[run]:
            text += f"; rose back to a higher rank at step {self.first_return_step[run]}"
        return text

    def summary(self) -> str:
        """A short summary of the ensemble: final ranks, jumps, returns, collapse, divergence."""
        q = self.max_rank
        R = self.n_runs
        parts = [f"{R} runs, {self.steps[-1]} steps ({self.settings.get('method', '?')})"]
        counts = ", ".join(f"rank {k}: {int(np.sum(self.final_rank == k))}" for k in range(q, -1, -1))
        parts.append("final " + counts)
        if self.diverged.any():
            parts.append(f"diverged: {int(self.diverged.sum())} (first at step "
                         f"{int(self.diverged_step[self.diverged].min())})")
        if self.collapsed.any():
            parts.append(f"collapsed to A = 0: {int(self.collapsed.sum())}")
        parts.append(f"returned to a higher rank: {int(self.returned_up.sum())}")
        return "; ".join(parts)


# ---------------------------------------------------------------------------
# Dynamics
# ---------------------------------------------------------------------------
def run(params: Params, problem: CompletionProblem, n_steps: int, *, method: str = "sgd",
        lr: float | None = None, lam: float | None = None, schedule: Schedule | None = None,
        seed: int = 0, record_every: int = 100, batch_size: int = 1, temperature: float | None = None,
        entries=None, rank_tol: float = DEFAULT_RANK_TOL, criterion: BrCriterion = DEFAULT_B_CRITERION,
        record_layers: bool = True, engine: str = "fast") -> RunResult:
    """Simulate ``n_steps`` steps of ``method`` for every run of ``params`` (compiled fast path).

    Args:
        params: starting point, R runs (not modified).
        problem: the completion problem (its shape must equal ``params.arch.out_shape``).
        n_steps: number of steps ≥ 0.
        method: ``"sgd"``, ``"forced"`` (needs ``entries``), ``"gd"`` or ``"langevin"``
            (needs ``temperature``); see the module docstring.
        lr, lam: fixed η > 0 and λ ≥ 0 (with 2ηλ < 1), or give ``schedule`` instead.
        schedule: a :class:`Schedule` (then lr and lam must be None).
        seed: integer; run r draws its entries/noise from child r of ``SeedSequence(seed)``.
        record_every: record every this many steps (plus step 0 and the last step).
        batch_size: SGD minibatch size B ≥ 1 (entries i.i.d. with replacement); sgd/forced only.
        temperature: Langevin τ ≥ 0 (noise ``sqrt(2ητ) ξ`` per step); langevin only.
        entries: bool ``(m, n)`` subset of the mask to sample from (``"forced"`` only),
            e.g. ``problem.row_entries([0])``.
        rank_tol: threshold of the numerical rank (absolute, see :data:`DEFAULT_RANK_TOL`).
        criterion: the B_r criterion.
        record_layers: record per-layer singular values and B_r membership.
        engine: ``"fast"`` (numba) or ``"reference"`` (plain numpy, slow, step for step the same).

    Returns:
        :class:`RunResult`.

    Raises:
        ValueError: bad argument (η ≤ 0, λ < 0, 2ηλ ≥ 1, shape mismatch, ``entries``
            empty or outside the mask, unknown method, …). Divergence is not an
            error: it is reported in ``RunResult.diverged``.
    """
    if not isinstance(params, Params):
        raise ValueError(f"params must be a Params, got {type(params).__name__}")
    arch = params.arch
    _check_problem_fits(arch, problem)
    n_steps = check_int("n_steps", n_steps, minimum=0)
    method = check_choice("method", method, METHODS)
    engine = check_choice("engine", engine, ("fast", "reference"))
    record_every = check_positive_int("record_every", record_every)
    batch_size = check_positive_int("batch_size", batch_size)
    rank_tol = check_positive("rank_tol", rank_tol)
    if not isinstance(criterion, BrCriterion):
        raise ValueError(f"criterion must be a BrCriterion, got {type(criterion).__name__}")
    if not np.all(np.isfinite(params.flat)):
        raise ValueError("params must be finite (found NaN or inf)")
    if schedule is None:
        if lr is None or lam is None:
            raise ValueError("give lr and lam (or a schedule)")
        schedule = Schedule.constant(lr, lam)
    elif not isinstance(schedule, Schedule):
        raise ValueError(f"schedule must be a Schedule, got {type(schedule).__name__}")
    elif lr is not None or lam is not None:
        raise ValueError("give either lr and lam or a schedule, not both")
    if method in ("gd", "langevin") and batch_size != 1:
        raise ValueError(f"batch_size applies to sgd/forced only (method={method!r} uses every entry)")
    if method == "langevin":
        if temperature is None:
            raise ValueError("method='langevin' needs a temperature τ >= 0")
        temperature = check_nonnegative("temperature", temperature)
    elif temperature is not None:
        raise ValueError(f"temperature applies to method='langevin' only, not {method!r}")
    if method == "forced":
        if entries is None:
            raise ValueError("method='forced' needs entries: a boolean (m, n) subset of the mask")
        sub = np.asarray(entries)
        if sub.shape != problem.shape or not (sub.dtype == bool or np.all(np.isin(sub, (0, 1)))):
            raise ValueError(f"entries must be a boolean array of shape {problem.shape}")
        sub = sub.astype(bool)
        if not sub.any():
            raise ValueError("entries selects no entry: forced sampling needs at least one")
        if np.any(sub & ~problem.mask):
            raise ValueError("entries must be observed entries (a subset of problem.mask)")
    elif entries is not None:
        raise ValueError(f"entries applies to method='forced' only, not {method!r}")
    else:
        sub = problem.mask

    lr_all, lam_all = schedule.values(n_steps)
    rec_steps = np.arange(0, n_steps + 1, record_every, dtype=np.int64)
    if rec_steps[-1] != n_steps:
        rec_steps = np.append(rec_steps, n_steps)
    R, P = params.n_runs, arch.n_params
    theta = params.flat.copy()
    dims = np.asarray(arch.dims, dtype=np.int64)
    off = arch.offsets
    div_step = np.full(R, -1, dtype=np.int64)
    rngs = [np.random.default_rng(ss) for ss in _child_seeds(seed, R)]
    rows, cols = np.nonzero(sub)
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    vals = problem.target[rows, cols].astype(np.float64)
    draws = {"sgd": batch_size, "forced": batch_size, "gd": 0, "langevin": P}[method]
    chunk = max(1, min(n_steps, _CHUNK_ELEMENTS // max(R * max(draws, 1), 1),
                       record_every * max(1, _CHUNK_ELEMENTS // max(R * P, 1))))
    if engine == "fast":
        from . import _dln_kernels as kern

        sgd_chunk, gd_chunk = kern.sgd_chunk, kern.gd_chunk
    else:
        sgd_chunk, gd_chunk = _reference_sgd_chunk, _reference_gd_chunk
    tiny = flush_threshold(arch.depth)
    maskf = problem.mask.astype(np.float64)
    target = np.ascontiguousarray(problem.target)
    stats = [_record_stats(theta[:, None, :], arch, problem, lam_all[:1] if n_steps else
                           np.array([schedule.values(1)[1][0]]), rank_tol, criterion, record_layers)]
    for s0 in range(0, n_steps, chunk):
        s1 = min(n_steps, s0 + chunk)
        T = s1 - s0
        in_chunk = rec_steps[(rec_steps > s0) & (rec_steps <= s1)]
        rec_pos = (in_chunk - s0).astype(np.int64)
        snaps = np.empty((R, rec_pos.size, P))
        lr_c = np.ascontiguousarray(lr_all[s0:s1])
        lam_c = np.ascontiguousarray(lam_all[s0:s1])
        if method in ("sgd", "forced"):
            idx = np.empty((R, T, batch_size), dtype=np.int64)
            for r, rng in enumerate(rngs):
                idx[r] = rng.integers(0, rows.size, size=(T, batch_size))
            sgd_chunk(theta, dims, off, rows, cols, vals, idx, lr_c, lam_c, rec_pos, snaps, div_step, s0,
                      DIVERGENCE_RESIDUAL, tiny)
        else:
            if method == "langevin":
                noise = np.empty((R, T, P))
                for r, rng in enumerate(rngs):
                    noise[r] = rng.standard_normal((T, P))
                scale = np.sqrt(2.0 * lr_c * temperature)
            else:
                noise = np.empty((R, 0, P))
                scale = np.zeros(T)
            gd_chunk(theta, dims, off, target, maskf, 1.0 / problem.n_observed, lr_c, lam_c, noise, scale,
                     rec_pos, snaps, div_step, s0, DIVERGENCE_RESIDUAL, tiny)
        if rec_pos.size:
            stats.append(_record_stats(snaps, arch, problem, lam_all[in_chunk - 1], rank_tol, criterion,
                                       record_layers))
    rec = {k: np.concatenate([st[k] for st in stats], axis=1) if stats[0][k] is not None else None
           for k in stats[0]}
    times = np.concatenate([[0.0], np.cumsum(lr_all)])[rec_steps]
    settings = dict(method=method, schedule=schedule, seed=seed, n_steps=n_steps, record_every=record_every,
                    batch_size=batch_size, temperature=temperature, rank_tol=rank_tol, criterion=criterion,
                    engine=engine, n_runs=R, problem=problem.name,
                    entries=None if method != "forced" else sub.copy())
    return _build_result(rec_steps, times, rec, div_step, Params(arch, theta), settings)


def run_reference(params: Params, problem: CompletionProblem, n_steps: int, **kwargs) -> RunResult:
    """:func:`run` with ``engine="reference"``: readable per-run numpy loop, same draws, same records."""
    kwargs["engine"] = "reference"
    return run(params, problem, n_steps, **kwargs)


# ---------------------------------------------------------------------------
# The brief's §5 experiment
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class EpsilonExperiment:
    """Parameters of the ε-completion experiment (brief §5).

    Phase 0: GD (λ = lam_hot, η = lr_phase0) for ``phase0_steps`` → rank-2 minima.
    Phase 1 (hot): η = lr_hot, λ = lam_hot, ``hot_steps`` steps; SGD jumps, GD does not.
    Phase 2 (cold): η = lr_cold, λ = lam_cold.
    """

    eps: float = 0.2
    depth: int = 4
    width: int = 8
    n_runs: int = 32
    lam_hot: float = 0.027
    lr_phase0: float = 0.05
    phase0_steps: int = 40_000
    lr_hot: float = 0.3
    hot_steps: int = 60_000
    lam_cold: float = 0.01
    lr_cold: float = 0.05

    @property
    def problem(self) -> CompletionProblem:
        return epsilon_completion(self.eps)

    @property
    def arch(self) -> Architecture:
        return make_architecture((2, 2), self.depth, self.width)


#: The brief's parameters.
EPSILON_EXPERIMENT = EpsilonExperiment()


def phase0_minima(eps: float = 0.2, n_runs: int = 32, seed: int = 0, depth: int = 4, width: int = 8,
                  lam: float = 0.027, lr: float = 0.05, n_steps: int = 40_000) -> Params:
    """GD minima of the ε-completion from random init (brief §5 phase 0), memoised in-process.

    The compiled GD takes well under a second for the defaults (after the first
    numba compilation, which is cached on disk). Returns a fresh copy each call.

    Returns:
        :class:`Params` with ``n_runs`` runs (diverged runs cannot occur at the defaults).
    """
    return _phase0_cached(float(eps), int(n_runs), int(seed), int(depth), int(width), float(lam), float(lr),
                          int(n_steps)).copy()


@functools.lru_cache(maxsize=16)
def _phase0_cached(eps, n_runs, seed, depth, width, lam, lr, n_steps) -> Params:
    problem = epsilon_completion(eps)
    arch = make_architecture((2, 2), depth, width)
    p0 = init_params(arch, n_runs, seed)
    res = run(p0, problem, n_steps, method="gd", lr=lr, lam=lam, record_every=max(n_steps, 1), record_layers=False)
    return res.final


# ---------------------------------------------------------------------------
# Internals
# ---------------------------------------------------------------------------
#: Largest number of pre-drawn random numbers (or snapshot entries) held per chunk.
_CHUNK_ELEMENTS = 1 << 22


def _measure(flat: np.ndarray, arch: Architecture, layers: bool):
    """A, ‖θ‖², imbalance and (optionally) per-layer singular values of flat ``(n, P)`` parameters."""
    off = arch.offsets
    n = flat.shape[0]
    ws = [flat[:, off[k]:off[k + 1]].reshape(n, a, b) for k, (a, b) in enumerate(arch.layer_shapes)]
    A = ws[0]
    for w in ws[1:]:
        A = w @ A
    norm_sq = np.einsum("rp,rp->r", flat, flat)
    imb = np.zeros(n)
    for lo, hi in zip(ws[:-1], ws[1:]):
        D = np.swapaxes(hi, 1, 2) @ hi - lo @ np.swapaxes(lo, 1, 2)
        imb = np.maximum(imb, np.sqrt(np.einsum("rij,rij->r", D, D)))
    lsv = _layer_sv_flat(flat, arch) if layers else None
    return A, norm_sq, imb, lsv


def _record_stats(snaps: np.ndarray, arch: Architecture, problem: CompletionProblem, lam_at: np.ndarray,
                  rank_tol: float, criterion: BrCriterion, layers: bool) -> dict:
    """Reduce snapshots ``(R, k, P)`` to the recorded quantities; NaN snapshots give NaN records."""
    R, k, P = snaps.shape
    q = min(arch.out_shape)
    flat = snaps.reshape(R * k, P)
    ok = np.all(np.isfinite(flat), axis=1)
    sv = np.full((R * k, q), np.nan)
    fit = np.full(R * k, np.nan)
    norm_sq = np.full(R * k, np.nan)
    imb = np.full(R * k, np.nan)
    lsv = np.full((R * k, arch.depth, arch.max_width), np.nan) if layers else None
    if ok.any():
        A, nsq, bal, ls = _measure(flat[ok], arch, layers)
        sv[ok] = _svals(A)
        fit[ok] = problem.fit_loss(A)
        norm_sq[ok] = nsq
        imb[ok] = bal
        if layers:
            lsv[ok] = ls
    lam_rep = np.tile(np.asarray(lam_at, dtype=np.float64), R)
    out = dict(sv=sv.reshape(R, k, q), fit=fit.reshape(R, k), norm_sq=norm_sq.reshape(R, k),
               loss=(fit + lam_rep * norm_sq).reshape(R, k), balance=imb.reshape(R, k),
               rank=numerical_rank(sv, rank_tol).reshape(R, k))
    if layers:
        inb = _in_B_from(norm_sq, imb, lsv, criterion)[:, : q + 1] & ok[:, None]
        out["lsv"] = lsv.reshape(R, k, arch.depth, arch.max_width)
        out["inB"] = inb.reshape(R, k, q + 1)
    else:
        out["lsv"] = None
        out["inB"] = None
    return out


def _build_result(steps, times, rec, div_step, final, settings) -> RunResult:
    """Per-run events from the records: first step at each rank, returns up, collapse, divergence."""
    rank = rec["rank"]
    R, K = rank.shape
    q = rec["sv"].shape[-1]
    first = np.full((R, q + 1), -1, dtype=np.int64)
    for k in range(q + 1):
        hit = rank == k
        first[:, k] = np.where(hit.any(axis=1), steps[np.argmax(hit, axis=1)], -1)
    eff = np.where(rank < 0, q + 1, rank)
    running_min = np.minimum.accumulate(eff, axis=1)
    up = np.zeros((R, K), dtype=bool)
    up[:, 1:] = (eff[:, 1:] > running_min[:, :-1]) & (rank[:, 1:] >= 0)
    returned = up.any(axis=1)
    first_return = np.where(returned, steps[np.argmax(up, axis=1)], -1)
    diverged = div_step >= 0
    collapsed = (rank[:, -1] == 0) & ~diverged
    return RunResult(steps=steps, time=times, singular_values=rec["sv"], layer_singular_values=rec["lsv"],
                     loss=rec["loss"], fit=rec["fit"], norm_sq=rec["norm_sq"], balancedness=rec["balance"],
                     rank=rank, in_B=rec["inB"], first_step_at_rank=first, returned_up=returned,
                     first_return_step=first_return, collapsed=collapsed, diverged=diverged,
                     diverged_step=div_step.copy(), final=final, settings=settings)


def _layer_views(theta_r: np.ndarray, dims, off) -> list[np.ndarray]:
    """Views ``W_ℓ`` (d_{ℓ+1}, d_ℓ) into one run's flat parameters (writes go through)."""
    return [theta_r[off[k]:off[k + 1]].reshape(dims[k + 1], dims[k]) for k in range(len(dims) - 1)]


def _reference_sgd_chunk(theta, dims, off, rows, cols, vals, idx, lr, lam, rec_pos, snaps, div_step, step0,
                         div_resid, tiny):
    """Readable numpy SGD with the signature of :func:`._dln_kernels.sgd_chunk` (same draws, same updates)."""
    R, T, B = idx.shape
    for r in range(R):
        if div_step[r] >= 0:
            snaps[r] = np.nan
            continue
        ws = _layer_views(theta[r], dims, off)
        k = 0
        for t in range(T):
            grads = [np.zeros_like(w) for w in ws]
            dead = False
            for b in range(B):
                e = idx[r, t, b]
                i, j, target = rows[e], cols[e], vals[e]
                p = [np.eye(dims[0])[:, j]]  # p[ℓ] = P_ℓ[:, j], P_1 = I
                for w in ws:
                    p.append(w @ p[-1])
                resid = p[-1][i] - target  # A_ij − A*_ij
                if not abs(resid) <= div_resid:
                    dead = True
                    break
                q = [np.eye(dims[-1])[i]]  # q[ℓ] = Q_ℓ[i, :], Q_L = I
                for w in reversed(ws[1:]):
                    q.insert(0, w.T @ q[0])
                for ell in range(len(ws)):
                    grads[ell] += resid * np.outer(q[ell], p[ell])
            if dead:
                div_step[r] = step0 + t + 1
                snaps[r, k:] = np.nan
                break
            for w, g in zip(ws, grads):
                w[...] = (1.0 - 2.0 * lr[t] * lam[t]) * w - (2.0 * lr[t] / B) * g
            if (step0 + t + 1) % _FLUSH_EVERY == 0:
                theta[r][np.abs(theta[r]) < tiny] = 0.0
            if k < len(rec_pos) and rec_pos[k] == t + 1:
                snaps[r, k] = theta[r]
                k += 1


def _reference_gd_chunk(theta, dims, off, target, maskf, inv_n, lr, lam, noise, noise_scale, rec_pos, snaps,
                        div_step, step0, div_resid, tiny):
    """Readable numpy GD/Langevin with the signature of :func:`._dln_kernels.gd_chunk`."""
    R, T = theta.shape[0], lr.shape[0]
    for r in range(R):
        if div_step[r] >= 0:
            snaps[r] = np.nan
            continue
        ws = _layer_views(theta[r], dims, off)
        k = 0
        for t in range(T):
            prefix = [np.eye(dims[0])]  # prefix[ℓ] = P_ℓ = W_{ℓ−1} ⋯ W_1
            for w in ws:
                prefix.append(w @ prefix[-1])
            diff = prefix[-1] - target
            if not np.all(np.abs(diff[maskf != 0]) <= div_resid):
                div_step[r] = step0 + t + 1
                snaps[r, k:] = np.nan
                break
            back = 2.0 * inv_n * diff * maskf  # Q_Lᵀ E with E = dC/dA
            grads = [None] * len(ws)
            for ell in range(len(ws) - 1, -1, -1):
                grads[ell] = back @ prefix[ell].T  # Q_ℓᵀ E P_ℓᵀ
                back = ws[ell].T @ back
            for w, g in zip(ws, grads):
                w[...] = (1.0 - 2.0 * lr[t] * lam[t]) * w - lr[t] * g
            if noise.shape[1] > 0:
                theta[r] += noise_scale[t] * noise[r, t]
            if (step0 + t + 1) % _FLUSH_EVERY == 0:
                theta[r][np.abs(theta[r]) < tiny] = 0.0
            if k < len(rec_pos) and rec_pos[k] == t + 1:
                snaps[r, k] = theta[r]
                k += 1


#: Period of the flush of tiny entries (same as ``_dln_kernels.FLUSH_EVERY``).
_FLUSH_EVERY = 64


def flush_threshold(depth: int) -> float:
    """Entries below ``10^(−280/L)`` (capped at 1e−30) are set to 0 every 64 steps.

    Products of L such entries stay above the float64 denormal range (~1e−308), so
    no step ever computes with denormals (100× slower on x86). The flushed values
    only occur in directions that are decaying geometrically to 0 (a collapsed run,
    an unsampled row under forced sampling), far below any recorded singular value.
    """
    return min(10.0 ** (-280.0 / max(depth, 1)), 1e-30)


def _check_lr_lam(lr, lam, where: str = "") -> tuple[float, float]:
    pre = f"{where}: " if where else ""
    try:
        lr = check_positive("lr", lr)
        lam = check_nonnegative("lam", lam)
    except ValueError as exc:
        raise ValueError(pre + str(exc)) from None
    if 2.0 * lr * lam >= 1.0:
        raise ValueError(f"{pre}2·lr·lam must be < 1 (weight decay factor 1 − 2ηλ = {1 - 2 * lr * lam:.3g} "
                         f"would flip or zero the weights); got lr={lr}, lam={lam}")
    return lr, lam


def _check_problem_fits(arch: Architecture, problem: CompletionProblem) -> None:
    if not isinstance(problem, CompletionProblem):
        raise ValueError(f"problem must be a CompletionProblem, got {type(problem).__name__}")
    if problem.shape != arch.out_shape:
        raise ValueError(f"problem shape {problem.shape} does not match the network's output {arch.out_shape}")


def _svals(M: np.ndarray) -> np.ndarray:
    """Singular values of a batch ``(B, a, b)`` of small matrices, descending (compiled batched Jacobi)."""
    from ._dln_kernels import batched_singular_values

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


