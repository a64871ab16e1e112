"""The "Check yourself" exercises of Notebook 01 (the law of balance).

Expected answers come from the package's formulas (:mod:`symsgd_core.balance.law`) and models; each
``solution`` is the hand computation of the explanation, written out as a number, so that the test that
the checker accepts it can fail.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core.exercises import Exercise, Feedback, number_exercise, vector_exercise
from .data import GaussianData
from .experiments import SCALAR_DATA
from .law import scalar_g_rate, scalar_step_factor
from .models import ScalarModel

__all__ = ["EXERCISES", "EXERCISE_COVARIANCE", "EXERCISE_RATE", "EXERCISE_RATIO", "EXERCISE_SQRT", "EXERCISE_STEP"]

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
    question = (f"Scalar model ℓ = (uwx − y)², x ~ N(0, 1), y = {SCALAR_DATA.k:g}·x plus label noise of standard "
                f"deviation σ = {SCALAR_DATA.sigma:g} (so α₁ = {m.alpha1:g}, α₂ = {m.alpha2:g}, α₃ = {m.alpha3:g}). "
                f"At (u, w) = ({u:g}, {w:g}) and T = {T:g}, what is dG/dt, G = u² − w²?")
    why = f"v = uw = {v:g}, g(v) = α₁v² − 2α₂v + α₃ = {g:g}, G = {G:g}, so dG/dt = −4·T·g(v)·G = {right:g}."
    return number_exercise(
        "balance_rate", question, right, why + " The noise, not the loss, sets this rate.",
        "use dG/dt = T(Tr Cov∇_uℓ − Tr Cov∇_wℓ) = −4T·g(v)·(u² − w²) with g(v) = α₁v² − 2α₂v + α₃.",
        solution=-3.6, rel_tol=1e-3, abs_tol=1e-12, code_prompt="your number for dG/dt",
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
        return Feedback("right", "∇f is orthogonal to ∇𝓛 everywhere: f depends on (u, w) only through "
                                 "u² − w² (Noether's charge of the rescaling symmetry), and ∇𝓛 ∝ (w, u) is "
                                 "orthogonal to ∇(u² − w²) = 2(u, −w).")
    return Feedback("wrong", f"gradient flow changes f (|cos(∇f, ∇𝓛)| up to {worst:.2g}). Hint: ∇𝓛 = "
                             "2(β₁uw − β₂)(w, u); which functions have gradients orthogonal to (w, u)?")




def _step_factor_exercise() -> Exercise:
    """Exercise 3: ``u'² − w'² = (1 − η²ḡ_B²)(u² − w²)`` at :data:`EXERCISE_STEP` (rel. tol. 1e-3)."""
    p = EXERCISE_STEP
    G = p["u"] ** 2 - p["w"] ** 2
    factor = scalar_step_factor(p["lr"], p["g_bar"])
    right = factor * G
    question = (f"One SGD step of the scalar model from (u, w) = ({p['u']:g}, {p['w']:g}) with η = {p['lr']:g} hits "
                f"a minibatch whose mean ∂ℓ/∂(uw) is ḡ = {p['g_bar']:g}. What is u'² − w'² after the step?")
    why = f"u' = u − ηḡw and w' = w − ηḡu give u'² − w'² = (1 − η²ḡ²)(u² − w²) = {factor:g} × {G:g} = {right:g}."
    if factor < 0:
        why += " The factor is negative: one large step flipped the sign of G, which no continuous-time picture can do."
    return number_exercise(
        "step_factor", question, right, why, "write u' = u − ηḡw, w' = w − ηḡu and expand u'² − w'².",
        solution=-0.88, rel_tol=1e-3, code_prompt="your number for u'² − w'²",
        mistakes=[(G, "gradient *flow* conserves u² − w², but a discrete step changes it by a factor 1 − η²ḡ².")])




#: Exercise 4: SGD's per-step noise, accumulated over a time t, in units of C·t.
EXERCISE_COVARIANCE = {"lr": 0.1, "batch_size": 4}


def _step_covariance_exercise() -> Exercise:
    """Exercise 4: ``n = t/η`` steps of covariance ``η²C/S`` add up to ``(η/S)·C·t = T·C·t``: the SDE's ``√(TC) dW``."""
    p = EXERCISE_COVARIANCE
    eta, S = p["lr"], p["batch_size"]
    right = eta / S
    question = (f"One SGD step with η = {eta:g} and a minibatch of S = {S} independent samples moves θ by −η·(mean of "
                "S per-sample gradients); its random part has covariance η²C/S. Over a time t = η·n (n steps, "
                "independent noise), the accumulated noise has covariance k·C·t. What is k?")
    why = (f"n = t/η steps, each η²C/S: total (t/η)·η²C/S = (η/S)·C·t, so k = η/S = T = {right:g}. A Brownian "
           "increment has covariance dt, so the noise is √(TC) dW — the SDE of the notebook.")
    ex = number_exercise(
        "sgd_step_covariance", question, right, why,
        "count the steps in the time t and add the covariances of independent steps.",
        solution=0.025, rel_tol=1e-3, code_prompt="k, where k·C·t is the covariance of the noise accumulated "
                                                  "over a time t",
        mistakes=[(eta**2 / S, "that is one step's covariance η²/S: over a time t there are t/η steps, whose "
                               "covariances add."),
                  (eta, "that forgets the batch: averaging S independent gradients divides the covariance by S."),
                  (1 / S, "that is 1/S, one step's covariance in units of η²C; the question asks for the sum over "
                          "the t/η steps of a time t, in units of C·t: each step's η² and the t/η steps leave one "
                          "η."),
                  (np.sqrt(eta / S), "that is a standard deviation, √T; the question asks for the covariance factor.")])
    return replace(ex, hint="How many steps fit into the time t? Independent steps add their covariances; express "
                            "the total with T = η/S.",
                   worked=("One step: $\\Delta\\theta = -\\frac{\\eta}{S}\\sum_{x\\in ℬ}\\nabla\\ell(\\theta, x)$. "
                           "Its mean is "
                           "$-\\eta\\nabla\\mathcal L$ and, the $S$ samples being independent, its covariance is "
                           "$\\frac{\\eta^2}{S^2}\\cdot S\\,C = \\frac{\\eta^2}{S}C$.\n\n"
                           "Over a time $t = \\eta n$ the $n = t/\\eta$ steps have independent noise, so the "
                           "covariances "
                           "add: $n\\,\\frac{\\eta^2}{S}C = \\frac{t}{\\eta}\\frac{\\eta^2}{S}C = "
                           "\\frac{\\eta}{S}\\,C\\,t = T\\,C\\,t$.\n\n"
                           f"So $k = T = \\eta/S = {eta:g}/{S} = {right:g}$. A Brownian increment $dW$ has covariance "
                           "$dt\\,I$, hence the noise term $\\sqrt{T C}\\,dW$ of $d\\theta = -\\nabla\\mathcal L\\,dt "
                           "+ "
                           "\\sqrt{TC}\\,dW$: the same covariance $TC\\,dt$ per unit time."))


#: Exercise 5: a rank-one covariance, its square root and a vector with a null component.
EXERCISE_SQRT = {"C": ((2.0, 2.0), (2.0, 2.0)), "x": (2.0, -1.0)}


def _sqrt_null_space_exercise() -> Exercise:
    """Exercise 5: ``√C x`` by ``C = UΛUᵀ`` — the null component of ``x`` is killed by ``√C`` as by ``C``."""
    C = np.array(EXERCISE_SQRT["C"])
    x = np.array(EXERCISE_SQRT["x"])
    lam, U = np.linalg.eigh(C)
    root = U @ np.diag(np.sqrt(np.clip(lam, 0.0, None))) @ U.T
    right = root @ x
    shown = ", ".join(f"{v:g}" for v in right)
    question = ("C = [[2, 2], [2, 2]] is a covariance matrix (eigenvalues 4 and 0). For x = (2, −1), compute the "
                "vector √C x, with the matrix square root √C = U Λ¹ᐟ² Uᵀ. Give its two entries.")
    why = (f"x = (1/2)(1, 1) + (3/2)(1, −1). C and √C both kill the (1, −1) part (null space); √C multiplies the "
           f"(1, 1) part by √4 = 2: √C x = ({shown}).")
    ex = vector_exercise(
        "sqrt_null_space", question, right, why,
        "split x along the eigenvectors of C; √C scales each part by the square root of its eigenvalue.",
        solution=(1.0, 1.0), abs_tol=1e-3, code_prompt="√C x, as a list of two numbers",
        mistakes=[(np.sqrt(C) @ x, "that is the entrywise square root of C applied to x; the matrix square root "
                                   "is U Λ¹ᐟ² Uᵀ, not √ of each entry."),
                  (C @ x, "that is C x; √C takes the square root of the eigenvalue 4, not the eigenvalue itself."),
                  (np.zeros(2), "√C kills only the part of x along the null direction (1, −1); x also has a part "
                                "along (1, 1).")])
    return replace(ex, hint="Write x in the eigenbasis of C. What does √C do to the component along an eigenvector "
                            "whose eigenvalue vanishes?",
                   worked=("$C$ is symmetric positive semi-definite: $C = U\\Lambda U^\\top$ with $U = "
                           "\\frac{1}{\\sqrt2}"
                           "\\begin{pmatrix}1&1\\\\1&-1\\end{pmatrix}$, $\\Lambda = \\mathrm{diag}(4, 0)$, so "
                           "$\\sqrt C = U\\Lambda^{1/2}U^\\top = \\begin{pmatrix}1&1\\\\1&1\\end{pmatrix}$.\n\n"
                           "**The null-space lemma.** $Cx = 0 \\iff \\Lambda U^\\top x = 0 \\iff "
                           "\\Lambda^{1/2}U^\\top x = 0 "
                           "\\iff \\sqrt C x = 0$: an eigenvalue vanishes exactly when its square root does, so $C$ "
                           "and "
                           "$\\sqrt C$ have the same null space.\n\n"
                           "Here $x = (2, -1) = \\tfrac12(1, 1) + \\tfrac32(1, -1)$. The part along $(1, -1)$ is in "
                           "the "
                           "null space and disappears; the part along $(1, 1)$ is multiplied by $\\sqrt 4 = 2$: "
                           f"$\\sqrt C x = ({shown})$. This is why $\\theta^\\top J C = 0$ "
                           "implies $\\theta^\\top J\\sqrt C = 0$: the noise of $G$ vanishes, not only its variance."))


#: Exercise 6: predict the end of the rank-1 figure before running it.
EXERCISE_RATIO = {"d_in": 8, "d_out": 2}


def _noise_balance_ratio_exercise() -> Exercise:
    """Exercise 6 (predict, then run): noise balance of a rank-1 net ends at ``‖u‖²/‖w‖² = d_out/d_in``."""
    p = EXERCISE_RATIO
    right = p["d_out"] / p["d_in"]
    question = (f"Predict before you run: in the rank-1 figure of §5 set d_in = {p['d_in']} and d_out = {p['d_out']} "
                "(isotropic inputs, y = teacher + label noise). Where will SGD's ‖u‖²/‖w‖² end? Then compare "
                "with the run.")
    why = (f"At the teacher Tr Cov∇_uℓ = 4σ²·d_out·‖w‖² and Tr Cov∇_wℓ = 4σ²·d_in·‖u‖²; the law of balance stops "
           f"G where they are equal: ‖u‖²/‖w‖² = d_out/d_in = {right:g}.")
    ex = number_exercise(
        "noise_balance_ratio", question, right, why,
        "write both noise traces at the teacher: which dimension does each gradient live in, and whose norm does "
        "it carry?", solution=0.25, rel_tol=1e-3,
        code_prompt="predict ‖u‖²/‖w‖² before running the rank-1 figure",
        mistakes=[(1.0, "that is norm balance; SGD balances the noise traces, not the norms."),
                  (p["d_in"] / p["d_out"], "that is the inverse: ∇_uℓ has d_out entries and carries ‖w‖²."),
                  (p["d_out"] / (p["d_in"] + 1), "that is the ReLU neuron with a bias; this net has no bias.")])
    return replace(ex, hint="At the teacher the residual is pure label noise. Write ∇_uℓ and ∇_wℓ per sample, take "
                            "the traces of their covariances, and set them equal.",
                   worked=("Per sample, with residual $r = f(x) - y$ (pure label noise $\\sim\\mathcal N(0, \\sigma^2 "
                           "I)$ "
                           "at the teacher, independent of $x$): $\\nabla_u\\ell = 2r\\,(w^\\top x)$ and "
                           "$\\nabla_w\\ell = 2(u^\\top r)\\,x$. Both have mean zero, so\n\n"
                           "$\\mathrm{Tr\\,Cov}\\,\\nabla_u\\ell = 4\\,\\mathbb E\\|r\\|^2\\,\\mathbb E(w^\\top x)^2 = "
                           "4\\sigma^2 d_\\text{out}\\|w\\|^2$, $\\quad\\mathrm{Tr\\,Cov}\\,\\nabla_w\\ell = "
                           "4\\,\\mathbb E(u^\\top r)^2\\,\\mathbb E\\|x\\|^2 = 4\\sigma^2\\|u\\|^2 d_\\text{in}$.\n\n"
                           "The law of balance, $dG/dt = T(\\mathrm{Tr}_u - \\mathrm{Tr}_w)$, stops where they are "
                           "equal: "
                           f"$\\|u\\|^2/\\|w\\|^2 = d_\\text{{out}}/d_\\text{{in}} = {p['d_out']}/{p['d_in']} = "
                           f"{right:g}$ — "
                           "noise balance, not norm balance. The figure's claims check the noise ratio at the end of "
                           "the run; the norm ratio should come out close to your prediction."))


_WORKED_RATE = (
    "For $\\ell = (uwx - y)^2$ every per-sample gradient is $\\partial\\ell/\\partial v\\cdot(w, u)$ with $v = uw$ and "
    "$\\partial\\ell/\\partial v = 2(vx - y)x$, whose variance is $4g(v)$, $g(v) = \\alpha_1v^2 - 2\\alpha_2v + "
    "\\alpha_3$. So "
    "$\\mathrm{Tr\\,Cov}\\,\\nabla_u\\ell = 4g(v)w^2$ and $\\mathrm{Tr\\,Cov}\\,\\nabla_w\\ell = 4g(v)u^2$, and the "
    "law of "
    "balance gives $dG/dt = T(4g w^2 - 4g u^2) = -4T g(v)\\,G$.\n\n"
    "Here $\\alpha = (2, 2, 3)$ ($k = \\sigma = 1$), $v = 2$, $g(2) = 2\\cdot4 - 2\\cdot2\\cdot2 + 3 = 3$, $G = 4 - 1 "
    "= 3$: "
    "$dG/dt = -4\\cdot0.1\\cdot3\\cdot3 = -3.6$.")
_WORKED_CONSERVED = (
    "Gradient flow moves along $-\\nabla\\mathcal L$, and $\\mathcal L$ depends on $(u, w)$ only through $v = uw$: "
    "$\\nabla\\mathcal L = \\mathcal L'(v)\\,(w, u)$. A function $f$ is conserved iff $\\nabla f\\cdot(w, u) = 0$ "
    "everywhere, i.e. $w\\,\\partial_u f + u\\,\\partial_w f = 0$.\n\n"
    "$f = u^2 - w^2$ works: $\\nabla f = (2u, -2w)$ and $2uw - 2wu = 0$. It is Noether's charge of the rescaling "
    "symmetry (its orbits $(\\lambda u, w/\\lambda)$ cross the hyperbolas $u^2 - w^2 = c$, the flow stays on one). Any "
    "function of $u^2 - w^2$ works too; $uw$ and $u^2 + w^2$ do not.\n\n```python\ndef f(u, w):\n    return u * u - w "
    "* w\n```")
_WORKED_STEP = (
    "One step: $u' = u - \\eta\\bar g w$, $w' = w - \\eta\\bar g u$ with the same $\\bar g$ (the symmetry). Then "
    "$u'^2 - w'^2 = u^2 - 2\\eta\\bar g uw + \\eta^2\\bar g^2w^2 - w^2 + 2\\eta\\bar g uw - \\eta^2\\bar g^2u^2 = "
    "(1 - \\eta^2\\bar g^2)(u^2 - w^2)$.\n\n"
    "With $\\eta = 0.2$, $\\bar g = 6$: $\\eta^2\\bar g^2 = 1.44$, factor $-0.44$; $G = 2.25 - 0.25 = 2$, so "
    "$u'^2 - w'^2 = -0.88$. The factor is negative: one large step flipped the sign of $G$, which no ODE can do.")


#: The exercises of §7, by name (shown by :class:`~symsgd_core.lesson.exercise_panel.ExercisePanel`).
EXERCISES = {ex.name: ex for ex in (
    replace(_balance_rate_exercise(), worked=_WORKED_RATE,
            hint="Write Tr Cov∇_uℓ and Tr Cov∇_wℓ for this model (every per-sample gradient is a multiple of "
                 "(w, u)); evaluate g at v = uw."),
    Exercise("conserved_quantity",
             "Write a function f(u, w) (not a constant) that gradient flow on ℓ = (uwx − y)² conserves for every "
             "data set. The checker tests ∇f · ∇𝓛 = 0 at random points and random data laws.",
             _check_conserved_quantity, "code", solution=lambda u, w: u * u - w * w,
             code_prompt="a function f(u, w), not a constant, that gradient flow conserves",
             mistakes=((lambda u, w: 3.0, "a constant is trivially conserved"),
                       (lambda u, w: u * w, "gradient flow changes f"),
                       (lambda u, w: u * u + w * w, "gradient flow changes f")),
             worked=_WORKED_CONSERVED,
             hint="The loss depends on (u, w) only through uw, so ∇𝓛 points along (w, u). Which gradients are "
                  "orthogonal to (w, u)? Think of the symmetry's conserved charge."),
    replace(_step_factor_exercise(), worked=_WORKED_STEP,
            hint="Write u' and w' after one step, expand u'² − w'² and factor out u² − w²."),
    _step_covariance_exercise(),
    _sqrt_null_space_exercise(),
    _noise_balance_ratio_exercise(),
)}
