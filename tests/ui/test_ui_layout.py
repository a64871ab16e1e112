"""No label over another panel: every controller's figures at their defaults, measured at the notebooks' width.

plotly makes room for the leftmost panel's tick labels and axis title (``automargin``), but never between two panels
of a row: a right-hand panel's y tick labels and y title are drawn into the gap ``horizontal_spacing`` leaves, and
over the left panel when they do not fit. Two checks, each on an estimate of what plotly draws (the sizes below were
measured on chromium screenshots of notebook 04 §5 and 05 §3 at :data:`NOTEBOOK_WIDTH`):

* :func:`labels_over_the_left_panel`: a y axis that shows tick labels beside a panel to its left in the same row
  either repeats that panel's rows (its axis ``matches`` the left one, or it has the same categories) or needs its
  widest label to fit in the gap. Notebook 05 §3's stored grid drew its 45-character row labels (~290 px) a second
  time, across panel (a)'s plot and error bars.
* :func:`titles_without_room`: a right-hand panel's y title needs, in the gap, its tick labels, the title's own line
  and standoff, and the left panel's last x tick label, which reaches past that panel's edge. Notebook 04 §5's
  "eigenvalue of η²C …" ran into panel (a)'s "40k", 04 §1's panel (b) title into (a)'s. A title also has to fit
  along its axis.

And notebook 04 §0 and §7 draw the SGD runs that rest at round-off as lines: a marker at every record made them a
solid band at 10⁻¹⁷.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots
from test_ui_style import CLASSES, built

from symsgd_core.ui.lifting import tex_number
from symsgd_core.ui.rank_jumps import TrapController

pytestmark = pytest.mark.xdist_group("test-ui-style")  # shares test_ui_style's built controllers

#: Width (px) of a notebook's output area at 1 280 px with JupyterLab's file browser open.
NOTEBOOK_WIDTH = 860
#: Average width (px) of one character of the figures' labels (measured: 05 §3's 45-character row label 242 px, 04
#: §2's 42-character y title 243 px; the wider of the two).
CHAR_PX = 5.8
#: plotly's pad between an axis and its tick labels (px).
TICK_PAD_PX = 5
#: Width (px) of a log axis's tick labels with their pad: powers of ten up to "10⁻³⁶" (measured ~35 px + the pad).
LOG_TICK_PX = 40
#: An axis title's line and plotly's standoff from the tick labels (measured: 04 §7's title column began 68 px left
#: of its axis, 40 of them tick labels).
TITLE_PX = 28
#: How far the left panel's last x tick label ("40k", centred on the panel's edge) reaches past its edge (measured
#: 10 px), plus 6 px between it and the next panel's labels (04 §7's title was 1 px from "40k": touching).
OVERHANG_PX = 16


def _cartesian_panels(fig) -> list[tuple[str, str, object, object]]:
    """``(x name, y name, x axis, y axis)`` of every cartesian panel of ``fig`` (an x axis and the y axis it is
    anchored to)."""
    out = []
    for name in fig.layout:
        if not name.startswith("xaxis"):
            continue
        xaxis = fig.layout[name]
        yname = "yaxis" + ((xaxis.anchor or "y")[1:] if (xaxis.anchor or "y") != "free" else "")
        if yname in fig.layout and fig.layout[yname] is not None:
            out.append((name, yname, xaxis, fig.layout[yname]))
    return out


def _plot_width(fig) -> float:
    margin = fig.layout.margin
    return NOTEBOOK_WIDTH - (margin.l if margin.l is not None else 80) - (margin.r if margin.r is not None else 80)


def _plot_height(fig) -> float:
    margin = fig.layout.margin
    return (fig.layout.height or 450) - (margin.t if margin.t is not None else 100) - (
        margin.b if margin.b is not None else 80)


def _short(name: str) -> str:
    return name.replace("axis", "")


def _categories(fig, yname: str) -> list[str]:
    """The category labels drawn on y axis ``yname``: the text y values of its traces (in order, once each)."""
    ref = _short(yname)
    found: dict[str, None] = {}
    for tr in fig.data:
        if (getattr(tr, "yaxis", None) or "y") != ref or getattr(tr, "y", None) is None:
            continue
        for v in tr.y:
            if isinstance(v, str):
                found.setdefault(v)
    return list(found)


def _tick_label_px(fig, yname: str, yaxis) -> float:
    """Estimated width (px) of the widest tick label of ``yaxis`` (with its pad), or 0 when it shows none."""
    if yaxis.showticklabels is False:
        return 0.0
    labels = list(yaxis.ticktext) if yaxis.ticktext else _categories(fig, yname)
    if labels:
        return max(len(str(t)) for t in labels) * CHAR_PX + TICK_PAD_PX
    if yaxis.type == "log":
        return LOG_TICK_PX
    ends = list(yaxis.range) if yaxis.range else _numeric_ends(fig, yname)
    if not ends:
        return LOG_TICK_PX  # nothing drawn yet: the widest numbers
    step = abs(ends[1] - ends[0]) / 5 or 1.0  # plotly draws about 5 to 8 ticks
    decimals = max(0, -math.floor(math.log10(step)))
    widest = max(len(f"{v:.{decimals}f}".replace("-", "−")) for v in ends)
    return widest * CHAR_PX + TICK_PAD_PX


def _numeric_ends(fig, yname: str) -> list[float]:
    """The smallest and largest finite y value of the traces on y axis ``yname`` (empty: none)."""
    ref, values = _short(yname), []
    for tr in fig.data:
        if (getattr(tr, "yaxis", None) or "y") != ref or getattr(tr, "y", None) is None:
            continue
        try:
            y = np.asarray([v for v in np.ravel(np.asarray(tr.y, dtype=object)) if v is not None], dtype=float)
        except (TypeError, ValueError):
            continue
        values.extend(y[np.isfinite(y)].tolist())
    return [min(values), max(values)] if values else []


def _left_neighbours(panels, x0: float, ydom) -> list[tuple[str, str, object, object]]:
    """The panels of ``panels`` left of ``x0`` whose y domain overlaps ``ydom`` (the same row)."""
    out = []
    for p in panels:
        xd, yd = p[2].domain or (0, 1), p[3].domain or (0, 1)
        if xd[1] <= x0 and yd[0] < ydom[1] and ydom[0] < yd[1]:
            out.append(p)
    return out


def labels_over_the_left_panel(fig) -> list[str]:
    """Right-hand panels whose y tick labels repeat a left neighbour's rows or do not fit in the gap to it."""
    panels = _cartesian_panels(fig)
    width = _plot_width(fig)
    found = []
    for _xname, yname, xaxis, yaxis in panels:
        x0, ydom = (xaxis.domain or (0, 1))[0], yaxis.domain or (0, 1)
        lefts = _left_neighbours(panels, x0, ydom)
        if not lefts or yaxis.showticklabels is False:
            continue
        nearest = max(lefts, key=lambda p: (p[2].domain or (0, 1))[1])
        gap = (x0 - (nearest[2].domain or (0, 1))[1]) * width
        cats = _categories(fig, yname)
        if yaxis.matches == _short(nearest[1]) or (cats and set(cats) == set(_categories(fig, nearest[1]))):
            found.append(f"{yname} repeats the rows of {nearest[1]} (its labels are drawn beside {nearest[0]}'s plot)")
            continue
        need = _tick_label_px(fig, yname, yaxis) + OVERHANG_PX
        if need > gap:
            found.append(f"{yname}'s tick labels need {need:.0f} px, the gap to {nearest[0]} is {gap:.0f} px")
    return found


def titles_without_room(fig) -> list[str]:
    """y titles with no room: between two panels (tick labels, title and the left panel's overhang must fit in the
    gap), or along their axis (longer than the panel is high)."""
    panels = _cartesian_panels(fig)
    width, height = _plot_width(fig), _plot_height(fig)
    found = []
    for _xname, yname, xaxis, yaxis in panels:
        title = yaxis.title.text if yaxis.title is not None else None
        if not title:
            continue
        ydom = yaxis.domain or (0, 1)
        text = title.replace("<sub>", "").replace("</sub>", "").replace("<sup>", "").replace("</sup>", "")
        length, along = len(text) * CHAR_PX, (ydom[1] - ydom[0]) * height
        if length > along:
            found.append(f"{yname}'s title {title!r} (~{length:.0f} px) is longer than its panel ({along:.0f} px)")
        lefts = _left_neighbours(panels, (xaxis.domain or (0, 1))[0], ydom)
        if not lefts:
            continue  # plotly's automargin makes room left of the figure
        nearest = max(lefts, key=lambda p: (p[2].domain or (0, 1))[1])
        gap = ((xaxis.domain or (0, 1))[0] - (nearest[2].domain or (0, 1))[1]) * width
        need = _tick_label_px(fig, yname, yaxis) + TITLE_PX + OVERHANG_PX
        if need > gap:
            found.append(f"{yname}'s title {title!r} needs {need:.0f} px beside {nearest[0]}, the gap is {gap:.0f} px")
    return found


@pytest.fixture(scope="module", params=CLASSES, ids=lambda c: c.__name__)
def shown(request):
    """A controller of ``request.param`` with its defaults, after ``view()`` (shared with test_ui_style)."""
    return built(request.param)[0]


def test_no_panel_draws_its_labels_over_the_panel_left_of_it(shown):
    found = [f"figure {k}: {c}" for k, fig in enumerate(shown.figures) for c in labels_over_the_left_panel(fig)]
    assert not found, f"{type(shown).__name__}: {found}"


def test_every_axis_title_has_room(shown):
    found = [f"figure {k}: {c}" for k, fig in enumerate(shown.figures) for c in titles_without_room(fig)]
    assert not found, f"{type(shown).__name__}: {found}"


# ------------------------------------------------------------- the checks find what they are for
LABELS = [f"SDE followed, h ≤ η/{m}, ρ = 0.025 (t ≤ 3000)" for m in (4, 16, 64)]


def _grid(**subplots) -> go.Figure:
    """Notebook 05 §3's stored-grid layout: long row labels in (a)'s 300 px margin, bars of the same rows in (b)."""
    fig = make_subplots(1, 2, column_widths=[0.55, 0.45], **subplots)
    fig.add_scatter(x=[1, 2, 3], y=LABELS, mode="markers", row=1, col=1)
    fig.add_bar(x=[0.1, 0.2, 0.3], y=LABELS, orientation="h", row=1, col=2)
    fig.update_layout(height=640, margin=dict(l=300, r=10, t=50, b=50))
    return fig


def test_the_grid_figure_as_it_was_is_caught_and_sharing_its_rows_passes():
    assert labels_over_the_left_panel(_grid(horizontal_spacing=0.16))  # 05 §3 before: labels drawn twice
    assert labels_over_the_left_panel(_grid(horizontal_spacing=0.9 * 0.45))  # even with a gap wider than them
    assert not labels_over_the_left_panel(_grid(horizontal_spacing=0.04, shared_yaxes=True))


def _two_panels(spacing: float, title: str = "eigenvalue of η²C (floored at 10⁻³⁸)", log: bool = True) -> go.Figure:
    """Notebook 04 §5's layout: two panels, the right one with a log y axis and a y title."""
    fig = make_subplots(1, 2, horizontal_spacing=spacing)
    fig.add_scatter(x=[0, 40_000], y=[1, 2], row=1, col=1)
    fig.add_scatter(x=[0, 100], y=[1e-38, 1], row=1, col=2)
    fig.update_yaxes(title_text=title, type="log" if log else "linear", row=1, col=2)
    fig.update_layout(height=420, margin=dict(l=60, r=10, t=70, b=50))
    return fig


def test_a_title_between_panels_without_room_is_caught():
    assert titles_without_room(_two_panels(0.1))  # 04 §7 before: 79 px, the title ran into (a)'s "40k"
    assert not titles_without_room(_two_panels(0.12))  # after: 95 px
    assert titles_without_room(_two_panels(0.12, title="x" * 60))  # longer than the panel is high
    fig = _two_panels(0.12)
    fig.update_yaxes(title_text=None, row=1, col=2)
    assert not titles_without_room(fig)


def test_the_checks_see_every_panel_of_a_grid_of_subplots():
    fig = make_subplots(2, 3, horizontal_spacing=0.02)
    for row in (1, 2):
        for col in (1, 2, 3):
            fig.add_scatter(x=[0, 1], y=[0, 1], row=row, col=col)
    assert len(_cartesian_panels(fig)) == 6
    fig.update_yaxes(title_text="y", col=3)
    assert len(titles_without_room(fig)) == 2  # one per row: col 3 beside col 2


# ------------------------------------------------------------- 04 §2 and §8: runs at round-off as lines
#: Notebook 04 §0's figure and §7's three failure modes (the settings of the notebook's cells).
TRAP_SETTINGS = {"§2": {}, "§8 collapse": dict(lr=0.45, n_seeds=3, steps=20_000),
                 "§8 GD at rank 1": dict(weight_decay=0.05, n_seeds=2, steps=20_000),
                 "§8 no jumps": dict(lr=0.1, n_seeds=3, steps=30_000)}
#: s₂(A) below this is round-off (the engine's singular values of a rank-1 A: ~10⁻¹⁷).
ROUNDOFF = 1e-12


@pytest.fixture(scope="module")
def traps():
    out = {}
    for where, settings in TRAP_SETTINGS.items():
        ctl = TrapController(**settings)
        ctl.view()
        if ctl.run_button is not None:
            ctl.run_button.click()
        out[where] = ctl
    return out


def _sgd_runs(ctl) -> list:
    """The SGD seeds' traces of the top right panel (s₁ and s₂ of each seed) that hold data."""
    return [t for t in ctl.figure.data if (t.name or "").startswith("seed ") and t.xaxis == "x2"
            and t.y is not None and len(t.y)]


def test_sgd_runs_at_round_off_are_drawn_as_lines(traps):
    at_roundoff = 0
    for where, ctl in traps.items():
        runs = _sgd_runs(ctl)
        assert len(runs) == 2 * ctl.settings["n_seeds"], where
        soup = [(t.name, t.mode) for t in runs if t.mode != "lines"]
        assert not soup, f"{where}: SGD runs drawn with markers: {soup}"
        at_roundoff += sum(float(np.min(t.y)) < ROUNDOFF for t in runs)
    assert at_roundoff >= 4  # the check covers runs that rest at round-off (§2: the 4 seeds that jumped)


def test_every_seed_keeps_a_style_of_its_own_in_every_row(traps):
    """Without markers, seeds are told apart by their dash (and colour), the same dash in every row."""
    ctl = traps["§2"]
    by_seed: dict[str, set] = {}
    for t in ctl.figure.data:
        if (t.name or "").startswith("seed "):
            by_seed.setdefault(t.name.split()[1], set()).add(t.line.dash)
    assert all(len(d) == 1 for d in by_seed.values()), by_seed
    dashes = [next(iter(d)) for d in by_seed.values()]
    assert len(set(dashes)) == len(dashes) and not {"dot", "dash"} & set(dashes)


def test_tex_number_prints_zero_and_powers_of_ten():
    """02 §2 typeset ``det M = 0.0e+00`` as "0.0e + 00"."""
    assert tex_number(0.0) == "$0$" and tex_number(-0.0) == "$0$"
    assert tex_number(1.43e-17) == r"$1.4 \times 10^{-17}$" and tex_number(-2.5e-5) == r"$-2.5 \times 10^{-5}$"
    assert tex_number(0.25) == "$0.25$" and tex_number(3.14159, digits=3) == "$3.14$"
    assert "e+" not in tex_number(6.02e23) and tex_number(6.02e23) == r"$6 \times 10^{23}$"
    with pytest.raises(ValueError):
        tex_number(math.nan)


def test_the_rank_one_slice_summary_typesets_its_determinants():
    """02 §2's sentence under the figure: ``det M`` printed as a number a reader can read, not ``0.0e+00``."""
    import re

    from symsgd_core.ui.lifting import RankOneSetController

    text = RankOneSetController().summary()
    assert r"$\det M$ = $" in text and not re.search(r"\de[+-]\d", text), text
