"""SGD on the actual parameters of a diagonal network, for comparison with the v-SDE and its stationary law.

The runs use the law-of-balance engine (:mod:`symsgd_core.balance.dynamics`) on
:class:`~symsgd_core.balance.models.DiagonalNet` with fresh Gaussian data every step; :func:`sgd_v_samples`
returns the network slope ``v`` of every run (:class:`SGDSamples`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..balance.data import GaussianData
from ..balance.dynamics import run_noise_amplified_sgd, run_sgd
from ..balance.models import DiagonalNet
from ..core.conventions import lr_for_temperature, steps_for_time
from ..core.validation import check_choice, check_int, check_positive, check_positive_int

__all__ = ["AMPLIFIED_LR", "SGDSamples", "sgd_v_samples"]

#: Step size of noise-amplified SGD (small, so that the single-sample noise can be scaled to temperature T).
AMPLIFIED_LR = 2e-3


@dataclass(frozen=True, eq=False)
class SGDSamples:
    """The slope ``v`` of SGD runs on a diagonal network.

    Attributes:
        v: ``(R_ok,)`` the final ``v`` of the runs that did not diverge.
        diverged: number of runs that diverged (the engine's rule, :data:`symsgd_core.balance.dynamics.DIVERGENCE`).
        n_runs: runs started.
        lr, steps, method: the step size, the number of steps and ``"sgd"`` or ``"amplified"``.
        times: ``(K+1,)`` the recording times (``t = η·steps``), the start first.
        v_path: ``(K+1, R_ok)`` ``v`` of the surviving runs at those times.
        summary: the engine's one-line summary.
    """

    v: np.ndarray
    diverged: int
    n_runs: int
    lr: float
    steps: int
    method: str
    times: np.ndarray
    v_path: np.ndarray
    summary: str


def sgd_v_samples(problem_k: float, sigma: float, temperature: float, *, depth: int = 1, weight_decay: float = 0.0,
                  method: str = "amplified", lr: float | None = None, n_runs: int = 500, t_end: float = 10.0,
                  v0: float = 1.0, width: int = 1, n_records: int = 1, seed: int = 0) -> SGDSamples:
    """SGD on the actual parameters of the diagonal net, for comparison with the v-SDE.

    ``method="sgd"``: plain SGD with batch size 1 and ``η = T`` (conventions: T = η/S).
    ``method="amplified"``: noise-amplified SGD, small ``η`` (default :data:`AMPLIFIED_LR`) with the
    single-sample noise scaled to temperature T. Data: ``x ~ N(0,1)``, ``y = kx + ε`` fresh every step.
    Start: every path balanced, ``u^(k)_i = sign · |v0/width|^{1/(D+1)}`` with the sign of ``v0``
    on layer 0 (``v0 < 0`` is the wrong-sign start ``u = −w``). Seeds: the engine's rule with ``seed``.

    Returns:
        :class:`SGDSamples`.
    """
    T = check_positive("temperature", temperature)
    check_choice("method", method, {"sgd", "amplified"})
    D = check_int("depth", depth, minimum=1)
    W = check_positive_int("width", width)
    t_end = check_positive("t_end", t_end)
    lr = (lr_for_temperature(T, 1) if method == "sgd" else AMPLIFIED_LR) if lr is None else check_positive("lr", lr)
    K = check_positive_int("n_records", n_records)
    steps = max(steps_for_time(lr, t_end), 1)
    steps += (-steps) % K
    model = DiagonalNet(width=W, depth=D, weight_decay=float(weight_decay))
    mag = (abs(float(v0)) / W) ** (1.0 / (D + 1))
    theta0 = np.full((D + 1) * W, mag)
    if v0 < 0:
        theta0[:W] *= -1.0
    data = GaussianData(k=float(problem_k), sigma=float(sigma))
    if method == "sgd":
        tr = run_sgd(model, theta0, data, lr=lr, steps=steps, batch_size=1, record_every=steps // K, runs=n_runs,
                     seed=seed)
    else:
        tr = run_noise_amplified_sgd(model, theta0, data, lr=lr, target_temperature=T, steps=steps,
                                     record_every=steps // K, runs=n_runs, seed=seed)
    path = tr.observables["v"][:, tr.ok_runs]
    return SGDSamples(v=path[-1], diverged=int(tr.n_diverged), n_runs=int(n_runs), lr=float(lr), steps=int(steps),
                      method=method, times=np.asarray(tr.times, dtype=float), v_path=path, summary=tr.summary())
