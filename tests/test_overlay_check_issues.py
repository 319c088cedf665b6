"""Each readable overlay rule's issue, whole: its rule, its message and the
cells it names (seed 003 "验收标准"; SPEC 9 "overlay checks"; asked
by the mutation run of ``variants/checks.py``: docs/testing.md). The
metadata of the overlay checks and their drawings carry these; a rule that
fires with the wrong cells or no message misleads the designer who reads it.

The overlays are written by hand on a 4x3 board (cells 0..11, row-major),
mines on cells 0 and 5:

    y0  * . . .
    y1  . * . .
    y2  . . . .
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from boardgen_pipeline.board.geometry import Board
from boardgen_pipeline.variants import checks
from boardgen_pipeline.variants.checks import (
    CheckIssue,
    check_boss_rule,
    check_domain,
    check_one_type,
    check_overlay,
    check_packs,
    check_skew,
)
from boardgen_pipeline.variants.placement import Overlay
from boardgen_pipeline.variants.skew import ResourceWeight, ResourceWeights
from boardgen_pipeline.variants.table import load_variation_table

BOARD = Board(4, 3, 3, bytes([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]))
DEFAULT = load_variation_table(Path(__file__).resolve().parent.parent / "tables" / "variation.toml")


def overlay(**fields) -> Overlay:
    return replace(Overlay(4, 3, 2, "underdark", False, False), **fields)


def issues(found: list[CheckIssue]) -> list[tuple]:
    return [(i.rule, i.message, i.cells) for i in found]


# ---------------------------------------------------------------- domain


def test_domain_names_the_cells_off_the_board_on_a_mine_and_in_r0():
    # -1 and 12 are off the board; 0 (the first cell, on the board) and 5 are mines; 6 is in R0
    o = overlay(cells=(-1, 0, 5, 6, 7, 12))
    assert issues(check_domain(BOARD, {6, 10}, o)) == [
        ("variant_outside_board", "2 variant cells off the board", (-1, 12)),
        ("variant_on_mine", "2 variant cells are mines", (0, 5)),
        ("variant_in_r0", "1 variant cells inside R0", (6,)),
    ]
    assert check_domain(BOARD, {10}, overlay(cells=(6, 7))) == []


def test_domain_refuses_an_overlay_of_another_size_and_says_both():
    assert issues(check_domain(BOARD, set(), replace(overlay(cells=(0,)), width=5))) == [
        ("board_mismatch", "overlay is 5x3, board 4x3", ()),
    ]


# ---------------------------------------------------------------- packs


def test_packs_name_an_overlap_and_cells_that_are_not_their_union():
    o = overlay(cells=(2, 3, 7), packs=((2, 3), (3, 7)), pack_min=1, pack_max=4, target=3)
    assert issues(check_packs(o)) == [("pack_overlap", "1 cells in more than one pack", (3,))]
    o = overlay(cells=(2, 3, 11), packs=((2, 3),), pack_min=1, pack_max=4, target=3, shortfall=0)
    assert issues(check_packs(o)) == [("cells_not_union_of_packs", "cells differ from the union of the packs", ()),
                                      ("packs_touch", "packs touch and form a larger connected piece", (11,))]


def test_packs_name_a_disconnected_pack_and_a_pack_out_of_range():
    # 2 and 10 are two rows apart: not 8-connected
    o = overlay(cells=(2, 10), packs=((2, 10),), pack_min=3, pack_max=4, target=2)
    assert issues(check_packs(o)) == [
        ("pack_disconnected", "pack of 2 cells is not 8-connected", (2, 10)),
        ("pack_size", "pack of 2 cells outside [3, 4]", (2, 10)),
        ("packs_touch", "packs touch and form a larger connected piece", (2, 10)),
    ]


def test_packs_that_touch_are_named_by_the_piece_they_form():
    o = overlay(cells=(2, 3, 6, 7), packs=((2, 3), (6, 7)), pack_min=1, pack_max=4, target=4)
    assert issues(check_packs(o)) == [("packs_touch", "packs touch and form a larger connected piece", (2, 3, 6, 7))]
    apart = overlay(cells=(2, 3, 10, 11), packs=((2, 3), (10, 11)), pack_min=1, pack_max=4, target=4)
    assert check_packs(apart) == []


def test_packs_count_and_shortfall():
    o = overlay(cells=(2, 3), packs=((2, 3),), pack_min=1, pack_max=4, target=1, shortfall=0)
    assert issues(check_packs(o)) == [("count_over_target", "2 cells placed, target 1", ()),
                                      ("shortfall_mismatch", "shortfall 0 != target 1 - placed 2", ())]


# ---------------------------------------------------------------- one type


def test_a_whole_board_variant_with_another_type_cells_and_draws():
    o = overlay(global_variant="skewed_veins", variant_type="rich_veins", cells=(2, 3), packs=((2, 3),), draws=4)
    assert issues(check_one_type(o)) == [
        ("more_than_one_type", "whole-board skewed_veins and region rich_veins", ()),
        ("global_with_cells", "whole-board variant with 2 cells", (2, 3)),
        ("global_consumed_draws", "global pick took 4 stream draws", ()),
    ]


def test_cells_without_a_type():
    assert issues(check_one_type(overlay(cells=(2,), packs=((2,),)))) == [
        ("cells_without_type", "variant cells without a variant type", (2,)),
    ]


# ---------------------------------------------------------------- Boss rule


def test_boss_rule_messages_name_the_board_and_the_pool():
    boss = overlay(is_boss=True, level_index=3, global_pool=("skewed_veins",))
    assert issues(check_boss_rule(boss)) == [
        ("boss_without_global", "level 3 Boss has no whole-board variant; its global pool is ['skewed_veins']", ()),
    ]
    elite = replace(boss, is_boss=False, is_elite=True, global_variant="other", variant_type="other",
                    cells=(2,), packs=((2,),))
    assert issues(check_boss_rule(elite)) == [
        ("boss_wrong_global", "level 3 elite carries other, not the pool's first row skewed_veins", ()),
        ("boss_with_cells", "Boss board carries 1 variant cells", (2,)),
    ]
    off = overlay(global_variant="skewed_veins", variant_type="skewed_veins")
    assert issues(check_boss_rule(off)) == [("global_off_boss", "whole-board skewed_veins on a non-Boss board", ())]


def test_boss_rule_on_an_empty_pool_names_the_level_one_case_apart():
    for level, rule in ((1, "level1_boss_global"), (4, "boss_global_from_empty_pool")):
        o = overlay(is_boss=True, level_index=level, global_variant="skewed_veins", variant_type="skewed_veins")
        assert issues(check_boss_rule(o)) == [
            (rule, f"level {level} Boss carries skewed_veins but its global pool is empty (region fallback expected)",
             ()),
        ]


def test_boss_rule_recomputes_an_elite_boards_pool_from_the_table():
    # the default table unlocks its global type (skewed_veins) at level 2; an elite board takes it too
    elite = overlay(is_elite=True, level_index=2, global_pool=("skewed_veins",), global_variant="skewed_veins",
                    variant_type="skewed_veins")
    assert check_boss_rule(elite, DEFAULT) == []
    wrong = replace(elite, global_pool=())
    assert issues(check_boss_rule(wrong, DEFAULT)) == [
        ("global_pool_mismatch", "overlay records global pool [], the table's gate gives ['skewed_veins']", ()),
    ]
    # check_overlay hands the table on: the recorded pool alone would not see the mismatch
    assert check_boss_rule(wrong) != check_boss_rule(wrong, DEFAULT)
    assert check_overlay(BOARD, set(), wrong, table=DEFAULT)["boss_rule"] == check_boss_rule(wrong, DEFAULT)


def test_an_issue_as_a_metadata_entry():
    assert CheckIssue("pack_size", "pack of 2 cells outside [3, 4]", (2, 10)).as_dict() == {
        "rule": "pack_size", "message": "pack of 2 cells outside [3, 4]", "cells": [2, 10]}


# ---------------------------------------------------------------- skew invariants


def weights(*rows) -> ResourceWeights:
    return ResourceWeights(tuple(ResourceWeight(i, i, f, w) for i, f, w in rows))


POOL = weights(("a", "offense", 40), ("s", "survival", 20), ("x", "whitelist", 17))  # 77


def skewing_to(monkeypatch, result: ResourceWeights) -> None:
    """The skew (``skew_weights``) broken to give ``result``: the check is the last gate behind it."""
    monkeypatch.setattr(checks, "skew_weights", lambda w, v: result)


def test_the_skew_check_holds_the_real_skew():
    assert check_skew(POOL, 0) == [] and check_skew(POOL, 50) == []


def test_the_skew_check_names_each_row_that_moves_the_wrong_way(monkeypatch):
    skewing_to(monkeypatch, weights(("a", "offense", 39), ("s", "survival", 21), ("x", "whitelist", 18)))
    assert issues(check_skew(POOL, 30)) == [
        ("skew_total", "skewed pool totals 78, not 77", ()),
        ("skew_offense_fell", "a: 40 -> 39", ("a",)),
        ("skew_survival_rose", "s: 20 -> 21", ("s",)),
        ("skew_whitelist_moved", "x: 17 -> 18", ("x",)),
    ]


def test_the_skew_check_names_rows_that_change_or_vanish(monkeypatch):
    skewing_to(monkeypatch, weights(("b", "offense", 40), ("s", "whitelist", 20)))
    assert issues(check_skew(POOL, 30)) == [
        ("skew_total", "skewed pool totals 60, not 77", ()),
        ("skew_rows_changed", "row a became b", ("a",)),
        ("skew_rows_changed", "row s became s", ("s",)),
        ("skew_rows_changed", "row count changed", ()),
    ]


def test_the_skew_check_holds_the_off_state_to_the_table_itself(monkeypatch):
    skewing_to(monkeypatch, weights(("a", "offense", 41), ("s", "survival", 19), ("x", "whitelist", 17)))
    # offense rose and survival fell, as a skew may: only the off state is broken
    assert issues(check_skew(POOL, 0)) == [("skew_off_not_identical", "effect_value 0 changed the weights", ())]

