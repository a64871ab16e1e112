"""SGD's own SDE for the deep linear network, and the dynamics it is compared with (Notebook 05).

The open question of Wang & Jacot's reply (arXiv 2305.16038): does the SDE with SGD's covariance,

    dθ = −∇𝓛_γ(θ) dt + sqrt(η C(θ) / S) dW,        t = η·steps,  T = η/S,
    C(θ) = (1/N) Σ_k g_k g_kᵀ − ḡ ḡᵀ,               g_k = ∇_θ (A_θ,ij − A*_ij)²,  k = (i, j) ∈ Ω,

jump to low rank and stay in B_1? Weight decay is in the drift only (conventions of
:mod:`symsgd_core.core.conventions`). C has rank ≤ N − 1 and is never formed: Euler–Maruyama applies √C
exactly as

    θ ← θ − dt ∇𝓛_γ(θ) + sqrt(T dt / N) Σ_k (g_k − ḡ) ξ_k,      ξ_k ~ N(0, 1), one per observed entry,

whose increment has covariance ``T dt C(θ)`` exactly.

**Entry weights (the one idea of this module; this project's construction).** Every g_k is
``2 r_k Q_ℓ[i,:]ᵀ P_ℓ[:,j]ᵀ`` in layer ℓ, so every dynamics here is a GD step with random per-entry weights
``w_k`` (time units), one compiled kernel (:mod:`._kernels`)::

    GD              w_k = dt / N                                 (dt = η)
    SGD, batch S    w_k = η n_k / S,  n ~ Multinomial(S, 1/N)    (dt = η: discrete, never negative)
    SDE (EM, dt)    w_k = dt / N − sqrt(T dt / N) (ξ_k − ξ̄)      (Gaussian; at dt = η the same mean and
                                                                 covariance as SGD's: "Gaussian SGD")
    Langevin        w_k = dt / N, plus sqrt(2τ dt) ζ, ζ ~ N(0, I_P)

(the SDE line is the EM step above: ``Σ_k (g_k − ḡ) ξ_k = Σ_k g_k (ξ_k − ξ̄)``).

Runners: :func:`run_sde` (any dt; ``increments="rademacher"`` gives bounded ±1 noise with the same
covariance), :func:`run_gaussian_sgd` (dt = η), :func:`run_langevin` (EM with step dt), :func:`run_sgd_weights`
(SGD through the same kernel, to share its records). All return the engine's
:class:`~symsgd_core.dln.engine.RunResult` (``times = dt·steps``).

Randomness: the package's rule (:func:`symsgd_core.core.seeding.streams`): run r draws from child r of
``SeedSequence(seed)`` (ξ ``(T, N)``, Langevin's ζ ``(T, P)``, SGD's entries ``(T, S)`` per chunk), so the same
seed gives the same numbers and a run does not depend on how many others there are.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from ..core.results import resolve_engine
from ..core.seeding import streams
from ..core.validation import check_choice, check_int, check_nonnegative, check_positive, check_positive_int
from . import _sde_reference
from ._sde_reference import noise_factor, reference_chunk
from .engine import RunResult, build_result, record_stats
from .network import DEFAULT_B_CRITERION, DEFAULT_RANK_TOL, Architecture, BrCriterion, Params
from .problems import CompletionProblem, check_problem_fits
from .stepping import DIVERGENCE_RESIDUAL, flush_threshold

__all__ = ["INCREMENTS", "SDE_METHODS", "negative_weight_law", "uncentred_reference", "weighted_chunk",
           "noise_factor", "run_gaussian_sgd", "run_gd_dt", "run_langevin", "run_sde",
           "run_sgd_weights", "sde_entry_weights", "sde_noise_scale", "sgd_entry_weights"]

#: The dynamics of the weighted kernel (``RunResult.settings["method"]``).
SDE_METHODS = ("sde", "sgd_weights", "langevin_dt", "gd_dt")
#: Increments of the SDE runner: standard normals (Euler–Maruyama), ±1 (bounded, same mean and covariance), or
#: "bernoulli" (at dt = η only: independent weights ``w_k = η n_k / S``, ``n_k ~ Binomial(S, 1/N)``: never
#: negative, SGD's marginal law per entry, but not one-hot — a control that separates the sign from the rest).
INCREMENTS = ("gaussian", "rademacher", "bernoulli")
#: Largest number of pre-drawn random numbers (or snapshot entries) held per chunk.
_CHUNK_ELEMENTS = 1 << 22


def sde_noise_scale(lr: float, dt: float, n_observed: int, batch_size: int = 1) -> float:
    """``sqrt(T dt / N)`` with ``T = η/S``: the factor in front of ``Σ_k (g_k − ḡ) ξ_k``."""
    lr, dt = check_positive("lr", lr), check_positive("dt", dt)
    n_observed, batch_size = check_positive_int("n_observed", n_observed), check_positive_int("batch_size", batch_size)
    return math.sqrt(lr / batch_size * dt / n_observed)


def sde_entry_weights(xi: np.ndarray, dt: float, scale: float) -> np.ndarray:
    """EM entry weights ``w_k = dt/N − scale (ξ_k − ξ̄)`` from normals ``xi (..., N)``; same shape.

    ``Σ_k w_k = dt`` (round-off): the noise never changes the total weight, only how it is shared.
    """
    xi = np.asarray(xi, dtype=np.float64)
    N = xi.shape[-1]
    return dt / N - scale * (xi - xi.mean(axis=-1, keepdims=True))


def negative_weight_law(increments: str, lr: float, n_observed: int, batch_size: int = 1, *,
                        n_mc: int = 1_000_000, seed: int = 0) -> dict:
    """How often, and how negative, the entry weights of one step at dt = η are.

    Returns ``p_entry`` (P(w_k < 0) for one entry), ``mean_negative`` (E[w_k | w_k < 0]), ``p_step`` (P(some
    entry of the step is negative)) and ``p_step_se`` (its standard error: 0 when exact).

    * ``"gaussian"``: ``w_k = η/N − c (ξ_k − ξ̄)``, ``ξ_k − ξ̄ ~ N(0, (N−1)/N)``, ``c = sqrt(T η / N)``, T = η/S:
      the entry numbers in closed form; ``p_step`` by Monte Carlo (``n_mc`` steps, stream ``seed``).
    * ``"rademacher"``: the same with ξ = ±1: exact, by enumerating all 2^N sign patterns.
    * ``"sgd"``, ``"bernoulli"``: never negative.
    """
    from scipy import stats as _st

    lr = check_positive("lr", lr)
    N = check_positive_int("n_observed", n_observed)
    S = check_positive_int("batch_size", batch_size)
    c = sde_noise_scale(lr, lr, N, S)
    if increments in ("sgd", "bernoulli"):
        return {"p_entry": 0.0, "mean_negative": float("nan"), "p_step": 0.0, "p_step_se": 0.0}
    if increments == "gaussian":
        sd = c * math.sqrt((N - 1) / N)
        a = lr / N / sd  # w_k < 0 ⇔ Z > a
        p = float(_st.norm.sf(a))
        w = sde_entry_weights(np.random.default_rng(seed).standard_normal((check_positive_int("n_mc", n_mc), N)),
                              lr, c)
        q = float(np.mean((w < 0).any(axis=1)))
        # E[w | w < 0] = η/N − sd E[Z | Z > a] = η/N − sd φ(a)/Q(a)
        return {"p_entry": p, "mean_negative": float(lr / N - sd * _st.norm.pdf(a) / p), "p_step": q,
                "p_step_se": math.sqrt(q * (1 - q) / n_mc)}
    if increments == "rademacher":
        signs = np.array(np.meshgrid(*([[-1.0, 1.0]] * N), indexing="ij")).reshape(N, -1).T  # (2^N, N)
        w = sde_entry_weights(signs, lr, c)
        neg = w < 0
        return {"p_entry": float(neg[:, 0].mean()),
                "mean_negative": float(w[neg].mean()) if neg.any() else float("nan"),
                "p_step": float(neg.any(axis=1).mean()), "p_step_se": 0.0}
    raise ValueError(f"increments must be 'gaussian', 'rademacher', 'bernoulli' or 'sgd', got {increments!r}")


def sgd_entry_weights(idx: np.ndarray, n_observed: int, lr: float) -> np.ndarray:
    """SGD's weights ``w_k = η n_k / S`` from drawn entry indices ``idx (..., S)`` → ``(..., N)``."""
    idx = np.asarray(idx, dtype=np.int64)
    S = idx.shape[-1]
    counts = np.zeros((*idx.shape[:-1], n_observed))
    lead = np.indices(idx.shape[:-1])
    for b in range(S):
        np.add.at(counts, (*lead, idx[..., b]), 1.0)
    return lr * counts / S


def _run_weighted(params, problem, n_steps, *, weight_decay, dt, kind, lr=None, batch_size=1, temperature=0.0, seed=0,
                  record_every=100, rank_tol=DEFAULT_RANK_TOL, criterion=DEFAULT_B_CRITERION, record_layers=True,
                  engine="auto", xi=None, coarsen=1, keep_A=False, increments="gaussian", chunks=None, method=None):
    """The entry-weighted runner behind :func:`run_sde`, :func:`run_sgd_weights`, :func:`run_langevin` and
    :func:`run_gd_dt`: ``kind`` (:data:`SDE_METHODS`) chooses the weights; ``method`` is the name the result records
    as ``settings["method"]`` (the integrator's own, :mod:`.integrators`; None: ``kind``)."""
    if method is None:
        method = kind
    if not (isinstance(method, str) and method):
        raise ValueError(f"method must be a non-empty string (the integrator's name), got {method!r}")
    if not isinstance(params, Params):
        raise ValueError(f"params must be a Params, got {type(params).__name__}")
    if params.n_runs < 1:
        raise ValueError("params must hold at least one run")
    check_problem_fits(params.arch, problem)
    if not np.all(np.isfinite(params.flat)):
        raise ValueError("params must be finite (found NaN or inf)")
    dt = check_positive("dt", dt)
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    if 2.0 * dt * weight_decay >= 1.0:
        raise ValueError(f"2·dt·weight_decay must be < 1 (weight decay factor "
                         f"1 − 2γ dt = {1 - 2 * dt * weight_decay:.3g}); "
                         f"got dt={dt}, weight_decay={weight_decay}")
    n_steps = check_int("n_steps", n_steps, minimum=0)
    record_every = check_positive_int("record_every", record_every)
    batch_size = check_positive_int("batch_size", batch_size)
    rank_tol = check_positive("rank_tol", rank_tol)
    increments = check_choice("increments", increments, INCREMENTS)
    if not isinstance(criterion, BrCriterion):
        raise ValueError(f"criterion must be a BrCriterion, got {type(criterion).__name__}")
    compiled = resolve_engine(engine)
    arch = params.arch
    R, P = params.n_runs, arch.n_params
    N = problem.n_observed
    rows, cols, vals = problem.entries
    if kind in ("sde", "sgd_weights"):
        lr = check_positive("lr", lr)
    scale = sde_noise_scale(lr, dt, N, batch_size) if kind == "sde" else 0.0
    if kind == "langevin_dt":
        temperature = check_nonnegative("temperature", temperature)
    iso = math.sqrt(2.0 * temperature * dt) if kind == "langevin_dt" else 0.0
    if kind == "sgd_weights" and abs(dt - lr) > 1e-15 * lr:
        raise ValueError("SGD through entry weights has dt = lr")
    if kind == "sde" and increments == "bernoulli" and (abs(dt - lr) > 1e-15 * lr or xi is not None):
        raise ValueError("bernoulli entry weights are a step of size dt = lr with their own draws (no xi)")
    given_xi = xi
    if given_xi is not None:
        coarsen = check_positive_int("coarsen", coarsen)
        given_xi = np.asarray(given_xi, dtype=np.float64)
        if kind != "sde" or given_xi.shape != (R, n_steps * coarsen, N):
            raise ValueError(f"xi must be (R, n_steps·coarsen, N) = {(R, n_steps * coarsen, N)} fine normals "
                             f"(sde only), got {given_xi.shape}")
    rec_steps = np.arange(0, n_steps + 1, record_every, dtype=np.int64)
    if rec_steps[-1] != n_steps:
        rec_steps = np.append(rec_steps, n_steps)
    theta = params.flat.copy()
    dims = np.asarray(arch.dims, dtype=np.int64)
    off = arch.offsets
    div_step = np.full(R, -1, dtype=np.int64)
    # one child stream per run, unless nothing is drawn (a given Brownian path, GD): spawning R children is not free
    draws = kind in ("sgd_weights", "langevin_dt") or (kind == "sde" and given_xi is None)
    if draws:
        rngs = streams(seed, R)
    else:
        check_int("seed", seed, minimum=0)  # checked either way
        rngs = []
    tiny = flush_threshold(arch.depth)
    per_step = N + (P if kind == "langevin_dt" else 0) + (batch_size if kind == "sgd_weights" else 0)
    chunk = max(1, min(max(n_steps, 1), _CHUNK_ELEMENTS // max(R * per_step, 1),
                       record_every * max(1, _CHUNK_ELEMENTS // max(R * P, 1))))
    if chunks is None:  # Euler–Maruyama's step; an integrator of this family gives its own pair (same signatures)
        from ._sde_kernels import weighted_chunk as compiled_chunk
        reference = reference_chunk
    else:
        compiled_chunk, reference = chunks
    weight_decay_rec = np.array([weight_decay])
    A_rec = [_end_to_end_flat(theta[:, None, :], arch)] if keep_A else None
    stats = [record_stats(theta[:, None, :], arch, problem, weight_decay_rec, rank_tol, criterion, record_layers)]
    for s0 in range(0, n_steps, chunk):
        s1 = min(n_steps, s0 + chunk)
        T = s1 - s0
        in_chunk = rec_steps[(rec_steps > s0) & (rec_steps <= s1)]
        rec_pos = (in_chunk - s0).astype(np.int64)
        snaps = np.empty((R, rec_pos.size, P))
        fixed = None
        xi_c = np.zeros((R, T, N))
        if kind == "sde" and increments == "bernoulli":  # independent entries with SGD's marginal law
            weights = np.empty((R, T, N))
            for r, rng in enumerate(rngs):
                weights[r] = lr / batch_size * rng.binomial(batch_size, 1.0 / N, size=(T, N))
            fixed = weights
        elif kind == "sde":
            if given_xi is None:
                for r, rng in enumerate(rngs):
                    xi_c[r] = (rng.standard_normal((T, N)) if increments == "gaussian"
                               else 2.0 * rng.integers(0, 2, size=(T, N)) - 1.0)  # ±1: mean 0, variance 1
            else:  # a given Brownian path: coarse increments are sums of `coarsen` fine ones
                c = coarsen
                xi_c = given_xi[:, s0 * c:s1 * c].reshape(R, T, c, N).sum(axis=2) / math.sqrt(c)
            weights = sde_entry_weights(xi_c, dt, scale)
        elif kind == "sgd_weights":
            idx = np.empty((R, T, batch_size), dtype=np.int64)
            for r, rng in enumerate(rngs):
                idx[r] = rng.integers(0, N, size=(T, batch_size))
            weights = fixed = sgd_entry_weights(idx, N, lr)
        else:
            weights = np.full((R, T, N), dt / N)
            if not compiled:
                fixed = weights
        if kind == "langevin_dt":
            zeta = np.empty((R, T, P))
            for r, rng in enumerate(rngs):
                zeta[r] = rng.standard_normal((T, P))
        else:
            zeta = np.empty((R, 0, P))
        iso_scale = np.full(T, iso)
        if compiled:
            compiled_chunk(theta, dims, off, rows, cols, vals, weights, np.full(T, 1.0 - 2.0 * weight_decay * dt), zeta,
                           iso_scale, rec_pos, snaps, div_step, s0, DIVERGENCE_RESIDUAL, tiny)
        else:
            reference(theta, arch, problem, weight_decay, dt, xi_c, scale, zeta, iso_scale, rec_pos, snaps,
                      div_step, s0, DIVERGENCE_RESIDUAL, tiny, fixed_weights=fixed)
        if rec_pos.size:
            stats.append(record_stats(snaps, arch, problem, np.full(rec_pos.size, weight_decay), rank_tol, criterion,
                                       record_layers))
            if keep_A:
                A_rec.append(_end_to_end_flat(snaps, arch))
    rec = {k: np.concatenate([st[k] for st in stats], axis=1) if stats[0][k] is not None else None
           for k in stats[0]}
    settings = dict(method=method, lr=lr, weight_decay=weight_decay, dt=dt, batch_size=batch_size,
                    temperature=temperature, seed=seed, n_steps=n_steps, record_every=record_every, rank_tol=rank_tol,
                    criterion=criterion, engine="compiled" if compiled else "reference", n_runs=R, problem=problem.name,
                    increments=increments if kind == "sde" else None)
    if keep_A:
        settings["end_to_end"] = np.concatenate(A_rec, axis=1)  # (R, K, m, n): A at every record
    return build_result(rec_steps, dt * rec_steps.astype(float), rec, div_step, Params(arch, theta), settings)


def _end_to_end_flat(snaps: np.ndarray, arch: Architecture) -> np.ndarray:
    """A_θ of snapshots ``(R, k, P)`` → ``(R, k, m, n)`` (NaN stays NaN)."""
    R, k, P = snaps.shape
    return Params(arch, snaps.reshape(R * k, P)).end_to_end().reshape(R, k, *arch.out_shape)


def run_sde(params: Params, problem: CompletionProblem, n_steps: int, *, lr: float, weight_decay: float, dt: float,
            batch_size: int = 1, seed: int = 0, record_every: int = 100, rank_tol: float = DEFAULT_RANK_TOL,
            criterion: BrCriterion = DEFAULT_B_CRITERION, record_layers: bool = True, engine: str = "auto",
            increments: str = "gaussian", xi=None, coarsen: int = 1, keep_A: bool = False,
            chunks: tuple | None = None, method: str = "sde") -> RunResult:
    """Euler–Maruyama of SGD's SDE: ``n_steps`` steps of size ``dt`` (time ``dt·n_steps``) for every run.

    Args:
        params, problem: start (R runs) and the completion problem.
        lr, batch_size: η and S, which set the temperature ``T = η/S`` of the diffusion.
        weight_decay: weight decay γ (drift only).  dt: the EM step (``dt = lr`` is "Gaussian SGD").
        seed, record_every, rank_tol, criterion, record_layers, engine: as in
        :func:`~symsgd_core.dln.engine.run`.
        increments: ``"gaussian"`` (EM), ``"rademacher"`` (±1 per entry: the same mean and covariance,
            bounded; for the noise-shape study) or ``"bernoulli"`` (dt = lr only: independent nonnegative
            weights with SGD's marginal law per entry, see :data:`INCREMENTS`).
        xi: optional given Brownian path, fine normals ``(R, n_steps·coarsen, N)``: step n uses the sum of its
            ``coarsen`` fine normals ``/ sqrt(coarsen)`` (the same path at a coarser dt).
        keep_A: store A at every record in ``settings["end_to_end"]`` ``(R, K, m, n)``.
        chunks: another step of the same draws, ``(compiled, reference)`` with the signatures of
            :func:`._sde_kernels.weighted_chunk` and :func:`._sde_reference.reference_chunk` (the tamed step's
            :data:`._tamed_kernel.TAMED_CHUNKS`); None: Euler–Maruyama.
        method: the name recorded as ``settings["method"]``: the integrator that runs (``Integrator.name``,
            e.g. ``"sde_tamed"`` with the tamed step's chunks); ``"sde"`` when called directly.

    Returns:
        :class:`~symsgd_core.dln.engine.RunResult` (``steps`` count EM steps, ``times = dt·steps``; divergence as
        in the engine).
    """
    return _run_weighted(params, problem, n_steps, weight_decay=weight_decay, dt=dt, kind="sde", lr=lr,
                         batch_size=batch_size, seed=seed, record_every=record_every, rank_tol=rank_tol,
                         criterion=criterion, record_layers=record_layers, engine=engine, xi=xi, coarsen=coarsen,
                         keep_A=keep_A, increments=increments, chunks=chunks, method=method)


def run_gaussian_sgd(params: Params, problem: CompletionProblem, n_steps: int, *, lr: float, weight_decay: float,
                     batch_size: int = 1, **kw) -> RunResult:
    """SGD with its sampled noise replaced by a Gaussian of the same covariance: :func:`run_sde` at ``dt = lr``."""
    return run_sde(params, problem, n_steps, lr=lr, weight_decay=weight_decay, dt=lr, batch_size=batch_size, **kw)


def run_sgd_weights(params: Params, problem: CompletionProblem, n_steps: int, *, lr: float, weight_decay: float,
                    batch_size: int = 1, seed: int = 0, record_every: int = 100, rank_tol: float = DEFAULT_RANK_TOL,
                    criterion: BrCriterion = DEFAULT_B_CRITERION, record_layers: bool = True,
                    engine: str = "auto", keep_A: bool = False) -> RunResult:
    """SGD (batch S, entries i.i.d. with replacement) as entry-weighted steps ``w_k = η n_k / S``.

    The same update as ``run(method="sgd")`` (to round-off, on its own draws); slower than the engine's sparse
    kernel, but it shares ``keep_A`` with the SDE runners.
    """
    return _run_weighted(params, problem, n_steps, weight_decay=weight_decay, dt=lr, kind="sgd_weights", lr=lr,
                         batch_size=batch_size, seed=seed, record_every=record_every, rank_tol=rank_tol,
                         criterion=criterion, record_layers=record_layers, engine=engine, keep_A=keep_A)


def run_langevin(params: Params, problem: CompletionProblem, n_steps: int, *, weight_decay: float, dt: float,
                 temperature: float, seed: int = 0, record_every: int = 100, rank_tol: float = DEFAULT_RANK_TOL,
                 criterion: BrCriterion = DEFAULT_B_CRITERION, record_layers: bool = True, engine: str = "auto",
                 keep_A: bool = False, method: str = "langevin_dt") -> RunResult:
    """Langevin ``dθ = −∇𝓛_γ dt + sqrt(2τ) dW`` by EM with step ``dt`` (``dt = η`` is ``run(method="langevin")``);
    ``method``: the name recorded as ``settings["method"]`` (the integrator's, ``"langevin"``, when it runs it)."""
    return _run_weighted(params, problem, n_steps, weight_decay=weight_decay, dt=dt, kind="langevin_dt",
                         temperature=temperature, seed=seed, record_every=record_every, rank_tol=rank_tol,
                         criterion=criterion, record_layers=record_layers, engine=engine, keep_A=keep_A,
                         method=method)


def run_gd_dt(params: Params, problem: CompletionProblem, n_steps: int, *, weight_decay: float, dt: float,
              record_every: int = 100, record_layers: bool = True, engine: str = "auto") -> RunResult:
    """GD with step dt through the weighted kernel (``w_k = dt/N``); equals ``run(method="gd", lr=dt)``."""
    return _run_weighted(params, problem, n_steps, weight_decay=weight_decay, dt=dt, kind="gd_dt",
                         record_every=record_every, record_layers=record_layers, engine=engine)


def weighted_chunk(*args) -> None:
    """The compiled entry-weighted step over one chunk (:mod:`._sde_kernels`; arguments as there), for checks and
    forced runs that drive the kernel with weights of their own."""
    from ._sde_kernels import weighted_chunk as chunk

    chunk(*args)


@contextmanager
def uncentred_reference():
    """While open, the reference SDE step (``engine="reference"``) uses ``g_k + ḡ`` for the per-entry gradients: its
    noise keeps ``ḡ·Σξ`` (it forgets to centre). For checks whose input is broken on purpose: they must fail."""
    orig = _sde_reference.per_entry_gradients

    def leaky(theta, arch, prob):
        g = orig(theta, arch, prob)
        return g + g.mean(axis=1, keepdims=True)

    _sde_reference.per_entry_gradients = leaky
    try:
        yield
    finally:
        _sde_reference.per_entry_gradients = orig
