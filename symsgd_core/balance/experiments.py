"""The experiments of Notebook 01 (the law of balance), one function each, returning a frozen result.

Each figure of the notebook calls exactly one of these and draws what it returns; the tests and the claims
(:mod:`symsgd_core.balance.claims`) call them directly. Settings are keyword arguments whose defaults are the
notebook's (the sliders start there). ``progress``, where accepted, is called with the fraction done.

* §1 :func:`symmetry_orbit` — one sample's loss and ``G`` along a symmetry orbit ``(λu, w/λ)``;
* §2 :func:`three_dynamics` — gradient flow, SGD and GD + isotropic noise from one start;
* §3 :func:`balance_ensemble` — many SGD runs: ``‖u‖²`` spreads, ``G`` follows an ODE;
* §4 :func:`ito_point` — Itô's lemma term by term and the spectrum of ``C`` at one point;
* §5 :func:`rank1_balance`, :func:`relu_balance_run` (:data:`RELU_FIG2`, shipped precomputed; :data:`RELU_SMALL`,
  run live) — noise balance vs norm balance beyond the scalar model (arXiv 2308.06671, Thm 3.2 and Fig. 2);
* §6 :func:`discrete_breakdown` — the exact one-step identity of discrete SGD and what large ``η`` does.

Data of the scalar examples: :data:`SCALAR_DATA`, ``x ~ N(0, 1)``, ``y = x + ε``, ``σ = 1`` (the paper's Eq. 7
example with k = σ = 1). ``python -m symsgd_core.balance.experiments`` regenerates the precomputed ReLU run.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields, replace

import numpy as np

from ..core.conventions import lr_for_temperature, steps_for_time
from ..core.results import Outcome
from ..core.seeding import stream
from ..core.validation import check_int, check_positive, check_positive_int
from .data import Dataset, GaussianData
from .dynamics import Trajectory, langevin_noise_std, run_gradient_flow, run_langevin, run_sgd
from .law import corollary_bound, corollary_rate, gaussian_rate, half_life, scalar_g_along_path, scalar_g_rate
from .models import Rank1LinearModel, ScalarModel, SymmetricModel
from .observables import (
    ItoTerms,
    NoiseSpectrum,
    discrete_step_factors,
    ito_terms,
    noise_spectrum,
    rank1_population_terms,
    rank1_teacher,
    spread_summary,
    trace_standard_errors,
)
from .relu import ReLUNet

__all__ = [
    "BalanceSeries",
    "DISCRETE_OUTCOMES",
    "DiscreteBreakdownResult",
    "EnsembleResult",
    "ITO_MODELS",
    "ITO_OUTCOMES",
    "ItoPoint",
    "RELU_DATA_FILE",
    "RELU_FIG2",
    "RELU_SMALL",
    "RANK1_OUTCOMES",
    "RELU_BALANCE_OUTCOMES",
    "ReLUBalanceRun",
    "ReLUBalanceView",
    "Rank1BalanceRun",
    "SCALAR_DATA",
    "SymmetryOrbit",
    "TEASER_OUTCOMES",
    "THREE_DYNAMICS_OUTCOMES",
    "TeaserBound",
    "ThreeDynamicsResult",
    "balance_ensemble",
    "discrete_breakdown",
    "ito_outcome",
    "rank1_outcome",
    "figure_records",
    "ito_point",
    "load_relu_balance",
    "rank1_balance",
    "relu_balance_outcome",
    "relu_balance_run",
    "relu_balance_view",
    "shipped_relu_balance",
    "symmetry_orbit",
    "teaser_bound",
    "three_dynamics",
    "write_relu_balance",
]

#: The data law of the scalar examples: ``x ~ N(0, 1)``, ``y = k x + ε``, ``ε ~ N(0, σ²)`` with k = σ = 1.
SCALAR_DATA = GaussianData(k=1.0, sigma=1.0)
#: Runs of the (u, w)-plane figures are declared diverged past this ``max|θ|`` (far beyond any plotted range).
PLANE_DIVERGENCE_LIMIT = 1e6
#: The plane figures draw about this many records of a run (the run itself is recorded at every step).
PLANE_RECORDS = 1000


def _report(progress, fraction: float) -> None:
    if progress is not None:
        progress(fraction)


def divergence_onset(theta, lr: float, steps=None) -> dict:
    """Where a diverging run of the scalar model left the stable zone: ``onset_step``, the first step with
    ``η(u² + w²) > 1`` (−1: none, then single samples with large ``x²`` had ``η·x²(u² + w²) > 1``), and ``max_s``,
    the largest ``η(u² + w²)`` before the divergence.

    Args:
        theta: ``(K, 2)`` the run's states before the divergence; ``steps``: their step numbers (default
            ``0 … K−1``).
    """
    theta = np.asarray(theta, dtype=float).reshape(-1, 2)
    steps = np.arange(theta.shape[0]) if steps is None else np.asarray(steps)
    s = lr * np.sum(theta**2, axis=1)
    over = np.nonzero(s > 1.0)[0]
    return {"onset_step": int(steps[over[0]]) if over.size else -1, "max_s": float(s.max()) if s.size else 0.0}


def figure_records(traj: Trajectory, record_every: int) -> Trajectory:
    """The records of ``traj`` (recorded at every step) at steps ``0, k, 2k, …`` and the last one.

    The engine's numbers do not depend on how often it records, so this is the run recorded every ``k``
    steps, to the bit.
    """
    k = check_positive_int("record_every", record_every)
    last = int(traj.steps[-1])
    idx = list(range(0, last + 1, k))
    if idx[-1] != last:
        idx.append(last)
    pos = np.searchsorted(traj.steps, idx)
    return replace(traj, steps=traj.steps[pos], times=traj.times[pos], theta=traj.theta[pos],
                   observables={key: val[pos] for key, val in traj.observables.items()})


# ============================================================================ notebook 00: the teaser
#: The teaser's times: this many points on [0, t_max].
TEASER_POINTS = 400


@dataclass(frozen=True, eq=False)
class TeaserBound:
    """Corollary 3.3's bound on ``|u² − w²|`` for the scalar model with ``x ~ N(0, 1)``, ``ε ~ N(0, σ²)`` (notebook 00).

    Attributes:
        t: times ``(TEASER_POINTS,)`` on ``[0, t_max]`` (``t = η·steps``).
        bound: ``|G(0)|·e^{−4Tσ²t}`` at ``t``, shape of ``t``.
        outcome: ``conserved`` (``Tσ² = 0``: no gradient noise, no decay; no numbers) or ``balances`` (numbers
            ``half_life``: ``ln 2 / (4Tσ²)`` in units of t; ``steps``: that time in SGD steps at ``η = T``, batch 1;
            ``temperature``).
    """

    t: np.ndarray
    bound: np.ndarray
    outcome: Outcome


#: The outcomes of the teaser (:func:`teaser_bound`).
TEASER_OUTCOMES = ("conserved", "balances")


def teaser_bound(temperature: float = 0.01, sigma: float = 1.0, imbalance0: float = 2.0,
                 t_max: float = 100.0) -> TeaserBound:
    """Notebook 00's teaser: the bound on ``|u² − w²|`` over ``[0, t_max]`` from ``|G(0)| = imbalance0`` at ``T = η/S``
    and label noise ``σ``, and its half-life (:func:`~.law.half_life`).

    Raises:
        ValueError: a negative ``temperature`` or ``sigma``, a non-positive ``imbalance0`` or ``t_max``.
    """
    imbalance0 = check_positive("imbalance0", imbalance0)
    t = np.linspace(0.0, check_positive("t_max", t_max), TEASER_POINTS)
    rate = gaussian_rate(temperature, sigma)
    t_half = half_life(rate)
    if math.isinf(t_half):
        outcome = Outcome("conserved", False, {})
    else:
        steps = steps_for_time(temperature, t_half)  # rate > 0: T > 0
        outcome = Outcome("balances", False, {"half_life": t_half, "steps": int(steps),
                                               "temperature": float(temperature)})
    return TeaserBound(t=t, bound=corollary_bound(t, imbalance0, rate), outcome=outcome)


# ============================================================================ §1 the symmetry
#: The orbit's λ values of §1's right panel (λ ∈ [1/2, 2], log-spaced).
ORBIT_LAMBDAS = np.geomspace(0.5, 2.0, 121)


@dataclass(frozen=True, eq=False)
class SymmetryOrbit:
    """One sample's loss ``ℓ = (uwx − y)²`` and ``G = u² − w²`` along the orbit ``(λu₀, w₀/λ)``.

    Attributes:
        lam, theta0, point: the slider's λ, the start ``(u₀, w₀)`` and ``(λu₀, w₀/λ)``.
        x, y: the sample.
        loss0, loss, G0, G: ``ℓ`` and ``G`` at the start and at the point.
        lambdas, loss_curve, G_curve: ``(K,)`` λ values of the orbit and ``ℓ``, ``G`` there.
        outcome: always ``orbit`` (what §1 shows); numbers ``u``, ``w`` (the point), ``loss``, ``loss0``, ``G``,
            ``G0``.
    """

    lam: float
    theta0: np.ndarray
    point: np.ndarray
    x: float
    y: float
    loss0: float
    loss: float
    G0: float
    G: float
    lambdas: np.ndarray
    loss_curve: np.ndarray
    G_curve: np.ndarray
    outcome: Outcome


def symmetry_orbit(lam: float = 1.0, u0: float = 1.5, w0: float = 0.5, x: float = 1.0, y: float = 1.0,
                   lambdas=ORBIT_LAMBDAS) -> SymmetryOrbit:
    """§1: the loss of one sample is constant along the symmetry orbit, ``G`` is not."""
    m = ScalarModel()
    th0 = np.array([u0, w0])
    xs, ys = np.array([x]), np.array([y])
    point = np.array([lam * u0, w0 / lam])
    curve = np.stack([m.rescale(th0, float(s)) for s in lambdas])
    here = dict(loss0=float(m.per_sample_loss(th0, xs, ys)[0]), loss=float(m.per_sample_loss(point, xs, ys)[0]),
                G0=float(m.G(th0)), G=float(m.G(point)))
    return SymmetryOrbit(lam=lam, theta0=th0, point=point, x=x, y=y, **here, lambdas=np.asarray(lambdas),
                         loss_curve=m.per_sample_loss(curve, xs, ys)[:, 0], G_curve=m.G(curve),
                         outcome=Outcome("orbit", False, {"u": float(point[0]), "w": float(point[1]), **here}))


# ============================================================================ §2 three dynamics
@dataclass(frozen=True, eq=False)
class ThreeDynamicsResult:
    """Gradient flow, SGD and GD + isotropic noise from one start (§2).

    Attributes:
        flow: gradient flow on the exact population loss (400 records up to ``t = η·steps``).
        sgd: SGD on fresh samples, recorded at **every** step (the figure draws :attr:`sgd_drawn`).
        iso: GD + isotropic kicks of size :attr:`noise_std` (seed ``seed + 10_000``), about
            :data:`PLANE_RECORDS` records.
        noise_std: the kick size, ``noise ×`` :func:`~symsgd_core.balance.dynamics.langevin_noise_std` at the start.
        settings: the arguments.
        outcome: :func:`three_dynamics_outcome`.
    """

    flow: Trajectory
    sgd: Trajectory
    iso: Trajectory
    noise_std: float
    settings: dict
    outcome: Outcome

    @property
    def record_every(self) -> int:
        return max(self.settings["steps"] // PLANE_RECORDS, 1)

    @property
    def sgd_drawn(self) -> Trajectory:
        """The SGD run at the figure's record interval (the same numbers as :attr:`sgd`)."""
        return figure_records(self.sgd, self.record_every)


def three_dynamics(lr: float = 0.02, batch_size: int = 1, noise: float = 1.0, u0: float = 2.0, w0: float = -0.3,
                   steps: int = 2000, seed: int = 0, progress=None) -> ThreeDynamicsResult:
    """§2: the three dynamics on ``ℓ = (uwx − y)²`` with :data:`SCALAR_DATA` (flow and GD on the population loss)."""
    th0 = np.array([u0, w0], dtype=float)
    m, d = ScalarModel(), SCALAR_DATA
    flow = run_gradient_flow(m, th0, d, t_end=lr * steps, n_records=400, divergence_limit=PLANE_DIVERGENCE_LIMIT)
    _report(progress, 0.25)
    sgd = run_sgd(m, th0, d, lr=lr, steps=steps, batch_size=batch_size, record_every=1, seed=seed,
                  divergence_limit=PLANE_DIVERGENCE_LIMIT)
    _report(progress, 0.5)
    s = noise * langevin_noise_std(m, th0, d, lr, batch_size)
    iso = run_langevin(m, th0, d, lr=lr, noise_std=s, steps=steps, record_every=max(steps // PLANE_RECORDS, 1),
                       seed=seed + 10_000, divergence_limit=PLANE_DIVERGENCE_LIMIT)
    _report(progress, 0.75)
    return ThreeDynamicsResult(flow=flow, sgd=sgd, iso=iso, noise_std=float(s),
                               settings=dict(lr=lr, batch_size=batch_size, noise=noise, u0=u0, w0=w0, steps=steps,
                                             seed=seed),
                               outcome=three_dynamics_outcome(flow, figure_records(sgd, max(steps // PLANE_RECORDS, 1)),
                                                              iso, lr, u0, w0, float(s)))


#: The outcomes of §2 (:func:`three_dynamics_outcome`).
THREE_DYNAMICS_OUTCOMES = ("diverged", "saddle", "compared")


def three_dynamics_outcome(flow: Trajectory, sgd: Trajectory, iso: Trajectory, lr: float, u0: float,
                           w0: float, noise_std: float | None = None) -> Outcome:
    """§2's outcome: ``diverged`` (SGD or the isotropic walker; numbers ``<run>_diverged_step``, ``<run>_onset_step``,
    ``<run>_max_s`` of each diverged run, :func:`divergence_onset`), ``saddle`` (the start (0, 0), where nothing
    moves), else ``compared``: ``G0`` and the last ``G`` of each run (``G_flow``, ``G_sgd``, ``G_iso``) and, where
    given, ``noise_std`` (the isotropic kick size)."""
    runs = {"sgd": sgd, "iso": iso}
    numbers: dict = {}
    for key, tr in runs.items():
        if tr.n_diverged:
            step = int(tr.diverged_step[0])
            k_rec = int(np.searchsorted(tr.steps, step))
            onset = divergence_onset(tr.theta[:k_rec, 0, :], lr, steps=tr.steps[:k_rec])
            numbers.update({f"{key}_diverged_step": step, f"{key}_onset_step": onset["onset_step"],
                            f"{key}_max_s": onset["max_s"]})
    if numbers:
        return Outcome("diverged", True, numbers)
    if u0 == 0 and w0 == 0:
        return Outcome("saddle", True, {})
    return Outcome("compared", False, {"G0": u0 * u0 - w0 * w0, **{f"G_{k}": float(tr.observables["G"][-1, 0])
                                                                   for k, tr in (("flow", flow), *runs.items())},
                                       **({} if noise_std is None else {"noise_std": float(noise_std)})})


# ============================================================================ §3 the ensemble and the ODE
#: §3's start, duration (in t) and seed.
ENSEMBLE_START = (1.5, 0.5)
ENSEMBLE_T_END = 40.0
ENSEMBLE_SEED = 0


@dataclass(frozen=True, eq=False)
class EnsembleResult:
    """Many SGD runs from :data:`ENSEMBLE_START` (§3).

    Attributes:
        traj: the runs (about 200 records up to ``t = ENSEMBLE_T_END``).
        temperature: ``T = η`` (batch size 1).
        runs: number of runs that did not diverge (the series below are over those).
        spread_u, spread_G: :func:`~symsgd_core.balance.observables.spread_summary` of ``‖u‖²`` and ``G``.
        G_ode: ``(K, runs)``, ``dG/dt = −4T g(v) G`` integrated along each run's own ``v(t)``.
        bound: ``(K,)``, Corollary 3.3's ``|G₀| e^{−4TΔt/α₁}``.
        theta0, t_end, seed: the start, the duration and the seed.
        outcome: ``some_diverged`` (a failure; number ``diverged``: how many runs, left out of every series) or
            ``compared``; both with ``temperature``, ``runs_ok``, ``steps``, ``t_end`` (the last record's t) and, at
            the last record, ``spread_u``, ``spread_G`` (standard deviations across runs), ``mean_G``, ``ode``
            (the ODE's G, mean over runs) and ``bound``.
    """

    traj: Trajectory
    temperature: float
    runs: int
    spread_u: dict
    spread_G: dict
    G_ode: np.ndarray
    bound: np.ndarray
    theta0: tuple
    t_end: float
    seed: int
    outcome: Outcome


def balance_ensemble(temperature: float = 0.02, runs: int = 300, progress=None) -> EnsembleResult:
    """§3: ``runs`` SGD runs at ``T = η`` (batch size 1) for ``t = ENSEMBLE_T_END``, fresh Gaussian samples."""
    lr = lr_for_temperature(temperature, 1)
    steps = steps_for_time(lr, ENSEMBLE_T_END)
    traj = run_sgd(ScalarModel(), np.array(ENSEMBLE_START), SCALAR_DATA, lr=lr, steps=steps, batch_size=1, runs=runs,
                   record_every=max(steps // 200, 1), seed=ENSEMBLE_SEED)
    _report(progress, 0.5)
    ok = traj.ok_runs
    t = traj.times
    G = traj.observables["G"][:, ok]
    v = traj.observables["v"][:, ok]
    T = float(temperature)
    moments = SCALAR_DATA.moments()
    g = moments.g(v)  # the law along each run: the trapezoid integral of g(v_r) over the records
    integral = np.concatenate([np.zeros((1, g.shape[1])),
                               np.cumsum(0.5 * (g[1:] + g[:-1]) * np.diff(t)[:, None], axis=0)])
    su, sg = spread_summary(traj.observables["u_sq"][:, ok]), spread_summary(G)
    G_ode = scalar_g_along_path(G[0][None, :], T, integral)
    bound = corollary_bound(t, abs(G[0, 0]), corollary_rate(T, moments))
    numbers = {"temperature": T, "runs_ok": int(ok.sum()), "steps": int(traj.steps[-1]), "t_end": float(t[-1]),
               "spread_u": float(su["std"][-1]), "spread_G": float(sg["std"][-1]), "mean_G": float(sg["mean"][-1]),
               "ode": float(G_ode.mean(axis=1)[-1]), "bound": float(bound[-1])}
    return EnsembleResult(traj=traj, temperature=T, runs=int(ok.sum()), spread_u=su, spread_G=sg, G_ode=G_ode,
                          bound=bound, theta0=ENSEMBLE_START, t_end=ENSEMBLE_T_END, seed=ENSEMBLE_SEED,
                          outcome=(Outcome("some_diverged", True, {**numbers, "diverged": int(traj.n_diverged)})
                                   if traj.n_diverged else Outcome("compared", False, numbers)))


# ============================================================================ §4 Itô's lemma term by term
#: The two models of §4: the scalar model and a rank-1 linear net 3 → 2 (``θ = (u·û, w·ŵ)``).
ITO_MODELS = ("scalar ℓ = (uwx − y)²", "rank-1 linear net 3→2")


@functools.cache
def _ito_setups():
    """``{name: (model, dataset, û, ŵ)}`` of :data:`ITO_MODELS` (``û = ŵ = None`` for the scalar model)."""
    teacher = np.outer([1.0, 0.5], [0.6, 0.8, 0.0])
    rank1 = GaussianData(sigma=1.0, d_in=3, d_out=2, teacher=teacher).dataset(400, seed=1)
    return {ITO_MODELS[0]: (ScalarModel(), SCALAR_DATA.dataset(1000, seed=2), None, None),
            ITO_MODELS[1]: (Rank1LinearModel(d_in=3, d_out=2), rank1, np.array([0.6, 0.8]),
                            np.array([0.48, 0.36, 0.8]))}


@dataclass(frozen=True, eq=False)
class ItoPoint:
    """Itô's lemma for ``G`` and ``‖u‖²`` at one point, with the spectrum of ``C`` (§4).

    Attributes:
        model_name, model, data, theta, temperature: where (one of :data:`ITO_MODELS`).
        G_terms, u_terms: :class:`~symsgd_core.balance.observables.ItoTerms` of ``G`` and of ``‖u‖²``.
        spectrum: :class:`~symsgd_core.balance.observables.NoiseSpectrum`, ``None`` at ``u = w = 0`` (no ``Bθ``).
        eigenvalues: eigenvalues of ``C(θ)``, ascending.
        sym_residual: ``max_n |θᵀB∇ℓ(θ, x_n)|``; BC_norm: ``‖θᵀBC‖``.
        tr_cov_u, tr_cov_w: the two noise traces.
        scalar_rate: the scalar model's ``−4T·g(v)·G`` (``None`` for the rank-1 net).
        outcome: :func:`ito_outcome`.
    """

    model_name: str
    model: SymmetricModel
    data: Dataset
    theta: np.ndarray
    temperature: float
    G_terms: ItoTerms
    u_terms: ItoTerms
    spectrum: NoiseSpectrum | None
    eigenvalues: np.ndarray
    sym_residual: float
    BC_norm: float
    tr_cov_u: float
    tr_cov_w: float
    scalar_rate: float | None
    outcome: Outcome


#: The outcomes of §4 (:func:`ito_outcome`).
ITO_OUTCOMES = ("no_direction", "null_direction")


def ito_outcome(G_terms: ItoTerms, u_terms: ItoTerms, spectrum: NoiseSpectrum | None) -> Outcome:
    """§4's outcome: ``no_direction`` (``u = w = 0``: ``Jθ = 0``, no symmetry direction to mark; a failure, no
    numbers) or ``null_direction``. Numbers: ``G_rate``, ``G_drift``, ``G_noise`` (dG's expected rate, drift and
    noise coefficient), ``u_drift``, ``u_ito``, ``u_noise`` (d‖u‖²'s drift, Itô correction and noise coefficient),
    ``null_weight`` (the largest weight of ``Jθ/‖Jθ‖`` on an eigenvector of C), ``null_eigenvalue`` (that
    eigenvector's eigenvalue) and ``largest_eigenvalue``."""
    if spectrum is None:
        return Outcome("no_direction", True, {})
    zero = int(np.argmax(spectrum.overlaps))
    return Outcome("null_direction", False, {
        "G_rate": float(G_terms.rate), "G_drift": float(G_terms.drift), "G_noise": float(G_terms.noise_std),
        "u_drift": float(u_terms.drift), "u_ito": float(u_terms.ito_correction), "u_noise": float(u_terms.noise_std),
        "null_weight": float(spectrum.overlaps[zero]), "null_eigenvalue": float(spectrum.eigenvalues[zero]),
        "largest_eigenvalue": float(spectrum.eigenvalues[-1])})


def ito_point(model: str = ITO_MODELS[0], u: float = 1.5, w: float = 0.5, temperature: float = 0.05) -> ItoPoint:
    """§4: the drift, Itô correction and noise of ``dG`` and ``d‖u‖²`` at ``(u, w)``, and the spectrum of ``C``."""
    m, data, u_dir, w_dir = _ito_setups()[model]
    th = np.array([u, w], dtype=float) if u_dir is None else np.concatenate([u * u_dir, w * w_dir])
    T = float(temperature)
    x, y = data.full()
    C = m.noise_cov(th, x, y)
    bth = m.balance_signs() * th
    trc_u, trc_w = m.noise_traces(th, x, y)
    spec = noise_spectrum(m, th, data) if np.any(bth != 0) else None
    rate = None
    if u_dir is None:
        rate = float(scalar_g_rate(T, float(data.moments().g(u * w)), u * u - w * w))
    G_terms, u_terms = ito_terms(m, th, data, T, "G"), ito_terms(m, th, data, T, "u_sq")
    return ItoPoint(model_name=model, model=m, data=data, theta=th, temperature=T,
                    G_terms=G_terms, u_terms=u_terms, spectrum=spec, outcome=ito_outcome(G_terms, u_terms, spec),
                    eigenvalues=spec.eigenvalues if spec is not None else np.linalg.eigvalsh(C),
                    sym_residual=float(np.max(np.abs(m.symmetry_residual(th, x, y)))),
                    BC_norm=float(np.linalg.norm(bth @ C)), tr_cov_u=float(trc_u), tr_cov_w=float(trc_w),
                    scalar_rate=rate)


# ============================================================================ §5 beyond the toy
@dataclass(frozen=True, eq=False)
class BalanceSeries:
    """Recorded series of SGD runs that the noise-balance claims read (arrays ``(K,)``, or ``(K, R)`` per run).

    Attributes:
        times: ``(K,)`` record times ``t``.
        G, u_sq, w_sq: ``‖u‖² − ‖w‖²``, ``‖u‖²``, ``‖w‖²``.
        tr_cov_u, tr_cov_w: ``Tr Cov∇_uℓ``, ``Tr Cov∇_wℓ``.
        grad_sq_u, grad_sq_w: ``‖∇_uL‖²``, ``‖∇_wL‖²`` of the full (evaluation-set or population) gradient.
        trace_se: ``(3,)`` standard errors of ``Tr_u``, ``Tr_w`` and ``Tr_u − Tr_w`` (0 for exact traces).
    """

    times: np.ndarray
    G: np.ndarray
    u_sq: np.ndarray
    w_sq: np.ndarray
    tr_cov_u: np.ndarray
    tr_cov_w: np.ndarray
    grad_sq_u: np.ndarray
    grad_sq_w: np.ndarray
    trace_se: np.ndarray


@dataclass(frozen=True, eq=False)
class Rank1BalanceRun:
    """SGD on the rank-1 linear net (§5a): per-run series, their mean, and the settings.

    Attributes:
        runs: :class:`BalanceSeries` of ``(K, R_ok)`` arrays (the runs that did not diverge).
        mean: their run means (``(K,)``), what the claims test.
        diverged: number of runs that diverged (left out).
        settings: d_in, d_out, lr, batch_size, steps, runs, seed, sigma.
        outcome: :func:`rank1_outcome`.
    """

    runs: BalanceSeries
    mean: BalanceSeries
    diverged: int
    settings: dict
    outcome: Outcome | None = None


#: The outcomes of §5a (:func:`rank1_outcome`).
RANK1_OUTCOMES = ("all_diverged", "some_diverged", "compared")


def rank1_outcome(run: Rank1BalanceRun) -> Outcome:
    """§5a's outcome: ``all_diverged`` (number ``runs``: how many were started), ``some_diverged`` (number
    ``diverged``: left out) or ``compared`` (both failures but the last). Unless every run diverged, numbers of the
    noise-balance claim over the last part of the mean run (:func:`~.claims.rank1_claims`): ``trace_ratio``,
    ``predicted_ratio`` (the law's, from G's drift), ``traces_met`` (the traces within
    :data:`~.claims.TRACES_MET_FACTOR` of each other) and ``norm_ratio`` (‖u‖²/‖w‖² at the end)."""
    from .claims import rank1_claims, traces_met  # the claims module imports this one

    if run.runs.G.shape[1] == 0:
        return Outcome("all_diverged", True, {"runs": int(run.settings["runs"])})
    nb = rank1_claims(run)[0].details
    numbers = {"trace_ratio": nb["trace_ratio"], "predicted_ratio": nb["predicted_ratio"],
               "traces_met": bool(traces_met(nb["trace_ratio"])),
               "norm_ratio": float(run.mean.u_sq[-1] / run.mean.w_sq[-1])}
    if run.diverged:
        return Outcome("some_diverged", True, {**numbers, "diverged": int(run.diverged)})
    return Outcome("compared", False, numbers)


def rank1_balance(d_in: int = 5, d_out: int = 2, lr: float = 0.02, steps: int = 4000, seed: int = 0, *,
                  runs: int = 8, n_records: int = 101, sigma: float = 1.0, u_scale: float = 0.3,
                  w_scale: float = 2.0) -> Rank1BalanceRun:
    """§5a: SGD (``S = 1``, fresh samples) on the rank-1 linear net ``f(x) = u (wᵀx)``, ``runs`` runs.

    Data: ``x ~ N(0, I_{d_in})``, ``y = K x + ε`` with the rank-1 teacher
    :func:`~symsgd_core.balance.observables.rank1_teacher` and ``ε ~ N(0, σ² I)``. Start:
    ``u = u_scale·a/‖a‖``, ``w = w_scale·b/‖b‖`` (far from balance). Noise traces and gradient norms are the
    exact population values (:func:`~symsgd_core.balance.observables.rank1_population_terms`), so the series
    carry no evaluation-set error (``trace_se = 0``).

    With the net at the teacher, ``A = 0`` leaves ``Tr Cov∇_uℓ = 4σ²d_out‖w‖²`` and
    ``Tr Cov∇_wℓ = 4σ²d_in‖u‖²``: noise balance then means ``‖u‖²/‖w‖² = d_out/d_in``, not 1.
    """
    n_records = check_int("n_records", n_records, minimum=2)
    steps = check_int("steps", steps, minimum=n_records - 1)
    model = Rank1LinearModel(d_in, d_out)
    K = rank1_teacher(model.d_in, model.d_out)
    data = GaussianData(sigma=sigma, d_in=d_in, d_out=d_out, teacher=K)
    a, b = K[:, 0] / np.linalg.norm(K[:, 0]), K[0] / np.linalg.norm(K[0])
    theta0 = np.concatenate([u_scale * a, w_scale * np.sign(K[0, 0]) * b])
    tr = run_sgd(model, theta0, data, lr=lr, steps=steps, batch_size=1, runs=runs,
                 record_every=max(steps // (n_records - 1), 1), seed=seed, eval_data=data.dataset(64, seed=12345))
    ok = tr.ok_runs
    pop = rank1_population_terms(tr.theta[:, ok, :], K, sigma)
    series = BalanceSeries(times=tr.times, G=tr.observables["G"][:, ok], u_sq=tr.observables["u_sq"][:, ok],
                           w_sq=tr.observables["w_sq"][:, ok], tr_cov_u=pop["tr_u"], tr_cov_w=pop["tr_w"],
                           grad_sq_u=pop["grad_sq_u"], grad_sq_w=pop["grad_sq_w"], trace_se=np.zeros(3))
    mean = replace(series, **{f.name: getattr(series, f.name).mean(axis=1) for f in fields(series)
                              if f.name not in ("times", "trace_se")})
    run = Rank1BalanceRun(runs=series, mean=mean, diverged=int(tr.n_diverged),
                          settings={"d_in": d_in, "d_out": d_out, "lr": lr, "batch_size": 1, "steps": steps,
                                    "runs": runs, "seed": seed, "sigma": sigma})
    return replace(run, outcome=rank1_outcome(run))


#: The paper-size ReLU run shipped in ``data_files/relu_balance.npz`` (arXiv 2308.06671, Fig. 2: 20 → 200 → 20,
#: y = x + ε). η, S, steps, σ, initialisation and the evaluation set are this project's choices (the paper's are
#: not given); ``python -m symsgd_core.balance.experiments`` regenerates the file (~3 min on 2 cores).
RELU_FIG2 = {"d_in": 20, "hidden": 200, "d_out": 20, "sigma": 1.0, "lr": 0.004, "batch_size": 1, "steps": 40_000,
             "n_records": 101, "n_eval": 2048, "seed": 0, "eval_seed": 12345, "init_scale": 1.0}

#: A reduced ReLU run that the notebook can simulate live (well under a second or two).
RELU_SMALL = {"d_in": 5, "hidden": 50, "d_out": 5, "sigma": 1.0, "lr": 0.015, "batch_size": 1, "steps": 3000,
              "n_records": 26, "n_eval": 1024, "seed": 0, "eval_seed": 12345, "init_scale": 1.0}

RELU_DATA_FILE = "relu_balance.npz"


@dataclass(frozen=True, eq=False)
class ReLUBalanceRun(BalanceSeries):
    """One SGD run of a ReLU net (§5b): the :class:`BalanceSeries` (``(K,)``) plus the net's own records.

    Attributes:
        steps, loss: ``(K,)`` step numbers and loss on the evaluation set.
        neuron_tr_u, neuron_tr_w, neuron_G: ``(hidden,)`` per-neuron noise traces and ``G`` at the end.
        final_theta: ``(P,)`` the last parameters.
        diverged: 1 if the run diverged (it is then cut there), else 0.
        settings: the arguments (saved as ``params`` in the data file).
    """

    steps: np.ndarray
    loss: np.ndarray
    neuron_tr_u: np.ndarray
    neuron_tr_w: np.ndarray
    neuron_G: np.ndarray
    final_theta: np.ndarray
    diverged: int
    settings: dict

    @property
    def dead_neurons(self) -> int:
        """Hidden neurons with no gradient noise at the end (both per-neuron traces 0)."""
        return int(np.sum(~((self.neuron_tr_u + self.neuron_tr_w) > 0)))

    @property
    def neuron_ratio_quartiles(self) -> tuple[float, float]:
        """The middle half (25 % and 75 % quantiles) of the live neurons' trace ratios ``Tr_u/Tr_w`` at the end;
        NaN when every neuron is dead."""
        active = (self.neuron_tr_u + self.neuron_tr_w) > 0
        if not active.any():
            return float("nan"), float("nan")
        q = np.quantile(self.neuron_tr_u[active] / self.neuron_tr_w[active], [0.25, 0.75])
        return float(q[0]), float(q[1])


def relu_balance_run(*, d_in: int, hidden: int, d_out: int, sigma: float, lr: float, batch_size: int, steps: int,
                     n_records: int, n_eval: int, seed: int, eval_seed: int, init_scale: float,
                     chunks: int = 1, progress=None) -> ReLUBalanceRun:
    """SGD on a ReLU net ``d_in → hidden → d_out`` with fresh samples of ``y = K x + ε`` (``K = eye``), recorded.

    Uses the engine: :class:`~symsgd_core.balance.relu.ReLUNet` (``init_params(scale=init_scale)``, numpy
    backend: closed-form noise traces) and :func:`~symsgd_core.balance.dynamics.run_sgd` on
    :class:`~symsgd_core.balance.data.GaussianData` (fresh samples each step), observables on a fixed
    evaluation set of ``n_eval`` points drawn with ``eval_seed``. The run is split into ``chunks`` calls that
    continue one random stream (same numbers as one call); ``progress`` gets the fraction done after each.

    Raises:
        ValueError: bad sizes (``n_records ≥ 2``, ``steps`` divisible into ``n_records − 1`` intervals and
            ``chunks``).
    """
    settings = {"d_in": d_in, "hidden": hidden, "d_out": d_out, "sigma": sigma, "lr": lr, "batch_size": batch_size,
                "steps": steps, "n_records": n_records, "n_eval": n_eval, "seed": seed, "eval_seed": eval_seed,
                "init_scale": init_scale}
    steps = check_positive_int("steps", steps)
    n_records = check_int("n_records", n_records, minimum=2)
    chunks = check_positive_int("chunks", chunks)
    if steps % (n_records - 1):
        raise ValueError(f"steps ({steps}) must be a multiple of n_records − 1 ({n_records - 1})")
    every = steps // (n_records - 1)
    if (n_records - 1) % chunks:
        raise ValueError(f"n_records − 1 ({n_records - 1}) must be a multiple of chunks ({chunks})")
    net = ReLUNet(d_in, hidden, d_out)
    data = GaussianData(k=1.0, sigma=sigma, d_in=d_in, d_out=d_out)
    eval_set = data.dataset(check_positive_int("n_eval", n_eval), seed=eval_seed)
    theta = net.init_params(1, seed=seed, scale=init_scale)
    rng = stream(seed)
    per_chunk = steps // chunks
    parts = []
    for c in range(chunks):
        tr = run_sgd(net, theta, data, lr=lr, steps=per_chunk, batch_size=batch_size, record_every=every, seed=rng,
                     eval_data=eval_set)
        parts.append(tr if c == 0 else replace(tr, steps=tr.steps[1:], times=tr.times[1:], theta=tr.theta[1:],
                                               observables={k: v[1:] for k, v in tr.observables.items()}))
        theta = tr.final_theta
        _report(progress, (c + 1) / chunks)
        if tr.n_diverged:
            break
    obs = {k: np.concatenate([p.observables[k][:, 0] for p in parts]) for k in
           ("G", "u_sq", "w_sq", "tr_cov_u", "tr_cov_w", "loss")}
    thetas = np.concatenate([p.theta[:, 0, :] for p in parts])
    step_nums = np.concatenate([p.steps + c * per_chunk for c, p in enumerate(parts)])
    x, y = eval_set.full()
    grads = net.grad(thetas, x, y)
    final = thetas[-1]
    ntu, ntw = net.per_neuron_noise_traces(final, x, y)
    return ReLUBalanceRun(**obs, times=lr * step_nums.astype(float), steps=step_nums,
                          grad_sq_u=np.sum(grads[:, net.u_index] ** 2, axis=1),
                          grad_sq_w=np.sum(grads[:, net.w_index] ** 2, axis=1),
                          trace_se=np.array(trace_standard_errors(net, final, x, y)), neuron_tr_u=ntu, neuron_tr_w=ntw,
                          neuron_G=net.per_neuron_G(final), final_theta=final,
                          diverged=int(any(p.n_diverged for p in parts)), settings=settings)


def write_relu_balance(path, **overrides) -> ReLUBalanceRun:
    """Run :func:`relu_balance_run` with :data:`RELU_FIG2` (plus ``overrides``) and save it as ``.npz``."""
    import json

    run = relu_balance_run(**{**RELU_FIG2, **overrides})
    arrays = {f.name: np.asarray(getattr(run, f.name)) for f in fields(run) if f.name != "settings"}
    np.savez_compressed(path, **arrays, params=np.array(json.dumps(run.settings)))
    return run


def load_relu_balance(path=None) -> ReLUBalanceRun:
    """Load a saved ReLU run (default: the package's ``data_files/relu_balance.npz``).

    Raises:
        ValueError: the file is missing (regenerate it with ``python -m symsgd_core.balance.experiments``).
    """
    import json
    import pathlib

    p = pathlib.Path(__file__).parent.parent / "data_files" / RELU_DATA_FILE if path is None else pathlib.Path(path)
    if not p.exists():
        raise ValueError(f"{p} is missing; regenerate it with `python -m symsgd_core.balance.experiments`")
    with np.load(p, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files if k != "params"}
        settings = json.loads(str(f["params"]))
    arrays["diverged"] = int(arrays["diverged"])
    return ReLUBalanceRun(**arrays, settings=settings)


def shipped_relu_balance(path=None) -> tuple[ReLUBalanceRun | None, str | None]:
    """The shipped paper-size ReLU run (:func:`load_relu_balance` at ``path``) and None, or None and why it is missing
    (in words)."""
    try:
        return load_relu_balance(path), None
    except ValueError as exc:
        return None, str(exc)


@dataclass(frozen=True, eq=False)
class ReLUBalanceView:
    """§5b's figure: the shipped paper-size ReLU run and a small one simulated now, over the last ``window``.

    Attributes:
        paper: the shipped run (None: its file is missing).  live: the small run (:data:`RELU_SMALL` with the
            sliders).  window: the fraction of each run the ratios average over.
        outcome: :func:`relu_balance_outcome`.
    """

    paper: ReLUBalanceRun | None
    live: ReLUBalanceRun
    window: float
    outcome: Outcome


#: The outcomes of §5b (:func:`relu_balance_outcome`).
RELU_BALANCE_OUTCOMES = ("compared", "paper_missing", "live_diverged")


def relu_balance_outcome(paper: ReLUBalanceRun | None, paper_error: str | None, live: ReLUBalanceRun,
                         window: float) -> Outcome:
    """§5b's outcome: ``live_diverged`` (the live run diverged; a failure), ``paper_missing`` (the shipped file is
    missing; a failure) or ``compared``. Numbers: per run (prefix ``paper_``, ``live_``) where it exists and did not
    diverge, ``trace_ratio`` (mean Tr_u / mean Tr_w over the window), ``predicted_ratio`` (the law's, from G's drift)
    and ``norm_ratio`` (‖u‖²/‖w‖² at the end) (:func:`~.claims.relu_balance_claims`); for the paper run also
    ``paper_quartiles`` (the middle half of the neurons' trace ratios) and ``paper_dead`` (dead neurons). Label, where
    the file is missing: ``paper_error`` (why, in words)."""
    from .claims import relu_balance_claims  # the claims module imports this one

    numbers: dict = {}
    labels: dict = {}
    for prefix, run in (("paper_", paper), ("live_", None if live.diverged else live)):
        if run is not None:
            nb, norms = relu_balance_claims(run, window)
            numbers.update({prefix + "trace_ratio": nb.details["trace_ratio"],
                            prefix + "predicted_ratio": nb.details["predicted_ratio"],
                            prefix + "norm_ratio": norms.details["norm_ratio"]})
    if paper is not None:
        numbers.update(paper_quartiles=paper.neuron_ratio_quartiles, paper_dead=paper.dead_neurons)
    else:
        labels["paper_error"] = paper_error
    if live.diverged:
        return Outcome("live_diverged", True, numbers, labels)
    return (Outcome("paper_missing", True, numbers, labels) if paper is None
            else Outcome("compared", False, numbers, labels))


#: The live run's record chunks (progress is reported after each).
RELU_LIVE_CHUNKS = 5


def relu_balance_view(window: float = 0.25, hidden: int = RELU_SMALL["hidden"], lr: float = RELU_SMALL["lr"],
                      steps: int = RELU_SMALL["steps"], seed: int = 0, data_path=None, cache: dict | None = None,
                      progress=None) -> ReLUBalanceView:
    """§5b: the shipped run at ``data_path`` (None: the package's) and :func:`relu_balance_run` at :data:`RELU_SMALL`
    with ``hidden``, ``lr``, ``steps``, ``seed``, compared over the last ``window``. ``cache``: a dict the caller
    keeps between calls, holding the last live run by its settings (a change of ``window`` alone re-simulates
    nothing); ``progress`` gets the live run's fraction done."""
    paper, paper_error = shipped_relu_balance(data_path)
    key = (int(hidden), float(lr), int(steps), int(seed))
    cache = {} if cache is None else cache
    if key not in cache:
        cache.clear()
        cache[key] = relu_balance_run(**{**RELU_SMALL, "hidden": int(hidden), "lr": float(lr), "steps": int(steps),
                                         "seed": int(seed)}, chunks=RELU_LIVE_CHUNKS, progress=progress)
    live = cache[key]
    return ReLUBalanceView(paper, live, float(window), relu_balance_outcome(paper, paper_error, live, window))


# ============================================================================ §6 where the continuous picture breaks
@dataclass(frozen=True, eq=False)
class DiscreteBreakdownResult:
    """One SGD run of the scalar model recorded at every step, and its exact one-step factors (§6).

    Attributes:
        traj: the run (diverged runs are cut at :data:`PLANE_DIVERGENCE_LIMIT`).
        lr: ``η``.
        theta: ``(n, 2)`` the states before a divergence (all ``steps + 1`` otherwise).
        diverged: the run diverged.
        moved: the start is not the saddle ``(0, 0)`` (where nothing moves and there is no factor to read).
        facts: :func:`~symsgd_core.balance.observables.discrete_step_factors` of :attr:`theta` (``None`` when
            the run did not move or has fewer than 2 states).
        G: ``(n,)`` ``u² − w²`` of the states.
        G_floor: ``(n,)`` the round-off level ``64·eps·(u² + w²)`` below which the sign of ``G`` means nothing.
        flips, grows: steps with both states resolved where ``G`` changed sign (factor < 0) / grew in size
            (factor < −1).
        max_eta_g: the largest ``η|ḡ_B|`` of the run.
        outcome: :func:`discrete_breakdown_outcome`.
    """

    traj: Trajectory
    lr: float
    theta: np.ndarray
    diverged: bool
    moved: bool
    facts: dict | None
    G: np.ndarray
    G_floor: np.ndarray
    flips: int
    grows: int
    max_eta_g: float
    outcome: Outcome


#: The outcomes of §6 (:func:`discrete_breakdown_outcome`).
DISCRETE_OUTCOMES = ("saddle", "diverged", "sign_flips", "continuous")


def discrete_breakdown_outcome(traj: Trajectory, theta, lr: float, moved: bool, flips: int, G, G_floor,
                               grows: int | None = None, max_eta_g: float | None = None) -> Outcome:
    """§6's outcome: ``saddle`` (the start (0, 0): SGD never moves), ``diverged`` (numbers ``diverged_step``,
    ``onset_step``, ``max_s``, :func:`divergence_onset`), ``sign_flips`` (G changed sign at some step, which the
    continuous picture forbids) or ``continuous``; both with ``at_roundoff`` (the last G is below the round-off
    level: its last values are noise), ``G_first``, ``G_last``, ``flips``, ``grows`` (steps where G changed sign /
    grew in size) and ``max_eta_g`` (the largest η|ḡ_B|) where given."""
    if not moved:
        return Outcome("saddle", True, {})
    if traj.n_diverged:
        return Outcome("diverged", True, {"diverged_step": int(traj.diverged_step[0]), **divergence_onset(theta, lr)})
    extra = {} if grows is None else {"grows": int(grows)}
    if max_eta_g is not None:
        extra["max_eta_g"] = float(max_eta_g)
    return Outcome("sign_flips" if flips else "continuous", False,
                   {"at_roundoff": bool(not np.abs(G[-1]) > G_floor[-1]), "G_first": float(G[0]),
                    "G_last": float(G[-1]), "flips": int(flips), **extra})


def discrete_breakdown(lr: float = 0.1, u0: float = 1.5, w0: float = 0.5, batch_size: int = 1, steps: int = 200,
                       seed: int = 0) -> DiscreteBreakdownResult:
    """§6: one SGD run (fresh Gaussian samples) recorded at every step, and ``u'² − w'² = (1 − η²ḡ_B²)(u² − w²)``."""
    traj = run_sgd(ScalarModel(), np.array([u0, w0], dtype=float), SCALAR_DATA, lr=lr, steps=steps,
                   batch_size=batch_size, record_every=1, seed=seed, divergence_limit=PLANE_DIVERGENCE_LIMIT)
    th = traj.theta[:, 0, :]
    diverged = traj.n_diverged > 0
    n_ok = int(traj.diverged_step[0]) if diverged else th.shape[0]  # states 0 … n_ok−1 are the run's
    th = th[:n_ok]
    moved = not np.all(th[0] == 0)
    facts = discrete_step_factors(th, lr) if (moved and n_ok >= 2) else None
    G = th[:, 0] ** 2 - th[:, 1] ** 2
    floor = 64.0 * np.finfo(float).eps * np.sum(th**2, axis=1)
    flips = grows = 0
    eta_g = 0.0
    if facts is not None:
        f = facts["factor"]
        resolved = np.abs(G) > floor
        both = resolved[1:] & resolved[:-1]
        flips, grows = int(np.sum((f < 0) & both)), int(np.sum((f < -1) & both))
        eta_g = float(np.max(np.abs(lr * facts["c"])))
    return DiscreteBreakdownResult(traj=traj, lr=lr, theta=th, diverged=diverged, moved=moved, facts=facts, G=G,
                                   G_floor=floor, flips=flips, grows=grows, max_eta_g=eta_g,
                                   outcome=discrete_breakdown_outcome(traj, th, lr, moved, flips, G, floor, grows,
                                                                      eta_g))


def main(argv=None) -> int:
    """``python -m symsgd_core.balance.experiments [OUT.npz]``: regenerate the ReLU data file of Notebook 01."""
    import argparse
    import pathlib
    import time

    parser = argparse.ArgumentParser(description=main.__doc__)
    default = pathlib.Path(__file__).parent.parent / "data_files" / RELU_DATA_FILE
    parser.add_argument("out", nargs="?", default=str(default))
    args = parser.parse_args(argv)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    run = write_relu_balance(args.out)
    print(f"wrote {args.out} in {time.perf_counter() - t0:.0f} s: {RELU_FIG2}; diverged={run.diverged}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
