"""The law of balance (Ziyin, Li, Ueda, arXiv 2308.06671): models, engine, observables, experiments, checks.

With a rescaling symmetry ``ℓ(u, w) = ℓ(λu, w/λ)``, ``G = ‖u‖² − ‖w‖²`` obeys an ODE under SGD: its diffusion
term cancels (Theorem 3.1). One module per concept:

* :mod:`.data` — the Gaussian teacher and finite datasets (:class:`GaussianData`, :class:`Dataset`, :class:`Moments`);
* :mod:`.models` — rescaling-symmetric models (:class:`ScalarModel`, :class:`Rank1LinearModel`, :class:`DiagonalNet`);
  :mod:`.relu` — the ReLU net (:class:`ReLUNet`); :mod:`.attention` — a bilinear attention score (torch);
* :mod:`.dynamics` — the engine: SGD, GD, gradient flow, SDE, Langevin, noise-amplified SGD (+ compiled kernels);
* :mod:`.law` — the law of balance and Corollary 3.3 as formulas, each written once;
* :mod:`.plane` — the scalar model's curves in the ``(u, w)`` plane (hyperbolas, level sets, orbits) as plots draw them;
* :mod:`.observables` — Itô terms, the noise spectrum, step factors, spreads at a point or along a run;
* :mod:`.experiments` — Notebook 01's experiments, one function each, frozen results;
* :mod:`.checks` — the registered proofs as code; :mod:`.claims` — the claims of each figure;
* :mod:`.exercises` — Notebook 01's "Check yourself" questions.
"""

# The modules. A name not in __all__ is imported from its module (symsgd_core.balance.<module>.<name>).
from . import checks, claims, data, dynamics, exercises, experiments, law, models, observables, plane, relu  # noqa: F401
from .checks import (
    check_balanced_norm_minimal,
    check_corollary_decay,
    check_destination_seed_independent,
    check_one_zero_eigenvalue,
    check_relu_teacher_ratio,
    check_relu_transient,
)
from .data import Dataset, GaussianData, Moments
from .dynamics import (
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
    ITO_MODELS,
    RELU_FIG2,
    SCALAR_DATA,
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
    rank1_balance,
    relu_balance_run,
    symmetry_orbit,
    three_dynamics,
)
from .law import corollary_rate, g_rate, gaussian_rate, half_life
from .models import DiagonalNet, Rank1LinearModel, ScalarModel, SymmetricModel
from .relu import ReLUNet

__all__ = [
    # data and models
    "Dataset", "GaussianData", "Moments", "SymmetricModel", "ScalarModel", "Rank1LinearModel", "DiagonalNet",
    "ReLUNet",
    # engine
    "Trajectory", "run_sgd", "run_gd", "run_gradient_flow", "run_sde", "run_langevin", "run_noise_amplified_sgd",
    "langevin_noise_std",
    # the law
    "g_rate", "corollary_rate", "gaussian_rate", "half_life",
    # experiments (Notebooks 00 and 01) and their results
    "SCALAR_DATA", "ITO_MODELS", "RELU_FIG2",
    "symmetry_orbit", "three_dynamics", "balance_ensemble", "ito_point", "rank1_balance", "relu_balance_run",
    "discrete_breakdown",
    "SymmetryOrbit", "ThreeDynamicsResult", "EnsembleResult", "ItoPoint", "Rank1BalanceRun", "ReLUBalanceRun",
    "DiscreteBreakdownResult",
    # the checks Notebooks 01 and 04 run by name; every check and claim is in .checks and .claims
    "check_balanced_norm_minimal", "check_corollary_decay", "check_destination_seed_independent",
    "check_one_zero_eigenvalue", "check_relu_teacher_ratio", "check_relu_transient",
    "checks", "claims", "EXERCISES",
]
