"""Tests of the Notebook 01 controllers (symsgd_core.ui.balance), driven without a kernel or a browser.

Every slider of every controller goes to both ends of its range in tests/ui/test_ui_every_slider.py (a finite
figure and a message after each move); here: the second model of the Itô explorer at both ends, divergent
settings announced, and what each controller draws.
"""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import balance
from symsgd_core.core.checking import make_result
from symsgd_core.lesson.claims_cell import assert_claims
from symsgd_core.ui import balance as ui
from symsgd_core.ui.base import status_text
from symsgd_jupyter.figure_checks import figure_is_finite, slider_extremes, slider_names

CONTROLLERS = [ui.SymmetryExplorer, ui.ItoTermsExplorer, ui.ThreeDynamics, ui.BalanceEnsemble, ui.Rank1Balance,
               ui.ReLUBalance, ui.DiscreteBreakdown]


def sweep_and_check(ctl) -> int:
    """Like ``base.sweep_sliders``, but asserts a finite figure and a non-empty status after every setting."""
    moves = 0
    for name in slider_names(ctl):
        w = ctl.controls[name]
        original = w.value
        for value in slider_extremes(w):
            ctl.set(**{name: value})
            moves += 1
            assert all(figure_is_finite(f) for f in ctl.figures), (type(ctl).__name__, name, value)
            assert status_text(ctl).strip(), (type(ctl).__name__, name, value)
            assert "Computing" not in status_text(ctl)
            assert any(tr.x is not None and len(tr.x) for tr in ctl.figure.data if hasattr(tr, "x")), (name, value)
        if ctl.live:
            ctl.set(**{name: original})
        else:  # a Run-button controller: restore the value without re-simulating (the next move does)
            w.value = original
    return moves


def test_ito_explorer_sweeps_both_models_and_handles_the_origin():
    ctl = ui.ItoTermsExplorer()
    ctl.set(model=ctl.MODELS[1])
    sweep_and_check(ctl)
    ctl.set(u=0.0, w=0.0)
    assert "no symmetry direction" in status_text(ctl)
    assert figure_is_finite(ctl.figure)
    ctl.set(u=1.2, w=-0.4)
    assert all(r.passed for r in ctl.claims())
    assert "<table" in ctl.proof.value and "line" in ctl.proof.value


@pytest.mark.parametrize("cls, setting", [(ui.ThreeDynamics, {"lr": 0.5}), (ui.DiscreteBreakdown, {"lr": 1.0})],
                         ids=["three_dynamics", "discrete"])
def test_divergence_is_announced_on_the_figure_and_in_the_status(cls, setting):
    ctl = cls()
    ctl.set(**setting)
    assert ctl.result.outcome.kind == "diverged"
    assert ui.DIVERGENCE_WHY.split("<br>")[0] in status_text(ctl)  # says why, not only what
    assert ctl.status.value.count("symsgd-status-error") == 1  # marked as an error
    notes = [a for a in ctl.figure.layout.annotations if a.name == "divergence"]
    assert len(notes) == 1 and "diverged" in notes[0].text
    assert figure_is_finite(ctl.figure)
    assert all(r.passed for r in ctl.claims())  # the identities held at every step before the divergence
    ctl.set(lr=0.02)
    assert not [a for a in ctl.figure.layout.annotations if a.name == "divergence"]


def test_sign_flips_are_counted_at_moderate_eta():
    ctl = ui.DiscreteBreakdown()
    ctl.set(lr=0.15, seed=3)
    facts = ctl.result.facts
    G = facts["G"]
    resolved = np.abs(G) > ctl.result.G_floor  # above round-off: the sign of G means something
    both = resolved[1:] & resolved[:-1]
    flips = int(np.sum((facts["factor"] < 0) & both))
    assert flips > 0 and ctl.result.outcome.kind == "sign_flips"
    assert "symsgd-status-warning" in ctl.status.value
    assert int(np.sum((np.sign(G[1:]) != np.sign(G[:-1])) & both)) == flips  # each negative factor flips G
    assert ctl.result.flips == flips


def test_default_claims_pass_for_every_controller():
    for cls in CONTROLLERS:
        ctl = cls()
        results = ctl.claims()
        assert results and all(r.passed for r in results), (cls.__name__, [str(r) for r in results if not r.passed])


def test_relu_balance_without_its_data_file_warns_instead_of_raising(tmp_path):
    ctl = ui.ReLUBalance(data_path=tmp_path / "nothing.npz")
    assert "missing" in status_text(ctl)
    assert figure_is_finite(ctl.figure)
    assert [a for a in ctl.figure.layout.annotations if a.name == "missing"]
    assert all(r.passed for r in ctl.claims())  # the live run's claim still stands


def test_three_dynamics_tells_the_three_stories():
    ctl = ui.ThreeDynamics()
    G = {k: getattr(ctl.result, k).observables["G"][:, 0] for k in ("flow", "sgd", "iso")}
    assert abs(G["flow"][-1] - G["flow"][0]) < 1e-6  # on its hyperbola
    assert abs(G["sgd"][-1]) < 0.1 * abs(G["sgd"][0])  # slid to the balanced line
    assert np.ptp(G["iso"]) > abs(G["sgd"][0])  # wandered along the valley


# ------------------------------------------------------------------------------------------- helpers
# the curves of the (u, w) plane the figures draw: tests/balance/test_balance_plane.py
def test_assert_claims_and_status_text():
    ok = make_result("x", "claim", 0.0, 1.0, "src")
    bad = make_result("y", "claim", 2.0, 1.0, "src")
    assert_claims([ok])
    with pytest.raises(AssertionError):
        assert_claims([ok, bad])
    with pytest.raises(AssertionError, match="no claim"):
        assert_claims([])
    ctl = ui.SymmetryExplorer()
    ctl.say("a < b & c", "warning")
    assert status_text(ctl) == "a < b & c"


# ------------------------------------------------------------------------------------------- exercises
def test_exercise_rate():
    ex = balance.EXERCISES["balance_rate"]
    assert ex.check(None).status == "unanswered"
    assert ex.check(-3.6).correct and ex.check("-3.6").correct and ex.check("−18/5").correct
    assert "sign" in ex.check(3.6).message
    assert "½" in ex.check(-1.8).message
    assert "factor 4" in ex.check(-0.9).message
    assert "gradient flow" in ex.check(0).message
    assert ex.check("abc").status == "wrong" and "expected a number" in ex.check("abc").message
    assert "dG/dt" in ex.question and "(u, w) = (2, 1)" in ex.question
    assert "right" in str(ex.check(-3.6)) and "<div" in ex.check(-3.6)._repr_html_()


def test_exercise_conserved_quantity():
    check = balance.EXERCISES["conserved_quantity"].check
    assert balance.EXERCISES["conserved_quantity"].kind == "code"
    assert check(None).status == "unanswered"
    assert check(lambda u, w: u * u - w * w).correct
    assert check(lambda u, w: np.exp(0.1 * (u * u - w * w))).correct
    assert not check(lambda u, w: u * w).correct
    assert not check(lambda u, w: u * u + w * w).correct
    assert "constant" in check(lambda u, w: 3.0).message
    assert "raised" in check(lambda u, w: 1 / 0).message
    assert "raised TypeError" in check(lambda u, w: None).message  # the notebook's unfinished template
    assert "not differentiable" in check(lambda u, w: np.sqrt(u) * np.nan).message
    assert check(5).status == "wrong" and "function" in check(5).message


def test_exercise_step_factor():
    ex = balance.EXERCISES["step_factor"]
    assert ex.check(None).status == "unanswered"
    fb = ex.check(-0.88)
    assert fb.correct and "flipped the sign" in fb.message
    assert "flow" in ex.check(2.0).message
    assert not ex.check(0.5).correct
    assert "ḡ =" in ex.question
