"""The shared layer: the seeding rule, the result shape, the divergence rule, the engine keyword."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core.core.results import Divergence, EngineResult, resolve_engine
from symsgd_core.core.seeding import piece_seed, stream, streams


def test_streams_are_the_spawned_children_and_do_not_depend_on_their_number():
    a, b = streams(7, 3), streams(7, 5)
    for k in range(3):
        assert np.array_equal(a[k].standard_normal(4), b[k].standard_normal(4))
    child = np.random.SeedSequence(7).spawn(2)[1]
    assert np.array_equal(streams(7, 2)[1].integers(0, 100, 5), np.random.default_rng(child).integers(0, 100, 5))
    assert np.array_equal(stream(3).random(3), np.random.default_rng(3).random(3))
    g = np.random.default_rng(0)
    assert stream(g) is g


@pytest.mark.parametrize("bad", [None, -1, 1.5, "1"])
def test_seeds_must_be_reproducible_integers(bad):
    with pytest.raises(ValueError, match="seed"):
        streams(bad, 2)
    with pytest.raises(ValueError, match="seed"):
        stream(bad)


def test_streams_refuse_a_generator():
    with pytest.raises(ValueError, match="integer"):
        streams(np.random.default_rng(0), 2)


def test_piece_seed():
    assert piece_seed(0, 3) == 3 and piece_seed(2, 1) == 2 * 1_000_003 + 1
    with pytest.raises(ValueError):
        piece_seed(-1, 0)


def test_divergence_rule():
    rule = Divergence("max|θ|", 10.0)
    x = np.array([[1.0, -11.0], [np.nan, 0.0], [10.0, -10.0], [np.inf, 1.0]])
    assert rule.exceeded(x, axis=1).tolist() == [True, True, False, True]
    assert rule.exceeded(np.array([9.0, 10.5])).tolist() == [False, True]
    assert rule.with_limit(20.0).limit == 20.0 and "max|θ| > 10" in rule.describe()
    with pytest.raises(ValueError, match="limit"):
        Divergence("x", 0.0)


def test_engine_result_fields_and_alive_records():
    r = EngineResult(steps=np.array([0, 10, 20]), times=np.array([0.0, 0.1, 0.2]),
                     diverged_step=np.array([-1, 15]), settings={"method": "x"})
    assert r.n_runs == 2 and r.n_diverged == 1
    assert r.diverged.tolist() == [False, True] and r.ok_runs.tolist() == [True, False]
    assert r.alive_at().tolist() == [[True, True], [True, True], [True, False]]
    with pytest.raises(AttributeError):
        r.settings = {}


def test_engine_keyword():
    assert resolve_engine("auto") and resolve_engine("compiled") and not resolve_engine("reference")
    assert not resolve_engine("auto", compiled_available=False)
    with pytest.raises(ValueError, match="not available here: only the scalar model"):
        resolve_engine("compiled", compiled_available=False, why="only the scalar model")
    with pytest.raises(ValueError, match="engine must be one of"):
        resolve_engine("numba")


def test_readable_html_draws_sub_and_superscripts_and_keeps_names():
    from symsgd_core.core.checking import readable_html

    assert readable_html("W_{ℓ+1}ᵀW_{ℓ+1} = W_ℓW_ℓᵀ") == "W<sub>ℓ+1</sub>ᵀW<sub>ℓ+1</sub> = W<sub>ℓ</sub>W<sub>ℓ</sub>ᵀ"
    assert readable_html("L Σ_k s_k(A)^{2/L}, Cov∇_uℓ") == \
        "L Σ<sub>k</sub> s<sub>k</sub>(A)<sup>2/L</sup>, Cov∇<sub>u</sub>ℓ"
    assert readable_html("run_sgd, __init__, a<b") == "run_sgd, __init__, a&lt;b"  # names stay, text is escaped


def _claim_texts():
    """The literal text of every claim and tolerance source a check builds (``make_result(name, claim, measured,
    tolerance, tolerance_source)``), read from the sources: the parts of its strings and f-strings."""
    import ast
    from pathlib import Path

    import symsgd_core

    root = Path(symsgd_core.__file__).parent
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None))
                    == "make_result"):
                continue
            args = [a for i, a in enumerate(node.args) if i in (1, 4)]
            args += [k.value for k in node.keywords if k.arg in ("claim", "tolerance_source")]
            for arg in args:
                parts = [n.value for n in ast.walk(arg) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                if parts:
                    yield f"{path.relative_to(root)}:{node.lineno}", "".join(parts)


def test_every_claim_reads_without_raw_markup_on_the_page():
    """The claims table (``claims_html``) shows each claim as HTML: no brace of a ``W_{ℓ+1}`` and no TeX command
    may reach the page."""
    import re

    from symsgd_core.core.checking import readable_html

    texts = list(_claim_texts())
    assert len(texts) >= 60, len(texts)  # the claims were found (158 texts in 83 make_result calls today)
    raw = [(where, text) for where, text in texts if re.search(r"[_^]\{|\\[a-zA-Z]|\$", readable_html(text))]
    assert not raw, raw
