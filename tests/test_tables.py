"""The board_gen table: load-time checks, one fixture per rule, all
violations at once, the CLI's clean error (SPEC 2.7)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from boardgen_pipeline.errors import TableError
from boardgen_pipeline.tables.board_gen import load_board_gen, load_board_gen_dir

from .conftest import BASE_ROW, FIXTURES, write_table

BAD = FIXTURES / "tables" / "bad"

# fixture folder -> (rule, row, field) expected among the violations
EXPECTED = {
    "domain": ("domain", "(1,0)", "board_width"),
    "unknown_field": ("unknown_field", "(1,0)", "mine_densty"),
    "missing_field": ("missing_field", "(1,0)", "board_type"),
    "duplicate_key": ("duplicate_key", "(1,0)", "level_index,node_depth"),
    "missing_anchor": ("missing_anchor", "(2,0)", "node_depth"),
    "mines_at_least_one": ("mines_at_least_one", "(1,0)", "mine_density"),
    "min_safe_feasible": ("min_safe_feasible", "(1,0)", "min_safe_count"),
    "cost_gate": ("cost_gate", "(1,0)", "max_gen_attempts"),
    "r0_cap_range": ("domain", "(1,0)", "r0_max_cap"),
    "fog_predicate": ("fog_predicate", "(1,0)", "fog_target_ratio"),
    "solver_rules_frozen": ("domain", "(1,0)", "solver_rules"),
    "spawn_side": ("domain", "header", "spawn_side"),
    "toml_syntax": ("toml_syntax", "-", "-"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_bad_fixture_names_its_rule(name):
    with pytest.raises(TableError) as exc:
        load_board_gen(BAD / name / "board_gen.toml")
    found = {(v.rule, v.row, v.field) for v in exc.value.violations}
    assert EXPECTED[name] in found
    assert all(str(BAD / name / "board_gen.toml") == v.file for v in exc.value.violations)


def test_every_fixture_folder_is_covered():
    assert {p.name for p in BAD.iterdir()} == set(EXPECTED) | {"many"}


def test_all_violations_are_reported_together():
    with pytest.raises(TableError) as exc:
        load_board_gen(BAD / "many" / "board_gen.toml")
    got = sorted((v.row, v.field, v.rule) for v in exc.value.violations)
    assert got == [
        ("(1,0)", "board_width", "domain"),
        ("(1,0)", "mine_densty", "unknown_field"),
        ("(1,1)", "inferability_target", "domain"),
        ("(3,0)", "node_depth", "missing_anchor"),
        ("(3,2)", "max_gen_attempts", "domain"),
    ]
    text = exc.value.report()
    assert "5 table violations" in text and "board_width = 99" in text and "[domain] must be int [8, 64]" in text


@pytest.mark.parametrize("name", ["many", "unknown_field", "toml_syntax", "cost_gate"])
def test_cli_validate_exits_1_with_the_rule_and_no_traceback(name):
    p = subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", "validate", "--tables", str(BAD / name)],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "Traceback" not in p.stderr + p.stdout
    assert f"[{EXPECTED.get(name, ('domain',))[0]}]" in p.stderr
    assert str(BAD / name / "board_gen.toml") in p.stderr


def test_cli_calibrate_on_a_bad_table_writes_nothing(tmp_path):
    wh = tmp_path / "wh"
    p = subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", "calibrate", "--tables", str(BAD / "many"),
                        "--warehouse", str(wh), "--samples", "2"], capture_output=True, text=True)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert not wh.exists()


def test_default_table_loads_with_every_level_and_boss_row():
    t = load_board_gen_dir()
    assert t.levels() == [1, 2, 3]
    for level in (1, 2, 3):
        assert [d for (lv, d) in t.keys() if lv == level] == [0, 1, 2, 3, 4]
        assert t.boss_depth(level) == 4 and t.is_boss_row((level, 4))
    assert {t.rows[(lv, 0)].board_type for lv in (1, 2, 3)} == {"dungeon", "underdark", "deep_underdark"}
    assert not t.warnings


def test_floor_resolution_and_unknown_level(tmp_path):
    t = load_board_gen(write_table(tmp_path / "t.toml", [BASE_ROW, {**BASE_ROW, "node_depth": 3}]))
    assert t.resolve(1, 0).node_depth == 0
    assert t.resolve(1, 2).node_depth == 0
    assert t.resolve(1, 7).node_depth == 3
    with pytest.raises(KeyError):
        t.resolve(2, 0)


def test_reserved_fields_are_carried_through(tmp_path):
    t = load_board_gen(write_table(tmp_path / "t.toml", [{**BASE_ROW, "boss_hp_multiplier": 2, "elite_tag": "x"}]))
    assert t.rows[(1, 0)].reserved == {"boss_hp_multiplier": 2, "elite_tag": "x"}
    assert t.rows[(1, 0)].fields()["boss_hp_multiplier"] == 2


def test_monotone_in_depth_is_a_warning_not_an_error(tmp_path):
    header = '[header]\nspawn_side = 3\nmonotone_in_depth = ["mine_density"]\n'
    t = load_board_gen(write_table(tmp_path / "t.toml", [BASE_ROW, {**BASE_ROW, "node_depth": 1, "mine_density": 0.2}],
                                   header=header))
    assert [(w.rule, w.row, w.severity) for w in t.warnings] == [("monotone_in_depth", "(1,1)", "warning")]


def test_row_fingerprint_changes_only_with_the_row(tmp_path):
    a = load_board_gen(write_table(tmp_path / "a.toml", [BASE_ROW, {**BASE_ROW, "node_depth": 1}]))
    b = load_board_gen(write_table(tmp_path / "b.toml", [BASE_ROW, {**BASE_ROW, "node_depth": 1, "mine_density": 0.2}]))
    assert a.row_fingerprint((1, 0)) == b.row_fingerprint((1, 0))
    assert a.row_fingerprint((1, 1)) != b.row_fingerprint((1, 1))


def test_the_table_is_reloaded_when_its_file_changes(tmp_path):
    import os

    d = tmp_path / "t"
    path = write_table(d / "board_gen.toml", [BASE_ROW])
    first = load_board_gen_dir(d)
    assert load_board_gen_dir(d) is first  # unchanged file: not re-read
    write_table(path, [{**BASE_ROW, "mine_density": 0.2}])
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = load_board_gen_dir(d)
    assert again is not first and again.rows[(1, 0)].mine_density == 0.2
