"""Text alternatives of figures: generated from the figure and the controller's state, one per figure,
kept up to date, and in the page next to the figures (the browser suite checks the link, ``aria-describedby``)."""

from __future__ import annotations

import html
import re

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots
from test_ui_every_slider import one_keyboard_step
from test_ui_style import CLASSES

from symsgd_core.ui.base import status_text
from symsgd_jupyter.describe import (
    ALT_CLASS,
    figure_description,
    plain_text,
    subscript,
    superscript,
    visually_hidden_html,
)
from symsgd_jupyter.figure_checks import slider_names

# one worker for the module: its module-scoped ``shown`` controllers are then built once each, not again on
# every worker that gets one of their tests
pytestmark = pytest.mark.xdist_group("test-ui-describe")


def test_plain_text_reads_plotlys_markup_as_words():
    assert plain_text("T<sub>c</sub> (L = 1)") == "T c (L = 1)"
    assert plain_text("γLδ<sup>2/L</sup> − gδ") == "γLδ²ᐟᴸ − gδ"  # Unicode superscripts where each has one
    assert plain_text("(a<sup>L</sup> − 1)²") == "(aᴸ − 1)²"  # not "(a to the power L − 1)²", which is ambiguous
    assert plain_text("B<sub>1</sub>, E[∇F<sub>nat</sub>], 1 − η<sup>2</sup>") == "B₁, E[∇Fₙₐₜ], 1 − η²"
    assert plain_text("v<sup>ν + 1</sup> − 1") == "v to the power (ν + 1) − 1"  # no superscript ν: in words
    assert plain_text("a<br>b &amp; <b>c</b>") == "a b & c"
    assert plain_text(None) == ""


def test_unicode_super_and_subscripts_or_none():
    assert superscript("−7/2") == "⁻⁷ᐟ²" and superscript(3000) == "³⁰⁰⁰" and superscript("t") == "ᵗ"
    assert subscript(1) == "₁" and subscript("r") == "ᵣ" and subscript("nat") == "ₙₐₜ"
    assert superscript("k*") is None and subscript("L") is None and subscript("c") is None and superscript("") is None


def test_a_description_says_what_is_plotted_the_settings_and_the_finding():
    fig = make_subplots(1, 2, subplot_titles=("(a) penalty", "(b) cost"))
    fig.add_scatter(y=[1, 2], name="L = 2", row=1, col=1)
    fig.add_scatter(y=[1, 3], name="L = 4", row=1, col=1)
    fig.add_scatter(y=[0, 1], name="δ<sup>*</sup>", row=1, col=2)
    fig.add_scatter(y=[0, 1], name="hidden", visible=False, row=1, col=2)
    fig.update_xaxes(title_text="singular value s", row=1, col=1)
    fig.update_yaxes(title_text="min ‖θ‖²", row=1, col=1)
    fig.update_layout(title="the penalty")
    text = figure_description(fig, {"depth L": "4", "γ": "0.05"}, "a trap at θ = 0", number=1, of=2)
    assert text.startswith("Figure 1 of 2: the penalty.")
    assert "Panels: (a) penalty: min ‖θ‖² against singular value s; (b) cost" in text
    assert "Curves: L = 2; L = 4; δ to the power (*)." in text and "hidden" not in text
    assert "Settings: depth L = 4, γ = 0.05." in text and text.endswith("Finding: a trap at θ = 0.")
    grid = make_subplots(2, 2, subplot_titles=("", "top right", "bottom left", ""))  # titles by position, not order
    for r, c in ((1, 1), (1, 2), (2, 1), (2, 2)):
        grid.add_scatter(y=[0], row=r, col=c)
    grid.update_xaxes(title_text="x", row=1, col=1)
    panels = figure_description(grid).split("Panels: ")[1]
    assert panels.startswith("a value against x; top right; bottom left")
    many = go.Figure([go.Scatter(y=[k], name=f"run {k}") for k in range(12)])
    assert "run 7, and 4 more" in figure_description(many)


def test_the_hidden_text_escapes_and_names_the_figure():
    out = visually_hidden_html("a < b", 'the "title"')
    assert 'class="symsgd-figure-alt-text"' in out and "a &lt; b" in out and 'data-name="the &quot;title&quot;"' in out
    assert "clip:rect(0 0 0 0)" in out  # read by screen readers, not shown


def _hidden_text(value: str) -> str:
    """The text of a description element (what a screen reader reads)."""
    return html.unescape(re.fullmatch(r"<div [^>]*>(.*)</div>", value, re.S).group(1))


def _figures_in_order(root) -> list:
    out, stack = [], [root]
    while stack:
        w = stack.pop(0)
        if isinstance(w, go.FigureWidget):
            out.append(w)
        stack[0:0] = list(getattr(w, "children", ()))
    return out


@pytest.fixture(scope="module", params=CLASSES, ids=lambda c: c.__name__)
def shown(request):
    ctl = request.param()
    root = ctl.view()
    return ctl, root


def test_every_figure_has_a_description_in_the_page_in_the_figures_order(shown):
    ctl, root = shown
    alts = [w for w in root.children if ALT_CLASS in getattr(w, "_dom_classes", ())]
    assert len(alts) == len(ctl.figures) >= 1
    # the page pairs the k-th plot of the controller with the k-th description: the figures must be shown in order
    assert _figures_in_order(root) == list(ctl.figures)
    finding = " ".join(status_text(ctl).split())[:40]
    for k, alt in enumerate(alts):
        text = _hidden_text(alt.value)
        assert text == ctl.describe(k) and len(text) > 20
        assert text.startswith(f"Figure {k + 1} of {len(alts)}" if len(alts) > 1 else "Figure")
        assert finding in text  # the status line's finding, as shown
        for label, value in ctl.settings_shown().items():
            assert f"{label} = {value}" in text


def test_the_description_follows_the_sliders():
    from symsgd_core.ui.rank_jumps import PenaltyController

    ctl = PenaltyController()
    root = ctl.view()
    alt = next(w for w in root.children if ALT_CLASS in getattr(w, "_dom_classes", ()))
    name = slider_names(ctl)[0]
    before = alt.value
    ctl.controls[name].value = one_keyboard_step(ctl.controls[name])
    label = plain_text(ctl.controls[name].description).rstrip(":")
    assert alt.value != before and f"{label} = {ctl.settings_shown()[label]}" in _hidden_text(alt.value)


def test_a_selection_built_at_its_first_option_is_described_by_its_label():
    """ipywidgets leaves a SelectionSlider's ``label`` empty when it starts at its first option: the description must
    still name the option ("route = row 0", not "route = ", as notebook 05's figures said)."""
    from symsgd_core.ui.sde_noise import JumpEventController

    ctl = JumpEventController()
    route = ctl.controls["route"]
    assert route.index == 0 and route.label == ""  # the widget state that hid the label
    assert ctl.settings_shown()["route"] == route.options[0] == "row 0"
    assert "route = row 0" in ctl.describe(0)
