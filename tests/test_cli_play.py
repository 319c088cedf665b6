"""``boardgen play`` and ``boardgen measure --probabilities`` (the perfect
player's CLI): a hand-worked 50/50 through both commands, every file of a run
checked before the first game, and the commands against the library on
generated boards that force guesses.

The 50/50 (8x8, spawn 3x3 at (3,3)): mines at (2,0) and (2,1) and one of
(0,0), (1,0). R0 floods every zero, opening all but those four cells. (2,2)
shows 1 and its one closed neighbour is (2,1): a mine. (3,1) shows 2 with
closed neighbours (2,0) and (2,1): both mines. (0,1) shows 1 over (0,0) and
(1,0), and (1,1) shows 3 = (2,0) + (2,1) + one of them; every other number
sees neither. So exactly one mine lies in {(0,0), (1,0)}, and the mine count
(3) says no more: P(mine) = 1/2 each, (2,0) and (2,1) are 1, the rest open.
The player's tie goes to the lowest row-major index: (0,0), P(safe) 1/2.
"""

from __future__ import annotations

import io
import json
import sys

import pytest

from boardgen_pipeline import generate
from boardgen_pipeline.board.measure import board_of_layout, measure_layout, probability_grid
from boardgen_pipeline.board.player import game_json
from boardgen_pipeline.cli import main

MINE_LEFT = "*.*...../..*...../......../......../......../......../......../........"
MINE_RIGHT = ".**...../..*...../......../......../......../......../......../........"


def run(capsys, *argv) -> tuple[int, list[str], str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


@pytest.fixture
def layouts(tmp_path):
    out = {}
    for name, text in (("left", MINE_LEFT), ("right", MINE_RIGHT)):
        path = tmp_path / f"{name}.txt"
        path.write_text(text.replace("/", "\n") + "\n")
        out[name] = str(path)
    return out


def test_the_fifty_fifty_is_played_and_its_probabilities_printed(capsys, layouts):
    code, lines, err = run(capsys, "play", layouts["left"], layouts["right"])
    assert code == 0 and err == ""
    left, right = (json.loads(line) for line in lines)
    guess = [{"x": 0, "y": 0, "p_safe": 0.5}]
    assert left == {"file": layouts["left"], "won": False, "forced_guesses": 1, "survival": 0.5, "guesses": guess,
                    "too_big": 0}
    assert right == {"file": layouts["right"], "won": True, "forced_guesses": 1, "survival": 0.5, "guesses": guess,
                     "too_big": 0}
    code, lines, _ = run(capsys, "measure", "--probabilities", layouts["left"])
    result = json.loads(lines[0])
    grid = result["probabilities"]
    assert len(grid) == 8 and all(len(row) == 8 for row in grid)
    assert grid[0][:3] == [0.5, 0.5, 1.0] and grid[1][2] == 1.0
    closed = {(0, 0), (1, 0), (2, 0), (2, 1)}
    assert all(grid[y][x] is None for y in range(8) for x in range(8) if (x, y) not in closed)
    assert result["revealed"] == 60 and result["probabilities_too_big"] == 0
    # without the flag, the measure is what it always was
    code, lines, _ = run(capsys, "measure", layouts["left"])
    assert "probabilities" not in json.loads(lines[0])


def test_play_reads_stdin_and_takes_the_spawn_side(capsys, monkeypatch):
    board = generate(3, 4, 11).board
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(board.layout.encode())))
    code, lines, _ = run(capsys, "play", "-")
    assert code == 0 and json.loads(lines[0]) == {"file": "-", **game_json(board)}
    # the spawn side reaches the player: a 5x5 square at the centre
    open_layout = "/".join(["." * 9] * 8 + ["*" + "." * 8])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(open_layout.encode())))
    code, lines, _ = run(capsys, "play", "--spawn-side", "5", "-")
    assert code == 0 and json.loads(lines[0]) == {"file": "-", **game_json(board_of_layout(open_layout, spawn_side=5))}


@pytest.mark.parametrize("text,why", [
    ("...../....", "rows of unequal length"),
    ("\n".join([".....", ".*...", *["....."] * 3]), "1 mine inside the 3x3 spawn square"),
    ("\n".join(["*****"] * 5), "no safe cell"),
    ("..x../...../.....", "unknown"),
    ("..", "cannot be a board"),
])
def test_a_layout_that_cannot_be_a_board_stops_the_run_before_any_game(capsys, layouts, tmp_path, text, why):
    bad = tmp_path / "bad.txt"
    bad.write_text(text)
    code, lines, err = run(capsys, "play", layouts["left"], str(bad))
    assert code == 1 and lines == []  # the good file first: still no game printed
    assert err.startswith(f"error: {bad}: ") and why in err and "Traceback" not in err
    code, lines, err = run(capsys, "measure", "--probabilities", str(bad))
    assert code == 1 and lines == [] and why in err


def test_the_commands_print_what_the_library_computes_on_boards_that_force_guesses(capsys, tmp_path):
    guesses = 0
    for scope in range(8):
        board = generate(3, 4, scope).board  # the L3 Boss row: fog, and guesses on most boards
        path = tmp_path / f"b{scope}.txt"
        path.write_text(board.layout)
        code, lines, _ = run(capsys, "play", str(path))
        game = json.loads(lines[0])
        assert game == {"file": str(path), **game_json(board_of_layout(board.layout))}
        guesses += game["forced_guesses"]
        assert game["survival"] == pytest.approx(_product(g["p_safe"] for g in game["guesses"]), rel=1e-12)
        code, lines, _ = run(capsys, "measure", "--probabilities", str(path))
        result = json.loads(lines[0])
        assert result == {**measure_layout(board.layout).as_json(), **probability_grid(board.layout)}
        grid = result["probabilities"]
        # null exactly on the cells R∞ opened; a fog cell is never a mine; a probability is one
        assert sum(v is None for row in grid for v in row) == result["revealed"]
        assert all(grid[c // board.width][c % board.width] in (None, 0.0) for c in board.fog)
        assert all(0.0 <= v <= 1.0 for row in grid for v in row if v is not None)
    assert guesses > 0


def _product(values) -> float:
    out = 1.0
    for v in values:
        out *= v
    return out
