"""Machinery of the real-browser suite: servers, Chromium, page probes, latency records.

The tests in this folder open every notebook the way a reader does (JupyterLab) and the
way a class sees it (Voilà, see ``tools/classroom.py``), in headless Chromium driven by
Playwright. This module holds what both test files share:

* where things are (notebooks, artifacts) and how Chromium is launched;
* :class:`Server`: a JupyterLab or Voilà server on 127.0.0.1, a free port, its own
  process group, stopped (with its kernels) at the end;
* :data:`PROBE_JS`: a script injected into every page that reads plotly figures,
  controllers (``.symsgd-controller``, see ``symsgd_core/ui/base.py``) and times
  slider → figure updates from the real input event to the change of the plotly
  div's data;
* :class:`NotebookRun`: named steps with a per-notebook deadline, so a failure names
  the notebook, the step and the reason;
* :func:`exercise_controller`: moves a slider of a controller with the keyboard
  (pressing Run for re-simulating controllers) and measures the latency;
* latency records written per worker and gathered by ``conftest.py``.

Nothing here sleeps as a means of synchronisation: every wait is on a state (server
answers, kernel idle, figure present, data changed, page quiet) with a timeout.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from browser_report import ARTIFACTS, LATENCY_DIR, REPO  # noqa: F401 - re-exported for the tests
from js_files import script
from slow_cpu import renderer_pids

from symsgd_jupyter.handled_inputs import SHOW_HANDLED_ENV

#: The notebooks under test (override with SYMSGD_BROWSER_NOTEBOOKS=<dir> to try another folder).
NOTEBOOK_DIR = Path(os.environ.get("SYMSGD_BROWSER_NOTEBOOKS", REPO / "notebooks"))
#: Debian's chromium (override with SYMSGD_CHROMIUM=<path>).
CHROMIUM_PATH = os.environ.get("SYMSGD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]
#: Whole-notebook budget (open, run, check, move sliders, answer exercises, screenshot), seconds. The
#: slowest notebook (03 in JupyterLab) takes ~160 s on a 2-core machine running both modes at once; the
#: budget leaves room for a slower CI machine and still bounds a hung notebook.
NOTEBOOK_TIMEOUT_S = float(os.environ.get("SYMSGD_BROWSER_TIMEOUT", "480"))
#: Latency targets (median, browser, slider → figure), milliseconds.
TARGET_MS = {"analytic": 300.0, "on release": 800.0, "re-simulating": 1500.0}
#: Moves per controller: analytic sliders are cheap, re-simulations cost a Run each.
MOVES = {"analytic": 4, "on release": 4, "re-simulating": 4}
#: Longest wait for one move to change a figure, seconds.
MOVE_TIMEOUT_S = {"analytic": 8.0, "on release": 20.0, "re-simulating": 20.0}
#: After this many controllers failed to respond, the notebook's remaining ones are not exercised
#: (the cause is shared, e.g. frozen figures; this bounds the time a broken notebook costs).
MAX_FAILED_CONTROLLERS = 2
#: Page text that means a widget failed to render.
WIDGET_FAILURE_TEXTS = ("Error displaying widget", "Failed to load view class", "Failed to create view",
                        "Could not create a view", "Model not found")
VIEWPORT = {"width": 1400, "height": 1000}


#: This process's one Playwright: its sync API runs one instance per thread, and ``make test`` runs the browser suite
#: and the edition's test (tests/static_site/) in one pytest session, whose fixtures both launch Chromium from it.
_PLAYWRIGHT: list = []


def shared_playwright():
    """The process's Playwright (sync API), started on first use and stopped when the process exits."""
    if not _PLAYWRIGHT:
        from playwright.sync_api import sync_playwright

        _PLAYWRIGHT.append(sync_playwright().start())
        atexit.register(_stop_playwright)
    return _PLAYWRIGHT[0]


def _stop_playwright() -> None:
    with contextlib.suppress(Exception):  # at exit its driver may be gone already; it dies with this process
        _PLAYWRIGHT.pop().stop()


def ci_is_true() -> bool:
    """True on CI (CI=true), where a missing browser is a failure, not a skip."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


HOW_TO_ENABLE = (
    "the browser tests need Chromium (Debian's `chromium` package, found at /usr/bin/chromium or at "
    "$SYMSGD_CHROMIUM) and Python Playwright (in requirements-lock.txt). To enable them: "
    "`sudo apt-get install -y chromium`, then `make test`. On CI (CI=true) a missing browser fails the run."
)


def discover_notebooks() -> list[Path]:
    """Every notebook of the notebook folder, in name order (empty if none yet)."""
    if not NOTEBOOK_DIR.is_dir():
        return []
    return sorted(p for p in NOTEBOOK_DIR.glob("*.ipynb") if not p.name.startswith("."))


def notebook_params(notebooks: list[Path], marks=lambda nb: ()) -> list:
    """``notebooks`` as pytest params named by their stem, with ``marks(notebook)``. ``make test-browser`` hands the
    tests out one at a time to two workers (a notebook's JupyterLab pass and its edition page test form one
    pytest-xdist group: tests/browser/lesson_kernels.py), and each worker starts the servers its tests need."""
    return [pytest.param(nb, id=nb.stem, marks=marks(nb)) for nb in notebooks]


def copy_notebooks(dst: Path) -> Path:
    """Copy the notebook folder to ``dst`` (servers run on the copy: nothing writes into notebooks/)."""
    shutil.copytree(NOTEBOOK_DIR, dst, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
                    dirs_exist_ok=True)
    return dst


def notebook_has_math(path: Path) -> bool:
    """True when a markdown cell of the notebook contains $…$ or $$…$$ math."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            src = "".join(cell.get("source", []))
            if re.search(r"\$[^$\n]+\$", src) or "$$" in src:
                return True
    return False


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def is_local_url(url: str) -> bool:
    """True for URLs that stay on this machine (127.0.0.1, localhost, data:, blob:, about:)."""
    if url.startswith(("data:", "blob:", "about:", "chrome-error:", "chrome:")):
        return True
    m = re.match(r"^[a-z][a-z0-9+.-]*://(\[[^\]]*\]|[^/:?#]*)", url, re.IGNORECASE)
    host = (m.group(1) if m else "").lower()
    return host in {"127.0.0.1", "localhost", "[::1]"}


# --------------------------------------------------------------------------- servers


class Server:
    """A notebook server (JupyterLab or Voilà) in its own process group, on 127.0.0.1.

    Args:
        name: short name for messages and the log file (``lab``, ``voila``).
        argv: the command line.
        env: environment for the server (and its kernels).
        cwd: working directory.
        base_url: ``http://127.0.0.1:<port>``.
        ready_path: URL path that answers 200 once the server is up.
        token: auth token appended to URLs (None: no token).
    """

    def __init__(self, name: str, argv: list[str], env: dict, cwd: Path, base_url: str,
                 ready_path: str, token: str | None = None):
        self.name, self.argv, self.env, self.cwd = name, argv, env, cwd
        self.base_url, self.ready_path, self.token = base_url, ready_path, token
        self.log_path = ARTIFACTS / f"server-{name}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log"
        self.proc: subprocess.Popen | None = None

    def url(self, path: str) -> str:
        """Absolute URL of ``path`` on this server, with the token if any."""
        url = self.base_url + path
        if self.token:
            url += ("&" if "?" in url else "?") + "token=" + self.token
        return url

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def start(self, timeout_s: float = 120.0) -> Server:
        """Start the server and wait until ``ready_path`` answers; raise with the log tail if not."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self._log = log
        self.proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} server exited with code {self.proc.returncode} before it was ready;"
                                   f" log {self.log_path}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url(self.ready_path), timeout=5) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, OSError) as exc:
                last = exc
            time.sleep(0.25)  # polling interval while waiting for the server state, not a synchronisation
        self.stop()
        raise RuntimeError(f"{self.name} server not ready after {timeout_s:.0f} s ({last}); log {self.log_path}:\n"
                           f"{self.log_tail()}")

    def api(self, method: str, path: str) -> object:
        """Call the server's REST API (JSON) and return the decoded answer (None if empty)."""
        req = urllib.request.Request(self.url(path), method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self, keep: tuple[str, ...] = ()) -> None:
        """Shut down every running kernel but those whose ids are in ``keep`` (frees the CPU between notebooks)."""
        try:
            kernels = self.api("GET", "/api/kernels") or []
        except (urllib.error.URLError, OSError, ValueError):
            return
        for k in (k for k in kernels if k["id"] not in keep):
            with contextlib.suppress(urllib.error.URLError, OSError, ValueError):
                self.api("DELETE", f"/api/kernels/{k['id']}")

    def stop(self) -> None:
        """Stop the server and everything it started (its own process group)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.shutdown_kernels()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._log.close()
        self.proc = None


#: Test servers' kernels talk over Unix sockets, not TCP ports: jupyter_client picks a free port, closes it, and the
#: kernel binds it a moment later, so two workers starting kernels at once can be handed the same port and a kernel
#: dies at start ("Address already in use"; nbval's and the static edition's kernels have the same remedy). The
#: sockets sit next to the connection file (``<runtime or temp dir>/kernel-<id>-ipc-<n>``), so those folders are
#: short ones of their own (:func:`server_env`): a Unix socket path must stay under 107 bytes. The classroom itself
#: keeps TCP: readers' machines include Windows, and one reader starts one kernel at a time.
KERNELS_ON_UNIX_SOCKETS = "--KernelManager.transport=ipc"


def cold_kernel_cache() -> dict:
    """Environment for a server whose kernels start with an empty compiled-kernel cache (a fresh ``NUMBA_CACHE_DIR``),
    as on a fresh install before ``python -m symsgd_core warm``: each numba kernel compiles on its first call, inside
    the page's kernel, as a reader's first Run did (a classroom page once lost widgets that way)."""
    return {"NUMBA_CACHE_DIR": _short_folder()}


def check_kernels_compiled_cold(server) -> None:
    """The cold cache of ``server`` (:func:`cold_kernel_cache`) now holds compiled kernels: the page ran from cold."""
    folder = server.env.get("NUMBA_CACHE_DIR")
    assert folder, "this server was not started with a cold kernel cache"
    compiled = sorted(p.name for p in Path(folder).rglob("*.nbi"))
    assert compiled, f"no kernel was compiled into the cold cache {folder}: the page did not start cold"


def check_kernel_on_unix_sockets(connection_file) -> None:
    """The kernel of ``connection_file`` was started with :data:`KERNELS_ON_UNIX_SOCKETS` (its sockets in a short
    private folder)."""
    info = json.loads(Path(connection_file).read_text(encoding="utf-8"))
    assert info.get("transport") == "ipc", f"kernel on {info.get('transport')} at {info.get('ip')}, not Unix sockets"
    assert len(f"{info['ip']}-{info['shell_port']}") < 107, f"socket path too long: {info['ip']}"


def _short_folder() -> str:
    folder = tempfile.mkdtemp(prefix="sj-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def server_env(root: Path) -> dict:
    """Environment for a test server: its own runtime/data/IPython/temp dirs, nothing written to $HOME. The runtime
    and temp dirs (where Jupyter and Voilà write their kernels' connection files and sockets) are short folders of
    their own, for :data:`KERNELS_ON_UNIX_SOCKETS`."""
    env = dict(os.environ)
    for var, sub in (("JUPYTER_DATA_DIR", "data"), ("IPYTHONDIR", "ipython")):
        (root / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(root / sub)
    env["JUPYTER_RUNTIME_DIR"] = _short_folder()
    env["TMPDIR"] = _short_folder()  # Voilà keeps its kernels' connection files in a temp dir
    env["PYTHONUNBUFFERED"] = "1"
    env[SHOW_HANDLED_ENV] = "1"  # controllers show their handled-input count (symsgd-handled-<n>) for the waits
    return env


def _serve(root: Path, source: Path | None) -> Path:
    """The folder a test server runs on: a copy of the notebook folder, or of the one notebook ``source``."""
    if source is None:
        return copy_notebooks(root / "notebooks")
    (root / "notebooks").mkdir()
    shutil.copyfile(source, root / "notebooks" / source.name)
    return root / "notebooks"


def _root_flag() -> list[str]:
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


#: JupyterLab user settings for the test server: no autosave, every cell attached to the DOM (so the screenshot and
#: the probes see the whole notebook). No news/update setting here: the environment's override from
#: ``python -m symsgd_jupyter --enable`` must switch the news pop-up off by itself (test_jupyterlab checks it).
LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}
#: The base URL of the second JupyterLab server (as under JupyterHub or Binder).
LAB_BASE_PATH = "/user/symsgd-test/"


def start_lab(tmp_path_factory, base_path: str = "/", *, source: Path | None = None, name: str | None = None,
              settings: dict | None = None, env: dict | None = None) -> Server:
    """JupyterLab on 127.0.0.1, a free port and a token, serving a temporary copy of notebooks/ (or of the notebook
    ``source`` alone) under ``base_path`` (``/``, or a prefix such as JupyterHub's ``/user/NAME/``), with
    :data:`LAB_SETTINGS` and ``settings`` as user settings; ``name`` names its log; ``env`` is added to the server's
    environment (its kernels inherit it)."""
    root = tmp_path_factory.mktemp("lab")
    nb_dir = _serve(root, source)
    for rel, value in {**LAB_SETTINGS, **(settings or {})}.items():
        (root / "settings" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "settings" / rel).write_text(json.dumps(value), encoding="utf-8")
    port, token = free_port(), secrets.token_hex(24)
    argv = [sys.executable, "-m", "jupyterlab", "--no-browser", *_root_flag(),
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--ServerApp.base_url={base_path}",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={nb_dir}",
            f"--LabApp.user_settings_dir={root / 'settings'}", f"--LabApp.workspaces_dir={root / 'workspaces'}",
            "--LabApp.extension_manager=readonly", "--ServerApp.terminals_enabled=False", KERNELS_ON_UNIX_SOCKETS]
    name = name or ("lab" if base_path == "/" else "lab-prefixed")
    server = Server(name, argv, {**server_env(root), **(env or {})}, nb_dir,
                    f"http://127.0.0.1:{port}{base_path.rstrip('/')}",
                    "/api/status", token)
    return server.start()


def start_voila(classroom, tmp_path_factory, host: str, *, source: Path | None = None,
                name: str | None = None, env: dict | None = None) -> Server:
    """Voilà started exactly as `make classroom` does, on a temporary copy of notebooks/ (or of the notebook
    ``source`` alone); its pages are opened at ``http://<host>:<port>/`` (the server listens on 127.0.0.1;
    ``localhost`` reaches it too); ``name`` names its log; ``env`` is added to the server's environment."""
    root = tmp_path_factory.mktemp("voila")
    nb_dir = _serve(root, source)
    classroom.check_template()
    port = free_port()
    argv = [*classroom.voila_argv(nb_dir, port, open_browser=False, python=sys.executable), KERNELS_ON_UNIX_SOCKETS]
    env = {**classroom.voila_env(classroom.prepare_template_root(root / "template"), server_env(root)), **(env or {})}
    name = name or ("voila" if host == "127.0.0.1" else f"voila-{host}")
    return Server(name, argv, env, nb_dir, f"http://{host}:{port}", "/").start()


# --------------------------------------------------------------------------- steps & deadline


#: Seconds past a run's budget after which its watchdog kills the page (see :func:`kill_page_renderers`).
WATCHDOG_GRACE_S = 300.0
#: Watchdogs of the runs of the current test; the suite's autouse fixture cancels them when the test ends.
WATCHDOGS: list[threading.Timer] = []


def kill_page_renderers(root_pid: int | None = None) -> list[int]:
    """Kill the Chromium renderer processes under ``root_pid`` (default: this process: the browser this test worker
    launched, through Playwright's driver). A page stuck in its own JavaScript never answers ``page.evaluate``, which
    has no timeout; with its renderer gone the call raises ("Target crashed") and the step fails with its name.
    Returns the killed pids."""
    killed = []
    for pid in renderer_pids(root_pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


class NotebookRun:
    """Named steps of one notebook in one mode, under one deadline.

    ``with run.step("run all cells"): ...`` turns any exception (a Playwright timeout, a
    failed assertion) into a test failure that names the mode, the notebook, the step and
    the time spent, and saves a screenshot of the page as it was.
    """

    def __init__(self, mode: str, notebook: str, page=None, timeout_s: float = NOTEBOOK_TIMEOUT_S,
                 server: Server | None = None):
        self.mode, self.notebook, self.page = mode, notebook, page
        self.t0 = time.monotonic()
        self.timeout_s = timeout_s
        self.current = "start"
        #: extra state shown with a failure of the current step (set by the test)
        self.detail = ""
        self.failures: list[str] = []
        #: (step name, seconds) of every step run, in order (for the report)
        self.step_seconds: list[tuple[str, float]] = []
        #: axe-core findings by audit ("page", "dark theme"), for the report (see accessibility.py)
        self.accessibility: dict[str, list[dict]] = {}
        #: the :class:`Server` the page talks to: a failure shows the end of its log (the server's and its kernels'
        #: output), so a kernel that died or a server error is named in the failure itself
        self.server = server
        #: kills the page if the run outlives its budget by WATCHDOG_GRACE_S (a call with no timeout of its own,
        #: ``page.evaluate``, would otherwise wait for a stuck page for ever): the step then fails and says so
        self.watchdog = threading.Timer(timeout_s + WATCHDOG_GRACE_S, self._watchdog_fired)
        self.watchdog.daemon = True
        self.watchdog.start()
        WATCHDOGS.append(self.watchdog)

    def _watchdog_fired(self) -> None:
        killed = kill_page_renderers()
        self.detail += (f" [watchdog: the page was still busy {self.timeout_s + WATCHDOG_GRACE_S:.0f} s after the "
                        f"start, {WATCHDOG_GRACE_S:.0f} s past its budget; killed its renderer(s) {killed}]")

    def remaining_s(self) -> float:
        return self.timeout_s - (time.monotonic() - self.t0)

    def ms(self, cap_s: float | None = None) -> float:
        """Milliseconds left for the next wait (at least 1), optionally capped at ``cap_s`` seconds."""
        left = self.remaining_s()
        if left <= 0:
            raise TimeoutError(f"notebook budget of {self.timeout_s:.0f} s used up (SYMSGD_BROWSER_TIMEOUT)")
        if cap_s is not None:
            left = min(left, cap_s)
        return max(1.0, left * 1000.0)

    def screenshot_path(self, suffix: str = "") -> Path:
        stem = Path(self.notebook).stem
        return ARTIFACTS / f"{self.mode}-{stem}{suffix}.png"

    @contextlib.contextmanager
    def step(self, name: str, fatal: bool = True):
        """Run a named step. A fatal step stops the test at its first failure; a non-fatal one
        records the failure and lets the later steps run (all are reported by :meth:`finish`)."""
        self.current = name
        self.detail = ""
        t = time.monotonic()
        message = None
        if self.remaining_s() <= 0:  # the step cannot even start: stop here
            self.failures.append(f"[{self.mode}] {self.notebook}: step '{name}' not started: the notebook budget of "
                                 f"{self.timeout_s:.0f} s is used up (SYMSGD_BROWSER_TIMEOUT)")
            self._fail()
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - converted into a clear test failure below
            shot = ""
            if self.page is not None:
                with contextlib.suppress(Exception):
                    path = self.screenshot_path("-FAILED")
                    self.page.screenshot(path=str(path), full_page=True, timeout=10_000)
                    shot = f"\n  screenshot: {path}"
            text = str(exc).strip()
            if len(text) > 3000:
                text = text[:3000] + " …"
            message = (f"[{self.mode}] {self.notebook}: step '{name}' failed after {time.monotonic() - t:.1f} s "
                       f"(notebook total {time.monotonic() - self.t0:.1f} s):\n  {type(exc).__name__}: {text}"
                       + (f"\n  state: {self.detail}" if self.detail else "") + shot)
        self.step_seconds.append((name, round(time.monotonic() - t, 2)))
        if message is not None:
            if not fatal:
                self.failures.append(message)
                return
            self.failures.append(message)
            self._fail()

    def _fail(self) -> None:
        text = "\n\n".join(self.failures)
        if self.server is not None:
            text += f"\n\n--- {self.server.name} server's log ({self.server.log_path}), last lines:\n"
            text += self.server.log_tail(30)
        try:
            pytest.fail(text, pytrace=False)
        except pytest.fail.Exception as failure:
            raise failure from None

    def finish(self) -> None:
        """Fail the test if a non-fatal step failed."""
        if self.failures:
            self._fail()


# --------------------------------------------------------------------------- page probes

#: Injected into every page (``context.add_init_script``): read figures and controllers,
#: time slider → figure updates. Everything lives under ``window.__symsgd``.
#: Controls a page's figures offer that would reach the internet: mode-bar buttons that share or upload a chart
#: (plotly.js 4's "Share chart…", ``sendChartToCloud``; Chart Studio) and any link inside a mode bar (plotly's logo).
#: Returns their titles; empty when the shared config (``symsgd_core.ui.style.PLOTLY_CONFIG``) took effect.
OFF_MACHINE_CONTROLS_JS = script("off_machine_controls")

PROBE_JS = script("probe")


def describe_controllers(page) -> list[dict]:
    return page.evaluate("() => window.__symsgd.describe()")


def figure_report(page) -> list[dict]:
    return page.evaluate("() => window.__symsgd.figureReport()")


def exercise_all_controllers(page, run: NotebookRun, kernel_idle, moves: int | None = None,
                             throttle: float = 1.0) -> list[ControllerLatency]:
    """Exercise every controller of the page (one non-fatal step each; ``moves`` and ``throttle`` as in
    :func:`exercise_controller`); stop after :data:`MAX_FAILED_CONTROLLERS` failures and say how many were left out."""
    rows: list[ControllerLatency] = []
    ctrls = describe_controllers(page)
    failed = 0
    for c in ctrls:
        if failed >= MAX_FAILED_CONTROLLERS:
            left = len(ctrls) - c["index"]
            with run.step(f"move sliders of the remaining {left} controllers", fatal=False):
                raise AssertionError(f"not tried: {failed} controllers already failed to respond")
            break
        before = len(run.failures)
        with run.step(f"move a slider of controller #{c['index']} and see its figure change", fatal=False):
            rows += exercise_controller(page, c["index"], run, kernel_idle=kernel_idle, moves=moves, throttle=throttle)
        failed += len(run.failures) > before
    return rows


def output_errors(page, scope: str = "body") -> list[dict]:
    """Outputs showing an error or traceback: ``[{cell, text}]`` (cell index in the page)."""
    return page.evaluate("(sel) => window.__symsgd.outputErrors(sel)", scope)


def format_output_errors(errs: list[dict]) -> str:
    return "\n".join(f"cell {e['cell']}: {e['text']}" for e in errs)


def widget_failures(page) -> list[str]:
    """Widget-rendering failure texts visible in the page."""
    text = page.evaluate("() => document.body.innerText")
    return [t for t in WIDGET_FAILURE_TEXTS if t in text]


def wait_widgets_rendered(page, run: NotebookRun, expected_views: int = 0, console: ConsoleLog | None = None) -> None:
    """Wait until every widget output is drawn (at least ``expected_views`` root views, none
    pending, every controller's figures plotted), or a widget failure text appears; then wait
    (≤ 20 s) for every figure to hold data. Failures are reported by the checks that follow."""
    run.detail = "views: " + json.dumps(page.evaluate(
        "() => ({rendered: window.__symsgd.renderedViews(), pending: window.__symsgd.pendingViews()})"))
    try:
        page.wait_for_function(
            "([n, texts]) => { const S = window.__symsgd; if (S.failureTexts(texts).length) return true;"
            " return S.renderedViews() >= n && S.pendingViews() === 0; }",
            arg=[expected_views, list(WIDGET_FAILURE_TEXTS)], timeout=run.ms(90), polling=200)
    except Exception:
        run.detail += "; not drawn: " + json.dumps(page.evaluate("() => window.__symsgd.pendingDetails()"))[:1500]
        if console is not None:
            run.detail += "; console errors: " + console.summary()
        raise
    if not widget_failures(page):
        with contextlib.suppress(Exception):  # check_figures names the figure without data
            page.wait_for_function("() => window.__symsgd.figures().every(window.__symsgd.hasData)",
                                   timeout=run.ms(20), polling=200)


#: The classroom page's progress, kept by its template (``tools/voila/templates/symsgd/static/progressive.js``): Voilà
#: sends the page before any cell runs, then each cell's outputs as the cell finishes (progressive rendering).
_CELLS_STATE_JS = "() => document.body ? (document.body.dataset.symsgdCells || '') : ''"


def wait_classroom_cells_ran(page, run: NotebookRun, timeout_s: float | None = None) -> int:
    """Wait until a classroom page shows its notebook (no spinner) and holds every cell's outputs; the page arrives
    before the cells run and each cell's outputs follow when the cell has run, so the page's ``load`` says nothing
    about the cells. ``timeout_s``: the longest wait for the cells (default: the rest of ``run``'s budget).

    Returns:
        The number of widget outputs the cells sent (each must become a drawn view).

    Raises:
        AssertionError: Voilà reported that it could not run the cells.
    """
    page.wait_for_selector("#rendered_cells", state="visible", timeout=run.ms())
    page.wait_for_function(f"() => ['done', 'error'].includes(({_CELLS_STATE_JS})())", timeout=run.ms(timeout_s),
                           polling=250)
    progress = page.evaluate("() => window.__symsgdClassroom")
    run.detail = f"classroom page progress: {progress}"
    assert page.evaluate(_CELLS_STATE_JS) == "done", f"Voilà could not run the cells: {progress}"
    return int(progress["widgetViews"])


def full_screenshot(page, path: Path, scroller: str, run: NotebookRun, max_height: int = 16000) -> None:
    """Screenshot the whole document although it scrolls inside ``scroller`` (JupyterLab's notebook
    panel, Voilà's ``#rendered_cells``): grow the viewport by the hidden height, scroll to the top,
    wait for the figures to be laid out, shoot, restore the viewport."""
    hidden = page.evaluate("(sel) => { const n = document.querySelector(sel);"
                           " return n ? n.scrollHeight - n.clientHeight : 0; }", scroller)
    page.set_viewport_size({"width": VIEWPORT["width"],
                            "height": int(min(VIEWPORT["height"] + max(hidden, 0) + 40, max_height))})
    page.evaluate("(sel) => { const n = document.querySelector(sel); if (n) n.scrollTop = 0; }", scroller)
    page.wait_for_function("() => window.__symsgd.figures().every(d => d.getBoundingClientRect().height > 0)",
                           timeout=run.ms(20))
    page.screenshot(path=str(path), timeout=run.ms(30))
    page.set_viewport_size(VIEWPORT)


def check_figures(page) -> None:
    """Every plotly figure rendered with data; every controller has a rendered figure."""
    figs = figure_report(page)
    ctrls = describe_controllers(page)
    problems = [f"figure #{f['index']} has no data (traces: {f['traces']})" for f in figs if not f["has_data"]]
    problems += [f"figure #{f['index']} has zero size ({f['width']:.0f}x{f['height']:.0f} px)"
                 for f in figs if f["width"] < 1 or f["height"] < 1]
    problems += [f"controller #{c['index']} shows no figure" for c in ctrls if c["figures"] == 0]
    if problems:
        where = [f"figure #{f['index']}: {f['traces']} traces, {f['width']:.0f}x{f['height']:.0f} px"
                 + (" (in a controller)" if f["in_controller"] else "") for f in figs]
        ctl = [f"controller #{c['index']}: {c['figures_with_data']}/{c['figures']} figures with data, "
               f"status {str(c['status'])[:100]!r}" for c in ctrls]
        raise AssertionError("; ".join(problems) + "\n  " + "\n  ".join(where + ctl))


# --------------------------------------------------------------------------- console


@dataclass
class ConsoleLog:
    """Browser console errors and uncaught page errors of one page."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def attach(self, page) -> ConsoleLog:
        def on_console(msg):
            if msg.type == "error":
                loc = msg.location or {}
                self.errors.append(f"console.error: {msg.text} (at {loc.get('url', '?')}:{loc.get('lineNumber', '?')})")
            elif msg.type == "warning":
                self.warnings.append(msg.text)

        page.on("console", on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))
        return self

    def summary(self, limit: int = 1500) -> str:
        """The errors joined by "; " (the first ``limit`` characters), or "none": for a failure's details."""
        return "; ".join(self.errors)[:limit] or "none"

    def widget_errors(self, ignore: tuple[str, ...] = ()) -> list[str]:
        """Errors, minus those matching one of the ``ignore`` regexes (documented where passed)."""
        return [e for e in self.errors if not any(re.search(p, e) for p in ignore)]


#: A widget model missed anywidget's 2 s start (a slow or busy page misses it, e.g. while plotly's ~5 MB widget code
#: compiles): anywidget rejects the model's start, which the page reports as an uncaught error, and drops every
#: update sent to the model. The page recovers from it, so these errors are not counted as widget failures: the
#: figures' loader (symsgd_jupyter/plotly_loading.py) routes their messages to ipywidgets and asks the kernel for
#: their state again (test_voila's test_a_figure_that_missed_anywidgets_start_still_draws_and_updates fails
#: without it), and the accessible-names helper sends its whole state when it opens, never an update
#: (tests/ui/test_ui_style.py). What a lost update would do to a reader, a figure that does not draw or does not follow
#: its slider, or a widget left without its class, is asserted by the same notebook test. Seen at 6× CPU with
#: four slow-laptop pages side by side on two cores, a few per notebook in some runs and none in others.
RECOVERED_START_MISSES = (r"\[anywidget\] Failed to initialize model",)


def explain(errors: list[str]) -> str:
    """The console errors, one line each (cut at 500 characters)."""
    return "\n".join("  - " + e[:500] for e in errors)


# --------------------------------------------------------------------------- sliders & latency


@dataclass
class MoveResult:
    latency_ms: float | None
    changed: list[int]
    busy_seen: bool
    statuses: list[str]
    timeout: bool


@dataclass
class ControllerLatency:
    """Slider → figure latency of one controller in one notebook and mode."""

    mode: str
    notebook: str
    controller: int
    kind: str  # "analytic", "on release" (re-simulates when the slider is released) or "re-simulating"
    slider: str
    moves: int
    latencies_ms: list[float]
    median_ms: float | None
    p95_ms: float | None
    target_ms: float
    met: bool | None
    busy_indicator: bool | None
    reversible: bool | None
    note: str = ""
    throttle: float = 1.0  # the page's CPU slowdown (the slow-laptop mode runs at 6×)
    #: status texts the page showed while the controller worked (e.g. "Computing…", "First look (…)")
    statuses: list[str] = field(default_factory=list)


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``values`` by linear interpolation (numpy's default)."""
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


#: After the kernel has handled an input, a controller's figures and status must stay unchanged this long (ms,
#: at 1× CPU) before the next input: plotly draws asynchronously once the messages have arrived.
QUIET_MS = 200


def _handled(page, ci: int) -> int:
    n = page.evaluate("ci => window.__symsgd.handledOf(ci)", ci)
    if n is None:
        raise AssertionError(f"controller #{ci} has no symsgd-handled-<n> class (symsgd_jupyter/handled_inputs.py): "
                             "the page cannot tell when the kernel has handled an input")
    return n


def _wait_handled(page, ci: int, after: int, run: NotebookRun, timeout_s: float, what: str,
                  throttle: float = 1.0) -> None:
    """Wait until the kernel has handled the input (controller ``ci`` counts more than ``after`` handled
    inputs), then until the controller's figures and status are quiet (:data:`QUIET_MS`, scaled by ``throttle``)."""
    try:
        page.wait_for_function("([ci, n]) => (window.__symsgd.handledOf(ci) ?? -1) > n", arg=[ci, after],
                               timeout=run.ms(timeout_s), polling=50)
    except Exception as exc:  # noqa: BLE001 - re-raised with what was waited for
        raise AssertionError(f"controller #{ci}: the kernel did not finish handling {what} within {timeout_s:.0f} s "
                             f"(handled inputs still {page.evaluate('ci => window.__symsgd.handledOf(ci)', ci)})"
                             ) from exc
    quiet_ms = QUIET_MS * max(1.0, throttle)
    res = page.evaluate("([ci, q, m]) => window.__symsgd.quiet(ci, q, m)", [ci, quiet_ms, min(run.ms(30), 30000)])
    if not res["quiet"]:
        raise AssertionError(f"controller #{ci} kept changing for {res['waited']:.0f} ms after the kernel had "
                             f"handled {what}")


def _watch_and_act(page, ci: int, act, timeout_s: float, what: str, run: NotebookRun,
                   throttle: float = 1.0) -> MoveResult:
    """Watch controller ``ci``'s figures, perform ``act`` (a key press, a click), wait until the kernel has handled
    it and the figures are quiet, and report whether (and how soon after the input) a figure changed."""
    before = _handled(page, ci)
    page.evaluate("([ci, t]) => window.__symsgd.arm(ci, t)", [ci, timeout_s * 1000.0])
    act()
    try:
        _wait_handled(page, ci, before, run, timeout_s, what, throttle)
    finally:
        page.evaluate("() => window.__symsgd.stopWatch()")
    rec = page.evaluate("() => window.__symsgd.pending")
    if rec["early"]:
        raise AssertionError(f"controller #{ci}: a figure changed before the input event reached the page "
                             "(it was still updating from an earlier input)")
    latency = None if not rec["changed"] or rec["t0"] is None else rec["t1"] - rec["t0"]
    statuses = [s for _, s in rec["statuses"]]
    busy = any(re.search(r"comput|running|working|busy|…|\.\.\.", s, re.IGNORECASE) for s in statuses)
    return MoveResult(latency, rec["changed"], busy, statuses, bool(rec["timeout"]))


def _settle(page, ci: int, run: NotebookRun, kernel_idle=None) -> None:
    """Before the first input: wait until controller ``ci`` is done with the notebook's own run (figures and
    status unchanged for 300 ms, the kernel idle if ``kernel_idle`` is given, and quiet again)."""
    for i in range(2 if kernel_idle is not None else 1):
        res = page.evaluate("([ci, q, m]) => window.__symsgd.quiet(ci, q, m)", [ci, 300, min(run.ms(30), 30000)])
        if not res["quiet"]:
            raise AssertionError(f"controller #{ci} kept changing for {res['waited']:.0f} ms without input")
        if i == 0 and kernel_idle is not None:
            kernel_idle()


def _first_difference(before: list[str], after: list[str]) -> str:
    """Where two lists of figure-data JSON first differ (for a failure message)."""
    if len(before) != len(after):
        return f"{len(before)} figures before, {len(after)} after"
    for i, (a, b) in enumerate(zip(before, after)):
        if a != b:
            at = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return f"figure {i} at character {at}: …{a[max(0, at - 80):at + 80]}… became …{b[max(0, at - 80):at + 80]}…"
    return "no difference"


def _slider_state(page, ci: int, si: int) -> dict:
    return page.evaluate("([ci, si]) => window.__symsgd.sliderOf(ci, si)", [ci, si])


#: Longest wait (s) for what the page does alone, without the kernel (a key press moving a slider, a click, a
#: scroll), at 1× CPU; a page slowed by ``throttle`` gets ``throttle`` times as long.
PAGE_ACTION_TIMEOUT_S = 10.0


def _wait_slider_moved(page, ci: int, si: int, before: dict, key: str, run: NotebookRun,
                       timeout_s: float = PAGE_ACTION_TIMEOUT_S) -> None:
    """Wait (at most ``timeout_s``) until the key press has moved slider ``si`` of controller ``ci`` in the page
    (its value or readout differs from ``before``)."""
    try:
        page.wait_for_function("([ci, si, b]) => { const s = window.__symsgd.sliderOf(ci, si);"
                               " return s.value !== b.value || s.readout !== b.readout; }",
                               arg=[ci, si, before], timeout=run.ms(timeout_s))
    except Exception as exc:  # noqa: BLE001 - re-raised with the slider's state
        raise AssertionError(f"controller #{ci}: {key} on slider '{before['label']}' did not move it "
                             f"(before {before}, after {_slider_state(page, ci, si)})") from exc


def _row(run: NotebookRun, ci: int, kind: str, slider: str, latencies: list[float], busy, reversible,
         note: str = "", throttle: float = 1.0) -> ControllerLatency:
    """One latency row; the targets apply at 1× CPU only (``met`` is None for a throttled page)."""
    med = statistics.median(latencies) if latencies else None
    return ControllerLatency(
        mode=run.mode, notebook=run.notebook, controller=ci, kind=kind, slider=slider, moves=len(latencies),
        latencies_ms=[round(x, 1) for x in latencies], median_ms=None if med is None else round(med, 1),
        p95_ms=round(percentile(latencies, 0.95), 1) if latencies else None, target_ms=TARGET_MS[kind],
        met=None if med is None or throttle > 1 else med <= TARGET_MS[kind], busy_indicator=busy,
        reversible=reversible, note=note, throttle=throttle)


#: Sliders tried per controller before concluding that none changes a figure.
MAX_SLIDERS_TRIED = 2


def exercise_controller(page, ci: int, run: NotebookRun, kernel_idle=None, moves: int | None = None,
                        throttle: float = 1.0) -> list[ControllerLatency]:
    """Move a slider of controller ``ci`` with the keyboard and time each figure update.

    * Analytic controllers (no Run button): the slider itself updates the figure; latency is
      from the key press to the change of a figure's data. A figure that re-simulates when a slider is
      released (``symsgd-auto-run``, kind "on release") is moved the same way; its latency includes the
      kernel's debounce and the Run.
    * Re-simulating controllers (Run button): the slider is moved (its value checked in the
      page), then Run is clicked; latency is from the click to the data change, and the status
      must show a busy message ("Computing…") meanwhile. If the slider also updates the figure
      live (analytic curves + simulated histograms), that latency is reported as well.

    Every wait is on a state: the slider's value in the page, the controller's count of inputs
    the kernel has handled (``symsgd-handled-<n>``, see ``symsgd_jupyter/handled_inputs.py``), then its
    figures quiet. Sliders are tried in order until one changes a figure; moves alternate
    direction so the controller ends where it started.

    Args:
        moves: moves per slider (default :data:`MOVES` of the controller's kind; the slow-laptop mode makes one).
        throttle: the page's CPU slowdown (scales the waits).

    Returns:
        One row per behaviour seen (analytic, re-simulating), for the latency report.

    Raises:
        AssertionError: no slider changes any figure, a move stopped changing the figure, a
            figure changed without input, or no busy indicator was seen while re-simulating.
    """
    info = describe_controllers(page)[ci]
    has_run = info["run_button"]
    kind = "re-simulating" if has_run else ("on release" if info.get("auto_run") else "analytic")
    if not info["sliders"]:
        return [_row(run, ci, kind, "-", [], None, None, note="no slider", throttle=throttle)]
    root = page.locator(".symsgd-controller").nth(ci)
    handles = root.locator(".widget-slider .noUi-handle, .widget-hslider .noUi-handle")
    run_button = root.locator("button").filter(has_text=re.compile(r"\brun\b", re.IGNORECASE)).first
    n_moves = MOVES[kind] if moves is None else moves
    timeout = {k: v * max(1.0, throttle) for k, v in MOVE_TIMEOUT_S.items()}
    page_action_s = PAGE_ACTION_TIMEOUT_S * max(1.0, throttle)
    tried = []
    for si, slider in enumerate(info["sliders"][:MAX_SLIDERS_TRIED]):
        label = slider["label"] or f"#{si}"
        handle = handles.nth(si)
        handle.scroll_into_view_if_needed(timeout=run.ms(page_action_s))
        at_max = slider["value"] is not None and slider["max"] is not None and slider["value"] >= slider["max"]
        first, second = ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft")
        _settle(page, ci, run, kernel_idle)  # nothing still drawing from the notebook's own run
        back = None  # the figures after the first there-and-back: later returns to that value must match them
        live: bool | None = None if has_run else True  # does the slider itself change a figure?
        live_ms, run_ms, busy_flags, reversible, run_statuses = [], [], [], None, []
        for k in range(n_moves):
            key = first if k % 2 == 0 else second
            before = _slider_state(page, ci, si)

            def press(key=key, handle=handle, before=before, si=si):
                handle.press(key)
                _wait_slider_moved(page, ci, si, before, key, run, page_action_s)

            res = _watch_and_act(page, ci, press, timeout["re-simulating" if has_run else kind],
                                 f"the {key} press on slider '{label}'", run, throttle)
            if res.latency_ms is not None:
                if live is False:
                    raise AssertionError(f"controller #{ci}, slider '{label}': move {k + 1} ({key}) changed a figure "
                                         "although earlier moves of this slider did not (only Run did)")
                live = True
                live_ms.append(res.latency_ms)
            elif live is None:
                live = False  # the slider waits for Run
            elif k == 0 and not has_run:
                break  # this slider does not drive a figure: try the next one
            elif live:
                raise AssertionError(
                    f"controller #{ci}, slider '{label}': move {k + 1} ({key}) did not change any figure "
                    f"(earlier moves did); status texts seen: {res.statuses}")
            if has_run:
                res = _watch_and_act(page, ci, lambda: run_button.click(timeout=run.ms(page_action_s)),
                                     timeout["re-simulating"], f"Run after move {k + 1} of slider '{label}'", run,
                                     throttle)
                if res.latency_ms is None:
                    if k == 0 and not live_ms:
                        break  # neither the slider nor Run changed a figure: try the next slider
                    raise AssertionError(
                        f"controller #{ci}, slider '{label}': Run after move {k + 1} ({key}) did not change any "
                        f"figure; status texts seen: {res.statuses}")
                run_ms.append(res.latency_ms)
                busy_flags.append(res.busy_seen)
                run_statuses += [t for t in res.statuses if t not in run_statuses]
            if k % 2 == 1:  # back at the starting value: same seed, same settings, so the same figure
                now = page.evaluate("ci => window.__symsgd.dataJsonOf(ci)", ci)
                if back is None:
                    back = now
                    continue
                reversible = (reversible is not False) and now == back
                if not reversible:
                    raise AssertionError(f"controller #{ci}, slider '{label}': back at the same value after move "
                                         f"{k + 1}, the figure's data differs from the last time there: "
                                         + _first_difference(back, now))
        if not live_ms and not run_ms:
            tried.append(label)
            continue
        rows = []
        if live_ms:
            rows.append(_row(run, ci, "analytic" if has_run else kind, label, live_ms, None, reversible,
                             note="slider updates live; Run re-simulates" if has_run else "", throttle=throttle))
        if run_ms:
            busy = all(busy_flags)
            if not busy:
                raise AssertionError(
                    f"controller #{ci}, slider '{label}': no busy indicator (status saying Computing…) seen while "
                    f"it re-simulated; per run: {busy_flags}")
            row = _row(run, ci, "re-simulating", label, run_ms, busy, reversible, throttle=throttle)
            row.statuses = run_statuses
            rows.append(row)
        return rows
    raise AssertionError(f"controller #{ci} ({kind}): no slider changed any figure (tried {tried}"
                         f"{', then Run' if has_run else ''}); a reader moving them sees nothing happen")


# ------------------------------------------------------------------------------------------------
# "Check yourself" panels (symsgd_core.lesson.exercise_panel): answered through the page, as a student does
# ------------------------------------------------------------------------------------------------
#: Longest wait for the kernel's verdict after Check / Enter, seconds.
EXERCISE_TIMEOUT_S = 30.0


def notebook_has_exercise_panel(path: Path) -> bool:
    """True when a code cell of the notebook builds an ``ExercisePanel``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return any(cell.get("cell_type") == "code" and "ExercisePanel(" in "".join(cell.get("source", []))
               for cell in nb.get("cells", []))


def _exercises_by_question() -> dict[str, object]:
    """Every notebook's exercises, keyed by the question text the panel shows."""
    from symsgd_core import balance, lifting, rank_jumps, stationary
    from symsgd_core.sde_noise import exercises as sde_exercises  # Notebook 05's

    return {_words(ex.question): ex for mod in (balance, lifting, rank_jumps, stationary, sde_exercises)
            for ex in mod.EXERCISES.values()}


def _words(text: str) -> str:
    return " ".join(text.split())


def _wait_verdict(box, status: str, run: NotebookRun, what: str) -> None:
    verdict = box.locator(f".symsgd-feedback-{status}")
    try:
        verdict.wait_for(state="visible", timeout=run.ms(EXERCISE_TIMEOUT_S))
    except Exception as exc:
        shown = box.locator(".symsgd-feedback").all_inner_texts()
        raise AssertionError(f"{what}: expected a '{status}' verdict within {EXERCISE_TIMEOUT_S:.0f} s; "
                             f"the box shows {shown or 'nothing'}") from exc


def _wrong_answer(ex) -> str:
    """A readable but wrong answer to the typed exercise ``ex`` (its first typical mistake, else far off)."""
    if ex.kind == "number":
        for value, _why in ex.mistakes:
            if not ex.check(value).correct:
                return repr(float(value))
        return repr(float(ex.solution) + 17.0)
    for text in ("0, 1", "1, 0", "3, 7"):
        if not ex.check(text).correct:
            return text
    raise AssertionError(f"no wrong vector answer found for {ex.name!r}")


def _visible_text(locator) -> str:
    return " ".join(" ".join(locator.all_inner_texts()).split())


def wrong_twice_then_reveal(box, ex, run: NotebookRun) -> str:
    """A wrong answer typed, the box left with Tab (that submits nothing), then Check pressed with the Space key: one
    try, so only the hint shows (never the checker's message; a box that submitted on leaving it would count two
    tries here). The same answer again with Enter: the checker's message. Then "Show worked solution"
    (pressed with Enter) reveals the derivation, typeset."""
    from symsgd_core.lesson.exercise_panel import GENERIC_HINT, HIDE

    field = box.locator("input[type=text]")
    wrong = _wrong_answer(ex)
    checker_says = " ".join(ex.check(wrong).message.split())
    field.fill(wrong)
    field.press("Tab")  # leaving the box submits nothing
    box.get_by_role("button", name="Check").focus()  # from the keyboard, as without a mouse
    box.page.keyboard.press("Space")
    _wait_verdict(box, "wrong", run, f"exercise {ex.name!r}, wrong answer {wrong!r}, Tab, then Check")
    first = _visible_text(box.locator(".symsgd-feedback"))
    hint = " ".join((ex.hint.strip() or GENERIC_HINT).split())
    assert hint[:60] in first, f"{ex.name}: the first wrong try should show the hint {hint[:60]!r}; shows {first!r}"
    assert checker_says[:60] not in first, f"{ex.name}: the first wrong try shows the checker's message: {first!r}"
    field.press("Enter")
    box.locator(".symsgd-feedback").filter(has_text=checker_says[:40]).wait_for(
        state="visible", timeout=run.ms(EXERCISE_TIMEOUT_S))
    box.get_by_role("button", name="Show worked solution").focus()
    box.page.keyboard.press("Enter")
    worked = box.locator(".symsgd-worked")
    worked.wait_for(state="visible", timeout=run.ms(EXERCISE_TIMEOUT_S))
    box.get_by_role("button", name=HIDE).wait_for(state="visible", timeout=run.ms(EXERCISE_TIMEOUT_S))
    text = _visible_text(worked)
    assert "Worked solution" in text and len(text) > 40, f"{ex.name}: worked solution shows {text[:200]!r}"
    if "$" in ex.worked:
        worked.locator("mjx-container, .MathJax").first.wait_for(state="attached", timeout=run.ms(30))
    return (f"{ex.name}: wrong + Tab + Check → hint, wrong again + Enter → the checker's message, "
            f"Show worked solution → shown")


def answer_exercises(page, run: NotebookRun) -> list[str]:
    """Answer the first typed exercise — a wrong answer twice (hint first, then the checker's message), reveal the
    worked solution (:func:`wrong_twice_then_reveal`), garbage + Enter → the format message, the solution + Check
    → right — and the first multiple-choice one (the solution's button + Check → right) of the page's "Check
    yourself" panel.

    Returns what was done, one line per answer. Raises AssertionError naming the exercise otherwise.
    """
    known = _exercises_by_question()
    boxes = page.locator(".symsgd-exercises .symsgd-exercise")
    assert boxes.count() > 0, "the notebook builds an ExercisePanel, but no exercise box is in the page"
    done: list[str] = []
    typed = choice = None
    for i in range(boxes.count()):
        box = boxes.nth(i)
        question = _words(box.locator(".widget-html").first.inner_text().split(".", 1)[-1])
        ex = known.get(question)
        assert ex is not None, f"exercise box {i + 1}: its question is not one of the package's: {question[:80]!r}"
        if typed is None and ex.kind in ("number", "vector"):
            typed = (box, ex)
        if choice is None and ex.kind == "choice":
            choice = (box, ex)
    if typed is not None:
        box, ex = typed
        done.append(wrong_twice_then_reveal(box, ex, run))
        field = box.locator("input[type=text]")
        field.fill("not a number")
        field.press("Enter")
        _wait_verdict(box, "wrong", run, f"exercise {ex.name!r}, 'not a number' + Enter")
        field.fill(", ".join(map(repr, ex.solution)) if ex.kind == "vector" else repr(ex.solution))
        box.get_by_role("button", name="Check").click()
        _wait_verdict(box, "right", run, f"exercise {ex.name!r}, the solution {ex.solution!r} + Check")
        done.append(f"{ex.name}: garbage → wrong, solution → right")
    if choice is not None:
        box, ex = choice
        label = next(lbl for lbl, value in ex.options if value == ex.solution)
        box.locator(".widget-toggle-buttons button").filter(has_text=label).first.click()
        box.get_by_role("button", name="Check").click()
        _wait_verdict(box, "right", run, f"exercise {ex.name!r}, choice {label!r} + Check")
        done.append(f"{ex.name}: choice {label!r} → right")
    assert done, "the panel has no exercise that can be answered in the page"
    return done


# ------------------------------------------------------------------------------------------------
# The steps both modes share, once the notebook has run (JupyterLab: Run All; Voilà: page load)
# ------------------------------------------------------------------------------------------------
class RequestLog:
    """Every request of a page: those leaving 127.0.0.1 are aborted (as in a classroom without network)
    and recorded; local responses with an HTTP error are recorded too."""

    def __init__(self):
        self.external: list[str] = []
        self.local_failures: list[str] = []

    def attach(self, page) -> RequestLog:
        def route(r):
            if is_local_url(r.request.url):
                r.continue_()
            else:
                self.external.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.on("response", lambda resp: resp.status >= 400 and is_local_url(resp.url)
                and self.local_failures.append(f"{resp.status} {resp.url}"))
        return self


#: Figures of the page's controllers without a text alternative: a plot must have role "figure", a name, and an
#: ``aria-describedby`` naming an element with text (symsgd_jupyter/describe.py; linked by symsgd_jupyter/a11y.py).
_FIGURES_WITHOUT_ALT_JS = script("figures_without_alt")


def check_widgets_rendered(page, run: NotebookRun, console: ConsoleLog, expected_views: int = 0) -> None:
    """Step: every widget view drawn, no widget failure text, every figure holds data and has a text alternative
    (what a screen reader reads: what is plotted, the settings, the finding)."""
    with run.step("widgets and figures rendered"):
        wait_widgets_rendered(page, run, expected_views, console)
        run.detail = "console errors so far: " + console.summary()
        failures = widget_failures(page)
        assert not failures, f"widget failures shown: {failures}"
        check_figures(page)
        run.detail = "figures without a text alternative: waiting for the page's a11y helper to link them"
        try:  # the helper links them when the page is idle (symsgd_jupyter/a11y.py batches its passes)
            page.wait_for_function(f"() => ({_FIGURES_WITHOUT_ALT_JS})().length === 0", timeout=run.ms(20),
                                   polling=250)
        finally:
            missing = page.evaluate(_FIGURES_WITHOUT_ALT_JS)
            run.detail = f"figures without a text alternative: {missing[:5]}"
        assert not missing, f"figures without a text alternative: {missing[:5]}"


def notebook_checks_claims(path: Path) -> bool:
    """True when a code cell of the notebook calls ``assert_claims``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return any(cell.get("cell_type") == "code" and "assert_claims(" in "".join(cell.get("source", []))
               for cell in nb.get("cells", []))


def raw_markup(page, scope: str = "body") -> list[dict]:
    """Text on the page that shows markup instead of what it means (``window.__symsgd.rawMarkup``, probe.js): an
    HTML tag printed as text, Markdown asterisks, TeX outside typeset math; ``[{pattern, text}]``."""
    return page.evaluate("(sel) => [].concat(...Array.from(document.querySelectorAll(sel))"
                         ".map((n) => window.__symsgd.rawMarkup(n)))", scope)


def check_no_raw_markup(page, run: NotebookRun, scope: str = "body") -> None:
    """Step: no text inside ``scope`` (every element it matches) shows raw markup (:func:`raw_markup`), checked
    on every page a reader sees."""
    with run.step("no raw markup shown as text (HTML tags, Markdown asterisks, TeX)", fatal=False):
        chars = page.evaluate("(sel) => Array.from(document.querySelectorAll(sel))"
                              ".reduce((n, e) => n + (e.innerText || '').length, 0)", scope)
        assert chars > 0, f"no text inside {scope!r}: nothing was scanned"
        hits = raw_markup(page, scope)
        run.detail = f"{chars} characters scanned, {len(hits)} found"
        assert not hits, f"raw markup shown as text: {hits[:8]}"


def check_claim_cells(page, run: NotebookRun, notebook: Path, classroom: bool, scope: str = "body") -> None:
    """Step: claim cells are one compact line ("✔ 6 claims checked", the table behind a click), in JupyterLab and
    in classroom mode alike."""
    if not notebook_checks_claims(notebook):
        return
    with run.step("claim cells: one compact line, the table behind a click", fatal=False):
        summaries = page.locator(f"{scope} details.symsgd-claims > summary")
        text = page.evaluate(f"() => document.querySelector({scope!r}).innerText")
        where = "classroom page" if classroom else "notebook in JupyterLab"
        assert summaries.count() > 0, f"no compact claim line in the {where}"
        lines = [" ".join(t.split()) for t in summaries.all_inner_texts()]
        assert all(re.fullmatch(r"✔ \d+ claims? checked", t) for t in lines), lines
        assert "[PASS]" not in text, f"the {where} still shows the wall of [PASS] lines"
        first = page.locator(f"{scope} details.symsgd-claims").first
        first.locator("summary").click()
        first.locator("table.symsgd-claims-table").wait_for(state="visible", timeout=run.ms(10))
        run.detail = f"{len(lines)} claim cells: {lines[:3]}"


def check_printed_text_is_compact(page, run: NotebookRun, notebook: Path) -> None:
    """Step (classroom mode): no cell shows raw printed text; what the notebook prints is one compact line each
    (``.symsgd-printed``: a short line as it is, longer text behind a click). See symsgd_jupyter/compact_output.py."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    prints = any(c.get("cell_type") == "code" and "print(" in "".join(c.get("source", [])) for c in nb["cells"])
    with run.step("classroom: printed text is one compact line per cell", fatal=False):
        raw = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stdout']").count()
        assert raw == 0, f"{raw} outputs still show raw printed text"
        if prints:
            assert page.locator(".symsgd-printed").count() > 0, "the notebook prints, but no compact line is shown"
        closed = page.locator("details.symsgd-printed")
        if closed.count():
            assert not closed.first.locator("pre").is_visible()  # the full text waits behind the click
            closed.first.locator("summary").click()
            closed.first.locator("pre").wait_for(state="visible", timeout=run.ms(10))


def audit_step(page, run: NotebookRun, scope: str = "", label: str = "page", rules: list[str] | None = None) -> None:
    """Step: the axe-core audit of the notebook's content (accessibility.py); fails on serious/critical findings."""
    from accessibility import audit, blocking, describe

    with run.step(f"accessibility audit ({label}): no serious or critical axe-core finding", fatal=False):
        findings = audit(page, scope, rules)
        run.accessibility[label] = findings
        bad = blocking(findings)
        assert not bad, describe(bad)


def interact_and_recheck(page, run: NotebookRun, notebook: Path, console: ConsoleLog, kernel_idle, *,
                         scope: str = "body", console_noise: tuple[str, ...] = (),
                         error_texts: tuple[str, ...] = (), moves: int | None = None, throttle: float = 1.0,
                         exercises: bool = True) -> tuple[list[ControllerLatency], list[str]]:
    """The reader's part, the same in both modes: no console errors so far; move a slider of every
    controller (``moves`` per slider, none with ``moves=0``; ``throttle``: the page's CPU slowdown); afterwards no
    errors (outputs in ``scope``, ``error_texts`` in the page, console minus ``console_noise`` and
    :data:`RECOVERED_START_MISSES`) and every figure still drawn; answer the Check-yourself panel if there is one
    (and ``exercises``).

    Returns:
        (latency rows, one line per exercise answered).
    """
    console_noise = (*console_noise, *RECOVERED_START_MISSES)
    with run.step("no console errors from the page's widgets", fatal=False):
        errors = console.widget_errors(console_noise)
        assert not errors, "console errors:\n" + explain(errors)
    seen_errors = len(console.errors)

    latencies: list[ControllerLatency] = []
    if moves != 0:  # moves=0: a smoke pass, no slider moved (the latency benchmark moves them: make bench-browser)
        latencies = exercise_all_controllers(page, run, kernel_idle=kernel_idle, moves=moves, throttle=throttle)

    with run.step("after the slider moves: no errors, figures still drawn", fatal=False):
        errs = output_errors(page, scope)
        assert not errs, "after moving sliders: " + format_output_errors(errs)
        text = page.evaluate("() => document.body.innerText")
        found = [t for t in error_texts if t in text]
        assert not found, f"error shown after moving sliders: {found}"
        errors = ConsoleLog(console.errors[seen_errors:]).widget_errors(console_noise)
        assert not errors, "new console errors:\n" + explain(errors)
        check_figures(page)

    answered: list[str] = []
    if exercises and notebook_has_exercise_panel(notebook):
        with run.step("answer the Check-yourself panel through the page", fatal=False):
            answered += answer_exercises(page, run)
    if throttle == 1.0:  # (not in the slow-laptop runs: the audit is the same, only slower)
        audit_step(page, run, "" if scope == "body" else scope)
    return latencies, answered
