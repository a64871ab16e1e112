"""Controllers of Notebook 03 (one-way rank jumps): every slider at both ends, outcomes, failure modes.

The slider sweeps use small step budgets in the *other* sliders (the swept slider still reaches both
of its ends) so that the whole file stays fast; behaviour tests use the notebook's defaults.
"""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import rank_jumps_analysis as rja
from symsgd_core.ui import rank_jumps as rj
from symsgd_core.ui.base import figure_is_finite, slider_names, sweep_sliders


def _checked_run(controller):
    """A ``run`` callback for ``sweep_sliders`` that also asserts the figure and the status after each setting."""

    def run():
        if not controller.live:
            controller.run()
        assert figure_is_finite(controller.figure), controller.values()
        assert controller.status.value.strip(), controller.values()
        assert "Computing" not in controller.status.value
        if not controller.live:
            assert controller.progress.value == controller.progress.max

    return run


SMALL = {
    rj.PenaltyController: {},
    rj.TrapController: dict(steps=10_000, n_seeds=1),
    rj.EnsembleController: dict(n_runs=4, steps=10_000),
    rj.MechanismController: dict(after_steps=5000, n_seeds=1),
    rj.BasinController: dict(steps=5000),
    rj.AnnealController: dict(hot_steps=10_000, cold_steps=5000, n_seeds=1),
    rj.LangevinController: dict(n_runs=1, steps=10_000),
}


@pytest.mark.parametrize("cls", list(SMALL), ids=lambda c: c.__name__)
def test_every_slider_reaches_both_ends(cls):
    c = cls(**SMALL[cls])
    assert "symsgd-controller" in c.view()._dom_classes
    if cls is rj.PenaltyController:
        assert c.live
    else:  # re-simulating: Run button and progress bar, no live updates
        assert c.live is False
        assert c.run_button in c.extra_widgets and c.progress in c.extra_widgets
    visited = sweep_sliders(c, run=_checked_run(c))
    names = slider_names(c)
    assert len(visited) == 2 * len(names) and len(names) >= 3
    # after the sweep every slider is back at its starting value and the figure is sane
    assert figure_is_finite(c.figure)


def test_every_controller_is_swept():
    swept = set(SMALL)
    controllers = {getattr(rj, n) for n in rj.__all__ if n.endswith("Controller")}
    assert controllers == swept


def test_run_button_shows_computing_then_the_outcome():
    c = rj.TrapController(steps=10_000, n_seeds=1)
    seen = []
    original = c._update

    def spy(**values):
        seen.append(c.status.value)
        original(**values)

    c._update = spy
    c.run_button.click()
    assert seen and "Computing" in seen[0]
    assert "Computing" not in c.status.value and c.status.value
    assert c.progress.value == c.progress.max
    assert c.run_button.disabled is False


# -- 1. penalty ---------------------------------------------------------------------------------
def test_penalty_messages_distinguish_L2_from_deeper():
    c = rj.PenaltyController()
    assert "infinite slope" in c.status.value and c.summary["origin_trap"]
    c.set(depth=2, lam=0.01, gain=1.0)
    assert "L = 2" in c.status.value and "NOT a minimum" in c.status.value
    assert c.summary["barrier_width"] == 0.0
    c.set(depth=3)
    assert c.summary["barrier_width"] > 0 and c.summary["origin_trap"]


# -- 2. GD trapped, SGD jumps --------------------------------------------------------------------
@pytest.fixture(scope="module")
def trap():
    return rj.TrapController()


def test_trap_default_gd_stays_sgd_jumps_never_returns(trap):
    r = trap.result
    assert r["start_rank"] == 2
    assert r["diagnosis"].kind == "jumped"
    assert np.all(r["gd"].rank == 2)
    assert np.all(r["sgd"].final_rank == 1)
    assert rja.check_no_returns(r["sgd"]).passed
    assert "FAILURE" not in trap.figure.layout.title.text


@pytest.fixture(scope="module")
def small_trap():
    """One small TrapController shared by the failure-mode tests (each sets every slider it relies on)."""
    return rj.TrapController(steps=10_000, n_seeds=2)


@pytest.mark.parametrize("setting, kinds", [
    (dict(lr=0.5), {"collapsed", "diverged"}),
    (dict(lam=0.06), {"gd_low_rank"}),
    (dict(lr=0.1), {"no_jumps"}),
])
def test_trap_failure_modes_are_named_on_the_figure(small_trap, setting, kinds):
    c = small_trap
    c.set(**{"lr": 0.3, "lam": 0.027, **setting})
    c.run()
    assert c.result["diagnosis"].kind in kinds, c.status.value
    assert "FAILURE MODE" in c.figure.layout.title.text
    assert figure_is_finite(c.figure)


def test_trap_depth_two_says_convex(small_trap):
    c = small_trap
    c.set(lr=0.3, lam=0.027, depth=2)
    c.run()
    assert "L = 2" in c.status.value
    c.set(depth=4)


# -- 3. ensemble --------------------------------------------------------------------------------
def test_ensemble_default_fractions_and_zero_returns():
    c = rj.EnsembleController()
    sgd = c.result["sgd"]
    frac = sgd.fraction_at_rank()
    assert np.allclose(frac.sum(axis=1), 1.0)
    assert frac[0, 2] == 1.0 and frac[-1, 1] > 0.5
    assert c.result["returns"] == 0
    hist = c.figure.data[4]
    assert sum(hist.y) == int(np.sum(c.result["jump_steps"] >= 0))
    assert np.isfinite(c.result["mean_wait"])


# -- 4. mechanism -------------------------------------------------------------------------------
def test_mechanism_exact_decay_then_rank_one_for_gd_and_sgd():
    c = rj.MechanismController()
    r = c.result
    check = rja.check_exact_decay(r["forced"], 4)
    assert check.passed, check
    assert r["forced_rank"] == 1
    assert np.all(r["gd"].rank == 1) and np.all(r["sgd"].rank == 1)
    assert "FAILURE" not in c.figure.layout.title.text


def test_mechanism_short_forced_phase_is_explained():
    c = rj.MechanismController(after_steps=5000, n_seeds=1, forced_steps=250, lr=0.05, lam=0.005)
    assert "too short" in c.figure.layout.title.text
    assert "forced steps" in c.status.value


# -- 5. basin -----------------------------------------------------------------------------------
def test_basin_small_alpha_back_large_alpha_escapes():
    c = rj.BasinController()
    r = c.result
    alpha_c = r["alpha_c"]
    lo, hi = r["boundary"]
    alphas, ranks = r["alphas"][:-1], r["final_rank"][:-1]
    assert np.all(ranks[alphas <= 0.5 * alpha_c] == 1)
    assert np.isfinite(hi) and 0.5 * alpha_c < hi <= 2.0 * alpha_c
    assert "pulled back" in c.status.value
    c.set(alpha=float(hi))
    c.run()
    assert "not pulled back" in c.status.value


# -- 6. annealing -------------------------------------------------------------------------------
def test_anneal_gd_keeps_two_sgd_keeps_one_and_names_the_better_minimum():
    c = rj.AnnealController()
    r = c.result
    assert r["polished_rank"][0] == 2 and np.all(r["polished_rank"][1:] == 1)
    assert "rank-1 minimum is the better one" in c.status.value  # ε = 0.2, λ_cold = 0.01
    assert r["minima"]["rank1"] < r["minima"]["rank2"]
    assert c.figure.layout.yaxis2.range[0] > 0.05  # zoomed on the losses, not from 0
    # ... so the losses are markers, not bars (bars on a cut axis would exaggerate a ~1 % difference)
    assert all(tr.type == "scatter" for tr in c.figure.data)


def test_anneal_small_eps_prefers_rank_two_and_hot_phase_does_not_jump():
    """The notebook's "Try ε = 0.1": the rank-2 minimum is the better one and the hot phase no longer jumps."""
    c = rj.AnnealController(eps=0.1)
    assert c.result["minima"]["rank2"] < c.result["minima"]["rank1"]
    assert c.result["diagnosis"].kind == "no_jumps"
    assert "rank-2 minimum is the better one" in c.status.value and "deeper" in c.status.value


# -- 7. Langevin --------------------------------------------------------------------------------
def test_langevin_hot_goes_both_ways_and_sgd_noise_spares_raising_directions():
    c = rj.LangevinController(temp_factor=10.0)
    r = c.result
    l_down, l_up = r["langevin_transitions"]
    s_down, s_up = r["sgd_transitions"]
    assert l_up.sum() > 0 and s_up.sum() == 0
    check = rja.check_raising_noise(r["spectrum"], r["rank1_point"].arch.n_params)
    assert check.passed, check
    assert "both ways" in c.figure.layout.title.text


def test_langevin_too_hot_for_the_threshold_does_not_advise_more_heat():
    """At τ = 32 τ_match and a short budget Langevin's noise keeps s₂ above the threshold: say so."""
    c = rj.LangevinController(temp_factor=10 ** 1.5, n_runs=1, steps=10_000)
    assert "no transitions" in c.figure.layout.title.text
    assert "lower τ/τ_match" in c.status.value and "raise τ/τ_match" not in c.status.value


def test_mechanism_axes_are_labelled():
    c = rj.MechanismController(after_steps=5000, n_seeds=1)
    assert c.figure.layout.yaxis.title.text and c.figure.layout.yaxis2.title.text


# -- 9. exercises -------------------------------------------------------------------------------
def test_exercises_none_right_wrong():
    ex = rj.EXERCISES
    for e in ex.values():
        assert e.check(None).status == "unanswered"
    assert ex["decay_factor"].check((1 - 2 * 0.3 * 0.027) ** 1000).correct
    wrong = ex["decay_factor"].check((1 - 0.3 * 0.027) ** 1000)
    assert wrong.status == "wrong" and "1 − 2ηλ" in wrong.message
    assert ex["decay_factor"].check("abc").status == "wrong"
    assert "η = 0.3, λ = 0.027" in ex["decay_factor"].question and "t = 1000" in ex["decay_factor"].question
    assert ex["trap_depth"].check(3).correct and ex["trap_depth"].check("3").correct
    assert "saddle" in ex["trap_depth"].check(2).message and not ex["trap_depth"].check(4).correct
    assert ex["basin_radius"].check((2 * 0.027 / 0.17) ** 0.5).correct
    assert not ex["basin_radius"].check(0.1).correct
    one_way = ex["one_way"].check
    assert one_way(False).correct and not one_way(True).correct
    assert one_way(np.False_).correct and one_way("no").correct and one_way(" False ").correct
    assert not one_way("yes").correct and "True or False" in one_way("perhaps").message


def test_better_minimum_depends_on_eps():
    at_01 = rj.EXERCISES["better_minimum"]
    assert at_01.check(2).correct and "ε = 0.1" in at_01.question
    wrong = at_01.check(1)
    assert wrong.status == "wrong" and "minimum-norm" in wrong.message
    at_02 = rj.better_minimum_exercise(eps=0.2, solution=1)
    assert at_02.check(1).correct and not at_02.check(2).correct and "low rank wins" in at_02.check(2).message
    assert at_02.check(3).status == "wrong" and "1 or 2" in at_02.check(3).message


def test_parametrised_exercises_show_their_numbers():
    ex = rj.decay_factor_exercise(lr=0.1, lam=0.05, steps=10)
    assert "η = 0.1" in ex.question and ex.check(0.99 ** 10).correct and not ex.check(0.995 ** 10).correct
    ex = rj.basin_radius_exercise(depth=3, lam=0.02, slope=0.4)
    assert "L = 3" in ex.question and ex.check(0.1).correct
