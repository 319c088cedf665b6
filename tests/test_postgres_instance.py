"""A production instance, tested for real: a Dagster home whose
``dagster.yaml`` names PostgreSQL storage (``dagster-postgres``, the URL as
Dagster's docs write it) on a real server (a throwaway one the session starts:
tests/postgres_server.py; fixtures in tests/conftest.py). Every process of the instance uses it and
the project never rewrites it; the nightly writes the bytes the SQLite
instance's nightly writes; a table edit is one run; two nightlies at once on
one instance both succeed; a run killed mid-way reads as failed and the
rerun repairs it; a server that does not answer, or refuses the login, is
one sentence and nothing written."""

from __future__ import annotations

import signal
import time

import dagster as dg
import psutil
import pytest

from boardgen_dagster.home import ensure_dagster_home
from boardgen_pipeline.steps import night

from .conftest import postgres_yaml, with_password
from .nightly_support import nightly, parquet_files

pytestmark = pytest.mark.integration


@pytest.fixture
def instance_at(monkeypatch):
    def open_(home):
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        return dg.DagsterInstance.get()
    return open_


def test_the_users_storage_is_what_the_instance_uses_and_is_never_rewritten(postgres_home, instance_at):
    before = (postgres_home / "dagster.yaml").read_text()
    ensure_dagster_home(postgres_home)
    assert (postgres_home / "dagster.yaml").read_text() == before  # the user's file: never edited
    with instance_at(postgres_home) as instance:
        assert type(instance.run_storage).__module__.startswith("dagster_postgres")
        assert type(instance.event_log_storage).__module__.startswith("dagster_postgres")
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"  # stock, not a subclass
    assert not (postgres_home / "history").exists()  # no SQLite beside it


def test_the_nightly_on_postgresql_writes_the_bytes_of_the_sqlite_nightly(postgres_home, small_nightly, tmp_path,
                                                                          instance_at):
    root = tmp_path / "warehouse"
    rc, out, err = nightly(small_nightly["tables"], root, postgres_home, samples=small_nightly["samples"])
    assert rc == 0, out + err
    assert parquet_files(root) == small_nightly["files"]
    with instance_at(postgres_home) as instance:
        stages = sorted({night.stage_of(r.dagster_run.tags[night.KEY_TAG]) for r in instance.get_run_records()})
        assert stages == [night.PREPARE, night.RETENTION, night.ROWS, night.TABLE]
        status = instance.get_status_by_partition(dg.AssetKey("boards"), ["1-0", "1-1", "2-0"],
                                                  dg.DynamicPartitionsDefinition(name="board_gen_rows"))
        assert set(status.values()) == {dg.AssetPartitionStatus.MATERIALIZED}


def test_a_table_edit_is_one_run_on_postgresql(postgres_home, small_nightly, tmp_path, instance_at):
    from boardgen_dagster.automation import table_edit_sensor

    from .test_pipeline_support import copy_fixture, defs_for, edit_row, materialize_graph, run_request, settings_for

    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    ensure_dagster_home(postgres_home)
    defs, settings = defs_for(tables, root), settings_for(tables, root)
    with instance_at(postgres_home) as instance:
        materialize_graph(defs, instance)
        edit_row(tables, (1, 0), "inferability_target", 0.87)
        with dg.build_sensor_context(instance=instance, definitions=defs, resources={"settings": settings}) as ctx:
            result = table_edit_sensor(ctx)
        (request,) = result.run_requests
        assert request.partition_key == "1-0"
        run = run_request(defs, instance, request)
        assert run.success
        mats = instance.fetch_materializations(dg.AssetKey("boards"), limit=10).records
        assert mats[0].run_id == run.run_id and mats[0].partition_key == "1-0"
        assert {c.check_name: c.passed for c in run.get_asset_check_evaluations()}["every_row_passes_f4"]


def test_two_nightlies_at_once_on_one_instance_both_succeed(postgres_home, small_nightly, tmp_path, instance_at):
    ensure_dagster_home(postgres_home)  # made once, before both (SPEC 10)
    procs = [nightly(small_nightly["tables"], tmp_path / f"warehouse{i}", postgres_home, wait=False,
                     samples=small_nightly["samples"]) for i in range(2)]
    results = [(p.wait(timeout=1200), *p.communicate()) for p in procs]
    for i, (rc, out, err) in enumerate(results):
        assert rc == 0, out + err
        assert parquet_files(tmp_path / f"warehouse{i}") == small_nightly["files"]
    with instance_at(postgres_home) as instance:
        records = instance.get_run_records()
        assert all(r.dagster_run.is_success for r in records)
        nights = {}
        for r in records:
            nights.setdefault(r.dagster_run.tags[night.NIGHT_TAG], set()).add(night.stage_of(r.dagster_run.tags[night.KEY_TAG]))
        assert list(nights.values()) == [{night.PREPARE, night.ROWS, night.TABLE, night.RETENTION}] * 2


def _lane_of(proc: psutil.Process, pid: str):
    """The nightly's lane process ``pid`` (a run's executor tag), if it is one
    (a lane is a fork of its server, a child of the nightly)."""
    for child in proc.children(recursive=True):
        try:
            if str(child.pid) == pid:
                return child
        except psutil.Error:
            continue
    return None


def test_a_run_killed_mid_way_reads_as_failed_and_the_rerun_repairs_it(postgres_home, small_nightly, tmp_path,
                                                                       instance_at):
    root = tmp_path / "warehouse"
    ensure_dagster_home(postgres_home)
    proc = nightly(small_nightly["tables"], root, postgres_home, wait=False, samples=small_nightly["samples"])
    parent, killed = psutil.Process(proc.pid), None
    with instance_at(postgres_home) as instance:
        while proc.poll() is None and killed is None:
            rows = [r for r in instance.get_run_records(dg.RunsFilter(job_name="calibration_rows"))
                    if r.dagster_run.status == dg.DagsterRunStatus.STARTED]
            lane = _lane_of(parent, str((night.executor_of(rows[0].dagster_run.tags) or ("", ""))[1])) if rows else None
            if lane is not None:
                lane.send_signal(signal.SIGKILL)
                killed = rows[0].dagster_run.run_id
            time.sleep(0.05)
        out, err = proc.communicate(timeout=1200)
        assert killed is not None, "the rows run never started"
        assert proc.returncode == 4, out + err  # a run failed: the nightly says so
        assert instance.get_run_by_id(killed).status == dg.DagsterRunStatus.FAILURE
        status = instance.get_status_by_partition(dg.AssetKey("boards"), ["1-0", "1-1", "2-0"],
                                                  dg.DynamicPartitionsDefinition(name="board_gen_rows"))
        assert dg.AssetPartitionStatus.FAILED in status.values()  # what the kill left undone reads as failed
    rc, out, err = nightly(small_nightly["tables"], root, postgres_home, samples=small_nightly["samples"])
    assert rc == 0, out + err
    assert parquet_files(root) == small_nightly["files"]
    with instance_at(postgres_home) as instance:
        status = instance.get_status_by_partition(dg.AssetKey("boards"), ["1-0", "1-1", "2-0"],
                                                  dg.DynamicPartitionsDefinition(name="board_gen_rows"))
        assert set(status.values()) == {dg.AssetPartitionStatus.MATERIALIZED}


@pytest.mark.parametrize("how", ["no server", "wrong password"])
def test_a_server_that_does_not_answer_or_refuses_the_login_is_one_sentence(how, postgres_database, tmp_path):
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(postgres_database)
    if how == "no server":
        # a closed loopback port; the query goes too: a `host=` there (the throwaway server's socket) wins over it
        url = urlunsplit(parts._replace(netloc=f"{parts.username}:{parts.password}@127.0.0.1:1", query=""))
    else:
        url = with_password(postgres_database, "not-the-password")
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(postgres_yaml(url))
    tables = tmp_path / "tables"
    import shutil

    from .test_pipeline_support import FIXTURES

    shutil.copytree(FIXTURES / "small", tables)
    rc, out, err = nightly(tables, tmp_path / "warehouse", home)
    assert rc == 6, out + err  # exits.Exit.UNAVAILABLE: the server, not the storage, is what is missing
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err
    assert "storage: postgres" in lines[0]
    assert ("connection refused" in lines[0]) if how == "no server" else ("refused the login" in lines[0])
    assert not (tmp_path / "warehouse").exists() or not list((tmp_path / "warehouse").rglob("*.parquet"))


def test_retention_forgets_a_run_whole_on_postgresql(postgres_home, postgres_database, small_nightly, tmp_path):
    """The second night keeps its newest run (and what holds the latest state):
    the first night's rows and table runs go, with their events and their
    check evaluations (``boardgen_dagster.retention.forget``)."""
    import re

    from .conftest import _pg_connect

    rc, out, err = nightly(small_nightly["tables"], tmp_path / "wh", postgres_home, samples=small_nightly["samples"])
    assert rc == 0, out + err
    rc, out, err = nightly(small_nightly["tables"], tmp_path / "wh", postgres_home, "--keep-runs", "1",
                           samples=small_nightly["samples"])
    assert rc == 0, out + err
    forgotten = int(re.search(r"retention: (\d+) old runs? forgotten", " ".join(out.split())).group(1))
    db = _pg_connect(postgres_database)
    try:
        cur = db.cursor()
        cur.execute("select run_id from runs")
        runs = {r for (r,) in cur.fetchall()}
        cur.execute("select distinct run_id from asset_check_executions")
        checked = {r for (r,) in cur.fetchall()}
        cur.execute("select distinct run_id from event_logs where run_id <> ''")
        logged = {r for (r,) in cur.fetchall()}
    finally:
        db.close()
    assert forgotten >= 2  # the first night's rows and table runs
    assert checked and checked <= runs  # no check evaluation of a forgotten run
    assert logged <= runs  # nor any of its events
