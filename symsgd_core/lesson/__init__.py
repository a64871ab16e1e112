"""What a lesson shows around its figures (:mod:`symsgd_core.ui`): the "Check yourself" panel of a topic's
``EXERCISES`` (:mod:`.exercise_panel`), a cell's claims asserted as one compact line (:mod:`.claims_cell`), and a
figure covered until the reader has answered the prediction asked above it (:mod:`.reveal`).
"""

from .claims_cell import assert_caught, assert_claims
from .exercise_panel import ExercisePanel
from .reveal import reveal_after

__all__ = ["ExercisePanel", "assert_caught", "assert_claims", "reveal_after"]
