"""The models of Notebook 02 whose parameters enter through ``u`` and ``w``, and a point to evaluate them at.

Models (:data:`MODELS`): a linear layer ``f(x) = u wᵀx``, a bilinear attention score ``f(x, z) = xᵀ u wᵀ z``
and a ReLU neuron ``f(x) = u relu(wᵀx)``, each with the per-sample loss ``(f − y)²`` of
:mod:`symsgd_core.core.conventions` (torch, float64). All three have the rescaling symmetry
``ℓ(λu, w/λ) = ℓ(u, w)`` for ``λ > 0`` (arXiv 2308.06671, Section 2); only the first two also for ``λ = −1``.
A :class:`LiftingCase` is one model at ``(u, w)`` with a batch of data and the reference vector ``r`` of the
w-free lifting (:mod:`symsgd_core.lifting.liftings`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch

from ..core.conventions import LOSS_HALF_FACTOR
from ..core.validation import as_generator, check_array, check_int

__all__ = ["DTYPE", "MODELS", "LiftingCase", "RankOneModel", "bilinear_attention", "default_cases", "get_model",
           "linear_layer", "make_case", "model_loss", "relu_neuron", "squared_error"]

DTYPE = torch.float64


@contextmanager
def _one_thread():
    """Run torch on one thread (restored afterwards): these tensors are tiny, and on a shared machine
    torch's thread pool made a 4 ms evaluation take over 100 ms."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _small_torch(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _one_thread():
            return func(*args, **kwargs)
    return wrapper


@dataclass(frozen=True)
class RankOneModel:
    """A model whose parameters enter through ``u ∈ R^m`` and ``w ∈ R^n``.

    Attributes:
        key: short identifier (``"linear"``, ``"attention"``, ``"relu"``).
        title: name for figures.
        formula: the prediction, in words/unicode.
        predict: ``(u (..., m), w (..., n), data) -> f (..., k)``, torch, broadcasting over
            leading axes; data tensors have shape ``(N, ...)``.
        natural_predict: ``(M (N, m, n), data) -> f (N, k)`` for models that are a function of the
            weight matrix ``M`` alone, else ``None``.
        make_data: ``(rng, m, n, n_samples) -> dict`` of float64 arrays with a target ``"y"`` of
            shape ``(N, k)`` and inputs of shape ``(N, ·)``.
        negation_symmetric: whether ``ℓ(−u, −w) = ℓ(u, w)`` too (λ = −1); false for ReLU.
    """

    key: str
    title: str
    formula: str
    predict: Callable
    natural_predict: Callable | None
    make_data: Callable
    negation_symmetric: bool

    @property
    def has_natural_lifting(self) -> bool:
        return self.natural_predict is not None


def _linear_predict(u, w, data):
    return u * (data["x"] * w).sum(-1, keepdim=True)


def _linear_natural(M, data):
    return torch.einsum("kij,kj->ki", M, data["x"])


def _linear_data(rng, m, n, n_samples):
    x = rng.standard_normal((n_samples, n))
    teacher = rng.standard_normal((m, n)) / np.sqrt(n)
    y = x @ teacher.T + 0.5 * rng.standard_normal((n_samples, m))
    return {"x": x, "y": y}


def _attention_predict(u, w, data):
    return ((data["x"] * u).sum(-1) * (data["z"] * w).sum(-1)).unsqueeze(-1)


def _attention_natural(M, data):
    return torch.einsum("ki,kij,kj->k", data["x"], M, data["z"]).unsqueeze(-1)


def _attention_data(rng, m, n, n_samples):
    x = rng.standard_normal((n_samples, m))
    z = rng.standard_normal((n_samples, n))
    teacher = rng.standard_normal((m, n)) / np.sqrt(m * n)
    y = np.einsum("ki,ij,kj->k", x, teacher, z)[:, None] + 0.5 * rng.standard_normal((n_samples, 1))
    return {"x": x, "z": z, "y": y}


def _relu_predict(u, w, data):
    return u * torch.relu((data["x"] * w).sum(-1, keepdim=True))


def _relu_data(rng, m, n, n_samples):
    x = rng.standard_normal((n_samples, n))
    u_t, w_t = rng.standard_normal(m), rng.standard_normal(n)
    y = np.maximum(x @ w_t, 0.0)[:, None] * u_t[None, :] + 0.5 * rng.standard_normal((n_samples, m))
    return {"x": x, "y": y}


def linear_layer() -> RankOneModel:
    """A rank-1 linear layer ``f(x) = u wᵀ x`` (x ∈ R^n, y ∈ R^m); natural lifting ``f = M x``."""
    return RankOneModel("linear", "linear layer", "f(x) = u wᵀx", _linear_predict, _linear_natural,
                        _linear_data, negation_symmetric=True)


def bilinear_attention() -> RankOneModel:
    """A bilinear attention score ``f = xᵀ W_Q W_Kᵀ z = (xᵀu)(wᵀz)`` regressed on a scalar target.

    ``x ∈ R^m`` (query side), ``z ∈ R^n`` (key side); natural lifting ``f = xᵀ M z``.
    """
    return RankOneModel("attention", "bilinear attention score", "f(x, z) = (xᵀu)(wᵀz)", _attention_predict,
                        _attention_natural, _attention_data, negation_symmetric=True)


def relu_neuron() -> RankOneModel:
    """One ReLU neuron ``f(x) = u relu(wᵀx)`` (x ∈ R^n, y ∈ R^m); symmetric for λ > 0 only."""
    return RankOneModel("relu", "ReLU neuron", "f(x) = u relu(wᵀx)", _relu_predict, None, _relu_data,
                        negation_symmetric=False)


#: The three models of Notebook 02, by key.
MODELS: dict[str, RankOneModel] = {m.key: m for m in (linear_layer(), bilinear_attention(), relu_neuron())}


def get_model(key: str) -> RankOneModel:
    """The model called ``key`` (one of :data:`MODELS`)."""
    if key not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}, got {key!r}")
    return MODELS[key]


@dataclass(frozen=True)
class LiftingCase:
    """A model at parameters ``(u, w)`` with a batch of data and a reference vector ``r``.

    Attributes:
        model: the :class:`RankOneModel`.
        u: ``(m,)``; w: ``(n,)``, ``w ≠ 0``.
        data: arrays with leading axis ``N`` (inputs and the target ``"y"`` of shape ``(N, k)``).
        r: ``(n,)`` reference vector of the w-free lifting; ``F`` describes the sign class
            ``wᵀr > 0``.
    """

    model: RankOneModel
    u: np.ndarray
    w: np.ndarray
    data: Mapping[str, np.ndarray]
    r: np.ndarray
    _torch: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.model, RankOneModel):
            raise ValueError(f"model must be a RankOneModel, got {type(self.model).__name__}")
        u = check_array("u", self.u, ndim=1)
        w = check_array("w", self.w, ndim=1)
        r = check_array("r", self.r, shape=(w.shape[0],))
        if not np.any(w):
            raise ValueError("w must be non-zero (the liftings divide by ‖w‖)")
        if not np.any(r):
            raise ValueError("r must be non-zero")
        if "y" not in self.data:
            raise ValueError("data must contain a target 'y'")
        data = {k: check_array(f"data[{k!r}]", v) for k, v in self.data.items()}
        n_samples = data["y"].shape[0]
        if n_samples < 1 or any(v.ndim != 2 or v.shape[0] != n_samples for v in data.values()):
            raise ValueError("every data array must have shape (N, ·) with the same N >= 1")
        object.__setattr__(self, "u", u)
        object.__setattr__(self, "w", w)
        object.__setattr__(self, "r", r)
        object.__setattr__(self, "data", data)

    @property
    def m(self) -> int:
        return self.u.shape[0]

    @property
    def other_sign_class(self) -> bool:
        """``wᵀr < 0``: the w-free lifting ``F`` describes the other sign class ``(−u, −w)``, not this point."""
        return bool(float(self.w @ self.r) < 0)

    @property
    def sign_caveat_applies(self) -> bool:
        """:attr:`other_sign_class` for a model that is not even under ``(u, w) → (−u, −w)`` (the ReLU neuron):
        ``F``'s loss, gradients and noise traces are those of ``(−u, −w)``, which differ from this point's."""
        return self.other_sign_class and not self.model.negation_symmetric

    @property
    def n(self) -> int:
        return self.w.shape[0]

    @property
    def n_samples(self) -> int:
        return self.data["y"].shape[0]

    @property
    def M(self) -> np.ndarray:
        """The rank-1 matrix ``u wᵀ``, shape ``(m, n)``."""
        return np.outer(self.u, self.w)

    def torch_data(self) -> dict[str, torch.Tensor]:
        """The data as float64 tensors (cached)."""
        if not self._torch:
            self._torch.update({k: torch.as_tensor(v, dtype=DTYPE) for k, v in self.data.items()})
        return self._torch

    def with_params(self, u, w) -> LiftingCase:
        """The same model, data and ``r`` at new parameters."""
        return LiftingCase(self.model, u, w, self.data, self.r, self._torch)


def make_case(model: RankOneModel | str, m: int = 2, n: int = 3, n_samples: int = 8, seed=0,
              u=None, w=None, r=None) -> LiftingCase:
    """A random :class:`LiftingCase` (explicit generator ``seed``).

    Args:
        model: a :class:`RankOneModel` or its key.
        m, n: sizes of ``u`` and ``w`` (any m, n >= 1).
        n_samples: batch size ``N``.
        seed: int or ``numpy.random.Generator``.
        u, w: parameters (default: standard normal); r: reference (default: a random vector with
            its sign chosen so that ``wᵀr > 0``).
    Raises:
        ValueError: on bad sizes or parameters.
    """
    model = get_model(model) if isinstance(model, str) else model
    m = check_int("m", m, minimum=1)
    n = check_int("n", n, minimum=1)
    n_samples = check_int("n_samples", n_samples, minimum=1)
    rng = as_generator(seed)
    data = model.make_data(rng, m, n, n_samples)
    u = rng.standard_normal(m) if u is None else check_array("u", u, shape=(m,))
    w = rng.standard_normal(n) if w is None else check_array("w", w, shape=(n,))
    if r is None:
        r = rng.standard_normal(n)
        r = r if float(r @ w) > 0 else -r
    return LiftingCase(model, u, w, data, r)


def default_cases(seed=0, m: int = 2, n: int = 3, n_samples: int = 8, models=None) -> list[LiftingCase]:
    """One random case per model (all three by default), from one generator."""
    rng = as_generator(seed)
    models = list(MODELS.values()) if models is None else [get_model(k) if isinstance(k, str) else k
                                                          for k in models]
    return [make_case(model, m, n, n_samples, rng) for model in models]


def squared_error(f: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-sample ``(f − y)²`` summed over outputs (½ only if the conventions say so)."""
    out = ((f - y) ** 2).sum(-1)
    return 0.5 * out if LOSS_HALF_FACTOR else out


def model_loss(model: RankOneModel, u: torch.Tensor, w: torch.Tensor, data) -> torch.Tensor:
    """``ℓ(u, w, x)`` per sample; ``u (..., m)``, ``w (..., n)`` broadcast against the batch."""
    return squared_error(model.predict(u, w, data), data["y"])
