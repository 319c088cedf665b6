"""The failing row's pictures fit the check's description panel
whole: exact pixel sizes whatever the board's shape, the cells
in the colours of their kinds, the same bytes for the same data; and the
table-wide verdict line stays short above them. The browser test
(tests/test_browser.py) holds the pictures whole in the real UI."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest

from boardgen_pipeline.board.geometry import parse_layout
from boardgen_pipeline.pictures import thumbnails
from boardgen_pipeline.steps import table_check

# the hand-written board with every kind of cell, its colours and its kinds: those of the full-size picture
from .test_charts import COLOURS, SHADED, _kinds


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _board(width: int, height: int) -> str:
    """A ``width`` x ``height`` board with a mine every seventh cell."""
    return "/".join("".join("*" if (y * width + x) % 7 == 3 else "." for x in range(width)) for y in range(height))


def test_histogram_thumbnail_has_the_size_asked_for_and_the_same_bytes():
    values = [0.9, 0.95, 1.0, 1.0, 0.88, 0.97]
    png = thumbnails.histogram_thumbnail(values, 0.85)
    assert png_size(png) == (thumbnails.HISTOGRAM_WIDTH_PX, thumbnails.HEIGHT_PX)
    assert png == thumbnails.histogram_thumbnail(values, 0.85)
    assert png != thumbnails.histogram_thumbnail(values, 0.95)
    # many labels or none: the size holds (no bounding box that grows with them)
    assert png_size(thumbnails.histogram_thumbnail([0.123456] * 500 + [1.0], 0.987654)) == png_size(png)
    assert png_size(thumbnails.histogram_thumbnail([], 0.9, width_px=200, height_px=90)) == (200, 90)


@pytest.mark.parametrize("width, height", [(10, 10), (12, 12), (16, 16), (30, 16), (40, 5), (5, 40)])
def test_board_thumbnail_fits_the_panel_whatever_the_board(width, height):
    png = thumbnails.board_thumbnail(_board(width, height), title="worst board\nscope 1001052673")
    w, h = png_size(png)
    # as high as the histogram beside it, never wider than the widest grid and its legend: the two
    # side by side fit the panel of a 1280 px window (about 700 px; measured by the browser test)
    assert h == thumbnails.HEIGHT_PX
    assert w <= thumbnails.GRID_WIDTH_PX + thumbnails.LEGEND_PX
    assert thumbnails.HISTOGRAM_WIDTH_PX + thumbnails.GRID_WIDTH_PX + thumbnails.LEGEND_PX <= 680
    cell = min(thumbnails.HEIGHT_PX // height, thumbnails.GRID_WIDTH_PX // width)
    assert w == cell * width + thumbnails.LEGEND_PX  # square cells, whole pixels, as large as fits


def test_board_thumbnail_shades_the_closures():
    kinds = _kinds(SHADED)
    assert all(kinds[k] >= 3 for k in COLOURS), kinds  # the board shows every colour
    png = thumbnails.board_thumbnail(SHADED, 3)
    assert png == thumbnails.board_thumbnail(SHADED, 3)
    w, h, _, _ = parse_layout(SHADED)
    cell = min(thumbnails.HEIGHT_PX // h, thumbnails.GRID_WIDTH_PX // w)
    from matplotlib.image import imread

    # the grid alone (top left, cell x cell pixels a cell), without the legend's swatches
    pixels = np.rint(imread(io.BytesIO(png))[: h * cell, : w * cell, :3] * 255).astype(int)
    area = {k: int((pixels == [int(c[i:i + 2], 16) for i in (1, 3, 5)]).all(axis=-1).sum())
            for k, c in COLOURS.items()}
    # each kind covers its cells: its colour's pixels are its cells' (less the digits, "f" and the
    # frame's line on the border cells); a kind in another kind's colour is off by whole cells
    for k in COLOURS:
        assert 0.75 * cell * cell * kinds[k] <= area[k] <= cell * cell * kinds[k], (k, area, kinds, cell)


def test_the_verdict_line_names_a_few_rows_and_counts_the_rest():
    failing = {f"1-{d}": ["A"] for d in range(table_check.NAMED_ROWS + 3)}
    order = list(failing)
    line = table_check._named(order, failing)
    assert line.startswith("1-0 (A); 1-1 (A)")
    assert f"1-{table_check.NAMED_ROWS - 1} (A)" in line and f"1-{table_check.NAMED_ROWS} (A)" not in line
    assert line.endswith("; 3 more (metadata `failing`)")
    few = order[:2]
    assert table_check._named(few, failing) == "1-0 (A); 1-1 (A)"
