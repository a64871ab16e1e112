"""Interactive figures for the notebooks: one draw-only controller per figure (see :mod:`.base`).

One module per notebook: :mod:`.start` (00), :mod:`.balance` (01), :mod:`.lifting` (02), :mod:`.stationary` (03),
:mod:`.rank_jumps` (04), :mod:`.sde_noise` (05); each draws the results of its topic's experiments.
:mod:`symsgd_core.exercise_panel` shows a topic's "Check yourself" questions (its ``EXERCISES``) as a widget panel
and :mod:`symsgd_core.claims_cell` a cell's claims (``assert_claims``), both re-exported here; :mod:`.predict`
covers a figure until the reader has answered the prediction asked above it (:func:`~.predict.reveal_after`).
Import a notebook's figures by name, e.g. ``from symsgd_core.ui.balance import ThreeDynamics``.
"""

from symsgd_jupyter.figure_checks import figure_is_finite, slider_names, sweep_sliders
from symsgd_jupyter.kernel import install

from ..claims_cell import assert_caught, assert_claims
from ..exercise_panel import ExercisePanel
from .base import Controller, RunController, status_text
from .predict import reveal_after

__all__ = ["Controller", "ExercisePanel", "RunController", "assert_caught", "assert_claims", "figure_is_finite",
           "install", "reveal_after", "slider_names", "status_text", "sweep_sliders"]
