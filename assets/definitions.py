"""The ``Definitions`` of the boardgen code location (``workspace.yaml``).

``build_definitions(settings)`` lets tests point the same graph at temporary
tables and warehouse; ``defs`` is built from the environment
(``resources.settings_from_env``). The ``*_job_def`` functions give the
resolved jobs to ``dagster.reconstructable`` (``boardgen_dagster.worker``).
"""

import dagster as dg

from .automation import calibration_job, nightly_calibration, prepare_job, rows_job, table_edit_sensor, table_job
from .calibration import calibrate
from .nodemaps import node_map_draws
from .resources import BoardgenSettings, RowWorkers, settings_from_env, workers_from_env
from .tables import table_files, validated_rows

# SPEC 9 order: tables -> validated rows -> node-map draws; per row partition: seed batches ->
# boards -> variant overlays -> calibration report; then the stratified figures (one step, calibrate).
ASSETS = [table_files, validated_rows, node_map_draws, calibrate]


def build_definitions(settings: BoardgenSettings | None = None, workers: RowWorkers | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=ASSETS,
        jobs=[calibration_job, prepare_job, rows_job, table_job],
        schedules=[nightly_calibration],
        sensors=[table_edit_sensor],
        resources={"settings": settings or settings_from_env(), "workers": workers or workers_from_env()},
        executor=dg.in_process_executor,
    )


defs = build_definitions()


def calibration_job_def() -> dg.JobDefinition:
    return defs.resolve_job_def(calibration_job.name)


def prepare_job_def() -> dg.JobDefinition:
    return defs.resolve_job_def(prepare_job.name)


def rows_job_def() -> dg.JobDefinition:
    return defs.resolve_job_def(rows_job.name)


def table_job_def() -> dg.JobDefinition:
    return defs.resolve_job_def(table_job.name)
