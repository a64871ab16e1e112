"""Predict first (symsgd_core.lesson.reveal): a figure asked about in a "Check yourself" panel stays covered until the
reader has answered (right or wrong), pressed "Show the result", or used the figure's own controls; the controller
computes and keeps its result all along (the notebooks' asserts read it while the figure is covered)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import ipywidgets as widgets
import plotly.graph_objects as go
import pytest

from symsgd_core import rank_jumps
from symsgd_core.core.exercises import Exercise, Feedback, number_exercise
from symsgd_core.lesson import reveal_after
from symsgd_core.lesson.exercise_panel import ExercisePanel
from symsgd_core.lesson.reveal import COVERED_CLASS, PROMPT_CLASS, REVEAL, Reveal
from symsgd_core.rank_jumps.exercises import PREDICT
from symsgd_core.ui.base import Controller, RunController


class Sloped(Controller):
    """One figure y = a·x, a status line naming the answer ("a = …"), and a result the notebook asserts on."""

    def __init__(self) -> None:
        super().__init__()
        self.controls = {"a": widgets.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.1, description="a")}
        self.figures = [go.FigureWidget(go.Scatter(x=[0, 1], y=[0, 0]))]
        self.result = None
        self._wire()
        self.update()

    def _update(self, a) -> None:
        self.result = {"a": a, "y": [0.0, a]}
        self.figures[0].data[0].y = self.result["y"]
        self.say(f"the answer: a = {a:g}")


class SlopedRun(RunController):
    """The same with a Run button (a re-simulating figure)."""

    def __init__(self) -> None:
        super().__init__()
        self.controls = {"a": widgets.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.1, description="a")}
        self._setup_run()
        self.figures = [go.FigureWidget(go.Scatter(x=[0, 1], y=[0, 0]))]
        self.result = None
        self._wire()
        self.update()

    def _run(self, a) -> None:
        self.result = {"a": a}
        self.figures[0].data[0].y = [0.0, a]
        self.say(f"the answer: a = {a:g}")


def _panel() -> ExercisePanel:
    number = number_exercise("guess", "What is a?", 0.5, "a is 0.5.", "it is the slider's start.", solution=0.5)
    choice = Exercise("pick", "Which?", lambda x: Feedback("right" if x == 1 else "wrong", "because."), "choice",
                      options=(("one", 1), ("two", 2)), solution=1)
    return ExercisePanel([number, choice])


def _covered(controller) -> bool:
    """What the reader sees: figures and status hidden, the prompt shown (and the root marked)."""
    root = controller.view()
    cover = controller._cover
    area, prompt = cover.children
    hidden = area.layout.visibility == "hidden" and controller.status.layout.visibility == "hidden"
    shown = area.layout.visibility in (None, "visible") and controller.status.layout.visibility in (None, "visible")
    assert hidden != shown
    assert (prompt.layout.display != "none") == hidden
    assert (COVERED_CLASS in root._dom_classes) == hidden
    # the figures' text alternatives state the finding: hidden from screen readers while covered, read after
    assert controller._alts and all((alt.layout.visibility == "hidden") == hidden for alt in controller._alts)
    return hidden


def _show_button(controller) -> widgets.Button:
    return next(b for b in _walk(controller.view()) if isinstance(b, widgets.Button) and b.description == REVEAL)


def _walk(w):
    yield w
    for c in getattr(w, "children", ()) or ():
        yield from _walk(c)


def test_covered_at_first_with_figures_drawn_and_result_available():
    panel, ctl = _panel(), Sloped()
    root = reveal_after(panel, ctl)
    assert root is ctl.view() and "symsgd-controller" in root._dom_classes  # the same root: pages find it
    assert _covered(ctl)
    # the figure and status are in the page (drawn at their size, only invisible), the status line still a
    # direct child of the root (the browser suite reads it there), the controls visible
    inside = list(_walk(root))
    assert ctl.figure in inside and ctl.status in root.children
    assert all(w in inside for w in ctl.controls.values())
    assert any(PROMPT_CLASS in getattr(w, "_dom_classes", ()) for w in inside)
    # the controller computed: the notebook's asserts read its result while the figure is covered
    assert ctl.result == {"a": 0.5, "y": [0.0, 0.5]} and "a = 0.5" in ctl.status.value


@pytest.mark.parametrize("answer", ["0.5", "0.9"], ids=["right", "wrong"])
def test_revealed_by_a_submitted_answer_right_or_wrong(answer):
    panel, ctl = _panel(), Sloped()
    reveal_after(panel, ctl)
    box = panel["guess"]
    box.submit("not a number")  # unreadable: not an answer, still covered
    assert _covered(ctl)
    box.submit(answer)  # Enter
    assert not _covered(ctl)


def test_revealed_by_check_of_a_choice_and_by_the_code_cell_path():
    panel, ctl = _panel(), Sloped()
    reveal_after(panel, ctl)
    box = panel["pick"]
    box.input.value = 2  # picking is not answering
    assert _covered(ctl)
    box.button.click()  # Check
    assert not _covered(ctl)
    panel2, ctl2 = _panel(), Sloped()
    reveal_after(panel2, ctl2)
    assert panel2.answer("guess", None) is None and _covered(ctl2)  # an unanswered code cell reveals nothing
    panel2.answer("guess", 0.1)
    assert not _covered(ctl2)


def test_revealed_by_the_show_button_and_everything_after_the_panel_together():
    panel, ctl, other = _panel(), Sloped(), Sloped()
    reveal_after(panel, ctl)
    reveal_after(panel, other)
    text = reveal_after(panel, "GD: rank 2\nSGD: rank 1")
    prompt, body = text.children
    assert body.layout.display == "none" and "SGD: rank 1" in body.value and prompt.layout.display != "none"
    _show_button(ctl).click()
    assert not _covered(ctl) and not _covered(other)
    assert body.layout.display is None and prompt.layout.display == "none"
    assert Reveal.of(panel).revealed
    # covered after the reveal (a cell run again): shown at once
    late = Sloped()
    reveal_after(panel, late)
    assert not _covered(late)


@pytest.mark.parametrize("classroom", [False, True], ids=["jupyterlab", "classroom"])
def test_covered_text_reads_as_printed_text_once_revealed(monkeypatch, classroom):
    monkeypatch.setenv("SYMSGD_MODE", "classroom" if classroom else "lab")
    panel = _panel()
    text = "\n".join(f"line {k}: <{k}>" for k in range(5))
    _prompt, body = reveal_after(panel, text).children
    panel["guess"].submit("0.1")
    assert body.layout.display is None and "line 4: &lt;4&gt;" in body.value
    assert body.value.startswith('<details class="symsgd-printed"' if classroom else '<pre class="symsgd-printed">')


def test_covered_claims_are_asserted_at_once_and_shown_as_a_claims_line_once_revealed():
    from symsgd_core.core.checking import make_result

    good = [make_result("demo.jumps", "at least one run jumps", 4, 1, "exact count", ">=")]
    panel = _panel()
    box = reveal_after(panel, good)
    prompt, body = box.children
    assert body.layout.display == "none" and "symsgd-covered-text" in box._dom_classes
    assert "claims checked here name the answer" in prompt.children[0].value
    panel["guess"].submit("0.1")
    assert body.layout.display is None and "1 claim checked" in body.value
    bad = [make_result("demo.jumps", "at least one run jumps", 0, 1, "exact count", ">=")]
    with pytest.raises(AssertionError, match="demo.jumps"):
        reveal_after(_panel(), bad)  # a failed claim fails the cell at once, covered or not
    with pytest.raises(AssertionError, match="no claim"):
        reveal_after(_panel(), [])


def test_using_the_figure_reveals_it():
    panel, ctl = _panel(), Sloped()
    reveal_after(panel, ctl)
    ctl.controls["a"].value = 0.8  # a slider moved: the figure redraws, so it shows
    assert not _covered(ctl) and ctl.result["a"] == 0.8
    panel, run = _panel(), SlopedRun()
    reveal_after(panel, run)
    run.controls["a"].value = 0.8  # a re-simulating figure's slider only sets the next run: still covered
    assert _covered(run) and run.result["a"] == 0.5
    run.run_button.click()  # Run
    assert not _covered(run)


def test_a_controller_is_covered_once_and_other_panels_are_independent():
    panel, ctl = _panel(), Sloped()
    first = reveal_after(panel, ctl)
    n = len(first.children)
    assert reveal_after(panel, ctl) is first and len(first.children) == n  # a cell run twice: no second cover
    other_panel, other = _panel(), Sloped()
    reveal_after(other_panel, other)
    panel["guess"].submit("0.5")
    assert not _covered(ctl) and _covered(other)
    with pytest.raises(TypeError, match="Controller, text or a list of claims"):
        reveal_after(panel, 42)


def test_panel_reports_judged_answers_only():
    panel, seen = _panel(), []
    panel.on_submit(lambda box, feedback: seen.append((box.exercise.name, feedback.status)))
    panel["guess"].submit("abc")  # the format message: not an answer
    panel["guess"].submit("0.2")
    panel["guess"].submit("0.5")
    panel["pick"].input.value = 1
    panel["pick"].button.click()
    assert seen == [("guess", "wrong"), ("guess", "right"), ("pick", "right")]


NOTEBOOK_04 = Path(__file__).resolve().parents[2] / "notebooks" / "04_one_way_rank_jumps.ipynb"


@pytest.mark.parametrize("name", list(PREDICT))
def test_notebook_04_shows_its_predictions_figures_covered(name):
    """§0 and §4 ask for a prediction: the figure below the panel is shown through ``reveal_after`` of that panel, and
    no cell of the section prints the numbers uncovered (they go through ``reveal_after`` too)."""
    cells = json.loads(NOTEBOOK_04.read_text(encoding="utf-8"))["cells"]
    start = next(i for i, c in enumerate(cells)
                 if c["cell_type"] == "code" and f'EXERCISES["{name}"]' in "".join(c["source"]))
    panel = re.match(r"(\w+) = ExercisePanel\(", "".join(cells[start]["source"]))
    assert panel, "the prediction's panel is kept in a variable, to reveal after it"
    section = []
    for c in cells[start + 1:]:
        if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## "):
            break
        if c["cell_type"] == "code":
            section.append("".join(c["source"]))
    controllers = [m.group(1) for s in section for m in re.finditer(r"^(\w+) = (?:\w+\.)?\w+Controller\(", s, re.M)]
    assert controllers, f"no figure after the panel of {name}"
    for var in controllers:
        assert any(f"reveal_after({panel.group(1)}, {var})" in s for s in section), f"{var} is shown uncovered"
        assert not any(re.search(rf"^{var}$", s, re.M) for s in section), f"{var} is displayed uncovered"
    assert not any("print(" in s for s in section), "numbers printed under the figure, uncovered"
    assert not any("assert_claims(" in s for s in section), "claims (their table names the answer) shown uncovered"


@pytest.mark.slow  # the real figure of notebook 04 §5 (a few seconds)
def test_notebook_04_basin_figure_covered_and_its_result_ready():
    from symsgd_core.ui.rank_jumps import BasinController

    panel = ExercisePanel({"basin_radius": rank_jumps.EXERCISES["basin_radius"]})
    basin = BasinController(steps=5000)
    reveal_after(panel, basin)
    assert _covered(basin) and basin.result is not None and basin.result.alpha_c > 0
    panel.answer("basin_radius", 0.1)  # a wrong derivation: the hint, and the figure to look at
    assert not _covered(basin)


@pytest.mark.parametrize("how", ["show", "answer", "run"])
def test_instructor_variant_keeps_the_worked_solutions_closed_until_the_figure_is_revealed(monkeypatch, how):
    """``make instructor`` opens every worked solution, but those of a prediction would give it away over the
    covered figure: closed while covered, opened with the figure (whichever way it is revealed)."""
    monkeypatch.setenv("SYMSGD_SOLUTIONS", "open")
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)  # a script: the panel opens its solutions at once
    panel, ctl = _panel(), SlopedRun()
    assert all(b.solution_shown for b in panel.boxes.values())
    reveal_after(panel, ctl)
    assert _covered(ctl) and not any(b.solution_shown for b in panel.boxes.values())
    if how == "show":
        _show_button(ctl).click()
    elif how == "answer":
        panel["guess"].submit("0.9")  # a wrong prediction reveals too
    else:
        ctl.run_button.click()  # the reader's own Run
    assert not _covered(ctl) and all(b.solution_shown for b in panel.boxes.values())


def test_outside_the_instructor_variant_the_reveal_opens_no_worked_solution(monkeypatch):
    monkeypatch.delenv("SYMSGD_SOLUTIONS", raising=False)
    panel, ctl = _panel(), Sloped()
    reveal_after(panel, ctl)
    _show_button(ctl).click()
    assert not _covered(ctl) and not any(b.solution_shown for b in panel.boxes.values())
