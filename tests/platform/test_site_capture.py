"""The static edition's capture (tools/site/edition/capture.py), run in-process on small controllers: the frames
are what the controller draws at each slider value, with Run pressed for re-simulating ones."""

from __future__ import annotations

import json

import ipywidgets as widgets
import pytest
from site_helpers import Line, expected_y

from tools.site.edition import config
from tools.site.edition.capture import (
    capture,
    controller_of,
    finish_controller,
    prepare_controller,
    run_button,
    static_html,
)


@pytest.fixture
def choose(monkeypatch):
    def _choose(slider, frames=5):
        monkeypatch.setitem(config.CHOICES, "Line", config.SliderChoice(slider, frames))
    return _choose


def _frames(ctl, n):
    entry, drive = prepare_controller(ctl, ctl.view())
    finish_controller(entry, drive, n)
    return entry


@pytest.mark.parametrize("run", [False, True], ids=["analytic", "re-simulating"])
def test_frames_are_what_the_controller_draws_at_each_value(choose, run):
    choose("a")
    ctl = Line(run=run)
    entry = _frames(ctl, 5)
    s = entry["slider"]
    assert s["name"] == "a" and s["values"] == [0.0, 0.2, 0.5, 0.8, 1.0] and s["values"][s["current"]] == 0.5
    assert entry["has_run"] is run and entry["figures"][0]["data"][0]["y"] == expected_y(0.5, 1)
    for value, frame in zip(s["values"], s["frames"]):
        assert frame["figures"][0]["data"][0]["y"] == pytest.approx(expected_y(value, 1))
        assert frame["status"].endswith(f"slope {value:g}, offset 1</span>")
        assert "template" not in frame["figures"][0]["layout"]  # frames do not repeat plotly's template


def test_a_broken_frame_would_be_seen(choose):
    """Without the Run click, a re-simulating controller's frames would all show the first state."""
    choose("a")
    ctl = Line(run=True)
    root = ctl.view()
    entry, drive = prepare_controller(ctl, root)
    drive.button = None  # as if the Run button were never pressed
    drive._done.clear()
    finish_controller(entry, drive, 3)
    ys = [json.dumps(f["figures"][0]["data"][0]["y"]) for f in entry["slider"]["frames"]]
    assert len(set(ys)) == 1  # the frames no longer follow the slider: exactly what the browser test catches


def test_controller_and_run_button_are_found_from_the_displayed_root():
    ctl, other = Line(run=True), Line()
    root = ctl.view()
    other.view()
    assert controller_of(root) is ctl
    assert run_button(root) is ctl.run_button
    assert run_button(other.view()) is None


def test_a_covered_controller_is_captured_uncovered(choose, tmp_path):
    """A figure covered until a prediction is answered (symsgd_core.lesson.reveal) is still found and drawn: the
    displayed root is the controller's, its Run button (not "Show the result") drives the frames, and covered text
    is copied without the cover's prompt."""
    from symsgd_core import balance
    from symsgd_core.lesson import reveal_after
    from symsgd_core.lesson.exercise_panel import ExercisePanel
    from symsgd_core.lesson.reveal import PROMPT_TEXT

    choose("a", 3)
    panel = ExercisePanel(balance.EXERCISES)
    ctl = Line(run=True)
    root = reveal_after(panel, ctl)
    text = reveal_after(panel, "GD: rank 2")
    assert controller_of(root) is ctl and run_button(root) is ctl.run_button
    out = tmp_path / "capture.json"
    summary = capture([root.model_id, text.model_id], str(out), 10**6)
    data = json.loads(out.read_text())["outputs"]
    assert summary[root.model_id] == {"kind": "controller", "class": "Line", "frames": 3}
    assert data[root.model_id]["status"].endswith("slope 0.5, offset 1</span>")
    assert "GD: rank 2" in data[text.model_id]["html"]
    assert "Show the result" not in data[text.model_id]["html"] and PROMPT_TEXT[:20] not in data[text.model_id]["html"]


def test_a_choice_naming_a_missing_slider_is_an_error(choose):
    choose("c")
    ctl = Line()
    with pytest.raises(ValueError, match="names slider 'c'"):
        prepare_controller(ctl, ctl.view())


def test_a_value_that_raises_names_the_controller_and_value(choose):
    choose("a")
    ctl = Line(fail_above=0.7)
    entry, drive = prepare_controller(ctl, ctl.view())  # the measuring move goes to a = 0: fine
    with pytest.raises(RuntimeError, match=r"Line: setting slider 'a' to 0\.8 raised FloatingPointError"):
        finish_controller(entry, drive, 5)


def test_capture_writes_every_output_and_shares_the_budget(choose, tmp_path):
    choose("a", 5)
    ctl = Line()
    panel = widgets.VBox([widgets.HTML("<b>1.</b> What is 2 + 2?"), widgets.Text(placeholder="a number"),
                          widgets.Button(description="Check")])
    out = tmp_path / "capture.json"
    summary = capture([ctl.view().model_id, panel.model_id, "no-such-model"], str(out), 10**6)
    data = json.loads(out.read_text())["outputs"]
    assert summary[ctl.view().model_id]["frames"] == 5
    assert data[panel.model_id]["kind"] == "widgets" and "What is 2 + 2?" in data[panel.model_id]["html"]
    assert data["no-such-model"]["kind"] == "missing"
    tiny = capture([ctl.view().model_id], str(out), 10)  # a budget no frame fits: the figure ships static
    entry = json.loads(out.read_text())["outputs"][ctl.view().model_id]
    assert tiny[ctl.view().model_id]["frames"] == 0 and entry["slider"] is None
    assert "page budget" in entry["why_no_slider"]


def test_static_html_copies_texts_and_disables_inputs():
    box = widgets.VBox([widgets.HTML("<i>question</i>"), widgets.ToggleButtons(options=[("yes", 1), ("no", 0)]),
                        widgets.Text(placeholder="<x>")])
    text = static_html(box)
    assert "<i>question</i>" in text and "<button disabled>yes</button>" in text and 'placeholder="&lt;x&gt;"' in text
    from symsgd_jupyter.answer_box import AnswerBox

    text = static_html(AnswerBox(placeholder="a number"))  # a Check-yourself text box: its input and its button
    assert 'placeholder="a number"' in text and "disabled" in text and "<button disabled>Check</button>" in text


def test_worked_solutions_become_details_and_the_instructor_edition_opens_them(monkeypatch):
    from symsgd_core import balance
    from symsgd_core.lesson.exercise_panel import ExercisePanel
    from tools.site.edition import build as site_build
    from tools.site.edition.capture import static_html

    closed = static_html(ExercisePanel(balance.EXERCISES).root)
    assert closed.count('<details class="edition-worked">') == len(balance.EXERCISES)
    assert "Show worked solution" in closed
    opened = static_html(ExercisePanel(balance.EXERCISES, solutions=True).root)
    assert opened.count('<details class="edition-worked" open>') == len(balance.EXERCISES)
    calls = []
    monkeypatch.setattr(site_build, "build", lambda out, notebooks, jobs: calls.append(notebooks))
    monkeypatch.delenv("SYMSGD_SOLUTIONS", raising=False)
    assert site_build.main(["--solutions", "--only", "00", "--out", "/tmp/unused-site"]) == 0
    import os

    assert calls and os.environ.pop("SYMSGD_SOLUTIONS") == "open"  # the executing kernels inherit it


def test_the_instructor_edition_keeps_a_predict_first_solution_closed(monkeypatch):
    """The static page has no cover (its figures are shown) and no kernel to reveal them: in the instructor edition
    the worked solution of a prediction stays a closed <details>, the other panels' open."""
    import IPython

    from symsgd_core import rank_jumps
    from symsgd_core.lesson import reveal_after
    from symsgd_core.lesson.exercise_panel import ExercisePanel
    from tools.site.edition.capture import static_html

    monkeypatch.setenv("SYMSGD_SOLUTIONS", "open")
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    predict = ExercisePanel({"predict_sgd_end": rank_jumps.EXERCISES["predict_sgd_end"]})
    section_9 = ExercisePanel({n: rank_jumps.EXERCISES[n] for n in rank_jumps.exercises.SECTION_9})
    reveal_after(predict, "GD : stays at rank 2")  # covered text is enough to make the panel predict-first
    assert static_html(predict.root).count("<details class=\"edition-worked\">") == 1
    assert "<details class=\"edition-worked\" open>" not in static_html(predict.root)
    opened = static_html(section_9.root)
    assert opened.count("<details class=\"edition-worked\" open>") == len(rank_jumps.exercises.SECTION_9)


def test_the_capture_opens_the_solutions_of_a_panel_in_the_last_cell_first(monkeypatch, tmp_path):
    """In a kernel an instructor panel opens its solutions after the next cell; for the notebook's last cell that is
    the capture's own: the capture decides first, so the instructor edition shows them open (a predict-first panel's
    stay closed)."""
    import IPython
    from IPython.core.events import EventManager, available_events

    from symsgd_core import balance, rank_jumps
    from symsgd_core.lesson import reveal_after
    from symsgd_core.lesson.exercise_panel import ExercisePanel

    shell = type("Shell", (), {})()
    shell.events = EventManager(shell, available_events)
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    monkeypatch.setenv("SYMSGD_SOLUTIONS", "open")
    predict = ExercisePanel({"predict_sgd_end": rank_jumps.EXERCISES["predict_sgd_end"]})
    reveal_after(predict, "GD : stays at rank 2")
    last = ExercisePanel({"balance_rate": balance.EXERCISES["balance_rate"]})
    shell.events.trigger("post_run_cell", None)  # the notebook's last cell ends; no loop here to wait on
    out = tmp_path / "capture.json"
    capture([predict.root.model_id, last.root.model_id], str(out), 10**6)
    data = json.loads(out.read_text())["outputs"]
    assert '<details class="edition-worked" open>' in data[last.root.model_id]["html"]
    assert '<details class="edition-worked">' in data[predict.root.model_id]["html"]
    assert "open>" not in data[predict.root.model_id]["html"]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_a_selection_control_shows_the_label_of_its_option_also_at_the_first_one(index):
    """ipywidgets leaves ``label`` empty for a SelectionSlider built at its first option; the settings line must still
    read that option's label (notebook 05's once read "setting ."), and a plain slider its value."""
    from tools.site.edition.capture import controls_of, shown_value

    options = [("η = 0.3, γ = 0.027", "a"), ("η = 0.3, γ = 0.02", "b"), ("η = 0.2, γ = 0.027", "c")]
    sel = widgets.SelectionSlider(options=options, value=options[index][1], description="setting")

    class Ctl:
        controls = {"setting": sel, "lr": widgets.FloatSlider(value=0.25, min=0.0, max=1.0, description="η")}

    assert shown_value(sel) == options[index][0]
    rows = controls_of(Ctl(), ["setting"])
    assert [r["shown"] for r in rows] == [options[index][0], shown_value(Ctl.controls["lr"])]
    assert rows[1]["shown"] and rows[1]["shown"] != options[index][0]
