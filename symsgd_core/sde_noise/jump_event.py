"""The jump event made quantitative (Notebook 05 §4): k*, the waiting-time formula, the routes, equal row counts.

The reply of Wang & Jacot (arXiv 2305.16038) guarantees a jump under the event "SGD samples only from the same
rows (or columns) for a long time". On the ε-completion (Ω = {(0,0), (0,1), (1,1)}) row 0 and column 1 hold
two of the three observed entries each, so each step samples from one of them with probability p = 2/3 (row 1
and column 0: 1/3). This module (this project's construction):

* :func:`route_entries` — the observed entries a route samples (``"row0"``, ``"col1"``, ``"row1"``, ``"col0"``,
  or ``"avoidIJ"``: every observed entry but (I, J));
* :func:`kstar_task` — the smallest number k* of consecutive samples from a route after which GD at the same
  (η, γ) completes the jump (s₂(A) ≤ rank_tol and θ ∈ B_1), over random forced sequences;
  :func:`kstar_from_success` — the two rules for k* ("first" success, or "stable": every larger k succeeds);
* :func:`run_waiting_time` — ``E_k = (1 − p^k) / ((1 − p) p^k)``, the mean number of i.i.d. trials until the
  first run of k successes; :func:`simulate_run_waiting_time` checks it by Monte Carlo;
* :func:`two_route_waiting_time` — the exact mean wait for a k_row-run of row 0 *or* a k_col-run of column 1
  (the entry (0,1) extends both), by first-step analysis on the pair of current run lengths;
  :func:`avoid_waiting_time` — the same for any set of "entry e not sampled for k_e steps" events;
* :func:`waiting_task` — SGD from the rank-2 minimum: the first step at rank ≤ 1, the end-state label and (with
  ``samples``) the longest run of each route in the samples before the jump and in a control window;
* route attribution: :func:`end_state_label` (what the stored grid's route counts are: the shape of A at the
  first record at rank ≤ 1 — **not** the route, see its docstring); :func:`forced_path` (a forced run then GD,
  recorded as SGD is); :func:`sgd_with_samples` (SGD that keeps its samples), :func:`longest_route_runs` and
  :func:`classify_route` (a route is *taken* when a run of ≥ k* of its samples precedes the jump).
* :func:`staircase_problem`, :func:`staircase_task` — a 2×3 problem with two observed entries in every row.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.seeding import stream, streams
from ..core.validation import check_choice, check_in_range, check_int
from ..dln import (
    DEFAULT_RANK_TOL,
    DIVERGENCE_RESIDUAL,
    CompletionProblem,
    Params,
    balanced_factorisation,
    end_to_end,
    epsilon_completion,
    flush_threshold,
    make_architecture,
    replicate,
    run,
    run_sgd_weights,
    sgd_entry_weights,
    singular_values,
    weighted_chunk,
)
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from ..rank_jumps.experiments import start_minimum

__all__ = ["AMBIGUOUS", "KSTAR_RULES", "NO_ROUTE", "REPLY_ROUTES", "ROUTES", "STAIRCASE_EPS", "avoid_waiting_time",
           "classify_route", "end_state_label", "forced_path", "forced_states", "kstar_from_success", "kstar_task",
           "longest_route_runs", "route_entries", "route_probability", "run_waiting_time", "sgd_with_samples",
           "silenced_entries", "simulate_run_waiting_time", "staircase_problem", "staircase_start",
           "staircase_task", "two_route_waiting_time", "waiting_task"]

#: Routes: which row or column of A the forced samples come from.
ROUTES = {"row0": ("row", 0), "col1": ("col", 1), "row1": ("row", 1), "col0": ("col", 0)}
#: GD steps after the forced stretch that decide whether the jump completed.
KSTAR_GD_STEPS = 3000
#: The staircase's small entry (its rank-2 point is a GD minimum at η = 0.3, γ = 0.027).
STAIRCASE_EPS = 0.15
#: The rules of :func:`kstar_from_success`.
KSTAR_RULES = ("first", "stable")
#: The reply's routes (rows/columns with the most observed entries) per problem, as :func:`waiting_task` reads them.
REPLY_ROUTES = {"eps": ("row0", "col1"), "staircase": ("row0", "row1", "col1")}
#: :func:`classify_route`'s labels when no route, or more than one, was taken.
NO_ROUTE, AMBIGUOUS = "none", "ambiguous"


def route_entries(problem: CompletionProblem, route: str) -> np.ndarray:
    """Indices (into ``problem.entries``, int ``(n_route,)``) of the observed entries a forced run of ``route`` samples.

    ``route``: a key of :data:`ROUTES` (one row or column), or ``"avoidIJ"`` (single digits I, J): every observed
    entry except (I, J) — on the ε-completion ``"avoid11"`` is ``"row0"``, ``"avoid00"`` is ``"col1"`` and
    ``"avoid01"`` samples the diagonal only.
    """
    rows, cols, _ = problem.entries
    if isinstance(route, str) and len(route) == 7 and route.startswith("avoid") and route[5:].isdigit():
        i, j = int(route[5]), int(route[6])
        keep = ~((rows == i) & (cols == j))
        if keep.all():
            raise ValueError(f"route {route!r}: ({i}, {j}) is not an observed entry")
        return np.flatnonzero(keep)
    if route not in ROUTES:
        raise ValueError(f"route must be one of {sorted(ROUTES)} or 'avoidIJ', got {route!r}")
    kind, k = ROUTES[route]
    return np.flatnonzero(rows == k if kind == "row" else cols == k)


def silenced_entries(problem: CompletionProblem, route: str) -> np.ndarray:
    """Indices (into ``problem.entries``) of the observed entries a forced run of ``route`` never samples: the
    ones weight decay shrinks during the run (the complement of :func:`route_entries`)."""
    return np.setdiff1d(np.arange(problem.n_observed), route_entries(problem, route))


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


def avoid_waiting_time(k_avoid: dict, probs) -> float:
    """Mean number of steps until some tracked entry e has not been sampled for ``k_avoid[e]`` consecutive steps.

    Args:
        k_avoid: ``{entry index: k}``: the events "entry e avoided for k steps" (entry index into the sampled
            entries, k ≥ 1). On the ε-completion ``{2: k_row0, 0: k_col1}`` is :func:`two_route_waiting_time`
            (row 0 = avoid (1,1), column 1 = avoid (0,0)); adding ``1: k_diag`` adds the diagonal route.
        probs: ``(N,)`` the sampling probabilities of all N entries (sum 1).

    Exact: first-step analysis on the tracked entries' times since their last sample (each step resets the
    sampled entry's counter and advances the others), one sparse linear system over ``Π k_e`` states (refused
    above 2·10⁶ states).
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve

    probs = np.asarray(probs, dtype=float)
    if probs.ndim != 1 or np.any(probs < 0) or abs(probs.sum() - 1.0) > 1e-12:
        raise ValueError("probs must be a probability vector")
    ents = sorted(k_avoid)
    if not ents or any(not 0 <= e < probs.size for e in ents):
        raise ValueError(f"k_avoid must name entries in [0, {probs.size})")
    ks = [check_int(f"k_avoid[{e}]", k_avoid[e], minimum=1) for e in ents]
    n = int(np.prod(ks))
    if n > 2_000_000:
        raise ValueError(f"{n} states: too many for the exact chain")
    grid = np.indices(ks).reshape(len(ks), -1)  # (n_tracked, n): the counters of every state
    src = np.arange(n)
    rows, cols, vals = [src], [src], [np.ones(n)]
    for j, pj in enumerate(probs):
        if pj == 0:
            continue
        nxt = grid + 1
        if j in ents:
            nxt[ents.index(j)] = 0
        alive = np.all(nxt < np.asarray(ks)[:, None], axis=0)
        rows.append(src[alive])
        cols.append(np.ravel_multi_index(tuple(nxt[:, alive]), ks))
        vals.append(np.full(int(alive.sum()), -pj))
    M = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)).tocsc()
    return float(np.atleast_1d(spsolve(M, np.ones(n)))[0])


def _problem_and_start(name: str, weight_decay: float) -> tuple[CompletionProblem, Params]:
    if name == "eps":
        return epsilon_completion(EXP.eps), start_minimum(weight_decay=weight_decay)[0]
    if name == "staircase":
        problem = staircase_problem()
        return problem, staircase_start(problem, weight_decay)
    raise ValueError(f"problem must be 'eps' or 'staircase', got {name!r}")


def kstar_from_success(ok, k_grid, rule: str = "first") -> np.ndarray:
    """k* per forced sequence from its success table.

    Args:
        ok: bool ``(n_seq, n_k)``: GD completed the jump after ``k_grid[j]`` forced samples of sequence s.
        k_grid: int ``(n_k,)``, increasing: the numbers of forced samples tried.
        rule: ``"first"`` — the smallest k of the grid that succeeded; ``"stable"`` — the smallest k of the grid
            such that every k' ≥ k of the grid succeeded (so a success followed by a failure does not count).

    Returns:
        int ``(n_seq,)``: k* per sequence, −1 where no k (``"first"``) or not the largest k (``"stable"``) succeeded.
    """
    rule = check_choice("rule", rule, KSTAR_RULES)
    ok = np.asarray(ok, dtype=bool)
    ks = np.asarray(k_grid, dtype=np.int64)
    if ok.ndim != 2 or ok.shape[1] != ks.size:
        raise ValueError(f"ok must be (n_seq, {ks.size}), got {ok.shape}")
    if ks.size > 1 and np.any(np.diff(ks) <= 0):
        raise ValueError("k_grid must be strictly increasing")
    if rule == "first":
        return np.where(ok.any(axis=1), ks[np.argmax(ok, axis=1)], -1)
    tail = np.flip(np.logical_and.accumulate(np.flip(ok, axis=1), axis=1), axis=1)  # tail[s, j]: all of ok[s, j:]
    return np.where(tail[:, -1], ks[np.argmax(tail, axis=1)], -1)


def _forced_indices(problem: CompletionProblem, route: str, n_seq: int, k: int, seed: int) -> np.ndarray:
    """Forced sequences: int ``(n_seq, k)`` indices into ``problem.entries``, uniform over the route's entries."""
    pool = route_entries(problem, route)
    return pool[stream(seed).integers(0, pool.size, size=(n_seq, k))]


def forced_states(problem: CompletionProblem, base: Params, lr: float, weight_decay: float, route: str, k_grid,
                  n_seq: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Forced SGD from ``base`` (one run): ``n_seq`` sequences of ``max(k_grid)`` samples from ``route``.

    Returns:
        ``(snaps, idx)``: float ``(n_seq, n_k, n_params)`` the parameters after ``k_grid[j]`` forced steps, and
        the sequences, int ``(n_seq, max k)`` (indices into ``problem.entries``; stream ``seed``).
    """
    ks = np.asarray(k_grid, dtype=np.int64)
    kmax = int(ks.max())
    idx = _forced_indices(problem, route, n_seq, kmax, seed)
    arch = base.arch
    w = sgd_entry_weights(idx[:, :, None], problem.n_observed, lr)
    theta = np.repeat(base.flat[:1], n_seq, axis=0)
    snaps = np.empty((n_seq, ks.size, arch.n_params))
    rows, cols, vals = problem.entries
    div = np.full(n_seq, -1, dtype=np.int64)
    weighted_chunk(theta, np.asarray(arch.dims, dtype=np.int64), arch.offsets, rows, cols, vals, w,
                   np.full(kmax, 1 - 2 * lr * weight_decay), np.empty((n_seq, 0, arch.n_params)), np.zeros(kmax),
                   ks, snaps, div, 0, DIVERGENCE_RESIDUAL, flush_threshold(arch.depth))
    return snaps, idx


def kstar_task(p: dict) -> dict:
    """k*: the smallest number of consecutive samples from one route after which GD finishes the jump.

    For each of ``n_seq`` random forced sequences (uniform over the route's entries; stream ``seed``), forced SGD
    runs from the rank-2 minimum with snapshots at every k of ``k_grid``; from each snapshot GD at the same (η, γ)
    runs ``gd_steps`` steps; success = s₂(A) ≤ the rank threshold and θ ∈ B_1 at the end. A sequence can succeed
    at k and fail at k + 1 (the extra sample pushes the state back into B_2), so k* has two definitions
    (:func:`kstar_from_success`): ``kstar_first`` (smallest successful k; −1: none) and ``kstar_stable`` (smallest
    k from which every larger k of the grid succeeds). ``kstar`` is the one named by ``kstar_rule`` (default
    ``"first"``, the stored grid's); ``monotone``: per sequence, the two agree.
    Keys: ``lr, weight_decay, route, n_seq, k_grid, gd_steps, seed`` (``problem``: ``"eps"`` | ``"staircase"``;
    ``kstar_rule``: ``"first"`` | ``"stable"``). The sequences are one ``(n_seq, max k_grid)`` draw: the same seed
    with another largest k gives other sequences.
    """
    t0 = time.perf_counter()
    lr, weight_decay = float(p["lr"]), float(p["weight_decay"])
    problem, base = _problem_and_start(p.get("problem", "eps"), weight_decay)
    ks = np.asarray(sorted(p["k_grid"]), dtype=np.int64)
    n_seq = check_int("n_seq", p["n_seq"], minimum=1)
    rule = check_choice("kstar_rule", p.get("kstar_rule", "first"), KSTAR_RULES)
    snaps, _ = forced_states(problem, base, lr, weight_decay, p["route"], ks, n_seq, p["seed"])
    arch = base.arch
    after = Params(arch, snaps.reshape(-1, arch.n_params))
    gd_steps = int(p.get("gd_steps", KSTAR_GD_STEPS))
    gd = run(after, problem, gd_steps, method="gd", lr=lr, weight_decay=weight_decay, record_every=gd_steps)
    ok = ((gd.singular_values[:, -1, 1] <= DEFAULT_RANK_TOL) & gd.in_B[:, -1, 1] & ~gd.diverged).reshape(n_seq,
                                                                                                          ks.size)
    first, stable = kstar_from_success(ok, ks, "first"), kstar_from_success(ok, ks, "stable")
    mono = [bool(ok[s, np.argmax(ok[s]):].all()) if ok[s].any() else True for s in range(n_seq)]
    frac = ok.mean(axis=0)
    return {"kstar": (first if rule == "first" else stable).tolist(), "kstar_first": first.tolist(),
            "kstar_stable": stable.tolist(), "kstar_rule": rule, "monotone": mono,
            "success_fraction": frac.tolist(), "k_grid": ks.tolist(), "route": p["route"],
            "p_route": route_entries(problem, p["route"]).size / problem.n_observed,
            "seconds": time.perf_counter() - t0}


def end_state_label(A_jump: np.ndarray, A0: np.ndarray, problem_name: str) -> str:
    """The label :func:`waiting_task` stores as ``route``: which part of A is smallest relative to the start,
    read at the **first record at rank ≤ 1** (``A_jump``, ``A0``: ``(m, n)``).

    ε-completion: ``"row0"`` if ``|A₁₁|/|A₁₁⁰| < |A₀₀|/|A₀₀⁰|``, else ``"col1"``; staircase: the smallest of
    ‖row 1‖, ‖row 0‖, ‖columns 0, 2‖ (relative) names ``"row0"``, ``"row1"``, ``"col1"``. It never says "none".

    This is **not** the route the jump took: by the first record at rank ≤ 1 the state has relaxed toward the
    rank-1 minimum, which is the same whichever route was forced (tests/sde_noise/test_sde_noise_jump_event.py): on the
    ε-completion that minimum has ``A₀₀ = A₁₁``, so the label is a tie broken by the transient; on the staircase
    its row 0 is the least grown part, so the label is ``"row1"`` after a forced run of any route.
    """
    if problem_name == "eps":  # A₂₂ shrank ⇒ row 1 silenced ⇒ row-0 route; A₁₁ shrank ⇒ column-1 route
        ratio = np.abs(np.diag(A_jump)) / np.abs(np.diag(A0))
        return ("row0", "col1")[int(np.argmin(ratio[::-1]))]
    ratios = (np.linalg.norm(A_jump[1]) / np.linalg.norm(A0[1]), np.linalg.norm(A_jump[0]) / np.linalg.norm(A0[0]),
              np.linalg.norm(A_jump[:, [0, 2]]) / np.linalg.norm(A0[:, [0, 2]]))
    return ("row0", "row1", "col1")[int(np.argmin(ratios))]


_route_at_jump = end_state_label  # the name the stored grid's code used


def forced_path(problem_name: str, lr: float, weight_decay: float, route: str, k: int, *, n_seq: int = 12,
                seed: int = 5, gd_steps: int = KSTAR_GD_STEPS, record_every: int = 50) -> dict:
    """A jump whose route is known: ``k`` forced samples of ``route`` from the rank-2 minimum, then ``gd_steps``
    GD steps at the same (η, γ), recorded every ``record_every`` steps from the start (as :func:`waiting_task`
    records SGD, so the end of the forced stretch falls between records as it would in SGD).

    Returns:
        dict ``steps`` int ``(K,)`` (0 = the minimum), ``A`` float ``(n_seq, K, m, n)``, ``s2`` ``(n_seq, K)``,
        ``A0`` ``(m, n)`` (the minimum), ``jump_record`` int ``(n_seq,)``: first record with s₂ ≤ the rank
        threshold (−1: none), ``idx`` the forced sequences ``(n_seq, k)``.
    """
    k, n_seq = check_int("k", k, minimum=1), check_int("n_seq", n_seq, minimum=1)
    gd_steps, record_every = check_int("gd_steps", gd_steps, minimum=0), check_int("record_every", record_every,
                                                                                  minimum=1)
    problem, base = _problem_and_start(problem_name, float(weight_decay))
    arch, N = base.arch, problem.n_observed
    idx = _forced_indices(problem, route, n_seq, k, seed)
    n_total = k + gd_steps
    w = np.empty((n_seq, n_total, N))
    w[:, :k] = sgd_entry_weights(idx[:, :, None], N, lr)
    w[:, k:] = lr / N  # GD: every entry with weight η/N (the engine's GD step)
    pos = np.arange(record_every, n_total + 1, record_every, dtype=np.int64)
    snaps = np.empty((n_seq, pos.size, arch.n_params))
    theta = np.repeat(base.flat[:1], n_seq, axis=0)
    rows, cols, vals = problem.entries
    div = np.full(n_seq, -1, dtype=np.int64)
    weighted_chunk(theta, np.asarray(arch.dims, dtype=np.int64), arch.offsets, rows, cols, vals, w,
                   np.full(n_total, 1 - 2 * lr * weight_decay), np.empty((n_seq, 0, arch.n_params)),
                   np.zeros(n_total), pos, snaps, div, 0, DIVERGENCE_RESIDUAL, flush_threshold(arch.depth))
    A0 = end_to_end(base)[0]
    A = np.concatenate([np.broadcast_to(A0, (n_seq, 1, *A0.shape)),
                        end_to_end(Params(arch, snaps.reshape(-1, arch.n_params))).reshape(n_seq, pos.size,
                                                                                           *A0.shape)], axis=1)
    s2 = _singular_values_or_nan(A)[..., 1]
    hit = s2 <= DEFAULT_RANK_TOL
    return {"steps": np.concatenate([[0], pos]), "A": A, "s2": s2, "A0": A0,
            "jump_record": np.where(hit.any(axis=1), np.argmax(hit, axis=1), -1), "idx": idx}


def longest_route_runs(idx, problem: CompletionProblem, routes) -> np.ndarray:
    """The longest stretch of consecutive samples that all belong to each route.

    Args:
        idx: int ``(..., T)``: sampled entries (indices into ``problem.entries``), in step order.
        routes: route names (:func:`route_entries`).

    Returns:
        int ``(..., n_routes)``: per sequence and route, the length (steps) of its longest run.
    """
    idx = np.asarray(idx, dtype=np.int64)
    out = np.zeros((*idx.shape[:-1], len(routes)), dtype=np.int64)
    if idx.shape[-1] == 0:
        return out
    t = np.arange(idx.shape[-1])
    for j, r in enumerate(routes):
        member = np.isin(idx, route_entries(problem, r))
        last_out = np.maximum.accumulate(np.where(member, -1, t), axis=-1)  # last step not in the route, up to t
        out[..., j] = (t - last_out).max(axis=-1)  # the run ending at t has length t − last_out
    return out


def classify_route(runs, routes, kstar: dict) -> list:
    """Route labels from the samples before a jump: the route whose longest run (:func:`longest_route_runs`)
    reached its k*; :data:`NO_ROUTE` if none did; :data:`AMBIGUOUS` if more than one did (e.g. a run of the
    ε-completion's entry (0, 1) alone, which is in row 0 and in column 1).

    ``runs``: int ``(n, n_routes)``; ``kstar``: ``{route: k*}`` (the threshold is k* itself, nothing tuned).
    Rows of −1 (no jump) give None. Returns a list of n labels.
    """
    d = np.atleast_2d(np.asarray(runs, dtype=np.int64))
    if d.shape[-1] != len(routes):
        raise ValueError(f"runs must have {len(routes)} columns (one per route), got {d.shape}")
    ks = np.array([check_int(f"kstar[{r!r}]", kstar[r], minimum=1) for r in routes])
    out = []
    for row in d:
        if np.all(row < 0):
            out.append(None)
            continue
        taken = np.flatnonzero(row >= ks)
        out.append(routes[int(taken[0])] if taken.size == 1 else (NO_ROUTE if taken.size == 0 else AMBIGUOUS))
    return out


def sgd_with_samples(params: Params, problem: CompletionProblem, n_steps: int, *, lr: float, weight_decay: float,
                     seed: int, record_every: int = 50, idx=None, chunk: int = 5000) -> dict:
    """Batch-1 SGD that keeps its samples (the engine's runners do not return them).

    Run r draws its entries from child r of ``SeedSequence(seed)`` (:func:`~symsgd_core.core.seeding.streams`),
    as :func:`~.sde.run_sgd_weights` does at batch 1: the same draws, so the same runs to the last bit (tested),
    unless ``idx`` (int ``(R, n_steps)``) gives the samples.

    Returns:
        dict ``steps`` int ``(K,)``, ``A`` float ``(R, K, m, n)`` (A at every record, step 0 included), ``s2``
        ``(R, K)``, ``idx`` int8 ``(R, n_steps)``, ``diverged_step`` int ``(R,)`` (−1: never).
    """
    n_steps = check_int("n_steps", n_steps, minimum=1)
    record_every, chunk = check_int("record_every", record_every, minimum=1), check_int("chunk", chunk, minimum=1)
    arch, N, R = params.arch, problem.n_observed, params.n_runs
    chunk = max(record_every, chunk - chunk % record_every)
    if idx is not None:
        idx = np.asarray(idx, dtype=np.int64)
        if idx.shape != (R, n_steps) or idx.min() < 0 or idx.max() >= N:
            raise ValueError(f"idx must be ({R}, {n_steps}) entry indices in [0, {N}), got {idx.shape}")
    rngs = streams(seed, R) if idx is None else None
    rows, cols, vals = problem.entries
    theta = params.flat.copy()
    kept = np.empty((R, n_steps), dtype=np.int8)
    A = [end_to_end(Params(arch, theta))[:, None]]
    steps = [np.array([0])]
    div = np.full(R, -1, dtype=np.int64)
    for s0 in range(0, n_steps, chunk):
        T = min(chunk, n_steps - s0)
        block = np.stack([g.integers(0, N, size=T) for g in rngs]) if idx is None else idx[:, s0:s0 + T]
        kept[:, s0:s0 + T] = block
        pos = np.arange(record_every, T + 1, record_every, dtype=np.int64)
        if s0 + T == n_steps and (pos.size == 0 or pos[-1] != T):
            pos = np.append(pos, T)
        snaps = np.empty((R, pos.size, arch.n_params))
        weighted_chunk(theta, np.asarray(arch.dims, dtype=np.int64), arch.offsets, rows, cols, vals,
                       sgd_entry_weights(block[:, :, None], N, lr), np.full(T, 1 - 2 * lr * weight_decay),
                       np.empty((R, 0, arch.n_params)), np.zeros(T), pos, snaps, div, s0, DIVERGENCE_RESIDUAL,
                       flush_threshold(arch.depth))
        A.append(end_to_end(Params(arch, snaps.reshape(-1, arch.n_params))).reshape(R, pos.size, *arch.out_shape))
        steps.append(s0 + pos)
    A = np.concatenate(A, axis=1)
    return {"steps": np.concatenate(steps), "A": A, "s2": _singular_values_or_nan(A)[..., 1], "idx": kept,
            "diverged_step": div}


def _singular_values_or_nan(A: np.ndarray) -> np.ndarray:
    """Singular values of ``A (..., m, n)``, descending; NaN where A is not finite (a diverged run)."""
    out = np.full((*A.shape[:-2], min(A.shape[-2:])), np.nan)
    ok = np.all(np.isfinite(A), axis=(-2, -1))
    out[ok] = np.linalg.svd(A[ok], compute_uv=False)
    return out


def _window_runs(idx_run, end: int, width: int, problem, routes):
    lo = max(0, end - width)
    return longest_route_runs(idx_run[lo:end], problem, routes).tolist() if end - lo > 0 else None


def waiting_task(p: dict) -> dict:
    """SGD (batch 1) from the rank-2 minimum at (η, γ): per run, the first step at rank ≤ 1 and what preceded it.

    Keys: ``lr, weight_decay, n_runs, n_steps, rec_steps, seed`` (``problem``: ``"eps"`` | ``"staircase"``; ``samples``:
    False (default: :func:`~.sde.run_sgd_weights`, as the stored grid was made) | True (:func:`sgd_with_samples`:
    the same runs, bit for bit, and their samples are read)).
    Returns ``jump_step`` (first record with s₂ ≤ the rank threshold; −1: none), ``route``
    (:func:`end_state_label` at that record — the shape of A, **not** the route), ``diverged``, ``collapsed``
    (s₁ ≤ threshold at the end), ``n_steps``, ``start_sv``; with ``samples``: ``run_routes`` (:data:`REPLY_ROUTES`),
    ``route_runs`` (per run, :func:`longest_route_runs` over the :data:`KSTAR_GD_STEPS` steps before the jump
    record — the time k* gives GD to finish a jump; None without a jump) and ``control_runs`` (the same over the
    window before that one, still before the jump: the base rate; None if the jump came too early).
    """
    t0 = time.perf_counter()
    name = p.get("problem", "eps")
    problem, base = _problem_and_start(name, float(p["weight_decay"]))
    A0 = end_to_end(base)[0]
    out = {}
    if p.get("samples", False):
        res = sgd_with_samples(replicate(base, p["n_runs"]), problem, p["n_steps"], lr=p["lr"],
                               weight_decay=p["weight_decay"], seed=p["seed"], record_every=p["rec_steps"])
        A, s2, steps = res["A"], res["s2"], res["steps"]
        diverged = res["diverged_step"] >= 0
        collapsed = _singular_values_or_nan(A[:, -1])[:, 0] <= DEFAULT_RANK_TOL  # NaN (diverged): False
    else:
        res = run_sgd_weights(replicate(base, p["n_runs"]), problem, p["n_steps"], lr=p["lr"],
                              weight_decay=p["weight_decay"], seed=p["seed"], record_every=p["rec_steps"],
                              record_layers=False, keep_A=True)
        A, s2, steps = res.settings["end_to_end"], res.singular_values[:, :, 1], res.steps
        diverged, collapsed = res.diverged, res.collapsed
    hit = np.isfinite(s2) & (s2 <= DEFAULT_RANK_TOL)
    R = A.shape[0]
    jump = np.where(hit.any(axis=1), steps[np.argmax(hit, axis=1)], -1)
    route = [None if jump[r] < 0 else end_state_label(A[r, int(np.argmax(hit[r]))], A0, name) for r in range(R)]
    if p.get("samples", False):
        routes = REPLY_ROUTES[name]
        W = KSTAR_GD_STEPS
        out = {"run_routes": list(routes),
               "route_runs": [None if jump[r] < 0 else _window_runs(res["idx"][r], int(jump[r]), W, problem, routes)
                              for r in range(R)],
               "control_runs": [None if jump[r] < 2 * W else
                                _window_runs(res["idx"][r], int(jump[r]) - W, W, problem, routes) for r in range(R)]}
    return {"jump_step": jump.tolist(), "route": route, **out, "diverged": np.asarray(diverged).tolist(),
            "collapsed": np.asarray(collapsed).tolist(), "n_steps": int(p["n_steps"]),
            "start_sv": singular_values(base)[0].tolist(), "seconds": time.perf_counter() - t0}


def staircase_problem(eps: float = STAIRCASE_EPS) -> CompletionProblem:
    """2×3 "staircase": Ω = {(0,0), (0,1), (1,1), (1,2)}, two observed entries in every row, targets (1, ε | 1, ε);
    its rank-1 completion is ``[[1, ε, ε²], [1/ε, 1, ε]]``."""
    target = np.array([[1.0, eps, eps**2], [1.0 / eps, 1.0, eps]])
    mask = np.array([[1, 1, 0], [0, 1, 1]], dtype=bool)
    return CompletionProblem(target, mask, name=f"2×3 staircase (ε = {eps:g})")


def staircase_start(problem: CompletionProblem, weight_decay: float, depth: int = EXP.depth,
                    width: int = EXP.width) -> Params:
    """The staircase's rank-2 GD minimum: GD (η = 0.05, 4·10⁴ steps) from a balanced factorisation of
    ``[[1, ε, 0], [0, 1, ε]]`` (seed 0)."""
    eps = problem.target[0, 1]
    arch = make_architecture(problem.shape, depth, width)
    start = balanced_factorisation(np.array([[1.0, eps, 0.0], [0.0, 1.0, eps]]), arch, seed=0)
    return run(start, problem, EXP.phase0_steps, method="gd", lr=EXP.lr_phase0, weight_decay=weight_decay,
               record_every=EXP.phase0_steps, record_layers=False).final


def staircase_task(p: dict) -> dict:
    """Equal row counts: the route each SGD jump takes in the staircase (:func:`waiting_task` on it)."""
    return waiting_task({**p, "problem": "staircase"})


