"""Resource weight table and the resource-face skew (SPEC 3 "Resource face
skew"; seed 003 "全局作用域型" ("skewed veins"), acceptance "off 态零扰动",
"资源面偏斜正向池合计恒 77").

A whole-board variant with effect ``resource_face`` changes no cell: it
reshapes the weights of the positive resource draw. Survival rows lose
``effect_value`` percent of their weight, the removed weight goes to the
offense rows in proportion to their weights, whitelist rows never move, and
the pool total stays exactly 77. The clear-slot pool is another table and is
never touched here.

Integers, exactly: the ideal (rational) weights of the survival and offense
rows are apportioned by the largest-remainder method over their joint total,
which is an integer (what survival loses offense gains), so the pool keeps
its total. Ties of equal remainders go to the row that comes first in the
table. Survival rows never rise and offense rows never fall: a survival ideal
is at most its integer start, an offense ideal at least its start, and
largest remainder moves each row by less than one unit from its ideal.
``effect_value = 0`` returns the input object itself (bit-identical off
state).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

from boardgen_pipeline.errors import TableError, Violation
from boardgen_pipeline.tables.shape import nearest
from boardgen_pipeline.tables.tomlio import load_toml

FAMILIES = ("offense", "survival", "whitelist")


POOL_TOTAL = 77


ROW_FIELDS = ("id", "name", "family", "weight")


TOP_LEVEL_FIELDS = ("resources",)


ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class ResourceWeight:
    id: str
    name: str
    family: str
    weight: int


@dataclass(frozen=True)
class ResourceWeights:
    """The positive resource pool, rows in table order."""

    rows: tuple[ResourceWeight, ...]
    source: str = "<memory>"

    @property
    def total(self) -> int:
        return sum(r.weight for r in self.rows)

    def as_dict(self) -> dict[str, int]:
        return {r.id: r.weight for r in self.rows}

    def family_total(self, family: str) -> int:
        return sum(r.weight for r in self.rows if r.family == family)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_resource_weights(data: dict, source: str = "<memory>") -> ResourceWeights:
    """Check a parsed weight table; raise TableError with every violation."""
    vs: list[Violation] = []
    for key in data:
        if key not in TOP_LEVEL_FIELDS:
            vs.append(Violation(source, "-", key, None, "unknown_field", f"unknown field {key!r} (allowed: resources)"))
    raw_rows = data.get("resources", [])
    if not isinstance(raw_rows, list):
        vs.append(Violation(source, "-", "resources", raw_rows, "field_type", "resources must be [[resources]] tables"))
        raw_rows = []
    rows: list[ResourceWeight] = []
    seen: set[str] = set()
    for index, row in enumerate(raw_rows, start=1):
        if not isinstance(row, dict):
            vs.append(Violation(source, f"#{index}", "-", row, "field_type", "each [[resources]] entry must be a table"))
            continue
        rid = row.get("id")
        key = rid if isinstance(rid, str) and rid else f"#{index}"
        row_vs: list[Violation] = []
        for k in row:
            if k not in ROW_FIELDS:
                hint = nearest(k, ROW_FIELDS)
                extra = f"; did you mean {hint!r}?" if hint else ""
                row_vs.append(Violation(source, key, k, None, "unknown_field", f"unknown field {k!r}{extra}"))
        for k in ROW_FIELDS:
            if k not in row:
                row_vs.append(Violation(source, key, k, None, "missing_field", f"field {k!r} is required"))
        if "id" in row and (not isinstance(rid, str) or not ID_PATTERN.match(rid)):
            row_vs.append(Violation(source, key, "id", rid, "id_format", "id must match [a-z][a-z0-9_]*"))
        if "name" in row and (not isinstance(row["name"], str) or not row["name"].strip()):
            row_vs.append(Violation(source, key, "name", row["name"], "field_type", "name must be a non-empty string"))
        if "family" in row and row["family"] not in FAMILIES:
            row_vs.append(
                Violation(source, key, "family", row["family"], "enum_domain", f"family must be one of {', '.join(FAMILIES)}")
            )
        if "weight" in row:
            w = row["weight"]
            if not _is_int(w):
                row_vs.append(Violation(source, key, "weight", w, "field_type", "weight must be an integer"))
            elif not 0 <= w <= POOL_TOTAL:
                row_vs.append(Violation(source, key, "weight", w, "weight_range", f"weight must lie in [0, {POOL_TOTAL}]"))
        if isinstance(rid, str):
            if rid in seen:
                row_vs.append(Violation(source, rid, "id", rid, "duplicate_id", f"id {rid!r} is used twice"))
            seen.add(rid)
        vs += row_vs
        if not row_vs:
            rows.append(ResourceWeight(rid, row["name"], row["family"], row["weight"]))
    if not vs:
        total = sum(r.weight for r in rows)
        if total != POOL_TOTAL:
            vs.append(
                Violation(source, "-", "weight", total, "pool_total", f"the positive pool must total {POOL_TOTAL}, got {total}")
            )
        # Weight cut from survival must land somewhere: with no offense weight
        # any skew would shrink the pool below 77.
        if sum(r.weight for r in rows if r.family == "offense") == 0:
            vs.append(
                Violation(source, "-", "family", "offense", "offense_pool_empty", "at least one offense row needs weight > 0")
            )
    if vs:
        raise TableError(vs)
    return ResourceWeights(tuple(rows), source)


def load_resource_weights(path: Path | str) -> ResourceWeights:
    """Load ``resource_weights.toml``; every violation is raised at once."""
    return parse_resource_weights(load_toml(path), str(path))


def largest_remainder(ideals: list[Fraction], total: int) -> list[int]:
    """Integers summing to ``total``, each the floor or ceiling of its ideal
    (``sum(ideals) == total``); leftover units go to the largest fractional
    parts, ties to the lower index."""
    floors = [math.floor(q) for q in ideals]
    left = total - sum(floors)
    order = sorted(range(len(ideals)), key=lambda i: (-(ideals[i] - floors[i]), i))
    for i in order[:left]:
        floors[i] += 1
    return floors


def skew_weights(weights: ResourceWeights, effect_value: int) -> ResourceWeights:
    """The resource-face skew by ``effect_value`` percent (0..100)."""
    if not _is_int(effect_value) or not 0 <= effect_value <= 100:
        raise ValueError(f"effect_value must be an integer percent in [0, 100], got {effect_value!r}")
    if effect_value == 0:
        return weights
    offense_total = weights.family_total("offense")
    if offense_total == 0:
        raise ValueError("no offense weight to receive the survival cut")
    cut = Fraction(effect_value, 100)
    removed = sum((r.weight * cut for r in weights.rows if r.family == "survival"), Fraction(0))
    movable = [i for i, r in enumerate(weights.rows) if r.family != "whitelist"]
    ideals = []
    for i in movable:
        r = weights.rows[i]
        if r.family == "survival":
            ideals.append(r.weight * (1 - cut))
        else:
            ideals.append(r.weight + removed * Fraction(r.weight, offense_total))
    moved_total = sum(weights.rows[i].weight for i in movable)
    new = largest_remainder(ideals, moved_total)
    rows = list(weights.rows)
    for i, w in zip(movable, new):
        rows[i] = replace(rows[i], weight=w)
    return ResourceWeights(tuple(rows), weights.source)


def weights_for_overlay(weights: ResourceWeights, overlay) -> ResourceWeights:
    """The weights a board's resource draw uses: routed by the overlay's
    effect enum only (seed 003 "读取方按枚举路由")."""
    if overlay.effect == "resource_face" and overlay.global_variant is not None:
        return skew_weights(weights, overlay.effect_value)
    return weights
