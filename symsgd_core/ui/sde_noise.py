"""Figures of Notebook 05 (SGD's own SDE and the jump event): one draw-only controller per figure.

* :class:`SdeCompareController` — SGD, its SDE and Langevin from the same rank-2 minimum, simulated live at one
  (η, γ) (:func:`~symsgd_core.sde_noise.experiments.compare_point`);
* :class:`SdeGridController` — the stored grid's comparison at each (η, γ): mean first time at rank ≤ 1 with its
  95 % interval, blow-ups and time in B_1 (:func:`~symsgd_core.sde_noise.experiments.comparison_rows`);
* :class:`BlowupController` — the blow-up hazard per integrator and step at each (η, γ)
  (:func:`~symsgd_core.sde_noise.blowup.hazard_rows`) and ‖θ‖ through the last time units of fixed-step
  blow-ups, continued by both integrators (the grid's ``continuation`` task);
* :class:`JumpEventController` — k* over the (η, γ) grid and the predicted against the measured waiting times
  (:func:`~symsgd_core.sde_noise.experiments.kstar_rows`).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..rank_jumps.network import DEFAULT_RANK_TOL
from ..sde_noise.adaptive import ESCAPE_NORM
from ..sde_noise.blowup import HAZARD_HORIZON, hazard_rows
from ..sde_noise.experiments import compare_point, comparison_rows, kstar_rows, load_grid
from .base import Controller, ExperimentFigure
from .sliders import SEED, STEP_SIZE, WEIGHT_DECAY, Range
from .style import NEUTRALS, PALETTE, colours

__all__ = ["BlowupController", "JumpEventController", "SdeCompareController", "SdeGridController"]

#: One colour per dynamics, the same in every figure of the notebook.
COLOURS = colours(sgd="vermillion", sde="blue", langevin="bluish_green", gaussian="orange", other="grey")
#: s₂(A) below this is drawn at this value (round-off; the log axis cannot show 0).
FLOOR = 1e-18


def _runs_as_one_trace(t: np.ndarray, y: np.ndarray):
    """Runs ``y (R, K)`` as one line with gaps between runs (and where a run has diverged): x, y lists."""
    xs, ys = [], []
    for row in y:
        ok = np.isfinite(row)
        xs += [float(v) for v in t] + [None]
        ys += [float(max(v, FLOOR)) if o else None for v, o in zip(row, ok)] + [None]
    return xs, ys


class SdeCompareController(ExperimentFigure):
    """SGD (vermillion), its SDE (blue) and Langevin (bluish-green) from the same rank-2 minimum, at one (η, γ).

    Left: s₂(A) of every run over time t = η·steps (log axis; a run that blew up ends). Right: the fraction of
    runs at rank ≤ 1 over time for each dynamics, and (dotted) the fraction of SDE runs that blew up.
    Sliders: ``lr`` (η), ``weight_decay`` (γ), ``m`` (SDE step dt = η/m), ``temp_factor`` (Langevin's τ / τ_match),
    ``seed``. Re-simulates on Run (about a second; pressed in the page, a first look at fewer runs and a shorter
    time is drawn at once and the full Run follows, :meth:`~symsgd_core.ui.base.RunController.start_run`).
    """

    experiment = staticmethod(compare_point)
    slider_width = "300px"
    sliders = dict(lr=STEP_SIZE.but(lo=0.2, hi=0.35),
                   weight_decay=WEIGHT_DECAY.but(description="γ (weight decay)", lo=0.02, hi=0.03, step=0.0005,
                                                 fmt=".4f"),
                   m=Range("SDE step dt = η/m, m", kind="choice", options=(4, 16, 64)),
                   temp_factor=Range("Langevin τ / τ_match", kind="choice", options=(1.0, 10.0)), seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        fig = go.FigureWidget(make_subplots(rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=(
            "(a) s₂(A) of every run", "(b) fraction of runs at rank ≤ 1")))
        for name, key in (("SGD", "sgd"), ("SDE", "sde"), ("Langevin", "langevin")):
            fig.add_scatter(name=name, mode="lines", line=dict(color=COLOURS[key], width=1), legendgroup=key,
                            row=1, col=1)
        for name, key in (("SGD", "sgd"), ("SDE", "sde"), ("Langevin", "langevin")):
            fig.add_scatter(name=name, mode="lines", line=dict(color=COLOURS[key], shape="hv"), legendgroup=key,
                            showlegend=False, row=1, col=2)
        fig.add_scatter(name="SDE runs blown up", mode="lines", line=dict(color=COLOURS["sde"], dash="dot",
                                                                          shape="hv"), row=1, col=2)
        fig.add_hline(y=DEFAULT_RANK_TOL, line=dict(color=NEUTRALS["grey_mid"], dash="dot"), row=1, col=1)
        fig.update_yaxes(type="log", range=[-18.5, 0.7], title_text="s₂(A)", row=1, col=1)
        fig.update_yaxes(range=[-0.02, 1.02], title_text="fraction of runs", row=1, col=2)
        fig.update_xaxes(title_text="time t = η·steps")
        fig.update_layout(height=400, margin=dict(l=60, r=10, t=60, b=50), legend=dict(orientation="h", y=-0.2))
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

    def _compute(self, progress, **values):
        """:func:`compare_point` at the sliders (a first look's ``values`` also carry its run counts and ``t_max``);
        a setting it refuses (e.g. no rank-2 minimum at this γ) is returned as the ValueError, drawn as a failure."""
        try:
            return super()._compute(progress, **values)
        except ValueError as exc:
            return exc

    def _draw(self, r, **values) -> None:
        fig = self.figure
        if isinstance(r, ValueError):
            with fig.batch_update():
                for tr in fig.data:
                    tr.x, tr.y = [], []
                fig.layout.title = dict(text="FAILURE MODE: nothing to compare", font=dict(color=PALETTE["vermillion"]))
            self.result = None
            self.say(str(r), "error")
            return
        self.result = r
        with fig.batch_update():
            for k, key in enumerate(("sgd", "sde", "langevin")):
                res = getattr(r, key)
                fig.data[k].x, fig.data[k].y = _runs_as_one_trace(res.times, res.singular_values[:, :, 1])
                s2 = res.singular_values[:, :, 1]
                low = np.isfinite(s2) & (s2 <= DEFAULT_RANK_TOL)
                fig.data[3 + k].x, fig.data[3 + k].y = res.times.tolist(), low.mean(axis=0).tolist()
            sde = r.sde
            fig.data[6].x, fig.data[6].y = sde.times.tolist(), (~sde.alive_at()).mean(axis=1).tolist()
            s = r.summaries
            fig.layout.title = dict(text=(f"SDE: {s['sde'].jumped}/{s['sde'].n_runs} jumped, {s['sde'].diverged} blew "
                                          f"up · SGD: {s['sgd'].jumped}/{s['sgd'].n_runs} jumped · returns to rank 2: "
                                          f"{s['sde'].returned + s['sgd'].returned}"), font=dict(size=14))
        self.say(self._describe(r))

    @staticmethod
    def _describe(r) -> str:
        def wait(sm):
            w = sm.wait
            if not math.isfinite(w[0]):
                return f"no run jumped within t = {r.t_max:g} (mean wait ≥ {w[1]:.3g})"
            return f"mean first time at rank ≤ 1: {w[0]:.3g} [{w[1]:.3g}, {w[2]:.3g}]"

        s = r.summaries
        return (f"η = {r.lr:g}, γ = {r.weight_decay:g}, SDE step dt = η/{r.m}, t ≤ {r.t_max:g}. "
                f"SGD: {wait(s['sgd'])}. SDE: "
                f"{wait(s['sde'])}; {s['sde'].diverged}/{s['sde'].n_runs} runs blew up (a residual above 10⁶), which "
                f"SGD never does here. Langevin (τ = {r.tau:.3g}): {wait(s['langevin'])}. Returns to rank 2 after a "
                f"jump: SGD {s['sgd'].returned}, SDE {s['sde'].returned}, Langevin {s['langevin'].returned}.")


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


def _settings_label(lr: float, weight_decay: float) -> str:
    """A stored (η, γ) as the notebook writes it: ``η = 0.3, γ = 0.027`` (every digit, none added)."""
    return f"η = {lr:g}, γ = {weight_decay:g}"


#: Width of the ``setting`` slider. Its readout is the whole label; in a 300 px row the browser squeezes the readout
#: (ipywidgets 8: at most 148 px wide, shrunk with the track, overflow hidden) and cut "η = 0.3, γ = 0.027" to
#: "η = 0.3, γ = 0.0". This row leaves the track its 148 px and the readout the label's full width.
SETTING_SLIDER_WIDTH = "460px"


def _setting_slider(rows, setting: str | None):
    """The ``setting`` slider over the (η, γ) of ``rows`` (objects with ``lr``, ``weight_decay``), in their order."""
    labels = tuple(dict.fromkeys(_settings_label(r.lr, r.weight_decay) for r in rows))
    return Range("setting", kind="choice", options=labels, width=SETTING_SLIDER_WIDTH).widget(
        labels[0] if setting is None else setting)


def _rows_at(rows, setting: str) -> tuple:
    """The rows at the slider's (η, γ)."""
    return tuple(r for r in rows if _settings_label(r.lr, r.weight_decay) == setting)


class SdeGridController(Controller):
    """The stored grid at one (η, γ): each dynamics' mean first time at rank ≤ 1 (95 % interval; an open
    triangle is a lower bound when nothing jumped), the fraction of runs that blew up and of time in B_1.

    Slider: ``setting`` (one of the stored (η, γ)). Reads the shipped grid: updates at once.
    """

    live = True

    def __init__(self, grid=None, setting: str | None = None) -> None:
        self.grid = load_grid() if grid is None else grid
        self.rows = comparison_rows(self.grid)
        # the settings with SDE rows (the batch-1 controls at η = 0.15 are printed in §3.2); the slider's options are
        # the grid's, so it is declared here, not on the class
        sde = [r for r in self.rows if r.label.startswith("SDE")]
        self.sliders = {"setting": lambda value: _setting_slider(sde, value)}
        super().__init__(setting=setting)

    def _figures(self) -> list[go.FigureWidget]:
        fig = go.FigureWidget(make_subplots(rows=1, cols=2, horizontal_spacing=0.16, column_widths=[0.55, 0.45],
                                            subplot_titles=("(a) mean first time at rank ≤ 1 (t)",
                                                            "(b) blew up / time in B₁")))
        fig.add_scatter(name="mean wait, 95 % interval", mode="markers", orientation="h",
                        marker=dict(color=COLOURS["sde"], size=9), row=1, col=1)
        fig.add_scatter(name="lower bound (no jump)", mode="markers", marker=dict(symbol="triangle-right-open",
                                                                                   size=11, color=PALETTE["black"]),
                        row=1, col=1)
        fig.add_bar(name="runs that blew up", orientation="h", marker_color=PALETTE["black"], opacity=0.7, row=1, col=2)
        fig.add_bar(name="time in B₁", orientation="h", marker_color=COLOURS["sgd"], opacity=0.7, row=1, col=2)
        fig.update_xaxes(type="log", title_text="time t = η·steps", row=1, col=1)
        fig.update_xaxes(range=[0, 1], title_text="fraction", row=1, col=2)
        fig.update_yaxes(autorange="reversed")
        fig.update_layout(height=640, margin=dict(l=300, r=10, t=50, b=50), legend=dict(orientation="h", y=-0.1),
                          barmode="group")
        return [fig]

    def _update(self, setting) -> None:
        rows = _rows_at(self.rows, setting)
        self.result = rows
        labels = [r.label for r in rows]
        fig = self.figure
        with fig.batch_update():  # no jump: the interval's lower end is a lower bound of the mean wait
            _draw_intervals(fig.data[0], fig.data[1], labels, [r.summary.wait for r in rows], lambda w: w[1])
            fig.data[2].x = [r.summary.diverged / r.summary.n_runs for r in rows]
            fig.data[2].y = labels
            fig.data[3].x = [0.0 if not math.isfinite(r.summary.frac_B1[0]) else r.summary.frac_B1[0] for r in rows]
            fig.data[3].y = labels
            fig.layout.title = dict(text=f"stored grid at {setting} ({rows[0].summary.n_runs} runs per SDE/SGD row)",
                                    font=dict(size=14))
        sgd = next(r for r in rows if r.label == "SGD")
        sde = [r for r in rows if r.label.startswith("SDE")]
        self.say(f"SGD: {sgd.summary.jumped}/{sgd.summary.n_runs} jumped, mean wait {sgd.summary.wait[0]:.3g} "
                 f"[{sgd.summary.wait[1]:.3g}, {sgd.summary.wait[2]:.3g}]. SDE: "
                 + "; ".join(f"{r.label}: {r.summary.jumped}/{r.summary.n_runs} jumped, mean {r.summary.wait[0]:.3g}, "
                             f"{r.summary.diverged} blew up, {r.summary.returned} returned" for r in sde) + ".")


def hazard_label(row) -> str:
    """A hazard row's integrator, as the figure and the notebook name it."""
    if row.integrator == "EM":
        return f"Euler–Maruyama, dt = η/{row.m}"
    return f"adaptive, h ≤ η/{row.m}, ρ = {row.rho:g}"


class BlowupController(Controller):
    """Does the SDE blow up, or its integrator? (a) blow-ups per 1000 time units on [0, 3000] with their 95 %
    intervals, per integrator and step, at the chosen (η, γ) (an open triangle is an upper bound where nothing blew
    up); (b) ‖θ‖ (log scale) of fresh-noise continuations from a state just before a fixed-step blow-up at the hot
    point (the stored state where the two integrators' outcomes differ most), every step of the first time units:
    Euler–Maruyama against the adaptive step (a path ends where it blows up).

    Slider: ``setting`` (panel a). Reads the shipped grid: updates at once.
    """

    live = True

    def __init__(self, grid=None, setting: str | None = None) -> None:
        self.grid = load_grid() if grid is None else grid
        self.rows = hazard_rows(self.grid)
        self.sliders = {"setting": lambda value: _setting_slider(self.rows, value)}  # the grid's settings
        super().__init__(setting=setting)

    def _figures(self) -> list[go.FigureWidget]:
        fig = go.FigureWidget(make_subplots(rows=1, cols=2, horizontal_spacing=0.2, column_widths=[0.5, 0.5],
                                            subplot_titles=(f"(a) blow-ups per 1000 t on [0, {HAZARD_HORIZON:g}]",
                                                            "(b) ‖θ‖ after a state just before a blow-up")))
        # (b) shows a time window, (a) a list of integrators: the title must say which state (b) starts from
        fig.add_scatter(name="blow-up rate, 95 % interval", mode="markers", marker=dict(color=COLOURS["sde"], size=9),
                        row=1, col=1)
        fig.add_scatter(name="upper bound (none blew up)", mode="markers",
                        marker=dict(symbol="triangle-left-open", size=11, color=PALETTE["black"]), row=1, col=1)
        cont = next((t["result"] for t in self.grid.tasks if t["kind"] == "continuation"), None)
        self.continuation = cont
        if cont is not None:
            t = np.asarray(cont["trace_t"], dtype=float)
            for key, colour, dash, name in (("trace_em", COLOURS["gaussian"], "solid", "Euler–Maruyama"),
                                            ("trace_adaptive", COLOURS["sde"], "dash", "adaptive step")):
                y = np.array([[np.nan if v is None else v for v in row] for row in cont[key]], dtype=float)
                xs, ys = _runs_as_one_trace(t, y)
                fig.add_scatter(x=xs, y=ys, mode="lines", name=f"{name} ({len(y)} continuations)",
                                line=dict(color=colour, width=1.2, dash=dash), row=1, col=2)
            fig.add_scatter(x=[float(t[0]), float(t[-1])], y=[ESCAPE_NORM, ESCAPE_NORM], mode="lines",
                            name=f"‖θ‖ = {ESCAPE_NORM:g} (escape level)",
                            line=dict(color=NEUTRALS["grey"], dash="dot", width=1), row=1, col=2)
        fig.update_xaxes(type="log", title_text="blow-ups per 1000 time units", row=1, col=1)
        fig.update_xaxes(title_text="time after the state (zoom out: 30 time units stored)", range=[0.0, 0.4],
                         row=1, col=2)
        fig.update_yaxes(autorange="reversed", row=1, col=1)
        fig.update_yaxes(type="log", title_text="‖θ‖", exponentformat="power", row=1, col=2)
        fig.update_layout(height=460, margin=dict(l=230, r=10, t=50, b=50), legend=dict(orientation="h", y=-0.2))
        return [fig]

    def _update(self, setting) -> None:
        rows = _rows_at(self.rows, setting)
        self.result = rows
        labels = [hazard_label(r) for r in rows]
        fig = self.figure
        with fig.batch_update():
            # no blow-up: the interval's upper end is an upper bound of the rate
            _draw_intervals(fig.data[0], fig.data[1], labels, [r.rate for r in rows], lambda rate: rate[2])
            fig.layout.title = dict(text=f"blow-ups at {setting} ({rows[0].n_runs} runs per integrator)",
                                    font=dict(size=14))
        self.say("; ".join(f"{hazard_label(r)}: {r.events}/{r.n_runs} blew up by t = {HAZARD_HORIZON:g}, "
                           f"{r.rate[0]:.2g} [{r.rate[1]:.2g}, {r.rate[2]:.2g}] per 1000 t" for r in rows) + ".")


class JumpEventController(Controller):
    """The jump event over the stored (η, γ) grid: (a) k* of the chosen route; (b) the waiting time predicted from
    k* and p = 2/3 (either route, exact) against the one SGD measures (95 % intervals; a triangle marks a lower
    bound where no run jumped in the budget).

    Slider: ``route`` (row 0 or column 1). Reads the shipped grid: updates at once.
    """

    live = True

    slider_width = "300px"
    sliders = dict(route=Range("route", kind="choice", options=("row 0", "column 1")))

    def __init__(self, grid=None, route: str = "row 0") -> None:
        self.grid = load_grid() if grid is None else grid
        self.rows = kstar_rows(self.grid)
        super().__init__(route=route)

    def _figures(self) -> list[go.FigureWidget]:
        fig = go.FigureWidget(make_subplots(rows=1, cols=2, horizontal_spacing=0.17, subplot_titles=(  # colour bar room
            "(a) k*: consecutive samples that complete the jump", "(b) waiting time (SGD steps)")))
        fig.add_heatmap(colorscale="Viridis", colorbar=dict(x=0.42, len=0.9, title="k*"), texttemplate="%{z}",
                        row=1, col=1)
        fig.add_scatter(name="measured (jumps seen)", mode="markers", marker=dict(color=COLOURS["sgd"], size=9),
                        row=1, col=2)
        fig.add_scatter(name="lower bound (no jump)", mode="markers",
                        marker=dict(symbol="triangle-up-open", color=PALETTE["black"], size=10), row=1, col=2)
        fig.add_scatter(name="measured = predicted", mode="lines", line=dict(color=NEUTRALS["grey_mid"], dash="dash"),
                        row=1, col=2)
        fig.update_xaxes(title_text="γ (weight decay)", type="category", row=1, col=1)
        fig.update_yaxes(title_text="η", type="category", row=1, col=1)
        fig.update_xaxes(type="log", title_text="predicted from k* (either route)", row=1, col=2)
        fig.update_yaxes(type="log", title_text="measured", row=1, col=2)
        fig.update_layout(height=420, margin=dict(l=60, r=10, t=50, b=50), legend=dict(orientation="h", y=-0.2))
        return [fig]

    def _update(self, route) -> None:
        rows = self.rows
        self.result = rows
        lrs = sorted({r.lr for r in rows})
        weight_decays = sorted({r.weight_decay for r in rows})
        key = "kstar_row0" if route == "row 0" else "kstar_col1"
        z = [[next((getattr(r, key) for r in rows if r.lr == lr and r.weight_decay == weight_decay),
                   None) for weight_decay in weight_decays] for lr in lrs]
        fig = self.figure
        seen = [r for r in rows if r.jumped > 0]
        none = [r for r in rows if r.jumped == 0]
        with fig.batch_update():
            fig.data[0].x, fig.data[0].y, fig.data[0].z = [f"{v:g}" for v in weight_decays], [f"{v:g}" for v in lrs], z
            fig.data[1].x = [r.predicted_either for r in seen]
            fig.data[1].y = [r.measured[0] for r in seen]
            fig.data[1].error_y = dict(type="data", symmetric=False,
                                       array=[r.measured[2] - r.measured[0] for r in seen],
                                       arrayminus=[r.measured[0] - r.measured[1] for r in seen])
            fig.data[1].text = [f"η = {r.lr:g}, γ = {r.weight_decay:g}" for r in seen]
            fig.data[2].x = [r.predicted_either for r in none]
            fig.data[2].y = [r.measured[1] for r in none]
            fig.data[2].text = [f"η = {r.lr:g}, γ = {r.weight_decay:g}" for r in none]
            lo = min(r.predicted_either for r in rows)
            hi = max(r.predicted_either for r in rows)
            fig.data[3].x, fig.data[3].y = [lo, hi], [lo, hi]
        ks = [getattr(r, key) for r in rows]
        lo_row, hi_row = rows[int(np.argmin(ks))], rows[int(np.argmax(ks))]
        p = rows[0].p
        self.say(f"{route}: k* from {min(ks)} (η = {lo_row.lr:g}, γ = {lo_row.weight_decay:g}) to {max(ks)} "
                 f"(η = {hi_row.lr:g}, γ = {hi_row.weight_decay:g}); p = {p:.3f}, so p^k* falls from "
                 f"{p ** min(ks):.2g} to {p ** max(ks):.2g}. "
                 f"Cells with a predicted wait far beyond the {rows[0].n_runs} runs' budget show no jump (triangles).")
