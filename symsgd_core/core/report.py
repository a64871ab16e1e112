"""A notebook's printed table as data: :class:`Report`, its text lines and the values later cells use.

Topics build their notebook's tables in a ``report`` module (``sde_noise.report``, ``rank_jumps.report``); a cell
prints ``"\\n".join(report.lines())`` (or shows the lines with ``reveal_after``) and reads ``report["name"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["Report"]


@dataclass(frozen=True)
class Report:
    """A printed table: ``text`` its lines (str, no newlines), ``values`` what later cells use (read-only)."""

    text: tuple[str, ...]
    values: Mapping = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "text", tuple(self.text))
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))

    def lines(self) -> list[str]:
        """The table's lines, to ``print("\\n".join(report.lines()))``."""
        return list(self.text)

    def __str__(self) -> str:
        """The table's lines joined by newlines (what ``print(report)`` shows)."""
        return "\n".join(self.text)

    def __getitem__(self, name):
        return self.values[name]
