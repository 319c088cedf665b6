"""Golden boards: hand-derived (|R∞|, |S|), |R0| and proven mines
(seed 000 "黄金图回归"; seed 001 AC-8, AC-9).

Each layout's figures were derived by hand; the reasoning sits beside each
case. Coordinates are (x, y), y = 0 the top row; the spawn square is the 3x3
(or 5x5) around ((W-1)//2, (H-1)//2). Figures are integers: never floats.

Most boards are 9x4 (or 7x4) with the spawn at x 3..5 (2..4), y 0..2: row 1
then has no mine neighbour, so rows 0-2 are revealed by the zero flood and
row 3 is a frontier seen through row 2's numbers ("c_x" below is the
constraint of cell (x, 2): the row-3 cells x-1..x+1).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

import pytest

from boardgen_pipeline.board.generator import legality_reasons
from boardgen_pipeline.board.geometry import parse_layout
from boardgen_pipeline.board.measure import measure_cells, measure_layout
from boardgen_pipeline.board.solver import closures

from .conftest import BASELINE_C

EMPTY3 = "........./........./........./"


@dataclass(frozen=True)
class Golden:
    name: str
    layout: str
    r0: int
    revealed: int
    safe: int
    known_mines: int
    unreachable: int = 0
    rules: str = "single_subset"
    spawn_side: int = 3


GOLDEN = [
    # No mine at all: every cell is a zero, the flood opens everything.
    # R0 = R∞ = S = 36: a free-open board (R0 == S), illegal for the generator.
    Golden("free_open_empty", EMPTY3 + ".........", 36, 36, 36, 0),
    # Single rule only (7x4, mine (1,3)). Row 2: (0..2,2) show 1, (3..6,2) are
    # zeros, which open row 3 from x=2 on. R0 = 21 + 5 = 26. Revealed (2,3)
    # shows 1 with the single unknown neighbour (1,3): a mine. Then (1,2)=1
    # has its mine, so (0,3) is safe. R∞ = 27 = S (28 - 1).
    Golden("single_rule_only", "......./......./......./.*.....", 26, 27, 27, 1),
    Golden("single_rule_only_with_single", "......./......./......./.*.....", 26, 27, 27, 1, rules="single"),
    # Subset needed (row 3 = *..*..*.*, mines 0,3,6,8): row 2 reads
    # 1 1 1 1 1 1 1 2 1, no zero, so R0 = rows 0-2 = 27. No single rule fires
    # (every c_x has 0 < m < |U|): with `single` R∞ = R0 = 27 of S = 32.
    # Subset: c0={0,1}:1 inside c1={0,1,2}:1 -> 2 safe; c8={7,8}:1 inside
    # c7={6,7,8}:2 -> 6 mine. Then c5,c6 lose their mine -> 4,5,7 safe; the
    # revealed cells finish it (4 shows 1 -> 3 mine, 7 shows 2 -> 8 mine,
    # c2 -> 1 safe, 1 shows 1 -> 0 mine). R∞ = S = 32, 4 mines proven.
    Golden("subset_needed", EMPTY3 + "*..*..*.*", 27, 32, 32, 4),
    Golden("subset_needed_single_stalls", EMPTY3 + "*..*..*.*", 27, 27, 32, 0, rules="single"),
    # Alternating (row 3 = *.*.*.*.*): row 2 reads 1 2 1 2 1 2 1 2 1. Subset:
    # c0 in c1 -> 2 mine, c8 in c7 -> 6 mine; c2, c6 drop to 0 -> 1,3,5,7 safe;
    # they show 2 each -> 0, 4, 8 mines. R∞ = S = 31; `single` stalls at 27.
    Golden("alternating", EMPTY3 + "*.*.*.*.*", 27, 31, 31, 5),
    Golden("alternating_single_stalls", EMPTY3 + "*.*.*.*.*", 27, 27, 31, 0, rules="single"),
    # A 50/50 (mines (6,2), (6,3), (7,3)): the flood opens everything except
    # the mines and (8,3) (R0 = 32). (5,3)=2 sees only (6,2),(6,3): mines.
    # Then (7,2)=3 and (8,2)=1 both reduce to {(7,3),(8,3)} with 1 mine:
    # equal sets, no proper subset, no rule can choose. R∞ = 32 of S = 33.
    Golden("fifty_fifty", "........./........./......*../......**.", 32, 32, 33, 2),
    # Partial overlap (7x4, mines (5,0),(6,1),(5,3),(6,3)): R0 = columns 0-4
    # (20). Column 4 reads 1,1,1,1: (4,0)'s {(5,0),(5,1)} inside (4,1)'s set
    # -> (5,2) safe; (4,3)'s inside (4,2)'s -> (5,1) safe; then (5,0), (5,3)
    # mines. (5,1)=2 leaves A={(6,0),(6,1),(6,2)}:1, (5,2)=3 leaves
    # B={(6,1),(6,2),(6,3)}:2. A and B overlap partially: a "wing" rule would
    # prove (6,3) a mine and (6,0) safe, but single_subset has no such rule,
    # so both stay closed. R∞ = 22 of S = 24; with `single` nothing moves.
    Golden("partial_overlap_not_resolved", ".....*./......*/......./.....**", 20, 22, 24, 2),
    Golden("partial_overlap_single", ".....*./......*/......./.....**", 20, 20, 24, 0, rules="single"),
    # Enclosed safe cell (0,3) behind mines (0,2),(1,2),(1,3): the flood opens
    # all other safe cells (R0 = 32); the mines are proven ((0,1)=2 sees just
    # two unknowns) but (0,3) has no revealed neighbour: never opened, and not
    # clearable (1 unreachable safe cell). R∞ = 32 of S = 33.
    Golden("enclosed_safe_cell", "........./........./**......./.*.......", 32, 32, 33, 3, unreachable=1),
    # Free open with a mine (row 3 = ....*....): only (3..5,2) are numbered;
    # the zeros open every other row-3 cell, so R0 = S = 35; (3,3)=1 proves
    # the mine.
    Golden("free_open_with_mine", EMPTY3 + "....*....", 35, 35, 35, 1),
    # 1-2-2-1 corner (row 3 = .**......): row 2 reads 1 2 2 1 0 0 0 0 0; the
    # zeros open row 3 from x=3 (R0 = 27 + 6 = 33). c2 reduces to {1,2}:2 ->
    # both mines; c0 {0,1}:1 then has its mine -> (0,3) safe. R∞ = S = 34.
    Golden("one_two_two_one", EMPTY3 + ".**......", 33, 34, 34, 2),
    # Spawn side 5 (9x5, spawn x 2..6, y 0..4, mine (0,0)): the zeros of
    # column 2 open column 1, (1,2)..(1,4) are zeros and open column 0:
    # R0 = S = 44; (1,0)=1 sees only (0,0) -> 1 mine proven.
    Golden("spawn_side_five", "*......../........./........./........./.........", 44, 44, 44, 1, spawn_side=5),
]


@pytest.mark.parametrize("g", GOLDEN, ids=lambda g: g.name)
def test_golden_board_measure(g: Golden):
    m = measure_layout(g.layout, rules=g.rules, spawn_side=g.spawn_side)
    assert (m.r0_size, m.inferability, m.known_mines, m.unreachable_safe) == (
        g.r0, (g.revealed, g.safe), g.known_mines, g.unreachable)


@pytest.mark.parametrize("g", GOLDEN, ids=lambda g: g.name)
def test_golden_board_reference_solver(g: Golden):
    """The readable reference solver gives the same integers."""
    w, h, mines, _ = parse_layout(g.layout)
    c = closures(mines, w, h, g.spawn_side, g.rules)
    assert (len(c.r0), len(c.r_infinity), len(c.known_mines)) == (g.r0, g.revealed, g.known_mines)


def test_golden_boards_cover_the_required_cases():
    names = {g.name for g in GOLDEN}
    assert len(GOLDEN) >= 12
    for needed in ("single_rule_only", "subset_needed", "fifty_fifty", "partial_overlap_not_resolved",
                   "enclosed_safe_cell", "free_open_empty"):
        assert needed in names


def test_r0_exceeding_cap_is_illegal():
    """single_rule_only has R0 = 26: illegal under a cap of 25, legal at 26."""
    m = measure_layout("......./......./......./.*.....")
    assert legality_reasons(m, min_safe_count=1, r0_max_cap=25) == ["r0_cap"]
    assert legality_reasons(m, min_safe_count=1, r0_max_cap=26) == []


def test_enclosed_and_free_open_boards_are_illegal():
    enclosed = measure_layout("........./........./**......./.*.......")
    assert "unreachable" in legality_reasons(enclosed, min_safe_count=1, r0_max_cap=100)
    free = measure_layout(EMPTY3 + "....*....")
    assert legality_reasons(free, min_safe_count=1, r0_max_cap=100) == ["free_open"]
    assert legality_reasons(free, min_safe_count=36, r0_max_cap=100) == ["min_safe", "free_open"]


@pytest.mark.parametrize("g", GOLDEN, ids=lambda g: g.name)
def test_ac_9_measure_is_invariant_to_the_order_the_layout_is_given(g: Golden):
    """Seed 001 AC-9: the same board given in several cell orders (and as
    (x, y) pairs or indices, with a duplicate) measures bit-identically."""
    w, h, mines, _ = parse_layout(g.layout)
    cells = [i for i, v in enumerate(mines) if v]
    as_text = measure_layout(g.layout, rules=g.rules, spawn_side=g.spawn_side)
    forms = [
        cells,
        list(reversed(cells)),
        [(c % w, c // w) for c in sorted(cells, key=lambda c: (c % w, c // w))],
        cells + cells[:1],
    ]
    for form in forms:
        again = measure_cells(w, h, form, rules=g.rules, spawn_side=g.spawn_side)
        assert again == as_text
    assert measure_layout("\n".join(g.layout.split("/")), rules=g.rules, spawn_side=g.spawn_side) == as_text


def test_measure_agrees_with_the_c_baseline(tmp_path):
    """An independent implementation (../shared/bench/baseline.c, measure
    mode) gives the same R0, |R∞|, |S| and unreachable count on every golden
    board and on 300 random layouts."""
    import random

    exe = tmp_path / "baseline"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(BASELINE_C), "-lm"], check=True)
    layouts = [g.layout for g in GOLDEN if g.spawn_side == 3 and g.rules == "single_subset"]
    rnd = random.Random(7)  # test data only; library code never uses `random`
    for _ in range(300):
        w, h = rnd.randint(5, 16), rnd.randint(5, 16)
        d = rnd.choice([0.1, 0.15, 0.2, 0.25, 0.3])
        layouts.append("/".join("".join("*" if rnd.random() < d else "." for _ in range(w)) for _ in range(h)))
    # the baseline assumes a mine-free spawn square; clear it like the generator does
    cleared = []
    for lay in layouts:
        w, h, mines, _ = parse_layout(lay)
        cx, cy = (w - 1) // 2, (h - 1) // 2
        rows = [list(r) for r in lay.split("/")]
        for y in range(cy - 1, cy + 2):
            for x in range(cx - 1, cx + 2):
                rows[y][x] = "."
        cleared.append("/".join("".join(r) for r in rows))
    out = subprocess.run([str(exe), "measure"], input="\n".join(cleared) + "\n", capture_output=True,
                         text=True, check=True).stdout.split("\n")
    for lay, line in zip(cleared, out):
        m = measure_layout(lay)
        assert [int(v) for v in line.split()] == [m.r0_size, m.revealed, m.safe_count, m.unreachable_safe], lay
