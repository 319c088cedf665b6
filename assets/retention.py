"""Forget old calibration runs, a night's last run (SPEC 1 "results kept":
the warehouse keeps every figure, so a run's record is bookkeeping;
docs/operations.md "Retention"): the policy is the library's
(``steps.retention``); this module reads the runs and what they hold through
Dagster's API and deletes with ``DagsterInstance.delete_run`` (the run and
its events). ``calibration_retention`` is the job a night ends with; it
also lets go of the tables pinned for nights no longer kept
(``steps.pinned_tables``).

A run is kept while it holds the latest state of something the UI shows: the
latest materialization, planned materialization or observation of an asset
or of a ``boards`` partition, or the latest evaluation of a check. Deleting
such a run would make a partition read as never materialized, or a failed
partition as fine. ``boardgen prune`` calls :func:`main`.
"""

import time
from pathlib import Path

import dagster as dg
import sqlalchemy

from boardgen_pipeline.steps import retention
from boardgen_pipeline.words import count as counted

from .names import ALL_ASSETS, BOARDS, JOBS, RETENTION_JOB, check_keys
from .resources import BoardgenSettings

PAGE = 500


def _partition_runs(instance, key: dg.AssetKey, event_type) -> set[str]:
    """The runs holding each partition's latest event of ``event_type``."""
    ids = sorted(instance.get_latest_storage_id_by_partition(key, event_type).values())
    runs = set()
    for start in range(0, len(ids), PAGE):
        chunk = ids[start:start + PAGE]
        # the event log's own query, for both event types (the instance's fetch of planned
        # materializations is deprecated, and a planned event has no other query by storage id)
        records = instance.event_log_storage.get_event_records(
            dg.EventRecordsFilter(event_type=event_type, asset_key=key, storage_ids=chunk), limit=len(chunk))
        runs.update(r.run_id for r in records)
    return runs


def protected_runs(instance) -> set[str]:
    """Every run that holds some latest state (module docstring)."""
    keep: set[str] = set()
    for record in instance.get_asset_records([dg.AssetKey(a) for a in ALL_ASSETS]):
        entry = record.asset_entry
        for held in (entry.last_materialization_record, entry.last_observation_record):
            if held is not None:
                keep.add(held.run_id)
        if entry.last_planned_materialization_run_id:
            keep.add(entry.last_planned_materialization_run_id)
    boards = dg.AssetKey(BOARDS)
    keep |= _partition_runs(instance, boards, dg.DagsterEventType.ASSET_MATERIALIZATION)
    keep |= _partition_runs(instance, boards, dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED)
    checks = check_keys()
    for execution in instance.event_log_storage.get_latest_asset_check_execution_by_key(checks).values():
        keep.add(execution.run_id)
    return keep


def runs_of_the_calibration(instance) -> list[dg.RunRecord]:
    out = []
    for job in JOBS:
        cursor = None
        while True:
            page = instance.get_run_records(dg.RunsFilter(job_name=job), limit=PAGE, cursor=cursor)
            out.extend(page)
            if len(page) < PAGE:
                break
            cursor = page[-1].dagster_run.run_id
    return out


def prune(instance, policy: retention.Policy, now: float | None = None) -> list[str]:
    """Delete the calibration runs ``policy`` lets go; their ids, oldest first."""
    keep = protected_runs(instance)
    infos = [retention.RunInfo(r.dagster_run.run_id, r.create_timestamp.timestamp(), r.dagster_run.is_finished,
                               r.dagster_run.run_id in keep) for r in runs_of_the_calibration(instance)]
    gone = retention.to_delete(infos, time.time() if now is None else now, policy)
    for run_id in gone:
        forget(instance, run_id)
    return gone


def forget(instance, run_id: str) -> None:
    """Delete a run, its events and every file the instance kept for it.
    ``delete_run`` empties the stock SQLite log's file of the run
    (``history/runs/<run id>.db``, ~2.5 MB for a 300-row run) but leaves it,
    and the run's captured logs stay too; the check evaluations the run
    recorded stay in the index (``asset_check_executions``, which
    ``delete_events`` does not touch), each pointing at an event that is
    gone: a home would still grow by its nights (``benchmarks/soak.py``)."""
    instance.delete_run(run_id)
    index = getattr(instance.event_log_storage, "index_connection", None)  # SQL storages: SQLite, PostgreSQL
    if index is not None:
        with index() as conn:
            conn.execute(sqlalchemy.text("DELETE FROM asset_check_executions WHERE run_id = :run_id"),
                         {"run_id": run_id})
    shard = getattr(instance.event_log_storage, "path_for_shard", None)  # a run-sharded (SQLite) log only
    if shard is not None:
        for suffix in ("", "-wal", "-shm"):
            Path(shard(run_id) + suffix).unlink(missing_ok=True)
    try:
        instance.compute_log_manager.delete_logs(prefix=[run_id])
    except NotImplementedError:
        pass  # a log manager that cannot delete (the user's choice of storage) keeps them


@dg.op(description="Forget the calibration runs the retention policy lets go ($BOARDGEN_KEEP_DAYS, "
                      "$BOARDGEN_KEEP_RUNS), never one that holds the latest state of an asset, partition or check; "
                      "and the tables pinned for nights no longer kept.")
def forget_old_runs(context: dg.OpExecutionContext, settings: BoardgenSettings) -> dg.Output:
    from boardgen_pipeline.steps import pinned_tables

    found = settings.resolved()
    policy = retention.Policy(keep_days=found.keep_days, keep_runs=found.keep_runs)
    gone = prune(context.instance, policy)
    unpinned = pinned_tables.forget(found.warehouse, {Path(found.tables).name})
    context.log.info(f"forgot {counted(len(gone), 'run')} beyond {policy.describe()}; {len(unpinned)} pinned table copies")
    return dg.Output(len(gone), metadata={"forgotten_runs": len(gone), "first": dg.MetadataValue.json(gone[:20]),
                                          "policy": policy.describe(), "unpinned_tables": len(unpinned)})


@dg.job(name=RETENTION_JOB, description="A night's last run: old calibration runs forgotten (retention).")
def retention_job():
    forget_old_runs()


def prune_command(dagster_home: str | None = None, keep_runs: int | None = None, keep_days: int | None = None) -> int:
    """``boardgen prune [--dagster-home DIR] [--keep-runs K] [--keep-days N]``
    (its arguments checked by ``boardgen``'s parser before this runs; the
    settings not given come from ``$BOARDGEN_KEEP_RUNS`` and
    ``$BOARDGEN_KEEP_DAYS``)."""
    from .home import ensure_dagster_home

    policy = retention.policy_from(keep_days, keep_runs)
    home = ensure_dagster_home(dagster_home)  # a storage fault is one sentence (boardgen's exit table)
    with dg.DagsterInstance.get() as instance:
        gone = prune(instance, policy)
    print(f"{home}: deleted {counted(len(gone), 'calibration run')} beyond {policy.describe()}; kept every run that holds "
          "the latest state of an asset, partition or check")
    return 0
