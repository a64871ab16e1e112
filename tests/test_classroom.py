"""The classroom launcher (tools/classroom.py) without a browser: what it serves, where, and how."""

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import classroom  # noqa: E402


def test_serves_on_loopback_with_the_offline_template():
    argv = classroom.voila_argv(ROOT / "notebooks", port=9123)
    assert "--Voila.ip=127.0.0.1" in argv and "--Voila.port=9123" in argv and "--Voila.port_retries=0" in argv
    assert f"--VoilaConfiguration.template={classroom.TEMPLATE}" in argv and "--no-browser" in argv
    classroom.check_template()  # the template folder is in the repository


@pytest.mark.parametrize("port", [0, 70000, "8866"])
def test_bad_port_is_a_clear_error(port):
    with pytest.raises(ValueError, match="port"):
        classroom.voila_argv("notebooks", port=port)
