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

from tools import strip_notebooks

ROOT = pathlib.Path(__file__).resolve().parents[2]

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


def _notebook(*sources: str) -> dict:
    return strip_notebooks.strip({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                   "source": src} for i, src in enumerate(sources)],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    })


#: A cell that fails unless its kernel talks over Unix sockets in a folder of its own (the root conftest's remedy
#: for two workers being handed the same TCP port).
_PRIVATE_SOCKETS_CELL = ("from ipykernel import get_connection_info\ninfo = get_connection_info(unpack=True)\n"
                         "assert info['transport'] == 'ipc', info\nassert '/symsgd-kernel-' in info['ip'], info")


@pytest.mark.slow  # a subprocess of its own: not in `make test-fast`
def test_the_test_commands_notebook_runner(tmp_path):
    """The notebook runner of `make test` (nbval under ``pytest -n 2 --dist loadgroup``, with the root conftest), in
    one run over three small notebooks:

    - a notebook whose cells each need the one before passes: its cells run in order on one worker and one kernel
      (split over two workers, as pytest-xdist does with ungrouped items, and did on pytest 9.2 before the
      group-suffix fix, they fail);
    - every kernel talks over private Unix sockets, not TCP ports (a cell asserts it in each notebook);
    - a notebook with a raising cell fails the run, and the report names the error.
    """
    chained = ["x = 0"] + [f"assert x == {k}\nx += 1" for k in range(5)]
    (tmp_path / "chained.ipynb").write_text(json.dumps(_notebook(_PRIVATE_SOCKETS_CELL, *chained)))
    (tmp_path / "other.ipynb").write_text(json.dumps(_notebook(_PRIVATE_SOCKETS_CELL)))
    (tmp_path / "broken.ipynb").write_text(json.dumps(_notebook("raise RuntimeError('broken cell')")))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-n", "2", "--dist", "loadgroup",
                           "--nbval-lax", "--nbval-current-env", "-v", "-p", "no:cacheprovider", "-o", "addopts=",
                           "chained.ipynb", "other.ipynb", "broken.ipynb"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    out = proc.stdout[-4000:]
    assert proc.returncode == 1, out  # 1: some test failed (not an internal or usage error)
    assert "broken cell" in proc.stdout, out
    assert re.search(r"\b1 failed, 8 passed\b", proc.stdout), out
    failed = re.findall(r"FAILED (\S+)", proc.stdout)
    assert all(f.startswith("broken.ipynb::") for f in failed), out
    workers = set(re.findall(r"\[(gw\d+)\] \[\s*\d+%\] PASSED chained\.ipynb::Cell", proc.stdout))
    assert len(workers) == 1, out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_cell_prints_a_widgets_html(path):
    """A status line is an HTML widget; printing its ``.value`` shows the markup as text (``<span class=…>``) in
    JupyterLab and in the classroom pages. Cells print :func:`symsgd_core.ui.status_text` instead."""
    nb = json.loads(path.read_text())
    bad = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
           and re.search(r"print\([^)]*\.status\.value", "".join(c["source"]))]
    assert not bad, f"{path.name}: cells {bad} print a status widget's HTML; use status_text(controller)"


#: A colour a notebook's Markdown or printed HTML would set itself (a ``color``/``background`` declaration, a
#: ``<font>`` tag or a ``bgcolor`` attribute), which JupyterLab's dark theme would not adapt.
OWN_COLOUR = re.compile(r"(?<![\w-])(?:color|background(?:-color)?)\s*:|<font\b|\bbgcolor\s*=", re.I)


def colour_settings(nb: dict) -> list[str]:
    """Every place a notebook's cells set a colour of their own: ``cell <i>: <the text around it>``."""
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        text = "".join(cell.get("source", ""))
        found += [f"cell {i}: {text[max(0, m.start() - 30):m.end() + 30]!r}" for m in OWN_COLOUR.finditer(text)]
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_notebook_sets_a_colour_of_its_own(path):
    """A notebook's text takes every colour from JupyterLab's theme and the package's widgets, so the dark theme's
    contrast is the platform's (checked once, on the gallery notebook in the browser suite), not each notebook's."""
    assert not colour_settings(json.loads(path.read_text())), colour_settings(json.loads(path.read_text()))


def test_a_colour_set_in_a_notebook_is_found():
    cells = ['Some <span style="color: red">red</span> text.', "<font color=blue>old</font>",
             '<td bgcolor="#fff">x</td>', '<div style="background:#000">dark</div>',
             "A `border-color:` in code? still plain text; a text-decoration-color: no"]
    nb = {"cells": [{"cell_type": "markdown", "source": c} for c in cells]}
    assert [f.split(":")[0] for f in colour_settings(nb)] == ["cell 0", "cell 1", "cell 2", "cell 3"]


#: A comprehension over one of these reads the stored grid's rows in the cell (a topic's report or experiments
#: module does that); ``.data[`` reads a figure's traces by position (``controller.trace(name)`` reads them by name).
GRID_NAMES = ("grid", "rows", "tasks", "comparison_rows")


def loop_or_def_cells(nb: dict) -> list[int]:
    """The indices of the code cells that define a function or class, hold a ``for``/``while`` loop statement, loop
    over the grid's rows in a comprehension (its iterable names one of :data:`GRID_NAMES`), or read a figure's
    trace by position (``.data[``). Other comprehensions (over a few checks or settings) are allowed."""
    import ast

    bad = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        src = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in src.splitlines())
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While)
        tree = ast.parse(src)
        comprehended = [ast.get_source_segment(src, g.iter) or "" for node in ast.walk(tree)
                        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
                        for g in node.generators]
        over_grid = any(name in {n.id for n in ast.walk(ast.parse(it)) if isinstance(n, ast.Name)}
                        or any(f".{name}" in it for name in GRID_NAMES) for it in comprehended for name in GRID_NAMES)
        if any(isinstance(node, kinds) for node in ast.walk(tree)) or over_grid or ".data[" in src:
            bad.append(i)
    return bad


def test_loop_or_def_cells_finds_a_def_and_a_loop():
    nb = _notebook("x = [i for i in range(3)]", "def f():\n    return 1", "for i in range(3):\n    print(i)", "%time 1",
                   "rows = {r.lr: r for r in sx.comparison_rows(grid)}", "s = sum(t['n'] for t in grid.tasks)",
                   "y = fig.figure.data[1].y", "c = [check() for check in (a, b)]")
    assert loop_or_def_cells(nb) == [1, 2, 4, 5, 6]


#: The notebooks whose code cells are thin: they call package functions (their tables: a topic's ``report`` module,
#: e.g. symsgd_core.sde_noise.report, balance.report, stationary.report), with no function definition and no loop in a
#: cell. A notebook joins the rule with one entry here.
THIN_NOTEBOOKS = ("00_start_here", "01_diffusion_cancellation", "02_rank1_lifting", "03_stationary_distribution",
                  "04_one_way_rank_jumps", "05_sgd_noise_sde")


@pytest.mark.parametrize("stem", THIN_NOTEBOOKS)
def test_notebook_cells_are_thin(stem):
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    assert loop_or_def_cells(nb) == [], f"{stem}: code cells (by index) with a def or a loop"
