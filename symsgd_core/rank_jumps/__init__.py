"""One-way rank jumps of SGD in L2-regularised deep linear networks (Wang, Jacot, arXiv 2305.16038).

* :mod:`.network` — the network ``A_θ = W_L ⋯ W_1``, its parameters and measurements (rank, balancedness, B_r);
* :mod:`.problems` — matrix completion and the regularised loss;
* :mod:`.engine` — :func:`run` (SGD, forced SGD, GD, Langevin), :class:`RunResult`, :class:`Schedule`; the step
  itself is :mod:`.stepping`, implemented compiled (:mod:`._kernels`) and readable (:mod:`._reference`);
* :mod:`.analysis` — closed forms (the induced penalty, barriers, basins) and summaries of runs;
* :mod:`.experiments` — Notebook 04's experiments (the only home of their defaults, :data:`EPSILON_EXPERIMENT`);
* :mod:`.checks` — the registered proofs as code and the figures' claims;
* :mod:`.claims` — the claims of each of Notebook 04's sections, as ``CheckResult`` rows of its results;
* :mod:`.exercises` — Notebook 04's "Check yourself" questions.

Notebook 05's question (SGD's own noise as an SDE, on this experiment) is the topic :mod:`symsgd_core.sde_noise`.
"""

from .analysis import (
    Diagnosis,
    barrier_width,
    basin_boundary,
    basin_radius,
    censored_exponential_ks,
    completion_penalty,
    diagnose,
    distance_to_rank,
    explosion_distances,
    exponential_waiting_time,
    fit_slope_along_new_direction,
    fitted_exponent,
    fraction_low_rank_after_first_visit,
    jump_durations,
    matched_langevin_temperature,
    min_norm_completion,
    new_direction,
    new_direction_cost,
    noise_spectrum_by_direction,
    origin_fit_gradient,
    origin_hessian_min_eig,
    origin_is_local_min,
    origin_threshold,
    per_entry_gradients,
    perturb_new_direction,
    raising_noise_near,
    rank_raising_basis,
    rank_transitions,
    replicate,
    scalar_chain_loss,
    schatten_penalty,
    sgd_noise_covariance,
    zero_count_upper_bound,
)
from .checks import (
    check_absorption_after_forced_sampling,
    check_balanced_at_gd_minimum,
    check_balanced_norm,
    check_eckart_young,
    check_exact_decay,
    check_explosion,
    check_forced_sampling_decay,
    check_induced_penalty_at_balanced_points,
    check_induced_penalty_is_minimal,
    check_layer_decay,
    check_memoryless,
    check_no_jumps,
    check_no_returns,
    check_origin_condition,
    check_raising_noise,
    check_raising_noise_scaling,
    check_right_rank,
)
from .engine import METHODS, RunResult, Schedule, records_between, run
from .exercises import EXERCISES
from .experiments import (
    EPSILON_EXPERIMENT,
    LANGEVIN_RANK_TOL,
    POLISH_STEPS,
    AnnealResult,
    BasinResult,
    EnsembleResult,
    EpsilonExperiment,
    ForcedRecord,
    FullObservationResult,
    LangevinResult,
    MechanismResult,
    NoStartingMinimum,
    PenaltyView,
    TrapResult,
    all_entries_observed,
    anneal,
    basin,
    basin_slope,
    cold_weight_decay_sweep,
    ensemble,
    forced_row_run,
    langevin,
    mechanism,
    minima_losses,
    penalty_view,
    phase0_minima,
    rank_one_minimum,
    start_minimum,
    trap,
)
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
    singular_values,
    smallest_B,
)
from .problems import CompletionProblem, epsilon_completion, gradient, loss, random_low_rank_completion
from .stepping import DIVERGENCE, DIVERGENCE_RESIDUAL, FLUSH_EVERY, flush_threshold, weight_decay_factor

__all__ = [
    # network and problems
    "Architecture", "Params", "make_architecture", "init_params", "end_to_end", "balanced_factorisation",
    "exact_rank_tol", "BrCriterion", "DEFAULT_B_CRITERION", "DEFAULT_RANK_TOL", "balancedness", "singular_values",
    "layer_singular_values", "induced_penalty", "numerical_rank", "in_B", "CompletionProblem", "epsilon_completion",
    "random_low_rank_completion", "loss", "gradient",
    # engine
    "METHODS", "RunResult", "Schedule", "run", "records_between", "DIVERGENCE", "DIVERGENCE_RESIDUAL", "FLUSH_EVERY",
    "flush_threshold", "weight_decay_factor",
    # analysis
    "schatten_penalty", "new_direction_cost", "barrier_width", "scalar_chain_loss", "origin_is_local_min",
    "per_entry_gradients", "sgd_noise_covariance", "rank_raising_basis", "noise_spectrum_by_direction",
    "matched_langevin_temperature", "new_direction", "fit_slope_along_new_direction", "perturb_new_direction",
    "basin_boundary", "basin_radius", "replicate", "rank_transitions", "exponential_waiting_time", "jump_durations",
    "Diagnosis", "diagnose", "fraction_low_rank_after_first_visit",
    # experiments
    "EPSILON_EXPERIMENT", "EpsilonExperiment", "LANGEVIN_RANK_TOL", "POLISH_STEPS", "phase0_minima",
    "start_minimum", "rank_one_minimum", "minima_losses", "basin_slope", "ForcedRecord", "forced_row_run",
    "PenaltyView", "TrapResult", "EnsembleResult", "MechanismResult", "BasinResult", "AnnealResult",
    "LangevinResult", "NoStartingMinimum", "penalty_view", "trap", "ensemble", "mechanism", "basin", "anneal",
    "langevin",
    # checks and exercises
    "check_balanced_at_gd_minimum", "check_induced_penalty_at_balanced_points", "check_induced_penalty_is_minimal",
    "check_forced_sampling_decay", "check_absorption_after_forced_sampling", "check_exact_decay",
    "check_no_returns", "check_raising_noise", "check_balanced_norm", "EXERCISES",
    # the authors' reply worked out, B_r traces, jump statistics (Notebook 04)
    "smallest_B", "explosion_distances", "fitted_exponent", "distance_to_rank", "origin_fit_gradient",
    "origin_threshold", "origin_hessian_min_eig", "completion_penalty", "min_norm_completion",
    "censored_exponential_ks", "zero_count_upper_bound", "raising_noise_near", "FullObservationResult",
    "all_entries_observed", "cold_weight_decay_sweep", "check_explosion", "check_eckart_young",
    "check_origin_condition", "check_right_rank", "check_no_jumps", "check_memoryless", "check_raising_noise_scaling",
    "check_layer_decay",
]

# Notebook 04's claims, one function per section (the notebook calls them as rank_jumps.claims.<function>).
from . import claims  # noqa: E402

__all__ += ["claims"]
