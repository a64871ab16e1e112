"""What the notebooks' text points to exists: every "§N" reference names a section heading of
the notebook it points into, every relative link or repository path resolves inside the repository, and no path
leads to material readers of the repository do not have (a ``shared/`` folder: the authors' replies are cited by
their paper and quoted in place). The same holds for the text the package writes into a notebook's page (exercises,
status lines, claims: the string literals of its modules, docstrings aside). Reads the notebooks' JSON and the
package's source text only; nothing is imported or executed.

Section numbers are read from headings: ``## 3 · Title``, ``## 3. Title``, ``## 1b · Title``, ``### 3.1 Title`` and
``## §7b Title`` number sections 3, 3, 1b, 3.1 and 7b. A reference ``§N`` points into its own notebook unless a
notebook is named right next to it: ``notebook 05 §4``, ``[04](04_….ipynb) §6``, ``(04 §0)``, ``§6 of [notebook
02](02_….ipynb)``, or ``[notebook 01](01_….ipynb) (§4 there)``. ``§I.9`` (a book's chapter) is not a section number.
"""

from __future__ import annotations

import ast
import functools
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
PACKAGE = ROOT / "symsgd_core"
#: The notebook whose page shows a module's text (longest matching prefix of its path in the package).
MODULE_NOTEBOOK = {"ui/start.py": "00", "balance/": "01", "ui/balance.py": "01", "lifting/": "02",
                   "ui/lifting.py": "02", "stationary/": "03", "ui/stationary.py": "03", "rank_jumps/": "04",
                   "ui/rank_jumps.py": "04", "sde_noise/": "05", "ui/sde_noise.py": "05"}

#: A heading that numbers its section: the number is group 1.
HEADING = re.compile(r"^#{2,6}[ \t]+§?(\d+[a-z]?(?:\.\d+)*)(?=[\s.·:)]|$)")
#: A section reference: ``§4``, ``§1b``, ``§3.1`` (group 1); not ``§I.9``.
REFERENCE = re.compile(r"§[ \t]?(\d+[a-z]?(?:\.\d+)*)(?![A-Za-z0-9])")
_NB = r"(0\d)"
#: A link to a notebook: ``[04](04_one_way_rank_jumps.ipynb)``, ``[notebook 02](02_rank1_lifting.ipynb#x)``.
_LINK = rf"\[(?:notebook\s+)?{_NB}\]\({_NB}_[^)\s]*\.ipynb[^)\s]*\)"
#: A notebook named in words or by a link (the group that matched is the notebook's number).
NOTEBOOK_MENTION = re.compile(rf"{_LINK}|notebook\s+{_NB}\b", re.I)
#: A notebook named right before a reference: ``notebook 05 §4``, ``[04](04_….ipynb) §6``, ``(04 §0)``.
_NAMED_BEFORE = re.compile(rf"(?:{_LINK}|notebook\s+{_NB}|(?:^|[\s(]){_NB})\s*$", re.I)
#: A notebook named right after a reference: ``§6 of [notebook 02](…)``, ``§6 of notebook 02``.
_NAMED_AFTER = re.compile(rf"^\s+of\s+(?:the\s+)?(?:{_LINK}|notebook\s+\[?{_NB}\b)", re.I)
#: ``(§4 there)``: the notebook named last before the reference.
_THERE = re.compile(r"^\s+there\b")
#: Paths into a folder that is not in the repository (the project's own copies of the authors' texts).
OUTSIDE = re.compile(r"\.\./shared\b|\bshared/")
#: Markdown link targets and inline-code spans.
LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _number(match) -> str | None:
    return next((g for g in match.groups() if g), None)


def cell_texts(nb: dict) -> list[tuple[int, str, str]]:
    """``(index, cell id, source)`` of every markdown and code cell."""
    return [(i, c.get("id", "?"), "".join(c.get("source", ""))) for i, c in enumerate(nb.get("cells", []))
            if c.get("cell_type") in ("markdown", "code")]


def _markdown_lines(nb: dict):
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            yield from "".join(cell.get("source", "")).splitlines()


def headings(nb: dict) -> list[str]:
    """The heading lines of the notebook's markdown cells, without their ``#``."""
    return [line.lstrip("#").strip() for line in _markdown_lines(nb) if re.match(r"^#{1,6}[ \t]", line)]


def section_numbers(nb: dict) -> set[str]:
    """The section numbers of ``nb`` (see the module docstring; a ``#`` title numbers no section)."""
    return {m.group(1) for line in _markdown_lines(nb) for m in [HEADING.match(line)] if m}


def target_notebook(text: str, start: int, end: int, own: str) -> str:
    """The two-digit number of the notebook that the reference ``text[start:end]`` points into."""
    before, after = text[max(0, start - 120):start], text[end:end + 120]
    named = _NAMED_BEFORE.search(before)
    if named:
        return _number(named)
    named = _NAMED_AFTER.match(after)
    if named:
        return _number(named)
    if _THERE.match(after):
        mentions = list(NOTEBOOK_MENTION.finditer(text[:start]))
        if mentions:
            return _number(mentions[-1])
    return own


def broken_references(nb: dict, own: str, sections: dict[str, set[str]]) -> list[str]:
    """Every ``§N`` of ``nb`` (notebook number ``own``) that names no section of the notebook it points into;
    ``sections`` maps a notebook number to its section numbers."""
    problems = []
    for i, cell_id, text in cell_texts(nb):
        for m in REFERENCE.finditer(text):
            target = target_notebook(text, m.start(), m.end(), own)
            known = sections.get(target)
            if known is None:
                problems.append(f"cell {i} ({cell_id}): {m.group(0)!r} points into notebook {target}, which does "
                                "not exist")
            elif m.group(1) not in known:
                where = "this notebook" if target == own else f"notebook {target}"
                problems.append(f"cell {i} ({cell_id}): {m.group(0)!r} — {where} has no section {m.group(1)} "
                                f"(its numbered sections: {', '.join(sorted(known))})")
    return problems


def _anchor(heading: str) -> str:
    """JupyterLab's anchor of a heading: its text with spaces as hyphens."""
    return heading.replace(" ", "-")


def outside_paths(nb: dict, base: pathlib.Path = NOTEBOOK_DIR, root: pathlib.Path = ROOT) -> list[str]:
    """Paths in ``nb`` that lead outside the repository or to nothing: a ``shared/`` folder anywhere; a relative
    markdown link whose file (or heading anchor) does not exist; an inline-code path (``a/b.py``) that is in
    neither the repository nor the notebooks' folder."""
    problems = []
    for i, cell_id, text in cell_texts(nb):
        for m in OUTSIDE.finditer(text):
            near = " ".join(text[max(0, m.start() - 40):m.end() + 30].split())
            problems.append(f"cell {i} ({cell_id}): a path into a shared/ folder, which is not in the repository: "
                            f"…{near}…")
        if nb["cells"][i]["cell_type"] != "markdown":
            continue
        for m in LINK_TARGET.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (base / path).resolve() if path else None
            if file is not None and (root not in file.parents or not file.exists()):
                problems.append(f"cell {i} ({cell_id}): link {target!r} leads to no file of the repository")
                continue
            if anchor and (file is None or file.suffix == ".ipynb"):
                linked = nb if file is None else json.loads(file.read_text(encoding="utf-8"))
                if anchor not in {_anchor(h) for h in headings(linked)}:
                    problems.append(f"cell {i} ({cell_id}): link {target!r}: no heading with that anchor")
        for m in CODE_SPAN.finditer(text):
            span = m.group(1)
            if " " in span or "/" not in span or "://" in span or not re.search(r"\w/\w", span):
                continue
            candidates = [(root / span).resolve(), (base / span).resolve()]
            if not any(root in c.parents and c.exists() for c in candidates):
                problems.append(f"cell {i} ({cell_id}): path `{span}` is not in the repository")
    return problems


def _load(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _sections_of_all() -> dict[str, set[str]]:
    return {p.name[:2]: section_numbers(_load(p)) for p in NOTEBOOKS}


def module_notebook(path: pathlib.Path) -> str | None:
    """The notebook that shows the text of the package module at ``path`` (None: no notebook in particular)."""
    rel = path.relative_to(PACKAGE).as_posix()
    keys = [k for k in MODULE_NOTEBOOK if rel.startswith(k)]
    return MODULE_NOTEBOOK[max(keys, key=len)] if keys else None


def module_strings(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of the string literals of a module's source (f-strings' literal parts too), docstrings
    aside."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def module_problems(path: pathlib.Path, sections: dict[str, set[str]]) -> list[str]:
    """Broken ``§N`` references in the string literals of the module at ``path`` (against the notebook that shows
    them), and ``shared/`` paths anywhere in its source."""
    source = path.read_text(encoding="utf-8")
    problems = [f"a path into a shared/ folder: …{' '.join(source[max(0, m.start() - 40):m.end() + 30].split())}…"
                for m in OUTSIDE.finditer(source)]
    own = module_notebook(path)
    for line, text in module_strings(source):
        if "§" not in text:
            continue
        if own is None:
            problems.append(f"line {line}: a section reference in a module no notebook is assigned to (add it to "
                            f"MODULE_NOTEBOOK): {text[:80]!r}")
            continue
        nb = {"cells": [{"cell_type": "markdown", "id": f"line {line}", "source": text}]}
        where = f"cell 0 (line {line})"
        problems += [p.replace(where, f"line {line}", 1) for p in broken_references(nb, own, sections)]
    return problems


def test_there_are_notebooks_with_numbered_sections():
    sections = _sections_of_all()
    assert {"01", "04", "05"} <= set(sections)
    assert {"0", "1", "6", "8"} <= sections["04"] and {"3.1", "4.2"} <= sections["05"], sections


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_section_references_name_existing_sections(path):
    problems = broken_references(_load(path), path.name[:2], _sections_of_all())
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_path_leads_outside_the_repository(path):
    problems = outside_paths(_load(path))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_the_package_text_shown_in_a_notebook_names_existing_sections():
    problems = [f"symsgd_core/{path.relative_to(PACKAGE).as_posix()} (shown in notebook {module_notebook(path)}) "
                + problem
                for path in sorted(PACKAGE.rglob("*.py")) for problem in module_problems(path, _sections_of_all())]
    assert not problems, "\n".join(problems)


# ---- the rules themselves, on small notebooks ----------------------------------------------------------------
def _nb(*cells: str, kind: str = "markdown") -> dict:
    return {"cells": [{"cell_type": kind, "id": f"c{k}", "source": s} for k, s in enumerate(cells)]}


def test_section_numbers_are_read_from_every_heading_style():
    nb = _nb("# 04 · Title (a title numbers no section)\n\n## 0 · What\n",
             "## 1b · The reply\n### 3.1 The answer\n", "## 2. Orbits\n",
             "## §7b Langevin\n#### Blow-ups: no number\n", "## Summary")
    assert section_numbers(nb) == {"0", "1b", "3.1", "2", "7b"}
    assert section_numbers(_nb("## 5 · Not a heading", kind="code")) == set()


def test_a_reference_to_a_missing_section_fails_and_an_existing_one_passes():
    sections = {"04": {"0", "1", "1b", "7"}, "05": {"3", "3.1", "4"}}
    bad = broken_references(_nb("Langevin at a matched temperature (§7b)."), "04", sections)
    assert len(bad) == 1 and "'§7b'" in bad[0] and "no section 7b" in bad[0]
    good = _nb("See §7, §1b and §0–§1; Strang, §I.9; notebook 05 §4; [05](05_sgd_noise_sde.ipynb) §3.1.")
    assert broken_references(good, "04", sections) == []
    assert broken_references(_nb("notebook 05 §7"), "04", sections)       # 05 has no §7
    assert broken_references(_nb("(05 §5)"), "04", sections)              # named by its number alone
    assert broken_references(_nb("at γ = 0.05 §1b"), "04", sections) == []  # a number, not a notebook


def test_references_next_to_a_named_notebook_point_into_it():
    sections = {"01": {"4"}, "02": {"6"}, "03": {"2"}}
    text = ("as in [notebook 01](01_diffusion_cancellation.ipynb) (§4 there); the same, §6 of\n"
            "[notebook 02](02_x.ipynb).")
    assert broken_references(_nb(text), "03", sections) == []
    assert broken_references(_nb("§4 of this notebook"), "03", sections)   # 03 has no §4


def test_paths_into_a_shared_folder_and_missing_files_fail():
    bad = outside_paths(_nb("The replies (in\n`shared/seeds`) and ../shared/reply.md.", "`shared/seeds/x.md`"))
    assert len(bad) >= 3 and all("shared/" in b or "not in the repository" in b for b in bad), bad
    assert outside_paths(_nb("[00](00_start_here.ipynb#Notation), `symsgd_core/ui/sde_noise.py`, "
                             "`torch.linalg.svd`/`eigh`, [arXiv](https://arxiv.org/abs/2305.16038)")) == []
    assert outside_paths(_nb("[missing](07_missing.ipynb)"))
    assert outside_paths(_nb("[no such heading](00_start_here.ipynb#Nowhere)"))
    assert outside_paths(_nb("[up](../../outside.md)"))


def test_module_text_is_checked_against_the_notebook_that_shows_it():
    assert module_notebook(PACKAGE / "rank_jumps" / "exercises.py") == "04"
    assert module_notebook(PACKAGE / "sde_noise" / "exercises.py") == "05"
    assert module_notebook(PACKAGE / "ui" / "stationary.py") == "03"
    sections = {"04": {"5", "7"}}
    module = PACKAGE / "rank_jumps" / "exercises.py"
    src = 'def f():\n    """Docstrings are not shown: §9z."""\n    return "grows like $a^2$ (§7b), see §5"\n'
    assert [t for _, t in module_strings(src)] == ["grows like $a^2$ (§7b), see §5"]
    problems = [p for line, text in module_strings(src) if "§" in text
                for p in broken_references(_nb(text), module_notebook(module), sections)]
    assert len(problems) == 1 and "'§7b'" in problems[0]


# ------------------------------------------------------------- Markdown as JupyterLab renders it

#: Math and code, which are not Markdown text (JupyterLab sets math aside before its Markdown parser runs).
_NOT_TEXT = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$|```.*?```|`[^`\n]*`", re.S)
#: Emphasis with ``*`` around strong emphasis with ``**``: ``*Status: … **proved (paper)** …*``. CommonMark renders
#: it as intended, but JupyterLab's Markdown parser (marked 16, in JupyterLab 4.6) leaves both outer ``*`` on the page
#: as text. Writing the outer emphasis with underscores, ``_Status: … **proved (paper)** …_``, renders in both.
STAR_AROUND_STRONG = re.compile(
    r"(?<![*\w])\*(?=[^\s*])"  # an opening *
    r"(?:(?!\n\n)[^*])*\*\*(?:(?!\n\n).)*?\*\*(?:(?!\n\n)[^*])*"  # text with a **strong** span, one paragraph
    r"(?<=[^\s*])\*(?![*\w])",  # the closing *
    re.S)


def star_around_strong(markdown: str) -> list[str]:
    """The ``*…**x**…*`` spans of ``markdown`` (math and code skipped), which JupyterLab shows with literal ``*``."""
    return [m.group(0) for m in STAR_AROUND_STRONG.finditer(_NOT_TEXT.sub("MATH", markdown))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_markdown_shows_no_literal_asterisks_in_jupyterlab(path):
    nb = _load(path)
    found = [f"cell {i}: {span[:120]}" for i, _id, src in cell_texts(nb)
             if nb["cells"][i]["cell_type"] == "markdown" for span in star_around_strong(src)]
    assert not found, f"{path.name}: JupyterLab shows these asterisks as text (write the outer * as _):\n" + \
        "\n".join(found)


def test_star_around_strong_is_found_and_the_underscore_form_is_not():
    assert star_around_strong("*Status: Eqs. 12 and 15 are **proved (paper)**; shown here (asserted).*\n")
    assert star_around_strong("*Status: the ratio $d_a/d_b$ is\n**shown here**; asserted.*")  # across a line break
    assert not star_around_strong("_Status: Eqs. 12 and 15 are **proved (paper)**; shown here (asserted)._\n")
    assert not star_around_strong("*italic* and **bold**, $a_1 * b_2 * c$, `x*` and\n\n```\ny = *z **w** v*\n```\n")
    assert not star_around_strong("*one paragraph*\n\nand **another**.*")
