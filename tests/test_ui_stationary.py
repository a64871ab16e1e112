"""Notebook 04 controllers: every slider at both ends, finite figures, informative status lines."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from symsgd_core.ui import stationary as us
from symsgd_core.ui.base import figure_is_finite, slider_names, sweep_sliders


def _ok(controller):
    assert all(figure_is_finite(f) for f in controller.figures)
    assert controller.status.value.strip()
    assert any(tr.x is not None and len(tr.x) for f in controller.figures for tr in f.data)


@pytest.mark.parametrize("cls", [us.PhaseTransition])
def test_analytic_controllers_sweep(cls):
    c = cls()
    visited = sweep_sliders(c)
    assert len(visited) == 2 * len(slider_names(c))
    _ok(c)


def test_depth_comparison_sweep_with_runs():
    c = us.DepthComparison(n_chains=300)
    sweep_sliders(c, run=c.run)
    _ok(c)
    c.set(temperature=0.45, k=1.0, sigma=1.0, weight_decay=0.0)
    assert "δ(v)" in c.status.value
    c.run()
    assert "collapsing to 0" in c.status.value and figure_is_finite(c.figure)


def test_depth_comparison_default_agrees_with_theory():
    c = us.DepthComparison()
    c.run()
    ks = [float(x) for x in re.findall(r"KS ([0-9.]+) vs", c.status.value)]
    thr = [float(x) for x in re.findall(r"threshold ([0-9.]+)", c.status.value)]
    assert len(ks) == 2 and all(k <= t for k, t in zip(ks, thr))


def test_fluctuation_inversion_sweep_and_run():
    c = us.FluctuationInversion(n_chains=150, n_temps=3)
    sweep_sliders(c, run=c.run)
    _ok(c)
    c.set(k=1.0, sigma=1.0, weight_decay=0.0)
    var1 = c.curves["var1"]
    assert 0 < int(np.argmax(var1)) < var1.size - 1


def test_fluctuation_inversion_without_learning():
    c = us.FluctuationInversion(n_chains=100, n_temps=2)
    c.set(k=0.5, weight_decay=0.3)
    c.controls["weight_decay"].max = 0.6
    c.set(weight_decay=0.6)
    assert "learns nothing" in c.status.value
    c.run()
    _ok(c)


def test_phase_transition_reports_phases():
    c = us.PhaseTransition()
    for T, word in ((0.05, "one peak at v"), (0.15, "keeps a peak"), (0.25, "decreases monotonically"),
                    (0.4, "δ(v)")):
        c.set(temperature=T, sigma=1.0, weight_decay=0.0)
        assert word in c.status.value, (T, c.status.value)
    assert c.figures[1].data[4].x == (1.0,)


@pytest.mark.parametrize("cls, kwargs", [(us.WrongSign, dict(n_chains=100)), (us.Tails, dict(n_chains=200)),
                                         (us.DiscreteSGD, dict(n_runs=60))])
def test_run_controllers_sweep(cls, kwargs):
    c = cls(**kwargs)
    sweep_sliders(c, run=c.run)
    _ok(c)
    assert "Computing" not in c.status.value


def test_wrong_sign_results():
    c = us.WrongSign()
    c.run()
    r = c.results
    assert r["median_abs_v_end"][1] < 1e-10 < r["median_abs_v_end"][2] < 1e-2
    assert abs(r["p_wrong_sim"] - r["p_wrong_theory"]) < 0.02 and r["p_wrong_theory"] > 0


def test_tails_slopes_match_theory():
    c = us.Tails()
    for d, s in c.slopes.items():
        assert s == pytest.approx(-5 + 3 / (d + 1), abs=0.01)


def test_discrete_sgd_scan_shapes():
    c = us.DiscreteSGD(n_runs=60)
    rows = c.scan(temps=(0.05, 0.3), n_runs=60, t_end=1.0)
    assert len(rows["T"]) == 2 and all(0 <= x <= 1 for x in rows["sgd_div"])
    assert rows["n_runs"] == 60
    assert all(figure_is_finite(f) for f in c.figures)


def test_exercises():
    for name, ex in us.EXERCISES.items():
        assert ex.check(None).status == "unanswered"
        assert ex.check(ex.solution).correct, name
        verdict = ex.check(ex.solution * 1.1 + 0.01)
        assert verdict.status == "wrong" and "Hint:" in verdict.message
    assert "expected a number" in us.EXERCISES["tail_depth3"].check("minus four").message
    assert us.EXERCISES["tail_depth3"].check(-4.25).correct and us.EXERCISES["tail_depth3"].check("-17/4").correct
    assert us.EXERCISES["critical_temperature"].check(0.8 / 3).correct


def test_exercise_hints_state_the_right_numbers():
    """The worked numbers in each explanation must reproduce the answer (a hint once said 0.85 for 0.55)."""
    mode = us.EXERCISES["mode_depth1"]
    assert "0.55" in mode.check(math.sqrt(0.55 / 0.7)).message and "0.55" in mode.check(5.0).message
    assert math.isclose(mode.solution, math.sqrt(0.55 / 0.7))
    assert us.EXERCISES["variance_depth0"].check(0.1 / (1 - 2 * 0.1)).correct
    assert us.EXERCISES["critical_temperature"].check((1 - 0.2) / 3).correct
    assert "0.2667" in us.EXERCISES["critical_temperature"].check(0.2667).message


@pytest.mark.parametrize("name", sorted(us.EXERCISES))
def test_typical_mistakes_are_wrong_and_explained(name):
    ex = us.EXERCISES[name]
    assert len(ex.mistakes) == 2
    for value, explanation in ex.mistakes:
        assert not math.isclose(value, ex.solution, rel_tol=1e-3), (name, value)
        verdict = ex.check(value)
        assert verdict.status == "wrong" and explanation in verdict.message and "you gave" in verdict.message


def test_histogram_density_normalisation():
    x = np.random.default_rng(0).standard_normal(10000)
    c, d, se = us.histogram_density(x, np.linspace(-8, 8, 81))
    assert np.sum(d * 0.2) == pytest.approx(1.0) and np.all(se >= 0)
