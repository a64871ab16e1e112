"""Notebook 05's experiments and the shipped grid: the summaries, the claims the notebook makes, the exercises."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from symsgd_core.core.stats import bootstrap_quantiles, censored_exponential, mean_se, wilson
from symsgd_core.dln.network import DEFAULT_RANK_TOL
from symsgd_core.sde_noise import blowup as B
from symsgd_core.sde_noise import experiments as E
from symsgd_core.sde_noise.exercises import EXERCISES


@pytest.fixture(scope="module")
def grid():
    return E.load_grid()


@pytest.fixture(scope="module")
def rows(grid):
    return {(r.lr, r.weight_decay, r.label): r.summary for r in E.comparison_rows(grid)}


def test_stats_helpers():
    p, lo, hi = wilson(0, 64)
    assert p == 0 and lo == 0 and 0.04 < hi < 0.07
    w = censored_exponential([1.0, 2.0, np.nan], [10.0, 10.0, 10.0])
    assert w["events"] == 2 and w["mean"] == pytest.approx(6.5) and w["lo"] < 6.5 < w["hi"]
    assert math.isinf(censored_exponential([np.nan], [5.0])["mean"])
    assert mean_se([1.0, 3.0]) == (2.0, 1.0)
    q = bootstrap_quantiles([[0.0, 1.0], [2.0, 3.0]], qs=(0.5,), n_boot=50)
    assert q[0.5][1] <= q[0.5][0] <= q[0.5][2]
    with pytest.raises(ValueError):
        wilson(5, 3)


def test_the_grid_is_complete_and_made_by_the_package_command(grid):
    assert grid.command == "python -m symsgd_core sweep sde05"
    kinds = {t["kind"] for t in grid.tasks}
    assert kinds == {"dynamics", "kstar", "waiting", "staircase", "langevin_eps", "weak_order", "adaptive_vs_em",
                     "continuation", "follow", "dynamics_events", "infinity"}
    assert len(grid.tasks) == len(E.grid_tasks("sde05"))
    assert [t["params"] for t in grid.tasks] == [p for _, p in E.grid_tasks("sde05")]
    # the grid's budget: it regenerates within an hour of wall time on two workers (stored task seconds, measured
    # on a shared 2-core machine, so an upper bound)
    assert grid.task_seconds < 2 * 3600


def test_a_grid_file_with_the_old_weight_decay_key_is_read_and_reused_under_the_new_name(tmp_path):
    import json

    shipped = json.loads((Path(E.__file__).parent.parent / "data_files" / E.GRID_FILE).read_text())
    assert "weight_decay" in shipped["tasks"][0]["params"]  # the shipped file was rewritten under the new name
    tasks = E.grid_tasks("tiny")
    old = [{"kind": k, "params": {("lam" if key == "weight_decay" else key): v for key, v in p.items()},
            "result": {"marker": i, "seconds": 0.0}} for i, (k, p) in enumerate(tasks)]
    stored = tmp_path / "old.json"
    stored.write_text(json.dumps({"name": "tiny", "tasks": old, "task_seconds": 0.0, "command": "c"}))
    grid = E.load_grid(stored)
    assert [t["params"] for t in grid.tasks] == [p for _, p in tasks]
    assert list(grid.tasks[0]["params"]) == list(tasks[0][1])  # the stored order, renamed in place
    out = json.loads(E.write_grid("tiny", tmp_path / "new.json", n_workers=1, reuse=stored).read_text())
    assert [t["result"]["marker"] for t in out["tasks"]] == list(range(len(tasks)))  # every task reused, none run
    assert out["reused_tasks"] == len(tasks) and all("weight_decay" in t["params"] for t in out["tasks"])


ADAPTIVE = "SDE adaptive, h ≤ η/16, ρ = 0.05"


def test_the_sde_jumps_faster_than_sgd_and_never_returns(rows):
    hot = 0.3, 0.027
    for (lr, weight_decay), label in ((hot, ADAPTIVE), (hot, "SDE, dt = η/16"),
                                      ((0.2, 0.027), ADAPTIVE + " (t ≤ 3000)"),
                                      ((0.3, 0.02), ADAPTIVE + " (t ≤ 3000)")):
        sgd, sde = rows[(lr, weight_decay, "SGD")], rows[(lr, weight_decay, label)]
        assert sde.wait[2] < sgd.wait[1], (lr, weight_decay, label)  # 95 % intervals apart: faster, not by chance
    for (lr, weight_decay, label), s in rows.items():
        if label.startswith("SDE"):
            assert s.returned == 0, (lr, weight_decay, label)


def test_collapse_to_zero_and_most_blow_ups_are_fixed_step_artefacts(grid, rows):
    hot = 0.3, 0.027
    em = rows[(*hot, "SDE, dt = η/16")]
    assert em.diverged / em.n_runs > 0.5 and em.collapsed == em.bounded_end > 0
    for (lr, weight_decay, label), s in rows.items():
        if "adaptive" in label:
            assert s.collapsed == 0, (lr, weight_decay, label)
    by = {(h.lr, h.weight_decay, h.integrator, h.m): h for h in B.hazard_rows(grid)}
    for lr, weight_decay in (hot, (0.3, 0.02)):
        for m in B.EM_STEPS:
            e, a = by[(lr, weight_decay, "EM", m)], by[(lr, weight_decay, "adaptive", m)]
            ratio = B.rate_ratio(e.events, e.exposure, a.events, a.exposure)
            assert ratio[1] > 1, (lr, weight_decay, m)  # the EM rate is higher, at 95 %


def test_the_adaptive_answer_does_not_change_with_the_step(grid):
    by = {(h.lr, h.weight_decay, h.integrator, h.m): h for h in B.hazard_rows(grid)}
    for lr, weight_decay in ((0.3, 0.027), (0.2, 0.027), (0.3, 0.02)):
        a, b = by[(lr, weight_decay, "adaptive", 4)], by[(lr, weight_decay, "adaptive", 64)]
        q = B.mean_ratio(a.jumped, a.wait[0], b.jumped, b.wait[0])
        assert q[1] <= 1 <= q[2], (lr, weight_decay)  # the ratio's 95 % interval holds 1


def test_gaussian_sgd_at_the_same_step_jumps_far_faster_than_sgd(rows):
    sgd, gauss = rows[(0.3, 0.027, "SGD")], rows[(0.3, 0.027, "Gaussian SGD (dt = η)")]
    pm = rows[(0.3, 0.027, "±1-weight SGD (dt = η)")]
    assert gauss.wait[2] < sgd.wait[1] and pm.wait[2] < sgd.wait[1]
    bern = rows[(0.3, 0.027, "Bernoulli-weight SGD (dt = η)")]  # nonnegative, not one-hot: slower than SGD
    assert bern.wait[1] > sgd.wait[2]


def test_langevin_is_never_in_B1(rows):
    for (lr, weight_decay, label), s in rows.items():
        if label.startswith("Langevin"):
            assert s.frac_B1[0] == 0.0, (lr, weight_decay, label)


def test_kstar_table_grows_as_eta_and_gamma_shrink(grid):
    rows = E.kstar_rows(grid)
    assert len(rows) == 12
    by = {(r.lr, r.weight_decay): r for r in rows}
    assert all(r.kstar_row0 > 0 and r.kstar_col1 > 0 for r in rows)
    for lr in (0.2, 0.25, 0.3):
        assert by[(lr, 0.02)].kstar_row0 > by[(lr, 0.0235)].kstar_row0 > by[(lr, 0.027)].kstar_row0
    for weight_decay in (0.02, 0.0235, 0.027):
        assert by[(0.2, weight_decay)].kstar_row0 >= by[(0.3, weight_decay)].kstar_row0
    for r in rows:  # cells predicted far beyond the budget show no jump
        if r.predicted_either > 100 * 64 * 100_000:
            assert r.jumped == 0


def test_exercises_have_worked_answers_and_hints_without_the_answer():
    for ex in EXERCISES.values():
        assert ex.check(ex.solution).correct, ex.name
        assert ex.worked.strip() and ex.hint.strip(), ex.name
        for value, _ in ex.mistakes:
            assert not ex.check(value).correct
        sol = ex.solution
        if isinstance(sol, (int, float)):
            for text in (f"{sol:g}", f"{sol:.3g}", f"{sol:.4g}"):
                assert text not in ex.hint, (ex.name, text)
        else:
            assert str(sol) not in ex.hint


def test_compare_point_is_deterministic():
    a = E.compare_point(t_max=150.0, n_runs_sde=2, n_runs_sgd=2, n_runs_langevin=1)
    b = E.compare_point(t_max=150.0, n_runs_sde=2, n_runs_sgd=2, n_runs_langevin=1)
    assert np.array_equal(a.sde.final.flat, b.sde.final.flat)
    assert a.summaries["sde"].n_runs == 2
    with pytest.raises(ValueError):
        E.compare_point(lr=-1.0)


def test_compare_point_counts_the_runs_at_rank_one_and_the_blown_up_ones():
    r = E.compare_point(t_max=150.0, n_runs_sde=2, n_runs_sgd=2, n_runs_langevin=1)
    for key in ("sgd", "sde", "langevin"):
        res = getattr(r, key)
        t, frac = r.low_rank_fraction(key)
        s2 = res.singular_values[:, :, 1]
        assert t == res.times.tolist() and len(frac) == len(t)
        assert frac == [float(np.mean([math.isfinite(v) and v <= DEFAULT_RANK_TOL for v in column])) for column in s2.T]
    t, blown = r.sde_blown_up
    assert t == r.sde.times.tolist() and blown[0] == 0.0
    # by the end, the fraction blown up is that of the runs the engine marked diverged (its own record)
    assert blown[-1] == np.mean(r.sde.diverged_step >= 0)
    assert blown == sorted(blown)  # a run that blew up stays blown up


def test_kstar_grid_tabulates_each_route_over_eta_and_gamma(grid):
    rows = E.kstar_rows(grid)
    for route in ("row0", "col1"):
        lrs, weight_decays, z = E.kstar_grid(rows, route)
        assert lrs == sorted({r.lr for r in rows}) and weight_decays == sorted({r.weight_decay for r in rows})
        for r in rows:
            assert z[lrs.index(r.lr)][weight_decays.index(r.weight_decay)] == getattr(r, f"kstar_{route}")
    Row = type("Row", (), {})
    one = Row()
    one.lr, one.weight_decay, one.kstar_row0 = 0.3, 0.02, 5
    other = Row()
    other.lr, other.weight_decay, other.kstar_row0 = 0.2, 0.027, 7
    assert E.kstar_grid([one, other]) == ([0.2, 0.3], [0.02, 0.027], [[None, 7], [5, None]])


def test_continuation_norms_are_the_stored_traces_with_gaps_after_a_blow_up(grid):
    t, norms = B.continuation_norms(grid)
    cont = next(task["result"] for task in grid.tasks if task["kind"] == "continuation")
    np.testing.assert_array_equal(t, cont["trace_t"])
    for key in ("em", "adaptive"):
        stored = cont[f"trace_{key}"]
        assert norms[key].shape == (len(stored), len(t))
        assert np.array_equal(np.isnan(norms[key]), [[v is None for v in row] for row in stored])
    assert B.continuation_norms(E.SdeGrid("empty", (), 0.0, "")) is None


#: Small live comparisons reaching each kind of E.COMPARE_OUTCOMES (t = 30: nothing jumps yet; m = 4: EM's
#: divergence rule stops SDE runs at the hot point).
COMPARE_SMALL = {"no_jump": dict(t_max=30.0, n_runs_sde=2, n_runs_sgd=2, n_runs_langevin=1),
                 "jumped": dict(t_max=300.0, n_runs_sde=3, n_runs_sgd=3, n_runs_langevin=2),
                 "stopped": dict(t_max=300.0, m=4, n_runs_sde=6, n_runs_sgd=2, n_runs_langevin=1)}


@pytest.mark.parametrize("kind", sorted(COMPARE_SMALL))
def test_compare_point_outcome_is_decided_from_the_runs(kind):
    r = E.compare_point(**COMPARE_SMALL[kind])
    assert r.outcome.kind == kind and kind in E.COMPARE_OUTCOMES
    n = r.outcome.numbers
    # the counts, from the runs themselves (not from the summaries the outcome was built from)
    live = ("sgd", "sde", "langevin")
    stopped = {d: int(np.sum(getattr(r, d).diverged_step >= 0)) for d in live}
    with np.errstate(invalid="ignore"):  # a stopped run's records are NaN: never at rank ≤ 1
        jumped = {d: int(np.sum(np.any(getattr(r, d).singular_values[:, :, 1] <= DEFAULT_RANK_TOL, axis=1)))
                  for d in live}
    for d in live:
        assert n[f"{d}_runs"] == getattr(r, d).diverged_step.shape[0] == r.summaries[d].n_runs
        assert n[f"{d}_diverged"] == stopped[d] and n[f"{d}_wait"] == tuple(r.summaries[d].wait)
        assert n[f"{d}_returned"] == r.summaries[d].returned
    expected = "stopped" if sum(stopped.values()) else ("jumped" if sum(jumped.values()) else "no_jump")
    assert r.outcome.kind == expected and r.outcome.failure == (expected != "jumped")


def test_compare_outcome_classifies_constructed_summaries():
    def summary(jumped=0, diverged=0):
        return E.EnsembleSummary(n_runs=4, jumped=jumped, wait=(math.inf, 10.0, math.inf), returned=0,
                                 returned_ci=(0.0, 0.0, 1.0), diverged=diverged, collapsed=0, frac_B1=(0.0, 0.0),
                                 log10_s2_hist=())

    quiet = {"sgd": summary(), "sde": summary(), "langevin": summary()}
    assert E.compare_outcome(quiet).kind == "no_jump"
    assert E.compare_outcome({**quiet, "langevin": summary(jumped=1)}).kind == "jumped"
    assert E.compare_outcome({**quiet, "sgd": summary(jumped=2, diverged=1)}).kind == "stopped"
    assert E.compare_outcome({**quiet, "sde": summary(jumped=3)}).numbers["sde_jumped"] == 3
