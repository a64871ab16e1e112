"""The outcomes of Notebook 01's experiments: decided from the runs, as data (the figures only word them)."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core.balance.experiments import (
    DISCRETE_OUTCOMES,
    THREE_DYNAMICS_OUTCOMES,
    balance_ensemble,
    discrete_breakdown,
    divergence_onset,
    three_dynamics,
)


def test_divergence_onset_is_the_first_step_past_the_stable_zone_or_none_with_the_largest_value():
    theta = np.array([[0.5, 0.5], [1.0, 1.0], [3.0, 0.0]])  # u² + w² = 0.5, 2, 9
    assert divergence_onset(theta, lr=0.25) == {"onset_step": 2, "max_s": 2.25}
    assert divergence_onset(theta, lr=0.25, steps=[0, 10, 20])["onset_step"] == 20
    assert divergence_onset(theta[:2], lr=0.25) == {"onset_step": -1, "max_s": 0.5}


def test_three_dynamics_outcomes_are_decided_from_the_runs():
    r = three_dynamics(steps=500)
    assert r.outcome.kind == "compared" and not r.outcome.failure
    n = r.outcome.numbers
    assert n["G0"] == 2.0**2 - 0.3**2
    assert n["G_sgd"] == r.sgd_drawn.observables["G"][-1, 0] and n["G_iso"] == r.iso.observables["G"][-1, 0]
    assert abs(n["G_flow"] - n["G0"]) < 1e-6 * abs(n["G0"])  # gradient flow conserves G

    hot = three_dynamics(lr=0.5, steps=500)
    assert hot.outcome.kind == "diverged" and hot.outcome.failure
    step, onset = hot.outcome.numbers["sgd_diverged_step"], hot.outcome.numbers["sgd_onset_step"]
    assert step == int(hot.sgd.diverged_step[0]) >= 0 and -1 <= onset <= step

    still = three_dynamics(u0=0.0, w0=0.0, steps=100)
    assert still.outcome.kind == "saddle"
    assert {r.outcome.kind, hot.outcome.kind, still.outcome.kind} == set(THREE_DYNAMICS_OUTCOMES)


@pytest.mark.parametrize(("settings", "kind"), [(dict(lr=0.01), "continuous"), (dict(u0=2.0), "sign_flips"),
                                               (dict(lr=1.0), "diverged"), (dict(u0=0.0, w0=0.0), "saddle")])
def test_discrete_breakdown_outcome(settings, kind):
    r = discrete_breakdown(**settings)
    assert r.outcome.kind == kind and kind in DISCRETE_OUTCOMES
    if kind == "sign_flips":
        assert r.flips > 0 and not r.outcome.failure
    if kind == "continuous":
        assert r.flips == 0 and r.outcome.numbers["at_roundoff"] == (not abs(r.G[-1]) > r.G_floor[-1])
    if kind == "diverged":
        assert r.outcome.numbers["diverged_step"] == int(r.traj.diverged_step[0])


def test_ensemble_outcome_counts_the_diverged_runs():
    r = balance_ensemble(temperature=0.02, runs=20)
    assert r.outcome.kind == "compared" and r.traj.n_diverged == 0


def test_the_relu_run_summarises_its_neurons():
    from symsgd_core.balance.experiments import load_relu_balance

    r = load_relu_balance()
    active = (r.neuron_tr_u + r.neuron_tr_w) > 0
    assert r.dead_neurons == int((~active).sum()) < r.settings["hidden"]
    lo, hi = r.neuron_ratio_quartiles
    ratios = r.neuron_tr_u[active] / r.neuron_tr_w[active]
    assert lo <= np.median(ratios) <= hi and np.mean((ratios >= lo) & (ratios <= hi)) >= 0.5


def test_traces_met_within_the_stated_factor_of_one():
    from symsgd_core.balance.claims import TRACES_MET_FACTOR, traces_met

    assert traces_met(1.0) and traces_met(TRACES_MET_FACTOR) and traces_met(1 / TRACES_MET_FACTOR)
    assert not traces_met(TRACES_MET_FACTOR * 1.01) and not traces_met(0.99 / TRACES_MET_FACTOR)
