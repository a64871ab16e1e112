"""ui/plotting.py: each helper builds the trace, panel and axes plotly would get from the keywords it spells out."""

import pathlib
import re

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

import symsgd_core.ui
from symsgd_core.ui.plotting import LAYOUT, axes, key_last, keyed, line, markers, panels, put


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


def test_a_trace_is_written_by_its_key_whatever_its_position_and_the_key_is_never_sent():
    fig = panels("a", "b", height=300)
    line(fig, "G", "#000000", at=(1, 1), key="G")
    markers(fig, None, "#E69F00", at=(1, 2), key="point")
    fig.add_bar(x=[], y=[], name="bars", row=1, col=2)
    key_last(fig, "bars")
    line(fig, "never redrawn", "#000000", x=[0, 1], y=[1, 1])
    put(fig, "point", x=[1.0], y=[2.0])
    put(fig, "bars", x=["a"], y=[3.0])
    assert fig.data[1].x == (1.0,) and fig.data[2].y == (3.0,) and fig.data[0].x == ()
    fig.data = [fig.data[2], fig.data[3], fig.data[1], fig.data[0]]  # reordered: the keys follow their traces
    put(fig, "G", y=[5.0])
    assert keyed(fig, "G") is fig.data[3] and fig.data[3].y == (5.0,) and fig.data[2].x == (1.0,)
    assert "symsgd" not in str(fig.to_plotly_json())  # a key is Python-side only, not a plotly property
    with pytest.raises(KeyError, match="no trace keyed 'nope'; keys: \\['G', 'bars', 'point'\\]"):
        put(fig, "nope", x=[])
    line(fig, "twin", "#000000", key="G")
    with pytest.raises(ValueError, match="two traces of the figure are keyed 'G'"):
        keyed(fig, "G")


#: A figure module writes a trace by its key (``plotting.put``); a lookup by position (``.data[k]``, ``.data[a:b]``,
#: or ``zip(fig.data, ...)``, which pairs traces with values by position) is allowed only on a line that says why,
#: with a comment ``# by position: <why>``.
POSITIONAL = re.compile(r"\.data\[|zip\([^)]*\.data\b")


def test_no_figure_module_finds_a_trace_by_its_position_without_saying_why():
    found = []
    for path in sorted(pathlib.Path(symsgd_core.ui.__file__).parent.glob("*.py")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = text.split("#", 1)[0]
            if POSITIONAL.search(code) and not re.search(r"# by position: \S", text):
                found.append(f"{path.name}:{number}: {text.strip()}")
    assert not found, "traces looked up by position (write them by key: plotting.put):\n" + "\n".join(found)


@pytest.mark.parametrize("text, flagged", [("fig.data[3].x = x", True), ("for tr in fig.data[2:]:", True),
                                           ("for tr, y in zip(fig.data, ys):", True),
                                           ("fig.data[-1]._k = k  # by position: the trace just added", False),
                                           ("for tr in fig.data:", False), ("put(fig, 'G', y=y)", False)])
def test_the_positional_lookup_rule_flags_what_it_should(text, flagged):
    code = text.split("#", 1)[0]
    assert (bool(POSITIONAL.search(code)) and not re.search(r"# by position: \S", text)) == flagged
