"""The designer's loop: from saving a one-row table edit to that row's new
check results in the instance, with ``make ui`` running (goal: edit ->
verdict <= 8 s). Not a test: it prints figures.

1. copies ``tables/`` to a temporary folder and runs the nightly there once
   (a fresh warehouse and Dagster home), so every row is current;
2. starts ``python -m boardgen_dagster.ui`` (the webserver and the daemon, as ``make
   ui`` does) on that home, tables and warehouse, and waits until the
   daemon's sensor loop has evaluated the table-edit sensor once;
3. ``--edits`` times (default 3): rewrites one row's ``mine_density`` in the
   table file, at a moment of the daemon's 5 s sensor loop that differs from
   one edit to the next (spread evenly over the loop: ``save_phase``), then
   polls the instance until every F4 check of ``boards`` (table-wide checks,
   so the edited row is judged with the rest) has a result from the edit's
   run, and waits for the run to end before the next edit;
4. prints, per edit, the time to the verdict and where it went: the
   sensor's tick (save -> run created), the run's start (created -> the run
   process's ``RUN_START``: the queue and the process start), the steps
   before the row's (start -> the ``calibrate`` step), and the row (step
   start -> its last F4 check), and the launch's stages (``launch_stages``:
   the run's planned events, the queue, the run process's start, the code
   location's load); then the median.

    .venv/bin/python benchmarks/edit_latency.py            # 3 edits of row (2,0)
    .venv/bin/python benchmarks/edit_latency.py --edits 5 --row 3,1
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
DENSITIES = ("0.19", "0.18", "0.2", "0.17", "0.21")


def set_density(table: Path, key: tuple[int, int], value: str) -> None:
    """Rewrite one row's ``mine_density`` in place (the rest of the file untouched)."""
    text = table.read_text()
    blocks = re.split(r"(?m)^(?=\[\[rows\]\])", text)
    for i, block in enumerate(blocks):
        if re.search(rf"(?m)^level_index = {key[0]}$", block) and re.search(rf"(?m)^node_depth = {key[1]}$", block):
            blocks[i] = re.sub(r"(?m)^mine_density = .*$", f"mine_density = {value}", block)
            break
    else:
        raise SystemExit(f"no row {key} in {table}")
    table.write_text("".join(blocks))


# Dagster's sensor daemon turns its loop every 5 s (MIN_INTERVAL_LOOP_TIME in dagster/_daemon/sensor.py)
LOOP_SECONDS = 5.0


def wait_for_sensor(instance, since: float, timeout: float = 180) -> float:
    """Until the daemon has evaluated the table-edit sensor after ``since``;
    returns that tick's timestamp."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for state in instance.all_instigator_state():
            if state.name != "table_edit_sensor":
                continue
            ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id, limit=1)
            if ticks and ticks[0].timestamp > since:
                return ticks[0].timestamp
        time.sleep(0.05)
    raise SystemExit("the daemon never evaluated table_edit_sensor")


def save_phase(edit: int, edits: int) -> float:
    """Seconds after a tick at which edit ``edit`` of ``edits`` is saved: the
    saves spread evenly over the daemon's loop, as a designer's saves fall at
    any moment of it. (Saved at once after a tick, every edit waited the whole
    loop for the next one: the worst case, measured as if typical.)"""
    return (edit + 0.5) / edits * LOOP_SECONDS


def one_edit(instance, table: Path, key: tuple[int, int], value: str, checks: int, timeout: float = 300) -> dict:
    import dagster as dg

    partition = f"{key[0]}-{key[1]}"
    known = {r.run_id for r in instance.get_runs()}
    set_density(table, key, value)
    t0 = time.time()
    run = None
    deadline = t0 + timeout
    while time.time() < deadline:
        if run is None:
            new = [r for r in instance.get_runs(filters=dg.RunsFilter(tags={"boardgen/trigger": "table_edit"}))
                   if r.run_id not in known]
            run = new[-1] if new else None
        if run is not None:
            records = instance.get_records_for_run(
                run.run_id, of_type={dg.DagsterEventType.ASSET_CHECK_EVALUATION}).records
            done = [r for r in records if r.event_log_entry.dagster_event.asset_check_evaluation_data.asset_key
                    == dg.AssetKey("boards")
                    # table-wide checks (no partition): they judge the edited row with the rest
                    and r.event_log_entry.dagster_event.asset_check_evaluation_data.partition in (partition, None)]
            if len(done) >= checks:
                t_done = max(r.timestamp for r in done)
                break
        time.sleep(0.1)
    else:
        raise SystemExit(f"no verdict for {partition} within {timeout} s")
    # the run's own milestones, once it has ended (the next edit starts on a quiet instance)
    while not instance.get_run_by_id(run.run_id).is_finished:
        time.sleep(0.2)
    run = instance.get_run_by_id(run.run_id)
    created = instance.get_run_record_by_id(run.run_id).create_timestamp.timestamp()
    events = instance.all_logs(run.run_id)
    started = first_event(events, dg.DagsterEventType.RUN_START)
    row_step = next(e.timestamp for e in events if e.dagster_event and e.dagster_event_type
                    == dg.DagsterEventType.STEP_START and e.step_key == "calibrate")
    return {"verdict": t_done - t0, "tick": created - t0, "launch": started - created,
            "before_row": row_step - started, "row": t_done - row_step, "run": run.run_id[:8],
            "status": run.status.value, **launch_stages(events, created, started)}


def first_event(events, kind, after: float = 0.0) -> float:
    """The timestamp of the first event of ``kind`` at or after ``after``."""
    return next(e.timestamp for e in events
                if e.dagster_event and e.dagster_event_type == kind and e.timestamp >= after)


def launch_stages(events, created: float, started: float) -> dict:
    """Where a launch's seconds go, read off the run's own events: the run's
    planned events written (created -> enqueued, in the sensor's tick), the
    queue (enqueued -> the coordinator's dequeue, ``RUN_STARTING``), the run
    process started (-> its first engine event, "Started process for run":
    Dagster's code server spawns a new interpreter, which imports Dagster and
    opens the instance), and the code location loaded (-> ``RUN_START``)."""
    import dagster as dg

    enqueued = first_event(events, dg.DagsterEventType.RUN_ENQUEUED)
    starting = first_event(events, dg.DagsterEventType.RUN_STARTING)
    process = first_event(events, dg.DagsterEventType.ENGINE_EVENT, after=starting)
    return {"planned": enqueued - created, "queue": starting - enqueued, "process": process - starting,
            "load": started - process}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--row", default="2,0", help="the row to edit, L,D (default 2,0)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    key = tuple(int(v) for v in args.row.split(","))
    from boardgen_pipeline.calibration import assertions

    work = Path(tempfile.mkdtemp(prefix="edit-latency-"))
    tables = work / "tables"
    shutil.copytree(REPO / "tables", tables)
    env = {**os.environ, "DAGSTER_HOME": str(work / "home"), "BOARDGEN_TABLES": str(tables),
           "BOARDGEN_WAREHOUSE": str(work / "warehouse")}
    os.environ.update(env)
    ui = None
    try:
        t = time.perf_counter()
        subprocess.run([PY, "-m", "boardgen_dagster.nightly"], env=env, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
        print(f"nightly on a fresh home: {time.perf_counter() - t:.1f} s; starting the UI and daemon", flush=True)
        started = time.time()
        ui = subprocess.Popen([PY, "-m", "boardgen_dagster.ui"], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
        import dagster as dg

        with dg.DagsterInstance.get() as instance:
            wait_for_sensor(instance, started)
            rows = []
            for k, value in enumerate(DENSITIES[:args.edits]):
                tick = wait_for_sensor(instance, time.time())  # a quiet tick first, then the save at its phase
                phase = save_phase(k, args.edits)
                time.sleep(max(0.0, tick + phase - time.time()))
                r = one_edit(instance, tables / "board_gen.toml", key, value, len(assertions.CHECKS))
                rows.append(r)
                print(f"edit mine_density={value} saved {phase:.1f} s after a tick: verdict {r['verdict']:5.1f} s = "
                      f"tick {r['tick']:4.1f} + launch {r['launch']:4.1f} + steps before the row {r['before_row']:4.1f} "
                      f"+ row {r['row']:4.1f} "
                      f"(run {r['run']} {r['status']}); launch = planned events {r['planned']:.1f} + queue "
                      f"{r['queue']:.1f} + run process {r['process']:.1f} + code location {r['load']:.1f}", flush=True)
        print(f"median edit -> verdict over {len(rows)} edits: {statistics.median(r['verdict'] for r in rows):.1f} s "
              f"(goal <= 8 s)")
    finally:
        if ui is not None:
            os.killpg(ui.pid, signal.SIGTERM)
            try:
                ui.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(ui.pid, signal.SIGKILL)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
