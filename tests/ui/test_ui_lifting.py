"""Notebook 02 controllers: every slider at both ends for every model (the default's in test_ui_every_slider.py), the
undefined settings announced in the status line, finite figures, and the exercise checker."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
import pytest

from symsgd_core import lifting as lf
from symsgd_core.lifting.exercises import _relu_sign_loss
from symsgd_core.ui import lifting as ul
from symsgd_jupyter.figure_checks import figure_is_finite, slider_names, sweep_sliders

CONTROLLERS = [ul.OrbitController, ul.RankOneSetController, ul.ChainRuleController, ul.EulerController,
               ul.SignCaveatController, ul.TracesController]


def _assert_healthy(c):
    assert all(figure_is_finite(f) for f in c.figures)
    assert c.status.value.strip() and len(c.figures[0].data) > 0
    assert np.isfinite(c.last_update_seconds)


@pytest.mark.parametrize("cls", [c for c in CONTROLLERS if c is not ul.RankOneSetController])
def test_every_slider_at_both_ends_for_every_other_model(cls):
    """Each model the drop-down offers besides the default (at the default: tests/ui/test_ui_every_slider.py)."""
    c = cls()
    _assert_healthy(c)
    others = [m for m in ("linear", "attention", "relu") if m != c.controls["model"].value]
    for model in others:
        c.set(model=model)
        visited = sweep_sliders(c)
        assert len(visited) == 2 * len(slider_names(c)) > 0
        _assert_healthy(c)


@pytest.mark.parametrize("cls", CONTROLLERS)
def test_view_contains_controls_figures_and_status(cls):
    c = cls()
    root = c.view()
    assert isinstance(root, widgets.VBox) and "symsgd-controller" in root._dom_classes
    assert c.status in root.children and all(f in root.children for f in c.figures)
    assert all(isinstance(f, go.FigureWidget) for f in c.figures)
    assert c.summary()  # the notebook prints these sentences


def test_live_widget_change_updates_the_figure():
    c = ul.OrbitController()
    before = list(c.trace("λu").x)
    c.controls["lam"].value = 2.0  # as a reader would, through the observer
    assert list(c.trace("λu").x) != before and c.result.lam == 2.0


def test_orbit_keeps_M_and_loss_at_both_ends():
    c = ul.OrbitController()
    for lam in ul.OrbitController.LAM_RANGE:
        c.set(lam=lam)
        q = c.result
        assert np.abs(q.M - q.M0).max() < 1e-14
        assert abs(q.loss - q.loss0) < 1e-13 * max(1.0, q.loss0)
        assert abs(q.G - q.G0) > 0.1  # what does move
    assert ul.OrbitController(model="relu").result.loss > 0


def test_rank_one_set_midpoint_determinant():
    c = ul.RankOneSetController()
    for phi in (0.0, 60.0, 180.0):
        c.set(phi=phi)
        q = c.result
        assert abs(q.det_M) < 1e-15 and abs(q.det_M2) < 1e-15
        # unit u, w: p² + s² = 1/4 and the midpoint has det = sin²(φ/2)/4
        assert abs(q.det_mid - np.sin(np.deg2rad(phi) / 2) ** 2 / 4) < 1e-14
        assert abs(q.det_sum - 4 * q.det_mid) < 1e-14
    c.set(phi=0.0)
    np.testing.assert_allclose(c.result.M2, c.result.M, atol=1e-15)  # φ = 0: M′ = M, the midpoint is M
    assert not c.result.double_cone
    c.set(theta_u=20.0, theta_w=20.0)  # s = 0: a double cone
    assert c.result.double_cone and abs(c.result.s) < 1e-12


def test_chain_rule_controller_reports_the_slip_and_inactive_relu():
    c = ul.ChainRuleController()
    q = c.result
    assert q.err_corrected < 1e-12 and q.err_seed > 0.1
    off = []
    for sample in range(ul.DEMO_SAMPLES):
        c.set(model="relu", sample=sample)
        assert c.result.relu_off == (not (np.any(c.result.du) or np.any(c.result.dw) or np.any(c.result.gw)))
        assert ("symsgd-status-warning" in c.status.value) == c.result.relu_off  # said, not hidden
        off.append(c.result.relu_off)
    assert any(off) and not all(off)  # the demo data has samples on both sides of the ReLU


def test_euler_controller_flags_w_perpendicular_and_other_sign_class():
    c = ul.EulerController(model="relu")
    q = c.result
    assert abs(q.euler) < 1e-12 and q.gw_norm > 1e-3
    c.set(theta_w=90.0)  # w ⟂ r = e₁: the power step is undefined
    assert c.result.F is None and c.trace("from ∇F (w-free F)").visible is False
    assert "symsgd-status-warning" in c.status.value and figure_is_finite(c.figure)
    c.set(theta_w=180.0)  # wᵀr < 0: F describes (−u, −w), which the ReLU tells apart
    assert c.result.case.other_sign_class and "symsgd-status-warning" in c.status.value
    c.set(model="linear")  # even under (u, w) → (−u, −w): the other class has the same gradients
    assert c.result.case.other_sign_class and c.result.case.model.negation_symmetric
    assert "symsgd-status-warning" not in c.status.value


def test_sign_caveat_controller():
    c = ul.SignCaveatController()
    q = c.result
    assert q.M_diff == 0.0 and abs(q.plus - q.minus) > 1.0
    assert abs(q.F - q.plus) < 1e-12  # r = e₁ selects (u, w) at the default θ_w = 45°
    c.set(model="linear")
    q = c.result
    assert abs(q.plus - q.minus) < 1e-12 and q.case.model.negation_symmetric
    c.set(model="relu", theta_w=90.0)
    assert c.result.F is None and figure_is_finite(c.figure)


def test_traces_controller_three_ways_and_relu():
    c = ul.TracesController()
    q = c.result
    tu, tw = q.direct
    for label in ("nat", "F"):
        assert abs(getattr(q, label)[0] - tu) < 1e-12 * tu and abs(getattr(q, label)[1] - tw) < 1e-12 * tw
    assert np.linalg.norm(q.A_nat - q.A_F) > 1e-3
    c.set(model="relu")
    assert c.result.A_nat is None and c.trace("from ∇F<sub>nat</sub>", figure=1).visible is False
    assert c.figures[0].layout.annotations[0].text.startswith("no natural")


def test_demo_case_validation():
    with pytest.raises(ValueError, match="model"):
        lf.demo_case("mlp", [1, 0], [1, 0])
    with pytest.raises(ValueError, match="u must have shape"):
        lf.demo_case("linear", [1, 0, 0], [1, 0])
    case = lf.demo_case("relu", [1, 0], [1, 0])
    assert case.n_samples == lf.DEMO_SAMPLES and np.array_equal(case.r, lf.DEMO_REFERENCE)


# ---------------------------------------------------------------- exercises
WRONG = {"det_rank1": 1.0, "midpoint_det": 0.0, "euler_direction": [1.0, -2.0],
         "grad_w_function": lambda A, u, w: A @ w, "relu_sign": 4.0, "balanced_lambda": 2.0}


@pytest.mark.parametrize("name", sorted(lf.EXERCISES))
def test_exercises_unanswered_right_wrong(name):
    ex = lf.EXERCISES[name]
    assert ex.check(None).status == "unanswered"
    right = ex.check(ex.solution)
    assert right.correct, right
    wrong = ex.check(WRONG[name])
    assert wrong.status == "wrong" and wrong.message, wrong
    assert "✘" in str(wrong) and "<div" in wrong._repr_html_()


def test_exercise_solutions_are_the_hand_values():
    assert lf.EXERCISES["euler_direction"].check([4.0, 2.0]).correct  # any multiple of w
    assert lf.EXERCISES["euler_direction"].check("-2, -1").correct
    assert lf.EXERCISES["relu_sign"].check(9).correct and lf.EXERCISES["midpoint_det"].check("1/4").correct


def test_exercise_checker_is_robust_to_bad_answers():
    ex = lf.EXERCISES
    assert ex["det_rank1"].check("zero").status == "wrong"
    assert "non-zero" in ex["euler_direction"].check([0.0, 0.0]).message
    assert "2-vector" in ex["euler_direction"].check([1.0, 2.0, 3.0]).message
    assert ex["grad_w_function"].check(3).status == "wrong"

    def boom(A, u, w):
        raise RuntimeError("oops")

    assert "raised RuntimeError" in ex["grad_w_function"].check(boom).message
    msg = ex["grad_w_function"].check(lambda A, u, w: A @ u).message  # square case catches A u
    assert "shape" in msg or "A u" in msg
    assert "A u" in ex["grad_w_function"].check(lambda A, u, w: A @ u if A.shape[0] == A.shape[1] else A.T @ u).message


def test_exercise_feedback_is_specific():
    # a rounded irrational answer (√2 typed as 1.414) counts; a coarser one is "close", not a flat "no"
    ex = lf.EXERCISES
    assert ex["balanced_lambda"].check(1.414).correct
    near = ex["balanced_lambda"].check(1.41)
    assert near.status == "wrong" and "close" in near.message
    assert "Hint: solve" in ex["balanced_lambda"].check(2.0).message
    # a function of the right shape but the wrong values gets a reason about values, not about shapes
    msg = ex["grad_w_function"].check(lambda A, u, w: A.sum(axis=0)).message
    assert "wrong values" in msg and "expected shape" not in msg


def test_relu_sign_exercise_uses_the_package_model():
    assert _relu_sign_loss() == pytest.approx(9.0, abs=1e-14)
    assert lf.MODELS["relu"].negation_symmetric is False
