"""symsgd_core.rank_jumps.report: Notebook 04's printed tables. On real results (small budgets where a run is
needed): every line the notebook shows is there, the numbers are the results' own, and no table writes ASCII math
(``B_1``, ``^(``, ``_L``, ``_c``: tests/ui/test_ui_words.py's rule plus the lesson review's list). On broken input:
a clear ValueError."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from symsgd_core import rank_jumps
from symsgd_core.core.checking import make_result
from symsgd_core.rank_jumps import report as rr
from symsgd_jupyter.text_checks import word_problems

EXP = rank_jumps.EPSILON_EXPERIMENT
PROBLEM = EXP.problem
CRIT = rank_jumps.DEFAULT_B_CRITERION
#: ASCII math the lesson review found in printed output (on top of test_ui_words.ASCII_MATH).
REVIEW_ASCII = re.compile(r"\^\(|_L|_1|_c\b|\^t|_r\b|_i\b|_F\b|_max|_ℓ")


def ascii_math(rep) -> list[str]:
    text = str(rep)
    return word_problems(text) + [m.group(0) for m in REVIEW_ASCII.finditer(text)]


def _check(details: dict):
    """A passed check carrying ``details`` (the tables read only its details)."""
    return make_result("test.check", "a claim", 0.0, 1.0, "test", details=details)


@pytest.fixture(scope="module")
def minima():
    start, rank = rank_jumps.start_minimum()
    return start, rank, rank_jumps.rank_one_minimum()


@pytest.fixture(scope="module")
def trap():
    return rank_jumps.trap(n_seeds=2, steps=20_000)


def test_ascii_math_finder_finds_the_reviews_examples():
    for bad in ("T_c = 0.2", "s_k^(2/L)", "W_L", "B_1", "a_c", "(1 − 2ηγ)^t", "max_ℓ ‖W_ℓ‖_F"):
        assert ascii_math(bad), bad
    assert not ascii_math("sₖ²ᐟᴸ, Bᵣ, B₁, ‖θᵢ − θ̂‖², γ¹ᐟ⁽ᴸ⁻²⁾, the basin radius, η·λₘₐₓ, 𝓛ᵧ")


def test_report_is_the_core_report():
    from symsgd_core.core.report import Report
    from symsgd_core.sde_noise import report as sr

    rep = Report(["a", "b"], values={"x": 1})
    assert str(rep) == "a\nb" and rep["x"] == 1 and sr.Report is Report


def test_setup_report_states_the_problem_and_settings():
    text = str(rr.setup_report())
    assert "A* = [[1, 0.2], [5, 1]]" in text and "(1,1), (1,2), (2,2) (N = 3)" in text
    assert f"hot phase: η = {EXP.lr_hot}, γ = {EXP.weight_decay_hot}" in text
    assert not ascii_math(text)


def test_trap_report_lists_what_the_status_line_does_not(trap):
    rep = rr.trap_report(trap, PROBLEM)
    lines = rep.lines()
    assert lines[0] == f"SGD jump steps (−1: none): {trap.sgd.jump_step(1).tolist()}"
    lam = rank_jumps.analysis.loss_hessian_top_eigenvalue(trap.start, PROBLEM, EXP.weight_decay_hot)
    assert rep["lam_max"] == pytest.approx(lam)
    assert f"= {EXP.lr_hot * lam:.2f} (not small)" in lines[-1]
    assert not ascii_math(rep)
    with pytest.raises(ValueError, match="no SGD run"):
        rr.trap_report(SimpleNamespace(gd=trap.gd, sgd=SimpleNamespace(n_runs=0), start=trap.start), PROBLEM)


def test_minima_report_reads_the_minima_and_the_check(minima):
    start, rank, one = minima
    rows = [{"lr": 0.075, "measured_mean": 0.015, "lower": 0.012, "upper": 0.02}]
    check = _check({"rows": rows})
    rep = rr.minima_report(start, rank, one, PROBLEM, check)
    text = str(rep)
    assert "rank of A* = 1;  GD's minimum: rank 2, in B₁: False, in B₂: True;  the rank-1 minimum: in B₁: True" in text
    assert "η = 0.075: mean imbalance 0.0150 in [0.0120, 0.0200] (mean/η = 0.200" in text
    assert 1.0 < rep["layer_scales"][0] < CRIT.eps_balance
    assert not ascii_math(rep)
    with pytest.raises(ValueError, match="rows"):
        rr.minima_report(start, rank, one, PROBLEM, _check({}))




def test_explosion_report_compares_with_the_law(minima):
    one = minima[2]
    explosion = rank_jumps.check_explosion(one)
    as_printed = rank_jumps.check_explosion(one, formula=lambda i, L: i ** (-2 / L))[0]
    rep = rr.explosion_report(explosion, as_printed, EXP.depth)
    rows = [line for line in rep.lines() if line.strip().startswith("i =")]
    assert rows
    for line in rows:  # the measured squared distance equals the law L·i^(−2/L) printed next to it
        measured, law = re.findall(r"= (\d+\.\d{4})", line)[:2]
        assert measured == law, line
    assert "relative error 3.0000 = L − 1" in str(rep)
    assert not ascii_math(rep)
    with pytest.raises(ValueError, match="rows"):
        rr.explosion_report([], as_printed, EXP.depth)


def test_eckart_young_and_origin_reports(minima):
    rep = rr.eckart_young_report(minima[0].end_to_end()[0])
    assert rep["distance"] == pytest.approx(np.linalg.svd(minima[0].end_to_end()[0], compute_uv=False)[1])
    assert not ascii_math(rep)
    origin = rank_jumps.check_origin_condition(PROBLEM)
    text = str(rr.origin_report(origin))
    assert "L = 2, γ" in text and "→ saddle" in text and "→ minimum" in text
    assert not ascii_math(text)
    with pytest.raises(ValueError, match="rows"):
        rr.origin_report(_check({}))




def _run(ranks, s2):
    return SimpleNamespace(rank=np.asarray(ranks), singular_values=np.stack([np.ones_like(s2), s2], axis=-1))


def test_mechanism_report_sums_the_exponents():
    m = SimpleNamespace(forced_rank=1, gd=_run([[1, 1]], np.array([[1e-16, 2e-16]])),
                        sgd=_run([[1, 1]], np.array([[3e-16, 1e-17]])))
    text = str(rr.mechanism_report(m, [1.01, 1.0, 1.0, 1.0], 4))
    assert "GD ranks [1], SGD ranks [1] at every record; largest s₂(A): 3e-16" in text and "sum = 4.010 (L = 4)" in text
    assert not ascii_math(text)
    with pytest.raises(ValueError, match="exponents"):
        rr.mechanism_report(m, [1.0, 1.0], 4)


def test_basin_report_scales_the_radius():
    slope = -0.17
    radius = rank_jumps.basin_radius(4, 0.027, slope)
    rep = rr.basin_report(SimpleNamespace(boundary=(0.6, 0.9), slope=slope, alpha_c=radius), 4, 0.027)
    assert rep["radius_small"] == pytest.approx(radius / 10)   # γ^(1/(L−2)) at L = 4: γ/100 → radius/10
    assert "= the figure's radius/10" in str(rep) and not ascii_math(rep)


def test_min_norm_report_table_and_grid():
    sweep = [{"weight_decay": 0.01, "rank1": 0.0773, "rank2": 0.0784},
             {"weight_decay": 0.005, "rank1": 0.0409, "rank2": 0.0394}]
    rep = rr.min_norm_report(4, sweep, eps=0.2, eps_grid=rank_jumps.claims.MIN_NORM_EPS_GRID)
    ranks = [line.split()[-1] for line in rep.lines()[1:4]]
    assert ranks == ["2", "2", "1"]
    assert "rank 2 for every grid ε ≤ 0.28, rank 1 for every grid ε ≥ 0.30" in str(rep)
    assert rep.lines()[-2].endswith("lower: rank 1") and rep.lines()[-1].endswith("lower: rank 2")
    assert not ascii_math(rep)
    with pytest.raises(ValueError, match="sweep"):
        rr.min_norm_report(4, [])


def test_noise_report():
    near = {"a": np.array([0.01, 0.02]), "share": np.array([2.4e-13, 1.5e-11])}
    text = str(rr.noise_report(near, {"rank_C": np.array([2])}, {0.01: {"rank1": 0.0873, "rank2": 0.0792}}))
    assert "push a = 0.02: share of η²C on rank-raising directions 1.50e-11" in text
    assert "ε = 0.1, γ = 0.01: rank-1 minimum 0.0873" in text and not ascii_math(text)
    with pytest.raises(ValueError, match="push"):
        rr.noise_report({"a": []}, {"rank_C": [2]}, {})


def test_anneal_report_names_the_lower_minimum():
    ens = SimpleNamespace(jump_steps=np.array([100, -1, 300, 400]))
    text = str(rr.anneal_report({"rank1": 0.0873, "rank2": 0.0792}, 0.0891, ens))
    assert "rank-1 minimum 0.08730, rank-2 minimum 0.07920 (lower: rank 2)" in text and "probability < 0.089" in text
    assert f"(at ε = {EXP.eps}: 0.75 of the runs jumped)" in text and not ascii_math(text)
    assert "lower: rank 1" in str(rr.anneal_report({"rank1": 0.07, "rank2": 0.08}, 0.1))


def _lang_runs(ranks, s2):
    ranks = np.asarray(ranks)
    return SimpleNamespace(rank=ranks, steps=np.arange(ranks.shape[1]) * 10,
                           singular_values=np.stack([np.ones(ranks.shape), np.asarray(s2)], axis=-1))


def test_langevin_report_first_steps_and_floors():
    sgd = _lang_runs([[2, 2, 1, 1]], [[0.3, 0.3, 1e-17, 3e-17]])
    lang = _lang_runs([[2, 1, 1, 2]], [[0.3, 2e-5, 4e-5, 0.3]])
    L = SimpleNamespace(sgd=sgd, langevin=lang, sgd_transitions=(np.array([1]), np.array([0])),
                        langevin_transitions=(np.array([1]), np.array([1])),
                        stay_low_rank=(np.array([1.0]), np.array([2 / 3])))
    rep = rr.langevin_report({"matched": L}, {"rank1": 0.188, "rank2": 0.208})
    text = str(rep)
    assert "first step at rank ≤ 1: {'SGD': [20], 'Langevin': [10]}" in text and "rank-1 minimum 0.1880 <" in text
    assert rep["sgd_floor"] == pytest.approx(2e-17) and "median s₂(A) of SGD at rank 1: 2.0e-17" in text
    assert not ascii_math(text)
    with pytest.raises(ValueError, match="Langevin"):
        rr.langevin_report({}, {"rank1": 0.1, "rank2": 0.2})
