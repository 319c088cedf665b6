"""The ``board_gen`` loader's violations whole (SPEC 2.7; seed 001 F2;
file, row, field, value, rule and a sentence; asked by the
mutation run of ``tables/board_gen.py``: docs/testing.md): how a row is named
when its keys are missing or of the wrong kind, unknown and missing fields,
the monotone warning of assertion E (equal values are no decrease), and each
header and cross-field rule on both sides of its boundary."""

from __future__ import annotations

import tomllib

import pytest

from boardgen_pipeline.errors import TableError
from boardgen_pipeline.tables.board_gen import load_board_gen

from .conftest import BASE_ROW, write_table

MONOTONE = "[header]\nspawn_side = 3\nmonotone_in_depth = [\"mine_density\"]\n"


def whole(v) -> tuple:
    return (v.row, v.field, v.value, v.rule, v.message)


def refused(path) -> list[tuple]:
    with pytest.raises(TableError) as caught:
        load_board_gen(path)
    assert all(v.file == str(path) for v in caught.value.violations)
    return [whole(v) for v in caught.value.violations]


def test_equal_values_in_depth_are_no_decrease(tmp_path):
    rows = [BASE_ROW, {**BASE_ROW, "node_depth": 1}, {**BASE_ROW, "node_depth": 2, "mine_density": 0.21}]
    table = load_board_gen(write_table(tmp_path / "board_gen.toml", rows, MONOTONE))
    # 0.22 -> 0.22 holds; 0.22 -> 0.21 at depth 2 warns, naming the row, the field, its value and the one before
    assert [(whole(w), w.file, w.severity) for w in table.warnings] == [
        (("(1,2)", "mine_density", 0.21, "monotone_in_depth", "decreases from 0.22 at depth 1"),
         str(tmp_path / "board_gen.toml"), "warning"),
    ]


def test_an_unknown_field_is_named_with_its_value_and_a_reserved_name_is_no_field(tmp_path):
    path = write_table(tmp_path / "board_gen.toml", [{**BASE_ROW, "mine_denisty": 0.2, "reserved": 1,
                                                      "boss_hp": 3}])
    assert refused(path) == [
        ("(1,0)", "mine_denisty", 0.2, "unknown_field",
         "unknown field (did you mean mine_density?); reserved prefixes are elite_ and boss_"),
        ("(1,0)", "reserved", 1, "unknown_field", "unknown field (a typo?); reserved prefixes are elite_ and boss_"),
    ]


def test_a_missing_field_and_a_row_named_by_what_it_has(tmp_path):
    no_depth = {k: v for k, v in BASE_ROW.items() if k != "node_depth"}
    no_level = {k: v for k, v in BASE_ROW.items() if k != "level_index"}
    found = refused(write_table(tmp_path / "board_gen.toml", [no_depth, no_level]))
    assert ("(1,?)", "node_depth", None, "missing_field", "required field is missing") in found
    assert ("(?,0)", "level_index", None, "missing_field", "required field is missing") in found


def test_a_key_of_the_wrong_kind_names_the_row_by_its_place(tmp_path):
    found = refused(write_table(tmp_path / "board_gen.toml", [BASE_ROW, {**BASE_ROW, "node_depth": "one"}]))
    assert [f for f in found if f[1] == "node_depth"] == [
        ("#2", "node_depth", "one", "shape", "key field node_depth must be an integer, got a string")]


def test_a_value_outside_its_domain_says_the_domain(tmp_path):
    found = refused(write_table(tmp_path / "board_gen.toml", [{**BASE_ROW, "board_width": 4}]))
    (v,) = [f for f in found if f[1] == "board_width"]
    assert v[:4] == ("(1,0)", "board_width", 4, "domain") and v[4].startswith("must be int [8, 64] (")


def header(text: str) -> str:
    return "[header]\n" + text + "\n"


@pytest.mark.parametrize("text,field,value,message", [
    ("dig_ap_cost = 9", "dig_ap_cost", 9, "must be int [1, 8]"),
    ("dig_ap_cost = 0", "dig_ap_cost", 0, "must be int [1, 8]"),
    ("dig_ap_cost = \"2\"", "dig_ap_cost", "2", "must be int [1, 8]"),
    ("spawn_side = 4", "spawn_side", 4, "must be 3 or 5 (odd side of the spawn square)"),
    ("spawn_side = 6", "spawn_side", 6, "must be 3 or 5 (odd side of the spawn square)"),
    ("foo = 1", "foo", 1, "unknown header field; known: ['dig_ap_cost', 'monotone_in_depth', 'review_margins', "
     "'spawn_side', 'survival_is_criterion']"),
    ("review_margins = 0.05", "review_margins", 0.05,
     "must be a table of figure = margin, e.g. review_margins = { win_rate = 0.03 }"),
    ("review_margins = { win_rate = -0.05 }", "review_margins.win_rate", -0.05,
     "must be a number >= 0 (the smallest move of the figure worth flagging)"),
    ("review_margins = { win_rate = \"a lot\" }", "review_margins.win_rate", "a lot",
     "must be a number >= 0 (the smallest move of the figure worth flagging)"),
])
def test_a_header_value_outside_its_domain(tmp_path, text, field, value, message):
    found = refused(write_table(tmp_path / "board_gen.toml", [BASE_ROW], header(text)))
    assert found == [("header", field, value, "unknown_field" if field == "foo" else "domain", message)]


@pytest.mark.parametrize("mono", ['["board_type"]', '["mine_densty"]', '"mine_density"', "[1]"])
def test_monotone_fields_must_be_a_list_of_numeric_row_fields(tmp_path, mono):
    (found,) = refused(write_table(tmp_path / "board_gen.toml", [BASE_ROW], header(f"monotone_in_depth = {mono}")))
    assert found[:4] == ("header", "monotone_in_depth", tomllib.loads(f"m = {mono}")["m"], "domain")
    assert found[4].startswith("must be a list of numeric row fields: [") and "'mine_density'" in found[4]


def test_the_header_values_on_their_bounds_load(tmp_path):
    table = load_board_gen(write_table(tmp_path / "board_gen.toml", [{**BASE_ROW, "r0_max_cap": 25}],
                                       header("spawn_side = 5\ndig_ap_cost = 8")))
    assert (table.header.spawn_side, table.header.dig_ap_cost) == (5, 8)
    plain = load_board_gen(write_table(tmp_path / "plain.toml", [BASE_ROW], "[header]\n"))
    assert (plain.header.spawn_side, plain.header.dig_ap_cost, plain.header.monotone_in_depth) == (3, 1, ())


def loads(tmp_path, **fields) -> bool:
    try:
        load_board_gen(write_table(tmp_path / "board_gen.toml", [{**BASE_ROW, **fields}]))
    except TableError:
        return False
    return True


def test_each_row_rule_holds_on_its_bound_and_refuses_one_past_it(tmp_path):
    # r0_max_cap in [spawn_cells, floor(W*H/2)] = [9, 50] on 10 x 10
    assert loads(tmp_path, r0_max_cap=9) and loads(tmp_path, r0_max_cap=50)
    assert not loads(tmp_path, r0_max_cap=8) and not loads(tmp_path, r0_max_cap=51)
    # N = round_half_up(mine_density * 91): 0.011 -> 1 mine, 0.005 -> 0
    assert loads(tmp_path, mine_density=0.011) and not loads(tmp_path, mine_density=0.005)
    # 0.22 * 91 = 20.02 -> 20 mines: 80 safe cells
    assert loads(tmp_path, min_safe_count=80) and not loads(tmp_path, min_safe_count=81)
    # max_gen_attempts * W * H <= 16384: 32 * 32 * 16 is on the gate, 32 * 33 * 16 past it
    wide = {"board_width": 32, "board_height": 16, "max_gen_attempts": 32, "r0_max_cap": 100}
    assert loads(tmp_path, **wide) and not loads(tmp_path, **{**wide, "board_width": 33})


def test_the_row_rules_say_what_they_computed(tmp_path):
    found = refused(write_table(tmp_path / "board_gen.toml", [
        {**BASE_ROW, "board_width": 9, "board_height": 9, "r0_max_cap": 41},
        {**BASE_ROW, "level_index": 2, "mine_density": 0.005},
        {**BASE_ROW, "level_index": 3, "min_safe_count": 81},
        {**BASE_ROW, "level_index": 4, "board_width": 33, "board_height": 16, "r0_max_cap": 100},
    ]))
    assert found == [
        ("(1,0)", "r0_max_cap", 41, "domain", "must be in [spawn_cells, floor(W*H/2)] = [9, 40]"),
        ("(2,0)", "mine_density", 0.005, "mines_at_least_one",
         "N = round(mine_density * (W*H - spawn_cells)) = 0; a board needs N >= 1"),
        ("(3,0)", "min_safe_count", 81, "min_safe_feasible", "W*H - N = 80 < min_safe_count"),
        ("(4,0)", "max_gen_attempts", 32, "cost_gate", "max_gen_attempts * W * H = 16896 > 16384"),
    ]


def test_the_fog_predicate_says_which_leg_fails(tmp_path):
    found = refused(write_table(tmp_path / "board_gen.toml", [
        {**BASE_ROW, "fog_target_ratio": 0.05},
        {**BASE_ROW, "level_index": 2, "fog_region_count": 1},
        {**BASE_ROW, "level_index": 3, "fog_region_count": 1, "mine_density": 0.03, "fog_target_ratio": 0.25},
        {**BASE_ROW, "level_index": 4, "fog_region_count": 1, "fog_target_ratio": 0.3},
    ]))
    assert found == [
        ("(1,0)", "fog_target_ratio", 0.05, "fog_predicate", "fog_region_count = 0 requires fog_target_ratio = 0"),
        ("(2,0)", "fog_target_ratio", 0.0, "fog_predicate", "fog_region_count >= 1 requires fog_target_ratio > 0"),
        ("(3,0)", "fog_target_ratio", 0.25, "fog_predicate", "fog_target_ratio must be <= 8 * mine_density = 0.24"),
        ("(4,0)", "fog_target_ratio", 0.3, "fog_predicate", "fog_target_ratio must be <= 0.25"),
    ]

