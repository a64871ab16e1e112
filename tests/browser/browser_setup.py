"""Where the browser suite's things are and how Chromium is started: the notebooks under test, Chromium's path and
flags, the page size, the process's one Playwright, CI's rule for a missing browser, and two small helpers (a free
port, whether an address is this machine's)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import socket
from pathlib import Path

import pytest
from browser_report import REPO

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
