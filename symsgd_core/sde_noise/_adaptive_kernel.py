"""Compiled loop (numba, serial over runs, deterministic) of the adaptive-step integrator of :mod:`.adaptive`.

One run at a time (``θ (P,)``), one step::

    h  = min(h_max, ρ s / ‖D‖, (ρ s)² / (T tr C), next record time − t),     s = max(‖θ‖, 1)
    w_k = h/N − sqrt(T h / N) (ξ_k − ξ̄)                                      (Euler–Maruyama's entry weights)
    W_ℓ ← (1 − 2γh) W_ℓ − Σ_k w_k g_k|_ℓ,    g_k|_ℓ = 2 r_k Q_ℓ[i_k, :]ᵀ P_ℓ[:, j_k]ᵀ

with the drift ``D = −ḡ − 2γθ`` (per unit time), ``ḡ = (1/N) Σ_k g_k`` and ``tr C = (1/N) Σ_k ‖g_k‖² − ‖ḡ‖²``
(exact: ``‖g_k‖² = 4 r_k² Σ_ℓ ‖Q_ℓ[i_k,:]‖² ‖P_ℓ[:,j_k]‖²``). ``P_ℓ = W_{ℓ-1}⋯W_0`` (``d_ℓ × n``) and
``Q_ℓ = W_{L-1}⋯W_{ℓ+1}`` (``m × d_{ℓ+1}``) are formed explicitly (the network is small). The step h depends on
θ only, never on the draw ξ it is used with, so the increment is a Gaussian of mean ``h D`` and covariance
``T h C``: the scheme is Euler–Maruyama on a predictable time grid.

Randomness: run r seeds numba's generator with ``seeds[r]`` before its first step (so a run's draws do not depend
on the other runs), or reads ``xi_given[r, step]`` (tests: the same normals as a fixed-step run).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rank_jumps.stepping import FLUSH_EVERY

__all__ = ["EVENT_BUDGET", "EVENT_NONE", "EVENT_RESIDUAL", "EVENT_STALL", "adaptive_runs"]

#: Outcome codes per run: reached the end; a residual above the divergence limit; the step rule asked for a
#: step below ``h_min`` (θ so large that the path needs ever smaller steps); the step budget ran out.
EVENT_NONE, EVENT_RESIDUAL, EVENT_STALL, EVENT_BUDGET = 0, 1, 2, 3


@njit(cache=True)
def adaptive_runs(theta, dims, off, rows, cols, vals, weight_decay, temp, h_max, rho, rec_t, snaps, seeds, xi_given,
                  h_min, max_steps, div_resid, tiny, escape_norm, t_event, event, n_steps, n_reduced, min_h, max_norm,
                  t_escape, broken_noise):
    """Integrate every run of ``theta (R, P)`` (in place) to ``rec_t[-1]``; snapshots at the times ``rec_t (K,)``.

    Args:
        theta: ``(R, P)`` float64 start, overwritten with the end state (the state at the event for stopped runs).
        dims, off: int64 ``(L+1,)`` widths and offsets.  rows, cols, vals: ``(N,)`` observed entries.
        weight_decay, temp: γ and the temperature T = η/S.  h_max: the largest step (time units).  rho: the step rule's
            relative bound (``rho <= 0``: fixed step h_max).  rec_t: ``(K,)`` increasing record times > 0.
        snaps: ``(R, K, P)`` output (NaN after an event).  seeds: ``(R,)`` int64 (used when ``xi_given`` is empty).
        xi_given: ``(R, S, N)`` normals (step s of run r uses ``xi_given[r, s]``) or ``(0, 0, 0)``.
        h_min, max_steps: the stall and budget rules.  div_resid, tiny: divergence limit and flush threshold.
        t_event, event, n_steps, n_reduced, min_h, max_norm: ``(R,)`` outputs: time and code of the event
            (NaN / :data:`EVENT_NONE` if none), steps taken, steps shortened by the rule, the smallest step of
            the rule, and the largest ‖θ‖ seen.
        escape_norm, t_escape: the first time ‖θ‖ ≥ ``escape_norm`` is written to ``t_escape (R,)`` (left as
            given, NaN, if never); the path goes on.
        broken_noise: a deliberately wrong scheme for the checks: the noise keeps the size of a step h_max
            when the rule shortens the step (variance ``T h_max`` instead of ``T h``).
    """
    R, P = theta.shape
    L = dims.shape[0] - 1
    n = dims[0]
    m = dims[L]
    N = rows.shape[0]
    K = rec_t.shape[0]
    given = xi_given.shape[0] > 0
    foff = np.zeros(L + 2, dtype=np.int64)  # P_ℓ (d_ℓ × n) at foff[ℓ]
    for ell in range(L + 1):
        foff[ell + 1] = foff[ell] + dims[ell] * n
    boff = np.zeros(L + 2, dtype=np.int64)  # B_ℓ = W_{L-1}⋯W_ℓ (m × d_ℓ) at boff[ℓ]; B_L = I_m; Q_ℓ = B_{ℓ+1}
    for ell in range(L + 1):
        boff[ell + 1] = boff[ell] + m * dims[ell]
    F = np.zeros(foff[L + 1])
    B = np.zeros(boff[L + 1])
    th = np.zeros(P)
    gbar = np.zeros(P)
    upd = np.zeros(P)
    r_k = np.zeros(N)
    w = np.zeros(N)
    xi = np.zeros(N)
    for run in range(R):
        for p in range(P):
            th[p] = theta[run, p]
        if not given:
            np.random.seed(seeds[run])  # noqa: NPY002 (numba's per-thread generator; no Generator in nopython)
        t = 0.0
        kr = 0
        steps = 0
        reduced = 0
        hmin_seen = h_max
        nmax = 0.0
        code = EVENT_NONE
        while kr < K:
            # forward: P_0 = I_n, P_{ℓ+1} = W_ℓ P_ℓ
            for q in range(n):
                for c in range(n):
                    F[q * n + c] = 1.0 if q == c else 0.0
            for ell in range(L):
                din = dims[ell]
                dout = dims[ell + 1]
                for a in range(dout):
                    for c in range(n):
                        acc = 0.0
                        for q in range(din):
                            acc += th[off[ell] + a * din + q] * F[foff[ell] + q * n + c]
                        F[foff[ell + 1] + a * n + c] = acc
            # backward: B_L = I_m, B_ℓ = B_{ℓ+1} W_ℓ
            for i in range(m):
                for a in range(m):
                    B[boff[L] + i * m + a] = 1.0 if i == a else 0.0
            for ell in range(L - 1, 0, -1):
                din = dims[ell]
                dout = dims[ell + 1]
                for i in range(m):
                    for q in range(din):
                        acc = 0.0
                        for a in range(dout):
                            acc += B[boff[ell + 1] + i * dout + a] * th[off[ell] + a * din + q]
                        B[boff[ell] + i * din + q] = acc
            bad = False
            for k in range(N):
                r_k[k] = F[foff[L] + rows[k] * n + cols[k]] - vals[k]
                if not (abs(r_k[k]) <= div_resid):
                    bad = True
            nrm = 0.0
            for p in range(P):
                nrm += th[p] * th[p]
            nrm = np.sqrt(nrm)
            if nrm > nmax:
                nmax = nrm
            if nrm >= escape_norm and not (t_escape[run] <= t):
                t_escape[run] = t
            if bad:
                code = EVENT_RESIDUAL
                break
            if steps >= max_steps:
                code = EVENT_BUDGET
                break
            # ḡ, ‖g_k‖², the drift and tr C
            for p in range(P):
                gbar[p] = 0.0
            g2sum = 0.0
            for ell in range(L):
                din = dims[ell]
                dout = dims[ell + 1]
                for k in range(N):
                    i = rows[k]
                    j = cols[k]
                    qn = 0.0
                    for a in range(dout):
                        v = B[boff[ell + 1] + i * dout + a]
                        qn += v * v
                    pn = 0.0
                    for q in range(din):
                        v = F[foff[ell] + q * n + j]
                        pn += v * v
                    g2sum += 4.0 * r_k[k] * r_k[k] * qn * pn
                    cf = 2.0 * r_k[k] / N
                    for a in range(dout):
                        qa = cf * B[boff[ell + 1] + i * dout + a]
                        for q in range(din):
                            gbar[off[ell] + a * din + q] += qa * F[foff[ell] + q * n + j]
            gb2 = 0.0
            d2 = 0.0
            for p in range(P):
                gb2 += gbar[p] * gbar[p]
                dp = gbar[p] + 2.0 * weight_decay * th[p]
                d2 += dp * dp
            trc = g2sum / N - gb2
            if trc < 0.0:
                trc = 0.0
            h = h_max
            if rho > 0.0:
                s = nrm if nrm > 1.0 else 1.0
                dn = np.sqrt(d2)
                if dn * h > rho * s:
                    h = rho * s / dn
                if temp * trc * h > (rho * s) ** 2:
                    h = (rho * s) ** 2 / (temp * trc)
                if h < h_max:
                    reduced += 1
                    if h < hmin_seen:
                        hmin_seen = h
                if h < h_min:
                    code = EVENT_STALL
                    break
            to_rec = rec_t[kr] - t
            at_rec = to_rec <= h * (1.0 + 1e-9)
            if at_rec:
                h = to_rec
            # Euler–Maruyama entry weights for this step
            if given:
                for k in range(N):
                    xi[k] = xi_given[run, steps, k]
            else:
                for k in range(N):
                    xi[k] = np.random.standard_normal()  # noqa: NPY002 (seeded per run above)
            xm = 0.0
            for k in range(N):
                xm += xi[k]
            xm /= N
            sc = np.sqrt(temp * (h_max if broken_noise else h) / N)
            for k in range(N):
                w[k] = h / N - sc * (xi[k] - xm)
            for p in range(P):
                upd[p] = 0.0
            for ell in range(L):
                din = dims[ell]
                dout = dims[ell + 1]
                for k in range(N):
                    i = rows[k]
                    j = cols[k]
                    cf = 2.0 * r_k[k] * w[k]
                    for a in range(dout):
                        qa = cf * B[boff[ell + 1] + i * dout + a]
                        for q in range(din):
                            upd[off[ell] + a * din + q] += qa * F[foff[ell] + q * n + j]
            dec = 1.0 - 2.0 * weight_decay * h
            for p in range(P):
                th[p] = dec * th[p] - upd[p]
            steps += 1
            t = rec_t[kr] if at_rec else t + h
            if steps % FLUSH_EVERY == 0:
                for p in range(P):
                    if abs(th[p]) < tiny:
                        th[p] = 0.0
            if at_rec:
                for p in range(P):
                    snaps[run, kr, p] = th[p]
                kr += 1
        for k2 in range(kr, K):
            for p in range(P):
                snaps[run, k2, p] = np.nan
        if code != EVENT_NONE:
            t_event[run] = t
        event[run] = code
        n_steps[run] = steps
        n_reduced[run] = reduced
        min_h[run] = hmin_seen
        max_norm[run] = nmax
        for p in range(P):
            theta[run, p] = th[p]
    return 0
