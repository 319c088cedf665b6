"""One lane of the nightly's runs: ``python -m assets.worker PLAN LANE``
(issue 28 "bookkeeping that scales out"; docs/decisions.md "Runs are the unit
of scale-out").

The nightly cuts the table into ranges of rows (``steps.runs.plan``) and
starts one such process per lane. The process executes its ranges one after
another, each as a Dagster run of ``calibration_rows`` through
``dagster.execute_job`` (the engine creates the run, plans its partitions and
records each row in this process, as a launched run worker would), then
arrives at the plan's barrier: the lane that arrives last executes the
``calibration_table`` run (the table-wide checks and figures), in the process
it already has. Lane 0 first runs ``calibration_prepare`` (the tables and the
node-map draws). ``LANE`` = ``table`` executes that run alone (the nightly's
fallback when a lane died before arriving).
"""

import json
import sys
from pathlib import Path

from boardgen_pipeline import files

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}  # the event log has it all
TABLE_LANE = "table"


def arrive(plan_path: Path, lanes: int) -> bool:
    """Count this lane in; True for the lane that completes the count."""
    counter = plan_path.with_suffix(".arrived")
    with files.lock(plan_path.with_suffix(".lock")):
        arrived = int(counter.read_text()) + 1 if counter.exists() else 1
        files.atomic_write(counter, str(arrived))
    return arrived == lanes


def arrived(plan_path: Path) -> int:
    counter = plan_path.with_suffix(".arrived")
    return int(counter.read_text()) if counter.exists() else 0


def main(argv=None) -> int:
    plan_path, lane = argv if argv is not None else sys.argv[1:3]
    plan_path = Path(plan_path)
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    import dagster as dg

    from assets import definitions
    from assets.automation import range_tags
    from boardgen_pipeline.steps.chain import warm_up

    warm_up()  # the kernels from numba's cache, once for every run of the lane
    tags = plan["tags"]
    with dg.DagsterInstance.get() as instance:
        if lane != TABLE_LANE:
            if lane == "0":  # the tables and the node-map draws, before the first rows
                dg.execute_job(dg.reconstructable(definitions.prepare_job_def), instance, run_config=QUIET, tags=tags)
            for first, last in plan["lanes"][int(lane)]:
                # the result holds this run's events: dropped at once, so the lane's memory stays flat
                dg.execute_job(dg.reconstructable(definitions.rows_job_def), instance, run_config=QUIET,
                               tags={**tags, **range_tags(first, last)})
            if not arrive(plan_path, len(plan["lanes"])):
                return 0
        dg.execute_job(dg.reconstructable(definitions.table_job_def), instance, run_config=QUIET, tags=tags)
        # the nightly's retention, here rather than in the nightly's own process (whose work stays small)
        from assets import retention

        gone = retention.prune(instance, retention.policy_from(plan.get("keep_days"), plan.get("keep_runs")))
        files.atomic_write(plan_path.with_suffix(".pruned"), str(len(gone)))
    return 0


def pruned(plan_path: Path) -> int:
    """How many old runs the nightly's retention forgot (0 before it ran)."""
    counter = plan_path.with_suffix(".pruned")
    return int(counter.read_text()) if counter.exists() else 0


if __name__ == "__main__":
    sys.exit(main())
