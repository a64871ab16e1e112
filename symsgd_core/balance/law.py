"""The law of balance and its corollaries as formulas, each written once (Ziyin, Li, Ueda, arXiv 2308.06671).

Conventions (:mod:`symsgd_core.core.conventions`): ``ℓ = (f − y)²`` without ½, weight decay ``γ‖θ‖²``,
``T = η/S``, ``t = η·steps``. ``G = ‖u‖² − ‖w‖²`` for the two blocks of a rescaling symmetry.

* :func:`g_rate` — Theorem 3.1 with weight decay: ``dG/dt = T·(Tr Cov∇_uℓ − Tr Cov∇_wℓ) − 4γG``.
* :func:`scalar_g_rate` — the same for ``f = v x`` (``C = 4g(v)∇v∇vᵀ``): ``dG/dt = −4T·g(v)·G − 4γG``, with
  ``g(v) = α₁v² − 2α₂v + α₃`` of :class:`~symsgd_core.balance.data.Moments` (the paper's Eq. 7 example).
* :func:`scalar_g_along_path` — its solution along a path ``v(t)``: ``G(t) = G(0)·exp(−4T∫₀ᵗ g(v) ds)``.
* :func:`corollary_rate`, :func:`corollary_bound` — Corollary 3.3: ``|G|(t) ≤ |G(0)|·e^{−rate·t}`` with
  ``rate = 4TΔ/α₁ + 4γ`` (``Δ/α₁ = min_v g = σ²`` for Gaussian data; the paper's text says "+γ", its worked
  example gives ``4γ``); :func:`gaussian_rate` is that rate for ``x ~ N(0, 1)``, ``y = kx + ε``.
* :func:`half_life` — the time ``ln 2 / rate`` in which the bound halves.
* :func:`scalar_step_factor` — one discrete SGD step of ``ℓ = (uwx − y)²`` (no weight decay):
  ``u'² − w'² = (1 − η²ḡ_B²)(u² − w²)`` exactly (derived; :func:`~symsgd_core.balance.observables.discrete_step_factors`
  reads it off a run).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.validation import check_nonnegative
from .data import GaussianData, Moments

__all__ = ["corollary_bound", "corollary_rate", "g_rate", "gaussian_rate", "half_life", "scalar_g_along_path",
           "scalar_g_rate", "scalar_step_factor"]


def g_rate(temperature, tr_cov_u, tr_cov_w, G, weight_decay: float = 0.0):
    """``dG/dt = T·(Tr Cov∇_uℓ − Tr Cov∇_wℓ) − 4γG``: the exact SDE drift of ``G`` (Thm 3.1, plus weight decay).

    All arguments broadcast (``(R,)`` arrays or floats); ``T ≥ 0`` per unit time ``t``.
    """
    return temperature * (tr_cov_u - tr_cov_w) - 4.0 * weight_decay * G


def scalar_g_rate(temperature, g, G, weight_decay: float = 0.0):
    """``dG/dt = −4T·g(v)·G − 4γG`` for models ``f = v x`` (``C = 4g(v)∇v∇vᵀ``, so ``Tr_u − Tr_w = −4g(v)G``)."""
    return -4.0 * temperature * g * G - 4.0 * weight_decay * G


def scalar_g_along_path(G0, temperature, g_integral):
    """``G(t) = G(0)·exp(−4T·∫₀ᵗ g(v(s)) ds)``: :func:`scalar_g_rate` (no weight decay) integrated along a path.

    Args:
        G0: ``G`` at ``t = 0`` (broadcasts against ``g_integral``).
        temperature: ``T``.
        g_integral: ``∫₀ᵗ g(v(s)) ds`` at the times wanted.
    """
    return G0 * np.exp(-4.0 * temperature * g_integral)


def corollary_rate(temperature: float, moments: Moments, weight_decay: float = 0.0) -> float:
    """Corollary 3.3 / Eq. 7 decay rate of ``|u² − w²|`` per unit ``t``: ``4TΔ/α₁ + 4γ`` (``= 4Tσ² + 4γ``)."""
    return 4.0 * temperature * moments.delta / moments.alpha1 + 4.0 * weight_decay


def gaussian_rate(temperature: float, sigma: float, weight_decay: float = 0.0) -> float:
    """:func:`corollary_rate` for ``x ~ N(0, 1)``, ``y = kx + ε``, ``ε ~ N(0, σ²)`` (any k): ``4Tσ² + 4γ``.

    Raises:
        ValueError: a negative ``temperature`` or ``sigma``.
    """
    T = check_nonnegative("temperature", temperature)
    return corollary_rate(T, GaussianData(sigma=check_nonnegative("sigma", sigma)).moments(), weight_decay)


def corollary_bound(t, imbalance0: float, rate: float):
    """The bound ``|G(0)|·e^{−rate·t}`` on ``|u² − w²|`` at times ``t`` (array, units of ``t``)."""
    return imbalance0 * np.exp(-rate * np.asarray(t, dtype=float))


def half_life(rate: float) -> float:
    """Time ``t½ = ln 2 / rate`` for the bound to halve (``inf`` when the rate is 0)."""
    rate = check_nonnegative("rate", rate)
    return math.inf if rate == 0 else math.log(2.0) / rate


def scalar_step_factor(lr: float, g_bar):
    """The exact one-step factor of the scalar model: ``u'² − w'² = (1 − η²ḡ_B²)(u² − w²)``."""
    return 1.0 - lr**2 * g_bar**2
