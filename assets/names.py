"""The names the code location and its processes share: assets, jobs, the
engine's run tags (one place). A module of names only, so a process that
launches or reads runs imports no asset code. The night's own tags are the
library's (``boardgen_pipeline.steps.night``).
"""

from boardgen_pipeline.check_names import CHECK_CORRIDOR
from boardgen_pipeline.steps import night

TABLE_FILES, VALIDATED_ROWS, DRAWS = "table_files", "validated_rows", "node_map_draws"
SEED_BATCHES, BOARDS, OVERLAYS, REPORT, STRATA = ("seed_batches", "boards", "variant_overlays", "calibration_report",
                                                  "calibration_strata")
GODOT = "godot_resources"  # the nightly's Godot export (assets/godot.py), after the table's checks
TUNED, PROPOSAL = "tuned_rows", "curve_proposal"  # the tune job's (assets/tuning.py), never the nightly's
TABLES = (TABLE_FILES, VALIDATED_ROWS)
ROW_ASSETS = (SEED_BATCHES, BOARDS, OVERLAYS, REPORT)
ALL_ASSETS = (*TABLES, DRAWS, *ROW_ASSETS, STRATA)
CHECKED = (BOARDS, OVERLAYS, REPORT, STRATA)  # the assets whose checks are table-wide

PREPARE_JOB, ROWS_JOB, TABLE_JOB, RETENTION_JOB, CALIBRATION_JOB = (
    "calibration_prepare", "calibration_rows", "calibration_table", "calibration_retention", "calibration_job")
JOBS = (PREPARE_JOB, ROWS_JOB, TABLE_JOB, RETENTION_JOB, CALIBRATION_JOB)
TUNE_JOB = "curve_tune_job"  # launched from the UI, never by a night
# the job that runs each stage of a night
STAGE_JOBS = {night.PREPARE: PREPARE_JOB, night.ROWS: ROWS_JOB, night.TABLE: TABLE_JOB,
              night.RETENTION: RETENTION_JOB}

REASON_TAG = "boardgen/reason"
# Dagster's own tag of a run a schedule asked for (``DagsterRun.tags_for_schedule``; no public name for it).
# The daemon adds it to a tick's runs; the schedule's request carries it too, so a night launched from the
# schedule's page (Test schedule, Launch all: the request's tags alone) reads as the schedule's on the Runs
# page, not "Manually launched".
SCHEDULE_NAME_TAG = "dagster/schedule_name"
SCHEDULE = "nightly_calibration"
RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"
PARTITIONS = "board_gen_rows"


def range_tags(first: str, last: str) -> dict:
    """The run tags of one run over the row partitions ``first`` .. ``last``."""
    return {RANGE_START: first, RANGE_END: last}


def check_names() -> dict[str, tuple[str, ...]]:
    """Every check of the graph, by the asset it judges (``check_names``)."""
    from boardgen_pipeline import check_names as c

    return {BOARDS: (*c.F4, c.CHECK_BOARDS_DETERMINISTIC), OVERLAYS: c.OVERLAYS, REPORT: (c.CHECK_EVERY_ROW,),
            STRATA: (c.CHECK_COMPLETE,), DRAWS: c.NODE_MAPS}


# checks defined beside the calibrate step, each its own op (assets/tuning.py): run by the same runs
STANDALONE_CHECKS = {REPORT: (CHECK_CORRIDOR,)}


def check_keys(*assets: str) -> list:
    """The check keys of ``assets`` (default: every checked asset and the draws)."""
    import dagster as dg

    names = check_names()
    return [dg.AssetCheckKey(dg.AssetKey(a), n) for a in (assets or names)
            for n in (*names[a], *STANDALONE_CHECKS.get(a, ()))]
