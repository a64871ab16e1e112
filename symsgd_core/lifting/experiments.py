"""What each figure of Notebook 02 shows, one function each, returning a frozen result.

All numbers come from :mod:`symsgd_core.lifting.liftings` (torch autograd in float64) at the notebook's 2-D
cases: :func:`demo_case` (u, w ∈ R², :data:`DEMO_SAMPLES` samples of fixed data per model, reference
``r = e₁``). The figures (:mod:`symsgd_core.ui.lifting`) read their sliders, call one of these, and draw.

* §1 :func:`orbit_view`, :func:`orbit_sweep` — ``(λu, w/λ)`` moves, ``M = u wᵀ`` and the loss do not;
* §2 :func:`rank_one_slice` — two rank-1 matrices and their midpoint (off the rank-1 set);
* §3 :func:`chain_rule_point` — the corrected chain rule against autograd, and the authors' display;
* §4 :func:`euler_view` — Euler's identity, ``∂ℓ̃/∂w ≠ 0``, and the w-free and natural liftings;
* §5 :func:`sign_caveat` — the same ``M`` at ``±λ``, two losses for the ReLU neuron;
* §6 :func:`traces_view` — two liftings, two gradients, one pair of Theorem 3.1 noise traces.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..core.results import Outcome
from ..core.validation import check_array, check_choice
from .liftings import (
    corrected_chain_rule,
    generic_lifting_gradients,
    generic_lifting_grid,
    generic_lifting_values,
    loss_gradients,
    natural_lifting_gradient,
    noise_traces,
    noise_traces_from_matrix_gradient,
    orbit_point,
    per_sample_losses,
    polar,
    rotation,
    seed_chain_rule,
    sign_flip_losses,
    slice_coordinates,
    w_free_lifting_gradient,
    w_free_lifting_values,
)
from .models import MODELS, LiftingCase, make_case

__all__ = [
    "DEMO_REFERENCE", "DEMO_SAMPLES", "DEMO_SEEDS", "DEMO_THETA_U", "DEMO_THETA_W", "DEMO_U_LEN", "DEMO_W_LEN",
    "EULER_GRID", "MIN_REFERENCE_COSINE", "ORBIT_RANGE", "CHAIN_RULE_OUTCOMES", "EULER_OUTCOMES", "TRACES_OUTCOMES",
    "ChainRulePoint", "EulerView", "OrbitSweep", "OrbitView", "RankOneSlice", "SignCaveat", "TracesView",
    "chain_rule_outcome", "chain_rule_point", "demo_case", "euler_outcome", "euler_view", "orbit_sweep", "orbit_view",
    "orbit_outcome", "param_case", "RANK_ONE_OUTCOMES", "rank_one_outcome", "rank_one_slice",
    "reference_ok", "SIGN_OUTCOMES", "sign_caveat", "sign_caveat_outcome", "sign_caveat_view", "traces_outcome",
    "traces_view",
]

#: The notebook's demo point u = ‖u‖(cos θ_u, sin θ_u), w = ‖w‖(cos θ_w, sin θ_w) (angles in degrees): the
#: starting values of §2–§4 and §6 (one place for them).
DEMO_THETA_U = 30.0
DEMO_THETA_W = -40.0
DEMO_U_LEN = 1.0
DEMO_W_LEN = 1.5

#: Reference vector of the w-free lifting in the notebook: F describes the sign class w₁ > 0.
DEMO_REFERENCE = np.array([1.0, 0.0])
#: Batch size and per-model seeds of the notebook's fixed data (relu: seed 1 has a teacher with w₁ > 0).
DEMO_SAMPLES = 16
DEMO_SEEDS = {"linear": 0, "attention": 2, "relu": 1}
#: Below this |cos(w, r)| the power step ŵ(M) is treated as undefined (round-off × κ_r > 1e-10).
MIN_REFERENCE_COSINE = 1e-6


@functools.cache
def _demo_base(key: str) -> LiftingCase:
    return make_case(key, 2, 2, DEMO_SAMPLES, seed=DEMO_SEEDS[key], u=np.ones(2), w=np.ones(2), r=DEMO_REFERENCE)


def demo_case(model: str, u, w) -> LiftingCase:
    """The notebook's 2-D case for ``model`` (fixed data, ``r = e₁``) at parameters ``u, w ∈ R²``."""
    check_choice("model", model, MODELS)
    return _demo_base(model).with_params(check_array("u", u, shape=(2,)), check_array("w", w, shape=(2,)))


def param_case(model: str, theta_u: float, u_len: float, theta_w: float, w_len: float) -> LiftingCase:
    """:func:`demo_case` at ``u = ‖u‖(cos θ_u, sin θ_u)``, ``w = ‖w‖(cos θ_w, sin θ_w)`` (angles in degrees)."""
    return demo_case(model, polar(theta_u, u_len), polar(theta_w, w_len))


def reference_ok(case: LiftingCase) -> bool:
    """Whether the power step ŵ(M) is defined (and well conditioned) at this case: |cos(w, r)| large enough."""
    cos = float(case.w @ case.r) / (np.linalg.norm(case.w) * np.linalg.norm(case.r))
    return abs(cos) > MIN_REFERENCE_COSINE


# ---------------------------------------------------------------------------------------------
# §1 Orbits collapse to points
# ---------------------------------------------------------------------------------------------
#: The λ range of §1's slider, and the λ values at which the figure draws the orbit.
ORBIT_RANGE = (2.0 ** -1.5, 2.0 ** 1.5)
ORBIT_GRID = np.geomspace(*ORBIT_RANGE, 61)
#: §1's base point: u = 1.2·(cos 35°, sin 35°), w = 0.6·(cos −20°, sin −20°).
ORBIT_U = polar(35.0, 1.2)
ORBIT_W = polar(-20.0, 0.6)


@dataclass(frozen=True, eq=False)
class OrbitView:
    """The point ``(λu, w/λ)`` of an orbit, and the loss and ``G`` along the whole orbit.

    Attributes:
        lam: λ; case, base: the cases at λ and at 1.
        lambdas, losses, G_curve: the orbit's λ grid, the training loss and ``G = ‖λu‖² − ‖w/λ‖²`` there.
        loss, loss0, G, G0: the training loss and ``G`` at λ and at 1.
        outcome: :func:`orbit_outcome`.
    """

    lam: float
    case: LiftingCase
    base: LiftingCase
    lambdas: np.ndarray
    losses: np.ndarray
    G_curve: np.ndarray
    loss: float
    loss0: float
    G: float
    G0: float
    outcome: Outcome

    @property
    def M(self) -> np.ndarray:
        return self.case.M

    @property
    def M0(self) -> np.ndarray:
        return self.base.M


def orbit_view(model: str = "linear", lam: float = 1.0, u0=ORBIT_U, w0=ORBIT_W, lambdas=ORBIT_GRID) -> OrbitView:
    """§1: ``(λu, w/λ)`` moves along its orbit while ``M = u wᵀ`` and the loss stay fixed."""
    u, w = orbit_point(u0, w0, lam)
    case, base = demo_case(model, u, w), demo_case(model, u0, w0)
    losses = np.array([per_sample_losses(base, s * base.u, base.w / s).mean() for s in lambdas])
    G = lambdas ** 2 * (base.u @ base.u) - (base.w @ base.w) / lambdas ** 2
    loss, loss0 = float(per_sample_losses(case).mean()), float(per_sample_losses(base).mean())
    G_here, G0 = float(case.u @ case.u - case.w @ case.w), float(base.u @ base.u - base.w @ base.w)
    return OrbitView(lam=lam, case=case, base=base, lambdas=np.asarray(lambdas), losses=losses, G_curve=G,
                     loss=loss, loss0=loss0, G=G_here, G0=G0,
                     outcome=orbit_outcome(case, base, loss, loss0, G_here, G0))


def orbit_outcome(case: LiftingCase, base: LiftingCase, loss: float, loss0: float, G: float, G0: float) -> Outcome:
    """§1's outcome: always ``orbit`` (M and the loss stay, G moves: what the figure shows). Numbers: ``u``, ``w``
    (``λu``, ``w/λ``, tuples), ``M_change`` (largest entry change of M from λ = 1), ``loss``, ``loss_change``, ``G``,
    ``G0`` (G at λ and at 1)."""
    return Outcome("orbit", False, {"u": tuple(float(x) for x in case.u), "w": tuple(float(x) for x in case.w),
                                    "M_change": float(np.max(np.abs(case.M - base.M))), "loss": float(loss),
                                    "loss_change": abs(float(loss) - float(loss0)), "G": float(G), "G0": float(G0)})


@dataclass(frozen=True, eq=False)
class OrbitSweep:
    """Over the whole slider range of λ: the largest change of ``M``'s entries and of the loss, the range of G."""

    lams: np.ndarray
    M_change: float
    loss0: float
    loss_change: float
    G_min: float
    G_max: float


def orbit_sweep(model: str = "linear", u0=ORBIT_U, w0=ORBIT_W, n: int = 25) -> OrbitSweep:
    """§1 over the whole range :data:`ORBIT_RANGE` (``n`` log-spaced λ)."""
    base = demo_case(model, u0, w0)
    lams = np.geomspace(*ORBIT_RANGE, n)
    M_change = max(float(np.abs(np.outer(s * base.u, base.w / s) - base.M).max()) for s in lams)
    L0 = float(per_sample_losses(base).mean())
    L_change = max(abs(float(per_sample_losses(base, s * base.u, base.w / s).mean()) - L0) for s in lams)
    G = lams ** 2 * (base.u @ base.u) - (base.w @ base.w) / lams ** 2
    return OrbitSweep(lams=lams, M_change=M_change, loss0=L0, loss_change=L_change, G_min=float(G.min()),
                      G_max=float(G.max()))


# ---------------------------------------------------------------------------------------------
# §2 The rank-1 set
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RankOneSlice:
    """``M = u wᵀ``, ``M′ = R M Rᵀ`` (R: rotation by φ/2 of u and w), their midpoint and sum, determinants and
    slice coordinates ``(p, q, h, s)`` of ``M``, ``M′`` and the midpoint; ``s`` of the slice."""

    M: np.ndarray
    M2: np.ndarray
    mid: np.ndarray
    sum: np.ndarray
    det_M: float
    det_M2: float
    det_mid: float
    det_sum: float
    coords: list
    s: float
    outcome: Outcome

    @property
    def double_cone(self) -> bool:
        """The slice ``z = s`` is ``z = 0`` (to round-off), where the rank-≤1 set is a double cone, not a
        hyperboloid of one sheet."""
        return bool(abs(self.s) < DOUBLE_CONE_TOL)

    def surface(self, p_max: float, n_p: int = 33, n_angle: int = 49) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rank-≤1 set of the slice, ``q² + h² = p² + s²``, as a mesh ``(q, h, p)`` of shape ``(n_p, n_angle)``
        over ``|p| ≤ p_max`` and a full turn of the angle in the ``(q, h)`` plane."""
        p = np.linspace(-p_max, p_max, n_p)
        ang = np.linspace(0, 2 * np.pi, n_angle)
        rho = np.sqrt(p ** 2 + self.s ** 2)[:, None]
        return rho * np.cos(ang)[None, :], rho * np.sin(ang)[None, :], np.repeat(p[:, None], ang.size, 1)


def rank_one_slice(theta_u: float = DEMO_THETA_U, theta_w: float = DEMO_THETA_W, phi: float = 120.0) -> RankOneSlice:
    """§2: two rank-1 matrices in one slice ``s = const`` of the 2×2 matrices, and their midpoint (rank 2)."""
    u, w = polar(theta_u), polar(theta_w)
    R = rotation(np.deg2rad(phi) / 2)
    M, M2 = np.outer(u, w), np.outer(R @ u, R @ w)
    mid = (M + M2) / 2
    dets = dict(det_M=float(np.linalg.det(M)), det_M2=float(np.linalg.det(M2)), det_mid=float(np.linalg.det(mid)),
                det_sum=float(np.linalg.det(M + M2)))
    s = float(slice_coordinates(M)[3])
    return RankOneSlice(M=M, M2=M2, mid=mid, sum=M + M2, **dets, coords=[slice_coordinates(X) for X in (M, M2, mid)],
                        s=s, outcome=rank_one_outcome(s, **dets))


#: The outcomes of §2 (:func:`rank_one_outcome`): the shape of the rank-≤1 set in the slice.
RANK_ONE_OUTCOMES = ("double_cone", "hyperboloid")
#: ``|s|`` below which the slice ``z = s`` is ``z = 0`` (round-off of ``slice_coordinates`` on unit vectors).
DOUBLE_CONE_TOL = 1e-12


def rank_one_outcome(s: float, det_M: float, det_M2: float, det_mid: float, det_sum: float) -> Outcome:
    """§2's outcome: ``double_cone`` (the slice ``z = 0``, ``|s| <`` :data:`DOUBLE_CONE_TOL`) or ``hyperboloid`` (of one
    sheet); never a failure. Numbers: ``s`` and the four determinants (``det_M``, ``det_M2``, ``det_mid``,
    ``det_sum``)."""
    kind = "double_cone" if abs(s) < DOUBLE_CONE_TOL else "hyperboloid"
    return Outcome(kind, False, {"s": float(s), "det_M": det_M, "det_M2": det_M2, "det_mid": det_mid,
                                 "det_sum": det_sum})


# ---------------------------------------------------------------------------------------------
# §3 The construction and the authors' index slip
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ChainRulePoint:
    """Autograd's gradients, ``∂ℓ̃/∂M``, ``∂ℓ̃/∂w`` and both chain rules for sample ``k`` of a case; ``outcome``:
    :func:`chain_rule_outcome`."""

    case: LiftingCase
    k: int
    du: np.ndarray
    dw: np.ndarray
    G: np.ndarray
    gw: np.ndarray
    cu: np.ndarray
    cw: np.ndarray
    su: np.ndarray
    sw: np.ndarray
    lifted: float
    loss: float
    err_corrected: float
    err_seed: float
    outcome: Outcome

    @property
    def relu_off(self) -> bool:
        """Every gradient of sample ``k`` is 0 (a ReLU neuron off on it, ``wᵀx ≤ 0``): the two chain rules cannot
        differ there."""
        return not (np.any(self.du) or np.any(self.dw) or np.any(self.gw))


#: The outcomes of §3 (:func:`chain_rule_outcome`).
CHAIN_RULE_OUTCOMES = ("relu_off", "slip")


def chain_rule_outcome(du, dw, gw, lifted: float, loss: float, err_corrected: float, err_seed: float) -> Outcome:
    """§3's outcome for one sample: ``relu_off`` (every gradient ``du``, ``dw``, ``gw`` is 0: a ReLU neuron off on the
    sample, where the two chain rules cannot differ; a failure of the setting) or ``slip`` (the reply's display
    misses). Numbers: ``lift_gap`` (``ℓ̃(u wᵀ, w) − ℓ(u, w)``), ``err_corrected``, ``err_seed``, ``gw`` (``∂ℓ̃/∂w``,
    the term the reply's display misplaces, a tuple)."""
    numbers = {"lift_gap": float(lifted - loss), "err_corrected": float(err_corrected), "err_seed": float(err_seed),
               "gw": tuple(float(g) for g in np.ravel(gw))}
    if not (np.any(du) or np.any(dw) or np.any(gw)):
        return Outcome("relu_off", True, numbers)
    return Outcome("slip", False, numbers)


def chain_rule_point(model: str = "linear", theta_u: float = DEMO_THETA_U, u_len: float = DEMO_U_LEN,
                     theta_w: float = DEMO_THETA_W, w_len: float = DEMO_W_LEN, sample: int = 3) -> ChainRulePoint:
    """§3: the corrected chain rule matches autograd; the display of the authors' reply attaches ∂ℓ̃/∂w wrongly."""
    case, k = param_case(model, theta_u, u_len, theta_w, w_len), int(sample)
    du, dw = loss_gradients(case)
    G, gw = generic_lifting_gradients(case)
    cu, cw = corrected_chain_rule(G, gw, case.u, case.w)
    su, sw = seed_chain_rule(G, gw, case.u, case.w)
    lifted, loss = float(generic_lifting_values(case)[k]), float(per_sample_losses(case)[k])
    err_corrected = float(max(np.abs(cu[k] - du[k]).max(), np.abs(cw[k] - dw[k]).max()))
    err_seed = float(max(np.abs(su[k] - du[k]).max(), np.abs(sw[k] - dw[k]).max()))
    return ChainRulePoint(case=case, k=k, du=du[k], dw=dw[k], G=G[k], gw=gw[k], cu=cu[k], cw=cw[k], su=su[k],
                          sw=sw[k], lifted=lifted, loss=loss, err_corrected=err_corrected, err_seed=err_seed,
                          outcome=chain_rule_outcome(du[k], dw[k], gw[k], lifted, loss, err_corrected, err_seed))


# ---------------------------------------------------------------------------------------------
# §4 What the symmetry buys, and what it does not
# ---------------------------------------------------------------------------------------------
#: The w′-plane of §4's heat map (an even count: the origin, where ℓ̃ is undefined, is not a grid point).
EULER_GRID = np.linspace(-2.6, 2.6, 40)


@dataclass(frozen=True, eq=False)
class EulerView:
    """Batch-mean gradients at a case and ``L̃(M, w′)`` over the w′-plane (§4).

    Attributes:
        case: the case; du, dw: autograd's ``∂L/∂u``, ``∂L/∂w``.
        gw, gw_norm, euler: ``∂L̃/∂w``, its norm and ``w·∂L̃/∂w`` (Euler's identity: 0).
        F_ok: the w-free lifting is defined here (:func:`reference_ok`).
        F, nat: ``(A w, Aᵀu)`` from the w-free and the natural lifting (``None`` where undefined).
        Z: ``L̃(M, w′)`` on :data:`EULER_GRID` × :data:`EULER_GRID` (rows: w′₂, columns: w′₁).
        outcome: :func:`euler_outcome`.
    """

    case: LiftingCase
    du: np.ndarray
    dw: np.ndarray
    gw: np.ndarray
    euler: float
    gw_norm: float
    F_ok: bool
    F: np.ndarray | None
    nat: np.ndarray | None
    Z: np.ndarray
    outcome: Outcome

    @property
    def autograd(self) -> np.ndarray:
        """Autograd's ``(∂L/∂u, ∂L/∂w)`` as one 4-vector, the order of :attr:`F` and :attr:`nat`."""
        return np.concatenate([self.du, self.dw])

    def error(self, lifting: str) -> float | None:
        """The largest ``|difference|`` between the gradients from ``lifting`` (``"F"`` or ``"nat"``) and
        autograd's (``None`` where that lifting is undefined)."""
        grads = getattr(self, lifting)
        return None if grads is None else float(np.abs(grads - self.autograd).max())


#: The outcomes of §4 and §6 (:func:`euler_outcome`, :func:`traces_outcome`): the w-free lifting ``F`` is undefined
#: here (``w ⟂ r``), describes the other sign class ``(−u, −w)`` whose numbers differ (the sign caveat: a model that
#: is not even under ``(u, w) → (−u, −w)``), describes the other sign class of an even model (the same numbers), or
#: describes this point.
EULER_OUTCOMES = ("F_undefined", "sign_caveat", "other_class_even", "exact")
TRACES_OUTCOMES = EULER_OUTCOMES


def _lifting_outcome(case: LiftingCase, F_ok: bool, numbers: dict) -> Outcome:
    """The kind of :data:`EULER_OUTCOMES` at ``case`` (``F_ok``: :func:`reference_ok`); failures: ``F_undefined``
    and ``sign_caveat``."""
    if not F_ok:
        return Outcome("F_undefined", True, numbers)
    if case.other_sign_class:
        even = case.model.negation_symmetric
        return Outcome("other_class_even" if even else "sign_caveat", not even, numbers)
    return Outcome("exact", False, numbers)


def _defined(**numbers) -> dict:
    """The numbers that are defined here (``None``: a lifting that does not exist at this point is left out)."""
    return {k: v for k, v in numbers.items() if v is not None}


def euler_outcome(case: LiftingCase, F_ok: bool, euler: float, gw_norm: float, F_error: float | None,
                  nat_error: float | None, gw=None) -> Outcome:
    """§4's outcome (a kind of :data:`EULER_OUTCOMES`). Numbers: ``euler`` (``w·∂L̃/∂w``), ``gw_norm``, ``gw``
    (``∂L̃/∂w``, a tuple, where given), and where the lifting exists ``F_error``, ``nat_error`` (largest
    ``|difference|`` of its gradients from autograd's)."""
    return _lifting_outcome(case, F_ok, _defined(euler=float(euler), gw_norm=float(gw_norm), F_error=F_error,
                                                 nat_error=nat_error,
                                                 gw=None if gw is None else tuple(float(g) for g in np.ravel(gw))))


def euler_view(model: str = "linear", theta_u: float = DEMO_THETA_U, u_len: float = DEMO_U_LEN,
               theta_w: float = DEMO_THETA_W, w_len: float = DEMO_W_LEN) -> EulerView:
    """§4: Euler's identity ``w·∂ℓ̃/∂w = 0`` holds, ``∂ℓ̃/∂w`` itself does not vanish; the w-free ``F`` gives the
    gradients exactly."""
    case = param_case(model, theta_u, u_len, theta_w, w_len)
    du, dw = loss_gradients(case)
    du, dw = du.mean(0), dw.mean(0)
    _, gw = generic_lifting_gradients(case)
    gw = gw.mean(0)
    F = nat = None
    F_ok = reference_ok(case)
    if F_ok:
        A = w_free_lifting_gradient(case).mean(0)
        F = np.concatenate([A @ case.w, A.T @ case.u])
    if case.model.has_natural_lifting:
        A = natural_lifting_gradient(case).mean(0)
        nat = np.concatenate([A @ case.w, A.T @ case.u])
    points = np.stack(np.meshgrid(EULER_GRID, EULER_GRID), -1).reshape(-1, 2)
    Z = generic_lifting_grid(case, points).reshape(EULER_GRID.size, EULER_GRID.size)
    autograd = np.concatenate([du, dw])
    errors = {k: None if g is None else float(np.abs(g - autograd).max()) for k, g in (("F", F), ("nat", nat))}
    euler, gw_norm = float(gw @ case.w), float(np.linalg.norm(gw))
    return EulerView(case=case, du=du, dw=dw, gw=gw, euler=euler, gw_norm=gw_norm, F_ok=F_ok, F=F, nat=nat, Z=Z,
                     outcome=euler_outcome(case, F_ok, euler, gw_norm, errors["F"], errors["nat"], gw))


# ---------------------------------------------------------------------------------------------
# §5 The sign caveat
# ---------------------------------------------------------------------------------------------
#: The |λ| values of §5's branches.
SIGN_LAMBDAS = np.geomspace(1 / 3, 3, 41)


@dataclass(frozen=True, eq=False)
class SignCaveat:
    """The loss at ``(u, w)`` and ``(−u, −w)`` (same ``M``), along both branches ``λ > 0`` and ``λ < 0`` (§5).

    Attributes:
        case: the case; plus, minus: ``L(u, w)``, ``L(−u, −w)``.
        F: ``F(u wᵀ)`` of the w-free lifting (``None`` where undefined); w_dot_r: ``wᵀr`` (its sign class).
        M_diff: ``max|u wᵀ − (−u)(−w)ᵀ|`` (round-off).
        lambdas, pos, neg: the |λ| grid, ``L(λu, w/λ)`` and ``L(−λu, −w/λ)``.
        lam: the |λ| the figure marks on both branches (the losses do not depend on it).
        outcome: :func:`sign_caveat_outcome`.
    """

    case: LiftingCase
    plus: float
    minus: float
    F: float | None
    w_dot_r: float
    M_diff: float
    lambdas: np.ndarray
    pos: np.ndarray
    neg: np.ndarray
    lam: float
    outcome: Outcome

    @property
    def w_inputs(self) -> np.ndarray:
        """The inputs ``w`` acts on, ``(N, n)``: ``z`` for the attention score, ``x`` for the other models."""
        return self.case.data["z" if self.case.model.key == "attention" else "x"]

    @property
    def w_active(self) -> np.ndarray:
        """``wᵀx > 0`` per sample: the samples a ReLU neuron at ``(u, w)`` uses (``(−u, −w)`` uses the others)."""
        return self.w_inputs @ self.case.w > 0


#: §5's fixed ``u``: ``SIGN_U_LEN``·(cos ``SIGN_THETA_U``, sin ``SIGN_THETA_U``) = 2·(cos 100°, sin 100°).
SIGN_THETA_U, SIGN_U_LEN = 100.0, 2.0
SIGN_U = polar(SIGN_THETA_U, SIGN_U_LEN)

#: The outcomes of §5 (:func:`sign_caveat_outcome`): the model is even under ``(u, w) → (−u, −w)`` (the same loss:
#: a function of M alone) or not (the sign caveat: the same M, two losses).
SIGN_OUTCOMES = ("even", "sign_caveat")


def sign_caveat_outcome(case: LiftingCase, plus: float, minus: float, F: float | None, w_dot_r: float,
                        M_diff: float) -> Outcome:
    """§5's outcome (a kind of :data:`SIGN_OUTCOMES`, from whether ``case``'s model is negation-symmetric; never a
    failure: both are what the figure shows). Numbers: ``plus``, ``minus`` (``L(u, w)``, ``L(−u, −w)``), ``M_diff``,
    ``w_dot_r`` (``wᵀr``: which class F describes) and, where it is defined, ``F``."""
    kind = "even" if case.model.negation_symmetric else "sign_caveat"
    return Outcome(kind, False, _defined(plus=float(plus), minus=float(minus), M_diff=float(M_diff),
                                         w_dot_r=float(w_dot_r), F=F))


def sign_caveat(model: str = "relu", theta_w: float = 45.0, u=SIGN_U, lambdas=SIGN_LAMBDAS,
                lam: float = 1.0) -> SignCaveat:
    """§5: ``(u, w)`` and ``(−u, −w)`` give the same ``M``; the ReLU neuron's losses differ (``w`` of length 1).
    ``lam``: the |λ| a figure marks (kept in the result; the losses do not depend on it)."""
    case = demo_case(model, u, polar(theta_w, 1.0))
    plus, minus = sign_flip_losses(case)
    F = float(w_free_lifting_values(case).mean()) if reference_ok(case) else None
    pos = np.array([per_sample_losses(case, s * case.u, case.w / s).mean() for s in lambdas])
    neg = np.array([per_sample_losses(case, -s * case.u, -case.w / s).mean() for s in lambdas])
    w_dot_r = float(case.w @ case.r)
    M_diff = float(np.max(np.abs(case.M - np.outer(-case.u, -case.w))))
    return SignCaveat(case=case, plus=plus, minus=minus, F=F, w_dot_r=w_dot_r, M_diff=M_diff,
                      lambdas=np.asarray(lambdas), pos=pos, neg=neg, lam=float(lam),
                      outcome=sign_caveat_outcome(case, plus, minus, F, w_dot_r, M_diff))


def sign_caveat_view(model: str = "relu", theta_w: float = 45.0, lam: float = 1.0, theta_u: float = SIGN_THETA_U,
                     u_len: float = SIGN_U_LEN) -> SignCaveat:
    """§5's figure: :func:`sign_caveat` at ``u = u_len·(cos θ_u, sin θ_u)`` (degrees), ``w`` at ``theta_w``, the
    marker at ``±lam``."""
    return sign_caveat(model=model, theta_w=theta_w, u=polar(theta_u, u_len), lam=lam)


# ---------------------------------------------------------------------------------------------
# §6 Why Theorem 3.1 does not care
# ---------------------------------------------------------------------------------------------
#: §6's fixed direction of ``u`` (angle, degrees; ``‖u‖ = 1``): the demo's.
TRACES_THETA_U = DEMO_THETA_U
#: The λ values at which §6 draws the traces along the orbit.
TRACES_LAMBDAS = np.geomspace(0.25, 4, 81)


@dataclass(frozen=True, eq=False)
class TracesView:
    """Theorem 3.1's noise traces from autograd and from the two liftings, and the orbit's balanced λ* (§6).

    Attributes:
        case, lam: the case at ``(λu, w/λ)`` and λ.
        direct: ``(Tr Cov∇_uℓ, Tr Cov∇_wℓ)`` from autograd.
        A_nat, A_F: batch means of ``∂F_nat/∂M`` and ``∂F/∂M`` (``None`` where undefined); nat, F: the traces
            computed from them.
        base: the traces at λ = 1 (``Tr_u ∝ 1/λ²``, ``Tr_w ∝ λ²`` along the orbit).
        lam_star: the λ where they balance (``None`` if a trace is 0).
        outcome: :func:`traces_outcome`.
    """

    case: LiftingCase
    lam: float
    direct: tuple
    A_nat: np.ndarray | None
    A_F: np.ndarray | None
    nat: tuple | None
    F: tuple | None
    base: tuple
    lam_star: float | None
    outcome: Outcome

    def error(self, lifting: str) -> float | None:
        """The largest ``|difference|`` between the traces from ``lifting`` (``"nat"`` or ``"F"``) and autograd's
        (``None`` where that lifting is undefined)."""
        traces = getattr(self, lifting)
        return None if traces is None else max(abs(traces[0] - self.direct[0]), abs(traces[1] - self.direct[1]))

    @property
    def normal_part(self) -> np.ndarray | None:
        """``E[∇F_nat] − E[∇F]``, which lies in the normal space of the rank-1 set (``None`` unless both exist)."""
        return None if self.A_nat is None or self.A_F is None else self.A_nat - self.A_F

    def orbit_traces(self, lambdas) -> tuple[np.ndarray, np.ndarray]:
        """``(Tr Cov∇_uℓ, Tr Cov∇_wℓ)`` at ``(λu, w/λ)`` for each λ of ``lambdas``: ``∝ 1/λ²`` and ``∝ λ²``."""
        lambdas = np.asarray(lambdas)
        return self.base[0] / lambdas ** 2, self.base[1] * lambdas ** 2

    @property
    def balanced_trace(self) -> float:
        """The common value of the two traces at the balanced ``λ*``: ``√(Tr_u(1) · Tr_w(1))``."""
        return (self.base[0] * self.base[1]) ** 0.5


def traces_outcome(case: LiftingCase, F_ok: bool, direct: tuple, F_error: float | None,
                   nat_error: float | None, normal_norm: float | None = None,
                   lam_star: float | None = None) -> Outcome:
    """§6's outcome (a kind of :data:`TRACES_OUTCOMES`). Numbers: ``Tr_u``, ``Tr_w`` (autograd's traces), and where
    defined ``F_error``, ``nat_error`` (largest ``|difference|`` of a lifting's traces from autograd's),
    ``normal_norm`` (``‖E[∇F_nat] − E[∇F]‖``, both liftings exist) and ``lam_star`` (the orbit's balanced λ*)."""
    return _lifting_outcome(case, F_ok, _defined(Tr_u=float(direct[0]), Tr_w=float(direct[1]), F_error=F_error,
                                                 nat_error=nat_error, normal_norm=normal_norm, lam_star=lam_star))


def traces_view(model: str = "linear", theta_w: float = DEMO_THETA_W, lam: float = 1.0,
                theta_u: float = TRACES_THETA_U) -> TracesView:
    """§6: two liftings with different gradients give the same noise traces; the orbit's noise-balanced λ*."""
    u, w = orbit_point(polar(theta_u, 1.0), polar(theta_w, 1.0), lam)
    case = demo_case(model, u, w)
    du, dw = loss_gradients(case)
    direct = noise_traces(du, dw)
    A_nat = A_F = nat = F = None
    if case.model.has_natural_lifting:
        A = natural_lifting_gradient(case)
        A_nat, nat = A.mean(0), noise_traces_from_matrix_gradient(A, case.u, case.w)
    F_ok = reference_ok(case)
    if F_ok:
        A = w_free_lifting_gradient(case)
        A_F, F = A.mean(0), noise_traces_from_matrix_gradient(A, case.u, case.w)
    errors = {k: None if t is None else float(max(abs(t[0] - direct[0]), abs(t[1] - direct[1])))
              for k, t in (("F", F), ("nat", nat))}
    tu, tw = direct
    base = (tu * lam ** 2, tw / lam ** 2)  # along the orbit: Tr_u ∝ 1/λ², Tr_w ∝ λ²; balanced where equal
    lam_star = float((base[0] / base[1]) ** 0.25) if tu > 0 and tw > 0 else None
    normal_norm = None if A_nat is None or A_F is None else float(np.linalg.norm(A_nat - A_F))
    return TracesView(case=case, lam=lam, direct=direct, A_nat=A_nat, A_F=A_F, nat=nat, F=F, base=base,
                      lam_star=lam_star, outcome=traces_outcome(case, F_ok, direct, errors["F"], errors["nat"],
                                                                normal_norm, lam_star))
