"""The "Check yourself" panel: a notebook's exercises as widgets that work in classroom mode too.

:class:`ExercisePanel` shows one :class:`ExerciseBox` per exercise (question, input box or buttons, a Check
button, the feedback). The checker runs in the kernel when the reader presses Check (or Enter in a text
box), so the panel works in classroom mode (Voilà), where no code cell can be edited. The exercises
themselves (:class:`~symsgd_core.core.exercises.Exercise`) live in each topic's ``exercises`` module.

Exercises whose answer is a Python function (kind ``"code"``) are answered in a code cell in JupyterLab; the
panel shows them with a note saying so. The notebooks keep a code cell per exercise for readers in JupyterLab:
``panel.answer(name, value)`` checks ``value`` there and shows nothing while it is ``None``.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping

import ipywidgets as widgets

from ..core.exercises import Exercise, Feedback
from ..core.validation import check_choice

__all__ = ["ExerciseBox", "ExercisePanel"]

_PLACEHOLDER = {"number": "a number, e.g. 0.25 or 1/4", "vector": "numbers separated by commas, e.g. 1, 0"}
_CODE_NOTE = ("This one asks for a Python function: answer it in the code cell below the panel, in JupyterLab "
              "(classroom mode has no code cells).")


class ExerciseBox:
    """The widgets of one exercise: question, input, Check button and feedback (in ``root``, a VBox).

    ``input`` is a ``Text`` (kinds "number" and "vector"; Enter checks too), ``ToggleButtons`` (kind
    "choice") or ``None`` (kind "code": a note says to answer in a code cell); ``button`` is ``None`` for
    "code". ``feedback`` is an ``HTML`` widget showing the last :class:`Feedback` (empty before the first check).
    """

    def __init__(self, exercise: Exercise, number: int) -> None:
        self.exercise = exercise
        self.last: Feedback | None = None
        self.question = widgets.HTML(f"<b>{number}.</b> {html.escape(exercise.question)}")
        self.feedback = widgets.HTML("")
        self.input: widgets.Widget | None = None
        self.button: widgets.Button | None = None
        if exercise.kind == "code":
            row = widgets.HTML(f"<i>{html.escape(_CODE_NOTE)}</i>")
        else:
            if exercise.kind == "choice":
                self.input = widgets.ToggleButtons(options=list(exercise.options), value=None,
                                                   style={"button_width": "auto"})
                self.input.observe(self._on_choice, names="value")
            else:
                self.input = widgets.Text(value="", placeholder=_PLACEHOLDER[exercise.kind],
                                          continuous_update=False, layout=widgets.Layout(width="260px"))
                self.input.observe(self._on_enter, names="value")  # Enter (or leaving the box) commits the text
            self.button = widgets.Button(description="Check", icon="check", button_style="primary",
                                         layout=widgets.Layout(width="auto"))
            self.button.on_click(lambda _b: self.check())
            row = widgets.HBox([self.input, self.button])
        self.root = widgets.VBox([self.question, row, self.feedback])
        self.root.add_class("symsgd-exercise")

    def value(self):
        """The answer in the input (``None`` when empty or nothing is picked)."""
        if self.input is None:
            return None
        value = self.input.value
        if isinstance(value, str):
            value = value.strip()
            return value or None
        return value

    def check(self) -> Feedback:
        """Check the current input and show the verdict (what the Check button does)."""
        return self.show(self.exercise.check(self.value()))

    def show(self, feedback: Feedback) -> Feedback:
        """Show ``feedback`` under the question."""
        self.last = feedback
        self.feedback.value = feedback._repr_html_()
        return feedback

    def _on_enter(self, _change) -> None:
        self.check()

    def _on_choice(self, _change) -> None:  # a new pick invalidates the verdict on the old one
        self.last = None
        self.feedback.value = ""


class ExercisePanel:
    """The exercises of a notebook as one widget panel (``root``: a VBox with CSS class ``symsgd-exercises``).

    Args:
        exercises: a mapping name → :class:`Exercise` (a module's ``EXERCISES``) or an iterable of them,
            shown in order and numbered from 1.
    """

    def __init__(self, exercises: Mapping[str, Exercise] | Iterable[Exercise]) -> None:
        items = list(exercises.values()) if isinstance(exercises, Mapping) else list(exercises)
        self.boxes: dict[str, ExerciseBox] = {}
        for i, ex in enumerate(items, start=1):
            if ex.name in self.boxes:
                raise ValueError(f"two exercises are named {ex.name!r}")
            self.boxes[ex.name] = ExerciseBox(ex, i)
        self.root = widgets.VBox([b.root for b in self.boxes.values()])
        self.root.add_class("symsgd-exercises")

    def __getitem__(self, name: str) -> ExerciseBox:
        """The box of exercise ``name`` (ValueError naming the exercises if there is none)."""
        return self.boxes[check_choice("exercise name", name, self.boxes)]

    def answer(self, name: str, answer) -> Feedback | None:
        """The code-cell path (JupyterLab): check ``answer`` to exercise ``name`` and show it in the panel too.

        Returns ``None`` while ``answer`` is ``None``, so an unanswered code cell shows nothing (also in
        classroom mode, where Voilà runs these cells); otherwise the :class:`Feedback`, which the cell displays.
        """
        box = self[name]
        if answer is None:
            return None
        return box.show(box.exercise.check(answer))

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.root)
