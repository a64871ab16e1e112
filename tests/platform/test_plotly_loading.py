"""plotly's widget code once per page: the kernel-side loader and the ``symsgd_jupyter`` server extension.

The browser suite checks the whole path in JupyterLab (also under a base URL) and in Voilà (also at localhost);
these tests pin the pieces: the loader's module, the environment variable, the extension's handler and config.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import plotly.graph_objects as go
import pytest
from plotly.basewidget import BaseFigureWidget

import symsgd_jupyter
from symsgd_jupyter import plotly_loading

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def restore_plotly_esm():
    saved = BaseFigureWidget.__dict__.get("_esm")
    yield
    BaseFigureWidget._esm = saved


def test_loader_imports_the_bundle_relative_to_the_pages_base_url():
    js = plotly_loading.loader_module("symsgd/static/plotly-widget-7.1.0.js")
    assert '"symsgd/static/plotly-widget-7.1.0.js"' in js
    assert "jupyter-config-data" in js and "baseUrl" in js and "window.location.href" in js
    assert "http://" not in js and "127.0.0.1" not in js and "localhost" not in js  # no host baked in
    assert len(js.encode()) < 10_000  # tiny: anywidget's 2 s start limit is about this module, not the bundle
    assert "could not be drawn" in js and plotly_loading.FIGURE_SLOT_CLASS in js  # a failure is shown, not blank


@pytest.mark.parametrize("bad", ["http://127.0.0.1:8888/symsgd/x.js", "/symsgd/x.js", "", "  ", None])
def test_loader_refuses_absolute_or_empty_paths(bad):
    with pytest.raises(ValueError, match="bundle_path"):
        plotly_loading.loader_module(bad)


def test_a_state_request_resends_data_layout_and_the_shared_config():
    """The loader asks each figure for its state once its module runs, because anywidget drops the updates a slow
    start missed. The config is one of them (set after the model opened, read only when plotly draws), so the answer
    carries it; the loader redraws a view whose data or config changed before the answer."""
    from symsgd_core.ui.style import PLOTLY_CONFIG

    fig = go.FigureWidget(data=[go.Scatter(y=[1, 3, 2])])
    fig._config = dict(PLOTLY_CONFIG)
    sent_state, sent = [], []
    fig.send_state = lambda key=None: sent_state.append(key)
    fig.send = lambda content, buffers=None: sent.append(content)
    plotly_loading.answer_state_requests(fig)
    plotly_loading.answer_state_requests(fig)  # idempotent: one answer per request
    fig._handle_custom_msg({"type": plotly_loading.STATE_REQUEST}, [])
    assert sent_state == [["_widget_data", "_widget_layout", "_config"]]
    assert sent == [{"type": plotly_loading.STATE_SENT}]
    js = plotly_loading.loader_module("symsgd/static/plotly-widget-7.1.0.js")
    assert 'model.on("change:_config", stale)' in js and 'model.on("change:_widget_data", stale)' in js


def test_environment_variable_switches_figures_to_the_loader_and_back(restore_plotly_esm):
    path = "voila/static/plotly-widget-x.js"
    assert plotly_loading.configure_from_environment({symsgd_jupyter.PLOTLY_BUNDLE_ENV: path}) == path
    assert go.FigureWidget()._esm == plotly_loading.loader_module(path)
    assert plotly_loading.configure_from_environment({}) is None
    esm = go.FigureWidget()._esm
    assert "plotly" in esm and len(esm) > 1_000_000  # plotly's own bundle again, inline


def test_server_config_file_matches_what_enable_writes(tmp_path):
    shipped = json.loads((REPO / "jupyter-config" / "jupyter_server_config.d" / "symsgd_jupyter.json").read_text())
    assert shipped == symsgd_jupyter.SERVER_CONFIG
    written = symsgd_jupyter.enable(tmp_path)
    assert written == tmp_path / "etc" / "jupyter" / "jupyter_server_config.d" / "symsgd_jupyter.json"
    assert json.loads(written.read_text()) == symsgd_jupyter.SERVER_CONFIG
    assert symsgd_jupyter.enable(tmp_path) == written  # idempotent


def test_pyproject_installs_the_server_config_with_the_package():
    text = (REPO / "pyproject.toml").read_text()
    assert '"etc/jupyter/jupyter_server_config.d" = ["jupyter-config/jupyter_server_config.d/symsgd_jupyter.json"]' \
        in text
    assert '"symsgd_jupyter*"' in text


def test_bundle_is_the_installed_plotlys():
    import plotly

    path, name = symsgd_jupyter.plotly_bundle()
    assert path.is_file() and path.stat().st_size > 1_000_000
    assert name == f"plotly-widget-{plotly.__version__}.js"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout_s: float = 60.0):
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return urllib.request.urlopen(url, timeout=10)
        except urllib.error.HTTPError:
            raise
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)  # polling interval while the server starts


@contextlib.contextmanager
def _ready_client(connection_file: str | os.PathLike, timeout_s: float = 60.0):
    """A ``BlockingKernelClient`` on an existing kernel, ready once the kernel has answered ``kernel_info``.

    Readiness is the reply itself. A client that no ``KernelManager`` made judges "alive" by the kernel's heartbeat,
    which must answer within 1 s (``HBChannel.time_to_dead``); a kernel that gets no CPU for a second, as on a busy
    two-core machine, is then reported as "Kernel died before replying to kernel_info" although it is alive (a red
    CI run on such a machine; reproduced in ``test_a_kernel_stalled_for_seconds_is_not_taken_for_dead``). So the
    heartbeat channel is not started: a kernel that really died shows as no reply within ``timeout_s``, and the
    server's log says why.
    """
    from jupyter_client import BlockingKernelClient

    client = BlockingKernelClient(connection_file=str(connection_file))
    client.load_connection_file()
    client.start_channels(hb=False)
    try:
        client.wait_for_ready(timeout=timeout_s)
        yield client
    finally:
        client.stop_channels()


def _short_private_folder() -> str:
    """A new folder with a short path: kernels there talk over Unix sockets (``transport=ipc``), whose paths must stay
    under the 107-byte limit (pytest's ``tmp_path`` is too deep for ``<runtime>/kernel-<uuid>-ipc-<n>``)."""
    return tempfile.mkdtemp(prefix="sj-")


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_a_kernel_stalled_for_seconds_is_not_taken_for_dead():
    """The cause of the kernel that "died before replying to kernel_info": it was alive but stalled (a busy machine).
    A kernel stopped for 3 s (SIGSTOP, then SIGCONT) must still be found ready by :func:`_ready_client`;
    jupyter_client's heartbeat-based default reports it dead after 1 s (checked here too, so the test shows the cause,
    not a guess)."""
    from jupyter_client import BlockingKernelClient, KernelManager

    folder = _short_private_folder()
    km = KernelManager(transport="ipc", ip=os.path.join(folder, "k"))
    km.start_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with _ready_client(km.connection_file):
            pass  # up and answering
        pid = km.provisioner.process.pid

        def stalled_for(seconds: float) -> threading.Timer:
            os.kill(pid, signal.SIGSTOP)
            timer = threading.Timer(seconds, os.kill, (pid, signal.SIGCONT))
            timer.start()
            return timer

        default = BlockingKernelClient(connection_file=km.connection_file)
        default.load_connection_file()
        default.start_channels()
        timer = stalled_for(3.0)
        try:
            with pytest.raises(RuntimeError, match="Kernel died before replying"):
                default.wait_for_ready(timeout=60)
        finally:
            timer.join()
            default.stop_channels()
        assert km.is_alive(), "the kernel really died: this test no longer shows the cause"

        timer = stalled_for(3.0)
        try:
            t0 = time.monotonic()
            with _ready_client(km.connection_file, timeout_s=60):
                waited = time.monotonic() - t0
        finally:
            timer.join()
        assert waited >= 2.5, f"ready after {waited:.1f} s although the kernel was stopped for 3 s"
    finally:
        km.shutdown_kernel(now=True)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_server_extension_serves_the_bundle_under_the_base_url_and_tells_kernels(tmp_path):
    """A Jupyter server under a prefix serves the bundle there (no token), 404s anything else, and its kernels get
    the bundle's path relative to the base URL.

    The server's kernels talk over Unix sockets in a private folder (no TCP port race with other processes), and the
    server's output (its kernels' too) goes to a log file whose tail is shown if anything here fails."""
    port, token, base = _free_port(), secrets.token_hex(8), "/user/someone/"
    runtime = _short_private_folder()
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=runtime, JUPYTER_CONFIG_DIR=str(tmp_path / "cfg"))
    env.pop(symsgd_jupyter.PLOTLY_BUNDLE_ENV, None)
    argv = [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--ServerApp.base_url={base}",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
            "--KernelManager.transport=ipc",
            "--ServerApp.jpserver_extensions={'symsgd_jupyter': True}"]
    log_path = tmp_path / "server.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        root = f"http://127.0.0.1:{port}{base}"
        _get(f"{root}api/status?token={token}")
        path, name = symsgd_jupyter.plotly_bundle()
        with _get(f"{root}{symsgd_jupyter.URL_FOLDER}/{name}") as r:  # no token: public code, like /static/
            assert r.read() == path.read_bytes()
            assert "javascript" in r.headers["Content-Type"]
            assert "immutable" in r.headers["Cache-Control"]
        with pytest.raises(urllib.error.HTTPError) as missing:
            _get(f"{root}{symsgd_jupyter.URL_FOLDER}/other.js")
        assert missing.value.code == 404
        # a kernel started by this server knows where the bundle is, relative to the base URL
        req = urllib.request.Request(f"{root}api/kernels?token={token}", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
        kernel_id = json.loads(urllib.request.urlopen(req, timeout=60).read())["id"]
        connection_file = os.path.join(runtime, f"kernel-{kernel_id}.json")
        assert json.loads(Path(connection_file).read_text())["transport"] == "ipc"
        with _ready_client(connection_file) as client:
            msg_id = client.execute("", silent=True, user_expressions={
                "v": f"__import__('os').environ.get({symsgd_jupyter.PLOTLY_BUNDLE_ENV!r})"})
            reply = client.get_shell_msg(timeout=60)
            while reply["parent_header"].get("msg_id") != msg_id:
                reply = client.get_shell_msg(timeout=60)
        value = reply["content"]["user_expressions"]["v"]["data"]["text/plain"]
        assert value == repr(f"{symsgd_jupyter.URL_FOLDER}/{name}")
    except BaseException as exc:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-40:])
        raise AssertionError(f"{type(exc).__name__}: {exc}\n--- the server's log ({log_path}), last lines:\n{tail}") \
            from exc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        shutil.rmtree(runtime, ignore_errors=True)


def test_this_environment_enables_the_extension():
    """`make` enables it in .venv; the conda route's README line does in its environment."""
    assert symsgd_jupyter.config_file().is_file(), (
        f"the symsgd_jupyter server extension is not enabled in {sys.prefix} (figures would load plotly's code "
        "once per figure): run `python -m symsgd_jupyter --enable`")
