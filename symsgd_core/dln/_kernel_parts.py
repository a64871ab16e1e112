"""The pieces every compiled kernel of :mod:`symsgd_core.dln` shares (numba, ``@njit(cache=True)``), written once.

Who uses them: the engine's SGD and GD/Langevin kernels and its fixed-shape kernel (:mod:`._kernels`), the
entry-weighted step (:mod:`._sde_kernels`), the tamed step (:mod:`._tamed_kernel`) and the adaptive step
(:mod:`._adaptive_kernel`). Moving a statement here changes no number: each piece is the statements its callers held,
in the same order, with the same fast-math flags (:data:`FASTMATH`: none).

* The end of a step: every :data:`~.stepping.FLUSH_EVERY` global steps the entries below ``tiny`` are set to 0, and at a
  record the parameters are copied into ``snaps`` (NaN for a diverged run). Ensemble layout ``θ (P, R)``
  (:func:`end_of_step`, with :func:`flush` and :func:`snapshot`) and one run ``θ (P,)`` (:func:`flush_run`,
  :func:`snapshot_run`: the fixed-shape and adaptive kernels, which step run by run).
* The divergence rule on one observed entry (:func:`residual_entry`).
* The blocks of runs, one per numba thread (:data:`MIN_BLOCK_RUNS`, :func:`n_blocks`, :func:`run_in_blocks`,
  :func:`block_bounds`, :func:`block_in`, :func:`block_out`, :func:`runs_last`).
* The full-batch pass of GD, Langevin and the entry-weighted steps (:func:`pass_workspace`, :func:`forward`,
  :func:`backward`, :func:`update`, :func:`add_noise`).

Inlining. A piece called once per step or per entry is declared ``inline="always"`` (numba inlines it into each
caller's IR; it then has no cache entry of its own). The others are ordinary calls between compiled functions, which
LLVM inlines where it pays (``rank_jumps.sgd_32x60000_*_vs_fixed_loop_*`` of ``python -m symsgd_core bench`` time the
engine against a plain loop with everything written inline). numba caches each caller on its own source file: after
an edit here, clear the cache (``__pycache__/*.nb*`` or ``NUMBA_CACHE_DIR``) so no caller keeps an old copy.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from .stepping import FLUSH_EVERY

__all__ = ["FASTMATH", "MIN_BLOCK_RUNS", "add_noise", "backward", "block_bounds", "block_in", "block_out",
           "end_of_step", "flush", "flush_run", "forward", "n_blocks", "pass_workspace", "residual_entry",
           "run_in_blocks", "runs_last", "snapshot", "snapshot_run", "update", "weighted_pass"]

#: No fast-math flags: every loop over runs is elementwise, so it vectorises without reassociation, and without FMA
#: contraction a run's numbers do not depend on its lane (its position in the ensemble). Divergence tests
#: (comparisons with NaN) keep their meaning.
FASTMATH = False


# -- the end of a step --------------------------------------------------------------------------------------------


@njit(cache=True, fastmath=FASTMATH)
def flush(th, tiny):
    """``θ_p ← 0`` where ``|θ_p| < tiny``, ensemble layout ``th (P, R)``."""
    for p in range(th.shape[0]):
        for r in range(th.shape[1]):
            if abs(th[p, r]) < tiny:
                th[p, r] = 0.0


@njit(cache=True)
def snapshot(th, alive, snaps, k):
    """``snaps[r, k] = θ_r`` for live runs, NaN for diverged ones; ``th (P, R)``, ``alive (R,)``,
    ``snaps (R, K, P)``."""
    P, R = th.shape
    for r in range(R):
        if alive[r]:
            for p in range(P):
                snaps[r, k, p] = th[p, r]
        else:
            for p in range(P):
                snaps[r, k, p] = np.nan


@njit(cache=True, inline="always")
def end_of_step(th, alive, snaps, rec_pos, kr, step0, t, tiny):
    """After local step ``t`` (global ``step0 + t + 1``): flush tiny entries every ``FLUSH_EVERY`` steps and take
    snapshot ``kr`` if it falls here. Returns the index of the next snapshot. Inlined into each kernel: it runs once
    per step, and a call that passes four arrays costs more than its body."""
    if (step0 + t + 1) % FLUSH_EVERY == 0:
        flush(th, tiny)
    if kr < rec_pos.shape[0] and rec_pos[kr] == t + 1:
        snapshot(th, alive, snaps, kr)
        kr += 1
    return kr


@njit(cache=True, fastmath=FASTMATH)
def flush_run(th, tiny):
    """``θ_p ← 0`` where ``|θ_p| < tiny``, one run ``th (P,)``."""
    for p in range(th.shape[0]):
        if abs(th[p]) < tiny:
            th[p] = 0.0


@njit(cache=True)
def snapshot_run(th, alive, snaps, r, k):
    """``snaps[r, k] = θ`` (``th (P,)``) if ``alive``, else NaN."""
    for p in range(th.shape[0]):
        snaps[r, k, p] = th[p] if alive else np.nan


@njit(cache=True, fastmath=FASTMATH, inline="always")
def residual_entry(bt, o, pt, po, target, weights, k, alive, div_step, step, div_resid):
    """Row ``o`` of the error matrix for every run: ``bt[o, r] = 2 (pt[po, r] − target) · weights[k, r]``.
    A run alive whose residual is not within ``div_resid`` (or NaN) diverges at global step ``step``. Inlined, as
    :func:`end_of_step`: it runs once per observed entry and step."""
    for r in range(bt.shape[1]):
        d = pt[po, r] - target
        if alive[r] and not (abs(d) <= div_resid):
            alive[r] = False
            div_step[r] = step
        bt[o, r] = 2.0 * d * weights[k, r]


# -- blocks of runs, one per thread -------------------------------------------------------------------------------

#: Fewest runs per parallel block. A step costs a fixed ~300 short loops over the block's runs (their set-up does
#: not shrink with the block), so narrow blocks waste most of a thread: 32 runs in 2 blocks of 16 run ~1.5×
#: faster on 2 threads, 12 runs in 2 blocks of 6 hardly faster at twice the CPU (and slower when the cores are
#: shared with other processes). Smaller ensembles (live figures of 8–16 runs) stay on one thread.
MIN_BLOCK_RUNS = 16


def n_blocks(n_runs: int) -> int:
    """Blocks of runs the parallel kernels split an ensemble into: one per numba thread, at least
    :data:`MIN_BLOCK_RUNS` runs each (1 block: the serial block function, no parallel launch).

    The partition never changes a number (see :mod:`._kernels`); it only decides how the work is shared.
    """
    return max(1, min(int(n_runs) // MIN_BLOCK_RUNS, numba.get_num_threads()))


def run_in_blocks(block, parallel, args: tuple) -> int:
    """The one driver of every ensemble kernel: step the runs of ``args[0]`` (``theta (R, P)``) by ``block(*args, 0,
    R)`` when :func:`n_blocks` gives one block (no parallel launch: a single-threaded worker never touches the thread
    pool), else by ``parallel(*args, nb)``, one block per thread. Returns 0."""
    n_runs = args[0].shape[0]
    nb = n_blocks(n_runs)
    if nb == 1:
        block(*args, 0, n_runs)
    else:
        parallel(*args, nb)
    return 0


@njit(cache=True)
def block_bounds(R, nb, b):
    """Runs ``r0:r1`` of block ``b`` of ``nb`` over ``R`` runs."""
    return (b * R) // nb, ((b + 1) * R) // nb


@njit(cache=True)
def block_in(theta, div_step, r0, r1):
    """``(θ_b (P, R_b), div_step_b, alive_b)`` of runs ``r0:r1``: a block's own contiguous copies."""
    P = theta.shape[1]
    Rb = r1 - r0
    th = np.empty((P, Rb))
    ds = np.empty(Rb, dtype=np.int64)
    alive = np.empty(Rb, dtype=np.bool_)
    for r in range(Rb):
        for p in range(P):
            th[p, r] = theta[r0 + r, p]
        ds[r] = div_step[r0 + r]
        alive[r] = ds[r] < 0
    return th, ds, alive


@njit(cache=True)
def block_out(theta, div_step, r0, th, ds):
    """Write a block ``th (P, R_b)``, ``ds (R_b,)`` back to runs ``r0:`` of ``theta (R, P)`` and ``div_step``."""
    P, Rb = th.shape
    for r in range(Rb):
        for p in range(P):
            theta[r0 + r, p] = th[p, r]
        div_step[r0 + r] = ds[r]


@njit(cache=True)
def runs_last(a, r0, r1):
    """Runs ``r0:r1`` of ``a (R, T, X)`` as a contiguous ``(T, X, R_b)`` copy of the same dtype: a block's draws with
    the runs innermost."""
    T, X = a.shape[1], a.shape[2]
    Rb = r1 - r0
    out = np.empty((T, X, Rb), dtype=a.dtype)
    for r in range(Rb):
        for t in range(T):
            for k in range(X):
                out[t, k, r] = a[r0 + r, t, k]
    return out


# -- the full-batch pass shared by GD/Langevin (._kernels) and the entry-weighted steps (._sde_kernels, ._tamed_kernel)
# Storage, ensemble layout (runs last, contiguous): ``pt`` holds ``P_kᵀ`` (n × d_k, k = 0..L, ``P_0 = I``) at
# ``moff[k]``; ``bt`` holds ``(Q_kᵀ E)ᵀ`` (n × d_{k+1}) at ``moff[k+1] − n²`` for layer k (0-based), E the residual
# matrix of the step (``E``: GD's masked residual, ``M``: the weighted one).


@njit(cache=True, fastmath=FASTMATH)
def pass_workspace(dims, R):
    """``(moff, pt, bt)`` for a net of widths ``dims`` and ``R`` runs, ``pt`` starting with ``P_0ᵀ = I``."""
    L = dims.shape[0] - 1
    n = dims[0]
    moff = np.zeros(L + 2, dtype=np.int64)
    for k in range(L + 1):
        moff[k + 1] = moff[k] + dims[k] * n
    pt = np.zeros((moff[L + 1], R))
    bt = np.zeros((moff[L + 1], R))
    for c in range(n):
        for k in range(n):
            for r in range(R):
                pt[c * n + k, r] = 1.0 if c == k else 0.0
    return moff, pt, bt


@njit(cache=True, fastmath=FASTMATH)
def forward(th, dims, off, moff, pt):
    """Forward: ``P_{k+1}ᵀ[c, a] = Σ_q W_k[a, q] P_kᵀ[c, q]`` for every layer, into ``pt``."""
    R = th.shape[1]
    L = dims.shape[0] - 1
    n = dims[0]
    for ell in range(L):
        din = dims[ell]
        dout = dims[ell + 1]
        w0 = off[ell]
        pin = moff[ell]
        pout = moff[ell + 1]
        for c in range(n):
            for a in range(dout):
                o = pout + c * dout + a
                for r in range(R):
                    pt[o, r] = 0.0
                for q in range(din):
                    wrow = w0 + a * din + q
                    src = pin + c * din + q
                    for r in range(R):
                        pt[o, r] += th[wrow, r] * pt[src, r]


@njit(cache=True, fastmath=FASTMATH)
def backward(th, dims, off, moff, bt):
    """Backward from the last layer's ``(Q_{L-1}ᵀ E)ᵀ = Eᵀ`` (already in ``bt``):
    ``(Q_{k-1}ᵀ E)ᵀ[c, q] = Σ_a W_k[a, q] (Q_kᵀ E)ᵀ[c, a]``."""
    R = th.shape[1]
    L = dims.shape[0] - 1
    n = dims[0]
    for ell in range(L - 1, 0, -1):
        din = dims[ell]
        dout = dims[ell + 1]
        w0 = off[ell]
        bin_ = moff[ell + 1] - n * n
        bout = moff[ell] - n * n
        for c in range(n):
            for q in range(din):
                for r in range(R):
                    bt[bout + c * din + q, r] = 0.0
            for a in range(dout):
                src = bin_ + c * dout + a
                for q in range(din):
                    wrow = w0 + a * din + q
                    o = bout + c * din + q
                    for r in range(R):
                        bt[o, r] += th[wrow, r] * bt[src, r]


@njit(cache=True, fastmath=FASTMATH)
def update(th, dims, off, moff, pt, bt, dec, step, cf, alive):
    """``W_k ← dec W_k − step (Q_kᵀ E) P_kᵀ`` for the runs still alive (``dec``, ``step``: per run; ``cf``: scratch
    of length R). A step of exactly 1.0 multiplies exactly: ``step·x = x`` in IEEE arithmetic (no fastmath here)."""
    R = th.shape[1]
    L = dims.shape[0] - 1
    n = dims[0]
    for ell in range(L):
        din = dims[ell]
        dout = dims[ell + 1]
        w0 = off[ell]
        pin = moff[ell]
        bb = moff[ell + 1] - n * n
        for a in range(dout):
            for q in range(din):
                wrow = w0 + a * din + q
                for r in range(R):
                    cf[r] = 0.0
                for c in range(n):
                    bsrc = bb + c * dout + a
                    psrc = pin + c * din + q
                    for r in range(R):
                        cf[r] += bt[bsrc, r] * pt[psrc, r]
                for r in range(R):
                    w = th[wrow, r]
                    new = dec[r] * w - step[r] * cf[r]
                    th[wrow, r] = new if alive[r] else w


@njit(cache=True, fastmath=FASTMATH)
def weighted_pass(th, dims, off, moff, pt, bt, rows, cols, vals, w, dec, step, cf, alive, div_step, t_step,
                  div_resid):
    """One entry-weighted pass at the θ whose forward products are in ``pt``: ``W_k ← dec W_k − step (Q_kᵀ M) P_kᵀ``,
    ``M_ij = 2 r_ij w[k]`` on Ω (``w (N, R)``), with the divergence rule on the residuals at step ``t_step``; the
    Euler–Maruyama step and its tamed and projected variants all take it."""
    L = dims.shape[0] - 1
    n = dims[0]
    m = dims[L]
    aoff = moff[L]
    bl = moff[L] - n * n
    for o in range(n * m):
        for r in range(th.shape[1]):
            bt[bl + o, r] = 0.0
    for e in range(rows.shape[0]):
        residual_entry(bt, bl + cols[e] * m + rows[e], pt, aoff + cols[e] * m + rows[e], vals[e], w, e, alive,
                       div_step, t_step, div_resid)
    backward(th, dims, off, moff, bt)
    update(th, dims, off, moff, pt, bt, dec, step, cf, alive)


@njit(cache=True, fastmath=FASTMATH)
def add_noise(th, noise_t, t, scale, alive):
    """``θ += scale · noise_t[t]`` for the runs still alive."""
    P, R = th.shape
    for p in range(P):
        for r in range(R):
            if alive[r]:
                th[p, r] += scale * noise_t[t, p, r]
