"""The README's first command, run exactly as it is given: ``make lab`` starts JupyterLab and it answers.

It must also work as root (containers, WSL), where JupyterLab refuses to start without ``--allow-root``, and its
server must serve plotly's widget code once per page (the ``symsgd_jupyter`` extension, enabled by ``make``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from symsgd_jupyter import URL_FOLDER, plotly_bundle

REPO = Path(__file__).resolve().parents[2]
#: What JupyterLab prints once it listens: the address with its token.
_URL = re.compile(r"(http://127\.0\.0\.1:(\d+)/lab\?token=([0-9a-f]+))")


def _environment_is_built() -> bool:
    """True when ``make`` would start JupyterLab at once (its environment is built and up to date)."""
    if shutil.which("make") is None:
        return False
    return subprocess.run(["make", "-q", ".venv/.installed"], cwd=REPO, capture_output=True).returncode == 0


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
@pytest.mark.skipif(not _environment_is_built(), reason="`make lab` would first build .venv (run `make` once)")
def test_make_lab_starts_jupyterlab_that_answers_with_its_printed_token(tmp_path):
    env = dict(os.environ)
    # keep the reader's own Jupyter settings, runtime files and workspaces out of it (the command is unchanged)
    env.update(JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"), JUPYTER_DATA_DIR=str(tmp_path / "data"))
    proc = subprocess.Popen(["make", "lab"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 120
        match = None
        while match is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                if proc.poll() is not None:
                    break
                continue
            lines.append(line.rstrip())
            match = _URL.search(line)
        output = "\n".join(lines[-40:])
        assert match, f"`make lab` printed no address with a token (exit code {proc.poll()}):\n{output}"
        assert "Running as root is not recommended" not in output, output
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            assert any("running as root" in ln and "--allow-root" in ln for ln in lines), \
                f"as root, `make lab` must say why it passes --allow-root:\n{output}"
        url, port, token = match.groups()
        base = f"http://127.0.0.1:{port}"
        assert _answers(f"{base}/api/status?token={token}"), f"{url} printed, but the server never answered"
        with pytest.raises(urllib.error.HTTPError) as denied:  # token auth is on
            urllib.request.urlopen(f"{base}/api/sessions", timeout=10)
        assert denied.value.code == 403
        _, name = plotly_bundle()
        with urllib.request.urlopen(f"{base}/{URL_FOLDER}/{name}", timeout=10) as r:  # the extension is on
            assert r.status == 200 and len(r.read()) > 1_000_000
    finally:
        _stop(proc)


def _answers(url: str, timeout_s: float = 30.0) -> bool:
    """True once ``url`` answers 200 (JupyterLab prints its address a moment before it accepts connections)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.status == 200
        except urllib.error.URLError:
            time.sleep(0.2)  # polling interval while the server starts
    return False


def _stop(proc: subprocess.Popen) -> None:
    """Stop ``make`` and the JupyterLab it started (their own process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
