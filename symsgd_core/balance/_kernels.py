"""Compiled (numba) kernels of the law-of-balance engine: minibatch SGD on the scalar model ``ℓ = (uwx − y)²``.

The kernels are serial and deterministic and draw their random numbers from the caller's
``numpy.random.Generator`` *in exactly the order* the numpy reference in
:mod:`symsgd_core.balance.dynamics` does (numba shares the generator's state and reproduces numpy's
``standard_normal`` and ``integers`` streams), so both paths give the same numbers to round-off
(``tests/balance/test_dynamics.py`` checks this). Per step:

* fresh Gaussian data: ``R·S`` values of ``x`` (run-major), then ``R·S`` values of ``ε``,
  ``y = k x + σ ε`` — the order of :meth:`symsgd_core.balance.data.GaussianData.sample`;
* finite dataset: ``R·S`` indices ``rng.integers(0, N)`` (run-major) — the order of
  :meth:`symsgd_core.balance.data.Dataset.minibatch_indices` with replacement; these are pre-drawn by numpy
  in blocks of steps (numpy's vectorised ``integers`` is faster than numba's scalar one, and a block
  draw continues the same stream as per-step draws).

Update (conventions: ``ℓ = (f − y)²``, weight decay ``γ‖θ‖²``): ``c = mean_s 2(v x_s − y_s) x_s``,
``u ← u − η(c w + 2γu)``, ``w ← w − η(c u + 2γw)``. A run whose new state is non-finite or has
``|θ| > limit`` is frozen at its last state, ``alive[r] = False`` and ``diverged[r]`` = the step
number; its random numbers are still drawn so the other runs' streams do not change (the rule of
:data:`symsgd_core.balance.dynamics.DIVERGENCE`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["sgd_scalar_dataset", "sgd_scalar_gaussian"]


@njit(cache=True)
def _update_runs(theta, xs, ys, lr, gamma, limit, alive, diverged, step):
    R, S = xs.shape
    for r in range(R):
        if not alive[r]:
            continue
        u = theta[r, 0]
        w = theta[r, 1]
        v = u * w
        acc = 0.0
        for s in range(S):
            x = xs[r, s]
            acc += 2.0 * (v * x - ys[r, s]) * x
        c = acc / S
        gu = c * w
        gw = c * u
        if gamma != 0.0:
            gu = gu + 2.0 * gamma * u
            gw = gw + 2.0 * gamma * w
        nu = u - lr * gu
        nw = w - lr * gw
        if abs(nu) <= limit and abs(nw) <= limit:
            theta[r, 0] = nu
            theta[r, 1] = nw
        else:
            alive[r] = False
            diverged[r] = step


@njit(cache=True)
def sgd_scalar_gaussian(theta, rng, n_steps, step0, lr, gamma, k, sigma, batch, limit, alive, diverged):
    """Advance ``theta (R, 2)`` in place by ``n_steps`` SGD steps on fresh ``x ~ N(0,1)``, ``y = kx + σε``.

    Steps are numbered ``step0 + 1 … step0 + n_steps`` (for ``diverged``).
    """
    R = theta.shape[0]
    xs = np.empty((R, batch))
    es = np.empty((R, batch))
    ys = np.empty((R, batch))
    for j in range(n_steps):
        for r in range(R):
            for s in range(batch):
                xs[r, s] = rng.standard_normal()
        for r in range(R):
            for s in range(batch):
                es[r, s] = rng.standard_normal()
        for r in range(R):
            for s in range(batch):
                ys[r, s] = k * xs[r, s] + sigma * es[r, s]
        _update_runs(theta, xs, ys, lr, gamma, limit, alive, diverged, step0 + j + 1)


@njit(cache=True)
def sgd_scalar_dataset(theta, idx, step0, lr, gamma, x, y, limit, alive, diverged):
    """Advance ``theta (R, 2)`` in place by ``idx.shape[0]`` SGD steps on the dataset ``x, y (N,)``.

    ``idx (n_steps, R, S)`` are the minibatch indices, pre-drawn by the caller with
    ``rng.integers(0, N, size=(n_steps, R, S))`` (the same stream as one ``(R, S)`` draw per step).
    """
    n_steps, R, S = idx.shape
    xs = np.empty((R, S))
    ys = np.empty((R, S))
    for j in range(n_steps):
        for r in range(R):
            for s in range(S):
                i = idx[j, r, s]
                xs[r, s] = x[i]
                ys[r, s] = y[i]
        _update_runs(theta, xs, ys, lr, gamma, limit, alive, diverged, step0 + j + 1)
