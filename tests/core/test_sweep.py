"""The sweep runner (core.sweep): the same numbers serially, on local processes and on a dask.distributed
LocalCluster with two workers; the disk cache returns them unchanged and is keyed by the parameters."""

from __future__ import annotations

import json

import pytest

from symsgd_core.core.sweep import load_cached, run_sweep, task_key
from symsgd_core.sde_noise.experiments import dynamics_task, grid_tasks

TASKS = [p for _, p in grid_tasks("tiny")]


def _canonical(results):
    """JSON without the wall time (the only non-result): equal strings ⇔ bit-identical floats, NaN too."""
    return json.dumps([{k: v for k, v in r.items() if k != "seconds"} for r in results], sort_keys=True,
                      allow_nan=True)


@pytest.fixture(scope="module")
def serial():
    return run_sweep(dynamics_task, TASKS, n_workers=1)


def test_results_come_in_the_order_of_the_parameters(serial):
    assert [r["n_runs"] for r in serial] == [p["n_runs"] for p in TASKS]
    assert serial[0]["tau"] == 0.0 and serial[2]["tau"] > 0  # sgd, sde, langevin


def test_cache_round_trip_and_keys(tmp_path, serial):
    first = run_sweep(dynamics_task, TASKS, n_workers=1, cache_dir=tmp_path)
    assert _canonical(first) == _canonical(serial)
    assert len(list(tmp_path.rglob("*.json"))) == len(TASKS)
    again = run_sweep(dynamics_task, TASKS, n_workers=1, cache_dir=tmp_path)
    assert json.dumps(again, allow_nan=True) == json.dumps(first, allow_nan=True)  # read back, not recomputed
    assert load_cached(dynamics_task, TASKS[0], tmp_path) is not None
    assert load_cached(dynamics_task, {**TASKS[0], "seed": 99}, tmp_path) is None
    assert task_key(dynamics_task, TASKS[0]) != task_key(dynamics_task, TASKS[0], version="2")
    assert task_key(dynamics_task, TASKS[0]) == task_key(dynamics_task, dict(reversed(TASKS[0].items())))


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_local_processes_give_the_same_numbers(serial):
    assert _canonical(run_sweep(dynamics_task, TASKS, n_workers=2)) == _canonical(serial)


def numba_threads_task(p: dict) -> dict:
    """A sweep task reporting how many numba threads a task computes with."""
    import numba

    return {"threads": numba.get_num_threads(), **p}


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_worker_processes_compute_with_one_numba_thread_each():
    """Two worker processes × one numba thread: the sweep does not oversubscribe the cores. A serial
    sweep keeps the caller's threads (every core, NUMBA_NUM_THREADS)."""
    import numba

    tasks = [{"k": k} for k in range(2)]
    assert [r["threads"] for r in run_sweep(numba_threads_task, tasks, n_workers=2)] == [1, 1]
    assert [r["threads"] for r in run_sweep(numba_threads_task, tasks, n_workers=1)] == [numba.get_num_threads()] * 2


def test_bad_tasks_are_clear_errors():
    with pytest.raises(ValueError, match="JSON"):
        run_sweep(dynamics_task, [{"x": object()}])
    with pytest.raises(ValueError, match="importable"):
        run_sweep(lambda p: p, [{}])


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_dask_local_cluster_with_two_workers_gives_the_same_numbers(serial):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is the optional extra 'sweep' "
                                      "(pip install -e '.[sweep]'); the lock installs it, so CI runs this test")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            out = run_sweep(dynamics_task, TASKS, client=client)
            threads = run_sweep(numba_threads_task, [{"k": 0}, {"k": 1}], client=client)
    assert _canonical(out) == _canonical(serial)
    assert [r["threads"] for r in threads] == [1, 1]  # a Dask worker thread computes with one numba thread


def test_the_cli_writes_a_grid_the_notebook_can_load(tmp_path, serial):
    from symsgd_core.__main__ import main
    from symsgd_core.sde_noise.experiments import load_grid

    out = tmp_path / "tiny.json"
    assert main(["sweep", "tiny", "--out", str(out), "--workers", "1", "--cache", str(tmp_path / "cache")]) == 0
    grid = load_grid(out)
    assert grid.command == "python -m symsgd_core sweep tiny" and len(grid.tasks) == len(TASKS)
    assert _canonical([t["result"] for t in grid.tasks]) == _canonical(serial)
    with pytest.raises(ValueError, match="unknown grid"):
        main(["sweep", "no-such-grid", "--out", str(out)])
