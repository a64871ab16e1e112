"""environment.yml (conda) and pyproject.toml (pip) must declare the same packages,
and the lock must pin every one of them, so the three set-ups cannot drift."""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: conda-forge names that differ from the PyPI names.
CONDA_TO_PYPI = {"pytorch-cpu": "torch", "pytorch": "torch"}
#: conda entries that are not Python packages of the project.
CONDA_ONLY = {"python", "pip"}


def _name(requirement: str) -> str:
    """Normalised distribution name of a requirement string like ``numpy>=1.26``."""
    name = re.split(r"[<>=!~;\[ ]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject_packages(text: str) -> set[str]:
    data = tomllib.loads(text)
    deps = data["project"]["dependencies"] + data["project"]["optional-dependencies"]["test"]
    return {_name(d) for d in deps}


def conda_packages(text: str) -> set[str]:
    data = yaml.safe_load(text)
    names = set()
    for dep in data["dependencies"]:
        if isinstance(dep, str):
            n = _name(dep)
            n = CONDA_TO_PYPI.get(n, n)
            if n not in CONDA_ONLY:
                names.add(n)
        elif isinstance(dep, dict):  # the pip: section (packages conda-forge does not have), minus the project
            names.update(_name(d) for d in dep.get("pip", []) if not d.startswith("-"))
    return names


def drift(pyproject_text: str, conda_text: str) -> tuple[set[str], set[str]]:
    """(missing from environment.yml, extra in environment.yml)."""
    pip, conda = pyproject_packages(pyproject_text), conda_packages(conda_text)
    return pip - conda, conda - pip


def test_environment_yml_matches_pyproject():
    missing, extra = drift((ROOT / "pyproject.toml").read_text(), (ROOT / "environment.yml").read_text())
    assert not missing, f"environment.yml lacks {sorted(missing)} declared in pyproject.toml"
    assert not extra, f"environment.yml declares {sorted(extra)} that pyproject.toml does not"


@pytest.mark.parametrize("victim", ["numpy", "plotly", "anywidget", "pytest"])
def test_dropping_a_package_from_environment_yml_is_detected(victim):
    text = (ROOT / "environment.yml").read_text()
    broken = "\n".join(line for line in text.splitlines() if not re.match(rf"\s*-\s*{victim}\b", line))
    missing, _ = drift((ROOT / "pyproject.toml").read_text(), broken)
    assert victim in missing


def test_lock_pins_every_declared_package_exactly():
    pins = {}
    for line in (ROOT / "requirements-lock.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"lock line {line!r} is not an exact '==' pin"
            pins[_name(name)] = version
    declared = pyproject_packages((ROOT / "pyproject.toml").read_text())
    assert declared <= set(pins), f"not pinned in requirements-lock.txt: {sorted(declared - set(pins))}"
    # torch must be the CPU build that lies on disk, never an unpinned (CUDA) download.
    assert pins["torch"] == "2.13.0"


def test_every_direct_import_of_the_package_is_declared():
    """Each third-party module imported by symsgd_core (or its server extension, symsgd_jupyter) is a declared
    runtime dependency."""
    import ast
    import sys

    import_to_dist = {"yaml": "pyyaml", "sklearn": "scikit-learn", "IPython": "ipython"}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(d) for d in project["dependencies"]}
    runtime |= {_name(d) for d in project["optional-dependencies"]["sweep"]}  # dask: imported only with a client
    found = set()
    own = {"symsgd_core", "symsgd_jupyter"}
    for path in [p for pkg in sorted(own) for p in (ROOT / pkg).rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                mods = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            else:
                continue
            for mod in (m.split(".")[0] for m in mods):
                if mod not in sys.stdlib_module_names and mod not in own:
                    found.add(import_to_dist.get(mod, mod))
    assert {"numpy", "plotly", "ipywidgets", "jupyter_server"} <= found  # the scan sees the imports at all
    undeclared = {_name(f) for f in found} - runtime
    assert not undeclared, f"the package imports {sorted(undeclared)} but pyproject.toml does not declare them"
