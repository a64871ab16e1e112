"""The oracle of the static-edition test: a notebook run top to bottom in its own kernel, kept running, whose
controllers are asked what they draw at a slider value.

This is deliberately *not* the builder's capture code (tools/site/edition/capture.py): it finds the controller
shown in a given output of this kernel's own run, sets the slider widget as a reader does, clicks Run when there
is a Run button, and returns the figures — so a page that shows anything else than what the live controller draws
at that value (a wrong frame, a stale capture, a mislabelled slider step) fails the test.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "site"))
from edition.execute import private_kernel_sockets  # noqa: E402  (the same kernel sockets as the build)

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

_ORACLE = r'''
def _static_edition_oracle(model_id, slider, value, out_path):
    import gc, re, warnings
    import ipywidgets
    from ipywidgets.widgets.widget import _instances
    from plotly.io.json import to_json_plotly
    from symsgd_core.ui.base import Controller
    root = _instances[model_id]
    tree, stack = [], [root]
    while stack:
        w = stack.pop()
        tree.append(w)
        stack.extend(getattr(w, "children", ()) or ())
    inside = {id(w) for w in tree}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owners = [o for o in gc.get_objects() if isinstance(o, Controller) and o.figures
                  and all(id(f) in inside for f in o.figures)]
    assert len(owners) == 1, f"{len(owners)} controllers draw into output {model_id}"
    ctl = owners[0]
    ctl.controls[slider].value = value
    runs = [w for w in tree if isinstance(w, ipywidgets.Button) and re.search(r"\brun\b", w.description or "", re.I)]
    if runs:
        runs[0].click()
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(to_json_plotly({"class": type(ctl).__name__, "figures": [fig.to_dict() for fig in ctl.figures],
                                "status": ctl.status.value}))
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

    def draw_at(self, cell: int, output: int, slider: str, value) -> dict:
        """What the controller shown at (cell, output) draws with ``slider`` set to ``value`` (and Run pressed):
        ``{"class", "figures": [plotly dicts], "status"}``."""
        self._calls += 1
        path = self._tmp / f"draw-{self._calls}.json"
        self._run(f"_static_edition_oracle({self.model_id(cell, output)!r}, {slider!r}, {value!r}, {str(path)!r})")
        return json.loads(path.read_text(encoding="utf-8"))
