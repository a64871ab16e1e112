"""The SDE checks (sde_noise.checks) pass on the real model and fail on their broken inputs."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import registered_checks
from symsgd_core.sde_noise import checks as C

FAST = [
    ("sde_noise.compiled_vs_reference", C.check_sde_compiled_vs_reference, [dict(broken="uncentred")], {}),
    ("sde_noise.one_step_moments", C.check_sde_one_step_moments,
     [dict(broken="uncentred", M=20_000), dict(broken="no_1/N", M=20_000)], dict(M=20_000)),
    ("sde_noise.no_raising_noise_at_B1", C.check_sde_no_raising_noise, [dict(broken="rank2_point")], {}),
    ("sde_noise.langevin_raising_noise", C.check_langevin_raising_noise, [dict(broken="sde_noise")], {}),
]


def test_the_sde_checks_are_registered():
    names = set(registered_checks())
    assert {n for n, *_ in FAST} | {"sde_noise.weak_order"} <= names


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


def test_weak_order_fit_recovers_the_order_and_its_standard_error_is_calibrated():
    """Synthetic coupled differences with a known power law: the fitted order lands within 2 SE in about 95 % of
    200 data sets (binomial 5σ band around 0.954 for n = 200: 0.88-1.0), for order 1 and order ½."""
    h, h_ref = 0.5 / np.array([8, 16, 32, 64]), 0.5 / 256
    for p_true in (1.0, 0.5):
        rng = np.random.default_rng(7)
        mean = -0.03 * (h**p_true - h_ref**p_true)
        # paired differences share their path: correlated noise, SD ∝ h^0.6 as measured on the SDE
        L = np.linalg.cholesky(0.6 * np.ones((4, 4)) + 0.4 * np.eye(4)) * (0.05 * h**0.6)[:, None]
        hits, ses = 0, []
        for _ in range(200):
            d = mean + rng.standard_normal((4000, 4)) @ L.T
            f = C.fit_weak_order(d, h, h_ref)
            hits += abs(f["order"] - p_true) <= 2 * f["se"]
            ses.append(f["se"])
        assert 0.88 <= hits / 200 <= 1.0, (p_true, hits)
        assert np.median(ses) < C.WEAK_ORDER_SE_MAX


def test_weak_order_check_that_measured_nothing_fails():
    """256 paths: the fitted order's standard error is far above 0.1, so the check fails whatever the order."""
    r = C.check_sde_weak_order(M=256)
    assert r.details["se"] > C.WEAK_ORDER_SE_MAX and not r.passed and r.measured == float("inf")


@pytest.mark.parametrize("kw", [dict(n_list=(8, 16, 64)), dict(n_list=(8, 16)), dict(n_ref=64),
                                dict(broken="other"), dict(M=3)])
def test_weak_order_check_refuses_bad_settings(kw):
    with pytest.raises(ValueError):
        C.check_sde_weak_order(**kw)


# (two tests, not one, so pytest-xdist can run them side by side: about 7 s of one core each, 10-18 s of wall time
# on a busy shared 2-core machine)
@pytest.mark.slow
def test_weak_order_is_one():
    good = C.check_sde_weak_order()
    d = good.details
    assert good.passed, d
    assert abs(d["order"] - 1.0) <= C.WEAK_ORDER_BAND and d["se"] <= C.WEAK_ORDER_SE_MAX, d
    assert min(e / s for e, s in zip(d["e"], d["e_se"])) > 5  # the weak error is far above the Monte-Carlo noise


@pytest.mark.slow
def test_weak_order_check_fails_for_a_biased_increment():
    """Fails by the band, not by luck: a real measurement (SE ≤ 0.1) of an order near ½, outside |order − 1| ≤ 0.25
    by more than 2.5 of its standard errors."""
    bad = C.check_sde_weak_order(broken="biased")
    d = bad.details
    assert not bad.passed, d
    assert d["se"] <= C.WEAK_ORDER_SE_MAX, d
    assert d["order"] + 2.5 * d["se"] < 1.0 - C.WEAK_ORDER_BAND, d
    assert abs(d["order"] - 0.5) <= C.WEAK_ORDER_BAND, d  # what it measured is order ½
