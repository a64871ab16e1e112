"""Predict first: a figure (and the numbers that go with it) covered until the reader has committed to a prediction.

A notebook asks the reader to predict, in a "Check yourself" panel (:class:`~.exercise_panel.ExercisePanel`), what a
figure just below will show; :func:`reveal_after` shows the figure **covered**::

    predict = ExercisePanel({"predict_sgd_end": rank_jumps.EXERCISES["predict_sgd_end"]})
    reveal_after(predict, TrapController())  # the controller's figures and status line covered, its controls not
    reveal_after(predict, "GD : ...")        # text that names the answer (run counts, …), covered the same way
    reveal_after(predict, claims)            # claims (CheckResult rows): asserted now, their claims line covered

Everything covered after one panel is revealed together, for good, once the panel judges an answer (right or wrong:
a first wrong try gets the hint, and the figure is there to look at), the reader presses **Show the result** on a
cover, or redraws the covered figure (its Run button, or a control of a figure that redraws live). In the instructor
variant (``make instructor``) the panel's worked solutions stay closed until then, and open at the reveal
(:meth:`ExercisePanel.hold_solutions`); the reader can still open one with its button.

How it is covered, the same in JupyterLab and in classroom mode (Voilà), with widget layouts only (no CSS to load):
the figures stay in the page and are drawn at their size (plotly lays out a figure in a ``visibility: hidden`` box
correctly, but not in a ``display: none`` one), inside a grid cell shared with the prompt, which sits over them;
the figures' box and the status line are ``visibility: hidden`` (invisible to screen readers too) until revealed.
The controller is untouched otherwise (its ``result`` computed, its root the one :meth:`Controller.view` built, class
``symsgd-covered`` while covered). The static edition (no kernel to check answers) shows the figures, no prompt.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from symsgd_jupyter.compact_output import compact_html
from symsgd_jupyter.mode import classroom_mode

from ..core.checking import CheckResult, claims_html
from ..ui.base import Controller
from ..ui.style import NEUTRALS
from .claims_cell import passed_claims
from .exercise_panel import ExercisePanel

__all__ = ["COVERED_CLASS", "PROMPT", "PROMPT_CLASS", "PROMPT_TEXT", "REVEAL", "Reveal", "reveal_after"]

#: The button that reveals without answering.
REVEAL = "Show the result"
#: What a covered figure says.
PROMPT = f"Predict first: answer the question above (Check), or press “{REVEAL}”."
#: What covered text says.
PROMPT_CLAIMS = (f"The claims checked here name the answer: they appear once you answer the question above (Check), "
                 f"or press “{REVEAL}”. (They have passed.)")
PROMPT_TEXT = (f"These numbers give the answer away: they appear once you answer the question above (Check), or "
               f"press “{REVEAL}”.")
#: CSS class of a controller's root while its figures are covered.
COVERED_CLASS = "symsgd-covered"
#: CSS class of a cover's prompt (its text and its button).
PROMPT_CLASS = "symsgd-cover-prompt"


class Reveal:
    """The reveal state of one prediction ``panel``, shared by everything :func:`reveal_after` covered after it:
    ``revealed`` (for good) and ``buttons``, the "Show the result" button of each cover."""

    def __init__(self, panel: ExercisePanel) -> None:
        self.panel = panel
        self.revealed = False
        self.buttons: list[widgets.Button] = []
        self._reveal_actions: list = [panel.release_solutions]
        panel.hold_solutions()  # instructor variant: the worked solution would give the prediction away
        panel.on_submit(lambda _box, _feedback: self.reveal())

    @classmethod
    def of(cls, panel: ExercisePanel) -> Reveal:
        """The panel's reveal state (made at the first call)."""
        state = getattr(panel, "_reveal_state", None)
        if state is None:
            state = panel._reveal_state = cls(panel)
        return state

    def reveal(self) -> None:
        """Uncover everything covered after the panel (nothing happens when already revealed)."""
        actions, self._reveal_actions = self._reveal_actions, []
        self.revealed = True
        for action in actions:
            action()

    def _when_revealed(self, action) -> None:
        """Run ``action`` at the reveal (at once when already revealed)."""
        if self.revealed:
            action()
        else:
            self._reveal_actions.append(action)

    def prompt(self, text: str, over: bool = False) -> widgets.Box:
        """The prompt of a cover: ``text`` and a "Show the result" button (class :data:`PROMPT_CLASS`); ``over``:
        laid over the covered figures (the cover's single grid cell), else a row of its own."""
        button = widgets.Button(description=REVEAL, icon="eye",
                                tooltip="show the figure and its numbers without answering",
                                layout=widgets.Layout(width="auto", min_width="fit-content"))
        button.on_click(lambda _b: self.reveal())
        self.buttons.append(button)
        layout = widgets.Layout(border=f"2px dashed {NEUTRALS['grey_mid']}", padding="8px 16px", width="auto",
                                align_items="flex-start", visibility="visible", margin="4px 0")
        if over:  # near the top of the figures' space, centred, over them
            layout.grid_area, layout.align_self, layout.margin = "1 / 1 / 2 / 2", "flex-start", "48px 0 0 0"
        box = widgets.VBox([widgets.HTML(f"<b>{html.escape(text)}</b>"), button], layout=layout)
        box.add_class(PROMPT_CLASS)
        return box

    # -- what can be covered: a controller, text, claims --------------------------------------------------------
    def cover_controller(self, controller: Controller) -> widgets.Widget:
        """``controller``'s root widget with its figures and status line covered (see the module docstring)."""
        root = controller.view()
        if getattr(controller, "_cover", None) is not None:  # already covered (a cell run twice)
            return root
        figures = {id(f) for f in controller.figures}

        def holds_figure(w) -> bool:
            return id(w) in figures or any(holds_figure(c) for c in getattr(w, "children", ()) or ())

        children = list(root.children)
        held = [c for c in children if holds_figure(c)]
        if not held:
            raise ValueError(f"{type(controller).__name__} shows no figure to cover")
        area = widgets.VBox(held, layout=widgets.Layout(grid_area="1 / 1 / 2 / 2", width="100%", visibility="hidden"))
        prompt = self.prompt(PROMPT, over=True)
        cover = widgets.GridBox([area, prompt], layout=widgets.Layout(
            grid_template_columns="minmax(0, 1fr)", grid_template_rows="auto", justify_items="center", width="100%"))
        cover.add_class("symsgd-cover")
        first = children.index(held[0])
        root.children = [*children[:first], cover, *[c for c in children[first:] if c not in held]]
        # the status line and the figures' text alternatives (symsgd_jupyter/describe.py) state the finding: hidden
        # from screen readers too
        hidden = [controller.status, *getattr(controller, "_alts", ())]
        for w in hidden:
            w.layout.visibility = "hidden"
        root.add_class(COVERED_CLASS)
        controller._cover = cover

        def uncover() -> None:
            for w in (area, *hidden):
                w.layout.visibility = None
            prompt.layout.display = "none"
            root.remove_class(COVERED_CLASS)

        # the reader's own use of the figure redraws it: show it. A re-simulating figure redraws on Run (its sliders
        # only choose the next run's settings), a live one on every control. The status line changes at the start
        # of every redraw ("Computing…" first for a re-simulating figure), so the page shows that too.
        controls = [w for w in controller.controls.values() if isinstance(w, widgets.ValueWidget)]
        for w in [controller.status, *(controls if controller.live else ())]:
            w.observe(lambda _change: self.reveal(), names="value")
        button = getattr(controller, "run_button", None)
        if isinstance(button, widgets.Button):
            button.on_click(lambda _b: self.reveal())
        self._when_revealed(uncover)
        return root

    def cover_html(self, shown: str, prompt_text: str) -> widgets.Widget:
        """HTML ``shown`` behind a prompt ``prompt_text`` until the reveal (class ``symsgd-covered-text``)."""
        body = widgets.HTML(shown, layout=widgets.Layout(display="none"))
        prompt = self.prompt(prompt_text)
        box = widgets.VBox([prompt, body])
        box.add_class("symsgd-covered-text")

        def uncover() -> None:
            body.layout.display = None
            prompt.layout.display = "none"

        self._when_revealed(uncover)
        return box

    def cover_text(self, text: str) -> widgets.Widget:
        """``text`` (printed lines) covered until the reveal; then it reads as printed text does: in full in
        JupyterLab, one compact line in classroom mode (:func:`~symsgd_jupyter.compact_output.compact_html`)."""
        shown = compact_html(text) if classroom_mode() else f'<pre class="symsgd-printed">{html.escape(text)}</pre>'
        return self.cover_html(shown, PROMPT_TEXT)

    def cover_claims(self, results) -> widgets.Widget:
        """Claims (``CheckResult`` rows) asserted now, as ``assert_claims`` does, and shown as its compact claims
        line once revealed: the table behind it names the measured answer (how many runs jumped, the basin edge …)."""
        return self.cover_html(claims_html(passed_claims(results)), PROMPT_CLAIMS)


def reveal_after(panel: ExercisePanel, item) -> widgets.Widget:
    """Show ``item`` covered until the reader has answered ``panel``, the prediction's "Check yourself" panel
    displayed above (or pressed "Show the result"). ``item``: a :class:`~symsgd_core.ui.base.Controller`, text (lines
    that name the answer) or a list of claims (see the module docstring). Returns the widget to display (a cell's
    last value): for a controller, its root widget."""
    state = Reveal.of(panel)
    if isinstance(item, Controller):
        return state.cover_controller(item)
    if isinstance(item, str):
        return state.cover_text(item)
    if isinstance(item, (list, tuple)) and all(isinstance(r, CheckResult) for r in item):
        return state.cover_claims(item)
    raise TypeError(f"reveal_after covers a Controller, text or a list of claims, not {type(item).__name__}")
