"""Checks: SGD's stationary distribution for diagonal networks (arXiv 2308.06671, Section 4).

Each check takes the formula it tests as an optional argument, so a test can inject a broken
one and see the check fail. Simulations use the v-SDE engine (:mod:`.sde`) with many
independent chains and ONE sample per chain (the final state), so the effective sample size is
the number of chains; their tolerances add the Monte-Carlo quantile for that sample size to the
discretisation error measured by running ``dt`` and ``dt/2`` on the same Brownian paths.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import integrate, stats

from ..balance.dynamics import run_sgd
from ..balance.experiments import SCALAR_DATA
from ..balance.models import ScalarModel
from ..core.checking import CheckResult, make_result, mc_tolerance, register, roundoff_tolerance
from ..core.conventions import steps_for_time
from ..core.seeding import stream, tagged_stream
from ..core.stats import KS_ALPHA, Z_MC, ks_threshold
from ..core.validation import check_positive, check_positive_int
from .laws import (
    DiagonalNetProblem,
    StationaryLaw,
    critical_temperature,
    log_density_depth0,
    log_density_depth1,
    most_likely_value_depth0,
    most_likely_value_depth1,
    paper_transitional_temperature,
    tail_exponent,
    transitional_temperature,
    variance_depth0,
)
from .v_sde import relaxation_rate, simulate_v, simulate_v_coupled, v_space_coefficients

#: (k, σ, γ, T) settings on which the closed forms are checked.
SETTINGS = ((1.0, 1.0, 0.0, 0.05), (1.0, 1.0, 0.0, 0.15), (1.0, 1.0, 0.0, 0.3), (1.5, 0.5, 0.2, 0.1),
            (0.7, 1.3, 0.05, 0.08), (2.0, 2.0, 0.0, 0.2))


def _problem(k, sigma, gamma):
    return DiagonalNetProblem.gaussian(k, sigma, gamma)


# ============================================================================ Fokker–Planck
@register("stationary.fokker_planck")
def check_fokker_planck(seed: int = 0, log_density0=log_density_depth0, log_density1=log_density_depth1,
                        n_points: int = 64) -> object:
    """Eq. 12 and Eq. 15 (with weight decay) solve the stationary Fokker–Planck equation with zero flux.

    For a 1-D SDE ``dv = a dt + b dW`` the zero-flux stationary density obeys
    ``(log p)' = (2a − (b²)')/b²``. The left side is the complex-step derivative of the closed
    form (exact to round-off), the right side comes from the SDE coefficients alone.
    """
    worst, worst_tol, where = -1.0, 1.0, None
    rng = stream(seed)
    for k, sigma, gamma, T in SETTINGS:
        prob = _problem(k, sigma, gamma)
        for depth, logp in ((0, log_density0), (1, log_density1)):
            v = rng.uniform(-3.0, 4.0, n_points) if depth == 0 else np.exp(rng.uniform(-4.0, 2.5, n_points))
            h = 1e-30
            dlogp = np.imag(logp(v + 1j * h, T, prob)) / h
            a, b2, db2 = v_space_coefficients(v, prob, T, depth)
            rhs = (2.0 * a - db2) / b2
            err = np.abs(dlogp - rhs)
            # each side is a sum of ~8 terms of size ≤ |term| ; relative round-off scale
            scale = np.maximum.reduce([np.abs(dlogp), np.abs(2 * a / b2), np.abs(db2 / b2),
                                       np.full_like(v, 1.0 / T)]) * (1.0 + np.abs(v)) ** 2
            tol = np.array([roundoff_tolerance(s, 8) for s in scale])
            ratio = err / tol
            i = int(np.argmax(ratio))
            if where is None or ratio[i] > worst / worst_tol:
                worst, worst_tol, where = float(err[i]), float(tol[i]), (k, sigma, gamma, T, depth, float(v[i]))
    return make_result(
        "stationary.fokker_planck",
        "Eq. 12 (L = 0) and Eq. 15 (L = 1, weight decay) satisfy (log p)' = (2a − (b²)')/b²: zero-flux stationary FP",
        worst, worst_tol, "float64 round-off: 64·8·eps·(size of the largest term), complex-step derivative exact",
        details={"worst_at (k, sigma, gamma, T, depth, v)": where, "settings": len(SETTINGS)})


# ============================================================================ normalisation & moments
def _quad_moment(law: StationaryLaw, m: int):
    """``∫ v^m p(v) dv`` over the law's support with scipy quad (adaptive Gauss–Kronrod); (value, abserr).

    Depth 0: pieces split at quantiles, in v. Depth 1: the density behaves as ``v^a`` at 0
    (``a → −1`` as T → T_c, so the mass spreads over many decades of v): the piece
    ``[0, e^{−40}]`` uses quad's algebraic weight (``weight="alg"``, QAWS) with the exact ``a``,
    the bulk in ``s = log v`` (``∫ v^m p(v) v ds``, split at log-quantiles), the far tail in v.
    """
    if law.depth == 0:
        pts = [-np.inf, *law.ppf(np.array([1e-6, 0.01, 0.25, 0.5, 0.75, 0.99, 1 - 1e-6])).tolist(), np.inf]
        total = err = 0.0
        for a, b in zip(pts[:-1], pts[1:]):
            val, e = integrate.quad(lambda v: v**m * float(law.pdf(np.array([v]))[0]), a, b, limit=400,
                                    epsabs=1e-14, epsrel=1e-12)
            total, err = total + val, err + e
        return total, err
    p = law.problem
    expo = (p.beta2 - p.weight_decay) / (2.0 * p.alpha3 * law.temperature) - 1.5
    v_lo = math.exp(-40.0)

    def smooth(v):  # p(v) v^m / v^a, finite at v = 0
        v = max(v, 1e-300)
        return math.exp(m * math.log(v) + float(law.log_pdf(np.array([v]))[0]) - expo * math.log(v))

    total, err = integrate.quad(smooth, 0.0, v_lo, weight="alg", wvar=(expo, 0.0), limit=400, epsabs=1e-14,
                                epsrel=1e-12)
    qs = np.log(law.ppf(np.array([0.01, 0.25, 0.5, 0.75, 0.99, 1 - 1e-6])))
    pts = [-40.0, *[q for q in qs if q > -40.0]]
    for a, b in zip(pts[:-1], pts[1:]):
        val, e = integrate.quad(lambda s: math.exp((m + 1) * s + float(law.log_pdf(np.array([math.exp(s)]))[0])),
                                a, b, limit=400, epsabs=1e-14, epsrel=1e-12)
        total, err = total + val, err + e
    val, e = integrate.quad(lambda v: v**m * float(law.pdf(np.array([v]))[0]), math.exp(pts[-1]), np.inf,
                            limit=400, epsabs=1e-14, epsrel=1e-12)
    return total + val, err + e


@register("stationary.normalisation")
def check_normalisation(seed: int = 0, law_factory=StationaryLaw) -> list:
    """The normalised laws integrate to 1 (scipy quad) and their moments obey SDE identities.

    D = 0: the drift is linear, so ``E v = β₂/β₁'`` and ``Var v = T g(E v)/(β₁' − Tα₁)`` exactly.
    D = 1: stationarity of ``s = log v`` gives ``β₁E v − β₂' + T E g(v) = 0`` (Itô, E[ds] = 0).
    Both identities come from the SDE, not from the closed form, so a wrong formula breaks them.
    """
    norm_err, norm_tol = -1.0, 1.0
    id_err, id_tol = -1.0, 1.0
    rows = []
    for k, sigma, gamma, T in SETTINGS:
        prob = _problem(k, sigma, gamma)
        for depth in (0, 1):
            if depth == 0 and T * prob.alpha1 >= prob.beta1 + gamma:
                continue
            law = law_factory(prob, T, depth)
            if law.collapsed:
                continue
            z0, e0 = _quad_moment(law, 0)
            m1, e1 = _quad_moment(law, 1)
            m2, e2 = _quad_moment(law, 2)
            t_err = abs(z0 - 1.0)
            t_tol = 10.0 * e0 + 10.0 * law.table_error + roundoff_tolerance(1.0, 100)
            if t_err / t_tol > norm_err / norm_tol:
                norm_err, norm_tol = t_err, t_tol
            if depth == 0:
                b1 = prob.beta1 + gamma
                resid = max(abs(m1 / z0 - prob.beta2 / b1), abs(m2 / z0 - (m1 / z0) ** 2 - variance_depth0(T, prob)))
                scale = max(1.0, abs(m2))
            else:
                b2 = prob.beta2 - gamma
                eg = prob.alpha1 * m2 - 2 * prob.alpha2 * m1 + prob.alpha3 * z0
                resid = abs(prob.beta1 * m1 - b2 * z0 + T * eg)
                scale = max(1.0, abs(prob.beta1 * m1) + abs(T * prob.alpha1 * m2))
            r_tol = 10.0 * (e0 + e1 + e2) * scale + 10.0 * law.table_error * scale + roundoff_tolerance(scale, 100)
            rows.append({"k": k, "sigma": sigma, "gamma": gamma, "T": T, "depth": depth, "integral": z0,
                         "identity_residual": resid})
            if resid / r_tol > id_err / id_tol:
                id_err, id_tol = resid, r_tol
    src = "10× scipy quad abserr + 10× Richardson estimate of the table's Simpson error + round-off"
    return [
        make_result("stationary.normalisation", "The normalised closed forms (L = 0, 1) integrate to 1 (scipy quad)",
                    norm_err, norm_tol, src, details={"rows": rows}),
        make_result("stationary.moment_identities",
                    "L = 0: E v = β₂/β₁', Var v = Tg(Ev)/(β₁'−Tα₁); L = 1: β₁E v − β₂' + T E g(v) = 0",
                    id_err, id_tol, src + " (propagated through the identity)", details={"rows": rows}),
    ]


# ============================================================================ histograms (GOF)
def gof_against_law(law, depth: int, problem: DiagonalNetProblem, temperature: float, *, n_chains: int,
                    dt: float, relax_times: float = 3.0, seed: int = 0, scheme: str = "weak2") -> dict:
    """KS goodness of fit of SDE chains to ``law``, with a threshold from n and the dt-error.

    Chains start from exact draws of ``law`` and run for ``relax_times/λ₁`` (λ₁ from
    :func:`relaxation_rate`): if ``law`` is stationary for the SDE the sample stays distributed as
    ``law`` (no burn-in error), otherwise it relaxes towards the SDE's true law and the KS
    distance exposes the difference. Threshold = :func:`~symsgd_core.core.stats.ks_threshold` for ``n_chains``
    i.i.d. samples (one per chain) + ``sup|F̂_dt − F̂_dt/2|`` of the coupled runs (an upper bound
    on the dt/2 run's bias if the scheme's error at least halves with dt).
    """
    lam = relaxation_rate(problem, temperature, depth)
    t_end = relax_times / lam
    v0 = law.sample(n_chains, seed=tagged_stream(seed, 17))
    fine, coarse = simulate_v_coupled(problem, temperature, depth, n_chains=n_chains, t_end=t_end, dt=dt, v0=v0,
                                      scheme=scheme, seed=seed)
    ks = float(stats.kstest(fine.final, law.cdf).statistic)
    ks_crit = ks_threshold(n_chains)
    disc = float(stats.ks_2samp(fine.final, coarse.final).statistic)
    ks_coarse = float(stats.kstest(coarse.final, law.cdf).statistic)
    return {"ks": ks, "ks_crit": ks_crit, "disc": disc, "tolerance": ks_crit + disc, "ks_coarse": ks_coarse,
            "lambda1": lam, "t_end": t_end, "n_chains": n_chains, "dt_fine": fine.dt, "dt_coarse": coarse.dt,
            "substeps": fine.substeps, "non_finite": fine.non_finite + coarse.non_finite,
            "fine": fine, "coarse": coarse}


def _gof_result(name, claim, out):
    details = {k: v for k, v in out.items() if k not in ("fine", "coarse")}
    ok = out["non_finite"] == 0
    return make_result(name, claim, out["ks"] if ok else float("nan"), out["tolerance"],
                       f"KS {1 - KS_ALPHA:.4f}-quantile for n = {out['n_chains']} chains (one sample each) "
                       f"+ sup|F_dt − F_dt/2| of coupled runs (dt = {out['dt_coarse']:g})", details=details)


@register("stationary.histogram_depth0")
def check_histogram_depth0(seed: int = 0, law=None, n_chains: int = 4000, dt: float = 0.02) -> object:
    """SDE samples of linear regression (D = 0) at T = 0.25 follow Eq. 12 (KS test)."""
    prob, T = _problem(1.0, 1.0, 0.0), 0.25
    law = StationaryLaw(prob, T, 0) if law is None else law
    out = gof_against_law(law, 0, prob, T, n_chains=n_chains, dt=dt, seed=seed)
    return _gof_result("stationary.histogram_depth0", "L = 0 SDE chains at T=0.25 (k=σ=1) are distributed as Eq. 12",
                       out)


@register("stationary.histogram_depth1")
def check_histogram_depth1(seed: int = 0, law=None, n_chains: int = 4000, dt: float = 0.02) -> object:
    """SDE samples of the two-layer diagonal net (D = 1) with weight decay follow Eq. 15 (KS test)."""
    prob, T = _problem(1.0, 1.0, 0.1), 0.12
    law = StationaryLaw(prob, T, 1) if law is None else law
    out = gof_against_law(law, 1, prob, T, n_chains=n_chains, dt=dt, seed=seed)
    return _gof_result("stationary.histogram_depth1",
                       "L = 1 SDE chains at T=0.12, γ=0.1 (k=σ=1) are distributed as Eq. 15 with weight decay", out)


@register("stationary.histogram_depth2")
def check_histogram_depth2(seed: int = 0, law=None, n_chains: int = 3000, dt: float = 0.02) -> object:
    """SDE samples of the depth-2 net (width 1) follow the Fokker–Planck solution (KS test)."""
    prob, T = _problem(1.0, 1.0, 0.0), 0.15
    law = StationaryLaw(prob, T, 2) if law is None else law
    out = gof_against_law(law, 2, prob, T, n_chains=n_chains, dt=dt, seed=seed)
    return _gof_result("stationary.histogram_depth2",
                       "L = 2 SDE chains at T=0.15 (k=σ=1) follow the numerically integrated stationary law", out)


# ============================================================================ collapse at T_c
def log_v_slope(problem, temperature, depth=1, *, v0, t_start=0.0, t_end=1.0, n_chains=2000, dt=0.01,
                n_records=10, seed=0):
    """Mean drift of ``log|v|`` over ``[t_start, t_end]`` for chains started at ``v0``, and its error budget.

    Where |v| is small the s = log|v| dynamics is Brownian motion with a constant drift μ₀, so
    Euler–Maruyama is exact there. Returns ``(slope, stderr, nonlinearity)``: the standard error
    of the mean of per-chain slopes (independent chains), and the mean over chains and records of
    ``4(β₁ + T(2α₁|v| + 2|α₂|))·|v|``, which bounds ``|drift(v) − μ₀|`` (depth 1).
    """
    run = simulate_v(problem, temperature, depth, n_chains=n_chains, t_end=t_end, dt=dt, v0=v0, scheme="euler",
                     n_records=n_records, seed=seed)
    keep = run.times >= t_start - 1e-12
    if t_start > 0:
        s0, t0 = np.log(np.abs(run.v[keep][0])), run.times[keep][0]
    else:
        s0, t0 = np.full(n_chains, math.log(abs(v0))), 0.0
    slopes = (np.log(np.abs(run.final)) - s0) / (run.times[-1] - t0)
    av = np.abs(run.v[keep])
    nonlin = 4.0 * (problem.beta1 + temperature * (2 * problem.alpha1 * av + 2 * abs(problem.alpha2))) * av
    return (float(slopes.mean()), float(slopes.std(ddof=1) / math.sqrt(n_chains)),
            float(nonlin.mean() + Z_MC * nonlin.std() / math.sqrt(nonlin.size)))


@register("stationary.collapse_at_Tc")
def check_collapse(seed: int = 0, tc_formula=critical_temperature, n_chains: int = 2000) -> object:
    """Depth 1 with weight decay: v = 0 attracts for T above T_c = (β₂ − γ)/α₃ and repels below it.

    Near v = 0 the s = log v dynamics is Brownian motion with drift ``μ₀ = 4(β₂ − γ − Tα₃)``: 0 is
    absorbing (the law collapses to δ(v)) iff μ₀ < 0. Chains started at v = 1e-12 at T = 1.2·T_c
    and 0.8·T_c must drift down and up, each by more than Z_MC = 4 standard errors. With γ = 0.2 the
    two temperatures straddle T_c(γ) = 0.267, while both lie below T_c(γ = 0) = 1/3, so the check
    also tests the weight-decay shift. Measured: the smaller of the two signed z-scores.
    """
    prob = _problem(1.0, 1.0, 0.2)
    tc = tc_formula(prob)
    rows, zs = [], []
    for factor, sign in ((1.2, -1.0), (0.8, 1.0)):
        T = factor * tc
        slope, se, bias = log_v_slope(prob, T, 1, v0=1e-12, t_end=1.0, n_chains=n_chains, seed=seed)
        mu0 = 4.0 * (prob.beta2 - prob.weight_decay - T * prob.alpha3)
        zs.append(sign * slope / (se + bias / Z_MC))
        rows.append({"T": T, "T_over_Tc": factor, "slope": slope, "stderr": se, "mu0_theory": mu0,
                     "agreement_z": abs(slope - mu0) / (se + bias / Z_MC)})
    # a full-dynamics illustration: from v = 1 above T_c, v heads to 0
    above = simulate_v(prob, 1.2 * tc, 1, n_chains=500, t_end=20.0, dt=0.02, v0=1.0, scheme="weak2", seed=seed)
    frac = float(np.mean(above.final < 1e-3))
    return make_result("stationary.collapse_at_Tc",
                       "L = 1, γ=0.2: log v drifts to −∞ at T = 1.2 × critical T and away from 0 at 0.8 × critical T, "
                       "critical T = (β₂−γ)/α₃",
                       min(zs), Z_MC, f"each drift must differ from 0 by ≥ {Z_MC:g} standard errors of the mean "
                       f"over {n_chains} independent chains (+ nonlinearity bound)", relation=">=",
                       details={"T_c": tc, "rows": rows, "fraction_below_1e-3_from_v0=1_at_t=20": frac})


# ============================================================================ fluctuation inversion
@register("stationary.fluctuation_inversion")
def check_fluctuation_inversion(seed: int = 0, law_factory=StationaryLaw, n_temps: int = 40) -> list:
    """Var[v] rises monotonically with T for D = 0 but is non-monotonic for D = 1 (→ 0 at T_c).

    Variances from the normalised closed forms; the margin is compared with the numerical error
    of the variances (Richardson estimate of the table error, times the second moment).
    """
    prob = _problem(1.0, 1.0, 0.0)
    tc = critical_temperature(prob)
    temps1 = np.linspace(0.02, 0.99, n_temps) * tc
    var1 = np.array([law_factory(prob, T, 1).variance for T in temps1])
    errs1 = np.array([law_factory(prob, T, 1).table_error for T in temps1]) * np.maximum(var1, 1.0)
    temps0 = np.linspace(0.02, 0.45, n_temps)
    var0 = np.array([law_factory(prob, T, 0).variance for T in temps0])
    errs0 = np.array([law_factory(prob, T, 0).table_error for T in temps0]) * np.maximum(var0, 1.0)
    inc0 = np.diff(var0)
    tol0 = 2.0 * float(errs0.max()) + roundoff_tolerance(float(var0.max()), 100)
    i_peak = int(np.argmax(var1))
    drop = float(var1[i_peak] - var1[-1])
    rise = float(var1[i_peak] - var1[0])
    tol1 = 2.0 * float(errs1.max()) + roundoff_tolerance(float(var1.max()), 100)
    return [
        make_result("stationary.variance_monotone_depth0", "L = 0: Var[v] increases with T (T/(1−2T) at k=σ=1)",
                    float(inc0.min()), -tol0, "numerical error of the tabulated variances (Richardson) + round-off",
                    relation=">=", details={"T": temps0.tolist(), "var": var0.tolist()}),
        make_result("stationary.variance_inversion_depth1",
                    "L = 1: Var[v] rises then falls towards 0 as T → critical T (fluctuation inversion)",
                    min(drop, rise), 10.0 * tol1, "10× the numerical error of the tabulated variances",
                    relation=">=", details={"T": temps1.tolist(), "var": var1.tolist(), "T_peak": float(temps1[i_peak]),
                                            "var_peak": float(var1[i_peak]), "var_at_0.99Tc": float(var1[-1])}),
    ]


# ============================================================================ most likely value
@register("stationary.most_likely_value")
def check_most_likely_value(seed: int = 0, root_formula=most_likely_value_depth1,
                            log_density1=log_density_depth1) -> list:
    """The positive root of ``7α₁Tv² + (β₁ − 10α₂T)v − (β₂' − 3α₃T) = 0`` is the maximum of Eq. 15.

    Measured: ``|d log p/dv|`` at the root (complex step, round-off), relative to the terms it
    sums; and ``max_grid log p − log p(root)`` over 40 001 points (≤ round-off iff global max).
    Also: the D = 0 mode ``(β₂ + 2α₂T)/(β₁' + 2α₁T)`` and the limit ``β₂'/β₁`` as T → 0.
    """
    worst_d, worst_dtol = -1.0, 1.0
    worst_x, worst_xtol = -math.inf, 1.0
    rows = []
    for k, sigma, gamma, T in SETTINGS + ((1.0, 1.0, 0.0, 1e-4),):
        prob = _problem(k, sigma, gamma)
        if T >= critical_temperature(prob) / 3.0:
            continue
        for depth, root_f, logp in ((1, root_formula, log_density1), (0, most_likely_value_depth0, log_density_depth0)):
            r = float(root_f(T, prob))
            h = 1e-30
            d = abs(float(np.imag(logp(np.array([r + 1j * h]), T, prob))[0] / h))
            a, b2, db2 = v_space_coefficients(np.array([r]), prob, T, depth)
            scale = float(abs(2 * a[0] / b2[0]) + abs(db2[0] / b2[0]) + 1.0 / (T * max(r, 1e-12)))
            dtol = roundoff_tolerance(scale, 8)
            # global maximum: no point of a fine grid may have a larger closed-form log density
            lo = 1e-9 if depth == 1 else -20.0
            grid = np.linspace(lo, 20.0, 40001)
            vals = np.real(logp(grid, T, prob))
            at_root = float(np.real(logp(np.array([r]), T, prob))[0])
            gap = float(vals.max() - at_root)
            xtol = roundoff_tolerance(max(abs(at_root), float(np.abs(vals).max()), 1.0), 8)
            rows.append({"k": k, "sigma": sigma, "gamma": gamma, "T": T, "depth": depth, "root": r,
                         "grid_max_minus_root": gap, "dlogp_at_root": d})
            if d / dtol > worst_d / worst_dtol:
                worst_d, worst_dtol = d, dtol
            if gap / xtol > worst_x / worst_xtol:
                worst_x, worst_xtol = gap, xtol
    prob = _problem(1.0, 1.0, 0.0)
    limit_gap = abs(root_formula(1e-9, prob) - prob.beta2 / prob.beta1)
    return [
        make_result("stationary.most_likely_root", "d log p/dv = 0 at the root of 7α₁Tv² + (β₁−10α₂T)v − (β₂'−3α₃T) "
                    "(L = 1) and at (β₂+2α₂T)/(β₁'+2α₁T) (L = 0)", worst_d, worst_dtol,
                    "float64 round-off of the summed terms (complex-step derivative)", details={"rows": rows}),
        make_result("stationary.most_likely_is_global_max", "no grid point beats the root's log density: it is the "
                    f"global max (and → β₂/β₁ as T → 0: gap {limit_gap:.2e} at T = 1e-9)", worst_x,
                    worst_xtol, "float64 round-off of log p (a grid point may exceed the max only by round-off)",
                    details={"rows": rows, "T_to_0_gap": limit_gap}),
    ]


# ============================================================================ wrong sign
@register("stationary.wrong_sign")
def check_wrong_sign(seed: int = 0, depth0_law=None, collapse_rate=None, n_chains: int = 2000) -> list:
    """Started with the wrong sign (u = −w), a depth-1 net ends at v = 0; linear regression (D = 0) does not.

    D = 1: on the negative branch ``log|v|`` drifts to −∞ at the rate ``4(β₂ + γ + Tα₃)`` once
    |v| is small (measured over t ∈ [5, 10] of runs from v = −1). D = 0: chains from v = −1 end
    with the closed-form mass ``P(v < 0) > 0`` on the wrong sign (binomial error + dt error).
    """
    prob, T = _problem(1.0, 1.0, 0.0), 0.15
    rate = (lambda p, t: 4.0 * (p.beta2 + p.weight_decay + t * p.alpha3)) if collapse_rate is None else collapse_rate
    # D = 1 from v = −1: slope of log|v| over [5, 10], when every chain is already small
    slope, se, bias = log_v_slope(prob, T, 1, v0=-1.0, t_start=5.0, t_end=10.0, n_chains=n_chains, n_records=20,
                                  seed=seed)
    predicted = -float(rate(prob, T))
    res1 = make_result("stationary.wrong_sign_depth1",
                       "L = 1 from u = −w (v = −1): log|v| → −∞ at rate 4(β₂+γ+Tα₃): the wrong sign is never learned",
                       abs(slope - predicted), mc_tolerance(se, Z_MC) + bias,
                       f"{Z_MC:g} standard errors of the mean slope over {n_chains} chains + nonlinearity bound",
                       details={"slope": slope, "predicted": predicted, "stderr": se, "nonlinearity": bias})
    # D = 0 from v = −1: wrong-sign mass
    law0 = StationaryLaw(prob, T, 0) if depth0_law is None else depth0_law
    lam = relaxation_rate(prob, T, 0)
    fine, coarse = simulate_v_coupled(prob, T, 0, n_chains=n_chains, t_end=8.0 / lam, dt=0.02, v0=-1.0, seed=seed)
    p_theory = float(law0.cdf(np.array([0.0]))[0])
    p_fine, p_coarse = float(np.mean(fine.final < 0)), float(np.mean(coarse.final < 0))
    se0 = math.sqrt(max(p_theory * (1 - p_theory), 1.0 / n_chains) / n_chains)
    # burn-in from a point start: distance to stationarity decays as e^{−λ₁t} (prefactor taken as 1)
    burn = math.exp(-lam * fine.times[-1])
    res0 = make_result("stationary.wrong_sign_depth0",
                       f"L = 0 from v = −1: P(v < 0) matches Eq. 12's {p_theory:.4f} > 0 (linear regression keeps the "
                       "wrong sign)", abs(p_fine - p_theory), mc_tolerance(se0, Z_MC) + abs(p_fine - p_coarse) + burn,
                       f"{Z_MC:g} binomial standard errors (n = {n_chains}) + |P_dt − P_dt/2| "
                       "+ exp(−κt) burn-in (t = 8/κ)",
                       details={"p_sim": p_fine, "p_sim_coarse": p_coarse, "p_theory": p_theory, "lambda1": lam})
    return [res1, res0]


# ============================================================================ tails and T* (E7, E12)
def check_tail_exponent(seed: int = 0, exponent=tail_exponent, depths=(1, 2, 4), temperatures=(0.05, 0.15, 0.3),
                        v_far: float = 1e3) -> list:
    """The tail exponent of ``p(v) ~ v^ρ`` is ``−5 + 3/(L+1)`` **for depth L ≥ 1 only**, whatever T is; at L = 0
    it is ``−2 − β₁'/(α₁T)`` and depends on T (k = σ = 1).

    Rows: (1) ``stationary.tail_depth_ge1``: at every depth in ``depths`` (each ≥ 1) and every temperature, the
    local log–log slope of the law at ``v_far`` equals ``exponent(L)`` within its Richardson error bound
    (:meth:`StationaryLaw.tail_slope`; measured: the worst |slope − ρ|/bound); (2) ``stationary.tail_depth0``:
    at L = 0 the slope matches ``exponent(0, T, problem)`` at each T (same bound) and (3)
    ``stationary.tail_depth0_moves``: differs between the lowest and the highest T by more than both bounds —
    "independent of T" is false at depth 0 (measured: the gap in units of the summed bounds, must reach 1).
    ``exponent`` is the formula tested (inject a wrong one to see the check fail).
    """
    prob = _problem(1.0, 1.0, 0.0)
    if any(int(D) < 1 for D in depths):
        raise ValueError(f"depths must all be >= 1 (depth 0 is row 2), got {depths}")
    worst, rows = 0.0, []
    for D in depths:
        for T in temperatures:
            slope, bound = StationaryLaw(prob, T, int(D)).tail_slope(v_far)
            err = abs(slope - float(exponent(int(D)))) / bound
            rows.append({"depth": int(D), "T": T, "slope": slope, "bound": bound})
            worst = max(worst, err)
    worst0, rows0 = 0.0, []
    for T in temperatures:
        slope, bound = StationaryLaw(prob, T, 0).tail_slope(v_far)
        rows0.append({"T": T, "slope": slope, "bound": bound, "rho": float(exponent(0, T, prob))})
        worst0 = max(worst0, abs(slope - rows0[-1]["rho"]) / bound)
    lo, hi = rows0[0], rows0[-1]
    moves = abs(lo["slope"] - hi["slope"]) / (lo["bound"] + hi["bound"])
    src = f"the Richardson bound on the local slope at v = {v_far:g} (measured in units of it)"
    return [
        make_result("stationary.tail_depth_ge1",
                    f"depth L ≥ 1 (L = {', '.join(str(int(D)) for D in depths)}): p(v) ~ v to the power −5 + 3/(L+1) "
                    "at every "
                    f"T = {', '.join(f'{T:g}' for T in temperatures)} — the exponent does not depend on T",
                    worst, 1.0, src, details={"rows": rows}),
        make_result("stationary.tail_depth0",
                    "depth 0 (linear regression): p(v) ~ v to the power −2 − β₁'/(α₁T) at each T", worst0, 1.0, src,
                    details={"rows": rows0}),
        make_result("stationary.tail_depth0_moves",
                    f"… so at depth 0 the exponent moves with T ({lo['slope']:.3g} at T = {lo['T']:g}, "
                    f"{hi['slope']:.3g} at T = {hi['T']:g}): 'independent of T' holds for L ≥ 1 only",
                    moves, 1.0, "the gap must exceed the sum of the two Richardson bounds", relation=">=",
                    details={"rows": rows0}),
    ]


def check_transitional_temperature(seed: int = 0, formula=transitional_temperature,
                                   paper_formula=paper_transitional_temperature) -> list:
    """Where the notebook's ``T*`` departs from the paper's closed form, and why (k = 1).

    Rows: (1) ``stationary.tstar_agrees``: at σ = 1 both give the same ``T*`` (≈ 0.2016; round-off of the
    quadratic formula); (2) ``stationary.tstar_paper_above_tc``: at σ = 0.7 the paper's root lies above
    ``T_c`` — a phase boundary where no density exists (measured: paper − T_c, must be > 0);
    (3) ``stationary.tstar_inside``: the notebook's ``T*`` lies in ``[T_c/3, T_c]`` at every σ of a grid
    (measured: the largest violation, must be ≤ round-off).
    """
    p1, p07 = _problem(1.0, 1.0, 0.0), _problem(1.0, 0.7, 0.0)
    a1, b1 = float(formula(p1)), float(paper_formula(p1))
    tc07, b07, a07 = critical_temperature(p07), float(paper_formula(p07)), float(formula(p07))
    worst = 0.0
    for sigma in np.linspace(0.3, 3.0, 28):
        p = _problem(1.0, float(sigma), 0.0)
        tc, ts = critical_temperature(p), float(formula(p))
        worst = max(worst, tc / 3 - ts, ts - tc, 0.0 if math.isfinite(ts) else math.inf)
    details = {"sigma1": {"notebook": a1, "paper": b1, "T_c": critical_temperature(p1)},
               "sigma0.7": {"notebook": a07, "paper": b07, "T_c": tc07}}
    tol = roundoff_tolerance(1.0, 16)
    return [
        make_result("stationary.tstar_agrees", f"k = σ = 1: the notebook's T* = {a1:.4f} equals the paper's "
                    f"closed form {b1:.4f}", abs(a1 - b1), tol, "float64 round-off of the quadratic formula",
                    details=details),
        make_result("stationary.tstar_paper_above_tc",
                    f"k = 1, σ = 0.7: the paper's closed form gives T* = {b07:.3f} > critical T = {tc07:.4f}, where no "
                    f"density exists; the notebook's T* = {a07:.4f} stays in [critical T/3, critical T]",
                    b07 - tc07, tol, "strictly above the critical T, by more than round-off (measured: paper's T* − "
                                     "critical T)",
                    relation=">=",
                    details=details),
        make_result("stationary.tstar_inside", "the notebook's T* lies in [critical T/3, critical T] for every σ in "
                                               "[0.3, 3]",
                    worst, tol, "float64 round-off", details=details),
    ]


def check_spread_sqrt_t(seed: int = 0, *, temperatures: Sequence[float] = (0.0025, 0.005, 0.01, 0.02),
                        runs: int = 3000, t_end: float = 3.0, exponent: float | None = None) -> list[CheckResult]:
    """The spread of ``u²`` across SGD runs grows like ``√T`` (notebook 01, §3): the fitted exponent.

    It lives here, with the law that predicts it: the stationary topic builds on the balance topic's SGD, never the
    reverse.

    Runs start at the balanced point ``(1, 1)`` of :data:`~symsgd_core.balance.experiments.SCALAR_DATA`, where
    ``G = 0`` stays 0 exactly (one step multiplies it by ``1 − η²ḡ_B²``), so ``u² = |v|``; duration ``t_end``
    (several relaxation times ``1/(4β₂)``). Measured: the least-squares slope ``p`` of ``log sd(u²)`` against
    ``log T``, extrapolated to ``η → 0`` à la Richardson from batch sizes ``S = 1`` (``η = T``) and ``S = 2``
    (``η = 2T``, same ``T``): SGD's variance carries an ``O(η)`` discretisation bias, so
    ``p₀ = 2p(S=1) − p(S=2)``. Prediction: the slope of ``log sd(v)`` of the depth-1 stationary law (Eq. 15,
    :class:`~.laws.StationaryLaw`) at the same temperatures — ``1/2`` up to its ``O(T)``
    curvature (``exponent`` overrides it, e.g. to inject a wrong law). Tolerance: ``z = 4`` standard errors
    of ``p₀``: ``SE(p) = 1/(sqrt(2(R − 1))·sqrt(Σ(log T − mean)²))`` per batch size (``SE(log sd)`` of ``R``
    Gaussian-like values), ``SE(p₀) = sqrt(5)·SE(p)``.
    """
    temps = np.array([check_positive("temperature", T) for T in temperatures], dtype=float)
    if temps.size < 2 or np.unique(temps).size != temps.size:
        raise ValueError(f"need at least two distinct temperatures, got {temperatures}")
    R = check_positive_int("runs", runs)
    if R < 2:
        raise ValueError("runs must be >= 2 (a spread across runs)")
    rng = stream(seed)
    x = np.log(temps)
    sxx = float(np.sum((x - x.mean()) ** 2))

    def slope_of(y):
        return float(np.sum((x - x.mean()) * (y - y.mean())) / sxx)

    sd = {}
    for S in (1, 2):
        sd[S] = []
        for T in temps:
            lr = float(T) * S
            traj = run_sgd(ScalarModel(), np.array([1.0, 1.0]), SCALAR_DATA, lr=lr, steps=steps_for_time(lr, t_end),
                           batch_size=S, runs=R, record_every=10**9, seed=int(rng.integers(2**31)))
            sd[S].append(float(np.std(traj.theta[-1][:, 0] ** 2, ddof=1)))
    p1, p2 = slope_of(np.log(sd[1])), slope_of(np.log(sd[2]))
    slope = 2.0 * p1 - p2
    if exponent is None:
        prob = DiagonalNetProblem.gaussian(k=SCALAR_DATA.k, sigma=SCALAR_DATA.sigma)
        predicted = slope_of(np.log([np.sqrt(StationaryLaw(prob, float(T), 1).variance) for T in temps]))
    else:
        predicted = float(exponent)
    se = np.sqrt(5.0) / np.sqrt(2.0 * (R - 1)) / np.sqrt(sxx)
    return [make_result(
        "balance.spread.sqrt_T",
        f"sd(u²) across SGD runs grows like Tᵖ with p = {predicted:.3f} (√T up to the stationary law's "
        f"curvature): fitted p = {slope:.3f} (S = 1: {p1:.3f}, S = 2: {p2:.3f}, extrapolated to η → 0) over "
        f"T = {', '.join(f'{T:g}' for T in temps)}",
        abs(slope - predicted), mc_tolerance(se, Z_MC),
        f"z = {Z_MC:g} standard errors of the extrapolated slope 2p(S=1) − p(S=2) ({R} runs per T and S)",
        details={"temperatures": temps.tolist(), "sd_u_sq": sd[1], "sd_u_sq_S2": sd[2], "slope": slope,
                 "slope_S1": p1, "slope_S2": p2, "predicted": predicted, "slope_se": float(se)}),
    ]
