"""Argument validation shared by every public function.

Each helper raises ``ValueError`` with a message that names the argument and says
what was expected, so a bad slider value or a typo never becomes a crash deep in
numpy or a silent NaN.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_finite(name: str, value) -> float:
    """Return ``value`` as float; it must be a finite real number."""
    if not _is_real(value) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def check_positive(name: str, value) -> float:
    """Return ``value`` as float; it must be finite and > 0."""
    v = check_finite(name, value)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def check_nonnegative(name: str, value) -> float:
    """Return ``value`` as float; it must be finite and >= 0."""
    v = check_finite(name, value)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return v


def check_in_range(name: str, value, low: float, high: float, *, closed: bool = True) -> float:
    """Return ``value`` as float; it must lie in ``[low, high]`` (or ``(low, high)``)."""
    v = check_finite(name, value)
    ok = (low <= v <= high) if closed else (low < v < high)
    if not ok:
        bounds = f"[{low}, {high}]" if closed else f"({low}, {high})"
        raise ValueError(f"{name} must lie in {bounds}, got {value!r}")
    return v


def check_int(name: str, value, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as int; it must be an integer within the given bounds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {v}")
    return v


def check_positive_int(name: str, value) -> int:
    """Return ``value`` as int; it must be an integer >= 1."""
    return check_int(name, value, minimum=1)


def check_array(name: str, value, *, ndim: int | None = None, shape: tuple | None = None) -> np.ndarray:
    """Return ``value`` as a finite float64 array of the expected ``ndim``/``shape``.

    ``shape`` entries that are ``None`` match any length.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers ({exc})") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = tuple("any" if s is None else s for s in shape)
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def check_choice(name: str, value, choices) -> str:
    """Return ``value``; it must be one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)!r}, got {value!r}")
    return value


def as_generator(seed) -> np.random.Generator:
    """An explicit ``numpy.random.Generator`` from a seed (int) or a Generator.

    ``None`` is refused: every run in this project is reproducible.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise ValueError("seed must be an integer or a numpy Generator (None is not reproducible)")
    return np.random.default_rng(check_int("seed", seed, minimum=0))
