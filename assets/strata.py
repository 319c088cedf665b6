"""Stratified calibration figures: per ``level x template`` and per pool
(SPEC 4 "Stratified measurement"; issue 5).

Needs every row's report, so it is not partitioned: it reads every
``calibration_report`` partition of the warehouse (current ones only) and
the node-map draws, and writes ``<warehouse>/calibration_strata/
calibration_strata.parquet`` (view ``calibration_strata``). The logic is
``boardgen_pipeline.steps.stratify``.
"""

from pathlib import Path

import dagster as dg

from boardgen_pipeline.pictures import charts
from boardgen_pipeline.steps import stratify
from boardgen_pipeline.warehouse import publish, views

from .checks import check_specs, to_check_result
from .nodemaps import node_map_draws
from .report import calibration_report
from .resources import BoardgenSettings
from .tables import GROUP, load_catalog_or_fail


@dg.asset(
    group_name=GROUP,
    deps=[calibration_report, node_map_draws],
    check_specs=check_specs("calibration_strata", (stratify.CHECK_COMPLETE,),
                            {stratify.CHECK_COMPLETE: stratify.DESCRIPTION}),
    description="Calibration figures (p10/p50/p90, retry rate, mean attempts) per level x template and per pool "
                "(draw-probability-weighted mean). Parquet <warehouse>/calibration_strata/calibration_strata.parquet.",
)
def calibration_strata(settings: BoardgenSettings) -> dg.MaterializeResult:
    catalog = load_catalog_or_fail(settings)
    result = stratify.run_strata(settings.root, catalog, settings.samples, settings.master_seed,
                               settings.node_map_adventures)
    db = views.refresh_views_atomic(settings.root)
    pictures = {}
    if result.chart:
        pictures = {"report_chart_path": dg.MetadataValue.path(result.chart),
                    "report_chart": dg.MetadataValue.md(charts.png_markdown(Path(result.chart).read_bytes(),
                                                                            "p10/p50/p90 vs target per row"))}
    return dg.MaterializeResult(
        data_version=dg.DataVersion(publish.file_digest(result.path)),
        metadata={**result.summary(), "path": dg.MetadataValue.path(result.path),
                  "duckdb": dg.MetadataValue.path(str(db)), **pictures},
        check_results=[to_check_result(o) for o in result.outcomes],
    )
