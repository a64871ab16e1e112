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

# The modules. A name not in __all__ is imported from its module (symsgd_core.stationary.<module>.<name>).
from . import checks, claims, exercises, experiments, laws, sgd, v_sde  # noqa: F401
from .checks import (
    check_collapse,
    check_fluctuation_inversion,
    check_fokker_planck,
    check_histogram_depth0,
    check_histogram_depth1,
    check_histogram_depth2,
    check_normalisation,
    check_spread_sqrt_t,
    check_tail_exponent,
    check_transitional_temperature,
    check_wrong_sign,
)
from .exercises import EXERCISES
from .experiments import (
    DepthComparison,
    DepthLaws,
    DiscreteSGDResult,
    DiscreteSGDScan,
    DtRow,
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
    phase_view,
    tail_samples,
    tail_view,
    variance_curves,
    variance_estimates,
    wrong_sign,
)
from .laws import (
    DiagonalNetProblem,
    StationaryLaw,
    critical_temperature,
    mode_onset_temperature,
    most_likely_value_depth0,
    most_likely_value_depth1,
    phase_diagram,
    phase_of,
    tail_exponent,
    transitional_temperature,
    variance_depth0,
)
from .sgd import SGDSamples, sgd_v_samples
from .v_sde import (
    StationaryRun,
    VRun,
    numpy_euler_s,
    relaxation_rate,
    run_to_stationarity,
    simulate_v,
    simulate_v_coupled,
)

__all__ = [
    # laws
    "DiagonalNetProblem", "StationaryLaw", "critical_temperature", "mode_onset_temperature",
    "transitional_temperature", "phase_of", "phase_diagram", "most_likely_value_depth0", "most_likely_value_depth1",
    "variance_depth0", "tail_exponent",
    # the v-SDE engine and SGD on the parameters
    "simulate_v", "simulate_v_coupled", "numpy_euler_s", "VRun", "run_to_stationarity", "StationaryRun",
    "relaxation_rate", "sgd_v_samples", "SGDSamples",
    # experiments (Notebook 03) and their results
    "depth_laws", "depth_comparison", "phase_view", "variance_curves", "variance_estimates", "wrong_sign",
    "tail_view", "tail_samples", "discrete_sgd", "discrete_sgd_scan", "dt_convergence",
    "DepthLaws", "DepthComparison", "PhaseView", "VarianceCurves", "VarianceEstimates", "WrongSignResult",
    "TailView", "TailSamples", "DiscreteSGDResult", "DiscreteSGDScan", "DtRow",
    # the checks Notebooks 01 and 03 run by name; every check and claim is in .checks and .claims
    "check_fokker_planck", "check_normalisation", "check_histogram_depth0", "check_histogram_depth1",
    "check_histogram_depth2", "check_collapse", "check_fluctuation_inversion", "check_wrong_sign",
    "check_tail_exponent", "check_transitional_temperature", "check_spread_sqrt_t",
    "checks", "claims", "EXERCISES",
]
