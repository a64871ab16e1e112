"""Benchmarks: slider-response latency of every Notebook 01 controller (:mod:`symsgd_core.ui.balance`).

Measured by :func:`.latency.controller_latency`: one slider move (which recomputes and redraws),
best of 3 alternating moves, against rebuilding the controller from scratch in the same run.
Targets (issue 5): analytic figures ≤ 100 ms, re-simulating figures ≤ 1 s.
"""

from __future__ import annotations

from .latency import controller_latency
from .registry import BenchResult, register_benchmark

ANALYTIC_TARGET = 0.1
SIMULATING_TARGET = 1.0

#: controller class name → (slider to move, two values to alternate between, analytic?)
MOVES = {
    "SymmetryExplorer": ("lam", (0.7, 1.4), True),
    "ItoTermsExplorer": ("u", (1.2, 1.6), True),
    "ThreeDynamics": ("seed", (1, 2), False),
    "BalanceEnsemble": ("temperature", (0.02, 0.025), False),
    "Rank1Balance": ("seed", (1, 2), False),
    "ReLUBalance": ("seed", (1, 2), False),
    "DiscreteBreakdown": ("seed", (1, 2), False),
}


@register_benchmark("ui_balance")
def bench_ui_balance() -> list[BenchResult]:
    from ..ui import balance as ui

    rows = []
    for cls_name, (slider, values, analytic) in MOVES.items():
        target = ANALYTIC_TARGET if analytic else SIMULATING_TARGET
        rows.append(controller_latency(f"ui_balance.{cls_name}.{slider}", getattr(ui, cls_name), target,
                                       repeat=3, slider=slider, values=values))
    return rows
