"""Shared by the static edition's unit tests: tiny controllers built on the public Controller interface (so the tests
do not depend on where the package's own controllers live)."""

from __future__ import annotations

import ipywidgets as widgets
import plotly.graph_objects as go

from symsgd_core.ui.base import Controller


class Line(Controller):
    """y = a·x + b on one figure; a second figure that does not depend on the sliders.

    ``run=True`` makes it a re-simulating controller: the sliders do nothing until its Run button is clicked.
    ``fail_above``: setting ``a`` above it raises (a broken controller).
    """

    def __init__(self, run: bool = False, fail_above: float | None = None):
        super().__init__()
        self.fail_above = fail_above
        self.controls = {
            "a": widgets.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.1, description="slope a"),
            "b": widgets.IntSlider(value=1, min=0, max=3, description="offset b"),
        }
        self.figures = [go.FigureWidget(go.Scatter(x=[0, 1, 2], y=[0, 0, 0], name="line")),
                        go.FigureWidget(go.Scatter(x=[0, 1], y=[1, 1], name="fixed"))]
        if run:
            self.live = False
            self.run_button = widgets.Button(description="Run")
            self.run_button.on_click(lambda _b: self.update())
            self.extra_widgets = [self.run_button]
        self._wire()
        self.update()

    def _update(self, a, b):
        if self.fail_above is not None and a > self.fail_above:
            raise FloatingPointError(f"a = {a} is too steep")
        self.figures[0].data[0].y = [a * x + b for x in (0, 1, 2)]
        self.figures[0].layout.title = f"a = {a:g}"
        self.say(f"slope {a:g}, offset {b}")


def expected_y(a: float, b: int) -> list[float]:
    return [a * x + b for x in (0, 1, 2)]
