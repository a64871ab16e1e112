"""Readable reference of the entry-weighted step of :mod:`.sde` (plain numpy, per run, the literal formulas).

Euler–Maruyama of SGD's SDE, written as the issue writes it::

    θ ← θ − dt (ḡ + 2γθ) + sqrt(T dt / N) Σ_k (g_k − ḡ) ξ_k      (+ sqrt(2τ dt) ζ for Langevin)

with explicit per-entry gradients ``g_k = ∇_θ (A_θ,ij − A*_ij)²`` (:func:`per_entry_gradients`). Nothing of size
P × P is formed. :func:`reference_chunk` has the signature of the compiled :func:`._kernels.weighted_chunk`
up to its noise arguments (it takes the standard normals ξ, the compiled path their entry weights), the same
divergence rule, flush of tiny entries and snapshots; the two agree to round-off on the same ξ (tested).
"""

from __future__ import annotations

import math

import numpy as np

from .network import Architecture, Params
from .noise import per_entry_gradients
from .problems import CompletionProblem
from .stepping import FLUSH_EVERY

__all__ = ["noise_factor", "reference_chunk"]


def noise_factor(theta: np.ndarray, arch: Architecture, problem: CompletionProblem) -> np.ndarray:
    """``G = (g_k − ḡ)/sqrt(N)`` per run, ``(R, N, P)``, so that ``C(θ) = GᵀG`` (rank ≤ N − 1)."""
    g = per_entry_gradients(theta, arch, problem)
    return (g - g.mean(axis=1, keepdims=True)) / math.sqrt(g.shape[1])


def reference_chunk(theta, arch, problem, weight_decay, dt, xi, scale, iso_noise, iso_scale, rec_pos, snaps, div_step,
                    step0, div_resid, tiny, fixed_weights=None):
    """T Euler–Maruyama steps per run with the literal formula; updates ``theta (R, P)`` in place.

    Args:
        theta: ``(R, P)``.  arch, problem: the network and the completion problem.
        weight_decay: weight decay γ.  dt: the step (time units).  xi: ``(R, T, N)`` standard normals (one per entry).
        scale: ``sqrt(T dt / N)``.  iso_noise: ``(R, T, P)`` normals or ``(R, 0, P)``; iso_scale ``(T,)``.
        rec_pos, snaps, div_step, step0, div_resid, tiny: as in :mod:`._kernels`.
        fixed_weights: ``(R, T, N)`` entry weights to use instead of the EM formula (SGD's ``η n_k/S``).
    """
    R, T, N = xi.shape
    rows, cols, vals = problem.entries
    for r in range(R):
        if div_step[r] >= 0:
            snaps[r] = np.nan
            continue
        k = 0
        for t in range(T):
            th = theta[r]
            A = Params(arch, th).end_to_end()[0]
            if not np.all(np.abs(A[rows, cols] - vals) <= div_resid):
                div_step[r] = step0 + t + 1
                snaps[r, k:] = np.nan
                break
            g = per_entry_gradients(th, arch, problem)[0]  # (N, P)
            gbar = g.mean(axis=0)
            if fixed_weights is None:
                new = th - dt * (gbar + 2.0 * weight_decay * th) + scale * ((g - gbar).T @ xi[r, t])
            else:
                new = th - fixed_weights[r, t] @ g - 2.0 * weight_decay * dt * th
            if iso_noise.shape[1] > 0:
                new = new + iso_scale[t] * iso_noise[r, t]
            theta[r] = new
            if (step0 + t + 1) % FLUSH_EVERY == 0:
                theta[r][np.abs(theta[r]) < tiny] = 0.0
            if k < len(rec_pos) and rec_pos[k] == t + 1:
                snaps[r, k] = theta[r]
                k += 1
