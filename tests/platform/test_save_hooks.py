"""A notebook that was run and saved reopens without "Error displaying widget", and the repository's notebooks stay
as committed: the save hooks of ``symsgd_jupyter.saving``, registered by the server extension.

Before the hooks, JupyterLab's (auto)save of a run notebook wrote each figure as a widget-view output
(``application/vnd.jupyter.widget-view+json``, a reference to a model in the kernel); reopened, every figure showed
"Error displaying widget: model not found" until Run All, and ``git status`` showed the notebook modified (outputs,
execution counts, the kernel's ``language_info``). Reproduced in JupyterLab in headless Chromium (Run All,
Ctrl+S, reopen); these tests pin the behaviour on the server side, where the file is written.
"""

from __future__ import annotations

import asyncio
import copy
import json
import shutil
import subprocess
import types
import urllib.request
from pathlib import Path

import pytest

import symsgd_jupyter
from symsgd_jupyter import saving
from tools import strip_notebooks

REPO = Path(__file__).resolve().parents[2]
LESSON = REPO / "notebooks" / "00_start_here.ipynb"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

#: What JupyterLab sends for a figure cell after Run All (ipywidgets 8 / anywidget: a view of a kernel model).
WIDGET_OUTPUT = {"output_type": "display_data", "metadata": {},
                 "data": {"text/plain": "FigureWidget({...})",
                          saving.WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": "0123abcd"}}}
STREAM_OUTPUT = {"output_type": "stream", "name": "stdout", "text": "checked: True\n"}
WIDGET_STATE = {"application/vnd.jupyter.widget-state+json": {"version_major": 2, "version_minor": 0, "state": {}}}
LANGUAGE_INFO = {"name": "python", "version": "3.11.7", "mimetype": "text/x-python", "file_extension": ".py",
                 "codemirror_mode": {"name": "ipython", "version": 3}, "pygments_lexer": "ipython3",
                 "nbconvert_exporter": "python"}


def _run(nb: dict) -> dict:
    """``nb`` as JupyterLab saves it after Run All: every code cell counted, the first two with a figure and a
    printed line, the kernel's language_info, saved widget state, a cell's timing metadata."""
    nb = copy.deepcopy(nb)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for n, cell in enumerate(code, 1):
        cell["execution_count"] = n
        cell["outputs"] = [copy.deepcopy(WIDGET_OUTPUT), copy.deepcopy(STREAM_OUTPUT)] if n <= 2 else []
    code[0]["metadata"]["execution"] = {"iopub.status.idle": "2026-12-02T22:56:37.000Z"}
    nb["metadata"]["language_info"] = dict(LANGUAGE_INFO)
    nb["metadata"]["widgets"] = copy.deepcopy(WIDGET_STATE)
    return nb


def _manager(root: Path):
    """The contents manager JupyterLab's server uses, with the hooks registered as the extension registers them."""
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

    cm = AsyncLargeFileManager(root_dir=str(root))
    assert saving.register(cm)
    return cm


def _save(cm, name: str, nb: dict) -> dict:
    return asyncio.run(cm.save({"type": "notebook", "format": "json", "content": nb}, name))


def _load(cm, name: str) -> dict:
    """The notebook as the server hands it to JupyterLab (a plain JSON dict)."""
    return json.loads(json.dumps(asyncio.run(cm.get(name))["content"]))


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout


def _committed_lesson(folder: Path) -> Path:
    """A repository holding one of the lessons, committed as in this repository."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(LESSON, folder / LESSON.name)
    (folder / ".gitignore").write_text(".ipynb_checkpoints/\n")
    _git(folder, "init", "-q")
    _git(folder, "add", ".")
    _git(folder, "commit", "-qm", "lesson")
    return folder / LESSON.name


def _widget_views(nb: dict) -> int:
    return sum(saving.WIDGET_VIEW in (o.get("data") or {}) for c in nb["cells"] for o in c.get("outputs", []))


def test_a_reader_notebook_keeps_its_outputs_but_no_widget_view_or_widget_state(tmp_path):
    shutil.copyfile(LESSON, tmp_path / "mine.ipynb")  # not in a repository: a reader's own notebook
    cm = _manager(tmp_path)
    _save(cm, "mine.ipynb", _run(_load(cm, "mine.ipynb")))
    saved = json.loads((tmp_path / "mine.ipynb").read_text())
    assert _widget_views(saved) == 0, "a saved widget view reopens as 'Error displaying widget'"
    assert "widgets" not in saved["metadata"]
    code = [c for c in saved["cells"] if c["cell_type"] == "code"]
    first = code[0]["outputs"]
    assert [o["output_type"] for o in first] == ["display_data", "stream"]
    note = {mime: "".join(text) for mime, text in first[0]["data"].items()}  # saved as lists of lines
    assert note["text/plain"] == saving.NOT_SAVED_TEXT and "Run All" in note["text/markdown"]
    assert "".join(first[1]["text"]) == STREAM_OUTPUT["text"]  # ordinary outputs stay
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1))
    assert saved["metadata"]["language_info"] == LANGUAGE_INFO


@needs_git
def test_a_lesson_run_and_saved_is_byte_identical_to_the_committed_file(tmp_path):
    path = _committed_lesson(tmp_path / "repo")
    committed = path.read_bytes()
    cm = _manager(path.parent)
    model = _save(cm, path.name, _run(_load(cm, path.name)))
    assert path.read_bytes() == committed
    assert _git(path.parent, "status", "--porcelain") == ""
    # the model the save answered still describes the file (JupyterLab compares it before its next save)
    assert model["last_modified"] == asyncio.run(cm.get(path.name, content=False))["last_modified"]
    _save(cm, path.name, _run(_load(cm, path.name)))  # a second save, as autosave does
    assert path.read_bytes() == committed


@needs_git
def test_a_lesson_the_reader_edited_keeps_the_edit_and_is_saved_without_outputs(tmp_path):
    path = _committed_lesson(tmp_path / "repo")
    cm = _manager(path.parent)
    nb = _run(_load(cm, path.name))
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["source"] += "\nprint('my note')"
    _save(cm, path.name, nb)
    saved = json.loads(path.read_text())
    assert strip_notebooks.strip(copy.deepcopy(saved)) == saved, "saved with outputs or widget state"
    assert any("my note" in "".join(c["source"]) for c in saved["cells"])
    assert _git(path.parent, "status", "--porcelain") == " M 00_start_here.ipynb\n"


@needs_git
def test_a_notebook_committed_with_outputs_keeps_them(tmp_path):
    """Another project's notebook, committed with its outputs: only the widget views go (not every output)."""
    folder = tmp_path / "other"
    folder.mkdir()
    nb = _run(json.loads(LESSON.read_text()))
    (folder / "theirs.ipynb").write_text(json.dumps(nb))
    _git(folder, "init", "-q")
    _git(folder, "add", ".")
    _git(folder, "commit", "-qm", "theirs")
    assert saving.committed_stripped(folder / "theirs.ipynb") is None
    cm = _manager(folder)
    _save(cm, "theirs.ipynb", _load(cm, "theirs.ipynb"))
    saved = json.loads((folder / "theirs.ipynb").read_text())
    assert _widget_views(saved) == 0
    assert any(o["output_type"] == "stream" for c in saved["cells"] for o in c.get("outputs", []))
    assert any(c.get("execution_count") for c in saved["cells"])


def test_make_strip_and_the_save_hook_strip_with_one_function():
    assert strip_notebooks.strip is saving.strip and strip_notebooks.dumps is saving.dumps
    stripped = saving.strip(_run(json.loads(LESSON.read_text())))
    assert saving.dumps(stripped) == LESSON.read_text(encoding="utf-8")


def test_the_installed_server_config_enables_the_save_hooks(tmp_path, monkeypatch):
    """The configuration the package installs (and ``python -m symsgd_jupyter --enable`` writes) enables the
    extension; loading the extension registers both hooks on the server's contents manager."""
    shipped = json.loads((REPO / "jupyter-config" / "jupyter_server_config.d" / "symsgd_jupyter.json").read_text())
    assert shipped["ServerApp"]["jpserver_extensions"] == {"symsgd_jupyter": True}
    monkeypatch.delenv(symsgd_jupyter.PLOTLY_BUNDLE_ENV, raising=False)  # the extension sets it; restored after
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

    cm = AsyncLargeFileManager(root_dir=str(tmp_path))
    handlers = []
    web_app = types.SimpleNamespace(settings={"base_url": "/"}, add_handlers=lambda host, h: handlers.extend(h))
    import logging

    serverapp = types.SimpleNamespace(contents_manager=cm, web_app=web_app, log=logging.getLogger("test"))
    symsgd_jupyter._load_jupyter_server_extension(serverapp)
    assert saving.pre_save_hook in cm._pre_save_hooks and saving.post_save_hook in cm._post_save_hooks
    (tmp_path / "x.ipynb").write_text(saving.dumps(saving.strip(json.loads(LESSON.read_text()))))
    _save(cm, "x.ipynb", _run(_load(cm, "x.ipynb")))
    assert _widget_views(json.loads((tmp_path / "x.ipynb").read_text())) == 0


@needs_git
@pytest.mark.slow  # a server of its own: not in `make test-fast`
def test_a_real_jupyterlab_server_saves_without_widget_views_and_keeps_lessons_as_committed(tmp_path_factory):
    """End to end, without a browser: JupyterLab started as the browser suite starts it (the environment's own
    server configuration), a lesson in a git repository and a reader's copy saved through the contents REST API (the
    PUT JupyterLab's save sends), read back from disk."""
    from servers import start_lab

    server = start_lab(tmp_path_factory, source=LESSON, name="lab-save-hooks")
    try:
        folder = server.cwd
        committed = (folder / LESSON.name).read_bytes()
        (folder / ".gitignore").write_text(".ipynb_checkpoints/\n")
        _git(folder, "init", "-q")
        _git(folder, "add", ".")
        _git(folder, "commit", "-qm", "lesson")
        shutil.copyfile(folder / LESSON.name, folder / "my_copy.ipynb")

        def api(method: str, name: str, body: dict | None = None) -> dict:
            data = None if body is None else json.dumps(body).encode()
            req = urllib.request.Request(server.url(f"/api/contents/{name}"), data=data, method=method,
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.loads(r.read())

        for name in (LESSON.name, "my_copy.ipynb"):
            ran = _run(api("GET", name)["content"])
            assert _widget_views(ran) == 2
            api("PUT", name, {"type": "notebook", "format": "json", "content": ran})
        assert (folder / LESSON.name).read_bytes() == committed
        assert _git(folder, "status", "--porcelain") == "?? my_copy.ipynb\n"
        mine = json.loads((folder / "my_copy.ipynb").read_text())
        assert _widget_views(mine) == 0 and "widgets" not in mine["metadata"]
        notes = [o for c in mine["cells"] for o in c.get("outputs", []) if o.get("output_type") == "display_data"]
        assert len(notes) == 2 and all("".join(o["data"]["text/plain"]) == saving.NOT_SAVED_TEXT for o in notes)
    finally:
        server.stop()
