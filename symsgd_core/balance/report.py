"""Notebook 01's printed tables: one function per table, each a :class:`~symsgd_core.core.report.Report` (its text
lines and the claims the cell asserts). The text is the notebook's, character for character."""

from __future__ import annotations

import inspect

import numpy as np

from ..core.report import Report
from .checks import check_corollary_decay, check_one_zero_eigenvalue, check_relu_teacher_ratio, check_relu_transient
from .data import Moments
from .experiments import ITO_MODELS, EnsembleResult, ReLUBalanceRun, ito_point
from .law import corollary_rate

__all__ = ["WITHIN_ONE", "corollary_weight_decay", "ensemble_report", "ito_spectra_report", "relu_run_report"]

#: "Within 10 % of 1": a trace ratio r with |log r| below this (the shipped ReLU run's first balanced record).
WITHIN_ONE = 0.1


def ito_spectra_report(models=ITO_MODELS) -> Report:
    """The eigenvalues of ``C`` at the default point of each of ``models`` (:func:`~.experiments.ito_point`), and
    the claim that exactly one of them is zero (:func:`~.checks.check_one_zero_eigenvalue`), per model."""
    if not models:
        raise ValueError("no model given")
    text, claims = [], []
    for model in models:
        pt = ito_point(model)
        text.append(f"{model}: eigenvalues of C = {np.array2string(pt.eigenvalues, precision=3)}")
        claims += check_one_zero_eigenvalue(pt.eigenvalues, pt.theta.size, model)
    return Report(text, claims)


def corollary_weight_decay() -> float:
    """γ of the weight-decay claim of Corollary 3.3 (the default of :func:`~.checks.check_corollary_decay`)."""
    return float(inspect.signature(check_corollary_decay).parameters["weight_decay"].default)


def ensemble_report(result: EnsembleResult, moments: Moments) -> Report:
    """The ensemble figure's numbers (§3): its start, duration and seed; the spread of ``‖u‖²`` and ``G`` at the end
    with the mean ``G``, the ODE along each run and the bound; Corollary 3.3's rates at its temperature, without
    and with the weight decay of the claim (:func:`corollary_weight_decay`). ``moments``: the data's moments."""
    s, gamma, T = result, corollary_weight_decay(), result.temperature
    return Report([
        f"start (u, w) = {s.theta0}, duration t = {s.t_end:g}, seed {s.seed}",
        f"spread at t = {s.t_end:g}: std ‖u‖² = {s.spread_u['std'][-1]:.4g}, std G = {s.spread_G['std'][-1]:.4g}; "
        f"mean G = {s.spread_G['mean'][-1]:.4g}, ODE along each run = {s.G_ode.mean(axis=1)[-1]:.4g}, "
        f"bound = {s.bound[-1]:.4g}",
        f"Corollary 3.3 rates at T = {T:g}: 4TΔ/α₁ = {corollary_rate(T, moments):.4g} without weight decay, "
        f"4TΔ/α₁ + 4γ = {corollary_rate(T, moments, gamma):.4g} with γ = {gamma:g}",
    ], values={"weight_decay": gamma})


def relu_run_report(run: ReLUBalanceRun, teacher_seed: int = 0) -> Report:
    """The shipped paper-size ReLU run (§5): its settings, its trace ratio (at the start, when first within
    :data:`WITHIN_ONE` of 1) and norm ratio; that it is still transient at its end
    (:func:`~.checks.check_relu_transient`); and the per-neuron prediction on a ReLU net that is the teacher
    (:func:`~.checks.check_relu_teacher_ratio`, seed ``teacher_seed``; a few seconds)."""
    ratio = run.tr_cov_u / run.tr_cov_w
    close = np.abs(np.log(ratio)) < WITHIN_ONE
    if not close.any():
        raise ValueError(f"the run's trace ratio never comes within {WITHIN_ONE:.0%} of 1")
    k = int(np.argmax(close))
    transient = check_relu_transient(run)
    d = transient[0].details
    teacher = check_relu_teacher_ratio(teacher_seed)
    return Report([
        f"precomputed run: {run.settings}",
        f"trace ratio: {ratio[0]:.3g} at the start, first within 10 % of 1 at t = {run.times[k]:.3g} of "
        f"{run.times[-1]:.3g}; norm ratio ‖u‖²/‖w‖²: {run.u_sq[0] / run.w_sq[0]:.3g} at the start, "
        f"{run.u_sq[-1] / run.w_sq[-1]:.3g} at the end",
        f"end of the shipped run: loss {d['mean_loss_last_quarter']:.2f} (last quarter) vs noise floor d_out·σ² = "
        f"{d['floor']:g}; ‖W₁‖² still grows at {d['w_sq_slope']:.3f} ± {d['w_sq_slope_se']:.3f} per unit t; norm "
        f"ratio {d['norm_ratio_end']:.3f} now, per-neuron prediction at the teacher d_out/(d_in + 1) = "
        f"{d['teacher_ratio']:.3f}",
        f"at the teacher (20 → 40 → 20, computing y = x exactly): balanced ‖uᵢ‖²/‖wᵢ‖² = "
        f"{teacher[0].details['ratio']:.4f}, predicted d_out/(d_in + 1) = {teacher[0].details['predicted']:.4f}",
    ], [*transient, *teacher])
