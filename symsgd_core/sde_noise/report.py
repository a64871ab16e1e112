"""Notebook 05's printed tables, read from the shipped grid (``experiments.load_grid()``): one function per table.

Each function returns a :class:`Report`: the table's text lines (``.lines()``) and the values the notebook's later
cells and claims use (``report["name"]``). A grid without the tasks or rows a table needs raises ``ValueError``
naming what is missing. Every line is at most :data:`LINE_WIDTH` characters (a table too wide for a notebook
page beside JupyterLab's file browser is split into narrower tables that repeat its key columns; a long sentence is
wrapped with a hanging indent), and math is Unicode (B₁, s₂, λₘₐₓ, log₁₀), never ``B_1`` or a caret.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping

import numpy as np

from ..core.report import Report
from ..core.stats import wilson
from ..dln import epsilon_completion
from ..rank_jumps.analysis import loss_hessian_top_eigenvalue
from ..rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from ..rank_jumps.experiments import minima_losses, rank_one_minimum, start_minimum
from . import blowup as bu
from . import jump_event as je
from . import jump_event_stats as js
from .claims import ADAPTIVE_LABELS
from .experiments import (
    COOLER_STEP,
    HOT,
    RANK2_LOWER,
    SETTINGS,
    WEAKER_DECAY,
    kstar_rows,
    langevin_eps_rows,
    staircase_summary,
)
from .jump_event import run_waiting_time

__all__ = [
    "Report",
    "label_words",
    "comparison_report",
    "continuation_report",
    "controls_report",
    "explosion_report",
    "follow_report",
    "grid_table_report",
    "hazard_report",
    "kstar_table_report",
    "langevin_eps_report",
    "least_routes_report",
    "passage_report",
    "spikes_report",
    "rank2_lower_report",
    "relapse_report",
    "step_size_report",
    "task_kinds_report",
    "weak_order_report",
]

#: The widest line a report prints (characters): a notebook page at 1280 px with JupyterLab's file browser open
#: shows about 100 characters of fixed-width output before it wraps mid-row.
LINE_WIDTH = 100
#: The hanging indent of a wrapped sentence's continuation lines.
WRAP_INDENT = "    "

#: The (η, γ) settings of the stored-grid tables (§3), hot point first.
GRID_SETTINGS = SETTINGS
#: The (η, γ) settings compared with the hot point in the stored-rows cell.
COLD_SETTINGS = (COOLER_STEP, WEAKER_DECAY)
#: §4.1's staircase: the row/column routes whose k* the grid stores, and the entries (i, j) left out one at a time.
STAIRCASE_ROUTES = ("row0", "row1", "col1")
STAIRCASE_LEFT_OUT = ((0, 0), (0, 1), (1, 1), (1, 2))


def _wrap(text: str, indent: str = "") -> list[str]:
    """``text`` as lines of at most :data:`LINE_WIDTH` characters: the first at ``indent``, the rest at ``indent``
    plus :data:`WRAP_INDENT` (words are never broken)."""
    return textwrap.wrap(text, LINE_WIDTH, initial_indent=indent, subsequent_indent=indent + WRAP_INDENT,
                         break_long_words=False, break_on_hyphens=False)


def _g(x) -> str:
    """A number in at most seven characters: in full from 10⁻³ to 10⁵ (three significant digits below 10), else
    two significant digits as ``1.2e5`` or ``5.2e-8``; ∞ and nan spelt out."""
    x = float(x)
    if not np.isfinite(x):
        return "nan" if np.isnan(x) else ("∞" if x > 0 else "−∞")
    if x != 0 and abs(x) < 1e-3:
        mantissa, exponent = f"{x:.1e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    if abs(x) < 10:
        return f"{x:.3g}"
    if abs(x) < 1e5:
        return f"{x:.0f}"
    mantissa, exponent = f"{x:.2g}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _iv(w) -> str:
    """A mean with its 95 % interval ``(mean, lo, hi)``; ``none (≥ lo)`` when nothing happened (mean not finite);
    ``—`` when nothing is known (mean and lower end nan)."""
    if np.isnan(w[0]) and np.isnan(w[1]):
        return "—"
    return f"{_g(w[0])} [{_g(w[1])}, {_g(w[2])}]" if np.isfinite(w[0]) else f"none (≥ {_g(w[1])})"


#: Row labels as the tables and the stored-grid figure print them: no ASCII subscript (the grid stores ``τ_match``).
_LABEL_WORDS = (("Langevin 1× τ_match", "Langevin, matched τ"), ("Langevin 10× τ_match", "Langevin, 10× matched τ"),
                ("τ_match", "matched τ"))


def label_words(label: str) -> str:
    """A stored grid row's ``label`` as a reader sees it (``"Langevin 1× τ_match"`` → ``"Langevin, matched τ"``); the
    grid's keys stay as stored."""
    for raw, words in _LABEL_WORDS:
        label = label.replace(raw, words)
    return label


def _cell(v) -> str:
    if isinstance(v, float):
        return _g(v)
    if isinstance(v, tuple) and len(v) == 3 and all(isinstance(x, float) for x in v):
        return _iv(v)
    return str(v)


def _table(title: str, columns, rows, key: int = 1) -> list[str]:
    """A table of ``columns`` and ``rows`` (cells formatted by :func:`_cell`), right-aligned, in as many parts as
    it takes to keep every line within :data:`LINE_WIDTH`: each part repeats the first ``key`` columns."""
    cells = [tuple(str(c) for c in columns)] + [tuple(_cell(v) for v in r) for r in rows]
    width = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    parts, part = [], []
    used = sum(width[:key]) + 2 * key
    for i in range(key, len(columns)):
        if part and used + width[i] > LINE_WIDTH:
            parts.append(part)
            part, used = [], sum(width[:key]) + 2 * key
        part.append(i)
        used += width[i] + 2
    parts.append(part)
    lines = _wrap(title)
    for n, part in enumerate(parts):
        if n:
            lines.append("")
        idx = list(range(key)) + part
        lines += ["  ".join(r[i].rjust(width[i]) for i in idx).rstrip() for r in cells]
    return lines


def _tasks(grid, kind: str, what: str, pred=lambda t: True) -> list[dict]:
    """The grid's tasks of ``kind`` that satisfy ``pred``; ValueError naming ``what`` when there are none."""
    found = [t for t in grid.tasks if t["kind"] == kind and pred(t)]
    if not found:
        raise ValueError(f"the grid has no {kind!r} tasks for {what}")
    return found


def _row(rows: Mapping, lr: float, weight_decay: float, label: str):
    try:
        return rows[(lr, weight_decay, label)]
    except KeyError:
        raise ValueError(f"the comparison rows have no row (η = {lr}, γ = {weight_decay}, {label!r})") from None


def _by_broken(tasks: list[dict], what: str, needed=(None,)) -> dict:
    out = {t["params"]["broken"]: t["result"] for t in tasks}
    missing = [b for b in needed if b not in out]
    if missing:
        raise ValueError(f"the grid's {what} tasks lack broken = {missing}")
    return out


def weak_order_report(grid) -> Report:
    """§1's stored weak-order check: the pass rule, then the correct EM and the order-½ broken increments."""
    weak = _by_broken(_tasks(grid, "weak_order", "the weak-order check"), "weak_order", (None, "biased"))
    good, biased = weak[None], weak["biased"]
    d0 = good["details"]
    lines = _wrap(f"Euler–Maruyama: passes if the fitted weak order is within "
                  f"{np.round(d0['band'], 2).tolist()} with SE ≤ {d0['se_max']}")
    for name, r in (("correct EM", good), ("broken increments (order ½)", biased)):
        d = r["details"]
        lines.append(f"{name:>28}: fitted weak order {d['order']:.2f} ± {d['se']:.2f} -> "
                     f"{'PASS' if r['passed'] else 'FAIL'}")
    return Report(lines, values={"weak": weak})


def _quantiles(s, fitted: bool = False) -> str:
    if fitted and s.log10_s2_hist_fit is None:
        return "(not recorded)"
    return "/".join(f"{s.log10_s2_quantile(q, fitted):+.1f}" for q in (0.05, 0.5, 0.95))


def grid_table_report(rows: Mapping, settings=GRID_SETTINGS) -> Report:
    """§3's stored-grid tables: how the runs jump and where they sit, per (η, γ) of ``settings`` and dynamics.

    ``rows``: ``{(lr, weight_decay, label): summary}`` (``experiments.comparison_rows``)."""
    shown = [(lr, weight_decay, label) for lr, weight_decay in settings for (a, b, label) in rows
             if (a, b) == (lr, weight_decay) and "S = 2" not in label and "weight" not in label]
    missing = [s for s in settings if not any((a, b) == s for a, b, _ in shown)]
    if missing:
        raise ValueError(f"the comparison rows have no row at (η, γ) = {missing}")
    lines = _wrap("How the runs jump: runs at rank ≤ 1, mean first time there [95 %], returns to rank 2, paths an "
                  "integrator's rule stopped (EM: a residual above 10⁶; adaptive step: that or its stall rule; "
                  "followed: never), and runs at A = 0 among those not stopped")
    lines += _per_setting(rows, shown, settings, "jumped  mean first time [95 %]  ret.  stop.  A = 0",
                          lambda s: f"{s.jumped:2d}/{s.n_runs:<3d} {_iv(s.wait):22s} {s.returned:4d}  "
                                    f"{s.diverged:5d}  {s.collapsed:2d} of {s.bounded_end:2d}")
    lines += [""] + _wrap("Where the runs sit: share of time in B₁ (± s.e.), and log₁₀ s₂ at the 5/50/95 % "
                          "quantiles, all runs and the runs a rank-1 fit describes")
    lines += _per_setting(rows, shown, settings, "time in B₁   log₁₀ s₂ (all)     (rank-1 fits)",
                          lambda s: f"{s.frac_B1[0]:.2f} ± {s.frac_B1[1]:.2f}  {_quantiles(s):17s}  "
                                    f"{_quantiles(s, True)}")
    return Report(lines, values={"shown": tuple(shown)})


def _per_setting(rows: Mapping, shown, settings, heading: str, cells) -> list[str]:
    """One block per (η, γ) of ``settings``: a line ``η = …, γ = …`` padded to the label column, then ``heading``;
    then a line per row of ``shown`` (``(lr, weight_decay, label)`` keys of ``rows``) at that setting: its label,
    then ``cells(summary)``."""
    width = max(len(label_words(label)) for *_, label in shown)
    lines = []
    for lr, weight_decay in settings:
        lines.append(f"η = {lr}, γ = {weight_decay}".ljust(width + 1) + "  " + heading)
        lines += [f" {label_words(label):{width}s}  {cells(rows[(a, b, label)])}" for a, b, label in shown
                  if (a, b) == (lr, weight_decay)]
    return lines


def comparison_report(rows: Mapping, hot=HOT) -> Report:
    """§3's stored rows: SGD against the adaptive-step SDE at each (η, γ), returns, collapses, stops, Langevin.

    Values: ``hot`` (η, γ), ``SDE`` (the adaptive-step label per (η, γ)), ``sgd`` and ``sde`` (the hot rows)."""
    SDE = ADAPTIVE_LABELS

    def R(lr, weight_decay, label):
        return _row(rows, lr, weight_decay, label)

    sgd, sde = R(*hot, "SGD"), R(*hot, SDE[hot])
    said = [f"hot: mean first time at rank ≤ 1, SGD {_iv(sgd.wait)}, SDE {_iv(sde.wait)}: SGD "
            f"{sgd.wait[0] / sde.wait[0]:.1f}× slower (≥ {sgd.wait[1] / sde.wait[2]:.1f} from the interval ends)"]
    for lr, weight_decay in COLD_SETTINGS:
        g, d = R(lr, weight_decay, "SGD"), R(lr, weight_decay, SDE[(lr, weight_decay)])
        said.append(f"η = {lr}, γ = {weight_decay}: SGD jumped {g.jumped}/{g.n_runs} (mean ≥ {_g(g.wait[1])}), "
                    f"SDE {_iv(d.wait)}: at least {g.wait[1] / d.wait[2]:.1f}× faster")
    sde_rows = [(k, s) for k, s in rows.items() if k[2].startswith("SDE")]
    n_jumped = sum(s.jumped for _, s in sde_rows)
    said.append(f"returns to rank 2 over every SDE row: {sum(s.returned for _, s in sde_rows)} of {n_jumped} jumped "
                f"runs (95 % upper end per run: {wilson(0, n_jumped)[2]:.3f})")
    stay = R(*COOLER_STEP, SDE[COOLER_STEP])
    said.append(f"η = 0.2, γ = 0.027, adaptive step, t ≤ 3000: jumped {stay.jumped}/{stay.n_runs}, returned "
                f"{stay.returned}, collapsed {stay.collapsed}, stopped {stay.diverged}; SGD jumped "
                f"{R(*COOLER_STEP, 'SGD').jumped}/64 by t = 12 000")
    for label in ("SDE, dt = η/4", "SDE, dt = η/16"):
        e = R(*hot, label)
        said.append(f"hot, {label}: {e.collapsed} of the {e.bounded_end} runs bounded at t = 12 000 are at A = 0")
    adaptive = [s for k, s in sde_rows if "adaptive" in k[2]]
    said.append(f"adaptive step with its stall rule: {sum(s.collapsed for s in adaptive)} runs at A = 0 over "
                f"{len(adaptive)} rows (the rule stops the paths that would collapse: the followed paths do)")
    p_long = wilson(sde.diverged, sde.n_runs)
    said.append(f"hot, adaptive step, t ≤ 12 000: its rules stopped {sde.diverged}/{sde.n_runs} runs "
                f"[{p_long[1]:.2f}, {p_long[2]:.2f}] (a stall is a first passage over ‖θ‖ ≈ 12–17: the followed "
                f"paths come back); time in B₁ {sde.frac_B1[0]:.2f} ± {sde.frac_B1[1]:.2f} "
                f"(SGD {sgd.frac_B1[0]:.2f} ± {sgd.frac_B1[1]:.2f})")
    lang1, lang10 = R(*hot, "Langevin 1× τ_match"), R(*hot, "Langevin 10× τ_match")
    said.append(f"Langevin hot: matched τ jumped {lang1.jumped}/{lang1.n_runs} (median log₁₀ s₂ "
                f"{lang1.log10_s2_median:+.1f}, never in B₁); 10× matched τ returned {lang10.returned}/{lang10.jumped}")
    lines = [line for text in said for line in _wrap(text)]
    return Report(lines, values={"hot": hot, "SDE": SDE, "sgd": sgd, "sde": sde})


def passage_report(follow, hot=HOT) -> Report:
    """§3.1's passage fits: β on the grid's seeds at the hot point (t ≥ 12 000), on fresh seeds, and pooled; then,
    per level b, the share of spikes past 10 that reach b in each, against β = 1 and the pooled fit.
    ``follow``: ``spikes.follow_groups(grid)``.

    Values: ``hot_main``, ``hot_fresh`` (the two groups), ``pooled`` (the pooled fit)."""
    from .spikes import fit_passage

    def group(fresh):
        try:
            return next(g for g in follow if (g.lr, g.weight_decay) == hot and g.t_max >= 12_000 and g.fresh == fresh)
        except StopIteration:
            raise ValueError(f"no followed group at {hot} with t_max ≥ 12 000 and fresh = {fresh}") from None

    hot_main, hot_fresh = group(False), group(True)
    pooled = fit_passage(np.concatenate([g.passage_heights for g in (hot_main, hot_fresh)]))
    fits = (("grid's seeds", hot_main.passage), ("fresh seeds", hot_fresh.passage), ("both", pooled))
    lines = [f"{name}: β = {fit.beta[0]:.2f} [{fit.beta[1]:.2f}, {fit.beta[2]:.2f}] from {fit.n} spikes that "
             "reached 10" for name, fit in fits]
    lines.append("spikes past 10 that reach b:   b  grid's seeds  fresh seeds  if β = 1  pooled fit")
    for k, b in enumerate(pooled.levels):
        lines.append(f"{'':29s}{b:4g}  {hot_main.passage.counts[k]:>12d}  {hot_fresh.passage.counts[k]:>11d}  "
                     f"{pooled.predicted(b, 1.0):8.3f}  {pooled.predicted(b, pooled.beta[0]):10.3f}")
    return Report(lines, values={"hot_main": hot_main, "hot_fresh": hot_fresh, "pooled": pooled})


def step_size_report(problem=None, settings=GRID_SETTINGS) -> Report:
    """§3.3's step sizes: per (η, γ) of ``settings`` the top curvature λ_max of 𝓛_γ at the rank-2 minimum and η λ_max.
    ``problem``: the ε-completion problem (default: the experiment's). Values: ``lam_max`` ({γ: λ_max})."""
    problem = EXP.problem if problem is None else problem
    lam_max = {weight_decay: loss_hessian_top_eigenvalue(start_minimum(weight_decay=weight_decay)[0], problem,
                                                         weight_decay)
               for weight_decay in dict.fromkeys(w for _, w in settings)}
    lines = [f"η = {lr}, γ = {weight_decay}: λₘₐₓ = {lam_max[weight_decay]:.2f}, η λₘₐₓ = "
             f"{lr * lam_max[weight_decay]:.2f}" for lr, weight_decay in settings]
    return Report(lines, values={"lam_max": lam_max})


def kstar_table_report(grid, factor: float, hot=HOT) -> Report:
    """§4's k* tables: per (η, γ) of the grid (a) the forced-run thresholds, the predicted and the measured waits
    and the runs that jumped; (b) the jumps the prediction expects, the Poisson p, the verdict and whether within
    ``factor``; then the counter-example (0.2, 0.027), the hot point's ratio, and the collapses at η = 0.35.

    Values: ``ktab``, ``cmp`` ({(η, γ): comparison}), ``by`` ({(η, γ): k* row}), ``collapsed`` ({γ: runs})."""
    ktab = kstar_rows(grid)
    if not ktab:
        raise ValueError("the grid has no k* rows (kstar and waiting tasks)")
    cmp = {(c.lr, c.weight_decay): c for c in js.grid_wait_comparisons(grid, factor=factor)}
    for key in [(q.lr, q.weight_decay) for q in ktab] + [COOLER_STEP, hot]:
        if key not in cmp:
            raise ValueError(f"the grid has no waiting comparison at (η, γ) = {key}")
    lines = ["(a) waits in steps: predicted from k* [k* band], measured [95 %]",
             "  η      γ    k* row 0  k* col 1  predicted E [k* band]    measured [95 %]        jumped"]
    for q in ktab:
        c = cmp[(q.lr, q.weight_decay)]
        meas = _iv(c.measured) if c.jumped else f"none (≥ {_g(c.measured[1])})"
        lines.append(f"{q.lr:4.2f}  {q.weight_decay:6.4f}  {q.kstar_row0:8d}  {q.kstar_col1:8d}  "
                     f"{_g(c.predicted):>6s} [{_g(c.predicted_band[0])}, {_g(c.predicted_band[1])}]".ljust(59)
                     + f"{meas:22s} {c.jumped:3d}/{c.n_runs}")
    lines += ["", f"(b) the test: jumps the predicted wait expects (runs, events), exact Poisson p, within {factor:g}×",
              "  η      γ    runs   events  Poisson p  verdict          within"]
    for q in ktab:
        c = cmp[(q.lr, q.weight_decay)]
        within = ("—" if c.jumped == 0 and c.verdict == "agree" else
                  {True: "yes", False: "no", None: "undecided"}[c.within_factor])
        lines.append(f"{q.lr:4.2f}  {q.weight_decay:6.4f}  {c.expected_runs:4.1f}  {_g(c.expected_events):>7s}  "
                     f"{_g(c.p_value):>9s}  {c.verdict:15s}  {within}")
    by = {(q.lr, q.weight_decay): q for q in ktab}
    ce = cmp[COOLER_STEP]   # the counter-example: the event predicts most runs jump, none does
    lines += _wrap(f"(0.2, 0.027): predicted wait {_g(ce.predicted)} steps -> {ce.expected_events:.0f} jumps expected "
                   f"in {ce.n_runs} × {_g(ce.n_steps)} steps ({ce.expected_runs:.0f} of {ce.n_runs} runs), seen "
                   f"{ce.jumped}; measured wait ≥ {_g(ce.measured[1])} (95 %), Poisson p = {ce.p_value:.1g}")
    h = cmp[hot]
    lines.append(f"hot point: measured / predicted = {h.ratio[0]:.2g} [{h.ratio[1]:.2g}, {h.ratio[2]:.3g}]")
    collapsed = {t["params"]["weight_decay"]: sum(t["result"]["collapsed"]) for t in grid.tasks
                 if t["kind"] == "waiting" and t["params"]["lr"] == 0.35}
    lines.append("η = 0.35: runs at A = 0 (B₀) at the end, of 64: "
                 + ", ".join(f"γ = {w:g}: {n}" for w, n in collapsed.items()))
    return Report(lines, values={"ktab": ktab, "cmp": cmp, "by": by, "collapsed": collapsed})


#: The routes of §4's relapse count (forced sequences of one row or column).
RELAPSE_ROUTES = ("row0", "col1", "row1", "col0")


def relapse_report(grid) -> Report:
    """§4's k* rule: forced sequences that relapse (k works, k + 1 does not) and, per relapsing (cell, route) task,
    the k that move from "first" to "stable" and the medians. Values: ``pairs`` [(first, stable)], ``n_rel``,
    ``n_seq``."""
    ktasks = _tasks(grid, "kstar", f"the routes {RELAPSE_ROUTES}", lambda t: t["params"]["route"] in RELAPSE_ROUTES)
    n_seq = sum(len(t["result"]["monotone"]) for t in ktasks)
    relapsed = [t for t in ktasks if not all(t["result"]["monotone"])]
    n_rel = sum(m is False for t in relapsed for m in t["result"]["monotone"])
    lines = [f"{n_rel} of {n_seq} forced sequences relapse, in {len(relapsed)} of {len(ktasks)} (cell, route) tasks"]
    pairs = []
    for t in relapsed:
        p = t["params"]
        first = js.cell_kstar(grid, p["route"], problem=p.get("problem", "eps"), lr=p["lr"],
                              weight_decay=p["weight_decay"])
        stable = js.cell_kstar(grid, p["route"], problem=p.get("problem", "eps"), lr=p["lr"],
                               weight_decay=p["weight_decay"], key="kstar_stable")
        moved = [(a, b) for a, b in zip(first[1], stable[1]) if a != b]
        lines.append(f"  η = {p['lr']}, γ = {p['weight_decay']}, {p['route']}: first → stable {moved}; median "
                     f"{first[0]} → {stable[0]}")
        pairs.append((first, stable))
    return Report(lines, values={"pairs": pairs, "n_rel": n_rel, "n_seq": n_seq})


def least_routes_report(grid, by_hot, hot=HOT) -> Report:
    """§4's rarer routes: row 1 and column 0 (k*, p, E_k), and the diagonal route's k* and the predicted wait with
    it. ``by_hot``: the hot point's k* row (``kstar_table_report(...)["by"][hot]``).

    Values: ``least`` ({route: result}), ``kd`` (diagonal k*), ``E3`` (predicted wait, steps), ``c3`` (comparison)."""
    least = {t["params"]["route"]: t["result"] for t in _tasks(
        grid, "kstar", "routes row1 and col0 of the ε problem",
        lambda t: t["params"].get("problem", "eps") == "eps" and t["params"]["route"] in ("row1", "col0"))}
    lines = []
    for route, res in least.items():
        kk = int(np.median(res["kstar"]))
        lines.append(f"{route}: k* = {kk}, p = {res['p_route']:.3f}, Eₖ = {_g(run_waiting_time(kk, res['p_route']))} "
                     "steps")
    # a third route as likely as the reply's two: the diagonal (0,0), (1,1) — "(0,1) not sampled"
    kd = js.cell_kstar(grid, "avoid01", lr=hot[0], weight_decay=hot[1])[0]
    k0, k1 = by_hot.kstar_row0, by_hot.kstar_col1
    E3 = je.avoid_waiting_time({2: k0, 0: k1, 1: kd}, [1 / 3] * 3)
    lines += _wrap(f"diagonal route: k* = {kd}, p = 2/3; with it the predicted wait is {_g(E3)} steps instead of "
                 f"{_g(by_hot.predicted_either)}")
    c3 = js.compare_wait(grid.select("waiting", lr=hot[0], weight_decay=hot[1])[0]["jump_step"], 100_000, E3)
    return Report(lines, values={"least": least, "kd": kd, "E3": E3, "c3": c3})


def langevin_eps_report(grid, eps: float = 0.1) -> Report:
    """§4.2's ε table: per ε, dynamics and start, the time at rank ≤ 1 and the runs that went up; then, at ``eps``
    and the hot γ, the two minima's regularised losses and top curvatures.
    Values: ``le`` ({(ε, start, method): row}), ``minima`` and ``curvature`` ({"rank1", "rank2"}: loss, top
    Hessian eigenvalue of 𝓛_γ at that minimum)."""
    q_rows = langevin_eps_rows(grid)
    if not q_rows:
        raise ValueError("the grid has no langevin_eps rows at the hot γ")
    lines = ["  ε  dynamics  from the minimum (its rank)  time at rank ≤ 1  runs that went up"]
    lines += [f"{q.eps:3g}  {q.method:>8s}  {q.start:>16s} (rank {q.start_rank})   {q.frac_rank_le1[0]:.3f} ± "
              f"{q.frac_rank_le1[1]:.3f}     {q.went_up:2d}/{q.n_runs}" for q in q_rows]
    wd = EXP.weight_decay_hot
    minima = minima_losses(eps, wd)
    problem = epsilon_completion(eps)
    curvature = {"rank1": loss_hessian_top_eigenvalue(rank_one_minimum(eps, weight_decay=wd), problem, wd),
                 "rank2": loss_hessian_top_eigenvalue(start_minimum(eps, weight_decay=wd)[0], problem, wd)}
    lines += [f"ε = {eps:g}, γ = {wd:g}: regularised loss of the rank-1 minimum {minima['rank1']:.4f}, of the rank-2 "
              f"minimum {minima['rank2']:.4f};",
              f"  top curvature {curvature['rank1']:.2f} and {curvature['rank2']:.2f}"]
    return Report(lines, values={"le": {(q.eps, q.start, q.method): q for q in q_rows}, "minima": minima,
                                 "curvature": curvature})


def staircase_report(grid, factor: float) -> Report:
    """§4.1's staircase (equal row counts): the runs that jumped, the stored end-state labels, k* and the sampling
    probability per route, the samples before the jumps; then the waits predicted by the row/column routes and by
    the one-entry events (k* with one entry left out; −1: never) against the measured wait, within ``factor``.
    Values: ``summary``, ``attribution`` (samples per route), ``c_rows``, ``c_one`` (their
    :func:`~.jump_event_stats.compare_wait`), ``k_one`` ({entry: k*})."""
    runs = grid.select("staircase")
    if not runs:
        raise ValueError("the grid has no staircase task")
    sres, st = runs[0], staircase_summary(grid)
    att = js.sample_route_counts(grid, "staircase")
    e_rows = 1 / sum(1 / run_waiting_time(st.kstar[r], 0.5) for r in STAIRCASE_ROUTES)
    k_one = {e: js.cell_kstar(grid, f"avoid{i}{j}", problem="staircase")[0]
             for e, (i, j) in enumerate(STAIRCASE_LEFT_OUT)}
    e_one = je.avoid_waiting_time({e: k for e, k in k_one.items() if k > 0}, [1 / len(STAIRCASE_LEFT_OUT)]
                                  * len(STAIRCASE_LEFT_OUT))
    c_rows = js.compare_wait(sres["jump_step"], sres["n_steps"], e_rows, factor=factor)
    c_one = js.compare_wait(sres["jump_step"], sres["n_steps"], e_one, factor=factor)
    lines = [f"staircase: {st.jumped}/{st.n_runs} runs jumped",
             f"stored end-state labels (not routes): {st.routes}",
             f"k* per route: {st.kstar}",
             f"sampling probability per route: {st.p_route}",
             f"samples before the jumps: {att['pre']}",
             f"k* with one entry left out: {k_one} (−1: never)",
             f"measured wait {c_one.measured[0]:.3g} [{c_one.measured[1]:.3g}, {c_one.measured[2]:.3g}] steps",
             f"row/column routes predict ≈ {e_rows:.2g} ({c_rows.verdict});",
             f"one-entry events predict {e_one:.3g} ({c_one.verdict}, measured/predicted {c_one.ratio[0]:.2g} "
             f"[{c_one.ratio[1]:.2g}, {c_one.ratio[2]:.2g}])"]
    return Report(lines, values={"summary": st, "attribution": att, "c_rows": c_rows, "c_one": c_one,
                                 "k_one": k_one})


def rank2_lower_report(grid, lr: float = HOT[0]) -> Report:
    """§4.2's (ε, γ) = RANK2_LOWER, where the rank-2 minimum is the lower: the two minima's losses, η λ_max at the
    rank-1 minimum, and per start and dynamics the time at rank ≤ 1 and the runs that went up.
    Values: ``lo`` ({(start, method): row}), ``m_lo`` (the minima's losses)."""
    eps_lo, wd_lo = RANK2_LOWER
    lo = {(q.start, q.method): q for q in langevin_eps_rows(grid, weight_decay=wd_lo)}
    if not lo:
        raise ValueError(f"the grid has no langevin_eps rows at γ = {wd_lo}")
    m_lo = minima_losses(eps_lo, wd_lo)
    lam_lo = loss_hessian_top_eigenvalue(rank_one_minimum(eps_lo, weight_decay=wd_lo), epsilon_completion(eps_lo),
                                         wd_lo)
    lines = [f"ε = {eps_lo}, γ = {wd_lo}: regularised loss of the rank-1 minimum {m_lo['rank1']:.4f}, of the rank-2 "
             f"minimum {m_lo['rank2']:.4f}",
             f"η λₘₐₓ at the rank-1 minimum (η = {lr:g}): {lr * lam_lo:.2f}"]
    lines += [f"   {method:>8} from the {start} minimum: time at rank ≤ 1 {q.frac_rank_le1[0]:.3f} ± "
              f"{q.frac_rank_le1[1]:.3f}; runs that went up {q.went_up}/{q.n_runs}"
              for (start, method), q in lo.items()]
    return Report(lines, values={"lo": lo, "m_lo": m_lo})


def task_kinds_report(grid) -> Report:
    """§5's grid: its tasks counted by kind (in the grid's order) and their task time."""
    if not grid.tasks:
        raise ValueError("the grid has no tasks")
    kinds: dict[str, int] = {}
    for t in grid.tasks:
        kinds[t["kind"]] = kinds.get(t["kind"], 0) + 1
    lines = _wrap(f"{len(grid.tasks)} tasks by kind: "
                  + ", ".join(f"{kind.replace('_', ' ')} {n}" for kind, n in kinds.items()))
    lines += _wrap(f"the grid's tasks took {grid.task_seconds / 60:.1f} minutes of task time when it was made "
                   "(2 workers, shared machine)")
    return Report(lines, values={"kinds": kinds})


def hazard_report(grid, label: Callable, hot=HOT) -> Report:
    """Appendix A's hazards: the stored adaptive-vs-EM check, per (η, γ, integrator, step) the stopped paths and
    their rate per 1000 t, the jumps and mean wait; EM over adaptive rates; the stall norms; the mean wait at η/4
    over η/64. ``label(row)``: the integrator's name (``ui.sde_noise.hazard_label``).

    Values: ``haz`` (rows), ``by`` ({(η, γ, integrator, m): row}), ``norms`` (``blowup.escape_norms``)."""
    check = _by_broken(_tasks(grid, "adaptive_vs_em", "the adaptive-vs-EM check",
                              lambda t: not t["params"].get("follow")), "adaptive_vs_em", (None, "noise_at_h_max"))
    lines = ["the adaptive step against fine-step EM: max |z| over ‖θ‖², A₀₁, A₁₀ (pass: ≤ 4)"]
    for name, c in (("adaptive step", check[None]),
                    ("broken: noise ignores the shortened step", check["noise_at_h_max"])):
        d = c["details"]
        lines.append(f"{name:>42}: max |z| = {c['measured']:.1f}, rule shortened {d['reduced_fraction']:.0%} of "
                     f"steps -> {'PASS' if c['passed'] else 'FAIL'}")
    haz = bu.hazard_rows(grid)
    by = {(h.lr, h.weight_decay, h.integrator, h.m): h for h in haz}
    width = max(len(label(h)) for h in haz)
    lines.append(f"{'':{width + 4}s}stop.  per 1000 t [95 %]  jumped  mean wait [95 %]   ‖θ‖≥10 / back")
    setting = None
    for h in haz:
        if (h.lr, h.weight_decay) != setting:
            setting = (h.lr, h.weight_decay)
            lines.append(f"η = {h.lr}, γ = {h.weight_decay}")
        esc = f"{h.escaped:2d} / {h.escaped_back:2d}" if h.escaped is not None else ""
        w = _iv(h.wait) if h.jumped else "none"
        lines.append(f"  {label(h):{width}s}  {h.events:2d}/{h.n_runs}  {h.rate[0]:.3f} [{h.rate[1]:.3f}, "
                     f"{h.rate[2]:.3f}]  {h.jumped:6d}  {w:19s}  {esc}".rstrip())

    def row(*key):
        try:
            return by[key]
        except KeyError:
            raise ValueError(f"the grid has no hazard row (η, γ, integrator, m) = {key}") from None

    for lr, weight_decay in (hot, WEAKER_DECAY):           # the adaptive step stops fewer paths, at every step size
        for m in bu.EM_STEPS:
            a, b = row(lr, weight_decay, "EM", m), row(lr, weight_decay, "adaptive", m)
            q = bu.rate_ratio(a.events, a.exposure, b.events, b.exposure)
            lines.append(f"η = {lr}, γ = {weight_decay}, m = {m}: EM / adaptive rate of stopped paths {q[0]:.1f} "
                         f"[{q[1]:.1f}, {q[2]:.1f}]")
    norms = bu.escape_norms(grid)
    lines.append(f"stalls came at ‖θ‖ {norms['stall_min']:.1f}–{norms['stall_max']:.1f}; paths that did not stall "
                 f"reached up to {norms['returned_max']:.1f} (the minima: "
                 f"{np.sqrt(start_minimum(weight_decay=0.027)[0].norm_sq()[0]):.1f})")
    # the step does not change the adaptive integrator's answer; fixed-step EM's wait does change at (0.3, 0.02)
    for lr, weight_decay in (hot, COOLER_STEP, WEAKER_DECAY):
        for integrator in ("adaptive", "EM"):
            a, b = row(lr, weight_decay, integrator, 4), row(lr, weight_decay, integrator, 64)
            q = bu.mean_ratio(a.jumped, a.wait[0], b.jumped, b.wait[0])
            lines.append(f"η = {lr}, γ = {weight_decay}, {integrator:8s}: mean wait at η/4 over η/64 {q[0]:.2f} "
                         f"[{q[1]:.2f}, {q[2]:.2f}]")
    return Report(lines, values={"haz": haz, "by": by, "norms": norms})


def continuation_report(grid) -> Report:
    """Appendix A's continuations: per stored state, how many of its 16 fresh-noise continuations each integrator
    stopped again, and over all states with 95 % intervals. Values: ``c`` (the continuation task's result)."""
    task = _tasks(grid, "continuation", "the continuations")[0]
    c, per = task["result"], int(task["params"]["n_cont"])
    lines = [f"state {lead:.3f} time units before its stop: EM stopped again {e:2d}/{per}, adaptive step {a:2d}/{per}"
             for lead, e, a in zip(c["lead"], c["em_blew"], c["adaptive_blew"])]
    n = per * c["n_states"]
    pe, pa = wilson(sum(c["em_blew"]), n), wilson(sum(c["adaptive_blew"]), n)
    lines += _wrap(f"all states: EM {sum(c['em_blew'])}/{n} [{pe[1]:.2f}, {pe[2]:.2f}], adaptive "
                   f"{sum(c['adaptive_blew'])}/{n} [{pa[1]:.2f}, {pa[2]:.2f}]; largest residual of a state "
                   f"{_g(max(c['state_residual']))} (the rule: 10⁶)")
    return Report(lines, values={"c": c})


def follow_report(follow, grid) -> Report:
    """§3.1's followed paths: per followed ensemble (``spikes.follow_groups(grid)``) how its runs ended, jumped,
    returned and collapsed, its time in B₁ and its largest ‖θ‖; then the follow mode's stored check against
    fine-step EM (and the broken scheme that must fail). Values: ``check`` ({broken: stored result})."""
    check = _by_broken(_tasks(grid, "adaptive_vs_em", "the follow mode's check", lambda t: t["params"].get("follow")),
                       "follow-mode adaptive_vs_em", (None, "noise_at_h_max"))
    if not follow:
        raise ValueError("no followed ensembles (spikes.follow_groups(grid))")
    lines = _wrap("Every path followed to its horizon (adaptive step, follow mode): how the runs ended, jumps and "
                  "their mean first time [95 %], returns to rank 2, collapses to A = 0, time in B₁ by its rank "
                  "test (± s.e.), largest ‖θ‖")
    lines.append(f"{'η, γ':10s} {'h ≤':5s} {'ρ':5s} {'t ≤':>5s} {'seeds':5s} {'end':6s} {'jumped':6s} "
                 f"{'mean first time':20s} {'ret.':>4s} {'coll.':>5s} {'time in B₁':11s} {'‖θ‖':>6s}")
    for g in follow:
        s = g.summary
        lines.append(f"{g.lr:g}, {g.weight_decay:<5g} η/{g.m:<3d} {g.rho:<5g} {g.t_max:5.0f} "
                     f"{'fresh' if g.fresh else 'grid':5s} {s.events.get('none', 0):2d}/{s.n_runs:<3d} "
                     f"{s.jumped:2d}/{s.n_runs:<3d} {_iv(s.wait):20s} {s.returned:4d} {s.collapsed:5d} "
                     f"{s.frac_rank1[0]:.2f} ± {s.frac_rank1[1]:.2f} {_g(s.max_norm):>6s}")
    lines.append("end: runs that reached their horizon; ret.: returned to rank 2; coll.: collapsed to A = 0")
    for name, c in (("follow mode against fine-step EM", check[None]),
                    ("broken: noise that ignores the shortened step", check["noise_at_h_max"])):
        lines.append(f"{name:>46}: max |z| = {c['measured']:.1f} (pass: ≤ 4) -> "
                     f"{'PASS' if c['passed'] else 'FAIL'}")
    return Report(lines, values={"check": check})


def spikes_report(follow) -> Report:
    """Appendix B's spike tables of the followed ensembles: per ensemble and level b, the spikes from ‖θ‖ < 5 that
    reach b per 1000 time units (exact 95 %) and rate × (b − 5); then their shapes (duration and integrator steps,
    median / largest)."""
    if not follow:
        raise ValueError("no followed ensembles (spikes.follow_groups(grid))")
    lines = _wrap("Spikes: excursions from ‖θ‖ < 5 that reach ‖θ‖ ≥ b, per 1000 time units [exact 95 %], and "
                  "rate\u00a0×\u00a0(b\u00a0−\u00a05) (flat in b if ‖θ‖ is a martingale far out)")
    for g in follow:
        lines.append(f"{g.label}")
        lines.append("       b  spikes  per 1000 t [95 %]              × (b − 5)")
        lines += [f"  {r.level:6g}  {r.count:6d}  {_iv(r.rate):26s}  {_g(r.rate_x_level[0]):>8s}" for r in g.spikes]
    lines += [""] + _wrap("Spike shapes (closed spikes reaching b): how many, duration in time units and integrator "
                          "steps, median / largest")
    for g in follow:
        lines.append(f"{g.label}")
        lines.append("       b  spikes  duration median / largest  steps median / largest")
        lines += [f"  {s.level:6g}  {s.count:6d}  {s.duration_median:8.2g} / {s.duration_max:<14.2g}  "
                  f"{s.steps_median:6.0f} / {s.steps_max}" for s in g.shapes] or ["  none"]
    return Report(lines, values={})


#: The controls' column names as the tables print them (no ASCII subscript).
_CONTROL_COLUMNS = {"min w_k": "min wₖ"}


def controls_report(ctl) -> Report:
    """§3.2's controls (``controls.report(grid.tasks, grid)``, a :class:`~.controls.ControlReport`): the stability
    boundary of the Bernoulli control, then its three tables (one step's weights; what the runs did; the rate ratio
    at T = 0.15), each split into parts that fit :data:`LINE_WIDTH` and repeat the law, η and S."""
    tables = getattr(ctl, "tables", None)
    if not tables or set(tables) != {"steps", "runs", "fixed_T"}:
        raise ValueError("controls_report needs a ControlReport with the tables steps, runs and fixed_T")
    lines = _wrap(f"λₘₐₓ = {ctl.lam_max:.3f} at the rank-2 minimum: the Bernoulli control's largest step (every entry "
                  f"sampled, total weight Nη) is stable for η < {ctl.largest_stable_lr:.3f}, at every S")
    lines += _wrap(f"control runs on the grid's seeds that differ from the grid's: {ctl.mismatches}")
    b = ctl.grid_rows.get(("bernoulli", 0.3, 1))
    if b is not None:
        lines += _wrap(f"Bernoulli, η = 0.3, S = 1: {b.jumped_fit}/{b.n_runs} runs reached a rank-1 fit, "
                       f"{b.fit_then_collapsed} of them then A = 0")
    for name, key in (("steps", 3), ("runs", 4), ("fixed_T", 1)):
        t = tables[name]
        lines += [""] + _table(t.title, [_CONTROL_COLUMNS.get(c, c) for c in t.columns], t.rows, key=key)
    return Report(lines, values={})


def explosion_report(rays, shares, far) -> Report:
    """§3.1's explosion numbers: the growth exponents of the drift's pull and of the noise along each ray
    (``explosion.khasminskii_rays()``), the noise's transverse share f at 100× each point
    (``explosion.transverse_share_rows()``), and f_eff with its scale exponent β along paths at large norm
    (``explosion.stored_infinity(grid)``)."""
    if not rays or not shares:
        raise ValueError("explosion_report needs the rays and the transverse-share rows")
    lines = ["growth exponents along rays through each point (the drift's pull, the noise):"]
    lines += _wrap("; ".join(f"{r.label} ({r.pull_exponent:.1f},\u00a0{r.noise_exponent:.1f})" for r in rays),
                   indent="  ")
    lines.append("the noise's transverse share f at 100× each point:")
    lines += _wrap("; ".join(f"{r['label']} {r['f']:.2f}" for r in shares if r["scale"] == 100), indent="  ")
    lines.append(f"at large norm, along {far.settings['n_paths']} paths: f (averaged) = {far.f_eff:.2f} ± "
                 f"{far.f_se:.2f}, scale exponent β ≈ {far.beta_eff:.2f}")
    return Report(lines, values={})
