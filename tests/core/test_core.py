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


def test_tolerances_print_as_a_reader_reads_them():
    """A strict bound stored as the float next to it printed as "tolerance 4.94e-324"; now "> 0"."""
    import math

    from symsgd_core.core.checking import TINY64, claims_html, format_value, make_result, strict_bound, threshold_text

    assert threshold_text(">=", math.nextafter(0.0, math.inf)) == "> 0"  # 4.94e-324
    assert threshold_text("<=", math.nextafter(0.0, -math.inf)) == "< 0"
    assert threshold_text("<=", math.nextafter(0.25, -math.inf)) == "< 0.25"
    assert threshold_text(">=", math.nextafter(1e-3, math.inf)) == "> 0.001"
    assert threshold_text("<=", 0.0) == threshold_text("<=", 64 * 2.2e-16 * TINY64) == "<= 0 (exact)"
    # derived tolerances are not strict bounds, and print to three significant digits
    for tol in (3.2e-13, 1.0000000000020697, 0.5650190311623421, 2.0 ** -15):
        assert strict_bound("<=", tol) is None and strict_bound(">=", tol) is None
    assert threshold_text("<=", 3.1622776601683795e-13, "tolerance ") == "<= tolerance 3.16e-13"
    assert threshold_text("<=", 1.0000000000020697) == "<= 1" and threshold_text(">=", 0.25) == ">= 0.25"
    assert [format_value(x) for x in (32.0, 0.5134765625, 1e-9, float("nan"), -0.0)] == ["32", "0.513", "1e-09",
                                                                                         "nan", "0"]
    strict = make_result("c", "some run jumps", 32.0, math.nextafter(0.0, math.inf), "exact count (strict)", ">=")
    text = str(strict)
    assert strict.passed and text == "[PASS] c: measured 32 > 0 (exact count (strict))" and "e-324" not in text
    assert "<td>32 &gt; 0</td>" in claims_html([strict])
    exact = make_result("n", "no run returns", 0.0, 0.0, "exact integer count", "<=")
    assert str(exact) == "[PASS] n: measured 0 <= 0 (exact) (exact integer count)"
    assert str(make_result("r", "round-off", 1e-9, 1e-6, "64·eps")) == \
        "[PASS] r: measured 1e-09 <= tolerance 1e-06 (64·eps)"


def test_every_notebook_claim_with_a_strict_zero_bound_prints_without_a_subnormal():
    """The claims of notebooks 04 and 05 that compare with 0 strictly (rank_jumps ``_above``/``_below``, sde_noise
    ``_gt``/``_lt``) print "> 0" / "< 0"."""
    from symsgd_core.core.checking import make_result
    from symsgd_core.rank_jumps.claims import _above, _below
    from symsgd_core.sde_noise.claims import _gt, _lt

    rows = [make_result("a", "δ* > 0", 1e-9, _above(0.0), "strictly positive", ">="),
            make_result("b", "rank 1 lower", -0.01, _below(0.0), "strictly negative", "<="),
            _gt("langevin.jumps", "jumps", 32, 0, "exact count"), _lt("x", "below", -1.0, 0, "exact")]
    texts = [str(r) for r in rows]
    assert all(r.passed for r in rows) and not any("e-32" in t for t in texts), texts
    assert [t.split("measured ")[1].split(" (")[0] for t in texts] == ["1e-09 > 0", "-0.01 < 0", "32 > 0", "-1 < 0"]


def test_an_unmet_precondition_is_neither_a_pass_nor_a_failure_of_the_claim():
    from symsgd_core.core.checking import (
        PRECONDITION_NOT_MET,
        claims_html,
        claims_summary,
        make_result,
        precondition_not_met,
    )

    r = precondition_not_met("c", "B_1 is absorbing", "forcing did not reach rank 1: s₂ = 0.48 > ε₁ = 0.1",
                             {"s2": [0.48]})
    assert not r.passed and r.outcome == PRECONDITION_NOT_MET and r.details == {"s2": [0.48]}
    assert str(r) == ("[PRECONDITION NOT MET] c: forcing did not reach rank 1: s₂ = 0.48 > ε₁ = 0.1; "
                      "the claim was not tested")
    ok, bad = make_result("ok", "x", 0.0, 1.0, "s"), make_result("bad", "x", 2.0, 1.0, "s")
    assert (ok.outcome, bad.outcome, ok.precondition) == ("PASS", "FAIL", "")
    assert claims_summary([ok, r]) == "✘ 1 of 2 claims not tested (precondition not met)"
    assert claims_summary([ok, bad, r]) == "✘ 1 of 3 claims failed, 1 not tested (precondition not met)"
    html = claims_html([ok, r])
    assert "not tested: forcing did not reach rank 1" in html and "<details class=\"symsgd-claims\" open>" in html
    with pytest.raises(ValueError, match="must say"):
        precondition_not_met("c", "claim", "")
