"""Interactive figures for the notebooks: one draw-only controller per figure (see :mod:`.base`).

One module per notebook: :mod:`.start` (00), :mod:`.balance` (01), :mod:`.lifting` (02), :mod:`.stationary` (03),
:mod:`.rank_jumps` (04), :mod:`.sde_noise` (05); each draws the results of its topic's experiments. What a lesson
shows around them (exercises, claims, predict first) is :mod:`symsgd_core.lesson`. Import a notebook's figures by
name, e.g. ``from symsgd_core.ui.balance import ThreeDynamics``.
"""

from symsgd_jupyter.figure_checks import figure_is_finite, slider_names, sweep_sliders
from symsgd_jupyter.kernel import install

from .base import Controller, RunController, status_text

__all__ = ["Controller", "RunController", "figure_is_finite", "install", "slider_names", "status_text",
           "sweep_sliders"]
