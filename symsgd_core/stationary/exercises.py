"""The "Check yourself" exercises of Notebook 03 (SGD's stationary distribution, arXiv 2308.06671, Section 4).

Expected values come from the closed forms (:mod:`.laws`); each ``solution`` is the hand computation of the
explanation, and the typical mistakes say what a wrong value reveals.
"""

from __future__ import annotations

import math

from ..core.exercises import Exercise, number_exercise
from .experiments import gaussian_problem
from .laws import critical_temperature, most_likely_roots_depth1, tail_exponent, variance_depth0

__all__ = ["EXERCISES"]


def _exercise(name: str, question: str, truth: float, why: str, solution: float, mistakes) -> Exercise:
    """A numeric exercise (relative tolerance 1e-3); ``why`` explains a right answer and is the hint for a wrong one."""
    return number_exercise(name, question, truth, f"{truth:.4g}. ({why})", why, solution=solution, rel_tol=1e-3,
                           mistakes=mistakes)


#: The exercises of §7, by name (shown by :class:`~symsgd_core.ui.exercises.ExercisePanel`). The expected
#: values come from :mod:`symsgd_core.stationary.laws`; each ``solution`` is the hand computation in the
#: explanation, and the typical mistakes say what a wrong value reveals.
EXERCISES = {ex.name: ex for ex in (
    _exercise("critical_temperature",
              "k = 1, σ = 1, weight decay γ = 0.2: above which T does the depth-1 net learn nothing?",
              critical_temperature(gaussian_problem(1.0, 1.0, 0.2)),
              "T_c = (β₂ − γ)/α₃ with β₂ = k = 1 and α₃ = 2k² + σ² = 3: (1 − 0.2)/3.", (1 - 0.2) / 3,
              [(critical_temperature(gaussian_problem(1.0, 1.0, 0.0)),
                "that is T_c without weight decay: γ lowers the effective β₂ to β₂ − γ."),
               (critical_temperature(gaussian_problem(1.0, 1.0, 0.2)) / 3,
                "that is T_c/3, where the density starts to diverge at v = 0; learning stops only at T_c.")]),
    _exercise("tail_depth3", "What is the tail exponent ρ (p ~ v^ρ) of a depth-3 diagonal net?", tail_exponent(3),
              "ρ = −5 + 3/(D+1) = −5 + 3/4, whatever T is.", -5 + 3 / 4,
              [(tail_exponent(1), "that is the depth-1 exponent −7/2; use D = 3."),
               (tail_exponent(3) + 1, "that is the slope of the survival function P(V > v) ~ v^(ρ+1), not of p.")]),
    _exercise("variance_depth0", "Linear regression (D = 0), k = σ = 1, no weight decay, T = 0.1: what is Var[v]?",
              variance_depth0(0.1, gaussian_problem(1.0, 1.0, 0.0)),
              "Var = T/(1 − 2T) for k = σ = 1 (linear drift, noise 4Tg(v)).", 0.1 / (1 - 2 * 0.1),
              [(0.1, "that is T alone: the variance also grows through the noise g(v), Var = T g(m)/(β₁ − Tα₁)."),
               (0.1 / (1 - 0.1), "check the denominator: β₁ − Tα₁ = 1 − 2T with α₁ = Var[x²] = 2.")]),
    _exercise("mode_depth1", "Depth 1, k = σ = 1, T = 0.05: what is the most likely value of v?",
              float(most_likely_roots_depth1(0.05, gaussian_problem(1.0, 1.0, 0.0))[-1]),
              "the positive root of 7α₁Tv² + (β₁ − 10α₂T)v − (β₂ − 3α₃T) = 0: 0.7v² + 0v − 0.55 = 0 → √(0.55/0.7).",
              math.sqrt(0.55 / 0.7),
              [(1.0, "that is the T → 0 limit β₂/β₁; at T = 0.05 the noise moves the most likely value."),
               (math.sqrt(0.85 / 0.7), "check the constant term: β₂ − 3α₃T = 1 − 3·3·0.05 = 0.55.")]),
)}
