"""A reader's formula as a Python function, parsed safely: the classroom answer to a "write a function" exercise.

:func:`compile_expression` turns text such as ``"u**2 - w**2"`` or ``"A.T @ u"`` into a function of the named
arguments. The text is parsed with :func:`ast.parse` and every node is checked against a whitelist — numbers,
the argument names, ``pi`` and ``e``, the operators ``+ − * / // % ** @`` and unary ``±``, ``.T`` (transpose),
and calls of a fixed set of math functions (``sin``, ``exp``, ``sqrt``, ``dot``, …; also as ``np.sin`` or
``numpy.sin``) — then evaluated by walking the tree. Nothing is ever passed to ``eval``, ``exec`` or
``compile``: no attribute but ``.T``, no subscripts, no keywords, no lambdas, no comprehensions, no names other
than those listed, so no way to reach Python's builtins, modules or files.

Numbers in the text become floats (so ``9**9**9`` overflows at once instead of building a huge integer), and
the text is limited to :data:`MAX_LENGTH` characters and :data:`MAX_NODES` syntax nodes.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["FUNCTIONS", "MAX_ELEMENTS", "MAX_LENGTH", "MAX_NODES", "ExpressionError", "compile_expression"]

#: Longest formula accepted, characters.
MAX_LENGTH = 400
#: Most syntax nodes accepted in one formula.
MAX_NODES = 200
#: Largest array a formula may build (elements): nested ``outer`` calls would otherwise grow it without bound.
MAX_ELEMENTS = 1_000_000

#: The functions a formula may call (numpy's, so they work on numbers and arrays alike).
FUNCTIONS: dict[str, Callable] = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "exp": np.exp, "log": np.log, "log2": np.log2,
    "log10": np.log10, "sqrt": np.sqrt, "abs": np.abs, "sign": np.sign, "dot": np.dot, "outer": np.outer,
    "transpose": np.transpose, "sum": np.sum, "maximum": np.maximum, "minimum": np.minimum,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
_MODULES = ("np", "numpy")
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.MatMult: operator.matmul}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


class ExpressionError(ValueError):
    """The text is not a formula this module accepts; the message says why, in words a reader understands."""


def _function_name(node: ast.expr) -> str:
    """``sin`` for ``sin``, ``np.sin`` or ``numpy.sin``; ExpressionError for anything else."""
    if isinstance(node, ast.Name) and node.id in FUNCTIONS:
        return node.id
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in _MODULES
            and node.attr in FUNCTIONS):
        return node.attr
    shown = ast.unparse(node)
    raise ExpressionError(f"{shown!r} is not a function you can use here; use one of: {', '.join(sorted(FUNCTIONS))}")


def _check_size(size: int) -> None:
    """Refuse an array of ``size`` numbers before it is built, if it is over :data:`MAX_ELEMENTS`."""
    if size > MAX_ELEMENTS:
        raise ExpressionError(f"this formula builds an array of more than {MAX_ELEMENTS:,} numbers")


def _build(node: ast.AST, arguments: Sequence[str]) -> Callable[[dict], object]:
    """A closure ``env -> value`` for a whitelisted node (ExpressionError for any other node)."""
    if isinstance(node, ast.Expression):
        return _build(node.body, arguments)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExpressionError(f"only numbers can appear as constants, not {node.value!r}")
        value = float(node.value)
        return lambda env: value
    if isinstance(node, ast.Name):
        if node.id in arguments:
            name = node.id
            return lambda env: env[name]
        if node.id in _CONSTANTS:
            value = _CONSTANTS[node.id]
            return lambda env: value
        allowed = ", ".join(list(arguments) + sorted(_CONSTANTS))
        raise ExpressionError(f"unknown name {node.id!r}: the formula may use {allowed} and math functions")
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        op, left, right = _BINARY[type(node.op)], _build(node.left, arguments), _build(node.right, arguments)
        elementwise = not isinstance(node.op, ast.MatMult)

        def binary(env):
            a, b = left(env), right(env)
            if elementwise:  # broadcasting (n, 1) against (1, m) builds n·m numbers: bound it before it is built
                try:
                    size = math.prod(np.broadcast_shapes(np.shape(a), np.shape(b)))
                except ValueError:
                    size = 0  # shapes that do not broadcast: the operation itself says so
                _check_size(size)
            return op(a, b)

        return binary
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        op, operand = _UNARY[type(node.op)], _build(node.operand, arguments)
        return lambda env: op(operand(env))
    if isinstance(node, ast.Attribute):
        if node.attr != "T":
            raise ExpressionError(f"'.{node.attr}' is not allowed; the only attribute is .T (transpose)")
        inner = _build(node.value, arguments)
        return lambda env: np.transpose(inner(env))
    if isinstance(node, ast.Call):
        func = FUNCTIONS[_function_name(node.func)]
        if node.keywords:
            raise ExpressionError("keyword arguments are not allowed in a formula")
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise ExpressionError("'*' unpacking is not allowed in a formula")
        args = [_build(a, arguments) for a in node.args]
        name = _function_name(node.func)

        def call(env):
            values = [a(env) for a in args]
            if name == "outer":
                _check_size(math.prod(int(np.size(v)) for v in values))
            return func(*values)

        return call
    what = type(node).__name__
    raise ExpressionError(f"this formula uses a construct that is not allowed here ({what}); use numbers, "
                          f"{', '.join(arguments)}, + − * / ** @, .T and math functions")


def compile_expression(text: str, arguments: Sequence[str]) -> Callable:
    """The function ``f(*arguments)`` that computes the formula ``text``.

    Args:
        text: a formula, e.g. ``"u**2 - w**2"`` or ``"A.T @ u"`` (a leading ``return`` or ``f(u, w) =`` is
            tolerated; ``^`` is read as ``**`` and ``−`` as ``-``).
        arguments: the argument names, in order (e.g. ``("u", "w")``); each must be a Python identifier.

    Returns:
        A function of ``len(arguments)`` positional arguments; it evaluates the checked tree (no ``eval``).

    Raises:
        ExpressionError: the text is empty, too long, not a formula, or uses anything outside the whitelist.
    """
    arguments = tuple(arguments)
    if not all(isinstance(a, str) and a.isidentifier() for a in arguments):
        raise ValueError(f"arguments must be identifiers, got {arguments!r}")
    if not isinstance(text, str):
        raise ExpressionError(f"expected the formula as text, got {type(text).__name__}")
    text = text.strip().replace("−", "-").replace("^", "**").replace("·", "*").replace("×", "*")
    if text.startswith("return "):
        text = text[len("return "):]
    head, sep, tail = text.partition("=")
    if sep and not tail.startswith("=") and head.strip().replace(" ", "").startswith("f("):
        text = tail.strip()  # "f(u, w) = u**2 - w**2"
    if not text:
        raise ExpressionError("the formula is empty")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the formula is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"this is not a formula Python can read ({exc.msg})") from None
    except (ValueError, RecursionError, MemoryError):
        raise ExpressionError("this is not a formula Python can read") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ExpressionError(f"the formula has more than {MAX_NODES} parts; write it shorter")
    body = _build(tree, arguments)

    def formula(*values):
        if len(values) != len(arguments):
            raise TypeError(f"the formula takes {len(arguments)} arguments ({', '.join(arguments)}), "
                            f"got {len(values)}")
        return body(dict(zip(arguments, values, strict=True)))

    formula.__name__ = "formula"
    formula.__doc__ = f"f({', '.join(arguments)}) = {text}"
    return formula
