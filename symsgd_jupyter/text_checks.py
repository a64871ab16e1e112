"""Words a reader would have to decode in plain text next to a figure (status lines, text alternatives, printed
tables): ASCII math and numbers printed with more digits than a reader can use. The rule the tests apply to every
controller (``tests/ui/test_ui_words.py``) and to every printed report of a lesson."""

from __future__ import annotations

import re

__all__ = ["ASCII_MATH", "CODE_TEXT", "MAX_DIGITS", "significant_digits", "unrounded_numbers", "word_problems"]

#: ASCII math a reader would have to decode: a caret power or set (``v^(−7/2)``, ``(1 − 2ηγ)^t``, ``v^a``, ``R^2``),
#: an underscore subscript that is a digit, a capital, a script letter or a brace (``B_1``, ``W_L``, ``ḡ_ℬ``, ``W_ℓ``,
#: ``s_{2}``), and a
#: lowercase subscript after a one-letter symbol: one letter after a Latin letter (``T_c``, ``a_c``, ``s_k``), any
#: after a Greek one (``τ_match``, ``θ_i``, ``θ_u``). What reads as a Python name is not math: more than one letter
#: before the underscore (``weight_decay``, ``sde05_grid.json``, ``tests/ui``) or a Latin letter before a word
#: (``d_in``, ``n_runs``: a slider's keyword as its label).
ASCII_MATH = re.compile(r"\^|_[0-9A-Zℓℬ{]|(?<![\w.\-/])(?:[A-Za-z]_[A-Za-z](?!\w)|[^\W\d_A-Za-z]_[^\W\d_])")
#: Code-formatted text (a Markdown code span, an HTML ``<code>``): a Python name there is what the reader types.
CODE_TEXT = re.compile(r"`[^`\n]*`|<code>.*?</code>", re.S)
#: Significant digits a number may show (a status line quotes measured values, never a float's full repr).
MAX_DIGITS = 6
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?|\.\d+)(?:[eE][+-−]?\d+)?(?![\w.])")


def significant_digits(number: str) -> int:
    """The significant digits of a printed number: ``"0.001230"`` → 4, ``"3.7641746976096255e-16"`` → 17; an
    integer's trailing zeros are not counted (``"120000"`` → 2)."""
    mantissa = re.split(r"[eE]", number)[0]
    if "." in mantissa:
        return len(mantissa.replace(".", "").lstrip("0")) or 1
    return len(mantissa.strip("0")) or 1


def unrounded_numbers(text: str) -> list[str]:
    """The numbers in ``text`` printed with more than :data:`MAX_DIGITS` significant digits."""
    return [m.group(0) for m in _NUMBER.finditer(text) if significant_digits(m.group(0)) > MAX_DIGITS]


def word_problems(text: str) -> list[str]:
    """What :data:`ASCII_MATH` (outside code-formatted text, :data:`CODE_TEXT`) and :func:`unrounded_numbers` find in
    ``text``, each with its context."""
    prose = CODE_TEXT.sub(lambda m: " " * len(m.group(0)), text)  # same length: the context quotes ``text``
    found = [f"{m.group(0)!r} in …{text[max(0, m.start() - 30):m.end() + 20]}…" for m in ASCII_MATH.finditer(prose)]
    return found + [f"unrounded {n}" for n in unrounded_numbers(text)]
