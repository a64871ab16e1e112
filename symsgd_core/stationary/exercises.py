"""The "Check yourself" exercises of Notebook 03 (SGD's stationary distribution, arXiv 2308.06671, Section 4).

Expected values come from the closed forms (:mod:`.laws`) and the SDE coefficients (:mod:`.sde`); each
``solution`` is the hand computation of the worked answer, and the typical mistakes say what a wrong value
reveals. Hints point the way without the number (a test checks that no hint contains its answer).
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..core.exercises import Exercise, exercises_by_name, number_exercise
from .experiments import gaussian_problem
from .laws import critical_temperature, most_likely_roots_depth1, tail_exponent

__all__ = ["EXERCISES", "EXERCISE_ITO"]


def _exercise(name: str, question: str, truth: float, why: str, hint: str, worked: str, solution: float,
              mistakes) -> Exercise:
    """A numeric exercise (relative tolerance 1e-3): ``why`` explains a right answer, ``hint`` (without the answer)
    follows a wrong one, ``worked`` is the derivation shown on request."""
    ex = number_exercise(name, question, truth, f"{truth:.4g}. ({why})", hint, solution=solution, rel_tol=1e-3,
                         mistakes=mistakes)
    return replace(ex, hint=hint, worked=worked)


#: Exercise 3: the depth-1 SDE of v from the (u, w) dynamics, at a point of the branch u = w.
EXERCISE_ITO = {"u": 1.0, "temperature": 0.1}


def _ito_drift() -> float:
    """The Itô term of dv at u = w: ``½ Tr[∇²v · T C]`` with ``C = 4g ∇v∇vᵀ`` — equals ``4T v g(v)``; returns
    its coefficient ``4`` computed from the matrices (so the expected value is not typed in by hand)."""
    import numpy as np

    u = w = EXERCISE_ITO["u"]
    T = EXERCISE_ITO["temperature"]
    g = 1.0  # any g: the coefficient is per T·v·g
    grad_v = np.array([w, u])
    hess_v = np.array([[0.0, 1.0], [1.0, 0.0]])
    C = 4.0 * g * np.outer(grad_v, grad_v)
    ito = 0.5 * np.trace(hess_v @ (T * C))
    return float(ito / (T * u * w * g))


#: What the code cell of each exercise in Notebook 03 asks for, as its comment says (``Exercise.code_prompt``).
_CODE_PROMPTS = {
    "critical_temperature": "the temperature above which the depth-1 net learns nothing",
    "tail_depth3": "the tail exponent ν of a depth-3 net",
    "depth1_ito_drift": "the coefficient c of the Itô drift c·T·v·g(v)",
    "mode_depth1": "the most likely v of the depth-1 net",
}

#: The exercises of §7, by name (shown by :class:`~symsgd_core.lesson.exercise_panel.ExercisePanel`). The expected
#: values come from :mod:`symsgd_core.stationary.laws`; each ``solution`` is the hand computation in the
#: worked answer, and the typical mistakes say what a wrong value reveals.
EXERCISES = exercises_by_name((
    # k = 1, σ = 0.5, γ = 0.1: not a setting printed in the notebook (its cells print T_c at γ = 0 and γ = 0.2)
    _exercise("critical_temperature",
              "k = 1, label noise σ = 0.5, weight decay γ = 0.1: above which T does the depth-1 net learn nothing?",
              critical_temperature(gaussian_problem(1.0, 0.5, 0.1)),
              "critical T = (β₂ − γ)/α₃ with β₂ = k = 1 and α₃ = 2k² + σ² = 2.25: (1 − 0.1)/2.25.",
              "Near v = 0 the law behaves like a power of v; find the temperature where that power stops being "
              "integrable, and remember that weight decay shifts one of the β's. Compute α₃ for this σ.",
              "Near $v = 0$ the depth-1 law is $p_+(v) \\propto v^{a}$ with $a = \\beta_2'/(2\\alpha_3T) - 3/2$ and "
              "$\\beta_2' = \\beta_2 - \\gamma$. It is normalisable iff $a > -1$, i.e. $T < T_c = \\beta_2'/\\alpha_3$ "
              "(equivalently: the drift of $\\log v$ near 0, $4(\\beta_2' - T\\alpha_3)$, is positive).\n\n"
              "For $x \\sim N(0, 1)$ and $y = kx$ plus noise: $\\beta_2 = \\mathbb E[xy] = k = 1$, "
              "$\\alpha_3 = \\mathrm{Var}[xy] = 2k^2 + \\sigma^2 = 2.25$. So $T_c = (1 - 0.1)/2.25 = 0.4$.",
              (1 - 0.1) / 2.25,
              [(critical_temperature(gaussian_problem(1.0, 0.5, 0.0)),
                "that is the critical T without weight decay: γ lowers the effective β₂ to β₂ − γ."),
               (critical_temperature(gaussian_problem(1.0, 0.5, 0.1)) / 3,
                "that is a third of the critical T, where the density starts to diverge at v = 0; learning stops only "
                "at the critical T."),
               ((1 - 0.1) / 3, "that uses α₃ = 3 of σ = 1; here α₃ = 2k² + σ² = 2.25.")]),
    _exercise("tail_depth3", "What is the tail exponent ν (p ~ v to the power ν) of a depth-3 diagonal net (L = 3)?",
              tail_exponent(3),
              "ν = −5 + 3/(L+1) = −5 + 3/4, whatever T is.",
              "For L ≥ 1 the large-v behaviour is set by the ratio of drift to diffusion, which are both powers of "
              "v; the temperature cancels. Use the general-depth formula of §5 with the right L.",
              "For depth $L \\ge 1$ the stationary law has the power-law tail $p(v) \\sim v^{-5 + 3/(L+1)}$, "
              "independent of $T$ (at large $v$ the drift and the squared diffusion are both powers of $v$ with "
              "$T$ only in a prefactor that drops out of the exponent).\n\n"
              "For $L = 3$: $\\nu = -5 + 3/4 = -4.25$. (At $L = 0$ the exponent would be $-2 - "
              "\\beta_1'/(\\alpha_1T)$ "
              "and would depend on $T$.)", -5 + 3 / 4,
              [(tail_exponent(1), "that is the depth-1 exponent −7/2; use L = 3."),
               (tail_exponent(3) + 1, "that is the slope of the survival function P(V > v) ~ v to the power ν + 1, "
                                      "not of p.")]),
    _exercise("depth1_ito_drift",
              "Depth 1, one pair (u, w) on the branch u = w > 0, v = uw. From dθ = −∇𝓛 dt + √(TC) dW with "
              "C = 4g(v)∇v∇vᵀ, Itô's lemma gives dv a drift term c·T·v·g(v) from the second derivative of v. "
              "What is c?",
              _ito_drift(),
              "½Tr[∇²v·TC] = ½·T·4g·∇vᵀ∇²v∇v, and ∇vᵀ∇²v∇v = 2uw = 2v: the Itô term is 4Tvg(v).",
              "Write the Hessian of v = uw in (u, w), then evaluate one half of the trace of Hessian times T·C "
              "using C's rank-one form; on the branch u = w express the result through v.",
              "Itô's lemma for $v(\\theta) = uw$: $dv = \\big(\\nabla v^\\top\\mu + \\tfrac12\\mathrm{Tr}[\\nabla^2 "
              "v\\,TC]\\big)dt "
              "+ \\nabla v^\\top\\sqrt{TC}\\,dW$ with $\\nabla v = (w, u)$ and $\\nabla^2 v = "
              "\\begin{pmatrix}0&1\\\\1&0"
              "\\end{pmatrix}$.\n\n"
              "Itô term: $\\tfrac12 T\\cdot 4g\\,\\nabla v^\\top\\nabla^2 v\\,\\nabla v = 2Tg\\cdot 2uw = 4T "
              "v\\,g(v)$, so "
              "$c = 4$.\n\n"
              "The rest of the depth-1 SDE follows the same way: the gradient drift is "
              "$-\\|\\nabla v\\|^2\\,\\partial\\mathcal L/\\partial v = -(u^2 + w^2)\\,2(\\beta_1 v - \\beta_2) = "
              "-4v(\\beta_1 v - \\beta_2)$ on $u = w$ (where $u^2 + w^2 = 2v$), and the noise has variance "
              "$T\\,\\nabla v^\\top C\\nabla v = 4Tg\\,(u^2+w^2)^2 = 16Tg\\,v^2$ per unit time, i.e. "
              "$4v\\sqrt{Tg(v)}\\,dW$. Together: the notebook's $dv = [-4v(\\beta_1 v - \\beta_2') + 4Tv\\,g(v)]dt + "
              "4v\\sqrt{Tg(v)}\\,dW$ — valid on the branch $u = w$, where the law of balance has put the pair.",
              4.0,
              [(8.0, "you dropped the ½ of Itô's lemma: the correction is ½Tr[∇²f·𝐃𝐃ᵀ]."),
               (2.0, "check ∇vᵀ∇²v∇v: with ∇v = (w, u) it is 2uw, not uw."),
               (0.0, "v = uw is not linear in θ: its Hessian is not zero, so Itô adds a drift.")]),
    _exercise("mode_depth1", "Depth 1, k = σ = 1, T = 0.05: what is the most likely value of v?",
              float(most_likely_roots_depth1(0.05, gaussian_problem(1.0, 1.0, 0.0))[-1]),
              "the positive root of 7α₁Tv² + (β₁ − 10α₂T)v − (β₂ − 3α₃T) = 0: 0.7v² + 0v − 0.55 = 0 → √(0.55/0.7).",
              "Set the derivative of log p₊ (Eq. 15) to zero; §2 gives the resulting quadratic. Insert the moments "
              "α = (2, 2, 3), β = (1, 1) and this T, then take its positive root.",
              "Setting $\\frac{d}{dv}\\log p_+ = 0$ for Eq. 15 gives the quadratic "
              "$7\\alpha_1Tv^2 + (\\beta_1 - 10\\alpha_2T)v - (\\beta_2' - 3\\alpha_3T) = 0$ (§2).\n\n"
              "With $\\alpha = (2, 2, 3)$, $\\beta = (1, 1)$, $\\gamma = 0$, $T = 0.05$: $7\\cdot2\\cdot0.05 = 0.7$, "
              "$1 - 10\\cdot2\\cdot0.05 = 0$, $1 - 3\\cdot3\\cdot0.05 = 0.55$: $0.7v^2 = 0.55$, "
              "$v = \\sqrt{0.55/0.7} = 0.8864$ — below the $T \\to 0$ limit $\\beta_2/\\beta_1 = 1$: noise pulls the "
              "mode towards 0.",
              math.sqrt(0.55 / 0.7),
              [(1.0, "that is the T → 0 limit β₂/β₁; at T = 0.05 the noise moves the most likely value."),
               (math.sqrt(0.85 / 0.7), "check the constant term: β₂ − 3α₃T = 1 − 3·3·0.05 = 0.55.")]),
), _CODE_PROMPTS)
