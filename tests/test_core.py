"""The shared layer: the seeding rule, the result shape, the divergence rule, the engine keyword."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core.core import Divergence, EngineResult, piece_seed, resolve_engine, stream, streams


def test_streams_are_the_spawned_children_and_do_not_depend_on_their_number():
    a, b = streams(7, 3), streams(7, 5)
    for k in range(3):
        assert np.array_equal(a[k].standard_normal(4), b[k].standard_normal(4))
    child = np.random.SeedSequence(7).spawn(2)[1]
    assert np.array_equal(streams(7, 2)[1].integers(0, 100, 5), np.random.default_rng(child).integers(0, 100, 5))
    assert np.array_equal(stream(3).random(3), np.random.default_rng(3).random(3))
    g = np.random.default_rng(0)
    assert stream(g) is g


@pytest.mark.parametrize("bad", [None, -1, 1.5, "1"])
def test_seeds_must_be_reproducible_integers(bad):
    with pytest.raises(ValueError, match="seed"):
        streams(bad, 2)
    with pytest.raises(ValueError, match="seed"):
        stream(bad)


def test_streams_refuse_a_generator():
    with pytest.raises(ValueError, match="integer"):
        streams(np.random.default_rng(0), 2)


def test_piece_seed():
    assert piece_seed(0, 3) == 3 and piece_seed(2, 1) == 2 * 1_000_003 + 1
    with pytest.raises(ValueError):
        piece_seed(-1, 0)


def test_divergence_rule():
    rule = Divergence("max|θ|", 10.0)
    x = np.array([[1.0, -11.0], [np.nan, 0.0], [10.0, -10.0], [np.inf, 1.0]])
    assert rule.exceeded(x, axis=1).tolist() == [True, True, False, True]
    assert rule.exceeded(np.array([9.0, 10.5])).tolist() == [False, True]
    assert rule.with_limit(20.0).limit == 20.0 and "max|θ| > 10" in rule.describe()
    with pytest.raises(ValueError, match="limit"):
        Divergence("x", 0.0)


def test_engine_result_fields_and_alive_records():
    r = EngineResult(steps=np.array([0, 10, 20]), times=np.array([0.0, 0.1, 0.2]),
                     diverged_step=np.array([-1, 15]), settings={"method": "x"})
    assert r.n_runs == 2 and r.n_diverged == 1
    assert r.diverged.tolist() == [False, True] and r.ok_runs.tolist() == [True, False]
    assert r.alive_at().tolist() == [[True, True], [True, True], [True, False]]
    with pytest.raises(AttributeError):
        r.settings = {}


def test_engine_keyword():
    assert resolve_engine("auto") and resolve_engine("compiled") and not resolve_engine("reference")
    assert not resolve_engine("auto", compiled_available=False)
    with pytest.raises(ValueError, match="not available here: only the scalar model"):
        resolve_engine("compiled", compiled_available=False, why="only the scalar model")
    with pytest.raises(ValueError, match="engine must be one of"):
        resolve_engine("numba")
