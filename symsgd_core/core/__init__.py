"""What every topic shares: conventions, argument checks, checks-as-code, seeding, the result shape.

* :mod:`.conventions` — loss scale, ``T = η/S``, ``t = η·steps`` (defined once);
* :mod:`.validation` — argument checks: clear ``ValueError``s, never a crash or a silent NaN;
* :mod:`.checking` — :class:`CheckResult`, round-off and Monte-Carlo tolerances, the check registry;
* :mod:`.seeding` — the seeding rule (where every random number comes from);
* :mod:`.results` — the result shape every engine shares, the divergence rule, the ``engine`` keyword;
* :mod:`.exercises` — the "Check yourself" questions (:class:`Exercise`, :class:`Feedback`).
"""

from .checking import (
    EPS64,
    CheckResult,
    make_result,
    mc_tolerance,
    register,
    registered,
    roundoff_tolerance,
    run_registered,
)
from .conventions import LOSS_HALF_FACTOR, lr_for_temperature, steps_for_time, temperature, time_of_steps
from .exercises import Exercise, Feedback, as_number, as_vector, number_exercise
from .results import ENGINES, Divergence, EngineResult, resolve_engine
from .seeding import piece_seed, stream, streams

__all__ = [
    "EPS64", "CheckResult", "make_result", "mc_tolerance", "register", "registered", "roundoff_tolerance",
    "run_registered",
    "LOSS_HALF_FACTOR", "lr_for_temperature", "steps_for_time", "temperature", "time_of_steps",
    "Exercise", "Feedback", "as_number", "as_vector", "number_exercise",
    "ENGINES", "Divergence", "EngineResult", "resolve_engine",
    "piece_seed", "stream", "streams",
]
