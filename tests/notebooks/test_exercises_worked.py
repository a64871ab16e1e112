"""The worked solutions and hints of the "Check yourself" exercises of every notebook (01 balance, 02 lifting,
03 stationary, 04 rank jumps, 05 SGD's own SDE): every exercise has both; no hint gives its answer away; the
derivation exercises agree with the package's own formulas."""

from __future__ import annotations

import re

import numpy as np
import pytest

from symsgd_core import balance, lifting, rank_jumps, stationary
from symsgd_core.sde_noise import exercises as sde_exercises

MODULES = {"01": balance, "02": lifting, "03": stationary, "04": rank_jumps, "05": sde_exercises}
ALL = [(nb, name) for nb, mod in MODULES.items() for name in mod.EXERCISES]


def _exercise(nb, name):
    return MODULES[nb].EXERCISES[name]


def _number_tokens(value: float) -> set[str]:
    """The ways a reader would see ``value`` written: 1 → "1"; 0.25 → "0.25", "1/4" is not searched."""
    out = {f"{value:g}", f"{value:.4g}", f"{value:.3g}"}
    if float(value).is_integer():
        out.add(str(int(value)))
    return {t.replace("-", "−") for t in out} | out


def _contains_number(text: str, token: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(token)}(?![\d])", text) is not None


@pytest.mark.parametrize("nb, name", ALL)
def test_every_exercise_has_a_worked_solution_and_a_hint(nb, name):
    ex = _exercise(nb, name)
    assert ex.hint.strip() and ex.worked.strip(), name
    assert len(ex.worked) > 150 and "$" in ex.worked, "worked is a derivation in Markdown with math, not a number"
    assert not any(c in ex.worked for c in "\t\f\v\b\r"), "a LaTeX backslash was read as a Python escape"


@pytest.mark.parametrize("nb, name", [(nb, n) for nb, n in ALL if _exercise(nb, n).kind == "number"])
def test_no_hint_contains_its_numeric_answer(nb, name):
    ex = _exercise(nb, name)
    for token in _number_tokens(float(ex.solution)):
        assert not _contains_number(ex.hint, token), (name, token, ex.hint)
    # the first wrong answer's message shows the hint, not the answer either
    message = ex.check(float(ex.solution) + 123.0).message
    for token in _number_tokens(float(ex.solution)):
        assert not _contains_number(message.replace(f"{float(ex.solution) + 123.0:.4g}", ""), token), (name, message)


def test_vector_and_code_hints_do_not_spell_the_answer():
    assert "2, 1" not in lifting.EXERCISES["euler_direction"].hint
    assert "A.T @ u" not in lifting.EXERCISES["grad_w_function"].hint and "Aᵀu" not in lifting.EXERCISES[
        "grad_w_function"].hint
    assert "u² − w²" not in balance.EXERCISES["conserved_quantity"].hint
    assert "1, 1" not in balance.EXERCISES["sqrt_null_space"].hint


def test_the_hint_detector_itself_can_fail():
    assert _contains_number("the answer is 0.25 here", "0.25")
    assert not _contains_number("0.255", "0.25") and not _contains_number("10.25", "0.25")


def test_new_derivation_exercises_match_the_package():
    # SGD's per-step covariance η²C/S accumulates to T·C·t
    p = balance.exercises.EXERCISE_COVARIANCE
    assert balance.EXERCISES["sgd_step_covariance"].check(p["lr"] / p["batch_size"]).correct
    # √C by eigendecomposition shares C's null space
    C = np.array(balance.exercises.EXERCISE_SQRT["C"])
    lam, U = np.linalg.eigh(C)
    null = U[:, np.argmin(lam)]
    root = U @ np.diag(np.sqrt(np.clip(lam, 0, None))) @ U.T
    assert np.abs(C @ null).max() < 1e-12 and np.abs(root @ null).max() < 1e-7
    # the noise-balance ratio is the rank-1 law d_out/d_in
    r = balance.exercises.EXERCISE_RATIO
    assert balance.EXERCISES["noise_balance_ratio"].check(r["d_out"] / r["d_in"]).correct
    assert not balance.EXERCISES["noise_balance_ratio"].check(1.0).correct
    # the depth-1 Itô drift coefficient is the one in the package's v-SDE: a(v, T) − a(v, 0) = c·T·v·g(v)
    prob = stationary.DiagonalNetProblem.gaussian(1.0, 1.0)
    v, T = np.array([0.3, 1.0, 2.5]), 0.1
    a_T = stationary.v_sde.v_space_coefficients(v, prob, T, 1)[0]
    a_0 = stationary.v_sde.v_space_coefficients(v, prob, 1e-300, 1)[0]
    c = (a_T - a_0) / (T * v * prob.g(v))
    assert np.allclose(c, 4.0, rtol=1e-12)
    assert stationary.EXERCISES["depth1_ito_drift"].check(float(c[0])).correct


@pytest.mark.parametrize("name, wrong, phrase", [
    ("sgd_step_covariance", 0.0025, "one step"), ("sgd_step_covariance", 0.1, "batch"),
    ("sqrt_null_space", (2 ** 0.5, 2 ** 0.5), "entrywise"), ("sqrt_null_space", "1.414, 1.414", "entrywise"),
    ("sqrt_null_space", (2.0, 2.0), "C x"), ("sqrt_null_space", (0.0, 0.0), "null direction"),
    ("sgd_step_covariance", 0.25, "one step's covariance in units of η²C"),
    ("noise_balance_ratio", 4.0, "inverse"),
])
def test_new_balance_exercises_recognise_typical_mistakes(name, wrong, phrase):
    fb = balance.EXERCISES[name].check(wrong)
    assert fb.status == "wrong" and phrase in fb.message, fb


def test_depth1_ito_exercise_recognises_typical_mistakes():
    ex = stationary.EXERCISES["depth1_ito_drift"]
    assert "½" in ex.check(8.0).message and "2uw" in ex.check(2.0).message and "Hessian" in ex.check(0.0).message
