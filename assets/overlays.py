"""The variant overlays of a row's published boards, one partition per row
like ``boards`` (SPEC 3, 9; issue 4 "Asset"; issue 12 one run per range).

Downstream of ``boards``: the step reads the row's *published* boards back
from the warehouse, and an illegal batch is never published (the row's older
files are withdrawn with it), so no overlay is ever placed on an illegal
board. Over a range of rows, a row without current published boards is
skipped (its materialization says why; its own A' check is the red one);
alone in its run, it fails the step as before. The checks are evaluated on
the records about to be written; none is blocking. The logic is
``boardgen_pipeline.steps.overlay_row``.
"""

import dagster as dg

from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.steps import overlay_row

from .boards import ROWS, boards
from .checks import check_specs, partition_check_events
from .metadata import row_metadata
from .partitions import board_rows
from .resources import BoardgenSettings
from .tables import GROUP, load_catalog_or_fail


@dg.asset(
    group_name=GROUP,
    partitions_def=board_rows,
    backfill_policy=ROWS,
    deps=[boards],
    check_specs=check_specs("variant_overlays", overlay_row.CHECKS, overlay_row.DESCRIPTIONS,
                            partitions_def=board_rows),
    code_version=f"overlay_v{fingerprints.OVERLAY_VERSION}",
    description="The variant overlay of every published board of the row (type, scope, cells, packs, shortfall, "
                "whole-board variant), Parquet under <warehouse>/variant_overlays/.",
)
def variant_overlays(context: dg.AssetExecutionContext, settings: BoardgenSettings):
    catalog = load_catalog_or_fail(settings)
    outcomes, skipped = {}, []
    for partition in context.partition_keys:
        key = fingerprints.row_key(partition)
        try:
            result = overlay_row.run_overlays(settings.root, catalog, key, settings.samples, settings.master_seed)
        except (FileNotFoundError, ValueError, KeyError) as exc:
            skipped.append(f"{partition}: {exc}")
            context.add_asset_metadata({"row": partition, "skipped": str(exc)}, partition_key=partition)
            continue
        context.add_asset_metadata(row_metadata(result.summary(), result.path, result.seconds),
                                   partition_key=partition)
        outcomes[partition] = result.outcomes
    if skipped and len(context.partition_keys) == 1:
        raise dg.Failure(description=skipped[0].split(": ", 1)[1], allow_retries=False)
    for line in skipped:
        context.log.warning(f"overlays skipped for row {line}")
    yield dg.MaterializeResult()
    yield from partition_check_events(context, "variant_overlays", outcomes)
