"""The slider values the edition precomputes: values the slider itself can take, the notebook's own included.

A slider is described by a :class:`SliderSpec` (read from the widget by :func:`spec_of`, in the kernel). The
grid is spread evenly over the slider's reachable values (its step lattice; exponents for a log slider), so a
frame never shows a value the live slider could not be set to, and it always contains the value the notebook
starts at, so the page opens on a frame the reader can come back to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Kinds of slider (``ipywidgets`` classes): FloatSlider, IntSlider, FloatLogSlider, SelectionSlider.
KINDS = ("float", "int", "log", "selection")
_WIDGET_KINDS = {"FloatSlider": "float", "IntSlider": "int", "FloatLogSlider": "log", "SelectionSlider": "selection"}


@dataclass(frozen=True)
class SliderSpec:
    """What a slider can be set to.

    Attributes:
        kind: one of :data:`KINDS`.
        value: the current value (for ``log``: the value itself, not its exponent).
        min, max, step: the range and step (for ``log``: of the exponent); unused for ``selection``.
        base: the base of a ``log`` slider.
        options: the values of a ``selection`` slider.
    """

    kind: str
    value: object
    min: float = 0.0
    max: float = 0.0
    step: float = 1.0
    base: float = 10.0
    options: tuple = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"slider kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "selection":
            if not self.options:
                raise ValueError("a selection slider needs at least one option")
            return
        for name in ("min", "max", "step", "base"):
            if not math.isfinite(float(getattr(self, name))):
                raise ValueError(f"slider {name} must be finite, got {getattr(self, name)!r}")
        if not self.step > 0:
            raise ValueError(f"slider step must be > 0, got {self.step!r}")
        if self.max < self.min:
            raise ValueError(f"slider max ({self.max}) is below its min ({self.min})")
        if self.kind == "log" and not self.base > 0:
            raise ValueError(f"log slider base must be > 0, got {self.base!r}")


def spec_of(widget) -> SliderSpec:
    """The :class:`SliderSpec` of an ``ipywidgets`` slider (ValueError for any other widget)."""
    kind = _WIDGET_KINDS.get(type(widget).__name__)
    if kind is None:
        for cls in type(widget).__mro__:  # a subclass of one of the four
            kind = _WIDGET_KINDS.get(cls.__name__)
            if kind:
                break
    if kind is None:
        raise ValueError(f"{type(widget).__name__} is not a slider the edition can precompute")
    if kind == "selection":
        return SliderSpec("selection", widget.value, options=tuple(v for _, v in widget._options_full)
                          if hasattr(widget, "_options_full") else tuple(widget.options))
    return SliderSpec(kind, widget.value, float(widget.min), float(widget.max), float(widget.step),
                      float(getattr(widget, "base", 10.0)))


def lattice_size(spec: SliderSpec) -> int:
    """How many values the slider can take."""
    if spec.kind == "selection":
        return len(spec.options)
    return int(math.floor((spec.max - spec.min) / spec.step + 1e-9)) + 1


def lattice_value(spec: SliderSpec, k: int):
    """The ``k``-th value the slider can take (``0 ≤ k < lattice_size``)."""
    n = lattice_size(spec)
    if not 0 <= k < n:
        raise ValueError(f"lattice index {k} outside 0..{n - 1}")
    if spec.kind == "selection":
        return spec.options[k]
    x = _clean(spec.min + k * spec.step)
    if spec.kind == "int":
        return int(round(x))
    if spec.kind == "log":
        return _clean(spec.base ** x)
    return x


def _clean(x: float) -> float:
    """``x`` without the round-off of repeated float steps (0.30000000000000004 → 0.3)."""
    return float(f"{x:.12g}")


def nearest_index(spec: SliderSpec, value) -> int:
    """The lattice index closest to ``value`` (for ``log``: closest in exponent)."""
    n = lattice_size(spec)
    if spec.kind == "selection":
        if value not in spec.options:
            raise ValueError(f"{value!r} is not an option of this slider ({spec.options})")
        return spec.options.index(value)
    x = float(value)
    if spec.kind == "log":
        if not x > 0:
            raise ValueError(f"a log slider's value must be > 0, got {value!r}")
        x = math.log(x, spec.base)
    return min(max(int(round((x - spec.min) / spec.step)), 0), n - 1)


def slider_grid(spec: SliderSpec, n: int) -> tuple[list, int]:
    """At most ``n`` values spread evenly over what the slider can take, its current value included.

    A current value between two steps (a notebook may set one) replaces the nearest step, exactly as given.

    Returns:
        ``(values, current)``: the values in slider order and the index of the slider's current value among
        them. Both ends of the range are included when ``n ≥ 3``; a slider with at most ``n`` values gives them all.

    Raises:
        ValueError: ``n < 2``, or the current value is not one of a selection slider's options.
    """
    if int(n) != n or n < 2:
        raise ValueError(f"a slider grid needs n ≥ 2 values, got {n!r}")
    n = int(n)
    size = lattice_size(spec)
    here = nearest_index(spec, spec.value)
    if size <= n:
        picks = list(range(size))
    else:
        picks = sorted({_roundest(spec, round(i * (size - 1) / (n - 1)), (size - 1) / (n - 1) / 3, size)
                        for i in range(n)})
        if here not in picks:  # replace the nearest pick (never an end) by the current value
            inner = [p for p in picks if 0 < p < size - 1] or picks
            nearest = min(inner, key=lambda p: abs(p - here))
            picks = sorted({*(p for p in picks if p != nearest), here})
    values = [lattice_value(spec, k) for k in picks]
    current = picks.index(here)
    if spec.kind != "selection" and not _same(values[current], spec.value):
        # the notebook set a value between two steps (e.g. a log slider's default): keep it exactly
        values[current] = spec.value
    return values, current


def _roundest(spec: SliderSpec, k: int, radius: float, size: int) -> int:
    """The lattice index within ``radius`` of ``k`` whose value (exponent, for a log slider) is written with the
    fewest digits — 0.1 rather than 0.13 — nearest ``k`` among equals; the ends stay the ends."""
    if spec.kind == "selection" or k in (0, size - 1):
        return k
    r = int(radius)
    near = [j for j in range(max(1, k - r), min(size - 2, k + r) + 1)]

    def digits(j):
        x = _clean(spec.min + j * spec.step)
        return len(f"{abs(x):.12g}".replace(".", "").strip("0") or "0")

    return min(near or [k], key=lambda j: (digits(j), abs(j - k)))


def _same(a, b) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def label(value) -> str:
    """A slider value as the page shows it (ints as ints, floats to 4 significant digits)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return str(value)
    return f"{value:.4g}"


def allocate_frames(costs: list[int], wanted: list[int], budget: int, fewest: int) -> list[int]:
    """Frames per slider so that the frames of a page fit ``budget`` bytes, shared as evenly as possible.

    Every slider gets ``min(wanted, L)`` frames for the largest common level ``L`` that fits; when even ``fewest``
    frames each do not fit, the slider with the costliest frames gets none (its figure ships without a slider)
    and the rest are shared again.

    Args:
        costs: bytes one frame of each slider adds (> 0).
        wanted: the most frames each slider asks for.
        budget: bytes all the frames may take.
        fewest: the fewest frames worth a slider.

    Returns:
        Frames per slider (0, or between ``fewest`` and its ``wanted``).
    """
    if len(costs) != len(wanted):
        raise ValueError(f"{len(costs)} costs but {len(wanted)} wanted counts")
    if any(c <= 0 for c in costs):
        raise ValueError(f"frame costs must be > 0, got {costs}")
    alive = [i for i in range(len(costs)) if wanted[i] >= fewest]
    while alive:
        def total(level: int) -> int:
            return sum(min(wanted[i], level) * costs[i] for i in alive)

        top = max(wanted[i] for i in alive)
        level = next((lv for lv in range(top, fewest - 1, -1) if total(lv) <= budget), None)
        if level is not None:
            out = [0] * len(costs)
            for i in alive:
                out[i] = min(wanted[i], level)
            return out
        alive.remove(max(alive, key=lambda i: costs[i]))
    return [0] * len(costs)
