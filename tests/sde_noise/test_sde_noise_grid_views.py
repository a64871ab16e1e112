"""The stored grid's figure experiments (``sde_noise.experiments.grid_view``, ``blowup_view``, ``jump_event_view``):
one (η, γ) or route of the shipped grid, and the outcome its figure words (nothing else:
``tests/ui/test_ui_words_from_outcome.py``)."""

from __future__ import annotations

import math

import pytest

from symsgd_core.sde_noise import experiments as ex
from symsgd_core.sde_noise.blowup import hazard_rows


@pytest.fixture(scope="module")
def grid():
    return ex.load_grid()


def test_setting_label_writes_every_digit():
    assert ex.setting_label(0.3, 0.027) == "η = 0.3, γ = 0.027" and ex.setting_label(0.25, 0.0235).endswith("0.0235")


def test_grid_view_selects_one_setting_and_quotes_its_rows(grid):
    rows = ex.comparison_rows(grid)
    sde_settings = list(dict.fromkeys(ex.setting_label(r.lr, r.weight_decay) for r in rows
                                      if r.label.startswith("SDE")))
    assert ex.grid_view(rows=rows).rows == ex.grid_view(sde_settings[0], rows=rows).rows  # None: the first SDE one
    for setting in sde_settings:
        v = ex.grid_view(setting, rows=rows)
        assert v.rows and all(ex.setting_label(r.lr, r.weight_decay) == setting for r in v.rows)
        assert v.rows == tuple(r for r in rows if ex.setting_label(r.lr, r.weight_decay) == setting)  # grid order
        n, sde = v.outcome.numbers, [r for r in v.rows if r.label.startswith("SDE")]
        sgd = next(r.summary for r in v.rows if r.label == "SGD")
        assert (n["sgd_jumped"], n["sgd_n_runs"]) == (sgd.jumped, sgd.n_runs)
        assert n["sgd_wait"] == tuple(sgd.wait[:3]) and n["n_runs"] == v.rows[0].summary.n_runs
        labels = v.outcome.labels["sde_labels"]
        assert labels == tuple(r.label for r in sde) and len(labels) >= 1
        for key, field in (("sde_jumped", "jumped"), ("sde_stopped", "diverged"), ("sde_returned", "returned")):
            assert n[key] == tuple(getattr(r.summary, field) for r in sde)
    with pytest.raises(ValueError, match="settings are"):
        ex.grid_view("η = 9, γ = 9", rows=rows)


def test_blowup_view_quotes_each_integrator(grid):
    rows = hazard_rows(grid)
    v = ex.blowup_view(rows=rows)
    first = ex.setting_label(rows[0].lr, rows[0].weight_decay)
    assert all(ex.setting_label(r.lr, r.weight_decay) == first for r in v.rows)
    n = v.outcome.numbers
    assert v.outcome.labels["integrator"] == tuple(r.integrator for r in v.rows)
    assert n["events"] == tuple(r.events for r in v.rows)
    assert n["rate"] == tuple(r.rate[0] for r in v.rows) and n["rate_hi"] == tuple(r.rate[2] for r in v.rows)
    for rho, row in zip(n["rho"], v.rows):
        assert (math.isnan(rho) and row.rho is None) or rho == row.rho


@pytest.mark.parametrize(("route", "short"), list(ex.JUMP_ROUTES.items()))
def test_jump_event_view_spans_the_route_s_kstar(grid, route, short):
    rows = ex.kstar_rows(grid)
    v = ex.jump_event_view(route, rows=rows)
    ks = [getattr(r, f"kstar_{short}") for r in rows]
    n = v.outcome.numbers
    assert v.route == short and (n["kstar_min"], n["kstar_max"]) == (min(ks), max(ks))
    assert (v.lrs, v.weight_decays, v.kstar) == ex.kstar_grid(rows, short)
    lo = next(r for r in rows if getattr(r, f"kstar_{short}") == min(ks))  # the first row at the minimum
    assert (n["min_lr"], n["min_weight_decay"]) == (lo.lr, lo.weight_decay)
    assert n["p"] == rows[0].p and 0 < n["p"] < 1
    with pytest.raises(ValueError, match="route"):
        ex.jump_event_view("row 1", rows=rows)
