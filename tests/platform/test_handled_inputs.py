"""symsgd_jupyter.handled_inputs: a reader's inputs counted after the figure's own handlers, shown in the page only
where the kernel's environment asks for it."""

import ipywidgets as widgets
import pytest

from symsgd_jupyter.handled_inputs import SHOW_HANDLED_ENV, handled_inputs_shown, show_count, watch_inputs


def test_every_input_of_a_reader_counts_once_after_the_widgets_own_handlers():
    slider, text, button = widgets.FloatSlider(), widgets.Text(), widgets.Button(description="Run")
    skipped, progress, status = widgets.IntSlider(), widgets.IntProgress(), widgets.HTML()
    order = []
    slider.observe(lambda _c: order.append("own handler"), names="value")
    root = widgets.VBox([widgets.HBox([slider, text, skipped]), button, progress, status])
    watch_inputs(root, lambda: order.append("counted"), skip=[skipped])
    slider.value = 0.5
    assert order == ["own handler", "counted"]
    text.value, skipped.value, progress.value, status.value = "x", 3, 50, "done"  # one input of a reader
    button.click()
    assert order.count("counted") == 3


@pytest.mark.parametrize("value, shown", [("1", True), (" 1 ", True), ("0", False), ("", False)])
def test_the_count_is_shown_only_where_the_kernel_asks(monkeypatch, value, shown):
    assert handled_inputs_shown({SHOW_HANDLED_ENV: value}) is shown and not handled_inputs_shown({})
    monkeypatch.setenv(SHOW_HANDLED_ENV, value)
    root = widgets.VBox()
    root.add_class("symsgd-controller")
    show_count(root, 1)
    show_count(root, 2)
    expected = ["symsgd-controller", "symsgd-handled-2"] if shown else ["symsgd-controller"]
    assert list(root._dom_classes) == expected
