"""The ``Definitions`` of the boardgen code location (``workspace.yaml``).

``build_definitions(settings)`` lets tests point the same graph at temporary
tables and warehouse; ``defs`` is built from the environment
(``resources.settings_from_env``).
"""


import dagster as dg

from .automation import CALIBRATION_JOB, calibration_job, nightly_calibration, table_edit_sensor
from .boards import boards, seed_batches
from .nodemaps import node_map_draws
from .overlays import variant_overlays
from .report import calibration_report
from .resources import BoardgenSettings, DaskCluster, dask_from_env, settings_from_env
from .strata import calibration_strata
from .tables import table_files, validated_rows

# SPEC 9 order. Per row partition: boards -> variant overlays -> calibration report.
# Not per row: the node-map draws (after the validated pools) and the stratified
# figures, which need every row's report and the draws.
ASSETS = [table_files, validated_rows, seed_batches, boards, variant_overlays, calibration_report,
          node_map_draws, calibration_strata]


def build_definitions(settings: BoardgenSettings | None = None, dask: DaskCluster | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=ASSETS,
        jobs=[calibration_job],
        schedules=[nightly_calibration],
        sensors=[table_edit_sensor],
        resources={"settings": settings or settings_from_env(), "dask": dask or dask_from_env()},
        executor=dg.in_process_executor,
    )


defs = build_definitions()


def calibration_job_def() -> dg.JobDefinition:
    """The resolved job, for ``dagster.reconstructable`` (``assets.nightly``)."""
    return defs.resolve_job_def(CALIBRATION_JOB)
