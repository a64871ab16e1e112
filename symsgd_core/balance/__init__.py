"""The law of balance (Ziyin, Li, Ueda, arXiv 2308.06671): models, engine, observables, experiments, checks.

With a rescaling symmetry ``ℓ(u, w) = ℓ(λu, w/λ)``, ``G = ‖u‖² − ‖w‖²`` obeys an ODE under SGD: its diffusion
term cancels (Theorem 3.1). One module per concept:

* :mod:`.data` — the Gaussian teacher and finite datasets (:class:`GaussianData`, :class:`Dataset`, :class:`Moments`);
* :mod:`.models` — rescaling-symmetric models (:class:`ScalarModel`, :class:`Rank1LinearModel`, :class:`DiagonalNet`);
  :mod:`.relu` — the ReLU net (:class:`ReLUNet`); :mod:`.attention` — a bilinear attention score (torch);
* :mod:`.dynamics` — the engine: SGD, GD, gradient flow, SDE, Langevin, noise-amplified SGD (+ compiled kernels);
* :mod:`.law` — the law of balance and Corollary 3.3 as formulas, each written once;
* :mod:`.observables` — Itô terms, the noise spectrum, step factors, spreads at a point or along a run;
* :mod:`.experiments` — Notebook 01's experiments, one function each, frozen results;
* :mod:`.checks` — the registered proofs as code; :mod:`.claims` — the claims of each figure;
* :mod:`.exercises` — Notebook 01's "Check yourself" questions.
"""

from .checks import (
    ZERO_EIGENVALUE_MARGIN,
    check_balanced_norm_minimal,
    check_conservation,
    check_corollary_decay,
    check_destination_seed_independent,
    check_discrete_identity,
    check_g_is_ode,
    check_ito_terms,
    check_null_space,
    check_one_zero_eigenvalue,
    check_relu_teacher_ratio,
    check_relu_transient,
    check_symmetry_per_sample,
    check_theorem_forms,
    relu_identity_teacher,
)
from .claims import (
    RANK1_WINDOW,
    discrete_breakdown_claims,
    ensemble_claims,
    ito_claims,
    noise_balance_check,
    noise_vs_norm_claims,
    orbit_invariance,
    rank1_claims,
    relu_balance_claims,
    relu_claims,
    symmetry_claims,
    three_dynamics_claims,
)
from .data import Dataset, GaussianData, Moments, moments_of_samples
from .dynamics import (
    DIVERGENCE,
    Trajectory,
    langevin_noise_std,
    run_gd,
    run_gradient_flow,
    run_langevin,
    run_noise_amplified_sgd,
    run_sde,
    run_sgd,
)
from .exercises import EXERCISES
from .experiments import (
    ENSEMBLE_START,
    ENSEMBLE_T_END,
    ITO_MODELS,
    RELU_FIG2,
    RELU_SMALL,
    SCALAR_DATA,
    BalanceSeries,
    DiscreteBreakdownResult,
    EnsembleResult,
    ItoPoint,
    Rank1BalanceRun,
    ReLUBalanceRun,
    SymmetryOrbit,
    ThreeDynamicsResult,
    balance_ensemble,
    discrete_breakdown,
    ito_point,
    load_relu_balance,
    rank1_balance,
    relu_balance_run,
    symmetry_orbit,
    three_dynamics,
    write_relu_balance,
)
from .law import (
    corollary_bound,
    corollary_rate,
    g_rate,
    gaussian_rate,
    half_life,
    scalar_g_along_path,
    scalar_g_rate,
    scalar_step_factor,
)
from .models import OBSERVABLE_KEYS, DiagonalNet, Rank1LinearModel, ScalarInputModel, ScalarModel, SymmetricModel
from .observables import (
    ItoTerms,
    NoiseSpectrum,
    discrete_step_factors,
    ito_terms,
    mean_field_balance,
    noise_spectrum,
    rank1_population_terms,
    rank1_teacher,
    spread_summary,
    trace_standard_errors,
)
from .relu import ReLUNet

__all__ = [
    # data and models
    "Dataset", "GaussianData", "Moments", "moments_of_samples", "OBSERVABLE_KEYS", "SymmetricModel",
    "ScalarInputModel", "ScalarModel", "Rank1LinearModel", "DiagonalNet", "ReLUNet",
    # engine
    "DIVERGENCE", "Trajectory", "run_sgd", "run_gd", "run_gradient_flow", "run_sde", "run_langevin",
    "run_noise_amplified_sgd", "langevin_noise_std",
    # the law and the observables
    "g_rate", "scalar_g_rate", "scalar_g_along_path", "corollary_rate", "corollary_bound", "gaussian_rate",
    "half_life", "scalar_step_factor", "ItoTerms", "NoiseSpectrum", "ito_terms", "noise_spectrum",
    "mean_field_balance", "discrete_step_factors", "spread_summary", "trace_standard_errors", "rank1_teacher",
    "rank1_population_terms",
    # experiments
    "SCALAR_DATA", "ENSEMBLE_START", "ENSEMBLE_T_END", "ITO_MODELS", "RELU_FIG2", "RELU_SMALL", "SymmetryOrbit",
    "ThreeDynamicsResult", "EnsembleResult", "ItoPoint", "BalanceSeries", "Rank1BalanceRun", "ReLUBalanceRun",
    "DiscreteBreakdownResult", "symmetry_orbit", "three_dynamics", "balance_ensemble", "ito_point",
    "rank1_balance", "relu_balance_run", "load_relu_balance", "write_relu_balance", "discrete_breakdown",
    # checks and claims
    "check_symmetry_per_sample", "check_null_space", "check_ito_terms", "check_theorem_forms",
    "check_discrete_identity", "check_g_is_ode", "check_conservation", "check_corollary_decay",
    "check_destination_seed_independent", "check_one_zero_eigenvalue",
    "ZERO_EIGENVALUE_MARGIN", "check_balanced_norm_minimal", "check_relu_transient", "check_relu_teacher_ratio",
    "relu_identity_teacher",
    "RANK1_WINDOW", "orbit_invariance", "noise_balance_check", "noise_vs_norm_claims", "relu_balance_claims",
    "symmetry_claims", "three_dynamics_claims", "ensemble_claims", "ito_claims", "rank1_claims", "relu_claims",
    "discrete_breakdown_claims",
    # exercises
    "EXERCISES",
]
