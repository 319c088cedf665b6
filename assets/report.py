"""Report C and diagnostics D per row, read back from the published boards and
written to ``<warehouse>/calibration_report/`` (SPEC 7, 9; issue 3).

SPEC 9 order: ``boards`` -> ``variant_overlays`` -> this report, per row; the
node-map draws and the stratified figures (``assets.nodemaps``,
``assets.strata``) need every row's report and follow it, unpartitioned.
"""


import dagster as dg

from boardgen_pipeline.calibration import seeds
from boardgen_pipeline.steps import report_row
from boardgen_pipeline.warehouse import publish, views

from .boards import boards
from .overlays import variant_overlays
from .partitions import board_rows
from .resources import BoardgenSettings
from .tables import GROUP


@dg.asset(
    group_name=GROUP,
    partitions_def=board_rows,
    deps=[boards, variant_overlays],
    description="Report C (p10/p50/p90) and diagnostics D (retry rate, exits, cap rejections) of the row.",
)
def calibration_report(settings: BoardgenSettings, seed_batches: seeds.SeedBatch) -> dg.MaterializeResult:
    try:
        record, path = report_row.write_row_report(settings.root, seed_batches)
    except (FileNotFoundError, ValueError) as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    db = views.refresh_views_atomic(settings.root)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(publish.file_digest(path)),
        metadata={
            **{k: v for k, v in record.items() if isinstance(v, (int, float, str, bool))},
            "path": dg.MetadataValue.path(path),
            "duckdb": dg.MetadataValue.path(str(db)),
        },
    )
