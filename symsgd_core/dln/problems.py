"""Matrix completion: the target, the observed entries and the regularised loss (arXiv 2305.16038).

Loss (project normalisation; the paper's constants are not available)::

    𝓛_γ(θ) = (1/N) Σ_{(i,j)∈Ω} (A_ij − A*_ij)² + γ ‖θ‖²,   ‖θ‖² = Σ_ℓ ‖W_ℓ‖_F²,

with the squared error without ½ of :mod:`symsgd_core.core.conventions`. The weight decay is γ (the project's
notation table); Wang & Jacot write λ. The code's keyword is ``weight_decay``. Its full gradient is
``∇_{W_ℓ} = Q_ℓᵀ (dC/dA) P_ℓᵀ + 2γ W_ℓ`` with ``dC/dA = (2/N)(A − A*) ⊙ mask``, ``P_ℓ = W_{ℓ−1}⋯W_1``,
``Q_ℓ = W_L⋯W_{ℓ+1}``.

:func:`epsilon_completion` is the 2×2 problem of Notebook 04 (observe ``A₁₁ = 1``, ``A₁₂ = ε``, ``A₂₂ = 1``);
:func:`random_low_rank_completion` a random rank-r target with a random mask.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.seeding import stream
from ..core.validation import (
    check_array,
    check_in_range,
    check_int,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from .network import Architecture, Params, end_to_end

__all__ = ["CompletionProblem", "epsilon_completion", "gradient", "loss", "random_low_rank_completion"]


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
    """The 2×2 ε-completion of Notebook 04 (this project's small replacement for the paper's experiments).

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
    rng = stream(seed)
    target = scale * rng.normal(size=(m, rank)) @ rng.normal(size=(rank, n)) / math.sqrt(rank)
    mask = rng.random((m, n)) < p
    while not mask.any():
        mask = rng.random((m, n)) < p
    return CompletionProblem(target, mask, name=f"random rank-{rank} {m}×{n}, {mask.sum()} observed")


def loss(params: Params, problem: CompletionProblem, weight_decay: float) -> np.ndarray:
    """``𝓛_γ(θ) = (1/N) Σ_Ω (A_ij − A*_ij)² + γ‖θ‖²`` per run: ``(R,)``."""
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    check_problem_fits(params.arch, problem)
    return problem.fit_loss(end_to_end(params)) + weight_decay * params.norm_sq()


def gradient(params: Params, problem: CompletionProblem, weight_decay: float) -> Params:
    """Full gradient ``∇𝓛_γ``: ``∇_{W_ℓ} = Q_ℓᵀ (dC/dA) P_ℓᵀ + 2γ W_ℓ``, ``dC/dA = (2/N)(A − A*) ⊙ mask``.

    Returns:
        :class:`Params` holding the gradient (same layout as ``params``).
    """
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    check_problem_fits(params.arch, problem)
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
        grads[ell] = back @ np.swapaxes(prefix[ell], 1, 2) + 2.0 * weight_decay * ws[ell]
        back = np.swapaxes(ws[ell], 1, 2) @ back
    return Params(params.arch, np.concatenate([g.reshape(R, -1) for g in grads], axis=1))


def check_problem_fits(arch: Architecture, problem: CompletionProblem) -> None:
    if not isinstance(problem, CompletionProblem):
        raise ValueError(f"problem must be a CompletionProblem, got {type(problem).__name__}")
    if problem.shape != arch.out_shape:
        raise ValueError(f"problem shape {problem.shape} does not match the network's output {arch.out_shape}")
