"""Notebook 03 controllers: informative status lines; each draws the frozen result of its experiment (the science
is tested in tests/stationary/test_stationary_experiments.py; every slider at both ends and back in
tests/ui/test_ui_every_slider.py)."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import stationary as st
from symsgd_core.ui import stationary as us
from symsgd_core.ui.base import status_text
from symsgd_jupyter.figure_checks import figure_is_finite


def _ok(controller):
    assert all(figure_is_finite(f) for f in controller.figures)
    assert controller.status.value.strip()
    assert any(tr.x is not None and len(tr.x) for f in controller.figures for tr in f.data)


def test_phase_transition_draws_its_view():
    c = us.PhaseTransition()
    _ok(c)
    c.set(temperature=0.25, sigma=1.0, weight_decay=0.0)
    assert isinstance(c.result, st.PhaseView) and c.result.phase == "collapsing"
    assert st.laws.PHASES["collapsing"] in status_text(c)
    np.testing.assert_array_equal(c.figures[1].data[0].z, c.result.codes)
    assert c.trace("you are here", figure=1).x == (1.0,)


def test_depth_comparison_says_when_the_law_collapses():
    c = us.DepthComparison(n_chains=300)
    _ok(c)
    c.set(temperature=0.45, k=1.0, sigma=1.0, weight_decay=0.0)
    assert "δ(v)" in c.status.value and c.result.laws[1].collapsed
    assert ".." not in status_text(c), "the collapsed law's sentence ends with a doubled full stop"
    c.run()
    assert "collapsing to 0" in c.status.value and figure_is_finite(c.figure)
    assert isinstance(c.simulation, st.DepthComparison)


def test_depth_comparison_draws_the_simulation():
    c = us.DepthComparison(n_chains=300)
    c.run()
    for depth in (0, 1):
        s = c.simulation.samples[depth]
        np.testing.assert_array_equal(c.trace(f"SDE histogram, L = {depth}").y, s.density)
        assert f"KS {s.ks:.3f} vs sampling threshold {s.ks_threshold:.3f}" in c.status.value


def test_fluctuation_inversion_draws_its_curves_and_runs():
    c = us.FluctuationInversion(n_chains=150, n_temps=3)
    c.run()
    _ok(c)
    c.set(k=1.0, sigma=1.0, weight_decay=0.0)
    assert isinstance(c.result, st.VarianceCurves)
    np.testing.assert_array_equal(c.trace("L = 1, closed form").y, c.result.var1)
    c.run()
    hollow = [s == "circle-open" for s in c.trace("L = 1, SDE").marker.symbol]
    assert hollow == [not ok for ok in c.simulation.points[1][3]]


def test_fluctuation_inversion_without_learning():
    c = us.FluctuationInversion(n_chains=100, n_temps=2)
    c.set(k=0.5, weight_decay=0.3)
    c.controls["weight_decay"].max = 0.6
    c.set(weight_decay=0.6)
    assert "learns nothing" in c.status.value
    c.run()
    _ok(c)


@pytest.mark.parametrize("cls, kwargs, other", [(us.WrongSign, dict(n_chains=100), 0.2),
                                                (us.Tails, dict(n_chains=200), 0.2),
                                                (us.DiscreteSGD, dict(n_runs=60), 0.2)])
def test_the_simulation_is_drawn_at_once_and_again_when_a_slider_is_released(cls, kwargs, other):
    """No Run button: the figure is simulated when it is made and on every slider change (RunController.auto_run),
    and the status keeps the closed forms' finding before the simulation's."""
    c = cls(**kwargs)
    assert c.run_button is None and c.simulation is not None
    first = c.simulation
    _ok(c)
    c.set(temperature=other)
    assert c.simulation is not first and c.values()["temperature"] == other
    _ok(c)
    assert "Computing" not in c.status.value and "Simulation:" in status_text(c)


def test_wrong_sign_draws_its_result():
    c = us.WrongSign(n_chains=100)
    c.run()
    r = c.simulation
    assert isinstance(r, st.WrongSignResult)
    np.testing.assert_array_equal(c.trace("L = 1 (v-SDE): median |v|").y, r.median_paths[1][1])
    assert f"P(v < 0) = {r.p_wrong_sim:.3f} simulated vs {r.p_wrong_theory:.3f}" in status_text(c)


def test_tails_draws_its_view_and_samples():
    c = us.Tails(n_chains=200)
    assert isinstance(c.result, st.TailView)
    np.testing.assert_array_equal(c.trace("L = 1").y, c.result.survival[1])
    c.run()
    np.testing.assert_array_equal(c.trace("SDE, L = 1").x, c.simulation.points[1][0])


def test_discrete_sgd_scan_is_drawn():
    c = us.DiscreteSGD(n_runs=60)
    rows = c.scan(temps=(0.05, 0.3), n_runs=60, t_end=1.0)
    assert rows is c.scan_result and isinstance(rows, st.DiscreteSGDScan)
    assert c.trace("plain SGD, η = T", figure=1).x == rows.T
    assert all(figure_is_finite(f) for f in c.figures)


def test_constructor_settings_are_the_experiments():
    with pytest.raises(ValueError, match="unknown setting"):
        us.WrongSign(n_runs=5)
    c = us.DepthComparison(temperature=0.3)
    assert c.controls["temperature"].value == 0.3


def test_fluctuation_inversion_status_says_the_numbers_the_cell_prints():
    """Notebook 03 §3: the status line and the cell under the figure print one sentence from one function, so the
    peak, the end point and their rounding agree (they once said T = 0.200 / 0.0123 at 0.995 T_c against the
    cell's 0.206 / 0.0243 at 0.99 T_c)."""
    import re

    c = us.FluctuationInversion()
    r = st.variance_curves()  # what the cell prints, at the controller's default sliders
    assert r.summary() in status_text(c)
    numbers = [float(x) for x in re.findall(r"\d+\.\d+", r.summary())]
    assert numbers == [round(r.T_peak, 3), round(r.T_peak / r.T_c, 2), float(f"{r.var_peak:.3g}"),
                       float(f"{r.var_end:.3g}"), st.experiments.T1_END_FRACTION, round(r.T_end, 3),
                       round(r.T_peak, 3), float(f"{r.var0_at_peak:.3g}"), round(r.T0_max, 3)]


def test_fluctuation_inversion_lists_unrelaxed_points_at_the_status_lines_rounding():
    """The hollow points' temperatures are printed to 0.001, like every other temperature of the status line."""
    import re

    c = us.FluctuationInversion(n_chains=150, n_temps=3)
    c.run()
    assert c.simulation.unrelaxed
    listed = re.findall(r"L = (\d) at T = (\d+\.\d+)", status_text(c))
    T, _, _, relaxed = c.simulation.points[1]
    assert [(d, t) for d, t in listed if d == "1"] == [("1", f"{t:.3f}") for t, ok in zip(T, relaxed) if not ok]


# -- the status level of each outcome kind: a failure of the runs shows at "warning", never at "info" ---------------
def _phase_result(kind):
    from types import SimpleNamespace

    from symsgd_core.core.results import Outcome

    numbers = {"T_c": 0.333, "T_star": 0.2, "near_zero_exponent": -2.0 if kind == "dead" else 0.5}
    return SimpleNamespace(outcome=Outcome(kind, kind == "dead", numbers))


def _depth_sim(kind):
    from types import SimpleNamespace

    from symsgd_core.core.results import Outcome

    numbers = {}
    for d in (0, 1):
        numbers.update({f"t_end_L{d}": 25.0, f"lambda1_L{d}": 1.0, f"non_finite_L{d}": 0, f"median_L{d}": 0.5,
                        f"relaxed_L{d}": kind != "unrelaxed", f"ks_L{d}": 0.01, f"ks_threshold_L{d}": 0.05,
                        f"collapsed_L{d}": d == 1 and kind == "collapsed"})
    numbers["n_chains"] = 100
    laws = SimpleNamespace(laws={0: SimpleNamespace(collapsed=False),
                                 1: SimpleNamespace(collapsed=kind == "collapsed")})
    return SimpleNamespace(outcome=Outcome(kind, kind != "compared", numbers), laws=laws, n_chains=100)


def _discrete_result(kind):
    from types import SimpleNamespace

    from symsgd_core.core.results import Outcome

    agrees = {"sde_off": (False, True), "sgd_off": (True, False), "agree": (True, True)}[kind]
    numbers = {"ks": (0.01, 0.2), "ks_threshold": (0.05, 0.05), "agrees": agrees, "diverged": (0, 3), "n": (100, 100),
               "temperature": 0.3}
    return SimpleNamespace(outcome=Outcome(kind, kind == "sde_off", numbers), fits={"v-SDE": None, "plain SGD": None},
                           temperature=0.3)


@pytest.mark.parametrize("cls, kinds, failures, result", [
    (us.DepthComparison, st.experiments.DEPTH_OUTCOMES, {"unrelaxed", "collapsed"}, _depth_sim),
    (us.PhaseTransition, st.experiments.PHASE_OUTCOMES, {"dead"}, _phase_result),
    (us.DiscreteSGD, st.experiments.DISCRETE_SGD_OUTCOMES, {"sde_off", "sgd_off"}, _discrete_result),
], ids=["DepthComparison", "PhaseTransition", "DiscreteSGD"])
def test_every_failure_kind_shows_at_a_warning_level(cls, kinds, failures, result):
    """Each kind of the figure's outcomes has a level; a failure of the runs (a chain that did not relax, a law that
    collapsed, the SDE or an SGD method off the law, the dead phase) is not "info" (they all were)."""
    assert set(cls.LEVELS) == set(kinds)
    for kind in kinds:
        words = cls.words(cls.__new__(cls), result(kind), temperature=0.3, sigma=1.0, weight_decay=0.0)
        assert words.level == ("warning" if kind in failures else "info"), (cls.__name__, kind, words.level)
        assert (words.level == "info") == (kind not in failures)


def test_the_simulations_level_reaches_the_status_line():
    """A _StationaryRun says its simulation's words at their level after the closed forms' (it once dropped the
    level: every line was "info")."""
    from ipywidgets import HTML

    from symsgd_core.ui.base import Words

    c = us.WrongSign.__new__(us.WrongSign)  # only the status line is used
    c.status, c._looking, c.result = HTML(), None, object()
    c._show = lambda result, **values: None
    c.closed_form_words = lambda r, **values: Words(None, "info", "closed form.")
    c.words = lambda r, **values: Words(None, "warning", "a chain did not relax")
    c._draw(object())
    assert "symsgd-status-warning" in c.status.value and "closed form. Simulation: a chain" in c.status.value
