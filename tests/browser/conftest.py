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
from pathlib import Path

import lesson_kernels
import pytest
from browser_report import ARTIFACTS, pytest_configure, pytest_terminal_summary  # noqa: F401
from browser_setup import CHROMIUM_FLAGS, CHROMIUM_PATH, HOW_TO_ENABLE, ci_is_true, shared_playwright
from notebook_run import WATCHDOGS
from servers import LAB_BASE_PATH, start_lab, start_voila


@pytest.fixture(autouse=True)
def _cancel_watchdogs():
    """A run's watchdog (``NotebookRun``) lives as long as its test: cancelled when the test ends, however it ends."""
    yield
    while WATCHDOGS:
        WATCHDOGS.pop().cancel()


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
    yield shared_playwright()  # one per process, shared with tests/static_site's fixtures


@pytest.fixture(scope="session")
def browser(playwright_instance):
    """Headless Debian Chromium (Playwright's own browsers are not used)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    b = playwright_instance.chromium.launch(executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_FLAGS)
    yield b
    b.close()


@pytest.fixture(scope="session")
def lab_server(browser, tmp_path_factory):
    """JupyterLab at the root URL, as `make lab` starts it: its kernels load the engines the set-up's warm-up compiled
    (a cold start is the gallery's to check, once per front end: test_gallery.py). Its kernels record which cell
    showed each widget, for the edition test's oracle (tests/browser/lesson_kernels.py)."""
    server = start_lab(tmp_path_factory)
    lesson_kernels.install_startup(Path(server.env["IPYTHONDIR"]))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def lab_server_with_base_url(browser, tmp_path_factory):
    """JupyterLab under a base URL (:data:`LAB_BASE_PATH`): plotly's code must come from the prefixed URL."""
    server = start_lab(tmp_path_factory, LAB_BASE_PATH)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def classroom():
    """tools/classroom.py, the launcher behind `make classroom` (tested here as it is)."""
    from tools import classroom

    return classroom


@pytest.fixture(scope="session")
def voila_server(browser, classroom, tmp_path_factory):
    """Classroom mode, opened at 127.0.0.1 (the address `make classroom` prints)."""
    server = start_voila(classroom, tmp_path_factory, "127.0.0.1")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def voila_server_via_localhost(browser, classroom, tmp_path_factory):
    """Classroom mode, opened at localhost: plotly's code must come from the page's own origin."""
    server = start_voila(classroom, tmp_path_factory, "localhost")
    yield server
    server.stop()
