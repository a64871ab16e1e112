"""What a saved notebook keeps: the stripping of ``make strip`` and the save hooks of the server extension.

A widget output (a plotly ``FigureWidget``, a controller's sliders, a *Check yourself* panel) is a view of a model
that lives in the running kernel. JupyterLab saves the view's reference (an ``application/vnd.jupyter.widget-view+json``
output) when it saves a notebook that was run, and autosaves every two minutes, so a notebook reopened later shows
"Error displaying widget: model not found" in place of every figure until Run All: the kernel that had the models is
gone, and no saved state can bring a live figure back. The repository's notebooks are committed without outputs, so
the same save also left them modified in git.

The server extension (:func:`symsgd_jupyter._load_jupyter_server_extension`) registers two contents-manager save
hooks, jupyter_server's own way to change what a save writes (they run in any front end that saves through the
server: JupyterLab, Notebook 7; added to, not replacing, a ``pre_save_hook`` the user configured):

* :func:`pre_save_hook`: a notebook that git tracks *committed without outputs* (this project's lessons, see
  :func:`committed_stripped`) is saved stripped exactly as ``make strip`` strips it (:func:`strip`, the one
  stripping function, also used by ``python -m tools.strip_notebooks``), so running and saving leaves ``git status``
  clean. Any other notebook (a reader's copy, their own work) keeps its outputs, but each widget output becomes a
  short note, :data:`NOT_SAVED_NOTE` (Run All shows it again), and the saved widget state goes.
* :func:`post_save_hook`: jupyter_server writes notebooks with sorted keys, the committed files are in the key
  order ``make strip`` left them in; when the stripped notebook is the committed one as data, the committed bytes
  are written back (same modification time, so JupyterLab sees no "file changed on disk").

This module imports only the standard library (the server starts as fast as before).
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)

#: The kernelspec every committed notebook carries (JupyterLab opens them without a kernel-picker dialog).
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
#: The MIME type of a widget output: a reference to a model in the kernel that drew it.
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: What a saved widget output becomes in a notebook that keeps its outputs.
NOT_SAVED_TEXT = ("Interactive output (figure, sliders or answer box) not saved with the notebook: it needs the "
                  "live kernel. Run → Run All Cells shows it again.")
NOT_SAVED_NOTE = {"output_type": "display_data", "metadata": {},
                  "data": {"text/markdown": f"*{NOT_SAVED_TEXT}*", "text/plain": NOT_SAVED_TEXT}}


def strip(nb: dict) -> dict:
    """Return ``nb`` (a notebook as a JSON dict) stripped in place, as committed: no outputs, no execution counts, no
    saved widget state, the :data:`KERNELSPEC` kernelspec, and of ``language_info`` only the language's name (a
    kernel writes its Python version there on every run)."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        meta = cell.get("metadata", {})
        for key in ("execution", "collapsed", "scrolled"):
            meta.pop(key, None)
    meta = nb.setdefault("metadata", {})
    meta.pop("widgets", None)
    meta["kernelspec"] = dict(KERNELSPEC)
    if isinstance(meta.get("language_info"), dict):
        meta["language_info"] = {"name": meta["language_info"].get("name", "python")}
    return nb


def dumps(nb: dict) -> str:
    """The committed text of a notebook (``make strip`` writes this)."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def strip_widget_views(nb: dict) -> int:
    """Replace every widget output of ``nb`` by :data:`NOT_SAVED_NOTE` and drop the saved widget state, in place;
    every other output stays. Returns the number of widget outputs replaced."""
    replaced = 0
    for cell in nb.get("cells", []):
        outputs = cell.get("outputs") or []
        for i, out in enumerate(outputs):
            if WIDGET_VIEW in (out.get("data") or {}):
                outputs[i] = copy.deepcopy(NOT_SAVED_NOTE)
                replaced += 1
    nb.get("metadata", {}).pop("widgets", None)
    return replaced


def committed_stripped(os_path: str | os.PathLike) -> bytes | None:
    """The text git has staged for the notebook at ``os_path`` (its index entry: the committed file unless the
    reader staged a change), if that notebook is committed without outputs; None when git is missing, the file is
    not tracked, or it was committed with outputs (a project that keeps its outputs keeps them)."""
    path = Path(os_path)
    try:
        proc = subprocess.run(["git", "-C", str(path.parent), "show", f":./{path.name}"], capture_output=True,
                              timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    try:
        committed = json.loads(proc.stdout.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(committed, dict) or strip(copy.deepcopy(committed)) != committed:
        return None
    return proc.stdout


#: Committed bytes to write back after a save, by OS path (set by pre_save_hook, used once by post_save_hook).
_RESTORE: dict[str, bytes] = {}


def _os_path(contents_manager, path: str) -> str | None:
    get = getattr(contents_manager, "_get_os_path", None)  # file-backed managers only (FileContentsManager & co.)
    if get is None:
        return None
    try:
        return str(get(path))
    except Exception:  # a path outside the root: the manager's save refuses it with its own message
        return None


def pre_save_hook(model: dict, path: str, contents_manager=None, **kwargs) -> None:
    """jupyter_server pre-save hook: strip a notebook that is about to be saved (see the module docstring)."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    nb = model["content"]
    os_path = _os_path(contents_manager, path)
    if os_path is not None:
        _RESTORE.pop(os_path, None)
    committed = committed_stripped(os_path) if os_path is not None else None
    if committed is None:
        n = strip_widget_views(nb)
        if n:
            getattr(contents_manager, "log", log).info("symsgd: %s saved with %d widget output(s) replaced by a "
                                                       "note", path, n)
        return
    strip(nb)
    if _as_written(nb) == _as_written(json.loads(committed)):
        _RESTORE[os_path] = committed


def _as_written(nb: dict) -> str:
    """The text jupyter_server would write for ``nb`` (keys sorted, multi-line strings as lists of lines, as in the
    file; a notebook read by the server, or sent by JupyterLab, holds each cell's source as one string)."""
    import nbformat

    return nbformat.writes(nbformat.from_dict(copy.deepcopy(nb)), version=nbformat.NO_CONVERT)


def post_save_hook(model: dict, os_path: str, contents_manager=None, **kwargs) -> None:
    """jupyter_server post-save hook: a tracked notebook saved unchanged gets its committed bytes back."""
    committed = _RESTORE.pop(str(os_path), None)
    if committed is None:
        return
    with contextlib.suppress(OSError):
        if Path(os_path).read_bytes() == committed:
            return
        before = os.stat(os_path)
        Path(os_path).write_bytes(committed)
        os.utime(os_path, ns=(before.st_atime_ns, before.st_mtime_ns))


def register(contents_manager) -> bool:
    """Register both hooks on ``contents_manager`` (jupyter_server >= 2: hooks add up). False if it cannot."""
    if not (hasattr(contents_manager, "register_pre_save_hook") and
            hasattr(contents_manager, "register_post_save_hook")):
        return False
    contents_manager.register_pre_save_hook(pre_save_hook)
    contents_manager.register_post_save_hook(post_save_hook)
    return True
