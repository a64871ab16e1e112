"""The v-SDE engine: long runs of the v-dynamics of diagonal networks (depth D = 0, 1, 2, …).

The SDEs are the Itô reductions of ``dθ = −∇L dt + sqrt(T C) dW`` to the network slope ``v``
once the law of balance has equalised the layers (arXiv 2308.06671, Section 4; derived in
:mod:`symsgd_core.stationary.laws`).
Depth 0 is integrated in ``v``; depth ≥ 1 in ``s = log|v|`` (plain Euler–Maruyama on ``v``
overflows), so ``v`` never changes sign: a chain started at ``v < 0`` stays on the wrong-sign
branch, whose stationary law is ``δ(v)``.

Schemes: ``"euler"`` (Euler–Maruyama, weak order 1) and ``"weak2"`` (Platen's explicit
order-2.0 weak scheme, Kloeden & Platen Eq. 15.1.1). Errors are made visible, not assumed:
:func:`simulate_v_coupled` runs ``dt`` and ``dt/2`` on the same Brownian path, so the difference
of their statistics measures the discretisation error, and :func:`relaxation_rate` gives the
spectral gap λ₁ of the SDE's generator (computed from the drift and diffusion alone), so run
lengths and thinning can be stated in relaxation times ``1/λ₁``.

Time is the SDE's ``t`` (= η · steps for SGD, :mod:`symsgd_core.core.conventions`); ``T = η/S``.
Runs are reproducible (the seeding rule, :mod:`symsgd_core.core.seeding`): chains are split into fixed
blocks of :data:`BLOCK_SIZE`, block ``j`` uses stream ``j`` of :func:`~symsgd_core.core.seeding.streams`
``(seed, n_blocks)``, and blocks run on up to ``threads`` threads (the numbers do not depend on the thread
count). Results are :class:`VRun` (the one result shape, :mod:`symsgd_core.core.results`); a chain whose
state leaves the float range has diverged (:data:`DIVERGENCE`). There is one implementation, compiled
(numba, :mod:`._kernels`); :func:`numpy_euler_s` is a plain numpy Euler–Maruyama without step control, the
benchmark's baseline and Notebook 03's example of what step control is for.
"""

from __future__ import annotations

import math
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh_tridiagonal

from ..core.results import Divergence, EngineResult
from ..core.seeding import streams
from ..core.validation import as_generator, check_array, check_choice, check_int, check_positive, check_positive_int
from . import _kernels as _k
from .laws import DiagonalNetProblem, StationaryLaw, as_problem

__all__ = [
    "BLOCK_SIZE",
    "DIVERGENCE",
    "MAX_CHAIN_STEPS",
    "MAX_RECORDED",
    "SCHEMES",
    "NotRelaxedWarning",
    "StationaryRun",
    "VRun",
    "simulate_v",
    "simulate_v_coupled",
    "relaxation_rate",
    "integrated_autocorrelation_time",
    "numpy_euler_s",
    "sde_coefficients",
    "v_space_coefficients",
    "run_to_stationarity",
]

#: Chains per block (one generator per block): part of the algorithm, fixed for reproducibility.
BLOCK_SIZE = 250
#: The integration schemes and their kernel codes: Euler–Maruyama (weak order 1) and Platen's explicit
#: order-2.0 weak scheme (Kloeden & Platen 1992, Eq. 15.1.1).
SCHEMES = {"euler": 0, "weak2": 1}
#: The divergence rule of the v-SDE: a chain has diverged when its state is no longer a finite float (the
#: kernels split stiff steps, so this happens only beyond the float range; reported, never hidden).
DIVERGENCE = Divergence("|v| of the chain", sys.float_info.max)
#: Most chain-steps (chains × steps, fine and coarse steps counted for a coupled run) one call may ask for, checked
#: before any work: 10¹⁰ is 10–15 minutes of one core (measured 30 ns per Euler chain-step and 100 ns per weak-2
#: chain-step) and 33 times the largest run of the package (the benchmark's 2000 chains × 150 000 steps).
MAX_CHAIN_STEPS = 10**10
#: Most recorded values (records × chains, both runs of a coupled call) one call may ask for: 400 MB of float64.
MAX_RECORDED = 5 * 10**7


@dataclass(frozen=True, eq=False)
class VRun(EngineResult):
    """An ensemble of R v-SDE chains recorded K times (the shape of :class:`symsgd_core.core.results.EngineResult`).

    Attributes:
        steps: int64 ``(K,)`` SDE steps (of size ``dt``) at the records; the start is not recorded.
        times: ``(K,)`` recording times ``t = dt·steps``.
        diverged_step: int64 ``(R,)``: the step of the first record at which the chain's state was not finite
            (:data:`DIVERGENCE`; −1: never).
        settings: the call's settings: ``problem, temperature, depth, dt, scheme, seed, branch, threads,
            n_steps, stiff, x_stiff`` (coupled runs: ``coupled=True``, ``n_coarse_steps``).
        v: ``(K, R)`` values of ``v`` at the records.
        substeps: extra sub-steps taken in stiff regions (far tail), a diagnostic.
    """

    v: np.ndarray
    substeps: int

    @property
    def final(self) -> np.ndarray:
        """(R,) the last recorded value of each chain (one independent sample per chain)."""
        return self.v[-1]

    @property
    def n_chains(self) -> int:
        return int(self.v.shape[1])

    @property
    def non_finite(self) -> int:
        """Number of chains whose last record is not finite (should be 0; reported, never hidden)."""
        return int((~np.isfinite(self.v[-1])).sum())

    # the settings every caller reads, by name
    problem = property(lambda self: self.settings["problem"])
    temperature = property(lambda self: self.settings["temperature"])
    depth = property(lambda self: self.settings["depth"])
    dt = property(lambda self: self.settings["dt"])
    scheme = property(lambda self: self.settings["scheme"])
    seed = property(lambda self: self.settings["seed"])
    branch = property(lambda self: self.settings["branch"])

    def summary(self) -> str:
        steps = int(self.steps[-1]) if self.steps.size else 0
        text = (f"{self.n_chains} chains of the depth-{self.depth} v-SDE at T = {self.temperature:g}, "
                f"{self.scheme} with dt = {self.dt:g} for t = {self.times[-1]:g} ({steps} steps)")
        if self.substeps:
            text += f"; {self.substeps} extra sub-steps in stiff tails"
        if self.non_finite:
            text += f"; {self.non_finite} chains became non-finite"
        return text


@dataclass(frozen=True, eq=False)
class StationaryRun(VRun):
    """A :class:`VRun` of :func:`run_to_stationarity`, with how far it got in relaxation times.

    Attributes:
        lambda1: the spectral gap λ₁ (:func:`relaxation_rate`; 0 when the law is collapsed).
        relax_times: the relaxation times asked for.
        relaxed: the run lasted at least ``relax_times/λ₁`` (False: stopped at ``t_max``, or collapsed law).
    """

    lambda1: float
    relax_times: float
    relaxed: bool

    @property
    def t_end(self) -> float:
        return float(self.times[-1])

    def summary(self) -> str:
        text = super().summary()
        if not self.relaxed:
            text += (f"; NOT relaxed: κ·t = {self.lambda1 * self.t_end:.2g} < {self.relax_times:g}"
                     if self.lambda1 > 0 else "; no relaxation (collapsed law, κ = 0)")
        return text


class NotRelaxedWarning(RuntimeWarning):
    """:func:`run_to_stationarity` stopped before the relaxation times it was asked for."""


def _vrun(out, steps, times, settings, substeps, cls=VRun, **extra) -> VRun:
    v = out if settings["depth"] == 0 else settings["branch"] * np.exp(out)
    bad = DIVERGENCE.exceeded(v)  # (K, R)
    first = np.where(bad.any(axis=0), steps[np.argmax(bad, axis=0)], -1).astype(np.int64)
    return cls(steps=steps, times=times, diverged_step=first, settings=settings, v=v, substeps=int(substeps),
               **extra)


def sde_coefficients(x, problem: DiagonalNetProblem, temperature: float, depth: int, branch: int = 1):
    """Drift and diffusion of the simulated SDE at states ``x`` (``v`` for D = 0, ``log|v|`` for D ≥ 1).

    Returns:
        (a, b): arrays like ``x`` with ``dx = a dt + b dW``.
    """
    p = problem if (depth == 0 or branch == 1) else problem.mirrored()
    x = np.asarray(x, dtype=float)
    T = float(temperature)
    if depth == 0:
        g = p.g_polynomial(x)
        return -2.0 * ((p.beta1 + p.weight_decay) * x - p.beta2), 2.0 * np.sqrt(T * g)
    c = 2.0 * (depth + 1)
    v = np.exp(x)
    e = np.exp((depth - 1.0) / (depth + 1.0) * x)
    g = p.g_polynomial(v)
    return -c * ((p.beta1 * v - p.beta2) * e + p.weight_decay + T * g * e * e), c * np.sqrt(T * g) * e


def v_space_coefficients(v, problem: DiagonalNetProblem, temperature: float, depth: int):
    """The v-SDE ``dv = a(v) dt + b(v) dW`` in v itself (for the Fokker–Planck check), v > 0 for D ≥ 1.

    ``a = 2(D+1)[−(β₁v − β₂)v^p − γv + T D g v^{2p−1}]``, ``b² = 4(D+1)² T g v^{2p}`` (``p = 2D/(D+1)``);
    depth 0: ``a = −2(β₁'v − β₂)``, ``b² = 4Tg``. Complex-safe.

    Returns:
        (a, b², d(b²)/dv) arrays like ``v``.
    """
    p = problem
    T = float(temperature)
    v = np.asarray(v)
    g = (p.alpha1 * v - 2.0 * p.alpha2) * v + p.alpha3
    dg = 2.0 * p.alpha1 * v - 2.0 * p.alpha2
    if depth == 0:
        return -2.0 * ((p.beta1 + p.weight_decay) * v - p.beta2), 4.0 * T * g, 4.0 * T * dg
    D = depth
    e = 2.0 * D / (D + 1)
    c = 2.0 * (D + 1)
    a = c * (-(p.beta1 * v - p.beta2) * v**e - p.weight_decay * v + T * D * g * v ** (2 * e - 1))
    b2 = c * c * T * g * v ** (2 * e)
    db2 = c * c * T * (dg * v ** (2 * e) + 2 * e * g * v ** (2 * e - 1))
    return a, b2, db2


def _kernel_params(problem: DiagonalNetProblem, temperature: float, depth: int, branch: int) -> tuple:
    p = problem if (depth == 0 or branch == 1) else problem.mirrored()
    return (depth, p.alpha1, p.alpha2, p.alpha3, p.beta1, p.beta2, p.weight_decay, float(temperature))


def _stiff_threshold(params: tuple, dt: float, stiff: float) -> float:
    """Largest state x below which ``dt · stiffness`` is guaranteed ≤ ``stiff`` (monotone bound)."""
    depth, a1, a2, a3, b1, b2, gam, T = params
    if depth == 0:
        bound = 2.0 * (b1 + gam) + 4.0 * T * a1  # |a'| + b'² ≤ 2β₁' + 4Tα₁ since g'² ≤ 4α₁g
        return math.inf if bound * dt <= stiff else -math.inf
    c = 2.0 * (depth + 1)
    q = (depth - 1.0) / (depth + 1.0)
    g_min = (a1 * a3 - a2 * a2) / a1

    def bound(x: float) -> float:  # increasing in x, ≥ stiffness(x)
        v, e = math.exp(x), math.exp(q * x)
        gu = a1 * v * v + 2.0 * abs(a2) * v + a3
        vgu = 2.0 * a1 * v * v + 2.0 * abs(a2) * v
        da = c * ((b1 * v * (1.0 + q) + abs(b2) * q) * e + T * e * e * (vgu + 2.0 * q * gu))
        db = c * e * math.sqrt(T) * (vgu / (2.0 * math.sqrt(g_min)) + q * math.sqrt(gu))
        return da + db * db

    lo, hi = -60.0, 60.0
    if bound(lo) * dt > stiff:
        return -math.inf
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if bound(mid) * dt > stiff:
            hi = mid
        else:
            lo = mid
    return lo


@dataclass(frozen=True)
class _Plan:
    """A validated run: the settings, ``n_steps`` (steps of ``dt``, a multiple of K) and the start states."""

    problem: DiagonalNetProblem
    T: float
    D: int
    R: int
    dt: float
    K: int
    threads: int
    n_steps: int
    rec_every: int
    x: np.ndarray
    branch: int
    params: tuple
    blocks: list
    gens: list


def _check_work(caller: str, n_chains: int, steps: float, per_step: int = 1, what: str = "",
                advice: str = "raise dt, lower t_end (run_to_stationarity: t_max) or use fewer chains") -> None:
    """Refuse, before any work, a run of more than :data:`MAX_CHAIN_STEPS` chain-steps (``steps`` is a float:
    ``t_end/dt`` can be far beyond any integer the kernels count, or infinite)."""
    work = float(n_chains) * float(steps) * per_step
    if not work <= MAX_CHAIN_STEPS:
        kernel = f" ({per_step} kernel steps per step)" if per_step > 1 else ""
        raise ValueError(f"{caller}: {what}{steps:.3g} steps of each of {n_chains} chains{kernel}, {work:.3g} "
                         f"chain-steps in all; the limit is MAX_CHAIN_STEPS = {MAX_CHAIN_STEPS:.0e} chain-steps "
                         f"(10-15 minutes of one core): {advice}")


def _plan(problem, temperature, depth, n_chains, t_end, dt, scheme, n_records, threads, v0, seed,
          caller: str = "simulate_v", coupled: bool = False) -> _Plan:
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    D = check_int("depth", depth, minimum=0, maximum=16)
    R = check_positive_int("n_chains", n_chains)
    t_end = check_positive("t_end", t_end)
    dt = check_positive("dt", dt)
    if dt > t_end:
        raise ValueError(f"dt must be <= t_end, got dt = {dt} > t_end = {t_end}")
    check_choice("scheme", scheme, SCHEMES)
    K = check_positive_int("n_records", n_records)
    threads = check_positive_int("threads", threads)
    # coupled: 2 fine steps and 1 coarse step per step of dt; the work is bounded before anything is allocated
    _check_work(caller, R, max(t_end / dt, float(K)), 3 if coupled else 1, f"t_end/dt = {t_end:g}/{dt:g} asks for ")
    if K * R * (2 if coupled else 1) > MAX_RECORDED:
        raise ValueError(f"{caller}: n_records × n_chains = {K} × {R}{' × 2 runs' if coupled else ''} values to "
                         f"record, more than the limit MAX_RECORDED = {MAX_RECORDED:.0e} (400 MB); ask for fewer "
                         "records or chains")
    n_steps = max(int(round(t_end / dt)), 1)
    if n_steps % K:
        n_steps += K - n_steps % K
    x, branch = _initial_states(v0, R, D)
    blocks = _blocks(R)
    return _Plan(problem, T, D, R, dt, K, threads, n_steps, n_steps // K, x, branch,
                 _kernel_params(problem, T, D, branch), blocks, streams(seed, len(blocks)))


def _initial_states(v0, R: int, depth: int) -> tuple[np.ndarray, int]:
    v0 = np.broadcast_to(check_array("v0", v0), (R,)).astype(float) if np.ndim(v0) == 0 else check_array(
        "v0", v0, shape=(R,))
    if depth == 0:
        return v0.copy(), 1
    if np.any(v0 == 0):
        raise ValueError("v0 must be nonzero for depth >= 1 (v = 0 is absorbing: the chain would never move)")
    signs = np.sign(v0)
    if not (np.all(signs > 0) or np.all(signs < 0)):
        raise ValueError("v0 must have one sign across chains for depth >= 1 (run each branch separately)")
    branch = int(signs[0])
    return np.log(np.abs(v0)), branch


def _blocks(R: int) -> list[slice]:
    return [slice(i, min(i + BLOCK_SIZE, R)) for i in range(0, R, BLOCK_SIZE)]


def simulate_v(problem: DiagonalNetProblem, temperature: float, depth: int = 1, *, n_chains: int = 1000,
               t_end: float = 20.0, dt: float = 0.01, v0=1.0, n_records: int = 1, scheme: str = "weak2",
               seed: int = 0, threads: int = 2, stiff: float = _k.STIFF) -> VRun:
    """Run ``n_chains`` independent chains of the depth-D v-SDE from ``v0`` for time ``t_end``.

    Args:
        problem: data moments and weight decay.
        temperature: T = η/S > 0.
        depth: D ≥ 0.
        n_chains: R ≥ 1 independent chains.
        t_end: run length (units of t).
        dt: step size; ``round(t_end/dt)`` steps are taken.
        v0: start, scalar or (R,); for D ≥ 1 nonzero and of one sign (the sign picks the branch).
        n_records: K ≥ 1 equally spaced recordings, the last at ``t_end``.
        scheme: ``"euler"`` or ``"weak2"``.
        seed: integer ≥ 0; block j of chains uses stream j of ``streams(seed, n_blocks)`` (same seed → same
            numbers, whatever ``threads``).
        threads: blocks run on this many threads (numba kernels release the GIL).
        stiff: largest ``dt·(|a'|+b'²)`` before a step is split (far-tail safety).
    Returns:
        :class:`VRun` with ``v`` of shape (K, R).
    Raises:
        ValueError: on invalid arguments (named in the message), and before any work when the run would take more
            than :data:`MAX_CHAIN_STEPS` chain-steps (``n_chains · t_end/dt``) or record more than
            :data:`MAX_RECORDED` values (``n_records · n_chains``).
    """
    plan = _plan(problem, temperature, depth, n_chains, t_end, dt, scheme, n_records, threads, v0, seed)
    problem, T, D, R, dt, K, threads = plan.problem, plan.T, plan.D, plan.R, plan.dt, plan.K, plan.threads
    n_steps, rec_every, x, branch, params = plan.n_steps, plan.rec_every, plan.x, plan.branch, plan.params
    blocks, gens, sch = plan.blocks, plan.gens, SCHEMES[scheme]
    x_stiff = _stiff_threshold(params, dt, stiff)
    out = np.empty((K, R))

    def work(j: int) -> int:
        sl = blocks[j]
        xb = np.ascontiguousarray(x[sl])
        ob = np.empty((K, xb.size))
        extra = _k.run_block(xb, gens[j], n_steps, dt, rec_every, sch, *params, stiff, x_stiff, ob)
        out[:, sl] = ob
        return extra

    substeps = _run_blocks(work, len(blocks), threads)
    steps = rec_every * np.arange(1, K + 1, dtype=np.int64)
    settings = {"problem": problem, "temperature": T, "depth": D, "dt": dt, "scheme": scheme, "seed": int(seed),
                "branch": branch, "threads": threads, "n_steps": n_steps, "stiff": stiff, "x_stiff": x_stiff}
    return _vrun(out, steps, dt * rec_every * np.arange(1, K + 1), settings, substeps)


def _run_blocks(work, n_blocks: int, threads: int) -> int:
    if threads == 1 or n_blocks == 1:
        return sum(work(j) for j in range(n_blocks))
    with ThreadPoolExecutor(max_workers=min(threads, n_blocks)) as pool:
        return sum(pool.map(work, range(n_blocks)))


def simulate_v_coupled(problem: DiagonalNetProblem, temperature: float, depth: int = 1, *, n_chains: int = 1000,
                       t_end: float = 20.0, dt: float = 0.02, v0=1.0, n_records: int = 1, scheme: str = "weak2",
                       seed: int = 0, threads: int = 2, stiff: float = _k.STIFF) -> tuple[VRun, VRun]:
    """Two ensembles on the same Brownian paths: step ``dt/2`` (fine) and ``dt`` (coarse).

    The coarse chain's increment is the sum of the fine chain's two increments, so
    ``statistic(fine) − statistic(coarse)`` estimates the discretisation error of the coarse
    run with much less noise than two independent runs would. If the scheme's error at least
    halves when dt halves (weak order ≥ 1), ``|statistic(fine) − exact| ≤ |fine − coarse|``.

    Arguments as in :func:`simulate_v`. Returns ``(fine, coarse)`` (:class:`VRun`; the fine run's steps count
    steps of ``dt/2``; both report the sub-steps of the pair).
    """
    plan = _plan(problem, temperature, depth, n_chains, t_end, dt, scheme, n_records, threads, v0, seed,
                 caller="simulate_v_coupled", coupled=True)
    problem, T, D, R, dt, K, threads = plan.problem, plan.T, plan.D, plan.R, plan.dt, plan.K, plan.threads
    n_coarse, rec_every, x, branch, params = plan.n_steps, plan.rec_every, plan.x, plan.branch, plan.params
    blocks, gens, sch = plan.blocks, plan.gens, SCHEMES[scheme]
    xs_f = _stiff_threshold(params, 0.5 * dt, stiff)
    xs_c = _stiff_threshold(params, dt, stiff)
    out_f = np.empty((K, R))
    out_c = np.empty((K, R))

    def work(j: int) -> int:
        sl = blocks[j]
        xf = np.ascontiguousarray(x[sl])
        xc = xf.copy()
        of = np.empty((K, xf.size))
        oc = np.empty((K, xf.size))
        extra = _k.run_block_coupled(xf, xc, gens[j], n_coarse, dt, rec_every, sch, *params, stiff, xs_f, xs_c,
                                     of, oc)
        out_f[:, sl] = of
        out_c[:, sl] = oc
        return extra

    substeps = _run_blocks(work, len(blocks), threads)
    coarse_steps = rec_every * np.arange(1, K + 1, dtype=np.int64)
    times = dt * rec_every * np.arange(1, K + 1)
    runs = []
    for out, h, xs, steps in ((out_f, 0.5 * dt, xs_f, 2 * coarse_steps), (out_c, dt, xs_c, coarse_steps)):
        settings = {"problem": problem, "temperature": T, "depth": D, "dt": h, "scheme": scheme, "seed": int(seed),
                    "branch": branch, "threads": threads, "n_steps": int(steps[-1]), "stiff": stiff, "x_stiff": xs,
                    "coupled": True, "n_coarse_steps": n_coarse}
        runs.append(_vrun(out, steps, times, settings, substeps))
    return runs[0], runs[1]


# --------------------------------------------------------------------------------------------
# Relaxation and autocorrelation
# --------------------------------------------------------------------------------------------
def relaxation_rate(problem: DiagonalNetProblem, temperature: float, depth: int = 1, branch: int = 1,
                    n_grid: int = 4000) -> float:
    """Spectral gap λ₁ of the v-SDE's generator: correlations and distance to stationarity decay as e^{−λ₁t}.

    Computed from the drift and diffusion alone (not from the closed-form law): the generator
    ``L f = a f' + ½ b² f''`` of a 1-D diffusion is symmetric in the speed measure, so a
    three-point finite-volume discretisation on a wide grid (reflecting ends) gives a
    symmetric tridiagonal matrix whose second eigenvalue is −λ₁. Depth ≥ 1 uses ``s = log v``;
    depth 0 uses ``z = asinh((α₁v − α₂)/√Δ)``. For D = 1 the small-v region behaves like
    Brownian motion with drift, so λ₁ ≤ ``(β₂' − Tα₃)²/(2Tα₃)`` (→ 0 as T → T_c: critical slowing).

    Returns:
        λ₁ > 0 (units of 1/t); 0.0 if the law is collapsed (no stationary density).
    """
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    D = check_int("depth", depth, minimum=0)
    n = check_int("n_grid", n_grid, minimum=100)
    law = StationaryLaw(problem, T, D, branch)  # only to locate the bulk of the grid
    if law.collapsed:
        return 0.0
    p = problem if (D == 0 or branch == 1) else problem.mirrored()
    if D == 0:
        lo, hi = -25.0, 25.0
    else:
        q_lo, q_hi = np.sort(np.abs(law.ppf(np.array([1e-9, 1.0 - 1e-9]))))
        lo = min(math.log(q_lo), -12.0) - (150.0 if D == 1 else 2.0)
        hi = math.log(q_hi) + 2.0
    y = np.linspace(lo, hi, n)
    h = y[1] - y[0]
    y_half = y[:-1] + 0.5 * h

    def coeffs_y(yy):
        if D >= 1:
            return sde_coefficients(yy, p, T, D, 1)
        sd = math.sqrt(p.delta)
        v = (p.alpha2 + sd * np.sinh(yy)) / p.alpha1
        dv, d2v = sd * np.cosh(yy) / p.alpha1, sd * np.sinh(yy) / p.alpha1
        a, b = sde_coefficients(v, p, T, 0)
        by = b / dv
        return (a - 0.5 * by * by * d2v) / dv, by

    a, b = coeffs_y(y)
    ah, bh = coeffs_y(y_half)
    phi, phih = 2.0 * a / b**2, 2.0 * ah / bh**2
    # Φ at nodes and half-nodes (trapezoid on the half grid)
    up = 0.25 * h * (phi[:-1] + phih)     # Φ_{i+1/2} − Φ_i
    down = 0.25 * h * (phih + phi[1:])    # Φ_{i+1} − Φ_{i+1/2}
    off = b[:-1] * b[1:] * np.exp(0.5 * (up - down)) / (2.0 * h * h)
    diag = np.zeros(n)
    diag[:-1] += b[:-1] ** 2 * np.exp(up) / (2.0 * h * h)
    diag[1:] += b[1:] ** 2 * np.exp(-down) / (2.0 * h * h)
    evals = eigh_tridiagonal(diag, -off, eigvals_only=True, select="i", select_range=(0, 1))
    return float(evals[1])


def integrated_autocorrelation_time(series, dt_record: float, max_lag: int | None = None) -> float:
    """Integrated autocorrelation time ``τ = Δ(1/2 + Σ_k ρ_k)`` of recorded chains (units of t).

    Args:
        series: (K, R) recordings of R chains every ``dt_record``; pooled over chains.
        dt_record: spacing Δ of the recordings.
        max_lag: largest lag summed (default K // 4); the sum stops at the first negative ρ_k.
    Returns:
        τ; ``n_eff ≈ R · K · Δ / (2τ)`` (≤ R·K).
    """
    x = check_array("series", series, ndim=2)
    dtr = check_positive("dt_record", dt_record)
    K = x.shape[0]
    if K < 4:
        raise ValueError("series needs at least 4 records per chain")
    L = K // 4 if max_lag is None else check_int("max_lag", max_lag, minimum=1, maximum=K - 1)
    xc = x - x.mean(axis=0, keepdims=True)
    var = float(np.mean(xc * xc))
    if var == 0:
        return 0.5 * dtr
    s = 0.5
    for k in range(1, L + 1):
        rho = float(np.mean(xc[k:] * xc[:-k])) / var
        if rho <= 0:
            break
        s += rho
    return s * dtr


# --------------------------------------------------------------------------------------------
# Plain numpy baseline (benchmark)
# --------------------------------------------------------------------------------------------
def numpy_euler_s(problem: DiagonalNetProblem, temperature: float, *, n_chains: int, n_steps: int, dt: float,
                  v0: float = 1.0, seed: int = 0) -> np.ndarray:
    """Plain numpy Euler–Maruyama of the depth-1 s-SDE (vectorised over chains; the benchmark baseline).

    ``ds = −4[β₁v − β₂' + T g(v)] dt + 4 sqrt(T g(v)) dW``, ``v = e^s``. No stiffness control:
    use only at small dt. Returns the final ``v`` (R,).
    """
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    R = check_positive_int("n_chains", n_chains)
    n = check_positive_int("n_steps", n_steps)
    dt = check_positive("dt", dt)
    _check_work("numpy_euler_s", R, n, what="n_steps = ", advice="ask for fewer steps or chains")
    rng = as_generator(seed)
    p = problem
    s = np.full(R, math.log(check_positive("v0", v0)))
    sq = math.sqrt(dt)
    b2 = p.beta2 - p.weight_decay
    for _ in range(n):
        v = np.exp(s)
        g = p.g_polynomial(v)
        s = s - 4.0 * (p.beta1 * v - b2 + T * g) * dt + 4.0 * np.sqrt(T * g) * sq * rng.standard_normal(R)
    return np.exp(s)


# --------------------------------------------------------------------------------------------
# Runs long enough to be stationary
# --------------------------------------------------------------------------------------------
def run_to_stationarity(problem: DiagonalNetProblem, temperature: float, depth: int = 1, *, n_chains: int = 2000,
                        v0=1.0, relax_times: float = 5.0, t_max: float = 60.0, dt: float = 0.02,
                        n_records: int = 1, scheme: str = "weak2", seed: int = 0, threads: int = 2,
                        warn: bool = True) -> StationaryRun:
    """Chains from ``v0`` run for ``relax_times/λ₁`` (capped at ``t_max``): long enough to forget ``v0``.

    Near T_c relaxation slows down (λ₁ → 0), so the cap can stop the run early: e.g. depth 1 at T = 0.25
    (k = σ = 1) needs t ≈ 120 for five relaxation times, more than the default ``t_max = 60``. Then the
    result says ``relaxed=False`` (and its summary says so), and a :class:`NotRelaxedWarning` is issued
    unless ``warn=False`` (for callers that report it themselves, e.g. a figure's hollow markers).

    Returns:
        :class:`StationaryRun` (``lambda1``, ``relax_times``, ``relaxed``; ``relaxed`` is False when the cap was
        hit or the law is collapsed, λ₁ = 0).
    """
    problem = as_problem(problem)
    relax_times = check_positive("relax_times", relax_times)
    branch = 1 if depth == 0 else int(np.sign(np.ravel(np.asarray(v0, dtype=float))[0]) or 1)
    lam = relaxation_rate(problem, temperature, depth, branch)
    t_end = t_max if lam <= 0 else min(relax_times / lam, t_max)
    t_end = max(dt * math.ceil(t_end / dt - 1e-9), 2 * dt * n_records)
    run = simulate_v(problem, temperature, depth, n_chains=n_chains, t_end=t_end, dt=dt, v0=v0,
                     n_records=n_records, scheme=scheme, seed=seed, threads=threads)
    relaxed = bool(lam > 0 and lam * run.times[-1] >= relax_times - 1e-9)
    settings = {**run.settings, "relax_times": relax_times, "t_max": float(t_max)}
    out = StationaryRun(steps=run.steps, times=run.times, diverged_step=run.diverged_step, settings=settings,
                        v=run.v, substeps=run.substeps, lambda1=float(lam), relax_times=relax_times, relaxed=relaxed)
    if warn and not relaxed:
        warnings.warn(f"run_to_stationarity stopped before {relax_times:g} relaxation times (depth {depth}, "
                      f"T = {temperature:g}): {out.summary()}. Raise t_max (or accept a run that still remembers "
                      "v0).", NotRelaxedWarning, stacklevel=2)
    return out
