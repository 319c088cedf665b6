"""A process that executes runs of a night for ``boardgen nightly``
(docs/pipeline.md "One nightly"; ``boardgen_pipeline.steps.lanes``).

A lane is a fork of the lanes' server, which imported what every lane needs
once (``lane_preload``: Dagster, the code location, the kernels). It reads
one run at a time from its orders pipe (``{"job", "tags", "run_config"}``),
executes it with ``dagster.execute_job`` (the engine creates the run and
records its events in this process, as a launched run worker would), and
answers ``{"run_id", "success", "key"}`` on its answers pipe, until its
orders end. It opens the instance with its first run (the nightly makes the
home meanwhile) and waits on a read, never polls. Every run it executes
carries this host and process (``night.here``), so the nightly, which holds
the lane's handle, can tell its runs from others'.
"""

import contextlib
import os
import sys

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}  # the event log has it all
PRELOAD = ["boardgen_dagster.lane_preload"]


def serve(orders, answers, dagster_home: str) -> None:
    """The lane: ``orders`` and ``answers`` are its ends of the nightly's pipes."""
    # A run's compute-log capture starts `tail` processes that echo to standard output: they write
    # where the lane's errors go, not into the nightly's own output.
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    os.environ["DAGSTER_HOME"] = dagster_home
    import dagster as dg

    from boardgen_dagster import definitions
    from boardgen_pipeline.processes import freeze_long_lived
    from boardgen_pipeline.steps import night
    from boardgen_pipeline.steps.chain import warm_up
    from boardgen_pipeline.warehouse.instance_storage import tune_instance_storage

    from .home import event_log_held_open

    warmed = False
    instance = None  # opened on the first run: the nightly creates the home meanwhile
    held = contextlib.ExitStack()
    try:
        while True:
            try:
                order = orders.recv()
            except EOFError:  # the nightly ended our orders
                break
            if not warmed and night.stage_of(order["tags"].get(night.KEY_TAG, "")) == night.ROWS:
                # the kernels, once for every rows run of the lane (the server has loaded them already
                # unless that failed: then here, under the compile lock, with the error where it belongs)
                warm_up()
                freeze_long_lived()  # what it loaded (nothing, when the server had the kernels)
                warmed = True
            if instance is None:
                tune_instance_storage()  # the runs' own event files are made, and checked, here
                instance = dg.DagsterInstance.get()
                held.enter_context(event_log_held_open(instance))  # the lane's runs write their events there
            config = {**order["run_config"], **QUIET}
            job = dg.reconstructable(definitions.JOB_DEFS[order["job"]])
            # the result holds the run's events: dropped at once, so the lane's memory stays flat
            result = dg.execute_job(job, instance, run_config=config, tags={**order["tags"], **night.here()})
            answers.send({"run_id": result.run_id, "success": result.success, "key": order["tags"].get(night.KEY_TAG)})
    finally:
        held.close()
        if instance is not None:
            instance.dispose()
        sys.stderr.flush()
