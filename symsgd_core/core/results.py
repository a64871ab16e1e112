"""The one result shape of every engine, and the one divergence rule.

**Result shape.** Every engine returns a frozen dataclass derived from :class:`EngineResult`, whose first
four fields are the same everywhere, followed by the topic's own records:

* ``steps`` — ``(K,)`` int64 step numbers of the K records (0 = the start where the start is recorded);
* ``times`` — ``(K,)`` continuous time ``t`` of the records (``t = η·steps`` for SGD, ``dt·steps`` for SDEs;
  :mod:`~symsgd_core.core.conventions`);
* ``diverged_step`` — ``(R,)`` int64 per run (chain): the step at which it diverged, −1 = never;
* ``settings`` — dict of the call's settings (method, step sizes, seed, engine, …).

Engines: :class:`~symsgd_core.balance.dynamics.Trajectory` (law of balance),
:class:`~symsgd_core.dln.engine.RunResult` (deep linear networks) and
:class:`~symsgd_core.stationary.v_sde.VRun` (the v-SDE of diagonal networks).

**Divergence rule.** After every step the engine compares one watched quantity of each run with a limit
(:class:`Divergence`). A run whose watched quantity is not finite or exceeds the limit in absolute value
has *diverged*: it stops there (its state is the last finite one), ``diverged_step`` holds the step, its
random numbers are still drawn (so no other run's numbers change), and every summary says so. A
diverged run never turns into a silent NaN: records taken after the divergence are either the frozen
state (``balance``) or NaN next to the flag (``rank_jumps``, where a NaN record always comes with
``diverged_step ≥ 0``; ``stationary``, whose kernels split stiff steps so that only a state beyond the float
range diverges, and ``diverged_step`` is the first record at which it is seen); :meth:`EngineResult.alive_at`
tells which records came before it.

**Engine keyword.** Engines with a compiled (numba) and a readable numpy implementation choose with one
keyword, ``engine`` — one of :data:`ENGINES`: ``"auto"`` (compiled where it exists), ``"compiled"`` or
``"reference"``. Both give the same numbers (tested). The v-SDE engine (``stationary.sde``) has only the
compiled implementation and no ``engine`` keyword.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .validation import check_choice, check_positive

__all__ = ["ENGINES", "Divergence", "EngineResult", "Outcome", "resolve_engine"]

#: Values of the ``engine`` keyword of every engine that has two implementations.
ENGINES = ("auto", "compiled", "reference")


def resolve_engine(engine: str, compiled_available: bool = True, why: str = "") -> bool:
    """Whether to use the compiled path for ``engine`` (one of :data:`ENGINES`).

    Raises:
        ValueError: unknown value, or ``"compiled"`` where no compiled path exists (``why`` says why).
    """
    check_choice("engine", engine, ENGINES)
    if engine == "compiled" and not compiled_available:
        raise ValueError(f"engine 'compiled' is not available here{': ' + why if why else ''}")
    return compiled_available and engine != "reference"


@dataclass(frozen=True)
class Outcome:
    """What an experiment's runs did, as data: an experiment decides it, a figure only words it, tests assert it.

    Attributes:
        kind: one of the experiment's named outcomes (e.g. ``"forced_too_short"``); each experiment lists its kinds.
        failure: True for a failure mode of the setting (divergence, collapse, a phase too short), False when the
            setting shows what the figure is about.
        numbers: the numbers that decide the kind and that its wording quotes (name → a number, a bool or a tuple
            of numbers; never a text).
        labels: the names the wording quotes (name → a text or a tuple of texts: a stored row's name, a file's
            error, which point was used); empty by default.

    Raises:
        TypeError: a text among ``numbers`` (it belongs in ``labels``), or a non-text among ``labels``.
    """

    kind: str
    failure: bool
    numbers: dict
    labels: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "numbers", dict(self.numbers))
        object.__setattr__(self, "labels", dict(self.labels))
        for name, value in self.numbers.items():
            if isinstance(value, str) or (isinstance(value, tuple) and any(isinstance(v, str) for v in value)):
                raise TypeError(f"Outcome number {name!r} is a text ({value!r}): put it in labels")
        for name, value in self.labels.items():
            if not (isinstance(value, str) or (isinstance(value, tuple) and all(isinstance(v, str) for v in value))):
                raise TypeError(f"Outcome label {name!r} must be a text or a tuple of texts, got {value!r}")

    def with_numbers(self, **numbers) -> Outcome:
        """The same outcome with ``numbers`` added (what the wording also quotes: the settings, a fit, a count);
        ValueError for a name it already has (an experiment's decision is never overwritten)."""
        clash = sorted(set(numbers) & set(self.numbers))
        if clash:
            raise ValueError(f"Outcome {self.kind!r} already has the numbers {clash}")
        return Outcome(self.kind, self.failure, {**self.numbers, **numbers}, self.labels)


@dataclass(frozen=True)
class Divergence:
    """The divergence rule of one engine: the watched quantity and its limit (see the module docstring).

    Attributes:
        watched: the quantity compared after each step, in words (e.g. ``"max|θ|"``).
        limit: the largest allowed absolute value (> 0).
    """

    watched: str
    limit: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "limit", check_positive("limit", self.limit))

    def exceeded(self, values, axis=None) -> np.ndarray:
        """``True`` where ``values`` is not finite or ``|values| > limit`` (NaN counts as exceeded).

        With ``axis``, a run exceeds the limit when any of its entries does.
        """
        with np.errstate(invalid="ignore"):
            ok = np.abs(np.asarray(values, dtype=np.float64)) <= self.limit  # NaN compares False
        return ~(ok.all(axis=axis) if axis is not None else ok)

    def with_limit(self, limit: float) -> Divergence:
        """The same rule with another limit (engines let callers lower it, e.g. to stop runs early)."""
        return Divergence(self.watched, limit)

    def describe(self) -> str:
        return f"{self.watched} > {self.limit:g} or not finite"


@dataclass(frozen=True, eq=False)
class EngineResult:
    """The fields every engine result starts with (see the module docstring).

    Attributes:
        steps: ``(K,)`` int64 step numbers of the records.
        times: ``(K,)`` continuous time of the records.
        diverged_step: ``(R,)`` int64, the step at which each run diverged (−1 = never).
        settings: the call's settings.
    """

    steps: np.ndarray
    times: np.ndarray
    diverged_step: np.ndarray
    settings: dict

    @property
    def n_runs(self) -> int:
        """Number of runs (chains) R."""
        return int(np.shape(self.diverged_step)[0])

    @property
    def diverged(self) -> np.ndarray:
        """``(R,)`` bool: the run diverged."""
        return self.diverged_step >= 0

    @property
    def ok_runs(self) -> np.ndarray:
        """``(R,)`` bool: the run never diverged."""
        return self.diverged_step < 0

    @property
    def n_diverged(self) -> int:
        return int(np.sum(self.diverged_step >= 0))

    def alive_at(self) -> np.ndarray:
        """``(K, R)`` bool: record ``k`` of run ``r`` was taken before the run diverged."""
        d = np.asarray(self.diverged_step)
        return (d[None, :] < 0) | (np.asarray(self.steps)[:, None] < d[None, :])
