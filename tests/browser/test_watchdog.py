"""The browser suite's watchdog, without a browser: a run that outlives its budget kills its page's renderer, so a
call with no timeout of its own (Playwright's ``page.evaluate`` on a page stuck in its JavaScript) fails instead of
holding the suite for ever (a classroom page on a starved machine once held it for over 20 minutes)."""

from __future__ import annotations

import subprocess
import sys
import time

import notebook_run
from notebook_run import NotebookRun
from servers import kill_page_renderers


def _fake_renderer() -> subprocess.Popen:
    """A child process whose command line reads like a Chromium renderer's."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "--type=renderer"])


def test_kill_page_renderers_kills_only_renderers_under_this_process():
    renderer = _fake_renderer()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "--type=gpu-process"])
    try:
        time.sleep(0.5)  # the interpreters have started (their command lines are readable)
        assert kill_page_renderers() == [renderer.pid]
        assert renderer.wait(timeout=10) != 0 and other.poll() is None
    finally:
        for p in (renderer, other):
            p.kill()
            p.wait()


def test_a_run_past_its_budget_kills_its_page_and_says_so(monkeypatch):
    monkeypatch.setattr(notebook_run, "WATCHDOG_GRACE_S", 0.2)
    renderer = _fake_renderer()
    try:
        run = NotebookRun("unit", "stuck.ipynb", timeout_s=0.3)
        assert renderer.wait(timeout=20) != 0  # killed by the watchdog, about 0.5 s after the start
        assert "watchdog" in run.detail and str(renderer.pid) in run.detail
    finally:
        renderer.kill()
        renderer.wait()


def test_a_finished_run_leaves_no_watchdog_behind(monkeypatch):
    monkeypatch.setattr(notebook_run, "WATCHDOG_GRACE_S", 0.2)
    run = NotebookRun("unit", "quick.ipynb", timeout_s=0.3)
    assert run.watchdog in notebook_run.WATCHDOGS  # the suite's autouse fixture cancels it when the test ends
