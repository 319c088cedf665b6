"""The closure on bit rows reaches the cell-by-cell closure's fixed point
(the expert speed-up changes no board).

``closure_rows`` reads the rules through the board's mines (every derived
fact is true of the board), ``kernels.closure_cells`` through the numbers;
both must give the same R∞ and the same proven mines on every layout, with
and without fog, with the subset rule and without it, and hand back to the
cell closure when the rows cannot hold the board. The word operations the
rows stand on (``bitops``) are held to Python's integers."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from boardgen_pipeline.board import bitops, closure_rows, difficulty, kernels
from boardgen_pipeline.board.workspace import Workspace


def _workspace(width, height, spawn_side):
    return Workspace.for_board(width, height, spawn_side)


def _both(ws, mines, fog, use_subset, bits=None):
    """``(rev, known)`` after the cell closure and after the row closure,
    both from the same R0, and the counts the row closure returned."""
    W, H = ws.width, ws.height
    has_fog = bool(fog.any())
    kernels.numbers_of(mines, ws.nb, ws.nbn, ws.num)
    rev = np.zeros(W * H, np.uint8)
    kernels.flood(ws.spawn, ws.spawn.shape[0], rev, ws.num, fog, ws.nb, ws.nbn, ws.queue)
    cells = ws.scratch._replace(rev=rev.copy(), known=np.zeros(W * H, np.uint8), mines=mines, fog=fog)
    kernels.closure_cells(ws.grid, cells, has_fog, use_subset)
    rows = cells._replace(rev=rev.copy(), known=np.zeros(W * H, np.uint8), bits=ws.bits if bits is None else bits)
    counts = kernels.closure(ws.grid, rows, has_fog, use_subset, True)
    return (cells.rev, cells.known), (rows.rev, rows.known), counts


@pytest.mark.parametrize("width,height,spawn_side", [(30, 16, 3), (10, 10, 3), (9, 9, 3), (3, 3, 1), (1, 9, 1),
                                                     (2, 5, 1), (58, 6, 3), (5, 40, 3)])
def test_rows_reach_the_cell_closures_fixed_point(width, height, spawn_side):
    ws = _workspace(width, height, spawn_side)
    rng = np.random.default_rng(width * 100 + height)
    boards_with_proven_mines = subset_boards = 0
    for i in range(240):
        density = (0.08, 0.15, 0.21, 0.3)[i % 4]
        mines = (rng.random(width * height) < density).astype(np.uint8)
        mines[ws.spawn] = 0
        fog = np.zeros(width * height, np.uint8)
        if i % 3 == 0:  # fog on safe cells: known safe, numbers hidden
            fog = ((rng.random(width * height) < 0.12) & (mines == 0)).astype(np.uint8)
        use_subset = i % 5 != 0
        cells, rows, counts = _both(ws, mines, fog, use_subset)
        assert np.array_equal(cells[0], rows[0]), f"R∞ differs on board {i}"
        assert np.array_equal(cells[1], rows[1]), f"proven mines differ on board {i}"
        assert counts[:3] == (int(rows[0].sum()), int((rows[0] & fog).sum()), int(rows[1].sum()))
        boards_with_proven_mines += int(rows[1].sum() > 0)
        if use_subset:
            single = _both(ws, mines, fog, False)[1][0]
            subset_boards += int(rows[0].sum() > single.sum())
    # the layouts exercise the rules, not only the spawn flood
    if width * height >= 81:
        assert boards_with_proven_mines > 0 and subset_boards > 0


def test_the_subset_rule_opens_what_the_single_rule_cannot():
    # a 1-2-1 style wall under an open field: the single rule stalls on it,
    # the subset rule between neighbouring constraints goes on
    layout = ["..........",
              "..........",
              "..........",
              "..........",
              "*.*.*.*.*.",
              "*********."]
    mines = np.array([c == "*" for c in "".join(layout)], np.uint8)
    ws = _workspace(10, 6, 3)
    assert not mines[ws.spawn].any()
    fog = np.zeros(60, np.uint8)
    cells, rows, counts = _both(ws, mines, fog, True)
    single_cells, single_rows, single_counts = _both(ws, mines, fog, False)
    assert np.array_equal(cells[0], rows[0]) and np.array_equal(cells[1], rows[1])
    assert np.array_equal(single_cells[0], single_rows[0]) and np.array_equal(single_cells[1], single_rows[1])
    assert counts[0] > single_counts[0] and counts[2] > single_counts[2]


@pytest.mark.parametrize("case", ["too wide", "revealed mine", "scratch too small"])
def test_boards_the_rows_cannot_hold_go_cell_by_cell(case):
    width = closure_rows.MAX_WIDTH + 1 if case == "too wide" else 12
    ws = _workspace(width, 6, 3)
    rng = np.random.default_rng(5)
    mines = (rng.random(width * 6) < 0.18).astype(np.uint8)
    mines[ws.spawn] = 0
    fog = np.zeros(width * 6, np.uint8)
    rev = np.zeros(width * 6, np.uint8)
    kernels.numbers_of(mines, ws.nb, ws.nbn, ws.num)
    kernels.flood(ws.spawn, ws.spawn.shape[0], rev, ws.num, fog, ws.nb, ws.nbn, ws.queue)
    bits = ws.bits
    if case == "revealed mine":
        rev[int(np.flatnonzero(mines)[0])] = 1  # a fact that is not true of the board
    if case == "scratch too small":
        bits = np.zeros((closure_rows.BITS_ROWS, 2), np.uint64)
    assert not closure_rows.load_rows(bits, rev, np.zeros_like(rev), mines, fog, False, width, 6)
    if case != "revealed mine":
        cells, rows, _ = _both(ws, mines, fog, True, bits)
        assert np.array_equal(cells[0], rows[0]) and np.array_equal(cells[1], rows[1])


@pytest.mark.parametrize("width,height", [(30, 16), (12, 12), (9, 9), (58, 7), (5, 30)])
def test_waves_on_rows_count_the_waves_of_the_cell_version(width, height):
    # solve_rounds and subset_steps on rows: the same counts and
    # the same fixed point as difficulty.waves, with and without fog
    nb, nbn, spawn = difficulty._arrays(width, height, 3)
    rng = np.random.default_rng(width * 7 + height)
    bits = np.zeros((closure_rows.BITS_ROWS, height + 2 * closure_rows.PAD), np.uint64)
    with_subset = 0
    for i in range(200):
        mines = (rng.random(width * height) < (0.1, 0.15, 0.2, 0.25)[i % 4]).astype(np.uint8)
        mines[spawn] = 0
        fog = np.zeros(width * height, np.uint8)
        if i % 3 == 0:
            fog = ((rng.random(width * height) < 0.1) & (mines == 0)).astype(np.uint8)
        num = np.zeros(width * height, np.int32)
        kernels.numbers_of(mines, nb, nbn, num)
        rev = np.zeros(width * height, np.uint8)
        known = np.zeros(width * height, np.uint8)
        difficulty._spawn_open(spawn, rev, num, fog, nb, nbn)
        rows_rev, rows_known = rev.copy(), known.copy()
        cells = difficulty.waves(rev, known, num, fog, width, height, nb, nbn, difficulty._WIDEN)
        assert closure_rows.load_rows(bits, rows_rev, rows_known, mines, fog, bool(fog.any()), width, height)
        rows = closure_rows.waves_rows(bits, bool(fog.any()), height)
        closure_rows.store_rows(bits, rows_rev, rows_known, width, height)
        assert rows == cells, f"board {i}"
        assert np.array_equal(rev, rows_rev) and np.array_equal(known, rows_known), f"board {i}"
        with_subset += cells[1] > 0
    assert with_subset > 10  # subset waves were exercised


@njit(cache=False)
def _bit_ops(values, tz, pc):
    for i in range(values.shape[0]):
        tz[i] = bitops.trailing_zeros(values[i])
        pc[i] = bitops.popcount(values[i])


def test_the_word_operations_of_the_rows():
    # trailing_zeros is LLVM's cttz through numba's public
    # intrinsic API; defined for 0 (the word's width), like the numba
    # internal it replaces
    rng = np.random.default_rng(3)
    values = np.concatenate([np.array([0, 1, 2, 3, 1 << 63, (1 << 64) - 1], np.uint64),
                             rng.integers(0, 2**64, 200, dtype=np.uint64),
                             np.uint64(1) << rng.integers(0, 64, 64).astype(np.uint64)])
    tz, pc = np.zeros(values.shape[0], np.int64), np.zeros(values.shape[0], np.int64)
    _bit_ops(values, tz, pc)
    ints = [int(v) for v in values]
    assert tz.tolist() == [(v & -v).bit_length() - 1 if v else 64 for v in ints]
    assert pc.tolist() == [bin(v).count("1") for v in ints]
