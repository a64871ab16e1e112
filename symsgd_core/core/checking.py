"""Proofs as code: :class:`CheckResult`, the tolerances every check derives, and the check registry.

A check is a function ``check(seed: int = 0, **sizes) -> CheckResult | list[CheckResult]`` registered
with :func:`register` by its topic's ``checks`` module. It must be able to fail: the tests feed it a loss
without the symmetry (or a wrong formula) and assert that it reports failure, and a claim that measured
nothing fails (``make_result`` with a NaN measurement never passes). A check whose own setup did not produce what
its claim is about (e.g. forcing that did not reach the lower rank) reports that instead of a verdict
(:func:`precondition_not_met`: not a pass, and not a failure of the claim). The topics register their checks
when imported; :func:`symsgd_core.run_checks` imports all of them and runs :func:`run_registered`.

Measured values and tolerances are shown by :func:`format_value` and :func:`threshold_text` (three significant
digits; a strict bound, stored as the float next to it, as ``< b`` or ``> b``; a tolerance below the smallest normal
float as an exact 0), in the notebooks' tables, ``str(result)`` and ``python -m symsgd_core check`` alike.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from .conventions import Z_MC

#: float64 machine epsilon, the unit of every round-off tolerance.
EPS64 = float(np.finfo(np.float64).eps)
#: The smallest normal float64: a nonzero tolerance below it admits only 0 and subnormal round-off, i.e. it is exact.
TINY64 = float(np.finfo(np.float64).tiny)
#: How a result whose precondition was not met is marked (``str(result)``, ``python -m symsgd_core check``).
PRECONDITION_NOT_MET = "PRECONDITION NOT MET"


def format_value(x: float) -> str:
    """A measured value or tolerance as a reader sees it: an integral value below 10⁶ as an integer, any other
    value to three significant digits (``nan``, ``inf`` as such)."""
    x = float(x)
    if math.isfinite(x) and x == round(x) and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.3g}"


def _short(x: float) -> bool:
    """Whether ``x`` is a short decimal (at most 6 significant digits), as a bound written in code is."""
    return x == 0.0 or (abs(x) >= TINY64 and float(f"{x:.6g}") == x)


def strict_bound(relation: str, tolerance: float) -> float | None:
    """The bound b when ``tolerance`` is a strict comparison stored as the float next to b (``measured <=
    nextafter(b, −∞)`` is ``measured < b``; ``>=`` and ``nextafter(b, +∞)`` is ``measured > b``), else None.

    Recognised when b is a short decimal (:func:`_short`: 0, 0.25, 1e-3, …) and the tolerance is not: a derived
    tolerance is never one float away from a short decimal except by this construction.
    """
    tolerance = float(tolerance)
    if not math.isfinite(tolerance) or _short(tolerance):
        return None
    b = float(np.nextafter(tolerance, math.inf if relation == "<=" else -math.inf))
    return b + 0.0 if _short(b) else None  # + 0.0: −0.0 reads as 0


def threshold_text(relation: str, tolerance: float, label: str = "") -> str:
    """What the measured value is compared with, for a reader: ``"<= 3.2e-13"`` (``label`` before the number, e.g.
    ``"tolerance "``), ``"> 0"`` or ``"< 0.25"`` for a strict bound (:func:`strict_bound`), and ``"<= 0 (exact)"`` for
    a tolerance of 0 or below the smallest normal float (:data:`TINY64`; only an exact 0 or subnormal round-off
    passes)."""
    b = strict_bound(relation, tolerance)
    if b is not None:
        return f"{'<' if relation == '<=' else '>'} {format_value(b)}"
    if relation == "<=" and 0.0 <= float(tolerance) < TINY64:
        return "<= 0 (exact)"
    return f"{relation} {label}{format_value(tolerance)}"


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check.

    Attributes:
        name: short identifier, e.g. ``"symmetry.per_sample"``.
        claim: the claim in one sentence, with its equation.
        measured: the measured value (usually an absolute or relative error).
        tolerance: the threshold the measured value is compared with.
        relation: ``"<="`` (measured must not exceed tolerance) or ``">="``
            (measured must reach it, e.g. "this gradient is *not* zero").
        tolerance_source: where the tolerance comes from (round-off model or
            Monte-Carlo standard error at a stated confidence).
        passed: whether the claim held (False also when its precondition was not met).
        details: extra numbers for notebooks and reports (JSON-serialisable).
        precondition: empty when the claim was tested; otherwise the check's unmet precondition in words
            (:func:`precondition_not_met`): the claim was not tested, which is neither a pass nor a failure of it.
    """

    name: str
    claim: str
    measured: float
    tolerance: float
    relation: str
    tolerance_source: str
    passed: bool
    details: dict = field(default_factory=dict)
    precondition: str = ""

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def outcome(self) -> str:
        """``"PASS"``, ``"FAIL"`` or :data:`PRECONDITION_NOT_MET`."""
        return PRECONDITION_NOT_MET if self.precondition else ("PASS" if self.passed else "FAIL")

    def comparison(self, words: bool = False) -> str:
        """The measured value against its tolerance: ``"1e-09 <= 1e-06"``, ``"32 > 0"``, ``"0 <= 0 (exact)"``
        (``words``: ``"measured 1e-09 <= tolerance 1e-06"``); for an unmet precondition, that it was not tested."""
        if self.precondition:
            return f"not tested: {self.precondition}"
        m = format_value(self.measured)
        return (f"measured {m} {threshold_text(self.relation, self.tolerance, 'tolerance ')}" if words
                else f"{m} {threshold_text(self.relation, self.tolerance)}")

    def __str__(self) -> str:  # one line, for notebooks
        if self.precondition:
            return f"[{PRECONDITION_NOT_MET}] {self.name}: {self.precondition}; the claim was not tested"
        return f"[{self.outcome}] {self.name}: {self.comparison(words=True)} ({self.tolerance_source})"


#: The plain-text sub- and superscripts claims use: ``X_{…}``, ``X^{…}``, and a one-character ``s_k`` or ``W_ℓW``
#: (not ``run_sgd``: a lowercase letter, digit or _ after it)
_SUB_SUP = re.compile(r"([_^])\{([^{}]*)\}|(?<=[^\s_])_([^\W_])(?![a-z0-9_])")


def readable_html(text: str) -> str:
    """A claim's plain text as HTML for the page: escaped, with ``W_{ℓ+1}``, ``s_k`` and ``^{2/L}`` drawn as
    sub- and superscripts (``<sub>``/``<sup>``) instead of showing their braces; ``str(result)`` keeps the text."""
    def tag(m: re.Match) -> str:
        if m.group(3) is not None:
            return f"<sub>{m.group(3)}</sub>"
        name = "sub" if m.group(1) == "_" else "sup"
        return f"<{name}>{m.group(2)}</{name}>"
    return _SUB_SUP.sub(tag, html.escape(text))


def claims_summary(results: Sequence[CheckResult]) -> str:
    """One compact line for a list of results: ``"✔ 6 claims checked"``, ``"✘ 1 of 6 claims failed"``, or with an
    unmet precondition ``"✘ 1 of 6 claims not tested (precondition not met)"``."""
    n = len(results)
    failed = sum(not r.passed and not r.precondition for r in results)
    untested = sum(bool(r.precondition) for r in results)
    if not n:
        return "✘ no claim was checked"
    noun = "claim" if n == 1 else "claims"
    if not failed and not untested:
        return f"✔ {n} {noun} checked"
    parts = ([f"{failed} of {n} {noun} failed"] if failed else []) + (
        [f"{untested} not tested (precondition not met)" if failed else
         f"{untested} of {n} {noun} not tested (precondition not met)"] if untested else [])
    return "✘ " + ", ".join(parts)


def _summary_style(failed: bool) -> str:
    """Style of a claims line: the theme's text colour, a green (pass) or orange (failure) bar on its left; both
    bars keep the 3:1 contrast of a graphic on white (5.0, 5.2) and on JupyterLab's dark page (3.8, 3.7)."""
    bar = "#c2410c" if failed else "#15803d"
    return f"font-weight:600;cursor:pointer;border-left:4px solid {bar};padding-left:6px"


def claims_html(results: Sequence[CheckResult]) -> str:
    """The results as a compact HTML block for a projector: the :func:`claims_summary` line, and the full table
    (claim, measured, relation, tolerance and where it comes from) behind a click (``<details>``). A failure
    opens the table. The line keeps the theme's text colour (no single text colour reaches 4.5:1 on both a white
    and a dark page); a coloured bar beside it (:func:`_summary_style`) marks a pass or a failure."""
    failed = any(not r.passed for r in results) or not results
    rows = "".join(
        "<tr>"
        f"<td>{'✔' if r.passed else '✘'}</td><td><code>{html.escape(r.name)}</code></td>"
        f"<td>{readable_html(r.claim)}</td><td>{html.escape(r.comparison())}</td>"
        f"<td>{readable_html(r.tolerance_source)}</td></tr>" for r in results)
    table = ("<table class=\"symsgd-claims-table\"><thead><tr><th>ok</th><th>check</th><th>claim</th>"
             f"<th>measured vs tolerance</th><th>tolerance from</th></tr></thead><tbody>{rows}</tbody></table>")
    return (f'<details class="symsgd-claims"{" open" if failed else ""}><summary style="{_summary_style(failed)}">'
            f'{html.escape(claims_summary(results))}</summary>{table}</details>')


def caught_html(cases: Sequence[tuple[str, CheckResult]]) -> str:
    """Checks fed a broken input on purpose, as a compact HTML block: one line saying the checks caught them
    (``"✔ 2 broken inputs caught: each check fails on them, as it must"``), and behind a click what was broken
    and what each check measured. A broken input that passed opens the block and says the check cannot fail; one
    whose check reported an unmet precondition (it was not tested) opens it too."""
    passed = [what for what, r in cases if r.passed] or (["(none fed)"] if not cases else [])
    untested = [what for what, r in cases if r.precondition]
    missed = passed or untested
    n = len(cases)
    noun = "broken input" if n == 1 else "broken inputs"
    head = (f"✘ a check passed a broken input ({html.escape(', '.join(passed))}): it cannot tell right from wrong"
            if passed else
            f"✘ a check did not test a broken input ({html.escape(', '.join(untested))}): its precondition was not met"
            if untested else f"✔ {n} {noun} caught: each check fails on them, as it must")
    rows = "".join(f"<tr><td>{html.escape(what)}</td><td><code>{html.escape(r.name)}</code></td>"
                   f"<td>{'passed (wrong)' if r.passed else 'not tested' if r.precondition else 'failed, as it must'}"
                   f"</td><td>{html.escape(r.comparison())}</td></tr>" for what, r in cases)
    table = ("<table class=\"symsgd-claims-table\"><thead><tr><th>broken on purpose</th><th>check</th>"
             f"<th>verdict</th><th>measured vs tolerance</th></tr></thead><tbody>{rows}</tbody></table>")
    style = _summary_style(bool(missed))
    return (f'<details class="symsgd-caught"{" open" if missed else ""}><summary style="{style}">'
            f'{head}</summary>{table}</details>')


def make_result(name: str, claim: str, measured: float, tolerance: float, tolerance_source: str,
                relation: str = "<=", details: dict | None = None) -> CheckResult:
    """Build a :class:`CheckResult`, deciding ``passed`` from ``relation``.

    A non-finite measured value always fails (a NaN must never pass a check).
    """
    if relation not in ("<=", ">="):
        raise ValueError(f"relation must be '<=' or '>=', got {relation!r}")
    measured = float(measured)
    tolerance = float(tolerance)
    if not math.isfinite(measured):
        passed = False
    elif relation == "<=":
        passed = measured <= tolerance
    else:
        passed = measured >= tolerance
    return CheckResult(name, claim, measured, tolerance, relation, tolerance_source, bool(passed),
                       dict(details or {}))


def precondition_not_met(name: str, claim: str, precondition: str, details: dict | None = None) -> CheckResult:
    """The result of a check whose setup did not produce what its claim is about: ``precondition`` says what is
    missing, with the numbers (e.g. "forcing did not reach rank 1: max_ℓ s₂(W_ℓ) = 0.33 > ε₁ = 0.1"). Not a pass
    (``passed`` is False) and not a failure of the claim (``outcome`` is :data:`PRECONDITION_NOT_MET`); measured
    and tolerance are NaN."""
    if not precondition:
        raise ValueError("an unmet precondition must say what is missing")
    return CheckResult(name, claim, math.nan, math.nan, "<=", "n/a: the claim was not tested", False,
                       dict(details or {}), precondition)


def roundoff_tolerance(scale: float, n_terms: int = 1, safety: float = 64.0) -> float:
    """A float64 round-off bound: ``safety · n_terms · eps · scale``.

    ``scale`` is the magnitude of the largest term summed (e.g. ``‖θ‖·‖∇ℓ‖``),
    ``n_terms`` the number of terms summed; ``safety`` covers the constant of
    the standard ``n·eps`` summation bound and is stated in every report.
    """
    return safety * max(int(n_terms), 1) * EPS64 * max(float(scale), np.finfo(float).tiny)


def mc_tolerance(std_error: float, z: float = Z_MC) -> float:
    """A Monte-Carlo tolerance: ``z`` standard errors (default :data:`~.conventions.Z_MC` = 4: two-sided p ≈ 6e-5)."""
    return float(z) * float(std_error)


_REGISTRY: dict[str, Callable[..., CheckResult]] = {}


def register(name: str):
    """Decorator: add ``func`` to the registry under ``name`` (unique)."""

    def deco(func):
        if name in _REGISTRY:
            raise ValueError(f"check {name!r} is registered twice")
        _REGISTRY[name] = func
        func.check_name = name
        return func

    return deco


def registered() -> dict[str, Callable[..., CheckResult]]:
    """All registered checks, by name (a copy)."""
    return dict(_REGISTRY)


def run_registered(seed: int = 0, names: list[str] | None = None, registry: dict | None = None) -> list[CheckResult]:
    """Run every registered check (or those in ``names``) with ``seed``, in the order of ``registry`` (default:
    the order of registration; :func:`symsgd_core.registered_checks` gives the topics' order).

    A check that raises is reported as a failed result, not an exception, so one
    broken check does not hide the others.
    """
    results = []
    for name, func in (_REGISTRY if registry is None else registry).items():
        if names is not None and name not in names:
            continue
        try:
            out = func(seed=seed)
        except Exception as exc:  # reported, never swallowed silently
            out = CheckResult(name, "check raised an exception", float("nan"), float("nan"), "<=",
                              "n/a", False, {"error": f"{type(exc).__name__}: {exc}"})
        results.extend(out if isinstance(out, list) else [out])
    return results
