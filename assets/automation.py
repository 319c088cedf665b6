"""The jobs, the nightly schedule (02:00) and the table-edit sensor (SPEC 9;
issue 3 "Nightly schedule", "Regeneration after a table edit"; issue 13 "one
run per edit"; issue 28 "runs are the unit of scale-out").

Four jobs over one graph, each a fixed selection (a run executes its job
whole: ``dagster.execute_job`` adds the checks of any asset it is asked to
select, so a subset could not leave them out):

- ``calibration_prepare``: the tables observed and validated, the node-map
  draws (before the rows);
- ``calibration_rows``: the row assets without their checks: a run over a
  range of row partitions records its rows (the nightly's ranges, the
  schedule's, a backfill's);
- ``calibration_table``: the table-wide checks and the stratified figures,
  after the rows;
- ``calibration_job``: everything, for one run per edit (the sensor) and
  for a click in the UI.

The schedule asks for the nightly's ranges (``steps.runs.plan``: about
equal cost, ``$BOARDGEN_WORKERS`` lanes, default the instance's concurrency
of 2), which the queued coordinator hands to the run launcher; the sensor
then asks for the table run once no row is in flight. What the sensor asks
for is the library's decision (``steps.regen.decide``); this module turns it
into run requests. Why a sensor and not declarative automation:
docs/decisions/pipeline.md.
"""

import os
import time

import dagster as dg

from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.steps import regen, runs
from boardgen_pipeline.steps.pool import workers_for

from .names import (  # noqa: I001
    ALL_ASSETS,
    BATCH_TAG,
    CALIBRATION_JOB,
    CHECKED,
    DRAWS,
    OVERLAYS,
    PREPARE_JOB,
    REASON_TAG,
    ROW_ASSETS,
    ROWS_JOB,
    STRATA,
    TABLE_JOB,
    TABLES,
    TRIGGER_TAG,
    range_tags,
)
from .partitions import board_rows
from .resources import BoardgenSettings
from .tables import table_digest

NIGHTLY_CRON = "0 2 * * *"
NIGHTLY_TIMEZONE = os.environ.get("BOARDGEN_TIMEZONE", "UTC")

prepare_job = dg.define_asset_job(
    PREPARE_JOB, selection=dg.AssetSelection.assets(*TABLES, DRAWS), executor_def=dg.in_process_executor,
    description="Before the rows: the tables observed and validated (partitions kept in step), the node-map draws.")
rows_job = dg.define_asset_job(
    ROWS_JOB, selection=dg.AssetSelection.assets(*ROW_ASSETS).without_checks(),
    executor_def=dg.in_process_executor,
    description="A range of row partitions: seed batch, boards, overlays, report of each row, recorded as each is "
                "published. The table-wide checks come after, in calibration_table.")
table_job = dg.define_asset_job(
    TABLE_JOB,
    selection=dg.AssetSelection.assets(STRATA) | dg.AssetSelection.checks_for_assets(*CHECKED),
    executor_def=dg.in_process_executor,
    description="After the rows: every table-wide check (F4, the overlay checks, every row passes F4) and the "
                "stratified figures, from the warehouse.")
calibration_job = dg.define_asset_job(
    CALIBRATION_JOB, selection=dg.AssetSelection.assets(*ALL_ASSETS), executor_def=dg.in_process_executor,
    description="The whole graph: with a row partition or range, the rows, then the table-wide checks and figures.")


def table_checks() -> list[dg.AssetCheckKey]:
    """Every table-wide check key of the graph (the checks of ``CHECKED``)."""
    from .calibration import CHECK_SPECS

    return [spec.key for spec in CHECK_SPECS]


def _keys(*names) -> list[dg.AssetKey]:
    return [dg.AssetKey(n) for n in names]


@dg.schedule(
    name="nightly_calibration",
    cron_schedule=NIGHTLY_CRON,
    execution_timezone=NIGHTLY_TIMEZONE,
    job=rows_job,  # the draws and the table's checks follow: the table-edit sensor asks for them
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Every row of the board_gen table, every night at 02:00: ranges of rows of about equal cost, one run "
                "each (queued, then launched by the instance's run launcher); the table-edit sensor asks for the "
                "table-wide checks and figures once no row is in flight.",
)
def nightly_calibration(context: dg.ScheduleEvaluationContext, settings: BoardgenSettings):
    day = context.scheduled_execution_time.strftime("%Y-%m-%d") if context.scheduled_execution_time else "now"
    tags = {TRIGGER_TAG: "nightly", BATCH_TAG: f"nightly-{day}"}
    try:
        table = settings.load_table()
    except TableError:  # the run fails at validated_rows with the validation report; nothing downstream runs
        return dg.RunRequest(run_key=f"nightly-{day}-invalid-table", asset_selection=_keys(*TABLES), tags=tags)
    keys = sorted(fingerprints.fingerprints_now(table, settings.samples, settings.master_seed), key=fingerprints.row_key)
    registered = context.instance.get_dynamic_partitions(board_rows.name)
    missing = [k for k in keys if k not in set(registered)]
    if missing:  # a schedule cannot return partition requests: register new rows so their runs resolve
        context.instance.add_dynamic_partitions(board_rows.name, missing)
    order = [*registered, *missing]
    lanes = runs.plan(order, runs.row_costs(table, settings.samples), workers_for(len(keys), _slots()))
    return [dg.RunRequest(run_key=f"nightly-{day}-{i}", tags={**tags, **range_tags(r.first, r.last)})
            for i, r in enumerate(r for lane in lanes for r in lane)]


def _slots() -> int:
    """Runs at once: ``$BOARDGEN_WORKERS``, else the queue's default concurrency (``boardgen_dagster.home``)."""
    text = os.environ.get("BOARDGEN_WORKERS", "")
    return int(text) if text.isdigit() and int(text) > 0 else 2


def _request(request: regen.Request, order: list[str], checks: list[dg.AssetCheckKey]) -> dg.RunRequest:
    tags = {TRIGGER_TAG: "table_edit", REASON_TAG: request.reason}
    draws = [DRAWS] if request.draws else []
    if request.kind == regen.VALIDATE:
        return dg.RunRequest(asset_selection=_keys(*TABLES), tags=tags)
    draw_checks = [k for k in checks if k.asset_key.to_user_string() == DRAWS] if draws else []
    table_checks_ = [k for k in checks if k.asset_key.to_user_string() in CHECKED]
    if request.kind == regen.ROWS:
        index = {k: i for i, k in enumerate(order)}
        ranked = sorted(request.partitions, key=index.__getitem__)
        selection = _keys(*TABLES, *draws, *ROW_ASSETS, STRATA)
        if len(ranked) == 1:
            return dg.RunRequest(partition_key=ranked[0], asset_selection=selection,
                                 asset_check_keys=[*table_checks_, *draw_checks], tags=tags)
        return dg.RunRequest(asset_selection=selection, asset_check_keys=[*table_checks_, *draw_checks],
                             tags={**tags, **range_tags(ranked[0], ranked[-1])})
    if request.kind == regen.OVERLAYS:  # nothing reads the overlays: they and their checks alone
        overlay_checks = [k for k in checks if k.asset_key.to_user_string() == OVERLAYS]
        return dg.RunRequest(asset_selection=_keys(*TABLES, *draws, OVERLAYS),
                             asset_check_keys=[*overlay_checks, *draw_checks], tags=tags)
    return dg.RunRequest(asset_selection=_keys(*TABLES, *draws, STRATA), asset_check_keys=[*table_checks_, *draw_checks],
                         tags=tags)


@dg.sensor(
    name="table_edit_sensor",
    job=calibration_job,
    # As often as the daemon's sensor loop turns (every 5 s in Dagster 1.13): a saved edit starts its run
    # 2.5 s later on average (issue 23). A tick that finds nothing changed costs a stat of each file.
    minimum_interval_seconds=1,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Regenerates exactly the rows whose fingerprint changed (overlays alone when only they changed), "
                "then the table-wide checks and figures, in one run; the node-map draws only when their pools, the "
                "number of adventures or the table's rows changed; adds/removes row partitions.",
)
def table_edit_sensor(context: dg.SensorEvaluationContext, settings: BoardgenSettings):
    try:
        catalog = settings.load_catalog()
    except TableError as exc:
        decision = regen.decide_invalid(context.cursor, table_digest(settings), exc.report())
    else:
        clock = time.time()
        in_flight = regen.rows_in_flight(context.cursor, clock) or _calibration_in_progress(context.instance)
        facts = regen.gather(settings.root, catalog, settings.samples, settings.master_seed,
                             settings.node_map_adventures, in_flight)
        decision = regen.decide(facts, context.instance.get_dynamic_partitions(board_rows.name), context.cursor, clock)
    if not decision.requests and not decision.add and not decision.remove:
        return dg.SensorResult(skip_reason=decision.skip_reason or "nothing to do", cursor=decision.cursor)
    context.log.info(decision.log)
    order = [*context.instance.get_dynamic_partitions(board_rows.name), *decision.add]
    checks = table_checks() + _draw_checks()
    partition_requests = []
    if decision.add:
        partition_requests.append(board_rows.build_add_request(decision.add))
    if decision.remove:
        partition_requests.append(board_rows.build_delete_request(decision.remove))
    return dg.SensorResult(run_requests=[_request(r, order, checks) for r in decision.requests],
                           dynamic_partitions_requests=partition_requests, cursor=decision.cursor)


def _draw_checks() -> list[dg.AssetCheckKey]:
    from boardgen_pipeline.steps import draw_node_maps

    return [dg.AssetCheckKey(dg.AssetKey(DRAWS), n) for n in draw_node_maps.CHECKS]


def _calibration_in_progress(instance) -> bool:
    """A run of the calibration is queued or running: the table-wide work waits for it."""
    statuses = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
                dg.DagsterRunStatus.STARTED]
    return bool(instance.get_run_records(dg.RunsFilter(statuses=statuses, job_name=rows_job.name), limit=1))
