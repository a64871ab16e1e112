"""Each "Check yourself" exercise asks one question: for every notebook (00–05) and every exercise a
notebook answers in a code cell (``panel.answer(name, value)``), the cell's comment, the exercise's question,
its accepted answer, its worked solution and its typical mistakes agree.

What is read: the notebook JSON (the panels ``X = ExercisePanel(...)``, evaluated with the notebook's own imports
of ``symsgd_core``, and the comments of each answer cell), and the exercise definitions
(``symsgd_core/<topic>/exercises.py``). What is asserted, per answered exercise:

* the cell's comment contains the exercise's ``code_prompt`` (the one place that text is written) and names the
  exercise (its number in the panel, or its name);
* every symbol of the code prompt (a word with a digit, a Greek letter or a math sign) is in the question, and a
  choice's prompt names the values to type: the cell and the panel ask for the same quantity;
* the checker accepts the solution and a value written in the worked solution (for a code exercise, the function
  in its code block);
* every typical mistake is rejected with its own message, and the right answer's message is none of them.

The checks are plain functions that return what disagrees, so the last tests feed them broken input (notebook
01's old comments, a mistake equal to the answer) and assert that they fail.
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import re
import tokenize
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from symsgd_core import balance
from symsgd_core.core.exercises import Exercise, exercises_by_name, number_exercise

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("0[0-5]_*.ipynb"))


# ------------------------------------------------------------------------------------------ reading a notebook
@dataclass(frozen=True)
class AnswerCell:
    """One ``VAR.answer("name", value)`` code cell: its panel's variable, the exercise, its number in that panel
    (from 1) and the cell's comments joined by spaces."""

    notebook: str
    panel: str
    exercise: Exercise
    number: int
    comment: str


def _code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _parse(source: str) -> ast.Module:
    return ast.parse("\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))))


def comment_text(source: str) -> str:
    """The comments of a cell, without their ``#``, joined by single spaces."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return " ".join(t.string.lstrip("#").strip() for t in tokens if t.type == tokenize.COMMENT)


def _namespace(cells: list[str]) -> dict:
    """The names a notebook imports from ``symsgd_core`` (``from symsgd_core[.x] import a [as b]``)."""
    names: dict = {}
    for source in cells:
        for node in ast.walk(_parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "symsgd_core":
                module = importlib.import_module(node.module)
                for alias in node.names:
                    value = getattr(module, alias.name, None)
                    if value is None:  # a submodule not imported by its package's __init__
                        value = importlib.import_module(f"{node.module}.{alias.name}")
                    names[alias.asname or alias.name] = value
    return names


def _panels(cells: list[str]) -> dict[str, list[Exercise]]:
    """Each ``VAR = ExercisePanel(EXPR)`` of the notebook: VAR → its exercises in the panel's order."""
    namespace, panels = _namespace(cells), {}
    for source in cells:
        for node in ast.walk(_parse(source)):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and getattr(node.value.func, "id", None) == "ExercisePanel" and len(node.targets) == 1):
                items = eval(ast.unparse(node.value.args[0]), {"__builtins__": {}, **namespace})  # noqa: S307
                panels[node.targets[0].id] = list(items.values()) if isinstance(items, dict) else list(items)
    return panels


def answer_cells(path: Path) -> list[AnswerCell]:
    """Every code cell of the notebook at ``path`` that answers an exercise with ``VAR.answer("name", value)``."""
    cells = _code_cells(path)
    panels, found = _panels(cells), []
    for source in cells:
        for node in ast.walk(_parse(source)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "answer"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in panels):
                name = ast.literal_eval(node.args[0])
                exercises = panels[node.func.value.id]
                number = [ex.name for ex in exercises].index(name) + 1
                found.append(AnswerCell(path.name, node.func.value.id, exercises[number - 1], number,
                                        comment_text(source)))
    return found


ANSWERED = [cell for path in NOTEBOOKS for cell in answer_cells(path)]


# ------------------------------------------------------------------------------------------ the checks
_EDGE = ",.;:?!"
_MATH = re.compile(r"[0-9\u0080-\uffff/()=·^_+*<>|]")


def _normal(text: str) -> str:
    return " ".join(text.replace("-", " ").lower().split())


def symbol_words(text: str) -> list[str]:
    """The words of ``text`` that carry a symbol (a digit, a non-ASCII letter or a math sign), edge punctuation off."""
    words = (w.strip(_EDGE) for w in text.split())
    return [w for w in words if w and _MATH.search(w) and w not in {"...", "…"}]


def prompt_problems(exercise: Exercise, number: int, comment: str) -> list[str]:
    """What disagrees between an answer cell's ``comment`` and ``exercise`` (number ``number`` in its panel)."""
    prompt, problems = exercise.code_prompt, []
    if not prompt:
        return [f"{exercise.name}: answered in a code cell but has no code_prompt"]
    if prompt not in comment:
        problems.append(f"{exercise.name}: the cell's comment {comment!r} does not contain its code_prompt {prompt!r}")
    said = {int(n) for n in re.findall(r"\bexercise\s+(\d+)", comment, re.I)}
    if said - {number}:
        problems.append(f"{exercise.name}: the cell says exercise {sorted(said)}, the panel numbers it {number}")
    if not said and exercise.name not in comment:
        problems.append(f"{exercise.name}: the cell's comment names neither 'exercise {number}' nor {exercise.name!r}")
    question = _normal(exercise.question)
    for word in symbol_words(prompt):
        if _normal(word) not in question:
            problems.append(f"{exercise.name}: the code prompt's {word!r} is not in the question {exercise.question!r}")
    if exercise.kind == "choice":
        for _label, value in exercise.options:
            if str(value) not in prompt:
                problems.append(f"{exercise.name}: the code prompt {prompt!r} does not name the value {value!r}")
    return problems


_NUMBER = re.compile(
    r"(?P<num>[−-]?\d+(?:\.\d+)?(?:e[−-]?\d+)?)(?:\s*(?:\\cdot|·|\\times|×)\s*10\^\{?(?P<exp>[−-]?\d+)\}?)?"
    r"|\\t?frac\{?(?P<a>\d)\}?\{?(?P<b>\d)\}?")
_TUPLE = re.compile(r"\(\s*([−-]?\d+(?:\.\d+)?(?:\s*,\s*[−-]?\d+(?:\.\d+)?)+)\s*\)")
_CODE = re.compile(r"```python\n(.*?)```", re.S)


def worked_answers(exercise: Exercise) -> list:
    """The answers written in ``exercise.worked``: its numbers (``0.25``, ``−3.6``, ``8.069e-08``,
    ``4.43\\cdot10^{3}``, ``\\tfrac14``), its tuples of numbers, or the functions its Python code block defines."""
    text = exercise.worked
    if exercise.kind == "code":
        found = []
        for block in _CODE.findall(text):
            namespace: dict = {"np": np}
            exec(block, namespace)  # noqa: S102 — the package's own worked solution
            found += [v for k, v in namespace.items() if callable(v) and not k.startswith("__") and k != "np"]
        return found
    if exercise.kind == "vector":
        return [tuple(float(v.replace("−", "-")) for v in m.split(",")) for m in _TUPLE.findall(text)]
    found = []
    for m in _NUMBER.finditer(text):
        if m.group("a"):
            found.append(int(m.group("a")) / int(m.group("b")))
        else:
            value = float(m.group("num").replace("−", "-"))
            found.append(value * 10.0 ** int(m.group("exp").replace("−", "-")) if m.group("exp") else value)
    return found


def definition_problems(exercise: Exercise) -> list[str]:
    """What disagrees inside the definition: the accepted answer, the worked solution and the typical mistakes."""
    problems = []
    right = exercise.check(exercise.solution)
    if not right.correct:
        problems.append(f"{exercise.name}: the checker rejects its own solution {exercise.solution!r}: {right}")
    if exercise.kind != "choice" and not any(exercise.check(v).correct for v in worked_answers(exercise)):
        problems.append(f"{exercise.name}: no answer written in the worked solution is accepted by the checker")
    for value, phrase in exercise.mistakes:
        verdict = exercise.check(value)
        if verdict.status != "wrong" or phrase not in verdict.message:
            problems.append(f"{exercise.name}: the typical mistake {value!r} does not get its message {phrase!r}: "
                            f"{verdict}")
        if phrase in right.message:
            problems.append(f"{exercise.name}: the right answer gets the message of the mistake {value!r}")
    return problems


# ------------------------------------------------------------------------------------------ the notebooks
def test_every_notebook_is_read_and_the_answer_cells_are_found():
    assert [p.name[:2] for p in NOTEBOOKS] == ["00", "01", "02", "03", "04", "05"]
    per_notebook = {p.name[:2]: len(answer_cells(p)) for p in NOTEBOOKS}
    # 00 has no exercises; 01 and 02 answer all six, 03 its four, 04 the seven of §9, 05 two of its three
    assert per_notebook == {"00": 0, "01": 6, "02": 6, "03": 4, "04": 7, "05": 2}, per_notebook


@pytest.mark.parametrize("cell", ANSWERED, ids=lambda c: f"{c.notebook[:2]}-{c.exercise.name}")
def test_the_code_cell_asks_what_the_panel_asks(cell):
    assert prompt_problems(cell.exercise, cell.number, cell.comment) == []


@pytest.mark.parametrize("cell", ANSWERED, ids=lambda c: f"{c.notebook[:2]}-{c.exercise.name}")
def test_accepted_answer_worked_solution_and_mistakes_agree(cell):
    assert definition_problems(cell.exercise) == []


def test_every_code_prompt_has_its_code_cell():
    """A ``code_prompt`` no cell shows would be a second, unchecked version of a question."""
    answered = {(c.notebook, c.exercise.name) for c in ANSWERED}
    for path in NOTEBOOKS:
        for exercises in _panels(_code_cells(path)).values():
            for ex in exercises:
                assert not ex.code_prompt or (path.name, ex.name) in answered, (path.name, ex.name)


# ------------------------------------------------------------------------------------------ the checks can fail
#: Notebook 01's answer comments for exercises 4 and 5 as they were: each asked a second question.
OLD_01 = {"sgd_step_covariance": "exercise 4 in code: the per-step noise variance of SGD, in units of η²C",
          "sqrt_null_space": "exercise 5 in code: ‖√C x‖ for the x of the question"}


@pytest.mark.parametrize("name", sorted(OLD_01))
def test_notebook_01_as_it_was_fails(name):
    number = list(balance.EXERCISES).index(name) + 1
    assert prompt_problems(balance.EXERCISES[name], number, OLD_01[name])


def test_a_cell_with_the_wrong_number_or_a_prompt_off_the_question_fails():
    ex = balance.EXERCISES["step_factor"]
    assert prompt_problems(ex, 3, "exercise 3 in code: " + ex.code_prompt) == []
    assert prompt_problems(ex, 3, "exercise 4 in code: " + ex.code_prompt)  # another exercise's number
    assert prompt_problems(ex, 3, ex.code_prompt)  # names no exercise
    off = replace(ex, code_prompt="your number for u'² + w'²")  # a quantity the question does not ask
    assert prompt_problems(off, 3, "exercise 3 in code: " + off.code_prompt)
    assert prompt_problems(replace(ex, code_prompt=""), 3, "exercise 3 in code: anything")


def test_a_choice_prompt_must_name_the_values_to_type():
    from symsgd_core import rank_jumps

    ex = rank_jumps.EXERCISES["one_way"]
    assert prompt_problems(ex, 6, "one_way: " + ex.code_prompt) == []
    bad = replace(ex, code_prompt="yes or no")
    assert prompt_problems(bad, 6, "one_way: yes or no")


def test_a_definition_that_disagrees_fails():
    kwargs = {"solution": 0.025, "rel_tol": 1e-3}
    good = replace(number_exercise("k", "What is k?", 0.025, "right.", "count.", mistakes=[(0.25, "one step")],
                                   **kwargs), worked="So $k = 0.025$.")
    assert definition_problems(good) == []
    assert definition_problems(replace(good, worked="So $k = 0.25$."))  # the worked value is the mistake
    as_mistake = number_exercise("k", "What is k?", 0.025, "right.", "count.", mistakes=[(0.025, "one step")],
                                 **kwargs)
    assert definition_problems(replace(as_mistake, worked="$k = 0.025$"))  # the right answer filed as a mistake
    unflagged = replace(good, mistakes=((0.3, "one step"),))  # a "typical mistake" the checker does not know
    assert definition_problems(unflagged)
    assert definition_problems(replace(good, solution=0.25))  # the checker rejects the stated solution


def test_worked_answers_reads_the_forms_the_solutions_use():
    def ex(kind, worked):
        return Exercise("x", "?", lambda a: None, kind, options=(("a", 1),) if kind == "choice" else (),
                        worked=worked)

    assert worked_answers(ex("number", r"$E = 3\,(1.5^{18}-1) \approx 4.43\cdot10^{3}$")) == pytest.approx(
        [3, 1.5, 18, -1, 4430.0])  # "-1" of "^{18}-1" reads as a number too: harmless, the checker decides
    assert worked_answers(ex("number", r"$\det(I/2) = \tfrac14$, e = 8.069e-08, −3.6")) == pytest.approx(
        [2, 0.25, 8.069e-08, -3.6])
    assert worked_answers(ex("vector", r"$\sqrt C x = (1, 1)$, not (2, −1.5)")) == [(1.0, 1.0), (2.0, -1.5)]
    (f,) = worked_answers(ex("code", "text\n```python\ndef f(u, w):\n    return u * u - w * w\n```"))
    assert f(2.0, 1.0) == 3.0


def test_code_prompts_are_set_once_and_only_for_exercises_that_exist():
    a = number_exercise("a", "?", 1.0, "r", "h", solution=1.0)
    assert exercises_by_name([a], {"a": "the number a"})["a"].code_prompt == "the number a"
    assert exercises_by_name([a])["a"].code_prompt == ""
    with pytest.raises(ValueError, match="do not exist"):
        exercises_by_name([a], {"b": "a typo"})
    with pytest.raises(ValueError, match="two exercises"):
        exercises_by_name([a, a])
