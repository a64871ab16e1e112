"""The claims behind each figure of Notebook 01, as checks of the experiments' results.

Each function takes the frozen result of one experiment of :mod:`symsgd_core.balance.experiments` and
returns the :class:`~symsgd_core.core.checking.CheckResult` rows the notebook asserts next to that figure
(the figures' ``claims()`` call them with the result they drew). The checks themselves are those of
:mod:`symsgd_core.balance.checks`, fed the experiment's own points, runs and data, plus the claims that only
make sense for a recorded run (:func:`noise_balance_check`, the one-step identity along a run). A claim
that measured nothing fails: it reports a NaN measurement, never a pass by default.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checking import CheckResult, make_result, mc_tolerance, roundoff_tolerance
from ..core.conventions import Z_MC
from ..core.validation import check_array, check_positive
from .checks import (
    Instance,
    check_conservation,
    check_corollary_decay,
    check_discrete_identity,
    check_g_is_ode,
    check_ito_terms,
    check_null_space,
    check_symmetry_per_sample,
)
from .data import GaussianData
from .experiments import (
    BalanceSeries,
    DiscreteBreakdownResult,
    EnsembleResult,
    ItoPoint,
    Rank1BalanceRun,
    ReLUBalanceRun,
    SymmetryOrbit,
    ThreeDynamicsResult,
)
from .models import ScalarModel, SymmetricModel
from .observables import _check_model, _theta_vector, discrete_step_factors
from .relu import ReLUNet

__all__ = [
    "RANK1_WINDOW", "TRACES_MET_FACTOR", "discrete_breakdown_claims", "ensemble_claims", "ito_claims",
    "noise_balance_check", "noise_vs_norm_claims", "orbit_invariance", "rank1_claims", "relu_balance_claims",
    "relu_claims", "symmetry_claims", "three_dynamics_claims", "traces_met",
]

#: Fraction of the rank-1 run (at its end) over which §5a's noise-balance claim averages.
RANK1_WINDOW = 0.5
#: The two noise traces "have met" when their ratio over the window is within this factor of 1: further apart, G is
#: still moving fast and a comparison of the norms would be premature (notebook 01 §5a says so).
TRACES_MET_FACTOR = 1.25


def traces_met(trace_ratio: float) -> bool:
    """Whether a window's noise-trace ratio ``Tr_u/Tr_w`` is within :data:`TRACES_MET_FACTOR` of 1."""
    return abs(math.log(trace_ratio)) <= math.log(TRACES_MET_FACTOR)

#: The value a claim reports when it had nothing to measure (it then fails).
NOTHING_MEASURED = float("nan")




def orbit_invariance(model: SymmetricModel, theta, x, y, lambdas) -> CheckResult:
    """Check that the per-sample loss is constant along the orbit ``(λu, w/λ)``.

    Args:
        model, theta, x, y: as in :func:`ito_terms` (``x``, ``y`` may be a single sample).
        lambdas: positive scale factors, shape ``(K,)``.
    Returns:
        A :class:`~symsgd_core.core.checking.CheckResult`: measured = ``max_{λ,n} |ℓ_n(λu, w/λ) − ℓ_n(u, w)|``,
        tolerance = float64 round-off of the loss (scale ``2(√max ℓ + 2 max‖y‖)²`` over the
        orbit, ``8`` rounded operations per evaluation). ``details`` holds ``loss`` (at λ = 1) and ``G``
        along the orbit.
    Raises:
        ValueError: bad arguments or a non-positive λ.
    """
    _check_model(model)
    th = _theta_vector(model, theta)
    lam = check_array("lambdas", lambdas, ndim=1)
    if lam.size == 0 or np.any(lam <= 0):
        raise ValueError("lambdas must be a non-empty array of values > 0")
    thetas = np.stack([model.rescale(th, float(s)) for s in lam])
    losses = model.per_sample_loss(thetas, x, y)  # (K, N)
    base = model.per_sample_loss(th[None, :], x, y)[0]
    measured = float(np.max(np.abs(losses - base[None, :])))
    y_arr = np.asarray(y, dtype=np.float64)
    y_max = (float(np.max(np.linalg.norm(y_arr.reshape(y_arr.shape[0], -1), axis=1))) if y_arr.ndim
             else abs(float(y_arr)))
    # ℓ = r², f = r + y: a relative error k·eps in f moves ℓ by ≤ 2|r|·k·eps·(|r| + 2|y|) ≤ 2k·eps·(√ℓ + 2|y|)².
    scale = 2.0 * (math.sqrt(float(np.max(losses))) + 2.0 * y_max) ** 2
    tol = roundoff_tolerance(scale, n_terms=8)
    G = model.G(thetas)
    return make_result(
        "balance.orbit_invariance", "ℓ(λu, w/λ, x) = ℓ(u, w, x) for every λ on the slider's orbit and every sample",
        measured, tol, "float64 round-off: 64 · 8 operations · eps · 2(√max ℓ + 2 max‖y‖)²",
        details={"loss": base.tolist(), "G_min": float(G.min()), "G_max": float(G.max())})




def noise_balance_check(times, G, tr_u, tr_w, grad_sq_u, grad_sq_w, lr: float, batch_size: int,
                        trace_se, window: float = 0.25, label: str = "") -> CheckResult:
    """Check the law of balance, averaged over the last ``window`` of a recorded SGD run.

    In expectation one SGD step changes ``G`` by exactly ``η²(‖∇_uL‖² − ‖∇_wL‖²) + (η²/S)(Tr_u − Tr_w)``
    (the ``O(η²)`` gradient term is discrete SGD's correction to the SDE). Per unit time ``t = η·steps``,
    averaged over the record intervals ``k → k+1`` of the window:

        e_k = (G_{k+1} − G_k)/Δt − η·avg(‖∇_uL‖² − ‖∇_wL‖²) − T·avg(Tr_u − Tr_w),   E e_k = 0,

    (``avg`` = trapezoid over the interval's two records). Measured: ``|mean e| / (T·mean Tr_w)``, the
    law's residual relative to the noise scale. Tolerance: ``4·SE(e)/(T·mean Tr_w)`` (SE = std/sqrt(n) of
    the interval values) plus ``4·se_diff/mean Tr_w`` for the evaluation set's sampling error of
    ``Tr_u − Tr_w`` (:func:`trace_standard_errors`).

    Args:
        times, G, tr_u, tr_w, grad_sq_u, grad_sq_w: ``(K,)`` series of one run at its records
            (``grad_sq_*`` = ``‖∇_uL‖²``, ``‖∇_wL‖²`` of the full evaluation-set gradient).
        lr, batch_size: ``η``, ``S``.
        trace_se: ``(se_u, se_w, se_diff)`` from :func:`trace_standard_errors`.
        window: fraction of the records (at the end) to use; at least 3 intervals are needed.
        label: appended to the check name.
    Returns:
        A :class:`CheckResult`; ``details`` has ``trace_ratio`` (mean Tr_u / mean Tr_w over the window),
        ``predicted_ratio`` (what the law predicts from ``G``'s drift and the gradient term),
        ``norm_terms``.
    Raises:
        ValueError: bad arrays or fewer than 3 intervals in the window.
    """
    t = check_array("times", times, ndim=1)
    arrs = [check_array(n, a, shape=t.shape) for n, a in
            (("G", G), ("tr_u", tr_u), ("tr_w", tr_w), ("grad_sq_u", grad_sq_u), ("grad_sq_w", grad_sq_w))]
    Gs, tu, tw, gu, gw = arrs
    eta = check_positive("lr", lr)
    S = int(batch_size)
    if S < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    T = eta / S
    first = int(math.floor((1.0 - check_positive("window", window)) * (t.size - 1)))
    k = np.arange(first, t.size - 1)
    if k.size < 3:
        raise ValueError(f"the window holds {k.size} record intervals; at least 3 are needed")
    dt = t[k + 1] - t[k]
    d = tu - tw
    dg = gu - gw
    e = (Gs[k + 1] - Gs[k]) / dt - eta * 0.5 * (dg[k] + dg[k + 1]) - T * 0.5 * (d[k] + d[k + 1])
    sl = slice(first, t.size)
    scale = T * float(np.mean(tw[sl]))
    se_e = float(e.std(ddof=1) / math.sqrt(e.size))
    se_diff = float(np.asarray(trace_se, dtype=float)[-1])
    tol = mc_tolerance(se_e) / scale + mc_tolerance(se_diff) / float(np.mean(tw[sl]))
    drift = float((Gs[-1] - Gs[first]) / (t[-1] - t[first]))
    pred_diff = (drift - eta * float(np.mean(dg[sl]))) / T
    name = "balance.noise_balance" + (f"[{label}]" if label else "")
    return make_result(
        name, "Averaged over the last part of the run, T·(Tr Cov∇_uℓ − Tr Cov∇_wℓ) = dG/dt − η(‖∇_uL‖² − ‖∇_wL‖²) "
        "(the law of balance with discrete SGD's O(η) term)",
        abs(float(e.mean())) / scale, tol,
        f"{Z_MC:g} standard errors of the per-interval residual (/(T·mean Tr_w)) + {Z_MC:g} standard errors of the "
        "evaluation set's estimate of Tr_u − Tr_w (/mean Tr_w)",
        details={"trace_ratio": float(np.mean(tu[sl]) / np.mean(tw[sl])),
                 "predicted_ratio": 1.0 + pred_diff / float(np.mean(tw[sl])),
                 "G_drift": drift, "gradient_term": eta * float(np.mean(dg[sl])), "intervals": int(k.size),
                 "window_start_time": float(t[first])})




def noise_vs_norm_claims(run: BalanceSeries, lr: float, batch_size: int, window: float = 0.25, label: str = "",
                         norms: bool = True) -> list[CheckResult]:
    """The claims of Notebook 01 §5 for one recorded run (a :class:`~symsgd_core.balance.experiments.BalanceSeries`).

    1. :func:`noise_balance_check` over the last ``window`` of the run;
    2. (if ``norms``) noise balance is not norm balance: the final ``|log(‖u‖²/‖w‖²)|`` exceeds the
       window's ``|log(Tr_u/Tr_w)|`` plus the noise-balance tolerance (relation ``>=``).
    """
    nb = noise_balance_check(run.times, run.G, run.tr_cov_u, run.tr_cov_w, run.grad_sq_u,
                             run.grad_sq_w, lr, batch_size, tuple(run.trace_se), window, label=label)
    if not norms:
        return [nb]
    ratio = nb.details["trace_ratio"]
    norm_ratio = float(run.u_sq[-1] / run.w_sq[-1])
    out = make_result(
        "balance.norms_not_balanced" + (f"[{label}]" if label else ""),
        "Noise balance is not norm balance: at the end |log(‖u‖²/‖w‖²)| exceeds |log(Tr_u/Tr_w)| by more "
        "than the noise-balance tolerance",
        abs(math.log(norm_ratio)), abs(math.log(ratio)) + nb.tolerance,
        "the noise-balance check's trace ratio plus its tolerance", relation=">=",
        details={"norm_ratio": norm_ratio, "trace_ratio": ratio})
    return [nb, out]




def relu_balance_claims(run: ReLUBalanceRun, window: float = 0.25) -> list[CheckResult]:
    """:func:`noise_vs_norm_claims` for a ReLU run (:func:`~symsgd_core.balance.experiments.relu_balance_run`, or
    the shipped one from :func:`~symsgd_core.balance.experiments.load_relu_balance`)."""
    p = run.settings
    return noise_vs_norm_claims(run, p["lr"], p["batch_size"], window,
                                label=f"relu {p['d_in']}→{p['hidden']}→{p['d_out']}")


# ============================================================================ the figures' claims
def symmetry_claims(orbit: SymmetryOrbit) -> list[CheckResult]:
    """§1: the loss is constant on the whole orbit drawn (round-off), and ``θᵀB∇ℓ = 0`` at the point."""
    model = ScalarModel()
    xs, ys = np.array([orbit.x]), np.array([orbit.y])
    inv = orbit_invariance(model, orbit.theta0, xs, ys, orbit.lambdas)
    sym = check_symmetry_per_sample(instances=[Instance("scalar, slider point", model, orbit.point[None, :], xs, ys)])
    return [inv, *sym]


def three_dynamics_claims(result: ThreeDynamicsResult) -> list[CheckResult]:
    """§2: flow conserves ``G`` (integrator accuracy); every SGD step obeys the one-step identity, and ``|G|``
    never grows at steps with ``η|ḡ_B| ≤ √2``.

    At the saddle start ``(0, 0)`` SGD never moves: only the flow row is returned. A run whose steps cannot
    be tested (a divergence at the first step, no step with ``η|ḡ_B| ≤ √2``) fails the affected row.
    """
    flow = result.flow
    rows = check_conservation(models=[ScalarModel()], flow=lambda *_args: flow)
    st = result.settings
    if st["u0"] == 0 and st["w0"] == 0:  # the saddle: SGD never moves, there is no step to test
        return rows
    sgd = result.sgd
    th = sgd.theta[:, 0, :]
    if sgd.n_diverged:
        th = th[:int(sgd.diverged_step[0])]
    facts = discrete_step_factors(th, st["lr"]) if th.shape[0] >= 2 else None
    rel = np.abs(facts["residual"]) / facts["tolerance"] if facts is not None else np.zeros(0)
    rows.append(make_result(
        "balance.discrete.trajectory", "Every step of this SGD run: u'² − w'² = (1 − η²ḡ²)(u² − w²), ḡ the "
                                       "mini-batch mean gradient",
        float(np.max(rel)) if rel.size else NOTHING_MEASURED, 1.0,
        "measured in units of the per-step round-off bound 64·12·eps·(u² + w²)·max(1, η²ḡ²)",
        details={"steps": int(rel.size)}))
    if facts is None:
        safe = np.zeros(0, dtype=bool)
        ratio = np.zeros(0)
        eta_g = np.zeros(0)
    else:
        eta_g = np.abs(st["lr"] * facts["c"])
        ratio = (np.abs(facts["G"][1:]) - np.abs(facts["G"][:-1])) / facts["tolerance"]
        safe = eta_g <= math.sqrt(2.0)
    rows.append(make_result(
        "balance.discrete.monotone",
        "|u² − w²| never grows along this SGD run at steps with η|ḡ| ≤ √2, ḡ the mini-batch mean gradient (|1 − η²ḡ²| "
        "≤ 1)",
        float(np.max(ratio[safe])) if safe.any() else NOTHING_MEASURED, 1.0,
        "measured in units of the per-step round-off bound",
        details={"max_eta_g": float(np.max(eta_g)) if eta_g.size else NOTHING_MEASURED,
                 "unsafe_steps": int(np.sum(~safe))}))
    return rows


def ensemble_claims(result: EnsembleResult) -> list[CheckResult]:
    """§3: Corollary 3.3 at this T and ensemble size, ``G``'s spread below ``‖u‖²``'s at the end, and ``G``'s
    missing diffusion term (one-step variance scaling)."""
    rows = check_corollary_decay(lr=result.temperature, runs=result.runs, t_end=result.t_end, theta0=result.theta0)
    su, sg = result.spread_u, result.spread_G
    R = result.runs
    su_end, sg_end = float(su["std"][-1]), float(sg["std"][-1])
    se = math.sqrt(su_end**2 + sg_end**2) / math.sqrt(2.0 * (R - 1)) if R > 1 else NOTHING_MEASURED
    rows.append(make_result(
        "balance.ensemble.spread",
        f"At t = {result.t_end:g}, G = ‖u‖² − ‖w‖² is spread less across runs than ‖u‖² itself "
        f"(std {sg_end:.3g} vs {su_end:.3g})",
        (sg_end - su_end) / se, -mc_tolerance(1.0, Z_MC),
        f"z = {Z_MC:g}: measured is (std G − std ‖u‖²)/SE, which must stay below −{Z_MC:g} (SE of a standard deviation "
        "std/sqrt(2(R − 1)), the two combined as if independent)", details={"runs": R}))
    rows += check_g_is_ode()
    return rows


def ito_claims(point: ItoPoint) -> list[CheckResult]:
    """§4: the proof's steps at the point: per-sample symmetry, ``θᵀBC = 0``, ``√C·Bθ = 0``, the Itô terms."""
    x, y = point.data.full()
    inst = Instance("slider point", point.model, point.theta[None, :], x, y)
    out = [*check_symmetry_per_sample(instances=[inst]), *check_null_space(instances=[inst])]
    if point.temperature > 0:
        out += check_ito_terms(instances=[inst], rate_instances=[inst], temperature=point.temperature)
    return out


def rank1_claims(run: Rank1BalanceRun) -> list[CheckResult]:
    """§5a: the law of balance over the last :data:`RANK1_WINDOW` (noise balance); norms apart when
    ``d_in ≠ d_out``."""
    p = run.settings
    return noise_vs_norm_claims(run.mean, p["lr"], 1, RANK1_WINDOW, label=f"rank-1 {p['d_in']}→{p['d_out']}",
                                norms=p["d_in"] != p["d_out"])


def relu_claims(paper: ReLUBalanceRun | None, live: ReLUBalanceRun, window: float) -> list[CheckResult]:
    """§5b: the claims for the precomputed run and the law's exact identities at its final state (Thm 3.2);
    the live run's noise balance (if it did not diverge).

    (``balance.null_space`` is not run here: ``C`` of the paper-size net is 8200 × 8200.)
    """
    out = []
    if paper is not None:
        out += relu_balance_claims(paper, window)
        p = paper.settings
        net = ReLUNet(p["d_in"], p["hidden"], p["d_out"])
        x, y = GaussianData(k=1.0, sigma=p["sigma"], d_in=p["d_in"], d_out=p["d_out"]).sample(32, 7)
        inst = Instance("relu final state", net, paper.final_theta[None, :], x, y)
        out += check_symmetry_per_sample(instances=[inst])  # every neuron's pair, every sample
        out += [r for r in check_discrete_identity(instances=[inst], runs=1) if r.name.endswith("general")]
    if not live.diverged:
        out += relu_balance_claims(live, window)[:1]
    return out


def discrete_breakdown_claims(result: DiscreteBreakdownResult) -> list[CheckResult]:
    """§6: the one-step identity at every step of the run shown (up to a divergence); fails when there was no
    step to test (the run did not move)."""
    facts = result.facts
    if facts is None:
        return [make_result("balance.discrete.trajectory", "u'² − w'² = (1 − η²ḡ²)(u² − w²) (ḡ: the mini-batch mean "
                                                           "gradient) at every step "
                            "(no step to test: the run did not move)", NOTHING_MEASURED, 1.0, "n/a",
                            details={"steps": 0})]
    rel = np.abs(facts["residual"]) / facts["tolerance"]
    return [make_result(
        "balance.discrete.trajectory",
        f"Every step of this SGD run (η = {result.lr:.3g}): u'² − w'² = (1 − η²ḡ²)(u² − w²), ḡ the mini-batch mean "
        "gradient read off the step",
        float(np.max(rel)), 1.0,
        "measured in units of the per-step round-off bound 64·12·eps·(u² + w²)·max(1, η²ḡ²)",
        details={"steps": int(rel.size)})]
