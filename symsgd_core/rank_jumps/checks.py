"""Proofs as code for one-way rank jumps (Wang, Jacot, arXiv 2305.16038): balancedness, the induced penalty,
forced sampling, absorption; and the claims of Notebook 04's figures.

Registered checks, each on the ε-completion of :mod:`.experiments` (L = 4, width 8 unless stated):

* ``rank_jumps.balanced_at_gd_minimum`` — GD minima of 𝓛_γ (γ > 0) are balanced,
  ``W_{ℓ+1}ᵀW_{ℓ+1} = W_ℓW_ℓᵀ``;
* ``rank_jumps.induced_penalty_at_balanced_points`` — ``‖θ‖² = L Σ_k s_k(A)^{2/L}`` at
  balanced points;
* ``rank_jumps.induced_penalty_is_minimal`` — every other factorisation of the same A
  has a larger ``‖θ‖²``;
* ``rank_jumps.forced_sampling_decay`` — under SGD restricted to row-0 entries the
  unsampled row of W_L is exactly ``(1 − 2ηγ)^t`` times its start;
* ``rank_jumps.absorption_after_forced_sampling`` — after forced sampling (rank 1),
  free GD and free SGD never let the second singular value of any layer grow back.

Each check takes the ingredient a test can break (a per-layer weight decay, a wrong
penalty formula, a leaky sampler, a noisy or too-shallow dynamics) as an argument.

Claims of the figures (asserted in the notebook, not registered): :func:`check_exact_decay`,
:func:`check_no_returns`, :func:`check_raising_noise`, :func:`check_balanced_norm`; the authors' reply worked out:
:func:`check_explosion` (this project's construction of the reply's example), :func:`check_eckart_young`,
:func:`check_origin_condition`, :func:`check_right_rank`; the balance threshold ε₂ of B_r:
:func:`check_imbalance_step`, :func:`check_sgd_imbalance`;
the statistics of the jumps and the noise: :func:`check_no_jumps`, :func:`check_memoryless`,
:func:`check_raising_noise_scaling`, :func:`check_layer_decay`.
"""

from __future__ import annotations

import numpy as np

from ..core.checking import EPS64, CheckResult, make_result, precondition_not_met, register, roundoff_tolerance
from ..core.conventions import Z_MC
from ..core.stats import censored_exponential_ks, event_times
from ..core.validation import check_array, check_int
from ..dln import (
    DEFAULT_B_CRITERION,
    CompletionProblem,
    Params,
    balanced_factorisation,
    balancedness,
    epsilon_completion,
    exact_rank_tol,
    flush_threshold,
    gradient,
    in_B,
    induced_penalty,
    init_params,
    make_architecture,
    run,
    singular_values,
    weight_decay_factor,
)
from .experiments import EPSILON_EXPERIMENT as EXP
from .experiments import ForcedRecord, phase0_minima


def _imbalance_bound(params: Params, grad: Params, weight_decay: float, decay: np.ndarray) -> np.ndarray:
    """Per run, ``max_ℓ (‖W_{ℓ+1}‖₂‖G_{ℓ+1}‖_F + ‖G_ℓ‖_F‖W_ℓ‖₂) / (2γ)``.

    From ``W_{ℓ+1}ᵀ G_{ℓ+1} − G_ℓ W_ℓᵀ = 2γ (W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ)`` for the gradient G of
    𝓛_γ (the data terms cancel); the bound is what a non-zero residual gradient allows.
    ``decay`` (per-layer multipliers of γ) enters only through G: for a loss with
    unequal per-layer decay the identity fails, which is what a broken input shows.
    """
    ws, gs = params.layers(), grad.layers()
    bound = np.zeros(params.n_runs)
    for lo in range(len(ws) - 1):
        hi = lo + 1
        b = (np.linalg.norm(ws[hi], 2, axis=(1, 2)) * np.linalg.norm(gs[hi], axis=(1, 2))
             + np.linalg.norm(gs[lo], axis=(1, 2)) * np.linalg.norm(ws[lo], 2, axis=(1, 2))) / (2.0 * weight_decay)
        bound = np.maximum(bound, b)
    return bound


def _gradient_with_decay(params: Params, problem: CompletionProblem, weight_decay: float,
                         decay: np.ndarray) -> Params:
    """∇ of ``C(A) + γ Σ_ℓ decay_ℓ ‖W_ℓ‖²`` (decay ≡ 1 is the project's 𝓛_γ)."""
    g = gradient(params, problem, 0.0)
    for k, (w, gl) in enumerate(zip(params.layers(), g.layers())):
        gl += 2.0 * weight_decay * decay[k] * w
    return g


@register("rank_jumps.balanced_at_gd_minimum")
def check_balanced_at_gd_minimum(seed: int = 0, eps: float = EXP.eps, depth: int = EXP.depth,
                                 width: int = EXP.width, weight_decay: float = EXP.weight_decay_hot,
                                 lr: float = EXP.lr_phase0, n_steps: int = 20_000, n_runs: int = 2, layer_decay=None):
    """GD from random init converges to a balanced minimum: ``max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F`` ≈ 0.

    Tolerance: the exact identity ``W_{ℓ+1}ᵀG_{ℓ+1} − G_ℓW_ℓᵀ = 2γ D_ℓ`` bounds the imbalance
    by the residual gradient G at the end point, plus float64 round-off of forming D.
    ``layer_decay`` (per-layer multipliers of γ) is the broken input: a penalty
    without the rescaling symmetry has unbalanced critical points.
    """
    problem = epsilon_completion(eps)
    arch = make_architecture(problem.shape, depth, width)
    p0 = init_params(arch, n_runs, seed)
    decay = np.ones(depth) if layer_decay is None else np.asarray(layer_decay, dtype=float)
    if decay.shape != (depth,):
        raise ValueError(f"layer_decay must have {depth} entries, got {decay.shape}")
    if np.all(decay == 1.0):
        end = run(p0, problem, n_steps, method="gd", lr=lr, weight_decay=weight_decay, record_every=n_steps,
                      record_layers=False).final
    else:  # the broken loss: plain numpy GD with per-layer decay
        end = p0.copy()
        for _ in range(n_steps):
            end.flat -= lr * _gradient_with_decay(end, problem, weight_decay, decay).flat
    grad = _gradient_with_decay(end, problem, weight_decay, decay)
    imbalance = balancedness(end)
    wmax = max(float(np.max(np.linalg.norm(w, 2, axis=(1, 2)))) for w in end.layers())
    bound = _imbalance_bound(end, grad, weight_decay, decay)
    tol = float(np.max(bound)) + roundoff_tolerance(wmax**2, n_terms=width)
    return make_result(
        "rank_jumps.balanced_at_gd_minimum",
        "GD minima of 𝓛ᵧ (γ>0) are balanced: Wₗ₊₁ᵀWₗ₊₁ = WₗWₗᵀ for every ℓ",
        float(np.max(imbalance)), tol,
        "maxₗ(‖Wₗ₊₁‖‖Gₗ₊₁‖+‖Gₗ‖‖Wₗ‖)/(2γ) from the identity Wₗ₊₁ᵀGₗ₊₁−GₗWₗᵀ=2γDₗ at the end "
        "point (residual gradient G) + 64·w·eps·max‖W‖² round-off",
        details={"imbalance": imbalance.tolist(), "gradient_norm": np.linalg.norm(grad.flat, axis=1).tolist(),
                 "bound": bound.tolist(), "singular_values": singular_values(end).tolist(),
                 "weight_decay": weight_decay, "lr": lr, "n_steps": n_steps, "layer_decay": decay.tolist()})


def _default_penalty(s: np.ndarray, depth: int) -> float:
    return depth * float(np.sum(s ** (2.0 / depth)))


def _test_matrices(seed: int, shape=(3, 4)):
    """Well-conditioned random matrices of rank 1..min(shape) (singular values in [0.5, 2])."""
    rng = np.random.default_rng(seed)
    m, n = shape
    out = []
    for rank in range(1, min(m, n) + 1):
        U = np.linalg.qr(rng.normal(size=(m, rank)))[0]
        V = np.linalg.qr(rng.normal(size=(n, rank)))[0]
        s = rng.uniform(0.5, 2.0, size=rank)
        out.append(U @ np.diag(s) @ V.T)
    return out


@register("rank_jumps.induced_penalty_at_balanced_points")
def check_induced_penalty_at_balanced_points(seed: int = 0, depths=(1, 2, 3, 4, 5), width: int = 5,
                                             penalty=None, factorise=None):
    """At balanced factorisations ``‖θ‖² = L Σ_k s_k(A)^{2/L}`` (relative error ≈ round-off).

    Points: ``balanced_factorisation`` of well-conditioned random 3×4 matrices of
    every rank, random hidden frames, depths 1..5. ``penalty(s, L)`` and
    ``factorise(A, arch, seed)`` are injectable (the broken inputs).
    """
    penalty = penalty or _default_penalty
    factorise = factorise or balanced_factorisation
    errs = []
    rows = []
    for depth in depths:
        for A in _test_matrices(seed):
            arch = make_architecture(A.shape, depth, width)
            theta = factorise(A, arch, seed=seed + depth)
            s = np.linalg.svd(A, compute_uv=False)
            s = s[s > exact_rank_tol(A)]
            norm_sq = float(theta.norm_sq()[0])
            pen = penalty(s, depth)
            errs.append(abs(norm_sq - pen) / pen)
            rows.append({"depth": depth, "rank": int(s.size), "norm_sq": norm_sq, "penalty": pen,
                         "imbalance": float(balancedness(theta)[0])})
    # relative error: SVD backward error eps·‖A‖ amplified by the condition number (≤ 4 here),
    # L-fold products to form each layer and a sum of P squares for ‖θ‖².
    n_terms = max(depths) * (width + max(_test_matrices(seed)[0].shape))
    tol = roundoff_tolerance(4.0, n_terms=n_terms)
    return make_result(
        "rank_jumps.induced_penalty_at_balanced_points",
        "at balanced points ‖θ‖² = L Σₖ sₖ(A)²ᐟᴸ",
        max(errs), tol,
        f"64·{n_terms}·eps·κ with κ ≤ 4 the condition number of the test matrices (SVD backward error, "
        "L-fold products, sum of squares)",
        details={"points": rows})


@register("rank_jumps.induced_penalty_is_minimal")
def check_induced_penalty_is_minimal(seed: int = 0, depths=(2, 3, 4), width: int = 5, n_perturb: int = 20,
                                     penalty=None):
    """Every factorisation of A has ``‖θ‖² ≥ L Σ_k s_k(A)^{2/L}`` (the induced penalty is a minimum).

    Unbalanced factorisations: a balanced one with an invertible ``G`` inserted between
    two layers (``W_ℓ → G W_ℓ``, ``W_{ℓ+1} → W_{ℓ+1} G⁻¹``), A unchanged. Measured: the
    smallest relative excess ``(‖θ‖² − pen)/pen``; it must not fall below −round-off.
    """
    penalty = penalty or _default_penalty
    rng = np.random.default_rng(seed)
    excess = []
    cond_max = 1.0
    for depth in depths:
        for A in _test_matrices(seed):
            arch = make_architecture(A.shape, depth, width)
            base = balanced_factorisation(A, arch, seed=seed)
            s = np.linalg.svd(A, compute_uv=False)
            s = s[s > exact_rank_tol(A)]
            pen = penalty(s, depth)
            for _ in range(n_perturb):
                ws = [w[0].copy() for w in base.layers()]
                ell = int(rng.integers(0, depth - 1))
                G = np.eye(width) + 0.5 * rng.normal(size=(width, width)) / np.sqrt(width)
                cond_max = max(cond_max, float(np.linalg.cond(G)))
                ws[ell] = G @ ws[ell]
                ws[ell + 1] = ws[ell + 1] @ np.linalg.inv(G)
                theta = Params.from_layers(ws)
                excess.append((float(theta.norm_sq()[0]) - pen) / pen)
    tol = -roundoff_tolerance(4.0 * cond_max, n_terms=max(depths) * 2 * width)
    return make_result(
        "rank_jumps.induced_penalty_is_minimal",
        "over the factorisations of A into L layers the smallest ‖θ‖² is L Σₖ sₖ(A)²ᐟᴸ",
        min(excess), tol,
        "−64·n·eps·κ(A)·max cond(G): round-off of inserting G, G⁻¹ and of the SVD",
        relation=">=",
        details={"n_factorisations": len(excess), "smallest_relative_excess": min(excess),
                 "largest_relative_excess": max(excess), "max_cond_G": cond_max})


@register("rank_jumps.forced_sampling_decay")
def check_forced_sampling_decay(seed: int = 0, eps: float = EXP.eps, depth: int = EXP.depth, width: int = EXP.width,
                                lr: float = EXP.lr_hot, weight_decay: float = EXP.weight_decay_hot, n_steps: int = 2000,
                                entries=None):
    """SGD sampling only row-0 entries: row 1 of W_L is exactly ``(1 − 2ηγ)^t`` times its start.

    Start: a phase-0 GD minimum (rank 2), as in the notebook. Row 1 of A gets no data
    signal, so row 1 of W_L only feels weight decay. Measured: the largest relative
    deviation over the row after ``n_steps`` steps. ``entries`` (the sampling pool) is
    injectable: a pool leaking a row-1 entry is the broken input.
    """
    problem = epsilon_completion(eps)
    p0 = phase0_minima(eps=eps, n_runs=1, seed=seed, depth=depth, width=width, weight_decay=weight_decay)
    pool = problem.row_entries([0]) if entries is None else entries
    res = run(p0, problem, n_steps, method="forced", entries=pool, lr=lr, weight_decay=weight_decay, seed=seed,
                  record_every=n_steps, record_layers=False)
    start = p0.layer(depth - 1)[0, 1]
    end = res.final.layer(depth - 1)[0, 1]
    factor = weight_decay_factor(lr, weight_decay, n_steps)
    expected = factor * start
    rel = float(np.max(np.abs(end - expected)) / np.max(np.abs(expected)))
    # one rounding (≤ eps/2 relative) per multiplication, n_steps of them, plus pow()
    tol = roundoff_tolerance(1.0, n_terms=n_steps + 1)
    return make_result(
        "rank_jumps.forced_sampling_decay",
        "forced sampling of row 0: the unsampled row of the last layer shrinks by exactly (1 − 2ηγ)ᵗ",
        rel, tol, f"64·(t+1)·eps: one rounding per step over t = {n_steps} steps",
        details={"factor": factor, "t": n_steps, "lr": lr, "weight_decay": weight_decay,
                 "row_norm_start": float(np.linalg.norm(start)), "row_norm_end": float(np.linalg.norm(end)),
                 "rank_after": int(res.final_rank[0])})


@register("rank_jumps.absorption_after_forced_sampling")
def check_absorption_after_forced_sampling(seed: int = 0, eps: float = EXP.eps, depth: int = EXP.depth,
                                           width: int = EXP.width, lr: float = EXP.lr_hot,
                                           weight_decay: float = EXP.weight_decay_hot, forced_steps: int = 1000,
                                           free_steps: int = 20_000, n_runs: int = 2, methods=("gd", "sgd"),
                                           temperature: float = 1e-6):
    """After forced sampling (rank 1), free GD and free SGD keep every layer's s₂ from growing.

    Start: phase-0 GD minima (rank 2). Forced SGD on row-0 entries for ``forced_steps``
    steps drives every layer's second singular value to ~1e−7 (A rank 1). Then each
    method in ``methods`` runs ``free_steps`` unforced steps. Measured: the largest
    ratio ``max_ℓ s₂(W_ℓ)(t) / max_ℓ s₂(W_ℓ)(t₀)`` over the free phase (1 = never grew).
    The absorption argument needs L ≥ 3: ``depth=2`` or ``methods=("langevin",)``
    (isotropic noise) are broken inputs that re-excite the second direction.

    Precondition: the forcing put every run in B_1 (:data:`~.network.DEFAULT_B_CRITERION`: every layer's s₂ ≤ ε₁,
    balanced, bounded). When it did not (too few forced steps for the step size, e.g. ``lr=0.01``), the claim is
    not tested and the result says so (:func:`~symsgd_core.core.checking.precondition_not_met`), not FAIL.
    """
    name = "rank_jumps.absorption_after_forced_sampling"
    claim = "after forced sampling B₁ is absorbing: free GD and SGD never regrow any layer's s₂ (L ≥ 3)"
    problem = epsilon_completion(eps)
    start = phase0_minima(eps=eps, n_runs=n_runs, seed=seed, depth=depth, width=width, weight_decay=weight_decay)
    forced = run(start, problem, forced_steps, method="forced", entries=problem.row_entries([0]), lr=lr,
                     weight_decay=weight_decay, seed=seed, record_every=forced_steps)
    s2_start = forced.layer_singular_values[:, -1, :, 1].max(axis=-1)
    s1_max = float(np.nanmax(forced.layer_singular_values[:, -1, :, 0]))
    reached = in_B(forced.final, 1) & ~forced.diverged
    if not reached.all():
        crit = DEFAULT_B_CRITERION
        return precondition_not_met(
            name, claim,
            f"forcing ({forced_steps} steps at η = {lr:g}, γ = {weight_decay:g}) did not put every run in B₁: "
            f"{int((~reached).sum())} of {reached.size} outside (largest layer s₂ = {float(np.nanmax(s2_start)):.3g}; "
            f"B₁ needs every layer's s₂ ≤ ε₁ = {crit.eps_rank:g}, ‖θ‖² ≤ R = {crit.R:g}, imbalance ≤ ε₂ = "
            f"{crit.eps_balance:g})",
            details={"s2_after_forcing": s2_start.tolist(), "rank_after_forcing": forced.final_rank.tolist(),
                     "norm_sq_after_forcing": forced.final.norm_sq().tolist(),
                     "imbalance_after_forcing": balancedness(forced.final).tolist(), "lr": lr,
                     "weight_decay": weight_decay, "forced_steps": forced_steps})
    ratios = {}
    ranks = {}
    in_b1 = {}
    for k, method in enumerate(methods):
        kw = {"temperature": temperature} if method == "langevin" else {}
        free = run(forced.final, problem, free_steps, method=method, lr=lr, weight_decay=weight_decay,
                   seed=seed + 1 + k,
                       record_every=max(free_steps // 40, 1), **kw)
        s2 = free.layer_singular_values[:, :, :, 1].max(axis=-1)
        ratios[method] = float(np.max(s2 / s2_start[:, None]))
        ranks[method] = int(free.rank.max())
        in_b1[method] = float(free.in_B[:, :, 1].mean())
        if free.diverged.any():
            ratios[method] = float("inf")
    measured = max(ratios.values())
    # SVD absolute error ≈ w·eps·s₁ on s₂, relative to s₂(t₀)
    tol = 1.0 + roundoff_tolerance(s1_max / float(np.min(s2_start)), n_terms=width)
    return make_result(
        name, claim, measured, tol,
        "1 + 64·w·eps·s₁/s₂(t₀): SVD round-off on s₂ relative to its value when forced sampling ends",
        details={"ratio_by_method": ratios, "max_rank_by_method": ranks, "fraction_in_B1_by_method": in_b1,
                 "s2_after_forcing": s2_start.tolist(), "depth": depth, "lr": lr, "weight_decay": weight_decay,
                 "rank_after_forcing": forced.final_rank.tolist(), "eps64": EPS64})


# ---------------------------------------------------------------------------------------------- figure claims

def check_exact_decay(record: ForcedRecord, depth: int) -> CheckResult:
    """The unsampled rows of ``W_L`` shrink exactly as ``(1 − 2ηγ)^t`` under forced sampling.

    Measured: the largest relative deviation of the recorded row norms from the law, over the
    records before any entry could reach the engine's flush threshold. Tolerance: float64
    round-off of ``t`` successive multiplications (``roundoff_tolerance(1, t)``).
    """
    t = int(record.steps[-1])
    flush = flush_threshold(depth)
    measured = record.max_relative_error(flush)
    n_compared = int(record.comparable(flush).sum())
    if n_compared == 0:
        measured = float("nan")
    return make_result(
        "rank_jumps.exact_row_decay",
        "under forced sampling of rows R, every other row of the last layer obeys ‖row‖ₜ = (1 − 2ηγ)ᵗ ‖row‖₀",
        measured, roundoff_tolerance(1.0, t),
        f"float64 round-off of {t} products (64·t·eps, relative)", "<=",
        {"steps": t, "records_compared": n_compared, "factor": weight_decay_factor(record.lr, record.weight_decay, t)})


def check_no_returns(result, name: str = "rank_jumps.no_returns") -> CheckResult:
    """No run of ``result`` ever returned to a higher rank after reaching a lower one (exact count).

    Tolerance 0: the measured value is an integer count of runs with a return.
    """
    count = int(np.sum(result.returned_up))
    return make_result(name, "after a jump to lower rank, no run ever returns to a higher rank",
                       count, 0.0, "exact integer count, no tolerance", "<=",
                       {"runs": int(result.n_runs), "returns": count})


def check_raising_noise(spectrum: dict, n_params: int) -> CheckResult:
    """SGD's noise covariance has no variance along the rank-raising directions at a rank-r point.

    Measured: ``|tr(P_raise η²C P_raise)|``; tolerance: float64 round-off of the ``P``-term sums
    in ``Vᵀ C V`` relative to ``tr(η²C)`` (``roundoff_tolerance(tr, P)``).
    """
    measured = abs(spectrum["trace_raising"])
    tol = roundoff_tolerance(spectrum["trace_total"], n_params)
    return make_result("rank_jumps.no_raising_noise",
                       "at a rank-1 point the per-entry SGD gradients have no component along rank-raising "
                       "directions, so tr(η²C) restricted to them is 0",
                       measured, tol, f"float64 round-off of {n_params}-term sums times tr(η²C)", "<=",
                       {"trace_total": spectrum["trace_total"], "n_raising": spectrum["n_raising"]})


def check_balanced_norm(A, depth: int, seed: int = 0, penalty=None) -> CheckResult:
    """A balanced factorisation of ``A`` has ``‖θ‖² = L Σ_k s_k(A)^{2/L}`` (the induced penalty).

    Args:
        A: ``(m, n)`` matrix.
        depth: L ≥ 1.
        seed: seed of the random hidden frames.
        penalty: the formula to test, ``penalty(A, depth) -> float`` (default
            :func:`symsgd_core.induced_penalty`); tests inject a wrong one to see the check fail.
    Returns:
        :class:`CheckResult` on the relative error, tolerance = round-off of the ``P``-term sum.
    """
    A = check_array("A", A, ndim=2)
    L = check_int("depth", depth, minimum=1)
    penalty = induced_penalty if penalty is None else penalty
    arch = make_architecture(A.shape, L, max(A.shape))
    params = balanced_factorisation(A, arch, seed=seed)
    norm = float(params.norm_sq()[0])
    formula = float(penalty(A, L))
    rel = abs(norm - formula) / max(abs(formula), np.finfo(float).tiny)
    return make_result("rank_jumps.balanced_norm", "a balanced factorisation has ‖θ‖² = L Σₖ sₖ(A)²ᐟᴸ",
                       rel, roundoff_tolerance(1.0, arch.n_params),
                       f"float64 round-off of the {arch.n_params}-term sum ‖θ‖² (relative)", "<=",
                       {"norm_sq": norm, "formula": formula})


# ------------------------------------------------------------------------- the authors' reply, checked

def check_explosion(base: Params, i_values=(1, 2, 4, 8, 16, 64, 256, 1024), formula=None) -> list[CheckResult]:
    """The reply's explosion example, on this project's construction: ``A_i = Â + u vᵀ/i`` costs
    ``‖θ_i − θ̂‖² = L·i^{−2/L}``.

    What is verified is **this project's construction**, not a statement of the reply: θ_i is the balanced
    factorisation of A_i that agrees with θ̂ on Â's directions and adds ``i^{−1/L} x_{ℓ+1}x_ℓᵀ`` to every layer
    (:func:`~.analysis.explosion_distances`). The reply prints ``‖θ_i − θ̂‖² = i^{−2/L}``: that is one layer's
    share; the total drops the factor L (its conclusion, that the ratio to ``‖A_i − Â‖`` explodes, does not
    depend on it). Passing the reply's formula as printed, ``formula=lambda i, L: i ** (−2 / L)``, fails with a
    relative error of exactly L − 1.

    Two results: the relative error of the measured distances from ``formula(i, L)`` (default ``L·i^{−2/L}``),
    and the fitted exponent of ``‖θ_i − θ̂‖²`` against i, which must be ``−2/L`` while ``‖A_i − Â‖_F`` falls like
    ``i^{−1}``. Tolerances: round-off of the P-term sum ``‖θ_i − θ̂‖²`` (relative), and for the slope
    ``2δ/ln(i_max/i_min)`` with δ that relative error bound.
    """
    from .analysis import explosion_distances, fitted_exponent

    formula = formula or (lambda i, L: L * i ** (-2.0 / L))
    e = explosion_distances(base, np.asarray(i_values, dtype=float))
    L = e["depth"]
    expected = formula(e["i"], L)
    rel = float(np.max(np.abs(e["dist_sq"] / expected - 1.0)))
    tol = roundoff_tolerance(1.0, base.arch.n_params)
    p = fitted_exponent(e["i"], e["dist_sq"])
    p_formula = fitted_exponent(e["i"], expected)
    slope_tol = 2.0 * tol / np.log(e["i"].max() / e["i"].min())
    details = {"depth": L, "rank": e["rank"], "i": e["i"].tolist(), "dist_sq": e["dist_sq"].tolist(),
               "dA": e["dA"].tolist(), "reconstruction_max": float(e["reconstruction"].max()),
               "imbalance_max": float(e["imbalance"].max()), "fitted_exponent": p,
               "dA_exponent": fitted_exponent(e["i"], e["dA"])}
    return [make_result("rank_jumps.explosion_distance",
                        "this project's balanced θᵢ with Aᵢ = Â + u vᵀ/i: ‖θᵢ − θ̂‖² = L·i⁻²ᐟᴸ "
                        "(i⁻²ᐟᴸ per layer; the reply prints the per-layer value)",
                        rel, tol, f"64·P·eps, P = {base.arch.n_params} terms in ‖θᵢ − θ̂‖² (relative)", "<=", details),
            make_result("rank_jumps.explosion_exponent",
                        "‖θᵢ − θ̂‖² ∝ i⁻²ᐟᴸ while ‖Aᵢ − Â‖ ∝ i⁻¹: parameters move much further than A",
                        abs(p - p_formula), slope_tol, "2·(relative round-off)/ln(i_max/i_min)", "<=",
                        {**details, "formula_exponent": p_formula})]


def check_imbalance_step(params: Params, problem: CompletionProblem, lr: float, weight_decay: float,
                         noise_factor: float = 1.0) -> CheckResult:
    """One SGD step on entry (i, j) maps each imbalance ``D_ℓ`` to ``(1 − 2ηγ)²D_ℓ + η²X_ℓ`` exactly.

    ``X_ℓ = G_{ℓ+1}ᵀG_{ℓ+1} − G_ℓG_ℓᵀ`` for the entry's data gradient G (:func:`~.analysis.sgd_imbalance_drive`):
    weight decay shrinks the imbalance, the data terms cancel to first order in η (the law of balance), and the
    η² term is what keeps SGD from being exactly balanced. For every observed entry the engine takes one forced
    step from the first run of ``params``; measured: the largest ``‖D_ℓ' − (c²D_ℓ + noise_factor·η²X_ℓ)‖_F`` over
    entries and layers. Tolerance: round-off of forming ``D`` from layers of spectral norm ≤ w (``64·d·eps·w²``,
    d the widest layer). ``noise_factor = 0`` (the GD law, "SGD keeps the balance") is the broken input.
    """
    from .analysis import sgd_imbalance_drive

    one = params.select([0])
    ws = [w[0] for w in one.layers()]
    drive = sgd_imbalance_drive(one, problem)
    c2 = (1.0 - 2.0 * lr * weight_decay) ** 2
    rows, cols, _ = problem.entries
    worst, wmax = 0.0, 0.0
    for k, (i, j) in enumerate(zip(rows, cols)):
        pool = np.zeros(problem.shape, dtype=bool)
        pool[i, j] = True
        after = run(one, problem, 1, method="forced", entries=pool, lr=lr, weight_decay=weight_decay, record_every=1,
                    record_layers=False).final
        vs = [v[0] for v in after.layers()]
        for ell in range(len(ws) - 1):
            D0 = ws[ell + 1].T @ ws[ell + 1] - ws[ell] @ ws[ell].T
            D1 = vs[ell + 1].T @ vs[ell + 1] - vs[ell] @ vs[ell].T
            worst = max(worst, float(np.linalg.norm(D1 - (c2 * D0 + noise_factor * lr**2 * drive[ell][k]))))
        wmax = max([wmax] + [float(np.linalg.norm(w, 2)) for w in ws + vs])
    width = max(params.arch.dims)
    eta_term = max(float(np.max(np.linalg.norm(x, axis=(1, 2)))) for x in drive) * lr**2
    return make_result("rank_jumps.imbalance_step",
                       "one SGD step on an entry maps Dₗ = Wₗ₊₁ᵀWₗ₊₁ − WₗWₗᵀ to (1 − 2ηγ)²Dₗ + η²Xₗ, "
                       "Xₗ = Gₗ₊₁ᵀGₗ₊₁ − GₗGₗᵀ (data cross terms cancel)",
                       worst, roundoff_tolerance(wmax**2, n_terms=width),
                       f"64·d·eps·max‖W‖₂², d = {width}: round-off of forming D before and after the step", "<=",
                       {"lr": lr, "weight_decay": weight_decay, "noise_factor": noise_factor,
                        "eta_sq_term_max": eta_term, "n_entries": int(rows.size)})


def check_sgd_imbalance(start: Params, problem: CompletionProblem, weight_decay: float, lrs=(0.075, 0.0375),
                        steps: int = 40_000, n_runs: int = 8, burn_in: int = 5_000, seed: int = 1, z: float = Z_MC,
                        scale=None) -> CheckResult:
    """At small η, the imbalance batch-1 SGD keeps near ``start`` is the η/γ-scale of the one-step law.

    For each η in ``lrs``: ``n_runs`` SGD runs from ``start`` (a minimum), the recorded ``max_ℓ ‖D_ℓ‖_F`` after
    ``burn_in`` steps (many relaxation times ``1/(4ηγ)``) averaged per run; their mean must lie between the
    ``lower`` and ``upper`` values of :func:`~.analysis.sgd_imbalance_scale` at ``start``, widened by ``z`` standard
    errors of the mean over runs. The derivation holds while the iterates stay near ``start``: small η (at the hot
    η = 0.3 the runs wander far from the minimum and keep far more imbalance). Measured: the largest
    excursion outside the widened interval (0 inside). ``scale(params, problem, lr, weight_decay) -> dict`` is
    injectable (a wrong prediction is the broken input).
    """
    from ..dln import replicate
    from .analysis import sgd_imbalance_scale

    scale = scale or sgd_imbalance_scale
    every = 50
    rows, worst = [], 0.0
    for lr in lrs:
        pred = scale(start, problem, lr, weight_decay)
        res = run(replicate(start.select([0]), n_runs), problem, steps, method="sgd", lr=lr, weight_decay=weight_decay,
                  seed=seed, record_every=every, record_layers=False)
        b = res.balancedness[:, res.steps >= burn_in]
        per_run = b.mean(axis=1)
        mean = float(per_run.mean())
        se = float(per_run.std(ddof=1) / np.sqrt(n_runs))
        lo, hi = pred["lower"] - z * se, pred["upper"] + z * se
        worst = max(worst, lo - mean, mean - hi)
        rows.append({"lr": lr, "measured_mean": mean, "standard_error": se, "lower": pred["lower"],
                     "upper": pred["upper"], "bound": pred["bound"], "measured_max": float(b.max())})
    return make_result("rank_jumps.sgd_imbalance",
                       "small η: SGD's mean imbalance lies between ‖E D‖ and sqrt(E‖D‖²) of the one-step law "
                       "D ← (1 − 2ηγ)²D + η²X, both of order η/γ",
                       max(worst, 0.0), 0.0, f"{z:g} standard errors of the mean over {n_runs} runs (in the interval)",
                       "<=", {"weight_decay": weight_decay, "rows": rows})


def check_eckart_young(A, r: int, n_candidates: int = 2000, seed: int = 0, bound=None) -> CheckResult:
    """Eckart–Young: no matrix of rank ≤ r is closer to A (spectral norm) than ``s_{r+1}(A)``; the truncated SVD is
    that close.

    Candidates: the truncated SVD, and ``n_candidates`` random rank-r matrices near it (its factors plus Gaussian
    noise at scales 10⁻³…1). Measured: ``min_B ‖A − B‖₂ − bound``; it must be ``≥ −`` round-off and the truncated
    SVD must attain it. ``bound(A, r)`` (default ``s_{r+1}(A)``) is injectable: ``s_r(A)`` is a broken input.
    """
    from .analysis import distance_to_rank

    A = check_array("A", A, ndim=2)
    d, A_r = distance_to_rank(A, r)
    b = d if bound is None else float(bound(A, r))
    rng = np.random.default_rng(seed)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    k = min(r, s.size)
    dists = [float(np.linalg.norm(A - A_r, 2))]
    for _ in range(check_int("n_candidates", n_candidates, minimum=1)):
        scale = 10.0 ** rng.uniform(-3, 0)
        X = U[:, :k] * s[:k] + scale * rng.normal(size=(A.shape[0], k))
        Y = Vt[:k] + scale * rng.normal(size=(k, A.shape[1]))
        dists.append(float(np.linalg.norm(A - X @ Y, 2)))
    tol = roundoff_tolerance(float(np.linalg.norm(A, 2)), max(A.shape))
    attained = abs(dists[0] - b)
    measured = min(min(dists) - b, tol - attained)
    return make_result("rank_jumps.eckart_young",
                       "min over rank-≤r B of ‖A − B‖₂ is sᵣ₊₁(A), attained by the truncated SVD",
                       measured, -tol, "−64·max(m,n)·eps·‖A‖₂ (SVD round-off)", ">=",
                       {"r": int(r), "s_r_plus_1": d, "bound": b, "closest_candidate": min(dists),
                        "truncated_svd_distance": dists[0], "n_candidates": len(dists)})


def check_origin_condition(problem: CompletionProblem, weight_decay_factors=(0.8, 1.25), depths=(2, 3, 4),
                           threshold=None) -> CheckResult:
    """θ = 0 is a local minimum of 𝓛_γ iff ``2γ > s_max(∇_A𝓛(0))`` at L = 2, and for every γ > 0 at L ≥ 3.

    At γ = factor·γ_c (γ_c = :func:`~.analysis.origin_threshold`, injectable as ``threshold(problem)``) for each
    factor, the Hessian's smallest eigenvalue (central differences of the package's gradient) must equal the
    prediction — ``2γ − s_max(G)`` at L = 2, ``2γ`` at L ≥ 3 — within the finite-difference bound, and its sign must
    be the prediction's. Measured: the largest error in units of that bound (≤ 1), a sign mismatch counting ∞.
    """
    from .analysis import origin_fit_gradient, origin_hessian_min_eig, origin_threshold

    g_c = origin_threshold(problem) if threshold is None else float(threshold(problem))
    s_max = float(np.linalg.norm(origin_fit_gradient(problem), 2))
    worst, rows = 0.0, []
    for L in depths:
        for f in weight_decay_factors:
            weight_decay = f * g_c
            eig, bound = origin_hessian_min_eig(problem, L, weight_decay)
            pred = 2 * weight_decay - s_max if L == 2 else 2 * weight_decay
            err = abs(eig - pred) / bound
            if np.sign(eig) != np.sign(2 * weight_decay - 2 * g_c if L == 2 else weight_decay):
                err = float("inf")
            worst = max(worst, err)
            rows.append({"depth": L, "weight_decay": weight_decay, "min_eig": eig, "predicted": pred,
                         "fd_bound": bound})
    return make_result("rank_jumps.origin_condition",
                       "L = 2: θ = 0 is a local minimum iff 2γ > s_max(∇𝓛(0)); L ≥ 3: for every γ > 0 (Hessian 2γI)",
                       worst, 1.0, "finite-difference error bound h²·|A*|·P + 64·P·eps/h, measured in its units",
                       "<=", {"gamma_c": g_c, "s_max": s_max, "rows": rows})


def check_right_rank(result, target_rank: int, name: str = "rank_jumps.all_observed_right_rank") -> CheckResult:
    """Every run of ``result`` ends at the target's rank (exact count of runs that do not; tolerance 0)."""
    wrong = int(np.sum(result.final_rank != int(target_rank)))
    return make_result(name, f"GD with small γ, η ends at the right rank {target_rank} (no rank-overestimating "
                       "minimum when every entry is observed)", wrong, 0.0, "exact integer count, no tolerance",
                       "<=", {"final_ranks": result.final_rank.tolist(), "runs": int(result.n_runs)})


def check_no_jumps(jump_steps, confidence: float = 0.95, name: str = "rank_jumps.no_jumps") -> CheckResult:
    """No run jumped (exact count, tolerance 0); details hold the one-sided upper bound on the per-run jump
    probability within the budget, ``1 − (1 − c)^{1/N}`` (Clopper–Pearson for 0 of N)."""
    from .analysis import zero_count_upper_bound

    js = np.asarray(jump_steps)
    n_jumps = int(np.sum(js >= 0))
    return make_result(name, "the hot phase produces no jump within the budget", n_jumps, 0.0,
                       "exact integer count, no tolerance", "<=",
                       {"runs": int(js.size), "confidence": confidence,
                        "jump_probability_upper_bound": zero_count_upper_bound(js.size, confidence)})


def check_memoryless(jump_steps, budget: int, level: float = 0.01) -> CheckResult:
    """The jump times fit an exponential law (memoryless): censored-exponential KS p-value ≥ ``level``.

    See :func:`~symsgd_core.core.stats.censored_exponential_ks` for the method (runs without a jump, ``< 0``, are
    censored). ``level`` = 0.01: a true exponential law fails this one time in a hundred (less, as the p-value is
    conservative); times clustered around one value fail.
    """
    ks = censored_exponential_ks(event_times(jump_steps), budget)
    return make_result("rank_jumps.memoryless_jumps",
                       "the waiting times to a jump follow an exponential law (censored at the budget)",
                       ks["pvalue"], level, f"KS test of the truncated exponential, significance level {level:g}",
                       ">=", ks)


def check_raising_noise_scaling(near: dict, tolerance: float | None = None) -> list[CheckResult]:
    """Near B_1 SGD's noise on rank-raising directions grows like ``a^{2(L−1)}``; its rank C ≤ N − 1 everywhere.

    ``near`` is :func:`~.analysis.raising_noise_near` on a grid of pushes a > 0. Results: the fitted exponent of the
    raising share against a versus ``2(L − 1)``, tolerance ``4·a_max²`` (the next-order terms of the per-entry
    gradients are O(a²) relative); and the largest numerical rank of C against ``N − 1`` (an artefact of N
    observed entries, true at every point).
    """
    from .analysis import fitted_exponent

    a, L = near["a"], near["depth"]
    ok = a > 0
    p = fitted_exponent(a[ok], near["share"][ok])
    tol = 4.0 * float(a[ok].max()) ** 2 if tolerance is None else float(tolerance)
    return [make_result("rank_jumps.raising_noise_scaling",
                        "near B₁ (every layer's s₂ = a) SGD noise on rank-raising directions has share ∝ a²⁽ᴸ⁻¹⁾",
                        abs(p - 2 * (L - 1)), tol, "4·a_max²: O(a²) relative next-order terms of the gradients", "<=",
                        {"fitted_exponent": p, "expected": 2 * (L - 1), "a": a.tolist(),
                         "share": near["share"].tolist()}),
            make_result("rank_jumps.noise_rank_bound", "with N observed entries rank C ≤ N − 1 at every point",
                        int(np.max(near["rank_C"])), near["n_observed"] - 1, "exact integer bound N − 1", "<=",
                        {"rank_C": near["rank_C"].tolist()})]


def check_layer_decay(record: ForcedRecord, run: int = 0, z: float = Z_MC) -> CheckResult:
    """Under forced sampling every layer's second singular value shrinks at the weight-decay rate or faster.

    Claim: the layers after the first shrink their second direction at the rate ``1 − 2ηγ`` per step (fitted
    exponent ``p_ℓ = 1`` within its standard errors — a fit, not an exact law: only the unsampled row of ``W_L``
    shrinks by exactly ``1 − 2ηγ`` per step, :func:`check_exact_decay`; their data updates reach the second
    direction only through other layers' second directions), and the first layer at least that fast
    (``p_1 ≥ 1``: its update touches every input column). Exponents from
    :meth:`~.experiments.ForcedRecord.layer_decay_exponents`; tolerance ``z`` regression standard errors (the sampled
    entry is random). Measured: the largest violation in units of that tolerance
    (≤ 1 passes); a layer without usable records counts as a failure (NaN).
    """
    p, se = record.layer_decay_exponents(run)
    tol = z * se + roundoff_tolerance(1.0, record.steps.size)
    worst = max(float(np.max(np.abs(p[1:] - 1.0) / tol[1:])), float((1.0 - p[0]) / tol[0]))
    return make_result("rank_jumps.layer_decay",
                       "forced sampling: s₂(Wₗ) ∝ (1 − 2ηγ)ᵗ for ℓ ≥ 2 (pₗ = 1), and p₁ ≥ 1 for the first layer",
                       worst, 1.0, f"{z:g} regression standard errors of each fitted exponent (+ round-off), in "
                       "units of that tolerance", "<=",
                       {"exponents": p.tolist(), "standard_errors": se.tolist(), "sum_of_exponents": float(np.sum(p))})
