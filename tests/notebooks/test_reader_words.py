"""The word rule (symsgd_jupyter.text_checks.word_problems) over every text a notebook shows a reader that is
written in a topic's package and not swept by tests/ui/test_ui_words.py: the claim statements and tolerance
sources its claims cells print (``claims.py``, ``checks.py``: what ``assert_claims`` shows, as a table and as text
lines) and every text of its "Check yourself" exercises (question, hint, worked solution outside its ``$…$`` math,
code prompt, options, the right answer's message, each typical mistake's message and the hint's wrong-answer
message), and what a notebook prints: the lines its ``report.py`` functions write (read from the source, as the
claims; each topic's report tests also sweep the reports built on real results, tests/*/test_*_report.py), the text
of every ``print(...)`` in a notebook's code cells, and every notebook's code comments.

The claims are read from the source, not run (running them needs every experiment of a notebook): every string a
``claims.py`` or ``checks.py`` module writes (an f-string with each value as ``1``), except docstrings, error
messages (``raise``), dictionary keys and indices, and names (a string without a space: a check's name such as
``rank_jumps.trap.sgd_stays_in_B1`` is an identifier, shown as code).
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from symsgd_jupyter.text_checks import word_problems

ROOT = Path(__file__).resolve().parents[2]
TOPICS = ("balance", "lifting", "stationary", "rank_jumps", "sde_noise")
#: Markdown math, rendered on the page (a worked solution is Markdown): the rule reads the prose around it.
MARKDOWN_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$", re.S)
#: A name, not a sentence: no space in it (a check's name, a key, an ``__all__`` entry).
IDENTIFIER = re.compile(r"^\S*$")


def shown_strings(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every string ``source`` writes for a reader: string constants and f-strings (each
    value replaced by ``1``), without docstrings, ``raise`` messages, dictionary keys, indices and names."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
            skip.add(id(body[0].value))
        if isinstance(node, ast.Raise):
            skip.update(id(n) for n in ast.walk(node))
        if isinstance(node, ast.Dict):
            skip.update(id(k) for k in node.keys if k is not None)
        if isinstance(node, ast.Subscript):
            skip.update(id(n) for n in ast.walk(node.slice))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(n) for v in node.values for n in ast.walk(v))
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "1" for v in node.values)
        else:
            continue
        if not IDENTIFIER.match(text):
            out.append((node.lineno, text))
    return sorted(out)


def source_problems(path: Path) -> list[str]:
    """What the word rule finds in the strings ``path`` shows a reader, each with its file and line."""
    rel = path.relative_to(ROOT)
    return [f"{rel}:{line}: {p}" for line, text in shown_strings(path.read_text(encoding="utf-8"))
            for p in word_problems(text)]


#: Stored grid labels a report looks rows up by (``sde_noise.report.label_words`` turns them into words before
#: printing): keys, not text.
STORED_LABELS = frozenset(raw for raw, _words in importlib.import_module("symsgd_core.sde_noise.report")._LABEL_WORDS)
NOTEBOOKS = sorted((ROOT / "notebooks").glob("0[0-5]_*.ipynb"))
#: The notebooks whose code comments this sweep reads: every one.
COMMENTED = tuple(path.name for path in NOTEBOOKS)


def _code_cells(path: Path) -> list[str]:
    """A notebook's code cells, without IPython's ``%`` and ``!`` lines."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["\n".join(ln for ln in "".join(c["source"]).splitlines() if not ln.lstrip().startswith(("%", "!")))
            for c in cells if c["cell_type"] == "code"]


def printed_strings(source: str) -> list[str]:
    """The literal text of every ``print(...)`` argument in ``source`` (an f-string with each value as ``1``)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    out.append(arg.value)
                elif isinstance(arg, ast.JoinedStr):
                    out.append("".join(v.value if isinstance(v, ast.Constant) else "1" for v in arg.values))
    return out


def comments(source: str) -> list[str]:
    """The comments of ``source``."""
    return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]


def exercise_texts(ex) -> list[tuple[str, str]]:
    """``(what, text)`` of every text of exercise ``ex`` a reader sees (the worked solution without its math)."""
    texts = [("question", ex.question), ("hint", ex.hint), ("worked", MARKDOWN_MATH.sub(" ", ex.worked)),
             ("code prompt", ex.code_prompt)]
    texts += [("option", str(label)) for label, _value in ex.options]
    texts += [("mistake", message) for _value, message in ex.mistakes]
    if ex.kind != "code":
        texts.append(("right answer", ex.check(ex.solution).message))
    if ex.kind == "number":  # a wrong answer that is no known mistake: the message quotes the hint
        texts.append(("wrong answer", ex.check(float(ex.solution) * 1.37 + 11.3).message))
    return texts


def exercise_problems(exercises: dict) -> list[str]:
    return [f"{name} ({what}): {p}" for name, ex in exercises.items() for what, text in exercise_texts(ex)
            for p in word_problems(text)]


@pytest.mark.parametrize("module", ["claims", "checks"])
@pytest.mark.parametrize("topic", TOPICS)
def test_claim_and_check_statements_follow_the_word_rule(topic, module):
    problems = source_problems(ROOT / "symsgd_core" / topic / f"{module}.py")
    assert not problems, f"{len(problems)} raw forms:\n" + "\n".join(problems)


@pytest.mark.parametrize("topic", [t for t in TOPICS if t != "lifting"])  # notebook 02 prints no report
def test_report_lines_follow_the_word_rule(topic):
    path = ROOT / "symsgd_core" / topic / "report.py"
    problems = [f"{path.name}:{line}: {p}" for line, text in shown_strings(path.read_text(encoding="utf-8"))
                if text not in STORED_LABELS for p in word_problems(text)]
    assert not problems, f"{len(problems)} raw forms:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_what_a_notebook_prints_and_its_comments_follow_the_word_rule(path):
    cells = _code_cells(path)
    texts = [text for source in cells for text in printed_strings(source)]
    if path.name in COMMENTED:
        texts += [text for source in cells for text in comments(source)]
    problems = [p for text in texts for p in word_problems(text)]
    assert not problems, f"{len(problems)} raw forms:\n" + "\n".join(problems)


def test_the_notebook_readers_find_a_printed_raw_form_and_skip_values():
    source = 'x = 1  # in B_1\nprint(f"s_2 = {d[\'s_2\']:.3g}", "λ_max", y)\nprint(rows)'
    assert printed_strings(source) == ["s_2 = 1", "λ_max"] and comments(source) == ["# in B_1"]
    assert all(word_problems(t) for t in [*printed_strings(source), *comments(source)])
    assert "Langevin 1× τ_match" in STORED_LABELS


@pytest.mark.parametrize("topic", TOPICS)
def test_exercise_texts_follow_the_word_rule(topic):
    exercises = importlib.import_module(f"symsgd_core.{topic}.exercises").EXERCISES
    assert exercises
    problems = exercise_problems(exercises)
    assert not problems, f"{len(problems)} raw forms:\n" + "\n".join(problems)


def test_the_source_reader_finds_a_claims_raw_math_and_skips_names_and_docstrings():
    source = '''
"""Module docstring with s_k^{2/L}."""
def claims(r):
    """B_1 in a docstring."""
    if r is None:
        raise ValueError(f"no run in B_1 {r}")
    return [make_result("rank_jumps.trap.in_B1", f"every run is in B_1 at step {r}", 0, 0, "exact (1 − 2ηγ)^t"),
            make_result("x.y", "the rank-1 minimum is in B₁", 0, 0, "exact", details={"s_2": 1})]
'''
    texts = [t for _line, t in shown_strings(source)]
    assert texts == ["every run is in B_1 at step 1", "exact (1 − 2ηγ)^t", "the rank-1 minimum is in B₁"]
    assert [len(word_problems(t)) for t in texts] == [1, 1, 0]


def test_the_exercise_reader_reads_every_message():
    from symsgd_core.core.exercises import number_exercise

    ex = number_exercise("t", "What is s_2?", 2.0, "right: B_1 holds", "hint: look at λ_max", solution=2.0,
                         mistakes=[(4.0, "that is θ_i")])
    assert len(exercise_problems({"t": ex})) == 4
