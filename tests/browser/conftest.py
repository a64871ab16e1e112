"""Fixtures of the real-browser suite: Chromium, a JupyterLab server, a Voilà server, the report.

Under ``pytest -n 2`` (``make test-browser``) the tests are handed out two at a time; the servers
and the browser are session-scoped, so a worker starts at most one of each, lazily, when a test
needs it, and stops them at the end. Servers run on a temporary copy of notebooks/: nothing is written into the repo
except ``test-artifacts/browser/`` (screenshots, server logs, latency report).

Without Chromium (or Playwright) the tests are skipped with a how-to message, except on CI
(``CI=true``), where that is a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import sys
from pathlib import Path

import pytest
from browser_report import pytest_configure, pytest_terminal_summary  # noqa: F401
from browser_support import (
    ARTIFACTS,
    CHROMIUM_FLAGS,
    CHROMIUM_PATH,
    HOW_TO_ENABLE,
    REPO,
    Server,
    ci_is_true,
    copy_notebooks,
    free_port,
    server_env,
)


@pytest.fixture(scope="module")
def latency_records():
    """The records each test writes are gathered into the report by the terminal summary (browser_report.py),
    which reports only this run's records: nothing to clear here (workers share the folder)."""
    yield


def _missing(reason: str):
    message = f"{reason}; {HOW_TO_ENABLE}"
    if ci_is_true():
        pytest.fail("CI=true: " + message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def playwright_instance():
    if not Path(CHROMIUM_PATH).is_file():
        _missing(f"Chromium not found at {CHROMIUM_PATH}")
    if importlib.util.find_spec("playwright") is None:
        _missing("Python Playwright is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(playwright_instance):
    """Headless Debian Chromium (Playwright's own browsers are not used)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    b = playwright_instance.chromium.launch(executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_FLAGS)
    yield b
    b.close()


def _root_flag() -> list[str]:
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


#: JupyterLab user settings for the test server: no autosave, every cell attached to the DOM (so the screenshot and
#: the probes see the whole notebook). No news/update setting here: the environment's override from
#: ``python -m symsgd_jupyter --enable`` must switch the news pop-up off by itself (test_jupyterlab checks it).
LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def _start_lab(tmp_path_factory, base_path: str = "/") -> Server:
    """JupyterLab on 127.0.0.1, a free port and a token, serving a temporary copy of notebooks/ under
    ``base_path`` (``/``, or a prefix such as JupyterHub's ``/user/NAME/``)."""
    root = tmp_path_factory.mktemp("lab")
    nb_dir = copy_notebooks(root / "notebooks")
    settings = root / "settings"
    for rel, value in LAB_SETTINGS.items():
        (settings / rel).parent.mkdir(parents=True, exist_ok=True)
        (settings / rel).write_text(json.dumps(value), encoding="utf-8")
    port, token = free_port(), secrets.token_hex(24)
    argv = [sys.executable, "-m", "jupyterlab", "--no-browser", *_root_flag(),
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--ServerApp.base_url={base_path}",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={nb_dir}",
            f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={root / 'workspaces'}",
            "--LabApp.extension_manager=readonly", "--ServerApp.terminals_enabled=False"]
    name = "lab" if base_path == "/" else "lab-prefixed"
    server = Server(name, argv, server_env(root), nb_dir, f"http://127.0.0.1:{port}{base_path.rstrip('/')}",
                    "/api/status", token)
    return server.start()


@pytest.fixture(scope="session")
def lab_server(browser, tmp_path_factory):
    """JupyterLab at the root URL (as `make lab` starts it)."""
    server = _start_lab(tmp_path_factory)
    yield server
    server.stop()


#: The base URL of the second JupyterLab server (as under JupyterHub or Binder).
LAB_BASE_PATH = "/user/symsgd-test/"


@pytest.fixture(scope="session")
def lab_server_with_base_url(browser, tmp_path_factory):
    """JupyterLab under a base URL (:data:`LAB_BASE_PATH`): plotly's code must come from the prefixed URL."""
    server = _start_lab(tmp_path_factory, LAB_BASE_PATH)
    yield server
    server.stop()


def _load_classroom():
    spec = importlib.util.spec_from_file_location("symsgd_classroom", REPO / "tools" / "classroom.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def classroom():
    """tools/classroom.py, the launcher behind `make classroom` (tested here as it is)."""
    return _load_classroom()


def _start_voila(classroom, tmp_path_factory, host: str) -> Server:
    """Voilà started exactly as `make classroom` does, on a temporary copy of notebooks/; its pages are opened
    at ``http://<host>:<port>/`` (the server listens on 127.0.0.1; ``localhost`` reaches it too)."""
    root = tmp_path_factory.mktemp("voila")
    nb_dir = copy_notebooks(root / "notebooks")
    classroom.check_template()
    port = free_port()
    argv = classroom.voila_argv(nb_dir, port, open_browser=False, python=sys.executable)
    env = classroom.voila_env(classroom.prepare_template_root(root / "template"), server_env(root))
    name = "voila" if host == "127.0.0.1" else f"voila-{host}"
    return Server(name, argv, env, nb_dir, f"http://{host}:{port}", "/").start()


@pytest.fixture(scope="session")
def voila_server(browser, classroom, tmp_path_factory):
    """Classroom mode, opened at 127.0.0.1 (the address `make classroom` prints)."""
    server = _start_voila(classroom, tmp_path_factory, "127.0.0.1")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def voila_server_via_localhost(browser, classroom, tmp_path_factory):
    """Classroom mode, opened at localhost: plotly's code must come from the page's own origin."""
    server = _start_voila(classroom, tmp_path_factory, "localhost")
    yield server
    server.stop()
