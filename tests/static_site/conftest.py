"""Fixtures of the static-edition browser test: the built edition, a static file server and Chromium. The oracle
the pages are compared with is a kernel that ran the notebook (tests/static_site/live_kernel.py): in ``make test``
the one its JupyterLab pass left running (tests/browser/lesson_kernels.py).

``make test`` runs these tests in one pytest session with tests/browser (two pytest-xdist workers), after the
edition's build; ``make test-site`` builds the edition and runs them alone. Each page test leaves its page's weights
in ``test-artifacts/static-site/pages/``, and the controller writes ``report.{txt,json}`` from them at the end.
Without Chromium it is skipped with a how-to message, except on CI (``CI=true``), where that is a failure — as in
the browser suite, whose launch settings it reuses.
"""

from __future__ import annotations

import fcntl
import functools
import http.server
import importlib.util
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from browser_setup import CHROMIUM_FLAGS, CHROMIUM_PATH, HOW_TO_ENABLE, ci_is_true, shared_playwright
from site_support import ARTIFACTS, PAGE_RECORDS, REPO, SITE_DIR


def _missing(reason: str):
    message = f"{reason}; {HOW_TO_ENABLE}"
    if ci_is_true():
        pytest.fail("CI=true: " + message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The built edition; built here (``python -m tools.site.build``) when ``site/`` has none yet — by one worker, while
    the other waits on the lock."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (SITE_DIR / "edition-report.json").is_file():
            subprocess.run([sys.executable, "-m", "tools.site.build", "--out", str(SITE_DIR)],
                           check=True, cwd=REPO)
    return SITE_DIR


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config):
    """Before any worker starts: no page record from an earlier run."""
    if not _is_worker(config) and PAGE_RECORDS.is_dir():
        for old in PAGE_RECORDS.glob("*.json"):
            old.unlink()


def pytest_sessionfinish(session):
    """After every worker finished (or a plain run): report.{txt,json} from this run's page records."""
    if _is_worker(session.config):
        return
    pages = sorted(PAGE_RECORDS.glob("*.json")) if PAGE_RECORDS.is_dir() else []
    report = SITE_DIR / "edition-report.json"
    if not pages or not report.is_file():
        return
    write_weights_report([json.loads(p.read_text(encoding="utf-8")) for p in pages],
                         json.loads(report.read_text(encoding="utf-8")))


def write_weights_report(weights: list[dict], edition_report: dict) -> None:
    """test-artifacts/static-site/report.{txt,json}: bytes per page and in all, frames per slider moved, and the
    largest page-vs-kernel difference of each."""
    assets = edition_report["assets_bytes"]
    lines = [f"{'page':34} {'own MB':>7} {'+assets MB':>10} {'ready s':>7} {'figures':>7}  sliders moved with the "
             "mouse (frames; max |page − kernel| relative)", "-" * 120]
    for w in weights:
        firsts = {m["figure"]: m for m in reversed(w["moved"])}
        moved = ", ".join(f"{m['controller']}.{m['slider']} ({m['frames']}; {m['max_rel']:.0e})"
                          for _, m in sorted(firsts.items()))
        lines.append(f"{w['page']:34} {w['bytes'] / 1e6:7.2f} {w['fetched_bytes'] / 1e6:10.2f} {w['ready_s']:7.1f} "
                     f"{w['figures']:>7}  "
                     f"{moved or '-'}")
    total = sum(w["bytes"] for w in weights)
    lines.append(f"{'all pages':34} {total / 1e6:7.2f}   shared assets (loaded once per site visit) "
                 f"{assets / 1e6:.2f} MB; whole site {edition_report['total_bytes'] / 1e6:.2f} MB")
    (ARTIFACTS / "report.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (ARTIFACTS / "report.json").write_text(json.dumps(weights, indent=1), encoding="utf-8")


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
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser = shared_playwright().chromium.launch(executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_FLAGS)
    yield browser
    browser.close()
