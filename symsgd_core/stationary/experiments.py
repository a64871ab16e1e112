"""Notebook 03's experiments: SGD's stationary distribution for diagonal networks (arXiv 2308.06671, Section 4).

One function per figure (its keyword defaults are the figure's starting settings); each returns a frozen
result that :mod:`symsgd_core.ui.stationary` only draws. The analytic parts (closed forms, phases) are cheap
enough for slider callbacks; the simulations use the v-SDE engine (:mod:`.sde`) and SGD on the actual
parameters (:mod:`.sgd`). Statistics: goodness of fit by the Kolmogorov–Smirnov distance to the closed form
(critical value :func:`ks_threshold` at the package's one KS level :data:`KS_ALPHA`, both from
:mod:`symsgd_core.core.stats`, for the number of independent samples, one per chain), histograms as densities
with binomial errors (:func:`histogram_density`), tails as survival functions (:func:`survival_points`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from ..core.results import Outcome
from ..core.seeding import tagged_stream
from ..core.stats import KS_ALPHA, ks_threshold
from ..core.validation import check_choice
from .laws import (
    CRITICAL_T,
    PHASE_CODES,
    PHASES,
    DiagonalNetProblem,
    StationaryLaw,
    critical_temperature,
    most_likely_roots_depth1,
    phase_grid,
    phase_of,
    tail_exponent,
    transitional_temperature,
    variance_depth0,
)
from .sgd import AMPLIFIED_LR, SGDSamples, sgd_v_samples
from .v_sde import StationaryRun, relaxation_rate, run_to_stationarity, simulate_v, simulate_v_coupled

__all__ = [
    "KS_ALPHA", "gaussian_problem", "histogram_density", "survival_points", "ks_threshold",
    "DEPTH_OUTCOMES", "DepthLaws", "DepthSample", "DepthComparison", "depth_comparison", "depth_laws",
    "depth_laws_outcome", "depth_outcome", "SettingView", "wrong_sign_start", "discrete_sgd_setting",
    "variance_curves_outcome", "variance_summary", "tail_view_outcome",
    "PHASE_SIGMAS", "PHASE_TEMPS", "PHASE_FRACTIONS", "PHASE_OUTCOMES", "PhaseView", "phase_outcome", "phase_view",
    "T1_END_FRACTION", "VarianceCurves", "VarianceEstimates", "variance_curves", "variance_estimates",
    "WrongSignResult", "wrong_sign",
    "TAIL_DEPTHS", "TailView", "TailSamples", "tail_view", "tail_samples",
    "DISCRETE_SGD_OUTCOMES", "MethodFit", "DiscreteSGDResult", "DiscreteSGDScan", "discrete_sgd",
    "discrete_sgd_outcome", "discrete_sgd_scan",
    "DtRow", "dt_convergence",
]

def gaussian_problem(k: float, sigma: float, weight_decay: float) -> DiagonalNetProblem:
    """The moments of ``x ~ N(0, 1)``, ``y = kx + ε``, ``ε ~ N(0, σ²)`` with weight decay γ (a figure's sliders)."""
    return DiagonalNetProblem.gaussian(float(k), float(sigma), float(weight_decay))


def histogram_density(samples, edges):
    """Histogram of ``samples`` normalised as a density over ``edges`` (counts outside are kept in the total).

    Returns ``(centres, density, standard error)``, where the standard error is the binomial one
    of each bin's probability divided by its width (independent samples).
    """
    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x)]
    e = np.asarray(edges, dtype=float)
    counts, _ = np.histogram(x, bins=e)
    n = max(x.size, 1)
    w = np.diff(e)
    p = counts / n
    return 0.5 * (e[1:] + e[:-1]), p / w, np.sqrt(p * (1 - p) / n) / w


def survival_points(samples, v_grid, min_count: int = 5):
    """Empirical ``P(V > v)`` at ``v_grid``, keeping points with at least ``min_count`` samples beyond."""
    x = np.sort(np.asarray(samples, dtype=float).ravel())
    n = x.size
    beyond = n - np.searchsorted(x, v_grid, side="right")
    keep = beyond >= min_count
    return v_grid[keep], beyond[keep] / max(n, 1)


def _report(progress, fraction: float) -> None:
    if progress is not None:
        progress(fraction)


# ============================================================================ 1. depth 0 vs depth 1
@dataclass(frozen=True, eq=False)
class DepthLaws:
    """The closed-form laws of depth 0 and 1 at one setting (the live part of the first figure).

    Attributes:
        problem, temperature: the setting; critical_temperature: T_c of depth 1; phase: its :func:`phase_of`.
        laws: ``{0: law, 1: law}`` (:class:`~.laws.StationaryLaw`).
        edges: ``{depth: (41,)}`` histogram edges (0.5 % … 99.5 % quantiles for D = 0, 0 … 99 % for D = 1).
        curves: ``{depth: (x, p(x))}`` the densities on 400 points (``None`` when the law is δ(v)).
        modes: ``{depth: (xs, ps)}`` the most likely value (and, in the bimodal phase, the interior peak).
        outcome: :func:`depth_laws_outcome`.
    """

    problem: DiagonalNetProblem
    temperature: float
    critical_temperature: float
    phase: str
    laws: dict
    edges: dict
    curves: dict
    modes: dict
    outcome: Outcome


def depth_laws_outcome(temperature: float, critical_temperature: float, phase: str, laws: dict) -> Outcome:
    """The closed forms' outcome: its kind is depth 1's phase (:data:`~.laws.PHASES`; ``"dead"``, the law δ(v), a
    failure); numbers ``temperature``, ``T_c`` and per depth D ``collapsed_LD`` and, where the law is not δ(v),
    ``mean_LD``, ``variance_LD`` (inf where infinite) and ``mode_LD`` (the most likely v)."""
    numbers = {"temperature": float(temperature), "T_c": float(critical_temperature)}
    for depth, law in laws.items():
        numbers[f"collapsed_L{depth}"] = bool(law.collapsed)
        if not law.collapsed:
            numbers |= {f"mean_L{depth}": float(law.mean), f"variance_L{depth}": float(law.variance),
                        f"mode_L{depth}": float(law.mode)}
    return Outcome(phase, phase == "dead", numbers)


def _depth_edges(law: StationaryLaw, depth: int) -> np.ndarray:
    if depth == 0:
        lo, hi = law.ppf(np.array([0.005, 0.995]))
        return np.linspace(lo, hi, 41)
    if law.collapsed:
        return np.linspace(0.0, 1.0, 41)
    return np.linspace(0.0, float(law.ppf(np.array([0.99]))[0]), 41)


def depth_laws(temperature: float = 0.15, k: float = 1.0, sigma: float = 1.0, weight_decay: float = 0.0) -> DepthLaws:
    """The closed forms of depth 0 (Eq. 12) and depth 1 (Eq. 15, with weight decay) at temperature T."""
    prob = gaussian_problem(k, sigma, weight_decay)
    laws, edges, curves, modes = {}, {}, {}, {}
    for depth in (0, 1):
        law = laws[depth] = StationaryLaw(prob, temperature, depth)
        edges[depth] = e = _depth_edges(law, depth)
        if law.collapsed:
            curves[depth] = None
            modes[depth] = ([0.0], [1.0])
            continue
        x = np.linspace(e[0], e[-1], 400)
        if depth == 1:
            x = x[1:]
        y = law.pdf(x)
        curves[depth] = (x, y)
        m = law.mode
        ym = float(law.pdf(np.array([m]))[0]) if (depth == 0 or m > 0) else float(np.max(y))
        mx, my = [m], [ym]
        if depth == 1 and m == 0:  # bimodal phase: also mark the interior local maximum
            roots = most_likely_roots_depth1(temperature, prob)
            if roots.size == 2:
                mx.append(float(roots[-1]))
                my.append(float(law.pdf(roots[-1:])[0]))
        modes[depth] = (mx, my)
    tc, phase = critical_temperature(prob), phase_of(temperature, prob)
    return DepthLaws(prob, float(temperature), tc, phase, laws, edges, curves, modes,
                     depth_laws_outcome(temperature, tc, phase, laws))


@dataclass(frozen=True, eq=False)
class DepthSample:
    """SDE chains of one depth against its closed form.

    Attributes:
        depth: D; run: the :class:`~.sde.StationaryRun`; centres, density: its histogram on the law's edges.
        ks: KS distance of the finite final states to the closed form (nan when the law is δ(v));
        ks_threshold: :func:`ks_threshold` for their number; median: the median final v.
    """

    depth: int
    run: StationaryRun
    centres: np.ndarray
    density: np.ndarray
    ks: float
    ks_threshold: float
    median: float

    @property
    def agrees(self) -> bool:
        """The KS distance is within the sampling threshold (False when nothing could be compared)."""
        return bool(self.ks <= self.ks_threshold)


@dataclass(frozen=True, eq=False)
class DepthComparison:
    """The simulated part of the first figure: ``samples = {0: DepthSample, 1: DepthSample}`` and the laws;
    ``outcome``: :func:`depth_outcome`."""

    laws: DepthLaws
    samples: dict
    n_chains: int
    outcome: Outcome


#: The outcomes of the first figure's simulation (:func:`depth_outcome`).
DEPTH_OUTCOMES = ("unrelaxed", "collapsed", "compared")


def depth_outcome(laws: DepthLaws, samples: dict, n_chains: int | None = None) -> Outcome:
    """The first figure's simulation outcome: ``unrelaxed`` (the chains of a depth whose law is a density ran out of
    time, ``t = 25``, before 4 relaxation times: a failure, the histogram is not the stationary law), else
    ``collapsed`` (a law is δ(v), ``T ≥ T_c``: the chains collapse to 0 and there is no density to compare; a
    failure) or ``compared``.

    Numbers, per depth ``d`` of ``samples``: ``ks_L{d}``, ``ks_threshold_L{d}`` (NaN for δ(v)), ``median_L{d}``
    (final v), ``t_end_L{d}``, ``lambda1_L{d}`` (the relaxation rate κ, 1/time), ``relaxed_L{d}``,
    ``non_finite_L{d}`` (chains that left the float range), ``collapsed_L{d}`` (its law is δ(v)); ``n_chains``
    (chains per depth) where given."""
    numbers: dict = {} if n_chains is None else {"n_chains": int(n_chains)}
    for d, sm in samples.items():
        run = sm.run
        numbers.update({f"ks_L{d}": float(sm.ks), f"ks_threshold_L{d}": float(sm.ks_threshold),
                        f"median_L{d}": float(sm.median), f"t_end_L{d}": float(run.t_end),
                        f"lambda1_L{d}": float(run.lambda1),
                        f"relaxed_L{d}": bool(run.relaxed), f"non_finite_L{d}": int(run.non_finite),
                        f"collapsed_L{d}": bool(laws.laws[d].collapsed)})
    collapsed = {d for d in samples if laws.laws[d].collapsed}
    if any(not samples[d].run.relaxed for d in samples if d not in collapsed):
        return Outcome("unrelaxed", True, numbers)
    return Outcome("collapsed", True, numbers) if collapsed else Outcome("compared", False, numbers)


def depth_comparison(temperature: float = 0.15, k: float = 1.0, sigma: float = 1.0, weight_decay: float = 0.0,
                     n_chains: int = 1500, seed: int = 0, progress=None) -> DepthComparison:
    """``n_chains`` v-SDE chains per depth from v₀ = 1, run for 4 relaxation times (at most t = 25; the result
    says when that was too short), against the closed forms. Both depths use ``seed``."""
    laws = depth_laws(temperature, k, sigma, weight_decay)
    samples = {}
    for depth in (0, 1):
        run = run_to_stationarity(laws.problem, temperature, depth, n_chains=n_chains, v0=1.0, relax_times=4.0,
                                  t_max=25.0, seed=seed, warn=False)
        _report(progress, 0.5 * (depth + 1))
        centres, density, _ = histogram_density(run.final, laws.edges[depth])
        ok = np.isfinite(run.final)
        if laws.laws[depth].collapsed:
            ks, crit = float("nan"), float("nan")
        else:
            ks = float(stats.kstest(run.final[ok], laws.laws[depth].cdf).statistic)
            crit = ks_threshold(int(ok.sum()))
        samples[depth] = DepthSample(depth, run, centres, density, ks, crit, float(np.median(run.final)))
    return DepthComparison(laws, samples, int(n_chains), depth_outcome(laws, samples, n_chains))


# ============================================================================ 2. phase transition
#: The (σ, T) grid of the phase diagram and the fractions of T_c drawn as reference densities.
PHASE_SIGMAS = np.linspace(0.1, 2.0, 120)
PHASE_TEMPS = np.linspace(0.005, 0.6, 160)
PHASE_FRACTIONS = (0.2, 0.5, 0.8, 0.95)


@dataclass(frozen=True, eq=False)
class PhaseView:
    """The depth-1 law near v = 0 and the phase diagram at one setting.

    Attributes:
        problem, temperature, k: the setting; phase: :func:`phase_of`; T_c, T_star: its temperatures.
        near_zero_exponent: a in ``p ∝ v^a`` as v → 0 (``β₂'/(2α₃T) − 3/2``).
        v: the log-spaced v grid; references: ``[(fraction, x, p)]`` at ``fraction·T_c`` (empty if T_c ≤ 0);
        current: ``(x, p)`` at T, or None when the law is δ(v) (points with p outside [1e-6, 1e6] dropped).
        codes: :func:`phase_grid` on :data:`PHASE_TEMPS` × :data:`PHASE_SIGMAS`;
        T_c_curve, T_star_curve: T_c(σ) and T*(σ) on :data:`PHASE_SIGMAS`.
        outcome: :func:`phase_outcome`.
    """

    problem: DiagonalNetProblem
    temperature: float
    k: float
    phase: str
    T_c: float
    T_star: float
    near_zero_exponent: float
    v: np.ndarray
    references: list
    current: tuple | None
    codes: np.ndarray
    T_c_curve: np.ndarray
    T_star_curve: np.ndarray
    outcome: Outcome

    def region_centres(self, min_cells: int = 30) -> dict:
        """``{phase: (σ, T)}``: the median row and column of each phase's cells in :attr:`codes` (phases with more
        than ``min_cells`` cells), where the phase diagram writes its name."""
        out = {}
        for name, code in PHASE_CODES.items():
            ti, si = np.nonzero(self.codes == code)
            if ti.size > min_cells:
                out[name] = (float(PHASE_SIGMAS[int(np.median(si))]), float(PHASE_TEMPS[int(np.median(ti))]))
        return out


#: The outcomes of the phase figure (:func:`phase_outcome`): the phases of :data:`~.laws.PHASES`.
PHASE_OUTCOMES = tuple(PHASES)


def phase_outcome(phase: str, T_c: float, T_star: float, near_zero_exponent: float) -> Outcome:
    """The phase figure's outcome: the depth-1 law's phase (a kind of :data:`PHASE_OUTCOMES`, from
    :func:`~.laws.phase_of`); ``dead`` (``T ≥ T_c``, the law is δ(v): nothing is learned) is the failure. Numbers:
    ``T_c``, ``T_star`` and ``near_zero_exponent`` (a in ``p ∝ vᵃ`` as v → 0)."""
    check_choice("phase", phase, PHASE_OUTCOMES)
    return Outcome(phase, phase == "dead", {"T_c": float(T_c), "T_star": float(T_star),
                                            "near_zero_exponent": float(near_zero_exponent)})


def _visible(v, law: StationaryLaw):
    y = law.pdf(v)
    keep = (y > 1e-6) & (y < 1e6)
    return v[keep], y[keep]


def phase_view(temperature: float = 0.15, sigma: float = 1.0, weight_decay: float = 0.0, k: float = 1.0) -> PhaseView:
    """The density near 0 (log–log) at T and at fractions of T_c, and the (σ, T) phase diagram of depth 1."""
    prob = gaussian_problem(k, sigma, weight_decay)
    tc = critical_temperature(prob)
    v = np.logspace(-6, 1.3, 300)
    refs = [] if tc <= 0 else [(f, *_visible(v, StationaryLaw(prob, f * tc, 1, z_step=0.02))) for f in PHASE_FRACTIONS]
    law = StationaryLaw(prob, temperature, 1, z_step=0.02)
    current = None if law.collapsed else _visible(v, law)
    codes = phase_grid(k, PHASE_SIGMAS, PHASE_TEMPS, weight_decay)
    curve = np.array([critical_temperature(gaussian_problem(k, s, weight_decay)) for s in PHASE_SIGMAS])
    tstar = np.array([transitional_temperature(gaussian_problem(k, s, weight_decay)) for s in PHASE_SIGMAS])
    b2 = prob.beta2 - prob.weight_decay
    phase, t_star = phase_of(temperature, prob), transitional_temperature(prob)
    a = b2 / (2 * prob.alpha3 * temperature) - 1.5
    return PhaseView(prob, float(temperature), float(k), phase, tc, t_star, a, v, refs, current, codes, curve, tstar,
                     phase_outcome(phase, tc, t_star, a))


# ============================================================================ 3. fluctuation inversion
#: Depth 1's variance curve runs up to this fraction of T_c (the law collapses at T_c itself).
T1_END_FRACTION = 0.995
#: Depth 1's curve has this many temperatures on ``(0.01, T1_END_FRACTION)·T_c``.
T1_POINTS = 36
#: The peak temperature is located to this absolute tolerance (well below the 0.001 that is printed).
T_PEAK_XATOL = 1e-6


@dataclass(frozen=True, eq=False)
class VarianceCurves:
    """Var[v] against T from the closed forms: depth 0 on ``(0, 0.95·β₁'/α₁)``, depth 1 on ``(0, 0.995·T_c)``.

    Attributes:
        problem; T0, var0: depth 0; T1, var1: depth 1 (empty when T_c ≤ 0); T_c; T0_max = β₁'/α₁ (D = 0's Var
        diverges there). T_peak, var_peak: depth 1's maximum of Var[v], located by a bounded scalar maximisation
        between the grid neighbours of the largest grid value (so it does not depend on the grid); var0_at_peak:
        depth 0's Var at T_peak; T_end = T1_END_FRACTION·T_c and var_end: the curve's last point (all NaN when
        T_c ≤ 0).
    """

    problem: DiagonalNetProblem
    T0: np.ndarray
    var0: np.ndarray
    T1: np.ndarray
    var1: np.ndarray
    T_c: float
    T0_max: float
    T_peak: float = math.nan
    var_peak: float = math.nan
    var0_at_peak: float = math.nan
    T_end: float = math.nan
    var_end: float = math.nan

    @property
    def peak(self) -> int:
        """Index of depth 1's largest variance on the grid (−1 when there is no depth-1 curve)."""
        return int(np.argmax(self.var1)) if self.var1.size else -1

    @property
    def outcome(self) -> Outcome:
        """:func:`variance_curves_outcome` of these curves."""
        return variance_curves_outcome(self)

    def summary(self) -> str:
        """The one sentence the figure's status line and notebook 03's cell both print (:func:`variance_summary`)."""
        return variance_summary(self.outcome)


def variance_curves_outcome(curves: VarianceCurves) -> Outcome:
    """The closed-form variances' outcome: ``no_depth1`` (T_c ≤ 0: the depth-1 net learns nothing at any T, no
    depth-1 curve; a failure) or ``peaks``. Numbers ``T_c``, ``T0_max`` and for ``peaks`` ``T_peak``, ``var_peak``,
    ``var0_at_peak``, ``T_end``, ``var_end``, ``end_fraction`` (:data:`T1_END_FRACTION`)."""
    numbers = {"T_c": float(curves.T_c), "T0_max": float(curves.T0_max)}
    if not curves.T_c > 0:
        return Outcome("no_depth1", True, numbers)
    return Outcome("peaks", False, numbers | {
        "T_peak": float(curves.T_peak), "var_peak": float(curves.var_peak),
        "var0_at_peak": float(curves.var0_at_peak), "T_end": float(curves.T_end), "var_end": float(curves.var_end),
        "end_fraction": float(T1_END_FRACTION)})


def variance_summary(outcome: Outcome) -> str:
    """The one sentence of a :func:`variance_curves_outcome` that the figure's status line and notebook 03's cell
    both print (same points, same rounding: temperatures to 0.001, variances to 3 significant digits)."""
    n = outcome.numbers
    if outcome.kind == "no_depth1":
        return (f"γ ≥ k: {CRITICAL_T} = {n['T_c']:.3f} ≤ 0, the depth-1 net learns nothing at any T. L = 0 still "
                "learns.")
    return (f"L = 1: Var[v] peaks at T = {n['T_peak']:.3f} (= {n['T_peak'] / n['T_c']:.2f} × {CRITICAL_T}) at "
            f"{n['var_peak']:#.3g} and falls to {n['var_end']:#.3g} at {n['end_fraction']:g} × "
            f"{CRITICAL_T} = {n['T_end']:.3f}. "
            f"L = 0: at T = {n['T_peak']:.3f} Var = {n['var0_at_peak']:#.3g}; Var = Tg(m)/(β₁' − Tα₁) rises "
            f"monotonically and diverges at T = β₁'/α₁ = {n['T0_max']:.3f}.")


def _variance_peak(prob: DiagonalNetProblem, T1: np.ndarray, var1: np.ndarray) -> tuple[float, float]:
    """``(T, Var)`` at depth 1's maximum: bounded maximisation between the grid neighbours of the grid's argmax."""
    i = int(np.argmax(var1))
    lo, hi = T1[max(i - 1, 0)], T1[min(i + 1, T1.size - 1)]
    best = optimize.minimize_scalar(lambda t: -StationaryLaw(prob, t, 1, z_step=0.02).variance, bounds=(lo, hi),
                                    method="bounded", options=dict(xatol=T_PEAK_XATOL))
    if -best.fun < var1[i]:  # the maximiser never returns less than the grid already has
        return float(T1[i]), float(var1[i])
    return float(best.x), float(-best.fun)


def variance_curves(k: float = 1.0, sigma: float = 1.0, weight_decay: float = 0.0) -> VarianceCurves:
    """The closed-form variances of depth 0 (``T g(m)/(β₁' − Tα₁)``) and depth 1 (tabulated law) against T, with
    depth 1's peak and end point (see :class:`VarianceCurves`)."""
    prob = gaussian_problem(k, sigma, weight_decay)
    tc = critical_temperature(prob)
    t0_max = (prob.beta1 + weight_decay) / prob.alpha1
    T0 = np.linspace(0.005, 0.95 * t0_max, 60)
    var0 = np.array([variance_depth0(t, prob) for t in T0])
    if not tc > 0:
        return VarianceCurves(prob, T0, var0, np.array([]), np.array([]), tc, t0_max)
    T1 = np.linspace(0.01, T1_END_FRACTION, T1_POINTS) * tc
    var1 = np.array([StationaryLaw(prob, t, 1, z_step=0.02).variance for t in T1])
    t_peak, var_peak = _variance_peak(prob, T1, var1)
    return VarianceCurves(prob, T0, var0, T1, var1, tc, t0_max, t_peak, var_peak,
                          float(variance_depth0(t_peak, prob)), float(T1[-1]), float(var1[-1]))


@dataclass(frozen=True, eq=False)
class VarianceEstimates:
    """Sample variances of v-SDE final states against T.

    Attributes:
        points: ``{depth: (T, var, bootstrap se, relaxed)}`` (lists).
        unrelaxed: ``["L = … at T = …"]`` the points whose runs stopped before 4 relaxation times.
        n_chains, t_max: the sizes.
        outcome: :func:`variance_outcome`.
    """

    points: dict
    unrelaxed: list
    n_chains: int
    t_max: float
    outcome: Outcome


#: The outcomes of the fluctuation-inversion figure's simulation (:func:`variance_outcome`).
VARIANCE_OUTCOMES = ("unrelaxed", "relaxed")


def variance_outcome(points: dict, n_chains: int, t_max: float, fourth_moment_T: float) -> Outcome:
    """``unrelaxed`` (some point's chains stopped at ``t_max`` before 4 relaxation times: drawn hollow; not a failure,
    critical slowing down near T_c is part of the picture) or ``relaxed``. Numbers: ``n_chains``, ``t_max``,
    ``unrelaxed_depth``, ``unrelaxed_T`` (tuples, one entry per unrelaxed point, depth 0 first) and
    ``fourth_moment_T`` (β₁'/(3α₁): above it depth 0's fourth moment is infinite)."""
    bad = [(d, T) for d in sorted(points) for T, ok in zip(points[d][0], points[d][3]) if not ok]
    return Outcome("unrelaxed" if bad else "relaxed", False,
                   {"n_chains": int(n_chains), "t_max": float(t_max), "unrelaxed_depth": tuple(d for d, _ in bad),
                    "unrelaxed_T": tuple(float(T) for _, T in bad), "fourth_moment_T": float(fourth_moment_T)})


def variance_estimates(k: float = 1.0, sigma: float = 1.0, weight_decay: float = 0.0, n_chains: int = 600,
                       n_temps: int = 6, seed: int = 0, t_max: float = 25.0, progress=None) -> VarianceEstimates:
    """Var[v] of ``n_chains`` chains from v₀ = 1 after 4 relaxation times (at most ``t_max``), at ``n_temps``
    temperatures per depth; error bars: 100 bootstrap resamples over chains.

    Seeds: point j (depth 0 first, then depth 1) runs with seed ``seed + j``; the bootstrap draws from
    ``stream(seed)`` in that order.
    """
    prob = gaussian_problem(k, sigma, weight_decay)
    tc = critical_temperature(prob)
    t0_max = (prob.beta1 + weight_decay) / prob.alpha1
    plan = [(0, T) for T in np.linspace(0.1, 0.55, n_temps) * min(t0_max, 0.5)]
    if tc > 0:
        plan += [(1, T) for T in np.linspace(0.15, 0.9, n_temps) * tc]
    pts = {0: ([], [], [], []), 1: ([], [], [], [])}
    unrelaxed = []
    rng = np.random.default_rng(seed)
    for j, (depth, T) in enumerate(plan):
        run = run_to_stationarity(prob, T, depth, n_chains=n_chains, v0=1.0, relax_times=4.0, t_max=t_max, dt=0.04,
                                  seed=seed + j, warn=False)
        x = run.final[np.isfinite(run.final)]
        boot = [np.var(x[rng.integers(0, x.size, x.size)]) for _ in range(100)]
        pts[depth][0].append(T)
        pts[depth][1].append(float(np.var(x)))
        pts[depth][2].append(float(np.std(boot)))
        pts[depth][3].append(run.relaxed)
        if not run.relaxed:
            unrelaxed.append(f"L = {depth} at T = {T:.3f}")  # temperatures to 0.001, as in the status line
        _report(progress, (j + 1) / len(plan))
    return VarianceEstimates(pts, unrelaxed, int(n_chains), float(t_max),
                             variance_outcome(pts, n_chains, t_max, (prob.beta1 + weight_decay) / (3 * prob.alpha1)))


# ============================================================================ 4. wrong sign
@dataclass(frozen=True, eq=False)
class WrongSignResult:
    """Runs started with the wrong sign, v₀ = −1 (u = −w).

    Attributes:
        temperature; median_paths: ``{1: (t, median |v|), 2: (…)}`` of the v-SDE (floored at 1e-300);
        rate: the collapse rate 4(β₂ + γ + Tα₃) of depth 1; rate_line: ``(t, |v|)`` of that slope from t = 2;
        amplified: :class:`~.sgd.SGDSamples` of noise-amplified SGD on (u, w), depth 1;
        depth0: the depth-0 :class:`~.sde.StationaryRun`; law0: its closed form; edges, centres, density: its
        histogram; p_wrong_sim, p_wrong_theory: ``P(v < 0)`` simulated and closed form;
        median_abs_v_end: ``{1: …, 2: …}`` at the last record; amplified_median_abs_v: at t = 2 (None if every run
        diverged).
        outcome: :func:`wrong_sign_outcome`.
    """

    temperature: float
    t_end: float
    median_paths: dict
    rate: float
    rate_line: tuple
    amplified: SGDSamples
    depth0: StationaryRun
    law0: StationaryLaw
    edges: np.ndarray
    centres: np.ndarray
    density: np.ndarray
    p_wrong_sim: float
    p_wrong_theory: float
    median_abs_v_end: dict
    amplified_median_abs_v: float | None
    outcome: Outcome

    @property
    def amplified_path(self) -> tuple:
        """``(t, median |v|)`` of the noise-amplified SGD runs that did not diverge, after the start (floored at
        1e-300 like :attr:`median_paths`; empty lists when every run diverged)."""
        amp = self.amplified
        if not amp.v.size:
            return [], []
        return amp.times[1:], np.maximum(np.median(np.abs(amp.v_path[1:]), axis=1), 1e-300)

    @property
    def law0_curve(self) -> tuple:
        """``(v, p(v))``: depth 0's closed form on the histogram's range, 300 points."""
        v = np.linspace(self.edges[0], self.edges[-1], 300)
        return v, self.law0.pdf(v)


def wrong_sign_outcome(t_end: float, median_abs_v_end: dict, rate: float, amplified: SGDSamples,
                       amplified_median_abs_v: float | None, p_wrong_sim: float, p_wrong_theory: float) -> Outcome:
    """The wrong-sign figure's outcome: always ``collapse`` (what it shows; its numbers say how far). Numbers:
    ``t_end``, ``median_L1``, ``median_L2`` (median |v| at ``t_end``), ``rate`` (depth 1's collapse rate),
    ``amp_diverged``, ``amp_runs`` (noise-amplified SGD), ``amp_median`` (its median |v| at t = 2, absent when every
    run diverged), ``p_wrong_sim``, ``p_wrong_theory`` (depth 0's P(v < 0))."""
    numbers = {"t_end": float(t_end), "median_L1": float(median_abs_v_end[1]), "median_L2": float(median_abs_v_end[2]),
               "rate": float(rate), "amp_diverged": int(amplified.diverged), "amp_runs": int(amplified.n_runs),
               "p_wrong_sim": float(p_wrong_sim), "p_wrong_theory": float(p_wrong_theory)}
    if amplified_median_abs_v is not None:
        numbers["amp_median"] = float(amplified_median_abs_v)
    return Outcome("collapse", False, numbers)


def wrong_sign(temperature: float = 0.15, n_chains: int = 300, seed: int = 0, progress=None) -> WrongSignResult:
    """Depth 1 and 2 from v₀ = −1 collapse to 0 (Euler, dt = 0.005, t = 8); depth 0 keeps wrong-sign mass.

    Seeds: depth D's SDE uses ``seed + D``; SGD and the depth-0 run use ``seed``.
    """
    prob = gaussian_problem(1.0, 1.0, 0.0)
    T = float(temperature)
    t_end, K = 8.0, 80
    paths = {}
    for depth in (1, 2):
        run = simulate_v(prob, T, depth, n_chains=n_chains, t_end=t_end, dt=0.005, v0=-1.0, n_records=K,
                         scheme="euler", seed=seed + depth)
        med = np.median(np.abs(run.v), axis=1)
        paths[depth] = (run.times, np.maximum(med, 1e-300))
        _report(progress, 0.25 * depth)
    amp = sgd_v_samples(1.0, 1.0, T, depth=1, method="amplified", lr=AMPLIFIED_LR, n_runs=100, t_end=2.0, v0=-1.0,
                        n_records=8, seed=seed)
    _report(progress, 0.75)
    law0 = StationaryLaw(prob, T, 0)
    run0 = run_to_stationarity(prob, T, 0, n_chains=4 * n_chains, v0=-1.0, relax_times=6.0, seed=seed, warn=False)
    _report(progress, 1.0)
    rate = 4.0 * (prob.beta2 + prob.weight_decay + T * prob.alpha3)
    t_line = np.linspace(2.0, t_end, 20)
    s_ref = math.log(paths[1][1][np.searchsorted(paths[1][0], 2.0)])
    lo, hi = law0.ppf(np.array([0.002, 0.998]))
    e = np.linspace(lo, hi, 41)
    centres, density, _ = histogram_density(run0.final, e)
    p_wrong_sim, p_wrong_theory = float(np.mean(run0.final < 0)), float(law0.cdf(np.array([0.0]))[0])
    ends = {d: float(paths[d][1][-1]) for d in (1, 2)}
    amp_median = float(np.median(np.abs(amp.v))) if amp.v.size else None
    return WrongSignResult(
        temperature=T, t_end=t_end, median_paths=paths, rate=rate,
        rate_line=(t_line, np.exp(s_ref - rate * (t_line - 2.0))), amplified=amp, depth0=run0, law0=law0, edges=e,
        centres=centres, density=density, p_wrong_sim=p_wrong_sim, p_wrong_theory=p_wrong_theory,
        median_abs_v_end=ends, amplified_median_abs_v=amp_median,
        outcome=wrong_sign_outcome(t_end, ends, rate, amp, amp_median, p_wrong_sim, p_wrong_theory))


# ============================================================================ 5. tails
#: Depths of the tails figure.
TAIL_DEPTHS = (1, 2, 4)


@dataclass(frozen=True, eq=False)
class TailView:
    """Tails of the stationary law, ``P(V > v)`` on ``v ∈ [1, 100]``.

    Attributes:
        temperature; v: the grid; survival: ``{D: P(V > v)}``; power_laws: ``{D: the line v^(ρ+1)}`` through the
        last point; slopes: ``{D: local slope of log p at v ≈ 1000}``; depth0: ``(v, P(V > v))`` of D = 0
        (points above 1e-7); rho0: D = 0's exponent at T; outcome: :func:`tail_view_outcome`.
    """

    temperature: float
    v: np.ndarray
    survival: dict
    power_laws: dict
    slopes: dict
    depth0: tuple
    rho0: float
    outcome: Outcome


def tail_view_outcome(slopes: dict, rho0: float) -> Outcome:
    """The closed-form tails' outcome (one kind, ``tails``): numbers ``slope_LD`` (local slope of log p at
    v ≈ 1000) per depth D of :data:`TAIL_DEPTHS` and ``rho0`` (D = 0's exponent at T)."""
    return Outcome("tails", False, {**{f"slope_L{d}": float(s) for d, s in slopes.items()}, "rho0": float(rho0)})


def tail_view(temperature: float = 0.15) -> TailView:
    """The closed-form tails of depth 1, 2, 4 (ρ = −5 + 3/(D+1)) and of depth 0 (ρ depends on T), k = σ = 1."""
    prob = gaussian_problem(1.0, 1.0, 0.0)
    v = np.logspace(0, 2, 120)
    survival, lines, slopes = {}, {}, {}
    for d in TAIL_DEPTHS:
        law = StationaryLaw(prob, temperature, d, z_step=0.02)
        sf = 1.0 - law.cdf(v)
        survival[d] = sf
        lines[d] = float(sf[-1]) * (v / v[-1]) ** (tail_exponent(d) + 1.0)
        slopes[d] = float(np.diff(law.log_pdf(np.array([1e3, 2e3])))[0] / math.log(2.0))
    sf0 = 1.0 - StationaryLaw(prob, temperature, 0, z_step=0.02).cdf(v)
    keep = sf0 > 1e-7
    rho0 = tail_exponent(0, temperature, prob)
    return TailView(float(temperature), v, survival, lines, slopes, (v[keep], sf0[keep]), rho0,
                    tail_view_outcome(slopes, rho0))


@dataclass(frozen=True, eq=False)
class TailSamples:
    """v-SDE samples of the tails: ``samples = {D: pooled v}``, ``points = {D: (v, P(V > v))}``; ``outcome``:
    :func:`tail_outcome`."""

    temperature: float
    samples: dict
    points: dict
    n_chains: int
    t_end: float
    outcome: Outcome


#: A tail sample counts as far out above this v (the tails figure's status line).
TAIL_FAR = 10.0


def tail_outcome(samples: dict, n_chains: int, t_end: float) -> Outcome:
    """The tails figure's outcome: always ``sampled``. Numbers: ``n_chains``, ``t_end``, and per depth ``D`` of
    ``samples`` ``samples_L{D}`` (pooled samples) and ``far_L{D}`` (samples above :data:`TAIL_FAR`)."""
    numbers = {"n_chains": int(n_chains), "t_end": float(t_end)}
    for d, x in samples.items():
        numbers.update({f"samples_L{d}": int(x.size), f"far_L{d}": int(np.sum(x > TAIL_FAR))})
    return Outcome("sampled", False, numbers)


def tail_samples(temperature: float = 0.15, n_chains: int = 800, n_records: int = 10, t_end: float = 10.0,
                 seed: int = 0, progress=None) -> TailSamples:
    """Chains from v₀ = 1 for ``t_end``; the records of the second half pooled (tail excursions decorrelate
    within about one time unit). Seeds: depth D uses ``seed + D``."""
    prob = gaussian_problem(1.0, 1.0, 0.0)
    v_grid = np.logspace(0, 2, 25)
    samples, points = {}, {}
    for i, d in enumerate(TAIL_DEPTHS):
        run = simulate_v(prob, temperature, d, n_chains=n_chains, t_end=t_end, dt=0.02, v0=1.0, n_records=n_records,
                         seed=seed + d)
        x = run.v[run.times >= 0.5 * run.times[-1]].ravel()
        samples[d] = x
        points[d] = survival_points(x, v_grid)
        _report(progress, (i + 1) / len(TAIL_DEPTHS))
    return TailSamples(float(temperature), samples, points, int(n_chains), float(t_end),
                       tail_outcome(samples, n_chains, t_end))


# ============================================================================ what a simulation figure says first
@dataclass(frozen=True, eq=False)
class SettingView:
    """The part of a simulation figure drawn at once, before its Run, where there is no closed form to draw: the
    setting, as an outcome (``temperature`` T and what the wording quotes)."""

    temperature: float
    outcome: Outcome


def wrong_sign_start(temperature: float = 0.15) -> SettingView:
    """The wrong-sign figure before its Run (:func:`wrong_sign`): every run starts at v₀ = −1 (u = −w); outcome
    ``wrong_start``, number ``temperature``."""
    return SettingView(float(temperature), Outcome("wrong_start", False, {"temperature": float(temperature)}))


def discrete_sgd_setting(temperature: float = 0.1) -> SettingView:
    """The discrete-SGD figure before its Run (:func:`discrete_sgd`): plain SGD at η = T with batch size 1 on the
    problem k = σ = 1, γ = 0; outcome ``setting``, numbers ``temperature``, ``T_c`` (of that problem), ``lr`` (= T)
    and ``batch_size`` (1)."""
    T = float(temperature)
    return SettingView(T, Outcome("setting", False, {"temperature": T, "T_c": float(critical_temperature(
        gaussian_problem(1.0, 1.0, 0.0))), "lr": T, "batch_size": 1}))


# ============================================================================ 6. discrete SGD near T_c
@dataclass(frozen=True, eq=False)
class MethodFit:
    """Final v of one method against the closed form: KS distance, its threshold, divergences, histogram."""

    ks: float
    ks_threshold: float
    diverged: int
    n: int
    centres: np.ndarray
    density: np.ndarray

    @property
    def agrees(self) -> bool:
        return bool(self.ks <= self.ks_threshold)


@dataclass(frozen=True, eq=False)
class DiscreteSGDResult:
    """Depth 1 at T: the v-SDE, plain SGD (η = T, S = 1) and noise-amplified SGD against Eq. 15.

    Attributes:
        temperature; law: the closed form; curve: ``(x, p)`` (None when δ(v)); edges: the histogram's;
        fits: ``{"v-SDE": MethodFit, "plain SGD": …, "amplified SGD": …}`` (in that order).
        outcome: :func:`discrete_sgd_outcome`.
    """

    temperature: float
    law: StationaryLaw
    curve: tuple | None
    edges: np.ndarray
    fits: dict
    outcome: Outcome


#: The methods the discrete-SGD figure fits against the closed form, in the order of its ``fits`` and outcome.
FIT_NAMES = ("v-SDE", "plain SGD", "amplified SGD")
#: The outcomes of the discrete-SGD figure (:func:`discrete_sgd_outcome`).
DISCRETE_SGD_OUTCOMES = ("sde_off", "sgd_off", "agree")


def discrete_sgd_outcome(fits: dict, temperature: float | None = None) -> Outcome:
    """The discrete-SGD figure's outcome from its fits (``"v-SDE"`` first, then the SGD methods): ``sde_off`` (the
    v-SDE itself is not within the KS threshold of the closed form: not yet stationary, or the law is δ(v); a
    failure, there is no reference), ``sgd_off`` (the v-SDE agrees, some SGD method does not: where the picture
    breaks) or ``agree``. Numbers, one entry per fit in ``fits``' order: ``ks``, ``ks_threshold``, ``agrees``,
    ``diverged`` (runs), ``n`` (runs); ``temperature`` where given."""
    f = list(fits.values())
    numbers = {} if temperature is None else {"temperature": float(temperature)}
    numbers |= {"ks": tuple(x.ks for x in f), "ks_threshold": tuple(x.ks_threshold for x in f),
               "agrees": tuple(x.agrees for x in f), "diverged": tuple(int(x.diverged) for x in f),
               "n": tuple(int(x.n) for x in f)}
    if not fits["v-SDE"].agrees:
        return Outcome("sde_off", True, numbers)
    return Outcome("agree" if all(numbers["agrees"]) else "sgd_off", False, numbers)


def discrete_sgd(temperature: float = 0.1, n_runs: int = 300, seed: int = 0, progress=None) -> DiscreteSGDResult:
    """The v-SDE (3 relaxation times, at most t = 6), plain SGD (t = 6) and noise-amplified SGD (t = 3,
    ``n_runs // 2`` runs) from v = 1, all with ``seed``."""
    prob = gaussian_problem(1.0, 1.0, 0.0)
    T = float(temperature)
    law = StationaryLaw(prob, T, 1)
    t_end = 6.0
    sde = run_to_stationarity(prob, T, 1, n_chains=n_runs, v0=1.0, relax_times=3.0, t_max=t_end, seed=seed,
                              warn=False)
    _report(progress, 1 / 3)
    sgd = sgd_v_samples(1.0, 1.0, T, method="sgd", n_runs=n_runs, t_end=t_end, seed=seed)
    _report(progress, 2 / 3)
    amp = sgd_v_samples(1.0, 1.0, T, method="amplified", lr=AMPLIFIED_LR, n_runs=n_runs // 2, t_end=3.0, seed=seed)
    _report(progress, 1.0)
    hi = float(law.ppf(np.array([0.98]))[0]) if not law.collapsed else 1.0
    e = np.linspace(0.0, hi, 21)
    curve = None
    if not law.collapsed:
        x = np.linspace(e[0], e[-1], 300)[1:]
        curve = (x, law.pdf(x))
    fits = {}
    for name, vals, div, n in zip(FIT_NAMES, (sde.final, sgd.v, amp.v), (0, sgd.diverged, amp.diverged),
                                  (n_runs, n_runs, n_runs // 2)):
        c, d, _ = histogram_density(vals, e)
        ks = float(stats.kstest(vals, law.cdf).statistic) if (vals.size and not law.collapsed) else float("nan")
        fits[name] = MethodFit(ks, ks_threshold(max(vals.size, 1)), div, n, c, d)
    return DiscreteSGDResult(T, law, curve, e, fits, discrete_sgd_outcome(fits, T))


@dataclass(frozen=True, eq=False)
class DiscreteSGDScan:
    """Divergence fractions and KS distances against T (tuples, one entry per temperature).

    Attributes:
        T; sgd_div, amp_div: fraction of runs that diverged; sgd_ks, amp_ks: two-sample KS distance of the
        surviving runs to the v-SDE at the same time; sgd_crit, amp_crit: the two-sample thresholds;
        sde_ks_law: KS distance of the v-SDE to the closed form (nan when δ(v)); sde_crit: its threshold;
        n_runs; t_end.
    """

    T: tuple
    sgd_div: tuple
    amp_div: tuple
    sgd_ks: tuple
    amp_ks: tuple
    sgd_crit: tuple
    amp_crit: tuple
    sde_ks_law: tuple
    sde_crit: tuple
    n_runs: int
    t_end: float


def discrete_sgd_scan(temps=(0.05, 0.1, 0.15, 0.2, 0.25, 0.3), n_runs: int = 300, t_end: float = 5.0, seed: int = 0,
                      progress=None) -> DiscreteSGDScan:
    """Divergence fraction and KS distances against T for plain SGD, noise-amplified SGD and the v-SDE.

    Every method starts at v = 1 (balanced) and runs for the same time ``t_end``, so SGD is compared with the
    SDE *at the same time* (two-sample KS, asymptotic threshold at level :data:`KS_ALPHA`): slow relaxation near
    T_c affects both alike and does not masquerade as a discretisation error. The SDE's own KS distance to the
    closed form shows how far from stationary the runs still are. Seeds: temperature j uses ``seed + j`` for
    every method.
    """
    prob = gaussian_problem(1.0, 1.0, 0.0)
    keys = ("T", "sgd_div", "amp_div", "sgd_ks", "amp_ks", "sgd_crit", "amp_crit", "sde_ks_law", "sde_crit")
    rows = {k: [] for k in keys}
    c_alpha = math.sqrt(-0.5 * math.log(KS_ALPHA / 2.0))  # two-sample KS, asymptotic
    for j, T in enumerate(temps):
        law = StationaryLaw(prob, T, 1)
        sgd = sgd_v_samples(1.0, 1.0, T, method="sgd", n_runs=n_runs, t_end=t_end, seed=seed + j)
        amp = sgd_v_samples(1.0, 1.0, T, method="amplified", lr=AMPLIFIED_LR, n_runs=n_runs // 2, t_end=t_end,
                            seed=seed + j)
        sde = simulate_v(prob, T, 1, n_chains=n_runs, t_end=t_end, dt=0.02, v0=1.0, seed=seed + j).final
        rows["T"].append(T)
        for key, res in (("sgd", sgd), ("amp", amp)):
            m = res.v.size
            rows[f"{key}_div"].append(res.diverged / res.n_runs)
            rows[f"{key}_ks"].append(float(stats.ks_2samp(res.v, sde).statistic) if m else 1.0)
            rows[f"{key}_crit"].append(c_alpha * math.sqrt((m + n_runs) / max(m * n_runs, 1)))
        rows["sde_ks_law"].append(float("nan") if law.collapsed else float(stats.kstest(sde, law.cdf).statistic))
        rows["sde_crit"].append(ks_threshold(n_runs))
        _report(progress, (j + 1) / len(temps))
    return DiscreteSGDScan(**{k: tuple(v) for k, v in rows.items()}, n_runs=int(n_runs), t_end=float(t_end))


# ============================================================================ the step-size study
@dataclass(frozen=True)
class DtRow:
    """One scheme and step size of :func:`dt_convergence`.

    Attributes:
        scheme, dt; sup_F_dt_minus_F_dt2: two-sample KS distance of the coupled (dt, dt/2) runs (the dt run's
        error, up to noise); ks_fine_vs_law: KS distance of the dt/2 run to the closed form; p_small_coarse,
        p_small_fine, p_small_law: ``P(v < v_small)``; ks_noise_scale: ``1/√n``.
    """

    scheme: str
    dt: float
    sup_F_dt_minus_F_dt2: float
    ks_fine_vs_law: float
    p_small_coarse: float
    p_small_fine: float
    p_small_law: float
    ks_noise_scale: float


def dt_convergence(problem: DiagonalNetProblem, temperature: float, depth: int = 1, *, dts=(0.04, 0.02, 0.01),
                   schemes=("euler", "weak2"), n_chains: int = 3000, relax_times: float = 2.0, v_small: float = 0.05,
                   seed: int = 0) -> list[DtRow]:
    """Discretisation error against dt, measured with coupled (dt, dt/2) runs started from the closed form.

    For each scheme and dt: ``sup|F_dt − F_dt/2|`` (two-sample KS of the coupled runs: the error of
    the dt run, up to noise), the KS distance of the dt/2 run to the closed form, and
    ``P(v < v_small)`` of both runs against the closed form. Halving dt should halve the first
    column for Euler (weak order 1) and quarter it for the order-2 scheme, until sampling noise
    (≈ 1/√n) takes over. The chains start from exact draws of the law (:func:`~symsgd_core.core.seeding.
    tagged_stream` ``(seed, 5)``); every run uses ``seed``.
    """
    law = StationaryLaw(problem, temperature, depth)
    if law.collapsed:
        raise ValueError(f"no stationary density at T = {temperature} (depth {depth}): nothing to converge to")
    lam = relaxation_rate(problem, temperature, depth)
    v0 = law.sample(n_chains, seed=tagged_stream(seed, 5))
    p_small = float(law.cdf(np.array([v_small]))[0])
    rows = []
    for scheme in schemes:
        for dt in dts:
            fine, coarse = simulate_v_coupled(problem, temperature, depth, n_chains=n_chains, t_end=relax_times / lam,
                                              dt=dt, v0=v0, scheme=scheme, seed=seed)
            rows.append(DtRow(scheme, dt, float(stats.ks_2samp(fine.final, coarse.final).statistic),
                              float(stats.kstest(fine.final, law.cdf).statistic),
                              float(np.mean(coarse.final < v_small)), float(np.mean(fine.final < v_small)), p_small,
                              1.0 / math.sqrt(n_chains)))
    return rows
