"""The nightly's Godot export: after the table-wide checks, the calibrated
tables as the game's resources in ``<warehouse>/godot/`` when every row is
green (SPEC 11; docs/conformance.md "The tables as Godot resources"). Wiring
only: ``boardgen_pipeline.export.godot.export_on_green`` decides and writes.
"""

import dagster as dg

from boardgen_pipeline.export import godot

from .names import GODOT, STRATA
from .resources import BoardgenSettings
from .tables import GROUP, load_catalog_or_fail


@dg.asset(
    name=GODOT,
    group_name=GROUP,
    deps=[dg.AssetKey(STRATA)],
    description="The calibrated tables as Godot 4 resources (board_gen.tres, variation.tres, the node-map pools and "
                "their GDScript classes) in <warehouse>/godot/, written only when every row passes F4; stamped with "
                "the tables' digest, the kit version and the verdict.",
)
def godot_resources(settings: BoardgenSettings) -> dg.MaterializeResult:
    found = settings.resolved()
    catalog = load_catalog_or_fail(found)
    verdict, files = godot.export_on_green(found.warehouse, catalog, found.samples, found.master_seed)
    return dg.MaterializeResult(metadata={
        "exported": bool(files), "verdict": verdict.text(), "files": len(files),
        "path": dg.MetadataValue.path(str(found.warehouse / godot.NIGHT_FOLDER))})
