"""symsgd_core: the tested engine behind the symsgd teaching notebooks.

Two results about how SGD's noise shapes learning:

1. the *law of balance* (Ziyin, Li, Ueda): with a rescaling symmetry
   ℓ(u, w) = ℓ(λu, w/λ), ‖u‖² − ‖w‖² obeys an ODE under SGD;
2. *one-way rank jumps* (Wang, Jacot): SGD on L2-regularised deep linear
   networks jumps from high to low rank, never back.

One subpackage per topic, each split into its model, engine, experiments, checks and exercises:

* :mod:`.core` — conventions (loss scale, ``T = η/S``, ``t = η·steps``), validation, the check registry,
  the seeding rule (:mod:`.core.seeding`), the engine result shape and divergence rule (:mod:`.core.results`),
  the widget-free exercise types;
* :mod:`.balance` — the law of balance (Notebooks 00 and 01; arXiv 2308.06671, Section 3);
* :mod:`.lifting` — the rank-1 lifting ℓ̃(u wᵀ) (Notebook 02);
* :mod:`.rank_jumps` — deep linear networks and one-way rank jumps (Notebook 04; arXiv 2305.16038);
* :mod:`.stationary` — SGD's stationary distribution for diagonal networks (Notebook 03; arXiv 2308.06671,
  Section 4);
* :mod:`.sde_noise` — SGD's own noise as an SDE on the rank-jump experiment (Notebook 05: the question the
  authors' reply leaves open);
* :mod:`.ui` — one draw-only module of interactive figures per notebook;
* :mod:`.lesson` — what a lesson shows around its figures: exercise panels, claims cells, predict first;
* :mod:`.benchmarks` — ``python -m symsgd_core bench``.

Proofs as code: :func:`run_checks` (``python -m symsgd_core check``) runs every topic's registered checks,
:func:`registered_checks` lists them. The conventions below import eagerly (numpy only); the topics load on
first use (they import scipy, torch, numba or plotly), so ``import symsgd_core`` stays fast.
"""

from __future__ import annotations

import importlib

from ._startup import import_jsonschema_without_iri_grammar, wait_passively_in_parallel_regions

import_jsonschema_without_iri_grammar()  # before plotly (through nbformat) imports jsonschema: see _startup
wait_passively_in_parallel_regions()  # before numba loads OpenMP at its first parallel call: see _startup

from .core.conventions import LOSS_HALF_FACTOR, lr_for_temperature, steps_for_time, temperature, time_of_steps  # noqa: E402

__version__ = "0.1.0"

#: The topics, in the order of the notebooks (and of :func:`run_checks`).
TOPICS = ("balance", "lifting", "rank_jumps", "stationary", "sde_noise")

#: Submodules and names loaded on first access (they import torch, numba or plotly).
_LAZY_MODULES = (*TOPICS, "dln", "benchmarks", "core", "ui", "lesson")
_LAZY_NAMES = {
    **{name: "balance" for name in ("Dataset", "GaussianData", "Moments", "SymmetricModel", "ScalarModel",
                                    "Rank1LinearModel", "DiagonalNet", "ReLUNet", "Trajectory", "run_sgd", "run_gd",
                                    "run_gradient_flow", "run_sde", "run_langevin", "run_noise_amplified_sgd",
                                    "langevin_noise_std")},
    "CheckResult": "core.checking",
    "epsilon_completion": "rank_jumps",
    **{name: "stationary" for name in ("DiagonalNetProblem", "StationaryLaw", "critical_temperature")},
}

__all__ = [
    "LOSS_HALF_FACTOR", "lr_for_temperature", "steps_for_time", "temperature", "time_of_steps",
    "Dataset", "GaussianData", "Moments",
    "SymmetricModel", "ScalarModel", "Rank1LinearModel", "DiagonalNet", "ReLUNet",
    "Trajectory", "run_sgd", "run_gd", "run_gradient_flow", "run_sde", "run_langevin", "run_noise_amplified_sgd",
    "langevin_noise_std",
    "TOPICS", "run_checks", "registered_checks", "CheckResult", "epsilon_completion", "DiagonalNetProblem",
    "StationaryLaw", "critical_temperature",
    *_LAZY_MODULES,
]


def registered_checks() -> dict:
    """Every topic's registered checks, by name, in the order of :data:`TOPICS` (then of registration)."""
    for topic in TOPICS:
        importlib.import_module(f".{topic}.checks", __name__)
    from .core.checking import registered

    checks = registered()
    rank = {topic: i for i, topic in enumerate(TOPICS)}
    names = sorted(checks, key=lambda name: rank.get(name.split(".", 1)[0], len(TOPICS)))  # stable: keeps order
    return {name: checks[name] for name in names}


def run_checks(seed: int = 0, names: list[str] | None = None) -> list:
    """Run every registered check (or those in ``names``) with ``seed``; a list of
    :class:`~symsgd_core.core.checking.CheckResult` (a check that raises is a failed result)."""
    from .core.checking import run_registered

    return run_registered(seed, names, registry=registered_checks())


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
