"""The variant-overlay checks (seed 003 "验收标准"): each check
function fails on a hand-built bad overlay and passes on a good one (the
tables' load-time rules are strict, so a bad overlay cannot come from a
fixture table); a failing check reaches Dagster with its numbers; an illegal
batch withdraws the row's overlays; an edit of the variation table
re-places overlays without regenerating boards."""

from __future__ import annotations

import dataclasses

import dagster as dg
import numpy as np
import pytest

from boardgen_pipeline.board.geometry import Board
from boardgen_pipeline.board.solver import reveal_r0
from boardgen_pipeline.variants import batch as overlay_batch
from boardgen_pipeline.variants import checks as variant_checks
from boardgen_pipeline.variants import outcomes as overlay_row
from boardgen_pipeline.variants import skew
from boardgen_pipeline.variants.outcomes import Placed
from boardgen_pipeline.variants.placement import Overlay
from boardgen_pipeline.variants.skew import ResourceWeight, ResourceWeights
from boardgen_pipeline.warehouse import datasets

from .test_pipeline_support import (
    boards_partitions,
    checks_of,
    copy_fixture,
    defs_for,
    files_state,
    materialize_graph,
    materialized,
    meta,
    parquet_records,
    row_checks,
    run_request,
    run_rows,
    run_table,
    run_validate,
    settings_for,
)

# An 8x8 board, mines on column x = 6: R0 floods x = 0..5 from the centre, the
# safe cells outside R0 are column x = 7 (cells 7, 15, ..., 63).
W = 8
MINES = bytes(1 if c % W == 6 else 0 for c in range(W * W))
BOARD = Board(W, W, 3, MINES)
R0 = reveal_r0(MINES, W, W, 3)
GOOD = Overlay(
    width=W, height=W, level_index=1, board_type="dungeon", is_boss=False, is_elite=False,
    variant_type="bramble", scope="region", effect="flat_damage", effect_value=1, trigger="on_open",
    placement="closed_only", cells=(7, 15, 47, 55), packs=((7, 15), (47, 55)), target=4, shortfall=0,
    candidate_count=8, pack_min=2, pack_max=4, draws=7,
)


def placed(overlay=GOOD, board=BOARD, scope=101) -> Placed:
    r0 = reveal_r0(board.mines, board.width, board.height, board.spawn_side, frozenset(board.fog))
    return Placed(scope, board, r0, overlay, depth=0)


def bad(**changes) -> Placed:
    return placed(dataclasses.replace(GOOD, **changes))


def row(*boards: Placed) -> overlay_row.CheckedRow:
    """The boards as a checked row: their overlays through a table (what the
    warehouse holds), the boards as masks, R0 recomputed."""
    batch = overlay_batch.OverlayBatch.from_overlays([p.overlay for p in boards], board_scopes=[p.scope for p in boards],
                                                     node_depth=0)
    mines = np.array([np.frombuffer(p.board.mines, np.uint8) for p in boards])
    fog = np.zeros_like(mines)
    for i, p in enumerate(boards):
        fog[i, list(p.board.fog)] = 1
    return overlay_row.check_row(batch, mines, fog, width=W, height=W, spawn_side=3)


def test_the_hand_built_board_is_what_the_tests_assume():
    assert all(c % W <= 5 for c in R0) and len(R0) == 6 * W
    assert not set(GOOD.cells) & R0 and not any(MINES[c] for c in GOOD.cells)


def test_every_check_passes_on_a_good_overlay():
    outcomes = overlay_row.row_outcomes(row(placed(), placed(scope=102)), None, None)
    assert [o.name for o in outcomes] == list(overlay_row.CHECKS)
    assert all(o.passed for o in outcomes), [o.description for o in outcomes if not o.passed]
    dom = outcomes[0]
    assert dom.metadata["variant_cells"] == 8 and dom.metadata["boards_with_cells"] == 2
    # a passing check draws nothing; it names a board to rebuild instead
    assert "overlaid_board" not in dom.pictures
    assert dom.metadata["example_board"] == "boardgen generate --level 1 --depth 0 --seed 101 --variants"
    assert outcomes[1].metadata["pack_size_distribution"] == {"2": 4}


def test_a_failing_check_draws_its_first_offending_board():
    out = overlay_row.domain_outcome(row(placed(), dataclasses.replace(bad(cells=(6, 7), packs=((6, 7),), target=2),
                                                                       scope=7)))
    grid = out.pictures["overlaid_board"].split("```")[1].strip().splitlines()
    # column x = 6 is the mines; the bad pack (cells 6 and 7) sits on the first of them, drawn with its letter
    assert [line.split()[6] for line in grid] == ["B"] + ["*"] * 7
    assert [line.split()[7] for line in grid][0] == "B"


@pytest.mark.parametrize("cells, packs, rule", [
    ((6, 7), ((6, 7),), "variant_on_mine"),  # x = 6 is the mine column
    ((5, 7), ((5, 7),), "variant_in_r0"),  # x = 5 is inside R0
    ((7, 64), ((7, 64),), "variant_outside_board"),
])
def test_domain_check_fails_on_a_cell_it_forbids(cells, packs, rule):
    out = overlay_row.domain_outcome(row(placed(), dataclasses.replace(bad(cells=cells, packs=packs, target=2),
                                                                       scope=7)))
    assert not out.passed and out.severity == "error" and not out.blocking
    assert out.metadata["issues_by_rule"][rule] == 1
    assert out.metadata["failing_scopes"] == [7] and out.metadata["failing_scopes_total"] == 1
    assert "first offending board" in out.pictures["overlaid_board"] and "`7`" in out.pictures["overlaid_board"]
    if rule == "variant_outside_board":  # the pack rules cannot run on it either: reported, not a crash
        assert overlay_row.packs_outcome(row(placed(), dataclasses.replace(
            bad(cells=cells, packs=packs, target=2), scope=7))).metadata["issues_by_rule"] == {"pack_off_board": 1}


def test_domain_check_fails_on_a_fog_cell():
    fogged = Board(W, W, 3, MINES, fog=(23,))
    p = Placed(9, fogged, R0, dataclasses.replace(GOOD, cells=(15, 23), packs=((15, 23),), target=2))
    out = overlay_row.domain_outcome(row(p))
    assert not out.passed and out.metadata["issues_by_rule"] == {"variant_on_fog": 1}
    assert " f" in out.pictures["overlaid_board"] or "f " in out.pictures["overlaid_board"]


@pytest.mark.parametrize("changes, rule", [
    (dict(cells=(7, 23), packs=((7, 23),), target=2), "pack_disconnected"),
    (dict(cells=(7, 15, 23, 31, 39), packs=((7, 15, 23, 31, 39),), target=5), "pack_size"),
    (dict(cells=(7, 15, 23, 31), packs=((7, 15), (23, 31))), "packs_touch"),
    (dict(shortfall=1), "shortfall_mismatch"),
    (dict(target=3), "count_over_target"),
    (dict(cells=(7, 15, 47), packs=((7, 15), (47, 55))), "cells_not_union_of_packs"),
])
def test_packs_check_fails_on_a_bad_pack(changes, rule):
    out = overlay_row.packs_outcome(row(placed(), bad(**changes)))
    assert not out.passed and rule in out.metadata["issues_by_rule"]
    assert out.metadata["failing_scopes"] == [101]


@pytest.mark.parametrize("changes, rule", [
    (dict(global_variant="skewed_veins"), "more_than_one_type"),  # region type + whole-board type
    (dict(variant_type="skewed_veins", global_variant="skewed_veins", scope="global"), "global_with_cells"),
    (dict(variant_type=None), "cells_without_type"),
])
def test_one_type_check_fails_on_a_board_with_two_types_or_a_global_with_cells(changes, rule):
    out = overlay_row.one_type_outcome(row(bad(**changes)))
    assert not out.passed and rule in out.metadata["issues_by_rule"]


GLOBAL = dict(variant_type="skewed_veins", global_variant="skewed_veins", scope="global", effect="resource_face",
              effect_value=30, trigger="always", placement="any", cells=(), packs=(), target=0, draws=0)


@pytest.mark.parametrize("changes, rule", [
    # region overlay on a level-2 Boss whose global pool is not empty (the pool, not the level, decides)
    (dict(is_boss=True, level_index=2, global_pool=("skewed_veins",)), "boss_without_global"),
    (dict(is_boss=True, level_index=1, **GLOBAL), "level1_boss_global"),
    (dict(is_boss=False, level_index=2, **GLOBAL), "global_off_boss"),
])
def test_boss_check_fails_when_the_boss_rule_is_broken(changes, rule):
    out = overlay_row.boss_outcome(row(bad(**changes)), applies=True)
    assert not out.passed and rule in out.metadata["issues_by_rule"]
    assert overlay_row.boss_outcome(row(bad(**changes)), applies=False).passed  # table without a global type


def test_boss_check_passes_on_the_boss_rows_it_describes():
    out = overlay_row.boss_outcome(row(bad(is_boss=True, level_index=2, global_pool=("skewed_veins",), **GLOBAL)))
    assert out.passed and out.metadata["global_variants"] == {"skewed_veins": 1}
    assert out.metadata["expected"] == "the global type on every board, zero variant cells"
    assert overlay_row.boss_outcome(row(bad(is_boss=True, level_index=1))).passed  # level 1 Boss: immune


WEIGHTS = ResourceWeights((
    ResourceWeight("damage_up", "增伤", "offense", 40),
    ResourceWeight("heal", "回血", "survival", 30),
    ResourceWeight("gp", "GP", "whitelist", 7),
))


def test_skew_check_passes_on_a_sound_table_and_fails_on_a_pool_that_is_not_77():
    good = overlay_row.skew_outcome(WEIGHTS, [0, 30])
    assert good.passed and good.metadata["totals"] == {"0": 77, "30": 77}
    assert good.metadata["family_totals"]["30"] == {"offense": 49, "survival": 21, "whitelist": 7}
    short = ResourceWeights(WEIGHTS.rows[:2] + (ResourceWeight("gp", "GP", "whitelist", 6),))
    out = overlay_row.skew_outcome(short, [0, 30])
    assert not out.passed and out.metadata["issues_by_rule"] == {"skew_total": 2}
    assert overlay_row.skew_outcome(None, [0]).passed  # no resource table: not applicable


def test_skew_check_fails_when_the_skew_moves_the_whitelist_or_touches_the_off_state(monkeypatch):
    real = skew.skew_weights

    def leaky(weights, effect_value):
        out = real(weights, effect_value)
        rows = list(out.rows)
        rows[0] = dataclasses.replace(rows[0], weight=rows[0].weight - 1)  # offense pays the whitelist
        rows[2] = dataclasses.replace(rows[2], weight=rows[2].weight + 1)
        return ResourceWeights(tuple(rows), out.source)

    monkeypatch.setattr(variant_checks, "skew_weights", leaky)
    monkeypatch.setattr(overlay_row, "skew_weights", leaky)
    out = overlay_row.skew_outcome(WEIGHTS, [0, 30])
    assert not out.passed
    assert out.metadata["issues_by_rule"]["skew_whitelist_moved"] == 2
    assert out.metadata["issues_by_rule"]["skew_off_not_identical"] == 1
    assert out.metadata["off_state_identical"] is False


def test_skew_values_cover_the_off_state_and_every_resource_face_value():
    from boardgen_pipeline.catalog import load_catalog

    variation = load_catalog().variation
    assert overlay_row.skew_effect_values(variation, None) == [0, 30]
    assert overlay_row.skew_effect_values(variation, row(bad(is_boss=True, level_index=2,
                                                             **{**GLOBAL, "effect_value": 12})).batch) == [0, 12, 30]


# --- through Dagster ------------------------------------------------------------------------------


def test_a_failing_overlay_check_reaches_dagster_with_its_numbers(tmp_path, monkeypatch):
    real = overlay_batch.place_row

    def on_a_mine(mines, fog, **kw):
        placed = real(mines, fog, **kw)
        ov = placed.overlay(0)
        mine = int(np.flatnonzero(mines[0])[0])  # the first mine of the first board, row-major
        planted = dataclasses.replace(ov, cells=tuple(sorted((*ov.cells, mine))), packs=(*ov.packs, (mine,)))
        rest = [placed.overlay(i) for i in range(1, len(placed))]
        batch = overlay_batch.OverlayBatch.from_overlays([planted, *rest], board_scopes=placed.board_scope.tolist(),
                                                         node_depth=placed.node_depth)
        return batch

    # the placement's output, one cell moved onto a mine: the checks read what was written
    monkeypatch.setattr(overlay_batch, "place_row", on_a_mine)
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        assert run_validate(defs, instance).success
        result = run_rows(defs, instance, ["1-0"])
        table_run = run_table(defs, instance)
    assert result.success  # not blocking: the report is still written
    assert "calibration_report" in materialized(result)
    checks = row_checks(root, (1, 0))
    dom = checks[overlay_row.CHECK_DOMAIN]
    assert not dom["passed"] and dom["severity"] == "error" and dom["asset"] == "variant_overlays"
    records = parquet_records(datasets.partition_path(root, "variant_overlays", (1, 0)))
    assert dom["figures"]["issues_by_rule"] == {"variant_on_mine": 1}
    assert dom["figures"]["failing_scopes"] == [records[0]["board_scope"]]
    assert "first offending board" in dom["pictures"]["overlaid_board"]
    assert not checks[overlay_row.CHECK_PACKS]["passed"]  # a one-cell pack is below pack_min
    assert checks[overlay_row.CHECK_ONE_TYPE]["passed"] and checks[overlay_row.CHECK_SKEW]["passed"]
    # the table-wide check on the overlays: the row, its numbers and its drawing
    table_dom = checks_of(table_run)[overlay_row.CHECK_DOMAIN]
    assert not table_dom.passed and table_dom.asset_key == dg.AssetKey("variant_overlays")
    assert list(meta(table_dom)["failing"]) == ["1-0"]
    assert "first offending board" in meta(table_dom)["1-0 overlaid_board"]


def _set_cap(tables, value):
    path = tables / "board_gen.toml"
    text = path.read_text()
    start = text.index("node_depth = 1")
    end = text.index("[[rows]]", start)
    block = text[start:end].replace("r0_max_cap = 50", f"r0_max_cap = {value}")
    path.write_text(text[:start] + block + text[end:])


def test_an_illegal_batch_withdraws_the_rows_overlays(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    defs = defs_for(tables, root)
    path = datasets.partition_path(root, "variant_overlays", (1, 1))
    with dg.instance_for_test() as instance:
        assert run_validate(defs, instance).success
        assert run_rows(defs, instance, ["1-1"]).success and path.exists()
        _set_cap(tables, 9)  # R0 above 9 cells is illegal: every board of the row
        result = run_rows(defs, instance, ["1-1"])
    # withheld: no boards materialization, the run failed on the row's verdict (its partition reads as failed)
    assert not result.success and boards_partitions(result) == set()
    assert not row_checks(root, (1, 1))["a_prime_no_illegal_board"]["passed"]
    assert "variant_overlays" not in row_checks(root, (1, 1))  # nothing was placed on an illegal batch
    assert not path.exists()  # the overlays of the older row version went with its boards


def test_editing_the_variation_table_replaces_overlays_and_keeps_boards(tmp_path):
    from boardgen_dagster.automation import table_edit_sensor

    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    settings = settings_for(tables, root)
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        materialize_graph(defs, instance)
        before = files_state(root)

        def cells(key):
            path = datasets.partition_path(root, "variant_overlays", key)
            return sum(r["cell_count"] for r in parquet_records(path))

        cells_before = cells((1, 0))
        text = (tables / "variation.toml").read_text()
        (tables / "variation.toml").write_text(text.replace("percent_of_cells = 8 ", "percent_of_cells = 20 "))
        with dg.build_sensor_context(instance=instance, definitions=defs, resources={"settings": settings}) as context:
            result = table_edit_sensor(context)
        requests = list(result.run_requests)
        assert len(requests) == 1  # one run per edit
        (r,) = requests
        assert r.tags["boardgen/reason"] == "overlays changed: 1-0 1-1 2-0"
        # no report reads the overlays: they and their checks alone, every stale row's
        assert [k.to_user_string() for k in r.asset_selection] == ["table_files", "validated_rows", "variant_overlays"]
        assert {k.asset_key.to_user_string() for k in r.asset_check_keys} == {"variant_overlays"}
        run = run_request(defs, instance, r)
        assert run.success
        assert materialized(run) == {"validated_rows", "variant_overlays"}
        (overlays,) = [e for e in run.get_asset_materialization_events() if e.asset_key.path == ["variant_overlays"]]
        assert meta(overlays.materialization)["rows_made"] == 3
        assert all(c.passed for c in checks_of(run).values()) and len(checks_of(run)) == len(overlay_row.CHECKS)
        after = files_state(root)
        for key in ("1-0", "1-1", "2-0"):
            level, depth = key.split("-")
            boards = f"boards/level_index={level}/node_depth={depth}/part.parquet"
            assert after[boards] == before[boards]  # boards untouched, bytes and mtime
        assert cells((1, 0)) > cells_before and cells((2, 0)) == 0  # more cells on battle rows, none on a Boss row
        with dg.build_sensor_context(instance=instance, definitions=defs, cursor=result.cursor,
                                     resources={"settings": settings}) as context:
            again = table_edit_sensor(context)
        assert not getattr(again, "run_requests", None)
