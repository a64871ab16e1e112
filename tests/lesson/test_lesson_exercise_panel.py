"""The shared "Check yourself" machinery (symsgd_core.lesson.exercise_panel) and every exercise of Notebooks 01–04:
feedback rendering, answer parsing, each exercise's right answer and typical mistakes, robustness to
garbage, and the widget panel driven as a reader would (typing, Enter, clicking Check)."""

from __future__ import annotations

import math
import os
from fractions import Fraction

import ipywidgets as widgets
import numpy as np
import pytest

from symsgd_core import balance, lifting, rank_jumps, stationary
from symsgd_core.core.exercises import (
    KINDS,
    Exercise,
    Feedback,
    as_number,
    as_vector,
    number_exercise,
    vector_exercise,
)
from symsgd_core.lesson.exercise_panel import (
    GENERIC_HINT,
    HIDE,
    OPEN_AFTER_IDLE_S,
    SHOW,
    ExercisePanel,
    markdown_html,
)
from symsgd_core.sde_noise import exercises as sde_exercises
from symsgd_core.ui.style import allowed_colour
from symsgd_jupyter.answer_box import SUBMIT, AnswerBox

#: Each notebook's exercises (03 is the stationary law, 04 the rank jumps, 05 SGD's own SDE).
MODULES = {"01": balance, "02": lifting, "03": stationary, "04": rank_jumps, "05": sde_exercises}
ALL = [(nb, name) for nb, mod in MODULES.items() for name in mod.EXERCISES]
#: Answers no exercise accepts (None excluded: that is "unanswered").
GARBAGE = ["abc", "", "   ", float("nan"), float("inf"), "-inf", [1, 2, 3], {"a": 1}, object(), 1 + 2j,
           lambda: 1, np.array([[1.0, 2.0]])]
SAFETY_NET = "could not be checked"


def _exercise(nb: str, name: str) -> Exercise:
    return MODULES[nb].EXERCISES[name]


# ------------------------------------------------------------------------------------------ Feedback
def test_feedback_marks_and_correct():
    assert str(Feedback("right", "because.")) == "✔ right: because."
    assert str(Feedback("wrong", "no.")) == "✘ not quite: no."
    assert str(Feedback("unanswered", "type it.")) == "… not answered yet: type it."
    assert Feedback("right", "").correct
    assert not Feedback("wrong", "").correct and not Feedback("unanswered", "").correct


def test_feedback_html_is_coloured_and_escaped():
    right = Feedback("right", "a < b & c")._repr_html_()
    wrong = Feedback("wrong", "<script>x</script>")._repr_html_()
    assert "a &lt; b &amp; c" in right and "<script>" not in wrong and "&lt;script&gt;" in wrong
    assert "symsgd-feedback-right" in right and "symsgd-feedback-wrong" in wrong
    colours = {s: Feedback(s, "m")._repr_html_().split("solid ")[1][:7] for s in ("right", "wrong", "unanswered")}
    assert len(set(colours.values())) == 3, colours
    assert all(allowed_colour(c) for c in colours.values()), colours  # the project's palette
    assert "color:" not in right  # the text keeps the theme's colour (light and dark themes)


def test_feedback_rejects_unknown_status():
    with pytest.raises(ValueError, match="status"):
        Feedback("correct", "old spelling")


# ------------------------------------------------------------------------------------------ parsing
@pytest.mark.parametrize("answer, expected", [
    (None, None), ("abc", None), ("", None), (float("nan"), None), (float("inf"), None), (-math.inf, None),
    ("nan", None), ("inf", None), ("-inf", None), ("1e-3", 1e-3), ("  -3.6 ", -3.6), ("−3.6", -3.6),
    ("1/4", 0.25), ("-1 / 4", -0.25), ("1/0", None), ("1/2/3", None), ("1/abc", None), ("1e308/1e-308", None),
    (True, None), (np.True_, None), (3, 3.0), (np.float64(0.5), 0.5), (np.int64(2), 2.0), (np.array(2.5), 2.5),
    (np.array([1.0]), None), ([1.0], None), (1 + 0j, None), (Fraction(1, 4), 0.25), (10**400, None),
    ("__import__('os')", None),
])
def test_as_number(answer, expected):
    assert as_number(answer) == expected


@pytest.mark.parametrize("answer, expected", [
    ("1, 0", [1.0, 0.0]), ("(4, 2)", [4.0, 2.0]), ("[1 -2]", [1.0, -2.0]), ("1/2, −1", [0.5, -1.0]),
    ([1, 2], [1.0, 2.0]), (np.array([3.0, 4.0]), [3.0, 4.0]), ((0.5,), [0.5]),
    ("1, abc", None), ("", None), ("()", None), ([[1, 2]], None), ([1, float("nan")], None), (None, None),
    (5, None), ([True, 1], None), (object(), None),
])
def test_as_vector(answer, expected):
    got = as_vector(answer)
    if expected is None:
        assert got is None
    else:
        assert got is not None and got.tolist() == expected


# ------------------------------------------------------------------------------------------ Exercise
def _echo(answer) -> Feedback:
    return Feedback("right" if answer == "yes" else "wrong", "echo")


def test_exercise_validates_kind_and_options():
    with pytest.raises(ValueError, match="kind"):
        Exercise("x", "q?", _echo, kind="essay")
    with pytest.raises(ValueError, match="options"):
        Exercise("x", "q?", _echo, kind="choice")
    with pytest.raises(ValueError, match="options"):
        Exercise("x", "q?", _echo, kind="number", options=(("a", 1),))


@pytest.mark.parametrize("kind", KINDS)
def test_none_is_unanswered_and_says_what_to_do(kind):
    ex = Exercise("x", "q?", _echo, kind=kind, options=(("a", 1),) if kind == "choice" else ())
    fb = ex.check(None)
    assert fb.status == "unanswered" and ("press Check" in fb.message or "code cell" in fb.message)


def test_a_checker_that_raises_becomes_a_wrong_verdict():
    def broken(answer):
        raise ZeroDivisionError("checker bug")

    fb = Exercise("x", "q?", broken).check(1.0)
    assert fb.status == "wrong" and SAFETY_NET in fb.message and "ZeroDivisionError" in fb.message


def test_number_exercise_tolerances_mistakes_and_close():
    ex = number_exercise("x", "q?", 2.0, "because", "think", solution=2.0, rel_tol=1e-3,
                         mistakes=[(-2.0, "sign"), (1.0, "halved")], close_tol=1e-2)
    assert ex.check(2.0019).correct and ex.check("2").correct and ex.check("4/2").correct
    assert ex.check(2.0019).message == "because"
    assert "sign" in ex.check(-2.0).message and "halved" in ex.check("1/1").message
    close = ex.check(2.01)
    assert close.status == "wrong" and "close" in close.message
    far = ex.check(3.0)
    assert far.status == "wrong" and "Hint: think" in far.message
    assert ex.mistakes == ((-2.0, "sign"), (1.0, "halved"))
    assert "expected a number" in ex.check("two").message


def test_vector_exercise():
    ex = vector_exercise("v", "What is √C x?", (1.0, 1.0), "because", "split x", solution=(1.0, 1.0),
                         mistakes=[((2.0, 2.0), "that is C x")], code_prompt="√C x")
    assert ex.kind == "vector" and ex.solution == (1.0, 1.0) and ex.code_prompt == "√C x"
    assert ex.check("1, 1").correct and ex.check([1.0004, 0.9996]).correct  # within abs_tol = 1e-3
    assert not ex.check([1.002, 1.0]).correct  # one entry off by more than abs_tol
    assert "that is C x" in ex.check("2, 2").message and ex.mistakes == (((2.0, 2.0), "that is C x"),)
    far = ex.check("3, 1")
    assert far.status == "wrong" and "Hint: split x" in far.message and "(3, 1)" in far.message
    for wrong_shape in ("1", "1, 1, 1", 1.0):
        fb = ex.check(wrong_shape)
        assert fb.status == "wrong" and "expected 2 numbers" in fb.message, fb
    with pytest.raises(ValueError, match="shape"):
        vector_exercise("v", "?", (1.0, 1.0), "r", "h", solution=(1.0, 1.0), mistakes=[((2.0,), "short")])
    with pytest.raises(ValueError, match="1-D"):
        vector_exercise("v", "?", [[1.0]], "r", "h", solution=(1.0,))
    with pytest.raises(ValueError, match="abs_tol"):
        vector_exercise("v", "?", (1.0,), "r", "h", solution=(1.0,), abs_tol=0.0)


# --------------------------------------------------------------------------- every exercise of 01–05
def test_every_notebook_has_exercises_of_the_declared_kinds():
    kinds = {nb: {ex.kind for ex in mod.EXERCISES.values()} for nb, mod in MODULES.items()}
    assert kinds["01"] == {"number", "vector", "code"} and kinds["02"] == {"number", "vector", "code"}
    assert kinds["04"] == {"number", "choice"} and kinds["03"] == {"number"}
    for mod in MODULES.values():
        assert all(name == ex.name for name, ex in mod.EXERCISES.items())


@pytest.mark.parametrize("nb, name", ALL)
def test_solution_is_right_and_none_is_unanswered(nb, name):
    ex = _exercise(nb, name)
    fb = ex.check(ex.solution)
    assert fb.correct, fb
    assert fb.message and SAFETY_NET not in fb.message
    assert ex.check(None).status == "unanswered"


@pytest.mark.parametrize("nb, name", [(nb, name) for nb, name in ALL if _exercise(nb, name).mistakes])
def test_typical_mistakes_get_their_message(nb, name):
    ex = _exercise(nb, name)
    for value, phrase in ex.mistakes:
        fb = ex.check(value)
        assert fb.status == "wrong" and phrase in fb.message, (value, fb)


def test_exercises_with_mistakes_cover_the_paper_slips():
    with_mistakes = {name for nb, name in ALL if _exercise(nb, name).mistakes}
    assert {"balance_rate", "step_factor", "decay_factor", "trap_depth", "critical_temperature", "tail_depth3",
            "depth1_ito_drift", "mode_depth1", "sgd_step_covariance", "sqrt_null_space",
            "noise_balance_ratio"} <= with_mistakes


@pytest.mark.parametrize("nb, name", ALL)
def test_garbage_is_wrong_with_a_clear_message(nb, name):
    ex = _exercise(nb, name)
    for answer in GARBAGE:
        fb = ex.check(answer)
        assert fb.status == "wrong" and fb.message, (answer, fb)
        assert SAFETY_NET not in fb.message, (answer, fb)  # the checker itself explains, not the safety net


TYPED = [(nb, name) for nb, name in ALL if _exercise(nb, name).kind in ("number", "vector")]


@pytest.mark.parametrize("nb, name", TYPED)
def test_typed_solution_is_right(nb, name):
    """What a reader types in the box (a string) is judged like the number itself."""
    ex = _exercise(nb, name)
    sol = ex.solution
    text = ", ".join(repr(float(v)) for v in sol) if ex.kind == "vector" else repr(float(sol))
    assert ex.check(text).correct, text


# ------------------------------------------------------------------------------------------ the panel
def test_panel_structure():
    panel = ExercisePanel(balance.EXERCISES)
    assert "symsgd-exercises" in panel.root._dom_classes
    assert list(panel.boxes) == list(balance.EXERCISES)
    assert [b.root for b in panel.boxes.values()] == list(panel.root.children)[:-1]  # last: the a11y helper
    for i, box in enumerate(panel.boxes.values(), start=1):
        assert "symsgd-exercise" in box.root._dom_classes
        assert box.question.value.startswith(f"<b>{i}.</b>") and box.feedback.value == ""
    rate, code = panel["balance_rate"], panel["conserved_quantity"]
    assert isinstance(rate.input, AnswerBox) and rate.button is None  # the Check button is part of the box
    assert isinstance(code.input, AnswerBox) and code.button is None  # a formula box
    assert code.arguments == ("u", "w") and "u, w" in code.input.placeholder
    assert "code cell" in code.root.children[1].value and "formula" in code.root.children[1].value


def test_a_typed_answer_is_judged_once_per_submission_on_the_text_submitted():
    """Typing and leaving the box judges nothing; Check or Enter sends the text with the
    submission, so the first wrong answer is one try (the hint shows) and a stale text is never judged."""
    ex = balance.EXERCISES["balance_rate"]
    box = ExercisePanel(balance.EXERCISES)["balance_rate"]
    wrong = repr(float(ex.mistakes[0][0])) if ex.mistakes else "3.6"
    box.input.value = wrong  # the box's text synced from the page (typing, leaving the box): not a submission
    assert box.tries == 0 and box.feedback.value == ""
    box.input._handle_custom_msg({"type": SUBMIT, "value": wrong}, [])  # Check, as the page sends it
    assert box.tries == 1 and "✘ not quite" in box.feedback.value
    assert (ex.hint.strip() or GENERIC_HINT)[:40] in box.feedback.value.replace("&#x27;", "'")  # the gentle hint
    box.input.value = "stale"  # a state update the page held back, arriving after a later submission
    box.input._handle_custom_msg({"type": SUBMIT, "value": "-3.6"}, [])  # the text submitted is what is judged
    assert box.last.correct and box.tries == 1 and box.input.value == "-3.6"
    box.input._handle_custom_msg({"type": "something else", "value": "0"}, [])  # other messages: ignored
    assert box.last.correct


def test_answer_box_calls_its_handlers_with_the_submitted_text():
    got = []
    a = AnswerBox(placeholder="a number")
    a.on_submit(got.append)
    a.value = "1"
    a.submit()
    a.submit("2")
    a._handle_custom_msg({"type": SUBMIT, "value": 3}, [])
    assert got == ["1", "2", "3"] and a.value == "3"
    assert "model.send({ type: 'submit', value: input.value })" in a._esm  # the text travels with the message
    assert "'blur'" not in a._esm and "'change'" not in a._esm  # leaving the box submits nothing


def test_panel_accepts_an_iterable_and_rejects_duplicate_names():
    exs = list(stationary.EXERCISES.values())[:2]
    assert list(ExercisePanel(exs).boxes) == [ex.name for ex in exs]
    with pytest.raises(ValueError, match="two exercises"):
        ExercisePanel([exs[0], exs[0]])


@pytest.mark.parametrize("nb, name, right, wrong", [
    ("01", "balance_rate", "-3.6", "3.6"),
    ("01", "step_factor", "−0.88", "2"),
    ("02", "midpoint_det", "1/4", "0"),
    ("02", "euler_direction", "4, 2", "(1, -2)"),
    ("04", "basin_radius", "0.5636", "0.1"),
    ("03", "tail_depth3", "-4.25", "−3.5"),
])
def test_typing_and_pressing_check_shows_the_verdict(nb, name, right, wrong):
    box = ExercisePanel(MODULES[nb].EXERCISES)[name]
    box.submit(right)  # typed, then Check or Enter: the text travels with the submission
    assert "✔ right" in box.feedback.value and box.last.correct
    box.submit(wrong)
    assert "✘ not quite" in box.feedback.value and box.last.status == "wrong"
    box.feedback.value = ""
    box.submit()  # Check again: the box's current text, checked again
    assert "✘ not quite" in box.feedback.value
    box.submit("  ")
    assert "not answered yet" in box.feedback.value and "press Check" in box.feedback.value
    box.submit("banana")
    assert "✘ not quite" in box.feedback.value and "expected" in box.feedback.value


def test_choice_widgets():
    panel = ExercisePanel(rank_jumps.EXERCISES)
    one_way, better = panel["one_way"], panel["better_minimum"]
    for box in (one_way, better):
        assert isinstance(box.input, widgets.ToggleButtons) and box.input.value is None
    assert [v for _, v in one_way.input.options] == [True, False]
    assert [v for _, v in better.input.options] == [1, 2]
    one_way.button.click()
    assert "not answered yet" in one_way.feedback.value and "pick an answer" in one_way.feedback.value
    one_way.input.value = False
    one_way.button.click()
    assert "✔ right" in one_way.feedback.value
    one_way.input.value = True  # a new pick clears the verdict on the old one
    assert one_way.feedback.value == "" and one_way.last is None
    one_way.button.click()
    assert "✘ not quite" in one_way.feedback.value
    better.input.value = 2
    better.button.click()
    assert "✔ right" in better.feedback.value and "rank 2" in better.feedback.value
    better.input.value = 1
    better.button.click()
    assert "✘ not quite" in better.feedback.value


def test_code_cell_path():
    panel = ExercisePanel(lifting.EXERCISES)
    assert panel.answer("grad_w_function", None) is None  # an unanswered code cell shows nothing
    assert panel["grad_w_function"].feedback.value == ""
    fb = panel.answer("grad_w_function", lambda A, u, w: A.T @ u)
    assert fb.correct and "✔ right" in panel["grad_w_function"].feedback.value
    fb = panel.answer("euler_direction", [1.0, -2.0])
    assert fb.status == "wrong" and "✘ not quite" in panel["euler_direction"].feedback.value
    assert panel["euler_direction"].input.value == ""  # the code path does not type into the box
    with pytest.raises(ValueError, match="exercise name must be one of .*euler_direction.*no_such_exercise"):
        panel.answer("no_such_exercise", 1.0)
    with pytest.raises(ValueError, match="exercise name"):
        panel["no_such_exercise"]


# ------------------------------------------------------- hints first, worked solutions on request
def _wrong_answer(ex) -> str:
    """A readable wrong answer to ``ex`` (its first typical mistake, else a number far from the solution)."""
    if ex.mistakes and ex.kind == "number":
        return repr(float(ex.mistakes[0][0]))
    if ex.kind == "vector":
        return "0, 1" if not ex.check("0, 1").correct else "1, 0"
    return repr(float(ex.solution) + 17.0)


@pytest.mark.parametrize("nb, name", [("01", "balance_rate"), ("01", "step_factor"), ("02", "midpoint_det"),
                                      ("03", "tail_depth3")])
def test_first_wrong_try_shows_only_the_hint_then_the_checkers_message(nb, name):
    ex = MODULES[nb].EXERCISES[name]
    box = ExercisePanel(MODULES[nb].EXERCISES)[name]
    wrong = _wrong_answer(ex)
    checker_says = ex.check(wrong).message
    assert not box.solution_shown and box.worked.layout.display == "none" and box.reveal.description == SHOW
    box.submit(wrong)  # Enter
    first = box.feedback.value
    assert "✘ not quite" in first and box.tries == 1 and box.last.status == "wrong"
    assert checker_says not in first  # the checker's message may name the answer: not on the first try
    assert (ex.hint.strip() or GENERIC_HINT) in first.replace("&#x27;", "'")
    assert "Show worked solution" in first and box.reveal.button_style == "info"  # offered after a wrong try
    box.submit()  # the same wrong answer, second try (Check)
    assert box.tries == 2 and checker_says.split(" — ")[0][:40] in box.feedback.value.replace("&#x27;", "'")
    box.reveal.value = True  # the reader asks for the derivation
    assert box.solution_shown and box.worked.layout.display is None and box.reveal.description == HIDE
    assert "Worked solution" in box.worked.value and len(box.worked.value) > 40
    box.reveal.value = False
    assert box.worked.layout.display == "none" and box.reveal.description == SHOW
    box.submit(repr(float(ex.solution)))
    assert "✔ right" in box.feedback.value and box.tries == 2


def test_unreadable_input_is_not_a_try_and_gets_the_format_message():
    box = ExercisePanel(balance.EXERCISES)["balance_rate"]
    box.submit("banana")
    assert box.tries == 0 and "expected a number" in box.feedback.value
    box = ExercisePanel(lifting.EXERCISES)["euler_direction"]
    box.submit("1, x")
    assert box.tries == 0 and "expected a 2-vector" in box.feedback.value


def test_empty_hint_and_worked_fall_back_gracefully():
    bare = number_exercise("bare", "What is 2 + 2?", 4.0, "2 + 2 = 4.", "count.", solution=4.0)
    assert bare.hint == "" and bare.worked == ""
    box = ExercisePanel([bare])["bare"]
    box.submit("5")
    assert GENERIC_HINT in box.feedback.value.replace("&#x27;", "'")
    box.show_solution()
    assert "Answer:" in box.worked.value and "4" in box.worked.value and "2 + 2 = 4." in box.worked.value
    code = Exercise("code", "f(u, w)?", lambda f: Feedback("right" if f(1.0, 2.0) == 3.0 else "wrong", "u + w."),
                    "code", solution=lambda u, w: u + w)
    cbox = ExercisePanel([code])["code"]
    cbox.show_solution()
    assert "u + w." in cbox.worked.value and "Answer:" not in cbox.worked.value  # no lambda repr shown
    nothing = Exercise("nothing", "?", lambda a: Feedback("wrong", "no."), "number")
    nbox = ExercisePanel([nothing])["nothing"]
    nbox.show_solution()
    assert "No worked solution" in nbox.worked.value


def test_worked_markdown_keeps_math_and_escapes_html():
    out = markdown_html("**Step 1.** $a_1 < b_2$ and $$\\frac{x_i}{y}$$ <script>alert(1)</script>\n\n- one")
    assert "<strong>Step 1.</strong>" in out and "$a_1 &lt; b_2$" in out and "$$\\frac{x_i}{y}$$" in out
    assert "<script>" not in out and "<li>one</li>" in out and "<em>" not in out  # _ inside math untouched


def test_instructor_variant_opens_every_worked_solution(monkeypatch):
    monkeypatch.setenv("SYMSGD_SOLUTIONS", "open")
    panel = ExercisePanel(balance.EXERCISES)
    assert all(b.solution_shown and "Worked solution" in b.worked.value for b in panel.boxes.values())
    monkeypatch.delenv("SYMSGD_SOLUTIONS")
    panel = ExercisePanel(balance.EXERCISES)
    assert not any(b.solution_shown for b in panel.boxes.values())
    panel.show_solutions()
    assert all(b.solution_shown for b in panel.boxes.values())
    assert all(b.solution_shown for b in ExercisePanel(balance.EXERCISES, solutions=True).boxes.values())


class _Kernel:
    """A stand-in for the kernel: its IPython events (``pre_run_cell`` and ``post_run_cell`` around every cell) and its
    event loop's timers (:func:`exercise_panel._call_later`), which run only while the kernel is idle."""

    def __init__(self) -> None:
        from IPython.core.events import EventManager, available_events

        self.events = EventManager(self, available_events)
        self.timers: list = []

    def cell_done(self) -> None:
        """The end of the cell running now (the panel's own, the first time)."""
        self.events.trigger("post_run_cell", None)

    def next_cell(self) -> None:
        """A whole next cell, started at once (as Voilà does)."""
        self.events.trigger("pre_run_cell", None)
        self.events.trigger("post_run_cell", None)

    def idle(self, seconds: float) -> None:
        """The kernel waits ``seconds`` with no cell to run: the timers due by then fire."""
        for timer in list(self.timers):
            if not timer.cancelled and timer.delay <= seconds:
                self.timers.remove(timer)
                timer.action()

    def call_later(self, delay, action):
        timer = type("Timer", (), {"delay": delay, "action": staticmethod(action), "cancelled": False})()
        timer.cancel = lambda: setattr(timer, "cancelled", True)
        self.timers.append(timer)
        return timer


@pytest.fixture
def kernel(monkeypatch):
    import IPython

    from symsgd_core.lesson import exercise_panel

    shell = _Kernel()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    monkeypatch.setattr(exercise_panel, "_call_later", shell.call_later)
    return shell


def _opened_ever(panel: ExercisePanel) -> list[str]:
    """The names of the panel's exercises whose worked solution is opened from now on (records every opening)."""
    seen: list[str] = []
    for name, box in panel.boxes.items():
        box.reveal.observe(lambda change, name=name: seen.append(name) if change["new"] else None, names="value")
    return seen


def test_in_a_kernel_the_instructor_variant_opens_the_solutions_once_the_next_cell_has_run(monkeypatch, kernel):
    """A panel built in a kernel opens its worked solutions after the cell that follows its own (where a reveal_after
    may still make it predict-first), never before; outside the instructor variant it never opens them."""
    monkeypatch.setenv("SYMSGD_SOLUTIONS", "open")
    panel = ExercisePanel(balance.EXERCISES)
    assert panel.instructor and not any(b.solution_shown for b in panel.boxes.values())
    kernel.cell_done()  # the panel's own cell
    assert not any(b.solution_shown for b in panel.boxes.values())
    kernel.next_cell()  # started before the kernel waited OPEN_AFTER_IDLE_S: its end decides
    assert all(b.solution_shown for b in panel.boxes.values())
    assert not kernel.events.callbacks["post_run_cell"] and not kernel.events.callbacks["pre_run_cell"]
    kernel.idle(10 * OPEN_AFTER_IDLE_S)  # the cancelled wait does nothing more
    monkeypatch.delenv("SYMSGD_SOLUTIONS")
    panel = ExercisePanel(balance.EXERCISES)
    kernel.cell_done()
    kernel.idle(10 * OPEN_AFTER_IDLE_S)
    kernel.next_cell()
    assert not panel.instructor and not any(b.solution_shown for b in panel.boxes.values())


def test_a_panel_in_the_last_cell_opens_once_the_kernel_has_waited_for_a_next_one(monkeypatch, kernel):
    monkeypatch.setenv("SYMSGD_SOLUTIONS", "open")
    panel = ExercisePanel(balance.EXERCISES)
    kernel.cell_done()
    kernel.idle(0.5 * OPEN_AFTER_IDLE_S)
    assert not any(b.solution_shown for b in panel.boxes.values())
    kernel.idle(OPEN_AFTER_IDLE_S)
    assert all(b.solution_shown for b in panel.boxes.values())
    assert not kernel.events.callbacks["post_run_cell"] and not kernel.events.callbacks["pre_run_cell"]
    assert 0.1 <= OPEN_AFTER_IDLE_S <= 5  # longer than Voilà's gap between two cells, short for a lecturer


def test_a_predict_first_panel_never_shows_its_solution_open_before_the_release(monkeypatch, kernel):
    monkeypatch.setenv("SYMSGD_SOLUTIONS", "open")
    panel = ExercisePanel({"predict_sgd_end": rank_jumps.EXERCISES["predict_sgd_end"]})
    opened = _opened_ever(panel)
    kernel.cell_done()
    kernel.events.trigger("pre_run_cell", None)  # the next cell: reveal_after(panel, …)
    panel.hold_solutions()
    kernel.cell_done()
    kernel.idle(10 * OPEN_AFTER_IDLE_S)
    kernel.next_cell()
    assert opened == [] and panel.predict_first
    panel.release_solutions()
    assert opened == ["predict_sgd_end"] and panel["predict_sgd_end"].solution_shown and not panel.predict_first
    # held while the kernel waits for a next cell (a reader stepping through JupyterLab): the wait opens nothing
    panel = ExercisePanel({"predict_sgd_end": rank_jumps.EXERCISES["predict_sgd_end"]})
    opened = _opened_ever(panel)
    kernel.cell_done()
    panel.hold_solutions()
    kernel.idle(10 * OPEN_AFTER_IDLE_S)
    assert opened == []
    # outside a kernel (a script) the instructor panel opens at once, and holding it closes it
    monkeypatch.setattr(__import__("IPython"), "get_ipython", lambda: None)
    panel = ExercisePanel({"predict_sgd_end": rank_jumps.EXERCISES["predict_sgd_end"]})
    assert panel["predict_sgd_end"].solution_shown
    panel.hold_solutions()
    assert not panel["predict_sgd_end"].solution_shown


def test_without_an_event_loop_the_panel_opens_after_the_next_cell(monkeypatch, kernel):
    from symsgd_core.lesson import exercise_panel

    monkeypatch.setattr(exercise_panel, "_call_later", lambda delay, action: None)
    monkeypatch.setenv("SYMSGD_SOLUTIONS", "open")
    panel = ExercisePanel(balance.EXERCISES)
    kernel.cell_done()
    assert not any(b.solution_shown for b in panel.boxes.values())
    kernel.next_cell()
    assert all(b.solution_shown for b in panel.boxes.values())


def test_call_later_needs_a_running_loop():
    import asyncio

    from symsgd_core.lesson import exercise_panel

    assert exercise_panel._call_later(0.01, lambda: None) is None  # no loop runs in a test's thread
    fired = []

    async def main():
        handle = exercise_panel._call_later(0.01, lambda: fired.append(1))
        cancelled = exercise_panel._call_later(0.01, lambda: fired.append(2))
        cancelled.cancel()
        await asyncio.sleep(0.05)
        return handle

    assert asyncio.run(main()) is not None and fired == [1]


def test_settling_decides_for_the_waiting_panels_at_once(monkeypatch, kernel):
    from symsgd_core.lesson.exercise_panel import settle_waiting_panels

    monkeypatch.setenv("SYMSGD_SOLUTIONS", "open")
    settle_waiting_panels()  # none left over from other tests
    panel = ExercisePanel(balance.EXERCISES)
    held = ExercisePanel({"predict_sgd_end": rank_jumps.EXERCISES["predict_sgd_end"]})
    held.hold_solutions()
    kernel.cell_done()
    assert not any(b.solution_shown for b in panel.boxes.values())
    assert settle_waiting_panels() == 2
    assert all(b.solution_shown for b in panel.boxes.values()) and not held["predict_sgd_end"].solution_shown
    assert settle_waiting_panels() == 0 and not kernel.events.callbacks["post_run_cell"]
    kernel.idle(10 * OPEN_AFTER_IDLE_S)  # the cancelled wait does nothing more
    assert not held["predict_sgd_end"].solution_shown


def test_release_opens_only_in_the_instructor_variant_and_only_a_held_panel(monkeypatch):
    monkeypatch.delenv("SYMSGD_SOLUTIONS", raising=False)
    panel = ExercisePanel(balance.EXERCISES)
    panel.hold_solutions()
    panel.release_solutions()
    assert not any(b.solution_shown for b in panel.boxes.values())  # a student's panel: closed until asked
    shown = ExercisePanel(balance.EXERCISES, solutions=True)
    shown.show_solutions(False)
    shown.release_solutions()  # never held: the reader's choice stands
    assert not any(b.solution_shown for b in shown.boxes.values())


@pytest.mark.parametrize("nb, name, right, wrong", [
    ("01", "conserved_quantity", "u**2 - w**2", "u*w"),
    ("01", "conserved_quantity", "(u^2 − w^2)**3 + sin(u*u - w*w)", "u**2 + w**2"),
    ("02", "grad_w_function", "A.T @ u", "A @ w"),
    ("02", "grad_w_function", "np.dot(transpose(A), u)", "A.sum(0)"),
])
def test_code_exercises_take_a_formula_in_the_panel(nb, name, right, wrong):
    box = ExercisePanel(MODULES[nb].EXERCISES)[name]
    box.submit(right)
    assert "✔ right" in box.feedback.value, box.feedback.value
    box.submit(wrong)
    assert "✘ not quite" in box.feedback.value


@pytest.mark.parametrize("attack", [
    "__import__('os').system('touch /tmp/symsgd-pwned')", "open('/etc/passwd').read()",
    "u.__class__.__mro__", "(lambda: 1)()", "[x for x in ()]", "u[0]", "exec('1')", "eval('1')",
    "globals()", "np.load('x')", "sin(u, where=u)", "9**9**9", "()" * 300, "u if u else w", "'a' * 10",
    "u; w", "import os", "sin.__call__(u)",
])
def test_formula_box_rejects_anything_outside_the_whitelist(attack):
    box = ExercisePanel(balance.EXERCISES)["conserved_quantity"]
    box.submit(attack)
    assert "✘ not quite" in box.feedback.value and (box.last is None or not box.last.correct)
    assert not os.path.exists("/tmp/symsgd-pwned")
