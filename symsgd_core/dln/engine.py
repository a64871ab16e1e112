"""The deep-linear-network engine: :func:`run` an ensemble for ``n_steps`` steps of SGD, forced SGD, GD or Langevin.

Dynamics (all with step size η and weight decay γ, both may follow a :class:`Schedule`; the step itself is
written down in :mod:`.stepping`):

* ``"sgd"`` — each step draws B observed entries uniformly, i.i.d. (with replacement; B = ``batch_size``,
  default 1) and descends the mean of ``ℓ_ij = (A_ij − A*_ij)² + γ‖θ‖²``;
* ``"forced"`` — the same SGD, drawing only from a chosen subset of the observed entries (the mechanism of
  the proof of one-way jumps, arXiv 2305.16038);
* ``"gd"`` — the full gradient of 𝓛_γ;
* ``"langevin"`` — GD plus isotropic Gaussian noise at temperature τ: ``θ ← θ − η ∇𝓛_γ + sqrt(2ητ) ξ``, whose
  stationary density is ``∝ exp(−𝓛_γ/τ)`` (:func:`~symsgd_core.dln.noise.matched_langevin_temperature`
  gives the τ whose per-step noise has the total variance of SGD's at a point).

Randomness (:func:`symsgd_core.core.seeding.streams`): run r of an ensemble owns child ``r`` of
``SeedSequence(seed)``, so run r does not depend on how many other runs are simulated. Sampled entries (and
Langevin noise) are drawn in numpy in chunks and passed to the step, so ``engine="compiled"`` (numba,
:mod:`._kernels`) and ``engine="reference"`` (:mod:`._reference`) consume identical draws and agree step for step.

Performance. At these sizes the cost is per-step interpreter overhead, so the steps run in compiled kernels
that loop over the runs of the ensemble innermost (SIMD across runs), the runs split into one block per numba
thread (``NUMBA_NUM_THREADS``; the numbers do not depend on it); records are reduced in batches (per-layer
singular values by a compiled batched Jacobi SVD, also parallel). A long batch-1 run on a network ``(n, w, …, w, m)``
steps with a kernel compiled for its widths (:func:`._kernels.fixed_shape_kernel`, the same bits;
:func:`._kernels.use_fixed_shape` says when). Notebook 04's hot phase, 32 runs × 6·10⁴ SGD steps with full records
every 100 steps, runs within 1.2× of a plain compiled loop whose widths are compile-time constants, on one thread and
on two (``python -m symsgd_core bench --only rank_jumps`` times both, paired). The first call in a fresh environment
compiles the kernels (a few seconds; cached on disk afterwards, see the README on ``NUMBA_CACHE_DIR``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.conventions import LOSS_HALF_FACTOR
from ..core.results import EngineResult, resolve_engine
from ..core.seeding import streams
from ..core.validation import check_choice, check_int, check_nonnegative, check_positive, check_positive_int
from .network import (
    DEFAULT_B_CRITERION,
    DEFAULT_RANK_TOL,
    Architecture,
    BrCriterion,
    Params,
    _in_B_from,
    _layer_sv_flat,
    _svals,
    numerical_rank,
)
from .problems import CompletionProblem, check_problem_fits
from .stepping import DIVERGENCE_RESIDUAL, flush_threshold, prefetched

__all__ = ["METHODS", "RunResult", "Schedule", "build_result", "record_stats", "records_between", "run",
           "sgd_chunk"]

if LOSS_HALF_FACTOR:  # pragma: no cover - guards the factor 2 in every update
    raise ImportError("symsgd_core.rank_jumps assumes the loss (f − y)² without ½ (conventions.LOSS_HALF_FACTOR)")

METHODS = ("sgd", "forced", "gd", "langevin")


@dataclass(frozen=True)
class Schedule:
    """Step size η and weight decay γ as functions of the step index.

    Build with :meth:`constant`, :meth:`phases` (e.g. hot → cold annealing) or
    :meth:`cyclic` (triangular cyclic learning rate). ``values(n_steps)`` gives
    the per-step arrays the kernels consume.

    Attributes:
        kind: ``"phases"`` or ``"cyclic"``.
        segments: for ``"phases"``: tuple of ``(n_steps, lr, weight_decay)``; the last
            segment's values continue after its end.
        lr_min, lr_max, period, weight_decay: for ``"cyclic"``: η goes linearly
            ``lr_min → lr_max → lr_min`` over ``period`` steps, γ fixed.
    """

    kind: str
    segments: tuple = ()
    lr_min: float = 0.0
    lr_max: float = 0.0
    period: int = 1
    weight_decay: float = 0.0

    @classmethod
    def constant(cls, lr: float, weight_decay: float) -> Schedule:
        """Fixed η and γ."""
        return cls.phases([(1, lr, weight_decay)])

    @classmethod
    def phases(cls, segments) -> Schedule:
        """Piecewise-constant ``[(n_steps, lr, weight_decay), …]``, e.g. hot then cold.

        Raises:
            ValueError: empty list, n_steps < 1, lr ≤ 0, weight_decay < 0 or 2·lr·weight_decay ≥ 1.
        """
        segs = []
        if len(segments) < 1:
            raise ValueError("segments must contain at least one (n_steps, lr, weight_decay)")
        for k, seg in enumerate(segments):
            if len(seg) != 3:
                raise ValueError(f"segments[{k}] must be (n_steps, lr, weight_decay), got {seg!r}")
            n = check_positive_int(f"segments[{k}].n_steps", seg[0])
            lr, weight_decay = _check_lr_weight_decay(seg[1], seg[2], where=f"segments[{k}]")
            segs.append((n, lr, weight_decay))
        return cls("phases", segments=tuple(segs))

    @classmethod
    def anneal(cls, hot_steps: int, lr_hot: float, weight_decay_hot: float, lr_cold: float,
               weight_decay_cold: float) -> Schedule:
        """Hot phase ``(lr_hot, weight_decay_hot)`` for ``hot_steps`` steps, then cold
        ``(lr_cold, weight_decay_cold)``."""
        return cls.phases([(hot_steps, lr_hot, weight_decay_hot), (1, lr_cold, weight_decay_cold)])

    @classmethod
    def cyclic(cls, lr_min: float, lr_max: float, period: int, weight_decay: float) -> Schedule:
        """Triangular cyclic learning rate between ``lr_min`` and ``lr_max`` with ``period`` steps."""
        lr_min, weight_decay = _check_lr_weight_decay(lr_min, weight_decay, where="cyclic")
        lr_max, _ = _check_lr_weight_decay(lr_max, weight_decay, where="cyclic")
        if lr_max < lr_min:
            raise ValueError(f"lr_max must be >= lr_min, got {lr_max} < {lr_min}")
        period = check_int("period", period, minimum=2)
        return cls("cyclic", lr_min=lr_min, lr_max=lr_max, period=period, weight_decay=weight_decay)

    def values(self, n_steps: int, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Per-step ``(lr, weight_decay)`` float64 arrays of length ``n_steps`` for steps
        ``start .. start+n_steps−1``."""
        n_steps = check_int("n_steps", n_steps, minimum=0)
        t = np.arange(start, start + n_steps)
        if self.kind == "cyclic":
            phase = (t % self.period) / self.period
            tri = 1.0 - np.abs(2.0 * phase - 1.0)  # 0 → 1 → 0 over a period
            lr = self.lr_min + (self.lr_max - self.lr_min) * tri
            return lr, np.full(n_steps, self.weight_decay)
        ends = np.cumsum([s[0] for s in self.segments])
        idx = np.minimum(np.searchsorted(ends, t, side="right"), len(self.segments) - 1)
        lrs = np.array([s[1] for s in self.segments])
        weight_decays = np.array([s[2] for s in self.segments])
        return lrs[idx], weight_decays[idx]


@dataclass(frozen=True, eq=False)
class RunResult(EngineResult):
    """Records of one :func:`run` over an ensemble of R runs at K record times (the shape of
    :class:`symsgd_core.core.results.EngineResult`).

    Attributes:
        steps: int64 ``(K,)``: step counts at which records were taken (0 = start).
        times: ``(K,)`` continuous time ``t = Σ η`` up to each record (``= η·steps`` for fixed η).
        diverged_step: int ``(R,)``: the step at which the run diverged (−1 if not; :data:`.stepping.DIVERGENCE`).
        settings: dict of the call's settings (method, schedule, seed, rank_tol, criterion, engine, …).
        singular_values: ``(R, K, q)``, q = min(m, n): singular values of A_θ, descending.
        layer_singular_values: ``(R, K, L, w)`` per-layer singular values (zero-padded),
            or None if ``record_layers=False``.
        loss: ``(R, K)`` 𝓛_γ with the γ in force at that step.
        fit: ``(R, K)`` data term ``(1/N) Σ_Ω (A − A*)²``.
        norm_sq: ``(R, K)`` ``‖θ‖²``.
        balancedness: ``(R, K)`` ``max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F``.
        rank: int ``(R, K)`` numerical rank of A with ``rank_tol`` (−1 after divergence).
        in_B: bool ``(R, K, q+1)``: ``in_B[r, k, j]`` ⇔ θ ∈ B_j (needs layer records; else None).
        first_step_at_rank: int ``(R, q+1)``: first recorded step at each rank (−1 if never).
        returned_up: bool ``(R,)``: the rank ever rose above an earlier lower rank.
        first_return_step: int ``(R,)``: first recorded step of such a rise (−1 if never).
        collapsed: bool ``(R,)``: rank 0 (A ≈ 0, B_0) at the last record.
        final: :class:`~symsgd_core.dln.network.Params` after the last step (diverged runs: frozen at
            divergence).
    """

    singular_values: np.ndarray
    layer_singular_values: np.ndarray | None
    loss: np.ndarray
    fit: np.ndarray
    norm_sq: np.ndarray
    balancedness: np.ndarray
    rank: np.ndarray
    in_B: np.ndarray | None
    first_step_at_rank: np.ndarray
    returned_up: np.ndarray
    first_return_step: np.ndarray
    collapsed: np.ndarray
    final: Params

    @property
    def final_rank(self) -> np.ndarray:
        """Rank at the last record, ``(R,)`` (−1 for diverged runs)."""
        return self.rank[:, -1]

    @property
    def max_rank(self) -> int:
        """q = min(m, n), the largest possible rank of A."""
        return self.singular_values.shape[-1]

    def jump_step(self, to_rank: int) -> np.ndarray:
        """First recorded step at rank ≤ ``to_rank`` (0 ≤ rank; −1 if never): int ``(R,)``."""
        to_rank = check_int("to_rank", to_rank, minimum=0)
        hit = (self.rank >= 0) & (self.rank <= to_rank)
        first = np.argmax(hit, axis=1)
        return np.where(hit.any(axis=1), self.steps[first], -1)

    def fraction_at_rank(self) -> np.ndarray:
        """``(K, q+2)``: fraction of runs at rank 0..q at each record; last column = diverged."""
        q = self.max_rank
        out = np.zeros((self.steps.size, q + 2))
        for k in range(q + 1):
            out[:, k] = np.mean(self.rank == k, axis=0)
        out[:, q + 1] = np.mean(self.rank < 0, axis=0)
        return out

    def outcome(self, run: int) -> str:
        """One line for run ``run``: diverged / collapsed to A = 0 / rank path with the step of the last change."""
        run = check_int("run", run, minimum=0, maximum=self.n_runs - 1)
        if self.diverged[run]:
            return (f"diverged at step {self.diverged_step[run]}: a residual exceeded {DIVERGENCE_RESIDUAL:g} "
                    "(step size too large for this problem)")
        ranks = self.rank[run]
        r0, r1 = int(ranks[0]), int(ranks[-1])
        if self.collapsed[run]:
            text = f"collapsed to A = 0 (rank 0, B_0) at step {self.first_step_at_rank[run, 0]}"
        elif r0 == r1:
            text = f"stayed at rank {r1}" if np.all(ranks == r1) else f"rank {r1} at start and end"
        else:
            text = f"rank {r0} → {r1}, first at rank {r1} at step {self.first_step_at_rank[run, r1]}"
        if self.returned_up[run]:
            text += f"; rose back to a higher rank at step {self.first_return_step[run]}"
        return text

    def summary(self) -> str:
        """A short summary of the ensemble: final ranks, jumps, returns, collapse, divergence."""
        q = self.max_rank
        R = self.n_runs
        parts = [f"{R} runs, {self.steps[-1]} steps ({self.settings.get('method', '?')})"]
        counts = ", ".join(f"rank {k}: {int(np.sum(self.final_rank == k))}" for k in range(q, -1, -1))
        parts.append("final " + counts)
        if self.diverged.any():
            parts.append(f"diverged: {int(self.diverged.sum())} (first at step "
                         f"{int(self.diverged_step[self.diverged].min())})")
        if self.collapsed.any():
            parts.append(f"collapsed to A = 0: {int(self.collapsed.sum())}")
        parts.append(f"returned to a higher rank: {int(self.returned_up.sum())}")
        return "; ".join(parts)


def run(params: Params, problem: CompletionProblem, n_steps: int, *, method: str = "sgd",
        lr: float | None = None, weight_decay: float | None = None, schedule: Schedule | None = None,
        seed: int = 0, record_every: int = 100, batch_size: int = 1, temperature: float | None = None,
        entries=None, rank_tol: float = DEFAULT_RANK_TOL, criterion: BrCriterion = DEFAULT_B_CRITERION,
        record_layers: bool = True, engine: str = "auto") -> RunResult:
    """Simulate ``n_steps`` steps of ``method`` for every run of ``params``.

    Args:
        params: starting point, R runs (not modified).
        problem: the completion problem (its shape must equal ``params.arch.out_shape``).
        n_steps: number of steps ≥ 0.
        method: ``"sgd"``, ``"forced"`` (needs ``entries``), ``"gd"`` or ``"langevin"``
            (needs ``temperature``); see the module docstring.
        lr, weight_decay: fixed η > 0 and γ ≥ 0 (with 2ηγ < 1), or give ``schedule`` instead.
        schedule: a :class:`Schedule` (then lr and weight_decay must be None).
        seed: integer; run r draws its entries/noise from child r of ``SeedSequence(seed)``.
        record_every: record every this many steps (plus step 0 and the last step).
        batch_size: SGD minibatch size B ≥ 1 (entries i.i.d. with replacement); sgd/forced only.
        temperature: Langevin τ ≥ 0 (noise ``sqrt(2ητ) ξ`` per step); langevin only.
        entries: bool ``(m, n)`` subset of the mask to sample from (``"forced"`` only),
            e.g. ``problem.row_entries([0])``.
        rank_tol: threshold of the numerical rank (absolute, see :data:`DEFAULT_RANK_TOL`).
        criterion: the B_r criterion.
        record_layers: record per-layer singular values and B_r membership.
        engine: ``"auto"`` or ``"compiled"`` (numba) or ``"reference"`` (plain numpy, slow, step for step the
            same; :data:`~symsgd_core.core.results.ENGINES`).

    Returns:
        :class:`RunResult`.

    Raises:
        ValueError: bad argument (η ≤ 0, γ < 0, 2ηγ ≥ 1, an ensemble of 0 runs, shape mismatch,
            ``entries`` empty or outside the mask, unknown method, …). Divergence is not an
            error: it is reported in ``RunResult.diverged_step``.
    """
    if not isinstance(params, Params):
        raise ValueError(f"params must be a Params, got {type(params).__name__}")
    if params.n_runs < 1:
        raise ValueError("params must hold at least one run: got an ensemble of 0 runs (an empty selection?)")
    arch = params.arch
    check_problem_fits(arch, problem)
    n_steps = check_int("n_steps", n_steps, minimum=0)
    method = check_choice("method", method, METHODS)
    compiled = resolve_engine(engine)
    record_every = check_positive_int("record_every", record_every)
    batch_size = check_positive_int("batch_size", batch_size)
    rank_tol = check_positive("rank_tol", rank_tol)
    if not isinstance(criterion, BrCriterion):
        raise ValueError(f"criterion must be a BrCriterion, got {type(criterion).__name__}")
    if not np.all(np.isfinite(params.flat)):
        raise ValueError("params must be finite (found NaN or inf)")
    if schedule is None:
        if lr is None or weight_decay is None:
            raise ValueError("give lr and weight_decay (or a schedule)")
        # errors name lr and weight_decay, not a schedule
        schedule = Schedule.constant(*_check_lr_weight_decay(lr, weight_decay))
    elif not isinstance(schedule, Schedule):
        raise ValueError(f"schedule must be a Schedule, got {type(schedule).__name__}")
    elif lr is not None or weight_decay is not None:
        raise ValueError("give either lr and weight_decay or a schedule, not both")
    if method in ("gd", "langevin") and batch_size != 1:
        raise ValueError(f"batch_size applies to sgd/forced only (method={method!r} uses every entry)")
    if method == "langevin":
        if temperature is None:
            raise ValueError("method='langevin' needs a temperature τ >= 0")
        temperature = check_nonnegative("temperature", temperature)
    elif temperature is not None:
        raise ValueError(f"temperature applies to method='langevin' only, not {method!r}")
    if method == "forced":
        if entries is None:
            raise ValueError("method='forced' needs entries: a boolean (m, n) subset of the mask")
        sub = np.asarray(entries)
        if sub.shape != problem.shape or not (sub.dtype == bool or np.all(np.isin(sub, (0, 1)))):
            raise ValueError(f"entries must be a boolean array of shape {problem.shape}")
        sub = sub.astype(bool)
        if not sub.any():
            raise ValueError("entries selects no entry: forced sampling needs at least one")
        if np.any(sub & ~problem.mask):
            raise ValueError("entries must be observed entries (a subset of problem.mask)")
    elif entries is not None:
        raise ValueError(f"entries applies to method='forced' only, not {method!r}")
    else:
        sub = problem.mask

    lr_all, weight_decay_all = schedule.values(n_steps)
    rec_steps = np.arange(0, n_steps + 1, record_every, dtype=np.int64)
    if rec_steps[-1] != n_steps:
        rec_steps = np.append(rec_steps, n_steps)
    R, P = params.n_runs, arch.n_params
    theta = params.flat.copy()
    dims = np.asarray(arch.dims, dtype=np.int64)
    off = arch.offsets
    div_step = np.full(R, -1, dtype=np.int64)
    rngs = streams(seed, R)
    rows, cols = np.nonzero(sub)
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    vals = problem.target[rows, cols].astype(np.float64)
    draws = {"sgd": batch_size, "forced": batch_size, "gd": 0, "langevin": P}[method]
    chunk = max(1, min(n_steps, _CHUNK_ELEMENTS // max(R * max(draws, 1), 1),
                       record_every * max(1, _CHUNK_ELEMENTS // max(R * P, 1))))
    if compiled:
        from ._kernels import fixed_shape, gd_chunk, sgd_chunk, use_fixed_shape

        # batch 1 on a network (n, w, …, w, m): the kernel compiled for its widths when the whole run pays for it
        shape = fixed_shape(arch.dims) if method in ("sgd", "forced") and batch_size == 1 else None
        fixed = {"fixed": shape is not None and use_fixed_shape(shape, R * n_steps)}
    else:
        from ._reference import gd_chunk, sgd_chunk

        fixed = {}
    tiny = flush_threshold(arch.depth)
    maskf = problem.mask.astype(np.float64)
    target = np.ascontiguousarray(problem.target)
    stats = [record_stats(theta[:, None, :], arch, problem, weight_decay_all[:1] if n_steps else
                           np.array([schedule.values(1)[1][0]]), rank_tol, criterion, record_layers)]

    def draw(s0):  # the chunk's random draws, per run from its own stream (in a background thread: prefetched)
        T = min(n_steps, s0 + chunk) - s0
        if method in ("sgd", "forced"):
            idx = np.empty((R, T, batch_size), dtype=np.int64)
            for r, rng in enumerate(rngs):
                idx[r] = rng.integers(0, rows.size, size=(T, batch_size))
            return idx
        noise = np.empty((R, T if method == "langevin" else 0, P))
        if method == "langevin":
            for r, rng in enumerate(rngs):
                noise[r] = rng.standard_normal((T, P))
        return noise

    for s0, drawn in prefetched(range(0, n_steps, chunk), draw):
        s1 = min(n_steps, s0 + chunk)
        T = s1 - s0
        in_chunk = rec_steps[(rec_steps > s0) & (rec_steps <= s1)]
        rec_pos = (in_chunk - s0).astype(np.int64)
        snaps = np.empty((R, rec_pos.size, P))
        lr_c = np.ascontiguousarray(lr_all[s0:s1])
        weight_decay_c = np.ascontiguousarray(weight_decay_all[s0:s1])
        if method in ("sgd", "forced"):
            sgd_chunk(theta, dims, off, rows, cols, vals, drawn, lr_c, weight_decay_c, rec_pos, snaps, div_step, s0,
                      DIVERGENCE_RESIDUAL, tiny, **fixed)
        else:
            scale = np.sqrt(2.0 * lr_c * temperature) if method == "langevin" else np.zeros(T)
            gd_chunk(theta, dims, off, target, maskf, 1.0 / problem.n_observed, lr_c, weight_decay_c, drawn, scale,
                     rec_pos, snaps, div_step, s0, DIVERGENCE_RESIDUAL, tiny)
        if rec_pos.size:
            stats.append(record_stats(snaps, arch, problem, weight_decay_all[in_chunk - 1], rank_tol, criterion,
                                       record_layers))
    rec = {k: np.concatenate([st[k] for st in stats], axis=1) if stats[0][k] is not None else None
           for k in stats[0]}
    times = np.concatenate([[0.0], np.cumsum(lr_all)])[rec_steps]
    settings = dict(method=method, schedule=schedule, seed=seed, n_steps=n_steps, record_every=record_every,
                    batch_size=batch_size, temperature=temperature, rank_tol=rank_tol, criterion=criterion,
                    engine="compiled" if compiled else "reference", n_runs=R, problem=problem.name,
                    entries=None if method != "forced" else sub.copy())
    return build_result(rec_steps, times, rec, div_step, Params(arch, theta), settings)


#: Largest number of pre-drawn random numbers (or snapshot entries) held per chunk.
_CHUNK_ELEMENTS = 1 << 22


def _measure(flat: np.ndarray, arch: Architecture, layers: bool):
    """A, ‖θ‖², imbalance and (optionally) per-layer singular values of flat ``(n, P)`` parameters."""
    off = arch.offsets
    n = flat.shape[0]
    ws = [flat[:, off[k]:off[k + 1]].reshape(n, a, b) for k, (a, b) in enumerate(arch.layer_shapes)]
    A = ws[0]
    for w in ws[1:]:
        A = w @ A
    norm_sq = np.einsum("rp,rp->r", flat, flat)
    imb = np.zeros(n)
    for lo, hi in zip(ws[:-1], ws[1:]):
        D = np.swapaxes(hi, 1, 2) @ hi - lo @ np.swapaxes(lo, 1, 2)
        imb = np.maximum(imb, np.sqrt(np.einsum("rij,rij->r", D, D)))
    lsv = _layer_sv_flat(flat, arch) if layers else None
    return A, norm_sq, imb, lsv


def record_stats(snaps: np.ndarray, arch: Architecture, problem: CompletionProblem, weight_decay_at: np.ndarray,
                  rank_tol: float, criterion: BrCriterion, layers: bool) -> dict:
    """Reduce snapshots ``(R, k, P)`` to the recorded quantities; NaN snapshots give NaN records."""
    R, k, P = snaps.shape
    q = min(arch.out_shape)
    flat = snaps.reshape(R * k, P)
    ok = np.all(np.isfinite(flat), axis=1)
    sv = np.full((R * k, q), np.nan)
    fit = np.full(R * k, np.nan)
    norm_sq = np.full(R * k, np.nan)
    imb = np.full(R * k, np.nan)
    lsv = np.full((R * k, arch.depth, arch.max_width), np.nan) if layers else None
    if ok.any():
        A, nsq, bal, ls = _measure(flat[ok], arch, layers)
        sv[ok] = _svals(A)
        fit[ok] = problem.fit_loss(A)
        norm_sq[ok] = nsq
        imb[ok] = bal
        if layers:
            lsv[ok] = ls
    weight_decay_rep = np.tile(np.asarray(weight_decay_at, dtype=np.float64), R)
    out = dict(sv=sv.reshape(R, k, q), fit=fit.reshape(R, k), norm_sq=norm_sq.reshape(R, k),
               loss=(fit + weight_decay_rep * norm_sq).reshape(R, k), balance=imb.reshape(R, k),
               rank=numerical_rank(sv, rank_tol).reshape(R, k))
    if layers:
        inb = _in_B_from(norm_sq, imb, lsv, criterion)[:, : q + 1] & ok[:, None]
        out["lsv"] = lsv.reshape(R, k, arch.depth, arch.max_width)
        out["inB"] = inb.reshape(R, k, q + 1)
    else:
        out["lsv"] = None
        out["inB"] = None
    return out


def build_result(steps, times, rec, div_step, final, settings) -> RunResult:
    """Per-run events from the records: first step at each rank, returns up, collapse, divergence."""
    rank = rec["rank"]
    R, K = rank.shape
    q = rec["sv"].shape[-1]
    first = np.full((R, q + 1), -1, dtype=np.int64)
    for k in range(q + 1):
        hit = rank == k
        first[:, k] = np.where(hit.any(axis=1), steps[np.argmax(hit, axis=1)], -1)
    eff = np.where(rank < 0, q + 1, rank)
    running_min = np.minimum.accumulate(eff, axis=1)
    up = np.zeros((R, K), dtype=bool)
    up[:, 1:] = (eff[:, 1:] > running_min[:, :-1]) & (rank[:, 1:] >= 0)
    returned = up.any(axis=1)
    first_return = np.where(returned, steps[np.argmax(up, axis=1)], -1)
    collapsed = (rank[:, -1] == 0) & ~(div_step >= 0)
    return RunResult(steps=steps, times=times, diverged_step=div_step.copy(), settings=settings,
                     singular_values=rec["sv"], layer_singular_values=rec["lsv"], loss=rec["loss"], fit=rec["fit"],
                     norm_sq=rec["norm_sq"], balancedness=rec["balance"], rank=rank, in_B=rec["inB"],
                     first_step_at_rank=first, returned_up=returned, first_return_step=first_return,
                     collapsed=collapsed, final=final)


def _check_lr_weight_decay(lr, weight_decay, where: str = "") -> tuple[float, float]:
    pre = f"{where}: " if where else ""
    try:
        lr = check_positive("lr", lr)
        weight_decay = check_nonnegative("weight_decay", weight_decay)
    except ValueError as exc:
        raise ValueError(pre + str(exc)) from None
    if 2.0 * lr * weight_decay >= 1.0:
        raise ValueError(f"{pre}2·lr·weight_decay must be < 1 (weight decay factor "
                         f"1 − 2ηγ = {1 - 2 * lr * weight_decay:.3g} "
                         f"would flip or zero the weights); got lr={lr}, weight_decay={weight_decay}")
    return lr, weight_decay


def records_between(result: RunResult, first_step: int, last_step: int) -> RunResult:
    """The records of ``result`` taken at steps in ``[first_step, last_step]``, with the per-run events (first
    step at each rank, returns, collapse) recomputed over them and the divergences after ``last_step`` left
    out: one phase of a scheduled run (e.g. the hot or the cold phase of an annealing). ``final`` stays the
    state after the whole run's last step, not the state at ``last_step``."""
    keep = (result.steps >= first_step) & (result.steps <= last_step)
    if not keep.any():
        raise ValueError(f"no record between steps {first_step} and {last_step}")
    rec = {"sv": result.singular_values[:, keep], "lsv": None if result.layer_singular_values is None
           else result.layer_singular_values[:, keep], "loss": result.loss[:, keep], "fit": result.fit[:, keep],
           "norm_sq": result.norm_sq[:, keep], "balance": result.balancedness[:, keep], "rank": result.rank[:, keep],
           "inB": None if result.in_B is None else result.in_B[:, keep]}
    div = np.where(result.diverged_step <= last_step, result.diverged_step, -1)
    return build_result(result.steps[keep], result.times[keep], rec, div, result.final,
                         {**result.settings, "records_between": (int(first_step), int(last_step))})


def sgd_chunk(*args) -> None:
    """The compiled SGD step loop over one chunk (:mod:`._kernels`; arguments as there), for the benchmark that
    times the loop alone."""
    from ._kernels import sgd_chunk as chunk

    chunk(*args)


def compile_fixed_shape(start: Params) -> None:
    """Build (or load from numba's cache) the batch-1 SGD kernel compiled for ``start``'s widths, in the version
    (serial or ``prange``) that ``start.n_runs`` runs use on this many threads; :func:`run` then steps with it
    whatever its length. For the warm-up (``python -m symsgd_core warm``)."""
    from ._kernels import fixed_shape, fixed_shape_kernel, n_blocks

    fixed_shape_kernel(fixed_shape(start.arch.dims), n_blocks(start.n_runs) > 1)


def fixed_shape_kernels(dims, versions=(False, True)) -> dict:
    """The batch-1 SGD kernels compiled for the widths ``dims`` (the serial and/or ``prange`` version of
    ``versions``) as fresh numba dispatchers, by name (``"fixed_shape_kernel(n, w, m, L)"``, ``"…, prange)"``):
    closures made per shape, so no module attribute lists them. Nothing is compiled and :func:`run` does not use them:
    for the cache checks of the warm-up (``symsgd_core.warm.cold_kernels``). ``{}`` when ``dims`` has no fixed shape."""
    from ._kernels import fixed_shape, fixed_shape_name, new_fixed_shape_kernel

    shape = fixed_shape(dims)
    if shape is None:
        return {}
    return {fixed_shape_name(shape, v): new_fixed_shape_kernel(shape, v)
            for v in dict.fromkeys(bool(v) for v in versions)}


def made_fixed_shape_kernels() -> dict:
    """``{name: dispatcher}`` of the fixed-shape kernels this process made (names as :func:`fixed_shape_kernels`)."""
    from ._kernels import made_fixed_shape_kernels as made

    return made()
