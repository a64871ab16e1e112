"""symsgd_core: the tested engine behind the symsgd teaching notebooks.

Two results about how SGD's noise shapes learning:

1. the *law of balance* (Ziyin, Li, Ueda): with a rescaling symmetry
   ℓ(u, w) = ℓ(λu, w/λ), ‖u‖² − ‖w‖² obeys an ODE under SGD;
2. *one-way rank jumps* (Wang, Jacot): SGD on L2-regularised deep linear
   networks jumps from high to low rank, never back.

Conventions (loss scale, T = η/S, t = η·steps) live in :mod:`symsgd_core.conventions`.
Checks: ``python -m symsgd_core check``; benchmarks: ``python -m symsgd_core bench``.
"""

from .conventions import LOSS_HALF_FACTOR, steps_for_time, temperature, time_of_steps

__version__ = "0.1.0"

__all__ = ["LOSS_HALF_FACTOR", "steps_for_time", "temperature", "time_of_steps"]
