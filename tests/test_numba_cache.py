"""The compiled kernels' on-disk cache follows NUMBA_CACHE_DIR (for read-only installs; see the README)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CODE = """
import json
from symsgd_core.balance import _kernels as b
from symsgd_core.rank_jumps import _kernels as r
from symsgd_core.stationary import _kernels as s
paths = {}
for module in (b, r, s):
    for name, f in vars(module).items():
        cache = getattr(f, "_cache", None)
        if cache is not None and hasattr(cache, "_cache_path"):
            paths[module.__name__ + "." + name] = cache._cache_path
print(json.dumps(paths))
"""


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_every_cached_kernel_uses_numba_cache_dir(tmp_path):
    """Every ``njit(cache=True)`` kernel of the three engines caches under NUMBA_CACHE_DIR when it is set
    (without it numba writes next to the sources, or to a user cache directory when they are read-only).
    No kernel is compiled here: the cache location is known before the first call."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, f"the subprocess failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    paths = json.loads(proc.stdout)
    modules = {name.rsplit(".", 1)[0] for name in paths}
    assert modules == {"symsgd_core.balance._kernels", "symsgd_core.rank_jumps._kernels",
                       "symsgd_core.stationary._kernels"}
    outside = {name: p for name, p in paths.items() if not p.startswith(str(tmp_path))}
    assert not outside, outside


# Second process of the warm-up test: (a) every cached dispatcher has an entry in its cache index, read before any
# experiment runs; (b) a small real workload through the notebooks' experiments, after which no dispatcher may have
# compiled anything (a cache miss is a signature the warm-up did not cover). Kernel modules are found by scanning
# the package for ``@njit(... cache=True ...)`` decorators, so a new kernel module is probed without being listed.
PROBE = r"""
import importlib, json, pathlib, re
import symsgd_core
from numba.core.caching import NullCache
import numba
from numba.core.registry import CPUDispatcher

root = pathlib.Path(symsgd_core.__file__).parent
decorated = {p: len(re.findall(r"^@njit\(.*cache=True", p.read_text("utf-8"), re.M)) for p in root.rglob("*.py")}
modules = sorted("symsgd_core." + ".".join(p.relative_to(root).with_suffix("").parts)
                 for p, n in decorated.items() if n)
n_kernels = sum(decorated.values())
dispatchers = {}
for name in modules:
    mod = importlib.import_module(name)
    for attr, f in vars(mod).items():
        if isinstance(f, CPUDispatcher) and f.__module__ == name and not isinstance(f._cache, NullCache):
            dispatchers[name + "." + attr] = f
index = {name: (f._cache._cache_file._index_path, len(f._cache._cache_file._load_index()))
         for name, f in dispatchers.items()}

# (b) what the notebooks run, at small sizes
from symsgd_core.balance import experiments as bx
from symsgd_core.rank_jumps import experiments as rx
from symsgd_core.rank_jumps import sde_experiments as sx

bx.three_dynamics(steps=200)  # Notebook 01 §2
bx.balance_ensemble(runs=8)  # Notebook 01 §3
rx.trap(n_seeds=2, steps=2000)  # Notebook 04: GD, then SGD at batch 1
rx.langevin(n_runs=2, steps=2000)  # Notebook 04 §7: SGD and Langevin
common = dict(lr=0.3, lam=0.027, n_runs=2, t_max=30.0, rec_dt=15.0, seed=0)
for method in ("sgd", "gaussian_sgd", "sde"):  # Notebook 05's table, at a batch of 2
    sx.dynamics_task(dict(common, method=method, S=2, m=2))
sx.dynamics_task(dict(common, method="langevin", m=2, temp_factor=1.0))
sx.dynamics_task(dict(common, method="sde_adaptive", m=2, rho=0.05))
checks = symsgd_core.run_checks(names=["balance.corollary", "rank_jumps.absorption_after_forced_sampling",
                                       "rank_jumps.sde_compiled_vs_reference", "stationary.histogram_depth0",
                                       "stationary.collapse_at_Tc"])
print(json.dumps({
    "modules": modules,
    "index": index,
    "failed_checks": [r.name for r in checks if not r.passed],
    "hits": {name: sum(f.stats.cache_hits.values()) for name, f in dispatchers.items() if f.stats.cache_hits},
    "n_kernels": n_kernels,
    "threads": numba.config.NUMBA_NUM_THREADS,
    "parallel": sorted(name for name, f in dispatchers.items() if f.targetoptions.get("parallel")),
    "misses": {name: [str(sig) for sig in f.stats.cache_misses] for name, f in dispatchers.items()
               if f.stats.cache_misses},
}))
"""


def _cold_kernels(env) -> list[str]:
    """``symsgd_core.warm.cold_kernels()`` in a fresh process with ``env`` (it compiles nothing)."""
    code = "import json; from symsgd_core.warm import cold_kernels; print(json.dumps(cold_kernels()))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.slow  # two subprocesses, one compiling every kernel: not in `make test-fast`
def test_warm_up_compiles_every_signature_the_notebooks_use(tmp_path):
    """After ``python -m symsgd_core warm`` (the set-up step), every cached kernel has an entry on disk and a
    real workload through the notebooks' experiments, in a fresh process, compiles nothing."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    cold_before = _cold_kernels(env)  # what a Run's status reports (ui.base.computing_notice): every kernel, here
    warm = subprocess.run([sys.executable, "-m", "symsgd_core", "warm"], capture_output=True, text=True, env=env)
    assert warm.returncode == 0, f"the warm-up failed (exit {warm.returncode}):\n{warm.stderr[-3000:]}"
    assert "total" in warm.stdout.splitlines()[-1], warm.stdout
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, f"the probe failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    out = json.loads(proc.stdout.splitlines()[-1])
    from symsgd_core.warm import KERNEL_MODULES

    assert set(out["modules"]) == {f"symsgd_core.{m}" for m in KERNEL_MODULES}, "a kernel module the warm-up skips"
    assert len(out["index"]) == out["n_kernels"], sorted(out["index"])  # one dispatcher per decorated function
    outside = {name: path for name, (path, _) in out["index"].items() if not path.startswith(str(tmp_path))}
    assert not outside, outside
    # the prange drivers (parallel=True) run only on two threads or more: a one-thread machine never compiles them
    unused = set(out["parallel"]) if out["threads"] == 1 else set()
    assert out["parallel"], "no parallel ensemble kernel found (issue 27)"
    empty = sorted(name for name, (_, n) in out["index"].items() if n == 0 and name not in unused)
    assert not empty, f"no cache entry after the warm-up for: {empty}"
    assert {f"symsgd_core.{name}" for name in cold_before} == set(out["index"]), "cold_kernels() misses a kernel"
    assert not set(_cold_kernels(env)) - {name.removeprefix("symsgd_core.") for name in unused}
    assert not out["failed_checks"], out["failed_checks"]
    assert out["hits"], "the workload loaded no kernel from the cache"
    assert not out["misses"], f"compiled after the warm-up (signatures it does not cover): {out['misses']}"
