"""What both modes check of a notebook's page once it is built: the claims cells, compact printed text, every slider
named from its first paint, the axe-core audit, and the reader's part (:func:`interact_and_recheck`: move the
sliders, recheck, answer the exercises, audit)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from exercise_answers import answer_exercises, notebook_has_exercise_panel
from figure_inspection import check_figures, format_output_errors, output_errors
from notebook_run import RECOVERED_START_MISSES, ConsoleLog, NotebookRun, explain
from slider_moves import ControllerLatency, exercise_all_controllers


def notebook_checks_claims(path: Path) -> bool:
    """True when a code cell of the notebook calls ``assert_claims``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return any(cell.get("cell_type") == "code" and "assert_claims(" in "".join(cell.get("source", []))
               for cell in nb.get("cells", []))



def check_claim_cells(page, run: NotebookRun, notebook: Path, classroom: bool, scope: str = "body") -> None:
    """Step: claim cells are one compact line ("✔ 6 claims checked", the table behind a click), in JupyterLab and
    in classroom mode alike."""
    if not notebook_checks_claims(notebook):
        return
    with run.step("claim cells: one compact line, the table behind a click", fatal=False):
        summaries = page.locator(f"{scope} details.symsgd-claims > summary")
        text = page.evaluate(f"() => document.querySelector({scope!r}).innerText")
        where = "classroom page" if classroom else "notebook in JupyterLab"
        assert summaries.count() > 0, f"no compact claim line in the {where}"
        lines = [" ".join(t.split()) for t in summaries.all_inner_texts()]
        assert all(re.fullmatch(r"✔ \d+ claims? checked", t) for t in lines), lines
        assert "[PASS]" not in text, f"the {where} still shows the wall of [PASS] lines"
        # the first claim line a reader can see: one under a figure still covered by its prediction is not
        first = page.locator(f"{scope} details.symsgd-claims >> visible=true").first
        first.locator("summary").click()
        first.locator("table.symsgd-claims-table").wait_for(state="visible", timeout=run.ms(10))
        run.detail = f"{len(lines)} claim cells: {lines[:3]}"



def check_printed_text_is_compact(page, run: NotebookRun, notebook: Path) -> None:
    """Step (classroom mode): no cell shows raw printed text; what the notebook prints is one compact line each
    (``.symsgd-printed``: a short line as it is, longer text behind a click). See symsgd_jupyter/compact_output.py."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    prints = any(c.get("cell_type") == "code" and "print(" in "".join(c.get("source", [])) for c in nb["cells"])
    with run.step("classroom: printed text is one compact line per cell", fatal=False):
        raw = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stdout']").count()
        assert raw == 0, f"{raw} outputs still show raw printed text"
        if prints:
            assert page.locator(".symsgd-printed").count() > 0, "the notebook prints, but no compact line is shown"
        closed = page.locator("details.symsgd-printed")
        if closed.count():
            assert not closed.first.locator("pre").is_visible()  # the full text waits behind the click
            closed.first.locator("summary").click()
            closed.first.locator("pre").wait_for(state="visible", timeout=run.ms(10))



def check_sliders_named_from_first_paint(page, run: NotebookRun) -> None:
    """Step: no slider was ever painted without an accessible name (the probe, ``js/probe.js``, looks before every
    paint from the page's start): the axe-core audit sees the page at one moment only, and a slider named some time
    after it is drawn fails it only when the audit happens to run in between (aria-input-field-name, serious)."""
    with run.step("every slider has its accessible name from its first paint", fatal=False):
        unnamed = page.evaluate("() => window.__symsgd.unnamedSliders")
        assert unnamed["frames"] == 0, (f"sliders painted without an accessible name in {unnamed['frames']} frames "
                                        f"(at most {unnamed['most']} at once; first: {unnamed['first']})")



def audit_step(page, run: NotebookRun, scope: str = "", label: str = "page", rules: list[str] | None = None) -> None:
    """Step: the axe-core audit of the notebook's content (accessibility.py); fails on serious/critical findings."""
    from accessibility import audit, blocking, describe

    with run.step(f"accessibility audit ({label}): no serious or critical axe-core finding", fatal=False):
        findings = audit(page, scope, rules)
        run.accessibility[label] = findings
        bad = blocking(findings)
        assert not bad, describe(bad)



def interact_and_recheck(page, run: NotebookRun, notebook: Path, console: ConsoleLog, kernel_idle, *,
                         scope: str = "body", console_noise: tuple[str, ...] = (),
                         error_texts: tuple[str, ...] = (), moves: int | None = None, throttle: float = 1.0,
                         exercises: bool = True) -> tuple[list[ControllerLatency], list[str]]:
    """The reader's part, the same in both modes: no console errors so far; move a slider of every
    controller (``moves`` per slider, none with ``moves=0``; ``throttle``: the page's CPU slowdown); afterwards no
    errors (outputs in ``scope``, ``error_texts`` in the page, console minus ``console_noise`` and
    :data:`RECOVERED_START_MISSES`) and every figure still drawn; answer the Check-yourself panel if there is one
    (and ``exercises``).

    Returns:
        (latency rows, one line per exercise answered).
    """
    console_noise = (*console_noise, *RECOVERED_START_MISSES)
    with run.step("no console errors from the page's widgets", fatal=False):
        errors = console.widget_errors(console_noise)
        assert not errors, "console errors:\n" + explain(errors)
    seen_errors = len(console.errors)

    latencies: list[ControllerLatency] = []
    if moves != 0:  # moves=0: a smoke pass, no slider moved (the latency benchmark moves them: make bench-browser)
        latencies = exercise_all_controllers(page, run, kernel_idle=kernel_idle, moves=moves, throttle=throttle)

    with run.step("after the slider moves: no errors, figures still drawn", fatal=False):
        errs = output_errors(page, scope)
        assert not errs, "after moving sliders: " + format_output_errors(errs)
        text = page.evaluate("() => document.body.innerText")
        found = [t for t in error_texts if t in text]
        assert not found, f"error shown after moving sliders: {found}"
        errors = ConsoleLog(console.errors[seen_errors:]).widget_errors(console_noise)
        assert not errors, "new console errors:\n" + explain(errors)
        check_figures(page)

    answered: list[str] = []
    if exercises and notebook_has_exercise_panel(notebook):
        with run.step("answer the Check-yourself panel through the page", fatal=False):
            answered += answer_exercises(page, run)
    check_sliders_named_from_first_paint(page, run)
    if throttle == 1.0:  # (not in the slow-laptop runs: the audit is the same, only slower)
        audit_step(page, run, "" if scope == "body" else scope)
    return latencies, answered
