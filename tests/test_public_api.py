"""The curated public API: every advertised name resolves, and importing the package stays light."""

import subprocess
import sys

import symsgd_core


def test_every_name_in_all_resolves():
    for name in symsgd_core.__all__:
        assert getattr(symsgd_core, name) is not None, name


def test_unknown_attribute_is_a_clear_error():
    try:
        symsgd_core.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_does_not_load_torch_numba_or_plotly():
    code = "import sys, symsgd_core; print(sorted(m for m in ('torch', 'numba', 'plotly') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
