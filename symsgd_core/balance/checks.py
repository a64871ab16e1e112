"""Proofs as code for the law of balance (Theorem 3.1, Corollary 3.3, Itô's lemma).

The checks follow the authors' proof sketch step by step:

1. ``balance.symmetry``: the infinitesimal symmetry ``θᵀB∇ℓ(θ, x) = 0`` for every sample;
2. ``balance.null_space``: ``θᵀBC(θ) = 0`` and ``sqrt(C) Bθ = 0`` (so the noise is rank-deficient);
3. ``balance.ito``: Itô's lemma for ``G = θᵀBθ`` term by term;
4. ``balance.theorem``: the paper's ``−T(uᵀC₁u − wᵀC₂w)`` equals ``T Tr[CB]`` equals
   ``T(Tr Cov∇_uℓ − Tr Cov∇_wℓ)``;
5. ``balance.g_is_ode``: over one short SDE step ``Var ΔG = O(dt²)`` but ``Var Δ‖u‖² = O(dt)``;
6. ``balance.discrete``: the exact one-step identities of discrete SGD;
7. ``balance.conservation``: gradient flow conserves ``G``; GD + isotropic noise does not;
8. ``balance.corollary``: SGD's ensemble ``E|u² − w²|`` decays at least at rate ``4Tσ² (+ 4γ)``.

Every check takes a ``seed`` and sizes (so tests can run it on many random instances) and
optional injectable pieces (models, formulas, dynamics) so that a test can feed it a loss
without the symmetry or a wrong formula and see it FAIL. Each returns a list of
:class:`~symsgd_core.core.checking.CheckResult` (one row per claim or per model).

The symmetry checks run on the engine's models (:mod:`symsgd_core.balance.models`), its ReLU net
(:class:`~symsgd_core.balance.relu.ReLUNet`) and a bilinear attention score written in torch
(:func:`~symsgd_core.balance.attention.attention_score_model`, same per-sample interface).

Round-off tolerances (``roundoff_tolerance``): a residual that is exactly zero in real arithmetic
is compared with ``64 · n · eps`` times the *sum of the absolute values of the terms* that
cancel, ``n`` being the number of summed terms (parameters ``P`` plus samples ``N``). Quantities
obtained through a matrix square root (``sqrt(C)`` by eigendecomposition) are only accurate to
the square root of that (``eigh`` is backward stable: it returns the exact decomposition of
``C + E`` with ``‖E‖ ≤ c·P·eps·‖C‖``, and ``sqrt`` maps an eigenvalue error ``δ`` to ``sqrt(δ)``).
Monte-Carlo tolerances (``mc_tolerance``) are ``Z_MC = 4`` standard errors (:data:`~symsgd_core.core.conventions.Z_MC`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.checking import CheckResult, make_result, mc_tolerance, register, roundoff_tolerance
from ..core.conventions import Z_MC
from ..core.conventions import temperature as sgd_temperature
from ..core.seeding import stream
from ..core.validation import check_array, check_positive, check_positive_int
from .attention import attention_score_model
from .data import GaussianData
from .law import corollary_bound, corollary_rate, scalar_step_factor
from .models import DiagonalNet, Rank1LinearModel, ScalarModel
from .relu import ReLUNet

__all__ = [
    "Instance",
    "check_conservation",
    "check_corollary_decay",
    "check_discrete_identity",
    "check_g_is_ode",
    "check_ito_terms",
    "check_null_space",
    "check_symmetry_per_sample",
    "check_theorem_forms",
    "paper_c_matrices",
    "symmetric_instances",
]

_RO_SOURCE = "float64 round-off: 64·n·eps × (sum of |terms| that cancel), n = {n} summed terms ({what})"


# ====================================================================== random instances


@dataclass(frozen=True)
class Instance:
    """One model with random parameters and data: what the symmetry checks run on.

    Attributes:
        label: short name shown in result names, e.g. ``"scalar"``.
        model: an engine model or a :class:`~symsgd_core.balance.attention.TorchSymmetricLoss`.
        theta: ``(R, P)`` parameters (R random points).
        x, y: ``N`` samples in the model's data layout.
    """

    label: str
    model: object
    theta: np.ndarray
    x: np.ndarray
    y: np.ndarray


def symmetric_instances(seed=0, *, n_samples: int = 12, runs: int = 3, d_in: int = 3, d_out: int = 2,
                        width: int = 3, hidden: int = 4, d_attn: int = 3, k_attn: int = 2,
                        weight_decay: float = 0.0, theta_scale: float = 1.0,
                        include_torch: bool = True) -> list[Instance]:
    """Random instances of every symmetric model: parameters ``θ ~ theta_scale·N(0, I)``, Gaussian data.

    Models: ``ScalarModel``, ``Rank1LinearModel(d_in, d_out)``, ``DiagonalNet(width, depth=1)``
    and ``DiagonalNet(width, depth=2)`` (with ``weight_decay``), and, if ``include_torch``, the ReLU net
    ``ReLUNet(d_in, hidden, d_out)`` (no weight decay) and :func:`~symsgd_core.balance.attention.attention_score_model`
    ``(d_attn, k_attn)`` plus its rank-1 case ``k = 1`` (torch). Teacher slopes, noise levels and teacher
    matrices are random too. The ReLU net's parameters are drawn in the order ``W2, W1, b1`` (biases made
    positive, so that some neurons are active) and laid out as the net's ``θ``.

    Returns:
        A list of :class:`Instance`, deterministic given ``seed``.
    """
    rng = stream(seed)
    n = check_positive_int("n_samples", n_samples)
    R = check_positive_int("runs", runs)
    scale = check_positive("theta_scale", theta_scale)

    def theta(P):
        return scale * rng.standard_normal((R, P))

    def scalar_data():
        return GaussianData(k=rng.normal(), sigma=rng.uniform(0.2, 1.5)).sample(n, rng)

    out = [Instance("scalar", ScalarModel(weight_decay), theta(2), *scalar_data())]
    rank1 = Rank1LinearModel(d_in, d_out, weight_decay)
    teacher = rng.standard_normal((rank1.d_out, rank1.d_in))
    xr, yr = GaussianData(sigma=rng.uniform(0.2, 1.5), d_in=rank1.d_in, d_out=rank1.d_out,
                          teacher=teacher).sample(n, rng)
    if rank1.d_in == 1 and rank1.d_out == 1:  # GaussianData returns 1-D arrays in the scalar case
        xr, yr = xr[:, None], yr[:, None]
    out.append(Instance("rank1_linear", rank1, theta(rank1.n_params), xr, yr))
    for depth in (1, 2):
        net = DiagonalNet(width, depth=depth, weight_decay=weight_decay)
        out.append(Instance(f"diagonal_depth{depth}", net, theta(net.n_params), *scalar_data()))
    if include_torch:
        relu = ReLUNet(d_in, hidden, d_out)
        xs = rng.standard_normal((n, relu.d_in))
        ys = xs @ rng.standard_normal((relu.d_in, relu.d_out)) + 0.5 * rng.standard_normal((n, relu.d_out))
        th = theta(relu.n_params)  # drawn as (W2, W1, b1)
        th[:, relu.n_params - hidden:] = np.abs(th[:, relu.n_params - hidden:])  # positive biases: some neurons active
        n2, n1 = relu.d_out * hidden, hidden * relu.d_in
        th = np.concatenate([th[:, n2:n2 + n1], th[:, n2 + n1:], th[:, :n2]], axis=1)  # → (W1, b1, W2)
        out.append(Instance("relu_layer", relu, th, xs, ys))
        for k in sorted({k_attn, 1}):
            att = attention_score_model(d_attn, k)
            xz = rng.standard_normal((n, att.x_dim))
            ya = rng.standard_normal((n, 1))
            out.append(Instance(f"attention_k{k}", att, theta(att.n_params), xz, ya))
    return out


# ====================================================================== numerical helpers


def _ratio(num, den) -> np.ndarray:
    """``|num| / den`` with ``0/0 = 0`` and ``x/0 = inf`` (a residual where no term exists)."""
    num = np.abs(np.asarray(num, dtype=float))
    den = np.asarray(den, dtype=float)
    safe = np.where(den > 0, den, 1.0)
    return np.where(den > 0, num / safe, np.where(num > 0, np.inf, 0.0))


def _sqrt_psd(C: np.ndarray) -> np.ndarray:
    """Symmetric square root of PSD matrices ``(..., P, P)`` by eigendecomposition (eigenvalues < 0 clipped)."""
    lam, V = np.linalg.eigh(0.5 * (C + np.swapaxes(C, -1, -2)))
    return np.einsum("...ik,...k,...jk->...ij", V, np.sqrt(np.clip(lam, 0.0, None)), V)


def _centered_abs_moment(g: np.ndarray) -> np.ndarray:
    """``S_jk = mean_n (|g_nj| + |ḡ_j|)(|g_nk| + |ḡ_k|)``: the round-off scale of ``C_jk``; ``(R, P, P)``."""
    a = np.abs(g) + np.abs(g.mean(axis=1, keepdims=True))
    return np.einsum("rnp,rnq->rpq", a, a) / g.shape[1]


def _instances_or_default(instances, seed, sizes, **defaults):
    if instances is not None:
        return list(instances)
    return symmetric_instances(seed, **{**defaults, **sizes})


def _worst(values: dict) -> tuple[str, float]:
    label = max(values, key=lambda k: values[k])
    return label, float(values[label])


# ====================================================================== 1. per-sample symmetry


@register("balance.symmetry")
def check_symmetry_per_sample(seed: int = 0, *, instances: Sequence[Instance] | None = None,
                              **sizes) -> list[CheckResult]:
    """Check 1: ``θᵀB∇ℓ(θ, x) = 0`` for every sample and every model (one row per model).

    For models with several elementary symmetries (a ReLU layer neuron by neuron, a diagonal
    net path by path, attention head column by column) every pair's ``B_p`` is tested as well
    as the global ``B``. Measured: ``max |Σ_j s_j θ_j ∂ℓ/∂θ_j| / Σ_j |θ_j ∂ℓ/∂θ_j|`` over runs,
    samples and pairs.

    Args:
        seed: seed of the random instances.
        instances: optional list of :class:`Instance` (e.g. a loss without the symmetry).
        **sizes: forwarded to :func:`symmetric_instances`.
    """
    results = []
    for inst in _instances_or_default(instances, seed, sizes):
        m = inst.model
        g = m.per_sample_grad(inst.theta, inst.x, inst.y)  # (R, N, P)
        blocks = [(m.u_index, m.w_index)] + list(m.pairs)
        worst, worst_block = 0.0, 0
        for b, (u, w) in enumerate(blocks):
            tu = inst.theta[:, None, u] * g[:, :, u]
            tw = inst.theta[:, None, w] * g[:, :, w]
            res = tu.sum(axis=2) - tw.sum(axis=2)
            den = np.abs(tu).sum(axis=2) + np.abs(tw).sum(axis=2)
            r = float(np.max(_ratio(res, den)))
            if not r <= worst:  # also catches NaN
                worst, worst_block = r, b
        P = m.n_params
        results.append(make_result(
            f"balance.symmetry[{inst.label}]",
            "θᵀJ∇ℓ(θ, x) = 0 for every sample x and every symmetry pair: the infinitesimal rescaling "
            f"symmetry Σᵢ uᵢ∂ℓ/∂uᵢ = Σⱼ wⱼ∂ℓ/∂wⱼ ({m.name})",
            worst, roundoff_tolerance(1.0, P),
            _RO_SOURCE.format(n=P, what="the P parameters") + "; measured is the relative residual",
            details={"model": m.name, "n_params": P, "n_pairs": len(m.pairs), "runs": int(inst.theta.shape[0]),
                     "n_samples": int(g.shape[1]), "worst_block": worst_block}))
    return results


# ====================================================================== 2. null space of C


@register("balance.null_space")
def check_null_space(seed: int = 0, *, instances: Sequence[Instance] | None = None, **sizes) -> list[CheckResult]:
    """Check 2: ``θᵀBC(θ) = 0`` and ``sqrt(C) Bθ = 0`` (``sqrt`` by eigendecomposition).

    Two rows, each the worst over all models. Row 1 measures
    ``max_k |(θᵀBC)_k| / (|θ|ᵀ S)_k`` with ``S_jk = mean_n(|g_nj| + |ḡ_j|)(|g_nk| + |ḡ_k|)``, the
    sum of absolute terms. Row 2 measures ``‖sqrt(C) Bθ‖ / sqrt(‖θ‖²‖C‖₂ + ‖θ‖‖|θ|ᵀS‖)``:
    ``‖sqrt(C)Bθ‖² = θᵀB(C + E)₊Bθ ≤ ‖θᵀBC‖‖θ‖ + 2‖E‖‖θ‖²`` for the backward error ``E`` of
    ``eigh``, so it is bounded by the square root of a round-off tolerance.
    """
    rel_c, rel_sqrt, n_terms = {}, {}, {}
    for inst in _instances_or_default(instances, seed, sizes):
        m, th = inst.model, inst.theta
        g = m.per_sample_grad(th, inst.x, inst.y)
        C = m.noise_cov(th, inst.x, inst.y)  # (R, P, P), the engine's C
        Bth = th * m.balance_signs()
        S = _centered_abs_moment(g)
        scale = np.einsum("rp,rpq->rq", np.abs(th), S)  # (R, P)
        rel_c[inst.label] = float(np.max(_ratio(np.einsum("rp,rpq->rq", Bth, C), scale)))
        root = _sqrt_psd(C)
        num = np.linalg.norm(np.einsum("rpq,rq->rp", root, Bth), axis=1)
        nth = np.linalg.norm(th, axis=1)
        den = np.sqrt(nth**2 * np.linalg.norm(C, ord=2, axis=(1, 2)) + nth * np.linalg.norm(scale, axis=1))
        rel_sqrt[inst.label] = float(np.max(_ratio(num, den)))
        n_terms[inst.label] = g.shape[1] + m.n_params
    n = max(n_terms.values())
    worst_c, worst_s = _worst(rel_c), _worst(rel_sqrt)
    tol_c = roundoff_tolerance(1.0, n)
    return [
        make_result(
            "balance.null_space.C",
            "θᵀJ C(θ) = E[(θᵀJ∇ℓ)∇ℓᵀ] − (θᵀJ∇𝓛)∇𝓛ᵀ = 0: the symmetry makes the gradient-noise covariance "
            "rank-deficient (all models)",
            worst_c[1], tol_c,
            _RO_SOURCE.format(n=n, what="N + P of the largest instance") + "; measured: relative residual",
            details={"per_model": rel_c, "worst_model": worst_c[0]}),
        make_result(
            "balance.null_space.sqrtC",
            "sqrt(C) Jθ = 0: Jθ lies in the null space of sqrt(C) (sqrt by eigendecomposition, all models)",
            worst_s[1], float(np.sqrt(2.0 * tol_c)),
            f"sqrt(2·64·n·eps), n = {n}: eigh is backward stable (‖E‖ ≤ 64·P·eps·‖C‖) and the square root "
            "turns an eigenvalue error δ into sqrt(δ); measured: ‖sqrt(C)Jθ‖ / sqrt(‖θ‖²‖C‖ + ‖θ‖‖|θ|ᵀS‖)",
            details={"per_model": rel_sqrt, "worst_model": worst_s[0]}),
    ]


# ====================================================================== 3. Itô's lemma term by term


@register("balance.ito")
def check_ito_terms(seed: int = 0, *, temperature: float = 0.5, weight_decay: float = 0.05,
                    instances: Sequence[Instance] | None = None, rate_instances: Sequence[Instance] | None = None,
                    matrix_sqrt: Callable[[np.ndarray], np.ndarray] | None = None, **sizes) -> list[CheckResult]:
    """Check 3: Itô's lemma for ``G = θᵀBθ`` under ``dθ = −∇L dt + sqrt(TC) dW``, term by term.

    ``dG = (−2θᵀB∇L + ½Tr[Dᵀ(2B)D]) dt + 2θᵀB D dW`` with ``D = sqrt(TC)`` (eigendecomposition).
    Rows: the drift ``−2θᵀB∇L`` is zero; the noise coefficient ``2θᵀBD`` is zero; the Itô
    correction ``½Tr[Dᵀ(2B)D]`` equals ``T Tr[CB]``; and the engine's ``G_rate`` (the law of
    balance with weight decay) equals the Itô drift ``−2θᵀB∇(L + γ‖θ‖²) + T Tr[CB]`` computed here
    from ``grad`` and ``noise_cov`` (on the engine models with ``weight_decay``).

    Args:
        seed: seed of the random instances.
        temperature: ``T > 0``.
        weight_decay: ``γ`` of the engine models used for the ``G_rate`` row.
        instances: optional instances for the first three rows (no weight decay expected).
        rate_instances: optional instances for the ``G_rate`` row (models with ``G_rate``).
        matrix_sqrt: ``(…, P, P) -> (…, P, P)`` square root of PSD matrices (default: by ``eigh``);
            a test injects a wrong one.
        **sizes: forwarded to :func:`symmetric_instances`.
    """
    T = check_positive("temperature", temperature)
    root_of = _sqrt_psd if matrix_sqrt is None else matrix_sqrt
    drift, noise, corr, n_terms, n_params = {}, {}, {}, {}, {}
    for inst in _instances_or_default(instances, seed, sizes):
        m, th = inst.model, inst.theta
        g = m.per_sample_grad(th, inst.x, inst.y)
        grad_L = m.grad(th, inst.x, inst.y)
        C = m.noise_cov(th, inst.x, inst.y)
        s = m.balance_signs()
        gamma = float(getattr(m, "weight_decay", 0.0))
        scale_drift = 2.0 * np.sum(np.abs(th) * (np.abs(g).mean(axis=1) + 2.0 * gamma * np.abs(th)), axis=1)
        drift[inst.label] = float(np.max(_ratio(-2.0 * np.sum(th * s * grad_L, axis=1), scale_drift)))
        D = root_of(T * C)
        noise_coef = 2.0 * np.einsum("rp,rpq->rq", th * s, D)
        S = _centered_abs_moment(g)
        scale = np.einsum("rp,rpq->rq", np.abs(th), S)
        nth = np.linalg.norm(th, axis=1)
        c_norm = np.linalg.norm(C, ord=2, axis=(1, 2))
        den = 2.0 * np.sqrt(T) * np.sqrt(nth**2 * c_norm + nth * np.linalg.norm(scale, axis=1))
        noise[inst.label] = float(np.max(_ratio(np.linalg.norm(noise_coef, axis=1), den)))
        ito_corr = 0.5 * np.einsum("rpi,p,rpi->r", D, 2.0 * s, D)  # ½ Tr[Dᵀ ∇²G D], ∇²G = 2B
        tr_cb = T * np.einsum("rpp,p->r", C, s)
        corr[inst.label] = float(np.max(_ratio(ito_corr - tr_cb, T * m.n_params * c_norm)))
        n_terms[inst.label] = g.shape[1] + m.n_params
        n_params[inst.label] = m.n_params
    n, P = max(n_terms.values()), max(n_params.values())
    tol = roundoff_tolerance(1.0, n)
    results = [
        make_result("balance.ito.drift",
                    "−2θᵀJ∇𝓛 = 0: the gradient part of the Itô drift of G = θᵀJθ vanishes (mean of the per-sample "
                    "identity)",
                    _worst(drift)[1], tol,
                    _RO_SOURCE.format(n=n, what="N + P") + "; measured: |2θᵀJ∇𝓛| / 2|θ|ᵀmean|∇ℓ|",
                    details={"per_model": drift}),
        make_result("balance.ito.noise",
                    "2θᵀJ sqrt(TC) = 0: the Itô noise coefficient of G vanishes, so dG has no dW term",
                    _worst(noise)[1], float(np.sqrt(2.0 * tol)),
                    f"sqrt(2·64·n·eps), n = {n} (eigh backward error through a square root, as in "
                    "balance.null_space.sqrtC)", details={"per_model": noise}),
        make_result("balance.ito.correction",
                    "½Tr[𝐃ᵀ(∇²G)𝐃] = T·Tr[CJ]: the Itô correction of G, with ∇²G = 2J and 𝐃 = sqrt(TC)",
                    _worst(corr)[1], roundoff_tolerance(1.0, 3 * P),
                    f"64·3P·eps, P = {P}: 𝐃𝐃ᵀ = T(C + E)₊ with ‖E‖ ≤ 64·P·eps‖C‖, |Tr[JX]| ≤ P‖X‖ "
                    "(×3: E, the clipped negative part, the product's rounding); measured: |diff| / (T·P·‖C‖₂)",
                    details={"per_model": corr}),
    ]
    # the engine's G_rate against the Itô drift computed here
    if rate_instances is None:
        rate_instances = symmetric_instances(seed, **{**sizes, "weight_decay": weight_decay, "include_torch": False})
    rate, n_rate = {}, 1
    for inst in rate_instances:
        m, th = inst.model, inst.theta
        g = m.per_sample_grad(th, inst.x, inst.y)
        C = m.noise_cov(th, inst.x, inst.y)
        s = m.balance_signs()
        gamma = float(m.weight_decay)
        ito = -2.0 * np.sum(th * s * m.grad(th, inst.x, inst.y), axis=1) + T * np.einsum("rpp,p->r", C, s)
        engine = m.G_rate(th, inst.x, inst.y, T)
        S = _centered_abs_moment(g)
        scale = (2.0 * np.sum(np.abs(th) * (np.abs(g).mean(axis=1) + 2.0 * gamma * np.abs(th)), axis=1)
                 + T * np.einsum("rpp->r", S) + 4.0 * gamma * np.sum(th * th, axis=1))
        rate[inst.label] = float(np.max(_ratio(engine - ito, scale)))
        n_rate = max(n_rate, g.shape[1] + m.n_params)
    results.append(make_result(
        "balance.ito.G_rate",
        f"G_rate = T(TrCov∇_uℓ − TrCov∇_wℓ) − 4γG equals the Itô drift −2θᵀJ∇(𝓛 + γ‖θ‖²) + T·Tr[CJ] "
        f"(engine's law of balance, γ = {weight_decay:g})",
        _worst(rate)[1], roundoff_tolerance(1.0, n_rate),
        _RO_SOURCE.format(n=n_rate, what="N + P") + "; measured: relative difference",
        details={"per_model": rate}))
    return results


# ====================================================================== 4. Theorem 3.1, both forms


def paper_c_matrices(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paper's ``C₁, C₂`` from per-sample lifted gradients ``A`` of shape ``(R, N, du, dw)``.

    With ``A = ∂ℓ̃/∂M`` at ``M = u wᵀ`` (so ``∂ℓ/∂u = A w``, ``∂ℓ/∂w = Aᵀu``):
    ``C₁ = E[AAᵀ] − E[A]E[A]ᵀ`` (``du × du``) and ``C₂ = E[AᵀA] − E[A]ᵀE[A]`` (``dw × dw``), so that
    ``uᵀC₁u = Tr Cov ∇_wℓ`` and ``wᵀC₂w = Tr Cov ∇_uℓ``. The paper writes ``C₁ = E[AᵀA] − …`` for
    its transposed matrix (its ``A`` is ``dw × du``, ``∂ℓ/∂w = A u``): the same matrices.

    Returns:
        ``(C₁ (R, du, du), C₂ (R, dw, dw))``.
    """
    Ab = A.mean(axis=1)
    C1 = np.einsum("rnij,rnkj->rik", A, A) / A.shape[1] - np.einsum("rij,rkj->rik", Ab, Ab)
    C2 = np.einsum("rnji,rnjk->rik", A, A) / A.shape[1] - np.einsum("rji,rjk->rik", Ab, Ab)
    return C1, C2


def _has_lifting(model) -> bool:
    return hasattr(model, "lifted_grad") and getattr(model, "lifted_loss_fn", True) is not None


@register("balance.theorem")
def check_theorem_forms(seed: int = 0, *, temperature: float = 0.5,
                        c_matrices: Callable[[np.ndarray], tuple] | None = None,
                        instances: Sequence[Instance] | None = None, **sizes) -> list[CheckResult]:
    """Check 4: Theorem 3.1's forms agree: ``T Tr[CB] = −T(uᵀC₁u − wᵀC₂w) = T(TrCov∇_uℓ − TrCov∇_wℓ)``.

    Row 1 (paper form) runs on the models with a rank-1 lifting (``lifted_grad``: scalar, rank-1
    linear, attention with one head column); row 2 (trace form, the engine's ``noise_traces``)
    on every model. ``T Tr[CB]`` uses the engine's ``noise_cov``.

    Args:
        seed: seed of the random instances.
        temperature: ``T > 0``.
        c_matrices: the formula ``A -> (C₁, C₂)`` (default :func:`paper_c_matrices`); a test
            injects a wrong one.
        instances: optional instances.
        **sizes: forwarded to :func:`symmetric_instances`.
    """
    T = check_positive("temperature", temperature)
    formula = paper_c_matrices if c_matrices is None else c_matrices
    paper, traces, n_paper, n_trace, errors = {}, {}, 1, 1, {}
    for inst in _instances_or_default(instances, seed, sizes):
        m, th = inst.model, inst.theta
        g = m.per_sample_grad(th, inst.x, inst.y)
        s = m.balance_signs()
        tr_cb = T * np.einsum("rpp,p->r", m.noise_cov(th, inst.x, inst.y), s)
        S_diag = np.einsum("rpp->rp", _centered_abs_moment(g))
        scale_tr = T * np.sum(S_diag * np.abs(s), axis=1)
        tu, tw = m.noise_traces(th, inst.x, inst.y)
        traces[inst.label] = float(np.max(_ratio(T * (tu - tw) - tr_cb, scale_tr)))
        n_trace = max(n_trace, g.shape[1] + m.n_params)
        if not _has_lifting(m):
            continue
        A = m.lifted_grad(th, inst.x, inst.y)  # (R, N, du, dw)
        u, w = th[:, m.u_index], th[:, m.w_index]
        a = np.abs(A) + np.abs(A.mean(axis=1, keepdims=True))
        scale = scale_tr + T * (np.einsum("ri,rnij,rnkj,rk->r", np.abs(u), a, a, np.abs(u))
                                + np.einsum("ri,rnji,rnjk,rk->r", np.abs(w), a, a, np.abs(w))) / A.shape[1]
        try:
            C1, C2 = formula(A)
            form = -T * (np.einsum("ri,rij,rj->r", u, C1, u) - np.einsum("ri,rij,rj->r", w, C2, w))
            paper[inst.label] = float(np.max(_ratio(form - tr_cb, scale)))
        except ValueError as exc:  # a wrong formula with the wrong shapes
            paper[inst.label], errors[inst.label] = float("inf"), f"{type(exc).__name__}: {exc}"
        n_paper = max(n_paper, g.shape[1] + A.shape[2] * A.shape[3] + m.n_params)
    if not paper:
        raise ValueError("no instance has a rank-1 lifting (lifted_grad); cannot test the paper's form")
    return [
        make_result(
            "balance.theorem.paper_form",
            "T·Tr[CJ] = −T(uᵀC₁u − wᵀC₂w) (Thm 3.1, paper's form), A = ∂ℓ̃/∂M (du×dw, M = uwᵀ, ∂ℓ/∂u = Aw, "
            "∂ℓ/∂w = Aᵀu), C₁ = E[AAᵀ]−E[A]E[A]ᵀ, C₂ = E[AᵀA]−E[A]ᵀE[A] (= the paper's C₁ = E[AᵀA]−… "
            "for its transposed A)",
            _worst(paper)[1], roundoff_tolerance(1.0, n_paper),
            _RO_SOURCE.format(n=n_paper, what="N + du·dw + P") + "; measured: relative difference",
            details={"per_model": paper, **({"errors": errors} if errors else {})}),
        make_result(
            "balance.theorem.trace_form",
            "T·Tr[CJ] = T(Tr Cov∇_uℓ − Tr Cov∇_wℓ) (Thm 3.1, trace form; engine's noise_traces, all models)",
            _worst(traces)[1], roundoff_tolerance(1.0, n_trace),
            _RO_SOURCE.format(n=n_trace, what="N + P") + "; measured: relative difference",
            details={"per_model": traces}),
    ]


# ====================================================================== 6. exact discrete identities



@register("balance.discrete")
def check_discrete_identity(seed: int = 0, *, lr: float = 0.1, batch_size: int = 4, runs: int = 200,
                            n_samples: int = 32, factor: Callable | None = None,
                            instances: Sequence[Instance] | None = None, **sizes) -> list[CheckResult]:
    """Check 6: exact identities of ONE discrete SGD step ``θ' = θ − η ∇L_B(θ)`` (any minibatch ``B``).

    Row 1, scalar model ``ℓ = (uwx − y)²`` with ``runs`` random ``(u, w)`` and minibatches:
    ``u'² − w'² = (1 − η²ḡ_B²)(u² − w²)``, ``ḡ_B = mean_B ∂ℓ̃/∂(uw)`` (engine ``lifted_grad``).
    Row 2, every model: ``Δ(‖u‖² − ‖w‖²) = η²(‖∇_u L_B‖² − ‖∇_w L_B‖²)`` (because ``θᵀB∇L_B = 0``).
    So discrete GD drifts ``G`` at ``O(η²)``; only gradient flow conserves it.

    Args:
        seed: seed of parameters, data and minibatches.
        lr: ``η > 0``.
        batch_size: ``S``.
        runs: number of random ``(θ, minibatch)`` draws per model.
        n_samples: training-set size ``N`` the minibatches are drawn from.
        factor: ``factor(lr, g_bar) -> (R,)``, default :func:`scalar_step_factor` (inject a wrong one).
        instances: optional instances for row 2 (default: every model, ``runs`` parameter draws).
        **sizes: forwarded to :func:`symmetric_instances`.
    """
    eta = check_positive("lr", lr)
    S = check_positive_int("batch_size", batch_size)
    R = check_positive_int("runs", runs)
    N = check_positive_int("n_samples", n_samples)
    factor = scalar_step_factor if factor is None else factor
    rng = stream(seed)
    # ---- row 1: scalar model, exact factor
    model = ScalarModel()
    data = GaussianData(k=rng.normal(), sigma=rng.uniform(0.2, 1.5)).dataset(N, rng)
    th = rng.standard_normal((R, 2)) * rng.uniform(0.2, 3.0, size=(R, 1))
    xb, yb = data.minibatches(rng, R, S)
    A = model.lifted_grad(th, xb, yb)[:, :, 0, 0]  # (R, S): ∂ℓ̃/∂(uw) per sample
    g_bar = A.mean(axis=1)
    th_new = th - eta * model.grad(th, xb, yb)
    lhs = model.G(th_new)
    rhs = np.asarray(factor(eta, g_bar), dtype=float) * model.G(th)
    a = np.abs(th).sum(axis=1)
    h = eta * np.abs(A).mean(axis=1)
    rel1 = float(np.max(_ratio(lhs - rhs, a**2 * (1.0 + h) ** 2)))
    n1 = S + 8
    results = [make_result(
        "balance.discrete.scalar",
        "u'² − w'² = (1 − η²ḡ²)(u² − w²) for one SGD step of ℓ = (uwx − y)², any minibatch, "
        f"ḡ = the mini-batch mean of ∂ℓ̃/∂(uw) (η = {eta:g}, S = {S}, {R} draws)",
        rel1, roundoff_tolerance(1.0, n1),
        _RO_SOURCE.format(n=n1, what="S + 8") + "; measured: |diff| / (|u|+|w|)²(1 + η·(mini-batch mean of "
                                                "|∂ℓ̃/∂(uw)|))²",
        details={"lr": eta, "batch_size": S, "runs": R,
                 "max_eta2_gbar2": float(np.max(eta**2 * g_bar**2))})]
    # ---- row 2: every model, Δ(‖u‖² − ‖w‖²) = η²(‖∇_u‖² − ‖∇_w‖²)
    rel2, n2 = {}, 1
    insts = _instances_or_default(instances, rng, sizes, runs=R, n_samples=N)
    for inst in insts:
        m, th = inst.model, inst.theta
        idx = rng.integers(0, inst.x.shape[0], size=(th.shape[0], S))
        xb, yb = inst.x[idx], inst.y[idx]
        gs = m.per_sample_grad(th, xb, yb)
        g = m.grad(th, xb, yb)
        th_new = th - eta * g
        s = m.balance_signs()
        dG = m.G(th_new) - m.G(th)
        pred = eta**2 * np.sum(s * g * g, axis=1)
        scale = (np.sum(th * th, axis=1) + np.sum(th_new * th_new, axis=1)
                 + 2.0 * eta * np.sum(np.abs(th) * np.abs(gs).mean(axis=1), axis=1) + eta**2 * np.sum(g * g, axis=1))
        rel2[inst.label] = float(np.max(_ratio(dG - pred, scale)))
        n2 = max(n2, m.n_params + S)
    results.append(make_result(
        "balance.discrete.general",
        "Δ(‖u‖² − ‖w‖²) = η²(‖∇ᵤL‖² − ‖∇_wL‖²) (L: the mini-batch loss) for one SGD step, any symmetric model and "
        "minibatch "
        f"(η = {eta:g}, S = {S})",
        _worst(rel2)[1], roundoff_tolerance(1.0, n2),
        _RO_SOURCE.format(n=n2, what="P + S") + "; measured: |diff| / (‖θ‖² + ‖θ'‖² + 2η|θ|ᵀmean|∇ℓ| + η²‖∇𝓛‖² (𝓛: "
                                                "the mini-batch loss))",
        details={"per_model": rel2}))
    return results


# ====================================================================== 5. G is an ODE (no diffusion)


def _engine_sde_step(model, theta0, data, temperature, dt, runs, seed) -> np.ndarray:
    """One Euler–Maruyama step of the engine's :func:`~symsgd_core.balance.dynamics.run_sde` for ``runs`` runs."""
    from .dynamics import run_sde

    return run_sde(model, theta0, data, temperature=temperature, dt=dt, steps=1, runs=runs, seed=seed).theta[-1]


def _ls_slope(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Least-squares slopes of ``Y[..., k]`` against ``x[k]``."""
    xc = x - x.mean()
    return np.sum((Y - Y.mean(axis=-1, keepdims=True)) * xc, axis=-1) / np.sum(xc * xc)


@register("balance.g_is_ode")
def check_g_is_ode(seed: int = 0, *, runs: int = 4000, dts: Sequence[float] = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2),
                   temperature: float = 0.5, n_samples: int = 16, n_boot: int = 200, model=None,
                   sde_step: Callable | None = None) -> list[CheckResult]:
    """Check 5: over many independent short SDE steps from one ``θ``, ``G`` has no diffusion term.

    For each ``dt`` in ``dts``, ``runs`` independent Euler–Maruyama steps from the same ``θ₀``
    (engine :func:`~symsgd_core.balance.dynamics.run_sde`, same seed for every ``dt``: common random
    numbers). Rows: the log-log slope of ``Var ΔG`` against ``dt`` is 2 (``Var ΔG = O(dt²)``); the
    slope of ``Var Δ‖u‖²`` is 1 (a ``dW`` term); ``mean ΔG/dt = T Tr[CB]`` at the smallest ``dt``.

    Tolerances: ``z = 4`` bootstrap standard errors (``n_boot`` resamples of the runs, jointly over
    ``dt``) plus the computed discretisation bias. For one EM step (``D = sqrt(TC)``, exact):
    ``Var ΔG = 2T²dt² Tr[(BC)²] + 4T dt³ ∇LᵀBCB∇L`` (given ``θᵀBC = 0``),
    ``Var Δ‖u‖² = 4T dt b_uᵀC_uu b_u + 2T²dt² Tr[C_uu²]`` (``b_u = u − dt∇_uL``),
    ``E ΔG/dt = T Tr[CB] + dt ∇LᵀB∇L``; the bias is the slope of these curves minus 2 (resp. 1),
    and ``dt·|∇LᵀB∇L|`` for the mean.

    Args:
        seed: seed of the data, ``θ₀`` and the SDE noise.
        runs: independent steps per ``dt``.
        dts: at least 3 step sizes.
        temperature: ``T > 0``.
        n_samples: training-set size ``N``.
        n_boot: bootstrap resamples.
        model: default ``Rank1LinearModel(3, 2)``; inject e.g. a model without the symmetry.
        sde_step: ``(model, theta0 (P,), data, T, dt, runs, seed) -> theta1 (runs, P)``; default the
            engine's ``run_sde``; inject e.g. an isotropic-noise step.
    """
    R = check_positive_int("runs", runs)
    T = check_positive("temperature", temperature)
    dts = check_array("dts", dts, ndim=1)
    if dts.size < 3 or np.any(dts <= 0):
        raise ValueError(f"dts must hold at least 3 positive step sizes, got {dts.tolist()}")
    step = _engine_sde_step if sde_step is None else sde_step
    rng = stream(seed)
    model = Rank1LinearModel(3, 2) if model is None else model
    d_in, d_out = getattr(model, "d_in", 1), getattr(model, "d_out", 1)
    if isinstance(model, Rank1LinearModel):
        data = GaussianData(sigma=0.5, d_in=d_in, d_out=d_out,
                            teacher=rng.standard_normal((d_out, d_in))).dataset(n_samples, rng)
    else:
        data = GaussianData(k=1.0, sigma=0.5).dataset(n_samples, rng)
    theta0 = rng.standard_normal(model.n_params)
    theta0[model.u_index] *= 1.5  # unbalanced, so T·Tr[CB] is clearly non-zero
    theta0[model.w_index] *= 0.5
    noise_seed = int(rng.integers(2**31))
    th0 = theta0[None, :]
    s = model.balance_signs()
    u = model.u_index
    dG, du2 = [], []
    for dt in dts:
        th1 = np.asarray(step(model, theta0, data, T, float(dt), R, noise_seed), dtype=float)
        dG.append(model.G(th1) - model.G(th0)[0])
        du2.append(np.sum(th1[:, u] ** 2, axis=1) - np.sum(theta0[u] ** 2))
    dG, du2 = np.stack(dG, axis=1), np.stack(du2, axis=1)  # (R, K)
    # exact moments of one EM step at θ₀ (under the claim θᵀBC = 0)
    x, y = data.full()
    C = model.noise_cov(th0, x, y)[0]
    gL = model.grad(th0, x, y)[0]
    BC = s[:, None] * C
    Cuu = C[np.ix_(u, u)]
    var_G = 2 * T**2 * dts**2 * np.trace(BC @ BC) + 4 * T * dts**3 * float((s * gL) @ C @ (s * gL))
    bu = theta0[u][None, :] - dts[:, None] * gL[u][None, :]
    var_u = 4 * T * dts * np.einsum("ki,ij,kj->k", bu, Cuu, bu) + 2 * T**2 * dts**2 * np.trace(Cuu @ Cuu)
    logdt = np.log(dts)
    bias_G = abs(float(_ls_slope(logdt, np.log(var_G))) - 2.0)
    bias_u = abs(float(_ls_slope(logdt, np.log(var_u))) - 1.0)
    slope_G = float(_ls_slope(logdt, np.log(dG.var(axis=0))))
    slope_u = float(_ls_slope(logdt, np.log(du2.var(axis=0))))
    boot = stream(noise_seed + 1)
    idx = boot.integers(0, R, size=(n_boot, R))
    se_G = float(np.std(_ls_slope(logdt, np.log(dG[idx].var(axis=1))), ddof=1))
    se_u = float(np.std(_ls_slope(logdt, np.log(du2[idx].var(axis=1))), ddof=1))
    # mean drift at the smallest dt
    k0 = int(np.argmin(dts))
    rate = dG[:, k0] / dts[k0]
    tr_cb = T * float(np.sum(s * np.diag(C)))
    se_mean = float(rate.std(ddof=1) / np.sqrt(R))
    bias_mean = float(dts[k0] * abs(float((s * gL) @ gL)))
    mc = f"z = {Z_MC:g} bootstrap standard errors ({n_boot} resamples of {R} runs)"
    details = {"dts": dts.tolist(), "var_dG": dG.var(axis=0).tolist(), "var_du2": du2.var(axis=0).tolist(),
               "var_dG_theory": var_G.tolist(), "var_du2_theory": var_u.tolist(), "temperature": T, "runs": R}
    return [
        make_result(
            "balance.g_is_ode.var_G",
            "Var ΔG ∝ dt² (log-log slope 2) over one SDE step: G = ‖u‖² − ‖w‖² has no diffusion term",
            abs(slope_G - 2.0), mc_tolerance(se_G, Z_MC) + bias_G,
            f"{mc} + discretisation bias {bias_G:.2g} (slope of the exact EM variance curve − 2)",
            details={**details, "slope": slope_G, "se": se_G, "bias": bias_G}),
        make_result(
            "balance.g_is_ode.var_u2",
            "Var Δ‖u‖² ∝ dt (log-log slope 1) over one SDE step: ‖u‖² itself diffuses",
            abs(slope_u - 1.0), mc_tolerance(se_u, Z_MC) + bias_u,
            f"{mc} + discretisation bias {bias_u:.2g} (slope of the exact EM variance curve − 1)",
            details={"slope": slope_u, "se": se_u, "bias": bias_u}),
        make_result(
            "balance.g_is_ode.drift",
            f"E[ΔG]/dt = T·Tr[CJ] over one SDE step: the Itô correction is G's whole drift (T = {T:g}, "
            f"dt = {dts[k0]:g})",
            abs(float(rate.mean()) - tr_cb), mc_tolerance(se_mean, Z_MC) + bias_mean,
            f"z = {Z_MC:g} standard errors of the mean over {R} runs + EM bias dt·|∇𝓛ᵀJ∇𝓛| = {bias_mean:.2g}",
            details={"mean_dG_dt": float(rate.mean()), "T_Tr_CB": tr_cb, "se": se_mean}),
    ]


# ====================================================================== 7. conservation


def _engine_flow(model, theta0, data, t_end):
    from .dynamics import run_gradient_flow

    return run_gradient_flow(model, theta0, data, t_end=t_end, n_records=50)


def _engine_langevin(model, theta0, data, lr, steps, runs, seed):
    from .dynamics import langevin_noise_std, run_langevin

    s = langevin_noise_std(model, theta0[0], data, lr, batch_size=1)
    return run_langevin(model, theta0, data, lr=lr, noise_std=s, steps=steps, record_every=max(steps // 10, 1),
                        seed=seed)


@register("balance.conservation")
def check_conservation(seed: int = 0, *, t_end: float = 5.0, runs: int = 400, lr: float = 0.01,
                       steps: int = 2000, n_samples: int = 64, models: Sequence | None = None,
                       flow: Callable | None = None, noisy: Callable | None = None) -> list[CheckResult]:
    """Check 7: gradient flow conserves ``G``; GD + isotropic noise does not (``E|G|`` grows).

    Row 1: ``max_t |G(t) − G(0)|`` under the engine's ``run_gradient_flow`` (DOP853) for random
    starts of every engine model, against the integrator's stated accuracy: with the RMS error norm
    ``≤ 1`` per step, each component's local error is ``≤ sqrt(RP)(atol + rtol·max|θ|)``, at most
    ``nfev/12`` steps (DOP853 uses 12 evaluations per step) accumulate, and
    ``|δG| ≤ 2‖θ‖‖δθ‖ + ‖δθ‖²``.
    Row 2: ``E|G(t)|`` of GD + isotropic noise (``run_langevin`` with the kick size that matches
    SGD's temperature at the start) on the scalar model, started balanced (``G = 0`` at
    ``(u, w) = (1, 1)``), grows: ``E|G(t_end)| − E|G(0)| ≥ 4`` standard errors.

    Args:
        seed: seed of starts, data and noise.
        t_end: flow duration.
        runs: runs of the noisy dynamics.
        lr, steps: step size and number of steps of the noisy dynamics (``t = lr·steps``).
        n_samples: training-set size.
        models: models for row 1 (default: the engine models, no weight decay); inject e.g. one with
            weight decay or without the symmetry.
        flow: ``(model, theta0 (R, P), data, t_end) -> Trajectory``; default ``run_gradient_flow``.
        noisy: ``(model, theta0 (R, P), data, lr, steps, runs, seed) -> Trajectory``; default
            ``run_langevin``; inject e.g. SGD (which keeps ``G = 0``).
    """
    t_end = check_positive("t_end", t_end)
    R = check_positive_int("runs", runs)
    rng = stream(seed)
    flow = _engine_flow if flow is None else flow
    noisy = _engine_langevin if noisy is None else noisy
    if models is None:
        models = [ScalarModel(), Rank1LinearModel(3, 2), DiagonalNet(3, depth=1), DiagonalNet(3, depth=2)]
    err, bound = {}, {}
    for m in models:
        if isinstance(m, Rank1LinearModel):
            gd = GaussianData(sigma=0.5, d_in=m.d_in, d_out=m.d_out, teacher=rng.standard_normal((m.d_out, m.d_in)))
        else:
            gd = GaussianData(k=1.0, sigma=0.5)
        data = gd.dataset(n_samples, rng)
        th0 = 0.7 * rng.standard_normal((4, m.n_params))
        traj = flow(m, th0, data, t_end)
        G = traj.observables["G"]
        label = f"{m.name}{getattr(m, 'depth', '')}"
        err[label] = float(np.max(np.abs(G - G[0])))
        thmax = float(np.max(np.abs(traj.theta)))
        nrm = float(np.max(np.linalg.norm(traj.theta, axis=2)))
        n_steps = max(int(traj.settings.get("nfev", 0)) / 12.0, 1.0)
        dth = n_steps * np.sqrt(traj.theta[0].size) * (traj.settings["atol"] + traj.settings["rtol"] * thmax) \
            * np.sqrt(m.n_params)
        bound[label] = float(2.0 * nrm * dth + dth**2 + roundoff_tolerance(nrm**2, m.n_params))
    worst = max(err, key=lambda k: err[k] / bound[k])
    results = [make_result(
        "balance.conservation.flow",
        f"G(t) = G(0) under gradient flow (T = 0, Noether): max_t |G(t) − G(0)| ≈ 0 for t ≤ {t_end:g}",
        err[worst], bound[worst],
        "DOP853 stated accuracy: ≤ nfev/12 steps × local error sqrt(RP)(atol + rtol·max|θ|) per component, "
        f"|δG| ≤ 2‖θ‖‖δθ‖ + ‖δθ‖² (worst model: {worst})",
        details={"error": err, "bound": bound})]
    # ---- GD + isotropic noise
    model = ScalarModel()
    data = GaussianData(k=1.0, sigma=1.0).dataset(n_samples, rng)
    th0 = np.tile([1.0, 1.0], (R, 1))
    traj = noisy(model, th0, data, lr, steps, R, int(rng.integers(2**31)))
    absG = np.abs(traj.observables["G"])  # (K, R)
    growth = float(absG[-1].mean() - absG[0].mean())
    se = float(absG[-1].std(ddof=1) / np.sqrt(R))
    floor = roundoff_tolerance(float(np.mean(np.sum(traj.theta[-1] ** 2, axis=1))), steps)
    results.append(make_result(
        "balance.conservation.isotropic_noise",
        f"E|G(t)| − E|G(0)| > 0 under GD + isotropic noise (SGD's temperature at the start, t = {lr * steps:g}): "
        "injected noise does not conserve G",
        growth, mc_tolerance(se, Z_MC) + floor,
        f"must exceed z = {Z_MC:g} standard errors of E|G(t)| over {R} runs + round-off floor 64·steps·eps·‖θ‖²",
        relation=">=",
        details={"times": traj.times.tolist(), "mean_abs_G": absG.mean(axis=1).tolist(), "runs": R}))
    return results


# ====================================================================== 8. Corollary 3.3



@register("balance.corollary")
def check_corollary_decay(seed: int = 0, *, runs: int = 1000, lr: float = 0.01, batch_size: int = 1,
                          t_end: float = 30.0, weight_decay: float = 0.01, n_records: int = 31,
                          theta0: Sequence[float] = (1.5, 0.5), data: GaussianData | None = None,
                          rate: Callable | None = None, target: Callable | None = None) -> list[CheckResult]:
    """Check 8: Corollary 3.3 for SGD on ``ℓ = (uwx − y)²`` with fresh Gaussian samples (engine ``run_sgd``).

    Default setting (the worked example of arXiv 2308.06671, Eq. 7 with k = σ = 1): ``x ~ N(0,1)``,
    ``y = x + ε``, ``σ = 1``, ``η = 0.01``, ``S = 1``, start ``(1.5, 0.5)``. Rows: (1) the ensemble mean of
    ``|u² − w²|`` stays below ``|G₀| exp(−4Tσ²t)`` at every record; (2) with weight decay ``γ`` below
    ``|G₀| exp(−(4Tσ² + 4γ)t)``; (3) the mean of ``v = uw`` ends at ``β₂/β₁ = 1`` up to the noise shift.

    Why the bound holds for discrete SGD too: one step gives exactly
    ``u'² − w'² = ((1 − 2ηγ)² − η²ḡ²)(u² − w²)`` and ``E ḡ² ≥ 4 g(v)/S ≥ 4Δ/(α₁S)``. Measured for
    rows 1–2: ``max_t (E|G|(t) − bound(t)) / SE(t)`` in standard errors of the ensemble mean.
    Row 3 tolerance: ``z = 4`` standard errors plus the shift allowed by stationarity
    ``E[Δv] = 0``: ``2β₁E[(v − β₂/β₁)(u²+w²)] = 4T E[v(g(v)/S + (β₁v − β₂)²)]``, i.e.
    ``|E v − β₂/β₁| ≤ (2T E[v(g/S + (β₁v−β₂)²)] + β₁|Cov(v, u²+w²)|) / (β₁E[u²+w²])`` (ensemble values).

    Args:
        seed: seed of the SGD noise.
        runs: ensemble size.
        lr, batch_size: ``η`` and ``S`` (``T = η/S``).
        t_end: duration in ``t = η·steps``.
        weight_decay: ``γ`` of row 2.
        n_records: number of recorded times.
        theta0: start ``(u, w)``.
        data: the data law (default ``GaussianData(k=1, sigma=1)``).
        rate: ``rate(T, moments, gamma) -> float``, default :func:`corollary_rate` (inject a wrong one).
        target: ``target(moments) -> float``, the limit of ``E v`` (default ``β₂/β₁``).
    """
    from .dynamics import run_sgd

    eta = check_positive("lr", lr)
    S = check_positive_int("batch_size", batch_size)
    R = check_positive_int("runs", runs)
    data = GaussianData(k=1.0, sigma=1.0) if data is None else data
    rate = corollary_rate if rate is None else rate
    target = (lambda m: m.beta2 / m.beta1) if target is None else target
    mom = data.moments()
    T = sgd_temperature(eta, S)
    steps = int(round(check_positive("t_end", t_end) / eta))
    every = max(steps // max(int(n_records) - 1, 1), 1)
    th0 = check_array("theta0", theta0, shape=(2,))
    results, final = [], None
    for gamma in (0.0, float(weight_decay)):
        model = ScalarModel(gamma)
        traj = run_sgd(model, th0, data, lr=eta, steps=steps, batch_size=S, runs=R, record_every=every,
                       seed=stream(seed).integers(2**31) + (gamma > 0))
        absG = np.abs(traj.observables["G"])  # (K, R)
        mean, se = absG.mean(axis=1), absG.std(axis=1, ddof=1) / np.sqrt(R)
        r = float(rate(T, mom, gamma))
        bound = corollary_bound(traj.times, abs(float(th0[0] ** 2 - th0[1] ** 2)), r)
        diff = (mean - bound)[1:]  # record 0 is the start: mean = bound, SE = 0
        excess = np.where(se[1:] > 0, diff / np.where(se[1:] > 0, se[1:], 1.0),
                          np.where(diff > 0, np.inf, 0.0))
        k = int(np.argmax(excess)) + 1
        label = "balance.corollary.decay" if gamma == 0 else "balance.corollary.weight_decay"
        what = f"4Tσ² = {r:.3g}" if gamma == 0 else f"4Tσ² + 4γ = {r:.3g} (γ = {gamma:g})"
        results.append(make_result(
            label,
            f"E|u² − w²|(t) ≤ |G₀|·exp(−rate·t): the SGD ensemble decays at least at Cor. 3.3's rate {what} "
            f"(η = {eta:g}, S = {S}, start {tuple(th0.tolist())}, t ≤ {t_end:g})",
            float(excess[k - 1]), mc_tolerance(1.0, Z_MC),
            f"z = {Z_MC:g}: measured is max_(t>0) (E|G| − bound)/SE(E|G|) in standard errors (< 0: below the "
            f"bound), SE over {R} runs",
            details={"times": traj.times.tolist(), "mean_abs_G": mean.tolist(), "bound": bound.tolist(),
                     "rate": r, "temperature": T, "worst_time": float(traj.times[k]),
                     "diverged": traj.n_diverged}))
        if gamma == 0:
            final = traj
    th = final.theta[-1]
    v = th[:, 0] * th[:, 1]
    n2 = np.sum(th * th, axis=1)
    b1, b2 = mom.beta1, mom.beta2
    shift = (2 * T * np.mean(v * (mom.g(v) / S + (b1 * v - b2) ** 2))
             + b1 * abs(np.cov(v, n2)[0, 1])) / (b1 * np.mean(n2))
    se_v = float(v.std(ddof=1) / np.sqrt(R))
    tgt = float(target(mom))
    results.append(make_result(
        "balance.corollary.v_limit",
        f"E[uw](t) → β₂/β₁ = {mom.beta2 / mom.beta1:g} up to an O(T) noise shift: SGD learns the teacher "
        f"(t = {final.times[-1]:g})",
        abs(float(v.mean()) - tgt), mc_tolerance(se_v, Z_MC) + float(shift),
        f"z = {Z_MC:g} standard errors of E v + stationary shift bound {float(shift):.2g} from E[Δv] = 0",
        details={"mean_v": float(v.mean()), "target": tgt, "se": se_v, "shift_bound": float(shift)}))
    return results


# ====================================================================== notebook 01's further claims

#: A result that measured nothing: NaN, so it fails (``make_result`` fails every non-finite value).
NOTHING = float("nan")


def _detrended_variance(t: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Per-run variance of ``Y (K, R)`` about its own least-squares line in ``t (K,)`` (ddof = 2)."""
    X = np.stack([np.ones_like(t), t - t.mean()], axis=1)
    coef, *_ = np.linalg.lstsq(X, Y, rcond=None)
    res = Y - X @ coef
    return np.sum(res * res, axis=0) / max(len(t) - 2, 1)


def check_destination_seed_independent(seed: int = 0, *, n_seeds: int = 12, lr: float = 0.02, steps: int = 2000,
                                       theta0: Sequence[float] = (2.0, -0.3), window: float = 0.25,
                                       noise: float = 1.0) -> list[CheckResult]:
    """SGD's destination does not depend on the seed; GD + isotropic noise's does (notebook 01, §2).

    ``n_seeds`` SGD runs (batch size 1, :data:`~symsgd_core.balance.experiments.SCALAR_DATA`) and as many
    GD + isotropic-noise runs (kick size matched to SGD's at the start, times ``noise``) from ``theta0``
    (``(2,)``, or ``(n_seeds, 2)`` for one start per seed — a test uses it to give the seeds different
    destinations). The defaults are those of :func:`~symsgd_core.balance.experiments.three_dynamics`. Rows:

    1–2. ``balance.destination.u`` and ``balance.destination.v``: the seeds disagree about the end value of
       ``u`` and of ``v = uw`` no more than one run fluctuates about its own trend over the last ``window`` of
       the run. Measured: the variance ratio ``F = Var_seeds(x_end) / mean_runs Var_within(x)`` (within: about
       each run's least-squares line, so a slow common drift does not count); tolerance
       ``1 + z·sqrt(2/(n − 1))`` (z = 4 standard errors of a sample variance of ``n`` Gaussian values; the
       within-run variance, from a hundred records, is treated as exact). A seed-dependent destination
       inflates ``F``.
    3. ``balance.destination.G``: SGD's ``G`` ends at the same value for every seed while the isotropic
       walker's does not: measured ``sd_iso(G_end) / sd_sgd(G_end)``, which must reach
       ``exp(z·sqrt(1/(n − 1)))`` (z = 4 standard errors of the log-ratio of two sample standard deviations,
       ``SE(log sd) ≈ 1/sqrt(2(n − 1))`` each).
    """
    from .dynamics import langevin_noise_std, run_langevin, run_sgd
    from .experiments import SCALAR_DATA

    n = check_positive_int("n_seeds", n_seeds)
    if n < 3:
        raise ValueError(f"n_seeds must be >= 3 (a variance across seeds), got {n}")
    eta = check_positive("lr", lr)
    steps = check_positive_int("steps", steps)
    th0 = np.asarray(theta0, dtype=float)
    th0 = check_array("theta0", th0, shape=(2,) if th0.ndim == 1 else (n, 2))
    model, data = ScalarModel(), SCALAR_DATA
    rng = stream(seed)
    every = max(steps // 400, 1)  # 400 records: 100 in the last quarter
    sgd = run_sgd(model, th0, data, lr=eta, steps=steps, batch_size=1, runs=n, record_every=every,
                  seed=int(rng.integers(2**31)))
    s0 = th0 if th0.ndim == 1 else th0[0]
    s = noise * langevin_noise_std(model, s0, data, eta, 1)
    iso = run_langevin(model, th0, data, lr=eta, noise_std=s, steps=steps, runs=n, record_every=every,
                       seed=int(rng.integers(2**31)))
    if sgd.n_diverged or iso.n_diverged:
        return [make_result("balance.destination.v", "the runs did not diverge", NOTHING, 0.0, "no divergence")]
    k0 = int(round((1.0 - float(window)) * (len(sgd.times) - 1)))
    t = sgd.times[k0:]
    series = {"u": sgd.theta[k0:, :, 0], "v": sgd.observables["v"][k0:]}
    tol_f = 1.0 + Z_MC * np.sqrt(2.0 / (n - 1))
    g_sgd = float(np.std(sgd.observables["G"][-1], ddof=1))
    g_iso = float(np.std(iso.observables["G"][-1], ddof=1))
    details = {"n_seeds": n, "u_end": series["u"][-1].tolist(), "v_end": series["v"][-1].tolist(),
               "G_end_sgd": sgd.observables["G"][-1].tolist(), "G_end_iso": iso.observables["G"][-1].tolist(),
               "sd_G_sgd": g_sgd, "sd_G_iso": g_iso, "t_end": float(sgd.times[-1])}
    start = tuple(th0.tolist()) if th0.ndim == 1 else f"{n} starts"
    rows = []
    for name, x in series.items():
        within = float(np.mean(_detrended_variance(t, x)))
        between = float(np.var(x[-1], ddof=1))
        rows.append(make_result(
            f"balance.destination.{name}",
            f"{n} SGD seeds from {start} end at the same {name if name == 'u' else 'v = uw'}: their spread is one "
            "run's own fluctuation (variance ratio between seeds / within a run)",
            between / within if within > 0 else NOTHING, tol_f,
            f"z = {Z_MC:g}: 1 + z·sqrt(2/(n − 1)), the sampling error of a variance of n = {n} values",
            details={**details, "var_between": between, "var_within": within}))
    rows.append(make_result(
        "balance.destination.G",
        "SGD's G ends at one value for every seed; GD + isotropic noise's G ends somewhere else each "
        f"time (sd over seeds {g_iso:.3g} vs SGD's {g_sgd:.3g})",
        g_iso / g_sgd if g_sgd > 0 else np.inf, float(np.exp(Z_MC * np.sqrt(1.0 / (n - 1)))),
        f"z = {Z_MC:g}: exp(z·sqrt(1/(n − 1))), z standard errors of log(sd ratio) of two samples of "
        f"n = {n}", relation=">=", details=details))
    return rows


#: The margin of :func:`check_one_zero_eigenvalue`: every other eigenvalue of ``C`` must exceed this many
#: times the round-off bound of the zero one.
ZERO_EIGENVALUE_MARGIN = 1e4


def check_one_zero_eigenvalue(eigenvalues, n_params: int, label: str = "") -> list[CheckResult]:
    """``C(θ)`` has exactly one zero eigenvalue (notebook 01, §4): the smallest at round-off, the others not.

    ``eigenvalues``: those of ``C`` (any order). Row 1: ``λ_min`` below the eigensolver's round-off bound
    ``64·P·eps·λ_max`` (``eigh`` is backward stable). Row 2: the second-smallest above
    :data:`ZERO_EIGENVALUE_MARGIN` times that bound — a stated margin, so that "one zero eigenvalue" cannot
    pass on a second eigenvalue that is merely small.
    """
    lam = np.sort(np.asarray(eigenvalues, dtype=float))
    if lam.size < 2:
        raise ValueError("need at least two eigenvalues")
    tol = roundoff_tolerance(float(np.max(np.abs(lam))), int(n_params))
    where = f" ({label})" if label else ""
    return [
        make_result("balance.spectrum.one_zero",
                    f"C has a zero eigenvalue{where}: λₘᵢₙ = {lam[0]:.3g}", abs(float(lam[0])), tol,
                    _RO_SOURCE.format(n=int(n_params), what="eigh of a P × P matrix, scale λₘₐₓ"),
                    details={"eigenvalues": lam.tolist()}),
        make_result("balance.spectrum.only_one",
                    f"… and only one{where}: the next eigenvalue {lam[1]:.3g} is at least {ZERO_EIGENVALUE_MARGIN:g} "
                    "times the round-off bound", float(lam[1]), ZERO_EIGENVALUE_MARGIN * tol,
                    f"stated margin: {ZERO_EIGENVALUE_MARGIN:g} × the round-off bound of λₘᵢₙ", relation=">=",
                    details={"eigenvalues": lam.tolist()}),
    ]


def _min_norm_last_layer(A: np.ndarray, inner: list[np.ndarray]) -> np.ndarray:
    """``W_L = A P⁺`` with ``P = W_{L−1}⋯W_1``: then ``W_L P = A`` whenever ``P`` has full column rank."""
    P = inner[0]
    for W in inner[1:]:
        P = W @ P
    return A @ np.linalg.pinv(P)


def check_balanced_norm_minimal(A=((1.0, 0.2), (0.3, 1.0)), depth: int = 3, seed: int = 0, *, widths=(2, 3),
                                n_random: int = 100, n_optimised: int = 2, penalty: Callable | None = None
                                ) -> list[CheckResult]:
    """No factorisation ``A = W_L⋯W_1`` has a smaller ``‖θ‖²`` than the balanced one, ``L Σ_k s_k(A)^{2/L}``.

    The rescaling symmetry of a deep linear net (``W_{ℓ+1} → W_{ℓ+1}G⁻¹``, ``W_ℓ → G W_ℓ``) moves ``θ`` along
    a set of constant ``A``; the balanced point of that set (notebook 01's law of balance at work) is where
    ``‖θ‖²`` is smallest — the induced penalty of notebook 04. Rows:

    1. ``balance.dln.norm_lower_bound``: ``n_random`` random factorisations per hidden width in ``widths``
       (inner layers Gaussian with random scales, ``W_L = A P⁺``) all have ``‖θ‖² ≥ bound`` (measured: the
       largest ``(bound − ‖θ‖²)/bound``; tolerance: round-off of the ``P``-term sum) and reproduce ``A``.
    2. ``balance.dln.norm_minimum``: minimising ``‖θ‖²`` over the inner layers (BFGS from ``n_optimised``
       random starts per width) ends at the bound, not below it and not above it (measured: the largest
       ``|min − bound|/bound``; tolerance: the optimiser's stated accuracy ``1e-6``, with its ``gtol`` set so
       that the quadratic error ``gtol²/(2·curvature)`` is far below it).

    ``penalty(A, L) -> float`` replaces the formula (inject a wrong one to see row 2 fail).
    """
    from scipy.optimize import minimize

    A = check_array("A", A, ndim=2)
    L = check_positive_int("depth", depth)
    if L < 2:
        raise ValueError(f"depth must be >= 2 (a factorisation), got {depth}")
    m, n = A.shape
    s = np.linalg.svd(A, compute_uv=False)
    bound = float(L * np.sum(s ** (2.0 / L))) if penalty is None else float(penalty(A, L))
    rng = stream(seed)
    worst_below, worst_prod, opt_gaps, n_params = -np.inf, 0.0, [], 0
    for h in widths:
        h = check_positive_int("width", h)
        if h < min(m, n):
            raise ValueError(f"every width must be >= rank(A) ≤ {min(m, n)}, got {h}")
        shapes = [(h, n)] + [(h, h)] * (L - 2)
        sizes = [a * b for a, b in shapes]
        n_params = max(n_params, sum(sizes) + m * h)

        def unpack(z, shapes=shapes, sizes=sizes):
            out, k = [], 0
            for shp, sz in zip(shapes, sizes):
                out.append(z[k:k + sz].reshape(shp))
                k += sz
            return out

        def norm_sq(z, unpack=unpack):
            inner = unpack(z)
            WL = _min_norm_last_layer(A, inner)
            return float(sum(np.sum(W * W) for W in inner) + np.sum(WL * WL))

        for _ in range(n_random):
            z = rng.standard_normal(sum(sizes)) * np.exp(rng.uniform(-1.0, 1.0))
            inner = unpack(z)
            WL = _min_norm_last_layer(A, inner)
            P = inner[0]
            for W in inner[1:]:
                P = W @ P
            worst_prod = max(worst_prod, float(np.max(np.abs(WL @ P - A))) / float(np.max(np.abs(A))))
            worst_below = max(worst_below, (bound - norm_sq(z)) / bound)
        for _ in range(n_optimised):
            z0 = rng.standard_normal(sum(sizes))
            res = minimize(norm_sq, z0, method="BFGS", options={"gtol": 1e-9, "maxiter": 5000})
            opt_gaps.append((float(res.fun) - bound) / bound)
    ro = roundoff_tolerance(1.0, n_params)
    gaps = np.array(opt_gaps)
    k = int(np.argmax(np.abs(gaps)))
    details = {"bound": bound, "singular_values": s.tolist(), "depth": L, "widths": list(widths),
               "optimised_gaps": gaps.tolist(), "worst_product_error": worst_prod}
    return [
        make_result("balance.dln.norm_lower_bound",
                    f"{n_random} random factorisations of A per width {tuple(widths)}: none has ‖θ‖² below "
                    f"L Σ sₖ²ᐟᴸ = {bound:.6g} (L = {L})",
                    worst_below if worst_prod <= 1e-8 else NOTHING, ro,
                    _RO_SOURCE.format(n=n_params, what="‖θ‖², relative") + "; the product must reproduce A",
                    details=details),
        make_result("balance.dln.norm_minimum",
                    f"minimising ‖θ‖² over factorisations of A (BFGS, {n_optimised} starts per width) ends at "
                    f"L Σ sₖ²ᐟᴸ = {bound:.6g}: the balanced norm is the minimum",
                    abs(float(gaps[k])), 1e-6,
                    "stated optimiser accuracy 1e-6 (relative; BFGS gtol = 1e-9)", details=details),
    ]


def check_relu_transient(run, z: float = Z_MC) -> list[CheckResult]:
    """The shipped paper-size ReLU run is still transient at its end (notebook 01, §5): asserted, not assumed.

    ``run``: a :class:`~symsgd_core.balance.experiments.ReLUBalanceRun`. Rows:

    1. ``balance.relu.above_floor``: the evaluation loss over the last quarter of the records stays above the
       noise floor ``d_out·σ²`` (the loss of the teacher itself). Measured: (mean loss − floor)/SE, where SE
       combines the record-to-record scatter (SE of the mean over the records) and the evaluation set's
       sampling error at the final state (sd of the per-sample losses/√n_eval); must reach ``z``.
    2. ``balance.relu.still_moving``: ``‖W₁‖²`` (with the biases) still changes over the second half of the
       run: the least-squares slope in ``t`` in units of its standard error (from the residual scatter) must
       reach ``z`` in absolute value.
    """
    p = run.settings
    net = ReLUNet(p["d_in"], p["hidden"], p["d_out"])
    data = GaussianData(k=1.0, sigma=p["sigma"], d_in=p["d_in"], d_out=p["d_out"])
    x, y = data.dataset(p["n_eval"], seed=p["eval_seed"]).full()
    floor = p["d_out"] * p["sigma"] ** 2
    K = len(run.times)
    last = np.asarray(run.loss[3 * K // 4:], dtype=float)
    per_sample = np.asarray(net.per_sample_loss(run.final_theta[None, :], x, y), dtype=float).ravel()
    se = float(np.sqrt(np.var(last, ddof=1) / last.size + np.var(per_sample, ddof=1) / per_sample.size))
    excess = float(np.mean(last) - floor)
    t = np.asarray(run.times[K // 2:], dtype=float)
    w = np.asarray(run.w_sq[K // 2:], dtype=float)
    X = np.stack([np.ones_like(t), t - t.mean()], axis=1)
    coef, *_ = np.linalg.lstsq(X, w, rcond=None)
    res = w - X @ coef
    slope_se = float(np.sqrt(np.sum(res * res) / (t.size - 2) / np.sum((t - t.mean()) ** 2)))
    slope = float(coef[1])
    details = {"floor": floor, "mean_loss_last_quarter": float(np.mean(last)), "loss_se": se,
               "w_sq_slope": slope, "w_sq_slope_se": slope_se, "w_sq_end": float(run.w_sq[-1]),
               "u_sq_end": float(run.u_sq[-1]), "norm_ratio_end": float(run.u_sq[-1] / run.w_sq[-1]),
               "teacher_ratio": p["d_out"] / (p["d_in"] + 1)}
    return [
        make_result("balance.relu.above_floor",
                    f"the ReLU run ends above the noise floor d_out·σ² = {floor:g}: loss {np.mean(last):.4g} over "
                    "the last quarter — it has not reached the teacher",
                    excess / se, z, f"z = {z:g} standard errors (record scatter and evaluation-set sampling)",
                    relation=">=", details=details),
        make_result("balance.relu.still_moving",
                    f"‖W₁‖² still changes at the end of the run (slope {slope:.3g} per unit t over the second half): "
                    "the norms are transient, not converged",
                    abs(slope) / slope_se, z, f"z = {z:g} standard errors of the least-squares slope",
                    relation=">=", details=details),
    ]


def relu_identity_teacher(net: ReLUNet) -> np.ndarray:
    """``θ (P,)`` of a ReLU net that computes the identity exactly: ``W₁ = [I; −I]``, ``b₁ = 0``, ``W₂ = [I, −I]``.

    ``relu(x) − relu(−x) = x``; needs ``d_in = d_out = d`` and ``hidden = 2d``.
    """
    d = net.d_in
    if net.d_out != d or net.hidden != 2 * d:
        raise ValueError(f"the identity teacher needs d_in = d_out = d and hidden = 2d, got {net!r}")
    eye = np.eye(d)
    parts = [np.vstack([eye, -eye]).ravel()]
    if net.bias:
        parts.append(np.zeros(2 * d))
    parts.append(np.hstack([eye, -eye]).ravel())
    return np.concatenate(parts)


def check_relu_teacher_ratio(seed: int = 0, *, d: int = 20, sigma: float = 1.0, n_samples: int = 8000,
                             n_batches: int = 8, predicted: float | None = None) -> list[CheckResult]:
    """At the teacher, per-neuron noise balance gives ``‖u_i‖²/‖w_i‖² = d_out/(d_in + 1)`` (notebook 01, §5).

    The net is a ReLU net ``d → 2d → d`` that computes the identity exactly (:func:`relu_identity_teacher`), so the
    residual is pure label noise (``y = x + σ·noise``). For each neuron, the traces scale as ``1/λ²`` and ``λ²``
    along its orbit, so its noise-balanced point has ``‖λu_i‖²/‖w_i/λ‖² = (Tr_u/Tr_w)·‖u_i‖²/‖w_i‖²`` — here
    ``Tr_u/Tr_w`` since ``‖u_i‖ = ‖w_i‖ = 1``. Population value with zero biases and Gaussian inputs:
    ``E relu(aᵀx)² = ‖a‖²/2`` and ``E[1(aᵀx > 0)(‖x‖² + 1)] = (d_in + 1)/2``, so the ratio is ``d/(d + 1)``
    (``predicted`` overrides it). Measured: the mean over neurons of the balanced ratio from the package's closed-form
    per-neuron traces pooled over ``n_batches`` independent batches (the neurons are identical in law, so the
    pooled ratio is each neuron's); tolerance ``z = 4`` standard errors (delta method over the batches).
    """
    d = check_positive_int("d", d)
    nb = check_positive_int("n_batches", n_batches)
    if nb < 2:
        raise ValueError("n_batches must be >= 2 (a standard error)")
    net = ReLUNet(d, 2 * d, d)
    theta = relu_identity_teacher(net)[None, :]
    data = GaussianData(k=1.0, sigma=check_positive("sigma", sigma), d_in=d, d_out=d)
    rng = stream(seed)
    per = check_positive_int("n_samples", n_samples) // nb
    A, B = [], []
    for _ in range(nb):
        x, y = data.sample(per, rng)
        tu, tw = net.per_neuron_noise_traces(theta, x, y)
        A.append(float(np.mean(tu)))
        B.append(float(np.mean(tw)))
    A, B = np.array(A), np.array(B)
    # the ratio of the pooled traces (a mean of per-batch ratios is biased upwards at O(1/per) by the noise of
    # the denominator); standard error by the delta method over the independent batches
    mean = float(A.sum() / B.sum())
    se = float(np.std(A - mean * B, ddof=1) / np.sqrt(nb) / B.mean())
    ratios = A / B
    target = d / (d + 1) if predicted is None else float(predicted)
    return [make_result(
        "balance.relu.teacher_ratio",
        f"at the ReLU teacher ({d} → {2 * d} → {d}), noise balance of each neuron means ‖uᵢ‖²/‖wᵢ‖² = "
        f"d_out/(d_in + 1) = {target:.4g}: measured {mean:.4g}",
        abs(mean - target), mc_tolerance(se, Z_MC),
        f"z = {Z_MC:g} standard errors (delta method over {nb} batches of {per} samples)",
        details={"ratio": mean, "se": se, "predicted": target, "batch_ratios": ratios.tolist()})]
