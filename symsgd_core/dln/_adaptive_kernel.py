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

from ._kernel_parts import flush_run, snapshot_run
from .stepping import FLUSH_EVERY

__all__ = ["EVENT_BUDGET", "EVENT_CAP", "EVENT_NONE", "EVENT_NONFINITE", "EVENT_RESIDUAL", "EVENT_STALL",
           "adaptive_runs"]

#: Outcome codes per run: reached the end; a residual above the divergence limit; the step rule asked for a
#: step below ``h_min`` (θ so large that the path needs ever smaller steps); the step budget ran out; (follow mode)
#: ‖θ‖ reached the cap; (follow mode) a non-finite residual.
EVENT_NONE, EVENT_RESIDUAL, EVENT_STALL, EVENT_BUDGET, EVENT_CAP, EVENT_NONFINITE = 0, 1, 2, 3, 4, 5


@njit(cache=True)
def adaptive_runs(theta, dims, off, rows, cols, vals, weight_decay, temp, h_max, rho, rec_t, snaps, seeds, xi_given,
                  h_min, max_steps, div_resid, tiny, escape_norm, t_event, event, n_steps, n_reduced, min_h, max_norm,
                  t_escape, broken_noise, follow, cap_norm, exc_base, exc_start, exc_end, exc_max, exc_steps, n_exc):
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
        follow: the follow-every-path mode: no stall (``h_min`` is ignored), no residual rule (only a non-finite
            residual ends a path, :data:`EVENT_NONFINITE`), the time summed with Kahan's compensation (so a step
            below ulp(t) still advances it), and a path ends only at ``rec_t[-1]``, at ‖θ‖ ≥ ``cap_norm``
            (:data:`EVENT_CAP`) or at the budget. ``follow=False`` is the original scheme, bit for bit.
        exc_base, exc_start, exc_end, exc_max, exc_steps, n_exc: excursions above ``exc_base``: the i-th time a
            path goes from ‖θ‖ < exc_base to ≥ exc_base (checked at each step's start) opens excursion i, closed
            when ‖θ‖ < exc_base again; ``exc_start/exc_end/exc_max (R, E)`` its times and largest ‖θ‖,
            ``exc_steps (R, E)`` the steps it took (``exc_end`` NaN if still open at the end); ``n_exc (R,)``
            counts every excursion, also those beyond the arrays' capacity E (not stored).
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
    prev = np.zeros(P)
    r_k = np.zeros(N)
    w = np.zeros(N)
    xi = np.zeros(N)
    E = exc_start.shape[1]
    for run in range(R):
        for p in range(P):
            th[p] = theta[run, p]
        if not given:
            np.random.seed(seeds[run])  # noqa: NPY002 (numba's per-thread generator; no Generator in nopython)
        t = 0.0
        t_lo = 0.0  # Kahan compensation of t (follow mode)
        in_exc = False
        ne = 0
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
            if nrm >= exc_base:
                if not in_exc:
                    in_exc = True
                    if ne < E:
                        exc_start[run, ne] = t
                        exc_max[run, ne] = nrm
                        exc_steps[run, ne] = 0
                    ne += 1
                elif ne <= E and nrm > exc_max[run, ne - 1]:
                    exc_max[run, ne - 1] = nrm
            elif in_exc:
                in_exc = False
                if ne <= E:
                    exc_end[run, ne - 1] = t
            if bad:
                code = EVENT_NONFINITE if follow else EVENT_RESIDUAL
                if follow:  # report the last finite state
                    for p in range(P):
                        th[p] = prev[p]
                break
            if follow and nrm >= cap_norm:
                code = EVENT_CAP
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
                if h < h_min and not follow:
                    code = EVENT_STALL
                    break
            to_rec = (rec_t[kr] - t) + t_lo  # the steps' exact sum is t − t_lo
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
            if follow:
                for p in range(P):
                    prev[p] = th[p]
            for p in range(P):
                th[p] = dec * th[p] - upd[p]
            steps += 1
            if in_exc and ne <= E:
                exc_steps[run, ne - 1] += 1
            if at_rec:
                t = rec_t[kr]
                t_lo = 0.0
            elif follow:  # Kahan: t − t_lo is the steps' exact sum to within one rounding
                y = h - t_lo
                tn = t + y
                t_lo = (tn - t) - y
                t = tn
            else:
                t = t + h
            if steps % FLUSH_EVERY == 0:
                flush_run(th, tiny)
            if at_rec:
                snapshot_run(th, True, snaps, run, kr)
                kr += 1
        for k2 in range(kr, K):  # the records after an event
            snapshot_run(th, False, snaps, run, k2)
        if code != EVENT_NONE:
            t_event[run] = t
        n_exc[run] = ne
        event[run] = code
        n_steps[run] = steps
        n_reduced[run] = reduced
        min_h[run] = hmin_seen
        max_norm[run] = nmax
        for p in range(P):
            theta[run, p] = th[p]
    return 0
