"""The target curve (``curve_targets.toml``): per level or per rows, the
figure the designers aim at, its value by depth, a tolerance and the knob
that moves it (SPEC 12: "a target curve per level (a figure by depth, a
tolerance, the knob that moves it), kept with the tables, is both the
tuner's input and a corridor the nightly checks"; seed 000 leaves the
numbers to C3's curve).

The file is a table like the others: loaded and validated together with
``board_gen.toml`` (``catalog``), every violation listed (file, target,
field, value, rule), nothing returned unless the whole file is valid::

    [header]
    severity = "warning"            # the nightly corridor check's: warning (default) or error

    [[targets]]
    level_index = 1                 # or: rows = ["2,0", "2,1"]
    figure = "win_rate"
    by_depth = [0.92, 0.9, 0.88, 0.86, 0.82]   # or: value = 0.9, or: linear = { from = 0.95, to = 0.8 }
    tolerance = 0.03
    knob = "mine_density"           # optional (the default)

A figure is one of :data:`FIGURES` (report C's, as ``boardgen curve``
exports them); a knob one of :data:`KNOBS`, and a target is refused when its
knob does not move its figure one way (:data:`MOVES`: measured on the
default table, docs/decisions/tuning.md), or when the knob is outside a
targeted row's field domain (the fog ratio on a row without fog). A row
is aimed at by one target at most: two would pull one knob two ways.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from boardgen_pipeline.errors import TableError, Violation
from boardgen_pipeline.tables.board_gen import BoardGenTable
from boardgen_pipeline.tables.shape import array_of_tables, document_header, is_int, kind, nearest
from boardgen_pipeline.tables.tomlio import load_toml

TARGETS_TABLE = "curve_targets.toml"
SEVERITIES = ("warning", "error")


@dataclass(frozen=True)
class FigureName:
    """A figure a target can aim at: its report C column and its domain."""

    report: str  # the column of calibration_report / `boardgen curve`
    low: float
    high: float  # math.inf: unbounded
    text: str


FIGURES: dict[str, FigureName] = {
    "win_rate": FigureName("win_rate", 0.0, 1.0, "the perfect player's win rate"),
    "mean_survival": FigureName("mean_survival", 0.0, 1.0, "the perfect player's mean survival"),
    "no_guess_share": FigureName("no_guess_share", 0.0, 1.0, "the share of boards won without a guess"),
    "mean_guesses": FigureName("mean_guesses", 0.0, math.inf, "the perfect player's mean forced guesses"),
    "inferability_p10": FigureName("p10", 0.0, 1.0, "p10 inferability"),
    "inferability_p50": FigureName("p50", 0.0, 1.0, "p50 inferability"),
    "bbbv_p50": FigureName("bbbv_p50", 0.0, math.inf, "p50 3BV"),
    "retry_rate": FigureName("retry_rate", 0.0, 1.0, "the share of boards that needed a second attempt"),
}

# knob -> {figure: +1 if the figure rises with the knob, -1 if it falls}. A figure missing from a knob's
# entry does not move one way with it: the retry rate with the density (the pass rate peaks mid-range,
# SPEC 7.1), 3BV with the target or the fog (the mines decide it), the retry rate with the fog.
MOVES: dict[str, dict[str, int]] = {
    "mine_density": {"win_rate": -1, "mean_survival": -1, "no_guess_share": -1, "mean_guesses": 1,
                     "inferability_p10": -1, "inferability_p50": -1, "bbbv_p50": 1},
    "inferability_target": {"win_rate": 1, "mean_survival": 1, "no_guess_share": 1, "mean_guesses": -1,
                            "inferability_p10": 1, "inferability_p50": 1, "retry_rate": 1},
    "fog_target_ratio": {"win_rate": -1, "mean_survival": -1, "no_guess_share": -1, "mean_guesses": 1,
                         "inferability_p10": -1, "inferability_p50": -1},
}
KNOBS = tuple(MOVES)
DEFAULT_KNOB = "mine_density"

FIELDS = ("level_index", "rows", "figure", "value", "by_depth", "linear", "tolerance", "knob")
HEADER_FIELDS = ("severity",)


@dataclass(frozen=True)
class TargetViolation(Violation):
    """A violation of one target: named by its place in the file (``target #n``), not by a row."""

    def __str__(self) -> str:
        value = "" if self.value is None else f" = {self.value!r}"
        return f"{self.file}: {self.row}: field {self.field}{value}: [{self.rule}] {self.message}"


@dataclass(frozen=True)
class RowTarget:
    """What one row aims at: ``value`` +- ``tolerance`` of ``figure``, moved by ``knob``."""

    key: tuple[int, int]
    target: int  # the target's place in the file, 1-based
    figure: str
    value: float
    tolerance: float
    knob: str

    @property
    def label(self) -> str:
        return f"target #{self.target}"

    @property
    def low(self) -> float:
        return self.value - self.tolerance

    @property
    def high(self) -> float:
        return self.value + self.tolerance

    @property
    def direction(self) -> int:
        """+1 when the figure rises with the knob, -1 when it falls."""
        return MOVES[self.knob][self.figure]


@dataclass(frozen=True)
class CurveTargets:
    """A validated targets file: the corridor check's severity and each targeted row's target."""

    path: str
    severity: str
    rows: dict[tuple[int, int], RowTarget]

    def keys(self) -> list[tuple[int, int]]:
        return sorted(self.rows)


def _where(index: int) -> str:
    return f"target #{index}"


def _number(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


class _Checker:
    def __init__(self, path: str, index: int, violations: list[Violation]):
        self.path, self.index, self.violations = path, index, violations

    def bad(self, field: str, value, rule: str, message: str) -> None:
        self.violations.append(TargetViolation(self.path, _where(self.index), field, value, rule, message))


def _rows_of(c: _Checker, raw: dict, table: BoardGenTable) -> list[tuple[int, int]]:
    """The rows a target names, each a row of the table, in key order."""
    has_level, has_rows = "level_index" in raw, "rows" in raw
    if has_level == has_rows:
        c.bad("level_index" if has_level else "rows", None, "target_rows",
              "name either level_index = L or rows = [\"L,D\", ...], not " + ("both" if has_level else "neither"))
        return []
    if has_level:
        level = raw["level_index"]
        if not is_int(level):
            c.bad("level_index", level, "shape", f"must be an integer, got {kind(level)}")
            return []
        keys = [k for k in table.keys() if k[0] == level]
        if not keys:
            c.bad("level_index", level, "unknown_level", f"no row of {table.path} has this level (levels: "
                                                        f"{table.levels()})")
        return keys
    names = raw["rows"]
    if not isinstance(names, list) or not names:
        c.bad("rows", names, "shape", "must be a non-empty array of row keys \"L,D\", e.g. rows = [\"2,0\", \"2,1\"]")
        return []
    keys = []
    for name in names:
        parts = str(name).split(",") if isinstance(name, str) else []
        key = tuple(int(p) for p in parts) if len(parts) == 2 and all(p.strip().isdigit() for p in parts) else None
        if key is None:
            c.bad("rows", name, "shape", "each row is a string \"L,D\", e.g. \"2,0\"")
        elif key not in table.rows:
            c.bad("rows", name, "unknown_row", f"no row ({key[0]},{key[1]}) in {table.path}")
        elif key in keys:
            c.bad("rows", name, "duplicate_row", "named twice in this target")
        else:
            keys.append(key)
    return sorted(keys)


def _in_domain(c: _Checker, field: str, value, figure: str | None) -> bool:
    if not _number(value):
        c.bad(field, value, "shape", f"must be a number, got {kind(value)}")
        return False
    if figure in FIGURES:
        f = FIGURES[figure]
        if not f.low <= value <= f.high:
            top = "inf" if math.isinf(f.high) else f"{f.high:g}"
            c.bad(field, value, "domain", f"{figure} takes values in [{f.low:g}, {top}]")
            return False
    return True


def _values(c: _Checker, raw: dict, keys: list[tuple[int, int]], figure: str | None) -> list[float] | None:
    """The target value of each row of ``keys`` (depth order): ``value``, ``by_depth`` or ``linear``."""
    given = [f for f in ("value", "by_depth", "linear") if f in raw]
    if len(given) != 1:
        c.bad(given[1] if given else "value", None, "target_value",
              "give exactly one of value = V, by_depth = [V, ...] (one a targeted row, in depth order) or "
              "linear = { from = A, to = B }" + (f"; got {' and '.join(given)}" if given else ""))
        return None
    if given == ["value"]:
        return [raw["value"]] * len(keys) if _in_domain(c, "value", raw["value"], figure) else None
    if given == ["by_depth"]:
        values = raw["by_depth"]
        if not isinstance(values, list):
            c.bad("by_depth", values, "shape", f"must be an array of numbers, got {kind(values)}")
            return None
        if keys and len(values) != len(keys):
            depths = ", ".join(str(d) for _, d in keys)
            c.bad("by_depth", values, "by_depth_length",
                  f"has {len(values)} values for {len(keys)} targeted rows (depths {depths}): one value a row")
            return None
        ok = all([_in_domain(c, "by_depth", v, figure) for v in values])
        return list(values) if ok else None
    line = raw["linear"]
    if not isinstance(line, dict) or set(line) != {"from", "to"}:
        c.bad("linear", line, "shape", "must be a table { from = A, to = B }: A at depth 0, B at the last depth")
        return None
    if not (_in_domain(c, "linear.from", line["from"], figure) & _in_domain(c, "linear.to", line["to"], figure)):
        return None
    last = max((d for _, d in keys), default=0)
    a, b = line["from"], line["to"]
    return [a + (b - a) * (d / last if last else 0.0) for _, d in keys]


def _target(path: str, index: int, raw: dict, table: BoardGenTable, violations: list[Violation]) -> list[RowTarget]:
    c = _Checker(path, index, violations)
    before = len(violations)
    for name in sorted(set(raw) - set(FIELDS)):
        near = nearest(name, FIELDS)
        c.bad(name, raw[name], "unknown_field", f"unknown field ({'did you mean ' + near + '?' if near else 'a typo?'}"
                                                f"); known: {', '.join(FIELDS)}")
    keys = _rows_of(c, raw, table)
    figure = raw.get("figure")
    if figure is None:
        c.bad("figure", None, "missing_field", f"required: one of {', '.join(FIGURES)}")
    elif figure not in FIGURES:
        near = nearest(figure, FIGURES)
        c.bad("figure", figure, "unknown_figure", (f"did you mean {near}? " if near else "") +
              f"must be one of {', '.join(FIGURES)}")
    knob = raw.get("knob", DEFAULT_KNOB)
    if knob not in MOVES:
        c.bad("knob", knob, "unknown_knob", f"must be one of {', '.join(KNOBS)} (default {DEFAULT_KNOB})")
    elif figure in FIGURES and figure not in MOVES[knob]:
        movers = [k for k in KNOBS if figure in MOVES[k]]
        c.bad("knob", knob, "knob_does_not_move_figure",
              f"{figure} does not move one way with {knob}; the knobs that move it: {', '.join(movers) or 'none'}")
    elif knob == "fog_target_ratio":
        for key in keys:
            if table.rows[key].fog_region_count < 1:
                c.bad("knob", knob, "knob_domain", f"row ({key[0]},{key[1]}) has no fog (fog_region_count = 0), so "
                                                   "its fog_target_ratio must stay 0 (board_gen field domain, F2)")
                break
    tolerance = raw.get("tolerance")
    if tolerance is None:
        c.bad("tolerance", None, "missing_field", "required: a number > 0 (the corridor's half-width)")
    elif not _number(tolerance) or tolerance <= 0:
        c.bad("tolerance", tolerance, "tolerance", "must be a number > 0 (the corridor's half-width, in the "
                                                   "figure's unit)")
    values = _values(c, raw, keys, figure)
    if len(violations) > before or values is None:
        return []
    return [RowTarget(key, index, figure, float(v), float(tolerance), knob) for key, v in zip(keys, values)]


def load_curve_targets(path: Path | str, table: BoardGenTable) -> CurveTargets:
    """Load and validate a targets file against the ``board_gen`` table it
    aims; TableError listing every violation when anything is wrong."""
    path = str(path)
    data = load_toml(path)
    violations: list[Violation] = []
    header = document_header(path, data, "targets", violations)
    for name in sorted(set(header) - set(HEADER_FIELDS)):
        violations.append(Violation(path, "header", name, header[name], "unknown_field",
                                    f"unknown header field; known: {', '.join(HEADER_FIELDS)}"))
    severity = header.get("severity", "warning")
    if severity not in SEVERITIES:
        violations.append(Violation(path, "header", "severity", severity, "domain",
                                    "must be \"warning\" (the default) or \"error\": the corridor check's severity"))
    rows: dict[tuple[int, int], RowTarget] = {}
    for index, raw in array_of_tables(path, "targets", data.get("targets", []), violations):
        for target in _target(path, index, raw, table, violations):
            if target.key in rows:
                first = rows[target.key].target
                violations.append(TargetViolation(path, _where(index), "rows", f"{target.key[0]},{target.key[1]}",
                                                  "one_target_per_row", f"row ({target.key[0]},{target.key[1]}) is "
                                                  f"already aimed at by target #{first}: a row has one target"))
                continue
            rows[target.key] = target
    if violations:
        raise TableError(violations)
    return CurveTargets(path, severity, rows)
