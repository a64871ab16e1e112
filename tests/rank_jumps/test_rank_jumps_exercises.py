"""Notebook 04's exercises: every one has a worked solution and a hint that does not give the answer away; the new
derivation and predict-then-run exercises accept the right answer and recognise the typical mistakes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from symsgd_core import rank_jumps
from symsgd_core.rank_jumps import exercises as E

EX = rank_jumps.EXERCISES


def _answer_texts(ex) -> list[str]:
    """The ways the right answer could be written in a hint (numbers to 1–4 significant digits, option labels)."""
    if ex.kind == "choice":
        return [label for label, value in ex.options if value == ex.solution]
    sol = float(ex.solution)
    return sorted({f"{sol:.{d}g}" for d in (2, 3, 4)} | {repr(sol)})


@pytest.mark.parametrize("name", list(EX))
def test_every_exercise_has_a_worked_solution_and_a_hint(name):
    ex = EX[name]
    assert len(ex.worked) > 200 and "$" in ex.worked, name          # a derivation in Markdown math, not a number
    assert len(ex.hint) > 40, name
    for text in _answer_texts(ex):
        pattern = rf"(?<![\\w.]){re.escape(text)}(?![\\w.])" if ex.kind != "choice" else re.escape(text)
        assert not re.search(pattern, ex.hint), (name, text, ex.hint)


def test_the_hint_check_can_fail():
    leaky = E.explosion_exercise()
    leaky = type(leaky)(**{**leaky.__dict__, "hint": "the answer is 1 here"})
    assert any(re.search(rf"(?<![\\w.]){re.escape(t)}(?![\\w.])", leaky.hint) for t in _answer_texts(leaky))


def test_predict_and_section_9_partition_the_exercises():
    assert set(E.PREDICT) | set(E.SECTION_9) == set(EX) and not set(E.PREDICT) & set(E.SECTION_9)
    assert list(EX)[0] == "predict_sgd_end"


def test_origin_threshold_exercise():
    ex = EX["origin_threshold"]
    assert ex.check(rank_jumps.analysis.origin_threshold(rank_jumps.epsilon_completion(0.2))).correct
    assert ex.check("0.3683").correct
    assert "2/N" in ex.check(0.5525).message                       # forgot the 2/N of the loss
    assert "divide by 2" in ex.check(0.7367).message               # s_max itself
    assert "L = 2" in ex.question


def test_explosion_exercise():
    ex = EX["explosion"]
    assert ex.check(1.0).correct and ex.check("4/4").correct
    assert "one layer" in ex.check(0.25).message                   # per layer only
    assert "change of A" in ex.check(1 / 256).message              # ‖A_i − Â‖²
    assert E.explosion_exercise(depth=3, i=8).check(3 * 8 ** (-2 / 3)).correct


def test_basin_radius_derivation_at_another_depth():
    ex = EX["basin_radius_depth"]
    slope = rank_jumps.experiments.basin_slope()
    assert ex.check(rank_jumps.basin_radius(6, 0.027, slope)).correct and "L = 6" in ex.question
    assert "1/(L − 2)" in ex.check((2 * 0.027 / slope) ** (1 / 6)).message
    assert "keep the 2" in ex.check((0.027 / slope) ** 0.25).message
    assert not ex.check(rank_jumps.basin_radius(4, 0.027, slope)).correct   # the printed L = 4 value is wrong here


def test_predict_sgd_end_compares_with_the_run():
    ex = EX["predict_sgd_end"]
    right = ex.check(1)
    assert right.correct and "returned to a higher rank: 0" in right.message
    assert not ex.check(2).correct and "samples one entry at a time" in ex.check(2).message
    assert "rank 1" not in ex.check(2).message and "rank 1" not in ex.check(0).message   # no answer given away
    assert not ex.check(0).correct and ex.check("3").status == "wrong"
    # the checker follows the simulation: where GD finds rank 1 itself, the majority is computed, not assumed
    assert E._trap_majority(0.2, 0.027, 0.3)[0] == 1


def test_worked_solutions_quote_the_right_numbers():
    assert "8.069e-08" in EX["decay_factor"].worked
    assert "0.3683" in EX["origin_threshold"].worked
    assert "8.246" in EX["better_minimum"].worked and "8.016" in EX["better_minimum"].worked
    m = rank_jumps.min_norm_completion(0.25, 4)
    assert m["rank"] == 2 and m["penalty_rank1"] == pytest.approx(8.246, abs=1e-3)
    s = np.linalg.svd(np.array([[1, 0.25], [0, 1]]), compute_uv=False)
    assert 4 * np.sum(np.sqrt(s)) == pytest.approx(8.016, abs=1e-3)   # the rank-2 completion of the worked text


@pytest.mark.parametrize("name", ["decay_factor", "basin_radius", "basin_radius_depth", "predict_sgd_end"])
def test_the_reviewed_exercises_write_no_ascii_math(name):
    """The question, hint and feedback (the right answer's and each typical mistake's) of the exercises the lesson
    review quoted ("the unsampled row of W_L", "the first-order basin radius a_c", "(1 − 2ηγ)^t") are plain
    Unicode text: no ASCII math (symsgd_jupyter.text_checks). The worked solutions are Markdown math."""
    from symsgd_jupyter.text_checks import word_problems

    ex = EX[name]
    answers = [ex.solution] + [wrong for wrong, _ in ex.mistakes] + ([0] if ex.kind == "choice" else [])
    texts = [ex.question, ex.hint] + [ex.check(a).message for a in answers]
    found = {text: word_problems(text) for text in texts if word_problems(text)}
    assert not found, found
