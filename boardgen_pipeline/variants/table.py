"""The variation table and its candidate pool gate (SPEC 3; seed 003 "变异框架与
类型清单", "候选池门控", "调参表", "配套义务闭环").

A variant type is one row of ``tables/variation.toml``; its behaviour is
declared by three enums (effect / trigger / placement) plus the scope, and
every reader routes by those enums, never by a type's id or name (seed 003
"零特判原则"). Adding a type is adding a row: nothing in this package knows a
type by name.

Load-time checks follow the house rule of SPEC 2.7: every violation of an
edit is collected and raised together in one
:class:`~boardgen_pipeline.errors.TableError`, each naming the file, the row
(the type id), the field, the value and the rule. The rules and why they
exist are in ``docs/decisions/variants.md``.

The gate (:func:`candidate_pools`) is the seed's three-part predicate:
``unlock_level <= level_index``, the row's board types meet the board's type
(empty = wildcard), and node identity (``global`` rows only on Boss or elite
nodes). An empty pool is a legal state, not an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from boardgen_pipeline.errors import TableError, Violation
from boardgen_pipeline.tables.board_gen import BOARD_TYPES
from boardgen_pipeline.tables.shape import kind, nearest, table_violation
from boardgen_pipeline.tables.tomlio import load_toml

SCOPES = ("region", "global")


EFFECTS = ("flat_damage", "hide_number", "resource_face")


TRIGGERS = ("on_open", "on_number_shown", "always")


PLACEMENTS = ("closed_only", "any")


# Seed 003 "调参表": flat damage is an additive small integer [1, 9]; the
# resource skew is a survival cut in percent [0, 50] (0 = neutral "off"
# anchor); hide_number has no magnitude ("—"), so its only value is 0.
EFFECT_VALUE_DOMAIN: dict[str, tuple[int, int]] = {
    "flat_damage": (1, 9),
    "hide_number": (0, 0),
    "resource_face": (0, 50),
}


HEADER_FIELDS = ("percent_of_cells", "per_level_bonus", "pack_min", "pack_max")


ROW_FIELDS = (
    "id",
    "name",
    "unlock_level",
    "scope",
    "effect",
    "effect_value",
    "trigger",
    "placement",
    "board_types",
    "counter_items",
)


TOP_LEVEL_FIELDS = ("header", "types")


# Ids end up in Parquet columns, SQL filters and the text drawing: keep them
# to one plain spelling so that a designer's typo cannot hide behind case or
# spaces.
ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class VariantType:
    """One row of the variation table (one declared variant type)."""

    id: str
    name: str
    unlock_level: int
    scope: str
    effect: str
    effect_value: int
    trigger: str
    placement: str
    board_types: tuple[str, ...]
    counter_items: tuple[str, ...] = ()

    def matches_board_type(self, board_type: str) -> bool:
        return not self.board_types or board_type in self.board_types


@dataclass(frozen=True)
class VariationTable:
    """Header parameters plus the type rows, in table order.

    Table order matters: a Boss board takes the *first* global row of its pool
    (seed 003 "全局取用确定性")."""

    percent_of_cells: Fraction
    per_level_bonus: int
    pack_min: int
    pack_max: int
    types: tuple[VariantType, ...]
    source: str = "<memory>"

    def type_by_id(self, type_id: str) -> VariantType:
        for t in self.types:
            if t.id == type_id:
                return t
        raise KeyError(type_id)


def _is_int(value) -> bool:
    # TOML booleans are Python bools, which are ints: a ``true`` must not pass
    # for 1.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return _is_int(value) or isinstance(value, float)


def _percent_fraction(value) -> Fraction:
    # A float read from TOML is converted through its shortest decimal text,
    # so "12.5" means exactly 25/2 and "0.1" means exactly 1/10 rather than
    # the binary neighbour: the count rounding is then exact on every machine.
    if _is_int(value):
        return Fraction(value)
    return Fraction(repr(value))


def _unknown(file: str, row: str, keys, allowed) -> list[Violation]:
    out = []
    for key in keys:
        if key not in allowed:
            hint = nearest(key, allowed)
            extra = f"; did you mean {hint!r}?" if hint else ""
            out.append(
                Violation(file, row, key, None, "unknown_field", f"unknown field {key!r}{extra} (allowed: {', '.join(allowed)})")
            )
    return out


def _check_header(file: str, header) -> tuple[list[Violation], dict]:
    vs: list[Violation] = []
    bad = table_violation(file, "header", "header", header, "header")
    if bad is not None:
        return [bad], {}
    vs += _unknown(file, "header", header.keys(), HEADER_FIELDS)
    values: dict = {}
    for name in HEADER_FIELDS:
        if name not in header:
            vs.append(Violation(file, "header", name, None, "missing_field", f"header field {name!r} is required"))
            continue
        value = header[name]
        ok_type = _is_number(value) if name == "percent_of_cells" else _is_int(value)
        if not ok_type:
            kind = "a number" if name == "percent_of_cells" else "an integer"
            vs.append(Violation(file, "header", name, value, "field_type", f"{name} must be {kind}"))
            continue
        values[name] = value

    def out_of_range(name, lo, hi, why):
        if name in values and not (lo <= values[name] <= hi):
            vs.append(Violation(file, "header", name, values[name], "header_range", f"{name} must lie in {why}"))

    out_of_range("percent_of_cells", 0, 50, "[0, 50] (percent of the candidate cells)")
    out_of_range("per_level_bonus", 0, 9, "[0, 9] (cells per level)")
    pmax = values.get("pack_max", 9)
    pmin = values.get("pack_min", 1)
    out_of_range("pack_min", 1, pmax, f"[1, pack_max] = [1, {pmax}]")
    out_of_range("pack_max", pmin, 9, f"[pack_min, 9] = [{pmin}, 9]")
    return vs, values


def _check_row(file: str, index: int, row) -> tuple[list[Violation], VariantType | None]:
    if not isinstance(row, dict):
        return [Violation(file, f"#{index}", "types", row, "field_type",
                          f"each [[types]] entry must be a table, got {kind(row)}")], None
    raw_id = row.get("id")
    key = raw_id if isinstance(raw_id, str) and raw_id else f"#{index}"
    vs: list[Violation] = _unknown(file, key, row.keys(), ROW_FIELDS)

    def need(name, default=None, required=True):
        if name in row:
            return row[name]
        if required:
            vs.append(Violation(file, key, name, None, "missing_field", f"field {name!r} is required"))
        return default

    type_id = need("id")
    if type_id is not None and (not isinstance(type_id, str) or not ID_PATTERN.match(type_id)):
        vs.append(Violation(file, key, "id", type_id, "id_format", "id must match [a-z][a-z0-9_]*"))
    name = need("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        vs.append(Violation(file, key, "name", name, "field_type", "name must be a non-empty string"))
    unlock = need("unlock_level")
    if unlock is not None:
        if not _is_int(unlock):
            vs.append(Violation(file, key, "unlock_level", unlock, "field_type", "unlock_level must be an integer"))
        elif unlock < 1:
            vs.append(Violation(file, key, "unlock_level", unlock, "unlock_level_range", "unlock_level must be >= 1"))

    enums = {}
    for field_name, domain in (("scope", SCOPES), ("effect", EFFECTS), ("trigger", TRIGGERS), ("placement", PLACEMENTS)):
        value = need(field_name)
        if value is None:
            continue
        if value not in domain:
            vs.append(
                Violation(file, key, field_name, value, "enum_domain", f"{field_name} must be one of {', '.join(domain)}")
            )
        else:
            enums[field_name] = value

    effect = enums.get("effect")
    effect_value = None
    if effect is not None:
        lo, hi = EFFECT_VALUE_DOMAIN[effect]
        # A magnitude-less effect may leave the field out; the others must
        # state it, so that a forgotten value is not silently read as 0.
        effect_value = need("effect_value", default=0, required=(lo, hi) != (0, 0))
        if effect_value is not None:
            if not _is_int(effect_value):
                vs.append(Violation(file, key, "effect_value", effect_value, "field_type", "effect_value must be an integer"))
                effect_value = None
            elif not lo <= effect_value <= hi:
                vs.append(
                    Violation(
                        file, key, "effect_value", effect_value, "effect_value_domain",
                        f"effect_value of a {effect} row must lie in [{lo}, {hi}]",
                    )
                )

    # Cross-field: a whole-board variant touches no cell and is on for the
    # whole board; the resource skew only has meaning at board level.
    scope = enums.get("scope")
    if scope == "global" and "trigger" in enums and enums["trigger"] != "always":
        vs.append(Violation(file, key, "trigger", enums["trigger"], "scope_trigger", "a global row must have trigger = always"))
    if effect == "resource_face" and scope is not None and scope != "global":
        vs.append(Violation(file, key, "scope", scope, "scope_effect", "a resource_face row must have scope = global"))

    board_types = need("board_types", default=[], required=False)
    if not isinstance(board_types, list) or not all(isinstance(b, str) for b in board_types):
        vs.append(Violation(file, key, "board_types", board_types, "field_type", "board_types must be a list of strings"))
        board_types = []
    else:
        for b in board_types:
            if b not in BOARD_TYPES:
                vs.append(
                    Violation(
                        file, key, "board_types", b, "board_type_vocabulary",
                        f"board type {b!r} is not one of {', '.join(BOARD_TYPES)} (empty list = any)",
                    )
                )
    counter = need("counter_items", default=[], required=False)
    if not isinstance(counter, list):
        vs.append(Violation(file, key, "counter_items", counter, "field_type", "counter_items must be a list"))
    elif counter:
        vs.append(
            Violation(
                file, key, "counter_items", counter, "counter_items_nonempty",
                "counter_items must stay empty (counter obligation void since 2026-10-03, seed 003)",
            )
        )

    if vs:
        return vs, None
    return [], VariantType(
        id=type_id,
        name=name,
        unlock_level=unlock,
        scope=scope,
        effect=effect,
        effect_value=effect_value,
        trigger=enums["trigger"],
        placement=enums["placement"],
        board_types=tuple(board_types),
        counter_items=(),
    )


def parse_variation_table(data: dict, source: str = "<memory>") -> VariationTable:
    """Check a parsed table; raise TableError with every violation, or return
    the model."""
    vs: list[Violation] = _unknown(source, "-", data.keys(), TOP_LEVEL_FIELDS)
    if "header" not in data:
        vs.append(Violation(source, "header", "header", None, "missing_field", "the [header] table is required"))
        header_vs, header = [], {}
    else:
        header_vs, header = _check_header(source, data["header"])
    vs += header_vs

    # No [[types]] at all is the P0 empty list: legal (seed 003 "P0 最小闭环").
    rows = data.get("types", [])
    if not isinstance(rows, list):
        vs.append(Violation(source, "-", "types", rows, "field_type", "types must be an array of tables ([[types]])"))
        rows = []
    types: list[VariantType] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(rows, start=1):
        row_vs, vt = _check_row(source, index, row)
        vs += row_vs
        raw_id = row.get("id") if isinstance(row, dict) else None
        if isinstance(raw_id, str):
            if raw_id in seen:
                vs.append(
                    Violation(source, raw_id, "id", raw_id, "duplicate_id", f"id {raw_id!r} already used by row #{seen[raw_id]}")
                )
            else:
                seen[raw_id] = index
        if vt is not None:
            types.append(vt)
    if vs:
        raise TableError(vs)
    return VariationTable(
        percent_of_cells=_percent_fraction(header["percent_of_cells"]),
        per_level_bonus=header["per_level_bonus"],
        pack_min=header["pack_min"],
        pack_max=header["pack_max"],
        types=tuple(types),
        source=source,
    )


def load_variation_table(path: Path | str) -> VariationTable:
    """Load ``variation.toml``; every violation is raised at once."""
    return parse_variation_table(load_toml(path), str(path))


@dataclass(frozen=True)
class CandidatePools:
    """The gate's output for one board: eligible rows, in table order."""

    global_pool: tuple[VariantType, ...]
    region_pool: tuple[VariantType, ...]


def candidate_pools(
    table: VariationTable,
    *,
    level_index: int,
    board_type: str,
    is_boss: bool,
    is_elite: bool = False,
) -> CandidatePools:
    """Seed 003 "候选池门控": unlock level, board type, node identity.

    Global rows enter only on Boss or elite nodes (elite is a forward word of
    the vocabulary: no default node is elite); everywhere else they are
    skipped silently."""
    if level_index < 1:
        raise ValueError(f"level_index must be >= 1, got {level_index}")
    if board_type not in BOARD_TYPES:
        raise ValueError(f"unknown board type {board_type!r}; one of {BOARD_TYPES}")
    eligible = [t for t in table.types if t.unlock_level <= level_index and t.matches_board_type(board_type)]
    whole_board_node = is_boss or is_elite
    return CandidatePools(
        global_pool=tuple(t for t in eligible if t.scope == "global" and whole_board_node),
        region_pool=tuple(t for t in eligible if t.scope == "region"),
    )
