"""Notebook 05 §3.2's controls (:mod:`symsgd_core.sde_noise.controls`) and their claims
(:func:`symsgd_core.sde_noise.claims.control_claims`): the step laws against closed forms and Monte Carlo, the
per-run events on known records, the task against the grid's task, the pooled rows, and the claims on the stored
control runs and on broken copies."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from symsgd_core.core.conventions import Z_MC
from symsgd_core.dln.problems import epsilon_completion
from symsgd_core.dln.sde import sde_noise_scale
from symsgd_core.rank_jumps.analysis import loss_hessian_top_eigenvalue
from symsgd_core.sde_noise import claims as sc
from symsgd_core.sde_noise import controls as C
from symsgd_core.sde_noise import experiments as sx

GAMMA = sx.HOT[1]
N = 3


@pytest.fixture(scope="module")
def laws():
    return C.step_laws()


@pytest.fixture(scope="module")
def minimum():
    problem = epsilon_completion(0.2)
    start = sx._start(GAMMA)
    return problem, start, loss_hessian_top_eigenvalue(start, problem, GAMMA), C.entry_hessians(start, problem)


@pytest.fixture(scope="module")
def stored():
    tasks = tuple(t for t in sx.load_grid().tasks if t["kind"] == "dynamics_events")
    assert len(tasks) == len(C.control_tasks())  # the shipped grid holds every control task
    return tasks


@pytest.fixture(scope="module")
def ctl(stored):
    return C.report(stored, sx.load_grid())


# ----------------------------------------------------------------------------------------------- one step
def test_stability_rule_is_gd_at_total_eta():
    lam = 4.0
    for lr in (0.1, 0.3):  # W = η: W(λ − 2γ) + 2γη = ηλ, GD's rule
        assert C.step_is_stable(lr, lr, lam, GAMMA) == (lr * lam < 2)
    edge = 2 / lam
    assert C.step_is_stable(edge * (1 - 1e-9), edge * (1 - 1e-9), lam, GAMMA)
    assert not C.step_is_stable(edge * (1 + 1e-9), edge * (1 + 1e-9), lam, GAMMA)
    with pytest.raises(ValueError):
        C.step_is_stable(-1.0, 0.3, lam, GAMMA)


def test_largest_stable_lr_is_the_bernoulli_boundary(minimum):
    problem, start, lam, hess = minimum
    eta = C.largest_stable_lr(N, lam, GAMMA)
    assert 0.15 < eta < 0.3
    assert abs(N * eta * (lam - 2 * GAMMA) + 2 * GAMMA * eta - 2) < 1e-12
    for S in (1, 2):
        kw = dict(problem=problem, start=start, lam_max=lam, hessians=hess)
        assert C.step_law("bernoulli", eta * (1 - 1e-6), S, GAMMA, **kw).largest_stable
        assert not C.step_law("bernoulli", eta * (1 + 1e-6), S, GAMMA, **kw).largest_stable


@pytest.mark.parametrize("S", [1, 2])
def test_bernoulli_total_weight_is_binomial_and_matches_the_runner_draws(laws, S):
    s = laws[("bernoulli", 0.3, S)]
    j = np.arange(N * S + 1)
    assert np.allclose(s.totals, 0.3 * j / S) and math.isclose(sum(s.probs), 1.0, abs_tol=1e-14)
    assert np.allclose(s.probs, stats.binom.pmf(j, N * S, 1 / N), rtol=1e-13, atol=0)
    assert math.isclose(s.largest_total, N * 0.3) and math.isclose(s.p_largest, (1 / N) ** (N * S))
    # the runner's draw (sde._run_weighted): w = η/S · Binomial(S, 1/N) per entry; its total's frequencies
    n = 200_000
    tot = np.random.default_rng(0).binomial(S, 1 / N, size=(n, N)).sum(axis=1)
    freq = np.bincount(tot, minlength=N * S + 1) / n
    se = np.sqrt(np.asarray(s.probs) * (1 - np.asarray(s.probs)) / n)
    assert np.all(np.abs(freq - s.probs) <= Z_MC * se + 1e-12)


def test_pattern_curvature_of_equal_weights_is_the_loss_hessian(minimum):
    problem, start, lam, hess = minimum
    assert hess.shape == (N, start.arch.n_params, start.arch.n_params)
    for W, lr in ((0.3, 0.3), (0.9, 0.3), (0.45, 0.15)):
        # W/N on every entry is a full-gradient step of size W: λ_max(W ∇²𝓛_0) + 2γη = W(λ_max − 2γ) + 2γη
        expected = W * (lam - 2 * GAMMA) + 2 * GAMMA * lr
        assert math.isclose(C.pattern_curvature(np.full(N, W / N), hess, lr, GAMMA), expected, rel_tol=1e-6)
    with pytest.raises(ValueError):
        C.pattern_curvature(np.ones(N + 1), hess, 0.3, GAMMA)


def test_discrete_patterns(laws):
    for S in (1, 2):
        w, p = C._patterns("sgd", 0.3, N, S)
        assert math.isclose(p.sum(), 1.0) and np.allclose(w.sum(axis=1), 0.3) and w.min() >= 0
    w, p = C._patterns("sgd", 0.3, N, 2)
    assert len(w) == 6  # (2,0,0)×3 with 1/9, (1,1,0)×3 with 2/9
    assert sorted(np.round(p * 9).astype(int).tolist()) == [1, 1, 1, 2, 2, 2]
    for lr, S in ((0.3, 1), (0.3, 2), (0.15, 1)):
        w, p = C._patterns("rademacher", lr, N, S)
        assert len(w) == 2 ** N and np.allclose(w.sum(axis=1), lr)
        c = sde_noise_scale(lr, lr, N, S)
        assert math.isclose(laws[("rademacher", lr, S)].min_weight, lr / N - c * (2 * N - 2) / N, rel_tol=1e-12)
    gauss = laws[("gaussian", 0.3, 1)]
    assert gauss.min_weight == -math.inf and math.isnan(gauss.p_unstable_pattern)
    with pytest.raises(ValueError):
        C._patterns("gaussian", 0.3, N, 1)
    with pytest.raises(ValueError):
        C.step_law("uniform", 0.3)


def test_step_laws_numbers(laws):
    b3, b15 = laws[("bernoulli", 0.3, 1)], laws[("bernoulli", 0.15, 1)]
    assert not b3.largest_stable and b15.largest_stable
    assert math.isclose(b3.p_unstable_total, 7 / 27, abs_tol=1e-14)  # 2 or 3 entries of 3 at η = 0.3
    assert b15.p_unstable_total == 0 and b15.p_unstable_pattern == 0
    for lr, S in C.CONTROL_POINTS:  # SGD, Gaussian and ±1 weigh exactly η in all
        for law in ("sgd", "gaussian", "rademacher"):
            assert laws[(law, lr, S)].totals == (lr,) and laws[(law, lr, S)].largest_stable
    assert laws[("sgd", 0.3, 1)].max_curvature > 2 > laws[("sgd", 0.15, 1)].max_curvature


# ----------------------------------------------------------------------------------------------- events of a run
def test_run_events_on_known_records():
    tol = 1e-3
    t = np.array([0.0, 15.0, 30.0, 45.0])
    sv = np.array([
        [[2.0, 0.3], [2.0, 0.3], [2.0, 0.3], [2.0, 0.3]],          # never low
        [[2.0, 0.3], [2.0, 0.3], [1.5, 1e-9], [1.5, 1e-9]],        # rank-1 fit at 30
        [[2.0, 0.3], [1e-4, 1e-9], [0.0, 0.0], [0.0, 0.0]],        # A ≈ 0 at 15, no fit
        [[2.0, 0.3], [0.5, 1e-9], [0.3, 0.0], [1e-5, 0.0]],        # fit at 15, A ≈ 0 at 45
        [[2.0, 0.3], [np.nan, np.nan], [np.nan, np.nan], [np.nan, np.nan]],  # diverged
    ])
    ev = C.run_events(sv, t, tol)
    assert ev["t_jump_fit"] == [None, 30.0, None, 15.0, None]
    assert ev["t_collapse"] == [None, None, 15.0, 45.0, None]
    assert ev["s1_at_jump"] == [None, 1.5, 1e-4, 0.5, None]
    with pytest.raises(ValueError):
        C.run_events(sv[:, :3], t, tol)


def test_events_task_is_the_dynamics_task_plus_events():
    p = dict(method="gaussian_sgd", lr=0.3, weight_decay=GAMMA, n_runs=2, t_max=60.0, rec_dt=15.0, seed=1,
             increments="bernoulli")
    a, b = C.dynamics_events_task(p), sx.dynamics_task(p)
    for key in b:
        if key != "seconds":
            assert a[key] == b[key], key
    assert all(len(a[k]) == 2 for k in C.EVENT_KEYS)
    with pytest.raises(ValueError):
        C.dynamics_events_task({**p, "method": "langevin"})


def test_control_tasks():
    tasks = C.control_tasks()
    assert len(tasks) == 12 * 2 + 6 * 4 and all(k == "dynamics_events" for k, _ in tasks)
    assert len({str(sorted(p.items())) for _, p in tasks}) == len(tasks)
    assert not set(C.GRID_SEEDS) & set(C.FRESH_SEEDS)
    grid = sx.load_grid()
    for _, p in tasks:  # every task on the grid's seeds has exactly one stored twin
        if p["seed"] in C.GRID_SEEDS:
            sel = {"S": 1, "m": 1, "increments": "gaussian", **{k: v for k, v in p.items() if k not in ("n_runs",
                                                                                                          "rec_dt")}}
            assert len(grid.select("dynamics", **sel)) == 1, p
    # the nonnegative control at a step where every one of its steps is stable, with at least 64 runs
    lam = loss_hessian_top_eigenvalue(sx._start(GAMMA), epsilon_completion(0.2), GAMMA)
    stable = [p for _, p in tasks if p.get("increments") == "bernoulli" and p.get("S", 1) == 1
              and p["lr"] < C.largest_stable_lr(N, lam, GAMMA)]
    assert sum(p["n_runs"] for p in stable) >= 64


# ----------------------------------------------------------------------------------------------- pooled rows
def _result(t_jump, t_fit, t_collapse, s1, t_div=None, t_max=100.0):
    n = len(t_jump)
    return {"n_runs": n, "t_max": t_max, "t_jump": t_jump, "t_jump_fit": t_fit, "t_collapse": t_collapse,
            "s1_at_jump": s1, "t_diverged": t_div or [None] * n,
            "collapsed_end": [c is not None for c in t_collapse]}


def _tasks(results, law="bernoulli", lr=0.3, S=1):
    out = []
    for seed, r in enumerate(results, start=1):
        p = dict(method="gaussian_sgd", lr=lr, weight_decay=GAMMA, seed=seed, increments=law)
        if S != 1:
            p["S"] = S
        out.append({"kind": "dynamics_events", "params": p, "result": r})
    return out


def test_control_rows_split_and_censor():
    r = _result([10.0, 5.0, None, 20.0], [10.0, None, None, 20.0], [None, 5.0, None, 60.0], [1.5, 1e-4, None, 0.8],
                t_div=[None, None, 50.0, None])
    row = C.control_rows(_tasks([r]))[("bernoulli", 0.3, 1)]
    assert (row.n_runs, row.jumped, row.fit_first, row.collapse_first) == (4, 3, 2, 1)
    assert (row.jumped_fit, row.collapsed, row.fit_then_collapsed, row.collapsed_end, row.diverged) == (2, 2, 1, 2, 1)
    # time at risk: the fits at 10 and 20, the collapse at 5 and the blow-up at 50 end the others
    assert row.events_fit == 2 and math.isclose(row.exposure_fit, 10 + 5 + 50 + 20)
    assert math.isclose(row.min_s1_at_jump, 1e-4) and row.seeds == (1,)
    assert C.control_rows(_tasks([r, r]), seeds=(2,))[("bernoulli", 0.3, 1)].n_runs == 4
    with pytest.raises(ValueError):
        C.control_rows(_tasks([{k: v for k, v in r.items() if k != "t_jump_fit"}]))


def test_fixed_temperature_ratio_and_tables(laws):
    a = _result([10.0] * 4 + [None] * 4, [10.0] * 4 + [None] * 4, [None] * 8, [1.0] * 4 + [None] * 4)
    b = _result([10.0] + [None] * 7, [10.0] + [None] * 7, [None] * 8, [1.0] + [None] * 7)
    rows = C.control_rows(_tasks([a], "rademacher", 0.15, 1) + _tasks([b], "rademacher", 0.3, 2))
    q = C.fixed_temperature_ratio(rows, "rademacher")
    assert math.isclose(q[0], (4 / (40 + 400)) / (1 / (10 + 700))) and q[1] < q[0] < q[2]
    tables = C.report_tables(laws, rows, rows)
    assert set(tables) == {"steps", "runs", "fixed_T"}
    assert len(tables["steps"].rows) == len(laws) and len(tables["runs"].rows) == 4 and len(tables["fixed_T"].rows) == 1
    assert all(len(r) == len(t.columns) for t in tables.values() for r in t.rows)
    assert tables["fixed_T"].text().splitlines()[0] == tables["fixed_T"].title


# ----------------------------------------------------------------------------------------------- the stored runs
def test_stored_control_runs_are_the_grid_runs(stored):
    grid = sx.load_grid()
    assert C.grid_mismatches(stored, grid) == 0
    broken = [{**t, "result": {**t["result"], "t_jump": [None] * t["params"]["n_runs"]}} if i == 0 else t
              for i, t in enumerate(stored)]
    assert C.grid_mismatches(broken, grid) > 0


def test_report_tables_of_the_stored_runs(ctl):
    assert len(ctl.tables["runs"].rows) == len(ctl.rows) + len(ctl.grid_rows) == 24
    b = ctl.grid_rows[("bernoulli", 0.3, 1)]
    assert b.jumped == b.fit_first + b.collapse_first and b.n_runs == 64
    text = ctl.text()
    assert all(t.title in text for t in ctl.tables.values()) and f"< {ctl.largest_stable_lr:.3f}" in text
    assert all(r.n_runs == 192 for (law, lr, S), r in ctl.rows.items()
               if (lr, S) == (0.15, 1) or (law in ("gaussian", "rademacher") and (lr, S) == (0.3, 2)))


def test_control_claims_pass_on_the_stored_runs(ctl):
    rows = sc.control_claims(ctl)
    assert rows and all(r.passed for r in rows), [r.name for r in rows if not r.passed]
    assert all(r.tolerance == 0 or abs(r.tolerance) > 1e-300 for r in rows)  # no denormal "tolerance 4.94e-324"


def _failed(ctl, **changes) -> set:
    return {r.name for r in sc.control_claims(dataclasses.replace(ctl, **changes)) if not r.passed}


def test_control_claims_fail_on_broken_copies(ctl):
    def row(which, key, **changes):
        rows = getattr(ctl, which)
        return {which: {**rows, key: dataclasses.replace(rows[key], **changes)}}

    assert _failed(ctl, mismatches=1) == {"sde_noise.controls.same_runs"}
    assert "sde_noise.controls.bern_hot_collapses" in _failed(ctl, **row("grid_rows", ("bernoulli", 0.3, 1),
                                                                       collapsed=0, fit_then_collapsed=0))
    assert "sde_noise.controls.bern_hot_fit_then_zero" in _failed(ctl, **row("grid_rows", ("bernoulli", 0.3, 1),
                                                                           jumped_fit=0))
    assert "sde_noise.controls.fit_first" in _failed(ctl, **row("rows", ("sgd", 0.3, 1), collapse_first=1))
    assert "sde_noise.controls.bern_015_jumps" in _failed(ctl, **row("rows", ("sgd", 0.15, 1), jumped_fit=10))
    assert "sde_noise.controls.bern_015_no_collapse" in _failed(ctl, **row("rows", ("bernoulli", 0.15, 1),
                                                                         collapsed=1))
    # swap the ±1 (and the Gaussian) rows of the two T = 0.15 points: both fixed-T claims turn
    r = ctl.rows
    swapped = dict(r)
    for law in ("rademacher", "gaussian"):
        swapped[(law, 0.15, 1)], swapped[(law, 0.3, 2)] = r[(law, 0.3, 2)], r[(law, 0.15, 1)]
    assert {"sde_noise.controls.fixedT_pm", "sde_noise.controls.fixedT_gauss"} <= _failed(ctl, rows=swapped)
    # a wrong stability (λ_max too small) or a wrong law of the steps
    laws = ctl.laws
    b3 = laws[("bernoulli", 0.3, 1)]
    assert "sde_noise.controls.bern_hot_unstable" in _failed(ctl, laws={**laws, ("bernoulli", 0.3, 1):
                                                                       dataclasses.replace(b3, stability=1.5)})
    one_in_27 = dataclasses.replace(b3, p_unstable_total=1 / 27)  # only the largest step counted
    assert "sde_noise.controls.bern_hot_p_unstable" in _failed(ctl, laws={**laws, ("bernoulli", 0.3, 1): one_in_27})
    b15 = laws[("bernoulli", 0.15, 1)]
    assert "sde_noise.controls.bern_stable_015" in _failed(ctl, laws={**laws, ("bernoulli", 0.15, 1):
                                                                     dataclasses.replace(b15, max_curvature=2.0)})
