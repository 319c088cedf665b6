"""The plain functions under the Dagster wiring: which partitions a
table edit touches, the pictures of the checks, publishing and the views."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from boardgen_pipeline.calibration import fingerprints, seeds
from boardgen_pipeline.pictures import drawings
from boardgen_pipeline.steps import currency, regen
from boardgen_pipeline.tables.board_gen import load_board_gen
from boardgen_pipeline.warehouse import datasets, publish, views

from .test_pipeline_support import FIXTURES, N

SMALL = FIXTURES / "small" / "board_gen.toml"


# --- regen: fingerprints now vs fingerprints stored ---------------------------------------------


def test_partition_keys_round_trip():
    assert fingerprints.partition_key((1, 0)) == "1-0"
    assert fingerprints.row_key("12-3") == (12, 3)
    for bad in ("1", "1-0-2", "a-0", "1_0", "-1-0"):
        with pytest.raises(ValueError):
            fingerprints.row_key(bad)


def test_editing_one_row_changes_one_fingerprint(tmp_path):
    table = load_board_gen(SMALL)
    now = fingerprints.fingerprints_now(table, N, 0)
    text = SMALL.read_text()
    edited = tmp_path / "board_gen.toml"
    edited.write_text(text.replace("mine_density = 0.2\n", "mine_density = 0.205\n", 1))
    after = fingerprints.fingerprints_now(load_board_gen(edited), N, 0)
    assert {k for k in now if now[k] != after[k]} == {"1-1"}
    # what decides every row's boards changes every fingerprint
    edited.write_text(text.replace("spawn_side = 3", "spawn_side = 5"))
    assert not set(now.values()) & set(fingerprints.fingerprints_now(load_board_gen(edited), N, 0).values())
    assert not set(now.values()) & set(fingerprints.fingerprints_now(table, N + 1, 0).values())
    assert not set(now.values()) & set(fingerprints.fingerprints_now(table, N, 1).values())


def test_plan_compares_now_with_stored():
    now = {"1-0": "a", "1-1": "b2", "2-0": "c", "3-0": "d"}
    stored = {"1-0": "a", "1-1": "b1", "2-0": "c", "9-9": "z"}
    p = regen.plan(now, stored, registered={"1-0", "1-1", "2-0", "9-9"})
    assert p.add == ["3-0"]
    assert p.remove == ["9-9"]
    assert p.regenerate == ["1-1", "3-0"]
    assert p.keep == ["1-0", "2-0"]
    assert regen.plan(now, stored, registered=set(now), in_flight={"1-1": "b2", "3-0": "old"}).regenerate == ["3-0"]
    assert regen.plan({"1-0": "a"}, {"1-0": "a"}, {"1-0"}).empty


def test_sensor_cursor_requests_once_per_version_and_retries_after_the_ttl():
    now, stored = {"1-0": "new"}, {"1-0": "old"}
    p, cursor = regen.advance(None, now, stored, {"1-0"}, clock=100.0)
    assert p.regenerate == ["1-0"]
    p, cursor = regen.advance(cursor, now, stored, {"1-0"}, clock=200.0)
    assert p.regenerate == []  # in flight
    p, cursor2 = regen.advance(cursor, now, stored, {"1-0"}, clock=100.0 + regen.IN_FLIGHT_TTL_SECONDS + 1)
    assert p.regenerate == ["1-0"]  # the run never stored it: ask again
    p, cursor = regen.advance(cursor, now, {"1-0": "new"}, {"1-0"}, clock=300.0)
    assert p.regenerate == [] and regen.load_cursor(cursor)["in_flight"] == {}
    # a revert to an older version is a change like any other
    p, _ = regen.advance(cursor, {"1-0": "old"}, {"1-0": "new"}, {"1-0"}, clock=400.0)
    assert p.regenerate == ["1-0"]


def test_tables_digest_covers_every_table_file(tmp_path):
    tables = tmp_path / "tables"
    shutil.copytree(FIXTURES / "small", tables)
    (tables / "nodemaps").mkdir()
    (tables / "nodemaps" / "level_1.toml").write_text("# a node map\n")
    digest, files = fingerprints.tables_digest(tables)
    assert set(files) == {"board_gen.toml", "variation.toml", "resource_weights.toml", "nodemaps/level_1.toml"}
    (tables / "nodemaps" / "level_1.toml").write_text("# a node map, edited\n")
    assert fingerprints.tables_digest(tables)[0] != digest


# --- pictures ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def batch_records():
    table = load_board_gen(SMALL)
    b = seeds.seed_batch(table, (2, 0), N)
    return b, seeds.generate_batch(b)


def test_worst_board_marks_r0_and_r_infinity_consistently_with_its_record(batch_records):
    b, records = batch_records
    for rec in records[:3]:
        text = drawings.draw_board(rec, b.spawn_side)
        grid = text.split("```")[1].strip().splitlines()[1:]
        regions = [line.split()[0] for line in grid]
        numbers = [line.split()[1] for line in grid]
        cells = "".join(regions)
        assert len(regions) == rec["height"] and all(len(r) == rec["width"] for r in regions)
        assert cells.count(drawings.R0_CELL) == rec["r0_size"]
        assert cells.count(drawings.R0_CELL) + cells.count(drawings.DEDUCED) == rec["revealed"]
        assert cells.count(drawings.MINE) == rec["mines_actual"]
        assert "".join(numbers).count(drawings.FOG) == rec["fog_cells"]
        assert f"--seed {rec['scope']}" in text


def _rec(revealed, safe):
    return {"revealed": revealed, "safe_count": safe}


def test_histogram_marks_the_target_and_counts_a_board_on_it_as_meeting_it():
    records = [_rec(17, 20), _rec(16, 20), _rec(20, 20), _rec(19, 20), _rec(33, 40)]  # .85 .80 1 .95 .825
    text = drawings.inferability_histogram(records, 0.85)
    lines = text.splitlines()
    marker = next(i for i, line in enumerate(lines) if "target 0.850" in line)
    below = [line for line in lines[:marker] if line.startswith("[")]
    above = [line for line in lines[marker:] if line.startswith("[")]
    assert sum(int(line.split()[-2 if line.endswith("!") else -1]) for line in below) == 2
    assert all(line.endswith("!") for line in below if not line.endswith(" 0"))
    assert sum(int(line.split()[-1]) for line in above) == 3
    assert "5 boards, 2 below target 0.850" in text
    # the board exactly on target (17/20) is the only one in the first bin above the marker, and no "!"
    first_above = lines[marker + 1]
    assert first_above.startswith("[0.850, 0.875) ") and first_above.split()[-1] == "1"


# --- publish -------------------------------------------------------------------------------------


def test_illegal_batch_is_rejected_and_withdraws_the_published_row(tmp_path, batch_records):
    b, records = batch_records
    root = tmp_path / "wh"
    data = datasets.encode(datasets.records_table(records))
    publish.publish_boards(root, b.key, data)
    publish.write_row_file(root, "calibration_report", b.key, datasets.encode(datasets.records_table([{"x": 1}])))
    publish.reject_boards(root, b.key, data)
    assert not datasets.partition_path(root, "boards", b.key).exists()
    assert not datasets.partition_path(root, "calibration_report", b.key).exists()
    assert currency.stored_fingerprint(root, b.key) == b.batch_fingerprint
    publish.publish_boards(root, b.key, data)
    assert not datasets.partition_path(root / publish.REJECTED, "boards", b.key).exists()
    assert publish.prune(root, keep=set()) == ["boards/(2,0)"]
    assert publish.keys_in(root, "boards") == set()


def test_views_are_swapped_in_while_a_session_holds_the_database(tmp_path, batch_records):
    b, records = batch_records
    root = tmp_path / "wh"
    db = views.refresh_views_atomic(root)
    held = duckdb.connect(str(db))  # read-write, like the duckdb shell
    try:
        publish.publish_boards(root, b.key, datasets.encode(datasets.records_table(records)))
        views.refresh_views_atomic(root)  # never opens the live file (cross-process: test_pipeline_concurrency)
        # the held session keeps its (old) file; a new session sees the new views
        assert held.execute("select count(*) from duckdb_views() where not internal").fetchone() == (0,)
    finally:
        held.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("select count(*) from boards").fetchone() == (N,)
        assert {r[0] for r in con.execute("select view_name from duckdb_views() where not internal").fetchall()} \
            == {"boards", "board_metrics"}
    finally:
        con.close()
    assert [p.name for p in root.iterdir() if p.name.endswith(".tmp")] == []
