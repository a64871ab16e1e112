"""The safe formula parser behind the classroom answer to "write a function" exercises (core/expressions.py)."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from symsgd_core.core import expressions
from symsgd_core.core.expressions import MAX_LENGTH, ExpressionError, compile_expression


@pytest.mark.parametrize("text, args, values, expected", [
    ("u**2 - w**2", ("u", "w"), (3.0, 2.0), 5.0),
    ("u^2 − w^2", ("u", "w"), (3.0, 2.0), 5.0),
    ("return 2*u·w", ("u", "w"), (3.0, 2.0), 12.0),
    ("f(u, w) = exp(u - w) + pi", ("u", "w"), (1.0, 1.0), 1.0 + np.pi),
    ("np.sqrt(abs(-u)) + numpy.log(e)", ("u",), (4.0,), 3.0),
    ("-u % 3 + 7 // 2", ("u",), (1.0,), 5.0),
])
def test_formulas_compute_what_they_say(text, args, values, expected):
    f = compile_expression(text, args)
    assert f(*values) == pytest.approx(expected)


def test_matrix_formulas():
    rng = np.random.default_rng(0)
    A, u = rng.standard_normal((2, 3)), rng.standard_normal(2)
    np.testing.assert_allclose(compile_expression("A.T @ u", ("A", "u", "w"))(A, u, None), A.T @ u)
    np.testing.assert_allclose(compile_expression("dot(transpose(A), u)", ("A", "u"))(A, u), A.T @ u)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        compile_expression("A", ("A", "u"))(A)


@pytest.mark.parametrize("attack, why", [
    ("__import__('os').system('true')", "not a function"),
    ("open('/etc/passwd')", "not a function"),
    ("u.__class__", "not allowed"),
    ("u.__class__.__bases__[0].__subclasses__()", "not"),
    ("(lambda: 1)()", "not"),
    ("[c for c in 'ab']", "not allowed"),
    ("u[0]", "not allowed"),
    ("eval('1')", "not a function"),
    ("exec('1')", "not a function"),
    ("globals()", "not a function"),
    ("x", "unknown name"),
    ("'abc'", "only numbers"),
    ("True", "only numbers"),
    ("sin(u, out=u)", "keyword"),
    ("sin(*u)", "unpacking"),
    ("u if u else 1", "not allowed"),
    ("u < 1", "not allowed"),
    ("import os", "not a formula"),
    ("u = 1", "not a formula"),
    ("u; w", "not a formula"),
    ("np.load('file.npy')", "not a function"),
    ("np.linalg.inv(u)", "not a function"),
    ("", "empty"),
    ("u+" * (MAX_LENGTH // 2 + 1) + "u", "longer"),
    ("+".join(["u"] * 150), "parts"),
])
def test_anything_outside_the_whitelist_is_refused_with_a_reason(attack, why):
    with pytest.raises(ExpressionError, match=why):
        compile_expression(attack, ("u", "w"))


@pytest.mark.parametrize("depth", [50, 199, 300])
def test_deep_nesting_is_read_or_refused_never_a_crash(depth):
    text = "(" * depth + "u" + ")" * depth
    try:
        assert compile_expression(text, ("u",))(2.0) == 2.0
    except ExpressionError as exc:
        assert "longer" in str(exc) or "not a formula" in str(exc)


def test_huge_powers_overflow_at_once_instead_of_building_huge_integers():
    f = compile_expression("9**9**9", ("u",))
    with pytest.raises(OverflowError):
        f(1.0)


def test_non_text_and_bad_argument_names():
    with pytest.raises(ExpressionError, match="as text"):
        compile_expression(42, ("u",))
    with pytest.raises(ValueError, match="identifiers"):
        compile_expression("u", ("u-1",))


def test_the_module_never_calls_eval_exec_or_compile():
    tree = ast.parse(open(expressions.__file__, encoding="utf-8").read())
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert not called & {"eval", "exec", "compile", "__import__", "getattr"}


def test_formulas_cannot_build_arbitrarily_large_arrays():
    # nested outer products and broadcasting grow an array geometrically: refused before it is built (a clear
    # error, not an out-of-memory kernel)
    import numpy as np

    from symsgd_core.core.expressions import MAX_ELEMENTS

    f = compile_expression("outer(outer(outer(u, u), outer(u, u)), outer(outer(u, u), outer(u, u)))", ("u",))
    with pytest.raises(ExpressionError, match="more than"):
        f(np.ones(10))
    g = compile_expression("outer(u, 1) + outer(1, u)", ("u",))
    assert g(np.ones(3)).shape == (3, 3)
    with pytest.raises(ExpressionError, match="more than"):
        g(np.ones(int(MAX_ELEMENTS ** 0.5) + 10))
    assert compile_expression("u @ u", ("u",))(np.ones(4)) == 4.0
