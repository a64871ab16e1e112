"""symsgd_core.warm: the cache checks see the kernels numba compiles from closures (dln._kernels' fixed-shape kernels,
one per network shape and version), each by its own entry in the closure's shared cache index. The whole warm-up
against a real workload is tests/platform/test_numba_cache.py (slow)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from symsgd_core import warm
from symsgd_core.dln import _kernels
from symsgd_core.rank_jumps import make_architecture
from symsgd_core.rank_jumps.experiments import EPSILON_EXPERIMENT as EXP


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """numba's cache directory for the dispatchers made from now on (the fixed-shape probes): an empty one."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    return tmp_path


def _compile(kernel, shape):
    """One call of a fixed-shape kernel ``shape = (n, w, m, L)`` on 2 runs, 3 steps: compiles it (into the cache)."""
    n, w, m, L = shape
    P = w * n + (L - 2) * w * w + m * w
    rows, cols, vals = np.array([0, 1]), np.array([1, 0]), np.array([1.0, -1.0])
    T, R = 3, 2
    snaps = np.empty((R, 1, P))
    kernel(np.full((R, P), 0.1), rows, cols, vals, np.zeros((R, T, 1), dtype=np.int64), np.full(T, 0.1),
           np.zeros(T), np.array([T]), snaps, np.full(R, -1), 0, 1e6, 1e-300, 1)
    assert np.isfinite(snaps).all()


def test_cold_kernels_names_the_fixed_shape_kernels_the_warm_up_compiles(empty_cache):
    shape = _kernels.fixed_shape(make_architecture((2, 2), EXP.depth, EXP.width).dims)
    cold = warm.cold_kernels(("dln._kernels",))
    assert f"dln._kernels.{_kernels.fixed_shape_name(shape, False)}" in cold
    # the prange version runs only with two threads or more (the warm-up compiles it only then)
    assert (f"dln._kernels.{_kernels.fixed_shape_name(shape, True)}" in cold) == (numba.config.NUMBA_NUM_THREADS > 1)


def test_closure_cached_finds_this_shapes_entry_and_no_other(empty_cache):
    """One index file holds every shape's entries: a compiled shape is found by a fresh dispatcher of the same shape
    and version, and not by another shape or version (an "index not empty" test would say both are cached)."""
    small, other = (2, 2, 2, 2), (2, 3, 2, 2)
    assert not warm.closure_cached(_kernels.new_fixed_shape_kernel(small, False))
    _compile(_kernels.new_fixed_shape_kernel(small, False), small)
    assert warm.closure_cached(_kernels.new_fixed_shape_kernel(small, False))
    assert warm.closure_cached(_kernels.new_fixed_shape_kernel(np.array(small), False))  # numpy ints: the same key
    assert not warm.closure_cached(_kernels.new_fixed_shape_kernel(other, False))
    assert not warm.closure_cached(_kernels.new_fixed_shape_kernel(small, True))


def test_fixed_shape_names_and_the_kernels_this_process_made():
    assert _kernels.fixed_shape_name((2, 8, 2, 4), False) == "fixed_shape_kernel(2, 8, 2, 4)"
    assert _kernels.fixed_shape_name(np.array([2, 8, 2, 4]), True) == "fixed_shape_kernel(2, 8, 2, 4, prange)"
    k = _kernels.fixed_shape_kernel((2, 5, 2, 3), False)  # made, not compiled
    assert _kernels.made_fixed_shape_kernels()["fixed_shape_kernel(2, 5, 2, 3)"] is k
    probe = _kernels.new_fixed_shape_kernel((2, 6, 2, 3), False)
    assert probe is not _kernels.fixed_shape_kernel((2, 6, 2, 3), False)  # a probe is not kept
    assert not _kernels.use_fixed_shape((2, 7, 2, 3), 1)
    _kernels.new_fixed_shape_kernel((2, 7, 2, 3), False)
    assert not _kernels.use_fixed_shape((2, 7, 2, 3), 1)  # ... so runs of that shape do not switch to it


def test_kernel_modules_list_the_shared_parts():
    assert "dln._kernel_parts" in warm.KERNEL_MODULES
    assert warm.KERNEL_MODULES.index("dln._kernel_parts") > warm.KERNEL_MODULES.index("dln._kernels")
