"""One ensemble of one dynamics from the rank-2 minimum of Notebook 05's ε-completion, and its summary: what the
grid's tasks (:mod:`.experiments`), the controls (:mod:`.controls`) and the followed paths (:mod:`.spikes`) share.
The dynamics are looked up by the name the grid stores (:func:`~symsgd_core.dln.integrators.integrator`)."""

from __future__ import annotations

import math

import numpy as np

from ..core.validation import check_int, check_positive
from ..dln import DEFAULT_RANK_TOL, AdaptiveRun, RunResult
from ..dln.integrators import integrator
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from ..rank_jumps.experiments import start_minimum

__all__ = ["FOLLOW_FRESH_SEEDS", "FOLLOW_SEEDS", "HOT", "LOG_S2_BINS", "RETURN_LEVEL", "follow_label", "simulate",
           "simulate_adaptive", "summarize"]

#: Notebook 04's hot setting (η, γ), where SGD jumps: the first of §3's settings and the live figure's default.
HOT = (EXP.lr_hot, EXP.weight_decay_hot)
#: s₂(A) above this after a jump counts as a return to rank 2.
RETURN_LEVEL = 0.1
#: log10 s₂(A) histogram edges (values below the first edge go to the first bin).
LOG_S2_BINS = tuple(float(x) for x in np.arange(-18.0, 1.01, 1.0))


# ----------------------------------------------------------------------------------------------- one ensemble
def summarize(res: RunResult, t_max: float) -> dict:
    """Per-run events and long-run statistics of an ensemble, JSON-able (see the module docstring)."""
    t = np.asarray(res.times, dtype=float)
    s2 = res.singular_values[:, :, 1]
    s1 = res.singular_values[:, :, 0]
    R, K = s2.shape
    alive = np.isfinite(s2)
    hit = alive & (s2 <= DEFAULT_RANK_TOL)
    t_jump = np.where(hit.any(axis=1), t[np.argmax(hit, axis=1)], np.nan)
    t_ret = np.full(R, np.nan)
    for r in range(R):
        k = np.flatnonzero(hit[r])
        if k.size:
            later = np.flatnonzero(alive[r, k[0]:] & (s2[r, k[0]:] >= RETURN_LEVEL))
            if later.size:
                t_ret[r] = t[k[0] + later[0]]
    dt = t[-1] / max(int(res.steps[-1]), 1)
    out = {"n_runs": R, "t_max": float(t_max), "t_jump": _list(t_jump), "t_return": _list(t_ret),
           "t_diverged": _list(np.where(res.diverged, res.diverged_step * dt, np.nan)),
           "collapsed_end": (alive[:, -1] & (s1[:, -1] <= DEFAULT_RANK_TOL)).tolist()}
    if res.in_B is not None:
        out["frac_time_B1"] = res.in_B[:, 1:, 1].mean(axis=1).tolist()
    half, half1 = s2[:, K // 2:], s1[:, K // 2:]
    out["log10_s2_hist"] = _log_hist(half[np.isfinite(half)])
    out["log10_s2_hist_fit"] = _log_hist(half[np.isfinite(half) & (half1 > DEFAULT_RANK_TOL)])
    return out


def _log_hist(values: np.ndarray) -> list:
    vals = np.log10(np.maximum(values, 1e-300))
    return np.histogram(np.clip(vals, LOG_S2_BINS[0], LOG_S2_BINS[-1] - 1e-9), LOG_S2_BINS)[0].tolist()


def _list(x) -> list:
    return [None if not math.isfinite(v) else float(v) for v in np.asarray(x, dtype=float)]


def _start(weight_decay: float):
    base, rank = start_minimum(weight_decay=weight_decay)
    if rank != 2:
        raise ValueError(f"the phase-0 GD minimum at γ = {weight_decay:g} has rank {rank}, not 2: nothing to jump from")
    return base


def simulate(method: str, start, problem, *, lr: float, weight_decay: float, t_max: float, rec_dt: float, seed: int,
             m: int = 1, batch_size: int = 1, tau: float = 0.0, increments: str = "gaussian",
             record_layers: bool = True) -> RunResult:
    """One ensemble (``start`` holds the R runs) of the fixed-step integrator ``method`` (and ``increments``,
    :func:`~symsgd_core.dln.integrators.integrator`) over time ``t_max``, records every ``rec_dt``, at its declared
    time step (η or η/m). (An adaptive one goes through :func:`simulate_adaptive`.)"""
    integ = integrator(method, increments)
    if integ.adaptive:
        raise ValueError(f"method {method!r} is adaptive: use simulate_adaptive")
    m = check_int("m", m, minimum=1)
    dt = integ.time_step(lr, m)
    n = int(round(check_positive("t_max", t_max) / dt))
    every = max(1, int(round(check_positive("rec_dt", rec_dt) / dt)))
    return integ.run(start, problem, n, lr=lr, weight_decay=weight_decay, dt=dt, batch_size=batch_size, tau=tau,
                     seed=seed, record_every=every, record_layers=record_layers)


def simulate_adaptive(start, problem, *, lr: float, weight_decay: float, t_max: float, rec_dt: float, seed: int, m: int,
                      rho: float, batch_size: int = 1, follow: bool = False, **kw) -> AdaptiveRun:
    """The SDE with the adaptive step (:class:`~symsgd_core.dln.integrators.AdaptiveStep`, or its follow mode),
    h_max = η/m, bound ``rho``."""
    m = check_int("m", m, minimum=1)
    integ = integrator("follow" if follow else "sde_adaptive")
    return integ.run(start, problem, t_max, lr=lr, weight_decay=weight_decay, m=m, rho=rho, batch_size=batch_size,
                     seed=seed, rec_dt=rec_dt, **kw)


#: Seeds of the followed ensembles (two tasks of 32 runs), and the hot point's fresh seeds: the same ensemble
#: again with none of these draws, to re-make every claim of the spike table.
FOLLOW_SEEDS, FOLLOW_FRESH_SEEDS = (1, 2), (3, 4)


def follow_label(m: int, rho: float, t_max: float = 12_000.0, fresh: bool = False) -> str:
    """The comparison-table label of a followed SDE row (h_max = η/m, bound ρ)."""
    short = f" (t ≤ {t_max:g})" if t_max < 12_000 else ""
    return f"SDE followed, h ≤ η/{m}, ρ = {rho:g}{short}{', fresh seeds' if fresh else ''}"
