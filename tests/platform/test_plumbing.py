"""Nothing is patched at import: importing the package, its science topics or its figures leaves plotly's
``BaseFigureWidget`` and IPython's hooks as they were; the first figure installs the plumbing, once.

Each check runs in a fresh interpreter (an import already done in this process would hide a side effect), with an
IPython shell and the environment in which the plumbing does change something: a served plotly bundle
(``SYMSGD_PLOTLY_BUNDLE``) and classroom mode (``SYMSGD_MODE=classroom``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: The modules whose import must change nothing: the package, each science topic, and the figures.
MODULES = ("symsgd_core", "symsgd_core.core", "symsgd_core.balance", "symsgd_core.lifting", "symsgd_core.rank_jumps",
           "symsgd_core.stationary", "symsgd_core.sde_noise", "symsgd_core.ui", "symsgd_core.ui.start",
           "symsgd_core.ui.balance", "symsgd_core.ui.lifting", "symsgd_core.ui.stationary",
           "symsgd_core.ui.rank_jumps", "symsgd_core.ui.sde_noise", "symsgd_core.lesson.exercise_panel",
           "symsgd_core.lesson.reveal", "symsgd_core.lesson.claims_cell", "symsgd_jupyter", "symsgd_jupyter.kernel",
           "symsgd_jupyter.plotly_loading", "symsgd_jupyter.a11y", "symsgd_jupyter.compact_output",
           "symsgd_jupyter.distinguish", "symsgd_jupyter.figure_checks", "symsgd_jupyter.handled_inputs")

_SCRIPT = textwrap.dedent(r"""
    import importlib, json, sys
    from IPython.core.interactiveshell import InteractiveShell
    from plotly.basewidget import BaseFigureWidget

    shell = InteractiveShell.instance()
    out = sys.__stdout__

    def state():
        formatters = {mime: [sorted(map(repr, f.type_printers)), sorted(map(repr, f.deferred_printers))]
                      for mime, f in shell.display_formatter.formatters.items()}
        esm = BaseFigureWidget.__dict__.get("_esm")
        return {"esm": [id(esm), isinstance(esm, str) and "plotly-widget-test.js" in esm],
                "events": {name: [repr(cb) for cb in cbs] for name, cbs in shell.events.callbacks.items()},
                "formatters": formatters, "stdout": sys.stdout is out}

    before = state()
    changed = {}
    for name in sys.argv[1].split(","):
        importlib.import_module(name)
        now = state()
        if now != before:
            changed[name] = {k: [before[k], now[k]] for k in now if now[k] != before[k]}
            before = now
    report = {"changed_by_import": changed}
    if sys.argv[2] == "display":
        from symsgd_core.ui.start import BalanceTeaser
        teaser = BalanceTeaser()
        teaser._ipython_display_()
        BalanceTeaser()._ipython_display_()
        after = state()
        sys.stdout = out  # the classroom collector holds the cell's printed text; the report goes to the real stdout
        report["esm_after"] = after["esm"]
        report["figure_served"] = "plotly-widget-test.js" in teaser.figure._esm
        report["events_after"] = after["events"]
    out.write("REPORT " + json.dumps(report) + "\n")
""")


def _run(modules, display: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "SYMSGD_PLOTLY_BUNDLE": "symsgd/static/plotly-widget-test.js", "SYMSGD_MODE": "classroom"}
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, ",".join(modules), "display" if display else "-"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("REPORT ")]
    return json.loads(line[len("REPORT "):])


@pytest.mark.slow
def test_importing_the_package_and_its_figures_changes_nothing_and_the_first_figure_installs_once():
    report = _run(MODULES, display=True)
    assert report["changed_by_import"] == {}, f"an import changed the kernel: {report['changed_by_import']}"
    # the first controller installed the plumbing: its figure loads plotly's code from the server ...
    assert report["esm_after"][1] and report["figure_served"]
    # ... and classroom mode's two callbacks are registered once, however many figures were made and displayed
    events = report["events_after"]
    assert [c for c in events["pre_run_cell"] if "_Collector.start" in c] != []
    assert len([c for c in events["pre_run_cell"] if "_Collector" in c]) == 1
    assert len([c for c in events["post_run_cell"] if "_Collector" in c]) == 1
