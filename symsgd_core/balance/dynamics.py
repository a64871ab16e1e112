"""Training dynamics for rescaling-symmetric models, each vectorised over R independent runs.

Methods (conventions in :mod:`symsgd_core.core.conventions`: ``ℓ = (f − y)²``, ``T = η/S``, ``t = η·steps``):

* :func:`run_sgd` — minibatch SGD ``θ ← θ − (η/S) Σ_{x∈B} ∇ℓ`` (plus ``2ηγθ`` with weight decay), on a
  finite :class:`~symsgd_core.balance.data.Dataset` (batches drawn with replacement by default) or on fresh
  samples of :class:`~symsgd_core.balance.data.GaussianData` every step. The scalar model has a compiled path.
* :func:`run_gd` — full-batch gradient descent.
* :func:`run_gradient_flow` — ``dθ/dt = −∇L``, integrated by scipy's DOP853 at tight tolerances.
* :func:`run_sde` — Euler–Maruyama for ``dθ = −∇L dt + sqrt(T C(θ)) dW`` with the exact ``C(θ)``.
* :func:`run_langevin` — GD plus isotropic Gaussian kicks; :func:`langevin_noise_std` matches SGD.
* :func:`run_noise_amplified_sgd` — small ``η``, single-sample noise scaled to a target ``T``.

Every function returns a :class:`Trajectory`. Observables (:data:`~symsgd_core.balance.models.OBSERVABLE_KEYS`)
are evaluated on a fixed evaluation set: the :class:`Dataset` itself; for :class:`GaussianData` with a
scalar-input model the *exact* population moments; otherwise a fixed Gaussian sample of
:data:`GAUSSIAN_EVAL_SIZE` points drawn with seed :data:`GAUSSIAN_EVAL_SEED` (or pass ``eval_data``).
For scalar-input models (``f = v x``) the observables on a finite set are computed from its moments
(:meth:`~symsgd_core.balance.data.Dataset.moments`), equal to the per-sample formulas to round-off.

Divergence (the rule of :mod:`symsgd_core.core.results`, instance :data:`DIVERGENCE`): after every step, a
run whose parameters are non-finite or exceed ``divergence_limit`` in absolute value (or whose recorded
observables overflow) is frozen at its last finite state and its step is stored in
``Trajectory.diverged_step`` (−1 = never); its later records repeat the frozen state. Other runs continue;
random numbers are still drawn for frozen runs, so a run's noise never depends on whether another run
diverged. Randomness: one stream per call (:func:`symsgd_core.core.seeding.stream`), drawn run-major in the
order documented by each method. Same seed, same numbers.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from ..core.conventions import temperature as sgd_temperature
from ..core.results import Divergence, EngineResult, resolve_engine
from ..core.seeding import stream
from ..core.validation import (
    check_array,
    check_int,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from .data import Dataset, GaussianData
from .models import OBSERVABLE_KEYS, ScalarInputModel, ScalarModel

__all__ = ["DIVERGENCE", "DIVERGENCE_LIMIT", "GAUSSIAN_EVAL_SEED", "GAUSSIAN_EVAL_SIZE", "Trajectory",
           "langevin_noise_std", "run_gd", "run_gradient_flow", "run_langevin", "run_noise_amplified_sgd", "run_sde",
           "run_sgd"]

#: The divergence rule of this engine: ``max|θ|`` of a run after a step (and its recorded observables).
DIVERGENCE = Divergence("max|θ|", 1e12)
#: The default limit of :data:`DIVERGENCE` (every method's ``divergence_limit`` defaults to it).
DIVERGENCE_LIMIT = DIVERGENCE.limit
#: Size and seed of the fixed evaluation sample used for GaussianData when exact moments do not apply.
GAUSSIAN_EVAL_SIZE = 4096
GAUSSIAN_EVAL_SEED = 20230813

_INDEX_BLOCK = 2**18  # minibatch indices pre-drawn per block for the compiled dataset path
_FMAX = float(np.finfo(np.float64).max)


# =============================================================================================== result
@dataclass(frozen=True, eq=False)
class Trajectory(EngineResult):
    """Recorded trajectory of R runs at K record points (the engine result shape of :mod:`symsgd_core.core.results`).

    Attributes:
        steps: ``(K,)`` int, step numbers of the records (record index for gradient flow).
        times: ``(K,)`` continuous time ``t`` (``η·steps`` for SGD/GD/Langevin, ``dt·steps`` for the SDE,
            the integrator's output times for gradient flow).
        diverged_step: ``(R,)`` int, step (record index for flow) at which the run diverged, −1 = never.
            A diverged run is frozen at its last finite state; its observables stay finite.
        settings: the arguments (method, lr, batch_size, temperature, seed, evaluation set, engine, …);
            ``settings["method"]`` is ``"sgd"``, ``"gd"``, ``"gradient_flow"``, ``"sde"``, ``"langevin"`` or
            ``"noise_amplified_sgd"``.
        observables: dict ``key → (K, R)`` array (``"v"`` is ``(K, R) + model.v_shape``); keys are
            ``u_sq, w_sq, G, v, loss, tr_cov_u, tr_cov_w, dG_dt_theory``.
        theta: ``(K, R, P)`` parameters at the same records.
    """

    observables: dict
    theta: np.ndarray

    @property
    def method(self) -> str:
        return self.settings["method"]

    @property
    def final_theta(self) -> np.ndarray:
        """``(R, P)`` parameters at the last record."""
        return self.theta[-1]

    def summary(self) -> str:
        """One human-readable paragraph: method, sizes, settings, divergence, final means."""
        p = ", ".join(f"{k}={v}" for k, v in self.settings.items()
                      if k != "method" and not isinstance(v, (np.ndarray, dict)))
        lines = [f"{self.method}: {self.n_runs} runs, {len(self.steps)} records, t in [{self.times[0]:.4g}, "
                 f"{self.times[-1]:.4g}] ({p})"]
        if self.n_diverged:
            first = int(self.diverged_step[self.diverged_step >= 0].min())
            unit = "record" if self.method == "gradient_flow" else "step"
            lines.append(f"WARNING: {self.n_diverged} of {self.n_runs} runs diverged (first at {unit} {first}); "
                         "they are frozen at their last finite state and excluded by ok_runs.")
        else:
            lines.append("no run diverged.")
        ok = self.ok_runs
        if ok.any():
            vals = []
            for key in ("G", "v", "loss"):
                arr = self.observables.get(key)
                if arr is not None and arr.ndim == 2:
                    vals.append(f"{key}={np.mean(arr[-1, ok]):.4g}")
            if vals:
                lines.append("final means over ok runs: " + ", ".join(vals))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"Trajectory(method={self.method!r}, runs={self.n_runs}, records={len(self.steps)}, "
                f"diverged={self.n_diverged})")


# =============================================================================================== helpers
def _initial_theta(model, theta0, runs):
    P = model.n_params
    th = np.asarray(theta0, dtype=np.float64)
    if th.ndim == 1:
        th = check_array("theta0", th, shape=(P,))
        R = 1 if runs is None else check_positive_int("runs", runs)
        return np.tile(th, (R, 1))
    th = check_array("theta0", th, shape=(None, P))
    if th.shape[0] < 1:
        raise ValueError("theta0 must hold at least one run (R >= 1)")
    if runs is not None and check_positive_int("runs", runs) != th.shape[0]:
        raise ValueError(f"runs must equal theta0.shape[0] = {th.shape[0]} when theta0 is (R, P), got {runs}")
    return th.copy()


def _check_data(model, data, name="data"):
    if not isinstance(data, (Dataset, GaussianData)):
        raise ValueError(f"{name} must be a Dataset or GaussianData, got {type(data).__name__}")
    x, y = data.full() if isinstance(data, Dataset) else data.sample(2, 0)
    try:
        model._data(x[:2], y[:2], 1)
    except ValueError as exc:
        raise ValueError(f"{name} does not fit the model {model!r}: {exc}") from None


def _schedule(steps, record_every):
    sched = list(range(0, steps + 1, record_every))
    if sched[-1] != steps:
        sched.append(steps)
    return np.asarray(sched, dtype=np.int64)


def _uses_moments(model, data):
    return isinstance(data, GaussianData) and data.is_scalar and isinstance(model, ScalarInputModel)


def _observer(model, data, eval_data):
    """A function ``(theta (R,P), T) -> dict of observables`` and a description of the evaluation set."""
    if eval_data is not None:
        if not isinstance(eval_data, Dataset):
            raise ValueError(f"eval_data must be a Dataset, got {type(eval_data).__name__}")
        _check_data(model, eval_data, "eval_data")
        source = eval_data
    elif _uses_moments(model, data):
        m = data.moments()
        return (lambda th, T: model._evaluate_moments(th, m, T)), "exact Gaussian moments"
    elif isinstance(data, Dataset):
        source = data
    else:
        source = data.dataset(GAUSSIAN_EVAL_SIZE, GAUSSIAN_EVAL_SEED)
    if isinstance(model, ScalarInputModel) and source.is_scalar:
        # f = v x: every observable is a function of v, ∇v and the data moments (exact, O(R) per record)
        m = source.moments()
        desc = "training set (via its moments)" if source is data else f"fixed evaluation set (N={source.n})"
        return (lambda th, T: model._evaluate_moments(th, m, T)), desc
    x, y = model._data(*source.full(), 1)
    desc = "training set" if source is data else f"fixed evaluation set (N={source.n})"
    if source is not data and eval_data is None:
        desc = f"Gaussian evaluation sample (N={GAUSSIAN_EVAL_SIZE}, seed={GAUSSIAN_EVAL_SEED})"
    return (lambda th, T: model._evaluate(th, x, y, T)), desc


def _full_grad(model, data):
    """``θ ↦ ∇L(θ)`` on the whole Dataset, or on the Gaussian law for scalar-input models."""
    if isinstance(data, Dataset):
        x, y = model._data(*data.full(), 1)
        return lambda th: model._grad(th, x, y)
    if _uses_moments(model, data):
        m = data.moments()
        return lambda th: model._population_grad(th, m)
    raise ValueError("data must be a Dataset (or GaussianData with a scalar-input model, whose exact "
                     f"population gradient is known); got GaussianData with {model!r}")


def _data_grad(model, th, x, y):
    g = model._grad(th, x, y)
    return g - 2.0 * model.weight_decay * th if model.weight_decay else g


def _ok_rows(theta, limit):
    return ~DIVERGENCE.with_limit(limit).exceeded(theta, axis=1)


class _Run:
    """Bookkeeping shared by the discrete-time methods: records, divergence, observables."""

    def __init__(self, model, theta, steps, record_every, observe, temperature, limit, extra_drift=None):
        self.model, self.theta, self.observe = model, theta, observe
        self.T, self.limit, self.extra_drift = temperature, limit, extra_drift
        self.sched = _schedule(steps, record_every)
        R, P = theta.shape
        K = len(self.sched)
        self.thetas = np.empty((K, R, P))
        self.obs = {}
        self.alive = np.ones(R, dtype=np.bool_)
        self.diverged = np.full(R, -1, dtype=np.int64)

    def record(self, k):
        th = self.theta
        self.thetas[k] = th
        with np.errstate(all="ignore"):
            o = self.observe(th, self.T)
        if self.extra_drift is not None:
            o["dG_dt_theory"] = o["dG_dt_theory"] + self.extra_drift
        R = th.shape[0]
        bad = np.zeros(R, dtype=bool)
        for key in OBSERVABLE_KEYS:
            val = np.asarray(o[key], dtype=np.float64)
            fin = np.isfinite(val).reshape(R, -1).all(axis=1)
            bad |= ~fin
            if key not in self.obs:
                self.obs[key] = np.empty((len(self.sched), *val.shape))
            self.obs[key][k] = val
        newly = bad & self.alive
        if newly.any():  # finite θ but overflowing observables: stop these runs here
            self.alive[newly] = False
            self.diverged[newly] = self.sched[k]
        if bad.any():
            for key in OBSERVABLE_KEYS:
                self.obs[key][k] = np.nan_to_num(self.obs[key][k], nan=0.0, posinf=_FMAX, neginf=-_FMAX)

    def step_reference(self, new, step):
        """Accept ``new`` for alive runs whose new state is finite and within the limit."""
        ok = _ok_rows(new, self.limit)
        newly = self.alive & ~ok
        if newly.any():
            self.alive[newly] = False
            self.diverged[newly] = step
        np.copyto(self.theta, new, where=self.alive[:, None])

    def run(self, advance):
        """``advance(step0, n)`` moves ``self.theta`` from step ``step0`` to ``step0 + n``."""
        self.record(0)
        for k in range(1, len(self.sched)):
            advance(int(self.sched[k - 1]), int(self.sched[k] - self.sched[k - 1]))
            self.record(k)

    def trajectory(self, dt, method, settings):
        return Trajectory(steps=self.sched.copy(), times=dt * self.sched.astype(np.float64),
                          diverged_step=self.diverged, settings={"method": method, **settings}, observables=self.obs,
                          theta=self.thetas)


def _reference_advance(run, stepper):
    def advance(step0, n):
        with np.errstate(all="ignore"):
            for j in range(n):
                run.step_reference(stepper(run.theta), step0 + j + 1)
    return advance


def _common_checks(steps, record_every, limit):
    steps = check_int("steps", steps, minimum=0)
    record_every = check_positive_int("record_every", record_every)
    limit = check_positive("divergence_limit", limit)
    return steps, record_every, limit


# =============================================================================================== SGD
def run_sgd(model, theta0, data, *, lr, steps, batch_size=1, record_every=1, seed=0, replace=True, runs=None,
            eval_data=None, engine="auto", divergence_limit=DIVERGENCE_LIMIT) -> Trajectory:
    """Minibatch SGD, ``θ ← θ − η(mean_{x∈B} ∇ℓ(θ, x) + 2γθ)``, for R independent runs.

    Args:
        model: a :class:`~symsgd_core.balance.models.SymmetricModel` (or :class:`~symsgd_core.balance.relu.ReLUNet`).
        theta0: ``(P,)`` (copied to ``runs`` runs) or ``(R, P)``.
        data: a :class:`Dataset` — each run draws its own minibatch of ``batch_size`` points every step,
            independently **with replacement** (the paper's SGD) unless ``replace=False`` (distinct
            points within a batch; batches of different steps are independent) — or a
            :class:`GaussianData`, which gives ``batch_size`` fresh samples per run per step.
        lr: learning rate ``η > 0``.
        steps: number of SGD steps (≥ 0).
        batch_size: ``S ≥ 1`` (``≤ N`` when ``replace=False``).
        record_every: record every this many steps (and always the last step).
        seed: int or ``numpy.random.Generator``.
        runs: number of runs when ``theta0`` is ``(P,)``.
        eval_data: optional :class:`Dataset` on which observables are evaluated.
        engine: ``"auto"`` (the compiled kernel for :class:`ScalarModel` with replacement / fresh Gaussian
            data, else the numpy reference), ``"compiled"`` or ``"reference"``
            (:data:`~symsgd_core.core.results.ENGINES`). Both give the same numbers.
        divergence_limit: runs with ``max|θ|`` above this are stopped.

    Returns:
        :class:`Trajectory` with ``times = η·steps`` and ``dG_dt_theory`` at ``T = η/S``.

    Raises:
        ValueError: bad ``lr``, ``steps``, ``batch_size`` (incl. ``> N`` without replacement), ``runs``,
            ``theta0`` shape, data that do not fit the model, unknown ``engine`` (or ``"compiled"`` where
            there is none).
    """
    lr = check_positive("lr", lr)
    steps, record_every, limit = _common_checks(steps, record_every, divergence_limit)
    S = check_positive_int("batch_size", batch_size)
    theta = _initial_theta(model, theta0, runs)
    _check_data(model, data)
    if isinstance(data, Dataset) and not replace and S > data.n:
        raise ValueError(f"batch_size must be <= N = {data.n} when sampling without replacement, got {S}")
    rng = stream(seed)
    observe, eval_desc = _observer(model, data, eval_data)
    T = sgd_temperature(lr, S)
    R = theta.shape[0]
    run = _Run(model, theta, steps, record_every, observe, T, limit)

    fast_ok = type(model) is ScalarModel and (isinstance(data, GaussianData) or replace)
    use_fast = resolve_engine(engine, fast_ok, "the compiled kernel supports only ScalarModel with replace=True or "
                                                "GaussianData data")

    if use_fast:
        from . import _kernels as fk

        gamma = model.weight_decay
        if isinstance(data, GaussianData):
            k, sigma = float(data.teacher[0, 0]), data.sigma

            def advance(step0, n):
                fk.sgd_scalar_gaussian(run.theta, rng, n, step0, lr, gamma, k, sigma, S, limit, run.alive,
                                       run.diverged)
        else:
            xd, yd = data.full()
            xd, yd = np.ascontiguousarray(xd), np.ascontiguousarray(yd)

            block = max(1, _INDEX_BLOCK // (R * S))

            def advance(step0, n):
                done = 0
                while done < n:
                    m = min(block, n - done)
                    idx = rng.integers(0, data.n, size=(m, R, S))
                    fk.sgd_scalar_dataset(run.theta, idx, step0 + done, lr, gamma, xd, yd, limit, run.alive,
                                          run.diverged)
                    done += m
    else:
        if isinstance(data, GaussianData):
            def draw():
                x, y = data.sample(R * S, rng)
                return x.reshape((R, S) + x.shape[1:]), y.reshape((R, S) + y.shape[1:])
        else:
            xd, yd = data.full()

            def draw():
                idx = data.minibatch_indices(rng, R, S, replace)
                return xd[idx], yd[idx]

        vector_model = not isinstance(model, ScalarInputModel)

        def stepper(th):
            xb, yb = draw()
            if vector_model and xb.ndim == 2:  # scalar data (R, S) fed to a vector model: (R, S, 1)
                xb, yb = xb[..., None], yb[..., None]
            return th - lr * model._grad(th, xb, yb)

        advance = _reference_advance(run, stepper)

    run.run(advance)
    settings = {"lr": lr, "batch_size": S, "temperature": T, "replace": bool(replace), "steps": steps,
              "seed": seed if not isinstance(seed, np.random.Generator) else "Generator",
              "weight_decay": model.weight_decay, "eval": eval_desc, "engine": "compiled" if use_fast else "reference",
              "data": repr(data), "divergence_limit": limit}
    return run.trajectory(lr, "sgd", settings)


# =============================================================================================== GD
def run_gd(model, theta0, data, *, lr, steps, record_every=1, runs=None, eval_data=None,
           divergence_limit=DIVERGENCE_LIMIT) -> Trajectory:
    """Full-batch gradient descent ``θ ← θ − η∇L(θ)`` (deterministic).

    ``data`` is a :class:`Dataset` (or :class:`GaussianData` with a scalar-input model: GD on the exact
    population loss). Discrete GD changes ``G`` by ``η²(‖∇_uL‖² − ‖∇_wL‖²)`` per step; only gradient
    flow conserves it exactly. ``dG_dt_theory`` is evaluated at ``T = 0``.

    Raises:
        ValueError: bad ``lr``/``steps``/``record_every``/``theta0``/``data``.
    """
    lr = check_positive("lr", lr)
    steps, record_every, limit = _common_checks(steps, record_every, divergence_limit)
    theta = _initial_theta(model, theta0, runs)
    _check_data(model, data)
    grad = _full_grad(model, data)
    observe, eval_desc = _observer(model, data, eval_data)
    run = _Run(model, theta, steps, record_every, observe, 0.0, limit)
    run.run(_reference_advance(run, lambda th: th - lr * grad(th)))
    settings = {"lr": lr, "steps": steps, "weight_decay": model.weight_decay, "eval": eval_desc, "data": repr(data),
              "divergence_limit": limit}
    return run.trajectory(lr, "gd", settings)


# =============================================================================================== flow
def run_gradient_flow(model, theta0, data, *, t_end, n_records=200, rtol=1e-10, atol=1e-12, runs=None,
                      eval_data=None, divergence_limit=DIVERGENCE_LIMIT) -> Trajectory:
    """Gradient flow ``dθ/dt = −∇L(θ)``, integrated by ``scipy.integrate.solve_ivp`` (DOP853).

    All runs are integrated jointly (one state vector), so the error control covers every run.
    Records are at ``n_records`` equally spaced times in ``[0, t_end]``; ``steps`` holds the record
    indices. ``settings`` reports the integrator's accuracy: ``nfev``, solver status/message and
    ``G_error`` = ``max |G(t) − G(0) e^{−4γt}|`` over records and runs (the exact law under flow).
    If the integrator fails, the remaining records repeat the last state and the runs that had not yet
    diverged are marked diverged at the first missing record.

    Raises:
        ValueError: bad ``t_end`` (> 0), ``n_records`` (≥ 2), tolerances (> 0), ``theta0``, ``data``.
    """
    t_end = check_positive("t_end", t_end)
    n_records = check_int("n_records", n_records, minimum=2)
    rtol = check_positive("rtol", rtol)
    atol = check_positive("atol", atol)
    limit = check_positive("divergence_limit", divergence_limit)
    theta = _initial_theta(model, theta0, runs)
    _check_data(model, data)
    grad = _full_grad(model, data)
    observe, eval_desc = _observer(model, data, eval_data)
    R, P = theta.shape
    t_eval = np.linspace(0.0, t_end, n_records)

    def rhs(_t, y):
        return -grad(y.reshape(R, P)).ravel()

    def blow_up(_t, y):
        return limit - np.max(np.abs(y))

    blow_up.terminal = True
    with np.errstate(all="ignore"):
        sol = solve_ivp(rhs, (0.0, t_end), theta.ravel(), method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol,
                        events=blow_up)
    n_ok = sol.y.shape[1]
    states = np.empty((n_records, R, P))
    if n_ok:
        states[:n_ok] = sol.y.T.reshape(n_ok, R, P)
    last = states[n_ok - 1] if n_ok else theta
    states[n_ok:] = last
    diverged = np.full(R, -1, dtype=np.int64)
    for k in range(n_records):  # per-run check of the recorded states
        bad = ~_ok_rows(states[k], limit) & (diverged < 0)
        if bad.any():
            diverged[bad] = k
            prev = states[k - 1] if k else theta
            states[k:, bad] = prev[bad]
    if n_ok < n_records:
        diverged[diverged < 0] = n_ok

    run = _Run(model, states[0].copy(), n_records - 1, 1, observe, 0.0, limit)
    run.diverged = diverged
    run.alive = diverged < 0
    for k in range(n_records):
        run.theta = states[k]
        run.record(k)
    G = run.obs["G"]
    ok = run.diverged < 0
    G_error = float(np.max(np.abs(G[:, ok] - G[0, ok] * np.exp(-4.0 * model.weight_decay * t_eval)[:, None]))) \
        if ok.any() else float("nan")
    settings = {"t_end": t_end, "rtol": rtol, "atol": atol, "solver": "DOP853", "nfev": int(sol.nfev),
              "status": int(sol.status), "message": str(sol.message), "G_error": G_error,
              "weight_decay": model.weight_decay, "eval": eval_desc, "data": repr(data), "divergence_limit": limit}
    return Trajectory(steps=np.arange(n_records, dtype=np.int64), times=t_eval, diverged_step=run.diverged,
                      settings={"method": "gradient_flow", **settings}, observables=run.obs, theta=run.thetas)


# =============================================================================================== SDE
def run_sde(model, theta0, data, *, temperature, dt, steps, record_every=1, seed=0, runs=None, eval_data=None,
            divergence_limit=DIVERGENCE_LIMIT) -> Trajectory:
    """Euler–Maruyama for ``dθ = −∇L dt + sqrt(T C(θ)) dW`` with the exact noise covariance ``C(θ)``.

    On a :class:`Dataset` of N points, per step and run, with ``ξ_n ~ N(0, 1)`` i.i.d. (drawn as an
    ``(R, N)`` array each step):
    ``θ ← θ − ∇L dt + sqrt(T dt / N) Σ_n (g_n − ḡ) ξ_n`` — covariance exactly ``T dt C(θ)``, no matrix
    square root. On :class:`GaussianData` (scalar-input models only) the population ``C = b bᵀ`` is
    rank one (``b = 2 sqrt(g(v)) ∇v``) and the noise is ``sqrt(T dt) b ξ`` with one ``ξ`` (``(R,)`` per
    step). ``times = dt·steps``; ``dG_dt_theory`` is at temperature ``T``.

    Raises:
        ValueError: bad ``temperature`` (≥ 0), ``dt`` (> 0), ``steps``, ``theta0``, ``data``.
    """
    T = check_nonnegative("temperature", temperature)
    dt = check_positive("dt", dt)
    steps, record_every, limit = _common_checks(steps, record_every, divergence_limit)
    theta = _initial_theta(model, theta0, runs)
    _check_data(model, data)
    rng = stream(seed)
    observe, eval_desc = _observer(model, data, eval_data)
    R = theta.shape[0]
    run = _Run(model, theta, steps, record_every, observe, T, limit)
    if isinstance(data, Dataset):
        x, y = model._data(*data.full(), 1)
        N = data.n
        scale = math.sqrt(T * dt / N)

        def stepper(th):
            g = model._per_sample_grad(th, x, y)  # (R, N, P)
            gbar = g.mean(axis=1)
            drift = gbar + 2.0 * model.weight_decay * th if model.weight_decay else gbar
            xi = rng.standard_normal((R, N))
            noise = np.einsum("rnp,rn->rp", g - gbar[:, None, :], xi)
            return th - dt * drift + scale * noise
    elif _uses_moments(model, data):
        m = data.moments()
        scale = math.sqrt(T * dt)

        def stepper(th):
            xi = rng.standard_normal(R)
            return th - dt * model._population_grad(th, m) + scale * model._population_noise_factor(th, m) * xi[:, None]
    else:
        raise ValueError("data must be a Dataset, or GaussianData with a scalar-input model (exact population C)")
    run.run(_reference_advance(run, stepper))
    settings = {"temperature": T, "dt": dt, "steps": steps,
              "seed": seed if not isinstance(seed, np.random.Generator) else "Generator",
              "weight_decay": model.weight_decay, "eval": eval_desc, "data": repr(data), "divergence_limit": limit}
    return run.trajectory(dt, "sde", settings)


# =============================================================================================== Langevin
def _trace_C(model, th, data):
    if _uses_moments(model, data):
        b = model._population_noise_factor(th, data.moments())
        return np.sum(b * b, axis=1)
    source = data if isinstance(data, Dataset) else data.dataset(GAUSSIAN_EVAL_SIZE, GAUSSIAN_EVAL_SEED)
    x, y = model._data(*source.full(), 1)
    g = model._per_sample_grad(th, x, y)
    gc = g - g.mean(axis=1, keepdims=True)
    return np.mean(np.sum(gc * gc, axis=2), axis=1)


def langevin_noise_std(model, theta, data, lr, batch_size=1):
    """Isotropic kick size ``s`` whose total variance matches SGD's at ``θ``.

    One SGD step has noise covariance ``η² C(θ)/S``, total variance ``η² Tr C/S``. An isotropic kick
    ``N(0, s² I_P)`` has total variance ``s² P``; matching gives ``s² = η² Tr C(θ) / (S·P)``.
    ``C`` is taken on the Dataset, on the exact Gaussian law (scalar-input models) or on the fixed
    Gaussian evaluation sample.

    Args:
        theta: ``(P,)`` → returns a float; ``(R, P)`` → returns ``(R,)``.

    Raises:
        ValueError: bad ``lr``, ``batch_size``, ``theta``, ``data``.
    """
    lr = check_positive("lr", lr)
    S = check_positive_int("batch_size", batch_size)
    th, squeeze = model._theta(theta)
    _check_data(model, data)
    s = lr * np.sqrt(_trace_C(model, th, data) / (S * model.n_params))
    return float(s[0]) if squeeze else s


def run_langevin(model, theta0, data, *, lr, noise_std, steps, record_every=1, seed=0, runs=None, eval_data=None,
                 divergence_limit=DIVERGENCE_LIMIT) -> Trajectory:
    """GD plus isotropic noise: ``θ ← θ − η∇L(θ) + s ξ``, ``ξ ~ N(0, I_P)`` (drawn as ``(R, P)`` per step).

    ``noise_std`` ``s ≥ 0`` is a float or an ``(R,)`` array (see :func:`langevin_noise_std`). The
    injected noise does not respect the symmetry, so ``G`` random-walks; ``dG_dt_theory`` records the
    drift of the mean, ``−4γG + (s²/η)(n_u − n_w)``. ``data``: a Dataset, or GaussianData with a
    scalar-input model (exact population gradient). ``times = η·steps``.

    Raises:
        ValueError: bad ``lr``, ``noise_std``, ``steps``, ``theta0``, ``data``.
    """
    lr = check_positive("lr", lr)
    steps, record_every, limit = _common_checks(steps, record_every, divergence_limit)
    theta = _initial_theta(model, theta0, runs)
    R = theta.shape[0]
    if np.ndim(noise_std) == 0:
        s = check_nonnegative("noise_std", noise_std)
    else:
        s = check_array("noise_std", noise_std, shape=(R,))
        if np.any(s < 0):
            raise ValueError("noise_std must be >= 0")
    _check_data(model, data)
    grad = _full_grad(model, data)
    rng = stream(seed)
    observe, eval_desc = _observer(model, data, eval_data)
    trB = float(len(model.u_index) - len(model.w_index))
    s_col = s if np.ndim(s) == 0 else np.asarray(s)[:, None]
    extra = (np.asarray(s) ** 2 / lr) * trB
    run = _Run(model, theta, steps, record_every, observe, 0.0, limit, extra_drift=extra if trB else None)

    def stepper(th):
        return th - lr * grad(th) + s_col * rng.standard_normal(th.shape)

    run.run(_reference_advance(run, stepper))
    settings = {"lr": lr, "noise_std": s if np.ndim(s) == 0 else "per-run", "steps": steps,
              "seed": seed if not isinstance(seed, np.random.Generator) else "Generator",
              "weight_decay": model.weight_decay, "eval": eval_desc, "data": repr(data), "divergence_limit": limit}
    return run.trajectory(lr, "langevin", settings)


# =============================================================================================== amplified
def run_noise_amplified_sgd(model, theta0, data, *, lr, target_temperature, steps, record_every=1, seed=0,
                            runs=None, eval_data=None, divergence_limit=DIVERGENCE_LIMIT) -> Trajectory:
    """"Noise-amplified SGD": a small step ``η`` whose single-sample noise is scaled to temperature ``T``.

    Per step, with one sample ``i`` per run (drawn uniformly from the Dataset with replacement, or fresh
    from the Gaussian law): ``θ ← θ − η∇L(θ) − sqrt(T η) (g_i − ḡ)``, where ``ḡ`` is the full-batch
    (Dataset) or exact population (GaussianData, scalar-input models) data gradient. The noise has
    covariance ``T η C(θ)`` per step of length ``dt = η``: the SDE at temperature ``T`` (plain SGD with
    ``S = 1`` is the case ``T = η``). Use it to reach large ``T`` with a small, stable ``η``.
    ``times = η·steps``; ``dG_dt_theory`` is at ``T``.

    Raises:
        ValueError: bad ``lr``, ``target_temperature`` (> 0), ``steps``, ``theta0``, ``data``.
    """
    lr = check_positive("lr", lr)
    T = check_positive("target_temperature", target_temperature)
    steps, record_every, limit = _common_checks(steps, record_every, divergence_limit)
    theta = _initial_theta(model, theta0, runs)
    _check_data(model, data)
    grad = _full_grad(model, data)
    rng = stream(seed)
    observe, eval_desc = _observer(model, data, eval_data)
    R = theta.shape[0]
    amp = math.sqrt(T * lr)
    if isinstance(data, Dataset):
        xd, yd = data.full()
        xf, yf = model._data(xd, yd, 1)

        def mean_data_grad(th):
            return _data_grad(model, th, xf, yf)

        def draw():
            idx = data.minibatch_indices(rng, R, 1, True)
            return xd[idx], yd[idx]
    else:
        m = data.moments()

        def mean_data_grad(th):
            g = model._population_grad(th, m)
            return g - 2.0 * model.weight_decay * th if model.weight_decay else g

        def draw():
            x, y = data.sample(R, rng)
            return x.reshape(R, 1), y.reshape(R, 1)

    def stepper(th):
        xb, yb = draw()
        gi = _data_grad(model, th, xb, yb)
        return th - lr * grad(th) - amp * (gi - mean_data_grad(th))

    run = _Run(model, theta, steps, record_every, observe, T, limit)
    run.run(_reference_advance(run, stepper))
    settings = {"lr": lr, "target_temperature": T, "steps": steps,
              "seed": seed if not isinstance(seed, np.random.Generator) else "Generator",
              "weight_decay": model.weight_decay, "eval": eval_desc, "data": repr(data), "divergence_limit": limit}
    if lr > T:
        warnings.warn(f"lr = {lr} > target_temperature = {T}: the noise is damped, not amplified", stacklevel=2)
    return run.trajectory(lr, "noise_amplified_sgd", settings)
