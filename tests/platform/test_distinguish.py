"""symsgd_jupyter.distinguish: no two curves of a figure told apart by colour only, restyled in one update."""

from __future__ import annotations

import ipywidgets as widgets
import plotly.graph_objects as go

from symsgd_jupyter import distinguish as dist
from symsgd_jupyter.distinguish import distinguish, hex_colour, style_key

BLUE, VERMILLION, ORANGE = "#0072B2", "#D55E00", "#E69F00"


def test_distinguish_restyles_colour_only_twins_and_keeps_same_colour_runs_alike():
    fig = go.FigureWidget()
    for c in (BLUE, VERMILLION, BLUE, ORANGE):
        fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(color=c))
    fig.add_scatter(x=[0], y=[0], mode="markers", marker=dict(color=BLUE))
    fig.add_scatter(x=[0], y=[0], mode="markers", marker=dict(color=ORANGE))
    fig.add_bar(x=[0], y=[1], marker_color=BLUE)
    fig.add_bar(x=[0], y=[1], marker_color=ORANGE)
    assert distinguish(fig) == 4  # one line each of vermillion and orange, one marker trace, one bar
    dashes = [fig.data[i].line.dash or "solid" for i in range(4)]
    assert dashes[0] == dashes[2] and len({dashes[0], dashes[1], dashes[3]}) == 3
    assert fig.data[4].marker.symbol != fig.data[5].marker.symbol
    assert fig.data[6].marker.pattern.shape != fig.data[7].marker.pattern.shape
    assert distinguish(fig) == 0  # idempotent
    many = go.FigureWidget()
    for i in range(12):
        many.add_scatter(x=[0, 1], y=[0, i], mode="lines", line=dict(color=f"#{i:02X}0000"))
    distinguish(many)
    assert len({style_key(t) for t in many.data}) == 12


def _twins(n: int) -> go.FigureWidget:
    """``n`` line traces in ``n // 4`` colours, each colour four times: curves of one colour are runs (they keep one
    style), curves of different colours are colour-only twins (distinguish restyles them)."""
    fig = go.FigureWidget()
    for i in range(n):
        fig.add_scatter(x=[0, 1], y=[0, i], mode="lines", line=dict(color=f"#{(i % (n // 4)) * 8:02X}0000"))
    return fig


def test_distinguish_sends_its_result_in_one_update_message(monkeypatch):
    """The search tries styles on a data-free copy: whatever the number of traces and tries, a FigureWidget gets
    one ``_py2js_update`` (sent, then cleared: two messages; plus plotly's two edit ids), and the styles are those
    of the search done in place."""
    sent = []
    send = widgets.Widget._send
    monkeypatch.setattr(widgets.Widget, "_send", lambda w, msg, buffers=None: sent.append(msg) or send(w, msg, buffers))
    for n in (8, 80):
        fig = _twins(n)
        in_place = go.Figure(fig)
        expected = dist._distinguish(in_place)
        sent.clear()
        assert distinguish(fig) == expected > 0
        assert len(sent) == 4, f"{n} traces: {len(sent)} messages"
        assert [style_key(t) for t in fig.data] == [style_key(t) for t in in_place.data]


def test_colours_are_read_in_every_notation():
    assert hex_colour("#0072b2") == hex_colour("#0072B2") == hex_colour("rgba(0, 114, 178, 0.3)") == BLUE
    assert hex_colour("#abc") == "#AABBCC" and hex_colour("Black") == "#000000" and hex_colour("red") is None
