"""Compiled inner loop (numba, parallel over runs, deterministic) of the entry-weighted step of :mod:`.sde`.

Every dynamics of the SDE study is a GD step with random per-entry weights ``w_k`` (time units)::

    W_ℓ ← (1 − 2γ dt) W_ℓ − Q_ℓᵀ M P_ℓᵀ   (+ sqrt(2τ dt) ζ for Langevin),   M_ij = 2 r_ij w_ij on Ω

(GD: ``w_k = dt/N``; SGD: ``η n_k/S``; SDE, Euler–Maruyama: ``dt/N − sqrt(T dt/N)(ξ_k − ξ̄)``; see :mod:`.sde`).
The layout, the divergence rule, the flush of tiny entries and the snapshots are those of :mod:`._kernels`
(the shared pieces of :mod:`._kernel_parts`, imported, not copied): ``theta (R, P)`` is worked on as its
transpose ``(P, R)`` so every loop over the runs is contiguous. The kernel never draws random numbers: the weights
(and Langevin's normals) come pre-drawn, so the readable reference (:mod:`._reference`) consumes identical draws.
The runs are split into one block per numba thread as in :mod:`._kernels` (``_weighted_par``); the numbers do not
depend on the thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._kernel_parts import (
    FASTMATH,
    add_noise,
    block_bounds,
    block_in,
    block_out,
    end_of_step,
    forward,
    pass_workspace,
    run_in_blocks,
    runs_last,
    weighted_pass,
)

__all__ = ["weighted_chunk"]


@njit(cache=True, fastmath=FASTMATH)
def _weighted_ens(th, dims, off, rows, cols, vals, w_t, decay, iso_t, iso_scale, rec_pos, snaps, div_step,
                  alive, step0, div_resid, tiny):
    """Entry-weighted GD steps, ensemble layout ``th (P, R)``, ``w_t (T, N, R)``, ``iso_t (T, P, R)`` or ``(0, P, R)``.

    Per step: forward ``P_kᵀ`` (n × d_k) for all layers, ``Mᵀ`` with ``M_ij = 2 r_ij w_ij`` on Ω,
    backward ``(Q_kᵀ M)ᵀ``, then ``W_k ← decay_t W_k − (Q_kᵀ M) P_kᵀ`` (+ ``iso_scale_t ζ``): the full-batch pass
    of ``._kernel_parts`` (``forward``, then ``weighted_pass``: ``backward`` and ``update`` with a step of 1, the
    weights carry the step size).
    """
    R = th.shape[1]
    T = w_t.shape[0]
    use_iso = iso_t.shape[0] > 0
    moff, pt, bt = pass_workspace(dims, R)
    dec = np.zeros(R)
    unit = np.ones(R)
    cf = np.zeros(R)
    kr = 0
    for t in range(T):
        forward(th, dims, off, moff, pt)
        for r in range(R):
            dec[r] = decay[t] if alive[r] else 1.0
        weighted_pass(th, dims, off, moff, pt, bt, rows, cols, vals, w_t[t], dec, unit, cf, alive, div_step,
                      step0 + t + 1, div_resid)
        if use_iso:
            add_noise(th, iso_t, t, iso_scale[t], alive)
        kr = end_of_step(th, alive, snaps, rec_pos, kr, step0, t, tiny)
    return 0


@njit(cache=True, nogil=True)
def _weighted_block(theta, dims, off, rows, cols, vals, weights, decay, iso_noise, iso_scale, rec_pos, snaps,
                    div_step, step0, div_resid, tiny, r0, r1):
    """Runs ``r0:r1`` of ``theta (R, P)``, ``weights (R, T, N)``, ``iso_noise (R, T, P)`` or ``(R, 0, P)``, as a
    block stepped by ``_weighted_ens``."""
    th, ds, alive = block_in(theta, div_step, r0, r1)
    w_t = runs_last(weights, r0, r1)  # (T, N, R_b)
    iso_t = runs_last(iso_noise, r0, r1)  # (T, P, R_b)
    _weighted_ens(th, dims, off, rows, cols, vals, w_t, decay, iso_t, iso_scale, rec_pos, snaps[r0:r1], ds, alive,
                  step0, div_resid, tiny)
    block_out(theta, div_step, r0, th, ds)


@njit(cache=True, nogil=True, parallel=True)
def _weighted_par(theta, dims, off, rows, cols, vals, weights, decay, iso_noise, iso_scale, rec_pos, snaps,
                  div_step, step0, div_resid, tiny, nb):
    """The runs of ``theta (R, P)`` in ``nb`` blocks, one per thread (``prange``), each by ``_weighted_block``."""
    R = theta.shape[0]
    for b in prange(nb):
        r0, r1 = block_bounds(R, nb, b)
        _weighted_block(theta, dims, off, rows, cols, vals, weights, decay, iso_noise, iso_scale, rec_pos, snaps,
                        div_step, step0, div_resid, tiny, r0, r1)
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
    snaps[div_step >= 0] = np.nan
    args = (theta, dims, off, rows, cols, vals, np.ascontiguousarray(weights, dtype=np.float64),
            np.ascontiguousarray(decay, dtype=np.float64), np.ascontiguousarray(iso_noise, dtype=np.float64),
            np.ascontiguousarray(iso_scale, dtype=np.float64), rec_pos, snaps, div_step, step0, div_resid, tiny)
    return run_in_blocks(_weighted_block, _weighted_par, args)
