"""The jump event made quantitative (Notebook 05 §4): k*, the waiting-time formula, the routes, equal row counts.

The reply of Wang & Jacot (arXiv 2305.16038) guarantees a jump under the event "SGD samples only from the same
rows (or columns) for a long time". On the ε-completion (Ω = {(0,0), (0,1), (1,1)}) row 0 and column 1 hold
two of the three observed entries each, so each step samples from one of them with probability p = 2/3 (row 1
and column 0: 1/3). This module (this project's construction):

* :func:`route_entries` — the observed entries a route samples (``"row0"``, ``"col1"``, ``"row1"``, ``"col0"``);
* :func:`kstar_task` — the smallest number k* of consecutive samples from a route after which GD at the same
  (η, γ) completes the jump (s₂(A) ≤ rank_tol and θ ∈ B_1), over random forced sequences;
* :func:`run_waiting_time` — ``E_k = (1 − p^k) / ((1 − p) p^k)``, the mean number of i.i.d. trials until the
  first run of k successes; :func:`simulate_run_waiting_time` checks it by Monte Carlo;
* :func:`two_route_waiting_time` — the exact mean wait for a k_row-run of row 0 *or* a k_col-run of column 1
  (the entry (0,1) extends both), by first-step analysis on the pair of current run lengths;
* :func:`waiting_task` — SGD from the rank-2 minimum: the first step at rank ≤ 1 and the route taken;
* :func:`staircase_problem`, :func:`staircase_task` — a 2×3 problem with two observed entries in every row.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.seeding import stream
from ..core.validation import check_in_range, check_int
from ._sde_kernels import weighted_chunk
from .analysis import replicate
from .engine import run
from .experiments import EPSILON_EXPERIMENT as EXP
from .experiments import start_minimum
from .network import DEFAULT_RANK_TOL, Params, balanced_factorisation, end_to_end, make_architecture, singular_values
from .problems import CompletionProblem, epsilon_completion
from .sde import run_sgd_weights, sgd_entry_weights
from .stepping import DIVERGENCE_RESIDUAL, flush_threshold

__all__ = ["ROUTES", "STAIRCASE_EPS", "kstar_task", "route_entries", "route_probability", "run_waiting_time",
           "simulate_run_waiting_time", "staircase_problem", "staircase_start", "staircase_task",
           "two_route_waiting_time", "waiting_task"]

#: Routes: which row or column of A the forced samples come from.
ROUTES = {"row0": ("row", 0), "col1": ("col", 1), "row1": ("row", 1), "col0": ("col", 0)}
#: GD steps after the forced stretch that decide whether the jump completed.
KSTAR_GD_STEPS = 3000
#: The staircase's small entry (its rank-2 point is a GD minimum at η = 0.3, γ = 0.027).
STAIRCASE_EPS = 0.15


def route_entries(problem: CompletionProblem, route: str) -> np.ndarray:
    """Indices (into ``problem.entries``) of the observed entries a forced run of ``route`` samples."""
    if route not in ROUTES:
        raise ValueError(f"route must be one of {sorted(ROUTES)}, got {route!r}")
    kind, k = ROUTES[route]
    rows, cols, _ = problem.entries
    return np.flatnonzero(rows == k if kind == "row" else cols == k)


def route_probability(problem: CompletionProblem, route: str) -> float:
    """p: the probability that one batch-1 SGD step samples from ``route`` (its share of the observed entries)."""
    return route_entries(problem, route).size / problem.n_observed


def run_waiting_time(k: int, p: float) -> float:
    """Mean number of i.i.d. trials until the first run of ``k`` successes (success probability ``p``).

    ``E_k = (1 − p^k) / ((1 − p) p^k)``, from ``E_k = (E_{k−1} + 1)/p``, ``E_0 = 0``: reach a run of k − 1, then
    one more trial either completes it (probability p) or restarts the count.
    """
    k = check_int("k", k, minimum=0)
    p = check_in_range("p", p, 0.0, 1.0)
    if k == 0:
        return 0.0
    if p == 0.0:
        return float("inf")
    if p == 1.0:
        return float(k)
    return (1.0 - p**k) / ((1.0 - p) * p**k)


def simulate_run_waiting_time(k: int, p: float, n_seq: int = 20_000, seed: int = 0) -> tuple[float, float]:
    """Monte-Carlo mean (and its standard error) of the trials until a run of ``k`` successes, ``n_seq`` sequences."""
    k, n_seq = check_int("k", k, minimum=1), check_int("n_seq", n_seq, minimum=2)
    p = check_in_range("p", p, 0.0, 1.0, closed=False)
    rng = stream(seed)
    waits = np.empty(n_seq)
    for s in range(n_seq):
        run_len, n = 0, 0
        while run_len < k:
            block = rng.random(256) < p
            for b in block:
                n += 1
                run_len = run_len + 1 if b else 0
                if run_len == k:
                    break
        waits[s] = n
    return float(waits.mean()), float(waits.std(ddof=1) / np.sqrt(n_seq))


def two_route_waiting_time(k_row: int, k_col: int) -> float:
    """Mean number of steps until k_row consecutive row-0 samples **or** k_col column-1 samples (ε-completion).

    Entries (0,0), (0,1), (1,1) have probability 1/3 each; (0,0) extends the row-0 run and breaks the column run,
    (1,1) the opposite, (0,1) extends both. Exact: first-step analysis ``E(a, b) = 1 + Σ_next ⅓ E(next)`` on the
    current run lengths, with ``E = 0`` once a ≥ k_row or b ≥ k_col.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve

    k_row, k_col = check_int("k_row", k_row, minimum=1), check_int("k_col", k_col, minimum=1)
    n = k_row * k_col  # state (a, b) ↦ a·k_col + b; at most 3 transitions per state: a sparse system
    rows, cols, vals = list(range(n)), list(range(n)), [1.0] * n
    for a in range(k_row):
        for b in range(k_col):
            for na, nb in ((a + 1, 0), (a + 1, b + 1), (0, b + 1)):
                if na < k_row and nb < k_col:
                    rows.append(a * k_col + b)
                    cols.append(na * k_col + nb)
                    vals.append(-1.0 / 3.0)
    M = coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsc()
    return float(np.atleast_1d(spsolve(M, np.ones(n)))[0])


def _problem_and_start(name: str, lam: float) -> tuple[CompletionProblem, Params]:
    if name == "eps":
        return epsilon_completion(EXP.eps), start_minimum(lam=lam)[0]
    if name == "staircase":
        problem = staircase_problem()
        return problem, staircase_start(problem, lam)
    raise ValueError(f"problem must be 'eps' or 'staircase', got {name!r}")


def kstar_task(p: dict) -> dict:
    """k*: the smallest number of consecutive samples from one route after which GD finishes the jump.

    For each of ``n_seq`` random forced sequences (uniform over the route's entries; stream ``seed``), forced SGD
    runs from the rank-2 minimum with snapshots at every k of ``k_grid``; from each snapshot GD at the same (η, γ)
    runs ``gd_steps`` steps; success = s₂(A) ≤ the rank threshold and θ ∈ B_1 at the end. k* = the smallest
    successful k of the grid (−1: none); ``monotone``: every larger k succeeded too.
    Keys: ``lr, lam, route, n_seq, k_grid, gd_steps, seed`` (``problem``: ``"eps"`` | ``"staircase"``).
    """
    t0 = time.perf_counter()
    lr, lam = float(p["lr"]), float(p["lam"])
    problem, base = _problem_and_start(p.get("problem", "eps"), lam)
    ks = np.asarray(sorted(p["k_grid"]), dtype=np.int64)
    n_seq = check_int("n_seq", p["n_seq"], minimum=1)
    pool = route_entries(problem, p["route"])
    kmax = int(ks.max())
    idx = pool[stream(p["seed"]).integers(0, pool.size, size=(n_seq, kmax))]
    arch = base.arch
    w = sgd_entry_weights(idx[:, :, None], problem.n_observed, lr)
    theta = np.repeat(base.flat[:1], n_seq, axis=0)
    snaps = np.empty((n_seq, ks.size, arch.n_params))
    rows, cols, vals = problem.entries
    div = np.full(n_seq, -1, dtype=np.int64)
    weighted_chunk(theta, np.asarray(arch.dims, dtype=np.int64), arch.offsets, rows, cols, vals, w,
                   np.full(kmax, 1 - 2 * lr * lam), np.empty((n_seq, 0, arch.n_params)), np.zeros(kmax), ks, snaps,
                   div, 0, DIVERGENCE_RESIDUAL, flush_threshold(arch.depth))
    after = Params(arch, snaps.reshape(-1, arch.n_params))
    gd_steps = int(p.get("gd_steps", KSTAR_GD_STEPS))
    gd = run(after, problem, gd_steps, method="gd", lr=lr, lam=lam, record_every=gd_steps)
    ok = ((gd.singular_values[:, -1, 1] <= DEFAULT_RANK_TOL) & gd.in_B[:, -1, 1] & ~gd.diverged).reshape(n_seq,
                                                                                                          ks.size)
    kstar = np.where(ok.any(axis=1), ks[np.argmax(ok, axis=1)], -1)
    mono = [bool(ok[s, np.argmax(ok[s]):].all()) if ok[s].any() else True for s in range(n_seq)]
    frac = ok.mean(axis=0)
    return {"kstar": kstar.tolist(), "monotone": mono, "success_fraction": frac.tolist(), "k_grid": ks.tolist(),
            "route": p["route"], "p_route": pool.size / problem.n_observed, "seconds": time.perf_counter() - t0}


def _route_at_jump(A_jump: np.ndarray, A0: np.ndarray, problem_name: str):
    """Which route a jump took, read off which part of A shrank most relative to the start."""
    if problem_name == "eps":  # A₂₂ shrank ⇒ row 1 silenced ⇒ row-0 route; A₁₁ shrank ⇒ column-1 route
        ratio = np.abs(np.diag(A_jump)) / np.abs(np.diag(A0))
        return ("row0", "col1")[int(np.argmin(ratio[::-1]))]
    ratios = (np.linalg.norm(A_jump[1]) / np.linalg.norm(A0[1]), np.linalg.norm(A_jump[0]) / np.linalg.norm(A0[0]),
              np.linalg.norm(A_jump[:, [0, 2]]) / np.linalg.norm(A0[:, [0, 2]]))
    return ("row0", "row1", "col1")[int(np.argmin(ratios))]


def waiting_task(p: dict) -> dict:
    """SGD (batch 1) from the rank-2 minimum at (η, γ): per run, the first step at rank ≤ 1 and the route taken.

    Keys: ``lr, lam, n_runs, n_steps, rec_steps, seed`` (``problem``: ``"eps"`` | ``"staircase"``). Route: see
    :func:`_route_at_jump` (row-0 route ⇔ row 1 of A silenced).
    """
    t0 = time.perf_counter()
    name = p.get("problem", "eps")
    problem, base = _problem_and_start(name, float(p["lam"]))
    res = run_sgd_weights(replicate(base, p["n_runs"]), problem, p["n_steps"], lr=p["lr"], lam=p["lam"],
                          seed=p["seed"], record_every=p["rec_steps"], record_layers=False, keep_A=True)
    A, A0 = res.settings["end_to_end"], end_to_end(base)[0]
    s2 = res.singular_values[:, :, 1]
    hit = np.isfinite(s2) & (s2 <= DEFAULT_RANK_TOL)
    jump = np.where(hit.any(axis=1), res.steps[np.argmax(hit, axis=1)], -1)
    route = [None if jump[r] < 0 else _route_at_jump(A[r, int(np.argmax(hit[r]))], A0, name)
             for r in range(res.n_runs)]
    return {"jump_step": jump.tolist(), "route": route, "diverged": res.diverged.tolist(),
            "collapsed": res.collapsed.tolist(), "n_steps": int(p["n_steps"]),
            "start_sv": singular_values(base)[0].tolist(), "seconds": time.perf_counter() - t0}


def staircase_problem(eps: float = STAIRCASE_EPS) -> CompletionProblem:
    """2×3 "staircase": Ω = {(0,0), (0,1), (1,1), (1,2)}, two observed entries in every row, targets (1, ε | 1, ε);
    its rank-1 completion is ``[[1, ε, ε²], [1/ε, 1, ε]]``."""
    target = np.array([[1.0, eps, eps**2], [1.0 / eps, 1.0, eps]])
    mask = np.array([[1, 1, 0], [0, 1, 1]], dtype=bool)
    return CompletionProblem(target, mask, name=f"2×3 staircase (ε = {eps:g})")


def staircase_start(problem: CompletionProblem, lam: float, depth: int = EXP.depth, width: int = EXP.width) -> Params:
    """The staircase's rank-2 GD minimum: GD (η = 0.05, 4·10⁴ steps) from a balanced factorisation of
    ``[[1, ε, 0], [0, 1, ε]]`` (seed 0)."""
    eps = problem.target[0, 1]
    arch = make_architecture(problem.shape, depth, width)
    start = balanced_factorisation(np.array([[1.0, eps, 0.0], [0.0, 1.0, eps]]), arch, seed=0)
    return run(start, problem, EXP.phase0_steps, method="gd", lr=EXP.lr_phase0, lam=lam,
               record_every=EXP.phase0_steps, record_layers=False).final


def staircase_task(p: dict) -> dict:
    """Equal row counts: the route each SGD jump takes in the staircase (:func:`waiting_task` on it)."""
    return waiting_task({**p, "problem": "staircase"})


