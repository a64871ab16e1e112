"""Every dynamics of a deep linear network as a declared type, the way torchsde and diffrax declare their solvers.

An integrator declares, once:

* ``name`` — the key the stored grid uses (``params["method"]`` of a ``"dynamics"`` task, ``"follow"`` for the
  followed SDE), and ``increments`` where one method has several noise laws (the stored ``params["increments"]``);
* its time-step rule — :meth:`Integrator.time_step` (``dt = η`` for SGD and its surrogates, ``η/m`` for the SDE's
  integrators; the largest step ``h_max = η/m`` of an adaptive one);
* ``weak_order`` and ``strong_order`` where it has one (``None``: SGD itself, GD, and a strong order that a
  surrogate with non-Gaussian increments does not have), as torchsde's ``SDESolver.weak_order``/``strong_order``
  and diffrax's ``order()``/``strong_order()``; the checks and the tests read them from here;
* the SDE it discretises — :meth:`Integrator.generator`: the drift ``b`` and the diffusion ``D`` per unit time of
  ``dθ = b dt + √D dW`` at a point (SGD's SDE: ``b = −∇𝓛_γ``, ``D = (η/S)·C(θ)``; Langevin: ``D = 2τ I``;
  GD: ``D = 0``);
* the mean of one step's increment — :meth:`Integrator.step_mean` (``b dt``; the tamed step's ``b dt/(1 + dt‖b‖)``);
* how it runs — :meth:`Integrator.run` (a fixed-step one takes ``n_steps``; an adaptive one ``t_max``).

Adding an integrator: one class here (and its kernel), registered by :func:`register`; the parametrised test over
:data:`INTEGRATORS` (``tests/dln/test_dln_integrators.py``) then checks its declaration and its declared weak order.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ._projected_kernel import projected_chunks, projection_radius
from ._tamed_kernel import TAMED_CHUNKS, tamed_factor
from .adaptive import AdaptiveRun, run_sde_adaptive
from .engine import RunResult, run
from .network import Params
from .noise import sgd_noise_covariance
from .problems import CompletionProblem, gradient
from .sde import run_gaussian_sgd, run_langevin, run_sde

__all__ = ["INTEGRATORS", "AdaptiveFollow", "AdaptiveStep", "BernoulliSGD", "EulerMaruyama", "GaussianSGD", "GD",
           "Integrator", "Langevin", "ProjectedEulerMaruyama", "RademacherSGD", "SGD", "TamedEulerMaruyama",
           "integrator", "register"]


class Integrator:
    """One dynamics. Subclasses set the class attributes and :meth:`run`; instances carry no state."""

    name: ClassVar[str]
    increments: ClassVar[str] = "gaussian"
    label: ClassVar[str]
    weak_order: ClassVar[float | None] = None
    strong_order: ClassVar[float | None] = None
    #: True: runs to ``t_max`` with steps of its own (≤ :meth:`time_step`); False: ``n_steps`` fixed steps.
    adaptive: ClassVar[bool] = False
    #: the step is η/m (an SDE integrator) rather than η (SGD and the surrogates at dt = η)
    step_divides_lr: ClassVar[bool] = False
    #: the module (under ``symsgd_core``) of a compiled kernel of its own, ``"dln._<name>_kernel"``, which the warm-up
    #: (:mod:`symsgd_core.warm`) compiles by running this integrator; None: it runs on an engine's kernel.
    kernel: ClassVar[str | None] = None

    @classmethod
    def time_step(cls, lr: float, m: int = 1) -> float:
        """The time step (the largest, for an adaptive integrator) at step size η = ``lr`` and refinement ``m``."""
        return lr / m if cls.step_divides_lr else lr

    def run(self, start, problem, n_steps: int, **kw) -> RunResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def generator(self, params: Params, problem: CompletionProblem, *, lr: float, weight_decay: float,
                  batch_size: int = 1, tau: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """The SDE this integrator approximates, at run 0 of ``params``: drift ``b`` ``(P,)`` and diffusion ``D``
        ``(P, P)`` per unit time. Default: SGD's SDE, ``b = −∇𝓛_γ``, ``D = (η/S)·C(θ)`` (T = η/S)."""
        one = params.select([0])
        drift = -gradient(one, problem, weight_decay).flat[0]
        return drift, (lr / batch_size) * sgd_noise_covariance(one, problem)

    def step_mean(self, drift: np.ndarray, dt: float) -> np.ndarray:
        """The mean of one step's increment from a point where the SDE's drift is ``drift`` ``(P,)`` (per unit time),
        step ``dt``: ``(P,)``. Euler–Maruyama's (and every scheme here but the tamed one): ``b dt`` exactly. Weak
        order 1 needs it to be ``b dt + O(dt²)`` (tested)."""
        return np.asarray(drift, dtype=np.float64) * dt

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, increments={self.increments!r})"


#: ``{(name, increments): integrator}``, in the order they were declared.
INTEGRATORS: dict[tuple[str, str], Integrator] = {}


def register(cls: type[Integrator]) -> type[Integrator]:
    """Declare ``cls`` (a class decorator): one integrator per ``(name, increments)``."""
    key = (cls.name, cls.increments)
    if key in INTEGRATORS:
        raise ValueError(f"integrator {key} declared twice")
    INTEGRATORS[key] = cls()
    return cls


def _drop(kw: dict, *names: str) -> dict:
    """``kw`` without ``names``: the common keywords of :meth:`Integrator.run` that one integrator does not use."""
    return {k: v for k, v in kw.items() if k not in names}


def integrator(name: str, increments: str | None = "gaussian") -> Integrator:
    """The integrator the grid stores as ``method=name`` (and ``increments``). Raises ValueError naming the known."""
    key = (name, increments or "gaussian")
    if key not in INTEGRATORS:
        raise ValueError(f"unknown integrator {key}; known: {sorted(INTEGRATORS)}")
    return INTEGRATORS[key]


@register
class SGD(Integrator):
    """SGD itself (the engine's kernel), batch S, at dt = η: one step has exactly the mean and covariance of an EM
    step of SGD's SDE, so SGD is a weak order-1 approximation of it (Li, Tai & E 2019); not a strong one (its noise
    is not a Brownian increment)."""

    name, label = "sgd", "SGD"
    weak_order, strong_order = 1.0, None

    def run(self, start, problem, n_steps, *, lr, weight_decay, batch_size=1, **kw) -> RunResult:
        return run(start, problem, n_steps, method="sgd", lr=lr, weight_decay=weight_decay, batch_size=batch_size,
                   **_drop(kw, "dt", "tau", "increments"))


@register
class GD(Integrator):
    """Full-batch gradient descent (the engine's kernel) at dt = η: Euler for the gradient flow ``dθ = −∇𝓛_γ dt``
    (no noise), order 1."""

    name, label = "gd", "GD"
    weak_order, strong_order = 1.0, 1.0

    def generator(self, params, problem, *, lr, weight_decay, batch_size=1, tau=0.0):
        drift, D = super().generator(params, problem, lr=lr, weight_decay=weight_decay)
        return drift, np.zeros_like(D)

    def run(self, start, problem, n_steps, *, lr, weight_decay, **kw) -> RunResult:
        return run(start, problem, n_steps, method="gd", lr=lr, weight_decay=weight_decay,
                   **_drop(kw, "dt", "tau", "increments", "batch_size"))


@register
class GaussianSGD(Integrator):
    """Euler–Maruyama for SGD's SDE at dt = η ("Gaussian SGD"): Gaussian entry weights with SGD's mean and
    covariance. Weak order 1 and strong order ½ in dt (multiplicative noise)."""

    name, label = "gaussian_sgd", "Gaussian SGD"
    weak_order, strong_order = 1.0, 0.5

    def run(self, start, problem, n_steps, *, lr, weight_decay, batch_size=1, **kw) -> RunResult:
        return run_gaussian_sgd(start, problem, n_steps, lr=lr, weight_decay=weight_decay, batch_size=batch_size,
                                increments=self.increments, method=self.name, **_drop(kw, "dt", "tau", "increments"))


@register
class RademacherSGD(GaussianSGD):
    """The ±1 surrogate at dt = η: bounded increments with the same mean and covariance (simplified weak Euler:
    weak order 1; not a strong approximation of the Brownian path)."""

    increments, label = "rademacher", "±1-weight SGD"
    weak_order, strong_order = 1.0, None


@register
class BernoulliSGD(GaussianSGD):
    """Independent nonnegative entry weights with SGD's marginal law per entry, at dt = η: a surrogate for the
    noise-shape study, not a discretisation of the SDE (no order)."""

    increments, label = "bernoulli", "Bernoulli-weight SGD"
    weak_order, strong_order = None, None


@register
class EulerMaruyama(Integrator):
    """Euler–Maruyama for SGD's SDE ``dθ = −∇𝓛_γ dt + √(T C(θ)) dW`` at dt = η/m, T = η/S: weak order 1, strong
    order ½ (multiplicative noise)."""

    name, label = "sde", "SDE"
    weak_order, strong_order = 1.0, 0.5
    step_divides_lr = True

    def run(self, start, problem, n_steps, *, lr, weight_decay, dt, batch_size=1, **kw) -> RunResult:
        return run_sde(start, problem, n_steps, lr=lr, weight_decay=weight_decay, dt=dt, batch_size=batch_size,
                       method=self.name, **_drop(kw, "tau"))


@register
class TamedEulerMaruyama(EulerMaruyama):
    """Tamed Euler–Maruyama for SGD's SDE at dt = η/m (Hutzenthaler, Jentzen & Kloeden 2012): the drift increment
    ``dt b / (1 + dt ‖b‖)`` (never longer than 1), EM's diffusion increment (:mod:`._tamed_kernel`). It differs from
    EM by ``O(dt²)`` per step, so weak order 1 and strong order ½ (globally Lipschitz coefficients), and it does not
    blow up where EM does for a superlinear drift."""

    name, label = "sde_tamed", "SDE tamed"
    kernel = "dln._tamed_kernel"

    def step_mean(self, drift, dt):
        """``b dt / (1 + dt ‖b‖)``: ``b dt`` less ``dt² ‖b‖ b / (1 + dt ‖b‖)``."""
        drift = np.asarray(drift, dtype=np.float64)
        return tamed_factor(drift, dt) * drift * dt

    def run(self, start, problem, n_steps, *, lr, weight_decay, dt, batch_size=1, **kw) -> RunResult:
        return super().run(start, problem, n_steps, lr=lr, weight_decay=weight_decay, dt=dt, batch_size=batch_size,
                           chunks=TAMED_CHUNKS, **kw)


@register
class ProjectedEulerMaruyama(EulerMaruyama):
    """Projected Euler–Maruyama for SGD's SDE at dt = η/m (Beyn, Isaak & Kruse 2016, J. Sci. Comput. 67): before
    each step a run's θ is projected onto the ball of radius ``R(dt) = ρ* dt^(−α)``, ``α = 1/(4(L − 1))`` (the
    paper's ``1/(2(q − 1))`` for a drift of degree ``q = 2L − 1``; ``ρ*``: θ's own scale, see
    :mod:`._projected_kernel`), then EM's step with EM's draws. Inside the ball it is EM, so one step's mean is
    ``b dt``; the ball grows without bound as dt → 0, and outside it a path is held on it instead of blowing up.
    Strong order ½ (the paper's theorem, under its monotonicity condition, which SGD's SDE does not meet: nor does it
    meet the tamed step's); weak order 1, EM's (not the paper's claim: where a path's moments are bounded it starts
    a step outside the ball with a probability below every power of dt, so its weak error is EM's)."""

    name, label = "sde_projected", "SDE projected"
    kernel = "dln._projected_kernel"

    def run(self, start, problem, n_steps, *, lr, weight_decay, dt, batch_size=1, **kw) -> RunResult:
        if not isinstance(start, Params):
            raise ValueError(f"start must be a Params, got {type(start).__name__}")
        radius = projection_radius(dt, start.arch, problem)
        return super().run(start, problem, n_steps, lr=lr, weight_decay=weight_decay, dt=dt, batch_size=batch_size,
                           chunks=projected_chunks(radius), **kw)


@register
class Langevin(Integrator):
    """Euler–Maruyama for Langevin ``dθ = −∇𝓛_γ dt + √(2τ) dW`` at dt = η/m: additive noise, so weak order 1 and
    strong order 1."""

    name, label = "langevin", "Langevin"
    weak_order, strong_order = 1.0, 1.0
    step_divides_lr = True

    def generator(self, params, problem, *, lr, weight_decay, batch_size=1, tau=0.0):
        drift, D = super().generator(params, problem, lr=lr, weight_decay=weight_decay)
        return drift, 2.0 * tau * np.eye(D.shape[0])

    def run(self, start, problem, n_steps, *, weight_decay, dt, tau, **kw) -> RunResult:
        return run_langevin(start, problem, n_steps, weight_decay=weight_decay, dt=dt, temperature=tau,
                            method=self.name, **_drop(kw, "lr", "increments", "batch_size"))


@register
class AdaptiveStep(Integrator):
    """The SDE with the adaptive step (:func:`~.adaptive.run_sde_adaptive`): Euler–Maruyama steps h ≤ h_max = η/m,
    shortened so that a step moves θ by at most a fraction ρ; stops a path at a blow-up or a stall. Euler–Maruyama
    on each step: weak order 1, strong order ½."""

    name, label = "sde_adaptive", "SDE adaptive"
    weak_order, strong_order = 1.0, 0.5
    adaptive = True
    step_divides_lr = True
    follow: ClassVar[bool] = False

    def run(self, start, problem, t_max, *, lr, weight_decay, m, rho, seed, rec_dt, batch_size=1,
            **kw) -> AdaptiveRun:
        if self.follow:
            kw["follow"] = True
        return run_sde_adaptive(start, problem, t_max, lr=lr, weight_decay=weight_decay,
                                h_max=self.time_step(lr, m), rho=rho, batch_size=batch_size, seed=seed,
                                record_dt=rec_dt, **kw)


@register
class AdaptiveFollow(AdaptiveStep):
    """The adaptive step's follow-every-path mode (``follow=True``): a path is not stopped at a blow-up but followed
    through it (spikes, collapses); the grid's ``"follow"`` tasks."""

    name, label = "follow", "SDE followed"
    follow = True
