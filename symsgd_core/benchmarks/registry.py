"""Benchmark harness: each benchmark measures a figure and a baseline *in the same run*.

Benchmarks are not tests: they print ratios and whether targets are met, and
never assert on timings inside the test suite (machines are noisy).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class BenchResult:
    """One benchmark row.

    Attributes:
        name: identifier, e.g. ``"engine.sgd_scalar_1000x20000"``.
        figure: the measured quantity (seconds unless ``unit`` says otherwise).
        unit: unit of ``figure`` and ``baseline``.
        baseline: the same quantity for the baseline implementation, measured in
            the same run (scaled to the same work if it was timed on less).
        ratio: ``baseline / figure`` (a speed-up: larger is better).
        target: the target in words, e.g. ``"<= 1 s and ratio >= 100"``.
        met: whether the target was met in this run.
    """

    name: str
    figure: float
    unit: str
    baseline: float
    ratio: float
    target: str
    met: bool

    def as_dict(self) -> dict:
        return asdict(self)


def best_time(func: Callable[[], object], repeat: int = 3) -> float:
    """Best wall-clock time of ``repeat`` calls to ``func`` (seconds)."""
    best = float("inf")
    for _ in range(max(int(repeat), 1)):
        t0 = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t0)
    return best


@dataclass(frozen=True)
class Paired:
    """Two functions timed in turn (:func:`paired_times`): medians (seconds) and the per-pair ratios
    ``baseline / figure`` (median, smallest, largest)."""

    figure: float
    baseline: float
    ratio: float
    ratio_min: float
    ratio_max: float
    pairs: int

    def spread(self) -> str:
        """The ratio's spread as a table prints it: ``"median of 7 pairs; 0.81–0.93"``."""
        return f"median of {self.pairs} pairs; {self.ratio_min:.2f}–{self.ratio_max:.2f}"


def paired_times(func: Callable[[], object], baseline: Callable[[], object], repeat: int = 7) -> Paired:
    """``func`` and ``baseline`` called in turn ``repeat`` times each (alternating which goes first, after one
    untimed call of each): on a shared machine a drift in speed hits both alike, so the median of the per-pair
    ratios is the figure to quote."""
    func()
    baseline()
    a, b = [], []
    for k in range(max(int(repeat), 1)):
        for f, out in ((func, a), (baseline, b)) if k % 2 == 0 else ((baseline, b), (func, a)):
            t0 = time.perf_counter()
            f()
            out.append(time.perf_counter() - t0)
    ratios = sorted(y / x for x, y in zip(a, b))
    return Paired(statistics.median(a), statistics.median(b), statistics.median(ratios), ratios[0], ratios[-1],
                  len(ratios))


_BENCHMARKS: dict[str, Callable[[], list[BenchResult]]] = {}


def register_benchmark(name: str):
    """Decorator: register a zero-argument function returning a list of :class:`BenchResult`."""

    def deco(func):
        if name in _BENCHMARKS:
            raise ValueError(f"benchmark {name!r} is registered twice")
        _BENCHMARKS[name] = func
        return func

    return deco


def registered_benchmarks() -> dict[str, Callable[[], list[BenchResult]]]:
    return dict(_BENCHMARKS)


def run_benchmarks(names: list[str] | None = None) -> list[BenchResult]:
    """Run the registered benchmarks (all, or those whose name starts with one of ``names``)."""
    rows: list[BenchResult] = []
    for name, func in _BENCHMARKS.items():
        if names and not any(name.startswith(n) for n in names):
            continue
        rows.extend(func())
    return rows
