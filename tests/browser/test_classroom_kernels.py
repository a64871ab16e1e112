"""Classroom kernels are freed, without a browser.

The launcher is started as ``make classroom`` starts it (``tools/classroom.py``, here with short culling settings) on a
folder holding one tiny notebook. Voilà starts a page's kernel and runs the notebook when the page's HTML is requested
(plain HTTP); the open page then holds a websocket to that kernel (its widget manager's connection), for which a
websocket client stands in here: closing it is closing the tab. Kernels are counted as the ``ipykernel_launcher``
processes under the launcher (Voilà has no kernel list: ``/api/kernels`` answers 404, ``/api/kernels/<id>`` gives one
kernel's connections and last activity). Every wait is bounded and says what it waited for, what it saw last, and
the launcher's output.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import nbformat
import psutil
import pytest
import requests
import websocket
from browser_report import REPO
from browser_setup import free_port
from servers import server_env

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")]

LAUNCHER = REPO / "tools" / "classroom.py"
NOTEBOOK = "tiny.ipynb"
#: Culling settings of the test (the launcher's defaults, CULL_IDLE_TIMEOUT_S and CULL_INTERVAL_S, are minutes).
CULL_AFTER_S, CULL_INTERVAL_S = 3, 1
#: Pages opened at once.
PAGES = 3
#: Seconds a page's websocket may take to connect to its kernel: the handshake waits while the page's kernel starts
#: and runs the notebook, which took over 30 s on a loaded 2-core machine (two fresh-clone runs under load).
CONNECT_TIMEOUT_S = 120
#: Bounds of the waits, generous for a busy two-core machine (a kernel there takes seconds to start).
READY_S, PAGE_S, CULL_WAIT_S = 120.0, 120.0, CULL_AFTER_S + CULL_INTERVAL_S + 60.0
#: Polling interval of the waits (not a synchronisation: each wait polls a state until its bound).
POLL_S = 0.2


def wait_until(what: str, probe: Callable[[], tuple[bool, object]], timeout_s: float, launcher: Launcher) -> float:
    """Poll ``probe`` (→ (reached, what is seen)) until it reports ``what`` reached; return the seconds it took.

    Raises:
        AssertionError: not reached within ``timeout_s``; names ``what``, the last thing seen, the launcher's output.
    """
    start = time.monotonic()
    while True:
        reached, seen = probe()
        if reached:
            return time.monotonic() - start
        if time.monotonic() - start > timeout_s:
            raise AssertionError(f"waited {timeout_s:.0f} s for: {what}; last seen: {seen}\n{launcher.output()}")
        time.sleep(POLL_S)


def is_kernel(p: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        return "ipykernel_launcher" in p.cmdline()
    return False


def is_running(p: psutil.Process) -> bool:
    """Still there (psutil tells a reused pid from the process it was made for) and not a zombie awaiting reaping."""
    with contextlib.suppress(psutil.Error):
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    return False


def describe(procs: list[psutil.Process]) -> list[str]:
    out = []
    for p in procs:
        with contextlib.suppress(psutil.Error):
            out.append(f"{p.pid} {' '.join(p.cmdline()[1:4])}")
    return out


class Launcher:
    """``tools/classroom.py`` running in a session of its own, its output in ``log``; ``tmp`` is its TMPDIR."""

    def __init__(self, tmp_path: Path, extra_args: list[str]):
        nb_dir = tmp_path / "notebooks"
        nb_dir.mkdir()
        nb = nbformat.v4.new_notebook()
        nb.cells.append(nbformat.v4.new_code_cell("x = 1"))
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, nb_dir / NOTEBOOK)
        self.env = server_env(tmp_path)  # runtime, data, IPython and temp dirs of its own: nothing written to $HOME
        self.tmp = Path(self.env["TMPDIR"])
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = tmp_path / "launcher.log"
        self.seen: dict[int, psutil.Process] = {}  # every process seen under the launcher: none may outlive the test
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, str(LAUNCHER), str(nb_dir), "--port", str(self.port), "--no-browser", *extra_args],
                env=self.env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
        self.seen[self.proc.pid] = psutil.Process(self.proc.pid)

    def wait_ready(self) -> Launcher:
        wait_until("the classroom server answers at /", self._ready, READY_S, self)
        return self

    def _ready(self) -> tuple[bool, object]:
        if self.proc.poll() is not None:
            raise AssertionError(f"the launcher exited with code {self.proc.returncode} before it served\n"
                                 f"{self.output()}")
        try:
            status = requests.get(self.base + "/", timeout=10).status_code
        except requests.RequestException as exc:
            return False, exc
        return status == 200, f"HTTP {status}"

    def output(self, n: int = 60) -> str:
        lines = self.log.read_text(errors="replace").splitlines() if self.log.is_file() else []
        return f"--- launcher output (last {n} lines) ---\n" + "\n".join(lines[-n:])

    def tree(self) -> list[psutil.Process]:
        """The launcher and every process under it now (remembered for the clean-up)."""
        procs = []
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(self.proc.pid)
            procs = [root, *root.children(recursive=True)]
        self.seen.update((p.pid, p) for p in procs)
        return procs

    def kernels(self) -> list[psutil.Process]:
        return [p for p in self.tree() if is_kernel(p)]

    def rss_mb(self, procs: list[psutil.Process] | None = None) -> float:
        """Resident memory (MB) of ``procs`` (default: the launcher and everything under it)."""
        total = 0
        for p in self.tree() if procs is None else procs:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
        return total / 2**20

    def open_page(self) -> str:
        """Request the notebook's page (Voilà starts a kernel and runs the notebook); return the kernel's id."""
        url = f"{self.base}/voila/render/{NOTEBOOK}"
        r = requests.get(url, timeout=PAGE_S)
        assert r.status_code == 200, f"GET {url}: HTTP {r.status_code}\n{self.output()}"
        m = re.search(r'"kernelId": "([0-9a-f-]+)"', r.text)
        assert m, f"no kernelId in the page at {url}\n{self.output()}"
        return m.group(1)

    def kernel_model(self, kernel_id: str) -> dict | None:
        """Voilà's record of the kernel (connections, execution_state, last_activity); None once it is gone."""
        r = requests.get(f"{self.base}/api/kernels/{kernel_id}", timeout=10)
        if r.status_code == 404:
            return None
        assert r.status_code == 200, f"GET /api/kernels/{kernel_id}: HTTP {r.status_code}\n{self.output()}"
        return r.json()

    def connect(self, kernel_id: str) -> websocket.WebSocket:
        """The open page's connection to its kernel (as its widget manager opens it)."""
        return websocket.create_connection(
            f"ws://127.0.0.1:{self.port}/api/kernels/{kernel_id}/channels?session_id={uuid.uuid4().hex}",
            timeout=CONNECT_TIMEOUT_S)

    def close(self) -> None:
        """Kill whatever is left (the launcher and every process ever seen under it): a failed test leaks nothing."""
        self.tree()
        for p in self.seen.values():
            with contextlib.suppress(psutil.Error):
                p.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)


@pytest.fixture
def start_launcher(tmp_path):
    started = []

    def start(*extra_args: str) -> Launcher:
        root = tmp_path / f"run{len(started)}"
        root.mkdir()
        started.append(Launcher(root, list(extra_args)))
        return started[-1].wait_ready()

    yield start
    for launcher in started:
        launcher.close()


def idle_s(model: dict) -> float:
    """Seconds since the kernel's last activity, as Voilà recorded it."""
    last = dt.datetime.fromisoformat(model["last_activity"].replace("Z", "+00:00"))
    return (dt.datetime.now(dt.UTC) - last).total_seconds()


def test_closed_pages_free_their_kernels_and_open_pages_keep_theirs(start_launcher):
    launcher = start_launcher("--cull-after", str(CULL_AFTER_S), "--cull-interval", str(CULL_INTERVAL_S))
    assert launcher.kernels() == [], f"kernels before any page was opened: {describe(launcher.kernels())}"
    baseline_mb = launcher.rss_mb()

    sockets = {}
    for _ in range(PAGES):  # each page opened and connected, as a browser tab does
        kernel_id = launcher.open_page()
        sockets[kernel_id] = launcher.connect(kernel_id)
    kernels = launcher.kernels()
    assert len(kernels) == PAGES, f"{PAGES} open pages, kernels: {describe(kernels)}\n{launcher.output()}"
    peak_mb, one_kernel_mb = launcher.rss_mb(), min(launcher.rss_mb([k]) for k in kernels)

    # open pages keep their kernels, however long they stay untouched (here: past the timeout, and culler passes)
    def open_kernels_idle_past_timeout():
        models = {k: launcher.kernel_model(k) for k in sockets}
        seen = {k[:8]: m and (m["connections"], round(idle_s(m), 1)) for k, m in models.items()}
        past = all(m and m["connections"] == 1 and idle_s(m) > CULL_AFTER_S + 2 * CULL_INTERVAL_S
                   for m in models.values())
        return past or None in models.values(), seen

    wait_until("every open page's kernel idle (and connected) longer than the culling timeout plus two culler "
               "passes, or a kernel of an open page gone", open_kernels_idle_past_timeout, CULL_WAIT_S, launcher)
    gone = [k for k in sockets if launcher.kernel_model(k) is None]
    assert not gone, f"kernels of open pages culled: {gone}\n{launcher.output()}"
    assert len(launcher.kernels()) == PAGES

    # closing the tabs: the kernel of each closed page goes, the page still open keeps its own
    *closed, kept = sockets
    for kernel_id in closed:
        sockets.pop(kernel_id).close()
    closed_cull_s = wait_until(
        f"the kernels of the {len(closed)} closed pages shut down",
        lambda: (not (alive := [k[:8] for k in closed if launcher.kernel_model(k) is not None]), f"still up: {alive}"),
        CULL_WAIT_S, launcher)
    model = launcher.kernel_model(kept)
    assert model is not None and model["connections"] == 1, (
        f"the page still open lost its kernel: {model}\n{launcher.output()}")
    assert len(launcher.kernels()) == 1, describe(launcher.kernels())

    sockets.pop(kept).close()
    def last_kernel_gone():
        model, left = launcher.kernel_model(kept), launcher.kernels()
        return model is None and not left, f"kernel record: {model}; kernel processes: {describe(left)}"

    last_cull_s = wait_until("the last page's kernel shut down once its page closed, and no kernel process left",
                             last_kernel_gone, CULL_WAIT_S, launcher)
    after_mb = launcher.rss_mb()
    # no kernel's worth of memory left (Voilà itself grows a little on its first pages: templates compiled, caches)
    assert after_mb < baseline_mb + one_kernel_mb, (
        f"memory of the launcher's processes: {baseline_mb:.0f} MB before any page, {peak_mb:.0f} MB with {PAGES} "
        f"open, {after_mb:.0f} MB after every page closed (one kernel: {one_kernel_mb:.0f} MB)\n{launcher.output()}")
    print(f"kernels 0 -> {PAGES} -> 0; RSS of launcher+Voilà+kernels {baseline_mb:.0f} MB -> {peak_mb:.0f} MB -> "
          f"{after_mb:.0f} MB (one kernel {one_kernel_mb:.0f} MB); closed pages' kernels gone {closed_cull_s:.1f} s "
          f"and {last_cull_s:.1f} s after their pages closed (cull after {CULL_AFTER_S} s idle, checked every "
          f"{CULL_INTERVAL_S} s)")


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_stopping_the_launcher_stops_voila_and_every_kernel(start_launcher, sig):
    """``kill``, Ctrl+C and a closed terminal stop the server, its kernels and the launcher; the temporary template
    copy goes too. Culling is off here (``--cull-after 0``): the kernels are there when the signal comes."""
    launcher = start_launcher("--cull-after", "0")
    page = launcher.connect(launcher.open_page())  # a page open in a tab
    launcher.open_page()  # and one already closed
    tree = launcher.tree()
    assert len([p for p in tree if is_kernel(p)]) == 2, f"two pages, processes: {describe(tree)}"
    start = time.monotonic()
    os.kill(launcher.proc.pid, getattr(signal, sig))
    grace_s = 15.0 + 15.0  # the launcher's STOP_GRACE_S, then the kill of whatever is left, plus slack
    try:
        code = launcher.proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the launcher still runs {grace_s:.0f} s after {sig}; processes: {describe(tree)}\n"
                             f"{launcher.output()}") from None
    stop_s = time.monotonic() - start
    wait_until(f"every process the launcher started gone after {sig}",
               lambda: (not (left := [p for p in tree if is_running(p)]), describe(left)), 15.0, launcher)
    page.close()
    assert code == 0, f"launcher exit code after {sig}: {code}\n{launcher.output()}"
    assert not list(launcher.tmp.glob("symsgd-classroom-*")), "the launcher's temporary template copy was left"
    print(f"{sig}: launcher, Voilà and 2 kernels gone {stop_s:.1f} s after the signal")


FAKE_VOILA = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a Voilà that does not stop on SIGTERM
kernel = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
with open(sys.argv[1], "w") as f:  # like a kernel: in a session of its own
    f.write(str(kernel.pid))
time.sleep(600)
"""
RUN_VOILA = """
import os, sys
from tools import classroom  # (run in the repository root)
sys.exit(classroom.run_voila([sys.executable, sys.argv[1], sys.argv[2]], dict(os.environ), grace_s=float(sys.argv[3])))
"""


@pytest.mark.parametrize("grace_s, signals", [(1.0, ["SIGTERM"]), (120.0, ["SIGINT", "SIGINT"])],
                         ids=["grace-period-over", "second-ctrl-c"])
def test_a_server_that_does_not_stop_is_killed_with_what_it_started(tmp_path, grace_s, signals):
    """run_voila kills Voilà and its kernels (in sessions of their own) when Voilà ignores the stop signal: after the
    grace period, or at once on a second Ctrl+C."""
    (tmp_path / "fake_voila.py").write_text(FAKE_VOILA, encoding="utf-8")
    pid_file = tmp_path / "kernel.pid"
    log = tmp_path / "run_voila.log"
    with open(log, "w") as out:
        runner = subprocess.Popen([sys.executable, "-c", RUN_VOILA, str(tmp_path / "fake_voila.py"),
                                   str(pid_file), str(grace_s)], stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True, cwd=REPO)
    tree = []
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.is_file() and pid_file.read_text()):
            assert runner.poll() is None, f"run_voila exited early: {log.read_text()}"
            assert time.monotonic() < deadline, f"the fake Voilà never started its kernel: {log.read_text()}"
            time.sleep(POLL_S)
        root = psutil.Process(runner.pid)
        tree = [root, *root.children(recursive=True)]
        assert len(tree) == 3, f"runner, fake Voilà, its kernel: {describe(tree)}"
        start = time.monotonic()
        for name in signals:
            os.kill(runner.pid, getattr(signal, name))
            time.sleep(0.5)  # the second Ctrl+C comes a moment after the first
        bound = min(grace_s, 10.0) + 15.0
        try:
            code = runner.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"run_voila still runs {bound:.0f} s after {signals}: {log.read_text()}") from None
        took = time.monotonic() - start
        left = [p for p in tree if is_running(p)]
        assert not left, f"left running after {signals}: {describe(left)}"
        assert code == 0, log.read_text()
        assert took < bound, took
    finally:
        for p in tree:
            with contextlib.suppress(psutil.Error):
                p.kill()
        with contextlib.suppress(ProcessLookupError):
            runner.kill()
        runner.wait(timeout=10)
