"""Sliders as declarations: a :class:`Range` says what a slider shows and where it goes; a figure names its sliders
after its experiment's keywords (``sliders = dict(lr=STEP_SIZE, seed=SEED, …)``) and the base class builds them at
the experiment's defaults (:meth:`~symsgd_core.ui.base.Controller.__init__`).

The ranges several figures share are defined here once; a figure that needs another end says so with
:meth:`Range.but` (``STEP_SIZE.but(lo=0.1, hi=0.4)``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import ipywidgets as widgets


@dataclass(frozen=True)
class Range:
    """One slider: its label, its ends and step, and how it reads.

    Attributes:
        description: the label the reader sees.
        lo, hi: the ends of the range (for ``log``, their exponents: ``lo = -3`` is ``base**-3``).
        step: the step of one key press (an exponent step for ``log``); None: the widget's default.
        kind: ``"float"``, ``"int"``, ``"log"`` (a ``FloatLogSlider``) or ``"choice"`` (a ``SelectionSlider`` over
            ``options``).
        base: the base of a ``log`` slider.
        fmt: the readout format (``".3f"``); None: the widget's default.
        options: the values of a ``choice`` slider.
        continuous: redraw while dragging (only for figures whose update takes a few milliseconds).
        width: the slider's CSS width; None: the figure's :attr:`~symsgd_core.ui.base.Controller.slider_width`.
        label_width: the label's CSS width (``"initial"``: as wide as the label); None: the widget's default.
    """

    description: str
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    kind: str = "float"
    base: float = 10.0
    fmt: str | None = None
    options: tuple = ()
    continuous: bool = False
    width: str | None = None
    label_width: str | None = "initial"

    def but(self, **changes) -> Range:
        """This range with ``changes`` (another end, label or width)."""
        return replace(self, **changes)

    def widget(self, value, width: str | None = None) -> widgets.ValueWidget:
        """The slider at ``value``; ``width``: the figure's slider width, unless the range has its own."""
        kw: dict = dict(description=self.description, continuous_update=self.continuous, value=value)
        if self.label_width is not None:
            kw["style"] = {"description_width": self.label_width}
        if self.width or width:
            kw["layout"] = widgets.Layout(width=self.width or width)
        if self.fmt is not None:
            kw["readout_format"] = self.fmt
        if self.kind == "choice":
            return widgets.SelectionSlider(options=self.options, **kw)
        if self.step is not None:
            kw["step"] = self.step
        if self.kind == "log":
            return widgets.FloatLogSlider(base=self.base, min=self.lo, max=self.hi, **kw)
        cls = {"float": widgets.FloatSlider, "int": widgets.IntSlider}[self.kind]
        return cls(min=self.lo, max=self.hi, **kw)


#: The seed of a run's random generator.
SEED = Range("seed", 0, 20, kind="int")
#: The step size η of the rank-jump figures.
STEP_SIZE = Range("step size η", 0.05, 0.5, 0.01)
#: Weight decay γ (loss ``… + γ‖θ‖²``) of the rank-jump figures.
WEIGHT_DECAY = Range("weight decay γ", 0.005, 0.06, 0.001, fmt=".3f")
#: ε, the small entry of the matrix-completion target.
EPSILON = Range("ε", 0.1, 0.5, 0.01)
#: How many SGD seeds run side by side (the figure sets ``hi``).
SGD_SEEDS = Range("SGD seeds", 1, 8, kind="int")
#: The temperature T = η/S of the stationary-distribution figures.
TEMPERATURE = Range("T = η/S", 0.02, 0.5, 0.01, fmt=".2f")
#: The initial point (u₀, w₀) of the scalar model.
U0 = Range("u₀", -2.0, 2.0, 0.05)
W0 = Range("w₀", -2.0, 2.0, 0.05)
