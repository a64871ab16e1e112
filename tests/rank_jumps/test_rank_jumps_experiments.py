"""Notebook 04's experiments (symsgd_core.rank_jumps.experiments) and exercises, called directly.

These are the science tests of the figures: each calls the experiment function the controller calls, at the
notebook's defaults, and asserts the outcome the notebook states. The controllers' own tests
(tests/ui/test_ui_rank_jumps.py) only check that they draw and describe these results.
"""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import rank_jumps
from symsgd_core.rank_jumps.exercises import basin_radius_exercise, better_minimum_exercise, decay_factor_exercise
from symsgd_core.rank_jumps.experiments import BASIN_SLOPE

EXP = rank_jumps.EPSILON_EXPERIMENT


# -- 1. penalty ---------------------------------------------------------------------------------
def test_penalty_view_L2_versus_deeper():
    deep = rank_jumps.penalty_view()
    assert deep.origin_trap and deep.barrier_width > 0
    shallow = rank_jumps.penalty_view(depth=2, weight_decay=0.01, gain=1.0)
    assert shallow.barrier_width == 0.0 and not shallow.origin_trap
    assert rank_jumps.penalty_view(depth=3, weight_decay=0.01, gain=1.0).barrier_width > 0
    np.testing.assert_allclose(deep.penalty_L, rank_jumps.analysis.schatten_penalty(deep.s, deep.depth))


# -- 2. GD trapped, SGD jumps --------------------------------------------------------------------
def test_trap_default_gd_stays_sgd_jumps_never_returns():
    r = rank_jumps.trap()
    assert r.start_rank == 2
    assert r.outcome.kind == "jumped" and not r.outcome.failure
    n = r.outcome.numbers
    assert n["n_runs"] == 4 and n["jumped"] == 4 and n["returns"] == 0 and n["final_counts"] == (0, 4, 0)
    assert n["gd_final_rank"] == 2 and n["gd_diverged_step"] == -1 and n["diverged"] == 0
    assert 0 < n["median_jump_step"] <= n["steps"] == EXP.hot_steps
    assert np.all(r.gd.rank == 2)
    assert np.all(r.sgd.final_rank == 1)
    assert rank_jumps.checks.check_no_returns(r.sgd).passed


@pytest.mark.parametrize("setting, kinds", [
    (dict(lr=0.5), {"collapsed", "diverged"}),
    (dict(weight_decay=0.06), {"gd_low_rank"}),
    (dict(lr=0.1), {"no_jumps"}),
    (dict(depth=2), {"shallow"}),
])
def test_trap_failure_modes_are_classified_on_real_runs(setting, kinds):
    r = rank_jumps.trap(**{"steps": 10_000, "n_seeds": 2, **setting})
    assert r.outcome.kind in kinds and r.outcome.failure, r.outcome
    assert r.outcome.numbers["depth"] == setting.get("depth", EXP.depth)


def test_jump_outcome_numbers_are_numbers_not_words():
    """What the runs did is data: every number of a jump outcome is an int, a float or a tuple of them (the trap's
    outcome adds the B_r membership, whose ``B_balanced`` is a yes/no)."""
    r = rank_jumps.trap(steps=10_000, n_seeds=2)
    for name, value in r.outcome.numbers.items():
        values = value if isinstance(value, tuple) else (value,)
        assert all(isinstance(v, (int, float)) and (name == "B_balanced") == isinstance(v, bool)
                   for v in values), (name, value)


@pytest.mark.parametrize("rank, gd_rank, kwargs, kind", [
    ([[2, 2, 1], [2, 2, 2]], [[2, 2, 2]], {}, "jumped"),
    ([[2, 2, 2], [2, 2, 2]], [[2, 2, 2]], {}, "no_jumps"),
    ([[2, 1, 0], [2, 0, 0]], [[2, 2, 2]], {}, "collapsed"),
    ([[2, 2, -1], [2, 2, 2]], [[2, 2, 2]], dict(diverged=[True, False]), "diverged"),
    ([[2, 2, 2], [2, 2, 2]], [[2, 1, 1]], {}, "gd_low_rank"),
])
def test_jump_outcome_names_each_kind(rank, gd_rank, kwargs, kind):
    from test_rank_jumps_analysis import _fake

    from symsgd_core.rank_jumps.experiments import JUMP_OUTCOMES, jump_outcome

    o = jump_outcome(2, _fake(rank, **kwargs), _fake(gd_rank), depth=4)
    assert o.kind == kind and o.kind in JUMP_OUTCOMES
    assert o.failure == (kind != "jumped")


def test_jump_outcome_numbers_on_a_synthetic_record():
    from test_rank_jumps_analysis import _fake

    from symsgd_core.rank_jumps.experiments import jump_outcome

    # run 0 jumps at step 100 and collapses at 200; runs 1 and 2 jump at 200 and 100; run 3 never jumps; GD stays
    o = jump_outcome(2, _fake([[2, 1, 0], [2, 2, 1], [2, 1, 1], [2, 2, 2]]), _fake([[2, 2, 2]]), depth=4)
    assert o.kind == "jumped"  # one collapse, two runs at rank 1: the collapses do not match the jumps
    n = o.numbers
    assert (n["jumped"], n["median_jump_step"], n["collapsed"], n["at_target"]) == (3, 100, 1, 2)
    assert n["final_counts"] == (1, 2, 1) and n["gd_final_rank"] == 2 and n["gd_diverged_step"] == -1
    assert (n["n_runs"], n["steps"], n["start_rank"], n["target_rank"], n["diverged"]) == (4, 200, 2, 1, 0)
    # as many collapses as runs at rank 1: collapsed
    assert jump_outcome(2, _fake([[2, 1, 0], [2, 2, 1]]), None, depth=4).kind == "collapsed"


def test_jump_outcome_low_start_rank_shallow_and_bad_input():
    from test_rank_jumps_analysis import _fake

    from symsgd_core.rank_jumps.experiments import jump_outcome

    sgd = _fake([[1, 1, 1]])
    assert jump_outcome(1, sgd, None, depth=4).kind == "gd_low_rank"
    assert jump_outcome(1, sgd, None, depth=2).kind == "shallow"
    shallow = jump_outcome(2, _fake([[2, 1, 1]]), None, depth=2)
    assert shallow.kind == "shallow" and shallow.numbers["depth"] == 2 and shallow.numbers["final_counts"] == (0, 1, 0)
    # GD that diverged is not "GD also left the rank": SGD's outcome decides
    gd = _fake([[2, 2, -1]], diverged=[True])
    assert jump_outcome(2, _fake([[2, 2, 2]]), gd, depth=4).kind == "no_jumps"
    with pytest.raises(ValueError, match="depth"):
        jump_outcome(2, sgd, None, depth=0)


def test_the_science_layer_writes_no_words():
    """What the runs did is an Outcome (kind, failure, numbers); its sentences live in the figure (ui.rank_jumps)."""
    import dataclasses

    from symsgd_core.core.results import Outcome

    for module in (rank_jumps, rank_jumps.analysis, rank_jumps.experiments):
        assert not hasattr(module, "Diagnosis") and not hasattr(module, "diagnose"), module.__name__
    for cls, field in ((rank_jumps.TrapResult, "outcome"), (rank_jumps.EnsembleResult, "outcome"),
                       (rank_jumps.AnnealResult, "hot_outcome")):
        fields = {f.name: f.type for f in dataclasses.fields(cls)}
        assert "diagnosis" not in fields and fields[field] in (Outcome, "Outcome"), cls.__name__


# -- 3. ensemble --------------------------------------------------------------------------------
def test_ensemble_default_fractions_and_zero_returns():
    r = rank_jumps.ensemble()
    frac = r.sgd.fraction_at_rank()
    assert np.allclose(frac.sum(axis=1), 1.0)
    assert frac[0, 2] == 1.0 and frac[-1, 1] > 0.5
    assert r.returns == 0
    assert np.isfinite(r.mean_wait) and r.mean_wait > 0
    # a duration exactly for the runs that jumped (two functions of the records, jump_steps and jump_durations)
    assert np.array_equal(r.durations >= 0, r.jump_steps >= 0)


# -- 4. mechanism -------------------------------------------------------------------------------
def test_mechanism_exact_decay_then_rank_one_for_gd_and_sgd():
    r = rank_jumps.mechanism()
    check = rank_jumps.checks.check_exact_decay(r.forced, r.depth)
    assert check.passed, check
    assert r.decay_error == check.measured and r.decay_error <= r.decay_tolerance
    assert r.forced_rank == 1
    assert np.all(r.gd.rank == 1) and np.all(r.sgd.rank == 1)


def test_mechanism_short_forced_phase_stays_rank_two():
    r = rank_jumps.mechanism(after_steps=5000, n_seeds=1, forced_steps=250, lr=0.05, weight_decay=0.005)
    assert r.forced_rank == 2


# -- 5. basin -----------------------------------------------------------------------------------
def test_basin_small_alpha_back_large_alpha_escapes():
    r = rank_jumps.basin()
    alphas, ranks = r.alphas[:-1], r.final_rank[:-1]
    lo, hi = r.boundary
    assert np.all(ranks[alphas <= 0.5 * r.alpha_c] == 1)
    assert np.isfinite(hi) and 0.5 * r.alpha_c < hi <= 2.0 * r.alpha_c
    assert r.final_rank[-1] == 1  # the default α = 0.3 is pulled back
    assert rank_jumps.basin(alpha=float(hi)).final_rank[-1] == 2
    assert r.slope == pytest.approx(rank_jumps.experiments.basin_slope(), rel=1e-12)


# -- 6. annealing -------------------------------------------------------------------------------
def test_anneal_gd_keeps_two_sgd_keeps_one_and_the_rank_one_minimum_is_better():
    r = rank_jumps.anneal()
    assert r.polished_rank[0] == 2 and np.all(r.polished_rank[1:] == 1)
    assert r.minima["rank1"] < r.minima["rank2"]  # ε = 0.2, γ_cold = 0.01
    # one run per method through the Schedule: the phases are slices of it
    assert r.schedule.kind == "phases" and r.gd.steps[-1] == r.hot_steps + 10_000
    assert r.sgd_hot.steps[-1] == r.hot_steps == r.sgd_cold.steps[0]
    np.testing.assert_array_equal(r.sgd_hot.rank, r.sgd.rank[:, r.sgd.steps <= r.hot_steps])


def test_anneal_small_eps_prefers_rank_two_and_hot_phase_does_not_jump():
    """The notebook's "Try ε = 0.1": the rank-2 minimum is the better one and the hot phase no longer jumps."""
    r = rank_jumps.anneal(eps=0.1)
    assert r.minima["rank2"] < r.minima["rank1"]
    assert r.hot_outcome.kind == "no_jumps"


# -- 7. Langevin --------------------------------------------------------------------------------
def test_langevin_hot_goes_both_ways_and_sgd_noise_spares_raising_directions():
    r = rank_jumps.langevin(temp_factor=10.0)
    _, l_up = r.langevin_transitions
    _, s_up = r.sgd_transitions
    assert l_up.sum() > 0 and s_up.sum() == 0
    check = rank_jumps.checks.check_raising_noise(r.spectrum, r.rank1_point.arch.n_params)
    assert check.passed, check


def test_results_are_frozen():
    r = rank_jumps.basin(steps=100)
    with pytest.raises(AttributeError):
        r.slope = 1.0


# -- 9. exercises -------------------------------------------------------------------------------
def test_exercises_none_right_wrong():
    ex = rank_jumps.EXERCISES
    for e in ex.values():
        assert e.check(None).status == "unanswered"
    assert ex["decay_factor"].check((1 - 2 * 0.3 * 0.027) ** 1000).correct
    wrong = ex["decay_factor"].check((1 - 0.3 * 0.027) ** 1000)
    assert wrong.status == "wrong" and "1 − 2ηγ" in wrong.message
    assert ex["decay_factor"].check("abc").status == "wrong"
    assert "η = 0.3, γ = 0.027" in ex["decay_factor"].question and "t = 1000" in ex["decay_factor"].question
    assert ex["trap_depth"].check(3).correct and ex["trap_depth"].check("3").correct
    assert "saddle" in ex["trap_depth"].check(2).message and not ex["trap_depth"].check(4).correct
    assert ex["basin_radius"].check((2 * 0.027 / 0.17) ** 0.5).correct
    assert not ex["basin_radius"].check(0.1).correct
    one_way = ex["one_way"].check
    assert one_way(False).correct and not one_way(True).correct
    assert one_way(np.False_).correct and one_way("no").correct and one_way(" False ").correct
    assert not one_way("yes").correct and "True or False" in one_way("perhaps").message


def test_every_exercise_accepts_its_written_solution():
    for e in rank_jumps.EXERCISES.values():
        assert e.check(e.solution).correct, e.name


def test_decay_factor_solution_is_a_hand_computation_not_the_checker(monkeypatch):
    """The expected answer and the solution were the same expression, so the test could not fail.
    Now the solution is the number a student computes by hand, and it must match the engine's law."""
    ex = decay_factor_exercise()
    assert ex.solution == 8.069e-08
    assert ex.check(ex.solution).correct
    # the test can fail: with a wrong law (1 − ηγ, a ½ in the weight decay) the hand computation is rejected
    from symsgd_core.rank_jumps import exercises

    monkeypatch.setattr(exercises, "weight_decay_factor", lambda lr, weight_decay, t=1: (1 - lr * weight_decay) ** t)
    assert not exercises.decay_factor_exercise().check(ex.solution).correct


def test_basin_radius_exercise_uses_the_measured_slope():
    """The exercise hard-coded slope=0.17; it now measures the slope at the rank-1 minimum and quotes
    the measured value, so the question and the basin figure agree."""
    slope = rank_jumps.experiments.basin_slope()
    assert slope == pytest.approx(0.17, abs=0.005)
    # the stored value (10 digits: rounding ≤ 5e-11, i.e. 3e-10 relative) is the measured one
    assert slope == pytest.approx(BASIN_SLOPE, rel=1e-9)
    ex = basin_radius_exercise()
    assert f"|g| = {slope:.3g}" in ex.question
    assert ex.check(rank_jumps.basin_radius(4, 0.027, slope)).correct
    assert ex.check(ex.solution).correct


def test_better_minimum_is_the_min_norm_comparison_as_gamma_goes_to_zero():
    """E1: the exercise no longer calls the lower loss at γ = 0.01 "minimum norm"; it asks for the γ → 0
    limit, which is the minimum-norm completion's rank."""
    ex = rank_jumps.EXERCISES["better_minimum"]
    assert ex.check(2).correct and "ε = 0.25" in ex.question and "γ → 0" in ex.question
    wrong = ex.check(1)
    assert wrong.status == "wrong" and "not at this ε" in wrong.message and "A₂₁ = 0" in wrong.message
    assert "8.246" not in wrong.message and "rank 2" not in wrong.message   # a wrong pick gets the way, not the answer
    right = ex.check(2)
    assert "minimum-norm completion has rank 2" in right.message and "8.246" in right.message
    at_03 = better_minimum_exercise(eps=0.3, solution=1)
    assert at_03.check(1).correct and not at_03.check(2).correct and "low rank wins" in at_03.check(1).message
    assert at_03.check(3).status == "wrong" and "1 or 2" in at_03.check(3).message


def test_parametrised_exercises_show_their_numbers():
    ex = decay_factor_exercise(lr=0.1, weight_decay=0.05, steps=10)
    assert "η = 0.1" in ex.question and ex.check(0.99 ** 10).correct and not ex.check(0.995 ** 10).correct
    ex = basin_radius_exercise(depth=3, weight_decay=0.02, slope=0.4)
    assert "L = 3" in ex.question and ex.check(0.1).correct


def test_mechanism_decides_its_outcome_and_the_numbers_behind_it():
    """§3's runs name what they did (kind, failure or not, the numbers that decide it): the figure only words it."""
    from symsgd_core.core.results import Outcome
    from symsgd_core.rank_jumps.experiments import MECHANISM_OUTCOMES, mechanism

    ok = mechanism(after_steps=5000, n_seeds=1)
    assert ok.outcome == Outcome("absorbed", False, {"gd_rank": 1, "sgd_ranks": (1,), "decay_error": ok.decay_error,
                                                     "decay_tolerance": ok.decay_tolerance, "forced_rank": 1})
    short = mechanism(after_steps=5000, n_seeds=1, forced_steps=250, lr=0.05, weight_decay=0.005)
    assert short.forced_rank == 2 and short.outcome.kind == "forced_too_short" and short.outcome.failure
    n = short.outcome.numbers
    assert n["s2_end"] == short.forced.singular_values[0, -1, 1] > rank_jumps.DEFAULT_RANK_TOL
    # s₂ shrinks like (1 − 2ηγ)^t ≈ e^{−2ηγt}: the estimate brings it a thousand times below the threshold
    s2_start = max(short.forced.singular_values[0, 0, 1], 1e-3)
    assert np.isclose(s2_start * np.exp(-2 * 0.05 * 0.005 * n["steps_needed"]), rank_jumps.DEFAULT_RANK_TOL / 1e3)
    assert n["steps_needed"] > 250
    collapsed = mechanism(after_steps=5000, n_seeds=1, lr=0.5)
    assert collapsed.forced_rank == 0 and collapsed.outcome == Outcome("forced_collapsed", True, {
        "decay_error": collapsed.decay_error, "decay_tolerance": collapsed.decay_tolerance, "forced_rank": 0})
    assert {r.outcome.kind for r in (ok, short, collapsed)} <= set(MECHANISM_OUTCOMES)


def test_basin_decides_whether_the_chosen_push_is_pulled_back():
    """§4's outcome is the chosen a's run: pulled back to rank 1 inside the basin, not pulled back far outside it."""
    from symsgd_core.rank_jumps.experiments import BASIN_OUTCOMES, basin

    inside = basin(alpha=0.3, steps=5000)
    assert inside.alphas[-1] < inside.alpha_c  # the default push is inside the first-order estimate
    assert inside.outcome.kind == "pulled_back" and not inside.outcome.failure
    assert inside.outcome.numbers["s2_end"] == inside.run.singular_values[-1, -1, 1] < rank_jumps.DEFAULT_RANK_TOL
    outside = basin(alpha=2 * inside.alpha_c, steps=5000)
    assert outside.outcome.kind == "not_pulled_back" and int(outside.final_rank[-1]) == 2
    assert outside.outcome.numbers["s2_end"] > rank_jumps.DEFAULT_RANK_TOL
    assert {inside.outcome.kind, outside.outcome.kind} <= set(BASIN_OUTCOMES)


def test_anneal_decides_its_outcome_and_which_minimum_is_better():
    """§6 at its defaults: SGD jumps in the hot phase and keeps rank 1, GD keeps rank 2 (outcome ``annealed``, with
    the numbers its figure quotes); a hot phase too short to jump is named as such; the better minimum is data."""
    from symsgd_core.rank_jumps.experiments import ANNEAL_OUTCOMES, anneal, better_minimum

    r = anneal(n_seeds=2)
    n = r.outcome.numbers
    assert r.outcome.kind == "annealed" and not r.outcome.failure
    assert n["jumped"] == 2 and n["cold_up"] == 0 and n["gd_min_rank"] == 2 == n["gd_polished_rank"]
    assert n["gd_polished_loss"] == r.polished_loss[0]
    assert n["sgd_rank1_losses"] == (min(r.polished_loss[1:]), max(r.polished_loss[1:]))
    assert r.better_minimum == "rank1" and r.minima["rank1"] < r.minima["rank2"]
    short = anneal(hot_steps=10_000, cold_steps=5000, n_seeds=1)
    assert short.outcome.kind == "hot_no_jumps" == "hot_" + short.hot_outcome.kind and short.outcome.failure
    assert {r.outcome.kind, short.outcome.kind} <= set(ANNEAL_OUTCOMES)
    assert better_minimum({"rank1": 1.0, "rank2": float("nan")}) == "rank1_only"
    assert better_minimum({"rank1": 2.0, "rank2": 1.0}) == "rank2"


def test_langevin_mean_stay_low_rank_averages_the_runs_that_got_there():
    from types import SimpleNamespace

    stays = SimpleNamespace(stay_low_rank=(np.array([1.0, np.nan, 0.5]), np.array([np.nan, np.nan])))
    sgd, lang = rank_jumps.LangevinResult.mean_stay_low_rank.fget(stays)
    assert sgd == 0.75 and np.isnan(lang)  # no Langevin run reached rank ≤ 1


def test_langevin_decides_its_outcome():
    """§5: at τ_match SGD jumps down and nothing goes up (``one_way``); ten times hotter, Langevin's own noise keeps
    s₂ above the rank threshold and nothing counts as a transition (``no_transitions_too_hot``, with that s₂)."""
    from symsgd_core.rank_jumps.experiments import LANGEVIN_OUTCOMES, LANGEVIN_RANK_TOL, langevin

    matched = langevin(n_runs=1, steps=10_000)
    (s_down, s_up), (l_down, l_up) = matched.sgd_transitions, matched.langevin_transitions
    assert matched.outcome.kind == "one_way" and not matched.outcome.failure
    assert s_down.sum() + l_down.sum() > 0 and s_up.sum() == 0 == l_up.sum()
    hot = langevin(temp_factor=10.0, n_runs=1, steps=10_000)
    assert hot.outcome.kind == "no_transitions_too_hot" and hot.outcome.failure and hot.tau > hot.tau_match
    assert hot.outcome.numbers["langevin_median_s2"] > LANGEVIN_RANK_TOL
    assert {matched.outcome.kind, hot.outcome.kind} <= set(LANGEVIN_OUTCOMES)


def test_trap_and_ensemble_carry_the_runs_b_r_membership():
    """b_r_membership counts the SGD runs that entered B_1 and left it again, from the runs' own records."""
    from symsgd_core.dln.network import DEFAULT_B_CRITERION, smallest_B
    from symsgd_core.rank_jumps.analysis import b_r_membership
    from symsgd_core.rank_jumps.experiments import ensemble, trap

    r = trap(steps=10_000, n_seeds=2)
    m = r.membership
    sb = smallest_B(r.sgd.in_B)
    assert m == b_r_membership(r.sgd, r.gd) and m["n_runs"] == 2
    assert m["entered"] == int(np.sum(np.any((sb >= 0) & (sb <= 1), axis=1))) and 0 <= m["left"] <= m["entered"]
    assert m["gd_end_B"] == int(smallest_B(r.gd.in_B[0])[-1])
    assert m["balanced"] == (np.nanmax(r.sgd.balancedness) <= DEFAULT_B_CRITERION.eps_balance)
    e = ensemble(n_runs=4, steps=10_000)
    assert "gd_end_B" not in e.membership and e.membership["n_runs"] == 4


# -- what the figures quote is in the outcome: the words read nothing else (tests/ui/test_ui_words_from_outcome.py) --
@pytest.mark.parametrize("depth, weight_decay, gain, kind", [
    (4, 0.05, 0.3, "barrier"), (2, 0.05, 0.3, "switches_on"), (2, 0.2, 0.3, "never_pays")])
def test_penalty_outcome_is_what_the_penalty_does_to_a_new_direction(depth, weight_decay, gain, kind):
    r = rank_jumps.penalty_view(depth=depth, weight_decay=weight_decay, gain=gain)
    n = r.outcome.numbers
    assert r.outcome.kind == kind and not r.outcome.failure
    assert (n["depth"], n["barrier_width"], n["d_max"], n["origin_trap"]) == (r.depth, r.barrier_width, r.d_max,
                                                                            r.origin_trap)


def test_trap_and_ensemble_outcomes_quote_the_start_the_membership_and_the_fit():
    from symsgd_core.dln import singular_values
    from symsgd_core.rank_jumps.experiments import membership_of

    t = rank_jumps.trap(steps=10_000, n_seeds=2)
    assert t.outcome.numbers["start_singular_values"] == tuple(singular_values(t.start)[0])
    assert membership_of(t.outcome.numbers) == t.membership
    e = rank_jumps.ensemble(n_runs=4, steps=10_000)
    n = e.outcome.numbers
    assert membership_of(n) == e.membership and n["reached_rank1"] == int(np.sum(e.jump_steps >= 0))
    assert n["returns"] == e.returns
    fitted = e.outcome.kind == "jumped" and np.isfinite(e.mean_wait) and e.mean_wait > 0
    assert ("mean_wait" in n) == fitted
    if fitted:
        assert (n["mean_wait"], n["mean_wait_se"]) == (e.mean_wait, e.mean_wait_se)
        assert n["median_duration"] == int(np.median(e.durations[e.durations >= 0]))


def test_langevin_and_mechanism_outcomes_quote_their_counts():
    r = rank_jumps.langevin(n_runs=1, steps=10_000)
    n = r.outcome.numbers
    assert (n["sgd_down"], n["sgd_up"]) == tuple(int(x.sum()) for x in r.sgd_transitions)
    assert (n["langevin_down"], n["langevin_up"]) == tuple(int(x.sum()) for x in r.langevin_transitions)
    assert (n["tau"], n["tau_match"]) == (r.tau, r.tau_match) and r.outcome.labels["where"] == r.where
    assert n["n_carrying"] == int(np.sum(r.spectrum["keeping"] > rank_jumps.experiments.CARRYING_VARIANCE))
    m = rank_jumps.mechanism(after_steps=5000, n_seeds=1)
    assert (m.outcome.numbers["decay_error"], m.outcome.numbers["forced_rank"]) == (m.decay_error, m.forced_rank)
