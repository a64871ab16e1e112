"""The "Check yourself" exercises of Notebook 04 (one-way rank jumps).

Expected answers come from the package: the weight-decay law :func:`~.stepping.weight_decay_factor`, the basin
radius at the fit slope measured at the rank-1 minimum (:func:`~.experiments.basin_slope`), the trained minima's
losses. Each ``solution`` is the hand computation of the explanation, written out as a number, so that the test
that the checker accepts it can fail.
"""

from __future__ import annotations

import numpy as np

from ..core.exercises import Exercise, Feedback, as_number, number_exercise
from .analysis import basin_radius
from .experiments import EPSILON_EXPERIMENT as EXP
from .experiments import basin_slope, minima_losses
from .stepping import weight_decay_factor

__all__ = ["EXERCISES", "basin_radius_exercise", "better_minimum_exercise", "decay_factor_exercise"]


def decay_factor_exercise(lr: float = EXP.lr_hot, lam: float = EXP.lam_hot, steps: int = 1000,
                          solution: float = 8.069e-08) -> Exercise:
    """Exercise: by what factor has the unsampled row of W_L shrunk after ``steps`` forced steps?

    The expected value is the engine's law :func:`~.stepping.weight_decay_factor` (which
    :func:`~.checks.check_exact_decay` tests against forced runs); ``solution`` is the hand computation
    ``(1 − 2·0.3·0.027)^1000 = 0.9838^1000 = e^{1000·ln 0.9838} ≈ 8.069e-8`` at the defaults.
    """
    exact = weight_decay_factor(lr, lam, steps)
    return number_exercise(
        "decay_factor", f"Under forced sampling with η = {lr:g}, γ = {lam:g}: by what factor has the unsampled row "
        f"of W_L shrunk after t = {steps} steps?", exact,
        f"(1 − 2ηγ)^t = (1 − 2·{lr}·{lam})^{steps} = {exact:.4g}: each step multiplies the row by the weight-decay "
        "factor and adds nothing.", "the unsampled row gets no data gradient, only weight decay.",
        solution=solution, rel_tol=1e-3,
        mistakes=[((1 - lr * lam) ** steps,
                   "did you use 1 − ηγ? The loss has γ‖θ‖² without ½, so the factor is 1 − 2ηγ. The unsampled row "
                   "gets no data gradient, only weight decay.")])


def basin_radius_exercise(depth: int = EXP.depth, lam: float = EXP.lam_hot, slope: float | None = None,
                          solution: float = 0.5636) -> Exercise:
    """Exercise: the first-order basin radius α_c = (2γ/|g|)^{1/(L−2)} (relative tolerance 1e-2).

    ``slope`` defaults to the fit slope measured at the rank-1 minimum of the ε-completion
    (:func:`~.experiments.basin_slope`, ≈ 0.170; the question quotes it to 3 digits), so the question and the
    basin figure agree; ``solution`` is the hand computation with the quoted slope, ``(2·0.027/0.17)^{1/2}``.
    """
    slope = basin_slope(lam=lam, depth=depth) if slope is None else float(slope)
    exact = basin_radius(depth, lam, slope)
    return number_exercise(
        "basin_radius", f"With L = {depth}, γ = {lam:g} and fit slope |g| = {slope:.3g} along the new direction, what "
        "is the first-order basin radius α_c?", exact,
        f"α_c = (2·{lam}/{slope:.3g})^(1/{depth - 2}) = {exact:.4g}: the new mode obeys dα/dt ≈ −2γα + |g|α^(L−1), "
        "which changes sign there.", "set −2γα + |g|α^(L−1) = 0 and solve for α > 0.",
        solution=solution, rel_tol=1e-2)


def _check_one_way(answer) -> Feedback:
    """Exercise: can an SGD run that reached rank 1 (deep inside B_1) come back to rank 2 at the same settings?"""
    if isinstance(answer, np.bool_):
        answer = bool(answer)
    if isinstance(answer, str):
        answer = {"false": False, "no": False, "true": True, "yes": True}.get(answer.strip().lower(), answer)
    if answer is False:
        return Feedback("right", "B_1 is absorbing: every per-entry gradient lies in the rank-keeping directions "
                                 "(zero noise on rank-raising ones), and weight decay shrinks any new direction "
                                 "smaller than the basin radius.")
    if answer is True:
        return Feedback("wrong", "look at the ensemble again: the number of returns is exactly 0, and the noise "
                                 "spectrum shows why.")
    return Feedback("wrong", f"expected True or False, got {answer!r}.")


def better_minimum_exercise(eps: float = 0.1, lam: float = EXP.lam_cold, solution: int = 2) -> Exercise:
    """Exercise: which minimum (1 or 2, its rank) has the lower loss at ε and the cold γ?

    The checker compares the two trained minima (:func:`~.experiments.minima_losses`,
    cached; the first check at new ``(eps, lam)`` trains them, about 2 s). ``solution`` is the rank the
    annealing figure shows winning at these settings (2 at the notebook's ε = 0.1; 1 at ε = 0.2); the tests
    check that the checker agrees.
    """

    def check(answer) -> Feedback:
        x = as_number(answer)
        if x not in (1, 2):
            return Feedback("wrong", f"expected the rank of a minimum, 1 or 2; got {answer!r}.")
        m = minima_losses(eps, lam)
        best = 1 if (not np.isfinite(m["rank2"]) or m["rank1"] < m["rank2"]) else 2
        numbers = f"at ε = {eps}, γ = {lam}: rank-1 minimum {m['rank1']:.5f}, rank-2 minimum {m['rank2']:.5f}"
        why = (f"The only rank-1 completion needs the unobserved entry A₂₁ ≈ 1/ε = {1 / eps:.3g}, whose singular "
               "value costs γL·s^(2/L) in norm; the rank-2 completions keep every entry small. ")
        why += ("At this ε the rank-1 matrix is still cheap enough: low rank wins." if best == 1 else
                "At this small ε that large entry costs more than a second small singular value: the minimum-norm "
                "solution has rank 2.")
        return Feedback("right" if x == best else "wrong", f"{numbers}. {why}")

    return Exercise("better_minimum", f"At ε = {eps:g} and the cold γ = {lam:g}, which minimum has the lower loss — "
                    "rank 1 or rank 2? (Use the annealing figure with this ε if you like.)", check, "choice",
                    options=(("rank 1", 1), ("rank 2", 2)), solution=solution,
                    mistakes=((3 - solution, "the minimum-norm solution has rank 2" if solution == 2
                               else "low rank wins"),))


#: The exercises of §9, by name (shown by :class:`~symsgd_core.ui.exercises.ExercisePanel`).
EXERCISES = {ex.name: ex for ex in (
    decay_factor_exercise(),
    number_exercise("trap_depth", "What is the smallest depth L for which θ = 0 is a local minimum for every γ > 0?",
                    3, "for L ≥ 3 the data term starts at order a^L ≥ a³ near θ = 0, so the γLa² of weight decay "
                    "always wins; for L = 2 the data term −2y a² competes with 2γa².",
                    "compare the order of the data term (a^L) with that of γLa².", solution=3, rel_tol=0.0,
                    abs_tol=1e-9,
                    mistakes=[(2, "at L = 2 the loss near 0 is 1 + (2γ − 2)a² + …: θ = 0 is a saddle/maximum for "
                                  "γ < 1.")]),
    basin_radius_exercise(),
    Exercise("one_way", "An SGD run has jumped to rank 1 and sits at round-off in s₂. Keeping η and γ, can SGD's own "
             "noise bring it back to rank 2?", _check_one_way, "choice", options=(("yes", True), ("no", False)),
             solution=False, mistakes=((True, "the number of returns is exactly 0"),)),
    better_minimum_exercise(),
)}
