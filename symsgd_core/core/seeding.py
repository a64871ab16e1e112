"""The seeding rule, written down once: where every random number of the package comes from.

Every stream is a ``numpy.random.Generator`` derived from an integer seed by numpy's ``SeedSequence``
(PCG64). There is no global state and no ``None`` seed: the same seed gives the same numbers.

* :func:`stream` — **one** stream: ``default_rng(seed)``, the root stream of ``SeedSequence(seed)``.
  Engines that draw for all runs in one vectorised call per step use it, in a documented order
  (``balance.dynamics``: run-major, a frozen run still draws, so no run depends on another). Passing a
  ``Generator`` instead of an integer continues that stream (a run split into calls gives the numbers of
  one call).
* :func:`streams` — ``n`` **independent** streams: the children ``SeedSequence(seed).spawn(n)``. Engines
  give one child to each unit whose numbers must not depend on how many other units there are: each run
  (``dln.engine``: run ``r`` is the same whatever the ensemble size) or each block of
  :data:`~symsgd_core.stationary.v_sde.BLOCK_SIZE` chains (``stationary.sde``: the numbers do not depend on
  the thread count).
* :func:`tagged_stream` — an experiment's **auxiliary** stream ``default_rng([seed, tag])`` (e.g. the exact
  draws of a stationary law that chains start from, ``stationary.checks`` tag 17,
  ``stationary.experiments.dt_convergence`` tag 5): a different entropy from :func:`stream` ``(seed)``, so the
  start never reuses the engine's numbers of the same seed.
* :func:`piece_seed` — the integer seed of piece ``k`` of an experiment run as consecutive engine calls
  with fresh streams (``rank_jumps.experiments.forced_row_run``): ``seed · 1_000_003 + k``. The pieces'
  streams are then the :func:`streams` of these seeds.

Experiments that need several independent runs of one engine (e.g. SGD and GD + isotropic noise from the
same start) give them different integer seeds and say which in their docstrings.
"""

from __future__ import annotations

import numpy as np

from .validation import as_generator, check_int

__all__ = ["PIECE_STRIDE", "children", "piece_seed", "stream", "streams", "tagged_stream"]

#: Stride between the seeds of consecutive pieces (a prime, so pieces of different seeds never collide
#: for fewer than a million pieces).
PIECE_STRIDE = 1_000_003


def stream(seed) -> np.random.Generator:
    """One stream: ``default_rng(seed)`` for an integer ``seed ≥ 0``; a ``Generator`` is returned as it is.

    Raises:
        ValueError: ``None``, a negative or a non-integer seed.
    """
    return as_generator(seed)


def streams(seed, n: int) -> list[np.random.Generator]:
    """``n`` independent streams, the children ``SeedSequence(seed).spawn(n)`` (child ``i`` does not depend on ``n``).

    Raises:
        ValueError: ``seed`` is not an integer ``≥ 0`` (a ``Generator`` cannot be split into children here), or
            ``n < 0``.
    """
    return [np.random.default_rng(child) for child in children(seed, n)]


def children(seed, n: int) -> list[np.random.SeedSequence]:
    """The seed sequences behind :func:`streams` (for kernels that build their own bit generators)."""
    if isinstance(seed, np.random.Generator):
        raise ValueError("seed must be an integer here (each run gets its own child stream)")
    seed = check_int("seed", seed, minimum=0)
    return np.random.SeedSequence(seed).spawn(check_int("n", n, minimum=0))


def tagged_stream(seed, tag: int) -> np.random.Generator:
    """An experiment's auxiliary stream ``default_rng([seed, tag])`` for integers ``seed, tag ≥ 0``."""
    return np.random.default_rng([check_int("seed", seed, minimum=0), check_int("tag", tag, minimum=0)])


def piece_seed(seed: int, k: int) -> int:
    """The integer seed of piece ``k`` of an experiment split into consecutive engine calls: ``seed·1_000_003 + k``."""
    return check_int("seed", seed, minimum=0) * PIECE_STRIDE + check_int("k", k, minimum=0)
