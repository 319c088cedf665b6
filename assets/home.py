"""The Dagster home: created once, migrated when Dagster moves, the user's
``dagster.yaml`` respected (SPEC 10 "create it once"; issue 14 "killed runs
do not block"; issue 28 "a production instance, tested for real").

``python -m assets.home`` creates ``$DAGSTER_HOME`` (default
``<repo>/.dagster_home``) with a ``dagster.yaml`` when it has none: Dagster's
stock SQLite storage in the folder, the queued run coordinator, run
monitoring. A ``dagster.yaml`` the user wrote is theirs: its storage (e.g.
``storage: postgres:`` through ``dagster-postgres``) is what every process of
the instance uses, and this module only adds, as text, the settings the
project needs and the file lacks (run monitoring; a one-second dequeue for
the queue it wrote). The storages are migrated when their alembic revision is
behind the installed Dagster's (``dagster instance migrate``), under a lock,
so ``make ui`` and ``make run`` started together do not race.

A storage that cannot be opened is one sentence naming the setting and the
cause (:class:`InstanceError`), not a traceback: a corrupt ``runs.db``, a
PostgreSQL server that does not answer or refuses the login. The default
run launcher cannot tell whether a STARTED run's process is alive, so
``fail_orphaned_runs`` does that for the processes of this machine.
"""

import contextlib
import io
import os
import sys
from pathlib import Path

from boardgen_pipeline import files
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
DAGSTER_YAML = """\
# Written by assets/home.py (boardgen). Local instance: Dagster's own SQLite storage in this
# folder. For a shared instance, put a storage block here (storage: postgres: ..., with
# dagster-postgres); boardgen never changes a storage this file names (docs/pipeline.md).
# Runs launched from the UI, the nightly schedule and the table-edit sensor are queued and
# run two at a time (this machine has 2 cores); `make run` executes its runs in processes
# of its own, one per core.
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 2
    # a queued run starts within a second, not five (issue 23: a table edit's verdict in seconds)
    dequeue_interval_seconds: 1
telemetry:
  enabled: false
""" + RUN_MONITORING
QUEUE_LINE = "    max_concurrent_runs: 2\n"
DEQUEUE_LINE = "    dequeue_interval_seconds: 1\n"
# What an older boardgen wrote: its own event log class, gone since issue 28. Its database is
# Dagster's consolidated SQLite event log (the class it extended), which the block now names.
OLD_EVENT_LOG = "  module: assets.storage\n  class: PooledSqliteEventLogStorage\n"
STOCK_EVENT_LOG = ("  module: dagster._core.storage.event_log\n  class: ConsolidatedSqliteEventLogStorage\n"
                   "  config:\n    base_dir: {base_dir}\n")


class InstanceError(WarehouseError):
    """The Dagster instance's storage cannot be opened or migrated."""


def dagster_home() -> Path:
    env = os.environ.get("DAGSTER_HOME")
    return Path(env).resolve() if env else REPO / ".dagster_home"


def migrate_yaml(yaml_path: Path) -> bool:
    """Add what the project needs to an existing ``dagster.yaml`` (edited as
    text: the file's comments and every other setting stay): run monitoring
    when it has none, the one-second dequeue for the queue this module wrote,
    and Dagster's own class for the event log an older boardgen named. True
    when changed."""
    import yaml

    text = yaml_path.read_text(encoding="utf-8")
    config = yaml.safe_load(text) or {}
    new = text
    if "run_monitoring" not in config:
        new = new.rstrip("\n") + "\n" + RUN_MONITORING
    queue = (config.get("run_coordinator") or {}).get("config") or {}
    if "dequeue_interval_seconds" not in queue and new.count(QUEUE_LINE) == 1:
        new = new.replace(QUEUE_LINE, QUEUE_LINE + DEQUEUE_LINE)
    if OLD_EVENT_LOG in new:
        new = new.replace(OLD_EVENT_LOG, STOCK_EVENT_LOG.format(base_dir=yaml_path.parent / "history" / "events"))
    if new == text:
        return False
    files.atomic_write(yaml_path, new)
    return True


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


def storage_setting(home: Path) -> str:
    """Which setting of ``dagster.yaml`` names the storage, in words."""
    import yaml

    try:
        config = yaml.safe_load((home / "dagster.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        config = {}
    storage = config.get("storage") or {}
    if "postgres" in storage:
        return f"the PostgreSQL storage of {home / 'dagster.yaml'} (storage: postgres)"
    for key in ("run_storage", "event_log_storage", "schedule_storage"):
        if key in config:
            return f"the {key} of {home / 'dagster.yaml'}"
    return f"the SQLite storage in {home}"


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and the ones it was raised from (dagster-postgres wraps the
    server's refusal in "too many retries")."""
    out = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def instance_fault(home: Path, exc: BaseException) -> InstanceError:
    """An exception from opening or migrating the instance, as one sentence."""
    chain = _chain(exc)
    exc = chain[-1]  # the innermost: the server's or the file system's own words
    text = " ".join(str(e) for e in chain).lower()
    runs_db = home / "history" / "runs.db"
    for needle in ("file is not a database", "database disk image is malformed", "unsupported file format"):
        if needle in text:
            return InstanceError(runs_db if runs_db.exists() else home,
                                 f"the Dagster instance database is corrupt ({needle}); move the folder "
                                 "aside to start a new instance history (the warehouse is not affected)")
    if "no such table" in text:
        return InstanceError(home, "the Dagster instance database is incomplete (no such table); "
                                   "move the folder aside to start a new instance history")
    for needle, cause in (("password authentication failed", "the server refused the login"),
                          ('role "', "the server refused the login"),
                          ("connection refused", "no server answers there (connection refused)"),
                          ("could not translate host name", "the host name does not resolve"),
                          ("timeout expired", "the server did not answer in time"),
                          ("does not exist", "the database does not exist on that server")):
        if needle in text:
            first = str(exc).strip().splitlines()[0][:200]
            return InstanceError(storage_setting(home), f"{cause}: {first}")
    if isinstance(exc, OSError):
        from boardgen_pipeline.warehouse.datasets import warehouse_error

        fault = warehouse_error(exc, home)
        return InstanceError(fault.path, fault.cause)
    first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return InstanceError(storage_setting(home), f"the storage cannot be opened: {first}")


@contextlib.contextmanager
def _quiet_retries():
    """dagster-postgres logs each retry of a refused connection to the root
    logger; the one sentence after the last retry is what a person reads."""
    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def ensure_dagster_home(path: Path | str | None = None) -> Path:
    """Create the instance folder and its ``dagster.yaml`` when missing, add
    what the project needs to an existing one, migrate its storages when
    their revision is behind; set ``DAGSTER_HOME``."""
    import dagster as dg

    home = Path(path).resolve() if path else dagster_home()
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        home.mkdir(parents=True, exist_ok=True)
        with files.lock(home / ".boardgen-init.lock"):
            yaml_path = home / "dagster.yaml"
            if not yaml_path.exists():
                files.atomic_write(yaml_path, DAGSTER_YAML)
            else:
                migrate_yaml(yaml_path)
            with contextlib.redirect_stdout(io.StringIO()), _quiet_retries(), dg.DagsterInstance.get() as instance:
                behind = storages_behind(instance)
                if behind:
                    instance.upgrade()  # what `dagster instance migrate` does
                    still = storages_behind(instance)
                    if still:
                        raise InstanceError(home, f"the instance storage did not migrate ({still})")
            if behind:
                print(f"Dagster home migrated (dagster {dg.__version__}): {home}", file=sys.stderr)
    except WarehouseError:
        raise
    except Exception as exc:  # a storage that cannot be opened: sqlite3, psycopg2, SQLAlchemy, OSError
        raise instance_fault(home, exc) from exc
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
    """``(pid, timestamp)`` of the process a run executes in, from its
    ``RUN_START`` event (else ``RUN_STARTING``'s); None when neither is
    recorded."""
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
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=statuses, tags=tags or {})):
        run = record.dagster_run
        proc = run_process(instance, run.run_id)
        if proc is None or _alive(*proc):
            continue
        instance.report_run_failed(run, message=f"orphaned: its process (pid {proc[0]}) is gone; "
                                                "marked failed by boardgen")
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
