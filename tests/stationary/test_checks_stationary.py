"""The stationary-distribution checks pass, and each fails when fed a broken formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsgd_core import registered_checks
from symsgd_core.stationary import checks as cs
from symsgd_core.stationary.laws import DiagonalNetProblem, StationaryLaw, log_density_depth0, log_density_depth1


def _as_list(out):
    return out if isinstance(out, list) else [out]


class TypoLaw(StationaryLaw):
    """Plausible transcription slips: Eq. 15 with the v-exponent −1/2 instead of −3/2 (depth 1);
    Eq. 12 with g^{−β₁/(2α₁T)} instead of g^{−1−β₁/(2α₁T)} (depth 0; g ∝ cosh²z in its coordinate)."""

    def _log_unnorm_z(self, z):
        extra = z if self.depth == 1 else 2.0 * np.log(np.cosh(z))
        return super()._log_unnorm_z(z) + extra


def test_stationary_checks_are_registered():
    names = {n for n in registered_checks() if n.startswith("stationary.")}
    assert {"stationary.fokker_planck", "stationary.normalisation", "stationary.histogram_depth0",
            "stationary.histogram_depth1", "stationary.histogram_depth2", "stationary.collapse_at_Tc",
            "stationary.fluctuation_inversion", "stationary.most_likely_value", "stationary.wrong_sign"} <= names


def test_fokker_planck_passes_and_fails_on_broken_formulas():
    assert cs.check_fokker_planck().passed

    def no_T_in_arctan(v, T, p):  # the paper's Eq. 9-style slip: a missing T
        return log_density_depth0(v, T, p) + (1 - T) * 0.0 + 0.3 * np.arctan(v)

    def wrong_exponent(v, T, p):
        return log_density_depth1(v, T, p) + np.log(v)

    assert not cs.check_fokker_planck(log_density0=no_T_in_arctan).passed
    assert not cs.check_fokker_planck(log_density1=wrong_exponent).passed


def test_normalisation_and_identities_fail_for_a_wrong_law():
    good = cs.check_normalisation()
    assert all(r.passed for r in good)
    bad = cs.check_normalisation(law_factory=lambda p, T, d: StationaryLaw(p, 1.15 * T, d))
    assert bad[0].passed  # any normalised law integrates to 1 ...
    assert not bad[1].passed  # ... but only the right one obeys the SDE's moment identities


def test_histogram_checks_pass_and_fail_on_a_typo():
    r = cs.check_histogram_depth1(n_chains=2000)
    assert r.passed, r
    prob = DiagonalNetProblem.gaussian(1.0, 1.0, 0.1)
    broken = cs.check_histogram_depth1(law=TypoLaw(prob, 0.12, 1), n_chains=2000)
    assert not broken.passed and broken.measured > broken.tolerance
    assert cs.check_histogram_depth0(n_chains=2000).passed
    typo0 = cs.check_histogram_depth0(law=TypoLaw(DiagonalNetProblem.gaussian(1.0, 1.0), 0.25, 0), n_chains=2000)
    assert not typo0.passed


def test_histogram_depth2_fails_for_the_depth1_law():
    assert cs.check_histogram_depth2(n_chains=2000).passed
    r = cs.check_histogram_depth2(law=StationaryLaw(DiagonalNetProblem.gaussian(1.0, 1.0), 0.15, 1), n_chains=2000)
    assert not r.passed


def test_collapse_passes_and_fails_when_weight_decay_is_ignored():
    assert cs.check_collapse().passed
    r = cs.check_collapse(tc_formula=lambda p: p.beta2 / p.alpha3)  # forgets γ: T_c = 1/3 instead of 0.267
    assert not r.passed


def test_fluctuation_inversion_fails_for_swapped_depths():
    assert all(r.passed for r in cs.check_fluctuation_inversion())
    swapped = cs.check_fluctuation_inversion(law_factory=lambda p, T, d: StationaryLaw(p, T, 1 - d)
                                             if (d == 0 and T < 1 / 3) or d == 1 else StationaryLaw(p, T, d))
    assert not all(r.passed for r in swapped)


def test_most_likely_value_fails_for_a_garbled_root():
    assert all(r.passed for r in cs.check_most_likely_value())

    def garbled(T, p):  # Eq. 16-style slip: 3α₃T → α₃T
        A, B, C = 7 * p.alpha1 * T, p.beta1 - 10 * p.alpha2 * T, -(p.beta2 - p.weight_decay - p.alpha3 * T)
        return (-B + math.sqrt(B * B - 4 * A * C)) / (2 * A)

    out = cs.check_most_likely_value(root_formula=garbled)
    assert not out[0].passed and not out[1].passed


def test_wrong_sign_fails_for_wrong_claims():
    assert all(r.passed for r in cs.check_wrong_sign())

    class NoWrongSign:
        def cdf(self, v):
            return np.where(np.asarray(v) <= 0, 0.0, 1.0)

    out = cs.check_wrong_sign(depth0_law=NoWrongSign(), collapse_rate=lambda p, T: 4 * (p.beta2 + T * p.alpha3) / 2)
    assert not out[0].passed and not out[1].passed


def test_nan_never_passes():
    r = cs._gof_result("x", "y", {"ks": 0.0, "tolerance": 1.0, "non_finite": 1, "n_chains": 1, "dt_coarse": 0.1})
    assert not r.passed


# ------------------------------------------------------------------ tails by depth and T* (E7, E12)
def test_tail_exponent_is_t_independent_for_depth_ge1_only():
    from symsgd_core import stationary as st_

    rows = {r.name: r for r in st_.check_tail_exponent()}
    assert all(r.passed for r in rows.values()), [str(r) for r in rows.values()]
    assert "L ≥ 1" in rows["stationary.tail_depth_ge1"].claim and "only" in rows["stationary.tail_depth0_moves"].claim


def test_tail_check_fails_on_a_wrong_exponent_and_refuses_depth0_in_row1():
    from symsgd_core import stationary as st_

    def wrong(depth, temperature=None, problem=None):
        return -3.5 if depth >= 1 else st_.tail_exponent(depth, temperature, problem)

    rows = {r.name: r for r in st_.check_tail_exponent(exponent=wrong)}
    assert not rows["stationary.tail_depth_ge1"].passed
    with pytest.raises(ValueError, match="depths"):
        st_.check_tail_exponent(depths=(0, 1))


def test_transitional_temperature_departs_from_the_papers_closed_form():
    from symsgd_core import stationary as st_

    p1 = st_.DiagonalNetProblem.gaussian(1.0, 1.0)
    p07 = st_.DiagonalNetProblem.gaussian(1.0, 0.7)
    assert st_.transitional_temperature(p1) == pytest.approx(0.2016, abs=1e-4)
    assert st_.laws.paper_transitional_temperature(p1) == pytest.approx(0.2016, abs=1e-4)
    assert st_.laws.paper_transitional_temperature(p07) == pytest.approx(0.932, abs=1e-3)
    assert st_.critical_temperature(p07) == pytest.approx(1 / 2.49, rel=1e-12)
    assert st_.transitional_temperature(p07) <= st_.critical_temperature(p07)
    rows = {r.name: r for r in st_.check_transitional_temperature()}
    assert all(r.passed for r in rows.values())
    # the check can fail: the paper's formula in the notebook's place leaves (T_c/3, T_c) ...
    swapped = {r.name: r for r in st_.check_transitional_temperature(formula=st_.laws.paper_transitional_temperature)}
    assert not swapped["stationary.tstar_inside"].passed
    # ... and the notebook's formula in the paper's place does not exceed T_c
    same = {r.name: r for r in st_.check_transitional_temperature(paper_formula=st_.transitional_temperature)}
    assert not same["stationary.tstar_paper_above_tc"].passed


def test_spread_grows_like_sqrt_t_and_a_wrong_exponent_fails():
    (row,) = cs.check_spread_sqrt_t()
    assert row.passed, row
    assert abs(row.details["predicted"] - 0.5) < 0.05  # the stationary law's slope is close to √T here
    for wrong in (1.0, 0.25):
        assert not cs.check_spread_sqrt_t(exponent=wrong)[0].passed
    with pytest.raises(ValueError, match="temperatures"):
        cs.check_spread_sqrt_t(temperatures=(0.01,))


def test_balance_never_imports_stationary():
    """The topics' dependency runs one way (stationary builds on balance's SGD): importing every balance module
    loads no stationary module, and no import line in balance names it (none hidden in a function)."""
    import os
    import pathlib
    import subprocess
    import sys

    import symsgd_core

    root = pathlib.Path(symsgd_core.__file__).parent
    code = ("import sys, pkgutil, importlib, symsgd_core.balance as b\n"
            "for m in pkgutil.iter_modules(b.__path__): importlib.import_module('symsgd_core.balance.' + m.name)\n"
            "print(sorted(n for n in sys.modules if n.startswith('symsgd_core.stationary')))")
    env = {**os.environ, "PYTHONPATH": str(root.parent)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"
    imports = {p.name: [line for line in p.read_text(encoding="utf-8").splitlines()
                        if line.lstrip().startswith(("from ", "import ")) and "stationary" in line]
               for p in (root / "balance").glob("*.py")}
    assert {name: lines for name, lines in imports.items() if lines} == {}
