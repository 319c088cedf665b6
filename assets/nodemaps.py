"""The node-map draws: validated template pools and a batch of simulated
adventures, one dataset for the whole table (SPEC 4, 9).

Not partitioned by row: the pools are per level and an adventure crosses
every level. The checks (templates valid, draws deterministic, draws
uniform, step-3 maps valid) are evaluated in the step and returned with the
materialization; the logic is ``boardgen_pipeline.steps.draw_node_maps``.
"""

import dagster as dg

from boardgen_pipeline.steps import draw_node_maps
from boardgen_pipeline.warehouse import publish, views

from .checks import check_result, check_specs
from .resources import BoardgenSettings
from .tables import GROUP, load_catalog_or_fail, validated_rows


@dg.asset(
    group_name=GROUP,
    deps=[validated_rows],
    check_specs=check_specs("node_map_draws", draw_node_maps.CHECKS, draw_node_maps.DESCRIPTIONS),
    description="Simulated adventures (seeds 0..n-1, both first-adventure branches): the map of each level, its "
                "source and node_map scope. Parquet <warehouse>/node_map_draws/draws.parquet.",
)
def node_map_draws(settings: BoardgenSettings) -> dg.MaterializeResult:
    found = settings.resolved()
    catalog = load_catalog_or_fail(found)
    try:
        result = draw_node_maps.run_draws(found.warehouse, catalog, found.adventures)
    except ValueError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    db = views.refresh_views_atomic(found.warehouse)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(publish.file_digest(result.path)),
        metadata={
            **result.summary(),
            **{f"{k}_seconds": round(v, 4) for k, v in result.seconds.items()},
            "path": dg.MetadataValue.path(result.path),
            "duckdb": dg.MetadataValue.path(str(db)),
        },
        check_results=[check_result(o, "node_map_draws") for o in result.outcomes],
    )
