"""The "Check yourself" exercises of Notebook 05 (SGD's own SDE and the jump event).

Expected answers come from the package's formulas (:func:`~.jump_event.run_waiting_time`,
:func:`~.sde.sde_noise_scale`); each ``solution`` is the hand computation of the worked answer, written out as a
number, so the test that the checker accepts it can fail.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.exercises import Exercise, Feedback, exercises_by_name
from ..core.exercises import number_exercise as _number_exercise
from ..dln import sde_noise_scale
from .jump_event import run_waiting_time

__all__ = ["EXERCISES", "noise_scale_exercise", "sign_exercise", "waiting_time_exercise"]


def waiting_time_exercise(k: int = 18, p: float = 2 / 3, solution: float = 4431.0) -> Exercise:
    """Exercise: the mean wait for a run of k = 18 row-0 samples (p = 2/3), ``E_k = (1 − p^k)/((1 − p) p^k)``.

    ``solution``: ``(1 − (2/3)^18) / ((1/3)(2/3)^18) = 3·(1.5^18 − 1) = 3·1476.9 ≈ 4431`` (1 % tolerance).
    """
    exact = run_waiting_time(k, p)
    ex = _number_exercise(
        "run_waiting_time", f"At the hot point the row-0 route needs k* = {k} consecutive row-0 samples, each with "
        f"probability p = 2/3. How many SGD steps does one wait on average for the first such run?", exact,
        f"Eₖ = (1 − pᵏ)/((1 − p)pᵏ) = {exact:.4g} steps: a run of k − 1 is reached, then one more step either "
        "completes it or restarts the count.", "one step after a run of k − 1 either completes the run or restarts it.",
        solution=solution, rel_tol=1e-2,
        mistakes=[(p ** -k, "that is 1/pᵏ, one over the chance of one given block of k; but every failed step "
                             "throws the partial run away, and the time spent building it counts too")])
    return replace(ex, hint="Write Eₖ for the mean wait of a run of k. To get a run of k you first need a run of "
                            "k − 1 (Eₖ₋₁ steps on average); then one more step succeeds with probability p or sends "
                            "you back to the start. Solve the recursion with E₀ = 0.",
                   worked=r"Let $E_k$ be the mean number of steps until the first run of $k$ successes. A run of $k$ "
                          r"needs a run of $k-1$ first; then one more step succeeds (probability $p$) or fails and the "
                          r"wait starts again: $E_k = E_{k-1} + 1 + (1-p)E_k$, so $E_k = (E_{k-1}+1)/p$ and, with "
                          r"$E_0=0$, $E_k = \frac{1-p^k}{(1-p)\,p^k}$. With $p=2/3$, $k=18$: "
                          r"$E_{18} = 3\,(1.5^{18}-1) \approx 3\,(1477.9-1) \approx 4.43\cdot10^{3}$ steps. "
                          r"(Either route, row 0 or column 1, halves it roughly: $2.2\cdot10^3$.)")


def noise_scale_exercise(lr: float = 0.3, m: int = 16, n_observed: int = 3, solution: float = 0.04330) -> Exercise:
    """Exercise: the EM noise factor ``sqrt(T dt / N)`` at η = 0.3 (batch 1), dt = η/16, N = 3.

    ``solution``: ``sqrt(0.3 · 0.01875 / 3) = sqrt(0.001875) ≈ 0.04330``.
    """
    dt = lr / m
    exact = sde_noise_scale(lr, dt, n_observed)
    ex = _number_exercise(
        "sde_noise_scale", f"One Euler–Maruyama step of SGD's SDE is θ ← θ − dt∇𝓛ᵧ + c Σₖ (gₖ − ḡ)ξₖ. With η = "
        f"{lr:g}, batch 1, N = {n_observed} observed entries and dt = η/{m}, what is c?", exact,
        f"c = sqrt(T dt / N) = sqrt({lr:g}·{dt:g}/{n_observed}) = {exact:.4g}, so the increment has covariance "
        "T dt C with C = (1/N)Σₖ (gₖ − ḡ)(gₖ − ḡ)ᵀ.", "the increment must have covariance T·dt·C.",
        solution=solution, rel_tol=1e-3,
        mistakes=[((lr * dt) ** 0.5, "that is sqrt(T dt): C has a 1/N, so Σₖ (gₖ − ḡ)ξₖ needs the factor "
                                     "sqrt(1/N) too")])
    return replace(ex, hint="Compute the covariance of Σₖ (gₖ − ḡ)ξₖ with independent standard normals ξₖ and "
                            "compare it with T·dt·C, where C = (1/N)Σₖ (gₖ − ḡ)(gₖ − ḡ)ᵀ and T = η/S.",
                   worked=r"With independent $\xi_k\sim N(0,1)$, $\mathrm{Cov}\big(\sum_k (g_k-\bar g)\xi_k\big) = "
                          r"\sum_k (g_k-\bar g)(g_k-\bar g)^\top = N\,C$. The SDE needs $T\,dt\,C$ per step, so "
                          r"$c^2 N = T\,dt$, $c = \sqrt{T\,dt/N}$. Here $T=\eta/S=0.3$, $dt=0.3/16=0.01875$, $N=3$: "
                          r"$c=\sqrt{0.3\cdot0.01875/3}=\sqrt{0.001875}\approx0.0433$. No $P\times P$ matrix is "
                          r"ever formed: the $N$ gradients are the square root of $C$.")


def _check_sign(answer) -> Feedback:
    if not isinstance(answer, str):  # an array or object compared with == would not give one verdict
        return Feedback("wrong", f"pick one of the options; got {answer!r:.60}.")
    if answer == "nonnegative":
        return Feedback("right", "every SGD step descends on the entries it samples: its entry weights η nₖ/S are "
                                 "≥ 0. Any law with those bounds and SGD's mean and covariance is SGD's one-hot "
                                 "sampling "
                                 "itself, so the Gaussian (and the ±1 surrogate) must put negative weight, gradient "
                                 "ascent, on some entries; at T = 0.3 they jump tens of times faster (at T = 0.15 "
                                 "how negative the weights can get matters too: notebook §3.2).")
    if answer == "tails":
        return Feedback("wrong", "at T = 0.3 bounded ±1 weights with the same covariance jump as fast as the "
                                 "Gaussian ones (notebook §3.2): heavy tails are not what the Gaussian lacks.")
    if answer == "rank":
        return Feedback("wrong", "the SDE's covariance is SGD's own C by construction, rank N − 1 included; both "
                                 "have zero noise on the rank-raising directions at B₁.")
    return Feedback("wrong", f"pick one of the options; got {answer!r}.")


def sign_exercise() -> Exercise:
    """Exercise: which property of SGD's noise does every equal-covariance continuous surrogate lack?"""
    return Exercise(
        "missing_ingredient", "The Gaussian 'SGD' of §3.2 has the same step size and the same per-step mean and "
        "covariance of the entry weights as SGD, yet at T = 0.3 it jumps about 30× faster. Which property of SGD's "
        "sampling does it lack?", _check_sign, "choice",
        options=(("heavy tails of the sampled gradient", "tails"),
                 ("nonnegative entry weights: every step descends on what it samples", "nonnegative"),
                 ("a covariance of the right rank", "rank")),
        solution="nonnegative", mistakes=(("tails", "bounded ±1 weights"), ("rank", "by construction")),
        hint="Write one SGD step as GD with weights wₖ on the entries and ask which values wₖ can take for SGD, "
             "and which for a Gaussian with the same mean and variance.",
        worked=r"Write every step as $\theta \leftarrow \theta - \sum_k w_k \nabla\ell_k - 2\gamma\,dt\,\theta$. SGD "
               r"(batch 1) has one-hot weights $w_k\in\{0,\eta\}$, with $\mathbb E w_k=\eta/N$ and "
               r"$\mathbb E w_k^2=\eta^2/N=\eta\,\mathbb E w_k$. If instead $0\le w_k\le\eta$ then $w_k^2\le\eta w_k$, "
               r"with equality only at $w_k\in\{0,\eta\}$: matching SGD's first two moments forces the one-hot law. "
               r"So every other law with SGD's mean and covariance, the Gaussian included, gives some entries "
               r"**negative** weight: gradient *ascent* on them. The ±1 surrogate is bounded (no tails) and at "
               r"$T=0.3$ jumps just as fast, so heavy tails are not what the Gaussian lacks; the covariance and its "
               r"rank are SGD's by construction. (At $T=0.15$ the ±1 weights, never below $-0.063$, barely jump "
               r"while the Gaussian's deeper negative weights still do: how negative matters too, §3.2.)")


#: The exercises of §6, by name (shown by :class:`~symsgd_core.lesson.exercise_panel.ExercisePanel`).
EXERCISES = exercises_by_name((waiting_time_exercise(), noise_scale_exercise(), sign_exercise()), {
    # what the code cell of each exercise in Notebook 05 asks for, as its comment says (Exercise.code_prompt)
    "run_waiting_time": "the mean wait for a run of 18 row-0 samples",
    "sde_noise_scale": "the noise factor c of one Euler–Maruyama step",
})
