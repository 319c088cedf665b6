"""Issue 14, the Dagster instance: a run whose process was killed with
SIGKILL is failed (so the queue does not stay full) while a live one is left
alone; an old dagster.yaml gets run monitoring; migration follows the
storage's alembic revision; a truncated runs.db ends in one sentence."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import dagster as dg
import pytest

from boardgen_dagster import home
from boardgen_pipeline.errors import WarehouseError
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.warehouse import instance as yaml_parts

from .faults_support import REPO


@pytest.fixture(autouse=True)
def _restore_dagster_home(monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)  # ensure_dagster_home sets it: undone after each test


RUNNER = textwrap.dedent("""
    import os, signal, sys, time
    import dagster as dg
    mode, ready = sys.argv[1], sys.argv[2]

    @dg.op
    def work():
        open(ready, "w").close()
        if mode == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(600)

    @dg.job(tags={"boardgen/kind": "fault-test"})
    def job():
        work()

    with dg.DagsterInstance.get() as instance:
        job.execute_in_process(instance=instance)
""")


def start_runner(mode: str, ready, env):
    return subprocess.Popen([sys.executable, "-c", RUNNER, mode, str(ready)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_for(path, proc, seconds=240):
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None or path.exists() or proc.returncode == -signal.SIGKILL, proc.returncode
        assert time.monotonic() < deadline, "the runner never started its op"
        time.sleep(0.2)


def test_runs_of_a_killed_process_are_failed_and_live_ones_kept(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    env = {**os.environ, "DAGSTER_HOME": str(dh), "PYTHONPATH": str(REPO)}
    dead = start_runner("die", tmp_path / "dead.ready", env)
    live = start_runner("hang", tmp_path / "live.ready", env)
    try:
        wait_for(tmp_path / "dead.ready", dead)
        wait_for(tmp_path / "live.ready", live)
        assert dead.wait(timeout=60) == -signal.SIGKILL
        with dg.DagsterInstance.from_config(str(dh)) as instance:
            started = instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
            assert len(started) == 2  # what blocked the queue: the killed run stays STARTED
            pids = {r.run_id: home.run_process(instance, r.run_id)[0] for r in started}
            assert set(pids.values()) == {dead.pid, live.pid}
            failed = home.fail_orphaned_runs(instance, tags={"boardgen/kind": "fault-test"})
            assert [pids[r] for r in failed] == [dead.pid]
            assert instance.get_run_by_id(failed[0]).status == dg.DagsterRunStatus.FAILURE
            live_id = next(r for r, pid in pids.items() if pid == live.pid)
            assert instance.get_run_by_id(live_id).status == dg.DagsterRunStatus.STARTED
            assert home.fail_orphaned_runs(instance, tags={"other": "tag"}) == []
    finally:
        live.kill()
        live.wait()


def test_an_old_dagster_yaml_gets_run_monitoring_and_keeps_its_settings(tmp_path):
    dh = tmp_path / "dh"
    dh.mkdir()
    old = yaml_parts.DAGSTER_YAML.replace(yaml_parts.RUN_MONITORING, "")
    (dh / "dagster.yaml").write_text(old)
    home.ensure_dagster_home(dh)
    text = (dh / "dagster.yaml").read_text()
    assert text.startswith(old) and "run_monitoring:" in text
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert instance.run_monitoring_enabled and instance.run_monitoring_max_resume_run_attempts == 0
    assert yaml_parts.migrate_yaml(dh / "dagster.yaml") is False  # once only


def test_an_old_queue_gets_the_one_second_dequeue_and_a_users_own_is_kept(tmp_path):
    """Issue 23: queued runs (the sensor's) start within a second; a home
    written before keeps its comments, and an interval the user set stays."""
    dh = tmp_path / "dh"
    dh.mkdir()
    old = "".join(line for line in yaml_parts.DAGSTER_YAML.splitlines(keepends=True)
                  if "dequeue" not in line)
    (dh / "dagster.yaml").write_text(old)
    home.ensure_dagster_home(dh)
    text = (dh / "dagster.yaml").read_text()
    assert text == old.replace(yaml_parts.QUEUE_LINE, yaml_parts.QUEUE_LINE + yaml_parts.DEQUEUE_LINE)
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert instance.run_coordinator.dequeue_interval_seconds == 1
    assert yaml_parts.migrate_yaml(dh / "dagster.yaml") is False  # once only
    own = old.replace(yaml_parts.QUEUE_LINE, yaml_parts.QUEUE_LINE + "    dequeue_interval_seconds: 7\n")
    (dh / "dagster.yaml").write_text(own)
    assert yaml_parts.migrate_yaml(dh / "dagster.yaml") is False and (dh / "dagster.yaml").read_text() == own


def test_migration_follows_the_storage_revision_not_a_stamp_file(tmp_path):
    from alembic.script import ScriptDirectory
    from dagster._core.storage.runs.sqlite import sqlite_run_storage
    from dagster._core.storage.sql import get_alembic_config

    dh = home.ensure_dagster_home(tmp_path / "dh")
    (dh / f".boardgen-migrated-{dg.__version__}").touch()  # the old stamp says "done": it must not matter
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        db_rev, head = instance.run_storage.alembic_version()
    assert db_rev == head
    previous = ScriptDirectory.from_config(get_alembic_config(sqlite_run_storage.__file__)).get_revision(head).down_revision
    with sqlite3.connect(dh / "history" / "runs.db") as con:
        con.execute("update alembic_version set version_num = ?", (previous,))
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert home.storages_behind(instance) == {"runs": (previous, head)}
    home.ensure_dagster_home(dh)
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert home.storages_behind(instance) == {}


def test_a_truncated_runs_db_ends_in_one_sentence(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    runs_db = dh / "history" / "runs.db"
    with open(runs_db, "r+b") as fh:
        fh.truncate(100)
    with pytest.raises(WarehouseError) as err:
        home.ensure_dagster_home(dh)
    assert err.value.path == str(runs_db) and "corrupt" in err.value.cause
    p = subprocess.run([sys.executable, "-m", "boardgen_dagster.home"], capture_output=True, text=True, cwd=REPO,
                       env={**os.environ, "DAGSTER_HOME": str(dh), "PYTHONPATH": str(REPO)}, timeout=240)
    assert p.returncode == Exit.STORAGE and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and str(runs_db) in p.stderr and "corrupt" in p.stderr


def test_a_home_an_older_boardgen_made_keeps_its_events_under_dagsters_own_class(tmp_path):
    """Issue 28: the pooled event log class is gone; the database it wrote is
    Dagster's consolidated SQLite log, which the migrated yaml names."""
    dh = tmp_path / "dh"
    dh.mkdir()
    old = yaml_parts.DAGSTER_YAML + yaml_parts.OLD_EVENT_LOG.join(("event_log_storage:\n", ""))
    (dh / "dagster.yaml").write_text(old)
    assert yaml_parts.migrate_yaml(dh / "dagster.yaml") is True
    text = (dh / "dagster.yaml").read_text()
    assert "assets.storage" not in text and "class: ConsolidatedSqliteEventLogStorage" in text
    assert f"base_dir: {dh / 'history' / 'events'}" in text
    home.ensure_dagster_home(dh)
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert type(instance.event_log_storage).__name__ == "ConsolidatedSqliteEventLogStorage"
