"""The overlays and the strata of the calibration diff (``review.overlay_diff``,
``review.strata_diff``; docs/review.md "Overlays and strata"): a planted
variation change flagged on the rows it reaches and nowhere else, layout-only
edits of the variation table and of a node-map pool doing no overlay or strata
work, a pool edit's strata compared paired by adventure, the JSON keys, and
``--fail-on flagged`` reading the overlays."""

from __future__ import annotations

import json
import re

import pytest

from boardgen_pipeline import cli
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.review import diff, overlay_diff, render, sources, strata_diff
from boardgen_pipeline.review import figures as F

from .review_support import REPO, calibrate, copy_tables, set_field

SAMPLES = 32
ADVENTURES = 300
LEVEL_2_3 = [(lv, d) for lv in (2, 3) for d in range(4)]  # rows the per-level bonus reaches (not the Boss rows)


def compare(base_dir, head_dir, **settings):
    base, head = sources.from_folder(base_dir, "BASE"), sources.from_folder(head_dir, "HEAD")
    return diff.compare(base, head, diff.Settings(**{"samples": SAMPLES, "resamples": 999,
                                                     "adventures": ADVENTURES, **settings}))


def edit(path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= count, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


@pytest.fixture(scope="module")
def bonus(tmp_path_factory):
    """``per_level_bonus`` 1 -> 5: four more target cells a board on level 2,
    eight on level 3, none on level 1 ((L - 1) * bonus); the Boss rows of
    levels 2 and 3 take their whole-board variant and place no cell."""
    tmp = tmp_path_factory.mktemp("bonus")
    base, head = copy_tables(tmp / "base"), copy_tables(tmp / "head")
    edit(head / "variation.toml", "per_level_bonus = 1 ", "per_level_bonus = 5 ")
    return base, head, compare(base, head)


def test_a_planted_variation_change_is_flagged_where_it_reaches_and_nowhere_else(bonus):
    _, _, result = bonus
    assert {r.state for r in result.rows} == {"identical"} and not result.flagged_rows  # no board moved
    by_key = {o.key: o for o in result.overlays}
    assert sorted(by_key) == sorted((lv, d) for lv in (1, 2, 3) for d in range(5))  # the header decides them all
    for key in LEVEL_2_3:
        o = by_key[key]
        assert o.state == "identical" and o.causes == ["variation.toml (its pools or the placement header)"]
        cells = o.figures["overlay_cells_mean"]
        assert cells.flagged and cells.delta > 1 and cells.q <= 0.05 and cells.b is None
        assert o.samples == SAMPLES and cells.boards == SAMPLES
        assert not o.figures["overlay_types"].flagged and not o.figures["overlay_rule_broken_share"].flagged
    for key in [(1, d) for d in range(5)] + [(2, 4), (3, 4)]:
        o = by_key[key]
        # paired on the very same boards, overlay by overlay: no pair differs, so no test sees anything
        assert o.flagged == [] and all(f.size == 0 and f.p == 1.0 for f in o.figures.values()), key
    assert result.counts()["flagged_overlay_rows"] == len(LEVEL_2_3)
    assert result.flagged and not result.worse  # flagged, yet no F4 verdict: exit 0 unless --fail-on flagged


def test_a_resource_face_change_moves_only_the_boss_rows_survival_weight(tmp_path):
    """The whole-board variant cuts survival weight by 30% on the Boss rows of
    levels 2 and 3; 50% cuts more. Only those two rows' overlays are compared
    (no other row's gate admits a global type), and their survival weight is
    flagged; their cells are not (a whole-board variant places none)."""
    base, head = copy_tables(tmp_path / "base"), copy_tables(tmp_path / "head")
    edit(head / "variation.toml", "effect_value = 30", "effect_value = 50")
    result = compare(base, head)
    assert [o.key for o in result.overlays] == [(2, 4), (3, 4)]
    for o in result.overlays:
        weight = o.figures["overlay_survival_weight_mean"]
        assert o.flagged == ["overlay_survival_weight_mean"] and weight.delta < -1
        assert o.figures["overlay_whole_board_share"].base == o.figures["overlay_whole_board_share"].head == 1.0


def test_layout_only_edits_of_the_variation_table_and_a_pool_do_no_overlay_or_strata_work(tmp_path, monkeypatch):
    """Comments, whitespace and the order of a table's keys: the tables are
    listed as ``layout``, nothing is placed, drawn or measured (the functions
    that would are made to fail), nothing flagged."""
    base, head = copy_tables(tmp_path / "base"), copy_tables(tmp_path / "head")
    edit(head / "variation.toml", "pack_min = 2              # [1, pack_max] smallest connected pack\n"
                                  "pack_max = 4              # [pack_min, 9] largest connected pack",
         "# reordered\npack_max   =   4\npack_min = 2   # edited")
    edit(head / "variation.toml", 'id = "magma"\nname = "岩浆"', 'name = "岩浆"    # swapped\nid = "magma"')
    edit(head / "nodemaps" / "level_2.toml", "\n[[templates]]\n", "\n# a comment\n\n[[templates]]   # edited\n")

    def no_work(*args, **kwargs):
        raise AssertionError("overlay or strata work on a layout-only change")

    monkeypatch.setattr(overlay_diff, "place", no_work)
    monkeypatch.setattr(strata_diff, "replay_level", no_work)
    monkeypatch.setattr(strata_diff, "row_figures", no_work)
    result = compare(base, head)
    assert result.tables == [{"table": "nodemaps/", "change": "layout"}, {"table": "variation.toml", "change": "layout"}]
    assert result.overlays == [] and not result.strata.compared and result.strata.levels == []
    assert not result.flagged and result.counts()["flagged_overlay_figures"] == 0
    js = json.loads(render.json_text(result))
    assert js["overlays"] == [] and js["strata"]["compared"] is False


def test_a_board_change_places_only_that_rows_overlays(tmp_path, monkeypatch):
    """An unchanged variation table costs a board change nothing but the
    modified row's own overlays, placed on the boards the row diff made."""
    base, head = copy_tables(tmp_path / "base"), copy_tables(tmp_path / "head")
    set_field(head / "board_gen.toml", (2, 1), "mine_density", 0.2)
    placed = []
    real = overlay_diff.place

    def no_gate(*args, **kwargs):
        raise AssertionError("a row's variation gate digested though the variation table did not change")

    monkeypatch.setattr(overlay_diff, "candidate_pools", no_gate)
    monkeypatch.setattr(overlay_diff, "place", lambda source, key, *a: placed.append(key) or real(source, key, *a))
    result = compare(base, head)
    [row] = result.of("modified")
    [o] = result.overlays
    assert o.key == row.key == (2, 1) and o.state == "modified" and o.causes == ["its boards (row modified)"]
    assert placed == [(2, 1), (2, 1)] and not result.strata.compared
    assert o.figures["overlay_cells_mean"].boards == SAMPLES


def test_against_the_warehouse_nothing_is_placed_or_drawn_and_a_note_says_so(tmp_path, monkeypatch):
    """``@warehouse`` keeps no variation table nor pools: the watch and a diff
    against the stored calibration neither place overlays nor draw maps, even
    when the working tables changed both."""
    tables = copy_tables(tmp_path / "tables")
    root = calibrate(tables, tmp_path / "warehouse", SAMPLES)
    edit(tables / "variation.toml", "per_level_bonus = 1 ", "per_level_bonus = 5 ")
    edit(tables / "nodemaps" / "level_1.toml", '{ id = 3, type = "reward" },  # depth 1',
         '{ id = 3, type = "battle" },  # depth 1')

    def no_work(*args, **kwargs):
        raise AssertionError("overlay or strata work against the warehouse")

    for name in ("place", "candidate_pools"):
        monkeypatch.setattr(overlay_diff, name, no_work)
    for name in ("replay_level", "row_figures"):
        monkeypatch.setattr(strata_diff, name, no_work)
    head = sources.from_folder(tables, "HEAD")
    base = sources.resolve(sources.WAREHOUSE, "BASE", tables, root, like=head.table)
    result = diff.compare(base, head, diff.Settings(samples=SAMPLES, resamples=999), root)
    assert result.overlays == [] and not result.strata.compared
    assert any(n.startswith("overlays and strata not compared: the warehouse") for n in result.notes)


@pytest.fixture(scope="module")
def pool_edit(tmp_path_factory):
    """Level 1's second template, not the fixed one: its reward node at depth 1
    becomes a battle (one more board node, standing on row (1,1))."""
    tmp = tmp_path_factory.mktemp("pool")
    base, head = copy_tables(tmp / "base"), copy_tables(tmp / "head")
    pool = head / "nodemaps" / "level_1.toml"
    text = pool.read_text(encoding="utf-8")
    start = text.index('id = "l1_three_trunk_mid_corridor"')
    end = start + text[start:].index("edges")
    block = text[start:end].replace('{ id = 3, type = "reward" },  # depth 1', '{ id = 3, type = "battle" },  # depth 1')
    assert block != text[start:end]
    pool.write_text(text[:start] + block + text[end:], encoding="utf-8")
    return base, head, compare(base, head)


def test_a_pool_edit_compares_the_strata_paired_by_adventure(pool_edit):
    base, head, result = pool_edit
    assert result.overlays == [] and {r.state for r in result.rows} == {"identical"}
    assert result.tables == [{"table": "nodemaps/", "change": "modified"}]
    strata = result.strata
    assert strata.compared and strata.adventures == ADVENTURES
    [level] = strata.levels  # levels 2 and 3 did not change: not drawn
    assert level.level == 1 and level.state == "modified" and level.adventures == ADVENTURES
    assert set(level.figures) == {f.name for f in F.STRATA_FIGURES}
    moved = [f for f in level.figures.values() if f.delta != 0]
    assert moved and all(f.p is not None and f.q is not None and f.ci is not None for f in moved)
    for f in level.figures.values():
        assert f.delta == pytest.approx(f.head - f.base) and f.boards == ADVENTURES
    # paired by adventure: only the adventures that draw the edited template differ, so the pairs agree
    assert all(f.correlation > 0.5 for f in moved)  # shuffled pairs would give about 0
    # the drawn maps' mean estimates the pool figure (exact, uniform over six templates)
    for f in F.STRATA_FIGURES:
        pool = level.pool[f.name]
        assert pool["paired"] is False and pool["delta"] == pytest.approx(pool["head"] - pool["base"])
        drawn = level.figures[f.name].delta
        assert abs(drawn - pool["delta"]) <= 0.5 * abs(pool["delta"]) and (drawn == 0) == (pool["delta"] == 0)
    assert any(level.pool[f.name]["delta"] != 0 for f in F.STRATA_FIGURES)
    # the first adventure takes the fixed template, which did not change
    assert all(v["delta"] == 0 and v["paired"] is False for v in level.first_adventure.values())
    [template] = level.templates
    assert template["template_id"] == "l1_three_trunk_mid_corridor" and template["change"] == "modified"
    assert template["paired"] is False and any(v["delta"] for v in template["figures"].values())


def test_the_strata_draw_the_pipelines_maps(pool_edit):
    """The strata diff replays each level alone from its scope: the same maps
    as the pipeline's own draw records (``steps.draw_node_maps``)."""
    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.steps.draw_node_maps import draw_records

    _, head, _ = pool_edit
    pools = load_catalog(head).pools
    seeds = range(40)
    records = draw_records(pools, seeds, branches=(False,))
    for level in sorted(pools):
        expected = [tuple(sorted(r["board_node_depths"])) for r in records if r["level_index"] == level]
        assert strata_diff.drawn_depths(pools, level, seeds) == expected


def test_json_and_text_carry_the_overlays_and_the_strata(bonus, pool_edit):
    _, _, result = bonus
    js = json.loads(render.json_text(result))
    assert js["schema"] == "boardgen.calibration_diff/1" and js["rows"]  # additive: the rows as before
    row_figure_keys = {"base", "head", "delta", "ci", "p", "q", "p_test", "p_interval", "untested", "margin",
                       "flagged", "beyond_margin", "flag_reading", "decided", "boards", "correlation"}
    entry = next(o for o in js["overlays"] if o["key"] == "2-1")
    assert set(entry) == {"key", "level_index", "node_depth", "state", "causes", "flagged", "samples", "notes",
                          "figures"}
    assert "overlay_cells_mean" in entry["flagged"]
    assert set(entry["figures"]) == {f.name for f in F.OVERLAY_FIGURES}
    assert set(entry["figures"]["overlay_cells_mean"]) == row_figure_keys
    assert set(entry["figures"]["overlay_shortfall_share"]) == row_figure_keys | {"b", "c"}
    assert isinstance(entry["figures"]["overlay_types"]["delta"], dict)
    counts = js["counts"]
    assert counts["overlay_rows"] == 15 and counts["flagged_overlay_rows"] == len(LEVEL_2_3)
    assert counts["flagged_overlay_figures"] >= len(LEVEL_2_3) and counts["flagged_strata_figures"] == 0
    assert js["margins"]["overlay_cells_mean"] == 1.0 and js["margins"]["strata_p50"] == 0.01
    assert js["strata"] == {"compared": False, "adventures": ADVENTURES, "row_figures": "head", "notes": [],
                            "levels": []}
    text = render.terminal(result)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "(2,1) overlays (identical row)" in text and "cells_mean *" in text
    md = render.markdown(result)
    assert "#### Overlays (15 rows" in md and "**overlay_cells_mean** ⚑" in md
    assert "<h2>Overlays" in render.html(result)

    _, _, strata = pool_edit
    js = json.loads(render.json_text(strata))["strata"]
    assert js["compared"] is True and js["row_figures"] == "head"
    [level] = js["levels"]
    assert set(level) == {"level_index", "state", "adventures", "flagged", "notes", "figures", "pool",
                          "first_adventure", "templates"}
    assert level["figures"]["strata_p10"]["paired"] is True and level["figures"]["strata_p10"]["branch"] == "drawn"
    assert set(level["figures"]["strata_p10"]) == row_figure_keys | {"paired", "branch"}
    assert set(level["pool"]["strata_p10"]) == {"base", "head", "delta", "paired"}
    assert level["templates"][0]["paired"] is False
    text = render.terminal(strata)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "level 1 strata (pool modified)" in text and "template l1_three_trunk_mid_corridor modified" in text
    assert "#### Strata" in render.markdown(strata) and "<h2>Strata" in render.html(strata)


def test_fail_on_flagged_reads_the_overlays(bonus, tmp_path, capsys):
    """Exit 0 by default (no F4 verdict worse), 3 with ``--fail-on flagged``
    when an overlay figure is flagged and no row is."""
    base, head, _ = bonus
    argv = ["diff", str(base), str(head), "--tables", str(head), "--warehouse", str(tmp_path / "none"),
            "--samples", str(SAMPLES), "--resamples", "999", "--format", "json"]
    assert cli.main(argv) == Exit.OK
    out = json.loads(capsys.readouterr().out)
    assert out["counts"]["flagged_rows"] == 0 and out["counts"]["flagged_overlay_figures"] > 0
    assert cli.main([*argv, "--fail-on", "flagged"]) == Exit.CHECK_FAILED
    capsys.readouterr()
    capsys.readouterr()
    wide = [f"{f.name}=100" for f in F.OVERLAY_FIGURES]  # margins no overlay move exceeds: nothing flagged
    assert cli.main([*argv, *(a for m in wide for a in ("--margin", m)), "--fail-on", "flagged"]) == Exit.OK


def test_the_overlay_and_strata_margins_published_are_the_margins_used():
    """docs/review.md's tables of the overlay and strata figures are the code's."""
    text = (REPO / "docs" / "review.md").read_text(encoding="utf-8")
    rows = re.findall(r"(?m)^\| `((?:overlay|strata)_\w+)` \| [^|]*? \| (\w+) \| ([\d.]+) \| [^|]*? \|$", text)
    assert [(name, kind, float(margin)) for name, kind, margin in rows] == [
        (f.name, f.kind, f.margin) for f in (*F.OVERLAY_FIGURES, *F.STRATA_FIGURES)]
