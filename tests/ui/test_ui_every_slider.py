"""Every slider of every notebook's controller moves its figure, reaches both ends of its range with a finite figure
and a message, and the same value draws the same figure again: one pass over every slider of every controller.

The browser suite used to check this by pressing arrow keys on one slider per controller in every page and mode
(about 136 full simulations per ``make test``); what it checks is the controller's logic, not the page, so it is
checked here once, for every slider, without a browser. A browser pass still checks that a keyboard move reaches
the kernel (the gallery notebook, ``tests/browser/test_gallery.py``).

One move is one keyboard step (ArrowRight; ArrowLeft at the top of the range), as a reader makes it. Re-simulating
controllers re-run as their Run button does (:func:`move`).
"""

from __future__ import annotations

import contextlib
import json
import math

import ipywidgets as widgets
import pytest
from plotly.basedatatypes import BaseFigure, BasePlotlyType
from plotly.utils import PlotlyJSONEncoder
from small_settings import SMALL
from test_ui_style import CLASSES

from symsgd_core.ui.base import status_text
from symsgd_jupyter.figure_checks import figure_is_finite, slider_extremes, slider_names


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


class BatchSpy:
    """Fails a figure update that assigns one property of one trace or layout object twice in one
    ``batch_update()`` with different values.

    plotly.py (7.1) compares a property assigned in a batch with its value *before* the batch, not with what the
    batch already assigned: ``t.x = []; t.x = old`` in one batch leaves ``[]`` (the second assignment looks like
    no change and is dropped). A figure drawn that way shows what it drew before only when the value it had is the
    one it should keep, so the same slider value draws two figures depending on where the reader came from (notebook
    03's "law is δ(v)" label vanished moving from T = 0.4 to 0.44). Assigning each property once per batch is the
    rule; this spy makes the pattern itself fail, whatever the values happen to be."""

    def __init__(self, monkeypatch):
        self.batches: dict[int, dict] = {}
        self.twice: list[str] = []
        set_prop, batch_update = BasePlotlyType._set_prop, BaseFigure.batch_update
        spy = self

        def _set_prop(obj, prop, val):
            out = set_prop(obj, prop, val)
            fig = obj.figure
            seen = spy.batches.get(id(fig)) if fig is not None else None
            if seen is not None and out is not None:
                key = (id(obj), prop)
                if key in seen and not BasePlotlyType._vals_equal(seen[key], out):
                    spy.twice.append(f"{obj.plotly_name}.{prop}: {seen[key]!r:.60} then {out!r:.60}")
                seen[key] = out
            return out

        @contextlib.contextmanager
        def _batch_update(fig):
            outer = id(fig) not in spy.batches
            if outer:
                spy.batches[id(fig)] = {}
            try:
                with batch_update(fig):
                    yield
            finally:
                if outer:
                    del spy.batches[id(fig)]

        monkeypatch.setattr(BasePlotlyType, "_set_prop", _set_prop)
        monkeypatch.setattr(BaseFigure, "batch_update", _batch_update)

    def check(self, where: str) -> None:
        twice, self.twice = self.twice, []
        assert not twice, (f"{where}: a property assigned twice in one batch_update() (plotly keeps the first "
                           f"when the second equals the value before the batch): {twice[:5]}")


@pytest.fixture
def batch_spy(monkeypatch) -> BatchSpy:
    return BatchSpy(monkeypatch)


def test_the_batch_spy_sees_a_property_assigned_twice_in_one_batch(batch_spy):
    import plotly.graph_objects as go

    fig = go.FigureWidget()
    fig.add_scatter(x=[0.5], y=[0.8])
    with fig.batch_update():
        fig.data[0].x = []
        fig.data[0].x = [0.5]
    assert fig.data[0].x == ()  # what plotly.py does, and why the spy exists
    with pytest.raises(AssertionError, match=r"scatter\.x: \[\] then \[0\.5\]"):
        batch_spy.check("a reset, then the old value")
    with fig.batch_update():  # each property once per batch: no finding
        fig.data[0].x, fig.data[0].y = [0.6], [0.9]
    batch_spy.check("one assignment each")
    assert fig.data[0].x == (0.6,)


def check_drawn(controller, where: str) -> None:
    """What a reader must see after any setting: every figure free of NaN/inf (a failure is announced in the
    status line, not drawn as NaN), a figure with data (or an error line that says why there is none: notebook 05's
    comparison at a γ whose GD minimum already has rank 1), a status line that says something and is not stuck on
    "Computing", and a full progress bar where there is one."""
    name = type(controller).__name__
    assert all(figure_is_finite(f) for f in controller.figures), f"{name} at {where}: NaN or inf in a figure"
    status = status_text(controller)
    drawn = any(getattr(tr, "x", None) is not None and len(tr.x) for f in controller.figures for tr in f.data)
    assert drawn or "symsgd-status-error" in controller.status.value, (  # (a setting with nothing to draw says why)
        f"{name} at {where}: no figure has data and the status line is not an error: {status[:120]!r}")
    assert status.strip(), f"{name} at {where}: the status line is empty"
    assert "Computing" not in status, f"{name} at {where}: still 'Computing' after the run"
    if getattr(controller, "run_button", None) is not None:  # (every move ran it: see move)
        progress = controller.progress
        assert progress.value == progress.max, f"{name} at {where}: progress {progress.value}/{progress.max}"


@pytest.mark.slow  # one full simulation per slider move for the re-simulating controllers
@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_slider_moves_its_figure_reaches_both_ends_and_the_same_value_draws_it_again(cls, batch_spy):
    """For every slider, one at a time: one keyboard step changes a figure; each end of its range draws a finite
    figure with a message (:func:`check_drawn`); back at its start value the figures are the same as before, number
    for number. Four updates (and Runs) per slider."""
    controller = cls(**SMALL.get(cls, {}))  # small budgets for the re-simulating ones (tests/ui/small_settings.py)
    assert "symsgd-controller" in controller.view()._dom_classes
    names = slider_names(controller)
    assert names, f"{cls.__name__} has no slider"
    start = controller.values()
    move(controller, **start)  # the figure as the reader sees it after an update (and Run)
    check_drawn(controller, "its start")
    batch_spy.check(f"{cls.__name__} at its start")
    before = figures_data(controller)
    unchanged = []
    for name in names:
        widget = controller.controls[name]
        step = one_keyboard_step(widget)
        move(controller, **{name: step})
        if figures_data(controller) == before:
            unchanged.append(f"{name}: {start[name]!r} → {step!r}")
        check_drawn(controller, f"{name} = {step!r}")
        batch_spy.check(f"{cls.__name__} at {name} = {step!r}")
        for end in slider_extremes(widget):
            move(controller, **{name: end})
            check_drawn(controller, f"{name} = {end!r} (an end)")
            batch_spy.check(f"{cls.__name__} at {name} = {end!r} (an end)")
        move(controller, **{name: start[name]})
        assert figures_data(controller) == before, (
            f"{cls.__name__}: {name} moved and back to {start[name]!r} draws a different figure "
            "(same settings and seed must give the same numbers)")
    assert not unchanged, f"{cls.__name__}: these slider moves left every figure unchanged: {unchanged}"
