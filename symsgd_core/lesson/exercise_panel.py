"""The "Check yourself" panel: a notebook's exercises as widgets that work in classroom mode too.

:class:`ExercisePanel` shows one :class:`ExerciseBox` per exercise: the question, an input (a text box, option
buttons, or — for an exercise whose answer is a Python function — a formula box), a **Check** button, the
feedback, and a **Show worked solution** button that reveals the derivation (``Exercise.worked``, Markdown with
``$…$`` math, typeset by MathJax in JupyterLab and in classroom mode alike). The checker runs in the kernel when
the reader presses Check (or Enter in a text box), so the panel works in classroom mode (Voilà), where no code
cell can be edited. The exercises themselves (:class:`~symsgd_core.core.exercises.Exercise`) live in each
topic's ``exercises`` module.

How a wrong answer is answered (so that a first try never gives the answer away):

* an input that is not a number (or a vector, or a formula) at all gets the format message; it is not a try;
* the **first** wrong try shows "✘ not quite" and only the exercise's ``hint`` (never the checker's message,
  which may name the right value), and offers the worked solution;
* from the **second** wrong try on, the checker's own message (which may name the typical mistake).

An empty ``hint`` falls back to a generic nudge; an empty ``worked`` falls back to the right answer with the
checker's explanation of it. In the instructor variant (:func:`symsgd_jupyter.mode.solutions_open`, set by
``make instructor``) every worked solution is shown open, except a predict-first one: the solution of a panel whose
figure :func:`~symsgd_core.lesson.reveal.reveal_after` covers stays closed until that figure is revealed (on a
projector it would give the prediction away). So that it is never shown open for a moment first, a panel built in a
kernel opens its solutions only once the cell after its own has run (by then ``reveal_after`` has claimed it), or,
in the notebook's last cell, once the kernel has waited :data:`OPEN_AFTER_IDLE_S` for a next cell.

Exercises whose answer is a Python function (kind ``"code"``) take a formula in the arguments in the panel,
parsed safely by :func:`symsgd_core.core.expressions.compile_expression` (never ``eval``), so they can be
answered in classroom mode too; in JupyterLab the notebooks also keep a code cell per exercise:
``panel.answer(name, value)`` checks ``value`` there and shows nothing while it is ``None``.
"""

from __future__ import annotations

import contextlib
import html
import inspect
import re
import weakref
from collections.abc import Iterable, Mapping

import ipywidgets as widgets

from symsgd_jupyter.a11y import accessible_names
from symsgd_jupyter.answer_box import AnswerBox
from symsgd_jupyter.kernel import install
from symsgd_jupyter.mode import solutions_open

from ..core.exercises import Exercise, Feedback, as_number, as_vector
from ..core.expressions import ExpressionError, compile_expression
from ..core.validation import check_choice

__all__ = ["ExerciseBox", "ExercisePanel", "markdown_html", "settle_waiting_panels"]

_PLACEHOLDER = {"number": "a number, e.g. 0.25 or 1/4", "vector": "numbers separated by commas, e.g. 1, 0"}
#: What the reader is told with a first wrong try when the exercise has no hint.
GENERIC_HINT = "check each step of your computation once more, or open the worked solution below."
#: Added to the feedback of every wrong try: where the derivation is.
OFFER = " (The worked solution is one click away: “Show worked solution”.)"
SHOW, HIDE = "Show worked solution", "Hide worked solution"
#: Seconds an instructor-variant panel's kernel waits, idle, for the next cell before it opens the panel's worked
#: solutions (that cell may make the panel predict-first); Voilà starts the next cell within milliseconds, and a cell
#: holds the kernel's event loop until it has run, so only a panel in the last cell waits this long.
OPEN_AFTER_IDLE_S = 1.0


#: Instructor-variant panels still waiting for the next cell to decide whether to open their solutions.
_WAITING: weakref.WeakSet = weakref.WeakSet()


def settle_waiting_panels() -> int:
    """Decide now for every panel still waiting for a next cell (:meth:`ExercisePanel._open_after_next_cell`): open
    its worked solutions unless it is predict-first. For code that reads the panels in the cell after the notebook's
    last one (the static edition's capture, ``tools/site/edition/capture.py``). Returns how many were waiting."""
    waiting = list(_WAITING)
    for panel in waiting:
        panel._settle()
    return len(waiting)


def _call_later(delay_s: float, action):
    """Run ``action`` after ``delay_s`` seconds on the kernel's event loop; the handle (``cancel()``), or ``None``
    when no loop runs here (then the panel opens its solutions after the next cell only)."""
    import asyncio

    try:
        return asyncio.get_running_loop().call_later(delay_s, action)
    except RuntimeError:
        return None

_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$", re.S)


def markdown_html(text: str) -> str:
    """``text`` (Markdown with ``$…$`` / ``$$…$$`` math) as HTML for an ``HTMLMath`` widget.

    The math is cut out first and put back verbatim (HTML-escaped) so Markdown never touches its ``_`` or
    ``\\``; raw HTML in ``text`` is escaped, not rendered.
    """
    import mistune

    pieces: list[str] = []

    def keep(match: re.Match) -> str:
        pieces.append(match.group(0))
        return f"SYMSGDMATH{len(pieces) - 1}X"

    body = mistune.create_markdown(escape=True, plugins=["table"])(_MATH.sub(keep, text or ""))
    return re.sub(r"SYMSGDMATH(\d+)X", lambda m: html.escape(pieces[int(m.group(1))], quote=False), body)


def _formula_arguments(exercise: Exercise) -> tuple[str, ...]:
    """The argument names a kind-"code" exercise's function takes (from its ``solution``'s signature)."""
    try:
        params = inspect.signature(exercise.solution).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


class ExerciseBox:
    """The widgets of one exercise (in ``root``, a VBox with CSS class ``symsgd-exercise``).

    Attributes:
        input: an :class:`~symsgd_jupyter.answer_box.AnswerBox` (kinds "number" and "vector", and "code": a
            formula), a text input with its own Check button that sends the text with the submission (Check or
            Enter; leaving the box submits nothing), or ``ToggleButtons`` (kind "choice").
        button: the Check button of a "choice" exercise; ``None`` for a typed answer (its Check button is part
            of ``input``). :meth:`submit` checks either way.
        feedback: an ``HTML`` widget showing the last :class:`Feedback` (empty before the first check).
        reveal: the "Show worked solution" ``ToggleButton`` (``value`` True while the solution is shown).
        worked: the ``HTMLMath`` widget holding the worked solution (hidden until revealed).
        tries: wrong tries so far (answers that could be read but were wrong).
        last: the last :class:`Feedback` the checker gave (``None`` before the first check); what is *shown*
            after a first wrong try is the hint, in ``feedback``.
    """

    def __init__(self, exercise: Exercise, number: int) -> None:
        self.exercise = exercise
        self.last: Feedback | None = None
        #: the :class:`Feedback` shown last (``None`` before the first check)
        self.last_shown: Feedback | None = None
        self.tries = 0
        self.arguments = _formula_arguments(exercise) if exercise.kind == "code" else ()
        self._submitted: list = []  # callbacks of on_submit
        self.question = widgets.HTML(f"<b>{number}.</b> {html.escape(exercise.question)}")
        self.feedback = widgets.HTML("")
        self.feedback.add_class("symsgd-feedback-area")
        label = f"Exercise {number}: your answer"
        if exercise.kind == "choice":
            self.input = widgets.ToggleButtons(options=list(exercise.options), value=None,
                                               tooltips=[f"answer: {lbl}" for lbl, _v in exercise.options],
                                               style={"button_width": "auto"})
            self.input.observe(self._on_choice, names="value")
        else:
            if exercise.kind == "code":
                args = ", ".join(self.arguments)
                placeholder = f"a formula in {args}, e.g. 2*sin({self.arguments[0]})" if self.arguments else "a formula"
            else:
                placeholder = _PLACEHOLDER[exercise.kind]
            self.input = AnswerBox(placeholder=placeholder, description="Your answer:", label=label,
                                   tooltip=f"check your answer to exercise {number}")
            self.input.on_submit(lambda _text: self.check())  # Check or Enter: the submitted text, once
        self.button = None
        if exercise.kind == "choice":
            self.button = widgets.Button(description="Check", icon="check", button_style="primary",
                                         tooltip=f"check your answer to exercise {number}",
                                         layout=widgets.Layout(width="auto"))
            self.button.on_click(lambda _b: self.check())
        self.reveal = widgets.ToggleButton(value=False, description=SHOW, icon="lightbulb-o",
                                           tooltip=f"show or hide the worked solution of exercise {number}",
                                           layout=widgets.Layout(width="auto"))
        self.reveal.add_class("symsgd-reveal")
        self.worked = widgets.HTMLMath("", layout=widgets.Layout(display="none"))
        self.worked.value = ('<div class="symsgd-worked-body"><b>Worked solution.</b> '
                             + markdown_html(self.worked_markdown()) + "</div>")
        self.worked.add_class("symsgd-worked")
        self.reveal.observe(self._on_reveal, names="value")
        rows = [self.question]
        if exercise.kind == "code":
            rows.append(widgets.HTML(f"<i>{html.escape(self._code_note())}</i>"))
        controls = [self.input, self.button, self.reveal] if self.button is not None else [self.input, self.reveal]
        rows += [widgets.HBox(controls, layout=widgets.Layout(flex_flow="row wrap")),
                 self.feedback, self.worked]
        self.root = widgets.VBox(rows)
        self.root.add_class("symsgd-exercise")

    # -- the reader's answer --------------------------------------------------
    def _code_note(self) -> str:
        args = ", ".join(self.arguments)
        return (f"This one asks for a function f({args}): type its formula in the box (Python syntax: + − * / ** @, "
                f".T for the transpose, sin, exp, sqrt, …; for example ({args}) ↦ …), or, in JupyterLab, define it "
                f"in the code cell below the panel.")

    def value(self):
        """The answer in the input (``None`` when empty or nothing is picked); for kind "code" the formula's text."""
        value = self.input.value
        if isinstance(value, str):
            value = value.strip()
            return value or None
        return value

    def _unreadable(self, answer) -> Feedback | None:
        """The format message for an answer that cannot be read at all (not a try), else ``None``."""
        if answer is None:
            return None
        kind = self.exercise.kind
        if kind == "number" and as_number(answer) is None:
            return self.exercise.check(answer)
        if kind == "vector" and as_vector(answer) is None:
            return self.exercise.check(answer)
        return None

    def _as_function(self, text: str):
        """A kind-"code" answer typed as a formula: the compiled function, or the Feedback saying why not."""
        try:
            return compile_expression(text, self.arguments)
        except ExpressionError as exc:
            return Feedback("wrong", f"this formula cannot be used: {exc}.")

    def submit(self, answer=None) -> Feedback:
        """Submit as the reader does: for a typed answer, the text ``answer`` (default: the box's text) with Check
        or Enter; for a choice, pick ``answer`` (unless None) and press Check. Returns the :class:`Feedback` shown."""
        if isinstance(self.input, AnswerBox):
            self.input.submit(answer)
        else:
            if answer is not None:
                self.input.value = answer
            self.check()
        return self.last_shown

    def check(self) -> Feedback:
        """Check the current input and show the verdict (what the Check button and Enter do)."""
        answer = self.value()
        if self.exercise.kind == "code" and isinstance(answer, str):
            answer = self._as_function(answer)
            if isinstance(answer, Feedback):
                return self._show(answer)
        return self.verdict(answer)

    def verdict(self, answer) -> Feedback:
        """Check ``answer`` and show the verdict the way the module docstring says (hint first).

        Returns the :class:`Feedback` shown (after a first wrong try: the hint); the checker's own verdict is
        kept in :attr:`last`.
        """
        unreadable = self._unreadable(answer)
        if unreadable is not None:
            return self._show(unreadable)
        feedback = self.exercise.check(answer)
        self.last = feedback
        if feedback.status != "wrong":
            shown = self._show(feedback)
        else:
            self.tries += 1
            if self.tries == 1:
                shown = Feedback("wrong", (self.exercise.hint.strip() or GENERIC_HINT) + OFFER)
            else:
                shown = Feedback("wrong", feedback.message + OFFER)
            self.reveal.button_style = "info"  # offered: the button stands out after a wrong try
            shown = self._show(shown)
        for callback in list(self._submitted):
            callback(self, feedback)
        return shown

    def on_submit(self, callback) -> None:
        """Call ``callback(box, feedback)`` after each answer that was judged, right or wrong (Check, Enter, or
        :meth:`ExercisePanel.answer`); an input that cannot be read at all is not an answer and calls nothing.
        ``feedback`` is the checker's own verdict (:attr:`last`)."""
        self._submitted.append(callback)

    def show(self, feedback: Feedback) -> Feedback:
        """Show ``feedback`` under the question as it is (the code-cell path uses :meth:`verdict`)."""
        self.last = feedback
        return self._show(feedback)

    def _show(self, feedback: Feedback) -> Feedback:
        self.feedback.value = feedback._repr_html_()
        self.last_shown = feedback
        return feedback

    # -- the worked solution --------------------------------------------------
    def worked_markdown(self) -> str:
        """The worked solution as Markdown: ``exercise.worked``, or (when it is empty) the answer and the
        checker's explanation of it."""
        if self.exercise.worked.strip():
            return self.exercise.worked
        explanation = self.exercise.check(self.exercise.solution).message if self.exercise.solution is not None else ""
        answer = "" if self.exercise.kind == "code" or self.exercise.solution is None else \
            f"**Answer:** {html.escape(str(self._solution_text()))}. "
        return (answer + explanation) or "No worked solution has been written for this exercise yet."

    def _solution_text(self) -> str:
        sol = self.exercise.solution
        if self.exercise.kind == "choice":
            return next((lbl for lbl, v in self.exercise.options if v == sol), str(sol))
        if isinstance(sol, (tuple, list)):
            return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in sol)
        return f"{sol:g}" if isinstance(sol, float) else str(sol)

    @property
    def solution_shown(self) -> bool:
        """True while the worked solution is revealed."""
        return bool(self.reveal.value)

    def show_solution(self, shown: bool = True) -> None:
        """Reveal (or hide) the worked solution, as the button does."""
        self.reveal.value = bool(shown)

    def _on_reveal(self, change) -> None:
        if change["new"]:
            self.worked.layout.display = None
            self.reveal.description = HIDE
        else:
            self.worked.layout.display = "none"
            self.reveal.description = SHOW

    # -- events ---------------------------------------------------------------
    def _on_choice(self, _change) -> None:  # a new pick invalidates the verdict on the old one
        self.last = None
        self.feedback.value = ""


class ExercisePanel:
    """The exercises of a notebook as one widget panel (``root``: a VBox with CSS class ``symsgd-exercises``).

    Args:
        exercises: a mapping name → :class:`Exercise` (a module's ``EXERCISES``) or an iterable of them,
            shown in order and numbered from 1.
        solutions: show every worked solution open (the instructor variant); default: the environment decides
            (:func:`symsgd_jupyter.mode.solutions_open`), and in a kernel they open once the next cell has run, or
            the kernel has waited :data:`OPEN_AFTER_IDLE_S` for one (see the module docstring). A predict-first
            panel (:meth:`hold_solutions`) keeps them closed either way until :meth:`release_solutions`.

    Attributes:
        instructor: True in the instructor variant (the worked solutions are to be shown open).
        predict_first: True once :meth:`hold_solutions` was called (by ``reveal_after``) and until the release.
    """

    def __init__(self, exercises: Mapping[str, Exercise] | Iterable[Exercise], *,
                 solutions: bool | None = None) -> None:
        install()  # the kernel's plumbing, on first use (see symsgd_jupyter/kernel.py)
        names = accessible_names()  # first: its code loads in the page before the answer boxes' (a11y.js)
        items = list(exercises.values()) if isinstance(exercises, Mapping) else list(exercises)
        self.boxes: dict[str, ExerciseBox] = {}
        for i, ex in enumerate(items, start=1):
            if ex.name in self.boxes:
                raise ValueError(f"two exercises are named {ex.name!r}")
            self.boxes[ex.name] = ExerciseBox(ex, i)
        self.instructor = solutions_open() if solutions is None else bool(solutions)
        self.predict_first = False
        self.root = widgets.VBox([*(b.root for b in self.boxes.values()), names])
        self.root.add_class("symsgd-exercises")
        if self.instructor:
            if solutions is None:
                self._open_after_next_cell()
            else:
                self.show_solutions(True)

    # -- the instructor variant ------------------------------------------------
    def _open_after_next_cell(self) -> None:
        """Open the worked solutions once the next cell has run, or once the kernel has waited
        :data:`OPEN_AFTER_IDLE_S` for one (the panel in the notebook's last cell), unless the panel is predict-first by
        then: the page never shows a predict-first solution open. Outside a kernel: at once."""
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None or not hasattr(shell, "events"):
            self.show_solutions(not self.predict_first)
            return
        state: dict = {"cells": 0, "timer": None}

        def stop_waiting() -> None:
            if state["timer"] is not None:
                state["timer"].cancel()
                state["timer"] = None

        def done() -> None:
            stop_waiting()
            _WAITING.discard(self)
            for event, callback in (("pre_run_cell", before), ("post_run_cell", after)):
                with contextlib.suppress(ValueError):  # already unregistered
                    shell.events.unregister(event, callback)
            if not self.predict_first:
                self.show_solutions(True)

        def before(_info=None) -> None:  # a next cell starts: decide when it has run
            stop_waiting()

        def after(_result=None) -> None:
            state["cells"] += 1
            if state["cells"] >= 2:  # the next cell has run: a reveal_after in it has claimed the panel by now
                done()
            else:  # the panel's own cell: wait for the next one, but not for ever (it may be the last cell)
                state["timer"] = _call_later(OPEN_AFTER_IDLE_S, done)

        self._settle = done
        _WAITING.add(self)
        shell.events.register("pre_run_cell", before)
        shell.events.register("post_run_cell", after)

    def hold_solutions(self) -> None:
        """Make the panel predict-first: its worked solutions closed (also in the instructor variant) until
        :meth:`release_solutions`; ``reveal_after`` calls it for the panel whose figure it covers."""
        self.predict_first = True
        self.show_solutions(False)

    def release_solutions(self) -> None:
        """The figure was revealed: in the instructor variant the worked solutions open now (else they stay as the
        reader left them)."""
        if not self.predict_first:
            return
        self.predict_first = False
        if self.instructor:
            self.show_solutions(True)

    def __getitem__(self, name: str) -> ExerciseBox:
        """The box of exercise ``name`` (ValueError naming the exercises if there is none)."""
        return self.boxes[check_choice("exercise name", name, self.boxes)]

    def on_submit(self, callback) -> None:
        """Call ``callback(box, feedback)`` after each judged answer to any of the panel's exercises (see
        :meth:`ExerciseBox.on_submit`); a figure covered by :func:`symsgd_core.lesson.reveal.reveal_after` uses it."""
        for box in self.boxes.values():
            box.on_submit(callback)

    def show_solutions(self, shown: bool = True) -> None:
        """Reveal (or hide) every worked solution."""
        for box in self.boxes.values():
            box.show_solution(shown)

    def answer(self, name: str, answer) -> Feedback | None:
        """The code-cell path (JupyterLab): check ``answer`` to exercise ``name`` and show it in the panel too.

        Returns ``None`` while ``answer`` is ``None``, so an unanswered code cell shows nothing (also in
        classroom mode, where Voilà runs these cells); otherwise the :class:`Feedback`, which the cell
        displays: the same as the panel shows, so a first wrong try gets the hint, not the answer.
        """
        box = self[name]
        if answer is None:
            return None
        return box.verdict(answer)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.root)
