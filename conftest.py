"""Repository-wide pytest hooks: each notebook's cells kept on one pytest-xdist worker, nbval's kernels on private
Unix sockets, and a closing summary that shows what the test command ran."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest


def _is_notebook(nodeid: str) -> bool:
    return nodeid.split("::")[0].endswith(".ipynb")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (below)
def pytest_collection_modifyitems(config, items):
    """Each notebook's cells form one pytest-xdist group, ``nbval-<notebook>``: under ``--dist loadgroup`` (``make
    test``) they run in order on one worker and one kernel, as nbval needs, while the unit tests are handed out one
    at a time (so one slow test no longer holds back the rest of its file, as with ``--dist loadfile``)."""
    for item in items:
        if _is_notebook(item.nodeid):
            item.add_marker(pytest.mark.xdist_group(f"nbval-{item.path.stem}"))


class _XdistGroupSuffix:
    """pytest-xdist ≤ 3.8 tells its scheduler an item's group by appending ``@<group>`` to ``item._nodeid``; pytest
    ≥ 9.2 keeps node ids in ``item._id`` and ignores that write, so ``--dist loadgroup`` silently stopped grouping
    (pytest-dev/pytest-xdist#1386; the fix, #1388, is not released). This plugin writes the suffix where pytest
    reads it, after xdist's own hook; a no-op outside a ``loadgroup`` worker and wherever xdist's suffix took.

    Why it stays, though it writes a private attribute of pytest: the node id is the only thing a worker sends the
    controller about an item (``pytest_xdist_make_scheduler`` gives a scheduler node ids, not items), so no public
    hook, marker or ``--dist`` mode can carry a group there; ``--dist loadfile`` would keep a notebook's cells
    together but not the groups that span files (``tests/browser/lesson_kernels.py``: a notebook's JupyterLab pass
    and the static edition's test share its kernel; ``tests/ui/test_ui_style.py`` and ``test_ui_layout.py`` share
    built controllers). pytest-xdist 3.8.0 is its newest release (pinned in requirements-lock.txt); remove this
    class when a release groups by itself on pytest 9.2. ``tests/notebooks/test_notebook_hygiene.py``
    (``test_the_test_commands_notebook_runner``) fails without it: a notebook's cells split over two workers."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        if not getattr(config.option, "loadgroup", False):  # set only in an xdist worker under --dist loadgroup
            return
        try:
            from _pytest.nodeid import NodeId  # pytest ≥ 9.2
        except ImportError:
            return
        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})
            if names and "@" not in item.nodeid and hasattr(item, "_id"):
                item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")


def _nbval_kernels_on_private_sockets() -> None:
    """nbval's kernels talk over Unix sockets in a folder of their own instead of TCP ports. With TCP, jupyter_client
    picks free ports, closes them, and the kernel binds them a moment later: the two workers of ``make test`` start
    their first notebooks' kernels at the same moment and can be handed the same port ("Address already in use";
    seen in the static-edition test, which now uses the same remedy, tools/site/edition/execute.py)."""
    try:
        import nbval.kernel
        from jupyter_client.manager import KernelManager
    except ImportError:
        return

    class PrivateSocketKernelManager(KernelManager):
        def __init__(self, **kwargs):
            folder = tempfile.mkdtemp(prefix="symsgd-kernel-")
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", os.path.join(folder, "k"))
            super().__init__(**kwargs)

    if getattr(nbval.kernel, "KernelManager", None) is KernelManager:  # nbval's own name for it (nbval 0.11)
        nbval.kernel.KernelManager = PrivateSocketKernelManager


def pytest_configure(config):
    config.pluginmanager.register(_XdistGroupSuffix(), "symsgd-xdist-group-suffix")
    _nbval_kernels_on_private_sockets()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Tag the reports of tests marked ``browser`` (the tag survives pytest-xdist's transfer to the controller)."""
    outcome = yield
    if item.get_closest_marker("browser") is not None:
        outcome.get_result().user_properties.append(("symsgd_kind", "browser"))


def _kind(report) -> str:
    if _is_notebook(report.nodeid):
        return "notebook cells (nbval)"
    if any(tuple(prop) == ("symsgd_kind", "browser") for prop in getattr(report, "user_properties", [])):
        return "real-browser tests"
    return "unit tests"  # including tests/browser/test_classroom_launcher.py, which needs no browser


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    counts: dict[str, dict[str, int]] = {}
    notebooks: set[str] = set()
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if not nodeid or (outcome == "passed" and getattr(report, "when", "call") != "call"):
                continue
            kind = _kind(report)
            counts.setdefault(kind, {}).setdefault(outcome, 0)
            counts[kind][outcome] += 1
            if _is_notebook(nodeid):
                notebooks.add(nodeid.split("::")[0])
    if not counts:
        return
    terminalreporter.section("what ran")
    for kind in ("unit tests", "notebook cells (nbval)", "real-browser tests"):
        if kind in counts:
            parts = ", ".join(f"{n} {o}" for o, n in sorted(counts[kind].items()))
            extra = f" in {len(notebooks)} notebooks" if kind.startswith("notebook") else ""
            terminalreporter.write_line(f"{kind}: {parts}{extra}")
