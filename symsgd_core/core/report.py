"""A notebook's printed table as a value: its text lines and the claims it asserts, made by one package call.

A lesson's code cell stays thin (``ARCHITECTURE.md``): it calls one report function of its topic
(``balance.report``, ``stationary.report``), prints the :class:`Report` and asserts its claims::

    rep = report.ito_spectra()
    print(rep)
    assert_claims(rep.claims)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .checking import CheckResult

__all__ = ["Report"]


@dataclass(frozen=True)
class Report:
    """A printed table: ``text`` its lines (str, no newlines), ``claims`` the :class:`CheckResult` rows the cell
    asserts, ``values`` numbers later cells use (read-only)."""

    text: tuple[str, ...]
    claims: tuple[CheckResult, ...] = ()
    values: Mapping = field(default_factory=dict)

    def __post_init__(self):
        text, claims = tuple(self.text), tuple(self.claims)
        if any(not isinstance(line, str) or "\n" in line for line in text):
            raise ValueError("a report's text is a sequence of lines without newlines")
        if any(not isinstance(c, CheckResult) for c in claims):
            raise TypeError("a report's claims are CheckResult rows")
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "claims", claims)
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))

    def lines(self) -> list[str]:
        """The table's lines (a copy)."""
        return list(self.text)

    def __str__(self) -> str:
        return "\n".join(self.text)

    def __getitem__(self, name):
        return self.values[name]

    @classmethod
    def join(cls, reports: Iterable[Report]) -> Report:
        """One report of ``reports`` in order: their lines, claims and values (a later value wins)."""
        reports = list(reports)
        values: dict = {}
        for r in reports:
            values.update(r.values)
        return cls(tuple(line for r in reports for line in r.text), tuple(c for r in reports for c in r.claims),
                   values)
