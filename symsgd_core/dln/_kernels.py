"""Compiled inner loops (numba, parallel over runs, deterministic) of the step of :mod:`.stepping`
(``engine="compiled"``).

Layout. The public kernels take ``theta`` as ``(R, P)`` float64 (layer ℓ, 0-based, of
run r is ``theta[r, off[ℓ]:off[ℓ+1]]`` read as a C-order ``(dims[ℓ+1], dims[ℓ])``
matrix) and work internally on the transpose ``(P, R)``: every arithmetic statement
is a loop over the R runs of the ensemble, contiguous in memory, so the compiler turns
it into SIMD instructions. At these sizes (8×8 layers) this removes the per-run
loop overheads that dominate a run-by-run kernel.

The kernels never draw random numbers: sampled entries and Langevin noise come in
pre-drawn arrays, so the numpy reference (:mod:`._reference`) reproduces them step for step
(up to float64 summation order).

Threads. The runs of an ensemble are independent, so the public kernels split them into
:func:`n_blocks` contiguous blocks, one per numba thread, at least :data:`._kernel_parts.MIN_BLOCK_RUNS` runs each
(``prange`` in ``_sgd_par``, ``_gd_par``; ``NUMBA_NUM_THREADS`` or ``numba.set_num_threads`` set how
many; with one block the block function is called directly, with no parallel launch). Each block is
copied into its own ``(P, R_b)`` array and stepped by the serial block kernel (``_sgd1_ens``,
``_sgdb_ens``, ``_gd_ens``). Every arithmetic statement is elementwise over runs, in the same order
for every run, with no fast-math (no reassociation, no FMA contraction), so a run's numbers do not
depend on its block, its lane or the thread count: 1 thread and 2 threads give the same bits (tested).
The block kernels release the GIL (``nogil``), so the engine's next chunk of random draws, made in a background
thread (:func:`~.stepping.prefetched`), overlaps the current chunk's steps.

Shared pieces. The end of a step (flush, snapshots), the divergence rule, the blocks of runs and the full-batch pass
of GD/Langevin are in :mod:`._kernel_parts`, shared with the entry-weighted, tamed and adaptive kernels.

Fixed shape. Batch-1 SGD on a network ``(n, w, …, w, m)`` also has a kernel compiled for those widths
(:func:`fixed_shape_kernel`: run by run, loops of known length, the same arithmetic in the same order, so the same
bits); :func:`sgd_chunk` uses it for long runs and for shapes this process already compiled (:func:`use_fixed_shape`).

Common arguments:
    rec_pos: int64 ``(K,)`` sorted local step counts (1..T) after which
        ``theta[r]`` is copied into ``snaps[r, k]``.
    div_step: int64 ``(R,)``; −1 = alive. On divergence (|residual| > div_resid or
        not finite) the run is frozen (its parameters keep their last values),
        ``div_step[r] = step0 + local step`` and its later snapshots are NaN. Runs with
        ``div_step >= 0`` on entry stay frozen.
    tiny: after every global step that is a multiple of :data:`FLUSH_EVERY`, entries
        with ``|θ_p| < tiny`` are set to 0 (no denormal slow-downs while a run decays
        to A = 0 or a forced row decays; see :func:`.stepping.flush_threshold`).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ._kernel_parts import (
    FASTMATH,
    add_noise,
    backward,
    block_bounds,
    block_in,
    block_out,
    end_of_step,
    flush_run,
    forward,
    n_blocks,
    pass_workspace,
    residual_entry,
    run_in_blocks,
    runs_last,
    snapshot_run,
    update,
)
from .stepping import FLUSH_EVERY


@njit(cache=True)
def _vector_offsets(dims):
    L = dims.shape[0] - 1
    voff = np.zeros(L + 2, dtype=np.int64)
    for k in range(L + 1):
        voff[k + 1] = voff[k] + dims[k]
    return voff


@njit(cache=True, fastmath=FASTMATH)
def _sgd1_ens(th, dims, off, rows, cols, vals, idx_t, lr, weight_decay, rec_pos, snaps, div_step, alive, step0,
              div_resid, tiny):
    """Batch-1 SGD, L ≥ 2, ensemble layout ``th (P, R)``, ``idx_t (T, R)``.

    Forward vectors ``p_k = P_k[:, j]`` (k = 1..L, ``p_k`` of length dims[k] at
    ``voff[k]``), backward vectors ``q_k = Q_k[i, :]ᵀ`` (length dims[k+1] at ``voff[k+1]``),
    then ``W_k ← (1 − 2ηλ) W_k − 2η r q_k p_kᵀ``, with only row i of W_L and column j of
    W_1 receiving data. Backward pass and update are fused (old weights read first).
    """
    P, R = th.shape
    T = idx_t.shape[0]
    L = dims.shape[0] - 1
    voff = _vector_offsets(dims)
    pv = np.zeros((voff[L + 1], R))
    qv = np.zeros((voff[L + 1], R))
    ii = np.zeros(R, dtype=np.int64)
    jj = np.zeros(R, dtype=np.int64)
    vv = np.zeros(R)
    g = np.zeros(R)
    ga = np.zeros(R)
    dec = np.zeros(R)
    kr = 0
    n = dims[0]
    for t in range(T):
        for r in range(R):
            e = idx_t[t, r]
            ii[r] = rows[e]
            jj[r] = cols[e]
            vv[r] = vals[e]
        # forward, layer 1: p_1 = W_1[:, j] (a gather per run)
        for a in range(dims[1]):
            for r in range(R):
                pv[voff[1] + a, r] = th[off[0] + a * n + jj[r], r]
        for ell in range(1, L):
            din = dims[ell]
            w0 = off[ell]
            pin = voff[ell]
            pout = voff[ell + 1]
            for a in range(dims[ell + 1]):
                for r in range(R):
                    pv[pout + a, r] = 0.0
                for c in range(din):
                    wrow = w0 + a * din + c
                    for r in range(R):
                        pv[pout + a, r] += th[wrow, r] * pv[pin + c, r]
        eta = lr[t]
        decay = 1.0 - 2.0 * eta * weight_decay[t]
        for r in range(R):
            resid = pv[voff[L] + ii[r], r] - vv[r]
            if alive[r] and not (abs(resid) <= div_resid):
                alive[r] = False
                div_step[r] = step0 + t + 1
            if alive[r]:
                g[r] = 2.0 * eta * resid
                dec[r] = decay
            else:
                g[r] = 0.0
                dec[r] = 1.0
        # last layer W_L: q_{L-1} = old W_L[i, :]; only row i gets data
        din = dims[L - 1]
        w0 = off[L - 1]
        qout = voff[L - 1]
        pin = voff[L - 1]
        for c in range(din):
            for r in range(R):
                qv[qout + c, r] = th[w0 + ii[r] * din + c, r]
        for a in range(dims[L]):
            for r in range(R):
                ga[r] = g[r] if ii[r] == a else 0.0
            for c in range(din):
                wrow = w0 + a * din + c
                for r in range(R):
                    w = th[wrow, r]
                    new = dec[r] * w - ga[r] * pv[pin + c, r]
                    th[wrow, r] = new if alive[r] else w
        # middle layers: q_{ℓ-1} = W_ℓᵀ q_ℓ (old W_ℓ), W_ℓ ← dec W_ℓ − g q_ℓ p_ℓᵀ
        for ell in range(L - 2, 0, -1):
            din = dims[ell]
            w0 = off[ell]
            qin = voff[ell + 1]
            qout = voff[ell]
            pin = voff[ell]
            for c in range(din):
                for r in range(R):
                    qv[qout + c, r] = 0.0
            for a in range(dims[ell + 1]):
                for r in range(R):
                    ga[r] = g[r] * qv[qin + a, r]
                for c in range(din):
                    wrow = w0 + a * din + c
                    for r in range(R):
                        w = th[wrow, r]
                        qv[qout + c, r] += w * qv[qin + a, r]
                        new = dec[r] * w - ga[r] * pv[pin + c, r]
                        th[wrow, r] = new if alive[r] else w
        # first layer W_1: only column j gets data, g q_1
        qin = voff[1]
        for a in range(dims[1]):
            for r in range(R):
                ga[r] = g[r] * qv[qin + a, r]
            for c in range(n):
                wrow = off[0] + a * n + c
                for r in range(R):
                    w = th[wrow, r]
                    new = dec[r] * w - (ga[r] if jj[r] == c else 0.0)
                    th[wrow, r] = new if alive[r] else w
        kr = end_of_step(th, alive, snaps, rec_pos, kr, step0, t, tiny)
    return 0


@njit(cache=True, fastmath=FASTMATH)
def _sgdb_ens(th, dims, off, rows, cols, vals, idx_t, lr, weight_decay, rec_pos, snaps, div_step, alive, step0,
              div_resid, tiny):
    """Minibatch SGD (any B ≥ 1, any L ≥ 1), ensemble layout ``th (P, R)``, ``idx_t (T, B, R)``.

    ``W_k ← (1 − 2ηγ) W_k − (2η/B) Σ_b r_b q_k,b p_k,bᵀ`` with p, q from the old weights;
    ``p_0 = e_j`` and ``q_{L-1} = e_i`` are stored explicitly (simple, general).
    """
    P, R = th.shape
    T = idx_t.shape[0]
    B = idx_t.shape[1]
    L = dims.shape[0] - 1
    voff = _vector_offsets(dims)
    pv = np.zeros((B, voff[L + 1], R))  # p_k (k = 0..L) at voff[k]
    qv = np.zeros((B, voff[L + 1], R))  # q_k (k = 0..L-1) at voff[k+1]
    res = np.zeros((B, R))
    acc = np.zeros(R)
    coef = np.zeros(R)
    ii = np.zeros(R, dtype=np.int64)
    jj = np.zeros(R, dtype=np.int64)
    kr = 0
    for t in range(T):
        eta = lr[t]
        decay = 1.0 - 2.0 * eta * weight_decay[t]
        for b in range(B):
            for r in range(R):
                e = idx_t[t, b, r]
                ii[r] = rows[e]
                jj[r] = cols[e]
            for c in range(dims[0]):
                for r in range(R):
                    pv[b, c, r] = 1.0 if jj[r] == c else 0.0
            for ell in range(L):
                din = dims[ell]
                w0 = off[ell]
                pin = voff[ell]
                pout = voff[ell + 1]
                for a in range(dims[ell + 1]):
                    for r in range(R):
                        pv[b, pout + a, r] = 0.0
                    for c in range(din):
                        wrow = w0 + a * din + c
                        for r in range(R):
                            pv[b, pout + a, r] += th[wrow, r] * pv[b, pin + c, r]
            for r in range(R):
                resid = pv[b, voff[L] + ii[r], r] - vals[idx_t[t, b, r]]
                if alive[r] and not (abs(resid) <= div_resid):
                    alive[r] = False
                    div_step[r] = step0 + t + 1
                res[b, r] = resid if alive[r] else 0.0
            for a in range(dims[L]):
                for r in range(R):
                    qv[b, voff[L] + a, r] = 1.0 if ii[r] == a else 0.0
            for ell in range(L - 1, 0, -1):
                din = dims[ell]
                w0 = off[ell]
                qin = voff[ell + 1]
                qout = voff[ell]
                for c in range(din):
                    for r in range(R):
                        qv[b, qout + c, r] = 0.0
                for a in range(dims[ell + 1]):
                    for c in range(din):
                        wrow = w0 + a * din + c
                        for r in range(R):
                            qv[b, qout + c, r] += th[wrow, r] * qv[b, qin + a, r]
        gscale = 2.0 * eta / B
        for ell in range(L):
            din = dims[ell]
            w0 = off[ell]
            pin = voff[ell]
            qin = voff[ell + 1]
            for a in range(dims[ell + 1]):
                for c in range(din):
                    wrow = w0 + a * din + c
                    for r in range(R):
                        acc[r] = 0.0
                    for b in range(B):
                        for r in range(R):
                            acc[r] += res[b, r] * qv[b, qin + a, r] * pv[b, pin + c, r]
                    for r in range(R):
                        coef[r] = decay if alive[r] else 1.0
                        w = th[wrow, r]
                        new = coef[r] * w - gscale * acc[r]
                        th[wrow, r] = new if alive[r] else w
        kr = end_of_step(th, alive, snaps, rec_pos, kr, step0, t, tiny)
    return 0


@njit(cache=True, nogil=True)
def _sgd_block(theta, dims, off, rows, cols, vals, idx, lr, weight_decay, rec_pos, snaps, div_step, step0, div_resid,
               tiny, r0, r1):
    """Runs ``r0:r1`` of ``theta (R, P)``, ``idx (R, T, B)``, copied to a block ``(P, R_b)`` and stepped by
    ``_sgd1_ens`` (B = 1, L ≥ 2) or ``_sgdb_ens``."""
    th, ds, alive = block_in(theta, div_step, r0, r1)
    sn = snaps[r0:r1]
    idx_tb = runs_last(idx, r0, r1)  # (T, B, R_b)
    if idx.shape[2] == 1 and dims.shape[0] >= 3:
        _sgd1_ens(th, dims, off, rows, cols, vals, idx_tb.reshape(idx_tb.shape[0], idx_tb.shape[2]), lr,
                  weight_decay, rec_pos, sn, ds, alive, step0, div_resid, tiny)
    else:
        _sgdb_ens(th, dims, off, rows, cols, vals, idx_tb, lr, weight_decay, rec_pos, sn, ds, alive, step0, div_resid,
                  tiny)
    block_out(theta, div_step, r0, th, ds)


@njit(cache=True, nogil=True, parallel=True)
def _sgd_par(theta, dims, off, rows, cols, vals, idx, lr, weight_decay, rec_pos, snaps, div_step, step0, div_resid,
             tiny, nb):
    """The runs of ``theta (R, P)`` in ``nb`` blocks, one per thread (``prange``), each by ``_sgd_block``."""
    R = theta.shape[0]
    for b in prange(nb):
        r0, r1 = block_bounds(R, nb, b)
        _sgd_block(theta, dims, off, rows, cols, vals, idx, lr, weight_decay, rec_pos, snaps, div_step, step0,
                   div_resid, tiny, r0, r1)
    return 0


def sgd_chunk(theta, dims, off, rows, cols, vals, idx, lr, weight_decay, rec_pos, snaps, div_step, step0, div_resid,
              tiny, fixed: bool | None = None):
    """SGD on a pool of entries for T steps, every run of the ensemble (dispatches to a compiled kernel).

    Args:
        theta: ``(R, P)`` parameters, updated in place.
        dims: int64 ``(L+1,)`` layer widths ``d_1..d_{L+1}``; off: int64 ``(L+1,)`` offsets.
        rows, cols, vals: ``(M,)`` the sampling pool (row, column, target value).
        idx: int64 ``(R, T, B)`` pool indices drawn for each run, step and batch slot.
        lr, weight_decay: ``(T,)`` step size η and weight decay γ per step.
        rec_pos, snaps, div_step, step0, div_resid, tiny: see the module docstring.
        fixed: step with the kernel compiled for this network's widths (:func:`fixed_shape_kernel`: batch 1,
            ``dims = (n, w, …, w, m)``, L ≥ 2) — ``None``: when :func:`use_fixed_shape` says so; ``True``: whenever
            the shape allows it; ``False``: never. The numbers are the same bits either way.

    Update (batch B): ``W_ℓ ← (1 − 2ηλ) W_ℓ − (2η/B) Σ_b r_b q_ℓ,b p_ℓ,bᵀ`` with
    ``p_ℓ = P_ℓ[:, j]``, ``q_ℓ = Q_ℓ[i, :]ᵀ``, ``r = A_ij − A*_ij``, all from the old weights.
    Runs are stepped in parallel blocks (:func:`n_blocks`); the numbers do not depend on the thread count.
    """
    snaps[div_step >= 0] = np.nan
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    shape = fixed_shape(dims) if idx.shape[2] == 1 else None
    if shape is not None and (fixed or (fixed is None and use_fixed_shape(shape, idx.shape[0] * idx.shape[1]))):
        nb = n_blocks(theta.shape[0])
        return fixed_shape_kernel(shape, nb > 1)(theta, rows, cols, vals, idx, lr, weight_decay, rec_pos, snaps,
                                                  div_step, int(step0), float(div_resid), float(tiny), nb)
    args = (theta, dims, off, rows, cols, vals, idx, lr, weight_decay, rec_pos, snaps, div_step, step0, div_resid,
            tiny)
    return run_in_blocks(_sgd_block, _sgd_par, args)


# -- batch-1 SGD compiled for one network shape ----------------------------------------------------------------------
# The generic kernels above read the widths from ``dims`` at run time. For a network ``(n, w, …, w, m)`` the kernel
# below is compiled with n, w, m and L as constants (numba freezes a closure's variables), so its loops over a layer's
# w entries have a known length: the compiler unrolls and vectorises them. It steps one run at a time (its ~P numbers
# stay in L1 cache), the runs split into the same blocks as the generic kernels, and it does the generic batch-1
# kernel's arithmetic in the same order, statement for statement (the forward sums over c from 0.0, the update
# ``dec·w − ga·p`` with ``ga = 0.0`` off the sampled row of W_L, the divergence test, the flush, the snapshots): the
# same bits (tested against it). Compiling one shape takes seconds, so it is used where that is paid back or paid
# already (:func:`use_fixed_shape`). The compiled code is cached on disk like every kernel: numba keeps one index file
# for the closure (``_fixed_shape_source.<locals>.kernel``) with an entry per shape and version, keyed by a hash of its
# frozen variables. Not being a module attribute, it is listed by name (:func:`fixed_shape_name`) for the cache
# checks: :func:`made_fixed_shape_kernels` (what this process made) and :func:`new_fixed_shape_kernel` (a fresh
# dispatcher whose cache entry can be looked up without compiling: ``symsgd_core.warm.cold_kernels``).

#: Fewest run-steps (runs × steps of one call) for which :func:`sgd_chunk` steps a network shape it has not used
#: yet in this process with the kernel compiled for that shape. The compile (a few seconds per shape, once per
#: environment: cached on disk) is then a fraction of the run: notebook 04's hot phase is 32 × 6·10⁴ ≈ 1.9·10⁶.
FIXED_SHAPE_MIN_WORK = 1 << 20

_FIXED_KERNELS: dict = {}


def fixed_shape(dims) -> tuple[int, int, int, int] | None:
    """``(n, w, m, L)`` of a network ``dims = (n, w, …, w, m)`` of depth L ≥ 2 (hidden widths all w), else None."""
    d = [int(x) for x in dims]
    if len(d) < 3 or any(x != d[1] for x in d[1:-1]):
        return None
    return d[0], d[1], d[-1], len(d) - 1


def use_fixed_shape(shape: tuple[int, int, int, int], work: int) -> bool:
    """Whether :func:`sgd_chunk` steps ``work`` run-steps of a network ``shape`` (:func:`fixed_shape`) with the kernel
    compiled for it: when this process already has that kernel, or when ``work`` ≥ :data:`FIXED_SHAPE_MIN_WORK`."""
    return any(key[0] == shape for key in _FIXED_KERNELS) or work >= FIXED_SHAPE_MIN_WORK


def fixed_shape_kernel(shape: tuple[int, int, int, int], parallel: bool):
    """The batch-1 SGD kernel compiled for ``shape = (n, w, m, L)`` (made once per process, cached on disk):
    ``kernel(theta, rows, cols, vals, idx, lr, weight_decay, rec_pos, snaps, div_step, step0, div_resid, tiny, nb)``
    with the arguments of :func:`sgd_chunk` (``idx (R, T, 1)``), the runs in ``nb`` blocks (``parallel``: one per
    thread, ``prange``; else ``nb`` must be 1). Returns 0."""
    key = (tuple(int(x) for x in shape), bool(parallel))
    if key not in _FIXED_KERNELS:
        _FIXED_KERNELS[key] = new_fixed_shape_kernel(*key)
    return _FIXED_KERNELS[key]


def new_fixed_shape_kernel(shape: tuple[int, int, int, int], parallel: bool):
    """A fresh numba dispatcher of the kernel :func:`fixed_shape_kernel` returns, not kept: :func:`use_fixed_shape`
    does not see it and nothing is compiled until it is called. Its on-disk cache is the one every dispatcher of this
    shape and version reads and writes."""
    shape = tuple(int(x) for x in shape)  # Python ints: the cache key hashes the closure's frozen values
    return njit(cache=True, nogil=True, parallel=bool(parallel))(_fixed_shape_source(*shape, bool(parallel)))


def fixed_shape_name(shape: tuple[int, int, int, int], parallel: bool) -> str:
    """The name the cache checks give the fixed-shape kernel of ``shape`` (``fixed_shape_kernel(n, w, m, L)``, with
    ``", prange"`` for the parallel version)."""
    return f"fixed_shape_kernel({', '.join(str(int(x)) for x in shape)}{', prange' if parallel else ''})"


def made_fixed_shape_kernels() -> dict:
    """``{fixed_shape_name: dispatcher}`` of the fixed-shape kernels this process made (their compile and cache
    statistics: ``dispatcher.stats``)."""
    return {fixed_shape_name(*key): k for key, k in _FIXED_KERNELS.items()}


def _fixed_shape_source(N, W, M, L, PARALLEL):
    """The Python function :func:`fixed_shape_kernel` compiles: n = N inputs, L − 1 hidden layers of width W,
    M outputs; layer 1 at 0, middle layer k (0-based) at ``O1 + k W²``, W_L at ``OL``."""
    if min(N, W, M) < 1 or L < 2:
        raise ValueError(f"a fixed-shape kernel needs n, w, m >= 1 and L >= 2, got {(N, W, M, L)}")
    NM = L - 2  # middle layers
    O1 = W * N
    OL = O1 + NM * W * W
    P = OL + M * W
    FE = FLUSH_EVERY

    def kernel(theta, rows, cols, vals, idx, lr, weight_decay, rec_pos, snaps, div_step, step0, div_resid, tiny, nb):
        R = theta.shape[0]
        T = idx.shape[1]
        K = rec_pos.shape[0]
        nblocks = nb if PARALLEL else 1
        for b in prange(nblocks):
            th = np.empty(P)
            pv = np.empty((L - 1, W))  # pv[k] = p_{k+1} = P_{k+1}[:, j], the input of layer k + 1 (0-based)
            qv = np.empty((L - 1, W))  # qv[k] = Q_k[i, :], what multiplies the rows of layer k (0-based)
            for r in range((b * R) // nblocks, ((b + 1) * R) // nblocks):
                for p in range(P):
                    th[p] = theta[r, p]
                alive = div_step[r] < 0
                kr = 0
                for t in range(T):
                    if alive:
                        e = idx[r, t, 0]
                        i = rows[e]
                        j = cols[e]
                        for a in range(W):  # p_1 = W_1[:, j]
                            pv[0, a] = th[a * N + j]
                        for k in range(NM):
                            base = O1 + k * W * W
                            for a in range(W):
                                acc = 0.0
                                for c in range(W):
                                    acc += th[base + a * W + c] * pv[k, c]
                                pv[k + 1, a] = acc
                        acc = 0.0  # A_ij = W_L[i, :] p_{L-1}
                        for c in range(W):
                            acc += th[OL + i * W + c] * pv[L - 2, c]
                        resid = acc - vals[e]
                        if not (abs(resid) <= div_resid):
                            alive = False
                            div_step[r] = step0 + t + 1
                        else:
                            eta = lr[t]
                            g = 2.0 * eta * resid
                            dec = 1.0 - 2.0 * eta * weight_decay[t]
                            for c in range(W):  # W_L: only row i gets data
                                qv[L - 2, c] = th[OL + i * W + c]
                            for a in range(M):
                                ga = g if i == a else 0.0
                                for c in range(W):
                                    o = OL + a * W + c
                                    th[o] = dec * th[o] - ga * pv[L - 2, c]
                            for k in range(NM - 1, -1, -1):  # middle layers, q from the old weights
                                base = O1 + k * W * W
                                for c in range(W):
                                    qv[k, c] = 0.0
                                for a in range(W):
                                    qa = qv[k + 1, a]
                                    ga = g * qa
                                    for c in range(W):
                                        o = base + a * W + c
                                        w = th[o]
                                        qv[k, c] += w * qa
                                        th[o] = dec * w - ga * pv[k, c]
                            for a in range(W):  # W_1: only column j gets data
                                ga = g * qv[0, a]
                                for c in range(N):
                                    o = a * N + c
                                    th[o] = dec * th[o] - (ga if j == c else 0.0)
                    if (step0 + t + 1) % FE == 0:
                        flush_run(th, tiny)
                    if kr < K and rec_pos[kr] == t + 1:
                        snapshot_run(th, alive, snaps, r, kr)
                        kr += 1
                for p in range(P):
                    theta[r, p] = th[p]
        return 0

    return kernel


@njit(cache=True, fastmath=FASTMATH)
def _gd_ens(th, dims, off, target, maskf, inv_n, lr, weight_decay, noise_t, noise_scale, rec_pos, snaps, div_step,
            alive, step0, div_resid, tiny):
    """GD/Langevin, ensemble layout ``th (P, R)``, ``noise_t (T, P, R)`` or ``(0, P, R)``; storage as in
    :func:`pass_workspace`."""
    R = th.shape[1]
    T = lr.shape[0]
    L = dims.shape[0] - 1
    n = dims[0]
    m = dims[L]
    use_noise = noise_t.shape[0] > 0
    moff, pt, bt = pass_workspace(dims, R)
    per_entry = np.full((1, R), inv_n)  # the weight of every observed entry: 1/N
    dec = np.zeros(R)
    step = np.zeros(R)
    cf = np.zeros(R)
    kr = 0
    for t in range(T):
        forward(th, dims, off, moff, pt)
        # Eᵀ = ((2/N)(A − A*) ⊙ mask)ᵀ with A = P_L
        aoff = moff[L]
        bl = moff[L] - n * n
        for c in range(n):
            for a in range(m):
                o = bl + c * m + a
                if maskf[a, c] != 0.0:
                    residual_entry(bt, o, pt, aoff + c * m + a, target[a, c], per_entry, 0, alive, div_step,
                                    step0 + t + 1, div_resid)
                else:
                    for r in range(R):
                        bt[o, r] = 0.0
        eta = lr[t]
        decay = 1.0 - 2.0 * eta * weight_decay[t]
        for r in range(R):
            dec[r] = decay if alive[r] else 1.0
            step[r] = eta if alive[r] else 0.0
        backward(th, dims, off, moff, bt)
        update(th, dims, off, moff, pt, bt, dec, step, cf, alive)  # W_k ← dec W_k − η (Q_kᵀ E) P_kᵀ
        if use_noise:
            add_noise(th, noise_t, t, noise_scale[t], alive)
        kr = end_of_step(th, alive, snaps, rec_pos, kr, step0, t, tiny)
    return 0


@njit(cache=True, nogil=True)
def _gd_block(theta, dims, off, target, maskf, inv_n, lr, weight_decay, noise, noise_scale, rec_pos, snaps, div_step,
              step0, div_resid, tiny, r0, r1):
    """Runs ``r0:r1`` of ``theta (R, P)``, ``noise (R, T, P)`` or ``(R, 0, P)``, as a block stepped by ``_gd_ens``."""
    th, ds, alive = block_in(theta, div_step, r0, r1)
    noise_t = runs_last(noise, r0, r1)  # (T, P, R_b)
    _gd_ens(th, dims, off, target, maskf, inv_n, lr, weight_decay, noise_t, noise_scale, rec_pos, snaps[r0:r1], ds,
            alive, step0, div_resid, tiny)
    block_out(theta, div_step, r0, th, ds)


@njit(cache=True, nogil=True, parallel=True)
def _gd_par(theta, dims, off, target, maskf, inv_n, lr, weight_decay, noise, noise_scale, rec_pos, snaps, div_step,
            step0, div_resid, tiny, nb):
    """The runs of ``theta (R, P)`` in ``nb`` blocks, one per thread (``prange``), each by ``_gd_block``."""
    R = theta.shape[0]
    for b in prange(nb):
        r0, r1 = block_bounds(R, nb, b)
        _gd_block(theta, dims, off, target, maskf, inv_n, lr, weight_decay, noise, noise_scale, rec_pos, snaps,
                  div_step, step0, div_resid, tiny, r0, r1)
    return 0


def gd_chunk(theta, dims, off, target, maskf, inv_n, lr, weight_decay, noise, noise_scale, rec_pos, snaps, div_step,
             step0, div_resid, tiny):
    """Full-batch GD (and Langevin when ``noise`` has T steps) for T steps, every run.

    Args:
        theta: ``(R, P)`` updated in place; dims, off: as in :func:`sgd_chunk`.
        target, maskf: ``(m, n)`` target and 0/1 float mask; inv_n: 1/N.
        lr, weight_decay: ``(T,)``.
        noise: ``(R, T, P)`` standard normals, or ``(R, 0, P)`` for plain GD.
        noise_scale: ``(T,)`` multiplier of the noise, ``sqrt(2 η_t τ)``.
        rec_pos, snaps, div_step, step0, div_resid, tiny: see the module docstring.

    Update: ``W_ℓ ← (1 − 2ηλ) W_ℓ − η Q_ℓᵀ E P_ℓᵀ + noise_scale · ξ_ℓ`` with
    ``E = (2/N)(A − A*) ⊙ mask``; divergence when a residual on Ω exceeds ``div_resid``.
    """
    snaps[div_step >= 0] = np.nan
    args = (theta, dims, off, np.ascontiguousarray(target, dtype=np.float64), maskf, float(inv_n), lr, weight_decay,
            np.ascontiguousarray(noise, dtype=np.float64), noise_scale, rec_pos, snaps, div_step, step0, div_resid,
            tiny)
    return run_in_blocks(_gd_block, _gd_par, args)


@njit(cache=True)
def _jacobi_block(X, max_sweeps, alpha, beta, gamma, c, s, floor):
    """One-sided (Hestenes) Jacobi on ``X (rows, k, nb)`` in place, lanes innermost.

    Every pair of columns (p, q) is rotated to be orthogonal, lane by lane; a sweep
    visits all pairs; iteration stops when no lane rotated in a sweep (all pairs
    orthogonal to ``|x_pᵀx_q| ≤ eps·‖x_p‖‖x_q‖``, or the inner product is below
    ``eps²‖X‖_F²``, the round-off of the matrix itself) or after ``max_sweeps`` sweeps.
    Singular values are then accurate to ``O(eps‖X‖)`` absolutely (as LAPACK's) and to
    high relative accuracy when they are not at round-off level.
    """
    rows, k, nb = X.shape
    tol = 2.220446049250313e-16
    # floor[b] = eps²‖X_b‖_F²: an inner product below it is round-off of the whole matrix
    for b in range(nb):
        floor[b] = 0.0
    for i in range(rows):
        for p in range(k):
            for b in range(nb):
                floor[b] += X[i, p, b] * X[i, p, b]
    for b in range(nb):
        floor[b] *= tol * tol
    for _sweep in range(max_sweeps):
        rotated = 0
        for p in range(k - 1):
            for q in range(p + 1, k):
                for b in range(nb):
                    alpha[b] = 0.0
                    beta[b] = 0.0
                    gamma[b] = 0.0
                for i in range(rows):
                    for b in range(nb):
                        xp = X[i, p, b]
                        xq = X[i, q, b]
                        alpha[b] += xp * xp
                        beta[b] += xq * xq
                        gamma[b] += xp * xq
                n_rot = 0
                for b in range(nb):
                    g = gamma[b]
                    if abs(g) > tol * np.sqrt(alpha[b] * beta[b]) and abs(g) > floor[b]:
                        zeta = (beta[b] - alpha[b]) / (2.0 * g)
                        t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                        c[b] = 1.0 / np.sqrt(1.0 + t * t)
                        s[b] = c[b] * t
                        n_rot += 1
                    else:
                        c[b] = 1.0
                        s[b] = 0.0
                if n_rot == 0:
                    continue
                rotated += n_rot
                for i in range(rows):
                    for b in range(nb):
                        xp = X[i, p, b]
                        xq = X[i, q, b]
                        X[i, p, b] = c[b] * xp - s[b] * xq
                        X[i, q, b] = s[b] * xp + c[b] * xq
        if rotated == 0:
            break


@njit(cache=True)
def _jacobi_range(X, out, ib0, ib1, max_sweeps, block):
    """Blocks ``ib0:ib1`` (of ``block`` lanes each) of :func:`_jacobi_svals`: column norms after Jacobi into ``out``."""
    rows, k, nb = X.shape
    alpha = np.zeros(block)
    beta = np.zeros(block)
    gamma = np.zeros(block)
    c = np.ones(block)
    s = np.zeros(block)
    floor = np.zeros(block)
    acc = np.zeros(block)
    for ib in range(ib0, ib1):
        b0 = ib * block
        b1 = min(nb, b0 + block)
        Xb = np.empty((rows, k, b1 - b0))
        for i in range(rows):
            for p in range(k):
                for b in range(b1 - b0):
                    Xb[i, p, b] = X[i, p, b0 + b]
        _jacobi_block(Xb, max_sweeps, alpha, beta, gamma, c, s, floor)
        for p in range(k):
            for b in range(b1 - b0):
                acc[b] = 0.0
            for i in range(rows):
                for b in range(b1 - b0):
                    acc[b] += Xb[i, p, b] * Xb[i, p, b]
            for b in range(b1 - b0):
                out[p, b0 + b] = np.sqrt(acc[b])


@njit(cache=True)
def _jacobi_svals(X, max_sweeps, block):
    """Column norms after one-sided Jacobi of ``X (rows, k, batch)``, in blocks of ``block`` lanes: ``(k, batch)``.

    Blocks keep the working set in L1 cache and let each block stop as soon as it has
    converged. The column norms are the singular values (high relative accuracy).
    """
    rows, k, nb = X.shape
    out = np.zeros((k, nb))
    _jacobi_range(X, out, 0, (nb + block - 1) // block, max_sweeps, block)
    return out


@njit(cache=True, parallel=True)
def _jacobi_svals_par(X, max_sweeps, block):
    """:func:`_jacobi_svals` with the blocks shared among the threads (``prange``). The blocks do not depend on
    the thread count, so neither do the numbers."""
    rows, k, nb = X.shape
    out = np.zeros((k, nb))
    for ib in prange((nb + block - 1) // block):
        _jacobi_range(X, out, ib, ib + 1, max_sweeps, block)
    return out


def batched_singular_values(W: np.ndarray, max_sweeps: int = 30) -> np.ndarray:
    """Singular values of a batch of small matrices ``W (batch, a, b)``, descending: ``(batch, min(a, b))``.

    One-sided Jacobi vectorised across the batch (each matrix is a SIMD lane): at
    8×8 it is several times faster than LAPACK called matrix by matrix, and it keeps
    tiny singular values accurate (they are what a rank jump drives to round-off).
    """
    W = np.asarray(W, dtype=np.float64)
    nb, a, b = W.shape
    if nb == 0 or min(a, b) == 0:
        return np.zeros((nb, min(a, b)))
    # columns = the shorter side, so there are min(a, b) columns to orthogonalise
    X = W.transpose(1, 2, 0) if b <= a else W.transpose(2, 1, 0)
    # in parallel from two blocks of 64 matrices on (the blocks, hence the numbers, do not depend on it)
    svals = _jacobi_svals_par if numba.get_num_threads() > 1 and nb > 64 else _jacobi_svals
    sv = svals(np.ascontiguousarray(X), int(max_sweeps), 64).T
    return -np.sort(-sv, axis=1)
