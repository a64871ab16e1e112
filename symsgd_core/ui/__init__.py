"""Interactive figures for the notebooks: one controller per figure (see :mod:`.base`).

Modules: :mod:`.balance` (Notebook 01), :mod:`.lifting` (02), :mod:`.rank_jumps` (03),
:mod:`.stationary` (04), each with its "Check yourself" ``EXERCISES``, which :mod:`.exercises` turns
into a widget panel. They are imported on demand: ``from symsgd_core.ui import balance``.
"""

from .base import Controller, figure_is_finite, slider_names, sweep_sliders

__all__ = ["Controller", "figure_is_finite", "slider_names", "sweep_sliders"]
