"""The "Check yourself" exercises of Notebook 01 (the law of balance).

Expected answers come from the package's formulas (:mod:`symsgd_core.balance.law`) and models; each
``solution`` is the hand computation of the explanation, written out as a number, so that the test that
the checker accepts it can fail.
"""

from __future__ import annotations

import numpy as np

from ..core.exercises import Exercise, Feedback, number_exercise
from .data import GaussianData
from .experiments import SCALAR_DATA
from .law import scalar_g_rate, scalar_step_factor
from .models import ScalarModel

__all__ = ["EXERCISES", "EXERCISE_RATE", "EXERCISE_STEP"]

#: Exercise 1: dG/dt of the scalar model at a point (Gaussian data, k = σ = 1).
EXERCISE_RATE = {"u": 2.0, "w": 1.0, "temperature": 0.1}


#: Exercise 3: one SGD step with a large minibatch gradient.
EXERCISE_STEP = {"u": 1.5, "w": 0.5, "lr": 0.2, "g_bar": 6.0}




def _balance_rate_exercise() -> Exercise:
    """Exercise 1: the law of balance's ``dG/dt = −4T g(v) G`` at :data:`EXERCISE_RATE`.

    Relative tolerance ``1e-3`` (the reader may round to 3 digits). Recognises the usual slips (sign,
    ½-MSE factor, the factor 4, "G is conserved").
    """
    p = EXERCISE_RATE
    m = SCALAR_DATA.moments()
    u, w, T = p["u"], p["w"], p["temperature"]
    v, G = u * w, u * u - w * w
    g = float(m.g(v))
    right = scalar_g_rate(T, g, G)
    question = (f"Scalar model ℓ = (uwx − y)², x ~ N(0, 1), y = {SCALAR_DATA.k:g}·x + ε, "
                f"ε ~ N(0, {SCALAR_DATA.sigma:g}²) (so α₁ = {m.alpha1:g}, α₂ = {m.alpha2:g}, α₃ = {m.alpha3:g}). "
                f"At (u, w) = ({u:g}, {w:g}) and T = {T:g}, what is dG/dt, G = u² − w²?")
    why = f"v = uw = {v:g}, g(v) = α₁v² − 2α₂v + α₃ = {g:g}, G = {G:g}, so dG/dt = −4·T·g(v)·G = {right:g}."
    return number_exercise(
        "balance_rate", question, right, why + " The noise, not the loss, sets this rate.",
        "use dG/dt = T(Tr Cov∇_uℓ − Tr Cov∇_wℓ) = −4T·g(v)·(u² − w²) with g(v) = α₁v² − 2α₂v + α₃.",
        solution=-3.6, rel_tol=1e-3, abs_tol=1e-12,
        mistakes=[(-right, "check the sign: the noise always shrinks |u² − w²| (Corollary 3.3)."),
                  (right / 2, "that is the ½-MSE answer; here ℓ = (f − y)² without ½, so C = 4g(v)∇v∇vᵀ."),
                  (right / 4, "you lost the factor 4: ∂ℓ/∂v = 2(vx − y)x, so Var[∂ℓ/∂v] = 4g(v)."),
                  (0.0, "G is conserved only by gradient flow (T = 0); SGD's noise changes it.")])




def _check_conserved_quantity(f) -> Feedback:
    """Exercise 2: ``f(u, w)`` must be conserved by gradient flow of ``ℓ = (uwx − y)²`` for *any* data.

    Test: at 40 random points and data laws, ``|∇f·∇L| ≤ 1e-5·|∇f|·|∇L|`` (∇f by central differences
    with step ``1e-5·(1 + |θ|)``: truncation ``O(1e-10)``, round-off ``O(1e-11)`` relative), and ``f``
    must not be constant (``|∇f| > 1e-6`` somewhere).
    """
    if not callable(f):
        return Feedback("wrong", f"expected a function of (u, w), got {type(f).__name__}.")
    rng = np.random.default_rng(0)
    model = ScalarModel()
    worst, moving = 0.0, False
    for _ in range(40):
        th = rng.uniform(-2.0, 2.0, size=2)
        data = GaussianData(k=rng.normal(), sigma=rng.uniform(0.3, 1.5))
        gL = model.population_grad(th, data.moments())
        h = 1e-5 * (1.0 + np.abs(th))
        try:
            gf = np.array([(float(f(th[0] + h[0], th[1])) - float(f(th[0] - h[0], th[1]))) / (2 * h[0]),
                           (float(f(th[0], th[1] + h[1])) - float(f(th[0], th[1] - h[1]))) / (2 * h[1])])
        except Exception as exc:  # the reader's function failed: explain, do not raise
            return Feedback("wrong", f"calling f(u, w) raised {type(exc).__name__}: {exc}.")
        if not np.all(np.isfinite(gf)):
            return Feedback("wrong", f"f is not differentiable (or not finite) at (u, w) = ({th[0]:.3g}, {th[1]:.3g}).")
        nf, nL = float(np.linalg.norm(gf)), float(np.linalg.norm(gL))
        moving |= nf > 1e-6
        if nf > 0 and nL > 0:
            worst = max(worst, abs(float(gf @ gL)) / (nf * nL))
    if not moving:
        return Feedback("wrong", "a constant is trivially conserved; find a function that actually depends on "
                                 "(u, w).")
    if worst <= 1e-5:
        return Feedback("right", "∇f is orthogonal to ∇L everywhere: f depends on (u, w) only through "
                                 "u² − w² (Noether's charge of the rescaling symmetry), and ∇L ∝ (w, u) is "
                                 "orthogonal to ∇(u² − w²) = 2(u, −w).")
    return Feedback("wrong", f"gradient flow changes f (|cos(∇f, ∇L)| up to {worst:.2g}). Hint: ∇L = "
                             "2(β₁uw − β₂)(w, u); which functions have gradients orthogonal to (w, u)?")




def _step_factor_exercise() -> Exercise:
    """Exercise 3: ``u'² − w'² = (1 − η²ḡ_B²)(u² − w²)`` at :data:`EXERCISE_STEP` (rel. tol. 1e-3)."""
    p = EXERCISE_STEP
    G = p["u"] ** 2 - p["w"] ** 2
    factor = scalar_step_factor(p["lr"], p["g_bar"])
    right = factor * G
    question = (f"One SGD step of the scalar model from (u, w) = ({p['u']:g}, {p['w']:g}) with η = {p['lr']:g} hits "
                f"a minibatch whose mean ∂ℓ/∂(uw) is ḡ_B = {p['g_bar']:g}. What is u'² − w'² after the step?")
    why = f"u' = u − ηḡw and w' = w − ηḡu give u'² − w'² = (1 − η²ḡ²)(u² − w²) = {factor:g} × {G:g} = {right:g}."
    if factor < 0:
        why += " The factor is negative: one large step flipped the sign of G, which no continuous-time picture can do."
    return number_exercise(
        "step_factor", question, right, why, "write u' = u − ηḡw, w' = w − ηḡu and expand u'² − w'².",
        solution=-0.88, rel_tol=1e-3,
        mistakes=[(G, "gradient *flow* conserves u² − w², but a discrete step changes it by a factor 1 − η²ḡ².")])




#: The exercises of §7, by name (shown by :class:`~symsgd_core.ui.exercises.ExercisePanel`).
EXERCISES = {ex.name: ex for ex in (
    _balance_rate_exercise(),
    Exercise("conserved_quantity",
             "Write a function f(u, w) (not a constant) that gradient flow on ℓ = (uwx − y)² conserves for every "
             "data set. The checker tests ∇f · ∇L = 0 at random points and random data laws.",
             _check_conserved_quantity, "code", solution=lambda u, w: u * u - w * w,
             mistakes=((lambda u, w: 3.0, "a constant is trivially conserved"),
                       (lambda u, w: u * w, "gradient flow changes f"),
                       (lambda u, w: u * u + w * w, "gradient flow changes f"))),
    _step_factor_exercise(),
)}
