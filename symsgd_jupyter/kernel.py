"""The kernel's side of the Jupyter plumbing, installed on first use, never at import.

Importing :mod:`symsgd_core` or any of its modules changes nothing in the kernel. :func:`install` is the one step
that does, and symsgd_core calls it itself the first time it builds something to display (a controller, an
exercise panel, a claims line):

* every plotly ``FigureWidget`` created from then on loads plotly's code once per page from the notebook server,
  when the server serves it (:mod:`.plotly_loading`; plotly's ``BaseFigureWidget._esm`` is replaced);
* in classroom mode a cell's printed text shows as one compact line (:mod:`.compact_output`; two IPython
  ``pre_run_cell``/``post_run_cell`` callbacks are registered).

:func:`install` is idempotent: the figures' module is set once per process, the callbacks once per shell.
"""

from __future__ import annotations

from . import compact_output, plotly_loading

__all__ = ["install", "installed"]

_state = {"figures": False}


def install(shell=None, environ: dict | None = None) -> None:
    """Install the plumbing (see the module docstring); calling it again changes nothing.

    Args:
        shell: the IPython shell (default: the running one, if any).
        environ: the environment to read the server's settings from (default ``os.environ``).
    """
    if not _state["figures"]:
        plotly_loading.configure_from_environment(environ)
        _state["figures"] = True
    compact_output.install(shell, environ)


def installed() -> bool:
    """Whether :func:`install` has run in this process."""
    return _state["figures"]
