"""Per-row seed batches and the boards, one partition per parameter row
(SPEC 7, 9; issue 3 "Assets"; issue 12 "Dagster-native execution").

Every partitioned asset has ``BackfillPolicy.single_run()``: the nightly (and
a backfill from the UI) runs *one* run over the range of row partitions, and
each step loops over its rows, recording one materialization and one set of
check results per row partition. A single-partition run (the sensor, a
click in the UI) goes through the same code with a range of one.

Each step re-reads and re-validates the table file itself (a few
milliseconds) and recomputes the row's seed batch (a pure function of the
table, N and the master seed), so a run reads no intermediate storage: it
reads the tables and its own warehouse inputs only (issue 14).
"""

import time

import dagster as dg

from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.calibration import fingerprints, seeds
from boardgen_pipeline.steps import calibrate_row

from .checks import board_check_specs, partition_check_events
from .metadata import row_metadata
from .partitions import board_rows
from .resources import BoardgenSettings, DaskCluster
from .tables import GROUP, load_table_or_fail, validated_rows

# Bump when the generator's output for the same seed changes (the metric version does).
GENERATOR_CODE_VERSION = f"metric_v{METRIC_VERSION}"
ROWS = dg.BackfillPolicy.single_run()
PROGRESS = "progress"  # prefix of the per-row log line the nightly's progress bar reads


def row_batches(context: dg.AssetExecutionContext, settings: BoardgenSettings, table=None) -> list[seeds.SeedBatch]:
    """The seed batch of every row partition of this step, in partition order
    (``table``: the validated board_gen table, when the step already has it)."""
    table = table if table is not None else load_table_or_fail(settings)
    out, missing = [], []
    for partition in context.partition_keys:
        try:
            out.append(seeds.seed_batch(table, fingerprints.row_key(partition), settings.samples,
                                        settings.master_seed))
        except (KeyError, ValueError) as exc:
            missing.append(str(exc.args[0]))
    if missing and len(context.partition_keys) == 1:
        raise dg.Failure(description=missing[0], allow_retries=False)
    for text in missing:  # a row removed from the table, still registered until validated_rows prunes it
        context.log.warning(f"skipped: {text}")
    return out


@dg.asset(
    group_name=GROUP,
    partitions_def=board_rows,
    backfill_policy=ROWS,
    deps=[validated_rows],
    description="The row's seed batch: scopes sigma(L, D) + i for i < N under the master seed (SPEC 7). "
                "Recorded, not stored: the boards step recomputes it from the table.",
)
def seed_batches(context: dg.AssetExecutionContext, settings: BoardgenSettings) -> dg.MaterializeResult:
    for batch in row_batches(context, settings):
        context.add_asset_metadata(row_metadata(batch.describe()), partition_key=batch.partition_key)
    return dg.MaterializeResult()


@dg.asset(
    group_name=GROUP,
    partitions_def=board_rows,
    backfill_policy=ROWS,
    deps=[seed_batches],
    check_specs=board_check_specs(),
    code_version=GENERATOR_CODE_VERSION,
    description="The row's N boards (metrics + layout), Parquet under <warehouse>/boards/ once assertion A' holds.",
)
def boards(context: dg.AssetExecutionContext, settings: BoardgenSettings, dask: DaskCluster):
    outcomes = {}
    with dask.client() as client:
        for batch in row_batches(context, settings):
            t0 = time.perf_counter()
            result = calibrate_row.run_batch(settings.root, batch, client)
            if not result.published:
                context.log.error(f"row {batch.row.key_text}: {len(result.report.illegal_scopes)} illegal boards; "
                                  f"batch rejected to {result.path}, nothing downstream will consume it")
            context.add_asset_metadata(row_metadata(result.summary(), result.path, result.seconds),
                                       partition_key=batch.partition_key)
            outcomes[batch.partition_key] = result.outcomes
            context.log.info(f"{PROGRESS} {batch.partition_key} {batch.samples} boards "
                             f"{time.perf_counter() - t0:.3f} s")
    yield dg.MaterializeResult()
    yield from partition_check_events(context, "boards", outcomes)
