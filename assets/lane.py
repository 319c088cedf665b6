"""A process that executes runs of a night for ``boardgen nightly``:
``python -m boardgen_dagster.lane`` (docs/pipeline.md "One nightly").

It imports Dagster and the code location once (and the kernels before its
first rows run), then reads one
run a line on its standard input (``{"job", "tags", "run_config"}``, JSON),
executes it with ``dagster.execute_job`` (the engine creates the run and
records its events in this process, as a launched run worker would), and
writes one line on its standard output (``{"run_id", "success"}``), until
its input ends. The nightly starts its lanes before it knows their runs, so
these imports overlap its own set-up (the instance is opened with the first
run, once the nightly has made the home); a lane waits on a read, never
polls.
Every run it executes carries this host and process (``night.here``), so
the nightly, which holds the lane's handle, can tell its runs from others'.
"""

import contextlib
import json
import os
import sys

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}  # the event log has it all


def main() -> int:
    # The answers go on a copy of the pipe that only this process holds (``os.dup`` makes it
    # non-inheritable), and standard output becomes standard error: a run's compute-log capture starts
    # `tail` processes that echo to standard output, which would otherwise hold the nightly's pipe open
    # after this process is killed (the nightly then never learns the lane died) and mix their lines
    # with the answers.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    import dagster as dg

    from boardgen_dagster import definitions
    from boardgen_pipeline.steps import night
    from boardgen_pipeline.steps.chain import warm_up

    from .home import event_log_held_open

    warmed = False
    instance = None  # opened on the first run: the nightly creates the home meanwhile
    held = contextlib.ExitStack()
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            order = json.loads(line)
            if not warmed and order["tags"].get(night.STAGE_TAG) == night.ROWS:
                # the kernels from numba's cache, once for every rows run of the lane (on a cold cache
                # under the compile lock); a lane that only draws the node maps loads none
                warm_up()
                warmed = True
            if instance is None:
                instance = dg.DagsterInstance.get()
                held.enter_context(event_log_held_open(instance))  # the lane's runs write their events there
            config = {**order["run_config"], **QUIET}
            job = dg.reconstructable(definitions.JOB_DEFS[order["job"]])
            # the result holds the run's events: dropped at once, so the lane's memory stays flat
            result = dg.execute_job(job, instance, run_config=config, tags={**order["tags"], **night.here()})
            print(json.dumps({"run_id": result.run_id, "success": result.success,
                              "key": order["tags"].get(night.KEY_TAG)}), file=answers, flush=True)
    finally:
        held.close()
        if instance is not None:
            instance.dispose()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    # the instance is disposed and every answer written: the interpreter's teardown of Dagster's and
    # numba's modules (about a second the nightly waits for) has nothing left to save
    os._exit(code)
