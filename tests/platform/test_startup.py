"""What importing symsgd_core adjusts in its process (symsgd_core/_startup.py): no IRI grammar, passive waits."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CODE = r"""
import json, sys, time
t0 = time.perf_counter()
import symsgd_core.ui  # what every notebook's import cell does
import nbformat
seconds = time.perf_counter() - t0
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
nbformat.validate(nb)  # nbformat's own validation still works (it uses jsonschema)
hidden = "rfc3987_syntax" not in sys.modules
import rfc3987_syntax  # and the package is still importable on purpose
print(json.dumps({"hidden": hidden, "seconds": seconds, "importable": rfc3987_syntax.__name__}))
"""


@pytest.mark.slow  # a subprocess of its own: not in `make test-fast`
def test_the_import_cell_skips_the_iri_grammar_and_nothing_else_changes():
    pytest.importorskip("rfc3987_syntax")  # installed with jupyter-events' jsonschema[format-nongpl]
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["hidden"], "importing symsgd_core.ui imported rfc3987_syntax (its grammar build costs seconds)"
    assert out["importable"] == "rfc3987_syntax"


def test_a_process_that_imported_jsonschema_first_is_left_as_it_is(monkeypatch):
    from symsgd_core._startup import import_jsonschema_without_iri_grammar

    monkeypatch.setitem(sys.modules, "jsonschema._format", sys.modules.get("jsonschema._format", object()))
    assert import_jsonschema_without_iri_grammar() is False


def test_parallel_kernels_wait_passively_unless_the_reader_chose_otherwise(monkeypatch):
    """Unset, ``OMP_WAIT_POLICY`` becomes PASSIVE (read by libgomp when numba loads it, at the first parallel call);
    a value the environment already has is kept."""
    from symsgd_core._startup import OMP_WAIT_POLICY, wait_passively_in_parallel_regions

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert wait_passively_in_parallel_regions() is True
    assert OMP_WAIT_POLICY == "PASSIVE" and os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert wait_passively_in_parallel_regions() is False
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


@pytest.mark.slow  # a subprocess of its own: not in `make test-fast`
def test_importing_the_package_sets_the_wait_policy_before_numba_loads_openmp():
    """In a fresh process without OMP_WAIT_POLICY, ``import symsgd_core`` sets it, and OpenMP (libgomp) is not yet
    loaded then, so the first parallel call reads it."""
    code = ("import os; assert 'OMP_WAIT_POLICY' not in os.environ; import symsgd_core; "
            "maps = open('/proc/self/maps').read(); print(os.environ['OMP_WAIT_POLICY'], 'libgomp' in maps)")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["PASSIVE", "False"], proc.stdout
