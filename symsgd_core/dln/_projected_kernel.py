"""The projected Euler–Maruyama step of SGD's SDE (Beyn, Isaak & Kruse 2016, J. Sci. Comput. 67, "Stochastic
C-stability and B-consistency of explicit and implicit Euler-type schemes", the projected EM method): compiled
(numba, parallel over runs, deterministic) and its readable reference, with the signatures of the Euler–Maruyama
pair :func:`._sde_kernels.weighted_chunk` / :func:`._sde_reference.reference_chunk` (plus the ball's ``radius``,
bound by :func:`projected_chunks`), so :func:`.sde.run_sde` drives it with EM's draws, records and divergence rule::

    θ̄ = min(1, R/‖θ‖) θ,     θ ← θ̄ − dt (ḡ(θ̄) + 2γθ̄) + sqrt(T dt / N) Σ_k (g_k(θ̄) − ḡ(θ̄)) ξ_k      (per run)

Before each step a run's θ ``(P,)`` is projected onto the ball of radius ``R(dt)`` (:func:`projection_radius`), then
the ordinary EM step is taken from there with EM's draws. Inside the ball it is EM, bit for bit. The records are the
steps' results (``θ`` after the step, not yet projected), as the paper's approximation is.

**The radius.** The paper takes ``R(h) = h^(−α)``, ``α = 1/(2(q − 1))``, for drift and diffusion of polynomial growth
``q`` (``|f(x) − f(y)| ≤ C(1 + |x|^(q−1) + |y|^(q−1))|x − y|``): on that ball ``h·Lip(f) ≤ C h^(1/2)``. Here the drift
``−∇𝓛_γ`` of a depth-L network is a polynomial of degree ``q = 2L − 1`` in θ, so ``α = 1/(4(L − 1))``
(:func:`projection_exponent`; depth 1 is globally Lipschitz: no projection). The paper's ``h^(−α)`` is written for
states of unit size; θ's own unit is ``ρ* = sqrt(L Σ_i σ_i(A*_Ω)^(2/L))`` (:func:`fit_norm`), the smallest ``‖θ‖``
of a network whose ``A_θ`` is the observed target (zeros elsewhere). So ``R(dt) = ρ* dt^(−α)``: a constant factor,
which the paper's order proof absorbs, and at every ``dt ≤ 1`` the ball holds every θ with ``𝓛_γ(θ) ≤ γρ*²`` (then
``γ‖θ‖² ≤ γρ*²``), among them every minimiser of 𝓛_γ. (At depth 4 and ε = 0.2: ρ* = 2.83, R(η/16) = 3.94 at
η = 0.3, where the minimum has ‖θ‖ = 2.72.) The theorem's hypotheses (a global monotonicity condition, diffusion
growing at most like ``|θ|^((q+1)/2)``) do not hold for SGD's SDE, whose diffusion grows like ``|θ|^(2L−1)``: the
declared orders are those of EM on the ball, which grows without bound as dt → 0.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from numba import njit, prange

from ..core.validation import check_positive
from . import _kernel_parts as _k  # the full-batch pass, the block driver and the end-of-step rules, reused by name
from ._sde_reference import reference_chunk
from .network import Architecture
from .problems import CompletionProblem

__all__ = ["fit_norm", "project", "projected_chunk", "projected_chunks", "projected_reference_chunk",
           "projection_exponent", "projection_radius"]


def projection_exponent(depth: int) -> float:
    """``α = 1/(2(q − 1))`` with ``q = 2L − 1`` (the degree of the drift in θ): ``1/(4(L − 1))``; ``inf`` at depth 1
    (a linear model: globally Lipschitz coefficients, no projection)."""
    if int(depth) < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    return float("inf") if depth == 1 else 1.0 / (4.0 * (depth - 1))


def fit_norm(problem: CompletionProblem, depth: int) -> float:
    """``ρ* = sqrt(L Σ_i σ_i(A*_Ω)^(2/L))``: the smallest ``‖θ‖`` of a depth-L network (widths at least the rank)
    with ``A_θ = A*_Ω``, the observed target with zeros elsewhere (the balanced factorisation), in θ's units."""
    observed = np.where(problem.mask, problem.target, 0.0)
    s = np.linalg.svd(observed, compute_uv=False)
    return float(np.sqrt(depth * np.sum(s ** (2.0 / depth))))


def projection_radius(dt: float, arch: Architecture, problem: CompletionProblem) -> float:
    """``R(dt) = ρ* dt^(−α)`` (module docstring): the ball each run is projected onto before a step of ``dt``."""
    dt = check_positive("dt", dt)
    alpha = projection_exponent(arch.depth)
    return float("inf") if np.isinf(alpha) else fit_norm(problem, arch.depth) * dt ** (-alpha)


def project(theta: np.ndarray, radius: float) -> np.ndarray:
    """``min(1, R/‖θ_r‖) θ_r`` for every run of ``theta (R, P)`` (readable; a non-finite norm is left as it is, for
    the divergence rule). ``(R, P)``, a new array."""
    theta = np.array(theta, dtype=np.float64)
    nrm = np.sqrt(np.sum(theta * theta, axis=-1))
    out = np.isfinite(nrm) & (nrm > radius)
    theta[out] *= (radius / nrm[out])[:, None]
    return theta


@njit(cache=True, fastmath=_k.FASTMATH)
def _project(th, radius, alive, nrm):
    """``θ_r ← min(1, R/‖θ_r‖) θ_r`` for the live runs of ``th (P, R)`` (``nrm``: scratch of length R). A norm that is
    not finite leaves θ as it is: the step's residual check then stops the run (the divergence rule)."""
    P, R = th.shape
    for r in range(R):
        nrm[r] = 0.0
    for p in range(P):
        for r in range(R):
            nrm[r] += th[p, r] * th[p, r]
    for r in range(R):
        s = np.sqrt(nrm[r])
        nrm[r] = radius / s if (alive[r] and s > radius and math.isfinite(s)) else 1.0
    for p in range(P):
        for r in range(R):
            if nrm[r] != 1.0:
                th[p, r] *= nrm[r]


@njit(cache=True, fastmath=_k.FASTMATH)
def _projected_ens(th, dims, off, rows, cols, vals, w_t, decay, iso_t, iso_scale, rec_pos, snaps, div_step, alive,
                   step0, div_resid, tiny, radius):
    """Projected EM steps, ensemble layout ``th (P, R)``, EM's entry weights ``w_t (T, N, R)``, ``iso_t (T, P, R)``
    or ``(0, P, R)``: the projection, then EM's step exactly as :func:`._sde_kernels._weighted_ens` takes it."""
    R = th.shape[1]
    moff, pt, bt = _k.pass_workspace(dims, R)
    dec = np.zeros(R)
    unit = np.ones(R)
    cf = np.zeros(R)
    nrm = np.zeros(R)
    kr = 0
    for t in range(w_t.shape[0]):
        _project(th, radius, alive, nrm)
        _k.forward(th, dims, off, moff, pt)
        for r in range(R):
            dec[r] = decay[t] if alive[r] else 1.0
        _k.weighted_pass(th, dims, off, moff, pt, bt, rows, cols, vals, w_t[t], dec, unit, cf, alive, div_step,
                         step0 + t + 1, div_resid)
        if iso_t.shape[0] > 0:
            _k.add_noise(th, iso_t, t, iso_scale[t], alive)
        kr = _k.end_of_step(th, alive, snaps, rec_pos, kr, step0, t, tiny)
    return 0


@njit(cache=True, nogil=True)
def _projected_block(theta, dims, off, rows, cols, vals, w_tnr, decay, iso_tpr, iso_scale, rec_pos, snaps, div_step,
                     step0, div_resid, tiny, radius, r0, r1):
    """Runs ``r0:r1`` of ``theta (R, P)``; ``w_tnr (T, N, R)`` and ``iso_tpr (T, P, R)`` already runs-last."""
    th, ds, alive = _k.block_in(theta, div_step, r0, r1)
    _projected_ens(th, dims, off, rows, cols, vals, np.ascontiguousarray(w_tnr[:, :, r0:r1]), decay,
                   np.ascontiguousarray(iso_tpr[:, :, r0:r1]), iso_scale, rec_pos, snaps[r0:r1], ds, alive, step0,
                   div_resid, tiny, radius)
    _k.block_out(theta, div_step, r0, th, ds)


@njit(cache=True, nogil=True, parallel=True)
def _projected_par(theta, dims, off, rows, cols, vals, w_tnr, decay, iso_tpr, iso_scale, rec_pos, snaps, div_step,
                   step0, div_resid, tiny, radius, nb):
    """The runs in ``nb`` blocks, one per thread, each by ``_projected_block``."""
    for b in prange(nb):
        r0, r1 = _k.block_bounds(theta.shape[0], nb, b)
        _projected_block(theta, dims, off, rows, cols, vals, w_tnr, decay, iso_tpr, iso_scale, rec_pos, snaps,
                         div_step, step0, div_resid, tiny, radius, r0, r1)
    return 0


def projected_chunk(theta, dims, off, rows, cols, vals, weights, decay, iso_noise, iso_scale, rec_pos, snaps, div_step,
                    step0, div_resid, tiny, *, radius):
    """T projected EM steps for every run (compiled); updates ``theta (R, P)`` in place. Arguments as
    :func:`._sde_kernels.weighted_chunk` (``weights (R, T, N)``: EM's entry weights); ``radius``: the ball's R > 0
    (``inf``: EM)."""
    radius = float(radius)
    if not radius > 0.0:
        raise ValueError(f"radius must be positive, got {radius}")
    snaps[div_step >= 0] = np.nan
    args = (theta, dims, off, rows, cols, vals,
            np.ascontiguousarray(np.transpose(np.asarray(weights, dtype=np.float64), (1, 2, 0))),
            np.ascontiguousarray(decay, dtype=np.float64),
            np.ascontiguousarray(np.transpose(np.asarray(iso_noise, dtype=np.float64), (1, 2, 0))),
            np.ascontiguousarray(iso_scale, dtype=np.float64), rec_pos, snaps, div_step, step0, div_resid, tiny,
            radius)
    return _k.run_in_blocks(_projected_block, _projected_par, args)


def projected_reference_chunk(theta, arch, problem, weight_decay, dt, xi, scale, iso_noise, iso_scale, rec_pos, snaps,
                              div_step, step0, div_resid, tiny, fixed_weights=None, *, radius):
    """T projected EM steps per run, readable (plain numpy); arguments as :func:`._sde_reference.reference_chunk`.

    Step t of a live run r: ``θ_r ← project(θ_r, radius)``, then one EM step of :func:`reference_chunk` (its
    divergence rule, flush and snapshot) on the same draws.
    """
    R, T, _ = xi.shape
    for t in range(T):
        k = int(np.searchsorted(rec_pos, t + 1))
        at_rec = k < len(rec_pos) and rec_pos[k] == t + 1
        for r in range(R):
            if div_step[r] < 0:
                theta[r] = project(theta[r:r + 1], radius)[0]
            reference_chunk(theta[r:r + 1], arch, problem, weight_decay, dt, xi[r:r + 1, t:t + 1], scale,
                            iso_noise[r:r + 1, t:t + 1], iso_scale[t:t + 1],
                            np.array([1] if at_rec else [], dtype=np.int64), snaps[r:r + 1, k:k + 1],
                            div_step[r:r + 1], step0 + t, div_resid, tiny,
                            fixed_weights=None if fixed_weights is None else fixed_weights[r:r + 1, t:t + 1])


def projected_chunks(radius: float) -> tuple:
    """The pair ``(compiled, reference)`` that :func:`.sde.run_sde` takes as ``chunks``, on the ball of ``radius``."""
    return partial(projected_chunk, radius=radius), partial(projected_reference_chunk, radius=radius)
