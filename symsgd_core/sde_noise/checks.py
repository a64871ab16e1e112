"""Proofs as code for SGD's SDE (Notebook 05): registered checks, each with a derived tolerance and a broken input.

* ``sde_noise.compiled_vs_reference`` — the compiled kernel and the literal numpy EM agree to round-off on
  the same increments; the same seed gives identical numbers; run r does not depend on the ensemble size;
* ``sde_noise.one_step_moments`` — one EM step with dt = η has SGD's one-step mean −η∇𝓛_γ and covariance
  η²C (Monte Carlo, exact Gaussian/Wishart standard errors), and SGD's step has them exactly (enumeration);
* ``sde_noise.weak_order`` — Euler–Maruyama's weak order, fitted over four step sizes on coupled paths (one
  Brownian path per sample, a finer reference on it): |order − 1| ≤ 0.25 with a standard error ≤ 0.1;
* ``sde_noise.no_raising_noise_at_B1`` — at a point of B_1 the SDE's noise (as SGD's) has no variance on
  the rank-raising directions (round-off);
* ``sde_noise.langevin_raising_noise`` — Langevin's isotropic noise does: the fraction n_raise/P;
* ``sde_noise.invariant_rank1_subspace`` — the aligned rank-1 subspace M_u is invariant (:mod:`.invariance`): the
  gradients, drift and noise columns at its points are tangent to it, and EM, SGD and adaptive paths stay on it.
* ``sde_noise.khasminskii_fails`` — the non-explosion bound 2⟨θ, D⟩ + T tr C ≤ K(1 + ‖θ‖²) fails (exponents 2L
  and 4L − 2 along rays); ``sde_noise.feller_reduction`` — the frozen-direction norm SDE's scale function is
  unbounded and its passages are a local martingale's (:mod:`.explosion`; evidence, not proof).

Each takes the ingredient a test breaks as ``broken=…`` and must then fail (tests/sde_noise/test_sde_noise_checks.py).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checking import CheckResult, make_result, register, roundoff_tolerance
from ..core.conventions import Z_MC
from ..core.seeding import tagged_stream
from ..core.validation import check_int, check_positive
from ..dln import (
    DIVERGENCE_RESIDUAL,
    Params,
    epsilon_completion,
    gradient,
    in_B,
    layer_singular_values,
    matched_langevin_temperature,
    noise_factor,
    per_entry_gradients,
    rank_raising_basis,
    replicate,
    run,
    run_langevin,
    run_sde,
    sde_entry_weights,
    sde_noise_scale,
    uncentred_reference,
    weighted_chunk,
)
from ..dln.integrators import EulerMaruyama
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from ..rank_jumps.experiments import rank_one_minimum, start_minimum

__all__ = ["OFF_SUBSPACE_OFFSET", "WEAK_ORDER_BAND", "WEAK_ORDER_SE_MAX", "Z_TOL", "check_invariant_rank1_subspace",
           "check_langevin_raising_noise",
           "check_sde_compiled_vs_reference", "check_sde_no_raising_noise", "check_sde_one_step_moments",
           "check_sde_weak_order", "fit_weak_order", "raising_fraction"]

#: |z| ≤ 5: two-sided false-alarm probability 5.7e-7 per normal statistic.
Z_TOL = 5.0


def _test_point(weight_decay: float = EXP.weight_decay_hot, kick: float = 0.05, seed: int = 0) -> Params:
    """A generic point (∇𝓛 ≠ 0): the rank-2 minimum plus a small random kick (stream ``[seed, 31]``)."""
    base = start_minimum(weight_decay=weight_decay)[0]
    return Params(base.arch, base.flat + kick * tagged_stream(seed, 31).standard_normal(base.flat.shape))


def raising_fraction(point: Params, problem, rank: int = 1) -> tuple[float, int, int]:
    """``tr(VᵀCV)/tr C`` at ``point`` (V: orthonormal rank-raising basis), and ``(n_raise, P)``.

    The SDE's increment ``sqrt(T dt/N) Gᵀξ`` and SGD's deviation ``−η(g_k − ḡ)`` both lie in the row space of
    ``G`` (C = GᵀG), so this one number bounds both noises on the raising directions.
    """
    G = noise_factor(point.flat[:1], point.arch, problem)[0]
    V, _ = rank_raising_basis(point, rank)
    return float(np.sum((G @ V) ** 2) / np.sum(G * G)), V.shape[1], point.arch.n_params


@register("sde_noise.compiled_vs_reference")
def check_sde_compiled_vs_reference(seed: int = 0, n_steps: int = 200, broken: str | None = None):
    """Compiled and reference Euler–Maruyama agree to round-off on the same increments; same seed ⇒ same numbers.

    Measured: the largest ``max|θ_compiled − θ_reference| / max|θ|`` after ``n_steps`` steps of the SDE
    (dt = η/4) and of Langevin, 3 runs; tolerance ``64·n_steps·P·eps`` (one rounding per term per step).
    ``broken="uncentred"``: the reference uses ``Σ g_k ξ_k`` (forgets ḡ) — must fail.
    """
    n_steps = check_int("n_steps", n_steps, minimum=1)
    problem = epsilon_completion(EXP.eps)
    start = replicate(start_minimum()[0], 3)
    P = start.arch.n_params
    kw = dict(lr=EXP.lr_hot, weight_decay=EXP.weight_decay_hot, dt=EXP.lr_hot / 4, seed=seed + 5, record_every=50)
    a = run_sde(start, problem, n_steps, **kw)
    if broken == "uncentred":  # g_k + ḡ: the reference's centring then leaves ḡ·Σξ in the noise
        with uncentred_reference():
            b = run_sde(start, problem, n_steps, engine="reference", **kw)
    else:
        b = run_sde(start, problem, n_steps, engine="reference", **kw)
    lk = dict(weight_decay=EXP.weight_decay_hot, dt=EXP.lr_hot, temperature=1e-4, seed=seed + 5, record_every=50)
    la = run_langevin(start, problem, n_steps, **lk)
    lb = run_langevin(start, problem, n_steps, engine="reference", **lk)
    err = max(float(np.max(np.abs(a.final.flat - b.final.flat))) / float(np.max(np.abs(a.final.flat))),
              float(np.max(np.abs(la.final.flat - lb.final.flat))) / float(np.max(np.abs(la.final.flat))))
    same_seed = bool(np.array_equal(a.final.flat, run_sde(start, problem, n_steps, **kw).final.flat))
    independent = bool(np.array_equal(a.final.flat[:2], run_sde(start.select([0, 1]), problem, n_steps,
                                                                **kw).final.flat))
    return make_result("sde_noise.compiled_vs_reference",
                       "compiled and reference Euler–Maruyama agree to round-off on the same increments; the same "
                       "seed gives the same numbers; a run does not depend on the ensemble size",
                       err if (same_seed and independent) else float("inf"), roundoff_tolerance(1.0, n_steps * P),
                       f"64·n_steps·P·eps = 64·{n_steps}·{P}·eps",
                       details={"same_seed_identical": same_seed, "run_independent_of_R": independent,
                                "broken": broken})


def _em_increments(point: Params, problem, lr: float, weight_decay: float, dt: float, M: int, seed: int,
                   broken: str | None = None) -> np.ndarray:
    """M independent EM steps of size dt from ``point`` (compiled kernel): the increments ``(M, P)``."""
    arch = point.arch
    N = problem.n_observed
    xi = tagged_stream(seed, 32).standard_normal((M, 1, N))
    scale = sde_noise_scale(lr, dt, N)
    if broken == "uncentred":  # Σ g_k ξ_k: forgets to subtract the mean gradient
        w = dt / N - scale * xi
    elif broken == "no_1/N":  # sqrt(T dt) instead of sqrt(T dt / N)
        w = sde_entry_weights(xi, dt, scale * math.sqrt(N))
    else:
        w = sde_entry_weights(xi, dt, scale)
    theta = np.repeat(point.flat[:1], M, axis=0)
    rows, cols, vals = problem.entries
    weighted_chunk(theta, np.asarray(arch.dims, dtype=np.int64), arch.offsets, rows, cols, vals, w,
                   np.array([1 - 2 * weight_decay * dt]), np.empty((M, 0, arch.n_params)), np.zeros(1),
                   np.zeros(0, np.int64), np.empty((M, 0, arch.n_params)), np.full(M, -1, dtype=np.int64), 0,
                   DIVERGENCE_RESIDUAL, 0.0)
    return theta - point.flat[:1]


@register("sde_noise.one_step_moments")
def check_sde_one_step_moments(seed: int = 0, M: int = 40_000, lr: float = EXP.lr_hot,
                               weight_decay: float = EXP.weight_decay_hot, broken: str | None = None):
    """One EM step (dt = η) has SGD's one-step mean ``−η∇𝓛_γ`` and covariance ``η²C`` (batch 1).

    (a) SGD, exactly: enumerating the N entries, the SGD increment's mean and covariance are ``−η∇𝓛_γ`` and
        ``η²C`` to round-off (tolerance 64·P·eps, relative).
    (b) EM, Monte Carlo on M draws: in an orthonormal basis U of span C (rank ≤ N − 1) the sample mean has standard
        error ``sqrt(diag(UᵀΣU)/M)`` and the sample covariance entry (a, b) ``sqrt((Σ_aa Σ_bb + Σ_ab²)/M)``
        (Wishart); measured = the largest |z|, tolerance :data:`Z_TOL`. Outside span C the increment must be
        ``−η∇𝓛_γ`` to round-off. At dt = η the EM step is exact in mean and covariance, so the O(dt²) terms of
        the SDE-vs-SGD comparison do not enter here; they enter the weak order.
    ``broken``: ``"uncentred"`` (noise Σ g_k ξ_k) or ``"no_1/N"`` (scale sqrt(T dt)) — must fail.
    """
    problem = epsilon_completion(EXP.eps)
    point = _test_point(weight_decay=weight_decay, seed=seed)
    P = point.arch.n_params
    grad = gradient(point, problem, weight_decay).flat[0]
    g = per_entry_gradients(point.flat, point.arch, problem)[0]
    N = g.shape[0]
    C = (g.T @ g) / N - np.outer(g.mean(0), g.mean(0))
    inc = -lr * (g + 2 * weight_decay * point.flat[0])  # SGD's N equally likely increments
    sgd_mean, sgd_cov = inc.mean(0), (inc - inc.mean(0)).T @ (inc - inc.mean(0)) / N
    scale_a = lr * float(np.max(np.abs(g))) + lr * 2 * weight_decay * float(np.max(np.abs(point.flat)))
    err_a = max(float(np.max(np.abs(sgd_mean + lr * grad))) / scale_a,
                float(np.max(np.abs(sgd_cov - lr**2 * C))) / scale_a**2)
    d = _em_increments(point, problem, lr, weight_decay, lr, M, seed, broken)
    Sigma = lr**2 * C
    evals, evecs = np.linalg.eigh(Sigma)
    U = evecs[:, evals > roundoff_tolerance(float(evals.max()), P)]
    y = (d + lr * grad) @ U
    S_U = U.T @ Sigma @ U
    z_mean = y.mean(0) / np.sqrt(np.diag(S_U) / M)
    emp = (y - y.mean(0)).T @ (y - y.mean(0)) / (M - 1)
    z_cov = (emp - S_U) / np.sqrt((np.outer(np.diag(S_U), np.diag(S_U)) + S_U**2) / M)
    outside = float(np.max(np.abs((d + lr * grad) - y @ U.T))) / float(np.max(np.abs(d)))
    measured = max(float(np.max(np.abs(z_mean))), float(np.max(np.abs(z_cov))))
    parts_ok = err_a <= roundoff_tolerance(1.0, P) and outside <= roundoff_tolerance(1.0, 4 * P)
    return make_result("sde_noise.one_step_moments",
                       "one SDE step (dt = η) has the mean −η∇𝓛ᵧ and covariance η²C of one SGD step",
                       measured if parts_ok else float("inf"), Z_TOL,
                       f"max |z| of the sample mean and covariance in span C (exact Gaussian/Wishart standard errors, "
                       f"M = {M}); 5σ ⇒ false alarm ≤ 5.7e-7 per entry; SGD enumeration and the part outside span C: "
                       "64·P·eps",
                       details={"rank_C": int(U.shape[1]), "max_z_mean": float(np.max(np.abs(z_mean))),
                                "max_z_cov": float(np.max(np.abs(z_cov))), "sgd_enumeration_rel_error": err_a,
                                "outside_span_rel": outside, "M": M, "broken": broken})


#: The integrator whose weak order the check measures, and its declared order (:mod:`symsgd_core.dln.integrators`).
WEAK_ORDER_INTEGRATOR = EulerMaruyama
#: Half-width of the weak-order band ``|order − p| ≤ 0.25`` around the declared order p = 1: midway between p and the
#: order p − ½ it must reject (a biased increment; order p + 1 lies 1 away).
WEAK_ORDER_BAND = 0.5 / 2
#: Largest standard error of the fitted order that counts as a measurement: the band's half-width over 2.5, so that
#: an order-½ scheme is ≥ 2.5 SE outside the band (passes with probability ≤ Φ(−2.5) = 0.6 %) and an order-1 scheme
#: stays inside unless its fit is off by ≥ 2.5 SE (≤ 1.2 % two-sided, less the systematic offset). A result with a
#: larger SE measured nothing and fails.
WEAK_ORDER_SE_MAX = 0.1
#: The broken scheme ``broken="biased"``: its normals have variance ``1 + c√dt`` with this c (weak order ½).
_WEAK_VARIANCE_BIAS = 4.0
#: Paths per call of the SDE runner in the weak-order check (memory: chunk · n_ref · N normals, 25 MB at the defaults).
_WEAK_CHUNK = 4096


def fit_weak_order(diffs, h, h_ref: float, p_range: tuple[float, float] = (0.05, 4.0)) -> dict:
    """Weak order from coupled path differences: generalised least squares of ``e_j = K (h_j^p − h_ref^p)``.

    Args:
        diffs: ``(M, J)`` per-path ``φ_{h_j} − φ_ref`` (the J levels and the reference on the same Brownian path).
        h: ``(J,)`` the levels' steps.  h_ref: the reference's step (its own weak error ``K h_ref^p`` is in the model,
            so the reference need not be converged).
        p_range: where the order is searched.

    The mean ``ē`` has covariance ``S = cov(diffs)/M`` (sample covariance of the paired differences: the levels
    share their paths, so they are correlated). For fixed p the model is linear in K, so ``χ²(p) = min_K
    (ē − K a_p)ᵀ S⁻¹ (ē − K a_p)`` is minimised over p (grid of 400, then bounded Brent to 1e-9). The standard error
    is Gauss–Newton's ``sqrt([(JᵀS⁻¹J)⁻¹]_pp)`` (J: the model's Jacobian in (K, p)), multiplied by the Particle Data
    Group's scale factor ``sqrt(χ²/dof)`` when that exceeds 1 (dof = J − 2), so a power law that does not describe
    the levels cannot look precise.

    Returns:
        dict: ``order``, ``se``, ``se_gauss_newton``, ``scale_factor``, ``K``, ``chi2``, ``dof``, ``e`` (ē),
        ``e_se`` (its standard errors), ``at_bound`` (the minimum lies on the edge of ``p_range``: no order found).
    """
    from scipy.optimize import minimize_scalar

    d = np.asarray(diffs, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64)
    M, J = d.shape
    if h.shape != (J,) or J < 3 or M <= J:
        raise ValueError(f"need diffs (M, J) with J ≥ 3 levels, M > J paths and h (J,); got {d.shape}, {h.shape}")
    e = d.mean(axis=0)
    S = np.atleast_2d(np.cov(d, rowvar=False)) / M
    W = np.linalg.inv(S)
    lh, lr = np.log(h), math.log(h_ref)

    def basis(p):
        return h**p - h_ref**p

    def profile(p):
        a = basis(p)
        K = float(a @ W @ e) / float(a @ W @ a)
        r = e - K * a
        return K, float(r @ W @ r)

    grid = np.linspace(*p_range, 400)
    A = h[None, :] ** grid[:, None] - h_ref ** grid[:, None]  # the profile on the whole grid at once
    AW = A @ W
    i = int(np.argmin(float(e @ W @ e) - (AW @ e) ** 2 / np.einsum("gj,gj->g", AW, A)))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    p = float(minimize_scalar(lambda q: profile(q)[1], bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-9}).x)
    K, chi2 = profile(p)
    jac = np.stack([basis(p), K * (h**p * lh - h_ref**p * lr)], axis=1)
    se_gn = math.sqrt(float(np.linalg.inv(jac.T @ W @ jac)[1, 1]))
    dof = J - 2
    scale = math.sqrt(max(1.0, chi2 / dof))
    return {"order": p, "se": se_gn * scale, "se_gauss_newton": se_gn, "scale_factor": scale, "K": K, "chi2": chi2,
            "dof": dof, "e": e.tolist(), "e_se": np.sqrt(np.diag(S)).tolist(), "at_bound": i in (0, grid.size - 1)}


@register("sde_noise.weak_order")
def check_sde_weak_order(seed: int = 0, M: int = 16_384, t_end: float = 0.25, lr: float = 0.1,
                         weight_decay: float = EXP.weight_decay_hot, n_list=(8, 16, 32, 64), n_ref: int = 256,
                         broken: str | None = None):
    """Euler–Maruyama for SGD's SDE has weak order 1: fitted over four step sizes on coupled paths, |order − 1| ≤ 0.25
    with a standard error ≤ 0.1.

    **What is run.** M paths of the SDE from the rank-2 minimum
    (:func:`~symsgd_core.rank_jumps.experiments.start_minimum`), T = ``lr`` = 0.1, γ = ``weight_decay``,
    to ``t_end`` = 0.25, each with ``n`` = 8, 16, 32, 64 steps (h = 1/32 … 1/256) and a reference with
    ``n_ref`` = 256 steps (h = 1/1024), all five driven by the **same** Brownian path (the fine normals, summed:
    :func:`~.sde.run_sde` ``xi=…, coarsen=…``; stream ``tagged_stream(seed, 34)``, path after path, so a path does not
    depend on M). φ = 𝓛_γ(θ) at ``t_end``. The paired differences ``φ_h − φ_ref`` give the weak errors
    ``e_j = E[φ_{h_j} − φ_ref] = K (h_j^p − h_ref^p)``, fitted by :func:`fit_weak_order` (the reference's own error
    is in the model; the SE is derived there).

    **Where each number comes from.**

    * Band ±0.25 (:data:`WEAK_ORDER_BAND`) and SE ≤ 0.1 (:data:`WEAK_ORDER_SE_MAX`): see their definitions — the
      band splits the distance between order ½ and order 1; the SE ceiling puts each ≥ 2.5 SE from the band's edge.
    * Start at a minimum, φ = 𝓛_γ: gradient descent does not move from a minimum, so the drift's Euler error is
      zero and the whole weak error comes from the noise — EM's stationary variance on a mode of curvature a is too
      large by the factor ``1/(1 − ah/2)``, which the loss sees at first order (``E𝓛_γ − 𝓛_γ* ≈ ½ tr(H Σ)``). The
      loss fluctuates only at second order around a minimum, so its weak error stands 10–40 standard errors above
      the Monte-Carlo noise at every level (``e/e_se`` in the details). (A kicked start and φ = s₁(A) had a weak
      error that was 3/4 the drift's Euler error and, for some kicks, near zero: the SE then exceeded 0.1.)
    * h ≤ 1/32: the weak error has the expansion ``K₁h + K₂h² + …`` (Talay & Tubaro 1990); the stiffest mode has
      a = 3.97 (top Hessian eigenvalue of 𝓛_γ at the minimum). The same fit applied to EM's exact variance error for
      an Ornstein–Uhlenbeck mode of rate 3.97 at these levels gives 1.037: the systematic offset, about 0.04
      (measured: mean 1.06, range 1.02–1.11 over seeds 0–7; the softer modes add their own small offsets).
    * t_end = 0.25 = 2 relaxation times 1/(2a) of the stiffest mode's variance: its error has built up; a longer
      horizon only adds to the variance of the paired differences.
    * M = 16 384 paths: measured SE 0.033–0.037 (seeds 0–7; it scales as 1/sqrt(M)), a factor 3 below the
      ceiling. About 7 s of one core; ``python -m symsgd_core check`` runs it at the same strength.
    * T = 0.1: at T = 0.3 some paths blow up within t = 3 (§3 of the notebook); a diverged path raises.

    ``broken="biased"``: normals with variance ``1 + 4√dt`` (a biased increment: the local second moment is off by
    O(dt^{3/2}) ⇒ weak order ½), at every step size including the reference (the check measures the order of the
    scheme it is given). It must fail, by the band: the same Ornstein–Uhlenbeck calculation predicts a fitted order
    of 0.60 (the stiff mode's O(h) factor lifts it from ½), measured 0.60 with SE 0.02 (seeds 0–2). (A bias of the
    normals' *mean* moves the paths by O(√h), which the loss, flat at a minimum, sees only at O(h): it would pass
    here.)
    """
    M = check_int("M", M, minimum=16)
    n_ref = check_int("n_ref", n_ref, minimum=2)
    n_list = tuple(check_int("n_list", n, minimum=1) for n in n_list)
    if (len(n_list) < 3 or any(b != 2 * a for a, b in zip(n_list[:-1], n_list[1:]))
            or n_ref % n_list[-1] or n_ref <= n_list[-1]):
        raise ValueError(f"n_list must double (at least 3 levels) and divide n_ref > max(n_list); got {n_list}, "
                         f"n_ref={n_ref}")
    if broken not in (None, "biased"):
        raise ValueError(f"broken must be None or 'biased', got {broken!r}")
    t_end = check_positive("t_end", t_end)
    problem = epsilon_completion(EXP.eps)
    point = start_minimum(weight_decay=weight_decay)[0]
    N = problem.n_observed
    levels = (*n_list, n_ref)
    rng = tagged_stream(seed, 34)
    phi = np.empty((M, len(levels)))
    for a in range(0, M, _WEAK_CHUNK):
        R = min(M, a + _WEAK_CHUNK) - a
        xi = rng.standard_normal((R, n_ref, N))
        start = replicate(point, R)
        for j, n in enumerate(levels):
            dt = t_end / n
            # the broken scheme: the same path with every normal scaled (variance 1 + c√dt at this step size)
            path = xi * math.sqrt(1.0 + _WEAK_VARIANCE_BIAS * math.sqrt(dt)) if broken == "biased" else xi
            r = run_sde(start, problem, n, lr=lr, weight_decay=weight_decay, dt=dt, xi=path, coarsen=n_ref // n,
                        record_every=n, record_layers=False)
            if r.diverged.any():
                raise RuntimeError(f"{int(r.diverged.sum())} path(s) diverged in the weak-order check (n = {n})")
            phi[a:a + R, j] = r.loss[:, -1]
    h = t_end / np.asarray(n_list, dtype=np.float64)
    fit = fit_weak_order(phi[:, :-1] - phi[:, -1:], h, t_end / n_ref)
    D = (phi[:, :-2] - phi[:, 1:-1]).mean(axis=0)  # E[φ_{h_j} − φ_{h_j/2}] ∝ h_j^p: the local Richardson orders
    local = [math.log2(D[j] / D[j + 1]) if D[j] / D[j + 1] > 0 else float("nan") for j in range(D.size - 1)]
    order, se = fit["order"], fit["se"]
    declared = WEAK_ORDER_INTEGRATOR.weak_order
    measured_something = se <= WEAK_ORDER_SE_MAX and not fit["at_bound"]
    return make_result("sde_noise.weak_order", "Euler–Maruyama for SGD's SDE has weak order 1",
                       abs(order - declared) if measured_something else float("inf"), WEAK_ORDER_BAND,
                       f"fixed band: halfway between weak orders 1 and ½; the fitted order's standard error must be "
                       f"≤ {WEAK_ORDER_SE_MAX} (≥ 2.5 SE from either order), else nothing was measured and the "
                       f"check fails; systematic offset of the fit at these steps ≈ 0.04 (EM's error on the stiffest "
                       f"mode)",
                       details={"order": order, "se": se, "se_max": WEAK_ORDER_SE_MAX,
                                "band": [declared - WEAK_ORDER_BAND, declared + WEAK_ORDER_BAND], "p": local,
                                "n": list(n_list),
                                "n_ref": n_ref, "h": h.tolist(), "e": fit["e"], "e_se": fit["e_se"], "K": fit["K"],
                                "chi2": fit["chi2"], "dof": fit["dof"], "scale_factor": fit["scale_factor"],
                                "se_gauss_newton": fit["se_gauss_newton"], "M": M, "T": lr, "t_end": t_end,
                                "phi": "loss", "broken": broken})


@register("sde_noise.no_raising_noise_at_B1")
def check_sde_no_raising_noise(seed: int = 0, weight_decay: float = EXP.weight_decay_hot, broken: str | None = None):
    """At a point of B_1 the SDE's noise (like SGD's) has no component on the rank-raising directions.

    Point: the GD rank-1 minimum (:func:`~symsgd_core.rank_jumps.experiments.rank_one_minimum`, seed ``seed``).
    Measured: :func:`raising_fraction`; tolerance: round-off of P-term sums (64·P·eps, relative to tr C).
    ``broken="rank2_point"``: the rank-2 minimum (not in B_1) — must fail.
    """
    problem = epsilon_completion(EXP.eps)
    point = rank_one_minimum(weight_decay=weight_decay,
                             seed=seed) if broken is None else start_minimum(weight_decay=weight_decay)[0]
    frac, k, P = raising_fraction(point, problem, 1)
    inb = bool(in_B(point, 1)[0])
    return make_result("sde_noise.no_raising_noise_at_B1",
                       "at a point of B₁ the SDE's noise (like SGD's) has no component on rank-raising directions",
                       frac if (inb or broken) else float("inf"), roundoff_tolerance(1.0, P),
                       f"64·P·eps with P = {P} (round-off of the projections, relative to tr C)",
                       details={"in_B1": inb, "n_raising": k, "P": P, "broken": broken,
                                "layer_s2": layer_singular_values(point)[0, :, 1].tolist()})


@register("sde_noise.langevin_raising_noise")
def check_langevin_raising_noise(seed: int = 0, M: int = 2000, weight_decay: float = EXP.weight_decay_hot,
                                 broken: str | None = None):
    """Langevin's isotropic noise puts the fraction n_raise/P of its variance on the rank-raising directions.

    Measured on M kicks ζ ~ N(0, I_P) at the B_1 point: the mean of ``‖Vᵀζ‖²/‖ζ‖²`` must reach
    ``n_raise/P − 5·SE`` (relation ≥). ``broken="sde_noise"``: the SDE's noise fed instead — must fail.
    """
    problem = epsilon_completion(EXP.eps)
    point = rank_one_minimum(weight_decay=weight_decay)
    V, _ = rank_raising_basis(point, 1)
    P = point.arch.n_params
    rng = tagged_stream(seed, 33)
    if broken == "sde_noise":
        G = noise_factor(point.flat, point.arch, problem)[0]
        z = rng.standard_normal((M, G.shape[0])) @ G
    else:
        z = rng.standard_normal((M, P))
    f = np.sum((z @ V) ** 2, axis=1) / np.sum(z * z, axis=1)
    expected = V.shape[1] / P
    # SE of the mean of a Beta(k/2, (P−k)/2) fraction: sqrt(var/M), var = e(1−e)·2/(P+2)
    se = math.sqrt(expected * (1 - expected) * 2 / (P + 2) / M)
    return make_result("sde_noise.langevin_raising_noise",
                       "Langevin's noise has a component on the rank-raising directions (the fraction n_raise/P)",
                       float(f.mean()), expected - Z_TOL * se, "n_raise/P − 5 standard errors of the sample mean "
                       "(exact Beta variance of the fraction)", ">=",
                       details={"expected": expected, "n_raising": V.shape[1], "P": P, "broken": broken})


#: Observables of :func:`check_sde_adaptive_matches_em` at t_end: ‖θ‖², A_01, A_10.
_ADAPTIVE_OBSERVABLES = ("norm_sq", "A01", "A10")


def _adaptive_observables(params: Params) -> np.ndarray:
    A = params.end_to_end()
    return np.stack([params.norm_sq(), A[:, 0, 1], A[:, 1, 0]], axis=1)


@register("sde_noise.adaptive_matches_em")
def check_sde_adaptive_matches_em(seed: int = 0, M: int = 4000, t_end: float = 1.2, lr: float = EXP.lr_hot,
                                  weight_decay: float = EXP.weight_decay_hot, rho: float = 0.01,
                                  broken: str | None = None, follow: bool = False):
    """The adaptive-step integrator (:func:`~.adaptive.run_sde_adaptive`) has the law of the SDE: its means
    of ‖θ‖², A_01 and A_10 at ``t_end`` agree with fine-step Euler–Maruyama's within 4 Monte-Carlo SE each.

    **What is run.** M paths each, from the rank-2 minimum at the hot point (T = η = 0.3, γ = 0.027), to
    t_end = 1.2 (four SGD steps): EM at dt = η/256 (stream ``seed``) and the adaptive scheme at h_max = η/16 with
    ρ = 0.01 (stream ``seed + 1``; independent paths, so the SE is the two means' combined SE). With ρ = 0.01 the
    rule shortens about half of the adaptive steps (required: ≥ 25 %, else nothing about the rule was measured and
    the check fails), so the check sees the rule's bookkeeping: the time advanced, the noise's ``sqrt(h)``, the
    decay ``1 − 2γh``. Both schemes' biases are O(step), below the Monte-Carlo SE at M = 4000 (measured
    max |z| 2.1 and 1.7 for seeds 0 and 1; about 6 s of one core).

    **Tolerance.** |z| ≤ 4 for each of the three observables (:func:`~symsgd_core.core.checking.mc_tolerance`;
    P(a false alarm) ≈ 3 × 6e-5). Paths that ended early (an EM divergence, a stall; about 1 in 4000 here) are
    left out of both means; more than 1 % ended fails the check.

    ``broken="noise_at_h_max"``: the scheme whose noise ignores the shortened step (variance ``T h_max`` instead of
    ``T h``) must fail: measured max |z| = 9.1 (seed 0).

    ``follow=True`` runs the integrator's follow-every-path mode instead (:func:`check_sde_follow_matches_em`):
    no path may end early there, since it has no stall and no residual rule.
    """
    from ..dln import run_sde_adaptive

    M = check_int("M", M, minimum=100)
    t_end = check_positive("t_end", t_end)
    problem = epsilon_completion(EXP.eps)
    point = start_minimum(weight_decay=weight_decay)[0]
    start = replicate(point, M)
    em = run_sde(start, problem, int(round(t_end / (lr / 256))), lr=lr, weight_decay=weight_decay, dt=lr / 256,
                 seed=seed, record_every=10**9, record_layers=False)
    ad = run_sde_adaptive(start, problem, t_end, lr=lr, weight_decay=weight_decay, h_max=lr / 16, rho=rho,
                          seed=seed + 1, record_dt=t_end, record_layers=False, broken=broken, follow=follow)
    ok_em = ~em.diverged
    ok_ad = np.array([e == "none" for e in ad.event])
    x = _adaptive_observables(em.final.select(ok_em))
    y = _adaptive_observables(ad.result.final.select(ok_ad))
    z = (x.mean(axis=0) - y.mean(axis=0)) / np.sqrt(x.var(axis=0, ddof=1) / len(x) + y.var(axis=0, ddof=1) / len(y))
    reduced = float(np.sum(ad.n_reduced) / max(np.sum(ad.n_steps), 1))
    ended = (M - int(ok_em.sum()) + M - int(ok_ad.sum())) / (2 * M)
    measured_something = reduced >= 0.25 and ended <= 0.01 and not (follow and not ok_ad.all())
    name, what = (("sde_noise.follow_matches_em", "the follow-every-path mode of the adaptive step has the SDE's law "
                   "(means at t_end agree with fine-step EM; no path ends early)") if follow else
                  ("sde_noise.adaptive_matches_em",
                   "the adaptive-step integrator has the SDE's law (means at t_end agree with fine-step EM)"))
    return make_result(name, what,
                       float(np.max(np.abs(z))) if measured_something else float("inf"), Z_MC,
                       f"{Z_MC:g} Monte-Carlo standard errors of the difference of two independent means, per "
                       "observable; "
                       "the rule must shorten ≥ 25 % of the steps and ≤ 1 % of the paths may end early, else "
                       "nothing was measured and the check fails",
                       details={"z": dict(zip(_ADAPTIVE_OBSERVABLES, z.tolist())),
                                "em_mean": x.mean(axis=0).tolist(), "adaptive_mean": y.mean(axis=0).tolist(),
                                "reduced_fraction": reduced, "ended_fraction": ended, "M": M, "t_end": t_end,
                                "rho": rho, "h_max": lr / 16, "dt_em": lr / 256, "broken": broken,
                                "follow": follow})


@register("sde_noise.follow_matches_em")
def check_sde_follow_matches_em(seed: int = 0, M: int = 4000, broken: str | None = None):
    """The adaptive step's follow-every-path mode (``run_sde_adaptive(..., follow=True)``: no stall, no residual
    rule, compensated time) has the SDE's law: :func:`check_sde_adaptive_matches_em`'s comparison with fine-step
    EM, run in that mode (same paths, same tolerance |z| ≤ 4), where in addition no path may end early.
    ``broken="noise_at_h_max"`` (noise that ignores the shortened step) must fail."""
    return check_sde_adaptive_matches_em(seed=seed, M=M, broken=broken, follow=True)


#: ``broken="off_subspace"`` in :func:`check_invariant_rank1_subspace`: the points and the paths' starts are moved off
#: M_u by this fraction of ‖θ‖ (a millionth: "slightly", yet 10⁵× the tangent tolerance and 10²× the path tolerance).
OFF_SUBSPACE_OFFSET = 1e-6


@register("sde_noise.invariant_rank1_subspace")
def check_invariant_rank1_subspace(seed: int = 0, n_points: int = 8, n_paths: int = 4, n_steps: int = 400,
                                   broken: str | None = None) -> list[CheckResult]:
    """The aligned rank-1 subspace M_u is invariant (:mod:`.invariance`, proved): two rows.

    **[tangent]** At ``n_points`` random points of random M_u (:func:`~.invariance.random_points`, seed ``seed``) on
    the ε-completion, the per-entry gradients, the drift and the SDE's noise columns stick out of M_u by round-off
    (:func:`~.invariance.tangent_defect`, relative to the sizes of their terms). Tolerance ``64·n·eps`` with
    ``n = N + (L + 1)·w`` = 43, the longest chain of roundings in one entry: ḡ averages N terms, each g_k entry is a
    product of L − 1 matrix products of inner size ≤ w, the projection sums ≤ w terms twice.

    **[paths]** From ``n_paths`` points of random M_u with the rank-1 minimum's coordinates
    (``random_points(…, like=rank_one_minimum())``), at the hot point: fixed-step Euler–Maruyama (dt = η/4) and SGD
    (batch 1) for ``n_steps`` steps, and the adaptive step (h_max = η/16, ρ = 0.05) for the same time as EM. Measured:
    the largest distance to the *same* M_u at the end, ``‖θ − Π_u θ‖/‖θ‖``. Each step adds fresh round-off of at most
    ``(N + (L − 1)·w + 1)·eps`` relative to ‖θ‖ (the update sums N weighted gradients and the decayed θ), which the
    dynamics carries forward multiplied by at most the amplification ``a`` of a transverse perturbation: measured by
    running each scheme again from the starts moved off M_u by :data:`OFF_SUBSPACE_OFFSET` (its distance at the end
    over at the start, largest over schemes and paths). Tolerance ``max(1, a)·64·(n_max·(N + (L − 1)·w + 1) +
    2w)·eps``, n_max the most steps any path took (the adaptive one's). A path that ended early measured nothing:
    the row fails.

    ``broken``: ``"off_subspace"`` (every point and start moved off M_u by :data:`OFF_SUBSPACE_OFFSET`: the defect
    and the end distance are of that order) or ``"langevin_noise"`` (Langevin's columns e_p as the noise; on the
    paths, Langevin at the matched temperature in place of EM): both rows must fail.
    """
    from ..dln import run_sde_adaptive
    from .blowup import ADAPTIVE_LEVELS
    from .invariance import offset_off_subspace, random_points, subspace_dim, tangent_defect, transverse_distance

    n_points, n_paths = check_int("n_points", n_points, minimum=1), check_int("n_paths", n_paths, minimum=1)
    n_steps = check_int("n_steps", n_steps, minimum=1)
    if broken not in (None, "off_subspace", "langevin_noise"):
        raise ValueError(f"broken must be None, 'off_subspace' or 'langevin_noise', got {broken!r}")
    problem = epsilon_completion(EXP.eps)
    lr, weight_decay = EXP.lr_hot, EXP.weight_decay_hot
    like = rank_one_minimum(weight_decay=weight_decay)
    arch = like.arch
    N, L, w = problem.n_observed, arch.depth, arch.max_width
    off = OFF_SUBSPACE_OFFSET
    # [tangent]
    pts = random_points(arch, n_points, seed)
    at = offset_off_subspace(pts.params, pts.directions, off, seed) if broken == "off_subspace" else pts.params
    defect = tangent_defect(at, problem, pts.directions, weight_decay=weight_decay,
                            noise="langevin" if broken == "langevin_noise" else "sde")
    n_tangent = N + (L + 1) * w
    tangent = make_result(
        "sde_noise.invariant_rank1_subspace[tangent]",
        "at points of the aligned rank-1 subspace Mᵤ every per-entry gradient, the drift −∇𝓛ᵧ and every noise "
        "column gₖ − ḡ lie in Mᵤ (relative part off Mᵤ)",
        float(np.max(defect.worst)), roundoff_tolerance(1.0, n_tangent),
        f"64·(N + (L + 1)·w)·eps = 64·{n_tangent}·eps: the longest chain of roundings in one entry",
        details={"gradient": float(np.max(defect.gradient)), "drift": float(np.max(defect.drift)),
                 "noise": float(np.max(defect.noise)), "noise_kind": defect.noise_kind, "n_points": n_points,
                 "dim_M_u": subspace_dim(arch), "P": arch.n_params, "broken": broken})
    # [paths]
    start = random_points(arch, n_paths, seed, like=like)
    us = start.directions
    shifted = offset_off_subspace(start.params, us, off, seed)
    em_kw = dict(lr=lr, weight_decay=weight_decay, dt=lr / 4, seed=seed, record_every=n_steps, record_layers=False)
    tau = float(np.max(matched_langevin_temperature(start.params, problem, lr, weight_decay)))

    def em(p):
        r = run_sde(p, problem, n_steps, **em_kw)
        return r.final, n_steps, ~r.diverged

    def langevin(p):
        r = run_langevin(p, problem, n_steps, weight_decay=weight_decay, dt=lr / 4, temperature=tau, seed=seed,
                         record_every=n_steps, record_layers=False)
        return r.final, n_steps, ~r.diverged

    def sgd(p):
        r = run(p, problem, n_steps, method="sgd", lr=lr, weight_decay=weight_decay, seed=seed, record_every=n_steps,
                record_layers=False)
        return r.final, n_steps, ~r.diverged

    m, rho = ADAPTIVE_LEVELS[1]  # the middle accuracy: h_max = η/16, ρ = 0.05

    def adaptive(p):
        r = run_sde_adaptive(p, problem, n_steps * lr / 4, lr=lr, weight_decay=weight_decay, h_max=lr / m, rho=rho,
                             seed=seed, record_dt=n_steps * lr / 4, record_layers=False)
        return r.result.final, int(np.max(r.n_steps)), np.array([e == "none" for e in r.event])

    schemes = {"EM": em, "SGD": sgd, "adaptive": adaptive}
    d0 = transverse_distance(shifted, us)
    amp, n_max, ended, end = 0.0, 0, 0, {}
    for name, scheme in schemes.items():
        moved, n_moved, ok_moved = scheme(shifted)  # the amplification, always on the correct scheme
        amp = max(amp, float(np.max(transverse_distance(moved, us) / d0)))
        if broken == "off_subspace":  # the measured paths are the shifted ones
            final, n, ok = moved, n_moved, ok_moved
        else:
            fed = langevin if (broken == "langevin_noise" and name == "EM") else scheme
            name = "Langevin" if fed is langevin else name
            final, n, ok = fed(start.params)
        ended += int(np.sum(~ok)) + int(np.sum(~ok_moved))
        n_max = max(n_max, n, n_moved)
        end[name] = float(np.max(transverse_distance(final, us)))
    per_step = N + (L - 1) * w + 1
    n_terms = n_max * per_step + 2 * w
    measured = max(end.values()) if ended == 0 else float("inf")
    paths = make_result(
        "sde_noise.invariant_rank1_subspace[paths]",
        "a path started on Mᵤ stays on it: EM, SGD and the adaptive step end at round-off distance from the same Mᵤ",
        measured, max(1.0, amp) * roundoff_tolerance(1.0, n_terms),
        f"max(1, a)·64·(n_max·(N + (L − 1)·w + 1) + 2w)·eps with n_max = {n_max} steps, a = {amp:.3g} (the measured "
        "amplification of a transverse offset): round-off accumulated over the steps",
        details={"end_distance": end, "amplification": amp, "n_max": n_max, "ended_early": ended,
                 "n_paths": n_paths, "n_steps": n_steps, "langevin_temperature": tau, "offset": off,
                 "broken": broken})
    return [tangent, paths]


# ------------------------------------------------------------------------------------- does the SDE explode?
#: The passage levels of ``sde_noise.feller_reduction``: return level a, start s₀, target b (norms ‖θ‖, ≥ 4× the
#: rank-1 minimum's 2.47), and the three decades whose p-increments are compared.
FELLER_PASSAGE = (10.0, 20.0, 100.0)
FELLER_DECADES = (1e2, 1e3, 1e4)
#: The broken input's extra Itô drift ``(k/2) σ²/s``: a transverse share k = 2 > 1 (bounded scale function).
FELLER_BROKEN_SHARE = 2.0


@register("sde_noise.khasminskii_fails")
def check_khasminskii_fails(seed: int = 0, n_random: int = 3, broken: str | None = None):
    """The Khasminskii/Mao bound ``2⟨θ, D⟩ + T tr C ≤ K(1 + ‖θ‖²)`` fails for SGD's SDE at depth L = 4.

    Two rows (:func:`~.explosion.khasminskii_rays`: the rank-2 and rank-1 minima's rays and ``n_random`` random
    ones, ‖θ‖ = 10²…10⁵, T = 0.3, γ = 0.027):

    * the fitted growth exponents of the pull −2⟨θ, D⟩ and of T tr C are 2L and 4L − 2: the largest
      |fitted − expected| ≤ ½ (a degree is an integer: within ½ identifies it; :data:`~.explosion.DEGREE_BAND`);
    * the left side over 1 + ‖θ‖² grows: the smallest fitted exponent of its positive part (``1 + max(·, 0)``)
      over the rays is ≥ ½ (degree ≥ 1, unbounded; 0 where the left side is ≤ 0).

    ``broken="depth1"``: the same problem, T and γ at depth L = 1 (A = W, a quadratic loss), where both sides
    grow like ‖θ‖² and T tr C = T(4(N−1)/N²)Σα_k²‖θ‖² is smaller than the pull (4/N)Σα_k²‖θ‖² at T = 0.3: the left
    side is negative and the bound holds with K = 0. The exponents row still passes there (2L = 4L − 2 = 2); the
    growth row must fail.
    """
    from .explosion import DEGREE_BAND, khasminskii_rays

    if broken not in (None, "depth1"):
        raise ValueError(f"broken must be None or 'depth1', got {broken!r}")
    depth = 1 if broken == "depth1" else EXP.depth
    rays = khasminskii_rays(depth=depth, n_random=n_random, seed=seed)
    err = max(r.exponent_error for r in rays)
    growth = min(r.ratio_exponent for r in rays)
    details = {r.label: {"pull": r.pull_exponent, "noise": r.noise_exponent, "ratio": r.ratio_exponent}
               for r in rays}
    details.update(depth=depth, expected=list(rays[0].expected), scales=rays[0].scales.tolist(), broken=broken,
                   ratio_at_largest={r.label: float(r.ratio[-1]) for r in rays})
    L = depth
    return [
        make_result("sde_noise.khasminskii_fails",
                    f"along rays θ = λφ the drift's pull −2⟨θ, D⟩ grows like ‖θ‖²ᴸ and the noise "
                    f"T tr C like ‖θ‖⁴ᴸ⁻² (L = {L}: powers {2 * L} and {4 * L - 2}; largest |fitted − expected| "
                    "exponent)",
                    err, DEGREE_BAND, "½: a polynomial degree is an integer, within ½ identifies it",
                    details=details),
        make_result("sde_noise.khasminskii_fails",
                    "so (2⟨θ, D⟩ + T tr C)/(1 + ‖θ‖²) is unbounded: no K makes the Khasminskii bound hold "
                    "(smallest fitted exponent of 1 + its positive part)",
                    growth, DEGREE_BAND, "½: an exponent ≥ ½ of a polynomial ratio means degree ≥ 1 (unbounded)",
                    ">=", details=details),
    ]


@register("sde_noise.feller_reduction")
def check_feller_reduction(seed: int = 0, per_decade: int = 400, broken: str | None = None):
    """The frozen-direction reduction ``ds = b dt + σ dW`` on the rank-1 minimum's ray has an unbounded scale
    function growing like s, and its passage probabilities are the local martingale's ``(s₀ − a)/(b − a)``.

    (Evidence about the SDE, not proof: the reduction freezes the direction; see :mod:`.explosion`.) Two rows, each
    with the bound derived in :func:`~.explosion.slope_variation` (p' varies by at most the factor ``e^τ`` on an
    interval, ``τ = ∫|2b/σ²|`` there) plus the quadrature's error bound (:func:`~.explosion.scale_function`):

    * ``ρ = [p(10⁴) − p(10³)]/[p(10³) − p(10²)]`` equals 10 (p ~ s) within ``10(e^τ − 1)`` + the quadrature error;
    * ``P(reach 100 before 10 | 20)`` from p equals (20 − 10)/(100 − 10) within ``P(e^τ − 1)`` + the error.

    The tolerances are the claim's (τ of the frozen reduction); ``seed`` is unused (no randomness).
    ``broken="share_above_one"``: the same b and σ plus an Itô drift ``(k/2)σ²/s`` with k = 2 (a transverse
    share f = 2 > 1): its scale function is bounded (ρ → 10^{1−k} = 0.1) and P → (1/10 − 1/20)/(1/10 − 1/100) =
    0.56; both rows must fail.
    """
    from .explosion import direction, passage_probability, power_passage, scale_function, slope_variation

    if broken not in (None, "share_above_one"):
        raise ValueError(f"broken must be None or 'share_above_one', got {broken!r}")
    k = FELLER_BROKEN_SHARE if broken else 0.0
    problem = EXP.problem
    point = rank_one_minimum()
    phi, arch = direction(point), point.arch
    kw = dict(temperature=EXP.lr_hot, weight_decay=EXP.weight_decay_hot)
    a, s0, b = FELLER_PASSAGE
    s1, s2, s3 = FELLER_DECADES
    sf = scale_function((a, s0, b, s1, s2, s3), phi, arch, problem, extra_ito=k, per_decade=per_decade, **kw)
    (p1, e1), (p2, e2), (p3, e3) = sf.at(s1), sf.at(s2), sf.at(s3)
    rho = (p3 - p2) / (p2 - p1)
    rho_err = abs(rho) * ((e3 + e2) / abs(p3 - p2) + (e2 + e1) / abs(p2 - p1))
    rho_lin = (s3 - s2) / (s2 - s1)
    tau_d, tau_d_err = slope_variation(s1, s3, phi, arch, problem, per_decade=per_decade, **kw)
    P, P_err = passage_probability(sf, s0, a, b)
    Pm = power_passage(s0, a, b)
    tau_p, tau_p_err = slope_variation(a, b, phi, arch, problem, per_decade=per_decade, **kw)
    tol_rho = rho_lin * math.expm1(tau_d + tau_d_err) + rho_err
    tol_P = Pm * math.expm1(tau_p + tau_p_err) + P_err
    details = {"p": dict(zip(map(float, sf.levels), sf.p.tolist())), "p_error": sf.error.tolist(), "rho": rho,
               "tau_decades": tau_d, "tau_passage": tau_p, "P_exact": P, "P_martingale": Pm, "extra_ito": k,
               "n_nodes": sf.n_nodes, "broken": broken}
    return [
        make_result("sde_noise.feller_reduction",
                    "the frozen-direction norm SDE's scale function grows like s (unbounded: +∞ not reached): "
                    "|[p(10⁴) − p(10³)]/[p(10³) − p(10²)] − 10|", abs(rho - rho_lin), tol_rho,
                    "10(exp(τ) − 1), τ = ∫|2b/σ²| over [10², 10⁴] (p' varies by at most exp(τ)), plus the quadrature's "
                    "error bound", details=details),
        make_result("sde_noise.feller_reduction",
                    "... and P(reach 100 before 10 | 20) from p is the local martingale's (20 − 10)/(100 − 10): "
                    "|P_exact − P_martingale|", abs(P - Pm), tol_P,
                    "P(exp(τ) − 1), τ = ∫|2b/σ²| over [10, 100], plus the quadrature's error bound", details=details),
    ]
