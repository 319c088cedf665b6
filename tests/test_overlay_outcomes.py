"""The overlay skew check and the not-applicable overlay outcomes as plain
values (asked by the mutation run of
``variants/outcomes.py``: docs/testing.md; seed 003 "off 态零扰动", "正向池合计恒
77"; SPEC 9 "overlay checks"): the verdict, description, metadata and
picture compared with figures worked out here from the default resource
weights (tables/resource_weights.toml), and the check seen failing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from boardgen_pipeline.variants import outcomes
from boardgen_pipeline.variants.batch import OverlayBatch
from boardgen_pipeline.variants.outcomes import CHECK_SKEW, CHECKS, not_applicable_outcomes, skew_outcome
from boardgen_pipeline.variants.placement import Overlay
from boardgen_pipeline.variants.skew import load_resource_weights
from boardgen_pipeline.variants.table import load_variation_table

TABLES = Path(__file__).resolve().parents[1] / "tables"
DEFAULT = load_resource_weights(TABLES / "resource_weights.toml")
VARIATION = load_variation_table(TABLES / "variation.toml")  # declares a global type: the Boss rule applies

# An 8 x 8 board, mines on column x = 6 (R0 floods x = 0..5 from the centre); a region overlay on
# column x = 7 (tests/test_overlay_batch.py's GOOD), and a level-2 Boss with its whole-board type.
W = 8
MINES = np.array([1 if c % W == 6 else 0 for c in range(W * W)], np.uint8)
REGION = Overlay(
    width=W, height=W, level_index=1, board_type="dungeon", is_boss=False, is_elite=False,
    variant_type="bramble", scope="region", effect="flat_damage", effect_value=1, trigger="on_open",
    placement="closed_only", cells=(7, 15, 47, 55), packs=((7, 15), (47, 55)), target=4, shortfall=0,
    candidate_count=8, pack_min=2, pack_max=4, draws=7,
)
BOSS = dataclasses.replace(
    REGION, is_boss=True, level_index=2, board_type="underdark", variant_type="veins", global_variant="veins",
    scope="global", effect="resource_face", effect_value=30, trigger="always", placement="any", cells=(), packs=(),
    target=0, candidate_count=0, draws=0, global_pool=("veins",))


def row_outcomes_of(overlay: Overlay, fog=(), variation=None, weights=None):
    """The overlay checks of a row of two boards carrying ``overlay``, fog on ``fog``."""
    batch = OverlayBatch.from_overlays([overlay, overlay], board_scopes=[101, 102], node_depth=0)
    mines = MINES[None].repeat(2, axis=0)
    fogs = np.zeros_like(mines)
    fogs[:, list(fog)] = 1
    return outcomes.overlay_outcomes(batch, mines, fogs, width=W, height=W, spawn_side=3, variation=variation,
                                     weights=weights)


def test_the_skew_check_does_not_apply_without_a_weight_table():
    o = skew_outcome(None, [0, 30])
    assert (o.name, o.assertion, o.passed, o.severity, o.blocking) == (CHECK_SKEW, "skew invariants", True, "error",
                                                                       False)
    assert o.description == "not applicable: no resource weight table"
    assert o.metadata == {"applicable": False} and o.pictures == {}


def test_the_skew_check_holds_on_the_default_weights():
    # Default weights: offense 12+10+9+8 = 39, survival 13+10 = 23, whitelist 6+5+4 = 15; total 77.
    # At 30 % (tests/test_variants_skew.py's golden): offense 14+12+11+9 = 46, survival 9+7 = 16,
    # whitelist unchanged at 15; total 77 again.
    o = skew_outcome(DEFAULT, [0, 30])
    assert (o.name, o.passed, o.severity, o.blocking) == (CHECK_SKEW, True, "error", False)
    assert o.description == ("total 77 at effect values [0, 30]; 0 is the unskewed table itself; "
                             "whitelist unchanged")
    assert o.metadata == {
        "applicable": True, "effect_values": [0, 30], "pool_total": 77,
        "totals": {"0": 77, "30": 77},
        "family_totals": {"0": {"offense": 39, "survival": 23, "whitelist": 15},
                          "30": {"offense": 46, "survival": 16, "whitelist": 15}},
        "off_state_identical": True, "issues": 0, "issues_by_rule": {}, "first_issues": [],
    }
    assert o.pictures == {}  # one weight table for every row: drawn only when it fails


def test_the_skew_check_without_the_off_state_does_not_judge_it():
    o = skew_outcome(DEFAULT, [30])
    assert o.passed and o.metadata["off_state_identical"] is None and list(o.metadata["totals"]) == ["30"]


def test_the_skew_check_fails_on_an_effect_value_outside_its_domain():
    # an overlay read back from the warehouse with effect value 101: the skew is undefined there,
    # and the check says so instead of raising
    o = skew_outcome(DEFAULT, [0, 30, 101])
    message = "effect_value must be an integer percent in [0, 100], got 101"
    assert (o.name, o.passed, o.severity, o.blocking) == (CHECK_SKEW, False, "error", False)
    assert o.description == f"1 skew issues: {message}"
    assert o.metadata["issues"] == 1 and o.metadata["issues_by_rule"] == {"skew_error": 1}
    assert o.metadata["first_issues"] == [f"effect 101: skew_error: {message}"]
    assert o.metadata["totals"] == {"0": 77, "30": 77} and "101" not in o.metadata["family_totals"]
    assert o.pictures == {"weights": "\n".join([
        "| resource | family | skew 0% | skew 30% | skew 101% |",
        "|---|---|---|---|---|",
        "| damage_up | offense | 12 | 14 | - |",
        "| burst | offense | 10 | 12 | - |",
        "| pierce | offense | 9 | 11 | - |",
        "| arcane | offense | 8 | 9 | - |",
        "| heal | survival | 13 | 9 | - |",
        "| armor | survival | 10 | 7 | - |",
        "| weaken | whitelist | 6 | 6 | - |",
        "| gp | whitelist | 5 | 5 | - |",
        "| action_points | whitelist | 4 | 4 | - |",
        "| **total** | | 77 | 77 | - |",
    ])}


def test_an_effect_value_outside_its_domain_leaves_the_others_judged():
    # the refused value first: the values after it are still skewed and their issues kept
    o = skew_outcome(DEFAULT, [101, 0, 30])
    assert o.metadata["issues_by_rule"] == {"skew_error": 1} and not o.passed
    assert o.metadata["totals"] == {"0": 77, "30": 77}


def test_every_overlay_check_passes_as_not_applicable_with_its_reason():
    got = not_applicable_outcomes("no variation.toml")
    assert [o.name for o in got] == list(CHECKS) == [outcomes.CHECK_DOMAIN, outcomes.CHECK_PACKS,
                                                     outcomes.CHECK_ONE_TYPE, outcomes.CHECK_BOSS, CHECK_SKEW]
    for o in got:
        assert (o.assertion, o.passed, o.severity, o.blocking) == ("overlay", True, "error", False)
        assert o.description == "not applicable: no variation.toml"
        assert o.metadata == {"applicable": False, "boards": 0} and o.pictures == {}


def test_the_domain_check_sees_the_rows_fog():
    clear = row_outcomes_of(REGION, fog=(23,))[0]  # fog beside the packs, not under them
    assert clear.passed
    domain = row_outcomes_of(dataclasses.replace(REGION, cells=(15, 23, 47, 55), packs=((15, 23), (47, 55))),
                             fog=(23,))[0]
    assert (domain.name, domain.passed) == (outcomes.CHECK_DOMAIN, False)
    assert domain.metadata["issues_by_rule"] == {"variant_on_fog": 2}
    assert domain.metadata["first_issues"] == ["101: variant_on_fog: 1 variant cells on fog cells",
                                               "102: variant_on_fog: 1 variant cells on fog cells"]


def test_without_a_variation_table_the_boss_rule_does_not_apply_and_the_skew_reads_the_overlays():
    got = row_outcomes_of(BOSS, weights=DEFAULT)
    boss, skew = got[3], got[4]
    assert boss.passed and boss.description == "not applicable: the variation table declares no global type"
    assert boss.metadata["applicable"] is False
    # no table to declare it: the effect value 30 comes from the overlays themselves
    assert skew.passed and skew.metadata["effect_values"] == [0, 30]


def test_the_boss_check_on_a_boss_row_carrying_its_global_type():
    boss = row_outcomes_of(BOSS, variation=VARIATION)[3]
    assert (boss.name, boss.assertion, boss.passed, boss.severity, boss.blocking) == (
        outcomes.CHECK_BOSS, "Boss whole-board rule", True, "error", False)
    assert boss.description == "Boss row, level 2: the global type on every board, zero variant cells"
    assert boss.metadata == {
        "boards": 2, "level_index": 2, "board_type": "underdark", "is_boss": True, "applicable": True,
        "expected": "the global type on every board, zero variant cells", "global_variants": {"veins": 2},
        "boards_with_cells": 0, "global_fallback_boards": 0, "issues": 0, "issues_by_rule": {},
        "failing_scopes": [], "failing_scopes_total": 0, "first_issues": [],
        "example_board": "boardgen generate --level 2 --depth 0 --seed 101 --variants",
    }
    assert boss.pictures == {}


def test_the_boss_check_fails_a_global_type_drawn_from_an_empty_pool():
    boss = row_outcomes_of(dataclasses.replace(BOSS, global_pool=()), variation=VARIATION)[3]
    message = "level 2 Boss carries veins but its global pool is empty (region fallback expected)"
    assert not boss.passed and boss.description == f"2 of 2 boards break the Boss rule: {message}"
    assert boss.metadata["issues_by_rule"] == {"boss_global_from_empty_pool": 2}
    assert boss.metadata["failing_scopes"] == [101, 102] and "example_board" not in boss.metadata
    assert boss.pictures["overlaid_board"].startswith("**first offending board**: board scope `101`")


def test_the_boss_check_names_what_each_row_expects():
    region = row_outcomes_of(REGION, variation=VARIATION)[3]
    assert region.passed and region.description == "non-Boss row, level 1: no whole-board variant (not a Boss row)"
    assert region.metadata["global_variants"] == {} and region.metadata["boards_with_cells"] == 2
    first_boss = row_outcomes_of(dataclasses.replace(REGION, is_boss=True, global_fallback=True),
                                 variation=VARIATION)[3]
    assert first_boss.passed
    assert first_boss.description == "Boss row, level 1: no whole-board variant (level 1 Boss is immune)"
    assert first_boss.metadata["global_fallback_boards"] == 2


def test_each_overlay_check_is_an_error_that_never_blocks():
    got = row_outcomes_of(REGION, variation=VARIATION, weights=DEFAULT)
    assert [(o.name, o.assertion, o.severity, o.blocking, o.passed) for o in got] == [
        (outcomes.CHECK_DOMAIN, "overlay domain", "error", False, True),
        (outcomes.CHECK_PACKS, "overlay packs", "error", False, True),
        (outcomes.CHECK_ONE_TYPE, "one type per board", "error", False, True),
        (outcomes.CHECK_BOSS, "Boss whole-board rule", "error", False, True),
        (CHECK_SKEW, "skew invariants", "error", False, True),
    ]
    packs = got[1]
    assert {k: packs.metadata[k] for k in ("pack_min", "pack_max", "target_cells", "placed_cells",
                                           "shortfall_cells", "boards_with_shortfall")} == {
        "pack_min": 2, "pack_max": 4, "target_cells": 8, "placed_cells": 8, "shortfall_cells": 0,
        "boards_with_shortfall": 0}
    one = got[2]
    assert {k: one.metadata[k] for k in ("whole_board_boards", "region_boards", "boards_without_type")} == {
        "whole_board_boards": 0, "region_boards": 2, "boards_without_type": 0}


def test_the_packs_check_fails_a_pack_out_of_range():
    short = dataclasses.replace(REGION, cells=(7, 15, 47), packs=((7, 15), (47,)), shortfall=1)
    packs = row_outcomes_of(short)[1]
    assert (packs.name, packs.passed) == (outcomes.CHECK_PACKS, False)
    assert packs.description == "2 pack issues on 2 boards"
    assert packs.metadata["issues_by_rule"] == {"pack_size": 2}
    assert packs.metadata["first_issues"][0] == "101: pack_size: pack of 1 cells outside [2, 4]"
    assert packs.metadata["shortfall_cells"] == 2 and packs.metadata["boards_with_shortfall"] == 2
    assert packs.pictures["overlaid_board"].startswith("**first offending board**: board scope `101`")


def test_the_one_type_check_fails_a_board_with_two_types():
    two = dataclasses.replace(REGION, global_variant="veins")
    one = row_outcomes_of(two)[2]
    assert (one.name, one.passed) == (outcomes.CHECK_ONE_TYPE, False)
    assert one.description == "2 boards break the one-type rule"  # boards, not the 6 issues on them
    assert one.metadata["issues_by_rule"] == {"global_consumed_draws": 2, "global_with_cells": 2,
                                              "more_than_one_type": 2}
    assert one.metadata["whole_board_boards"] == 2 and one.metadata["failing_scopes"] == [101, 102]
    assert one.pictures == {"types": "| variant type | scope | boards |\n|---|---|---|\n| bramble | region | 2 |"}

