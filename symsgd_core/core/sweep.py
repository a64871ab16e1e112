"""Parameter sweeps as independent tasks: local processes by default, a ``dask.distributed`` cluster when given.

A sweep is ``run_sweep(fn, params_list)``. ``fn`` is an importable top-level function ``fn(p: dict) -> dict``
whose result depends only on ``p`` (every seed is inside ``p``), so

* where and in which order a task runs never changes a number (serial == processes == Dask, tested);
* finished tasks are cached on disk under ``cache_dir/<module.fn>/<key>.json``, ``key`` = SHA-256 of the
  canonical JSON of ``{"fn", "params", "version"}``, written atomically as soon as the task returns: a
  finished task is never redone, a changed parameter or a bumped ``version`` gives a new key.

Execution: ``client`` (a ``dask.distributed.Client``) → ``client.map`` and ``as_completed`` (Dask is the optional
extra ``sweep``, imported only then); otherwise ``n_workers`` local processes (default: every core,
``os.cpu_count()``) through :mod:`concurrent.futures`; ``n_workers=1`` runs serially in this process.

Cores: the compiled ensemble kernels run an ensemble's runs on every numba thread (``NUMBA_NUM_THREADS``,
default one per core). A sweep already gives each core a task (a local process, or a Dask worker thread), so a
task run by a local worker process or by Dask computes with **one** numba thread (:func:`_worker_call`):
processes × threads never exceeds the workers asked for, and no core is oversubscribed. A serial sweep
(``n_workers=1``) keeps the caller's threads: one process, every core. The numbers are the same either way
(the kernels do not depend on the thread count).
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import importlib
import json
import multiprocessing as mp
import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["load_cached", "run_sweep", "task_key"]


def _fn_name(fn: Callable) -> str:
    name = f"{fn.__module__}.{fn.__qualname__}"
    if "<" in name or fn.__module__ == "__main__":
        raise ValueError(f"a sweep task must be an importable top-level function, got {name}")
    return name


def task_key(fn: Callable, params: dict, version: str = "1") -> str:
    """SHA-256 (24 hex digits) of the canonical JSON of ``fn``'s name, ``params`` and ``version``."""
    blob = json.dumps({"fn": _fn_name(fn), "params": params, "version": version}, sort_keys=True,
                      separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _path(cache_dir, fn, key) -> Path:
    return Path(cache_dir) / _fn_name(fn) / f"{key}.json"


def load_cached(fn: Callable, params: dict, cache_dir, version: str = "1"):
    """The cached result of ``fn(params)``, or ``None``."""
    path = _path(cache_dir, fn, task_key(fn, params, version))
    if path.exists():
        return json.loads(path.read_text())["result"]
    return None


def _call(fn_name: str, params: dict) -> dict:
    module, _, name = fn_name.rpartition(".")
    return getattr(importlib.import_module(module), name)(params)


def _worker_call(fn_name: str, params: dict) -> dict:
    """:func:`_call` in a sweep worker (a local process or a Dask worker thread): numba kernels on one thread,
    since the sweep already runs a task per core (``numba.set_num_threads`` is per calling thread)."""
    import numba

    numba.set_num_threads(1)
    return _call(fn_name, params)


def run_sweep(fn: Callable, params_list, *, cache_dir=None, client=None, n_workers: int | None = None,
              version: str = "1", progress: Callable[[float], None] | None = None) -> list:
    """``fn(p)`` for every ``p`` of ``params_list``, results in the same order.

    Args:
        fn: importable top-level function ``dict -> dict`` (JSON-able result).
        params_list: JSON-able dicts.
        cache_dir: directory of the on-disk cache (None: no cache).
        client: a ``dask.distributed.Client`` (None: run locally).
        n_workers: local processes (None: ``os.cpu_count()``; 1: serial, in this process).
        version: bump it to invalidate cached results after ``fn`` changed.
        progress: called with the fraction of tasks done.

    Raises:
        ValueError: a parameter that is not JSON-able, or ``fn`` not importable.
    """
    params_list = [dict(p) for p in params_list]
    for p in params_list:
        try:
            json.dumps(p, allow_nan=True)
        except TypeError as exc:
            raise ValueError(f"sweep parameters must be JSON-able: {exc}") from None
    name = _fn_name(fn)
    results: list = [None] * len(params_list)
    todo = []
    for i, p in enumerate(params_list):
        cached = load_cached(fn, p, cache_dir, version) if cache_dir is not None else None
        if cached is None:
            todo.append(i)
        else:
            results[i] = cached
    done = [len(params_list) - len(todo)]

    def store(i, res):
        results[i] = res
        if cache_dir is not None:
            path = _path(cache_dir, fn, task_key(fn, params_list[i], version))
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"fn": name, "params": params_list[i], "version": version, "result": res},
                                      allow_nan=True))
            tmp.replace(path)
        done[0] += 1
        if progress is not None:
            progress(done[0] / max(len(params_list), 1))

    if not todo:
        return results
    workers = (os.cpu_count() or 1) if n_workers is None else int(n_workers)
    if client is not None:
        from dask.distributed import as_completed  # the optional extra ``sweep``, imported only with a client

        futures = client.map(_worker_call, [name] * len(todo), [params_list[i] for i in todo], pure=False)
        where = {f.key: i for f, i in zip(futures, todo)}
        for fut in as_completed(futures):
            store(where[fut.key], fut.result())
    elif workers <= 1 or len(todo) == 1:
        for i in todo:
            store(i, _call(name, params_list[i]))
    else:
        ctx = mp.get_context("spawn")  # no fork of a process that holds numba/threads
        with cf.ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx) as ex:
            futs = {ex.submit(_worker_call, name, params_list[i]): i for i in todo}
            for fut in cf.as_completed(futs):
                store(futs[fut], fut.result())
    return results
