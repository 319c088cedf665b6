"""The values of a knob that matter (SPEC 12; SPEC 2.2 "N = round_half_up(
mine_density * (W*H - spawn_cells))"; SPEC 5 fog; docs/decisions/tuning.md
"The values that matter").

Two densities that give the same mine count N give the same boards (the
density is read only through N), so the tuner searches the mine counts,
not the floats: one grid point a count, written back as the density with
the fewest decimals that gives it (the row's own density where N is the
row's). The fog ratio is read only through the cells it aims at,
``round_half_up(ratio * W * H)``: one point an aimed count. The target is
read exactly (``|R∞| * d >= n * |S|`` for the target ``n/d``): its points
are the 0.01 grid of [0.85, 1] (the advisor's), the row's own value added
when it is off that grid.

A grid holds only values the table loader accepts for the row (its field
domain and its cross-field rules: at least one mine, ``min_safe_count``
safe cells, the fog predicate F2), in increasing order; its index is what
the search moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from boardgen_pipeline.tables.board_gen import (
    FOG_RATIO_CEILING,
    BoardGenRow,
    fog_predicate,
    mines_target,
    round_half_up,
)

TARGET_FLOOR = 85  # hundredths: A'' (SPEC 7)
DECIMALS = (2, 3, 4, 5, 6)


@dataclass(frozen=True)
class Grid:
    """A knob's values that matter for one row, increasing; ``current`` is
    the index of the row's own value."""

    knob: str
    values: tuple[float, ...]
    current: int
    unit: str  # what one step is: "mines", "fog cells", "0.01 of target"

    def __len__(self) -> int:
        return len(self.values)

    def row(self, row: BoardGenRow, k: int) -> BoardGenRow:
        """The row with the knob at grid point ``k``."""
        return row.model_copy(update={self.knob: self.values[k]})


def _loadable(row: BoardGenRow, spawn_side: int) -> bool:
    n = mines_target(row.mine_density, row.board_width, row.board_height, spawn_side)
    return (0 < row.mine_density <= 0.5 and n >= 1 and row.board_width * row.board_height - n >= row.min_safe_count
            and not fog_predicate("-", "-", row))


def _shortest(lo: float, hi: float, ok) -> float | None:
    """The value of [lo, hi) with the fewest decimals (closest to the
    middle among those) for which ``ok`` holds."""
    middle = (lo + hi) / 2
    for digits in DECIMALS:
        scale = 10**digits
        first, last = math.ceil(lo * scale - 1e-9), math.ceil(hi * scale - 1e-9) - 1
        found = [round(i / scale, digits) for i in range(first, last + 1)]
        found = [v for v in found if ok(v)]
        if found:
            return min(found, key=lambda v: (abs(v - middle), v))
    return None


def density_grid(row: BoardGenRow, spawn_side: int) -> Grid:
    cells = row.board_width * row.board_height - spawn_side**2
    own = mines_target(row.mine_density, row.board_width, row.board_height, spawn_side)
    values = []
    for n in range(1, mines_target(0.5, row.board_width, row.board_height, spawn_side) + 1):
        if n == own:
            values.append(row.mine_density)
            continue

        def gives(d, n=n):
            return (mines_target(d, row.board_width, row.board_height, spawn_side) == n
                    and _loadable(row.model_copy(update={"mine_density": d}), spawn_side))

        d = _shortest(max(1e-9, (n - 0.5) / cells), min(0.5 + 1e-9, (n + 0.5) / cells), gives)
        if d is not None:
            values.append(d)
    return Grid("mine_density", tuple(values), values.index(row.mine_density), "mines")


def target_grid(row: BoardGenRow) -> Grid:
    values = sorted({h / 100 for h in range(TARGET_FLOOR, 101)} | {row.inferability_target})
    return Grid("inferability_target", tuple(values), values.index(row.inferability_target), "0.01 of target")


def fog_grid(row: BoardGenRow, spawn_side: int) -> Grid:
    area = row.board_width * row.board_height
    own = round_half_up(row.fog_target_ratio * area)
    values = []
    top = round_half_up(min(FOG_RATIO_CEILING, 8 * row.mine_density) * area)
    for aim in range(1, top + 1):
        if aim == own:
            values.append(row.fog_target_ratio)
            continue

        def aims(r, aim=aim):
            return (round_half_up(r * area) == aim and r > 0
                    and _loadable(row.model_copy(update={"fog_target_ratio": r}), spawn_side))

        r = _shortest((aim - 0.5) / area, (aim + 0.5) / area, aims)
        if r is not None:
            values.append(r)
    return Grid("fog_target_ratio", tuple(values), values.index(row.fog_target_ratio), "fog cells")


def grid(row: BoardGenRow, knob: str, spawn_side: int) -> Grid:
    """The grid of ``knob`` for ``row`` (a knob of ``curve_targets.KNOBS``)."""
    if knob == "mine_density":
        return density_grid(row, spawn_side)
    if knob == "inferability_target":
        return target_grid(row)
    if knob == "fog_target_ratio":
        return fog_grid(row, spawn_side)
    raise ValueError(f"no grid for knob {knob!r}")
