"""Jupyter server extension: serve plotly's FigureWidget JavaScript once per page, from the page's own server.

Every plotly ``FigureWidget`` normally carries plotly's ~5 MB widget bundle in its own state, so a page compiles
it once per figure, and anywidget gives each figure 2 s to start: on a slow or busy machine figures stay empty.
With this extension enabled (it is, in any environment where the ``symsgd-core`` distribution is installed: see
``jupyter-config/``), the server

* serves the installed plotly's bundle as one versioned static file, ``<base_url>symsgd/static/plotly-widget-
  <plotly version>.js`` (no token needed, cached by the browser), and
* tells the kernels it starts where that file is, relative to the server's base URL, in the environment variable
  :data:`PLOTLY_BUNDLE_ENV`.

:mod:`symsgd_jupyter.plotly_loading` reads that variable in the kernel and gives every FigureWidget a tiny module
that imports the bundle from the page's own origin and base URL (``jupyter-config-data``), whatever host name,
port or prefix (JupyterHub, Binder) the reader uses. Classroom mode (``tools/classroom.py``, Voilà) serves the
same file from its template's static folder and sets the same variable.

Saving: the extension also registers the contents manager's save hooks of :mod:`symsgd_jupyter.saving`, so a
notebook saved after a run never reopens with "Error displaying widget" (a widget output needs the live kernel) and
the repository's notebooks stay as committed (no outputs) when a reader runs and saves them.

The kernel's side of the plumbing lives in this package too, installed by :func:`symsgd_jupyter.kernel.install` on
first use (never at import): :mod:`.plotly_loading` (the figures' loader), :mod:`.a11y` (accessible names),
:mod:`.compact_output` and :mod:`.mode` (classroom mode). Their JavaScript is in ``.js`` files beside them.

This module imports nothing of the scientific stack (nor those kernel modules), so the server starts as fast as
before.

No pop-up on a projector, one thread for widgets: :func:`enable` also writes JupyterLab's settings overrides for
the environment (:func:`lab_overrides_file`, ``<prefix>/share/jupyter/lab/settings/overrides.json``) with
:data:`LAB_OVERRIDES`: JupyterLab never asks "Would you like to get notified about official Jupyter news?", never
asks the internet for news or updates, handles widget messages on the kernel's main thread (not on a subshell), and
wraps long code lines at the cell's edge; a reader may still change each of them in Settings.

Enabling: a regular install (``pip install .``, a wheel) writes the server configuration file itself (pyproject's
``data-files``). An editable install (``pip install -e .``, as ``make`` and ``environment.yml`` do) cannot, so run
``python -m symsgd_jupyter --enable`` once in the environment (``make`` does it for ``.venv``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path

#: Environment variable naming the bundle's URL *relative to the server's base URL*
#: (e.g. ``symsgd/static/plotly-widget-7.1.0.js``); read by :mod:`symsgd_jupyter.plotly_loading`.
PLOTLY_BUNDLE_ENV = "SYMSGD_PLOTLY_BUNDLE"
#: URL folder (relative to the base URL) under which this extension serves the bundle.
URL_FOLDER = "symsgd/static"


def plotly_bundle() -> tuple[Path, str]:
    """The installed plotly's FigureWidget bundle (an ES module) and the versioned file name it is served under.

    Returns:
        ``(path of plotly/package_data/widgetbundle.js, "plotly-widget-<plotly version>.js")``; the path may not
        exist if plotly is missing or changed its layout (callers check ``path.is_file()``).
    """
    spec = importlib.util.find_spec("plotly")
    folder = Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else Path()
    try:
        version = importlib.metadata.version("plotly")
    except importlib.metadata.PackageNotFoundError:
        version = "missing"
    return folder / "package_data" / "widgetbundle.js", f"plotly-widget-{version}.js"


#: The server configuration that enables this extension (the same as ``jupyter-config/…/symsgd_jupyter.json``,
#: which a test keeps equal).
SERVER_CONFIG = {"ServerApp": {"jpserver_extensions": {"symsgd_jupyter": True}}}


def config_file(prefix: str | os.PathLike | None = None) -> Path:
    """Where the environment's Jupyter servers read :data:`SERVER_CONFIG` from (default prefix: ``sys.prefix``)."""
    import sys

    root = Path(sys.prefix if prefix is None else prefix)
    return root / "etc" / "jupyter" / "jupyter_server_config.d" / "symsgd_jupyter.json"


#: JupyterLab settings defaults this project sets for its environment (keys as in JupyterLab 4's schemas):
#:
#: * ``notification``: ``fetchNews`` is the string "true", "false" or "none" = ask, which is the pop-up;
#: * ``kernels-settings``: ``commsOverSubshells`` "disabled". JupyterLab ≥ 4.4 otherwise sends every widget message
#:   to a kernel *subshell* (a second thread in ipykernel ≥ 7), so widget callbacks run while the main thread is
#:   still running cells: during Run All each figure's state request (``symsgd_jupyter.plotly_loading``) would copy
#:   a figure that a running cell may be changing, and a slider moved during a long cell would re-run a controller
#:   that the cell is using. The controllers are written for one thread: a widget message waits for the running
#:   cell, as in every Jupyter before 4.4 (JupyterLab's own issue #19719 discusses the same default).
LAB_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/apputils-extension:kernels-settings": {"commsOverSubshells": "disabled"},
    # code lines wrap at the cell's edge: a lesson's comment or call stays readable at 1280 px beside the file
    # browser, rather than running on out of sight (JupyterLab's default is {"lineNumbers": false, "lineWrap": false})
    "@jupyterlab/notebook-extension:tracker": {"codeCellConfig": {"lineNumbers": False, "lineWrap": True}},
}


def lab_overrides_file(prefix: str | os.PathLike | None = None) -> Path:
    """JupyterLab's settings overrides of the environment at ``prefix`` (default ``sys.prefix``)."""
    import sys

    root = Path(sys.prefix if prefix is None else prefix)
    return root / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


def write_lab_overrides(prefix: str | os.PathLike | None = None) -> Path:
    """Merge :data:`LAB_OVERRIDES` into the environment's ``overrides.json`` (other settings kept; idempotent).

    A file that is not a JSON object is left alone and reported (ValueError), never overwritten.
    """
    import json

    path = lab_overrides_file(prefix)
    current: dict = {}
    if path.is_file():
        try:
            current = json.loads(path.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not valid JSON ({exc}); fix or remove it, then run --enable again") from exc
        if not isinstance(current, dict):
            raise ValueError(f"{path} does not hold a JSON object; fix or remove it, then run --enable again")
    for plugin, values in LAB_OVERRIDES.items():
        current[plugin] = {**current.get(plugin, {}), **values}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=2) + "\n", encoding="utf-8")
    return path


def enable(prefix: str | os.PathLike | None = None) -> Path:
    """Write :data:`SERVER_CONFIG` and merge :data:`LAB_OVERRIDES` for the environment at ``prefix``
    (idempotent); return the server configuration file written."""
    import json

    path = config_file(prefix)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(SERVER_CONFIG, indent=2) + "\n", encoding="utf-8")
    write_lab_overrides(prefix)
    return path


def _jupyter_server_extension_points():
    return [{"module": "symsgd_jupyter"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Register the save hooks and the bundle's handler, and tell future kernels where it is (see the module
    docstring)."""
    from jupyter_server.utils import url_path_join
    from tornado import web

    from . import saving

    if not saving.register(getattr(serverapp, "contents_manager", None)):
        serverapp.log.warning("symsgd: this contents manager takes no save hooks; a saved notebook keeps its widget "
                              "outputs (\"Error displaying widget\" when reopened)")
    path, name = plotly_bundle()
    if not path.is_file():
        serverapp.log.warning("symsgd: plotly's widget bundle not found at %s; figures load plotly's code "
                              "per figure (slower pages)", path)
        return

    class PlotlyBundleHandler(web.StaticFileHandler):
        """Serves exactly one file, plotly's bundle, under its versioned name (immutable, cached for a year)."""

        def parse_url_path(self, url_path: str) -> str:
            if url_path != name:
                raise web.HTTPError(404)
            return path.name

        def set_extra_headers(self, url_path: str) -> None:
            self.set_header("Cache-Control", "public, max-age=31536000, immutable")

    pattern = url_path_join(serverapp.web_app.settings.get("base_url", "/"), URL_FOLDER, "(.*)")
    serverapp.web_app.add_handlers(".*$", [(pattern, PlotlyBundleHandler, {"path": str(path.parent)})])
    os.environ[PLOTLY_BUNDLE_ENV] = f"{URL_FOLDER}/{name}"
    serverapp.log.info("symsgd: serving plotly's widget bundle once per page at %s", pattern.replace("(.*)", name))
