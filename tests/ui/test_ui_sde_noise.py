"""Controllers of Notebook 05: each draws and describes its experiment's frozen result (the science is tested in
tests/sde_noise/test_sde_noise_experiments.py; every slider at both ends and back in
tests/ui/test_ui_every_slider.py)."""

from __future__ import annotations

import collections

import numpy as np
from small_settings import SMALL

from symsgd_core.sde_noise.report import label_words
from symsgd_core.ui import sde_noise as ui
from symsgd_jupyter.figure_checks import figure_is_finite, slider_names


def test_compare_controller_draws_its_three_ensembles():
    c = ui.SdeCompareController(**SMALL[ui.SdeCompareController])
    assert set(slider_names(c)) == {"lr", "weight_decay", "m", "temp_factor", "seed"}
    r = c.result
    assert r.sde.n_runs == 3 and r.sgd.n_runs == 3 and r.langevin.n_runs == 2
    assert len(c.figure.data) == 7 and "SDE" in c.figure.layout.title.text


def test_compare_controller_reports_a_setting_without_a_rank2_minimum():
    c = ui.SdeCompareController(t_max=300.0, n_runs_sde=2, n_runs_sgd=2, n_runs_langevin=1)
    c.set(weight_decay=0.03)  # GD already finds rank 1 at γ = 0.03? if not, the run simply draws
    assert figure_is_finite(c.figure) and c.status.value.strip()


def test_grid_controller_reads_the_shipped_grid():
    c = ui.SdeGridController()
    assert len(c.controls["setting"].options) == 3
    for setting in c.controls["setting"].options:
        c.set(setting=setting)
        blew_up = c.trace("runs an integrator's rule stopped")
        labels = list(blew_up.y)
        assert "SGD" in labels and any(lab.startswith("SDE") for lab in labels)
        # the bars are the stored rows' numbers, in the rows' order (a fraction ≤ 1 holds by construction)
        assert list(blew_up.x) == [r.summary.diverged / r.summary.n_runs for r in c.result.rows]
        # in the tables' words: the stored keys' τ_match reads "matched τ" (the grid file is unchanged)
        assert labels == [label_words(r.label) for r in c.result.rows]
        assert not any("τ_match" in lab for lab in labels) and any("τ_match" in r.label for r in c.result.rows)


def test_setting_slider_shows_every_digit_of_the_stored_settings():
    """The stored-grid selector names each (η, γ) as the notebook's text does ("η = 0.3, γ = 0.027"), and its row
    is wide enough for the readout to show the whole label: in a 300 px row the readout was squeezed and showed
    "γ = 0.0" for γ = 0.027. Builds the slider only (no grid, no simulation)."""
    Row = collections.namedtuple("Row", "lr weight_decay")
    w = ui._setting_slider([Row(0.3, 0.027), Row(0.2, 0.027), Row(0.3, 0.02), Row(0.3, 0.027)], None)
    assert w.options == ("η = 0.3, γ = 0.027", "η = 0.2, γ = 0.027", "η = 0.3, γ = 0.02")
    assert w.value == "η = 0.3, γ = 0.027" and w._options_labels[w.index] == w.value   # the readout's text
    assert ui._setting_slider([Row(0.25, 0.0235)], None).value == "η = 0.25, γ = 0.0235"
    # ipywidgets 8 lays the row out as description, track (flex basis 148 px, 12 px of margins) and readout (the
    # label, at most 148 px, 4 px margin); when they do not fit, the readout shrinks and hides the label's end.
    # 8 px per character bounds the 13 px interface font from above.
    need = 8 * len(w.description) + 8 + 148 + 12 + min(148, 8 * max(map(len, w.options))) + 4
    assert int(w.layout.width.removesuffix("px")) >= need, (w.layout.width, need)


def test_blowup_controller_draws_the_hazards_of_every_setting_and_the_continuations():
    c = ui.BlowupController()
    assert len(c.controls["setting"].options) == 3
    for setting in c.controls["setting"].options:
        c.set(setting=setting)
        seen, bound = c.trace("rate of stopped paths, 95 % interval"), c.trace("upper bound (none stopped)")
        labels = list(seen.y) + list(bound.y)
        assert len(labels) == 6 and sum(lab.startswith("adaptive") for lab in labels) == 3
        assert np.all(np.asarray(seen.x) > 0)
        assert "stopped by t = 3000" in c.status.value
    traces = [t for t in c.figure.data if t.xaxis == "x2"]
    assert len(traces) == 3 and any("adaptive" in t.name for t in traces)


def test_jump_event_controller_draws_both_routes():
    c = ui.JumpEventController()
    z = np.asarray(c.figure.data[0].z, dtype=float)
    assert z.shape == (4, 3) and np.all(z > 0)
    assert "p to the power k*" in c.status.value


def test_every_failure_kind_of_the_comparison_shows_at_a_warning_level():
    """A run stopped by a divergence rule and no jump at all are failures of the runs: "warning" (both were "info");
    the comparison itself is "info"."""
    from types import SimpleNamespace

    from symsgd_core.core.results import Outcome
    from symsgd_core.sde_noise.experiments import COMPARE_OUTCOMES

    assert set(ui.SdeCompareController.LEVELS) == set(COMPARE_OUTCOMES)
    numbers = {f"{d}_{k}": 1 for d in ("sgd", "sde", "langevin") for k in ("runs", "jumped", "diverged", "returned")}
    numbers.update({f"{d}_wait": (10.0, 5.0, 20.0) for d in ("sgd", "sde", "langevin")})
    numbers.update(lr=0.3, weight_decay=0.02, m=16, t_max=100.0, tau=0.01)
    for kind in COMPARE_OUTCOMES:
        r = SimpleNamespace(outcome=Outcome(kind, kind != "jumped", numbers))
        level = ui.SdeCompareController.words(ui.SdeCompareController.__new__(ui.SdeCompareController), r).level
        assert level == ("info" if kind == "jumped" else "warning"), (kind, level)
