"""The environment's JupyterLab settings overrides, written by ``python -m symsgd_jupyter --enable`` (run by ``make``):
no pop-up on a projector (JupyterLab's "Would you like to get notified about official Jupyter news?" is off), and
widget messages handled on the kernel's main thread (``commsOverSubshells`` "disabled", see
``symsgd_jupyter.LAB_OVERRIDES``; the browser suite checks that no subshell is started)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import symsgd_jupyter


def _schema(name: str = "notification", package: str = "@jupyterlab/apputils-extension") -> dict:
    path = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas" / package / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_overrides_are_for_plugins_of_the_installed_jupyterlab():
    assert set(symsgd_jupyter.LAB_OVERRIDES) == {"@jupyterlab/apputils-extension:notification",
                                                 "@jupyterlab/apputils-extension:kernels-settings",
                                                 "@jupyterlab/notebook-extension:tracker"}
    for plugin, values in symsgd_jupyter.LAB_OVERRIDES.items():
        package, name = plugin.split(":")
        assert set(values) <= set(_schema(name, package)["properties"]), plugin


def test_code_lines_wrap_and_the_rest_of_the_cell_configuration_is_jupyterlabs_own():
    """The override replaces the whole ``codeCellConfig`` default: it keeps JupyterLab's keys and values but one."""
    values = symsgd_jupyter.LAB_OVERRIDES["@jupyterlab/notebook-extension:tracker"]["codeCellConfig"]
    default = _schema("tracker", "@jupyterlab/notebook-extension")["properties"]["codeCellConfig"]["default"]
    assert set(values) == set(default) and values["lineWrap"] is True and default["lineWrap"] is False
    assert {k: v for k, v in values.items() if k != "lineWrap"} == {k: v for k, v in default.items() if k != "lineWrap"}


def test_widget_messages_stay_on_the_main_thread():
    values = symsgd_jupyter.LAB_OVERRIDES["@jupyterlab/apputils-extension:kernels-settings"]
    prop = _schema("kernels-settings")["properties"]["commsOverSubshells"]
    assert values == {"commsOverSubshells": "disabled"}
    assert "disabled" in {o["const"] for o in prop["oneOf"]}
    assert prop["default"] != "disabled"  # JupyterLab's own default uses subshells: the override is what changes it


def test_the_news_override_uses_the_installed_jupyterlabs_own_keys_and_values():
    values = symsgd_jupyter.LAB_OVERRIDES["@jupyterlab/apputils-extension:notification"]
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
    assert data["@jupyterlab/apputils-extension:kernels-settings"] == {"commsOverSubshells": "disabled"}


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
    assert data["@jupyterlab/apputils-extension:kernels-settings"]["commsOverSubshells"] == "disabled"
