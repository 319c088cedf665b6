"""The kit's JSON text: integers only, one encoding (SPEC 11 "integer pairs
compared exactly, no float tolerance"; seed 000 "整数对比对，禁浮点容差").

A port in any language reads the kit, so its text avoids what JSON readers
disagree on: no float ever appears (a table's decimal is written as the
string the designer wrote, ``"0.15"``); an integer outside the signed 32-bit
range is written as a decimal string (a stream state, a 64-bit output), so a
reader that parses every JSON number as a double, or as a signed 64-bit
integer (GDScript's ``int``), loses nothing. Keys keep the order the kit
builder gives them: that order is the order of the stages, which the checker
walks to name the *first* divergence.

The layout of the text is fixed (two-space indents; a list of scalars on one
line), so the same kit is the same bytes on every machine and a one-value
change is a one-line diff.
"""

from __future__ import annotations

import json

INT32_MAX = 2**31 - 1


def u64(value: int) -> str:
    """A value that may not fit a JSON reader's number: its decimal text."""
    return str(int(value))


def _check(value, where: str) -> None:
    if isinstance(value, float):
        raise TypeError(f"a float at {where}: the kit is integer-only (write decimals as strings)")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > INT32_MAX:
        raise TypeError(f"{value} at {where} exceeds 32 bits: write it with u64()")


def _scalar(value) -> bool:
    return value is None or isinstance(value, (bool, int, str))


def _encode(value, indent: int, where: str, out: list[str]) -> None:
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        out.append("{\n")
        items = list(value.items())
        for i, (key, item) in enumerate(items):
            if not isinstance(key, str):
                raise TypeError(f"a key {key!r} at {where} is not a string")
            out.append(f"{pad}  {json.dumps(key, ensure_ascii=False)}: ")
            _encode(item, indent + 1, f"{where}.{key}", out)
            out.append(",\n" if i < len(items) - 1 else "\n")
        out.append(pad + "}")
    elif isinstance(value, (list, tuple)):
        if all(_scalar(v) for v in value):
            for i, v in enumerate(value):
                _check(v, f"{where}[{i}]")
            out.append("[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]")
            return
        out.append("[\n")
        for i, item in enumerate(value):
            out.append(pad + "  ")
            _encode(item, indent + 1, f"{where}[{i}]", out)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append(pad + "]")
    else:
        _check(value, where)
        if not _scalar(value):
            raise TypeError(f"no kit form for {type(value).__name__} at {where}")
        out.append(json.dumps(value, ensure_ascii=False))


def dumps(value) -> str:
    """``value`` as kit text (UTF-8, ends with a newline)."""
    out: list[str] = []
    _encode(value, 0, "$", out)
    return "".join(out) + "\n"
