"""Benchmarks: the deep-linear-network engine.

``rank_jumps.sgd_32x60000``: the hot phase of Notebook 04 (:data:`~symsgd_core.rank_jumps.EPSILON_EXPERIMENT`:
ε-completion, L = 4, width 8, 32 runs × 6·10⁴ batch-1 SGD steps at the hot η and λ) from the phase-0 minima,
recording singular values of A, per-layer singular values, loss, balancedness, rank
and B_r membership every 100 steps, through the public :func:`symsgd_core.rank_jumps.run`.
Target: ≤ 1.5 s, ≥ 8× a straightforward batched-numpy loop over the 32 runs (the
dense update formula of :mod:`symsgd_core.dln.stepping`, vectorised over runs) and ≥ 100× a naive per-run
PyTorch autograd loop. For information, a row/column-aware numpy loop (only row i
of W_L and column j of W_1 receive data) is timed too. Both baselines do the same update with
the same recording of parameters every 100 steps; they are timed in the same process
on fewer steps (numpy: 32 runs × 3000 steps; torch: 1 run × 1500 steps) and scaled
linearly to 32 × 6·10⁴ (their cost per step is constant).

``rank_jumps.sgd_32x60000_vs_fixed_loop_{1,2}thread`` and ``..._steps_vs_fixed_loop_{1,2}thread``: the same
workload against a plain numba loop written straight from the update rule with the network's widths as compile-time
constants (:func:`fixed_loop_sgd`: run by run, scalar loops of known length, snapshots every 100 steps, no divergence
test and no flush of tiny entries; ``prange`` over the runs for the parallel row), measured in the same run
single-threaded against single-threaded and with every numba thread (``NUMBA_NUM_THREADS``) against the same. The
``..._vs_compiled_loop_...`` rows do the same against that loop with the widths read at run time
(:func:`compiled_loop_sgd`, for information: the engine is compiled for the shape too). The ``steps`` rows time the
step loop alone (the engine's compiled :func:`~symsgd_core.dln._kernels.sgd_chunk` against the plain loop,
same draws, same snapshots); the whole-run rows time :func:`~symsgd_core.rank_jumps.run` against the draws (the same
generators), the plain loop and the engine's own reduction of the snapshots to records (singular values of A and of
each layer, loss, balancedness, rank, B_r): the same work end to end. Target: within 1.2× (ratio ≥ 0.83). Each pair
of calls is timed in turn (:func:`~.registry.paired_times`) and the row's ratio is the median of the pairs', their
spread in the target column. Ratios are printed, never asserted.

``rank_jumps.gd_phase0_32x40000``: phase 0 (GD, 32 runs × 4·10⁴ steps) against a batched
numpy GD timed on 32 × 2000 steps and scaled — what the notebook pays for its start.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from .. import rank_jumps
from ..dln import DEFAULT_B_CRITERION, DEFAULT_RANK_TOL, DIVERGENCE_RESIDUAL, flush_threshold, record_stats, sgd_chunk
from ..rank_jumps import CompletionProblem, Params
from ..rank_jumps.experiments import phase0_cached
from .registry import BenchResult, best_time, paired_times, register_benchmark

RUNS, STEPS, RECORD_EVERY = rank_jumps.EPSILON_EXPERIMENT.n_runs, rank_jumps.EPSILON_EXPERIMENT.hot_steps, 100
LR_HOT, WEIGHT_DECAY = rank_jumps.EPSILON_EXPERIMENT.lr_hot, rank_jumps.EPSILON_EXPERIMENT.weight_decay_hot


def numpy_batched_sgd(params: Params, problem: CompletionProblem, idx: np.ndarray, lr: float, weight_decay: float,
                      record_every: int = RECORD_EVERY) -> tuple[np.ndarray, np.ndarray]:
    """Baseline: the straightforward batched-numpy SGD, the dense update formula vectorised over runs.

    Per step: ``p_ℓ = P_ℓ[:, j]`` from the one-hot ``e_j``, ``q_ℓ = Q_ℓ[i, :]`` from ``e_i``, then
    ``W_ℓ ← (1 − 2ηλ) W_ℓ − 2η r q_ℓ p_ℓᵀ`` for every layer (dense outer products).

    Args:
        params: R runs; problem: the completion problem.
        idx: int ``(R, T)`` indices into ``problem.entries`` (the same draws as the engine's).
        lr, weight_decay: η and λ.

    Returns:
        ``(final flat (R, P), snapshots (R, T // record_every, P))``.
    """
    rows, cols, vals = problem.entries
    R, T = idx.shape
    ws = [w.copy() for w in params.layers()]
    m, n = problem.shape
    ar = np.arange(R)
    snaps = []
    for t in range(T):
        e = idx[:, t]
        i, j, v = rows[e], cols[e], vals[e]
        p = [np.eye(n)[j]]  # (R, n): P_1[:, j] = e_j
        for w in ws:
            p.append(np.einsum("rab,rb->ra", w, p[-1]))
        resid = p[-1][ar, i] - v
        q = [np.eye(m)[i]]  # (R, m): Q_L[i, :] = e_i
        for w in ws[:0:-1]:
            q.insert(0, np.einsum("rab,ra->rb", w, q[0]))
        g = 2.0 * lr * resid[:, None, None]
        for ell, w in enumerate(ws):
            ws[ell] = (1.0 - 2.0 * lr * weight_decay) * w - g * q[ell][:, :, None] * p[ell][:, None, :]
        if (t + 1) % record_every == 0:
            snaps.append(np.concatenate([w.reshape(R, -1) for w in ws], axis=1))
    flat = np.concatenate([w.reshape(R, -1) for w in ws], axis=1)
    return flat, np.stack(snaps, axis=1) if snaps else np.empty((R, 0, flat.shape[1]))


def numpy_batched_sgd_sparse(params: Params, problem: CompletionProblem, idx: np.ndarray, lr: float,
                             weight_decay: float, record_every: int = RECORD_EVERY) -> tuple[np.ndarray, np.ndarray]:
    """A faster numpy baseline (for information): only row i of W_L and column j of W_1 get data.

    Args:
        params: R runs; problem: the completion problem.
        idx: int ``(R, T)`` indices into ``problem.entries`` (the same draws as the engine's).
        lr, weight_decay: η and λ.

    Returns:
        ``(final flat (R, P), snapshots (R, T // record_every, P))``.
    """
    rows, cols, vals = problem.entries
    R, T = idx.shape
    ws = [w.copy() for w in params.layers()]
    L = len(ws)
    ar = np.arange(R)
    snaps = []
    decay = 1.0 - 2.0 * lr * weight_decay
    for t in range(T):
        e = idx[:, t]
        i, j, v = rows[e], cols[e], vals[e]
        p = [None] * (L + 1)
        p[1] = ws[0][ar, :, j]  # P_2[:, j] = W_1[:, j]
        for ell in range(1, L):
            p[ell + 1] = np.einsum("rab,rb->ra", ws[ell], p[ell])
        resid = p[L][ar, i] - v
        # q[k] = Q_k[i, :] for 0-based layer k (q[L-1] = e_i is implicit)
        q = [None] * L
        q[L - 2] = ws[L - 1][ar, i, :]
        for k in range(L - 2, 0, -1):
            q[k - 1] = np.einsum("rab,ra->rb", ws[k], q[k])
        g = 2.0 * lr * resid
        # all updates use the old weights (p and q are computed above)
        last = ws[L - 1]
        last *= decay
        last[ar, i, :] -= g[:, None] * p[L - 1]  # only row i of W_L gets data
        for k in range(1, L - 1):
            ws[k] *= decay
            ws[k] -= g[:, None, None] * q[k][:, :, None] * p[k][:, None, :]
        first = ws[0]
        first *= decay
        first[ar, :, j] -= g[:, None] * q[0]  # only column j of W_1 gets data
        if (t + 1) % record_every == 0:
            snaps.append(np.concatenate([w.reshape(R, -1) for w in ws], axis=1))
    flat = np.concatenate([w.reshape(R, -1) for w in ws], axis=1)
    return flat, np.stack(snaps, axis=1) if snaps else np.empty((R, 0, flat.shape[1]))


def _compiled_loop_source(theta, dims, off, rows, cols, vals, idx, lr, weight_decay, record_every, snaps):
    """Body of :func:`compiled_loop_sgd`, compiled twice by :func:`_compiled_loop` (``prange`` is ``range`` when
    numba compiles without ``parallel=True``)."""
    R = theta.shape[0]
    T = idx.shape[1]
    L = dims.shape[0] - 1
    w = 0
    for k in range(L + 1):
        w = max(w, dims[k])
    n = dims[0]
    dec = 1.0 - 2.0 * lr * weight_decay
    for r in numba.prange(R):
        th = theta[r].copy()
        p = np.zeros((L + 1, w))  # p[ℓ] = P_ℓ[:, j] (p[0] = e_j is implicit)
        q = np.zeros((L + 1, w))  # q[ℓ] = Q_ℓ[i, :] (q[L-1] = e_i is implicit)
        k = 0
        for t in range(T):
            e = idx[r, t]
            i = rows[e]
            j = cols[e]
            for a in range(dims[1]):
                p[1, a] = th[off[0] + a * n + j]
            for ell in range(1, L):
                din = dims[ell]
                for a in range(dims[ell + 1]):
                    acc = 0.0
                    for c in range(din):
                        acc += th[off[ell] + a * din + c] * p[ell, c]
                    p[ell + 1, a] = acc
            g = 2.0 * lr * (p[L, i] - vals[e])
            din = dims[L - 1]
            for c in range(din):
                q[L - 2, c] = th[off[L - 1] + i * din + c]
            for ell in range(L - 2, 0, -1):
                din = dims[ell]
                for c in range(din):
                    q[ell - 1, c] = 0.0
                for a in range(dims[ell + 1]):
                    for c in range(din):
                        q[ell - 1, c] += th[off[ell] + a * din + c] * q[ell, a]
            # W_ℓ ← (1 − 2ηλ) W_ℓ − 2η r q_ℓ p_ℓᵀ, from the old weights (p, q above): row i of W_L, column j of W_1
            for o in range(off[L]):
                th[o] *= dec
            din = dims[L - 1]
            for c in range(din):
                th[off[L - 1] + i * din + c] -= g * p[L - 1, c]
            for ell in range(1, L - 1):
                din = dims[ell]
                for a in range(dims[ell + 1]):
                    ga = g * q[ell, a]
                    for c in range(din):
                        th[off[ell] + a * din + c] -= ga * p[ell, c]
            for a in range(dims[1]):
                th[off[0] + a * n + j] -= g * q[0, a]
            if (t + 1) % record_every == 0:
                snaps[r, k] = th
                k += 1
        theta[r] = th
    return 0


_LOOPS: dict = {}


def _compiled_loop(parallel: bool):
    """The plain loop compiled serial (``range``) or parallel (``prange`` over runs); not cached on disk (a
    benchmark, not a kernel: compiled when the benchmark runs, outside the timing)."""
    if parallel not in _LOOPS:
        _LOOPS[parallel] = numba.njit(parallel=parallel)(_compiled_loop_source)
    return _LOOPS[parallel]


def compiled_loop_sgd(params: Params, problem: CompletionProblem, idx: np.ndarray, lr: float, weight_decay: float,
                      record_every: int = RECORD_EVERY, parallel: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Baseline: a plain numba loop straight from the batch-1 update rule, run by run.

    Per run and step: ``p_ℓ = P_ℓ[:, j]`` forward, ``r = A_ij − A*_ij``, ``q_ℓ = Q_ℓ[i, :]`` backward, then
    ``W_ℓ ← (1 − 2ηλ) W_ℓ − 2η r q_ℓ p_ℓᵀ`` (row i of W_L and column j of W_1 get data); the parameters are
    copied every ``record_every`` steps. No divergence test, no flush of tiny entries. ``parallel``: ``prange``
    over the runs. Depth L ≥ 3.

    Returns:
        ``(final flat (R, P), snapshots (R, T // record_every, P))``.
    """
    rows, cols, vals = problem.entries
    theta = params.flat.copy()
    R, T = idx.shape
    snaps = np.empty((R, T // record_every, theta.shape[1]))
    _compiled_loop(parallel)(theta, np.asarray(params.arch.dims, dtype=np.int64), params.arch.offsets,
                             rows.astype(np.int64), cols.astype(np.int64), vals.astype(np.float64),
                             np.ascontiguousarray(idx, dtype=np.int64), float(lr), float(weight_decay),
                             int(record_every), snaps)
    return theta, snaps


def _fixed_loop_source(N, W, M, L):
    """:func:`_compiled_loop_source` with the widths as compile-time constants: a network ``(N, W, …, W, M)`` of depth
    L ≥ 3 (numba freezes a closure's variables, so every loop over a layer has a known length), the same
    statements in the same order. Compiled by :func:`_fixed_loop`."""
    NM = L - 2
    O1 = W * N
    OL = O1 + NM * W * W
    P = OL + M * W

    def loop(theta, rows, cols, vals, idx, lr, weight_decay, record_every, snaps):
        R = theta.shape[0]
        T = idx.shape[1]
        dec = 1.0 - 2.0 * lr * weight_decay
        for r in numba.prange(R):
            th = theta[r].copy()
            p = np.zeros((L - 1, W))  # p[k] = P_{k+1}[:, j]
            q = np.zeros((L - 1, W))  # q[k] = Q_k[i, :]
            k = 0
            for t in range(T):
                e = idx[r, t]
                i = rows[e]
                j = cols[e]
                for a in range(W):
                    p[0, a] = th[a * N + j]
                for m in range(NM):
                    base = O1 + m * W * W
                    for a in range(W):
                        acc = 0.0
                        for c in range(W):
                            acc += th[base + a * W + c] * p[m, c]
                        p[m + 1, a] = acc
                acc = 0.0
                for c in range(W):
                    acc += th[OL + i * W + c] * p[L - 2, c]
                g = 2.0 * lr * (acc - vals[e])
                for c in range(W):
                    q[L - 2, c] = th[OL + i * W + c]
                for m in range(NM - 1, -1, -1):
                    base = O1 + m * W * W
                    for c in range(W):
                        q[m, c] = 0.0
                    for a in range(W):
                        for c in range(W):
                            q[m, c] += th[base + a * W + c] * q[m + 1, a]
                # W_ℓ ← (1 − 2ηλ) W_ℓ − 2η r q_ℓ p_ℓᵀ, from the old weights (p, q above): row i of W_L, column j of W_1
                for o in range(P):
                    th[o] *= dec
                for c in range(W):
                    th[OL + i * W + c] -= g * p[L - 2, c]
                for m in range(NM):
                    base = O1 + m * W * W
                    for a in range(W):
                        ga = g * q[m + 1, a]
                        for c in range(W):
                            th[base + a * W + c] -= ga * p[m, c]
                for a in range(W):
                    th[a * N + j] -= g * q[0, a]
                if (t + 1) % record_every == 0:
                    snaps[r, k] = th
                    k += 1
            theta[r] = th
        return 0

    return loop


def _fixed_loop(shape: tuple[int, int, int, int], parallel: bool):
    """:func:`_fixed_loop_source` for ``shape = (n, w, m, L)`` compiled serial or parallel (not cached on disk, as
    :func:`_compiled_loop`)."""
    key = ("fixed", shape, parallel)
    if key not in _LOOPS:
        _LOOPS[key] = numba.njit(parallel=parallel)(_fixed_loop_source(*shape))
    return _LOOPS[key]


def fixed_loop_sgd(params: Params, problem: CompletionProblem, idx: np.ndarray, lr: float, weight_decay: float,
                   record_every: int = RECORD_EVERY, parallel: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Baseline: :func:`compiled_loop_sgd` compiled for this network's widths (they are compile-time constants, so
    the compiler unrolls and vectorises the loops over a layer): the same update, the same snapshots. Needs a network
    ``(n, w, …, w, m)`` of depth L ≥ 3.

    Returns:
        ``(final flat (R, P), snapshots (R, T // record_every, P))``.
    """
    arch = params.arch
    d = arch.dims
    if arch.depth < 3 or len(set(d[1:-1])) != 1:
        raise ValueError(f"the fixed-shape loop needs dims (n, w, …, w, m) with depth >= 3, got {d}")
    rows, cols, vals = problem.entries
    theta = params.flat.copy()
    R, T = idx.shape
    snaps = np.empty((R, T // record_every, theta.shape[1]))
    _fixed_loop((d[0], d[1], d[-1], arch.depth), parallel)(
        theta, rows.astype(np.int64), cols.astype(np.int64), vals.astype(np.float64),
        np.ascontiguousarray(idx, dtype=np.int64), float(lr), float(weight_decay), int(record_every), snaps)
    return theta, snaps


def torch_naive_sgd(params: Params, problem: CompletionProblem, idx: np.ndarray, lr: float, weight_decay: float,
                    record_every: int = RECORD_EVERY) -> tuple[np.ndarray, list]:
    """Baseline: a naive per-run PyTorch autograd loop (one backward per step), same update and draws.

    Returns:
        ``(final flat (R, P), list of per-run snapshot lists)``.
    """
    import torch

    rows, cols, vals = problem.entries
    R, T = idx.shape
    finals, all_snaps = [], []
    for r in range(R):
        ws = [torch.tensor(w[r], dtype=torch.float64, requires_grad=True) for w in params.layers()]
        snaps = []
        for t in range(T):
            e = int(idx[r, t])
            A = ws[0]
            for w in ws[1:]:
                A = w @ A
            loss = (A[rows[e], cols[e]] - float(vals[e])) ** 2 + weight_decay * sum((w * w).sum() for w in ws)
            loss.backward()
            with torch.no_grad():
                for w in ws:
                    w -= lr * w.grad
                    w.grad = None
            if (t + 1) % record_every == 0:
                snaps.append(torch.cat([w.detach().reshape(-1) for w in ws]).numpy().copy())
        finals.append(torch.cat([w.detach().reshape(-1) for w in ws]).numpy())
        all_snaps.append(snaps)
    return np.stack(finals), all_snaps


def numpy_batched_gd(params: Params, problem: CompletionProblem, n_steps: int, lr: float,
                     weight_decay: float) -> np.ndarray:
    """Baseline: full-batch GD vectorised over runs with numpy (``rank_jumps.gradient`` per step)."""
    cur = params.copy()
    for _ in range(n_steps):
        cur.flat -= lr * rank_jumps.gradient(cur, problem, weight_decay).flat
    return cur.flat


def _draws(n_runs: int, n_steps: int, seed: int = 0) -> np.ndarray:
    """The engine's entry draws for batch 1: run r uses child r of ``SeedSequence(seed)``."""
    problem = rank_jumps.EPSILON_EXPERIMENT.problem
    out = np.empty((n_runs, n_steps), dtype=np.int64)
    for r, ss in enumerate(np.random.SeedSequence(seed).spawn(n_runs)):
        out[r] = np.random.default_rng(ss).integers(0, problem.n_observed, size=(n_steps, 1))[:, 0]
    return out


@register_benchmark("rank_jumps")
def bench_rank_jumps() -> list[BenchResult]:
    exp = rank_jumps.EPSILON_EXPERIMENT
    problem = exp.problem
    start = rank_jumps.phase0_minima(n_runs=RUNS)  # also warms up the GD kernel
    rank_jumps.run(start, problem, 200, lr=LR_HOT, weight_decay=WEIGHT_DECAY, seed=0)  # warm-up: the SGD kernel
    figure = best_time(lambda: rank_jumps.run(start, problem, STEPS, method="sgd", lr=LR_HOT,
                                              weight_decay=WEIGHT_DECAY, seed=0, record_every=RECORD_EVERY), repeat=5)
    work = RUNS * STEPS

    np_steps = 3000
    idx = _draws(RUNS, np_steps)
    t0 = time.perf_counter()
    numpy_batched_sgd(start, problem, idx, LR_HOT, WEIGHT_DECAY)
    numpy_scaled = (time.perf_counter() - t0) * STEPS / np_steps
    t0 = time.perf_counter()
    numpy_batched_sgd_sparse(start, problem, idx, LR_HOT, WEIGHT_DECAY)
    sparse_scaled = (time.perf_counter() - t0) * STEPS / np_steps

    torch_steps = 1500
    idx1 = _draws(1, torch_steps)
    torch_naive_sgd(start.select([0]), problem, idx1[:, :50], LR_HOT, WEIGHT_DECAY)  # warm-up
    t0 = time.perf_counter()
    torch_naive_sgd(start.select([0]), problem, idx1, LR_HOT, WEIGHT_DECAY)
    torch_scaled = (time.perf_counter() - t0) * work / torch_steps

    rows = [
        BenchResult(f"rank_jumps.sgd_{RUNS}x{STEPS}_vs_numpy", figure, "s", numpy_scaled, numpy_scaled / figure,
                    "<= 1.5 s and ratio >= 8", bool(figure <= 1.5 and numpy_scaled / figure >= 8)),
        BenchResult(f"rank_jumps.sgd_{RUNS}x{STEPS}_vs_torch", figure, "s", torch_scaled, torch_scaled / figure,
                    "<= 1.5 s and ratio >= 100", bool(figure <= 1.5 and torch_scaled / figure >= 100)),
        BenchResult(f"rank_jumps.sgd_{RUNS}x{STEPS}_vs_numpy_sparse", figure, "s", sparse_scaled,
                    sparse_scaled / figure, "information (row/column-aware numpy)", True),
    ]

    rows.extend(_vs_compiled_loop(start, problem))

    phase0_cached.cache_clear()
    gd_figure = best_time(lambda: (phase0_cached.cache_clear(), rank_jumps.phase0_minima(n_runs=RUNS)), repeat=2)
    gd_steps = 2000
    p0 = rank_jumps.init_params(exp.arch, RUNS, 0)
    t0 = time.perf_counter()
    numpy_batched_gd(p0, problem, gd_steps, exp.lr_phase0, exp.weight_decay_hot)
    gd_scaled = (time.perf_counter() - t0) * exp.phase0_steps / gd_steps
    rows.append(BenchResult(f"rank_jumps.gd_phase0_{RUNS}x{exp.phase0_steps}", gd_figure, "s", gd_scaled,
                            gd_scaled / gd_figure, "<= 3 s (notebook start-up)", bool(gd_figure <= 3.0)))
    return rows


def _vs_compiled_loop(start: Params, problem: CompletionProblem) -> list[BenchResult]:
    """The engine against :func:`fixed_loop_sgd` (widths fixed at compile time) and :func:`compiled_loop_sgd`
    (generic widths), one thread against one, then every thread against every thread (``NUMBA_NUM_THREADS``); the
    step loops alone and the whole run (see the module docstring). Paired: each engine call alternates with a
    baseline call (:func:`~.registry.paired_times`), the ratio is the median of the pairs'."""
    arch = start.arch
    dims = np.asarray(arch.dims, dtype=np.int64)
    rows_, cols_, vals_ = (a.astype(t) for a, t in zip(problem.entries, (np.int64, np.int64, np.float64)))
    idx = _draws(RUNS, STEPS)
    idx3 = np.ascontiguousarray(idx[:, :, None])
    lr, weight_decay = np.full(STEPS, LR_HOT), np.full(STEPS, WEIGHT_DECAY)
    rec_pos = np.arange(RECORD_EVERY, STEPS + 1, RECORD_EVERY, dtype=np.int64)
    tiny = flush_threshold(arch.depth)
    loops = {"fixed_loop": fixed_loop_sgd, "compiled_loop": compiled_loop_sgd}

    def engine_steps():
        theta = start.flat.copy()
        snaps = np.empty((RUNS, rec_pos.size, arch.n_params))
        sgd_chunk(theta, dims, arch.offsets, rows_, cols_, vals_, idx3, lr, weight_decay, rec_pos, snaps,
                  np.full(RUNS, -1, dtype=np.int64), 0, DIVERGENCE_RESIDUAL, tiny)

    def engine_run():
        rank_jumps.run(start, problem, STEPS, method="sgd", lr=LR_HOT, weight_decay=WEIGHT_DECAY, seed=0,
                       record_every=RECORD_EVERY)

    def loop_run(loop, parallel):
        draws = _draws(RUNS, STEPS)
        _, snaps = loop(start, problem, draws, LR_HOT, WEIGHT_DECAY, parallel=parallel)
        snaps = np.concatenate([start.flat[:, None, :], snaps], axis=1)
        record_stats(snaps, arch, problem, np.full(snaps.shape[1], WEIGHT_DECAY), DEFAULT_RANK_TOL,
                      DEFAULT_B_CRITERION, True)

    n_max = numba.config.NUMBA_NUM_THREADS
    before = numba.get_num_threads()
    out = []
    try:
        for parallel, n in ((False, 1), (True, n_max)) if n_max > 1 else ((False, 1),):
            numba.set_num_threads(n)
            label = f"{n}thread" if n == 1 else f"{n}threads"
            for name, loop in loops.items():
                loop(start, problem, idx[:, :200], LR_HOT, WEIGHT_DECAY, parallel=parallel)  # compile, untimed
                steps = paired_times(engine_steps, lambda loop=loop, par=parallel: loop(
                    start, problem, idx, LR_HOT, WEIGHT_DECAY, parallel=par))
                whole = paired_times(engine_run, lambda loop=loop, par=parallel: loop_run(loop, par))
                for what, pair, work in (("_steps", steps, "steps"), ("", whole, "whole run")):
                    out.append(BenchResult(
                        f"rank_jumps.sgd_{RUNS}x{STEPS}{what}_vs_{name}_{label}", pair.figure, "s", pair.baseline,
                        pair.ratio, f"ratio >= 0.83: {work} within 1.2x of the {name.replace('_', ' ')} (engine "
                        f"{1 / pair.ratio:.2f}x its time; ratio {pair.spread()})", bool(pair.ratio >= 1 / 1.2)))
    finally:
        numba.set_num_threads(before)
    return out
