"""Benchmarks: the v-SDE ensemble (issue 3) and the Notebook 03 callbacks (issue 9).

``stationary.sde_ensemble_d1_2000x150000``: the depth-1 v-SDE in ``s = log v``
(``ds = −4[β₁v − β₂' + T g(v)] dt + 4 sqrt(T g(v)) dW``), 2000 chains × 1.5·10⁵ Euler–Maruyama
steps (dt = 1e-3, T = 0.15, k = σ = 1) through :func:`symsgd_core.stationary.simulate_v`
(numba, 2 threads over fixed blocks with their own generators). Target ≤ 10 s. Baseline: a plain
numpy Euler–Maruyama loop vectorised over the 2000 chains (:func:`numpy_euler_s`), timed on
1500 steps in the same run and scaled by 100.

``stationary.<Controller>.update``: the slowest analytic slider callback while every slider visits
both ends (target ≤ 100 ms); ``stationary.<Controller>.run``: the slowest Run-button re-simulation
over the same settings (target ≤ 1 s). Their baseline is building the controller from scratch in
the same run (widgets, figures, first draw), as in :mod:`.latency`.
"""

from __future__ import annotations

import time

from .registry import BenchResult, best_time, register_benchmark

CHAINS, STEPS, DT, TEMPERATURE = 2000, 150_000, 1e-3, 0.15
BASELINE_STEPS = 1500
ANALYTIC_TARGET, RUN_TARGET, SDE_TARGET = 0.100, 1.0, 10.0


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
    from ..ui.base import sweep_sliders

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
        controller.run()  # warm-up
        figure = _worst_over_sweep(controller, "last_run_seconds", run=controller.run)
        baseline = best_time(cls, repeat=2)  # rebuilding the controller from scratch
        rows.append(BenchResult(f"stationary.{cls.__name__}.run", figure, "s", baseline, baseline / figure,
                                f"<= {RUN_TARGET:g} s per Run (worst slider end)", figure <= RUN_TARGET))
    return rows
