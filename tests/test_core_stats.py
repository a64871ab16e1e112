"""core.stats: the one KS level, the one Monte-Carlo z, the one censored-exponential waiting time."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import symsgd_core
from symsgd_core.core import checking
from symsgd_core.core import stats as S

PACKAGE = Path(symsgd_core.__file__).parent
#: Names a module has used for its own copy of the KS level or the Monte-Carlo z.
LEVEL_NAMES = {"Z", "Z_MC", "ALPHA", "KS_ALPHA", "Z_SE", "MC_Z"}


def test_the_ks_level_and_the_monte_carlo_z_are_assigned_only_in_core_stats():
    copies = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            copies += [f"{path.relative_to(PACKAGE)} {t.id}" for t in targets
                       if isinstance(t, ast.Name) and t.id in LEVEL_NAMES]
    assert copies == ["core/stats.py Z_MC", "core/stats.py KS_ALPHA"]
    assert inspect.signature(checking.mc_tolerance).parameters["z"].default is S.Z_MC


def test_ks_threshold_of_one_sample_is_exact():
    # One sample: D₁ = max(U, 1 − U) for U uniform, so P(D₁ > d) = 2(1 − d) on [1/2, 1] and the critical
    # distance at level α is 1 − α/2 (scipy's kstwo computes it by another route).
    assert S.ks_threshold(1) == pytest.approx(1.0 - S.KS_ALPHA / 2.0, rel=1e-12)
    with pytest.raises(ValueError, match="n"):
        S.ks_threshold(0)
