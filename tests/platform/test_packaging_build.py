"""The package builds, with build isolation, from the build tools pinned in requirements-lock.txt, and the build
backend has nothing to say about deprecations (a deprecation today is a build that stops working on a later
setuptools, e.g. `license = { text = ... }`, unsupported from 2027-02-18).

Uses the package registry: pip installs the lock's setuptools into the isolated build environment.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: Not copied into the build folder: environments, caches, outputs and what a build writes itself.
_NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "test-artifacts", "site", "site-instructor", "build", "dist", "*.egg-info", "__pycache__",
    ".hypothesis", ".pytest_cache", ".ipynb_checkpoints", "node_modules",
)


def lock_pins(*names: str) -> dict[str, str]:
    """Exact versions of ``names`` in requirements-lock.txt; fails if one is not pinned there."""
    pins = {}
    for line in (ROOT / "requirements-lock.txt").read_text().splitlines():
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", line.strip())
        if m:
            pins[m[1].lower()] = m[2]
    missing = [n for n in names if n not in pins]
    assert not missing, f"requirements-lock.txt does not pin the build tools {missing}"
    return {n: pins[n] for n in names}


def package_javascript() -> list[str]:
    """The packages' JavaScript files (anywidget modules read at run time), as paths inside a wheel."""
    found = sorted(p.relative_to(ROOT).as_posix() for pkg in ("symsgd_core", "symsgd_jupyter")
                   for p in (ROOT / pkg).rglob("*.js"))
    assert found, "no JavaScript file in the packages: the widgets' modules have moved?"
    return found


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.splitlines()[-lines:])


@pytest.mark.slow
def test_isolated_build_uses_the_locked_setuptools_and_warns_of_no_deprecation(tmp_path):
    pins = lock_pins("setuptools", "wheel")
    constraints = tmp_path / "build-constraints.txt"
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in pins.items()))

    # setuptools writes build/ and *.egg-info into the source folder: build a copy, never the working tree.
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=_NOT_COPIED, symlinks=True)
    wheels = tmp_path / "wheels"
    top_level_before = sorted(p.name for p in ROOT.iterdir())

    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)  # a caller's "ignore" would hide the backend's warnings
    env.pop("PIP_NO_BUILD_ISOLATION", None)  # the point is the isolated build
    cmd = [
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-v",
        "-w", str(wheels), "--build-constraint", str(constraints),
        str(src),  # a path, not a bare name: pip would look a bare name up on the registry
    ]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    output = proc.stdout + "\n" + proc.stderr

    # what setuptools would write into its source folder (other tests may create test-artifacts/ meanwhile: a test of
    # the browser helpers running on the other worker did, in a fresh-clone run, so only build outputs count)
    new = sorted({p.name for p in ROOT.iterdir()} - set(top_level_before))
    written = [n for n in new if n in ("build", "dist") or n.endswith(".egg-info")]
    assert not written, f"the build wrote into the working tree: {written}"
    assert proc.returncode == 0, f"pip wheel failed (exit {proc.returncode}):\n{_tail(output)}"

    # The isolated build environment got exactly the lock's setuptools (pip -v shows its installation).
    installed = re.findall(r"Successfully installed .*?\bsetuptools-(\S+)", output)
    assert installed, f"no setuptools installation into an isolated build environment in pip's output:\n{_tail(output)}"
    assert set(installed) == {pins["setuptools"]}, (
        f"the isolated build used setuptools {installed}, the lock pins {pins['setuptools']}"
    )

    deprecations = [line.strip() for line in output.splitlines() if "deprecat" in line.lower()]
    assert not deprecations, "the build warns of deprecations:\n" + "\n".join(deprecations)

    built = sorted(wheels.glob("symsgd_core-*.whl"))
    assert len(built) == 1, f"expected one symsgd_core wheel, found {[p.name for p in wheels.iterdir()]}"
    with zipfile.ZipFile(built[0]) as whl:
        names = whl.namelist()
        (metadata_name,) = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        metadata = whl.read(metadata_name).decode()
        headers = metadata.split("\n\n", 1)[0].splitlines()
        licenses = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/licenses/LICENSE", n)]
        assert licenses, f"LICENSE is not in the wheel's dist-info/licenses/: {names}"
        assert "MIT License" in whl.read(licenses[0]).decode()
    missing_js = [js for js in package_javascript() if js not in names]
    assert not missing_js, f"the wheel lacks the widgets' JavaScript files: {missing_js}"
    assert "License-Expression: MIT" in headers, f"METADATA headers:\n{chr(10).join(headers)}"
    assert "License-File: LICENSE" in headers, f"METADATA headers:\n{chr(10).join(headers)}"
    assert "Requires-Python: >=3.11" in headers, f"METADATA headers:\n{chr(10).join(headers)}"
    assert not [h for h in headers if h.startswith("License:")], "the deprecated free-text License field is back"
