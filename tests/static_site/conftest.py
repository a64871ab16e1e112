"""Fixtures of the static-edition browser test: the built edition, a static file server, Chromium, and a live kernel
per notebook (the oracle the pages are compared with).

This folder is not under tests/browser on purpose: ``make test-browser`` runs that suite in four parallel workers
and measures slider latency, and this test executes every notebook in a kernel. ``make test`` runs it after the
browser suite (``make test-site``). Without Chromium it is skipped with a how-to message, except on CI
(``CI=true``), where that is a failure — as in the browser suite, whose launch settings it reuses.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from site_support import ARTIFACTS, REPO, SITE_DIR

sys.path.insert(0, str(REPO / "tests" / "browser"))

from browser_support import CHROMIUM_FLAGS, CHROMIUM_PATH, HOW_TO_ENABLE, ci_is_true  # noqa: E402


def _missing(reason: str):
    message = f"{reason}; {HOW_TO_ENABLE}"
    if ci_is_true():
        pytest.fail("CI=true: " + message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The built edition; built here (``tools/site/build.py``) when ``site/`` has none yet."""
    if not (SITE_DIR / "edition-report.json").is_file():
        subprocess.run([sys.executable, str(REPO / "tools" / "site" / "build.py"), "--out", str(SITE_DIR)],
                       check=True, cwd=REPO)
    return SITE_DIR


@pytest.fixture(scope="session")
def edition_report(site_dir) -> dict:
    return json.loads((site_dir / "edition-report.json").read_text(encoding="utf-8"))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test records requests itself
        pass


@pytest.fixture(scope="session")
def static_server(site_dir):
    """A plain static file server on 127.0.0.1 (a free port) serving the edition, as any static host would."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_QuietHandler, directory=str(site_dir)))
    thread = threading.Thread(target=server.serve_forever, name="edition-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def chromium():
    """Headless Debian Chromium, launched as the browser suite launches it."""
    if not Path(CHROMIUM_PATH).is_file():
        _missing(f"Chromium not found at {CHROMIUM_PATH}")
    if importlib.util.find_spec("playwright") is None:
        _missing("Python Playwright is not installed")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()
