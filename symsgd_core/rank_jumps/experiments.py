"""The experiments of Notebook 04 (one-way rank jumps), one function each, returning a frozen result.

The setting is this project's small replacement for the paper's experiments (arXiv 2305.16038, whose sizes are
not available): the 2×2 ε-completion, observe ``A₁₁ = 1``, ``A₁₂ = ε``, ``A₂₂ = 1``, with a depth-4 width-8
network. :data:`EPSILON_EXPERIMENT` holds every default of it — the phase-0 GD that finds a rank-2 minimum
(η = 0.05, γ = 0.027, 4·10⁴ steps), the hot phase where SGD jumps (η = 0.3) and the cold phase (η = 0.05,
γ = 0.01) — and is the only place they are written.

* :func:`phase0_minima`, :func:`rank_one_minimum`, :func:`minima_losses` — the two minima (memoised);
* :func:`forced_row_run` — the proof's mechanism, SGD forced to sample row 0;
* one function per figure: :func:`penalty_view` (§1), :func:`trap` (§0), :func:`ensemble` (§2), :func:`mechanism`
  (§3), :func:`basin` (§4), :func:`anneal` (§6, hot then cold through one :class:`~.engine.Schedule`),
  :func:`langevin` (§5). ``progress``, where accepted, is called with the fraction done.

A setting with no minimum to start from (the phase-0 GD diverged) raises :class:`NoStartingMinimum` (a
``ValueError``) saying so.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..core.checking import roundoff_tolerance
from ..core.results import Outcome
from ..core.seeding import piece_seed
from ..core.validation import check_int
from ..dln import (
    DEFAULT_RANK_TOL,
    Architecture,
    CompletionProblem,
    Params,
    RunResult,
    Schedule,
    balanced_factorisation,
    epsilon_completion,
    flush_threshold,
    init_params,
    layer_singular_values,
    loss,
    make_architecture,
    matched_langevin_temperature,
    noise_spectrum_by_direction,
    numerical_rank,
    records_between,
    replicate,
    run,
    weight_decay_factor,
)
from ..dln import singular_values as _singular_values
from .analysis import (
    b_r_membership,
    barrier_width,
    basin_boundary,
    basin_radius,
    exponential_waiting_time,
    fit_slope_along_new_direction,
    fraction_low_rank_after_first_visit,
    jump_durations,
    new_direction_cost,
    origin_is_local_min,
    perturb_new_direction,
    rank_transitions,
    scalar_chain_loss,
    schatten_penalty,
)

__all__ = [
    "BASIN_SLOPE", "EPSILON_EXPERIMENT", "EpsilonExperiment", "ForcedRecord", "NoStartingMinimum",
    "LANGEVIN_RANK_TOL", "POLISH_STEPS",
    "AnnealResult", "FullObservationResult", "all_entries_observed", "cold_weight_decay_sweep",
    "BasinResult", "EnsembleResult", "LangevinResult", "MechanismResult", "PenaltyView", "TrapResult", "anneal",
    "basin", "ensemble", "forced_row_run", "langevin", "mechanism", "minima_losses", "penalty_view",
    "phase0_minima", "rank_one_minimum", "start_minimum", "trap",
    # what a run did, as data (the figures word it)
    "ANNEAL_OUTCOMES", "BASIN_OUTCOMES", "JUMP_OUTCOMES", "LANGEVIN_OUTCOMES", "MECHANISM_OUTCOMES", "anneal_outcome",
    "basin_outcome", "better_minimum", "jump_outcome", "langevin_outcome", "mechanism_outcome", "PENALTY_OUTCOMES",
    "penalty_outcome", "membership_numbers", "membership_of", "hot_phase",
]


@dataclass(frozen=True)
class EpsilonExperiment:
    """Every setting of the ε-completion experiment of Notebook 04 (this project's choices).

    Phase 0: GD (γ = ``weight_decay_hot``, η = ``lr_phase0``) for ``phase0_steps`` steps → rank-2 minima.
    Phase 1 (hot): η = ``lr_hot``, γ = ``weight_decay_hot``, ``hot_steps`` steps; SGD jumps, GD does not.
    Phase 2 (cold): η = ``lr_cold``, γ = ``weight_decay_cold``.
    """

    eps: float = 0.2
    depth: int = 4
    width: int = 8
    n_runs: int = 32
    weight_decay_hot: float = 0.027
    lr_phase0: float = 0.05
    phase0_steps: int = 40_000
    lr_hot: float = 0.3
    hot_steps: int = 60_000
    weight_decay_cold: float = 0.01
    lr_cold: float = 0.05

    @property
    def problem(self) -> CompletionProblem:
        return epsilon_completion(self.eps)

    @property
    def arch(self) -> Architecture:
        return make_architecture((2, 2), self.depth, self.width)


#: The experiment's settings: the only home of the phase-0 defaults (η = 0.05, 4·10⁴ steps, γ = 0.027).
EPSILON_EXPERIMENT = EXP = EpsilonExperiment()


def phase0_minima(eps: float = EXP.eps, n_runs: int = EXP.n_runs, seed: int = 0, depth: int = EXP.depth,
                  width: int = EXP.width, weight_decay: float = EXP.weight_decay_hot, lr: float = EXP.lr_phase0,
                  n_steps: int = EXP.phase0_steps) -> Params:
    """GD minima of the ε-completion from random init (phase 0), memoised in-process.

    The compiled GD takes well under a second for the defaults (after the first numba compilation, which is
    cached on disk). Returns a fresh copy each call.

    Returns:
        :class:`~.network.Params` with ``n_runs`` runs (diverged runs cannot occur at the defaults).
    """
    return phase0_cached(float(eps), int(n_runs), int(seed), int(depth), int(width), float(weight_decay), float(lr),
                          int(n_steps)).copy()


@functools.lru_cache(maxsize=16)
def phase0_cached(eps, n_runs, seed, depth, width, weight_decay, lr, n_steps) -> Params:
    problem = epsilon_completion(eps)
    arch = make_architecture((2, 2), depth, width)
    p0 = init_params(arch, n_runs, seed)
    res = run(p0, problem, n_steps, method="gd", lr=lr, weight_decay=weight_decay, record_every=max(n_steps, 1),
              record_layers=False)
    return res.final


class NoStartingMinimum(ValueError):
    """The phase-0 GD diverged at these settings: there is no minimum to start an experiment from."""


def start_minimum(eps: float = EXP.eps, depth: int = EXP.depth, width: int = EXP.width,
                  weight_decay: float = EXP.weight_decay_hot, seed: int = 0) -> tuple[Params, int]:
    """The phase-0 GD minimum (one run) and its numerical rank.

    Raises:
        NoStartingMinimum: (a ``ValueError``) the phase-0 GD diverged at these settings.
    """
    p0 = phase0_minima(eps=eps, n_runs=1, seed=seed, depth=depth, width=width, weight_decay=weight_decay)
    if not np.all(np.isfinite(p0.flat)):
        raise NoStartingMinimum(f"the phase-0 GD (η = {EXP.lr_phase0:g}) diverged at these settings, so there is "
                                "no minimum to start from")
    return p0, int(numerical_rank(_singular_values(p0))[0])


def rank_one_minimum(eps: float = EXP.eps, depth: int = EXP.depth, width: int = EXP.width,
                     weight_decay: float = EXP.weight_decay_hot, lr: float = EXP.lr_phase0,
                     n_steps: int = EXP.phase0_steps, seed: int = 0) -> Params:
    """A rank-1 minimum of the ε-completion: GD from a balanced factorisation of the rank-1 completion.

    The rank-1 completion ``A* = [[1, ε], [1/ε, 1]]`` is factorised with random orthonormal hidden
    frames (``seed``) and GD (η = ``lr``, γ = ``weight_decay``) runs ``n_steps`` steps. GD keeps B_1, so the
    result has rank 1 (its second singular value is round-off). Memoised; returns a fresh copy.
    """
    return _rank_one_cached(float(eps), int(depth), int(width), float(weight_decay), float(lr), int(n_steps),
                            int(seed)).copy()


@functools.lru_cache(maxsize=32)
def _rank_one_cached(eps, depth, width, weight_decay, lr, n_steps, seed):
    problem = epsilon_completion(eps)
    arch = make_architecture((2, 2), depth, width)
    start = balanced_factorisation(problem.target, arch, seed=seed)
    res = run(start, problem, n_steps, method="gd", lr=lr, weight_decay=weight_decay, record_every=max(n_steps, 1),
              record_layers=False)
    return res.final


def minima_losses(eps: float, weight_decay: float, lr: float = EXP.lr_phase0, n_steps: int = EXP.phase0_steps,
                  depth: int = EXP.depth, width: int = EXP.width, seed: int = 0) -> dict:
    """Losses ``𝓛_γ`` of the rank-1 and the rank-2 minimum of the ε-completion at weight decay γ.

    Rank 1: :func:`rank_one_minimum`; rank 2: GD from random init (:func:`phase0_minima`), reported as ``nan``
    when that GD does not end at rank 2.

    Returns:
        dict with ``rank1``, ``rank2`` (floats) and ``sv1``, ``sv2`` (singular values of A).
    """
    problem = epsilon_completion(eps)
    p1 = rank_one_minimum(eps, depth=depth, width=width, weight_decay=weight_decay, lr=lr, n_steps=n_steps, seed=seed)
    p2 = phase0_minima(eps=eps, n_runs=1, seed=seed, depth=depth, width=width, weight_decay=weight_decay, lr=lr,
                       n_steps=n_steps)
    sv2 = _singular_values(p2)[0]
    r2 = int(numerical_rank(sv2))
    return {"rank1": float(loss(p1, problem, weight_decay)[0]),
            "rank2": float(loss(p2, problem, weight_decay)[0]) if r2 == 2 else float("nan"),
            "sv1": _singular_values(p1)[0], "sv2": sv2}


#: ``basin_slope()`` at the experiment's settings (ε, γ_hot, depth, width), to 10 digits: the basin-radius exercise
#: quotes it, and a 40 000-step GD to measure it again at every ``import symsgd_core.rank_jumps`` cost each kernel
#: seconds. tests/rank_jumps/test_rank_jumps_experiments.py measures it again.
BASIN_SLOPE = 0.1701813817


def basin_slope(eps: float = EXP.eps, weight_decay: float = EXP.weight_decay_hot, depth: int = EXP.depth,
                width: int = EXP.width) -> float:
    """``|g|``, the fit slope along a new direction at the rank-1 minimum (what sets the basin radius a_c;
    :data:`BASIN_SLOPE` at the defaults)."""
    p1 = rank_one_minimum(eps, depth=depth, width=width, weight_decay=weight_decay)
    return abs(fit_slope_along_new_direction(p1, epsilon_completion(eps), 1))


def _record_every(steps: int, points: int = 300) -> int:
    return max(int(steps) // points, 1)


def _report(progress, fraction: float) -> None:
    if progress is not None:
        progress(fraction)


# ----------------------------------------------------------------------------------------------
# The mechanism: forced sampling of some rows
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ForcedRecord:
    """Records of a forced-sampling run (SGD drawing only entries from ``rows``).

    Attributes:
        steps: int ``(K,)`` step counts of the records (0 first).
        row_norms: ``(R, K, k)`` norms of the *unsampled* rows of the last layer ``W_L``.
        row_min_abs: ``(R, k)`` smallest non-zero |entry| of each unsampled row at step 0.
        singular_values: ``(R, K, q)`` singular values of A.
        unsampled_rows: the k row indices that were never sampled.
        lr, weight_decay: the step size η and the weight decay γ.
        final: :class:`~.network.Params` at the last step.
        diverged: bool ``(R,)``.
        layer_s2: ``(R, K, L)`` every layer's second singular value ``s₂(W_ℓ)`` at the records.
    """

    steps: np.ndarray
    row_norms: np.ndarray
    row_min_abs: np.ndarray
    singular_values: np.ndarray
    unsampled_rows: np.ndarray
    lr: float
    weight_decay: float
    final: object
    diverged: np.ndarray
    layer_s2: np.ndarray | None = None

    def layer_decay_exponents(self, run: int = 0, floor: float = 1e-13, skip: int = 2) -> tuple[np.ndarray, np.ndarray]:
        """Per layer, the exponent p_ℓ of ``s₂(W_ℓ)(t) ∝ (1 − 2ηγ)^{p_ℓ t}`` and its regression standard error.

        Fitted by least squares to ``log s₂(W_ℓ)`` over the records after the first ``skip`` (the approach to the
        decaying direction) while ``s₂(W_ℓ) > floor`` (above round-off of the largest singular value).

        Returns:
            ``(p, se)``: float ``(L,)`` each (NaN for a layer with fewer than 3 usable records).
        """
        if self.layer_s2 is None:
            raise ValueError("this record has no layer singular values (layer_s2 is None)")
        c = float(np.log(weight_decay_factor(self.lr, self.weight_decay)))
        L = self.layer_s2.shape[-1]
        p, se = np.full(L, np.nan), np.full(L, np.nan)
        for ell in range(L):
            s2 = self.layer_s2[run, skip:, ell]
            t = self.steps[skip:].astype(float)
            keep = np.isfinite(s2) & (s2 > floor)
            if keep.sum() < 3:
                continue
            coef, cov = np.polyfit(t[keep], np.log(s2[keep]), 1, cov=True) if keep.sum() > 3 else \
                (np.polyfit(t[keep], np.log(s2[keep]), 1), np.zeros((2, 2)))
            p[ell], se[ell] = coef[0] / c, float(np.sqrt(max(cov[0, 0], 0.0))) / abs(c)
        return p, se

    def predicted(self) -> np.ndarray:
        """``‖row‖_0 (1 − 2ηγ)^t`` for every record: ``(R, K, k)``."""
        return self.row_norms[:, :1, :] * weight_decay_factor(self.lr, self.weight_decay,
                                                               self.steps[None, :, None].astype(float))

    def comparable(self, flush_threshold: float) -> np.ndarray:
        """bool ``(R, K, k)``: records before any entry of the row could fall below ``flush_threshold``.

        The engine sets entries below its flush threshold to 0 (no denormals); the exact
        decay law holds until the smallest entry of the row reaches that threshold.
        """
        smallest = self.row_min_abs[:, None, :] * weight_decay_factor(self.lr, self.weight_decay,
                                                                       self.steps[None, :, None].astype(float))
        return (smallest > flush_threshold) & np.isfinite(self.row_norms)

    def max_relative_error(self, flush_threshold: float) -> float:
        """``max |‖row‖_t / (‖row‖_0 (1 − 2ηγ)^t) − 1|`` over comparable records; NaN if no record is comparable
        (nothing was measured, so nothing may pass)."""
        ok = self.comparable(flush_threshold) & (self.predicted() > 0)
        if not ok.any():
            return float("nan")
        return float(np.max(np.abs(self.row_norms[ok] / self.predicted()[ok] - 1.0)))


def forced_row_run(params, problem, rows, n_steps: int, lr: float, weight_decay: float, seed: int = 0,
                   n_records: int = 40, engine: str = "auto") -> ForcedRecord:
    """Forced sampling: SGD that draws only observed entries in ``rows`` (the proof's event).

    Runs :func:`~.engine.run` with ``method="forced"`` in ``n_records`` consecutive
    pieces (piece k uses seed :func:`~symsgd_core.core.seeding.piece_seed` ``(seed, k) = seed·1_000_003 + k``) and
    records, after each piece, the norms
    of the rows of ``W_L`` that are never sampled. Those rows receive no data gradient, so
    each step multiplies them by exactly ``1 − 2ηγ``.

    Args:
        params: start (R runs).
        problem: the completion problem.
        rows: row indices of A to sample from (at least one observed entry).
        n_steps: total steps ≥ 1.
        lr, weight_decay: η > 0, γ ≥ 0 with 2ηγ < 1.
        seed: integer ≥ 0.
        n_records: number of pieces (records after step 0), 1 ≤ n_records ≤ n_steps.
        engine: passed to :func:`~.engine.run`.
    Returns:
        :class:`ForcedRecord`.
    """
    n_steps = check_int("n_steps", n_steps, minimum=1)
    n_records = check_int("n_records", n_records, minimum=1, maximum=n_steps)
    seed = check_int("seed", seed, minimum=0)
    rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
    entries = problem.row_entries(rows)
    m = problem.shape[0]
    unsampled = np.array([i for i in range(m) if i not in set(rows.tolist())], dtype=np.int64)
    bounds = np.linspace(0, n_steps, n_records + 1).round().astype(int)
    L = params.arch.depth
    cur = params.copy()

    def measure(p):
        WL = p.layer(L - 1)[:, unsampled, :]
        return np.sqrt(np.sum(WL * WL, axis=-1)), _singular_values(p) if np.all(np.isfinite(p.flat)) else \
            np.full((p.n_runs, min(problem.shape)), np.nan)

    def layer_s2(p):
        if not np.all(np.isfinite(p.flat)):
            return np.full((p.n_runs, L), np.nan)
        return layer_singular_values(p)[:, :, 1]

    n0, sv0 = measure(cur)
    ls2 = [layer_s2(cur)]
    WL0 = np.abs(cur.layer(L - 1)[:, unsampled, :])
    row_min = np.where(WL0 > 0, WL0, np.inf).min(axis=-1)
    norms, svs, steps = [n0], [sv0], [0]
    diverged = np.zeros(params.n_runs, dtype=bool)
    for k in range(n_records):
        T = int(bounds[k + 1] - bounds[k])
        res = run(cur, problem, T, method="forced", entries=entries, lr=lr, weight_decay=weight_decay,
                  seed=piece_seed(seed, k), record_every=max(T, 1), record_layers=False, engine=engine)
        diverged |= res.diverged
        cur = res.final
        nk, svk = measure(cur)
        nk = np.where(diverged[:, None], np.nan, nk)
        svk = np.where(diverged[:, None], np.nan, svk)
        norms.append(nk)
        svs.append(svk)
        ls2.append(np.where(diverged[:, None], np.nan, layer_s2(cur)))
        steps.append(int(bounds[k + 1]))
    return ForcedRecord(steps=np.array(steps), row_norms=np.stack(norms, axis=1), row_min_abs=row_min,
                        singular_values=np.stack(svs, axis=1), unsampled_rows=unsampled, lr=float(lr),
                        weight_decay=float(weight_decay), final=cur, diverged=diverged, layer_s2=np.stack(ls2, axis=1))


# ----------------------------------------------------------------------------------------------
# §1 The penalty L s^{2/L}
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PenaltyView:
    """The induced penalty, the cost of a new direction and the scalar chain's loss for L = 2 and the chosen L.

    Attributes:
        depth, weight_decay, gain: L, γ, the fit slope g.
        barrier_width, barrier_width_L2: δ* for L and for 2 (:func:`~.analysis.barrier_width`).
        origin_trap: θ = 0 is a local minimum at L (:func:`~.analysis.origin_is_local_min`).
        d_max: the δ range drawn.
        s, penalty_L2, penalty_L: ``L s^{2/L}`` on ``s ∈ [0, 2]``.
        delta, cost_L2, cost_L: ``γLδ^{2/L} − gδ`` on ``δ ∈ [0, d_max]``.
        a, chain_L2, chain_L: ``(a^L − 1)² + γLa²`` on ``a ∈ [−0.2, 1.3]``.
        outcome: what the penalty does to a new direction (:data:`PENALTY_OUTCOMES`, :func:`penalty_outcome`).
    """

    depth: int
    weight_decay: float
    gain: float
    barrier_width: float
    barrier_width_L2: float
    origin_trap: bool
    d_max: float
    s: np.ndarray
    penalty_L2: np.ndarray
    penalty_L: np.ndarray
    delta: np.ndarray
    cost_L2: np.ndarray
    cost_L: np.ndarray
    a: np.ndarray
    chain_L2: np.ndarray
    chain_L: np.ndarray
    outcome: Outcome


#: What the penalty does to a new direction of fit slope g (:func:`penalty_outcome`), none a failure: at L ≠ 2 (the
#: figure's L ≥ 3) a barrier up to δ* keeps every lower-rank optimum a local minimum (``"barrier"``); at L = 2 the
#: slope 2γ at s = 0 is below g, so the direction switches on at once (``"switches_on"``), or it is not, so the
#: direction never pays (``"never_pays"``).
PENALTY_OUTCOMES = ("barrier", "switches_on", "never_pays")


def penalty_outcome(depth: int, weight_decay: float, gain: float, barrier_width: float, d_max: float,
                    origin_trap: bool) -> Outcome:
    """The :class:`~symsgd_core.core.results.Outcome` of :func:`penalty_view` (kinds :data:`PENALTY_OUTCOMES`);
    numbers ``depth`` (L), ``barrier_width`` (δ*), ``d_max`` (the δ range drawn) and ``origin_trap`` (θ = 0 is a
    local minimum)."""
    kind = "barrier" if depth != 2 else "switches_on" if 2 * weight_decay < gain else "never_pays"
    return Outcome(kind, False, {"depth": int(depth), "barrier_width": float(barrier_width), "d_max": float(d_max),
                                 "origin_trap": bool(origin_trap)})


def penalty_view(depth: int = EXP.depth, weight_decay: float = 0.05, gain: float = 0.3) -> PenaltyView:
    """§1: for L ≥ 3 the penalty has infinite slope at 0, so switching on a new direction costs more than it gains
    up to δ*, and θ = 0 is a local minimum for every γ > 0."""
    L = int(depth)
    s = np.linspace(0.0, 2.0, 401)
    d_star = barrier_width(L, weight_decay, gain)
    d_star2 = barrier_width(2, weight_decay, gain)
    finite_star = d_star if np.isfinite(d_star) and d_star > 0 else 0.0
    d_max = float(np.clip(3.0 * finite_star, 0.05, 2.0)) if finite_star > 0 else 1.0
    d = np.linspace(0.0, d_max, 401)
    a = np.linspace(-0.2, 1.3, 401)
    trap = origin_is_local_min(L, weight_decay)
    return PenaltyView(depth=L, weight_decay=weight_decay, gain=gain, barrier_width=d_star, barrier_width_L2=d_star2,
                       origin_trap=trap, d_max=d_max, s=s,
                       penalty_L2=schatten_penalty(s, 2),
                       penalty_L=schatten_penalty(s, L), delta=d, cost_L2=new_direction_cost(d, 2, weight_decay, gain),
                       cost_L=new_direction_cost(d, L, weight_decay, gain), a=a,
                       chain_L2=scalar_chain_loss(a, 2, weight_decay), chain_L=scalar_chain_loss(a, L, weight_decay),
                       outcome=penalty_outcome(L, weight_decay, gain, d_star, d_max, trap))


# ----------------------------------------------------------------------------------------------
# §0 GD trapped, SGD jumps
# ----------------------------------------------------------------------------------------------
#: What SGD (and GD) can do from a higher-rank minimum (:func:`jump_outcome`): at L ≤ 2 there is nothing to jump from
#: (``"shallow"``); GD itself is at (or reaches) the lower rank (``"gd_low_rank"``); some SGD runs diverged; SGD
#: collapsed to A = 0; no SGD run jumped within the budget; or (what §0 and §2 show) SGD jumped.
JUMP_OUTCOMES = ("shallow", "gd_low_rank", "diverged", "collapsed", "no_jumps", "jumped")


def jump_outcome(start_rank: int, sgd: RunResult, gd: RunResult | None = None, *, depth: int,
                 target_rank: int = 1) -> Outcome:
    """The :class:`~symsgd_core.core.results.Outcome` of SGD (and GD) runs from a rank-``start_rank`` minimum
    (kinds :data:`JUMP_OUTCOMES`, decided in that order; every kind but ``"jumped"`` is a failure mode).

    Args:
        start_rank: rank of the start (the GD minimum).
        sgd: the SGD runs; gd: optional GD run from the same start.
        depth: L (L ≤ 2: ``"shallow"``, the penalty is convex in A).
        target_rank: the lower rank a jump should reach.
    Returns:
        the outcome; its numbers: ``depth``, ``start_rank``, ``target_rank``, ``n_runs``, ``steps`` (the last
        record), ``diverged`` (SGD runs), ``first_diverged_step`` (−1: none), ``collapsed`` (runs at A = 0),
        ``jumped`` (runs that reached rank ≤ target), ``at_target`` (runs ending at rank = target),
        ``median_jump_step`` (−1: none jumped), ``returns`` (runs whose rank rose again), ``final_counts``
        (runs ending at rank 0, 1, …, ``start_rank``) and, with ``gd``, ``gd_final_rank`` and ``gd_diverged_step``
        (−1: GD did not diverge).
    Raises:
        ValueError: ``start_rank`` < 0, ``depth`` < 1 or ``target_rank`` < 0.
    """
    start_rank = check_int("start_rank", start_rank, minimum=0)
    depth = check_int("depth", depth, minimum=1)
    target_rank = check_int("target_rank", target_rank, minimum=0)
    div = np.asarray(sgd.diverged)
    js = sgd.jump_step(target_rank)
    jumped = js >= 0
    n = {"depth": depth, "start_rank": start_rank, "target_rank": target_rank, "n_runs": int(sgd.n_runs),
         "steps": int(sgd.steps[-1]), "diverged": int(div.sum()),
         "first_diverged_step": int(sgd.diverged_step[div].min()) if div.any() else -1,
         "collapsed": int(sgd.collapsed.sum()), "jumped": int(jumped.sum()),
         "at_target": int(np.sum(sgd.final_rank == target_rank)),
         "median_jump_step": int(np.median(js[jumped])) if jumped.any() else -1,
         "returns": int(sgd.returned_up.sum()),
         "final_counts": tuple(int(np.sum(sgd.final_rank == k)) for k in range(start_rank + 1))}
    if gd is not None:
        gd_div = np.asarray(gd.diverged)
        n["gd_final_rank"] = int(gd.final_rank.min())
        n["gd_diverged_step"] = int(gd.diverged_step[gd_div].min()) if gd_div.any() else -1
    if depth <= 2:
        kind = "shallow"
    elif start_rank <= target_rank or (gd is not None and n["gd_diverged_step"] < 0
                                       and n["gd_final_rank"] < start_rank):
        kind = "gd_low_rank"
    elif n["diverged"]:
        kind = "diverged"
    elif n["collapsed"] == n["n_runs"] or (n["collapsed"] and n["collapsed"] >= n["at_target"]):
        kind = "collapsed"
    elif not n["jumped"]:
        kind = "no_jumps"
    else:
        kind = "jumped"
    return Outcome(kind, kind != "jumped", n)


def membership_numbers(membership: dict) -> dict:
    """The B_r membership of :func:`~symsgd_core.rank_jumps.analysis.b_r_membership` as outcome numbers: each
    name prefixed ``B_`` (so that ``n_runs`` meets no jump outcome's number); :func:`membership_of` reads it back."""
    return {f"B_{k}": v for k, v in membership.items()}


def membership_of(numbers: dict) -> dict:
    """The B_r membership held in an outcome's ``numbers`` (:func:`membership_numbers`)."""
    return {k[2:]: v for k, v in numbers.items() if k.startswith("B_")}


@dataclass(frozen=True, eq=False)
class TrapResult:
    """GD and SGD from one GD-converged minimum (§0): the start, both runs, what happened (``outcome``,
    :func:`jump_outcome`, with ``start_singular_values`` (of A at the start) and the B_r membership,
    :func:`membership_numbers`) and their B_r membership (``membership``,
    :func:`~symsgd_core.rank_jumps.analysis.b_r_membership`)."""

    start: Params
    start_rank: int
    gd: RunResult
    sgd: RunResult
    outcome: Outcome
    membership: dict


def trap(eps: float = EXP.eps, weight_decay: float = EXP.weight_decay_hot, lr: float = EXP.lr_hot,
         depth: int = EXP.depth, width: int = EXP.width, n_seeds: int = 4, steps: int = EXP.hot_steps, seed: int = 0,
         engine: str = "auto", progress=None) -> TrapResult:
    """§0: GD and ``n_seeds`` SGD runs (seed ``seed``) from the phase-0 minimum; GD stays, SGD jumps.

    Both record the layers, so ``gd.in_B`` and ``sgd.in_B`` hold the B_r membership of every record."""
    problem = epsilon_completion(eps)
    p0, start_rank = start_minimum(eps, depth, width, weight_decay, seed)
    _report(progress, 0.3)
    every = _record_every(steps)
    gd = run(p0, problem, steps, method="gd", lr=lr, weight_decay=weight_decay, record_every=every, record_layers=True,
             engine=engine)
    _report(progress, 0.5)
    sgd = run(replicate(p0, n_seeds), problem, steps, method="sgd", lr=lr, weight_decay=weight_decay, seed=seed,
              record_every=every, record_layers=True, engine=engine)
    _report(progress, 0.9)
    membership = b_r_membership(sgd, gd)
    outcome = jump_outcome(start_rank, sgd, gd, depth=depth).with_numbers(
        start_singular_values=tuple(float(s) for s in _singular_values(p0)[0]), **membership_numbers(membership))
    return TrapResult(start=p0, start_rank=start_rank, gd=gd, sgd=sgd, outcome=outcome, membership=membership)


# ----------------------------------------------------------------------------------------------
# §2 The ensemble
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class EnsembleResult:
    """An ensemble of SGD runs from one rank-2 minimum (§2).

    Attributes:
        start, start_rank, sgd: the start and the runs.
        outcome: what the runs did (:func:`jump_outcome`), with ``reached_rank1`` (runs with a first step at rank
            exactly 1), the B_r membership (:func:`membership_numbers`) and, where the exponential law is fitted (SGD
            jumped, a finite positive mean wait), ``mean_wait``, ``mean_wait_se`` and ``median_duration`` (steps).
        jump_steps: ``(R,)`` first step at rank exactly 1 (−1 if never; direct collapses excluded).
        mean_wait, mean_wait_se: the censored exponential fit of the waiting time and its standard error.
        returns: the number of runs that ever returned to a higher rank (0: one-way).
        durations: ``(R,)`` steps each jump took (−1: no jump), resolution :data:`ENSEMBLE_RECORD_EVERY`.
        membership: the runs' B_r membership, :func:`~symsgd_core.rank_jumps.analysis.b_r_membership`.
    """

    start: Params
    start_rank: int
    sgd: RunResult
    outcome: Outcome
    jump_steps: np.ndarray
    mean_wait: float
    mean_wait_se: float
    returns: int
    durations: np.ndarray
    membership: dict


#: §2 records every this many steps (the resolution of the jump durations).
ENSEMBLE_RECORD_EVERY = 100


def ensemble(eps: float = EXP.eps, weight_decay: float = EXP.weight_decay_hot, lr: float = EXP.lr_hot, n_runs: int = 24,
             steps: int = EXP.hot_steps, seed: int = 0, engine: str = "auto", progress=None) -> EnsembleResult:
    """§2: ``n_runs`` SGD runs from the phase-0 minimum; rank fractions, jump times, no returns (with layer records:
    ``sgd.in_B`` is the B_r membership of every record)."""
    problem = epsilon_completion(eps)
    p0, start_rank = start_minimum(eps, EXP.depth, EXP.width, weight_decay, 0)
    _report(progress, 0.2)
    sgd = run(replicate(p0, n_runs), problem, steps, method="sgd", lr=lr, weight_decay=weight_decay, seed=seed,
              record_every=ENSEMBLE_RECORD_EVERY, record_layers=True, engine=engine)
    _report(progress, 0.9)
    js = sgd.first_step_at_rank[:, 1].copy()  # first step at rank exactly 1 (direct collapses excluded)
    tau, tau_se = exponential_waiting_time(js, steps)
    outcome = jump_outcome(start_rank, sgd, None, depth=EXP.depth)
    durations, membership = jump_durations(sgd), b_r_membership(sgd)
    fit = {}
    if outcome.kind == "jumped" and np.isfinite(tau) and tau > 0:
        fit = {"mean_wait": float(tau), "mean_wait_se": float(tau_se)}
        if np.any(durations >= 0):
            fit["median_duration"] = int(np.median(durations[durations >= 0]))
    outcome = outcome.with_numbers(reached_rank1=int(np.sum(js >= 0)), **membership_numbers(membership), **fit)
    return EnsembleResult(start=p0, start_rank=start_rank, sgd=sgd, outcome=outcome, jump_steps=js,
                          mean_wait=tau, mean_wait_se=tau_se, returns=int(sgd.returned_up.sum()),
                          durations=durations, membership=membership)


# ----------------------------------------------------------------------------------------------
# §3 The mechanism: forced sampling of row 0
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class MechanismResult:
    """Forced sampling of row-0 entries, then free GD and SGD (§3).

    Attributes:
        start, start_rank: the phase-0 minimum.
        forced: the :class:`ForcedRecord` of the forced phase.
        gd, sgd: the free runs after it (``None`` if the forced phase diverged).
        decay_error, decay_tolerance: the largest relative deviation of the unsampled row from ``(1 − 2ηγ)^t``
            and its round-off bound.
        forced_rank: the rank of A after the forced phase (−1: diverged).
        depth: L.
        outcome: what the runs did (:data:`MECHANISM_OUTCOMES`, :func:`mechanism_outcome`), with ``decay_error``,
            ``decay_tolerance`` and ``forced_rank``.
    """

    start: Params
    start_rank: int
    forced: ForcedRecord
    gd: RunResult | None
    sgd: RunResult | None
    decay_error: float
    decay_tolerance: float
    forced_rank: int
    depth: int
    outcome: Outcome


#: What §3's runs can do, in the order they are tested: the forced phase diverged, left A at rank 2 (too short) or
#: collapsed it to 0; then GD or SGD diverged, collapsed to A = 0, or rose back to rank 2; or (what §3 shows)
#: forced sampling brought A to rank 1 and neither GD nor SGD ever left it.
MECHANISM_OUTCOMES = ("forced_diverged", "forced_too_short", "forced_collapsed", "diverged_after", "collapsed_after",
                      "rank_rose", "absorbed")


def mechanism_outcome(forced: ForcedRecord, forced_rank: int, gd: RunResult | None, sgd: RunResult | None,
                      lr: float, weight_decay: float) -> Outcome:
    """The :class:`~symsgd_core.core.results.Outcome` of §3's runs (kinds: :data:`MECHANISM_OUTCOMES`). Numbers:
    ``s2_end`` and ``steps_needed`` (forced steps that bring s₂ a thousand times below the rank threshold at this η
    and γ) for ``forced_too_short``; ``gd_rank``, ``sgd_ranks`` after a complete forced phase; ``sgd_collapsed``
    (runs) for ``collapsed_after``."""
    if forced.diverged[0]:
        return Outcome("forced_diverged", True, {})
    if forced_rank >= 2:
        s2_start = max(forced.singular_values[0, 0, 1], 1e-3)
        need = np.log(1e3 * s2_start / DEFAULT_RANK_TOL) / (2 * lr * weight_decay)
        return Outcome("forced_too_short", True, {"s2_end": float(forced.singular_values[0, -1, 1]),
                                                  "steps_needed": float(need)})
    if forced_rank == 0:
        return Outcome("forced_collapsed", True, {})
    ranks = {"gd_rank": int(gd.final_rank[0]), "sgd_ranks": tuple(int(k) for k in sgd.final_rank)}
    if gd.diverged.any() or sgd.diverged.any():
        return Outcome("diverged_after", True, ranks)
    if sgd.collapsed.any() or gd.collapsed.any():
        return Outcome("collapsed_after", True, {**ranks, "sgd_collapsed": int(sgd.collapsed.sum())})
    s_up = int(sgd.returned_up.sum() + np.sum(sgd.rank.max(axis=1) > 1))
    g_up = int(np.sum(gd.rank.max(axis=1) > 1))
    if s_up or g_up:
        return Outcome("rank_rose", True, ranks)
    return Outcome("absorbed", False, ranks)


def mechanism(lr: float = EXP.lr_hot, weight_decay: float = EXP.weight_decay_hot, forced_steps: int = 3000,
              after_steps: int = 20_000, n_seeds: int = 4, seed: int = 0, engine: str = "auto",
              progress=None) -> MechanismResult:
    """§3: SGD forced to sample row 0 shrinks row 1 of W_L by exactly ``(1 − 2ηγ)^t``; A becomes rank 1 and stays."""
    problem = EXP.problem
    p0, start_rank = start_minimum(EXP.eps, EXP.depth, EXP.width, weight_decay, 0)
    _report(progress, 0.15)
    rec = forced_row_run(p0, problem, [0], forced_steps, lr, weight_decay, seed=seed, n_records=30, engine=engine)
    _report(progress, 0.5)
    err = rec.max_relative_error(flush_threshold(EXP.depth))
    forced_rank = int(numerical_rank(rec.singular_values[0, -1])) if not rec.diverged[0] else -1
    gd = sgd = None
    if not rec.diverged[0]:
        every = _record_every(after_steps)
        gd = run(rec.final, problem, after_steps, method="gd", lr=lr, weight_decay=weight_decay, record_every=every,
                 record_layers=False, engine=engine)
        _report(progress, 0.7)
        sgd = run(replicate(rec.final, n_seeds), problem, after_steps, method="sgd", lr=lr, weight_decay=weight_decay,
                  seed=seed, record_every=every, record_layers=False, engine=engine)
    tol = roundoff_tolerance(1.0, forced_steps)
    outcome = mechanism_outcome(rec, forced_rank, gd, sgd, lr, weight_decay).with_numbers(
        decay_error=float(err), decay_tolerance=float(tol), forced_rank=int(forced_rank))
    return MechanismResult(start=p0, start_rank=start_rank, forced=rec, gd=gd, sgd=sgd, decay_error=err,
                           decay_tolerance=tol, forced_rank=forced_rank, depth=EXP.depth, outcome=outcome)


# ----------------------------------------------------------------------------------------------
# §4 The basin of B_1
# ----------------------------------------------------------------------------------------------
#: §4 runs this many perturbation sizes around a_c besides the chosen one.
BASIN_GRID = 12


@dataclass(frozen=True, eq=False)
class BasinResult:
    """The rank-1 minimum perturbed by a along a new direction, for a grid of a and the chosen one (§4).

    Attributes:
        rank1_point: the rank-1 minimum; slope: the fit slope g along the new direction.
        alpha_c: the first-order basin radius ``(2γ/|g|)^{1/(L−2)}``.
        alphas: ``(BASIN_GRID + 1,)`` the grid and, last, the chosen a.
        run: one run per a (the chosen a last).
        final_rank: ``(BASIN_GRID + 1,)``.
        boundary: ``(lo, hi)`` bracket of the basin edge on the grid (:func:`~.analysis.basin_boundary`).
        outcome: what the run from the chosen a did (:data:`BASIN_OUTCOMES`, :func:`basin_outcome`), with
            ``alpha_c``, ``slope`` and ``boundary``.
    """

    rank1_point: Params
    slope: float
    alpha_c: float
    alphas: np.ndarray
    run: RunResult
    final_rank: np.ndarray
    boundary: tuple
    outcome: Outcome

    @property
    def grid(self) -> np.ndarray:
        return self.alphas[:-1]


#: What §4's run from the chosen a can do: diverge, collapse to A = 0, be pulled back to rank 1 (inside the basin) or
#: not (it grows to the rank-2 minimum).
BASIN_OUTCOMES = ("diverged", "collapsed", "pulled_back", "not_pulled_back")


def basin_outcome(res: RunResult) -> Outcome:
    """The :class:`~symsgd_core.core.results.Outcome` of §4's run from the chosen a (the last run of ``res``):
    kinds :data:`BASIN_OUTCOMES`; numbers ``diverged_step``, or ``s2_end`` (its last s₂(A))."""
    if res.diverged[-1]:
        return Outcome("diverged", True, {"diverged_step": int(res.diverged_step[-1])})
    rank = int(res.final_rank[-1])
    if rank == 0:
        return Outcome("collapsed", True, {})
    s2 = float(res.singular_values[-1, -1, 1])
    return Outcome("pulled_back" if rank <= 1 else "not_pulled_back", False, {"s2_end": s2})


def basin(alpha: float = 0.3, weight_decay: float = EXP.weight_decay_hot, eps: float = EXP.eps, lr: float = EXP.lr_cold,
          steps: int = 20_000, method: str = "gd", engine: str = "auto", progress=None) -> BasinResult:
    """§4: small pushes along a new direction are pulled back to rank 1, large ones are not (a finite basin)."""
    problem = epsilon_completion(eps)
    depth = EXP.depth
    p1 = rank_one_minimum(eps, depth=depth, width=EXP.width, weight_decay=weight_decay)
    g = fit_slope_along_new_direction(p1, problem, 1)
    alpha_c = basin_radius(depth, weight_decay, g)
    grid = (alpha_c if np.isfinite(alpha_c) else 1.0) * np.logspace(-1, np.log10(2.0), BASIN_GRID)
    alphas = np.append(grid, alpha)
    starts = [perturb_new_direction(p1, problem, a, 1) for a in alphas]
    batch = Params(p1.arch, np.concatenate([s.flat for s in starts], axis=0))
    _report(progress, 0.3)
    res = run(batch, problem, steps, method=method, lr=lr, weight_decay=weight_decay, seed=0,
              record_every=_record_every(steps, 200), record_layers=False, engine=engine)
    _report(progress, 0.9)
    boundary = basin_boundary(grid, res.final_rank[:-1])
    outcome = basin_outcome(res).with_numbers(alpha_c=float(alpha_c), slope=float(g),
                                              boundary=tuple(float(b) for b in boundary))
    return BasinResult(rank1_point=p1, slope=g, alpha_c=alpha_c, alphas=alphas, run=res, final_rank=res.final_rank,
                       boundary=boundary, outcome=outcome)


# ----------------------------------------------------------------------------------------------
# §6 Annealing: hot then cold
# ----------------------------------------------------------------------------------------------
#: GD steps at the cold settings that remove SGD's fluctuation before losses are compared.
POLISH_STEPS = 5000


@dataclass(frozen=True, eq=False)
class AnnealResult:
    """Hot phase then cold phase from one rank-2 minimum, GD and SGD, each one run with one schedule (§6).

    Attributes:
        start, start_rank: the phase-0 minimum.
        schedule: :meth:`~.engine.Schedule.anneal` of the hot and cold settings.
        hot_steps: the length of the hot phase.
        gd, sgd: the whole runs (GD one run, SGD ``n_seeds``).
        gd_hot, sgd_hot, gd_cold, sgd_cold: their records in the hot phase ``[0, hot_steps]`` and the cold phase
            ``[hot_steps, end]`` (:func:`~.engine.records_between`).
        polished_loss, polished_rank: ``(1 + n_seeds,)`` loss at the cold γ and rank after :data:`POLISH_STEPS`
            cold GD steps from each final state (GD first; NaN and −1 for runs that diverged).
        minima: :func:`minima_losses` at the cold γ.
        hot_outcome: what the hot phase's runs did (:func:`jump_outcome` of ``sgd_hot`` and ``gd_hot``).
        better_minimum: which minimum has the lower loss at the cold γ: ``"rank1"``, ``"rank2"``, or
            ``"rank1_only"`` (GD from random init finds no rank-2 minimum there).
        outcome: what the runs did through both phases (:data:`ANNEAL_OUTCOMES`, :func:`anneal_outcome`), with
            the hot phase's numbers prefixed ``hot_`` (:func:`hot_phase` gives back ``hot_outcome``), ``rank1_loss``
            and ``rank2_loss`` (``minima``) and the label ``better_minimum``.
    """

    start: Params
    start_rank: int
    schedule: Schedule
    hot_steps: int
    gd: RunResult
    sgd: RunResult
    gd_hot: RunResult
    sgd_hot: RunResult
    gd_cold: RunResult
    sgd_cold: RunResult
    polished_loss: np.ndarray
    polished_rank: np.ndarray
    minima: dict
    hot_outcome: Outcome
    better_minimum: str
    outcome: Outcome


#: What §6's runs can do: the hot phase failed (``"hot_"`` + the :func:`jump_outcome` kind that is not
#: ``"jumped"``); then, after SGD jumped, the cold phase diverged, collapsed SGD to A = 0, let GD find rank 1 too (γ
#: too large to separate them), or let the rank rise again; or (what §6 shows) GD keeps rank 2 and SGD rank 1.
ANNEAL_OUTCOMES = ("hot_no_jumps", "hot_collapsed", "hot_diverged", "hot_gd_low_rank", "hot_shallow", "cold_diverged",
                   "cold_collapsed", "gd_finds_rank1", "rank_rose", "annealed")


def better_minimum(minima: dict) -> str:
    """``"rank1"`` or ``"rank2"``: the minimum with the lower loss (:func:`minima_losses`); ``"rank1_only"`` when
    there is no rank-2 minimum (its loss is NaN)."""
    r1, r2 = minima["rank1"], minima["rank2"]
    return "rank1_only" if not np.isfinite(r2) else "rank1" if r1 < r2 else "rank2"


def anneal_outcome(hot_outcome: Outcome, gd: RunResult, sgd: RunResult, hot_steps: int, sgd_hot: RunResult,
                   gd_cold: RunResult, sgd_cold: RunResult, polished_loss: np.ndarray,
                   polished_rank: np.ndarray) -> Outcome:
    """The :class:`~symsgd_core.core.results.Outcome` of §6's runs (kinds :data:`ANNEAL_OUTCOMES`). After a hot
    phase where SGD jumped, the numbers: ``jumped`` (SGD runs at rank 1 after the hot phase), ``cold_up`` (of them,
    runs whose rank rose in the cold phase), ``gd_min_rank`` (GD's lowest rank in the cold phase),
    ``gd_polished_loss``, ``gd_polished_rank`` and, if any SGD run ends polished at rank 1, ``sgd_rank1_losses``
    (their lowest and highest polished loss)."""
    if hot_outcome.kind != "jumped":
        return Outcome("hot_" + hot_outcome.kind, True, {})
    alive = sgd.ok_runs
    jumped = sgd_hot.final_rank[alive] == 1
    numbers = {"jumped": int(jumped.sum()),
               "cold_up": int(np.sum(np.any(sgd_cold.rank[alive] > 1, axis=1) & jumped)),
               "gd_min_rank": int(gd_cold.rank.min()),
               "gd_polished_loss": float(polished_loss[0]), "gd_polished_rank": int(polished_rank[0])}
    rank1 = np.isfinite(polished_loss[1:]) & (polished_rank[1:] == 1)
    if rank1.any():
        numbers["sgd_rank1_losses"] = (float(np.min(polished_loss[1:][rank1])), float(np.max(polished_loss[1:][rank1])))
    if np.any(gd.diverged_step > hot_steps) or np.any(sgd.diverged_step > hot_steps):
        return Outcome("cold_diverged", True, numbers)
    if sgd_cold.collapsed.any():
        return Outcome("cold_collapsed", True, numbers)
    if numbers["gd_min_rank"] < 2:
        return Outcome("gd_finds_rank1", True, numbers)
    if numbers["cold_up"]:
        return Outcome("rank_rose", True, numbers)
    return Outcome("annealed", False, numbers)


def hot_phase(outcome: Outcome) -> Outcome:
    """The hot phase's :func:`jump_outcome` held in an :func:`anneal` outcome (its numbers prefixed ``hot_``; its
    kind ``"jumped"`` unless the anneal's kind is ``"hot_"`` + the hot phase's)."""
    kind = outcome.kind[4:] if outcome.kind.startswith("hot_") else "jumped"
    return Outcome(kind, kind != "jumped", {k[4:]: v for k, v in outcome.numbers.items() if k.startswith("hot_")})


def _divisor_at_most(n: int, k: int) -> int:
    """The largest divisor of ``n`` that is ``≤ k`` (so that step ``n`` is a record)."""
    return next(d for d in range(max(min(k, n), 1), 0, -1) if n % d == 0)


def anneal(eps: float = EXP.eps, hot_steps: int = EXP.hot_steps, lr_hot: float = EXP.lr_hot,
           weight_decay_hot: float = EXP.weight_decay_hot, cold_steps: int = 10_000, lr_cold: float = EXP.lr_cold,
           weight_decay_cold: float = EXP.weight_decay_cold, n_seeds: int = 4, seed: int = 0, engine: str = "auto",
           progress=None) -> AnnealResult:
    """§6: a hot phase (large η, γ: SGD jumps) then a cold phase (small η, γ: GD's rank-2 minimum is stable), as
    one :class:`~.engine.Schedule` per run; then a cold GD polish of every final state and the minima's losses.

    The records are every ``d`` steps with ``d`` the largest divisor of ``hot_steps`` at most
    ``(hot_steps + cold_steps)/300``, so the end of the hot phase is a record.
    """
    problem = epsilon_completion(eps)
    p0, start_rank = start_minimum(eps, EXP.depth, EXP.width, weight_decay_hot, 0)
    schedule = Schedule.anneal(hot_steps, lr_hot, weight_decay_hot, lr_cold, weight_decay_cold)
    total = hot_steps + cold_steps
    every = _divisor_at_most(int(hot_steps), _record_every(total))
    _report(progress, 0.15)
    runs = {}
    for k, (method, start) in enumerate((("gd", p0), ("sgd", replicate(p0, n_seeds)))):
        runs[method] = run(start, problem, total, method=method, schedule=schedule, seed=seed, record_every=every,
                           record_layers=False, engine=engine)
        _report(progress, 0.15 + 0.35 * (k + 1))
    gd, sgd = runs["gd"], runs["sgd"]
    # Polish every surviving run with cold GD, so that final losses compare minima, not SGD noise.
    alive_all = np.concatenate([gd.ok_runs, sgd.ok_runs])
    polished_loss = np.full(1 + n_seeds, np.nan)
    polished_rank = np.full(1 + n_seeds, -1)
    if alive_all.any():
        finals = Params(p0.arch, np.concatenate([gd.final.flat, sgd.final.flat], axis=0)[alive_all])
        pol = run(finals, problem, POLISH_STEPS, method="gd", lr=lr_cold, weight_decay=weight_decay_cold,
                  record_every=POLISH_STEPS, record_layers=False, engine=engine)
        idx = np.flatnonzero(alive_all)
        polished_loss[idx] = pol.loss[:, -1]
        polished_rank[idx] = pol.final_rank
    _report(progress, 0.85)
    sgd_hot = records_between(sgd, 0, hot_steps)
    gd_hot = records_between(gd, 0, hot_steps)
    gd_cold, sgd_cold = records_between(gd, hot_steps, total), records_between(sgd, hot_steps, total)
    hot_outcome = jump_outcome(start_rank, sgd_hot, gd_hot, depth=EXP.depth)
    minima = minima_losses(eps, weight_decay_cold)
    better = better_minimum(minima)
    both = anneal_outcome(hot_outcome, gd, sgd, int(hot_steps), sgd_hot, gd_cold, sgd_cold, polished_loss,
                          polished_rank).with_numbers(
        rank1_loss=float(minima["rank1"]), rank2_loss=float(minima["rank2"]),
        **{f"hot_{k}": v for k, v in hot_outcome.numbers.items()})
    outcome = Outcome(both.kind, both.failure, both.numbers, {"better_minimum": better})
    return AnnealResult(start=p0, start_rank=start_rank, schedule=schedule, hot_steps=int(hot_steps), gd=gd, sgd=sgd,
                        gd_hot=gd_hot, sgd_hot=sgd_hot, gd_cold=gd_cold, sgd_cold=sgd_cold,
                        polished_loss=polished_loss, polished_rank=polished_rank, minima=minima,
                        hot_outcome=hot_outcome, better_minimum=better, outcome=outcome)


# ----------------------------------------------------------------------------------------------
# §5 Langevin at a matched temperature vs SGD
# ----------------------------------------------------------------------------------------------
#: Rank threshold of the Langevin comparison: above Langevin's noise floor on s₂(A) (≈1e-5–1e-3 at temperatures
#: up to 10× the matched one), far below the rank-2 minimum's s₂ ≈ 0.33.
LANGEVIN_RANK_TOL = 0.05
#: A rank-keeping direction whose per-step noise variance exceeds this carries SGD's noise (the others: round-off).
CARRYING_VARIANCE = 1e-12


@dataclass(frozen=True, eq=False)
class LangevinResult:
    """SGD and Langevin (isotropic noise) from one rank-2 minimum, and SGD's noise spectrum by direction (§5).

    Attributes:
        start: the phase-0 minimum; sgd, langevin: ``n_runs`` runs each (rank threshold :data:`LANGEVIN_RANK_TOL`).
        tau, tau_match: Langevin's temperature and the matched one (equal total per-step noise at the start).
        spectrum: :func:`~.analysis.noise_spectrum_by_direction` at :attr:`rank1_point`.
        rank1_point, where: the rank-1 point (where an SGD run landed, else the GD rank-1 minimum) and which.
        sgd_transitions, langevin_transitions: ``(down, up)`` rank changes per run.
        stay_low_rank: ``(SGD, Langevin)`` fraction of records at rank ≤ 1 after the first visit, per run.
        outcome: what the runs did (:data:`LANGEVIN_OUTCOMES`, :func:`langevin_outcome`), with what the figure
            quotes: ``tau``, ``tau_match``; ``sgd_down``, ``sgd_up``, ``langevin_down``, ``langevin_up`` (transitions,
            summed over the runs); ``sgd_stay``, ``langevin_stay`` (:attr:`mean_stay_low_rank`);
            ``langevin_floor_s2`` (median s₂(A) of Langevin's records at rank 1, where there are some); of the
            spectrum ``trace_raising``, ``trace_total``, ``n_raising``, ``n_keeping`` and ``n_carrying`` (rank-keeping
            directions above :data:`CARRYING_VARIANCE`); the label ``where``.
    """

    start: Params
    sgd: RunResult
    langevin: RunResult
    tau: float
    tau_match: float
    spectrum: dict
    rank1_point: Params
    where: str
    sgd_transitions: tuple
    langevin_transitions: tuple
    stay_low_rank: tuple
    outcome: Outcome

    @property
    def mean_stay_low_rank(self) -> tuple[float, float]:
        """``(SGD, Langevin)``: :attr:`stay_low_rank` averaged over the runs that reached rank ≤ 1 (NaN: none did)."""
        return _mean_stay(self.stay_low_rank)


def _mean_stay(stay: tuple) -> tuple[float, ...]:
    """Each of ``stay`` (per-run fractions, NaN for a run that never reached rank ≤ 1) averaged over the runs that
    reached it (NaN: none did)."""
    return tuple(float(np.nanmean(s)) if np.isfinite(s).any() else float("nan") for s in stay)


#: What §5's runs can do: diverge, collapse to A = 0, move neither way within the budget (``"no_transitions"``, or
#: ``"no_transitions_too_hot"`` when Langevin is hotter than matched and its own noise keeps s₂ above the rank
#: threshold); or (what §5 shows) SGD only jumps down while Langevin goes both ways (``"both_ways"``) or, within
#: this budget, also only down (``"one_way"``).
LANGEVIN_OUTCOMES = ("diverged", "collapsed", "no_transitions", "no_transitions_too_hot", "both_ways", "one_way")


def langevin_outcome(sgd: RunResult, lang: RunResult, sgd_transitions: tuple, langevin_transitions: tuple,
                     tau: float, tau_match: float) -> Outcome:
    """The :class:`~symsgd_core.core.results.Outcome` of §5's runs (kinds :data:`LANGEVIN_OUTCOMES`). Numbers:
    ``sgd_collapsed`` and ``langevin_collapsed`` (runs) for ``"collapsed"``; ``langevin_median_s2`` (over every
    record of every run) when nothing moved."""
    (s_down, _), (l_down, l_up) = sgd_transitions, langevin_transitions
    if sgd.diverged.any() or lang.diverged.any():
        return Outcome("diverged", True, {})
    if lang.collapsed.any() or sgd.collapsed.any():
        return Outcome("collapsed", True, {"sgd_collapsed": int(sgd.collapsed.sum()),
                                           "langevin_collapsed": int(lang.collapsed.sum())})
    if l_up.sum() > 0:
        return Outcome("both_ways", False, {})
    if l_down.sum() == 0 and s_down.sum() == 0:
        median_s2 = float(np.median(lang.singular_values[:, :, 1]))
        kind = "no_transitions_too_hot" if tau > tau_match else "no_transitions"
        return Outcome(kind, True, {"langevin_median_s2": median_s2})
    return Outcome("one_way", False, {})


def langevin(temp_factor: float = 1.0, lr: float = EXP.lr_hot, n_runs: int = 3, steps: int = 40_000, seed: int = 0,
             engine: str = "auto", progress=None) -> LangevinResult:
    """§5: SGD only jumps down; Langevin at ``temp_factor × τ_match`` goes both ways, a weaker low-rank bias."""
    eps, weight_decay = EXP.eps, EXP.weight_decay_hot
    problem = epsilon_completion(eps)
    p0, _ = start_minimum(eps, EXP.depth, EXP.width, weight_decay, 0)
    tau_match = float(matched_langevin_temperature(p0, problem, lr, weight_decay)[0])
    tau = temp_factor * tau_match
    every = _record_every(steps)
    start = replicate(p0, n_runs)
    _report(progress, 0.15)
    sgd = run(start, problem, steps, method="sgd", lr=lr, weight_decay=weight_decay, seed=seed, record_every=every,
              record_layers=False, rank_tol=LANGEVIN_RANK_TOL, engine=engine)
    _report(progress, 0.3)
    lang = run(start, problem, steps, method="langevin", lr=lr, weight_decay=weight_decay, temperature=tau,
               seed=seed + 1, record_every=every, record_layers=False, rank_tol=LANGEVIN_RANK_TOL, engine=engine)
    _report(progress, 0.85)
    landed = np.flatnonzero((sgd.final_rank == 1) & ~sgd.diverged)
    if landed.size:
        point, where = sgd.final.select([int(landed[0])]), f"the end of SGD run {int(landed[0])}"
    else:
        point = rank_one_minimum(eps, weight_decay=weight_decay)
        where = "the GD rank-1 minimum (no SGD run landed at rank 1)"
    sgd_transitions, langevin_transitions = rank_transitions(sgd.rank), rank_transitions(lang.rank)
    spectrum = noise_spectrum_by_direction(point, problem, 1, lr)
    stay = (fraction_low_rank_after_first_visit(sgd.rank), fraction_low_rank_after_first_visit(lang.rank))
    mean_stay = _mean_stay(stay)
    floor = lang.singular_values[:, :, 1][lang.rank == 1]
    quoted = {"tau": float(tau), "tau_match": float(tau_match),
              "sgd_down": int(sgd_transitions[0].sum()), "sgd_up": int(sgd_transitions[1].sum()),
              "langevin_down": int(langevin_transitions[0].sum()), "langevin_up": int(langevin_transitions[1].sum()),
              "sgd_stay": mean_stay[0], "langevin_stay": mean_stay[1],
              **({"langevin_floor_s2": float(np.median(floor))} if floor.size else {}),
              "trace_raising": float(spectrum["trace_raising"]), "trace_total": float(spectrum["trace_total"]),
              "n_raising": int(spectrum["n_raising"]), "n_keeping": int(spectrum["n_keeping"]),
              "n_carrying": int(np.sum(spectrum["keeping"] > CARRYING_VARIANCE))}
    decided = langevin_outcome(sgd, lang, sgd_transitions, langevin_transitions, tau, tau_match).with_numbers(**quoted)
    return LangevinResult(start=p0, sgd=sgd, langevin=lang, tau=tau, tau_match=tau_match, spectrum=spectrum,
                          rank1_point=point, where=where, sgd_transitions=sgd_transitions,
                          langevin_transitions=langevin_transitions, stay_low_rank=stay,
                          outcome=Outcome(decided.kind, decided.failure, decided.numbers, {"where": where}))


# ----------------------------------------------------------------------------------------------
# The authors' reply, run: every entry observed; the cold weight decay towards 0; the small-ε hot phase
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class FullObservationResult:
    """GD from random init on the ε-completion with all four entries observed, and with three (the appendix).

    Attributes:
        full, partial: the GD runs (:class:`~.engine.RunResult`) with the mask of ones and the ε-completion's mask.
        target_rank: the rank of A* (1).
        lr, weight_decay: η and γ of both runs.
    """

    full: RunResult
    partial: RunResult
    target_rank: int
    lr: float
    weight_decay: float


def all_entries_observed(eps: float = EXP.eps, weight_decay: float = 0.002, lr: float = 0.02, n_runs: int = 8,
                         steps: int = 40_000, seed: int = 0, engine: str = "auto") -> FullObservationResult:
    """GD with small γ and η when every entry of A* = [[1, ε], [1/ε, 1]] is observed (no rank-overestimating
    minimum: the reply's "trivial example"), against the same GD on the three observed entries of the ε-completion.
    """
    target = epsilon_completion(eps).target
    full = CompletionProblem(target, np.ones((2, 2), dtype=bool), name=f"all four entries (ε = {eps:g})")
    p0 = init_params(make_architecture((2, 2), EXP.depth, EXP.width), n_runs, seed)
    runs = [run(p0, problem, steps, method="gd", lr=lr, weight_decay=weight_decay, record_every=max(steps // 100, 1),
                record_layers=False, engine=engine) for problem in (full, epsilon_completion(eps))]
    return FullObservationResult(full=runs[0], partial=runs[1], target_rank=int(numerical_rank(
        np.linalg.svd(target, compute_uv=False))), lr=float(lr), weight_decay=float(weight_decay))


def cold_weight_decay_sweep(eps: float = EXP.eps, weight_decays=(0.01, 0.005, 0.0025)) -> list[dict]:
    """:func:`minima_losses` at each cold γ in ``weight_decays`` (each entry also holds ``weight_decay``): which
    minimum is lower as γ_cold → 0, where 𝓛_γ/γ tends to the induced penalty of the completion each minimum
    approaches."""
    return [dict(minima_losses(eps, float(weight_decay)),
                 weight_decay=float(weight_decay)) for weight_decay in weight_decays]
