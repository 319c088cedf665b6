"""The Boss overlay check follows seed 003 on any legal variation table
(not only the default one): the whole-board type on a Boss board exactly when that level's
global pool is non-empty, region fallback otherwise. Two legal tables that
differ from the default only in when the global row unlocks: level 3 (a
level-2 Boss falls back to region placement) and level 1 (the level-1 Boss
carries it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from boardgen_pipeline.board.geometry import Board, parse_layout
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.board.solver import reveal_r0
from boardgen_pipeline.variants.checks import check_boss_rule, check_overlay
from boardgen_pipeline.variants.placement import place_overlay
from boardgen_pipeline.variants.table import load_variation_table

TABLES = Path(__file__).resolve().parent.parent / "tables"
DEFAULT_TEXT = (TABLES / "variation.toml").read_text(encoding="utf-8")
GLOBAL_UNLOCK = 'id = "skewed_veins"\nname = "贫矿脉"\nunlock_level = 2\n'
LEVELS = [(1, "dungeon"), (2, "underdark"), (3, "deep_underdark")]
LAYOUT = ("..*.....*...../.....*......*./*.........*.../...*........../..........*..*/.*..........*./"
          ".........*..../*...*.....*.../.........*..../..*.........../.......*..*..*/*...*.........")


def table_unlocking_global_at(level: int, tmp_path: Path):
    assert GLOBAL_UNLOCK in DEFAULT_TEXT
    path = tmp_path / f"variation_global_{level}.toml"
    path.write_text(DEFAULT_TEXT.replace(GLOBAL_UNLOCK, GLOBAL_UNLOCK.replace("= 2", f"= {level}")), encoding="utf-8")
    return load_variation_table(path)  # legal: it loads


def boss_overlay(table, level: int, board_type: str, scope: int, boss: bool = True):
    w, h, mines, _ = parse_layout(LAYOUT)
    board = Board(w, h, 3, mines)
    r0 = reveal_r0(mines, w, h, 3)
    o = place_overlay(board, r0, level_index=level, is_boss=boss, board_type=board_type, table=table,
                      stream=derive_at("variant_place", scope))
    return board, r0, o


@pytest.mark.parametrize("unlock", [3, 1])
def test_the_boss_check_holds_on_both_fallback_tables(tmp_path, unlock):
    table = table_unlocking_global_at(unlock, tmp_path)
    for level, board_type in LEVELS:
        for scope in range(5):
            for boss in (True, False):
                board, r0, o = boss_overlay(table, level, board_type, scope, boss)
                expect_global = boss and level >= unlock
                assert (o.global_variant == "skewed_veins") == expect_global, (level, boss)
                if boss and not expect_global:
                    assert o.global_fallback and o.scope == "region" and o.cells  # region fallback
                # from the recorded pool, and from the table's own gate
                assert check_boss_rule(o) == []
                assert check_boss_rule(o, table) == []
                assert check_overlay(board, r0, o, table=table)["boss_rule"] == []


def test_a_level_2_boss_falling_back_is_legal_when_global_unlocks_at_3(tmp_path):
    # the check once hard-coded the default table and reported this board as "boss_without_global"
    table = table_unlocking_global_at(3, tmp_path)
    _, _, o = boss_overlay(table, 2, "underdark", 0)
    assert o.global_variant is None and o.global_pool == () and o.variant_type in ("magma", "ember_veil")
    assert check_boss_rule(o, table) == []


def test_a_level_1_boss_with_the_global_type_is_legal_when_it_unlocks_at_1(tmp_path):
    # the check once hard-coded the default table and reported this board as "level1_boss_global"
    table = table_unlocking_global_at(1, tmp_path)
    _, _, o = boss_overlay(table, 1, "dungeon", 0)
    assert o.global_variant == "skewed_veins" and o.cells == ()
    assert check_boss_rule(o, table) == []


def test_the_check_still_fails_a_board_that_breaks_the_rule_for_its_table(tmp_path):
    late = table_unlocking_global_at(3, tmp_path)
    early = table_unlocking_global_at(1, tmp_path)
    default = load_variation_table(TABLES / "variation.toml")
    # the level-2 Boss fallback of the "unlock at 3" table, judged by the default table: wrong
    _, _, fallback = boss_overlay(late, 2, "underdark", 0)
    rules = [i.rule for i in check_boss_rule(fallback, default)]
    assert rules == ["global_pool_mismatch", "boss_without_global", "boss_with_cells"]
    # the level-1 global Boss of the "unlock at 1" table, judged by the default table: wrong
    _, _, global_l1 = boss_overlay(early, 1, "dungeon", 0)
    assert [i.rule for i in check_boss_rule(global_l1, default)] == ["global_pool_mismatch", "level1_boss_global"]
    # a level-3 Boss of the "unlock at 3" table that lost its global type
    import dataclasses

    _, _, l3 = boss_overlay(late, 3, "deep_underdark", 0)
    stripped = dataclasses.replace(l3, global_variant=None, variant_type=None, scope=None)
    assert [i.rule for i in check_boss_rule(stripped, late)] == ["boss_without_global"]
    wrong = dataclasses.replace(l3, global_variant="magma")
    assert [i.rule for i in check_boss_rule(wrong)] == ["boss_wrong_global"]
