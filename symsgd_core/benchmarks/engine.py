"""Benchmarks: the dynamics engine.

``engine.sgd_scalar_gaussian_1000x20000`` and ``engine.sgd_scalar_dataset_1000x20000``: SGD on the
scalar model ``ℓ = (u w x − y)²``, R = 1000 runs × 2·10⁴ steps, S = 1, observables recorded every
200 steps, through the public :func:`symsgd_core.balance.dynamics.run_sgd` (compiled path). Target: ≤ 1 s and
≥ 100× the run-steps per second of a naive per-run PyTorch autograd loop doing the same update
(the baseline is timed on 2 runs × 300 steps in the same process and scaled to 1000 × 2·10⁴).
``engine.sgd_scalar_numpy_reference`` reports the numpy reference path (timed on 1000 runs × 1000
steps, scaled by steps) against the same baseline, for information.
"""

from __future__ import annotations

import time

import numpy as np

from ..balance.data import GaussianData
from ..balance.dynamics import run_sgd
from ..balance.models import ScalarModel
from .registry import BenchResult, best_time, register_benchmark

RUNS, STEPS, RECORD_EVERY = 1000, 20_000, 200
THETA0 = (1.5, 0.5)
LR = 0.01


def _torch_naive_seconds_per_run_step(runs: int = 2, steps: int = 300, dataset=None) -> float:
    """A naive per-run PyTorch autograd loop doing the same SGD update; seconds per run-step."""
    import torch

    gen = torch.Generator().manual_seed(0)
    if dataset is not None:
        xd = torch.tensor(np.array(dataset.x))
        yd = torch.tensor(np.array(dataset.y))
    t0 = time.perf_counter()
    for _ in range(runs):
        u = torch.tensor(THETA0[0], dtype=torch.float64, requires_grad=True)
        w = torch.tensor(THETA0[1], dtype=torch.float64, requires_grad=True)
        for _ in range(steps):
            if dataset is None:
                x = torch.randn((), generator=gen, dtype=torch.float64)
                y = x + torch.randn((), generator=gen, dtype=torch.float64)
            else:
                i = torch.randint(0, xd.shape[0], (), generator=gen)
                x, y = xd[i], yd[i]
            loss = (u * w * x - y) ** 2
            loss.backward()
            with torch.no_grad():
                u -= LR * u.grad
                w -= LR * w.grad
            u.grad = None
            w.grad = None
    return (time.perf_counter() - t0) / (runs * steps)


@register_benchmark("engine")
def bench_engine() -> list[BenchResult]:
    model = ScalarModel()
    law = GaussianData(k=1.0, sigma=1.0)
    dataset = law.dataset(1000, seed=1)
    work = RUNS * STEPS
    rows = []
    for label, data in (("gaussian", law), ("dataset", dataset)):
        # warm-up: compile/load the numba kernel outside the timing
        run_sgd(model, THETA0, data, lr=LR, steps=10, runs=2, seed=0)
        figure = best_time(lambda data=data: run_sgd(model, THETA0, data, lr=LR, steps=STEPS, runs=RUNS,
                                                     record_every=RECORD_EVERY, seed=0), repeat=3)
        per = _torch_naive_seconds_per_run_step(dataset=None if label == "gaussian" else dataset)
        baseline = per * work
        ratio = baseline / figure
        rows.append(BenchResult(name=f"engine.sgd_scalar_{label}_{RUNS}x{STEPS}", figure=figure, unit="s",
                                baseline=baseline, ratio=ratio, target="<= 1 s and ratio >= 100",
                                met=bool(figure <= 1.0 and ratio >= 100.0)))
    # numpy reference path, for information (scaled from a shorter run)
    r_steps = 1000  # same R, fewer steps: the cost per step is constant, so scale by STEPS / r_steps
    ref = best_time(lambda: run_sgd(model, THETA0, law, lr=LR, steps=r_steps, runs=RUNS,
                                    record_every=RECORD_EVERY, seed=0, engine="reference"), repeat=1)
    ref_scaled = ref * STEPS / r_steps
    per = _torch_naive_seconds_per_run_step()
    rows.append(BenchResult(name="engine.sgd_scalar_numpy_reference (info)", figure=ref_scaled, unit="s",
                            baseline=per * work, ratio=per * work / ref_scaled,
                            target="informational (numpy reference path, scaled estimate)", met=True))
    return rows
