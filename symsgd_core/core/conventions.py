"""The project's numerical conventions, defined once and used everywhere.

Every constant in the package is derived from the four conventions below; do not
restate them elsewhere, import them.

* **Loss scale.** The per-sample loss is the squared error *without* a factor ½,
  ``ℓ(θ, x) = (f_θ(x) − y)²``, and weight decay is ``γ‖θ‖²`` (no ½), as in the
  law-of-balance paper's worked examples (``LOSS_HALF_FACTOR = False``).
* **SGD.** ``θ ← θ − (η/S) Σ_{x∈B} ∇ℓ(θ, x)`` for a minibatch ``B`` of ``S`` points.
* **Temperature.** ``T = η / S`` (no factor 2), the scale of the SDE model
  ``dθ = −∇L dt + sqrt(T C(θ)) dW``.
* **Time.** One SGD step lasts ``dt = η``, so ``t = η · steps``.
* **Noise covariance.** ``C(θ) = E[∇ℓ ∇ℓᵀ] − E[∇ℓ] E[∇ℓ]ᵀ``: the per-sample,
  mean-subtracted gradient covariance, a population average (divide by N).
* **Confidence.** Monte-Carlo tolerances are :data:`Z_MC` standard errors; simulated laws are
  KS-tested against closed forms at level :data:`KS_ALPHA` (:func:`~.stats.ks_threshold`).
"""

from __future__ import annotations

import math

import numpy as np

from .validation import check_positive, check_positive_int

#: The loss is ``(f − y)²``; with ½-MSE every T in the formulas would become T/2.
LOSS_HALF_FACTOR = False

#: Monte-Carlo tolerances are ``Z_MC`` standard errors (two-sided p ≈ 6e-5 per comparison).
Z_MC = 4.0

#: Level of the one-sample Kolmogorov–Smirnov tests of simulated laws against closed forms (two-sided).
KS_ALPHA = 1e-4


def temperature(lr: float, batch_size: int = 1) -> float:
    """SGD temperature ``T = η / S`` (dimensionless, per unit of time ``t``)."""
    check_positive("lr", lr)
    check_positive_int("batch_size", batch_size)
    return float(lr) / int(batch_size)


def lr_for_temperature(temp: float, batch_size: int = 1) -> float:
    """The learning rate ``η = T · S`` that gives temperature ``T`` at batch size ``S``."""
    check_positive("temp", temp)
    check_positive_int("batch_size", batch_size)
    return float(temp) * int(batch_size)


def time_of_steps(lr: float, steps):
    """Continuous time ``t = η · steps`` reached after ``steps`` SGD steps."""
    check_positive("lr", lr)
    return float(lr) * np.asarray(steps, dtype=float) if np.ndim(steps) else float(lr) * float(steps)


def steps_for_time(lr: float, t: float) -> int:
    """Number of steps of size ``η`` that cover time ``t`` (rounded up)."""
    check_positive("lr", lr)
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"t must be a finite time >= 0, got {t!r}")
    return int(math.ceil(t / lr - 1e-9))

