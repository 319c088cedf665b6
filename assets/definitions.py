"""The ``Definitions`` of the boardgen code location (``workspace.yaml``).

``build_definitions(settings)`` lets tests point the same graph at temporary
tables and warehouse; ``defs`` is built from the environment
(``resources.settings_from_env``).
"""


import dagster as dg

from .automation import CALIBRATION_JOB, calibration_job, nightly_calibration, table_edit_sensor
from .calibration import calibrate
from .nodemaps import node_map_draws
from .resources import BoardgenSettings, RowWorkers, settings_from_env, workers_from_env
from .tables import table_files, validated_rows

# SPEC 9 order. Per row partition: seed batches -> boards -> variant overlays -> calibration
# report; then the stratified figures, which need every row's report and the node-map draws
# (after the validated pools): one step, `calibrate`, for all five.
ASSETS = [table_files, validated_rows, node_map_draws, calibrate]


def build_definitions(settings: BoardgenSettings | None = None, workers: RowWorkers | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=ASSETS,
        jobs=[calibration_job],
        schedules=[nightly_calibration],
        sensors=[table_edit_sensor],
        resources={"settings": settings or settings_from_env(), "workers": workers or workers_from_env()},
        executor=dg.in_process_executor,
    )


defs = build_definitions()


def calibration_job_def() -> dg.JobDefinition:
    """The resolved job, for ``dagster.reconstructable`` (``assets.nightly``)."""
    return defs.resolve_job_def(CALIBRATION_JOB)
