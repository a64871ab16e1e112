"""The claims behind each section of Notebook 05, as checks of its experiments' results.

Each function takes the results one section of the notebook draws or prints (the stored grid of
:mod:`.experiments`, its summaries, the blow-up rows of :mod:`.blowup`, the jump-event comparisons of
:mod:`.jump_event_stats`) and returns the :class:`~symsgd_core.core.checking.CheckResult` rows the notebook asserts
with :func:`~symsgd_core.ui.assert_claims`. Every row keeps the notebook's bound as it was stated: exact facts
(ranks, counts, verdicts, "never returns") are counts with tolerance 0; an inequality between two measured values
has the other value as its tolerance, a strict one (``a < b``) the nearest float beyond it, so equality fails as
it did. A claim that measured nothing (no row, no run, an empty list, NaN) fails: it reports a NaN measurement.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from ..core.checking import CheckResult, make_result
from ..core.stats import wilson
from .blowup import EM_STEPS, mean_ratio, rate_ratio
from .experiments import COOLER_STEP, HOT, SETTINGS, WEAKER_DECAY
from .jump_event import run_waiting_time

__all__ = [
    "ADAPTIVE_LABELS", "FIT_FACTOR", "HOT", "OVER_PREDICTED", "RATE_PRECISION", "SILENT", "SPIKE_DURATION_BOUND",
    "UNDER_PREDICTED", "blowup_claims", "compare_point_claims", "comparison_claims", "continuation_claims",
    "control_claims", "exercise_claims", "follow_claims", "passage_claims", "rank2_lower_claims",
    "grid_claims", "invariance_claims", "jump_event_claims",
    "kstar_rule_claims", "langevin_eps_claims", "route_sample_claims", "run_waiting_claims", "staircase_claims",
    "step_size_claims", "stored_check", "stored_check_claims", "third_route_claims",
]

#: The adaptive-step SDE row compared with SGD at each (η, γ) of §3.1.
ADAPTIVE_LABELS = {HOT: "SDE adaptive, h ≤ η/16, ρ = 0.05",
                   COOLER_STEP: "SDE adaptive, h ≤ η/16, ρ = 0.05 (t ≤ 3000)",
                   WEAKER_DECAY: "SDE adaptive, h ≤ η/16, ρ = 0.05 (t ≤ 3000)"}
#: §4's verdicts, stated per (η, γ) cell: the event's prediction agrees with SGD because neither jumps ...
SILENT = ((0.2, 0.02), (0.2, 0.0235), (0.25, 0.02), (0.25, 0.0235), (0.3, 0.02))
#: ... it predicts more jumps than SGD makes ...
OVER_PREDICTED = ((0.2, 0.027), (0.25, 0.027), (0.3, 0.027), (0.35, 0.027))
#: ... SGD jumps more often than predicted.
UNDER_PREDICTED = ((0.3, 0.0235), (0.35, 0.02), (0.35, 0.0235))

NAN = float("nan")
EXACT = "exact count"
CI95 = "the other value's exact 95 % interval end"


# ----------------------------------------------------------------------------------------------- row builders
def _float(x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return NAN
    return v


def _count(name: str, claim: str, n_wrong, source: str = EXACT) -> CheckResult:
    """An exact fact: ``n_wrong`` (the cases against the claim; NaN: nothing measured) must be 0."""
    return make_result(f"sde_noise.{name}", claim, _float(n_wrong), 0.0, source)


def _wrong(flags: Iterable) -> float:
    """How many of ``flags`` are False; NaN if there are none (a claim about nothing fails)."""
    flags = [bool(f) for f in flags]
    return float(sum(not f for f in flags)) if flags else NAN


def _le(name: str, claim: str, measured, bound, source: str) -> CheckResult:
    """``measured ≤ bound``."""
    return make_result(f"sde_noise.{name}", claim, _float(measured), _float(bound), source, "<=")


def _lt(name: str, claim: str, measured, bound, source: str) -> CheckResult:
    """``measured < bound`` (the tolerance is the float just below ``bound``)."""
    b = _float(bound)
    return make_result(f"sde_noise.{name}", claim, _float(measured), np.nextafter(b, -math.inf),
                       f"{source} (strict)", "<=")


def _ge(name: str, claim: str, measured, bound, source: str) -> CheckResult:
    """``measured ≥ bound``."""
    return make_result(f"sde_noise.{name}", claim, _float(measured), _float(bound), source, ">=")


def _gt(name: str, claim: str, measured, bound, source: str) -> CheckResult:
    """``measured > bound`` (the tolerance is the float just above ``bound``)."""
    b = _float(bound)
    return make_result(f"sde_noise.{name}", claim, _float(measured), np.nextafter(b, math.inf),
                       f"{source} (strict)", ">=")


def _nanmin(values) -> float:
    v = np.asarray(list(values), dtype=float)
    return float(np.min(v)) if v.size else NAN  # np.min propagates a NaN: one unmeasured case fails the row


def _nanmax(values) -> float:
    v = np.asarray(list(values), dtype=float)
    return float(np.max(v)) if v.size else NAN


# ----------------------------------------------------------------------------------------------- §1, §3.1 stored checks
def stored_check(result: Mapping) -> CheckResult:
    """A check stored in the grid (a :class:`CheckResult` as a dict) back as a :class:`CheckResult`; it passes only
    if it passed when the grid was made and its measurement is finite."""
    passed = bool(result["passed"]) and math.isfinite(_float(result["measured"]))
    return CheckResult(result["name"], result["claim"], _float(result["measured"]), _float(result["tolerance"]),
                       result["relation"], result["tolerance_source"], passed, {})


def stored_check_claims(grid, kind: str, broken: str, what: str, follow: bool = False) -> list[CheckResult]:
    """§1 (``kind="weak_order"``, ``broken="biased"``) and §3.1 (``"adaptive_vs_em"``, ``"noise_at_h_max"``; with
    ``follow``, the follow mode's run of that check): the stored check passed on the correct integrator, and failed
    on the broken one (``what`` names the breakage)."""
    found = {t["params"].get("broken"): t["result"] for t in grid.tasks
             if t["kind"] == kind and bool(t["params"].get("follow", False)) == follow}
    if None not in found:
        raise KeyError(f"the grid has no {kind!r} task on the correct integrator (follow={follow})")
    bad = found.get(broken)
    tag = f"{kind}.follow" if follow else kind
    return [stored_check(found[None]),
            _count(f"{tag}.broken_caught", f"the same check fails when fed {what} (a check that can fail)",
                   NAN if bad is None else float(stored_check(bad).passed))]


# ----------------------------------------------------------------------------------------------- §3 live comparison
def compare_point_claims(point) -> list[CheckResult]:
    """§3's live figure (a :class:`~.experiments.ComparePoint` at the hot default settings): every run starts at
    rank 2; no SDE or SGD run comes back up; more SDE runs jump per run than SGD runs; fixed-step EM blows up."""
    s = point.summaries
    sde, sgd = s["sde"], s["sgd"]
    start = np.concatenate([np.asarray(point.sde.rank)[:, 0], np.asarray(point.sgd.rank)[:, 0]])
    per_run = sgd.jumped * point.sde.n_runs / point.sgd.n_runs if point.sgd.n_runs else NAN
    return [
        _count("live.start_rank2", "every SDE and SGD run starts at rank 2 (runs that do not)",
               float(np.sum(start != 2)) if start.size else NAN),
        _count("live.sde_no_return", "no SDE run comes back to rank 2 after its jump (returns)", sde.returned),
        _count("live.sgd_no_return", "no SGD run comes back to rank 2 after its jump (returns)", sgd.returned),
        _gt("live.sde_jumps_more", "more SDE runs jump than SGD runs, per run, in the same time (SDE runs that jumped "
            "against SGD's count scaled to the SDE's runs)", sde.jumped, per_run, "SGD's jumps × SDE runs / SGD runs"),
        _gt("live.em_blows_up", "fixed-step Euler–Maruyama blows up in some SDE run (runs that blew up)", sde.diverged,
            0, EXACT),
        _count("live.sgd_bounded", "no SGD run blows up (runs that blew up)", sgd.diverged),
    ]


# ----------------------------------------------------------------------------------------------- §3.1 the answer
def comparison_claims(rows: Mapping) -> list[CheckResult]:
    """§3.1 from the stored grid's rows ``{(η, γ, label): EnsembleSummary}``
    (:func:`~.experiments.comparison_rows`): the SDE jumps, faster than SGD, and never returns; the collapse to
    A = 0 is the fixed step's; the SDE's long run is in B₁, and the adaptive step's stall rule stops most runs (a
    level crossing, :func:`follow_claims`); Langevin is never in B₁."""
    R = rows
    sgd, sde = R[(*HOT, "SGD")], R[(*HOT, ADAPTIVE_LABELS[HOT])]
    out = [
        _lt("hot.sde_faster", "hot point: the SDE's 95 % interval of the mean first time at rank ≤ 1 ends below SGD's "
            "(SDE upper end)", sde.wait[2], sgd.wait[1], "SGD's lower end, " + CI95),
        _gt("hot.ratio_over_10", "hot point: SGD's mean first time at rank ≤ 1 over the SDE's exceeds 10", sgd.wait[0]
            / sde.wait[0], 10, "the notebook's stated factor 10"),
        _gt("hot.ratio_ends_over_6", "hot point: the same ratio from the interval ends (SGD's lower / SDE's upper) "
            "exceeds 6", sgd.wait[1] / sde.wait[2], 6, "the notebook's stated factor 6"),
    ]
    for (lr, weight_decay), factor in ((COOLER_STEP, 30), (WEAKER_DECAY, 5)):
        g, d = R[(lr, weight_decay, "SGD")], R[(lr, weight_decay, ADAPTIVE_LABELS[(lr, weight_decay)])]
        out += [_le(f"cool_{lr}_{weight_decay}.sgd_rare", f"η = {lr}, γ = {weight_decay}: at most one SGD run jumps",
                    g.jumped, 1, EXACT),
                _ge(f"cool_{lr}_{weight_decay}.sde_faster",
                    f"η = {lr}, γ = {weight_decay}: the SDE is at least {factor}× faster than "
                    "SGD from the interval ends (SGD's lower / SDE's upper)", g.wait[1] / d.wait[2], factor,
                    f"the notebook's stated factor {factor}")]
    sde_rows = [s for k, s in R.items() if k[2].startswith("SDE")]
    out.append(_count("sde.never_returns", "no SDE run of any row comes back to rank 2 after its jump (returns)",
                      sum(s.returned for s in sde_rows) if sde_rows else NAN))
    stay = R[(*COOLER_STEP, ADAPTIVE_LABELS[COOLER_STEP])]
    out += [
        _gt("stay.most_jump", "η = 0.2, γ = 0.027, adaptive step: more than half the runs jump (Wilson 95 % lower end)",
            wilson(stay.jumped, stay.n_runs)[1], 0.5, "half the runs"),
        _count("stay.no_return_no_collapse", "η = 0.2, γ = 0.027, adaptive step: no run returns or collapses to A = 0 "
               "(returns + collapses)", stay.returned + stay.collapsed),
        _le("stay.few_stall", "η = 0.2, γ = 0.027, adaptive step: its rules stop at most 2 runs (stall or residual)",
            stay.diverged, 2, EXACT),
    ]
    for label in ("SDE, dt = η/4", "SDE, dt = η/16"):
        e = R[(*HOT, label)]
        out.append(_count(f"collapse.fixed_step_m{label.split('/')[-1]}", f"hot point, {label}: every run bounded "
                          "at t = 12 000 is at A = 0 (bounded runs not at A = 0)",
                          abs(e.bounded_end - e.collapsed) if e.bounded_end > 0 else NAN))
    adaptive = [s for k, s in R.items() if k[2].startswith("SDE") and "adaptive" in k[2]]
    out.append(_count("collapse.adaptive_none", "no run of the adaptive step with its stall rule ends at A = 0 (the "
                      "rule stops the paths that would: §3.1's followed paths collapse; runs at A = 0)",
                      sum(s.collapsed for s in adaptive) if adaptive else NAN))
    hist, fit = sum(sde.log10_s2_hist), (None if sde.log10_s2_hist_fit is None else sum(sde.log10_s2_hist_fit))
    out += [
        _count("hot.rank1_fit", "hot point, adaptive step: every bounded record of the second half keeps a rank-1 fit "
               "(records without one)", abs(hist - fit) if fit is not None and hist > 0 else NAN),
        _lt("hot.in_B1", "hot point, adaptive step: the 95 % quantile of log10 s₂ over the rank-1 fits is below −15 "
            "(s₂ at round-off: in B₁, rank sense)", sde.log10_s2_quantile(0.95, fit_only=True), -15,
            "float64 round-off of s₂ (≈ 10⁻¹⁶·s₁)"),
        _gt("hot.most_stall", "hot point, adaptive step: its stall rule stops more than half the runs by t = 12 000 "
            "(Wilson 95 % lower end; a stall is a first passage over ‖θ‖ ≈ 12–17, not an escape: §3.1)",
            wilson(sde.diverged, sde.n_runs)[1], 0.5, "half the runs"),
    ]
    lang = [R[(lr, weight_decay, f"Langevin {f}× τ_match")].frac_B1[0] for lr, weight_decay in SETTINGS
            for f in ("1", "10")]
    lang1, lang10 = R[(*HOT, "Langevin 1× τ_match")], R[(*HOT, "Langevin 10× τ_match")]
    out += [
        _le("langevin.never_B1", "Langevin (1× and 10× the matched τ, all three settings) is never in B₁ "
            "(largest fraction of records in B₁)", _nanmax(lang), 0.0, "exact: no record"),
        _gt("langevin.jumps", "hot point: Langevin at 1× the matched τ jumps in some run (runs)", lang1.jumped, 0,
            EXACT),
        _gt("langevin.not_low", "hot point: Langevin's median log10 s₂ at 1× the matched τ stays above −8 (not at "
            "round-off)", lang1.log10_s2_median, -8, "the notebook's stated level"),
        _gt("langevin.returns", "hot point: at 10× the matched τ more than half the jumped Langevin runs return "
            "(returns against half the jumped)", lang10.returned, lang10.jumped / 2 if lang10.jumped else NAN,
            "half the jumped"),
    ]
    return out


# ----------------------------------------------------------------------------------------------- §3.1 blow-ups
def blowup_claims(hazard_rows, norms: Mapping) -> list[CheckResult]:
    """§3.1's blow-ups (:func:`~.blowup.hazard_rows`, :func:`~.blowup.escape_norms`): the adaptive step
    lowers the blow-up rate at every step; what remains at the hot point is about 0.1 per 1000 t; paths stall at
    ‖θ‖ 12–18; the step does not change the adaptive integrator's answer; fixed-step EM's does at (0.3, 0.02)."""
    by = {(h.lr, h.weight_decay, h.integrator, h.m): h for h in hazard_rows}

    def ratio(a, b):
        return rate_ratio(a.events, a.exposure, b.events, b.exposure)

    lows = [ratio(by[(lr, weight_decay, "EM", m)], by[(lr, weight_decay, "adaptive", m)])[1] for lr,
            weight_decay in (HOT, WEAKER_DECAY)
            for m in EM_STEPS]
    cool_a = [by[(*COOLER_STEP, "adaptive", m)].events for m in EM_STEPS]
    cool_e = [by[(*COOLER_STEP, "EM", m)].events for m in EM_STEPS]
    hot_rates = [by[(*HOT, "adaptive", m)].rate for m in EM_STEPS]
    waits, rates = [], []
    for lr, weight_decay in SETTINGS:
        a, b = by[(lr, weight_decay, "adaptive", 4)], by[(lr, weight_decay, "adaptive", 64)]
        waits.append(mean_ratio(a.jumped, a.wait[0], b.jumped, b.wait[0]))
        if a.events and b.events:
            rates.append(ratio(a, b))
    a, b = by[(*WEAKER_DECAY, "EM", 4)], by[(*WEAKER_DECAY, "EM", 64)]
    em_wait = mean_ratio(a.jumped, a.wait[0], b.jumped, b.wait[0])
    return [
        _gt("blowup.adaptive_lowers_rate", "η = 0.3, γ = 0.027 and 0.02, every step: EM's blow-up rate over the "
            "adaptive step's exceeds 2 (smallest 95 % lower end)", _nanmin(lows), 2, "the notebook's stated factor 2"),
        _le("blowup.cool_adaptive", "η = 0.2, γ = 0.027: the adaptive step blows up at most twice at every step "
            "(most blow-ups)", _nanmax(cool_a), 2, EXACT),
        _gt("blowup.cool_em", "η = 0.2, γ = 0.027: fixed-step EM blows up more than twice at every step (fewest "
            "blow-ups)", _nanmin(cool_e), 2, EXACT),
        _le("blowup.hot_rate_low", "hot point, adaptive step, every accuracy: 0.1 blow-ups per 1000 t is inside the "
            "95 % interval (largest lower end)", _nanmax(r[1] for r in hot_rates), 0.1, "the stated rate 0.1"),
        _ge("blowup.hot_rate_high", "hot point, adaptive step, every accuracy: 0.1 blow-ups per 1000 t is inside the "
            "95 % interval (smallest upper end)", _nanmin(r[2] for r in hot_rates), 0.1, "the stated rate 0.1"),
        _ge("stall.min_norm", "stalled adaptive paths reached ‖θ‖ ≥ 12 (smallest)", norms["stall_min"], 12,
            "the stated range 12–18"),
        _le("stall.max_norm", "stalled adaptive paths reached ‖θ‖ ≤ 18 (largest)", norms["stall_max"], 18,
            "the stated range 12–18"),
        _gt("stall.returned_norm", "some path that did not stall went beyond ‖θ‖ = 12 (largest)",
            norms["returned_max"], 12, "the stated range's lower end"),
        _le("adaptive.wait_step_free_lo", "adaptive step, all three settings: 1 is inside the 95 % interval of the "
            "mean wait at η/4 over η/64 (largest lower end)", _nanmax(q[1] for q in waits), 1, "ratio 1: no change"),
        _ge("adaptive.wait_step_free_hi", "adaptive step, all three settings: the same, smallest upper end",
            _nanmin(q[2] for q in waits), 1, "ratio 1: no change"),
        _le("adaptive.rate_step_free_lo", "adaptive step, where both steps blow up: 1 is inside the 95 % interval of "
            "the blow-up rate at η/4 over η/64 (largest lower end)", _nanmax(q[1] for q in rates), 1,
            "ratio 1: no change"),
        _ge("adaptive.rate_step_free_hi", "adaptive step, where both steps blow up: the same, smallest upper end",
            _nanmin(q[2] for q in rates), 1, "ratio 1: no change"),
        _lt("em.step_changes_wait", "η = 0.3, γ = 0.02: fixed-step EM at η/4 jumps faster than at η/64 (95 % upper "
            "end of the mean-wait ratio)", em_wait[2], 1, "ratio 1: no change"),
    ]


# ----------------------------------------------------------------------------------------------- §3.1 followed paths
#: The longest spike notebook 05 states ("a spike lasts at most 10⁻⁴ time units", the reviews' 10⁻⁶–10⁻⁴).
SPIKE_DURATION_BOUND = 1e-4


def follow_claims(groups, sgd_rows: Mapping) -> list[CheckResult]:
    """§3.1 with every path followed to its horizon (:func:`~.spikes.follow_groups`; ``sgd_rows``: the comparison
    rows ``{(η, γ, label): EnsembleSummary}``): no path ends before its horizon and none returns to rank 2, in every
    followed ensemble; at the hot point the SDE jumps faster than SGD, every spike above ‖θ‖ = 10 comes back below
    the base within 10⁻⁴ time units, some go beyond 1000 and come back, collapses to A = 0 are rare, the runs spend
    most of their time in B₁ by its rank test; the spike rate and the mean wait do not change with the accuracy
    (t ≤ 3000) or with fresh seeds."""
    out = []
    for g in groups:
        tag = (f"follow.{g.lr:g}_{g.weight_decay:g}.m{g.m}{'.fresh' if g.fresh else ''}"
               f"{'.short' if g.t_max < 12_000 else ''}")
        s = g.summary
        out += [_count(f"{tag}.followed", f"{g.label}: every path reaches its horizon (paths ended before it: cap, "
                       "non-finite or budget)", s.n_runs - s.events.get("none", 0) if s.n_runs else NAN),
                _count(f"{tag}.no_return", f"{g.label}: no run comes back to rank 2 after its jump (returns)",
                       s.returned if s.jumped else NAN)]
    main = {(g.lr, g.weight_decay): g for g in groups if g.t_max >= 12_000 and not g.fresh}
    hot = main[HOT]
    sgd = sgd_rows[(*HOT, "SGD")]
    s = hot.summary
    top = {r.level: r for r in hot.spikes}
    longest = max((x.duration_max for x in hot.shapes), default=NAN)
    out += [
        _lt("follow.hot.faster_than_sgd", "hot point, followed: the SDE's 95 % interval of the mean first time at "
            "rank ≤ 1 ends below SGD's (SDE upper end)", s.wait[2], sgd.wait[1], "SGD's lower end, " + CI95),
        _count("follow.hot.spikes_return", "hot point, followed: every spike above ‖θ‖ = 10 came back below the base "
               "before the horizon (spikes still open)", top[10.0].count - top[10.0].returned if top[10.0].count
               else NAN),
        _le("follow.hot.spikes_short", "hot point, followed: the longest spike lasts at most 10⁻⁴ time units",
            longest, SPIKE_DURATION_BOUND, "the stated bound"),
        _gt("follow.hot.beyond_1000", "hot point, followed: some spike went beyond ‖θ‖ = 1000 (and came back: above)",
            top[1000.0].count, 0, EXACT),
        _gt("follow.hot.collapses_happen", "hot point, followed: some runs reach A = 0 (runs)", s.collapsed, 0, EXACT),
        _gt("follow.hot.in_B1_rank", "hot point, followed: the runs spend more than 90 % of their time in B₁ by its "
            "rank test (mean − 2 s.e.)", s.frac_rank1[0] - 2 * s.frac_rank1[1], 0.9, "the stated 90 %"),
    ]
    fresh = next((g for g in groups if (g.lr, g.weight_decay) == HOT and g.fresh), None)
    both = [hot.summary] + ([fresh.summary] if fresh is not None else [])
    out.append(_lt("follow.hot.collapses_few", "hot point, followed, both seed sets: fewer than 10 % of the runs reach "
                   "A = 0 by t = 12 000 (Wilson 95 % upper end)", wilson(sum(x.collapsed for x in both),
                                                                      sum(x.n_runs for x in both))[2], 0.1,
                   "the stated 10 %"))
    short = {(g.m, g.fresh): g for g in groups if (g.lr, g.weight_decay) == HOT}
    ref = short[(hot.m, False)]
    for key, name in (((4, False), "the coarsest accuracy"), ((64, False), "the finest accuracy"),
                      ((hot.m, True), "fresh seeds")):
        g = short.get(key)
        if g is None:
            out.append(_count(f"follow.hot.{key}", f"hot point: a followed ensemble at {name} exists", NAN))
            continue
        a, b = (g.spikes[0], ref.spikes[0]) if key[1] else (g.spikes_short[0], ref.spikes_short[0])
        q = rate_ratio(a.count, a.exposure, b.count, b.exposure)
        w = mean_ratio(g.summary.jumped, g.summary.wait[0], ref.summary.jumped, ref.summary.wait[0])
        tag = f"follow.hot.{'fresh' if key[1] else f'm{key[0]}'}"
        out += [_le(f"{tag}.spike_rate_lo", f"hot point (t ≤ 3000 unless fresh seeds): 1 is inside the 95 % "
                    f"interval of the spike rate above 10 at {name} over the middle accuracy's (lower end)", q[1], 1,
                    "ratio 1: no change"),
                _ge(f"{tag}.spike_rate_hi", f"the same, upper end ({name})", q[2], 1, "ratio 1: no change"),
                _le(f"{tag}.wait_lo", f"hot point: 1 is inside the 95 % interval of the mean first time at rank ≤ 1 "
                    f"at {name} over the middle accuracy's (lower end)", w[1], 1, "ratio 1: no change"),
                _ge(f"{tag}.wait_hi", f"the same, upper end ({name})", w[2], 1, "ratio 1: no change")]
    return out


def passage_claims(groups, pooled) -> list[CheckResult]:
    """§3.1's spike heights (:func:`~.spikes.follow_groups`' passage fits; ``pooled``: :func:`~.spikes.fit_passage`
    of both hot-point seed sets): P(a spike reaches b | it reached 10) falls like a power of b, β > 0.3 in each
    ensemble (β ≤ 0 would let paths reach ∞); the frozen-direction prediction β = 1, stated before the fresh seeds ran,
    is refuted on them; pooled, β lies between 0.5 and 1, below the martingale's 1 and above the at-infinity estimate's
    0.4–0.46 (:func:`~.explosion.drift_at_infinity`)."""
    main = next((g for g in groups if (g.lr, g.weight_decay) == HOT and not g.fresh and g.t_max >= 12_000), None)
    fresh = next((g for g in groups if (g.lr, g.weight_decay) == HOT and g.fresh), None)
    out = []
    for g, tag in ((main, "passage.hot"), (fresh, "passage.hot.fresh")):
        fit = None if g is None else g.passage
        out.append(_gt(f"{tag}.heights_fall", f"{tag}: P(a spike reaches b | it reached 10) falls like a power of b "
                       "with exponent β above 0.3 (95 % lower end; β ≤ 0 would let paths reach ∞)",
                       fit.beta[1] if fit else NAN, 0.3, "a decisive margin above 0"))
    fit = fresh.passage if fresh is not None else None
    out += [_lt("passage.hot.fresh.not_martingale", "fresh seeds: the frozen reduction's β = 1, stated before they "
                "ran, is refuted (the fitted β's 95 % upper end is below 1)", fit.beta[2] if fit else NAN, 1.0,
                "the prediction β = 1"),
            _gt("passage.pooled.lo", "both seed sets: the fitted β's 95 % interval lies above 0.5 (lower end)",
                pooled.beta[1], 0.5, "the stated range 0.5–1"),
            _lt("passage.pooled.hi", "both seed sets: … and below 1 (upper end)", pooled.beta[2], 1.0,
                "the stated range 0.5–1")]
    return out


def continuation_claims(result: Mapping, n_cont: int = 16) -> list[CheckResult]:
    """The appendix's continuations (the grid's ``continuation`` result): every continued state is within the
    engine's divergence rule (a state before its blow-up, not after it), and fewer continuations are stopped under
    the adaptive step than under EM."""
    from ..dln import DIVERGENCE_RESIDUAL

    n = n_cont * int(result["n_states"])
    pe, pa = wilson(sum(result["em_blew"]), n), wilson(sum(result["adaptive_blew"]), n)
    resid = result.get("state_residual")
    return [
        _le("continuation.states_within_rule", "every continued state is within the divergence rule (largest "
            "residual of a state)", max(resid) if resid else NAN, DIVERGENCE_RESIDUAL, "the engine's rule, 10⁶"),
        _lt("continuation.fewer_adaptive", "fewer continuations are stopped under the adaptive step than under EM "
            "(adaptive's Wilson 95 % upper end)", pa[2], pe[1], "EM's Wilson 95 % lower end"),
    ]


# ----------------------------------------------------------------------------------------------- §3.2 weights


# ----------------------------------------------------------------------------------------------- §3.3 step size
def step_size_claims(lam_max: Mapping) -> list[CheckResult]:
    """§3.3 (``lam_max = {γ: top curvature of 𝓛_γ at the rank-2 minimum}`` for γ = 0.027, 0.02): every comparison
    runs at 0.5 < η λ_max < 2, and batch 2 at T = 0.3 (η = 0.6) is beyond GD's limit 2/λ_max."""
    etas = [lr * lam_max[weight_decay] for lr, weight_decay in SETTINGS]
    return [
        _gt("step.far_from_small", "at the three settings η λₘₐₓ exceeds 0.5: far from η λₘₐₓ ≪ 1 (smallest)",
            _nanmin(etas), 0.5, "the stated range"),
        _lt("step.gd_stable", "at the three settings η λₘₐₓ is below GD's limit 2 (largest)", _nanmax(etas), 2,
            "GD's stability limit"),
        _lt("step.batch2_unstable", "GD's limit 2/λ_max at γ = 0.027 is below η = 0.6 (batch 2 at T = 0.3)",
            2 / lam_max[HOT[1]], 0.6, "the step batch 2 needs"),
    ]


# ----------------------------------------------------------------------------------------------- §4 the jump event
def run_waiting_claims(k: int, p: float, mc: float, se: float) -> list[CheckResult]:
    """§4: the mean wait for a run of ``k`` successes of probability ``p`` is the formula, not the naive
    ``1/p^k`` (``mc``, ``se``: the Monte-Carlo mean and its standard error)."""
    exact = run_waiting_time(k, p)
    return [
        _le("run_wait.formula", f"the mean wait for a run of {k} at p = {p:.3g} is the formula Eₖ (|Monte Carlo − "
            "Eₖ|)", abs(mc - exact), 5 * se, "5 Monte-Carlo standard errors"),
        _gt("run_wait.not_naive", "it is not the naive 1/pᵏ (|Monte Carlo − 1/pᵏ|)", abs(mc - 1 / p**k),
            5 * se, "5 Monte-Carlo standard errors"),
    ]


def jump_event_claims(kstar_rows, comparisons: Mapping, collapsed: Mapping) -> list[CheckResult]:
    """§4's table (:func:`~.experiments.kstar_rows`; ``comparisons = {(η, γ): WaitComparison}`` with the factor
    10; ``collapsed = {γ: runs at A = 0 at η = 0.35}``): k* grows as γ and η shrink; every verdict, both ways."""
    by = {(q.lr, q.weight_decay): q for q in kstar_rows}
    cmp = comparisons
    grows_weight_decay = [by[(lr, 0.02)].kstar_row0 > by[(lr, 0.0235)].kstar_row0 > by[(lr, 0.027)].kstar_row0
                          for lr in (0.2, 0.25, 0.3)]
    grows_lr = [by[(0.2, weight_decay)].kstar_row0 >= by[(0.3, weight_decay)].kstar_row0
                for weight_decay in (0.02, 0.0235, 0.027)]
    stated = set(SILENT) | set(OVER_PREDICTED) | set(UNDER_PREDICTED)
    ce, h = cmp[COOLER_STEP], cmp[HOT]
    return [
        _count("kstar.grows_as_gamma_shrinks", "k* (row 0) grows as γ shrinks, at η = 0.2, 0.25, 0.3 (η where not)",
               _wrong(grows_weight_decay)),
        _count("kstar.grows_as_eta_shrinks", "k* (row 0) at η = 0.2 is at least that at η = 0.3, at every γ (γ where "
               "not)", _wrong(grows_lr)),
        _count("verdict.cells", "the stated verdicts cover exactly the grid's cells (cells in one and not the other)",
               len(stated ^ set(cmp)) + (len(SILENT) + len(OVER_PREDICTED) + len(UNDER_PREDICTED) - len(stated))
               if cmp else NAN),
        _count("verdict.band", "the k* band never changes a verdict (cells where it does)",
               _wrong(c.verdict_band == c.verdict for c in cmp.values())),
        _count("verdict.silent", "where the event predicts < 0.1 jumping runs, it agrees and no run jumps (cells not "
               "'agree' with 0 jumps)", _wrong(cmp[k].verdict == "agree" and cmp[k].jumped == 0 for k in SILENT)),
        _lt("verdict.silent_rare", "... and those cells expect fewer than 0.1 jumping runs (most)",
            _nanmax(cmp[k].expected_runs for k in SILENT), 0.1, "the stated 0.1 runs"),
        _count("verdict.over", "at γ = 0.027 the event predicts more jumps than SGD makes (cells not over-predicted)",
               _wrong(cmp[k].verdict == "over-predicted" for k in OVER_PREDICTED)),
        _lt("verdict.over_p", "... each at Poisson p < 0.05 (largest p)", _nanmax(cmp[k].p_value for k in
                                                                                   OVER_PREDICTED), 0.05,
            "5 % level"),
        _count("verdict.under", "at (0.3, 0.0235), (0.35, 0.02), (0.35, 0.0235) SGD jumps more often than predicted "
               "(cells not under-predicted)", _wrong(cmp[k].verdict == "under-predicted" for k in UNDER_PREDICTED)),
        _lt("verdict.under_p", "... each at Poisson p < 0.05 (largest p)", _nanmax(cmp[k].p_value for k in
                                                                                    UNDER_PREDICTED), 0.05,
            "5 % level"),
        _count("counterexample.none_jump", "(0.2, 0.027): no SGD run jumps and the verdict is over-predicted (jumps + "
               "wrong verdicts)", ce.jumped + (ce.verdict != "over-predicted")),
        _gt("counterexample.most_predicted", "(0.2, 0.027): the event predicts that more than half the runs jump",
            ce.expected_runs, ce.n_runs / 2, "half the runs"),
        _count("factor10.hot", "hot point: over-predicted, and 'within 10×' undecided (6–10× too fast) (mismatches)",
               (h.verdict != "over-predicted") + (h.within_factor is not None)),
        _count("factor10.within", "(0.3, 0.0235): wrong, but within 10× (mismatches)",
               float(cmp[(0.3, 0.0235)].within_factor is not True)),
        _count("factor10.outside", "(0.25, 0.027) and (0.2, 0.027): not within 10× (mismatches)",
               _wrong(cmp[k].within_factor is False for k in ((0.25, 0.027), (0.2, 0.027)))),
        _gt("collapse.eta035", "η = 0.35: at every γ more than 32 of 64 runs end at A = 0 (fewest): there the "
            "'jump' is the collapse", _nanmin(collapsed.values()), 32, "half of 64 runs"),
    ]


def kstar_rule_claims(pairs, n_relapsed: int, n_sequences: int) -> list[CheckResult]:
    """§4's k* rule: ``pairs`` = ``(first, stable)`` per (cell, route) task with a relapse, each a
    :func:`~.jump_event_stats.cell_kstar` tuple ``(median, per-sequence k*, from_grid)``. The rule moves no
    cell's median, "stable" is only ever later, and few sequences relapse."""
    pairs = list(pairs)
    moved = [(a, b) for first, stable in pairs for a, b in zip(first[1], stable[1]) if a != b]
    return [
        _count("kstar_rule.median_same", "the rule (first or stable) moves no relapsing task's median k* (tasks where "
               "it does)", _wrong(first[0] == stable[0] for first, stable in pairs)),
        _count("kstar_rule.stable_later", "'stable' is never earlier than 'first' (moved sequences where it is not "
               "later)", _wrong(b > a for a, b in moved)),
        _le("kstar_rule.few_relapse", "at most 2 % of the forced sequences relapse (sequences that relapse)",
            n_relapsed if n_sequences else NAN, 0.02 * n_sequences, "2 % of the forced sequences"),
    ]


def third_route_claims(least: Mapping, hot_row, k_diagonal: int, predicted_three: float,
                       comparison) -> list[CheckResult]:
    """§4's least-sampled routes and the diagonal route: ``least = {route: stored kstar result}`` for row 1 and
    column 0, ``hot_row`` the hot point's :class:`~.experiments.KStarRow`, ``k_diagonal`` the diagonal's k*,
    ``predicted_three`` the three-route wait and ``comparison`` its :func:`~.jump_event_stats.compare_wait`."""
    if not least:
        raise KeyError("no least-sampled route to check")
    p = [res["p_route"] for res in least.values()]
    waits = [run_waiting_time(int(np.median(res["kstar"])), res["p_route"]) for res in least.values()]
    return [
        _lt("least.rare", "row 1 and column 0 are sampled with p < 1/2 (largest p)", _nanmax(p), 0.5,
            "the two-route probability 1/2"),
        _gt("least.negligible", "their waits Eₖ are over 1000× the two-route prediction (shortest, steps)",
            _nanmin(waits), 1000 * hot_row.predicted_either, "1000 × the two-route prediction"),
        _gt("diagonal.kstar", "the diagonal route has a k* (it works)", k_diagonal, 0, EXACT),
        _lt("diagonal.faster", "with the diagonal route the predicted wait is shorter (three-route wait)",
            predicted_three, hot_row.predicted_either, "the two-route prediction"),
        _count("diagonal.still_over", "even with it the event over-predicts the hot point's jumps (mismatches)",
               float(comparison.verdict != "over-predicted")),
    ]


def route_sample_claims(attribution: Mapping) -> list[CheckResult]:
    """§4: k*-runs are as common before a jump as anywhere (:func:`~.jump_event_stats.sample_route_counts`)."""
    return [_gt("routes.not_singled_out", "k*-runs are as common in the windows before a jump as in the control "
                "windows (Fisher exact p)", attribution["fisher_p"], 0.05, "5 % level")]


def staircase_claims(summary, attribution: Mapping, c_rows, c_one) -> list[CheckResult]:
    """§4.1, the staircase (:func:`~.experiments.staircase_summary`, its
    :func:`~.jump_event_stats.sample_route_counts`, and :func:`~.jump_event_stats.compare_wait` of the row/column
    routes ``c_rows`` and of the one-entry events ``c_one``, factor 10)."""
    pre = attribution["pre"]
    return [
        _count("staircase.equal_rows", "equal row counts: rows 0 and 1 are each sampled with p = 1/2 (|p − 1/2|, "
               "largest)", max(abs(summary.p_route["row0"] - 0.5), abs(summary.p_route["row1"] - 0.5)),
               "exact probability"),
        _count("staircase.no_kstar_run", "no jump follows a row/column k*-run (windows before a jump with one)",
               abs(attribution["n_pre"] - pre["none"])),
        _count("staircase.all_jumps_read", "every jump has its window read (jumps without one)",
               abs(summary.jumped - attribution["n_pre"]) if summary.jumped else NAN),
        _count("staircase.rows_too_slow", "the row/column routes under-predict the jumps, by more than 10× "
               "(mismatches)", (c_rows.verdict != "under-predicted") + (c_rows.within_factor is not False)),
        _count("staircase.one_entry_within", "the one-entry events over-predict, but within 10× (mismatches)",
               (c_one.verdict != "over-predicted") + (c_one.within_factor is not True)),
    ]


# ----------------------------------------------------------------------------------------------- §4.2 Langevin at ε
def langevin_eps_claims(rows: Mapping, minima_losses: Mapping, curvature: Mapping) -> list[CheckResult]:
    """§4.2 (``rows = {(ε, start, method): LangevinEpsRow}``; ``minima_losses``, ``curvature``: ``{"rank1",
    "rank2"}`` at ε = 0.1): SGD stays at rank 1 at every ε; Langevin leaves it at ε = 0.1, more than at ε = 0.3, and
    the rank-1 minimum it leaves is the lower and the steeper one."""
    sgd = [rows[(eps, "rank1", "sgd")] for eps in (0.1, 0.2, 0.3)]
    lo, hi = rows[(0.1, "rank1", "langevin")], rows[(0.3, "rank1", "langevin")]
    return [
        _count("eps.sgd_stays", "SGD from the rank-1 minimum never goes up, at ε = 0.1, 0.2, 0.3 (runs)",
               sum(q.went_up for q in sgd)),
        _le("eps.sgd_always_rank1", "... and spends all its time at rank ≤ 1 (largest fraction of time not at rank "
            "≤ 1)", _nanmax(1.0 - q.frac_rank_le1[0] for q in sgd), 0.0, "exact: every record"),
        _count("eps.langevin_leaves", "at ε = 0.1 every Langevin run leaves rank 1 (runs that stay)",
               lo.n_runs - lo.went_up if lo.n_runs else NAN),
        _lt("eps.langevin_less_at_01", "Langevin spends less time at rank ≤ 1 at ε = 0.1 than at ε = 0.3 (ε = 0.1: "
            "mean + 3 SE)", lo.frac_rank_le1[0] + 3 * lo.frac_rank_le1[1],
            hi.frac_rank_le1[0] - 3 * hi.frac_rank_le1[1], "ε = 0.3: mean − 3 standard errors"),
        _count("eps.no_rank2_at_03", "at ε = 0.3 (this γ) the 'rank-2' start has rank 1: no rank-2 minimum (rank − 1)",
               abs(rows[(0.3, "rank2", "langevin")].start_rank - 1)),
        _lt("eps.rank1_lower", "at ε = 0.1 the rank-1 minimum has the lower 𝓛ᵧ (rank-1 value)",
            minima_losses["rank1"], minima_losses["rank2"], "the rank-2 minimum's value"),
        _gt("eps.rank1_steeper", "... and the larger top curvature (rank-1 value)", curvature["rank1"],
            curvature["rank2"], "the rank-2 minimum's"),
    ]


# ----------------------------------------------------------------------------------------------- §5 the grid
def rank2_lower_claims(rows: Mapping, minima_losses: Mapping) -> list[CheckResult]:
    """§4.2 where rank 2 has the lower loss (:data:`~.experiments.RANK2_LOWER`; ``rows``: ``{(start, method):
    LangevinEpsRow}``): the rank-2 minimum is the lower one; Langevin leaves the rank-1 minimum in every run and
    spends less than 1 % of its time at rank ≤ 1 from either start (the same law from both: equilibrated, at rank 2);
    SGD from the rank-2 minimum never reaches rank ≤ 1."""
    def get(start, method):
        return rows.get((start, method))

    l1, l2, s2 = get("rank1", "langevin"), get("rank2", "langevin"), get("rank2", "sgd")
    return [
        _lt("rank2_lower.rank2_lower", "the rank-2 minimum's 𝓛ᵧ is below the rank-1 minimum's (rank 2)",
            minima_losses["rank2"], minima_losses["rank1"], "the rank-1 minimum's 𝓛ᵧ"),
        _count("rank2_lower.langevin_leaves_rank1", "Langevin leaves the rank-1 minimum in every run (runs that did "
               "not)",
               l1.n_runs - l1.went_up if l1 else NAN),
        _lt("rank2_lower.langevin_at_rank2", "Langevin spends less than 1 % of its time at rank ≤ 1 from either start "
            "(the larger mean + 2 s.e.)", max(q.frac_rank_le1[0] + 2 * q.frac_rank_le1[1] for q in (l1, l2))
            if l1 and l2 else NAN, 0.01, "the stated 1 %"),
        _count("rank2_lower.sgd_stays_rank2", "SGD from the rank-2 minimum never reaches rank ≤ 1 (fraction of time "
               "there, as a count)", s2.frac_rank_le1[0] if s2 else NAN),
    ]


def grid_claims(grid, expected_tasks: int, command: str = "python -m symsgd_core sweep sde05") -> list[CheckResult]:
    """§5: the stored grid is the one ``command`` makes (``expected_tasks``: ``len(grid_tasks("sde05"))``)."""
    return [_count("grid.made_by", f"the stored grid was made by `{command}` (mismatches)",
                   float(grid.command != command)),
            _count("grid.complete", "it holds every task of the sweep (missing or extra tasks)",
                   abs(len(grid.tasks) - expected_tasks) if expected_tasks else NAN)]


# ----------------------------------------------------------------------------------------------- §6 exercises
def exercise_claims(exercises: Mapping) -> list[CheckResult]:
    """§6: every exercise's checker accepts its own worked answer, and each has a worked answer and a hint (so the
    exercises cannot silently rot). ``exercises``: ``{name: Exercise}`` (:data:`~.exercises.EXERCISES`)."""
    ex = list(exercises.values())
    return [_count("exercises.solutions_accepted", "every exercise's checker accepts its worked answer (exercises "
                   "whose checker does not)", _wrong(e.check(e.solution).correct for e in ex)),
            _count("exercises.worked_and_hint", "every exercise has a worked answer and a hint (exercises without)",
                   _wrong(bool(e.worked and e.hint) for e in ex))]


# ----------------------------------------------------------------------------------------------- §3.2 the controls
def control_claims(ctl) -> list[CheckResult]:
    """§3.2's controls as the data say (``ctl``: :class:`~.controls.ControlReport`, γ = 0.027).

    The control tasks on the grid's seeds are the grid's runs. The Bernoulli control's largest step (3η) is unstable
    for GD at the rank-2 minimum at η = 0.3 (7/27 of its steps are, by their total weight) and stable at η = 0.15;
    a one-hot SGD step at η = 0.3 is already beyond 2 along its own top curvature (single-step stability does not
    separate SGD from the control). Every run that reached rank ≤ 1 recorded a rank-1 fit first; at η = 0.3 the
    Bernoulli control then collapses to A ≈ 0 in most of them, SGD in none; at η = 0.15 it never collapses, and
    jumps where SGD does not. At T = 0.15 the ±1 law jumps faster at (η, S) = (0.15, 1) than at (0.3, 2), the
    Gaussian slower: both the step and the batch matter.
    """
    from ..core.checking import roundoff_tolerance
    from .controls import fixed_temperature_ratio

    laws, rows, g = ctl.laws, ctl.rows, ctl.grid_rows
    b3, b15, b32 = laws[("bernoulli", 0.3, 1)], laws[("bernoulli", 0.15, 1)], laws[("bernoulli", 0.3, 2)]
    sgd3 = laws[("sgd", 0.3, 1)]
    gb3, gs3 = g[("bernoulli", 0.3, 1)], g[("sgd", 0.3, 1)]
    rb15, rs15, rb32 = rows[("bernoulli", 0.15, 1)], rows[("sgd", 0.15, 1)], rows[("bernoulli", 0.3, 2)]
    pm, gauss = fixed_temperature_ratio(rows, "rademacher"), fixed_temperature_ratio(rows, "gaussian")
    ratio_src = "rate ratio 1 (no difference), exact 95 % interval end"
    return [
        _count("controls.same_runs", "the control tasks on the grid's seeds are the grid's runs (runs whose jump "
               "time, blow-up time or end at A = 0 differ)", ctl.mismatches),
        _ge("controls.bern_hot_unstable", "η = 0.3: the Bernoulli control's largest step (every entry sampled, total "
            "weight 3η) is unstable for GD at the rank-2 minimum (W(λₘₐₓ − 2γ) + 2γη)", b3.stability, 2,
            "GD's stability limit 2"),
        _le("controls.bern_hot_p_unstable", "η = 0.3, S = 1: 7/27 of the Bernoulli control's steps have an unstable "
            "total weight, 2η or 3η (|P − 7/27|)", abs(b3.p_unstable_total - 7 / 27),
            roundoff_tolerance(1.0, len(b3.probs)), "round-off of the binomial probabilities"),
        _lt("controls.bern_stable_015", "η = 0.15: every step of the Bernoulli control is stable, by its total weight "
            "and by its own top curvature (the larger of the two)", max(b15.stability, b15.max_curvature), 2,
            "GD's stability limit 2"),
        _ge("controls.sgd_step_curvature", "η = 0.3: a one-hot SGD step is itself beyond 2 along its own top curvature "
            "(λₘₐₓ(η∇²ℓₖ) + 2γη, largest)", sgd3.max_curvature, 2, "GD's stability limit 2"),
        _count("controls.fit_first", "every run of every control row that reached rank ≤ 1 recorded a rank-1 fit "
               "(s₁ > 0.001) first (runs at A = 0 at their first record at rank ≤ 1)",
               sum(r.collapse_first for r in rows.values()) if rows else NAN),
        _gt("controls.bern_hot_collapses", "η = 0.3, S = 1: the Bernoulli control ends at A = 0 in more runs than SGD "
            "(its Wilson 95 % lower end)", gb3.share("collapsed")[1], gs3.share("collapsed")[2],
            "SGD's Wilson 95 % upper end"),
        _gt("controls.bern_hot_fit_then_zero", "η = 0.3, S = 1: most Bernoulli runs that jumped to a rank-1 fit went "
            "on to A = 0 (Wilson 95 % lower end among them)", wilson(gb3.fit_then_collapsed, gb3.jumped_fit)[1]
            if gb3.jumped_fit else NAN, 0.5, "half"),
        _count("controls.bern_015_no_collapse", "η = 0.15: no Bernoulli run reaches A = 0 (runs)", rb15.collapsed),
        _gt("controls.bern_015_jumps", "η = 0.15, every step stable and never negative: the Bernoulli control jumps "
            "to a rank-1 fit in more runs than SGD (its Wilson 95 % lower end)", rb15.share("jumped_fit")[1],
            rs15.share("jumped_fit")[2], "SGD's Wilson 95 % upper end"),
        _le("controls.bern_S2_unstable_steps", "η = 0.3, S = 2: 73/729 of the Bernoulli control's steps have an "
            "unstable total weight, 4, 5 or 6 entries of 6 draws (|P − 73/729|)", abs(b32.p_unstable_total - 73 / 729),
            roundoff_tolerance(1.0, len(b32.probs)), "round-off of the binomial probabilities"),
        _count("controls.bern_S2_still", "η = 0.3, S = 2: yet no Bernoulli run jumps or collapses (runs)",
               rb32.jumped + rb32.collapsed),
        _gt("controls.fixedT_pm", "T = 0.15: ±1 weights jump to a rank-1 fit faster at η = 0.15, S = 1 than at "
            "η = 0.3, S = 2 (lower end of the rate ratio)", pm[1], 1, ratio_src),
        _lt("controls.fixedT_gauss", "T = 0.15: Gaussian weights jump faster at η = 0.3, S = 2 than at η = 0.15, S = 1 "
            "(upper end of the rate ratio 0.15/0.3)", gauss[2], 1, ratio_src),
    ]


# ----------------------------------------------------------------------------------------------- the invariant subspace
#: The precision of the statement "the distance to the aligned subspace decays at rate 2γ": within 1 %.
RATE_PRECISION = 0.01
#: ... and "exponentially": every fitted record within a factor 2 of the fitted exponential.
FIT_FACTOR = 2.0


def invariance_claims(evidence) -> list[CheckResult]:
    """The evidence that jumped SDE paths approach an aligned rank-1 subspace (an
    :class:`~.invariance.InvarianceEvidence`): every path that jumped and stayed bounded reached round-off distance
    by t_end; its distance decayed exponentially at 2γ within 1 %; once at round-off it stayed there."""
    e = evidence
    jumped_bounded = np.isfinite(e.jump_time) & e.bounded
    ratio = e.rate_over_two_gamma
    after = e.used & np.isfinite(e.after_floor_max)  # fitted paths with records after reaching the floor
    return [
        _count("invariance.decay_complete", "every path that jumped and stayed bounded reached round-off distance "
               "from an aligned subspace by t_end (paths that did not)",
               _wrong(np.isfinite(e.floor_time[jumped_bounded])) if e.n_jumped_bounded else NAN),
        _le("invariance.rate_2gamma", f"after the jump the distance decays at rate 2γ = {2 * e.weight_decay:g} within "
            f"{RATE_PRECISION:.0%} (largest |rate/2γ − 1| over the fitted paths)",
            _nanmax(np.abs(ratio - 1.0)), RATE_PRECISION, "the statement's precision"),
        _le("invariance.exponential", f"the decay is exponential: every record of each fit within a factor "
            f"{FIT_FACTOR:g} of the fitted line (largest |log residual|)", _nanmax(e.max_residual[e.used]),
            math.log(FIT_FACTOR), f"log {FIT_FACTOR:g}"),
        _le("invariance.stays", "once at round-off a path stays there to t_end (largest distance after the first "
            "record at round-off)",
            _nanmax(e.after_floor_max[after]), e.floor, "64·P·eps: round-off of the distance"),
    ]


# ----------------------------------------------------------------------------------------------- does it explode?
__all__ += ["explosion_claims"]


def explosion_claims(rays, share_rows, table=None, prediction: str = "martingale",
                     infinity=None) -> list[CheckResult]:
    """"Does the SDE explode?": the failing bound, the transverse share, and (given) measured passages and the
    share the paths see at large norm.

    Args:
        rays: :func:`~.explosion.khasminskii_rays`.  share_rows: :func:`~.explosion.transverse_share_rows`.
        table: optional :func:`~.explosion.passage_table` rows; ``prediction``: ``"martingale"`` or ``"corrected"``,
            the prediction that must lie in every row's interval.
        infinity: optional :func:`~.explosion.drift_at_infinity` result: its ``f_eff + Z_MC·SE`` must be below 1.
    """
    from ..core.conventions import Z_MC
    from .explosion import DEGREE_BAND

    rays = list(rays)
    minima = [r["f"] for r in share_rows if r["label"] in ("rank-1 minimum", "rank-2 minimum")]
    out = [
        _count("explosion.bound_exponents", "along every ray the pull −2⟨θ, D⟩ and the noise T tr C grow with "
               "exponents 2L and 4L − 2 (rays off by more than ½)",
               sum(not (r.exponent_error <= DEGREE_BAND) for r in rays) if rays else NAN),
        _ge("explosion.bound_fails", "so the Khasminskii bound's left side over 1 + ‖θ‖² is unbounded (smallest "
            "fitted exponent)", _nanmin(r.ratio_exponent for r in rays) if rays else NAN, DEGREE_BAND,
            "½: degree ≥ 1"),
        _gt("explosion.share_above_one", "on the minima's rays scaled up the transverse share f = tr C/φᵀCφ − 1 "
            "exceeds 1, so freezing the direction is not self-consistent (smallest f)",
            min(minima) if minima else NAN, 1.0, "1: the share where the scale exponent 1 − f changes sign"),
    ]
    if table is not None:
        if prediction not in ("martingale", "corrected"):
            raise ValueError(f"prediction must be 'martingale' or 'corrected', got {prediction!r}")
        rows = list(table)
        out.append(_count(f"explosion.passages_{prediction}",
                          f"the {prediction} passage prediction lies in the measured interval at every level "
                          "(levels outside)", _wrong(getattr(r, f"{prediction}_inside") for r in rows),
                          "exact count against Wilson intervals"))
    if infinity is not None:
        out.append(_lt("explosion.share_at_infinity", "along paths of the SDE's leading-order part at large norm the "
                       f"average transverse share is below 1: log‖θ‖ drifts down (f_eff + {Z_MC:g} SE)",
                       infinity.f_eff + Z_MC * infinity.f_se, 1.0,
                       "1: the share where the scale exponent 1 − f changes sign"))
    return out
