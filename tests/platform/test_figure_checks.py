"""symsgd_jupyter.figure_checks: every slider at both ends of its range, and no NaN drawn."""

import ipywidgets as widgets
import plotly.graph_objects as go

from symsgd_jupyter.figure_checks import figure_is_finite, slider_extremes, slider_names, sweep_sliders


class _Figure:
    """A widget figure as the checks see one: ``controls`` and ``set`` (which records every setting it drew)."""

    def __init__(self):
        self.controls = {"a": widgets.FloatSlider(value=1.0, min=-2.0, max=2.0),
                         "n": widgets.IntSlider(value=5, min=2, max=50),
                         "label": widgets.Text(value="x")}
        self.drawn = []

    def set(self, **values):
        for name, value in values.items():
            self.controls[name].value = value
        self.drawn.append({name: w.value for name, w in self.controls.items()})

    def values(self):
        return {name: w.value for name, w in self.controls.items()}


def test_sweep_visits_both_ends_of_every_slider_and_restores_values():
    c = _Figure()
    assert slider_names(c) == ["a", "n"]
    visited = sweep_sliders(c)
    assert visited == [("a", -2.0), ("a", 2.0), ("n", 2), ("n", 50)]
    assert c.values()["a"] == 1.0 and c.values()["n"] == 5
    assert len(c.drawn) == 6  # each end, then back at the start, of each slider
    runs = []
    sweep_sliders(c, run=lambda: runs.append(c.values()["a"]))
    assert runs[:2] == [-2.0, 2.0] and len(runs) == 4  # a Run after every end, none after the restore


def test_slider_extremes_are_what_a_reader_can_reach():
    assert slider_extremes(widgets.SelectionSlider(options=["lo", "mid", "hi"])) == ("lo", "hi")
    assert slider_extremes(widgets.FloatLogSlider(value=1.0, base=10, min=-2, max=1)) == (0.01, 10.0)
    assert slider_extremes(widgets.IntSlider(value=3, min=1, max=9)) == (1, 9)


def test_figure_is_finite_catches_nan_but_allows_gaps():
    fig = go.FigureWidget()
    fig.add_scatter(x=[0, 1, None, 3], y=[1.0, 2.0, None, 4.0])
    assert figure_is_finite(fig)
    fig.data[0].y = [1.0, float("nan"), 2.0, 3.0]
    assert not figure_is_finite(fig)
    assert figure_is_finite(go.Figure(go.Bar(x=["a", "b"], y=[1, 2])))  # category names are not numbers
