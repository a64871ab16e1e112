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
from symsgd_core.dln import _kernels as r
from symsgd_core.stationary import _kernels as s
paths = {}
for module in (b, r, s):
    for name, f in vars(module).items():
        cache = getattr(f, "_cache", None)
        if cache is not None and hasattr(cache, "_cache_path"):
            paths[module.__name__ + "." + name] = cache._cache_path
shape = (2, 8, 2, 4)  # a kernel made from a closure, for one network's widths
fixed = r.new_fixed_shape_kernel(shape, False)
paths["symsgd_core.dln._kernels." + r.fixed_shape_name(shape, False)] = fixed._cache._cache_path
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
    assert modules == {"symsgd_core.balance._kernels", "symsgd_core.dln._kernels",
                       "symsgd_core.stationary._kernels"}
    outside = {name: p for name, p in paths.items() if not p.startswith(str(tmp_path))}
    assert not outside, outside


# The dispatchers of every kernel module, found by scanning the package for ``@njit(... cache=True ...)`` decorators
# (so a new kernel module is probed without being listed), and what each has compiled or loaded in this process.
DISPATCHERS = r"""
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


def state():
    return {
        "modules": modules,
        "n_kernels": n_kernels,
        "threads": numba.config.NUMBA_NUM_THREADS,
        "parallel": sorted(name for name, f in dispatchers.items() if f.targetoptions.get("parallel")),
        "inlined": sorted(name for name, f in dispatchers.items() if f.targetoptions.get("inline") == "always"),
        "index": {name: (f._cache._cache_file._index_path, len(f._cache._cache_file._load_index()))
                  for name, f in dispatchers.items()},
        "signatures": {name: sorted(str(sig) for sig in f.signatures) for name, f in dispatchers.items()},
        "hits": {name: sum(f.stats.cache_hits.values()) for name, f in dispatchers.items() if f.stats.cache_hits},
    }
"""

# First process: the set-up's warm-up, as `make`'s set-up runs it (on a warm cache it only loads).
WARM = DISPATCHERS + r"""
from symsgd_core.warm import warm_kernels
warm_kernels(log=None)
print(json.dumps(state()))
"""

# Second process: a small real workload through the notebooks' experiments, in a fresh process.
PROBE = DISPATCHERS + r"""
from symsgd_core.balance import experiments as bx
from symsgd_core.rank_jumps import experiments as rx
from symsgd_core.sde_noise import experiments as sx

bx.three_dynamics(steps=200)  # Notebook 01 §2
bx.balance_ensemble(runs=8)  # Notebook 01 §3
rx.trap(n_seeds=2, steps=2000)  # Notebook 04: GD, then SGD at batch 1
rx.langevin(n_runs=2, steps=2000)  # Notebook 04 §7: SGD and Langevin
common = dict(lr=0.3, weight_decay=0.027, n_runs=2, t_max=30.0, rec_dt=15.0, seed=0)
for method in ("sgd", "gaussian_sgd", "sde"):  # Notebook 05's table, at a batch of 2
    sx.dynamics_task(dict(common, method=method, S=2, m=2))
sx.dynamics_task(dict(common, method="langevin", m=2, temp_factor=1.0))
sx.dynamics_task(dict(common, method="sde_adaptive", m=2, rho=0.05))
checks = symsgd_core.run_checks(names=["balance.corollary", "rank_jumps.absorption_after_forced_sampling",
                                       "sde_noise.compiled_vs_reference", "stationary.histogram_depth0",
                                       "stationary.collapse_at_Tc"])
print(json.dumps(dict(state(), failed_checks=[r.name for r in checks if not r.passed])))
"""


def _run(code: str, what: str, env=None):
    """``code`` in a fresh Python process (with ``env``): the JSON of its last printed line."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, f"the {what} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.splitlines()[-1])


def _cold_kernels(env) -> list[str]:
    """``symsgd_core.warm.cold_kernels()`` in a fresh process with ``env`` (it compiles nothing)."""
    code = "import json; from symsgd_core.warm import cold_kernels; print(json.dumps(cold_kernels()))"
    return _run(code, "cold_kernels() process", env)


def uncovered(warmed: dict[str, list[str]], used: dict[str, list[str]]) -> dict[str, list[str]]:
    """The signatures each kernel was called with (``used``) that the warm-up did not compile (``warmed``)."""
    return {name: sorted(set(sigs) - set(warmed.get(name, ()))) for name, sigs in used.items()
            if set(sigs) - set(warmed.get(name, ()))}


def test_uncovered_names_a_signature_the_warm_up_missed():
    warmed = {"k.a": ["(float64,)"], "k.b": ["(int64,)"]}
    assert uncovered(warmed, {"k.a": ["(float64,)"], "k.b": []}) == {}
    assert uncovered(warmed, {"k.a": ["(float64,)", "(int32,)"], "k.c": ["(float64,)"]}) == {
        "k.a": ["(int32,)"], "k.c": ["(float64,)"]}


@pytest.mark.slow  # three subprocesses: not in `make test-fast`
def test_warm_up_compiles_every_signature_the_notebooks_use(tmp_path):
    """The set-up's warm-up (``python -m symsgd_core warm``) calls every cached kernel with every argument-type
    signature a real workload through the notebooks' experiments calls it with, and leaves an entry on disk for
    each kernel: so no reader's first Run compiles.

    Compared signature by signature (numba caches one compiled entry per signature), each side in a fresh process
    on the environment's own cache, the one `make`'s set-up warmed: there the warm-up only loads (a few seconds
    instead of compiling everything into an empty cache again). Entries other tests left in that cache cannot
    mask a miss: what counts is the signatures each process called, not what the cache holds."""
    cold_before = _cold_kernels({**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})  # an empty cache: every kernel
    warm = _run(WARM, "warm-up")
    probe = _run(PROBE, "notebooks' workload")
    from symsgd_core.warm import KERNEL_MODULES

    assert set(warm["modules"]) == {f"symsgd_core.{m}" for m in KERNEL_MODULES}, "a kernel module the warm-up skips"
    assert len(warm["index"]) == warm["n_kernels"], sorted(warm["index"])  # one dispatcher per decorated function
    # the prange drivers (parallel=True) run only on two threads or more: a one-thread machine never compiles them
    unused = set(warm["parallel"]) if warm["threads"] == 1 else set()
    assert warm["parallel"], "no parallel ensemble kernel found"
    # a kernel inlined into its callers (inline="always") is compiled into their entries and has none of its own
    inlined = set(warm["inlined"])
    empty = sorted(name for name, (_, n) in warm["index"].items() if n == 0 and name not in unused | inlined)
    assert not empty, f"no cache entry after the warm-up for: {empty}"
    # the kernels made from closures (the fixed-shape kernels, named with their shape) have no module attribute
    closures = {name for name in cold_before if name.endswith(")")}
    assert any(".fixed_shape_kernel(" in name for name in closures), "cold_kernels() misses the fixed-shape kernel"
    assert {f"symsgd_core.{name}" for name in set(cold_before) - closures} == set(warm["index"]) - inlined, \
        "cold_kernels() misses one"
    assert not set(_cold_kernels(dict(os.environ))) - {name.removeprefix("symsgd_core.") for name in unused}
    assert not probe["failed_checks"], probe["failed_checks"]
    assert any(probe["signatures"].values()), "the workload called no kernel: it measured nothing"
    assert probe["hits"], "the workload loaded no kernel from the cache"
    # (a helper called only from compiled code shows no signature when its callers load from the cache: their
    # entries hold it; each of its own cache files is checked above)
    missed = uncovered(warm["signatures"], probe["signatures"])
    assert not missed, f"signatures the notebooks' experiments use and the warm-up does not compile: {missed}"
