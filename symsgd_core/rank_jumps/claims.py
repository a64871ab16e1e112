"""The claims behind each figure and section of Notebook 04, as checks of the experiments' results.

Each function takes the result objects of :mod:`symsgd_core.rank_jumps.experiments` (and the few parameters a
claim needs, such as the B_r criterion) and returns the :class:`~symsgd_core.core.checking.CheckResult` rows the
notebook asserts with ``assert_claims``. Exact facts (ranks, counts, "never returns") are measured as integer counts
with tolerance 0; inequalities keep the notebook's bounds (a strict ``<`` or ``>`` is the nearest float beyond the
bound, so equality fails as it did). A claim that measured nothing (no run, no record, an empty grid) fails: it
reports a NaN measurement, never a pass by default.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.checking import CheckResult, make_result, roundoff_tolerance
from ..dln import (
    DEFAULT_B_CRITERION,
    DEFAULT_RANK_TOL,
    BrCriterion,
    CompletionProblem,
    Params,
    in_B,
    numerical_rank,
    smallest_B,
)
from .analysis import (
    barrier_width,
    basin_radius,
    distance_to_rank,
    min_norm_completion,
    origin_is_local_min,
    sgd_imbalance_scale,
)
from .checks import (
    check_eckart_young,
    check_exact_decay,
    check_layer_decay,
    check_memoryless,
    check_no_jumps,
    check_no_returns,
    check_raising_noise,
    check_raising_noise_scaling,
)
from .experiments import EPSILON_EXPERIMENT as EXP
from .experiments import (
    AnnealResult,
    BasinResult,
    EnsembleResult,
    FullObservationResult,
    LangevinResult,
    MechanismResult,
    TrapResult,
)

#: Digits as Unicode subscripts (``s₂``), for an index known only at run time.
_SUBSCRIPT_DIGITS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")

__all__ = [
    "MIN_NORM_EPS_GRID", "anneal_claims", "basin_claims", "eckart_young_claims", "ensemble_claims",
    "exercise_claims", "explosion_claims", "failure_mode_claims", "full_observation_claims", "langevin_claims",
    "mechanism_claims", "min_norm_claims", "minima_claims", "noise_claims", "penalty_claims", "step_size_claims",
    "trap_claims",
]

#: The value a claim reports when it had nothing to measure (it then fails).
NOTHING_MEASURED = float("nan")

#: §0: η·λ_max of the demonstrations (hot η, top Hessian eigenvalue of 𝓛_γ at the rank-2 minimum) as the text quotes
#: it, to one decimal.
HOT_STEP_CURVATURE = 1.2

#: §6: the grid of ε on which the minimum-norm completion's rank is read (rank 2 up to 0.28, rank 1 from 0.30).
MIN_NORM_EPS_GRID = tuple(float(e) for e in np.round(np.arange(0.02, 0.41, 0.02), 2))

_EXACT = "exact integer count, no tolerance"


def _count(name: str, claim: str, bad: int, total: int, details: dict | None = None) -> CheckResult:
    """``bad`` of ``total`` cases break the claim: must be 0; ``total == 0`` (nothing measured) fails."""
    measured = float(bad) if total > 0 else NOTHING_MEASURED
    return make_result(name, claim, measured, 0.0, _EXACT, "<=", {"cases": int(total), **(details or {})})


def _at_least(name: str, claim: str, count: int, minimum: int, details: dict | None = None) -> CheckResult:
    """An exact count that must reach ``minimum``."""
    return make_result(name, claim, float(count), float(minimum), "exact integer count", ">=", details)


def _below(bound: float) -> float:
    """The largest float < ``bound``: ``measured <= _below(b)`` is ``measured < b`` exactly."""
    return float(np.nextafter(float(bound), -np.inf))


def _above(bound: float) -> float:
    """The smallest float > ``bound``: ``measured >= _above(b)`` is ``measured > b`` exactly."""
    return float(np.nextafter(float(bound), np.inf))


def _max(a) -> float:
    """Largest value of ``a`` (NaN if empty or NaN anywhere: a claim on nothing fails)."""
    a = np.asarray(a, dtype=float)
    return float(np.max(a)) if a.size else NOTHING_MEASURED


def _nothing_if(row: CheckResult, empty: bool) -> CheckResult:
    """``row`` with a NaN measurement (failed) when it had nothing to measure."""
    return dataclasses.replace(row, measured=NOTHING_MEASURED, passed=False) if empty else row


def _renamed(row: CheckResult, label: str) -> CheckResult:
    return dataclasses.replace(row, name=f"{row.name}[{label}]")


# ---------------------------------------------------------------------------------------------------- §0

def minima_claims(start: Params, start_rank: int, rank_one: Params, problem: CompletionProblem,
                  criterion: BrCriterion = DEFAULT_B_CRITERION, lr: float = EXP.lr_hot,
                  weight_decay: float = EXP.weight_decay_hot, scale_range: tuple = (1.3, 1.6)) -> list[CheckResult]:
    """§0: A* has rank 1 and GD's minimum ``start`` rank 2 (rank-overestimating); ``start`` is in B_2 but not B_1,
    ``rank_one`` in B_1; the layers' own scale ``max_ℓ ‖W_ℓW_ℓᵀ‖_F`` at both minima lies in ``scale_range``, below ε₂
    (so ε₂ is not small on that scale). ``lr``, ``weight_decay``: the hot phase's η, γ (where the scale is read)."""
    target_rank = int(numerical_rank(np.linalg.svd(problem.target, compute_uv=False)))
    rows = [_count("rank_jumps.minima.ranks",
                   "A* has rank 1 and GD's minimum rank 2: a rank-overestimating minimum",
                   int(target_rank != 1) + int(start_rank != 2), 2,
                   {"target_rank": target_rank, "start_rank": int(start_rank)})]
    member = [(bool(in_B(start, 1, criterion)[0]), False), (bool(in_B(start, 2, criterion)[0]), True),
              (bool(in_B(rank_one, 1, criterion)[0]), True)]
    rows.append(_count("rank_jumps.minima.B_membership",
                       "GD's rank-2 minimum is in B₂ and not in B₁; the rank-1 minimum is in B₁",
                       sum(got != want for got, want in member), len(member),
                       {"start_in_B1": member[0][0], "start_in_B2": member[1][0], "rank_one_in_B1": member[2][0]}))
    scales = [sgd_imbalance_scale(p, problem, lr, weight_decay)["layer_scale"] for p in (start, rank_one)]
    lo, hi = scale_range
    src = "the notebook's stated range of the printed scales (≈ 1.4 and 1.5)"
    rows.append(make_result("rank_jumps.minima.layer_scale_low",
                            f"the layer scale maxₗ ‖WₗWₗᵀ‖ (Frobenius) at both minima exceeds {lo:g}",
                            min(scales), _above(lo), src, ">=", {"scales": scales}))
    rows.append(make_result("rank_jumps.minima.layer_scale_high",
                            f"the layer scale maxₗ ‖WₗWₗᵀ‖ (Frobenius) at both minima is below {hi:g}",
                            max(scales), _below(hi), src, "<=", {"scales": scales}))
    rows.append(make_result("rank_jumps.minima.eps2_on_layer_scale",
                            f"ε₂ exceeds {hi:g}, the top of the layers' own scale: not small on that scale",
                            criterion.eps_balance, _above(hi), "the same stated range", ">="))
    return rows


# ---------------------------------------------------------------------------------------------------- §1

def penalty_claims(weight_decays=(1e-3, 0.027, 0.5), gains=(0.01, 0.3, 3.0),
                   depths=tuple(range(3, 9))) -> list[CheckResult]:
    """§1: for L ≥ 3 (``depths``) the barrier width δ* > 0 and θ = 0 is a local minimum for every γ in
    ``weight_decays`` and fit gain g in ``gains``; for L = 2 there is no barrier once g > 2γ (δ* = 0, else ∞) and θ = 0
    is not a minimum (the 1×1 chain, γ < 1)."""
    widths = [barrier_width(L, weight_decay, g) for weight_decay in weight_decays for g in gains for L in depths]
    traps = [origin_is_local_min(L, weight_decay) for weight_decay in weight_decays for L in depths]
    l2 = [(barrier_width(2, weight_decay, g),
           0.0 if g > 2 * weight_decay else np.inf) for weight_decay in weight_decays for g in gains]
    l2_origin = [origin_is_local_min(2, weight_decay) for weight_decay in weight_decays]
    return [
        make_result("rank_jumps.penalty.barrier_deep",
                    "L ≥ 3: a new direction meets a barrier of positive width δ* for every γ and g on the grid",
                    min(widths) if widths else NOTHING_MEASURED, _above(0.0), "strictly positive (δ* > 0)", ">=",
                    {"cases": len(widths)}),
        _count("rank_jumps.penalty.origin_deep", "L ≥ 3: θ = 0 is a local minimum for every γ > 0 on the grid",
               sum(not t for t in traps), len(traps)),
        _count("rank_jumps.penalty.no_barrier_L2",
               "L = 2: no barrier once g > 2γ (δ* = 0), and δ* = ∞ (a new direction never pays) when g ≤ 2γ",
               sum(got != want for got, want in l2), len(l2)),
        _count("rank_jumps.penalty.origin_L2", "L = 2: θ = 0 is not a local minimum of the 1×1 chain for γ < 1",
               sum(bool(t) for t in l2_origin), len(l2_origin)),
    ]


# ------------------------------------------------------------------------------------------- the appendix

def explosion_claims(explosion: list[CheckResult], as_printed: CheckResult, depth: int) -> list[CheckResult]:
    """Appendix: the explosion rows of :func:`~.checks.check_explosion`, and the reply's formula as printed
    (``as_printed``: the same check with ``i^{−2/L}`` as the total) fails with a relative error of exactly L − 1."""
    rows = list(explosion)
    rows.append(_count("rank_jumps.explosion.as_printed_fails",
                       "the reply's formula as printed, ‖θᵢ − θ̂‖² = i⁻²ᐟᴸ, fails this check",
                       int(bool(as_printed.passed)), 1, {"relative_error": as_printed.measured}))
    rows.append(make_result("rank_jumps.explosion.missing_factor",
                            "the printed formula's relative error is exactly L − 1: it drops the factor L",
                            abs(as_printed.measured - (depth - 1)), _below(1e-12),
                            "1e-12 (strict): far above the float64 round-off of a relative error of order L", "<=",
                            {"relative_error": as_printed.measured, "depth": int(depth)}))
    return rows


def eckart_young_claims(A, r: int = 1, rank_tol: float = DEFAULT_RANK_TOL, margin: float = 100.0) -> list[CheckResult]:
    """Appendix: Eckart–Young at ``A`` (:func:`~.checks.check_eckart_young`), and ``A`` is more than ``margin``
    times the rank threshold away from every matrix of rank ≤ r (so every threshold in between gives the same rank)."""
    dist, _ = distance_to_rank(A, r)
    return [check_eckart_young(A, r),
            make_result("rank_jumps.eckart_young.margin",
                        f"GD's minimum is farther than {margin:g} × the rank threshold from every rank-{r} matrix "
                        f"(s{str(r + 1).translate(_SUBSCRIPT_DIGITS)}(A) / threshold)",
                        dist / rank_tol, _above(margin), f"{margin:g}: the margin the notebook states (strict)", ">=",
                        {"distance": dist, "rank_tol": rank_tol})]


def full_observation_claims(result: FullObservationResult) -> list[CheckResult]:
    """Appendix: with every entry observed GD at small γ, η ends at the target's rank in every run; with three entries
    (the ε-completion) at rank 2 in every run (a rank-overestimating minimum traps it)."""
    full, partial = result.full, result.partial
    return [
        _count("rank_jumps.all_observed_right_rank",
               f"all four entries observed: GD with small γ, η ends at the right rank {result.target_rank} in every "
               "run (no rank-overestimating minimum)", int(np.sum(full.final_rank != result.target_rank)),
               full.n_runs, {"final_ranks": full.final_rank.tolist()}),
        _count("rank_jumps.three_observed_trapped",
               "three entries observed: the same GD ends at rank 2 in every run (a rank-overestimating minimum)",
               int(np.sum(partial.final_rank != 2)), partial.n_runs, {"final_ranks": partial.final_rank.tolist()}),
    ]


# ---------------------------------------------------------------------------------------------------- §0

def trap_claims(result: TrapResult, criterion: BrCriterion = DEFAULT_B_CRITERION) -> list[CheckResult]:
    """§0: GD stays at the rank-2 minimum (and in B_2 \\ B_1), at least one SGD run jumps, no run returns, every
    jumped run stays in B_1, and neither fails the balance test (imbalance ≤ ε₂)."""
    gd, sgd = result.gd, result.sgd
    jumped = np.flatnonzero(sgd.jump_step(1) >= 0)
    b_gd = smallest_B(gd.in_B) if gd.in_B is not None else np.zeros((0, 0))
    left = 0
    if sgd.in_B is not None:
        b_sgd = smallest_B(sgd.in_B)
        for k in jumped:
            first = int(np.argmax(b_sgd[k] == 1))
            left += int(not np.all(b_sgd[k, first:] == 1))
    imbalance = max(_max(gd.balancedness), _max(sgd.balancedness))
    return [
        _count("rank_jumps.trap.start_rank", "the start (GD's converged minimum) has rank 2",
               int(result.start_rank != 2), 1, {"start_rank": int(result.start_rank)}),
        _count("rank_jumps.trap.gd_stays", "GD stays at rank 2 at every record", int(np.sum(gd.rank != 2)),
               gd.rank.size),
        _at_least("rank_jumps.trap.sgd_jumps", "at least one SGD run jumps to rank 1 from the same parameters",
                  jumped.size, 1, {"runs": int(sgd.n_runs)}),
        _nothing_if(check_no_returns(sgd), sgd.n_runs == 0),
        _count("rank_jumps.trap.gd_in_B2", "GD's Bᵣ trace stays at B₂ (in B₂, not in B₁) at every record",
               int(np.sum(b_gd != 2)), b_gd.size),
        _count("rank_jumps.trap.sgd_stays_in_B1", "every SGD run that jumped is in B₁ from its first record there on",
               left, jumped.size if sgd.in_B is not None else 0),
        make_result("rank_jumps.trap.balance_test",
                    "the balance test never fails: maxₗ ‖Wₗ₊₁ᵀWₗ₊₁ − WₗWₗᵀ‖ (Frobenius) ≤ ε₂ for GD and SGD",
                    imbalance, criterion.eps_balance, "ε₂ of the Bᵣ criterion", "<="),
    ]


def step_size_claims(lam_max: float, lr: float = EXP.lr_hot, quoted: float = HOT_STEP_CURVATURE) -> list[CheckResult]:
    """§0: the demonstrations' step, ``η·λ_max`` (``lam_max``: the largest Hessian eigenvalue of 𝓛_γ at the rank-2
    minimum, :func:`~.analysis.loss_hessian_top_eigenvalue`; ``lr``: their η), is the ``quoted`` value of the text
    to its one decimal, above 1 (not a small step: outside the theorem's "small enough η") and below GD's stability
    limit 2 (GD's rank-2 minimum, the trap, is stable at this η)."""
    x = float(lr) * float(lam_max)
    return [
        make_result("rank_jumps.step_size.quoted", f"η·λₘₐₓ at the demonstrations' η = {lr:g} is the text's "
                    f"{quoted:g} to one decimal (|η·λₘₐₓ − {quoted:g}|)", abs(x - quoted), 0.05,
                    "half a unit of the quoted decimal", "<=", {"lr": float(lr), "lam_max": float(lam_max),
                                                                "eta_lam_max": x}),
        make_result("rank_jumps.step_size.not_small", "η·λₘₐₓ > 1: not a small step (outside the theorem's small η)",
                    x, _above(1.0), "1: the step reaches the curvature scale 1/λ_max", ">="),
        make_result("rank_jumps.step_size.gd_stable", "η·λₘₐₓ < 2: GD is stable at the rank-2 minimum", x,
                    _below(2.0), "GD's stability limit 2", "<="),
    ]


# ---------------------------------------------------------------------------------------------------- §2

def ensemble_claims(result: EnsembleResult, budget: int, criterion: BrCriterion = DEFAULT_B_CRITERION,
                    trap: TrapResult | None = None) -> list[CheckResult]:
    """§2: no run returns; every run starts at rank 2 and the rank-2 fraction never increases; no collapse or
    divergence; the waiting times are exponential (memoryless); at the end B_1 membership and rank 1 agree; the
    balance test never fails, and ε₂ sits above the largest imbalance of hot SGD (this ensemble and ``trap``'s SGD)
    with less than a factor 2 to spare."""
    sgd = result.sgd
    rank = sgd.rank
    frac2 = np.mean(rank == 2, axis=0) if rank.size else np.zeros(0)
    b1_agree = 0
    if sgd.in_B is not None:
        b1 = smallest_B(sgd.in_B) == 1
        b1_agree = int(np.sum(b1[:, -1] != (sgd.final_rank == 1)))
    hot = max(_max(sgd.balancedness), _max(trap.sgd.balancedness) if trap is not None else -np.inf)
    eps2 = criterion.eps_balance
    return [
        _nothing_if(check_no_returns(sgd, name="rank_jumps.no_returns_ensemble"), sgd.n_runs == 0),
        _count("rank_jumps.ensemble.start_rank", "every run starts at rank 2", int(np.sum(rank[:, 0] != 2)),
               sgd.n_runs),
        _count("rank_jumps.ensemble.one_way",
               "the fraction of runs at rank 2 never increases from one record to the next: jumps are one-way",
               int(np.sum(np.diff(frac2) > 0)), max(frac2.size - 1, 0)),
        _count("rank_jumps.ensemble.no_collapse",
               "no run collapses to A = 0 (rank 0) or diverges at any record at these settings",
               int(np.sum((rank == 0) | (rank < 0))), rank.size),
        check_memoryless(result.jump_steps, budget) if np.size(result.jump_steps) else
        make_result("rank_jumps.memoryless_jumps", "the waiting times to a jump follow an exponential law (censored "
                    "at the budget)", NOTHING_MEASURED, 0.01, "no run to test", ">="),
        _count("rank_jumps.ensemble.B1_is_rank1", "at the end a run is in B₁ exactly when it is at rank 1",
               b1_agree, sgd.n_runs if sgd.in_B is not None else 0),
        make_result("rank_jumps.ensemble.balance_test",
                    "the balance test never fails: every run's imbalance ≤ ε₂ at every record",
                    _max(sgd.balancedness), eps2, "ε₂ of the Bᵣ criterion", "<="),
        make_result("rank_jumps.ensemble.eps2_margin",
                    "ε₂ has less than a factor 2 to spare: the largest imbalance of hot SGD (§0 and §2) exceeds ε₂/2",
                    hot, _above(eps2 / 2), "ε₂/2 (strict)", ">=", {"eps2": eps2}),
        make_result("rank_jumps.ensemble.eps2_above_hot",
                    "ε₂ is above the largest imbalance of hot SGD (§0 and §2)",
                    hot, eps2, "ε₂ of the Bᵣ criterion", "<="),
    ]


# ---------------------------------------------------------------------------------------------------- §3

def mechanism_claims(result: MechanismResult, problem: CompletionProblem) -> list[CheckResult]:
    """§3: the unsampled row decays exactly (:func:`~.checks.check_exact_decay`); the forced phase ends at rank 1;
    row 0 holds 2 of the 3 observed entries (a k-step stretch of it has probability (2/3)^k); B_1 is absorbing for GD
    and SGD afterwards; every layer's s₂ shrinks at the weight-decay rate (:func:`~.checks.check_layer_decay`)."""
    after = [r.rank for r in (result.gd, result.sgd) if r is not None]
    n_after = sum(r.size for r in after) if len(after) == 2 else 0
    share = problem.row_entries([0]).sum() / problem.n_observed
    return [
        check_exact_decay(result.forced, result.depth),
        _count("rank_jumps.mechanism.forced_rank", "the forced phase ends at rank 1", int(result.forced_rank != 1), 1,
               {"forced_rank": int(result.forced_rank)}),
        make_result("rank_jumps.mechanism.row_share",
                    "row 0 holds 2 of the 3 observed entries: a k-step stretch samples only it with "
                    "probability (2/3)ᵏ",
                    abs(share - 2 / 3), 0.0, "exact: a ratio of integer counts", "<=", {"share": float(share)}),
        _count("rank_jumps.mechanism.absorbed", "after the forced phase GD and SGD stay at rank 1 at every record "
               "(B₁ is absorbing for both)", sum(int(np.sum(r != 1)) for r in after), n_after),
        check_layer_decay(result.forced),
    ]


# ---------------------------------------------------------------------------------------------------- §4

def basin_claims(result: BasinResult, weight_decay: float, depth: int,
                 criterion: BrCriterion = DEFAULT_B_CRITERION) -> list[CheckResult]:
    """§4: pushes ≤ a_c/2 are pulled back to rank 1; the measured edge lies in (a_c/2, 2a_c]; the chosen push (last)
    is inside the basin; ε₁ lies inside the measured edge; a_c ∝ γ^{1/(L−2)} (at γ/100 it is a_c·100^{−1/(L−2)}).
    ``weight_decay``, ``depth``: the γ and L of the run (for the scaling row)."""
    pushes, ranks, a_c = result.alphas[:-1], result.final_rank[:-1], result.alpha_c
    lo, hi = result.boundary
    small = pushes <= 0.5 * a_c
    a_small = basin_radius(depth, weight_decay / 100, result.slope)
    expected = a_c * 100.0 ** (-1.0 / (depth - 2))
    return [
        _count("rank_jumps.basin.small_pushes_return",
               "every push a ≤ half the first-order basin radius is pulled back to rank 1",
               int(np.sum(ranks[small] != 1)), int(np.sum(small))),
        make_result("rank_jumps.basin.edge_low", "the measured basin edge lies above half the first-order basin radius",
                    hi, _above(0.5 * a_c),
                    "half the first-order basin radius: within a factor 2 of the first-order estimate (strict)", ">=",
                    {"a_c": a_c, "hi": hi}),
        make_result("rank_jumps.basin.edge_high",
                    "the measured basin edge lies at or below twice the first-order basin radius", hi, 2.0 * a_c,
                    "twice the first-order basin radius: within a factor 2 of the first-order estimate", "<=",
                    {"a_c": a_c, "hi": hi}),
        _count("rank_jumps.basin.chosen_push_inside", "the chosen push is inside the basin (ends at rank 1)",
               int(result.final_rank[-1] != 1) if result.final_rank.size else 0, int(result.final_rank.size > 0),
               {"push": float(result.alphas[-1]) if result.alphas.size else NOTHING_MEASURED}),
        make_result("rank_jumps.basin.eps1_inside", "this project's ε₁ lies inside the measured basin edge (ε₁ < lo)",
                    lo, _above(criterion.eps_rank), "ε₁ of the Bᵣ criterion (strict)", ">=",
                    {"eps_rank": criterion.eps_rank}),
        make_result("rank_jumps.basin.radius_scaling",
                    "the first-order basin radius ∝ γ¹ᐟ⁽ᴸ⁻²⁾: at γ/100 the first-order radius is the radius at γ "
                    "times 100⁻¹ᐟ⁽ᴸ⁻²⁾ (a tenth of it at L = 4)",
                    abs(a_small - expected), _below(1e-12 * a_c),
                    "1e-12 × the first-order basin radius (strict): far above the float64 round-off of the closed "
                    "form", "<=",
                    {"a_c_small": a_small, "expected": expected}),
    ]


# ---------------------------------------------------------------------------------------------------- §6

def anneal_claims(result: AnnealResult, small_eps_minima: dict, quiet: EnsembleResult) -> list[CheckResult]:
    """§6: after annealing GD keeps rank 2 and every SGD run rank 1; the polished losses are ordered as the two minima;
    at the default ε and cold γ the rank-1 minimum is lower, at ε = 0.1 (``small_eps_minima``) the rank-2 one; the
    hot phase at ε = 0.1 (``quiet``) produces no jump (:func:`~.checks.check_no_jumps`)."""
    pr, pl, mins = result.polished_rank, result.polished_loss, result.minima
    wrong = int(pr[0] != 2) + int(np.sum(pr[1:] != 1)) if pr.size > 1 else 0
    rank1_lower = mins["rank1"] < mins["rank2"]
    runs_agree = int((pl[1:].max() < pl[0]) != rank1_lower) if pl.size > 1 else 0
    return [
        _count("rank_jumps.anneal.ranks", "after hot-then-cold GD keeps rank 2 and every SGD run rank 1", wrong,
               pr.size if pr.size > 1 else 0, {"polished_rank": pr.tolist()}),
        _count("rank_jumps.anneal.runs_match_minima",
               "the polished runs are ordered as the minima they sit in: SGD's losses below GD's exactly when the "
               "rank-1 minimum is lower", runs_agree, int(pl.size > 1)),
        make_result("rank_jumps.anneal.rank1_lower",
                    "at the default ε and the cold γ the rank-1 minimum has the lower 𝓛ᵧ (rank-1 minus rank-2 < 0)",
                    mins["rank1"] - mins["rank2"], _below(0.0), "strictly negative", "<=", dict(mins)),
        make_result("rank_jumps.anneal.rank2_lower_small_eps",
                    "at ε = 0.1 and the cold γ the rank-2 minimum has the lower 𝓛ᵧ (rank-2 minus rank-1 < 0)",
                    small_eps_minima["rank2"] - small_eps_minima["rank1"], _below(0.0), "strictly negative", "<=",
                    dict(small_eps_minima)),
        check_no_jumps(quiet.jump_steps) if np.size(quiet.jump_steps) else
        make_result("rank_jumps.no_jumps", "the hot phase produces no jump within the budget", NOTHING_MEASURED, 0.0,
                    _EXACT, "<=", {"runs": 0}),
    ]


def min_norm_claims(sweep: list[dict], eps: float, depth: int, eps_grid=MIN_NORM_EPS_GRID,
                    last_rank2: float = 0.28, first_rank1: float = 0.30) -> list[CheckResult]:
    """§6: the minimum-norm completion has rank 2, 2, 1 at ε = 0.1, 0.2, 0.3, and on ``eps_grid`` rank 2 for every
    ε ≤ ``last_rank2`` and rank 1 for every ε ≥ ``first_rank1``; along the cold-γ ``sweep`` (at ``eps``) each minimum's
    𝓛_γ is at most γ × the penalty of its exact completion (feasible, so optimisation can only do better); at the
    first γ the rank-1 minimum is lower, at the last the rank-2 one."""
    examples = [(min_norm_completion(e, depth)["rank"], want) for e, want in ((0.1, 2), (0.2, 2), (0.3, 1))]
    grid = np.asarray(eps_grid, dtype=float)
    ranks = np.array([min_norm_completion(e, depth)["rank"] for e in grid])
    judged = (grid <= last_rank2) | (grid >= first_rank1)
    wrong = int(np.sum((ranks != 2) & (grid <= last_rank2)) + np.sum((ranks != 1) & (grid >= first_rank1)))
    mn = min_norm_completion(eps, depth)
    excess = [row[k] - row["weight_decay"] * mn[f"penalty_{k}"] for row in sweep for k in ("rank1", "rank2")]
    return [
        _count("rank_jumps.min_norm.examples",
               "the minimum-norm completion has rank 2 at ε = 0.1 and 0.2, rank 1 at 0.3",
               sum(got != want for got, want in examples), len(examples)),
        _count("rank_jumps.min_norm.threshold",
               f"on the ε grid the minimum-norm completion has rank 2 for every ε ≤ {last_rank2:g} and rank 1 for "
               f"every ε ≥ {first_rank1:g}", wrong, int(np.sum(judged)), {"ranks": ranks.tolist()}),
        make_result("rank_jumps.cold_sweep.feasible",
                    "at every cold γ each minimum's 𝓛ᵧ is at most γ × the penalty of its exact completion",
                    _max(excess), 0.0, "exact: an exact completion is feasible, optimisation only lowers 𝓛ᵧ", "<=",
                    {"weight_decays": [row["weight_decay"] for row in sweep]}),
        make_result("rank_jumps.cold_sweep.first_rank1",
                    "at the largest cold γ the rank-1 minimum is lower (rank-1 minus rank-2 < 0)",
                    sweep[0]["rank1"] - sweep[0]["rank2"] if sweep else NOTHING_MEASURED, _below(0.0),
                    "strictly negative", "<="),
        make_result("rank_jumps.cold_sweep.last_rank2",
                    "at the smallest cold γ the rank-2 minimum is lower, as the minimum-norm completion "
                    "(rank-2 minus rank-1 < 0)",
                    sweep[-1]["rank2"] - sweep[-1]["rank1"] if sweep else NOTHING_MEASURED, _below(0.0),
                    "strictly negative", "<="),
    ]


# ---------------------------------------------------------------------------------------------------- §5

def _first_low_rank(result) -> float:
    """First recorded step at rank ≤ 1 over the runs (NaN if no run got there)."""
    hits = [result.steps[np.argmax(row <= 1)] for row in result.rank if np.any(row <= 1)]
    return float(min(hits)) if hits else NOTHING_MEASURED


def langevin_claims(matched: LangevinResult, hot: LangevinResult, hot_minima: dict) -> list[CheckResult]:
    """§5: SGD never goes up and has no noise on rank-raising directions (both runs); at the matched τ Langevin also
    leaves rank 2, does not come back within the budget, and here leaves sooner than SGD; 10× hotter it goes back up
    and stays less at low rank; at the hot γ the rank-1 minimum is lower (``hot_minima``); Langevin's rank-1 states
    keep a noise floor on s₂(A) while SGD's are at round-off."""
    rows = []
    ups = [int(np.sum(L.sgd_transitions[1])) for L in (matched, hot)]
    runs = sum(L.sgd.n_runs for L in (matched, hot))
    rows.append(_count("rank_jumps.langevin.sgd_never_up", "SGD never moves up in rank (both runs)", sum(ups), runs))
    for label, L in (("matched", matched), ("10x hotter", hot)):
        rows.append(_renamed(check_raising_noise(L.spectrum, L.rank1_point.arch.n_params), label))
    down_l, up_l = (int(np.sum(t)) for t in matched.langevin_transitions)
    rows.append(_at_least("rank_jumps.langevin.leaves_rank2", "at the matched τ Langevin also leaves rank 2",
                          down_l, 1))
    rows.append(_count("rank_jumps.langevin.no_return",
                       "at the matched τ Langevin does not come back up within this budget", up_l,
                       matched.langevin.n_runs))
    first_l, first_s = _first_low_rank(matched.langevin), _first_low_rank(matched.sgd)
    rows.append(make_result("rank_jumps.langevin.sooner",
                            "at the matched τ Langevin reaches rank ≤ 1 sooner than SGD (first steps: Langevin "
                            "minus SGD < 0)", first_l - first_s, _below(0.0), "strictly negative (steps)", "<=",
                            {"first_langevin": first_l, "first_sgd": first_s}))
    rows.append(_at_least("rank_jumps.langevin.hot_goes_up", "10× hotter, Langevin goes back up in rank",
                          int(np.sum(hot.langevin_transitions[1])), 1))
    stay = np.asarray(hot.stay_low_rank[1], dtype=float)
    stay_mean = float(np.nanmean(stay)) if np.any(np.isfinite(stay)) else NOTHING_MEASURED
    rows.append(make_result("rank_jumps.langevin.hot_weaker",
                            "10× hotter, Langevin spends less than all its time at rank ≤ 1 after the first visit",
                            stay_mean, _below(1.0), "below 1 (strict)", "<="))
    rows.append(make_result("rank_jumps.langevin.hot_minima",
                            "at the hot γ the rank-1 minimum is lower (rank-1 minus rank-2 < 0)",
                            hot_minima["rank1"] - hot_minima["rank2"], _below(0.0), "strictly negative", "<=",
                            dict(hot_minima)))
    lres, sres = matched.langevin, matched.sgd
    s2_l = lres.singular_values[..., 1][lres.rank == 1]
    s2_s = sres.singular_values[..., 1][sres.rank == 1]
    floor = roundoff_tolerance(_max(sres.singular_values[..., 0]))
    med_s = float(np.median(s2_s)) if s2_s.size else NOTHING_MEASURED
    med_l = float(np.median(s2_l)) if s2_l.size else NOTHING_MEASURED
    rows.append(make_result("rank_jumps.langevin.sgd_at_roundoff",
                            "SGD's rank-1 states have s₂(A) at round-off (median ≤ 64·eps·max s₁)", med_s, floor,
                            "float64 round-off 64·eps·max s₁(A)", "<="))
    rows.append(make_result("rank_jumps.langevin.noise_floor",
                            "Langevin's rank-1 states keep a noise floor: 10⁻³ × their median s₂(A) is above "
                            "the round-off level", 1e-3 * med_l, _above(floor), "64·eps·max s₁(A) (strict)", ">=",
                            {"median_langevin": med_l}))
    return rows


def noise_claims(near: dict, at_rank2: dict, cold_minima: dict, hot_minima: dict) -> list[CheckResult]:
    """§5: the raising share near B_1 scales like a^{2(L−1)} and rank C ≤ N − 1 there
    (:func:`~.checks.check_raising_noise_scaling`), also at the rank-2 minimum (``at_rank2``); at ε = 0.1 the rank-2
    minimum is lower at the cold γ (``cold_minima``), the rank-1 one at the hot γ (``hot_minima``)."""
    rank_c = np.asarray(at_rank2["rank_C"])
    return [
        *check_raising_noise_scaling(near),
        make_result("rank_jumps.noise_rank_bound_rank2", "at the rank-2 minimum too, rank C ≤ N − 1 (the artefact)",
                    _max(rank_c), at_rank2["n_observed"] - 1, "exact integer bound N − 1", "<=",
                    {"rank_C": rank_c.tolist()}),
        make_result("rank_jumps.noise.cold_rank2_lower",
                    "ε = 0.1, cold γ: the rank-2 minimum is lower (rank-2 minus rank-1 < 0), so Langevin's small-τ "
                    "law would favour rank 2", cold_minima["rank2"] - cold_minima["rank1"], _below(0.0),
                    "strictly negative", "<=", dict(cold_minima)),
        make_result("rank_jumps.noise.hot_rank1_lower",
                    "ε = 0.1, hot γ: the rank-1 minimum is still lower (rank-1 minus rank-2 < 0)",
                    hot_minima["rank1"] - hot_minima["rank2"], _below(0.0), "strictly negative", "<=",
                    dict(hot_minima)),
    ]


# ---------------------------------------------------------------------------------------------------- §7, §8

def failure_mode_claims(cases) -> list[CheckResult]:
    """§7: each failure-mode run's outcome is one of its expected kinds, and its figure's title names the failure.

    ``cases``: ``(outcome, expected kinds, figure title)`` triples (only the outcome's ``.kind`` is read:
    :func:`~.experiments.jump_outcome`)."""
    cases = list(cases)
    kinds = [d.kind for d, _, _ in cases]
    return [
        _count("rank_jumps.failure_modes.diagnosed", "each failure-mode run is diagnosed as the failure it shows",
               sum(d.kind not in want for d, want, _ in cases), len(cases), {"kinds": kinds}),
        _count("rank_jumps.failure_modes.titled", "each failure-mode figure says FAILURE MODE in its title",
               sum("FAILURE MODE" not in title for _, _, title in cases), len(cases)),
    ]


def exercise_claims(exercises) -> list[CheckResult]:
    """§8: every exercise's checker accepts its own solution, and each has a hint and a worked solution.

    ``exercises``: a mapping name → exercise (``rank_jumps.EXERCISES``)."""
    exs = list(dict(exercises).values())
    return [
        _count("rank_jumps.exercises.accept_solution", "every exercise's checker accepts its own solution",
               sum(not ex.check(ex.solution).correct for ex in exs), len(exs)),
        _count("rank_jumps.exercises.hint_and_worked", "every exercise has a hint and a worked solution",
               sum(not (ex.worked and ex.hint) for ex in exs), len(exs)),
    ]
