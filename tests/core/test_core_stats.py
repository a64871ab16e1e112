"""core.conventions/core.stats: the one KS level, the one Monte-Carlo z, the one censored-exponential waiting time."""

from __future__ import annotations

import ast
import inspect
import math
from pathlib import Path

import numpy as np
import pytest

import symsgd_core
from symsgd_core.core import checking
from symsgd_core.core import stats as S

PACKAGE = Path(symsgd_core.__file__).parent
#: Names a module has used for its own copy of the KS level or the Monte-Carlo z.
LEVEL_NAMES = {"Z", "Z_MC", "ALPHA", "KS_ALPHA", "Z_SE", "MC_Z"}


def test_the_ks_level_and_the_monte_carlo_z_are_assigned_only_in_core_conventions():
    copies = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            copies += [f"{path.relative_to(PACKAGE)} {t.id}" for t in targets
                       if isinstance(t, ast.Name) and t.id in LEVEL_NAMES]
    assert copies == ["core/conventions.py Z_MC", "core/conventions.py KS_ALPHA"]
    assert inspect.signature(checking.mc_tolerance).parameters["z"].default is S.Z_MC


def test_ks_threshold_of_one_sample_is_exact():
    # One sample: D₁ = max(U, 1 − U) for U uniform, so P(D₁ > d) = 2(1 − d) on [1/2, 1] and the critical
    # distance at level α is 1 − α/2 (scipy's kstwo computes it by another route).
    assert S.ks_threshold(1) == pytest.approx(1.0 - S.KS_ALPHA / 2.0, rel=1e-12)
    with pytest.raises(ValueError, match="n"):
        S.ks_threshold(0)


# -- the censored exponential: one estimate, NaN for "no event" ------------------------------------
#: 40 first-jump steps (exponential, mean 3000, floored, censored at 5000 as −1; numpy default_rng(7)).
JUMP_STEPS = [2122, 3075, 1705, 2685, 619, -1, 29, -1, 1725, 901, 1623, 936, 2699, 3221, -1, 666, -1, 2207, 1045,
              2650, 225, 180, 3670, 2318, -1, 1425, 1563, 3542, 1579, 66, 879, 3042, 1904, 4189, 24, 2711, 751, 1066,
              -1, 4213]
BUDGET = 5000


def test_event_times_is_the_one_conversion_to_nan():
    t = S.event_times([3, -1, None, float("nan"), float("inf"), 0])
    assert t[0] == 3.0 and t[5] == 0.0 and np.all(np.isnan(t[1:5]))
    assert S.event_times(np.array([[1, -1]])).shape == (1, 2)
    with pytest.raises(ValueError, match="event_times"):
        S.censored_exponential([5.0, -1.0], 10.0)


def test_censored_exponential_is_the_closed_form_and_the_old_rank_jump_fit():
    from symsgd_core.rank_jumps.analysis import censored_exponential_ks, exponential_waiting_time

    js = np.array(JUMP_STEPS)
    jumped = js[js >= 0]
    n, n_cens = jumped.size, int(np.sum(js < 0))
    tau = (int(jumped.sum()) + n_cens * BUDGET) / n                     # exact: integers below 2⁵³
    w = S.censored_exponential(S.event_times(js), BUDGET)
    assert (w["events"], w["exposure"], w["mean"], w["se"]) == (n, tau * n, tau, tau / math.sqrt(n))
    # the rank-jump fit before it used core.stats (recorded from its own formula on these inputs)
    assert exponential_waiting_time(js, BUDGET) == (2683.970588235294, 460.2971584464601) == (tau, w["se"])
    assert exponential_waiting_time([-1, -1], 10) == (np.inf, np.inf)
    assert exponential_waiting_time([], 10) == (np.inf, np.inf)
    # every run jumped at its first record: no time at risk, a wait of 0 (the ensemble figure at its largest η)
    assert exponential_waiting_time([0, 0, 0], 10) == (0.0, 0.0)
    assert censored_exponential_ks(S.event_times(js), BUDGET) == {
        "statistic": 0.11075444415808189, "pvalue": 0.7574795790180417, "tau": 2683.970588235294, "n_jumped": 34,
        "n_censored": 6}
