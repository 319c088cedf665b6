"""The local ``DAGSTER_HOME`` (SPEC 10: create it once, with migrations, before
several processes use it; issue 3 "a local DAGSTER_HOME under the repo that is
created before first use"; issue 14 "Killed runs do not block automation",
"the instance migration checks the database's revision").

``python -m assets.home`` creates ``$DAGSTER_HOME`` (default
``<repo>/.dagster_home``) with a ``dagster.yaml`` if it has none, and brings
its storage up to date (what ``dagster instance migrate`` does), under a file
lock so that ``make ui`` and ``make run`` started together do not race.
Whether to migrate is read from the storages themselves: each SQLite
storage's alembic revision against the installed Dagster's head revision (a
stamp file said "migrated" for a database that had since been replaced).

Run monitoring is on in the ``dagster.yaml`` written here, and added to an
older one that lacks it, so the daemon fails runs stuck STARTING and runs
past ``max_runtime_seconds``. The default run launcher cannot tell whether a
STARTED run's worker is alive, so ``fail_orphaned_runs`` does that for the
processes of this machine: the nightly calls it before it starts.

A corrupt instance database (``history/runs.db`` truncated, say) ends in one
``WarehouseError`` naming the file and the cause, not a traceback.
"""

import contextlib
import fcntl
import io
import os
import sys
from pathlib import Path

from boardgen_pipeline.errors import WarehouseError

REPO = Path(__file__).resolve().parent.parent
RUN_MONITORING = """\
# Orphaned runs (a killed process) are marked failed so the queue does not stay full
# (issue 14): stuck STARTING after 180 s, or STARTED for more than 4 hours. The default
# launcher cannot check a worker's health, so the nightly also fails runs whose process
# is gone (assets/home.py fail_orphaned_runs).
run_monitoring:
  enabled: true
  start_timeout_seconds: 180
  cancel_timeout_seconds: 180
  max_runtime_seconds: 14400
  max_resume_run_attempts: 0
  poll_interval_seconds: 60
  free_slots_after_run_end_seconds: 300
"""
EVENT_LOG_STORAGE = """\
# The event log: Dagster's consolidated SQLite log on one pooled engine per process (issue 22;
# assets/storage.py): the stock per-run log opened a connection and checkpointed for every event.
event_log_storage:
  module: assets.storage
  class: PooledSqliteEventLogStorage
"""
DAGSTER_YAML = """\
# Written by assets/home.py (boardgen). Local instance: SQLite storage in this folder.
# Runs launched from the UI, the nightly schedule and the table-edit sensor are queued and
# run two at a time (this machine has 2 cores); `make run` executes its runs directly.
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 2
    # a queued run starts within a second, not five (issue 23: a table edit's verdict in seconds)
    dequeue_interval_seconds: 1
telemetry:
  enabled: false
""" + EVENT_LOG_STORAGE + RUN_MONITORING


def dagster_home() -> Path:
    env = os.environ.get("DAGSTER_HOME")
    return Path(env).resolve() if env else REPO / ".dagster_home"


QUEUE_LINE = "    max_concurrent_runs: 2\n"
DEQUEUE_LINE = "    dequeue_interval_seconds: 1\n"


def migrate_yaml(yaml_path: Path) -> bool:
    """Give an existing ``dagster.yaml`` the run-monitoring block when it has
    none, and the one-second dequeue when it is the queue this module wrote
    (edited as text: the file's comments stay). True when changed."""
    import yaml

    text = yaml_path.read_text(encoding="utf-8")
    config = yaml.safe_load(text) or {}
    new = text
    if "run_monitoring" not in config:
        new = new.rstrip("\n") + "\n" + RUN_MONITORING
    queue = (config.get("run_coordinator") or {}).get("config") or {}
    if "dequeue_interval_seconds" not in queue and new.count(QUEUE_LINE) == 1:
        new = new.replace(QUEUE_LINE, QUEUE_LINE + DEQUEUE_LINE)
    if new == text:
        return False
    tmp = yaml_path.with_name(f".{yaml_path.name}.{os.getpid()}.tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, yaml_path)
    return True


def pooled_event_log(home: Path) -> bool:
    """Whether the instance at ``home`` keeps its events in the pooled log
    (``assets.storage``). A home made before it keeps its per-run log and its
    history: nothing here moves a user's runs (docs/decisions.md)."""
    import yaml

    try:
        config = yaml.safe_load((home / "dagster.yaml").read_text(encoding="utf-8")) or {}
    except OSError:
        return False
    return (config.get("event_log_storage") or {}).get("class") == "PooledSqliteEventLogStorage"


def storages_behind(instance) -> dict[str, tuple]:
    """The storages whose alembic revision is not the installed Dagster's
    head: ``{name: (database revision, head revision)}``."""
    out = {}
    for name, storage in (("runs", instance.run_storage), ("events", instance.event_log_storage),
                          ("schedules", instance.schedule_storage)):
        version = getattr(storage, "alembic_version", None)
        if storage is None or version is None:
            continue
        db_revision, head = version()
        if db_revision != head:
            out[name] = (db_revision, head)
    return out


def _instance_fault(home: Path, exc: BaseException) -> WarehouseError:
    """An exception from opening or migrating the instance as one sentence."""
    from boardgen_pipeline.warehouse.datasets import warehouse_error

    text = str(exc).lower()
    runs_db = home / "history" / "runs.db"
    for needle in ("file is not a database", "database disk image is malformed", "unsupported file format"):
        if needle in text:
            return WarehouseError(runs_db if runs_db.exists() else home,
                                  f"the Dagster instance database is corrupt ({needle}); move the folder "
                                  "aside to start a new instance history (the warehouse is not affected)")
    if "no such table" in text:
        return WarehouseError(home, "the Dagster instance database is incomplete (no such table); "
                                    "move the folder aside to start a new instance history")
    return warehouse_error(exc, home)


def ensure_dagster_home(path: Path | str | None = None) -> Path:
    """Create the instance folder, migrate its yaml and, when a storage's
    revision is behind, its databases; set ``DAGSTER_HOME``."""
    import dagster as dg
    import sqlalchemy.exc

    home = Path(path).resolve() if path else dagster_home()
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        home.mkdir(parents=True, exist_ok=True)
        with open(home / ".boardgen-init.lock", "a+") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                yaml = home / "dagster.yaml"
                if not yaml.exists():
                    yaml.write_text(DAGSTER_YAML)
                else:
                    migrate_yaml(yaml)
                with contextlib.redirect_stdout(io.StringIO()), dg.DagsterInstance.get() as instance:
                    behind = storages_behind(instance)
                    if behind:
                        instance.upgrade()  # what `dagster instance migrate` does
                        still = storages_behind(instance)
                        if still:
                            raise WarehouseError(home, f"the instance storage did not migrate ({still})")
                if behind:
                    print(f"Dagster home migrated (dagster {dg.__version__}): {home}", file=sys.stderr)
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    except WarehouseError:
        raise
    except (OSError, sqlalchemy.exc.SQLAlchemyError) as exc:
        raise _instance_fault(home, exc) from exc
    return home


def _alive(pid: int, since: float) -> bool:
    """Whether process ``pid`` is running and is the one that was running at
    ``since`` (a pid reused by a later process does not count)."""
    import psutil

    if pid == os.getpid():
        return True
    try:
        proc = psutil.Process(pid)
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE and proc.create_time() <= since + 1
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return True


def run_process(instance, run_id: str) -> tuple[int, float] | None:
    """``(pid, timestamp)`` of the process a run executes in, from its event
    log: the ``RUN_START`` event's (the run worker's; for
    ``execute_in_process``, the caller's) else ``RUN_STARTING``'s (the
    launcher's); None when neither is recorded."""
    import dagster as dg

    for event_type in (dg.DagsterEventType.RUN_START, dg.DagsterEventType.RUN_STARTING):
        records = instance.get_records_for_run(run_id, of_type=event_type, limit=1, ascending=False).records
        for record in records:
            event = record.event_log_entry.dagster_event
            if event is not None and event.pid is not None:
                return event.pid, record.event_log_entry.timestamp
    return None


def fail_orphaned_runs(instance, tags: dict[str, str] | None = None) -> list[str]:
    """Mark failed every STARTING or STARTED run (with ``tags``, when given)
    whose process on this machine is gone (killed with ``kill -9``, the
    machine rebooted); returns their run ids. Runs of this process and runs
    whose process is unknown are left alone."""
    import dagster as dg

    statuses = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]
    failed = []
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=statuses, tags=tags or {})):
        proc = run_process(instance, run.run_id)
        if proc is None or _alive(*proc):
            continue
        instance.report_run_failed(run, message=f"orphaned: its process (pid {proc[0]}) is gone; "
                                                "marked failed by boardgen before the next run")
        failed.append(run.run_id)
    return failed


def main() -> int:
    try:
        print(f"DAGSTER_HOME={ensure_dagster_home()}")
    except WarehouseError as exc:
        from boardgen_pipeline.steps.summary import EXIT_STORAGE

        print(f"error: {exc}", file=sys.stderr)
        return EXIT_STORAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
