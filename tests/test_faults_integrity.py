"""Integrity faults: a flipped byte and a lost file are found and
regenerate exactly their row, a copied or moved warehouse reads its own
files, a writer killed with SIGKILL leaves nothing published lost and its
temporary files are swept at the next run."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap

import duckdb
import pytest

from boardgen_pipeline import files
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.steps import currency, regen
from boardgen_pipeline.warehouse import datasets, publish, views

from .faults_support import REPO, board, flip_byte, mines_sum, tiny_warehouse

ROWS = ["1-0", "1-1", "2-0"]


def test_a_flipped_byte_is_named_by_verify_and_regenerates_exactly_its_row(tmp_path):
    root = tiny_warehouse(tmp_path / "wh")
    assert publish.verify(root) == [] and currency.damaged_partitions(root).empty
    stored = currency.fingerprints_stored(root, ROWS)
    assert set(stored) == set(ROWS)

    bad = datasets.partition_path(root, "boards", (1, 1))
    flip_byte(bad)
    assert publish.verify(root) == [(bad, "digest mismatch (the file changed after it was written)")]
    p = subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", "verify", "--warehouse", str(root)],
                       capture_output=True, text=True, cwd=REPO)
    assert p.returncode == Exit.STORAGE and str(bad) in p.stdout and "1 of 7 files damaged" in p.stderr
    damage = currency.damaged_partitions(root)
    assert (damage.partitions, damage.by_dataset, damage.unpartitioned) == ({"1-1"}, {"boards": {"1-1"}}, set())
    # the sensor's and the nightly's plan: only that row is stale
    assert currency.fingerprints_stored(root, ROWS) == {k: v for k, v in stored.items() if k != "1-1"}
    assert regen.plan(stored, currency.fingerprints_stored(root, ROWS), ROWS).regenerate == ["1-1"]

    datasets.write_partition(root, "boards", (1, 1), [board(3, "fp(1, 1)")] * 2)  # the regeneration
    assert publish.verify(root) == [] and currency.fingerprints_stored(root, ROWS) == stored


def test_a_damaged_report_or_flat_file_and_a_lost_file_are_stale(tmp_path):
    root = tiny_warehouse(tmp_path / "wh")
    flip_byte(datasets.partition_path(root, "calibration_report", (2, 0)), at=0.1)
    assert publish.intact_keys(root, "calibration_report") == {(1, 0), (1, 1)}  # readers skip it
    assert set(currency.report_fingerprints(root)) == {(1, 0), (1, 1)}
    lost = datasets.partition_path(root, "boards", (1, 0))
    lost.unlink()
    strata = datasets.flat_path(root, "calibration_strata", "strata")
    assert currency.strata_fingerprint_stored(root) == "x"
    flip_byte(strata)
    damage = currency.damaged_partitions(root)
    assert damage.partitions == {"1-0", "2-0"} and damage.unpartitioned == {"calibration_strata"}
    assert damage.by_dataset == {"boards": {"1-0"}, "calibration_report": {"2-0"}}
    assert dict((p, why) for p, why in damage.files)[lost] == "missing"
    assert set(currency.fingerprints_stored(root, ROWS)) == {"1-1"}
    assert currency.strata_fingerprint_stored(root) is None


def test_a_quarantined_file_fails_only_its_own_row(tmp_path):
    root = tiny_warehouse(tmp_path / "wh")
    bad = datasets.partition_path(root, "calibration_report", (1, 1))
    bad.write_bytes(b"PAR1 not parquet at all PAR1")  # unreadable: a query over the glob would fail
    with pytest.raises(duckdb.Error):
        views.connect(root).execute("select count(*) from calibration_report").fetchall()
    damage = currency.damaged_partitions(root, quarantine=True)
    assert damage.partitions == {"1-1"} and not bad.exists()
    assert (root / publish.DAMAGED / "calibration_report" / "level_index=1" / "node_depth=1" / "part.parquet").exists()
    views.refresh_views_atomic(root)
    con = views.connect(root)
    assert con.execute("select level_index, node_depth from calibration_report order by all").fetchall() == \
        [(1, 0), (2, 0)]  # the other rows still answer
    con.close()
    assert publish.keys_in(root, "calibration_report") == {(1, 0), (2, 0)}
    assert currency.damaged_partitions(root).partitions == {"1-1"}  # still to regenerate: missing now
    assert "1-1" not in currency.fingerprints_stored(root, ROWS)


def test_a_copied_and_a_moved_warehouse_read_their_own_files(tmp_path):
    original = tiny_warehouse(tmp_path / "original", mines=3)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    assert publish.verify(copy) == []  # the digests travel with the files
    for key in ((1, 0), (1, 1), (2, 0)):  # the original moves on
        datasets.write_partition(original, "boards", key, [board(100)])
    assert mines_sum(original) == 300
    assert mines_sum(copy) == 18  # the copy's own files, not the original's
    raw = duckdb.connect(str(copy / datasets.DB_NAME), read_only=True)  # a plain session, after connect
    assert raw.execute("select sum(mines_actual) from boards").fetchone() == (18,)
    raw.close()

    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(str(copy), moved)
    assert mines_sum(moved) == 18


KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    import pyarrow.parquet as pq
    from boardgen_pipeline.warehouse import datasets
    root, mode = sys.argv[1], sys.argv[2]
    if mode == "mid-write":
        def half_then_die(fd):
            # the first fsync is the new file's temp copy: keep half of it on disk, then die
            os.ftruncate(fd, os.fstat(fd).st_size // 2)
            os.kill(os.getpid(), signal.SIGKILL)
        os.fsync = half_then_die
    else:  # between the digest's rename and the file's
        real_replace, calls = os.replace, []
        def replace_then_die(src, dst):
            real_replace(src, dst)
            calls.append(dst)
            if len(calls) == 1:
                os.kill(os.getpid(), signal.SIGKILL)
        os.replace = replace_then_die
    datasets.write_partition(root, "boards", (1, 0), [{"scope": 2, "mines_actual": 99, "layout": "**",
                                                     "batch_fingerprint": "new"}])
""")


def kill_writer(root, mode):
    p = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(root), mode], capture_output=True, text=True,
                       cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert p.returncode == -signal.SIGKILL, p.stderr


def test_a_writer_killed_mid_write_loses_nothing_and_its_temp_files_are_swept(tmp_path):
    root = tiny_warehouse(tmp_path / "wh")
    published = {p: p.read_bytes() for p in publish.published_files(root)}
    kill_writer(root, "mid-write")
    folder = datasets.partition_dir(root, "boards", (1, 0))
    leftovers = sorted(folder.glob(".*.tmp"))
    assert len(leftovers) == 1
    mine = files.temp_name(folder / "part.parquet")  # a live writer's (this process's) temp file
    mine.write_bytes(b"in progress")
    assert {p: p.read_bytes() for p in publish.published_files(root)} == published
    assert publish.verify(root) == [] and mines_sum(root) == 18
    assert publish.sweep_temp_files(root) == leftovers  # young, but its writer is dead
    assert mine.exists() and not leftovers[0].exists()
    mine.unlink()


def test_a_writer_killed_between_its_two_renames_reads_as_damaged_and_is_regenerated(tmp_path):
    root = tiny_warehouse(tmp_path / "wh")
    path = datasets.partition_path(root, "boards", (1, 0))
    before = path.read_bytes()
    kill_writer(root, "between-renames")
    assert path.read_bytes() == before  # the old file is still whole
    assert currency.damaged_partitions(root).partitions == {"1-0"}  # but no longer vouched for: regenerate it
    assert "1-0" not in currency.fingerprints_stored(root, ROWS)
    publish.sweep_temp_files(root)
    datasets.write_partition(root, "boards", (1, 0), [board(3, "fp(1, 0)")] * 2)
    assert publish.verify(root) == [] and not list(root.rglob(".*.tmp"))
