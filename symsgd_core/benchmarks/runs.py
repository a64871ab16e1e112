"""The shared measurement of a live figure's Run: at the defaults and at the worst slider end.

A Run is what the Run button does (``controller.run()``; for a figure without a Run button a slider move does
the same). A figure with a Run button answers a Run pressed in the page with a first look when the Run is long
(``RunController.start_run``): for it the row is the time until the page shows an answer (:func:`median_answer`),
and a second row, ``<name>.full`` (information), the time until the full Run, computed in the background, is
drawn. A figure with a Run button and no first look (its full Run takes at most
:data:`~symsgd_core.ui.base.FIRST_LOOK_ABOVE_SECONDS`: the first-look rule) is drawn in one go: its row's target is
that bound.

For each figure the bench reports two rows: ``<name>`` at the notebook's default settings and ``<name>@worst`` at
the slider setting that costs most (every slider that sets the amount of work at its costly end at once: the most
steps, runs and seeds, the widest network, the smallest time step). Each figure is the median of :data:`REPEAT`
Runs after one warm-up Run at the same setting (numba compilation, memoised starting minima and first calls of
torch are not counted). Target: :data:`RUN_TARGET` median.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable

from .registry import BenchResult

#: Every Run of a live figure answers in at most this (seconds, median).
RUN_TARGET = 0.5
#: Runs timed per row (after one warm-up).
REPEAT = 3
#: The target as the table prints it.
RUN_TARGET_TEXT = f"<= {RUN_TARGET:g} s median per Run"


def median_time(func: Callable[[], object], repeat: int = REPEAT, before_each: Callable[[], object] | None = None
                ) -> float:
    """Median wall-clock time of ``repeat`` calls to ``func`` (seconds); ``before_each()`` (untimed) first."""
    times = []
    for _ in range(max(int(repeat), 1)):
        if before_each is not None:
            before_each()
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def median_run(controller, settings: dict | None = None, repeat: int = REPEAT) -> float:
    """Median time of ``controller.run()`` at ``settings`` (set first, as a reader would) after one warm-up Run.

    A controller that keeps its last result by its settings (a ``_cache`` dict, e.g. ReLUBalance) has it emptied
    before each timed Run: the row measures a Run that computes, not a cache hit.
    """
    if settings:
        controller.set(**settings)
    controller.run()  # warm-up at this setting

    def empty_cache():  # looked up each time: a controller may replace its cache dict on every Run
        cache = getattr(controller, "_cache", None)
        if isinstance(cache, dict):
            cache.clear()

    return median_time(controller.run, repeat, before_each=empty_cache)


def run_row(name: str, figure: float, baseline: float, where: str, target: float = RUN_TARGET) -> BenchResult:
    """One Run row (``where``: "defaults" or "worst end: …"; ``target``: seconds, the median it must not exceed)."""
    text = RUN_TARGET_TEXT if target == RUN_TARGET else f"<= {target:g} s median per Run, drawn in one go"
    return BenchResult(name, figure, "s", baseline, baseline / figure if figure > 0 else float("inf"),
                       f"{text} ({where})", bool(figure <= target))


def worst_label(settings: dict) -> str:
    """The worst-end setting as the table prints it."""
    return "worst end: " + ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                     for k, v in settings.items())


def median_answer(controller, settings: dict | None = None, repeat: int = REPEAT) -> tuple[float, float, bool]:
    """Medians of a Run pressed in the page (``controller.start_run()`` in a running event loop, as the kernel
    handles the page's click) at ``settings``, after one warm-up Run there: (seconds until the page shows an answer,
    the first look or the whole Run; seconds until the full Run is drawn; whether a first look was drawn)."""
    if settings:
        controller.set(**settings)  # (a warm-up Run at this setting)
    controller.run()
    looked = []

    async def once() -> tuple[float, float]:
        t0 = time.perf_counter()
        pending = controller.start_run()
        first = time.perf_counter() - t0
        looked.append(pending is not None)
        if pending is not None:
            await asyncio.wrap_future(pending)
        return first, time.perf_counter() - t0

    times = [asyncio.run(once()) for _ in range(max(int(repeat), 1))]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times), all(looked)


def answer_rows(name: str, controller, settings: dict | None, baseline: float, where: str) -> list[BenchResult]:
    """The Run row of a figure with a Run button (its answer in the page, :func:`median_answer`) and, when the
    answer was a first look, the information row ``<name>.full`` (the full Run, drawn after it)."""
    from ..ui.base import FIRST_LOOK_ABOVE_SECONDS

    first, full, looked = median_answer(controller, settings)
    one_go = not type(controller).declares_first_look()  # drawn in one go by the first-look rule
    rows = [run_row(name, first, baseline, where, FIRST_LOOK_ABOVE_SECONDS if one_go else RUN_TARGET)]
    if looked:
        rows.append(BenchResult(name + ".full", full, "s", baseline, baseline / full if full > 0 else float("inf"),
                                f"information: the full Run, drawn after the first look ({where})", True))
    return rows
