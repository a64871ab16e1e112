"""SGD's own noise as an SDE, on Notebook 04's rank-jump experiment (Notebook 05).

The question the authors' reply to Wang and Jacot (arXiv 2305.16038) leaves open: does the SDE with SGD's own noise
covariance jump in rank where SGD does, and what event makes SGD jump? This topic extends
:mod:`symsgd_core.rank_jumps`: it reuses its network, its ε-completion problem, its experiment's settings
(:data:`~symsgd_core.rank_jumps.EPSILON_EXPERIMENT`) and its engine's result and full-batch pass; nothing here is
imported by ``rank_jumps``.

* :mod:`.sde` — the SDE ``dθ = −∇𝓛_γ dt + √(η C(θ)) dW`` with SGD's covariance, Gaussian-weight SGD, Langevin;
  compiled (:mod:`._kernels`) and readable (:mod:`._reference`);
* :mod:`.adaptive` — the same SDE with an adaptive step (compiled in :mod:`._adaptive_kernel`), which confirms
  what fixed-step Euler–Maruyama shows; :mod:`.blowup` — blow-up hazards and the continuation of runs that leave;
* :mod:`.invariance` — the aligned rank-1 subspace M_u is invariant for the SDE, SGD and both integrators (proved),
  and jumped SDE paths approach one (evidence);
* :mod:`.explosion` — does the SDE explode? the failing Khasminskii bound, the frozen-direction norm SDE and its
  Feller scale function, the transverse share that reduction misses, measured passages against both;
* :mod:`.jump_event` — the forced-run threshold k*, the waiting time of a run of k, the equal-row staircase;
  :mod:`.jump_event_stats` — its statistics over the shipped grid;
* :mod:`.experiments` — Notebook 05's experiments and its shipped grid (``python -m symsgd_core sweep sde05``);
* :mod:`.controls` — §3.2's controls: the laws of a step's entry weights (total weight, largest step, stability at
  the rank-2 minimum), the runs' jumps to a rank-1 fit told apart from collapses to A = 0, the tables;
* :mod:`.checks` — the registered checks of the SDE; :mod:`.claims` — the claims each section of Notebook 05
  asserts (``assert_claims``); :mod:`.exercises` — Notebook 05's questions;
* :mod:`.report` — the tables Notebook 05's cells print, read from the shipped grid (one function per table).
"""

# The modules. A name not in __all__ is imported from its module (symsgd_core.sde_noise.<module>.<name>).
from ..dln import negative_weight_law, run_gaussian_sgd, run_langevin, run_sde, run_sgd_weights
from . import (  # noqa: F401
    blowup,
    checks,
    claims,
    controls,
    exercises,
    experiments,
    explosion,
    invariance,
    jump_event,
    jump_event_stats,
    spikes,
)
from .checks import (
    check_langevin_raising_noise,
    check_sde_compiled_vs_reference,
    check_sde_no_raising_noise,
    check_sde_one_step_moments,
)
from .experiments import (
    ComparePoint,
    EnsembleSummary,
    KStarRow,
    SdeGrid,
    compare_point,
    comparison_rows,
    kstar_rows,
    langevin_eps_rows,
    load_grid,
    staircase_summary,
)
from .jump_event import run_waiting_time, simulate_run_waiting_time

__all__ = [
    "blowup", "checks", "claims", "exercises", "experiments", "jump_event", "jump_event_stats",
    # the SDE and the dynamics it is compared with
    "run_sde", "run_gaussian_sgd", "run_langevin", "run_sgd_weights", "negative_weight_law",
    # the jump event
    "run_waiting_time", "simulate_run_waiting_time",
    # experiments and the shipped grid
    "ComparePoint", "EnsembleSummary", "KStarRow", "SdeGrid", "compare_point", "comparison_rows", "kstar_rows",
    "langevin_eps_rows", "load_grid", "staircase_summary",
    # the checks Notebook 05 runs by name
    "check_sde_compiled_vs_reference", "check_sde_one_step_moments", "check_sde_no_raising_noise",
    "check_langevin_raising_noise",
]
