"""The jump event (rank_jumps.jump_event): the waiting-time formula, the two-route chain, routes and k*."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsgd_core import rank_jumps as rj
from symsgd_core.rank_jumps import jump_event as J

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
    res = J.kstar_task(dict(lr=0.3, lam=0.027, route="row0", n_seq=3, k_grid=list(range(4, 41, 2)), seed=5))
    ks = np.array(res["kstar"])
    assert np.all(ks > 0) and np.all(res["monotone"])
    assert 10 <= np.median(ks) <= 30  # research: 18 [16, 20]
    assert res["p_route"] == pytest.approx(2 / 3)
