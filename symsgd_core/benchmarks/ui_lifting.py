"""Benchmarks: callback latency of every Notebook 02 controller (target ≤ 100 ms, analytic figures).

For each controller: ``figure`` = best time of ``update()`` after a slider move (what a reader waits
for), ``baseline`` = best time of an empty ``batch_update()`` on the same figures in the same run
(the fixed cost of touching the widgets), ``ratio = baseline / figure``.
"""

from __future__ import annotations

from .registry import BenchResult, best_time, register_benchmark

TARGET_SECONDS = 0.100


def _empty_batch_update(controller) -> None:
    for fig in controller.figures:
        with fig.batch_update():
            pass


def _slider_moves(controller):
    """A callable that moves the first slider between two values and updates (alternating)."""
    from ..ui.base import slider_extremes, slider_names

    name = slider_names(controller)[0]
    widget = controller.controls[name]
    values = [widget.value, slider_extremes(widget)[1]]
    state = {"i": 0}

    def move():
        state["i"] ^= 1
        controller.set(**{name: values[state["i"]]})

    return move


@register_benchmark("ui_lifting")
def bench_ui_lifting() -> list[BenchResult]:
    from ..ui import lifting as ul

    rows = []
    for cls, kwargs in ((ul.OrbitController, {}), (ul.RankOneSetController, {}), (ul.ChainRuleController, {}),
                        (ul.EulerController, {}), (ul.EulerController, {"model": "relu"}),
                        (ul.SignCaveatController, {}), (ul.TracesController, {})):
        controller = cls(**kwargs)
        move = _slider_moves(controller)
        move()  # warm-up (first torch calls)
        figure = best_time(move, repeat=5)
        baseline = best_time(lambda c=controller: _empty_batch_update(c), repeat=5)
        label = cls.__name__ + ("[" + ",".join(f"{k}={v}" for k, v in kwargs.items()) + "]" if kwargs else "")
        rows.append(BenchResult(f"ui_lifting.{label}.update", figure, "s", baseline, baseline / figure,
                                f"<= {TARGET_SECONDS * 1000:.0f} ms per update", figure <= TARGET_SECONDS))
    return rows
