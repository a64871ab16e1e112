"""Deep linear networks ``A_θ = W_L ⋯ W_1``: the model and its dynamics, shared by Notebooks 04 and 05.

* :mod:`.network` — architecture, parameters, measurements (singular values, rank, balancedness, B_r);
* :mod:`.problems` — matrix completion and the regularised loss (γ = ``weight_decay``, ``γ‖θ‖²`` without ½);
* :mod:`.stepping` — the step's shared rules (divergence, flushing); :mod:`.engine` — :func:`run` (SGD, forced SGD,
  GD, Langevin), compiled (:mod:`._kernels`) and readable (:mod:`._reference`);
* :mod:`.sde` — the entry-weighted step: SGD's SDE, Gaussian and ±1 SGD, Langevin (:mod:`._sde_kernels`,
  :mod:`._sde_reference`); :mod:`.adaptive` — the adaptive step and its follow-every-path mode
  (:mod:`._adaptive_kernel`);
* :mod:`.noise` — SGD's noise at a point: per-entry gradients, covariance, rank-raising basis, matched Langevin τ;
* :mod:`.integrators` — every dynamics as a declared type (name, time step, weak/strong order, how it runs).

Lessons (``rank_jumps``, ``sde_noise``) import this package by its face; a name not in ``__all__`` is imported
from its module.
"""

from .adaptive import ESCAPE_NORM, EXCURSION_BASE, FOLLOW_CAP_NORM, AdaptiveRun, run_sde_adaptive
from .engine import RunResult, Schedule, build_result, record_stats, records_between, run, sgd_chunk
from .network import (
                      DEFAULT_B_CRITERION,
                      DEFAULT_RANK_TOL,
                      Architecture,
                      BrCriterion,
                      Params,
                      balanced_factorisation,
                      balancedness,
                      end_to_end,
                      exact_rank_tol,
                      in_B,
                      induced_penalty,
                      init_params,
                      layer_singular_values,
                      make_architecture,
                      numerical_rank,
                      replicate,
                      schatten_penalty,
                      singular_values,
                      smallest_B,
)
from .noise import (
                      matched_langevin_temperature,
                      noise_spectrum_by_direction,
                      per_entry_gradients,
                      rank_raising_basis,
                      sgd_noise_covariance,
)
from .problems import CompletionProblem, check_problem_fits, epsilon_completion, gradient, loss
from .sde import (
                      negative_weight_law,
                      noise_factor,
                      run_gaussian_sgd,
                      run_langevin,
                      run_sde,
                      run_sgd_weights,
                      sde_entry_weights,
                      sde_noise_scale,
                      sgd_entry_weights,
                      uncentred_reference,
                      weighted_chunk,
)
from .stepping import DIVERGENCE, DIVERGENCE_RESIDUAL, flush_threshold, weight_decay_factor

__all__ = [
    "Architecture", "Params", "BrCriterion", "DEFAULT_B_CRITERION", "DEFAULT_RANK_TOL", "make_architecture",
    "init_params", "balanced_factorisation", "replicate", "end_to_end", "singular_values", "layer_singular_values",
    "numerical_rank", "exact_rank_tol", "balancedness", "in_B", "smallest_B", "induced_penalty", "schatten_penalty",
    "CompletionProblem", "epsilon_completion", "gradient", "loss", "check_problem_fits",
    "DIVERGENCE", "DIVERGENCE_RESIDUAL", "flush_threshold", "weight_decay_factor",
    "RunResult", "Schedule", "run", "records_between", "build_result", "record_stats", "sgd_chunk",
    "run_sde", "run_gaussian_sgd", "run_langevin", "run_sgd_weights", "negative_weight_law", "sde_entry_weights",
    "sgd_entry_weights", "sde_noise_scale", "noise_factor", "weighted_chunk", "uncentred_reference",
    "run_sde_adaptive", "AdaptiveRun", "ESCAPE_NORM", "EXCURSION_BASE", "FOLLOW_CAP_NORM",
    "per_entry_gradients", "sgd_noise_covariance", "rank_raising_basis", "noise_spectrum_by_direction",
    "matched_langevin_temperature",
]
