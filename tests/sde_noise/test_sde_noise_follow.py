"""The adaptive step's follow-every-path mode (sde_noise.adaptive, ``follow=True``) and the spike statistics
(sde_noise.spikes): it is the original scheme where that one neither stalls nor trips the residual rule, it
follows a path the original mode stops, its time is summed exactly, the excursion records are consistent, the
law check (and a wrong scheme that must fail), and the spike table on known inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsgd_core import rank_jumps as rj
from symsgd_core.dln.adaptive import EXCURSION_BASE, FOLLOW_CAP_NORM, run_sde_adaptive
from symsgd_core.dln.network import Params, replicate
from symsgd_core.sde_noise import spikes
from symsgd_core.sde_noise.checks import check_sde_follow_matches_em

PROBLEM = rj.epsilon_completion(0.2)
LR, WEIGHT_DECAY = 0.3, 0.027
EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def start():
    return replicate(rj.start_minimum(weight_decay=WEIGHT_DECAY)[0], 3)


def test_follow_mode_is_the_adaptive_step_where_that_one_neither_stalls_nor_leaves(start):
    # the same normals: where the rule binds often (rho small) and no path stalls, the two modes take the same
    # steps; they differ only in how t is summed (Kahan), which moves a record landing by round-off
    n, T = 4000, 3.0
    xi = np.random.default_rng(0).standard_normal((3, n, PROBLEM.n_observed))
    kw = dict(lr=LR, weight_decay=WEIGHT_DECAY, h_max=LR / 4, rho=0.005, xi=xi, record_dt=1.0)
    a = run_sde_adaptive(start, PROBLEM, T, **kw)
    f = run_sde_adaptive(start, PROBLEM, T, follow=True, **kw)
    assert a.event == f.event == ("none",) * 3
    assert np.all(a.n_reduced > 0)                   # the rule was exercised
    assert np.array_equal(a.n_steps, f.n_steps)
    n = int(a.n_steps.max())
    scale = np.max(np.abs(a.result.final.flat))
    # round-off: a record landing's step differs by O(ulp(t)); its effect over the path stays at round-off
    assert np.max(np.abs(a.result.final.flat - f.result.final.flat)) <= 64 * n * 160 * EPS * scale
    assert f.settings["method"] == "sde_follow" and a.settings["method"] == "sde_adaptive"


def test_a_path_the_original_mode_stops_is_followed_to_its_horizon(start):
    far = Params(start.arch, 6.0 * start.flat[:2])  # ‖θ‖ ≈ 16: the rule asks for steps far below 10⁻¹²
    kw = dict(lr=LR, weight_decay=WEIGHT_DECAY, h_max=LR / 16, rho=0.05, seed=0, record_dt=5.0)
    stopped = run_sde_adaptive(far, PROBLEM, 10.0, **kw)
    followed = run_sde_adaptive(far, PROBLEM, 10.0, follow=True, **kw)
    assert set(stopped.event) <= {"stall", "residual"} and all(e != "none" for e in stopped.event)
    assert followed.event == ("none", "none")
    assert np.all(followed.min_h < 1e-12)          # it took steps the original mode refuses
    np.testing.assert_array_equal(followed.result.times, [0.0, 5.0, 10.0])   # and landed on every record time
    assert np.all(np.isfinite(followed.result.final.flat))
    # the path came back: its records after the start are far below where it started
    assert np.all(np.sqrt(followed.result.norm_sq[:, -1]) < 0.5 * np.sqrt(far.norm_sq()))


def test_the_followed_path_records_its_excursions_consistently(start):
    base = 1.001 * math.sqrt(start.norm_sq()[0])  # just above the minimum's norm: a path crosses it often
    f = run_sde_adaptive(replicate(start.select([0]), 4), PROBLEM, 60.0, lr=LR, weight_decay=WEIGHT_DECAY,
                         h_max=LR / 16, rho=0.05, seed=3, record_dt=15.0, follow=True, excursion_base=base)
    ex = f.excursions
    assert ex.base == base and ex.lost == 0 and np.all(ex.n >= 3)
    for r in range(4):
        k = int(ex.n[r])
        assert np.all(np.isfinite(ex.start[r, :k])) and np.all(np.isnan(ex.start[r, k:]))
        assert np.all(ex.height[r, :k] >= base)
        closed = np.isfinite(ex.end[r, :k])
        assert np.all(ex.end[r, :k][closed] > ex.start[r, :k][closed])
        assert np.all(np.diff(ex.start[r, :k]) > 0)       # in time order, one after the other
        assert np.all(ex.start[r, 1:k] >= ex.end[r, :k - 1])
        assert np.all(np.isfinite(ex.end[r, :k - 1]))     # only the last one may still be open
        assert ex.height[r, :k].max() <= f.max_norm[r] and np.all(ex.steps[r, :k] >= 1)


def test_capacity_overflow_is_counted_not_lost_silently(start):
    base = 1.001 * math.sqrt(start.norm_sq()[0])
    f = run_sde_adaptive(replicate(start.select([0]), 2), PROBLEM, 60.0, lr=LR, weight_decay=WEIGHT_DECAY,
                         h_max=LR / 16, rho=0.05, seed=3, record_dt=15.0, follow=True, excursion_base=base,
                         excursion_capacity=2)
    assert np.all(f.excursions.n > 2)
    assert f.excursions.lost == int(np.sum(f.excursions.n - 2))


def test_the_cap_ends_a_path_and_says_so(start):
    huge = Params(start.arch, 2.0 * FOLLOW_CAP_NORM / math.sqrt(start.norm_sq()[0]) * start.flat[:1])
    f = run_sde_adaptive(huge, PROBLEM, 1.0, lr=LR, weight_decay=WEIGHT_DECAY, h_max=LR / 16, rho=0.05, seed=0,
                         record_dt=1.0, follow=True)
    assert f.event == ("cap",) and f.t_event[0] == 0.0 and f.ended_early[0]


@pytest.mark.slow
@pytest.mark.parametrize("broken", [None, "noise_at_h_max"])
def test_the_follow_mode_has_the_sdes_law_and_a_wrong_scheme_fails(broken):
    r = check_sde_follow_matches_em(seed=0, broken=broken)
    assert r.details["reduced_fraction"] >= 0.25 and r.details["follow"]
    assert r.passed == (broken is None), r


# ----------------------------------------------------------------------------------------------- spike table
def _result(heights, ends, t_max=1000.0, n_runs=2, base=EXCURSION_BASE, lost=0):
    k = len(heights)
    return {"n_runs": n_runs, "t_max": t_max, "t_jump": [None] * n_runs, "t_return": [None] * n_runs,
            "t_diverged": [None] * n_runs, "collapsed_end": [False] * n_runs, "t_collapse": [None] * n_runs,
            "frac_time_rank1": [0.5] * n_runs, "frac_time_B1": [0.4] * n_runs, "event": ["none"] * n_runs,
            "max_norm": [max(heights, default=3.0)] * n_runs, "n_steps": [10] * n_runs, "n_exc": [k, 0],
            "exc_lost": lost, "excursion_base": base, "cap_norm": FOLLOW_CAP_NORM, "seconds": 1.0,
            "exc": {"run": [0] * k, "start": [float(i) for i in range(k)], "end": ends,
                    "height": heights, "steps": [5] * k}}


def test_spike_table_counts_each_excursion_at_every_level_it_reached():
    res = _result([12.0, 25.0, 60.0, 1500.0], [0.5, 1.5, None, 3.5])
    rows = spikes.spike_table([res], (10.0, 20.0, 50.0, 100.0, 1000.0))
    assert [r.count for r in rows] == [4, 3, 2, 1, 1]
    assert [r.returned for r in rows] == [3, 2, 1, 1, 1]
    assert rows[0].exposure == 2000.0
    assert rows[0].rate[0] == pytest.approx(4 / 2000 * 1e3)
    assert rows[2].rate_x_level[0] == pytest.approx(rows[2].rate[0] * (50.0 - EXCURSION_BASE))
    lo, hi = rows[0].rate[1:]
    assert lo < rows[0].rate[0] < hi
    # exact Poisson interval for 4 events: [1.0899, 10.2416]
    assert (lo * 2, hi * 2) == pytest.approx((1.0899, 10.2416), rel=1e-4)


def test_spike_table_refuses_what_would_make_its_counts_wrong():
    with pytest.raises(ValueError, match="capacity"):
        spikes.spike_table([_result([12.0], [1.0], lost=3)])
    with pytest.raises(ValueError, match="bases"):
        spikes.spike_table([_result([12.0], [1.0]), _result([12.0], [1.0], base=4.0)])
    with pytest.raises(ValueError, match="levels"):
        spikes.spike_table([_result([12.0], [1.0])], (5.0,))
    with pytest.raises(ValueError, match="at least one"):
        spikes.spike_table([])


def test_spike_shapes_and_the_summary_on_a_real_followed_ensemble():
    res = spikes.follow_task(dict(lr=LR, weight_decay=WEIGHT_DECAY, n_runs=4, t_max=300.0, rec_dt=15.0, seed=1,
                                  m=16, rho=0.05))
    s = spikes.follow_summary([res])
    assert s.n_runs == 4 and sum(s.events.values()) == 4 and s.events.get("none", 0) == 4
    assert 0 <= s.frac_B1[0] <= s.frac_rank1[0] <= 1    # B₁'s full test is stricter than its rank test
    assert s.collapsed >= s.collapsed_end and len(s.t_collapse) == s.collapsed
    assert s.steps == sum(res["n_steps"]) and s.max_norm == max(res["max_norm"])
    stored = np.asarray(res["exc"]["height"])
    assert np.all(stored >= spikes.STORE_FROM)
    for shape in spikes.spike_shapes([res]):
        assert shape.count <= int(np.sum(stored >= shape.level)) and shape.duration_max >= shape.duration_median


@pytest.mark.parametrize("beta", [1.0, 0.4])
def test_the_passage_fit_recovers_a_known_scale_exponent(beta):
    # exact sampler: P(H ≥ h) = (s0^β − a^β)/(h^β − a^β)  ⇒  H = ((s0^β − a^β)/U + a^β)^{1/β}
    s0, a = 10.0, EXCURSION_BASE
    u = np.random.default_rng(0).random(3000)
    heights = ((s0 ** beta - a ** beta) / u + a ** beta) ** (1 / beta)
    fit = spikes.fit_passage(np.concatenate([heights, [6.0, 7.0]]), s0=s0, a=a)   # below s0: left out
    assert fit.n == 3000
    assert fit.beta[1] < beta < fit.beta[2]
    other = 0.4 if beta == 1.0 else 1.0                      # the wrong exponent is outside the interval
    assert not fit.beta[1] < other < fit.beta[2]
    assert fit.predicted(20.0, 1.0) == pytest.approx(5 / 15)   # the martingale's (s0 − a)/(b − a)


def test_the_passage_fit_refuses_to_fit_nothing():
    with pytest.raises(ValueError, match="too few"):
        spikes.fit_passage([12.0, 15.0])
