"""The SDE checks (rank_jumps.sde_checks) pass on the real model and fail on their broken inputs."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import registered_checks
from symsgd_core.rank_jumps import sde_checks as C

FAST = [
    ("rank_jumps.sde_compiled_vs_reference", C.check_sde_compiled_vs_reference, [dict(broken="uncentred")], {}),
    ("rank_jumps.sde_one_step_moments", C.check_sde_one_step_moments,
     [dict(broken="uncentred", M=20_000), dict(broken="no_1/N", M=20_000)], dict(M=20_000)),
    ("rank_jumps.sde_no_raising_noise_at_B1", C.check_sde_no_raising_noise, [dict(broken="rank2_point")], {}),
    ("rank_jumps.langevin_raising_noise", C.check_langevin_raising_noise, [dict(broken="sde_noise")], {}),
]


def test_the_sde_checks_are_registered():
    names = set(registered_checks())
    assert {n for n, *_ in FAST} | {"rank_jumps.sde_weak_order"} <= names


@pytest.mark.parametrize("name, check, broken, sizes", FAST, ids=[f[0] for f in FAST])
def test_check_passes_on_the_real_model_and_fails_on_a_broken_input(name, check, broken, sizes):
    good = check(seed=0, **sizes)
    assert good.passed, good
    assert good.name == name and good.tolerance_source and np.isfinite(good.measured)
    for kw in broken:
        bad = check(seed=0, **kw)
        assert not bad.passed, (kw, bad)


def test_the_raising_fraction_separates_the_B1_point_from_the_rank2_minimum():
    good = C.check_sde_no_raising_noise()
    bad = C.check_sde_no_raising_noise(broken="rank2_point")
    assert good.measured < 1e-20 < 1e-5 < bad.measured  # round-off vs a real component


# (two tests, not one: about 40 s of CPU each, so pytest-xdist can run them side by side)
@pytest.mark.slow
def test_weak_order_is_one():
    good = C.check_sde_weak_order()
    assert good.passed, good.details


@pytest.mark.slow
def test_weak_order_check_fails_for_a_biased_increment():
    bad = C.check_sde_weak_order(broken="biased")
    assert not bad.passed, bad.details
