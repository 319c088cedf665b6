"""Variation table and resource weight table: loading and load-time checks
(SPEC 3; seed 003 "调参表", "变异表字段集")."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from boardgen_pipeline.errors import TableError
from boardgen_pipeline.variants.skew import POOL_TOTAL, load_resource_weights
from boardgen_pipeline.variants.table import (
    BOARD_TYPES,
    EFFECTS,
    PLACEMENTS,
    SCOPES,
    TRIGGERS,
    candidate_pools,
    load_variation_table,
    parse_variation_table,
)

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "variants"
DEFAULT = ROOT / "tables" / "variation.toml"
WEIGHTS = ROOT / "tables" / "resource_weights.toml"


def violations_of(loader, path):
    with pytest.raises(TableError) as err:
        loader(path)
    return err.value.violations


# ------------------------------------------------------------ default tables


def test_default_table_is_the_seven_types_of_seed_003():
    t = load_variation_table(DEFAULT)
    rows = [(v.name, v.scope, v.effect, v.trigger, v.placement, v.unlock_level, v.board_types) for v in t.types]
    assert rows == [
        ("荆棘丛", "region", "flat_damage", "on_open", "closed_only", 1, ("dungeon",)),
        ("藤蔓缠绕", "region", "hide_number", "on_number_shown", "any", 1, ("dungeon",)),
        ("岩浆", "region", "flat_damage", "on_open", "closed_only", 2, ("underdark",)),
        ("烬覆", "region", "hide_number", "on_number_shown", "any", 2, ("underdark",)),
        ("落石", "region", "flat_damage", "on_open", "closed_only", 3, ("deep_underdark",)),
        ("矿尘", "region", "hide_number", "on_number_shown", "any", 3, ("deep_underdark",)),
        ("贫矿脉", "global", "resource_face", "always", "any", 2, ()),
    ]
    # Seed 003 "调参表": damage 1 / 2 / 3, skewed veins 30, hide_number has none.
    assert [v.effect_value for v in t.types] == [1, 0, 2, 0, 3, 0, 30]
    assert t.types[-1].id == "skewed_veins"
    assert all(v.counter_items == () for v in t.types)
    assert 0 <= t.percent_of_cells <= 50 and 0 <= t.per_level_bonus <= 9
    assert 1 <= t.pack_min <= t.pack_max <= 9


def test_default_pools_per_level_and_node():
    t = load_variation_table(DEFAULT)
    ids = lambda pool: [v.id for v in pool]  # noqa: E731
    for level, board_type, region in (
        (1, "dungeon", ["bramble", "vine_tangle"]),
        (2, "underdark", ["magma", "ember_veil"]),
        (3, "deep_underdark", ["rockfall", "ore_dust"]),
    ):
        battle = candidate_pools(t, level_index=level, board_type=board_type, is_boss=False)
        assert ids(battle.region_pool) == region and battle.global_pool == ()
        boss = candidate_pools(t, level_index=level, board_type=board_type, is_boss=True)
        assert ids(boss.global_pool) == ([] if level == 1 else ["skewed_veins"])


def test_gate_unlock_level_is_a_plain_integer_comparison():
    t = load_variation_table(DEFAULT)
    # A level-3 dungeon board (not in the default map, but legal) keeps the
    # level-1 dungeon types: unlock_level <= level_index.
    pools = candidate_pools(t, level_index=3, board_type="dungeon", is_boss=False)
    assert [v.id for v in pools.region_pool] == ["bramble", "vine_tangle"]
    pools = candidate_pools(t, level_index=1, board_type="underdark", is_boss=False)
    assert pools.region_pool == () and pools.global_pool == ()


def test_gate_elite_nodes_take_global_rows():
    t = load_variation_table(DEFAULT)
    pools = candidate_pools(t, level_index=2, board_type="underdark", is_boss=False, is_elite=True)
    assert [v.id for v in pools.global_pool] == ["skewed_veins"]


def test_gate_rejects_unknown_board_type_and_level():
    t = load_variation_table(DEFAULT)
    with pytest.raises(ValueError):
        candidate_pools(t, level_index=1, board_type="swamp", is_boss=False)
    with pytest.raises(ValueError):
        candidate_pools(t, level_index=0, board_type="dungeon", is_boss=False)


def test_vocabularies_are_the_seed_enums():
    assert SCOPES == ("region", "global")
    assert EFFECTS == ("flat_damage", "hide_number", "resource_face")
    assert TRIGGERS == ("on_open", "on_number_shown", "always")
    assert PLACEMENTS == ("closed_only", "any")
    assert BOARD_TYPES == ("dungeon", "underdark", "deep_underdark")


def test_minimal_and_empty_tables_load():
    t = load_variation_table(FIX / "ok_minimal.toml")
    assert [v.id for v in t.types] == ["spikes", "thin_veins"]
    empty = load_variation_table(FIX / "ok_empty.toml")
    assert empty.types == ()


def test_percent_float_is_read_as_its_decimal_text():
    data = {"header": {"percent_of_cells": 0.1, "per_level_bonus": 0, "pack_min": 1, "pack_max": 1}}
    assert parse_variation_table(data).percent_of_cells == Fraction(1, 10)


def test_boolean_is_not_an_integer():
    data = {"header": {"percent_of_cells": 10, "per_level_bonus": True, "pack_min": 1, "pack_max": 1}}
    with pytest.raises(TableError) as err:
        parse_variation_table(data)
    assert [(v.rule, v.field) for v in err.value.violations] == [("field_type", "per_level_bonus")]


# ------------------------------------------------------------ bad tables

BAD = [
    # fixture, rule, row, field
    ("bad_unknown_field.toml", "unknown_field", "spikes", "effect_valeu"),
    ("bad_unknown_header_field.toml", "unknown_field", "header", "pack_mx"),
    ("bad_top_level_field.toml", "unknown_field", "-", "type"),
    ("bad_missing_field.toml", "missing_field", "spikes", "trigger"),
    ("bad_header_missing.toml", "missing_field", "header", "pack_min"),
    ("bad_effect_value_missing.toml", "missing_field", "spikes", "effect_value"),
    ("bad_field_type.toml", "field_type", "spikes", "unlock_level"),
    ("bad_id_format.toml", "id_format", "Spiky Bush", "id"),
    ("bad_unlock_level.toml", "unlock_level_range", "spikes", "unlock_level"),
    ("bad_enum_scope.toml", "enum_domain", "spikes", "scope"),
    ("bad_enum_effect.toml", "enum_domain", "spikes", "effect"),
    ("bad_enum_trigger.toml", "enum_domain", "spikes", "trigger"),
    ("bad_enum_placement.toml", "enum_domain", "spikes", "placement"),
    ("bad_effect_value_flat_damage.toml", "effect_value_domain", "spikes", "effect_value"),
    ("bad_effect_value_hide_number.toml", "effect_value_domain", "fog_of_dust", "effect_value"),
    ("bad_effect_value_resource_face.toml", "effect_value_domain", "thin_veins", "effect_value"),
    ("bad_scope_trigger.toml", "scope_trigger", "thin_veins", "trigger"),
    ("bad_scope_effect.toml", "scope_effect", "thin_veins", "scope"),
    ("bad_board_type.toml", "board_type_vocabulary", "spikes", "board_types"),
    ("bad_counter_items.toml", "counter_items_nonempty", "spikes", "counter_items"),
    ("bad_duplicate_id.toml", "duplicate_id", "spikes", "id"),
    ("bad_header_percent_of_cells_51.toml", "header_range", "header", "percent_of_cells"),
    ("bad_header_per_level_bonus_10.toml", "header_range", "header", "per_level_bonus"),
    ("bad_header_pack_min_0.toml", "header_range", "header", "pack_min"),
    ("bad_header_pack_max_10.toml", "header_range", "header", "pack_max"),
    ("bad_header_pack_min_5.toml", "header_range", "header", "pack_min"),
    ("bad_toml_syntax.toml", "toml_syntax", "-", "-"),
    ("missing_file.toml", "file_missing", "-", "-"),
]


@pytest.mark.parametrize("fixture, rule, row, field", BAD, ids=[b[0] for b in BAD])
def test_bad_variation_table(fixture, rule, row, field):
    vs = violations_of(load_variation_table, FIX / fixture)
    assert (rule, row, field) in [(v.rule, v.row, v.field) for v in vs]
    assert all(v.file == str(FIX / fixture) for v in vs)
    # The message a designer reads names the same three things.
    text = str(TableError(vs))
    assert f"[{rule}]" in text and f"row {row}" in text and f"field {field}" in text


def rules_in(module_file: Path) -> set[str]:
    """Every rule name a module passes to ``Violation(...)`` (5th argument)."""
    import ast

    tree = ast.parse(module_file.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Violation":
            arg = node.args[4] if len(node.args) > 4 else next(k.value for k in node.keywords if k.arg == "rule")
            assert isinstance(arg, ast.Constant), "rule names are literals"
            out.add(arg.value)
    return out


def test_every_loader_rule_has_a_bad_fixture():
    used = rules_in(ROOT / "boardgen_pipeline" / "variants" / "table.py")
    assert len(used) >= 10
    assert used - {b[1] for b in BAD} == set()


def test_every_weight_rule_has_a_bad_fixture():
    used = rules_in(ROOT / "boardgen_pipeline" / "variants" / "skew.py")
    assert len(used) >= 8
    assert used - {b[1] for b in BAD_WEIGHTS} == set()


def test_all_violations_reported_together():
    vs = violations_of(load_variation_table, FIX / "bad_many.toml")
    got = {(v.rule, v.row, v.field) for v in vs}
    assert got == {
        ("header_range", "header", "percent_of_cells"),
        ("effect_value_domain", "spikes", "effect_value"),
        ("board_type_vocabulary", "spikes", "board_types"),
        ("enum_domain", "thin_veins", "placement"),
    }


def test_unknown_field_suggests_the_near_name():
    vs = violations_of(load_variation_table, FIX / "bad_unknown_field.toml")
    assert "did you mean 'effect_value'" in vs[0].message


# ------------------------------------------------------------ weight table


def test_default_resource_weights():
    w = load_resource_weights(WEIGHTS)
    assert w.total == POOL_TOTAL == 77
    fams = {}
    for r in w.rows:
        fams.setdefault(r.family, []).append(r.name)
    # Seed 003: offense 增伤/爆裂/穿刺/奥术, survival 回血/护甲, whitelist 削弱/GP/行动点.
    assert fams == {
        "offense": ["增伤", "爆裂", "穿刺", "奥术"],
        "survival": ["回血", "护甲"],
        "whitelist": ["削弱", "GP", "行动点"],
    }


BAD_WEIGHTS = [
    ("weights_bad_unknown_field.toml", "unknown_field", "damage_up", "wieght"),
    ("weights_bad_top_level.toml", "unknown_field", "-", "resource"),
    ("weights_bad_missing_field.toml", "missing_field", "heal", "family"),
    ("weights_bad_family.toml", "enum_domain", "heal", "family"),
    ("weights_bad_weight_range.toml", "weight_range", "gp", "weight"),
    ("weights_bad_field_type.toml", "field_type", "gp", "weight"),
    ("weights_bad_pool_total.toml", "pool_total", "-", "weight"),
    ("weights_bad_duplicate_id.toml", "duplicate_id", "heal", "id"),
    ("weights_bad_offense_empty.toml", "offense_pool_empty", "-", "family"),
    ("weights_bad_id_format.toml", "id_format", "G P", "id"),
]


@pytest.mark.parametrize("fixture, rule, row, field", BAD_WEIGHTS, ids=[b[0] for b in BAD_WEIGHTS])
def test_bad_resource_weights(fixture, rule, row, field):
    vs = violations_of(load_resource_weights, FIX / fixture)
    assert (rule, row, field) in [(v.rule, v.row, v.field) for v in vs]


def test_weights_ok_fixture_loads():
    assert load_resource_weights(FIX / "weights_ok.toml").as_dict() == {"damage_up": 40, "heal": 30, "gp": 7}
