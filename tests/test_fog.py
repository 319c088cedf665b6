"""Fog rows (SPEC 5; seed 001 F1-F3, F5, AC-6, AC-10, AC-13..16)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardgen_pipeline.board.fog import chain0, completes_full_window
from boardgen_pipeline.board.generator import generate_from_row, target_fraction
from boardgen_pipeline.board.geometry import neighbour_table
from boardgen_pipeline.board.measure import measure_layout
from boardgen_pipeline.board.rng import derive_at, sigma
from boardgen_pipeline.board.solver import closures, reveal_r0
from boardgen_pipeline.calibration.batch import evaluate_row, run_row
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.tables.board_gen import BoardGenRow, load_board_gen, load_board_gen_dir

from .conftest import BASE_ROW, write_table

DEFAULT = load_board_gen_dir()
FOG_ROW = dict(BASE_ROW, board_width=12, board_height=12, mine_density=0.22, r0_max_cap=72,
               fog_region_count=1, fog_target_ratio=0.05)


def fog_row(**over) -> BoardGenRow:
    return BoardGenRow(**{**FOG_ROW, **over})


def smoke_batch(key, n=8):
    """AC-6 / AC-10 batch: scopes sigma(L, D) + i for i in [0, 8)."""
    r = DEFAULT.rows[key]
    return r, [generate_from_row(r, DEFAULT.spawn_side, derive_at("board_gen", sigma(*key) + i)) for i in range(n)]


def check_ac6(board, m, r):
    """Seed 001 AC-6 (a)-(h) for one board."""
    w, h = board.width, board.height
    table = neighbour_table(w, h)
    fog = set(board.fog)
    r0 = reveal_r0(board.mines, w, h, 3)
    ring = set(r0).union(*(table[c] for c in r0))
    numbers = board.numbers
    assert not any(board.mines[c] for c in board.geometry.spawn_cells) and not any(board.mines[c] for c in r0)  # (a)
    assert not fog & ring  # (a)(b) no fog in R0 nor its one-cell ring
    assert all(not board.mines[c] and numbers[c] > 0 for c in fog)  # (c) safe_nonzero
    assert not any(all(yy * w + xx in fog for yy in range(y, y + 3) for xx in range(x, x + 3))
                   for y in range(h - 2) for x in range(w - 2))  # (d)
    assert len(fog) <= 8 * board.mine_count  # (e)
    assert m["safe_count"] >= r.min_safe_count  # (f)
    assert numbers == [sum(board.mines[n] for n in table[c]) for c in range(w * h)]  # (g)
    assert not m["illegal"]  # (h)


def test_default_table_has_fog_from_level_two():
    for level in (2, 3):
        assert any(DEFAULT.rows[k].fog_region_count >= 1 for k in DEFAULT.keys() if k[0] == level)
    assert all(DEFAULT.rows[k].fog_region_count == 0 for k in DEFAULT.keys() if k[0] == 1)


@pytest.mark.parametrize("key", [(1, 0), (2, 0), (2, 2), (3, 4)])
def test_ac_6_every_smoke_board_keeps_the_placement_rules(key):
    r, outs = smoke_batch(key)
    for board, m in outs:
        check_ac6(board, m, r)


def test_ac_10_smoke_assertions():
    _, l1 = smoke_batch((1, 0))
    r2, l2 = smoke_batch((2, 2))
    for r, outs in ((DEFAULT.rows[(1, 0)], l1), (r2, l2)):
        t = target_fraction(r.inferability_target)
        for _, m in outs:
            assert Fraction(m["revealed"], m["safe_count"]) >= t  # (a)
            assert Fraction(m["revealed_core"], max(1, m["safe_core"])) >= t  # (a) core leg
            assert not m["illegal"]  # (b)
            assert 1 <= m["attempts_used"] <= r.max_gen_attempts  # (e)
    assert sum(m["fog_cells"] for _, m in l1) == 0  # (c) B' on a row without fog
    assert any(m["fog_cells"] > 0 for _, m in l2)  # (d)


def test_ac_13_rows_without_fog_draw_exactly_as_before(tmp_path):
    """A row with fog_region_count = 0 (explicit or by default) gives the same
    board and metrics as before fog existed (pinned by the golden vectors of
    test_generator) and opens no fog; stating the zero changes nothing."""
    plain = BoardGenRow(**BASE_ROW)
    explicit = BoardGenRow(**BASE_ROW, fog_region_count=0, fog_target_ratio=0.0)
    for scope in range(20):
        a = generate_from_row(plain, 3, derive_at("board_gen", scope))
        b = generate_from_row(explicit, 3, derive_at("board_gen", scope))
        assert a == b and a.board.fog == () and a.metrics["fog_cells"] == 0


def test_ac_14_two_regions_are_deterministic_and_connected():
    r = fog_row(board_width=16, board_height=16, mine_density=0.18, r0_max_cap=128, fog_region_count=2,
                fog_target_ratio=0.06)
    for scope in range(12):
        a = generate_from_row(r, 3, derive_at("board_gen", scope))
        b = generate_from_row(r, 3, derive_at("board_gen", scope))
        assert a == b
        fog = set(a.board.fog)
        assert fog
        table = neighbour_table(16, 16)
        comps, seen = 0, set()
        for c in sorted(fog):
            if c in seen:
                continue
            comps += 1
            stack = [c]
            seen.add(c)
            while stack:
                for n in table[stack.pop()]:
                    if n in fog and n not in seen:
                        seen.add(n)
                        stack.append(n)
        assert 1 <= comps <= 2 == a.metrics["fog_regions_placed"]
        check_ac6(a.board, a.metrics, r)


def test_ac_15_shortfall_is_reported_never_forced():
    """(a) every record carries fog_regions_placed <= fog_region_count;
    (b) at the f = 8d bound with many regions some boards fall short: the
    shortfall is reported, the board is still legal and passes AC-6."""
    r = fog_row(mine_density=0.15, fog_region_count=8, fog_target_ratio=0.25, min_safe_count=10, r0_max_cap=72)
    short = 0
    for scope in range(30):
        board, m = generate_from_row(r, 3, derive_at("board_gen", scope))
        assert 0 <= m["fog_regions_placed"] <= r.fog_region_count
        assert m["fog_shortfall"] == r.fog_region_count - m["fog_regions_placed"]
        if m["fog_shortfall"] and not m["illegal"]:
            short += 1
            fog = set(board.fog)
            assert len(fog) <= 8 * board.mine_count
            assert all(not board.mines[c] and board.numbers[c] > 0 for c in fog)
    assert short > 0


def test_ac_16_metrics_complete_and_recomputable():
    r = DEFAULT.rows[(3, 4)]
    for scope in range(10):
        board, m = generate_from_row(r, 3, derive_at("board_gen", sigma(3, 4) + scope), dig_ap_cost=2)
        for f in ("metric_version", "inferability", "inferability_core", "fog_ratio", "mines_actual", "safe_count",
                  "fog_burden_ratio", "delta_budget_fog", "attempts_used", "degraded", "illegal", "fog_shortfall"):
            assert f in m
        w, h = board.width, board.height
        assert m["metric_version"] == 2 and m["mines_actual"] <= m["mines_target"]
        assert m["fog_ratio"] == len(board.fog) / (w * h)
        fog = set(board.fog)
        c = closures(board.mines, w, h, 3, fog=fog)
        safe = {i for i in range(w * h) if not board.mines[i]}
        assert (m["revealed_core"], m["safe_core"]) == (len(c.r_infinity - fog), len(safe - fog))
        free = chain0(board.mines, board.numbers, c.r0, w, h)
        unpaid = len(fog - free)
        assert m["delta_budget_fog"] == unpaid * 2
        assert Fraction(m["fog_burden_ratio"]).limit_denominator(10**6) == Fraction(unpaid, max(1, len(safe - free)))
    _, plain = generate_from_row(DEFAULT.rows[(1, 0)], 3, derive_at("board_gen", 5))
    assert (plain["fog_cells"], plain["fog_ratio"], plain["delta_budget_fog"], plain["fog_burden_ratio"]) == (0, 0, 0, 0)
    assert plain["inferability_core"] == plain["inferability"]


# ---------------------------------------------------------------- hand-derived golden boards with fog

def test_golden_fog_meta_knowledge_adds_to_the_numerator():
    """The fifty_fifty board with its closed safe cell (8,3) as fog: (8,3)
    shows 1 but is fog, so no number; it touches the revealed (8,2), and fog
    is known safe, so meta-knowledge opens it (R∞ 32 -> 33 = S). Then (8,2)=1
    has the single unknown (7,3): a third proven mine. Core leaves the fog
    cell out of both sides: (32, 32)."""
    m = measure_layout("........./........./......*../......**f")
    assert (m.r0_size, m.inferability, m.inferability_core, m.known_mines) == (32, (33, 33), (32, 32), 3)


def test_golden_fog_hidden_numbers_take_a_deduction_away():
    """single_rule_only (7x4, mine (1,3)) with fog on (2,2) and (2,3): both
    are still opened (neighbours of zeros) but show no number. Without them
    (0,2)=1 and (1,2)=1 both read {(0,3),(1,3)} with one mine: equal sets, no
    rule decides, so (0,3) stays closed: R∞ 27 -> 26 of 27; core (24, 25)
    (seed 001 A4④: fog's effect is counted both ways)."""
    m = measure_layout("......./......./..f..../.*f....")
    assert (m.r0_size, m.inferability, m.inferability_core, m.known_mines) == (26, (26, 27), (24, 25), 0)
    assert measure_layout("......./......./......./.*.....").inferability == (27, 27)


def test_measure_cli_accepts_fog_and_reports_both(tmp_path):
    import json
    import subprocess
    import sys

    f = tmp_path / "fog.txt"
    f.write_text("........./........./......*../......**f\n")
    out = json.loads(subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", "measure", str(f)],
                                    capture_output=True, text=True, check=True).stdout)
    assert out["inferability"] == [33, 33] and out["inferability_core"] == [32, 32] and out["fog_cells"] == 1


# ---------------------------------------------------------------- bounds as properties

@settings(max_examples=40, deadline=None)
@given(st.sampled_from([10, 12, 14]), st.sampled_from([0.06, 0.1, 0.15, 0.2]), st.integers(1, 4),
       st.sampled_from([0.05, 0.1, 0.2, 0.25]), st.integers(0, 10**9))
def test_fog_bounds_hold_on_every_attempt_output(side, density, regions, ratio, scope):
    ratio = min(ratio, 8 * density)
    r = fog_row(board_width=side, board_height=side, mine_density=density, fog_region_count=regions,
                fog_target_ratio=ratio, r0_max_cap=(side * side) // 2, min_safe_count=10, max_gen_attempts=4)
    board, m = generate_from_row(r, 3, derive_at("board_gen", scope))
    fog = set(board.fog)
    w = h = side
    assert len(fog) <= 8 * board.mine_count
    assert not any(all(yy * w + xx in fog for yy in range(y, y + 3) for xx in range(x, x + 3))
                   for y in range(h - 2) for x in range(w - 2))
    assert all(not board.mines[c] and board.numbers[c] > 0 for c in fog)


def test_window_predicate_and_window_counts_agree():
    from boardgen_pipeline.board.fog import _Windows

    fog = {0, 1, 2, 10, 11, 12, 20, 21}
    assert completes_full_window(22, fog, 10, 10)
    assert not completes_full_window(23, fog, 10, 10)
    w = _Windows(10, 10)
    for c in fog:
        w.add(c)
    assert [c for c in range(100) if c not in fog and w.completes(c)] == \
        [c for c in range(100) if c not in fog and completes_full_window(c, fog, 10, 10)] == [22]


# ---------------------------------------------------------------- F2 at load and assertions B / B'

@pytest.mark.parametrize("fields,ok", [
    (dict(fog_region_count=1, fog_target_ratio=0.2, mine_density=0.02), False),  # f > 8d
    (dict(fog_region_count=1, fog_target_ratio=0.0), False),  # count >= 1 and f = 0
    (dict(fog_region_count=0, fog_target_ratio=0.1), False),  # count = 0 and f > 0
    (dict(fog_region_count=1, fog_target_ratio=0.30, mine_density=0.15), False),  # > 0.25
    (dict(fog_region_count=0, fog_target_ratio=0.0), True),
    (dict(fog_region_count=2, fog_target_ratio=0.16, mine_density=0.02), True),  # f = 8d exactly
    (dict(fog_region_count=1, fog_target_ratio=0.25), True),
])
def test_f2_predicate_at_load(tmp_path, fields, ok):
    path = write_table(tmp_path / "t.toml", [{**BASE_ROW, **fields}])
    if ok:
        load_board_gen(path)
    else:
        with pytest.raises(TableError) as exc:
            load_board_gen(path)
        assert {v.rule for v in exc.value.violations} == {"fog_predicate"}


def test_f2_fog_ratio_of_one_is_a_domain_error(tmp_path):
    with pytest.raises(TableError) as exc:
        load_board_gen(write_table(tmp_path / "t.toml", [{**BASE_ROW, "fog_region_count": 1,
                                                           "fog_target_ratio": 1.0}]))
    assert [v.rule for v in exc.value.violations] == ["domain"]


def test_assertions_b_and_b_prime():
    r = fog_row()
    recs = [{"revealed": 10, "safe_count": 10, "revealed_core": 9, "safe_core": 9, "inferability": 1.0,
             "exit": "passed", "attempts_used": 1, "r0_cap_rejected": 0, "illegal": False, "scope": i,
             "fog_regions_placed": 1 if i < 19 else 0, "fog_cells": 3, "fog_shortfall": 0 if i < 19 else 1}
            for i in range(20)]
    assert evaluate_row(r, recs).assertion_b is True  # 19/20 = 0.95
    recs[0]["fog_regions_placed"] = 0
    assert evaluate_row(r, recs).assertion_b is False  # 18/20
    plain = BoardGenRow(**BASE_ROW)
    assert evaluate_row(plain, recs).assertion_b1 is False  # fog on a row without fog = leak
    for x in recs:
        x["fog_cells"] = 0
    assert evaluate_row(plain, recs).assertion_b1 is True


def test_default_fog_rows_meet_b_on_a_real_batch():
    t = DEFAULT
    for key in [k for k in t.keys() if t.rows[k].fog_region_count][:2]:
        rep = evaluate_row(t.rows[key], run_row(t, key, 64))
        assert rep.assertion_b and rep.assertion_a and rep.assertion_a1


# ---------------------------------------------------------------- golden vectors with fog

FOG_GOLDEN = [
    (0, "........*..fff**/..**.*...ff*..f./.*.....*...ff..f/.....*......*f.*/.*..*.....*...*./............*.../"
        "..........*...../*.............../***............*/*.............**/*...****...*..../ff...*.*.*.....*/"
        ".ff.f*........../.f*fff........*./...f.*.....*..../.*....*........*",
     dict(revealed=207, safe_count=212, revealed_core=187, safe_core=192, fog_cells=20, fog_regions_placed=2,
          delta_budget_fog=12, attempts_used=1, exit="passed", known_mines=43)),
    (1, "ff...*........*./*fff.*........../.f**...*......../ff*......*.....*/f*****..*..*..*./*f*..........*.*/"
        "..............*./*.........*...../..*.......*....*/....*......*..../**f*.*.*......../.fff.ff.*.*...../"
        ".f.ff.......**../..**f.....*...../..*...........*./.........**.*...",
     dict(revealed=188, safe_count=209, revealed_core=168, safe_core=189, fog_cells=20, fog_regions_placed=2,
          delta_budget_fog=10, attempts_used=2, exit="passed", known_mines=35)),
]


@pytest.mark.parametrize("scope,layout,expected", FOG_GOLDEN, ids=["scope0", "scope1"])
def test_fog_golden_vectors(scope, layout, expected):
    """Whole boards of the default (3,4) fog row: any change to fog placement,
    its draws or the fog measure fails here."""
    from boardgen_pipeline.board.generator import generate

    board, m = generate(3, 4, scope, table=DEFAULT)
    assert m["layout"] == layout == board.layout
    assert {k: m[k] for k in expected} == expected
