"""Interactive figures of Notebook 04: SGD's stationary distribution for diagonal networks.

One controller per figure (pattern in :mod:`symsgd_core.ui.base`). Closed forms come from
:mod:`symsgd_core.stationary` (analytic callbacks, live, ≤ 100 ms); simulations from
:mod:`symsgd_core.stationary_sde` and the engine (Run button, ≤ 1 s at the default sizes).
Conventions: ``ℓ = (f − y)²``, ``T = η/S``, ``t = η·steps`` (:mod:`symsgd_core.core.conventions`).
"""

from __future__ import annotations

import math
import time

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy import stats

from ..core.exercises import Exercise, number_exercise
from ..stationary import (
    PHASE_CODES,
    PHASES,
    DiagonalNetProblem,
    StationaryLaw,
    critical_temperature,
    most_likely_roots_depth1,
    phase_grid,
    phase_of,
    tail_exponent,
    transitional_temperature,
    variance_depth0,
)
from ..stationary_sde import run_to_stationarity, sgd_v_samples, simulate_v
from .base import Controller

__all__ = [
    "DepthComparison",
    "PhaseTransition",
    "FluctuationInversion",
    "WrongSign",
    "Tails",
    "DiscreteSGD",
    "EXERCISES",
    "histogram_density",
    "survival_points",
]

_LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=50, b=50))
_COLORS = {0: "#2563eb", 1: "#dc2626", 2: "#059669", 4: "#7c3aed", "sgd": "#f59e0b", "amp": "#0891b2"}


def _slider(description, value, lo, hi, step, fmt=".2f"):
    return widgets.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                               readout_format=fmt, continuous_update=False, style={"description_width": "initial"})


def histogram_density(samples, edges):
    """Histogram of ``samples`` normalised as a density over ``edges`` (counts outside are kept in the total).

    Returns ``(centres, density, standard error)``, where the standard error is the binomial one
    of each bin's probability divided by its width (independent samples).
    """
    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x)]
    e = np.asarray(edges, dtype=float)
    counts, _ = np.histogram(x, bins=e)
    n = max(x.size, 1)
    w = np.diff(e)
    p = counts / n
    return 0.5 * (e[1:] + e[:-1]), p / w, np.sqrt(p * (1 - p) / n) / w


class _RunMixin:
    """Run button + progress bar for re-simulating controllers."""

    def _make_run_widgets(self, label: str = "Run simulation") -> None:
        self.run_button = widgets.Button(description=label, button_style="primary", icon="play")
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="", layout=widgets.Layout(width="160px"))
        self.run_button.on_click(lambda _b: self.run())
        self.extra_widgets = [self.run_button, self.progress]
        self.last_run_seconds = float("nan")

    def run(self) -> None:
        """Re-simulate at the current settings (timed in ``last_run_seconds``)."""
        t0 = time.perf_counter()
        self.say("Computing…")
        self.progress.value = 0
        try:
            self._run(**self.values())
        finally:
            self.progress.value = self.progress.max
            self.last_run_seconds = time.perf_counter() - t0

    def _tick(self, n: int = 1) -> None:
        self.progress.value = min(self.progress.value + n, self.progress.max)


def _problem(k, sigma, gamma):
    return DiagonalNetProblem.gaussian(float(k), float(sigma), float(gamma))


# ============================================================================ 1. depth 0 vs depth 1
class DepthComparison(_RunMixin, Controller):
    """Depth 0 vs depth 1 at the same T: closed-form densities (live) and SDE histograms (Run).

    Sliders: T = η/S, teacher slope k, label noise σ, weight decay γ.
    """

    def __init__(self, n_chains: int = 1500, seed: int = 0) -> None:
        super().__init__()
        self.n_chains, self.seed = int(n_chains), int(seed)
        self.controls = {
            "temperature": _slider("T = η/S", 0.15, 0.02, 0.5, 0.01),
            "k": _slider("teacher k", 1.0, 0.25, 2.0, 0.05),
            "sigma": _slider("noise σ", 1.0, 0.25, 2.0, 0.05),
            "weight_decay": _slider("weight decay γ", 0.0, 0.0, 0.5, 0.01),
        }
        self._make_run_widgets()
        fig = go.FigureWidget(make_subplots(rows=1, cols=2, subplot_titles=(
            "depth 0: linear regression (Eq. 12)", "depth 1: two-layer diagonal net (Eq. 15)")))
        fig.update_layout(height=400, showlegend=True, legend=dict(orientation="h", y=-0.18), **_LAYOUT)
        for col, depth in ((1, 0), (2, 1)):
            fig.add_bar(x=[], y=[], name=f"SDE histogram, D = {depth}", marker_color=_COLORS[depth], opacity=0.35,
                        row=1, col=col)
            fig.add_scatter(x=[], y=[], mode="lines", name=f"closed form, D = {depth}",
                            line=dict(color=_COLORS[depth], width=3), row=1, col=col)
            fig.add_scatter(x=[], y=[], mode="markers", name="most likely v (+ interior peak)" if depth == 0 else None,
                            showlegend=depth == 0, marker=dict(symbol="diamond", size=11, color="black"),
                            row=1, col=col)
            fig.update_xaxes(title_text="v = network slope", row=1, col=col)
        fig.update_yaxes(title_text="density p(v)", row=1, col=1)
        fig.add_scatter(x=[], y=[], mode="text", text=[], showlegend=False, textfont=dict(size=14, color="#b91c1c"),
                        row=1, col=2)
        self.figures = [fig]
        self.laws: dict[int, StationaryLaw] = {}
        self.sim_info: dict = {}
        self._wire()
        self.update()

    def _edges(self, depth: int) -> np.ndarray:
        law = self.laws.get(depth)
        if depth == 0:
            lo, hi = law.ppf(np.array([0.005, 0.995]))
            return np.linspace(lo, hi, 41)
        if law is None or law.collapsed:
            return np.linspace(0.0, 1.0, 41)
        return np.linspace(0.0, float(law.ppf(np.array([0.99]))[0]), 41)

    def _update(self, temperature, k, sigma, weight_decay) -> None:
        prob = _problem(k, sigma, weight_decay)
        self.problem = prob
        msgs = []
        with self.figure.batch_update():
            note = self.figure.data[6]
            note.x, note.y, note.text = [], [], []
            for depth in (0, 1):
                law = StationaryLaw(prob, temperature, depth)
                self.laws[depth] = law
                line, mode, bars = self.figure.data[3 * depth + 1], self.figure.data[3 * depth + 2], \
                    self.figure.data[3 * depth]
                bars.x, bars.y = [], []
                if law.collapsed:
                    line.x, line.y = [0.0, 0.0], [0.0, 1.0]
                    mode.x, mode.y = [0.0], [1.0]
                    note.x, note.y, note.text = [0.5], [0.8], ["T ≥ T_c: the law is δ(v) (red line at 0)"]
                    msgs.append(f"D=1: T ≥ T_c = {critical_temperature(prob):.3f}, so the law is δ(v): the net "
                                "learns nothing (vertical line at 0).")
                    continue
                e = self._edges(depth)
                x = np.linspace(e[0], e[-1], 400)
                if depth == 1:
                    x = x[1:]
                y = law.pdf(x)
                line.x, line.y = x, y
                m = law.mode
                ym = float(law.pdf(np.array([m]))[0]) if (depth == 0 or m > 0) else float(np.max(y))
                mx, my = [m], [ym]
                if depth == 1 and m == 0:  # bimodal phase: also mark the interior local maximum
                    roots = most_likely_roots_depth1(temperature, prob)
                    if roots.size == 2:
                        mx.append(float(roots[-1]))
                        my.append(float(law.pdf(roots[-1:])[0]))
                mode.x, mode.y = mx, my
                var = law.variance
                vtxt = f"{var:.3f}" if math.isfinite(var) else "∞"
                msgs.append(f"D={depth}: mean {law.mean:.3f}, Var {vtxt}, most likely v = {m:.3f}"
                            + (" (density diverges at 0)" if depth == 1 and m == 0 else ""))
        tc = critical_temperature(prob)
        self.say(f"T = {temperature:g}, T_c = (β₂ − γ)/α₃ = {tc:.3f}, phase (D=1): {phase_of(temperature, prob)}. "
                 + " | ".join(msgs) + " — press Run to simulate at these settings.")

    def _run(self, temperature, k, sigma, weight_decay) -> None:
        prob = _problem(k, sigma, weight_decay)
        self.progress.max = 2
        texts = []
        with self.figure.batch_update():
            for depth in (0, 1):
                run, info = run_to_stationarity(prob, temperature, depth, n_chains=self.n_chains, v0=1.0,
                                                relax_times=4.0, t_max=25.0, seed=self.seed)
                self._tick()
                self.sim_info[depth] = (run, info)
                e = self._edges(depth)
                c, d, _ = histogram_density(run.final, e)
                bars = self.figure.data[3 * depth]
                bars.x, bars.y = c, d
                bars.width = float(e[1] - e[0])
                law = self.laws[depth]
                if run.non_finite:
                    texts.append(f"D={depth}: {run.non_finite} chains left the float range (excluded)")
                if law.collapsed:
                    top = float(np.max(d)) if d.size else 1.0
                    self.figure.data[4].y = [0.0, top]
                    self.figure.data[6].y = [0.8 * top]
                    texts.append(f"D={depth}: median v after t = {info['t_end']:.0f} is "
                                 f"{np.median(run.final):.1e} (collapsing to 0)")
                    continue
                ok = np.isfinite(run.final)
                ks = float(stats.kstest(run.final[ok], law.cdf).statistic)
                crit = float(stats.kstwo.ppf(0.9999, int(ok.sum())))
                relax = "" if info["relaxed"] else f", NOT relaxed (1/λ₁ = {1 / info['lambda1']:.0f})"
                texts.append(f"D={depth}: KS {ks:.3f} vs sampling threshold {crit:.3f}, "
                             f"t = {info['t_end']:.1f} = {info['lambda1'] * info['t_end']:.1f}/λ₁{relax}")
        self.say(f"{self.n_chains} SDE chains per depth from v₀ = 1 (one sample per chain, weak order-2 scheme, "
                 f"dt = 0.02). " + " | ".join(texts))


# ============================================================================ 2. phase transition
class PhaseTransition(Controller):
    """The density near v = 0 (log–log) as T crosses T_c/3, T* and T_c, and the (σ, T) phase diagram."""

    SIGMAS = np.linspace(0.1, 2.0, 120)
    TEMPS = np.linspace(0.005, 0.6, 160)
    LABELS = {"peaked": "learns: peak at v > 0", "bimodal": "bimodal: spike at 0 + peak",
              "collapsing": "spike at 0 only", "dead": "δ(v): learns nothing"}

    def __init__(self, k: float = 1.0) -> None:
        super().__init__()
        self.k = float(k)
        self.controls = {
            "temperature": _slider("T = η/S", 0.15, 0.01, 0.6, 0.005, ".3f"),
            "sigma": _slider("noise σ", 1.0, 0.1, 2.0, 0.05),
            "weight_decay": _slider("weight decay γ", 0.0, 0.0, 0.5, 0.01),
        }
        dens = go.FigureWidget(layout=dict(height=380, title="density near v = 0 (log–log): p ∝ v^a as v → 0",
                                           # the ranges start a little below 1e-6 so that the two "1µ" tick
                                           # labels do not meet in the corner
                                           xaxis=dict(type="log", title="v", range=[-6.2, 1.3]),
                                           yaxis=dict(type="log", title="p(v)", range=[-6.5, 6]), **_LAYOUT))
        for f in (0.2, 0.5, 0.8, 0.95):
            dens.add_scatter(x=[], y=[], mode="lines", name=f"T = {f:g}·T_c", line=dict(width=1.5, dash="dot"))
        dens.add_scatter(x=[], y=[], mode="lines", name="your T", line=dict(width=4, color="black"))
        phase = go.FigureWidget(layout=dict(height=420, title=f"phase diagram of the depth-1 net (k = {self.k:g})",
                                            xaxis=dict(title="label noise σ"), yaxis=dict(title="T = η/S"),
                                            **_LAYOUT))
        phase.add_heatmap(x=self.SIGMAS, y=self.TEMPS, z=np.zeros((self.TEMPS.size, self.SIGMAS.size)),
                          zmin=0, zmax=3, showscale=False, opacity=0.35, hoverinfo="skip",
                          colorscale=[[0, "#bbf7d0"], [0.25, "#bbf7d0"], [0.25, "#fde68a"], [0.5, "#fde68a"],
                                      [0.5, "#fecaca"], [0.75, "#fecaca"], [0.75, "#e5e7eb"], [1, "#e5e7eb"]])
        for name, dash in (("T_c", "solid"), ("T_c/3", "dash"), ("T*", "dot")):
            phase.add_scatter(x=self.SIGMAS, y=np.zeros_like(self.SIGMAS), mode="lines", name=name,
                              line=dict(color="black", dash=dash, width=2))
        phase.add_scatter(x=[1.0], y=[0.15], mode="markers", name="you are here",
                          marker=dict(symbol="x", size=14, color="#dc2626", line=dict(width=2)))
        self.figures = [dens, phase]
        self._wire()
        self.update()

    def _update(self, temperature, sigma, weight_decay) -> None:
        prob = _problem(self.k, sigma, weight_decay)
        tc = critical_temperature(prob)
        v = np.logspace(-6, 1.3, 300)
        dens, phase = self.figures
        with dens.batch_update():
            for i, f in enumerate((0.2, 0.5, 0.8, 0.95)):
                tr = dens.data[i]
                if tc <= 0:
                    tr.x, tr.y = [], []
                    continue
                law = StationaryLaw(prob, f * tc, 1, z_step=0.02)
                y = law.pdf(v)
                keep = (y > 1e-6) & (y < 1e6)
                tr.x, tr.y = v[keep], y[keep]
            cur = dens.data[4]
            law = StationaryLaw(prob, temperature, 1, z_step=0.02)
            if law.collapsed:
                cur.x, cur.y = [], []
                dens.layout.annotations = [dict(text="your T ≥ T_c: no density, the law is δ(v)", x=0.5, y=0.95,
                                                xref="paper", yref="paper", showarrow=False,
                                                font=dict(color="#b91c1c"))]
            else:
                y = law.pdf(v)
                keep = (y > 1e-6) & (y < 1e6)
                cur.x, cur.y = v[keep], y[keep]
                dens.layout.annotations = []
        codes = phase_grid(self.k, self.SIGMAS, self.TEMPS, weight_decay)
        curves = [critical_temperature(_problem(self.k, s, weight_decay)) for s in self.SIGMAS]
        tstar = [transitional_temperature(_problem(self.k, s, weight_decay)) for s in self.SIGMAS]
        with phase.batch_update():
            phase.data[0].z = codes
            phase.data[1].y = curves
            phase.data[2].y = np.asarray(curves) / 3.0
            phase.data[3].y = tstar
            phase.data[4].x, phase.data[4].y = [sigma], [temperature]
            ann = []
            for name, code in PHASE_CODES.items():
                mask = codes == code
                if mask.sum() > 30:
                    ti, si = np.nonzero(mask)
                    ann.append(dict(x=float(self.SIGMAS[int(np.median(si))]), y=float(self.TEMPS[int(np.median(ti))]),
                                    text=self.LABELS[name], showarrow=False, font=dict(size=12)))
            phase.layout.annotations = ann
        name = phase_of(temperature, prob)
        b2 = prob.beta2 - prob.weight_decay
        a = b2 / (2 * prob.alpha3 * temperature) - 1.5
        ts = transitional_temperature(prob)
        near0 = ("→ 0 at v = 0" if a > 0 else "diverges at v = 0") if name != "dead" else "is δ(v)"
        self.say(f"σ = {sigma:g}, γ = {weight_decay:g}: T_c = {tc:.3f}, T_c/3 = {tc / 3:.3f}, T* = {ts:.3f}. "
                 f"At T = {temperature:g}: {PHASES[name]}. Near 0, p ∝ v^a with a = β₂'/(2α₃T) − 3/2 = {a:.2f}, "
                 f"so p {near0}.")


# ============================================================================ 3. fluctuation inversion
class FluctuationInversion(_RunMixin, Controller):
    """Var[v] against T for depth 0 and depth 1: closed forms (live) and SDE estimates (Run)."""

    def __init__(self, n_chains: int = 600, n_temps: int = 6, seed: int = 0) -> None:
        super().__init__()
        self.n_chains, self.n_temps, self.seed = int(n_chains), int(n_temps), int(seed)
        self.controls = {
            "k": _slider("teacher k", 1.0, 0.5, 2.0, 0.05),
            "sigma": _slider("noise σ", 1.0, 0.25, 2.0, 0.05),
            "weight_decay": _slider("weight decay γ", 0.0, 0.0, 0.3, 0.01),
        }
        self._make_run_widgets()
        fig = go.FigureWidget(layout=dict(height=400, title="fluctuation inversion: Var[v] against T",
                                          xaxis=dict(title="T = η/S"), yaxis=dict(title="Var[v]"), **_LAYOUT))
        fig.add_scatter(x=[], y=[], mode="lines", name="D = 0, closed form", line=dict(color=_COLORS[0], width=3))
        fig.add_scatter(x=[], y=[], mode="lines", name="D = 1, closed form", line=dict(color=_COLORS[1], width=3))
        fig.add_scatter(x=[], y=[], mode="markers", name="D = 0, SDE", marker=dict(color=_COLORS[0], size=9),
                        error_y=dict(type="data", array=[]))
        fig.add_scatter(x=[], y=[], mode="markers", name="D = 1, SDE", marker=dict(color=_COLORS[1], size=9),
                        error_y=dict(type="data", array=[]))
        fig.add_scatter(x=[], y=[], mode="lines", name="T_c (D = 1)", line=dict(color="black", dash="dash"))
        self.figures = [fig]
        self.curves: dict = {}
        self._wire()
        self.update()

    def _update(self, k, sigma, weight_decay) -> None:
        prob = _problem(k, sigma, weight_decay)
        tc = critical_temperature(prob)
        t0_max = (prob.beta1 + weight_decay) / prob.alpha1
        fig = self.figure
        T0 = np.linspace(0.005, 0.95 * t0_max, 60)
        var0 = np.array([variance_depth0(t, prob) for t in T0])
        if tc > 0:
            T1 = np.linspace(0.01, 0.995, 36) * tc
            var1 = np.array([StationaryLaw(prob, t, 1, z_step=0.02).variance for t in T1])
        else:
            T1, var1 = np.array([]), np.array([])
        ymax = 1.3 * max(float(var1.max()) if var1.size else 0.0, float(var0[T0 <= 0.7 * t0_max].max()), 0.05)
        self.curves = {"T0": T0, "var0": var0, "T1": T1, "var1": var1, "T_c": tc}
        with fig.batch_update():
            fig.data[0].x, fig.data[0].y = T0, var0
            fig.data[1].x, fig.data[1].y = T1, var1
            for tr in fig.data[2:4]:
                tr.x, tr.y, tr.error_y.array = [], [], []
            fig.data[4].x, fig.data[4].y = ([tc, tc], [0, ymax]) if tc > 0 else ([], [])
            fig.layout.yaxis.range = [0, ymax]
            fig.layout.xaxis.range = [0, max(T0[-1], tc * 1.05)]
        if tc > 0:
            i = int(np.argmax(var1))
            self.say(f"D=1: Var[v] peaks at T = {T1[i]:.3f} (= {T1[i] / tc:.2f} T_c) at {var1[i]:.3f} and falls to "
                     f"{var1[-1]:.4f} at 0.995 T_c = {T1[-1]:.3f}. D=0: Var = Tg(m)/(β₁' − Tα₁) rises monotonically "
                     f"and diverges at T = β₁'/α₁ = {t0_max:.3f}. Press Run for SDE estimates.")
        else:
            self.say(f"γ ≥ k: T_c = {tc:.3f} ≤ 0, the depth-1 net learns nothing at any T. D=0 still learns.")

    def _run(self, k, sigma, weight_decay, n_chains=None, t_max=25.0) -> None:
        prob = _problem(k, sigma, weight_decay)
        R = self.n_chains if n_chains is None else int(n_chains)
        tc = self.curves["T_c"]
        t0_max = (prob.beta1 + weight_decay) / prob.alpha1
        plan = [(0, T) for T in np.linspace(0.1, 0.55, self.n_temps) * min(t0_max, 0.5)]
        if tc > 0:
            plan += [(1, T) for T in np.linspace(0.15, 0.9, self.n_temps) * tc]
        self.progress.max = len(plan)
        pts = {0: ([], [], [], []), 1: ([], [], [], [])}
        unrelaxed = []
        rng = np.random.default_rng(self.seed)
        for j, (depth, T) in enumerate(plan):
            run, info = run_to_stationarity(prob, T, depth, n_chains=R, v0=1.0, relax_times=4.0,
                                            t_max=t_max, dt=0.04, seed=self.seed + j)
            x = run.final[np.isfinite(run.final)]
            boot = [np.var(x[rng.integers(0, x.size, x.size)]) for _ in range(100)]
            pts[depth][0].append(T)
            pts[depth][1].append(float(np.var(x)))
            pts[depth][2].append(float(np.std(boot)))
            pts[depth][3].append("circle" if info["relaxed"] else "circle-open")
            if not info["relaxed"]:
                unrelaxed.append(f"D={depth}, T={T:.2f}")
            self._tick()
        with self.figure.batch_update():
            for depth in (0, 1):
                tr = self.figure.data[2 + depth]
                tr.x, tr.y, tr.error_y.array = pts[depth][:3]
                tr.marker.symbol = pts[depth][3]
        self.sim_points = pts
        note = (f"; hollow: not relaxed within t = {t_max:g} (critical slowing down near T_c): "
                + ", ".join(unrelaxed)) if unrelaxed else ""
        self.say(f"SDE: {R} chains per point from v₀ = 1, Var of the final states. Error bars: bootstrap over chains, "
                 f"and they understate the uncertainty: the fourth moment is infinite for D=1 (tail v^(−7/2)) and for "
                 f"D=0 above T = β₁'/(3α₁) = {(prob.beta1 + weight_decay) / (3 * prob.alpha1):.3f}, so sample "
                 f"variances converge slowly and usually fall short{note}.")

    def run_long(self, n_chains: int = 2000, t_max: float = 60.0) -> None:
        """A bigger run for the notebook's default figure (a few seconds; the Run button uses the quick size)."""
        t0 = time.perf_counter()
        self.say("Computing…")
        self.progress.value = 0
        try:
            self._run(**self.values(), n_chains=n_chains, t_max=t_max)
        finally:
            self.progress.value = self.progress.max
            self.last_long_run_seconds = time.perf_counter() - t0


# ============================================================================ 4. wrong sign
class WrongSign(_RunMixin, Controller):
    """Runs started with the wrong sign (u = −w): depth ≥ 1 ends at 0, depth 0 keeps wrong-sign mass."""

    live = False

    def __init__(self, n_chains: int = 300, seed: int = 0) -> None:
        super().__init__()
        self.n_chains, self.seed = int(n_chains), int(seed)
        self.controls = {"temperature": _slider("T = η/S", 0.15, 0.05, 0.3, 0.01)}
        self._make_run_widgets()
        fig = go.FigureWidget(make_subplots(rows=1, cols=2, subplot_titles=(
            "|v(t)| from v₀ = −1 (u = −w), depth 1 and 2", "depth 0 from v₀ = −1: the wrong sign keeps mass")))
        fig.update_layout(height=400, legend=dict(orientation="h", y=-0.2), **_LAYOUT)
        fig.add_scatter(x=[], y=[], mode="lines", name="D = 1 (v-SDE): median |v|", line=dict(color=_COLORS[1],
                                                                                                   width=3))
        fig.add_scatter(x=[], y=[], mode="lines", name="D = 2 (v-SDE): median |v|", line=dict(color=_COLORS[2],
                                                                                                   width=3))
        fig.add_scatter(x=[], y=[], mode="lines", name="D = 1 theory: slope −4(β₂ + Tα₃)",
                        line=dict(color="black", dash="dash"))
        fig.add_scatter(x=[], y=[], mode="markers", name="D = 1 noise-amplified SGD on (u, w): median |v|",
                        marker=dict(color=_COLORS["amp"], size=8))
        fig.add_bar(x=[], y=[], name="D = 0 SDE histogram", marker_color=_COLORS[0], opacity=0.4, row=1, col=2)
        fig.add_scatter(x=[], y=[], mode="lines", name="D = 0 closed form (Eq. 12)", line=dict(color=_COLORS[0],
                                                                                                 width=3),
                        row=1, col=2)
        fig.update_yaxes(type="log", title_text="|v|", row=1, col=1)
        fig.update_xaxes(title_text="time t = η·steps", row=1, col=1)
        fig.update_xaxes(title_text="v", row=1, col=2)
        fig.update_yaxes(title_text="density", row=1, col=2)
        self.figures = [fig]
        self.results: dict = {}
        self._wire()
        self.update()

    def _update(self, temperature) -> None:
        self.say(f"T = {temperature:g}: press Run to start every run with the wrong sign, v₀ = −1.")

    def _run(self, temperature) -> None:
        prob = _problem(1.0, 1.0, 0.0)
        T = float(temperature)
        self.progress.max = 4
        t_end, K = 8.0, 80
        fig = self.figure
        res = {}
        for depth in (1, 2):
            run = simulate_v(prob, T, depth, n_chains=self.n_chains, t_end=t_end, dt=0.005, v0=-1.0, n_records=K,
                             scheme="euler", seed=self.seed + depth)
            med = np.median(np.abs(run.v), axis=1)
            res[depth] = (run.times, np.maximum(med, 1e-300))
            self._tick()
        amp = sgd_v_samples(1.0, 1.0, T, depth=1, method="amplified", lr=2e-3, n_runs=100, t_end=2.0, v0=-1.0,
                            n_records=8, seed=self.seed)
        self._tick()
        law0 = StationaryLaw(prob, T, 0)
        run0, info0 = run_to_stationarity(prob, T, 0, n_chains=4 * self.n_chains, v0=-1.0, relax_times=6.0,
                                          seed=self.seed)
        self._tick()
        rate = 4.0 * (prob.beta2 + prob.weight_decay + T * prob.alpha3)
        t_line = np.linspace(2.0, t_end, 20)
        s_ref = math.log(res[1][1][np.searchsorted(res[1][0], 2.0)])
        with fig.batch_update():
            fig.data[0].x, fig.data[0].y = res[1]
            fig.data[1].x, fig.data[1].y = res[2]
            fig.data[2].x, fig.data[2].y = t_line, np.exp(s_ref - rate * (t_line - 2.0))
            if amp["v"].size:
                fig.data[3].x = amp["times"][1:]
                fig.data[3].y = np.maximum(np.median(np.abs(amp["v_path"][1:]), axis=1), 1e-300)
            else:
                fig.data[3].x, fig.data[3].y = [], []
            lo, hi = law0.ppf(np.array([0.002, 0.998]))
            e = np.linspace(lo, hi, 41)
            c, d, _ = histogram_density(run0.final, e)
            fig.data[4].x, fig.data[4].y, fig.data[4].width = c, d, float(e[1] - e[0])
            x = np.linspace(lo, hi, 300)
            fig.data[5].x, fig.data[5].y = x, law0.pdf(x)
            fig.layout.shapes = [dict(type="rect", xref="x2", yref="paper", x0=float(lo), x1=0.0, y0=0, y1=1,
                                      fillcolor="#fee2e2", opacity=0.5, line_width=0, layer="below")]
        p_sim = float(np.mean(run0.final < 0))
        p_th = float(law0.cdf(np.array([0.0]))[0])
        self.results = {"p_wrong_sim": p_sim, "p_wrong_theory": p_th, "median_abs_v_end": {d: float(res[d][1][-1])
                                                                                         for d in (1, 2)},
                        "amplified_median_abs_v_t2": float(np.median(np.abs(amp["v"]))) if amp["v"].size else None,
                        "amplified_diverged": amp["diverged"]}
        self.say(f"D=1: median |v| at t = {t_end:g} is {res[1][1][-1]:.1e} (exponential collapse at rate "
                 f"{rate:.2f}); D=2: {res[2][1][-1]:.1e} (algebraic: the drift vanishes like |v|^(4/3)); "
                 f"noise-amplified SGD on (u, w), η = 2e-3: median |v| = "
                 f"{self.results['amplified_median_abs_v_t2']:.1e} at t = 2 ({amp['diverged']} of 100 runs diverged). "
                 f"D=0: P(v < 0) = {p_sim:.3f} simulated vs {p_th:.3f} closed form (shaded): linear regression keeps "
                 "the wrong sign with positive probability.")


# ============================================================================ 5. tails
def survival_points(samples, v_grid, min_count: int = 5):
    """Empirical ``P(V > v)`` at ``v_grid``, keeping points with at least ``min_count`` samples beyond."""
    x = np.sort(np.asarray(samples, dtype=float).ravel())
    n = x.size
    beyond = n - np.searchsorted(x, v_grid, side="right")
    keep = beyond >= min_count
    return v_grid[keep], beyond[keep] / max(n, 1)


class Tails(_RunMixin, Controller):
    """Log–log tails for D = 1, 2, 4 against the predicted exponents; D = 0 for contrast.

    Plotted as the survival function ``P(V > v) ~ v^{ρ+1}`` (``ρ = −5 + 3/(D+1)``), which is far
    less noisy than a histogram of rare events: closed form (lines), the power law (dashed) and
    SDE samples (markers, Run).
    """

    DEPTHS = (1, 2, 4)

    def __init__(self, n_chains: int = 800, n_records: int = 10, t_end: float = 10.0, seed: int = 0) -> None:
        super().__init__()
        self.n_chains, self.n_records, self.t_end, self.seed = int(n_chains), int(n_records), float(t_end), int(seed)
        self.controls = {"temperature": _slider("T = η/S", 0.15, 0.03, 0.3, 0.01)}
        self._make_run_widgets()
        fig = go.FigureWidget(layout=dict(height=440, title="tails of the stationary law: P(V > v), log–log",
                                          xaxis=dict(type="log", title="v", range=[0, 2]),
                                          yaxis=dict(type="log", title="P(V > v)", range=[-6.3, 0.1]), **_LAYOUT))
        for d in self.DEPTHS:
            fig.add_scatter(x=[], y=[], mode="lines", name=f"D = {d}", line=dict(color=_COLORS[d], width=3))
        for d in self.DEPTHS:
            fig.add_scatter(x=[], y=[], mode="lines", name=f"slope ρ+1 = {tail_exponent(d) + 1:g}",
                            line=dict(color=_COLORS[d], dash="dash", width=1.5))
        fig.add_scatter(x=[], y=[], mode="lines", name="D = 0 (slope depends on T)",
                        line=dict(color=_COLORS[0], width=2, dash="dot"))
        for d in self.DEPTHS:
            fig.add_scatter(x=[], y=[], mode="markers", name=f"SDE, D = {d}",
                            marker=dict(color=_COLORS[d], size=8, symbol="circle-open", line=dict(width=2)))
        self.figures = [fig]
        self.samples: dict = {}
        self._wire()
        self.update()

    def _update(self, temperature) -> None:
        prob = _problem(1.0, 1.0, 0.0)
        v = np.logspace(0, 2, 120)
        fig = self.figure
        slopes = {}
        with fig.batch_update():
            for i, d in enumerate(self.DEPTHS):
                law = StationaryLaw(prob, temperature, d, z_step=0.02)
                sf = 1.0 - law.cdf(v)
                fig.data[i].x, fig.data[i].y = v, sf
                rho = tail_exponent(d)
                fig.data[3 + i].x, fig.data[3 + i].y = v, float(sf[-1]) * (v / v[-1]) ** (rho + 1.0)
                vv = np.array([1e3, 2e3])
                slopes[d] = float(np.diff(law.log_pdf(vv))[0] / math.log(2.0))
            law0 = StationaryLaw(prob, temperature, 0, z_step=0.02)
            sf0 = 1.0 - law0.cdf(v)
            keep = sf0 > 1e-7
            fig.data[6].x, fig.data[6].y = v[keep], sf0[keep]
            for i in range(len(self.DEPTHS)):
                fig.data[7 + i].x, fig.data[7 + i].y = [], []
        self.slopes = slopes
        rho0 = tail_exponent(0, temperature, prob)
        self.say("local slope of log p at v ≈ 1000: " + ", ".join(f"D={d}: {s:.3f} (ρ = {tail_exponent(d):g})"
                                                                  for d, s in slopes.items())
                 + f"; D=0: ρ = −2 − β₁/(α₁T) = {rho0:.2f} changes with T. Press Run for SDE samples.")

    def _run(self, temperature, n_chains=None, n_records=None, t_end=None) -> None:
        prob = _problem(1.0, 1.0, 0.0)
        R = self.n_chains if n_chains is None else int(n_chains)
        K = self.n_records if n_records is None else int(n_records)
        t_end = self.t_end if t_end is None else float(t_end)
        self.progress.max = len(self.DEPTHS)
        v_grid = np.logspace(0, 2, 25)
        counts = []
        with self.figure.batch_update():
            for i, d in enumerate(self.DEPTHS):
                run = simulate_v(prob, temperature, d, n_chains=R, t_end=t_end, dt=0.02, v0=1.0, n_records=K,
                                 seed=self.seed + d)
                # records from the second half pooled: tail excursions decorrelate within ~1 time unit
                x = run.v[run.times >= 0.5 * run.times[-1]].ravel()
                self.samples[d] = x
                xs, sf = survival_points(x, v_grid)
                self.figure.data[7 + i].x, self.figure.data[7 + i].y = xs, sf
                counts.append(f"D={d}: {x.size} samples, {int(np.sum(x > 10))} above v = 10")
                self._tick()
        self.say(f"SDE: {R} chains from v₀ = 1 for t = {t_end:g}, records from the second half pooled; "
                 + ", ".join(counts) + ". The lines do not move with T for D ≥ 1 far out: try the slider.")

    def run_long(self, n_chains: int = 2000, n_records: int = 20, t_end: float = 20.0) -> None:
        """A bigger run for the notebook's default figure (a few seconds; the Run button uses the quick size)."""
        t0 = time.perf_counter()
        self.say("Computing…")
        self.progress.value = 0
        try:
            self._run(**self.values(), n_chains=n_chains, n_records=n_records, t_end=t_end)
        finally:
            self.progress.value = self.progress.max
            self.last_long_run_seconds = time.perf_counter() - t0


# ============================================================================ 6. discrete SGD near T_c
class DiscreteSGD(_RunMixin, Controller):
    """Plain SGD (η = T, S = 1) and noise-amplified SGD against the SDE's closed form: where the picture breaks."""

    live = False

    def __init__(self, n_runs: int = 300, seed: int = 0) -> None:
        super().__init__()
        self.n_runs, self.seed = int(n_runs), int(seed)
        self.controls = {"temperature": _slider("T = η/S", 0.1, 0.04, 0.32, 0.02)}
        self._make_run_widgets()
        fig = go.FigureWidget(layout=dict(height=420, title="depth 1: SGD on the actual parameters vs the SDE law",
                                          xaxis=dict(title="v"), yaxis=dict(title="density"), **_LAYOUT))
        fig.add_scatter(x=[], y=[], mode="lines", name="closed form (Eq. 15)", line=dict(color="black", width=3))
        fig.add_scatter(x=[], y=[], mode="lines", line_shape="hvh", name="v-SDE", line=dict(color=_COLORS[1]))
        fig.add_scatter(x=[], y=[], mode="lines", line_shape="hvh", name="plain SGD, η = T, S = 1",
                        line=dict(color=_COLORS["sgd"], width=2))
        fig.add_scatter(x=[], y=[], mode="lines", line_shape="hvh", name="noise-amplified SGD, η = 2e-3",
                        line=dict(color=_COLORS["amp"], width=2))
        scan = go.FigureWidget(make_subplots(rows=1, cols=2, subplot_titles=(
            "fraction of runs that diverged (|θ| > 1e12)", "KS distance at the same time t (surviving runs)")))
        scan.update_layout(height=380, legend=dict(orientation="h", y=-0.22), **_LAYOUT)
        for name, color in (("plain SGD, η = T", _COLORS["sgd"]), ("noise-amplified SGD, η = 2e-3", _COLORS["amp"])):
            scan.add_scatter(x=[], y=[], mode="lines+markers", name=name, line=dict(color=color), row=1, col=1,
                             showlegend=False)
            scan.add_scatter(x=[], y=[], mode="lines+markers", name=f"{name} vs v-SDE", line=dict(color=color),
                             row=1, col=2)
        scan.add_scatter(x=[], y=[], mode="lines", showlegend=False, row=1, col=1)
        scan.add_scatter(x=[], y=[], mode="lines+markers", name="v-SDE vs closed form (not yet stationary near T_c)",
                         line=dict(color=_COLORS[1], dash="dot"), row=1, col=2)
        scan.add_scatter(x=[], y=[], mode="lines", name="two-sample KS threshold", line=dict(color="black",
                                                                                             dash="dash"),
                         row=1, col=2)
        scan.add_scatter(x=[], y=[], mode="lines", name="T_c", line=dict(color="#6b7280", dash="dot"), row=1, col=2)
        scan.update_xaxes(title_text="T = η/S")
        self.figures = [fig, scan]
        self.results: dict = {}
        self.scan_results: dict = {}
        self._wire()
        self.update()

    def scan(self, temps=(0.05, 0.1, 0.15, 0.2, 0.25, 0.3), n_runs: int = 300, t_end: float = 5.0) -> dict:
        """Divergence fraction and KS distances against T for plain SGD, noise-amplified SGD and the v-SDE.

        Every method starts at v = 1 (balanced) and runs for the same time ``t_end``, so SGD is
        compared with the SDE *at the same time* (two-sample KS): slow relaxation near T_c affects
        both alike and does not masquerade as a discretisation error. The SDE's own KS distance to
        the closed form shows how far from stationary the runs still are. A few seconds (not a
        slider callback): the notebook runs it once at these default sizes.
        """
        prob = _problem(1.0, 1.0, 0.0)
        keys = ("T", "sgd_div", "amp_div", "sgd_ks", "amp_ks", "sgd_crit", "amp_crit", "sde_ks_law", "sde_crit")
        rows = {k: [] for k in keys}
        c_alpha = math.sqrt(-0.5 * math.log(1e-4 / 2.0))  # two-sample KS, asymptotic, α = 1e-4
        for j, T in enumerate(temps):
            law = StationaryLaw(prob, T, 1)
            sgd = sgd_v_samples(1.0, 1.0, T, method="sgd", n_runs=n_runs, t_end=t_end, seed=self.seed + j)
            amp = sgd_v_samples(1.0, 1.0, T, method="amplified", lr=2e-3, n_runs=n_runs // 2, t_end=t_end,
                                seed=self.seed + j)
            sde = simulate_v(prob, T, 1, n_chains=n_runs, t_end=t_end, dt=0.02, v0=1.0, seed=self.seed + j).final
            rows["T"].append(T)
            for key, res in (("sgd", sgd), ("amp", amp)):
                m = res["v"].size
                rows[f"{key}_div"].append(res["diverged"] / res["n_runs"])
                rows[f"{key}_ks"].append(float(stats.ks_2samp(res["v"], sde).statistic) if m else 1.0)
                rows[f"{key}_crit"].append(c_alpha * math.sqrt((m + n_runs) / max(m * n_runs, 1)))
            if law.collapsed:
                rows["sde_ks_law"].append(float("nan"))
            else:
                rows["sde_ks_law"].append(float(stats.kstest(sde, law.cdf).statistic))
            rows["sde_crit"].append(float(stats.kstwo.ppf(0.9999, n_runs)))
        fig = self.figures[1]
        with fig.batch_update():
            fig.data[0].x, fig.data[0].y = rows["T"], rows["sgd_div"]
            fig.data[1].x, fig.data[1].y = rows["T"], rows["sgd_ks"]
            fig.data[2].x, fig.data[2].y = rows["T"], rows["amp_div"]
            fig.data[3].x, fig.data[3].y = rows["T"], rows["amp_ks"]
            fig.data[4].x, fig.data[4].y = [], []
            fig.data[5].x, fig.data[5].y = rows["T"], rows["sde_ks_law"]
            fig.data[6].x, fig.data[6].y = rows["T"], rows["sgd_crit"]
            tc = critical_temperature(prob)
            fig.data[7].x, fig.data[7].y = [tc, tc], [0, 1]
        rows["n_runs"] = int(n_runs)
        self.scan_results = rows
        return rows

    def _update(self, temperature) -> None:
        prob = _problem(1.0, 1.0, 0.0)
        self.say(f"T = {temperature:g} (T_c = {critical_temperature(prob):.3f}): plain SGD uses η = T = "
                 f"{temperature:g} with batch size 1. Press Run.")

    def _run(self, temperature) -> None:
        prob = _problem(1.0, 1.0, 0.0)
        T = float(temperature)
        law = StationaryLaw(prob, T, 1)
        self.progress.max = 3
        t_end = 6.0
        sde, _ = run_to_stationarity(prob, T, 1, n_chains=self.n_runs, v0=1.0, relax_times=3.0, t_max=t_end,
                                     seed=self.seed)
        self._tick()
        sgd = sgd_v_samples(1.0, 1.0, T, method="sgd", n_runs=self.n_runs, t_end=t_end, seed=self.seed)
        self._tick()
        amp = sgd_v_samples(1.0, 1.0, T, method="amplified", lr=2e-3, n_runs=self.n_runs // 2, t_end=3.0,
                            seed=self.seed)
        self._tick()
        hi = float(law.ppf(np.array([0.98]))[0]) if not law.collapsed else 1.0
        e = np.linspace(0.0, hi, 21)
        rows = {}
        with self.figure.batch_update():
            if law.collapsed:
                self.figure.data[0].x, self.figure.data[0].y = [], []
            else:
                x = np.linspace(e[0], e[-1], 300)[1:]
                self.figure.data[0].x, self.figure.data[0].y = x, law.pdf(x)
            for i, (name, vals, div, n) in enumerate((("v-SDE", sde.final, 0, self.n_runs),
                                                      ("plain SGD", sgd["v"], sgd["diverged"], self.n_runs),
                                                      ("amplified SGD", amp["v"], amp["diverged"], self.n_runs // 2))):
                c, d, _ = histogram_density(vals, e)
                self.figure.data[1 + i].x, self.figure.data[1 + i].y = c, d
                ks = float(stats.kstest(vals, law.cdf).statistic) if (vals.size and not law.collapsed) else float("nan")
                crit = float(stats.kstwo.ppf(0.9999, max(vals.size, 1)))
                rows[name] = {"ks": ks, "ks_threshold": crit, "diverged": div, "n": n}
        self.results = rows
        txt = []
        for name, r in rows.items():
            verdict = "agrees" if r["ks"] <= r["ks_threshold"] else "DISAGREES"
            ks = "n/a" if not math.isfinite(r["ks"]) else f"{r['ks']:.3f}"
            txt.append(f"{name}: KS {ks} (threshold {r['ks_threshold']:.3f}, {verdict})"
                       + (f", {r['diverged']}/{r['n']} runs diverged" if r["diverged"] else ""))
        self.say(f"T = {T:g}: " + " | ".join(txt) + ". Divergences come from rare large x² in single samples: the "
                 "SDE's Gaussian noise has no such kicks.")


# ============================================================================ 7. check yourself
def _exercise(name: str, question: str, truth: float, why: str, solution: float, mistakes) -> Exercise:
    """A numeric exercise (relative tolerance 1e-3); ``why`` explains a right answer and is the hint for a wrong one."""
    return number_exercise(name, question, truth, f"{truth:.4g}. ({why})", why, solution=solution, rel_tol=1e-3,
                           mistakes=mistakes)


#: The exercises of §7, by name (shown by :class:`~symsgd_core.ui.exercises.ExercisePanel`). The expected
#: values come from :mod:`symsgd_core.stationary`; each ``solution`` is the hand computation in the
#: explanation, and the typical mistakes say what a wrong value reveals.
EXERCISES = {ex.name: ex for ex in (
    _exercise("critical_temperature",
              "k = 1, σ = 1, weight decay γ = 0.2: above which T does the depth-1 net learn nothing?",
              critical_temperature(_problem(1.0, 1.0, 0.2)),
              "T_c = (β₂ − γ)/α₃ with β₂ = k = 1 and α₃ = 2k² + σ² = 3: (1 − 0.2)/3.", (1 - 0.2) / 3,
              [(critical_temperature(_problem(1.0, 1.0, 0.0)),
                "that is T_c without weight decay: γ lowers the effective β₂ to β₂ − γ."),
               (critical_temperature(_problem(1.0, 1.0, 0.2)) / 3,
                "that is T_c/3, where the density starts to diverge at v = 0; learning stops only at T_c.")]),
    _exercise("tail_depth3", "What is the tail exponent ρ (p ~ v^ρ) of a depth-3 diagonal net?", tail_exponent(3),
              "ρ = −5 + 3/(D+1) = −5 + 3/4, whatever T is.", -5 + 3 / 4,
              [(tail_exponent(1), "that is the depth-1 exponent −7/2; use D = 3."),
               (tail_exponent(3) + 1, "that is the slope of the survival function P(V > v) ~ v^(ρ+1), not of p.")]),
    _exercise("variance_depth0", "Linear regression (D = 0), k = σ = 1, no weight decay, T = 0.1: what is Var[v]?",
              variance_depth0(0.1, _problem(1.0, 1.0, 0.0)),
              "Var = T/(1 − 2T) for k = σ = 1 (linear drift, noise 4Tg(v)).", 0.1 / (1 - 2 * 0.1),
              [(0.1, "that is T alone: the variance also grows through the noise g(v), Var = T g(m)/(β₁ − Tα₁)."),
               (0.1 / (1 - 0.1), "check the denominator: β₁ − Tα₁ = 1 − 2T with α₁ = Var[x²] = 2.")]),
    _exercise("mode_depth1", "Depth 1, k = σ = 1, T = 0.05: what is the most likely value of v?",
              float(most_likely_roots_depth1(0.05, _problem(1.0, 1.0, 0.0))[-1]),
              "the positive root of 7α₁Tv² + (β₁ − 10α₂T)v − (β₂ − 3α₃T) = 0: 0.7v² + 0v − 0.55 = 0 → √(0.55/0.7).",
              math.sqrt(0.55 / 0.7),
              [(1.0, "that is the T → 0 limit β₂/β₁; at T = 0.05 the noise moves the most likely value."),
               (math.sqrt(0.85 / 0.7), "check the constant term: β₂ − 3α₃T = 1 − 3·3·0.05 = 0.55.")]),
)}
