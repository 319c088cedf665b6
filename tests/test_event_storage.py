"""The local instance's event log (issue 22 "Write what you keep";
``assets/storage.py``): a new instance folder gets the pooled, group-committing
log and does not read as one to migrate; a thread sees its own events at
once, another thread or process when the group commits; a run's life cycle
commits at once; an event that fails rolls back alone; a process that ends
without closing its instance still commits its last group; and the log
writes a fraction of what Dagster's stock SQLite log writes for the same
events (bytes, counted by the kernel, not time)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import dagster as dg
import pytest
from dagster._core.events import DagsterEvent, DagsterEventType, StepMaterializationData
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage

from assets import home, storage

from .faults_support import REPO


@pytest.fixture(autouse=True)
def _restore_dagster_home(monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)  # ensure_dagster_home sets it: undone after each test


def materialization(i: int, run_id: str = "run-1", asset: str = "boards") -> EventLogEntry:
    event = DagsterEvent(event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value, job_name="job",
                         event_specific_data=StepMaterializationData(
                             dg.AssetMaterialization(asset, partition=f"{i}-0", metadata={"i": i})))
    return EventLogEntry(user_message="", level=10, job_name="job", run_id=run_id, error_info=None,
                         timestamp=time.time(), dagster_event=event)


def stored(instance, run_id: str = "run-1") -> list[int]:
    return sorted(int(r.event_log_entry.dagster_event.partition.split("-")[0])
                  for r in instance.get_records_for_run(run_id).records)


def test_a_new_instance_gets_the_pooled_log_and_reads_as_current(tmp_path, capsys):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    assert "migrated" not in capsys.readouterr().err  # a new instance is stamped at its head revision
    assert home.pooled_event_log(dh)
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert isinstance(instance.event_log_storage, storage.PooledSqliteEventLogStorage)
        assert home.storages_behind(instance) == {}
    assert (dh / "history" / "events" / "event_log.db").is_file()


def test_a_thread_sees_its_events_at_once_and_another_when_the_group_commits(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        log = instance.event_log_storage
        for i in range(3):
            log.store_event(materialization(i))
        assert stored(instance) == [0, 1, 2]  # the writing thread reads its open group
        other = {}
        reader = threading.Thread(target=lambda: other.setdefault("seen", stored(instance)))
        reader.start()
        reader.join()
        assert other["seen"] == [0, 1, 2]  # another thread's look commits the group first
        with dg.DagsterInstance.from_config(str(dh)) as second:  # another instance of the same folder
            assert stored(second) == [0, 1, 2]


def test_an_event_that_fails_rolls_back_alone(tmp_path, monkeypatch):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        log = instance.event_log_storage
        log.store_event(materialization(0))
        real = SqlEventLogStorage._store_asset_event

        def fails_for_one(self, conn, event, event_id):
            if event.dagster_event.partition == "1-0":
                raise RuntimeError("disk went away mid-event")
            return real(self, conn, event, event_id)

        monkeypatch.setattr(SqlEventLogStorage, "_store_asset_event", fails_for_one)
        with pytest.raises(RuntimeError):
            log.store_event(materialization(1))  # its row in event_logs was written before the failure
        log.store_event(materialization(2))
        log.flush()
        assert stored(instance) == [0, 2]  # nothing of event 1 is left, its neighbours are kept


def test_a_runs_life_cycle_commits_at_once(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        db = instance.event_log_storage._db
        instance.event_log_storage.store_event(materialization(0))
        assert db.group is not None  # an asset event waits for its group
        start = DagsterEvent(event_type_value=DagsterEventType.STEP_START.value, job_name="job", step_key="calibrate")
        instance.event_log_storage.store_event(EventLogEntry(
            user_message="", level=10, job_name="job", run_id="run-1", error_info=None, timestamp=time.time(),
            dagster_event=start))
        assert db.group is None  # the step's start committed it


WRITER = textwrap.dedent("""
    import sys, time
    import dagster as dg
    from tests.test_event_storage import materialization
    instance = dg.DagsterInstance.get()  # never closed: the process just ends
    for i in range(int(sys.argv[1])):
        instance.event_log_storage.store_event(materialization(i))
""")


def test_a_process_that_ends_without_closing_its_instance_commits_its_last_group(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    env = {**os.environ, "DAGSTER_HOME": str(dh), "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", WRITER, "5"], cwd=REPO, env=env, check=True, timeout=300)
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert stored(instance) == [0, 1, 2, 3, 4]


COUNTER = textwrap.dedent("""
    import sys
    import dagster as dg
    from tests.test_event_storage import materialization

    def written():
        with open("/proc/self/io") as fh:
            return int(next(line for line in fh if line.startswith("write_bytes")).split()[1])

    with dg.DagsterInstance.get() as instance:
        instance.event_log_storage.store_event(materialization(-1))  # creates the databases
        before = written()
        for i in range(int(sys.argv[1])):
            instance.event_log_storage.store_event(materialization(i))
    print(written() - before)
""")


def _bytes_written(dh, env, events: int) -> int:
    p = subprocess.run([sys.executable, "-c", COUNTER, str(events)], cwd=REPO, env={**env, "DAGSTER_HOME": str(dh)},
                       capture_output=True, text=True, check=True, timeout=300)
    return int(p.stdout.split()[-1])


def test_the_pooled_log_writes_a_fraction_of_what_the_stock_log_writes(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    pooled = home.ensure_dagster_home(tmp_path / "pooled")
    stock = tmp_path / "stock"
    stock.mkdir()
    (stock / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # Dagster's own SQLite storages
    events = 200
    ours, theirs = _bytes_written(pooled, env, events), _bytes_written(stock, env, events)
    assert ours * 10 < theirs, (ours, theirs)


def planned(keys: list[str]) -> EventLogEntry:
    from dagster._core.definitions.asset_checks.asset_check_evaluation import AssetCheckEvaluationPlanned
    from dagster._core.definitions.partitions.subset.default import DefaultPartitionsSubset

    data = AssetCheckEvaluationPlanned(asset_key=dg.AssetKey("boards"), check_name="a_no_board_below_target",
                                       partitions_subset=DefaultPartitionsSubset(set(keys)))
    event = DagsterEvent(event_type_value=DagsterEventType.ASSET_CHECK_EVALUATION_PLANNED.value, job_name="job",
                         event_specific_data=data)
    return EventLogEntry(user_message="", level=10, job_name="job", run_id="run-1", error_info=None,
                         timestamp=time.time(), dagster_event=event)


def test_a_partitioned_check_plans_one_small_row_a_partition(tmp_path):
    import sqlite3

    dh = home.ensure_dagster_home(tmp_path / "dh")
    keys = [f"{level}-{depth}" for level in range(1, 201) for depth in range(5)]
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        instance.event_log_storage.store_event(planned(keys))
        instance.event_log_storage.flush()
        key = dg.AssetCheckKey(dg.AssetKey("boards"), "a_no_board_below_target")
        info = instance.event_log_storage.get_asset_check_partition_info([key])
        assert sorted(i.partition_key for i in info) == sorted(keys)
        assert {i.latest_execution_status.value for i in info} == {"PLANNED"}
    con = sqlite3.connect(dh / "history" / "events" / "event_log.db")
    try:
        rows = con.execute("select partition, evaluation_event from asset_check_executions").fetchall()
    finally:
        con.close()
    assert len(rows) == len(keys)
    for partition, text in rows:  # each row's event names its own partition, not the run's 1,000
        assert f'"{partition}"' in text and len(text) < 2_000
