"""Which step of a precomputed slider the static-edition test drags to: one step that tells a wired-up slider from
the ways a page can be mis-wired.

The page test drags each precomputed slider once and compares what the page then shows with what the live
controller draws at that step's value. A page whose frames are wired to the wrong steps shows, at step ``k``, the
frame of another step; the ways that happen (each a :data:`MIS_WIRINGS` entry) are: the start's frame stays (a
stale figure), the frames run backwards (step ``k`` shows ``n-1-k``), or they are off by one either way (clamped at
the ends, so an end step can look right). A step ``k`` exposes a mis-wiring when the frame it would show differs
from frame ``k``. :func:`telling_step` picks the step that exposes the most of them, the farthest from the start
among equals (the longest drag); for a slider of four steps or more whose frames differ that is all four, so one
drag sees what two (the far end and the middle) saw before, at half the cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

#: What a mis-wired page shows at step ``k`` of ``n`` steps, having started at step ``start``.
MIS_WIRINGS: dict[str, Callable[[int, int, int], int]] = {
    "stale (the start's frame stays)": lambda k, n, start: start,
    "reversed": lambda k, n, start: n - 1 - k,
    "one step low": lambda k, n, start: max(k - 1, 0),
    "one step high": lambda k, n, start: min(k + 1, n - 1),
}


def exposed(k: int, start: int, shows: Sequence[str]) -> list[str]:
    """The mis-wirings a drag to step ``k`` would expose: those that would show a frame other than frame ``k``.

    ``shows[j]`` is what step ``j`` shows (the frame's data as shipped in the page, any comparable value)."""
    n = len(shows)
    return [name for name, frame in MIS_WIRINGS.items() if shows[frame(k, n, start)] != shows[k]]


def telling_step(start: int, shows: Sequence[str]) -> int:
    """The one step to drag to from ``start``: the step other than ``start`` that exposes the most
    :data:`MIS_WIRINGS`, the farthest from ``start`` among equals. A slider whose frames are all alike (a figure
    the slider leaves as it is) gets its far end.

    Raises:
        ValueError: fewer than two steps, or ``start`` is not one of them.
    """
    n = len(shows)
    if n < 2 or not 0 <= start < n:
        raise ValueError(f"a slider of {n} steps has no step to drag to from step {start}")
    return max((k for k in range(n) if k != start), key=lambda k: (len(exposed(k, start, shows)), abs(k - start)))
