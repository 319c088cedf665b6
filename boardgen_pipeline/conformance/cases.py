"""The inputs the kit's acceptance vectors are built from (seed 001 acceptance
table AC-2, AC-7, AC-8, AC-9, AC-11, AC-12; SPEC 11).

Seed 001 names fixture roots (``a1_high_target``, ``a1_ec5``) and a
"golden five" board set whose specifications sit in an appendix the seed
does not carry. They are defined here, as data, and every figure the kit
states about them is computed by the product (never written by hand here);
the suite holds those figures to hand-derived ones and to a plain BFS of
its own (``tests/test_solver_golden.py``, ``tests/test_conformance_kit.py``).

- :data:`FIXTURE_ROWS`: the fixture roots as rows of the default table with
  the field the seed names changed (``a1_high_target``: target 1.0, two
  attempts and one; ``a1_ec5``: an R0 cap no board can meet, so no attempt is
  ever legal) and the edge rows the generate vectors add (shave rings 0 and
  2, a 5x5 spawn square, a 64-wide board);
- :data:`AC2_SETS`: seed 001 AC-2's violation sets and legal set, each a row
  edit of the default (2,0) row;
- :data:`GOLDEN_BOARDS` and :data:`PATHOLOGICAL_BOARDS`: AC-7/AC-8 boards;
- :func:`legality`: the legality predicate of a finished board (SPEC 2.4
  with seed 001 AC-6's structural rules for fog), by category.
"""

from __future__ import annotations

from dataclasses import dataclass

from boardgen_pipeline.board import solver
from boardgen_pipeline.board.geometry import neighbour_table, parse_layout
from boardgen_pipeline.tables.board_gen import BoardGenRow, BoardGenTable


@dataclass(frozen=True)
class FixtureRow:
    """A fixture root's row: a default row with some fields replaced."""

    name: str
    base: tuple[int, int]
    changes: dict
    spawn_side: int = 3
    comment: str = ""

    def row(self, table: BoardGenTable) -> BoardGenRow:
        fields = {**table.rows[self.base].fields(), **self.changes}
        reserved = {k: v for k, v in fields.items() if k.startswith(("elite_", "boss_"))}
        return BoardGenRow(**{k: v for k, v in fields.items() if k not in reserved}, reserved=reserved)


# AC-11: "a1_high_target@2 + registered σ (target = 1.0 inside the domain)"; the @1 twin runs the same σ
HIGH_TARGET = {1: FixtureRow("a1_high_target@1", (2, 0), {"inferability_target": 1.0, "max_gen_attempts": 1},
                             comment="seed 001 AC-11 @1: target 1.0, one attempt"),
               2: FixtureRow("a1_high_target@2", (2, 0), {"inferability_target": 1.0, "max_gen_attempts": 2},
                             comment="seed 001 AC-11 @2: target 1.0, two attempts")}
# AC-12: "a1_ec5@k, k in {1, 2, 8, 16}, zero legal attempts": the R0 cap is the spawn square (9 cells),
# while a shave ring of 1 keeps every spawn cell a zero, so R0 always floods past it
EC5_ATTEMPTS = (1, 2, 8, 16)
EC5 = {k: FixtureRow(f"a1_ec5@{k}", (1, 0), {"r0_max_cap": 9, "max_gen_attempts": k},
                     comment=f"seed 001 AC-12 EC5 @{k}: no attempt can be legal (R0 cap 9, ring 1)")
       for k in EC5_ATTEMPTS}
# edge rows of the generate vectors: what the default rows never exercise
EDGE_ROWS = (
    FixtureRow("edge_shave_0", (1, 0), {"shave_ring_radius": 0}, comment="no shave ring: mines may touch the spawn"),
    FixtureRow("edge_shave_2", (1, 0), {"shave_ring_radius": 2, "r0_max_cap": 50},
               comment="the widest shave ring (Chebyshev radius 3 cleared)"),
    FixtureRow("edge_spawn_5", (1, 0), {"r0_max_cap": 50}, spawn_side=5, comment="a 5x5 spawn square"),
    FixtureRow("edge_wide_64", (3, 0), {"board_width": 64, "board_height": 8, "max_gen_attempts": 32,
                                       "r0_max_cap": 256, "min_safe_count": 40},
               comment="the widest board (64 columns: a port's 64-bit row words meet their edge)"),
    FixtureRow("edge_two_fog_regions", (2, 0), {"fog_region_count": 2, "fog_target_ratio": 0.1},
               comment="two fog regions (seed 001 AC-14): the second region's draws follow the first's"),
)


# seed 001 AC-2: each violation set as the edit of the default (2,0) row with one fog region at 0.05 that
# makes it, and the legal set
AC2_SETS = (
    ("fog_ratio_above_8d", "f > 8d", {"mine_density": 0.02, "fog_target_ratio": 0.2}, True),
    ("fog_count_without_ratio", "count >= 1 and f = 0", {"fog_region_count": 1, "fog_target_ratio": 0.0}, True),
    ("fog_ratio_one", "f >= 1", {"fog_target_ratio": 1.0}, True),
    ("fog_ratio_without_count", "count = 0 and f > 0", {"fog_region_count": 0, "fog_target_ratio": 0.05}, True),
    ("fog_ratio_above_ceiling", "f = 0.30 and d = 0.15: above the 0.25 ceiling",
     {"mine_density": 0.15, "fog_target_ratio": 0.3}, True),
    ("no_mine_after_rounding", "round(d * (W*H - 9)) = 0", {"mine_density": 0.003}, True),
    ("cost_gate", "attempts * W * H > 16384", {"board_width": 24, "board_height": 24, "max_gen_attempts": 32,
                                                "r0_max_cap": 200}, True),
    ("min_safe_infeasible", "F2b: 10x10, d = 0.10, min_safe = 92",
     {"board_width": 10, "board_height": 10, "mine_density": 0.1, "min_safe_count": 92, "r0_max_cap": 50,
      "fog_region_count": 0, "fog_target_ratio": 0.0}, True),
    ("board_type_empty", "board_biome = {} (here: board_type empty)", {"board_type": ""}, True),
    ("legal_no_fog", "count = 0 and f = 0", {"fog_region_count": 0, "fog_target_ratio": 0.0}, False),
    ("legal_fog_at_8d", "f = 8d exactly", {"mine_density": 0.03, "fog_target_ratio": 0.24}, False),
    ("legal_fog_at_ceiling", "f = 0.25 exactly, the ceiling", {"mine_density": 0.2, "fog_target_ratio": 0.25}, False),
    ("legal_min_safe_at_bound", "min_safe = W*H - N exactly",
     {"board_width": 10, "board_height": 10, "mine_density": 0.1, "min_safe_count": 91, "r0_max_cap": 50,
      "fog_region_count": 0, "fog_target_ratio": 0.0}, False),
    ("legal_board_type", "board_biome placeholder non-empty (here: board_type underdark)",
     {"board_type": "underdark"}, False),
)


@dataclass(frozen=True)
class LayoutCase:
    """A board given by its layout, with the row figures its legality needs."""

    name: str
    layout: str
    comment: str
    min_safe_count: int = 1
    r0_max_cap: int | None = None  # None: W*H, no cap (these boards are smaller than a table's)
    spawn_side: int = 3
    rules: str = "single_subset"


EMPTY3 = "........./........./........./"
# seed 001 AC-7/AC-8 "golden five": legal boards whose measures are pinned as integer pairs (the figures are
# derived by hand in tests/test_solver_golden.py); board iii has fog touching the spawn square (EC3)
GOLDEN_BOARDS = (
    LayoutCase("golden_i_single_rule", "......./......./......./.*.....",
               "R0 26; the single rule proves (1,3) a mine, then (0,3) safe: R∞ = S = 27", r0_max_cap=26),
    LayoutCase("golden_ii_subset", EMPTY3 + "*..*..*.*", "no single rule fires; the subset rule opens all: R∞ 32 of 32"),
    LayoutCase("golden_iii_fog_by_spawn", "......*../......f../........./......*..",
               "fog at (6,1), next to the spawn square's (5,0..2), all numbered: adjacency is no violation (EC3); "
               "the fog cell opens by meta-knowledge (information source b) and never chains"),
    LayoutCase("golden_iv_fifty_fifty", "........./........./......*../......**.",
               "a 50/50 no rule can choose: R∞ 32 of 33"),
    LayoutCase("golden_v_partial_overlap", ".....*./......*/......./.....**",
               "partial overlap: no wing rule in single_subset, R∞ 22 of 24"),
)
# AC-7: each pathological board and the category the predicate must raise
PATHOLOGICAL_BOARDS = (
    (LayoutCase("pathological_enclosed_safe", "........./........./**......./.*.......",
                "a mine wall isolates the safe cell (0,3)"), "unreachable"),
    (LayoutCase("pathological_min_safe", EMPTY3 + "*..*..*.*", "32 safe cells against a minimum of 33",
                min_safe_count=33), "min_safe"),
    (LayoutCase("pathological_fog_window", "........./........./........./fff....*./fff....../fff......",
                "a 3x3 window all fog"), "structure"),
)


def structure_violations(width: int, height: int, mines, fog, spawn_side: int) -> list[str]:
    """Seed 000 and seed 001 AC-6's structural rules of a finished board, by
    name: the spawn square and R0 mine-free, and fog cells safe, numbered,
    outside R0, no 3x3 window all fog, ``|F| <= 8 x mines``."""
    table = neighbour_table(width, height)
    numbers = [sum(mines[n] for n in table[c]) for c in range(width * height)]
    spawn = solver.spawn_square(width, height, spawn_side)
    r0 = solver.reveal_r0(mines, width, height, spawn_side, fog)
    fog = set(fog)
    out = []
    if any(mines[c] for c in spawn):
        out.append("spawn_mine")
    if any(mines[c] for c in r0):
        out.append("r0_mine")
    if any(mines[c] or numbers[c] == 0 for c in fog):
        out.append("fog_cell")
    if fog & r0:
        out.append("fog_in_r0")
    full = any(all((yy * width + xx) in fog for yy in range(y, y + 3) for xx in range(x, x + 3))
               for y in range(height - 2) for x in range(width - 2))
    if full:
        out.append("fog_window")
    if len(fog) > 8 * sum(mines):
        out.append("fog_bound")
    return out


def legality(case: LayoutCase) -> dict:
    """The legality predicate of a finished board (SPEC 2.4 and seed 001
    AC-6/AC-7) with each failing category: ``unreachable``, ``min_safe``,
    ``r0_cap``, ``free_open`` (SPEC 2.4's gates, in the least-bad order)
    and ``structure`` (with the structural rules it breaks)."""
    w, h, mines, fog = parse_layout(case.layout)
    cap = case.r0_max_cap if case.r0_max_cap is not None else w * h
    c = solver.closures(mines, w, h, case.spawn_side, case.rules, fog=fog)
    safe = w * h - sum(mines)
    categories = []
    if solver.unreachable_safe(mines, w, h) > 0:
        categories.append("unreachable")
    if safe < case.min_safe_count:
        categories.append("min_safe")
    if len(c.r0) > cap:
        categories.append("r0_cap")
    if len(c.r0) == safe:
        categories.append("free_open")
    structure = structure_violations(w, h, mines, fog, case.spawn_side)
    if structure:
        categories.append("structure")
    return {"legal": not categories, "categories": categories, "structure": structure}
