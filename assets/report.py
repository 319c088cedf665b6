"""Report C and diagnostics D per row, read back from the published boards and
written to ``<warehouse>/calibration_report/`` (SPEC 7, 9; issue 3).

Seam: the variant-overlay and node-map-draw assets come between ``boards`` and
this report (SPEC 9 order); they add themselves to ``deps`` here.
"""


import dagster as dg

from boardgen_pipeline import calibration, publish

from .boards import boards
from .partitions import board_rows
from .resources import BoardgenSettings
from .tables import GROUP


@dg.asset(
    group_name=GROUP,
    partitions_def=board_rows,
    deps=[boards],
    description="Report C (p10/p50/p90) and diagnostics D (retry rate, exits, cap rejections) of the row.",
)
def calibration_report(settings: BoardgenSettings, seed_batches: calibration.SeedBatch) -> dg.MaterializeResult:
    try:
        record, path = calibration.write_row_report(settings.root, seed_batches)
    except (FileNotFoundError, ValueError) as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    db = publish.refresh_views_atomic(settings.root)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(publish.file_digest(path)),
        metadata={
            **{k: v for k, v in record.items() if isinstance(v, (int, float, str, bool))},
            "path": dg.MetadataValue.path(path),
            "duckdb": dg.MetadataValue.path(str(db)),
        },
    )
