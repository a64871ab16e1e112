"""Interactive figures of Notebook 03: SGD's stationary distribution for diagonal networks.

One draw-only controller per figure (pattern in :mod:`symsgd_core.ui.base`). The sliders redraw the closed
forms at once (the figure's ``closed_form`` experiment, kept in ``self.result``; ≤ 100 ms); a released slider then
also calls the figure's simulation experiment of :mod:`symsgd_core.stationary.experiments` (≤ 0.5 s at every
slider end, no Run button: ``RunController.auto_run``) and keeps its frozen result in ``self.simulation``.
Conventions: ``ℓ = (f − y)²``, ``T = η/S``, ``t = η·steps``
(:mod:`symsgd_core.core.conventions`).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..stationary import experiments as ex
from ..stationary.laws import CRITICAL_T, PHASES, critical_temperature, tail_exponent
from ..stationary.sgd import AMPLIFIED_LR
from .base import PLATFORM_WORDS, Controller, ExperimentFigure, Words
from .plotting import axes, key_last, keyed, line, markers, panels, put
from .sliders import TEMPERATURE, Range
from .style import NEUTRALS, PALETTE

__all__ = ["DepthComparison", "PhaseTransition", "FluctuationInversion", "WrongSign", "Tails", "DiscreteSGD"]

_LAYOUT = dict(margin=dict(l=60, r=20, t=50, b=50))
_COLORS = {0: PALETTE["blue"], 1: PALETTE["vermillion"], 2: PALETTE["bluish_green"], 4: PALETTE["reddish_purple"],
           "sgd": PALETTE["orange"], "amp": PALETTE["sky_blue"]}
#: The noise-amplified step size as the figures write it ("2e-3").
_AMP_LR = f"{AMPLIFIED_LR:.0e}".replace("e-0", "e-")

#: The sliders of the stationary figures (besides the temperature, :data:`~symsgd_core.ui.sliders.TEMPERATURE`).
TEACHER = Range("teacher k", 0.25, 2.0, 0.05, fmt=".2f")
LABEL_NOISE = Range("label noise σ", 0.25, 2.0, 0.05, fmt=".2f")
DECAY = Range("weight decay γ", 0.0, 0.5, 0.01, fmt=".2f")


#: The status line after a simulation: the closed forms' finding, then the simulation's.
SIMULATION_AFTER_CLOSED_FORM = "{closed_form} Simulation: {simulation}"


class _StationaryRun(ExperimentFigure):
    """Live closed forms (``closed_form``, drawn by ``_show_closed_form`` and worded by ``closed_form_words``) and,
    when a slider is released, the simulation: the experiment at the sliders and the figure's other settings
    (``self.settings``), kept in ``self.simulation``, drawn by ``_show`` and worded by ``words`` after the closed
    forms' finding (:data:`SIMULATION_AFTER_CLOSED_FORM`)."""

    #: re-simulates when a slider is released: its Run answers in ≤ 0.5 s at every slider end (bench)
    auto_run = True
    live = True
    simulation = None
    #: The sizes of :meth:`run_long` (the notebook's bigger default figure).
    LONG: dict = {}

    def _draw(self, result, **values) -> None:
        """Keep the simulation ``result``, draw it and word it after the closed forms' finding (both stay in the
        status line)."""
        self.simulation = result
        self._show(result, **values)
        closed, simulated = self.closed_form_words(self.result, **values), self.words(result, **values)
        self._speak(Words(simulated.headline, simulated.level, SIMULATION_AFTER_CLOSED_FORM.format(
            closed_form=closed.text, simulation=simulated.text)))

    def run_long(self, **sizes) -> None:
        """A bigger run for the notebook's default figure, at ``LONG`` overridden by ``sizes`` (a few seconds; a
        slider move uses the quick sizes of ``self.settings``)."""
        self.say(PLATFORM_WORDS["computing"])
        self._run(**self.values(), **{**self.LONG, **sizes})


# ============================================================================ 1. depth 0 vs depth 1
class DepthComparison(_StationaryRun):
    """Depth 0 vs depth 1 at the same T: closed-form densities (live, :func:`depth_laws`) and SDE histograms
    (Run, :func:`depth_comparison`). Sliders: T = η/S, teacher slope k, label noise σ, weight decay γ."""

    experiment = staticmethod(ex.depth_comparison)
    closed_form = staticmethod(ex.depth_laws)
    sliders = dict(temperature=TEMPERATURE, k=TEACHER, sigma=LABEL_NOISE, weight_decay=DECAY)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("L = 0: linear regression (Eq. 12)", "L = 1: diagonal net (Eq. 15)", height=400,
                     layout=dict(_LAYOUT, showlegend=True, legend=dict(orientation="h", y=-0.18)))
        for col, depth in ((1, 0), (2, 1)):
            fig.add_bar(x=[], y=[], name=f"SDE histogram, L = {depth}", marker_color=_COLORS[depth], opacity=0.35,
                        row=1, col=col)
            key_last(fig, f"histogram{depth}")
            line(fig, f"closed form, L = {depth}", _COLORS[depth], at=(1, col), width=3, key=f"law{depth}")
            markers(fig, "most likely v (+ interior peak)" if depth == 0 else None, "black", at=(1, col), size=11,
                    symbol="diamond", showlegend=depth == 0, key=f"mode{depth}")
            axes(fig, (1, col), x="v = network slope")
        axes(fig, (1, 1), y="density p(v)")
        fig.add_scatter(x=[], y=[], mode="text", text=[], showlegend=False,
                        textfont=dict(size=14, color=PALETTE["vermillion"]), row=1, col=2)
        key_last(fig, "delta_note")
        return [fig]

    def _show_closed_form(self, r, **values) -> None:
        note = dict(x=[], y=[], text=[])  # the δ(v) label, assigned once below (ui/base.py: the batch rule)
        with self.figure.batch_update():
            for depth in (0, 1):
                bars, curve, mode = (keyed(self.figure, f"{k}{depth}") for k in ("histogram", "law", "mode"))
                bars.x, bars.y = [], []
                mode.x, mode.y = r.modes[depth]
                if r.laws[depth].collapsed:
                    curve.x, curve.y = [0.0, 0.0], [0.0, 1.0]
                    note = dict(x=[0.5], y=[0.8], text=["T ≥ T<sub>c</sub>: δ(v), the line at 0"])
                    continue
                curve.x, curve.y = r.curves[depth]
            put(self.figure, "delta_note", **note)

    def closed_form_words(self, r, temperature, **values) -> Words:
        kind, n = r.outcome.kind, r.outcome.numbers  # every phase at level "info": the phase is what it shows
        msgs = []
        for depth in (0, 1):
            if n[f"collapsed_L{depth}"]:
                msgs.append(f"L = 1: T is at or above the {CRITICAL_T} = {n['T_c']:.3f}, so the law is δ(v): "
                            "the net "
                            "learns nothing (vertical line at 0)")  # the sentence's full stop comes after the join
                continue
            variance, mode = n[f"variance_L{depth}"], n[f"mode_L{depth}"]
            var = f"{variance:.3f}" if math.isfinite(variance) else "∞"
            msgs.append(f"L = {depth}: mean {n[f'mean_L{depth}']:.3f}, Var {var}, most likely v = {mode:.3f}"
                        + (" (density diverges at 0)" if depth == 1 and mode == 0 else ""))
        return Words(None, "info", f"T = {temperature:g}, {CRITICAL_T} = (β₂ − γ)/α₃ = {n['T_c']:.3f}, phase (L = 1): "
                     f"{kind}. " + " | ".join(msgs) + ".")

    def _show(self, sim, **values) -> None:
        with self.figure.batch_update():
            for depth in (0, 1):
                s, e = sim.samples[depth], sim.laws.edges[depth]
                put(self.figure, f"histogram{depth}", x=s.centres, y=s.density, width=float(e[1] - e[0]))
                if sim.laws.laws[depth].collapsed:
                    top = float(np.max(s.density)) if s.density.size else 1.0
                    put(self.figure, "law1", y=[0.0, top])
                    put(self.figure, "delta_note", y=[0.8 * top])

    #: The status level of each kind of :data:`~symsgd_core.stationary.experiments.DEPTH_OUTCOMES`.
    LEVELS = dict(unrelaxed="warning",  # a chain ran out of time: the histogram is not the stationary law
                  collapsed="warning",  # T at or above the critical T: the law is δ(v), the net learns nothing
                  compared="info")      # both histograms against their laws: what the figure is about

    def words(self, sim, **values) -> Words:
        n = sim.outcome.numbers  # each depth told by its numbers, at the level of the kind (LEVELS)
        texts = []
        for depth in (0, 1):
            t_end, rate = n[f"t_end_L{depth}"], n[f"lambda1_L{depth}"]
            if n[f"non_finite_L{depth}"]:
                texts.append(f"L = {depth}: {n[f'non_finite_L{depth}']} chains left the float range (excluded)")
            if n[f"collapsed_L{depth}"]:
                texts.append(f"L = {depth}: median v after t = {t_end:.0f} is {n[f'median_L{depth}']:.1e} "
                             "(collapsing to 0)")
                continue
            relax = "" if n[f"relaxed_L{depth}"] else f", NOT relaxed (1/κ = {1 / rate:.0f})"
            texts.append(f"L = {depth}: KS {n[f'ks_L{depth}']:.3f} vs sampling threshold "
                         f"{n[f'ks_threshold_L{depth}']:.3f}, t = {t_end:.1f} = {rate * t_end:.1f}/κ{relax}")
        return Words(None, self.LEVELS[sim.outcome.kind], f"{n['n_chains']} SDE chains per depth from v₀ = 1 (one "
                     "sample per chain, weak "
                     f"order-2 scheme, dt = 0.02). " + " | ".join(texts))


# ============================================================================ 2. phase transition
class PhaseTransition(Controller):
    """The density near v = 0 (log–log) as T crosses T_c/3, T* and T_c, and the (σ, T) phase diagram
    (:func:`phase_view`)."""

    LABELS = {"peaked": "learns: peak at v > 0", "bimodal": "bimodal: spike at 0 + peak",
              "collapsing": "spike at 0 only", "dead": "δ(v): learns nothing"}
    #: The phase diagram's colour per phase code 0–3 (peaked, bimodal, collapsing, dead), each on its quarter of the
    #: colour scale (zmin = 0, zmax = 3), pale behind the lines.
    FILLS = ("#bbf7d0", "#fde68a", "#fecaca", NEUTRALS["grey_light"])
    DELTA_NOTE = dict(text="your T ≥ T<sub>c</sub>: no density, the law is δ(v)", x=0.5, y=0.95, xref="paper",
                      yref="paper", showarrow=False, font=dict(color=PALETTE["vermillion"]))

    experiment = staticmethod(ex.phase_view)
    sliders = dict(temperature=TEMPERATURE.but(lo=0.01, hi=0.6, step=0.005, fmt=".3f"),
                   sigma=LABEL_NOISE.but(lo=0.1), weight_decay=DECAY)

    def _figures(self) -> list[go.FigureWidget]:
        dens = go.FigureWidget(layout=dict(height=380, title="density near v = 0 (log–log): p ∝ v<sup>a</sup> as v → 0",
                                           # the ranges start a little below 1e-6 so that the two "1µ" tick
                                           # labels do not meet in the corner
                                           xaxis=dict(type="log", title="v", range=[-6.2, 1.3]),
                                           yaxis=dict(type="log", title="p(v)", range=[-6.5, 6]), **_LAYOUT))
        for i, f in enumerate(ex.PHASE_FRACTIONS):
            line(dens, f"T = {f:g}·T<sub>c</sub>", None, width=1.5, dash="dot", key=f"reference{i}")
        line(dens, "your T", "black", width=4, key="current")
        title = f"phase diagram of the depth-1 net (k = {self.settings['k']:g})"
        phase = go.FigureWidget(layout=dict(height=420, title=title, xaxis=dict(title="label noise σ"),
                                            yaxis=dict(title="T = η/S"), **_LAYOUT))
        phase.add_heatmap(x=ex.PHASE_SIGMAS, y=ex.PHASE_TEMPS, z=np.zeros((ex.PHASE_TEMPS.size, ex.PHASE_SIGMAS.size)),
                          zmin=0, zmax=3, showscale=False, opacity=0.35, hoverinfo="skip",
                          colorscale=[[(i + j) / 4, c] for i, c in enumerate(self.FILLS) for j in (0, 1)])
        key_last(phase, "codes")
        for key, name, dash in (("T_c", "T<sub>c</sub>", "solid"), ("T_c/3", "T<sub>c</sub>/3", "dash"),
                                ("T_star", "T*", "dot")):
            line(phase, name, "black", dash=dash, width=2, x=ex.PHASE_SIGMAS, y=np.zeros_like(ex.PHASE_SIGMAS),
                 key=key)
        markers(phase, "you are here", PALETTE["vermillion"], size=14, symbol="x", x=[1.0], y=[0.15],
                marker_line=dict(width=2), key="here")
        return [dens, phase]

    def _show(self, r, temperature, sigma, weight_decay) -> None:
        dens, phase = self.figures
        with dens.batch_update():
            for i in range(len(ex.PHASE_FRACTIONS)):
                x, y = r.references[i][1:] if r.references else ([], [])
                put(dens, f"reference{i}", x=x, y=y)
            x, y = ([], []) if r.current is None else r.current
            put(dens, "current", x=x, y=y)
            dens.layout.annotations = [self.DELTA_NOTE] if r.current is None else []
        with phase.batch_update():
            put(phase, "codes", z=r.codes)
            put(phase, "T_c", y=r.T_c_curve.tolist())
            put(phase, "T_c/3", y=r.T_c_curve / 3.0)
            put(phase, "T_star", y=r.T_star_curve.tolist())
            put(phase, "here", x=[sigma], y=[temperature])
            phase.layout.annotations = [dict(x=s, y=T, text=self.LABELS[name], showarrow=False, font=dict(size=12))
                                        for name, (s, T) in r.region_centres().items()]

    #: The status level of each phase (:data:`~symsgd_core.stationary.experiments.PHASE_OUTCOMES`): "dead" (at or
    #: above the critical T the law is δ(v), nothing is learned) is the failure, the learning phases are what the
    #: figure shows.
    LEVELS = {kind: "warning" if kind == "dead" else "info" for kind in ex.PHASE_OUTCOMES}

    def words(self, r, temperature, sigma, weight_decay) -> Words:
        kind, n = r.outcome.kind, r.outcome.numbers
        a, tc = n["near_zero_exponent"], n["T_c"]
        near0 = ("→ 0 at v = 0" if a > 0 else "diverges at v = 0") if kind != "dead" else "is δ(v)"
        return Words(None, self.LEVELS[kind], f"σ = {sigma:g}, γ = {weight_decay:g}: {CRITICAL_T} = {tc:.3f}, a "
                     "third of it = "
                     f"{tc / 3:.3f}, "
                     f"T* = {n['T_star']:.3f}. At T = {temperature:g}: {PHASES[kind]}. Near 0, p ∝ vᵃ with "
                     f"a = β₂'/(2α₃T) − 3/2 = {a:.2f}, so p {near0}.")


# ============================================================================ 3. fluctuation inversion
class FluctuationInversion(_StationaryRun):
    """Var[v] against T for depth 0 and depth 1: closed forms (live, :func:`variance_curves`) and SDE estimates
    (Run, :func:`variance_estimates`)."""

    experiment = staticmethod(ex.variance_estimates)
    closed_form = staticmethod(ex.variance_curves)
    sliders = dict(k=TEACHER.but(lo=0.5), sigma=LABEL_NOISE, weight_decay=DECAY.but(hi=0.3))
    LONG = dict(n_chains=2000, t_max=60.0)

    def _figures(self) -> list[go.FigureWidget]:
        fig = go.FigureWidget(layout=dict(height=400, title="fluctuation inversion: Var[v] against T",
                                          xaxis=dict(title="T = η/S"), yaxis=dict(title="Var[v]"), **_LAYOUT))
        for depth in (0, 1):
            line(fig, f"L = {depth}, closed form", _COLORS[depth], width=3, key=f"law{depth}")
        for depth in (0, 1):
            markers(fig, f"L = {depth}, SDE", _COLORS[depth], size=9, error_y=dict(type="data", array=[]),
                    key=f"sde{depth}")
        line(fig, "T<sub>c</sub> (L = 1)", "black", dash="dash", key="T_c")
        return [fig]

    def _show_closed_form(self, r, **values) -> None:
        tc, t0_max, T0, T1, var1 = r.T_c, r.T0_max, r.T0, r.T1, r.var1
        fig = self.figure
        ymax = 1.3 * max(float(var1.max()) if var1.size else 0.0, float(r.var0[T0 <= 0.7 * t0_max].max()), 0.05)
        with fig.batch_update():
            put(fig, "law0", x=T0, y=r.var0)
            put(fig, "law1", x=T1, y=var1)
            for depth in (0, 1):
                put(fig, f"sde{depth}", x=[], y=[], error_y_array=[])
            x, y = ([tc, tc], [0, ymax]) if tc > 0 else ([], [])
            put(fig, "T_c", x=x, y=y)
            fig.layout.yaxis.range = [0, ymax]
            fig.layout.xaxis.range = [0, max(T0[-1], tc * 1.05)]

    def closed_form_words(self, r, **values) -> Words:
        return Words(None, "info", ex.variance_summary(r.outcome))  # the sentence notebook 03's cell prints too

    def _show(self, sim, k, sigma, weight_decay, **sizes) -> None:
        with self.figure.batch_update():
            for depth in (0, 1):
                x, y, err, ok = sim.points[depth][:4]
                put(self.figure, f"sde{depth}", x=x, y=y, error_y_array=err,
                    marker_symbol=["circle" if relaxed else "circle-open" for relaxed in ok])

    def words(self, sim, **values) -> Words:
        n = sim.outcome.numbers  # both kinds at level "info": hollow points are said, not a failure
        note = (f"; hollow: not relaxed within t = {n['t_max']:g} (critical slowing down near the {CRITICAL_T}): "
                + ", ".join(f"L = {d} at T = {T:.3f}" for d, T in zip(n["unrelaxed_depth"], n["unrelaxed_T"]))
                if sim.outcome.kind == "unrelaxed" else "")
        return Words(None, "info",
            f"SDE: {n['n_chains']} chains per point from v₀ = 1, Var of the final states. Error bars: bootstrap over "
            f"chains, and they understate the uncertainty: the fourth moment is infinite for L = 1 (tail v⁻⁷ᐟ²) "
            f"and for L = 0 above T = β₁'/(3α₁) = {n['fourth_moment_T']:.3f}, so sample "
            f"variances converge slowly and usually fall short{note}.")


# ============================================================================ 4. wrong sign
class WrongSign(_StationaryRun):
    """Runs started with the wrong sign (u = −w): depth ≥ 1 ends at 0, depth 0 keeps wrong-sign mass
    (Run, :func:`wrong_sign`)."""

    experiment = staticmethod(ex.wrong_sign)
    closed_form = staticmethod(ex.wrong_sign_start)
    sliders = dict(temperature=TEMPERATURE.but(lo=0.05, hi=0.3))

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("|v(t)| from v₀ = −1 (u = −w), depth 1 and 2", "depth 0 from v₀ = −1: the wrong sign keeps mass",
                     height=400, layout=dict(_LAYOUT, legend=dict(orientation="h", y=-0.2)))
        for depth in (1, 2):
            line(fig, f"L = {depth} (v-SDE): median |v|", _COLORS[depth], width=3, key=f"median{depth}")
        line(fig, "L = 1 theory: slope −4(β₂ + Tα₃)", "black", dash="dash", key="rate")
        markers(fig, "L = 1 noise-amplified SGD on (u, w): median |v|", _COLORS["amp"], size=8, key="amplified")
        fig.add_bar(x=[], y=[], name="L = 0 SDE histogram", marker_color=_COLORS[0], opacity=0.4, row=1, col=2)
        key_last(fig, "histogram0")
        line(fig, "L = 0 closed form (Eq. 12)", _COLORS[0], at=(1, 2), width=3, key="law0")
        axes(fig, (1, 1), x="time t = η·steps", y="|v|", yaxis=dict(type="log"))
        axes(fig, (1, 2), x="v", y="density")
        return [fig]

    def closed_form_words(self, r, **values) -> Words:
        return Words(None, "info", f"T = {r.outcome.numbers['temperature']:g}: every run starts with the wrong sign, "
                     "v₀ = −1.")

    def _show(self, r, **values) -> None:
        fig = self.figure
        with fig.batch_update():
            for key, (x, y) in (("median1", r.median_paths[1]), ("median2", r.median_paths[2]),
                                ("rate", r.rate_line), ("amplified", r.amplified_path)):
                put(fig, key, x=x, y=y)
            e = r.edges
            put(fig, "histogram0", x=r.centres, y=r.density, width=float(e[1] - e[0]))
            x, y = r.law0_curve
            put(fig, "law0", x=x, y=y)
            fig.layout.shapes = [dict(type="rect", xref="x2", yref="paper", x0=float(e[0]), x1=0.0, y0=0, y1=1,
                                      fillcolor="#fee2e2", opacity=0.5, line_width=0, layer="below")]

    def words(self, r, **values) -> Words:
        n = r.outcome.numbers  # one kind: the collapse, told by its numbers
        amp_med = f"{n['amp_median']:.1e}" if "amp_median" in n else "n/a"
        return Words(None, "info",
            f"L = 1: median |v| at t = {n['t_end']:g} is {n['median_L1']:.1e} (exponential collapse at rate "
            f"{n['rate']:.2f}); L = 2: {n['median_L2']:.1e} (algebraic: the drift vanishes like |v|⁴ᐟ³); "
            f"noise-amplified SGD on (u, w), η = {_AMP_LR}: median |v| = {amp_med} at t = 2 "
            f"({n['amp_diverged']} of {n['amp_runs']} runs diverged). L = 0: P(v < 0) = {n['p_wrong_sim']:.3f} "
            f"simulated vs {n['p_wrong_theory']:.3f} closed form (shaded): linear regression keeps the wrong sign with "
            "positive probability.")


# ============================================================================ 5. tails
class Tails(_StationaryRun):
    """Log–log tails for L = 1, 2, 4 against the predicted exponents; L = 0 for contrast.

    Plotted as the survival function ``P(V > v) ~ v^{ν+1}`` (``ν = −5 + 3/(L+1)``), which is far
    less noisy than a histogram of rare events: closed form (thick lines, :func:`tail_view`), the power law (thin
    lines, same colours) and SDE samples (markers, Run, :func:`tail_samples`).
    """

    experiment = staticmethod(ex.tail_samples)
    closed_form = staticmethod(ex.tail_view)
    sliders = dict(temperature=TEMPERATURE.but(lo=0.03, hi=0.3))
    LONG = dict(n_chains=2000, n_records=20, t_end=20.0)

    def _figures(self) -> list[go.FigureWidget]:
        fig = go.FigureWidget(layout=dict(height=440, title="tails of the stationary law: P(V > v), log–log",
                                          xaxis=dict(type="log", title="v", range=[0, 2]),
                                          yaxis=dict(type="log", title="P(V > v)", range=[-6.3, 0.1]), **_LAYOUT))
        for d in ex.TAIL_DEPTHS:
            line(fig, f"L = {d}", _COLORS[d], width=3, key=f"survival{d}")
        for d in ex.TAIL_DEPTHS:
            line(fig, f"slope ν+1 = {tail_exponent(d) + 1:g}", _COLORS[d], dash="dash", width=1.5, key=f"power{d}")
        line(fig, "L = 0 (slope depends on T)", _COLORS[0], width=2, dash="dot", key="depth0")
        for d in ex.TAIL_DEPTHS:
            markers(fig, f"SDE, L = {d}", _COLORS[d], size=8, symbol="circle-open", marker_line=dict(width=2),
                    key=f"sde{d}")
        return [fig]

    def _show_closed_form(self, r, **values) -> None:
        fig = self.figure
        with fig.batch_update():
            for d in ex.TAIL_DEPTHS:
                put(fig, f"survival{d}", x=r.v, y=r.survival[d])
                put(fig, f"power{d}", x=r.v, y=r.power_laws[d])
                put(fig, f"sde{d}", x=[], y=[])
            x, y = r.depth0
            put(fig, "depth0", x=x, y=y)

    def closed_form_words(self, r, **values) -> Words:
        n = r.outcome.numbers  # one kind: the tails' slopes
        return Words(None, "info", "local slope of log p at v ≈ 1000: " + ", ".join(
            f"L = {d}: {n[f'slope_L{d}']:.3f} (ν = {tail_exponent(d):g})" for d in ex.TAIL_DEPTHS)
            + f"; L = 0: ν = −2 − β₁/(α₁T) = {n['rho0']:.2f} changes with T.")

    def _show(self, sim, **values) -> None:
        with self.figure.batch_update():
            for d in ex.TAIL_DEPTHS:
                x, y = sim.points[d]
                put(self.figure, f"sde{d}", x=x, y=y)

    def words(self, sim, **values) -> Words:
        n = sim.outcome.numbers  # one kind: the samples, counted
        counts = [f"L = {d}: {n[f'samples_L{d}']} samples, {n[f'far_L{d}']} above v = {ex.TAIL_FAR:g}"
                  for d in ex.TAIL_DEPTHS]
        return Words(None, "info", f"SDE: {n['n_chains']} chains from v₀ = 1 for t = {n['t_end']:g}, records from the "
                     "second half pooled; " + ", ".join(counts)
                     + ". The lines do not move with T for L ≥ 1 far out: try the slider.")


# ============================================================================ 6. discrete SGD near T_c
class DiscreteSGD(_StationaryRun):
    """Plain SGD (η = T, S = 1) and noise-amplified SGD against the SDE's closed form: where the picture breaks
    (Run, :func:`discrete_sgd`; the scan over T, :meth:`scan`, is :func:`discrete_sgd_scan`)."""

    experiment = staticmethod(ex.discrete_sgd)
    closed_form = staticmethod(ex.discrete_sgd_setting)
    sliders = dict(temperature=TEMPERATURE.but(lo=0.04, hi=0.32, step=0.02))
    #: T_c of the problem :func:`discrete_sgd` simulates (k = σ = 1, γ = 0)
    T_C = critical_temperature(ex.gaussian_problem(1.0, 1.0, 0.0))
    scan_result = None

    def _figures(self) -> list[go.FigureWidget]:
        fig = go.FigureWidget(layout=dict(height=420, title="depth 1: SGD on the actual parameters vs the SDE law",
                                          xaxis=dict(title="v"), yaxis=dict(title="density"), **_LAYOUT))
        line(fig, "closed form (Eq. 15)", "black", width=3, key="law")
        for key, name, colour, width in (("v-SDE", "v-SDE", _COLORS[1], None),
                                         ("plain SGD", "plain SGD, η = T, S = 1", _COLORS["sgd"], 2),
                                         ("amplified SGD", f"noise-amplified SGD, η = {_AMP_LR}", _COLORS["amp"], 2)):
            line(fig, name, colour, width=width, line_shape="hvh", key=key)  # keyed as the result's ``fits``
        scan = panels("fraction of runs that diverged (|θ| > 1e12)", "KS distance at the same time t (surviving runs)",
                      height=380, layout=dict(_LAYOUT, legend=dict(orientation="h", y=-0.22)))
        for key, name, colour in (("sgd", "plain SGD, η = T", _COLORS["sgd"]),
                                  ("amp", f"noise-amplified SGD, η = {_AMP_LR}", _COLORS["amp"])):
            scan.add_scatter(x=[], y=[], mode="lines+markers", name=name, line=dict(color=colour), row=1, col=1,
                             showlegend=False)
            key_last(scan, f"{key}_div")
            scan.add_scatter(x=[], y=[], mode="lines+markers", name=f"{name} vs v-SDE", line=dict(color=colour),
                             row=1, col=2)
            key_last(scan, f"{key}_ks")
        scan.add_scatter(x=[], y=[], mode="lines", showlegend=False, row=1, col=1)  # stays empty
        scan.add_scatter(x=[], y=[], mode="lines+markers",
                         name="v-SDE vs closed form (not yet stationary near T<sub>c</sub>)",
                         line=dict(color=_COLORS[1], dash="dot"), row=1, col=2)
        key_last(scan, "sde_ks_law")
        line(scan, "two-sample KS threshold", "black", at=(1, 2), dash="dash", key="sgd_crit")
        line(scan, "T<sub>c</sub>", NEUTRALS["grey"], at=(1, 2), dash="dot", key="T_c")
        axes(scan, x="T = η/S")
        return [fig, scan]

    def scan(self, temps=(0.05, 0.1, 0.15, 0.2, 0.25, 0.3), n_runs: int = 300, t_end: float = 5.0):
        """Run :func:`discrete_sgd_scan` (a few seconds, not a slider callback: the notebook runs it once), draw
        it in the second figure and return it (also kept in ``self.scan_result``)."""
        rows = self.scan_result = ex.discrete_sgd_scan(temps=temps, n_runs=n_runs, t_end=t_end,
                                                       seed=self.settings["seed"])
        fig = self.figures[1]
        with fig.batch_update():
            for key in ("sgd_div", "sgd_ks", "amp_div", "amp_ks", "sde_ks_law", "sgd_crit"):
                put(fig, key, x=rows.T, y=getattr(rows, key))
            put(fig, "T_c", x=[self.T_C, self.T_C], y=[0, 1])
        return rows

    def closed_form_words(self, r, **values) -> Words:
        n = r.outcome.numbers  # one kind: the setting
        return Words(None, "info", f"T = {n['temperature']:g} ({CRITICAL_T} = {n['T_c']:.3f}): plain SGD uses η = T = "
                     f"{n['lr']:g} with batch size {n['batch_size']}.")

    def _show(self, r, **values) -> None:
        with self.figure.batch_update():
            x, y = r.curve if r.curve is not None else ([], [])
            put(self.figure, "law", x=x, y=y)
            for name, fit in r.fits.items():
                put(self.figure, name, x=fit.centres, y=fit.density)

    #: The status level of each kind of :data:`~symsgd_core.stationary.experiments.DISCRETE_SGD_OUTCOMES`.
    LEVELS = dict(sde_off="warning",  # the v-SDE itself misses its closed form: there is no reference to compare with
                  sgd_off="warning",  # an SGD method misses the SDE's law (or its runs diverged): the SDE fails there
                  agree="info")       # every method within sampling error of the law

    def words(self, r, **values) -> Words:
        n = r.outcome.numbers  # each fit's verdict in the text, at the level of the kind (LEVELS)
        txt = []
        for name, ks, crit, agrees, diverged, runs in zip(ex.FIT_NAMES, n["ks"], n["ks_threshold"], n["agrees"],
                                                          n["diverged"], n["n"]):
            verdict = "agrees" if agrees else "DISAGREES"
            ks = "n/a" if not math.isfinite(ks) else f"{ks:.3f}"
            txt.append(f"{name}: KS {ks} (threshold {crit:.3f}, {verdict})"
                       + (f", {diverged}/{runs} runs diverged" if diverged else ""))
        return Words(None, self.LEVELS[r.outcome.kind],
            f"T = {n['temperature']:g}: " + " | ".join(txt) + ". Divergences come from rare large x² in single "
            "samples: the SDE's Gaussian noise has no such kicks.")
