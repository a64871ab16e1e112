"""Answering a notebook's Check-yourself panel through the page: a wrong answer twice, the hint, then the worked
solution revealed, for each exercise."""

from __future__ import annotations

import json
from pathlib import Path

from notebook_run import NotebookRun

# ------------------------------------------------------------------------------------------------
# "Check yourself" panels (symsgd_core.lesson.exercise_panel): answered through the page, as a student does
# ------------------------------------------------------------------------------------------------
#: Longest wait for the kernel's verdict after Check / Enter, seconds.
EXERCISE_TIMEOUT_S = 30.0



def notebook_has_exercise_panel(path: Path) -> bool:
    """True when a code cell of the notebook builds an ``ExercisePanel``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return any(cell.get("cell_type") == "code" and "ExercisePanel(" in "".join(cell.get("source", []))
               for cell in nb.get("cells", []))



def _exercises_by_question() -> dict[str, object]:
    """Every notebook's exercises, keyed by the question text the panel shows."""
    from symsgd_core import balance, lifting, rank_jumps, stationary
    from symsgd_core.sde_noise import exercises as sde_exercises  # Notebook 05's

    return {_words(ex.question): ex for mod in (balance, lifting, rank_jumps, stationary, sde_exercises)
            for ex in mod.EXERCISES.values()}



def _words(text: str) -> str:
    return " ".join(text.split())



def _wait_verdict(box, status: str, run: NotebookRun, what: str) -> None:
    verdict = box.locator(f".symsgd-feedback-{status}")
    try:
        verdict.wait_for(state="visible", timeout=run.ms(EXERCISE_TIMEOUT_S))
    except Exception as exc:
        shown = box.locator(".symsgd-feedback").all_inner_texts()
        raise AssertionError(f"{what}: expected a '{status}' verdict within {EXERCISE_TIMEOUT_S:.0f} s; "
                             f"the box shows {shown or 'nothing'}") from exc



def _wrong_answer(ex) -> str:
    """A readable but wrong answer to the typed exercise ``ex`` (its first typical mistake, else far off)."""
    if ex.kind == "number":
        for value, _why in ex.mistakes:
            if not ex.check(value).correct:
                return repr(float(value))
        return repr(float(ex.solution) + 17.0)
    for text in ("0, 1", "1, 0", "3, 7"):
        if not ex.check(text).correct:
            return text
    raise AssertionError(f"no wrong vector answer found for {ex.name!r}")



def _visible_text(locator) -> str:
    return " ".join(" ".join(locator.all_inner_texts()).split())



def wrong_twice_then_reveal(box, ex, run: NotebookRun) -> str:
    """A wrong answer typed, the box left with Tab (that submits nothing), then Check pressed with the Space key: one
    try, so only the hint shows (never the checker's message; a box that submitted on leaving it would count two
    tries here). The same answer again with Enter: the checker's message. Then "Show worked solution"
    (pressed with Enter) reveals the derivation, typeset."""
    from symsgd_core.lesson.exercise_panel import GENERIC_HINT, HIDE

    field = box.locator("input[type=text]")
    wrong = _wrong_answer(ex)
    checker_says = " ".join(ex.check(wrong).message.split())
    field.fill(wrong)
    field.press("Tab")  # leaving the box submits nothing
    box.get_by_role("button", name="Check").focus()  # from the keyboard, as without a mouse
    box.page.keyboard.press("Space")
    _wait_verdict(box, "wrong", run, f"exercise {ex.name!r}, wrong answer {wrong!r}, Tab, then Check")
    first = _visible_text(box.locator(".symsgd-feedback"))
    hint = " ".join((ex.hint.strip() or GENERIC_HINT).split())
    assert hint[:60] in first, f"{ex.name}: the first wrong try should show the hint {hint[:60]!r}; shows {first!r}"
    assert checker_says[:60] not in first, f"{ex.name}: the first wrong try shows the checker's message: {first!r}"
    field.press("Enter")
    box.locator(".symsgd-feedback").filter(has_text=checker_says[:40]).wait_for(
        state="visible", timeout=run.ms(EXERCISE_TIMEOUT_S))
    box.get_by_role("button", name="Show worked solution").focus()
    box.page.keyboard.press("Enter")
    worked = box.locator(".symsgd-worked")
    worked.wait_for(state="visible", timeout=run.ms(EXERCISE_TIMEOUT_S))
    box.get_by_role("button", name=HIDE).wait_for(state="visible", timeout=run.ms(EXERCISE_TIMEOUT_S))
    text = _visible_text(worked)
    assert "Worked solution" in text and len(text) > 40, f"{ex.name}: worked solution shows {text[:200]!r}"
    if "$" in ex.worked:
        worked.locator("mjx-container, .MathJax").first.wait_for(state="attached", timeout=run.ms(30))
    return (f"{ex.name}: wrong + Tab + Check → hint, wrong again + Enter → the checker's message, "
            f"Show worked solution → shown")



def answer_exercises(page, run: NotebookRun) -> list[str]:
    """Answer the first typed exercise — a wrong answer twice (hint first, then the checker's message), reveal the
    worked solution (:func:`wrong_twice_then_reveal`), garbage + Enter → the format message, the solution + Check
    → right — and the first multiple-choice one (the solution's button + Check → right) of the page's "Check
    yourself" panel.

    Returns what was done, one line per answer. Raises AssertionError naming the exercise otherwise.
    """
    known = _exercises_by_question()
    boxes = page.locator(".symsgd-exercises .symsgd-exercise")
    assert boxes.count() > 0, "the notebook builds an ExercisePanel, but no exercise box is in the page"
    done: list[str] = []
    typed = choice = None
    for i in range(boxes.count()):
        box = boxes.nth(i)
        question = _words(box.locator(".widget-html").first.inner_text().split(".", 1)[-1])
        ex = known.get(question)
        assert ex is not None, f"exercise box {i + 1}: its question is not one of the package's: {question[:80]!r}"
        if typed is None and ex.kind in ("number", "vector"):
            typed = (box, ex)
        if choice is None and ex.kind == "choice":
            choice = (box, ex)
    if typed is not None:
        box, ex = typed
        done.append(wrong_twice_then_reveal(box, ex, run))
        field = box.locator("input[type=text]")
        field.fill("not a number")
        field.press("Enter")
        _wait_verdict(box, "wrong", run, f"exercise {ex.name!r}, 'not a number' + Enter")
        field.fill(", ".join(map(repr, ex.solution)) if ex.kind == "vector" else repr(ex.solution))
        box.get_by_role("button", name="Check").click()
        _wait_verdict(box, "right", run, f"exercise {ex.name!r}, the solution {ex.solution!r} + Check")
        done.append(f"{ex.name}: garbage → wrong, solution → right")
    if choice is not None:
        box, ex = choice
        label = next(lbl for lbl, value in ex.options if value == ex.solution)
        box.locator(".widget-toggle-buttons button").filter(has_text=label).first.click()
        box.get_by_role("button", name="Check").click()
        _wait_verdict(box, "right", run, f"exercise {ex.name!r}, choice {label!r} + Check")
        done.append(f"{ex.name}: choice {label!r} → right")
    assert done, "the panel has no exercise that can be answered in the page"
    return done
