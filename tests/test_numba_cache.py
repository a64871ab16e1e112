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
