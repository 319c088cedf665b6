"""The pictures are real, valid PNG images."""

from __future__ import annotations

import base64
import io
import struct
from collections import Counter

import numpy as np

from boardgen_pipeline.board.geometry import parse_layout
from boardgen_pipeline.board.solver import closures
from boardgen_pipeline.pictures import charts


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_histogram_is_a_png_and_deterministic():
    values = [0.9, 0.95, 1.0, 1.0, 0.88, 0.97]
    a = charts.inferability_histogram_png(values, 0.85)
    w, h = png_size(a)
    assert w > 200 and h > 100
    assert a == charts.inferability_histogram_png(values, 0.85)
    assert a != charts.inferability_histogram_png(values, 0.95)


# A hand-written 10x8 board with every kind of cell the picture shades: R0, cells proved by the
# rules (R∞ - R0), cells that need a guess, fog the rules open, fog they do not, and mines.
SHADED = "f*.......f/**..fff**./......f.*./..*......./........*./..*......./f**f...**./f..*...f.f"
# the colours of charts.board_png, by kind (white, "needs a guess", is the background's too: not counted)
COLOURS = {"mine": "#222222", "R0": "#c7e9c0", "proved": "#41ab5d", "fog, not proved": "#bdbdbd",
           "fog, proved": "#9ecae1"}


def _kinds(layout: str) -> Counter:
    """Each cell's kind, from the solver's closures (not from the picture code)."""
    w, h, mines, fog = parse_layout(layout)
    c = closures(mines, w, h, 3, fog=frozenset(fog))
    kinds = Counter()
    for i in range(w * h):
        if mines[i]:
            kinds["mine"] += 1
        elif i in fog:
            kinds["fog, proved" if i in c.r_infinity else "fog, not proved"] += 1
        elif i in c.r0:
            kinds["R0"] += 1
        elif i in c.r_infinity:
            kinds["proved"] += 1
    return kinds


def test_board_picture_shades_the_closures():
    kinds = _kinds(SHADED)
    assert all(kinds[k] >= 3 for k in COLOURS), kinds  # the board shows every colour
    png = charts.board_png(SHADED)
    w, h = png_size(png)
    assert w > 100 and h > 100
    from matplotlib.image import imread

    pixels = np.rint(imread(io.BytesIO(png))[..., :3] * 255).astype(int)
    area = {k: int((pixels == [int(c[i:i + 2], 16) for i in (1, 3, 5)]).all(axis=-1).sum())
            for k, c in COLOURS.items()}
    # Each kind covers its cells: the pixels of its colour are its cell count times a cell's pixels
    # (a mine cell carries no text, so it gives the unit). The digits and "f" drawn on the other
    # cells take up to ~11% of a cell; the legend's swatch adds a little. A kind shaded in
    # another kind's colour (or not at all) is off by whole cells.
    unit = area["mine"] / kinds["mine"]
    for k in COLOURS:
        assert 0.8 * unit * kinds[k] <= area[k] <= 1.05 * unit * kinds[k], (k, area, kinds)


def test_report_chart_and_markdown_embedding():
    rows = [dict(level_index=1, node_depth=d, p10=0.9, p50=0.97, p90=1.0, inferability_target=0.85, green=True)
            for d in range(5)]
    png = charts.report_chart_png(rows)
    png_size(png)
    md = charts.png_markdown(png, "report")
    assert md.startswith("![report](data:image/png;base64,")
    assert base64.b64decode(md.split(",", 1)[1][:-1]) == png


def test_report_chart_is_written_atomically(tmp_path):
    rows = [dict(level_index=2, node_depth=0, p10=0.8, p50=0.9, p90=0.99, inferability_target=0.85, green=False),
            dict(level_index=1, node_depth=0, p10=0.9, p50=0.97, p90=1.0, inferability_target=0.85, green=True)]
    path = charts.write_report_chart(tmp_path, rows)
    assert path == tmp_path / "calibration_report.png"
    png_size(path.read_bytes())
    assert [p.name for p in tmp_path.iterdir()] == ["calibration_report.png"]
