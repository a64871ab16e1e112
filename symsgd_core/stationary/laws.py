"""SGD's stationary distribution for diagonal networks (Ziyin, Li, Ueda, arXiv 2308.06671, Section 4), in closed
form.

Model (arXiv 2308.06671, Eq. 13): scalar input ``x``, per-sample loss
``ℓ = [Σ_i Π_{k=0}^{D} u_i^(k) x − y]² + γ‖θ‖²`` and the network's slope ``v = Σ_i Π_k u_i^(k)``.
The data enter through five moments (the paper's α₁, α₂, α₃, β₁, β₂, Section 4)::

    α₁ = Var[x²],  α₂ = E[x³y] − E[x²]E[xy],  α₃ = Var[xy],  β₁ = E[x²],  β₂ = E[xy]

and ``g(v) = α₁v² − 2α₂v + α₃ = Var[∂ℓ/∂v] / 4``, ``Δ = α₁α₃ − α₂² > 0``. For ``x ~ N(0, 1)``,
``y = kx + ε``, ``ε ~ N(0, σ²)``: ``α = (2, 2k, 2k² + σ²)``, ``β = (1, k)``, ``Δ = 2σ²``.

Itô reduction of ``dθ = −∇L dt + sqrt(T C) dW`` (conventions: no ½ in the loss, ``T = η/S``)
once the law of balance has equalised the layers (derived; checked by simulation in
:mod:`symsgd_core.stationary.v_sde`), with ``p = 2D/(D + 1)``::

    D = 0:  dv = −2(β₁'v − β₂) dt + 2 sqrt(T g(v)) dW,                 β₁' = β₁ + γ
    D ≥ 1:  dv = 2(D+1)[−(β₁v − β₂)|v|^p − γv + T D g(v) v|v|^{2p−2}] dt + 2(D+1) sqrt(T g(v)) |v|^p dW

(``D = 1`` reads ``dv = [−4v(β₁v − β₂') + 4Tvg] dt + 4v sqrt(Tg) dW`` with ``β₂' = β₂ − γ``.)
Solving the stationary Fokker–Planck equation gives (paper Eq. 12 and Eq. 15, with weight decay):

* ``D = 0``: ``p(v) ∝ g^{−1−β₁'/(2α₁T)} · exp[−(α₂β₁' − α₁β₂)/(α₁√Δ T) · arctan((α₁v − α₂)/√Δ)]``;
* ``D = 1``, ``v > 0``: ``p(v) ∝ v^{β₂'/(2α₃T) − 3/2} g^{−1−β₂'/(4α₃T)} ·
  exp[−(α₃β₁ − α₂β₂')/(2α₃√Δ T) · arctan((α₁v − α₂)/√Δ)]``, normalisable iff
  ``T < T_c = β₂'/α₃``; for ``T ≥ T_c`` the law is ``δ(v)``;
* ``D ≥ 2`` (width 1, no weight decay): the same Fokker–Planck solution, with the one
  remaining integral done numerically; tail ``v^{−5 + 3/(D+1)}``.

Known typos in arXiv 2308.06671 (found while deriving the formulas here): its Fokker–Planck Eq. 9
misses a ``T``; Corollary 3.3 says "+γ" where the worked example gives ``4γ``; Eq. 16 (the most
likely value) is garbled — the root used here is re-derived from Eq. 15; App. Eq. 69 misses a factor 4.

Every function that takes a ``problem`` also accepts the data layer's moments
(:meth:`symsgd_core.balance.data.GaussianData.moments`, or any object with ``alpha1 … beta2``), read as a
problem without weight decay (:func:`as_problem`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import cumulative_simpson, simpson

from ..balance.data import Moments
from ..core.validation import check_array, check_finite, check_int, check_nonnegative, check_positive

__all__ = [
    "DiagonalNetProblem",
    "as_problem",
    "StationaryLaw",
    "CRITICAL_T",
    "critical_temperature",
    "mode_onset_temperature",
    "transitional_temperature",
    "paper_transitional_temperature",
    "phase_of",
    "phase_diagram",
    "PHASES",
    "PHASE_CODES",
    "phase_grid",
    "most_likely_value_depth0",
    "most_likely_value_depth1",
    "most_likely_roots_depth1",
    "variance_depth0",
    "tail_exponent",
    "log_density_depth0",
    "log_density_depth1",
]

#: Half-width (in the integration coordinate z) of the grid on which laws are tabulated; the
#: parts of the law beyond it are added from their exact exponential asymptotes.
_Z_HALF_WIDTH = 40.0
#: Grid spacing in z. A law's peak must be wider than ~10 spacings (true for T ≥ 0.005 at k = σ = 1).
_Z_STEP = 0.01


@dataclass(frozen=True)
class DiagonalNetProblem(Moments):
    """The data moments of the scalar regression and the weight decay γ (loss ``… + γ‖θ‖²``).

    A :class:`symsgd_core.balance.data.Moments` (``alpha1 … beta2``, ``delta``, ``g``) plus the weight decay,
    checked for what the stationary laws need. ``Δ`` is ``α₁α₃ − α₂²`` unless ``delta`` is given.

    Attributes:
        alpha1, alpha2, alpha3: ``Var[x²]``, ``E[x³y] − E[x²]E[xy]``, ``Var[xy]``.
        beta1, beta2: ``E[x²]``, ``E[xy]``.
        weight_decay: γ ≥ 0 (the sixth positional argument).

    Raises:
        ValueError: if a moment is not finite, ``α₁, α₃, β₁ ≤ 0`` or ``Δ = α₁α₃ − α₂² ≤ 0``
            (then ``g`` has a real zero and the noise vanishes somewhere), or γ < 0.
    """

    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("alpha1", "alpha3", "beta1"):
            check_positive(name, getattr(self, name))
        for name in ("alpha2", "beta2"):
            check_finite(name, getattr(self, name))
        check_nonnegative("weight_decay", self.weight_decay)
        if self.delta <= 0:
            raise ValueError(f"the moments must give Δ = α₁α₃ − α₂² > 0 (noise never vanishes), got Δ = {self.delta}")

    @classmethod
    def gaussian(cls, k: float = 1.0, sigma: float = 1.0, weight_decay: float = 0.0) -> DiagonalNetProblem:
        """Moments of ``x ~ N(0, 1)``, ``y = kx + ε``, ``ε ~ N(0, σ²)``: α = (2, 2k, 2k² + σ²), β = (1, k).

        Raises:
            ValueError: if ``k`` is not finite or ``sigma`` ≤ 0 (σ = 0 makes Δ = 0).
        """
        k = check_finite("k", k)
        sigma = check_positive("sigma", sigma)
        return cls(2.0, 2.0 * k, 2.0 * k * k + sigma * sigma, 1.0, k, float(weight_decay))

    @classmethod
    def from_moments(cls, moments, weight_decay: float = 0.0) -> DiagonalNetProblem:
        """From any object with attributes ``alpha1 … beta2`` (e.g. ``GaussianData.moments()``).

        Only ``alpha1 … beta2`` are read; ``Δ`` is recomputed as ``α₁α₃ − α₂²``, as for every problem.
        """
        try:
            vals = [float(getattr(moments, n)) for n in ("alpha1", "alpha2", "alpha3", "beta1", "beta2")]
        except AttributeError as exc:
            raise ValueError(f"moments must have attributes alpha1, alpha2, alpha3, beta1, beta2 ({exc})") from None
        return cls(*vals, weight_decay=float(weight_decay))

    def mirrored(self) -> DiagonalNetProblem:
        """The problem seen from the negative branch: ``v → −v`` flips the signs of α₂ and β₂."""
        return DiagonalNetProblem(self.alpha1, -self.alpha2, self.alpha3, self.beta1, -self.beta2, self.weight_decay)

    def with_weight_decay(self, weight_decay: float) -> DiagonalNetProblem:
        return DiagonalNetProblem(self.alpha1, self.alpha2, self.alpha3, self.beta1, self.beta2, float(weight_decay))


def as_problem(problem) -> DiagonalNetProblem:
    """``problem`` as a :class:`DiagonalNetProblem`: itself, or the data layer's ``Moments`` (any object with
    ``alpha1, alpha2, alpha3, beta1, beta2``; weight decay 0).

    Raises:
        ValueError: anything else, naming what was given.
    """
    if isinstance(problem, DiagonalNetProblem):
        return problem
    if all(hasattr(problem, n) for n in ("alpha1", "alpha2", "alpha3", "beta1", "beta2")):
        return DiagonalNetProblem.from_moments(problem)
    raise ValueError("problem must be a DiagonalNetProblem or data moments with alpha1, alpha2, alpha3, beta1, "
                     f"beta2 (e.g. GaussianData().moments()), got {type(problem).__name__}")


# --------------------------------------------------------------------------------------------
# Temperatures and phases (depth 1)
# --------------------------------------------------------------------------------------------
#: How plain text (a status line, a printed line) names ``T_c``: Unicode has no subscript c, and ``T_c`` is ASCII math
#: (``symsgd_jupyter.text_checks``); Markdown writes $T_c$ and a figure's legend T<sub>c</sub>.
CRITICAL_T = "critical T"


def critical_temperature(problem: DiagonalNetProblem) -> float:
    """``T_c = (β₂ − γ)/α₃``: for ``T ≥ T_c`` a depth-1 net learns nothing (law ``δ(v)``).

    Can be ≤ 0 (then no temperature learns: weight decay beats the signal).
    """
    problem = as_problem(problem)
    return (problem.beta2 - problem.weight_decay) / problem.alpha3


def mode_onset_temperature(problem: DiagonalNetProblem) -> float:
    """``T_c/3``: above it the depth-1 density diverges at ``v = 0`` (exponent of v turns negative)."""
    return critical_temperature(problem) / 3.0


def _depth1_quadratic(problem: DiagonalNetProblem, temperature):
    """Coefficients (A, B, C) of ``A v² + B v + C = 0`` whose roots are the extrema of p₊ (derived).

    ``d log p₊/dv = 0`` ⇔ ``7α₁T v² + (β₁ − 10α₂T) v − (β₂' − 3α₃T) = 0`` (derived from arXiv 2308.06671, Eq. 15).
    """
    T = np.asarray(temperature, dtype=float)
    b2 = problem.beta2 - problem.weight_decay
    return 7.0 * problem.alpha1 * T, problem.beta1 - 10.0 * problem.alpha2 * T, -(b2 - 3.0 * problem.alpha3 * T)


def most_likely_roots_depth1(temperature: float, problem: DiagonalNetProblem) -> np.ndarray:
    """The positive roots of the extremum quadratic (sorted), i.e. interior extrema of p₊.

    One root (the mode) for ``T < T_c/3``; for ``T_c/3 < T < T*`` two (a local minimum
    and a local maximum); none above ``T*``.
    """
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    A, B, C = (float(c) for c in _depth1_quadratic(problem, T))
    disc = B * B - 4.0 * A * C
    if disc < 0:
        return np.empty(0)
    r = math.sqrt(disc)
    # numerically stable roots
    q = -0.5 * (B + math.copysign(r, B)) if B != 0 else -0.5 * r
    roots = [q / A] + ([C / q] if q != 0 else [])
    return np.array(sorted(x for x in roots if x > 0))


def most_likely_value_depth1(temperature: float, problem: DiagonalNetProblem) -> float:
    """The most likely value of ``v`` (the global mode of the depth-1 law).

    ``T < T_c/3``: the positive root of ``7α₁T v² + (β₁ − 10α₂T) v − (β₂' − 3α₃T) = 0``
    (→ β₂'/β₁ as T → 0). For ``T ≥ T_c/3`` the density diverges at 0 (or is ``δ(v)``), so 0.
    """
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    if T >= mode_onset_temperature(problem):
        return 0.0
    roots = most_likely_roots_depth1(T, problem)
    return float(roots[-1])


def _has_peak(problem: DiagonalNetProblem, T):
    """Vectorised: does p₊ have an interior local maximum at temperature(s) ``T`` in ``(T_c/3, T_c)``?

    There ``C > 0`` and ``A > 0``, so both roots are positive (a local min and a local max) iff the
    discriminant ``Q = B² − 4AC`` is positive and ``B < 0``.
    """
    A, B, C = _depth1_quadratic(problem, T)
    return (B * B - 4.0 * A * C > 0) & (B < 0)


def transitional_temperature(problem: DiagonalNetProblem) -> float:
    """``T*``: the temperature in ``(T_c/3, T_c)`` above which p₊ has no interior local maximum.

    Derived from Eq. 15: the extremum quadratic ``A v² + B v + C`` (see
    :func:`most_likely_roots_depth1`) has two positive roots iff ``Q(T) = B² − 4AC > 0`` and
    ``B = β₁ − 10α₂T < 0``, where ``Q(T) = (100α₂² − 84α₁α₃)T² + (28α₁β₂' − 20α₂β₁)T + β₁²``.
    The predicate can only switch at the roots of ``Q`` and at ``β₁/(10α₂)``; T* is the supremum
    of the temperatures in ``(T_c/3, T_c)`` where it holds. Between ``T_c/3`` and ``T*`` the
    density diverges at 0 *and* keeps a peak at ``v > 0`` (bimodal); between ``T*`` and ``T_c``
    it decreases monotonically from 0. Returns ``T_c`` if the peak survives up to ``T_c``,
    ``T_c/3`` if there is no bimodal window, ``nan`` if ``T_c ≤ 0``. ≈ 0.2016 for k = σ = 1.
    """
    problem = as_problem(problem)
    Tc = critical_temperature(problem)
    if Tc <= 0:
        return float("nan")
    p = problem
    b2 = p.beta2 - p.weight_decay
    qa = 100.0 * p.alpha2**2 - 84.0 * p.alpha1 * p.alpha3
    qb = 28.0 * p.alpha1 * b2 - 20.0 * p.alpha2 * p.beta1
    qc = p.beta1**2
    cands = [Tc / 3.0, Tc]
    if qa != 0:
        disc = qb * qb - 4.0 * qa * qc
        if disc >= 0:
            cands += [(-qb + math.sqrt(disc)) / (2 * qa), (-qb - math.sqrt(disc)) / (2 * qa)]
    elif qb != 0:
        cands.append(-qc / qb)
    if p.alpha2 != 0:
        cands.append(p.beta1 / (10.0 * p.alpha2))
    pts = sorted(c for c in cands if Tc / 3.0 <= c <= Tc)
    best = Tc / 3.0
    for lo, hi in zip(pts[:-1], pts[1:]):
        if hi > lo and bool(_has_peak(p, 0.5 * (lo + hi))):
            best = hi
    return float(best)


#: Phase labels of the depth-1 law, in order of increasing temperature.
PHASES = {
    "peaked": f"T below a third of the {CRITICAL_T}: p → 0 at v = 0, one peak at v > 0 (learning)",
    "bimodal": f"T between a third of the {CRITICAL_T} and T*: p diverges at v = 0 and keeps a peak at v > 0",
    "collapsing": f"T between T* and the {CRITICAL_T}: p diverges at v = 0 and decreases monotonically",
    "dead": f"T at or above the {CRITICAL_T}: p = δ(v): nothing is learned",
}


def paper_transitional_temperature(problem: DiagonalNetProblem) -> float:
    """The paper's closed form for ``T*``: the positive root of the discriminant ``Q(T) = 0``, unclipped.

    ``Q(T) = (100α₂² − 84α₁α₃)T² + (28α₁β₂' − 20α₂β₁)T + β₁²`` is the discriminant of the extremum quadratic
    of Eq. 15 (see :func:`transitional_temperature`); the paper reads ``T*`` off its larger root. That root
    is where the two interior extrema *would* merge, but it ignores that the density only exists below
    ``T_c`` and that the two roots must be positive (``β₁ − 10α₂T < 0``): it equals
    :func:`transitional_temperature` at k = σ = 1 (≈ 0.2016) and exceeds ``T_c`` at small σ (≈ 0.932 at
    k = 1, σ = 0.7, where ``T_c ≈ 0.402``). Kept to show the difference; the notebooks use
    :func:`transitional_temperature`. ``nan`` when ``Q`` has no positive root.
    """
    p = as_problem(problem)
    b2 = p.beta2 - p.weight_decay
    qa = 100.0 * p.alpha2**2 - 84.0 * p.alpha1 * p.alpha3
    qb = 28.0 * p.alpha1 * b2 - 20.0 * p.alpha2 * p.beta1
    qc = p.beta1**2
    if qa == 0:
        roots = [-qc / qb] if qb != 0 else []
    else:
        disc = qb * qb - 4.0 * qa * qc
        roots = [] if disc < 0 else [(-qb + math.sqrt(disc)) / (2 * qa), (-qb - math.sqrt(disc)) / (2 * qa)]
    positive = [r for r in roots if r > 0]
    return float(max(positive)) if positive else float("nan")


def phase_of(temperature: float, problem: DiagonalNetProblem) -> str:
    """Which of :data:`PHASES` the depth-1 law is in at ``temperature``."""
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    Tc = critical_temperature(problem)
    if T >= Tc:
        return "dead"
    if T < Tc / 3.0:
        return "peaked"
    return "bimodal" if bool(_has_peak(problem, T)) else "collapsing"


#: Integer codes of :data:`PHASES` used by :func:`phase_grid`.
PHASE_CODES = {"peaked": 0, "bimodal": 1, "collapsing": 2, "dead": 3}


def phase_grid(k: float, sigmas, temperatures, weight_decay: float = 0.0) -> np.ndarray:
    """Phase codes (:data:`PHASE_CODES`) of the Gaussian example on a (T, σ) grid, vectorised.

    Returns:
        int array of shape ``(len(temperatures), len(sigmas))``.
    """
    sig = check_array("sigmas", sigmas, ndim=1)
    temps = check_array("temperatures", temperatures, ndim=1)
    if np.any(sig <= 0) or np.any(temps <= 0):
        raise ValueError("sigmas and temperatures must be > 0")
    k = check_finite("k", k)
    gam = check_nonnegative("weight_decay", weight_decay)
    S, T = np.meshgrid(sig, temps)
    a1, a2, a3, b1, b2 = 2.0, 2.0 * k, 2.0 * k * k + S * S, 1.0, k - gam
    Tc = b2 / a3
    A, B, C = 7.0 * a1 * T, b1 - 10.0 * a2 * T, -(b2 - 3.0 * a3 * T)
    peak = (B * B - 4.0 * A * C > 0) & (B < 0)
    codes = np.where(T >= Tc, 3, np.where(T < Tc / 3.0, 0, np.where(peak, 1, 2)))
    return codes.astype(int)


def phase_diagram(k: float, sigmas, weight_decay: float = 0.0) -> dict:
    """The curves ``T_c(σ)``, ``T_c(σ)/3`` and ``T*(σ)`` of the Gaussian example at fixed ``k``.

    Args:
        k: teacher slope (> 0 for anything to be learned).
        sigmas: 1-D array of label-noise levels σ > 0.
        weight_decay: γ ≥ 0.
    Returns:
        dict with ``sigma``, ``T_c``, ``T_c_over_3``, ``T_star`` (arrays like ``sigmas``).
    """
    sig = check_array("sigmas", sigmas, ndim=1)
    if np.any(sig <= 0):
        raise ValueError("sigmas must all be > 0")
    probs = [DiagonalNetProblem.gaussian(k, s, weight_decay) for s in sig]
    Tc = np.array([critical_temperature(p) for p in probs])
    Ts = np.array([transitional_temperature(p) for p in probs])
    return {"sigma": sig, "T_c": Tc, "T_c_over_3": Tc / 3.0, "T_star": Ts}


# --------------------------------------------------------------------------------------------
# The closed forms themselves (unnormalised; complex-safe so they can be complex-step differentiated)
# --------------------------------------------------------------------------------------------
def log_density_depth0(v, temperature: float, problem: DiagonalNetProblem):
    """Paper Eq. 12 (with weight decay β₁ → β₁ + γ), unnormalised: ``log p(v)`` up to a constant.

    ``−(1 + β₁'/(2α₁T)) log g(v) − (α₂β₁' − α₁β₂)/(α₁√Δ T) · arctan((α₁v − α₂)/√Δ)``.
    Works on real or complex arrays (for complex-step derivatives).
    """
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    p = problem
    sd = math.sqrt(p.delta)
    b1 = p.beta1 + p.weight_decay
    v = np.asarray(v)
    g = p.g_polynomial(v)
    return (-(1.0 + b1 / (2.0 * p.alpha1 * T)) * np.log(g)
            - (p.alpha2 * b1 - p.alpha1 * p.beta2) / (p.alpha1 * sd * T) * np.arctan((p.alpha1 * v - p.alpha2) / sd))


def log_density_depth1(v, temperature: float, problem: DiagonalNetProblem):
    """Paper Eq. 15 (with weight decay β₂ → β₂ − γ), unnormalised, for ``v > 0``.

    ``(β₂'/(2α₃T) − 3/2) log v − (1 + β₂'/(4α₃T)) log g(v) − (α₃β₁ − α₂β₂')/(2α₃√Δ T) · arctan((α₁v − α₂)/√Δ)``.
    Works on real or complex arrays (for complex-step derivatives).
    """
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    p = problem
    sd = math.sqrt(p.delta)
    b2 = p.beta2 - p.weight_decay
    v = np.asarray(v)
    g = p.g_polynomial(v)
    return ((b2 / (2.0 * p.alpha3 * T) - 1.5) * np.log(v) - (1.0 + b2 / (4.0 * p.alpha3 * T)) * np.log(g)
            - (p.alpha3 * p.beta1 - p.alpha2 * b2) / (2.0 * T * p.alpha3 * sd)
            * np.arctan((p.alpha1 * v - p.alpha2) / sd))


# --------------------------------------------------------------------------------------------
# Depth 0 closed forms
# --------------------------------------------------------------------------------------------
def variance_depth0(temperature: float, problem: DiagonalNetProblem) -> float:
    """``Var[v] = T g(m) / (β₁' − Tα₁)`` with ``m = β₂/β₁'`` (derived from the linear drift; inf for
    ``T ≥ β₁'/α₁``). ``T/(1 − 2T)`` for ``k = σ = 1``, γ = 0: increases monotonically with T."""
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    b1 = problem.beta1 + problem.weight_decay
    denom = b1 - T * problem.alpha1
    if denom <= 0:
        return math.inf
    return float(T * problem.g_polynomial(problem.beta2 / b1) / denom)


def most_likely_value_depth0(temperature: float, problem: DiagonalNetProblem) -> float:
    """Mode of Eq. 12: ``v* = (β₂ + 2α₂T)/(β₁' + 2α₁T)`` (derived; → β₂/β₁' as T → 0)."""
    problem = as_problem(problem)
    T = check_positive("temperature", temperature)
    b1 = problem.beta1 + problem.weight_decay
    return (problem.beta2 + 2.0 * problem.alpha2 * T) / (b1 + 2.0 * problem.alpha1 * T)


def tail_exponent(depth: int, temperature: float | None = None, problem: DiagonalNetProblem | None = None) -> float:
    """The exponent ρ of the power-law tail ``p(v) ~ v^ρ`` as ``v → ∞``.

    ``D ≥ 1``: ``ρ = −5 + 3/(D+1)`` (−7/2 at D = 1), independent of T (paper).
    ``D = 0``: ``ρ = −2 − β₁'/(α₁T)``: depends on T (needs ``temperature`` and ``problem``).
    """
    D = check_int("depth", depth, minimum=0)
    if D >= 1:
        return -5.0 + 3.0 / (D + 1)
    if temperature is None or problem is None:
        raise ValueError("depth 0 needs temperature and problem: its tail exponent depends on T")
    T = check_positive("temperature", temperature)
    problem = as_problem(problem)
    return -2.0 - (problem.beta1 + problem.weight_decay) / (problem.alpha1 * T)


# --------------------------------------------------------------------------------------------
# The law itself
# --------------------------------------------------------------------------------------------
class StationaryLaw:
    """The stationary law of ``v`` for depth ``D`` at temperature ``T`` (normalised, tabulated).

    The density is the closed form (D = 0, 1) or the Fokker–Planck solution with one
    numerical integral (D ≥ 2). It is tabulated on a uniform grid in a coordinate ``z`` in
    which both tails decay exponentially — ``z = asinh((α₁v − α₂)/√Δ)`` for D = 0 and
    ``z = log|v|`` for D ≥ 1 — and integrated with Simpson's rule; the parts beyond
    ``|z| = 40`` are added from their exact exponential asymptotes. Normalisation and
    moments are checked against ``scipy.integrate.quad`` in :mod:`symsgd_core.stationary.checks`.

    Args:
        problem: the data moments and weight decay.
        temperature: T = η/S > 0.
        depth: D ≥ 0.
        branch: +1 (v > 0) or −1 (v < 0, the wrong sign for β₂ > 0); ignored for D = 0.
        z_step: grid spacing in z (default 0.01; 0.02 is ample for quick curves at T ≳ 0.02).

    Attributes:
        collapsed: True when no normalisable law exists and the stationary law is ``δ(v)``
            (D = 1 with T ≥ T_c on the positive branch; always on the wrong-sign branch).
        log_normaliser: ``log Z`` of the unnormalised density (nan when collapsed).
        table_error: Richardson estimate of the relative Simpson error of the table (step h vs 2h).

    Raises:
        ValueError: bad arguments, or D ≥ 2 with weight decay (then v = 0 attracts and only
            δ(v) is stationary; this package does not tabulate the metastable state).
    """

    def __init__(self, problem: DiagonalNetProblem, temperature: float, depth: int = 1, branch: int = 1,
                 z_step: float = _Z_STEP) -> None:
        problem = as_problem(problem)
        self.temperature = check_positive("temperature", temperature)
        self.depth = check_int("depth", depth, minimum=0)
        if branch not in (1, -1):
            raise ValueError(f"branch must be +1 or -1, got {branch!r}")
        self.branch = 1 if self.depth == 0 else int(branch)
        if self.depth >= 2 and problem.weight_decay > 0:
            raise ValueError("depth >= 2 laws are implemented without weight decay (with γ > 0, v = 0 attracts "
                             "and the only stationary law is δ(v))")
        self.problem = problem
        self.z_step = check_positive("z_step", z_step)
        if self.z_step > 0.1:
            raise ValueError(f"z_step must be <= 0.1 (table resolution), got {z_step}")
        # the branch's own moments (v → −v flips α₂, β₂) and exponents
        self._p = problem if self.branch == 1 else problem.mirrored()
        self.collapsed = self._is_collapsed()
        self.log_normaliser = float("nan")
        self.table_error = float("nan")
        if not self.collapsed:
            self._tabulate()

    # -- exponents of the closed forms ---------------------------------------------------------
    def _is_collapsed(self) -> bool:
        p, T = self._p, self.temperature
        if self.depth == 0:
            return False
        if self.depth == 1:
            return T >= critical_temperature(p)
        return p.beta2 <= 0  # D ≥ 2, γ = 0: the exponent integral diverges at 0 iff β₂ ≤ 0

    def _log_unnorm_z(self, z):
        """log of the unnormalised density of z (integration coordinate), elementwise."""
        p, T, D = self._p, self.temperature, self.depth
        sd = math.sqrt(p.delta)
        if D == 0:
            b1 = p.beta1 + p.weight_decay
            b0 = b1 / (2.0 * p.alpha1 * T)
            c0 = (p.alpha2 * b1 - p.alpha1 * p.beta2) / (p.alpha1 * sd * T)
            logcosh = np.abs(z) + np.log1p(np.exp(-2.0 * np.abs(z))) - math.log(2.0)
            gd = np.arctan(np.sinh(z))
            return -(1.0 + 2.0 * b0) * logcosh - c0 * gd
        v = np.exp(z)
        if D == 1:
            b2 = p.beta2 - p.weight_decay
            a = b2 / (2.0 * p.alpha3 * T) - 1.5
            b = b2 / (4.0 * p.alpha3 * T)
            c = (p.alpha3 * p.beta1 - p.alpha2 * b2) / (2.0 * T * p.alpha3 * sd)
            return (a + 1.0) * z - (1.0 + b) * np.log(p.g_polynomial(v)) - c * np.arctan((p.alpha1 * v - p.alpha2) / sd)
        return self._log_unnorm_z_deep(z)

    def _deep_integrand(self, z):
        """D ≥ 2: ``d/dz ∫ 2μ/σ² dv = −(β₁e^z − β₂)e^{(1−p)z} / ((D+1) T g(e^z)) + D/(D+1)``."""
        p, T, D = self._p, self.temperature, self.depth
        expo = 2.0 * D / (D + 1)
        v = np.exp(z)
        return -(p.beta1 * v - p.beta2) * np.exp((1.0 - expo) * z) / ((D + 1) * T * p.g_polynomial(v)) + D / (D + 1.0)

    def _log_unnorm_z_deep(self, z):
        """D ≥ 2 (width 1, γ = 0): ``log p_z = z − log σ²(v) + ∫_0^z (2μ/σ²)(dv/dz) dz`` (v = e^z).

        The integral comes from a Gauss–Legendre panel table built outward from z = 0 (no
        cancellation at the far left, where the integrand is huge), plus a 6-point Gauss–Legendre
        piece from the nearest table node to each query point.
        """
        p, T, D = self._p, self.temperature, self.depth
        expo = 2.0 * D / (D + 1)
        z = np.asarray(z, dtype=float)
        zt = self._z
        j = np.clip(np.searchsorted(zt, z) - 1, 0, zt.size - 1)
        a = zt[j]
        x, w = np.polynomial.legendre.leggauss(6)
        half = 0.5 * (z - a)
        nodes = a[..., None] + half[..., None] * (x + 1.0)
        piece = half * np.sum(w * self._deep_integrand(nodes), axis=-1)
        cum = self._deep_cum[j] + piece
        v = np.exp(z)
        return z - np.log(4.0 * (D + 1) ** 2 * T * p.g_polynomial(v)) - 2.0 * expo * z + cum

    def _build_deep_table(self, z) -> None:
        """Cumulative ``∫_0^z`` of the D ≥ 2 exponent integrand at the grid nodes.

        Each panel is integrated by 6-point Gauss–Legendre (error ~ h¹² for this smooth integrand)
        and the panels are summed outward from z = 0, so far-left values (huge integrand) never
        pollute the bulk by cancellation.
        """
        x, w = np.polynomial.legendre.leggauss(6)
        a, b = z[:-1], z[1:]
        half = 0.5 * (b - a)
        nodes = a[:, None] + half[:, None] * (x + 1.0)
        panels = half * np.sum(w * self._deep_integrand(nodes), axis=1)
        i0 = int(np.argmin(np.abs(z)))
        cum = np.zeros(z.size)
        cum[i0 + 1:] = np.cumsum(panels[i0:])
        cum[:i0] = -np.cumsum(panels[:i0][::-1])[::-1]
        self._deep_cum = cum

    def _tail_rates(self, m: int) -> tuple[float, float]:
        """Exponential decay rates in z of ``|v|^m p_z`` at z → −∞ and z → +∞ (inf: faster)."""
        p, T, D = self._p, self.temperature, self.depth
        if D == 0:
            b1 = p.beta1 + p.weight_decay
            r = 1.0 + b1 / (p.alpha1 * T) - m
            return r, r
        upper = 4.0 - 3.0 / (D + 1) - m
        if D == 1:
            b2 = p.beta2 - p.weight_decay
            return b2 / (2.0 * p.alpha3 * T) - 0.5 + m, upper
        return math.inf, upper

    def _tabulate(self) -> None:
        n = int(round(2 * _Z_HALF_WIDTH / self.z_step))
        z = np.linspace(-_Z_HALF_WIDTH, _Z_HALF_WIDTH, n + 1)
        self._z = z
        if self.depth >= 2:
            self._build_deep_table(z)
        logf = self._log_unnorm_z(z)
        self._shift = float(np.max(logf))
        f = np.exp(logf - self._shift)
        self._f = f
        r_lo, r_hi = self._tail_rates(0)
        tail_lo = f[0] / r_lo if math.isfinite(r_lo) else 0.0
        tail_hi = f[-1] / r_hi
        cum = cumulative_simpson(f, x=z, initial=0.0)
        total = tail_lo + cum[-1] + tail_hi
        self._cdf_grid = (tail_lo + cum) / total
        self._tail_lo_mass = tail_lo / total
        self._total = total
        # Richardson estimate of the Simpson error of the normaliser (step h vs 2h)
        coarse = tail_lo + float(simpson(f[::2], x=z[::2])) + tail_hi
        self.table_error = abs(total - coarse) / 15.0 / total
        self.log_normaliser = self._shift + math.log(total)

    # -- coordinates --------------------------------------------------------------------------
    def _z_of_v(self, v):
        """Integration coordinate of v (elementwise; v on the law's support)."""
        p = self._p
        if self.depth == 0:
            return np.arcsinh((p.alpha1 * v - p.alpha2) / math.sqrt(p.delta))
        with np.errstate(divide="ignore"):
            return np.log(self.branch * v)

    def _v_of_z(self, z):
        p = self._p
        if self.depth == 0:
            return (p.alpha2 + math.sqrt(p.delta) * np.sinh(z)) / p.alpha1
        return self.branch * np.exp(z)

    def _log_dv_dz(self, z):
        p = self._p
        if self.depth == 0:
            return 0.5 * math.log(p.delta) - math.log(p.alpha1) + np.log(np.cosh(z))
        return np.asarray(z, dtype=float)

    # -- public API ---------------------------------------------------------------------------
    @property
    def support(self) -> tuple[float, float]:
        """``(−inf, inf)`` for D = 0, ``(0, inf)`` or ``(−inf, 0)`` for D ≥ 1."""
        if self.depth == 0:
            return (-math.inf, math.inf)
        return (0.0, math.inf) if self.branch == 1 else (-math.inf, 0.0)

    def _require_law(self) -> None:
        if self.collapsed:
            raise ValueError(f"no normalisable law at T = {self.temperature:g} (depth {self.depth}, branch "
                             f"{self.branch:+d}): the stationary law is δ(v = 0)")

    def log_pdf(self, v) -> np.ndarray:
        """Normalised log density at ``v`` (``−inf`` off the support). Raises if collapsed."""
        self._require_law()
        v = np.asarray(v, dtype=float)
        out = np.full(v.shape, -np.inf)
        lo, hi = self.support
        inside = (v > lo) & (v < hi) & np.isfinite(v)
        if np.any(inside):
            z = self._z_of_v(v[inside])
            logf = self._log_unnorm_z(z)
            out[inside] = logf - self.log_normaliser - self._log_dv_dz(z)
        return out

    def pdf(self, v) -> np.ndarray:
        """Normalised density at ``v`` (0 off the support). Raises if collapsed."""
        return np.exp(self.log_pdf(v))

    def cdf(self, v) -> np.ndarray:
        """``P(V ≤ v)`` (interpolated from the Simpson table; error ≲ 1e-7). Raises if collapsed."""
        self._require_law()
        v = np.asarray(v, dtype=float)
        lo, hi = self.support
        vv = np.clip(v, np.nextafter(lo, 0.0) if np.isfinite(lo) else -np.inf, hi)
        with np.errstate(invalid="ignore", divide="ignore"):
            z = self._z_of_v(np.where(vv == 0.0, self.branch * 1e-300, vv)) if self.depth >= 1 else self._z_of_v(vv)
        c = np.interp(z, self._z, self._cdf_grid, left=0.0, right=1.0)
        # exact exponential tails below the grid (relevant near T_c where mass sits at tiny |v|)
        r_lo, _ = self._tail_rates(0)
        below = z < self._z[0]
        if np.any(below) and math.isfinite(r_lo):
            c = np.where(below, self._tail_lo_mass * np.exp(r_lo * (z - self._z[0])), c)
        if self.branch == -1:
            c = 1.0 - c
        c = np.where(v <= lo, 0.0, np.where(v >= hi, 1.0, c))
        return c

    def ppf(self, q) -> np.ndarray:
        """Quantiles (inverse of :meth:`cdf`, by interpolation on the table). Raises if collapsed."""
        self._require_law()
        q = np.asarray(q, dtype=float)
        if np.any((q <= 0) | (q >= 1)):
            raise ValueError("quantile levels q must lie strictly between 0 and 1")
        qq = q if self.branch == 1 else 1.0 - q
        z = np.interp(qq, self._cdf_grid, self._z)
        return self._v_of_z(z)

    def sample(self, n: int, seed=0) -> np.ndarray:
        """``n`` independent draws (inverse CDF on the table; ``seed``: int or Generator). Raises if collapsed."""
        from ..core.validation import as_generator

        self._require_law()
        n = check_int("n", n, minimum=1)
        u = as_generator(seed).uniform(0.0, 1.0, size=n)
        u = np.clip(u, 1e-15, 1.0 - 1e-15)
        return self.ppf(u)

    def moment(self, m: int) -> float:
        """``E[v^m]`` (inf when the tail makes it diverge; ``0`` for m ≥ 1 when collapsed)."""
        m = check_int("m", m, minimum=0)
        if self.collapsed:
            return 1.0 if m == 0 else 0.0
        r_lo, r_hi = self._tail_rates(m)
        if r_hi <= 0 or r_lo <= 0:
            return math.inf
        vm = self._v_of_z(self._z) ** m
        h = self._f * vm
        body = float(simpson(h, x=self._z))
        tail_lo = h[0] / r_lo if math.isfinite(r_lo) else 0.0
        tail_hi = h[-1] / r_hi
        return (tail_lo + body + tail_hi) / self._total

    @property
    def mean(self) -> float:
        return self.moment(1)

    @property
    def variance(self) -> float:
        """``Var[v]`` (0 when collapsed, inf when the second moment diverges)."""
        m2 = self.moment(2)
        if not math.isfinite(m2):
            return math.inf
        m1 = self.moment(1)
        return max(m2 - m1 * m1, 0.0)

    @property
    def mode(self) -> float:
        """The most likely value: closed form for D = 0, 1 (0 when p diverges at 0 or collapsed);
        the grid argmax for D ≥ 2."""
        if self.collapsed:
            return 0.0
        if self.depth == 0:
            return most_likely_value_depth0(self.temperature, self.problem)
        if self.depth == 1:
            return self.branch * most_likely_value_depth1(self.temperature, self._p)
        zs = self._z
        logp = np.log(np.maximum(self._f, 1e-300)) - zs  # density in v: p_z / (dv/dz)
        return float(self.branch * np.exp(zs[int(np.argmax(logp))]))

    def grid_mode(self) -> float:
        """Argmax of the tabulated density of ``v`` (numerical, independent of the root formula)."""
        self._require_law()
        logp = np.log(np.maximum(self._f, 1e-300)) - self._log_dv_dz(self._z)
        return float(self._v_of_z(self._z[int(np.argmax(logp))]))

    def tail_exponent(self) -> float:
        """Exponent ρ of ``p(v) ~ |v|^ρ`` as ``|v| → ∞``."""
        return tail_exponent(self.depth, self.temperature, self._p)

    def tail_slope(self, v: float = 1e3) -> tuple[float, float]:
        """Local log–log slope ``d log p / d log|v|`` of the law at ``|v| = v`` and an error bound on it as ρ.

        The slope approaches ρ with corrections ∝ 1/v, so ``|slope(v) − ρ| ≈ 2·|slope(v) − slope(2v)|``
        (Richardson, exact for a pure 1/v correction); the bound doubles that for the next order and
        adds the central-difference error: returned as ``(slope, bound)``.
        """
        self._require_law()
        v = check_positive("v", v)
        h = 1e-3

        def slope(x):
            xs = self.branch * x * np.exp(np.array([-h, h]))
            return float(np.diff(self.log_pdf(xs))[0] / (2 * h))

        s1, s2 = slope(v), slope(2 * v)
        fd = h * h * abs(s1) + 1e3 * np.finfo(float).eps * max(1.0, abs(float(self.log_pdf(np.array([
            self.branch * v]))[0]))) / h
        return s1, 4.0 * abs(s1 - s2) + fd

    def interval_probabilities(self, edges) -> np.ndarray:
        """``P(edges[i] < V ≤ edges[i+1])`` for increasing ``edges`` (may include ±inf)."""
        e = np.asarray(edges, dtype=float)
        if e.ndim != 1 or e.size < 2 or np.any(np.diff(e) <= 0):
            raise ValueError("edges must be a strictly increasing 1-D array with at least 2 entries")
        return np.diff(self.cdf(e))
