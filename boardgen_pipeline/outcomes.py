"""A check's verdict as a plain value (SPEC 9 "asset checks": every check
carries the numbers a designer needs and a picture; seed 001 F4).

The F4 assertions, the overlay checks and the node-map checks all return
:class:`CheckOutcome`; the Dagster code location turns them into check
results, the CLI into lines, without either knowing which check it holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SCOPES_SHOWN = 64  # scopes listed in a check's metadata (the count is always complete)


@dataclass
class CheckOutcome:
    """One assertion on one row. ``metadata`` holds plain values, ``pictures``
    markdown text."""

    name: str
    assertion: str
    passed: bool
    severity: str  # "error" or "warning"
    blocking: bool
    description: str
    metadata: dict = field(default_factory=dict)
    pictures: dict = field(default_factory=dict)


def _scopes(scopes: list[int]) -> list[int]:
    return list(scopes[:SCOPES_SHOWN])
