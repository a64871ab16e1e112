"""Proofs as code: every claim the notebooks make, as a named, runnable check.

Run them all with ``python -m symsgd_core check``. Modules:

* :mod:`symsgd_core.balance.checks` — law of balance (Theorem 3.1, Corollary 3.3, Itô's lemma);
* :mod:`symsgd_core.lifting.checks` — the rank-1 lifting ℓ̃(u wᵀ) and the sign caveat;
* :mod:`symsgd_core.rank_jumps.checks` — deep linear networks, balancedness, absorption;
* :mod:`.stationary` — SGD's stationary distribution (paper Section 4).
"""

from ..balance import checks as balance  # noqa: F401  (registers the checks)
from ..core.checking import CheckResult, make_result, mc_tolerance, registered, roundoff_tolerance
from ..core.checking import run_registered as run_all
from ..lifting import checks as lifting  # noqa: F401  (registers the checks)
from ..rank_jumps import checks as rank_jumps  # noqa: F401  (registers the checks)
from . import stationary  # noqa: F401  (registers the checks)

__all__ = ["CheckResult", "make_result", "mc_tolerance", "registered", "roundoff_tolerance", "run_all"]
