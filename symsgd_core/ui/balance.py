"""Figures of Notebook 01 (the law of balance): one draw-only controller per figure, in the notebook's order.

Each controller reads its sliders, calls one experiment of :mod:`symsgd_core.balance.experiments`, keeps the
frozen result in ``self.result`` and draws it (the curves of the ``(u, w)`` plane: :mod:`symsgd_core.balance.plane`);
``claims()`` returns the checks behind what it shows (:mod:`symsgd_core.balance.claims`, at the current slider
values), which the notebook asserts. §1 :class:`SymmetryExplorer`, §2 :class:`ThreeDynamics`, §3
:class:`BalanceEnsemble`, §4 :class:`ItoTermsExplorer`, §5 :class:`Rank1Balance` and :class:`ReLUBalance`, §6
:class:`DiscreteBreakdown`; the exercises of §7 are :data:`symsgd_core.balance.EXERCISES`.
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go

from ..balance import claims as figure_claims
from ..balance import experiments, plane, views
from ..core.checking import CheckResult
from .base import Controller, ExperimentFigure, Words
from .plotting import LAYOUT, axes, key_last, keyed, line, markers, panels, put
from .sliders import SEED, TEMPERATURE, U0, W0, Range
from .style import NEUTRALS, PALETTE, colours, rgba

__all__ = ["BalanceEnsemble", "DiscreteBreakdown", "ItoTermsExplorer", "Rank1Balance", "ReLUBalance",
           "SymmetryExplorer", "ThreeDynamics"]

#: The batch size S of the scalar model's SGD.
BATCH = Range("batch S", 1, 32, kind="int")

#: Colours shared by every figure of the notebook.
COLOURS = colours(flow="grey", sgd="blue", iso="orange", G="reddish_purple", u_sq="bluish_green", w_sq="sky_blue",
                  point="vermillion", orbit="reddish_purple", hyper="grey_mid", bound="black")

#: A log axis of ratios or spreads (a decade per labelled tick).
LOG_AXIS = dict(type="log", dtick="D2", minorloglabels="complete")

#: The box that announces, over the figure, a run that diverged.
ALARM = dict(xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, bgcolor="rgba(254,226,226,0.92)",
             font=dict(color="#7f1d1d", size=13))


def _alarm(fig, text: str, **where) -> None:
    """Announce a divergence with ``text`` in :data:`ALARM` (``where``: another place or look) on ``fig``."""
    fig.add_annotation(name="divergence", text=text, **{**ALARM, **where})


def _drop_notes(fig, *names: str) -> None:
    """Remove the annotations named ``names`` (a previous setting's alarms)."""
    fig.layout.annotations = [a for a in fig.layout.annotations if a.name not in names]


def _clear(traces) -> None:
    """Empty ``traces`` (nothing to draw at this setting)."""
    for trace in traces:
        trace.update(x=[], y=[])


def _fmt(x: float, digits: int = 3) -> str:
    """A short number for prose: ``0`` stays ``0``; tiny values in scientific notation."""
    if x == 0:
        return "0"
    if abs(x) < 10 ** (-digits) or abs(x) >= 10 ** (digits + 2):
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def _decimate(n: int, limit: int = 1500) -> np.ndarray:
    """At most ``limit`` indices of ``range(n)``, first and last included."""
    if n <= limit:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(int))


def _claims(check):
    """A figure's ``claims()``: ``check(self.result)``, the checks behind what it shows at the current slider values
    (``check``: a function of :mod:`symsgd_core.balance.claims`, whose docstring says which)."""
    def claims(self) -> list[CheckResult]:
        return check(self.result)
    claims.__doc__ = check.__doc__
    return claims


#: Why a run of the scalar model diverges (shown once under the per-run headlines).
DIVERGENCE_WHY = ("Gradient descent on this loss is stable only while η(u² + w²) < 1/E[x²] = 1 (a sample x needs "
                  "η·x²(u² + w²) < 1):<br>beyond, each step overshoots the valley uw = 1, η|ḡ| grows (ḡ: the "
                  "mini-batch's mean ∂ℓ/∂(uw)), and the factor 1 − η²ḡ² < −1 makes |u² − w²| grow too.<br>Lower η "
                  "or start closer to the origin.")


def _divergence_html(n: dict, runs: dict[str, str]) -> str:
    """Each run of the scalar model that diverged in words, then why (lines joined by ``<br>``). ``n``: the outcome's
    numbers (:func:`~symsgd_core.balance.experiments.divergence_onset`); ``runs``: the prefix of a run's keys in
    ``n`` → its name."""
    lines = []
    for key, name in runs.items():
        if f"{key}diverged_step" in n:
            onset, max_s = n[f"{key}onset_step"], n[f"{key}max_s"]
            why = (f"η(u² + w²) first exceeded 1 at step {onset}" if onset >= 0
                   else f"η(u² + w²) stayed ≤ {max_s:.2g}, but single samples with large x² had η·x²(u² + w²) > 1")
            lines.append(f"{name} diverged at step {n[f'{key}diverged_step']} "
                         f"(|θ| passed {experiments.PLANE_DIVERGENCE_LIMIT:.0e}): {why}.")
    return "<br>".join(lines + [DIVERGENCE_WHY])


# ============================================================================ §1 the symmetry
class SymmetryExplorer(Controller):
    """§1: the loss ``ℓ = (u w x − y)²`` of one sample over the ``(u, w)`` plane, and one symmetry orbit.

    Left: contours of ``√ℓ = |uwx − y|`` with the hyperbolas ``u² − w² = c``, the orbit and the point
    ``(λu₀, w₀/λ)`` (λ on a log slider). Right: ``ℓ`` and ``G = u² − w²`` along the orbit against ``λ``.
    """

    extent = 4.2
    #: The λ of the orbit drawn in the plane (clipped to the box).
    ORBIT_DRAWN = np.geomspace(1 / 64, 64, 600)

    experiment = staticmethod(experiments.symmetry_orbit)
    claims = _claims(figure_claims.symmetry_claims)
    sliders = dict(lam=Range("λ", -1, 1, 0.02, kind="log", base=2, continuous=True), u0=U0.but(continuous=True),
                   w0=W0.but(continuous=True), x=U0.but(description="sample x", continuous=True),
                   y=U0.but(description="sample y", continuous=True))

    def _figures(self) -> list[go.FigureWidget]:
        L = self.extent
        grid = np.linspace(-L, L, 121)  # the grid of sample_loss_surface
        self._xy_cache = None
        fig = panels("loss of one sample, √ℓ = |u w x − y|, over the (u, w) plane", "along the orbit (λu₀, w₀/λ)",
                     height=470, column_widths=[0.56, 0.44], horizontal_spacing=0.16)  # room for the colour bar
        fig.add_contour(x=grid, y=grid, z=np.zeros((121, 121)), colorscale="Blues", reversescale=True,
                        contours=dict(start=0, end=8, size=0.4), showscale=True, name="√ℓ",
                        colorbar=dict(title="√ℓ", x=0.48, len=0.8), row=1, col=1)
        key_last(fig, "surface")
        hu, hw = plane.hyperbola_family_xy([-4, -2, -1, 1, 2, 4], L)
        line(fig, "u² − w² = c (c = ±1, ±2, ±4)", COLOURS["hyper"], (1, 1), width=1, dash="dot", x=hu, y=hw,
             hoverinfo="skip")
        line(fig, "u² − w² through the point", COLOURS["G"], (1, 1), width=2, dash="dash", key="hyperbola")
        line(fig, "orbit (λu₀, w₀/λ), λ > 0", COLOURS["orbit"], (1, 1), width=4, key="orbit")
        markers(fig, "start (λ = 1)", "white", (1, 1), size=9, marker_line=dict(color=COLOURS["orbit"], width=2),
                key="start")
        markers(fig, "point at λ", COLOURS["point"], (1, 1), size=12, key="point")
        line(fig, "ℓ along the orbit", COLOURS["point"], (1, 2), width=3, x=experiments.ORBIT_LAMBDAS,
             key="loss_curve")
        line(fig, "u² − w² along the orbit", COLOURS["G"], (1, 2), width=2, x=experiments.ORBIT_LAMBDAS,
             key="G_curve")
        markers(fig, None, COLOURS["point"], (1, 2), size=10, showlegend=False, key="loss_at")
        markers(fig, None, COLOURS["G"], (1, 2), size=10, showlegend=False, key="G_at")
        line(fig, "ℓ = 0: u w x = y", PALETTE["orange"], (1, 1), width=2, hoverinfo="skip", key="zero_loss")
        axes(fig, (1, 1), x="u", y="w", xaxis=dict(range=[-L, L]), yaxis=dict(range=[-L, L], scaleanchor="x"))
        axes(fig, (1, 2), x="λ", y="ℓ and u² − w² on the orbit", xaxis=dict(type="log", minorloglabels="complete"))
        return [fig]

    def _show(self, r, lam: float, u0: float, w0: float, x: float, y: float) -> None:
        point, fig = r.point, self.figure
        with fig.batch_update():
            if self._xy_cache != (x, y):  # the sample's loss surface changes with x and y only
                _, z = plane.sample_loss_surface(x, y, self.extent)
                put(fig, "surface", z=z)
                zu, zw = plane.product_level_xy(y / x, self.extent) if x != 0 else ([], [])
                put(fig, "zero_loss", x=zu, y=zw)
                self._xy_cache = (x, y)
            hu, hw = plane.hyperbola_xy(r.G, self.extent)
            put(fig, "hyperbola", x=hu, y=hw, name=f"u² − w² = {r.G:.3g} (through the point)")
            ou, ow = plane.orbit_xy(u0, w0, self.ORBIT_DRAWN, self.extent)
            put(fig, "orbit", x=ou, y=ow)
            put(fig, "start", x=[u0], y=[w0])
            put(fig, "point", x=[point[0]], y=[point[1]])
            put(fig, "loss_curve", y=r.loss_curve)
            put(fig, "G_curve", y=r.G_curve)
            put(fig, "loss_at", x=[lam], y=[r.loss])
            put(fig, "G_at", x=[lam], y=[r.G])

    def words(self, r, lam: float, **values) -> Words:
        n = r.outcome.numbers  # one kind: the orbit, told by its numbers
        return Words(None, "info", f"λ = {lam:.3g}: (u, w) = ({n['u']:.3g}, {n['w']:.3g}). Loss ℓ = "
                     f"{n['loss']:.6g}; at λ = 1 it is {n['loss0']:.6g} (difference {abs(n['loss'] - n['loss0']):.1e}: "
                     f"round-off). But u² − w² = {n['G']:.4g}, against {n['G0']:.4g} at λ = 1: the symmetry moves G "
                     "and leaves the loss alone.")


# ============================================================================ §2 three dynamics
class ThreeDynamics(ExperimentFigure):
    """§2: gradient flow, SGD and GD + isotropic noise from the same start, in the ``(u, w)`` plane.

    Draws :func:`~symsgd_core.balance.experiments.three_dynamics` (``y = x + ε``; flow and GD on the population
    loss, the isotropic kicks ``noise ×`` SGD's noise at the start). Left: the paths over the contours of
    ``√(L − L_min) = |uw − 1|``, the hyperbolas ``u² − w² = c`` and the balanced lines ``u = ±w``. Right:
    ``G = u² − w²`` against ``t = η·steps``.
    """

    auto_run = True  # re-simulates when a slider is released: its Run answers in ≤ 0.5 s at every slider end (bench)
    #: Drawing order (bottom to top) of the three paths (keyed ``<run>`` in the plane, ``<run>_G`` for G).
    ORDER = ("iso", "sgd", "flow")
    NAMES = {"iso": "GD + isotropic noise", "sgd": "SGD", "flow": "gradient flow"}
    #: The runs that can diverge, by the prefix of their keys in the outcome's numbers (SGD's told first).
    DIVERGING = {"sgd_": NAMES["sgd"], "iso_": NAMES["iso"]}
    MAX_EXTENT = 8.0
    moments = experiments.SCALAR_DATA.moments()

    experiment = staticmethod(experiments.three_dynamics)
    claims = _claims(figure_claims.three_dynamics_claims)
    sliders = dict(lr=Range("η", -3, math.log10(0.5), 0.05, kind="log", fmt=".3g"), batch_size=BATCH,
                   noise=Range("isotropic noise × SGD's", 0.0, 3.0, 0.1), u0=U0.but(lo=-2.5, hi=2.5),
                   w0=W0.but(lo=-2.5, hi=2.5), steps=Range("steps", 100, 5000, 100, kind="int"), seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("paths in the (u, w) plane", "G = u² − w² along each path", height=500,
                     column_widths=[0.55, 0.45], horizontal_spacing=0.1)
        fig.add_contour(x=[0, 1], y=[0, 1], z=[[0, 0], [0, 0]],
                        colorscale=[[0, NEUTRALS["grey_light"]], [1, NEUTRALS["grey_light"]]],
                        contours=dict(start=0.25, end=8, size=0.5, coloring="lines"), line=dict(width=0.8),
                        showscale=False, name="level sets of L", hoverinfo="skip", row=1, col=1)
        key_last(fig, "surface")
        line(fig, "u² − w² = c", COLOURS["hyper"], (1, 1), width=1, dash="dot", hoverinfo="skip", key="hyperbolas")
        line(fig, "balanced: u² = w²", COLOURS["bound"], (1, 1), width=2, dash="dash", hoverinfo="skip",
             key="balanced")
        for key in self.ORDER:
            line(fig, self.NAMES[key], COLOURS[key], (1, 1), width=4 if key == "flow" else 1.0, legendgroup=key,
                 opacity=0.85, key=key)
        markers(fig, "start", "white", (1, 1), size=12, marker_line=dict(color="black", width=2), key="start")
        markers(fig, "ends", [COLOURS[k] for k in self.ORDER], (1, 1), size=10, symbol="x", key="ends")
        for key in self.ORDER:
            line(fig, None, COLOURS[key], (1, 2), width=2 if key == "flow" else 1.2, legendgroup=key, showlegend=False,
                 key=f"{key}_G")
        line(fig, "valley uw = 1 (minimum of L)", PALETTE["black"], (1, 1), width=1.5, dash="dot",
             hoverinfo="skip", key="valley")
        axes(fig, (1, 1), x="u", y="w", yaxis=dict(scaleanchor="x"))
        axes(fig, (1, 2), x="t = η · steps", y="G = u² − w²")
        return [fig]

    def _show(self, r, lr, batch_size, noise, u0, w0, steps, seed) -> None:
        n, kind = r.outcome.numbers, r.outcome.kind
        paths = {}
        for key, tr in (("flow", r.flow), ("sgd", r.sgd_drawn), ("iso", r.iso)):
            k = plane.records_in_box(tr.theta[:, 0, :], tr.n_diverged > 0, self.MAX_EXTENT)
            paths[key] = (tr.theta[:k, 0, :], tr.times[:k], tr.observables["G"][:k, 0])
        reach = max(float(np.max(np.abs(p[0]))) for p in paths.values())
        L = float(min(max(2.6, 1.1 * reach), self.MAX_EXTENT))
        grid, z = plane.population_loss_surface(self.moments, L)
        levels = [c for c in (-16, -8, -4, -2, -1, 1, 2, 4, 8, 16) if abs(c) < L * L]
        ends = [paths[key][0][-1] for key in self.ORDER]
        fig = self.figure
        with fig.batch_update():
            put(fig, "surface", x=grid, y=grid, z=z)
            hu, hw = plane.hyperbola_family_xy(levels, L)
            put(fig, "hyperbolas", x=hu, y=hw)
            bu, bw = plane.hyperbola_xy(0.0, L)
            put(fig, "balanced", x=bu, y=bw)
            for key in self.ORDER:
                th, t, G = paths[key]
                idx = _decimate(len(t))
                put(fig, key, x=th[idx, 0], y=th[idx, 1])
                put(fig, f"{key}_G", x=t[idx], y=G[idx])
            put(fig, "start", x=[u0], y=[w0])
            put(fig, "ends", x=[float(e[0]) for e in ends], y=[float(e[1]) for e in ends])
            vu, vw = plane.product_level_xy(self.moments.beta2 / self.moments.beta1, L)
            put(fig, "valley", x=vu, y=vw)
            axes(fig, (1, 1), xaxis=dict(range=[-L, L]), yaxis=dict(range=[-L, L]))
            _drop_notes(fig, "divergence")
            if kind == "diverged":
                _alarm(fig, _divergence_html(n, self.DIVERGING), bordercolor=COLOURS["point"], align="left")

    def words(self, r, lr, batch_size, steps, **values) -> Words:
        n, kind = r.outcome.numbers, r.outcome.kind
        if kind == "diverged":
            return Words(None, "error", _divergence_html(n, self.DIVERGING).replace("<br>", " "))
        if kind == "saddle":
            return Words(None, "warning", "The start (0, 0) is a saddle: every per-sample gradient vanishes there, so "
                         "nothing moves — not the flow, not SGD, and not the isotropic walker, whose kick size is "
                         "matched to SGD's noise (zero here). Move u₀ or w₀.")
        return Words(None, "info", f"t = {lr * steps:.4g} (T = η/S = {lr / batch_size:.3g}). G = u² − w² started at "
                     f"{n['G0']:.3g}. Gradient flow ends at G = {n['G_flow']:.4g} (its hyperbola); SGD at G = "
                     f"{n['G_sgd']:.3g} (sliding to the balanced line); GD + isotropic noise (kick size "
                     f"{n['noise_std']:.3g} per step) at G = {n['G_iso']:.3g}, a random walk along the valley uw = 1.")


# ============================================================================ §3 the ensemble and the ODE
class BalanceEnsemble(ExperimentFigure):
    """§3: many SGD runs from ``(u, w) = (1.5, 0.5)`` to ``t = 40``: ``‖u‖² = u²`` is rough and spreads, ``G`` is
    smooth (:func:`~symsgd_core.balance.experiments.balance_ensemble`, ``S = 1`` so ``η = T``).

    Top: ``u²`` and ``G`` of the first :attr:`SHOWN` runs over the 5–95 % band of all runs; for ``G`` also the
    ensemble mean, the ODE ``dG/dt = −4T g(v) G`` along each run's own ``v(t)`` (mean over runs) and Corollary
    3.3's bound ``|G₀| e^{−4TΔt/α₁}``. Bottom: the spread (standard deviation across runs) of both.
    """

    auto_run = True  # re-simulates when a slider is released: its Run answers in ≤ 0.5 s at every slider end (bench)
    SHOWN = 30

    experiment = staticmethod(experiments.balance_ensemble)
    claims = _claims(figure_claims.ensemble_claims)
    sliders = dict(temperature=TEMPERATURE.but(description="T = η/S (S = 1)", lo=0.005, hi=0.05, step=0.005,
                                               fmt=".3f"),
                   runs=Range("runs", 20, 1000, 20, kind="int"))

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("‖u‖² = u²: every run its own rough path", "G = u² − w²: smooth, and an ODE",
                     "spread across runs (standard deviation)", height=680, rows=2, cols=2, row_heights=[0.62, 0.38],
                     vertical_spacing=0.14, horizontal_spacing=0.09, specs=[[{}, {}], [{"colspan": 2}, None]])
        for col, key in ((1, "u_sq"), (2, "G")):  # the 5–95 % band: its lower edge, then its upper edge filled down
            line(fig, None, None, (1, col), width=0, showlegend=False, hoverinfo="skip", key=f"{key}_q05")
            line(fig, "5–95 % of runs", None, (1, col), width=0, fill="tonexty", fillcolor=rgba("grey_mid", 0.35),
                 showlegend=(col == 1), hoverinfo="skip", key=f"{key}_q95")
        line(fig, "mean G", COLOURS["G"], (1, 2), width=3, key="G_mean")
        line(fig, "ODE dG/dt = −4T·g(v)·G along each run (mean)", "black", (1, 2), width=2, dash="dash", key="ode")
        line(fig, "bound |G₀|·exp(−4TΔt/α₁)", COLOURS["bound"], (1, 2), width=2, dash="dot", key="bound")
        line(fig, "spread of ‖u‖²", COLOURS["u_sq"], (2, 1), width=2.5, key="u_sq_std")
        line(fig, "spread of G", COLOURS["G"], (2, 1), width=2.5, key="G_std")
        for col, key, what in ((1, "u_sq", "‖u‖²"), (2, "G", "G")):  # one trace per shown run: no gap markers
            for r in range(self.SHOWN):
                line(fig, f"{self.SHOWN} single runs ({what})", COLOURS[key], (1, col), width=0.8, opacity=0.55,
                     legendgroup=f"runs_{key}", showlegend=(r == 0), hoverinfo="skip", key=f"{key}_run{r}")
        axes(fig, (2, 1), x="t = η · steps", y="std across runs", yaxis=LOG_AXIS)
        axes(fig, (1, 1), y="‖u‖²")
        axes(fig, (1, 2), y="G")
        return [fig]

    def _show(self, res, temperature: float, runs: int) -> None:
        traj = res.traj
        ok = traj.ok_runs
        t = traj.times
        su, sg, G_ode, bound = res.spread_u, res.spread_G, res.G_ode.mean(axis=1), res.bound
        shown = (traj.observables["u_sq"][:, ok], traj.observables["G"][:, ok])
        n_show = min(self.SHOWN, shown[0].shape[1])
        fig = self.figure
        with fig.batch_update():
            for key, s in (("u_sq", su), ("G", sg)):
                put(fig, f"{key}_q05", x=t, y=s["q05"])
                put(fig, f"{key}_q95", x=t, y=s["q95"])
            put(fig, "G_mean", x=t, y=sg["mean"])
            put(fig, "ode", x=t, y=G_ode)
            put(fig, "bound", x=t, y=bound)
            put(fig, "u_sq_std", x=t[1:], y=su["std"][1:])
            put(fig, "G_std", x=t[1:], y=np.maximum(sg["std"][1:], 1e-300))
            for key, a in zip(("u_sq", "G"), shown):
                for r in range(self.SHOWN):
                    tr = keyed(fig, f"{key}_run{r}")
                    if r < n_show:
                        tr.update(x=t, y=a[:, r], visible=True)
                    else:
                        tr.update(x=[], y=[], visible=False)

    def words(self, res, **values) -> Words:
        n = res.outcome.numbers
        msg = (f"T = {n['temperature']:g}: {n['runs_ok']} runs of {n['steps']:,} steps to t = {n['t_end']:g}. At the "
               f"end the spread of ‖u‖² is {n['spread_u']:.3g} and that of G is {n['spread_G']:.3g} "
               f"({n['spread_G'] / n['spread_u']:.2g} of it). Mean G = {n['mean_G']:.3g}; the ODE along each run "
               f"gives {n['ode']:.3g}; the bound is {n['bound']:.3g}.")
        if res.outcome.kind == "some_diverged":
            return Words(None, "warning", msg + f" {n['diverged']} runs diverged and are left out.")
        return Words(None, "info", msg)


# ============================================================================ §4 Itô's lemma term by term
class ItoTermsExplorer(Controller):
    """§4: Itô's lemma for ``G = ‖u‖² − ‖w‖²`` and for ``‖u‖²`` at the slider point, and the spectrum of ``C``.

    The point is ``(u, w)`` (for the rank-1 net ``θ = (u·û, w·ŵ)`` with fixed unit vectors). Left: drift, Itô
    correction and noise coefficient of ``dG`` and of ``d‖u‖²``. Right: eigenvalues of ``C(θ)`` and the weight of
    ``Bθ/‖Bθ‖`` on each eigenvector. Below: the authors' proof of Theorem 3.1 (arXiv 2308.06671, as in their reply
    to a reviewer), line by line, with the numbers.
    """

    MODELS = experiments.ITO_MODELS
    #: The three terms of Itô's lemma the bars show.
    TERMS = ["drift<br>−2θᵀQ∇𝓛", "Itô correction<br>T·Tr[QC]", "noise coefficient<br>‖2√T·√C·Qθ‖"]

    experiment = staticmethod(experiments.ito_point)
    claims = _claims(figure_claims.ito_claims)
    sliders = dict(model=lambda value: widgets.ToggleButtons(options=experiments.ITO_MODELS, value=value,
                                                             description="model"),
                   u=U0.but(description="u (scale of u)", continuous=True),
                   w=W0.but(description="w (scale of w)", continuous=True),
                   temperature=TEMPERATURE.but(lo=0.0, hi=0.2, step=0.005, fmt=".3f", continuous=True))

    def _figures(self) -> list[go.FigureWidget]:
        self.proof = widgets.HTML(layout=widgets.Layout(width="100%"))
        # short titles: the figure must read at JupyterLab's narrower width too (the formula is in the text)
        fig = panels("Itô's lemma, term by term", "spectrum of C(θ) and where Jθ points", height=440,
                     layout=dict(barmode="group", **LAYOUT), column_widths=[0.55, 0.45], horizontal_spacing=0.12,
                     specs=[[{}, {"secondary_y": True}]])
        for name, key in (("f = G = ‖u‖² − ‖w‖²  (Q = J)", "G"), ("f = ‖u‖²", "u_sq")):
            fig.add_bar(x=self.TERMS, y=[0, 0, 0], name=name, marker_color=COLOURS[key], texttemplate="%{y:.3g}",
                        textposition="outside", row=1, col=1)
            key_last(fig, f"{key}_terms")
        fig.add_bar(x=[], y=[], name="eigenvalues of C", marker_color=NEUTRALS["grey_mid"], showlegend=True,
                    texttemplate="%{y:.2g}", textposition="outside", row=1, col=2)
        key_last(fig, "eigenvalues")
        markers(fig, "weight of Jθ/‖Jθ‖ on the eigenvector (right axis)", COLOURS["point"], (1, 2, True), size=13,
                symbol="diamond", key="overlaps")
        axes(fig, (1, 1), y="per unit time t")
        axes(fig, (1, 2), y="eigenvalue")  # both y axes of the panel: the next line titles the right one
        axes(fig, (1, 2, True), y="(eᵢ·Jθ/‖Jθ‖)²",
             yaxis=dict(range=[0, 1.1], tickmode="array", tickvals=[0, 0.25, 0.5, 0.75, 1], showgrid=False))
        return [fig]

    def _children(self) -> list:
        """Controls, figure, the proof table, status."""
        return [widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap")),
                *self.figures, self.proof, self.status]

    def _show(self, p, model: str, u: float, w: float, temperature: float) -> None:
        tg, tu, spec = p.G_terms, p.u_terms, p.spectrum
        labels = [f"e{i + 1}" for i in range(p.model.n_params)]
        fig = self.figure
        with fig.batch_update():
            put(fig, "G_terms", y=[tg.drift, tg.ito_correction, tg.noise_std])
            put(fig, "u_sq_terms", y=[tu.drift, tu.ito_correction, tu.noise_std])
            put(fig, "eigenvalues", x=labels, y=np.clip(p.eigenvalues, 0, None))
            put(fig, "overlaps", x=[] if spec is None else labels, y=[] if spec is None else spec.overlaps)
        self.proof.value = self._proof_html()

    def words(self, p, **values) -> Words:
        if p.outcome.kind == "no_direction":
            return Words(None, "warning", "At u = w = 0 the direction Jθ is zero: there is no symmetry direction to "
                         "mark (and every gradient vanishes). Move u or w away from 0.")
        n = p.outcome.numbers
        return Words(None, "info", f"dG/dt = T·Tr[CJ] = {_fmt(n['G_rate'])} exactly (drift {_fmt(n['G_drift'], 2)}, "
                 f"noise {_fmt(n['G_noise'], 2)}: round-off). d‖u‖² has drift {_fmt(n['u_drift'])}, Itô correction "
                 f"{_fmt(n['u_ito'])} and noise coefficient {_fmt(n['u_noise'])}. Jθ puts "
                 f"{n['null_weight']:.4f} of its weight on eigenvalue {_fmt(n['null_eigenvalue'], 2)} of C "
                 f"(largest eigenvalue {_fmt(n['largest_eigenvalue'])}): a null direction.")

    def _proof_html(self) -> str:
        p = self.result
        tg, tu, T = p.G_terms, p.u_terms, p.temperature
        rows = [
            ("1", "Itô: df = (∇fᵀμ + ½Tr[𝐃ᵀ∇²f 𝐃]) dt + ∇fᵀ𝐃 dW, μ = −∇𝓛, 𝐃 = √(TC)", "", ""),
            ("2", "f = θᵀQθ: ∇f = 2Qθ, ∇²f = 2Q (G: Q = J; ‖u‖²: Q = diag(1 on u))", "", ""),
            ("3", "symmetry, per sample: max over samples |θᵀJ∇ℓ(θ, x)|", _fmt(p.sym_residual, 2), "—"),
            ("4", "drift ∇fᵀμ = −2θᵀQ∇𝓛", _fmt(tg.drift, 2), _fmt(tu.drift)),
            ("5", "θᵀJC = E[(θᵀJ∇ℓ)∇ℓᵀ] − (θᵀJ∇𝓛)∇𝓛ᵀ: ‖θᵀJC‖", _fmt(p.BC_norm, 2), "—"),
            ("6", "noise ∇fᵀ𝐃 = 2√T·(Qθ)ᵀ√C: its norm", _fmt(tg.noise_std, 2), _fmt(tu.noise_std)),
            ("7", "Itô correction ½Tr[𝐃ᵀ∇²f 𝐃] = T·Tr[QC]", _fmt(tg.ito_correction), _fmt(tu.ito_correction)),
            ("8", "T·(Tr Cov∇_uℓ − Tr Cov∇_wℓ)", _fmt(T * (p.tr_cov_u - p.tr_cov_w)), "—"),
            ("9", "E[df]/dt = drift + Itô correction", _fmt(tg.rate), _fmt(tu.rate)),
        ]
        body = "".join(f"<tr><td>{a}</td><td>{html.escape(b)}</td><td>{c}</td><td>{d}</td></tr>" for a, b, c, d in rows)
        if p.scalar_rate is not None:
            body += (f"<tr><td>7′</td><td>scalar model: C = 4g(v)∇v∇vᵀ, so dG/dt = −4T·g(v)·G</td>"
                     f"<td>{_fmt(p.scalar_rate)}</td><td></td></tr>")
        return ("<table style='border-collapse:collapse;font-size:90%'>"
                "<tr><th>line</th><th>the authors' proof (their reply), at the slider point (T = "
                f"{T:g})</th><th>f = G</th><th>f = ‖u‖²</th></tr>{body}</table>")


# ============================================================================ §5 beyond the toy
def _ratio_panel(fig, col: int, showlegend: bool) -> None:
    """Traces of a ratio panel: trace ratio, norm ratio, reference line at 1, the averaging window (keyed
    ``<panel>_noise``, ``<panel>_norms``, ``<panel>_one``, ``<panel>_window``: :data:`RATIO_TRACES`)."""
    at, shown = (1, col), dict(showlegend=showlegend)
    key = f"panel{col}_"
    line(fig, "Tr Cov∇<sub>u</sub>ℓ / Tr Cov∇<sub>w</sub>ℓ (noise)", COLOURS["G"], at, width=2.5,
         legendgroup="noise", key=key + "noise", **shown)
    line(fig, "‖u‖² / ‖w‖² (norms)", COLOURS["u_sq"], at, width=2.5, legendgroup="norms", key=key + "norms", **shown)
    line(fig, "ratio 1", NEUTRALS["grey"], at, width=1, dash="dot", legendgroup="one", hoverinfo="skip",
         key=key + "one", **shown)
    line(fig, "averaging window", None, at, width=0, fill="toself", fillcolor=rgba("reddish_purple", 0.08),
         legendgroup="win", hoverinfo="skip", key=key + "window", **shown)


#: The keys of a ratio panel's traces, after its panel's prefix (:func:`_ratio_panel`).
RATIO_TRACES = ("noise", "norms", "one", "window")


def _fill_ratio_panel(fig, col: int, series, window: float) -> tuple[float, float]:
    """Fill the four traces of the ratio panel in column ``col`` with ``series``
    (:class:`~symsgd_core.balance.experiments.BalanceSeries`); returns the y-range used (log10)."""
    t = np.asarray(series.times, dtype=float)
    rt = np.asarray(series.tr_cov_u) / np.asarray(series.tr_cov_w)
    rn = np.asarray(series.u_sq) / np.asarray(series.w_sq)
    lo = float(min(rt.min(), rn.min(), 1.0)) / 1.5
    hi = float(max(rt.max(), rn.max(), 1.0)) * 1.5
    start = t[int(math.floor((1.0 - window) * (t.size - 1)))]
    put(fig, f"panel{col}_noise", x=t, y=rt)
    put(fig, f"panel{col}_norms", x=t, y=rn)
    put(fig, f"panel{col}_one", x=[t[0], t[-1]], y=[1.0, 1.0])
    put(fig, f"panel{col}_window", x=[start, t[-1], t[-1], start, start], y=[lo, lo, hi, hi, lo])
    return math.log10(lo), math.log10(hi)


class Rank1Balance(ExperimentFigure):
    """§5a: noise balance vs norm balance in the rank-1 linear net ``f(x) = u (wᵀx)`` with vector data.

    8 runs, ``S = 1``, fresh samples, exact population noise traces
    (:func:`~symsgd_core.balance.views.rank1_view`). Left: the ratio of the two noise traces and of the two
    norms (means over runs), with ``d_out/d_in`` dashed. Right: ``‖u‖²`` and ``‖w‖²``.
    """

    auto_run = True  # re-simulates when a slider is released: its Run answers in ≤ 0.5 s at every slider end (bench)

    experiment = staticmethod(views.rank1_view)
    claims = _claims(figure_claims.rank1_claims)
    # d_out ≥ 2: with d_in = d_out = 1 GaussianData is scalar (1-D arrays), which the rank-1 model's minibatches do
    # not accept (engine limitation); that case is the scalar model of §1–§4 anyway.
    sliders = dict(d_in=Range("d_in", 1, 8, kind="int"), d_out=Range("d_out", 2, 4, kind="int"),
                   lr=Range("η (S = 1)", math.log10(0.003), math.log10(0.03), 0.05, kind="log", fmt=".3g"),
                   steps=Range("steps", 2000, 6000, 500, kind="int"), seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("ratios (mean of 8 runs; log scale)", "the norms themselves (mean of 8 runs)", height=430,
                     horizontal_spacing=0.1)
        _ratio_panel(fig, 1, True)
        line(fig, "d<sub>out</sub> / d<sub>in</sub> (isotropic estimate)", COLOURS["u_sq"], (1, 1), width=1.5,
             dash="dash", key="dims")
        line(fig, "‖u‖²", COLOURS["u_sq"], (1, 2), width=2.5, key="u_sq")
        line(fig, "‖w‖²", COLOURS["w_sq"], (1, 2), width=2.5, key="w_sq")
        axes(fig, (1, 1), y="ratio", yaxis=LOG_AXIS)
        axes(fig, (1, 2), y="squared norm")
        axes(fig, x="t = η · steps")
        return [fig]

    def _show(self, run, d_in, d_out, lr, steps, seed) -> None:
        self.set_progress(0.5)
        fig = self.figure
        n_ok = run.runs.G.shape[1]
        with fig.batch_update():
            _drop_notes(fig, "divergence")
            if n_ok == 0:
                _clear(fig.data)
                _alarm(fig, f"all runs diverged at η = {lr:.3g}: lower η", font=dict(color="#7f1d1d", size=14))
            else:
                m = run.mean
                lo, hi = _fill_ratio_panel(fig, 1, m, figure_claims.RANK1_WINDOW)
                lo, hi = min(lo, math.log10(d_out / d_in) - 0.2), max(hi, math.log10(d_out / d_in) + 0.2)
                put(fig, "dims", x=[m.times[0], m.times[-1]], y=[d_out / d_in] * 2)
                put(fig, "u_sq", x=m.times, y=m.u_sq)
                put(fig, "w_sq", x=m.times, y=m.w_sq)
                axes(fig, (1, 1), yaxis=dict(range=[lo, hi]))

    def words(self, run, d_in, d_out, lr, **values) -> Words:
        kind, n = run.outcome.kind, run.outcome.numbers
        if kind == "all_diverged":
            return Words(None, "error", f"All {n['runs']} runs diverged at η = {lr:.3g} (d_in = {d_in}): "
                         "the per-sample step overshoots when η‖x‖²‖u‖² is of order 1. Lower η.")
        msg = (f"Last half of the run: noise-trace ratio {n['trace_ratio']:.3f} (the law predicts "
               f"{n['predicted_ratio']:.3f} from G's remaining drift), norm ratio ‖u‖²/‖w‖² = "
               f"{n['norm_ratio']:.3f} against d_out/d_in = {d_out / d_in:.3g}.")
        if not n["traces_met"]:
            msg += (" The traces have not met yet (G is still moving fast): train longer or raise η before comparing "
                    "the norms.")
        if kind == "some_diverged":
            return Words(None, "warning", msg + f" {n['diverged']} runs diverged and are left out.")
        return Words(None, "info", msg)


class ReLUBalance(ExperimentFigure):
    """§5b: the ratio of the two noise traces and of the two layer norms of ReLU nets; shaded: the window the
    claims average over. Left: the paper's Fig. 2 net (20 → 200 → 20), the shipped run
    (:func:`~symsgd_core.balance.experiments.load_relu_balance`). Right: a ``5 → hidden → 5`` net simulated now
    (:data:`~symsgd_core.balance.experiments.RELU_SMALL` with the sliders); both in ``self.result``
    (:func:`~symsgd_core.balance.views.relu_balance_view`).
    """

    auto_run = True  # re-simulates when a slider is released: its Run answers in ≤ 0.5 s at every slider end (bench)
    experiment = staticmethod(views.relu_balance_view)
    sliders = dict(window=Range("averaging window", 0.1, 0.5, 0.05),
                   hidden=Range("live net: hidden", 10, 80, 10, kind="int"),
                   lr=Range("live net: η", math.log10(0.003), math.log10(0.02), 0.05, kind="log", fmt=".3g"),
                   steps=Range("live net: steps", 1000, 4000, 500, kind="int"),
                   seed=SEED.but(description="live net: seed"))

    def __init__(self, data_path=None) -> None:
        self.paper, self.paper_error = experiments.shipped_relu_balance(data_path)  # for the titles and the notebook
        #: the last live run by its settings (the experiment's ``cache``: a window change re-simulates nothing)
        self._cache: dict = {}
        super().__init__(data_path=data_path, cache=self._cache)

    def _figures(self) -> list[go.FigureWidget]:
        p = self.paper.settings if self.paper else experiments.RELU_FIG2
        fig = panels(f"{p['d_in']} → {p['hidden']} → {p['d_out']} (precomputed, {p['steps']:,} steps)",
                     "small net, simulated now", height=430, horizontal_spacing=0.1)
        _ratio_panel(fig, 1, True)
        _ratio_panel(fig, 2, False)
        axes(fig, x="t = η · steps", yaxis=LOG_AXIS)
        axes(fig, (1, 1), y="ratio")
        return [fig]

    def _show(self, r, window, lr, **values) -> None:
        live, fig = r.live, self.figure
        with fig.batch_update():
            if r.paper is not None:
                lo, hi = _fill_ratio_panel(fig, 1, r.paper, window)
                axes(fig, (1, 1), yaxis=dict(range=[lo, hi]))
            if live.diverged:
                _clear(keyed(fig, f"panel2_{k}") for k in RATIO_TRACES)
            else:
                lo, hi = _fill_ratio_panel(fig, 2, live, window)
                axes(fig, (1, 2), yaxis=dict(range=[lo, hi]))
            _drop_notes(fig, "divergence", "missing")
            if r.paper is None:
                fig.add_annotation(name="missing", text="precomputed data file missing:<br>run "
                                   "python -m symsgd_core.balance.experiments", xref="x domain", yref="y domain",
                                   x=0.5, y=0.5, showarrow=False, bgcolor="rgba(254,243,199,0.95)")
            if live.diverged:
                _alarm(fig, f"the live run diverged at η = {lr:.3g}:<br>lower η", xref="x2 domain", yref="y2 domain")

    def words(self, r, window, hidden, lr, **values) -> Words:
        kind, n = r.outcome.kind, r.outcome.numbers
        if "paper_error" in r.outcome.labels:
            parts, level = [r.outcome.labels["paper_error"]], "warning"
        else:
            q = n["paper_quartiles"]
            parts, level = [f"Paper-size net, last {window:.0%} of the run: noise-trace ratio "
                            f"{n['paper_trace_ratio']:.3f} (the law predicts {n['paper_predicted_ratio']:.3f} from "
                            f"G's drift), norm ratio {n['paper_norm_ratio']:.3f}; per neuron at the end, the middle "
                            f"half of the trace ratios lies in [{q[0]:.2f}, {q[1]:.2f}] ({n['paper_dead']} dead "
                            "neurons)."], "info"
        if kind == "live_diverged":
            parts.append(f"The live run diverged at η = {lr:.3g}; lower η.")
            level = "error"
        else:
            parts.append(f"Live 5 → {hidden} → 5 net: trace ratio {n['live_trace_ratio']:.3f} (law: "
                         f"{n['live_predicted_ratio']:.3f}), norm ratio {n['live_norm_ratio']:.3f}.")
        return Words(None, level, " ".join(parts))

    def claims(self) -> list[CheckResult]:
        """§5 claims for the precomputed run, and the law's exact identities at its final state (Thm 3.2)."""
        return figure_claims.relu_claims(self.paper, self.result.live, self.result.window)


# ============================================================================ §6 where the continuous picture breaks
class DiscreteBreakdown(ExperimentFigure):
    """§6: the exact one-step identity ``u'² − w'² = (1 − η²ḡ_B²)(u² − w²)`` of scalar SGD, and large ``η``.

    Top: ``log₁₀|G_n|`` per step, marked by the sign of ``G_n`` (the continuous picture never changes it).
    Bottom: the factor ``1 − η²ḡ_B²`` of every step (read off the run) over its zones "shrinks" (0, 1],
    "sign flip" [−1, 0) and "sign flip and growth" (< −1). A diverging run is announced on the figure.
    """

    auto_run = True  # re-simulates when a slider is released: its Run answers in ≤ 0.5 s at every slider end (bench)
    FACTOR_FLOOR = -3.0

    experiment = staticmethod(experiments.discrete_breakdown)
    claims = _claims(figure_claims.discrete_breakdown_claims)
    sliders = dict(lr=Range("η", -2, 0, 0.02, kind="log", fmt=".3g"), u0=U0, w0=W0, batch_size=BATCH.but(hi=16),
                   steps=Range("steps", 10, 400, 10, kind="int"), seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        floor = self.FACTOR_FLOOR
        fig = panels("log₁₀|u² − w²| after each step (colour: sign of u² − w²)",
                     "the factor 1 − η²ḡ<sub>ℬ</sub>² of each step", height=600, rows=2, shared_xaxes=True,
                     vertical_spacing=0.08, row_heights=[0.55, 0.45])
        line(fig, None, NEUTRALS["grey_mid"], (1, 1), width=1, showlegend=False, key="logG")
        markers(fig, "u² − w² > 0", COLOURS["sgd"], (1, 1), size=5, key="positive")
        markers(fig, "u² − w² < 0", COLOURS["point"], (1, 1), size=7, symbol="diamond", key="negative")
        markers(fig, "factor", COLOURS["G"], (2, 1), size=5, key="factor")
        markers(fig, f"factor < {floor:g} (drawn at {floor:g})", COLOURS["point"], (2, 1), size=9,
                symbol="triangle-down", key="factor_low")
        for y0, y1, colour, alpha, y, text in ((0, 1, "bluish_green", 0.08, 0.5, "shrinks, same sign"),
                                               (-1, 0, "orange", 0.12, -0.5, "sign flips"),
                                               (floor - 0.3, -1, "vermillion", 0.12, -2.0, "sign flips and |G| grows")):
            fig.add_hrect(y0=y0, y1=y1, fillcolor=rgba(colour, alpha), line_width=0, row=2, col=1)
            fig.add_annotation(x=1.0, xref="x2 domain", xanchor="right", y=y, yref="y2", text=text, showarrow=False,
                               font=dict(size=11, color=NEUTRALS["grey"]))
        axes(fig, (1, 1), y="log₁₀|G|")
        axes(fig, (2, 1), x="step n", y="1 − η²ḡ<sub>ℬ</sub>²", yaxis=dict(range=[floor - 0.3, 1.2]))
        return [fig]

    def _show(self, r, lr, u0, w0, batch_size, steps, seed) -> None:
        self.set_progress(0.5)
        facts, G, kind, numbers = r.facts, r.G, r.outcome.kind, r.outcome.numbers
        fig = self.figure
        _drop_notes(fig, "divergence")
        if kind == "saddle":
            with fig.batch_update():
                _clear(fig.data)
            return
        n = np.arange(r.theta.shape[0])
        with np.errstate(divide="ignore"):
            logG = np.log10(np.abs(G))
        finite = np.isfinite(logG)
        pos, neg = finite & (G > 0), finite & (G < 0)
        with fig.batch_update():
            put(fig, "logG", x=n[finite], y=logG[finite])
            put(fig, "positive", x=n[pos], y=logG[pos])
            put(fig, "negative", x=n[neg], y=logG[neg])
            if facts is not None:
                low = facts["factor"] < self.FACTOR_FLOOR
                put(fig, "factor", x=n[1:][~low], y=facts["factor"][~low])
                put(fig, "factor_low", x=n[1:][low], y=np.full(int(low.sum()), self.FACTOR_FLOOR))
            else:
                _clear(keyed(fig, k) for k in ("factor", "factor_low"))
            if kind == "diverged":
                _alarm(fig, _divergence_html(numbers, {"": "SGD"}), y=0.78, bordercolor=COLOURS["point"], align="left")

    def words(self, r, lr, **values) -> Words:
        kind, numbers = r.outcome.kind, r.outcome.numbers
        if kind == "saddle":
            return Words(None, "warning", "The start (0, 0) is a saddle where every per-sample gradient vanishes: SGD "
                         "never moves. Move u₀ or w₀.")
        if kind == "diverged":
            return Words(None, "error", _divergence_html(numbers, {"": "SGD"}).replace("<br>", " "))
        n = numbers
        msg = (f"η = {lr:.3g}: largest η|ḡ| = {n['max_eta_g']:.3g} (ḡ: the mini-batch's mean ∂ℓ/∂(uw)). G = u² − w² "
               f"went from {n['G_first']:.3g} to {n['G_last']:.3g}. It changed sign at {n['flips']} step(s) (η|ḡ| > 1) "
               f"and grew in size at {n['grows']} (η|ḡ| > √2); "
               "in continuous time neither can happen.")
        if numbers["at_roundoff"]:
            msg += " (G has reached float64 round-off, |G| ≲ 64·eps·(u² + w²): its last values are noise.)"
        return Words(None, "warning" if kind == "sign_flips" else "info", msg)
