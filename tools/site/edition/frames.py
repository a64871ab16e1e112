"""One plotly figure with frames and a plotly slider, from a figure's first state and its state at each slider value.

A frame carries only what changes along the slider: the traces whose data differ from the first state in some
frame, and the top-level layout entries (titles, annotations, axis ranges, …) that differ. Moving the plotly
slider animates to a frame (with a redraw, no transition), so it needs no kernel.
"""

from __future__ import annotations

import copy
import json
import re

#: Layout entries that are never part of a frame.
_NOT_IN_FRAMES = {"template", "sliders", "updatemenus"}
_AXIS = re.compile(r"^(xaxis|yaxis)\d*$")
#: plotly's defaults when a layout does not set them (px).
DEFAULT_HEIGHT, DEFAULT_MARGIN = 450, {"t": 100, "b": 80, "l": 80, "r": 80}
#: Room the slider takes under the plot (its current-value line, rail, tick labels), px.
SLIDER_ROOM_PX = 110
#: What a slider step does: jump to the frame and redraw (heatmaps, 3-D and layout changes need the redraw).
ANIMATE = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}}


def _key(obj) -> str:
    return json.dumps(obj, sort_keys=True, default=str)


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


def _frame_layout(layout: dict, keys: list[str]) -> dict:
    out = {}
    for key in keys:
        value = copy.deepcopy(layout.get(key))
        if _AXIS.match(key):
            value = value or {}
            if "range" not in value:  # the live figure autoranges this axis at this value
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
    fig["frames"] = [{"name": str(k), "traces": traces, "data": [fr["data"][i] for i in traces],
                      "layout": _frame_layout(fr.get("layout", {}), keys)} for k, fr in enumerate(frames)]
    _add_slider(fig["layout"], labels, current, slider_label)
    return fig


def _add_slider(layout: dict, labels: list[str], current: int, slider_label: str) -> None:
    """Make room under the plot and put a plotly slider there."""
    margin = {**DEFAULT_MARGIN, **(layout.get("margin") or {})}
    height = layout.get("height") or DEFAULT_HEIGHT
    below = margin["b"]
    margin["b"] = below + SLIDER_ROOM_PX
    layout["margin"] = margin
    layout["height"] = height + SLIDER_ROOM_PX
    plot_h = max(layout["height"] - margin["t"] - margin["b"], 1)
    layout["sliders"] = [{
        "name": "edition", "active": current, "x": 0.0, "xanchor": "left", "len": 1.0,
        "y": -below / plot_h, "yanchor": "top", "pad": {"t": 8, "b": 0, "l": 0, "r": 0},
        "currentvalue": {"prefix": f"{slider_label} = ", "visible": True, "xanchor": "left"},
        "steps": [{"label": lab, "value": lab, "method": "animate", "args": [[str(k)], ANIMATE]}
                  for k, lab in enumerate(labels)],
    }]
