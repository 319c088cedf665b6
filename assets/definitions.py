"""The ``Definitions`` of the boardgen code location (``workspace.yaml``).

``build_definitions(settings)`` lets tests point the same graph at temporary
tables and warehouse; ``defs`` takes every setting from the run config or,
unset, from the environment when a run starts (``resources``): loading it
reads no setting but the schedule's cron and time zone, which fall back to
their defaults when bad. The ``*_job_def`` functions give the resolved jobs
to ``dagster.reconstructable`` (``boardgen nightly``'s processes, ``lane``).
"""

import dagster as dg

from .automation import (
    calibration_job,
    night_follow_up,
    nightly_calibration,
    prepare_job,
    rows_job,
    table_edit_sensor,
    table_job,
)
from .calibration import calibrate
from .godot import godot_resources
from .nodemaps import node_map_draws
from .resources import BoardgenSettings, RowWorkers
from .retention import retention_job
from .tables import table_files, validated_rows

# SPEC 9 order: tables -> validated rows -> node-map draws; per row partition: seed batches ->
# boards -> variant overlays -> calibration report; then the stratified figures (one step, calibrate); the nightly's
# Godot export last (the table job).
ASSETS = [table_files, validated_rows, node_map_draws, calibrate, godot_resources]


def build_definitions(settings: BoardgenSettings | None = None, workers: RowWorkers | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=ASSETS,
        jobs=[calibration_job, prepare_job, rows_job, table_job, retention_job],
        schedules=[nightly_calibration],
        sensors=[table_edit_sensor, *night_follow_up],
        resources={"settings": settings or BoardgenSettings(), "workers": workers or RowWorkers()},
        executor=dg.in_process_executor,
    )


defs = build_definitions()


def job_def(name: str) -> dg.JobDefinition:
    return defs.resolve_job_def(name)


def calibration_job_def() -> dg.JobDefinition:
    return job_def(calibration_job.name)


def prepare_job_def() -> dg.JobDefinition:
    return job_def(prepare_job.name)


def rows_job_def() -> dg.JobDefinition:
    return job_def(rows_job.name)


def table_job_def() -> dg.JobDefinition:
    return job_def(table_job.name)


def retention_job_def() -> dg.JobDefinition:
    return job_def(retention_job.name)


# the reconstructable job of each job name (boardgen nightly's lanes execute runs by job name)
JOB_DEFS = {prepare_job.name: prepare_job_def, rows_job.name: rows_job_def, table_job.name: table_job_def,
            retention_job.name: retention_job_def, calibration_job.name: calibration_job_def}
