"""The local instance's event log: Dagster's consolidated SQLite event log on
one pooled engine per process, committing events in groups (issue 22 "Write
what you keep", "Fixed costs"; SPEC 10 "a brand-new SQLite DAGSTER_HOME").

Dagster's SQLite storages create a new SQLAlchemy engine and connection for
every event they store (``NullPool``) and commit each event alone, and
SQLite checkpoints its write-ahead log into the database whenever the last
connection to it closes: every event paid an engine, a connection, a
checkpoint and an fsync, and rewrote the dozen pages it touches (the
events table, its five indexes, the asset and check tables): 6 ms and
~200 KiB written per event on this machine kind, 4 GB of writes for a
600-row nightly that keeps 190 MB. This storage

- keeps one engine per process with a small pool, so the log is
  checkpointed every 1,000 pages rather than every event;
- stores the events of one thread in one transaction for up to
  ``GROUP_SECONDS`` or ``GROUP_EVENTS`` events (group commit), each event in
  a savepoint of its own: consecutive events share the pages they touch,
  and a failing event rolls back alone; checkpoints every
  ``CHECKPOINT_PAGES`` pages of log, so a page many groups rewrite reaches
  the database file once; The thread that writes reads its own
  events at once (same connection); other threads and processes see them
  when the group commits, at most ``GROUP_SECONDS`` later (a timer commits
  an idle group, so no other writer waits longer than that for the lock);
- sets ``synchronous=NORMAL``: in WAL mode the database stays consistent on
  a power loss.

What a crash can lose is the last group of a step's asset and check
events (a second of them at most); a run's and a step's life cycle
commits at once, so a killed run is still seen as started, with its
process. The warehouse, fingerprinted and digested, is the record of what
was made, and a lost event costs at most a rerun of a row. The consolidated
layout writes each event once, where the per-run layout writes every asset
event twice (the run's shard and the index).

``assets.home`` writes it into a new instance's ``dagster.yaml``; every
Dagster process of the instance (the nightly, ``dagster dev``'s webserver
and daemon, run workers) then uses it. A shared production instance should
use ``dagster-postgres`` instead (docs/pipeline.md).
"""

import atexit
import os
import threading
import time
from contextlib import contextmanager

import sqlalchemy as sa
from dagster._core.storage.event_log import ConsolidatedSqliteEventLogStorage

BUSY_TIMEOUT_SECONDS = 30  # as Dagster's own SQLite storages
# the events a run records by the thousand, committed in groups; any other event commits at once
GROUPED = frozenset({"ASSET_MATERIALIZATION", "ASSET_CHECK_EVALUATION", "ASSET_OBSERVATION",
                     "ASSET_MATERIALIZATION_PLANNED", "ASSET_CHECK_EVALUATION_PLANNED", "STEP_OUTPUT"})
GROUP_SECONDS = 1.0
GROUP_EVENTS = 1024
CHECKPOINT_PAGES = 65536  # 256 MB of log between checkpoints: a page rewritten by many groups reaches the file once


class _Group:
    """One open transaction of one writing thread."""

    def __init__(self, conn, owner: int):
        self.conn = conn
        self.transaction = conn.begin()
        self.owner = owner
        self.started = time.monotonic()
        self.events = 0


class _Database:
    """One SQLite event log file as this process uses it: its engine, and the
    group of events a thread is writing into it. Shared by every storage
    object of the process on that file (Dagster opens several instances of
    one home), so that the writing thread reads its own events through any
    of them."""

    def __init__(self, conn_string: str):
        self.engine = sa.create_engine(conn_string, pool_size=4, max_overflow=8,
                                       connect_args={"timeout": BUSY_TIMEOUT_SECONDS, "check_same_thread": False})
        sa.event.listen(self.engine, "connect", _pragmas)
        sa.event.listen(self.engine, "begin", _begin)
        self.lock = threading.RLock()
        self.tables: set[str] = set()  # tables known to exist
        self.group: _Group | None = None
        self.timer: threading.Timer | None = None

    @contextmanager
    def connect(self):
        me = threading.get_ident()
        with self.lock:
            group = self.group
            if group is not None and group.owner != me:
                self.flush()  # another thread's events become visible before this thread reads or writes
                group = None
            if group is not None:
                # the writing thread reads and writes inside its open group: it sees its own events
                yield group.conn
                return
        with self.engine.connect() as conn, conn.begin():
            yield conn

    def store(self, write, now: bool = False) -> None:
        """``write()`` (one event's inserts) inside this thread's group;
        ``now``: commit the group with it (a run's or a step's life cycle)."""
        with self.lock:
            me = threading.get_ident()
            if self.group is not None and self.group.owner != me:
                self.flush()
            if self.group is None:
                self.group = _Group(self.engine.connect(), me)
                self.timer = threading.Timer(GROUP_SECONDS, self._flush_if, args=(self.group,))
                self.timer.daemon = True
                self.timer.start()
            savepoint = self.group.conn.begin_nested()  # an event that fails rolls back whole, alone
            try:
                write()
            except BaseException:
                savepoint.rollback()
                raise
            savepoint.commit()
            self.group.events += 1
            if now or self.group.events >= GROUP_EVENTS or time.monotonic() - self.group.started >= GROUP_SECONDS:
                self.flush()

    def _flush_if(self, group: _Group) -> None:
        with self.lock:
            if self.group is group:
                self.flush()

    def flush(self) -> None:
        with self.lock:
            group, self.group = self.group, None
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if group is None:
                return
            try:
                group.transaction.commit()
            finally:
                group.conn.close()


_databases: dict = {}  # (pid, connection string) -> _Database: a forked child opens its own
_databases_lock = threading.Lock()


def _database(conn_string: str) -> _Database:
    key = (os.getpid(), conn_string)
    with _databases_lock:
        db = _databases.get(key)
        if db is None:
            db = _databases[key] = _Database(conn_string)
        return db


class PooledSqliteEventLogStorage(ConsolidatedSqliteEventLogStorage):
    """``ConsolidatedSqliteEventLogStorage`` on one pooled engine per process,
    committing in groups (module docstring). ``base_dir`` defaults to
    ``$DAGSTER_HOME/history/events``, so a copied or moved instance folder
    keeps finding its events."""

    def __init__(self, base_dir: str | None = None, inst_data=None):
        base_dir = base_dir or os.path.join(os.environ["DAGSTER_HOME"], "history", "events")
        super().__init__(base_dir, inst_data=inst_data)

    @classmethod
    def config_type(cls):
        from dagster import Field, StringSource

        return {"base_dir": Field(StringSource, is_required=False)}

    @property
    def _db(self) -> _Database:
        return _database(self._conn_string)

    def _connect(self):
        return self._db.connect()

    def has_table(self, table_name: str) -> bool:
        # asked for every event (which optional tables exist); tables are added by a migration,
        # never removed while the instance runs
        known = self._db.tables
        if table_name not in known:
            with self._db.engine.connect() as conn:
                found = bool(self._db.engine.dialect.has_table(conn, table_name))
            if not found:
                return False
            known.add(table_name)
        return True

    def store_event(self, event) -> None:
        # a run's and a step's life cycle commits at once (a run killed next must be seen as started,
        # with its pid: assets/home.fail_orphaned_runs); rows' events wait for their group
        now = event.dagster_event is None or event.dagster_event.event_type_value not in GROUPED
        self._db.store(lambda: super(PooledSqliteEventLogStorage, self).store_event(event), now)

    def store_event_batch(self, events) -> None:
        for event in events:
            self.store_event(event)

    def flush(self) -> None:
        """Commit the open group of events, if any (other readers then see it)."""
        self._db.flush()

    def _store_asset_check_evaluation_planned(self, event, event_id) -> None:
        """One planned row per partition, each holding the planned event of its
        own partition. Dagster's storage copies the whole planned event, with
        the run's every partition in it, into each partition's row: at N rows
        that is N rows of N keys (3.6 GB written for 6,000 rows), for the same
        facts."""
        from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus
        from dagster._core.storage.event_log.schema import AssetCheckExecutionsTable
        from dagster._record import copy
        from dagster_shared.serdes import serialize_value

        planned = event.dagster_event.event_specific_data
        subset = planned.partitions_subset
        if subset is None:
            super()._store_asset_check_evaluation_planned(event, event_id)
            return
        empty = subset.empty_subset()
        rows = []
        for key in subset.get_partition_keys():
            own = copy(planned, partitions_subset=empty.with_partition_keys([key]))
            row_event = event._replace(dagster_event=event.dagster_event._replace(event_specific_data=own))
            rows.append(dict(asset_key=planned.asset_key.to_string(), check_name=planned.check_name, partition=key,
                             run_id=event.run_id, execution_status=AssetCheckExecutionRecordStatus.PLANNED.value,
                             evaluation_event=serialize_value(row_event),
                             evaluation_event_timestamp=self._event_insert_timestamp(event),
                             evaluation_event_storage_id=event_id))
        if rows:
            with self.index_connection() as conn:
                conn.execute(AssetCheckExecutionsTable.insert().values(rows))

    def alembic_version(self):
        """``(database revision, head revision)``: what ``assets.home`` reads to
        decide whether the instance needs ``dagster instance migrate``."""
        from dagster._core.storage.sql import check_alembic_revision

        with self._connect() as conn:
            return check_alembic_revision(_alembic_config(), conn)

    def _init_db(self):
        super()._init_db()
        # The consolidated storage stamps a new database's revision on a connection it never
        # commits: stamp it here, so a new instance does not read as one to migrate.
        from dagster._core.storage.sql import stamp_alembic_rev

        database, _head = self.alembic_version()
        if database is None:
            with self._connect() as conn:
                stamp_alembic_rev(_alembic_config(), conn)

    def dispose(self) -> None:
        self.flush()
        super().dispose()


@atexit.register
def _flush_all() -> None:
    # a process that ends without closing its instance still commits its last group
    for db in list(_databases.values()):
        try:
            db.flush()
        except Exception:  # the interpreter is going away: nothing left to tell
            pass


def _alembic_config():
    from dagster._core.storage.event_log.sqlite import consolidated_sqlite_event_log
    from dagster._core.storage.sql import get_alembic_config

    return get_alembic_config(consolidated_sqlite_event_log.__file__)


def _pragmas(dbapi_connection, _record) -> None:
    # pysqlite opens transactions on its own and commits when a SAVEPOINT it did not open is
    # released, so savepoints inside a group would commit it: SQLAlchemy's recipe for SQLite
    # savepoints hands the transaction to SQLAlchemy (no implicit BEGIN; ``_begin`` emits it)
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
    cursor.execute("PRAGMA temp_store=MEMORY")  # the sorts of Dagster's queries need no temporary files
    cursor.close()


def _begin(conn) -> None:
    conn.exec_driver_sql("BEGIN")
