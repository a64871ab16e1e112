"""The claims Notebook 03 makes next to its tables, as checks of the numbers it printed.

Each function takes what the notebook computed (the step-size study, a plain Euler–Maruyama ensemble, the
collapse check, the discrete-SGD scan) and returns :class:`~symsgd_core.core.checking.CheckResult` rows, which the
notebook shows with ``assert_claims`` (one compact line, the table behind a click). Tolerances: binomial standard
errors at z = 4 (:func:`~symsgd_core.core.checking.mc_tolerance`), the KS thresholds the study measured, float64
round-off for closed forms, and exact counts. A claim with nothing to measure reports NaN and fails.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..core.checking import CheckResult, make_result, mc_tolerance, roundoff_tolerance
from ..core.stats import KS_ALPHA, ks_threshold
from .experiments import DiscreteSGDScan, DtRow
from .laws import (
    DiagonalNetProblem,
    StationaryLaw,
    critical_temperature,
    mode_onset_temperature,
    transitional_temperature,
)

__all__ = ["bimodal_window", "collapse_claims", "discrete_scan_claims", "integrator_claims", "window_claims"]

#: Chains below this v count as stuck far below the window ``v < v_small`` (the closed form has almost no mass).
V_STUCK = 1e-5


def _binomial_se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1.0 - p), 0.0) / n) if n > 0 else float("nan")


def integrator_claims(rows: Sequence[DtRow], n_chains: int, plain: np.ndarray, law: StationaryLaw,
                      v_small: float = 0.05) -> list[CheckResult]:
    """The step-size study and the bias of plain Euler–Maruyama (Notebook 03, §1).

    Args:
        rows: :func:`~.experiments.dt_convergence` rows, ``n_chains`` chains per step size.
        plain: ``(n,)`` final v of plain Euler–Maruyama in ρ = log v (no step control), started at the same law.
        law: the closed form the runs are compared with.
    Rows: plain EM's ``P(v < v_small)`` exceeds the closed form by more than z = 4 binomial standard errors; more
    than half of that excess is chains stuck below :data:`V_STUCK`; every order-2 run stays within the KS threshold
    plus its measured dt-error; every run's ``P(v < v_small)`` is within 4 standard errors plus its dt-error.
    """
    plain = np.asarray(plain, dtype=float)
    n = plain.size
    p_law = float(law.cdf(np.array([v_small]))[0])
    p_plain = float(np.mean(plain < v_small)) if n else float("nan")
    se = _binomial_se(p_law, n)
    excess = p_plain - p_law
    p_deep = float(np.mean(plain < V_STUCK)) if n else float("nan")
    p_deep_law = float(law.cdf(np.array([V_STUCK]))[0])
    out = [
        make_result("stationary.plain_euler_biased",
                    f"plain Euler–Maruyama in ρ = log v overstates P(v < {v_small:g}): {p_plain:.3f} against the "
                    f"closed form's {p_law:.3f}", excess / se, 4.0,
                    f"z = 4 binomial standard errors of the closed form's probability (n = {n} chains); measured "
                    "in standard errors", relation=">="),
        make_result("stationary.plain_euler_bias_is_stuck_chains",
                    f"most of that excess is chains stuck below v = {V_STUCK:g}, where the closed form has "
                    f"{p_deep_law:.1e} of the mass", (p_deep - p_deep_law) / excess if excess > 0 else float("nan"),
                    0.5, "the claim: more than half of the excess", relation=">="),
    ]
    crit = ks_threshold(n_chains)
    for r in rows:
        if r.scheme == "weak2":
            out.append(make_result(f"stationary.weak2_ks[dt={r.dt:g}]",
                                   f"the order-2 scheme at dt/2 = {r.dt / 2:g} follows the closed form",
                                   r.ks_fine_vs_law, crit + r.sup_F_dt_minus_F_dt2,
                                   f"KS quantile at level {KS_ALPHA:g} for n = {n_chains} + the measured dt-error "
                                   "sup|F_dt − F_dt/2|"))
    se_r = _binomial_se(p_law, n_chains)
    for r in rows:
        out.append(make_result(f"stationary.p_small[{r.scheme}, dt={r.dt:g}]",
                               f"{r.scheme} at dt/2 = {r.dt / 2:g}: P(v < {v_small:g}) agrees with the closed form",
                               abs(r.p_small_fine - p_law), mc_tolerance(se_r) + r.sup_F_dt_minus_F_dt2,
                               f"z = 4 binomial standard errors (n = {n_chains}) + the measured dt-error"))
    if not rows:
        out.append(make_result("stationary.dt_study", "the step-size study has rows", float("nan"), 0.0,
                               "nothing measured"))
    return out


def bimodal_window(problem: DiagonalNetProblem) -> float:
    """Where the depth-1 law is bimodal, ``(T* − T_c/3) / (T_c − T_c/3)``: the window as a fraction of the interval
    between the mode's onset and the collapse (1: bimodal all the way; 0: never)."""
    tc, onset = critical_temperature(problem), mode_onset_temperature(problem)
    return (transitional_temperature(problem) - onset) / (tc - onset)


def window_claims(k: float = 1.0, sigmas=(0.5, 1.0, 2.0)) -> list[CheckResult]:
    """The bimodal window against the label noise σ (Notebook 03, §2): the whole interval at σ = k/2, shrinking
    from σ = k to σ = 2k, below 1 % at σ = 2k. Closed forms: round-off tolerances."""
    w = {s: bimodal_window(DiagonalNetProblem.gaussian(k=k, sigma=s)) for s in sigmas}
    half, one, two = w[0.5 * k], w[1.0 * k], w[2.0 * k]
    return [
        make_result("stationary.window_whole_at_half_k", f"at σ = {0.5 * k:g} the law is bimodal on all of "
                    "(critical T/3, critical T)", abs(half - 1.0), roundoff_tolerance(1.0, n_terms=16),
                    "float64 round-off of the closed forms (16 terms)"),
        make_result("stationary.window_shrinks", f"the window shrinks from σ = {k:g} ({one:.1%}) to σ = {2 * k:g} "
                    f"({two:.2%})", one - two, roundoff_tolerance(1.0, n_terms=16),
                    "must exceed float64 round-off of the closed forms", relation=">="),
        make_result("stationary.window_small_at_2k", f"at σ = {2 * k:g} the window is below 1 % of (critical T/3, "
                                                     "critical T)",
                    two, 0.01, "the claim's own bound: 1 %"),
    ]


def collapse_claims(collapse: CheckResult, problem: DiagonalNetProblem) -> list[CheckResult]:
    """The collapse check's temperatures all lie below ``T_c`` of the problem *without* weight decay, so a T_c
    formula that forgot γ would put both on the same side and fail (exact count)."""
    rows = collapse.details.get("rows", [])
    tc0 = critical_temperature(problem)
    above = sum(row["T"] >= tc0 for row in rows) if rows else float("nan")
    return [make_result("stationary.collapse_tests_weight_decay",
                        f"both temperatures of the collapse check lie below the critical T at γ = 0, {tc0:.4f}",
                        above, 0,
                        "exact count of temperatures at or above the critical T at γ = 0")]


def discrete_scan_claims(scan: DiscreteSGDScan) -> list[CheckResult]:
    """Plain SGD against the v-SDE over T (Notebook 03, §6): divergences grow from the smallest to the largest T
    (z = 4 binomial standard errors, with a 1/n continuity term); at the smallest T the survivors follow the SDE
    (two-sample KS threshold); at the largest they do not."""
    n = scan.n_runs
    if not scan.T:
        return [make_result("stationary.discrete_scan", "the scan has temperatures", float("nan"), 0.0,
                            "nothing measured")]
    lo, hi = scan.sgd_div[0], scan.sgd_div[-1]
    se = math.sqrt((lo * (1 - lo) + hi * (1 - hi)) / n + 1 / n**2)
    return [
        make_result("stationary.divergences_grow_with_T",
                    f"plain SGD diverges more often at T = {scan.T[-1]:g} ({hi:.1%}) than at T = {scan.T[0]:g} "
                    f"({lo:.1%})", (hi - lo) / se, 4.0,
                    f"z = 4 standard errors of the difference of two binomial fractions (n = {n} each, + 1/n)",
                    relation=">="),
        make_result("stationary.sgd_follows_sde_at_small_T",
                    f"at T = {scan.T[0]:g} the surviving plain-SGD runs follow the v-SDE", scan.sgd_ks[0],
                    scan.sgd_crit[0], f"two-sample KS threshold at level {KS_ALPHA:g}"),
        make_result("stationary.sgd_leaves_sde_near_Tc",
                    f"at T = {scan.T[-1]:g}, near the critical T, the surviving plain-SGD runs no longer follow it",
                    scan.sgd_ks[-1], scan.sgd_crit[-1], f"two-sample KS threshold at level {KS_ALPHA:g}",
                    relation=">="),
    ]
