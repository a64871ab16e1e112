"""symsgd_core.sde_noise.report: Notebook 05's tables on the shipped grid (a header and a line per row), and on a grid
edited on purpose (a failed stored check reads FAIL; a grid without the tasks or rows a table needs raises
ValueError naming them). Every line of every report fits ``report.LINE_WIDTH`` and holds no ASCII math."""

from __future__ import annotations

import copy
import dataclasses
import re

import numpy as np
import pytest

from symsgd_core.sde_noise import blowup as bu
from symsgd_core.sde_noise import controls
from symsgd_core.sde_noise import experiments as sx
from symsgd_core.sde_noise import report as sr
from symsgd_core.sde_noise.claims import ADAPTIVE_LABELS
from symsgd_core.sde_noise.spikes import follow_groups
from symsgd_core.ui.sde_noise import hazard_label

#: ASCII math a reader would have to decode (as tests/ui/test_ui_words.py): a caret, or an underscore before a letter
#: or digit (``B_1``, ``W_L``, ``T_c``, ``τ_match``, ``E_k``).
RAW_MATH = re.compile(r"\^|_\w")


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
    rep = sr.Report(["a", "b"], values={"x": 1})
    rep.lines().append("c")
    assert rep.lines() == ["a", "b"] and rep["x"] == 1
    with pytest.raises(TypeError):
        rep.values["x"] = 2


def test_weak_order_report_passes_the_correct_scheme_and_fails_the_broken_one(grid):
    lines = sr.weak_order_report(grid).lines()
    assert len(lines) == 3 and lines[0].startswith("Euler–Maruyama: passes if")
    assert lines[1].strip().startswith("correct EM: fitted weak order") and lines[1].endswith("-> PASS")
    assert lines[2].strip().startswith("broken increments (order ½)") and lines[2].endswith("-> FAIL")


def test_weak_order_report_says_fail_when_the_stored_check_failed(grid):
    tasks = copy.deepcopy(list(grid.tasks))
    for t in tasks:
        if t["kind"] == "weak_order" and t["params"]["broken"] is None:
            t["result"]["passed"] = False
    lines = sr.weak_order_report(dataclasses.replace(grid, tasks=tuple(tasks))).lines()
    assert lines[1].endswith("-> FAIL")


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
    blank = lines.index("")
    assert lines[blank + 1].startswith("Where the runs sit:")
    assert sum(line.startswith("η = ") for line in lines) == 2 * n_set   # a header per setting in each table
    width = max(len(sr.label_words(label)) for *_, label in shown)
    for label in {label for *_, label in shown}:   # each shown row once in each table
        n = sum(lab == label for *_, lab in shown)
        assert sum(line.startswith(f" {sr.label_words(label):{width}s}  ") for line in lines) == 2 * n, label
    assert sum(line.startswith(" ") and not line.startswith("    ") for line in lines) == 2 * len(shown)
    assert all("S = 2" not in label and "weight" not in label for *_, label in shown)
    assert {(a, b) for a, b, _ in shown} == set(sr.GRID_SETTINGS)


def test_grid_table_report_needs_every_setting(rows):
    cut = {k: v for k, v in rows.items() if k[:2] != (0.3, 0.02)}
    with pytest.raises(ValueError, match="0.02"):
        sr.grid_table_report(cut)


def test_comparison_report_lines_and_values(rows):
    rep = sr.comparison_report(rows)
    lines = rep.lines()
    assert lines[0].startswith("hot: mean first time at rank ≤ 1, SGD ")
    starts = [line for line in lines if not line.startswith(sr.WRAP_INDENT)]   # one per statement
    assert len(starts) == 10 and starts[-1].startswith("Langevin hot: matched τ jumped")
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
    assert [line.split(":")[0] for line in lines[:3]] == ["grid's seeds", "fresh seeds", "both"]
    pooled = rep["pooled"]
    assert pooled.n == rep["hot_main"].passage.n + rep["hot_fresh"].passage.n
    assert len(lines) == 3 + 1 + len(pooled.levels)
    for line, b, k0, k1 in zip(lines[4:], pooled.levels, rep["hot_main"].passage.counts,
                               rep["hot_fresh"].passage.counts):   # the counts of both ensembles add up per level
        assert [float(x) for x in line.split()[:3]] == [b, k0, k1]


def test_passage_report_needs_the_fresh_seeds(follow):
    with pytest.raises(ValueError, match="fresh = True"):
        sr.passage_report([g for g in follow if not g.fresh])


def test_kstar_table_report_has_a_line_per_cell(grid):
    rep = sr.kstar_table_report(grid, factor=10.0)
    lines, ktab = rep.lines(), rep["ktab"]
    assert lines[0].startswith("(a) waits in steps") and lines[1].startswith("  η      γ    k* row 0  k* col 1")
    n = len(ktab)
    assert lines[2 + n] == "" and lines[3 + n].startswith("(b) the test")
    for line, q in zip(lines[2:2 + n], ktab):
        assert line.startswith(f"{q.lr:4.2f}  {q.weight_decay:6.4f}  {q.kstar_row0:8d}  {q.kstar_col1:8d}")
    for line, q in zip(lines[5 + n:5 + 2 * n], ktab):
        assert line.startswith(f"{q.lr:4.2f}  {q.weight_decay:6.4f}")
        assert line.split()[-1] in ("yes", "no", "undecided", "—")
    assert lines[5 + 2 * n].startswith("(0.2, 0.027): predicted wait") and lines[-1].startswith("η = 0.35:")
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


@pytest.mark.slow  # the minima's losses train to both minima: a few seconds
def test_langevin_eps_report_has_a_line_per_row_and_the_minima(grid):
    rep = sr.langevin_eps_report(grid)
    lines = rep.lines()
    assert len(lines) == 1 + len(rep["le"]) + 2 and len(rep["le"]) == len(sx.langevin_eps_rows(grid))
    for line, (eps, start, method) in zip(lines[1:], rep["le"]):
        assert line.startswith(f"{eps:3g}  {method:>8s}  {start:>16s} (rank ")
    m, c = rep["minima"], rep["curvature"]
    assert lines[-2].startswith("ε = 0.1, γ = ")
    assert f"{m['rank1']:.4f}" in lines[-2] and f"{m['rank2']:.4f}" in lines[-2]
    assert lines[-1] == f"  top curvature {c['rank1']:.2f} and {c['rank2']:.2f}"
    assert m["rank1"] < m["rank2"] and c["rank1"] > c["rank2"] > 0  # §4.2: the lower minimum is the steeper one


def test_langevin_eps_report_needs_its_rows(grid):
    with pytest.raises(ValueError, match="langevin_eps"):
        sr.langevin_eps_report(_without(grid, "langevin_eps"))


def test_comparison_summaries_key_every_comparison_row(grid, rows):
    summaries = sx.comparison_summaries(grid)
    assert summaries.keys() == rows.keys() and len(summaries) == len(sx.comparison_rows(grid)) > 0


def test_staircase_report_compares_both_predictions_with_the_measured_wait(grid):
    rep = sr.staircase_report(grid, factor=10.0)
    st, c_rows, c_one = rep["summary"], rep["c_rows"], rep["c_one"]
    lines = rep.lines()
    assert lines[0] == f"staircase: {st.jumped}/{st.n_runs} runs jumped" and len(lines) == 9
    assert set(rep["k_one"]) == set(range(len(sr.STAIRCASE_LEFT_OUT)))
    # the same measured wait, two predictions: the row/column routes far too slow, the one-entry events within 10x
    assert c_rows.measured == c_one.measured and c_rows.within_factor is False and c_one.within_factor is True
    with pytest.raises(ValueError):
        sr.staircase_report(_without(grid, "staircase"), factor=10.0)


@pytest.mark.slow  # the minima's losses train to both minima: a few seconds
def test_rank2_lower_report_has_a_header_and_a_line_per_row(grid):
    rep = sr.rank2_lower_report(grid)
    lines = rep.lines()
    assert lines[0].startswith(f"ε = {sx.RANK2_LOWER[0]}, γ = {sx.RANK2_LOWER[1]}: regularised loss of the rank-1")
    assert len(lines) == 2 + len(rep["lo"]) and lines[1].startswith("η λₘₐₓ at the rank-1 minimum")
    assert all(" from the " in line and "runs that went up" in line for line in lines[2:])
    assert all(len(line) <= sr.LINE_WIDTH and not RAW_MATH.search(line) for line in lines)


def test_rank2_lower_report_needs_its_rows(grid):
    with pytest.raises(ValueError, match="langevin_eps"):
        sr.rank2_lower_report(_without(grid, "langevin_eps"))


def test_task_kinds_report_counts_every_task(grid):
    rep = sr.task_kinds_report(grid)
    assert sum(rep["kinds"].values()) == len(grid.tasks)
    text = " ".join(rep.lines())
    assert text.startswith(f"{len(grid.tasks)} tasks by kind: ")
    for kind, n in rep["kinds"].items():
        assert f"{kind.replace('_', ' ')} {n}" in text
    with pytest.raises(ValueError, match="no tasks"):
        sr.task_kinds_report(dataclasses.replace(grid, tasks=()))


def test_hazard_report_has_a_line_per_hazard_row(grid):
    rep = sr.hazard_report(grid, label=hazard_label)
    lines, haz = rep.lines(), rep["haz"]
    assert lines[1].strip().startswith("adaptive step: max |z|") and lines[1].endswith("-> PASS")
    assert lines[2].strip().startswith("broken: noise ignores") and lines[2].endswith("-> FAIL")
    settings = list(dict.fromkeys((h.lr, h.weight_decay) for h in haz))
    assert len(lines) == 4 + len(settings) + len(haz) + 2 * len(bu.EM_STEPS) + 1 + 6
    rows = [line for line in lines[4:] if line.startswith("  ")]
    assert len(rows) == len(haz)
    for line, h in zip(rows, haz):
        assert line.startswith(f"  {hazard_label(h)} ") and f" {h.events:2d}/{h.n_runs} " in line


def test_hazard_report_needs_the_stored_check(grid):
    with pytest.raises(ValueError, match="adaptive_vs_em"):
        sr.hazard_report(_without(grid, "adaptive_vs_em", lambda t: not t["params"].get("follow")), label=hazard_label)


def test_continuation_report_has_a_line_per_state(grid):
    rep = sr.continuation_report(grid)
    lines, c = rep.lines(), rep["c"]
    n = c["n_states"]
    assert all(line.startswith("state ") and line.endswith("/16") for line in lines[:n])
    assert lines[n].startswith(f"all states: EM {sum(c['em_blew'])}/{16 * n}")
    assert all(line.startswith(sr.WRAP_INDENT) for line in lines[n + 1:])
    with pytest.raises(ValueError, match="continuation"):
        sr.continuation_report(_without(grid, "continuation"))


def test_step_size_report_has_a_line_per_setting():
    rep = sr.step_size_report()
    lines, lam = rep.lines(), rep["lam_max"]
    assert len(lines) == len(sr.GRID_SETTINGS) and set(lam) == {w for _, w in sr.GRID_SETTINGS}
    for line, (lr, weight_decay) in zip(lines, sr.GRID_SETTINGS):
        assert line == (f"η = {lr}, γ = {weight_decay}: λₘₐₓ = {lam[weight_decay]:.2f}, η λₘₐₓ = "
                        f"{lr * lam[weight_decay]:.2f}")
    assert all(0 < lr * lam[w] < 2 for lr, w in sr.GRID_SETTINGS)   # below GD's stability limit (§3.3)


# ---------------------------------------------------------------------------------------------- new tables
def test_follow_report_has_a_line_per_followed_ensemble(grid, follow):
    rep = sr.follow_report(follow, grid)
    lines = rep.lines()
    head = next(i for i, line in enumerate(lines) if line.startswith("η, γ "))
    rows = lines[head + 1:head + 1 + len(follow)]
    for line, g in zip(rows, follow):
        s = g.summary
        assert line.startswith(f"{g.lr:g}, {g.weight_decay:<5g} η/{g.m:<3d} {g.rho:<5g}")
        assert f" {s.events.get('none', 0):2d}/{s.n_runs:<3d} {s.jumped:2d}/{s.n_runs:<3d} " in line
    assert lines[-2].endswith("-> PASS") and lines[-1].endswith("-> FAIL")
    assert set(rep["check"]) == {None, "noise_at_h_max"}


def test_follow_report_needs_the_follow_mode_check(grid, follow):
    with pytest.raises(ValueError, match="follow mode"):
        sr.follow_report(follow, _without(grid, "adaptive_vs_em", lambda t: t["params"].get("follow")))
    with pytest.raises(ValueError, match="no followed ensembles"):
        sr.follow_report((), grid)


def test_spikes_report_has_a_row_per_ensemble_and_level(follow):
    lines = sr.spikes_report(follow).lines()
    n_rates = sum(len(g.spikes) for g in follow)
    n_shapes = sum(max(1, len(g.shapes)) for g in follow)
    rows = [line for line in lines if re.match(r"^ +\d", line) or line == "  none"]
    assert len(rows) == n_rates + n_shapes
    with pytest.raises(ValueError):
        sr.spikes_report(())


@pytest.fixture(scope="module")
def ctl(grid):
    return controls.report(grid.tasks, grid)


def test_controls_report_keeps_every_cell_of_the_three_tables(ctl):
    lines = sr.controls_report(ctl).lines()
    text = "\n".join(lines)
    for name, key in (("steps", 3), ("runs", 4), ("fixed_T", 1)):
        t = ctl.tables[name]
        assert t.title in text
        for row in t.rows:   # every row's key cells start a line in each part of its table
            key_cells = "  ".join(sr._cell(v) for v in row[:key])
            assert any(" ".join(line.split()).startswith(" ".join(key_cells.split())) for line in lines), row
    with pytest.raises(ValueError, match="ControlReport"):
        sr.controls_report(object())


def _explosion_inputs(grid):
    from symsgd_core.sde_noise import explosion

    return explosion.khasminskii_rays(), explosion.transverse_share_rows(), explosion.stored_infinity(grid)


def test_explosion_report_names_every_ray_and_point(grid):
    rays, shares, far = _explosion_inputs(grid)
    text = " ".join(" ".join(sr.explosion_report(rays, shares, far).lines()).replace("\u00a0", " ").split())
    for r in rays:
        assert f"{r.label} ({r.pull_exponent:.1f}, {r.noise_exponent:.1f})" in text
    for r in shares:
        if r["scale"] == 100:
            assert f"{r['label']} {r['f']:.2f}" in text
    assert f"f (averaged) = {far.f_eff:.2f}" in text
    with pytest.raises(ValueError, match="rays"):
        sr.explosion_report((), shares, far)


def test_every_report_fits_the_width_and_holds_no_ascii_math(grid, rows, follow, ctl):
    kstar = sr.kstar_table_report(grid, factor=10.0)
    reports = {
        "weak_order": sr.weak_order_report(grid), "grid_table": sr.grid_table_report(rows),
        "comparison": sr.comparison_report(rows), "follow": sr.follow_report(follow, grid),
        "spikes": sr.spikes_report(follow), "passage": sr.passage_report(follow), "kstar": kstar,
        "relapse": sr.relapse_report(grid), "least_routes": sr.least_routes_report(grid, kstar["by"][sx.HOT]),
        "langevin_eps": sr.langevin_eps_report(grid), "task_kinds": sr.task_kinds_report(grid),
        "hazard": sr.hazard_report(grid, label=hazard_label), "continuation": sr.continuation_report(grid),
        "step_size": sr.step_size_report(), "controls": sr.controls_report(ctl),
        "explosion": sr.explosion_report(*_explosion_inputs(grid))}
    too_wide = [(name, len(line), line) for name, r in reports.items() for line in r.lines()
                if len(line) > sr.LINE_WIDTH]
    raw = [(name, line) for name, r in reports.items() for line in r.lines() if RAW_MATH.search(line)]
    assert not too_wide, too_wide
    assert not raw, raw
    # rank2_lower_report trains to both minima (slow): it is checked in its own test


def test_the_width_and_raw_math_checks_catch_a_bad_line():
    assert RAW_MATH.search("time in B_1") and RAW_MATH.search("v^(−7/2)") and RAW_MATH.search("T_c")
    assert not RAW_MATH.search("time in B₁, λₘₐₓ, log₁₀ s₂, A₀₁")
    wrapped = sr._wrap("word " * 60)
    assert len(wrapped) > 1 and all(len(line) <= sr.LINE_WIDTH for line in wrapped)
    assert all(line.startswith(sr.WRAP_INDENT) for line in wrapped[1:])


def test_compact_numbers_and_intervals():
    assert [sr._g(x) for x in (0.0716, 3.97, 435.2, 4818.4, 99_999, 128_000, 1.22e14, 5.24e-8, 0.0)] == \
        ["0.0716", "3.97", "435", "4818", "99999", "1.3e5", "1.2e14", "5.2e-8", "0"]
    assert sr._g(np.inf) == "∞" and sr._g(np.nan) == "nan"
    assert sr._iv((435.0, 340.0, 565.0)) == "435 [340, 565]"
    assert sr._iv((np.inf, 2.08e5, np.inf)) == "none (≥ 2.1e5)"
    assert sr._iv((np.nan, np.nan, np.nan)) == "—"


def test_table_splits_into_parts_that_repeat_the_key_columns():
    columns = ("law", *[f"column {k:02d}" for k in range(12)])
    rows = [("SGD", *[float(k) for k in range(12)]), ("±1", *[1e6 * k for k in range(12)])]
    lines = sr._table("a title", columns, rows, key=1)
    assert lines[0] == "a title" and all(len(line) <= sr.LINE_WIDTH for line in lines)
    parts = [line for line in lines if line.lstrip().startswith("law")]
    assert len(parts) >= 2   # 13 columns of 9 characters do not fit one line of 100
    assert sum("column" in line for line in lines) == len(parts)
    for k in range(12):   # every column is in exactly one part
        assert sum(f"column {k:02d}" in line for line in parts) == 1
    assert sum(line.lstrip().startswith("±1") for line in lines) == len(parts)
