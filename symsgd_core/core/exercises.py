"""The "Check yourself" exercises: questions with a checker, a worked answer and the typical mistakes.

* :class:`Feedback` — a verdict (``"right"``, ``"wrong"`` or ``"unanswered"``) and why;
* :func:`as_number` / :func:`as_vector` — a reader's answer as finite floats, or ``None`` (never raises);
* :class:`Exercise` — one question: its text, its input kind, a checker ``answer -> Feedback``, a known right
  answer, the typical mistakes it recognises and what the notebook's code cell for it asks for
  (``code_prompt``); :func:`number_exercise` and :func:`vector_exercise` build the numeric ones.

Each topic keeps its notebook's questions in its ``exercises`` module (``EXERCISES``, name → Exercise): the
expected answers come from the topic's own formulas and experiments, the ``solution`` of each is worked out
by hand, independently, so a test that the checker accepts it can fail. No widgets here: the panel that
shows them is :class:`symsgd_core.lesson.exercise_panel.ExercisePanel`.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Exercise", "Feedback", "KINDS", "as_number", "as_vector", "exercises_by_name", "number_exercise",
           "vector_exercise"]

#: Input kinds: a number or a vector typed in a text box, one of a few options, or a Python function.
KINDS = ("number", "vector", "choice", "code")

_MARKS = {"right": "✔ right", "wrong": "✘ not quite", "unanswered": "… not answered yet"}
#: Left-border colours of the verdicts (Okabe–Ito bluish green and vermillion, a grey; see symsgd_core.ui.style):
#: the text keeps the theme's colour, so it is readable in JupyterLab's light and dark themes alike.
_COLOURS = {"right": "#009E73", "wrong": "#D55E00", "unanswered": "#999999"}

#: What an empty answer asks the reader to do, by input kind.
_ASK = {
    "number": "type a number in the box (e.g. -0.5, 1e-3 or 1/4) and press Check.",
    "vector": "type the numbers in the box, separated by commas (e.g. 1, 0), and press Check.",
    "choice": "pick an answer and press Check.",
    "code": "write the function in the code cell below and run the cell (JupyterLab).",
}
@dataclass(frozen=True)
class Feedback:
    """The verdict of an exercise checker.

    Attributes:
        status: ``"right"``, ``"wrong"`` or ``"unanswered"``.
        message: why, in one or two sentences (plain Unicode).
    """

    status: str
    message: str

    def __post_init__(self) -> None:
        if self.status not in _MARKS:
            raise ValueError(f"status must be one of {sorted(_MARKS)}, got {self.status!r}")

    @property
    def correct(self) -> bool:
        """True only for a right answer."""
        return self.status == "right"

    def __str__(self) -> str:
        return f"{_MARKS[self.status]}: {self.message}"

    def _repr_html_(self) -> str:
        return (f'<div class="symsgd-feedback symsgd-feedback-{self.status}" style="border-left:4px solid '
                f'{_COLOURS[self.status]};padding-left:6px">{html.escape(str(self))}</div>')


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _parse_number(text: str) -> float | None:
    """A decimal number (``"0.25"``, ``"-1e-3"``) or a fraction of two (``"1/4"``); no ``eval``."""
    text = text.strip().replace("−", "-")  # the questions print U+2212; a reader may paste it
    parts = text.split("/")
    if len(parts) > 2:
        return None
    try:
        values = [float(p.strip()) for p in parts]
    except ValueError:
        return None
    if not all(math.isfinite(v) for v in values):
        return None
    if len(values) == 2:
        return None if values[1] == 0 else _finite(values[0] / values[1])
    return values[0]


def as_number(answer) -> float | None:
    """``answer`` as a finite float, or ``None`` when it is not one (never raises).

    Accepts ints, floats, numpy scalars and 0-d arrays, and strings such as ``"0.25"``, ``"−3.6"``,
    ``"1e-3"`` and fractions ``"1/4"`` (parsed, not evaluated). Rejects ``None``, booleans, NaN, ±inf,
    sequences, arrays with elements, complex numbers and other strings.
    """
    if isinstance(answer, np.ndarray):
        if answer.ndim != 0:
            return None
        answer = answer.item()
    if answer is None or isinstance(answer, (bool, np.bool_)):
        return None
    if isinstance(answer, str):
        return _parse_number(answer)
    if not isinstance(answer, numbers.Real):
        return None
    try:
        return _finite(float(answer))
    except (TypeError, ValueError, OverflowError):
        return None


def as_vector(answer) -> np.ndarray | None:
    """``answer`` as a 1-D array of finite floats, or ``None`` (never raises).

    Accepts sequences and arrays of numbers, and strings such as ``"1, 0"``, ``"(4, 2)"`` or ``"[1 -2]"``
    (each entry read by :func:`as_number`, so ``"1/2, 1"`` works too).
    """
    if isinstance(answer, str):
        text = answer.strip().strip("()[]")
        entries = [e for e in text.replace(",", " ").replace(";", " ").split() if e]
        values = [as_number(e) for e in entries]
    else:
        try:
            arr = np.asarray(answer, dtype=object)
        except Exception:  # an exotic object: not a vector
            return None
        if arr.ndim != 1:
            return None
        values = [as_number(v) for v in arr]
    if not values or any(v is None for v in values):
        return None
    return np.array(values, dtype=float)


@dataclass(frozen=True)
class Exercise:
    """One "Check yourself" question.

    Attributes:
        name: its key (unique within a notebook).
        question: the question, plain Unicode (shown in the panel).
        checker: ``answer -> Feedback`` for an answer that is not ``None``; use :meth:`check`, which also
            handles ``None`` and never raises.
        kind: one of :data:`KINDS`.
        options: for ``kind="choice"``, the ``(label, value)`` pairs the reader picks from.
        solution: a right answer, derived by hand (the tests and notebooks check that ``checker`` accepts it).
        mistakes: typical wrong answers and a phrase of the message each gets (the tests check both).
        worked: the worked solution shown on request — the derivation, not only the number (Markdown with
            ``$…$`` math); empty until written.
        hint: what the panel says after a first wrong try; it points the way without giving the answer.
        code_prompt: what the notebook's code cell for this exercise asks for, as its comment says it (e.g.
            ``"your number for dG/dt"``): the one place that text is written; empty when no code cell answers
            the exercise. ``tests/notebooks/test_exercises_agree.py`` checks that the cell's comment contains it and
            that it names what the question asks.
    """

    name: str
    question: str
    checker: Callable[[object], Feedback]
    kind: str = "number"
    options: tuple = ()
    solution: object = None
    mistakes: tuple = ()
    worked: str = ""
    hint: str = ""
    code_prompt: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if (self.kind == "choice") != bool(self.options):
            raise ValueError(f"{self.name}: options are required for kind 'choice' and only for it")

    def check(self, answer) -> Feedback:
        """The verdict on ``answer``: "unanswered" for ``None``, otherwise the checker's (never raises)."""
        if answer is None:
            return Feedback("unanswered", _ASK[self.kind])
        try:
            return self.checker(answer)
        except Exception as exc:  # a checker bug must not break the reader's page; say what happened
            return Feedback("wrong", f"this answer could not be checked ({type(exc).__name__}: {exc}).")


def _describe(answer) -> str:
    text = repr(answer)
    return text if len(text) <= 60 else text[:57] + "…"


def number_exercise(name: str, question: str, expected: float, right: str, hint: str, *, solution: float,
                    rel_tol: float = 1e-3, abs_tol: float = 0.0, mistakes: Iterable[tuple[float, str]] = (),
                    close_tol: float | None = None, code_prompt: str = "") -> Exercise:
    """An exercise whose answer is a number.

    Args:
        name, question, solution: as in :class:`Exercise`.
        expected: the right value (from the package's own formulas).
        right: the explanation shown with a right answer.
        hint: shown with a wrong answer that is not a known mistake.
        rel_tol, abs_tol: an answer ``a`` is right when ``math.isclose(a, expected, rel_tol, abs_tol)``.
        mistakes: ``(value, explanation)`` for typical wrong answers, matched with the same tolerances.
        close_tol: if given, an answer within ``close_tol · max(1, |expected|)`` of ``expected`` (but not
            right) is told to give more digits.
        code_prompt: as in :class:`Exercise`.
    """
    mistakes = tuple((float(v), str(m)) for v, m in mistakes)

    def checker(answer) -> Feedback:
        a = as_number(answer)
        if a is None:
            return Feedback("wrong", f"expected a number (such as -0.5, 1e-3 or 1/4), got {_describe(answer)}.")
        if math.isclose(a, expected, rel_tol=rel_tol, abs_tol=abs_tol):
            return Feedback("right", right)
        for value, explanation in mistakes:
            if math.isclose(a, value, rel_tol=rel_tol, abs_tol=abs_tol):
                return Feedback("wrong", f"you gave {a:.4g} — {explanation}")
        if close_tol is not None and abs(a - expected) <= close_tol * max(1.0, abs(expected)):
            return Feedback("wrong", f"{a:.4g} is close, but not precise enough: give at least 4 significant digits.")
        return Feedback("wrong", f"you gave {a:.4g}. Hint: {hint}")

    return Exercise(name, question, checker, "number", solution=solution, mistakes=mistakes, code_prompt=code_prompt)


def _vector_text(v) -> str:
    return "(" + ", ".join(f"{x:.4g}" for x in v) + ")"


def vector_exercise(name: str, question: str, expected, right: str, hint: str, *, solution,
                    abs_tol: float = 1e-3, mistakes: Iterable[tuple[object, str]] = (),
                    code_prompt: str = "") -> Exercise:
    """An exercise whose answer is a vector of a given length (typed ``1, 0``; in code ``[1.0, 0.0]``).

    Args:
        name, question, solution, code_prompt: as in :class:`Exercise`.
        expected: the right vector, shape ``(n,)`` (from the package's own formulas).
        right: the explanation shown with a right answer.
        hint: shown with a wrong answer that is not a known mistake.
        abs_tol: an answer is right when every entry is within ``abs_tol`` of ``expected`` (default 1e-3: a
            reader types 3 or 4 digits).
        mistakes: ``(vector, explanation)`` for typical wrong answers, matched with the same tolerance.
    """
    expected = np.asarray(expected, dtype=float)
    if expected.ndim != 1 or expected.size == 0 or not np.all(np.isfinite(expected)):
        raise ValueError(f"{name}: expected must be a non-empty 1-D vector of finite numbers, got {expected!r}")
    if not abs_tol > 0:
        raise ValueError(f"{name}: abs_tol must be positive, got {abs_tol!r}")
    known = tuple((np.asarray(v, dtype=float), str(m)) for v, m in mistakes)
    if any(v.shape != expected.shape for v, _m in known):
        raise ValueError(f"{name}: every mistake must have the shape of expected, {expected.shape}")
    n = expected.size

    def checker(answer) -> Feedback:
        a = as_vector(answer)
        if a is None or a.shape != expected.shape:
            return Feedback("wrong", f"expected {n} numbers separated by commas (in code: a list such as "
                                     f"[{', '.join(['1.0'] + ['0.0'] * (n - 1))}]), got {_describe(answer)}.")
        if np.all(np.abs(a - expected) <= abs_tol):
            return Feedback("right", right)
        for value, explanation in known:
            if np.all(np.abs(a - value) <= abs_tol):
                return Feedback("wrong", f"you gave {_vector_text(a)} — {explanation}")
        return Feedback("wrong", f"you gave {_vector_text(a)}. Hint: {hint}")

    return Exercise(name, question, checker, "vector", solution=tuple(float(x) for x in solution),
                    mistakes=tuple((tuple(float(x) for x in v), m) for v, m in known), code_prompt=code_prompt)




def exercises_by_name(exercises: Iterable[Exercise], code_prompts: Mapping[str, str] = ()) -> dict[str, Exercise]:
    """A notebook's ``EXERCISES``: name → exercise in the given order, each with its ``code_prompt`` from
    ``code_prompts`` (name → prompt; the exercises not named keep theirs).

    Raises ValueError for two exercises of one name, or a prompt naming no exercise (a typo would otherwise
    leave a code cell's question unchecked).
    """
    out: dict[str, Exercise] = {}
    for ex in exercises:
        if ex.name in out:
            raise ValueError(f"two exercises are named {ex.name!r}")
        out[ex.name] = ex
    prompts = dict(code_prompts)
    unknown = sorted(set(prompts) - set(out))
    if unknown:
        raise ValueError(f"code prompts for exercises that do not exist: {unknown}; the exercises are {list(out)}")
    return {name: replace(ex, code_prompt=prompts[name]) if name in prompts else ex for name, ex in out.items()}
