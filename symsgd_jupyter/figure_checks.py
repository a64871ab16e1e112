"""What a test (or a notebook cell) asks of a widget figure: its sliders, both ends of each, no NaN drawn.

A figure here is any object with ``controls`` (``name → widget``) and ``set(**values)`` (set them as a reader
would and redraw once), as :class:`symsgd_core.ui.base.Controller` has.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

__all__ = ["SLIDER_TYPES", "figure_is_finite", "slider_extremes", "slider_names", "sweep_sliders"]

#: Widget types that ``slider_names`` treats as sliders.
SLIDER_TYPES = (widgets.FloatSlider, widgets.IntSlider, widgets.FloatLogSlider, widgets.SelectionSlider)


def slider_names(controller) -> list[str]:
    """Names of the controller's slider controls."""
    return [n for n, w in controller.controls.items() if isinstance(w, SLIDER_TYPES)]


def slider_extremes(widget) -> tuple:
    """The (low, high) values a reader can reach on a slider."""
    if isinstance(widget, widgets.SelectionSlider):
        return widget.options[0], widget.options[-1]
    if isinstance(widget, widgets.FloatLogSlider):
        return widget.base ** widget.min, widget.base ** widget.max
    return widget.min, widget.max


def sweep_sliders(controller, run=None) -> list[tuple[str, object]]:
    """Move every slider to both ends of its range (one at a time), updating each time.

    ``run`` is called after each setting for controllers that need a Run button press (``live=False``). Returns the
    (name, value) settings visited. Exceptions propagate: a test calls this.
    """
    visited = []
    for name in slider_names(controller):
        w = controller.controls[name]
        original = w.value
        for value in slider_extremes(w):
            controller.set(**{name: value})
            if run is not None:
                run()
            visited.append((name, value))
        controller.set(**{name: original})
    return visited


def figure_is_finite(fig) -> bool:
    """True when every numeric x/y/z array of every trace of the plotly figure ``fig`` is free of NaN and inf.

    ``None`` entries (plotly's gap marker) are allowed; NaN is not: a figure must announce a failure in its status
    line instead of plotting NaN.
    """
    for trace in fig.data:
        for key in ("x", "y", "z"):
            arr = getattr(trace, key, None)
            if arr is None:
                continue
            vals = np.asarray([v for v in np.ravel(np.asarray(arr, dtype=object)) if v is not None])
            if not vals.size or vals.dtype.kind not in "fiuO":
                continue  # nothing drawn, or text (category names)
            try:
                f = vals.astype(float)
            except (TypeError, ValueError):
                continue
            if not np.all(np.isfinite(f)):
                return False
    return True
