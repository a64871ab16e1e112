"""Figures of Notebook 02 (the rank-1 lifting): one draw-only controller per figure.

Each controller reads its sliders, calls one function of :mod:`symsgd_core.lifting.experiments` (torch
autograd in float64 at the notebook's 2-D cases: u, w ∈ R², 16 samples, fixed data, reference ``r = e₁``),
keeps the frozen result in ``self.result``, draws it, and says in the status line what the figure shows
(including where a construction is undefined: ``wᵀr ≤ 0`` for the w-free lifting, no natural lifting for
a ReLU neuron). Analytic: every controller updates live (target ≤ 100 ms per update).

Controllers: :class:`OrbitController` (§1), :class:`RankOneSetController` (§2),
:class:`ChainRuleController` (§3), :class:`EulerController` (§4), :class:`SignCaveatController` (§5),
:class:`TracesController` (§6). Exercises (§7): :data:`symsgd_core.lifting.EXERCISES`.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.validation import check_array
from ..lifting.experiments import (
    DEMO_SAMPLES,
    EULER_GRID,
    ORBIT_GRID,
    ORBIT_RANGE,
    SIGN_LAMBDAS,
    chain_rule_point,
    euler_view,
    orbit_sweep,
    orbit_view,
    rank_one_slice,
    sign_caveat,
    traces_view,
)
from ..lifting.liftings import polar
from ..lifting.models import LiftingCase
from .base import Controller
from .sliders import Range
from .style import NEUTRALS, PALETTE, colours

__all__ = ["ChainRuleController", "EulerController", "OrbitController", "RankOneSetController",
           "SignCaveatController", "TracesController"]

COLOURS = colours(u="blue", w="orange", grad="vermillion", autograd="grey", corrected="bluish_green",
                  seed="vermillion", F="reddish_purple", natural="sky_blue", set="sky_blue", off="vermillion",
                  plus="blue", minus="orange")

MODEL_OPTIONS = [("linear layer", "linear"), ("bilinear attention score", "attention"), ("ReLU neuron", "relu")]


def _model_dropdown(value: str) -> widgets.Dropdown:
    return widgets.Dropdown(options=MODEL_OPTIONS, value=value, description="model",
                            layout=widgets.Layout(width="280px"))


#: The sliders of the parameters u = ‖u‖(cos θ_u, sin θ_u), w = ‖w‖(cos θ_w, sin θ_w) (degrees).
THETA_U = Range("θ_u (deg)", -180, 180, 5)
THETA_W = THETA_U.but(description="θ_w (deg)")
U_LEN = Range("‖u‖", 0.2, 2.5, 0.05)
W_LEN = U_LEN.but(description="‖w‖")
PARAMETERS = dict(theta_u=THETA_U, u_len=U_LEN, theta_w=THETA_W, w_len=W_LEN)


class _LiftingFigure(Controller):
    """A figure of Notebook 02: declared sliders 260 px wide; its figures are drawn once as plain ``go.Figure``s
    before they become ``FigureWidget``s.

    Why: a multi-trace ``batch_update`` of a ``FigureWidget`` made before its first view exists reaches
    the browser as a restyle that resets the untouched properties of the other traces (x arrays,
    names, heat-map labels were lost in JupyterLab 4.6 / plotly 7.1); with a live view it works.
    """

    slider_width = "260px"

    def _build_declared(self, settings: dict) -> None:
        super()._build_declared(settings)
        self.figures = [go.FigureWidget(f) for f in self.figures]


def _fmt_vec(v, digits: int = 3) -> str:
    return "(" + ", ".join(f"{x:.{digits}g}" for x in np.ravel(v)) + ")"


def _arrow(x0, y0, x1, y1):
    """x and y lists of an arrow from (x0, y0) to (x1, y1) (the trace draws the head at the tip)."""
    return [x0, x1], [y0, y1]


def _arrow_trace(name, colour, **kw):
    return go.Scatter(x=[0, 0], y=[0, 0], mode="lines+markers", name=name, line={"color": colour, "width": 4},
                      marker={"symbol": "arrow", "size": [0, 16], "angleref": "previous", "color": colour}, **kw)


# ---------------------------------------------------------------------------------------------
# §1 Orbits collapse to points
# ---------------------------------------------------------------------------------------------
class OrbitController(_LiftingFigure):
    """(λu, w/λ) moves along its orbit while M = u wᵀ and the loss stay fixed.

    Panels: (a) the vectors λu and w/λ in the plane, with the rays they move on; (b) the four
    entries of M (a heat map that does not change); (c) along the orbit, the training loss L (flat)
    and G = ‖λu‖² − ‖w/λ‖² (what moves), with the current λ marked.
    Controls: ``lam`` (λ, log scale), ``model``. Settings ``u0``, ``w0``: the base point (default
    ``1.2·(cos 35°, sin 35°)`` and ``0.6·(cos −20°, sin −20°)``).
    """

    LAM_RANGE = ORBIT_RANGE

    experiment = staticmethod(orbit_view)
    sliders = dict(lam=Range("λ", -1.5, 1.5, 0.05, kind="log", base=2, fmt=".3f"), model=_model_dropdown)

    def _figures(self) -> list[go.Figure]:
        self.u0 = check_array("u0", self.settings["u0"], shape=(2,))
        self.w0 = check_array("w0", self.settings["w0"], shape=(2,))
        fig = make_subplots(1, 3, column_widths=[0.36, 0.24, 0.40], horizontal_spacing=0.08,
                            subplot_titles=["(λu, w/λ) in the plane", "M = (λu)(w/λ)ᵀ", "along the orbit"])
        lo, hi = self.LAM_RANGE
        for vec, name, colour in ((self.u0, "ray of λu", COLOURS["u"]), (self.w0, "ray of w/λ", COLOURS["w"])):
            s = np.array([lo, hi]) if name.endswith("λu") else np.array([1 / hi, 1 / lo])
            fig.add_trace(go.Scatter(x=s * vec[0], y=s * vec[1], mode="lines", name=name, showlegend=False,
                                     line={"color": colour, "width": 8}, opacity=0.2), 1, 1)
        fig.add_trace(_arrow_trace("λu", COLOURS["u"]), 1, 1)
        fig.add_trace(_arrow_trace("w/λ", COLOURS["w"]), 1, 1)
        fig.add_trace(go.Heatmap(z=np.zeros((2, 2)), x=["j = 1", "j = 2"], y=["i = 1", "i = 2"],
                                 colorscale="RdBu", zmid=0, showscale=False, texttemplate="%{z:.4f}",
                                 name="M"), 1, 2)
        grid = ORBIT_GRID
        self._grid = grid
        fig.add_trace(go.Scatter(x=grid, y=np.zeros_like(grid), mode="lines", name="loss L",
                                 line={"color": PALETTE["black"]}), 1, 3)
        fig.add_trace(go.Scatter(x=grid, y=np.zeros_like(grid), mode="lines", name="G = ‖λu‖² − ‖w/λ‖²",
                                 line={"color": COLOURS["grad"], "dash": "dash"}), 1, 3)
        fig.add_trace(go.Scatter(x=[1, 1], y=[0, 0], mode="markers", name="current λ",
                                 marker={"size": 11, "color": [PALETTE["black"], COLOURS["grad"]]}), 1, 3)
        r = 1.08 * max(hi * np.linalg.norm(self.u0), np.linalg.norm(self.w0) / lo)
        fig.update_xaxes(range=[-r, r], title_text="coordinate 1", row=1, col=1)
        fig.update_yaxes(range=[-r, r], title_text="coordinate 2", scaleanchor="x", scaleratio=1, row=1, col=1)
        fig.update_yaxes(autorange="reversed", row=1, col=2)
        fig.update_xaxes(type="log", title_text="λ", minorloglabels="complete", row=1, col=3)
        fig.update_yaxes(title_text="L and G on the orbit", row=1, col=3)
        fig.update_layout(height=400, margin={"l": 50, "r": 20, "t": 50, "b": 50},
                          legend={"orientation": "h", "y": -0.22})
        return [fig]

    def case(self) -> LiftingCase:
        """The current point (λu, w/λ) with the notebook's data."""
        return self.result.case

    def base_case(self) -> LiftingCase:
        return self.result.base

    def _update(self, lam, model):
        q = self.result = orbit_view(model=model, lam=lam, u0=self.u0, w0=self.w0, lambdas=self._grid)
        fig = self.figure
        with fig.batch_update():
            fig.data[2].x, fig.data[2].y = _arrow(0, 0, *q.case.u)
            fig.data[3].x, fig.data[3].y = _arrow(0, 0, *q.case.w)
            fig.data[4].z = q.M
            fig.data[5].y = q.losses
            fig.data[6].y = q.G_curve
            fig.data[7].x, fig.data[7].y = [lam, lam], [q.loss, q.G]
        dM = float(np.max(np.abs(q.M - q.M0)))
        self.say(f"λ = {lam:.3f}: λu = {_fmt_vec(q.case.u)}, w/λ = {_fmt_vec(q.case.w)}. M did not move (largest "
                 f"entry change {dM:.1e}); loss L = {q.loss:.6g} (change {abs(q.loss - q.loss0):.1e}). "
                 f"What moved: G = ‖λu‖² − ‖w/λ‖² = {q.G:.4g} (was {q.G0:.4g} at λ = 1).")

    def summary(self) -> str:
        """Markdown sentence with the numbers of the current setting and of the whole slider range."""
        q, sw = self.result, orbit_sweep(self.controls["model"].value, self.u0, self.w0)
        lo, hi = self.LAM_RANGE
        return (f"Now λ = {q.lam:.3g}: λu = {_fmt_vec(q.case.u)}, w/λ = {_fmt_vec(q.case.w)}. Over the whole slider "
                f"range λ ∈ [{lo:.3g}, {hi:.3g}] the entries of M = u wᵀ change by at most {sw.M_change:.1e} and "
                f"the training loss ({sw.loss0:.6g}, {self.controls['model'].label}) by at most "
                f"{sw.loss_change:.1e} — round-off — while G = ‖λu‖² − ‖w/λ‖² runs from {sw.G_min:.3g} to "
                f"{sw.G_max:.3g}.")


# ---------------------------------------------------------------------------------------------
# §2 The rank-1 set
# ---------------------------------------------------------------------------------------------
class RankOneSetController(_LiftingFigure):
    """The 2×2 matrices of rank ≤ 1 in the slice ``z = z_M`` of coordinates ``(q, h, p)``.

    ``M = [[p+q, h+z], [h−z, p−q]]`` (p half trace, (q, h) symmetric traceless, z antisymmetric),
    ``det M = p² + z² − q² − h²``: at fixed z the rank-≤1 set is the surface ``q² + h² = p² + z²``.
    Points: ``M = u wᵀ`` (unit u, w at angles θ_u, θ_w), ``M′ = R M Rᵀ`` (R = rotation by φ/2 applied
    to u and w: same p and z, (q, h) turned by φ), and the midpoint ``(M + M′)/2`` — off the set.
    Controls: ``theta_u``, ``theta_w``, ``phi`` (degrees).
    """

    P_MAX = 0.8

    experiment = staticmethod(rank_one_slice)
    sliders = dict(theta_u=THETA_U, theta_w=THETA_W, phi=Range("φ (deg)", 0, 180, 5))

    def _figures(self) -> list[go.Figure]:
        fig = go.Figure()
        fig.add_trace(go.Surface(x=np.zeros((2, 2)), y=np.zeros((2, 2)), z=np.zeros((2, 2)), opacity=0.45,
                                 colorscale=[[0, COLOURS["set"]], [1, COLOURS["set"]]], showscale=False,
                                 name="rank ≤ 1 (det = 0)", showlegend=True, hoverinfo="skip"))
        fig.add_trace(go.Scatter3d(x=[0, 0], y=[0, 0], z=[0, 0], mode="lines", name="segment M → M′",
                                   line={"color": PALETTE["black"], "width": 5, "dash": "dash"}))
        for name, colour in (("M = u wᵀ", COLOURS["u"]), ("M′ (rank 1)", COLOURS["corrected"]),
                             ("(M + M′)/2 (off the set)", COLOURS["off"])):
            fig.add_trace(go.Scatter3d(x=[0], y=[0], z=[0], mode="markers", name=name,
                                       marker={"size": 7, "color": colour}))
        lim = [-self.P_MAX - 0.05, self.P_MAX + 0.05]
        fig.update_layout(height=520, margin={"l": 0, "r": 0, "t": 30, "b": 0}, legend={"y": 0.95},
                          scene={"xaxis": {"title": {"text": "q = (M₁₁ − M₂₂)/2"}, "range": lim},
                                 "yaxis": {"title": {"text": "h = (M₁₂ + M₂₁)/2"}, "range": lim},
                                 "zaxis": {"title": {"text": "p = (M₁₁ + M₂₂)/2"}, "range": lim},
                                 "aspectmode": "cube", "camera": {"eye": {"x": 1.5, "y": 1.4, "z": 0.8}}})
        return [fig]

    def _update(self, theta_u, theta_w, phi):
        q = self.result = rank_one_slice(theta_u=theta_u, theta_w=theta_w, phi=phi)
        s = q.s
        p = np.linspace(-self.P_MAX, self.P_MAX, 33)
        ang = np.linspace(0, 2 * np.pi, 49)
        rho = np.sqrt(p ** 2 + s ** 2)[:, None]
        X, Y, Z = rho * np.cos(ang)[None, :], rho * np.sin(ang)[None, :], np.repeat(p[:, None], ang.size, 1)
        (p1, q1, r1, _), (p2, q2, r2, _), (pm, qm, rm, _) = q.coords
        fig = self.figure
        with fig.batch_update():
            fig.data[0].x, fig.data[0].y, fig.data[0].z = X, Y, Z
            fig.data[1].x, fig.data[1].y, fig.data[1].z = [q1, q2], [r1, r2], [p1, p2]
            fig.data[2].x, fig.data[2].y, fig.data[2].z = [q1], [r1], [p1]
            fig.data[3].x, fig.data[3].y, fig.data[3].z = [q2], [r2], [p2]
            fig.data[4].x, fig.data[4].y, fig.data[4].z = [qm], [rm], [pm]
        shape = "a double cone (z = 0)" if q.double_cone else "a hyperboloid of one sheet"
        tail = ("φ = 0: M′ = M, so the midpoint is M itself." if phi == 0 else
                f"Midpoint det = {q.det_mid:.4f} ≠ 0: rank 2, off the set; the sum M + M′ = 2 × midpoint has "
                f"det = {q.det_sum:.4f}.")
        self.say(f"Slice z = {s:.3f}: the rank-≤1 set is {shape}. det M = {q.det_M:.1e}, det M′ = "
                 f"{q.det_M2:.1e} (both on the set). {tail}")

    def summary(self) -> str:
        q = self.result
        return (f"Here $z = {q.s:.3f}$; $\\det M = {q.det_M:.1e}$ and $\\det M' = {q.det_M2:.1e}$ "
                f"(round-off), while $\\det\\tfrac12(M + M') = {q.det_mid:.4f}$ and "
                f"$\\det(M + M') = {q.det_sum:.4f}$: the sum of two rank-1 matrices has rank 2.")


# ---------------------------------------------------------------------------------------------
# §3 The construction and the reply's slip
# ---------------------------------------------------------------------------------------------
class ChainRuleController(_LiftingFigure):
    """The corrected chain rule against autograd, and the authors' reply's display, for one sample.

    Two bar panels: ∂ℓ/∂u_i and ∂ℓ/∂w_j from autograd on ℓ(u, w), from the corrected chain rule
    applied to autograd's ∂ℓ̃/∂M and ∂ℓ̃/∂w (ℓ̃(M, w) = ℓ(Mw/‖w‖², w)), and from the reply's display.
    Controls: ``model``, ``theta_u``, ``u_len``, ``theta_w``, ``w_len``, ``sample``.
    """

    experiment = staticmethod(chain_rule_point)
    sliders = dict(model=_model_dropdown, **PARAMETERS, sample=Range("sample k", 0, DEMO_SAMPLES - 1, kind="int"))

    def _figures(self) -> list[go.Figure]:
        fig = make_subplots(1, 2, subplot_titles=["∂ℓ/∂u<sub>i</sub>", "∂ℓ/∂w<sub>j</sub>"], horizontal_spacing=0.1)
        for col, labels in ((1, ["i = 1", "i = 2"]), (2, ["j = 1", "j = 2"])):
            for name, colour in (("autograd on ℓ(u, w)", COLOURS["autograd"]),
                                 ("corrected chain rule", COLOURS["corrected"]),
                                 ("the reply's display", COLOURS["seed"])):
                fig.add_trace(go.Bar(x=labels, y=[0, 0], name=name, marker_color=colour, showlegend=col == 1,
                                     legendgroup=name), 1, col)
        fig.update_yaxes(title_text="gradient component (sample k)", row=1, col=1)
        fig.update_layout(barmode="group", height=380, margin={"l": 50, "r": 20, "t": 50, "b": 40})
        return [fig]

    def case(self) -> LiftingCase:
        return self.result.case

    def _update(self, model, theta_u, u_len, theta_w, w_len, sample):
        q = self.result = chain_rule_point(model=model, theta_u=theta_u, u_len=u_len, theta_w=theta_w, w_len=w_len,
                                           sample=sample)
        fig = self.figure
        with fig.batch_update():
            for i, y in enumerate((q.du, q.cu, q.su, q.dw, q.cw, q.sw)):
                fig.data[i].y = y
        head = (f"sample {q.k}: ℓ̃(u wᵀ, w) − ℓ(u, w) = {q.lifted - q.loss:.1e}. Corrected chain rule "
                f"matches autograd to {q.err_corrected:.1e}")
        if q.relu_off:
            self.say(f"{head}. The ReLU is off on this sample (wᵀx ≤ 0): every gradient is 0 and the two chain "
                     "rules cannot differ; pick another sample.", "warning")
            return
        self.say(f"{head}; the reply's display is off by {q.err_seed:.3g}, because ∂ℓ̃/∂w = {_fmt_vec(q.gw)} "
                 "is not zero and belongs to ∂ℓ/∂w, not ∂ℓ/∂u.")

    def summary(self) -> str:
        q = self.result
        return (f"For sample {q.k}: $\\partial\\tilde\\ell/\\partial w = {_fmt_vec(q.gw)}$; the corrected chain "
                f"rule reproduces autograd's $\\partial\\ell/\\partial u = {_fmt_vec(q.du)}$ and "
                f"$\\partial\\ell/\\partial w = {_fmt_vec(q.dw)}$ to {q.err_corrected:.1e}; the reply's display "
                f"misses by {q.err_seed:.3g}.")


# ---------------------------------------------------------------------------------------------
# §4 What the symmetry buys, and what it does not
# ---------------------------------------------------------------------------------------------
class EulerController(_LiftingFigure):
    """Level sets of ``L̃(M, w′)`` over the w′-plane at fixed M = u wᵀ, with w and ∂L̃/∂w; and the
    w-free lifting's (and natural lifting's) gradient identities.

    Left: heat map of the training loss ``L̃(M, w′) = mean_k ℓ̃(M, w′, x_k)``: constant along rays
    (Euler's identity), varying with the angle (so ∂L̃/∂w ≠ 0, perpendicular to w). Arrows: w and
    ∂L̃/∂w (drawn from the tip of w, scaled to length 0.8; true norm in the legend). Right: ∂L/∂u and
    ∂L/∂w from autograd, from ``A_F = ∂F/∂M`` (A_F w, A_Fᵀu) and, where it exists, from the natural
    lifting. Controls: ``model``, ``theta_u``, ``u_len``, ``theta_w``, ``w_len``.
    """

    GRID = EULER_GRID

    experiment = staticmethod(euler_view)
    sliders = dict(model=_model_dropdown, **PARAMETERS)

    def _figures(self) -> list[go.Figure]:
        fig = make_subplots(1, 2, column_widths=[0.5, 0.5], horizontal_spacing=0.2,  # room for the colour bar
                            subplot_titles=["𝓛̃(M, w′) over the w′-plane, M = u wᵀ fixed",
                                            "∂L/∂u, ∂L/∂w: autograd vs liftings"])
        fig.add_trace(go.Heatmap(x=self.GRID, y=self.GRID, z=np.zeros((self.GRID.size, self.GRID.size)),
                                 colorscale="Viridis", colorbar={"x": 0.41, "len": 0.8, "title": {"text": "𝓛̃"}},
                                 zsmooth="best", name="𝓛̃(M, w′)"), 1, 1)
        fig.add_trace(go.Scatter(x=[0, 0], y=[0, 0], mode="lines", name="ray through w: 𝓛̃ constant",
                                 line={"color": PALETTE["reddish_purple"], "dash": "dot", "width": 3}), 1, 1)
        fig.add_trace(_arrow_trace("w", COLOURS["w"]), 1, 1)
        fig.add_trace(_arrow_trace("∂𝓛̃/∂w", COLOURS["grad"]), 1, 1)
        labels = ["∂L/∂u₁", "∂L/∂u₂", "∂L/∂w₁", "∂L/∂w₂"]
        for name, colour in (("autograd on 𝓛(u, w)", COLOURS["autograd"]), ("from ∇F (w-free F)", COLOURS["F"]),
                             ("from ∇F<sub>nat</sub> (natural)", COLOURS["natural"])):
            fig.add_trace(go.Bar(x=labels, y=[0, 0, 0, 0], name=name, marker_color=colour), 1, 2)
        fig.update_xaxes(range=[self.GRID[0], self.GRID[-1]], title_text="w′₁", row=1, col=1)
        fig.update_yaxes(range=[self.GRID[0], self.GRID[-1]], title_text="w′₂", scaleanchor="x", scaleratio=1,
                         row=1, col=1)
        fig.update_yaxes(title_text="gradient component (training loss)", row=1, col=2)
        fig.update_layout(barmode="group", height=450, margin={"l": 50, "r": 20, "t": 50, "b": 40},
                          legend={"orientation": "h", "y": -0.15})
        return [fig]

    def case(self) -> LiftingCase:
        return self.result.case

    def _update(self, model, theta_u, u_len, theta_w, w_len):
        q = self.result = euler_view(model=model, theta_u=theta_u, u_len=u_len, theta_w=theta_w, w_len=w_len)
        case = q.case
        Z = q.Z
        w = case.w
        tip = w + 0.8 * q.gw / q.gw_norm if q.gw_norm > 0 else w
        ray = w / np.abs(w).max() * self.GRID[-1]  # to the edge of the plotted square
        auto = np.concatenate([q.du, q.dw])
        fig = self.figure
        with fig.batch_update():
            fig.data[0].z = Z
            fig.data[1].x, fig.data[1].y = [0, ray[0]], [0, ray[1]]
            fig.data[2].x, fig.data[2].y = _arrow(0, 0, *w)
            fig.data[3].x, fig.data[3].y = _arrow(w[0], w[1], tip[0], tip[1])
            fig.data[3].name = f"∂𝓛̃/∂w (norm {q.gw_norm:.3g}, drawn at length 0.8)"
            fig.data[4].y = auto
            fig.data[5].y = q.F if q.F is not None else [0, 0, 0, 0]
            fig.data[5].visible = q.F is not None
            fig.data[6].y = q.nat if q.nat is not None else [0, 0, 0, 0]
            fig.data[6].visible = q.nat is not None
        parts = [f"Euler: w·∂𝓛̃/∂w = {q.euler:.1e}, but ∂𝓛̃/∂w = {_fmt_vec(q.gw)} (norm {q.gw_norm:.3g}): "
                 "not zero, perpendicular to w."]
        level = "info"
        if q.F is None:
            parts.append("w ⟂ e (wᵀe = 0): ŵ(M) = MᵀMe/‖MᵀMe‖ is undefined here; F is not drawn.")
            level = "warning"
        else:
            err = float(np.abs(q.F - auto).max())
            if case.other_sign_class:
                parts.append(f"wᵀe < 0: F describes the other sign class (−u, −w); its gradients differ from "
                             f"autograd's by {err:.3g}" + (" (equal here: this model is even under (u, w) → (−u, −w))."
                                                            if case.model.negation_symmetric else
                                                            " — the sign caveat of §5."))
                level = "warning" if not case.model.negation_symmetric else "info"
            else:
                parts.append(f"w-free F: ∇F·w and ∇Fᵀu match autograd to {err:.1e}.")
        if q.nat is not None:
            parts.append(f"Natural lifting: to {float(np.abs(q.nat - auto).max()):.1e}.")
        else:
            parts.append("The ReLU neuron has no natural lifting (sign caveat).")
        self.say(" ".join(parts), level)

    def summary(self) -> str:
        q = self.result
        return (f"At this setting $\\partial\\tilde{{\\mathcal L}}/\\partial w = {_fmt_vec(q.gw)}$ (norm "
                f"{q.gw_norm:.3g}) "
                f"while $w\\cdot\\partial\\tilde{{\\mathcal L}}/\\partial w = {q.euler:.1e}$.")


# ---------------------------------------------------------------------------------------------
# §5 The sign caveat
# ---------------------------------------------------------------------------------------------
class SignCaveatController(_LiftingFigure):
    """L(λu, w/λ) for λ > 0 and λ < 0 — the same M at ±λ — and the data each sign class uses.

    Left: the training loss along λ ∈ [−3, −1/3] ∪ [1/3, 3]: two flat branches (λ > 0 is the
    symmetry); for the ReLU neuron at different heights, for the linear layer and attention score at
    the same height. Dashed: F(u wᵀ), the w-free lifting, which follows the class wᵀr > 0. Right: the
    inputs (the w-side inputs z for the attention score), split by the sign of wᵀx, with w.
    Controls: ``model``, ``theta_w``, ``lam`` (|λ| of the two marked points).
    """

    sliders = dict(model=_model_dropdown, theta_w=THETA_W, lam=Range("|λ|", -1, 1, 0.05, kind="log", base=3, fmt=".3f"))

    def __init__(self, model: str = "relu", theta_u: float = 100.0, u_len: float = 2.0, theta_w: float = 45.0,
                 lam: float = 1.0) -> None:
        self.u0 = polar(theta_u, u_len)
        super().__init__(model=model, theta_w=theta_w, lam=lam)

    def _figures(self) -> list[go.Figure]:
        fig = make_subplots(1, 2, column_widths=[0.55, 0.45], horizontal_spacing=0.1,
                            subplot_titles=["L(λu, w/λ): M is the same at λ and −λ", "inputs and the sign of wᵀx"])
        self._lams = SIGN_LAMBDAS
        fig.add_trace(go.Scatter(x=[0], y=[0], mode="lines", name="L(λu, w/λ)", line={"color": PALETTE["black"]}), 1, 1)
        fig.add_trace(go.Scatter(x=[-3, 3], y=[0, 0], mode="lines", name="F(u wᵀ) (class wᵀe > 0)",
                                 line={"color": COLOURS["F"], "dash": "dash"}), 1, 1)
        fig.add_trace(go.Scatter(x=[1, -1], y=[0, 0], mode="markers", name="current ±λ",
                                 marker={"size": 12, "color": [COLOURS["plus"], COLOURS["minus"]]}), 1, 1)
        fig.add_trace(go.Scatter(x=[0], y=[0], mode="markers", name="wᵀx > 0 (active for (u, w))",
                                 marker={"color": COLOURS["plus"], "size": 9}), 1, 2)
        fig.add_trace(go.Scatter(x=[0], y=[0], mode="markers", name="wᵀx < 0 (active for (−u, −w))",
                                 marker={"color": COLOURS["minus"], "size": 9, "symbol": "diamond"}), 1, 2)
        fig.add_trace(go.Scatter(x=[0, 0], y=[0, 0], mode="lines", name="wᵀx = 0",
                                 line={"color": NEUTRALS["grey"], "dash": "dot"}), 1, 2)
        fig.add_trace(_arrow_trace("w", COLOURS["w"]), 1, 2)
        fig.update_xaxes(title_text="λ", row=1, col=1)
        fig.update_yaxes(title_text="training loss", row=1, col=1)
        fig.update_xaxes(range=[-3.2, 3.2], title_text="input 1", row=1, col=2)
        fig.update_yaxes(range=[-3.2, 3.2], title_text="input 2", scaleanchor="x2", scaleratio=1, row=1, col=2)
        fig.update_layout(height=420, margin={"l": 50, "r": 20, "t": 50, "b": 40},
                          legend={"orientation": "h", "y": -0.18})
        return [fig]

    def case(self) -> LiftingCase:
        return self.result.case

    def _update(self, model, theta_w, lam):
        q = self.result = sign_caveat(model=model, theta_w=theta_w, u=self.u0, lambdas=self._lams)
        case = q.case
        lams = q.lambdas
        xs = np.concatenate([-lams[::-1], [None], lams])
        ys = np.concatenate([q.neg[::-1], [None], q.pos])
        inputs = case.data["z"] if case.model.key == "attention" else case.data["x"]
        side = inputs @ case.w
        w = case.w
        edge = 3.2 * np.array([-w[1], w[0]])
        fig = self.figure
        with fig.batch_update():
            fig.data[0].x, fig.data[0].y = xs, ys
            fig.data[1].y = [q.F, q.F] if q.F is not None else [None, None]
            fig.data[2].x, fig.data[2].y = [lam, -lam], [q.plus, q.minus]
            fig.data[3].x, fig.data[3].y = inputs[side > 0, 0], inputs[side > 0, 1]
            fig.data[4].x, fig.data[4].y = inputs[side <= 0, 0], inputs[side <= 0, 1]
            fig.data[5].x, fig.data[5].y = [-edge[0], edge[0]], [-edge[1], edge[1]]
            fig.data[6].x, fig.data[6].y = _arrow(0, 0, *(1.5 * w))
        cls = "(u, w)" if q.w_dot_r > 0 else "(−u, −w)"
        F_text = (f"F(M) = {q.F:.4g}, the loss of the class wᵀe > 0, here {cls}." if q.F is not None
                  else "w ⟂ e: F(M) is undefined here.")
        if case.model.negation_symmetric:
            head = (f"{case.model.title}: 𝓛(u, w) = {q.plus:.4g} = 𝓛(−u, −w) = {q.minus:.4g} — λ = −1 is a "
                    "symmetry too, so the loss is a function of M alone.")
        else:
            head = (f"Same M (difference {q.M_diff:.0e}), different losses: 𝓛(u, w) = {q.plus:.4g}, "
                    f"𝓛(−u, −w) = {q.minus:.4g}: the ReLU sees the other half of the data.")
        self.say(f"{head} {F_text}")

    def summary(self) -> str:
        q = self.result
        return (f"For the {q.case.model.title}: $\\mathcal L(u, w) = {q.plus:.4g}$ and $\\mathcal L(-u, -w) = "
                f"{q.minus:.4g}$, "
                f"with $uw^\\top$ and $(-u)(-w)^\\top$ identical (difference {q.M_diff:.0e}).")


# ---------------------------------------------------------------------------------------------
# §6 Why Theorem 3.1 does not care
# ---------------------------------------------------------------------------------------------
class TracesController(_LiftingFigure):
    """Two liftings, two gradients, one pair of noise traces.

    Figure 1: the batch means of A_nat = ∂F_nat/∂M and A_F = ∂F/∂M (heat maps, side by side; the
    ReLU neuron has no A_nat) and their difference, which lies in the normal space of the rank-1 set.
    Figure 2: left, Tr Cov ∇_u ℓ and Tr Cov ∇_w ℓ from autograd, from A_nat and from A_F; right, the
    traces along the orbit (λu, w/λ) (∝ 1/λ² and ∝ λ²), crossing at the noise-balanced λ*.
    Controls: ``model``, ``theta_w``, ``lam`` (position on the orbit).
    """

    experiment = staticmethod(traces_view)
    sliders = dict(model=_model_dropdown, theta_w=THETA_W, lam=Range("λ", -2, 2, 0.05, kind="log", base=2, fmt=".3f"))

    def _figures(self) -> list[go.Figure]:
        self.theta_u = float(self.settings["theta_u"])
        heat = make_subplots(1, 3, subplot_titles=["E[∇F<sub>nat</sub>] (natural lifting)", "E[∇F] (w-free lifting)",
                                                   "E[∇F<sub>nat</sub> − ∇F] (normal part)"], horizontal_spacing=0.08)
        for col in (1, 2, 3):
            heat.add_trace(go.Heatmap(z=np.zeros((2, 2)), x=["j = 1", "j = 2"], y=["i = 1", "i = 2"],
                                      colorscale="RdBu", showscale=col == 3, texttemplate="%{z:.3f}",
                                      colorbar={"title": {"text": "all three"}, "len": 0.9}), 1, col)
        heat.update_yaxes(autorange="reversed")
        heat.update_layout(height=260, margin={"l": 40, "r": 20, "t": 50, "b": 30})
        bars = make_subplots(1, 2, column_widths=[0.45, 0.55], horizontal_spacing=0.12,
                             subplot_titles=["Theorem 3.1 traces, three ways", "traces along the orbit"])
        labels = ["Tr Cov ∇<sub>u</sub>ℓ", "Tr Cov ∇<sub>w</sub>ℓ"]
        for name, colour in (("autograd on ℓ(u, w)", COLOURS["autograd"]),
                             ("from ∇F<sub>nat</sub>", COLOURS["natural"]), ("from ∇F", COLOURS["F"])):
            bars.add_trace(go.Bar(x=labels, y=[0, 0], name=name, marker_color=colour), 1, 1)
        self._lams = np.geomspace(0.25, 4, 81)
        bars.add_trace(go.Scatter(x=self._lams, y=self._lams, mode="lines", name="Tr Cov ∇<sub>u</sub>ℓ (∝ 1/λ²)",
                                  line={"color": COLOURS["u"]}), 1, 2)
        bars.add_trace(go.Scatter(x=self._lams, y=self._lams, mode="lines", name="Tr Cov ∇<sub>w</sub>ℓ (∝ λ²)",
                                  line={"color": COLOURS["w"]}), 1, 2)
        bars.add_trace(go.Scatter(x=[1, 1], y=[0, 0], mode="markers", name="current λ",
                                  marker={"size": 10, "color": [COLOURS["u"], COLOURS["w"]]}), 1, 2)
        bars.add_trace(go.Scatter(x=[1], y=[0], mode="markers", name="balanced λ*",
                                  marker={"size": 13, "symbol": "star", "color": PALETTE["black"]}), 1, 2)
        bars.update_xaxes(type="log", title_text="λ", minorloglabels="complete", row=1, col=2)
        bars.update_yaxes(type="log", minorloglabels="complete", title_text="trace (log scale)", row=1, col=2)
        bars.update_yaxes(title_text="trace", row=1, col=1)
        bars.update_layout(barmode="group", height=380, margin={"l": 50, "r": 20, "t": 50, "b": 40},
                           legend={"orientation": "h", "y": -0.2})
        return [heat, bars]

    def case(self) -> LiftingCase:
        return self.result.case

    def _update(self, model, theta_w, lam):
        q = self.result = traces_view(model=model, theta_w=theta_w, lam=lam, theta_u=self.theta_u)
        case = q.case
        heat, bars = self.figures
        nan_free = np.zeros((2, 2))
        maps = (q.A_nat if q.A_nat is not None else nan_free, q.A_F if q.A_F is not None else nan_free,
                q.A_nat - q.A_F if q.A_nat is not None and q.A_F is not None else nan_free)
        # one colour scale for the three maps, from the new values (inside batch_update, t.z still reads the old ones)
        top = max(float(np.abs(z).max()) for z in maps) or 1.0
        with heat.batch_update():
            for t, z in zip(heat.data, maps):
                t.z, t.zmin, t.zmax = z, -top, top
            heat.layout.annotations[0].text = ("E[∇F<sub>nat</sub>] (natural lifting)" if q.A_nat is not None
                                               else "no natural lifting (ReLU)")
            heat.layout.annotations[1].text = ("E[∇F] (w-free lifting)" if q.A_F is not None
                                               else "F undefined (w ⟂ e)")
        base_u, base_w = q.base
        tiny = np.finfo(float).tiny
        with bars.batch_update():
            bars.data[0].y = list(q.direct)
            bars.data[1].y = list(q.nat) if q.nat is not None else [0, 0]
            bars.data[1].visible = q.nat is not None
            bars.data[2].y = list(q.F) if q.F is not None else [0, 0]
            bars.data[2].visible = q.F is not None
            bars.data[3].y = np.maximum(base_u / self._lams ** 2, tiny)
            bars.data[4].y = np.maximum(base_w * self._lams ** 2, tiny)
            bars.data[5].x, bars.data[5].y = [lam, lam], [max(q.direct[0], tiny), max(q.direct[1], tiny)]
            ls = q.lam_star
            bars.data[6].x = [ls] if ls is not None else []
            bars.data[6].y = [max((base_u * base_w) ** 0.5, tiny)] if ls is not None else []
        tu, tw = q.direct
        pieces = [f"Tr Cov ∇_u ℓ = {tu:.4g}, Tr Cov ∇_w ℓ = {tw:.4g} (autograd)."]
        other_class = case.other_sign_class
        for label in ("nat", "F"):
            traces = getattr(q, label)
            if traces is not None:
                err = max(abs(traces[0] - tu), abs(traces[1] - tw))
                if label == "F" and other_class and not case.model.negation_symmetric:
                    pieces.append(f"wᵀe < 0: F describes (−u, −w), whose traces differ by {err:.3g} (sign caveat).")
                else:
                    pieces.append(f"From A_{label}: equal to {err:.1e}.")
        if q.A_nat is not None and q.A_F is not None:
            pieces.append(f"Yet ‖E[∇F_nat] − E[∇F]‖ = {np.linalg.norm(q.A_nat - q.A_F):.3g}.")
        if q.A_nat is None:
            pieces.append("ReLU neuron: no natural lifting; F only.")
        if q.A_F is None:
            pieces.append("w ⟂ e: F undefined here.")
        if q.lam_star is not None:
            direction = "raises" if tu > tw else "lowers"
            pieces.append(f"Balanced at λ* = {q.lam_star:.3g}; here dG/dt = T(Tr_u − Tr_w) {direction} G, "
                          f"which pushes λ towards λ*.")
        warn = q.A_F is None or (other_class and not case.model.negation_symmetric)
        self.say(" ".join(pieces), "warning" if warn else "info")

    def summary(self) -> str:
        q = self.result
        tu, tw = q.direct
        text = (f"Autograd gives $\\mathrm{{Tr\\,Cov}}\\,\\nabla_u\\ell = {tu:.4g}$ and "
                f"$\\mathrm{{Tr\\,Cov}}\\,\\nabla_w\\ell = {tw:.4g}$")
        if q.nat is not None and q.F is not None:
            text += (f"; $\\nabla F_\\mathrm{{nat}}$ gives ({q.nat[0]:.4g}, {q.nat[1]:.4g}) and $\\nabla F$ gives "
                     f"({q.F[0]:.4g}, {q.F[1]:.4g}), although $\\|E[\\nabla F_\\mathrm{{nat}}] - E[\\nabla F]\\| = "
                     f"{np.linalg.norm(q.A_nat - q.A_F):.3g}$")
        if q.lam_star is not None:
            text += f". The noise-balanced point on this orbit is $\\lambda^* = {q.lam_star:.3g}$"
        return text + "."
