"""First Run All of each notebook with an empty compiled-kernel cache (cold) against the next one (warm).

    .venv/bin/python tools/bench_cold_start.py [notebook names …]     (make bench-cold)

For each notebook: a fresh ``NUMBA_CACHE_DIR`` (so numba compiles every kernel the notebook calls, as on a clone
that skipped ``make``'s warm-up), one Run All in a new kernel (cold), then a second Run All in another new kernel
with the same cache (warm). Prints wall time and the kernel process's CPU time (user + sys: what the compile costs,
robust to other load on the machine) and the number of kernels the cold run compiled into the cache. A benchmark,
not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import nbformat
import psutil
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]


def run_all(path: Path) -> tuple[float, float]:
    """One Run All of ``path`` in a new kernel: ``(wall seconds, kernel CPU seconds)``."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel():
        kernel = psutil.Process(client.km.provisioner.process.pid)
        c0, t0 = kernel.cpu_times(), time.perf_counter()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        wall, c1 = time.perf_counter() - t0, kernel.cpu_times()
    return wall, (c1.user + c1.system) - (c0.user + c0.system)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="file names under notebooks/ (default: all)")
    args = parser.parse_args(argv)
    names = args.notebooks or sorted(p.name for p in (REPO / "notebooks").glob("0*.ipynb"))
    print(f"{'notebook':34s} {'cold wall':>9s} {'cold CPU':>9s} {'warm wall':>9s} {'warm CPU':>9s}  compiled  load")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="symsgd-cold-") as cache:
            os.environ["NUMBA_CACHE_DIR"] = cache  # the kernels inherit it
            cold = run_all(REPO / "notebooks" / name)
            compiled = sum(1 for _ in Path(cache).rglob("*.nbi"))
            warm = run_all(REPO / "notebooks" / name)
        print(f"{name:34s} {cold[0]:8.1f}s {cold[1]:8.1f}s {warm[0]:8.1f}s {warm[1]:8.1f}s  {compiled:8d}  "
              f"{os.getloadavg()[0]:4.1f}", flush=True)


if __name__ == "__main__":
    main()
