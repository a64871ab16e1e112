"""SGD's noise at a point of a deep linear network: the per-entry gradients, their covariance ``C(θ)``, its split
into rank-raising and rank-keeping directions, and the matched Langevin temperature.

Loss normalisation follows :mod:`symsgd_core.core.conventions`: squared error without ½, weight decay ``γ‖θ‖²``
without ½ (γ is ``weight_decay``); one SGD step of batch size S has noise covariance ``η² C / S``.
"""

from __future__ import annotations

import numpy as np

from ..core.validation import check_choice, check_int, check_nonnegative, check_positive, check_positive_int
from .network import Architecture, Params
from .problems import CompletionProblem, check_problem_fits, gradient

__all__ = ["GRADIENT_ROUTES", "matched_langevin_temperature", "noise_spectrum_by_direction", "per_entry_gradients",
           "rank_raising_basis",
           "sgd_noise_covariance"]


#: How :func:`per_entry_gradients` computes: ``"products"`` (the closed form, vectorised over runs; the SDE's
#: reference step) or ``"masks"`` (the loss gradient of a one-entry problem per entry: the definition itself; the
#: covariance and the imbalance drive of Notebook 04's figures). Equal to round-off (tested), not bit for bit.
GRADIENT_ROUTES = ("products", "masks")


def per_entry_gradients(theta: np.ndarray, arch: Architecture, problem: CompletionProblem, *,
                        by: str = "products") -> np.ndarray:
    """Data-term gradients ``g_k = ∇_θ (A_ij − A*_ij)²`` for every run and observed entry: ``(R, N, P)``.

    ``g_k|_ℓ = 2 r_k Q_ℓ[i,:]ᵀ P_ℓ[:,j]ᵀ`` with ``P_ℓ = W_{ℓ−1}⋯W_1`` and ``Q_ℓ = W_L⋯W_{ℓ+1}``; entries in the
    order of ``problem.entries``. Weight decay (the same for every entry) is left out. ``by``: one of
    :data:`GRADIENT_ROUTES`.
    """
    if check_choice("by", by, GRADIENT_ROUTES) == "masks":
        params = Params(arch, np.atleast_2d(np.asarray(theta, dtype=np.float64)))
        rows, cols, _ = problem.entries
        out = np.empty((params.n_runs, rows.size, arch.n_params))
        for k, (i, j) in enumerate(zip(rows, cols)):
            mask = np.zeros(problem.shape, dtype=bool)
            mask[i, j] = True
            out[:, k] = gradient(params, CompletionProblem(problem.target, mask), 0.0).flat
        return out
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    R = theta.shape[0]
    ws = Params(arch, theta).layers()
    L = len(ws)
    n, m = arch.dims[0], arch.dims[-1]
    pref = [np.broadcast_to(np.eye(n), (R, n, n))]  # pref[ℓ]: the input map of layer ℓ (0-based)
    for w in ws:
        pref.append(w @ pref[-1])
    suf = [None] * L  # suf[ℓ] = W_L ⋯ W_{ℓ+2} (0-based ℓ), shape (R, m, d_{ℓ+1})
    suf[L - 1] = np.broadcast_to(np.eye(m), (R, m, m))
    for ell in range(L - 2, -1, -1):
        suf[ell] = suf[ell + 1] @ ws[ell + 1]
    A = pref[-1]
    rows, cols, vals = problem.entries
    out = np.empty((R, rows.size, arch.n_params))
    off = arch.offsets
    for k, (i, j, v) in enumerate(zip(rows, cols, vals)):
        r = A[:, i, j] - v
        for ell in range(L):
            g = 2.0 * r[:, None, None] * suf[ell][:, i, :, None] * pref[ell][:, None, :, j]
            out[:, k, off[ell]:off[ell + 1]] = g.reshape(R, -1)
    return out


def sgd_noise_covariance(params: Params, problem: CompletionProblem, run_index: int = 0) -> np.ndarray:
    """The per-sample, mean-subtracted gradient covariance ``C(θ)`` (population, /N), batch size 1.

    ``C = (1/N) Σ_Ω g_ij g_ijᵀ − ḡ ḡᵀ`` with ``g_ij = ∇_θ ℓ_ij`` (see
    :mod:`symsgd_core.core.conventions`). One SGD step's noise has covariance ``η² C``.

    Returns:
        float64 ``(P, P)``, symmetric positive semi-definite.
    """
    i = check_int("run_index", run_index, minimum=0, maximum=params.n_runs - 1)
    check_problem_fits(params.arch, problem)
    g = per_entry_gradients(params.flat[i:i + 1], params.arch, problem, by="masks")[0]
    mean = g.mean(axis=0)
    return g.T @ g / g.shape[0] - np.outer(mean, mean)


def rank_raising_basis(params, rank: int, run_index: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal bases of the rank-raising and the rank-keeping parameter directions at a point.

    For each layer ``W_ℓ = U Σ Vᵀ`` (full SVD), a perturbation ``dW`` raises that layer's rank
    above ``rank`` to first order exactly through its block ``U_⊥ᵀ dW V_⊥`` (``U_⊥, V_⊥``: the
    singular vectors beyond the ``rank`` largest): ``s_{r+1}(W + dW) ≈ ‖U_⊥ᵀ dW V_⊥‖₂``.
    Directions ``vec(u vᵀ)`` with ``u ∈ U_⊥``, ``v ∈ V_⊥`` span the *rank-raising* subspace;
    the orthogonal complement (moving the top-``rank`` singular values and vectors) keeps or
    lowers the rank.

    Args:
        params: :class:`~symsgd_core.dln.network.Params`.
        rank: r ≥ 0, the rank of the point.
        run_index: which run.
    Returns:
        ``(raising, keeping)``: float64 ``(P, k)`` and ``(P, P − k)`` with orthonormal columns.
    """
    r = check_int("rank", rank, minimum=0)
    i = check_int("run_index", run_index, minimum=0, maximum=params.n_runs - 1)
    arch = params.arch
    off = arch.offsets
    P = arch.n_params
    cols = []
    for ell in range(arch.depth):
        W = params.layer(ell)[i]
        U, _, Vt = np.linalg.svd(W, full_matrices=True)
        for u in U[:, r:].T:
            for v in Vt[r:]:
                vec = np.zeros(P)
                vec[off[ell]:off[ell + 1]] = np.outer(u, v).ravel()
                cols.append(vec)
    raising = np.array(cols).T if cols else np.zeros((P, 0))
    if raising.shape[1]:
        q, _ = np.linalg.qr(np.concatenate([raising, np.eye(P)], axis=1))
        keeping = q[:, raising.shape[1]:P]
    else:
        keeping = np.eye(P)
    return raising, keeping


def noise_spectrum_by_direction(params, problem, rank: int, lr: float, run_index: int = 0) -> dict:
    """Eigenvalues of SGD's per-step noise covariance ``η² C`` on rank-raising vs other directions.

    Args:
        params, problem: the point and the problem.
        rank: the rank r of the point (see :func:`rank_raising_basis`).
        lr: step size η (the per-step noise is ``η² C`` for batch size 1).
        run_index: which run.
    Returns:
        dict with ``raising`` and ``keeping`` (eigenvalues, descending, float64 arrays),
        ``trace_raising``, ``trace_total`` (floats), ``n_raising`` and ``n_keeping``
        (subspace dimensions).
    """
    lr = check_positive("lr", lr)
    C = lr**2 * sgd_noise_covariance(params, problem, run_index)
    raising, keeping = rank_raising_basis(params, rank, run_index)

    def eig(basis):
        if basis.shape[1] == 0:
            return np.zeros(0)
        return np.sort(np.linalg.eigvalsh(basis.T @ C @ basis))[::-1]

    return {"raising": eig(raising), "keeping": eig(keeping),
            "trace_raising": float(np.trace(raising.T @ C @ raising)) if raising.shape[1] else 0.0,
            "trace_total": float(np.trace(C)), "n_raising": raising.shape[1], "n_keeping": keeping.shape[1]}


def matched_langevin_temperature(params: Params, problem: CompletionProblem, lr: float, weight_decay: float,
                                 batch_size: int = 1) -> np.ndarray:
    """Langevin temperature τ whose per-step noise matches SGD's total variance at ``params``.

    SGD's step noise has covariance ``η² Σ/B`` (Σ = covariance over observed entries of
    the per-entry gradient); Langevin's is ``2ητ I``. Equal traces give
    ``τ = η tr(Σ) / (2 B P)``.

    Returns:
        ``(R,)`` temperatures.
    """
    lr = check_positive("lr", lr)
    weight_decay = check_nonnegative("weight_decay", weight_decay)
    batch_size = check_positive_int("batch_size", batch_size)
    check_problem_fits(params.arch, problem)
    rows, cols, _ = problem.entries
    grads = []
    for i, j in zip(rows, cols):
        single = np.zeros(problem.shape, dtype=bool)
        single[i, j] = True
        grads.append(gradient(params, CompletionProblem(problem.target, single), weight_decay).flat)
    g = np.stack(grads)  # (N, R, P); weight decay is common to all entries and cancels
    trace = np.mean(np.sum((g - g.mean(axis=0)) ** 2, axis=-1), axis=0)
    return lr * trace / (2.0 * batch_size * params.arch.n_params)
