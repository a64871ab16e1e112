"""One plotly figure with frames and a plotly slider, from a figure's first state and its state at each slider value.

A frame carries only what changes along the slider: the traces whose data differ from the first state in some
frame, and the top-level layout entries (titles, annotations, axis ranges, …) that differ — each complete, so
that nothing of the frame shown before survives (:func:`complete`). Moving the plotly slider animates to a frame
(with a redraw, no transition), so it needs no kernel.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import re

import numpy as np

#: Layout entries that are never part of a frame.
_NOT_IN_FRAMES = {"template", "sliders", "updatemenus"}
_AXIS = re.compile(r"^(xaxis|yaxis)\d*$")
#: plotly's defaults when a layout does not set them (px).
DEFAULT_HEIGHT, DEFAULT_MARGIN = 450, {"t": 100, "b": 80, "l": 80, "r": 80}
#: Room the slider takes under the plot (its current-value line, rail, tick labels), px.
SLIDER_ROOM_PX = 110
#: Width of one character of a slider's step labels (plotly's 12 px font; a generous average), px: an end label is
#: centred on the end of the rail, so half of it must fit in the figure's margin or the rail is inset.
SLIDER_LABEL_CHAR_PX = 7.0
#: What a slider step does: jump to the frame and redraw (heatmaps, 3-D and layout changes need the redraw).
ANIMATE = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}}


def _plain(obj):
    """``obj`` with every array as a plain nested list, whatever its form: a numpy array, or plotly's typed-array
    encoding ``{"dtype", "bdata"[, "shape"]}`` (base64). The same numbers then give the same key, so a trace is
    "changed" only when its values change, not when one state holds an array and another its encoding."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            values = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
            shape = obj.get("shape")
            if isinstance(shape, str):
                shape = [int(n) for n in shape.split(",")]
            return (values.reshape(shape) if shape else values).tolist()
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _key(obj) -> str:
    return json.dumps(_plain(obj), sort_keys=True, default=str)


def changed_traces(base: dict, frames: list[dict]) -> list[int]:
    """Indices of the traces whose data differ from ``base`` in at least one frame.

    Raises:
        ValueError: a frame has a different number of traces (plotly frames cannot add or remove traces).
    """
    n = len(base.get("data", []))
    for k, fr in enumerate(frames):
        if len(fr.get("data", [])) != n:
            raise ValueError(f"frame {k} has {len(fr.get('data', []))} traces, the first state {n}: a slider that "
                             "adds or removes traces cannot be shipped as plotly frames")
    base_keys = [_key(t) for t in base.get("data", [])]
    return [i for i in range(n) if any(_key(fr["data"][i]) != base_keys[i] for fr in frames)]


def changed_layout(base: dict, frames: list[dict]) -> list[str]:
    """Top-level layout entries (sorted) that differ from ``base`` in at least one frame (template etc. excluded)."""
    b = base.get("layout", {})
    keys = set()
    for fr in frames:
        lay = fr.get("layout", {})
        for key in set(b) | set(lay):
            if key not in _NOT_IN_FRAMES and _key(lay.get(key)) != _key(b.get(key)):
                keys.add(key)
    return sorted(keys)


def _is_array(v) -> bool:
    """A plotly base64 array (``{"dtype", "bdata"}``): a value, not an object to merge into."""
    return isinstance(v, dict) and "bdata" in v


def union_shape(values: list):
    """The shape of several states of one plotly object: their dict keys merged (recursively), lists of dicts
    merged item by item; ``None`` for a plain value."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, dict) and not _is_array(v) for v in present):
        keys: dict[str, list] = {}
        for d in present:
            for k, v in d.items():
                keys.setdefault(k, []).append(v)
        return {k: union_shape(vs) for k, vs in keys.items()}
    if present and all(isinstance(v, list) and all(isinstance(x, dict) for x in v) for v in present) \
            and any(present):
        n = max(len(v) for v in present)
        return [union_shape([v[i] for v in present if i < len(v)]) for i in range(n)]
    return None


def complete(value, shape):
    """``value`` with every key of ``shape`` it lacks set to ``None`` and every list of dicts padded with hidden
    items, so that applying it as a frame leaves nothing of an earlier frame behind.

    plotly merges a frame into the figure key by key, and lists of objects (annotations, shapes) item by item:
    a key or an item the frame does not mention keeps the value an earlier frame gave it. ``None`` (JSON null)
    resets a key to plotly's default.
    """
    if isinstance(shape, dict):
        if not isinstance(value, dict) or _is_array(value):
            return value
        return {**value, **{k: (complete(value[k], sub) if k in value else None) for k, sub in shape.items()}}
    if isinstance(shape, list):
        items = value if isinstance(value, list) else []
        out = []
        for i in range(min(len(items), len(shape))):
            item = complete(items[i], shape[i])
            if isinstance(item, dict) and item.get("visible") is None:
                item["visible"] = True  # this position may hold a hidden item from an earlier frame
            out.append(item)
        for i in range(len(out), len(shape)):  # an item this state does not have: hidden, its keys reset
            out.append({**{k: None for k in (shape[i] or {})}, "visible": False})
        return out + items[len(shape):]
    return value


#: Trace types drawn on 2-D (cartesian) axes; a 3-D, polar or pie trace has no ``xaxis``/``yaxis`` to autorange.
CARTESIAN = {"scatter", "scattergl", "bar", "heatmap", "contour", "histogram", "histogram2d", "histogram2dcontour",
             "box", "violin", "image"}


def autoranged_axes(states: list[dict]) -> list[str]:
    """The 2-D axes (``xaxis``, ``yaxis2``, …) that no state gives a range: the live figure autoranges them at every
    slider value. An axis counts when the layout names it or a cartesian trace is drawn on it."""
    axes = set()
    for st in states:
        axes |= {k for k in st.get("layout", {}) if _AXIS.match(k)}
        for trace in st.get("data", []):
            if trace.get("type", "scatter") not in CARTESIAN:
                continue
            for attr in ("xaxis", "yaxis"):
                ref = trace.get(attr) or attr[0]  # "x", "x2", …
                axes.add(attr + ref[1:])
    return sorted(a for a in axes if _AXIS.match(a)
                  and all((st.get("layout", {}).get(a) or {}).get("range") is None for st in states))


def _frame_layout(layout: dict, keys: list[str], shapes: dict) -> dict:
    out = {}
    for key in keys:
        value = complete(copy.deepcopy(layout.get(key)), shapes[key])
        if _AXIS.match(key):
            value = value or {}
            if value.get("range") is None:  # the live figure autoranges this axis at this value
                value["autorange"] = True
        out[key] = value
    return out


def animated_figure(base: dict, frames: list[dict], labels: list[str], current: int, slider_label: str) -> dict | None:
    """The figure to ship: ``base`` (the notebook's state) with plotly frames and a slider over ``frames``.

    Args:
        base: the figure as the notebook left it (a plotly dict, template included).
        frames: the figure at each slider value (plotly dicts; a template is ignored).
        labels: the slider value of each frame, as shown.
        current: index of the notebook's own slider value (the slider starts there).
        slider_label: the slider's name as the notebook shows it (e.g. ``"T = η/S"``).

    Returns:
        A plotly dict with ``frames`` and ``layout.sliders``, or ``None`` when nothing in the figure depends on
        the slider (the figure is then shipped as it is).

    Raises:
        ValueError: the lengths of ``frames`` and ``labels`` differ, ``current`` is out of range, or a frame
            changes the number of traces.
    """
    if len(frames) != len(labels) or not frames:
        raise ValueError(f"{len(frames)} frames but {len(labels)} labels")
    if not 0 <= current < len(frames):
        raise ValueError(f"current frame {current} outside 0..{len(frames) - 1}")
    traces = changed_traces(base, frames)
    keys = changed_layout(base, frames)
    if not traces and not keys:
        return None
    fig = {"data": copy.deepcopy(base.get("data", [])), "layout": copy.deepcopy(base.get("layout", {}))}
    states = [base, *frames]
    trace_shapes = {i: union_shape([st["data"][i] for st in states]) for i in traces}
    layout_shapes = {key: union_shape([st.get("layout", {}).get(key) for st in states]) for key in keys}
    fig["frames"] = [{"name": str(k), "traces": traces,
                      "data": [complete(copy.deepcopy(fr["data"][i]), trace_shapes[i]) for i in traces],
                      "layout": _frame_layout(fr.get("layout", {}), keys, layout_shapes)}
                     for k, fr in enumerate(frames)]
    # plotly.animate does not autorange (an axis keeps the range it had, even when the frame asks for autorange),
    # so edition.js relayouts these axes after every move: the live figure autoranges them at every value
    fig["edition"] = {"autoranged": autoranged_axes(states)}
    # the room the slider added under the plot, px (the printed handout, tools/site/handout.py, takes it back)
    fig["edition"]["slider_room"] = _add_slider(fig["layout"], labels, current, slider_label, fig["data"])
    return fig


def legend_bottom_px(layout: dict, data: list[dict], plot_height: float, width: float = 1100.0) -> float:
    """How far below the plot area a horizontal legend placed under it reaches, px (0 for any other legend).

    An estimate from the legend's entries (about 7 px per character plus the symbol), enough to keep the slider
    clear of it; ``width`` is the page's figure width.
    """
    legend = layout.get("legend") or {}
    if legend.get("orientation") != "h":
        return 0.0
    y = legend.get("y", -0.1)
    if y is None or y >= 0:
        return 0.0
    names = [t.get("name") or "" for t in data if t.get("showlegend", True) is not False and t.get("name")]
    margin = {**DEFAULT_MARGIN, **(layout.get("margin") or {})}
    room = max(width - margin["l"] - margin["r"], 200.0)
    line, rows = 0.0, 1
    for name in names:
        item = 7.0 * len(name) + 45.0
        if line and line + item > room:
            rows, line = rows + 1, 0.0
        line += item
    return -y * plot_height + rows * 20.0 + 8.0


def end_label_inset(label: str, margin_px: float) -> int:
    """How far (px) to inset the slider's rail at one end so that the end's step ``label``, centred on it, stays
    inside the figure: half the label's width (:data:`SLIDER_LABEL_CHAR_PX` per character) beyond the margin on that
    side, and 4 px to spare; 0 when the margin holds it (notebook 05's "η = 0.2, γ = 0.027" was cut at the edge)."""
    return max(0, math.ceil(len(label) * SLIDER_LABEL_CHAR_PX / 2 + 4 - margin_px))


def _add_slider(layout: dict, labels: list[str], current: int, slider_label: str, data: list[dict]) -> float:
    """Make room under the plot (and under a legend placed there) and put a plotly slider there.

    The plot area keeps its height: the bottom margin and the figure's height grow by the same amount, which is
    returned (px).
    """
    margin = {**DEFAULT_MARGIN, **(layout.get("margin") or {})}
    height = layout.get("height") or DEFAULT_HEIGHT
    plot_h = max(height - margin["t"] - margin["b"], 1)
    below = max(margin["b"], legend_bottom_px(layout, data, plot_h) + 6)
    grow = below - margin["b"] + SLIDER_ROOM_PX
    margin["b"] += grow
    layout["margin"] = margin
    layout["height"] = height + grow
    layout["sliders"] = [{
        "name": "edition", "active": current, "x": 0.0, "xanchor": "left", "len": 1.0,
        "y": -below / plot_h, "yanchor": "top",
        "pad": {"t": 8, "b": 0, "l": end_label_inset(labels[0], margin["l"]),
                "r": end_label_inset(labels[-1], margin["r"])},
        "currentvalue": {"prefix": f"{slider_label} = ", "visible": True, "xanchor": "left"},
        # "skip": the slider only reports the move; edition.js animates every figure of the controller, this one
        # included, and then autoranges (one code path, so a test can wait for all of it)
        "steps": [{"label": lab, "value": lab, "method": "skip", "args": [[str(k)], ANIMATE]}
                  for k, lab in enumerate(labels)],
    }]
    return grow
