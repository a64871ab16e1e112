"""The tamed Euler–Maruyama step of SGD's SDE (Hutzenthaler, Jentzen & Kloeden 2012, Ann. Appl. Probab. 22(4)):
compiled (numba, parallel over runs, deterministic) and its readable reference, with the signatures of the
Euler–Maruyama pair :func:`._sde_kernels.weighted_chunk` / :func:`._sde_reference.reference_chunk`, so
:func:`.sde.run_sde` drives it (``chunks=TAMED_CHUNKS``) with EM's draws, records and divergence rule::

    θ ← θ + dt b / (1 + dt ‖b‖) + sqrt(T dt / N) Σ_k (g_k − ḡ) ξ_k,      b = −ḡ − 2γθ  (per unit time, (P,))

Only the drift is tamed (‖drift increment‖ < 1 whatever θ); the noise is EM's. As an entry-weighted step it is EM
with the drift's time ``dt`` replaced by ``f dt``, ``f = 1/(1 + dt‖b‖)`` per run: ``w_k = f dt/N − sqrt(T dt/N)
(ξ_k − ξ̄)`` and weight decay ``1 − 2γ f dt``. The compiled step takes EM's weights ``w_k`` and splits them into the
drift part ``w̄ = dt/N`` (their mean: ``Σ_k w_k = dt``) and the noise part ``w_k − w̄``; per step it makes the drift
pass (``dt b``, with the given decay), measures ``dt‖b‖``, restores θ, makes the noise pass (decay 1) and adds
``f dt b``: two passes of the full-batch step of :mod:`._kernel_parts` (``forward``/``backward``/``update``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import _kernel_parts as _k  # the full-batch pass, the end of a step and the blocks, reused by name
from ._sde_reference import reference_chunk
from .noise import per_entry_gradients

__all__ = ["TAMED_CHUNKS", "tamed_chunk", "tamed_factor", "tamed_reference_chunk"]


def tamed_factor(drift: np.ndarray, dt: float) -> np.ndarray:
    """``f = 1 / (1 + dt ‖b‖)`` per run for drifts ``b (R, P)`` (per unit time): the tamed drift increment is
    ``f dt b``. ``(R,)``."""
    return 1.0 / (1.0 + dt * np.linalg.norm(np.asarray(drift, dtype=np.float64), axis=-1))


@njit(cache=True, fastmath=_k.FASTMATH)
def _tamed_ens(th, dims, off, rows, cols, vals, w_t, decay, iso_t, iso_scale, rec_pos, snaps, div_step, alive,
               step0, div_resid, tiny):
    """Tamed steps, ensemble layout ``th (P, R)``, EM's entry weights ``w_t (T, N, R)``, ``iso_t (T, P, R)`` or
    ``(0, P, R)`` (added as in EM)."""
    P, R = th.shape
    Ne = rows.shape[0]
    moff, pt, bt = _k.pass_workspace(dims, R)
    th0 = np.empty((P, R))
    wd = np.empty((Ne, R))
    wn = np.empty((Ne, R))
    dec = np.empty(R)
    unit = np.ones(R)
    cf = np.zeros(R)
    fac = np.empty(R)
    kr = 0
    for t in range(w_t.shape[0]):
        for r in range(R):
            s = 0.0
            for e in range(Ne):
                s += w_t[t, e, r]
            for e in range(Ne):
                wd[e, r] = s / Ne
                wn[e, r] = w_t[t, e, r] - s / Ne
            dec[r] = decay[t] if alive[r] else 1.0
        for p in range(P):
            for r in range(R):
                th0[p, r] = th[p, r]
        _k.forward(th, dims, off, moff, pt)
        _k.weighted_pass(th, dims, off, moff, pt, bt, rows, cols, vals, wd, dec, unit, cf, alive, div_step,
                       step0 + t + 1, div_resid)
        for r in range(R):
            fac[r] = 0.0
        for p in range(P):
            for r in range(R):
                d = th[p, r] - th0[p, r]  # dt b
                fac[r] += d * d
                th[p, r] = th0[p, r]
                th0[p, r] = d
        for r in range(R):
            fac[r] = 1.0 / (1.0 + np.sqrt(fac[r]))
        _k.weighted_pass(th, dims, off, moff, pt, bt, rows, cols, vals, wn, unit, unit, cf, alive, div_step,
                       step0 + t + 1, div_resid)
        for p in range(P):
            for r in range(R):
                if alive[r]:
                    th[p, r] += fac[r] * th0[p, r]
        if iso_t.shape[0] > 0:
            _k.add_noise(th, iso_t, t, iso_scale[t], alive)
        kr = _k.end_of_step(th, alive, snaps, rec_pos, kr, step0, t, tiny)
    return 0


@njit(cache=True, nogil=True)
def _tamed_block(theta, dims, off, rows, cols, vals, weights, decay, iso_noise, iso_scale, rec_pos, snaps, div_step,
                 step0, div_resid, tiny, r0, r1):
    """Runs ``r0:r1`` of ``theta (R, P)``, ``weights (R, T, N)``, ``iso_noise (R, T, P)`` or ``(R, 0, P)``, as a block
    stepped by ``_tamed_ens``."""
    th, ds, alive = _k.block_in(theta, div_step, r0, r1)
    _tamed_ens(th, dims, off, rows, cols, vals, _k.runs_last(weights, r0, r1), decay, _k.runs_last(iso_noise, r0, r1),
               iso_scale, rec_pos, snaps[r0:r1], ds, alive, step0, div_resid, tiny)
    _k.block_out(theta, div_step, r0, th, ds)


@njit(cache=True, nogil=True, parallel=True)
def _tamed_par(theta, dims, off, rows, cols, vals, weights, decay, iso_noise, iso_scale, rec_pos, snaps, div_step,
               step0, div_resid, tiny, nb):
    """The runs in ``nb`` blocks, one per thread, each by ``_tamed_block``."""
    for b in prange(nb):
        r0, r1 = _k.block_bounds(theta.shape[0], nb, b)
        _tamed_block(theta, dims, off, rows, cols, vals, weights, decay, iso_noise, iso_scale, rec_pos, snaps,
                     div_step, step0, div_resid, tiny, r0, r1)
    return 0


def tamed_chunk(theta, dims, off, rows, cols, vals, weights, decay, iso_noise, iso_scale, rec_pos, snaps, div_step,
                step0, div_resid, tiny):
    """T tamed steps for every run (compiled); updates ``theta (R, P)`` in place. Arguments as
    :func:`._sde_kernels.weighted_chunk` (``weights (R, T, N)``: EM's entry weights, ``Σ_k w_k = dt``)."""
    snaps[div_step >= 0] = np.nan
    args = (theta, dims, off, rows, cols, vals, np.ascontiguousarray(weights, dtype=np.float64),
            np.ascontiguousarray(decay, dtype=np.float64), np.ascontiguousarray(iso_noise, dtype=np.float64),
            np.ascontiguousarray(iso_scale, dtype=np.float64), rec_pos, snaps, div_step, step0, div_resid, tiny)
    return _k.run_in_blocks(_tamed_block, _tamed_par, args)


def tamed_reference_chunk(theta, arch, problem, weight_decay, dt, xi, scale, iso_noise, iso_scale, rec_pos, snaps,
                          div_step, step0, div_resid, tiny, fixed_weights=None):
    """T tamed steps per run, readable (plain numpy); arguments as :func:`._sde_reference.reference_chunk`.

    Step t of run r is one EM step of :func:`reference_chunk` (its divergence rule, flush and snapshot) with the
    drift's time ``f dt``: entry weights ``f dt/N − scale (ξ_k − ξ̄)`` and weight decay ``f γ``, where
    ``f = 1/(1 + dt ‖b‖)`` and ``b = −ḡ − 2γθ`` come from the explicit per-entry gradients at the step's θ.
    """
    if fixed_weights is not None:
        raise ValueError("the tamed step draws Gaussian (or ±1) increments; it takes no fixed entry weights")
    R, T, N = xi.shape
    for t in range(T):
        g = per_entry_gradients(theta, arch, problem)  # (R, N, P)
        f = tamed_factor(-(g.mean(axis=1) + 2.0 * weight_decay * theta), dt)
        k = int(np.searchsorted(rec_pos, t + 1))
        at_rec = k < len(rec_pos) and rec_pos[k] == t + 1
        for r in range(R):
            xr = xi[r, t]
            w = f[r] * dt / N - scale * (xr - xr.mean())
            reference_chunk(theta[r:r + 1], arch, problem, f[r] * weight_decay, dt, xi[r:r + 1, t:t + 1], scale,
                            iso_noise[r:r + 1, t:t + 1], iso_scale[t:t + 1],
                            np.array([1] if at_rec else [], dtype=np.int64), snaps[r:r + 1, k:k + 1],
                            div_step[r:r + 1], step0 + t, div_resid, tiny, fixed_weights=w[None, None])


#: The pair ``(compiled, reference)`` that :func:`.sde.run_sde` takes as ``chunks``.
TAMED_CHUNKS = (tamed_chunk, tamed_reference_chunk)
