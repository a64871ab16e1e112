"""Words a reader sees next to a figure: Unicode math and rounded numbers in every status line and text alternative.

The status line (:func:`symsgd_core.ui.base.status_text`) and each figure's text alternative
(:meth:`~symsgd_core.ui.base.Controller.describe`) are plain text, on screen, in a screen reader and in the handout:
a power is a Unicode superscript (``vᵃ``, ``(1 − 2ηγ)ᵗ``, ``v⁻⁷ᐟ²``), a numeric subscript a Unicode subscript
(``B₁``), never the ASCII ``v^(−7/2)``, ``B_1`` or ``W_L``, and no number is printed with more digits than a reader
can use (the rule: ``symsgd_jupyter.text_checks``). Checked for every controller of every notebook at its
defaults (``tests/ui/test_ui_style.py``, on the controllers it builds anyway) and at both ends of every slider (here,
with the small budgets of ``tests/ui/small_settings.py``; about two minutes, so marked slow).
"""

from __future__ import annotations

import pytest
from small_settings import SMALL

from symsgd_core.ui.base import status_text
from symsgd_jupyter.figure_checks import sweep_sliders
from symsgd_jupyter.text_checks import significant_digits, word_problems
from tools.figure_data import controller_classes


def test_the_checks_find_ascii_math_and_unrounded_floats():
    for bad in ("v^(−7/2)", "4·s^(2/4)", "(1 − 2ηγ)^t", "W_L", "B_1", "ḡ_ℬ", "s_{2}(A)", "x = 3.7641746976096255e-16",
                "0.12345678", "1234567"):
        assert word_problems(bad), bad
    for good in ("v⁻⁷ᐟ²", "4·s²ᐟ⁴", "(1 − 2ηγ)ᵗ", "W of layer L", "B₁", "1.23457e-16", "120000 steps", "0.000123",
                 "critical T = 0.2", "seed 0", "η = 0.3", "10⁶", "1e-38", "0.123456", "2.5e+03"):
        assert not word_problems(good), (good, word_problems(good))
    assert significant_digits("0.001230") == 4 and significant_digits("120000") == 2


#: Reader-visible text the review of the lessons found (a screenshot review of every mode), as it was → as it reads now:
#: a lowercase subscript after a one-letter symbol, a caret power, set notation.
REVIEWED = (
    ("T_c = 0.3333, T_c/3 = 0.1111", "critical T = 0.3333, a third of it = 0.1111"),
    ("T = 0.5, T_c = (β₂ − γ)/α₃ = 0.402", "T = 0.5, critical T = (β₂ − γ)/α₃ = 0.402"),
    ("L = 1: T ≥ T_c = 0.333", "L = 1: T is at or above the critical T = 0.333"),
    ("Figures: u, w in R^2, reference vector e = [1. 0.]", "Figures: u, w ∈ ℝ², reference vector e = [1. 0.]"),
    ("by what factor has the unsampled row of W_L shrunk", "by what factor has the unsampled row of the last layer "
                                                           "shrunk"),
    ("what is the first-order basin radius a_c?", "what is the first-order basin radius?"),
    ("the smallest a that escapes is 0.86 (1.52 a_c)", "the smallest a that escapes is 0.86 (1.52 × the radius)"),
    ("(c) runs stopped: τ_match", "(c) runs stopped: matched τ"),
    ("L Σ s_k^(2/L) = 5.96271", "L Σ sₖ²ᐟᴸ = 5.96271"),
    ("the L = 2 threshold γ_c", "the L = 2 threshold"),
    ("θ_u (deg) = 30, θ_w (deg) = -40", "angle of u (deg) = 30, angle of w (deg) = -40"),
    ("At T = 0.15: T_c/3 < T < T*", "At T = 0.15: T between a third of the critical T and T*"),
)


@pytest.mark.parametrize("old, new", REVIEWED, ids=[old for old, _ in REVIEWED])
def test_the_reviewed_ascii_math_fails_and_its_rewording_passes(old, new):
    assert word_problems(old), old
    assert not word_problems(new), (new, word_problems(new))


def test_names_a_reader_sees_as_names_are_not_math():
    """A file name, a Python name of more than one letter, and anything code-formatted is not ASCII math; the same
    one-letter subscript outside a code span is."""
    for name in ("symsgd_core/data_files/sde05_grid.json", "weight_decay", "temp_factor", "lr_hot", "min_cells",
                 "d_in = 5, d_out = 2", "n_runs",
                 "`n_runs_sde`", "the keyword `T_c`", "<code>s_k</code>", "T<sub>c</sub>", "tests/ui/test_ui_words.py"):
        assert not word_problems(name), (name, word_problems(name))
    assert word_problems("`T_c` and T_c") and word_problems("the keyword T_c")
    assert word_problems("θ_u (deg)") and word_problems("λ_max") and word_problems("T_c/3 < T")


def texts(controller) -> dict[str, str]:
    """The status line and every figure's text alternative of ``controller`` now."""
    out = {"status line": status_text(controller)}
    out.update({f"text alternative of figure {k + 1}": controller.describe(k) for k in range(len(controller.figures))})
    return out


@pytest.mark.slow  # every controller at both ends of every slider: 125 s on a busy 2-core machine
@pytest.mark.parametrize("cls", controller_classes(), ids=lambda c: c.__name__)
def test_no_status_line_or_text_alternative_holds_ascii_math_or_an_unrounded_float(cls):
    controller = cls(**SMALL.get(cls, {}))
    found = {}

    def press_run_if_waiting() -> None:  # as test_ui_every_slider.move: a live figure with a Run button waits for it
        if controller.live and getattr(controller, "run_button", None) is not None:
            controller.run_button.click()

    def look(where: str) -> None:
        for what, text in texts(controller).items():
            problems = word_problems(text)
            if problems:
                found[f"{where}, {what}"] = problems

    press_run_if_waiting()
    look("defaults")
    start = controller.values()

    def after_each_setting() -> None:
        press_run_if_waiting()
        look(", ".join(f"{k} = {v!r}" for k, v in controller.values().items() if v != start[k]))

    assert sweep_sliders(controller, run=after_each_setting)
    assert not found, f"{cls.__name__}: " + "\n".join(f"{k}: {v}" for k, v in found.items())
