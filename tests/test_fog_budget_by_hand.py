"""The fog budget on a board worked by hand (seed 001 F3):
Chain0, ``delta_budget_fog = |F - Chain0| * dig_ap_cost`` and
``fog_burden_ratio = |F - Chain0| / max(1, |S - Chain0|)``, every figure
derived in the comments below, held against the readable reference
(``board.fog``) and the compiled kernel the generator uses
(``board.kernels.fog_budget``).

The board, 9 wide and 5 high, spawn side 3 (spawn square x 3..5, y 1..3);
``*`` mine, ``f`` fog (fog cells are safe)::

      x 0 1 2 3 4 5 6 7 8
    y0  . . * . . . . . .
    y1  . f * . . . f . .
    y2  . f * . . . . * f
    y3  . . * . . . . . .
    y4  . . * . . . . . *

Numbers (mines among the 8 neighbours), x = 0..8 on each line, ``*`` a mine:

    y0  0 2 * 2 0 0 0 0 0     (3,0): (2,0),(2,1); (1,0) likewise
    y1  0 3 * 3 0 0 1 1 1     (6,1),(7,1),(8,1): (7,2)
    y2  0 3 * 3 0 0 1 * 1
    y3  0 3 * 3 0 0 1 2 2     (7,3),(8,3): (7,2) and (8,4)
    y4  0 2 * 2 0 0 0 1 *     (7,4): (8,4); (6,4) sees no mine

Column 0 is all zeros (its neighbours, columns 0 and 1, hold no mine);
columns 4 and 5 likewise (columns 3 to 6 hold none).

R0, the spawn square and its flood through zeros: columns 3..6 on every
line (the zeros of columns 4 and 5 open 3 and 6), then from the zero (6,0)
the zeros (7,0), (8,0) and their neighbours (7,1), (8,1), and from the zero
(6,4) its neighbours (7,3), (7,4): 4 * 5 + 4 + 2 = 26 cells. The wall of
mines in column 2 keeps the flood out of columns 0 and 1.

Safe cells S: 45 cells - 7 mines = 38 (columns 0-1: 10; columns 3-8: 28).

Chain0 = R0, every safe zero, every safe neighbour of a safe zero: R0 (26)
plus column 0 (zeros) and column 1 (their neighbours): 36 cells. The safe
cells outside Chain0 are (8,2) and (8,3): |S - Chain0| = 2.

Fog F = {(1,1), (1,2), (6,1), (8,2)}: (6,1) is in R0, (1,1) and (1,2) in
Chain0 (a zero cascade opens them for free though they are not in R0), (8,2)
is not. U = F - Chain0 = {(8,2)}: |U| = 1, so with dig_ap_cost 3

    delta_budget_fog = 1 * 3 = 3
    fog_burden_ratio = 1 / max(1, 2) = 0.5

Had Chain0 been R0 alone, U would hold three cells (1,1), (1,2), (8,2).
"""

from __future__ import annotations

import numpy as np
import pytest

from boardgen_pipeline.board import fog, kernels
from boardgen_pipeline.board.geometry import neighbour_table, parse_layout
from boardgen_pipeline.board.solver import reveal_r0
from boardgen_pipeline.board.workspace import Workspace

LAYOUT = "..*....../.f*...f../.f*....*f/..*....../..*.....*"
W, H = 9, 5

NUMBERS = [  # the table of the module docstring, mines as -1
    0, 2, -1, 2, 0, 0, 0, 0, 0,
    0, 3, -1, 3, 0, 0, 1, 1, 1,
    0, 3, -1, 3, 0, 0, 1, -1, 1,
    0, 3, -1, 3, 0, 0, 1, 2, 2,
    0, 2, -1, 2, 0, 0, 0, 1, -1,
]


def cells(*xy) -> set[int]:
    return {y * W + x for x, y in xy}


R0 = cells(*[(x, y) for x in range(3, 7) for y in range(5)], (7, 0), (8, 0), (7, 1), (8, 1), (7, 3), (7, 4))
CHAIN0 = R0 | cells(*[(x, y) for x in (0, 1) for y in range(5)])
FOG = cells((1, 1), (1, 2), (6, 1), (8, 2))
DIG_AP_COST = 3


@pytest.fixture(scope="module")
def board():
    width, height, mines, fog_cells = parse_layout(LAYOUT)
    assert (width, height) == (W, H) and set(fog_cells) == FOG
    table = neighbour_table(W, H)
    numbers = [sum(mines[n] for n in table[c]) for c in range(W * H)]
    return mines, numbers


def test_the_hand_worked_figures_are_the_boards(board):
    mines, numbers = board
    assert [-1 if mines[c] else numbers[c] for c in range(W * H)] == NUMBERS
    assert len(R0) == 26 and set(reveal_r0(mines, W, H, 3)) == R0
    safe = {c for c in range(W * H) if not mines[c]}
    assert len(safe) == 38 and len(CHAIN0) == 36 and CHAIN0 <= safe
    assert safe - CHAIN0 == cells((8, 2), (8, 3))


def test_the_reference_fog_budget(board):
    mines, numbers = board
    assert fog.chain0(mines, numbers, R0, W, H) == CHAIN0
    budget = fog.fog_budget(mines, numbers, R0, FOG, W, H, DIG_AP_COST)
    assert (budget.unpaid, budget.paid_denominator) == (1, 2)
    assert budget.delta_budget_fog == 3
    assert budget.fog_burden_ratio == 0.5
    # the price of a dig multiplies the unpaid cells, not the ratio
    assert fog.fog_budget(mines, numbers, R0, FOG, W, H).delta_budget_fog == 1
    assert fog.fog_budget(mines, numbers, R0, FOG, W, H).fog_burden_ratio == 0.5


def test_the_compiled_fog_budget(board):
    mines, numbers = board
    ws = Workspace.for_board(W, H, 3)
    as_mask = lambda s: np.array([1 if c in s else 0 for c in range(W * H)], np.uint8)  # noqa: E731
    ws.mines[:] = np.frombuffer(bytes(mines), np.uint8)
    ws.num[:] = numbers
    ws.fog[:] = as_mask(FOG)
    ws.fog_scratch.r0[:] = as_mask(R0)
    unpaid, paid = kernels.fog_budget(ws.grid, ws.scratch, ws.fog_scratch)
    assert (unpaid, paid) == (1, 2)
    assert set(np.flatnonzero(ws.chain).tolist()) == CHAIN0  # the kernel's Chain0, left in its scratch array


def test_no_fog_outside_chain0_costs_nothing_and_the_ratio_never_divides_by_zero(board):
    mines, numbers = board
    free = fog.fog_budget(mines, numbers, R0, cells((6, 1), (1, 1)), W, H, DIG_AP_COST)
    assert (free.delta_budget_fog, free.fog_burden_ratio) == (0, 0.0)
    # a board whose every safe cell is in Chain0: |S - Chain0| = 0, the denominator is 1
    everything = {c for c in range(W * H) if not mines[c]}
    budget = fog.fog_budget(mines, numbers, everything, cells((8, 2)), W, H)
    assert (budget.unpaid, budget.paid_denominator, budget.fog_burden_ratio) == (0, 1, 0.0)
