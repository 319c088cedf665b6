"""The perfect player: the exact games of fixed boards (two
derived by hand), every guess equal to the reference engine's lowest
probability in row-major tie order, the batch entry point (boards that need
no guess cost nothing), the too-big policy, and the same games in another
process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from boardgen_pipeline import generate
from boardgen_pipeline.board import player
from boardgen_pipeline.board import probability as pr
from boardgen_pipeline.board.geometry import Board, parse_layout
from boardgen_pipeline.tables.board_gen import load_board_gen_dir

REPO = Path(__file__).resolve().parent.parent
DEFAULT = load_board_gen_dir()
F = Fraction


def board_of(layout: str, spawn_side: int = 3) -> Board:
    w, h, mines, fog = parse_layout(layout)
    return Board(w, h, spawn_side, mines, fog)


def test_a_four_way_tie_goes_to_the_first_cell_in_row_major_order():
    # .*..*   After R0 (the 3x3 square around (2,2) and its zeros) and logic
    # .....   the player sees   ??1??   the two mines of row 4 proven, so 2
    # .....                     11111   mines remain among a, b, c, d = (0,0),
    # .....                     00000   (1,0), (3,0), (4,0). The 1s of rows 0-1
    # ..**.                     01221   say a+b = 1, b+c = 1, c+d = 1: either
    #                           01**1   {a, c} or {b, d}, both 2 mines, so all
    # four are 1/2. The tie goes to a = (0,0): safe here; it shows 1, so b is
    # the mine, c safe, d the mine: won with one guess, survival 1/2. At the
    # guess 19 of the 21 safe cells were open.
    r = player.play(board_of(".*..*/...../...../...../..**."))
    assert r == {"won": True, "forced_guesses": 1, "survival": 0.5, "survival_exact": F(1, 2),
                 "guesses": [(0, 0, F(1, 2))], "first_guess_p_safe": F(1, 2),
                 "open_share_at_first_guess": F(19, 21), "too_big": 0}


def test_a_lost_gamble_at_two_thirds():
    # *..*.   The player sees   ??1??   with (0,1) proven and 3 mines left
    # *....                     *211?   among a..g = (0,0), (1,0), (3,0),
    # .....                     11011   (4,0), (4,1), (4,3), (4,4):
    # ....*                     0001?   a+b = 1 (the 2 less its proven mine),
    # .....                     0001?   b+c = 1, c+d+e = 1, e+f = 1, f+g = 1.
    # b = 1: c = 0, and e = 1, g = 1 or d = 1, f = 1; b = 0: a = c = f = 1.
    # Three layouts of 3 mines: a, c, d, e, g are mines in 1 of them (1/3),
    # b and f in 2. The tie at 1/3 goes to a = (0,0): a mine. Lost, with 17
    # of the 21 safe cells open.
    r = player.play(board_of("*..*./*..../...../....*/....."))
    assert (r["won"], r["guesses"], r["survival_exact"]) == (False, [(0, 0, F(2, 3))], F(2, 3))
    assert r["open_share_at_first_guess"] == F(17, 21)


def test_a_board_logic_clears_needs_no_guess():
    r = player.play(board_of("*..../...../...../...../....."))
    assert r == player._NO_GUESS


def test_a_default_table_board_whose_first_guess_is_the_interior():
    # the 16x16 Boss row with fog: the first forced guess is the interior
    # (every cell far from a number, all equal): its first cell, the corner
    g = generate(3, 4, 7)
    assert (g.metrics["revealed"], g.metrics["safe_count"]) == (192, 210)
    r = player.play(g.board)
    assert r["guesses"] == [(0, 0, F(15, 17)), (15, 2, F(13, 15))]
    assert (r["won"], r["survival_exact"], r["open_share_at_first_guess"]) == (True, F(13, 17), F(32, 35))
    p = player.position_at_guess(g.board, 0)
    probs = pr.probabilities(p)
    assert 0 in probs.interior and probs.p_interior() == F(2, 17)


def default_boards(per_row: int):
    for key in sorted(DEFAULT.rows):
        for seed in range(per_row):
            yield key, generate(*key, 9000 + seed).board


BOARDS = list(default_boards(12))


def test_every_guess_is_the_reference_engines_lowest_probability():
    guesses = 0
    for key, b in BOARDS:
        r = player.play(b)
        assert all(not b.mines[y * b.width + x] for x, y, _ in r["guesses"][:-1]) and r["too_big"] == 0
        assert r["won"] == (not r["guesses"] or not b.mines[r["guesses"][-1][1] * b.width + r["guesses"][-1][0]])
        for g, (x, y, p_safe) in enumerate(r["guesses"]):
            cell, p_mine = pr.probabilities(player.position_at_guess(b, g)).lowest()
            assert (cell, p_mine) == (y * b.width + x, 1 - p_safe), (key, g)
            assert b.fog == () or cell not in b.fog
            guesses += 1
        assert player.position_at_guess(b, len(r["guesses"])) is None
    assert guesses >= 100


def rows_of(boards: list[Board]) -> tuple[np.ndarray, np.ndarray]:
    mines = np.stack([np.frombuffer(b.mines, np.uint8) for b in boards])
    fog = np.zeros_like(mines)
    for i, b in enumerate(boards):
        fog[i, list(b.fog)] = 1
    return mines, fog


def test_the_batch_gives_each_board_its_own_game():
    for key in sorted(DEFAULT.rows):
        boards = [b for k, b in BOARDS if k == key]
        cols = player.play_batch(boards[0].width, boards[0].height, 3, *rows_of(boards))
        assert set(cols) == set(player.FIELDS)
        assert [{k: cols[k][i] for k in player.FIELDS} for i in range(len(boards))] == [player.play(b) for b in boards]


def test_the_metrics_record_holds_the_game_the_player_plays_from_r0():
    """The generator's figures play on from where complete logic stopped
    (``board_figures_batch``: one kernel, the game's first pass skipped); the
    games are the ones ``play`` plays from R0, field for field."""
    played = 0
    for i, (key, b) in enumerate(BOARDS):
        m = generate(*key, 9000 + i % 12).metrics  # default_boards' seed of the board
        assert generate(*key, 9000 + i % 12).board == b
        r = player.play(b)
        assert m["forced_guesses"] == r["forced_guesses"] and m["won"] == r["won"], key
        assert m["survival"] == float(r["survival_exact"]) and m["fairness_too_big"] == r["too_big"] == 0
        assert m["guess_cells"] == [y * b.width + x for x, y, _ in r["guesses"]]
        assert m["guess_p_safe"] == [float(p) for _, _, p in r["guesses"]]
        first = r["first_guess_p_safe"]
        assert m["first_guess_p_safe"] == (None if first is None else float(first))
        share = r["open_share_at_first_guess"]
        assert m["open_share_at_first_guess"] == (None if share is None else float(share))
        # complete logic solves exactly the boards the player wins without a guess
        assert m["solvable_full_logic"] == (r["forced_guesses"] == 0)
        played += r["forced_guesses"] > 0
    assert played >= 40


def test_boards_that_need_no_guess_are_not_played():
    # two boards that need guesses, told they need none (R∞ = S, or solvable
    # by complete logic): they get the no-guess record, so they were not played
    b = generate(3, 4, 7).board
    mines, fog = rows_of([b, b, b])
    cols = player.play_batch(16, 16, 3, mines, fog, revealed=[210, 192, 192], safe_count=[210, 210, 210],
                             solvable=[False, True, False])
    assert [cols["forced_guesses"][i] for i in range(3)] == [0, 0, 2]
    assert cols["won"][:2] == [True, True] and cols["survival_exact"][:2] == [1, 1]


def test_over_the_node_budget_the_board_is_not_analysed():
    b = generate(3, 4, 7).board
    r = player.play(b, budget=0)
    assert (r["won"], r["survival"], r["survival_exact"], r["forced_guesses"], r["guesses"]) == (None, None, None, 0, [])
    assert r["too_big"] >= 1
    # it stopped where its first guess was due: that position is over the budget
    assert pr.probabilities(player.position_at_guess(b, 0, budget=0), budget=0).too_big == r["too_big"]
    # a board logic clears needs no enumeration at all
    assert player.play(board_of("*..../...../...../...../....."), budget=0)["won"] is True


@pytest.mark.parametrize("layout,message", [
    ("...../.*.../...../...../.....", "spawn square"),
    ("f..../...../...../...../....*", None),
])
def test_boards_the_kernel_cannot_play_are_refused(layout, message):
    b = board_of(layout)
    if message:
        with pytest.raises(ValueError, match=message):
            player.play(b)
    mines, fog = rows_of([b])
    with pytest.raises(ValueError, match="fog cell must be safe"):
        player.play_batch(5, 5, 3, mines, np.maximum(fog, mines))
    with pytest.raises(ValueError, match="rows of 25 cells"):
        player.play_batch(5, 5, 3, mines[:, :20], fog[:, :20])
    with pytest.raises(ValueError, match="budget"):
        player.play_batch(5, 5, 3, mines, fog, budget=-1)
    with pytest.raises(ValueError, match="one value a board"):
        player.play_batch(5, 5, 3, np.zeros((2, 25), np.uint8), revealed=[3], safe_count=[3, 4])


GAMES_SCRIPT = """
import json, sys
from boardgen_pipeline import generate
from boardgen_pipeline.board import player
out = []
for key in [(1, 4), (2, 3), (3, 4)]:
    for seed in range(6):
        r = player.play(generate(*key, 9000 + seed).board)
        out.append([r["won"], r["forced_guesses"], [[x, y, str(p)] for x, y, p in r["guesses"]], str(r["survival_exact"])])
json.dump(out, sys.stdout)
"""


def test_the_same_games_in_another_process():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", GAMES_SCRIPT], env=env, capture_output=True, text=True, check=True)
    here = []
    for key in [(1, 4), (2, 3), (3, 4)]:
        for seed in range(6):
            r = player.play(generate(*key, 9000 + seed).board)
            here.append([r["won"], r["forced_guesses"], [[x, y, str(p)] for x, y, p in r["guesses"]],
                         str(r["survival_exact"])])
    assert json.loads(proc.stdout) == here
    assert sum(g[1] for g in here) > 0
