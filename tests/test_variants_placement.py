"""Variant placement: golden overlays, the draw protocol, routing, record and
drawing, and property tests on random layouts (SPEC 3; seed 003 "布置段")."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardgen_pipeline.board.geometry import Board, neighbour_table, parse_layout
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.board.solver import reveal_r0
from boardgen_pipeline.variants.checks import check_overlay, check_packs, count_issues
from boardgen_pipeline.variants.placement import (
    Overlay,
    grow_packs,
    overlay_record_schema,
    place_overlay,
    render_overlay,
    round_half_up,
    target_count,
)
from boardgen_pipeline.variants.table import BOARD_TYPES, load_variation_table, parse_variation_table

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "variants"
GOLDEN_TABLE = load_variation_table(FIX / "golden_variation.toml")

# Hand-written 14 x 12 layout (spawn centre (6, 5), spawn square mine-free);
# R0 = 59 cells, 146 safe, so 87 candidate cells.
GOLDEN_LAYOUT = """
..*.....*.....
.....*......*.
*.........*...
...*..........
..........*..*
.*..........*.
.........*....
*...*.....*...
.........*....
..*...........
.......*..*..*
*...*.........
"""


def board_of(layout: str, spawn_side: int = 3) -> tuple[Board, frozenset[int]]:
    w, h, mines, _ = parse_layout(layout)
    board = Board(w, h, spawn_side, mines)
    return board, reveal_r0(board.mines, w, h, spawn_side)


def place(board, r0, scope, *, level=1, boss=False, board_type="dungeon", table=GOLDEN_TABLE, elite=False):
    return place_overlay(
        board, r0, level_index=level, is_boss=boss, board_type=board_type, table=table,
        stream=derive_at("variant_place", scope), is_elite=elite,
    )


# ------------------------------------------------------------ golden


def test_golden_board_counts():
    board, r0 = board_of(GOLDEN_LAYOUT)
    assert (board.width, board.height, len(r0), len(board.safe_cells())) == (14, 12, 59, 146)


def test_golden_overlay_level1_scope7():
    board, r0 = board_of(GOLDEN_LAYOUT)
    o = place(board, r0, 7)
    assert o.variant_type == "vine_tangle" and o.scope == "region"
    assert o.candidate_count == 87
    assert o.target == 7  # round_half_up(87 * 8 / 100) = round_half_up(6.96) = 7, + 0 bonus
    assert o.packs == ((99, 113, 114, 127), (10, 11, 24))
    assert o.cells == (10, 11, 24, 99, 113, 114, 127)
    assert o.shortfall == 0
    # draws: 1 type + per pack (size, seed, one per grown cell): (2 + 3) + (2 + 2)
    assert o.draws == 10
    assert render_overlay(board, o, legend=False) == "\n".join(
        [
            "..*.....*.VV..",
            ".....*....V.*.",
            "*.........*...",
            "...*..........",
            "..........*..*",
            ".*..........*.",
            ".........*....",
            "*V..*.....*...",
            ".VV......*....",
            ".V*...........",
            ".......*..*..*",
            "*...*.........",
        ]
    )


def test_golden_overlay_other_levels_same_scope():
    board, r0 = board_of(GOLDEN_LAYOUT)
    o2 = place(board, r0, 7, level=2, board_type="underdark")
    assert (o2.variant_type, o2.target) == ("ember_veil", 8)  # 7 + (2 - 1) * 1
    assert o2.packs == ((99, 113, 114, 127), (10, 11), (4, 5))
    o3 = place(board, r0, 7, level=3, board_type="deep_underdark")
    assert (o3.variant_type, o3.target) == ("ore_dust", 9)  # 7 + (3 - 1) * 1
    assert o3.packs == ((99, 113, 114, 127), (10, 11), (4, 5, 18))


def test_overlay_is_deterministic_per_scope_and_differs_across_scopes():
    board, r0 = board_of(GOLDEN_LAYOUT)
    runs = [place(board, r0, s) for s in (3, 3, 4)]
    assert runs[0] == runs[1]
    assert runs[0].to_record() == runs[1].to_record()
    assert runs[0].cells != runs[2].cells


def test_master_seed_changes_the_overlay():
    board, r0 = board_of(GOLDEN_LAYOUT)
    a = place_overlay(board, r0, level_index=1, is_boss=False, board_type="dungeon", table=GOLDEN_TABLE,
                      stream=derive_at("variant_place", 7, 0))
    b = place_overlay(board, r0, level_index=1, is_boss=False, board_type="dungeon", table=GOLDEN_TABLE,
                      stream=derive_at("variant_place", 7, 1))
    assert (a.master_seed, b.master_seed) == (0, 1)
    assert a.cells != b.cells


def test_wrong_stream_label_is_refused():
    board, r0 = board_of(GOLDEN_LAYOUT)
    with pytest.raises(ValueError, match="variant_place"):
        place_overlay(board, r0, level_index=1, is_boss=False, board_type="dungeon", table=GOLDEN_TABLE,
                      stream=derive_at("board_gen", 7))


# ------------------------------------------------------------ count rule


@pytest.mark.parametrize(
    "x, expected",
    [(Fraction(5, 2), 3), (Fraction(7, 2), 4), (Fraction(249, 100), 2), (Fraction(1, 2), 1), (Fraction(0), 0)],
)
def test_round_half_up_is_not_bankers(x, expected):
    assert round_half_up(x) == expected


def table_with(**header):
    base = {"percent_of_cells": 10, "per_level_bonus": 0, "pack_min": 1, "pack_max": 9}
    base.update(header)
    return parse_variation_table({"header": base, "types": [
        {"id": "spikes", "name": "s", "unlock_level": 1, "scope": "region", "effect": "flat_damage",
         "effect_value": 1, "trigger": "on_open", "placement": "closed_only", "board_types": []},
    ]})


def test_target_count_rule():
    # 25 candidates at 10 % = 2.5 -> 3 (half up, banker's would give 2)
    assert target_count(25, 1, table_with(percent_of_cells=10)) == 3
    # 12.5 % of 20 = 2.5 -> 3: the float percent is read exactly
    assert target_count(20, 1, table_with(percent_of_cells=12.5)) == 3
    # level bonus: (L - 1) * per_level_bonus on top
    assert target_count(25, 3, table_with(percent_of_cells=10, per_level_bonus=4)) == 3 + 8
    # capped at the candidate count
    assert target_count(5, 3, table_with(percent_of_cells=50, per_level_bonus=9)) == 5
    assert target_count(0, 3, table_with(per_level_bonus=9)) == 0


# ------------------------------------------------------------ pack growth


def test_fragment_too_small_for_pack_min_is_skipped_and_shortfall_reported():
    # Candidates: an isolated single cell (0), a pair (5, 6) and a column of 3.
    w, h = 9, 5
    candidates = [0, 5, 6, 8, 17, 26]
    res = grow_packs(candidates, w, h, target=6, pack_min=3, pack_max=3, stream=derive_at("variant_place", 1))
    assert res.packs == [(8, 17, 26)]
    assert (res.placed, res.shortfall) == (3, 3)


def test_remainder_below_pack_min_is_never_forced():
    res = grow_packs(list(range(9)), 9, 1, target=1, pack_min=2, pack_max=3, stream=derive_at("variant_place", 1))
    assert res.packs == [] and res.shortfall == 1


def test_packs_never_touch():
    # A fully open 9 x 9 field with a large target: every pack is its own piece.
    cells = list(range(81))
    for scope in range(20):
        res = grow_packs(cells, 9, 9, target=40, pack_min=2, pack_max=4, stream=derive_at("variant_place", scope))
        table = neighbour_table(9, 9)
        owner = {c: k for k, p in enumerate(res.packs) for c in p}
        for c, k in owner.items():
            assert all(owner.get(n, k) == k for n in table[c])


def test_size_choice_avoids_a_stranded_remainder():
    # target 5, packs [2, 4]: sizes leaving 1 (size 4) are not admissible while
    # 2 and 3 exist, so on open ground the target is always met.
    for scope in range(30):
        res = grow_packs(list(range(100)), 10, 10, target=5, pack_min=2, pack_max=4,
                         stream=derive_at("variant_place", scope))
        assert res.shortfall == 0 and sorted(map(len, res.packs)) in ([2, 3],)


def test_pack_min_equals_pack_max_equals_one():
    res = grow_packs(list(range(25)), 5, 5, target=4, pack_min=1, pack_max=1, stream=derive_at("variant_place", 2))
    assert res.placed == 4 and all(len(p) == 1 for p in res.packs)


# ------------------------------------------------------------ routing


def test_zero_percent_places_nothing_but_records_the_drawn_type():
    board, r0 = board_of(GOLDEN_LAYOUT)
    t = replace(GOLDEN_TABLE, percent_of_cells=Fraction(0), per_level_bonus=0)
    o = place(board, r0, 7, table=t)
    assert o.variant_type in ("bramble", "vine_tangle")
    assert (o.cells, o.target, o.shortfall, o.draws) == ((), 0, 0, 1)


def test_overlay_carries_the_enums_of_its_row():
    board, r0 = board_of(GOLDEN_LAYOUT)
    for scope in range(6):
        o = place(board, r0, scope)
        row = GOLDEN_TABLE.type_by_id(o.variant_type)
        assert (o.scope, o.effect, o.effect_value, o.trigger, o.placement) == (
            row.scope, row.effect, row.effect_value, row.trigger, row.placement)


def test_type_draw_is_uniform_over_the_region_pool():
    board, r0 = board_of(GOLDEN_LAYOUT)
    t = replace(GOLDEN_TABLE, percent_of_cells=Fraction(0), per_level_bonus=0)
    counts = {}
    for scope in range(400):
        o = place(board, r0, scope, table=t)
        counts[o.variant_type] = counts.get(o.variant_type, 0) + 1
    assert set(counts) == {"bramble", "vine_tangle"}
    assert 160 <= counts["bramble"] <= 240  # binomial(400, 1/2): > 4 sigma margin


# ------------------------------------------------------------ record and drawing


def test_record_is_json_able_and_matches_the_parquet_schema():
    import pyarrow as pa

    board, r0 = board_of(GOLDEN_LAYOUT)
    overlays = [
        place(board, r0, 7),
        place(board, r0, 7, level=2, boss=True, board_type="underdark"),
        place(board, r0, 7, level=1, board_type="underdark"),  # empty pool
    ]
    records = [o.to_record() for o in overlays]
    assert json.loads(json.dumps(records)) == records
    schema = overlay_record_schema()
    assert [f.name for f in schema] == list(records[0])
    tbl = pa.Table.from_pylist(records, schema=schema)
    assert tbl.num_rows == 3
    assert tbl.column("packs").to_pylist()[0] == [[99, 113, 114, 127], [10, 11, 24]]
    assert tbl.column("global_variant").to_pylist() == [None, "skewed_veins", None]


def test_render_global_and_empty():
    board, r0 = board_of(GOLDEN_LAYOUT)
    g = place(board, r0, 7, level=2, boss=True, board_type="underdark")
    text = render_overlay(board, g)
    assert text.splitlines()[0].startswith("whole-board variant: skewed_veins")
    assert text.splitlines()[1:] == GOLDEN_LAYOUT.split()
    e = place(board, r0, 7, level=1, board_type="underdark")
    assert render_overlay(board, e).splitlines()[0] == "no variant (empty candidate pool)"
    assert render_overlay(board, e, legend=False) == "\n".join(GOLDEN_LAYOUT.split())


# ------------------------------------------------------------ checks can fail


def test_checks_catch_broken_overlays():
    board, r0 = board_of(GOLDEN_LAYOUT)
    good = place(board, r0, 7)
    assert sum(count_issues(check_overlay(board, r0, good)).values()) == 0
    mine = next(c for c in range(len(board.mines)) if board.mines[c])
    opened = min(r0)
    bad = replace(good, cells=good.cells + (mine, opened), packs=good.packs + ((mine,), (opened,)))
    rules = {i.rule for issues in check_overlay(board, r0, bad).values() for i in issues}
    assert {"variant_on_mine", "variant_in_r0", "pack_size", "count_over_target", "shortfall_mismatch"} <= rules
    split = replace(good, packs=((99, 113), (114, 127), (10, 11, 24)))
    assert {"packs_touch"} <= {i.rule for i in check_packs(split)}
    gap = replace(good, packs=((99, 127), (113, 114), (10, 11, 24)))
    assert "pack_disconnected" in {i.rule for i in check_packs(gap)}
    two = replace(good, global_variant="skewed_veins")
    assert {"more_than_one_type", "global_with_cells"} <= {
        i.rule for i in check_overlay(board, r0, two)["one_type"]}


# ------------------------------------------------------------ properties


@st.composite
def layouts(draw):
    w = draw(st.integers(8, 16))
    h = draw(st.integers(8, 16))
    side = draw(st.sampled_from([3, 5]))
    density = draw(st.sampled_from([0.05, 0.12, 0.2, 0.3, 0.45]))
    bits = draw(st.lists(st.floats(0, 1), min_size=w * h, max_size=w * h))
    cx, cy, r = (w - 1) // 2, (h - 1) // 2, side // 2
    mines = bytes(
        0 if max(abs(c % w - cx), abs(c // w - cy)) <= r else int(bits[c] < density) for c in range(w * h)
    )
    return Board(w, h, side, mines)


@st.composite
def tables(draw):
    pmin = draw(st.integers(1, 9))
    pmax = draw(st.integers(pmin, 9))
    header = {
        "percent_of_cells": draw(st.integers(0, 50)),
        "per_level_bonus": draw(st.integers(0, 9)),
        "pack_min": pmin,
        "pack_max": pmax,
    }
    return parse_variation_table({"header": header, "types": [
        {"id": "spikes", "name": "s", "unlock_level": 1, "scope": "region", "effect": "flat_damage",
         "effect_value": 1, "trigger": "on_open", "placement": "closed_only", "board_types": []},
        {"id": "murk", "name": "m", "unlock_level": 2, "scope": "region", "effect": "hide_number",
         "trigger": "on_number_shown", "placement": "any", "board_types": []},
    ]})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=layouts(), table=tables(), level=st.integers(1, 3), scope=st.integers(0, 2**32),
       board_type=st.sampled_from(BOARD_TYPES))
def test_property_overlay_invariants(board, table, level, scope, board_type):
    r0 = reveal_r0(board.mines, board.width, board.height, board.spawn_side)
    mines_before = bytes(board.mines)
    o = place(board, r0, scope, level=level, board_type=board_type, table=table)
    assert board.mines == mines_before
    issues = check_overlay(board, r0, o, boss_rule=False)
    assert count_issues(issues) == {"domain": 0, "packs": 0, "one_type": 0}, issues
    safe = {c for c, m in enumerate(board.mines) if not m}
    assert set(o.cells) <= safe - r0
    assert o.candidate_count == len(safe - r0)
    assert len(o.cells) <= o.target <= o.candidate_count
    for p in o.packs:
        assert table.pack_min <= len(p) <= table.pack_max
    # Shortfall is geometry, never laziness: when what is missing could form a
    # pack, no free fragment of pack_min cells is left.
    if o.shortfall >= table.pack_min:
        nb = neighbour_table(board.width, board.height)
        blocked = set(o.cells) | {n for c in o.cells for n in nb[c]}
        free = (safe - r0) - blocked
        seen = set()
        for start in sorted(free):
            if start in seen:
                continue
            comp, stack = {start}, [start]
            while stack:
                c = stack.pop()
                for n in nb[c]:
                    if n in free and n not in comp:
                        comp.add(n)
                        stack.append(n)
            seen |= comp
            assert len(comp) < table.pack_min
    # same scope, same overlay
    assert place(board, r0, scope, level=level, board_type=board_type, table=table) == o


def test_overlay_is_a_frozen_value():
    board, r0 = board_of(GOLDEN_LAYOUT)
    o = place(board, r0, 7)
    assert isinstance(o, Overlay)
    with pytest.raises(AttributeError):
        o.cells = ()  # type: ignore[misc]
