"""Callback latency of interactive controllers: the shared measurement for every notebook's figures.

For a controller, ``figure`` = best time of one slider move plus ``update()`` (what a reader waits
for); ``baseline`` = best time of an empty ``batch_update()`` on the same figures in the same run
(the fixed cost of touching the widgets); ``ratio = baseline / figure``.
"""

from __future__ import annotations

from .registry import BenchResult, best_time


def empty_figure_update(controller) -> None:
    """Touch every figure of ``controller`` with an empty ``batch_update`` (the baseline)."""
    for fig in controller.figures:
        with fig.batch_update():
            pass


def slider_toggle(controller, name: str | None = None):
    """A callable that moves slider ``name`` (default: the first) between its value and its upper end."""
    from ..ui.base import slider_extremes, slider_names

    name = name or slider_names(controller)[0]
    widget = controller.controls[name]
    values = [widget.value, slider_extremes(widget)[1]]
    state = {"i": 0}

    def move():
        state["i"] ^= 1
        controller.set(**{name: values[state["i"]]})
        run = getattr(controller, "run", None)
        if not controller.live and callable(run):
            run()

    return move


def controller_latency(name: str, controller, target_seconds: float, repeat: int = 5,
                       slider: str | None = None) -> BenchResult:
    """One benchmark row: slider → figure latency of ``controller`` against the empty-update baseline."""
    move = slider_toggle(controller, slider)
    figure = best_time(move, repeat=repeat)
    baseline = best_time(lambda: empty_figure_update(controller), repeat=repeat)
    return BenchResult(name, figure, "s", baseline, baseline / figure if figure > 0 else float("inf"),
                       f"<= {target_seconds * 1000:g} ms per slider move", figure <= target_seconds)
