"""Notebook 05 §3.2's controls: the laws of a step's entry weights, how large a step can get, and what the runs did.

Every dynamics of §3.2 is a step ``θ ← (1 − 2γη) θ − Σ_k w_k g_k`` with random entry weights ``w_k`` (time units;
:mod:`.sde`), ``g_k = ∇_θ (A_ij − A*_ij)²`` over the N observed entries. The four laws at step η, batch S
(``T = η/S``):

    SGD        w_k = η n_k / S,  n ~ Multinomial(S, 1/N)              total Σ_k w_k = η
    Gaussian   w_k = η/N − c (ξ_k − ξ̄),  ξ_k ~ N(0, 1), c = √(Tη/N)   total η
    ±1         the same with ξ_k = ±1                                  total η
    Bernoulli  w_k = η n_k / S,  n_k ~ Binomial(S, 1/N) independent    total (η/S)·Binomial(NS, 1/N), up to Nη

**Stability of a step (derived here; the convention of :mod:`symsgd_core.dln.problems`).**
``𝓛_γ = (1/N) Σ_k ℓ_k + γ‖θ‖²`` with ``ℓ_k = (A_ij − A*_ij)²``, so GD's step η is the weighted step with
``w_k = η/N``. A step whose weights are all equal, ``w_k = W/N`` (total W), is a full-gradient step of size W on
the data term with the weight decay at η: ``θ ← θ − W ∇𝓛_0 − 2γη θ``. Near the rank-2 minimum θ* (where
``∇𝓛_γ = 0``) its Jacobian is ``I − W (H − 2γI) − 2γη I`` with ``H = ∇²𝓛_γ(θ*)``, whose eigenvalues are
``1 − W(λ − 2γ) − 2γη`` over H's eigenvalues λ. The step does not amplify a deviation along H's top eigenvector
iff ``W (λ_max − 2γ) + 2γη < 2`` (for W = η: GD's ``η λ_max < 2``). This is :func:`step_is_stable`. (For
W ≠ η the step also moves θ* itself, by ``2γ(W − η) θ*`` since ``∇𝓛_0(θ*) = −2γθ*``: small at γ = 0.027.) For unequal
weights the Jacobian is ``I − Σ_k w_k ∇²ℓ_k − 2γη I``: :func:`pattern_curvature` gives its top
``λ_max(Σ_k w_k ∇²ℓ_k) + 2γη`` (stable iff < 2) for each discrete weight pattern; a one-hot SGD step has it too.

What the runs did (per run, from records every ``rec_dt``): :func:`dynamics_events_task` is
:func:`~.experiments.dynamics_task` (the same runs, bit for bit, on the same parameters) plus the events the stored
grid does not keep: whether the first record at rank ≤ 1 (s₂ ≤ 10⁻³) has a rank-1 fit (s₁ > 10⁻³) or is at A ≈ 0
(s₁ ≤ 10⁻³), and the first record at A ≈ 0. :func:`control_tasks` lists the tasks; :func:`control_rows` pools them;
:func:`report_tables` gives the tables of §3.2 as data.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np

from ..core.stats import censored_exponential, wilson
from ..core.validation import check_choice, check_nonnegative, check_positive, check_positive_int
from ..dln import (
    DEFAULT_RANK_TOL,
    CompletionProblem,
    Params,
    epsilon_completion,
    per_entry_gradients,
    replicate,
    sde_noise_scale,
)
from ..rank_jumps.analysis import loss_hessian_top_eigenvalue
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from .blowup import rate_ratio
from .ensembles import HOT, _list, _start, simulate, summarize

__all__ = ["CONTROL_POINTS", "FRESH_SEEDS", "GRID_SEEDS", "LAWS", "LAW_NAMES", "ControlReport",
           "ControlRow", "StepLaw", "Table", "control_rows", "control_tasks", "dynamics_events_task", "entry_hessians",
           "fixed_temperature_ratio", "grid_mismatches", "largest_stable_lr", "pattern_curvature", "report",
           "report_tables", "run_events", "step_is_stable", "step_law", "step_laws"]

#: The laws of the entry weights (the ``increments`` of :func:`~.sde.run_gaussian_sgd`, and ``"sgd"``).
LAWS = ("sgd", "gaussian", "rademacher", "bernoulli")
#: The (η, S) of §3.2, at the hot weight decay γ = 0.027: the hot point, batch 2 at the same η (T = 0.15), and
#: batch 1 at T = 0.15.
CONTROL_POINTS = ((0.3, 1), (0.3, 2), (0.15, 1))
#: The stored grid's seeds of these rows (two tasks of 32 runs); fresh seeds of the added runs.
GRID_SEEDS = (1, 2)
FRESH_SEEDS = (3, 4, 5, 6)
#: Runs per task, horizon and record spacing: the stored grid's.
RUNS_PER_TASK, T_MAX, REC_DT = 32, 12_000.0, 15.0
#: The per-run event keys :func:`run_events` adds to :func:`~.experiments.summarize`'s.
EVENT_KEYS = ("s1_at_jump", "t_jump_fit", "t_collapse")
#: Central-difference step of the per-entry Hessians (as :func:`~symsgd_core.rank_jumps.analysis.
#: loss_hessian_top_eigenvalue`'s: O(h²) truncation plus round-off about 1e-8 relative).
HESSIAN_H = 1e-6


# ----------------------------------------------------------------------------------------------- one step's weights
@dataclass(frozen=True)
class StepLaw:
    """What one step of a law at (η, S) can weigh, at the rank-2 minimum of γ.

    Attributes:
        law, lr, batch_size, weight_decay: the law (:data:`LAWS`), η, S, γ.
        totals, probs: the distribution of the step's total weight ``Σ_k w_k`` (time units) — exact: ``probs[i]``
            is P(total = ``totals[i]``) (Bernoulli: ``(η/S)·j`` with P(Σ n_k = j), Binomial(NS, 1/N)).
        largest_total: the largest total weight; p_largest: its probability.
        lam_max: top Hessian eigenvalue of 𝓛_γ at the rank-2 minimum.
        stability: ``largest_total (λ_max − 2γ) + 2γη`` (the module docstring); stable iff < 2.
        largest_stable: :func:`step_is_stable` of the largest total.
        p_unstable_total: P(a step's total weight W has ``W(λ_max − 2γ) + 2γη ≥ 2``) (exact).
        min_weight: the most negative entry weight (−inf for the Gaussian, 0 for SGD and Bernoulli).
        p_unstable_pattern: P(``λ_max(Σ_k w_k ∇²ℓ_k) + 2γη ≥ 2``) over the discrete weight patterns (exact; NaN for
            the Gaussian, which has no finite list of patterns); max_curvature: the largest such value.
    """

    law: str
    lr: float
    batch_size: int
    weight_decay: float
    totals: tuple
    probs: tuple
    largest_total: float
    p_largest: float
    lam_max: float
    stability: float
    largest_stable: bool
    p_unstable_total: float
    min_weight: float
    p_unstable_pattern: float
    max_curvature: float


def step_is_stable(total: float, lr: float, lam_max: float, weight_decay: float) -> bool:
    """Whether a step of total weight ``total`` shared equally over the entries does not amplify a deviation from
    the minimum along H's top eigenvector: ``total (λ_max − 2γ) + 2γη < 2`` (derived in the module docstring)."""
    total, lr = check_nonnegative("total", total), check_positive("lr", lr)
    lam_max, weight_decay = check_positive("lam_max", lam_max), check_nonnegative("weight_decay", weight_decay)
    return bool(total * (lam_max - 2 * weight_decay) + 2 * weight_decay * lr < 2.0)


def largest_stable_lr(n_observed: int, lam_max: float, weight_decay: float) -> float:
    """The η below which the Bernoulli law's largest step (all ``n_k = S``: ``w_k = η``, total Nη, at every S) is
    stable: ``Nη(λ_max − 2γ) + 2γη < 2`` ⇔ ``η < 2 / (N(λ_max − 2γ) + 2γ)``."""
    N = check_positive_int("n_observed", n_observed)
    lam_max, weight_decay = check_positive("lam_max", lam_max), check_nonnegative("weight_decay", weight_decay)
    return 2.0 / (N * (lam_max - 2 * weight_decay) + 2 * weight_decay)


def entry_hessians(params: Params, problem: CompletionProblem, h: float = HESSIAN_H) -> np.ndarray:
    """``∇²ℓ_k`` at the first run of ``params``, one per observed entry: ``(N, P, P)``, by central differences of
    the analytic per-entry gradients (:func:`~._reference.per_entry_gradients`), symmetrised."""
    h = check_positive("h", h)
    theta = params.flat[:1]
    P = theta.shape[1]
    H = np.empty((problem.n_observed, P, P))
    for k in range(P):
        e = np.zeros_like(theta)
        e[0, k] = h
        H[:, :, k] = (per_entry_gradients(theta + e, params.arch, problem)[0]
                      - per_entry_gradients(theta - e, params.arch, problem)[0]) / (2 * h)
    return 0.5 * (H + np.swapaxes(H, 1, 2))


def pattern_curvature(weights, hessians: np.ndarray, lr: float, weight_decay: float) -> float:
    """``λ_max(Σ_k w_k ∇²ℓ_k) + 2γη`` for entry weights ``weights (N,)`` and ``hessians (N, P, P)``: the step is
    stable along its top direction iff this is < 2 (module docstring)."""
    w = np.asarray(weights, dtype=float)
    if w.shape != hessians.shape[:1]:
        raise ValueError(f"weights must be ({hessians.shape[0]},), got {w.shape}")
    return float(np.linalg.eigvalsh(np.tensordot(w, hessians, 1))[-1] + 2 * weight_decay * lr)


def _patterns(law: str, lr: float, N: int, S: int) -> tuple[np.ndarray, np.ndarray]:
    """Every weight pattern ``(M, N)`` of a discrete law with its probability ``(M,)`` (exact)."""
    from scipy import stats as _st

    if law == "bernoulli":
        n = np.array(list(itertools.product(range(S + 1), repeat=N)), dtype=float)
        return lr * n / S, np.prod(_st.binom.pmf(n, S, 1.0 / N), axis=1)
    if law == "sgd":
        counts = {}
        for idx in itertools.product(range(N), repeat=S):
            key = tuple(np.bincount(idx, minlength=N))
            counts[key] = counts.get(key, 0) + 1
        n = np.array(list(counts), dtype=float)
        return lr * n / S, np.array(list(counts.values()), dtype=float) / N ** S
    if law == "rademacher":
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=N)))
        c = sde_noise_scale(lr, lr, N, S)
        return lr / N - c * (signs - signs.mean(axis=1, keepdims=True)), np.full(len(signs), 0.5 ** N)
    raise ValueError(f"no finite list of weight patterns for {law!r}")


def step_law(law: str, lr: float, batch_size: int = 1, weight_decay: float = HOT[1], *, problem=None, start=None,
             lam_max: float | None = None, hessians: np.ndarray | None = None) -> StepLaw:
    """The distribution of one step's total weight, its largest value and whether it is stable (:class:`StepLaw`).

    ``start`` (the rank-2 GD minimum of γ), ``lam_max`` and ``hessians`` are computed when not given (pass them to
    reuse them across laws).
    """
    from scipy import stats as _st

    law = check_choice("law", law, LAWS)
    lr, S = check_positive("lr", lr), check_positive_int("batch_size", batch_size)
    problem = epsilon_completion(EXP.eps) if problem is None else problem
    N = problem.n_observed
    start = _start(weight_decay) if start is None else start
    lam_max = loss_hessian_top_eigenvalue(start, problem, weight_decay) if lam_max is None else float(lam_max)
    hessians = entry_hessians(start, problem) if hessians is None else hessians

    def unstable(total):
        return total * (lam_max - 2 * weight_decay) + 2 * weight_decay * lr >= 2.0

    if law == "bernoulli":
        j = np.arange(N * S + 1)
        totals, probs = lr * j / S, _st.binom.pmf(j, N * S, 1.0 / N)
    else:
        totals, probs = np.array([lr]), np.array([1.0])
    if law == "gaussian":
        p_pat, max_curv, min_w = float("nan"), float("inf"), -float("inf")
    else:
        w, pw = _patterns(law, lr, N, S)
        curv = np.array([pattern_curvature(x, hessians, lr, weight_decay) for x in w])
        p_pat, max_curv, min_w = float(pw[curv >= 2.0].sum()), float(curv.max()), float(min(w.min(), 0.0))
    big = totals[-1]
    return StepLaw(law, float(lr), S, float(weight_decay), tuple(float(x) for x in totals),
                   tuple(float(x) for x in probs), float(big), float(probs[-1]), float(lam_max),
                   float(big * (lam_max - 2 * weight_decay) + 2 * weight_decay * lr),
                   step_is_stable(big, lr, lam_max, weight_decay), float(probs[unstable(totals)].sum()), min_w, p_pat,
                   max_curv)


def step_laws(points=CONTROL_POINTS, weight_decay: float = HOT[1]) -> dict:
    """:func:`step_law` of every law of :data:`LAWS` at every ``(η, S)`` of ``points``: ``{(law, η, S): StepLaw}``
    (the minimum, λ_max and the per-entry Hessians computed once)."""
    problem = epsilon_completion(EXP.eps)
    start = _start(weight_decay)
    lam_max = loss_hessian_top_eigenvalue(start, problem, weight_decay)
    hessians = entry_hessians(start, problem)
    return {(law, lr, S): step_law(law, lr, S, weight_decay, problem=problem, start=start, lam_max=lam_max,
                                   hessians=hessians) for lr, S in points for law in LAWS}


# ----------------------------------------------------------------------------------------------- what the runs did
def run_events(singular_values: np.ndarray, times, tol: float = DEFAULT_RANK_TOL) -> dict:
    """Per run, from records ``singular_values (R, K, ≥2)`` at ``times (K,)``: ``s1_at_jump`` (s₁ at the first
    record with s₂ ≤ ``tol``), ``t_jump_fit`` (the first record with s₂ ≤ tol < s₁: rank 1 with a rank-1 fit) and
    ``t_collapse`` (the first record with s₁ ≤ tol: A ≈ 0); None where there is none (JSON lists)."""
    sv = np.asarray(singular_values, dtype=float)
    t = np.asarray(times, dtype=float)
    if sv.ndim != 3 or sv.shape[2] < 2 or sv.shape[1] != t.size:
        raise ValueError(f"singular_values must be (R, K, >=2) with K = len(times) = {t.size}, got {sv.shape}")
    s1, s2 = sv[:, :, 0], sv[:, :, 1]
    alive = np.isfinite(s2)
    low = alive & (s2 <= tol)
    fit = low & (s1 > tol)
    zero = alive & (s1 <= tol)

    def first(mask, values):
        return np.where(mask.any(axis=1), values[np.arange(mask.shape[0]), np.argmax(mask, axis=1)], np.nan)

    tt = np.broadcast_to(t, s1.shape)
    return {"s1_at_jump": _list(first(low, s1)), "t_jump_fit": _list(first(fit, tt)),
            "t_collapse": _list(first(zero, tt))}


def dynamics_events_task(p: dict) -> dict:
    """:func:`~.experiments.dynamics_task` for ``method`` ``"sgd"`` or ``"gaussian_sgd"`` (the same keys, the same
    runs) plus :func:`run_events`' per-run lists and ``cpu_seconds`` (process time)."""
    t0, c0 = time.perf_counter(), time.process_time()
    method = check_choice("method", p["method"], ("sgd", "gaussian_sgd"))
    lr, weight_decay = float(p["lr"]), float(p["weight_decay"])
    problem = epsilon_completion(EXP.eps)
    res = simulate(method, replicate(_start(weight_decay), p["n_runs"]), problem, lr=lr, weight_decay=weight_decay,
                   t_max=p["t_max"], rec_dt=p["rec_dt"], seed=p["seed"], m=p.get("m", 1), batch_size=p.get("S", 1),
                   increments=p.get("increments", "gaussian"))
    return {**summarize(res, p["t_max"]), "tau": 0.0, **run_events(res.singular_values, res.times),
            "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}


def _task(law: str, lr: float, S: int, seed: int) -> tuple[str, dict]:
    p = dict(method="sgd" if law == "sgd" else "gaussian_sgd", lr=lr, weight_decay=HOT[1], n_runs=RUNS_PER_TASK,
             t_max=T_MAX, rec_dt=REC_DT, seed=seed)
    if S != 1:
        p["S"] = S
    if law in ("rademacher", "bernoulli"):
        p["increments"] = law
    return "dynamics_events", p


def control_tasks() -> list[tuple[str, dict]]:
    """The tasks ``(kind, params)`` of §3.2's controls (kind ``"dynamics_events"``: :func:`dynamics_events_task`).

    * every §3.2 row again on the grid's seeds (:data:`GRID_SEEDS`: the same 64 runs, now with their events);
    * fresh seeds (:data:`FRESH_SEEDS`, 128 runs more) at T = 0.15 for the ±1 and Gaussian laws at both
      (η, S) = (0.15, 1) and (0.3, 2), and for SGD and the Bernoulli law at η = 0.15, S = 1 — the nonnegative
      control at a step where every one of its steps is stable (:func:`largest_stable_lr` ≈ 0.17).
    """
    tasks = [_task(law, lr, S, s) for lr, S in CONTROL_POINTS for law in LAWS for s in GRID_SEEDS]
    fresh = [(law, 0.15, 1) for law in LAWS] + [(law, 0.3, 2) for law in ("gaussian", "rademacher")]
    tasks += [_task(law, lr, S, s) for law, lr, S in fresh for s in FRESH_SEEDS]
    return tasks


# ----------------------------------------------------------------------------------------------- pooled rows
def _law_of(params: dict) -> str:
    return "sgd" if params["method"] == "sgd" else params.get("increments", "gaussian")


@dataclass(frozen=True)
class ControlRow:
    """What the runs of one law at (η, S) did, pooled over their tasks (counts are runs).

    Attributes:
        law, lr, batch_size, n_runs, seeds: the law, η, S, runs and the tasks' seeds.
        jumped: a record at rank ≤ 1 (s₂ ≤ 10⁻³): the stored grid's count, which includes runs at A ≈ 0.
        fit_first: the first record at rank ≤ 1 has a rank-1 fit (s₁ > 10⁻³).
        collapse_first: the first record at rank ≤ 1 is already at A ≈ 0 (no rank-1 fit recorded).
        jumped_fit: some record at rank 1 with a rank-1 fit.  collapsed: some record at A ≈ 0 (s₁ ≤ 10⁻³).
        fit_then_collapsed: a rank-1 fit recorded, then A ≈ 0.  collapsed_end: at A ≈ 0 at the end.
        diverged: blew up (the engine's rule).  min_s1_at_jump: the smallest s₁ at a first record at rank ≤ 1 (the
            rank-1 minimum's s₁ is about 2: a small value is a run on its way to A ≈ 0; NaN if none jumped).
        wait_fit: mean first time at rank 1 with a rank-1 fit, ``(mean, lo, hi)`` (censored exponential, 95 %; a
            run's time at risk ends at its blow-up or its first record at A ≈ 0); events_fit, exposure_fit: its
            events and time at risk.
    """

    law: str
    lr: float
    batch_size: int
    n_runs: int
    seeds: tuple
    jumped: int
    fit_first: int
    collapse_first: int
    jumped_fit: int
    collapsed: int
    fit_then_collapsed: int
    collapsed_end: int
    diverged: int
    min_s1_at_jump: float
    wait_fit: tuple
    events_fit: int
    exposure_fit: float

    @property
    def temperature(self) -> float:
        return self.lr / self.batch_size

    def share(self, count: str) -> tuple:
        """Wilson 95 % ``(p, lo, hi)`` of the attribute ``count`` (e.g. ``"jumped_fit"``) among the runs."""
        return wilson(getattr(self, count), self.n_runs)


def _times(results, key) -> np.ndarray:
    return np.array([np.nan if v is None else v for r in results for v in r[key]], dtype=float)


def _pool(law: str, lr: float, S: int, seeds: tuple, results: list[dict]) -> ControlRow:
    if not results:
        raise ValueError(f"no control task for {law} at η = {lr}, S = {S}")
    for r in results:
        missing = [k for k in EVENT_KEYS if k not in r]
        if missing:
            raise ValueError(f"a result without the event keys {missing}: not a dynamics_events task")
    tj, tf, tc, td = (_times(results, k) for k in ("t_jump", "t_jump_fit", "t_collapse", "t_diverged"))
    s1 = _times(results, "s1_at_jump")
    t_max = np.concatenate([np.full(r["n_runs"], r["t_max"]) for r in results])
    end = np.fmin(np.fmin(td, tc), t_max)  # fmin: a NaN (no such event) does not end the time at risk
    w = censored_exponential(tf, end)
    jumped = np.isfinite(tj)
    return ControlRow(law, float(lr), int(S), int(tj.size), tuple(seeds), int(jumped.sum()),
                      int(np.sum(jumped & (s1 > DEFAULT_RANK_TOL))), int(np.sum(jumped & (s1 <= DEFAULT_RANK_TOL))),
                      int(np.isfinite(tf).sum()), int(np.isfinite(tc).sum()), int(np.sum(tf < tc)),
                      int(sum(sum(r["collapsed_end"]) for r in results)), int(np.isfinite(td).sum()),
                      float(np.nanmin(s1)) if np.isfinite(s1).any() else float("nan"),
                      (w["mean"], w["lo"], w["hi"]), int(w["events"]), float(w["exposure"]))


def control_rows(tasks, seeds=None) -> dict:
    """Pool the ``dynamics_events`` tasks per (law, η, S): ``{(law, η, S): ControlRow}``; only the tasks whose seed is
    in ``seeds`` (None: all; :data:`GRID_SEEDS`: the stored grid's runs)."""
    groups: dict = {}
    for t in tasks:
        if t["kind"] != "dynamics_events":
            continue
        p = t["params"]
        if seeds is not None and p["seed"] not in seeds:
            continue
        groups.setdefault((_law_of(p), float(p["lr"]), int(p.get("S", 1))), []).append(t)
    return {key: _pool(*key, tuple(sorted(t["params"]["seed"] for t in ts)), [t["result"] for t in ts])
            for key, ts in sorted(groups.items())}


def fixed_temperature_ratio(rows: dict, law: str, a=(0.15, 1), b=(0.3, 2)) -> tuple:
    """Rate of first jumps to a rank-1 fit at ``a`` over the rate at ``b`` (same T = η/S), ``(ratio, lo, hi)``
    (exact 95 %, :func:`~.blowup.rate_ratio`; NaN when either side has no event)."""
    ra, rb = rows[(law, *a)], rows[(law, *b)]
    return rate_ratio(ra.events_fit, ra.exposure_fit, rb.events_fit, rb.exposure_fit)


def grid_mismatches(tasks, grid) -> int:
    """Runs of the control tasks on the grid's seeds whose ``t_jump``, ``t_diverged`` or ``collapsed_end`` differ
    from the stored grid's task with the same parameters (a task with no stored twin counts all its runs)."""
    bad = 0
    for t in tasks:
        p = t["params"]
        if p["seed"] not in GRID_SEEDS:
            continue
        sel = {"S": 1, "m": 1, "increments": "gaussian",
               **{k: v for k, v in p.items() if k not in ("n_runs", "rec_dt")}}
        twins = grid.select("dynamics", **sel)
        if len(twins) != 1:
            bad += p["n_runs"]
            continue
        for key in ("t_jump", "t_diverged", "collapsed_end"):
            bad += sum(x != y for x, y in zip(t["result"][key], twins[0][key], strict=True))
    return bad


# ----------------------------------------------------------------------------------------------- tables
@dataclass(frozen=True)
class Table:
    """A table as data: ``columns`` (names) and ``rows`` (tuples of numbers and strings); :meth:`text` prints it."""

    title: str
    columns: tuple
    rows: tuple

    def text(self) -> str:
        cells = [self.columns] + [tuple(_cell(v) for v in r) for r in self.rows]
        width = [max(len(str(r[i])) for r in cells) for i in range(len(self.columns))]
        lines = [self.title] + ["  ".join(str(v).rjust(w) for v, w in zip(r, width)) for r in cells]
        return "\n".join(lines)


def _cell(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, tuple) and len(v) == 3 and all(isinstance(x, float) for x in v):
        return f"{v[0]:.3g} [{v[1]:.3g}, {v[2]:.3g}]"
    return str(v)


LAW_NAMES = {"sgd": "SGD", "gaussian": "Gaussian", "rademacher": "±1", "bernoulli": "Bernoulli"}


def report_tables(laws: dict, rows: dict, grid_rows: dict | None = None) -> dict:
    """§3.2's tables as data: ``{"steps", "runs", "fixed_T"}`` (:class:`Table`).

    * ``steps`` (from :func:`step_laws`): per law and (η, S), the largest total weight of a step and its
      probability, ``W(λ_max − 2γ) + 2γη`` for it (stable iff < 2), P(a step is unstable by its total weight),
      P(a step's own top curvature ``λ_max(Σ w_k ∇²ℓ_k) + 2γη`` is ≥ 2) with its largest value, and the most
      negative entry weight;
    * ``runs`` (from :func:`control_rows`): the grid's "jumped" against the runs with a rank-1 fit first, those at
      A ≈ 0 first, every collapse, blow-ups, and the mean wait to a rank-1 fit; ``grid_rows`` (the grid's seeds
      only) adds the stored 64 runs' counts as separate lines;
    * ``fixed_T``: at T = 0.15, the rate of jumps to a rank-1 fit at (0.15, 1) over (0.3, 2), per law.
    """
    steps = tuple((LAW_NAMES[law], lr, S, lr / S, s.largest_total, s.p_largest, s.stability,
                   "yes" if s.largest_stable else "no", s.p_unstable_total, s.p_unstable_pattern, s.max_curvature,
                   s.min_weight) for (law, lr, S), s in laws.items())
    run_rows = []
    for name, rs in (("grid's 64", grid_rows or {}), ("all", rows)):
        for (law, lr, S), r in rs.items():
            run_rows.append((LAW_NAMES[law], lr, S, name, r.n_runs, r.jumped, r.fit_first, r.collapse_first,
                             r.collapsed, r.collapsed_end, r.diverged, r.min_s1_at_jump, r.share("jumped_fit"),
                             r.wait_fit))
    fixed = []
    for law in LAWS:
        if (law, 0.15, 1) in rows and (law, 0.3, 2) in rows:
            a, b = rows[(law, 0.15, 1)], rows[(law, 0.3, 2)]
            fixed.append((LAW_NAMES[law], f"{a.events_fit}/{a.n_runs}", a.exposure_fit, f"{b.events_fit}/{b.n_runs}",
                          b.exposure_fit, tuple(float(x) for x in fixed_temperature_ratio(rows, law))))
    return {
        "steps": Table("One step's weights at the rank-2 minimum (γ = 0.027): stable iff the value < 2",
                       ("law", "η", "S", "T", "largest Σw", "P(largest)", "W(λ−2γ)+2γη", "stable",
                        "P(unstable Σw)", "P(curv ≥ 2)", "max curv", "min w_k"), steps),
        "runs": Table("What the runs did (γ = 0.027, t ≤ 12 000): at rank ≤ 1 with a rank-1 fit first, or A ≈ 0 first",
                      ("law", "η", "S", "runs of", "n", "jumped", "fit first", "A≈0 first", "A≈0 ever", "A≈0 end",
                       "blew up", "min s₁ at jump", "rank-1 fit: share [95 %]", "mean wait to fit [95 %]"),
                      tuple(run_rows)),
        "fixed_T": Table("T = 0.15: jumps to a rank-1 fit at (η, S) = (0.15, 1) against (0.3, 2); rate ratio [95 %]",
                         ("law", "fits (0.15, 1)", "time at risk", "fits (0.3, 2)", "time at risk",
                          "rate ratio [95 %]"), tuple(fixed)),
    }


@dataclass(frozen=True, eq=False)
class ControlReport:
    """Everything §3.2 prints and asserts about its controls.

    Attributes:
        laws: :func:`step_laws` ``{(law, η, S): StepLaw}``.  lam_max: top Hessian eigenvalue of 𝓛_γ at the rank-2
            minimum.  largest_stable_lr: :func:`largest_stable_lr` (the Bernoulli law's largest step is stable
            below it, at every S).
        rows: :func:`control_rows` over every seed; grid_rows: over the stored grid's seeds only.
        mismatches: :func:`grid_mismatches` (0: the control tasks on the grid's seeds are the grid's runs).
        tables: :func:`report_tables`.
    """

    laws: dict
    lam_max: float
    largest_stable_lr: float
    rows: dict
    grid_rows: dict
    mismatches: int
    tables: dict

    def text(self) -> str:
        """The three tables and the stability boundary, as §3.2 prints them."""
        b = self.grid_rows.get(("bernoulli", 0.3, 1))
        head = [f"λ_max = {self.lam_max:.3f} at the rank-2 minimum: the Bernoulli control's largest step (every entry "
                f"sampled, total weight Nη) is stable for η < {self.largest_stable_lr:.3f}, at every S",
                f"control runs on the grid's seeds that differ from the grid's: {self.mismatches}"]
        if b is not None:
            head.append(f"Bernoulli, η = 0.3, S = 1: {b.jumped_fit}/{b.n_runs} runs reached a rank-1 fit, "
                        f"{b.fit_then_collapsed} of them then A = 0")
        return "\n\n".join(["\n".join(head)] + [t.text() for t in self.tables.values()])


def report(tasks, grid, weight_decay: float = HOT[1]) -> ControlReport:
    """:class:`ControlReport` from the ``dynamics_events`` tasks (a grid's tasks: the other kinds are left out) and
    the stored grid (:func:`~.experiments.load_grid`)."""
    tasks = [t for t in tasks if t.get("kind", "dynamics_events") == "dynamics_events"]   # a grid's other kinds
    laws = step_laws(weight_decay=weight_decay)
    lam = next(iter(laws.values())).lam_max
    rows, grid_rows = control_rows(tasks), control_rows(tasks, GRID_SEEDS)
    return ControlReport(laws, lam, largest_stable_lr(epsilon_completion(EXP.eps).n_observed, lam, weight_decay), rows,
                         grid_rows, grid_mismatches(tasks, grid), report_tables(laws, rows, grid_rows))
