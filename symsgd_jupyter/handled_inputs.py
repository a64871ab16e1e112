"""When has the kernel handled a reader's input? A count a browser test can wait on instead of a fixed time.

Every widget figure counts each input of its page (a slider moved, a button pressed) once the kernel has handled
it: :func:`watch_inputs` registers the count after the figure's own handlers, so by then the figure's update has
been sent to the page. Only where the kernel's environment sets :data:`SHOW_HANDLED_ENV` to 1 (the browser suite's
servers do) does the figure's root widget carry the count as the class ``symsgd-handled-<n>``
(:func:`show_count`); a reader's page gets no such class and no extra widget message per input.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import ipywidgets as widgets

__all__ = ["HANDLED_CLASS_PREFIX", "SHOW_HANDLED_ENV", "handled_inputs_shown", "show_count", "watch_inputs"]

#: Prefix of the root widget's class that counts the inputs the kernel has handled.
HANDLED_CLASS_PREFIX = "symsgd-handled-"
#: Environment variable of the kernel that shows that count in the page (set by the browser suite's servers only):
#: a test protocol, so a reader's page does not carry it.
SHOW_HANDLED_ENV = "SYMSGD_SHOW_HANDLED_INPUTS"

#: Value widgets the kernel changes itself (not inputs of a reader).
_OUTPUT_WIDGETS = (widgets.IntProgress, widgets.FloatProgress, widgets.HTML, widgets.HTMLMath, widgets.Label,
                   widgets.Valid)


def handled_inputs_shown(environ=None) -> bool:
    """Whether this kernel shows each figure's handled-input count in the page (:data:`SHOW_HANDLED_ENV` is 1)."""
    return (os.environ if environ is None else environ).get(SHOW_HANDLED_ENV, "").strip() == "1"


def watch_inputs(root: widgets.Widget, handled: Callable[[], None], skip=()) -> None:
    """Call ``handled()`` after every input of a reader to ``root`` or a widget inside it: a button's click, a
    value widget's change (not the widgets the kernel changes itself: progress bars, HTML, labels). Register it
    after the figure's own handlers, so it runs after them. ``skip``: widgets that count their input themselves
    (e.g. once a re-simulation has drawn it)."""
    skipped = set(map(id, skip))
    stack = [root]
    while stack:
        w = stack.pop()
        stack.extend(getattr(w, "children", ()))
        if id(w) in skipped:
            continue
        if isinstance(w, widgets.Button):
            w.on_click(lambda _button: handled())
        elif isinstance(w, widgets.ValueWidget) and not isinstance(w, _OUTPUT_WIDGETS):
            w.observe(lambda _change: handled(), names="value")


def show_count(root: widgets.Widget, count: int) -> None:
    """Where :func:`handled_inputs_shown`, give ``root`` the class ``symsgd-handled-<count>`` (replacing the last)."""
    if handled_inputs_shown():
        kept = [c for c in root._dom_classes if not c.startswith(HANDLED_CLASS_PREFIX)]
        root._dom_classes = (*kept, f"{HANDLED_CLASS_PREFIX}{count}")
