"""The outcomes of notebook 02's figures (``lifting.experiments``): what a figure says is decided by its experiment,
so each outcome's numbers are the result's own (the figures' words read nothing else:
``tests/ui/test_ui_words_from_outcome.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core.lifting import experiments as ex
from symsgd_core.lifting.liftings import polar

EPS = np.finfo(float).eps


def test_orbit_outcome_quotes_the_moved_point_and_what_did_not_move():
    q = ex.orbit_view(lam=2.0)
    n = q.outcome.numbers
    assert q.outcome.kind == "orbit" and not q.outcome.failure
    assert n["u"] == tuple(q.case.u) and n["w"] == tuple(q.case.w)
    assert n["G"] == q.G and n["G0"] == q.G0 and n["loss"] == q.loss
    # λ = 2: G = 4‖u₀‖² − ‖w₀‖²/4, while M and the loss move only by round-off
    assert n["G"] == pytest.approx(4 * q.base.u @ q.base.u - q.base.w @ q.base.w / 4, rel=1e-14)
    assert n["M_change"] <= 8 * EPS * np.abs(q.M0).max() and n["loss_change"] <= 64 * EPS * max(q.loss0, 1.0)


@pytest.mark.parametrize(("theta_u", "theta_w", "kind"), [(30.0, 30.0, "double_cone"), (30.0, 75.0, "hyperboloid")])
def test_rank_one_outcome_names_the_slice(theta_u, theta_w, kind):
    """z = (M₁₂ − M₂₁)/2 = sin(θ_w − θ_u)/2 for unit u, w: zero exactly when the angles agree."""
    q = ex.rank_one_slice(theta_u=theta_u, theta_w=theta_w)
    n = q.outcome.numbers
    assert q.outcome.kind == kind and q.double_cone == (kind == "double_cone")
    assert n["s"] == pytest.approx(np.sin(np.deg2rad(theta_w - theta_u)) / 2, abs=4 * EPS)
    assert (n["det_M"], n["det_M2"], n["det_mid"], n["det_sum"]) == (q.det_M, q.det_M2, q.det_mid, q.det_sum)
    assert ex.rank_one_outcome(0.5 * ex.DOUBLE_CONE_TOL, 0, 0, 0, 0).kind == "double_cone"
    assert ex.rank_one_outcome(2 * ex.DOUBLE_CONE_TOL, 0, 0, 0, 0).kind == "hyperboloid"


def test_chain_rule_and_euler_outcomes_quote_the_w_gradient():
    q = ex.chain_rule_point()
    assert q.outcome.numbers["gw"] == tuple(q.gw) and any(q.outcome.numbers["gw"])
    e = ex.euler_view()
    assert e.outcome.numbers["gw"] == tuple(e.gw)
    assert np.linalg.norm(e.outcome.numbers["gw"]) == pytest.approx(e.outcome.numbers["gw_norm"], rel=1e-15)


def test_traces_outcome_quotes_the_normal_part_and_the_balanced_lambda():
    q = ex.traces_view()
    n = q.outcome.numbers
    assert n["normal_norm"] == float(np.linalg.norm(q.normal_part)) > 1e-3  # two liftings, two gradients
    assert n["lam_star"] == q.lam_star
    tu, tw = q.base
    assert n["lam_star"] == pytest.approx((tu / tw) ** 0.25, rel=1e-15)  # where Tr_u/λ² = Tr_w λ²
    relu = ex.traces_view(model="relu").outcome.numbers
    assert "normal_norm" not in relu and "nat_error" not in relu  # no natural lifting, no normal part


def test_sign_caveat_view_is_sign_caveat_at_its_u():
    v = ex.sign_caveat_view(theta_w=60.0, lam=2.0, theta_u=80.0, u_len=1.5)
    s = ex.sign_caveat(theta_w=60.0, u=polar(80.0, 1.5))
    assert v.lam == 2.0 and np.array_equal(v.case.u, s.case.u)
    assert v.outcome == s.outcome
    assert v.outcome.numbers["plus"] == s.plus and v.outcome.numbers["minus"] == s.minus
    default = ex.sign_caveat_view()
    assert np.array_equal(default.case.u, ex.SIGN_U)


def test_sign_caveat_outcome_tells_the_relu_from_the_even_models():
    relu = ex.sign_caveat_view(model="relu").outcome
    assert relu.kind == "sign_caveat" and not relu.failure
    assert abs(relu.numbers["plus"] - relu.numbers["minus"]) > 1.0  # the ReLU sees the other half of the data
    assert relu.numbers["M_diff"] == 0.0 and relu.numbers["F"] == pytest.approx(relu.numbers["plus"], abs=1e-12)
    linear = ex.sign_caveat_view(model="linear").outcome
    assert linear.kind == "even"
    assert abs(linear.numbers["plus"] - linear.numbers["minus"]) <= 64 * EPS * linear.numbers["plus"]
    undefined = ex.sign_caveat_view(theta_w=90.0).outcome  # w ⟂ e: F undefined, left out of the numbers
    assert "F" not in undefined.numbers and abs(undefined.numbers["w_dot_r"]) < 1e-12
