"""Proofs as code for SGD's SDE (Notebook 05): registered checks, each with a derived tolerance and a broken input.

* ``rank_jumps.sde_compiled_vs_reference`` — the compiled kernel and the literal numpy EM agree to round-off on
  the same increments; the same seed gives identical numbers; run r does not depend on the ensemble size;
* ``rank_jumps.sde_one_step_moments`` — one EM step with dt = η has SGD's one-step mean −η∇𝓛_γ and covariance
  η²C (Monte Carlo, exact Gaussian/Wishart standard errors), and SGD's step has them exactly (enumeration);
* ``rank_jumps.sde_weak_order`` — Euler–Maruyama's weak order, fitted from Richardson ratios on coupled paths;
* ``rank_jumps.sde_no_raising_noise_at_B1`` — at a point of B_1 the SDE's noise (as SGD's) has no variance on
  the rank-raising directions (round-off);
* ``rank_jumps.langevin_raising_noise`` — Langevin's isotropic noise does: the fraction n_raise/P.

Each takes the ingredient a test breaks as ``broken=…`` and must then fail (tests/test_rank_jumps_sde_checks.py).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checking import make_result, register, roundoff_tolerance
from ..core.seeding import stream, tagged_stream
from ..core.validation import check_int
from . import sde_reference
from ._sde_kernels import weighted_chunk
from .analysis import rank_raising_basis, replicate
from .experiments import EPSILON_EXPERIMENT as EXP
from .experiments import rank_one_minimum, start_minimum
from .network import Params, in_B, layer_singular_values
from .problems import epsilon_completion, gradient
from .sde import run_langevin, run_sde, sde_entry_weights, sde_noise_scale
from .stepping import DIVERGENCE_RESIDUAL

__all__ = ["Z_TOL", "check_langevin_raising_noise", "check_sde_compiled_vs_reference", "check_sde_no_raising_noise",
           "check_sde_one_step_moments", "check_sde_weak_order", "raising_fraction"]

#: |z| ≤ 5: two-sided false-alarm probability 5.7e-7 per normal statistic.
Z_TOL = 5.0


def _test_point(lam: float = EXP.lam_hot, kick: float = 0.05, seed: int = 0) -> Params:
    """A generic point (∇𝓛 ≠ 0): the rank-2 minimum plus a small random kick (stream ``[seed, 31]``)."""
    base = start_minimum(lam=lam)[0]
    return Params(base.arch, base.flat + kick * tagged_stream(seed, 31).standard_normal(base.flat.shape))


def raising_fraction(point: Params, problem, rank: int = 1) -> tuple[float, int, int]:
    """``tr(VᵀCV)/tr C`` at ``point`` (V: orthonormal rank-raising basis), and ``(n_raise, P)``.

    The SDE's increment ``sqrt(T dt/N) Gᵀξ`` and SGD's deviation ``−η(g_k − ḡ)`` both lie in the row space of
    ``G`` (C = GᵀG), so this one number bounds both noises on the raising directions.
    """
    G = sde_reference.noise_factor(point.flat[:1], point.arch, problem)[0]
    V, _ = rank_raising_basis(point, rank)
    return float(np.sum((G @ V) ** 2) / np.sum(G * G)), V.shape[1], point.arch.n_params


@register("rank_jumps.sde_compiled_vs_reference")
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
    kw = dict(lr=EXP.lr_hot, lam=EXP.lam_hot, dt=EXP.lr_hot / 4, seed=seed + 5, record_every=50)
    a = run_sde(start, problem, n_steps, **kw)
    orig = sde_reference.per_entry_gradients
    if broken == "uncentred":
        def leaky(theta, arch, prob):  # g_k + ḡ: the reference's centring then leaves ḡ·Σξ in the noise
            g = orig(theta, arch, prob)
            return g + g.mean(axis=1, keepdims=True)
        sde_reference.per_entry_gradients = leaky
    try:
        b = run_sde(start, problem, n_steps, engine="reference", **kw)
    finally:
        sde_reference.per_entry_gradients = orig
    lk = dict(lam=EXP.lam_hot, dt=EXP.lr_hot, temperature=1e-4, seed=seed + 5, record_every=50)
    la = run_langevin(start, problem, n_steps, **lk)
    lb = run_langevin(start, problem, n_steps, engine="reference", **lk)
    err = max(float(np.max(np.abs(a.final.flat - b.final.flat))) / float(np.max(np.abs(a.final.flat))),
              float(np.max(np.abs(la.final.flat - lb.final.flat))) / float(np.max(np.abs(la.final.flat))))
    same_seed = bool(np.array_equal(a.final.flat, run_sde(start, problem, n_steps, **kw).final.flat))
    independent = bool(np.array_equal(a.final.flat[:2], run_sde(start.select([0, 1]), problem, n_steps,
                                                                **kw).final.flat))
    return make_result("rank_jumps.sde_compiled_vs_reference",
                       "compiled and reference Euler–Maruyama agree to round-off on the same increments; the same "
                       "seed gives the same numbers; a run does not depend on the ensemble size",
                       err if (same_seed and independent) else float("inf"), roundoff_tolerance(1.0, n_steps * P),
                       f"64·n_steps·P·eps = 64·{n_steps}·{P}·eps",
                       details={"same_seed_identical": same_seed, "run_independent_of_R": independent,
                                "broken": broken})


def _em_increments(point: Params, problem, lr: float, lam: float, dt: float, M: int, seed: int,
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
                   np.array([1 - 2 * lam * dt]), np.empty((M, 0, arch.n_params)), np.zeros(1), np.zeros(0, np.int64),
                   np.empty((M, 0, arch.n_params)), np.full(M, -1, dtype=np.int64), 0, DIVERGENCE_RESIDUAL, 0.0)
    return theta - point.flat[:1]


@register("rank_jumps.sde_one_step_moments")
def check_sde_one_step_moments(seed: int = 0, M: int = 40_000, lr: float = EXP.lr_hot, lam: float = EXP.lam_hot,
                               broken: str | None = None):
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
    point = _test_point(lam=lam, seed=seed)
    P = point.arch.n_params
    grad = gradient(point, problem, lam).flat[0]
    g = sde_reference.per_entry_gradients(point.flat, point.arch, problem)[0]
    N = g.shape[0]
    C = (g.T @ g) / N - np.outer(g.mean(0), g.mean(0))
    inc = -lr * (g + 2 * lam * point.flat[0])  # SGD's N equally likely increments
    sgd_mean, sgd_cov = inc.mean(0), (inc - inc.mean(0)).T @ (inc - inc.mean(0)) / N
    scale_a = lr * float(np.max(np.abs(g))) + lr * 2 * lam * float(np.max(np.abs(point.flat)))
    err_a = max(float(np.max(np.abs(sgd_mean + lr * grad))) / scale_a,
                float(np.max(np.abs(sgd_cov - lr**2 * C))) / scale_a**2)
    d = _em_increments(point, problem, lr, lam, lr, M, seed, broken)
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
    return make_result("rank_jumps.sde_one_step_moments",
                       "one SDE step (dt = η) has the mean −η∇𝓛_γ and covariance η²C of one SGD step",
                       measured if parts_ok else float("inf"), Z_TOL,
                       f"max |z| of the sample mean and covariance in span C (exact Gaussian/Wishart standard errors, "
                       f"M = {M}); 5σ ⇒ false alarm ≤ 5.7e-7 per entry; SGD enumeration and the part outside span C: "
                       "64·P·eps",
                       details={"rank_C": int(U.shape[1]), "max_z_mean": float(np.max(np.abs(z_mean))),
                                "max_z_cov": float(np.max(np.abs(z_cov))), "sgd_enumeration_rel_error": err_a,
                                "outside_span_rel": outside, "M": M, "broken": broken})


@register("rank_jumps.sde_weak_order")
def check_sde_weak_order(seed: int = 0, M: int = 60_000, t_end: float = 2.0, lr: float = 0.1,
                         lam: float = EXP.lam_hot, n_list=(8, 16, 32, 64, 128, 256), broken: str | None = None):
    """Euler–Maruyama for SGD's SDE has weak order 1 (fitted from Richardson ratios on coupled paths).

    φ(θ) = ‖θ‖² at ``t_end`` from the test point, T = ``lr`` = 0.1 (at T = 0.3 some paths blow up within t = 3,
    §3 of the notebook). ``D_j = E[φ_{n_j} − φ_{n_{j+1}}]`` on the same paths (n doubles) ∝ h_j^p, so
    ``p_j = log2(D_j / D_{j+1})`` → p. Measured: ``|p_last − 1|``; tolerance ``3·SE(p_last)`` (delta method on
    the paired differences) ``+ |p_last − p_prev|`` (the remaining O(h), which at most halves per halving).
    The band is wide (Monte-Carlo error at small h): it separates order 1 from order ½, no more. About a minute
    of CPU at the defaults (the unit test is marked slow; Notebook 05 shows the stored result of the grid).
    ``broken="biased"``: normals with mean ``dt·c`` (a local O(dt^{3/2}) bias ⇒ weak order ½) — must fail.
    """
    problem = epsilon_completion(EXP.eps)
    point = _test_point(lam=lam, seed=seed)
    start = replicate(point, M)
    n_fine = max(n_list)
    xi = stream(seed + 11).standard_normal((M, n_fine, problem.n_observed))
    c = np.array([1.0, -2.0, 0.5])

    def phi(n):
        dt = t_end / n
        r = run_sde(start, problem, n, lr=lr, lam=lam, dt=dt, xi=xi, coarsen=n_fine // n, record_every=n,
                    record_layers=False, xi_bias=None if broken != "biased" else c * dt)
        if r.diverged.any():
            raise RuntimeError("a path diverged in the weak-order check")
        return np.einsum("rp,rp->r", r.final.flat, r.final.flat)

    vals = {n: phi(n) for n in n_list}
    pairs = [vals[a] - vals[b] for a, b in zip(n_list[:-1], n_list[1:])]
    D = np.array([d.mean() for d in pairs])
    se = np.array([d.std(ddof=1) / math.sqrt(M) for d in pairs])
    p, p_se = [], []
    for j in range(len(pairs) - 1):
        cov = np.cov(pairs[j], pairs[j + 1])[0, 1] / M
        var = (se[j] / D[j]) ** 2 + (se[j + 1] / D[j + 1]) ** 2 - 2 * cov / (D[j] * D[j + 1])
        ratio = D[j] / D[j + 1]
        p.append(math.log2(ratio) if ratio > 0 else float("nan"))
        p_se.append(math.sqrt(max(var, 0.0)) / math.log(2))
    tol = 3 * p_se[-1] + abs(p[-1] - p[-2])
    return make_result("rank_jumps.sde_weak_order", "Euler–Maruyama for SGD's SDE has weak order 1",
                       abs(p[-1] - 1.0), tol,
                       "3·SE(p) (delta method on paired path differences) + |p_last − p_prev| (remaining O(h))",
                       details={"n": list(n_list), "D": D.tolist(), "se": se.tolist(), "p": p, "p_se": p_se,
                                "order": p[-1], "band": [1 - tol, 1 + tol], "M": M, "T": lr, "t_end": t_end,
                                "broken": broken})


@register("rank_jumps.sde_no_raising_noise_at_B1")
def check_sde_no_raising_noise(seed: int = 0, lam: float = EXP.lam_hot, broken: str | None = None):
    """At a point of B_1 the SDE's noise (like SGD's) has no component on the rank-raising directions.

    Point: the GD rank-1 minimum (:func:`~.experiments.rank_one_minimum`, seed ``seed``). Measured:
    :func:`raising_fraction`; tolerance: round-off of P-term sums (64·P·eps, relative to tr C).
    ``broken="rank2_point"``: the rank-2 minimum (not in B_1) — must fail.
    """
    problem = epsilon_completion(EXP.eps)
    point = rank_one_minimum(lam=lam, seed=seed) if broken is None else start_minimum(lam=lam)[0]
    frac, k, P = raising_fraction(point, problem, 1)
    inb = bool(in_B(point, 1)[0])
    return make_result("rank_jumps.sde_no_raising_noise_at_B1",
                       "at a point of B_1 the SDE's noise (like SGD's) has no component on rank-raising directions",
                       frac if (inb or broken) else float("inf"), roundoff_tolerance(1.0, P),
                       f"64·P·eps with P = {P} (round-off of the projections, relative to tr C)",
                       details={"in_B1": inb, "n_raising": k, "P": P, "broken": broken,
                                "layer_s2": layer_singular_values(point)[0, :, 1].tolist()})


@register("rank_jumps.langevin_raising_noise")
def check_langevin_raising_noise(seed: int = 0, M: int = 2000, lam: float = EXP.lam_hot, broken: str | None = None):
    """Langevin's isotropic noise puts the fraction n_raise/P of its variance on the rank-raising directions.

    Measured on M kicks ζ ~ N(0, I_P) at the B_1 point: the mean of ``‖Vᵀζ‖²/‖ζ‖²`` must reach
    ``n_raise/P − 5·SE`` (relation ≥). ``broken="sde_noise"``: the SDE's noise fed instead — must fail.
    """
    problem = epsilon_completion(EXP.eps)
    point = rank_one_minimum(lam=lam)
    V, _ = rank_raising_basis(point, 1)
    P = point.arch.n_params
    rng = tagged_stream(seed, 33)
    if broken == "sde_noise":
        G = sde_reference.noise_factor(point.flat, point.arch, problem)[0]
        z = rng.standard_normal((M, G.shape[0])) @ G
    else:
        z = rng.standard_normal((M, P))
    f = np.sum((z @ V) ** 2, axis=1) / np.sum(z * z, axis=1)
    expected = V.shape[1] / P
    # SE of the mean of a Beta(k/2, (P−k)/2) fraction: sqrt(var/M), var = e(1−e)·2/(P+2)
    se = math.sqrt(expected * (1 - expected) * 2 / (P + 2) / M)
    return make_result("rank_jumps.langevin_raising_noise",
                       "Langevin's noise has a component on the rank-raising directions (the fraction n_raise/P)",
                       float(f.mean()), expected - Z_TOL * se, "n_raise/P − 5 standard errors of the sample mean "
                       "(exact Beta variance of the fraction)", ">=",
                       details={"expected": expected, "n_raising": V.shape[1], "P": P, "broken": broken})
