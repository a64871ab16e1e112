"""What every topic shares: conventions, argument checks, checks-as-code, seeding, the result shape.

* :mod:`.conventions` — loss scale, ``T = η/S``, ``t = η·steps`` (defined once);
* :mod:`.validation` — argument checks: clear ``ValueError``s, never a crash or a silent NaN;
* :mod:`.checking` — :class:`CheckResult`, round-off and Monte-Carlo tolerances, the check registry;
* :mod:`.seeding` — the seeding rule (where every random number comes from);
* :mod:`.results` — the result shape every engine shares, the divergence rule, the ``engine`` keyword;
* :mod:`.exercises` — the "Check yourself" questions (:class:`Exercise`, :class:`Feedback`).
"""

# The modules. A name not in __all__ is imported from its module (symsgd_core.core.<module>.<name>).
from . import checking, conventions, exercises, results, seeding  # noqa: F401
from .checking import CheckResult, make_result, mc_tolerance, register, roundoff_tolerance
from .conventions import LOSS_HALF_FACTOR, lr_for_temperature, steps_for_time, temperature, time_of_steps
from .exercises import Exercise, Feedback
from .results import EngineResult
from .seeding import stream

__all__ = [
    "LOSS_HALF_FACTOR", "lr_for_temperature", "steps_for_time", "temperature", "time_of_steps",
    "CheckResult", "make_result", "mc_tolerance", "roundoff_tolerance", "register",
    "Exercise", "Feedback", "EngineResult", "stream",
]
