"""``measure`` refuses layouts that cannot be boards: a mine in
the spawn square, ragged rows, unknown characters, no safe cell, a board
smaller than the spawn square. Library calls raise LayoutError; the CLI
prints one line and exits 1, no traceback."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from boardgen_pipeline.board.geometry import LayoutError
from boardgen_pipeline.board.measure import measure_cells, measure_layout
from boardgen_pipeline.cli import main

SPAWN_MINE = "......./......./......./...*.../......./......."  # centre (3,2): (3,3) is in the 3x3 square

BAD = {
    "mine in the spawn square": (SPAWN_MINE, "spawn square"),
    "mine at the centre": ("..../..../.*../....", "(1,1)"),
    "all mines": ("****/****/****/****", "no safe cell"),
    "ragged rows": ("....../...../......", "unequal length"),
    "unknown character": ("...../..x../...../.....", "unknown cell characters ['x']"),
    "empty": ("  \n\n", "empty layout"),
    "smaller than the spawn square": ("../..", "spawn side 3"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_layout_that_cannot_be_a_board_is_refused(case):
    text, words = BAD[case]
    with pytest.raises(LayoutError) as err:
        measure_layout(text)
    assert words in str(err.value)


def test_the_issue_cases_no_longer_give_counts():
    # before: "revealed 16 > safe_count 15" for a spawn mine, [4, 0] for an all-mine board
    with pytest.raises(LayoutError, match=r"1 mine inside the 3x3 spawn square .*\(3,3\)"):
        measure_layout(SPAWN_MINE)
    with pytest.raises(LayoutError, match="no safe cell"):
        measure_layout("****/****/****/****")


def test_a_5x5_spawn_square_is_checked_with_its_own_side():
    layout = "*......../........./........./........./........./........./.......*."
    assert measure_layout(layout, spawn_side=3).safe_count == 61
    edge = "........./........./..*....../........./........./........./........."
    assert measure_layout(edge, spawn_side=3).safe_count == 62
    with pytest.raises(LayoutError, match="5x5 spawn square"):
        measure_layout(edge, spawn_side=5)


def test_measure_cells_refuses_the_same_boards():
    with pytest.raises(LayoutError, match="spawn square"):
        measure_cells(7, 6, [(3, 3)])
    with pytest.raises(LayoutError, match="no safe cell"):
        measure_cells(3, 3, range(9))
    with pytest.raises(LayoutError, match="spawn side"):
        measure_cells(8, 8, [], spawn_side=4)
    assert measure_cells(7, 6, [(0, 0)]).safe_count == 41


@pytest.mark.parametrize("case", ["mine in the spawn square", "all mines", "ragged rows", "unknown character"])
def test_the_cli_prints_the_reason_and_exits_1(tmp_path, case):
    text, words = BAD[case]
    path = tmp_path / "layout.txt"
    path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["measure", str(path)])
    assert code == 1
    assert out.getvalue() == ""
    assert err.getvalue().startswith(f"error: {path}: ") and words in err.getvalue()
    assert "Traceback" not in err.getvalue()
