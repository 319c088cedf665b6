"""When the calibration runs: the nightly schedule (02:00) and the table-edit
sensor (SPEC 9; issue 3 "Nightly schedule", "Regeneration after a table edit";
issue 12 "Dagster-native execution"; issue 13 "one run per edit").

Both target one job, ``calibration_job`` (the whole graph), and launch *one*
run each time: the step ``calibrate`` (every row, then the strata) has ``BackfillPolicy.single_run()``,
so a run covers a range of row partitions (``partition_range_tags``), the
step spreads its rows over its workers and records one materialization and
one set of checks per row partition, and the unpartitioned node-map draws
and stratified figures follow in the same run, after every row's report.

- ``ALL_SELECTION``: table observation -> validated rows -> seed batch ->
  boards (+ checks) -> variant overlays (+ checks) -> report (+ the
  table-wide F4 check) -> node-map draws (+ checks) -> stratified figures;
- ``ROW_SELECTION``: the per-row part of it (a row or a range of rows);
- ``OVERLAY_SELECTION``: the rows' overlays alone (only the variation table
  changed), plus the pools;
- ``POOLS_SELECTION``: node-map draws and stratified figures alone;
- ``VALIDATE_SELECTION``: the table assets alone.

The sensor asks ``boardgen_pipeline.steps.currency`` what is current (the
fingerprints in the tables against the ones the warehouse stores) and
requests one run per edit: the range of row partitions that covers the rows
whose boards (or only overlays) changed, then the stratified figures (they
read every report); the node-map draws only when their own inputs changed
(the pools, the number of adventures, the table's row keys: issue 23, a row
edit redraws no map); or the figures or draws alone when only they are
stale. A range is contiguous in partition order, so rows between two edited
rows are regenerated too (bit-identical boards: the cost of one run per
edit; docs/decisions.md). It adds partitions for new rows and deletes those
of removed rows. Why a sensor and not declarative automation: see
``docs/decisions/pipeline.md``.
"""


import os
import time

import dagster as dg

from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.steps import currency, regen
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
NODE_MAPS, STRATA = dg.AssetKey("node_map_draws"), dg.AssetKey("calibration_strata")
POOLS_ASSETS = [NODE_MAPS, STRATA]
POOLS_SELECTION = [*VALIDATE_SELECTION, *POOLS_ASSETS]
ALL_SELECTION = [*ROW_SELECTION, *POOLS_ASSETS]
ALL_ASSETS = ("table_files", "validated_rows", "seed_batches", "boards", "variant_overlays", "calibration_report",
              "node_map_draws", "calibration_strata")
TRIGGER_TAG = "boardgen/trigger"
SENSOR_SECONDS = 1
RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def partition_range_tags(keys: list[str], order: list[str]) -> dict:
    """The run tags of one run over the range of partitions (in ``order``, the
    partitions' registration order) that covers ``keys``."""
    index = {k: i for i, k in enumerate(order)}
    ranked = sorted(keys, key=index.__getitem__)
    return {RANGE_START: ranked[0], RANGE_END: ranked[-1]}


def range_request(keys: list[str], order: list[str], selection, tags: dict, run_key: str | None = None):
    """One run over the rows ``keys`` (a single partition when there is one)."""
    if len(keys) == 1:
        return dg.RunRequest(run_key=run_key, partition_key=keys[0], asset_selection=selection, tags=tags)
    return dg.RunRequest(run_key=run_key, asset_selection=selection, tags={**tags, **partition_range_tags(keys, order)})

calibration_job = dg.define_asset_job(
    CALIBRATION_JOB,
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    # the rows go to the step's own workers (resources.RowWorkers); the other steps are small
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
    description="Every row of the board_gen table, every night at 02:00: one run over every row partition, "
                "then the node-map draws and stratified figures in the same run.",
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
    registered = context.instance.get_dynamic_partitions(board_rows.name)
    missing = [k for k in keys if k not in set(registered)]
    if missing:  # a schedule cannot return partition requests: register new rows so their run resolves
        context.instance.add_dynamic_partitions(board_rows.name, missing)
    order = [*registered, *missing]
    # Rows of a removed table row stay registered until validated_rows prunes them: the range must cover
    # every current row, and the steps skip nothing (a removed row's partition fails its table lookup).
    return range_request(keys, order, ALL_SELECTION, tags, run_key=f"nightly-{day}")


@dg.sensor(
    name="table_edit_sensor",
    job=calibration_job,
    # As often as the daemon's sensor loop turns (every 5 s in Dagster 1.13): a saved edit starts its run
    # 2.5 s later on average (issue 23). A tick that finds nothing changed costs a stat of each file.
    minimum_interval_seconds=SENSOR_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Regenerates exactly the rows whose fingerprint changed (overlays alone when only they changed), "
                "then the stratified figures; the node-map draws only when their pools, the number of "
                "adventures or the table's rows changed; adds/removes row partitions.",
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
    stored = currency.fingerprints_stored(settings.root, now)
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
                                   currency.overlay_fingerprints_stored(settings.root, overlays_now), clock)
    # The draws read the pools and the table's row keys, not the rows' parameters: a row edit redraws no map.
    adventures = settings.node_map_adventures
    draws = regen.advance_stale(cursor, "draws_in_flight",
                                {"draws": currency.draws_fingerprint_now(catalog, adventures)},
                                {"draws": currency.draws_fingerprint_stored(settings.root)}, clock)
    # The figures read every row's report: with the rows' run, or alone once no row is in flight.
    strata = []
    if not plan.regenerate and not cursor["in_flight"]:
        strata = regen.advance_stale(
            cursor, "strata_in_flight",
            {"strata": currency.strata_fingerprint_now(settings.root, catalog, settings.samples,
                                                       settings.master_seed, adventures)},
            {"strata": currency.strata_fingerprint_stored(settings.root)}, clock)
    cursor_text = regen.dump_cursor(cursor)
    if plan.empty and not overlays and not draws and not strata:
        return dg.SensorResult(skip_reason=f"{len(plan.keep)} rows unchanged", cursor=cursor_text)
    # One run per edit: the range covering every row whose boards or overlays changed, then the figures.
    order = [*registered, *plan.add]
    tags = {TRIGGER_TAG: "table_edit"}
    pools = [NODE_MAPS] if draws else []
    requests = []
    if plan.regenerate:
        requests.append(range_request(sorted({*plan.regenerate, *overlays}, key=fingerprints.row_key), order,
                                      [*ROW_SELECTION, *pools, STRATA],
                                      {**tags, "boardgen/reason": "rows changed: " + " ".join(plan.regenerate)[:200]}))
    elif overlays:
        requests.append(range_request(overlays, order, [*OVERLAY_SELECTION, *pools],
                                      {**tags, "boardgen/reason": "overlays changed: " + " ".join(overlays)[:200]}))
    elif draws or strata:
        requests.append(dg.RunRequest(asset_selection=[*VALIDATE_SELECTION, *pools, STRATA],
                                      tags={**tags, "boardgen/reason": "node maps changed" if draws
                                            else "reports changed"}))
    if plan.remove and not requests:  # prune the removed rows' files and views
        requests.append(dg.RunRequest(asset_selection=VALIDATE_SELECTION, tags={TRIGGER_TAG: "table_edit"}))
    context.log.info(f"regenerate {plan.regenerate}; overlays {overlays}; draws {bool(draws)}; strata "
                     f"{bool(strata)}; add {plan.add}; remove {plan.remove}; keep {len(plan.keep)}")
    partition_requests = []
    if plan.add:
        partition_requests.append(board_rows.build_add_request(plan.add))
    if plan.remove:
        partition_requests.append(board_rows.build_delete_request(plan.remove))
    return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=partition_requests, cursor=cursor_text)
