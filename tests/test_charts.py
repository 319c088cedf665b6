"""The pictures are real, valid PNG images (issue 8 "Pictures")."""

from __future__ import annotations

import base64
import io
import struct

from boardgen_pipeline.board.generator import generate
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


def test_board_picture_shades_the_closures():
    _, m = generate(2, 2, 3)
    png = charts.board_png(m["layout"])
    w, h = png_size(png)
    assert w > 100 and h > 100
    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png))
    colours = {tuple(round(float(c), 2) for c in p[:3]) for row in pixels[::3] for p in row[::3]}
    # R0 light green (#c7e9c0) and proved green (#41ab5d) both appear
    assert (0.78, 0.91, 0.75) in colours or any(abs(c[0] - 0.78) < 0.02 and abs(c[1] - 0.91) < 0.02 for c in colours)


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
