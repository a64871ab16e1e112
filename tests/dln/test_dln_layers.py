"""The layering of symsgd_core/dln/ (ARCHITECTURE.md): dln imports only core/; no module imports a private name (or
a private module) of another subpackage; the lessons import dln by its face."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "symsgd_core"


def _imports():
    """``[(file, subpackage, imported module, name)]`` for every ``from … import`` of symsgd_core's modules."""
    out = []
    for f in sorted(ROOT.rglob("*.py")):
        rel = f.relative_to(ROOT)
        sub = rel.parts[0] if len(rel.parts) > 1 else ""
        pkg = ["symsgd_core", *rel.with_suffix("").parts[:-1]] if f.name != "__init__.py" else \
            ["symsgd_core", *rel.parts[:-1]]
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = pkg[: len(pkg) - node.level + 1] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else []))
                if mod.startswith("symsgd_core."):
                    out += [(rel.as_posix(), sub, mod, a.name) for a in node.names]
    return out


def _private(mod: str, name: str) -> bool:
    return name.startswith("_") or any(p.startswith("_") and not p.startswith("__") for p in mod.split(".")[2:])


def test_no_private_name_crosses_a_subpackage():
    bad = [i for i in _imports() if i[2].split(".")[1] != i[1] and _private(i[2], i[3])]
    assert not bad, bad


def test_dln_imports_only_core():
    bad = [i for i in _imports() if i[1] == "dln" and i[2].split(".")[1] not in ("dln", "core")]
    assert not bad, bad


def test_lessons_import_dln_by_its_face():
    bad = [i for i in _imports() if i[1] in ("rank_jumps", "sde_noise") and i[2].startswith("symsgd_core.dln.")
           and i[2] != "symsgd_core.dln.integrators"]
    assert not bad, bad


def test_the_rule_catches_a_private_import():
    """The scan sees a private import across subpackages (a broken input must fail)."""
    assert _private("symsgd_core.dln._kernels", "sgd_chunk") and _private("symsgd_core.dln.engine", "_build_result")
    assert not _private("symsgd_core.dln.engine", "build_result")
