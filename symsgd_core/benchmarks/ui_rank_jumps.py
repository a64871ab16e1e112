"""Benchmarks: callback latency of Notebook 04's controllers (:mod:`symsgd_core.ui.rank_jumps`).

Run rows (see :mod:`.runs`): the median wall time of a Run at the notebook's default settings and at the worst
slider end, after one warm-up Run at the same setting (numba compilation and the memoised phase-0 minimum are not
counted): the whole Run for a figure that re-simulates on a slider release, the answer in the page (a first look
for a long Run) for a figure with a Run button, with its full Run as an information row. Baseline, measured in the
same run: the same controller at the same setting on the numpy reference engine (``engine="reference"``), timed on
a reduced step budget and scaled linearly to the full budget (an estimate: the non-simulation work is scaled too).
Target: ≤ 0.5 s median per Run. For the analytic penalty figure the baseline is rebuilding the whole controller
(widgets + figure) instead of updating it in place; target ≤ 0.1 s per update.
"""

from __future__ import annotations

import time

from ..ui import rank_jumps as rj
from .registry import BenchResult, best_time, register_benchmark
from .runs import answer_rows, median_run, run_row, worst_label

#: (controller class, reduced-budget settings for the baseline at the defaults, scale = run-steps simulated at
#: the defaults / run-steps simulated with the reduced budget, the worst slider end, the reduced budget at the
#: worst end, its scale). The worst end sets every slider that adds work to its costly end.
_HEAVY = [
    # GD + 4 SGD seeds × 60 000 steps  vs  GD + 1 seed × 10 000;  worst: GD + 8 seeds × 100 000 on a 6 × 16 net
    (rj.TrapController, dict(steps=10_000, n_seeds=1), 5 * 60_000 / (2 * 10_000),
     dict(depth=6, width=16, n_seeds=8, steps=100_000), dict(steps=10_000), 10.0),
    # 24 runs × 60 000  vs  4 runs × 10 000;  worst: 64 runs × 120 000
    (rj.EnsembleController, dict(n_runs=4, steps=10_000), 24 * 60_000 / (4 * 10_000),
     dict(n_runs=64, steps=120_000), dict(steps=10_000), 12.0),
    # 3000 forced + (GD + 4 SGD) × 20 000  vs  750 + 2 × 5000;  worst: 6000 forced + (GD + 8 SGD) × 60 000
    (rj.MechanismController, dict(forced_steps=750, after_steps=5000, n_seeds=1), 103_000 / 10_750,
     dict(forced_steps=6000, after_steps=60_000, n_seeds=8), dict(forced_steps=600, after_steps=6000), 10.0),
    # 13 runs × 20 000  vs  13 × 5000;  worst: 13 GD runs (a full gradient per step) × 40 000
    (rj.BasinController, dict(steps=5000), 4.0,
     dict(steps=40_000, method="gd"), dict(steps=5000), 8.0),
    # (GD + 4 SGD) × 70 000 + 5 × 5000 polish  vs  2 × 15 000 + 2 × 5000;
    # worst: (GD + 8 SGD) × 140 000 + 9 × 5000  vs  9 × 15 000 + 9 × 5000
    (rj.AnnealController, dict(hot_steps=10_000, cold_steps=5000, n_seeds=1), 375_000 / 40_000,
     dict(hot_steps=100_000, cold_steps=40_000, n_seeds=8), dict(hot_steps=10_000, cold_steps=5000),
     145_000 / 20_000),
    # (3 SGD + 3 Langevin) × 40 000  vs  (1 + 1) × 10 000;  worst: (8 + 8) × 100 000
    (rj.LangevinController, dict(steps=10_000, n_runs=1), 240_000 / 20_000,
     dict(n_runs=8, steps=100_000), dict(steps=10_000), 10.0),
]


def _reference_time(cls, settings: dict, scale: float) -> float:
    t0 = time.perf_counter()
    cls(engine="reference", **settings)  # constructing a controller runs it once
    return (time.perf_counter() - t0) * scale


@register_benchmark("ui_rank_jumps")
def bench_ui_rank_jumps() -> list[BenchResult]:
    rows = []
    pen = rj.PenaltyController()
    depths = iter([3, 5] * 10)
    fig_time = best_time(lambda: pen.set(depth=next(depths)), repeat=5)
    base = best_time(rj.PenaltyController, repeat=3)
    rows.append(BenchResult("ui_rank_jumps.penalty_update", fig_time, "s", base, base / fig_time,
                            "<= 0.1 s per update", fig_time <= 0.1))
    for cls, reduced, scale, worst, reduced_worst, scale_worst in _HEAVY:
        name = "ui_rank_jumps." + cls.__name__.removesuffix("Controller").lower() + "_run"
        controller = cls()
        base, base_worst = _reference_time(cls, reduced, scale), _reference_time(cls, {**worst, **reduced_worst},
                                                                                  scale_worst)
        if controller.run_button is None:  # re-simulates on a slider release: the row is the whole Run
            rows.append(run_row(name, median_run(controller), base, "defaults"))
            rows.append(run_row(name + "@worst", median_run(controller, worst), base_worst, worst_label(worst)))
        else:  # a Run button: the answer in the page (a first look for a long Run) and the full Run
            rows += answer_rows(name, controller, None, base, "defaults")
            rows += answer_rows(name + "@worst", controller, worst, base_worst, worst_label(worst))
    return rows
