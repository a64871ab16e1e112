"""Controllers of Notebook 04 (one-way rank jumps): each draws and describes the frozen result of its experiment
(the science of those results is tested in tests/rank_jumps/test_rank_jumps_experiments.py; every slider of every
controller goes to both ends and back in tests/ui/test_ui_every_slider.py, with the small budgets of
tests/ui/small_settings.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from small_settings import SMALL as SMALL_SETTINGS

from symsgd_core import dln, rank_jumps
from symsgd_core.ui import rank_jumps as rj
from symsgd_core.ui.base import status_text
from symsgd_jupyter.figure_checks import figure_is_finite, slider_names

SMALL = {cls: settings for cls, settings in SMALL_SETTINGS.items() if cls.__module__ == rj.__name__}


@pytest.mark.slow  # every controller built (one simulation each): not in `make test-fast`
@pytest.mark.parametrize("cls", list(SMALL), ids=lambda c: c.__name__)
def test_the_long_re_simulating_ones_have_a_run_button_and_a_progress_bar(cls):
    """(Every slider of every controller, to both ends and back: tests/ui/test_ui_every_slider.py.)"""
    c = cls(**SMALL[cls])
    if cls is rj.PenaltyController:
        assert c.live
    elif cls in (rj.MechanismController, rj.BasinController):  # a Run of ≤ 0.5 s: re-simulates on a slider release
        assert c.live is False and c.auto_run and c.run_button is None
    else:  # re-simulating for seconds: Run button and progress bar, no live updates
        assert c.live is False and not c.auto_run
        assert c.run_button in c.extra_widgets and c.progress in c.extra_widgets
    assert len(slider_names(c)) >= 3


def test_every_controller_is_swept():
    swept = set(SMALL)
    controllers = {getattr(rj, n) for n in rj.__all__ if n.endswith("Controller")}
    assert controllers == swept


def test_run_button_shows_computing_then_the_outcome():
    c = rj.TrapController(steps=10_000, n_seeds=1)
    seen = []
    original = c._run

    def spy(**values):
        seen.append(c.status.value)
        original(**values)

    c._run = spy
    c.run_button.click()
    assert seen and "Computing" in seen[0]
    assert "Computing" not in c.status.value and c.status.value
    assert c.progress.value == c.progress.max
    assert c.run_button.disabled is False


# -- each controller keeps its experiment's result and draws it ---------------------------------
def test_penalty_draws_its_view_and_names_L2():
    c = rj.PenaltyController()
    assert isinstance(c.result, rank_jumps.PenaltyView) and c.result.origin_trap  # L = 4: θ = 0 traps
    c.set(depth=2, weight_decay=0.01, gain=1.0)
    assert c.result.depth == 2 and not c.result.origin_trap  # L = 2, γ < 1: θ = 0 is not a minimum
    c.set(depth=3)
    np.testing.assert_array_equal(c.trace("L = 3", xaxis="x").y, c.result.penalty_L)


def test_trap_controller_draws_the_trap_result():
    c = rj.TrapController(steps=10_000, n_seeds=2)
    r = c.result
    assert isinstance(r, rank_jumps.TrapResult)
    expected = rank_jumps.trap(steps=10_000, n_seeds=2)
    np.testing.assert_array_equal(r.sgd.singular_values, expected.sgd.singular_values)
    assert r.outcome == expected.outcome
    assert ("FAILURE" in c.figure.layout.title.text) == r.outcome.failure


@pytest.fixture(scope="module")
def small_trap():
    """One small TrapController shared by the failure-mode tests (each sets every slider it relies on)."""
    return rj.TrapController(steps=10_000, n_seeds=2)


@pytest.mark.parametrize("setting", [dict(lr=0.5), dict(weight_decay=0.06), dict(lr=0.1)])
def test_trap_failure_modes_are_named_on_the_figure(small_trap, setting):
    c = small_trap
    c.set(**{"lr": 0.3, "weight_decay": 0.027, "depth": 4, **setting})
    c.run()
    assert c.result.outcome.failure
    assert "FAILURE MODE" in c.figure.layout.title.text
    assert rj.jump_words(c.result.outcome, c.values()["lr"], c.values()["weight_decay"]).text in c.status.value
    assert figure_is_finite(c.figure)


def test_trap_depth_two_says_convex(small_trap):
    c = small_trap
    c.set(lr=0.3, weight_decay=0.027, depth=2)
    c.run()
    assert c.result.outcome.kind == "shallow" and "L = 2: the penalty is convex in A" in c.status.value
    c.set(depth=4)


def test_ensemble_histogram_counts_the_jumps():
    c = rj.EnsembleController(n_runs=4, steps=10_000)
    assert isinstance(c.result, rank_jumps.EnsembleResult)
    assert sum(c.trace("jump times").y) == int(np.sum(c.result.jump_steps >= 0))
    in_b1 = c.trace("in B<sub>1</sub> (ε₁, ε₂, R tests)").y
    assert in_b1[-1] * c.result.sgd.n_runs <= c.result.membership["entered"]  # in B_1 at the end ⊂ ever entered
    assert rj.b_r_summary(c.result.membership) in c.status.value


def test_mechanism_short_forced_phase_is_explained():
    """The figure words the experiment's outcome (decided in rank_jumps.experiments.mechanism_outcome): its headline,
    and the forced steps the row needs."""
    c = rj.MechanismController(after_steps=5000, n_seeds=1, forced_steps=250, lr=0.05, weight_decay=0.005)
    assert c.result.outcome.kind == "forced_too_short"
    assert rj.MechanismController.WORDS["forced_too_short"][0] in c.figure.layout.title.text
    assert f"about {c.result.outcome.numbers['steps_needed']:.0f} forced steps" in c.status.value


def test_mechanism_words_every_outcome_the_experiment_can_give():
    """Each of MECHANISM_OUTCOMES has a headline and a status text quoting its numbers; failures are warnings."""
    from symsgd_core.core.results import Outcome
    from symsgd_core.rank_jumps.experiments import MECHANISM_OUTCOMES

    assert set(rj.MechanismController.WORDS) == set(MECHANISM_OUTCOMES)
    numbers = {"s2_end": 0.25, "steps_needed": 12345.0, "gd_rank": 1, "sgd_ranks": (1, 2), "sgd_collapsed": 3,
               "decay_error": 1e-12, "decay_tolerance": 1e-11, "forced_rank": 1}
    for kind in MECHANISM_OUTCOMES:
        failure = kind != "absorbed"
        head, level, text = rj.MechanismController._message(Outcome(kind, failure, numbers), 0.3, 0.027, 3000)
        assert head == rj.MechanismController.WORDS[kind][0] and level == ("warning" if failure else "info")
        assert text.startswith("Forced phase (3000 steps") and "SGD: final ranks [1, 2]" in text
    short_numbers = {**numbers, "decay_error": 0, "decay_tolerance": 0, "forced_rank": 2}
    _, _, short = rj.MechanismController._message(Outcome("forced_too_short", True, short_numbers), 0.3, 0.027, 9)
    assert "s₂ = 0.25" in short and "about 12345 forced steps" in short


def test_mechanism_axes_are_labelled():
    c = rj.MechanismController(after_steps=5000, n_seeds=1)
    assert isinstance(c.result, rank_jumps.MechanismResult)
    assert c.figure.layout.yaxis.title.text and c.figure.layout.yaxis2.title.text


def test_basin_words_the_experiments_outcome():
    c = rj.BasinController(steps=5000)
    assert isinstance(c.result, rank_jumps.BasinResult)
    assert c.result.outcome.kind == "pulled_back"
    v = c.values()
    head, level, text = rj.BasinController._message(c.result.outcome, v["alpha"], v["lr"], v["method"])
    n = c.result.outcome.numbers  # the outcome quotes the experiment's basin estimate and grid bracket
    assert (n["alpha_c"], n["slope"]) == (c.result.alpha_c, c.result.slope)
    assert n["boundary"] == tuple(c.result.boundary)
    assert level == "info" and head in c.figure.layout.title.text and text == status_text(c)


def test_basin_words_every_outcome_the_experiment_can_give():
    from symsgd_core.core.results import Outcome
    from symsgd_core.rank_jumps.experiments import BASIN_OUTCOMES

    assert set(rj.BasinController.WORDS) == set(BASIN_OUTCOMES)
    texts = {}
    for kind in BASIN_OUTCOMES:
        failure = kind in ("diverged", "collapsed")
        head, level, texts[kind] = rj.BasinController._message(
            Outcome(kind, failure, {"diverged_step": 77, "s2_end": 0.5, "alpha_c": 0.6, "slope": 0.2,
                                    "boundary": (0.5, 0.7)}), 0.3, 0.05, "gd")
        assert head and level == ("warning" if failure else "info")
        assert "(0.50 × the first-order basin radius" in texts[kind]
        assert "the smallest a that escapes is 0.7" in texts[kind] and "(1.17 × the radius)" in texts[kind]
    assert "GD diverged (step 77)" in texts["diverged"] and "collapsed to A = 0" in texts["collapsed"]
    assert "pulled back — s₂(A) fell to 5.0e-01" in texts["pulled_back"]
    assert "not pulled back — the new direction grew to s₂(A) = 0.5" in texts["not_pulled_back"]


def test_anneal_draws_losses_as_markers_on_a_zoomed_axis():
    c = rj.AnnealController(hot_steps=10_000, cold_steps=5000, n_seeds=1)
    assert isinstance(c.result, rank_jumps.AnnealResult)
    assert c.result.better_minimum in ("rank1", "rank2", "rank1_only")
    v = c.values()
    _, _, text = rj.AnnealController._message(c.result.outcome, v["eps"], v["weight_decay_cold"], v["lr_cold"],
                                              v["lr_hot"], v["weight_decay_hot"])
    assert text == status_text(c)  # the status words the experiment's outcome and its better minimum
    assert rank_jumps.experiments.hot_phase(c.result.outcome) == c.result.hot_outcome
    assert c.result.outcome.labels["better_minimum"] == c.result.better_minimum
    assert c.figure.layout.yaxis2.range[0] > 0.05  # zoomed on the losses, not from 0
    # ... so the losses are markers, not bars (bars on a cut axis would exaggerate a ~1 % difference)
    assert all(tr.type == "scatter" for tr in c.figure.data)


def test_anneal_small_eps_says_deeper():
    c = rj.AnnealController(eps=0.1, hot_steps=10_000, cold_steps=5000, n_seeds=1)
    assert c.result.better_minimum == "rank2" and c.result.minima["rank2"] < c.result.minima["rank1"]


def test_langevin_hot_headline_says_both_ways():
    c = rj.LangevinController(temp_factor=10.0)
    assert isinstance(c.result, rank_jumps.LangevinResult)
    assert c.result.langevin_transitions[1].sum() > 0
    assert c.result.outcome.kind == "both_ways"
    assert rj.LangevinController.WORDS["both_ways"][0] in c.figure.layout.title.text


def test_langevin_too_hot_for_the_threshold_does_not_advise_more_heat():
    """At τ = 32 τ_match and a short budget Langevin's noise keeps s₂ above the threshold: say so."""
    c = rj.LangevinController(temp_factor=10 ** 1.5, n_runs=1, steps=10_000)
    assert c.result.outcome.kind == "no_transitions_too_hot"
    assert "lower τ / matched τ" in c.status.value and "raise τ / matched τ" not in c.status.value  # the advice fits


def test_no_starting_minimum_is_drawn_as_a_failure(monkeypatch):
    c = rj.TrapController(steps=10_000, n_seeds=1)

    def refuse(**settings):
        raise rank_jumps.experiments.NoStartingMinimum("the phase-0 GD diverged at these settings")

    monkeypatch.setattr(rj.TrapController, "experiment", staticmethod(refuse))
    c.run()
    assert c.result is None and "no starting minimum" in c.figure.layout.title.text
    assert "diverged" in c.status.value


def test_trap_draws_B_r_membership_and_the_balance_test():
    c = rj.TrapController(steps=10_000, n_seeds=2)
    r = c.result
    gd_b = c.trace("GD", xaxis="x3")                          # row 2: B_r membership
    np.testing.assert_array_equal(gd_b.y, dln.network.smallest_B(r.gd.in_B[0]).astype(float))
    assert gd_b.y[0] == 2 == r.membership["gd_end_B"]         # the rank-2 minimum is in B_2, not B_1
    balance_gd = c.trace("GD", xaxis="x5")                    # row 3: the balance test
    assert max(balance_gd.y) <= rank_jumps.DEFAULT_B_CRITERION.eps_balance and r.membership["balanced"]
    assert rj.b_r_summary(r.membership) in c.status.value
    assert len(c.trace("seed 2", xaxis="x4").x) == 0          # the SGD seeds beyond n_seeds are blank
    assert figure_is_finite(c.figure)


def test_slider_descriptions_follow_the_notation_table():
    trap = rj.TrapController(steps=10_000, n_seeds=1)
    assert trap.controls["weight_decay"].description == "weight decay γ"
    basin = rj.BasinController(steps=5000)
    assert basin.controls["alpha"].description == "basin push a"
    assert "λ" not in trap.status.value + basin.status.value


#: The numbers of a jump outcome (:func:`~symsgd_core.rank_jumps.experiments.jump_outcome`) for the words tests:
#: 4 runs from rank 2, one diverged at step 700, one collapsed, two jumped (median step 1500), GD stayed.
JUMP_NUMBERS = {"depth": 4, "start_rank": 2, "target_rank": 1, "n_runs": 4, "steps": 10_000, "diverged": 1,
                "first_diverged_step": 700, "collapsed": 1, "jumped": 2, "at_target": 2, "median_jump_step": 1500,
                "returns": 0, "final_counts": (1, 2, 0), "gd_final_rank": 2, "gd_diverged_step": -1}


def test_jump_words_word_every_kind_with_its_numbers():
    from symsgd_core.core.results import Outcome
    from symsgd_core.rank_jumps.experiments import JUMP_OUTCOMES

    assert set(rj.JUMP_WORDS) == set(JUMP_OUTCOMES) | {"gd_low_rank_start"} and set(rj.HEADLINES) == set(JUMP_OUTCOMES)
    n = JUMP_NUMBERS
    expected = {
        "shallow": "L = 4: the penalty is convex in A (nuclear norm for L = 2), so there are no rank-overestimating "
                   "minima and no one-way jumps to show; use L ≥ 3. GD converged to rank 2; SGD final rank 2: 0, "
                   "rank 1: 2, rank 0: 1 (diverged: 1). GD ends at rank 2.",
        "gd_low_rank": "GD also left rank 2 (final rank 2): at η = 0.3, γ = 0.027 the rank-2 minimum is not stable",
        "diverged": "1 of 4 SGD runs diverged (first at step 700): η = 0.3 is too large for this problem, a single "
                    "sampled entry overshoots; 1 more collapsed to A = 0. GD stayed at rank 2.",
        "collapsed": "1 of 4 SGD runs collapsed to A = 0 (rank 0): with η = 0.3 the noise",
        "no_jumps": "No SGD run left rank 2 within 10000 steps: at η = 0.3, γ = 0.027 the waiting time",
        "jumped": "2 of 4 SGD runs jumped rank 2 → ≤1 (median at step 1500); none returned to a higher rank (0 "
                  "returns). GD stayed at rank 2. 1 run(s) went on to collapse to A = 0 (η large).",
    }
    for kind in JUMP_OUTCOMES:
        head, level, text = rj.jump_words(Outcome(kind, kind != "jumped", n), 0.3, 0.027)
        assert head == rj.HEADLINES[kind] and level == ("info" if kind == "jumped" else "warning")
        assert text.startswith(expected[kind]), (kind, text)
    # the variants: GD diverged; no collapse; no GD; a start already at the target rank
    gd_div = {**n, "gd_diverged_step": 90, "collapsed": 0}
    assert rj.jump_words(Outcome("diverged", True, gd_div), 0.3, 0.027).text.endswith(
        "overshoots. GD diverged too (step 90).")
    assert rj.jump_words(Outcome("jumped", False, gd_div), 0.3, 0.027).text.endswith(
        "returns). GD diverged too (step 90).")
    no_gd = {k: v for k, v in n.items() if not k.startswith("gd_")}
    assert rj.jump_words(Outcome("no_jumps", True, no_gd), 0.3, 0.027).text.endswith("number of steps.")
    assert rj.jump_words(Outcome("gd_low_rank", True, {**no_gd, "start_rank": 1}), 0.3, 0.027).text.startswith(
        "GD itself converged to rank 1 at these settings (γ = 0.027, L = 4)")


def test_anneal_words_every_outcome_the_experiment_can_give():
    """Each cold-phase outcome has a headline and quotes its numbers; a failed hot phase takes its jump outcome's."""
    from symsgd_core.core.results import Outcome
    from symsgd_core.rank_jumps.experiments import ANNEAL_OUTCOMES, hot_phase

    numbers = {"jumped": 3, "cold_up": 1, "gd_min_rank": 2, "gd_polished_loss": 0.07842, "gd_polished_rank": 2,
               "sgd_rank1_losses": (0.07732, 0.07735)}
    cold = [k for k in ANNEAL_OUTCOMES if not k.startswith("hot_")]
    assert set(rj.AnnealController.WORDS) == set(cold)
    for kind in ANNEAL_OUTCOMES:
        hot = kind.startswith("hot_")
        hot_outcome = Outcome(kind[4:] if hot else "jumped", hot, JUMP_NUMBERS)
        outcome = Outcome(kind, kind != "annealed", {**({} if hot else numbers), "rank1_loss": 0.0773,
                                                     "rank2_loss": 0.0784,
                                                     **{f"hot_{k}": v for k, v in JUMP_NUMBERS.items()}},
                          {"better_minimum": "rank1"})
        assert hot_phase(outcome) == hot_outcome
        head, level, text = rj.AnnealController._message(outcome, 0.2, 0.01, 0.05, 0.3, 0.027)
        assert head == (rj.HEADLINES[hot_outcome.kind] if hot else rj.AnnealController.WORDS[kind][0])
        assert level == ("info" if kind == "annealed" else "warning")
        hot_text = rj.jump_words(hot_outcome, 0.3, 0.027).text  # worded at the hot η, γ
        assert "η = 0.05" not in hot_text
        assert text.startswith(f"Hot phase: {hot_text} ") and "rank-1 minimum is the better one" in text
        if not hot:
            assert "the 3 SGD run(s) that jumped rose again (1 return(s) to rank 2)" in text
            assert "GD 0.07842 (rank 2), SGD rank-1 runs 0.07732–0.07735" in text


def test_langevin_words_every_outcome_the_experiment_can_give():
    from symsgd_core.core.results import Outcome
    from symsgd_core.rank_jumps.experiments import LANGEVIN_OUTCOMES

    assert set(rj.LangevinController.WORDS) == set(LANGEVIN_OUTCOMES)
    quoted = {"trace_raising": 1e-20, "trace_total": 1.0, "n_raising": 4, "n_keeping": 12, "n_carrying": 12,
              "sgd_down": 1, "sgd_up": 0, "langevin_down": 0, "langevin_up": 0, "sgd_stay": 0.9,
              "langevin_stay": float("nan"), "tau": 0.02, "tau_match": 0.01}
    numbers = {"sgd_collapsed": 2, "langevin_collapsed": 1, "langevin_median_s2": 0.45, **quoted}
    texts = {}
    for kind in LANGEVIN_OUTCOMES:
        failure = kind not in ("both_ways", "one_way")
        head, level, texts[kind] = rj.LangevinController._message(
            Outcome(kind, failure, numbers, {"where": "here"}), 0.3)
        assert head == rj.LangevinController.WORDS[kind][0] and level == ("warning" if failure else "info")
        assert texts[kind].startswith("τ = 0.02 (2 × the matched τ = 0.01). SGD: 1 down / 0 up")
    assert "2 SGD / 1 Langevin run(s) collapsed" in texts["collapsed"]
    assert "median s₂ = 0.45" in texts["no_transitions_too_hot"] and "median" not in texts["no_transitions"]


def _membership(smallest):
    """b_r_membership of runs whose records are in exactly the B_r with r ≥ ``smallest`` (−1: in none)."""
    from types import SimpleNamespace

    from symsgd_core.rank_jumps.analysis import b_r_membership

    sb = np.array(smallest)
    in_b = (np.arange(3)[None, None, :] >= sb[:, :, None]) & (sb[:, :, None] >= 0)
    return b_r_membership(SimpleNamespace(in_B=in_b, balancedness=np.full(sb.shape, 0.5), n_runs=sb.shape[0]))


def test_b_r_membership_counts_the_runs_that_entered_b1_and_ended_at_zero():
    """A run whose last record is in B₀ (A = 0) collapsed; it counts as entered B₁ (B₀ ⊂ B₁) and not as left."""
    m = _membership([[2, 2, 0, 0],    # collapsed straight from rank 2
                     [2, 1, 0, 0],    # jumped to rank 1, then collapsed
                     [2, 2, 2, 2],    # never entered
                     [2, 1, 2, 1],    # entered by a jump and left again
                     [2, 0, 1, 1]])   # at A = 0 once, but ends at rank 1
    assert (m["entered"], m["at_zero"], m["left"], m["n_runs"]) == (4, 2, 1, 5)


@pytest.mark.parametrize("smallest, words", [
    ([[2, 0], [2, 0], [2, 0]], "3 of 3 SGD runs entered B₁, and all 3 then collapsed to A = 0, which still lies in "
                               "B₁ (B₀ ⊂ B₁); 0 left it again"),
    ([[2, 0], [2, 1], [2, 2]], "2 of 3 SGD runs entered B₁, and 1 of them then collapsed to A = 0, which still"),
    ([[2, 0], [2, 2]], "1 of 2 SGD runs entered B₁, and it then collapsed to A = 0, which still lies in B₁"),
    ([[2, 1], [2, 2]], "1 of 2 SGD runs entered B₁; 0 left it again"),
])
def test_b_r_summary_says_a_collapse_keeps_the_runs_in_b1(smallest, words):
    assert words in rj.b_r_summary(_membership(smallest))


def test_failure_mode_collapse_status_says_the_collapse_is_the_entry_into_b1():
    """Notebook 04 §8's collapse figure (its cell's settings): every run collapsed to A = 0, and the status line
    says that the collapsed runs are the ones counted in B₁ instead of printing "collapsed" beside "entered B₁"
    unexplained."""
    c = rj.TrapController(lr=0.45, n_seeds=3, steps=20_000)
    text = status_text(c)
    assert c.result.outcome.kind == "collapsed"
    assert "3 of 3 SGD runs collapsed to A = 0" in text
    assert ("3 of 3 SGD runs entered B₁, and all 3 then collapsed to A = 0, which still lies in B₁ (B₀ ⊂ B₁); "
            "0 left it again") in text
