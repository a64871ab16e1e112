"""How long each lesson's main path is: the words a hurried reader meets, and what is put aside as fine print.

A notebook's text is split three ways:

* **fine print**: Markdown inside ``<details class="symsgd-fine-print">…</details>`` (closed in JupyterLab, the
  classroom and the static edition, printed open in the handout);
* **appendix**: every cell from the first Markdown cell whose heading starts with ``## Appendix`` to the end;
* **main path**: every other Markdown word.

Words are whitespace-separated tokens of the Markdown source (formulas count as their tokens), the measure the
lesson review used. ``figures`` counts code cells whose last line shows a figure controller (a bare name bound in
the same cell by ``name = Something(...)`` or ``name = module.Something(...)``; an ``ExercisePanel`` is not a figure).

Usage, from the repository root: ``python -m tools.lesson_metrics notebooks/*.ipynb`` prints one row per notebook.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import re
import sys

MAIN_PATH_WORD_LIMIT = 3000
FINE_PRINT = re.compile(r"<details\b[^>]*\bsymsgd-fine-print\b[^>]*>.*?</details>", re.DOTALL)
APPENDIX = re.compile(r"^#{1,3}\s*Appendix\b", re.MULTILINE)
SHOWN_CONTROLLER = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*=\s*(?:[a-z_]\w*\.)*(?!ExercisePanel\()[A-Z]\w*\(",
                              re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class LessonMetrics:
    """Word counts of one notebook (whitespace tokens of its Markdown) and its number of figures."""

    path: str
    main_path_words: int
    fine_print_words: int
    appendix_words: int
    figures: int

    @property
    def words(self) -> int:
        return self.main_path_words + self.fine_print_words + self.appendix_words


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _shows_figure(code: str) -> bool:
    lines = [line for line in code.strip().splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines or not re.fullmatch(r"[A-Za-z_]\w*", lines[-1].strip()):
        return False
    shown = lines[-1].strip()
    return any(match["name"] == shown for match in SHOWN_CONTROLLER.finditer(code))


def measure(notebook: dict, path: str = "") -> LessonMetrics:
    """Count the main path, fine-print and appendix words and the figures of a notebook (nbformat 4 dict)."""
    main = fine = appendix = figures = 0
    in_appendix = False
    for cell in notebook["cells"]:
        text = _source(cell)
        if cell["cell_type"] == "code":
            figures += _shows_figure(text)
            continue
        if cell["cell_type"] != "markdown":
            continue
        if not in_appendix and APPENDIX.search(text.lstrip().splitlines()[0] if text.strip() else ""):
            in_appendix = True
        if in_appendix:
            appendix += len(text.split())
            continue
        hidden = FINE_PRINT.findall(text)
        fine += sum(len(block.split()) for block in hidden)
        main += len(FINE_PRINT.sub(" ", text).split())
    return LessonMetrics(path, main, fine, appendix, figures)


def measure_file(path: pathlib.Path) -> LessonMetrics:
    return measure(json.loads(path.read_text(encoding="utf-8")), str(path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=pathlib.Path)
    args = parser.parse_args(argv)
    print(f"{'notebook':42s} {'main path':>9s} {'fine print':>10s} {'appendix':>8s} {'all':>6s} {'figures':>7s}")
    for path in args.paths:
        m = measure_file(path)
        flag = "" if m.main_path_words <= MAIN_PATH_WORD_LIMIT else f"  > {MAIN_PATH_WORD_LIMIT}"
        print(f"{path.name:42s} {m.main_path_words:9d} {m.fine_print_words:10d} {m.appendix_words:8d} "
              f"{m.words:6d} {m.figures:7d}{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
