"""Benchmarks: SGD's SDE ensemble beside the SGD ensemble, measured in the same run (Notebook 05).

``sde_noise.sde_64x10000_vs_sgd``: 64 runs × 10⁴ Euler–Maruyama steps of SGD's SDE at dt = η/16 (the entry-weight
kernel, no records) against 64 runs × 10⁴ batch-1 SGD steps of the engine (same start, same η, γ, no records).
The ratio is the SGD time over the SDE time (an SDE step costs ``1/ratio`` SGD steps: it touches every observed
entry and draws N normals). Target: ratio ≥ 0.25.

``sde_noise.live_point``: the live figure of Notebook 05 (:class:`~symsgd_core.ui.sde_noise.SdeCompareController`,
which calls :func:`~symsgd_core.sde_noise.compare_point`; at its defaults SDE 12 runs to t = 1500 at dt = η/16,
SGD 16 runs, Langevin 8 runs, records every 15 time units), a Run pressed in the page: the time until it shows an
answer (a first look, then the full Run in the background: ``.full``, see :mod:`.runs`), against its SGD part
alone; and ``sde_noise.live_point@worst`` at the slider end that costs most (η = 0.2 and dt = η/64: t = 1500 takes
the most steps), against its SGD part at that η. Medians of 3 after a warm-up; target ≤ 0.5 s median per Run.
"""

from __future__ import annotations

from .. import rank_jumps
from ..dln import replicate, run_sde
from ..sde_noise.experiments import HOT, simulate
from ..ui.sde_noise import SdeCompareController
from .registry import BenchResult, best_time, register_benchmark
from .runs import answer_rows, median_time, worst_label

RUNS, STEPS, M = 64, 10_000, 16
#: The live figure's costliest slider end (SdeCompareController: η ∈ [0.2, 0.35], m ∈ {4, 16, 64}).
LIVE_WORST = dict(lr=0.2, m=64)


@register_benchmark("sde_noise")
def bench_sde() -> list[BenchResult]:
    lr, weight_decay = HOT
    problem = rank_jumps.epsilon_completion(0.2)
    start = replicate(rank_jumps.start_minimum(weight_decay=weight_decay)[0], RUNS)
    run_sde(start, problem, 100, lr=lr, weight_decay=weight_decay, dt=lr / M,
            record_every=100)  # warm-up: load the kernels
    rank_jumps.run(start, problem, 100, method="sgd", lr=lr, weight_decay=weight_decay, record_every=100)
    sde_t = best_time(lambda: run_sde(start, problem, STEPS, lr=lr, weight_decay=weight_decay, dt=lr / M,
                                      record_every=STEPS, record_layers=False))
    sgd_t = best_time(lambda: rank_jumps.run(start, problem, STEPS, method="sgd", lr=lr, weight_decay=weight_decay,
                                             record_every=STEPS, record_layers=False))
    rows = [BenchResult(f"sde_noise.sde_{RUNS}x{STEPS}_vs_sgd", sde_t, "s", sgd_t, sgd_t / sde_t,
                        "ratio >= 0.25 (an SDE step costs at most 4 SGD steps)", bool(sgd_t / sde_t >= 0.25))]
    base = start.select([0])
    controller = SdeCompareController()
    for suffix, settings in (("", {}), ("@worst", LIVE_WORST)):
        sgd_lr = settings.get("lr", lr)
        sgd_part = median_time(lambda eta=sgd_lr: simulate("sgd", replicate(base, 16), problem, lr=eta,
                                                           weight_decay=weight_decay, t_max=1500.0, rec_dt=15.0,
                                                           seed=0))
        rows += answer_rows("sde_noise.live_point" + suffix, controller, settings, sgd_part,
                            worst_label(settings) if settings else "defaults")
    return rows
