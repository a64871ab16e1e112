"""Notebook 03's printed tables (and notebook 01's √T spread line): one function per table, each a
:class:`~symsgd_core.core.report.Report` (its text lines and the claims the cell asserts). The text is the
notebook's, character for character."""

from __future__ import annotations

import numpy as np

from ..core.report import Report
from .checks import (
    check_collapse,
    check_histogram_depth0,
    check_histogram_depth1,
    check_histogram_depth2,
    check_spread_sqrt_t,
    check_tail_exponent,
    check_transitional_temperature,
)
from .claims import bimodal_window, collapse_claims, discrete_scan_claims, integrator_claims, window_claims
from .experiments import DiscreteSGDScan, dt_convergence
from .laws import (
    CRITICAL_T,
    DiagonalNetProblem,
    StationaryLaw,
    critical_temperature,
    phase_of,
    tail_exponent,
    transitional_temperature,
)
from .v_sde import numpy_euler_s

__all__ = [
    "INTEGRATOR_STUDY",
    "PHASE_TEMPERATURES",
    "WINDOW_SIGMAS",
    "collapse_report",
    "discrete_scan_report",
    "histograms_report",
    "integrator_report",
    "phase_diagram_report",
    "phases_report",
    "spread_sqrt_t_report",
    "tails_report",
    "transitional_report",
    "windows_report",
]

#: The step-size study of §1: temperature, step sizes, chains per step size; and plain Euler–Maruyama in ρ = log v
#: without step control: chains, steps, step (t = 10).
INTEGRATOR_STUDY = dict(temperature=0.15, dts=(0.08, 0.04, 0.02), n_chains=3000, n_plain=2000, plain_steps=10_000,
                        plain_dt=1e-3)
#: The temperatures whose phase §2 prints.
PHASE_TEMPERATURES = (0.05, 0.15, 0.25, 0.4)
#: The label noises of §2's bimodal-window table (k = 1): σ = k/2, k, 2k, as :func:`~.claims.window_claims`.
WINDOW_SIGMAS = (0.5, 1.0, 2.0)
#: Where the stuck chains of plain Euler are counted: far below the window v < 0.05, and lost below 1e-30.
V_SMALL, V_STUCK, V_LOST = 0.05, 1e-5, 1e-30


def histograms_report(seed: int = 0) -> Report:
    """SDE chains against the closed forms at depths 0, 1, 2 (§1): each check's KS quantile, measured dt-error and
    run length in relaxation times; the three checks are the claims."""
    rows = [check(seed) for check in (check_histogram_depth0, check_histogram_depth1, check_histogram_depth2)]
    text = [f"{r.name}: KS quantile {r.details['ks_crit']:.4f} + dt-error {r.details['disc']:.4f}; "
            f"run length κ·t = {r.details['lambda1'] * r.details['t_end']:.1f}" for r in rows]
    return Report(text, rows)


def integrator_report(problem: DiagonalNetProblem, *, temperature: float = INTEGRATOR_STUDY["temperature"],
                      dts=INTEGRATOR_STUDY["dts"], n_chains: int = INTEGRATOR_STUDY["n_chains"],
                      n_plain: int = INTEGRATOR_STUDY["n_plain"], plain_steps: int = INTEGRATOR_STUDY["plain_steps"],
                      plain_dt: float = INTEGRATOR_STUDY["plain_dt"]) -> Report:
    """The step-size study at depth 1 (§1 fine print): coupled ``(dt, dt/2)`` ensembles of both schemes
    (:func:`~.experiments.dt_convergence`), and plain Euler–Maruyama in ρ = log v without step control
    (:func:`~.sde.numpy_euler_s`, ``n_plain`` chains of ``plain_steps`` steps of ``plain_dt`` from v = 1): its
    P(v < 0.05), the chains lost, and the share of its excess due to chains stuck below 1e-5. Claims:
    :func:`~.claims.integrator_claims`."""
    law = StationaryLaw(problem, temperature, 1)
    rows = dt_convergence(problem, temperature, 1, dts=tuple(dts), n_chains=n_chains)
    plain = numpy_euler_s(problem, temperature, n_chains=n_plain, n_steps=plain_steps, dt=plain_dt, v0=1.0)
    p_plain, p_law = float(np.mean(plain < V_SMALL)), rows[0].p_small_law
    p_deep, p_deep_law = float(np.mean(plain < V_STUCK)), float(law.cdf(np.array([V_STUCK]))[0])
    text = [f"noise scale 1/√n = {rows[0].ks_noise_scale:.4f};  closed form P(v < 0.05) = {p_law:.4f}"]
    text += [f"{r.scheme:>6}  dt = {r.dt:<5g} sup|F_dt − F_dt/2| = {r.sup_F_dt_minus_F_dt2:.4f}   "
             f"KS(dt/2 run, closed form) = {r.ks_fine_vs_law:.4f}   P(v < 0.05): {r.p_small_fine:.4f}" for r in rows]
    dt_text = f"{plain_dt:.0e}".replace("e-0", "e-")  # 1e-3, as the notebook writes it
    text += [f"plain Euler–Maruyama in ρ = log v, no step control, dt = {dt_text}, t = {plain_steps * plain_dt:g}: "
             f"P(v < 0.05) = {p_plain:.3f}; {int(np.sum(plain < V_LOST))} of {n_plain} chains lost below v = 1e-30",
             f"P(v < 1e-5): plain Euler {p_deep:.4f}, closed form {p_deep_law:.1e}: stuck chains make up "
             f"{(p_deep - p_deep_law) / (p_plain - p_law):.0%} of the excess in P(v < 0.05)"]
    return Report(text, integrator_claims(rows, n_chains, plain, law), {"rows": rows})


def phases_report(problem: DiagonalNetProblem, temperatures=PHASE_TEMPERATURES) -> Report:
    """The phase of the depth-1 law at each of ``temperatures`` (§2; :func:`~.laws.phase_of`)."""
    return Report([f"T = {T}: phase {phase_of(T, problem)!r}" for T in temperatures])


def windows_report(k: float = 1.0, sigmas=WINDOW_SIGMAS) -> Report:
    """``T_c/3``, ``T*``, ``T_c`` and the bimodal window at each label noise σ of ``sigmas`` (teacher ``k``), and
    the window's claims (:func:`~.claims.window_claims`: whole at σ = k/2, shrinking, below 1 % at σ = 2k)."""
    text = []
    for sigma in sigmas:
        p = DiagonalNetProblem.gaussian(k=k, sigma=sigma)
        tc, ts = critical_temperature(p), transitional_temperature(p)
        text.append(f"σ = {sigma}: {CRITICAL_T}/3 = {tc / 3:.3f}, T* = {ts:.3f}, {CRITICAL_T} = {tc:.3f}; "
                    f"bimodal window = {bimodal_window(p):.1%} of ({CRITICAL_T}/3, {CRITICAL_T})")
    return Report(text, window_claims(k, tuple(sigmas)))


def transitional_report() -> Report:
    """Where the notebook's ``T*`` departs from the paper's closed form (§2;
    :func:`~.checks.check_transitional_temperature`): both at k = σ = 1 and at σ = 0.7, with ``T_c`` there."""
    rows = check_transitional_temperature()
    d = rows[-1].details
    return Report([f"k = σ = 1: notebook {d['sigma1']['notebook']:.4f}, paper {d['sigma1']['paper']:.4f};  "
                   f"k = 1, σ = 0.7: notebook {d['sigma0.7']['notebook']:.4f}, paper {d['sigma0.7']['paper']:.3f}, "
                   f"{CRITICAL_T} = {d['sigma0.7']['T_c']:.4f}"], rows)


def collapse_report(problem: DiagonalNetProblem) -> Report:
    """The collapse check (§2; :func:`~.checks.check_collapse`): the drift of log v near 0 at each temperature
    against 4(β₂ − γ − Tα₃), the weight decay it uses and its ``T_c``; claims: the check and
    :func:`~.claims.collapse_claims` (both temperatures below ``T_c`` without γ)."""
    result = check_collapse()
    text = [f"    T = {row['T']:.3f} ({row['T_over_Tc']} × {CRITICAL_T}): drift of log v near 0 = {row['slope']:+.3f} "
            f"± {row['stderr']:.3f}, theory 4(β₂ − γ − Tα₃) = {row['mu0_theory']:+.3f}"
            for row in result.details["rows"]]
    gamma = problem.beta2 - problem.alpha3 * result.details["T_c"]
    text.append(f"weight decay in this check: γ = β₂ − α₃ × {CRITICAL_T} = {gamma:.3g}, so {CRITICAL_T} = "
                f"{result.details['T_c']:.4f} "
                f"instead of {critical_temperature(problem):.4f}")
    return Report(text, [result, *collapse_claims(result, problem)], {"weight_decay": gamma})


def tails_report(problem: DiagonalNetProblem, depth0_temperatures=(0.1, 0.3)) -> Report:
    """The tail exponents (§5; :func:`~.checks.check_tail_exponent`, its claims): the local slope at v = 1000 for
    the last three depth-≥1 rows against the prediction, and the depth-0 exponent at ``depth0_temperatures``."""
    rows = check_tail_exponent()
    text = [f"L = {row['depth']}, T = {row['T']}: local slope of log p at v = 1000 is {row['slope']:.4f}; predicted "
            f"{tail_exponent(row['depth']):g}, error bound {row['bound']:.1e} (Richardson in 1/v)"
            for row in rows[0].details["rows"][-3:]]
    text += [f"L = 0, T = {T}: exponent {tail_exponent(0, T, problem):.3f} — it depends on T"
             for T in depth0_temperatures]
    return Report(text, rows)


def discrete_scan_report(scan: DiscreteSGDScan) -> Report:
    """Plain SGD against the v-SDE over T (§6): per temperature the share of diverged runs and the KS distance of
    the survivors with its threshold; claims: :func:`~.claims.discrete_scan_claims`."""
    text = [f"T = {T:.2f}: plain SGD diverged in {div:5.1%} of runs; KS vs SDE {ks:.3f} (threshold {crit:.3f})"
            for T, div, ks, crit in zip(scan.T, scan.sgd_div, scan.sgd_ks, scan.sgd_crit, strict=True)]
    return Report(text, discrete_scan_claims(scan))


def spread_sqrt_t_report() -> Report:
    """The spread of u² across SGD runs against T (notebook 01, §3; :func:`~.checks.check_spread_sqrt_t`: 3000 runs
    at each of 4 temperatures and 2 batch sizes, about a second): the fitted exponent against its prediction."""
    rows = check_spread_sqrt_t()
    d = rows[0].details
    return Report(["sd(u²) at T = " + ", ".join(f"{T:g}: {s:.3f}" for T, s in zip(d["temperatures"], d["sd_u_sq"],
                                                                                    strict=True))
                   + f"  →  exponent {d['slope']:.3f} (prediction {d['predicted']:.3f}, √T = 0.5)"], rows)


def phase_diagram_report(problem: DiagonalNetProblem) -> Report:
    """§2's tables in order: the bimodal window against σ (:func:`windows_report`), where the notebook's ``T*``
    departs from the paper's (:func:`transitional_report`) and the collapse check (:func:`collapse_report`)."""
    return Report.join([windows_report(), transitional_report(), collapse_report(problem)])
