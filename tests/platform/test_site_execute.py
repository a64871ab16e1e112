"""The edition's notebook runner: kernels talk over Unix sockets in a private folder, so two processes starting
kernels at the same moment (the build's two workers, the edition test's two pytest workers) cannot be handed the
same TCP port (one kernel then died with "Address already in use" in a ``make test`` run)."""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import pytest

from tools.site.edition.execute import REPO_ROOT, execute_notebook, kernel_environment, private_kernel_sockets

_CONNECTION = ("import json, os\nfrom ipykernel import get_connection_info\n"
               "info = get_connection_info(unpack=True)\n"
               "print(json.dumps({'transport': info['transport'], 'ip': info['ip'], 'pid': os.getpid()}))")


def _notebook(tmp_path, name: str):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_CONNECTION)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def _kernel_connection(path: str) -> dict:
    """Run the notebook at ``path`` through the edition's runner; the connection its kernel reported."""
    path = Path(path)
    executed = execute_notebook(path, path.with_suffix(".capture.json"), frame_budget_bytes=1_000_000)
    text = "".join(o.get("text", "") for o in executed.nb.cells[0].outputs if o.get("output_type") == "stream")
    return json.loads(text)


@pytest.mark.slow  # a subprocess or server of its own: not in `make test-fast`
def test_kernels_of_two_processes_started_together_use_private_unix_sockets(tmp_path):
    paths = [str(_notebook(tmp_path, f"n{i}.ipynb")) for i in range(2)]
    with ProcessPoolExecutor(max_workers=2) as pool:  # as tools/site/edition/build.py runs them
        infos = list(pool.map(_kernel_connection, paths))
    assert [i["transport"] for i in infos] == ["ipc", "ipc"], infos
    assert infos[0]["pid"] != infos[1]["pid"]
    folders = [os.path.dirname(i["ip"]) for i in infos]
    assert folders[0] != folders[1], f"both kernels' sockets in one folder: {folders}"
    assert all(os.path.basename(f).startswith("symsgd-kernel-") for f in folders), folders
    assert not any(os.path.exists(f) for f in folders), "a kernel's socket folder was left behind"


def test_the_private_socket_folder_is_removed_even_when_the_run_fails():
    with pytest.raises(RuntimeError), private_kernel_sockets() as config:
        folder = os.path.dirname(config.KernelManager.ip)
        assert os.path.isdir(folder) and config.KernelManager.transport == "ipc"
        raise RuntimeError("a cell failed")
    assert not os.path.exists(folder)


def test_the_kernel_imports_the_capture_code_from_the_repository_root():
    """The kernel runs in the notebook's folder; the repository root goes first on its PYTHONPATH (what was there
    stays after it), so ``tools.site.edition.capture`` imports without changing ``sys.path`` in the kernel."""
    env = kernel_environment({"PYTHONPATH": os.pathsep.join(["/a", "", "/b"]), "HOME": "/h"})
    assert env["PYTHONPATH"].split(os.pathsep) == [str(REPO_ROOT), "/a", "/b"] and env["HOME"] == "/h"
    assert kernel_environment({})["PYTHONPATH"] == str(REPO_ROOT)
    assert (REPO_ROOT / "tools" / "site" / "edition" / "capture.py").is_file()
