"""The Dagster home: created once, migrated when Dagster moves, the user's
``dagster.yaml`` respected (SPEC 10 "create it once"; issue 14 "killed runs
do not block"; issue 28 "a production instance, tested for real").

``python -m boardgen_dagster.home`` creates ``$DAGSTER_HOME`` (default
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
from boardgen_pipeline.paths import default_dagster_home
from boardgen_pipeline.steps.runs import process_alive
from boardgen_pipeline.warehouse.instance import DAGSTER_YAML, InstanceError, instance_fault, migrate_yaml


def storages_behind(instance) -> dict[str, tuple]:
    """The storages whose alembic revision is not the installed Dagster's
    head: ``{name: (database revision, head revision)}``."""
    out = {}
    for name, storage in (("runs", instance.run_storage), ("events", instance.event_log_storage),
                          ("schedules", instance.schedule_storage)):
        version = getattr(storage, "alembic_version", None)
        if storage is None or version is None:
            continue
        found = version()
        if found is None:  # a storage that keeps no single revision (a consolidated log never stamped)
            continue
        db_revision, head = found
        if db_revision != head:
            out[name] = (db_revision, head)
    return out


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


REFUSALS = ("connection refused", "password authentication failed", 'role "', "does not exist")


def _probe_postgres(yaml_path: Path) -> None:
    """One connection to the PostgreSQL server ``dagster.yaml`` names, before
    Dagster's storages open it: each retries a refused connection five times
    (~10 s in all), so a server that refuses the connection or the login
    fails here at once, with the server's words. Anything else (a slow
    server, a block Dagster reads otherwise) is left to Dagster."""
    import yaml

    try:
        block = ((yaml.safe_load(yaml_path.read_text(encoding="utf-8")) or {}).get("storage") or {}).get("postgres")
    except (OSError, yaml.YAMLError, AttributeError):
        return
    if not isinstance(block, dict):
        return
    import psycopg2
    from dagster_postgres.utils import pg_url_from_config

    try:
        url = pg_url_from_config(block)
    except Exception:  # an {env: ...} value or a block of another shape: Dagster resolves and checks it
        return
    try:
        psycopg2.connect(url, connect_timeout=5).close()
    except psycopg2.OperationalError as exc:
        if any(needle in str(exc).lower() for needle in REFUSALS):
            raise


def ensure_dagster_home(path: Path | str | None = None) -> Path:
    """Create the instance folder and its ``dagster.yaml`` when missing, add
    what the project needs to an existing one, migrate its storages when
    their revision is behind; set ``DAGSTER_HOME``."""
    import dagster as dg

    home = Path(path).resolve() if path else default_dagster_home()
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        home.mkdir(parents=True, exist_ok=True)
        with files.lock(home / ".boardgen-init.lock"):
            yaml_path = home / "dagster.yaml"
            if not yaml_path.exists():
                files.atomic_write(yaml_path, DAGSTER_YAML)
            else:
                migrate_yaml(yaml_path)
            _probe_postgres(yaml_path)
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
        if proc is None or process_alive(*proc):
            continue
        instance.report_run_failed(run, message=f"orphaned: its process (pid {proc[0]}) is gone; "
                                                "marked failed by boardgen")
        failed.append(run.run_id)
    return failed


def main() -> int:
    try:
        print(f"DAGSTER_HOME={ensure_dagster_home()}")
    except WarehouseError as exc:
        from boardgen_pipeline.exits import Exit

        print(f"error: {exc}", file=sys.stderr)
        return Exit.STORAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
