"""One board per seed scope (SPEC 7 ``sigma``;
``boardgen_pipeline/scopes.py``): no two rows of any table the loader accepts
share a ``board_gen`` scope, whatever the batch size ``calibrate --samples``
allows ([1, 4096]); a row deeper than 255, whose batch would be another
row's, is refused at load with the rule named (rule ``seed_scopes``), every
such row reported together."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardgen_pipeline.board.rng import sigma
from boardgen_pipeline.cli import main
from boardgen_pipeline.cli_args import check_command
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.scopes import DEPTH_SPACING, MAX_DEPTH
from boardgen_pipeline.tables.board_gen import load_board_gen

from .conftest import REPO

ROW = """
[[rows]]
level_index = {level}
node_depth = {depth}
board_width = 10
board_height = 10
mine_density = 0.2
inferability_target = 0.85
min_safe_count = 40
max_gen_attempts = 32
board_type = "dungeon"
shave_ring_radius = 1
r0_max_cap = 50
"""


def table_text(keys) -> str:
    return "[header]\nspawn_side = 3\n" + "".join(ROW.format(level=lv, depth=d) for lv, d in sorted(keys))


def shared_scopes(keys, samples: int) -> list[tuple]:
    """Pairs of rows whose batches ``sigma(L, D) + i``, ``i < samples``, meet."""
    spans = sorted((sigma(*k), k) for k in keys)
    return [(a, b) for (sa, a), (sb, b) in itertools.pairwise(spans) if sb < sa + samples]


# Tables of up to 12 rows over 3 levels, each with its anchor; depths up to MAX_DEPTH + 40 so that
# about one table in seven holds a row that is too deep.
tables = st.builds(
    lambda extra: {(lv, 0) for lv in (1, 2, 3)} | extra,
    st.sets(st.tuples(st.integers(1, 3), st.integers(0, MAX_DEPTH + 40)), max_size=9))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=tables, samples=st.one_of(st.just(DEPTH_SPACING), st.just(1), st.integers(1, DEPTH_SPACING)))
def test_no_two_rows_of_a_valid_table_share_a_scope(tmp_path, keys, samples):
    path = tmp_path / "board_gen.toml"
    path.write_text(table_text(keys), encoding="utf-8")
    too_deep = sorted(k for k in keys if k[1] > MAX_DEPTH)
    try:
        table = load_board_gen(path)
    except TableError as exc:
        assert too_deep, exc.report()
        assert sorted((v.row, v.field, v.value, v.rule) for v in exc.violations) == [
            (f"({lv},{d})", "node_depth", d, "seed_scopes") for lv, d in too_deep]
        return
    assert not too_deep
    assert shared_scopes(table.keys(), samples) == []


def test_every_table_of_the_repository_keeps_its_rows_apart():
    found = 0
    for path in [REPO / "tables" / "board_gen.toml", *sorted((REPO / "tests" / "fixtures").rglob("board_gen.toml"))]:
        try:
            table = load_board_gen(path)
        except TableError:
            continue  # the fixtures of bad tables
        found += 1
        assert shared_scopes(table.keys(), DEPTH_SPACING) == [], path
    assert found >= 5


def test_the_deepest_depth_sigma_allows_is_the_last_one_apart():
    """The rule is exactly as strict as sigma: depth 255 at the largest batch
    stops one scope short of the next level's anchor; depth 256 is on it."""
    assert sigma(1, MAX_DEPTH) + DEPTH_SPACING == sigma(2, 0) == sigma(1, MAX_DEPTH + 1)
    assert shared_scopes([(1, MAX_DEPTH), (2, 0)], DEPTH_SPACING) == []
    assert shared_scopes([(1, MAX_DEPTH + 1), (2, 0)], 1) == [((1, MAX_DEPTH + 1), (2, 0))]
    assert shared_scopes([(1, 0), (1, 1)], DEPTH_SPACING + 1) == [((1, 0), (1, 1))]  # why --samples stops at 4096


def test_validate_says_why_a_depth_is_refused(tmp_path, capsys):
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "board_gen.toml").write_text(table_text({(1, 0), (1, 256), (2, 0), (2, 300)}), encoding="utf-8")
    assert main(["validate", "--tables", str(tables)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "2 table violations:"
    assert err[1] == (f"  - {tables / 'board_gen.toml'}: row (1,256): field node_depth = 256: [seed_scopes] must be "
                      "<= 255: sigma(L, D) = 10^9 + 2^20*L + 2^12*D gives each depth 4096 seed scopes, so depth 256 "
                      "of level L would draw the boards of depth 0 of level L+1")
    assert err[2].startswith(f"  - {tables / 'board_gen.toml'}: row (2,300): field node_depth = 300: [seed_scopes] ")


@pytest.mark.parametrize("samples, ok", [(DEPTH_SPACING, True), (DEPTH_SPACING + 1, False), (0, False)])
def test_calibrate_takes_every_batch_size_that_keeps_rows_apart_and_no_other(samples, ok):
    bad = check_command("calibrate", {"samples": samples})
    assert (bad == []) is ok
    if not ok:
        assert [v.field for v in bad] == ["--samples"] and f"adjacent depths are {DEPTH_SPACING} apart" in bad[0].message


def test_a_depth_of_the_wrong_kind_still_names_the_domain(tmp_path):
    path = Path(tmp_path / "board_gen.toml")
    path.write_text(table_text({(1, 0)}).replace("node_depth = 0", 'node_depth = "deep"'), encoding="utf-8")
    with pytest.raises(TableError) as err:
        load_board_gen(path)
    assert any(v.field == "node_depth" and v.rule != "seed_scopes" for v in err.value.violations)
