"""The edition test's oracle in the kernel a notebook's JupyterLab pass ran (tests/browser/lesson_kernels.py): the
IPython start-up file records which cell showed each widget, and the oracle finds a page's controller by that cell's
source and its class. No browser; the start-up file is checked in a real kernel."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import lesson_kernels
import pytest
from live_kernel import _ORACLE


def _oracle_namespace(displays: list[tuple[str, str]]) -> dict:
    ns: dict = {}
    exec(_ORACLE, ns)  # the functions the oracle defines in the kernel, here in this process
    ns["_symsgd_widget_displays"] = displays
    return ns


def test_the_controller_is_found_by_its_cells_source_and_its_class(tmp_path):
    from symsgd_core.ui.balance import SymmetryExplorer
    from symsgd_core.ui.lifting import OrbitController
    from symsgd_jupyter.figure_checks import slider_extremes

    symmetry, orbit, elsewhere = SymmetryExplorer(), OrbitController(), SymmetryExplorer()
    cell = "symmetry = SymmetryExplorer()\norbit = OrbitController()\ndisplay(symmetry, orbit)"
    ns = _oracle_namespace([(cell, symmetry.view().model_id), (cell, orbit.view().model_id),
                            ("elsewhere", elsewhere.view().model_id)])
    slider = next(iter(symmetry.controls))
    value = slider_extremes(symmetry.controls[slider])[1]
    out = tmp_path / "drawn.json"
    ns["_static_edition_oracle_of_cell"](cell + "\n", "SymmetryExplorer", slider, value, str(out))
    drawn = json.loads(out.read_text())
    assert drawn["class"] == "SymmetryExplorer" and symmetry.controls[slider].value == value
    assert elsewhere.controls[slider].value != value  # the controller of another cell was left alone
    assert len(drawn["figures"]) == len(symmetry.figures)


def test_two_controllers_of_one_class_in_one_cell_or_none_recorded_fail(tmp_path):
    from symsgd_core.ui.balance import SymmetryExplorer

    a, b = SymmetryExplorer(), SymmetryExplorer()
    ns = _oracle_namespace([("display(a, b)", a.view().model_id), ("display(a, b)", b.view().model_id)])
    slider = next(iter(a.controls))
    with pytest.raises(AssertionError, match="2 controllers of class SymmetryExplorer"):
        ns["_static_edition_oracle_of_cell"]("display(a, b)", "SymmetryExplorer", slider, a.controls[slider].value,
                                              str(tmp_path / "x.json"))
    with pytest.raises(AssertionError, match="no widget display recorded"):
        ns["_static_edition_oracle_of_cell"]("another cell", "SymmetryExplorer", slider, 0, str(tmp_path / "y.json"))


@pytest.mark.slow  # a kernel of its own
def test_the_start_up_file_records_each_widget_with_the_cell_that_showed_it(tmp_path):
    from jupyter_client.manager import start_new_kernel

    lesson_kernels.install_startup(tmp_path / "ipython")
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython")}
    cells = ["import ipywidgets as w\nfrom IPython.display import display\na = w.IntSlider()\ndisplay(a)",
             "b = w.Button()\nb", "print('no widget here')"]
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=tempfile.gettempdir())
    try:
        for cell in cells:
            kc.execute_interactive(cell, timeout=60)
        found: dict = {}
        kc.execute_interactive("import json; print(json.dumps([_symsgd_widget_displays, a.model_id, b.model_id]))",
                               timeout=60, output_hook=lambda m: found.update(m["content"])
                               if m["msg_type"] == "stream" else None)
        displays, a_id, b_id = json.loads(found["text"])
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert [tuple(d) for d in displays] == [(cells[0], a_id), (cells[1], b_id)]


class _Server:
    """A stand-in for a test server's REST API: knows the kernels in ``running``; records what was deleted."""

    def __init__(self, running):
        self.running, self.deleted = set(running), []

    def api(self, method, path):
        import urllib.error

        kernel_id = path.rsplit("/", 1)[-1]
        if kernel_id not in self.running:
            raise urllib.error.HTTPError(path, 404, "no such kernel", {}, None)
        if method == "DELETE":
            self.running.discard(kernel_id)
            self.deleted.append(kernel_id)
        return {"id": kernel_id}


def test_a_kept_kernel_is_handed_over_once_and_only_while_it_runs():
    server = _Server({"k1", "k2"})
    lesson_kernels.keep("01", lesson_kernels.KeptKernel(server, "k1", Path("k1.json")))
    lesson_kernels.keep("02", lesson_kernels.KeptKernel(server, "k2", Path("k2.json")))
    lesson_kernels.keep("02", lesson_kernels.KeptKernel(server, "k1", Path("k1.json")))  # the older one is shut down
    assert server.deleted == ["k2"]
    assert lesson_kernels.take("02").kernel_id == "k1" and lesson_kernels.take("02") is None
    server.running.discard("k1")  # another test shut the server's kernels meanwhile
    assert lesson_kernels.take("01") is None


def test_a_dead_weak_proxy_among_the_kernels_objects_does_not_stop_the_oracle(tmp_path):
    """The oracle scans every object of the kernel for controllers; a weakref.proxy whose object is gone (numba and
    other libraries keep such proxies) raised ReferenceError under isinstance, and failed a fresh-clone run."""
    import gc
    import weakref

    from symsgd_core.ui.balance import SymmetryExplorer

    class Gone:
        pass

    gone = Gone()
    dead = [weakref.proxy(gone)]
    del gone
    gc.collect()
    assert any(o is dead[0] for o in gc.get_objects())  # the scan meets it
    ctl = SymmetryExplorer()
    ns = _oracle_namespace([("display(ctl)", ctl.view().model_id)])
    slider = next(iter(ctl.controls))
    out = tmp_path / "drawn.json"
    ns["_static_edition_oracle_of_cell"]("display(ctl)", "SymmetryExplorer", slider, ctl.controls[slider].value,
                                         str(out))
    assert json.loads(out.read_text())["class"] == "SymmetryExplorer"
