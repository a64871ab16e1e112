"""The printed handout carries no wording for the live notebook (move the slider, press Run, type the answer): every
such sentence of the notebooks is marked ``<span class="symsgd-live">`` (hidden in print), or points at a code cell
(marked at build time, render.py ``mark_code_pointers``, and left out with the code), and the exercises' own prompts,
which the handout prints, use none. Its print stylesheet and script (read here as text, no browser) print formulas at
the text's weight and every small multiple's tick labels at 7 pt at least, and a number printed with more than six
significant digits is reported. The PDFs themselves are read in tests/static_site/test_handout.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools.site.edition import assets
from tools.site.edition.handout import LIVE_WORDING, MAX_PRINTED_DIGITS, STATIC, long_floats, significant_digits
from tools.site.edition.render import CODE_POINTER_CLASS, mark_code_pointers

REPO = Path(__file__).resolve().parents[2]

NOTEBOOKS = sorted((REPO / "notebooks").glob("0*.ipynb"))
LIVE_SPAN = re.compile(r'<span class="symsgd-live">.*?</span>', re.S)
CODE_POINTER_SPAN = re.compile(rf'<span class="{CODE_POINTER_CLASS}">.*?</span>', re.S)
#: The notebooks' own mark for a sentence about a hidden code cell (hidden by the handout's CSS, as in the classroom).
CODE_ONLY_SPAN = re.compile(r'<span class="[^"]*\bsymsgd-code-only\b[^"]*">.*?</span>', re.S)
#: The smallest printed text the handout's figures may carry, pt (a review found small multiples' tick labels
#: printed at about 4 pt).
LEGIBLE_PT = 7
#: A4's width, mm.
A4_WIDTH_MM = 210


def _unmarked(text: str) -> list[str]:
    """The live-reader wording of notebook Markdown ``text`` that the handout prints (what neither a symsgd-live span
    nor a sentence pointing at a code cell hides)."""
    printed = LIVE_SPAN.sub("", CODE_POINTER_SPAN.sub("", mark_code_pointers(CODE_ONLY_SPAN.sub("", text))))
    return [m.group(0) for pat in LIVE_WORDING for m in re.finditer(pat, printed)]


def _css_rules(css: str, media: str | None = None) -> list[tuple[list[str], dict[str, str]]]:
    """The rules of a stylesheet whose only nested blocks are ``@media`` ones, as (selectors, declarations):
    ``media``: those inside ``@media media``; None: those outside any (``@page`` among them)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules, i, inside = [], 0, None
    while True:
        opening, closing = css.find("{", i), css.find("}", i)
        if closing != -1 and (opening == -1 or closing < opening):  # the end of an @media block
            inside, i = None, closing + 1
            continue
        if opening == -1:
            return rules
        head = css[i:opening].strip()
        if head.startswith("@media"):
            inside, i = head[len("@media"):].strip(), opening + 1
            continue
        end = css.index("}", opening)
        if inside == media:
            decls = {k.strip(): v.strip().removesuffix("!important").strip()
                     for k, colon, v in (d.partition(":") for d in css[opening + 1:end].split(";")) if colon}
            rules.append(([sel.strip() for sel in head.split(",")], decls))
        i = end + 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_live_reader_wording_in_the_notebooks_is_marked(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = [(i, hit) for i, c in enumerate(cells) if c["cell_type"] == "markdown"
             for hit in _unmarked("".join(c["source"]))]
    assert not found, f"{path.name}: unmarked live-reader wording (cell, text): {found}"


def test_exercise_prompts_carry_no_live_reader_wording():
    from symsgd_core import balance, lifting, rank_jumps, stationary
    from symsgd_core.sde_noise import exercises as sde_exercises

    topics = (balance, lifting, rank_jumps, sde_exercises, stationary)
    prompts = {f"{topic.__name__}.{name}": ex.question + " " + ex.hint for topic in topics
               for name, ex in topic.EXERCISES.items()}
    assert len(prompts) > 10
    found = {name: _unmarked(text) for name, text in prompts.items() if _unmarked(text)}
    assert not found, found


def test_the_wording_check_sees_an_unmarked_sentence():
    assert _unmarked("Move the slider to the right and press Run.")
    assert not _unmarked('<span class="symsgd-live">Move the slider to the right and press Run.</span>')



def test_the_wording_check_sees_live_wording_outside_a_span_and_passes_a_sentence_pointing_at_code():
    # a review found the handout printing "The cell below prints what the figure shows at the current sliders"
    assert _unmarked("Here is what the figure shows at the current sliders.")
    assert not _unmarked("Intro. The cell below prints what the figure shows at the current sliders, and asserts "
                         "$\\theta = 0$ at the point. Next.")


def test_sentences_pointing_at_a_code_cell_are_marked_whole():
    text = ("Intro. The cell below prints what the figure shows at the current sliders, and asserts the two claims: "
            "$\\ell = 0.5$ at the point.\nNext sentence.\n\nThe next cell runs it\n\nThe cell above asserts this. "
            "Look at the cell below. A 2. cell below")
    marked = mark_code_pointers(text)
    spans = CODE_POINTER_SPAN.findall(marked)
    assert spans == [
        f'<span class="{CODE_POINTER_CLASS}">The cell below prints what the figure shows at the current sliders, '
        "and asserts the two claims: $\\ell = 0.5$ at the point.</span>",
        f'<span class="{CODE_POINTER_CLASS}">The next cell runs it</span>'], spans
    assert CODE_POINTER_SPAN.sub("", marked) == text.replace(
        "The cell below prints what the figure shows at the current sliders, and asserts the two claims: "
        "$\\ell = 0.5$ at the point.", "").replace("The next cell runs it", "")
    assert mark_code_pointers("No pointer here.") == "No pointer here."


def _handout_css_print_rules() -> list[tuple[list[str], dict[str, str]]]:
    return _css_rules((STATIC / "handout.css").read_text(encoding="utf-8"), media="print")


def test_sentences_pointing_at_code_are_hidden_in_the_handout_unless_code_is_printed():
    hidden = [sels for sels, decls in _handout_css_print_rules() if decls.get("display") == "none"]
    assert [".edition-handout:not(.handout-code) .symsgd-code-pointer"] in hidden, hidden


def test_formulas_print_at_the_weight_of_the_text():
    """MathJax's SVG output strokes every glyph's outline (a stroke 0.003 em wide, from its own stylesheet): in the
    PDF each became a hairline drawn a device pixel wide, and the formulas printed heavy bold. The handout's print
    stylesheet takes the stroke off every selector of MathJax's rule."""
    shipped = (assets.mathjax_dir() / "es5" / assets.MATHJAX_FILE).read_text(encoding="utf-8")
    rule = re.search(r"""'(mjx-container\[jax="SVG"\] path\[data-c\][^']*)':\{"stroke-width":(\d+)\}""", shipped)
    assert rule and int(rule.group(2)) > 0, "MathJax's SVG glyph-stroke rule not found in the shipped MathJax"
    glyphs = [sel.strip() for sel in rule.group(1).split(",")]
    assert len(glyphs) == 2
    unstroked = {sel for sels, decls in _handout_css_print_rules()
                 if decls.get("stroke") == "none" or decls.get("stroke-width") in ("0", "0px") for sel in sels}
    missing = [g for g in glyphs if f".edition-handout {g}" not in unstroked]
    assert not missing, f"MathJax glyphs still stroked in print: {missing}"


def _js_constant(js: str, name: str) -> float:
    m = re.search(rf"\bconst {name} = ([0-9 .*+/()-]+);", js)
    assert m, f"{name} not found in handout.js"
    return float(eval(m.group(1), {"__builtins__": {}}))  # arithmetic of numbers only (the pattern above)


def test_small_multiples_print_their_tick_labels_at_a_legible_size():
    """handout.js raises a figure's fonts until its smallest tick label prints at MIN_PRINTED_PT, from the width it is
    printed at: the page's text width (handout.css @page, A4) for a figure, half of it less the grid's gap for a small
    multiple (the whole width for one printed one to a row). The widths it assumes are the stylesheet's, and both
    kinds of picture are raised. (The sizes reached are in handout-report.json, ``tick_pt``.)"""
    js = (STATIC / "handout.js").read_text(encoding="utf-8")
    assert _js_constant(js, "MIN_PRINTED_PT") >= LEGIBLE_PT
    css = (STATIC / "handout.css").read_text(encoding="utf-8")
    page = next(decls for sels, decls in _css_rules(css) if sels == ["@page"])
    assert page["size"] == "A4"
    sides = [float(v.removesuffix("mm")) for v in page["margin"].split()]
    right = sides[1] if len(sides) > 1 else sides[0]  # the margin shorthand: top, right, bottom, left
    left = sides[3] if len(sides) == 4 else right
    assert _js_constant(js, "PRINTED_TEXT_WIDTH_MM") == A4_WIDTH_MM - right - left
    grid = next(decls for sels, decls in _handout_css_print_rules() if ".edition-handout .handout-multiples" in sels)
    assert grid["grid-template-columns"] == "1fr 1fr"
    column_gap = grid["gap"].split()[-1]
    assert _js_constant(js, "MULTIPLES_GAP_MM") == float(column_gap.removesuffix("mm"))
    assert "legibleFonts(plot, true)" in js and "legibleFonts(plot, false)" in js
    # a figure whose text at that size does not fit at half the width prints its multiples one to a row, as wide as a
    # figure (PRINTED_TEXT_WIDTH_MM, the size the fallback is checked at)
    wide = next(decls for sels, decls in _handout_css_print_rules()
                if ".edition-handout .handout-multiples.handout-wide" in sels)
    assert wide["grid-template-columns"] == "1fr"


@pytest.mark.parametrize(("number", "digits"), [("0.00420", 3), ("1200", 2), ("5.962705", 7), ("−1.5e-3", 2),
                                                ("3.7641746976096255e-16", 17), ("10.0", 3)])
def test_significant_digits(number, digits):
    assert significant_digits(number) == digits


def test_significant_digits_refuses_what_is_not_a_number():
    with pytest.raises(ValueError):
        significant_digits("1.2.3")


def test_long_floats_finds_an_unformatted_float_and_passes_formatted_ones_and_arxiv_identifiers():
    # a review found the handout printing "3.7641746976096255e-16"
    text = ("largest s2(A) after the forced phase: 3.7641746976096255e-16; η = 0.02, G = 3.91, 1.3e-08, "
            "arXiv:2402.07193, arXiv 2305.16038, its follow-up arXiv\n2402.07193, year 2024, L Σ s = 5.962705")
    assert MAX_PRINTED_DIGITS == 6
    assert long_floats(text) == ["3.7641746976096255e-16", "5.962705"]
    assert long_floats("0.123456 and 1.23456e-07") == []


def test_printed_lines_wrap_between_words_on_paper():
    """JupyterLab breaks an output's text anywhere (``word-break: break-all``) and clips what overflows: notebook 01's
    printed line broke mid-word ("… (p" / "rediction 0.513, √T = 0.5)"). On paper it wraps between words and shows all
    of it."""
    rule = next((decls for sels, decls in _handout_css_print_rules()
                 if ".edition-handout .jp-OutputArea-output pre" in sels), None)
    assert rule is not None, "no print rule for the printed lines"
    assert rule["white-space"] == "pre-wrap" and rule["word-break"] == "normal"
    assert rule["overflow"] == "visible" and rule["overflow-wrap"] == "anywhere"


def test_small_multiples_label_their_x_axes_level():
    """Drawn narrow, plotly turned one small multiple's crowded x labels upright while its neighbours' stayed level
    (notebook 02's orbit figure at λ = 2.828): handout.js sets every frame-following x axis of a small multiple level,
    with fewer ticks where its labels would then run into each other (any crowded numeric axis, x or y:
    uncrowdTicks), before each is photographed."""
    js = (STATIC / "handout.js").read_text(encoding="utf-8")
    assert 0.3 <= _js_constant(js, "TICK_GAP") <= 1  # label heights
    assert "update[`${key}.tickangle`] = 0" in js
    assert "await uncrowdTicks(plot, " in js
    assert re.search(r"\{width, height, showlegend: false,\s*\.\.\.levelXTicks\(plot, ", js)
