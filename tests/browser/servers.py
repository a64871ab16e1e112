"""Server and kernel lifecycle: :class:`Server` (a JupyterLab or Voilà server on 127.0.0.1, a free port, its own
process group, stopped with its kernels at the end), how the suite starts JupyterLab and Voilà (:func:`start_lab`,
:func:`start_voila`), the kernels' checks (Unix sockets, a cold compiled-kernel cache) and how a hung page's
renderers are stopped."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from browser_report import ARTIFACTS
from browser_setup import copy_notebooks, free_port
from slow_cpu import renderer_pids

from symsgd_jupyter.handled_inputs import SHOW_HANDLED_ENV


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
