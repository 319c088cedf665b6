"""Shape checks shared by every table loader (SPEC 2.7 "all
violations reported together").

Before any rule about values, a table must have the right shape: its
``[header]`` a table, its rows an array of tables, each row a table, each
key field a scalar of its kind. A wrong shape is a violation like any other
(file, row, field, value, rule ``shape``), never a TypeError deep inside a
check. The messages name the TOML kind found and, for the two usual slips
(``[[header]]`` for ``[header]``, ``[rows]`` for ``[[rows]]``), the fix.
"""

from __future__ import annotations

import datetime
import difflib

from boardgen_pipeline.errors import Violation

SHAPE = "shape"


def nearest(name, known) -> str | None:
    """The entry of ``known`` a misspelt ``name`` most likely meant (difflib's
    closest, at its default cutoff), None when none is close: every "did you
    mean" of the tables and the command line."""
    near = difflib.get_close_matches(str(name), list(known), n=1)
    return near[0] if near else None


def is_int(value) -> bool:
    """A TOML integer (a ``true`` must not pass for 1: bools are ints)."""
    return isinstance(value, int) and not isinstance(value, bool)


def kind(value) -> str:
    """The TOML kind of a parsed value, in words."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (datetime.date, datetime.time)):
        return "a date/time"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            return "an array of tables"
        return "an array"
    return type(value).__name__


def table_violation(file: str, row: str, field: str, value, what: str) -> Violation | None:
    """None when ``value`` is a table; else the violation naming ``[what]``."""
    if isinstance(value, dict):
        return None
    hint = f"; write [{what}], not [[{what}]]" if isinstance(value, list) and kind(value) == "an array of tables" else ""
    return Violation(file, row, field, value, SHAPE, f"[{what}] must be a table, got {kind(value)}{hint}")


def document_header(file: str, data: dict, entries: str, violations: list[Violation]) -> dict:
    """The ``[header]`` table of a table document whose entries are ``[[entries]]``: every other
    top-level name, and a header that is no table, reported (the header then reads as empty)."""
    for name in sorted(set(data) - {"header", entries}):
        violations.append(Violation(file, "-", name, data[name], "unknown_field",
                                    f"top level holds [header] and [[{entries}]] only"))
    header = data.get("header", {})
    bad = table_violation(file, "header", "header", header, "header")
    if bad is not None:
        violations.append(bad)
        return {}
    return header


def array_of_tables(file: str, field: str, value, violations: list[Violation]) -> list[tuple[int, dict]]:
    """The ``(1-based index, table)`` entries of an ``[[field]]`` array; a
    value that is no array, and every entry that is no table, is reported."""
    if not isinstance(value, list):
        hint = f"; write [[{field}]], not [{field}]" if isinstance(value, dict) else ""
        violations.append(Violation(file, "-", field, value, SHAPE,
                                    f"{field} must be an array of tables ([[{field}]]), got {kind(value)}{hint}"))
        return []
    out = []
    for index, entry in enumerate(value, start=1):
        if isinstance(entry, dict):
            out.append((index, entry))
        else:
            violations.append(Violation(file, f"#{index}", field, entry, SHAPE,
                                        f"entry #{index} of {field} must be a table, got {kind(entry)}"))
    return out


def int_key_violation(file: str, row: str, field: str, value) -> Violation | None:
    """A key field (one that names a row) must be a plain integer."""
    if value is None or is_int(value):
        return None
    return Violation(file, row, field, value, SHAPE, f"key field {field} must be an integer, got {kind(value)}")
