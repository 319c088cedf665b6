"""One lane of the nightly's runs: ``python -m boardgen_dagster.worker PLAN LANE``
(issue 28 "bookkeeping that scales out"; docs/decisions.md "Stand on the
engine").

The nightly cuts the table into ranges of rows (``steps.runs.plan``) and
starts one such process per lane. Lane 0 first runs ``calibration_prepare``
(the tables, the node-map draws). Each lane executes its ranges one after
another, each as a run of ``calibration_rows`` through ``dagster.execute_job``
(the engine creates the run, plans its partitions and records each row in
this process, as a launched run worker would), then counts itself in
(``steps.runs.arrive``): the lane that completes the count runs
``calibration_table`` (the table-wide checks and figures) and the retention
policy, in the process it already has. ``LANE`` = ``table``: that run alone
(the nightly's fallback when a lane died before it arrived).
"""

import sys
from pathlib import Path

from boardgen_pipeline.steps import retention as policies
from boardgen_pipeline.steps import runs

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}  # the event log has it all
TABLE_LANE = "table"


def main(argv=None) -> int:
    plan_path, lane = argv if argv is not None else sys.argv[1:3]
    plan_path = Path(plan_path)
    import dagster as dg

    from boardgen_dagster import definitions, retention
    from boardgen_dagster.names import range_tags
    from boardgen_pipeline.steps.chain import warm_up

    warm_up()  # the kernels from numba's cache, once for every run of the lane
    # started before the nightly has its plan (the imports above overlap its own set-up): wait for it
    plan = runs.wait_for_plan(plan_path)
    if plan is None or (lane != TABLE_LANE and int(lane) >= len(plan["lanes"])):
        return 0  # the nightly stopped before any run (a bad table, a storage fault), or needs fewer lanes
    tags = plan["tags"]

    def execute(job_def, **extra):
        # the result holds the run's events: dropped at once, so the lane's memory stays flat
        dg.execute_job(dg.reconstructable(job_def), instance, run_config=QUIET, tags={**tags, **extra})

    with dg.DagsterInstance.get() as instance:
        if lane != TABLE_LANE:
            if lane == "0":
                execute(definitions.prepare_job_def)
            for first, last in plan["lanes"][int(lane)]:
                execute(definitions.rows_job_def, **range_tags(first, last))
            if not runs.arrive(plan_path):
                return 0
        execute(definitions.table_job_def)
        # the nightly's retention, here rather than in the nightly's own process (whose work stays small)
        policy = policies.policy_from(plan.get("keep_days"), plan.get("keep_runs"))
        gone = retention.prune(instance, policy)
        runs.note(plan_path, "pruned", len(gone))
    return 0


if __name__ == "__main__":
    sys.exit(main())
