"""The static edition's plotly frames and slider (tools/site/edition/frames.py)."""

from __future__ import annotations

import pytest

from tools.site.edition.frames import SLIDER_ROOM_PX, animated_figure, changed_layout, changed_traces


def fig(y, title="t", xrange=None, extra_trace=False):
    layout = {"title": {"text": title}, "height": 400, "template": {"layout": {"font": {"size": 12}}}}
    if xrange:
        layout["xaxis"] = {"range": xrange}
    data = [{"type": "scatter", "x": [0, 1], "y": y}, {"type": "scatter", "x": [0, 1], "y": [5, 5]}]
    if extra_trace:
        data.append({"type": "scatter", "x": [0], "y": [0]})
    return {"data": data, "layout": layout}


def test_frames_carry_only_what_changes():
    base = fig([0, 1], xrange=[0, 1])
    frames = [fig([0, 1], xrange=[0, 1]), fig([0, 2], "t2"), fig([0, 3], "t3", xrange=[0, 2])]
    assert changed_traces(base, frames) == [0]
    assert changed_layout(base, frames) == ["title", "xaxis"]
    out = animated_figure(base, frames, ["1", "2", "3"], 0, "slope a")
    assert [f["traces"] for f in out["frames"]] == [[0], [0], [0]]
    assert out["frames"][1]["data"] == [{"type": "scatter", "x": [0, 1], "y": [0, 2]}]
    assert out["frames"][1]["layout"]["xaxis"] == {"autorange": True}  # the live figure autoranged there
    assert out["frames"][2]["layout"]["xaxis"] == {"range": [0, 2]}
    assert out["edition"]["autoranged"] == ["yaxis"]  # never ranged: edition.js autoranges it after a move
    assert "template" not in out["frames"][0]["layout"] and "template" in out["layout"]


def test_the_slider_starts_at_the_notebook_value_and_has_room():
    base = fig([0, 1])
    out = animated_figure(base, [fig([0, 1]), fig([0, 2])], ["0.5", "1"], 1, "slope a")
    (slider,) = out["layout"]["sliders"]
    assert slider["active"] == 1 and [s["label"] for s in slider["steps"]] == ["0.5", "1"]
    assert [s["args"][0] for s in slider["steps"]] == [["0"], ["1"]]
    assert all(s["method"] == "skip" and s["args"][1]["frame"]["redraw"] for s in slider["steps"])
    assert slider["currentvalue"]["prefix"] == "slope a = "
    assert out["layout"]["height"] == 400 + SLIDER_ROOM_PX and out["layout"]["margin"]["b"] == 80 + SLIDER_ROOM_PX
    assert out["edition"]["slider_room"] == SLIDER_ROOM_PX  # what the printed handout takes back
    assert base["layout"]["height"] == 400  # the input is not modified


def test_a_figure_the_slider_does_not_change_gets_no_slider():
    assert animated_figure(fig([0, 1]), [fig([0, 1]), fig([0, 1])], ["a", "b"], 0, "s") is None


@pytest.mark.parametrize("frames, labels, current, match", [
    ([fig([0, 1]), fig([0, 2], extra_trace=True)], ["a", "b"], 0, "adds or removes traces"),
    ([fig([0, 1])], ["a", "b"], 0, "1 frames but 2 labels"),
    ([fig([0, 1]), fig([0, 2])], ["a", "b"], 2, "outside"),
])
def test_bad_frames_are_refused(frames, labels, current, match):
    with pytest.raises(ValueError, match=match):
        animated_figure(fig([0, 1]), frames, labels, current, "s")


def test_a_frame_with_fewer_annotations_hides_the_others():
    """plotly keeps layout items a frame does not mention: shorter lists are padded with hidden items."""
    def with_notes(*texts):
        f = fig([0, len(texts)])
        f["layout"]["annotations"] = [{"text": t} for t in texts]
        return f

    out = animated_figure(with_notes("a"), [with_notes("a", "diverged"), with_notes("a")], ["1", "2"], 1, "s")
    assert out["frames"][0]["layout"]["annotations"] == [{"text": "a", "visible": True},
                                                         {"text": "diverged", "visible": True}]
    assert out["frames"][1]["layout"]["annotations"] == [{"text": "a", "visible": True},
                                                         {"text": None, "visible": False}]


def test_keys_a_frame_lacks_are_reset_not_left_over():
    marked = fig([0, 2])
    marked["data"][0]["marker"] = {"symbol": "diamond", "size": 9}
    marked["data"][0]["text"] = ["a", "b"]
    out = animated_figure(fig([0, 1]), [marked, fig([0, 3])], ["1", "2"], 0, "s")
    plain = out["frames"][1]["data"][0]
    assert plain["marker"] is None and plain["text"] is None and plain["y"] == [0, 3]
    assert out["frames"][0]["data"][0]["marker"] == {"symbol": "diamond", "size": 9}


def test_the_slider_goes_below_a_legend_placed_under_the_plot():
    plain = animated_figure(fig([0, 1]), [fig([0, 1]), fig([0, 2])], ["a", "b"], 0, "s")
    legend = fig([0, 1])
    legend["layout"]["legend"] = {"orientation": "h", "y": -0.35}  # reaches past the 80 px margin
    for t in legend["data"]:
        t["name"] = "a fairly long legend entry name"
    under = animated_figure(legend, [legend, {**legend, "data": [{**legend["data"][0], "y": [0, 2]},
                                                                   legend["data"][1]]}], ["a", "b"], 0, "s")
    assert under["layout"]["sliders"][0]["y"] < plain["layout"]["sliders"][0]["y"]
    assert under["layout"]["height"] > plain["layout"]["height"]


def test_an_array_and_its_plotly_encoding_are_the_same_trace():
    """A state that holds a heat map's z as a numpy array and one that holds plotly's base64 encoding of the same
    numbers are not a change (TracesController's maps along the λ orbit: the same M = u wᵀ at every λ)."""
    import base64

    import numpy as np

    z = np.array([[1.25, -0.5], [0.125, 3.0]])
    encoded = {"dtype": "f8", "bdata": base64.b64encode(z.tobytes()).decode(), "shape": "2, 2"}
    base = {"data": [{"type": "heatmap", "z": encoded, "zmin": -3.0, "zmax": 3.0}]}
    same = [{"data": [{"type": "heatmap", "z": z.copy(), "zmin": -3.0, "zmax": 3.0}]} for _ in range(3)]
    assert changed_traces(base, same) == []
    assert animated_figure(base, same, ["a", "b", "c"], 0, "λ") is None  # nothing to animate: no slider
    moved = [*same[:2], {"data": [{"type": "heatmap", "z": z + 1e-9, "zmin": -3.0, "zmax": 3.0}]}]
    assert changed_traces(base, moved) == [0]


def test_the_axes_the_live_figure_autoranges_are_named_for_the_page():
    """04 §1 in the static edition: the data move along the slider, the axis layout does not; plotly's
    animate keeps the first range, so the page (edition.js) autoranges the named axes after each move."""
    base = {"data": [{"type": "scatter", "x": [0, 1], "y": [0, 1]},
                     {"type": "scatter", "x": [0, 1], "y": [0, 1], "xaxis": "x2", "yaxis": "y2"}],
            "layout": {"xaxis2": {"range": [0, 1]}, "yaxis": {"title": {"text": "s"}}}}
    frames = [{"data": [{"type": "scatter", "x": [0, 1], "y": [0, 10 * k]},
                        {"type": "scatter", "x": [0, 1], "y": [0, k], "xaxis": "x2", "yaxis": "y2"}],
               "layout": base["layout"]} for k in (1, 2, 3)]
    out = animated_figure(base, frames, ["1", "2", "3"], 0, "k")
    assert out["edition"]["autoranged"] == ["xaxis", "yaxis", "yaxis2"]  # xaxis2 keeps its fixed range
    assert all(step["method"] == "skip" for step in out["layout"]["sliders"][0]["steps"])  # edition.js animates


def test_a_3d_figure_names_no_axis_to_autorange():
    base = {"data": [{"type": "surface", "z": [[0, 1], [1, 0]]}, {"type": "scatter3d", "x": [0], "y": [0], "z": [0]}],
            "layout": {"scene": {"xaxis": {"title": {"text": "q"}}}}}
    frames = [{"data": [{"type": "surface", "z": [[0, k], [k, 0]]}, base["data"][1]], "layout": base["layout"]}
              for k in (1, 2)]
    assert animated_figure(base, frames, ["1", "2"], 0, "k")["edition"]["autoranged"] == []


def test_a_long_end_label_insets_the_rail_so_it_stays_in_the_figure():
    """An end label centred on the rail's end must fit: half its width beyond the figure's margin insets the rail."""
    from tools.site.edition.frames import SLIDER_LABEL_CHAR_PX, end_label_inset

    labels = ["η = 0.3, γ = 0.027", "η = 0.3, γ = 0.02", "η = 0.2, γ = 0.027"]
    base = fig([0, 1])
    base["layout"]["margin"] = {"t": 40, "b": 80, "l": 120, "r": 20}
    out = animated_figure(base, [fig([0, 1]), fig([0, 2]), fig([0, 3])], labels, 0, "setting")
    pad = out["layout"]["sliders"][0]["pad"]
    half = len(labels[-1]) * SLIDER_LABEL_CHAR_PX / 2
    assert pad["r"] >= half - 20 and pad["r"] == end_label_inset(labels[-1], 20) > 0  # the narrow right margin
    assert pad["l"] == 0  # a 120 px left margin holds half of the first label
    assert end_label_inset("0.5", 80) == 0
