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
