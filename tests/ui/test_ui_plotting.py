"""ui/plotting.py: each helper builds the trace, panel and axes plotly would get from the keywords it spells out."""

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from symsgd_core.ui.plotting import LAYOUT, axes, line, markers, panels


def _json(fig) -> dict:
    """The figure's JSON without the traces' uids (random per trace)."""
    out = fig.to_plotly_json()
    for trace in out["data"]:
        trace.pop("uid", None)
    return out


def test_panels_is_make_subplots_with_the_shared_layout():
    fig = panels("a", "b", height=300, column_widths=[0.6, 0.4])
    ref = go.FigureWidget(make_subplots(rows=1, cols=2, subplot_titles=("a", "b"), column_widths=[0.6, 0.4]))
    ref.update_layout(height=300, **LAYOUT)
    assert _json(fig) == _json(ref)
    assert panels("a", "b", "c", "d", height=200, rows=2).layout.xaxis4 is not None  # 2 × 2
    own = panels(height=200, layout={})
    assert own.layout.height == 200 and own.layout.margin.l is None and own.layout.legend.orientation is None


def test_line_and_markers_spell_out_their_keywords_and_place_them():
    fig = panels("a", "b", height=300, specs=[[{}, {"secondary_y": True}]])
    line(fig, "G", "#000000", at=(1, 2), width=2, dash="dash", showlegend=False)
    markers(fig, "start", "#E69F00", at=(1, 2, True), size=9, x=[1.0], y=[2.0])
    line(fig, None, "#000000")
    ref = panels("a", "b", height=300, specs=[[{}, {"secondary_y": True}]])
    ref.add_scatter(x=[], y=[], mode="lines", line=dict(color="#000000", width=2, dash="dash"), name="G",
                    showlegend=False, row=1, col=2)
    ref.add_scatter(x=[1.0], y=[2.0], mode="markers", marker=dict(color="#E69F00", size=9), name="start", row=1,
                    col=2, secondary_y=True)
    ref.add_scatter(x=[], y=[], mode="lines", line=dict(color="#000000"))
    assert _json(fig) == _json(ref)
    assert fig.data[1].yaxis == "y3"  # the secondary axis, not the panel's first


def test_axes_titles_the_named_panel_only():
    fig = panels("a", "b", height=300)
    axes(fig, (1, 2), x="t", y="G", yaxis=dict(type="log"))
    assert fig.layout.xaxis2.title.text == "t" and fig.layout.yaxis2.title.text == "G"
    assert fig.layout.yaxis2.type == "log" and fig.layout.xaxis.title.text is None and fig.layout.yaxis.type is None
