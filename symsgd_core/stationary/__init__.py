"""SGD's stationary distribution for diagonal networks (Ziyin, Li, Ueda, arXiv 2308.06671, Section 4).

* :mod:`.laws` — the problem (:class:`DiagonalNetProblem`: the data moments of :mod:`symsgd_core.balance.data` plus
  the weight decay), the closed-form laws (:class:`StationaryLaw`), the critical temperatures and phases;
* :mod:`.sde` — the v-SDE engine (:func:`simulate_v`, :class:`VRun`, relaxation rates), compiled in
  :mod:`._kernels`;
* :mod:`.sgd` — SGD on the actual parameters of the diagonal net, for comparison;
* :mod:`.experiments` — Notebook 03's experiments (one frozen result per figure);
* :mod:`.checks` — the registered proofs as code;
* :mod:`.claims` — the claims Notebook 03 asserts beside its tables (step sizes, bimodal window, discrete SGD);
* :mod:`.exercises` — Notebook 03's "Check yourself" questions.
"""

from .checks import (
    check_collapse,
    check_fluctuation_inversion,
    check_fokker_planck,
    check_histogram_depth0,
    check_histogram_depth1,
    check_histogram_depth2,
    check_most_likely_value,
    check_normalisation,
    check_spread_sqrt_t,
    check_tail_exponent,
    check_transitional_temperature,
    check_wrong_sign,
)
from .exercises import EXERCISES
from .experiments import (
    KS_ALPHA,
    PHASE_FRACTIONS,
    PHASE_SIGMAS,
    PHASE_TEMPS,
    TAIL_DEPTHS,
    DepthComparison,
    DepthLaws,
    DepthSample,
    DiscreteSGDResult,
    DiscreteSGDScan,
    DtRow,
    MethodFit,
    PhaseView,
    TailSamples,
    TailView,
    VarianceCurves,
    VarianceEstimates,
    WrongSignResult,
    depth_comparison,
    depth_laws,
    discrete_sgd,
    discrete_sgd_scan,
    dt_convergence,
    gaussian_problem,
    histogram_density,
    ks_threshold,
    phase_view,
    survival_points,
    tail_samples,
    tail_view,
    variance_curves,
    variance_estimates,
    wrong_sign,
)
from .laws import (
    PHASE_CODES,
    PHASES,
    DiagonalNetProblem,
    StationaryLaw,
    as_problem,
    critical_temperature,
    log_density_depth0,
    log_density_depth1,
    mode_onset_temperature,
    most_likely_roots_depth1,
    most_likely_value_depth0,
    most_likely_value_depth1,
    paper_transitional_temperature,
    phase_diagram,
    phase_grid,
    phase_of,
    tail_exponent,
    transitional_temperature,
    variance_depth0,
)
from .sde import (
    BLOCK_SIZE,
    DIVERGENCE,
    SCHEMES,
    NotRelaxedWarning,
    StationaryRun,
    VRun,
    integrated_autocorrelation_time,
    numpy_euler_s,
    relaxation_rate,
    run_to_stationarity,
    sde_coefficients,
    simulate_v,
    simulate_v_coupled,
    v_space_coefficients,
)
from .sgd import AMPLIFIED_LR, SGDSamples, sgd_v_samples

__all__ = [
    # laws
    "DiagonalNetProblem", "as_problem", "StationaryLaw", "critical_temperature", "mode_onset_temperature",
    "transitional_temperature", "paper_transitional_temperature", "phase_of", "phase_diagram", "PHASES",
    "PHASE_CODES", "phase_grid",
    "most_likely_value_depth0", "most_likely_value_depth1", "most_likely_roots_depth1", "variance_depth0",
    "tail_exponent", "log_density_depth0", "log_density_depth1",
    # the v-SDE engine
    "BLOCK_SIZE", "DIVERGENCE", "SCHEMES", "VRun", "StationaryRun", "NotRelaxedWarning", "simulate_v",
    "simulate_v_coupled", "relaxation_rate", "integrated_autocorrelation_time", "numpy_euler_s", "sde_coefficients",
    "v_space_coefficients", "run_to_stationarity",
    # SGD on the parameters
    "AMPLIFIED_LR", "SGDSamples", "sgd_v_samples",
    # experiments
    "KS_ALPHA", "gaussian_problem", "histogram_density", "survival_points", "ks_threshold",
    "DepthLaws", "DepthSample", "DepthComparison", "depth_laws", "depth_comparison",
    "PHASE_SIGMAS", "PHASE_TEMPS", "PHASE_FRACTIONS", "PhaseView", "phase_view",
    "VarianceCurves", "VarianceEstimates", "variance_curves", "variance_estimates", "WrongSignResult", "wrong_sign",
    "TAIL_DEPTHS", "TailView", "TailSamples", "tail_view", "tail_samples",
    "MethodFit", "DiscreteSGDResult", "DiscreteSGDScan", "discrete_sgd", "discrete_sgd_scan",
    "DtRow", "dt_convergence",
    # checks and exercises
    "check_fokker_planck", "check_normalisation", "check_histogram_depth0", "check_histogram_depth1",
    "check_histogram_depth2", "check_collapse", "check_fluctuation_inversion", "check_most_likely_value",
    "check_wrong_sign", "check_tail_exponent", "check_transitional_temperature", "check_spread_sqrt_t", "EXERCISES",
]
