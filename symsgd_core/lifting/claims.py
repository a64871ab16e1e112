"""The claims Notebook 02 makes beside its figures that are not registered checks: the rank-1 slice's
determinants, the noise traces along the orbit, and the w-free lifting as a tangent projection.

Each function returns :class:`~symsgd_core.core.checking.CheckResult` rows for ``assert_claims`` (one compact
line, the table behind a click), with float64 round-off tolerances (:func:`~symsgd_core.core.checking.
roundoff_tolerance`) stating what they sum. The figures' other claims are the registered checks of :mod:`.checks`.
"""

from __future__ import annotations

import numpy as np

from ..core.checking import CheckResult, make_result, roundoff_tolerance
from .experiments import RankOneSlice, demo_case
from .liftings import (
    loss_gradients,
    natural_lifting_gradient,
    noise_traces,
    reference_condition,
    tangent_projection,
    w_free_lifting_gradient,
)
from .models import LiftingCase

__all__ = ["rank_one_slice_claims", "tangent_projection_claim", "trace_scaling_claims"]


def rank_one_slice_claims(q: RankOneSlice, phi_deg: float) -> list[CheckResult]:
    """§2: ``M`` and ``M′`` are rank 1 (det 0), their midpoint has ``det = sin²(φ/2)/4 > 0`` (rank 2; unit u, w,
    rotation by φ/2), and ``det(M + M′) = 4 det((M + M′)/2)``. Tolerance: a 2×2 determinant's round-off (two
    products and a difference of entries up to ``max|M|``)."""
    tol = roundoff_tolerance(np.abs(q.M).max() ** 2, 2)
    exact = float(np.sin(np.deg2rad(phi_deg) / 2) ** 2 / 4)
    source = "float64 round-off of a 2×2 determinant (2 products)"
    return [
        make_result("lifting.slice_rank_one", "M = u wᵀ and M′ are rank 1: det M = det M′ = 0",
                    max(abs(q.det_M), abs(q.det_M2)), tol, source),
        make_result("lifting.slice_midpoint_det", f"det((M + M′)/2) = sin²(φ/2)/4 = {exact:.4f} at φ = {phi_deg:g}°",
                    abs(q.det_mid - exact), tol, source),
        make_result("lifting.slice_midpoint_rank_two", "the midpoint has rank 2: det((M + M′)/2) > 0", q.det_mid, tol,
                    "must exceed " + source, relation=">="),
        make_result("lifting.slice_sum_det", "det(M + M′) = 4 det((M + M′)/2) (a 2×2 determinant is quadratic)",
                    abs(q.det_sum - 4 * q.det_mid), 4 * tol, "4 × " + source),
    ]


def trace_scaling_claims(case: LiftingCase, model: str, lam: float = 3.0) -> list[CheckResult]:
    """§5: along the orbit ``(λu, w/λ)`` the noise traces scale as ``Tr_u ∝ 1/λ²`` and ``Tr_w ∝ λ²``, recomputed by
    autograd at ``λ`` against the current point. Tolerance: round-off of ``E‖∇ℓ‖²`` on the orbit, summed over the
    samples and the parameters. ``details``: the two measured ratios."""
    du, dw = loss_gradients(case)
    tr_u, tr_w = noise_traces(du, dw)
    tr_u3, tr_w3 = noise_traces(*loss_gradients(demo_case(model, lam * case.u, case.w / lam)))
    scale = lam**2 * (np.sum(du**2, axis=1).mean() + np.sum(dw**2, axis=1).mean())  # E‖∇ℓ‖² on the orbit
    tol = roundoff_tolerance(scale, len(du) + case.u.size + case.w.size)
    source = f"float64 round-off of E‖∇ℓ‖² ({len(du)} samples, {case.u.size + case.w.size} parameters)"
    details = {"ratio_u": tr_u3 / tr_u, "ratio_w": tr_w3 / tr_w, "lam": lam}
    return [
        make_result("lifting.trace_u_scaling", f"Tr_u at λ = {lam:g} is Tr_u/λ²", abs(tr_u3 - tr_u / lam**2), tol,
                    source, details=details),
        make_result("lifting.trace_w_scaling", f"Tr_w at λ = {lam:g} is Tr_w·λ²", abs(tr_w3 - tr_w * lam**2), tol,
                    source, details=details),
    ]


def tangent_projection_claim(case: LiftingCase) -> CheckResult:
    """§5: the w-free lifting's matrix gradient ``A_F`` is the tangent projection of the natural one ``A_nat``
    (a model with a natural lifting). Tolerance: round-off scaled by the reference direction's condition."""
    A_F, A_nat = w_free_lifting_gradient(case), natural_lifting_gradient(case)
    gap = float(np.abs(A_F - tangent_projection(A_nat, case.u, case.w)).max())
    m, n = case.u.size, case.w.size
    return make_result("lifting.w_free_is_tangent_projection",
                       f"the F lifting's A is the tangent projection of A_nat ({m}×{n} {case.model.key} model)", gap,
                       roundoff_tolerance(reference_condition(case) * np.abs(A_nat).max(), m * n + m + n),
                       "float64 round-off × the reference direction's condition number")
