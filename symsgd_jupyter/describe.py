"""Text alternatives of figures: what a screen reader says about a figure, generated from its state.

A plotly figure is an SVG drawing: a screen reader finds nothing to read in it. Every controller therefore keeps,
next to each of its figures, a short description built from the figure itself and from the controller's state
(:func:`figure_description`): what is plotted (title, axes, the curves' names), the current settings (the sliders'
names and values as shown), and the one-line finding the status line states. The page links it to the figure
(``aria-describedby``, set by the accessible-names helper of :mod:`.a11y`); the text itself is visually hidden.
"""

from __future__ import annotations

import html
import re

__all__ = ["ALT_CLASS", "figure_description", "plain_text", "subscript", "superscript", "visually_hidden_html"]

#: CSS class of the (visually hidden) element that holds a figure's description in the page.
ALT_CLASS = "symsgd-figure-alt"
#: At most this many curve names are listed (a figure of 60 runs lists its first few and how many more).
MAX_NAMES = 8

#: Unicode superscripts and subscripts of the characters that have one (letters: the modifier letters that fonts
#: draw raised or lowered; ``/`` as the raised slash ᐟ). ``T`` → ``ᵀ`` is also the transpose the project writes.
_SUPERSCRIPTS = dict(zip("0123456789+-−=()/abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWβγδθφχ",
                         "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᐟᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵝᵞᵟᶿᵠᵡ"))
_SUBSCRIPTS = dict(zip("0123456789+-−=()aehijklmnoprstuvxβγρφχ", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ"))


def superscript(text) -> str | None:
    """``text`` (or a number) in Unicode superscripts, ``"−7/2"`` → ``"⁻⁷ᐟ²"``, ``3000`` → ``"³⁰⁰⁰"``; None when a
    character has none (a space, ``*``, ``ℓ``, capital C…)."""
    text = str(text)
    return "".join(_SUPERSCRIPTS[c] for c in text) if text and all(c in _SUPERSCRIPTS for c in text) else None


def subscript(text) -> str | None:
    """``text`` (or a number) in Unicode subscripts, ``1`` → ``"₁"``, ``"nat"`` → ``"ₙₐₜ"``; None when a character
    has none (capitals, ``c``, ``w``, ``ℓ``…)."""
    text = str(text)
    return "".join(_SUBSCRIPTS[c] for c in text) if text and all(c in _SUBSCRIPTS for c in text) else None


def _power(exponent: str) -> str:
    """A ``<sup>`` as plain text: Unicode superscripts where each character has one, else ``to the power (…)``."""
    return superscript(exponent) or f" to the power ({exponent})"


def _index(sub: str) -> str:
    """A ``<sub>`` as plain text: Unicode subscripts where each character has one, else after a space."""
    return subscript(sub) or f" {sub}"


_SUB = re.compile(r"<sub>(.*?)</sub>", re.S)
_SUP = re.compile(r"<sup>(.*?)</sup>", re.S)
_BREAK = re.compile(r"<br\s*/?>", re.I)
_TAG = re.compile(r"<[^>]+>")


def plain_text(text) -> str:
    """Figure text (plotly's HTML subset) as Unicode text: ``B<sub>1</sub>`` → ``B₁``, ``(a<sup>L</sup> − 1)²`` →
    ``(aᴸ − 1)²``, ``δ<sup>2/L</sup>`` → ``δ²ᐟᴸ``; a sub- or superscript with a character that has no Unicode form
    in words: ``T<sub>c</sub>`` → ``T c``, ``v<sup>ν + 1</sup>`` → ``v to the power (ν + 1)``; other tags dropped,
    entities decoded, white space collapsed."""
    if text is None:
        return ""
    out = _SUP.sub(lambda m: _power(html.unescape(_TAG.sub("", m.group(1))).strip()), str(text))
    out = _SUB.sub(lambda m: _index(html.unescape(_TAG.sub("", m.group(1))).strip()), out)
    out = _TAG.sub("", _BREAK.sub(" ", out))
    return " ".join(html.unescape(out).split())


def _title(obj) -> str:
    title = getattr(obj, "title", None)
    return plain_text(getattr(title, "text", None) if title is not None else None)


def _subplot_title(layout, xaxis, yaxis) -> str:
    """The title ``make_subplots`` wrote for the subplot on these axes: a paper annotation centred over its x domain
    and sitting on top of its y domain (empty when it has none)."""
    xd, yd = tuple(xaxis.domain or (0, 1)), tuple(yaxis.domain or (0, 1))
    for a in layout.annotations or ():
        if (a.text and a.xref == "paper" and a.yref == "paper" and a.x is not None and a.y is not None
                and abs(a.x - (xd[0] + xd[1]) / 2) < 1e-3 and abs(a.y - yd[1]) < 1e-3):
            return plain_text(a.text)
    return ""


def _panels(fig) -> list[str]:
    """One phrase per subplot: its title (from the layout's subplot-title annotations) and its axes."""
    layout = fig.layout
    xaxes = sorted((name for name in layout if name.startswith("xaxis")), key=lambda n: int(n[5:] or 1))
    phrases = []
    for name in xaxes or ["xaxis"]:
        xaxis = layout[name]
        anchor = (xaxis.anchor or "y") if xaxis is not None else "y"
        yaxis = layout["yaxis" + anchor[1:]]
        x, y = _title(xaxis), _title(yaxis)
        axes = f"{y or 'a value'} against {x or 'a value'}" if (x or y) else ""
        head = _subplot_title(layout, xaxis, yaxis)
        phrase = ": ".join(p for p in (head, axes) if p)
        if phrase:
            phrases.append(phrase)
    return phrases


def _names(fig) -> str:
    names: list[str] = []
    for trace in fig.data:
        if trace.visible in (False, "legendonly"):
            continue
        name = plain_text(trace.name)
        if name and name not in names:
            names.append(name)
    if not names:
        return ""
    shown = names[:MAX_NAMES]
    more = f", and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else ""
    return "; ".join(shown) + more


def figure_description(fig, settings: dict[str, str] | None = None, finding: str = "", number: int | None = None,
                       of: int | None = None) -> str:
    """A figure's text alternative: what it plots, at which settings, and what it shows.

    Args:
        fig: a plotly figure (``go.Figure`` or ``go.FigureWidget``).
        settings: the controls as the reader sees them, ``{"η": "0.3", …}`` (in display order).
        finding: the status line's text (the one-line finding), plain text.
        number, of: the figure's position among its controller's figures (said when there are several).

    Returns:
        One paragraph of plain text, e.g. ``"Figure 1 of 2: penalty per singular value. Panels: … Curves: …
        Settings: L = 4. Finding: …"``.
    """
    parts = []
    head = "Figure" if number is None or not of or of < 2 else f"Figure {number} of {of}"
    title = _title(fig.layout)
    parts.append(f"{head}: {title}." if title else f"{head}.")
    panels = _panels(fig)
    if panels:
        parts.append(("Panels: " if len(panels) > 1 else "Plotted: ") + "; ".join(panels) + ".")
    names = _names(fig)
    if names:
        parts.append(f"Curves: {names}.")
    if settings:
        parts.append("Settings: " + ", ".join(f"{k} = {v}" for k, v in settings.items()) + ".")
    finding = " ".join((finding or "").split())
    if finding:
        parts.append(f"Finding: {finding}" + ("" if finding.endswith((".", "!", "?")) else "."))
    return " ".join(parts)


def visually_hidden_html(text: str, name: str) -> str:
    """``text`` in an element screen readers read and sighted readers do not see (the usual visually-hidden
    pattern), carrying the figure's short ``name`` for its accessible name."""
    return (f'<div class="{ALT_CLASS}-text" data-name="{html.escape(name, quote=True)}" '
            'style="position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;'
            f'clip:rect(0 0 0 0);white-space:normal;border:0">{html.escape(text)}</div>')
