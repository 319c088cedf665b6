"""A port's verdict: its results against the kit, integer by integer, and
the first divergence of each vector named (SPEC 11 "checks a port's results
against them"; STYLE.md: "a failing port learns which edge case it missed,
not just mismatch").

A vector's ``expected`` lists its outputs in the order a port computes them
(the stages of an attempt: stream, placement, shave, legality, fog, gate,
closure, verdict; then the exit, the board, the measure). The check walks
``expected`` and the port's outputs side by side in that order and stops at
the first value that differs, so it names the stage where the port went
wrong, not a later stage that only inherited the error: the attempt (``k``),
the stage, the draw or the cell (``(x, y)``) or the integer, expected and
got. No tolerance: every value is an integer or a string and must be equal.

The shape is held exactly as docs/conformance.md promises it: a value of
another JSON type than the kit's (``"3"`` for ``3``, ``0`` for ``null``,
``true`` for ``1``) is a divergence, and so is a key the kit does not have
(named once the object's own keys agree: a wrong value is the more telling
news) or a result for a vector the kit does not hold. Key order inside an
object is free, as in any JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from boardgen_pipeline.conformance.kit import Kit
from boardgen_pipeline.words import count

# fields that hold cell indices: their divergence also names the cell as (x, y)
CELL_FIELDS = {"placed", "removed", "cells", "mines", "fog", "packs"}


@dataclass(frozen=True)
class Divergence:
    vector: str
    flags: tuple[str, ...]
    stage: str
    path: str
    expected: object
    got: object
    detail: str = ""

    def line(self) -> str:
        flags = f" [{', '.join(self.flags)}]" if self.flags else ""
        detail = f" ({self.detail})" if self.detail else ""
        return (f"DIVERGES {self.vector}{flags}: stage {self.stage}: {self.path}: expected "
                f"{_show(self.expected)}, got {_show(self.got)}{detail}")


def _show(value) -> str:
    """A value as its JSON text (``null``, ``"3"``, ``3``), cut at 80 characters."""
    text = f'"{value}"' if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


class _Found(Exception):
    def __init__(self, path: list, expected, got, detail: str = ""):
        self.path, self.expected, self.got, self.detail = path, expected, got, detail


def json_type(value) -> str:
    """The JSON type of a parsed value, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction or an exponent"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _walk(expected, got, path: list) -> None:
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            raise _Found(path, "an object", got, f"got {json_type(got)}")
        for key, value in expected.items():
            if key not in got:
                raise _Found([*path, key], value, None, "missing")
            _walk(value, got[key], [*path, key])
        extra = [key for key in got if key not in expected]
        if extra:
            raise _Found([*path, extra[0]], None, got[extra[0]],
                         f"extra key: the kit has no {extra[0]!r} here"
                         + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""))
        return
    if isinstance(expected, list):
        if not isinstance(got, list):
            raise _Found(path, "a list", got, f"got {json_type(got)}")
        for i, value in enumerate(expected):
            if i >= len(got):
                raise _Found([*path, i], value, None, f"missing: {len(got)} items where the kit has {len(expected)}")
            _walk(value, got[i], [*path, i])
        if len(got) > len(expected):
            raise _Found([*path, len(expected)], None, got[len(expected)],
                         f"extra: {len(got)} items where the kit has {len(expected)}")
        return
    # integers and strings only: equal, and of the same kind (True is not 1, "3" is not 3)
    if type(expected) is not type(got):
        raise _Found(path, expected, got, f"JSON type: expected {json_type(expected)}, got {json_type(got)}")
    if expected != got:
        raise _Found(path, expected, got)


def _path_text(path: list) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "$"


def _stage(kind: str, path: list, expected_root: dict) -> str:
    """The stage a path belongs to, in the words of docs/conformance.md."""
    if not path:
        return kind
    head = path[0]
    if head == "attempts" and len(path) >= 2:
        k = expected_root["attempts"][path[1]]["k"] if path[1] < len(expected_root["attempts"]) else path[1] + 1
        if len(path) == 2 or path[2] == "k":
            return f"attempt {k}: the attempt loop"
        stage = path[2]
        if stage == "placement" and len(path) >= 4 and path[3] == "draws":
            return f"attempt {k} placement (a stream draw)"
        return f"attempt {k} {stage}"
    if kind in ("derive_at", "below", "open_stream"):
        names = {"name_hex": "stream name (the hash's input bytes)", "state": "stream state (SHA-256 to state)",
                 "outputs": "stream draw (SplitMix64)", "values": "bounded draw (below by rejection)",
                 "draws_after": "bounded draw (rejections: 64-bit outputs taken)"}
        return names.get(head, str(head))
    if head == "board" and len(path) >= 2 and path[1] == "numbers":
        return "numbers"
    return str(head)


def _cell_note(path: list, expected, got, width: int | None) -> str:
    if width is None:
        return ""
    if path and isinstance(path[-1], int) and any(p in CELL_FIELDS for p in path if isinstance(p, str)):
        notes = []
        for name, v in (("expected", expected), ("got", got)):
            if isinstance(v, int) and not isinstance(v, bool):
                notes.append(f"{name} cell ({v % width},{v // width})")
        return ", ".join(notes)
    if len(path) >= 3 and path[-3] == "board" and path[-2] == "numbers" and isinstance(expected, str) \
            and isinstance(got, str):
        x = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
        return f"first differing cell ({x},{path[-1]})"
    if path and path[-1] == "layout" and isinstance(expected, str) and isinstance(got, str):
        i = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
        return f"first differing cell ({i % (width + 1)},{i // (width + 1)})"
    return ""


def _width(v: dict) -> int | None:
    inputs = v.get("inputs", {})
    row = inputs.get("row")
    if isinstance(row, dict) and isinstance(row.get("board_width"), int):
        return row["board_width"]
    if isinstance(inputs.get("width"), int):
        return inputs["width"]
    layout = inputs.get("layout")
    if isinstance(layout, str):
        return len(layout.split("/")[0])
    return None


def first_divergence(v: dict, got) -> Divergence | None:
    """The first value where ``got`` differs from vector ``v``'s expected
    outputs, or None when they agree everywhere."""
    try:
        _walk(v["expected"], got, [])
    except _Found as found:
        notes = [found.detail, _cell_note(found.path, found.expected, found.got, _width(v))]
        if found.path[:1] == ["attempts"] and found.path[-1:] == ["k"]:
            notes.append(f"the port's attempt {found.path[1] + 1} is numbered {found.got!r}: an attempt dropped, "
                         f"added or out of order")
        detail = ", ".join(d for d in notes if d)
        return Divergence(v["id"], tuple(v.get("flags", ())), _stage(v["kind"], found.path, v["expected"]),
                          _path_text(found.path), found.expected, found.got, detail)
    return None


@dataclass(frozen=True)
class Verdict:
    vectors: int
    divergences: list[Divergence]
    missing: list[str]
    unknown: list[str] = field(default_factory=list)  # results for ids the kit does not hold

    @property
    def agrees(self) -> bool:
        return not self.divergences and not self.missing and not self.unknown

    def report(self, limit: int = 50) -> str:
        lines = [d.line() for d in self.divergences[:limit]]
        if len(self.divergences) > limit:
            lines.append(f"... and {len(self.divergences) - limit} more divergent vectors")
        if self.missing:
            shown = ", ".join(self.missing[:10]) + (" ..." if len(self.missing) > 10 else "")
            lines.append(f"NO RESULT for {count(len(self.missing), 'vector')}: {shown}")
        if self.unknown:
            shown = ", ".join(self.unknown[:10]) + (" ..." if len(self.unknown) > 10 else "")
            lines.append(f"NO VECTOR for {count(len(self.unknown), 'result')}: {shown}")
        agree = self.vectors - len(self.divergences) - len(self.missing)
        lines.append(f"{agree} of {self.vectors} vectors agree" + ("" if self.agrees else
                     f"; {len(self.divergences)} diverge, {len(self.missing)} have no result"
                     + (f", {len(self.unknown)} results name no vector" if self.unknown else "")))
        return "\n".join(lines)


def check(kit: Kit, results: dict) -> Verdict:
    """Every vector of ``kit`` against ``results`` (vector id -> outputs)."""
    divergences, missing, count, ids = [], [], 0, set()
    for _, _, v in kit.vectors():
        count += 1
        ids.add(v["id"])
        if v["id"] not in results:
            missing.append(v["id"])
            continue
        d = first_divergence(v, results[v["id"]])
        if d is not None:
            divergences.append(d)
    return Verdict(count, divergences, missing, [i for i in results if i not in ids])
