"""The ``board_gen`` parameter table and its load-time checks (SPEC 2.7;
seed 000 "调参表" and "加载期参数校验"; seed 001 "加载期校验" F2/F2b/F2c).

The table is TOML: a ``[header]`` (``spawn_side``, optional
``monotone_in_depth``) and one ``[[rows]]`` entry per ``(level_index,
node_depth)``. Loading runs every check and reports every violation at once
(file, row key, field, value, rule); nothing is returned unless the whole
table is valid. ``elite_*`` / ``boss_*`` fields are reserved for other
documents and carried through untouched.

Besides SPEC 2.7's checks, ``node_depth`` is at most ``scopes.MAX_DEPTH``
(255; rule ``seed_scopes``): the F4 batch of row ``(L, D)`` draws the scopes
``sigma(L, D) + i`` (SPEC 7), and ``sigma`` gives a depth 4096 scopes and a
level 256 depths, so a deeper row would calibrate on another row's boards
(``boardgen_pipeline/scopes.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from boardgen_pipeline import paths
from boardgen_pipeline.canonical import digest
from boardgen_pipeline.errors import TableError, Violation
from boardgen_pipeline.scopes import MAX_DEPTH, why_max_depth
from boardgen_pipeline.tables.shape import array_of_tables, document_header, int_key_violation, is_int, nearest
from boardgen_pipeline.tables.tomlio import load_toml

BOARD_TYPES = ("dungeon", "underdark", "deep_underdark")


RESERVED_PREFIXES = ("elite_", "boss_")


COST_GATE = 16384  # seed 001 F2c: max_gen_attempts * W * H, a frozen guard rail


FOG_RATIO_CEILING = 0.25  # seed 001 F2: absolute fog share ceiling


DEFAULT_TABLE = "board_gen.toml"


def round_half_up(x: float) -> int:
    """``floor(x + 0.5)``: seed 000's round, not Python's banker's round."""
    return math.floor(x + 0.5)


def mines_target(density: float, width: int, height: int, spawn_side: int) -> int:
    """N = round_half_up(mine_density * (W*H - spawn_cells)) (SPEC 2.2)."""
    return round_half_up(density * (width * height - spawn_side**2))


# Domain text shown to the designer when a value is out of its domain.
DOMAINS = {
    "level_index": "int >= 1",
    "node_depth": f"int [0, {MAX_DEPTH}]",
    "board_width": "int [8, 64]",
    "board_height": "int [8, 64]",
    "mine_density": "float (0, 0.5]",
    "inferability_target": "float [0.85, 1]",
    "solver_rules": "single_subset (frozen)",
    "min_safe_count": "int [1, 999]",
    "max_gen_attempts": "int [1, 32]",
    "board_type": "one of " + ", ".join(BOARD_TYPES),
    "shave_ring_radius": "int [0, 2]",
    "r0_max_cap": "int [spawn_cells, floor(W*H/2)]",
    "fog_region_count": "int [0, 32]",
    "fog_target_ratio": "float [0, 1)",
    "min_mean_survival": "float [0, 1], optional (check F: unset, no threshold)",
}



def key_text(key: tuple[int, int]) -> str:
    """A row's key as every message names it: ``(L,D)`` (a partition is ``L-D``: ``fingerprints.partition_key``)."""
    return f"({key[0]},{key[1]})"

class BoardGenRow(BaseModel):
    """One validated row. Field names are the seed's own."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    level_index: int = Field(ge=1)
    node_depth: int = Field(ge=0)
    board_width: int = Field(ge=8, le=64)
    board_height: int = Field(ge=8, le=64)
    mine_density: float = Field(gt=0, le=0.5)
    inferability_target: float = Field(ge=0.85, le=1)
    solver_rules: Literal["single_subset"] = "single_subset"
    min_safe_count: int = Field(ge=1, le=999)
    max_gen_attempts: int = Field(ge=1, le=32)
    board_type: Literal["dungeon", "underdark", "deep_underdark"]
    shave_ring_radius: int = Field(ge=0, le=2)
    r0_max_cap: int = Field(ge=1)
    fog_region_count: int = Field(default=0, ge=0, le=32)
    fog_target_ratio: float = Field(default=0.0, ge=0, lt=1)
    # check F: the least mean survival a perfect player may have on the row's boards
    min_mean_survival: float | None = Field(default=None, ge=0, le=1)
    reserved: dict = Field(default_factory=dict)

    @property
    def key(self) -> tuple[int, int]:
        return (self.level_index, self.node_depth)

    @property
    def key_text(self) -> str:
        return key_text((self.level_index, self.node_depth))

    def fields(self) -> dict:
        """Every field as plain values, reserved ones flattened back in."""
        out = self.model_dump(exclude={"reserved"})
        if out["min_mean_survival"] is None:  # unset: the row's fingerprint is the one it had before check F
            del out["min_mean_survival"]
        out.update(self.reserved)
        return out


# The row's parameters that its calibration report and each version of its history carry beside the
# figures (one query shows cause and effect), in their column order; the keys are
# in the path and solver_rules is frozen. The one list: calibration.report.TABLE_PARAMETERS and
# steps.history.PARAMETERS are read from it.
REPORTED_PARAMETERS = ("board_width", "board_height", "mine_density", "inferability_target", "r0_max_cap",
                       "max_gen_attempts", "min_safe_count", "shave_ring_radius", "board_type", "fog_region_count",
                       "fog_target_ratio")


@dataclass(frozen=True)
class Header:
    spawn_side: int = 3
    monotone_in_depth: tuple[str, ...] = ()
    dig_ap_cost: int = 1  # read-only copy of the action economy's price (seed 001 F3)
    # check F fails the row (error) instead of warning, where a row sets min_mean_survival
    survival_is_criterion: bool = False
    # the calibration diff's practical margins that replace its defaults, ((figure, margin), ...): the
    # figure names are the diff's to check (docs/review.md); decides no board
    review_margins: tuple[tuple[str, float], ...] = ()

    @property
    def spawn_cells(self) -> int:
        return self.spawn_side**2


@dataclass(frozen=True)
class BoardGenTable:
    """A validated ``board_gen`` table. ``warnings`` holds advisory findings
    (assertion E: a ``monotone_in_depth`` field that decreases with depth)."""

    path: str
    header: Header
    rows: dict[tuple[int, int], BoardGenRow]
    warnings: tuple[Violation, ...] = field(default=())

    @property
    def spawn_side(self) -> int:
        return self.header.spawn_side

    def levels(self) -> list[int]:
        return sorted({level for level, _ in self.rows})

    def keys(self) -> list[tuple[int, int]]:
        return sorted(self.rows)

    def resolve(self, level_index: int, node_depth: int) -> BoardGenRow:
        """Row ``(L, max d <= D)`` (floor rule); an unknown level is an error."""
        depths = [d for (lv, d) in self.rows if lv == level_index]
        if not depths:
            raise KeyError(f"level {level_index} has no rows in {self.path} (levels: {self.levels()})")
        if node_depth < 0:
            raise KeyError(f"node depth must be >= 0, got {node_depth}")
        return self.rows[(level_index, max(d for d in depths if d <= node_depth))]

    @cached_property
    def _boss_depths(self) -> dict[int, int]:
        # once per table: asked of every row, a scan per row made the sensor's tick quadratic in the rows
        deepest: dict[int, int] = {}
        for lv, d in self.rows:
            deepest[lv] = max(d, deepest.get(lv, d))
        return deepest

    def boss_depth(self, level_index: int) -> int:
        """The deepest row of a level is its Boss row (seed 000 "Boss 板")."""
        try:
            return self._boss_depths[level_index]
        except KeyError:
            raise ValueError(f"level {level_index} has no rows in {self.path}") from None

    def is_boss_row(self, key: tuple[int, int]) -> bool:
        return key[1] == self.boss_depth(key[0])

    def row_fingerprint(self, key: tuple[int, int]) -> str:
        """Content hash of everything that decides a row's boards: the row's
        fields and the header's spawn side. Rows whose fingerprint is unchanged
        keep their calibration data after a table edit."""
        payload = {"spawn_side": self.header.spawn_side, "row": self.rows[key].fields()}
        if self.rows[key].fog_region_count:
            payload["dig_ap_cost"] = self.header.dig_ap_cost
        if self.rows[key].min_mean_survival is not None:  # F's severity is part of the row's verdicts
            payload["survival_is_criterion"] = self.header.survival_is_criterion
        return digest(payload)


KEY_FIELDS = ("level_index", "node_depth")


def _row_label(raw: dict, index: int | None = None) -> str:
    level, depth = raw.get("level_index", "?"), raw.get("node_depth", "?")
    if index is not None and not all(v == "?" or is_int(v) for v in (level, depth)):
        return f"#{index}"  # a key of the wrong kind does not name the row
    return f"({level},{depth})"


def _header(path: str, raw: dict, violations: list[Violation]) -> Header:
    known = {"spawn_side", "monotone_in_depth", "dig_ap_cost", "survival_is_criterion", "review_margins"}
    for name in sorted(set(raw) - known):
        violations.append(Violation(path, "header", name, raw[name], "unknown_field",
                                    f"unknown header field; known: {sorted(known)}"))
    side = raw.get("spawn_side", 3)
    if type(side) is not int or side not in (3, 5):
        violations.append(Violation(path, "header", "spawn_side", side, "domain",
                                    "must be 3 or 5 (odd side of the spawn square)"))
        side = 3
    mono = raw.get("monotone_in_depth", [])
    numeric = [n for n, f in BoardGenRow.model_fields.items() if f.annotation in (int, float)]
    if not isinstance(mono, list) or any(not isinstance(m, str) or m not in numeric for m in mono):
        violations.append(Violation(path, "header", "monotone_in_depth", mono, "domain",
                                    f"must be a list of numeric row fields: {numeric}"))
        mono = []
    cost = raw.get("dig_ap_cost", 1)
    if type(cost) is not int or not 1 <= cost <= 8:
        violations.append(Violation(path, "header", "dig_ap_cost", cost, "domain", "must be int [1, 8]"))
        cost = 1
    criterion = raw.get("survival_is_criterion", False)
    if type(criterion) is not bool:
        violations.append(Violation(path, "header", "survival_is_criterion", criterion, "domain",
                                    "must be true or false (check F: an error instead of a warning)"))
        criterion = False
    return Header(side, tuple(mono), cost, criterion, _review_margins(path, raw.get("review_margins", {}), violations))


def _review_margins(path: str, raw, violations: list[Violation]) -> tuple[tuple[str, float], ...]:
    """The header's ``review_margins``: a table of figure = margin, each a
    number >= 0 (which figures exist is the calibration diff's to say)."""
    if not isinstance(raw, dict):
        violations.append(Violation(path, "header", "review_margins", raw, "domain",
                                    "must be a table of figure = margin, e.g. review_margins = { win_rate = 0.03 }"))
        return ()
    out = []
    for name, margin in sorted(raw.items()):
        if type(margin) not in (int, float) or not math.isfinite(margin) or margin < 0:
            violations.append(Violation(path, "header", f"review_margins.{name}", margin, "domain",
                                        "must be a number >= 0 (the smallest move of the figure worth flagging)"))
            continue
        out.append((name, float(margin)))
    return tuple(out)


def _row(path: str, raw: dict, header: Header, violations: list[Violation], index: int | None = None,
         reported: frozenset[str] = frozenset()) -> BoardGenRow | None:
    """One row's checks; ``reported`` names fields whose shape is already
    reported (their type error is not repeated)."""
    label = _row_label(raw, index)
    known = set(BoardGenRow.model_fields) - {"reserved"}
    reserved = {k: v for k, v in raw.items() if k.startswith(RESERVED_PREFIXES)}
    plain = {k: v for k, v in raw.items() if k not in reserved}
    for name in sorted(set(plain) - known):
        near = nearest(name, sorted(known))
        hint = f"did you mean {near}?" if near else "a typo?"
        violations.append(Violation(path, label, name, plain[name], "unknown_field",
                                    f"unknown field ({hint}); reserved prefixes are elite_ and boss_"))
        del plain[name]
    try:
        row = BoardGenRow(**plain, reserved=reserved)
    except ValidationError as exc:
        for err in exc.errors():
            name = str(err["loc"][0]) if err["loc"] else "-"
            if name in reported:
                continue
            if err["type"] == "missing":
                violations.append(Violation(path, label, name, None, "missing_field", "required field is missing"))
            else:
                violations.append(Violation(path, label, name, err.get("input"), "domain",
                                            f"must be {DOMAINS.get(name, '?')} ({err['msg']})"))
        return None
    before = len(violations)
    if row.node_depth > MAX_DEPTH:
        violations.append(Violation(path, label, "node_depth", row.node_depth, "seed_scopes",
                                    f"must be <= {MAX_DEPTH}: {why_max_depth()}"))
    W, H = row.board_width, row.board_height
    cap_hi = (W * H) // 2
    if not header.spawn_cells <= row.r0_max_cap <= cap_hi:
        violations.append(Violation(path, label, "r0_max_cap", row.r0_max_cap, "domain",
                                    f"must be in [spawn_cells, floor(W*H/2)] = [{header.spawn_cells}, {cap_hi}]"))
    n = mines_target(row.mine_density, W, H, header.spawn_side)
    if n < 1:
        violations.append(Violation(path, label, "mine_density", row.mine_density, "mines_at_least_one",
                                    f"N = round(mine_density * (W*H - spawn_cells)) = {n}; a board needs N >= 1"))
    if W * H - n < row.min_safe_count:
        violations.append(Violation(path, label, "min_safe_count", row.min_safe_count, "min_safe_feasible",
                                    f"W*H - N = {W * H - n} < min_safe_count"))
    cost = row.max_gen_attempts * W * H
    if cost > COST_GATE:
        violations.append(Violation(path, label, "max_gen_attempts", row.max_gen_attempts, "cost_gate",
                                    f"max_gen_attempts * W * H = {cost} > {COST_GATE}"))
    violations.extend(fog_predicate(path, label, row))
    return row if len(violations) == before else None


def fog_predicate(path: str, label: str, row: BoardGenRow) -> list[Violation]:
    """Seed 001 F2, the fog cross-field predicate in conjunctive form."""
    count, ratio, d = row.fog_region_count, row.fog_target_ratio, row.mine_density
    out = []

    def bad(rule_text):
        out.append(Violation(path, label, "fog_target_ratio", ratio, "fog_predicate", rule_text))

    if count == 0 and ratio != 0:
        bad("fog_region_count = 0 requires fog_target_ratio = 0")
    if count >= 1:
        if not ratio > 0:
            bad("fog_region_count >= 1 requires fog_target_ratio > 0")
        if ratio > 8 * d:
            bad(f"fog_target_ratio must be <= 8 * mine_density = {8 * d:g}")
        if ratio > FOG_RATIO_CEILING:
            bad(f"fog_target_ratio must be <= {FOG_RATIO_CEILING}")
    return out


def monotone_warnings(path: str, header: Header, rows: dict) -> list[Violation]:
    """Assertion E (advisory): fields named in ``monotone_in_depth`` must not
    decrease with depth within a level."""
    out = []
    for name in header.monotone_in_depth:
        for level in sorted({lv for lv, _ in rows}):
            chain = sorted((d, rows[(level, d)]) for (lv, d) in rows if lv == level)
            for (d0, a), (d1, b) in zip(chain, chain[1:]):
                va, vb = getattr(a, name), getattr(b, name)
                if vb < va:
                    out.append(Violation(path, f"({level},{d1})", name, vb, "monotone_in_depth",
                                         f"decreases from {va} at depth {d0}", severity="warning"))
    return out


def load_board_gen(path: Path | str) -> BoardGenTable:
    """Load and validate a ``board_gen`` table; raise TableError listing every
    violation when anything is wrong."""
    path = str(path)
    data = load_toml(path)
    violations: list[Violation] = []
    header = _header(path, document_header(path, data, "rows", violations), violations)
    raw_rows = data.get("rows", [])
    entries = array_of_tables(path, "rows", raw_rows, violations)
    if isinstance(raw_rows, list) and not raw_rows:
        violations.append(Violation(path, "-", "rows", None, "no_rows", "the table needs at least one [[rows]] entry"))
    rows: dict[tuple[int, int], BoardGenRow] = {}
    seen: dict[tuple, int] = {}
    unreadable_keys = False
    for index, raw in entries:
        shape = [v for f in KEY_FIELDS if (v := int_key_violation(path, _row_label(raw, index), f, raw.get(f)))]
        violations.extend(shape)
        reported = frozenset(v.field for v in shape)
        row = _row(path, raw, header, violations, index, reported)
        if reported:
            unreadable_keys = True
            continue  # a key of the wrong kind cannot be compared with the others
        key = (raw.get("level_index"), raw.get("node_depth"))
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            violations.append(Violation(path, _row_label(raw), "level_index,node_depth", key, "duplicate_key",
                                        "two rows share this (level_index, node_depth)"))
        if row is not None and seen[key] == 1:
            rows[row.key] = row
    # A row whose key could not be read may be the anchor: say nothing of
    # anchors then, rather than a follow-on error hiding the real one.
    levels = {k[0] for k in seen if isinstance(k[0], int)} if not unreadable_keys else set()
    for level in sorted(levels):
        if (level, 0) not in seen:
            violations.append(Violation(path, f"({level},0)", "node_depth", 0, "missing_anchor",
                                        f"level {level} has no depth-0 anchor row"))
    if violations:
        raise TableError(violations)
    return BoardGenTable(path, header, rows, tuple(monotone_warnings(path, header, rows)))


_LOADED: dict[str, tuple[tuple[int, int], BoardGenTable]] = {}


def load_board_gen_dir(tables_dir: Path | str | None = None) -> BoardGenTable:
    """``board_gen.toml`` of a tables directory. The validated table is kept
    until the file changes (size or mtime), so a caller generating board
    after board does not re-read and re-validate it each time, and an edited
    file is picked up by the next call (a call snapshots its row)."""
    path = Path(tables_dir or paths.default_tables_dir()) / DEFAULT_TABLE
    try:
        st = path.stat()
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        return load_board_gen(path)  # reports the missing file
    hit = _LOADED.get(str(path))
    if hit is not None and hit[0] == stamp:
        return hit[1]
    table = load_board_gen(path)
    _LOADED[str(path)] = (stamp, table)
    return table
