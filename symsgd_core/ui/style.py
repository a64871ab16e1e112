"""The project's one palette: colour-blind safe, and never colour alone.

* :data:`PALETTE` — the eight colours of Okabe & Ito ("Color Universal Design", 2002), distinguishable under the
  common colour-vision deficiencies; :data:`NEUTRALS` — black and greys (reference lines, bands, data clouds).
  Every trace colour of every figure is one of these (``tests/ui/test_ui_style.py`` walks every controller).
* :func:`rgba` — a palette colour with transparency (bands, fills).
* never colour alone: every controller restyles its figures so that no two curves differ in colour only
  (:func:`symsgd_jupyter.distinguish.distinguish`, applied by :class:`symsgd_core.ui.base.Controller`).
* :data:`STATUS` — the colours of status marks (left borders of messages): each has a contrast of at least
  3 : 1 against white and against JupyterLab's dark background (#111), while the text itself keeps the theme's
  colour, so messages stay readable in the light and the dark theme.
* Figures keep a white paper and one plot background, :data:`PLOT_BACKGROUND` (:data:`FIGURE_LAYOUT`, with
  plotly's white template for the grid lines): in JupyterLab's dark theme they show as white cards whose colours
  were chosen against white.
* Every log axis labels its ticks as powers of ten (:data:`LOG_AXIS_FORMAT`: 10⁻⁶, never plotly's SI prefixes "1µ",
  "1f", which a reader takes for units). :func:`finish` applies both to a figure; every controller calls it.
"""

from __future__ import annotations

from symsgd_jupyter.distinguish import hex_colour

__all__ = ["FIGURE_LAYOUT", "LOG_AXIS_FORMAT", "NEUTRALS", "PALETTE", "PLOTLY_CONFIG", "PLOT_BACKGROUND", "STATUS",
           "allowed_colour", "colours", "finish", "headline", "log_axes", "rgba"]

#: Okabe–Ito colours by name (hex, upper case). "yellow" is for fills and markers with an outline only: it is
#: too light for a thin line on white.
PALETTE = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
#: Greys for reference lines, bands and clouds of runs (told apart by lightness, not hue).
NEUTRALS = {"grey_dark": "#333333", "grey": "#666666", "grey_mid": "#999999", "grey_light": "#BBBBBB",
            "grey_pale": "#DDDDDD", "white": "#FFFFFF"}

#: Status marks (see the module docstring): ok, warning, error.
STATUS = {"right": PALETTE["bluish_green"], "info": NEUTRALS["grey_mid"], "warning": PALETTE["orange"],
          "error": PALETTE["vermillion"], "wrong": PALETTE["vermillion"], "unanswered": NEUTRALS["grey_mid"]}

#: The plotly config of every figure, live (FigureWidget) and static (the edition): nothing on a figure reaches the
#: internet. plotly.js 4 shows a "Share chart…" button (``sendChartToCloud``, formerly ``sendDataToCloud``) unless
#: ``showSendToCloud`` is false, and links the plotly logo; both go. "Download plot as a PNG" stays (in the page).
PLOTLY_CONFIG = {"displaylogo": False, "showSendToCloud": False, "showEditInChartStudio": False, "showLink": False,
                 "modeBarButtonsToRemove": ["sendChartToCloud", "sendDataToCloud", "editInChartStudio"],
                 "toImageButtonOptions": {"format": "png"}}

#: The background of every figure's plot area (it was white in notebooks 00, 01, 03 and plotly's grey-blue in 02,
#: 04, 05, whose figures set no template).
PLOT_BACKGROUND = NEUTRALS["white"]
#: Layout every figure gets on top of its own: plotly's white template (light grey grid lines, drawn for a white
#: plot area), a white paper, :data:`PLOT_BACKGROUND` and dark text in light and dark themes alike.
FIGURE_LAYOUT = {"template": "plotly_white", "paper_bgcolor": NEUTRALS["white"], "plot_bgcolor": PLOT_BACKGROUND,
                 "font": {"color": "#222222"},
                 "colorway": [PALETTE[c] for c in ("blue", "vermillion", "bluish_green", "orange", "reddish_purple",
                                                   "sky_blue", "black")]}

#: Tick labels of every log axis: powers of ten (1, 10, 10², 10⁻⁶), each with its exponent.
LOG_AXIS_FORMAT = {"exponentformat": "power", "showexponent": "all"}

_ALLOWED = {c.upper() for c in (*PALETTE.values(), *NEUTRALS.values())}


def log_axes(fig) -> list:
    """Every axis of plotly figure ``fig`` (x and y, of every panel) whose ``type`` is ``"log"``."""
    found = []
    fig.for_each_xaxis(lambda ax: found.append(ax) if ax.type == "log" else None)
    fig.for_each_yaxis(lambda ax: found.append(ax) if ax.type == "log" else None)
    return found


def finish(fig, layout: bool = True) -> None:
    """Give plotly figure ``fig`` :data:`FIGURE_LAYOUT` (unless ``layout`` is False: it has it already) and every log
    axis :data:`LOG_AXIS_FORMAT` (an axis already formatted is left as it is: no message to the page)."""
    if layout:
        fig.update_layout(**FIGURE_LAYOUT)
    for ax in log_axes(fig):
        if any(ax[k] != v for k, v in LOG_AXIS_FORMAT.items()):
            ax.update(**LOG_AXIS_FORMAT)


def colours(**names: str) -> dict[str, str]:
    """A figure module's colour table by palette names: ``colours(sgd="blue", gd="black")`` →
    ``{"sgd": "#0072B2", "gd": "#000000"}`` (names of :data:`PALETTE` or :data:`NEUTRALS`; KeyError otherwise)."""
    table = {**PALETTE, **NEUTRALS}
    return {key: table[name] for key, name in names.items()}


def headline(fig, text: str, warning: bool = False) -> None:
    """Write ``text`` as the figure's title, a headline at its top left (vermillion for a failure mode)."""
    colour = PALETTE["vermillion"] if warning else PALETTE["black"]
    fig.layout.title = dict(text=text, x=0.01, xanchor="left", font=dict(size=14, color=colour))


def rgba(name: str, alpha: float) -> str:
    """Palette (or neutral) colour ``name`` with opacity ``alpha`` in [0, 1], as ``"rgba(r,g,b,a)"``."""
    hexcode = {**PALETTE, **NEUTRALS}[name]
    r, g, b = (int(hexcode[i:i + 2], 16) for i in (1, 3, 5))
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    return f"rgba({r},{g},{b},{alpha:g})"


def allowed_colour(colour) -> bool:
    """True for a colour of :data:`PALETTE` or :data:`NEUTRALS` (any notation, any transparency); ``None`` (not
    set: plotly's default) is not allowed either, so every colour is chosen."""
    if not isinstance(colour, str):
        return False
    h = hex_colour(colour)
    return h is not None and h in _ALLOWED
