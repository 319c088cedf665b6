"""The ``Definitions`` of the boardgen code location (``workspace.yaml``).

``build_definitions(settings)`` lets tests point the same graph at temporary
tables and warehouse; ``defs`` is built from the environment
(``resources.settings_from_env``).
"""


import dagster as dg

from .automation import CALIBRATION_JOB, calibration_job, nightly_calibration, table_edit_sensor
from .boards import boards, seed_batches
from .report import calibration_report
from .resources import BoardgenSettings, settings_from_env
from .tables import table_files, validated_rows

# Seam: the variant_overlays and node_map_draws assets join this list (SPEC 9 order:
# boards -> variant overlays -> node-map draws -> calibration report).
ASSETS = [table_files, validated_rows, seed_batches, boards, calibration_report]


def build_definitions(settings: BoardgenSettings | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=ASSETS,
        jobs=[calibration_job],
        schedules=[nightly_calibration],
        sensors=[table_edit_sensor],
        resources={"settings": settings or settings_from_env()},
        executor=dg.in_process_executor,
    )


defs = build_definitions()


def calibration_job_def() -> dg.JobDefinition:
    """The resolved job, for ``dagster.reconstructable`` (``assets.nightly``)."""
    return defs.resolve_job_def(CALIBRATION_JOB)
