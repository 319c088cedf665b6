"""The names the code location and its processes share: assets, jobs, run
tags (issue 29 "lists copied by hand": one place). A module of names only,
so a process that launches or reads runs (the nightly) imports no asset code.
"""

TABLE_FILES, VALIDATED_ROWS, DRAWS = "table_files", "validated_rows", "node_map_draws"
SEED_BATCHES, BOARDS, OVERLAYS, REPORT, STRATA = ("seed_batches", "boards", "variant_overlays", "calibration_report",
                                                  "calibration_strata")
TABLES = (TABLE_FILES, VALIDATED_ROWS)
ROW_ASSETS = (SEED_BATCHES, BOARDS, OVERLAYS, REPORT)
ALL_ASSETS = (*TABLES, DRAWS, *ROW_ASSETS, STRATA)
CHECKED = (BOARDS, OVERLAYS, REPORT, STRATA)  # the assets whose checks are table-wide

PREPARE_JOB, ROWS_JOB, TABLE_JOB, CALIBRATION_JOB = ("calibration_prepare", "calibration_rows", "calibration_table",
                                                     "calibration_job")
JOBS = (PREPARE_JOB, ROWS_JOB, TABLE_JOB, CALIBRATION_JOB)

TRIGGER_TAG, BATCH_TAG, REASON_TAG = "boardgen/trigger", "boardgen/batch", "boardgen/reason"
RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"
PARTITIONS = "board_gen_rows"


def range_tags(first: str, last: str) -> dict:
    """The run tags of one run over the row partitions ``first`` .. ``last``."""
    return {RANGE_START: first, RANGE_END: last}
