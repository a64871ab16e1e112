"""The "Check yourself" exercises of Notebook 04 (one-way rank jumps).

Expected answers come from the package: the weight-decay law :func:`~.stepping.weight_decay_factor`, the basin
radius at the fit slope measured at the rank-1 minimum (:func:`~.experiments.basin_slope`), the origin's threshold
at L = 2 (:func:`~.analysis.origin_threshold`), the explosion of the reply (:func:`~.analysis.explosion_distances`),
the minimum-norm completion (:func:`~.analysis.min_norm_completion`) and the trap experiment
(:func:`~.experiments.trap`). Each ``solution`` is the hand computation of the worked solution, written out as a
number, so that the test that the checker accepts it can fail. Every exercise has a ``worked`` solution (the
derivation) and a ``hint`` that points the way without the answer.

:data:`EXERCISES` holds them all, in the notebook's order; :data:`PREDICT` names the ones the notebook asks
*before* a figure is run (predict, then run), :data:`SECTION_9` the rest (the §8 panel).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ..core.exercises import Exercise, Feedback, as_number, exercises_by_name, number_exercise
from ..dln import epsilon_completion, weight_decay_factor
from .analysis import basin_radius, min_norm_completion, origin_fit_gradient, origin_threshold
from .experiments import BASIN_SLOPE, basin_slope, trap
from .experiments import EPSILON_EXPERIMENT as EXP

__all__ = ["EXERCISES", "PREDICT", "SECTION_9", "basin_radius_exercise", "better_minimum_exercise",
           "decay_factor_exercise", "explosion_exercise", "origin_threshold_exercise", "predict_sgd_end_exercise"]


def _with(ex: Exercise, worked: str, hint: str) -> Exercise:
    return dataclasses.replace(ex, worked=worked, hint=hint)


def decay_factor_exercise(lr: float = EXP.lr_hot, weight_decay: float = EXP.weight_decay_hot, steps: int = 1000,
                          solution: float = 8.069e-08) -> Exercise:
    """Exercise: by what factor has the unsampled row of W_L shrunk after ``steps`` forced steps?

    The expected value is the engine's law :func:`~.stepping.weight_decay_factor` (which
    :func:`~.checks.check_exact_decay` tests against forced runs); ``solution`` is the hand computation
    ``(1 − 2·0.3·0.027)^1000 = 0.9838^1000 = e^{1000·ln 0.9838} ≈ 8.069e-8`` at the defaults.
    """
    exact = weight_decay_factor(lr, weight_decay, steps)
    ex = number_exercise(
        "decay_factor",
        f"Under forced sampling with η = {lr:g}, γ = {weight_decay:g}: by what factor has the unsampled row "
        f"of the last layer shrunk after t = {steps} steps?", exact,
        f"(1 − 2ηγ)ᵗ = (1 − 2·{lr}·{weight_decay}) to the power {steps} = {exact:.4g}: each step multiplies the row "
        "by the "
        "weight-decay "
        "factor and adds nothing.", "the unsampled row gets no data gradient, only weight decay.",
        solution=solution, rel_tol=1e-3,
        mistakes=[((1 - lr * weight_decay) ** steps,
                   "did you use 1 − ηγ? The loss has γ‖θ‖² without ½, so the factor is 1 − 2ηγ. The unsampled row "
                   "gets no data gradient, only weight decay.")])
    worked = (
        "One SGD step on the sampled entry $(i, j)$ updates the last layer as\n"
        "$W_L \\leftarrow (1-2\\eta\\gamma)W_L - 2\\eta\\,(A_{ij}-A^*_{ij})\\,e_i\\,P_L[:,j]^\\top$, because "
        "$Q_L = I$: the data term touches **only row $i$**. Under forced sampling $i = 0$ always, so row 1 is only "
        "multiplied by $1-2\\eta\\gamma$ (the factor 2 because the loss has $\\gamma\\|\\theta\\|^2$ without ½). After "
        f"$t$ steps: $(1-2\\eta\\gamma)^t = (1 - 2\\cdot{lr}\\cdot{weight_decay})^{{{steps}}} = "
        f"{1 - 2 * lr * weight_decay:.4f}^{{{steps}}} = "
        f"e^{{{steps}\\,\\ln {1 - 2 * lr * weight_decay:.4f}}} \\approx {exact:.4g}$.")
    hint = ("Write out one SGD step for the last layer: which rows does the data term change when the sampled "
            "entry lies in row 0? What is left for the other row, step after step?")
    return _with(ex, worked, hint)


def _trap_depth_exercise() -> Exercise:
    ex = number_exercise(
        "trap_depth", "What is the smallest depth L for which θ = 0 is a local minimum for every γ > 0?",
        3, "for L ≥ 3 the data term starts at order aᴸ ≥ a³ near θ = 0, so the γLa² of weight decay "
        "always wins; for L = 2 the data term −2y a² competes with 2γa².",
        "compare the order of the data term (aᴸ) with that of γLa².", solution=3, rel_tol=0.0, abs_tol=1e-9,
        mistakes=[(2, "at L = 2 the loss near 0 is 1 + (2γ − 2)a² + …: θ = 0 is a saddle/maximum for "
                      "γ < 1.")])
    worked = (
        "Along any direction, $A_\\theta = W_L\\cdots W_1$ is a product of $L$ factors, so near $\\theta = 0$ the "
        "unregularised loss is $\\mathcal L(\\theta) = \\mathcal L(0) + \\langle\\nabla_A\\mathcal L(0), "
        "A_\\theta\\rangle + O(\\|\\theta\\|^{2L})$ with $A_\\theta = O(\\|\\theta\\|^L)$: its first $L-1$ derivatives "
        "vanish at 0 (the authors' reply). The weight decay adds $\\gamma\\|\\theta\\|^2$, of order 2. For $L \\ge 3$ "
        "the order-2 term $\\gamma\\|\\theta\\|^2 > 0$ wins near 0 for every $\\gamma > 0$: a local minimum (a "
        "rank-underestimating one). For $L = 2$ the data term is itself of order 2 and can win (next exercise). "
        "On the scalar chain $\\theta = a(1, 1)$ with target 1: $(a^2-1)^2 + 2\\gamma a^2 = 1 + (2\\gamma - 2)a^2 + "
        "\\dots$, a minimum only for $\\gamma > 1$. Smallest depth: $L = 3$.")
    hint = "Near θ = 0, of which order in ‖θ‖ is the data term's first non-constant contribution, and of which order "\
           "is the weight decay?"
    return _with(ex, worked, hint)


def origin_threshold_exercise(eps: float = EXP.eps, solution: float = 0.3683) -> Exercise:
    """Exercise: at L = 2, below which γ is θ = 0 no longer a local minimum of the ε-completion? (γ_c = s_max(G)/2.)

    ``solution``: the hand computation ``G = −(2/3)[[1, ε], [0, 1]]``, ``s_max(G) = (2/3)·s_max([[1, 0.2], [0, 1]])
    = (2/3)·1.105 = 0.7367``, ``γ_c = 0.3683``.
    """
    problem = epsilon_completion(eps)
    exact = origin_threshold(problem)
    s_obs = float(np.linalg.norm(problem.target * problem.mask, 2))
    ex = number_exercise(
        "origin_threshold", f"Depth L = 2, the ε-completion with ε = {eps:g}: θ = 0 is a local minimum of 𝓛ᵧ only "
        "when γ exceeds a threshold, the critical γ. What is the critical γ?", exact,
        f"critical γ = sₘₐₓ(G)/2 with G = ∂𝓛/∂A at θ = 0, so critical γ = {exact:.4g}: the Hessian at 0 has smallest "
        "eigenvalue 2γ − sₘₐₓ(G).",
        "expand 𝓛ᵧ to second order at θ = 0 for A = W₂W₁.", solution=solution, rel_tol=2e-3,
        mistakes=[(s_obs / 2, "the gradient of the fit in A is (2/N)(A − A*) on the observed entries: you left out "
                              "the factor 2/N"),
                  (2 * exact, "the condition is 2γ > sₘₐₓ(G) (G = ∂𝓛/∂A at θ = 0): divide by 2")])
    G = origin_fit_gradient(problem)
    worked = (
        "For $L = 2$, $A = W_2W_1$ and near $\\theta = 0$: $\\mathcal L_\\gamma(\\theta) = \\mathcal L(0) "
        "+ \\langle G, W_2W_1\\rangle + \\gamma(\\|W_1\\|^2 + \\|W_2\\|^2) + O(\\|\\theta\\|^4)$ "
        "with $G = \\nabla_A\\mathcal L(0) = \\tfrac{2}{N}(0 - A^*)\\odot\\text{mask}$. "
        "The bilinear form $\\langle G, W_2W_1\\rangle$ has Hessian "
        "eigenvalues $\\pm s_k(G)$ (take $W_1 = a\\,e\\,v_k^\\top$, $W_2 = \\mp a\\,u_k e^\\top$), so the Hessian of "
        "$\\mathcal L_\\gamma$ at 0 has smallest eigenvalue $2\\gamma - s_{\\max}(G)$: **θ = 0 is a minimum iff "
        "$2\\gamma > s_{\\max}(G)$**. Here $N = 3$ and $G = -\\tfrac23\\begin{pmatrix}1 & \\varepsilon\\\\ 0 & 1"
        f"\\end{{pmatrix}}$, $s_{{\\max}}(G) = {np.linalg.norm(G, 2):.4f}$, so $\\gamma_c = {exact:.4f}$. Below it "
        "the origin is a saddle: at $L = 2$ weight decay must be large to make a trap — for $L \\ge 3$ any "
        "$\\gamma > 0$ does. (§1's panel (c) shows the $1\\times1$-chain toy with target 1, where $\\gamma_c = 1$.)")
    hint = ("Expand the loss to second order at θ = 0 for A = W₂W₁: the data term is a bilinear form in (W₁, W₂). "
            "Which eigenvalues does its Hessian have, and when does the weight decay's 2γ beat the most negative?")
    return _with(ex, worked, hint)


def explosion_exercise(depth: int = EXP.depth, i: int = 16, solution: float = 1.0) -> Exercise:
    """Exercise: the reply's explosion, ``‖θ_i − θ̂‖² = L·i^{−2/L}`` (4·16^{−1/2} = 1 at the defaults)."""
    exact = depth * i ** (-2.0 / depth)
    ex = number_exercise(
        "explosion", f"A balanced depth-{depth} network θ̂ computes a rank-1 matrix Â. A balanced θᵢ computes "
        f"Aᵢ = Â + u vᵀ/i (u, v unit vectors orthogonal to Â's singular vectors) and agrees with θ̂ on Â's "
        f"direction. For i = {i}: what is ‖θᵢ − θ̂‖²?", exact,
        f"L·i⁻²ᐟᴸ = {depth} × {i ** (-2.0 / depth):.4g} = {exact:.4g}: each layer gains i⁻¹ᐟᴸ uₗvₗᵀ, costing i⁻²ᐟᴸ, "
        f"while A moves only by 1/i = {1 / i:.3g}.", "every layer carries the L-th root of the new singular value.",
        solution=solution, rel_tol=1e-3,
        mistakes=[(i ** (-2.0 / depth), "that is one layer's share (the value the reply prints): all L layers gain "
                                            "the new direction"),
                  (1.0 / i ** 2, "that is ‖Aᵢ − Â‖², the change of A, not of the parameters"),
                  (depth / i ** 2, "the parameters do not move like A: each layer carries the L-th root")])
    worked = (
        "In a balanced factorisation each layer carries the $L$-th root of every singular value of $A$: "
        "$W_\\ell = U_{\\ell+1}\\Sigma^{1/L}U_\\ell^\\top$. The new singular value $1/i$ of $A_i$ therefore appears in "
        "every layer as $(1/i)^{1/L}$ along new unit vectors orthogonal to the old ones, so "
        "$\\|W_\\ell^{(i)} - \\hat W_\\ell\\|_F^2 = i^{-2/L}$ per layer and $\\|\\theta_i - \\hat\\theta\\|^2 = "
        f"L\\,i^{{-2/L}} = {depth}\\cdot{i}^{{-2/{depth}}} = {exact:.4g}$ — while $\\|A_i - \\hat A\\|_F = 1/i = "
        f"{1 / i:.4g}$. As $i\\to\\infty$ the ratio $\\|\\theta_i-\\hat\\theta\\| / \\|A_i - \\hat A\\| = \\sqrt L\\,"
        "i^{1-1/L}$ explodes: approaching a rank-$r$ point from a higher-rank direction costs a parameter "
        "distance far larger than the distance in $A$ (the reply's answer; the reply prints $i^{-2/L}$, one layer's "
        "share, and drops the factor $L$; the appendix checks this construction).")
    hint = ("In a balanced factorisation, how does a singular value s of A show up in each of the L layers? Apply "
            "that to the new singular value of Aᵢ and add up over the layers.")
    return _with(ex, worked, hint)


def basin_radius_exercise(depth: int = EXP.depth, weight_decay: float = EXP.weight_decay_hot,
                          slope: float | None = None, solution: float = 0.5636, name: str = "basin_radius") -> Exercise:
    """Exercise: the first-order basin radius a_c = (2γ/|g|)^{1/(L−2)} (relative tolerance 1e-2).

    ``slope`` defaults to the fit slope measured at the rank-1 minimum of the ε-completion
    (:func:`~.experiments.basin_slope`, :data:`~.experiments.BASIN_SLOPE` ≈ 0.170 at the experiment's γ; the
    question quotes it to 3 digits), so the question and the
    basin figure agree; ``solution`` is the hand computation with the quoted slope, ``(2·0.027/0.17)^{1/2}``.
    """
    measured = slope is None
    if slope is None:  # measured at the rank-1 minimum (stored once for the experiment's γ: BASIN_SLOPE)
        slope = BASIN_SLOPE if weight_decay == EXP.weight_decay_hot else basin_slope(weight_decay=weight_decay)
    slope = float(slope)
    exact = basin_radius(depth, weight_decay, slope)
    quoted = float(f"{slope:.3g}")  # the slope the question prints; the texts compute with it, as the reader does
    by_hand = basin_radius(depth, weight_decay, quoted)
    suppose = " (suppose the fit slope stays the same)" if measured and depth != EXP.depth else ""
    ex = number_exercise(
        name,
        f"With L = {depth}, γ = {weight_decay:g} and fit slope |g| = {slope:.3g} along the new direction{suppose}, "
        "what is the first-order basin radius?", exact,
        f"the radius is (2γ/|g|)¹ᐟ⁽ᴸ⁻²⁾ = (2·{weight_decay}/{quoted:g}) to the power 1/{depth - 2} = {by_hand:.4g}: "
        "the new mode obeys da/dt ≈ −2γa + |g|aᴸ⁻¹, "
        "which changes sign there.", "set −2γa + |g|aᴸ⁻¹ = 0 and solve for a > 0.",
        solution=solution, rel_tol=1e-2,
        mistakes=[((2 * weight_decay / slope) ** (1.0 / depth), "the exponent is 1/(L − 2), not 1/L: da/dt ≈ −2γa + "
                                                         "|g|aᴸ⁻¹"),
                  ((weight_decay / slope) ** (1.0 / (depth - 2)),
                   "the weight decay γ‖θ‖² has gradient 2γθ: keep the 2")])
    worked = (
        "Push every layer by $a$ along a new direction: $W_\\ell + a\\,x_{\\ell+1}x_\\ell^\\top$, so the new "
        "singular value of $A$ is $a^L$. Along this balanced path the loss changes by "
        "$\\Delta(a) = -|g|\\,a^L + \\gamma L a^2 + O(a^{2L})$ (fit gained at slope $|g|$, penalty of $L$ layers). "
        "Gradient descent on one layer's $a$ (each layer sees $\\partial\\Delta/\\partial a$ divided by $L$) gives "
        "$\\dot a \\approx -2\\gamma a + |g|\\,a^{L-1}$, which changes sign at $a_c = (2\\gamma/|g|)^{1/(L-2)}$. "
        f"Here $a_c = (2\\cdot{weight_decay}/{quoted:g})^{{1/{depth - 2}}} = {by_hand:.4g}$. "
        "Smaller pushes are pulled back "
        "(weight decay wins), larger ones grow (the fit wins). (This estimate is **this project's construction**, "
        "first order in the fit; §4 measures the edge.)")
    hint = "Write the rate of change of one layer's push a: weight decay pulls with −2γa; what does the fit add, "\
           "and with which power of a? Then find where the two balance."
    return _with(ex, worked, hint)


def _check_one_way(answer) -> Feedback:
    """Exercise: can an SGD run that reached rank 1 (deep inside B_1) come back to rank 2 at the same settings?"""
    if isinstance(answer, np.bool_):
        answer = bool(answer)
    if isinstance(answer, str):
        answer = {"false": False, "no": False, "true": True, "yes": True}.get(answer.strip().lower(), answer)
    if answer is False:
        return Feedback("right", "B₁ is absorbing: every per-entry gradient lies in the rank-keeping directions "
                                 "(zero noise on rank-raising ones), and weight decay shrinks any new direction "
                                 "smaller than the basin radius.")
    if answer is True:
        return Feedback("wrong", "look at the ensemble's title (returns to a higher rank) and at the noise spectrum of "
                                 "§5 on the rank-raising directions.")
    return Feedback("wrong", f"expected True or False, got {answer!r}.")


def _one_way_exercise() -> Exercise:
    ex = Exercise("one_way", "An SGD run has jumped to rank 1 and sits at round-off in s₂. Keeping η and γ, can SGD's "
                  "own noise bring it back to rank 2?", _check_one_way, "choice",
                  options=(("yes", True), ("no", False)),
                  solution=False, mistakes=((True, "noise spectrum of §5"),))
    worked = (
        "No. At a point of $B_1$ every layer has (up to round-off) one active direction. A per-entry gradient of "
        "layer $\\ell$ is $Q_\\ell[i,:]^\\top P_\\ell[:,j]^\\top$ times a residual: its rank-raising block "
        "$U_\\perp^\\top(\\cdot)V_\\perp$ needs the *other* layers' second directions, which are zero. So SGD's noise "
        "covariance has **no variance on the rank-raising directions** (§5, `check_raising_noise`), and near $B_1$ "
        "that variance grows only like $a^{2(L-1)}$ with the distance $a$ (§5). Meanwhile weight decay shrinks any "
        "second direction smaller than $a_c$ (§4). Nothing creates the direction; weight decay removes what is "
        "left: $B_1$ is absorbing — for GD as well, the reply says; only the jumps need SGD.")
    hint = ("Which components can a single-entry gradient have at a point where every layer has only one active "
            "direction? Compare with the basin radius of §4.")
    return _with(ex, worked, hint)


def better_minimum_exercise(eps: float = 0.25, solution: int = 2) -> Exercise:
    """Exercise: as γ_cold → 0, which minimum (1 or 2, its rank) has the lower regularised loss at ε?

    As γ → 0 the minima of 𝓛_γ approach exact completions and ``𝓛_γ/γ`` tends to their induced penalty
    ``L Σ s_k^{2/L}``, so the answer is the rank of the minimum-norm completion
    (:func:`~.analysis.min_norm_completion`). ``solution`` is the hand comparison of the worked solution: at
    ε = 0.25 the rank-1 completion costs ``4·(2 + ε² + ε⁻²)^{1/4} = 8.246`` and the rank-2 completion
    ``[[1, ε], [0, 1]]`` already only ``8.016``, so rank 2 (the notebook's ε = 0.2 gives 2 as well; ε = 0.3 gives 1).
    """
    depth = EXP.depth

    def check(answer) -> Feedback:
        x = as_number(answer)
        if x not in (1, 2):
            return Feedback("wrong", f"expected the rank of a minimum, 1 or 2; got {answer!r}.")
        m = min_norm_completion(eps, depth)
        best = m["rank"]
        r2 = (f"the best rank-2 completion (A₂₁ = {m['x_rank2']:.3g}) costs L Σ sₖ²ᐟᴸ = {m['penalty_rank2']:.4g}"
              if np.isfinite(m["penalty_rank2"]) else "no rank-2 completion is a local minimum of the penalty")
        if x != best:  # a wrong pick gets the way to the answer, not the answer
            return Feedback("wrong", "not at this ε. As γ → 0, 𝓛ᵧ/γ tends to the induced penalty L Σ sₖ²ᐟᴸ of "
                                     "the completion each minimum approaches: compare the rank-1 completion "
                                     "(A₂₁ = 1/ε) with a rank-2 completion such as A₂₁ = 0.")
        numbers = (f"as γ → 0, 𝓛ᵧ/γ tends to the minimum-norm penalty L Σ sₖ²ᐟᴸ of the completion each minimum "
                   f"approaches. At ε = {eps:g}: the rank-1 completion (A₂₁ = 1/ε = {m['x_rank1']:.3g}) costs "
                   f"{m['penalty_rank1']:.4g}; {r2}.")
        why = (" The minimum-norm completion has rank 1 here: low rank wins." if best == 1 else
               " The minimum-norm completion has rank 2: the large entry 1/ε of the rank-1 completion costs more "
               "than a second small singular value, so a jump to rank 1 would cost loss at small γ.")
        return Feedback("right", numbers + why)

    ex = Exercise("better_minimum", f"As the cold weight decay γ → 0, which minimum of the ε-completion (ε = {eps:g}, "
                  f"L = {depth}) ends up with the lower regularised loss 𝓛ᵧ — rank 1 or rank 2? (At γ = 0.01 and "
                  "ε = 0.2 the figure of §6 shows rank 1 lower.)", check, "choice",
                  options=(("rank 1", 1), ("rank 2", 2)), solution=solution,
                  mistakes=((3 - solution, "not at this ε"),))
    worked = (
        "As $\\gamma\\to0$ a minimum of $\\mathcal L_\\gamma$ fits the observed entries ever better, and "
        "$\\mathcal L_\\gamma/\\gamma \\to \\min\\|\\theta\\|^2 = L\\sum_k s_k(A)^{2/L}$ of the completion it "
        "approaches "
        "(the induced penalty). So compare penalties of exact completions $\\begin{pmatrix}1&\\varepsilon\\\\ x & 1"
        "\\end{pmatrix}$. Rank 1 forces $x = 1/\\varepsilon$, one singular value $s = \\|A\\|_F = \\sqrt{2 + "
        "\\varepsilon^2 + \\varepsilon^{-2}}$, penalty $L s^{2/L}$: at $\\varepsilon = 0.25$, $4\\cdot18.06^{1/4} = "
        "8.246$. Any rank-2 completion with a smaller penalty settles it; take $x = 0$: $\\det = 1$, "
        "$s_1^2 + s_2^2 = 2 + \\varepsilon^2$, so $s_1 + s_2 = \\sqrt{4 + \\varepsilon^2}$, "
        "$s_1 - s_2 = \\varepsilon$, "
        "$s = (1.133, 0.883)$ and $4(\\sqrt{1.133} + \\sqrt{0.883}) = 8.016 < 8.246$. **Rank 2** wins as "
        "$\\gamma\\to0$ (the best rank-2 completion, $x\\approx0.84$, costs 7.86). This is the authors' point that "
        "min-norm ≠ min-rank at small $\\varepsilon$; at $\\gamma = 0.01$ and $\\varepsilon = 0.2$ the fit terms still "
        "matter and rank 1 is lower — a statement about that $\\gamma$, not about norms.")
    hint = ("As γ → 0 the loss of a minimum divided by γ tends to the parameter norm of the completion it "
            "approaches. Compare the penalty L Σ sₖ²ᐟᴸ of the only low-rank completion with that of one "
            "convenient completion with the unobserved entry set to zero.")
    return _with(ex, worked, hint)


@functools.lru_cache(maxsize=4)
def _trap_majority(eps: float, weight_decay: float, lr: float) -> tuple[int, str]:
    """The most common final rank of the SGD runs of :func:`~.experiments.trap` at these settings, and a summary."""
    r = trap(eps=eps, weight_decay=weight_decay, lr=lr)
    ranks = r.sgd.final_rank
    values, counts = np.unique(ranks, return_counts=True)
    return int(values[np.argmax(counts)]), r.sgd.summary()


def predict_sgd_end_exercise(eps: float = EXP.eps, weight_decay: float = EXP.weight_decay_hot, lr: float = EXP.lr_hot,
                             solution: int = 1) -> Exercise:
    """Predict, then run: where do most SGD runs from GD's rank-2 minimum end after the trap figure's budget?

    The checker runs :func:`~.experiments.trap` at the defaults (once, cached) and compares with the most common
    final rank. ``solution`` is the prediction of the theory at the notebook's settings (rank 1: jumps down, never
    back; η small enough not to collapse to A = 0).
    """
    options = (("rank 2: stays, like GD", 2), ("rank 1: jumps down", 1), ("rank 0: collapses to A = 0", 0))

    def check(answer) -> Feedback:
        x = as_number(answer)
        if x not in (0, 1, 2):
            return Feedback("wrong", f"expected a rank, 0, 1 or 2; got {answer!r}.")
        best, summary = _trap_majority(eps, weight_decay, lr)
        verdict = ("right" if x == best else "wrong")
        if verdict == "wrong":  # why this pick is wrong, without naming the right one
            why = {2: "GD does stay there, but SGD samples one entry at a time: what does a long stretch of samples "
                      "from one row do to the other row of the last layer (§3), and how long does one wait for it "
                      "(§2)?",
                   1: "not at these settings: look at what the runs do in the figure of §0 and at §7.",
                   0: "collapse to A = 0 needs more noise than these settings give (§7 shows when it happens)."}
            return Feedback("wrong", why[int(x)])
        why = {2: "at these settings the runs stay at rank 2 within the budget.",
               1: "most runs jump to rank 1 within the budget and none comes back: one-way jumps.",
               0: "at these settings the noise kicks the runs into θ = 0's basin (§7)."}
        return Feedback("right", f"The runs: {summary}. " + why[best])

    ex = Exercise("predict_sgd_end", f"Predict before you look at the figure: from GD's rank-2 minimum (ε = {eps:g}, "
                  f"η = {lr:g}, γ = {weight_decay:g}, {EXP.hot_steps} steps), where do most SGD runs end?", check,
                  "choice", options=options, solution=solution,
                  mistakes=((2, "samples one entry at a time"), (0, "needs more noise")))
    worked = (
        "Theory first. GD converged to a rank-2 minimum (a rank-overestimating one, since $A^*$ has rank 1) and "
        "stays: $B_2$ is absorbing and GD has no noise. SGD with one entry per step (Theorem, the paper) enters "
        "$B_1$ with positive probability: a long enough stretch of samples from one row lets weight decay shrink "
        "the other row of $W_L$ by $(1-2\\eta\\gamma)^t$ (§3), and $B_1$ is absorbing. The waiting time is "
        "roughly exponential with mean of order $2\\cdot10^4$ steps here (§2), so within $6\\cdot10^4$ steps most "
        "runs have jumped: **rank 1**. Collapse to $A = 0$ needs a larger $\\eta$ (§7).")
    hint = ("GD stays where it converged. Which event in the sampling of entries lets weight decay erase a "
            "direction, how long does one wait for it here (§2 measures it), and can the run come back?")
    return _with(ex, worked, hint)


#: The exercises of Notebook 04, by name, in the notebook's order (shown by
#: :class:`~symsgd_core.lesson.exercise_panel.ExercisePanel`).
EXERCISES = exercises_by_name((
    predict_sgd_end_exercise(),
    decay_factor_exercise(),
    _trap_depth_exercise(),
    origin_threshold_exercise(),
    explosion_exercise(),
    basin_radius_exercise(),
    basin_radius_exercise(depth=6, solution=0.7507, name="basin_radius_depth"),
    _one_way_exercise(),
    better_minimum_exercise(),
), {  # what the code cell of each exercise of the §8 panel asks for, as its comment says (Exercise.code_prompt)
    "decay_factor": "the decay factor of the unsampled row",
    "trap_depth": "the smallest depth L",
    "origin_threshold": "the L = 2 critical γ",
    "explosion": "‖θᵢ − θ̂‖² for i = 16",
    "basin_radius_depth": "the basin radius at L = 6",
    "one_way": "True or False",
    "better_minimum": "1 or 2, the rank of the lower-loss minimum as γ → 0",
})

#: Asked before a figure runs (predict, then run): the exercise name → the section that asks it.
PREDICT = {"predict_sgd_end": "§0", "basin_radius": "§4"}

#: The names shown in §8's panel (all but the predict-then-run ones).
SECTION_9 = tuple(name for name in EXERCISES if name not in PREDICT)
