"""symsgd_core.sde_noise.report: Notebook 05's tables on the shipped grid (a header and a line per row), and on a grid
edited on purpose (a failed stored check reads FAIL; a grid without the tasks or rows a table needs raises
ValueError naming them)."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from symsgd_core.sde_noise import blowup as bu
from symsgd_core.sde_noise import experiments as sx
from symsgd_core.sde_noise import report as sr
from symsgd_core.sde_noise.claims import ADAPTIVE_LABELS
from symsgd_core.sde_noise.spikes import follow_groups
from symsgd_core.ui.sde_noise import hazard_label


@pytest.fixture(scope="module")
def grid():
    return sx.load_grid()


@pytest.fixture(scope="module")
def rows(grid):
    return {(r.lr, r.weight_decay, r.label): r.summary for r in sx.comparison_rows(grid)}


def _without(grid, kind, pred=lambda t: True):
    """The grid with the tasks of ``kind`` that satisfy ``pred`` removed."""
    return dataclasses.replace(grid, tasks=tuple(t for t in grid.tasks if not (t["kind"] == kind and pred(t))))


def test_report_lines_are_a_copy_and_values_read_only():
    rep = sr.Report(["a", "b"], {"x": 1})
    rep.lines().append("c")
    assert rep.lines() == ["a", "b"] and rep["x"] == 1
    with pytest.raises(TypeError):
        rep.values["x"] = 2


def test_weak_order_report_passes_the_correct_scheme_and_fails_the_broken_one(grid):
    lines = sr.weak_order_report(grid).lines()
    assert len(lines) == 2
    assert lines[0].strip().startswith("correct EM: fitted weak order") and lines[0].endswith("-> PASS")
    assert lines[1].strip().startswith("broken increments (order ½)") and lines[1].endswith("-> FAIL")


def test_weak_order_report_says_fail_when_the_stored_check_failed(grid):
    tasks = copy.deepcopy(list(grid.tasks))
    for t in tasks:
        if t["kind"] == "weak_order" and t["params"]["broken"] is None:
            t["result"]["passed"] = False
    lines = sr.weak_order_report(dataclasses.replace(grid, tasks=tuple(tasks))).lines()
    assert lines[0].endswith("-> FAIL")


def test_weak_order_report_needs_its_tasks(grid):
    with pytest.raises(ValueError, match="weak_order"):
        sr.weak_order_report(_without(grid, "weak_order"))
    with pytest.raises(ValueError, match="biased"):
        sr.weak_order_report(_without(grid, "weak_order", lambda t: t["params"]["broken"] == "biased"))


def test_grid_table_report_has_two_tables_with_a_line_per_row(grid, rows):
    rep = sr.grid_table_report(rows)
    lines, shown = rep.lines(), rep["shown"]
    n_set = len(sr.GRID_SETTINGS)
    assert lines[0].startswith("How the runs jump:")
    assert len(lines) == 3 + n_set + len(shown) + 1 + 2 + n_set + len(shown)
    assert lines[3 + n_set + len(shown)] == ""
    width = max(len(label) for *_, label in shown)
    for label in {label for *_, label in shown}:   # each shown row once in each table
        n = sum(lab == label for *_, lab in shown)
        assert sum(line.startswith(f"   {label:{width}s}  ") for line in lines) == 2 * n, label
    assert sum(line.startswith("   ") for line in lines) == 2 * len(shown)
    assert all("S = 2" not in label and "weight" not in label for *_, label in shown)
    assert {(a, b) for a, b, _ in shown} == set(sr.GRID_SETTINGS)


def test_grid_table_report_needs_every_setting(rows):
    cut = {k: v for k, v in rows.items() if k[:2] != (0.3, 0.02)}
    with pytest.raises(ValueError, match="0.02"):
        sr.grid_table_report(cut)


def test_comparison_report_lines_and_values(rows):
    rep = sr.comparison_report(rows)
    lines = rep.lines()
    assert lines[0].startswith("hot: SGD ") and len(lines) == 10
    assert lines[-1].startswith("Langevin hot: 1× jumped")
    assert rep["hot"] == sx.HOT and rep["sgd"] is rows[(*sx.HOT, "SGD")]
    assert rep["sde"] is rows[(*sx.HOT, ADAPTIVE_LABELS[sx.HOT])]


def test_comparison_report_names_a_missing_row(rows):
    cut = {k: v for k, v in rows.items() if k[2] != "Langevin 10× τ_match"}
    with pytest.raises(ValueError, match="Langevin 10× τ_match"):
        sr.comparison_report(cut)


@pytest.fixture(scope="module")
def follow(grid):
    return follow_groups(grid)


def test_passage_report_fits_three_ensembles(follow):
    rep = sr.passage_report(follow)
    lines = rep.lines()
    assert [line.split(":")[0] for line in lines] == ["grid's seeds", "fresh seeds", "both"]
    assert rep["pooled"].n == rep["hot_main"].passage.n + rep["hot_fresh"].passage.n


def test_passage_report_needs_the_fresh_seeds(follow):
    with pytest.raises(ValueError, match="fresh = True"):
        sr.passage_report([g for g in follow if not g.fresh])


def test_kstar_table_report_has_a_line_per_cell(grid):
    rep = sr.kstar_table_report(grid, factor=10.0)
    lines, ktab = rep.lines(), rep["ktab"]
    assert lines[0].startswith(" η     γ      k*row0 k*col1")
    assert len(lines) == 1 + len(ktab) + 3
    for line, q in zip(lines[1:], ktab):
        assert line.startswith(f"{q.lr:4.2f}  {q.weight_decay:6.4f}  {q.kstar_row0:5d}  {q.kstar_col1:5d}")
        assert line.split()[-1] in ("yes", "no", "undecided", "—")
    assert lines[-3].startswith("(0.2, 0.027): predicted wait") and lines[-1].startswith("η = 0.35:")
    assert set(rep["by"]) == set(rep["cmp"]) == {(q.lr, q.weight_decay) for q in ktab}


def test_kstar_table_report_needs_the_waiting_tasks(grid):
    with pytest.raises(ValueError):
        sr.kstar_table_report(_without(grid, "waiting", lambda t: t["params"]["lr"] == 0.2), factor=10.0)


def test_relapse_report_counts_the_relapsing_sequences(grid):
    rep = sr.relapse_report(grid)
    lines = rep.lines()
    assert lines[0].startswith(f"{rep['n_rel']} of {rep['n_seq']} forced sequences relapse")
    assert len(lines) == 1 + len(rep["pairs"])
    assert all(line.startswith("  η = ") and "first → stable" in line for line in lines[1:])


def test_relapse_report_needs_the_kstar_tasks(grid):
    with pytest.raises(ValueError, match="kstar"):
        sr.relapse_report(_without(grid, "kstar"))


def test_least_routes_report(grid):
    by = sr.kstar_table_report(grid, factor=10.0)["by"]
    rep = sr.least_routes_report(grid, by[sx.HOT])
    lines = rep.lines()
    assert sorted(line.split(":")[0] for line in lines[:-1]) == ["col0", "row1"]
    assert lines[-1].startswith(f"diagonal route: k* = {rep['kd']}, p = 2/3")
    with pytest.raises(ValueError, match="row1 and col0"):
        sr.least_routes_report(_without(grid, "kstar", lambda t: t["params"]["route"] in ("row1", "col0")),
                               by[sx.HOT])


def test_langevin_eps_report_has_a_line_per_row(grid):
    rep = sr.langevin_eps_report(grid)
    lines = rep.lines()
    assert len(lines) == len(rep["le"]) == len(sx.langevin_eps_rows(grid))
    for line, (eps, start, method) in zip(lines, rep["le"]):
        assert line.startswith(f"ε = {eps}: {method:>8} from the {start} minimum")
    with pytest.raises(ValueError, match="langevin_eps"):
        sr.langevin_eps_report(_without(grid, "langevin_eps"))


@pytest.mark.slow  # the minima's losses train to both minima: a few seconds
def test_rank2_lower_report_has_a_header_and_a_line_per_row(grid):
    rep = sr.rank2_lower_report(grid)
    lines = rep.lines()
    assert lines[0].startswith(f"ε = {sx.RANK2_LOWER[0]}, γ = {sx.RANK2_LOWER[1]}: 𝓛_γ of the rank-1 minimum")
    assert len(lines) == 1 + len(rep["lo"])
    assert all(" from the " in line and "runs that went up" in line for line in lines[1:])


def test_rank2_lower_report_needs_its_rows(grid):
    with pytest.raises(ValueError, match="langevin_eps"):
        sr.rank2_lower_report(_without(grid, "langevin_eps"))


def test_task_kinds_report_counts_every_task(grid):
    rep = sr.task_kinds_report(grid)
    assert sum(rep["kinds"].values()) == len(grid.tasks)
    assert rep.lines()[0] == f"tasks by kind: {rep['kinds']}" and len(rep.lines()) == 2
    with pytest.raises(ValueError, match="no tasks"):
        sr.task_kinds_report(dataclasses.replace(grid, tasks=()))


def test_hazard_report_has_a_line_per_hazard_row(grid):
    rep = sr.hazard_report(grid, label=hazard_label)
    lines, haz = rep.lines(), rep["haz"]
    assert lines[0].strip().startswith("adaptive step: max |z|") and lines[0].endswith("-> PASS")
    assert lines[1].strip().startswith("broken: noise ignores") and lines[1].endswith("-> FAIL")
    assert len(lines) == 2 + len(haz) + 2 * len(bu.EM_STEPS) + 1 + 6
    for line, h in zip(lines[2:], haz):
        assert line.startswith(f"η = {h.lr}, γ = {h.weight_decay}  {hazard_label(h)}")


def test_hazard_report_needs_the_stored_check(grid):
    with pytest.raises(ValueError, match="adaptive_vs_em"):
        sr.hazard_report(_without(grid, "adaptive_vs_em", lambda t: not t["params"].get("follow")), label=hazard_label)


def test_continuation_report_has_a_line_per_state(grid):
    rep = sr.continuation_report(grid)
    lines, c = rep.lines(), rep["c"]
    assert len(lines) == c["n_states"] + 1
    assert all(line.startswith("state ") and line.endswith("/16") for line in lines[:-1])
    assert lines[-1].startswith(f"all states: EM {sum(c['em_blew'])}/{16 * c['n_states']}")
    with pytest.raises(ValueError, match="continuation"):
        sr.continuation_report(_without(grid, "continuation"))


def test_step_size_report_has_a_line_per_setting():
    rep = sr.step_size_report()
    lines, lam = rep.lines(), rep["lam_max"]
    assert len(lines) == len(sr.GRID_SETTINGS) and set(lam) == {w for _, w in sr.GRID_SETTINGS}
    for line, (lr, weight_decay) in zip(lines, sr.GRID_SETTINGS):
        assert line == (f"η = {lr}, γ = {weight_decay}: λ_max = {lam[weight_decay]:.2f}, η λ_max = "
                        f"{lr * lam[weight_decay]:.2f}")
    assert all(0 < lr * lam[w] < 2 for lr, w in sr.GRID_SETTINGS)   # below GD's stability limit (§3.3)
