"""Fog: seed 001's fog step inside the attempt loop, and the fog budget
(SPEC 5; seed 001 "变异布置与雾形边界", F1, F2, F3, EC2).

A row with ``fog_region_count >= 1`` adds this step to every attempt, right
after the mines, drawing from the same ``board_gen`` stream. Rows without fog
never call it, so they draw exactly what they drew before fog existed.

Where fog may go (seed 001 rule 3, AC-6): safe cells with a mine neighbour
(non-zero: fog hides a number), outside R0 and its one-cell ring (the
player's free opening never touches fog). Hard bounds (rule 4): no 3x3
window entirely fog (fog is at most two cells thick), and ``|F| <= 8 x
mines``.

How regions grow (decided here; recorded in docs/decisions.md): the total
aim is ``round_half_up(fog_target_ratio * W * H)`` cells, capped at ``8 x
mines``, split as evenly as possible over ``fog_region_count`` regions (the
first ``total % count`` regions one cell larger). Each region draws a seed
cell uniformly among the cells where fog may go whose 8-connected free area
can hold the whole region, then grows one cell at a time, each drawn uniformly among the allowed cells 8-adjacent to it (cells
in row-major order). A region that runs out of room before its size is
rolled back and counted as shortfall: never forced (EC2). Regions may touch
(seed 001 EC6: adjacent regions are still separate instances).
"""

from __future__ import annotations

from dataclasses import dataclass

from boardgen_pipeline.board.geometry import neighbour_table
from boardgen_pipeline.board.rng import Stream
from boardgen_pipeline.tables.board_gen import round_half_up


@dataclass(frozen=True)
class FogResult:
    cells: tuple[int, ...]  # sorted
    regions_placed: int
    shortfall: int
    target_cells: int
    # how the regions that were not placed failed, and how often the 3x3 window rule struck a cell from a
    # seed list or a frontier: the conformance kit names its vectors by them (the compiled twin leaves them 0)
    regions_skipped: int = 0
    regions_short: int = 0
    window_refusals: int = 0


def region_sizes(total: int, count: int) -> list[int]:
    base, extra = divmod(total, count)
    return [base + (1 if i < extra else 0) for i in range(count)]


def fog_target(ratio: float, width: int, height: int, mines: int) -> int:
    return min(round_half_up(ratio * width * height), 8 * mines)


def allowed_cells(mines, numbers, r0, width: int, height: int) -> list[int]:
    """Safe, non-zero cells outside R0 and its one-cell ring, row-major."""
    table = neighbour_table(width, height)
    near_r0 = set(r0)
    for c in r0:
        near_r0.update(table[c])
    return [c for c in range(width * height) if not mines[c] and numbers[c] > 0 and c not in near_r0]


def completes_full_window(cell: int, fog: set[int], width: int, height: int) -> bool:
    """Would fogging ``cell`` make some 3x3 window (inside the board) all fog?"""
    x, y = cell % width, cell // width
    for wy in range(max(0, y - 2), min(height - 3, y) + 1):
        for wx in range(max(0, x - 2), min(width - 3, x) + 1):
            if all(
                (c == cell) or (c in fog)
                for c in (yy * width + xx for yy in range(wy, wy + 3) for xx in range(wx, wx + 3))
            ):
                return True
    return False


class _Windows:
    """Fog count of every 3x3 window inside the board, so that "would this
    cell complete an all-fog window" is at most nine lookups."""

    def __init__(self, width: int, height: int):
        self.width, self.height = width, height
        self.count = [0] * (max(0, width - 2) * max(0, height - 2))

    def of(self, cell: int):
        x, y = cell % self.width, cell // self.width
        ww = self.width - 2
        for wy in range(max(0, y - 2), min(self.height - 3, y) + 1):
            for wx in range(max(0, x - 2), min(self.width - 3, x) + 1):
                yield wy * ww + wx

    def completes(self, cell: int) -> bool:
        return any(self.count[w] == 8 for w in self.of(cell))

    def add(self, cell: int, step: int = 1) -> None:
        for w in self.of(cell):
            self.count[w] += step


def place_fog(stream: Stream, mines, numbers, r0, width: int, height: int,
              region_count: int, target_ratio: float) -> FogResult:
    """The fog step of one attempt (draws from ``stream``)."""
    table = neighbour_table(width, height)
    mine_count = sum(mines)
    total = fog_target(target_ratio, width, height, mine_count)
    allowed = set(allowed_cells(mines, numbers, r0, width, height))
    windows = _Windows(width, height)
    fog: set[int] = set()
    placed = skipped = short = refusals = 0
    for size in region_sizes(total, region_count):
        if size == 0:
            continue
        # seed only where the free allowed area around can hold the whole
        # region: a region is grown, never squeezed into a pocket
        room = _component_sizes(allowed - fog, table)
        roomy = [c for c in allowed - fog if room[c] >= size]
        seeds = sorted(c for c in roomy if not windows.completes(c))
        refusals += len(roomy) - len(seeds)
        # the sizes add up to total <= 8 x mines, so the second test never holds; kept as the bound's guard
        if not seeds or len(fog) + size > 8 * mine_count:
            skipped += 1
            continue
        region = [seeds[stream.below(len(seeds))]]
        fog.add(region[0])
        windows.add(region[0])
        while len(region) < size:
            near = sorted({n for c in region for n in table[c] if n in allowed and n not in fog})
            frontier = [n for n in near if not windows.completes(n)]
            refusals += len(near) - len(frontier)
            if not frontier:
                break
            cell = frontier[stream.below(len(frontier))]
            region.append(cell)
            fog.add(cell)
            windows.add(cell)
        if len(region) < size:
            # roll back: a region is placed whole or not at all
            fog.difference_update(region)
            for c in region:
                windows.add(c, -1)
            short += 1
        else:
            placed += 1
    return FogResult(tuple(sorted(fog)), placed, region_count - placed, total, skipped, short, refusals)


def _component_sizes(cells: set[int], table) -> dict[int, int]:
    """Size of the 8-connected component of each cell within ``cells``."""
    size: dict[int, int] = {}
    for start in sorted(cells):
        if start in size:
            continue
        comp = [start]
        seen = {start}
        for c in comp:
            for n in table[c]:
                if n in cells and n not in seen:
                    seen.add(n)
                    comp.append(n)
        for c in comp:
            size[c] = len(comp)
    return size


def chain0(mines, numbers, r0, width: int, height: int) -> set[int]:
    """Seed 001 F3 Chain0: what zero cascades open for free: R0, every zero
    cell and every safe neighbour of a zero cell."""
    table = neighbour_table(width, height)
    out = set(r0)
    for c in range(width * height):
        if not mines[c] and numbers[c] == 0:
            out.add(c)
            out.update(n for n in table[c] if not mines[n])
    return out


@dataclass(frozen=True)
class FogBudget:
    unpaid: int  # |U| = |F - Chain0|
    paid_denominator: int  # max(1, |S - Chain0|)
    dig_ap_cost: int = 1

    @property
    def delta_budget_fog(self) -> int:
        return self.unpaid * self.dig_ap_cost

    @property
    def fog_burden_ratio(self) -> float:
        return self.unpaid / self.paid_denominator


def fog_budget(mines, numbers, r0, fog, width: int, height: int, dig_ap_cost: int = 1) -> FogBudget:
    """Seed 001 F3: ``delta_budget_fog = |U| * dig_ap_cost`` and
    ``fog_burden_ratio = |U| / max(1, |S - Chain0|)``."""
    free = chain0(mines, numbers, r0, width, height)
    safe = {c for c in range(width * height) if not mines[c]}
    return FogBudget(len(set(fog) - free), max(1, len(safe - free)), dig_ap_cost)
