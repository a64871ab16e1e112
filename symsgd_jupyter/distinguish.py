"""No curve told apart by colour only: :func:`distinguish` restyles the traces of a plotly figure that share a
subplot, a kind and a line/marker style but differ in colour, giving them distinct dashes, marker symbols or bar
patterns (colour-blind readers, black-and-white prints). Every controller of :mod:`symsgd_core.ui` applies it to its
figures whenever their traces change.
"""

from __future__ import annotations

import re

import plotly.graph_objects as go

__all__ = ["DASHES", "PATTERNS", "SYMBOLS", "distinguish", "hex_colour", "style_key"]

#: Plotly's line dashes, in the order :func:`distinguish` hands them out.
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
#: Marker symbols, in the order :func:`distinguish` hands them out.
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down")
#: Bar fill patterns, in the order :func:`distinguish` hands them out.
PATTERNS = ("", "/", "\\", "x", ".", "-", "|", "+")

_NAMED = {"black": "#000000", "white": "#FFFFFF", "grey": "#808080", "gray": "#808080"}


def hex_colour(colour: str) -> str | None:
    """``colour`` (``#rgb``, ``#rrggbb``, ``rgb(…)``, ``rgba(…)`` or a few names) as ``#RRGGBB``, else ``None``."""
    c = colour.strip().lower()
    c = _NAMED.get(c, c).lower()
    if re.fullmatch(r"#[0-9a-f]{3}", c):
        return "#" + "".join(ch * 2 for ch in c[1:]).upper()
    if re.fullmatch(r"#[0-9a-f]{6}", c):
        return c.upper()
    m = re.fullmatch(r"rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*[\d.]+\s*)?\)", c)
    if m:
        return "#" + "".join(f"{int(v):02X}" for v in m.groups())
    return None


def _colour_of(trace) -> str | None:
    """The colour a reader sees first on ``trace``: its line colour, else its (scalar) marker colour."""
    line = getattr(trace, "line", None)
    marker = getattr(trace, "marker", None)
    for c in (getattr(line, "color", None), getattr(marker, "color", None), getattr(trace, "fillcolor", None)):
        if isinstance(c, str):
            return c
    return None


def _drawn(trace) -> bool:
    """Traces a reader tells apart: visible and drawn with a line, markers or bars (in the legend or not)."""
    if trace.visible is False:
        return False
    if trace.type == "bar":
        return True
    if trace.type not in ("scatter", "scattergl"):
        return False
    mode = trace.mode or "lines"
    line = trace.line
    if "lines" in mode and line is not None and line.width == 0 and "markers" not in mode:
        return False  # a band's edge
    return "lines" in mode or "markers" in mode


def style_key(trace) -> tuple:
    """What tells ``trace`` apart besides colour: subplot, kind, mode, dash, marker symbol, bar pattern."""
    subplot = (getattr(trace, "xaxis", None) or "x", getattr(trace, "yaxis", None) or "y")
    if trace.type == "bar":
        pattern = trace.marker.pattern.shape if trace.marker is not None and trace.marker.pattern is not None else None
        return (subplot, "bar", pattern or "")
    mode = trace.mode or "lines"
    dash = (trace.line.dash if trace.line is not None else None) or "solid"
    symbol = (trace.marker.symbol if trace.marker is not None else None) or "circle"
    return (subplot, trace.type, mode, dash if "lines" in mode else "", symbol if "markers" in mode else "")


def _restyle(trace, k: int) -> None:
    """Give ``trace`` the ``k``-th alternative style (k ≥ 1) for its kind."""
    if trace.type == "bar":
        trace.marker.pattern.shape = PATTERNS[k % len(PATTERNS)]
        return
    mode = trace.mode or "lines"
    if "lines" in mode:
        trace.line.dash = DASHES[k % len(DASHES)]
        if k >= len(DASHES):  # more curves than dashes: add markers too
            trace.mode = "lines+markers"
            trace.marker.symbol = SYMBOLS[(k // len(DASHES)) % len(SYMBOLS)]
    else:
        trace.marker.symbol = SYMBOLS[k % len(SYMBOLS)]


def distinguish(fig) -> int:
    """Restyle the traces of ``fig`` that differ from an earlier one in colour only (see the module docstring).

    Within a group of drawn traces with the same :func:`style_key`, the traces of each colour after the first
    get the first dash (lines), symbol (markers) or pattern (bars) that no drawn trace of the figure uses yet;
    traces of the same colour keep one style (they are one kind of curve, e.g. one line per run). Idempotent.
    Returns how many traces changed.

    The search tries styles one after another, so it runs on a data-free copy of the traces' styles
    (:func:`_style_copy`) and only the result is written to ``fig``, in one ``fig.batch_update()``: a
    FigureWidget sends one plotly update (4 widget messages) whatever the number of traces and tries. Trying them
    on the figure itself sent ~2 600 messages for notebook 04's 80-trace figure, which overflowed the kernel's
    output queue on a busy machine, so widgets created next never reached the page.
    """
    shadow = go.Figure(data=[_style_copy(t) for t in fig.data], skip_invalid=True)
    changed = _distinguish(shadow)
    with fig.batch_update():
        for trace, styled in zip(fig.data, shadow.data):
            update: dict = {}
            for path in _RESTYLED.get(trace.type, ()):
                value = _get(styled, path)
                if value != _get(trace, path):
                    _put(update, path, value)
            if update:
                trace.update(update)
    return changed


#: Style attributes :func:`_restyle` may change, per trace type (:func:`distinguish` copies these back).
_RESTYLED = {"scatter": ("mode", "line.dash", "marker.symbol"), "scattergl": ("mode", "line.dash", "marker.symbol"),
             "bar": ("marker.pattern.shape",)}
#: Style attributes :func:`_drawn`, :func:`style_key` and :func:`_colour_of` read, per trace type.
_READ = {"scatter": ("visible", "mode", "xaxis", "yaxis", "fillcolor", "line.color", "line.width", "line.dash",
                     "marker.color", "marker.symbol"),
         "bar": ("visible", "xaxis", "yaxis", "marker.color", "marker.pattern.shape")}
_READ["scattergl"] = _READ["scatter"]


def _get(trace, path: str):
    node = trace
    for part in path.split("."):
        node = getattr(node, part, None)
        if node is None:
            return None
    return node


def _put(tree: dict, path: str, value) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        tree = tree.setdefault(part, {})
    tree[leaf] = value


def _style_copy(trace) -> dict:
    """``trace``'s type and the style attributes :func:`_distinguish` reads, without its data (colours only when
    they are one colour for the whole trace, as :func:`_colour_of` uses them)."""
    out: dict = {"type": trace.type, "visible": trace.visible}
    for path in _READ.get(trace.type, ()):
        value = _get(trace, path)
        if value is None or (path.endswith("color") and not isinstance(value, str)):
            continue
        _put(out, path, value)
    return out


def _distinguish(fig) -> int:
    """:func:`distinguish`'s search, done in place on ``fig`` (one message per try on a FigureWidget)."""
    groups: dict[tuple, dict[str, list]] = {}
    for trace in fig.data:
        if _drawn(trace):
            colour = _colour_of(trace)
            key = hex_colour(colour) if isinstance(colour, str) else repr(colour)
            groups.setdefault(style_key(trace), {}).setdefault(key, []).append(trace)
    used = set(groups)
    changed = 0
    for by_colour in groups.values():
        for traces in list(by_colour.values())[1:]:
            probe = traces[0]
            saved = _saved(probe)
            for k in range(1, len(DASHES) * len(SYMBOLS) + len(PATTERNS)):
                _restyle(probe, k)
                if style_key(probe) not in used:
                    break
                _undo(probe, saved)
            for t in traces[1:]:
                _restyle(t, k)
            used.add(style_key(probe))
            changed += len(traces)
    return changed


def _saved(trace) -> tuple:
    if trace.type == "bar":
        return (None, None, trace.marker.pattern.shape)
    return (trace.mode, trace.line.dash, trace.marker.symbol)


def _undo(trace, saved) -> None:
    mode, dash, symbol = saved
    if trace.type == "bar":
        trace.marker.pattern.shape = symbol
        return
    trace.mode = mode
    trace.line.dash = dash
    trace.marker.symbol = symbol
