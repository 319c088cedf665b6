"""Seed 003 "验收标准" (acceptance criteria), one test per line, named after it.

The six lines of the seed, in order:
1. 候选池空合法 (an empty pool is legal and silent)
2. 零特判（负验收） (zero special cases)
3. 数据生命周期 (data lifecycle)
4. 布置域 (placement domain)
5. 配套义务闭环（已作废） (counter obligation: void; counter_items stay empty)
6. 全局作用域型 (global scope), one test per clause:
   替换制生效 / 普通图 region 路径逐位不变 / off 态零扰动 / L1 Boss 零全局变异 /
   Boss 图全局池空回落 region / 全局取用零取号 / 资源面偏斜正向池合计恒 77
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from boardgen_pipeline.board.geometry import Board, parse_layout
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.board.solver import reveal_r0
from boardgen_pipeline.variants.checks import check_boss_rule, check_overlay, check_skew, count_issues
from boardgen_pipeline.variants.placement import place_overlay
from boardgen_pipeline.variants.skew import POOL_TOTAL, load_resource_weights, skew_weights, weights_for_overlay
from boardgen_pipeline.variants.table import VariationTable, load_variation_table

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "variants"
DEFAULT = load_variation_table(ROOT / "tables" / "variation.toml")
WEIGHTS = load_resource_weights(ROOT / "tables" / "resource_weights.toml")

LAYOUTS = [
    # 14 x 12, R0 45 cells
    "..*.....*...../.....*......*./*.........*.../...*........../..........*..*/.*..........*./"
    ".........*..../*...*.....*.../.........*..../..*.........../.......*..*..*/*...*.........",
    # 10 x 10, dense
    "*..*....*./...*..*..*/.*......../........*./*.......*./..*......./......*..*/.*..*...../"
    "....*..*../*.*......*",
    # 12 x 9, two one-cell pockets walled in by mines (top and bottom right)
    "....*...*.*./..*.......**/*.......*.../...*......../..........*./.*......*.../......*....*/"
    "*.........**/.*..*.....*.",
]
LEVELS = [(1, "dungeon"), (2, "underdark"), (3, "deep_underdark")]


def board_of(layout: str) -> tuple[Board, frozenset[int]]:
    w, h, mines, _ = parse_layout(layout)
    board = Board(w, h, 3, mines)
    return board, reveal_r0(board.mines, w, h, 3)


def place(board, r0, scope, *, level, board_type, boss=False, table=DEFAULT, stream=None):
    return place_overlay(
        board, r0, level_index=level, is_boss=boss, board_type=board_type, table=table,
        stream=stream or derive_at("variant_place", scope),
    )


def without_global_rows(table: VariationTable) -> VariationTable:
    return replace(table, types=tuple(t for t in table.types if t.scope != "global"))


# 1 ---------------------------------------------------------------------


def test_ac1_empty_candidate_pool_is_legal_silent_zero_placement(caplog):
    """候选池空合法：门控筛空（池空或候选域碎片化不足）时静默零布置，配置加载零错误、零警告。"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        caplog.set_level(logging.DEBUG)
        empty_table = load_variation_table(FIX / "ok_empty.toml")  # zero rows: loads
        board, r0 = board_of(LAYOUTS[0])
        # (a) the gate empties the pool: level 1 has no underdark type; an
        # empty table has no type at all.
        for o in (
            place(board, r0, 5, level=1, board_type="underdark"),
            place(board, r0, 5, level=1, board_type="underdark", boss=True),
            place(board, r0, 5, level=3, board_type="deep_underdark", table=empty_table),
        ):
            assert (o.variant_type, o.global_variant, o.cells, o.packs, o.shortfall) == (None, None, (), (), 0)
            assert o.draws == 0
        # (b) the candidate domain is too fragmented for pack_min: every
        # candidate is a lone cell, so nothing is placed and the shortfall is
        # reported, without an exception.
        # R0 floods the six open rows; below a wall of mines, four lone safe
        # cells are the only candidates. Level 3 dungeon: target 0 + 2 bonus.
        fragmented, r0f = board_of("/".join(["." * 9] * 6 + ["*" * 9, "*.*.*.*.*", "*" * 9]))
        o = place(fragmented, r0f, 1, level=3, board_type="dungeon")
        assert o.candidate_count == 4 and o.target == 2
        assert o.candidate_count > 0 and o.target > 0
        assert o.cells == () and o.shortfall == o.target
    assert caplog.records == []


# 2 ---------------------------------------------------------------------


def _code_words(path: Path) -> set[str]:
    """String literals (docstrings excluded) and identifiers of a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    words = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.add(node.value)
        elif isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
    return words


def test_ac2_zero_special_cases_no_code_branches_on_a_type():
    """零特判（负验收）：不存在任何按变异类型分支的代码；读取方按 effect/trigger/placement 枚举路由。"""
    names = {t.id for t in DEFAULT.types} | {t.name for t in DEFAULT.types}
    modules = sorted((ROOT / "boardgen_pipeline").glob("**/*.py")) + sorted((ROOT / "assets").glob("**/*.py"))
    assert ROOT / "boardgen_pipeline" / "variants" / "placement.py" in modules
    offenders = {}
    for path in modules:
        hits = {w for w in _code_words(path) for n in names if n in w}
        if hits:
            offenders[str(path.relative_to(ROOT))] = sorted(hits)
    assert offenders == {}


def test_ac2_zero_special_cases_an_eighth_type_row_is_placed_without_code_change():
    """零特判：向清单加入一行类型即应生效、不需要改动代码。"""
    table = load_variation_table(FIX / "eight_types.toml")
    assert len(table.types) == 8 and table.types[-1].id == "quicksand"
    board, r0 = board_of(LAYOUTS[0])
    # Level 1 deep_underdark: only the new row passes the gate.
    o = place(board, r0, 11, level=1, board_type="deep_underdark", table=table)
    assert (o.variant_type, o.effect, o.effect_value, o.trigger, o.placement) == (
        "quicksand", "flat_damage", 4, "on_open", "closed_only")
    assert o.region_pool == ("quicksand",)
    assert len(o.cells) > 0
    assert sum(count_issues(check_overlay(board, r0, o)).values()) == 0
    # Level 3 deep_underdark: the new row joins the pool of the two old ones.
    drawn = {place(board, r0, s, level=3, board_type="deep_underdark", table=table).variant_type for s in range(60)}
    assert drawn == {"rockfall", "ore_dust", "quicksand"}


# 3 ---------------------------------------------------------------------


def test_ac3_data_lifecycle_read_only_overlay_no_carry_over_generator_zero_cells():
    """数据生命周期：变异是只读数据，布置后零运行时写入，无跨图存续；生成器产物恒零变异格。"""
    # The board value has no variant field at all: the generator's product
    # cannot carry a variant cell.
    assert {f.name for f in dataclasses.fields(Board)} == {"width", "height", "spawn_side", "mines", "fog"}
    a, ra = board_of(LAYOUTS[0])
    b, rb = board_of(LAYOUTS[1])
    before = (a.mines, a.layout)
    oa = place(a, ra, 21, level=1, board_type="dungeon")
    assert (a.mines, a.layout) == before  # the board is untouched
    with pytest.raises(dataclasses.FrozenInstanceError):
        oa.cells = ()  # type: ignore[misc]
    assert isinstance(oa.cells, tuple) and all(isinstance(p, tuple) for p in oa.packs)
    # No carry-over: board B's overlay is the same whether or not board A was
    # placed first (a new board, a new scope, nothing shared).
    ob_alone = place(b, rb, 22, level=1, board_type="dungeon")
    place(a, ra, 21, level=1, board_type="dungeon")
    ob_after = place(b, rb, 22, level=1, board_type="dungeon")
    assert ob_after == ob_alone
    # Records are copies: editing one does not reach the overlay.
    rec = oa.to_record()
    rec["cells"].append(0)
    assert oa.to_record()["cells"] != rec["cells"]


# 4 ---------------------------------------------------------------------


def test_ac4_placement_domain_outside_r0_no_mines_one_type_pack_size():
    """布置域：变异格全在初始展开区外且不吃危险格；每图至多一种类型；连通片格数落在 [pack_min, pack_max] 内。"""
    placed = 0
    for layout in LAYOUTS:
        board, r0 = board_of(layout)
        for level, board_type in LEVELS:
            for scope in range(25):
                o = place(board, r0, scope, level=level, board_type=board_type)
                assert count_issues(check_overlay(board, r0, o)) == {"domain": 0, "packs": 0, "one_type": 0, "boss_rule": 0}
                assert not any(board.mines[c] for c in o.cells)
                assert not set(o.cells) & r0
                assert all(DEFAULT.pack_min <= len(p) <= DEFAULT.pack_max for p in o.packs)
                placed += len(o.cells)
    assert placed > 0


# 5 ---------------------------------------------------------------------


def test_ac5_counter_obligation_void_counter_items_stay_empty():
    """配套义务闭环（已作废）：反制兑现不作为验收条目；counter_items 恒空为合法态。"""
    assert all(t.counter_items == () for t in DEFAULT.types)
    # Omitting the field is the same legal empty state.
    from boardgen_pipeline.variants.table import parse_variation_table

    omitted = parse_variation_table({
        "header": {"percent_of_cells": 10, "per_level_bonus": 0, "pack_min": 1, "pack_max": 3},
        "types": [{"id": "spikes", "name": "s", "unlock_level": 1, "scope": "region", "effect": "flat_damage",
                   "effect_value": 1, "trigger": "on_open", "placement": "closed_only", "board_types": []}],
    })
    assert omitted.types[0].counter_items == ()
    # The overlay record has no counter-item column: nothing to honour.
    board, r0 = board_of(LAYOUTS[0])
    assert not any("counter" in k for k in place(board, r0, 1, level=1, board_type="dungeon").to_record())
    from boardgen_pipeline.errors import TableError

    with pytest.raises(TableError) as err:
        load_variation_table(FIX / "bad_counter_items.toml")
    assert [v.rule for v in err.value.violations] == ["counter_items_nonempty"]


# 6 ---------------------------------------------------------------------


def test_ac6_replacement_rule_boss_has_one_whole_board_variant_and_zero_cells():
    """全局作用域型·替换制生效：Boss 图恰一行整图变异 + 零格子级变异标记。"""
    board, r0 = board_of(LAYOUTS[0])
    for level, board_type in LEVELS[1:]:
        for scope in range(10):
            o = place(board, r0, scope, level=level, board_type=board_type, boss=True)
            assert o.global_variant == "skewed_veins" == o.variant_type
            assert (o.scope, o.effect, o.effect_value) == ("global", "resource_face", 30)
            assert (o.cells, o.packs, o.target, o.shortfall) == ((), (), 0, 0)
            assert check_boss_rule(o) == []


def test_ac6_normal_board_region_path_bit_identical():
    """全局作用域型·普通图 region 路径逐位不变。"""
    no_global = without_global_rows(DEFAULT)
    for layout in LAYOUTS:
        board, r0 = board_of(layout)
        for level, board_type in LEVELS:
            for scope in range(10):
                with_g = place(board, r0, scope, level=level, board_type=board_type)
                without = place(board, r0, scope, level=level, board_type=board_type, table=no_global)
                assert with_g.to_record() == without.to_record()


def test_ac6_off_state_zero_perturbation_and_whitelist_never_moves():
    """全局作用域型·off 态零扰动：effect_value=0 资源摇号与无偏斜逐位相同，白名单三行任何状态逐位不动。"""
    assert skew_weights(WEIGHTS, 0) is WEIGHTS
    assert check_skew(WEIGHTS, 0) == []
    # A whole-board variant at effect_value 0 hands the resource draw the very
    # same weights as a board without variant.
    board, r0 = board_of(LAYOUTS[0])
    off_row = replace(DEFAULT.types[-1], effect_value=0)
    off_table = replace(DEFAULT, types=DEFAULT.types[:-1] + (off_row,))
    o = place(board, r0, 3, level=2, board_type="underdark", boss=True, table=off_table)
    assert o.global_variant == "skewed_veins" and o.effect_value == 0
    assert weights_for_overlay(WEIGHTS, o) is WEIGHTS
    whitelist = [(r.id, r.weight) for r in WEIGHTS.rows if r.family == "whitelist"]
    assert len(whitelist) == 3
    for ev in range(0, 51):
        skewed = skew_weights(WEIGHTS, ev)
        assert [(r.id, r.weight) for r in skewed.rows if r.family == "whitelist"] == whitelist


def test_ac6_level1_boss_zero_global_variant():
    """全局作用域型·L1 Boss 零全局变异。"""
    board, r0 = board_of(LAYOUTS[0])
    for scope in range(10):
        o = place(board, r0, scope, level=1, board_type="dungeon", boss=True)
        assert o.global_variant is None and o.global_pool == ()
        assert o.scope == "region"
        assert check_boss_rule(o) == []


def test_ac6_boss_with_empty_global_pool_falls_back_to_region():
    """全局作用域型·Boss 图全局池空回落 region。"""
    no_global = without_global_rows(DEFAULT)
    board, r0 = board_of(LAYOUTS[0])
    for level, board_type in LEVELS:
        for scope in range(10):
            boss = place(board, r0, scope, level=level, board_type=board_type, boss=True, table=no_global)
            battle = place(board, r0, scope, level=level, board_type=board_type, table=no_global)
            assert boss.global_variant is None and boss.global_fallback
            assert boss.scope == "region"
            # the fallback is the ordinary region path, draw for draw
            assert (boss.variant_type, boss.cells, boss.packs, boss.draws) == (
                battle.variant_type, battle.cells, battle.packs, battle.draws)
    # The level-1 Boss of the default table falls back as well.
    o = place(board, r0, 4, level=1, board_type="dungeon", boss=True)
    assert o.global_fallback and o.variant_type in ("bramble", "vine_tangle") and o.cells


def test_ac6_global_pick_takes_zero_draws():
    """全局作用域型·全局取用零取号（确定性，不消费布置随机流）。"""
    board, r0 = board_of(LAYOUTS[0])
    stream = derive_at("variant_place", 9)
    o = place(board, r0, 9, level=3, board_type="deep_underdark", boss=True, stream=stream)
    assert o.global_variant == "skewed_veins"
    assert stream.draws == 0 and o.draws == 0
    assert stream.next_u64() == derive_at("variant_place", 9).next_u64()
    # deterministic: first global row in table order, whatever the scope
    two = replace(DEFAULT, types=DEFAULT.types + (replace(DEFAULT.types[-1], id="second_global"),))
    picks = {place(board, r0, s, level=2, board_type="underdark", boss=True, table=two).global_variant for s in range(20)}
    assert picks == {"skewed_veins"}


def test_ac6_resource_face_skew_positive_pool_total_always_77():
    """全局作用域型·资源面偏斜正向池合计恒 77。"""
    assert WEIGHTS.total == POOL_TOTAL == 77
    for ev in range(0, 101):
        assert skew_weights(WEIGHTS, ev).total == 77
        assert check_skew(WEIGHTS, ev) == []
    board, r0 = board_of(LAYOUTS[0])
    o = place(board, r0, 1, level=2, board_type="underdark", boss=True)
    applied = weights_for_overlay(WEIGHTS, o)
    assert applied.total == 77 and applied != WEIGHTS
    assert applied.family_total("survival") < WEIGHTS.family_total("survival")
    assert applied.family_total("offense") > WEIGHTS.family_total("offense")
    # region boards and empty overlays leave the weights alone
    region = place(board, r0, 1, level=2, board_type="underdark")
    assert weights_for_overlay(WEIGHTS, region) is WEIGHTS
