"""The event log held open while a run writes its rows' events
(``assets.home.event_log_held_open``; docs/performance.md "Where the bytes
go"): with Dagster's run-sharded SQLite storage, SQLite checkpoints and
deletes the write-ahead log whenever the last connection closes, which
Dagster does after every statement. One idle connection held open keeps
the log between events (written once, checkpointed every 1,000 pages), never
blocks a writer, and leaves a clean file when it closes."""

import contextlib
import threading

import dagster as dg
import pytest

from boardgen_dagster import home
from boardgen_pipeline.warehouse import instance_storage

from .instance_support import marked

pytestmark = pytest.mark.usefixtures("dagster_home_restored")  # ensure_dagster_home sets it


def _index(instance):
    from pathlib import Path

    return Path(instance.event_log_storage.path_for_shard("index"))


def test_the_log_stays_between_events_while_held_and_is_checkpointed_after(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert dg.materialize([marked], instance=instance).success  # makes the index shard
        wal = _index(instance).with_name("index.db-wal")
        assert not wal.exists()  # Dagster's connection was the last: checkpointed and deleted
        with home.event_log_held_open(instance):
            result = dg.materialize([marked], instance=instance)
            assert result.success
            # held: the event's pages wait in the log instead of a checkpoint per statement
            assert wal.exists() and wal.stat().st_size > 0
            run_wal = _index(instance).with_name(f"{result.run_id}.db-wal")
            assert not run_wal.exists()  # a run not named is not held
        assert not wal.exists()  # the hold's close was the last: checkpointed into the database
        events = instance.fetch_materializations(dg.AssetKey("marked"), limit=10).records
        assert len(events) == 2


def test_a_held_run_shard_keeps_its_log_and_a_writer_beside_it_is_never_blocked(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        first = dg.materialize([marked], instance=instance)
        run_wal = _index(instance).with_name(f"{first.run_id}.db-wal")
        errors = []

        def write(n):
            try:
                for _ in range(n):
                    instance.report_runless_asset_event(dg.AssetMaterialization("marked"))
            except Exception as exc:  # a "database is locked" would land here
                errors.append(exc)

        with home.event_log_held_open(instance, first.run_id):
            assert run_wal.exists()  # the run's own file, held open in WAL mode
            threads = [threading.Thread(target=write, args=(20,)) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert errors == []
        assert not run_wal.exists()
        assert len(instance.fetch_materializations(dg.AssetKey("marked"), limit=100).records) == 41


def test_a_storage_without_shards_is_left_alone():
    class Storage:  # PostgreSQL's event log: no per-run files
        pass

    class Instance:
        event_log_storage = Storage()

    with home.event_log_held_open(Instance(), "run"):
        pass


def _page_size(path) -> int:
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute("pragma page_size").fetchone()[0]


def test_a_new_homes_databases_and_its_runs_files_have_small_pages(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")  # registers the page size before any storage opens
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        run = dg.materialize([marked], instance=instance)
        assert run.success
        index = _index(instance)
        for path in (index, index.with_name(f"{run.run_id}.db"), dh / "history" / "runs.db"):
            assert _page_size(path) == instance_storage.SQLITE_PAGE_SIZE == 1024, path


def test_a_database_made_with_other_pages_keeps_them_and_still_works(tmp_path, monkeypatch):
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    instance_storage.small_sqlite_pages()
    event.remove(Engine, "connect", instance_storage._page_size)  # as in a process that never registered it
    try:
        with monkeypatch.context() as m:
            m.setattr(instance_storage, "small_sqlite_pages", lambda: None)
            dh = home.ensure_dagster_home(tmp_path / "dh")
            with dg.DagsterInstance.from_config(str(dh)) as instance:
                assert dg.materialize([marked], instance=instance).success
        assert _page_size(dh / "history" / "runs" / "index.db") == 4096  # SQLite's default
    finally:
        instance_storage.small_sqlite_pages()
    with dg.DagsterInstance.from_config(str(dh)) as instance:  # registered again: the old files are read and written
        run = dg.materialize([marked], instance=instance)
        assert run.success
        assert _page_size(_index(instance)) == 4096
        assert _page_size(_index(instance).with_name(f"{run.run_id}.db")) == 1024  # a new run's file: small
        assert len(instance.fetch_materializations(dg.AssetKey("marked"), limit=10).records) == 2
