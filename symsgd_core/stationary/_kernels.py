"""Numba kernels for the v-SDE of diagonal networks (private; use :mod:`symsgd_core.stationary.v_sde`).

State ``x``: ``v`` itself for depth 0, ``s = log|v|`` for depth ≥ 1 (the branch sign is
handled by the caller, which flips α₂ and β₂ for the negative branch). Coefficients of
``dx = a(x) dt + b(x) dW`` (derived in :mod:`symsgd_core.stationary.laws`, Itô, ``q = (D−1)/(D+1)``)::

    D = 0:  a = −2((β₁ + γ) v − β₂),                               b = 2 sqrt(T g(v))
    D ≥ 1:  a = −2(D+1)[(β₁ e^s − β₂) e^{qs} + γ + T g(e^s) e^{2qs}],  b = 2(D+1) sqrt(T g(e^s)) e^{qs}

Schemes: 0 = Euler–Maruyama (weak order 1); 1 = Platen's explicit order-2.0 weak scheme
(Kloeden & Platen 1992, Eq. 15.1.1) with Gaussian increments. A step whose local stiffness
``dt · (|a'(x)| + b'(x)²)`` exceeds ``STIFF`` is split into equal sub-steps with fresh
increments (only in the far tail of v); the kernels return how many extra sub-steps they took.
The caller passes ``x_stiff``, below which a monotone bound guarantees no split is needed, so
the common path costs one ``exp`` and one ``sqrt`` per Euler step.

Every kernel takes its own ``numpy.random.Generator`` (one per block of chains, spawned from
the run's seed), so a run is reproducible and independent of how blocks map to threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Largest allowed ``dt · (|a'| + b'²)`` in one step before the step is split.
STIFF = 0.25
#: Most sub-steps one step may take before the chain is declared non-finite (reported).
MAX_SUBSTEPS = 10_000_000


@njit(cache=True, nogil=True)
def _coeffs(x, depth, a1, a2, a3, b1, b2, gam, temp):
    """Drift a(x) and diffusion b(x) of the v-SDE (depth 0) or the s-SDE (depth ≥ 1)."""
    if depth == 0:
        g = (a1 * x - 2.0 * a2) * x + a3
        return -2.0 * ((b1 + gam) * x - b2), 2.0 * math.sqrt(temp * g)
    c = 2.0 * (depth + 1)
    v = math.exp(x)
    g = (a1 * v - 2.0 * a2) * v + a3
    if depth == 1:
        return -c * (b1 * v - b2 + gam + temp * g), c * math.sqrt(temp * g)
    e = math.exp((depth - 1.0) / (depth + 1.0) * x)
    return -c * ((b1 * v - b2) * e + gam + temp * g * e * e), c * math.sqrt(temp * g) * e


@njit(cache=True, nogil=True)
def stiffness(x, depth, a1, a2, a3, b1, b2, gam, temp):
    """Local stiffness rate ``|a'(x)| + b'(x)²`` (per unit time) of the SDE at state x."""
    if depth == 0:
        g = (a1 * x - 2.0 * a2) * x + a3
        db = temp * (2.0 * a1 * x - 2.0 * a2) / math.sqrt(temp * g)
        return 2.0 * (b1 + gam) + db * db
    c = 2.0 * (depth + 1)
    q = (depth - 1.0) / (depth + 1.0)
    v = math.exp(x)
    e = math.exp(q * x)
    g = (a1 * v - 2.0 * a2) * v + a3
    vg = 2.0 * a1 * v * v - 2.0 * a2 * v  # v g'(v)
    sg = math.sqrt(temp * g)
    da = -c * ((b1 * v * (1.0 + q) - b2 * q) * e + temp * e * e * (vg + 2.0 * q * g))
    db = c * e * (temp * vg / (2.0 * sg) + q * sg)
    return abs(da) + db * db


@njit(cache=True, nogil=True)
def _step(x, h, dw, scheme, depth, a1, a2, a3, b1, b2, gam, temp):
    """One step of size h with Brownian increment dw (0: Euler–Maruyama, 1: Platen weak order 2)."""
    a, b = _coeffs(x, depth, a1, a2, a3, b1, b2, gam, temp)
    if scheme == 0:
        return x + a * h + b * dw
    sh = math.sqrt(h)
    abar, _ = _coeffs(x + a * h + b * dw, depth, a1, a2, a3, b1, b2, gam, temp)
    _, bp = _coeffs(x + a * h + b * sh, depth, a1, a2, a3, b1, b2, gam, temp)
    _, bm = _coeffs(x + a * h - b * sh, depth, a1, a2, a3, b1, b2, gam, temp)
    return (x + 0.5 * (abar + a) * h + 0.25 * (bp + bm + 2.0 * b) * dw
            + 0.25 * (bp - bm) * (dw * dw - h) / sh)


@njit(cache=True, nogil=True)
def _advance_stiff(x, dt, dw, rng, scheme, depth, a1, a2, a3, b1, b2, gam, temp, stiff):
    """Advance one chain by dt from a state beyond the stiffness threshold.

    If ``dt · stiffness(x) ≤ stiff`` this is one ordinary step with increment ``dw``; otherwise
    the step is split into sub-steps ``h = min(remaining, stiff/stiffness(x))`` with fresh
    increments, re-assessed after each one. (At large v the s-SDE makes brief excursions to
    very large v — its scale function grows like e^{s/(D+1)} — which consume little time but
    many sub-steps.) A state whose stiffness is not finite, or a step needing more than
    ``MAX_SUBSTEPS`` sub-steps, returns NaN: the caller reports it, never hides it.
    Returns (new state, number of extra sub-steps).
    """
    lam = stiffness(x, depth, a1, a2, a3, b1, b2, gam, temp)
    if lam * dt <= stiff:
        return _step(x, dt, dw, scheme, depth, a1, a2, a3, b1, b2, gam, temp), 0
    remaining = dt
    extra = -1
    while remaining > 1e-14 * dt:
        lam = stiffness(x, depth, a1, a2, a3, b1, b2, gam, temp)
        if not lam < 1e300 or extra >= MAX_SUBSTEPS:
            return math.nan, extra + 1
        h = min(remaining, stiff / lam)
        x = _step(x, h, math.sqrt(h) * rng.standard_normal(), scheme, depth, a1, a2, a3, b1, b2, gam, temp)
        remaining -= h
        extra += 1
    return x, extra


@njit(cache=True, nogil=True)
def run_block(x, rng, n_steps, dt, record_every, scheme, depth, a1, a2, a3, b1, b2, gam, temp, stiff, x_stiff,
              out):
    """Advance the chains ``x`` (n,) in place for ``n_steps`` steps of size ``dt``.

    States ``x ≥ x_stiff`` are checked for stiffness (below it, ``dt · stiffness < stiff`` is
    guaranteed by the caller's monotone bound). ``out`` (n_steps // record_every, n) receives
    the state after every ``record_every`` steps. Returns the number of extra sub-steps.
    """
    n = x.shape[0]
    sq = math.sqrt(dt)
    z = np.empty(n)
    extra = 0
    rec = 0
    euler1 = scheme == 0 and depth == 1
    for k in range(n_steps):
        for i in range(n):
            z[i] = rng.standard_normal()
        for i in range(n):
            xi = x[i]
            if euler1 and xi < x_stiff:  # the common case, written out: one exp and one sqrt
                v = math.exp(xi)
                g = (a1 * v - 2.0 * a2) * v + a3
                x[i] = xi - 4.0 * (b1 * v - b2 + gam + temp * g) * dt + 4.0 * math.sqrt(temp * g) * sq * z[i]
            elif xi < x_stiff:
                x[i] = _step(xi, dt, sq * z[i], scheme, depth, a1, a2, a3, b1, b2, gam, temp)
            else:
                xi, e = _advance_stiff(xi, dt, sq * z[i], rng, scheme, depth, a1, a2, a3, b1, b2, gam, temp, stiff)
                x[i] = xi
                extra += e
        if (k + 1) % record_every == 0:
            for i in range(n):
                out[rec, i] = x[i]
            rec += 1
    return extra


@njit(cache=True, nogil=True)
def run_block_coupled(xf, xc, rng, n_coarse, dt, record_every, scheme, depth, a1, a2, a3, b1, b2, gam, temp,
                      stiff, x_stiff_fine, x_stiff_coarse, out_f, out_c):
    """Fine (dt/2) and coarse (dt) chains driven by the same Brownian path.

    Each coarse step uses ``ΔW = ΔW₁ + ΔW₂`` of the two fine steps, so the difference of the two
    ensembles' statistics measures the discretisation error with reduced sampling noise.
    Returns the number of extra sub-steps (both chains).
    """
    n = xf.shape[0]
    h = 0.5 * dt
    sq = math.sqrt(h)
    extra = 0
    rec = 0
    for k in range(n_coarse):
        for i in range(n):
            w1 = sq * rng.standard_normal()
            w2 = sq * rng.standard_normal()
            xi = xf[i]
            for w in (w1, w2):
                if xi < x_stiff_fine:
                    xi = _step(xi, h, w, scheme, depth, a1, a2, a3, b1, b2, gam, temp)
                else:
                    xi, e = _advance_stiff(xi, h, w, rng, scheme, depth, a1, a2, a3, b1, b2, gam, temp, stiff)
                    extra += e
            xf[i] = xi
            yi = xc[i]
            if yi < x_stiff_coarse:
                xc[i] = _step(yi, dt, w1 + w2, scheme, depth, a1, a2, a3, b1, b2, gam, temp)
            else:
                yi, e = _advance_stiff(yi, dt, w1 + w2, rng, scheme, depth, a1, a2, a3, b1, b2, gam, temp, stiff)
                xc[i] = yi
                extra += e
        if (k + 1) % record_every == 0:
            for i in range(n):
                out_f[rec, i] = xf[i]
                out_c[rec, i] = xc[i]
            rec += 1
    return extra
