"""Callback latency of interactive controllers: the shared measurement for every notebook's figures.

For a controller, ``figure`` = best time of one slider move plus ``update()`` (what a reader waits
for, in kernel time). ``baseline`` = best time of building the same controller from scratch
(widgets, figures and the first draw) in the same run: what a naive notebook that re-creates its
figure on every slider move would cost. ``ratio = baseline / figure``: how much the in-place
update saves. The target is on ``figure`` alone.
"""

from __future__ import annotations

from collections.abc import Callable

from .registry import BenchResult, best_time


def slider_toggle(controller, name: str | None = None, values: tuple | None = None):
    """A callable that moves slider ``name`` (default: the first) between two ``values``
    (default: its current value and its upper end).

    A :class:`~symsgd_core.ui.base.RunController` with ``live = False`` or ``auto_run = True`` re-simulates on
    every ``set()``; one with ``live = True`` and a Run button only redraws its analytic part, so for it the move
    also presses Run (``controller.run()``): either way one move costs one simulation.
    """
    from symsgd_jupyter.figure_checks import slider_extremes, slider_names

    name = name or slider_names(controller)[0]
    widget = controller.controls[name]
    values = list(values) if values is not None else [widget.value, slider_extremes(widget)[1]]
    state = {"i": 0}

    def move():
        state["i"] ^= 1
        controller.set(**{name: values[state["i"]]})
        if controller.live and getattr(controller, "run_button", None) is not None:
            controller.run()

    return move


def controller_latency(name: str, factory: Callable[[], object], target_seconds: float, repeat: int = 5,
                       slider: str | None = None, values: tuple | None = None) -> BenchResult:
    """One benchmark row: slider → figure latency of ``factory()``'s controller vs rebuilding it."""
    controller = factory()
    move = slider_toggle(controller, slider, values)
    move()  # warm-up (first torch / numba calls)
    figure = best_time(move, repeat=repeat)
    baseline = best_time(factory, repeat=max(repeat // 2, 1))
    return BenchResult(name, figure, "s", baseline, baseline / figure if figure > 0 else float("inf"),
                       f"<= {target_seconds * 1000:g} ms per slider move", figure <= target_seconds)
