"""When the calibration runs: the nightly schedule (02:00) and the table-edit
sensor (SPEC 9; issue 3 "Nightly schedule", "Regeneration after a table edit").

Both target one job, ``calibration_job`` (the whole graph), through
selections of it:

- ``ROW_SELECTION`` with a row partition: table observation -> validated
  rows -> seed batch -> boards (+ checks) -> variant overlays (+ checks) ->
  report. One partition is one unit of work, so whatever run launcher the
  instance uses (local processes, Kubernetes, Celery) spreads the runs;
- ``POOLS_SELECTION`` without a partition: node-map draws (+ checks) and the
  stratified figures, which read every row's report;
- ``OVERLAY_SELECTION`` with a row partition: the row's overlays alone (the
  sensor, when only the variation table changed);
- ``VALIDATE_SELECTION``: the table assets alone.

The sensor compares fingerprints in the tables with the ones the warehouse
stores (``boardgen_pipeline.steps.regen``): it requests runs for exactly the rows
whose boards changed, overlay-only runs for rows whose boards are current but
whose overlays are not (an edit of ``variation.toml``), and one pools run
when the pools, the adventure count or any current row report differ from
what the stratified figures were built from; it adds partitions for new rows
and deletes those of removed rows. Why a sensor and not declarative
automation: see ``docs/decisions/pipeline.md``.
"""


import os
import time

import dagster as dg

from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.steps import regen
from boardgen_pipeline.warehouse import publish

from .partitions import board_rows
from .resources import BoardgenSettings
from .tables import table_digest

CALIBRATION_JOB = "calibration_job"
NIGHTLY_CRON = "0 2 * * *"
NIGHTLY_TIMEZONE = os.environ.get("BOARDGEN_TIMEZONE", "UTC")
VALIDATE_SELECTION = [dg.AssetKey("table_files"), dg.AssetKey("validated_rows")]
# One row partition: its boards, overlays and report.
ROW_SELECTION = [*VALIDATE_SELECTION, dg.AssetKey("seed_batches"), dg.AssetKey("boards"),
                 dg.AssetKey("variant_overlays"), dg.AssetKey("calibration_report")]
# A row's overlays alone (its boards are current; the variation table changed).
OVERLAY_SELECTION = [*VALIDATE_SELECTION, dg.AssetKey("variant_overlays")]
# Not per row, after every row's report: node-map draws and the stratified figures.
POOLS_SELECTION = [*VALIDATE_SELECTION, dg.AssetKey("node_map_draws"), dg.AssetKey("calibration_strata")]
ALL_ASSETS = ("table_files", "validated_rows", "seed_batches", "boards", "variant_overlays", "calibration_report",
              "node_map_draws", "calibration_strata")
TRIGGER_TAG = "boardgen/trigger"

calibration_job = dg.define_asset_job(
    CALIBRATION_JOB,
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    executor_def=dg.in_process_executor,
    description="The whole calibration graph. With a row partition (e.g. 1-0) and the row selection: validate the "
                "tables, generate N boards, check A, A'', A', B, B', E, place and check the variant overlays, "
                "report. Without a partition, the pools selection: node-map draws (+ checks) and the stratified "
                "figures; or the table assets alone.",
)


@dg.schedule(
    name="nightly_calibration",
    cron_schedule=NIGHTLY_CRON,
    execution_timezone=NIGHTLY_TIMEZONE,
    job=calibration_job,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Every row of the board_gen table, every night at 02:00: one run per row, then one run of the "
                "node-map draws and stratified figures.",
)
def nightly_calibration(context: dg.ScheduleEvaluationContext, settings: BoardgenSettings):
    day = context.scheduled_execution_time.strftime("%Y-%m-%d") if context.scheduled_execution_time else "now"
    tags = {TRIGGER_TAG: "nightly"}
    try:
        table = settings.load_table()
    except TableError:
        # The run fails at validated_rows with the validation report; nothing downstream runs.
        return dg.RunRequest(run_key=f"nightly-{day}-invalid-table", asset_selection=VALIDATE_SELECTION, tags=tags)
    keys = sorted(fingerprints.fingerprints_now(table, settings.samples, settings.master_seed), key=fingerprints.row_key)
    missing = [k for k in keys if k not in set(context.instance.get_dynamic_partitions(board_rows.name))]
    if missing:  # a schedule cannot return partition requests: register new rows so their runs resolve
        context.instance.add_dynamic_partitions(board_rows.name, missing)
    rows = [dg.RunRequest(run_key=f"nightly-{day}-{k}", partition_key=k, asset_selection=ROW_SELECTION, tags=tags)
            for k in keys]
    # Queued after the rows; if it starts before the last report is written, the
    # table-edit sensor sees the figures' inputs changed and asks for it again.
    return [*rows, dg.RunRequest(run_key=f"nightly-{day}-pools", asset_selection=POOLS_SELECTION, tags=tags)]


@dg.sensor(
    name="table_edit_sensor",
    job=calibration_job,
    minimum_interval_seconds=15,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Regenerates exactly the rows whose fingerprint changed (overlays alone when only they changed), "
                "the node-map draws and stratified figures when their inputs changed; adds/removes row partitions.",
)
def table_edit_sensor(context: dg.SensorEvaluationContext, settings: BoardgenSettings):
    try:
        catalog = settings.load_catalog()
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
    table = catalog.board_gen
    now = fingerprints.fingerprints_now(table, settings.samples, settings.master_seed)
    stored = regen.fingerprints_stored(settings.root, now)
    registered = context.instance.get_dynamic_partitions(board_rows.name)
    clock = time.time()
    was_in_flight = set(regen.load_cursor(context.cursor)["in_flight"])
    plan, cursor_text = regen.advance(context.cursor, now, stored, registered, clock)
    cursor = regen.load_cursor(cursor_text)
    # Overlays of rows whose published boards stay: stale when the variation table (or the row's
    # Boss flag) changed. A rejected batch has no overlays to place; a row whose run was in flight
    # until now may still be writing them: next tick.
    published = {fingerprints.partition_key(k) for k in publish.keys_in(settings.root, "boards")}
    boards_current = [k for k in plan.keep if k in published and k not in was_in_flight]
    overlays_now = {k: fp for k, fp in fingerprints.overlay_fingerprints_now(catalog, settings.samples,
                                                                     settings.master_seed).items()
                    if k in boards_current}
    overlays = regen.advance_stale(cursor, "overlays_in_flight", overlays_now,
                                   regen.overlay_fingerprints_stored(settings.root, overlays_now), clock)
    # Draws and figures: only once no row is being regenerated (they read every row's report).
    pools = []
    if not plan.regenerate and not cursor["in_flight"]:
        pools_now = {"pools": regen.pools_fingerprint_now(settings.root, catalog, settings.samples,
                                                          settings.master_seed, settings.node_map_adventures)}
        pools = regen.advance_stale(cursor, "pools_in_flight", pools_now,
                                    {"pools": regen.pools_fingerprint_stored(settings.root)}, clock)
    cursor_text = regen.dump_cursor(cursor)
    if plan.empty and not overlays and not pools:
        return dg.SensorResult(skip_reason=f"{len(plan.keep)} rows unchanged", cursor=cursor_text)
    requests = [
        dg.RunRequest(
            partition_key=k,
            asset_selection=ROW_SELECTION,
            tags={
                TRIGGER_TAG: "table_edit",
                "boardgen/reason": "new row" if k not in stored else "row changed",
                "boardgen/batch_fingerprint": now[k],
                "boardgen/stored_fingerprint": stored.get(k, "none"),
            },
        )
        for k in plan.regenerate
    ]
    requests += [
        dg.RunRequest(partition_key=k, asset_selection=OVERLAY_SELECTION,
                      tags={TRIGGER_TAG: "table_edit", "boardgen/reason": "overlays changed",
                            "boardgen/overlay_fingerprint": overlays_now[k]})
        for k in overlays
    ]
    requests += [dg.RunRequest(asset_selection=POOLS_SELECTION,
                               tags={TRIGGER_TAG: "table_edit", "boardgen/reason": "node maps or reports changed"})
                 for _ in pools]
    if plan.remove and not requests:  # prune the removed rows' files and views
        requests.append(dg.RunRequest(asset_selection=VALIDATE_SELECTION, tags={TRIGGER_TAG: "table_edit"}))
    partition_requests = []
    if plan.add:
        partition_requests.append(board_rows.build_add_request(plan.add))
    if plan.remove:
        partition_requests.append(board_rows.build_delete_request(plan.remove))
    context.log.info(f"regenerate {plan.regenerate}; overlays {overlays}; pools {bool(pools)}; add {plan.add}; "
                     f"remove {plan.remove}; keep {len(plan.keep)}")
    return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=partition_requests, cursor=cursor_text)
