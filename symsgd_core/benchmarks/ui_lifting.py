"""Benchmarks: callback latency of every Notebook 02 controller (target ≤ 100 ms, analytic figures).

Measured by :func:`.latency.controller_latency`: slider move + update, against rebuilding the
controller from scratch in the same run.
"""

from __future__ import annotations

from .latency import controller_latency
from .registry import BenchResult, register_benchmark

TARGET_SECONDS = 0.100


@register_benchmark("ui_lifting")
def bench_ui_lifting() -> list[BenchResult]:
    from ..ui import lifting as ul

    rows = []
    for cls, kwargs in ((ul.OrbitController, {}), (ul.RankOneSetController, {}), (ul.ChainRuleController, {}),
                        (ul.EulerController, {}), (ul.EulerController, {"model": "relu"}),
                        (ul.SignCaveatController, {}), (ul.TracesController, {})):
        label = cls.__name__ + ("[" + ",".join(f"{k}={v}" for k, v in kwargs.items()) + "]" if kwargs else "")
        rows.append(controller_latency(f"ui_lifting.{label}.update", lambda c=cls, k=kwargs: c(**k), TARGET_SECONDS))
    return rows
