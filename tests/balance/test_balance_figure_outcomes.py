"""The outcomes of notebook 00's and 01's figures (``balance.experiments``): each experiment decides what its
figure says, so each outcome's numbers are the result's own (the figures' words read nothing else:
``tests/ui/test_ui_words_from_outcome.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsgd_core.balance import claims, views
from symsgd_core.balance import experiments as ex

#: Small live ReLU runs (the figure's settings with the fewest steps and neurons).
SMALL_RELU = dict(hidden=10, steps=1000)


# ------------------------------------------------------------------------------------------- notebook 00: the teaser
def test_teaser_bound_halves_at_its_half_life():
    """Corollary 3.3 with Δ/α₁ = σ²: rate 4Tσ². Run to t_max = t½ the bound's last point is exactly half the start
    (σ = 1.5, so a rate of 4Tσ or 4T would miss it by far more than round-off)."""
    T, sigma = 0.02, 1.5
    t_half = math.log(2.0) / (4 * T * sigma**2)
    r = ex.teaser_bound(temperature=T, sigma=sigma, imbalance0=2.0, t_max=t_half)
    assert r.t.shape == (ex.TEASER_POINTS,) and r.t[0] == 0.0 and r.t[-1] == pytest.approx(t_half, rel=1e-15)
    assert r.bound[0] == 2.0 and r.bound[-1] == pytest.approx(1.0, rel=1e-12)
    assert r.outcome.kind == "balances" and not r.outcome.failure
    n = r.outcome.numbers
    assert n["half_life"] == pytest.approx(t_half, rel=1e-12)
    assert n["steps"] == math.ceil(t_half / T - 1e-9) and n["temperature"] == T


@pytest.mark.parametrize(("temperature", "sigma"), [(0.0, 1.0), (0.05, 0.0)])
def test_teaser_bound_without_gradient_noise_is_conserved(temperature, sigma):
    r = ex.teaser_bound(temperature=temperature, sigma=sigma, imbalance0=3.0)
    assert r.outcome.kind == "conserved" and r.outcome.numbers == {}
    assert np.all(r.bound == 3.0)


@pytest.mark.parametrize(("kw", "name"), [(dict(imbalance0=0.0), "imbalance0"), (dict(t_max=-1.0), "t_max"),
                                          (dict(temperature=-0.1), "temperature"), (dict(sigma=-1.0), "sigma")])
def test_teaser_bound_rejects_bad_settings(kw, name):
    with pytest.raises(ValueError, match=name):
        ex.teaser_bound(**kw)


# ------------------------------------------------------------------------------------------- notebook 01
def test_symmetry_orbit_outcome_quotes_the_point():
    r = ex.symmetry_orbit(lam=2.0, u0=1.5, w0=0.5)
    n = r.outcome.numbers
    assert (n["u"], n["w"]) == (3.0, 0.25) and n["G"] == 3.0**2 - 0.25**2 and n["G0"] == 1.5**2 - 0.5**2
    assert n["loss"] == r.loss and n["loss0"] == r.loss0
    assert abs(n["loss"] - n["loss0"]) <= 64 * np.finfo(float).eps * max(n["loss0"], 1.0)  # the orbit keeps ℓ


def test_three_dynamics_outcome_quotes_the_kick_size():
    r = ex.three_dynamics(steps=200)
    assert r.outcome.kind == "compared" and r.outcome.numbers["noise_std"] == r.noise_std > 0


def test_ensemble_outcome_quotes_the_last_record():
    r = ex.balance_ensemble(temperature=0.02, runs=20)
    n = r.outcome.numbers
    assert n["runs_ok"] == r.runs == 20 and n["steps"] == r.traj.steps[-1] and n["t_end"] == r.traj.times[-1]
    assert n["spread_u"] == r.spread_u["std"][-1] and n["spread_G"] == r.spread_G["std"][-1]
    assert n["mean_G"] == r.spread_G["mean"][-1] and n["ode"] == r.G_ode.mean(axis=1)[-1]
    assert n["bound"] == r.bound[-1] and n["temperature"] == 0.02


def test_ito_outcome_marks_the_null_direction_and_the_origin():
    r = ex.ito_point()
    n = r.outcome.numbers
    assert r.outcome.kind == "null_direction" and n["G_rate"] == r.G_terms.rate
    assert n["null_weight"] == pytest.approx(1.0, abs=1e-12)  # Jθ is an eigenvector of C …
    assert abs(n["null_eigenvalue"]) <= 64 * np.finfo(float).eps * n["largest_eigenvalue"]  # … of eigenvalue 0
    origin = ex.ito_point(u=0.0, w=0.0).outcome
    assert origin.kind == "no_direction" and origin.failure and origin.numbers == {}
    assert ex.ito_outcome(r.G_terms, r.u_terms, None).kind == "no_direction"


def test_rank1_outcome_quotes_the_claims_and_says_when_every_run_diverged():
    r = views.rank1_view(steps=400, n_records=11)
    n, nb = r.outcome.numbers, claims.rank1_claims(r)[0].details
    assert r.outcome.kind == "compared" and n["trace_ratio"] == nb["trace_ratio"]
    assert n["predicted_ratio"] == nb["predicted_ratio"] and n["traces_met"] == claims.traces_met(nb["trace_ratio"])
    assert n["norm_ratio"] == r.mean.u_sq[-1] / r.mean.w_sq[-1]
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        gone = views.rank1_view(lr=1.0, steps=200, n_records=11)
    assert gone.outcome.kind == "all_diverged" and gone.outcome.numbers == {"runs": 8} and gone.outcome.failure


@pytest.mark.parametrize(("lr", "seed", "kind"), [(0.02, 0, "continuous"), (0.15, 3, "sign_flips")])
def test_discrete_breakdown_outcome_quotes_the_run(lr, seed, kind):
    r = ex.discrete_breakdown(lr=lr, seed=seed)
    n = r.outcome.numbers
    assert r.outcome.kind == kind
    assert (n["G_first"], n["G_last"]) == (r.G[0], r.G[-1])
    assert (n["flips"], n["grows"], n["max_eta_g"]) == (r.flips, r.grows, r.max_eta_g)
    assert (r.outcome.kind == "sign_flips") == (n["flips"] > 0)


# ------------------------------------------------------------------------------------------- §5b, the ReLU figure
def test_relu_balance_view_quotes_both_runs_claims():
    r = views.relu_balance_view(window=0.25, **SMALL_RELU)
    assert r.outcome.kind == "compared" and not r.outcome.failure and r.paper is not None
    n = r.outcome.numbers
    for prefix, run in (("paper_", r.paper), ("live_", r.live)):
        nb, norms = claims.relu_balance_claims(run, 0.25)
        assert n[prefix + "trace_ratio"] == nb.details["trace_ratio"]
        assert n[prefix + "predicted_ratio"] == nb.details["predicted_ratio"]
        assert n[prefix + "norm_ratio"] == norms.details["norm_ratio"]
    assert n["paper_quartiles"] == r.paper.neuron_ratio_quartiles and n["paper_dead"] == r.paper.dead_neurons


def test_relu_balance_view_reuses_its_live_run_when_only_the_window_moves():
    cache: dict = {}
    first = views.relu_balance_view(window=0.25, cache=cache, **SMALL_RELU)
    second = views.relu_balance_view(window=0.5, cache=cache, **SMALL_RELU)
    assert second.live is first.live and second.window == 0.5
    assert second.outcome.numbers["live_trace_ratio"] != first.outcome.numbers["live_trace_ratio"]  # another window
    third = views.relu_balance_view(window=0.5, cache=cache, seed=1, **SMALL_RELU)
    assert third.live is not first.live and len(cache) == 1


def test_relu_balance_view_says_a_missing_file_and_a_diverged_live_run(tmp_path):
    missing = views.relu_balance_view(data_path=tmp_path / "nothing.npz", **SMALL_RELU)
    assert missing.outcome.kind == "paper_missing" and missing.outcome.failure and missing.paper is None
    assert "nothing.npz" in missing.outcome.labels["paper_error"]
    assert "live_trace_ratio" in missing.outcome.numbers  # the live run is still compared
    with np.errstate(all="ignore"):
        diverged = views.relu_balance_view(lr=0.5, **SMALL_RELU)
    assert diverged.outcome.kind == "live_diverged" and diverged.live.diverged
    assert not any(k.startswith("live_") for k in diverged.outcome.numbers)
