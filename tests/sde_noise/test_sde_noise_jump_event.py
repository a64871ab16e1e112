"""The jump event (sde_noise.jump_event): the waiting-time formula, the two-route chain, routes and k*."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsgd_core import rank_jumps as rj
from symsgd_core.sde_noise import jump_event as J

PROBLEM = rj.epsilon_completion(0.2)


def test_waiting_time_formula_obeys_its_recursion_and_limits():
    p = 2 / 3
    E = [J.run_waiting_time(k, p) for k in range(12)]
    assert E[0] == 0.0 and E[1] == pytest.approx(1 / p)
    for k in range(1, 12):
        assert E[k] == pytest.approx((E[k - 1] + 1) / p, rel=1e-12)
    assert J.run_waiting_time(5, 1.0) == 5 and math.isinf(J.run_waiting_time(3, 0.0))
    with pytest.raises(ValueError):
        J.run_waiting_time(3, 1.5)


def test_waiting_time_formula_against_monte_carlo():
    mean, se = J.simulate_run_waiting_time(5, 2 / 3, n_seq=4000, seed=1)
    exact = J.run_waiting_time(5, 2 / 3)
    assert abs(mean - exact) <= 5 * se  # 5σ: false alarm 6e-7


def test_a_wrong_formula_fails_the_monte_carlo_comparison():
    mean, se = J.simulate_run_waiting_time(5, 2 / 3, n_seq=4000, seed=1)
    wrong = 1 / (2 / 3) ** 5  # 1/p^k: the "one block of k" guess, ignores overlapping restarts
    assert abs(mean - wrong) > 5 * se


def test_two_route_chain():
    # k_col = 1 always ends at once when (0,1) or (1,1) comes: a geometric wait with success 2/3 ... unless the
    # row run finishes first; with k_row = 1 every step ends it.
    assert J.two_route_waiting_time(1, 1) == pytest.approx(1.0)
    # either route is faster than one route alone, and slower than half of it never by more than a factor 2
    for k in (3, 6, 10):
        both, one = J.two_route_waiting_time(k, k), J.run_waiting_time(k, 2 / 3)
        assert one / 2 <= both < one
    rng = np.random.default_rng(0)
    waits = []
    for _ in range(3000):
        a = b = n = 0
        while a < 4 and b < 4:
            e = rng.integers(0, 3)
            n += 1
            a, b = (a + 1, 0) if e == 0 else ((a + 1, b + 1) if e == 1 else (0, b + 1))
        waits.append(n)
    assert abs(np.mean(waits) - J.two_route_waiting_time(4, 4)) <= 5 * np.std(waits) / np.sqrt(len(waits))


def test_routes_and_their_probabilities():
    rows, cols, _ = PROBLEM.entries
    assert [(int(rows[i]), int(cols[i])) for i in J.route_entries(PROBLEM, "row0")] == [(0, 0), (0, 1)]
    assert [(int(rows[i]), int(cols[i])) for i in J.route_entries(PROBLEM, "col1")] == [(0, 1), (1, 1)]
    assert J.route_probability(PROBLEM, "row0") == J.route_probability(PROBLEM, "col1") == pytest.approx(2 / 3)
    assert J.route_probability(PROBLEM, "row1") == J.route_probability(PROBLEM, "col0") == pytest.approx(1 / 3)
    stair = J.staircase_problem()
    assert stair.mask.sum(axis=1).tolist() == [2, 2]  # equal row counts
    with pytest.raises(ValueError, match="route"):
        J.route_entries(PROBLEM, "diagonal")


def test_kstar_at_the_hot_point_is_finite_and_monotone():
    res = J.kstar_task(dict(lr=0.3, weight_decay=0.027, route="row0", n_seq=3, k_grid=list(range(4, 41, 2)), seed=5))
    ks = np.array(res["kstar"])
    assert np.all(ks > 0) and np.all(res["monotone"])
    assert 10 <= np.median(ks) <= 30  # research: 18 [16, 20]
    assert res["p_route"] == pytest.approx(2 / 3)


# ---------------------------------------------------------------------------------------------------- k* rules
def test_kstar_rules_on_a_success_table_with_a_relapse():
    ks = [10, 11, 12, 13, 14]
    ok = np.array([[0, 1, 0, 1, 1],    # succeeds at 11, fails at 12, then always: first 11, stable 13
                   [0, 0, 1, 1, 1],    # monotone: both 12
                   [0, 0, 0, 0, 0],    # never: both −1
                   [1, 1, 1, 1, 0]],   # fails at the largest k: first 10, stable −1 (no k from which all succeed)
                  dtype=bool)
    assert J.kstar_from_success(ok, ks, "first").tolist() == [11, 12, -1, 10]
    assert J.kstar_from_success(ok, ks, "stable").tolist() == [13, 12, -1, -1]
    with pytest.raises(ValueError, match="rule"):
        J.kstar_from_success(ok, ks, "median")
    with pytest.raises(ValueError, match="increasing"):
        J.kstar_from_success(ok, ks[::-1], "first")


def test_kstar_task_finds_the_stored_relapse_at_the_hot_point():
    # Sequence 9 of seed 5 (row 0, η = 0.3, γ = 0.027) works after 17 forced samples, fails after 18 (its 18th
    # sample is (0, 1), the 17th (0, 0)), works from 19 on: the stored grid's only relapse at the hot point.
    # The sequences are drawn as one (n_seq, max k) block, so max k must be the grid's 300 to replay them.
    res = J.kstar_task(dict(lr=0.3, weight_decay=0.027, route="row0", n_seq=12, k_grid=list(range(14, 26)) + [300],
                            seed=5, kstar_rule="stable"))
    assert res["kstar_first"][9] == 17 and res["kstar_stable"][9] == 19 and res["monotone"][9] is False
    assert res["kstar"] == res["kstar_stable"] and res["kstar_rule"] == "stable"
    same = [s for s in range(12) if s != 9]
    assert [res["kstar_first"][s] for s in same] == [res["kstar_stable"][s] for s in same]
    assert all(res["monotone"][s] for s in same)


def test_avoid_routes():
    rows, cols, _ = PROBLEM.entries
    assert J.route_entries(PROBLEM, "avoid11").tolist() == J.route_entries(PROBLEM, "row0").tolist()
    assert J.route_entries(PROBLEM, "avoid00").tolist() == J.route_entries(PROBLEM, "col1").tolist()
    assert [(int(rows[i]), int(cols[i])) for i in J.route_entries(PROBLEM, "avoid01")] == [(0, 0), (1, 1)]
    assert J.silenced_entries(PROBLEM, "row0").tolist() == [2]  # (1, 1)
    with pytest.raises(ValueError, match="not an observed entry"):
        J.route_entries(PROBLEM, "avoid10")


# ------------------------------------------------------------------------------------------- route attribution
def test_longest_route_runs_by_hand():
    # entries 0 = (0,0), 1 = (0,1), 2 = (1,1); row 0 = {0, 1}, column 1 = {1, 2}
    idx = np.array([[0, 1, 1, 0, 2, 2, 1, 1, 1, 0],
                    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
                    [2, 2, 2, 2, 2, 0, 0, 0, 0, 0]])
    assert J.longest_route_runs(idx, PROBLEM, ("row0", "col1")).tolist() == [[4, 5], [10, 10], [5, 5]]


def test_classify_route_categories():
    routes, kstar = ("row0", "col1"), {"row0": 18, "col1": 18}
    runs = np.array([[18, 3], [5, 30], [17, 17], [20, 19], [-1, -1]])
    assert J.classify_route(runs, routes, kstar) == ["row0", "col1", J.NO_ROUTE, J.AMBIGUOUS, None]


@pytest.mark.parametrize("name, route, kstar", [
    ("eps", "row0", {"row0": 18, "col1": 18}), ("eps", "col1", {"row0": 18, "col1": 18}),
    ("staircase", "row0", {"row0": 24, "row1": 22, "col1": 24}),
    ("staircase", "row1", {"row0": 24, "row1": 22, "col1": 24}),
    ("staircase", "col1", {"row0": 24, "row1": 22, "col1": 24})])
def test_forced_runs_are_named_by_their_route(name, route, kstar):
    # k = k* + 4 forced samples of one route from the rank-2 minimum (k*: the stored grid's medians at the hot
    # point), then GD: every sequence jumps, and the samples before the jump name the forced route.
    routes = J.REPLY_ROUTES[name]
    fp = J.forced_path(name, 0.3, 0.027, route, kstar[route] + 4)
    assert np.all(fp["jump_record"] > 0)
    problem = J._problem_and_start(name, 0.027)[0]
    assert J.classify_route(J.longest_route_runs(fp["idx"], problem, routes), routes, kstar) == [route] * 12


def test_a_run_of_the_shared_entry_is_ambiguous_and_a_mixed_window_is_none():
    routes, kstar = ("row0", "col1"), {"row0": 18, "col1": 18}
    shared = np.ones((1, 20), dtype=int)               # (0, 1) only: in row 0 and in column 1
    mixed = np.tile([0, 1, 2], (1, 40))                # every entry every 3 steps: no run longer than 2
    runs = J.longest_route_runs(np.vstack([shared[:, :20], mixed[:, :20]]), PROBLEM, routes)
    assert J.classify_route(runs, routes, kstar) == [J.AMBIGUOUS, J.NO_ROUTE]


def test_the_end_state_label_is_not_the_route():
    # What the stored grid counts as routes is the shape of A at the first record at rank ≤ 1. Forced runs of a
    # known route all relax to the same rank-1 minimum first, so the label does not follow the route: on the
    # staircase every forced run of row 0, row 1 or column 1 is labelled "row1"; on the ε-completion (where that
    # minimum has A₀₀ = A₁₁) forced row-0 runs get both labels.
    for route, k in (("row0", 28), ("row1", 26), ("col1", 28)):
        fp = J.forced_path("staircase", 0.3, 0.027, route, k)
        labels = {J.end_state_label(fp["A"][s, fp["jump_record"][s]], fp["A0"], "staircase") for s in range(12)}
        assert labels == {"row1"}, (route, labels)
    fp = J.forced_path("eps", 0.3, 0.027, "row0", 28)
    labels = [J.end_state_label(fp["A"][s, fp["jump_record"][s]], fp["A0"], "eps") for s in range(12)]
    assert "col1" in labels and "row0" in labels


def test_sgd_with_samples_is_run_sgd_weights_bit_for_bit_and_replays_given_samples():
    from symsgd_core.dln.network import replicate
    from symsgd_core.dln.sde import run_sgd_weights

    problem, base = J._problem_and_start("eps", 0.027)
    ref = run_sgd_weights(replicate(base, 3), problem, 7003, lr=0.3, weight_decay=0.027, seed=2, record_every=50,
                          record_layers=False, keep_A=True)
    got = J.sgd_with_samples(replicate(base, 3), problem, 7003, lr=0.3, weight_decay=0.027, seed=2, record_every=50,
                             chunk=1000)
    assert np.array_equal(ref.steps, got["steps"]) and np.array_equal(ref.settings["end_to_end"], got["A"])
    again = J.sgd_with_samples(replicate(base, 3), problem, 7003, lr=0.3, weight_decay=0.027, seed=99, record_every=50,
                               idx=got["idx"])
    assert np.array_equal(again["A"], got["A"])


def test_waiting_task_with_samples_keeps_the_runs_and_reads_the_windows():
    p = dict(lr=0.3, weight_decay=0.027, n_runs=8, n_steps=20_000, rec_steps=50, seed=11)
    plain, withs = J.waiting_task(p), J.waiting_task({**p, "samples": True})
    assert plain["jump_step"] == withs["jump_step"] and plain["route"] == withs["route"]
    assert "route_runs" not in plain and withs["run_routes"] == ["row0", "col1"]
    for js, runs, ctl in zip(withs["jump_step"], withs["route_runs"], withs["control_runs"]):
        assert (runs is None) == (js < 0) and (ctl is None) == (js < 2 * J.KSTAR_GD_STEPS)
        if runs is not None:
            assert all(0 <= x <= min(js, J.KSTAR_GD_STEPS) for x in runs)


def test_avoid_chain_reduces_to_the_known_waits_and_matches_monte_carlo():
    third = [1 / 3] * 3
    assert J.avoid_waiting_time({2: 9, 0: 7}, third) == pytest.approx(J.two_route_waiting_time(9, 7), rel=1e-10)
    assert J.avoid_waiting_time({0: 7}, [0.25] * 4) == pytest.approx(J.run_waiting_time(7, 0.75), rel=1e-10)
    k = {0: 4, 1: 5, 2: 4}
    exact = J.avoid_waiting_time(k, third)
    assert exact < J.two_route_waiting_time(4, 4)           # a third event can only shorten the wait
    rng = np.random.default_rng(3)
    waits = []
    for _ in range(4000):
        since, n = [0, 0, 0], 0
        while all(since[e] < k[e] for e in k):
            e = rng.integers(0, 3)
            n += 1
            since = [0 if j == e else since[j] + 1 for j in range(3)]
        waits.append(n)
    assert abs(np.mean(waits) - exact) <= 5 * np.std(waits) / np.sqrt(len(waits))   # 5σ
    with pytest.raises(ValueError, match="probability"):
        J.avoid_waiting_time({0: 3}, [0.5, 0.6])


def test_sgd_with_samples_survives_a_divergence():
    problem, base = J._problem_and_start("eps", 0.027)
    from symsgd_core.dln.network import replicate

    res = J.sgd_with_samples(replicate(base, 2), problem, 400, lr=3.0, weight_decay=0.0, seed=0, record_every=50)
    assert np.all(res["diverged_step"] >= 0)          # η = 3 blows up (the engine's rule: residual above 10⁶)
    assert np.isfinite(res["s2"][:, 0]).all() and np.isnan(res["s2"][:, 1:]).all()   # NaN after, not an error
