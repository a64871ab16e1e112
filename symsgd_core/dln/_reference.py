"""The readable (numpy) implementation of the step of :mod:`.stepping`: one run at a time, same draws, same updates
and the same signatures as the compiled :mod:`._kernels` (``engine="reference"``)."""

from __future__ import annotations

import numpy as np

from .stepping import FLUSH_EVERY

__all__ = ["gd_chunk", "sgd_chunk"]


def _layer_views(theta_r: np.ndarray, dims, off) -> list[np.ndarray]:
    """Views ``W_ℓ`` (d_{ℓ+1}, d_ℓ) into one run's flat parameters (writes go through)."""
    return [theta_r[off[k]:off[k + 1]].reshape(dims[k + 1], dims[k]) for k in range(len(dims) - 1)]


def _flush_and_record(theta_r, snaps_r, rec_pos, k: int, t: int, step: int, tiny: float) -> int:
    """After step ``step`` (the ``t``-th of the chunk): flush entries below ``tiny`` to 0 every
    :data:`~.stepping.FLUSH_EVERY` steps, take the record due now; returns the index of the next record."""
    if step % FLUSH_EVERY == 0:
        theta_r[np.abs(theta_r) < tiny] = 0.0
    if k < len(rec_pos) and rec_pos[k] == t + 1:
        snaps_r[k] = theta_r
        k += 1
    return k


def sgd_chunk(theta, dims, off, rows, cols, vals, idx, lr, weight_decay, rec_pos, snaps, div_step, step0, div_resid,
              tiny):
    """Readable numpy SGD with the signature of :func:`._kernels.sgd_chunk` (same draws, same updates)."""
    R, T, B = idx.shape
    for r in range(R):
        if div_step[r] >= 0:
            snaps[r] = np.nan
            continue
        ws = _layer_views(theta[r], dims, off)
        k = 0
        for t in range(T):
            grads = [np.zeros_like(w) for w in ws]
            dead = False
            for b in range(B):
                e = idx[r, t, b]
                i, j, target = rows[e], cols[e], vals[e]
                p = [np.eye(dims[0])[:, j]]  # p[ℓ] = P_ℓ[:, j], P_1 = I
                for w in ws:
                    p.append(w @ p[-1])
                resid = p[-1][i] - target  # A_ij − A*_ij
                if not abs(resid) <= div_resid:
                    dead = True
                    break
                q = [np.eye(dims[-1])[i]]  # q[ℓ] = Q_ℓ[i, :], Q_L = I
                for w in reversed(ws[1:]):
                    q.insert(0, w.T @ q[0])
                for ell in range(len(ws)):
                    grads[ell] += resid * np.outer(q[ell], p[ell])
            if dead:
                div_step[r] = step0 + t + 1
                snaps[r, k:] = np.nan
                break
            for w, g in zip(ws, grads):
                w[...] = (1.0 - 2.0 * lr[t] * weight_decay[t]) * w - (2.0 * lr[t] / B) * g
            k = _flush_and_record(theta[r], snaps[r], rec_pos, k, t, step0 + t + 1, tiny)


def gd_chunk(theta, dims, off, target, maskf, inv_n, lr, weight_decay, noise, noise_scale, rec_pos, snaps, div_step,
             step0, div_resid, tiny):
    """Readable numpy GD/Langevin with the signature of :func:`._kernels.gd_chunk`."""
    R, T = theta.shape[0], lr.shape[0]
    for r in range(R):
        if div_step[r] >= 0:
            snaps[r] = np.nan
            continue
        ws = _layer_views(theta[r], dims, off)
        k = 0
        for t in range(T):
            prefix = [np.eye(dims[0])]  # prefix[ℓ] = P_ℓ = W_{ℓ−1} ⋯ W_1
            for w in ws:
                prefix.append(w @ prefix[-1])
            diff = prefix[-1] - target
            if not np.all(np.abs(diff[maskf != 0]) <= div_resid):
                div_step[r] = step0 + t + 1
                snaps[r, k:] = np.nan
                break
            back = 2.0 * inv_n * diff * maskf  # Q_Lᵀ E with E = dC/dA
            grads = [None] * len(ws)
            for ell in range(len(ws) - 1, -1, -1):
                grads[ell] = back @ prefix[ell].T  # Q_ℓᵀ E P_ℓᵀ
                back = ws[ell].T @ back
            for w, g in zip(ws, grads):
                w[...] = (1.0 - 2.0 * lr[t] * weight_decay[t]) * w - lr[t] * g
            if noise.shape[1] > 0:
                theta[r] += noise_scale[t] * noise[r, t]
            k = _flush_and_record(theta[r], snaps[r], rec_pos, k, t, step0 + t + 1, tiny)
