"""The printed handout carries no wording for the live notebook (move the slider, press Run, type the answer): every
such sentence of the notebooks is marked ``<span class="symsgd-live">`` (hidden in print), and the exercises' own
prompts, which the handout prints, use none. The PDFs themselves are read in tests/static_site/test_handout.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools.site.edition.handout import LIVE_WORDING

REPO = Path(__file__).resolve().parents[1]

NOTEBOOKS = sorted((REPO / "notebooks").glob("0*.ipynb"))
LIVE_SPAN = re.compile(r'<span class="symsgd-live">.*?</span>', re.S)


def _unmarked(text: str) -> list[str]:
    printed = LIVE_SPAN.sub("", text)
    return [m.group(0) for pat in LIVE_WORDING for m in re.finditer(pat, printed)]


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
