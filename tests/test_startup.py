"""A reader's import cell does not build jsonschema's IRI grammar (symsgd_core/_startup.py)."""

from __future__ import annotations

import json
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
