"""The outcomes of Notebook 02's experiments: decided from the point, as data (the figures only word them).

Each expected kind is derived here from the geometry alone (the sign of ``cos θ_w = wᵀr/‖w‖`` with ``r = e₁``, the
model's evenness, the ReLU's mask ``wᵀx_k > 0``), not from the result's fields: a classification that mixes up two
kinds (e.g. ignores the model's evenness, or the undefined power step) fails here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsgd_core.lifting import experiments as ex


def _expected_lifting_kind(model: str, theta_w: float) -> str:
    cos = math.cos(math.radians(theta_w))  # wᵀr/‖w‖ with r = e₁
    if abs(cos) <= ex.MIN_REFERENCE_COSINE:
        return "F_undefined"
    if cos < 0:
        return "other_class_even" if model != "relu" else "sign_caveat"
    return "exact"


#: (model, θ_w) covering every kind of EULER_OUTCOMES / TRACES_OUTCOMES at the figures' sliders.
LIFTING_POINTS = [("linear", -40.0), ("relu", -40.0), ("attention", 90.0), ("relu", 90.0), ("linear", 135.0),
                  ("attention", 180.0), ("relu", 135.0), ("relu", 180.0)]


@pytest.mark.parametrize(("model", "theta_w"), LIFTING_POINTS)
def test_euler_outcome_follows_the_geometry(model, theta_w):
    q = ex.euler_view(model=model, theta_w=theta_w)
    kind = _expected_lifting_kind(model, theta_w)
    assert q.outcome.kind == kind and kind in ex.EULER_OUTCOMES
    assert q.outcome.failure == (kind in ("F_undefined", "sign_caveat"))
    n = q.outcome.numbers
    assert n["euler"] == q.euler and n["gw_norm"] == q.gw_norm
    assert n.get("F_error") == q.error("F") and n.get("nat_error") == q.error("nat")
    assert ("F_error" in n) == (kind != "F_undefined") and ("nat_error" in n) == (model != "relu")


@pytest.mark.parametrize(("model", "theta_w"), LIFTING_POINTS)
def test_traces_outcome_follows_the_geometry(model, theta_w):
    q = ex.traces_view(model=model, theta_w=theta_w, lam=1.3)
    kind = _expected_lifting_kind(model, theta_w)
    assert q.outcome.kind == kind and kind in ex.TRACES_OUTCOMES
    assert q.outcome.failure == (kind in ("F_undefined", "sign_caveat"))
    n = q.outcome.numbers
    assert (n["Tr_u"], n["Tr_w"]) == tuple(q.direct)
    assert n.get("F_error") == q.error("F") and n.get("nat_error") == q.error("nat")


def test_every_lifting_kind_is_reached_and_only_the_sign_caveat_differs_beyond_round_off():
    kinds = {ex.euler_view(model=m, theta_w=t).outcome.kind for m, t in LIFTING_POINTS}
    assert kinds == set(ex.EULER_OUTCOMES)
    # the other sign class of an even model gives autograd's gradients; the ReLU's other class does not
    even = ex.euler_view(model="linear", theta_w=135.0)
    caveat = ex.euler_view(model="relu", theta_w=135.0)
    scale = float(np.abs(even.autograd).max())
    assert even.outcome.numbers["F_error"] <= 1e3 * np.finfo(float).eps * scale
    assert caveat.outcome.numbers["F_error"] > 1e3 * np.finfo(float).eps * float(np.abs(caveat.autograd).max())


@pytest.mark.parametrize(("model", "sample"), [("relu", k) for k in range(ex.DEMO_SAMPLES)] + [("linear", 3)])
def test_chain_rule_outcome_is_relu_off_exactly_where_the_neuron_is_off(model, sample):
    q = ex.chain_rule_point(model=model, sample=sample)
    case = q.case
    off = model == "relu" and float(case.data["x"][sample] @ case.w) <= 0  # the ReLU's mask, from the data
    assert q.outcome.kind == ("relu_off" if off else "slip") and q.outcome.kind in ex.CHAIN_RULE_OUTCOMES
    assert q.outcome.failure == off
    n = q.outcome.numbers
    assert n == {"lift_gap": q.lifted - q.loss, "err_corrected": q.err_corrected, "err_seed": q.err_seed,
                 "gw": tuple(q.gw)}
    if not off:  # the reply's display misses by far more than the corrected chain rule
        assert n["err_seed"] > 1e6 * max(n["err_corrected"], np.finfo(float).tiny)


def test_both_chain_rule_kinds_are_reached_at_the_figure_settings():
    kinds = {ex.chain_rule_point(model="relu", sample=k).outcome.kind for k in range(ex.DEMO_SAMPLES)}
    assert kinds == set(ex.CHAIN_RULE_OUTCOMES)


def test_the_figures_word_the_outcome_not_the_fields():
    """The level follows the outcome's kind: a result whose outcome is replaced is worded by the new kind."""
    import dataclasses

    from symsgd_core.core.results import Outcome
    from symsgd_core.ui.lifting import EulerController, TracesController

    for cls, view in ((EulerController, ex.euler_view), (TracesController, ex.traces_view)):
        q = view(model="relu", theta_w=135.0)
        assert cls.words(None, q).level == "warning"
        fake = dataclasses.replace(q, outcome=Outcome("exact", False, q.outcome.numbers))
        assert cls.words(None, fake).level == "info"
