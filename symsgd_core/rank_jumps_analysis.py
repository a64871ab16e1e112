"""Analysis on top of :mod:`symsgd_core.dln` for Notebook 03 (one-way rank jumps).

Closed-form landscape facts (the induced Schatten-2/L penalty, the cost of switching on
a new singular direction, the loss of a scalar chain near θ = 0) and summaries of
simulated runs (rank over time, jump times, returns to higher rank). The simulation
itself lives in :mod:`symsgd_core.dln`; nothing here integrates dynamics.

Loss normalisation follows :mod:`symsgd_core.conventions`: squared error without ½,
weight decay ``λ‖θ‖²`` without ½.
"""

from __future__ import annotations

import numpy as np

from .validation import check_array, check_int, check_nonnegative, check_positive

__all__ = [
    "barrier_width",
    "new_direction_cost",
    "origin_is_local_min",
    "scalar_chain_loss",
    "schatten_penalty",
]


def schatten_penalty(s, depth: int) -> np.ndarray:
    """The induced penalty ``L · s^{2/L}`` of one singular value ``s`` (elementwise).

    ``min_{θ: A_θ = A} ‖θ‖² = L Σ_k s_k(A)^{2/L}`` for a depth-``L`` linear network, so
    this is the parameter-norm cost of a singular value of size ``s``.

    Args:
        s: singular value(s) ≥ 0, any shape.
        depth: number of layers L ≥ 1.
    Returns:
        array of the same shape as ``s``: ``L · s^{2/L}``.
    Raises:
        ValueError: if ``s`` has a negative or non-finite entry, or ``depth`` < 1.
    """
    L = check_int("depth", depth, minimum=1)
    s = check_array("s", s)
    if np.any(s < 0):
        raise ValueError("s must be >= 0 (singular values)")
    return L * s ** (2.0 / L)


def new_direction_cost(delta, depth: int, lam: float, gain: float) -> np.ndarray:
    """Change of the regularised loss when a new singular direction of size ``δ`` is switched on.

    To first order in the fit, ``Δ(δ) = λ L δ^{2/L} − g δ``: the penalty of the new
    singular value minus the fit gained at slope ``g`` (``g = ‖∂C/∂A‖`` along the direction).

    Args:
        delta: size(s) δ ≥ 0 of the new singular value, any shape.
        depth: L ≥ 1.
        lam: weight decay λ ≥ 0.
        gain: fit slope g ≥ 0 (loss decrease per unit δ).
    Returns:
        array like ``delta``: ``λ L δ^{2/L} − g δ``.
    Raises:
        ValueError: on a negative/non-finite argument or ``depth`` < 1.
    """
    lam = check_nonnegative("lam", lam)
    gain = check_nonnegative("gain", gain)
    d = check_array("delta", delta)
    if np.any(d < 0):
        raise ValueError("delta must be >= 0 (size of a singular value)")
    return lam * schatten_penalty(d, depth) - gain * d


def barrier_width(depth: int, lam: float, gain: float) -> float:
    """Size ``δ*`` at which switching on a new direction starts to pay: ``Δ(δ*) = 0``, δ* > 0.

    For L ≥ 3, ``δ* = (λL/g)^{L/(L−2)}`` > 0: a whole interval ``(0, δ*)`` costs more than
    it gains, so the lower-rank point is a local minimum. For L = 2, Δ is linear: it
    returns ``inf`` when ``2λ ≥ g`` (never pays) and ``0`` when ``2λ < g`` (pays at once,
    no barrier). For L = 1 (penalty λ δ²) there is never a barrier: returns ``0``.

    Args:
        depth: L ≥ 1.
        lam: λ > 0.
        gain: g > 0.
    Returns:
        δ* ≥ 0 (float, possibly ``inf``).
    Raises:
        ValueError: on invalid arguments.
    """
    L = check_int("depth", depth, minimum=1)
    lam = check_positive("lam", lam)
    gain = check_positive("gain", gain)
    if L == 1:
        return 0.0
    if L == 2:
        return float("inf") if 2 * lam >= gain else 0.0
    return float((lam * L / gain) ** (L / (L - 2)))


def scalar_chain_loss(a, depth: int, lam: float, target: float = 1.0) -> np.ndarray:
    """Regularised loss of a balanced scalar chain ``θ = (a, …, a)``: ``(a^L − y)² + λ L a²``.

    This is the loss along the straight line from θ = 0 to a balanced fit of ``y``; near 0 it is
    ``y² − 2y a^L + λ L a² + O(a^{2L})``, so θ = 0 is a local minimum for any λ > 0 when L ≥ 3.

    Args:
        a: per-layer weight(s), any shape.
        depth: L ≥ 1.
        lam: λ ≥ 0.
        target: y.
    Returns:
        array like ``a``.
    Raises:
        ValueError: on invalid arguments.
    """
    L = check_int("depth", depth, minimum=1)
    lam = check_nonnegative("lam", lam)
    y = float(check_array("target", target))
    a = check_array("a", a)
    return (a**L - y) ** 2 + lam * L * a**2


def origin_is_local_min(depth: int, lam: float, target: float = 1.0) -> bool:
    """Whether θ = 0 is a strict local minimum of the scalar chain loss (second-order test).

    The quadratic coefficient of the loss at 0 is ``λL`` plus ``−2y`` when L = 2 (and 0 for
    L ≥ 3; for L = 1 the loss has a non-zero slope ``−2y`` unless y = 0).

    Args:
        depth: L ≥ 1.
        lam: λ ≥ 0.
        target: y.
    Returns:
        True when 0 is a strict local minimum.
    """
    L = check_int("depth", depth, minimum=1)
    lam = check_nonnegative("lam", lam)
    y = float(check_array("target", target))
    if L == 1:
        return y == 0.0
    quad = lam * L - (2 * y if L == 2 else 0.0)
    return quad > 0
