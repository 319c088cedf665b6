"""Per-row seed batches and the boards, one partition per parameter row
(SPEC 7, 9; issue 3 "Assets").

Each partition run re-reads and re-validates the table file itself (a few
milliseconds), so a run is self-contained: any launcher can run partitions in
any order, on any machine, at the same time.
"""

import dagster as dg

from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.calibration import fingerprints, seeds
from boardgen_pipeline.steps import calibrate_row
from boardgen_pipeline.warehouse import publish

from .checks import board_check_specs, to_check_result
from .partitions import board_rows
from .resources import BoardgenSettings, DaskCluster
from .tables import GROUP, load_table_or_fail, validated_rows

# Bump when the generator's output for the same seed changes (the metric version does).
GENERATOR_CODE_VERSION = f"metric_v{METRIC_VERSION}"


@dg.asset(
    group_name=GROUP,
    partitions_def=board_rows,
    deps=[validated_rows],
    description="The row's seed batch: scopes sigma(L, D) + i for i < N under the master seed (SPEC 7).",
)
def seed_batches(context: dg.AssetExecutionContext, settings: BoardgenSettings) -> dg.Output:
    table = load_table_or_fail(settings)
    key = fingerprints.row_key(context.partition_key)
    try:
        batch = seeds.seed_batch(table, key, settings.samples, settings.master_seed)
    except KeyError as exc:
        raise dg.Failure(description=str(exc.args[0]), allow_retries=False) from None
    return dg.Output(batch, data_version=dg.DataVersion(batch.batch_fingerprint), metadata=batch.describe())


@dg.asset(
    group_name=GROUP,
    partitions_def=board_rows,
    check_specs=board_check_specs(),
    code_version=GENERATOR_CODE_VERSION,
    description="The row's N boards (metrics + layout), Parquet under <warehouse>/boards/ once assertion A' holds.",
)
def boards(context: dg.AssetExecutionContext, settings: BoardgenSettings, dask: DaskCluster,
           seed_batches: seeds.SeedBatch) -> dg.MaterializeResult:
    with dask.client() as client:
        result = calibrate_row.run_batch(settings.root, seed_batches, client)
    if not result.published:
        context.log.error(f"row {seed_batches.row.key_text}: {result.report.exits.get('least_bad', 0)} illegal boards; "
                          f"batch rejected to {result.path}, nothing downstream will consume it")
    return dg.MaterializeResult(
        data_version=dg.DataVersion(publish.file_digest(result.path)),
        metadata={
            **result.summary(),
            "path": dg.MetadataValue.path(result.path),
            "generation_seconds": round(result.seconds["generate"], 4),
            "checks_seconds": round(result.seconds["checks"], 4),
            "write_seconds": round(result.seconds["write"], 4),
        },
        check_results=[to_check_result(o) for o in result.outcomes],
    )
