"""Per-board difficulty figures: 3BV and openings against hand
counts and ms-toollib, the solve waves against the reference closure, and
complete-logic solvability against hand-derived boards, a brute-force
enumeration of every mine configuration, and ms-toollib's ``is_solvable``."""

from __future__ import annotations

import itertools

import ms_toollib
import numpy as np
import pytest

from boardgen_pipeline.board import difficulty
from boardgen_pipeline.board.generator import generate_from_row
from boardgen_pipeline.board.geometry import neighbour_table, parse_layout
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.board.solver import _chain, closures, reveal_r0
from boardgen_pipeline.tables.board_gen import BoardGenRow, load_board_gen_dir

from .test_solver_golden import GOLDEN

DEFAULT = load_board_gen_dir()


def figures_of(layout: str, spawn_side: int = 3) -> dict:
    w, h, mines, fog = parse_layout(layout)
    return difficulty.compute(w, h, spawn_side, mines, fog)


def grid_of(mines, w: int, h: int) -> list[list[int]]:
    """The board as ms-toollib reads it: rows of numbers, -1 a mine."""
    return [[-1 if mines[y * w + x] else sum(mines[yy * w + xx] for yy in range(max(0, y - 1), min(h, y + 2))
                                               for xx in range(max(0, x - 1), min(w, x + 2)))
             for x in range(w)] for y in range(h)]


# (layout, 3BV, openings), counted by hand; spawn_side 1 keeps the spawn on a
# safe centre cell.
HAND = [
    # one mine in a corner: all zeros form one opening whose border holds
    # the three 1s -> one click
    ("*..../...../...../...../.....", 1, 1),
    # a wall of mines in column 3: zeros in columns 0-1 and in column 5 are
    # two openings; their borders (columns 2 and 4) are every other safe cell
    ("...*../...*../...*..", 2, 2),
    # a cross of mines: no zero anywhere, each of the 5 safe cells is a click
    (".*./*.*/.*.", 5, 0),
    # mines either side of the centre: no zero, one lone cell
    ("*.*", 1, 0),
]


@pytest.mark.parametrize("layout,bbbv,openings", HAND)
def test_bbbv_and_openings_hand_counted(layout, bbbv, openings):
    f = figures_of(layout, spawn_side=1)
    assert (f["bbbv"], f["openings"]) == (bbbv, openings)
    w, h, mines, _ = parse_layout(layout)
    assert (ms_toollib.cal_bbbv(grid_of(mines, w, h)), ms_toollib.cal_op(grid_of(mines, w, h))) == (bbbv, openings)


def generated_boards(per_row: int = 20):
    """Boards of every default row (hundreds, fog rows included)."""
    for key, row in sorted(DEFAULT.rows.items()):
        for i in range(per_row):
            g = generate_from_row(row, DEFAULT.spawn_side, derive_at("board_gen", 5000 + i))
            yield key, g


GENERATED = list(generated_boards())


def test_hundreds_of_generated_boards_agree_with_ms_toollib_and_the_solver():
    assert len(GENERATED) >= 200
    solvable_by_ms = 0
    for key, g in GENERATED:
        b, m = g.board, g.metrics
        grid = grid_of(b.mines, b.width, b.height)
        assert (m["bbbv"], m["openings"]) == (ms_toollib.cal_bbbv(grid), ms_toollib.cal_op(grid)), (key, m["scope"])
        full = difficulty.compute(b.width, b.height, b.spawn_side, b.mines, b.fog)
        # the waves reach the same fixed point as the closure the generator scored
        assert full["r_infinity"] == m["revealed"], (key, m["scope"])
        assert full["nodes"] >= 0  # never over the enumeration budget
        # complete logic is at least as strong as single_subset
        if m["revealed"] == m["safe_count"]:
            assert m["solvable_full_logic"]
        if m["subset_steps"] == 0:
            single = closures(b.mines, b.width, b.height, b.spawn_side, rules="single", fog=frozenset(b.fog))
            assert len(single.r_infinity) == m["revealed"]
        if not b.fog and b.width == b.height:
            # ms-toollib opens from one click at the centre, a subset of our
            # spawn square's R0: whatever it solves, we solve
            if ms_toollib.is_solvable(grid, (b.height - 1) // 2, (b.width - 1) // 2):
                solvable_by_ms += 1
                assert m["solvable_full_logic"], (key, m["scope"], b.layout)
    assert solvable_by_ms >= 20  # the implication was exercised


def test_subset_steps_zero_when_the_single_rule_clears():
    cleared = 0
    for _, g in GENERATED:
        b, m = g.board, g.metrics
        single = closures(b.mines, b.width, b.height, b.spawn_side, rules="single", fog=frozenset(b.fog))
        if len(single.r_infinity) == m["revealed"]:
            cleared += 1
            assert m["subset_steps"] == 0
        else:
            assert m["subset_steps"] > 0  # the subset rule revealed something single could not
    assert cleared >= 20


GOLD = {g.name: g for g in GOLDEN}


def test_hand_derived_waves_and_subset_steps():
    # single rule only: wave 1 proves (1,3) a mine; (0,3) opens in wave 2
    f = figures_of(GOLD["single_rule_only"].layout)
    assert (f["subset_steps"], f["solve_rounds"], f["solvable_full_logic"]) == (0, 2, True)
    # partial overlap: the single rule finds nothing in R0; one subset wave
    # opens (5,2) and (5,1) (2 cells); wave 2 proves (5,0), (5,3) mines and
    # reveals nothing, and the wing stays closed: 1 round, 2 subset steps
    f = figures_of(GOLD["partial_overlap_not_resolved"].layout)
    assert (f["subset_steps"], f["solve_rounds"]) == (2, 1)
    # subset needed: wave 1 (subset) settles (2,3) safe and (6,3) mine
    f = figures_of(GOLD["subset_needed"].layout)
    assert f["subset_steps"] >= 2 and f["solvable_full_logic"]
    # free open: nothing to deduce
    f = figures_of(GOLD["free_open_empty"].layout)
    assert (f["subset_steps"], f["solve_rounds"], f["bbbv"], f["openings"]) == (0, 0, 1, 1)


def test_a_fifty_fifty_is_not_solvable_by_full_logic():
    # (7,3),(8,3) hold one mine; every number and the global count see them
    # alike
    assert not figures_of(GOLD["fifty_fifty"].layout)["solvable_full_logic"]
    # the smallest 50/50: column 0 holds one mine in two cells
    assert not figures_of("*..../.....")["solvable_full_logic"]


def test_a_wing_is_solved_by_full_logic():
    # A={(6,0),(6,1),(6,2)}:1 and B={(6,1),(6,2),(6,3)}:2 overlap: complete
    # logic proves (6,3) a mine and (6,0) safe; (6,0) shows 2 -> (6,1) mine,
    # (6,2) safe
    assert figures_of(GOLD["partial_overlap_not_resolved"].layout)["solvable_full_logic"]


# A global-count ending (5x4, mines a=(0,0), d=(0,3), e=(1,3); 3 in all).
# R0 leaves a, b=(0,1), c=(0,2), d, e closed. (2,2)=1 sees only e: a mine.
# (1,0)=1 gives a+b=1 inside (1,1)=1's a+b+c=1: c safe (subset). c shows 2:
# b+d+e=2, so b+d=1, as (1,2)=2 says too. Left: a+b=1, b+d=1, two
# solutions: {b} (2 mines in all) or {a, d} (3 mines). Only the count picks
# the second: b safe, and every safe cell is open.
GLOBAL_COUNT = "*..../...../...../**..."


def test_a_global_count_ending_is_solved_only_with_the_count():
    w, h, mines, _ = parse_layout(GLOBAL_COUNT)
    assert len(closures(mines, w, h, 3).r_infinity) == 16  # single_subset stops one cell short
    assert brute_full_logic(mines, w, h, 3, use_count=True)
    assert not brute_full_logic(mines, w, h, 3, use_count=False)
    f = figures_of(GLOBAL_COUNT)
    assert f["solvable_full_logic"]
    assert difficulty.layout_figures(GLOBAL_COUNT) == {k: f[k] for k in difficulty.FIELDS}
    # wave 1 (single) proves e; wave 2 (subset) opens c
    assert (f["solve_rounds"], f["subset_steps"]) == (2, 1)


def brute_full_logic(mines, w: int, h: int, spawn_side: int, use_count: bool = True) -> bool:
    """Complete logic by brute force: every assignment of mines to the
    unknown cells consistent with the revealed numbers (and the mine count);
    open every cell safe in all of them; repeat."""
    table = neighbour_table(w, h)
    numbers = [sum(mines[n] for n in table[c]) for c in range(w * h)]
    total = sum(mines)
    revealed = set(reveal_r0(mines, w, h, spawn_side))
    while True:
        unknown = [c for c in range(w * h) if c not in revealed]
        configs = np.array(list(itertools.product((0, 1), repeat=len(unknown))), dtype=np.int64)
        ok = np.ones(len(configs), bool)
        pos = {c: i for i, c in enumerate(unknown)}
        for c in revealed:
            cols = [pos[n] for n in table[c] if n in pos]
            ok &= configs[:, cols].sum(axis=1) == numbers[c]
        if use_count:
            ok &= configs.sum(axis=1) == total
        possible_mine = configs[ok].any(axis=0)
        safe = [c for c in unknown if not possible_mine[pos[c]]]
        if not safe:
            return len(revealed) == w * h - total
        _chain(safe, revealed, numbers, table)


def small_boards(count: int):
    """Random 5x4 boards with no mine in the spawn square."""
    rng = np.random.default_rng(17)
    w, h = 5, 4
    spawn = set(reveal_r0(bytes(w * h), w, h, 3)) & {y * w + x for x in range(1, 4) for y in range(0, 3)}
    outside = [c for c in range(w * h) if c not in spawn]
    for _ in range(count):
        k = int(rng.integers(2, 6))
        cells = rng.choice(outside, size=k, replace=False)
        mines = bytearray(w * h)
        for c in cells:
            mines[int(c)] = 1
        yield bytes(mines), w, h


def test_full_logic_equals_brute_force_on_small_boards():
    differs = 0
    for mines, w, h in small_boards(150):
        ours = difficulty.compute(w, h, 3, mines)["solvable_full_logic"]
        assert ours == brute_full_logic(mines, w, h, 3), mines
        differs += ours != (len(closures(mines, w, h, 3).r_infinity) == w * h - sum(mines))
    assert differs >= 1  # some board needs more than single_subset


def test_figures_are_in_the_metrics_record():
    _, g = GENERATED[0]
    assert set(difficulty.FIELDS) <= set(g.metrics)
    assert isinstance(g.metrics["solvable_full_logic"], bool)
    assert 1 <= g.metrics["bbbv"] <= g.metrics["safe_count"]


def test_fog_boards_get_figures():
    row = BoardGenRow(level_index=1, node_depth=0, board_width=12, board_height=12, mine_density=0.2,
                      inferability_target=0.85, min_safe_count=1, board_type="dungeon", shave_ring_radius=1,
                      r0_max_cap=60, max_gen_attempts=8, fog_region_count=1, fog_target_ratio=0.05)
    for i in range(10):
        g = generate_from_row(row, 3, derive_at("board_gen", i))
        full = difficulty.compute(12, 12, 3, g.board.mines, g.board.fog)
        assert g.board.fog and full["r_infinity"] == g.metrics["revealed"]


def test_figures_of_a_batch_equal_one_call_per_board():
    # the batch entry point computes the figures of a chunk in one kernel
    # call; they must be each board's own, and skipped boards get None
    rng = np.random.default_rng(3)
    for width, height, fog_p in ((12, 12, 0.0), (16, 16, 0.08), (70, 9, 0.05)):
        nb = width * height
        mines = (rng.random((24, nb)) < 0.2).astype(np.uint8)
        fog = ((rng.random((24, nb)) < fog_p) & (mines == 0)).astype(np.uint8)
        spawn = difficulty._arrays(width, height, 3)[2]
        mines[:, spawn] = 0
        fog[:, spawn] = 0
        todo = np.arange(24) % 5 != 4
        got = difficulty.figures_batch(width, height, 3, mines, fog, todo)
        for b in range(24):
            if not todo[b]:
                assert got[b] is None
                continue
            one = difficulty.compute(width, height, 3, mines[b].tobytes(), np.flatnonzero(fog[b]).tolist())
            assert got[b] == {k: one[k] for k in difficulty.FIELDS}
            assert list(got[b]) == list(difficulty.FIELDS)
