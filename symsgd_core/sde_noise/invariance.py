"""The aligned rank-1 subspace is invariant: rank 2 never comes back, as a theorem (Notebook 05; this project's).

Notation of :mod:`~symsgd_core.dln.network`: ``W_ℓ ∈ R^{d_{ℓ+1} × d_ℓ}``, ``d_1 = n`` (input),
``d_{L+1} = m`` (output), ``A = W_L ⋯ W_1``, flat layout of :class:`~symsgd_core.dln.network.Params`
(layer ℓ in C order at ``offsets[ℓ−1]:offsets[ℓ]``). Depth ``L ≥ 2``.

**Proposition (proved).** Fix unit vectors ``u_ℓ ∈ R^{d_{ℓ+1}}``, ℓ = 1..L−1 (one per hidden layer). The set

    M_u = {θ : W_1 = u_1 bᵀ,  W_ℓ = c_ℓ u_ℓ u_{ℓ−1}ᵀ (1 < ℓ < L),  W_L = a u_{L−1}ᵀ},   b ∈ R^n, c_ℓ ∈ R, a ∈ R^m,

is a linear subspace of dimension ``n + (L − 2) + m`` (``L + 2`` for the 2×2 ε-completion) on which
``A = (∏c) a bᵀ`` has rank ≤ 1. For any loss of A, at every θ ∈ M_u each per-entry gradient g_k lies in M_u,
and so do the weight-decay term −2γθ, the SDE's drift −∇𝓛_γ and every noise column g_k − ḡ. Hence M_u is invariant
for the Itô SDE ``dθ = −∇𝓛_γ dt + sqrt(T/N) Σ_k (g_k − ḡ) dW_k`` (up to its explosion time), and for SGD, GD,
fixed-step Euler–Maruyama and the adaptive step. Langevin's isotropic noise is not tangent to M_u.

*Proof.* (1) ``∇_{W_ℓ}A_ij = (W_L⋯W_{ℓ+1})ᵀ e_i e_jᵀ (W_{ℓ−1}⋯W_1)ᵀ``; on M_u, ``W_L⋯W_{ℓ+1} ∝ a u_ℓᵀ`` and
``W_{ℓ−1}⋯W_1 ∝ u_{ℓ−1} bᵀ``, so it is ∝ ``u_ℓ u_{ℓ−1}ᵀ`` (1 < ℓ < L), ``u_1·(row)`` (ℓ = 1), ``(column)·u_{L−1}ᵀ``
(ℓ = L): in M_u. g_k, ḡ, the drift −ḡ − 2γθ and g_k − ḡ are linear combinations of these and of θ ∈ M_u.
(2) Let Π project orthogonally onto M_u. The drift b(θ) and σ(θ) = sqrt(T/N)[g_k − ḡ]_k are polynomial, so
``dỹ = Πb(Πỹ) dt + Πσ(Πỹ) dW``, ỹ_0 = θ_0 ∈ M_u, has a unique strong solution up to explosion; (I − Π)ỹ_t = 0, so
Πỹ = ỹ and, by (1), Πb(ỹ) = b(ỹ), Πσ(ỹ) = σ(ỹ): ỹ solves the SDE, and pathwise uniqueness gives θ_t = ỹ_t ∈ M_u.
(Another square root of T·C has the same generator, hence the same law.) (3) A step of SGD, GD, Euler–Maruyama or
the adaptive step is ``θ ← (1 − 2γh)θ − Σ_k w_k g_k(θ)`` with real weights (:mod:`.sde`; h depends on θ only): by
(1) it stays in M_u. (4) Langevin adds sqrt(2τh) ζ, ζ ~ N(0, I_P): its part off M_u has P − dim M_u dimensions. ∎
(The engines' flush of entries below 10⁻⁷⁰ at L = 4 moves θ by far less than round-off.)

**Evidence, not proof** (:func:`invariance_evidence`): the distance of a state to the aligned subspace of its own
top singular vectors (:func:`transverse_distance`) decays after a jump, exponentially at rate 2γ. At the hot point
(η = 0.3, γ = 0.027, adaptive step h_max = η/16, ρ = 0.05, 8 paths to t = 3000, seed 0): 5 paths jumped and stayed
bounded; each decayed over 10.7–10.8 decades in 460 time units to round-off (≈ 1e−15) and stayed there; fitted
rate / 2γ = 1.004–1.005 over the whole decay, 0.999–1.003 below a distance of 10⁻⁴ (the first decades decay about
2 % faster). A heuristic for 2γ: dA vanishes on M_u's orthogonal complement (by the products of (1)), and the blocks
of the layers that would raise their rank get no data gradient and no noise to first order, so weight decay alone
contracts them. The distance to a *fixed* M_u need not decay to 0 (a random offset keeps about 40 % after 120 time
units of SGD): rotating the hidden layers is a symmetry, so the rank-1 minima form a continuum over u.

Functions: :func:`subspace_dim`, :func:`subspace_basis` / :func:`subspace_projector` (one subspace, ``(P, dim)``
/ ``(P, P)``), :func:`coordinates` / :func:`from_coordinates` / :func:`project` (per run, batched),
:func:`top_directions`, :func:`random_directions`, :func:`random_points`, :func:`tangent_defect`,
:func:`transverse_distance`, :func:`invariance_evidence`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.checking import roundoff_tolerance
from ..core.seeding import piece_seed, streams, tagged_stream
from ..core.validation import check_choice, check_nonnegative, check_positive, check_positive_int
from ..dln import (
    DEFAULT_RANK_TOL,
    Architecture,
    CompletionProblem,
    Params,
    check_problem_fits,
    epsilon_completion,
    per_entry_gradients,
    replicate,
    run_sde_adaptive,
)
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from ..rank_jumps.experiments import start_minimum
from .blowup import ADAPTIVE_LEVELS

__all__ = ["MIN_FIT_RECORDS", "NOISES", "SMALL_DISTANCE", "InvarianceEvidence", "SubspacePoints", "TangentDefect",
           "coordinates", "distance_floor", "from_coordinates", "invariance_evidence", "offset_off_subspace", "project",
           "random_directions", "random_points", "subspace_basis", "subspace_dim", "subspace_projector",
           "tangent_defect", "top_directions", "transverse_distance"]

#: Noise columns :func:`tangent_defect` tests: SGD's SDE (``g_k − ḡ``) or Langevin (the identity's columns).
NOISES = ("sde", "langevin")


def _check_arch(arch: Architecture) -> Architecture:
    if not isinstance(arch, Architecture):
        raise ValueError(f"arch must be an Architecture, got {type(arch).__name__}")
    if arch.depth < 2:
        raise ValueError(f"the aligned subspace needs depth L ≥ 2 (it has hidden layers), got L = {arch.depth}")
    return arch


def subspace_dim(arch: Architecture) -> int:
    """``dim M_u = n + (L − 2) + m`` (b, the c_ℓ and a): 6 = L + 2 for the 2×2 ε-completion at L = 4."""
    arch = _check_arch(arch)
    return arch.dims[0] + arch.depth - 2 + arch.dims[-1]


def _directions(arch: Architecture, directions, n_runs: int | None = None) -> list[np.ndarray]:
    """``directions`` (L − 1 unit vectors, each ``(d_{ℓ+1},)`` or ``(R, d_{ℓ+1})``) as a list of ``(R, d_{ℓ+1})``."""
    arch = _check_arch(arch)
    hidden = arch.dims[1:-1]
    if len(directions) != len(hidden):
        raise ValueError(f"need {len(hidden)} directions u_1..u_{{L−1}} (one per hidden layer), got {len(directions)}")
    out = []
    for k, (u, d) in enumerate(zip(directions, hidden)):
        u = np.asarray(u, dtype=np.float64)
        u = u[None] if u.ndim == 1 else u
        if u.ndim != 2 or u.shape[1] != d or (n_runs is not None and u.shape[0] not in (1, n_runs)):
            raise ValueError(f"directions[{k}] must have shape ({d},) or (R, {d}), got {np.shape(directions[k])}")
        norms = np.linalg.norm(u, axis=1)
        if not np.all(np.isfinite(u)) or np.any(np.abs(norms - 1.0) > 1e-8):
            raise ValueError(f"directions[{k}] must be finite unit vectors (norms {norms.tolist()})")
        out.append(np.broadcast_to(u, (n_runs, d)) if n_runs is not None else u)
    return out


def subspace_basis(arch: Architecture, directions) -> np.ndarray:
    """An orthonormal basis of M_u for one set of directions, as columns in the flat layout: ``(P, dim)``.

    Columns in the order of :func:`coordinates`: ``vec(u_1 e_qᵀ)`` (q = 1..n), ``vec(u_ℓ u_{ℓ−1}ᵀ)`` (ℓ = 2..L−1),
    ``vec(e_i u_{L−1}ᵀ)`` (i = 1..m); orthonormal because the blocks sit in different layers and each u is a unit
    vector.

    Args:
        arch: the architecture (L ≥ 2).  directions: L − 1 unit vectors ``u_ℓ (d_{ℓ+1},)``.
    """
    given = _directions(arch, directions)
    if any(u.shape[0] != 1 for u in given):
        raise ValueError("subspace_basis takes one set of directions (each (d,) or (1, d))")
    us = [u[0] for u in given]
    off, L = arch.offsets, arch.depth
    n, m = arch.dims[0], arch.dims[-1]
    B = np.zeros((arch.n_params, subspace_dim(arch)))
    col = 0
    for q in range(n):
        B[off[0]:off[1], col] = np.kron(us[0], np.eye(n)[q])
        col += 1
    for ell in range(1, L - 1):
        B[off[ell]:off[ell + 1], col] = np.kron(us[ell], us[ell - 1])
        col += 1
    for i in range(m):
        B[off[L - 1]:off[L], col] = np.kron(np.eye(m)[i], us[-1])
        col += 1
    return B


def subspace_projector(arch: Architecture, directions) -> np.ndarray:
    """The orthogonal projector onto M_u, ``Π = B Bᵀ`` (:func:`subspace_basis`): ``(P, P)``, rank ``dim M_u``."""
    B = subspace_basis(arch, directions)
    return B @ B.T


def coordinates(params: Params, directions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The coordinates of Π_u θ per run: ``b = W_1ᵀu_1 (R, n)``, ``c_ℓ = u_ℓᵀ W_ℓ u_{ℓ−1} (R, L−2)``,
    ``a = W_L u_{L−1} (R, m)`` (directions per run ``(R, d)`` or shared ``(d,)``)."""
    us = _directions(params.arch, directions, params.n_runs)
    ws = params.layers()
    b = np.einsum("rij,ri->rj", ws[0], us[0])
    c = np.stack([np.einsum("ri,rij,rj->r", us[ell], ws[ell], us[ell - 1]) for ell in range(1, len(ws) - 1)],
                 axis=1) if len(ws) > 2 else np.zeros((params.n_runs, 0))
    a = np.einsum("rij,rj->ri", ws[-1], us[-1])
    return b, c, a


def from_coordinates(arch: Architecture, directions, b, c, a) -> Params:
    """The point of M_u with coordinates ``b (R, n)``, ``c (R, L−2)``, ``a (R, m)``: a :class:`Params` of R runs."""
    b, c, a = (np.atleast_2d(np.asarray(x, dtype=np.float64)) for x in (b, c, a))
    R = b.shape[0]
    if b.shape != (R, arch.dims[0]) or c.shape != (R, arch.depth - 2) or a.shape != (R, arch.dims[-1]):
        raise ValueError(f"coordinates must be b (R, {arch.dims[0]}), c (R, {arch.depth - 2}), a (R, "
                         f"{arch.dims[-1]}); got {b.shape}, {c.shape}, {a.shape}")
    us = _directions(arch, directions, R)
    layers = [np.einsum("ri,rj->rij", us[0], b)]
    layers += [c[:, ell - 1, None, None] * np.einsum("ri,rj->rij", us[ell], us[ell - 1])
               for ell in range(1, arch.depth - 1)]
    layers.append(np.einsum("ri,rj->rij", a, us[-1]))
    return Params(arch, np.concatenate([w.reshape(R, -1) for w in layers], axis=1))


def project(params: Params, directions) -> Params:
    """``Π_u θ`` per run (the orthogonal projection onto M_u, layer by layer): a :class:`Params` like ``params``."""
    return from_coordinates(params.arch, directions, *coordinates(params, directions))


def top_directions(params: Params) -> tuple[np.ndarray, ...]:
    """The state's own directions: ``u_ℓ`` = the top left singular vector of ``W_ℓ``, ℓ = 1..L−1, each ``(R, d_{ℓ+1})``
    (sign arbitrary; M_u does not depend on it)."""
    _check_arch(params.arch)
    return tuple(np.linalg.svd(w)[0][:, :, 0] for w in params.layers()[:-1])


def transverse_distance(params: Params, directions=None) -> np.ndarray:
    """``‖θ − Π_u θ‖ / ‖θ‖`` per run: ``(R,)`` (0 at θ = 0, which lies in every M_u; NaN for a NaN state).

    Args:
        params: R states.  directions: the subspace's u (each ``(d,)`` or ``(R, d)``); default
            :func:`top_directions` of each state (the aligned subspace nearest to a nearly aligned state).
    """
    ok = np.all(np.isfinite(params.flat), axis=1)
    out = np.full(params.n_runs, np.nan)
    if not ok.any():
        return out
    sel = params.select(ok)
    if directions is None:
        us = top_directions(sel)
    else:
        us = [u[ok] if u.shape[0] == params.n_runs else u for u in _directions(params.arch, directions,
                                                                             params.n_runs)]
    diff = sel.flat - project(sel, us).flat
    norm = np.linalg.norm(sel.flat, axis=1)
    out[ok] = np.where(norm > 0, np.linalg.norm(diff, axis=1) / np.where(norm > 0, norm, 1.0), 0.0)
    return out


def _draw(arch: Architecture, n: int, seed: int, coordinates_too: bool):
    """Point i's draws from child i of ``SeedSequence(seed)``: its unit vectors u_1..u_{L−1} (normalised normals),
    then (``coordinates_too``) standard normal b, c, a. Returns ``(us, (b, c, a) or None)``."""
    hidden = arch.dims[1:-1]
    us = [np.empty((n, d)) for d in hidden]
    coords = (np.empty((n, arch.dims[0])), np.empty((n, arch.depth - 2)), np.empty((n, arch.dims[-1])))
    for i, rng in enumerate(streams(seed, n)):
        for u, d in zip(us, hidden):
            v = rng.standard_normal(d)
            u[i] = v / np.linalg.norm(v)
        if coordinates_too:
            for x in coords:
                x[i] = rng.standard_normal(x.shape[1])
    return tuple(us), (coords if coordinates_too else None)


def random_directions(arch: Architecture, n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """``n`` sets of directions, uniform on the unit spheres: L − 1 arrays ``(n, d_{ℓ+1})``; set i from child i of
    ``SeedSequence(seed)``, so it does not depend on ``n``."""
    arch = _check_arch(arch)
    return _draw(arch, check_positive_int("n", n), seed, False)[0]


@dataclass(frozen=True, eq=False)
class SubspacePoints:
    """Points θ_i of subspaces M_{u^{(i)}}, one subspace per point.

    Attributes:
        params: the points, a :class:`Params` of n runs.
        directions: L − 1 arrays ``(n, d_{ℓ+1})``: point i lies in the M_u of ``[u[i] for u in directions]``.
    """

    params: Params
    directions: tuple


def random_points(arch: Architecture, n: int, seed: int = 0, like: Params | None = None) -> SubspacePoints:
    """``n`` points, each on its own random M_u (the directions of :func:`random_directions`).

    Coordinates: ``b, c, a`` standard normal (child i of ``SeedSequence(seed)``, drawn after its directions), so A is
    of order 1; or, with ``like`` (one run), the coordinates of ``like``'s projection onto the aligned subspace of its
    own top singular vectors — the same A, ‖θ‖ and loss (a hidden-layer rotation of ``Π like``), in random u.
    """
    arch = _check_arch(arch)
    n = check_positive_int("n", n)
    us, drawn = _draw(arch, n, seed, like is None)
    if like is None:
        b, c, a = drawn
    else:
        if not isinstance(like, Params) or like.arch != arch:
            raise ValueError("like must be a Params of the same architecture")
        one = like.select([0])
        b, c, a = (np.repeat(x, n, axis=0) for x in coordinates(one, top_directions(one)))
    return SubspacePoints(from_coordinates(arch, us, b, c, a), us)


@dataclass(frozen=True)
class TangentDefect:
    """How far the SDE's vectors at a point stick out of M_u, per run: each ``(R,)``, the largest
    ``‖(I − Π)v‖ / s(v)`` over the vectors of its kind, with ``s(v)`` the size of the terms v is made of (what its
    round-off scales with): ``‖g_k‖`` for a gradient, ``‖ḡ‖ + 2γ‖θ‖`` for the drift, ``‖g_k‖ + ‖ḡ‖`` for a noise
    column g_k − ḡ, 1 for Langevin's columns e_p.

    Attributes:
        gradient: the per-entry gradients g_k.  drift: −ḡ − 2γθ.  noise: the noise columns.
        noise_kind: ``"sde"`` or ``"langevin"``.
    """

    gradient: np.ndarray
    drift: np.ndarray
    noise: np.ndarray
    noise_kind: str

    @property
    def worst(self) -> np.ndarray:
        """``(R,)``: the largest of the three."""
        return np.maximum(np.maximum(self.gradient, self.drift), self.noise)


def tangent_defect(params: Params, problem: CompletionProblem, directions, *, weight_decay: float,
                   noise: str = "sde") -> TangentDefect:
    """The parts of the per-entry gradients, the drift and the noise columns off M_u at each run of ``params``.

    Args:
        params: R points (on M_u for the proposition; any point is allowed).  problem: the completion problem.
        directions: the subspace (each ``(d,)`` or ``(R, d)``).  weight_decay: γ ≥ 0.
        noise: ``"sde"`` (columns ``g_k − ḡ``, SGD's SDE) or ``"langevin"`` (columns ``e_p`` of sqrt(2τ)·I).

    Returns:
        :class:`TangentDefect` (relative; round-off on M_u).
    """
    check_problem_fits(params.arch, problem)
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    noise = check_choice("noise", noise, NOISES)
    arch, R = params.arch, params.n_runs
    us = _directions(arch, directions, R)
    g = per_entry_gradients(params.flat, arch, problem)  # (R, N, P)
    P = g.shape[2]
    gbar = g.mean(axis=1)
    drift = -gbar - 2.0 * weight_decay * params.flat
    cols = g - gbar[:, None, :] if noise == "sde" else np.broadcast_to(np.eye(P), (R, P, P))

    def off(v):  # (R, K, P) → ‖(I − Π)v‖ (R, K)
        K = v.shape[1]
        flat = np.ascontiguousarray(v).reshape(R * K, P)
        rep = [np.repeat(u, K, axis=0) for u in us]
        return np.linalg.norm(flat - project(Params(arch, flat), rep).flat, axis=1).reshape(R, K)

    ng, nbar = np.linalg.norm(g, axis=2), np.linalg.norm(gbar, axis=1)
    tiny = np.finfo(float).tiny
    grad = np.max(off(g) / np.maximum(ng, tiny), axis=1)
    dr = off(drift[:, None, :])[:, 0] / np.maximum(nbar + 2 * weight_decay * np.linalg.norm(params.flat, axis=1), tiny)
    scale = ng + nbar[:, None] if noise == "sde" else np.ones((R, P))
    nz = np.max(off(cols) / np.maximum(scale, tiny), axis=1)
    return TangentDefect(grad, dr, nz, noise)


def offset_off_subspace(params: Params, directions, size: float, seed: int = 0) -> Params:
    """``θ + size·‖θ‖·n`` per run, ``n`` a random unit vector orthogonal to M_u (stream ``[seed, 35]``): a point at
    relative transverse distance ``size / sqrt(1 + size²)`` from M_u (a broken input for the checks)."""
    size = check_nonnegative("size", size)
    us = _directions(params.arch, directions, params.n_runs)
    z = tagged_stream(seed, 35).standard_normal(params.flat.shape)
    z -= project(Params(params.arch, z), us).flat
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    return Params(params.arch, params.flat + size * np.linalg.norm(params.flat, axis=1, keepdims=True) * z)


# ----------------------------------------------------------------------------------------------- evidence
def distance_floor(arch: Architecture) -> float:
    """The round-off level of :func:`transverse_distance`: ``64·P·eps`` (records below it are not fitted)."""
    return roundoff_tolerance(1.0, arch.n_params)


@dataclass(frozen=True, eq=False)
class InvarianceEvidence:
    """Adaptive-step SDE paths from the rank-2 minimum, their distance to an aligned subspace over time, and its
    decay after the jump (:func:`invariance_evidence`).

    Attributes:
        times: ``(K,)`` record times (0 = the start).
        distance: ``(R, K)`` :func:`transverse_distance` (own top singular vectors); NaN from the record at which a
            path ended early (an event of :func:`~.adaptive.run_sde_adaptive`).
        s2: ``(R, K)`` s₂(A) at the records (NaN after an event).
        jump_time: ``(R,)`` the first record time with s₂(A) ≤ ``rank_tol`` (NaN: no jump).
        bounded: ``(R,)`` the path reached ``t_end`` without an event.
        floor_time: ``(R,)`` the first record time from the jump on with the distance at or below :attr:`floor`
            (round-off; NaN: not reached by ``t_end``).
        rate: ``(R,)`` the fitted decay rate of the distance after the jump, −d log(distance)/dt: least squares over
            the records from the jump to the last one above :attr:`floor`. Fitted only on the paths that jumped,
            stayed bounded and reached the floor (the whole decay recorded) with at least :data:`MIN_FIT_RECORDS`
            records; NaN otherwise.
        rate_small: ``(R,)`` the same fit over the records below :data:`SMALL_DISTANCE` only (the linear regime;
            NaN where :attr:`rate` is, or with fewer than :data:`MIN_FIT_RECORDS` such records).
        n_fit: ``(R,)`` records in each fit.  max_residual: ``(R,)`` the largest |residual| of log(distance) in it.
        after_floor_max: ``(R,)`` the largest distance after :attr:`floor_time` (to ``t_end``; NaN: the floor was not
            reached before the last record).
        floor: :func:`distance_floor`.  weight_decay: γ (the rate is compared with 2γ).
        settings: the call's settings.
    """

    times: np.ndarray
    distance: np.ndarray
    s2: np.ndarray
    jump_time: np.ndarray
    bounded: np.ndarray
    floor_time: np.ndarray
    rate: np.ndarray
    rate_small: np.ndarray
    n_fit: np.ndarray
    max_residual: np.ndarray
    after_floor_max: np.ndarray
    floor: float
    weight_decay: float
    settings: dict

    @property
    def used(self) -> np.ndarray:
        """``(R,)``: the paths that jumped, stayed bounded and were fitted."""
        return np.isfinite(self.rate)

    @property
    def n_jumped_bounded(self) -> int:
        """Paths that jumped and stayed bounded (fitted or not: a late jump may not reach the floor by t_end)."""
        return int(np.sum(np.isfinite(self.jump_time) & self.bounded))

    @property
    def rate_over_two_gamma(self) -> np.ndarray:
        """``(n_used,)``: the fitted rates of the used paths over 2γ."""
        return self.rate[self.used] / (2.0 * self.weight_decay)

    @property
    def rate_small_over_two_gamma(self) -> np.ndarray:
        """``(n_used,)``: :attr:`rate_small` of the used paths over 2γ."""
        return self.rate_small[self.used] / (2.0 * self.weight_decay)

    @property
    def end_distance(self) -> np.ndarray:
        """``(n_used,)``: the distance at ``t_end`` of the used paths."""
        return self.distance[self.used, -1]

    @property
    def decades(self) -> np.ndarray:
        """``(n_used,)``: how many decades each fitted decay spans, log10(distance at the jump / floor)."""
        at_jump = self.distance[self.used, np.searchsorted(self.times, self.jump_time[self.used])]
        return np.log10(at_jump / self.floor)


#: The fewest records above the floor that a decay rate is fitted on.
MIN_FIT_RECORDS = 3
#: Below this distance the terms of second order in the distance are at most 10⁻⁴ of the first-order ones: the
#: linear regime, where weight decay alone is expected to set the rate (:attr:`InvarianceEvidence.rate_small`).
SMALL_DISTANCE = 1e-4


def _decay_rate(t: np.ndarray, d: np.ndarray) -> tuple[float, float]:
    """``(−slope, largest |residual|)`` of the least-squares line through ``(t, log d)``; NaN with too few points."""
    if t.size < MIN_FIT_RECORDS:
        return float("nan"), float("nan")
    y = np.log(d)
    slope, icept = np.polyfit(t, y, 1)
    return float(-slope), float(np.max(np.abs(y - (slope * t + icept))))


def invariance_evidence(n_paths: int = 8, t_end: float = 3000.0, record_dt: float = 5.0, *, lr: float = EXP.lr_hot,
                        weight_decay: float = EXP.weight_decay_hot, h_max_divisor: int = ADAPTIVE_LEVELS[1][0],
                        rho: float = ADAPTIVE_LEVELS[1][1], rank_tol: float = DEFAULT_RANK_TOL,
                        seed: int = 0) -> InvarianceEvidence:
    """Jumped SDE paths approach an aligned subspace (evidence): ``n_paths`` adaptive-step SDE paths
    (:func:`~.adaptive.run_sde_adaptive`, h_max = lr/``h_max_divisor``, ρ = ``rho``; defaults: the middle accuracy
    of :data:`~.blowup.ADAPTIVE_LEVELS`) from the rank-2 minimum
    (:func:`~symsgd_core.rank_jumps.experiments.start_minimum` at ``weight_decay``) to ``t_end``, with the distance
    to the aligned subspace of each state's own top singular vectors recorded every ``record_dt``.

    The paths are integrated in pieces of ``record_dt`` (piece k from seed ``piece_seed(seed, k)``, run r from its
    child r, every path in every piece so that a path does not depend on the others); a path that ends early (a
    stall or a residual) is NaN from then on and not fitted. Cost at the defaults: about 11 s of one core.

    Returns:
        :class:`InvarianceEvidence`.
    """
    n_paths = check_positive_int("n_paths", n_paths)
    t_end, record_dt = check_positive("t_end", t_end), check_positive("record_dt", record_dt)
    h_max_divisor = check_positive_int("h_max_divisor", h_max_divisor)
    n_rec = int(round(t_end / record_dt))
    if n_rec < 1 or abs(n_rec * record_dt - t_end) > 1e-9 * t_end:
        raise ValueError(f"t_end must be a whole number of records, got t_end={t_end}, record_dt={record_dt}")
    problem = epsilon_completion(EXP.eps)
    theta = replicate(start_minimum(weight_decay=weight_decay)[0], n_paths)
    arch = theta.arch
    times = record_dt * np.arange(n_rec + 1)
    distance = np.full((n_paths, n_rec + 1), np.nan)
    s2 = np.full((n_paths, n_rec + 1), np.nan)
    distance[:, 0] = transverse_distance(theta)
    s2[:, 0] = np.linalg.svd(theta.end_to_end(), compute_uv=False)[:, 1]
    alive = np.ones(n_paths, dtype=bool)
    for k in range(n_rec):
        r = run_sde_adaptive(theta, problem, record_dt, lr=lr, weight_decay=weight_decay, h_max=lr / h_max_divisor,
                             rho=rho, seed=piece_seed(seed, k), record_dt=record_dt, rank_tol=rank_tol,
                             record_layers=False)
        alive &= np.array([e == "none" for e in r.event])
        theta = r.result.final
        distance[:, k + 1] = np.where(alive, transverse_distance(theta), np.nan)
        s2[:, k + 1] = np.where(alive, r.result.singular_values[:, -1, 1], np.nan)
    floor = distance_floor(arch)
    jumped = np.any(s2 <= rank_tol, axis=1)
    first = np.argmax(s2 <= rank_tol, axis=1)
    jump_time = np.where(jumped, times[first], np.nan)
    floor_time, rate, after = np.full(n_paths, np.nan), np.full(n_paths, np.nan), np.full(n_paths, np.nan)
    rate_small = np.full(n_paths, np.nan)
    n_fit, max_res = np.zeros(n_paths, dtype=np.int64), np.full(n_paths, np.nan)
    idx = np.arange(n_rec + 1)
    for i in np.flatnonzero(jumped & alive):
        low = (idx >= first[i]) & (distance[i] <= floor)
        if not low.any():
            continue  # the decay is not over by t_end: not fitted
        k_floor = int(np.argmax(low))
        floor_time[i] = times[k_floor]
        if k_floor < n_rec:
            after[i] = float(np.max(distance[i, k_floor + 1:]))
        n_fit[i] = k_floor - first[i]
        t, d = times[first[i]:k_floor], distance[i, first[i]:k_floor]
        rate[i], max_res[i] = _decay_rate(t, d)
        if np.isfinite(rate[i]):
            rate_small[i] = _decay_rate(t[d < SMALL_DISTANCE], d[d < SMALL_DISTANCE])[0]
    settings = dict(n_paths=n_paths, t_end=t_end, record_dt=record_dt, lr=lr, weight_decay=weight_decay,
                    h_max=lr / h_max_divisor, rho=rho, rank_tol=rank_tol, seed=seed, problem=problem.name)
    return InvarianceEvidence(times, distance, s2, jump_time, alive, floor_time, rate, rate_small, n_fit, max_res,
                              after, floor, weight_decay, settings)
