"""Computations behind Notebook 01 (the law of balance), at one point or along one run.

Nothing here integrates dynamics (that is :mod:`symsgd_core.dynamics`); these functions take a
model, a parameter vector ``θ`` and data, and return what the notebook shows and asserts:

* :func:`ito_terms` — the three terms of Itô's lemma for a quadratic observable ``f = θᵀQθ``
  (``G = ‖u‖² − ‖w‖²`` with ``Q = B``, or ``‖u‖²``), following the seed's proof line by line;
* :func:`noise_spectrum` — the spectrum of ``C(θ)`` and where the direction ``Bθ`` sits in it;
* :func:`orbit_invariance` — the loss along a symmetry orbit ``(λu, w/λ)`` is constant;
* :func:`mean_field_balance` — the deterministic ``(v, G)`` ODE of the scalar model
  (``dG/dt = −4T g(v) G``, ``v`` driven by its drift), the "ODE prediction" of Section 3;
* :func:`discrete_step_factors` — the exact per-step identity ``u'² − w'² = (1 − η²ḡ_B²)(u² − w²)``
  of scalar SGD, read off a recorded trajectory.

Conventions (loss without ½, ``T = η/S``, ``t = η·steps``, ``C`` per-sample, divide by N) are
those of :mod:`symsgd_core.core.conventions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .core.checking import CheckResult, make_result, roundoff_tolerance
from .core.validation import check_array, check_choice, check_nonnegative, check_positive
from .data import Dataset, GaussianData, Moments
from .models import ScalarInputModel, ScalarModel, SymmetricModel

__all__ = [
    "ItoTerms",
    "NoiseSpectrum",
    "discrete_step_factors",
    "ito_terms",
    "mean_field_balance",
    "noise_spectrum",
    "observable_matrix",
    "load_relu_balance",
    "noise_balance_check",
    "noise_vs_norm_claims",
    "orbit_invariance",
    "relu_balance_claims",
    "relu_balance_run",
    "fast_relu_net",
    "rank1_balance_run",
    "rank1_population_terms",
    "rank1_teacher",
    "resolve_data",
    "trace_standard_errors",
    "write_relu_balance",
    "spread_summary",
]

#: Observables of :func:`ito_terms`: name → description.
OBSERVABLES = {"G": "G = ‖u‖² − ‖w‖² (Q = B)", "u_sq": "‖u‖² (Q = diag(1 on u))",
               "w_sq": "‖w‖² (Q = diag(1 on w))"}


def _check_model(model) -> SymmetricModel:
    if not isinstance(model, SymmetricModel):
        raise ValueError(f"model must be a symsgd_core.models.SymmetricModel, got {type(model).__name__}")
    return model


def _theta_vector(model: SymmetricModel, theta) -> np.ndarray:
    return check_array("theta", theta, shape=(model.n_params,))


def observable_matrix(model: SymmetricModel, observable: str) -> np.ndarray:
    """The diagonal of ``Q`` in ``f(θ) = θᵀQθ`` for a named observable, shape ``(P,)``.

    Args:
        model: a :class:`~symsgd_core.models.SymmetricModel`.
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

    ``data`` is a :class:`~symsgd_core.data.Dataset`, a tuple ``(x, y)`` in the model's layout, or a
    scalar :class:`~symsgd_core.data.GaussianData` (only with a scalar-input model: then
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
    ``noise_vector = 0`` (the seed's proof); for ``f = ‖u‖²`` neither vanishes.

    Args:
        model: a :class:`~symsgd_core.models.SymmetricModel`.
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
        raise ValueError("theta must have a non-zero u or w block (Bθ = 0 has no direction)")
    b_hat = b / nb
    _, C, n = _grad_and_cov(model, th, data)
    vals, vecs = np.linalg.eigh(0.5 * (C + C.T))
    tol = roundoff_tolerance(max(float(np.max(np.abs(vals))), 0.0), n_terms=max(n, 1) * model.n_params)
    return NoiseSpectrum(eigenvalues=vals, eigenvectors=vecs, b_direction=b_hat, overlaps=(vecs.T @ b_hat) ** 2,
                         rayleigh=float(b_hat @ C @ b_hat), null_tolerance=tol)


def orbit_invariance(model: SymmetricModel, theta, x, y, lambdas) -> CheckResult:
    """Check that the per-sample loss is constant along the orbit ``(λu, w/λ)``.

    Args:
        model, theta, x, y: as in :func:`ito_terms` (``x``, ``y`` may be a single sample).
        lambdas: positive scale factors, shape ``(K,)``.
    Returns:
        A :class:`~symsgd_core.core.checking.CheckResult`: measured = ``max_{λ,n} |ℓ_n(λu, w/λ) − ℓ_n(u, w)|``,
        tolerance = float64 round-off of the loss (scale ``2(√max ℓ + 2 max‖y‖)²`` over the
        orbit, ``8`` rounded operations per evaluation). ``details`` holds ``loss`` (at λ = 1) and ``G``
        along the orbit.
    Raises:
        ValueError: bad arguments or a non-positive λ.
    """
    _check_model(model)
    th = _theta_vector(model, theta)
    lam = check_array("lambdas", lambdas, ndim=1)
    if lam.size == 0 or np.any(lam <= 0):
        raise ValueError("lambdas must be a non-empty array of values > 0")
    thetas = np.stack([model.rescale(th, float(s)) for s in lam])
    losses = model.per_sample_loss(thetas, x, y)  # (K, N)
    base = model.per_sample_loss(th[None, :], x, y)[0]
    measured = float(np.max(np.abs(losses - base[None, :])))
    y_arr = np.asarray(y, dtype=np.float64)
    y_max = (float(np.max(np.linalg.norm(y_arr.reshape(y_arr.shape[0], -1), axis=1))) if y_arr.ndim
             else abs(float(y_arr)))
    # ℓ = r², f = r + y: a relative error k·eps in f moves ℓ by ≤ 2|r|·k·eps·(|r| + 2|y|) ≤ 2k·eps·(√ℓ + 2|y|)².
    scale = 2.0 * (math.sqrt(float(np.max(losses))) + 2.0 * y_max) ** 2
    tol = roundoff_tolerance(scale, n_terms=8)
    G = model.G(thetas)
    return make_result(
        "balance.orbit_invariance", "ℓ(λu, w/λ, x) = ℓ(u, w, x) for every λ on the slider's orbit and every sample",
        measured, tol, "float64 round-off: 64 · 8 operations · eps · 2(√max ℓ + 2 max‖y‖)²",
        details={"loss": base.tolist(), "G_min": float(G.min()), "G_max": float(G.max())})


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
        raise ValueError(f"moments must be a symsgd_core.data.Moments, got {type(moments).__name__}")
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
        return [-2.0 * (m.beta1 * v - m.beta2) * s + 4.0 * T * g * v - 4.0 * gam * v,
                -4.0 * T * g * G - 4.0 * gam * G]

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


def scalar_model() -> ScalarModel:
    """The notebook's scalar model ``ℓ = (u w x − y)²`` (no weight decay)."""
    return ScalarModel()


# ============================================================================ noise balance along a run


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


def noise_balance_check(times, G, tr_u, tr_w, grad_sq_u, grad_sq_w, lr: float, batch_size: int,
                        trace_se, window: float = 0.25, label: str = "") -> CheckResult:
    """Check the law of balance, averaged over the last ``window`` of a recorded SGD run.

    In expectation one SGD step changes ``G`` by exactly ``η²(‖∇_uL‖² − ‖∇_wL‖²) + (η²/S)(Tr_u − Tr_w)``
    (the ``O(η²)`` gradient term is discrete SGD's correction to the SDE). Per unit time ``t = η·steps``,
    averaged over the record intervals ``k → k+1`` of the window:

        e_k = (G_{k+1} − G_k)/Δt − η·avg(‖∇_uL‖² − ‖∇_wL‖²) − T·avg(Tr_u − Tr_w),   E e_k = 0,

    (``avg`` = trapezoid over the interval's two records). Measured: ``|mean e| / (T·mean Tr_w)``, the
    law's residual relative to the noise scale. Tolerance: ``4·SE(e)/(T·mean Tr_w)`` (SE = std/sqrt(n) of
    the interval values) plus ``4·se_diff/mean Tr_w`` for the evaluation set's sampling error of
    ``Tr_u − Tr_w`` (:func:`trace_standard_errors`).

    Args:
        times, G, tr_u, tr_w, grad_sq_u, grad_sq_w: ``(K,)`` series of one run at its records
            (``grad_sq_*`` = ``‖∇_uL‖²``, ``‖∇_wL‖²`` of the full evaluation-set gradient).
        lr, batch_size: ``η``, ``S``.
        trace_se: ``(se_u, se_w, se_diff)`` from :func:`trace_standard_errors`.
        window: fraction of the records (at the end) to use; at least 3 intervals are needed.
        label: appended to the check name.
    Returns:
        A :class:`CheckResult`; ``details`` has ``trace_ratio`` (mean Tr_u / mean Tr_w over the window),
        ``predicted_ratio`` (what the law predicts from ``G``'s drift and the gradient term),
        ``norm_terms``.
    Raises:
        ValueError: bad arrays or fewer than 3 intervals in the window.
    """
    t = check_array("times", times, ndim=1)
    arrs = [check_array(n, a, shape=t.shape) for n, a in
            (("G", G), ("tr_u", tr_u), ("tr_w", tr_w), ("grad_sq_u", grad_sq_u), ("grad_sq_w", grad_sq_w))]
    Gs, tu, tw, gu, gw = arrs
    eta = check_positive("lr", lr)
    S = int(batch_size)
    if S < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    T = eta / S
    first = int(math.floor((1.0 - check_positive("window", window)) * (t.size - 1)))
    k = np.arange(first, t.size - 1)
    if k.size < 3:
        raise ValueError(f"the window holds {k.size} record intervals; at least 3 are needed")
    dt = t[k + 1] - t[k]
    d = tu - tw
    dg = gu - gw
    e = (Gs[k + 1] - Gs[k]) / dt - eta * 0.5 * (dg[k] + dg[k + 1]) - T * 0.5 * (d[k] + d[k + 1])
    sl = slice(first, t.size)
    scale = T * float(np.mean(tw[sl]))
    se_e = float(e.std(ddof=1) / math.sqrt(e.size))
    se_diff = float(np.asarray(trace_se, dtype=float)[-1])
    tol = (4.0 * se_e) / scale + 4.0 * se_diff / float(np.mean(tw[sl]))
    drift = float((Gs[-1] - Gs[first]) / (t[-1] - t[first]))
    pred_diff = (drift - eta * float(np.mean(dg[sl]))) / T
    name = "balance.noise_balance" + (f"[{label}]" if label else "")
    return make_result(
        name, "Averaged over the last part of the run, T·(Tr Cov∇_uℓ − Tr Cov∇_wℓ) = dG/dt − η(‖∇_uL‖² − ‖∇_wL‖²) "
        "(the law of balance with discrete SGD's O(η) term)",
        abs(float(e.mean())) / scale, tol,
        "4 standard errors of the per-interval residual (/(T·mean Tr_w)) + 4 standard errors of the evaluation "
        "set's estimate of Tr_u − Tr_w (/mean Tr_w)",
        details={"trace_ratio": float(np.mean(tu[sl]) / np.mean(tw[sl])),
                 "predicted_ratio": 1.0 + pred_diff / float(np.mean(tw[sl])),
                 "G_drift": drift, "gradient_term": eta * float(np.mean(dg[sl])), "intervals": int(k.size),
                 "window_start_time": float(t[first])})


# ============================================================================ the rank-1 linear net of §5


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


def rank1_balance_run(d_in: int, d_out: int, *, lr: float = 0.02, steps: int = 4000, runs: int = 8, seed: int = 0,
                      n_records: int = 101, sigma: float = 1.0, u_scale: float = 0.3, w_scale: float = 2.0) -> dict:
    """SGD (``S = 1``, fresh samples) on the rank-1 linear net ``f(x) = u (wᵀx)``, ``runs`` runs, for §5.

    Data: ``x ~ N(0, I_{d_in})``, ``y = K x + ε`` with the rank-1 teacher :func:`rank1_teacher` and
    ``ε ~ N(0, σ² I)``. Start: ``u = u_scale·a/‖a‖``, ``w = w_scale·b/‖b‖`` (far from balance). Noise traces
    and gradient norms are the exact population values (:func:`rank1_population_terms`), so the series
    carry no evaluation-set error (``trace_se = 0``).

    With the net at the teacher, ``A = 0`` leaves ``Tr Cov∇_uℓ = 4σ²d_out‖w‖²`` and
    ``Tr Cov∇_wℓ = 4σ²d_in‖u‖²``: noise balance then means ``‖u‖²/‖w‖² = d_out/d_in``, not 1.

    Returns:
        dict of ``(K, runs)`` series ``G, u_sq, w_sq, tr_cov_u, tr_cov_w, grad_sq_u, grad_sq_w`` and their
        run means ``mean`` (a dict of ``(K,)`` series with ``trace_se = (0, 0, 0)``, the input of
        :func:`noise_vs_norm_claims`), ``times``, ``diverged`` (number of runs), ``params``.
    """
    from .core.validation import check_int
    from .dynamics import run_sgd
    from .models import Rank1LinearModel

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
    th = tr.theta[:, ok, :]
    pop = rank1_population_terms(th, K, sigma)
    series = {"G": tr.observables["G"][:, ok], "u_sq": tr.observables["u_sq"][:, ok],
              "w_sq": tr.observables["w_sq"][:, ok], "tr_cov_u": pop["tr_u"], "tr_cov_w": pop["tr_w"],
              "grad_sq_u": pop["grad_sq_u"], "grad_sq_w": pop["grad_sq_w"]}
    mean = {k: v.mean(axis=1) for k, v in series.items()}
    mean.update(times=tr.times, trace_se=np.zeros(3))
    return {**series, "mean": mean, "times": tr.times, "diverged": int(tr.n_diverged),
            "params": {"d_in": d_in, "d_out": d_out, "lr": lr, "batch_size": 1, "steps": steps, "runs": runs,
                       "seed": seed, "sigma": sigma}}


# ============================================================================ the ReLU net of the paper's Fig. 2

#: The paper-size ReLU run shipped in ``data_files/relu_balance.npz`` (brief §3: 20 → 200 → 20, y = x + ε).
#: η, S, steps, σ, initialisation and the evaluation set are this project's choices (the brief does not
#: give the paper's); ``python -m symsgd_core.balance_analysis`` regenerates the file (~3 min on 2 cores).
RELU_FIG2 = {"d_in": 20, "hidden": 200, "d_out": 20, "sigma": 1.0, "lr": 0.004, "batch_size": 1, "steps": 40_000,
             "n_records": 101, "n_eval": 2048, "seed": 0, "eval_seed": 12345, "init_scale": 1.0}

#: A reduced ReLU run that the notebook can simulate live (well under a second or two).
RELU_SMALL = {"d_in": 5, "hidden": 50, "d_out": 5, "sigma": 1.0, "lr": 0.015, "batch_size": 1, "steps": 3000,
              "n_records": 26, "n_eval": 1024, "seed": 0, "eval_seed": 12345, "init_scale": 1.0}

RELU_DATA_FILE = "relu_balance.npz"


def fast_relu_net(d_in: int, hidden: int, d_out: int, bias: bool = True):
    """A :class:`~symsgd_core.relu_net.ReLUNet` whose noise traces use a closed form (no per-sample autograd).

    For ``f = W2 relu(W1 x + b1)`` and ``ℓ = ‖f − y‖²`` write ``r_n = 2(f(x_n) − y_n)``, ``a_n = relu(h_n)``.
    Neuron ``i``'s per-sample gradients are ``∇_{u_i}ℓ_n = r_n a_ni`` and
    ``∇_{w_i}ℓ_n = δ_ni (x_n, 1)`` with ``δ_ni = (W2[:, i]·r_n)·1[h_ni > 0]``, so
    ``Tr Cov∇_{u_i}ℓ = mean_n ‖r_n‖² a_ni² − ‖mean_n r_n a_ni‖²`` and
    ``Tr Cov∇_{w_i}ℓ = mean_n δ_ni²(‖x_n‖² + 1) − ‖mean_n δ_ni (x_n, 1)‖²`` — ``O(N·hidden·(d_in + d_out))``
    instead of ``N`` backward passes over all ``P`` parameters; the per-sample loss is a numpy forward pass.
    Identical to the engine's values up to round-off (``tests/test_balance_analysis.py``); everything else
    is the engine's class.
    """
    from .relu_net import ReLUNet

    class _ClosedFormTraces(ReLUNet):
        def _hidden(self, th, x):
            xb = np.broadcast_to(x, (th.shape[0],) + x.shape[1:])
            h = np.matmul(xb, th[:, self._w1].transpose(0, 2, 1))
            if self.bias:
                h = h + th[:, None, self._b1]
            return xb, h

        def _per_sample_loss(self, th, x, y):  # numpy forward pass (no torch threads at every record)
            _, h = self._hidden(th, x)
            f = np.matmul(np.maximum(h, 0.0), th[:, self._w2].transpose(0, 2, 1))
            return np.sum((f - y) ** 2, axis=2)

        def _centered_sq_sums(self, th, x, y, per_neuron=False):
            W2 = th[:, self._w2]  # (R, d_out, H)
            xb, h = self._hidden(th, x)
            a = np.maximum(h, 0.0)  # (R, N, H)
            r = 2.0 * (np.matmul(a, W2.transpose(0, 2, 1)) - y)  # (R, N, d_out)
            n = x.shape[1]
            gbar_u = np.matmul(r.transpose(0, 2, 1), a) / n  # (R, d_out, H)
            tu = np.einsum("rn,rnh->rh", np.sum(r * r, axis=2), a * a) / n - np.sum(gbar_u**2, axis=1)
            delta = np.matmul(r, W2) * (h > 0)  # (R, N, H)
            feat_sq = np.sum(xb * xb, axis=2) + (1.0 if self.bias else 0.0)  # (R, N)
            gbar_w = np.matmul(delta.transpose(0, 2, 1), xb) / n  # (R, H, d_in)
            tw = np.einsum("rn,rnh->rh", feat_sq, delta * delta) / n - np.sum(gbar_w**2, axis=2)
            if self.bias:
                tw = tw - (delta.mean(axis=1)) ** 2
            if per_neuron:
                return tu, tw
            return tu.sum(axis=1), tw.sum(axis=1)

    return _ClosedFormTraces(d_in, hidden, d_out, bias=bias)


def relu_balance_run(*, d_in: int, hidden: int, d_out: int, sigma: float, lr: float, batch_size: int, steps: int,
                     n_records: int, n_eval: int, seed: int, eval_seed: int, init_scale: float,
                     chunks: int = 1, progress=None) -> dict:
    """SGD on a ReLU net ``d_in → hidden → d_out`` with fresh samples of ``y = K x + ε`` (``K = eye``), recorded.

    Uses the engine: :class:`~symsgd_core.relu_net.ReLUNet` (``init_params(scale=init_scale)``, noise traces
    in closed form by :func:`fast_relu_net`) and
    :func:`~symsgd_core.dynamics.run_sgd` on :class:`~symsgd_core.data.GaussianData` (fresh samples each
    step), observables on a fixed evaluation set of ``n_eval`` points drawn with ``eval_seed``. The run
    is split into ``chunks`` calls that continue one random stream (same numbers as one call);
    ``progress(done, total)`` is called after each.

    Returns:
        dict of arrays: ``times, steps, G, u_sq, w_sq, tr_cov_u, tr_cov_w, loss (K,)``, ``grad_sq_u``,
        ``grad_sq_w`` (``‖∇_uL‖²``, ``‖∇_wL‖²`` on the evaluation set, ``(K,)``), ``trace_se (2,)``,
        ``neuron_tr_u, neuron_tr_w, neuron_G (hidden,)`` at the end, ``diverged`` (int); and ``params``
        (the arguments).
    Raises:
        ValueError: bad sizes (``n_records ≥ 2``, ``steps`` divisible into ``n_records − 1`` intervals and
            ``chunks``).
    """
    from .core.validation import as_generator, check_int, check_positive_int
    from .dynamics import run_sgd

    params = {"d_in": d_in, "hidden": hidden, "d_out": d_out, "sigma": sigma, "lr": lr, "batch_size": batch_size,
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
    net = fast_relu_net(d_in, hidden, d_out)
    data = GaussianData(k=1.0, sigma=sigma, d_in=d_in, d_out=d_out)
    eval_set = data.dataset(check_positive_int("n_eval", n_eval), seed=eval_seed)
    theta = net.init_params(1, seed=seed, scale=init_scale)
    rng = as_generator(seed)
    per_chunk = steps // chunks
    parts = []
    for c in range(chunks):
        tr = run_sgd(net, theta, data, lr=lr, steps=per_chunk, batch_size=batch_size, record_every=every, seed=rng,
                     eval_data=eval_set)
        parts.append(tr if c == 0 else _drop_first(tr))
        theta = tr.final_theta
        if progress is not None:
            progress(c + 1, chunks)
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
    return {**obs, "times": lr * step_nums.astype(float), "steps": step_nums,
            "grad_sq_u": np.sum(grads[:, net.u_index] ** 2, axis=1),
            "grad_sq_w": np.sum(grads[:, net.w_index] ** 2, axis=1),
            "trace_se": np.array(trace_standard_errors(net, final, x, y)),
            "neuron_tr_u": ntu, "neuron_tr_w": ntw, "neuron_G": net.per_neuron_G(final),
            "final_theta": final, "diverged": int(any(p.n_diverged for p in parts)), "params": params}


def _drop_first(tr):
    """A chunk's trajectory without its first record (it repeats the previous chunk's last one)."""
    from dataclasses import replace

    return replace(tr, steps=tr.steps[1:], times=tr.times[1:], theta=tr.theta[1:],
                   observables={k: v[1:] for k, v in tr.observables.items()})


def write_relu_balance(path, **overrides) -> dict:
    """Run :func:`relu_balance_run` with :data:`RELU_FIG2` (plus ``overrides``) and save it as ``.npz``.

    Returns:
        the run (as from :func:`relu_balance_run`).
    """
    import json

    params = {**RELU_FIG2, **overrides}
    run = relu_balance_run(**params)
    arrays = {k: np.asarray(v) for k, v in run.items() if k != "params"}
    np.savez_compressed(path, **arrays, params=np.array(json.dumps(run["params"])))
    return run


def load_relu_balance(path=None) -> dict:
    """Load a saved ReLU run (default: the package's ``data_files/relu_balance.npz``).

    Raises:
        ValueError: the file is missing (regenerate it with ``python -m symsgd_core.balance_analysis``).
    """
    import json
    import pathlib

    p = pathlib.Path(__file__).parent / "data_files" / RELU_DATA_FILE if path is None else pathlib.Path(path)
    if not p.exists():
        raise ValueError(f"{p} is missing; regenerate it with `python -m symsgd_core.balance_analysis`")
    with np.load(p, allow_pickle=False) as f:
        out = {k: f[k] for k in f.files if k != "params"}
        out["params"] = json.loads(str(f["params"]))
    out["diverged"] = int(out["diverged"])
    return out


def noise_vs_norm_claims(run: dict, lr: float, batch_size: int, window: float = 0.25, label: str = "",
                         norms: bool = True) -> list[CheckResult]:
    """The claims of §5 for one recorded run (a dict of ``(K,)`` series as from :func:`relu_balance_run`).

    1. :func:`noise_balance_check` over the last ``window`` of the run;
    2. (if ``norms``) noise balance is not norm balance: the final ``|log(‖u‖²/‖w‖²)|`` exceeds the
       window's ``|log(Tr_u/Tr_w)|`` plus the noise-balance tolerance (relation ``>=``).
    """
    nb = noise_balance_check(run["times"], run["G"], run["tr_cov_u"], run["tr_cov_w"], run["grad_sq_u"],
                             run["grad_sq_w"], lr, batch_size, tuple(run["trace_se"]), window, label=label)
    if not norms:
        return [nb]
    ratio = nb.details["trace_ratio"]
    norm_ratio = float(run["u_sq"][-1] / run["w_sq"][-1])
    out = make_result(
        "balance.norms_not_balanced" + (f"[{label}]" if label else ""),
        "Noise balance is not norm balance: at the end |log(‖u‖²/‖w‖²)| exceeds |log(Tr_u/Tr_w)| by more "
        "than the noise-balance tolerance",
        abs(math.log(norm_ratio)), abs(math.log(ratio)) + nb.tolerance,
        "the noise-balance check's trace ratio plus its tolerance", relation=">=",
        details={"norm_ratio": norm_ratio, "trace_ratio": ratio})
    return [nb, out]


def relu_balance_claims(run: dict, window: float = 0.25) -> list[CheckResult]:
    """:func:`noise_vs_norm_claims` for a ReLU run (from :func:`relu_balance_run` or :func:`load_relu_balance`)."""
    p = run["params"]
    return noise_vs_norm_claims(run, p["lr"], p["batch_size"], window,
                                label=f"relu {p['d_in']}→{p['hidden']}→{p['d_out']}")


def main(argv=None) -> int:
    """``python -m symsgd_core.balance_analysis [OUT.npz]``: regenerate the ReLU data file of Notebook 01."""
    import argparse
    import pathlib
    import time

    parser = argparse.ArgumentParser(description=main.__doc__)
    default = pathlib.Path(__file__).parent / "data_files" / RELU_DATA_FILE
    parser.add_argument("out", nargs="?", default=str(default))
    args = parser.parse_args(argv)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    run = write_relu_balance(args.out)
    print(f"wrote {args.out} in {time.perf_counter() - t0:.0f} s: {RELU_FIG2}; diverged={run['diverged']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
