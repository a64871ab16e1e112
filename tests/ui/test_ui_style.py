"""Figures every reader can use: one colour-blind-safe palette, never colour alone, readable labels.

Every controller of every notebook is built with its default settings and shown (``view()``, as a notebook
cell does); then, in each of its figures:

* every trace's colour (line, marker, fill) is one of the palette's (:data:`symsgd_core.ui.style.PALETTE` or
  :data:`~symsgd_core.ui.style.NEUTRALS`), so the palette is defined once and used by every figure;
* no two drawn traces of one subplot differ by colour only (same kind, mode, dash, marker and bar pattern);
* every slider and button has a non-empty, descriptive label (a button without text has a tooltip), and every
  input is a standard ipywidgets control (keyboard-operable: sliders take the arrow keys, buttons Enter/Space);
* no text a figure shows (titles, axis titles, tick labels, annotations, legend names) has TeX-like markup such as
  ``W_{ℓ+1}`` or ``δ^{2/L}``: plotly shows it as typed, so sub- and superscripts are ``<sub>``/``<sup>``;
* a colour bar between two subplots leaves the next subplot's tick labels and axis title their room.
"""

from __future__ import annotations

import re

import ipywidgets as widgets
import plotly.graph_objects as go
import pytest
from test_ui_words import texts

from symsgd_core.ui import base
from symsgd_core.ui.style import PALETTE, PLOT_BACKGROUND, allowed_colour, finish, log_axes, rgba
from symsgd_jupyter.distinguish import hex_colour, style_key
from symsgd_jupyter.figure_checks import SLIDER_TYPES
from symsgd_jupyter.text_checks import word_problems
from tools.figure_data import controller_classes

# one worker for the module: its module-scoped ``shown`` controllers are then built once each, not again on
# every worker that gets one of their tests
pytestmark = pytest.mark.xdist_group("test-ui-style")


CLASSES = controller_classes()


#: Each controller class built once for this module (one worker: see pytestmark): the controller after ``view()``,
#: and how many messages its widgets sent to the front end meanwhile (:func:`built`).
_BUILT: dict[type, tuple[base.Controller, int]] = {}


def built(cls: type) -> tuple[base.Controller, int]:
    """A controller of ``cls`` with its defaults, after ``view()`` (as a notebook shows it), and the number of
    widget messages building and showing it sent (``Widget._send``: one kernel output message each)."""
    if cls not in _BUILT:
        with _Messages() as sent:
            ctl = cls()
            ctl.view()
        _BUILT[cls] = (ctl, sent.n)
    return _BUILT[cls]


@pytest.fixture(scope="module", params=CLASSES, ids=lambda c: c.__name__)
def shown(request):
    """A controller of ``request.param`` with its defaults, after ``view()`` (as a notebook shows it)."""
    return built(request.param)[0]


def _trace_colours(trace) -> list:
    out = []
    line, marker = getattr(trace, "line", None), getattr(trace, "marker", None)
    for c in (getattr(line, "color", None), getattr(marker, "color", None), getattr(trace, "fillcolor", None)):
        if isinstance(c, str):
            out.append(c)
    if marker is not None and not isinstance(marker.color, str) and marker.color is not None:
        out.extend(c for c in marker.color if isinstance(c, str))
    if marker is not None and getattr(marker, "line", None) is not None and isinstance(marker.line.color, str):
        out.append(marker.line.color)
    return out


def test_every_controller_class_is_covered():
    assert len(CLASSES) >= 20, [c.__name__ for c in CLASSES]


def test_every_trace_colour_is_from_the_palette(shown):
    bad = [(i, tr.name, c) for fig in shown.figures for i, tr in enumerate(fig.data) for c in _trace_colours(tr)
           if not allowed_colour(c)]
    assert not bad, f"{type(shown).__name__}: colours outside symsgd_core.ui.style: {bad}"


def test_no_two_curves_differ_by_colour_only(shown):
    for k, fig in enumerate(shown.figures):
        seen: dict[tuple, dict] = {}
        for tr in fig.data:
            if tr.visible is False or tr.type not in ("scatter", "scattergl", "bar"):
                continue
            if tr.type != "bar" and tr.line.width == 0 and "markers" not in (tr.mode or ""):
                continue  # the edge of a filled band (told apart by its fill and legend entry)
            colours = _trace_colours(tr)
            seen.setdefault(style_key(tr), {}).setdefault(colours[0].upper() if colours else None, []).append(tr.name)
        clashes = {key: names for key, names in seen.items() if len(names) > 1}
        assert not clashes, f"{type(shown).__name__} figure {k}: told apart by colour only: {clashes}"


def test_every_slider_and_button_has_a_descriptive_label(shown):
    stack = [shown.view()]
    while stack:
        w = stack.pop()
        stack.extend(getattr(w, "children", ()))
        if isinstance(w, SLIDER_TYPES) or isinstance(w, (widgets.Dropdown, widgets.ToggleButtons,
                                                               widgets.RadioButtons, widgets.Checkbox)):
            assert len(w.description.strip()) >= 1 and w.description.strip() not in ("x", "value"), w
            assert w.style.description_width in ("initial", "") or w.style.description_width, w
        if isinstance(w, (widgets.Button, widgets.ToggleButton)):
            assert (w.description.strip() and len(w.description.strip()) >= 3) or w.tooltip, \
                f"{type(shown).__name__}: a button without a label: {w}"


def test_figures_keep_a_white_paper_with_dark_text_for_the_dark_theme(shown):
    for fig in shown.figures:
        assert fig.layout.paper_bgcolor.upper() == "#FFFFFF" and fig.layout.font.color == "#222222"


def test_no_status_line_or_text_alternative_holds_ascii_math_or_an_unrounded_float(shown):
    """At the defaults (both ends of every slider: tests/ui/test_ui_words.py, slow)."""
    found = {what: word_problems(text) for what, text in texts(shown).items() if word_problems(text)}
    assert not found, f"{type(shown).__name__}: {found}"


def plot_background(fig) -> str:
    """The plot area's background a figure is drawn with (hex): its own, else its template's (plotly's default
    template, used by a figure that sets none, has the grey-blue "#E5ECF6")."""
    template = fig.layout.template
    return hex_colour(fig.layout.plot_bgcolor or (template.layout.plot_bgcolor if template is not None else None)
                      or "#E5ECF6")


def test_every_figure_has_the_one_plot_background(shown):
    """Notebooks 00, 01 and 03 drew on white, 02, 04 and 05 on plotly's grey-blue; now every figure on
    :data:`~symsgd_core.ui.style.PLOT_BACKGROUND`, with the white template's grid lines (visible on it)."""
    for k, fig in enumerate(shown.figures):
        assert plot_background(fig) == hex_colour(PLOT_BACKGROUND), f"{type(shown).__name__} figure {k}"
        assert hex_colour(fig.layout.template.layout.xaxis.gridcolor) != hex_colour(PLOT_BACKGROUND)


def test_the_plot_background_check_sees_a_figure_without_the_projects_layout():
    fig = go.Figure()
    assert plot_background(fig) == "#E5ECF6"  # plotly's default, what notebooks 02, 04, 05 showed
    finish(fig)
    assert plot_background(fig) == hex_colour(PLOT_BACKGROUND)


def test_every_log_axis_labels_its_ticks_as_powers_of_ten(shown):
    """plotly labels a log axis with SI prefixes by default ("100µ, 1n, 1f"), which a reader takes for units."""
    found = [ax for fig in shown.figures for ax in log_axes(fig)]
    bad = [(ax.plotly_name, ax.exponentformat, ax.showexponent) for ax in found
           if ax.exponentformat != "power" or ax.showexponent not in (None, "all")]
    assert not bad, f"{type(shown).__name__}: log axes without powers of ten: {bad}"


def test_there_are_log_axes_and_finish_formats_them():
    assert sum(len(log_axes(f)) for cls in CLASSES for f in built(cls)[0].figures) >= 15
    fig = go.Figure(layout=dict(yaxis=dict(type="log"), xaxis2=dict(type="log"), xaxis=dict(type="linear")))
    assert {ax.plotly_name for ax in log_axes(fig)} == {"xaxis2", "yaxis"}
    assert all(ax.exponentformat is None for ax in log_axes(fig))  # plotly's default: SI prefixes
    finish(fig)
    assert all(ax.exponentformat == "power" for ax in log_axes(fig)) and fig.layout.xaxis.exponentformat is None


#: A text or background colour set in a widget's HTML (a theme variable, ``var(--jp-…)``, adapts to the theme).
_FIXED_COLOUR = re.compile(r"(?<![\w-])(?:color|background(?:-color)?)\s*:\s*(?!var\(--jp-)[^;\"']+", re.I)


def test_every_text_of_a_controller_keeps_the_themes_colours(shown):
    """Status lines, notes and panels take their text and background colours from the theme (a warning is marked
    by a coloured border only), so JupyterLab's dark theme stays readable in every notebook; the browser suite
    checks the dark theme's contrast once, on the gallery notebook."""
    before = shown.status.value
    shown.say("a warning", "warning")
    html_values, stack = [], [shown.view()]
    while stack:
        w = stack.pop()
        stack.extend(getattr(w, "children", ()))
        if isinstance(w, (widgets.HTML, widgets.HTMLMath)):
            html_values.append(w.value)
    shown.status.value = before
    assert _FIXED_COLOUR.search('<span style="color:#b91c1c">') and not _FIXED_COLOUR.search(
        '<span style="border-left:4px solid #b91c1c;color:var(--jp-ui-font-color1)">')  # the pattern itself
    fixed = [m.group(0) for v in html_values for m in _FIXED_COLOUR.finditer(v)]
    assert html_values and not fixed, f"{type(shown).__name__}: colours that ignore the theme: {fixed[:5]}"


# -------------------------------------------------------------------------- the helpers themselves
class _Messages:
    """Counts the messages widgets send to the front end (``Widget._send``: one kernel output message each) inside
    a ``with`` block; ``n`` keeps the count afterwards."""

    def __enter__(self) -> _Messages:
        self.n = 0
        self._patch = pytest.MonkeyPatch()
        send = widgets.Widget._send

        def counting(widget, msg, buffers=None):
            self.n += 1
            return send(widget, msg, buffers)

        self._patch.setattr(widgets.Widget, "_send", counting)
        return self

    def __exit__(self, *exc) -> None:
        self._patch.undo()


#: Messages a controller may send while it is built and first shown. The kernel's output socket and the server's
#: subscription each queue at most 1 000 messages (ZeroMQ's default high-water mark; neither ipykernel nor
#: jupyter_server changes it) and drop the rest when the server reads slowly: one cell must stay far below that.
#: Half the kernel's own queue leaves room for the cells before and after it.
MESSAGE_BUDGET = 500


@pytest.mark.slow  # every controller built: not in `make test-fast`
def test_no_controller_floods_the_kernels_output_queue():
    """Notebook 04's TrapController sent ~2 600 messages (one per style tried): on a busy machine the queue dropped
    the next controller's widgets, whose figure then never drew ("widget model not found"). Counted while each
    controller was built and shown (:func:`built`, shared with the other tests of this module)."""
    counts = {cls.__name__: built(cls)[1] for cls in CLASSES}
    assert all(n > 0 for n in counts.values()), counts  # the counter sees every controller's messages
    over = {k: n for k, n in counts.items() if n > MESSAGE_BUDGET}
    assert not over, f"controllers over {MESSAGE_BUDGET} messages: {over} (all: {counts})"


def test_palette_helpers():
    assert rgba("blue", 0.25) == "rgba(0,114,178,0.25)" and allowed_colour(rgba("orange", 0.1))
    assert allowed_colour("#000") and allowed_colour("black") and allowed_colour("#e69f00")
    assert not allowed_colour("#2563eb") and not allowed_colour(None) and not allowed_colour("red")
    with pytest.raises(ValueError):
        rgba("blue", 2.0)


def test_every_controller_names_its_controls_for_screen_readers(shown):
    """ipywidgets gives a slider handle no accessible name: the AccessibleNames helper (symsgd_jupyter/a11y.py) copies
    the visible description onto it in the page; every controller carries one (the browser audit checks the result)."""
    from symsgd_jupyter.a11y import AccessibleNames

    helpers = [c for c in shown.view().children if isinstance(c, AccessibleNames)]
    assert len(helpers) == 1 and helpers[0].layout.display == "none" and "aria-label" in helpers[0]._esm


def test_the_accessible_names_helper_sends_its_whole_state_when_it_opens(monkeypatch):
    """anywidget drops every update to a model whose start missed its 2 s limit (a slow or busy page): the helper's
    class and hidden layout must reach the page in the comm-open messages, with no update after them (an
    ``add_class`` afterwards left the helper without its class in a 6× slowed JupyterLab page)."""
    import comm
    from comm.base_comm import BaseComm

    from symsgd_jupyter.a11y import A11Y_CLASS, accessible_names

    sent = []

    class RecordingComm(BaseComm):
        def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
            sent.append((self.comm_id, msg_type, data))

    monkeypatch.setattr(comm, "create_comm", lambda **kwargs: RecordingComm(**kwargs))
    helper = accessible_names()
    layout_id = helper.layout.model_id
    by_model = {cid: [(t, d) for c, t, d in sent if c == cid] for cid in (helper.model_id, layout_id)}
    assert [t for t, _ in by_model[helper.model_id]] == ["comm_open"], by_model[helper.model_id]
    assert [t for t, _ in by_model[layout_id]] == ["comm_open"], by_model[layout_id]
    assert A11Y_CLASS in by_model[helper.model_id][0][1]["state"]["_dom_classes"]
    assert by_model[helper.model_id][0][1]["state"]["layout"] == f"IPY_MODEL_{layout_id}"
    assert by_model[layout_id][0][1]["state"]["display"] == "none"


def test_a_controller_restyles_when_its_figure_gains_traces_and_not_on_every_slider_move():
    class Growing(base.Controller):
        def __init__(self):
            super().__init__()
            self.controls = {"n": widgets.IntSlider(value=1, min=1, max=3, description="curves")}
            self.figures = [go.FigureWidget()]
            self._wire()
            self.update()

        def _update(self, n):
            fig = self.figure
            colours = [PALETTE["blue"], PALETTE["vermillion"], PALETTE["orange"]]
            while len(fig.data) < n:
                fig.add_scatter(x=[0, 1], y=[0, len(fig.data)], mode="lines", line=dict(color=colours[len(fig.data)]))

    ctl = Growing()
    ctl.view()
    ctl.set(n=3)
    assert len({style_key(t) for t in ctl.figure.data}) == 3  # the two new curves got their own dashes
    ctl.figure.data[1].line.dash = "solid"  # (a style the controller itself set: kept while the traces stay)
    ctl.set(n=3)
    assert ctl.figure.data[1].line.dash == "solid"


def test_no_figure_offers_a_control_that_reaches_the_internet(shown):
    """Every figure carries the shared config: no "Share chart…" (plotly.js 4 shows it unless told not to), no
    Chart Studio button, no logo link (style.PLOTLY_CONFIG); the browser checks see the same in the pages."""
    for fig in shown.figures:
        cfg = fig._config
        assert cfg["showSendToCloud"] is False and cfg["displaylogo"] is False and cfg["showLink"] is False
        assert {"sendChartToCloud", "sendDataToCloud"} <= set(cfg["modeBarButtonsToRemove"])


#: TeX-like markup plotly would show as typed: ``_`` or ``^`` (sub/superscript), a backslash command, a ``$``.
RAW_TEX = re.compile(r"[_^]|\\[A-Za-z]+|\$")


def shown_texts(fig) -> list[tuple[str, str]]:
    """``(where, text)`` of every text ``fig`` shows: layout titles, axis titles, tick labels and annotations (the
    template aside), and trace names (legend and hover)."""
    out = []

    def walk(obj, where):
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k in ("text", "title", "ticktext", "name") and isinstance(v, str | list):
                    for t in (v if isinstance(v, list) else [v]):
                        if isinstance(t, str):
                            out.append((f"{where}.{k}", t))
                walk(v, f"{where}.{k}")
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                walk(v, f"{where}[{i}]")

    layout = {k: v for k, v in fig.layout.to_plotly_json().items() if k != "template"}
    walk(layout, "layout")
    out += [(f"data[{i}].name", tr.name) for i, tr in enumerate(fig.data) if isinstance(tr.name, str)]
    return out


def test_figure_text_has_no_raw_tex(shown):
    raw = [(k, where, text) for k, fig in enumerate(shown.figures) for where, text in shown_texts(fig)
           if RAW_TEX.search(text)]
    assert not raw, f"{type(shown).__name__}: figure text with TeX-like markup (use <sub>/<sup>): {raw[:8]}"


def test_raw_tex_is_found_in_titles_ticks_annotations_and_names():
    fig = go.Figure(go.Scatter(y=[1], name="a_c = (2γ/|g|)^{1/(L−2)}"),
                    layout=dict(title="p ∝ v^a", annotations=[dict(text="W_{ℓ+1}")],
                                yaxis=dict(ticktext=["B_0"], tickvals=[0])))
    assert {where for where, t in shown_texts(fig) if RAW_TEX.search(t)} == {
        "layout.title.text", "layout.annotations[0].text", "layout.yaxis.ticktext", "data[0].name"}
    fig = go.Figure(go.Scatter(y=[1], name="a<sub>c</sub> = (2γ/|g|)<sup>1/(L−2)</sup>"))
    assert not [t for _, t in shown_texts(fig) if RAW_TEX.search(t)]


#: Width of a colour bar with its tick labels, as a fraction of the plot area at the notebooks' width (about 860 px:
#: a 30 px bar, 10 px padding and tick labels up to about 20 px).
COLORBAR_WIDTH = 0.07
#: Room a subplot's y axis takes left of its domain: tick labels (about 35 px), and with a title about 30 px more.
Y_TICKS, Y_TITLE = 0.04, 0.035


def colour_bar_clashes(fig) -> list[str]:
    """Colour bars that reach into the room the y axis of a subplot to their right needs (plotly places a colour bar
    by its ``x`` in plot-area fractions, left-anchored by default; nothing stops it overlapping)."""
    layout = fig.layout
    clashes = []
    for i, tr in enumerate(fig.data):
        if getattr(tr, "colorbar", None) is None or getattr(tr, "showscale", None) is False:
            continue
        if tr.type not in ("heatmap", "contour", "histogram2d", "histogram2dcontour") and not (
                getattr(getattr(tr, "marker", None), "showscale", None)):
            continue
        bar = tr.colorbar
        x = 1.02 if bar.x is None else bar.x
        left = x - (COLORBAR_WIDTH if bar.xanchor == "right" else COLORBAR_WIDTH / 2 if bar.xanchor == "center" else 0)
        right = left + COLORBAR_WIDTH
        for name in layout:
            if not name.startswith("xaxis"):
                continue
            xaxis = layout[name]
            start = (xaxis.domain or (0, 1))[0]
            if start <= x:
                continue  # a subplot left of the bar, or the bar's own
            yaxis = layout["yaxis" + (xaxis.anchor or "y")[1:]]
            room = Y_TICKS + (Y_TITLE if yaxis.title.text else 0.0)
            if right > start - room:
                clashes.append(f"trace {i}: colour bar {left:.2f}–{right:.2f} reaches the y axis of {name} "
                               f"(domain from {start:.2f}, its labels need {room:.3f} left of it)")
    return clashes


def test_colour_bars_leave_the_next_subplot_its_axis_labels(shown):
    clashes = [f"figure {k}: {c}" for k, fig in enumerate(shown.figures) for c in colour_bar_clashes(fig)]
    assert not clashes, f"{type(shown).__name__}: {clashes}"


def test_a_colour_bar_over_the_next_axis_title_is_found():
    from plotly.subplots import make_subplots

    def figure(spacing, x):
        fig = make_subplots(1, 2, horizontal_spacing=spacing)
        fig.add_heatmap(z=[[1, 2], [3, 4]], colorbar={"x": x}, row=1, col=1)
        fig.add_scatter(y=[1, 2], row=1, col=2)
        fig.update_yaxes(title_text="gradient component", row=1, col=2)
        return fig

    assert colour_bar_clashes(figure(0.12, 0.44))  # notebook 02's Euler figure as it was: ticks on the title
    assert not colour_bar_clashes(figure(0.2, 0.41))


#: TeX sub/superscripts or commands, which a status line (escaped HTML) or a figure would show as typed.
_TEX_IN_TEXT = re.compile(r"[_^]\{|\\(?:frac|mathrm|ell|gamma|eta|lambda|sigma|sqrt|cdot|top)\b")


def test_no_message_of_the_widget_layer_holds_tex():
    """Every string the widget layer writes (status lines, notes, titles), docstrings and f-string parts aside, is
    free of TeX markup: a status line is escaped HTML, so ``a^{L−1}`` would show as typed (the browser suite scans
    the rendered pages too: ``window.__symsgd.rawMarkup``)."""
    import ast
    import pathlib

    found = []
    for path in sorted(pathlib.Path(base.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and "$" not in node.value and _TEX_IN_TEXT.search(node.value)):
                found.append(f"{path.name}:{node.lineno}: {node.value[:80]!r}")
    assert not found, found
    assert _TEX_IN_TEXT.search("(+|g|a^{L−1})") and not _TEX_IN_TEXT.search("(+|g|aᴸ⁻¹), W_ℓ, 2^5")
