"""Benchmarks: slider-response latency of every Notebook 01 controller (:mod:`symsgd_core.ui.balance`).

Analytic figures: :func:`.latency.controller_latency`, one slider move (which recomputes and redraws), best of 3
alternating moves, against rebuilding the controller from scratch in the same run; target ≤ 100 ms.
Re-simulating figures (see :mod:`.runs`): the median Run at the defaults and at the worst slider end (the
setting that costs most); baseline, in the same run: building the controller from scratch (widgets, figures and a
first Run at the defaults) and, for the worst end, then moving its sliders there, as a notebook that re-creates
its figure would; target ≤ 0.5 s median per Run.
"""

from __future__ import annotations

import time

from .latency import controller_latency
from .registry import BenchResult, best_time, register_benchmark
from .runs import median_run, run_row, worst_label

ANALYTIC_TARGET = 0.1

#: analytic controller class name → (slider to move, two values to alternate between)
MOVES = {
    "SymmetryExplorer": ("lam", (0.7, 1.4)),
    "ItoTermsExplorer": ("u", (1.2, 1.6)),
}

#: re-simulating controller class name → its worst slider end (every slider that adds work at its costly end:
#: the most steps, the largest batch, the most runs, the widest network, the smallest temperature T = η, whose
#: runs of duration t = 40 take 40/T steps).
WORST = {
    "ThreeDynamics": dict(steps=5000, batch_size=32),
    "BalanceEnsemble": dict(temperature=0.005, runs=1000),
    "Rank1Balance": dict(d_in=8, d_out=4, steps=6000),
    "ReLUBalance": dict(hidden=80, steps=4000),
    "DiscreteBreakdown": dict(steps=400, batch_size=16),
}


def _rebuild_at(factory, settings: dict) -> float:
    t0 = time.perf_counter()
    factory().set(**settings)
    return time.perf_counter() - t0


@register_benchmark("ui_balance")
def bench_ui_balance() -> list[BenchResult]:
    from ..ui import balance as ui

    rows = []
    for cls_name, (slider, values) in MOVES.items():
        rows.append(controller_latency(f"ui_balance.{cls_name}.{slider}", getattr(ui, cls_name), ANALYTIC_TARGET,
                                       repeat=3, slider=slider, values=values))
    for cls_name, worst in WORST.items():
        cls = getattr(ui, cls_name)
        controller = cls()
        name = f"ui_balance.{cls_name}.run"
        rows.append(run_row(name, median_run(controller), best_time(cls, repeat=2), "defaults"))
        rows.append(run_row(name + "@worst", median_run(controller, worst), _rebuild_at(cls, worst),
                            worst_label(worst)))
    return rows
