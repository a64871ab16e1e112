"""One-way rank jumps of SGD in L2-regularised deep linear networks (Wang, Jacot, arXiv 2305.16038).

* :mod:`.network` — the network ``A_θ = W_L ⋯ W_1``, its parameters and measurements (rank, balancedness, B_r);
* :mod:`.problems` — matrix completion and the regularised loss;
* :mod:`.engine` — :func:`run` (SGD, forced SGD, GD, Langevin), :class:`RunResult`, :class:`Schedule`; the step
  itself is :mod:`.stepping`, implemented compiled (:mod:`._kernels`) and readable (:mod:`._reference`);
* :mod:`.analysis` — closed forms (the induced penalty, barriers, basins) and summaries of runs;
* :mod:`.experiments` — Notebook 04's experiments (the only home of their defaults, :data:`EPSILON_EXPERIMENT`);
* :mod:`.checks` — the registered proofs as code and the figures' claims;
* :mod:`.claims` — the claims of each of Notebook 04's sections, as ``CheckResult`` rows of its results;
* :mod:`.exercises` — Notebook 04's "Check yourself" questions;
* :mod:`.report` — the tables Notebook 04's cells print (one function per table).

Notebook 05's question (SGD's own noise as an SDE, on this experiment) is the topic :mod:`symsgd_core.sde_noise`.
"""

# The modules. A name not in __all__ is imported from its module (symsgd_core.rank_jumps.<module>.<name>).
from ..dln import (
    DEFAULT_B_CRITERION,
    DEFAULT_RANK_TOL,
    Architecture,
    CompletionProblem,
    Params,
    RunResult,
    Schedule,
    balancedness,
    epsilon_completion,
    gradient,
    in_B,
    init_params,
    make_architecture,
    numerical_rank,
    run,
    singular_values,
)
from . import analysis, checks, claims, exercises, experiments  # noqa: F401
from .analysis import basin_radius, distance_to_rank, min_norm_completion, raising_noise_near
from .checks import check_balanced_at_gd_minimum, check_balanced_norm, check_explosion, check_origin_condition
from .exercises import EXERCISES
from .experiments import (
    EPSILON_EXPERIMENT,
    LANGEVIN_RANK_TOL,
    AnnealResult,
    BasinResult,
    EnsembleResult,
    FullObservationResult,
    LangevinResult,
    MechanismResult,
    PenaltyView,
    TrapResult,
    all_entries_observed,
    anneal,
    basin,
    cold_weight_decay_sweep,
    ensemble,
    langevin,
    mechanism,
    minima_losses,
    penalty_view,
    phase0_minima,
    rank_one_minimum,
    start_minimum,
    trap,
)

__all__ = [
    # network and problems
    "Architecture", "Params", "make_architecture", "init_params", "DEFAULT_B_CRITERION", "DEFAULT_RANK_TOL",
    "balancedness", "singular_values", "numerical_rank", "in_B", "CompletionProblem", "epsilon_completion",
    "gradient",
    # engine
    "RunResult", "Schedule", "run",
    # analysis Notebook 04 uses (the rest is in .analysis)
    "basin_radius", "distance_to_rank", "min_norm_completion", "raising_noise_near",
    # experiments (Notebook 04) and their results
    "EPSILON_EXPERIMENT", "LANGEVIN_RANK_TOL", "phase0_minima", "start_minimum", "rank_one_minimum", "minima_losses",
    "penalty_view", "trap", "ensemble", "mechanism", "basin", "anneal", "langevin", "all_entries_observed",
    "cold_weight_decay_sweep",
    "PenaltyView", "TrapResult", "EnsembleResult", "MechanismResult", "BasinResult", "AnnealResult", "LangevinResult",
    "FullObservationResult",
    # the checks Notebook 04 runs by name; every check and claim is in .checks and .claims
    "check_balanced_at_gd_minimum", "check_balanced_norm", "check_explosion", "check_origin_condition",
    "analysis", "checks", "claims", "exercises", "EXERCISES", "report",
]

# Last: the tables read the names above from this namespace.
from . import report  # noqa: E402
