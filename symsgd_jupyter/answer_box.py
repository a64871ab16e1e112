"""A text answer and its Check button in one widget: the answer travels with the submission.

With an ipywidgets ``Text`` and a separate ``Button``, a typed answer and the click on Check are two messages. The
front end may hold the text's state update back while an earlier one awaits the kernel, but sends the click at
once, so a fast "type, then Check" can be judged on the old text; and a text box that commits when it loses focus
(``continuous_update=False``) submits once on leaving the box and again on the click, so a reader's first wrong
answer counts twice and the gentle first hint is never seen.

:class:`AnswerBox` draws the input and the Check button itself. Pressing **Check** (click, Space or Enter on the
button) or **Enter** in the input sends one message, ``{"type": "submit", "value": <the text>}``: the kernel judges
exactly the text the reader submitted, once per submission, and leaving the box submits nothing. The box carries
the ipywidgets classes of a text field and a primary button, so it looks like the other controls in JupyterLab
and in classroom pages, and names both for screen readers (``aria-label``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anywidget
import ipywidgets as widgets
import traitlets

__all__ = ["SUBMIT", "AnswerBox"]

#: Type of the message the page sends when the reader submits an answer.
SUBMIT = "submit"

#: The box's ES module (anywidget reads a ``Path``).
_ESM = Path(__file__).with_name("answer_box.js")


class AnswerBox(anywidget.AnyWidget):
    """A text input and a Check button that submit together (see the module docstring).

    Traits: ``value`` (the last submitted text), ``placeholder``, ``description`` (the visible label),
    ``label`` (the input's accessible name), ``tooltip`` (the button's), ``input_width`` (CSS width of the input).
    """

    _esm = _ESM
    value = traitlets.Unicode("").tag(sync=True)
    placeholder = traitlets.Unicode("").tag(sync=True)
    description = traitlets.Unicode("Your answer:").tag(sync=True)
    label = traitlets.Unicode("your answer").tag(sync=True)
    tooltip = traitlets.Unicode("check your answer").tag(sync=True)
    input_width = traitlets.Unicode("220px").tag(sync=True)

    def __init__(self, **kwargs) -> None:
        # as wide as its content in the exercise's row (a fixed-width box would push its button onto a new line)
        kwargs.setdefault("layout", widgets.Layout(width="auto", flex="0 0 auto"))
        super().__init__(**kwargs)
        self._submit_handlers: list[Callable[[str], None]] = []
        self.on_msg(self._on_message)

    def on_submit(self, handler: Callable[[str], None]) -> None:
        """Call ``handler(text)`` on every submission (Check or Enter in the page, or :meth:`submit`)."""
        self._submit_handlers.append(handler)

    def submit(self, text: str | None = None) -> None:
        """Submit ``text`` (default: the current :attr:`value`) as the page does."""
        text = self.value if text is None else str(text)
        self.value = text
        for handler in self._submit_handlers:
            handler(text)

    def _on_message(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("type") == SUBMIT:
            value = content.get("value", "")
            self.submit(value if isinstance(value, str) else str(value))
