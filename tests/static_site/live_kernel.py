"""The oracle of the static-edition test: a kernel that ran the notebook top to bottom, whose controllers are asked
what they draw at a slider value. In ``make test`` that is the kernel the notebook's JupyterLab pass ran it in
(:class:`LessonKernel`, kept for this test: tests/browser/lesson_kernels.py); run alone, the test executes the
notebook in a kernel of its own (:class:`LiveNotebook`).

This is deliberately *not* the builder's capture code (tools/site/edition/capture.py): it finds the controller
shown in a given output of the kernel's run (by the output's model id, or by its cell's source and its class),
sets the slider widget as a reader does, clicks Run when there is a Run button, and returns the figures — so a
page that shows anything else than what the live controller draws at that value (a wrong frame, a stale capture,
a mislabelled slider step) fails the test.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path

import nbformat

from tools.site.edition.execute import private_kernel_sockets  # the same kernel sockets as the build

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

_ORACLE = r'''
def _static_edition_controller(model_ids, class_name):
    # the one controller whose figures all lie in the widget tree of one of model_ids (of class class_name if given)
    import gc, warnings
    from ipywidgets.widgets.widget import _instances
    from symsgd_core.ui.base import Controller
    trees = []
    for model_id in model_ids:
        tree, stack = [], [_instances[model_id]]
        while stack:
            w = stack.pop()
            tree.append(w)
            stack.extend(getattr(w, "children", ()) or ())
        trees.append(tree)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # type(), not isinstance(): isinstance reads __class__, which raises ReferenceError on a dead weakref.proxy
        # among the objects (numba and others keep such proxies)
        controllers = [o for o in gc.get_objects() if issubclass(type(o), Controller) and o.figures]
    found = []
    for tree in trees:
        inside = {id(w) for w in tree}
        found += [(c, tree) for c in controllers if all(id(f) in inside for f in c.figures)
                  and (class_name is None or type(c).__name__ == class_name) and c not in [f[0] for f in found]]
    of_class = f" of class {class_name}" if class_name else ""
    assert len(found) == 1, f"{len(found)} controllers{of_class} draw into {model_ids}"
    return found[0]


def _static_edition_oracle(model_ids, class_name, slider, value, out_path):
    import re
    import ipywidgets
    from plotly.io.json import to_json_plotly
    ctl, tree = _static_edition_controller(model_ids, class_name)
    ctl.controls[slider].value = value
    runs = [w for w in tree if isinstance(w, ipywidgets.Button) and re.search(r"\brun\b", w.description or "", re.I)]
    if runs:
        runs[0].click()
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(to_json_plotly({"class": type(ctl).__name__, "figures": [fig.to_dict() for fig in ctl.figures],
                                "status": ctl.status.value}))


def _static_edition_oracle_of_cell(source, class_name, slider, value, out_path):
    # in a kernel JupyterLab ran: the widgets displayed by the cell with this source (recorded by the lessons'
    # server's start-up file, tests/browser/kernel_startup/)
    shown = [m for s, m in globals().get("_symsgd_widget_displays", ()) if s.strip() == source.strip()]
    assert shown, "no widget display recorded for that cell (is tests/browser/kernel_startup/ installed?)"
    _static_edition_oracle(shown, class_name, slider, value, out_path)
'''


class LiveNotebook:
    """``path`` executed in a fresh ``python3`` kernel that stays up until :meth:`stop`."""

    def __init__(self, path: Path, timeout_s: float = 900):
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.nb = None
        self._stack = contextlib.ExitStack()
        self._tmp = Path(tempfile.mkdtemp(prefix="symsgd-oracle-"))
        self._client = None
        self._calls = 0

    def start(self) -> LiveNotebook:
        from nbclient import NotebookClient

        self.nb = nbformat.read(self.path, as_version=4)
        config = self._stack.enter_context(private_kernel_sockets())  # two workers start kernels at once
        self._client = NotebookClient(self.nb, timeout=self.timeout_s, kernel_name="python3", config=config,
                                      resources={"metadata": {"path": str(self.path.parent)}})
        self._stack.enter_context(self._client.setup_kernel())
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type == "code":
                self._client.execute_cell(cell, index)
        self._run(_ORACLE)
        return self

    def stop(self) -> None:
        self._stack.close()

    def __enter__(self) -> LiveNotebook:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _run(self, source: str) -> None:
        cell = nbformat.v4.new_code_cell(source)
        self.nb.cells.append(cell)
        try:
            self._client.execute_cell(cell, len(self.nb.cells) - 1)
        finally:
            self.nb.cells.pop()
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        if errors:
            raise RuntimeError("the live kernel raised:\n" + "\n".join(errors[0].get("traceback", [])))

    def model_id(self, cell: int, output: int) -> str:
        """The model id of the widget shown in output ``output`` of cell ``cell`` of this kernel's run."""
        out = self.nb.cells[cell].outputs[output]
        view = out.get("data", {}).get(WIDGET_VIEW)
        if not view:
            raise AssertionError(f"{self.path.name}: cell {cell} output {output} is not a widget in the live run")
        return view["model_id"]

    def draw_at(self, cell: int, output: int, slider: str, value, class_name: str | None = None) -> dict:
        """What the controller shown at (cell, output) draws with ``slider`` set to ``value`` (and Run pressed):
        ``{"class", "figures": [plotly dicts], "status"}`` (``class_name`` is checked by the caller here)."""
        self._calls += 1
        path = self._tmp / f"draw-{self._calls}.json"
        self._run(f"_static_edition_oracle([{self.model_id(cell, output)!r}], None, {slider!r}, {value!r}, "
                  f"{str(path)!r})")
        return json.loads(path.read_text(encoding="utf-8"))


class LessonKernel:
    """The oracle from the kernel the notebook's JupyterLab pass ran it in (kept for this test:
    tests/browser/lesson_kernels.py), asked over its connection file; the kernel is shut down by :meth:`stop`.

    JupyterLab's outputs are not in this process, so a page's controller is found by the source of the cell that
    displayed it (recorded in the kernel) and its class, not by the output's model id."""

    def __init__(self, kept, path: Path, timeout_s: float = 300):
        self.kept, self.path, self.timeout_s = kept, Path(path), timeout_s
        self.nb = nbformat.read(self.path, as_version=4)
        self._tmp = Path(tempfile.mkdtemp(prefix="symsgd-oracle-"))
        self._client = None
        self._calls = 0

    def start(self) -> LessonKernel:
        from jupyter_client import BlockingKernelClient

        self._client = BlockingKernelClient(connection_file=str(self.kept.connection_file))
        self._client.load_connection_file()
        self._client.start_channels()
        self._run(_ORACLE)
        return self

    def stop(self) -> None:
        try:
            if self._client is not None:
                self._client.stop_channels()
        finally:
            self.kept.shutdown()

    def _run(self, source: str) -> None:
        from page_load import _reply_to  # (tests/browser: the suite's kernel-client helpers)

        msg_id = self._client.execute(source, store_history=False)
        reply = _reply_to(msg_id, self._client.get_shell_msg, self.timeout_s)["content"]
        if reply.get("status") != "ok":
            raise RuntimeError("the lesson's kernel raised:\n" + "\n".join(reply.get("traceback", [])
                                                                           or [str(reply)]))

    def draw_at(self, cell: int, output: int, slider: str, value, class_name: str) -> dict:
        """What the controller of class ``class_name`` shown by cell ``cell`` draws with ``slider`` set to
        ``value`` (and Run pressed): ``{"class", "figures", "status"}`` (``output`` is not needed here)."""
        self._calls += 1
        path = self._tmp / f"draw-{self._calls}.json"
        source = self.nb.cells[cell].source
        self._run(f"_static_edition_oracle_of_cell({source!r}, {class_name!r}, {slider!r}, {value!r}, "
                  f"{str(path)!r})")
        return json.loads(path.read_text(encoding="utf-8"))
