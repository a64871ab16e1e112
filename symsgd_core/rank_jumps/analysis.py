"""Closed forms and summaries behind Notebook 04 (one-way rank jumps; Wang, Jacot, arXiv 2305.16038).

Nothing here runs the engine:

* landscape facts — the induced Schatten-2/L penalty (:func:`schatten_penalty`), the cost of switching on a new
  singular direction (:func:`new_direction_cost`, :func:`barrier_width`), the loss of a balanced scalar chain near
  θ = 0 (:func:`scalar_chain_loss`, :func:`origin_is_local_min`), the basin radius of a rank-r minimum
  (:func:`basin_radius`);
* SGD's noise at a point, split into rank-raising and rank-keeping directions (:func:`noise_spectrum_by_direction`),
  and the matched Langevin temperature (:func:`matched_langevin_temperature`);
* perturbing a low-rank point along a new direction (:func:`perturb_new_direction`, :func:`basin_boundary`);
* summaries of recorded runs — transitions, waiting times (:func:`exponential_waiting_time`: the engine's −1 marker
  into :mod:`symsgd_core.core.stats`' censored exponential), jump durations, B_r membership (what the runs did, as
  an outcome, is :func:`~.experiments.jump_outcome`);
* the imbalance SGD keeps at a step size η (:func:`sgd_imbalance_scale`), the scale behind B_r's ε₂.

Loss normalisation follows :mod:`symsgd_core.core.conventions`: squared error without ½, weight decay
``γ‖θ‖²`` without ½.
"""

from __future__ import annotations

import numpy as np

from ..core.stats import censored_exponential, censored_exponential_ks, event_times
from ..core.validation import check_array, check_int, check_nonnegative, check_positive, check_positive_int
from ..dln import (
    DEFAULT_B_CRITERION,
    CompletionProblem,
    Params,
    check_problem_fits,
    end_to_end,
    gradient,
    induced_penalty,
    noise_spectrum_by_direction,
    per_entry_gradients,
    schatten_penalty,
    sgd_noise_covariance,
    smallest_B,
)

__all__ = [
    "b_r_membership",
    "balancedness_of", "barrier_width", "basin_boundary", "basin_radius", "censored_exponential_ks",
    "completion_penalty", "distance_to_rank", "explosion_distances", "exponential_counts",
    "exponential_waiting_time", "jump_histogram",
    "fitted_exponent", "loss_hessian_top_eigenvalue",
    "min_norm_completion", "origin_fit_gradient", "origin_hessian_min_eig", "origin_threshold",
    "MIN_NORM_XTOL", "completion_penalty_slope",
    "raising_noise_near", "zero_count_upper_bound",
    "fit_slope_along_new_direction", "fraction_low_rank_after_first_visit", "jump_durations",
    "new_direction", "new_direction_cost",
    "origin_is_local_min", "perturb_new_direction", "rank_transitions",
    "scalar_chain_loss", "schatten_penalty", "sgd_imbalance_drive", "sgd_imbalance_scale",

]


def new_direction_cost(delta, depth: int, weight_decay: float, gain: float) -> np.ndarray:
    """Change of the regularised loss when a new singular direction of size ``δ`` is switched on.

    To first order in the fit, ``Δ(δ) = γ L δ^{2/L} − g δ``: the penalty of the new
    singular value minus the fit gained at slope ``g`` (``g = ‖∂C/∂A‖`` along the direction).

    Args:
        delta: size(s) δ ≥ 0 of the new singular value, any shape.
        depth: L ≥ 1.
        weight_decay: weight decay γ ≥ 0.
        gain: fit slope g ≥ 0 (loss decrease per unit δ).
    Returns:
        array like ``delta``: ``γ L δ^{2/L} − g δ``.
    Raises:
        ValueError: on a negative/non-finite argument or ``depth`` < 1.
    """
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    gain = check_nonnegative("gain", gain)
    d = check_array("delta", delta)
    if np.any(d < 0):
        raise ValueError("delta must be >= 0 (size of a singular value)")
    return weight_decay * schatten_penalty(d, depth) - gain * d


def barrier_width(depth: int, weight_decay: float, gain: float) -> float:
    """Size ``δ*`` at which switching on a new direction starts to pay: ``Δ(δ*) = 0``, δ* > 0.

    For L ≥ 3, ``δ* = (γL/g)^{L/(L−2)}`` > 0: a whole interval ``(0, δ*)`` costs more than
    it gains, so the lower-rank point is a local minimum. For L = 2, Δ is linear: it
    returns ``inf`` when ``2γ ≥ g`` (never pays) and ``0`` when ``2γ < g`` (pays at once,
    no barrier). For L = 1 (penalty γ δ²) there is never a barrier: returns ``0``.

    Args:
        depth: L ≥ 1.
        weight_decay: γ > 0.
        gain: g > 0.
    Returns:
        δ* ≥ 0 (float, possibly ``inf``).
    Raises:
        ValueError: on invalid arguments.
    """
    L = check_int("depth", depth, minimum=1)
    weight_decay = check_positive("weight_decay", weight_decay)
    gain = check_positive("gain", gain)
    if L == 1:
        return 0.0
    if L == 2:
        return float("inf") if 2 * weight_decay >= gain else 0.0
    return float((weight_decay * L / gain) ** (L / (L - 2)))


def scalar_chain_loss(a, depth: int, weight_decay: float, target: float = 1.0) -> np.ndarray:
    """Regularised loss of a balanced scalar chain ``θ = (a, …, a)``: ``(a^L − y)² + γ L a²``.

    This is the loss along the straight line from θ = 0 to a balanced fit of ``y``; near 0 it is
    ``y² − 2y a^L + γ L a² + O(a^{2L})``, so θ = 0 is a local minimum for any γ > 0 when L ≥ 3.

    Args:
        a: per-layer weight(s), any shape.
        depth: L ≥ 1.
        weight_decay: γ ≥ 0.
        target: y.
    Returns:
        array like ``a``.
    Raises:
        ValueError: on invalid arguments.
    """
    L = check_int("depth", depth, minimum=1)
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    y = float(check_array("target", target))
    a = check_array("a", a)
    return (a**L - y) ** 2 + weight_decay * L * a**2


def origin_is_local_min(depth: int, weight_decay: float, target: float = 1.0) -> bool:
    """Whether θ = 0 is a strict local minimum of the scalar chain loss (second-order test).

    The quadratic coefficient of the loss at 0 is ``γL`` plus ``−2y`` when L = 2 (and 0 for
    L ≥ 3; for L = 1 the loss has a non-zero slope ``−2y`` unless y = 0).

    Args:
        depth: L ≥ 1.
        weight_decay: γ ≥ 0.
        target: y.
    Returns:
        True when 0 is a strict local minimum.
    """
    L = check_int("depth", depth, minimum=1)
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    y = float(check_array("target", target))
    if L == 1:
        return y == 0.0
    quad = weight_decay * L - (2 * y if L == 2 else 0.0)
    return quad > 0


def _unit_orthogonal_to(spans: list[np.ndarray], dim: int) -> np.ndarray:
    """A unit vector of R^dim orthogonal to the columns of every array in ``spans``."""
    basis = np.concatenate([s for s in spans if s.size], axis=1) if any(s.size for s in spans) else np.zeros((dim, 0))
    if basis.shape[1] >= dim:
        raise ValueError(f"no direction of R^{dim} is orthogonal to the {basis.shape[1]} active directions")
    q, _ = np.linalg.qr(np.concatenate([basis, np.eye(dim)], axis=1))
    return q[:, basis.shape[1]]


def new_direction(params, rank: int, run_index: int = 0):
    """Unit vectors ``x_1, …, x_{L+1}`` orthogonal to every layer's top-``rank`` singular spaces.

    ``x_1 ∈ R^n`` (input), ``x_{L+1} ∈ R^m`` (output), ``x_ℓ`` orthogonal to both the left
    singular vectors of ``W_{ℓ−1}`` and the right singular vectors of ``W_ℓ``.

    Returns:
        list of L+1 float64 vectors.
    Raises:
        ValueError: when some dimension has no room for a new direction (rank ≥ width).
    """
    r = check_int("rank", rank, minimum=0)
    i = check_int("run_index", run_index, minimum=0, maximum=params.n_runs - 1)
    ws = [w[i] for w in params.layers()]
    xs = []
    dims = params.arch.dims
    for k, d in enumerate(dims):
        spans = []
        if k > 0:  # left singular vectors of W_k (0-based: layer k-1 maps into dims[k])
            spans.append(np.linalg.svd(ws[k - 1])[0][:, :r])
        if k < len(ws):  # right singular vectors of the layer leaving dims[k]
            spans.append(np.linalg.svd(ws[k])[2][:r].T)
        xs.append(_unit_orthogonal_to(spans, d))
    return xs


def fit_slope_along_new_direction(params, problem, rank: int, run_index: int = 0) -> float:
    """``g = −⟨∂C/∂A, x_{L+1} x_1ᵀ⟩``: fit gained per unit of a new end-to-end direction (signed).

    ``∂C/∂A = (2/N)(A − A*) ⊙ mask``; the new direction is that of :func:`new_direction`.
    """
    xs = new_direction(params, rank, run_index)
    A = end_to_end(params.select([run_index]))[0]
    dA = 2.0 / problem.n_observed * (A - problem.target) * problem.mask
    return float(-xs[-1] @ dA @ xs[0])


def perturb_new_direction(params, problem, alpha: float, rank: int, run_index: int = 0):
    """Add a balanced new singular direction of per-layer size ``a`` to a rank-``rank`` point.

    ``W_ℓ ← W_ℓ + a x_{ℓ+1} x_ℓᵀ`` for every layer (x from :func:`new_direction`), with the
    sign of the last layer chosen so that the fit improves to first order; then every layer
    has ``s_{r+1}(W_ℓ) ≈ a`` and ``A`` gains ``± a^L x_{L+1} x_1ᵀ``.

    Args:
        params: the point (one run is used).
        problem: the completion problem (for the sign).
        alpha: the push a ≥ 0 (keyword kept as ``alpha``).
        rank: the rank r of the point.
        run_index: which run.
    Returns:
        :class:`~symsgd_core.dln.network.Params` with one run.
    """
    alpha = check_nonnegative("alpha", alpha)
    xs = new_direction(params, rank, run_index)
    g = fit_slope_along_new_direction(params, problem, rank, run_index)
    sign = 1.0 if g >= 0 else -1.0
    ws = [w[run_index].copy() for w in params.layers()]
    L = len(ws)
    for ell in range(L):
        ws[ell] += (sign if ell == L - 1 else 1.0) * alpha * np.outer(xs[ell + 1], xs[ell])
    return Params.from_layers(ws)


def basin_boundary(alphas, final_rank, low_rank: int = 1) -> tuple[float, float]:
    """Bracket of the basin edge from a sweep of perturbation sizes.

    Args:
        alphas: perturbation sizes (any order), ``(n,)``.
        final_rank: final rank of the run started at each a, ``(n,)`` (−1 = diverged).
        low_rank: the rank of the unperturbed minimum.
    Returns:
        ``(lo, hi)``: ``hi`` = the smallest a whose run did not return to ``low_rank`` (escaped to a
        higher rank), ``lo`` = the largest a below ``hi`` that returned. ``nan`` where none exists
        (``hi = nan``: nothing escaped; ``lo = nan``: even the smallest a escaped).
    """
    a = check_array("alphas", alphas, ndim=1)
    r = np.asarray(final_rank)
    if r.shape != a.shape:
        raise ValueError(f"final_rank must have the shape of alphas {a.shape}, got {r.shape}")
    order = np.argsort(a)
    a, r = a[order], r[order]
    esc = np.flatnonzero(r > low_rank)
    if esc.size == 0:
        back = np.flatnonzero(r == low_rank)
        return (float(a[back].max()) if back.size else float("nan")), float("nan")
    hi = float(a[esc[0]])
    back = np.flatnonzero((r == low_rank) & (a < hi))
    return (float(a[back].max()) if back.size else float("nan")), hi


def basin_radius(depth: int, weight_decay: float, slope: float) -> float:
    """Predicted basin radius ``a_c = (2γ/|g|)^{1/(L−2)}`` of a rank-r minimum along a new direction.

    Along the balanced path ``W_ℓ + a x_{ℓ+1}x_ℓᵀ`` the loss changes by
    ``−|g| a^L + γ L a² + O(a^{2L})``, whose derivative vanishes at ``a_c``: smaller a is pulled
    back (weight decay wins), larger a grows (the fit wins). Infinite when ``g = 0``; needs L ≥ 3.

    Raises:
        ValueError: depth < 3 (no barrier), γ ≤ 0.
    """
    L = check_int("depth", depth, minimum=3)
    weight_decay = check_positive("weight_decay", weight_decay)
    g = abs(float(slope))
    if g == 0.0:
        return float("inf")
    return float((2.0 * weight_decay / g) ** (1.0 / (L - 2)))


def rank_transitions(rank) -> tuple[np.ndarray, np.ndarray]:
    """Numbers of downward and upward rank changes between consecutive records, per run.

    Args:
        rank: int ``(R, K)`` (−1 marks divergence; changes into or out of −1 are not counted).
    Returns:
        ``(down, up)``: int ``(R,)`` each.
    """
    rank = np.asarray(rank)
    a, b = rank[:, :-1], rank[:, 1:]
    valid = (a >= 0) & (b >= 0)
    return np.sum((b < a) & valid, axis=1), np.sum((b > a) & valid, axis=1)


def exponential_waiting_time(jump_steps, budget: int) -> tuple[float, float]:
    """``(τ̂, se)`` of :func:`~symsgd_core.core.stats.censored_exponential` for the engine's jump steps.

    Runs that did not jump (``jump_steps < 0``, the compiled kernels' marker, turned into NaN by
    :func:`~symsgd_core.core.stats.event_times`) are censored at ``budget``:
    ``τ̂ = (Σ observed times + n_censored · budget) / n_jumped``, ``se = τ̂ / sqrt(n_jumped)``; ``(inf, inf)`` when
    no run jumped, ``(0, 0)`` when every run jumped at step 0 (no time at risk: a wait of 0 steps, as recorded;
    the ensemble figure's shortest runs at its largest η).
    """
    t = event_times(jump_steps)
    budget = check_positive("budget", budget)
    if not np.any(np.isfinite(t)):
        return float("inf"), float("inf")
    if np.all(t == 0):
        return 0.0, 0.0
    w = censored_exponential(t, budget)
    return w["mean"], w["se"]


def jump_histogram(jump_steps, budget: int, n_bins: int = 12) -> tuple[np.ndarray, np.ndarray, float]:
    """``(centres, counts, width)``: how many runs first jumped in each of ``n_bins`` equal bins of ``[0, budget]``
    (runs that did not jump, ``jump_steps < 0``, are not counted)."""
    bins = np.linspace(0, budget, check_positive_int("n_bins", n_bins) + 1)
    js = np.asarray(jump_steps)
    counts, _ = np.histogram(js[js >= 0], bins=bins)
    return 0.5 * (bins[1:] + bins[:-1]), counts, bins[1] - bins[0]


def exponential_counts(t, n_runs: int, width: float, mean: float) -> np.ndarray:
    """The number of ``n_runs`` runs expected per bin of ``width`` steps at time ``t`` when the waiting time is
    exponential with mean ``mean``: ``n_runs · width / mean · exp(−t / mean)`` (the law beside
    :func:`jump_histogram`)."""
    return n_runs * width / mean * np.exp(-np.asarray(t) / mean)


def jump_durations(result, rank_tol: float | None = None) -> np.ndarray:
    """Steps each jump took: from the last record with ``s_2 > s_2(0)/2`` to the first with ``s_2 ≤ tol``.

    Args:
        result: a :class:`~symsgd_core.dln.engine.RunResult` whose runs start at rank ≥ 2.
        rank_tol: threshold (default: the run's ``rank_tol``).
    Returns:
        int ``(R,)``: duration in steps, −1 for runs that did not jump. Resolution: the record interval.
    """
    tol = result.settings.get("rank_tol") if rank_tol is None else rank_tol
    s2 = result.singular_values[:, :, 1]
    out = np.full(s2.shape[0], -1, dtype=np.int64)
    for r in range(s2.shape[0]):
        below = np.flatnonzero(s2[r] <= tol)
        if below.size == 0:
            continue
        end = below[0]
        above = np.flatnonzero(s2[r, :end] > 0.5 * s2[r, 0])
        start = above[-1] if above.size else 0
        out[r] = int(result.steps[end] - result.steps[start])
    return out


def b_r_membership(sgd, gd=None) -> dict:
    """The B_r membership of runs recorded with their layers (:attr:`RunResult.in_B`, the default criterion
    :data:`~symsgd_core.dln.network.DEFAULT_B_CRITERION`): ``entered`` (SGD runs that were ever in B_1),
    ``at_zero`` (of those, the runs whose last record is in B_0, i.e. at A = 0: they collapsed, and since
    B_0 ⊂ B_1 a collapsed run is still in B_1), ``left`` (of those, the runs that were in a higher B_r after their first
    visit), ``n_runs``, ``max_imbalance`` (the largest balance-test value of any SGD record, NaN if none is finite),
    ``balanced`` (it is at most ε₂) and, with ``gd``, ``gd_end_B`` (the smallest r with GD's last record in B_r)."""
    sb = smallest_B(sgd.in_B)
    in_b1 = (sb >= 0) & (sb <= 1)
    entered = np.any(in_b1, axis=1)
    first = np.argmax(in_b1, axis=1)  # index of each run's first record in B_1 (0 for runs that never entered)
    at_zero = entered & (sb[:, -1] == 0)
    left = np.array([np.any(row[f:] > 1) if e else False for row, f, e in zip(sb, first, entered)])
    imb = float(np.nanmax(sgd.balancedness)) if np.isfinite(sgd.balancedness).any() else float("nan")
    out = {"entered": int(entered.sum()), "at_zero": int(at_zero.sum()), "left": int(left.sum()),
           "n_runs": int(sgd.n_runs), "max_imbalance": imb, "balanced": bool(imb <= DEFAULT_B_CRITERION.eps_balance)}
    if gd is not None:
        out["gd_end_B"] = int(smallest_B(gd.in_B[0])[-1])
    return out


def fraction_low_rank_after_first_visit(rank, low_rank: int = 1) -> np.ndarray:
    """Per run: the fraction of records at rank ≤ ``low_rank`` *after* the first record there.

    1 means the low rank was never left again (absorbing); NaN for runs that never got there.
    Diverged records (rank −1) count as not low-rank.

    Args:
        rank: int ``(R, K)``.
        low_rank: r ≥ 0.
    Returns:
        float ``(R,)``.
    """
    rank = np.asarray(rank)
    low = (rank >= 0) & (rank <= check_int("low_rank", low_rank, minimum=0))
    out = np.full(rank.shape[0], np.nan)
    for r in range(rank.shape[0]):
        hits = np.flatnonzero(low[r])
        if hits.size:
            out[r] = float(np.mean(low[r, hits[0]:]))
    return out


# ----------------------------------------------------------------------------------------------
# The authors' reply, worked out (arXiv 2305.16038, review replies): the explosion, Eckart–Young, the origin,
# the minimum-norm completion; and the statistics of the jump times
# ----------------------------------------------------------------------------------------------
def explosion_distances(base: Params, i_values, run_index: int = 0) -> dict:
    """Approach a rank-r point ``θ̂`` from a higher-rank direction: ``A_i = Â + u vᵀ/i`` (the reply's example).

    ``θ_i`` is the balanced factorisation of ``A_i`` that agrees with ``θ̂`` on its active directions: every layer
    gains ``i^{−1/L} x_{ℓ+1} x_ℓᵀ`` (the unit vectors of :func:`new_direction`, orthogonal to the active singular
    spaces), so ``A_{θ_i} = Â + i^{−1} x_{L+1} x_1ᵀ`` (u = x_{L+1}, v = x_1). Measured, for each i: the distance
    ``‖θ_i − θ̂‖²`` (``i^{−2/L}`` per layer, ``L·i^{−2/L}`` in total; the reply prints ``i^{−2/L}``, one layer's
    share, dropping the factor L), ``‖A_{θ_i} − Â‖_F`` (``1/i``), the reconstruction error
    ``‖A_{θ_i} − (Â + u vᵀ/i)‖_F`` and the imbalance of ``θ_i``. This θ_i is this project's construction of the
    reply's example (the reply does not say which factorisation of A_i it means).

    Args:
        base: the rank-r point (balanced; one run is used).
        i_values: the indices i ≥ 1, ``(n,)``.
        run_index: which run of ``base``.
    Returns:
        dict of float arrays ``(n,)``: ``i``, ``dist_sq``, ``per_layer`` (``(n, L)``), ``formula`` (``L i^{−2/L}``),
        ``dA`` (``‖A_i − Â‖_F``), ``reconstruction``, ``imbalance``; and ``depth``, ``rank``, ``scale`` (max ‖W_ℓ‖₂).
    """
    i_values = check_array("i_values", i_values, ndim=1)
    if np.any(i_values < 1):
        raise ValueError("i_values must be >= 1")
    theta = base.select([run_index])
    L = theta.arch.depth
    A_hat = end_to_end(theta)[0]
    s = np.linalg.svd(A_hat, compute_uv=False)
    rank = int(np.sum(s > max(A_hat.shape) * np.finfo(float).eps * max(s[0], np.finfo(float).tiny)))
    xs = new_direction(theta, rank)
    ws = [w[0] for w in theta.layers()]
    out = {k: [] for k in ("dist_sq", "per_layer", "dA", "reconstruction", "imbalance")}
    for i in i_values:
        a = float(i) ** (-1.0 / L)
        layers = [w + a * np.outer(xs[ell + 1], xs[ell]) for ell, w in enumerate(ws)]
        theta_i = Params.from_layers(layers)
        A_i = end_to_end(theta_i)[0]
        per_layer = [float(np.sum((wi - w) ** 2)) for wi, w in zip(layers, ws)]
        out["per_layer"].append(per_layer)
        out["dist_sq"].append(sum(per_layer))
        out["dA"].append(float(np.linalg.norm(A_i - A_hat)))
        out["reconstruction"].append(float(np.linalg.norm(A_i - (A_hat + np.outer(xs[-1], xs[0]) / i))))
        out["imbalance"].append(float(balancedness_of(layers)))
    res = {k: np.asarray(v, dtype=float) for k, v in out.items()}
    res.update(i=np.asarray(i_values, dtype=float), formula=L * np.asarray(i_values, dtype=float) ** (-2.0 / L),
               depth=L, rank=rank, scale=max(float(np.linalg.norm(w, 2)) for w in ws))
    return res


def balancedness_of(layers) -> float:
    """``max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F`` of one network given as a list of matrices ``[W_1, …, W_L]``."""
    out = 0.0
    for lo, hi in zip(layers[:-1], layers[1:]):
        out = max(out, float(np.linalg.norm(hi.T @ hi - lo @ lo.T)))
    return out


def sgd_imbalance_drive(params: Params, problem: CompletionProblem, run_index: int = 0) -> list[np.ndarray]:
    """What one SGD step adds to the imbalance: ``X_ℓ = G_{ℓ+1}ᵀG_{ℓ+1} − G_ℓG_ℓᵀ`` for every observed entry.

    ``G`` is the entry's data gradient ``∇_θ (A_ij − A*_ij)²`` (:func:`per_entry_gradients`). One SGD step on that
    entry, ``W_ℓ ← cW_ℓ − ηG_ℓ`` with ``c = 1 − 2ηγ``, maps every imbalance ``D_ℓ = W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ`` to
    ``c²D_ℓ + η²X_ℓ`` exactly: the cross terms cancel because ``W_{ℓ+1}ᵀG_{ℓ+1} = G_ℓW_ℓᵀ`` (both are
    ``Q_ℓᵀ E P_ℓᵀ W_ℓᵀ``), the law of balance at finite η (:func:`~.checks.check_imbalance_step`).

    Returns:
        list over ℓ = 1..L−1 of float64 ``(N, d_{ℓ+1}, d_{ℓ+1})``, entries in the order of ``problem.entries``.
    """
    i = check_int("run_index", run_index, minimum=0, maximum=params.n_runs - 1)
    arch = params.arch
    g = per_entry_gradients(params.flat[i:i + 1], arch, problem, by="masks")[0]
    layers = [w for w in Params(arch, g).layers()]            # each (N, d_{ℓ+1}, d_ℓ)
    return [np.swapaxes(hi, 1, 2) @ hi - lo @ np.swapaxes(lo, 1, 2) for lo, hi in zip(layers[:-1], layers[1:])]


def sgd_imbalance_scale(params: Params, problem: CompletionProblem, lr: float, weight_decay: float,
                        run_index: int = 0) -> dict:
    """The imbalance batch-1 SGD keeps near a point θ, from the exact one-step law ``D ← c²D + η²X``.

    If the iterates stay near θ (small η), ``D_t → Σ_k c^{2k} η² X_k`` with i.i.d. entries, so per layer pair
    ``E D_ℓ = η E_Ω X_ℓ / (4γ(1 − ηγ))`` (``1 − c² = 4ηγ(1 − ηγ)``) and
    ``tr Var D_ℓ = η⁴ E‖X_ℓ − E X_ℓ‖²_F / (1 − c⁴)``.
    The recorded imbalance ``max_ℓ ‖D_ℓ‖_F`` then has a mean between

    * ``lower = max_ℓ ‖E D_ℓ‖_F`` (Jensen: ``‖E D‖ ≤ E‖D‖``) and
    * ``upper = sqrt(Σ_ℓ ‖E D_ℓ‖²_F + tr Var D_ℓ)`` (``E max_ℓ ‖D_ℓ‖ ≤ sqrt(E Σ_ℓ ‖D_ℓ‖²)``);

    and every iterate is below ``bound = η max_{Ω,ℓ} ‖X_ℓ‖_F / (4γ(1 − ηγ))`` (triangle inequality). All three are
    of order η/γ: SGD is never exactly balanced, which is why B_r's balance threshold ε₂ cannot be chosen below
    what SGD keeps at the η in use (this project's derivation; :func:`~.checks.check_sgd_imbalance` compares it
    with runs). ``layer_scale = max_ℓ ‖W_ℓW_ℓᵀ‖_F`` is the scale ε₂ compares with.

    Returns:
        dict: ``lower``, ``upper``, ``bound``, ``layer_scale`` (floats) and ``lr``, ``weight_decay``.
    Raises:
        ValueError: η ≤ 0, γ ≤ 0 or 2ηγ ≥ 1.
    """
    lr = check_positive("lr", lr)
    weight_decay = check_positive("weight_decay", weight_decay)
    if 2.0 * lr * weight_decay >= 1.0:
        raise ValueError(f"need 2ηγ < 1, got η = {lr}, γ = {weight_decay}")
    c2 = (1.0 - 2.0 * lr * weight_decay) ** 2
    drive = sgd_imbalance_drive(params, problem, run_index)
    mean = [x.mean(axis=0) for x in drive]
    mean_sq = np.array([float(np.sum(m * m)) for m in mean]) * (lr**2 / (1.0 - c2)) ** 2
    var = np.array([float(np.mean(np.sum((x - m) ** 2, axis=(1, 2)))) for x, m in zip(drive, mean)])
    var_D = lr**4 * var / (1.0 - c2**2)
    x_max = max(float(np.max(np.linalg.norm(x, axis=(1, 2)))) for x in drive)
    ws = [w[run_index] for w in params.layers()]
    return {"lower": float(np.sqrt(mean_sq.max())), "upper": float(np.sqrt(np.sum(mean_sq + var_D))),
            "bound": lr**2 * x_max / (1.0 - c2), "layer_scale": max(float(np.linalg.norm(w @ w.T)) for w in ws),
            "lr": float(lr), "weight_decay": float(weight_decay)}


def fitted_exponent(x, y) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (the exponent p of ``y ∝ x^p``)."""
    x = check_array("x", x, ndim=1)
    y = check_array("y", y, ndim=1)
    if x.shape != y.shape or x.size < 2 or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("x and y must be positive arrays of the same length >= 2")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def distance_to_rank(A, r: int) -> tuple[float, np.ndarray]:
    """Eckart–Young: the spectral-norm distance from ``A`` to the matrices of rank ≤ r is ``s_{r+1}(A)``.

    Returns:
        ``(s_{r+1}(A), A_r)``: the distance (0 when rank A ≤ r) and the truncated SVD ``A_r`` that attains it.
    """
    A = check_array("A", A, ndim=2)
    r = check_int("r", r, minimum=0)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    k = min(r, s.size)
    A_r = (U[:, :k] * s[:k]) @ Vt[:k]
    return (float(s[r]) if r < s.size else 0.0), A_r


def origin_fit_gradient(problem: CompletionProblem) -> np.ndarray:
    """``∇_A 𝓛(0) = (2/N)(0 − A*) ⊙ mask``: the fit's gradient in A at θ = 0 (``(m, n)``)."""
    if not isinstance(problem, CompletionProblem):
        raise ValueError(f"problem must be a CompletionProblem, got {type(problem).__name__}")
    return -2.0 / problem.n_observed * problem.target * problem.mask


def origin_threshold(problem: CompletionProblem) -> float:
    """At L = 2, θ = 0 is a local minimum of 𝓛_γ iff ``2γ > s_max(∇_A𝓛(0))``: returns ``s_max(∇_A𝓛(0))/2``.

    Derivation: near 0, ``𝓛_γ(θ) = 𝓛(0) + ⟨∇_A𝓛(0), W_2W_1⟩ + γ(‖W_1‖² + ‖W_2‖²) + O(‖θ‖⁴)``; the quadratic form
    ``⟨G, W_2W_1⟩`` has eigenvalues ``±s_k(G)``, so the Hessian at 0 has smallest eigenvalue ``2γ − s_max(G)``. For
    L ≥ 3 the fit enters at order ``‖θ‖^L`` and the Hessian is ``2γ I``: a minimum for every γ > 0.
    """
    return 0.5 * float(np.linalg.norm(origin_fit_gradient(problem), 2))


def origin_hessian_min_eig(problem: CompletionProblem, depth: int, weight_decay: float, width: int = 3,
                           h: float = 1e-5) -> tuple[float, float]:
    """Smallest eigenvalue of the Hessian of 𝓛_γ at θ = 0, by central differences of :func:`~.problems.gradient`.

    Args:
        problem: the completion problem; depth: L ≥ 1; weight_decay: γ ≥ 0; width: hidden width; h: difference step.
    Returns:
        ``(eig_min, error_bound)``: the eigenvalue and a bound on its finite-difference error — truncation
        ``h²·|A*|_max·P`` (the gradient's third derivative at 0 is bounded by the target's entries at L = 2, zero
        beyond order L−1 at L ≥ 3) plus round-off ``64·P·eps·|∇|/h``.
    """
    from ..dln import make_architecture
    L = check_int("depth", depth, minimum=1)
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    arch = make_architecture(problem.shape, L, width)
    P = arch.n_params
    H = np.empty((P, P))
    zero = np.zeros((1, P))
    for k in range(P):
        e = zero.copy()
        e[0, k] = h
        gp = gradient(Params(arch, e), problem, weight_decay).flat[0]
        gm = gradient(Params(arch, -e), problem, weight_decay).flat[0]
        H[:, k] = (gp - gm) / (2 * h)
    H = 0.5 * (H + H.T)
    scale = max(float(np.max(np.abs(problem.target))), 1.0) * (1.0 + weight_decay)
    eps = float(np.finfo(float).eps)
    bound = scale * P * (h * h + 64.0 * eps / h)
    return float(np.linalg.eigvalsh(H)[0]), float(bound)


def loss_hessian_top_eigenvalue(params: Params, problem: CompletionProblem, weight_decay: float,
                                h: float = 1e-6) -> float:
    """λ_max of the Hessian of 𝓛_γ at the first run of ``params``, by central differences of the analytic gradient.

    Gradient descent with step η is stable at a minimum only if ``η λ_max < 2``; SGD's SDE is a model of SGD to
    the extent that ``η λ_max ≪ 1`` (the O(η²) terms of one step are small against the O(η) ones). Difference
    error: O(h²) truncation plus ``64·P·eps·|∇|/h`` round-off, about 1e−8 relative at h = 1e−6.
    """
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    h = check_positive("h", h)
    check_problem_fits(params.arch, problem)
    theta = params.flat[:1]
    P = theta.shape[1]
    H = np.empty((P, P))
    for k in range(P):
        e = np.zeros_like(theta)
        e[0, k] = h
        H[:, k] = (gradient(Params(params.arch, theta + e), problem, weight_decay).flat[0]
                   - gradient(Params(params.arch, theta - e), problem, weight_decay).flat[0]) / (2 * h)
    return float(np.linalg.eigvalsh(0.5 * (H + H.T))[-1])


def completion_penalty(x, eps: float, depth: int) -> np.ndarray | float:
    """Induced penalty ``L Σ_k s_k^{2/L}`` of the exact ε-completion ``[[1, ε], [x, 1]]`` (x: the unobserved entry)."""
    L = check_int("depth", depth, minimum=1)
    eps = check_positive("eps", eps)
    x = check_array("x", x)
    A = np.empty((*x.shape, 2, 2))
    A[..., 0, 0], A[..., 0, 1], A[..., 1, 0], A[..., 1, 1] = 1.0, eps, x, 1.0
    return induced_penalty(A, L)


#: Absolute x-tolerance of the root finder of :func:`min_norm_completion` (scipy's ``brentq`` returns x within
#: ``MIN_NORM_XTOL + 4·eps·|x|`` of a root of the penalty's derivative).
MIN_NORM_XTOL = 1e-12


def completion_penalty_slope(x, eps: float, depth: int) -> np.ndarray:
    """``d/dx`` of :func:`completion_penalty`: ``2 Σ_k s_k^{2/L − 1} u_{2k} v_{1k}`` (``∂s_k/∂A₂₁ = u_{2k} v_{1k}``
    for ``A = U S Vᵀ``). Smooth on the rank-2 branch (s₂ > 0); infinite at the cusp x = 1/ε for L ≥ 3."""
    L = check_int("depth", depth, minimum=1)
    eps = check_positive("eps", eps)
    x = check_array("x", x)
    A = np.empty((*x.shape, 2, 2))
    A[..., 0, 0], A[..., 0, 1], A[..., 1, 0], A[..., 1, 1] = 1.0, eps, x, 1.0
    U, sv, Vh = np.linalg.svd(A)
    with np.errstate(divide="ignore"):
        w = sv ** (2.0 / L - 1.0)
    return 2.0 * np.sum(w * U[..., 1, :] * Vh[..., :, 0], axis=-1)


def min_norm_completion(eps: float, depth: int, n_grid: int = 4001) -> dict:
    """The minimum-norm exact completion of the ε-completion: minimise ``L Σ s_k^{2/L}`` over the unobserved entry.

    The only rank-1 completion is ``x = 1/ε`` (penalty ``L (1 + ε² + ε⁻² + 1)^{1/L}``, s₂ = 0, a cusp); every other
    x gives rank 2. The rank-2 branch's local minima are the roots of the penalty's slope
    (:func:`completion_penalty_slope`) where it turns from negative to positive, **on one side of the cusp**: the
    slope is sampled on a grid of ``n_grid`` points over ``[−2/ε, 3/ε]``, every sign change − → + between two
    neighbours on the same side of ``x = 1/ε`` is refined by ``brentq`` (x to :data:`MIN_NORM_XTOL`), and the
    lowest of these minima is the rank-2 result. (The slope's − → + change across the cusp itself is the rank-1
    point, not a rank-2 minimum. Picking the lowest *grid* value instead, as before, found the cusp's flank at
    ε = 0.3 — the penalty falls steeply to 7.62 there — and missed the rank-2 minimum x = 1.0847, 7.7883.)
    Two extrema closer than one grid step (5/(ε·(n_grid − 1))) would be missed.

    Returns:
        dict: ``x_rank1``, ``penalty_rank1``, ``x_rank2``, ``penalty_rank2`` (NaN when the rank-2 branch has no
        local minimum), ``rank`` (1 or 2, of the minimum-norm completion), ``eps``, ``depth``.
    """
    from scipy.optimize import brentq

    eps = check_positive("eps", eps)
    L = check_int("depth", depth, minimum=1)
    x1 = 1.0 / eps
    p1 = float(completion_penalty(x1, eps, L))
    xs = np.linspace(-2.0 / eps, 3.0 / eps, check_int("n_grid", n_grid, minimum=11))
    xs = xs[np.abs(xs - x1) > 1e-9 * x1]  # the cusp itself is not on the rank-2 branch
    d = completion_penalty_slope(xs, eps, L)
    same_side = (xs[:-1] < x1) == (xs[1:] < x1)
    turns = np.flatnonzero(same_side & (d[:-1] < 0) & (d[1:] >= 0))

    def slope(x):
        return float(completion_penalty_slope(x, eps, L))

    roots = [xs[k + 1] if d[k + 1] == 0 else brentq(slope, xs[k], xs[k + 1], xtol=MIN_NORM_XTOL) for k in turns]
    x2, p2 = float("nan"), float("nan")
    if roots:
        pens = [float(completion_penalty(r, eps, L)) for r in roots]
        j = int(np.argmin(pens))
        x2, p2 = float(roots[j]), pens[j]
    return {"x_rank1": x1, "penalty_rank1": p1, "x_rank2": x2, "penalty_rank2": p2, "rank": 2 if p2 < p1 else 1,
            "eps": eps, "depth": L}


def zero_count_upper_bound(n_trials: int, confidence: float = 0.95) -> float:
    """One-sided upper confidence bound on a probability after 0 successes in n trials: ``1 − (1 − c)^{1/n}``.

    (The exact Clopper–Pearson bound for 0 successes; ≈ 3/n at c = 0.95, the "rule of three".)
    """
    n = check_int("n_trials", n_trials, minimum=1)
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(1.0 - (1.0 - c) ** (1.0 / n))


def raising_noise_near(point: Params, problem: CompletionProblem, a_values, lr: float, rank: int = 1) -> dict:
    """SGD's noise near and on B_r: the rank-r point pushed by ``a`` along a new direction (every layer's s_{r+1} = a).

    For each a: the share ``tr(P_raise η²C P_raise)/tr(η²C)`` of SGD's per-step noise on the directions that raise
    the rank above r, measured at the perturbed point with its own rank-raising basis for rank r (so the new
    direction, of size a, counts as raising), and the numerical rank of C. With N observed entries, rank C ≤ N − 1 at
    every point (an artefact of N = 3 here); the structural fact is that the raising share vanishes on B_r and grows
    like ``a^{2(L−1)}`` near it (each per-entry gradient reaches a layer's new direction only through the L − 1
    other layers' new directions).

    Returns:
        dict of arrays ``(n,)``: ``a``, ``share``, ``trace_raising``, ``trace_total``, ``rank_C``; and ``depth``,
        ``n_observed``.
    """
    a_values = check_array("a_values", a_values, ndim=1)
    out = {k: [] for k in ("share", "trace_raising", "trace_total", "rank_C")}
    for a in a_values:
        p = perturb_new_direction(point, problem, float(a), rank) if a > 0 else point.select([0])
        spec = noise_spectrum_by_direction(p, problem, rank, lr)
        C = lr**2 * sgd_noise_covariance(p, problem)
        ev = np.linalg.eigvalsh(C)
        out["rank_C"].append(int(np.sum(ev > 64 * C.shape[0] * np.finfo(float).eps * max(ev[-1], 1e-300))))
        out["trace_raising"].append(abs(spec["trace_raising"]))
        out["trace_total"].append(spec["trace_total"])
        out["share"].append(abs(spec["trace_raising"]) / spec["trace_total"])
    res = {k: np.asarray(v) for k, v in out.items()}
    res.update(a=np.asarray(a_values, dtype=float), depth=point.arch.depth, n_observed=problem.n_observed)
    return res
