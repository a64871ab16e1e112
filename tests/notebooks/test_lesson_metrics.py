"""tools.lesson_metrics: what counts as main path, fine print and appendix, on small hand-made notebooks."""

import pathlib

import pytest

from tools.lesson_metrics import MAIN_PATH_WORD_LIMIT, measure, measure_file


def _nb(*cells):
    return {"cells": [{"cell_type": kind, "source": text, "metadata": {}} for kind, text in cells]}


FINE = '<details class="symsgd-fine-print"><summary>Proof</summary>\n\na b c d e\n\n</details>'


def test_fine_print_and_appendix_are_off_the_main_path():
    nb = _nb(
        ("markdown", "# Title\n\none two three"),
        ("markdown", f"four {FINE} five"),
        ("code", "figure = Thing(1)\nfigure"),
        ("markdown", "## Appendix A · forensics\n\nx y z"),
        ("markdown", "more appendix words"),
    )
    m = measure(nb)
    assert m.main_path_words == len("# Title one two three four five".split())
    assert m.fine_print_words == len(FINE.split())
    assert m.appendix_words == len("## Appendix A · forensics x y z more appendix words".split())
    assert m.figures == 1


def test_plain_details_is_not_fine_print_and_panels_are_not_figures():
    nb = _nb(
        ("markdown", "<details><summary>Answer</summary>\n\nsix words are all counted here</details>"),
        ("code", "panel = ExercisePanel(1)\npanel"),
        ("code", "x = Thing(1)\nprint(x)"),
    )
    m = measure(nb)
    assert m.fine_print_words == 0 and m.appendix_words == 0
    assert m.main_path_words == len(nb["cells"][0]["source"].split())
    assert m.figures == 0


NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_lesson_main_path_reads_in_one_sitting(path):
    """A lesson's main path (Markdown outside fine print and appendix) is at most MAIN_PATH_WORD_LIMIT words, and
    is a lesson at all (a notebook whose text all moved to fine print measures nothing and fails)."""
    m = measure_file(path)
    assert 500 <= m.main_path_words <= MAIN_PATH_WORD_LIMIT, m


def test_the_lessons_are_found():
    assert len(NOTEBOOKS) >= 6
