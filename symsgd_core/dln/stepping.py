"""What one step of the deep-linear-network engine does, written down once for its two implementations.

The step (SGD on ``B`` entries drawn i.i.d. from the observed set, or GD, or Langevin; conventions of
:mod:`symsgd_core.core.conventions`, loss of :mod:`.problems`)::

    SGD:       W_ℓ ← (1 − 2ηγ) W_ℓ − (2η/B) Σ_b r_b Q_ℓ[i_b,:]ᵀ P_ℓ[:,j_b]ᵀ,   r = A_ij − A*_ij
    GD:        W_ℓ ← (1 − 2ηγ) W_ℓ − η Q_ℓᵀ (dC/dA) P_ℓᵀ
    Langevin:  the GD step plus sqrt(2ητ) ξ,  ξ ~ N(0, I)

is implemented twice with the same signature: compiled (:mod:`._kernels`, numba, parallel over runs,
deterministic: the same numbers on any number of threads) and readable (:mod:`._reference`, plain numpy);
both consume the same pre-drawn entries and noise and agree step for step (tested). Besides the update,
each step applies two rules:

* **Divergence** (the rule of :mod:`symsgd_core.core.results`, instance :data:`DIVERGENCE`): a run diverges at
  the first step where a sampled residual ``|A_ij − A*_ij|`` (SGD; every observed residual for GD/Langevin)
  is not finite or exceeds :data:`DIVERGENCE_RESIDUAL`. The run is then frozen, its later records are NaN,
  and ``RunResult.diverged_step`` says so: a NaN in a record always comes with that flag.
* **Tiny entries**: after every :data:`FLUSH_EVERY`-th step, parameters below :func:`flush_threshold` in
  magnitude are set to 0, so decaying directions never reach float64 denormals (~100× slower); far below
  any recorded quantity.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ..core.results import Divergence
from ..core.validation import check_int

__all__ = ["DIVERGENCE", "DIVERGENCE_RESIDUAL", "FLUSH_EVERY", "flush_threshold", "prefetched", "weight_decay_factor"]

#: The divergence rule of this engine: the residual of the entries a step uses.
DIVERGENCE = Divergence("|A_ij − A*_ij| of the entries a step uses", 1e6)
#: A residual larger than this (in units of A's entries) counts as divergence.
DIVERGENCE_RESIDUAL = DIVERGENCE.limit
#: Period (in global steps) of the flush of tiny entries.
FLUSH_EVERY = 64


def flush_threshold(depth: int) -> float:
    """Entries below ``10^(−280/L)`` (capped at 1e−30) are set to 0 every :data:`FLUSH_EVERY` steps.

    Products of L such entries stay above the float64 denormal range (~1e−308), so no step ever computes with
    denormals (100× slower on x86). The flushed values only occur in directions that are decaying
    geometrically to 0 (a collapsed run, an unsampled row under forced sampling), far below any recorded
    singular value.
    """
    depth = check_int("depth", depth, minimum=1)
    return min(10.0 ** (-280.0 / max(depth, 1)), 1e-30)


def weight_decay_factor(lr: float, weight_decay: float, steps: int = 1):
    """``(1 − 2ηγ)^t``: what ``t`` steps of weight decay alone do to a part of θ that gets no data gradient
    (a row of ``W_L`` whose entries are never sampled)."""
    return (1.0 - 2.0 * lr * weight_decay) ** steps


def prefetched(items, produce):
    """Yield ``(item, produce(item))`` for each of ``items``, computing the next item's value in a background thread
    while the caller works on the current one.

    ``produce`` is called on the items in order, one call at a time, so random draws come out exactly as in a plain
    loop. The engines pass their random draws per chunk: numpy's generators release the GIL while they fill an array
    and the compiled kernels release it too (``nogil``), so the next chunk's draws overlap the current chunk's steps.
    """
    items = list(items)
    if len(items) < 2:
        for item in items:
            yield item, produce(item)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="symsgd-draws") as pool:
        pending = pool.submit(produce, items[0])
        for k, item in enumerate(items):
            value = pending.result()
            if k + 1 < len(items):
                pending = pool.submit(produce, items[k + 1])
            yield item, value
