"""Compiled inner loop (numba, serial, deterministic) of the entry-weighted step of :mod:`.sde`.

Every dynamics of the SDE study is a GD step with random per-entry weights ``w_k`` (time units)::

    W_ℓ ← (1 − 2γ dt) W_ℓ − Q_ℓᵀ M P_ℓᵀ   (+ sqrt(2τ dt) ζ for Langevin),   M_ij = 2 r_ij w_ij on Ω

(GD: ``w_k = dt/N``; SGD: ``η n_k/S``; SDE, Euler–Maruyama: ``dt/N − sqrt(T dt/N)(ξ_k − ξ̄)``; see :mod:`.sde`).
The layout, the divergence rule, the flush of tiny entries and the snapshots are those of :mod:`._kernels`
(whose helpers are imported, not copied): ``theta (R, P)`` is worked on as its transpose ``(P, R)`` so every
loop over the runs is contiguous. The kernel never draws random numbers: the weights (and Langevin's normals)
come pre-drawn, so the readable reference (:mod:`.sde_reference`) consumes identical draws.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import _FM, _flush, _snapshot
from .stepping import FLUSH_EVERY

__all__ = ["weighted_chunk"]


@njit(cache=True, fastmath=_FM)
def _weighted_ens(th, dims, off, rows, cols, vals, w_t, decay, iso_t, iso_scale, rec_pos, snaps, div_step,
                  alive, step0, div_resid, tiny):
    """Entry-weighted GD steps, ensemble layout ``th (P, R)``, ``w_t (T, N, R)``, ``iso_t (T, P, R)`` or ``(0, P, R)``.

    Per step: forward ``P_kᵀ`` (n × d_k) for all layers, ``Mᵀ`` with ``M_ij = 2 r_ij w_ij`` on Ω,
    backward ``(Q_kᵀ M)ᵀ``, then ``W_k ← decay_t W_k − (Q_kᵀ M) P_kᵀ`` (+ ``iso_scale_t ζ``).
    Same storage as ``._kernels._gd_ens``: ``pt`` holds ``P_kᵀ`` at ``moff[k]``, ``bt`` holds
    ``(Q_kᵀ M)ᵀ`` at ``moff[k+1] − n²``.
    """
    P, R = th.shape
    T = w_t.shape[0]
    Ne = rows.shape[0]
    L = dims.shape[0] - 1
    K = rec_pos.shape[0]
    n = dims[0]
    m = dims[L]
    use_iso = iso_t.shape[0] > 0
    moff = np.zeros(L + 2, dtype=np.int64)
    for k in range(L + 1):
        moff[k + 1] = moff[k] + dims[k] * n
    pt = np.zeros((moff[L + 1], R))
    bt = np.zeros((moff[L + 1], R))
    dec = np.zeros(R)
    cf = np.zeros(R)
    kr = 0
    for c in range(n):
        for k in range(n):
            for r in range(R):
                pt[c * n + k, r] = 1.0 if c == k else 0.0
    for t in range(T):
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
        aoff = moff[L]
        bl = moff[L] - n * n
        for o in range(n * m):
            for r in range(R):
                bt[bl + o, r] = 0.0
        for e in range(Ne):
            a = rows[e]
            c = cols[e]
            o = bl + c * m + a
            tv = vals[e]
            for r in range(R):
                d = pt[aoff + c * m + a, r] - tv
                if alive[r] and not (abs(d) <= div_resid):
                    alive[r] = False
                    div_step[r] = step0 + t + 1
                bt[o, r] = 2.0 * d * w_t[t, e, r]
        for r in range(R):
            dec[r] = decay[t] if alive[r] else 1.0
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
                        new = dec[r] * w - cf[r]
                        th[wrow, r] = new if alive[r] else w
        if use_iso:
            sc = iso_scale[t]
            for p in range(P):
                for r in range(R):
                    if alive[r]:
                        th[p, r] += sc * iso_t[t, p, r]
        if (step0 + t + 1) % FLUSH_EVERY == 0:
            _flush(th, tiny)
        if kr < K and rec_pos[kr] == t + 1:
            _snapshot(th, alive, snaps, kr)
            kr += 1
    return 0


def weighted_chunk(theta, dims, off, rows, cols, vals, weights, decay, iso_noise, iso_scale, rec_pos, snaps,
                   div_step, step0, div_resid, tiny):
    """T entry-weighted steps for every run (compiled). Updates ``theta (R, P)`` in place.

    Args:
        theta: ``(R, P)`` float64.  dims, off: int64 ``(L+1,)`` widths and offsets (``Architecture``).
        rows, cols, vals: ``(N,)`` observed entries.  weights: ``(R, T, N)`` entry weights w_k (time units).
        decay: ``(T,)`` ``1 − 2γ dt``.  iso_noise: ``(R, T, P)`` standard normals or ``(R, 0, P)``.
        iso_scale: ``(T,)`` ``sqrt(2 τ dt)`` (ignored without iso_noise).
        rec_pos, snaps, div_step, step0, div_resid, tiny: as in ``._kernels``.
    """
    th = np.ascontiguousarray(theta.T)
    alive = div_step < 0
    snaps[~alive] = np.nan
    w_t = np.ascontiguousarray(weights.transpose(1, 2, 0))
    iso_t = np.ascontiguousarray(iso_noise.transpose(1, 2, 0))
    _weighted_ens(th, dims, off, rows, cols, vals, w_t, np.ascontiguousarray(decay, dtype=np.float64), iso_t,
                  np.ascontiguousarray(iso_scale, dtype=np.float64), rec_pos, snaps, div_step, alive, step0,
                  div_resid, tiny)
    theta[...] = th.T
    return 0
