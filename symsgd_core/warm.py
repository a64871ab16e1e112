"""Compile every numba kernel into its on-disk cache ahead of use: ``python -m symsgd_core warm``.

Why: the kernels are ``@njit(cache=True)``, so a fresh environment compiles each one on its first call — tens
of CPU-seconds in all, paid by a reader's first Run of a notebook (a classroom page lost widgets waiting for it)
and by the first tests. Run once at set-up (the Makefile's ``$(STAMP)`` step), :func:`warm_kernels` leaves every
later process only loading the compiled code from the cache (``NUMBA_CACHE_DIR`` if set, else ``__pycache__``
beside the sources).

How: numba caches one entry per argument-type signature, so the warm-up calls each engine through the same
public entry points the experiments use (float64/int64 arrays, read-only data and targets, Python floats and
ints), once per branch that selects a different kernel, for a few steps of the smallest sizes. A kernel called
with other types later would still compile: ``tests/platform/test_numba_cache.py`` fails when a cached kernel has no
entry after the warm-up, or when a small real workload through the notebooks' experiments compiles anything.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

__all__ = ["KERNEL_MODULES", "closure_cached", "cold_kernels", "cold_loaded_kernels", "warm_kernels"]

#: The engines' kernel modules, in the order they are warmed; each has its warmer in ``_WARMERS``. The pieces the
#: dln kernels share (``dln._kernel_parts``) compile with their callers: listed after them, warmed by them.
_ENGINE_MODULES = ("balance._kernels", "dln._kernels", "dln._sde_kernels", "dln._adaptive_kernel",
                   "dln._kernel_parts", "stationary._kernels")
#: The modules that hold ``@njit(cache=True)`` kernels: the engines', then every integrator kernel of its own
#: (``dln/_<name>_kernel.py``, ARCHITECTURE.md "Where a new integrator goes"), found by its file name (no import) and
#: warmed by running the integrators that declare it (``Integrator.kernel``): a new integrator needs no line here.
KERNEL_MODULES = _ENGINE_MODULES + tuple(sorted(
    f"dln.{p.stem}" for p in (Path(__file__).parent / "dln").glob("_*_kernel.py")
    if f"dln.{p.stem}" not in _ENGINE_MODULES))


def _balance() -> None:
    import numpy as np

    from .balance import GaussianData, ScalarModel, run_sgd

    data = GaussianData(k=1.0, sigma=1.0)
    start = np.array([1.0, 1.0])
    run_sgd(ScalarModel(), start, data, lr=0.01, steps=2, runs=2)  # fresh Gaussian samples: sgd_scalar_gaussian
    run_sgd(ScalarModel(), start, data.dataset(8), lr=0.01, steps=2, runs=2)  # a finite dataset: sgd_scalar_dataset


def _rank_jumps_setup():
    from .rank_jumps import epsilon_completion, init_params, make_architecture
    from .rank_jumps.experiments import EPSILON_EXPERIMENT as EXP

    arch = make_architecture((2, 2), EXP.depth, EXP.width)
    # enough runs for two parallel blocks (dln._kernel_parts.MIN_BLOCK_RUNS) when there are two threads
    return init_params(arch, 32, 0), epsilon_completion(EXP.eps), EXP


def _on_one_and_every_thread(warm) -> None:
    """``warm()`` on one numba thread, then on every thread (``NUMBA_NUM_THREADS``): the ensemble kernels call a
    serial block function on one thread and a ``prange`` driver on more (``dln._kernels``), two dispatchers."""
    import numba

    before = numba.get_num_threads()
    try:
        for n in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(n)
            warm()
    finally:
        numba.set_num_threads(before)


def _rank_jumps() -> None:
    _on_one_and_every_thread(_rank_jumps_once)


def _rank_jumps_once() -> None:
    from .dln.engine import compile_fixed_shape
    from .rank_jumps import run

    start, problem, exp = _rank_jumps_setup()
    kw = dict(lr=exp.lr_phase0, weight_decay=exp.weight_decay_hot, record_every=1)
    # _sgd_block (one thread) or _sgd_par (more): batch 1, depth >= 2 (_sgd1_ens) and minibatch (_sgdb_ens) compile
    # together; records: _jacobi_svals or _jacobi_svals_par
    run(start, problem, 2, method="sgd", seed=0, **kw)
    run(start, problem, 2, method="sgd", batch_size=2, seed=0, **kw)  # minibatch: the other branch
    # batch 1 with the kernel compiled for this network's widths, what a long run (notebook 04's hot phase) steps with
    # (dln._kernels.use_fixed_shape): made for the shape first, so this short run uses it
    compile_fixed_shape(start)
    run(start, problem, 2, method="sgd", seed=0, **kw)
    run(start, problem, 2, method="gd", **kw)  # GD (and Langevin: the same kernel, the same types): _gd_block/_gd_par


def _sde_noise() -> None:
    _on_one_and_every_thread(_sde_noise_once)


def _sde_noise_once() -> None:
    from .sde_noise import run_sde

    start, problem, exp = _rank_jumps_setup()
    run_sde(start, problem, 2, lr=exp.lr_phase0, weight_decay=exp.weight_decay_hot, dt=exp.lr_phase0, seed=0,
            record_every=1)


def _sde_noise_adaptive() -> None:
    from .dln import run_sde_adaptive

    start, problem, exp = _rank_jumps_setup()
    lr = exp.lr_phase0
    run_sde_adaptive(start, problem, 2 * lr, lr=lr, weight_decay=exp.weight_decay_hot, h_max=lr, seed=0, record_dt=lr)


def _stationary() -> None:
    from .stationary import DiagonalNetProblem, simulate_v, simulate_v_coupled

    problem = DiagonalNetProblem.gaussian(1.0, 1.0)
    kw = dict(n_chains=2, t_end=0.04, dt=0.02, v0=1.0, seed=0, threads=1)
    simulate_v(problem, 0.1, 1, **kw)  # run_block
    simulate_v_coupled(problem, 0.1, 1, **kw)  # run_block_coupled (fine and coarse steps on one path)


def _integrator_kernel(module: str) -> None:
    """Two steps of every declared fixed-step integrator whose own kernel is ``module`` (``Integrator.kernel``), on
    one thread and on every thread. Raises if none declares it (a kernel file that no integrator runs)."""
    from .dln.integrators import INTEGRATORS

    integs = [integ for integ in INTEGRATORS.values() if integ.kernel == module and not integ.adaptive]
    if not integs:
        raise RuntimeError(f"no declared fixed-step integrator names {module} as its kernel (Integrator.kernel)")
    start, problem, exp = _rank_jumps_setup()
    kw = dict(lr=exp.lr_phase0, weight_decay=exp.weight_decay_hot, seed=0, tau=0.0, record_every=1,
              record_layers=False)
    for integ in integs:
        _on_one_and_every_thread(lambda integ=integ: integ.run(start, problem, 2, dt=integ.time_step(kw["lr"], 1),
                                                               **kw))


def _compiled_by_callers() -> None:
    """``dln._kernel_parts``: nothing to run of its own; its pieces compile into (and with) the dln kernels above."""


_WARMERS = {"balance._kernels": _balance, "dln._kernels": _rank_jumps,
            "dln._sde_kernels": _sde_noise, "dln._adaptive_kernel": _sde_noise_adaptive,
            "dln._kernel_parts": _compiled_by_callers, "stationary._kernels": _stationary}


def _fixed_shape_kernels() -> dict:
    """The kernels the warm-up compiles from closures (``dln._kernels``' batch-1 SGD kernel for one network's widths:
    no module attribute names them), as fresh dispatchers by name: notebook 04's network (what ``_rank_jumps``
    compiles), serial, and ``prange`` when numba has more than one thread (a one-thread machine never runs it)."""
    import numba

    from .dln.engine import fixed_shape_kernels

    start, _, _ = _rank_jumps_setup()
    return fixed_shape_kernels(start.arch.dims, versions=(False, numba.config.NUMBA_NUM_THREADS > 1))


#: ``{kernel module: its kernels made from closures}`` (a function returning ``{name: dispatcher}``).
_CLOSURE_KERNELS = {"dln._kernels": _fixed_shape_kernels}


def _dispatchers(mod) -> dict:
    """``{name: dispatcher}`` of the numba dispatchers a kernel module defines as its attributes (not those it
    imports)."""
    from numba.core.registry import CPUDispatcher

    return {name: f for name, f in vars(mod).items() if isinstance(f, CPUDispatcher) and f.__module__ == mod.__name__}


def _compiled_and_loaded(module: str) -> tuple[int, int]:
    """Signatures the module's dispatchers (and the closures it made, ``dln._kernels``' fixed-shape kernels) compiled
    and loaded from the cache so far in this process."""
    import importlib

    mod = importlib.import_module(f"symsgd_core.{module}")
    ds = list(_dispatchers(mod).values())
    if module == "dln._kernels":
        from .dln.engine import made_fixed_shape_kernels

        ds += list(made_fixed_shape_kernels().values())
    return (sum(sum(d.stats.cache_misses.values()) for d in ds), sum(sum(d.stats.cache_hits.values()) for d in ds))


def warm_kernels(log=print) -> dict:
    """Call every engine once at the smallest sizes so each kernel is compiled into (or loaded from) its cache.

    Args:
        log: called with one line per kernel module (wall and CPU seconds, signatures compiled / loaded from the
            cache); ``None``: silent.

    Returns:
        ``{kernel module: seconds}`` (wall time, with the engine package's import but not numpy's, scipy's or
        numba's), keys in the order of :data:`KERNEL_MODULES`.
    """
    import importlib

    import numba  # noqa: F401  (the shared imports are no engine's cost)
    import numpy  # noqa: F401
    import scipy  # noqa: F401

    seconds = {}
    for module in KERNEL_MODULES:
        t0, c0 = time.perf_counter(), time.process_time()
        # the engine's own imports count: importing symsgd_core.rank_jumps already runs GD (an exercise's answer)
        importlib.import_module(f"symsgd_core.{module}")
        _WARMERS[module]() if module in _WARMERS else _integrator_kernel(module)
        seconds[module] = time.perf_counter() - t0
        if log is not None:
            compiled, loaded = _compiled_and_loaded(module)
            log(f"{module:34s} {seconds[module]:6.1f} s  (CPU {time.process_time() - c0:5.1f} s; {compiled} compiled, "
                f"{loaded} loaded from the cache)")
    return seconds


def inlined(dispatcher) -> bool:
    """Whether a numba kernel is declared ``inline="always"``: compiled into each caller, with no cache entry."""
    return dispatcher.targetoptions.get("inline") == "always"


def closure_cached(dispatcher) -> bool:
    """Whether numba's on-disk cache holds an entry for this dispatcher of a closure: one index file serves every
    closure made by the same function (``dln._kernels``' fixed-shape kernel: one per network shape), its entries keyed
    by the hash of the closure's frozen variables, so an entry must match this dispatcher's own key (but for the
    argument types). Reads the index; compiles nothing."""
    cache = dispatcher._cache
    mine = cache._index_key(None, dispatcher.targetctx.codegen())[1:]
    return any(key[1:] == mine for key in cache._cache_file._load_index())


def cold_kernels(modules=KERNEL_MODULES) -> list[str]:
    """The ``cache=True`` kernels of ``modules`` with no compiled entry in their on-disk cache yet (numba's cache
    index is missing, empty or stale), as ``"module.kernel"``: each will compile on its first call (seconds each).
    Empty after :func:`warm_kernels` in this environment. Reads numba's cache index; compiles nothing. A kernel
    declared ``inline="always"`` is compiled into its callers' entries and never has one of its own: not counted.
    The kernels a module makes from closures (:data:`_CLOSURE_KERNELS`: the fixed-shape kernels the warm-up compiles,
    ``"dln._kernels.fixed_shape_kernel(n, w, m, L)"``) are counted by :func:`closure_cached`."""
    import importlib

    cold = []
    for module in modules:
        mod = importlib.import_module(f"symsgd_core.{module}")
        for name, f in _dispatchers(mod).items():
            if inlined(f):
                continue
            cache_file = getattr(getattr(f, "_cache", None), "_cache_file", None)
            if cache_file is not None and not cache_file._load_index():
                cold.append(f"{module}.{name}")
        if module in _CLOSURE_KERNELS:
            cold += [f"{module}.{name}" for name, f in _CLOSURE_KERNELS[module]().items() if not closure_cached(f)]
    return cold


#: Whether the last look found every compiled kernel in its on-disk cache (then no Run of this kernel compiles).
_ENGINE_WARM = False


def cold_loaded_kernels() -> list[str]:
    """:func:`cold_kernels` of the engines imported so far (a topic imports its engine with it: no other topic's
    import is paid), for a figure's Run to say it may wait for a compile (a clone never set up with ``make``, or a
    new ``NUMBA_CACHE_DIR``). Reads numba's cache index (milliseconds) until every engine is imported and cached,
    then never again in this process."""
    global _ENGINE_WARM
    if _ENGINE_WARM:
        return []
    loaded = [m for m in KERNEL_MODULES if f"symsgd_core.{m}" in sys.modules]
    cold = cold_kernels(loaded)
    _ENGINE_WARM = not cold and len(loaded) == len(KERNEL_MODULES)
    return cold
