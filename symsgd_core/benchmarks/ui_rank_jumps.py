"""Benchmarks: callback latency of Notebook 04's controllers (:mod:`symsgd_core.ui.rank_jumps`).

Figure: the median wall time of a Run (``controller.run()``) at the notebook's default settings,
after one warm-up Run (numba compilation and the memoised phase-0 minimum are not counted).
Baseline, measured in the same run: the same controller on the numpy reference engine
(``engine="reference"``), timed on a reduced step budget and scaled linearly to the default
budget (an estimate: the non-simulation work is scaled too). For the analytic penalty figure the
baseline is rebuilding the whole controller (widgets + figure) instead of updating it in place.
Targets: ≤ 1 s per Run for re-simulating controllers (≤ 1.5 s median is the browser target),
≤ 0.1 s per update for the analytic one.
"""

from __future__ import annotations

import statistics
import time

from ..ui import rank_jumps as rj
from .registry import BenchResult, best_time, register_benchmark

#: (controller class, reduced-budget keyword arguments for the baseline, scale = run-steps simulated at
#: the defaults / run-steps simulated with the reduced budget).
_HEAVY = [
    # GD + 4 SGD seeds × 60 000 steps  vs  GD + 1 seed × 10 000
    (rj.TrapController, dict(steps=10_000, n_seeds=1), 5 * 60_000 / (2 * 10_000)),
    # 24 runs × 60 000  vs  4 runs × 10 000
    (rj.EnsembleController, dict(n_runs=4, steps=10_000), 24 * 60_000 / (4 * 10_000)),
    # 3000 forced + (GD + 4 SGD) × 20 000  vs  750 + 2 × 5000
    (rj.MechanismController, dict(forced_steps=750, after_steps=5000, n_seeds=1), 103_000 / 10_750),
    # 13 runs × 20 000  vs  13 × 5000
    (rj.BasinController, dict(steps=5000), 4.0),
    # (GD + 4 SGD) × 70 000 + 5 × 5000 polish  vs  2 × 15 000 + 2 × 5000
    (rj.AnnealController, dict(hot_steps=10_000, cold_steps=5000, n_seeds=1), 375_000 / 40_000),
    # (3 SGD + 3 Langevin) × 40 000  vs  (1 + 1) × 10 000
    (rj.LangevinController, dict(steps=10_000, n_runs=1), 240_000 / 20_000),
]


def _median_run(controller, repeat: int = 3) -> float:
    controller.run()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        controller.run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


@register_benchmark("ui_rank_jumps")
def bench_ui_rank_jumps() -> list[BenchResult]:
    rows = []
    pen = rj.PenaltyController()
    depths = iter([3, 5] * 10)
    fig_time = best_time(lambda: pen.set(depth=next(depths)), repeat=5)
    base = best_time(rj.PenaltyController, repeat=3)
    rows.append(BenchResult("ui_rank_jumps.penalty_update", fig_time, "s", base, base / fig_time,
                            "<= 0.1 s per update", fig_time <= 0.1))
    for cls, reduced, scale in _HEAVY:
        fig_time = _median_run(cls())
        t0 = time.perf_counter()
        cls(engine="reference", **reduced)  # constructing a controller runs it once
        base = (time.perf_counter() - t0) * scale
        name = "ui_rank_jumps." + cls.__name__.removesuffix("Controller").lower() + "_run"
        rows.append(BenchResult(name, fig_time, "s", base, base / fig_time,
                                "<= 1 s per Run at defaults (browser: <= 1.5 s median)", fig_time <= 1.0))
    return rows
