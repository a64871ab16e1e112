"""symsgd_core.stationary.report: notebook 03's printed tables (and notebook 01's √T line), each line checked against
the numbers it is made of, and on broken input (a scan whose survivors drift at the smallest T fails its claims; a
temperature scan and its rows of different lengths are refused)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from symsgd_core import stationary
from symsgd_core.stationary import report as sr
from symsgd_core.stationary.claims import bimodal_window
from symsgd_core.stationary.experiments import discrete_sgd_scan
from symsgd_jupyter.text_checks import word_problems


@pytest.fixture(scope="module")
def prob():
    return stationary.DiagonalNetProblem.gaussian(k=1.0, sigma=1.0)


def test_phases_one_line_per_temperature(prob):
    rep = sr.phases_report(prob, (0.05, 0.4))
    assert rep.lines() == [f"T = 0.05: phase {stationary.phase_of(0.05, prob)!r}",
                           f"T = 0.4: phase {stationary.phase_of(0.4, prob)!r}"]
    assert rep.claims == () and not word_problems(str(rep))
    # the two ends of the scan are in different phases (learning, collapsed): the table tells them apart
    assert stationary.phase_of(0.05, prob) != stationary.phase_of(0.4, prob)


def test_windows_quote_the_closed_forms():
    rep = sr.windows_report()
    assert len(rep.lines()) == len(sr.WINDOW_SIGMAS) and all(c.passed for c in rep.claims)
    for line, sigma in zip(rep.lines(), sr.WINDOW_SIGMAS, strict=True):
        p = stationary.DiagonalNetProblem.gaussian(k=1.0, sigma=sigma)
        tc = stationary.critical_temperature(p)
        assert line == (f"σ = {sigma}: critical T/3 = {tc / 3:.3f}, T* = {stationary.transitional_temperature(p):.3f}, "
                        f"critical T = {tc:.3f}; bimodal window = {bimodal_window(p):.1%} of "
                        "(critical T/3, critical T)")
    assert not word_problems(str(rep))


def test_transitional_and_collapse_and_their_join(prob):
    trans, coll = sr.transitional_report(), sr.collapse_report(prob)
    assert trans.lines()[0].startswith("k = σ = 1: notebook ") and all(c.passed for c in trans.claims)
    assert coll.lines()[-1].startswith("weight decay in this check: γ = β₂ − α₃ × critical T = ")
    assert coll["weight_decay"] > 0 and all(c.passed for c in coll.claims)
    assert all(line.startswith("    T = ") for line in coll.lines()[:-1]) and len(coll.lines()) >= 3
    joined = sr.phase_diagram_report(prob)
    assert joined.lines() == sr.windows_report().lines() + trans.lines() + coll.lines()
    assert len(joined.claims) == len(sr.windows_report().claims) + len(trans.claims) + len(coll.claims)
    assert not word_problems(str(joined))


def test_histograms_one_line_per_depth():
    rep = sr.histograms_report()
    assert [line.split(":")[0] for line in rep.lines()] == [c.name for c in rep.claims]
    assert len(rep.claims) == 3 and all(c.passed for c in rep.claims)
    for line, c in zip(rep.lines(), rep.claims, strict=True):
        assert f"KS quantile {c.details['ks_crit']:.4f}" in line
    assert not word_problems(str(rep))


def test_tails_rows_and_the_depth0_contrast(prob):
    rep = sr.tails_report(prob, depth0_temperatures=(0.1, 0.3))
    lines = rep.lines()
    assert len(lines) == 5 and all(c.passed for c in rep.claims)
    for line in lines[:3]:
        depth = int(re.match(r"L = (\d+)", line).group(1))
        assert depth >= 1 and f"predicted {stationary.tail_exponent(depth):g}," in line
    assert lines[3] != lines[4].replace("T = 0.3", "T = 0.1")  # at L = 0 the exponent changes with T
    assert not word_problems(str(rep))


@pytest.fixture(scope="module")
def scan():
    return discrete_sgd_scan(n_runs=300)


def test_discrete_scan_lines_and_claims(scan):
    rep = sr.discrete_scan_report(scan)
    assert len(rep.lines()) == len(scan.T) and all(c.passed for c in rep.claims)
    assert rep.lines()[0] == (f"T = {scan.T[0]:.2f}: plain SGD diverged in {scan.sgd_div[0]:5.1%} of runs; KS vs SDE "
                              f"{scan.sgd_ks[0]:.3f} (threshold {scan.sgd_crit[0]:.3f})")
    assert not word_problems(str(rep))


def test_a_scan_whose_survivors_drift_at_small_T_fails(scan):
    broken = dataclasses.replace(scan, sgd_ks=(1.0, *scan.sgd_ks[1:]))
    assert not all(c.passed for c in sr.discrete_scan_report(broken).claims)
    with pytest.raises(ValueError):
        sr.discrete_scan_report(dataclasses.replace(scan, sgd_ks=scan.sgd_ks[:-1]))


def test_integrator_study(prob):
    rep = sr.integrator_report(prob, n_chains=1000, n_plain=500)
    lines = rep.lines()
    assert lines[0].startswith("noise scale 1/√n = ") and len(lines) == 3 + len(rep["rows"])
    assert "dt = 1e-3, t = 10:" in lines[-2] and "of 500 chains lost" in lines[-2]
    assert not word_problems(str(rep))


def test_spread_sqrt_t_line():
    rep = sr.spread_sqrt_t_report()
    d = rep.claims[0].details
    assert rep.lines()[0].endswith(f"→  exponent {d['slope']:.3f} (prediction {d['predicted']:.3f}, √T = 0.5)")
    assert not word_problems(str(rep))
