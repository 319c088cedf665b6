"""The Dagster home: the project's own embedded home created and migrated by
the project; a home a user configured used as it is (SPEC 10 "create it
once"; docs/operations.md "The Dagster instance").

``ensure_dagster_home`` creates ``$DAGSTER_HOME`` (default: the checkout's
``.dagster_home``, else ``./.dagster_home``) with boardgen's own
``dagster.yaml`` when it has none: Dagster's stock SQLite storage in the
folder, the queued run coordinator, run monitoring. Such a home is the
project's: when the installed Dagster is newer than its storage, it is
migrated here, under a lock (``make ui`` and ``make run`` started together
do not race). A ``dagster.yaml`` the user wrote is theirs: its storage (e.g.
``storage: postgres:`` through ``dagster-postgres``, shared by a team) is
what every process uses, the file is never edited, and an out-of-date
schema is one sentence that names ``dagster instance migrate`` (Dagster
leaves migration to the operator on purpose): nothing here migrates an
instance others may be using.

A storage that cannot be opened is one sentence naming the setting and the
cause (:class:`InstanceError`), not a traceback: a corrupt ``runs.db``, a
PostgreSQL server that does not answer or refuses the login.
"""

import contextlib
import io
import os
import sqlite3
import sys
from pathlib import Path

from boardgen_pipeline import files
from boardgen_pipeline.errors import WarehouseError
from boardgen_pipeline.paths import default_dagster_home
from boardgen_pipeline.warehouse.instance import DAGSTER_YAML, InstanceError, instance_fault, is_own_yaml
from boardgen_pipeline.warehouse.instance_storage import tune_instance_storage


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


def _create(home: Path, yaml_path: Path) -> None:
    """A new home: its storage is created under a staging name, and
    ``dagster.yaml`` appears only once that storage exists. Another process
    that waits for ``dagster.yaml`` (the UI, a test) then never opens a
    storage whose schema is half made: two processes stamping SQLite's
    schema at once leave two alembic heads, and the home unreadable."""
    import dagster as dg

    staging = yaml_path.with_name(".dagster.yaml.new")
    files.atomic_write(staging, DAGSTER_YAML)
    with contextlib.redirect_stdout(io.StringIO()), _quiet_retries(), \
            dg.DagsterInstance.from_config(str(home), config_filename=staging.name):
        pass
    files.rename(staging, yaml_path)


def ensure_dagster_home(path: Path | str | None = None) -> Path:
    """Create the instance folder and boardgen's ``dagster.yaml`` when
    missing; migrate boardgen's own home when the installed Dagster is
    newer; refuse, in one sentence, a user's instance whose schema is
    behind. Sets ``DAGSTER_HOME``."""
    import dagster as dg

    home = Path(path).resolve() if path else default_dagster_home()
    os.environ["DAGSTER_HOME"] = str(home)
    tune_instance_storage()  # before any storage is opened: the home's new databases, and the runs' files
    try:
        home.mkdir(parents=True, exist_ok=True)
        with files.lock(home / ".boardgen-init.lock"):
            yaml_path = home / "dagster.yaml"
            if not yaml_path.exists():
                _create(home, yaml_path)
                return home  # its storage was made by the installed Dagster: at its head
            own = is_own_yaml(yaml_path.read_text(encoding="utf-8"))
            if not own:
                _probe_postgres(yaml_path)
            with contextlib.redirect_stdout(io.StringIO()), _quiet_retries(), dg.DagsterInstance.get() as instance:
                behind = storages_behind(instance)
                if behind and not own:
                    names = ", ".join(f"{k} at {v[0]} (Dagster {dg.__version__} needs {v[1]})" for k, v in behind.items())
                    raise InstanceError(yaml_path, f"the instance's schema is behind the installed Dagster ({names}); "
                                                   f"its operator runs `DAGSTER_HOME={home} dagster instance migrate`")
                if behind:
                    instance.upgrade()  # boardgen's own home: what `dagster instance migrate` does
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


@contextlib.contextmanager
def event_log_held_open(instance, run_id: str | None = None):
    """One idle SQLite connection to the event log's index (and to ``run_id``'s
    own file), held while the caller writes many events; nothing on any other
    storage. Dagster's run-sharded SQLite storage opens a connection per
    statement, and SQLite checkpoints the write-ahead log into the database,
    then deletes the log and its shared-memory index, whenever the *last*
    connection closes: every event was written twice, and its 32 KB index
    made anew (docs/performance.md "Where the bytes go"). With one reader
    open, SQLite checkpoints every 1,000 pages instead. The connection holds
    no lock between statements (no transaction is left open), so it never
    blocks a writer; a process killed with it open leaves a log that the next
    connection replays, as after any crash."""
    shard = getattr(instance.event_log_storage, "path_for_shard", None)  # Dagster's run-sharded SQLite only
    held = []
    try:
        for name in filter(None, ("index", run_id) if shard is not None else ()):
            path = Path(shard(name))
            if not path.exists():
                continue
            with contextlib.suppress(sqlite3.Error):  # a database another process holds busy: not held, not an error
                conn = sqlite3.connect(path, timeout=0.1, check_same_thread=False)
                held.append(conn)
                conn.execute("select count(*) from sqlite_master").fetchall()  # opens the log's index: held
        yield
    finally:
        for conn in held:
            conn.close()


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
