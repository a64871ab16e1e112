"""A figure's pieces in one line each: its panels, its lines and markers, its axis titles.

A figure module declares what it draws; these helpers spell out the plotly keywords that every figure would
otherwise repeat. ``at`` names a panel as ``(row, col)`` (or ``(row, col, True)`` for its secondary y axis); ``None``
means a figure without subplots. Traces start empty unless ``x``/``y`` are given: the figure's draw method fills
them. A test finds a trace by its legend name (:meth:`~.base.Controller.trace`); a drawing writes a trace by its
``key`` (:func:`put`), never by its position in ``fig.data``, so traces can be added or reordered freely.

A trace's key is kept on the Python trace object only (never sent to the page), not in its legend name: some names
change with the setting ("u² − w² = 0.5 (through the point)"), some traces have none or share one across panels, and
naming them would change their hover labels and text alternatives; plotly's ``uid`` cannot carry it (a
``FigureWidget`` replaces every ``uid`` by a random one).
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = ["axes", "key_last", "keyed", "line", "markers", "panels", "put"]

#: The layout figures share unless they give their own: room for axis titles, legend on top (the template, the
#: background and the log axes' tick labels are every figure's: :func:`symsgd_core.ui.style.finish`).
LAYOUT = dict(margin=dict(l=60, r=20, t=50, b=50),
              legend=dict(orientation="h", yanchor="bottom", y=1.06, x=0))


def panels(*titles: str, height: int, rows: int = 1, cols: int | None = None, layout: dict | None = None,
           **subplots) -> go.FigureWidget:
    """A ``FigureWidget`` of ``rows × cols`` panels titled ``titles`` (``cols`` defaults to one per title on one row),
    ``height`` pixels high, with ``layout`` (default :data:`LAYOUT`); ``subplots``: further keywords of plotly's
    ``make_subplots`` (``column_widths``, ``horizontal_spacing``, ``specs``, …)."""
    if cols is None:
        cols = max(1, -(-len(titles) // rows))
    fig = go.FigureWidget(make_subplots(rows=rows, cols=cols, subplot_titles=titles or None, **subplots))
    fig.update_layout(height=height, **(LAYOUT if layout is None else layout))
    return fig


def _place(at) -> dict:
    if at is None:
        return {}
    row, col, *secondary = at
    return dict(row=row, col=col, **({"secondary_y": True} if secondary and secondary[0] else {}))


def _style(colour, **style) -> dict:
    return dict(color=colour, **{k: v for k, v in style.items() if v is not None})


def key_last(fig, key: str | None) -> None:
    """Key the trace just added to ``fig`` (by a plotly ``add_…``) ``key``, for :func:`put` (None: no key)."""
    if key is not None:
        fig.data[-1]._symsgd_key = key  # by position: the trace just added is the last one


def line(fig, name: str | None, colour: str, at=None, width: float | None = None, dash: str | None = None,
         x=None, y=None, key: str | None = None, **more) -> None:
    """Add a line trace named ``name`` (``None``: unnamed, out of the legend unless ``more`` says otherwise) in
    ``colour`` (``width`` px, plotly ``dash``) to panel ``at``, keyed ``key`` for :func:`put` (None: a trace never
    redrawn); ``more``: further scatter keywords."""
    fig.add_scatter(x=[] if x is None else x, y=[] if y is None else y, mode="lines",
                    line=_style(colour, width=width, dash=dash), **({} if name is None else {"name": name}), **more,
                    **_place(at))
    key_last(fig, key)


def markers(fig, name: str | None, colour: str, at=None, size: float | None = None, symbol: str | None = None,
            x=None, y=None, key: str | None = None, **more) -> None:
    """Add a marker trace named ``name`` in ``colour`` (``size`` px, plotly ``symbol``) to panel ``at``, keyed
    ``key`` for :func:`put`; ``more``: further scatter keywords (e.g. ``marker_line=dict(...)``)."""
    fig.add_scatter(x=[] if x is None else x, y=[] if y is None else y, mode="markers",
                    marker=_style(colour, size=size, symbol=symbol), **({} if name is None else {"name": name}),
                    **more, **_place(at))
    key_last(fig, key)


def keyed(fig, key: str):
    """The one trace of ``fig`` keyed ``key`` (given to :func:`line` or :func:`markers`, or by :func:`key_last`).
    KeyError, listing the keys, when there is none; ValueError when two traces share a key."""
    data = fig.data
    ids = tuple(map(id, data))
    cached = fig.__dict__.get("_symsgd_keys")
    if cached is None or cached[0] != ids:  # traces added, removed or reordered since: index them again
        index: dict = {}
        for trace in data:
            k = trace.__dict__.get("_symsgd_key")
            if k is None:
                continue
            if k in index:
                raise ValueError(f"two traces of the figure are keyed {k!r}")
            index[k] = trace
        cached = fig._symsgd_keys = (ids, index)
    try:
        return cached[1][key]
    except KeyError:
        raise KeyError(f"no trace keyed {key!r}; keys: {sorted(cached[1])}") from None


def put(fig, key: str, **props) -> None:
    """Write ``props`` (``x``, ``y``, ``z``, ``visible``, ``name``, …) to the trace of ``fig`` keyed ``key``
    (:func:`keyed`): how every figure draws, by key and never by position."""
    keyed(fig, key).update(**props)


def axes(fig, at=None, x: str | None = None, y: str | None = None, xaxis: dict | None = None,
         yaxis: dict | None = None) -> None:
    """Title panel ``at``'s axes ``x`` and ``y``; ``xaxis``/``yaxis``: further axis keywords (``type``, ``range``…)."""
    place = _place(at)
    if x is not None or xaxis:
        fig.update_xaxes(**({} if x is None else {"title_text": x}), **(xaxis or {}),
                         **{k: v for k, v in place.items() if k != "secondary_y"})
    if y is not None or yaxis:
        fig.update_yaxes(**({} if y is None else {"title_text": y}), **(yaxis or {}), **place)
