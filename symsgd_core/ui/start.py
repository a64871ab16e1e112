"""The teaser figure of ``00_start_here``: how fast SGD balances, by Corollary 3.3.

For the scalar model ℓ = (u w x − y)² with x ~ N(0, 1), y = k x + ε, ε ~ N(0, σ²),
the law of balance bounds the imbalance by ``|u² − w²|(t) ≤ |u² − w²|(0) · exp(−4Tσ²t)``
(arXiv 2308.06671, Corollary 3.3 with Δ/α₁ = σ²: :func:`symsgd_core.balance.law.gaussian_rate`), with
``T = η/S`` and ``t = η · steps`` (:mod:`symsgd_core.core.conventions`). Gradient flow (T = 0) keeps it constant.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..balance.experiments import teaser_bound
from .base import Controller, Words
from .plotting import key_last, put
from .sliders import Range
from .style import NEUTRALS, PALETTE


class BalanceTeaser(Controller):
    """Sliders T = η/S and σ; the bound on |u² − w²| over time (:func:`~symsgd_core.balance.experiments.teaser_bound`),
    against gradient flow. Settings ``imbalance0``, ``t_max``: |u² − w²| at t = 0 and the time shown."""

    experiment = staticmethod(teaser_bound)
    sliders = dict(temperature=Range("T = η/S", 0.0, 0.1, 0.001, fmt=".3f", continuous=True, label_width=None),
                   sigma=Range("noise σ", 0.0, 2.0, 0.05, continuous=True, label_width=None))

    def _figures(self) -> list[go.FigureWidget]:
        imbalance0, t = self.settings["imbalance0"], self._call({}).t  # the times the experiment draws
        fig = go.FigureWidget(layout=dict(
            height=360, margin=dict(l=60, r=20, t=40, b=50),
            title="How fast SGD balances: the bound on |u² − w²|",
            xaxis_title="time t = η · steps", yaxis_title="|u² − w²|", yaxis_range=[0, 1.05 * imbalance0]))
        fig.add_scatter(x=t, y=np.full_like(t, imbalance0), name="gradient flow (conserved)",
                        line=dict(dash="dash", color=NEUTRALS["grey"]))
        fig.add_scatter(x=t, y=t * 0, name="SGD bound exp(−4Tσ²t)", line=dict(color=PALETTE["blue"], width=3))
        key_last(fig, "bound")
        return [fig]

    def _show(self, r, **values) -> None:
        put(self.figure, "bound", y=r.bound)

    def words(self, r, **values) -> Words:
        if r.outcome.kind == "conserved":
            return Words(None, "info", "T·σ² = 0: no gradient noise, so nothing drives the balance: the imbalance is "
                         "conserved.")
        n = r.outcome.numbers
        return Words(None, "info", f"Half-life t½ = ln 2 / (4Tσ²) = {n['half_life']:.3g}, i.e. {n['steps']:,} SGD "
                     f"steps at batch size 1 (η = T = {n['temperature']:g}).")
