"""Checks: the rank-1 lifting ℓ̃(u wᵀ) and the sign caveat (arXiv 2308.06671, Theorem 3.1's lifted loss; Notebook 02).

Every check runs on a list of :class:`~symsgd_core.lifting.models.LiftingCase` (default: one random case per
model — linear layer, bilinear attention score, ReLU neuron — from ``seed`` and the sizes ``m, n,
n_samples``) or on the ``cases`` passed in (the notebook passes its controllers' current points).
The formula under test is an optional argument, so tests can inject a broken one (the seed's chain
rule, a wrong ŵ, a loss without the symmetry) and see the check fail.

Tolerances: every error is divided by a per-sample round-off scale — the forward-error majorant of
the loss or gradient (:func:`~symsgd_core.lifting.liftings.majorant_scales`: everything in absolute value)
plus the sizes of the terms being compared, times ``κ_r = ‖w‖‖r‖/|wᵀr|`` where the power step
enters — and compared with ``roundoff_tolerance(1, n_terms)`` = ``64 · n_terms · eps`` with
``n_terms = m·n + m + n`` (+ N where a batch sum enters). "Is not zero" checks use the same bound
from the other side: the quantity must exceed what round-off could produce.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..core.checking import CheckResult, make_result, register, roundoff_tolerance
from .liftings import (
    corrected_chain_rule,
    generic_lifting_gradients,
    generic_lifting_loss,
    generic_lifting_values,
    loss_gradients,
    majorant_scales,
    natural_lifting_gradient,
    noise_traces,
    noise_traces_from_matrix_gradient,
    per_sample_losses,
    power_step_direction,
    reference_condition,
    sign_flip_losses,
    w_free_lifting_gradient,
    w_free_lifting_values,
)
from .models import LiftingCase, default_cases

SAFETY_NOTE = "64·n·eps (n·eps summation bound, safety 64), n = m·n+m+n"


def _cases(cases, seed, m, n, n_samples, models=None) -> list[LiftingCase]:
    if cases is not None:
        cases = list(cases)
        if not cases or not all(isinstance(c, LiftingCase) for c in cases):
            raise ValueError("cases must be a non-empty sequence of LiftingCase")
        return cases
    return default_cases(seed, m, n, n_samples, models)


def _n_terms(case: LiftingCase, extra: int = 0) -> int:
    return case.m * case.n + case.m + case.n + extra


def _norms(a) -> np.ndarray:
    a = np.asarray(a)
    return np.sqrt((a.reshape(a.shape[0], -1) ** 2).sum(1))


def _finish(name, claim, rel_errors, n_terms, source, details, relation="<="):
    """Largest (or, for '>=', smallest) relative quantity against 64·n_terms·eps."""
    measured = (max if relation == "<=" else min)(rel_errors)
    return make_result(name, claim, measured, roundoff_tolerance(1.0, n_terms), source, relation, details)


# ---------------------------------------------------------------------------------------------
@register("lifting.rescaling_symmetry")
def check_rescaling_symmetry(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None,
                             lambdas: Sequence[float] = (0.25, 0.7, 3.0)) -> CheckResult:
    """(λu)(w/λ)ᵀ = u wᵀ and ℓ(λu, w/λ, x) = ℓ(u, w, x) for every sample and every λ > 0: each orbit
    collapses to one matrix, on which the loss is constant (the precondition of everything)."""
    cases = _cases(cases, seed, m, n, n_samples)
    lambdas = [float(x) for x in lambdas]
    if not lambdas or any(not np.isfinite(x) or x <= 0 for x in lambdas):
        raise ValueError(f"lambdas must be finite and > 0, got {lambdas!r}")
    rel, details = [], {}
    for case in cases:
        base, scale = per_sample_losses(case), majorant_scales(case)["loss"]
        M, size = case.M, float(np.abs(np.outer(case.u, case.w)).max())
        worst_loss = worst_M = 0.0
        for lam in lambdas:
            u, w = lam * case.u, case.w / lam
            worst_loss = max(worst_loss, float(np.max(np.abs(per_sample_losses(case, u, w) - base) / scale)))
            worst_M = max(worst_M, float(np.abs(np.outer(u, w) - M).max()) / size if size > 0 else 0.0)
        rel.append(max(worst_loss, worst_M))
        details[case.model.key] = {"max_rel_loss_change": worst_loss, "max_rel_M_change": worst_M}
    return _finish("lifting.rescaling_symmetry",
                   "(λu)(w/λ)ᵀ = u wᵀ and ℓ(λu, w/λ, x) = ℓ(u, w, x) per sample, for λ > 0",
                   rel, max(_n_terms(c, 2) for c in cases),
                   f"float64 round-off: {SAFETY_NOTE}; scales = Σ(f(|u|,|w|,|x|) + |y|)² and max|uᵢwⱼ|", details)


@register("lifting.generic_agrees_on_rank1")
def check_generic_agrees(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None,
                         lifting: Callable = generic_lifting_loss) -> CheckResult:
    """ℓ̃(u wᵀ, w, x) = ℓ(u, w, x) for ℓ̃(M, w) = ℓ(M w/‖w‖², w): the construction agrees on the rank-1 set."""
    cases = _cases(cases, seed, m, n, n_samples)
    rel, details = [], {}
    for case in cases:
        err = np.abs(generic_lifting_values(case, lifting) - per_sample_losses(case))
        rel.append(float(np.max(err / majorant_scales(case)["loss"])))
        details[case.model.key] = {"max_abs_error": float(err.max())}
    return _finish("lifting.generic_agrees_on_rank1",
                   "ℓ̃(M, w) := ℓ(M w/‖w‖², w) equals ℓ(u, w) at M = u wᵀ, per sample",
                   rel, max(_n_terms(c, 2) for c in cases),
                   f"float64 round-off: {SAFETY_NOTE}; scale = loss majorant", details)


def _generic_scales(case, du, dw, G, gw):
    """Per-sample round-off scales of ∂/∂u- and ∂/∂w-type quantities of the generic lifting."""
    maj = majorant_scales(case)
    nu, nw = np.linalg.norm(case.u), np.linalg.norm(case.w)
    s_u = maj["grad_u"] + _norms(G) * nw + _norms(du)
    # ∂ℓ̃/∂w carries terms of size (∂ℓ/∂u)·∂(Mw/‖w‖²)/∂w ≲ 3‖u‖‖∂ℓ/∂u‖/‖w‖ before they cancel.
    s_w = maj["grad_w"] + 3 * nu * maj["grad_u"] / nw + _norms(G) * nu + _norms(gw) + _norms(dw)
    return s_u, s_w


@register("lifting.chain_rule")
def check_chain_rule(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None,
                     chain_rule: Callable = corrected_chain_rule,
                     lifting: Callable = generic_lifting_loss) -> CheckResult:
    """∂ℓ/∂u_i = Σ_j w_j ∂ℓ̃/∂M_ij and ∂ℓ/∂w_j = Σ_i u_i ∂ℓ̃/∂M_ij + ∂ℓ̃/∂w_j (autograd on both sides)."""
    cases = _cases(cases, seed, m, n, n_samples)
    rel, details = [], {}
    for case in cases:
        du, dw = loss_gradients(case)
        G, gw = generic_lifting_gradients(case, lifting)
        cu, cw = chain_rule(G, gw, case.u, case.w)
        s_u, s_w = _generic_scales(case, du, dw, G, gw)
        eu, ew = _norms(np.asarray(cu) - du), _norms(np.asarray(cw) - dw)
        rel.append(float(max(np.max(eu / s_u), np.max(ew / s_w))))
        details[case.model.key] = {"max_error_du": float(eu.max()), "max_error_dw": float(ew.max()),
                                   "max_norm_dl_tilde_dw": float(_norms(gw).max())}
    return _finish("lifting.chain_rule",
                   "corrected chain rule: ∂ℓ/∂u = (∂ℓ̃/∂M) w, ∂ℓ/∂w = (∂ℓ̃/∂M)ᵀu + ∂ℓ̃/∂w, per sample",
                   rel, max(_n_terms(c) for c in cases),
                   f"float64 round-off: {SAFETY_NOTE}; scale = gradient majorant + sizes of the summed terms",
                   details)


@register("lifting.euler_identity")
def check_euler_identity(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None,
                         lifting: Callable = generic_lifting_loss) -> CheckResult:
    """Σ_j w_j ∂ℓ̃/∂w_j = 0 per sample (ℓ̃(M, λw) = ℓ̃(M, w) for λ > 0, by the symmetry)."""
    cases = _cases(cases, seed, m, n, n_samples)
    rel, details = [], {}
    for case in cases:
        du, dw = loss_gradients(case)
        G, gw = generic_lifting_gradients(case, lifting)
        _, s_w = _generic_scales(case, du, dw, G, gw)
        euler = np.abs(gw @ case.w)
        rel.append(float(np.max(euler / (s_w * np.linalg.norm(case.w)))))
        details[case.model.key] = {"max_abs_w_dot_grad": float(euler.max()),
                                   "max_norm_dl_tilde_dw": float(_norms(gw).max())}
    return _finish("lifting.euler_identity", "Euler: Σⱼ wⱼ ∂ℓ̃/∂wⱼ = 0 per sample, for ℓ̃(M, w) = ℓ(Mw/‖w‖², w)",
                   rel, max(_n_terms(c) for c in cases),
                   f"float64 round-off: {SAFETY_NOTE}; scale = ‖w‖ × the ∂ℓ̃/∂w scale", details)


@register("lifting.generic_depends_on_w")
def check_generic_depends_on_w(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None,
                               lifting: Callable = generic_lifting_loss) -> CheckResult:
    """∂ℓ̃/∂w is NOT zero for ℓ̃(M, w) = ℓ(Mw/‖w‖², w) (needs n ≥ 2): the seed's last step does not follow.

    A case whose loss is flat (a ReLU neuron inactive on every sample) has nothing to show and is
    skipped (listed in ``details``); every other case must have some sample with ∂ℓ̃/∂w above round-off.
    """
    cases = _cases(cases, seed, m, n, n_samples)
    if any(c.n < 2 for c in cases):
        raise ValueError("n must be >= 2: for n = 1 Euler's identity w ∂ℓ̃/∂w = 0 forces ∂ℓ̃/∂w = 0")
    rel, details = [], {}
    for case in cases:
        du, dw = loss_gradients(case)
        if not (np.any(du) or np.any(dw)):
            details[case.model.key] = {"skipped": "loss is flat in (u, w) at this point"}
            continue
        G, gw = generic_lifting_gradients(case, lifting)
        _, s_w = _generic_scales(case, du, dw, G, gw)
        k = int(np.argmax(_norms(gw) / s_w))
        rel.append(float(_norms(gw)[k] / s_w[k]))
        details[case.model.key] = {"dl_tilde_dw": gw[k].tolist(), "w_dot_dl_tilde_dw": float(gw[k] @ case.w),
                                   "sample": k}
    if not rel:
        rel = [float("nan")]
    return _finish("lifting.generic_depends_on_w",
                   "∂ℓ̃/∂w ≠ 0 for ℓ̃(M, w) = ℓ(Mw/‖w‖², w): Euler's identity does not make it vanish",
                   rel, max(_n_terms(c) for c in cases),
                   f"must exceed float64 round-off: {SAFETY_NOTE}; scale as for the chain rule", details,
                   relation=">=")


def _f_scales(case, du, dw, A):
    maj, kappa = majorant_scales(case), reference_condition(case)
    nu, nw = np.linalg.norm(case.u), np.linalg.norm(case.w)
    s_u = kappa * (maj["grad_u"] + _norms(A) * nw + _norms(du))
    s_w = kappa * (maj["grad_w"] + _norms(A) * nu + _norms(dw))
    return s_u, s_w


def _require_sign_class(case: LiftingCase):
    dot = float(case.w @ case.r)
    if not dot > 0:
        raise ValueError(f"F(M) describes the sign class wᵀr > 0, but this case has wᵀr = {dot:.3g}; "
                         "use r → −r (or (u, w) → (−u, −w))")


@register("lifting.w_free_lifting")
def check_w_free_lifting(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None,
                         direction: Callable = power_step_direction) -> CheckResult:
    """F(M) = ℓ(M ŵ, ŵ), ŵ = MᵀMr/‖MᵀMr‖: F(u wᵀ) = ℓ(u, w), ∂ℓ/∂u = (∂F/∂M) w, ∂ℓ/∂w = (∂F/∂M)ᵀu."""
    cases = _cases(cases, seed, m, n, n_samples)
    rel, details = [], {}
    for case in cases:
        _require_sign_class(case)
        du, dw = loss_gradients(case)
        A = w_free_lifting_gradient(case, direction)
        s_u, s_w = _f_scales(case, du, dw, A)
        e_val = np.abs(w_free_lifting_values(case, direction) - per_sample_losses(case))
        eu, ew = _norms(A @ case.w - du), _norms(np.einsum("kij,i->kj", A, case.u) - dw)
        rel.append(float(max(np.max(e_val / majorant_scales(case)["loss"]), np.max(eu / s_u), np.max(ew / s_w))))
        details[case.model.key] = {"max_value_error": float(e_val.max()), "max_error_du": float(eu.max()),
                                   "max_error_dw": float(ew.max()), "kappa_r": reference_condition(case)}
    return _finish("lifting.w_free_lifting",
                   "w-free F(M) = ℓ(Mŵ, ŵ): F(uwᵀ) = ℓ(u, w), ∂ℓ/∂u = (∂F/∂M)w, ∂ℓ/∂w = (∂F/∂M)ᵀu (wᵀr > 0)",
                   rel, max(_n_terms(c) for c in cases),
                   f"float64 round-off: {SAFETY_NOTE}; scale = majorant + term sizes, × κᵣ = ‖w‖‖r‖/|wᵀr|",
                   details)


def _natural_cases(cases):
    out = [c for c in cases if c.model.has_natural_lifting]
    if not out:
        raise ValueError("no case has a model with a natural lifting (linear layer or attention score)")
    return out


@register("lifting.natural_tangent_action")
def check_natural_tangent_action(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None,
                                 natural: Callable | None = None) -> CheckResult:
    """The natural lifting and F act alike on the tangent space {a wᵀ + u bᵀ}: A_nat w = A_F w and
    A_natᵀ u = A_Fᵀ u (linear layer and attention score; ``natural(M, data) -> (N,)`` overrides)."""
    cases = _natural_cases(_cases(cases, seed, m, n, n_samples, models=("linear", "attention")))
    rel, details = [], {}
    for case in cases:
        _require_sign_class(case)
        A_nat, A_F = natural_lifting_gradient(case, natural), w_free_lifting_gradient(case)
        kappa = reference_condition(case)
        maj = majorant_scales(case)
        size = _norms(A_nat) + _norms(A_F)
        s_u = kappa * (maj["grad_u"] + size * np.linalg.norm(case.w))
        s_w = kappa * (maj["grad_w"] + size * np.linalg.norm(case.u))
        D = A_nat - A_F
        eu, ew = _norms(D @ case.w), _norms(np.einsum("kij,i->kj", D, case.u))
        rel.append(float(max(np.max(eu / s_u), np.max(ew / s_w))))
        details[case.model.key] = {"max_error_Dw": float(eu.max()), "max_error_DTu": float(ew.max())}
    return _finish("lifting.natural_tangent_action",
                   "natural lifting and F: same action on the tangent space, (A_nat − A_lift)w = 0, (A_nat − "
                   "A_lift)ᵀu = 0 with A_lift the A of F",
                   rel, max(_n_terms(c) for c in cases),
                   f"float64 round-off: {SAFETY_NOTE}; scale = majorant + ‖A‖ sizes, × κᵣ", details)


@register("lifting.natural_differs")
def check_natural_differs(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None,
                          natural: Callable | None = None) -> CheckResult:
    """A_nat ≠ A_F: two valid liftings with different full gradients (needs m, n ≥ 2, where the
    rank-1 set has a normal space). F's gradient is the tangent projection of A_nat."""
    cases = _natural_cases(_cases(cases, seed, m, n, n_samples, models=("linear", "attention")))
    if any(c.m < 2 or c.n < 2 for c in cases):
        raise ValueError("m and n must be >= 2 (for m = 1 or n = 1 every matrix is rank-1 and the liftings agree)")
    rel, details = [], {}
    for case in cases:
        A_nat, A_F = natural_lifting_gradient(case, natural), w_free_lifting_gradient(case)
        kappa, maj = reference_condition(case), majorant_scales(case)
        scale = kappa * (maj["grad_u"] / np.linalg.norm(case.w) + maj["grad_w"] / np.linalg.norm(case.u)
                         + _norms(A_nat) + _norms(A_F))
        diff = _norms(A_nat - A_F)
        k = int(np.argmax(diff / scale))
        rel.append(float(diff[k] / scale[k]))
        details[case.model.key] = {"max_norm_difference": float(diff.max()),
                                   "max_norm_A_nat": float(_norms(A_nat).max())}
    return _finish("lifting.natural_differs", "∂F_nat/∂M ≠ ∂F/∂M off the tangent space (two liftings, two gradients)",
                   rel, max(_n_terms(c) for c in cases),
                   f"must exceed float64 round-off: {SAFETY_NOTE}; scale = majorant/‖·‖ + ‖A‖ sizes, × κᵣ",
                   details, relation=">=")


def _default_matrix_gradients() -> dict[str, Callable]:
    return {"F": w_free_lifting_gradient, "natural": natural_lifting_gradient}


@register("lifting.theorem31_traces")
def check_theorem31_traces(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None,
                           matrix_gradients: dict[str, Callable] | None = None) -> CheckResult:
    """Tr Cov ∇_u ℓ = wᵀ C_right w and Tr Cov ∇_w ℓ = uᵀ C_left u (Theorem 3.1's traces) from the
    per-sample A of every lifting (F; natural where it exists) agree with autograd on ℓ(u, w).

    ``matrix_gradients`` maps a label to ``case -> A (N, m, n)``; a lifting that does not apply to a
    model (ValueError) is skipped for it.
    """
    cases = _cases(cases, seed, m, n, n_samples)
    fns = _default_matrix_gradients() if matrix_gradients is None else dict(matrix_gradients)
    rel, details = [], {}
    for case in cases:
        if "F" in fns and fns["F"] is w_free_lifting_gradient:
            _require_sign_class(case)
        du, dw = loss_gradients(case)
        tr_u, tr_w = noise_traces(du, dw)
        row = {"direct": [tr_u, tr_w]}
        for label, fn in fns.items():
            try:
                A = fn(case)
            except ValueError:
                continue
            a_u, a_w = noise_traces_from_matrix_gradient(A, case.u, case.w)
            s_u, s_w = _f_scales(case, du, dw, A)
            for err, g, s in ((abs(a_u - tr_u), du, s_u), (abs(a_w - tr_w), dw, s_w)):
                mean_sq = float((g ** 2).sum(1).mean())
                scale = 2 * np.sqrt(mean_sq) * np.sqrt(float((s ** 2).mean())) + mean_sq
                rel.append(err / scale if scale > 0 else float(err > 0) * np.inf)
            row[label] = [a_u, a_w]
        details[case.model.key] = row
    if not rel:
        rel = [float("nan")]
    return _finish("lifting.theorem31_traces",
                   "Theorem 3.1 traces from A (∂ℓ/∂u = Aw, ∂ℓ/∂w = Aᵀu) equal autograd's, for every lifting",
                   rel, max(_n_terms(c, c.n_samples) for c in cases),
                   f"float64 round-off: {SAFETY_NOTE}; trace scale = 2·rms‖∇ℓ‖·rms(gradient scale) + E‖∇ℓ‖², n += N",
                   details)


@register("lifting.sign_caveat")
def check_sign_caveat(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None) -> CheckResult:
    """For a ReLU neuron, (u, w) and (−u, −w) give the same u wᵀ but different losses: the loss is a
    function of u wᵀ *and* of the sign class that the λ > 0 symmetry preserves."""
    cases = _cases(cases, seed, m, n, n_samples, models=("relu",))
    rel, details = [], {}
    for case in cases:
        same_M = float(np.max(np.abs(case.M - np.outer(-case.u, -case.w))))
        if same_M != 0.0:  # negation is exact in floating point: anything else is a bug
            raise RuntimeError(f"u wᵀ and (−u)(−w)ᵀ differ by {same_M}")
        plus, minus = sign_flip_losses(case)
        scale = float(majorant_scales(case)["loss"].mean())
        rel.append(abs(plus - minus) / scale)
        details[case.model.key] = {"loss_u_w": plus, "loss_minus_u_minus_w": minus, "M_difference": same_M,
                                   "w_dot_r": float(case.w @ case.r)}
    return _finish("lifting.sign_caveat",
                   "(u, w) and (−u, −w) share u wᵀ but not the loss: ℓ depends on u wᵀ and on the sign class",
                   rel, max(_n_terms(c, c.n_samples) for c in cases),
                   f"the loss gap must exceed float64 round-off: {SAFETY_NOTE}; scale = mean loss majorant, n += N",
                   details, relation=">=")


@register("lifting.noise_null_direction")
def check_noise_null_direction(seed: int = 0, m: int = 2, n: int = 3, n_samples: int = 8, cases=None) -> CheckResult:
    """θᵀB∇ℓ = uᵀ(A w) − wᵀ(Aᵀu) = 0 per sample, hence θᵀ B C(θ) = 0: the gradient noise is rank-deficient
    along Bθ = (u, −w) (the link to Notebook 01; C is the per-sample covariance of the conventions)."""
    cases = _cases(cases, seed, m, n, n_samples)
    rel, details = [], {}
    for case in cases:
        du, dw = loss_gradients(case)
        maj = majorant_scales(case)
        nu, nw = np.linalg.norm(case.u), np.linalg.norm(case.w)
        scale = nu * (maj["grad_u"] + _norms(du)) + nw * (maj["grad_w"] + _norms(dw))
        ident = du @ case.u - dw @ case.w
        g = np.concatenate([du, dw], axis=1)
        theta_B = np.concatenate([case.u, -case.w])
        C = np.cov(g.T, bias=True)
        null = float(np.linalg.norm(theta_B @ C))
        null_scale = float(np.sqrt((scale ** 2).mean()) * np.sqrt((g ** 2).sum(1).mean()) * 2)
        rel.append(float(max(np.max(np.abs(ident) / scale), null / null_scale if null_scale > 0 else 0.0)))
        details[case.model.key] = {"max_abs_thetaB_grad": float(np.abs(ident).max()), "norm_thetaB_C": null}
    return _finish("lifting.noise_null_direction",
                   "θᵀB∇ℓ = uᵀ(Aw) − wᵀ(Aᵀu) = 0 per sample, so θᵀ B C = 0 (noise rank-deficient along Bθ)",
                   rel, max(_n_terms(c, c.n_samples) for c in cases),
                   f"float64 round-off: {SAFETY_NOTE}, n += N; scale = ‖u‖(majorant+‖∂ℓ/∂u‖) + ‖w‖(…)", details)


#: The lifting checks in the order of Notebook 02 (all registered above).
LIFTING_CHECKS = (check_rescaling_symmetry, check_generic_agrees, check_chain_rule, check_euler_identity,
                  check_generic_depends_on_w, check_w_free_lifting, check_natural_tangent_action,
                  check_natural_differs, check_theorem31_traces, check_noise_null_direction, check_sign_caveat)
