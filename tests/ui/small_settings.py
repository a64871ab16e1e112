"""Small settings for the re-simulating controllers, shared by the tests that move every slider.

A slider test checks the controller's logic (each slider reaches its experiment and changes the figure, the same
value draws the same figure, the ends give a finite figure and a message), not the science of its defaults, so the
sliders the test does not move get the smallest budgets that still draw every figure.
"""

from __future__ import annotations

from symsgd_core.ui import rank_jumps as rj
from symsgd_core.ui import sde_noise

#: Constructor settings per controller class; a class not listed is built with its defaults.
SMALL = {
    rj.PenaltyController: {},
    rj.TrapController: dict(steps=10_000, n_seeds=1),
    rj.EnsembleController: dict(n_runs=4, steps=10_000),
    rj.MechanismController: dict(after_steps=5000, n_seeds=1),
    rj.BasinController: dict(steps=5000),
    rj.AnnealController: dict(hot_steps=10_000, cold_steps=5000, n_seeds=1),
    rj.LangevinController: dict(n_runs=1, steps=10_000),
    sde_noise.SdeCompareController: dict(t_max=300.0, n_runs_sde=3, n_runs_sgd=3, n_runs_langevin=2),
}
