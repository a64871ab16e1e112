"""Predicted against measured waiting times (sde_noise.jump_event_stats): intervals, verdicts in both directions.

Synthetic inputs with known answers: exponential waits of a known mean, censored at a budget. Where a verdict of a
random sample is asserted, the interval's level is 1 − 10⁻⁶ (``alpha=1e-6``), so a correct function fails such a
test with probability ≤ 10⁻⁶ per assertion, while the wrong predictions below are off by a factor 5 — far outside
an interval from 400 events (relative width ≈ ±25 % at that level).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsgd_core.sde_noise import jump_event as J
from symsgd_core.sde_noise import jump_event_stats as S

ALPHA = 1e-6


def _waits(mean: float, n_runs: int, n_steps: int, seed: int) -> np.ndarray:
    w = np.random.default_rng(seed).exponential(mean, n_runs).round()
    return np.where(w <= n_steps, w, -1)


def test_median_interval_coverage_is_the_binomial_one():
    med, lo, hi, cover = S.median_interval(np.arange(1, 13), 0.95)
    assert (med, lo, hi) == (6.5, 3.0, 10.0)                     # j = 3 for n = 12
    assert cover == pytest.approx(1 - 2 * (1 + 12 + 66) / 4096)   # 1 − 2 P(Bin(12, ½) ≤ 2) = 0.961
    assert S.median_interval(np.arange(1, 13), 0.99)[1:3] == (2.0, 11.0)  # 1 − 2·13/4096 = 0.9937
    assert S.median_interval([4, 1, 3], 0.95)[1:] == (1.0, 4.0, 0.75)      # too few: the range, coverage 1 − 2/8


def test_median_interval_covers_the_median_as_often_as_it_says():
    rng = np.random.default_rng(0)
    n_rep = 4000
    hits = sum(lo <= 0.0 <= hi for _, lo, hi, _ in (S.median_interval(rng.standard_normal(12)) for _ in range(n_rep)))
    cover = 1 - 2 * 79 / 4096
    se = math.sqrt(cover * (1 - cover) / n_rep)
    assert abs(hits / n_rep - cover) <= 5 * se   # 5σ of the Monte-Carlo proportion


def test_median_kstar_convention():
    assert S.median_kstar([17, 18, 18, 19]) == 18 and S.median_kstar([17, 18]) == 17   # floor of 17.5
    assert S.median_kstar([18, -1, 18]) == -1


def test_expected_jumps():
    e = S.expected_jumps(1.28e5, 64, 100_000)                     # the referee's cell (0.2, 0.027)
    assert e["events"] == pytest.approx(50.0, rel=1e-12)
    assert e["runs"] == pytest.approx(64 * (1 - math.exp(-100_000 / 1.28e5)))
    assert S.expected_jumps(float("inf"), 64, 100_000) == {"runs": 0.0, "events": 0.0}


def test_poisson_test_is_the_interval_inverted():
    from symsgd_core.core.stats import censored_exponential

    assert S.poisson_two_sided_p(0, 50.0) == pytest.approx(2 * math.exp(-50.0))
    assert S.poisson_two_sided_p(0, 0.0) == 1.0 and S.poisson_two_sided_p(3, 0.0) == 0.0
    d, T = 10, 1000.0
    w = censored_exponential(np.r_[np.full(d, 1.0), np.full(5, np.nan)], np.r_[np.full(d, 1.0),
                                                                               np.full(5, (T - d) / 5)])
    lo_rate, hi_rate = 1 / w["hi"], 1 / w["lo"]
    for rate, inside in ((lo_rate * 1.01, True), (lo_rate * 0.99, False), (hi_rate * 0.99, True),
                         (hi_rate * 1.01, False)):
        assert (S.poisson_two_sided_p(d, rate * T) >= 0.05) is inside


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_correct_prediction_agrees_and_wrong_ones_are_caught_in_both_directions(seed):
    true_mean, R, n = 1000.0, 400, 20_000
    js = _waits(true_mean, R, n, seed)
    right = S.compare_wait(js, n, true_mean, alpha=ALPHA)
    assert right.verdict == "agree" and right.measured[1] <= true_mean <= right.measured[2]
    fast = S.compare_wait(js, n, true_mean / 5, alpha=ALPHA)     # predicts 5× too many jumps
    slow = S.compare_wait(js, n, true_mean * 5, alpha=ALPHA)     # predicts 5× too few
    assert fast.verdict == "over-predicted" and slow.verdict == "under-predicted"
    assert fast.p_value < ALPHA and slow.p_value < ALPHA


def test_the_old_assertion_could_not_fail_the_new_one_does():
    # A prediction 40× too fast (the stored (0.25, 0.027) cell is 40× off) passes the old `0.1 < ratio < 100`.
    true_mean, R, n = 40_000.0, 64, 100_000
    js = _waits(true_mean, R, n, seed=4)
    c = S.compare_wait(js, n, true_mean / 40, factor=10.0, alpha=ALPHA)
    assert 0.1 < c.ratio[0] < 100                                   # the old check: passes
    assert c.verdict == "over-predicted" and c.within_factor is False   # the new ones: it is off, and by > 10×


def test_within_factor_true_false_and_undecided():
    true_mean, R, n = 1000.0, 400, 20_000
    js = _waits(true_mean, R, n, seed=5)
    c = S.compare_wait(js, n, true_mean * 3, factor=10.0, alpha=ALPHA)
    assert c.verdict == "under-predicted" and c.within_factor is True       # 3× off: wrong, but within 10×
    assert S.compare_wait(js, n, true_mean * 3, factor=2.0, alpha=ALPHA).within_factor is False
    lo, hi = c.measured[1], c.measured[2]   # a factor narrower than the interval, centred in it: undecided
    straddle = S.compare_wait(js, n, math.sqrt(lo * hi), factor=0.999 * math.sqrt(hi / lo), alpha=ALPHA)
    assert straddle.verdict == "agree" and straddle.within_factor is None
    with pytest.raises(ValueError, match="factor"):
        S.compare_wait(js, n, true_mean, factor=0.5)


def test_the_counter_example_as_numbers():
    # No jump in 64 runs × 10⁵ steps against a predicted wait of 1.28·10⁵: 50 expected, 0 seen.
    c = S.compare_wait([-1] * 64, 100_000, 1.28e5, factor=10.0)
    assert c.jumped == 0 and c.expected_events == pytest.approx(50.0)
    assert c.verdict == "over-predicted" and c.p_value == pytest.approx(2 * math.exp(-50.0))
    assert c.measured[1] == pytest.approx(2 * 6.4e6 / 7.3776, rel=1e-4)  # χ²₀.₉₇₅(2) = 7.3778: wait > 1.73·10⁶
    nothing = S.compare_wait([-1] * 64, 100_000, 1e12)
    assert nothing.verdict == "agree" and nothing.p_value == pytest.approx(1.0)   # predicts none, sees none


def test_a_band_can_change_the_verdict():
    js = _waits(1000.0, 400, 20_000, seed=6)
    c = S.compare_wait(js, 20_000, 300.0, predicted_band=(200.0, 2000.0), alpha=ALPHA)
    assert c.verdict == "over-predicted" and c.verdict_band == "agree"


def test_grid_wait_comparisons_on_a_synthetic_grid():
    from symsgd_core.sde_noise.experiments import SdeGrid

    k = 10
    E = S.predicted_wait(k, k)
    js_ok = _waits(E, 400, 50_000, seed=7).tolist()
    js_slow = _waits(E * 5, 400, 50_000, seed=8).tolist()
    tasks = []
    for weight_decay, js in ((0.02, js_ok), (0.03, js_slow)):
        for route in ("row0", "col1"):
            tasks.append({"kind": "kstar", "params": {"lr": 0.3, "weight_decay": weight_decay, "route": route},
                          "result": {"kstar": [k] * 12}})
        tasks.append({"kind": "waiting", "params": {"lr": 0.3, "weight_decay": weight_decay},
                      "result": {"jump_step": js, "n_steps": 50_000}})
    grid = SdeGrid("synthetic", tuple(tasks), 0.0, "")
    ok, slow = S.grid_wait_comparisons(grid, factor=10.0, alpha=ALPHA)
    assert (ok.weight_decay, slow.weight_decay) == (0.02, 0.03)
    assert ok.predicted == pytest.approx(E) and ok.predicted_band == pytest.approx((E, E))
    assert ok.verdict == "agree" and ok.within_factor is True
    assert slow.verdict == "over-predicted" and slow.within_factor is True   # 5× off: wrong, within 10×
    assert S.grid_wait_comparisons(grid, factor=2.0, alpha=ALPHA)[1].within_factor is False


def test_kstar_rule_summary():
    res = [{"kstar_first": [17, 18, 18, 20], "kstar_stable": [19, 18, 18, 20]},   # median 18 either way
           {"kstar_first": [13, 14], "kstar_stable": [13, 14]}]
    assert S.kstar_rule_summary(res) == {"sequences": 6, "non_monotone": 1, "largest_shift": 2, "median_changed": 0,
                                         "tasks": 2}
    moved = [{"kstar_first": [17, 18, 20], "kstar_stable": [19, 18, 20]}]                # median 18 → 19
    assert S.kstar_rule_summary(moved)["median_changed"] == 1


def test_sample_route_counts_reads_stored_runs():
    from symsgd_core.sde_noise.experiments import SdeGrid

    kst = [{"kind": "kstar", "params": {"lr": 0.3, "weight_decay": 0.027, "route": r}, "result": {"kstar": [18] * 12}}
           for r in ("row0", "col1")]
    waiting = {"kind": "waiting", "params": {"lr": 0.3, "weight_decay": 0.027},
               "result": {"jump_step": [9000, 500, -1, 7000], "run_routes": ["row0", "col1"],
                          "route_runs": [[20, 3], [18, 18], None, [5, 6]],
                          "control_runs": [[2, 19], None, None, [4, 4]]}}
    out = S.sample_route_counts(SdeGrid("synthetic", (*kst, waiting), 0.0, ""))
    assert out["from_grid"] and out["kstar"] == {"row0": 18, "col1": 18}
    assert out["pre"] == {"row0": 1, "col1": 0, "none": 1, "ambiguous": 1} and out["n_pre"] == 3
    assert out["control"] == {"row0": 0, "col1": 1, "none": 1, "ambiguous": 0} and out["n_control"] == 2
    assert out["with_run"] == (2, 1) and out["fisher_p"] == pytest.approx(1.0)


def test_cell_kstar_prefers_the_grid():
    from symsgd_core.sde_noise.experiments import SdeGrid

    params = {"lr": 0.3, "weight_decay": 0.027, "route": "row0", "n_seq": 2, "k_grid": [17, 18, 19, 300], "seed": 5}
    grid = SdeGrid("synthetic", ({"kind": "kstar", "params": params, "result": {"kstar": [17, 18]}},), 0.0, "")
    assert S.cell_kstar(grid, "row0") == (17, [17, 18], True)
    # not stored under that key: recomputed live with the stored parameters, which must give the stored k* ...
    real = J.kstar_task(params)
    good = SdeGrid("real", ({"kind": "kstar", "params": params, "result": {"kstar": real["kstar"]}},), 0.0, "")
    assert S.cell_kstar(good, "row0", key="kstar_stable")[1:] == (real["kstar_stable"], False)
    assert real["kstar"] == [18, 19]   # ... and a stored k* it does not reproduce ([17, 18]) is an error
    with pytest.raises(RuntimeError, match="reproduce"):
        S.cell_kstar(grid, "row0", key="kstar_stable")
