"""Every SDE path followed to its horizon: spikes, returns, collapses (Notebook 05 §3; this project's measurement).

The adaptive step's original mode ends a path when its rule asks for a step below 10⁻¹² (a *stall*); a stall is a
first passage over a fixed norm (:mod:`.adaptive`), not an escape. Here the same rule runs in its follow mode
(``run_sde_adaptive(..., follow=True)``): no stall and no residual rule, so every path is followed to its horizon
unless it reaches ‖θ‖ ≥ :data:`~.adaptive.FOLLOW_CAP_NORM` (10⁶, counted and printed). What the paths do far
from the minima is then measured, not cut:

* a **spike** to level b is an excursion above :data:`~.adaptive.EXCURSION_BASE` (‖θ‖ = 5, about twice the
  minima's norm) whose largest ‖θ‖ reaches b; :func:`spike_table` gives the rate of spikes per 1000 time units above
  each level of :data:`SPIKE_LEVELS` with exact Poisson 95 % intervals, and ``rate × (b − base)``: flat in b if ‖θ‖
  is a martingale far out (:mod:`.explosion`: P(reach b before the base | reached s₀) = (s₀ − base)/(b − base));
* their **height and duration** (:func:`spike_shapes`); whether each came back below the base (a *return*);
* the runs' events (horizon / cap / non-finite / budget), first times at rank ≤ 1, returns to rank 2, the time in
  B₁ by its **rank test** alone (every layer's s₂ ≤ ε₁; a spike above ‖θ‖ = 10 fails B₁'s norm test ‖θ‖² ≤ 100,
  whatever its rank) and by the full criterion, and the **collapses** to A = 0 (s₁(A) ≤ 10⁻³) with their times
  (:class:`FollowSummary`, :func:`follow_summary`).

:func:`follow_task` is the grid task (``kind="follow"``) that stores all of this for one ensemble.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats as _stats

from ..core.stats import censored_exponential, mean_se
from ..core.validation import check_int, check_positive
from ..dln import (
    DEFAULT_B_CRITERION,
    DEFAULT_RANK_TOL,
    EXCURSION_BASE,
    FOLLOW_CAP_NORM,
    epsilon_completion,
    replicate,
)
from ..dln.integrators import integrator
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from .ensembles import FOLLOW_FRESH_SEEDS, _list, _start, follow_label, summarize
from .explosion import power_passage

__all__ = ["HEIGHT_EDGES", "SPIKE_LEVELS", "STORE_FROM", "fit_passage", "follow_groups", "follow_report_lines",
           "follow_results", "follow_summary", "follow_task", "FollowGroup", "FollowSummary", "PassageFit",
           "spike_shapes", "spike_table", "SpikeRow", "SpikeShape"]

#: The levels b of ‖θ‖ whose spike rates notebook 05 reports (the minima have ‖θ‖ ≈ 2.7).
SPIKE_LEVELS = (10.0, 20.0, 50.0, 100.0, 1000.0)
#: A grid task stores every excursion whose height reaches this (all of them are counted).
STORE_FROM = SPIKE_LEVELS[0]
#: Edges of the histogram of every excursion's height that a grid task stores (``exc_height_hist``), from the base.
HEIGHT_EDGES = (EXCURSION_BASE, 6.0, 7.0, 8.0, 10.0, 20.0, 50.0, 100.0, 1000.0, math.inf)



def follow_task(p: dict) -> dict:
    """One ensemble of the SDE followed to its horizon (``kind="follow"``), from the rank-2 minimum (ε = 0.2).

    Keys: ``lr`` (η; T = η/S), ``weight_decay`` (γ), ``n_runs``, ``t_max``, ``rec_dt``, ``seed``, ``m``
    (h_max = η/m), ``rho`` (the step rule's bound); optional ``S`` (batch).

    Returns (JSON-able): :func:`~.experiments.summarize`'s per-run events (``t_jump``, ``t_return``,
    ``collapsed_end``, the time in B₁ and the long-run histograms; ``t_diverged`` is the time a run ended before
    its horizon, at the cap, at a non-finite value or at the budget), plus per run ``event``, ``max_norm``,
    ``n_steps``, ``n_exc`` (excursions above :data:`~.adaptive.EXCURSION_BASE`), ``exc_height_hist`` (every stored
    excursion's height, binned by :data:`HEIGHT_EDGES`), ``frac_time_rank1`` (time in B₁
    by its rank test), ``t_collapse`` (first record with s₁(A) ≤ 10⁻³, NaN if none), and ``exc``: the excursions
    whose height reaches :data:`STORE_FROM` as columns ``run, start, end, height, steps`` (``end`` None while still
    open at the horizon); ``exc_lost`` (excursions beyond the per-run capacity, not stored) and ``seconds``.
    """

    t0 = time.perf_counter()
    lr, weight_decay = check_positive("lr", float(p["lr"])), float(p["weight_decay"])
    n_runs = check_int("n_runs", p["n_runs"], minimum=1)
    m = check_int("m", p["m"], minimum=1)
    problem = epsilon_completion(EXP.eps)
    ad = integrator("follow").run(replicate(_start(weight_decay), n_runs), problem, float(p["t_max"]), lr=lr,
                                  weight_decay=weight_decay, m=m, rho=float(p["rho"]), batch_size=p.get("S", 1),
                                  seed=int(p["seed"]), rec_dt=float(p["rec_dt"]))
    res = ad.result
    out = summarize(res, p["t_max"])
    out["t_diverged"] = _list(np.where(ad.ended_early, ad.t_event, np.nan))
    s1 = res.singular_values[:, :, 0]
    low = np.isfinite(s1) & (s1 <= DEFAULT_RANK_TOL)
    t_rec = np.asarray(res.times, dtype=float)
    out["t_collapse"] = _list(np.where(low.any(axis=1), t_rec[np.argmax(low, axis=1)], np.nan))
    lsv = res.layer_singular_values[:, 1:, :, 1]               # (R, K, L): every layer's s₂, records after the start
    rank_ok = np.max(lsv, axis=-1) <= DEFAULT_B_CRITERION.eps_rank
    out["frac_time_rank1"] = np.mean(rank_ok, axis=1).tolist()
    ex = ad.excursions
    keep = np.isfinite(ex.start) & (ex.height >= STORE_FROM)
    run_idx = np.nonzero(keep)[0]
    out.update({
        "event": list(ad.event), "max_norm": _list(ad.max_norm), "n_steps": ad.n_steps.tolist(),
        "n_exc": ex.n.tolist(), "exc_lost": ex.lost,
        "exc_height_hist": np.histogram(ex.heights(), HEIGHT_EDGES)[0].tolist(), "excursion_base": ex.base,
        "cap_norm": FOLLOW_CAP_NORM,
        "exc": {"run": run_idx.tolist(), "start": _list(ex.start[keep]), "end": _list(ex.end[keep]),
                "height": _list(ex.height[keep]), "steps": ex.steps[keep].tolist()},
        "seconds": time.perf_counter() - t0})
    return out


# ----------------------------------------------------------------------------------------------- statistics
def _cat(results: list[dict], key: str) -> np.ndarray:
    return np.array([np.nan if v is None else v for r in results for v in r[key]], dtype=float)


def _exposure(results: list[dict], horizon: float = math.inf) -> float:
    """Total time followed on [0, horizon] (a run that ended early is followed to its end)."""
    td = _cat(results, "t_diverged")
    t_max = np.concatenate([np.full(r["n_runs"], min(r["t_max"], horizon)) for r in results])
    return float(np.sum(np.where(np.isfinite(td), np.minimum(td, t_max), t_max)))


def _heights(results: list[dict]) -> np.ndarray:
    return np.concatenate([np.asarray(r["exc"]["height"], dtype=float) for r in results]) if results else np.zeros(0)


def _poisson_interval(k: int, alpha: float = 0.05) -> tuple[float, float]:
    """Exact (Garwood) 1 − α interval of a Poisson mean from k events."""
    lo = _stats.chi2.ppf(alpha / 2, 2 * k) / 2 if k > 0 else 0.0
    return float(lo), float(_stats.chi2.ppf(1 - alpha / 2, 2 * k + 2) / 2)


@dataclass(frozen=True)
class SpikeRow:
    """Spikes above one level b, pooled over an ensemble's runs.

    Attributes:
        level: b (‖θ‖).  count: excursions above the base whose height reached b.  exposure: time followed.
        rate: ``(rate, lo, hi)`` per 1000 time units, exact Poisson 95 %.
        rate_x_level: ``(rate·(b − base), lo, hi)``: flat in b where ‖θ‖ is a martingale far out.
        returned: of the ``count`` spikes, how many came back below the base before the horizon.
    """

    level: float
    count: int
    exposure: float
    rate: tuple
    rate_x_level: tuple
    returned: int


def spike_table(results: list[dict], levels=SPIKE_LEVELS, horizon: float = math.inf) -> tuple[SpikeRow, ...]:
    """The spike rate above each level (:class:`SpikeRow`) from :func:`follow_task` results of one setting,
    counting the spikes that start in [0, ``horizon``] against the time followed there (ensembles of different
    horizons compare on a common one).

    Raises:
        ValueError: no results, results with different excursion bases, or an excursion stored beyond capacity
            (``exc_lost`` > 0: the counts would be short).
    """
    if not results:
        raise ValueError("spike_table needs at least one follow_task result")
    bases = {r["excursion_base"] for r in results}
    if len(bases) != 1:
        raise ValueError(f"results with different excursion bases: {sorted(bases)}")
    if any(r["exc_lost"] for r in results):
        raise ValueError("some excursions were beyond the per-run capacity: the spike counts would be short")
    base = bases.pop()
    exposure = _exposure(results, horizon)
    h = _heights(results)
    ends = np.concatenate([np.array([np.nan if v is None else v for v in r["exc"]["end"]], dtype=float)
                           for r in results])
    starts = np.concatenate([np.asarray(r["exc"]["start"], dtype=float) for r in results])
    h = np.where(starts <= horizon, h, -np.inf)
    rows = []
    for b in levels:
        if b < STORE_FROM:
            raise ValueError(f"levels must be ≥ {STORE_FROM} (only those excursions are stored), got {b}")
        hit = h >= b
        k = int(hit.sum())
        lo, hi = _poisson_interval(k)
        scale = 1e3 / exposure
        rate = (k * scale, lo * scale, hi * scale)
        rows.append(SpikeRow(float(b), k, exposure, rate, tuple(x * (b - base) for x in rate),
                             int(np.sum(hit & np.isfinite(ends)))))
    return tuple(rows)


@dataclass(frozen=True)
class SpikeShape:
    """The shape of the spikes whose height reaches a level (in ‖θ‖), pooled: how many, their durations (time
    units from leaving the base to coming back; median and largest), the steps the integrator took in them
    (median and largest) and the largest height."""

    level: float
    count: int
    duration_median: float
    duration_max: float
    steps_median: float
    steps_max: int
    height_max: float


def spike_shapes(results: list[dict], levels=SPIKE_LEVELS) -> tuple[SpikeShape, ...]:
    """Durations and step counts of the closed spikes reaching each level (a level no spike reached is left out)."""
    ex = [r["exc"] for r in results]
    h = np.concatenate([np.asarray(e["height"], dtype=float) for e in ex])
    st = np.concatenate([np.array([np.nan if v is None else v for v in e["start"]], dtype=float) for e in ex])
    en = np.concatenate([np.array([np.nan if v is None else v for v in e["end"]], dtype=float) for e in ex])
    steps = np.concatenate([np.asarray(e["steps"], dtype=np.int64) for e in ex])
    out = []
    for b in levels:
        sel = (h >= b) & np.isfinite(en)
        if not sel.any():
            continue
        d = en[sel] - st[sel]
        out.append(SpikeShape(float(b), int(sel.sum()), float(np.median(d)), float(d.max()),
                              float(np.median(steps[sel])), int(steps[sel].max()), float(h[sel].max())))
    return tuple(out)


@dataclass(frozen=True)
class FollowSummary:
    """One setting's followed ensemble, pooled over its tasks.

    Attributes:
        n_runs: runs.  events: ``{event name: runs}`` (``"none"``: reached the horizon).
        jumped: runs that reached rank ≤ 1 (s₂(A) ≤ 10⁻³).  wait: mean first time there ``(mean, lo, hi)``
            (censored exponential, exact 95 %).  returned: runs back at s₂(A) ≥ 0.1 after a jump.
        collapsed: runs that reached A = 0 (s₁(A) ≤ 10⁻³) at some record; t_collapse: their first such times,
            sorted.  collapsed_end: runs at A = 0 at the end.
        frac_rank1: time in B₁ by its rank test, ``(mean, se)`` across runs.  frac_B1: by the full criterion
            (rank, balance and norm tests).
        n_excursions: excursions above the base.  max_norm: the largest ‖θ‖ of any run.  steps: integrator steps,
            all runs.  seconds: the tasks' compute time.
    """

    n_runs: int
    events: dict
    jumped: int
    wait: tuple
    returned: int
    collapsed: int
    t_collapse: tuple
    collapsed_end: int
    frac_rank1: tuple
    frac_B1: tuple
    n_excursions: int
    max_norm: float
    steps: int
    seconds: float


def follow_summary(results: list[dict]) -> FollowSummary:
    """Pool :func:`follow_task` results (e.g. two seeds) of one setting."""
    if not results:
        raise ValueError("follow_summary needs at least one follow_task result")
    tj, td, tc = _cat(results, "t_jump"), _cat(results, "t_diverged"), _cat(results, "t_collapse")
    t_max = np.concatenate([np.full(r["n_runs"], r["t_max"]) for r in results])
    end = np.where(np.isfinite(td), np.minimum(td, t_max), t_max)
    w = censored_exponential(tj, end)
    events: dict = {}
    for r in results:
        for e in r["event"]:
            events[e] = events.get(e, 0) + 1
    return FollowSummary(
        n_runs=int(tj.size), events=events, jumped=int(np.isfinite(tj).sum()), wait=(w["mean"], w["lo"], w["hi"]),
        returned=int(np.isfinite(_cat(results, "t_return")).sum()), collapsed=int(np.isfinite(tc).sum()),
        t_collapse=tuple(float(x) for x in np.sort(tc[np.isfinite(tc)])),
        collapsed_end=int(sum(sum(r["collapsed_end"]) for r in results)),
        frac_rank1=mean_se(_cat(results, "frac_time_rank1")), frac_B1=mean_se(_cat(results, "frac_time_B1")),
        n_excursions=int(sum(sum(r["n_exc"]) for r in results)), max_norm=float(np.nanmax(_cat(results, "max_norm"))),
        steps=int(sum(sum(r["n_steps"]) for r in results)), seconds=float(sum(r["seconds"] for r in results)))


# ----------------------------------------------------------------------------------------------- the grid's report
def follow_results(grid) -> dict:
    """The grid's ``follow`` results grouped ``(η, γ, m, ρ, t_max, fresh) → [result, ...]`` (``fresh``: the seeds
    are :data:`~.experiments.FOLLOW_FRESH_SEEDS`), in the grid's order; empty if the grid has none."""
    groups: dict = {}
    for t in grid.tasks:
        if t["kind"] == "follow":
            p = t["params"]
            key = (p["lr"], p["weight_decay"], p["m"], p["rho"], p["t_max"], p["seed"] in FOLLOW_FRESH_SEEDS)
            groups.setdefault(key, []).append(t["result"])
    return groups


@dataclass(frozen=True)
class FollowGroup:
    """One followed ensemble of the grid: its settings, :class:`FollowSummary`, :func:`spike_table` and
    :func:`spike_shapes`, the spike table on the common horizon ``HAZARD_HORIZON`` (for comparing accuracies), and
    :func:`fit_passage` of its closed spikes (None with fewer than 10 spikes above 10) and their heights."""

    lr: float
    weight_decay: float
    m: int
    rho: float
    t_max: float
    fresh: bool
    summary: FollowSummary
    spikes: tuple
    shapes: tuple
    spikes_short: tuple
    passage: object = None
    passage_heights: tuple = ()

    @property
    def label(self) -> str:
        return f"η = {self.lr:g}, γ = {self.weight_decay:g}: {follow_label(self.m, self.rho, self.t_max, self.fresh)}"


def follow_groups(grid) -> tuple[FollowGroup, ...]:
    """Every followed ensemble of the grid (:class:`FollowGroup`), in the grid's order."""
    from .blowup import HAZARD_HORIZON

    groups = follow_results(grid)
    if not groups:
        raise ValueError("the grid has no follow tasks (python -m symsgd_core sweep sde05)")
    out = []
    for key, res in groups.items():
        closed = np.concatenate([[h for h, e in zip(r["exc"]["height"], r["exc"]["end"]) if e is not None]
                                 for r in res])
        fit = fit_passage(closed) if np.sum(closed >= STORE_FROM) >= 10 else None
        out.append(FollowGroup(*key, follow_summary(res), spike_table(res), spike_shapes(res),
                               spike_table(res, horizon=HAZARD_HORIZON), fit, tuple(closed.tolist())))
    return tuple(out)


def _interval(x: tuple, fmt: str = ".3g") -> str:
    return f"{x[0]:{fmt}} [{x[1]:{fmt}}, {x[2]:{fmt}}]"


def follow_report_lines(groups) -> list[str]:
    """The followed ensembles as text: what became of every path, then the spike table (rate per 1000 time units
    above each level with its exact 95 % interval, and rate × (b − base)), then the spikes' shapes."""
    lines = ["Every path followed to its horizon: how the runs ended, jumps, returns to rank 2, collapses to A = 0, "
             "time in B₁ (rank test; full test)"]
    for g in groups:
        s = g.summary
        ended = ", ".join(f"{k} {v}" for k, v in sorted(s.events.items()))
        coll = (f"{s.collapsed} (at t = {', '.join(f'{t:.0f}' for t in s.t_collapse)})" if s.collapsed else "0")
        lines.append(f"  {g.label}: {s.n_runs} runs ({ended}); jumped {s.jumped}, mean first time "
                     f"{_interval(s.wait, '.0f')}; returned {s.returned}; collapsed {coll}; time in B₁ "
                     f"{s.frac_rank1[0]:.2f} ± {s.frac_rank1[1]:.2f} (rank test), {s.frac_B1[0]:.2f} (full); "
                     f"largest ‖θ‖ {s.max_norm:.3g}")
    lines += ["", "Spikes: excursions from ‖θ‖ < 5 that reach ‖θ‖ ≥ b, per 1000 time units [exact 95 %], and "
              "rate × (b − 5) (flat if ‖θ‖ is a martingale far out)"]
    for g in groups:
        cells = "; ".join(f"b = {r.level:g}: {r.count} → {_interval(r.rate)}, ×(b − 5) {r.rate_x_level[0]:.3g}"
                          for r in g.spikes)
        lines.append(f"  {g.label}: {cells}")
    lines += ["", "Spike shapes (closed spikes reaching b): how many, duration median / largest (time units), "
              "integrator steps median / largest"]
    for g in groups:
        cells = "; ".join(f"b = {s.level:g}: {s.count}, {s.duration_median:.2g} / {s.duration_max:.2g}, "
                          f"{s.steps_median:.0f} / {s.steps_max}" for s in g.shapes)
        lines.append(f"  {g.label}: {cells or 'none'}")
    return lines


# ----------------------------------------------------------------------------------------------- passage law
@dataclass(frozen=True)
class PassageFit:
    """The law of the spikes' heights from level ``s0`` (excursions above the base ``a`` that reached ``s0``):
    ``P(height ≥ b | ≥ s0) = (s0^β − a^β)/(b^β − a^β)``, the first passage of a diffusion with scale function
    ``p(s) = s^β`` (β = 1: ‖θ‖ a local martingale; :mod:`.explosion`'s β = 1 − f_eff for the transverse share f).

    Attributes:
        s0, a: the levels.  n: spikes that reached s0.  beta: the maximum-likelihood β with its 95 % profile-
        likelihood interval ``(beta, lo, hi)``.  levels, counts: how many reached each level b (of the n).
    """

    s0: float
    a: float
    n: int
    beta: tuple
    levels: tuple
    counts: tuple

    def predicted(self, b: float, beta: float) -> float:
        """``P(height ≥ b | ≥ s0)`` for the scale exponent ``beta`` (:func:`~.explosion.power_passage`)."""
        return power_passage(self.s0, self.a, b, beta)


def fit_passage(heights, s0: float = SPIKE_LEVELS[0], a: float = EXCURSION_BASE, levels=SPIKE_LEVELS[1:],
                beta_range: tuple = (0.02, 4.0)) -> PassageFit:
    """Fit β of :class:`PassageFit` to the closed spikes' ``heights`` (every excursion's largest ‖θ‖; those below
    ``s0`` are left out) by maximum likelihood, with its 95 % profile-likelihood interval (χ²₁: 3.84).

    Raises:
        ValueError: fewer than 10 spikes reached ``s0`` (nothing to fit), or the maximum at an end of
            ``beta_range`` (the data do not pin β down there).
    """
    from scipy.optimize import brentq, minimize_scalar

    h = np.asarray(heights, dtype=float)
    h = h[np.isfinite(h) & (h >= s0)]
    if h.size < 10:
        raise ValueError(f"only {h.size} spikes reached s0 = {s0}: too few to fit the passage law")

    def nll(beta):   # density of the height: −dP(H ≥ h)/dh = (s0^β − a^β) β h^{β−1} / (h^β − a^β)²
        return -float(np.sum(np.log(s0 ** beta - a ** beta) + np.log(beta) + (beta - 1) * np.log(h)
                             - 2 * np.log(h ** beta - a ** beta)))

    lo, hi = beta_range
    best = minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    b_hat = float(best.x)
    if min(b_hat - lo, hi - b_hat) < 1e-3:
        raise ValueError(f"the fitted β = {b_hat:.3g} is at an end of {beta_range}: the data do not pin it down")
    cut = best.fun + 0.5 * float(_stats.chi2.ppf(0.95, 1))
    ci_lo = brentq(lambda x: nll(x) - cut, lo, b_hat) if nll(lo) > cut else lo
    ci_hi = brentq(lambda x: nll(x) - cut, b_hat, hi) if nll(hi) > cut else hi
    counts = tuple(int(np.sum(h >= b)) for b in levels)
    return PassageFit(float(s0), float(a), int(h.size), (b_hat, float(ci_lo), float(ci_hi)), tuple(levels), counts)
