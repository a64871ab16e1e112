"""Execute a notebook top to bottom in a fresh kernel (nbclient), then capture its widgets in that same kernel."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat

#: The repository root: on the kernel's ``PYTHONPATH``, so that the kernel imports :mod:`tools.site.edition.capture`.
REPO_ROOT = Path(__file__).resolve().parents[3]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: Longest a single cell may take (the slowest, in notebook 03, takes well under a minute).
CELL_TIMEOUT_S = 900


@dataclass
class ExecutedNotebook:
    """A notebook after it ran, and what its widgets showed.

    Attributes:
        path: the source notebook.
        nb: the executed notebook (outputs included; widget outputs still reference model ids).
        outputs: the capture of every widget output, by model id (see :func:`edition.capture.capture`).
        run_seconds, capture_seconds: wall time of the notebook's own cells, and of the capture.
    """

    path: Path
    nb: nbformat.NotebookNode
    outputs: dict
    run_seconds: float
    capture_seconds: float


@contextlib.contextmanager
def private_kernel_sockets() -> Iterator[object]:
    """A traitlets ``Config`` for an ``nbclient.NotebookClient`` whose kernel talks over Unix sockets in a folder
    of its own (removed afterwards), instead of TCP ports.

    Why: with TCP, jupyter_client picks free ports, closes them, and the kernel binds them a moment later; two
    processes starting kernels at the same moment (the build's two workers, the edition test's two pytest workers)
    can be handed the same port, and one kernel dies with "Address already in use" (seen in a ``make test`` run:
    ``zmq.error.ZMQError: Address already in use``, then nbclient's "Kernel died before replying to kernel_info").
    Socket files in a private folder cannot collide.
    """
    from traitlets.config import Config

    folder = tempfile.mkdtemp(prefix="symsgd-kernel-")
    try:
        yield Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(folder, "k")}})
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def widget_outputs(nb) -> list[tuple[int, int, str]]:
    """``(cell index, output index, model id)`` of every widget output, in page order."""
    found = []
    for ci, cell in enumerate(nb.cells):
        for oi, out in enumerate(cell.get("outputs", []) if cell.cell_type == "code" else []):
            view = out.get("data", {}).get(WIDGET_VIEW) if out.get("output_type") in ("display_data",
                                                                                          "execute_result") else None
            if view and view.get("model_id"):
                found.append((ci, oi, view["model_id"]))
    return found


def _capture_source(model_ids: list[str], out_path: Path, frame_budget_bytes: int) -> str:
    return (f"import json as _json\n"
            f"from tools.site.edition.capture import capture as _edition_capture\n"
            f"print(_json.dumps(_edition_capture({model_ids!r}, {str(out_path)!r}, {int(frame_budget_bytes)})))\n")


def kernel_environment(environ=None) -> dict:
    """This process's environment with the repository root first on ``PYTHONPATH``: the kernel runs in the
    notebook's folder, and imports the capture code as :mod:`tools.site.edition.capture`."""
    env = dict(os.environ if environ is None else environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
    return env


def execute_notebook(path: Path, capture_path: Path, frame_budget_bytes: int) -> ExecutedNotebook:
    """Run ``path`` in a fresh ``python3`` kernel (cwd: its folder), then capture its widgets there.

    Raises:
        nbclient.exceptions.CellExecutionError: a cell of the notebook failed (the message has the traceback).
        RuntimeError: the capture failed in the kernel (with the kernel's traceback).
    """
    from nbclient import NotebookClient

    os.environ.pop("SYMSGD_PLOTLY_BUNDLE", None)  # plotly's own widget code: the edition does not use it
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    with private_kernel_sockets() as config:
        client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", config=config,
                                resources={"metadata": {"path": str(path.parent)}})
        with client.setup_kernel(env=kernel_environment()):
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    client.execute_cell(cell, index)
            t1 = time.perf_counter()
            model_ids = [mid for _, _, mid in widget_outputs(nb)]
            probe = nbformat.v4.new_code_cell(_capture_source(model_ids, capture_path, frame_budget_bytes))
            nb.cells.append(probe)
            try:
                client.allow_errors = True
                client.execute_cell(probe, len(nb.cells) - 1)
            finally:
                nb.cells.pop()
            t2 = time.perf_counter()
    errors = [o for o in probe.outputs if o.get("output_type") == "error"]
    if errors:
        trace = "\n".join(errors[0].get("traceback", []))
        raise RuntimeError(f"{path.name}: capturing the widgets failed in the kernel:\n{trace}")
    outputs = json.loads(Path(capture_path).read_text(encoding="utf-8"))["outputs"]
    return ExecutedNotebook(path, nb, outputs, round(t1 - t0, 1), round(t2 - t1, 1))
