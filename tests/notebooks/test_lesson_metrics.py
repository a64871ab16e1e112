"""tools.lesson_metrics: what counts as main path, fine print and appendix, on small hand-made notebooks."""

from tools.lesson_metrics import measure


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
