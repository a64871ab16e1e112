"""No pop-up on a projector: ``python -m symsgd_jupyter --enable`` (run by ``make``) switches JupyterLab's
"Would you like to get notified about official Jupyter news?" off in the environment's settings overrides."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import symsgd_jupyter


def _schema() -> dict:
    path = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas" / "@jupyterlab" / "apputils-extension" / \
        "notification.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_override_uses_the_installed_jupyterlabs_own_keys_and_values():
    (plugin, values), = symsgd_jupyter.LAB_OVERRIDES.items()
    assert plugin == "@jupyterlab/apputils-extension:notification"
    props = _schema()["properties"]
    assert set(values) <= set(props)
    assert values["fetchNews"] in {o["const"] for o in props["fetchNews"]["oneOf"]}
    assert values["fetchNews"] == "false" and props["fetchNews"]["default"] == "none"  # "none" = ask = the pop-up
    assert values["checkForUpdates"] is False and props["checkForUpdates"]["type"] == "boolean"


def test_enable_merges_the_override_and_keeps_other_settings(tmp_path):
    path = symsgd_jupyter.lab_overrides_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
                                "@jupyterlab/apputils-extension:notification": {"doNotDisturbMode": True}}))
    symsgd_jupyter.enable(tmp_path)
    symsgd_jupyter.enable(tmp_path)  # idempotent
    data = json.loads(path.read_text())
    assert data["@jupyterlab/apputils-extension:themes"] == {"theme": "JupyterLab Dark"}
    assert data["@jupyterlab/apputils-extension:notification"] == {"doNotDisturbMode": True, "fetchNews": "false",
                                                                   "checkForUpdates": False}


def test_enable_refuses_to_overwrite_a_broken_overrides_file(tmp_path):
    path = symsgd_jupyter.lab_overrides_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        symsgd_jupyter.write_lab_overrides(tmp_path)
    assert path.read_text() == "{not json"


def test_this_environment_has_the_override():
    """`make` runs --enable for .venv (and CI builds .venv with make)."""
    data = json.loads(symsgd_jupyter.lab_overrides_file().read_text(encoding="utf-8"))
    assert data["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
