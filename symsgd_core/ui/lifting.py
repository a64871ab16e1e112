"""Figures of Notebook 02 (the rank-1 lifting), §1–§6: one draw-only controller per figure.

Each controller reads its sliders, calls one function of :mod:`symsgd_core.lifting.experiments` (torch autograd in
float64 at the notebook's 2-D cases: u, w ∈ R², 16 samples, fixed data, reference ``r = e₁``), keeps the frozen
result in ``self.result``, draws it and says in the status line what the figure shows, including where a
construction is undefined (``wᵀr ≤ 0`` for the w-free lifting, no natural lifting for a ReLU neuron). Every figure
updates live (target ≤ 100 ms per update). Exercises (§7): :data:`symsgd_core.lifting.EXERCISES`.
"""

from __future__ import annotations

import math

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go

from ..core.validation import check_array
from ..lifting import experiments as ex
from ..lifting.experiments import DEMO_SAMPLES
from ..lifting.models import LiftingCase, get_model
from .base import Controller, Words
from .plotting import axes, key_last, keyed, line, markers, panels, put
from .sliders import Range
from .style import NEUTRALS, PALETTE, colours

__all__ = ["ChainRuleController", "EulerController", "OrbitController", "RankOneSetController",
           "SignCaveatController", "TracesController"]

COLOURS = colours(u="blue", w="orange", grad="vermillion", autograd="grey", corrected="bluish_green",
                  seed="vermillion", F="reddish_purple", natural="sky_blue", set="sky_blue", off="vermillion",
                  plus="blue", minus="orange")


def _model_dropdown(value: str) -> widgets.Dropdown:
    return widgets.Dropdown(options=[("linear layer", "linear"), ("bilinear attention score", "attention"),
                                     ("ReLU neuron", "relu")], value=value, description="model",
                            layout=widgets.Layout(width="280px"))


#: The sliders of the parameters u = ‖u‖(cos θ_u, sin θ_u), w = ‖w‖(cos θ_w, sin θ_w) (degrees).
THETA_U = Range("angle of u (deg)", -180, 180, 5)
THETA_W = THETA_U.but(description="angle of w (deg)")
U_LEN = Range("‖u‖", 0.2, 2.5, 0.05)
W_LEN = U_LEN.but(description="‖w‖")
PARAMETERS = dict(theta_u=THETA_U, u_len=U_LEN, theta_w=THETA_W, w_len=W_LEN)
#: The axis labels of a heat map of a 2×2 matrix (row i, column j; row 1 on top).
ENTRIES = dict(x=["j = 1", "j = 2"], y=["i = 1", "i = 2"])


class _LiftingFigure(Controller):
    """A figure of Notebook 02: sliders 260 px wide; ``case()`` is the current point with the notebook's data."""

    slider_width = "260px"

    def case(self) -> LiftingCase:
        """The current point (u, w) with the notebook's data (all samples of the batch)."""
        return self.result.case


def _fmt_vec(v, digits: int = 3) -> str:
    return "(" + ", ".join(f"{x:.{digits}g}" for x in np.ravel(v)) + ")"


def _arrow(fig, name: str, colour: str, at: tuple, key: str) -> None:
    """Add an arrow keyed ``key`` to panel ``at``: a line through two points whose head (a marker) is drawn at the
    second."""
    fig.add_scatter(x=[0, 0], y=[0, 0], mode="lines+markers", name=name, line={"color": colour, "width": 4},
                    marker={"symbol": "arrow", "size": [0, 16], "angleref": "previous", "color": colour},
                    row=at[0], col=at[1])
    key_last(fig, key)


def _point(trace, tip, tail=(0, 0)) -> None:
    """Draw the arrow ``trace`` from ``tail`` to ``tip``."""
    trace.x, trace.y = [tail[0], tip[0]], [tail[1], tip[1]]


def _sentences(*sentences) -> str:
    """The status line: the sentences that apply (a sentence is ``condition and text``; a false one is left out)."""
    return " ".join(s for s in sentences if s)


def _bars(trace, values, n: int) -> None:
    """Show ``values`` in the bar ``trace``, or hide it (``n`` zero bars) where they are undefined (``None``)."""
    trace.y, trace.visible = ([0] * n, False) if values is None else (values, True)


class OrbitController(_LiftingFigure):
    """§1, orbits collapse to points: (λu, w/λ) moves along its orbit while M = u wᵀ and the loss stay fixed.

    Panels: (a) λu and w/λ in the plane, on the rays they move along; (b) the entries of M (a heat map that does
    not change); (c) along the orbit, the training loss L (flat) and G = ‖λu‖² − ‖w/λ‖² (what moves), with the
    current λ marked. Settings ``u0``, ``w0``: the base point.
    """

    LAM_RANGE = ex.ORBIT_RANGE
    experiment = staticmethod(ex.orbit_view)
    sliders = dict(lam=Range("λ", -1.5, 1.5, 0.05, kind="log", base=2, fmt=".3f"), model=_model_dropdown)

    def _figures(self) -> list[go.FigureWidget]:
        self.u0, self.w0 = (check_array(k, self.settings[k], shape=(2,)) for k in ("u0", "w0"))
        fig = panels("(λu, w/λ) in the plane", "M = (λu)(w/λ)ᵀ", "along the orbit", height=400,
                     column_widths=[0.36, 0.24, 0.40], horizontal_spacing=0.08,
                     layout=dict(margin={"l": 50, "r": 20, "t": 50, "b": 50}, legend={"orientation": "h", "y": -0.22}))
        lo, hi = self.LAM_RANGE
        for vec, s, name, colour in ((self.u0, np.array([lo, hi]), "ray of λu", COLOURS["u"]),
                                     (self.w0, np.array([1 / hi, 1 / lo]), "ray of w/λ", COLOURS["w"])):
            line(fig, name, colour, (1, 1), width=8, x=s * vec[0], y=s * vec[1], showlegend=False, opacity=0.2)
        _arrow(fig, "λu", COLOURS["u"], (1, 1), key="u")
        _arrow(fig, "w/λ", COLOURS["w"], (1, 1), key="w")
        fig.add_heatmap(z=np.zeros((2, 2)), **ENTRIES, colorscale="RdBu", zmid=0, showscale=False,
                        texttemplate="%{z:.4f}", name="M", row=1, col=2)
        key_last(fig, "M")
        line(fig, "loss L", PALETTE["black"], (1, 3), x=ex.ORBIT_GRID, y=np.zeros_like(ex.ORBIT_GRID), key="loss")
        line(fig, "G = ‖λu‖² − ‖w/λ‖²", COLOURS["grad"], (1, 3), dash="dash", x=ex.ORBIT_GRID,
             y=np.zeros_like(ex.ORBIT_GRID), key="G")
        markers(fig, "current λ", [PALETTE["black"], COLOURS["grad"]], (1, 3), size=11, x=[1, 1], y=[0, 0],
                key="current")
        r = 1.08 * max(hi * np.linalg.norm(self.u0), np.linalg.norm(self.w0) / lo)
        axes(fig, (1, 1), "coordinate 1", "coordinate 2", xaxis=dict(range=[-r, r]),
             yaxis=dict(range=[-r, r], scaleanchor="x", scaleratio=1))
        axes(fig, (1, 2), yaxis=dict(autorange="reversed"))
        axes(fig, (1, 3), "λ", "L and G on the orbit", xaxis=dict(type="log", minorloglabels="complete"))
        return [fig]

    def base_case(self) -> LiftingCase:
        return self.result.base

    def _show(self, q, lam, model):
        fig = self.figure
        with fig.batch_update():
            _point(keyed(fig, "u"), q.case.u)
            _point(keyed(fig, "w"), q.case.w)
            put(fig, "M", z=q.M)
            put(fig, "loss", y=q.losses)
            put(fig, "G", y=q.G_curve)
            put(fig, "current", x=[lam, lam], y=[q.loss, q.G])

    def words(self, q, lam, model) -> Words:
        n = q.outcome.numbers
        return Words(None, "info", f"λ = {lam:.3f}: λu = {_fmt_vec(n['u'])}, w/λ = {_fmt_vec(n['w'])}. M did not "
                     f"move (largest entry change {n['M_change']:.1e}); loss L = {n['loss']:.6g} (change "
                     f"{n['loss_change']:.1e}). What moved: G = ‖λu‖² − ‖w/λ‖² = {n['G']:.4g} (was {n['G0']:.4g} at "
                     "λ = 1).")

    def summary(self) -> str:
        """Markdown sentence with the numbers of the current setting and of the whole slider range."""
        q, sw = self.result, ex.orbit_sweep(self.controls["model"].value, self.u0, self.w0)
        lo, hi = self.LAM_RANGE
        return (f"Now λ = {q.lam:.3g}: λu = {_fmt_vec(q.case.u)}, w/λ = {_fmt_vec(q.case.w)}. Over the whole slider "
                f"range λ ∈ [{lo:.3g}, {hi:.3g}] the entries of M = u wᵀ change by at most {sw.M_change:.1e} and "
                f"the training loss ({sw.loss0:.6g}, {self.controls['model'].label}) by at most "
                f"{sw.loss_change:.1e} — round-off — while G = ‖λu‖² − ‖w/λ‖² runs from {sw.G_min:.3g} to "
                f"{sw.G_max:.3g}.")


#: A number with a power of ten as an inline TeX formula (Markdown; its "$" marks it as TeX for the tests).
TEX_POWER_OF_TEN = "${mantissa} \\times 10^{{{exponent}}}$"


def tex_number(x: float, digits: int = 2) -> str:
    """``x`` as an inline TeX formula for Markdown: ``$0$`` when it is zero, else ``digits`` significant digits, with a
    power of ten (``$1.4 \\times 10^{-17}$``) where ``:g`` would write an exponent (``0.0e+00`` typesets as
    "0.0e + 00")."""
    if not math.isfinite(x):
        raise ValueError(f"tex_number needs a finite number, got {x!r}")
    if x == 0:
        return "$0$"
    text = f"{x:.{digits}g}"
    if "e" not in text:
        return f"${text}$"
    mantissa, exponent = text.split("e")
    return TEX_POWER_OF_TEN.format(mantissa=mantissa, exponent=int(exponent))


class RankOneSetController(_LiftingFigure):
    """§2, the rank-1 set: the 2×2 matrices of rank ≤ 1 in the slice ``z = z_M`` of coordinates ``(q, h, p)``.

    ``M = [[p+q, h+z], [h−z, p−q]]``, ``det M = p² + z² − q² − h²``: at fixed z the rank-≤1 set is the surface
    ``q² + h² = p² + z²``. Points: ``M = u wᵀ`` (unit u, w at angles θ_u, θ_w), ``M′ = R M Rᵀ`` (R: rotation by
    φ/2 of u and w; same p and z, (q, h) turned by φ), and the midpoint ``(M + M′)/2``, off the set.
    """

    P_MAX = 0.8  # the drawn part of the set: |p| ≤ P_MAX
    #: The keys of the points drawn, in the order of the result's ``coords``: M, M′ and the midpoint.
    POINTS = ("M", "M2", "midpoint")
    experiment = staticmethod(ex.rank_one_slice)
    sliders = dict(theta_u=THETA_U, theta_w=THETA_W, phi=Range("φ (deg)", 0, 180, 5))

    def _figures(self) -> list[go.FigureWidget]:
        fig = go.FigureWidget()
        fig.add_surface(x=np.zeros((2, 2)), y=np.zeros((2, 2)), z=np.zeros((2, 2)), opacity=0.45,
                        colorscale=[[0, COLOURS["set"]], [1, COLOURS["set"]]], showscale=False,
                        name="rank ≤ 1 (det = 0)", showlegend=True, hoverinfo="skip")
        key_last(fig, "set")
        fig.add_scatter3d(x=[0, 0], y=[0, 0], z=[0, 0], mode="lines", name="segment M → M′",
                          line={"color": PALETTE["black"], "width": 5, "dash": "dash"})
        key_last(fig, "segment")
        for k, (name, colour) in enumerate((("M = u wᵀ", COLOURS["u"]), ("M′ (rank 1)", COLOURS["corrected"]),
                                            ("(M + M′)/2 (off the set)", COLOURS["off"]))):
            fig.add_scatter3d(x=[0], y=[0], z=[0], mode="markers", name=name, marker={"size": 7, "color": colour})
            key_last(fig, self.POINTS[k])
        lim = [-self.P_MAX - 0.05, self.P_MAX + 0.05]
        fig.update_layout(height=520, margin={"l": 0, "r": 0, "t": 30, "b": 0}, legend={"y": 0.95},
                          scene={"xaxis": {"title": {"text": "q = (M₁₁ − M₂₂)/2"}, "range": lim},
                                 "yaxis": {"title": {"text": "h = (M₁₂ + M₂₁)/2"}, "range": lim},
                                 "zaxis": {"title": {"text": "p = (M₁₁ + M₂₂)/2"}, "range": lim},
                                 "aspectmode": "cube", "camera": {"eye": {"x": 1.5, "y": 1.4, "z": 0.8}}})
        return [fig]

    def _show(self, q, theta_u, theta_w, phi):
        (p1, q1, h1, _), (p2, q2, h2, _) = q.coords[:2]  # slice coordinates (p, q, h, z) of M and M′
        fig = self.figure
        with fig.batch_update():
            sx, sy, sz = q.surface(self.P_MAX)
            put(fig, "set", x=sx, y=sy, z=sz)
            put(fig, "segment", x=[q1, q2], y=[h1, h2], z=[p1, p2])
            for key, (p, qc, h, _) in zip(self.POINTS, q.coords):
                put(fig, key, x=[qc], y=[h], z=[p])

    def words(self, q, phi, **values) -> Words:
        n = q.outcome.numbers
        shape = "a double cone (z = 0)" if q.outcome.kind == "double_cone" else "a hyperboloid of one sheet"
        tail = ("φ = 0: M′ = M, so the midpoint is M itself." if phi == 0 else
                f"Midpoint det = {n['det_mid']:.4f} ≠ 0: rank 2, off the set; the sum M + M′ = 2 × midpoint has "
                f"det = {n['det_sum']:.4f}.")
        return Words(None, "info", f"Slice z = {n['s']:.3f}: the rank-≤1 set is {shape}. det M = {n['det_M']:.1e}, "
                     f"det M′ = {n['det_M2']:.1e} (both on the set). {tail}")

    def summary(self) -> str:
        q = self.result
        return (f"Here $z = {q.s:.3f}$; $\\det M$ = {tex_number(q.det_M)} and $\\det M'$ = {tex_number(q.det_M2)} "
                f"(round-off), while $\\det\\tfrac12(M + M') = {q.det_mid:.4f}$ and "
                f"$\\det(M + M') = {q.det_sum:.4f}$: the sum of two rank-1 matrices has rank 2.")


class ChainRuleController(_LiftingFigure):
    """§3, the reply's slip: for one sample, ∂ℓ/∂u_i and ∂ℓ/∂w_j (two bar panels) from autograd on ℓ(u, w), from
    the corrected chain rule applied to autograd's ∂ℓ̃/∂M and ∂ℓ̃/∂w (ℓ̃(M, w) = ℓ(Mw/‖w‖², w)), and from the authors'
    reply's display."""

    experiment = staticmethod(ex.chain_rule_point)
    sliders = dict(model=_model_dropdown, **PARAMETERS, sample=Range("sample k", 0, DEMO_SAMPLES - 1, kind="int"))

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("∂ℓ/∂u<sub>i</sub>", "∂ℓ/∂w<sub>j</sub>", height=380, horizontal_spacing=0.1,
                     layout=dict(barmode="group", margin={"l": 50, "r": 20, "t": 50, "b": 40}))
        for col, labels in ((1, ["i = 1", "i = 2"]), (2, ["j = 1", "j = 2"])):
            for key, name, colour in (("d", "autograd on ℓ(u, w)", COLOURS["autograd"]),
                                      ("c", "corrected chain rule", COLOURS["corrected"]),
                                      ("s", "the reply's display", COLOURS["seed"])):
                fig.add_bar(x=labels, y=[0, 0], name=name, marker_color=colour, showlegend=col == 1,
                            legendgroup=name, row=1, col=col)
                key_last(fig, key + "uw"[col - 1])  # the result's field: du, cu, su, dw, cw, sw
        axes(fig, (1, 1), y="gradient component (sample k)")
        return [fig]

    def _show(self, q, **values):
        with self.figure.batch_update():
            for key in ("du", "cu", "su", "dw", "cw", "sw"):
                put(self.figure, key, y=getattr(q, key))

    def words(self, q, sample, **values) -> Words:
        n = q.outcome.numbers
        head = (f"sample {sample}: ℓ̃(u wᵀ, w) − ℓ(u, w) = {n['lift_gap']:.1e}. Corrected chain rule "
                f"matches autograd to {n['err_corrected']:.1e}")
        if q.outcome.kind == "relu_off":
            return Words(None, "warning", f"{head}. The ReLU is off on this sample (wᵀx ≤ 0): every gradient is 0 "
                         "and the two chain rules cannot differ; pick another sample.")
        return Words(None, "info", f"{head}; the reply's display is off by {n['err_seed']:.3g}, because ∂ℓ̃/∂w = "
                     f"{_fmt_vec(n['gw'])} is not zero and belongs to ∂ℓ/∂w, not ∂ℓ/∂u.")

    def summary(self) -> str:
        q = self.result
        return (f"For sample {q.k}: $\\partial\\tilde\\ell/\\partial w = {_fmt_vec(q.gw)}$; the corrected chain "
                f"rule reproduces autograd's $\\partial\\ell/\\partial u = {_fmt_vec(q.du)}$ and "
                f"$\\partial\\ell/\\partial w = {_fmt_vec(q.dw)}$ to {q.err_corrected:.1e}; the reply's display "
                f"misses by {q.err_seed:.3g}.")


class EulerController(_LiftingFigure):
    """§4, what the symmetry buys: ``L̃(M, w′)`` over the w′-plane at fixed M = u wᵀ, and the liftings' gradients.

    Left: heat map of the training loss ``L̃(M, w′) = mean_k ℓ̃(M, w′, x_k)``, constant along rays (Euler's
    identity) but not in the angle (∂L̃/∂w ≠ 0, perpendicular to w), with the arrows w and ∂L̃/∂w (from the tip
    of w, drawn at length 0.8). Right: ∂L/∂u and ∂L/∂w from autograd, from ``A_F = ∂F/∂M`` (A_F w, A_Fᵀu) and,
    where it exists, from the natural lifting.
    """

    experiment = staticmethod(ex.euler_view)
    sliders = dict(model=_model_dropdown, **PARAMETERS)

    def _figures(self) -> list[go.FigureWidget]:
        g = ex.EULER_GRID
        fig = panels("𝓛̃(M, w′) over the w′-plane, M = u wᵀ fixed", "∂L/∂u, ∂L/∂w: autograd vs liftings", height=450,
                     column_widths=[0.5, 0.5], horizontal_spacing=0.2,  # room for the colour bar
                     layout=dict(barmode="group", margin={"l": 50, "r": 20, "t": 50, "b": 40},
                                 legend={"orientation": "h", "y": -0.15}))
        fig.add_heatmap(x=g, y=g, z=np.zeros((g.size, g.size)), colorscale="Viridis", zsmooth="best",
                        colorbar={"x": 0.41, "len": 0.8, "title": {"text": "𝓛̃"}}, name="𝓛̃(M, w′)", row=1, col=1)
        key_last(fig, "loss")
        line(fig, "ray through w: 𝓛̃ constant", PALETTE["reddish_purple"], (1, 1), width=3, dash="dot", x=[0, 0],
             y=[0, 0], key="ray")
        _arrow(fig, "w", COLOURS["w"], (1, 1), key="w")
        _arrow(fig, "∂𝓛̃/∂w", COLOURS["grad"], (1, 1), key="gw")
        for key, name, colour in (("autograd", "autograd on 𝓛(u, w)", COLOURS["autograd"]),
                                  ("F", "from ∇F (w-free F)", COLOURS["F"]),
                                  ("nat", "from ∇F<sub>nat</sub> (natural)", COLOURS["natural"])):
            fig.add_bar(x=["∂L/∂u₁", "∂L/∂u₂", "∂L/∂w₁", "∂L/∂w₂"], y=[0, 0, 0, 0], name=name, marker_color=colour,
                        row=1, col=2)
            key_last(fig, key)
        axes(fig, (1, 1), "w′₁", "w′₂", xaxis=dict(range=[g[0], g[-1]]),
             yaxis=dict(range=[g[0], g[-1]], scaleanchor="x", scaleratio=1))
        axes(fig, (1, 2), y="gradient component (training loss)")
        return [fig]

    def _show(self, q, **values):
        w = q.case.w
        tip = w + 0.8 * q.gw / q.gw_norm if q.gw_norm > 0 else w
        ray = w / np.abs(w).max() * ex.EULER_GRID[-1]  # to the edge of the plotted square
        fig = self.figure
        with fig.batch_update():
            put(fig, "loss", z=q.Z)
            put(fig, "ray", x=[0, ray[0]], y=[0, ray[1]])
            _point(keyed(fig, "w"), w)
            _point(keyed(fig, "gw"), tip, tail=w)
            put(fig, "gw", name=f"∂𝓛̃/∂w (norm {q.gw_norm:.3g}, drawn at length 0.8)")
            put(fig, "autograd", y=q.autograd)
            _bars(keyed(fig, "F"), q.F, 4)
            _bars(keyed(fig, "nat"), q.nat, 4)

    def words(self, q, **values) -> Words:
        kind, n = q.outcome.kind, q.outcome.numbers
        parts = [f"Euler: w·∂𝓛̃/∂w = {n['euler']:.1e}, but ∂𝓛̃/∂w = {_fmt_vec(n['gw'])} (norm {n['gw_norm']:.3g}): "
                 "not zero, perpendicular to w."]
        if kind == "F_undefined":
            parts.append("w ⟂ e (wᵀe = 0): ŵ(M) = MᵀMe/‖MᵀMe‖ is undefined here; F is not drawn.")
        elif kind in ("sign_caveat", "other_class_even"):
            why = (" (equal here: this model is even under (u, w) → (−u, −w))." if kind == "other_class_even"
                   else " — the sign caveat of §5.")
            parts.append(f"wᵀe < 0: F describes the other sign class (−u, −w); its gradients differ from "
                         f"autograd's by {n['F_error']:.3g}{why}")
        else:
            parts.append(f"w-free F: ∇F·w and ∇Fᵀu match autograd to {n['F_error']:.1e}.")
        parts.append("The ReLU neuron has no natural lifting (sign caveat)." if "nat_error" not in n
                     else f"Natural lifting: to {n['nat_error']:.1e}.")
        return Words(None, "warning" if q.outcome.failure else "info", " ".join(parts))

    def summary(self) -> str:
        q = self.result
        return (f"At this setting $\\partial\\tilde{{\\mathcal L}}/\\partial w = {_fmt_vec(q.gw)}$ (norm "
                f"{q.gw_norm:.3g}) while $w\\cdot\\partial\\tilde{{\\mathcal L}}/\\partial w = {q.euler:.1e}$.")


class SignCaveatController(_LiftingFigure):
    """§5, the sign caveat: L(λu, w/λ) for λ > 0 and λ < 0 (the same M at ±λ) and the data each sign class uses.

    Left: the training loss along λ ∈ [−3, −1/3] ∪ [1/3, 3], two flat branches, at different heights for the ReLU
    neuron only; dashed, F(u wᵀ) of the w-free lifting, which follows the class wᵀr > 0. Right: the inputs w acts
    on, split by the sign of wᵀx, and w. Settings ``theta_u``, ``u_len``: the fixed u.
    """

    experiment = staticmethod(ex.sign_caveat_view)
    sliders = dict(model=_model_dropdown, theta_w=THETA_W, lam=Range("|λ|", -1, 1, 0.05, kind="log", base=3, fmt=".3f"))

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("L(λu, w/λ): M is the same at λ and −λ", "inputs and the sign of wᵀx", height=420,
                     column_widths=[0.55, 0.45], horizontal_spacing=0.1,
                     layout=dict(margin={"l": 50, "r": 20, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.18}))
        line(fig, "L(λu, w/λ)", PALETTE["black"], (1, 1), x=[0], y=[0], key="loss")
        line(fig, "F(u wᵀ) (class wᵀe > 0)", COLOURS["F"], (1, 1), dash="dash", x=[-3, 3], y=[0, 0], key="F")
        markers(fig, "current ±λ", [COLOURS["plus"], COLOURS["minus"]], (1, 1), size=12, x=[1, -1], y=[0, 0],
                key="current")
        markers(fig, "wᵀx > 0 (active for (u, w))", COLOURS["plus"], (1, 2), size=9, x=[0], y=[0], key="active")
        markers(fig, "wᵀx < 0 (active for (−u, −w))", COLOURS["minus"], (1, 2), size=9, symbol="diamond", x=[0], y=[0],
                key="inactive")
        line(fig, "wᵀx = 0", NEUTRALS["grey"], (1, 2), dash="dot", x=[0, 0], y=[0, 0], key="edge")
        _arrow(fig, "w", COLOURS["w"], (1, 2), key="w")
        axes(fig, (1, 1), "λ", "training loss")
        axes(fig, (1, 2), "input 1", "input 2", xaxis=dict(range=[-3.2, 3.2]),
             yaxis=dict(range=[-3.2, 3.2], scaleanchor="x2", scaleratio=1))
        return [fig]

    def _show(self, q, lam, **values):
        lams, w = q.lambdas, q.case.w
        inputs, active = q.w_inputs, q.w_active
        edge = 3.2 * np.array([-w[1], w[0]])
        fig = self.figure
        with fig.batch_update():
            put(fig, "loss", x=np.concatenate([-lams[::-1], [None], lams]),  # the two branches, apart
                y=np.concatenate([q.neg[::-1], [None], q.pos]))
            put(fig, "F", y=[q.F, q.F] if q.F is not None else [None, None])
            put(fig, "current", x=[lam, -lam], y=[q.plus, q.minus])
            put(fig, "active", x=inputs[active, 0], y=inputs[active, 1])
            put(fig, "inactive", x=inputs[~active, 0], y=inputs[~active, 1])
            put(fig, "edge", x=[-edge[0], edge[0]], y=[-edge[1], edge[1]])
            _point(keyed(fig, "w"), 1.5 * w)

    def words(self, q, model, **values) -> Words:
        n = q.outcome.numbers  # both kinds at level "info": the sign caveat is what the figure shows
        cls = "(u, w)" if n["w_dot_r"] > 0 else "(−u, −w)"
        F_text = (f"F(M) = {n['F']:.4g}, the loss of the class wᵀe > 0, here {cls}." if "F" in n
                  else "w ⟂ e: F(M) is undefined here.")
        head = (f"{get_model(model).title}: 𝓛(u, w) = {n['plus']:.4g} = 𝓛(−u, −w) = {n['minus']:.4g} — λ = −1 is a "
                "symmetry too, so the loss is a function of M alone." if q.outcome.kind == "even" else
                f"Same M (difference {n['M_diff']:.0e}), different losses: 𝓛(u, w) = {n['plus']:.4g}, "
                f"𝓛(−u, −w) = {n['minus']:.4g}: the ReLU sees the other half of the data.")
        return Words(None, "info", f"{head} {F_text}")

    def summary(self) -> str:
        q = self.result
        return (f"For the {q.case.model.title}: $\\mathcal L(u, w) = {q.plus:.4g}$ and $\\mathcal L(-u, -w) = "
                f"{q.minus:.4g}$, with $uw^\\top$ and $(-u)(-w)^\\top$ identical (difference {q.M_diff:.0e}).")


class TracesController(_LiftingFigure):
    """§6, why Theorem 3.1 does not care: two liftings, two gradients, one pair of noise traces.

    Figure 1: the batch means of A_nat = ∂F_nat/∂M and A_F = ∂F/∂M (heat maps; the ReLU neuron has no A_nat) and
    their difference, in the normal space of the rank-1 set. Figure 2: Tr Cov ∇_u ℓ and Tr Cov ∇_w ℓ from
    autograd, from A_nat and from A_F; and along the orbit (λu, w/λ) (∝ 1/λ², ∝ λ²), crossing at the balanced λ*.
    """

    experiment = staticmethod(ex.traces_view)
    sliders = dict(model=_model_dropdown, theta_w=THETA_W, lam=Range("λ", -2, 2, 0.05, kind="log", base=2, fmt=".3f"))

    def _figures(self) -> list[go.FigureWidget]:
        heat = panels("E[∇F<sub>nat</sub>] (natural lifting)", "E[∇F] (w-free lifting)",
                      "E[∇F<sub>nat</sub> − ∇F] (normal part)", height=260, horizontal_spacing=0.05,
                      shared_yaxes=True,  # the three share rows i = 1, 2: labelled once, on the left
                      layout=dict(margin={"l": 40, "r": 20, "t": 50, "b": 30}))
        for col, key in ((1, "A_nat"), (2, "A_F"), (3, "normal_part")):
            heat.add_heatmap(z=np.zeros((2, 2)), **ENTRIES, colorscale="RdBu", texttemplate="%{z:.3f}", row=1, col=col,
                             showscale=col == 3, colorbar={"title": {"text": "all three"}, "len": 0.9})
            key_last(heat, key)
        heat.update_yaxes(autorange="reversed")
        bars = panels("Theorem 3.1 traces, three ways", "traces along the orbit", height=380,
                      column_widths=[0.45, 0.55], horizontal_spacing=0.12,
                      layout=dict(barmode="group", margin={"l": 50, "r": 20, "t": 50, "b": 40},
                                  legend={"orientation": "h", "y": -0.2}))
        for key, name, colour in (("direct", "autograd on ℓ(u, w)", COLOURS["autograd"]),
                                  ("nat", "from ∇F<sub>nat</sub>", COLOURS["natural"]), ("F", "from ∇F", COLOURS["F"])):
            bars.add_bar(x=["Tr Cov ∇<sub>u</sub>ℓ", "Tr Cov ∇<sub>w</sub>ℓ"], y=[0, 0], name=name,
                         marker_color=colour, row=1, col=1)
            key_last(bars, key)
        line(bars, "Tr Cov ∇<sub>u</sub>ℓ (∝ 1/λ²)", COLOURS["u"], (1, 2), x=ex.TRACES_LAMBDAS, y=ex.TRACES_LAMBDAS,
             key="orbit_u")
        line(bars, "Tr Cov ∇<sub>w</sub>ℓ (∝ λ²)", COLOURS["w"], (1, 2), x=ex.TRACES_LAMBDAS, y=ex.TRACES_LAMBDAS,
             key="orbit_w")
        markers(bars, "current λ", [COLOURS["u"], COLOURS["w"]], (1, 2), size=10, x=[1, 1], y=[0, 0], key="current")
        markers(bars, "balanced λ*", PALETTE["black"], (1, 2), size=13, symbol="star", x=[1], y=[0], key="balanced")
        axes(bars, (1, 1), y="trace")
        axes(bars, (1, 2), "λ", "trace (log scale)", xaxis=dict(type="log", minorloglabels="complete"),
             yaxis=dict(type="log", minorloglabels="complete"))
        return [heat, bars]

    def _show(self, q, model, theta_w, lam):
        heat, bars = self.figures
        maps = [np.zeros((2, 2)) if z is None else z for z in (q.A_nat, q.A_F, q.normal_part)]
        # one colour scale for the three maps, from the new values (inside batch_update, t.z still reads the old ones)
        top = max(float(np.abs(z).max()) for z in maps) or 1.0
        with heat.batch_update():
            for key, z in zip(("A_nat", "A_F", "normal_part"), maps):
                put(heat, key, z=z, zmin=-top, zmax=top)
            heat.layout.annotations[0].text = ("E[∇F<sub>nat</sub>] (natural lifting)" if q.A_nat is not None
                                               else "no natural lifting (ReLU)")
            heat.layout.annotations[1].text = "E[∇F] (w-free lifting)" if q.A_F is not None else "F undefined (w ⟂ e)"
        tiny = np.finfo(float).tiny  # the floor of the log axis
        with bars.batch_update():
            put(bars, "direct", y=list(q.direct))
            _bars(keyed(bars, "nat"), q.nat, 2)
            _bars(keyed(bars, "F"), q.F, 2)
            orbit_u, orbit_w = np.maximum(q.orbit_traces(ex.TRACES_LAMBDAS), tiny)
            put(bars, "orbit_u", y=orbit_u)
            put(bars, "orbit_w", y=orbit_w)
            put(bars, "current", x=[lam, lam], y=[max(q.direct[0], tiny), max(q.direct[1], tiny)])
            put(bars, "balanced", x=[] if q.lam_star is None else [q.lam_star],
                y=[] if q.lam_star is None else [max(q.balanced_trace, tiny)])

    def words(self, q, **values) -> Words:
        kind, n = q.outcome.kind, q.outcome.numbers
        tu, tw = n["Tr_u"], n["Tr_w"]
        text = _sentences(
            f"Tr Cov ∇_u ℓ = {tu:.4g}, Tr Cov ∇_w ℓ = {tw:.4g} (autograd).",
            "nat_error" in n and f"From E[∇Fₙₐₜ]: equal to {n['nat_error']:.1e}.",
            kind != "F_undefined" and (f"wᵀe < 0: F describes (−u, −w), whose traces differ by "
                                       f"{n['F_error']:.3g} (sign caveat)." if kind == "sign_caveat" else
                                       f"From E[∇F]: equal to {n['F_error']:.1e}."),
            "normal_norm" in n and f"Yet ‖E[∇Fₙₐₜ] − E[∇F]‖ = {n['normal_norm']:.3g}.",
            "nat_error" not in n and "ReLU neuron: no natural lifting; F only.",
            kind == "F_undefined" and "w ⟂ e: F undefined here.",
            "lam_star" in n and f"Balanced at λ* = {n['lam_star']:.3g}; here dG/dt = T(Tr_u − Tr_w) "
                                       f"{'raises' if tu > tw else 'lowers'} G, which pushes λ towards λ*.")
        return Words(None, "warning" if q.outcome.failure else "info", text)

    def summary(self) -> str:
        q = self.result
        tu, tw = q.direct
        text = (f"Autograd gives $\\mathrm{{Tr\\,Cov}}\\,\\nabla_u\\ell = {tu:.4g}$ and "
                f"$\\mathrm{{Tr\\,Cov}}\\,\\nabla_w\\ell = {tw:.4g}$")
        if q.nat is not None and q.F is not None:
            text += (f"; $\\nabla F_\\mathrm{{nat}}$ gives ({q.nat[0]:.4g}, {q.nat[1]:.4g}) and $\\nabla F$ gives "
                     f"({q.F[0]:.4g}, {q.F[1]:.4g}), although $\\|E[\\nabla F_\\mathrm{{nat}}] - E[\\nabla F]\\| = "
                     f"{np.linalg.norm(q.normal_part):.3g}$")
        if q.lam_star is not None:
            text += f". The noise-balanced point on this orbit is $\\lambda^* = {q.lam_star:.3g}$"
        return text + "."
