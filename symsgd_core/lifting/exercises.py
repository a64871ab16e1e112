"""The "Check yourself" exercises of Notebook 02 (the rank-1 lifting).

Expected answers come from the lifting's own models (e.g. the ReLU neuron's loss by autograd); each
``solution`` is the hand computation of the explanation.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core.exercises import Exercise, Feedback, as_vector, exercises_by_name, number_exercise
from .models import model_loss, relu_neuron

__all__ = ["EXERCISES"]



def _relu_sign_loss() -> float:
    import torch

    model = relu_neuron()
    data = {"x": torch.tensor([[1.0, 1.0]]), "y": torch.tensor([[3.0]])}
    return float(model_loss(model, torch.tensor([-2.0]), torch.tensor([-1.0, 0.5]), data)[0])




def _check_direction(answer) -> Feedback:
    w = np.array([2.0, 1.0])
    v = as_vector(answer)
    if v is None or v.shape != (2,):
        return Feedback("wrong", f"expected a 2-vector such as 1, 0 (in code: [1.0, 0.0]), got {answer!r}.")
    if not np.any(v):
        return Feedback("wrong", "expected a non-zero 2-vector: every vector is orthogonal to 0.")
    cos = abs(v @ w) / (np.linalg.norm(v) * np.linalg.norm(w))
    if cos > 1 - 1e-9:
        return Feedback("right", "Euler's identity says w·∂ℓ̃/∂w = 0, so ∂ℓ̃/∂w ⟂ w — and only that.")
    return Feedback("wrong", "not that one: Euler's identity constrains ∂ℓ̃/∂w only along the direction in which "
                             "ℓ̃ is invariant. Which vector does ℓ̃(M, λw) = ℓ̃(M, w) scale?")




def _check_grad_w_function(answer) -> Feedback:
    if not callable(answer):
        return Feedback("wrong", f"expected a function grad_w(A, u, w), got {type(answer).__name__}.")
    rng = np.random.default_rng(12345)
    for m, n in ((2, 3), (3, 3), (1, 4)):
        A, u, w = rng.standard_normal((m, n)), rng.standard_normal(m), rng.standard_normal(n)
        try:
            got = np.asarray(answer(A, u, w), dtype=float)
        except Exception as exc:  # the reader's code: report, don't raise
            return Feedback("wrong", f"your function raised {type(exc).__name__}: {exc} (for A of shape {A.shape}).")
        want = A.T @ u
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            if m == n and got.shape == want.shape and np.allclose(got, A @ u):
                return Feedback("wrong", "that is A u: with Aᵢⱼ = ∂F/∂Mᵢⱼ and Mᵢⱼ = uᵢwⱼ, "
                                         "∂ℓ/∂wⱼ = Σᵢ uᵢAᵢⱼ.")
            if got.shape != want.shape:
                return Feedback("wrong", f"wrong for A of shape {A.shape}: expected shape {want.shape}, "
                                         f"got {got.shape}.")
            return Feedback("wrong", f"right shape, wrong values (for A of shape {A.shape}, off by up to "
                                     f"{np.max(np.abs(got - want)):.3g}). Hint: ∂ℓ/∂wⱼ = Σᵢ (∂F/∂Mᵢⱼ)(∂Mᵢⱼ/∂wⱼ) "
                                     f"with ∂Mᵢⱼ/∂wⱼ = uᵢ.")
    return Feedback("right", "∂ℓ/∂w = Aᵀu (and ∂ℓ/∂u = A w), the chain rule through M = u wᵀ.")




_WORKED = {
    "det_rank1": ("$u w^\\top = \\begin{pmatrix}1\\cdot3 & 1\\cdot(-1)\\\\ 2\\cdot3 & 2\\cdot(-1)\\end{pmatrix} = "
                  "\\begin{pmatrix}3&-1\\\\6&-2\\end{pmatrix}$, so $\\det = 3\\cdot(-2) - (-1)\\cdot 6 = 0$.\n\n"
                  "In general $\\det(uw^\\top) = u_1w_1u_2w_2 - u_1w_2u_2w_1 = 0$: the two rows are multiples of "
                  "$w^\\top$, so every $u w^\\top$ has rank $\\le 1$ and lies on the cone $\\det M = 0$ of §2."),
    "midpoint_det": ("$M_1 + M_2 = e_1e_1^\\top + e_2e_2^\\top = I$, so the midpoint is $I/2$ and "
                     "$\\det(I/2) = \\tfrac12\\cdot\\tfrac12 = \\tfrac14 \\ne 0$: rank 2.\n\n"
                     "Two rank-1 matrices whose midpoint (and sum) has rank 2: the rank-1 set is neither a linear "
                     "subspace nor convex, so $\\partial/\\partial M_{ij}$ of a function given only on it is undefined "
                     "until the function is extended — the lifting."),
    "euler_direction": ("By the symmetry $\\tilde\\ell(M, \\lambda w) = \\tilde\\ell(M, w)$ for $\\lambda > 0$. "
                        "Differentiate at $\\lambda = 1$: $\\sum_j w_j\\,\\partial\\tilde\\ell/\\partial w_j = 0$, "
                        "i.e. "
                        "$\\partial\\tilde\\ell/\\partial w \\perp w$.\n\n"
                        "So at $w = (2, 1)$ the answer is $(2, 1)$ or any non-zero multiple of it. It is *only* "
                        "this one direction: the components of $\\partial\\tilde\\ell/\\partial w$ perpendicular to "
                        "$w$, here along $(1, -2)$, are not constrained and are generally non-zero (§4)."),
    "grad_w_function": ("With $\\ell(u, w) = F(M)$, $M_{ij} = u_iw_j$: $\\partial M_{ij}/\\partial w_k = "
    "u_i\\delta_{jk}$, "
                        "so $\\partial\\ell/\\partial w_k = \\sum_{ij} A_{ij}u_i\\delta_{jk} = \\sum_i u_iA_{ik} = "
                        "(A^\\top u)_k$. (Likewise $\\partial\\ell/\\partial u = Aw$.)\n\n"
                        "```python\ndef grad_w(A, u, w):\n    return A.T @ u\n```"),
    "relu_sign": ("$-w = (-1, 0.5)$, so $-w^\\top x = -1 + 0.5 = -0.5 < 0$: the neuron is off and "
                  "$f = (-u)\\,\\mathrm{relu}(-0.5) = 0$. The loss is $(0 - 3)^2 = 9$, while $\\ell(u, w) = "
                  "(2\\cdot\\mathrm{relu}(0.5) - 3)^2 = 4$.\n\n"
                  "Same matrix $(-u)(-w)^\\top = uw^\\top$, different loss: for a ReLU neuron the loss is a function "
                  "of $uw^\\top$ *and* of a sign class (§5); only $\\lambda > 0$ is a symmetry."),
    "balanced_lambda": ("Along $(\\lambda u, w/\\lambda)$: $\\nabla_u\\ell$ scales as $1/\\lambda$ (it carries $w$) "
                        "and $\\nabla_w\\ell$ as $\\lambda$, so the traces scale as $1/\\lambda^2$ and $\\lambda^2$: "
                        "$8/\\lambda^2$ and $2\\lambda^2$.\n\n"
                        "Balance: $8/\\lambda^2 = 2\\lambda^2 \\Rightarrow \\lambda^4 = 4 \\Rightarrow \\lambda = "
                        "\\sqrt2 "
                        "\\approx 1.414$. This is the point $\\lambda^*$ (the star of §6's right panel) towards which "
                        "SGD moves, since $dG/dt = T(\\mathrm{Tr}_u - \\mathrm{Tr}_w)$."),
}
_HINTS = {
    "det_rank1": "Write out the four entries uᵢwⱼ, then compare the two rows: how are they related?",
    "midpoint_det": "Add the two matrices first; which matrix is their sum?",
    "euler_direction": "Differentiate ℓ̃(M, λw) = ℓ̃(M, w) with respect to λ at λ = 1: which vector appears in the "
                       "dot product with ∂ℓ̃/∂w?",
    "grad_w_function": "Use the chain rule through Mᵢⱼ = uᵢwⱼ: ∂Mᵢⱼ/∂wₖ is non-zero only when j = k.",
    "relu_sign": "Compute (−w)ᵀx first: is the neuron on or off? Then evaluate the prediction and the squared error.",
    "balanced_lambda": "Write both traces as functions of λ and set them equal; solve for λ⁴ first.",
}


def _with_solutions(ex: Exercise) -> Exercise:
    return replace(ex, worked=_WORKED[ex.name], hint=_HINTS[ex.name])


#: What the code cell of each exercise in Notebook 02 asks for, as its comment says (``Exercise.code_prompt``).
_CODE_PROMPTS = {
    "det_rank1": "det(u wᵀ)",
    "midpoint_det": "det((M₁ + M₂)/2)",
    "euler_direction": "a list of two numbers",
    "grad_w_function": "def grad_w(A, u, w): return ...",
    "relu_sign": "ℓ(−u, −w)",
    "balanced_lambda": "the balancing λ",
}

#: The exercises of §7, by name (shown by :class:`~symsgd_core.lesson.exercise_panel.ExercisePanel`).
EXERCISES = exercises_by_name((_with_solutions(ex) for ex in (
    number_exercise("det_rank1", "What is det(u wᵀ) for u = (1, 2), w = (3, −1)?", 0.0,
                    "u wᵀ = [[3, −1], [6, −2]] and 3·(−2) − (−1)·6 = 0: every u wᵀ has rank ≤ 1.",
                    "write out the four entries uᵢwⱼ first.", solution=0.0, rel_tol=1e-9, abs_tol=1e-9,
                    close_tol=1e-2),
    number_exercise("midpoint_det", "M₁ = e₁e₁ᵀ and M₂ = e₂e₂ᵀ have rank 1. What is det((M₁ + M₂)/2)?", 0.25,
                    "The midpoint is I/2, whose determinant is 1/4 ≠ 0: the rank-1 set is not a linear subspace "
                    "(nor convex).", "what is M₁ + M₂?", solution=1 / 4, rel_tol=1e-6, abs_tol=1e-6, close_tol=1e-2),
    Exercise("euler_direction", "For ℓ̃(M, w) = ℓ(Mw/‖w‖², w) at w = (2, 1), give a non-zero vector that ∂ℓ̃/∂w "
             "is always orthogonal to.", _check_direction, "vector", solution=(2.0, 1.0),
             mistakes=(((1.0, -2.0), "not that one"), ((0.0, 0.0), "non-zero"))),
    Exercise("grad_w_function", "Write grad_w(A, u, w) that returns ∂ℓ/∂w from A = ∂F/∂M (Aᵢⱼ = ∂F/∂Mᵢⱼ, "
             "Mᵢⱼ = uᵢwⱼ).", _check_grad_w_function, "code", solution=lambda A, u, w: A.T @ u,
             mistakes=((lambda A, u, w: A @ w, "expected shape"),
                       (lambda A, u, w: A.sum(axis=0), "right shape, wrong values"))),
    number_exercise("relu_sign", "ReLU neuron f(x) = u relu(wᵀx) with u = 2, w = (1, −0.5), one sample x = (1, 1), "
                    "y = 3. ℓ(u, w) = (2·0.5 − 3)² = 4. What is ℓ(−u, −w)?", _relu_sign_loss(),
                    "With −w the neuron is off (−wᵀx = −0.5 < 0), so f = 0 and ℓ = y² = 9: same u wᵀ, "
                    "different loss.", "compute −wᵀx first: is the neuron on?", solution=9.0, rel_tol=1e-6,
                    abs_tol=1e-6, close_tol=1e-2),
    # √2 typed to 4 digits (1.414) counts
    number_exercise("balanced_lambda", "At λ = 1, Tr Cov ∇_u ℓ = 8 and Tr Cov ∇_w ℓ = 2. Along (λu, w/λ) they scale "
                    "as 1/λ² and λ². Which λ > 0 balances them?", 2 ** 0.5,
                    "Balance means 8/λ² = 2λ², i.e. λ⁴ = 4, λ = √2 ≈ 1.414.", "solve 8/λ² = 2λ².",
                    solution=1.414, rel_tol=5e-4, abs_tol=5e-4, close_tol=1e-2),
)), _CODE_PROMPTS)
