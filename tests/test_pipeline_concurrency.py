"""The warehouse under concurrency and crashes (SPEC 10):
``boardgen nightly`` runs every row partition in one Dagster run
while a reader queries DuckDB and another session holds the
database open;
a run killed in the middle of a Parquet write leaves nothing partial visible,
and a rerun writes the same bytes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from boardgen_pipeline.steps import currency
from boardgen_pipeline.warehouse import datasets, publish, views
from tests.nightly_support import BOARDGEN

from .test_pipeline_support import N, copy_fixture, defs_for, run_rows

pytestmark = pytest.mark.integration  # nightlies side by side, killed and rerun

REPO = Path(__file__).resolve().parent.parent

# Each subprocess below is waited on to its end, never against a clock that correct code could
# outrun (a cold numba cache alone compiles the kernels for minutes). HANG only turns a process
# that never ends into a failure instead of a stuck suite; it is no claim about speed.
HANG = 1800

# The reader queries until the nightly has ended (the test touches `stop` after the nightly
# process exits) or until the test itself is gone (its parent changes): it never gives up first.
READER = textwrap.dedent("""
    import json, os, sys, time, duckdb
    db, stop, out, parent = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    log = {"ok": [], "missing": 0, "errors": []}
    while os.getppid() == parent:
        try:
            con = duckdb.connect(db, read_only=True)
            try:
                n = con.execute("select count(*) from boards").fetchone()[0]
                log["ok"].append([time.time(), n])
            finally:
                con.close()
        except duckdb.CatalogException:
            log["missing"] += 1          # no view yet: the first partition is not published yet
        except Exception as exc:        # a lock error would land here
            log["errors"].append(f"{type(exc).__name__}: {exc}")
        if os.path.exists(stop):
            break
        time.sleep(0.02)
    json.dump(log, open(out, "w"))
""")


def test_partitions_run_concurrently_while_readers_query(tmp_path, monkeypatch):
    tables, root, home = copy_fixture("small", tmp_path), tmp_path / "warehouse", tmp_path / "dagster_home"
    db = views.refresh_views_atomic(root)  # an empty database, as after `make clean; make run` started
    held = duckdb.connect(str(db), read_only=True)  # a session kept open through the whole run
    stop, log = tmp_path / "stop", tmp_path / "reader.json"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db), str(stop), str(log), str(os.getpid())])
    try:
        started = time.time()
        nightly = subprocess.run(
            [BOARDGEN, "nightly", "--tables", str(tables), "--warehouse", str(root),
             "--samples", str(N), "--dagster-home", str(home), "--workers", "1"],
            cwd=REPO, capture_output=True, text=True, timeout=HANG,
        )
        ended = time.time()
    finally:
        stop.touch()
        reader.wait(timeout=HANG)
    output = nightly.stdout + nightly.stderr
    assert nightly.returncode == 0, output  # E warns on (1,1); warnings do not fail the run
    assert "lock" not in output.lower()
    assert "warn" in nightly.stdout and "make ui" in nightly.stdout and "boardgen sql" in nightly.stdout
    held.execute("select 1").fetchall()  # the held session was never disturbed
    held.close()

    reads = json.loads(log.read_text())
    assert reads["errors"] == []
    during = [n for t, n in reads["ok"] if started < t < ended]
    assert during, reads  # the reader got answers while the partitions were being written
    assert reads["ok"][-1][1] == 3 * N

    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as instance:  # the runs persisted where `make ui` would show them
        records = instance.get_run_records()
        # the tables and draws; every row (one lane: one range); the table-wide checks; retention
        assert sorted(r.dagster_run.job_name for r in records) == ["calibration_prepare", "calibration_retention",
                                                                   "calibration_rows", "calibration_table"]
        assert all(r.dagster_run.is_success for r in records)
        (main,) = [r.dagster_run for r in records if "dagster/asset_partition_range_start" in r.dagster_run.tags]
        assert (main.tags["dagster/asset_partition_range_start"], main.tags["dagster/asset_partition_range_end"]) \
            == ("1-0", "2-0")
        mats = instance.fetch_materializations(dg.AssetKey("boards"), limit=10).records
        assert sorted(m.partition_key for m in mats if m.run_id == main.run_id) == ["1-0", "1-1", "2-0"]
    assert sorted(publish.keys_in(root, "boards")) == [(1, 0), (1, 1), (2, 0)]


KILLER = textwrap.dedent("""
    import os, signal, sys, warnings
    tables, root = sys.argv[1:3]
    os.environ["BOARDGEN_TABLES"], os.environ["BOARDGEN_WAREHOUSE"], os.environ["BOARDGEN_SAMPLES"] = tables, root, "8"

    def half_then_die(fd):
        # the writer dies before its temp file is complete: keep half of it on disk, then SIGKILL
        os.ftruncate(fd, os.fstat(fd).st_size // 2)
        os.kill(os.getpid(), signal.SIGKILL)

    os.fsync = half_then_die
    import dagster as dg
    from boardgen_dagster.definitions import defs
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("board_gen_rows", ["1-0"])
    defs.resolve_job_def("calibration_rows").execute_in_process(instance=instance, partition_key="1-0")
    sys.exit(0)  # not reached
""")


def test_a_run_killed_mid_write_leaves_nothing_partial_and_a_rerun_is_idempotent(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    killed = subprocess.run([sys.executable, "-c", KILLER, str(tables), str(root)], cwd=REPO,
                            capture_output=True, text=True, timeout=HANG)
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    folder = datasets.partition_dir(root, "boards", (1, 0))
    leftovers = list(folder.iterdir())
    assert leftovers and all(p.name.startswith(".") and p.name.endswith(".tmp") for p in leftovers)
    assert not datasets.partition_path(root, "boards", (1, 0)).exists()
    assert publish.keys_in(root, "boards") == set()
    assert views.view_statements(root) == {}  # no view would see a partial file
    assert currency.fingerprints_stored(root, ["1-0"]) == {}  # so the sensor regenerates the row

    # rerun: the same bytes as a clean run elsewhere, and again on a second rerun
    clean_root = tmp_path / "clean"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("board_gen_rows", ["1-0"])
        assert run_rows(defs_for(tables, clean_root), instance, ["1-0"]).success
        for p in leftovers:  # age the killed writer's leftovers past the sweep threshold
            os.utime(p, (time.time() - 3600, time.time() - 3600))
        assert run_rows(defs_for(tables, root), instance, ["1-0"]).success
        first = datasets.partition_path(root, "boards", (1, 0)).read_bytes()
        assert run_rows(defs_for(tables, root), instance, ["1-0"]).success
        second = datasets.partition_path(root, "boards", (1, 0)).read_bytes()
    assert first == second == datasets.partition_path(clean_root, "boards", (1, 0)).read_bytes()
    assert [p.name for p in folder.iterdir()] == ["part.parquet"]  # the stale temp file was swept
