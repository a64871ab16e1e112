"""Notebook 05's claims (:mod:`symsgd_core.sde_noise.claims`): each function passes on the real results the
notebook draws (the shipped grid, the live comparison at its defaults) and fails on a broken copy (a count changed,
a NaN, nothing measured)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from symsgd_core import rank_jumps, sde_noise
from symsgd_core.core.checking import readable_html
from symsgd_core.sde_noise import blowup as bu
from symsgd_core.sde_noise import claims as sc
from symsgd_core.sde_noise import experiments as sx
from symsgd_core.sde_noise import jump_event as je
from symsgd_core.sde_noise import jump_event_stats as js

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05_sgd_noise_sde.ipynb"
HOT = sc.HOT


def _passed(rows) -> bool:
    rows = list(rows)
    assert rows, "no claim"
    return all(r.passed for r in rows)


def _failed(rows) -> set:
    """The names of the rows that failed."""
    return {r.name for r in rows if not r.passed}


def _readable(rows) -> None:
    for r in rows:
        page = readable_html(r.claim) + readable_html(r.tolerance_source)
        assert not re.search(r"[_^]\{|\\[a-zA-Z]|\$", page), r.claim


@pytest.fixture(scope="module")
def grid():
    return sx.load_grid()


@pytest.fixture(scope="module")
def rows(grid):
    return {(r.lr, r.weight_decay, r.label): r.summary for r in sx.comparison_rows(grid)}


def _with_row(rows, key, **changes):
    return {**rows, key: dataclasses.replace(rows[key], **changes)}


# ----------------------------------------------------------------------------------------------- row builders
def test_strict_bounds_fail_at_equality_and_nan_never_passes():
    assert not sc._gt("x", "x", 2.0, 2.0, "s").passed and sc._gt("x", "x", 2.0 + 1e-12, 2.0, "s").passed
    assert not sc._lt("x", "x", -15.0, -15.0, "s").passed and sc._lt("x", "x", -15.5, -15.0, "s").passed
    assert not sc._count("x", "x", float("nan")).passed and sc._count("x", "x", 0).passed
    assert not sc._le("x", "x", 1.0, float("nan"), "s").passed
    assert math.isnan(sc._wrong([])) and sc._wrong([True, False]) == 1.0


# ----------------------------------------------------------------------------------------------- stored checks
@pytest.mark.parametrize("kind, broken", [("weak_order", "biased"), ("adaptive_vs_em", "noise_at_h_max")])
def test_stored_check_claims(grid, kind, broken):
    res = sc.stored_check_claims(grid, kind, broken, "a broken integrator")
    assert _passed(res) and len(res) == 2
    _readable(res)

    def with_result(which, **changes):
        tasks = tuple({**t, "result": {**t["result"], **changes}} if t["kind"] == kind and
                      t["params"].get("broken") == which else t for t in grid.tasks)
        return dataclasses.replace(grid, tasks=tasks)

    assert not sc.stored_check_claims(with_result(broken, passed=True), kind, broken, "x")[1].passed  # not caught
    assert not sc.stored_check_claims(with_result(None, measured=float("nan")), kind, broken, "x")[0].passed
    assert not sc.stored_check_claims(with_result(None, passed=False), kind, broken, "x")[0].passed
    only_good = dataclasses.replace(grid, tasks=tuple(t for t in grid.tasks if not (
        t["kind"] == kind and t["params"].get("broken") == broken)))
    assert not sc.stored_check_claims(only_good, kind, broken, "x")[1].passed  # the broken run is missing
    with pytest.raises(KeyError):
        sc.stored_check_claims(dataclasses.replace(grid, tasks=()), kind, broken, "x")


# ----------------------------------------------------------------------------------------------- §3 live
@pytest.fixture(scope="module")
def point():
    return sx.compare_point()  # the notebook's live figure at its defaults (SdeCompareController)


@pytest.mark.slow
def test_compare_point_claims(point):
    res = sc.compare_point_claims(point)
    assert _passed(res)
    _readable(res)
    s = point.summaries
    back = dataclasses.replace(point, summaries={**s, "sde": dataclasses.replace(s["sde"], returned=1)})
    assert _failed(sc.compare_point_claims(back)) == {"sde_noise.live.sde_no_return"}
    calm = dataclasses.replace(point, summaries={**s, "sde": dataclasses.replace(s["sde"], diverged=0)})
    assert _failed(sc.compare_point_claims(calm)) == {"sde_noise.live.em_blows_up"}
    rank = np.array(point.sgd.rank, copy=True)
    rank[0, 0] = 1
    moved = dataclasses.replace(point, sgd=SimpleNamespace(rank=rank, n_runs=point.sgd.n_runs))
    assert _failed(sc.compare_point_claims(moved)) == {"sde_noise.live.start_rank2"}
    empty = SimpleNamespace(rank=np.zeros((0, 3)), n_runs=0)
    assert not _passed(sc.compare_point_claims(dataclasses.replace(point, sgd=empty, sde=empty)))


# ----------------------------------------------------------------------------------------------- §3.1
def test_comparison_claims(rows):
    res = sc.comparison_claims(rows)
    assert _passed(res) and len(res) == 21
    _readable(res)
    sde_key = (*HOT, sc.ADAPTIVE_LABELS[HOT])
    assert _failed(sc.comparison_claims(_with_row(rows, sde_key, returned=1))) == {
        "sde_noise.sde.never_returns"}
    lang = (0.3, 0.02, "Langevin 10× τ_match")
    assert _failed(sc.comparison_claims(_with_row(rows, lang, frac_B1=(float("nan"), 0.0)))) == {
        "sde_noise.langevin.never_B1"}
    em4 = (*HOT, "SDE, dt = η/4")
    assert "sde_noise.collapse.fixed_step_m4" in _failed(sc.comparison_claims(
        _with_row(rows, em4, collapsed=rows[em4].collapsed - 1)))
    # no bounded run: nothing measured
    assert "sde_noise.collapse.fixed_step_m4" in _failed(sc.comparison_claims(
        _with_row(rows, em4, diverged=rows[em4].n_runs, collapsed=0)))
    assert "sde_noise.hot.rank1_fit" in _failed(sc.comparison_claims(
        _with_row(rows, sde_key, log10_s2_hist_fit=None)))
    no_sde = {k: v for k, v in rows.items() if not k[2].startswith("SDE")}
    with pytest.raises(KeyError):
        sc.comparison_claims(no_sde)


def test_blowup_claims(grid):
    haz, norms = bu.hazard_rows(grid), bu.escape_norms(grid)
    res = sc.blowup_claims(haz, norms)
    assert _passed(res) and len(res) == 13
    _readable(res)

    def changed(key, **kw):
        return tuple(dataclasses.replace(h, **kw) if (h.lr, h.weight_decay, h.integrator, h.m) == key else h
                     for h in haz)

    assert _failed(sc.blowup_claims(changed((0.2, 0.027, "adaptive", 16), events=3), norms)) >= {
        "sde_noise.blowup.cool_adaptive"}
    assert _failed(sc.blowup_claims(haz, {**norms, "stall_max": 18.5})) == {"sde_noise.stall.max_norm"}
    assert _failed(sc.blowup_claims(haz, {**norms, "stall_min": float("nan")})) == {"sde_noise.stall.min_norm"}
    # no adaptive jump at η/64 at the hot point: the step-free claim measured nothing there and fails
    assert "sde_noise.adaptive.wait_step_free_lo" in _failed(sc.blowup_claims(
        changed((*HOT, "adaptive", 64), jumped=0), norms))


def test_continuation_claims(grid):
    c = next(t for t in grid.tasks if t["kind"] == "continuation")["result"]
    res = sc.continuation_claims(c)
    assert _passed(res)
    _readable(res)
    # a state past the rule (the old off-by-one kept such states) fails; a result without residuals measured nothing
    past = {**c, "state_residual": [*c["state_residual"][:-1], 2e6]}
    assert _failed(sc.continuation_claims(past)) == {"sde_noise.continuation.states_within_rule"}
    assert _failed(sc.continuation_claims({**c, "state_residual": []})) == {"sde_noise.continuation.states_within_rule"}
    assert "sde_noise.continuation.fewer_adaptive" in _failed(sc.continuation_claims(
        {**c, "em_blew": [0] * len(c["em_blew"])}))


# ----------------------------------------------------------------------------------------------- §3.2, §3.3
def test_step_size_claims():
    problem = rank_jumps.EPSILON_EXPERIMENT.problem
    lam_max = {weight_decay: rank_jumps.analysis.loss_hessian_top_eigenvalue(
               rank_jumps.start_minimum(weight_decay=weight_decay)[0], problem, weight_decay)
               for weight_decay in (0.027, 0.02)}
    res = sc.step_size_claims(lam_max)
    assert _passed(res)
    _readable(res)
    assert _failed(sc.step_size_claims({**lam_max, 0.027: 2 / 0.6})) >= {"sde_noise.step.batch2_unstable"}
    assert not _passed(sc.step_size_claims({**lam_max, 0.02: float("nan")}))


# ----------------------------------------------------------------------------------------------- §4
def test_run_waiting_claims():
    k, p = 5, 2 / 3
    mc, se = sde_noise.simulate_run_waiting_time(k, p, n_seq=4000, seed=1)
    res = sc.run_waiting_claims(k, p, mc, se)
    assert _passed(res)
    _readable(res)
    exact = sde_noise.run_waiting_time(k, p)
    assert _failed(sc.run_waiting_claims(k, p, exact + 6 * se, se)) == {"sde_noise.run_wait.formula"}
    assert _failed(sc.run_waiting_claims(k, p, 1 / p**k, se)) >= {"sde_noise.run_wait.not_naive"}
    assert not _passed(sc.run_waiting_claims(k, p, float("nan"), se))


@pytest.fixture(scope="module")
def event(grid):
    ktab = sx.kstar_rows(grid)
    cmp = {(c.lr, c.weight_decay): c for c in js.grid_wait_comparisons(grid, factor=10.0)}
    collapsed = {t["params"]["weight_decay"]: sum(t["result"]["collapsed"]) for t in grid.tasks
                 if t["kind"] == "waiting" and t["params"]["lr"] == 0.35}
    return ktab, cmp, collapsed


def test_jump_event_claims(event):
    ktab, cmp, collapsed = event
    res = sc.jump_event_claims(ktab, cmp, collapsed)
    assert _passed(res) and len(res) == 16
    _readable(res)
    flipped = {**cmp, (0.2, 0.02): dataclasses.replace(cmp[(0.2, 0.02)], verdict="over-predicted")}
    assert _failed(sc.jump_event_claims(ktab, flipped, collapsed)) == {"sde_noise.verdict.band",
                                                                      "sde_noise.verdict.silent"}
    extra = {**cmp, (0.4, 0.027): cmp[HOT]}
    assert _failed(sc.jump_event_claims(ktab, extra, collapsed)) == {"sde_noise.verdict.cells"}
    assert _failed(sc.jump_event_claims(ktab, cmp, {**collapsed, 0.02: 32})) == {"sde_noise.collapse.eta035"}
    assert _failed(sc.jump_event_claims(ktab, cmp, {})) == {"sde_noise.collapse.eta035"}  # nothing measured
    same = tuple(dataclasses.replace(q, kstar_row0=13) for q in ktab)
    assert _failed(sc.jump_event_claims(same, cmp, collapsed)) == {"sde_noise.kstar.grows_as_gamma_shrinks"}


def test_kstar_rule_claims_on_small_fakes():
    first, stable = (20, [18, 20, 22], True), (20, [20, 20, 22], False)  # one relapse: "stable" 2 steps later
    assert _passed(sc.kstar_rule_claims([(first, stable)], 1, 60))
    assert _failed(sc.kstar_rule_claims([(first, (21, [20, 21, 22], False))], 1, 60)) == {
        "sde_noise.kstar_rule.median_same"}
    assert _failed(sc.kstar_rule_claims([(stable, first)], 1, 60)) == {"sde_noise.kstar_rule.stable_later"}
    assert _failed(sc.kstar_rule_claims([(first, stable)], 2, 60)) == {"sde_noise.kstar_rule.few_relapse"}
    assert not _passed(sc.kstar_rule_claims([], 0, 0))  # nothing measured


@pytest.mark.slow
def test_kstar_rule_claims(grid):
    """On the grid (its "stable" k* is computed live: about 20 s)."""
    tasks = [t for t in grid.tasks if t["kind"] == "kstar" and t["params"]["route"] in ("row0", "col1", "row1",
                                                                                         "col0")]
    n_seq = sum(len(t["result"]["monotone"]) for t in tasks)
    relapsed = [t for t in tasks if not all(t["result"]["monotone"])]
    n_rel = sum(m is False for t in relapsed for m in t["result"]["monotone"])
    pairs = []
    for t in relapsed:
        p = t["params"]
        kw = dict(problem=p.get("problem", "eps"), lr=p["lr"], weight_decay=p["weight_decay"])
        pairs.append((js.cell_kstar(grid, p["route"], **kw), js.cell_kstar(grid, p["route"], **kw,
                                                                            key="kstar_stable")))
    res = sc.kstar_rule_claims(pairs, n_rel, n_seq)
    assert _passed(res) and pairs
    _readable(res)
    (first, stable), rest = pairs[0], pairs[1:]
    moved = [((first[0], first[1], first[2]), (first[0] + 1, stable[1], stable[2])), *rest]
    assert _failed(sc.kstar_rule_claims(moved, n_rel, n_seq)) == {"sde_noise.kstar_rule.median_same"}
    earlier = [((first[0], [k + 5 for k in first[1]], first[2]), stable), *rest]
    assert "sde_noise.kstar_rule.stable_later" in _failed(sc.kstar_rule_claims(earlier, n_rel, n_seq))
    assert _failed(sc.kstar_rule_claims(pairs, n_rel + n_seq, n_seq)) == {"sde_noise.kstar_rule.few_relapse"}


def test_third_route_and_route_sample_claims(grid, event):
    ktab, _, _ = event
    hot = next(q for q in ktab if (q.lr, q.weight_decay) == HOT)
    least = {t["params"]["route"]: t["result"] for t in grid.tasks if t["kind"] == "kstar" and
             t["params"].get("problem", "eps") == "eps" and t["params"]["route"] in ("row1", "col0")}
    kd = js.cell_kstar(grid, "avoid01", lr=HOT[0], weight_decay=HOT[1])[0]
    E3 = je.avoid_waiting_time({2: hot.kstar_row0, 0: hot.kstar_col1, 1: kd}, [1 / 3] * 3)
    c3 = js.compare_wait(grid.select("waiting", lr=HOT[0], weight_decay=HOT[1])[0]["jump_step"], 100_000, E3)
    res = sc.third_route_claims(least, hot, kd, E3, c3)
    assert _passed(res)
    _readable(res)
    assert _failed(sc.third_route_claims(least, hot, kd, E3, dataclasses.replace(c3, verdict="agree"))) == {
        "sde_noise.diagonal.still_over"}
    assert _failed(sc.third_route_claims(least, hot, -1, E3, c3)) == {"sde_noise.diagonal.kstar"}
    with pytest.raises(KeyError):
        sc.third_route_claims({}, hot, kd, E3, c3)
    att = js.sample_route_counts(grid, "eps", *HOT)
    assert _passed(sc.route_sample_claims(att))
    assert not _passed(sc.route_sample_claims({**att, "fisher_p": 0.05}))  # strict: p = 0.05 does not pass
    assert not _passed(sc.route_sample_claims({**att, "fisher_p": float("nan")}))


def test_staircase_claims(grid):
    st = sx.staircase_summary(grid)
    att = js.sample_route_counts(grid, "staircase")
    res_task = grid.select("staircase")[0]
    E_rows = 1 / sum(1 / sde_noise.run_waiting_time(st.kstar[r], 0.5) for r in ("row0", "row1", "col1"))
    k_one = {e: js.cell_kstar(grid, f"avoid{i}{j}", problem="staircase")[0]
             for e, (i, j) in enumerate(((0, 0), (0, 1), (1, 1), (1, 2)))}
    E_one = je.avoid_waiting_time({e: k for e, k in k_one.items() if k > 0}, [0.25] * 4)
    c_rows = js.compare_wait(res_task["jump_step"], res_task["n_steps"], E_rows, factor=10.0)
    c_one = js.compare_wait(res_task["jump_step"], res_task["n_steps"], E_one, factor=10.0)
    res = sc.staircase_claims(st, att, c_rows, c_one)
    assert _passed(res)
    _readable(res)
    seen = {**att, "pre": {**att["pre"], "none": att["pre"]["none"] - 1}}
    assert _failed(sc.staircase_claims(st, seen, c_rows, c_one)) == {"sde_noise.staircase.no_kstar_run"}
    assert _failed(sc.staircase_claims(st, att, c_rows, dataclasses.replace(c_one, within_factor=None))) == {
        "sde_noise.staircase.one_entry_within"}
    none = dataclasses.replace(st, jumped=0)
    assert "sde_noise.staircase.all_jumps_read" in _failed(sc.staircase_claims(none, att, c_rows, c_one))


def test_langevin_eps_claims(grid):
    weight_decay = rank_jumps.EPSILON_EXPERIMENT.weight_decay_hot
    le = {(q.eps, q.start, q.method): q for q in sx.langevin_eps_rows(grid)}
    m1 = rank_jumps.minima_losses(0.1, weight_decay)
    p01 = rank_jumps.epsilon_completion(0.1)
    curv = {k: rank_jumps.analysis.loss_hessian_top_eigenvalue(pt, p01, weight_decay)
            for k, pt in (("rank1", rank_jumps.rank_one_minimum(0.1, weight_decay=weight_decay)),
                          ("rank2", rank_jumps.start_minimum(0.1, weight_decay=weight_decay)[0]))}
    res = sc.langevin_eps_claims(le, m1, curv)
    assert _passed(res)
    _readable(res)
    up = {**le, (0.2, "rank1", "sgd"): dataclasses.replace(le[(0.2, "rank1", "sgd")], went_up=1)}
    assert _failed(sc.langevin_eps_claims(up, m1, curv)) == {"sde_noise.eps.sgd_stays"}
    r2 = (0.3, "rank2", "langevin")
    assert _failed(sc.langevin_eps_claims({**le, r2: dataclasses.replace(le[r2], start_rank=0)}, m1, curv)) == {
        "sde_noise.eps.no_rank2_at_03"}
    assert _failed(sc.langevin_eps_claims(le, m1, {**curv, "rank1": curv["rank2"]})) == {
        "sde_noise.eps.rank1_steeper"}


def test_grid_claims(grid):
    n = len(sx.grid_tasks("sde05"))
    assert _passed(sc.grid_claims(grid, n))
    assert not _passed(sc.grid_claims(dataclasses.replace(grid, command="python -m symsgd_core sweep tiny"), n))
    assert not _passed(sc.grid_claims(grid, n + 1))
    assert not _passed(sc.grid_claims(dataclasses.replace(grid, tasks=()), 0))  # nothing measured


def test_exercise_claims():
    from symsgd_core.sde_noise.exercises import EXERCISES

    assert _passed(sc.exercise_claims(EXERCISES))
    name = next(iter(EXERCISES))
    unhinted = {**EXERCISES, name: dataclasses.replace(EXERCISES[name], hint="")}
    assert _failed(sc.exercise_claims(unhinted)) == {"sde_noise.exercises.worked_and_hint"}
    wrong = {**EXERCISES, name: dataclasses.replace(EXERCISES[name], solution=-12345.0)}
    assert _failed(sc.exercise_claims(wrong)) == {"sde_noise.exercises.solutions_accepted"}
    assert not _passed(sc.exercise_claims({}))  # nothing measured


# ----------------------------------------------------------------------------------------------- the notebook
def test_notebook_05_checks_its_claims_with_named_claims_calls():
    """Notebook 05's claims are named claims calls: no bare ``assert`` in a code cell, and the
    notebook calls every claims function of :mod:`~symsgd_core.sde_noise.claims`."""
    cells = ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "code"]
    bare = [line for src in cells for line in src.splitlines() if line.lstrip().startswith("assert ")]
    assert not bare, bare
    called = {m for src in cells for m in re.findall(r"sc\.(\w+_claims)\(", src)}
    assert called == {name for name in sc.__all__ if name.endswith("_claims")}, called
