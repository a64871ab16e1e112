"""SGD's SDE with an adaptive step that cannot blow up spuriously (Notebook 05 §3; this project's construction).

Fixed-step Euler–Maruyama (:func:`.sde.run_sde`) can diverge for SDEs whose coefficients grow faster than
linearly even where the SDE itself does not (Hutzenthaler, Jentzen & Kloeden, Proc. R. Soc. A 467, 2011). The
drift of this SDE grows like ‖θ‖^{2L−1} and its noise like ‖θ‖^{2L−1} too, so a fixed-step blow-up count is no
evidence about the SDE. :func:`run_sde_adaptive` takes the Euler–Maruyama step on a **predictable** time grid,
in the spirit of Kelly & Lord (IMA J. Numer. Anal. 38, 2018)::

    h_n = min(h_max, ρ s / ‖D(θ_n)‖, (ρ s)² / (T tr C(θ_n))),       s = max(‖θ_n‖, 1),

so the mean increment and the increment's standard deviation are each at most ρ·s: no single step can
overshoot. h_n depends on θ_n only (not on the normals it is used with), so each increment is exactly Gaussian
with mean ``h_n D`` and covariance ``T h_n C``: the scheme converges to the same SDE as fixed-step EM as h_max and
ρ shrink, and where the rule never binds it *is* fixed-step EM (tested: the same normals give the same path).

A path ends early in one of three ways (:data:`EVENTS`):

* ``"residual"`` — the engine's divergence rule (a residual above
  :data:`~symsgd_core.dln.stepping.DIVERGENCE_RESIDUAL`);
* ``"stall"`` — the rule asks for a step below :data:`STALL_STEP` (time units), at ‖θ‖ of about 12–17 on the
  ε-completion (the minima's ≈ 2.7): a first passage over that level, not an escape (below);
* ``"budget"`` — more than ``BUDGET_FACTOR · t_end / h_max`` steps (reported, never silently dropped).

**A stall is not a finding about the SDE.** Since T·tr C grows like ‖θ‖^{2(2L−1)} (‖θ‖¹⁴ at depth 4), the norm at
which the rule asks for a step below :data:`STALL_STEP` is a fixed level (about 12–17 on the ε-completion, moving
only like ρ^{1/6}): a stall is a first passage over that level, and its rate is a level-crossing rate, not an
escape. (The floor itself was needed only because ``t += h`` loses a step below ulp(t).) So the integrator has a
second mode, ``follow=True``, **the same step rule read as a fixed step in the time-changed clock** dτ = dt/h(θ):
no stall, no residual rule, the time summed with Kahan's compensation; a path ends only at its horizon, or (counted
and reported, never silently) at ‖θ‖ ≥ :data:`FOLLOW_CAP_NORM` (``"cap"``, a thousand times above the highest level
notebook 05 reports), at a non-finite value (``"nonfinite"``) or at the step budget :data:`FOLLOW_BUDGET_FACTOR`
(``"budget"``). Where the original mode neither stalls nor trips the residual rule the two modes take the same steps
and agree to round-off (tested). Both modes record the **excursions** above ``excursion_base``: each time ‖θ‖ goes
from below that level to above it, its start and end time, its largest ‖θ‖ and its step count
(:class:`Excursions`): the spikes of notebook 05 §3.

What following shows (notebook 05 §3.1, :mod:`.spikes`): at the hot point every path reaches its horizon; the paths
the stall rule would have stopped spike to ‖θ‖ of 10 to 10⁴ and come back below 5 within about 10⁻⁵ time units
(hundreds to thousands of steps), and a few collapse to A = 0, which the stall rule had also hidden.

Randomness: run r uses numba's generator seeded with ``children(seed, R)[r]`` (32 bits of its state): the same
seed gives the same numbers, and a run does not depend on the other runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.seeding import children
from ..core.validation import check_int, check_nonnegative, check_positive, check_positive_int
from ._adaptive_kernel import (
    EVENT_BUDGET,
    EVENT_CAP,
    EVENT_NONE,
    EVENT_NONFINITE,
    EVENT_RESIDUAL,
    EVENT_STALL,
    adaptive_runs,
)
from .engine import RunResult, build_result, record_stats
from .network import DEFAULT_B_CRITERION, DEFAULT_RANK_TOL, Params
from .problems import CompletionProblem, check_problem_fits
from .stepping import DIVERGENCE_RESIDUAL, flush_threshold

__all__ = ["BUDGET_FACTOR", "DEFAULT_RHO", "EVENTS", "ESCAPE_NORM", "EXCURSION_BASE", "EXCURSION_CAPACITY",
           "FOLLOW_BUDGET_FACTOR", "FOLLOW_CAP_NORM", "STALL_STEP", "AdaptiveRun", "Excursions", "run_sde_adaptive"]

#: The step rule's default relative bound ρ (mean and standard deviation of one increment ≤ ρ·max(‖θ‖, 1)).
DEFAULT_RHO = 0.05
#: A step below this (time units) ends the path as a stall.
STALL_STEP = 1e-12
#: ‖θ‖ at or above this counts as an escape (first time recorded; the path goes on): about 4× the norm of the
#: ε-completion's minima (≈ 2.7), well outside every bounded path's range.
ESCAPE_NORM = 10.0
#: A path may take at most ``BUDGET_FACTOR · t_end / h_max`` steps.
BUDGET_FACTOR = 50
#: Follow mode: a path ends at ‖θ‖ ≥ this (``"cap"``, counted and reported): a thousand times the highest level of
#: notebook 05's spike table (10³), 4·10⁵ times the minima's norm (≈ 2.7); T·tr C there is about 10⁸⁰, far from
#: float64's overflow.
FOLLOW_CAP_NORM = 1e6
#: Follow mode: a path may take at most ``FOLLOW_BUDGET_FACTOR · t_end / h_max`` steps (``"budget"``, reported).
FOLLOW_BUDGET_FACTOR = 200
#: Excursions are counted above this ‖θ‖ (about twice the minima's norm ≈ 2.7, below every spike level reported).
EXCURSION_BASE = 5.0
#: Excursions stored per run (all are counted: ``Excursions.n``).
EXCURSION_CAPACITY = 4096
#: Names of the event codes of the kernel, by code.
EVENTS = {EVENT_NONE: "none", EVENT_RESIDUAL: "residual", EVENT_STALL: "stall", EVENT_BUDGET: "budget",
          EVENT_CAP: "cap", EVENT_NONFINITE: "nonfinite"}


@dataclass(frozen=True, eq=False)
class Excursions:
    """The excursions of every run above ``base`` (‖θ‖ from below ``base`` to at or above it, checked at the start
    of each step): ``start, end, height (R, E)`` in time units and ‖θ‖ (``end`` NaN while still open at the path's
    end; NaN beyond a run's count), ``steps (R, E)`` integrator steps inside it, ``n (R,)`` how many there were
    (entries beyond the capacity E are counted, not stored: ``lost``)."""

    base: float
    start: np.ndarray
    end: np.ndarray
    height: np.ndarray
    steps: np.ndarray
    n: np.ndarray

    @property
    def lost(self) -> int:
        """Excursions counted but not stored (beyond the capacity)."""
        return int(np.maximum(self.n - self.start.shape[1], 0).sum())

    def heights(self, closed_only: bool = False) -> np.ndarray:
        """Every stored excursion's largest ‖θ‖, pooled over runs (``closed_only``: those that came back below
        ``base`` before the path's end)."""
        ok = np.isfinite(self.start) & (np.isfinite(self.end) if closed_only else True)
        return self.height[ok]


@dataclass(frozen=True, eq=False)
class AdaptiveRun:
    """An ensemble integrated by :func:`run_sde_adaptive`.

    Attributes:
        result: the records as the engine's :class:`~symsgd_core.dln.engine.RunResult` (``steps`` are record
            indices, ``times`` the record times; a run that ended early is NaN from the next record on and has
            ``diverged_step`` = the index of that record).
        t_event: ``(R,)`` time at which the path ended early (NaN if it reached the end).
        event: ``(R,)`` names from :data:`EVENTS`.
        n_steps: ``(R,)`` steps taken.  n_reduced: ``(R,)`` steps the rule shortened below h_max.
        min_h: ``(R,)`` the smallest step the rule asked for (h_max if it never bound).
        max_norm: ``(R,)`` the largest ‖θ‖ seen along the path.
        t_escape: ``(R,)`` the first time ‖θ‖ ≥ ``escape_norm`` (NaN if never).
        settings: the call's settings.
        excursions: the excursions above ``settings["excursion_base"]`` (:class:`Excursions`).
    """

    result: RunResult
    t_event: np.ndarray
    event: tuple
    n_steps: np.ndarray
    n_reduced: np.ndarray
    min_h: np.ndarray
    max_norm: np.ndarray
    t_escape: np.ndarray
    settings: dict
    excursions: Excursions | None = None

    @property
    def blew_up(self) -> np.ndarray:
        """``(R,)`` bool: the path ended with a residual above the limit or a stall."""
        return np.array([e in ("residual", "stall") for e in self.event])

    @property
    def ended_early(self) -> np.ndarray:
        """``(R,)`` bool: the path did not reach its horizon (any event)."""
        return np.array([e != "none" for e in self.event])


def _seeds(seed: int, R: int) -> np.ndarray:
    return np.array([int(c.generate_state(1, np.uint32)[0]) for c in children(seed, R)], dtype=np.int64)


def run_sde_adaptive(params: Params, problem: CompletionProblem, t_end: float, *, lr: float, weight_decay: float,
                     h_max: float, rho: float = DEFAULT_RHO, batch_size: int = 1, seed: int = 0,
                     record_dt: float = 15.0, rank_tol: float = DEFAULT_RANK_TOL, record_layers: bool = True,
                     escape_norm: float = ESCAPE_NORM, xi=None, broken: str | None = None, follow: bool = False,
                     excursion_base: float = EXCURSION_BASE,
                     excursion_capacity: int = EXCURSION_CAPACITY) -> AdaptiveRun:
    """SGD's SDE (temperature ``T = lr/batch_size``, weight decay γ = ``weight_decay`` in the drift) to time ``t_end``.

    Args:
        params: start (R runs).  problem: the completion problem.
        lr, batch_size: η and S (T = η/S).  weight_decay: γ.
        h_max: the largest step (time units); ``rho``: the rule's relative bound (``0``: fixed step h_max,
            i.e. plain Euler–Maruyama).
        seed: run r draws from child r of ``SeedSequence(seed)``.
        record_dt: time between records (steps are cut to land on the record times).
        escape_norm: the level of ‖θ‖ whose first passage is recorded (``t_escape``).
        xi: optional normals ``(R, S, N)`` used in place of draws (step s of run r uses ``xi[r, s]``; tests).
        broken: ``None``, or ``"noise_at_h_max"``: a wrong scheme whose noise ignores the shortened step (for
            checks that must fail).
        follow: follow every path (module docstring): no stall and no residual rule; a path ends only at
            ``t_end``, at ‖θ‖ ≥ :data:`FOLLOW_CAP_NORM`, at a non-finite value or at the budget.
        excursion_base, excursion_capacity: the level above which excursions are recorded, and how many are
            stored per run (:class:`Excursions`).

    Returns:
        :class:`AdaptiveRun`.

    Raises:
        ValueError: non-finite start, ``2·h_max·weight_decay ≥ 1``, or bad sizes.
    """
    if not isinstance(params, Params) or params.n_runs < 1:
        raise ValueError("params must be a Params holding at least one run")
    check_problem_fits(params.arch, problem)
    if not np.all(np.isfinite(params.flat)):
        raise ValueError("params must be finite (found NaN or inf)")
    t_end = check_positive("t_end", t_end)
    lr, h_max = check_positive("lr", lr), check_positive("h_max", h_max)
    weight_decay, rho = check_nonnegative("weight_decay", weight_decay), check_nonnegative("rho", rho)
    batch_size = check_positive_int("batch_size", batch_size)
    record_dt = check_positive("record_dt", record_dt)
    check_int("seed", seed, minimum=0)
    if 2.0 * h_max * weight_decay >= 1.0:
        raise ValueError(f"2·h_max·weight_decay must be < 1, got h_max={h_max}, weight_decay={weight_decay}")
    arch = params.arch
    R, P = params.n_runs, arch.n_params
    N = problem.n_observed
    n_rec = max(1, int(math.ceil(t_end / record_dt - 1e-9)))
    rec_t = np.minimum(record_dt * np.arange(1, n_rec + 1), t_end)
    max_steps = int((FOLLOW_BUDGET_FACTOR if follow else BUDGET_FACTOR) * math.ceil(t_end / h_max)) + n_rec
    if xi is None:
        xi_arr = np.zeros((0, 0, 0))
    else:
        xi_arr = np.ascontiguousarray(xi, dtype=np.float64)
        if xi_arr.ndim != 3 or xi_arr.shape[0] != R or xi_arr.shape[2] != N:
            raise ValueError(f"xi must be (R, steps, N) with R = {R}, N = {N}; got {xi_arr.shape}")
        max_steps = min(max_steps, xi_arr.shape[1])
    theta = params.flat.copy()
    snaps = np.empty((R, n_rec, P))
    t_event = np.full(R, np.nan)
    event = np.zeros(R, dtype=np.int64)
    n_steps = np.zeros(R, dtype=np.int64)
    n_reduced = np.zeros(R, dtype=np.int64)
    min_h = np.zeros(R)
    max_norm = np.zeros(R)
    t_escape = np.full(R, np.nan)
    escape_norm = check_positive("escape_norm", escape_norm)
    if broken not in (None, "noise_at_h_max"):
        raise ValueError(f"broken must be None or 'noise_at_h_max', got {broken!r}")
    excursion_base = check_positive("excursion_base", excursion_base)
    E = check_int("excursion_capacity", excursion_capacity, minimum=0)
    exc = [np.full((R, E), np.nan) for _ in range(3)]
    exc_steps = np.zeros((R, E), dtype=np.int64)
    n_exc = np.zeros(R, dtype=np.int64)
    rows, cols, vals = problem.entries
    adaptive_runs(theta, np.asarray(arch.dims, dtype=np.int64), arch.offsets, rows.astype(np.int64),
                  cols.astype(np.int64), vals.astype(np.float64), weight_decay, lr / batch_size, h_max, rho, rec_t,
                  snaps, _seeds(seed, R), xi_arr, STALL_STEP, max_steps, math.inf if follow else DIVERGENCE_RESIDUAL,
                  flush_threshold(arch.depth), escape_norm, t_event, event, n_steps, n_reduced, min_h, max_norm,
                  t_escape, broken == "noise_at_h_max", bool(follow), FOLLOW_CAP_NORM,
                  excursion_base, exc[0], exc[1], exc[2], exc_steps, n_exc)
    all_snaps = np.concatenate([params.flat[:, None, :], snaps], axis=1)
    weight_decay_at = np.full(n_rec + 1, weight_decay)
    rec = record_stats(all_snaps, arch, problem, weight_decay_at, rank_tol, DEFAULT_B_CRITERION, record_layers)
    times = np.concatenate([[0.0], rec_t])
    idx = np.arange(n_rec + 1, dtype=np.int64)
    ended = np.isfinite(t_event)
    div_rec = np.where(ended, np.searchsorted(times, t_event, side="left"), -1).astype(np.int64)
    settings = dict(method="sde_follow" if follow else "sde_adaptive", lr=lr, weight_decay=weight_decay, dt=None,
                    h_max=h_max, rho=rho,
                    batch_size=batch_size, escape_norm=escape_norm, seed=seed, t_end=t_end, record_dt=record_dt,
                    rank_tol=rank_tol, criterion=DEFAULT_B_CRITERION, n_runs=R, problem=problem.name,
                    excursion_base=excursion_base, cap_norm=FOLLOW_CAP_NORM if follow else None)
    res = build_result(idx, times, rec, div_rec, Params(arch, theta), settings)
    return AdaptiveRun(res, t_event, tuple(EVENTS[int(e)] for e in event), n_steps, n_reduced, min_h, max_norm,
                       t_escape, settings, Excursions(excursion_base, exc[0], exc[1], exc[2], exc_steps, n_exc))
