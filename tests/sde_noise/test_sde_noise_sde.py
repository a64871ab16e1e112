"""SGD's SDE engine (sde_noise.sde): compiled == reference on the same increments, the seeding rule, the entry
weights, equivalence with the engine's SGD/GD/Langevin, and clear errors on bad input."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import rank_jumps as rj
from symsgd_core.dln import sde
from symsgd_core.dln._sde_reference import noise_factor
from symsgd_core.dln.network import replicate
from symsgd_core.dln.noise import per_entry_gradients, sgd_noise_covariance

PROBLEM = rj.epsilon_completion(0.2)
LR, WEIGHT_DECAY = 0.3, 0.027


@pytest.fixture(scope="module")
def start():
    return replicate(rj.start_minimum(weight_decay=WEIGHT_DECAY)[0], 3)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(a)))


@pytest.mark.parametrize("increments", ["gaussian", "rademacher"])
def test_compiled_equals_reference_on_the_same_increments(start, increments):
    kw = dict(lr=LR, weight_decay=WEIGHT_DECAY, dt=LR / 4, seed=2, record_every=10, increments=increments)
    a = sde.run_sde(start, PROBLEM, 40, **kw)
    b = sde.run_sde(start, PROBLEM, 40, engine="reference", **kw)
    assert _rel(a.final.flat, b.final.flat) <= 64 * 40 * 160 * np.finfo(float).eps
    np.testing.assert_allclose(a.singular_values, b.singular_values, rtol=1e-10, atol=1e-13)


def test_same_seed_same_numbers_and_runs_independent_of_the_ensemble(start):
    kw = dict(lr=LR, weight_decay=WEIGHT_DECAY, dt=LR / 8, seed=4, record_every=25)
    a = sde.run_sde(start, PROBLEM, 100, **kw)
    assert np.array_equal(a.final.flat, sde.run_sde(start, PROBLEM, 100, **kw).final.flat)
    assert np.array_equal(a.final.flat[:1], sde.run_sde(start.select([0]), PROBLEM, 100, **kw).final.flat)
    other = sde.run_sde(start, PROBLEM, 100, **{**kw, "seed": 5})
    assert not np.array_equal(a.final.flat, other.final.flat)
    assert not np.array_equal(a.final.flat[0], a.final.flat[1])  # each run has its own stream


def test_weighted_kernel_reproduces_the_engines_sgd_gd_and_langevin(start):
    sgd_w = sde.run_sgd_weights(start, PROBLEM, 80, lr=LR, weight_decay=WEIGHT_DECAY, seed=3, record_every=20)
    sgd = rj.run(start, PROBLEM, 80, method="sgd", lr=LR, weight_decay=WEIGHT_DECAY, seed=3, record_every=20)
    assert _rel(sgd.final.flat, sgd_w.final.flat) < 1e-13
    gd_w = sde.run_gd_dt(start, PROBLEM, 80, weight_decay=WEIGHT_DECAY, dt=LR, record_every=20)
    gd = rj.run(start, PROBLEM, 80, method="gd", lr=LR, weight_decay=WEIGHT_DECAY, record_every=20)
    assert _rel(gd.final.flat, gd_w.final.flat) < 1e-13
    lw = sde.run_langevin(start, PROBLEM, 80, weight_decay=WEIGHT_DECAY, dt=LR, temperature=1e-3, seed=3,
                          record_every=20)
    lg = rj.run(start, PROBLEM, 80, method="langevin", lr=LR, weight_decay=WEIGHT_DECAY, temperature=1e-3, seed=3,
                record_every=20)
    assert _rel(lg.final.flat, lw.final.flat) < 1e-13
    ref = sde.run_sgd_weights(start, PROBLEM, 80, lr=LR, weight_decay=WEIGHT_DECAY, seed=3, record_every=20,
                              engine="reference")
    assert _rel(sgd_w.final.flat, ref.final.flat) < 1e-13


def test_result_shape_time_and_settings(start):
    r = sde.run_sde(start, PROBLEM, 64, lr=LR, weight_decay=WEIGHT_DECAY, dt=LR / 16, record_every=16, keep_A=True)
    assert isinstance(r, rj.RunResult)
    np.testing.assert_allclose(r.times, r.steps * LR / 16)
    assert r.settings["method"] == "sde" and r.settings["dt"] == LR / 16
    assert r.settings["end_to_end"].shape == (3, r.steps.size, 2, 2)
    np.testing.assert_allclose(r.settings["end_to_end"][:, -1], r.final.end_to_end(), rtol=0, atol=1e-15)


def test_entry_weights_formulas():
    rng = np.random.default_rng(0)
    xi = rng.standard_normal((1000, 3))
    w = sde.sde_entry_weights(xi, 0.1, 0.2)
    np.testing.assert_allclose(w.sum(axis=-1), 0.1, atol=1e-15)  # noise never changes the total weight
    idx = rng.integers(0, 3, size=(50, 4))
    ws = sde.sgd_entry_weights(idx, 3, 0.3)
    np.testing.assert_allclose(ws.sum(axis=-1), 0.3)
    assert np.all(ws >= 0)  # SGD's weights are never negative (descent on every sampled entry)
    assert sde.sde_noise_scale(0.3, 0.3, 3) == pytest.approx(np.sqrt(0.3 * 0.3 / 3))
    assert sde.sde_noise_scale(0.3, 0.3, 3, batch_size=2) == pytest.approx(np.sqrt(0.15 * 0.3 / 3))


def test_noise_factor_gives_the_package_covariance(start):
    G = noise_factor(start.flat[:1], start.arch, PROBLEM)[0]
    C = sgd_noise_covariance(start, PROBLEM)
    np.testing.assert_allclose(G.T @ G, C, rtol=0, atol=1e-13 * np.abs(C).max())
    g = per_entry_gradients(start.flat[:1], start.arch, PROBLEM)[0]
    for k, (i, j) in enumerate(zip(*PROBLEM.entries[:2])):  # each entry's gradient, by a one-entry problem's mask
        mask = np.zeros(PROBLEM.shape, dtype=bool)
        mask[i, j] = True
        by_mask = rj.gradient(start.select([0]), rj.CompletionProblem(PROBLEM.target, mask), 0.0).flat[0]
        np.testing.assert_allclose(g[k], by_mask, rtol=1e-12, atol=1e-14)
    assert np.linalg.matrix_rank(C, tol=1e-10 * np.abs(C).max()) <= PROBLEM.n_observed - 1


def test_divergence_is_reported_not_a_silent_nan(start):
    r = sde.run_sde(start, PROBLEM, 20_000, lr=3.0, weight_decay=0.01, dt=0.3, record_every=1000)
    assert r.diverged.any()
    assert np.all(np.isnan(r.singular_values[r.diverged, -1]))
    assert np.all(np.isfinite(r.final.flat))


@pytest.mark.parametrize("kw, match", [
    (dict(dt=0.0), "dt"), (dict(dt=-1.0), "dt"), (dict(weight_decay=-0.1), "weight_decay"),
    (dict(dt=20.0), "2·dt·weight_decay"),
    (dict(increments="cauchy"), "increments"), (dict(engine="gpu"), "engine"), (dict(xi=np.zeros((3, 5, 3))), "xi"),
])
def test_bad_input_is_a_clear_error(start, kw, match):
    args = {**dict(lr=LR, weight_decay=WEIGHT_DECAY, dt=LR / 4), **kw}
    with pytest.raises(ValueError, match=match):
        sde.run_sde(start, PROBLEM, 10, **args)


def test_bad_start_is_a_clear_error(start):
    with pytest.raises(ValueError, match="Params"):
        sde.run_sde(start.flat, PROBLEM, 10, lr=LR, weight_decay=WEIGHT_DECAY, dt=LR)
    bad = rj.Params(start.arch, np.full_like(start.flat, np.nan))
    with pytest.raises(ValueError, match="finite"):
        sde.run_sde(bad, PROBLEM, 10, lr=LR, weight_decay=WEIGHT_DECAY, dt=LR)
    with pytest.raises(ValueError, match="temperature"):
        sde.run_langevin(start, PROBLEM, 10, weight_decay=WEIGHT_DECAY, dt=LR, temperature=-1.0)


# The entry-weighted kernel runs the ensemble's runs in parallel blocks (one per numba thread). Digests of
# (final θ, diverged_step) from the serial kernel of before (commit 60b3471), fixed seeds: any partition into
# blocks (what the thread count decides) must reproduce them bit for bit.
SDE_SERIAL_DIGESTS = {"sde": "4a52a9b713dd2d04", "sde_div": "0909ebe9d7376979", "rademacher": "026da9f5411bbc97"}


@pytest.mark.parametrize("blocks", [1, 2, 3])
def test_parallel_sde_kernel_reproduces_the_serial_one_bit_for_bit(blocks, monkeypatch):
    import hashlib

    from symsgd_core.dln import _kernels as _rank_jump_kernels

    # the one chunk driver (dln._kernels.run_in_blocks) splits notebook 05's runs too
    monkeypatch.setattr(_rank_jump_kernels, "n_blocks", lambda n_runs: min(blocks, n_runs))
    p8 = rj.phase0_minima(n_runs=8)
    prob = rj.EPSILON_EXPERIMENT.problem
    results = {
        "sde": sde.run_sde(p8, prob, 800, lr=0.3, weight_decay=0.027, dt=0.1, seed=3, record_every=100),
        "sde_div": sde.run_sde(p8, prob, 300, lr=0.8, weight_decay=0.027, dt=0.8, seed=1, record_every=50),
        "rademacher": sde.run_sde(p8.select([0, 1, 2]), prob, 500, lr=0.3, weight_decay=0.027, dt=0.3, seed=2,
                                 increments="rademacher"),
    }
    assert (results["sde_div"].diverged_step >= 0).any()
    for name, res in results.items():
        h = hashlib.sha256(np.ascontiguousarray(res.final.flat).tobytes())
        h.update(res.diverged_step.astype(np.int64).tobytes())
        assert h.hexdigest()[:16] == SDE_SERIAL_DIGESTS[name], name
