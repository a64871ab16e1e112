"""Committed notebooks carry no outputs, no saved widget state, and the python3 kernelspec;
tools/strip_notebooks.py is the one command that makes them so (``make strip``). The test command's notebook
runner fails on a raising cell and keeps a notebook's cells together under pytest-xdist."""

from __future__ import annotations

import copy
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import strip_notebooks  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: Committed notebooks that are not lessons: the browser suite's gallery (tests/gallery/), stripped the same way.
TEST_NOTEBOOKS = sorted((ROOT / "tests" / "gallery").glob("*.ipynb"))


def hygiene_problems(nb: dict) -> list[str]:
    problems = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "code":
            if cell.get("outputs"):
                problems.append(f"cell {i} has stored outputs")
            if cell.get("execution_count") is not None:
                problems.append(f"cell {i} has an execution count")
    meta = nb.get("metadata", {})
    if "widgets" in meta:
        problems.append("metadata.widgets holds saved widget state")
    if meta.get("kernelspec", {}).get("name") != "python3":
        problems.append(f"kernelspec name is {meta.get('kernelspec', {}).get('name')!r}, not 'python3'")
    return problems


def test_there_are_notebooks():
    assert any(p.name == "00_start_here.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS + TEST_NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_is_stripped(path):
    problems = hygiene_problems(json.loads(path.read_text()))
    assert not problems, f"{path.name}: {problems}; run 'make strip' before committing"


@pytest.mark.parametrize("path", NOTEBOOKS + TEST_NOTEBOOKS, ids=lambda p: p.name)
def test_strip_tool_leaves_committed_notebooks_unchanged(path):
    assert strip_notebooks.main(["--check", str(path)]) == 0


def _dirty_notebook() -> dict:
    return {
        "cells": [{"cell_type": "code", "execution_count": 3, "id": "a", "metadata": {"scrolled": True},
                   "outputs": [{"output_type": "stream", "name": "stdout", "text": "hi\n"}], "source": "print('hi')"}],
        "metadata": {"kernelspec": {"name": "myenv", "display_name": "x", "language": "python"},
                     "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}}}},
        "nbformat": 4, "nbformat_minor": 5,
    }


def test_hygiene_detects_outputs_widget_state_and_kernel():
    problems = hygiene_problems(_dirty_notebook())
    assert len(problems) == 4, problems


def test_strip_tool_fixes_a_dirty_notebook(tmp_path):
    path = tmp_path / "dirty.ipynb"
    path.write_text(json.dumps(_dirty_notebook()))
    assert strip_notebooks.main(["--check", str(path)]) == 1
    assert strip_notebooks.main([str(path)]) == 0
    nb = json.loads(path.read_text())
    assert hygiene_problems(nb) == []
    assert nb["cells"][0]["source"] == "print('hi')"  # code untouched
    before = copy.deepcopy(nb)
    strip_notebooks.main([str(path)])
    assert json.loads(path.read_text()) == before  # idempotent


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_nbval_fails_on_a_notebook_that_raises(tmp_path):
    """The test command's notebook runner must fail when a cell raises."""
    nb = strip_notebooks.strip({
        "cells": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [],
                   "source": "raise RuntimeError('broken cell')"}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    })
    path = tmp_path / "broken.ipynb"
    path.write_text(json.dumps(nb))
    proc = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-q",
                           "-p", "no:cacheprovider", "-o", "addopts=", str(path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode != 0, proc.stdout
    assert "broken cell" in proc.stdout


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_a_notebooks_cells_stay_on_one_worker_under_the_test_commands_xdist(tmp_path):
    """`make test` runs nbval under ``pytest -n 2 --dist loadgroup``: each notebook's cells must run in order on one
    worker and one kernel (the root conftest groups them). Six cells that each need the one before: split over two
    workers, as pytest-xdist does with ungrouped items (and did on pytest 9.2 before the group-suffix fix), they
    fail."""
    cells = ["x = 0"] + [f"assert x == {k}\nx += 1" for k in range(5)]
    nb = strip_notebooks.strip({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                   "source": src} for i, src in enumerate(cells)],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    })
    (tmp_path / "chained.ipynb").write_text(json.dumps(nb))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-n", "2", "--dist", "loadgroup",
                           "--nbval-lax", "--nbval-current-env", "-v", "-p", "no:cacheprovider", "-o", "addopts=",
                           "chained.ipynb"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    workers = set(re.findall(r"\[(gw\d+)\] \[\s*\d+%\] PASSED chained\.ipynb::Cell", proc.stdout))
    assert "6 passed" in proc.stdout and len(workers) == 1, proc.stdout[-3000:]


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_nbvals_kernels_use_private_unix_sockets_under_the_test_command(tmp_path):
    """The root conftest moves nbval's kernels off TCP ports (two workers starting kernels at once could be handed
    the same port): under the test command's options, each notebook's kernel reports transport ``ipc`` with its
    sockets in its own folder."""
    cell = ("from ipykernel import get_connection_info\ninfo = get_connection_info(unpack=True)\n"
            "print('TRANSPORT', info['transport'], info['ip'])\n"
            "assert info['transport'] == 'ipc', info\nassert '/symsgd-kernel-' in info['ip'], info")
    for name in ("a", "b"):
        nb = strip_notebooks.strip({
            "cells": [{"cell_type": "code", "execution_count": None, "id": "c0", "metadata": {}, "outputs": [],
                       "source": cell}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
        })
        (tmp_path / f"{name}.ipynb").write_text(json.dumps(nb))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-n", "2", "--dist", "loadgroup",
                           "--nbval-lax", "--nbval-current-env", "-v", "-p", "no:cacheprovider", "-o", "addopts=",
                           "a.ipynb", "b.ipynb"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0 and "2 passed" in proc.stdout, proc.stdout[-3000:]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_cell_prints_a_widgets_html(path):
    """A status line is an HTML widget; printing its ``.value`` shows the markup as text (``<span class=…>``) in
    JupyterLab and in the classroom pages. Cells print :func:`symsgd_core.ui.status_text` instead."""
    nb = json.loads(path.read_text())
    bad = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
           and re.search(r"print\([^)]*\.status\.value", "".join(c["source"]))]
    assert not bad, f"{path.name}: cells {bad} print a status widget's HTML; use status_text(controller)"
