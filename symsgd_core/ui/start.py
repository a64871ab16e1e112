"""The teaser figure of ``00_start_here``: how fast SGD balances, by Corollary 3.3.

For the scalar model ℓ = (u w x − y)² with x ~ N(0, 1), y = k x + ε, ε ~ N(0, σ²),
the law of balance bounds the imbalance by ``|u² − w²|(t) ≤ |u² − w²|(0) · exp(−4Tσ²t)``
(arXiv 2308.06671, Corollary 3.3 with Δ/α₁ = σ²: :func:`symsgd_core.balance.law.gaussian_rate`), with
``T = η/S`` and ``t = η · steps`` (:mod:`symsgd_core.core.conventions`). Gradient flow (T = 0) keeps it constant.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..balance.law import corollary_bound, gaussian_rate, half_life
from ..core.conventions import steps_for_time
from ..core.validation import check_positive
from .base import Controller
from .plotting import key_last, put
from .sliders import Range
from .style import NEUTRALS, PALETTE


class BalanceTeaser(Controller):
    """Sliders T = η/S and σ; the bound on |u² − w²| over time, against gradient flow."""

    sliders = dict(temperature=Range("T = η/S", 0.0, 0.1, 0.001, fmt=".3f", continuous=True, label_width=None),
                   sigma=Range("noise σ", 0.0, 2.0, 0.05, continuous=True, label_width=None))

    def __init__(self, imbalance0: float = 2.0, t_max: float = 100.0) -> None:
        self.imbalance0 = check_positive("imbalance0", imbalance0)
        self.t = np.linspace(0.0, check_positive("t_max", t_max), 400)
        super().__init__(temperature=0.01, sigma=1.0)

    def _figures(self) -> list[go.FigureWidget]:
        fig = go.FigureWidget(layout=dict(
            height=360, margin=dict(l=60, r=20, t=40, b=50),
            title="How fast SGD balances: the bound on |u² − w²|",
            xaxis_title="time t = η · steps", yaxis_title="|u² − w²|", yaxis_range=[0, 1.05 * self.imbalance0]))
        fig.add_scatter(x=self.t, y=np.full_like(self.t, self.imbalance0), name="gradient flow (conserved)",
                        line=dict(dash="dash", color=NEUTRALS["grey"]))
        fig.add_scatter(x=self.t, y=self.t * 0, name="SGD bound exp(−4Tσ²t)", line=dict(color=PALETTE["blue"], width=3))
        key_last(fig, "bound")
        return [fig]

    def _update(self, temperature: float, sigma: float) -> None:
        rate = gaussian_rate(temperature, sigma)
        put(self.figure, "bound", y=corollary_bound(self.t, self.imbalance0, rate))
        t_half = half_life(rate)
        if math.isinf(t_half):
            self.say("T·σ² = 0: no gradient noise, so nothing drives the balance: the imbalance is conserved.")
        else:
            steps = steps_for_time(temperature, t_half) if temperature > 0 else 0
            self.say(f"Half-life t½ = ln 2 / (4Tσ²) = {t_half:.3g}, i.e. {steps:,} SGD steps at batch size 1 "
                     f"(η = T = {temperature:g}).")
