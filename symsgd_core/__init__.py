"""symsgd_core: the tested engine behind the symsgd teaching notebooks.

Two results about how SGD's noise shapes learning:

1. the *law of balance* (Ziyin, Li, Ueda): with a rescaling symmetry
   ℓ(u, w) = ℓ(λu, w/λ), ‖u‖² − ‖w‖² obeys an ODE under SGD;
2. *one-way rank jumps* (Wang, Jacot): SGD on L2-regularised deep linear
   networks jumps from high to low rank, never back.

The curated API, by concept (one module each):

* conventions — loss scale, ``T = η/S``, ``t = η·steps``: :mod:`.conventions`
* data and models with the rescaling symmetry — :mod:`.data`, :mod:`.models`, :mod:`.relu_net`
* dynamics (SGD, GD, gradient flow, SDE, Langevin, noise-amplified SGD) — :mod:`.dynamics`
* observables for Notebook 01 (Itô terms, noise spectrum, balance runs) — :mod:`.balance_analysis`
* the rank-1 lifting ℓ̃(u wᵀ) — :mod:`.lifting`
* deep linear networks and rank jumps — :mod:`.rank_jumps`
* SGD's stationary distribution — :mod:`.stationary`, :mod:`.stationary_sde`
* proofs as code — :mod:`.checks` (``python -m symsgd_core check``)
* benchmarks — :mod:`.benchmarks` (``python -m symsgd_core bench``)
* interactive figures — :mod:`.ui` (one controller per figure)

The engine names below import eagerly (numpy and scipy only); the torch-, numba- and
plotly-backed modules load on first use, so ``import symsgd_core`` stays fast.
"""

from __future__ import annotations

import importlib

from .core.conventions import LOSS_HALF_FACTOR, lr_for_temperature, steps_for_time, temperature, time_of_steps

__version__ = "0.1.0"

#: Submodules and names loaded on first access (they import torch, numba or plotly).
_LAZY_MODULES = ("balance", "benchmarks", "checks", "core", "lifting", "rank_jumps", "stationary", "stationary_sde",
                 "ui")
_LAZY_NAMES = {
    **{name: "balance" for name in ("Dataset", "GaussianData", "Moments", "SymmetricModel", "ScalarModel",
                                    "Rank1LinearModel", "DiagonalNet", "ReLUNet", "Trajectory", "run_sgd", "run_gd",
                                    "run_gradient_flow", "run_sde", "run_langevin", "run_noise_amplified_sgd",
                                    "langevin_noise_std")},
    "run_checks": ("checks", "run_all"),
    "CheckResult": "checks",
    "epsilon_completion": "rank_jumps",
    "StationaryLaw": "stationary",
    "critical_temperature": "stationary",
}

__all__ = [
    "LOSS_HALF_FACTOR", "lr_for_temperature", "steps_for_time", "temperature", "time_of_steps",
    "Dataset", "GaussianData", "Moments",
    "SymmetricModel", "ScalarModel", "Rank1LinearModel", "DiagonalNet", "ReLUNet",
    "Trajectory", "run_sgd", "run_gd", "run_gradient_flow", "run_sde", "run_langevin", "run_noise_amplified_sgd",
    "langevin_noise_std",
    "run_checks", "CheckResult", "epsilon_completion", "StationaryLaw", "critical_temperature",
    *_LAZY_MODULES,
]


def __getattr__(name: str):
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY_NAMES:
        target = _LAZY_NAMES[name]
        module, attr = target if isinstance(target, tuple) else (target, name)
        return getattr(importlib.import_module(f".{module}", __name__), attr)
    raise AttributeError(f"module 'symsgd_core' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
