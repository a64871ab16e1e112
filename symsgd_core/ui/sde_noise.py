"""Figures of Notebook 05 (SGD's own SDE and the jump event): one draw-only controller per figure.

:class:`SdeCompareController` simulates SGD, its SDE and Langevin live
(:func:`~symsgd_core.sde_noise.experiments.compare_point`); :class:`SdeGridController`, :class:`BlowupController`
and :class:`JumpEventController` read the shipped grid (:func:`~symsgd_core.sde_noise.experiments.load_grid`) and
update at once.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go

from ..dln import DEFAULT_RANK_TOL, ESCAPE_NORM
from ..dln.integrators import integrator
from ..sde_noise.blowup import HAZARD_HORIZON, continuation_norms, hazard_rows
from ..sde_noise.experiments import (
    JUMP_ROUTES,
    blowup_view,
    compare_point,
    comparison_rows,
    grid_view,
    jump_event_view,
    kstar_rows,
    load_grid,
    setting_label,
)
from ..sde_noise.report import label_words
from .base import Controller, ExperimentFigure, Words
from .plotting import axes, key_last, keyed, line, markers, panels, put
from .rank_jumps import LOG_FLOOR  # s₂(A) below it is drawn at it, as in notebook 04
from .sliders import SEED, STEP_SIZE, WEIGHT_DECAY, Range
from .style import NEUTRALS, PALETTE, colours

__all__ = ["BlowupController", "JumpEventController", "SdeCompareController", "SdeGridController"]

#: One colour per dynamics, the same in every figure of the notebook.
COLOURS = colours(sgd="vermillion", sde="blue", langevin="bluish_green", gaussian="orange", other="grey")
#: The live figure's dynamics: legend name and key.
LIVE_DYNAMICS = tuple((integrator(name).label, name) for name in ("sgd", "sde", "langevin"))


def _layout(left: int, top: int = 50, legend_y: float = -0.2, **more) -> dict:
    """This notebook's figure layout (no template of its own): ``left`` px of margin for the labels, legend below."""
    return dict(margin=dict(l=left, r=10, t=top, b=50), legend=dict(orientation="h", y=legend_y), **more)


def _runs_as_one_trace(t: np.ndarray, y: np.ndarray):
    """Runs ``y (R, K)`` as one line with gaps between runs (and where a run has diverged): x, y lists."""
    xs, ys = [], []
    for row in y:
        ok = np.isfinite(row)
        xs += [float(v) for v in t] + [None]
        ys += [float(max(v, LOG_FLOOR)) if o else None for v, o in zip(row, ok)] + [None]
    return xs, ys


class SdeCompareController(ExperimentFigure):
    """SGD (vermillion), its SDE (blue) and Langevin (bluish-green) from the same rank-2 minimum, at one (η, γ).

    Left: s₂(A) of every run over time t = η·steps (log axis; a run the divergence rule stopped ends). Right: the
    fraction of runs at rank ≤ 1 over time for each dynamics, and (dotted) the fraction of SDE runs that rule
    stopped. Re-simulates
    on Run (about a second; pressed in the page, a first look at fewer runs and a shorter time is drawn at once and
    the full Run follows, :meth:`~symsgd_core.ui.base.RunController.start_run`).
    """

    experiment = staticmethod(compare_point)
    COSTLIEST, FULL_RUN_SECONDS = dict(lr=0.2, m=64), 4.1  # t = 1500 in the most SDE steps
    slider_width = "300px"
    sliders = dict(lr=STEP_SIZE.but(lo=0.2, hi=0.35),
                   weight_decay=WEIGHT_DECAY.but(description="γ (weight decay)", lo=0.02, hi=0.03, step=0.0005,
                                                 fmt=".4f"),
                   m=Range("SDE step dt = η/m, m", kind="choice", options=(4, 16, 64)),
                   temp_factor=Range("Langevin τ / matched τ", kind="choice", options=(1.0, 10.0)), seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("(a) s₂(A) of every run", "(b) fraction of runs at rank ≤ 1", height=400, horizontal_spacing=0.1,
                     layout=_layout(60, top=60))
        for name, key in LIVE_DYNAMICS:
            line(fig, name, COLOURS[key], at=(1, 1), width=1, legendgroup=key, key=f"{key}_s2")
        for name, key in LIVE_DYNAMICS:
            line(fig, name, COLOURS[key], at=(1, 2), line_shape="hv", legendgroup=key, showlegend=False,
                 key=f"{key}_low_rank")
        line(fig, "SDE runs blown up", COLOURS["sde"], at=(1, 2), dash="dot", line_shape="hv", key="sde_blown_up")
        fig.add_hline(y=DEFAULT_RANK_TOL, line=dict(color=NEUTRALS["grey_mid"], dash="dot"), row=1, col=1)
        axes(fig, (1, 1), y="s₂(A)", yaxis=dict(type="log", range=[float(np.log10(LOG_FLOOR)) - 0.5, 0.7]))
        axes(fig, (1, 2), y="fraction of runs", yaxis=dict(range=[-0.02, 1.02]))
        axes(fig, x="time t = η·steps")
        return [fig]

    #: A first look simulates at most this many SDE steps (the SDE's cost is per step, nearly whatever the runs).
    FIRST_LOOK_SDE_STEPS = 40_000
    #: The first look's runs of each dynamics.
    FIRST_LOOK_RUNS = dict(n_runs_sde=4, n_runs_sgd=4, n_runs_langevin=2)

    def _first_look(self, values: dict) -> tuple[dict, str] | None:
        """When the SDE takes more than :data:`FIRST_LOOK_SDE_STEPS` steps of dt = η/m to reach ``t_max``: fewer
        runs, up to the time those steps reach (a multiple of the record interval)."""
        full = self.settings
        dt = values["lr"] / int(values["m"])
        if full["t_max"] / dt <= self.FIRST_LOOK_SDE_STEPS:
            return None
        rec = full["rec_dt"]
        t_max = max(rec, rec * math.floor(self.FIRST_LOOK_SDE_STEPS * dt / rec))
        small = {**values, **self.FIRST_LOOK_RUNS, "t_max": t_max}
        return small, (f"{small['n_runs_sde']} of {full['n_runs_sde']} SDE runs, {small['n_runs_sgd']} of "
                       f"{full['n_runs_sgd']} SGD, {small['n_runs_langevin']} of {full['n_runs_langevin']} Langevin, "
                       f"to t = {t_max:g} of {full['t_max']:g}")

    #: :func:`compare_point` at the sliders (a first look's ``values`` also carry its run counts and ``t_max``);
    #: a setting it refuses (e.g. no rank-2 minimum at this γ) is drawn as a failure
    refused = (ValueError,)
    REFUSED_HEADLINE = dict(text="FAILURE MODE: nothing to compare", font=dict(color=PALETTE["vermillion"]))

    def _show(self, r, **values) -> None:
        fig = self.figure
        with fig.batch_update():
            for _, key in LIVE_DYNAMICS:
                res = getattr(r, key)
                x, y = _runs_as_one_trace(res.times, res.singular_values[:, :, 1])
                put(fig, f"{key}_s2", x=x, y=y)
                x, y = r.low_rank_fraction(key)
                put(fig, f"{key}_low_rank", x=x, y=y)
            x, y = r.sde_blown_up
            put(fig, "sde_blown_up", x=x, y=y)

    #: The status level of each kind of :data:`~symsgd_core.sde_noise.experiments.COMPARE_OUTCOMES`.
    LEVELS = dict(stopped="warning",  # a divergence rule stopped runs: their waits are censored (§3 shows why)
                  no_jump="warning",  # no run of any dynamics jumped within the time: nothing to compare
                  jumped="info")      # the comparison the figure is about

    def words(self, r, **values) -> Words:
        # every kind of COMPARE_OUTCOMES is told by its counts, at the level of its kind (LEVELS)
        n = r.outcome.numbers
        title = dict(text=(f"SDE: {n['sde_jumped']}/{n['sde_runs']} jumped, {n['sde_diverged']} stopped · "
                           f"SGD: {n['sgd_jumped']}/{n['sgd_runs']} jumped · returns to rank 2: "
                           f"{n['sde_returned'] + n['sgd_returned']}"), font=dict(size=14))

        def wait(d):
            w = n[f"{d}_wait"]
            if not math.isfinite(w[0]):
                return f"no run jumped within t = {n['t_max']:g} (mean wait ≥ {w[1]:.3g})"
            return f"mean first time at rank ≤ 1: {w[0]:.3g} [{w[1]:.3g}, {w[2]:.3g}]"

        return Words(title, self.LEVELS[r.outcome.kind], (
            f"η = {n['lr']:g}, γ = {n['weight_decay']:g}, SDE step dt = η/{n['m']}, t ≤ {n['t_max']:g}. "
            f"SGD: {wait('sgd')}. SDE: "
            f"{wait('sde')}; {n['sde_diverged']}/{n['sde_runs']} runs stopped by fixed-step EM's divergence "
            "rule (a residual above 10⁶; a rule of the integrator, not the SDE: §3.1), which "
            f"SGD never does here. Langevin (τ = {n['tau']:.3g}): {wait('langevin')}. Returns to rank 2 after a "
            f"jump: SGD {n['sgd_returned']}, SDE {n['sde_returned']}, Langevin {n['langevin_returned']}."))


def _draw_intervals(point, bound, labels, estimates, bound_of) -> None:
    """Horizontal 95 % intervals: ``estimates[i] = (value, lo, hi)`` drawn on trace ``point`` where ``value`` is
    finite and positive, else ``bound_of(estimates[i])`` as a one-sided bound on trace ``bound`` (nothing seen)."""
    ok = [i for i, e in enumerate(estimates) if math.isfinite(e[0]) and e[0] > 0]
    point.x = [estimates[i][0] for i in ok]
    point.y = [labels[i] for i in ok]
    point.error_x = dict(type="data", symmetric=False, array=[estimates[i][2] - estimates[i][0] for i in ok],
                         arrayminus=[estimates[i][0] - estimates[i][1] for i in ok])
    rest = [i for i in range(len(estimates)) if i not in ok]
    bound.x = [bound_of(estimates[i]) for i in rest]
    bound.y = [labels[i] for i in rest]


def _setting(row) -> str:
    """A stored (η, γ) as the notebook writes it: ``η = 0.3, γ = 0.027`` (:func:`setting_label`)."""
    return setting_label(row.lr, row.weight_decay)


#: Width of the ``setting`` slider. Its readout is the whole label; in a 300 px row the browser squeezes the readout
#: (ipywidgets 8: at most 148 px wide, shrunk with the track, overflow hidden) and cut "η = 0.3, γ = 0.027" to
#: "η = 0.3, γ = 0.0". This row leaves the track its 148 px and the readout the label's full width.
SETTING_SLIDER_WIDTH = "460px"


def _setting_slider(rows, setting: str | None):
    """The ``setting`` slider over the (η, γ) of ``rows`` (objects with ``lr``, ``weight_decay``), in their order."""
    labels = tuple(dict.fromkeys(_setting(r) for r in rows))
    return Range("setting", kind="choice", options=labels, width=SETTING_SLIDER_WIDTH).widget(
        labels[0] if setting is None else setting)


class SdeGridController(Controller):
    """The stored grid at one (η, γ): each dynamics' mean first time at rank ≤ 1 (95 % interval; an open
    triangle is a lower bound when nothing jumped), the fraction of runs an integrator's rule stopped (EM: a residual
    above 10⁶; the adaptive step: that or its stall rule;
    the followed SDE: never) and of time in B₁ (:func:`~symsgd_core.sde_noise.experiments.grid_view`)."""

    experiment = staticmethod(grid_view)

    def __init__(self, grid=None, setting: str | None = None) -> None:
        self.grid = load_grid() if grid is None else grid
        self.rows = comparison_rows(self.grid)
        # the settings with SDE rows (the batch-1 controls at η = 0.15 are printed in §3.2); the slider's options are
        # the grid's, so it is declared here, not on the class
        sde = [r for r in self.rows if r.label.startswith("SDE")]
        self.sliders = {"setting": lambda value: _setting_slider(sde, value)}
        super().__init__(setting=setting, rows=self.rows)

    def _figures(self) -> list[go.FigureWidget]:
        # (b) shares (a)'s rows: its y axis follows (a)'s and shows no labels of its own, which were drawn across
        # (a)'s plot (the labels are up to ~290 px wide; (a)'s left margin holds them)
        fig = panels("(a) mean first time at rank ≤ 1 (t)", "(b) stopped by a rule / time in B₁", height=640,
                     horizontal_spacing=0.04, column_widths=[0.55, 0.45], shared_yaxes=True,
                     layout=_layout(300, legend_y=-0.1, barmode="group"))
        markers(fig, "mean wait, 95 % interval", COLOURS["sde"], at=(1, 1), size=9, orientation="h", key="wait")
        markers(fig, "lower bound (no jump)", PALETTE["black"], at=(1, 1), size=11, symbol="triangle-right-open",
                key="wait_bound")
        fig.add_bar(name="runs an integrator's rule stopped", orientation="h", marker_color=PALETTE["black"],
                    opacity=0.7, row=1, col=2)
        key_last(fig, "stopped")
        fig.add_bar(name="time in B₁", orientation="h", marker_color=COLOURS["sgd"], opacity=0.7, row=1, col=2)
        key_last(fig, "in_B1")
        axes(fig, (1, 1), x="time t = η·steps", xaxis=dict(type="log"))
        axes(fig, (1, 2), x="fraction", xaxis=dict(range=[0, 1]))
        axes(fig, yaxis=dict(autorange="reversed"))
        return [fig]

    def _show(self, r, **values) -> None:
        rows = r.rows
        labels = [label_words(row.label) for row in rows]  # the tables' words (the stored keys hold ``τ_match``)
        fig = self.figure
        with fig.batch_update():  # no jump: the interval's lower end is a lower bound of the mean wait
            _draw_intervals(keyed(fig, "wait"), keyed(fig, "wait_bound"), labels, [row.summary.wait for row in rows],
                            lambda w: w[1])
            put(fig, "stopped", x=[row.summary.diverged / row.summary.n_runs for row in rows], y=labels)
            put(fig, "in_B1", y=labels, x=[0.0 if not math.isfinite(row.summary.frac_B1[0]) else row.summary.frac_B1[0]
                                           for row in rows])

    def words(self, r, setting, **values) -> Words:
        n = r.outcome.numbers  # one kind: the stored numbers at this setting
        wait = n["sgd_wait"]
        sde = zip(r.outcome.labels["sde_labels"], n["sde_jumped"], n["sde_n_runs"], n["sde_wait"], n["sde_stopped"],
                  n["sde_returned"])
        return Words(dict(text=f"stored grid at {setting} ({n['n_runs']} runs per SDE/SGD row)", font=dict(size=14)),
                     "info", f"SGD: {n['sgd_jumped']}/{n['sgd_n_runs']} jumped, mean wait {wait[0]:.3g} "
                     f"[{wait[1]:.3g}, {wait[2]:.3g}]. SDE: "
                     + "; ".join(f"{label}: {jumped}/{runs} jumped, mean {mean:.3g}, {stopped} stopped, {back} returned"
                                 for label, jumped, runs, mean, stopped, back in sde) + ".")


def hazard_label(row) -> str:
    """A hazard row's integrator, as the figure and the notebook name it."""
    if row.integrator == "EM":
        return f"Euler–Maruyama, dt = η/{row.m}"
    return f"adaptive, h ≤ η/{row.m}, ρ = {row.rho:g}"


class BlowupController(Controller):
    """The integrators' stopping rules (appendix A): (a) stopped paths per 1000 time units on [0, 3000] with their
    95 % intervals, per integrator and step, at the chosen (η, γ) (an open triangle is an upper bound where none was
    stopped); (b) ‖θ‖ (log scale) of fresh-noise continuations from a state just before a fixed-step stop at the hot
    point (the stored state where the two integrators' outcomes differ most), every step of the first time units:
    Euler–Maruyama against the adaptive step (a path ends where a rule stops it)
    (:func:`~symsgd_core.sde_noise.experiments.blowup_view`)."""

    experiment = staticmethod(blowup_view)

    def __init__(self, grid=None, setting: str | None = None) -> None:
        self.grid = load_grid() if grid is None else grid
        self.rows = hazard_rows(self.grid)
        self.sliders = {"setting": lambda value: _setting_slider(self.rows, value)}  # the grid's settings
        super().__init__(setting=setting, rows=self.rows)

    def _figures(self) -> list[go.FigureWidget]:
        # (b) shows a time window, (a) a list of integrators: the title must say which state (b) starts from
        fig = panels(f"(a) paths stopped per 1000 t on [0, {HAZARD_HORIZON:g}]",
                     "(b) ‖θ‖ after a state just before a stop", height=460, horizontal_spacing=0.2,
                     column_widths=[0.5, 0.5], layout=_layout(230))
        markers(fig, "rate of stopped paths, 95 % interval", COLOURS["sde"], at=(1, 1), size=9, key="rate")
        markers(fig, "upper bound (none stopped)", PALETTE["black"], at=(1, 1), size=11, symbol="triangle-left-open",
                key="rate_bound")
        cont = continuation_norms(self.grid)
        if cont is not None:
            t, norms = cont
            for key, colour, dash, name in (("em", COLOURS["gaussian"], "solid", "Euler–Maruyama"),
                                            ("adaptive", COLOURS["sde"], "dash", "adaptive step")):
                xs, ys = _runs_as_one_trace(t, norms[key])
                line(fig, f"{name} ({len(norms[key])} continuations)", colour, at=(1, 2), width=1.2, dash=dash, x=xs,
                     y=ys)
            line(fig, f"‖θ‖ = {ESCAPE_NORM:g}", NEUTRALS["grey"], at=(1, 2), width=1, dash="dot",
                 x=[float(t[0]), float(t[-1])], y=[ESCAPE_NORM, ESCAPE_NORM])
        axes(fig, (1, 1), x="stopped paths per 1000 time units", xaxis=dict(type="log"),
             yaxis=dict(autorange="reversed"))
        axes(fig, (1, 2), x="time after the state (zoom out: 30 time units stored)", y="‖θ‖",
             xaxis=dict(range=[0.0, 0.4]), yaxis=dict(type="log"))
        return [fig]

    def _show(self, r, **values) -> None:
        labels = [hazard_label(row) for row in r.rows]
        fig = self.figure
        with fig.batch_update():
            # no blow-up: the interval's upper end is an upper bound of the rate
            _draw_intervals(keyed(fig, "rate"), keyed(fig, "rate_bound"), labels, [row.rate for row in r.rows],
                            lambda rate: rate[2])

    def words(self, r, setting, **values) -> Words:
        n = r.outcome.numbers  # one kind: the stored rates at this setting
        rows = zip(r.outcome.labels["integrator"], n["m"], n["rho"], n["events"], n["runs"], n["rate"], n["rate_lo"],
                   n["rate_hi"])
        return Words(dict(text=f"paths stopped by the integrators' rules at {setting} ({n['n_runs']} runs per "
                          "integrator)", font=dict(size=14)), "info",
                     "; ".join(f"{hazard_label(SimpleNamespace(integrator=kind, m=m, rho=rho))}: {events}/{runs} "
                               f"stopped by t = {HAZARD_HORIZON:g}, {rate:.2g} [{lo:.2g}, {hi:.2g}] per 1000 t"
                               for kind, m, rho, events, runs, rate, lo, hi in rows) + ".")


class JumpEventController(Controller):
    """The jump event over the stored (η, γ) grid: (a) k* of the chosen route; (b) the waiting time predicted from
    k* and p = 2/3 (either route, exact) against the one SGD measures (95 % intervals; a triangle marks a lower
    bound where no run jumped in the budget) (:func:`~symsgd_core.sde_noise.experiments.jump_event_view`)."""

    experiment = staticmethod(jump_event_view)
    slider_width = "300px"
    sliders = dict(route=Range("route", kind="choice", options=tuple(JUMP_ROUTES)))

    def __init__(self, grid=None, route: str = "row 0") -> None:
        self.grid = load_grid() if grid is None else grid
        self.rows = kstar_rows(self.grid)
        super().__init__(route=route, rows=self.rows)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("(a) k*: consecutive samples that complete the jump", "(b) waiting time (SGD steps)", height=420,
                     horizontal_spacing=0.17, layout=_layout(60))  # the spacing leaves the colour bar room
        fig.add_heatmap(colorscale="Viridis", colorbar=dict(x=0.42, len=0.9, title="k*"), texttemplate="%{z}",
                        row=1, col=1)
        key_last(fig, "kstar")
        markers(fig, "measured (jumps seen)", COLOURS["sgd"], at=(1, 2), size=9, key="measured")
        markers(fig, "lower bound (no jump)", PALETTE["black"], at=(1, 2), size=10, symbol="triangle-up-open",
                key="bound")
        line(fig, "measured = predicted", NEUTRALS["grey_mid"], at=(1, 2), dash="dash", key="diagonal")
        axes(fig, (1, 1), x="γ (weight decay)", y="η", xaxis=dict(type="category"), yaxis=dict(type="category"))
        axes(fig, (1, 2), x="predicted from k* (either route)", y="measured", xaxis=dict(type="log"),
             yaxis=dict(type="log"))
        return [fig]

    def _show(self, r, **values) -> None:
        rows, fig = r.rows, self.figure
        seen = [row for row in rows if row.jumped > 0]
        none = [row for row in rows if row.jumped == 0]
        with fig.batch_update():
            put(fig, "kstar", x=[f"{v:g}" for v in r.weight_decays], y=[f"{v:g}" for v in r.lrs], z=r.kstar)
            put(fig, "measured", x=[row.predicted_either for row in seen], y=[row.measured[0] for row in seen],
                error_y=dict(type="data", symmetric=False, array=[row.measured[2] - row.measured[0] for row in seen],
                             arrayminus=[row.measured[0] - row.measured[1] for row in seen]),
                text=[_setting(row) for row in seen])
            put(fig, "bound", x=[row.predicted_either for row in none], y=[row.measured[1] for row in none],
                text=[_setting(row) for row in none])
            span = [min(row.predicted_either for row in rows), max(row.predicted_either for row in rows)]
            put(fig, "diagonal", x=span, y=span)

    def words(self, r, route, **values) -> Words:
        n = r.outcome.numbers  # one kind: the range of k* along the route
        lo, hi, p = n["kstar_min"], n["kstar_max"], n["p"]
        return Words(None, "info", f"{route}: k* from {lo} ({setting_label(n['min_lr'], n['min_weight_decay'])}) to "
                     f"{hi} ({setting_label(n['max_lr'], n['max_weight_decay'])}); p = {p:.3f}, so p to the power k* "
                     f"falls from {p ** lo:.2g} to {p ** hi:.2g}. Cells with a predicted wait far beyond the "
                     f"{n['n_runs']} runs' budget show no jump (triangles).")
