"""The lessons' kernels, kept after their JupyterLab pass for the static-edition test (one execution fewer).

``make test`` runs each notebook's JupyterLab pass (tests/browser/test_jupyterlab.py) and its edition page test
(tests/static_site/test_static_site.py) one after the other on one pytest-xdist worker (the group
``lesson-<notebook>``). The JupyterLab pass leaves the kernel it ran the notebook in running (:func:`keep`); the page
test then asks that kernel what each controller draws at a slider value (tests/static_site/live_kernel.py,
``LessonKernel``) instead of executing the notebook a fourth time, and shuts it down. Run alone (``make test-site``),
the page test finds no kept kernel and runs the notebook in a kernel of its own (``LiveNotebook``).

The lessons' server starts its kernels with :data:`STARTUP` (an IPython start-up file in the server's own
``IPYTHONDIR``) so that each displayed widget is recorded with the source of the cell that showed it: that is how a
page's controller (a cell index in the notebook) is found in a kernel JupyterLab ran.
"""

from __future__ import annotations

import shutil
import urllib.error
from dataclasses import dataclass
from pathlib import Path

import pytest

#: The IPython start-up file that records every widget display with its cell's source.
STARTUP = Path(__file__).resolve().with_name("kernel_startup") / "00-record-widget-displays.py"
#: The edition's page test, whose presence in a session makes the JupyterLab pass keep its kernel.
PAGE_TEST = "test_page_matches_the_live_notebook"


def group(stem: str):
    """The pytest-xdist group of a notebook's JupyterLab pass and its edition page test (one worker, in order)."""
    return pytest.mark.xdist_group(f"lesson-{stem}")


def install_startup(ipython_dir: Path) -> None:
    """Put :data:`STARTUP` into the default profile of ``ipython_dir`` (a server's ``IPYTHONDIR``)."""
    startup = Path(ipython_dir) / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(STARTUP, startup / STARTUP.name)


@dataclass(frozen=True)
class KeptKernel:
    """A kernel the JupyterLab pass left running: its server, id and connection file."""

    server: object
    kernel_id: str
    connection_file: Path

    def shutdown(self) -> None:
        self.server.api("DELETE", f"/api/kernels/{self.kernel_id}")


_KEPT: dict[str, KeptKernel] = {}


def wanted(session, stem: str) -> bool:
    """Whether this session also collected the edition page test of notebook ``stem`` (every worker collects all)."""
    return any(PAGE_TEST in item.nodeid and f"[{stem}]" in item.nodeid for item in session.items)


def keep(stem: str, kernel: KeptKernel) -> None:
    """Keep ``kernel`` for notebook ``stem``'s page test (a kernel kept before for it is shut down)."""
    old = _KEPT.pop(stem, None)
    if old is not None:
        old.shutdown()
    _KEPT[stem] = kernel


def take(stem: str) -> KeptKernel | None:
    """The kernel kept for notebook ``stem`` (the caller shuts it down), or None, also when it is no longer running
    (run without pytest-xdist, the tests run in file order and another test may have shut the server's kernels)."""
    kept = _KEPT.pop(stem, None)
    if kept is None:
        return None
    try:
        kept.server.api("GET", f"/api/kernels/{kept.kernel_id}")
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return kept
