"""What the code says points inside the repository: no reference to a tracker's numbered items (an issue or a ticket
of a tracker the repository does not hold), which a newcomer cannot follow. Papers and libraries are named by what
they are, and a library's own tracker may be cited by naming the library ("JupyterLab's own issue #N"). (The
notebooks' own links and paths are checked in tests/test_notebook_text.py.)"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The folders and files of the project's own text: the package, the Jupyter plumbing, the tools, the tests, the
#: notebooks and the project's documents.
SOURCES = ("symsgd_core", "symsgd_jupyter", "tools", "tests", "notebooks")
DOCUMENTS = ("Makefile", "README.md", "ARCHITECTURE.md", "pyproject.toml", ".ci/run")
SUFFIXES = {".py", ".js", ".css", ".j2", ".ipynb", ".md", ".toml", ".json"}
#: "issue 27", "Issue 26, item 9", "issues 24 and 28", "ticket #3" (built from parts, so this file does not match).
TRACKER_REFERENCE = re.compile(r"\b(?:" + "issue" + r"s?|" + "ticket" + r")\s+#?\d+", re.IGNORECASE)
#: Libraries whose trackers may be cited, when named just before the reference.
LIBRARIES = ("JupyterLab", "Jupyter", "ipywidgets", "anywidget", "plotly", "Voilà", "Voila", "numba", "Dask", "pytest",
             "Playwright", "Chromium", "axe-core", "MathJax", "nbclient", "jupyter_client")
#: How far before a reference the library's name may stand (characters).
LIBRARY_REACH = 20


def _texts():
    for name in SOURCES:
        for path in sorted((REPO / name).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and ".ipynb_checkpoints" not in path.parts \
                    and "__pycache__" not in path.parts and path.stat().st_size < 2_000_000:
                yield path
    for name in DOCUMENTS:
        if (REPO / name).is_file():
            yield REPO / name


def tracker_references(text: str) -> list[str]:
    """The tracker references in ``text`` that do not name a library's tracker just before them."""
    return [m.group(0) for m in TRACKER_REFERENCE.finditer(text)
            if not any(lib in text[max(0, m.start() - LIBRARY_REACH):m.start()] for lib in LIBRARIES)]


def test_the_pattern_finds_tracker_numbers_and_nothing_else():
    assert tracker_references("as asked (issue 27, item 5); see Issues 24 and 28, ticket #3") == [
        "issue 27", "Issues 24", "ticket #3"]
    assert tracker_references("an issue with 3 runs; issues: none; arXiv 2305.16038; §4.1") == []
    assert tracker_references("the same default (JupyterLab's own issue #19719)") == []  # a library's tracker
    assert tracker_references("JupyterLab, as said in issue 26") == ["issue 26"]  # the library named too far away


def test_no_file_of_the_project_points_to_a_tracker_outside_the_repository():
    files = list(_texts())
    assert len(files) > 100, f"only {len(files)} files read: the walk is broken"
    found = [f"{path.relative_to(REPO)}: {ref}" for path in files if path != Path(__file__).resolve()
             for ref in tracker_references(path.read_text(encoding="utf-8", errors="replace"))]
    assert not found, "references a reader cannot follow (say what is meant instead):\n" + "\n".join(found)
