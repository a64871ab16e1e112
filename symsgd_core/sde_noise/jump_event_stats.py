"""The jump event's predicted waiting time against SGD's measured one, with intervals (Notebook 05 §4).

The k* model (:mod:`.jump_event`) predicts a mean wait ``E`` (SGD steps) for the first jump; the stored grid
measures SGD's wait from R runs of n steps each. This module (this project's construction) compares the two in both
directions:

* :func:`median_kstar`, :func:`median_interval` — the k* of a cell (median over forced sequences) and a
  distribution-free interval for it (order statistics), from which a band of predictions follows;
* :func:`expected_jumps` — how many jumps the prediction expects in the budget;
* :func:`poisson_two_sided_p` — the exact two-sided Poisson test of the number of jumps seen against the number
  the prediction expects in the measured time at risk;
* :func:`compare_wait` — one cell: the measured wait with its exact 95 % interval (censored exponential), the
  verdict ("agree" / "over-predicted" / "under-predicted") and, given a factor F stated as the claim, whether
  the measured interval lies within F of the prediction (True), outside it (False) or straddles it (None);
* :func:`grid_wait_comparisons` — every (η, γ) cell of a stored grid (:func:`~.experiments.load_grid`);
* :func:`kstar_rule_summary` — how the two k* rules of :func:`~.jump_event.kstar_from_success` differ on
  :func:`~.jump_event.kstar_task` results;
* :func:`cell_kstar`, :func:`sample_route_counts` — a cell's k* for any route, and the routes read off SGD's own
  samples before each jump (against control windows), from the stored grid when it holds them, else recomputed
  live with the grid's parameters (the same runs, bit for bit).

Units: waits, exposures and budgets are SGD steps; rates are per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.stats import censored_exponential, event_times
from ..core.validation import check_in_range, check_int, check_positive
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from .jump_event import (
    AMBIGUOUS,
    NO_ROUTE,
    classify_route,
    kstar_task,
    run_waiting_time,
    two_route_waiting_time,
    waiting_task,
)

__all__ = ["KSTAR_DEFAULTS", "VERDICTS", "WaitComparison", "cell_kstar", "compare_wait", "expected_jumps",
           "grid_wait_comparisons", "kstar_rule_summary", "median_interval", "median_kstar", "poisson_two_sided_p",
           "predicted_wait", "sample_route_counts"]

#: The stored grid's k* settings (``sde05``), used when a cell's k* is recomputed live.
KSTAR_DEFAULTS = {"n_seq": 12, "k_grid": list(range(2, 101)) + list(range(105, 301, 5)), "seed": 5}
#: The verdicts of :func:`compare_wait`: the prediction lies inside the measured interval; it predicts more (or
#: faster) jumps than measured — its wait is below the interval; it predicts fewer — its wait is above.
VERDICTS = ("agree", "over-predicted", "under-predicted")


def median_kstar(kstars) -> int:
    """The k* of a cell: ``floor`` of the median over the forced sequences (the notebook's ``int(np.median)``;
    for an even count the median is the mean of the two middle values), −1 if any sequence never succeeded."""
    ks = np.asarray(kstars)
    if ks.size == 0:
        raise ValueError("kstars must not be empty")
    return int(np.median(ks)) if np.all(ks > 0) else -1


def median_interval(values, level: float = 0.95) -> tuple[float, float, float, float]:
    """A distribution-free interval for the median of n values: ``(median, lo, hi, coverage)``.

    With the values sorted, ``[x_(j), x_(n+1−j)]`` covers the true median with probability
    ``1 − 2·P(Bin(n, ½) ≤ j − 1)`` for any continuous law (ties only widen it); j is the largest index whose
    coverage is ≥ ``level`` (n = 12, level 0.95: j = 3, coverage 0.961). If even j = 1 falls short (n ≤ 5 at
    95 %) the range ``[x_(1), x_(n)]`` is returned with its smaller coverage.
    """
    from scipy.stats import binom

    level = check_in_range("level", level, 0.0, 1.0, closed=False)
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n == 0:
        raise ValueError("values must not be empty")
    cover = 1.0 - 2.0 * binom.cdf(np.arange(max(n // 2, 1)), n, 0.5)  # cover[j − 1]: coverage of [x_(j), x_(n+1−j)]
    if n == 1:
        cover = np.zeros(1)
    ok = np.flatnonzero(cover >= level)
    j = int(ok.max()) + 1 if ok.size else 1
    return float(np.median(x)), float(x[j - 1]), float(x[n - j]), float(cover[j - 1])


def predicted_wait(k_row: int, k_col: int, p: float = 2 / 3) -> float:
    """The model's mean wait (steps) on the ε-completion: the exact two-route wait if both routes have a k*
    (:func:`~.jump_event.two_route_waiting_time`, p = 2/3 built in), one route's ``E_k`` (probability ``p``) if
    only one has, ``inf`` if neither (k* = −1: never)."""
    if k_row > 0 and k_col > 0:
        return two_route_waiting_time(int(k_row), int(k_col))
    k = max(int(k_row), int(k_col))
    return run_waiting_time(k, p) if k > 0 else float("inf")


def expected_jumps(predicted: float, n_runs: int, n_steps: int) -> dict:
    """What a predicted mean wait ``predicted`` (steps) expects of R runs of n steps each.

    Returns dict ``runs`` — the expected number of runs that jump, ``R·(1 − exp(−n/E))`` (an exponential wait of
    mean E: the first run of k successes has a geometric tail, close to exponential once E ≫ k) — and ``events``
    — the expected number of jumps at the predicted rate in R·n steps, ``R·n/E`` (as if each run went on after a
    jump: the count a Poisson test uses).
    """
    R, n = check_int("n_runs", n_runs, minimum=1), check_int("n_steps", n_steps, minimum=1)
    E = check_positive("predicted", predicted) if math.isfinite(predicted) else float("inf")
    if math.isinf(E):
        return {"runs": 0.0, "events": 0.0}
    return {"runs": R * -math.expm1(-n / E), "events": R * n / E}


def poisson_two_sided_p(observed: int, expected: float) -> float:
    """Exact two-sided Poisson p-value of ``observed`` events when ``expected`` are predicted:
    ``min(1, 2·min(P(X ≤ d), P(X ≥ d)))``, X ~ Poisson(expected) (equal tails: it rejects at 5 % exactly when the
    exact 95 % rate interval of :func:`~symsgd_core.core.stats.censored_exponential` excludes the prediction)."""
    from scipy.stats import poisson

    d = check_int("observed", observed, minimum=0)
    mu = float(expected)
    if not mu >= 0:
        raise ValueError(f"expected must be >= 0, got {expected!r}")
    if mu == 0.0:
        return 1.0 if d == 0 else 0.0
    return float(min(1.0, 2.0 * min(poisson.cdf(d, mu), poisson.sf(d - 1, mu))))


@dataclass(frozen=True)
class WaitComparison:
    """Measured against predicted at one (η, γ) cell (steps).

    Attributes:
        lr, weight_decay: η and γ (NaN if not given).
        predicted: the model's mean wait E.  predicted_band: ``(fast, slow)`` — E at the ends of the k* intervals
            (:func:`median_interval`), ``(E, E)`` if not given.
        measured: ``(mean, lo, hi)`` the censored-exponential mean wait with its exact ``1 − alpha`` interval
            (``mean = hi = inf`` without a jump).
        jumped, n_runs, n_steps: runs that jumped, runs, budget per run.  exposure: steps at risk (Σ min(jump, n)).
        expected_runs, expected_events: :func:`expected_jumps` of the prediction (events: in R·n steps).
        p_value: :func:`poisson_two_sided_p` of ``jumped`` against ``exposure / E``.
        verdict: :data:`VERDICTS` for the point prediction; verdict_band: the same for the band (``"agree"`` if
            the band meets the interval).
        factor: the stated factor F (None: no claim); within_factor: True if the measured interval lies inside
            ``[E/F, E·F]``, False if it lies outside, None if it straddles an end (or no claim).
        ratio: ``(mean, lo, hi)`` of measured / predicted.
    """

    lr: float
    weight_decay: float
    predicted: float
    predicted_band: tuple
    measured: tuple
    jumped: int
    n_runs: int
    n_steps: int
    exposure: float
    expected_runs: float
    expected_events: float
    p_value: float
    verdict: str
    verdict_band: str
    factor: float | None
    within_factor: bool | None
    ratio: tuple


def _verdict(fast: float, slow: float, lo: float, hi: float) -> str:
    if slow < lo:
        return "over-predicted"
    if fast > hi:
        return "under-predicted"
    return "agree"


def compare_wait(jump_steps, n_steps: int, predicted: float, *, predicted_band=None, factor: float | None = None,
                 alpha: float = 0.05, lr: float = float("nan"), weight_decay: float = float("nan")) -> WaitComparison:
    """Compare SGD's measured first-jump times with a predicted mean wait, in both directions.

    Args:
        jump_steps: per run, the step of the first jump, or a negative number / NaN / None (no jump in the
            budget; such a run is at risk for all ``n_steps``).
        n_steps: the budget per run (steps).
        predicted: the model's mean wait E (steps; ``inf``: never).
        predicted_band: optional ``(fast, slow)`` range of E (e.g. from the k* intervals).
        factor: the factor F of an order-of-magnitude claim, stated before looking (None: no claim).
        alpha: 1 − the interval's level.

    Returns:
        :class:`WaitComparison`. The measured interval is exact for an exponential wait (the chi-square / Garwood
        interval of the rate D/T with D jumps in T steps at risk, inverted).
    """
    n = check_int("n_steps", n_steps, minimum=1)
    alpha = check_in_range("alpha", alpha, 0.0, 1.0, closed=False)
    js = event_times(jump_steps).ravel()
    if js.size == 0:
        raise ValueError("jump_steps must hold at least one run")
    if np.any(js > n):
        raise ValueError("a jump step exceeds n_steps")
    w = censored_exponential(js, float(n), alpha=alpha)
    E = float(predicted)
    if not E > 0:
        raise ValueError(f"predicted must be > 0 (inf: never), got {predicted!r}")
    fast, slow = (E, E) if predicted_band is None else (float(predicted_band[0]), float(predicted_band[1]))
    if not 0 < fast <= slow:
        raise ValueError(f"predicted_band must be (fast, slow) with 0 < fast <= slow, got {predicted_band!r}")
    lo, hi = float(w["lo"]), float(w["hi"])
    within = None
    if factor is not None:
        F = check_positive("factor", factor)
        if F < 1:
            raise ValueError(f"factor must be >= 1, got {factor}")
        a, b = E / F, E * F
        within = True if (a <= lo and hi <= b) else (False if (hi < a or lo > b) else None)
    exp_j = expected_jumps(E, js.size, n)
    mu = w["exposure"] / E if math.isfinite(E) else 0.0
    ratio = tuple(float(x) / E if math.isfinite(E) else float("nan") for x in (w["mean"], lo, hi))
    return WaitComparison(float(lr), float(weight_decay), E, (fast, slow), (float(w["mean"]), lo, hi), int(w["events"]),
                          int(js.size), n, float(w["exposure"]), exp_j["runs"], exp_j["events"],
                          poisson_two_sided_p(int(w["events"]), mu), _verdict(E, E, lo, hi),
                          _verdict(fast, slow, lo, hi), None if factor is None else float(factor), within, ratio)


def grid_wait_comparisons(grid, *, factor: float | None = None, kstar_key: str = "kstar", level: float = 0.95,
                          alpha: float = 0.05) -> tuple[WaitComparison, ...]:
    """:func:`compare_wait` for every ε-completion (η, γ) cell of a stored grid, sorted by (η, γ).

    The prediction is :func:`predicted_wait` of the cell's median k* per route (``kstar_key`` of the kstar
    results: ``"kstar"`` as stored, or ``"kstar_first"`` / ``"kstar_stable"`` when present); the band uses the
    ends of the :func:`median_interval` of each route's k* (``level``): ``fast`` = E(lower ends),
    ``slow`` = E(upper ends). The measured wait is the cell's waiting task (R runs × n steps), its interval at
    level ``1 − alpha``.
    """
    out = []
    for t in grid.tasks:
        if t["kind"] != "waiting" or t["params"].get("problem", "eps") != "eps":
            continue
        lr, weight_decay = t["params"]["lr"], t["params"]["weight_decay"]
        ks = {r: grid.select("kstar", lr=lr, weight_decay=weight_decay, route=r)[0][kstar_key]
              for r in ("row0", "col1")}
        kr, kc = median_kstar(ks["row0"]), median_kstar(ks["col1"])
        E = predicted_wait(kr, kc)
        if kr > 0 and kc > 0:
            ir, ic = median_interval(ks["row0"], level), median_interval(ks["col1"], level)
            band = (predicted_wait(int(ir[1]), int(ic[1])), predicted_wait(int(math.ceil(ir[2])),
                                                                           int(math.ceil(ic[2]))))
        else:
            band = None
        res = t["result"]
        out.append(compare_wait(res["jump_step"], int(res["n_steps"]), E, predicted_band=band, factor=factor,
                                alpha=alpha, lr=lr, weight_decay=weight_decay))
    return tuple(sorted(out, key=lambda c: (c.lr, c.weight_decay)))


def kstar_rule_summary(results) -> dict:
    """How often k* depends on the rule, over :func:`~.jump_event.kstar_task` results that carry both
    ``kstar_first`` and ``kstar_stable``.

    Returns dict ``sequences`` (total), ``non_monotone`` (sequences whose first success is followed by a failure),
    ``largest_shift`` (max of stable − first over them, steps), ``median_changed`` (tasks whose
    :func:`median_kstar` differs between the rules), ``tasks``.
    """
    seqs = non = shift = changed = 0
    results = list(results)
    for r in results:
        f, s = np.asarray(r["kstar_first"]), np.asarray(r["kstar_stable"])
        seqs += f.size
        diff = f != s
        non += int(diff.sum())
        if diff.any():
            both = diff & (f > 0) & (s > 0)
            shift = max(shift, int((s[both] - f[both]).max()) if both.any() else shift)
        changed += int(median_kstar(f) != median_kstar(s))
    return {"sequences": seqs, "non_monotone": non, "largest_shift": shift, "median_changed": changed,
            "tasks": len(results)}


def cell_kstar(grid, route: str, *, problem: str = "eps", lr: float = EXP.lr_hot,
               weight_decay: float = EXP.weight_decay_hot, key: str = "kstar") -> tuple[int, list, bool]:
    """A cell's k* for ``route``: ``(median k*, per-sequence k*, from_grid)``.

    From the grid's kstar task when it has one for (problem, η, γ, route) holding ``key``; otherwise
    :func:`~.jump_event.kstar_task` runs live (a few CPU seconds) — with the stored task's parameters if there is
    one (its stored k* must be reproduced, else RuntimeError), else with :data:`KSTAR_DEFAULTS` — so e.g.
    ``"avoid01"`` or ``"kstar_stable"`` can be read before the grid holds them.
    ``key``: ``"kstar"``, ``"kstar_first"`` or ``"kstar_stable"``.
    """
    found = [t for t in grid.tasks if t["kind"] == "kstar" and t["params"].get("problem", "eps") == problem
             and t["params"]["lr"] == lr and t["params"]["weight_decay"] == weight_decay
             and t["params"]["route"] == route]
    if found and key in found[0]["result"]:
        return median_kstar(found[0]["result"][key]), list(found[0]["result"][key]), True
    params = found[0]["params"] if found else {"lr": lr, "weight_decay": weight_decay, "route": route, **KSTAR_DEFAULTS}
    live = kstar_task({**params, "problem": problem})
    if found and live["kstar_first"] != list(found[0]["result"]["kstar"]):
        raise RuntimeError(f"the live k* of {route!r} at ({lr}, {weight_decay}) does not reproduce the stored one")
    return median_kstar(live[key]), list(live[key]), False


def sample_route_counts(grid, problem: str = "eps", lr: float = EXP.lr_hot,
                        weight_decay: float = EXP.weight_decay_hot) -> dict:
    """The routes read off SGD's samples before each jump (:func:`~.jump_event.classify_route` at the cell's
    median k*), and the same over control windows, for the cell's waiting task (``problem="staircase"``: the
    staircase task).

    Uses the stored ``route_runs`` / ``control_runs`` when the grid has them; otherwise re-runs the task with
    ``samples=True`` (the same runs to the last bit; checked: the jump steps must equal the stored ones).

    Returns dict ``routes``, ``kstar`` ``{route: k*}``, ``pre`` and ``control`` (``{label: count}``, labels: the
    routes, ``"none"``, ``"ambiguous"``), ``n_pre``, ``n_control``, ``with_run`` ``(pre, control)`` — windows
    with some route's run ≥ k*, ``fisher_p`` — two-sided Fisher exact test of those two proportions,
    ``from_grid``.
    """
    from scipy.stats import fisher_exact

    if problem == "staircase":
        task = next(t for t in grid.tasks if t["kind"] == "staircase")
    else:
        task = next(t for t in grid.tasks if t["kind"] == "waiting" and t["params"].get("problem", "eps") == problem
                    and t["params"]["lr"] == lr and t["params"]["weight_decay"] == weight_decay)
    res, from_grid = task["result"], "route_runs" in task["result"]
    if not from_grid:
        live = waiting_task({**task["params"], "problem": problem, "samples": True})
        if live["jump_step"] != res["jump_step"]:
            raise RuntimeError("the live re-run does not reproduce the stored jump steps")
        res = live
    routes = tuple(res["run_routes"])
    p_lr, p_weight_decay = task["params"]["lr"], task["params"]["weight_decay"]
    kst = {r: median_kstar(grid.select("kstar", problem=problem, lr=p_lr, weight_decay=p_weight_decay,
                                       route=r)[0]["kstar"])
           for r in routes}
    pre = [x for x in res["route_runs"] if x is not None]
    ctl = [x for x in res["control_runs"] if x is not None]
    lp = classify_route(np.array(pre), routes, kst) if pre else []
    lc = classify_route(np.array(ctl), routes, kst) if ctl else []
    labels = (*routes, NO_ROUTE, AMBIGUOUS)
    wp, wc = sum(x != NO_ROUTE for x in lp), sum(x != NO_ROUTE for x in lc)
    fp = float(fisher_exact([[wp, len(lp) - wp], [wc, len(lc) - wc]]).pvalue) if lp and lc else float("nan")
    return {"routes": routes, "kstar": kst, "pre": {x: lp.count(x) for x in labels},
            "control": {x: lc.count(x) for x in labels}, "n_pre": len(lp), "n_control": len(lc),
            "with_run": (wp, wc), "fisher_p": fp, "from_grid": from_grid}
