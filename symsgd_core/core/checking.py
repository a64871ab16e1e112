"""Proofs as code: :class:`CheckResult`, the tolerances every check derives, and the check registry.

A check is a function ``check(seed: int = 0, **sizes) -> CheckResult | list[CheckResult]`` registered
with :func:`register` by its topic's ``checks`` module. It must be able to fail: the tests feed it a loss
without the symmetry (or a wrong formula) and assert that it reports failure, and a claim that measured
nothing fails (``make_result`` with a NaN measurement never passes). The topics register their checks
when imported; :func:`symsgd_core.run_checks` imports all of them and runs :func:`run_registered`.
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
        passed: whether the claim held.
        details: extra numbers for notebooks and reports (JSON-serialisable).
    """

    name: str
    claim: str
    measured: float
    tolerance: float
    relation: str
    tolerance_source: str
    passed: bool
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:  # one line, for notebooks
        mark = "PASS" if self.passed else "FAIL"
        return (f"[{mark}] {self.name}: measured {self.measured:.3g} {self.relation} "
                f"tolerance {self.tolerance:.3g} ({self.tolerance_source})")


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
    """One compact line for a list of results: ``"✔ 6 claims checked"`` or ``"✘ 1 of 6 claims failed"``."""
    n = len(results)
    failed = sum(not r.passed for r in results)
    if not n:
        return "✘ no claim was checked"
    noun = "claim" if n == 1 else "claims"
    return f"✔ {n} {noun} checked" if not failed else f"✘ {failed} of {n} {noun} failed"


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
        f"<td>{readable_html(r.claim)}</td><td>{r.measured:.3g} {html.escape(r.relation)} {r.tolerance:.3g}</td>"
        f"<td>{readable_html(r.tolerance_source)}</td></tr>" for r in results)
    table = ("<table class=\"symsgd-claims-table\"><thead><tr><th>ok</th><th>check</th><th>claim</th>"
             f"<th>measured vs tolerance</th><th>tolerance from</th></tr></thead><tbody>{rows}</tbody></table>")
    return (f'<details class="symsgd-claims"{" open" if failed else ""}><summary style="{_summary_style(failed)}">'
            f'{html.escape(claims_summary(results))}</summary>{table}</details>')


def caught_html(cases: Sequence[tuple[str, CheckResult]]) -> str:
    """Checks fed a broken input on purpose, as a compact HTML block: one line saying the checks caught them
    (``"✔ 2 broken inputs caught: each check fails on them, as it must"``), and behind a click what was broken
    and what each check measured. A broken input that passed opens the block and says the check cannot fail."""
    missed = [what for what, r in cases if r.passed] or (["(none fed)"] if not cases else [])
    n = len(cases)
    noun = "broken input" if n == 1 else "broken inputs"
    head = (f"✔ {n} {noun} caught: each check fails on them, as it must" if not missed else
            f"✘ a check passed a broken input ({html.escape(', '.join(missed))}): it cannot tell right from wrong")
    rows = "".join(f"<tr><td>{html.escape(what)}</td><td><code>{html.escape(r.name)}</code></td>"
                   f"<td>{'passed (wrong)' if r.passed else 'failed, as it must'}</td>"
                   f"<td>{r.measured:.3g} {html.escape(r.relation)} {r.tolerance:.3g}</td></tr>" for what, r in cases)
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
