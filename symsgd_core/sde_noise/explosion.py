"""Does SGD's SDE explode? The analysis (Notebook 05; a failing bound, a 1-D reduction, its correction).

The SDE ``dθ = D(θ) dt + sqrt(T C(θ)) dW`` (:mod:`.sde`; ``D = −∇𝓛_γ``, ``C = (1/N)Σ g_k g_kᵀ − ḡḡᵀ``) has
polynomial coefficients. Along a ray ``θ = λφ`` (‖φ‖ = 1) the end-to-end map is homogeneous of degree L
(``A(λφ) = λ^L A(φ)``), the residual ``r_k = λ^L A_k(φ) − A*_k`` is ≈ A at large λ, and ``∇A_k`` has degree L − 1,
so ``g_k = 2 r_k ∇A_k`` has degree 2L − 1. Hence (Euler: ``⟨θ, ∇A_k⟩ = L A_k``)

* the drift's pull ``−2⟨θ, D⟩ = (4L/N) Σ r_k A_k + 4γ‖θ‖²`` grows like ``λ^{2L}``,
* the noise ``T tr C`` grows like ``λ^{2(2L−1)}``,

and the Khasminskii/Mao non-explosion bound ``2⟨θ, D⟩ + T tr C ≤ K(1 + ‖θ‖²)`` fails for L ≥ 2 (its left side over
``1 + ‖θ‖²`` grows like ``λ^{4L−4}``): :func:`ray_growth`, :func:`khasminskii_rays`. At L = 1 both grow like λ² and
the bound holds (the broken input of the check ``sde_noise.khasminskii_fails``).

**The frozen-direction reduction (evidence, not proof).** On the ray through a balanced, aligned rank-1 point with
φ frozen, the norm obeys ``ds = b(s) dt + σ(s) dW``, ``b(s) = φ·D(sφ)``, ``σ²(s) = T φᵀC(sφ)φ``
(:func:`reduced_coefficients`, from the full model); at large s ``b ≈ −a s^{2L−1}``, ``σ ≈ c s^{2L−1}``. Its
Feller scale function ``p(s) = ∫ exp(−∫ 2b/σ²)`` (:func:`scale_function`) grows like s: +∞ is not reached, and
``P(reach b before a | s₀) = (p(s₀) − p(a))/(p(b) − p(a)) ≈ (s₀ − a)/(b − a)`` (:func:`passage_probability`,
:func:`power_passage`).

**What the reduction misses.** For the full SDE, Itô's formula for ``s = ‖θ‖`` adds the transverse noise's
outward push ``(T/2)(tr C − φᵀCφ)/s dt``; per unit of its quadratic variation ``T φᵀCφ/s² dt``, ``log s`` has the
drift ``μ = (tr C − 2φᵀCφ)/(2φᵀCφ) + (φ·D) s/(T φᵀCφ)`` (:func:`log_norm_drift`), which tends to ``(f − 1)/2`` at
large s, with ``f = tr C/φᵀCφ − 1`` the transverse share of the noise (:func:`transverse_share`). If f stayed at a
value along a path, the scale function would be ``~ s^{1−f}`` (exponent ``β = 1 − f``): unbounded for f < 1
(no explosion), bounded for f > 1 (+∞ reached with positive probability). The frozen reduction is f = 0.
Measured here: f ≈ 4.33 on the rank-1 minimum's ray and ≈ 3.75 on the rank-2 minimum's, 9–83 on random rays,
and from below 0.1 to above 10⁶ over random directions of the invariant rank-1 subspace
(:func:`rank_one_subspace_shares`; 11 % below 1): on the rays the reduction freezes, f > 1, so the frozen
reduction is not self-consistent. But the direction moves. :func:`drift_at_infinity` follows the SDE's
leading-order part at large norm (drift negligible, target dropped): started on the rank-1 minimum's direction,
the paths leave it and see on average f_eff = 0.60 ± 0.05 (128 paths, 2·10⁴ steps after a burn-in of 4000,
ρ = 0.02, seed 0; 0.54 ± 0.06 with seed 2, 0.54 ± 0.12 at ρ = 0.01): log‖θ‖ drifts down per unit of its
quadratic variation, and the scale exponent along the paths is β ≈ 0.4, not the frozen reduction's 1. That is
evidence against explosion, not a proof (an ergodic average of f over the direction's law at infinity would be
one).

:func:`passage_table` compares measured excursion heights with both predictions (Wilson intervals).
Costs (one core, measured warm): :func:`khasminskii_rays` 3 ms, :func:`scale_function` (6 levels) 0.1 s,
:func:`transverse_share` 0.1 ms per state, :func:`rank_one_subspace_shares` (2000 directions) 0.05 s,
:func:`drift_at_infinity` 0.8 ms per step at 32 paths, 2.3 ms at 128 (the default 32 × 6000: 5 s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.seeding import tagged_stream
from ..core.stats import Z95, wilson
from ..core.validation import check_int, check_nonnegative, check_positive, check_positive_int
from ..dln import Architecture, CompletionProblem, Params, check_problem_fits, make_architecture, per_entry_gradients
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from ..rank_jumps.experiments import rank_one_minimum, start_minimum

__all__ = [
    "INFINITY_TASK", "infinity_task", "stored_infinity",
    "DEGREE_BAND", "RAY_SCALES", "SHARE_SCALES", "DriftAtInfinity", "PassageRow", "RayGrowth", "ScaleFunction",
    "asymptotic_coefficients", "direction", "drift_at_infinity", "khasminskii_rays", "log_norm_drift",
    "passage_probability", "passage_table", "power_passage", "rank_one_subspace_shares", "ray_directions", "ray_growth",
    "reduced_coefficients", "scale_function", "sde_terms", "slope_variation", "transverse_share",
    "transverse_share_rows",
]

#: The norms ‖θ‖ = λ at which the growth exponents are fitted (far beyond the minima's ‖θ‖ ≈ 2.5–2.7: the
#: subleading terms are smaller by λ^{−L} ≤ 1e-8 at L = 4).
RAY_SCALES = (1e2, 1e3, 1e4, 1e5)
#: A growth exponent along a ray is the degree of a polynomial in λ, an integer: a fitted exponent within ½ of
#: the expected degree identifies it (halfway to the next integer).
DEGREE_BAND = 0.5
#: The factors by which :func:`transverse_share_rows` scales each point (the brief's λ = 5, 10, 100).
SHARE_SCALES = (5.0, 10.0, 100.0)
#: Stream tag of the random directions (:func:`ray_directions`, :func:`rank_one_subspace_shares`).
_DIRECTION_TAG = 61
_SUBSPACE_TAG = 62
_INFINITY_TAG = 63


def _flat(theta, arch: Architecture | None) -> tuple[np.ndarray, Architecture]:
    """``(R, P)`` float64 states and their architecture, from a Params or an array plus ``arch``."""
    if isinstance(theta, Params):
        return theta.flat, theta.arch
    if arch is None:
        raise ValueError("theta given as an array needs its architecture (arch=...)")
    flat = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    if flat.ndim != 2 or flat.shape[1] != arch.n_params:
        raise ValueError(f"theta must be (R, {arch.n_params}), got {flat.shape}")
    return flat, arch


def sde_terms(theta, problem: CompletionProblem, *, temperature: float = EXP.lr_hot,
              weight_decay: float = EXP.weight_decay_hot, arch: Architecture | None = None) -> dict:
    """The SDE's coefficients at states ``theta`` (Params, or ``(R, P)`` with ``arch``), from the per-entry gradients.

    Returns a dict of arrays: ``s`` (R,) = ‖θ‖; ``phi`` (R, P) = θ/‖θ‖; ``drift`` (R, P) = D = −ḡ − 2γθ;
    ``tr_c`` (R,) = tr C; ``radial_c`` (R,) = φᵀCφ; ``radial_drift`` (R,) = φ·D; ``pull`` (R,) = −2⟨θ, D⟩;
    ``noise`` (R,) = T tr C. C = GᵀG with G = (g_k − ḡ)/√N (never formed). Raises on a state with θ = 0.
    """
    flat, arch = _flat(theta, arch)
    check_problem_fits(arch, problem)
    T = check_nonnegative("temperature", temperature)
    gamma = check_nonnegative("weight_decay", weight_decay)
    if not np.all(np.isfinite(flat)):
        raise ValueError("theta must be finite")
    s = np.linalg.norm(flat, axis=1)
    if np.any(s == 0):
        raise ValueError("θ = 0 has no direction")
    g = per_entry_gradients(flat, arch, problem)
    gbar = g.mean(axis=1)
    drift = -gbar - 2.0 * gamma * flat
    G = (g - gbar[:, None, :]) / math.sqrt(g.shape[1])
    phi = flat / s[:, None]
    tr_c = np.sum(G * G, axis=(1, 2))
    radial_c = np.sum(np.einsum("rnp,rp->rn", G, phi) ** 2, axis=1)
    return dict(s=s, phi=phi, drift=drift, tr_c=tr_c, radial_c=radial_c,
                radial_drift=np.sum(phi * drift, axis=1), pull=-2.0 * np.sum(flat * drift, axis=1),
                noise=T * tr_c)


# ------------------------------------------------------------------------------------------ 1. the failing bound
def direction(point) -> np.ndarray:
    """The unit direction ``θ/‖θ‖`` ``(P,)`` of one state (a one-run Params or a ``(P,)`` array)."""
    flat = point.flat[0] if isinstance(point, Params) else np.asarray(point, dtype=np.float64).ravel()
    n = float(np.linalg.norm(flat))
    if not (np.isfinite(n) and n > 0):
        raise ValueError("a direction needs a finite nonzero θ")
    return flat / n


def ray_directions(depth: int = EXP.depth, width: int = EXP.width, n_random: int = 3, seed: int = 0,
                   eps: float = EXP.eps) -> dict:
    """The rays of the bound: ``{label: φ (P,)}``, unit vectors: the rank-2 minimum (``"rank-2 minimum"``), the
    rank-1 minimum (``"rank-1 minimum"``) of notebook 04's ε-completion at this depth and width, and ``n_random``
    standard normal directions (stream ``tagged_stream(seed, 61)``)."""
    n_random = check_int("n_random", n_random, minimum=0)
    out = {"rank-2 minimum": direction(start_minimum(eps=eps, depth=depth, width=width)[0]),
           "rank-1 minimum": direction(rank_one_minimum(eps=eps, depth=depth, width=width))}
    P = make_architecture((2, 2), depth, width).n_params
    rng = tagged_stream(seed, _DIRECTION_TAG)
    for i in range(n_random):
        out[f"random {i}"] = direction(rng.standard_normal(P))
    return out


@dataclass(frozen=True)
class RayGrowth:
    """The two sides of the Khasminskii bound along one ray ``θ = λφ``.

    Attributes:
        label: the ray's name.  depth: L.  scales: ``(K,)`` the λ = ‖θ‖ used.
        pull: ``(K,)`` −2⟨θ, D⟩.  noise: ``(K,)`` T tr C.  ratio: ``(K,)`` (2⟨θ, D⟩ + T tr C)/(1 + ‖θ‖²).
        pull_exponent, noise_exponent: least-squares slopes of log(·) against log λ (NaN where the quantity is ≤ 0
            somewhere: a log-log slope of a nonpositive quantity is not a growth rate).
        ratio_exponent: the same slope for ``1 + max(ratio, 0)``: the growth of the ratio's positive part, which is
            what no K can bound (0 where the left side is ≤ 0 at every λ: the bound then holds with K = 0).
    """

    label: str
    depth: int
    scales: np.ndarray
    pull: np.ndarray
    noise: np.ndarray
    ratio: np.ndarray
    pull_exponent: float
    noise_exponent: float
    ratio_exponent: float

    @property
    def expected(self) -> tuple[int, int, int]:
        """The degrees homogeneity gives: pull 2L, noise 2(2L − 1), ratio 4L − 4."""
        L = self.depth
        return 2 * L, 4 * L - 2, 4 * L - 4

    @property
    def exponent_error(self) -> float:
        """The larger of |fitted − expected| for the pull and the noise (NaN if either was not fitted)."""
        e = self.expected
        return max(abs(self.pull_exponent - e[0]), abs(self.noise_exponent - e[1]))


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    if np.any(~np.isfinite(y)) or np.any(y <= 0):
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def ray_growth(phi: np.ndarray, arch: Architecture, problem: CompletionProblem, *, label: str = "ray",
               temperature: float = EXP.lr_hot, weight_decay: float = EXP.weight_decay_hot,
               scales=RAY_SCALES) -> RayGrowth:
    """The pull −2⟨θ, D⟩, the noise T tr C and the bound's ratio along ``θ = λ φ/‖φ‖``, λ in ``scales``, with their
    fitted log-log exponents (:class:`RayGrowth`)."""
    phi = direction(phi)
    lam = np.asarray(scales, dtype=np.float64)
    if lam.ndim != 1 or lam.size < 2 or np.any(lam <= 0):
        raise ValueError("scales must hold at least two positive norms")
    t = sde_terms(lam[:, None] * phi[None, :], problem, temperature=temperature, weight_decay=weight_decay,
                  arch=arch)
    ratio = (-t["pull"] + t["noise"]) / (1.0 + lam * lam)
    return RayGrowth(label, arch.depth, lam, t["pull"], t["noise"], ratio, _slope(lam, t["pull"]),
                     _slope(lam, t["noise"]), _slope(lam, 1.0 + np.maximum(ratio, 0.0)))


def khasminskii_rays(depth: int = EXP.depth, width: int = EXP.width, n_random: int = 3, seed: int = 0, *,
                     temperature: float = EXP.lr_hot, weight_decay: float = EXP.weight_decay_hot,
                     scales=RAY_SCALES) -> list[RayGrowth]:
    """:func:`ray_growth` on every ray of :func:`ray_directions` (notebook 04's ε-completion at this depth)."""
    arch = make_architecture((2, 2), depth, width)
    problem = EXP.problem
    return [ray_growth(phi, arch, problem, label=lab, temperature=temperature, weight_decay=weight_decay,
                       scales=scales)
            for lab, phi in ray_directions(depth, width, n_random, seed).items()]


# ------------------------------------------------------------------------------------------ 2. the 1-D reduction
def reduced_coefficients(s, phi: np.ndarray, arch: Architecture, problem: CompletionProblem, *,
                         temperature: float = EXP.lr_hot, weight_decay: float = EXP.weight_decay_hot,
                         extra_ito: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The frozen-direction SDE ``ds = b(s) dt + σ(s) dW`` of the norm on the ray through φ: ``(b, σ²)``, each
    shaped like ``s``.

    ``b(s) = φ·D(sφ)`` and ``σ²(s) = T φᵀC(sφ)φ`` from the full model (no approximation but freezing φ).
    ``extra_ito = k`` adds ``(k/2) σ²(s)/s`` to b: the outward Itô push of transverse noise whose share is
    ``f = k`` (:func:`transverse_share`); k = f(φ) gives the radial drift of ‖θ‖ at the frozen direction, and a
    k > 1 makes the scale function bounded (the check's broken input).
    """
    s = np.asarray(s, dtype=np.float64)
    if np.any(~np.isfinite(s)) or np.any(s <= 0):
        raise ValueError("s must be positive and finite")
    phi = direction(phi)
    k = float(extra_ito)
    t = sde_terms(s.reshape(-1, 1) * phi[None, :], problem, temperature=temperature, weight_decay=weight_decay,
                  arch=arch)
    sig2 = temperature * t["radial_c"]
    b = t["radial_drift"] + 0.5 * k * sig2 / s.ravel()
    return b.reshape(s.shape), sig2.reshape(s.shape)


def asymptotic_coefficients(phi: np.ndarray, arch: Architecture, problem: CompletionProblem, *,
                            temperature: float = EXP.lr_hot, weight_decay: float = EXP.weight_decay_hot,
                            extra_ito: float = 0.0) -> dict:
    """The leading terms ``b ≈ −a s^{2L−1}``, ``σ ≈ c s^{2L−1}`` of :func:`reduced_coefficients`, exactly.

    With ``α_k = A_k(φ)`` (the observed entries of A at the unit direction): ``a = (2L/N) Σ α_k²`` and
    ``c² = 4L²T Var_k(α_k²)`` (Var over the N entries, 1/N). ``extra_ito = k`` adds ``(k/2)c²`` to the s^{4L−3}
    term of b, which then leads. Returns ``a``, ``c2`` and ``tail(s)``: the bound
    ``∫_s^∞ |2b/σ²| ≈ (2a/c²) s^{−(2L−2)}/(2L−2)`` for k = 0 (NaN otherwise).
    """
    phi = direction(phi)
    L = arch.depth
    A = Params(arch, phi[None, :]).end_to_end()[0]
    rows, cols, _ = problem.entries
    alpha = A[rows, cols]
    a = 2.0 * L / alpha.size * float(np.sum(alpha**2))
    c2 = 4.0 * L * L * temperature * float(np.var(alpha**2))
    k = float(extra_ito)

    def tail(s):
        if k != 0 or L < 2 or c2 <= 0:
            return float("nan")
        return 2.0 * a / c2 * float(s) ** (-(2 * L - 2)) / (2 * L - 2)

    return dict(a=a, c2=c2, tail=tail)


@dataclass(frozen=True)
class ScaleFunction:
    """The Feller scale function of a 1-D SDE at chosen norms, with ``p(s_ref) = 0`` at ``s_ref = min(levels)``.

    Attributes:
        levels: ``(K,)`` sorted norms.  p: ``(K,)`` ``p(s) = ∫_{s_ref}^s exp(−∫_{s_ref}^u 2b/σ²) du``.
        error: ``(K,)`` a bound on each value's quadrature error: |p on the grid − p on every other point|
            (the trapezoid's error falls 4× per halving, so this is ≥ 3× the fine grid's error).
        n_nodes: grid nodes used.
    """

    levels: np.ndarray
    p: np.ndarray
    error: np.ndarray
    n_nodes: int

    def at(self, s: float) -> tuple[float, float]:
        """``(p(s), error)`` at one of the levels."""
        i = np.flatnonzero(np.isclose(self.levels, s, rtol=1e-12, atol=0))
        if i.size != 1:
            raise ValueError(f"{s} is not one of the levels {self.levels.tolist()}")
        return float(self.p[i[0]]), float(self.error[i[0]])


def _cumtrapz(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(0.5 * (y[1:] + y[:-1]) * np.diff(x))])


def scale_function(levels, phi: np.ndarray, arch: Architecture, problem: CompletionProblem, *,
                   temperature: float = EXP.lr_hot, weight_decay: float = EXP.weight_decay_hot,
                   extra_ito: float = 0.0, per_decade: int = 400) -> ScaleFunction:
    """The scale function of the frozen-direction SDE (:func:`reduced_coefficients`) at ``levels`` (norms > 0).

    Quadrature: the trapezoid rule in ``x = log s`` on a grid with ``per_decade`` nodes per decade (rounded up to an
    even number between consecutive levels, each level a node), for ``J(x) = ∫ 2b/σ² s dx`` and then
    ``p = ∫ exp(−J) s dx``; the same on every other node gives the error bound (:class:`ScaleFunction`).
    Raises if σ² vanishes on the grid (the scale function is then not defined there).
    """
    lv = np.unique(np.asarray(levels, dtype=np.float64))
    if lv.size < 2 or np.any(lv <= 0) or np.any(~np.isfinite(lv)):
        raise ValueError("levels must hold at least two distinct positive norms")
    per_decade = check_positive_int("per_decade", per_decade)
    xs = np.log(lv)
    pieces = []
    for x0, x1 in zip(xs[:-1], xs[1:]):
        m = max(2, 2 * math.ceil(per_decade * (x1 - x0) / math.log(10) / 2))
        pieces.append(np.linspace(x0, x1, m + 1)[:-1])
    x = np.concatenate(pieces + [xs[-1:]])
    at_level = np.searchsorted(x, xs)
    s = np.exp(x)
    b, sig2 = reduced_coefficients(s, phi, arch, problem, temperature=temperature, weight_decay=weight_decay,
                                   extra_ito=extra_ito)
    if np.any(sig2 <= 0):
        raise ValueError("σ² vanishes on the grid: the scale function is not defined there")
    integrand = 2.0 * b / sig2 * s

    def p_on(idx):
        J = _cumtrapz(integrand[idx], x[idx])
        return _cumtrapz(np.exp(-J) * s[idx], x[idx])

    fine = p_on(np.arange(x.size))
    coarse_idx = np.unique(np.concatenate([np.arange(0, x.size, 2), at_level]))
    coarse = p_on(coarse_idx)
    p = fine[at_level]
    err = np.abs(p - coarse[np.searchsorted(coarse_idx, at_level)])
    return ScaleFunction(lv, p, err, int(x.size))


def slope_variation(a: float, b: float, phi: np.ndarray, arch: Architecture, problem: CompletionProblem, *,
                    temperature: float = EXP.lr_hot, weight_decay: float = EXP.weight_decay_hot,
                    per_decade: int = 400) -> tuple[float, float]:
    """``τ = ∫_a^b |2b(s)/σ²(s)| ds`` for the frozen-direction SDE (``extra_ito = 0``), and its quadrature error bound.

    ``log p'`` varies by at most τ on [a, b], so ``p'`` stays within a factor ``e^τ`` there and every passage
    probability between levels in [a, b] is within a factor ``e^τ`` of the local martingale's ``(s₀ − a)/(b − a)``
    (and a ratio of p-increments within ``e^τ`` of the ratio of the s-increments). Trapezoid in log s, error as in
    :func:`scale_function`.
    """
    a, b = check_positive("a", a), check_positive("b", b)
    if not a < b:
        raise ValueError(f"need a < b, got a={a}, b={b}")
    m = max(2, 2 * math.ceil(check_positive_int("per_decade", per_decade) * math.log10(b / a) / 2))
    x = np.linspace(math.log(a), math.log(b), m + 1)
    s = np.exp(x)
    bb, sig2 = reduced_coefficients(s, phi, arch, problem, temperature=temperature, weight_decay=weight_decay)
    if np.any(sig2 <= 0):
        raise ValueError("σ² vanishes on [a, b]")
    y = np.abs(2.0 * bb / sig2) * s
    fine = float(_cumtrapz(y, x)[-1])
    coarse = float(_cumtrapz(y[::2], x[::2])[-1])
    return fine, abs(fine - coarse)


def passage_probability(scale: ScaleFunction, s0: float, a: float, b: float) -> tuple[float, float]:
    """``P(reach b before a | s₀) = (p(s₀) − p(a))/(p(b) − p(a))`` from a :class:`ScaleFunction` holding a, s₀, b
    as levels, with its error bound (first order in the three values' errors)."""
    if not a < s0 < b:
        raise ValueError(f"need a < s0 < b, got a={a}, s0={s0}, b={b}")
    (pa, ea), (p0, e0), (pb, eb) = scale.at(a), scale.at(s0), scale.at(b)
    num, den = p0 - pa, pb - pa
    P = num / den
    return P, abs(P) * ((e0 + ea) / abs(num) + (eb + ea) / abs(den))


def power_passage(s0, a: float, b, beta: float = 1.0):
    """``(s₀^β − a^β)/(b^β − a^β)``: the passage probability of a diffusion whose scale function is ``s^β``
    (β = 1: a local martingale, ``(s₀ − a)/(b − a)``; β = 0: ``log(s₀/a)/log(b/a)``). Broadcasts over s0 and b."""
    s0, b = np.asarray(s0, dtype=np.float64), np.asarray(b, dtype=np.float64)
    a = check_positive("a", a)
    if np.any(s0 <= a) or np.any(b <= s0):
        raise ValueError("need a < s0 < b")
    if beta == 0:
        out = np.log(s0 / a) / np.log(b / a)
    else:
        out = (s0**beta - a**beta) / (b**beta - a**beta)
    return float(out) if out.ndim == 0 else out


# ------------------------------------------------------------------------------------------ 3. the correction
def transverse_share(theta, problem: CompletionProblem, *, arch: Architecture | None = None) -> np.ndarray:
    """``f = tr C/(φᵀCφ) − 1`` per state ``(R,)`` (θ: Params or ``(R, P)`` with ``arch``; φ = θ/‖θ‖): the noise's
    variance across the sphere relative to along the radius. ``β = 1 − f`` is the scale function's exponent if f
    stayed fixed (:func:`log_norm_drift`). Independent of T; homogeneous of degree 0 at large ‖θ‖."""
    t = sde_terms(theta, problem, temperature=1.0, weight_decay=0.0, arch=arch)
    if np.any(t["radial_c"] <= 0):
        raise ValueError("φᵀCφ = 0 at some state: the norm has no noise there and f is not defined")
    return t["tr_c"] / t["radial_c"] - 1.0


def log_norm_drift(theta, problem: CompletionProblem, *, temperature: float = EXP.lr_hot,
                   weight_decay: float = EXP.weight_decay_hot, arch: Architecture | None = None) -> np.ndarray:
    """The drift of ``log ‖θ‖`` per unit of its quadratic variation ``T φᵀCφ/s² dt`` (Itô), per state ``(R,)``:

    ``μ = (tr C − 2φᵀCφ)/(2φᵀCφ) + (φ·D) s/(T φᵀCφ) = (f − 1)/2 + (φ·D) s/(T φᵀCφ)``.

    (Itô: ``d‖θ‖ = φ·dθ + (T/2)(tr C − φᵀCφ)/s dt``; ``d log s = ds/s − (ds)²/(2s²)``.) At large s the last term
    falls like ``s^{2L}/s^{4L−2}`` and μ → (f − 1)/2.
    """
    T = check_positive("temperature", temperature)
    t = sde_terms(theta, problem, temperature=T, weight_decay=weight_decay, arch=arch)
    rc = t["radial_c"]
    return (t["tr_c"] - 2 * rc) / (2 * rc) + t["radial_drift"] * t["s"] / (T * rc)


def transverse_share_rows(scales=SHARE_SCALES, n_random: int = 3, seed: int = 0, depth: int = EXP.depth,
                          width: int = EXP.width) -> list[dict]:
    """f and β = 1 − f at each ray of :func:`ray_directions` scaled up: rows ``{label, scale, norm, f, beta}``.

    The minima are scaled by λ in ``scales`` (θ = λθ*); a random direction is put at the norm λ·‖θ_rank-1‖.
    """
    arch = make_architecture((2, 2), depth, width)
    problem = EXP.problem
    base = {"rank-2 minimum": start_minimum(depth=depth, width=width)[0].flat[0],
            "rank-1 minimum": rank_one_minimum(depth=depth, width=width).flat[0]}
    norm1 = float(np.linalg.norm(base["rank-1 minimum"]))
    for lab, phi in ray_directions(depth, width, n_random, seed).items():
        if lab.startswith("random"):
            base[lab] = norm1 * phi
    rows = []
    for lab, th in base.items():
        lam = np.asarray(scales, dtype=np.float64)
        f = transverse_share(lam[:, None] * th[None, :], problem, arch=arch)
        rows += [dict(label=lab, scale=float(x), norm=float(x * np.linalg.norm(th)), f=float(v), beta=float(1 - v))
                 for x, v in zip(lam, f)]
    return rows


def rank_one_subspace_shares(n: int = 2000, seed: int = 0, scale: float = 1e3, depth: int = EXP.depth,
                             width: int = EXP.width) -> np.ndarray:
    """f at ``n`` random directions of the invariant subspace of aligned rank-1 layers through the rank-1 minimum
    (``W₁ = u₁bᵀ, W_ℓ = c_ℓ u_ℓ u_{ℓ−1}ᵀ, W_L = a u_{L−1}ᵀ`` with the minimum's frames u_ℓ; b, c, a standard normal,
    stream ``tagged_stream(seed, 62)``), put at norm ``scale``: ``(n,)``."""
    n = check_positive_int("n", n)
    point = rank_one_minimum(depth=depth, width=width)
    arch = point.arch
    ws = [w[0] for w in point.layers()]
    L = len(ws)
    us = [np.linalg.svd(w)[0][:, 0] for w in ws[:-1]]
    rng = tagged_stream(seed, _SUBSPACE_TAG)
    v = rng.standard_normal((n, L + 2))
    layers = [np.einsum("i,rj->rij", us[0], v[:, :2])]
    for ell in range(1, L - 1):
        layers.append(v[:, 1 + ell, None, None] * np.outer(us[ell], us[ell - 1])[None])
    layers.append(np.einsum("ri,j->rij", v[:, L:L + 2], us[L - 2]))
    flat = np.concatenate([w.reshape(n, -1) for w in layers], axis=1)
    flat *= scale / np.linalg.norm(flat, axis=1, keepdims=True)
    return transverse_share(flat, EXP.problem, arch=arch)


@dataclass(frozen=True)
class DriftAtInfinity:
    """The norm's drift along paths of the SDE's leading-order part at large ‖θ‖ (:func:`drift_at_infinity`).

    Attributes:
        log_norm: ``(R,)`` per path, the sum of the increments of log ‖θ‖ after the burn-in.
        qv: ``(R,)`` per path, the quadratic variation ``Σ T φᵀCφ/s² dt`` of log ‖θ‖ over the same steps.
        f_eff: ``1 + 2 Σ log_norm / Σ qv``: the transverse share the paths see on average (per unit of quadratic
            variation); the scale function's exponent along them is ``beta_eff = 1 − f_eff``.
        f_se: its standard error (ratio estimator over the independent paths).
        f_median_end: the median of f over the paths at the last step.
        settings: the call's settings.
    """

    log_norm: np.ndarray
    qv: np.ndarray
    f_eff: float
    f_se: float
    f_median_end: float
    settings: dict

    @property
    def beta_eff(self) -> float:
        return 1.0 - self.f_eff


def drift_at_infinity(start=None, n_paths: int = 32, n_steps: int = 6000, burn_in: int = 1000, rho: float = 0.02,
                      seed: int = 0, temperature: float = EXP.lr_hot) -> DriftAtInfinity:
    """Follow the direction of SGD's SDE where ‖θ‖ is so large that only the leading-order noise counts.

    At large s the drift's share of the radial motion falls like ``s^{2−2L}`` (:func:`log_norm_drift`) and the
    residual is ≈ A: the SDE is ``dθ = sqrt(T C∞(θ)) dW`` with ``C∞`` built from ``g_k = 2A_k ∇A_k`` (the target
    dropped), homogeneous of degree 4L − 2. Its direction φ is then a diffusion of its own, and log s moves by
    ``(f(φ) − 1)/2`` per unit of quadratic variation plus a martingale. This runs it: exact-covariance Gaussian
    steps ``φ + sqrt(T h) Gᵀξ`` (G at φ, ``h = ρ²/(T tr C)`` so each step moves φ by about ρ), φ renormalised after
    each step, log s accumulated exactly. ``start``: a one-run Params or ``(P,)`` state on notebook 04's
    architecture (default: the rank-1 minimum; it then stays on the invariant rank-1 subspace); all paths start at
    its direction; normals from ``tagged_stream(seed, 63)``. Evidence, not proof: the leading-order SDE, a
    discretised path, and a finite average stand in for an ergodic limit.

    Cost: about 0.8 ms per step for 32 paths, 2.3 ms for 128 (one core).
    """
    n_paths, n_steps = check_positive_int("n_paths", n_paths), check_positive_int("n_steps", n_steps)
    burn_in = check_int("burn_in", burn_in, minimum=0, maximum=n_steps - 1)
    rho, T = check_positive("rho", rho), check_positive("temperature", temperature)
    arch = EXP.arch
    phi0 = direction(rank_one_minimum() if start is None else start)
    if phi0.size != arch.n_params:
        raise ValueError(f"start must have P = {arch.n_params} parameters")
    problem = CompletionProblem(np.zeros(EXP.problem.shape), EXP.problem.mask, "leading order")
    rng = tagged_stream(seed, _INFINITY_TAG)
    phi = np.repeat(phi0[None], n_paths, axis=0)
    N = problem.n_observed
    log_norm, qv = np.zeros(n_paths), np.zeros(n_paths)
    f = np.full(n_paths, np.nan)
    for n in range(n_steps):
        g = per_entry_gradients(phi, arch, problem)
        G = (g - g.mean(axis=1, keepdims=True)) / math.sqrt(N)
        tr_c = np.sum(G * G, axis=(1, 2))
        radial = np.sum(np.einsum("rnp,rp->rn", G, phi) ** 2, axis=1)
        if np.any(tr_c <= 0):
            raise RuntimeError("a path reached a direction without noise (C∞ = 0)")
        h = rho * rho / (T * tr_c)
        new = phi + np.sqrt(T * h)[:, None] * np.einsum("rn,rnp->rp", rng.standard_normal((n_paths, N)), G)
        norm = np.linalg.norm(new, axis=1)
        if n >= burn_in:
            log_norm += np.log(norm)
            qv += T * radial * h
        f = tr_c / radial - 1.0
        phi = new / norm[:, None]
    ratio = float(log_norm.sum() / qv.sum())
    resid = log_norm - ratio * qv
    se = 2.0 * math.sqrt(float(np.var(resid, ddof=1)) / n_paths) / float(qv.mean()) if n_paths > 1 else float("nan")
    settings = dict(n_paths=n_paths, n_steps=n_steps, burn_in=burn_in, rho=rho, seed=seed, temperature=T)
    return DriftAtInfinity(log_norm, qv, 1.0 + 2.0 * ratio, se, float(np.median(f)), settings)


# ------------------------------------------------------------------------------------------ 5. measured passages
@dataclass(frozen=True)
class PassageRow:
    """One level b of :func:`passage_table`.

    Attributes:
        level: b.  n: excursions that reached s₀ and are decided at b (returned, or reached b).
        k: of those, how many reached b.  fraction, lo, hi: k/n and its Wilson interval at ``z``.
        martingale: ``(s₀ − a)/(b − a)``.  corrected: ``(s₀^β − a^β)/(b^β − a^β)`` (NaN without β).
        martingale_inside, corrected_inside: whether each prediction lies in [lo, hi].
    """

    level: float
    n: int
    k: int
    fraction: float
    lo: float
    hi: float
    martingale: float
    corrected: float
    martingale_inside: bool
    corrected_inside: bool


def passage_table(max_heights, s0: float, a: float, levels, *, beta: float | None = None, open_=None,
                  z: float = Z95) -> list[PassageRow]:
    """Measured against predicted ``P(reach b before returning to a | reached s₀)`` for excursions above ``a``.

    Args:
        max_heights: ``(E,)`` per excursion, the largest ‖θ‖ between leaving ‖θ‖ ≤ a and returning to it.
        s0: the conditioning level (a < s₀); only excursions with max ≥ s₀ count.
        a: the return level.  levels: the b's (each > s₀).
        beta: the corrected exponent β = 1 − f (None: no corrected prediction).
        open_: optional ``(E,)`` bool, excursions still above a at the horizon: one counts at b if it reached b,
            and is left out at b otherwise (undecided).
        z: the Wilson interval's normal quantile (default 95 %).

    By the strong Markov property at the first passage over s₀, a diffusion with scale function p gives
    ``(p(s₀) − p(a))/(p(b) − p(a))`` whatever happened before.
    """
    h = np.asarray(max_heights, dtype=np.float64).ravel()
    if np.any(~np.isfinite(h)):
        raise ValueError("max_heights must be finite")
    a, s0 = check_positive("a", a), check_positive("s0", s0)
    if not a < s0:
        raise ValueError(f"need a < s0, got a={a}, s0={s0}")
    lv = np.asarray(levels, dtype=np.float64).ravel()
    if lv.size == 0 or np.any(lv <= s0):
        raise ValueError("levels must be nonempty and above s0")
    op = np.zeros(h.shape, bool) if open_ is None else np.asarray(open_, dtype=bool).ravel()
    if op.shape != h.shape:
        raise ValueError("open_ must have the shape of max_heights")
    reached = h >= s0
    rows = []
    for b in lv:
        hit = reached & (h >= b)
        decided = reached & (~op | hit)
        k, n = int(hit.sum()), int(decided.sum())
        frac, lo, hi = wilson(k, n, z)
        m = power_passage(s0, a, b, 1.0)
        c = power_passage(s0, a, b, beta) if beta is not None else float("nan")
        rows.append(PassageRow(float(b), n, k, frac, lo, hi, m, c, bool(lo <= m <= hi),
                               bool(lo <= c <= hi) if beta is not None else False))
    return rows


# ------------------------------------------------------------------------------------------ the stored grid's task
#: The grid's run of :func:`drift_at_infinity` (notebook 05 §3.1): 128 paths, 2·10⁴ steps after a burn-in of 4000.
INFINITY_TASK = dict(n_paths=128, n_steps=24_000, burn_in=4000, rho=0.02, seed=0)


def infinity_task(p: dict) -> dict:
    """:func:`drift_at_infinity` as a grid task (``kind="infinity"``; keys those of :data:`INFINITY_TASK`), JSON-able:
    its per-path ``log_norm`` and ``qv``, ``f_eff``, ``f_se``, ``f_median_end`` and ``seconds``."""
    import time

    t0 = time.perf_counter()
    far = drift_at_infinity(n_paths=p["n_paths"], n_steps=p["n_steps"], burn_in=p["burn_in"], rho=p["rho"],
                            seed=p["seed"])
    return {"log_norm": far.log_norm.tolist(), "qv": far.qv.tolist(), "f_eff": float(far.f_eff),
            "f_se": float(far.f_se), "f_median_end": float(far.f_median_end), "seconds": time.perf_counter() - t0}


def stored_infinity(grid) -> DriftAtInfinity:
    """The grid's :func:`infinity_task` result as a :class:`DriftAtInfinity` (its settings: the task's parameters)."""
    task = next((t for t in grid.tasks if t["kind"] == "infinity"), None)
    if task is None:
        raise ValueError("the grid has no 'infinity' task (python -m symsgd_core sweep sde05)")
    r = task["result"]
    return DriftAtInfinity(np.asarray(r["log_norm"]), np.asarray(r["qv"]), r["f_eff"], r["f_se"], r["f_median_end"],
                           dict(task["params"]))
