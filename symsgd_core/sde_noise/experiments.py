"""Notebook 05's experiments: SGD vs its SDE vs Langevin from one rank-2 minimum, the jump event, the shipped grid.

Sweep tasks (``*_task(p: dict) -> dict``, JSON in and out, every seed inside ``p``; run by
:func:`symsgd_core.core.sweep.run_sweep` serially, on local processes or on a Dask cluster):

* :func:`dynamics_task` — one ensemble of one dynamics (SGD, Gaussian SGD, SDE at dt = η/m, ±1 noise, Langevin)
  from the rank-2 GD minimum of the ε-completion, summarised per run (:func:`summarize`);
* :func:`langevin_eps_task` — Langevin (or SGD) at a given ε from the rank-1 or the rank-2 minimum;
* the jump-event tasks of :mod:`.jump_event` (k*, waiting times, the staircase).

:data:`GRIDS` names the shipped sweeps; ``python -m symsgd_core sweep sde05`` runs one and writes
``symsgd_core/data_files/sde05_grid.json``, which :func:`load_grid` reads. The notebook's figures call the
frozen-dataclass experiments :func:`compare_point` (one (η, γ) live), :func:`comparison_rows`,
:func:`kstar_rows`, :func:`staircase_summary` and :func:`langevin_eps_rows` (from the grid).

Events (read from records every ``rec_dt`` time units; t = η·steps for SGD, dt·steps for the SDE):

* *jump* — the first record with s₂(A) ≤ :data:`~symsgd_core.dln.network.DEFAULT_RANK_TOL` (1e-3);
* *return* — after the jump, a later record with s₂(A) ≥ :data:`RETURN_LEVEL` (0.1, a third of the rank-2
  minimum's s₂ ≈ 0.33: noise around the threshold is not a return);
* *in B_1* — :data:`~symsgd_core.dln.network.DEFAULT_B_CRITERION`; a diverged run is outside B_1 from then on;
* *diverged* — the engine's rule (a residual above 10⁶); for the adaptive-step SDE (``method="sde_adaptive"``,
  :mod:`.adaptive`) also a *stall* (the step the path needs falls below 10⁻¹²).
* *rank-1 fit* — s₁(A) > :data:`~symsgd_core.dln.network.DEFAULT_RANK_TOL`: the long-run s₂ is also reported
  over these records only (``log10_s2_hist_fit``), so a run collapsed to A = 0 (s₂ = 0) is not counted as rank 1.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from ..core.results import Outcome
from ..core.stats import censored_exponential, event_times, mean_se, wilson
from ..dln import (
    DEFAULT_RANK_TOL,
    RunResult,
    epsilon_completion,
    loss,
    matched_langevin_temperature,
    numerical_rank,
    replicate,
    singular_values,
)
from ..dln.integrators import EulerMaruyama, GaussianSGD, Langevin, integrator
from ..rank_jumps.analysis import rank_transitions
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from ..rank_jumps.experiments import LANGEVIN_RANK_TOL, rank_one_minimum, start_minimum
from .blowup import ADAPTIVE_LEVELS, HAZARD_HORIZON, continuation_task, hazard_rows
from .ensembles import (  # noqa: F401  (this module's names, defined once there)
    FOLLOW_FRESH_SEEDS,
    FOLLOW_SEEDS,
    HOT,
    LOG_S2_BINS,
    RETURN_LEVEL,
    _list,
    _start,
    follow_label,
    simulate,
    simulate_adaptive,
    summarize,
)
from .explosion import INFINITY_TASK, infinity_task
from .jump_event import (
    kstar_task,
    route_probability,
    run_waiting_time,
    staircase_task,
    two_route_waiting_time,
    waiting_task,
)
from .jump_event_stats import grid_wait_comparisons, median_kstar
from .spikes import follow_results, follow_task

__all__ = ["COMPARE_OUTCOMES", "COOLER_STEP", "DYNAMICS", "FOLLOW_FRESH_SEEDS", "FOLLOW_LEVELS", "FOLLOW_SEEDS",
           "GRIDS", "HOT", "RANK2_LOWER",
           "RETURN_LEVEL", "SETTINGS", "WEAKER_DECAY", "compare_outcome", "compare_point", "ComparePoint",
           "comparison_rows",
           "ComparisonRow", "dynamics_task", "EnsembleSummary", "follow_label", "follow_tasks", "grid_tasks",
           "kstar_grid", "kstar_rows", "KStarRow", "langevin_eps_rows", "langevin_eps_task", "LangevinEpsRow",
           "load_grid", "rank2_lower_tasks", "SdeGrid", "staircase_summary", "StaircaseSummary", "summarize",
           "summarize_runs", "write_grid",
           "setting_label", "GridView", "grid_view", "BlowupView", "blowup_view", "JumpEventView", "jump_event_view",
           "JUMP_ROUTES"]

#: §3's other two settings: a smaller step at the hot γ, and a weaker weight decay at the hot η.
COOLER_STEP = (0.2, EXP.weight_decay_hot)
WEAKER_DECAY = (EXP.lr_hot, 0.02)
#: §3's three settings (η, γ), in the order the notebook shows them.
SETTINGS = (HOT, COOLER_STEP, WEAKER_DECAY)
#: Dynamics of :func:`dynamics_task` (``p["method"]``).
DYNAMICS = ("sgd", "gaussian_sgd", "sde", "langevin", "sde_adaptive")


def dynamics_task(p: dict) -> dict:
    """One ensemble of one dynamics from the rank-2 minimum of the ε-completion (ε = 0.2), summarised.

    Keys: ``method`` (:data:`DYNAMICS`), ``lr``, ``weight_decay``, ``n_runs``, ``t_max``, ``rec_dt``, ``seed``; optional
    ``m`` (dt = η/m; the largest step of ``"sde_adaptive"``), ``rho`` (``"sde_adaptive"``'s bound), ``S``
    (batch), ``increments``, ``temp_factor`` (Langevin: τ = temp_factor · τ_match, the matched temperature of SGD
    at (η, S) at the start, :func:`~symsgd_core.dln.noise.matched_langevin_temperature`).
    ``"sde_adaptive"`` adds per run ``event``, ``t_escape`` (first ‖θ‖ ≥ 10), ``max_norm``, ``n_steps``,
    ``n_reduced``; its ``t_diverged`` is the exact time of a residual blow-up or a stall.
    """
    t0 = time.perf_counter()
    lr, weight_decay = float(p["lr"]), float(p["weight_decay"])
    problem = epsilon_completion(EXP.eps)
    base = _start(weight_decay)
    integ = integrator(p["method"], p.get("increments"))
    if integ.adaptive:
        ad = simulate_adaptive(replicate(base, p["n_runs"]), problem, lr=lr, weight_decay=weight_decay,
                               t_max=p["t_max"], rec_dt=p["rec_dt"], seed=p["seed"], m=p["m"], rho=p["rho"],
                               batch_size=p.get("S", 1))
        out = summarize(ad.result, p["t_max"])
        out["t_diverged"] = _list(np.where(ad.blew_up, ad.t_event, np.nan))
        return {**out, "event": list(ad.event), "t_escape": _list(ad.t_escape), "max_norm": _list(ad.max_norm),
                "n_steps": ad.n_steps.tolist(), "n_reduced": ad.n_reduced.tolist(),
                "seconds": time.perf_counter() - t0}
    tau = 0.0
    if isinstance(integ, Langevin):
        tau = float(p["temp_factor"]) * float(matched_langevin_temperature(base, problem, lr, weight_decay,
                                                                           batch_size=p.get("S", 1))[0])
    res = simulate(p["method"], replicate(base, p["n_runs"]), problem, lr=lr, weight_decay=weight_decay,
                   t_max=p["t_max"], rec_dt=p["rec_dt"], seed=p["seed"], m=p.get("m", 1), batch_size=p.get("S", 1),
                   tau=tau, increments=p.get("increments", "gaussian"))
    return {**summarize(res, p["t_max"]), "tau": tau, "seconds": time.perf_counter() - t0}


def langevin_eps_task(p: dict) -> dict:
    """Langevin (or SGD) at a given ε from its rank-1 or rank-2 minimum: the fraction of time at rank ≤ 1.

    Keys: ``eps, lr, weight_decay, tau, n_runs, t_max, rec_dt, seed, start`` (``"rank1"`` | ``"rank2"``), ``method``
    (``"langevin"`` | ``"sgd"``). Rank uses Langevin's threshold
    :data:`~symsgd_core.rank_jumps.experiments.LANGEVIN_RANK_TOL`.
    """
    t0 = time.perf_counter()
    eps, lr, weight_decay = float(p["eps"]), float(p["lr"]), float(p["weight_decay"])
    problem = epsilon_completion(eps)
    base = (rank_one_minimum(eps, weight_decay=weight_decay) if p["start"] == "rank1"
            else start_minimum(eps, weight_decay=weight_decay)[0])
    res = simulate(p["method"], replicate(base, p["n_runs"]), problem, lr=lr, weight_decay=weight_decay,
                   t_max=p["t_max"], rec_dt=p["rec_dt"], seed=p["seed"], tau=p.get("tau", 0.0), record_layers=False)
    s2 = res.singular_values[:, 1:, 1]
    low = np.isfinite(s2) & (s2 <= LANGEVIN_RANK_TOL)
    return {"frac_time_rank_le1": low.mean(axis=1).tolist(),
            "up": rank_transitions(numerical_rank(res.singular_values, LANGEVIN_RANK_TOL))[1].tolist(),
            "start_rank": int(numerical_rank(singular_values(base), LANGEVIN_RANK_TOL)[0]),
            "loss_start": float(loss(base, problem, weight_decay)[0]), "diverged": res.diverged.tolist(),
            "seconds": time.perf_counter() - t0}


# ----------------------------------------------------------------------------------------------- summaries
@dataclass(frozen=True)
class EnsembleSummary:
    """The error-barred statistics of an ensemble (pooled over its tasks).

    Attributes:
        n_runs: runs.  jumped: runs that reached rank ≤ 1.
        wait: mean first time at rank ≤ 1 with its 95 % interval ``(mean, lo, hi)`` (time units; censored
            exponential, a divergence ends the time at risk).
        returned: runs that came back to rank 2 after a jump; returned_ci: Wilson 95 % ``(p, lo, hi)`` among
            the jumped.
        diverged: runs that blew up.  collapsed: runs at A = 0 at the end.
        frac_B1: fraction of records in B_1, ``(mean, se)`` across runs (NaN without layer records).
        log10_s2_hist: counts of log10 s₂(A) over the second half (bins :data:`LOG_S2_BINS`).
        log10_s2_hist_fit: the same over the records with a rank-1 fit, s₁ > 10⁻³ (None for grid tasks stored
            before it was recorded).
        bounded_end: runs still bounded at the end (not diverged).
    """

    n_runs: int
    jumped: int
    wait: tuple
    returned: int
    returned_ci: tuple
    diverged: int
    collapsed: int
    frac_B1: tuple
    log10_s2_hist: tuple
    log10_s2_hist_fit: tuple | None = None

    @property
    def bounded_end(self) -> int:
        return self.n_runs - self.diverged

    def log10_s2_quantile(self, q: float, fit_only: bool = False) -> float:
        """The bin centre of the ``q``-quantile of log10 s₂(A) over the second half of every run, pooled (records
        of one run are correlated, so no error bar; NaN if every run diverged). Values below −18 count as −17.5.
        ``fit_only``: over the records with a rank-1 fit only (s₁ > 10⁻³; NaN if none or not recorded)."""
        hist = self.log10_s2_hist_fit if fit_only else self.log10_s2_hist
        if hist is None:
            return float("nan")
        h = np.asarray(hist, dtype=float)
        if h.sum() == 0:
            return float("nan")
        k = min(int(np.searchsorted(np.cumsum(h), q * h.sum())), h.size - 1)
        return 0.5 * (LOG_S2_BINS[k] + LOG_S2_BINS[k + 1])

    @property
    def log10_s2_median(self) -> float:
        """The median of log10 s₂(A) over the second half (:meth:`log10_s2_quantile` at ½)."""
        return self.log10_s2_quantile(0.5)


def summarize_runs(results: list[dict]) -> EnsembleSummary:
    """Pool :func:`dynamics_task` results (e.g. two seeds) into one :class:`EnsembleSummary`."""
    def cat(key):
        return np.array([np.nan if v is None else v for r in results for v in r[key]], dtype=float)

    tj, tr, td = cat("t_jump"), cat("t_return"), cat("t_diverged")
    t_max = np.concatenate([np.full(r["n_runs"], r["t_max"]) for r in results])
    end = np.where(np.isfinite(td), np.minimum(td, t_max), t_max)
    w = censored_exponential(tj, end)
    jumped = int(np.isfinite(tj).sum())
    returned = int(np.isfinite(tr).sum())
    fr = cat("frac_time_B1") if all("frac_time_B1" in r for r in results) else np.array([np.nan])
    hist = np.sum([r["log10_s2_hist"] for r in results], axis=0)
    collapsed = int(sum(sum(r["collapsed_end"]) for r in results))
    fit = (tuple(int(x) for x in np.sum([r["log10_s2_hist_fit"] for r in results], axis=0))
           if all("log10_s2_hist_fit" in r for r in results) else None)
    return EnsembleSummary(int(tj.size), jumped, (w["mean"], w["lo"], w["hi"]), returned, wilson(returned, jumped),
                           int(np.isfinite(td).sum()), collapsed, mean_se(fr), tuple(int(x) for x in hist), fit)


# ----------------------------------------------------------------------------------------------- the shipped grid
def _dyn(method, lr, weight_decay, seeds, n_runs, t_max, rec_dt, **extra) -> list[tuple]:
    return [("dynamics", dict(method=method, lr=lr, weight_decay=weight_decay, n_runs=n_runs, t_max=t_max,
                              rec_dt=rec_dt, seed=s, **extra)) for s in seeds]


def grid_tasks(name: str = "sde05") -> list[tuple[str, dict]]:
    """The tasks ``(kind, params)`` of a shipped grid (``"sde05"``, or ``"tiny"`` for tests)."""
    if name == "tiny":
        return (_dyn("sgd", *HOT, (1,), 4, 300.0, 15.0) + _dyn("sde", *HOT, (1,), 4, 300.0, 15.0, m=4)
                + _dyn("langevin", *HOT, (1,), 4, 300.0, 15.0, temp_factor=1.0))
    if name != "sde05":
        raise ValueError(f"unknown grid {name!r}; grids: {sorted(GRIDS)}")
    seeds, R, tmax, rec = (1, 2), 32, 12_000.0, 15.0
    tasks: list[tuple[str, dict]] = []
    for lr, weight_decay in SETTINGS:
        tasks += _dyn("sgd", lr, weight_decay, seeds, R, tmax, rec)
        tasks += _dyn("gaussian_sgd", lr, weight_decay, seeds, R, tmax, rec)
        for m in (4, 16):
            tasks += _dyn("sde", lr, weight_decay, seeds, R, tmax, rec, m=m)
        for f in (1.0, 10.0):
            tasks += _dyn("langevin", lr, weight_decay, seeds, R // 2, tmax, rec, temp_factor=f)
    tasks += _dyn("sde", *HOT, seeds, R, 3000.0, rec, m=64)  # dt convergence at the hot point
    tasks += _dyn("gaussian_sgd", *HOT, seeds, R, tmax, rec, increments="rademacher")
    for method, extra in (("sgd", {}), ("gaussian_sgd", {}), ("gaussian_sgd", {"increments": "rademacher"})):
        tasks += _dyn(method, *HOT, seeds, R, tmax, rec, S=2, **extra)
    tasks += _grid_tasks_blowup_and_controls(seeds, R, tmax, rec)
    k_grid = list(range(2, 101, 1)) + list(range(105, 301, 5))
    for lr in (0.2, 0.25, 0.3, 0.35):
        for weight_decay in (0.02, 0.0235, 0.027):
            for route in ("row0", "col1"):
                tasks.append(("kstar", dict(lr=lr, weight_decay=weight_decay, route=route, n_seq=12, k_grid=k_grid,
                                            seed=5)))
            # samples=True: the same runs bit for bit, plus the samples before each jump (route_runs)
            tasks.append(("waiting", dict(lr=lr, weight_decay=weight_decay, n_runs=64, n_steps=100_000, rec_steps=50,
                                          seed=11, samples=True)))
    for route in ("row1", "col0", "avoid01"):  # avoid01: the diagonal route, as likely as row 0 and column 1
        tasks.append(("kstar", dict(lr=HOT[0], weight_decay=HOT[1], route=route, n_seq=12, k_grid=k_grid, seed=5)))
    for route in ("row0", "row1", "col1", "avoid00", "avoid01", "avoid11", "avoid12"):
        tasks.append(("kstar", dict(problem="staircase", lr=HOT[0], weight_decay=HOT[1], route=route, n_seq=12,
                                    k_grid=k_grid, seed=5)))
    tasks.append(("staircase", dict(lr=HOT[0], weight_decay=HOT[1], n_runs=128, n_steps=50_000, rec_steps=50, seed=3,
                                    samples=True)))
    tau = 8.96e-4  # 10 τ_match of ε = 0.2 at the hot point (fixed across ε, as in the reply's comparison)
    for eps in (0.1, 0.2, 0.3):
        for start in ("rank1", "rank2"):
            for method in ("langevin", "sgd"):
                tasks.append(("langevin_eps", dict(eps=eps, lr=HOT[0], weight_decay=HOT[1],
                                                   tau=tau if method == "langevin" else 0.0, n_runs=16, t_max=3000.0,
                                                   rec_dt=15.0, seed=7, start=start, method=method)))
    for broken in (None, "biased"):
        tasks.append(("weak_order", dict(seed=0, M=16_384, broken=broken)))
    for broken in (None, "noise_at_h_max"):
        tasks.append(("adaptive_vs_em", dict(seed=0, M=4000, broken=broken)))
    from .controls import control_tasks  # controls reads this module's simulate and summaries

    return (tasks + follow_tasks(R, tmax, rec) + rank2_lower_tasks(tau) + control_tasks()
            + [("infinity", dict(INFINITY_TASK))])


#: Where rank 2 has the lower regularised loss: ε = 0.1 at γ = 0.01 (𝓛_γ 0.0792 at the rank-2 minimum, 0.0873 at
#: the rank-1 minimum; at γ = 0.027 the order is reversed).
RANK2_LOWER = (0.1, 0.01)


def rank2_lower_tasks(tau: float, n_runs: int = 16, t_max: float = 12_000.0) -> list[tuple[str, dict]]:
    """Langevin at the grid's τ and SGD at the hot η, from both minima, where rank 2 has the lower loss
    (:data:`RANK2_LOWER`), run four times longer than §4.2's runs: a law reached from both starts is equilibrated."""
    eps, weight_decay = RANK2_LOWER
    return [("langevin_eps", dict(eps=eps, lr=HOT[0], weight_decay=weight_decay,
                                  tau=tau if method == "langevin" else 0.0, n_runs=n_runs, t_max=t_max, rec_dt=15.0,
                                  seed=7, start=start, method=method))
            for start in ("rank1", "rank2") for method in ("langevin", "sgd")]


#: The follow mode's accuracies (m: h_max = η/m, ρ), as the adaptive step's :data:`~.blowup.ADAPTIVE_LEVELS`; the
#: middle one runs at every setting to the long horizon, the other two at the hot point to t = 3000.
FOLLOW_LEVELS = ADAPTIVE_LEVELS


def follow_tasks(R: int = 32, tmax: float = 12_000.0, rec: float = 15.0) -> list[tuple[str, dict]]:
    """Every path followed to its horizon (:func:`~.spikes.follow_task`): the middle accuracy at each setting to
    ``tmax`` (and again with fresh seeds at the hot point), the other two accuracies at the hot point to t = 3000."""
    (m, rho), mid = FOLLOW_LEVELS[1], []
    for lr, weight_decay in SETTINGS:
        mid += [("follow", dict(lr=lr, weight_decay=weight_decay, n_runs=R, t_max=tmax, rec_dt=rec, seed=s, m=m,
                                rho=rho)) for s in FOLLOW_SEEDS]
    fresh = [("follow", dict(lr=HOT[0], weight_decay=HOT[1], n_runs=R, t_max=tmax, rec_dt=rec, seed=s, m=m, rho=rho))
             for s in FOLLOW_FRESH_SEEDS]
    other = [("follow", dict(lr=HOT[0], weight_decay=HOT[1], n_runs=R, t_max=HAZARD_HORIZON, rec_dt=rec, seed=s, m=mm,
                             rho=rr)) for mm, rr in (FOLLOW_LEVELS[0], FOLLOW_LEVELS[2]) for s in FOLLOW_SEEDS]
    checks = [("adaptive_vs_em", dict(seed=0, M=4000, broken=b, follow=True)) for b in (None, "noise_at_h_max")]
    return mid + fresh + other + checks


def _grid_tasks_blowup_and_controls(seeds, R, tmax, rec) -> list[tuple[str, dict]]:
    """The referee's additions (Notebook 05 §3): the adaptive-step SDE at three accuracies and EM at η/64 at every
    setting (hazards on the horizon :data:`~.blowup.HAZARD_HORIZON`; the hot point's middle accuracy runs to
    ``tmax`` for the long-run statistics), continuations of pre-blow-up states, the nonnegative non-one-hot
    control (Bernoulli weights), and batch 1 at η = 0.15, the temperature T = η/S = 0.15 of the S = 2 rows at
    η = 0.3 (the same temperature with a larger batch; S = 2 at the hot temperature T = 0.3 would need η = 0.6,
    beyond gradient descent's stability limit 2/λ_max ≈ 0.50 at the rank-2 minimum)."""
    tasks: list[tuple[str, dict]] = []
    for lr, weight_decay in SETTINGS:
        if (lr, weight_decay) != HOT:
            tasks += _dyn("sde", lr, weight_decay, seeds, R, HAZARD_HORIZON, rec, m=64)
        for m, rho in ADAPTIVE_LEVELS:
            t_end = tmax if ((lr, weight_decay), m) == (HOT, 16) else HAZARD_HORIZON
            tasks += _dyn("sde_adaptive", lr, weight_decay, seeds, R, t_end, rec, m=m, rho=rho)
    tasks.append(("continuation", dict(lr=HOT[0], weight_decay=HOT[1], m=16, rho=0.05, seed=21, n_runs=32,
                                       t_max=HAZARD_HORIZON, rec_dt=0.1, n_states=12, n_cont=16, cont_t=30.0,
                                       cont_rec=0.3 / 16)))
    tasks += _dyn("gaussian_sgd", *HOT, seeds, R, tmax, rec, increments="bernoulli")
    tasks += _dyn("gaussian_sgd", *HOT, seeds, R, tmax, rec, S=2, increments="bernoulli")
    for method, extra in (("sgd", {}), ("gaussian_sgd", {}), ("gaussian_sgd", {"increments": "rademacher"}),
                          ("gaussian_sgd", {"increments": "bernoulli"})):
        tasks += _dyn(method, HOT[0] / 2, HOT[1], seeds, R, tmax, rec, **extra)  # batch 1 at T = η/S of S = 2
    return tasks


def weak_order_task(p: dict) -> dict:
    """The weak-order check (:func:`~.checks.check_sde_weak_order`, about 7 s of CPU) as a grid task:
    its :class:`~symsgd_core.core.checking.CheckResult` as a dict. Keys: ``seed``, ``M``, ``broken`` (None or
    ``"biased"``)."""
    from .checks import check_sde_weak_order

    t0 = time.perf_counter()
    res = check_sde_weak_order(seed=p["seed"], M=p["M"], broken=p.get("broken"))
    return {**res.as_dict(), "seconds": time.perf_counter() - t0}


def adaptive_vs_em_task(p: dict) -> dict:
    """:func:`~.checks.check_sde_adaptive_matches_em` (about 6 s of CPU) as a grid task. Keys: ``seed``, ``M``,
    ``broken`` (None or ``"noise_at_h_max"``), optional ``follow`` (the follow-every-path mode)."""
    from .checks import check_sde_adaptive_matches_em

    t0 = time.perf_counter()
    res = check_sde_adaptive_matches_em(seed=p["seed"], M=p["M"], broken=p.get("broken"),
                                        follow=bool(p.get("follow", False)))
    return {**res.as_dict(), "seconds": time.perf_counter() - t0}


def dynamics_events_task(p: dict) -> dict:
    """:func:`~.controls.dynamics_events_task` (§3.2's controls: a ``dynamics`` task with each run's jump to a
    rank-1 fit told apart from its collapse to A = 0), as a grid task."""
    from .controls import dynamics_events_task as run_task

    return run_task(p)


#: Task kinds of the grids and their functions.
TASK_FUNCTIONS = {"dynamics_events": dynamics_events_task, "dynamics": dynamics_task, "follow": follow_task,
                  "infinity": infinity_task,
                  "kstar": kstar_task, "waiting": waiting_task,
                  "staircase": staircase_task, "langevin_eps": langevin_eps_task, "weak_order": weak_order_task,
                  "adaptive_vs_em": adaptive_vs_em_task, "continuation": continuation_task}
#: The shipped grids, by name: what ``python -m symsgd_core sweep NAME`` runs.
GRIDS = {"sde05": "Notebook 05's grid (its task timings are stored in the file)", "tiny": "a few seconds, for tests"}
#: The file the shipped grid is stored in (package data).
GRID_FILE = "sde05_grid.json"
#: Task-parameter keys renamed since a grid file was written, old → new: the shipped grid predates the rename of
#: the weight decay's keyword ``lam`` to ``weight_decay`` and is read (and reused) under the new name.
_RENAMED_PARAMS = {"lam": "weight_decay"}


def _current_params(params: dict) -> dict:
    """A stored task's parameters under today's names (:data:`_RENAMED_PARAMS`), in their stored order."""
    return {_RENAMED_PARAMS.get(k, k): v for k, v in params.items()}


def write_grid(name: str = "sde05", path=None, *, client=None, n_workers: int | None = None, cache_dir=None,
               progress=None, reuse=None) -> Path:
    """Run a grid with :func:`~symsgd_core.core.sweep.run_sweep` and write it as JSON; returns the path.

    ``reuse``: a stored grid file whose tasks with identical ``(kind, params)`` (stored parameters under today's
    names) are taken as they are (their stored ``seconds`` included) instead of being run again — for a grid that
    gained tasks. Every task is a deterministic function of its parameters, so a full rerun gives the same results.
    """
    from ..core.sweep import run_sweep

    tasks = grid_tasks(name)
    results: list = [None] * len(tasks)
    if reuse is not None:
        stored = {json.dumps([t["kind"], _current_params(t["params"])], sort_keys=True): t["result"]
                  for t in json.loads(Path(reuse).read_text())["tasks"]}
        for i, (k, p) in enumerate(tasks):
            results[i] = stored.get(json.dumps([k, p], sort_keys=True))
    t0 = time.perf_counter()
    ran: list[int] = []
    for kind, fn in TASK_FUNCTIONS.items():
        idx = [i for i, (k, _) in enumerate(tasks) if k == kind and results[i] is None]
        if not idx:
            continue
        out = run_sweep(fn, [tasks[i][1] for i in idx], client=client, n_workers=n_workers, cache_dir=cache_dir,
                        progress=progress)
        for i, r in zip(idx, out):
            results[i] = r
        ran += idx
    cpu = sum(r.get("seconds", 0.0) for r in results)
    blob = {"name": name, "tasks": [{"kind": k, "params": p, "result": r} for (k, p), r in zip(tasks, results)],
            "task_seconds": cpu, "wall_seconds": time.perf_counter() - t0,
            "reused_tasks": sum(r is not None for r in results) - len(ran),
            "command": f"python -m symsgd_core sweep {name}"}
    if path is None:
        path = Path(__file__).resolve().parent.parent / "data_files" / (GRID_FILE if name == "sde05" else
                                                                        f"{name}_grid.json")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(blob, allow_nan=True, separators=(",", ":")))
    return path


@dataclass(frozen=True, eq=False)
class SdeGrid:
    """A stored grid: its tasks with parameters and results, and how long they took.

    Attributes:
        name: the grid's name.  tasks: tuple of ``{"kind", "params", "result"}``.
        task_seconds: the tasks' summed time (CPU seconds).  command: what made it.
    """

    name: str
    tasks: tuple
    task_seconds: float
    command: str

    def select(self, kind: str, **params) -> list[dict]:
        """The results of the tasks of ``kind`` whose parameters include ``params`` (absent keys take their
        defaults: ``m`` 1, ``S`` 1, ``increments`` "gaussian", ``problem`` "eps")."""
        defaults = {"m": 1, "S": 1, "increments": "gaussian", "problem": "eps"}
        out = []
        for t in self.tasks:
            if t["kind"] != kind:
                continue
            tp = {**defaults, **t["params"]}
            if all(tp.get(k) == v for k, v in params.items()):
                out.append(t["result"])
        return out


def load_grid(path=None) -> SdeGrid:
    """The shipped grid (``symsgd_core/data_files/sde05_grid.json``) or the one at ``path``, its task parameters
    under today's names (a file written before a parameter was renamed is read under the new name).

    Raises:
        FileNotFoundError: no grid there (make it with ``python -m symsgd_core sweep sde05``).
    """
    if path is None:
        res = resources.files("symsgd_core") / "data_files" / GRID_FILE
        if not res.is_file():
            raise FileNotFoundError(f"the shipped grid {GRID_FILE} is missing: run `python -m symsgd_core sweep sde05`")
        text = res.read_text()
    else:
        text = Path(path).read_text()
    blob = json.loads(text)
    tasks = tuple({**t, "params": _current_params(t["params"])} for t in blob["tasks"])
    return SdeGrid(blob["name"], tasks, float(blob["task_seconds"]), blob["command"])


@dataclass(frozen=True)
class ComparisonRow:
    """One row of the comparison table: a dynamics at one (η, γ), with its :class:`EnsembleSummary`."""

    lr: float
    weight_decay: float
    label: str
    dt: float
    summary: EnsembleSummary


def comparison_rows(grid: SdeGrid) -> tuple[ComparisonRow, ...]:
    """The SGD / Gaussian SGD / SDE (dt = η/4, η/16, η/64; adaptive) / ±1 / Bernoulli / Langevin (1×, 10×) rows of
    the stored grid."""
    rows = []
    seen = []
    for t in grid.tasks:
        if t["kind"] != "dynamics":
            continue
        p = {"m": 1, "S": 1, "increments": "gaussian", **t["params"]}
        key = (p["lr"], p["weight_decay"], p["method"], p["m"], p["S"], p["increments"], p.get("temp_factor"),
               p["t_max"], p.get("rho"))
        if key in seen:
            continue
        seen.append(key)
        sel = {k: p[k] for k in ("lr", "weight_decay", "method", "m", "S", "increments", "t_max")}
        for extra in ("temp_factor", "rho"):
            if p.get(extra) is not None:
                sel[extra] = p[extra]
        res = grid.select("dynamics", **sel)
        label = _label(p)
        dt = integrator(p["method"], p["increments"]).time_step(p["lr"], p["m"])
        rows.append(ComparisonRow(p["lr"], p["weight_decay"], label, dt, summarize_runs(res)))
    return tuple(rows) + _follow_rows(grid)


def comparison_summaries(grid: SdeGrid) -> dict:
    """The summaries of :func:`comparison_rows` by ``(η, γ, label)``: what notebook 05's tables and claims read."""
    return {(r.lr, r.weight_decay, r.label): r.summary for r in comparison_rows(grid)}


def _follow_rows(grid: SdeGrid) -> tuple[ComparisonRow, ...]:
    """The followed SDE's rows (:func:`follow_tasks`): one per (η, γ, accuracy, horizon), the hot point's fresh
    seeds a row of their own."""
    return tuple(ComparisonRow(lr, weight_decay, follow_label(m, rho, t_max, fresh), lr / m, summarize_runs(res))
                 for (lr, weight_decay, m, rho, t_max, fresh), res in follow_results(grid).items())


def _label(p: dict) -> str:
    S = f", S = {p['S']}" if p["S"] != 1 else ""
    short = f" (t ≤ {p['t_max']:g})" if p["t_max"] < 12_000 else ""
    integ = integrator(p["method"], p["increments"])
    if isinstance(integ, GaussianSGD):
        return f"{integ.label} (dt = η){S}"
    if integ.adaptive:
        return f"{integ.label}, h ≤ η/{p['m']}, ρ = {p['rho']:g}{S}{short}"
    if isinstance(integ, EulerMaruyama):
        return f"{integ.label}, dt = η/{p['m']}{S}{short}"
    if not isinstance(integ, Langevin):
        return f"{integ.label}{S}"
    return f"Langevin {p['temp_factor']:g}× τ_match"


@dataclass(frozen=True)
class KStarRow:
    """The jump event at one (η, γ): k* per route, predicted and measured waiting times (SGD steps).

    Attributes:
        lr, weight_decay: η and γ.  kstar_row0, kstar_col1: floors of the medians over the forced sequences (−1: never),
            under the rule of ``kstar_key`` (:func:`~.jump_event.kstar_from_success`).
        p: sampling probability of either route (2/3).  predicted_row0: ``E_k`` for the row-0 route alone.
        predicted_either: the exact two-route wait.  measured: ``(mean, lo, hi)`` censored exponential, steps.
        jumped, n_runs: SGD runs that jumped.  routes: ``{"row0": n, "col1": n}``: the **end-state labels** of the
            jumps (:func:`~.jump_event.end_state_label`, the shape of A at the first record at rank ≤ 1) — not the
            route taken (forced runs of one route get either label).
        comparison: :class:`~.jump_event_stats.WaitComparison` (verdict, p-value, expected jumps, the factor
            claim) of measured against ``predicted_either``.
    """

    lr: float
    weight_decay: float
    kstar_row0: int
    kstar_col1: int
    p: float
    predicted_row0: float
    predicted_either: float
    measured: tuple
    jumped: int
    n_runs: int
    routes: dict = field(default_factory=dict)
    comparison: object = None

    @property
    def ratio(self) -> float:
        """measured / predicted (either route), the point estimate; inf when nothing jumped (its interval:
        ``comparison.ratio``)."""
        return self.measured[0] / self.predicted_either if self.predicted_either > 0 else float("nan")


def _median_kstar(res: dict, key: str = "kstar") -> int:
    return median_kstar(res[key])


def kstar_rows(grid: SdeGrid, *, factor: float | None = None, kstar_key: str = "kstar") -> tuple[KStarRow, ...]:
    """The k* table with the predicted and measured waiting times, over the stored (η, γ) grid.

    ``factor``: the factor F of an order-of-magnitude claim (:func:`~.jump_event_stats.compare_wait`);
    ``kstar_key``: ``"kstar"`` (as stored), ``"kstar_first"`` or ``"kstar_stable"``.
    """
    out = []
    problem = epsilon_completion(EXP.eps)
    p = route_probability(problem, "row0")
    cmp = {(c.lr, c.weight_decay): c for c in grid_wait_comparisons(grid, factor=factor, kstar_key=kstar_key)}
    for t in grid.tasks:
        if t["kind"] != "waiting" or t["params"].get("problem", "eps") != "eps":
            continue
        lr, weight_decay = t["params"]["lr"], t["params"]["weight_decay"]
        kr = _median_kstar(grid.select("kstar", lr=lr, weight_decay=weight_decay, route="row0")[0], kstar_key)
        kc = _median_kstar(grid.select("kstar", lr=lr, weight_decay=weight_decay, route="col1")[0], kstar_key)
        res = t["result"]
        js = event_times(res["jump_step"])
        w = censored_exponential(js, float(res["n_steps"]))
        routes = {r: sum(1 for x in res["route"] if x == r) for r in ("row0", "col1")}
        out.append(KStarRow(lr, weight_decay, kr, kc, p, run_waiting_time(kr, p) if kr > 0 else float("inf"),
                            two_route_waiting_time(kr, kc) if kr > 0 and kc > 0 else float("inf"),
                            (w["mean"], w["lo"], w["hi"]), int(np.isfinite(js).sum()), js.size, routes,
                            cmp[(lr, weight_decay)]))
    return tuple(sorted(out, key=lambda r: (r.lr, r.weight_decay)))


def kstar_grid(rows, route: str = "row0") -> tuple[list, list, list]:
    """k* of ``route`` (``"row0"`` or ``"col1"``) over the (η, γ) of :func:`kstar_rows`: ``(lrs, weight_decays,
    z)``, both sorted, with ``z[i][j]`` the k* at ``(lrs[i], weight_decays[j])`` (None where no row has it)."""
    lrs = sorted({r.lr for r in rows})
    weight_decays = sorted({r.weight_decay for r in rows})
    kstar = {(r.lr, r.weight_decay): getattr(r, f"kstar_{route}") for r in rows}
    return lrs, weight_decays, [[kstar.get((lr, wd)) for wd in weight_decays] for lr in lrs]


@dataclass(frozen=True)
class StaircaseSummary:
    """Equal row counts (the 2×3 staircase): the jumps' end-state labels, each route's k*, the measured wait.

    Attributes:
        routes: ``{"row0": n, "row1": n, "col1": n}``: the **end-state labels** of the jumped runs
            (:func:`~.jump_event.end_state_label`) — not routes: forced runs of any of the three are all
            labelled ``"row1"``.  n_runs, jumped: counts.
        row0_share: Wilson ``(p, lo, hi)`` of the label ``"row0"`` among the row labels (not a route share).
        binomial_p: two-sided binomial p-value of that share against ½.
        kstar: ``{route: median k*}``.  p_route: each route's sampling probability (½).
        measured: ``(mean, lo, hi)`` SGD's mean first-jump step, censored exponential 95 %.
    """

    routes: dict
    n_runs: int
    jumped: int
    row0_share: tuple
    binomial_p: float
    kstar: dict
    p_route: dict
    measured: tuple = ()


def staircase_summary(grid: SdeGrid) -> StaircaseSummary:
    """The staircase's end-state label counts, their test against ½, the routes' k* and SGD's measured wait."""
    from scipy.stats import binomtest

    res = grid.select("staircase")[0]
    routes = {r: sum(1 for x in res["route"] if x == r) for r in ("row0", "row1", "col1")}
    n_row = routes["row0"] + routes["row1"]
    kst = {r: _median_kstar(grid.select("kstar", problem="staircase", route=r)[0]) for r in ("row0", "row1", "col1")}
    p_route = {r: grid.select("kstar", problem="staircase", route=r)[0]["p_route"] for r in ("row0", "row1", "col1")}
    js = event_times(res["jump_step"])
    w = censored_exponential(js, float(res["n_steps"]))
    return StaircaseSummary(routes, len(res["route"]), sum(1 for x in res["jump_step"] if x >= 0),
                            wilson(routes["row0"], n_row), float(binomtest(routes["row0"], n_row, 0.5).pvalue),
                            kst, p_route, (w["mean"], w["lo"], w["hi"]))


@dataclass(frozen=True)
class LangevinEpsRow:
    """Langevin vs SGD at one ε from one start: fraction of time at rank ≤ 1 ``(mean, se)``, runs that went up."""

    eps: float
    start: str
    method: str
    start_rank: int
    frac_rank_le1: tuple
    went_up: int
    n_runs: int


def langevin_eps_rows(grid: SdeGrid, weight_decay: float = HOT[1]) -> tuple[LangevinEpsRow, ...]:
    """Langevin at small ε (the stored rows at weight decay γ = ``weight_decay``; §4.2's are at the hot γ, those
    of :func:`rank2_lower_tasks` at :data:`RANK2_LOWER`'s)."""
    out = []
    for t in grid.tasks:
        if t["kind"] != "langevin_eps" or t["params"]["weight_decay"] != weight_decay:
            continue
        p, r = t["params"], t["result"]
        out.append(LangevinEpsRow(p["eps"], p["start"], p["method"], r["start_rank"], mean_se(r["frac_time_rank_le1"]),
                                  int(sum(1 for u in r["up"] if u > 0)), len(r["up"])))
    return tuple(out)


# ----------------------------------------------------------------------------------------------- live
@dataclass(frozen=True, eq=False)
class ComparePoint:
    """SGD, its SDE and Langevin from the same rank-2 minimum at one (η, γ) (the live figure of §3).

    Attributes:
        lr, weight_decay, m, t_max: the settings (dt = η/m for the SDE; time t = η·steps).
        tau: Langevin's temperature (``temp_factor`` × the matched one).
        sgd, sde, langevin: the three :class:`~symsgd_core.dln.engine.RunResult`.
        summaries: ``{"sgd", "sde", "langevin"}`` → :class:`EnsembleSummary`.
        outcome: :func:`compare_outcome`, with the settings its wording quotes (numbers ``lr``, ``weight_decay``,
            ``m``, ``t_max``, ``tau``).
    """

    lr: float
    weight_decay: float
    m: int
    t_max: float
    tau: float
    sgd: RunResult
    sde: RunResult
    langevin: RunResult
    summaries: dict
    outcome: Outcome

    def low_rank_fraction(self, key: str) -> tuple[list, list]:
        """``(t, fraction of runs at rank ≤ 1)`` of the dynamics ``key`` (``"sgd"``, ``"sde"``, ``"langevin"``):
        s₂(A) ≤ :data:`~symsgd_core.dln.network.DEFAULT_RANK_TOL` (a run that blew up is not)."""
        res = getattr(self, key)
        s2 = res.singular_values[:, :, 1]
        return res.times.tolist(), (np.isfinite(s2) & (s2 <= DEFAULT_RANK_TOL)).mean(axis=0).tolist()

    @property
    def sde_blown_up(self) -> tuple[list, list]:
        """``(t, fraction of the SDE runs that have blown up by t)``."""
        return self.sde.times.tolist(), (~self.sde.alive_at()).mean(axis=1).tolist()


#: The outcomes of the live comparison (:func:`compare_outcome`).
COMPARE_OUTCOMES = ("stopped", "no_jump", "jumped")


def compare_outcome(summaries: dict) -> Outcome:
    """The live comparison's outcome from its :class:`EnsembleSummary` per dynamics (``"sgd"``, ``"sde"``,
    ``"langevin"``): ``stopped`` (an integrator's divergence rule stopped some run: a failure), else ``no_jump`` (no
    run of any dynamics reached rank ≤ 1 within the time: a failure, nothing to compare) or ``jumped``.

    Numbers, per dynamics ``d``: ``d_runs``, ``d_jumped``, ``d_diverged`` (runs stopped), ``d_returned`` (back at
    rank 2 after a jump) and ``d_wait`` (mean first time at rank ≤ 1 with its 95 % interval, time units).
    """
    numbers: dict = {}
    for d, sm in summaries.items():
        numbers.update({f"{d}_runs": int(sm.n_runs), f"{d}_jumped": int(sm.jumped), f"{d}_diverged": int(sm.diverged),
                        f"{d}_returned": int(sm.returned), f"{d}_wait": tuple(float(w) for w in sm.wait)})
    if any(sm.diverged for sm in summaries.values()):
        return Outcome("stopped", True, numbers)
    if not any(sm.jumped for sm in summaries.values()):
        return Outcome("no_jump", True, numbers)
    return Outcome("jumped", False, numbers)


def compare_point(lr: float = HOT[0], weight_decay: float = HOT[1], m: int = 16, t_max: float = 1500.0,
                  n_runs_sde: int = 12, n_runs_sgd: int = 16, n_runs_langevin: int = 8, temp_factor: float = 1.0,
                  seed: int = 0, rec_dt: float = 15.0, progress=None) -> ComparePoint:
    """Run SGD, the SDE (dt = η/m) and Langevin from the rank-2 minimum at (η, γ) over time ``t_max``;
    ``progress(fraction)``, if given, after each of the three.

    Raises:
        ValueError: bad settings, or no rank-2 minimum at this γ
        (:func:`~symsgd_core.rank_jumps.experiments.start_minimum`).
    """
    problem = epsilon_completion(EXP.eps)
    base = _start(weight_decay)
    tau = float(temp_factor) * float(matched_langevin_temperature(base, problem, lr, weight_decay)[0])
    out = {}
    for name, method, R, s in (("sgd", "sgd", n_runs_sgd, seed), ("sde", "sde", n_runs_sde, seed + 1),
                               ("langevin", "langevin", n_runs_langevin, seed + 2)):
        out[name] = simulate(method, replicate(base, R), problem, lr=lr, weight_decay=weight_decay, t_max=t_max,
                             rec_dt=rec_dt, seed=s, m=m if method == "sde" else 1, tau=tau)
        if progress is not None:
            progress(len(out) / 3)
    summaries = {k: summarize_runs([summarize(v, t_max)]) for k, v in out.items()}
    outcome = compare_outcome(summaries).with_numbers(lr=float(lr), weight_decay=float(weight_decay), m=int(m),
                                                      t_max=float(t_max), tau=tau)
    return ComparePoint(float(lr), float(weight_decay), int(m), float(t_max), tau, out["sgd"], out["sde"],
                        out["langevin"], summaries, outcome)




# ---------------------------------------------------------------------------------------------
# the stored grid's figures: one (η, γ) or one route, read from the rows, worded from their outcome
# ---------------------------------------------------------------------------------------------
def setting_label(lr: float, weight_decay: float) -> str:
    """A stored (η, γ) as the notebook writes it: ``η = 0.3, γ = 0.027`` (every digit, none added)."""
    return f"η = {lr:g}, γ = {weight_decay:g}"


def _rows_at(rows, setting: str | None, what: str) -> tuple:
    """The rows of ``rows`` at the (η, γ) labelled ``setting`` (None: the first row's); ValueError if none."""
    if not rows:
        raise ValueError(f"no {what} rows in the grid")
    setting = setting_label(rows[0].lr, rows[0].weight_decay) if setting is None else setting
    chosen = tuple(r for r in rows if setting_label(r.lr, r.weight_decay) == setting)
    if not chosen:
        known = list(dict.fromkeys(setting_label(r.lr, r.weight_decay) for r in rows))
        raise ValueError(f"setting {setting!r} is not in the grid's {what} rows; settings are {known}")
    return chosen


@dataclass(frozen=True, eq=False)
class GridView:
    """The stored grid's comparison rows at one (η, γ) (notebook 05's grid figure).

    Attributes:
        rows: the :class:`ComparisonRow` of every dynamics at that (η, γ), in the grid's order.
        outcome: always ``compared`` (numbers: ``n_runs`` of the first row; SGD's ``sgd_jumped``, ``sgd_n_runs``,
            ``sgd_wait`` = (mean, lo, hi) in t; per SDE row, tuples in order: ``sde_jumped``, ``sde_n_runs``,
            ``sde_wait`` (means), ``sde_stopped``, ``sde_returned``; label ``sde_labels``: the SDE rows' names, in
            that order).
    """

    rows: tuple
    outcome: Outcome


def grid_view(setting: str | None = None, rows=None) -> GridView:
    """The comparison rows (:func:`comparison_rows`; None: the shipped grid's) at ``setting``
    (:func:`setting_label`; None: the first SDE row's) and their outcome."""
    rows = comparison_rows(load_grid()) if rows is None else rows
    chosen = _rows_at(rows, setting if setting is not None else next(
        (setting_label(r.lr, r.weight_decay) for r in rows if r.label.startswith("SDE")), None), "comparison")
    sgd = next(r.summary for r in chosen if r.label == "SGD")
    sde = [r for r in chosen if r.label.startswith("SDE")]
    return GridView(chosen, Outcome("compared", False, {
        "n_runs": int(chosen[0].summary.n_runs), "sgd_jumped": int(sgd.jumped), "sgd_n_runs": int(sgd.n_runs),
        "sgd_wait": tuple(float(x) for x in sgd.wait[:3]),
        "sde_jumped": tuple(int(r.summary.jumped) for r in sde),
        "sde_n_runs": tuple(int(r.summary.n_runs) for r in sde),
        "sde_wait": tuple(float(r.summary.wait[0]) for r in sde),
        "sde_stopped": tuple(int(r.summary.diverged) for r in sde),
        "sde_returned": tuple(int(r.summary.returned) for r in sde)}, {"sde_labels": tuple(r.label for r in sde)}))


@dataclass(frozen=True, eq=False)
class BlowupView:
    """The integrators' stopping-rule rows (:func:`~.blowup.hazard_rows`) at one (η, γ) (notebook 05, appendix A).

    Attributes:
        rows: the :class:`~.blowup.HazardRow` of every integrator and step at that (η, γ).
        outcome: always ``rates`` (numbers: ``n_runs`` of the first row; per row, tuples in order: ``m``, ``rho``
            (NaN for EM), ``events``, ``runs``, ``rate``, ``rate_lo``, ``rate_hi`` (stopped paths per 1000 t on
            ``[0, HAZARD_HORIZON]``); label ``integrator``: per row, ``"EM"`` or ``"adaptive"``).
    """

    rows: tuple
    outcome: Outcome


def blowup_view(setting: str | None = None, rows=None) -> BlowupView:
    """The hazard rows (:func:`~.blowup.hazard_rows`; None: the shipped grid's) at ``setting``
    (:func:`setting_label`; None: the first row's) and their outcome."""
    rows = hazard_rows(load_grid()) if rows is None else rows
    chosen = _rows_at(rows, setting, "hazard")
    return BlowupView(chosen, Outcome("rates", False, {
        "n_runs": int(chosen[0].n_runs),
        "m": tuple(int(r.m) for r in chosen), "rho": tuple(float("nan") if r.rho is None else float(r.rho)
                                                           for r in chosen),
        "events": tuple(int(r.events) for r in chosen), "runs": tuple(int(r.n_runs) for r in chosen),
        "rate": tuple(float(r.rate[0]) for r in chosen), "rate_lo": tuple(float(r.rate[1]) for r in chosen),
        "rate_hi": tuple(float(r.rate[2]) for r in chosen)}, {"integrator": tuple(r.integrator for r in chosen)}))


#: The jump event figure's routes, as the slider names them, and the route keys of :class:`KStarRow`.
JUMP_ROUTES = {"row 0": "row0", "column 1": "col1"}


@dataclass(frozen=True, eq=False)
class JumpEventView:
    """The jump event over the stored (η, γ) grid along one route (notebook 05).

    Attributes:
        rows: every :class:`KStarRow`.  route: ``"row0"`` or ``"col1"``.
        lrs, weight_decays, kstar: :func:`kstar_grid` of the route.
        outcome: always ``kstar_range`` (numbers: ``kstar_min``, ``kstar_max`` of the route and the (η, γ) where
            they are (``min_lr``, ``min_weight_decay``, ``max_lr``, ``max_weight_decay``; the first row of each),
            ``p`` (either route's sampling probability), ``n_runs`` (of the first row)).
    """

    rows: tuple
    route: str
    lrs: list
    weight_decays: list
    kstar: list
    outcome: Outcome


def jump_event_view(route: str = "row 0", rows=None) -> JumpEventView:
    """k* of ``route`` (a key of :data:`JUMP_ROUTES`) over the k* rows (:func:`kstar_rows`; None: the shipped grid's)
    and the range it spans."""
    if route not in JUMP_ROUTES:
        raise ValueError(f"route must be one of {list(JUMP_ROUTES)}, got {route!r}")
    rows = kstar_rows(load_grid()) if rows is None else tuple(rows)
    if not rows:
        raise ValueError("no k* rows in the grid")
    short = JUMP_ROUTES[route]
    lrs, weight_decays, z = kstar_grid(rows, short)
    ks = [getattr(r, f"kstar_{short}") for r in rows]
    lo, hi = rows[int(np.argmin(ks))], rows[int(np.argmax(ks))]
    return JumpEventView(rows, short, lrs, weight_decays, z, Outcome("kstar_range", False, {
        "kstar_min": int(min(ks)), "kstar_max": int(max(ks)), "min_lr": float(lo.lr),
        "min_weight_decay": float(lo.weight_decay), "max_lr": float(hi.lr), "max_weight_decay": float(hi.weight_decay),
        "p": float(rows[0].p), "n_runs": int(rows[0].n_runs)}))
