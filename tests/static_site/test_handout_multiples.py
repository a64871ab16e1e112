"""The handout's small multiples (tools/site/edition/static/handout.js) of a figure of several panels, drawn in
Chromium without building the edition: a page holding one edition figure of three panels side by side (a log y axis,
a heat map, a panel whose y title is long), as notebook 02's orbit figure and notebook 01's spread panel are made.

Raised to print at 7 pt at half the page's width, such a figure's text took room its fixed panel domains do not
have: the right panel's y title was drawn over the heat map beside it (02), the log axis's labels over each other
(01). ``symsgdHandout.overlaps`` finds both; after ``step`` nothing of a small multiple runs into anything.
"""

from __future__ import annotations

import json

import pytest

from tools.site.edition import assets, handout

pytestmark = pytest.mark.browser

#: The right panel's y title (notebook 02's orbit figure).
LONG_TITLE = "L and G on the orbit"
#: Slider values of the probe figure (its frames).
LABELS = ["0.5", "1", "2", "4"]
#: The printed size a small multiple's tick labels may not go under, pt (the issue: legible at ≥ ~6 pt).
LEGIBLE_PT = 6.0
#: A one-pixel PNG (a photograph H.place can decode).
PIXEL_PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAAS"
             "UVORK5CYII=")


#: The probe's width, px (notebook 02's orbit figure as the edition draws it).
WIDTH = 1088


def probe_figure(gap: float = 0.08) -> dict:
    """A plotly figure WIDTH px wide of three panels in a row, ``gap`` (paper fraction) between them (notebook 02's
    orbit figure: 0.08), with one frame per LABELS. Left: a log y axis spaced by the figure at 1, 2 and 5 of each
    decade (dtick "D2", notebook 01's spread panel); middle: a 2 × 2 heat map with category labels; right: a line
    whose y title is LONG_TITLE."""
    w = (1 - 2 * gap) / 3
    domains = [[0, w], [w + gap, 2 * w + gap], [1 - w, 1]]

    def traces(scale: float) -> list[dict]:
        t = [0.5 * k for k in range(41)]
        return [{"type": "scatter", "x": t, "y": [0.5 * scale / (1 + s) ** 2 for s in t], "xaxis": "x", "yaxis": "y",
                 "name": "spread"},
                {"type": "heatmap", "z": [[scale, -scale], [0.5, 0.25]], "x": ["j = 1", "j = 2"],
                 "y": ["i = 1", "i = 2"], "xaxis": "x2", "yaxis": "y2", "showscale": False, "name": "M"},
                {"type": "scatter", "x": [0.35, 1, 2, 2.8], "y": [scale, 1, 4, 11], "xaxis": "x3", "yaxis": "y3",
                 "name": "G"}]

    layout = {"width": WIDTH, "height": 372, "font": {"size": 12}, "showlegend": False,
              "margin": {"l": 50, "r": 20, "t": 50, "b": 50},
              "xaxis": {"domain": domains[0], "anchor": "y", "title": {"text": "t"}},
              "yaxis": {"anchor": "x", "type": "log", "title": {"text": "std across runs"},
                        "dtick": "D2",
                        "exponentformat": "power", "showexponent": "all"},
              "xaxis2": {"domain": domains[1], "anchor": "y2"}, "yaxis2": {"anchor": "x2"},
              "xaxis3": {"domain": domains[2], "anchor": "y3", "title": {"text": "λ"}},
              "yaxis3": {"anchor": "x3", "title": {"text": LONG_TITLE}},
              "annotations": [{"text": title, "x": (d[0] + d[1]) / 2, "y": 1.02, "xref": "paper", "yref": "paper",
                               "xanchor": "center", "yanchor": "bottom", "showarrow": False}
                              for title, d in zip(["spread", "M = (λu)(w/λ)ᵀ", "along the orbit"], domains)]}
    scales = [float(v) for v in LABELS]
    return {"data": traces(scales[1]), "layout": layout,
            "frames": [{"name": str(k), "data": traces(s)} for k, s in enumerate(scales)],
            "edition": {"autoranged": ["yaxis", "yaxis3"]}}


def open_probe(browser, figure: dict):
    """A page holding ``figure`` as the edition lays a figure out (render.py), drawn, with handout.js loaded."""
    meta = {"cell": 0, "output": 0, "label": "λ", "labels": LABELS, "current": 1}
    html = ("<html><body><div class='edition-controller'>"
            f"<script type='application/json' class='edition-controller-data'>{json.dumps(meta)}</script>"
            f"<div class='edition-figure' data-figure='0'><div class='edition-plot' style='width: {WIDTH}px'></div>"
            f"<script type='application/json' class='edition-figure-data'>{json.dumps(figure)}</script>"
            "</div></div></body></html>")
    page = browser.new_page(viewport={"width": 1200, "height": 1000}, device_scale_factor=1)
    page.set_content(html)
    page.add_script_tag(path=str(assets.plotly_js()))
    page.evaluate("""async () => {
      const plot = document.querySelector('.edition-plot');
      const spec = JSON.parse(document.querySelector('.edition-figure-data').textContent);
      await Plotly.newPlot(plot, spec.data, spec.layout);
      await Plotly.addFrames(plot, spec.frames);
      plot.dataset.edition = 'drawn';
    }""")
    page.add_script_tag(path=str(handout.STATIC / "handout.js"))
    return page


@pytest.fixture()
def probe(chromium):
    page = open_probe(chromium, probe_figure())
    yield page
    page.close()


def test_the_overlap_check_sees_a_title_over_another_panel_and_labels_over_each_other(chromium):
    """The check itself: panels 1 % apart leave the right panel's y title over the heat map, and the log axis's
    labels at 22 px in a panel 150 px high run into each other; the same figure with room reports nothing."""
    page = open_probe(chromium, probe_figure(gap=0.01))
    try:
        found = page.evaluate("() => symsgdHandout.overlaps(0)")
        assert any(f.startswith(f'yaxis3 title "{LONG_TITLE}" over the panel of xaxis2/yaxis2') for f in found), found
        page.evaluate("() => Plotly.relayout(document.querySelector('.edition-plot'), "
                      "{height: 250, 'yaxis.tickfont.size': 22, 'yaxis.range': [-2.3, 0]})")
        found = page.evaluate("() => symsgdHandout.overlaps(0)")
        assert any(f.startswith('"') and "10" in f for f in found), found  # two of the log labels
    finally:
        page.close()
    page = open_probe(chromium, probe_figure(gap=0.12))
    try:
        assert page.evaluate("() => symsgdHandout.overlaps(0)") == []
    finally:
        page.close()


def test_no_text_of_a_small_multiple_runs_into_another_panel_or_text(probe):
    """Every small multiple of the probe, as handout.py photographs it: nothing overlaps, its tick labels print at
    LEGIBLE_PT at least, and a y title left out for room is named in the caption under the multiples' title."""
    steps = probe.evaluate("() => symsgdHandout.plan(4)")[0]["steps"]
    assert steps == [0, 1, 2, 3]
    probe.evaluate("() => symsgdHandout.main(0)")
    for k in steps:
        pt = probe.evaluate("([k, s]) => symsgdHandout.step(0, k, s)", [k, steps])
        assert pt >= LEGIBLE_PT, f"step {k}: smallest tick label {pt} pt printed"
        found = probe.evaluate("() => symsgdHandout.overlaps(0)")
        assert found == [], f"step {k}: {found}"
    png = PIXEL_PNG
    probe.evaluate("([m, s]) => symsgdHandout.place(0, m, s)", [png, [[0, png], [1, png]]])
    note = probe.evaluate("() => (document.querySelector('.handout-multiples-note') || {}).textContent || ''")
    dropped = probe.evaluate("() => JSON.parse(document.querySelector('.edition-plot').dataset.handoutDropped "
                             "|| '[]')")
    for key, _, panel, count, shown in dropped:
        assert f"the {key[0]}-axis title “{shown}” of panel {panel} of {count}" in note, note
