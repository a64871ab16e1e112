"""The static edition's slider grids and frame budget (tools/site/edition/grid.py)."""

from __future__ import annotations

import ipywidgets as widgets
import pytest

from tools.site.edition.grid import (
    SliderSpec,
    allocate_frames,
    label,
    lattice_size,
    lattice_value,
    slider_grid,
    spec_of,
)


def test_float_grid_spans_the_range_and_keeps_the_notebook_value():
    values, current = slider_grid(SliderSpec("float", 0.15, 0.02, 0.5, 0.01), 7)
    assert values[0] == 0.02 and values[-1] == 0.5 and len(values) == 7
    assert values[current] == 0.15
    assert values == sorted(values)
    # every value is one the slider can take: min + k·step
    assert all(abs((v - 0.02) / 0.01 - round((v - 0.02) / 0.01)) < 1e-9 for v in values)


def test_a_short_slider_gives_every_value():
    values, current = slider_grid(SliderSpec("int", 5, 1, 8, 1), 11)
    assert values == [1, 2, 3, 4, 5, 6, 7, 8] and current == 4
    assert all(isinstance(v, int) for v in values)


def test_log_slider_values_are_powers_of_the_base():
    values, current = slider_grid(SliderSpec("log", 1.0, -1.0, 1.0, 0.5, base=10.0), 5)
    assert values == pytest.approx([0.1, 10 ** -0.5, 1.0, 10 ** 0.5, 10.0])
    assert values[current] == 1.0


def test_a_value_between_steps_is_kept_exactly():
    # ReLUBalance's default η = 0.015 is not on its log slider's lattice
    import math

    spec = SliderSpec("log", 0.015, math.log10(0.003), math.log10(0.02), 0.05)
    values, current = slider_grid(spec, 5)
    assert values[current] == 0.015 and len(values) == 5


def test_selection_slider():
    values, current = slider_grid(SliderSpec("selection", "b", options=("a", "b", "c", "d")), 3)
    assert values[current] == "b" and values[0] == "a" and values[-1] == "d"


def test_spec_of_reads_the_ipywidgets_sliders():
    assert spec_of(widgets.IntSlider(value=3, min=1, max=8)).kind == "int"
    s = spec_of(widgets.FloatLogSlider(value=10.0, base=10, min=-1, max=1.5, step=0.1))
    assert s.kind == "log" and s.value == 10.0 and lattice_size(s) == 26
    assert lattice_value(s, 25) == pytest.approx(10 ** 1.5)
    with pytest.raises(ValueError, match="not a slider"):
        spec_of(widgets.Dropdown(options=["a", "b"]))


@pytest.mark.parametrize("spec, n, match", [
    (SliderSpec("float", 0.5, 0.0, 1.0, 0.1), 1, "n ≥ 2"),
    (SliderSpec("selection", "z", options=("a", "b")), 3, "not an option"),
])
def test_bad_grid_requests_are_refused(spec, n, match):
    with pytest.raises(ValueError, match=match):
        slider_grid(spec, n)


@pytest.mark.parametrize("kwargs, match", [
    (dict(kind="float", value=0, min=0, max=1, step=0), "step must be > 0"),
    (dict(kind="float", value=0, min=1, max=0, step=0.1), "below its min"),
    (dict(kind="dial", value=0), "kind must be"),
    (dict(kind="float", value=0, min=0, max=float("nan"), step=0.1), "finite"),
])
def test_bad_slider_specs_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SliderSpec(**kwargs)


def test_labels():
    assert label(3) == "3" and label(0.30000000000000004) == "0.3" and label(0.0047546) == "0.004755"
    assert label("relu") == "relu"


def test_allocation_shares_the_budget_evenly_and_never_exceeds_it():
    counts = allocate_frames([100, 100, 1000], [11, 5, 7], budget=6000, fewest=3)
    assert counts == [5, 5, 5]  # level 5 fits (500 + 500 + 5000), level 6 does not
    assert sum(c * n for c, n in zip([100, 100, 1000], counts)) <= 6000
    assert allocate_frames([100], [7], budget=10**9, fewest=3) == [7]


def test_allocation_drops_the_costliest_slider_when_nothing_fits():
    counts = allocate_frames([100, 5000], [7, 7], budget=2000, fewest=3)
    assert counts == [7, 0]  # three frames of the heavy figure alone exceed the budget
    assert allocate_frames([10_000], [7], budget=100, fewest=3) == [0]


def test_allocation_refuses_bad_input():
    with pytest.raises(ValueError, match="> 0"):
        allocate_frames([0], [5], 100, 3)
    with pytest.raises(ValueError, match="costs"):
        allocate_frames([1, 2], [5], 100, 3)
