"""The curated public API: every advertised name resolves, and importing the package stays light."""

import subprocess
import sys

import symsgd_core


def test_every_name_in_all_resolves():
    for name in symsgd_core.__all__:
        assert getattr(symsgd_core, name) is not None, name


def test_diagonal_net_problem_is_exported_beside_stationary_law():
    """StationaryLaw needs a DiagonalNetProblem, which the top level did not export."""
    from symsgd_core import DiagonalNetProblem, StationaryLaw

    law = StationaryLaw(DiagonalNetProblem.gaussian(1.0, 1.0), 0.15, 1)
    assert not law.collapsed and "DiagonalNetProblem" in symsgd_core.__all__


def test_each_topic_namespace_exports_what_it_advertises():
    import importlib

    for topic in symsgd_core.TOPICS:
        module = importlib.import_module(f"symsgd_core.{topic}")
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert not missing, (topic, missing)
        assert len(module.__all__) == len(set(module.__all__)), topic


def test_run_checks_orders_the_topics_as_the_notebooks():
    names = list(symsgd_core.registered_checks())
    topics = [n.split(".", 1)[0] for n in names]
    assert topics == sorted(topics, key=symsgd_core.TOPICS.index)


def test_unknown_attribute_is_a_clear_error():
    try:
        symsgd_core.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_does_not_load_torch_numba_or_plotly():
    code = "import sys, symsgd_core; print(sorted(m for m in ('torch', 'numba', 'plotly') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, f"the subprocess failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip() == "[]"


#: The most names each namespace may advertise: what the notebooks, README, ARCHITECTURE.md, tools and the figures use
#: from it, plus the experiments, their results, the engines' entry points, the models, checks, claims and EXERCISES.
#: Everything else is imported from its module (``symsgd_core.rank_jumps.analysis.barrier_width``). Before the cut:
#: balance 89, lifting 70, rank_jumps 113 (+ claims), stationary 82, sde_noise 37, core 25.
MAX_ALL = {"balance": 46, "lifting": 32, "rank_jumps": 53, "stationary": 56, "sde_noise": 28, "core": 14,
           "dln": 56}


def test_topic_namespaces_stay_small():
    import importlib

    for topic, most in MAX_ALL.items():
        module = importlib.import_module(f"symsgd_core.{topic}")
        assert len(module.__all__) <= most, (topic, len(module.__all__), most)
        assert all(hasattr(module, name) for name in module.__all__), topic


def _notebook_topic_names():
    """``{(notebook, topic, name)}``: every name a notebook's code imports from a topic namespace
    (``from symsgd_core.<topic> import name``) or reads from it (``from symsgd_core import <topic> [as t]``, then
    ``t.name``)."""
    import ast
    import json
    import pathlib

    topics = set(MAX_ALL)
    found = set()
    for path in sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        tree = ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                parts = node.module.split(".")
                if parts[0] == "symsgd_core" and len(parts) == 2 and parts[1] in topics:
                    found |= {(path.name, parts[1], a.name) for a in node.names}
                elif node.module == "symsgd_core":
                    aliases |= {a.asname or a.name: a.name for a in node.names if a.name in topics}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                found.add((path.name, aliases[node.value.id], node.attr))
    return found


def test_every_name_a_notebook_takes_from_a_topic_is_advertised():
    import importlib

    names = _notebook_topic_names()
    assert len(names) > 50 and {t for _, t, _ in names} >= {"balance", "lifting", "rank_jumps", "stationary"}
    missing = sorted((nb, t, n) for nb, t, n in names if n not in importlib.import_module(f"symsgd_core.{t}").__all__)
    assert not missing, missing
