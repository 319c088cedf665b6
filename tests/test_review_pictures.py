"""The pictures of the HTML pages show what they claim (``review.svg``,
``review.render.html``, ``review.curve.html``; docs/review.md "Outputs"):
every uncertainty band has area (a diff's only modified row used to give a
two-point polygon of zero width), every panel has a y axis with its unit,
the target is drawn where the figure has one, a level without fog has no fog
panels, the Boss row's mark is not the flagged mark, and the HTML verdict
table says ``pass -> FAIL (worse)`` as the terminal and markdown do, not
True/False."""

from __future__ import annotations

import re
import shutil

import pytest

from boardgen_pipeline.review import curve, diff, render, sources, svg

from .review_support import copy_tables, set_field

SAMPLES = 32
SVG = re.compile(r"<svg .*?</svg>", re.S)


def _area(shape: str) -> float:
    """The area of a band shape (``<rect>`` or ``<polygon>``), in px²."""
    if shape.startswith("<rect"):
        width, height = (float(re.search(rf'{n}="([-\d.]+)"', shape).group(1)) for n in ("width", "height"))
        return width * height
    points = [tuple(map(float, p.split(","))) for p in re.search(r'points="([^"]+)"', shape).group(1).split()]
    return abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(points, points[1:] + points[:1]))) / 2


def bands(page: str) -> list[str]:
    return re.findall(r'<(?:rect|polygon) class="band"[^>]*>', page)


@pytest.fixture(scope="module")
def one_row_changed(tmp_path_factory):
    """A diff with one modified row: (1,1)'s R0 cap cut so that A fails (a
    verdict change, worse); every other row identical, so the only band of
    each level 1 panel stands at one depth."""
    base = copy_tables(tmp_path_factory.mktemp("base") / "tables")
    head = copy_tables(tmp_path_factory.mktemp("head") / "tables")
    for tables in (base, head):
        shutil.rmtree(tables / "nodemaps")
    set_field(head / "board_gen.toml", (1, 1), "r0_max_cap", 40)
    return diff.compare(sources.from_folder(base, "BASE"), sources.from_folder(head, "HEAD"),
                        diff.Settings(samples=SAMPLES, resamples=199))


def test_a_band_at_one_depth_has_area(one_row_changed):
    page = render.html(one_row_changed)
    shapes = bands(page)
    assert shapes, "the modified row's intervals are not drawn"
    assert all(_area(s) > 0 for s in shapes), [s for s in shapes if _area(s) <= 0]
    # the modified row stands alone among its level's depths: its bands are bars
    assert any(s.startswith("<rect") for s in shapes)


def test_every_panel_has_a_y_axis_with_its_unit_and_the_target_where_there_is_one(one_row_changed):
    page = render.html(one_row_changed)
    panels = [p for p in SVG.findall(page) if "no values" not in p]
    assert panels and all('class="y-axis"' in p and 'class="y-unit"' in p for p in panels)
    titles = {re.search(r"<title>(.*?)</title>", p).group(1): p for p in panels}
    assert ">share of safe cells</text>" in titles["inferability_p50"]
    assert 'class="target"' in titles["inferability_p50"] and 'class="target"' in titles["inferability_p10"]
    assert 'class="target"' not in titles["win_rate"]


def test_the_verdict_table_says_pass_to_fail_worse_not_true_false(one_row_changed):
    assert any(v.worse for v in one_row_changed.verdict_changes)
    page = render.html(one_row_changed)
    table = page[page.index("<h2>F4 verdict changes</h2>"):page.index("</table>")]
    assert "<td>pass</td><td>FAIL</td><td>pass -&gt; FAIL (worse)</td>" in table
    assert ">True<" not in table and ">False<" not in table


def _row(depth: int, fog: int, boss: bool = False) -> dict:
    return {"key": f"1-{depth}", "level_index": 1, "node_depth": depth, "boss_row": boss, "fog_region_count": fog,
            "inferability_target": 0.85, "p10": 0.86, "p50": 0.9 + depth / 100, "p90": 0.95,
            "win_rate": 0.5, "win_rate_ci_low": 0.4, "win_rate_ci_high": 0.6,
            "delta_budget_fog_p50": 0.0, "delta_budget_fog_p90": 0.0, "fog_burden_ratio_p50": 0.0,
            "fog_burden_ratio_p90": 0.0}


def test_a_level_without_fog_has_no_fog_panels_and_a_boss_of_its_own_mark():
    fogless = [_row(0, 0), _row(1, 0), _row(2, 0, boss=True)]
    page = curve.html(fogless)
    assert "fog digging cost" not in page and "fog burden ratio" not in page
    foggy = [{**r, "level_index": 2, "key": f"2-{r['node_depth']}", "fog_region_count": 1} for r in fogless]
    page = curve.html(fogless + foggy)
    assert page.count("<title>fog digging cost p50/p90</title>") == 1  # level 2's only
    # the Boss row: a purple diamond, not the red circle of a flagged point
    drawn = [p for p in SVG.findall(page) if "no values" not in p]
    assert drawn and all(p.count('class="boss"') == 1 and f'stroke="{svg.BOSS}"' in p for p in drawn)
    assert 'class="flagged"' not in page and svg.BOSS != svg.FLAGGED
    # the inferability panels draw the rows' target
    panel = next(p for p in SVG.findall(page) if "<title>inferability p10/p50/p90</title>" in p)
    assert 'class="target"' in panel and ">share of safe cells</text>" in panel
    assert all(_area(s) > 0 for s in bands(page))
