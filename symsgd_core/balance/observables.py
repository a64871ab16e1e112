"""Observables of the law of balance at one point or along one run (Ziyin, Li, Ueda, arXiv 2308.06671).

Pure functions of a model, a parameter vector ``θ`` (or a recorded run) and data; nothing here simulates:

* :func:`ito_terms` — the three terms of Itô's lemma for a quadratic observable ``f = θᵀQθ``
  (``G = ‖u‖² − ‖w‖²`` with ``Q = B``, or ``‖u‖²``), following the authors' proof of Theorem 3.1 line by line;
* :func:`noise_spectrum` — the spectrum of ``C(θ)`` and where the symmetry direction ``Bθ`` sits in it;
* :func:`mean_field_balance` — the deterministic ``(v, G)`` ODE of the scalar model (``dG/dt = −4T g(v) G``,
  :func:`~symsgd_core.balance.law.scalar_g_rate`, with ``v`` driven by its drift): Section 3's ODE prediction;
* :func:`discrete_step_factors` — the exact per-step identity ``u'² − w'² = (1 − η²ḡ_B²)(u² − w²)`` of scalar
  SGD, read off a recorded trajectory;
* :func:`spread_summary` — the across-run spread of an observable;
* :func:`trace_standard_errors` — the sampling error of the noise traces on a fixed evaluation set;
* :func:`rank1_teacher`, :func:`rank1_population_terms` — the rank-1 linear net's exact Gaussian-population
  noise traces and gradient norms.

Conventions (loss without ½, ``T = η/S``, ``t = η·steps``, ``C`` per-sample, divide by N) are those of
:mod:`symsgd_core.core.conventions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.checking import roundoff_tolerance
from ..core.validation import check_array, check_choice, check_nonnegative, check_positive
from .data import Dataset, GaussianData, Moments
from .law import scalar_g_rate
from .models import ScalarInputModel, SymmetricModel

__all__ = [
    "ItoTerms",
    "NoiseSpectrum",
    "OBSERVABLES",
    "discrete_step_factors",
    "ito_terms",
    "mean_field_balance",
    "noise_spectrum",
    "observable_matrix",
    "rank1_population_terms",
    "rank1_teacher",
    "resolve_data",
    "spread_summary",
    "trace_standard_errors",
]

#: Observables of :func:`ito_terms`: name → description.
OBSERVABLES = {"G": "G = ‖u‖² − ‖w‖² (Q = J)", "u_sq": "‖u‖² (Q = diag(1 on u))",
               "w_sq": "‖w‖² (Q = diag(1 on w))"}


def _check_model(model) -> SymmetricModel:
    if not isinstance(model, SymmetricModel):
        raise ValueError(f"model must be a symsgd_core.balance.models.SymmetricModel, got {type(model).__name__}")
    return model


def _theta_vector(model: SymmetricModel, theta) -> np.ndarray:
    return check_array("theta", theta, shape=(model.n_params,))


def observable_matrix(model: SymmetricModel, observable: str) -> np.ndarray:
    """The diagonal of ``Q`` in ``f(θ) = θᵀQθ`` for a named observable, shape ``(P,)``.

    Args:
        model: a :class:`~symsgd_core.balance.models.SymmetricModel`.
        observable: ``"G"`` (``Q = B``), ``"u_sq"`` or ``"w_sq"``.
    Raises:
        ValueError: unknown observable or not a model.
    """
    _check_model(model)
    check_choice("observable", observable, OBSERVABLES)
    q = np.zeros(model.n_params)
    if observable == "G":
        return model.balance_signs()
    q[model.u_index if observable == "u_sq" else model.w_index] = 1.0
    return q


def resolve_data(model: SymmetricModel, data):
    """Normalise ``data`` for the point-wise functions: returns ``(x, y, moments)``.

    ``data`` is a :class:`~symsgd_core.balance.data.Dataset`, a tuple ``(x, y)`` in the model's layout, or a
    scalar :class:`~symsgd_core.balance.data.GaussianData` (only with a scalar-input model: then
    ``moments`` are the exact population moments and ``x = y = None``).

    Raises:
        ValueError: any other ``data``.
    """
    if isinstance(data, GaussianData):
        if not (data.is_scalar and isinstance(model, ScalarInputModel)):
            raise ValueError("GaussianData is accepted only in the scalar case with a scalar-input model "
                             "(exact moments); pass data.dataset(n, seed) otherwise")
        return None, None, data.moments()
    if isinstance(data, Dataset):
        x, y = data.full()
        return x, y, None
    if isinstance(data, tuple) and len(data) == 2:
        return data[0], data[1], None
    raise ValueError(f"data must be a Dataset, a scalar GaussianData or a tuple (x, y), got {type(data).__name__}")


def _grad_and_cov(model: SymmetricModel, th: np.ndarray, data) -> tuple[np.ndarray, np.ndarray, int]:
    """``∇L (P,)``, ``C (P, P)`` and the number of samples summed (0 for exact moments)."""
    x, y, m = resolve_data(model, data)
    if m is not None:
        b = model.population_noise_factor(th, m)
        return model.population_grad(th, m), np.outer(b, b), 0
    return model.grad(th, x, y), model.noise_cov(th, x, y), int(np.shape(x)[0])


def _sqrtm_psd(C: np.ndarray) -> np.ndarray:
    """Symmetric square root of a PSD matrix (negative round-off eigenvalues clipped to 0)."""
    vals, vecs = np.linalg.eigh(0.5 * (C + C.T))
    return (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T


@dataclass(frozen=True)
class ItoTerms:
    """Itô's lemma for ``f = θᵀQθ`` under ``dθ = −∇L dt + sqrt(T C) dW`` at one point.

    ``df = (drift + ito_correction) dt + noise_vector · dW`` with (``∇f = 2Qθ``, ``∇²f = 2Q``):

    Attributes:
        observable: name of ``f`` (see :data:`OBSERVABLES`).
        value: ``f(θ)``.
        drift: ``∇fᵀμ = −2 θᵀQ ∇L`` (per unit time ``t``).
        ito_correction: ``½ Tr[Dᵀ ∇²f D] = T Tr[Q C]``.
        noise_vector: ``∇fᵀ sqrt(T C) = 2 sqrt(T) (Qθ)ᵀ sqrt(C)``, shape ``(P,)``.
        noise_std: ``‖noise_vector‖ = 2 sqrt(T θᵀQCQθ)``: the standard deviation of ``df`` per
            ``sqrt(dt)``.
        drift_scale, noise_scale: magnitudes of the summed terms (``2 Σ|Qθ|·|∇L|`` and
            ``2 sqrt(T ‖C‖) ‖Qθ‖``), the scales of the round-off tolerances.
        temperature: ``T``.
    """

    observable: str
    value: float
    drift: float
    ito_correction: float
    noise_vector: np.ndarray
    noise_std: float
    drift_scale: float
    noise_scale: float
    temperature: float

    @property
    def rate(self) -> float:
        """``E[df]/dt = drift + ito_correction``."""
        return self.drift + self.ito_correction


def ito_terms(model: SymmetricModel, theta, data, temperature: float, observable: str = "G") -> ItoTerms:
    """The drift, Itô correction and noise coefficient of ``df`` for ``f = θᵀQθ`` at ``θ``.

    The SDE is the paper's ``dθ = −∇L dt + sqrt(T C(θ)) dW`` with ``C`` the per-sample gradient
    covariance on the data ``(x, y)`` (:mod:`symsgd_core.core.conventions`) and ``∇L`` including weight
    decay. For ``f = G`` the symmetry makes ``drift = −4γG`` (0 without weight decay) and
    ``noise_vector = 0`` (the authors' proof); for ``f = ‖u‖²`` neither vanishes.

    Args:
        model: a :class:`~symsgd_core.balance.models.SymmetricModel`.
        theta: one parameter vector, shape ``(P,)``.
        data: a Dataset, a tuple ``(x, y)`` or a scalar GaussianData (see :func:`resolve_data`).
        temperature: ``T = η/S ≥ 0``.
        observable: ``"G"``, ``"u_sq"`` or ``"w_sq"``.
    Returns:
        :class:`ItoTerms`.
    Raises:
        ValueError: bad model, ``theta`` shape, data, temperature or observable.
    """
    _check_model(model)
    th = _theta_vector(model, theta)
    T = check_nonnegative("temperature", temperature)
    q = observable_matrix(model, observable)
    grad, C, _ = _grad_and_cov(model, th, data)
    qth = q * th
    drift = float(-2.0 * qth @ grad)
    ito = float(T * np.sum(q * np.diag(C)))
    noise_vector = 2.0 * math.sqrt(T) * (_sqrtm_psd(C) @ qth)
    noise_std = 2.0 * math.sqrt(T * max(float(qth @ C @ qth), 0.0))
    c_norm = float(np.linalg.norm(C, 2)) if C.size else 0.0
    return ItoTerms(observable=observable, value=float(th @ (q * th)), drift=drift, ito_correction=ito,
                    noise_vector=noise_vector, noise_std=noise_std,
                    drift_scale=float(2.0 * np.abs(qth) @ np.abs(grad)),
                    noise_scale=float(2.0 * math.sqrt(T * c_norm) * np.linalg.norm(qth)), temperature=T)


@dataclass(frozen=True)
class NoiseSpectrum:
    """Eigen-decomposition of ``C(θ)`` and the place of the symmetry direction ``Bθ`` in it.

    Attributes:
        eigenvalues: ``(P,)`` ascending (round-off negatives kept as computed).
        eigenvectors: ``(P, P)``, column ``i`` belongs to ``eigenvalues[i]``.
        b_direction: unit vector ``Bθ/‖Bθ‖``, ``(P,)``.
        overlaps: ``(e_iᵀ b̂)²`` for every eigenvector, ``(P,)`` (they sum to 1).
        rayleigh: ``b̂ᵀ C b̂`` (zero when ``Bθ`` is a null direction of ``C``).
        null_tolerance: round-off bound for ``rayleigh`` (``roundoff_tolerance(‖C‖, N·P)``).
    """

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    b_direction: np.ndarray
    overlaps: np.ndarray
    rayleigh: float
    null_tolerance: float

    @property
    def rank(self) -> int:
        """Numerical rank of ``C``: eigenvalues above ``null_tolerance``."""
        return int(np.sum(self.eigenvalues > self.null_tolerance))


def noise_spectrum(model: SymmetricModel, theta, data) -> NoiseSpectrum:
    """Spectrum of the gradient-noise covariance ``C(θ)`` with the direction ``Bθ`` marked.

    By the symmetry ``θᵀB∇ℓ(θ, x) = 0`` for every sample, so ``C Bθ = 0``: ``Bθ`` lies in the null
    space of ``C`` (``rayleigh`` ≈ 0 and ``overlaps`` concentrated on zero eigenvalues).

    Args:
        model, theta, data: as in :func:`ito_terms`; ``Bθ`` must not be zero.
    Raises:
        ValueError: bad arguments, or ``θ`` with ``Bθ = 0`` (``u = w = 0``).
    """
    _check_model(model)
    th = _theta_vector(model, theta)
    b = model.balance_signs() * th
    nb = float(np.linalg.norm(b))
    if nb == 0.0:
        raise ValueError("theta must have a non-zero u or w block (Jθ = 0 has no direction)")
    b_hat = b / nb
    _, C, n = _grad_and_cov(model, th, data)
    vals, vecs = np.linalg.eigh(0.5 * (C + C.T))
    tol = roundoff_tolerance(max(float(np.max(np.abs(vals))), 0.0), n_terms=max(n, 1) * model.n_params)
    return NoiseSpectrum(eigenvalues=vals, eigenvectors=vecs, b_direction=b_hat, overlaps=(vecs.T @ b_hat) ** 2,
                         rayleigh=float(b_hat @ C @ b_hat), null_tolerance=tol)


def mean_field_balance(moments: Moments, theta0, temperature: float, times, weight_decay: float = 0.0,
                       rtol: float = 1e-10, atol: float = 1e-12) -> dict:
    """The deterministic ``(v, G)`` ODE of the scalar model ``ℓ = (u w x − y)²``.

    With ``v = uw``, ``G = u² − w²`` (so ``u² + w² = sqrt(G² + 4v²)``) the SDE drifts are exactly

        dG/dt = −4 T g(v) G − 4γ G,
        dv/dt = −2 (β₁v − β₂) sqrt(G² + 4v²) + 4 T g(v) v − 4γ v,

    with ``g(v) = α₁v² − 2α₂v + α₃``. ``G`` has no noise term at all (the law of balance); this
    function also drops ``v``'s noise, so its ``G(t)`` is the curve an ensemble of runs follows when
    ``v``'s fluctuations are small (relative error ``O(α₁ Var[v] / g)``).

    Args:
        moments: data moments (:meth:`GaussianData.moments` or :meth:`Dataset.moments`).
        theta0: ``(u0, w0)``.
        temperature: ``T ≥ 0``.
        times: increasing times ``t ≥ 0`` (``(K,)``), the first one is the start.
        weight_decay: ``γ ≥ 0``.
        rtol, atol: tolerances of scipy's DOP853.
    Returns:
        dict with ``t``, ``v``, ``G`` (each ``(K,)``), ``u_sq`` = ``(G + sqrt(G² + 4v²))/2`` and
        ``success`` (bool), ``message``.
    Raises:
        ValueError: bad arguments.
    """
    from scipy.integrate import solve_ivp

    if not isinstance(moments, Moments):
        raise ValueError(f"moments must be a symsgd_core.balance.data.Moments, got {type(moments).__name__}")
    th0 = check_array("theta0", theta0, shape=(2,))
    T = check_nonnegative("temperature", temperature)
    gam = check_nonnegative("weight_decay", weight_decay)
    t = check_array("times", times, ndim=1)
    if t.size < 2 or np.any(np.diff(t) <= 0) or t[0] < 0:
        raise ValueError("times must be an increasing array of at least 2 times >= 0")
    m = moments

    def rhs(_t, z):
        v, G = z
        g = float(m.g(v))
        s = math.sqrt(G * G + 4.0 * v * v)
        return [-2.0 * (m.beta1 * v - m.beta2) * s + 4.0 * T * g * v - 4.0 * gam * v, scalar_g_rate(T, g, G, gam)]

    z0 = [float(th0[0] * th0[1]), float(th0[0] ** 2 - th0[1] ** 2)]
    sol = solve_ivp(rhs, (float(t[0]), float(t[-1])), z0, method="DOP853", t_eval=t, rtol=rtol, atol=atol)
    if sol.success:
        v, G = sol.y
    else:  # pragma: no cover - the system is smooth; kept so callers can report it
        v = np.full(t.shape, np.nan)
        G = np.full(t.shape, np.nan)
    return {"t": t, "v": v, "G": G, "u_sq": 0.5 * (G + np.sqrt(G * G + 4.0 * v * v)),
            "success": bool(sol.success), "message": str(sol.message)}


def discrete_step_factors(theta, lr: float) -> dict:
    """The exact per-step identity of scalar SGD, read off a recorded trajectory.

    One SGD step of ``ℓ = (u w x − y)²`` (no weight decay) is ``u' = u − η c w``, ``w' = w − η c u``
    with the same ``c = ḡ_B = mean_B ∂ℓ/∂(uw)`` for both, hence ``u'² − w'² = (1 − η²c²)(u² − w²)``.
    ``c`` is read from the coordinate with the larger magnitude (the division is then well
    conditioned) and the identity is tested on the *other* coordinate's update, so the test is not
    a tautology: it fails if the two coordinates did not move with one common ``c``.

    Args:
        theta: consecutive parameters of one run, shape ``(K, 2)`` (recorded every step).
        lr: the step size ``η > 0``.
    Returns:
        dict with ``c`` (``(K−1,)``), ``factor = 1 − η²c²``, ``G`` (``(K,)``), ``residual`` =
        ``G_{n+1} − factor_n G_n`` and ``tolerance`` (per step, float64 round-off: 64 · 12 eps ·
        ``(u² + w²)·max(1, η²c²)`` at the larger of the two states).
    Raises:
        ValueError: bad shapes, non-finite values, or a step from ``u = w = 0``.
    """
    th = check_array("theta", theta, ndim=2)
    if th.shape[1] != 2 or th.shape[0] < 2:
        raise ValueError(f"theta must have shape (K >= 2, 2), got {th.shape}")
    eta = check_positive("lr", lr)
    u, w = th[:-1, 0], th[:-1, 1]
    u1, w1 = th[1:, 0], th[1:, 1]
    if np.any((u == 0) & (w == 0)):
        raise ValueError("theta passes through u = w = 0, where the step has no direction")
    use_w = np.abs(u) >= np.abs(w)  # c from w' = w − η c u (divide by the larger |u|)
    safe_u = np.where(use_w, u, 1.0)
    safe_w = np.where(use_w, 1.0, w)
    c = np.where(use_w, (w - w1) / (eta * safe_u), (u - u1) / (eta * safe_w))
    factor = 1.0 - (eta * c) ** 2
    G = th[:, 0] ** 2 - th[:, 1] ** 2
    residual = G[1:] - factor * G[:-1]
    size = np.maximum(u**2 + w**2, u1**2 + w1**2) * np.maximum(1.0, (eta * c) ** 2)
    tol = np.array([roundoff_tolerance(s, n_terms=12) for s in size])
    return {"c": c, "factor": factor, "G": G, "residual": residual, "tolerance": tol}


def spread_summary(values) -> dict:
    """Across-run spread of an observable recorded as ``(K, R)`` (times × runs).

    Returns:
        dict of ``(K,)`` arrays ``mean``, ``std`` (population, /R), ``q05``, ``q95``, ``min``,
        ``max``; and ``stderr_std``: the standard error of ``std`` at the last time (normal
        approximation ``std / sqrt(2(R − 1))``).
    Raises:
        ValueError: not a finite ``(K, R)`` array with ``R ≥ 2``.
    """
    a = check_array("values", values, ndim=2)
    if a.shape[1] < 2:
        raise ValueError(f"values must have at least 2 runs (columns), got shape {a.shape}")
    std = a.std(axis=1)
    return {"mean": a.mean(axis=1), "std": std, "q05": np.quantile(a, 0.05, axis=1),
            "q95": np.quantile(a, 0.95, axis=1), "min": a.min(axis=1), "max": a.max(axis=1),
            "stderr_std": float(std[-1] / math.sqrt(2.0 * (a.shape[1] - 1)))}


def trace_standard_errors(model: SymmetricModel, theta, x, y) -> tuple[float, float, float]:
    """Standard errors of the evaluation-set estimates of ``Tr Cov∇_uℓ``, ``Tr Cov∇_wℓ`` and their difference.

    The traces are means over ``N`` samples of ``‖g_n,u − ḡ_u‖²`` (resp. ``w``); their standard error is
    ``std_n / sqrt(N)`` (and that of the per-sample difference for ``Tr_u − Tr_w``). This is the sampling
    error of a *fixed* evaluation set, which a time average along a run does not reduce.

    Returns:
        ``(se_u, se_w, se_diff)``.
    """
    _check_model(model)
    th = _theta_vector(model, theta)
    g = model.per_sample_grad(th[None, :], x, y)[0]  # (N, P)
    gc = g - g.mean(axis=0, keepdims=True)
    n = gc.shape[0]
    du = np.sum(gc[:, model.u_index] ** 2, axis=1)
    dw = np.sum(gc[:, model.w_index] ** 2, axis=1)
    return float(du.std() / math.sqrt(n)), float(dw.std() / math.sqrt(n)), float((du - dw).std() / math.sqrt(n))


def rank1_teacher(d_in: int, d_out: int) -> np.ndarray:
    """The rank-1 teacher ``K = a bᵀ`` of §5: ``a`` = first ``d_out`` of (1, 0.5, −0.5, 0.25, …), ``b = 1/√d_in``."""
    a = np.array([1.0, 0.5, -0.5, 0.25, -0.25, 0.125, -0.125, 0.0625])[:d_out]
    if a.size < d_out:
        raise ValueError(f"d_out must be <= 8, got {d_out}")
    return np.outer(a, np.ones(d_in) / math.sqrt(d_in))


def rank1_population_terms(theta, teacher, sigma: float) -> dict:
    """Exact Gaussian-population noise traces and gradient norms of the rank-1 linear net.

    For ``x ~ N(0, I)``, ``y = K x + ε``, ``ε ~ N(0, σ² I)`` and ``f = u (wᵀx)``, with ``A = u wᵀ − K``:
    ``∇_uL = 2 A w``, ``∇_wL = 2 Aᵀu``,
    ``Tr Cov∇_uℓ = 4(‖A‖²_F‖w‖² + ‖Aw‖² + σ² d_out‖w‖²)`` and
    ``Tr Cov∇_wℓ = 4((d_in + 1)‖Aᵀu‖² + σ² d_in‖u‖²)`` (Gaussian fourth moments:
    ``E[xᵀQx (wᵀx)²] = Tr Q ‖w‖² + 2wᵀQw``).

    Args:
        theta: ``(..., d_out + d_in)`` parameters ``(u, w)``.
        teacher: ``K``, ``(d_out, d_in)``.
        sigma: ``σ ≥ 0``.
    Returns:
        dict of ``(...)`` arrays ``tr_u, tr_w, grad_sq_u, grad_sq_w``.
    """
    K = check_array("teacher", teacher, ndim=2)
    d_out, d_in = K.shape
    th = check_array("theta", theta)
    if th.shape[-1] != d_out + d_in:
        raise ValueError(f"theta must end in d_out + d_in = {d_out + d_in} parameters, got {th.shape}")
    s2 = check_nonnegative("sigma", sigma) ** 2
    u, w = th[..., :d_out], th[..., d_out:]
    A = u[..., :, None] * w[..., None, :] - K
    Aw = np.einsum("...ij,...j->...i", A, w)
    Atu = np.einsum("...ij,...i->...j", A, u)
    w2, u2 = np.sum(w * w, axis=-1), np.sum(u * u, axis=-1)
    tr_u = 4.0 * (np.sum(A * A, axis=(-2, -1)) * w2 + np.sum(Aw * Aw, axis=-1) + s2 * d_out * w2)
    tr_w = 4.0 * ((d_in + 1) * np.sum(Atu * Atu, axis=-1) + s2 * d_in * u2)
    return {"tr_u": tr_u, "tr_w": tr_w, "grad_sq_u": 4.0 * np.sum(Aw * Aw, axis=-1),
            "grad_sq_w": 4.0 * np.sum(Atu * Atu, axis=-1)}
