"""Notebook 00 is the course frame: objectives, prerequisites, time, papers, notation, glossary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
START = NOTEBOOKS / "00_start_here.ipynb"
#: A notebook that 00 links to and that lands with another branch of the same release.
PENDING = {"05_sgd_noise_sde.ipynb"}


def _markdown() -> str:
    nb = json.loads(START.read_text(encoding="utf-8"))
    return "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def _section(title: str) -> str:
    text = _markdown()
    start = text.index(f"## {title}\n")
    rest = text[start + 3:]
    end = rest.find("\n## ")
    return rest if end < 0 else rest[:end]


def test_the_notation_anchor_exists_for_the_other_notebooks():
    assert "\n## Notation\n" in "\n" + _markdown()  # JupyterLab and Voilà make it the anchor #Notation


def test_notation_table_has_one_symbol_per_meaning():
    rows = [r for r in _section("Notation").splitlines() if r.startswith("| ") and not r.startswith("| meaning")]
    assert len(rows) >= 25
    symbols = [r.split("|")[2].strip() for r in rows]
    assert len(set(symbols)) == len(symbols), "a symbol with two meanings"
    table = _section("Notation")
    for must in (r"\gamma", r"\kappa", "$J$", r"\mathcal{B}", "$B_r$", "$R$", r"\mathbf{D}", r"\xi", r"\rho = \log v",
                 "$a$", r"\varepsilon_1", r"\sigma", r"\nabla F(M)", r"T = \eta/S", r"t = \eta \cdot \text{steps}"):
        assert must in table, must


GLOSSARY = ("Rescaling symmetry", "Noise balance", "Itô correction", "Lifting", "$B_r$",
            "Rank-overestimating / rank-underestimating minimum", "Langevin dynamics", "Temperature",
            "Stationary law", "Phase transition")


@pytest.mark.parametrize("term", GLOSSARY)
def test_every_glossary_term_links_to_where_it_is_taught(term):
    entries = [e for e in _section("Glossary").split("\n* ") if e.startswith(f"**{term}**")]
    assert len(entries) == 1, term
    links = re.findall(r"\]\((\d\d_[\w]+\.ipynb)[^)]*\)", entries[0])
    assert links, f"{term}: no link to a notebook"
    for link in links:
        assert (NOTEBOOKS / link).is_file() or link in PENDING, link


def test_course_frame_objectives_time_prerequisites_and_papers():
    text = _markdown()
    objectives = _section("What you will be able to do")
    for nb in ("01", "02", "03", "04", "05"):
        assert f"**{nb} —" in objectives
    order = _section("The notebooks, in order")
    rows = [r for r in order.splitlines() if r.startswith("| [`0")]
    assert [r[4:6] for r in rows] == ["00", "01", "02", "03", "04", "05"]
    assert all(re.search(r"\| \d+(–\d+)? min \|$", r) for r in rows), "every notebook has a time estimate"
    prereq = _section("Before you start")
    for topic in ("Itô", "Fokker–Planck", "Eckart–Young"):
        assert topic in prereq
    for arxiv in ("2308.06671", "2402.07193", "2305.16038"):
        assert f"[arXiv {arxiv}](https://arxiv.org/abs/{arxiv})" in text
    assert "make instructor" in text


def test_glossary_B_r_is_the_packages_per_layer_criterion():
    """The glossary's B_r is the test the code runs (rank_jumps.BrCriterion, used by notebook 04): every layer's
    (r+1)-th singular value ≤ ε₁, the Frobenius imbalance ≤ ε₂, ‖θ‖² ≤ R — not a test on the end-to-end matrix —
    with the package's default constants, and the roles of ε₁, ε₂ marked as this project's choice."""
    from symsgd_core.dln.network import DEFAULT_B_CRITERION as crit

    entry = [e for e in _section("Glossary").split("\n* ") if e.startswith("**$B_r$**")][0]
    flat = " ".join(entry.split())
    for must in (r"\max_\ell s_{r+1}(W_\ell)\le\varepsilon_1",
                 r"W_{\ell+1}^\top W_{\ell+1}-W_\ell W_\ell^\top\|_F\le\varepsilon_2",
                 r"\|\theta\|^2\le R", "BrCriterion", "this project's choice", "not on the end-to-end matrix"):
        assert must in flat, must
    assert f"$\\varepsilon_1 = {crit.eps_rank:g}$" in flat and f"$\\varepsilon_2 = {crit.eps_balance:g}$" in flat
    assert f"$R = {crit.R:g}$" in flat
    nb04 = json.loads((NOTEBOOKS / "04_one_way_rank_jumps.ipynb").read_text(encoding="utf-8"))
    box = "".join(next(c["source"] for c in nb04["cells"] if c.get("id") == "rj003m"))
    assert r"\max_\ell s_{r+1}(W_\ell)\le\varepsilon_1" in box          # notebook 04 states the same per-layer test
    notation = _section("Notation")
    row = next(r for r in notation.splitlines() if r.startswith("| $B_r$ thresholds"))
    assert "this project's choice" in row
