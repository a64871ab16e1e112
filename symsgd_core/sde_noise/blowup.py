"""Does SGD's SDE blow up, or only its integrator? (Notebook 05 §3.1; this project's measurement.)

Two measurements on the ε-completion, both reading or producing grid tasks (:mod:`.experiments`):

* :func:`hazard_rows` — the blow-up hazard per unit time, with its exact 95 % interval, per integrator and step,
  on one horizon for all: fixed-step Euler–Maruyama at dt = η/4, η/16, η/64 (a blow-up is a residual above 10⁶)
  and the adaptive step of :mod:`.adaptive` at three accuracies (h_max, ρ) = (η/4, 0.1), (η/16, 0.05),
  (η/64, 0.025) (a blow-up is a residual above 10⁶ or a stall). Runs are exposed until their blow-up or the
  horizon; the hazard is events / exposure (:func:`~symsgd_core.core.stats.censored_exponential`).
* :func:`continuation_task` — states just before fixed-step blow-ups (the last record still within the divergence
  rule, at most ``rec_dt`` time units before the first state beyond it), each continued by both integrators with
  fresh noise: how often does each blow up again?
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..core.seeding import piece_seed
from ..core.stats import censored_exponential
from ..core.validation import check_positive_int
from ..dln import DIVERGENCE, CompletionProblem, Params, epsilon_completion, replicate, run_sde, run_sde_adaptive
from ..dln.integrators import AdaptiveStep, EulerMaruyama
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from ..rank_jumps.experiments import start_minimum

__all__ = ["ADAPTIVE_LEVELS", "EM_STEPS", "HAZARD_HORIZON", "HazardRow", "continuation_norms", "continuation_task",
           "escape_norms", "hazard_rows", "horizon_statistics", "mean_ratio", "pre_blowup_states", "rate_ratio"]

#: The horizon (time units) on which every integrator's hazard is measured.
HAZARD_HORIZON = 3000.0
#: Fixed-step Euler–Maruyama: dt = η/m for these m.
EM_STEPS = (4, 16, 64)
#: The adaptive integrator's accuracies (m, ρ): h_max = η/m and the relative bound ρ, coarse to fine.
ADAPTIVE_LEVELS = ((4, 0.1), (16, 0.05), (64, 0.025))


@dataclass(frozen=True)
class HazardRow:
    """One integrator at one (η, γ) on ``[0, horizon]``.

    Attributes:
        lr, weight_decay: η and γ.  integrator: ``"EM"`` or ``"adaptive"``.  m: dt (or h_max) = η/m.  rho: the adaptive
            bound (None for EM).
        n_runs: runs.  events: blow-ups within the horizon.  exposure: total time at risk.
        rate: blow-ups per 1000 time units, with its 95 % interval ``(rate, lo, hi)``.
        escaped: adaptive only: runs whose ‖θ‖ reached 10 within the horizon (None for EM).
        escaped_back: adaptive only: of those, runs that neither stalled nor blew up (came back below).
        jumped: runs at rank ≤ 1 within the horizon.  wait: mean first time at rank ≤ 1 on the horizon
            ``(mean, lo, hi)`` (censored at a blow-up or the horizon; its events are ``jumped``).
    """

    lr: float
    weight_decay: float
    integrator: str
    m: int
    rho: float | None
    n_runs: int
    events: int
    exposure: float
    rate: tuple
    escaped: int | None
    escaped_back: int | None
    jumped: int = 0
    wait: tuple = (math.inf, 0.0, math.inf)


def _times(results: list[dict], key: str) -> np.ndarray:
    return np.array([np.nan if v is None else v for r in results for v in r[key]], dtype=float)


def horizon_statistics(results: list[dict], horizon: float, alpha: float = 0.05) -> tuple[dict, dict]:
    """Blow-ups and first jumps of the runs of :func:`~.experiments.dynamics_task` results on ``[0, horizon]``.

    Returns ``(blowups, wait)``, two :func:`~symsgd_core.core.stats.censored_exponential` dicts with (1 − α)
    intervals: the blow-up times (a run is exposed until its blow-up or the horizon), and the first times at rank
    ≤ 1 (censored at a blow-up or the horizon).
    """
    td = _times(results, "t_diverged")
    ev = np.where(td <= horizon, td, np.nan)
    blowups = censored_exponential(ev, horizon, alpha=alpha)
    tj = _times(results, "t_jump")
    end = np.where(np.isfinite(ev), ev, horizon)
    return blowups, censored_exponential(np.where(tj <= end, tj, np.nan), end, alpha=alpha)


def hazard_rows(grid, horizon: float = HAZARD_HORIZON) -> tuple[HazardRow, ...]:
    """The blow-up hazard per integrator and step at every (η, γ) of the grid's SDE rows (see the module doc)."""
    rows = []
    settings = sorted({(t["params"]["lr"], t["params"]["weight_decay"]) for t in grid.tasks
                       if t["kind"] == "dynamics" and t["params"]["method"] == AdaptiveStep.name}, reverse=True)
    for lr, weight_decay in settings:
        for integrator, levels in (("EM", [(m, None) for m in EM_STEPS]), ("adaptive", ADAPTIVE_LEVELS)):
            for m, rho in levels:
                sel = dict(method=(EulerMaruyama if integrator == "EM" else AdaptiveStep).name, lr=lr,
                           weight_decay=weight_decay, m=m)
                if rho is not None:
                    sel["rho"] = rho
                res = [r for r in grid.select("dynamics", **sel) if r["t_max"] >= horizon]
                if not res:
                    continue
                w, wj = horizon_statistics(res, horizon)
                rate = (1e3 / w["mean"], 1e3 / w["hi"], 1e3 / w["lo"])
                esc = back = None
                if integrator == "adaptive":
                    td, te = _times(res, "t_diverged"), _times(res, "t_escape")
                    escaped = np.isfinite(te) & (te <= horizon)
                    esc = int(escaped.sum())
                    back = int((escaped & ~(td <= horizon)).sum())
                n_runs = sum(len(r["t_diverged"]) for r in res)
                rows.append(HazardRow(lr, weight_decay, integrator, m, rho, n_runs, w["events"], w["exposure"], rate,
                                      esc, back, int(wj["events"]), (wj["mean"], wj["lo"], wj["hi"])))
    return tuple(rows)


def escape_norms(grid) -> dict:
    """Over every adaptive-step run of the grid: the range of ‖θ‖ at which paths stalled (``stall_min``,
    ``stall_max``), the largest ‖θ‖ reached by a path that did not (``returned_max``), and the counts."""
    stall, back = [], []
    for t in grid.tasks:
        if t["kind"] == "dynamics" and t["params"]["method"] == AdaptiveStep.name:
            for norm, ev in zip(t["result"]["max_norm"], t["result"]["event"]):
                (stall if ev == "stall" else back).append(norm)
    if not stall or not back:
        raise ValueError("the grid has no adaptive-step runs that stalled and that did not")
    return {"stall_min": float(min(stall)), "stall_max": float(max(stall)), "n_stalled": len(stall),
            "returned_max": float(max(back)), "n_returned": len(back)}


def mean_ratio(events_a: int, mean_a: float, events_b: int, mean_b: float, alpha: float = 0.05) -> tuple:
    """The ratio of two exponential means ``mean_a / mean_b`` (each = exposure / events) with its (1 − α) interval.

    ``2 d · m / μ`` is χ² with 2d degrees of freedom for an exponential sample of d events (exact for a fixed
    number of events; censoring at fixed times makes it a close approximation), so ``(m_a/μ_a) / (m_b/μ_b)`` is
    F(2d_a, 2d_b): the interval is ``(m_a/m_b) / F_{1−α/2}`` to ``(m_a/m_b) / F_{α/2}``. Rates: pass the
    reciprocals, or swap a and b. Returns ``(ratio, lo, hi)``; NaN when either side has no event.
    """
    from scipy import stats as _st

    if events_a < 1 or events_b < 1:
        return (math.nan, math.nan, math.nan)
    r = mean_a / mean_b
    return (r, r / _st.f.ppf(1 - alpha / 2, 2 * events_a, 2 * events_b),
            r / _st.f.ppf(alpha / 2, 2 * events_a, 2 * events_b))


def rate_ratio(events_a: int, exposure_a: float, events_b: int, exposure_b: float, alpha: float = 0.05) -> tuple:
    """The ratio of two event rates, ``(events_a/exposure_a) / (events_b/exposure_b)``, with its (1 − α) interval
    (:func:`mean_ratio` of the mean waits, b over a); NaN when either side has no event."""
    return mean_ratio(events_b, exposure_b / max(events_b, 1), events_a, exposure_a / max(events_a, 1), alpha)


def continuation_norms(grid) -> tuple[np.ndarray, dict] | None:
    """The grid's ``continuation`` task (:func:`continuation_task`) as arrays: ``(t, {"em": ‖θ‖, "adaptive": ‖θ‖})``,
    each ``(continuations, records)`` with NaN after a blow-up; None when the grid has no such task."""
    cont = next((t["result"] for t in grid.tasks if t["kind"] == "continuation"), None)
    if cont is None:
        return None
    norms = {key: np.array([[np.nan if v is None else v for v in row] for row in cont[f"trace_{key}"]], dtype=float)
             for key in ("em", "adaptive")}
    return np.asarray(cont["trace_t"], dtype=float), norms


def _residuals(params: Params, problem: CompletionProblem) -> np.ndarray:
    """``A_θ,ij − A*_ij`` on the observed entries, ``(R, N)``: what the engine's divergence rule watches."""
    rows, cols, vals = problem.entries
    return params.end_to_end()[:, rows, cols] - vals


def pre_blowup_states(start: Params, problem: CompletionProblem, lr: float, weight_decay: float, dt: float,
                      seg: int, seed: int, t_max: float, n_states: int) -> tuple[list[Params], list[float]]:
    """Fixed-step EM runs from ``start`` (R runs), advanced in segments of ``seg`` steps: for each run that blows up
    (a residual beyond the engine's rule :data:`~symsgd_core.dln.stepping.DIVERGENCE`), the last segment start
    before its blow-up, in the order found, at most ``n_states`` of them, searching up to ``t_max`` time units.

    Every kept state satisfies the rule. The engine checks a state before stepping from it, so a segment whose last
    step lands beyond the rule is not flagged within it; such a run is caught here at the segment's end (its kept
    state is that segment's start, not the next segment's start, which already violates the rule).

    Returns ``(states, leads)``: one-run :class:`Params`, and per state the time (time units) from it to its EM
    blow-up as the engine dates it (``diverged_step · dt``: one step after the first state beyond the rule), in
    ``[2 dt, (seg + 1) dt]``.
    """
    seg = check_positive_int("seg", seg)
    if DIVERGENCE.exceeded(_residuals(start, problem), axis=1).any():
        raise ValueError("a start state already violates the divergence rule: there is no state before its blow-up")
    params = start.copy()
    states, leads = [], []
    alive = np.ones(start.n_runs, dtype=bool)
    k = 0
    while len(states) < n_states and k * seg * dt < t_max and alive.any():
        before = params.select(alive)
        res = run_sde(before, problem, seg, lr=lr, weight_decay=weight_decay, dt=dt, seed=piece_seed(seed, k),
                      record_every=seg, record_layers=False)
        # the engine's flag (the state reached after diverged_step − 1 steps is beyond the rule), or the last step
        # landed beyond it (the engine would flag step seg + 1)
        at_end = ~res.diverged & DIVERGENCE.exceeded(_residuals(res.final, problem), axis=1)
        blown = res.diverged | at_end
        steps = np.where(res.diverged, res.diverged_step, seg + 1)
        for j in np.flatnonzero(blown):
            states.append(before.select(int(j)))
            leads.append(float(steps[j] * dt))
        idx = np.flatnonzero(alive)
        alive[idx[blown]] = False
        params = params.copy()
        params.flat[idx] = res.final.flat
        k += 1
    return states[:n_states], leads[:n_states]


def continuation_task(p: dict) -> dict:
    """States just before fixed-step blow-ups (:func:`pre_blowup_states`), continued by both integrators.

    Keys: ``lr, weight_decay, m`` (EM's dt = η/m, also the adaptive h_max), ``rho``, ``seed``, ``n_runs`` (EM runs
    searched), ``t_max`` (search horizon), ``rec_dt`` (segment length: the kept state is at most this long before
    the first state beyond the divergence rule), ``n_states``, ``n_cont`` (continuations per state and integrator),
    ``cont_t`` (their length), ``cont_rec`` (record spacing of the continuations; one EM step resolves the
    blow-ups).

    Returns per state ``lead`` (time from the state to its EM blow-up, as the engine dates it: see
    :func:`pre_blowup_states`), ``state_residual`` (its largest ``|A_ij − A*_ij|`` on Ω, within the rule),
    ``em_blew`` and ``adaptive_blew`` (counts of continuations that blew up within ``cont_t``), and, for the state
    where the two counts differ most (``trace_state``), the traces ``trace_t``, ``trace_em`` and ``trace_adaptive``
    (‖θ‖ of each continuation at every record, None after a blow-up).
    """
    t0 = time.perf_counter()
    lr, weight_decay, m = float(p["lr"]), float(p["weight_decay"]), int(p["m"])
    dt = lr / m
    problem = epsilon_completion(EXP.eps)
    states, leads = pre_blowup_states(replicate(start_minimum(weight_decay=weight_decay)[0], p["n_runs"]), problem,
                                      lr, weight_decay, dt, int(round(p["rec_dt"] / dt)), p["seed"], p["t_max"],
                                      p["n_states"])
    n_c, n_steps = int(p["n_cont"]), int(round(p["cont_t"] / dt))
    rec_every = max(1, int(round(p["cont_rec"] / dt)))
    em_blew, ad_blew, traces = [], [], []
    for s, state in enumerate(states):
        start = replicate(state, n_c)
        em = run_sde(start, problem, n_steps, lr=lr, weight_decay=weight_decay, dt=dt,
                     seed=piece_seed(p["seed"] + 1, s), record_every=rec_every, record_layers=False)
        ad = run_sde_adaptive(start, problem, n_steps * dt, lr=lr, weight_decay=weight_decay, h_max=dt, rho=p["rho"],
                              seed=piece_seed(p["seed"] + 2, s), record_dt=rec_every * dt, record_layers=False)
        em_blew.append(int(em.diverged.sum()))
        ad_blew.append(int(ad.blew_up.sum()))
        traces.append({"trace_t": np.asarray(em.times).tolist(),
                       "trace_em": [[None if not math.isfinite(v) else math.sqrt(v) for v in row]
                                    for row in em.norm_sq],
                       "trace_adaptive": [[None if not math.isfinite(v) else math.sqrt(v) for v in row]
                                          for row in ad.result.norm_sq]})
    pick = int(np.argmax(np.asarray(em_blew) - np.asarray(ad_blew))) if states else 0
    residual = [float(np.max(np.abs(_residuals(state, problem)))) for state in states]
    return {"n_states": len(states), "lead": leads, "state_residual": residual, "em_blew": em_blew,
            "adaptive_blew": ad_blew, "trace_state": pick, **(traces[pick] if traces else {}),
            "seconds": time.perf_counter() - t0}
