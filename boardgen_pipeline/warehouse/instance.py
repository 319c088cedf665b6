"""The Dagster instance's storage, as a person reads its faults (clear
errors: a dagster.yaml whose PostgreSQL does not answer or
refuses the login is one sentence naming the setting and the cause).

And the ``dagster.yaml`` boardgen writes into a new home of its own
(:data:`DAGSTER_YAML`); a home whose file is anything else is the user's,
never edited (:func:`is_own_yaml`).

Plain text in, one sentence out: which setting of ``dagster.yaml`` names the
storage (``storage: postgres``, a storage block of its own, or the SQLite
files in the home), and what went wrong, from the innermost error the
storage raised (a SQLite file that is not a database, a server that refuses
the connection or the login, a database that does not exist). No Dagster
here: the code location opens the instance and hands its exception over.
"""

from __future__ import annotations

from pathlib import Path

from boardgen_pipeline import files
from boardgen_pipeline.errors import InstanceUnavailable, WarehouseError


class InstanceError(WarehouseError):
    """The Dagster instance's storage cannot be opened or migrated."""


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


def instance_fault(home: Path, exc: BaseException) -> WarehouseError:
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
            return InstanceUnavailable(storage_setting(home), f"{cause}: {first}")
    if isinstance(exc, OSError):
        from boardgen_pipeline.warehouse.datasets import warehouse_error

        fault = warehouse_error(exc, home)
        return InstanceError(fault.path, fault.cause)
    first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return InstanceError(storage_setting(home), f"the storage cannot be opened: {first}")


RUN_MONITORING = """\
# Orphaned runs (a killed process) are marked failed by the daemon so the queue does not stay
# full: stuck STARTING after 180 s, or STARTED for more than 4 hours. The default launcher cannot
# check a worker's health; `boardgen nightly` fails the runs of its own processes that died.
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
# Written by boardgen: its own embedded home, which boardgen migrates when Dagster moves.
# Local instance: Dagster's own SQLite storage in this folder. Edit this file (a PostgreSQL
# storage, a run launcher: docs/operations.md) and the home is yours: boardgen never edits it
# again, nor migrates it (`dagster instance migrate` is its operator's).
# Runs launched by the daemon (the nightly schedule, its sensors, the table-edit sensor, the
# UI) are queued and run two at a time; `boardgen nightly` executes its runs in processes of
# its own, one per core.
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 2
    # a queued run starts within a second, not five (a table edit's verdict in seconds)
    dequeue_interval_seconds: 1
telemetry:
  enabled: false
""" + RUN_MONITORING


def is_own_yaml(text: str) -> bool:
    """Whether a home's ``dagster.yaml`` is the one boardgen writes, unedited
    (else it is the user's: kept by ``make clean``, never changed)."""
    return text == DAGSTER_YAML
