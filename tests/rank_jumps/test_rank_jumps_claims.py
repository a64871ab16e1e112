"""Notebook 04's claims (:mod:`symsgd_core.rank_jumps.claims`): each function passes on the experiment's real result
and fails on a broken one (a run's rank changed, a returned run, a NaN, a wrong bound), and a claim that measured
nothing (no run, no record, an empty grid) fails."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

from symsgd_core import rank_jumps
from symsgd_core.core.results import Outcome
from symsgd_core.rank_jumps import claims as C

EXP = rank_jumps.EPSILON_EXPERIMENT
CRIT = rank_jumps.DEFAULT_B_CRITERION


def _by_name(rows) -> dict:
    return {r.name: r for r in rows}


def _all_pass(rows) -> None:
    rows = list(rows)
    assert rows and all(r.passed for r in rows), [str(r) for r in rows if not r.passed]


def _fails(rows, name: str, nothing: bool = False) -> None:
    """The claim ``name`` failed; with ``nothing``: because it measured nothing (NaN)."""
    row = _by_name(rows)[name]
    assert not row.passed, row
    if nothing:
        assert math.isnan(row.measured), row


@pytest.fixture(scope="module")
def minima():
    p2, rank2 = rank_jumps.start_minimum()
    return p2, rank2, rank_jumps.rank_one_minimum()


# -- §0 the minima and B_r ---------------------------------------------------------------------------------------------
def test_minima_claims_hold_and_fail_on_a_wrong_rank_membership_or_scale(minima):
    p2, rank2, p1 = minima
    _all_pass(C.minima_claims(p2, rank2, p1, EXP.problem, CRIT))
    _fails(C.minima_claims(p2, 3, p1, EXP.problem, CRIT), "rank_jumps.minima.ranks")
    _fails(C.minima_claims(p1, rank2, p2, EXP.problem, CRIT), "rank_jumps.minima.B_membership")   # swapped minima
    _fails(C.minima_claims(p2, rank2, p1, EXP.problem, dataclasses.replace(CRIT, eps1=1.5)),
           "rank_jumps.minima.eps2_on_layer_scale")
    _fails(C.minima_claims(p2, rank2, p1, EXP.problem, CRIT, scale_range=(1.3, 1.45)),
           "rank_jumps.minima.layer_scale_high")


# -- §1 the cusp ------------------------------------------------------------------------------------------------------
def test_penalty_claims_hold_and_fail_on_a_wrong_barrier_or_origin(monkeypatch):
    _all_pass(C.penalty_claims())
    with monkeypatch.context() as m:
        m.setattr(C, "barrier_width", lambda L, weight_decay, g: 0.0)   # no barrier at any depth
        rows = C.penalty_claims()
        _fails(rows, "rank_jumps.penalty.barrier_deep")
        _fails(rows, "rank_jumps.penalty.no_barrier_L2")       # δ* = ∞ expected where g ≤ 2γ
    with monkeypatch.context() as m:
        m.setattr(C, "origin_is_local_min", lambda L, weight_decay: True)   # the origin a trap at L = 2 too
        _fails(C.penalty_claims(), "rank_jumps.penalty.origin_L2")
    rows = C.penalty_claims(weight_decays=())
    for name in _by_name(rows):
        _fails(rows, name, nothing=True)


# -- the appendix: the reply ------------------------------------------------------------------------------------------
def test_explosion_claims_hold_and_fail_when_the_printed_formula_passes(minima):
    p1 = minima[2]
    explosion = rank_jumps.check_explosion(p1)
    as_printed = rank_jumps.check_explosion(p1, formula=lambda i, L: i ** (-2 / L))[0]
    _all_pass(C.explosion_claims(explosion, as_printed, EXP.depth))
    right = rank_jumps.check_explosion(p1)[0]   # the right formula "as printed": it passes, relative error ~0
    rows = C.explosion_claims(explosion, right, EXP.depth)
    _fails(rows, "rank_jumps.explosion.as_printed_fails")
    _fails(rows, "rank_jumps.explosion.missing_factor")
    _fails(C.explosion_claims(explosion, dataclasses.replace(as_printed, measured=math.nan), EXP.depth),
           "rank_jumps.explosion.missing_factor", nothing=True)


def test_eckart_young_claims_hold_and_fail_near_rank_one(minima):
    _all_pass(C.eckart_young_claims(minima[0].end_to_end()[0], 1))
    near_rank1 = np.diag([1.0, 0.05])   # s₂ = 50 × the rank threshold: under the stated margin of 100
    rows = C.eckart_young_claims(near_rank1, 1)
    assert _by_name(rows)["rank_jumps.eckart_young"].passed
    _fails(rows, "rank_jumps.eckart_young.margin")


def test_full_observation_claims_hold_and_fail_on_a_swapped_or_empty_result():
    full = rank_jumps.all_entries_observed(n_runs=2)
    _all_pass(C.full_observation_claims(full))
    _fails(C.full_observation_claims(dataclasses.replace(full, partial=full.full)), "rank_jumps.three_observed_trapped")
    _fails(C.full_observation_claims(dataclasses.replace(full, full=full.partial)),
           "rank_jumps.all_observed_right_rank")
    empty = SimpleNamespace(final_rank=np.zeros(0, dtype=int), n_runs=0)
    rows = C.full_observation_claims(SimpleNamespace(full=empty, partial=empty, target_rank=1))
    for name in _by_name(rows):
        _fails(rows, name, nothing=True)


# -- §0 the trap ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trap():
    return rank_jumps.trap()


def _with_rank(run, k: int, record: slice, value: int):
    rank = run.rank.copy()
    rank[k, record] = value
    return dataclasses.replace(run, rank=rank)


def test_trap_claims_hold_on_the_notebooks_default(trap):
    _all_pass(C.trap_claims(trap, CRIT))


def test_trap_claims_fail_on_a_moved_gd_a_returned_run_a_nan_or_no_jump(trap):
    _fails(C.trap_claims(dataclasses.replace(trap, gd=_with_rank(trap.gd, 0, slice(-1, None), 1)), CRIT),
           "rank_jumps.trap.gd_stays")
    returned = trap.sgd.returned_up.copy()
    returned[0] = True
    _fails(C.trap_claims(dataclasses.replace(trap, sgd=dataclasses.replace(trap.sgd, returned_up=returned)), CRIT),
           "rank_jumps.no_returns")
    in_b = trap.sgd.in_B.copy()
    in_b[0, -1, 1] = False   # the last record of a jumped run outside B_1
    _fails(C.trap_claims(dataclasses.replace(trap, sgd=dataclasses.replace(trap.sgd, in_B=in_b)), CRIT),
           "rank_jumps.trap.sgd_stays_in_B1")
    bal = trap.gd.balancedness.copy()
    bal[0, 3] = np.nan
    _fails(C.trap_claims(dataclasses.replace(trap, gd=dataclasses.replace(trap.gd, balancedness=bal)), CRIT),
           "rank_jumps.trap.balance_test", nothing=True)
    stuck = dataclasses.replace(trap.sgd, rank=np.full_like(trap.sgd.rank, 2))   # no SGD run jumps
    rows = C.trap_claims(dataclasses.replace(trap, sgd=stuck), CRIT)
    _fails(rows, "rank_jumps.trap.sgd_jumps")
    _fails(rows, "rank_jumps.trap.sgd_stays_in_B1", nothing=True)
    _fails(C.trap_claims(dataclasses.replace(trap, start_rank=1), CRIT), "rank_jumps.trap.start_rank")


def test_step_size_claims_hold_at_the_hot_step_and_fail_at_a_small_or_unstable_one(minima):
    lam_max = rank_jumps.analysis.loss_hessian_top_eigenvalue(minima[0], EXP.problem, EXP.weight_decay_hot)
    rows = C.step_size_claims(lam_max)
    _all_pass(rows)
    assert _by_name(rows)["rank_jumps.step_size.quoted"].details["eta_lam_max"] == pytest.approx(1.19, abs=0.005)
    _fails(C.step_size_claims(lam_max, lr=EXP.lr_cold), "rank_jumps.step_size.not_small")    # η λ_max ≈ 0.2
    _fails(C.step_size_claims(lam_max, lr=EXP.lr_cold), "rank_jumps.step_size.quoted")
    _fails(C.step_size_claims(lam_max, lr=0.6), "rank_jumps.step_size.gd_stable")            # ≈ 2.4
    _fails(C.step_size_claims(lam_max, quoted=1.1), "rank_jumps.step_size.quoted")
    _fails(C.step_size_claims(math.nan), "rank_jumps.step_size.quoted", nothing=True)


# -- §2 the ensemble ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ens():
    return rank_jumps.ensemble()


def test_ensemble_claims_hold_on_the_notebooks_default(ens, trap):
    _all_pass(C.ensemble_claims(ens, EXP.hot_steps, CRIT, trap=trap))


def test_ensemble_claims_fail_on_a_return_a_collapse_clustered_waits_or_a_nan(ens):
    jumped = int(np.flatnonzero(ens.sgd.final_rank == 1)[0])
    back = dataclasses.replace(ens, sgd=_with_rank(ens.sgd, jumped, slice(-1, None), 2))   # back at rank 2 at the end
    rows = C.ensemble_claims(back, EXP.hot_steps, CRIT)
    _fails(rows, "rank_jumps.ensemble.one_way")
    _fails(rows, "rank_jumps.ensemble.B1_is_rank1")
    _fails(C.ensemble_claims(dataclasses.replace(ens, sgd=_with_rank(ens.sgd, 0, slice(5, 6), 0)), EXP.hot_steps,
                             CRIT), "rank_jumps.ensemble.no_collapse")
    _fails(C.ensemble_claims(dataclasses.replace(ens, sgd=_with_rank(ens.sgd, 0, slice(0, 1), 1)), EXP.hot_steps,
                             CRIT), "rank_jumps.ensemble.start_rank")
    clustered = np.where(ens.jump_steps >= 0, 30_000, -1)   # every jump at the same step: not memoryless
    _fails(C.ensemble_claims(dataclasses.replace(ens, jump_steps=clustered), EXP.hot_steps, CRIT),
           "rank_jumps.memoryless_jumps")
    bal = ens.sgd.balancedness.copy()
    bal[1, 7] = np.nan
    rows = C.ensemble_claims(dataclasses.replace(ens, sgd=dataclasses.replace(ens.sgd, balancedness=bal)),
                             EXP.hot_steps, CRIT)
    for name in ("rank_jumps.ensemble.balance_test", "rank_jumps.ensemble.eps2_margin",
                 "rank_jumps.ensemble.eps2_above_hot"):
        _fails(rows, name, nothing=True)
    _fails(C.ensemble_claims(ens, EXP.hot_steps, dataclasses.replace(CRIT, eps1=3.0)),
           "rank_jumps.ensemble.eps2_margin")   # ε₂ more than twice the largest imbalance


# -- §3 the mechanism -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mech():
    return rank_jumps.mechanism()


def test_mechanism_claims_hold_and_fail_on_a_regrown_rank_or_a_missing_run(mech):
    _all_pass(C.mechanism_claims(mech, EXP.problem))
    _fails(C.mechanism_claims(dataclasses.replace(mech, forced_rank=2), EXP.problem),
           "rank_jumps.mechanism.forced_rank")
    _fails(C.mechanism_claims(dataclasses.replace(mech, sgd=_with_rank(mech.sgd, 0, slice(-3, None), 2)), EXP.problem),
           "rank_jumps.mechanism.absorbed")
    _fails(C.mechanism_claims(dataclasses.replace(mech, gd=None), EXP.problem), "rank_jumps.mechanism.absorbed",
           nothing=True)
    all_four = rank_jumps.CompletionProblem(EXP.problem.target, np.ones((2, 2), dtype=bool))   # row 0: 2 of 4
    _fails(C.mechanism_claims(mech, all_four), "rank_jumps.mechanism.row_share")


# -- §4 the basin ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def basin():
    return rank_jumps.basin()


def test_basin_claims_hold_and_fail_on_an_escaped_push_no_edge_or_a_wrong_gamma(basin):
    _all_pass(C.basin_claims(basin, EXP.weight_decay_hot, EXP.depth, CRIT))
    ranks = basin.final_rank.copy()
    ranks[0] = 2   # the smallest push escapes
    _fails(C.basin_claims(dataclasses.replace(basin, final_rank=ranks), EXP.weight_decay_hot, EXP.depth, CRIT),
           "rank_jumps.basin.small_pushes_return")
    ranks = basin.final_rank.copy()
    ranks[-1] = 2
    _fails(C.basin_claims(dataclasses.replace(basin, final_rank=ranks), EXP.weight_decay_hot, EXP.depth, CRIT),
           "rank_jumps.basin.chosen_push_inside")
    no_edge = C.basin_claims(dataclasses.replace(basin, boundary=(basin.boundary[0], math.nan)), EXP.weight_decay_hot,
                             EXP.depth, CRIT)
    _fails(no_edge, "rank_jumps.basin.edge_low", nothing=True)
    _fails(no_edge, "rank_jumps.basin.edge_high", nothing=True)
    _fails(C.basin_claims(basin, 2 * EXP.weight_decay_hot, EXP.depth, CRIT), "rank_jumps.basin.radius_scaling")
    _fails(C.basin_claims(basin, EXP.weight_decay_hot, EXP.depth, dataclasses.replace(CRIT, alpha=1.0)),
           "rank_jumps.basin.eps1_inside")
    nothing = dataclasses.replace(basin, alphas=basin.alphas[-1:], final_rank=basin.final_rank[-1:])   # no grid
    _fails(C.basin_claims(nothing, EXP.weight_decay_hot, EXP.depth, CRIT), "rank_jumps.basin.small_pushes_return",
           nothing=True)


# -- §6 annealing and the minimum-norm completion --------------------------------------------------------------------
def _anneal_fake(polished_rank, polished_loss, rank1, rank2):
    return SimpleNamespace(polished_rank=np.asarray(polished_rank), polished_loss=np.asarray(polished_loss),
                           minima={"rank1": rank1, "rank2": rank2})


def test_anneal_claims_on_small_fakes_pass_and_fail():
    ok = _anneal_fake([2, 1, 1], [0.30, 0.29, 0.29], 0.29, 0.30)
    small = {"rank1": 0.2, "rank2": 0.1}
    quiet = SimpleNamespace(jump_steps=np.full(8, -1))
    _all_pass(C.anneal_claims(ok, small, quiet))
    _fails(C.anneal_claims(_anneal_fake([2, 1, 2], [0.30, 0.29, 0.30], 0.29, 0.30), small, quiet),
           "rank_jumps.anneal.ranks")
    _fails(C.anneal_claims(_anneal_fake([2, 1, 1], [0.28, 0.29, 0.29], 0.29, 0.30), small, quiet),
           "rank_jumps.anneal.runs_match_minima")
    _fails(C.anneal_claims(_anneal_fake([2, 1, 1], [0.30, 0.29, 0.29], 0.30, 0.30), small, quiet),
           "rank_jumps.anneal.rank1_lower")   # equal losses: "lower" is strict
    _fails(C.anneal_claims(ok, {"rank1": 0.1, "rank2": 0.2}, quiet), "rank_jumps.anneal.rank2_lower_small_eps")
    _fails(C.anneal_claims(ok, small, SimpleNamespace(jump_steps=np.array([-1, 5000]))), "rank_jumps.no_jumps")
    rows = C.anneal_claims(_anneal_fake([2], [0.3], 0.29, 0.30), small, SimpleNamespace(jump_steps=np.zeros(0)))
    for name in ("rank_jumps.anneal.ranks", "rank_jumps.anneal.runs_match_minima", "rank_jumps.no_jumps"):
        _fails(rows, name, nothing=True)


@pytest.mark.slow
def test_anneal_claims_hold_on_the_notebooks_default():
    """The notebook's §6 (about 10 s: the anneal, the ε = 0.1 minima and 32 quiet runs)."""
    a = rank_jumps.anneal()
    _all_pass(C.anneal_claims(a, rank_jumps.minima_losses(0.1, EXP.weight_decay_cold),
                              rank_jumps.ensemble(eps=0.1, n_runs=32)))


@pytest.fixture(scope="module")
def sweep():
    return rank_jumps.cold_weight_decay_sweep(EXP.eps, (0.01, 0.005, 0.0025))


def test_min_norm_claims_hold_and_fail_on_a_reordered_sweep_a_moved_threshold_or_nothing(sweep):
    _all_pass(C.min_norm_claims(sweep, EXP.eps, EXP.depth))
    rows = C.min_norm_claims(sweep[::-1], EXP.eps, EXP.depth)
    _fails(rows, "rank_jumps.cold_sweep.first_rank1")
    _fails(rows, "rank_jumps.cold_sweep.last_rank2")
    above = [dict(row, rank2=row["rank2"] * 10) for row in sweep]   # a loss above γ × the feasible penalty
    _fails(C.min_norm_claims(above, EXP.eps, EXP.depth), "rank_jumps.cold_sweep.feasible")
    _fails(C.min_norm_claims(sweep, EXP.eps, EXP.depth, last_rank2=0.32), "rank_jumps.min_norm.threshold")
    rows = C.min_norm_claims([], EXP.eps, EXP.depth, eps_grid=())
    for name in ("rank_jumps.min_norm.threshold", "rank_jumps.cold_sweep.feasible",
                 "rank_jumps.cold_sweep.first_rank1", "rank_jumps.cold_sweep.last_rank2"):
        _fails(rows, name, nothing=True)


# -- §5 Langevin and SGD's noise ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_langevin_claims_hold_and_fail_on_a_returned_sgd_run_or_no_langevin_return():
    """The notebook's §5 (about 10 s: two Langevin comparisons)."""
    matched, hot = rank_jumps.langevin(), rank_jumps.langevin(temp_factor=10.0)
    hot_minima = rank_jumps.minima_losses(EXP.eps, EXP.weight_decay_hot)
    _all_pass(C.langevin_claims(matched, hot, hot_minima))
    down, up = matched.sgd_transitions
    up = up.copy()
    up[0] = 1
    _fails(C.langevin_claims(dataclasses.replace(matched, sgd_transitions=(down, up)), hot, hot_minima),
           "rank_jumps.langevin.sgd_never_up")
    _fails(C.langevin_claims(matched, matched, hot_minima), "rank_jumps.langevin.hot_goes_up")   # "hot" never goes up
    _fails(C.langevin_claims(hot, hot, hot_minima), "rank_jumps.langevin.no_return")
    lang = matched.langevin
    rows = C.langevin_claims(dataclasses.replace(matched, langevin=dataclasses.replace(
        lang, rank=np.full_like(lang.rank, 2))), hot, hot_minima)   # Langevin never at rank 1: nothing measured
    _fails(rows, "rank_jumps.langevin.sooner", nothing=True)
    _fails(rows, "rank_jumps.langevin.noise_floor", nothing=True)
    _fails(C.langevin_claims(matched, hot, {"rank1": 0.2, "rank2": 0.1}), "rank_jumps.langevin.hot_minima")


def _near(exponent: float, rank_c=(2, 2)) -> dict:
    a = np.array([0.01, 0.02, 0.04])
    return {"a": a, "share": 3.0 * a ** exponent, "rank_C": np.array(rank_c + (2,)), "depth": 4, "n_observed": 3}


def test_noise_claims_pass_on_the_law_and_fail_on_a_wrong_exponent_rank_or_minima():
    at_rank2 = {"rank_C": np.array([2]), "n_observed": 3}
    cold, hot = {"rank1": 0.2, "rank2": 0.1}, {"rank1": 0.1, "rank2": 0.2}
    _all_pass(C.noise_claims(_near(6.0), at_rank2, cold, hot))
    _fails(C.noise_claims(_near(4.0), at_rank2, cold, hot), "rank_jumps.raising_noise_scaling")
    _fails(C.noise_claims(_near(6.0), {"rank_C": np.array([3]), "n_observed": 3}, cold, hot),
           "rank_jumps.noise_rank_bound_rank2")
    _fails(C.noise_claims(_near(6.0), {"rank_C": np.zeros(0), "n_observed": 3}, cold, hot),
           "rank_jumps.noise_rank_bound_rank2", nothing=True)
    _fails(C.noise_claims(_near(6.0), at_rank2, hot, hot), "rank_jumps.noise.cold_rank2_lower")
    _fails(C.noise_claims(_near(6.0), at_rank2, cold, cold), "rank_jumps.noise.hot_rank1_lower")


@pytest.mark.slow
def test_noise_claims_hold_on_the_notebooks_points(minima):
    """The notebook's §5 noise cell (about 10 s: the noise covariance at five points and four minima)."""
    p2, _, p1 = minima
    near = rank_jumps.raising_noise_near(p1, EXP.problem, np.array([0.01, 0.02, 0.04, 0.08]), EXP.lr_hot)
    at_rank2 = rank_jumps.raising_noise_near(p2, EXP.problem, np.array([0.0]), EXP.lr_hot, rank=2)
    _all_pass(C.noise_claims(near, at_rank2, rank_jumps.minima_losses(0.1, EXP.weight_decay_cold),
                             rank_jumps.minima_losses(0.1, EXP.weight_decay_hot)))


# -- §7 failure modes, §8 exercises ---------------------------------------------------------------------------------
def test_failure_mode_claims_pass_and_fail_on_a_wrong_kind_a_plain_title_or_nothing():
    d = Outcome("collapsed", True, {})
    _all_pass(C.failure_mode_claims([(d, {"collapsed", "diverged"}, "FAILURE MODE: collapse")]))
    _fails(C.failure_mode_claims([(d, {"no_jumps"}, "FAILURE MODE: collapse")]), "rank_jumps.failure_modes.diagnosed")
    _fails(C.failure_mode_claims([(d, {"collapsed"}, "collapse")]), "rank_jumps.failure_modes.titled")
    rows = C.failure_mode_claims([])
    for name in _by_name(rows):
        _fails(rows, name, nothing=True)


def test_exercise_claims_hold_and_fail_on_a_broken_exercise():
    _all_pass(C.exercise_claims(rank_jumps.EXERCISES))
    name, ex = next(iter(rank_jumps.EXERCISES.items()))
    no_hint = dataclasses.replace(ex, hint="")
    _fails(C.exercise_claims({name: no_hint}), "rank_jumps.exercises.hint_and_worked")
    wrong = SimpleNamespace(solution=1, worked="w", hint="h", check=lambda answer: SimpleNamespace(correct=False))
    _fails(C.exercise_claims({"wrong": wrong}), "rank_jumps.exercises.accept_solution")
    rows = C.exercise_claims({})
    for name in _by_name(rows):
        _fails(rows, name, nothing=True)


def test_claims_read_without_raw_markup(minima, trap, ens, mech, basin):
    """No TeX and no brace of a ``W_{ℓ+1}`` reaches the claims table: every claim and tolerance source of the
    section functions, rendered as the table renders it (``readable_html``)."""
    import re

    from symsgd_core.core.checking import readable_html

    p2, rank2, p1 = minima
    near = _near(6.0)
    rows = [*C.minima_claims(p2, rank2, p1, EXP.problem, CRIT), *C.penalty_claims(),
            *C.explosion_claims(rank_jumps.check_explosion(p1), rank_jumps.check_explosion(p1)[0], EXP.depth),
            *C.eckart_young_claims(np.diag([1.0, 0.5]), 1), *C.trap_claims(trap, CRIT), *C.ensemble_claims(ens, 60_000),
            *C.mechanism_claims(mech, EXP.problem), *C.basin_claims(basin, EXP.weight_decay_hot, EXP.depth, CRIT),
            *C.anneal_claims(_anneal_fake([2, 1], [0.3, 0.29], 0.29, 0.3), {"rank1": 0.2, "rank2": 0.1},
                             SimpleNamespace(jump_steps=np.full(4, -1))),
            *C.noise_claims(near, {"rank_C": np.array([2]), "n_observed": 3}, {"rank1": 0.2, "rank2": 0.1},
                            {"rank1": 0.1, "rank2": 0.2}),
            *C.failure_mode_claims([]), *C.exercise_claims({})]
    texts = [t for r in rows for t in (r.claim, r.tolerance_source)]
    raw = [t for t in texts if re.search(r"[_^]\{|\\[a-zA-Z]|\$", readable_html(t))]
    assert len(texts) > 80 and not raw, raw
