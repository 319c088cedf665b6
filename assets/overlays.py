"""The variant overlays of a row's published boards, one partition per row
like ``boards`` (SPEC 3, 9; issue 4 "Asset").

Downstream of ``boards``: the step reads the row's *published* boards back
from the warehouse, and an illegal batch is never published (A' blocks the
run before this step, and the row's older files are withdrawn), so no
overlay is ever placed on an illegal board. The checks are evaluated in the
step on the records it is about to write and returned with the
materialization, like the board checks; none is blocking. The logic is
``boardgen_pipeline.steps.overlay_row``.
"""

import dagster as dg

from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.steps import overlay_row
from boardgen_pipeline.warehouse import publish

from .boards import boards
from .checks import check_specs, to_check_result
from .partitions import board_rows
from .resources import BoardgenSettings
from .tables import GROUP, load_catalog_or_fail


@dg.asset(
    group_name=GROUP,
    partitions_def=board_rows,
    deps=[boards],
    check_specs=check_specs("variant_overlays", overlay_row.CHECKS, overlay_row.DESCRIPTIONS,
                            partitions_def=board_rows),
    code_version=f"overlay_v{fingerprints.OVERLAY_VERSION}",
    description="The variant overlay of every published board of the row (type, scope, cells, packs, shortfall, "
                "whole-board variant), Parquet under <warehouse>/variant_overlays/.",
)
def variant_overlays(context: dg.AssetExecutionContext, settings: BoardgenSettings) -> dg.MaterializeResult:
    catalog = load_catalog_or_fail(settings)
    key = fingerprints.row_key(context.partition_key)
    try:
        result = overlay_row.run_overlays(settings.root, catalog, key, settings.samples, settings.master_seed)
    except (FileNotFoundError, ValueError, KeyError) as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    metadata = {**result.summary(), **{f"{k}_seconds": round(v, 4) for k, v in result.seconds.items()}}
    if result.path:
        metadata["path"] = dg.MetadataValue.path(result.path)
        version = dg.DataVersion(publish.file_digest(result.path))
    else:
        version = dg.DataVersion("no-variation-table")
    return dg.MaterializeResult(
        data_version=version,
        metadata=metadata,
        check_results=[to_check_result(o) for o in result.outcomes],
    )
