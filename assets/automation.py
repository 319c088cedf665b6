"""When the calibration runs: the nightly schedule (02:00) and the table-edit
sensor (SPEC 9; issue 3 "Nightly schedule", "Regeneration after a table edit").

Both target one job, ``calibration_job``: table observation -> validated rows
-> seed batch -> boards (+ checks) -> report, one run per row partition.
One partition is one unit of work, so whatever run launcher the instance
uses (local processes, Kubernetes, Celery) spreads the runs.

The sensor compares each row's fingerprint in the table with the one the
warehouse stores (``boardgen_pipeline.regen``) and requests runs for exactly
the rows that changed, adds partitions for new rows and deletes those of
removed rows. Why a sensor and not declarative automation: see
``docs/decisions/pipeline.md``.
"""


import os
import time

import dagster as dg

from boardgen_pipeline import regen
from boardgen_pipeline.errors import TableError

from .partitions import board_rows
from .resources import BoardgenSettings
from .tables import table_digest

CALIBRATION_JOB = "calibration_job"
NIGHTLY_CRON = "0 2 * * *"
NIGHTLY_TIMEZONE = os.environ.get("BOARDGEN_TIMEZONE", "UTC")
VALIDATE_SELECTION = [dg.AssetKey("table_files"), dg.AssetKey("validated_rows")]
TRIGGER_TAG = "boardgen/trigger"

calibration_job = dg.define_asset_job(
    CALIBRATION_JOB,
    selection=dg.AssetSelection.assets(
        "table_files", "validated_rows", "seed_batches", "boards", "calibration_report"
    ),
    executor_def=dg.in_process_executor,
    description="Calibrate one board_gen row: validate the table, generate N boards, check A, A'', A', B, B', E; report. "
                "Launch it with a row partition (e.g. 1-0); without one, select only the table assets.",
)


@dg.schedule(
    name="nightly_calibration",
    cron_schedule=NIGHTLY_CRON,
    execution_timezone=NIGHTLY_TIMEZONE,
    job=calibration_job,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Every row of the board_gen table, every night at 02:00: one run per row.",
)
def nightly_calibration(context: dg.ScheduleEvaluationContext, settings: BoardgenSettings):
    day = context.scheduled_execution_time.strftime("%Y-%m-%d") if context.scheduled_execution_time else "now"
    tags = {TRIGGER_TAG: "nightly"}
    try:
        table = settings.load_table()
    except TableError:
        # The run fails at validated_rows with the validation report; nothing downstream runs.
        return dg.RunRequest(run_key=f"nightly-{day}-invalid-table", asset_selection=VALIDATE_SELECTION, tags=tags)
    keys = sorted(regen.fingerprints_now(table, settings.samples, settings.master_seed), key=regen.row_key)
    missing = [k for k in keys if k not in set(context.instance.get_dynamic_partitions(board_rows.name))]
    if missing:  # a schedule cannot return partition requests: register new rows so their runs resolve
        context.instance.add_dynamic_partitions(board_rows.name, missing)
    return [dg.RunRequest(run_key=f"nightly-{day}-{k}", partition_key=k, tags=tags) for k in keys]


@dg.sensor(
    name="table_edit_sensor",
    job=calibration_job,
    minimum_interval_seconds=15,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Regenerates exactly the rows whose fingerprint changed; adds/removes row partitions.",
)
def table_edit_sensor(context: dg.SensorEvaluationContext, settings: BoardgenSettings):
    try:
        table = settings.load_table()
    except TableError as exc:
        cursor = regen.load_cursor(context.cursor)
        digest = table_digest(settings)
        if cursor.get("invalid") == digest:
            return dg.SkipReason(f"board_gen table still invalid (run already requested):\n{exc.report()}")
        cursor["invalid"] = digest
        return dg.SensorResult(
            run_requests=[dg.RunRequest(asset_selection=VALIDATE_SELECTION, tags={TRIGGER_TAG: "table_edit"})],
            cursor=regen.dump_cursor(cursor),
        )
    now = regen.fingerprints_now(table, settings.samples, settings.master_seed)
    stored = regen.fingerprints_stored(settings.root, now)
    registered = context.instance.get_dynamic_partitions(board_rows.name)
    plan, cursor = regen.advance(context.cursor, now, stored, registered, time.time())
    if plan.empty:
        return dg.SensorResult(skip_reason=f"{len(plan.keep)} rows unchanged", cursor=cursor)
    requests = [
        dg.RunRequest(
            partition_key=k,
            tags={
                TRIGGER_TAG: "table_edit",
                "boardgen/reason": "new row" if k not in stored else "row changed",
                "boardgen/batch_fingerprint": now[k],
                "boardgen/stored_fingerprint": stored.get(k, "none"),
            },
        )
        for k in plan.regenerate
    ]
    if plan.remove and not requests:  # prune the removed rows' files and views
        requests.append(dg.RunRequest(asset_selection=VALIDATE_SELECTION, tags={TRIGGER_TAG: "table_edit"}))
    partition_requests = []
    if plan.add:
        partition_requests.append(board_rows.build_add_request(plan.add))
    if plan.remove:
        partition_requests.append(board_rows.build_delete_request(plan.remove))
    context.log.info(f"regenerate {plan.regenerate}; add {plan.add}; remove {plan.remove}; keep {len(plan.keep)}")
    return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=partition_requests, cursor=cursor)
