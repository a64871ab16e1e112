"""The adaptive-step SDE integrator (sde_noise.adaptive) and the blow-up measurements (sde_noise.blowup):
fixed-step mode is Euler–Maruyama on the same normals, the step is predictable, seeds, events, bad input, the
law check (and its broken scheme), the Bernoulli control, the hazard table on known inputs."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import rank_jumps as rj
from symsgd_core.dln import sde
from symsgd_core.dln.adaptive import STALL_STEP, run_sde_adaptive
from symsgd_core.dln.network import Params, replicate
from symsgd_core.dln.stepping import DIVERGENCE, DIVERGENCE_RESIDUAL
from symsgd_core.sde_noise.blowup import continuation_task, hazard_rows, pre_blowup_states
from symsgd_core.sde_noise.checks import check_sde_adaptive_matches_em
from symsgd_core.sde_noise.experiments import summarize_runs

PROBLEM = rj.epsilon_completion(0.2)
LR, WEIGHT_DECAY = 0.3, 0.027
EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def start():
    return replicate(rj.start_minimum(weight_decay=WEIGHT_DECAY)[0], 3)


def test_fixed_step_mode_is_euler_maruyama_on_the_same_normals(start):
    n, dt = 100, LR / 4
    xi = np.random.default_rng(0).standard_normal((3, n, PROBLEM.n_observed))
    em = sde.run_sde(start, PROBLEM, n, lr=LR, weight_decay=WEIGHT_DECAY, dt=dt, xi=xi, record_every=25,
                     engine="reference")
    ad = run_sde_adaptive(start, PROBLEM, n * dt, lr=LR, weight_decay=WEIGHT_DECAY, h_max=dt, rho=0.0, xi=xi,
                          record_dt=25 * dt)
    assert ad.event == ("none",) * 3 and np.all(ad.n_steps == n) and np.all(ad.n_reduced == 0)
    scale = np.max(np.abs(em.final.flat))
    # round-off: 64·(steps)·(terms per entry)·eps, relative to the largest parameter
    assert np.max(np.abs(em.final.flat - ad.result.final.flat)) <= 64 * n * 160 * EPS * scale
    np.testing.assert_allclose(ad.result.times, em.times, rtol=1e-12)
    np.testing.assert_allclose(ad.result.singular_values, em.singular_values, rtol=1e-9, atol=1e-12)


def test_same_seed_same_numbers_and_runs_independent_of_the_ensemble(start):
    kw = dict(lr=LR, weight_decay=WEIGHT_DECAY, h_max=LR / 4, rho=0.05, seed=4, record_dt=3.0)
    a = run_sde_adaptive(start, PROBLEM, 6.0, **kw)
    assert np.array_equal(a.result.final.flat, run_sde_adaptive(start, PROBLEM, 6.0, **kw).result.final.flat)
    one = run_sde_adaptive(start.select([0]), PROBLEM, 6.0, **kw)
    assert np.array_equal(a.result.final.flat[:1], one.result.final.flat)
    assert not np.array_equal(a.result.final.flat[0], a.result.final.flat[1])
    other = run_sde_adaptive(start, PROBLEM, 6.0, **{**kw, "seed": 5})
    assert not np.array_equal(a.result.final.flat, other.result.final.flat)


def test_the_step_depends_on_theta_only_never_on_its_own_draw(start):
    big = Params(start.arch, 1.6 * start.flat[:1])  # a larger θ: the rule shortens the first step
    rng = np.random.default_rng(1)
    firsts = []
    for _ in range(3):
        xi = rng.standard_normal((1, 1, PROBLEM.n_observed))  # one step of normals: the path stops after it
        r = run_sde_adaptive(big, PROBLEM, 1.0, lr=LR, weight_decay=WEIGHT_DECAY, h_max=LR / 4, rho=0.05, xi=xi,
                             record_dt=1.0)
        assert r.n_steps[0] == 1 and r.n_reduced[0] == 1 and r.event == ("budget",)
        firsts.append(r.min_h[0])
    assert firsts[0] < LR / 4 and firsts[0] == firsts[1] == firsts[2]


def test_shortened_steps_still_land_on_the_record_times(start):
    r = run_sde_adaptive(start, PROBLEM, 7.5, lr=LR, weight_decay=WEIGHT_DECAY, h_max=LR / 4, rho=0.005, seed=0,
                         record_dt=2.5)
    np.testing.assert_array_equal(r.result.times, [0.0, 2.5, 5.0, 7.5])
    assert np.all(r.n_reduced > 0) and r.event == ("none",) * 3


def test_a_path_that_leaves_is_stopped_and_reported(start):
    far = Params(start.arch, 3.0 * start.flat[:2])  # ‖θ‖ ≈ 8, residuals ≈ 80: the rule needs tiny steps
    r = run_sde_adaptive(far, PROBLEM, 30.0, lr=LR, weight_decay=WEIGHT_DECAY, h_max=LR / 4, rho=0.05, seed=0,
                         record_dt=15.0, escape_norm=5.0)
    for k in range(2):
        assert r.event[k] in ("stall", "none")
        assert np.isfinite(r.t_escape[k]) and r.t_escape[k] == 0.0  # it starts above ‖θ‖ = 5
        if r.event[k] == "stall":
            assert np.isfinite(r.t_event[k]) and r.min_h[k] < STALL_STEP
            assert np.all(np.isnan(r.result.singular_values[k, 1 + int(r.t_event[k] // 15.0):]))


def test_bad_input_gets_a_clear_error(start):
    with pytest.raises(ValueError, match="broken"):
        run_sde_adaptive(start, PROBLEM, 1.0, lr=LR, weight_decay=WEIGHT_DECAY, h_max=0.1, broken="nope")
    with pytest.raises(ValueError, match="xi must be"):
        run_sde_adaptive(start, PROBLEM, 1.0, lr=LR, weight_decay=WEIGHT_DECAY, h_max=0.1, xi=np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match="t_end"):
        run_sde_adaptive(start, PROBLEM, 0.0, lr=LR, weight_decay=WEIGHT_DECAY, h_max=0.1)
    with pytest.raises(ValueError, match="h_max"):
        run_sde_adaptive(start, PROBLEM, 1.0, lr=LR, weight_decay=20.0, h_max=0.1)
    with pytest.raises(ValueError, match="finite"):
        run_sde_adaptive(Params(start.arch, np.full_like(start.flat, np.nan)), PROBLEM, 1.0, lr=LR,
                         weight_decay=WEIGHT_DECAY, h_max=0.1)


@pytest.mark.slow
@pytest.mark.parametrize("broken", [None, "noise_at_h_max"])
def test_the_adaptive_scheme_has_the_sdes_law_and_a_wrong_scheme_fails(broken):
    r = check_sde_adaptive_matches_em(seed=0, broken=broken)
    assert r.details["reduced_fraction"] >= 0.25  # the rule was exercised
    assert r.passed == (broken is None), r


def test_bernoulli_weights_are_nonnegative_independent_and_compiled_equals_reference(start):
    kw = dict(lr=LR, weight_decay=WEIGHT_DECAY, seed=3, record_every=10, increments="bernoulli")
    a = sde.run_gaussian_sgd(start, PROBLEM, 40, **kw)
    b = sde.run_gaussian_sgd(start, PROBLEM, 40, engine="reference", **kw)
    assert np.max(np.abs(a.final.flat - b.final.flat)) <= 64 * 40 * 160 * EPS * np.max(np.abs(a.final.flat))
    with pytest.raises(ValueError, match="bernoulli"):
        sde.run_sde(start, PROBLEM, 4, lr=LR, weight_decay=WEIGHT_DECAY, dt=LR / 2, increments="bernoulli")
    # the law: w_k = η n_k / S, n_k ~ Binomial(S, 1/N) independent: never negative, SGD's marginal mean and
    # variance, and (unlike SGD's one-hot weights) a step can weigh 0 or several entries
    rng = np.random.default_rng(0)
    w = LR / 2 * rng.binomial(2, 1 / 3, size=(200_000, 3))
    assert np.all(w >= 0) and np.any(w.sum(axis=1) == 0) and np.any(w.sum(axis=1) > LR)


class _Grid:
    def __init__(self, tasks):
        self.tasks = tasks

    def select(self, kind, **params):
        defaults = {"m": 1, "S": 1, "increments": "gaussian"}
        return [t["result"] for t in self.tasks if t["kind"] == kind
                and all({**defaults, **t["params"]}.get(k) == v for k, v in params.items())]


def _task(method, m, t_div, t_max, rho=None, t_escape=None):
    p = dict(method=method, lr=0.3, weight_decay=0.027, m=m, t_max=t_max)
    if rho is not None:
        p["rho"] = rho
    r = {"t_diverged": t_div, "t_max": t_max, "t_jump": [None] * len(t_div)}
    if t_escape is not None:
        r["t_escape"] = t_escape
    return {"kind": "dynamics", "params": p, "result": r}


def test_hazard_rows_count_events_on_the_horizon_only():
    grid = _Grid([_task("sde", 16, [100.0, 5000.0, None], 12_000.0),
                  _task("sde_adaptive", 16, [None, 2000.0, None], 3000.0, rho=0.05,
                        t_escape=[10.0, 1500.0, None])])
    rows = {(r.integrator, r.m): r for r in hazard_rows(grid, horizon=3000.0)}
    em, ad = rows[("EM", 16)], rows[("adaptive", 16)]
    assert (em.events, em.exposure) == (1, 100.0 + 3000.0 + 3000.0)  # the blow-up at 5000 is past the horizon
    assert em.rate[1] < 1e3 / em.exposure < em.rate[2] and em.rate[0] == pytest.approx(1e3 / em.exposure)
    assert (ad.events, ad.exposure, ad.escaped, ad.escaped_back) == (1, 2000.0 + 6000.0, 2, 1)
    assert ("EM", 4) not in rows  # no task, no row
    assert em.jumped == 0 and em.wait[0] == float("inf")


def test_the_long_run_s2_over_rank_one_fits_leaves_collapsed_runs_out():
    res = {"t_jump": [1.0, 2.0], "t_return": [None, None], "t_diverged": [None, None], "n_runs": 2, "t_max": 10.0,
           "collapsed_end": [True, False], "log10_s2_hist": [5, 0, 5], "log10_s2_hist_fit": [0, 0, 5]}
    s = summarize_runs([res])
    assert s.collapsed == 1 and s.bounded_end == 2
    assert s.log10_s2_quantile(0.5, fit_only=True) > s.log10_s2_quantile(0.05)
    old = summarize_runs([{k: v for k, v in res.items() if k != "log10_s2_hist_fit"}])
    assert old.log10_s2_hist_fit is None and np.isnan(old.log10_s2_quantile(0.5, fit_only=True))


def _residual(params):
    rows, cols, vals = PROBLEM.entries
    return params.end_to_end()[:, rows, cols] - vals


@pytest.fixture(scope="module")
def brink():
    """Two copies of the rank-1 minimum with every layer ×5: residuals ≈ 565, within the rule, and one EM step
    from it (any noise) lands far beyond it (≈ 1e14): the engine flags the step after."""
    s = rj.start_minimum(weight_decay=WEIGHT_DECAY)[0]
    return Params(s.arch, np.repeat(s.flat[:1] * 5.0, 2, axis=0))


def test_a_blow_up_on_a_segments_last_step_keeps_that_segments_start(brink):
    # one-step segments: the step from `brink` lands beyond the rule but is flagged only in the next segment, whose
    # start (the old "state before") already violates the rule
    dt = LR / 16
    assert not DIVERGENCE.exceeded(_residual(brink), axis=1).any()
    states, leads = pre_blowup_states(brink, PROBLEM, LR, WEIGHT_DECAY, dt, 1, 0, 1.0, 5)
    assert len(states) == 2 and leads == [2 * dt, 2 * dt]
    for state in states:
        assert not DIVERGENCE.exceeded(_residual(state), axis=1).any()
        np.testing.assert_array_equal(state.flat, brink.flat[:1])
    # longer segments: flagged within the segment, the same states and leads
    states3, leads3 = pre_blowup_states(brink, PROBLEM, LR, WEIGHT_DECAY, dt, 3, 0, 1.0, 5)
    assert leads3 == leads and all(np.array_equal(a.flat, b.flat) for a, b in zip(states3, states))
    with pytest.raises(ValueError, match="already violates"):
        pre_blowup_states(Params(brink.arch, brink.flat * 10.0), PROBLEM, LR, WEIGHT_DECAY, dt, 1, 0, 1.0, 5)


@pytest.mark.slow
def test_continuations_start_just_before_fixed_step_blow_ups():
    dt, seg = 0.3 / 16, 27
    out = continuation_task(dict(lr=0.3, weight_decay=0.027, m=16, rho=0.05, seed=21, n_runs=16, t_max=600.0,
                                 rec_dt=seg * dt, n_states=2, n_cont=3, cont_t=1.0, cont_rec=0.25))
    assert out["n_states"] == 2 and all(2 * dt <= lead <= (seg + 1) * dt for lead in out["lead"])
    # every kept state is within the divergence rule (the old off-by-one kept states beyond it)
    assert all(0.0 <= r <= DIVERGENCE_RESIDUAL for r in out["state_residual"])
    # the counts are those of the traces: a continuation that blew up has no norm at its last record
    pick = out["trace_state"]
    assert out["em_blew"][pick] == sum(row[-1] is None for row in out["trace_em"])
    assert out["adaptive_blew"][pick] == sum(row[-1] is None for row in out["trace_adaptive"])
    assert len(out["trace_em"]) == len(out["trace_adaptive"]) == 3 and out["trace_t"][0] == 0.0
    assert len(out["trace_t"]) == len(out["trace_em"][0]) == len(out["trace_adaptive"][0])
