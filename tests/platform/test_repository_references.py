"""What the code says points inside the repository: no reference to a tracker's numbered items (an issue or a ticket
of a tracker the repository does not hold), which a newcomer cannot follow. Papers and libraries are named by what
they are, and a library's own tracker may be cited by naming the library ("JupyterLab's own issue #N"). (The
notebooks' own links and paths are checked in tests/notebooks/test_notebook_text.py.)

The three documents keep their promises: the README stays a front door (short, with the two commands CI runs one
of), and every ``make`` target, link and source path they name exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The folders and files of the project's own text: the package, the Jupyter plumbing, the tools, the tests, the
#: notebooks and the project's documents.
SOURCES = ("symsgd_core", "symsgd_jupyter", "tools", "tests", "notebooks")
DOCUMENTS = ("Makefile", "README.md", "CONTRIBUTING.md", "ARCHITECTURE.md", "pyproject.toml", ".ci/run")
#: The project's documents in Markdown: the front door, the maintainers' guide, the design.
MARKDOWN = ("README.md", "CONTRIBUTING.md", "ARCHITECTURE.md")
#: The README is a front door: at most this many lines.
README_MAX_LINES = 100
#: The README's two commands: set up and read, and check everything (the one `.ci/run` runs).
README_COMMANDS = ("make lab", "make test")
#: A path a document names in backticks that must exist: under one of these folders, with no placeholder.
SOURCE_PATH = re.compile(r"`((?:symsgd_core|symsgd_jupyter|tools|tests|notebooks|\.ci)/[\w./-]+)`")
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


def makefile_targets(makefile: str) -> set[str]:
    """The targets a Makefile defines (``name:`` at the start of a line)."""
    return set(re.findall(r"^([A-Za-z][\w-]*):", makefile, re.MULTILINE))


def unknown_make_targets(text: str, targets: set[str]) -> list[str]:
    """The ``make X`` commands ``text`` names whose target X the Makefile does not define."""
    return sorted({name for name in re.findall(r"\bmake ([a-z][\w-]*)", text)} - targets)


def missing_paths(text: str, root: Path) -> list[str]:
    """The source paths (``SOURCE_PATH``) and relative Markdown links in ``text`` that do not exist under ``root``."""
    named = {p for p in SOURCE_PATH.findall(text) if "NN" not in p}  # `notebooks/NN_name.ipynb`: a pattern
    named |= set(re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text))
    return sorted(p for p in named if not (root / p).exists())


def test_the_document_checks_catch_a_broken_document(tmp_path):
    assert unknown_make_targets("run `make lab`, then make tset", {"lab", "test"}) == ["tset"]
    makefile = "lab: $(STAMP)\n\tjupyter lab\n# test: not a target\ntest-fast: x\n"
    assert makefile_targets(makefile) == {"lab", "test-fast"}
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "a.py").write_text("")
    text = "`tools/a.py`, `tools/b.py`, [guide](GUIDE.md), [x](https://example.org), `tools/*.py`, `tools/NN_x.py`"
    assert missing_paths(text, tmp_path) == ["GUIDE.md", "tools/b.py"]


def test_the_readme_is_a_front_door_with_the_command_ci_runs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    n_lines = len(readme.splitlines())
    assert n_lines <= README_MAX_LINES, f"README.md has {n_lines} lines; move detail to CONTRIBUTING.md"
    for command in README_COMMANDS:
        assert f"{command}  " in readme or f"{command} " in readme, f"the README does not give `{command}`"
    ci_commands = [ln.strip() for ln in (REPO / ".ci/run").read_text().splitlines()
                   if ln.strip() and not ln.lstrip().startswith("#")]
    assert ci_commands[-1] in README_COMMANDS, f".ci/run ends with {ci_commands[-1]!r}, not a README command"


def test_every_make_target_link_and_path_the_documents_name_exists():
    targets = makefile_targets((REPO / "Makefile").read_text())
    problems = []
    for name in MARKDOWN:
        text = (REPO / name).read_text(encoding="utf-8")
        problems += [f"{name}: make {t}" for t in unknown_make_targets(text, targets)]
        problems += [f"{name}: {p}" for p in missing_paths(text, REPO)]
    assert not problems, "named but not in the repository:\n" + "\n".join(problems)
