"""Figures of Notebook 04 (one-way rank jumps): one draw-only controller per figure.

Each controller reads its sliders, calls one experiment of :mod:`symsgd_core.rank_jumps.experiments` (whose
defaults, :data:`~symsgd_core.rank_jumps.experiments.EPSILON_EXPERIMENT`, are the sliders' starting values),
keeps the frozen result in ``self.result``, draws it, and says in the status line what happened (including
failure modes: collapse to A = 0, no jumps within the budget, GD also at rank 1). The exercises of §8 are
:data:`symsgd_core.rank_jumps.EXERCISES`.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go

from symsgd_jupyter.describe import subscript, superscript

from ..core.checking import roundoff_tolerance
from ..dln import DEFAULT_B_CRITERION, DEFAULT_RANK_TOL, smallest_B, weight_decay_factor
from ..rank_jumps import experiments
from ..rank_jumps.analysis import exponential_counts, jump_histogram
from .base import Controller, ExperimentFigure, Words
from .plotting import axes, key_last, keyed, line, markers, panels, put
from .sliders import EPSILON, SEED, SGD_SEEDS, STEP_SIZE, WEIGHT_DECAY, Range
from .style import NEUTRALS, PALETTE, colours

__all__ = ["AnnealController", "BasinController", "EnsembleController", "LangevinController", "MechanismController",
           "PenaltyController", "TrapController"]

#: Colours used for the same objects in every figure.
COLOURS = colours(L2="grey_mid", L="blue", gd="black", sgd="vermillion", langevin="bluish_green", rank0="grey_mid",
                  rank1="vermillion", rank2="blue", rank3="reddish_purple")
#: One colour per SGD seed, for as many seeds (or runs of each dynamics) as a figure draws at most.
SEED_COLOURS = [{**PALETTE, **NEUTRALS}[c] for c in (
    "vermillion", "orange", "reddish_purple", "sky_blue", "bluish_green", "blue", "black", "grey")]
MAX_SEEDS = len(SEED_COLOURS)
#: One line dash per SGD seed, with its colour, in every row of the figures that draw each seed in several panels
#: (plotly's named dashes, then dash-length lists in px): a seed is told apart by more than colour without markers.
#: A marker at every record made the runs resting at round-off (s₂ ≈ 10⁻¹⁷, jagged from record to record) a solid
#: band. "dot" and "dash" are left to the reference lines (rank threshold, ε₂) drawn in the same panels.
SEED_DASHES = ("solid", "dashdot", "longdash", "longdashdot", "12px,3px,3px,3px,3px,3px", "6px,3px",
               "2px,3px,10px,3px", "16px,4px,4px,4px")

#: The sliders several rank-jump figures share (others in each figure's ``sliders``).
STEPS = Range("steps", 10_000, 100_000, 10_000, kind="int")
DEPTH = Range("depth L", 2, 6, kind="int")

#: Floor of the log axes: singular values below this (round-off, or exact zeros after the
#: engine's flush of tiny entries) are drawn at the floor.
LOG_FLOOR = 1e-18
#: The log axis of singular values, from just below the floor to 10.
LOG_AXIS = dict(type="log", range=[np.log10(LOG_FLOOR) - 0.5, 1])
#: Space between two panels of a row when the right one has a y title (fraction of the plot width): its tick labels
#: (up to ~40 px, "10⁻³⁶"), its title and the left panel's last x tick label (~15 px past its edge) at the
#: notebooks' ~860 px (``tests/ui/test_ui_layout.py``).
PANEL_GAP_WITH_Y_TITLE = 0.12
#: Pixels a subplot title is lifted above plotly's place for it, where a panel's top tick label is at its top edge.
SUBPLOT_TITLE_LIFT = 10
#: The layout of the figures with a row of two panels: room for the headline, the legend below.
LAYOUT = dict(margin=dict(l=60, r=10, t=70, b=50), legend=dict(orientation="h", y=-0.2))

#: Short headlines drawn on the figure for each kind of :func:`~symsgd_core.rank_jumps.experiments.jump_outcome`.
HEADLINES = {
    "jumped": "SGD jumped to rank 1, GD stayed at rank 2",
    "no_jumps": "FAILURE MODE: no jumps within the budget (η or γ too small, or rank-2 minimum too deep)",
    "collapsed": "FAILURE MODE: collapse to A = 0 (η too large; θ = 0 is a trap)",
    "diverged": "FAILURE MODE: divergence (η too large)",
    "gd_low_rank": "FAILURE MODE: GD also finds rank 1 — no rank-2 minimum to escape from (γ too large?)",
    "shallow": "L ≤ 2: convex in A, no trap and nothing to jump from",
}
#: The status text of each :func:`~symsgd_core.rank_jumps.experiments.jump_outcome` kind (``"gd_low_rank_start"``:
#: the ``"gd_low_rank"`` whose start is already at the target rank), formatted by :func:`jump_words` with η
#: (``lr``), γ (``weight_decay``), the outcome's numbers, ``finals`` (the runs ending at each rank) and the phrases
#: of :data:`JUMP_PHRASES` in ``{gd}`` and ``{more}``.
JUMP_WORDS = {
    "shallow": "L = {depth}: the penalty is convex in A (nuclear norm for L = 2), so there are no rank-overestimating "
               "minima and no one-way jumps to show; use L ≥ 3. GD converged to rank {start_rank}; SGD final {finals} "
               "(diverged: {diverged}).{gd}",
    "gd_low_rank_start": "GD itself converged to rank {start_rank} at these settings (γ = {weight_decay:.3g}, "
                         "L = {depth}): there is no higher-rank minimum for GD to be trapped in, so there is no jump "
                         "to make. A large γ removes the rank-2 minimum (so do a large ε and some depths and widths).",
    "gd_low_rank": "GD also left rank {start_rank} (final rank {gd_final_rank}): at η = {lr:.3g}, "
                   "γ = {weight_decay:.3g} the rank-{start_rank} minimum is not stable for GD, so this is not an SGD "
                   "effect. Lower γ or η.",
    "diverged": "{diverged} of {n_runs} SGD runs diverged (first at step {first_diverged_step}): η = {lr:.3g} is too "
                "large for this problem, a single sampled entry overshoots{more}{gd}",
    "collapsed": "{collapsed} of {n_runs} SGD runs collapsed to A = 0 (rank 0): with η = {lr:.3g} the noise kicks the "
                 "network past the rank-1 minimum into the basin of θ = 0, which is a local minimum for L ≥ 3 (B₀ is "
                 "absorbing too). Lower η.{gd}",
    "no_jumps": "No SGD run left rank {start_rank} within {steps} steps: at η = {lr:.3g}, γ = {weight_decay:.3g} the "
                "waiting time for a jump is much longer than the budget (it grows very fast as η or γ decrease, and "
                "as the rank-2 minimum gets deeper, e.g. at smaller ε). Raise η, γ or the number of steps.{gd}",
    "jumped": "{jumped} of {n_runs} SGD runs jumped rank {start_rank} → ≤{target_rank} (median at step "
              "{median_jump_step}); none returned to a higher rank ({returns} returns).{gd}{more}",
}
#: What :data:`JUMP_WORDS` put in ``{gd}`` (what GD did: ``gd_ends`` at L ≤ 2) and ``{more}`` (runs that collapsed
#: after a divergence, or after a jump), formatted with the outcome's numbers.
JUMP_PHRASES = dict(
    gd_diverged=" GD diverged too (step {gd_diverged_step}).",
    gd_stayed=" GD stayed at rank {start_rank}.",
    gd_ends=" GD ends at rank {gd_final_rank}.",
    diverged_more_collapsed="; {collapsed} more collapsed to A = 0.",
    diverged_none_collapsed=".",
    jumped_more_collapsed=" {collapsed} run(s) went on to collapse to A = 0 (η large).",
)


def jump_words(outcome, lr: float, weight_decay: float) -> Words:
    """The :class:`~.base.Words` of a :func:`~symsgd_core.rank_jumps.experiments.jump_outcome` (headline
    :data:`HEADLINES`, text :data:`JUMP_WORDS`) at step size η = ``lr`` and weight decay γ = ``weight_decay``."""
    kind, n = outcome.kind, outcome.numbers
    if "gd_final_rank" not in n:
        gd = ""
    elif kind == "shallow":
        gd = JUMP_PHRASES["gd_ends"]
    else:
        gd = JUMP_PHRASES["gd_diverged" if n["gd_diverged_step"] >= 0 else "gd_stayed"]
    more = ""
    if kind in ("diverged", "jumped"):
        more = JUMP_PHRASES.get(f"{kind}_{'more' if n['collapsed'] else 'none'}_collapsed", "")
    key = "gd_low_rank_start" if kind == "gd_low_rank" and n["start_rank"] <= n["target_rank"] else kind
    finals = ", ".join(f"rank {k}: {c}" for k, c in reversed(list(enumerate(n["final_counts"]))))
    text = JUMP_WORDS[key].format(lr=lr, weight_decay=weight_decay, finals=finals, gd=gd.format(**n),
                                  more=more.format(**n), **n)
    return Words(HEADLINES[kind], "warning" if outcome.failure else "info", text)


def _series(steps, values, floor: float | None = LOG_FLOOR):
    """``(x, y)`` lists for plotting, truncated at the first NaN (a diverged run) and floored for log axes."""
    v = np.asarray(values, dtype=float)
    bad = ~np.isfinite(v)
    end = int(np.argmax(bad)) if bad.any() else v.size
    v = v[:end]
    if floor is not None:
        v = np.maximum(v, floor)
    return np.asarray(steps[:end], dtype=float), v


def _runs(traces, res, n: int, k: int = 1, shift: int = 0) -> None:
    """Draw ``s_{k+1}(A)`` of the first ``n`` runs of ``res`` (None: no run), over its steps shifted by ``shift``,
    one run per trace of ``traces``; blank the traces beyond."""
    for s, tr in enumerate(traces):
        tr.x, tr.y = (_series(res.steps + shift, res.singular_values[s, :, k]) if res is not None and s < n
                      else ([], []))


def _curve(fig, name: str, colour: str, at, showlegend: bool | None = None, key: str | None = None,
           **style) -> None:
    """A curve ``name`` keyed ``key`` (:func:`~.plotting.put`) in ``colour`` (its line's ``width``, ``dash``,
    ``shape`` in ``style``) on panel ``at``, drawn as a line without markers (plotly's default mode puts a marker at
    every point of a trace under 20 points)."""
    fig.add_scatter(name=name, mode="lines",
                    line=dict(color=colour, **{k: v for k, v in style.items() if v is not None}),
                    **({} if showlegend is None else {"showlegend": showlegend}), row=at[0], col=at[1])
    key_last(fig, key)


def _keyed(fig, keys) -> list:
    """The traces of ``fig`` keyed ``keys``, in that order (for :func:`_runs`)."""
    return [keyed(fig, key) for key in keys]


def _hline(fig, y: float, name: str, at, dash: str = "dot", **more) -> None:
    """A thin grey reference line at height ``y`` on panel ``at`` (its x end is set when drawing)."""
    line(fig, name, NEUTRALS["grey"], at, width=1, dash=dash, x=[0.0, 1.0], y=[y, y], **more)


def _at_zero(entered: int, at_zero: int) -> str:
    """What became of the runs that entered B₁ when some ended at A = 0 (``""`` when none did): a collapse to A = 0
    keeps a run in B₁ (B₀ ⊂ B₁), so "collapsed" and "entered B₁" are one story, not a contradiction."""
    if not at_zero:
        return ""
    who = "it" if at_zero == 1 == entered else (f"all {at_zero}" if at_zero == entered else f"{at_zero} of them")
    return f", and {who} then collapsed to A = 0, which still lies in B₁ (B₀ ⊂ B₁)"


def b_r_summary(m: dict) -> str:
    """One sentence on the B_r membership ``m`` of GD (if it has ``gd_end_B``) and the SGD runs
    (:func:`~symsgd_core.rank_jumps.analysis.b_r_membership`)."""
    crit = DEFAULT_B_CRITERION
    text = f"Bᵣ (ε₁ = {crit.eps_rank:g}, ε₂ = {crit.eps_balance:g}, R = {crit.R:g}): "
    if "gd_end_B" in m:
        text += f"GD ends in B{subscript(m['gd_end_B'])}; "
    text += f"{m['entered']} of {m['n_runs']} SGD runs entered B₁" + _at_zero(m['entered'], m['at_zero'])
    text += f"; {m['left']} left it again; the largest SGD imbalance was {m['max_imbalance']:.2g} "
    return text + ("(balance test passed throughout)." if m["balanced"] else "(ABOVE ε₂: the balance test failed).")


class _ExperimentFigure(ExperimentFigure):
    """A figure of one experiment of :mod:`symsgd_core.rank_jumps.experiments` (:class:`~.base.ExperimentFigure`,
    engine ``"auto"`` unless given): ``_show(result, **values)`` draws the result, ``words(result, **values)`` says
    it (a headline for each outcome). A setting with no starting minimum is drawn as a failure."""

    slider_width = "280px"
    refused = (experiments.NoStartingMinimum,)
    REFUSED_HEADLINE = "FAILURE MODE: no starting minimum"

    def __init__(self, engine: str = "auto", **settings) -> None:
        super().__init__(engine=engine, **settings)

    def _draw(self, result, **values) -> None:
        with self.figure.batch_update():  # the traces and the headline reach the page as one update
            super()._draw(result, **values)


# -- 1. The penalty L s^{2/L} --------------------------------------------------------------------
class PenaltyController(Controller):
    """The induced penalty ``L s^{2/L}``, the cost of a new direction, and θ = 0 as a trap.

    Panels: (a) ``L s^{2/L}`` for L = 2 and the chosen L; (b) ``Δ(δ) = γLδ^{2/L} − gδ``, the
    change of loss when a new singular direction of size δ is switched on; (c) the loss
    ``(a^L − 1)² + γLa²`` of a balanced scalar chain, showing θ = 0 as a local minimum for L ≥ 3.
    Analytic: updates live.
    """

    experiment = staticmethod(experiments.penalty_view)
    slider_width = "280px"
    sliders = dict(depth=DEPTH.but(hi=8), weight_decay=WEIGHT_DECAY.but(lo=-3, hi=0, step=None, kind="log", fmt=None),
                   gain=Range("fit slope g", -2, 0.5, kind="log"))

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("(a) penalty per singular value", "(b) switching on a new direction",
                     "(c) loss along θ = a·(1,…,1)", height=380, horizontal_spacing=PANEL_GAP_WITH_Y_TITLE,
                     layout=dict(margin=dict(l=50, r=10, t=50, b=50), legend=dict(orientation="h", y=-0.22)))
        fig.update_annotations(yshift=SUBPLOT_TITLE_LIFT)  # (b)'s title sat on its top tick label (0.05)
        for col in (1, 2, 3):
            line(fig, "L = 2", COLOURS["L2"], (1, col), dash="dash", x=[0.0], y=[0.0], legendgroup="L2",
                 showlegend=col == 1, key=f"L2_{col}")
            line(fig, "chosen L", COLOURS["L"], (1, col), x=[0.0], y=[0.0], legendgroup="L", showlegend=col == 1,
                 key=f"L_{col}")
        markers(fig, "δ* (barrier ends)", COLOURS["L"], (1, 2), size=10, symbol="x", x=[0.0], y=[0.0],
                key="delta_star")
        axes(fig, (1, 1), x="singular value s", y="min ‖θ‖² for that s")
        axes(fig, (1, 2), x="size δ of the new singular value", y="Δ loss = γLδ<sup>2/L</sup> − gδ")
        axes(fig, (1, 3), x="per-layer weight a", y="(a<sup>L</sup> − 1)² + γLa²")
        return [fig]

    def _show(self, r, depth, weight_decay, gain) -> None:
        fig, L, d_star, d_max = self.figure, r.depth, r.barrier_width, r.d_max
        curves = [(r.s, r.penalty_L2, r.penalty_L), (r.delta, r.cost_L2, r.cost_L), (r.a, r.chain_L2, r.chain_L)]
        with fig.batch_update():
            for col, (x, y2, yL) in enumerate(curves, 1):
                put(fig, f"L2_{col}", x=x, y=y2)
                put(fig, f"L_{col}", x=x, y=yL, name=f"L = {L}")
            show_star = L >= 3 and d_star <= d_max
            x, y = ([d_star], [0.0]) if show_star else ([], [])
            put(fig, "delta_star", x=x, y=y)

    def words(self, r, depth, weight_decay, gain) -> Words:
        kind, n = r.outcome.kind, r.outcome.numbers  # no kind is a failure: each is what the penalty does
        L, d_star, d_max = n["depth"], n["barrier_width"], n["d_max"]
        if kind == "barrier":
            where = f"δ* = {d_star:.3g}" + (" (marked ×)" if d_star <= d_max else ", beyond the plotted range")
            power = superscript(f"2/{L}")
            return Words(None, "info", f"L = {L}: the penalty {L}·s{power} has infinite slope at s = 0, so a new "
                         f"direction costs more than it gains up to {where}: every lower-rank local optimum stays a "
                         "local minimum, local minima of many ranks exist. θ = 0 is a local minimum for every γ > 0 "
                         "(a trap).")
        if kind == "switches_on":
            msg = (f"L = 2: the penalty 2s has finite slope 2γ = {2 * weight_decay:.3g} at s = 0, smaller than the fit "
                   f"slope g = {gain:.3g}, so the new direction switches on at once: no lower-rank minimum here "
                   "(nuclear-norm problem, convex in A).")
        else:
            msg = (f"L = 2: slope 2γ = {2 * weight_decay:.3g} ≥ g = {gain:.3g}: this direction never pays, for any δ "
                   "(convex: a single global minimum).")
        return Words(None, "info", msg + (" θ = 0 is a local minimum only because γ ≥ 1." if n["origin_trap"] else
                                          f" θ = 0 is NOT a minimum (curvature 2γ − 2 = {2 * weight_decay - 2:.3g} "
                                          "< 0)."))


# -- 2. GD trapped, SGD jumps ----------------------------------------------------------------------
class TrapController(_ExperimentFigure):
    """GD and SGD side by side from the same GD-converged rank-2 minimum of the ε-completion.

    Left: GD; right: ``n_seeds`` SGD runs (one colour each). Top row: ``s_1(A)`` (the upper line of each colour)
    and ``s_2(A)`` (the lower), on a log axis; the dotted line is the rank threshold. Middle row: the smallest r
    with θ ∈ B_r (:func:`~symsgd_core.dln.network.smallest_B`, the default criterion). Bottom row: the
    balance test, ``max_ℓ ‖W_{ℓ+1}ᵀW_{ℓ+1} − W_ℓW_ℓᵀ‖_F`` against ε₂ (dashed). Re-simulates on Run.
    """

    experiment = staticmethod(experiments.trap)
    COSTLIEST, FULL_RUN_SECONDS = dict(depth=6, width=16, n_seeds=8, steps=100_000), 4.4
    #: first look: one SGD seed over the first 10 000 steps
    FIRST_LOOK = (lambda v: (v["n_seeds"] + 1) * v["steps"] * v["depth"] * v["width"] ** 2,
                  lambda v: dict(n_seeds=1, steps=min(v["steps"], 10_000)))
    FIRST_LOOK_WORDS = {"n_seeds": "SGD seeds", "steps": "steps"}

    sliders = dict(eps=EPSILON, weight_decay=WEIGHT_DECAY, lr=STEP_SIZE, depth=DEPTH,
                   width=Range("width", 2, 16, kind="int"), n_seeds=SGD_SEEDS.but(hi=MAX_SEEDS), steps=STEPS, seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("GD (full gradient)", "SGD (one entry per step)",
                     "B<sub>r</sub>: smallest r with θ ∈ B<sub>r</sub>", "", "balance test: max<sub>ℓ</sub> "
                     "‖W<sub>ℓ+1</sub>ᵀW<sub>ℓ+1</sub> − W<sub>ℓ</sub>W<sub>ℓ</sub>ᵀ‖<sub>F</sub> ≤ ε₂", "",
                     height=720, rows=3, cols=2, shared_yaxes="rows", shared_xaxes=True, horizontal_spacing=0.04,
                     vertical_spacing=0.07,
                     row_heights=[0.5, 0.25, 0.25], layout={**LAYOUT, "legend": dict(orientation="h", y=-0.1)})
        # row 1: s₁ (solid) and s₂ (dashed) of GD, then of each SGD seed
        for k, (sub, dash) in enumerate((("₁", None), ("₂", "dash")), 1):
            _curve(fig, f"GD s{sub}(A)", COLOURS["gd"], (1, 1), showlegend=False, dash=dash, key=f"gd_s{k}")
        for s in range(MAX_SEEDS):  # a seed's s₁ (upper) and s₂ (lower) in its colour and dash (SEED_DASHES)
            for k, sub in enumerate(("₁", "₂"), 1):
                _curve(fig, f"seed {s} s{sub}", SEED_COLOURS[s], (1, 2), showlegend=False, width=1.5,
                       dash=SEED_DASHES[s], key=f"sgd{s}_s{k}")
        for col in (1, 2):
            _hline(fig, DEFAULT_RANK_TOL, "rank threshold", (1, col), showlegend=col == 1, key=f"rank_tol{col}")
        # rows 2 and 3: B_r membership and the balance test, GD then the SGD seeds
        for row, shape, what in ((2, "hv", "B"), (3, "linear", "balance")):
            _curve(fig, "GD", COLOURS["gd"], (row, 1), showlegend=False, shape=shape, key=f"gd_{what}")
            for s in range(MAX_SEEDS):
                _curve(fig, f"seed {s}", SEED_COLOURS[s], (row, 2), showlegend=False, width=1.5, shape=shape,
                       dash=SEED_DASHES[s], key=f"sgd{s}_{what}")
        for col in (1, 2):
            _hline(fig, DEFAULT_B_CRITERION.eps_balance, "ε₂ (balance threshold)", (3, col), dash="dash",
                   showlegend=col == 1, key=f"eps2_{col}")
        fig.update_yaxes(**LOG_AXIS, row=1)
        fig.update_yaxes(range=[-1.3, 2.3], tickvals=[-1, 0, 1, 2],
                         ticktext=["none", "B<sub>0</sub>", "B<sub>1</sub>", "B<sub>2</sub>"], row=2)
        fig.update_yaxes(**LOG_AXIS, row=3)
        for row, title in enumerate(("singular values of A (upper s₁, lower s₂)", "θ ∈ B<sub>r</sub>", "imbalance"), 1):
            axes(fig, (row, 1), y=title)
        fig.update_xaxes(title_text="step", row=3)
        return [fig]

    def _show(self, r, eps, weight_decay, lr, depth, width, n_seeds, steps, seed) -> None:
        fig, gd, sgd = self.figure, r.gd, r.sgd
        for k in range(2):  # s₁ then s₂, of GD and of each SGD seed
            _runs(_keyed(fig, [f"gd_s{k + 1}"]), gd, 1, k)
            _runs(_keyed(fig, (f"sgd{s}_s{k + 1}" for s in range(MAX_SEEDS))), sgd, n_seeds, k)
        for s in range(1 + MAX_SEEDS):  # rows 2 and 3: GD, then the SGD seeds
            res, run, who = (gd, 0, "gd") if s == 0 else (sgd, s - 1, f"sgd{s - 1}")
            member, balance = keyed(fig, f"{who}_B"), keyed(fig, f"{who}_balance")
            member.x, member.y = (_series(res.steps, smallest_B(res.in_B[run]).astype(float), None)
                                  if s <= n_seeds else ([], []))
            balance.x, balance.y = _series(res.steps, res.balancedness[run]) if s <= n_seeds else ([], [])
        for key in ("rank_tol1", "rank_tol2", "eps2_1", "eps2_2"):
            put(fig, key, x=[0.0, float(steps)])

    def words(self, r, lr, weight_decay, **values) -> Words:
        n = r.outcome.numbers
        start = np.round(n["start_singular_values"], 3).tolist()
        head, level, text = jump_words(r.outcome, lr, weight_decay)
        return Words(head, level, f"Start: GD minimum with singular values {start} (rank {n['start_rank']}). " + text
                     + " " + b_r_summary(experiments.membership_of(n)))


# -- 3. The ensemble -------------------------------------------------------------------------------
class EnsembleController(_ExperimentFigure):
    """An ensemble of SGD runs from one rank-2 minimum: rank fractions over time and jump times.

    Left: fraction of runs at rank 2, 1, 0 (and diverged) at every record, the fraction in B_1 and the fraction
    passing the balance test (ε₂). Right: histogram of the first step at rank 1, with the exponential law of the
    censored maximum-likelihood mean waiting time. The title reports the number of returns to a higher rank
    (always 0). Re-simulates on Run.
    """

    experiment = staticmethod(experiments.ensemble)
    COSTLIEST, FULL_RUN_SECONDS = dict(n_runs=64, steps=120_000), 2.1
    #: first look: 8 runs
    FIRST_LOOK = (lambda v: v["n_runs"] * v["steps"], lambda v: dict(n_runs=min(v["n_runs"], 8)))
    FIRST_LOOK_WORDS = {"n_runs": "runs"}

    sliders = dict(eps=EPSILON, weight_decay=WEIGHT_DECAY, lr=STEP_SIZE, n_runs=Range("runs", 4, 64, 4, kind="int"),
                   steps=STEPS.but(hi=120_000), seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("(a) fraction of runs at each rank", "(b) first step at rank 1", height=400,
                     horizontal_spacing=PANEL_GAP_WITH_Y_TITLE, layout={**LAYOUT, "bargap": 0.05})
        for key, name, colour in (("rank2", "rank 2", COLOURS["rank2"]), ("rank1", "rank 1", COLOURS["rank1"]),
                                  ("rank0", "rank 0 (A = 0)", COLOURS["rank0"]),
                                  ("diverged", "diverged", PALETTE["black"])):
            _curve(fig, name, colour, (1, 1), shape="hv", key=key)
        _curve(fig, "in B<sub>1</sub> (ε₁, ε₂, R tests)", COLOURS["rank1"], (1, 1), dash="dot", width=3, shape="hv",
               key="in_B1")
        _curve(fig, "balance test passed (≤ ε₂)", PALETTE["black"], (1, 1), dash="dashdot", width=1.5, shape="hv",
               key="balanced")
        fig.add_bar(name="jump times", marker_color=COLOURS["rank1"], opacity=0.6, row=1, col=2)
        key_last(fig, "jumps")
        _curve(fig, "exponential law (censored MLE mean)", PALETTE["black"], (1, 2), dash="dash", key="law")
        axes(fig, (1, 1), y="fraction of runs", yaxis=dict(range=[-0.02, 1.02]))
        axes(fig, (1, 2), y="number of runs")
        fig.update_xaxes(title_text="step")
        return [fig]

    @staticmethod
    def _fitted(r) -> bool:
        """Whether the censored exponential law is fitted (some runs jumped, a finite positive mean wait: the
        experiment quotes it)."""
        return "mean_wait" in r.outcome.numbers

    def _show(self, r, eps, weight_decay, lr, n_runs, steps, seed) -> None:
        fig, sgd, tau = self.figure, r.sgd, r.mean_wait
        frac = sgd.fraction_at_rank()  # (K, 4): rank 0, 1, 2, diverged
        centres, counts, width = jump_histogram(r.jump_steps, steps)
        fitted = self._fitted(r)
        x = sgd.steps.astype(float)
        for key, col in (("rank2", 2), ("rank1", 1), ("rank0", 0), ("diverged", 3)):
            put(fig, key, x=x, y=frac[:, col])
        sb = smallest_B(sgd.in_B)
        put(fig, "in_B1", x=x, y=np.mean((sb >= 0) & (sb <= 1), axis=0))
        put(fig, "balanced", x=x, y=np.mean(sgd.balancedness <= DEFAULT_B_CRITERION.eps_balance, axis=0))
        put(fig, "jumps", x=centres, y=counts.astype(float), width=float(width) * 0.95)
        xx = np.linspace(0, steps, 200)
        lx, ly = (xx, exponential_counts(xx, n_runs, width, tau)) if fitted else ([], [])
        put(fig, "law", x=lx, y=ly)

    def words(self, r, n_runs, lr, weight_decay, **values) -> Words:
        n = r.outcome.numbers
        head, level, text = jump_words(r.outcome, lr, weight_decay)
        head = head if r.outcome.kind != "jumped" else (
            f"{n['reached_rank1']}/{n_runs} runs jumped to rank 1 · returns to a higher rank: {n['returns']}")
        extra = ""
        if self._fitted(r):
            extra = (f" Mean waiting time (censored exponential fit): {n['mean_wait']:.0f} ± {n['mean_wait_se']:.0f} "
                     f"steps; a jump itself takes a median {n['median_duration']} steps (record interval "
                     f"{experiments.ENSEMBLE_RECORD_EVERY}).")
        return Words(head, level, text + extra + " " + b_r_summary(experiments.membership_of(n)))


# -- 4. The mechanism: forced sampling of row 0 ----------------------------------------------------
class MechanismController(_ExperimentFigure):
    """Forced sampling of row-0 entries, then normal SGD and GD.

    Left: norm of the unsampled row of ``W_L`` (markers) against ``(1 − 2ηγ)^t`` times its start
    (line), log axis. Right: singular values of A through the forced phase (purple) and then
    under SGD (colours) and GD (black). Re-simulates when a slider is released.
    """

    experiment = staticmethod(experiments.mechanism)

    #: re-simulates when a slider is released: its Run answers in ≤ 0.5 s at every slider end (bench)
    auto_run = True

    sliders = dict(lr=STEP_SIZE, weight_decay=WEIGHT_DECAY,
                   forced_steps=Range("forced steps", 250, 6000, 250, kind="int"),
                   after_steps=Range("steps after", 5000, 60_000, 5000, kind="int"),
                   n_seeds=SGD_SEEDS.but(hi=MAX_SEEDS), seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("(a) unsampled row of W<sub>L</sub> during forced sampling", "(b) singular values of A",
                     height=420, horizontal_spacing=PANEL_GAP_WITH_Y_TITLE, layout=LAYOUT)
        markers(fig, "measured ‖W<sub>L</sub>[1, :]‖", PALETTE["reddish_purple"], (1, 1), size=7, key="measured")
        _curve(fig, "(1 − 2ηγ)<sup>t</sup> · ‖W<sub>L</sub>[1, :]‖₀", PALETTE["black"], (1, 1), dash="dash",
               key="predicted")
        # s₁ solid and s₂ dashed of: the forced phase, GD after it, each SGD seed after it
        for who, names, colour in (("forced", ("forced phase", "forced s₂"), PALETTE["reddish_purple"]),
                                   ("gd", ("GD after", "GD s₂"), COLOURS["gd"])):
            for k, dash in enumerate(("solid", "dash")):
                _curve(fig, names[k], colour, (1, 2), showlegend=k == 0, dash=dash, key=f"{who}_s{k + 1}")
        for s in range(MAX_SEEDS):
            for k, dash in enumerate(("solid", "dash")):
                _curve(fig, "SGD after" if (s == 0 and k == 0) else f"SGD seed {s}", SEED_COLOURS[s], (1, 2),
                       showlegend=(s == 0 and k == 0), width=1.2, dash=dash, key=f"sgd{s}_s{k + 1}")
        _hline(fig, DEFAULT_RANK_TOL, "rank threshold", (1, 2), key="rank_tol")
        fig.update_yaxes(type="log")
        axes(fig, (1, 1), y="‖W<sub>L</sub>[1, :]‖ (row never sampled)")
        axes(fig, (1, 2), y="singular values of A (upper s₁, lower s₂)", yaxis=dict(range=LOG_AXIS["range"]))
        fig.update_xaxes(title_text="step")
        return [fig]

    def _show(self, r, lr, weight_decay, forced_steps, after_steps, n_seeds, seed) -> None:
        fig, rec = self.figure, r.forced
        ok = np.isfinite(rec.row_norms[0, :, 0])
        put(fig, "measured", x=rec.steps[ok].astype(float), y=np.maximum(rec.row_norms[0, ok, 0], 1e-300))
        put(fig, "predicted", x=rec.steps.astype(float), y=np.maximum(rec.predicted()[0, :, 0], 1e-300))
        for k in range(2):  # s₁ then s₂: of the forced phase, then after it of GD and of each SGD seed
            _runs(_keyed(fig, [f"forced_s{k + 1}"]), rec, 1, k)
            _runs(_keyed(fig, [f"gd_s{k + 1}"]), r.gd, 1, k, forced_steps)
            _runs(_keyed(fig, (f"sgd{s}_s{k + 1}" for s in range(MAX_SEEDS))), r.sgd, n_seeds, k, forced_steps)
        put(fig, "rank_tol", x=[0.0, float(forced_steps + after_steps)])
        fig.layout.shapes = [dict(type="rect", xref="x2", yref="y2 domain", x0=0, x1=forced_steps, y0=0, y1=1,
                                  fillcolor="#ede9fe", opacity=0.6, line_width=0, layer="below")]

    def words(self, r, lr, weight_decay, forced_steps, **values) -> Words:
        return self._message(r.outcome, lr, weight_decay, forced_steps)

    #: Each outcome of :func:`~symsgd_core.rank_jumps.experiments.mechanism_outcome`: its headline and the status
    #: text's last sentence, formatted with η (``lr``), γ (``weight_decay``) and the outcome's numbers (a number the
    #: outcome lacks raises, never prints as 0).
    WORDS = {
        "forced_diverged": ("FAILURE MODE: divergence in the forced phase",
                            "The run diverged: η = {lr:.3g} is too large."),
        "forced_too_short": ("FAILURE MODE: forced phase too short — A is still rank 2",
                             "A is still rank 2 (s₂ = {s2_end:.2g}): at η = {lr:.3g}, γ = {weight_decay:.3g} the row "
                             "needs about {steps_needed:.0f} forced steps to fall below the rank threshold. Raise the "
                             "forced steps, η or γ."),
        "forced_collapsed": ("FAILURE MODE: collapse to A = 0 during the forced phase",
                             "A collapsed to 0 (rank 0): at η = {lr:.3g} the noise of the forced steps kicks the "
                             "network into the basin of θ = 0, a local minimum for L ≥ 3. Lower η."),
        "diverged_after": ("FAILURE MODE: divergence after the forced phase", "η = {lr:.3g} too large."),
        "collapsed_after": ("FAILURE MODE: collapse to A = 0 after the forced phase",
                            "{sgd_collapsed} SGD run(s) collapsed to A = 0: η = {lr:.3g} is large enough for the "
                            "noise to push the rank-1 network into θ = 0's basin (B₀ is absorbing)."),
        "rank_rose": ("Rank rose again after the forced phase",
                      "The rank rose again: the forced phase ended outside B₁'s basin."),
        "absorbed": ("Forced sampling → rank 1; then SGD and GD both stay at rank 1",
                     "Neither GD nor any SGD run ever returned to rank 2: B₁ is absorbing for both."),
    }

    @classmethod
    def _message(cls, outcome, lr, weight_decay, forced_steps):
        """The :class:`~.base.Words` of ``outcome``: the words only, the experiment decided it."""
        n = outcome.numbers
        err, tol, forced_rank = n["decay_error"], n["decay_tolerance"], n["forced_rank"]
        c = weight_decay_factor(lr, weight_decay)
        text = (f"Forced phase ({forced_steps} steps on row-0 entries only): the unsampled row of the last layer's "
                f"weights shrank by (1 − 2ηγ)ᵗ = {c:.5f}{superscript(forced_steps)} = "
                f"{weight_decay_factor(lr, weight_decay, forced_steps):.3g}, "
                f"matching the measured norms to a relative {err:.1e} (round-off bound {tol:.1e}). ")
        if "gd_rank" in n:
            text += (f"A has rank {forced_rank}. Then GD: final rank {n['gd_rank']}; SGD: final ranks "
                     f"{list(n['sgd_ranks'])}. ")
        head, why = cls.WORDS[outcome.kind]
        return Words(head, "warning" if outcome.failure else "info",
                     text + why.format(lr=lr, weight_decay=weight_decay, **n))


# -- 5. The basin of B_1 ---------------------------------------------------------------------------
class BasinController(_ExperimentFigure):
    """Perturb the rank-1 minimum by a along a new direction and watch whether it is pulled back.

    The perturbation adds ``a x_{ℓ+1} x_ℓᵀ`` to every layer (orthogonal to the active singular
    spaces), so every layer's second singular value is a and ``s₂(A) = a^L``. Left: ``s₂(A)``
    over time for the chosen a (bold) and a grid of a (thin). Right: final ``s₂(A)`` against a,
    with the first-order basin estimate ``a_c = (2γ/|g|)^{1/(L−2)}``. Dropdown ``method``: GD or SGD.
    """

    experiment = staticmethod(experiments.basin)

    #: re-simulates when a slider is released: its Run answers in ≤ 0.5 s at every slider end (bench)
    auto_run = True

    sliders = dict(alpha=Range("basin push a", -2, 0.4, kind="log"), weight_decay=WEIGHT_DECAY.but(hi=0.05),
                   eps=EPSILON, lr=STEP_SIZE.but(lo=0.01, hi=0.2), steps=STEPS.but(lo=5000, hi=40_000, step=5000),
                   method=lambda value: widgets.Dropdown(options=[("GD", "gd"), ("SGD", "sgd")], value=value,
                                                         description="method", layout=widgets.Layout(width="160px")))

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("(a) s₂(A) after the perturbation", "(b) where each a ends", height=420,
                     horizontal_spacing=PANEL_GAP_WITH_Y_TITLE, layout=LAYOUT)
        for k in range(experiments.BASIN_GRID):
            _curve(fig, "grid of a" if k == 0 else f"a grid {k}", NEUTRALS["grey_mid"], (1, 1), showlegend=k == 0,
                   width=1, key=f"grid{k}")
        _curve(fig, "chosen a", COLOURS["L"], (1, 1), width=3, key="chosen")
        markers(fig, "final s₂(A) (grid)", NEUTRALS["grey"], (1, 2), size=8, key="final_grid")
        markers(fig, "chosen a (final)", COLOURS["L"], (1, 2), size=14, symbol="star", key="final_chosen")
        line(fig, "a<sub>c</sub> = (2γ/|g|)<sup>1/(L−2)</sup>", PALETTE["black"], (1, 2), dash="dash", key="alpha_c")
        _hline(fig, DEFAULT_RANK_TOL, "rank threshold", (1, 1), key="rank_tol")
        fig.update_yaxes(**LOG_AXIS)
        axes(fig, (1, 1), x="step", y="s₂(A)")
        axes(fig, (1, 2), x="per-layer perturbation a", y="final s₂(A)", xaxis=dict(type="log"))
        return [fig]

    def _show(self, r, alpha, weight_decay, eps, lr, steps, method) -> None:
        fig, res, alpha_c, n = self.figure, r.run, r.alpha_c, experiments.BASIN_GRID
        final_s2 = res.singular_values[:, -1, 1]
        okg = np.isfinite(final_s2[:-1])
        # the runs from the grid of a, then from the chosen a
        _runs(_keyed(fig, [*(f"grid{k}" for k in range(n)), "chosen"]), res, n + 1)
        put(fig, "final_grid", x=r.grid[okg], y=np.maximum(final_s2[:-1][okg], LOG_FLOOR))
        x, y = ([alpha], [max(final_s2[-1], LOG_FLOOR)]) if np.isfinite(final_s2[-1]) else ([], [])
        put(fig, "final_chosen", x=x, y=y)
        x, y = ([alpha_c, alpha_c], [LOG_FLOOR, 10.0]) if np.isfinite(alpha_c) else ([], [])
        put(fig, "alpha_c", x=x, y=y)
        put(fig, "rank_tol", x=[0.0, float(steps)])

    def words(self, r, alpha, lr, method, **values) -> Words:
        return self._message(r.outcome, alpha, lr, method)

    #: Each outcome of :func:`~symsgd_core.rank_jumps.experiments.basin_outcome`: its headline (formatted with a) and
    #: what the status says of the run from a (formatted with η, the method and the outcome's numbers).
    WORDS = {
        "diverged": ("FAILURE MODE: divergence", ": {method} diverged (step {diverged_step}); the perturbed network is "
                     "too large for η = {lr:.3g}."),
        "collapsed": ("FAILURE MODE: collapse to A = 0", ": the run collapsed to A = 0 (θ = 0 is a trap for L ≥ 3)."),
        "pulled_back": ("a = {alpha:.3g}: pulled back to rank 1", ": pulled back — s₂(A) fell to {s2_end:.1e}; weight "
                        "decay (−2γa) beats the fit (+|g|aᴸ⁻¹) inside the basin."),
        "not_pulled_back": ("a = {alpha:.3g}: not pulled back — rank 2", ": not pulled back — the new direction grew "
                            "to s₂(A) = {s2_end:.3g}, the rank-2 minimum: the basin of B₁ is finite."),
    }

    @classmethod
    def _message(cls, outcome, alpha, lr, method):
        """The :class:`~.base.Words` of ``outcome`` (decided in
        :func:`~symsgd_core.rank_jumps.experiments.basin_outcome`) and of the grid's bracket of the basin edge."""
        alpha_c, g, boundary = (outcome.numbers[k] for k in ("alpha_c", "slope", "boundary"))
        where = (f"a = {alpha:.3g} ({alpha / alpha_c:.2f} × the first-order basin radius "
                 f"(2γ/|g|)¹ᐟ⁽ᴸ⁻²⁾ = {alpha_c:.3g}, with fit slope |g| = {abs(g):.3g})")
        lo, hi = boundary
        edge = (f" On the grid, the smallest a that escapes is {hi:.3g} ({hi / alpha_c:.2f} × the radius); the "
                f"largest a below it that is pulled back is {lo:.3g} ({lo / alpha_c:.2f} × the radius)."
                if np.isfinite(lo) and np.isfinite(hi) else
                " No a on the grid (up to twice the radius) escapes: at this γ and ε there is no rank-2 minimum to "
                "escape to."
                if not np.isfinite(hi) else " Every a on the grid escapes.")
        head, why = cls.WORDS[outcome.kind]
        return Words(head.format(alpha=alpha), "warning" if outcome.failure else "info",
                     where + why.format(method=method.upper(), lr=lr, **outcome.numbers) + edge)


# -- 6. Annealing: hot then cold -------------------------------------------------------------------
class AnnealController(_ExperimentFigure):
    """Hot phase (large η, γ: SGD jumps) then cold phase (small η, γ); GD and SGD from one rank-2 minimum.

    One run per method through one :meth:`~symsgd_core.dln.engine.Schedule.anneal`, each phase classified on
    its own records. Left: ``s₂(A)`` over time (hot phase shaded), GD black, SGD in colours. Right: final loss
    ``𝓛_γcold`` of every run after a GD polish of ``POLISH_STEPS`` cold steps (markers coloured by rank), with the
    losses of the two minima at the cold γ (horizontal lines). Re-simulates on Run.
    """

    experiment = staticmethod(experiments.anneal)
    #: no first look: the full Run takes at most ~1 s (0.45 s at the defaults)
    COSTLIEST, FULL_RUN_SECONDS = dict(hot_steps=100_000, cold_steps=40_000, n_seeds=8), 1.0

    sliders = dict(eps=EPSILON, hot_steps=STEPS.but(description="hot steps"),
                   lr_hot=STEP_SIZE.but(description="hot η"), weight_decay_hot=WEIGHT_DECAY.but(description="hot γ"),
                   cold_steps=STEPS.but(description="cold steps", lo=5000, hi=40_000, step=5000),
                   lr_cold=STEP_SIZE.but(description="cold η", lo=0.01, hi=0.2),
                   weight_decay_cold=WEIGHT_DECAY.but(description="cold γ", lo=0.002, hi=0.03),
                   n_seeds=SGD_SEEDS.but(hi=MAX_SEEDS), seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("(a) s₂(A): hot phase (shaded), then cold", "(b) final loss at the cold γ", height=420,
                     horizontal_spacing=PANEL_GAP_WITH_Y_TITLE, column_widths=[0.62, 0.38], layout=LAYOUT)
        _curve(fig, "GD", COLOURS["gd"], (1, 1), width=2.5, key="gd")
        for s in range(MAX_SEEDS):
            _curve(fig, "SGD" if s == 0 else f"SGD seed {s}", SEED_COLOURS[s], (1, 1), showlegend=s == 0, width=1.2,
                   key=f"sgd{s}")
        _hline(fig, DEFAULT_RANK_TOL, "rank threshold", (1, 1), key="rank_tol")
        # Markers, not bars: the axis is zoomed on the losses (they differ by ~1 %), and bars with a
        # cut baseline would exaggerate the difference.
        markers(fig, "final loss (polished; colour = rank)", [], (1, 2), size=14, symbol="diamond",
                marker_line=dict(color=PALETTE["black"], width=1), key="loss")
        line(fig, "rank-1 minimum", COLOURS["rank1"], (1, 2), dash="dash", key="rank1")
        line(fig, "rank-2 minimum", COLOURS["rank2"], (1, 2), dash="dash", key="rank2")
        axes(fig, (1, 1), x="step", y="s₂(A)", yaxis=LOG_AXIS)
        axes(fig, (1, 2), y="𝓛 at the cold γ (zoomed)")
        return [fig]

    def _show(self, r, eps, hot_steps, lr_hot, weight_decay_hot, cold_steps, lr_cold, weight_decay_cold, n_seeds,
              seed) -> None:
        fig, minima = self.figure, r.minima
        labels = ["GD"] + [f"SGD {s}" for s in range(n_seeds)]
        okl = np.isfinite(r.polished_loss)
        _runs(_keyed(fig, ["gd"]), r.gd, 1)
        _runs(_keyed(fig, (f"sgd{s}" for s in range(MAX_SEEDS))), r.sgd, n_seeds)
        put(fig, "rank_tol", x=[0.0, float(hot_steps + cold_steps)])
        put(fig, "loss", x=[lab for lab, o in zip(labels, okl) if o], y=r.polished_loss[okl],
            marker_color=[COLOURS.get(f"rank{rank}", PALETTE["black"]) for rank in r.polished_rank[okl]])
        for key in ("rank1", "rank2"):
            val = minima[key]
            x, y = ([labels[0], labels[-1]], [val, val]) if np.isfinite(val) and okl.any() else ([], [])
            put(fig, key, x=x, y=y)
        # zoom on the losses (they differ by ~1 %)
        vals = np.concatenate([r.polished_loss[okl], [v for v in (minima["rank1"], minima["rank2"]) if np.isfinite(v)]])
        if vals.size:
            lo, hi = float(vals.min()), float(vals.max())
            pad = max(0.15 * (hi - lo), 0.002 * hi, 1e-12)
            fig.layout.yaxis2.range = [lo - pad, hi + pad]
        fig.layout.shapes = [dict(type="rect", xref="x", yref="paper", x0=0, x1=hot_steps, y0=0, y1=1,
                                  fillcolor="#fde68a", opacity=0.35, line_width=0, layer="below")]

    def words(self, r, eps, weight_decay_cold, lr_cold, lr_hot, weight_decay_hot, **values) -> Words:
        return self._message(r.outcome, eps, weight_decay_cold, lr_cold, lr_hot, weight_decay_hot)

    #: Each cold-phase outcome of :func:`~symsgd_core.rank_jumps.experiments.anneal_outcome`: its headline and the
    #: advice the status gives (formatted with the cold γ). A failed hot phase has the headline of its
    #: :func:`~symsgd_core.rank_jumps.experiments.jump_outcome` (:data:`HEADLINES`).
    WORDS = {
        "cold_diverged": ("FAILURE MODE: divergence in the cold phase", "Lower the cold η. "),
        "cold_collapsed": ("FAILURE MODE: collapse to A = 0 in the cold phase", ""),
        "gd_finds_rank1": ("FAILURE MODE: GD also finds rank 1 in the cold phase",
                           "At the cold γ = {weight_decay_cold:.3g} the rank-2 minimum is not stable for GD any more "
                           "(γ too large), so the cold phase no longer separates the two. "),
        "rank_rose": ("Rank rose again in the cold phase", ""),
        "annealed": ("Annealing: GD keeps rank 2, SGD keeps rank 1", ""),
    }

    @classmethod
    def _message(cls, outcome, eps, weight_decay_cold, lr_cold, lr_hot, weight_decay_hot):
        """The :class:`~.base.Words` of ``outcome`` (decided in
        :func:`~symsgd_core.rank_jumps.experiments.anneal`): its kind, its hot phase
        (:func:`~symsgd_core.rank_jumps.experiments.hot_phase`, worded at the hot η, γ) and its better minimum."""
        hot, n = jump_words(experiments.hot_phase(outcome), lr_hot, weight_decay_hot), outcome.numbers
        r1, r2, better_minimum = n["rank1_loss"], n["rank2_loss"], outcome.labels["better_minimum"]
        at = f"At ε = {eps:.3g}, cold γ = {weight_decay_cold:.3g}, the"
        if better_minimum == "rank1_only":
            better = (f"At ε = {eps:.3g} and cold γ = {weight_decay_cold:.3g} GD from random init finds no rank-2 "
                      f"minimum: the rank-1 minimum ({r1:.5f}) is the one to be in.")
        elif better_minimum == "rank1":
            better = (f"{at} rank-1 minimum is the better one ({r1:.5f} < {r2:.5f}, by {100 * (r2 - r1) / r2:.1f}%): "
                      "here SGD's one-way bias helps.")
        else:
            better = (f"{at} rank-2 minimum is the better one ({r2:.5f} < {r1:.5f}): at this γ it has the lower "
                      "regularised loss 𝓛ᵧ, and a jump to rank 1 would be a loss.")
        text = "Hot phase: " + hot.text + " "
        if outcome.kind.startswith("hot_"):
            return Words(hot.headline, "warning", text + better)
        cold_up = n["cold_up"]
        text += (f"Cold phase (η = {lr_cold:.3g}, γ = {weight_decay_cold:.3g}): GD's lowest rank {n['gd_min_rank']}; "
                 f"the {n['jumped']} SGD run(s) that jumped {'stay at rank 1' if cold_up == 0 else 'rose again'} "
                 f"({cold_up} return(s) to rank 2). Polished losses: GD {n['gd_polished_loss']:.5f} "
                 f"(rank {n['gd_polished_rank']})")
        if "sgd_rank1_losses" in n:
            text += ", SGD rank-1 runs {:.5f}–{:.5f}".format(*n["sgd_rank1_losses"])
        head, why = cls.WORDS[outcome.kind]
        return Words(head, "warning" if outcome.failure else "info",
                     text + ". " + why.format(weight_decay_cold=weight_decay_cold) + better)


# -- 7. Langevin at a matched temperature vs SGD ---------------------------------------------------
class LangevinController(_ExperimentFigure):
    """SGD vs Langevin (isotropic noise) from one rank-2 minimum, and SGD's noise spectrum by direction.

    Left: ``s₂(A)`` of SGD runs (red) and Langevin runs (green) at temperature ``τ = temp_factor · τ_match``
    (``τ_match`` from :func:`symsgd_core.dln.noise.matched_langevin_temperature`: equal total per-step
    noise variance at the start). Right: eigenvalues of SGD's per-step noise covariance ``η²C`` at a rank-1 point,
    on the rank-raising directions (red) and on the others (blue), with Langevin's isotropic ``2ητ`` (green).
    Re-simulates on Run.
    """

    experiment = staticmethod(experiments.langevin)
    COSTLIEST, FULL_RUN_SECONDS = dict(n_runs=8, steps=100_000), 4.0
    #: first look: one run of each dynamics over the first 20 000 steps, for any Run above half the defaults' work
    #: (a Langevin step draws a normal per parameter: the defaults' Run takes 0.4–0.8 s in the bench)
    FIRST_LOOK = (lambda v: v["n_runs"] * v["steps"], lambda v: dict(n_runs=1, steps=min(v["steps"], 20_000)))
    FIRST_LOOK_WORDS = {"n_runs": "runs of each", "steps": "steps"}
    ONE_GO = 0.5

    sliders = dict(temp_factor=Range("τ / matched τ", -1, 1.5, kind="log"), lr=STEP_SIZE.but(lo=0.1, hi=0.4),
                   n_runs=Range("runs each", 1, MAX_SEEDS, kind="int"), steps=STEPS, seed=SEED)

    def _figures(self) -> list[go.FigureWidget]:
        fig = panels("(a) s₂(A): SGD vs Langevin", "(b) per-step noise variance at a rank-1 point", height=420,
                     horizontal_spacing=PANEL_GAP_WITH_Y_TITLE, layout=LAYOUT)
        for name in ("SGD", "Langevin"):
            for s in range(MAX_SEEDS):
                _curve(fig, name if s == 0 else f"{name} {s}", COLOURS[name.lower()], (1, 1), showlegend=s == 0,
                       width=1.2, key=f"{name.lower()}{s}")
        _hline(fig, experiments.LANGEVIN_RANK_TOL, f"rank threshold {experiments.LANGEVIN_RANK_TOL:g}", (1, 1),
               key="rank_tol")
        markers(fig, "SGD: directions keeping/lowering the rank", COLOURS["rank2"], (1, 2), size=6, key="keeping")
        markers(fig, "SGD: rank-raising directions", COLOURS["rank1"], (1, 2), size=6, symbol="x", key="raising")
        line(fig, "Langevin 2ητ (every direction)", COLOURS["langevin"], (1, 2), dash="dash", key="langevin_level")
        line(fig, "round-off level of η²C", NEUTRALS["grey"], (1, 2), width=1, dash="dot", key="roundoff")
        fig.update_yaxes(type="log")
        axes(fig, (1, 1), x="step", y="s₂(A)", yaxis=dict(range=LOG_AXIS["range"]))
        axes(fig, (1, 2), x="eigenvalue index (descending, within each direction type)",
             y="eigenvalue of η²C (floored at 10⁻³⁸)", yaxis=dict(range=[-40, 0]))
        return [fig]

    def _show(self, r, temp_factor, lr, n_runs, steps, seed) -> None:
        fig, spec = self.figure, r.spectrum
        keep, raise_ = spec["keeping"], spec["raising"]
        _runs(_keyed(fig, (f"sgd{s}" for s in range(MAX_SEEDS))), r.sgd, n_runs)
        _runs(_keyed(fig, (f"langevin{s}" for s in range(MAX_SEEDS))), r.langevin, n_runs)
        put(fig, "rank_tol", x=[0.0, float(steps)])
        put(fig, "keeping", x=np.arange(keep.size, dtype=float), y=np.maximum(keep, 1e-38))
        put(fig, "raising", x=np.arange(raise_.size, dtype=float), y=np.maximum(raise_, 1e-38))
        ends = [0.0, float(max(keep.size, raise_.size))]
        put(fig, "langevin_level", x=ends, y=[2 * lr * r.tau] * 2 if r.tau > 0 else [1e-38] * 2)
        roundoff = roundoff_tolerance(spec["trace_total"], r.rank1_point.arch.n_params)
        put(fig, "roundoff", x=ends, y=[max(roundoff, 1e-38)] * 2)

    def words(self, r, lr, **values) -> Words:
        return self._message(r.outcome, lr)

    #: Each outcome of :func:`~symsgd_core.rank_jumps.experiments.langevin_outcome`: its headline and the status
    #: text's last sentence, formatted with the outcome's numbers (a number it lacks raises, never prints as 0 or NaN).
    WORDS = {
        "diverged": ("FAILURE MODE: divergence", " Some runs diverged: η or τ too large."),
        "collapsed": ("FAILURE MODE: collapse to A = 0", " {sgd_collapsed} SGD / {langevin_collapsed} Langevin run(s) "
                      "collapsed to A = 0 (too much noise: θ = 0 is a trap)."),
        "no_transitions": ("FAILURE MODE: no transitions within the budget", " Nothing moved within the budget: raise "
                           "τ / matched τ (Langevin), η (SGD) or the steps."),
        "no_transitions_too_hot": ("FAILURE MODE: no transitions within the budget", " Nothing moved within the "
                                   "budget. SGD did not jump (raise η or the steps); Langevin is so hot that its own "
                                   "noise keeps s₂(A) above the rank threshold {rank_tol:g} (median s₂ = "
                                   "{langevin_median_s2:.2g}), so it never counts as rank 1: lower τ / matched τ or "
                                   "raise the steps."),
        "both_ways": ("Langevin goes both ways (weaker low-rank preference); SGD only down", ""),
        "one_way": ("SGD only jumps down; Langevin keeps isotropic noise on the rank-raising directions", ""),
    }

    @classmethod
    def _message(cls, outcome, lr):
        """The :class:`~.base.Words` of ``outcome`` (decided in
        :func:`~symsgd_core.rank_jumps.experiments.langevin_outcome`; the runs' transitions and noise quoted by
        :func:`~symsgd_core.rank_jumps.experiments.langevin`)."""
        n, where = outcome.numbers, outcome.labels["where"]
        tau, tau_match = n["tau"], n["tau_match"]
        ratio = abs(n["trace_raising"]) / n["trace_total"] if n["trace_total"] > 0 else 0.0

        def stay(frac):
            return f"after its first visit {100 * frac:.0f}% of the time" if np.isfinite(frac) else "never got there"

        text = (f"τ = {tau:.3g} ({tau / tau_match:.2g} × the matched τ = {tau_match:.3g}). SGD: {n['sgd_down']} "
                f"down / {n['sgd_up']} up transitions, at rank ≤ 1 {stay(n['sgd_stay'])}. Langevin: "
                f"{n['langevin_down']} down / {n['langevin_up']} up, at rank ≤ 1 {stay(n['langevin_stay'])}")
        if "langevin_floor_s2" in n:
            text += f"; at rank 1 its s₂(A) rests on a noise floor ≈ {n['langevin_floor_s2']:.1e} (SGD's: round-off)"
        n_r, n_k = n["n_raising"], n["n_keeping"]
        text += (f". Noise at {where}: the {n_r} rank-raising directions carry {ratio:.1e} of SGD's per-step "
                 f"variance (zero up to round-off; all of it lies in {n['n_carrying']} "
                 f"rank-keeping directions), while isotropic Langevin noise gives each of the {n_r + n_k} directions "
                 f"2ητ = {2 * lr * tau:.2e}, i.e. {100 * n_r / (n_r + n_k):.0f}% of its variance raises the rank.")
        head, why = cls.WORDS[outcome.kind]
        return Words(head, "warning" if outcome.failure else "info",
                     text + why.format(rank_tol=experiments.LANGEVIN_RANK_TOL, **outcome.numbers))
