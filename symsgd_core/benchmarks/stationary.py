"""Benchmarks: the v-SDE ensemble and the Notebook 03 callbacks.

``stationary.sde_ensemble_d1_2000x150000``: the depth-1 v-SDE in ``s = log v``
(``ds = −4[β₁v − β₂' + T g(v)] dt + 4 sqrt(T g(v)) dW``), 2000 chains × 1.5·10⁵ Euler–Maruyama
steps (dt = 1e-3, T = 0.15, k = σ = 1) through :func:`symsgd_core.stationary.simulate_v`
(numba, 2 threads over fixed blocks with their own generators). Target ≤ 10 s. Baseline: a plain
numpy Euler–Maruyama loop vectorised over the 2000 chains (:func:`numpy_euler_s`), timed on
1500 steps in the same run and scaled by 100.

``stationary.<Controller>.update``: the slowest analytic slider callback while every slider visits
both ends (target ≤ 100 ms). ``stationary.<Controller>.run`` and ``.run@worst`` (see :mod:`.runs`): the median
Run at the defaults and at the slider end that costs most (found by one Run at each end of every slider), target
≤ 0.5 s median. Their baseline is building the controller from scratch in the same run (widgets,
figures, first draw), as in :mod:`.latency`.
"""

from __future__ import annotations

import time

from .registry import BenchResult, best_time, register_benchmark
from .runs import median_run, run_row, worst_label

CHAINS, STEPS, DT, TEMPERATURE = 2000, 150_000, 1e-3, 0.15
BASELINE_STEPS = 1500
ANALYTIC_TARGET, SDE_TARGET = 0.100, 10.0


def bench_sde_ensemble() -> BenchResult:
    from ..stationary import DiagonalNetProblem, numpy_euler_s, simulate_v

    prob = DiagonalNetProblem.gaussian(1.0, 1.0)
    simulate_v(prob, TEMPERATURE, 1, n_chains=10, t_end=10 * DT, dt=DT, scheme="euler")  # compile / load cache
    t0 = time.perf_counter()
    run = simulate_v(prob, TEMPERATURE, 1, n_chains=CHAINS, t_end=STEPS * DT, dt=DT, scheme="euler", seed=0,
                     threads=2)
    figure = time.perf_counter() - t0
    t0 = time.perf_counter()
    numpy_euler_s(prob, TEMPERATURE, n_chains=CHAINS, n_steps=BASELINE_STEPS, dt=DT, seed=0)
    baseline = (time.perf_counter() - t0) * STEPS / BASELINE_STEPS
    if run.non_finite:
        figure = float("inf")
    return BenchResult(f"stationary.sde_ensemble_d1_{CHAINS}x{STEPS}", figure, "s", baseline, baseline / figure,
                       f"<= {SDE_TARGET:g} s (numba, 2 threads; numpy baseline scaled from {BASELINE_STEPS} steps)",
                       figure <= SDE_TARGET)




def _worst_over_sweep(controller, attr: str, run=None) -> float:
    """Largest ``controller.<attr>`` seen while every slider visits both ends (and the default)."""
    from symsgd_jupyter.figure_checks import sweep_sliders

    worst = [getattr(controller, attr)]

    def record():
        if run is not None:
            run()
        worst.append(getattr(controller, attr))

    record()
    original_update = controller.update

    def update():
        original_update()
        if run is None:
            worst.append(controller.last_update_seconds)

    controller.update = update
    try:
        sweep_sliders(controller, run=record if run is not None else None)
    finally:
        controller.update = original_update
    return max(w for w in worst if w == w)


@register_benchmark("stationary")
def bench_stationary() -> list[BenchResult]:
    from ..ui import stationary as us

    rows = [bench_sde_ensemble()]
    for cls in (us.DepthComparison, us.PhaseTransition, us.FluctuationInversion, us.Tails):
        controller = cls()
        controller.update()  # warm-up
        figure = _worst_over_sweep(controller, "last_update_seconds")
        baseline = best_time(cls, repeat=2)  # rebuilding the controller from scratch
        rows.append(BenchResult(f"stationary.{cls.__name__}.update", figure, "s", baseline, baseline / figure,
                                f"<= {ANALYTIC_TARGET * 1000:.0f} ms per update (worst slider end)",
                                figure <= ANALYTIC_TARGET))
    for cls in (us.DepthComparison, us.FluctuationInversion, us.WrongSign, us.Tails, us.DiscreteSGD):
        controller = cls()
        baseline = best_time(cls, repeat=2)  # rebuilding the controller from scratch
        name = f"stationary.{cls.__name__}.run"
        rows.append(run_row(name, median_run(controller), baseline, "defaults"))
        worst = _costliest_slider_end(controller)
        rows.append(run_row(name + "@worst", median_run(controller, worst), baseline, worst_label(worst)))
    return rows


def _costliest_slider_end(controller) -> dict:
    """The one-slider setting (each slider at each end, the others at the defaults) whose Run took longest."""
    from symsgd_jupyter.figure_checks import slider_extremes, slider_names

    worst, worst_time = {}, -1.0
    for name in slider_names(controller):
        original = controller.controls[name].value
        for value in slider_extremes(controller.controls[name]):
            controller.set(**{name: value})
            controller.run()
            if controller.last_run_seconds > worst_time:
                worst, worst_time = {name: value}, controller.last_run_seconds
        controller.set(**{name: original})
    return worst
