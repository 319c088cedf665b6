"""Report C and diagnostics D per row, read back from the published boards and
written to ``<warehouse>/calibration_report/`` (SPEC 7, 9; issue 3), and the
table-wide check ``every_row_passes_f4`` (issue 13).

SPEC 9 order: ``boards`` -> ``variant_overlays`` -> this report, per row; the
node-map draws and the stratified figures (``assets.nodemaps``,
``assets.strata``) need every row's report and follow it, unpartitioned.

``every_row_passes_f4`` is an unpartitioned check on this partitioned asset,
evaluated by every run of it (a full nightly, a sensor run of one row, a
click in the UI) over every row of the table as the warehouse holds it: a
failing row makes the report red in the asset graph, and the check names the
failing rows and assertions.
"""

import dagster as dg

from boardgen_pipeline.steps import report_row
from boardgen_pipeline.warehouse import views

from .boards import ROWS, boards, row_batches
from .checks import check_specs, partition_check_events
from .metadata import row_metadata
from .overlays import variant_overlays
from .partitions import board_rows
from .resources import BoardgenSettings
from .tables import GROUP, load_table_or_fail


@dg.asset(
    group_name=GROUP,
    partitions_def=board_rows,
    backfill_policy=ROWS,
    deps=[boards, variant_overlays],
    check_specs=check_specs("calibration_report", (report_row.CHECK_EVERY_ROW,),
                            {report_row.CHECK_EVERY_ROW: report_row.EVERY_ROW_DESCRIPTION}),
    description="Report C (p10/p50/p90) and diagnostics D (retry rate, exits, cap rejections) of the row, "
                "with the table parameters that produced them.",
)
def calibration_report(context: dg.AssetExecutionContext, settings: BoardgenSettings):
    skipped = []
    table = load_table_or_fail(settings)
    for batch in row_batches(context, settings, table):
        try:
            record, path = report_row.write_row_report(settings.root, batch)
        except (FileNotFoundError, ValueError) as exc:
            skipped.append(str(exc))
            context.add_asset_metadata({"row": batch.partition_key, "skipped": str(exc)},
                                       partition_key=batch.partition_key)
            continue
        figures = {"row": batch.row.key_text, **{k: v for k, v in record.items() if v is not None}}
        context.add_asset_metadata(row_metadata(figures, path), partition_key=batch.partition_key)
    if skipped and len(context.partition_keys) == 1:
        raise dg.Failure(description=skipped[0], allow_retries=False)
    db = views.refresh_views_atomic(settings.root)
    summary = report_row.every_row_outcome(settings.root, table, settings.samples, settings.master_seed)
    yield dg.MaterializeResult(metadata={"duckdb": dg.MetadataValue.path(str(db))})
    yield from partition_check_events(context, "calibration_report", {}, extra=[summary])


