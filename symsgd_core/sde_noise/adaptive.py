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
  :data:`~symsgd_core.rank_jumps.stepping.DIVERGENCE_RESIDUAL`);
* ``"stall"`` — the rule asks for a step below :data:`STALL_STEP` (time units): θ is so large (‖θ‖ of about 12
  on the ε-completion, four times the minima's ≈ 2.7) that its own time scale is below 10⁻¹² and no integrator
  can follow it further; whether such a path explodes or comes back is beyond reach;
* ``"budget"`` — more than ``BUDGET_FACTOR · t_end / h_max`` steps (reported, never silently dropped).

Randomness: run r uses numba's generator seeded with ``children(seed, R)[r]`` (32 bits of its state): the same
seed gives the same numbers, and a run does not depend on the other runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.seeding import children
from ..core.validation import check_int, check_nonnegative, check_positive, check_positive_int
from ..rank_jumps.engine import RunResult, _build_result, _record_stats
from ..rank_jumps.network import DEFAULT_B_CRITERION, DEFAULT_RANK_TOL, Params
from ..rank_jumps.problems import CompletionProblem, _check_problem_fits
from ..rank_jumps.stepping import DIVERGENCE_RESIDUAL, flush_threshold
from ._adaptive_kernel import EVENT_BUDGET, EVENT_NONE, EVENT_RESIDUAL, EVENT_STALL, adaptive_runs

__all__ = ["BUDGET_FACTOR", "DEFAULT_RHO", "EVENTS", "ESCAPE_NORM", "STALL_STEP", "AdaptiveRun", "run_sde_adaptive"]

#: The step rule's default relative bound ρ (mean and standard deviation of one increment ≤ ρ·max(‖θ‖, 1)).
DEFAULT_RHO = 0.05
#: A step below this (time units) ends the path as a stall.
STALL_STEP = 1e-12
#: ‖θ‖ at or above this counts as an escape (first time recorded; the path goes on): about 4× the norm of the
#: ε-completion's minima (≈ 2.7), well outside every bounded path's range.
ESCAPE_NORM = 10.0
#: A path may take at most ``BUDGET_FACTOR · t_end / h_max`` steps.
BUDGET_FACTOR = 50
#: Names of the event codes of the kernel, by code.
EVENTS = {EVENT_NONE: "none", EVENT_RESIDUAL: "residual", EVENT_STALL: "stall", EVENT_BUDGET: "budget"}


@dataclass(frozen=True, eq=False)
class AdaptiveRun:
    """An ensemble integrated by :func:`run_sde_adaptive`.

    Attributes:
        result: the records as the engine's :class:`~symsgd_core.rank_jumps.engine.RunResult` (``steps`` are record
            indices, ``times`` the record times; a run that ended early is NaN from the next record on and has
            ``diverged_step`` = the index of that record).
        t_event: ``(R,)`` time at which the path ended early (NaN if it reached the end).
        event: ``(R,)`` names from :data:`EVENTS`.
        n_steps: ``(R,)`` steps taken.  n_reduced: ``(R,)`` steps the rule shortened below h_max.
        min_h: ``(R,)`` the smallest step the rule asked for (h_max if it never bound).
        max_norm: ``(R,)`` the largest ‖θ‖ seen along the path.
        t_escape: ``(R,)`` the first time ‖θ‖ ≥ ``escape_norm`` (NaN if never).
        settings: the call's settings.
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

    @property
    def blew_up(self) -> np.ndarray:
        """``(R,)`` bool: the path ended with a residual above the limit or a stall."""
        return np.array([e in ("residual", "stall") for e in self.event])


def _seeds(seed: int, R: int) -> np.ndarray:
    return np.array([int(c.generate_state(1, np.uint32)[0]) for c in children(seed, R)], dtype=np.int64)


def run_sde_adaptive(params: Params, problem: CompletionProblem, t_end: float, *, lr: float, weight_decay: float,
                     h_max: float, rho: float = DEFAULT_RHO, batch_size: int = 1, seed: int = 0,
                     record_dt: float = 15.0, rank_tol: float = DEFAULT_RANK_TOL, record_layers: bool = True,
                     escape_norm: float = ESCAPE_NORM, xi=None, broken: str | None = None) -> AdaptiveRun:
    """SGD's SDE (temperature ``T = lr/batch_size``, weight decay ``weight_decay`` in the drift) to time ``t_end``.

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

    Returns:
        :class:`AdaptiveRun`.

    Raises:
        ValueError: non-finite start, ``2·h_max·weight_decay ≥ 1``, or bad sizes.
    """
    if not isinstance(params, Params) or params.n_runs < 1:
        raise ValueError("params must be a Params holding at least one run")
    _check_problem_fits(params.arch, problem)
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
    max_steps = int(BUDGET_FACTOR * math.ceil(t_end / h_max)) + n_rec
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
    rows, cols, vals = problem.entries
    adaptive_runs(theta, np.asarray(arch.dims, dtype=np.int64), arch.offsets, rows.astype(np.int64),
                  cols.astype(np.int64), vals.astype(np.float64), weight_decay, lr / batch_size, h_max, rho, rec_t,
                  snaps, _seeds(seed, R), xi_arr, STALL_STEP, max_steps, DIVERGENCE_RESIDUAL,
                  flush_threshold(arch.depth), escape_norm, t_event, event, n_steps, n_reduced, min_h, max_norm,
                  t_escape, broken == "noise_at_h_max")
    all_snaps = np.concatenate([params.flat[:, None, :], snaps], axis=1)
    weight_decay_at = np.full(n_rec + 1, weight_decay)
    rec = _record_stats(all_snaps, arch, problem, weight_decay_at, rank_tol, DEFAULT_B_CRITERION, record_layers)
    times = np.concatenate([[0.0], rec_t])
    idx = np.arange(n_rec + 1, dtype=np.int64)
    ended = np.isfinite(t_event)
    div_rec = np.where(ended, np.searchsorted(times, t_event, side="left"), -1).astype(np.int64)
    settings = dict(method="sde_adaptive", lr=lr, weight_decay=weight_decay, dt=None, h_max=h_max, rho=rho,
                    batch_size=batch_size, escape_norm=escape_norm, seed=seed, t_end=t_end, record_dt=record_dt,
                    rank_tol=rank_tol, criterion=DEFAULT_B_CRITERION, n_runs=R, problem=problem.name)
    res = _build_result(idx, times, rec, div_rec, Params(arch, theta), settings)
    return AdaptiveRun(res, t_event, tuple(EVENTS[int(e)] for e in event), n_steps, n_reduced, min_h, max_norm,
                       t_escape, settings)
