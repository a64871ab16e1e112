"""Every slider of every notebook's controller moves its figure, and the same value draws the same figure again.

The browser suite used to check this by pressing arrow keys on one slider per controller in every page and mode
(about 136 full simulations per ``make test``); what it checks is the controller's logic, not the page, so it is
checked here once, for every slider, without a browser. A browser pass still checks that a keyboard move reaches
the kernel (the gallery notebook, ``tests/browser/test_gallery.py``).

One move is one keyboard step (ArrowRight; ArrowLeft at the top of the range), as a reader makes it. Re-simulating
controllers re-run as their Run button does (:func:`move`).
"""

from __future__ import annotations

import json
import math

import ipywidgets as widgets
import pytest
from plotly.utils import PlotlyJSONEncoder
from small_settings import SMALL
from test_ui_style import CLASSES

from symsgd_core.ui.base import slider_names


def one_keyboard_step(widget) -> object:
    """The value one arrow-key press gives: one step up, or one step down at the top of the range."""
    if isinstance(widget, widgets.SelectionSlider):
        options = list(widget.options)
        i = options.index(widget.value)
        return options[i + 1] if i + 1 < len(options) else options[i - 1]
    if isinstance(widget, widgets.FloatLogSlider):
        exponent = math.log(widget.value, widget.base)
        up = exponent + widget.step
        return widget.base ** (up if up <= widget.max + 1e-12 else exponent - widget.step)
    up = widget.value + widget.step
    return up if up <= widget.max else widget.value - widget.step


def figures_data(controller) -> list:
    """Every trace of every figure of ``controller``, as plotly sends it to the page (JSON numbers, so ``1`` and
    ``1.0`` compare equal, as they draw the same)."""
    return json.loads(json.dumps([[t.to_plotly_json() for t in fig.data] for fig in controller.figures],
                                 cls=PlotlyJSONEncoder))


def move(controller, **values) -> None:
    """Set ``values`` as a reader does, then press Run where the figure waits for it (a live controller with a Run
    button only redraws its analytic part on a slider move; ``live = False`` controllers re-run on ``set``)."""
    controller.set(**values)
    if controller.live and getattr(controller, "run_button", None) is not None:
        controller.run_button.click()


@pytest.mark.slow  # one full simulation per slider move for the re-simulating controllers
@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_slider_moves_its_figure_and_the_same_value_draws_it_again(cls):
    controller = cls(**SMALL.get(cls, {}))  # small budgets for the re-simulating ones (tests/small_settings.py)
    controller.view()
    names = slider_names(controller)
    assert names, f"{cls.__name__} has no slider"
    start = controller.values()
    move(controller, **start)  # the figure as the reader sees it after an update (and Run)
    before = figures_data(controller)
    unchanged = []
    for name in names:
        moved = one_keyboard_step(controller.controls[name])
        move(controller, **{name: moved})
        if figures_data(controller) == before:
            unchanged.append(f"{name}: {start[name]!r} → {moved!r}")
        move(controller, **{name: start[name]})
        assert figures_data(controller) == before, (
            f"{cls.__name__}: {name} moved to {moved!r} and back to {start[name]!r} draws a different figure "
            "(same settings and seed must give the same numbers)")
    assert not unchanged, f"{cls.__name__}: these slider moves left every figure unchanged: {unchanged}"
