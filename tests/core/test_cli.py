"""Tests of the command line ``python -m symsgd_core check``: table, --json, --seed, --only, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from symsgd_core.__main__ import main
from symsgd_core.core import checking as registry
from symsgd_core.core.checking import make_result

ROOT = Path(__file__).resolve().parents[2]
BALANCE = ["balance.symmetry", "balance.null_space", "balance.ito", "balance.theorem", "balance.discrete"]


@pytest.fixture
def temporary_check():
    """Register checks for one test only, and always remove them afterwards."""
    added = []

    def add(name, func):
        registry.register(name)(func)
        added.append(name)
        return func

    yield add
    for name in added:
        registry._REGISTRY.pop(name, None)


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_check_json_in_a_subprocess_exits_zero_and_reports_every_field():
    proc = subprocess.run([sys.executable, "-m", "symsgd_core", "check", "--json", "--only", *BALANCE],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads(proc.stdout)
    assert len(rows) >= 10
    for row in rows:
        assert set(row) >= {"name", "claim", "measured", "tolerance", "relation", "tolerance_source", "passed"}
        assert row["passed"] is True
        assert row["name"].startswith(tuple(BALANCE))
    assert any(r["name"] == "balance.symmetry[relu_layer]" for r in rows)


def test_check_table_lists_checks_and_summary(capsys):
    assert main(["check", "--only", "balance.symmetry"]) == 0
    out = capsys.readouterr().out
    assert "balance.symmetry[scalar]" in out and "PASS" in out and "FAIL" not in out
    assert "0 failed" in out


def test_a_failing_check_makes_the_exit_code_one(temporary_check, capsys):
    def always_fails(seed=0):
        return make_result("test.always_fails", "1 = 2 (deliberately false)", 1.0, 0.0, "exact: must be 0")

    temporary_check("test.always_fails", always_fails)
    assert main(["check", "--only", "test.always_fails", "balance.symmetry"]) == 1
    out = capsys.readouterr().out
    assert "FAILED test.always_fails" in out and "1 failed" in out
    assert main(["check", "--json", "--only", "test.always_fails"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{**rows[0], "name": "test.always_fails", "passed": False}]


def test_a_check_that_raises_is_reported_as_a_failure(temporary_check, capsys):
    def raises(seed=0):
        raise RuntimeError("boom")

    temporary_check("test.raises", raises)
    assert main(["check", "--json", "--only", "test.raises"]) == 1
    (row,) = json.loads(capsys.readouterr().out)
    assert row["passed"] is False and "boom" in row["details"]["error"]


def test_seed_is_passed_to_every_check(temporary_check, capsys):
    seen = []

    def records_seed(seed=0):
        seen.append(seed)
        return make_result("test.seed", "seed is forwarded", 0.0, 0.0, "exact")

    temporary_check("test.seed", records_seed)
    assert main(["check", "--seed", "7", "--only", "test.seed"]) == 0
    assert seen == [7]
    capsys.readouterr()


def test_temporary_checks_are_removed_again():
    assert not any(name.startswith("test.") for name in registry.registered())


def test_no_matching_check_is_an_error(capsys):
    assert main(["check", "--only", "no.such.check"]) == 1
    capsys.readouterr()


def test_json_output_is_strict_json_even_when_a_check_measures_inf(temporary_check, capsys):
    def measures_inf(seed=0):
        return make_result("test.inf", "a wrong formula blew up", float("inf"), 1.0, "exact",
                           details={"array": __import__("numpy").array([1.0, float("nan")])})

    temporary_check("test.inf", measures_inf)
    assert main(["check", "--json", "--only", "test.inf"]) == 1
    text = capsys.readouterr().out
    (row,) = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert row["measured"] == "inf" and row["details"]["array"] == [1.0, "nan"] and row["passed"] is False


def test_an_unmet_precondition_is_printed_as_such_and_makes_the_exit_code_one(temporary_check, capsys):
    """Not PASS and not a plain FAIL: its own result word, what is missing, and the exit code of every result
    that did not pass (the claim went untested)."""
    from symsgd_core.core.checking import precondition_not_met

    def untested(seed=0):
        return precondition_not_met("test.untested", "B_1 is absorbing", "forcing did not reach rank 1")

    temporary_check("test.untested", untested)
    assert main(["check", "--only", "test.untested", "balance.symmetry"]) == 1
    out = capsys.readouterr().out
    assert "PRECONDITION NOT MET test.untested: forcing did not reach rank 1" in out and "FAILED" not in out
    assert "0 failed, 1 not tested (precondition not met)" in out
    assert main(["check", "--json", "--only", "test.untested"]) == 1
    (row,) = json.loads(capsys.readouterr().out)
    assert row["passed"] is False and row["precondition"] == "forcing did not reach rank 1"
