"""``boardgen nightly`` (``make run``): one night of calibration through
Dagster, without a daemon (SPEC 8 ``make run``; docs/pipeline.md "One
nightly").

The same night the schedule starts under ``dagster-daemon``
(``boardgen_pipeline.steps.night``, ``nights``): the tables validated and
pinned, the ``prepare`` run, the rows in ranges, the table-wide checks once
every row run has ended, retention. Here this process takes the decisions
the daemon's sensors take (the same functions) and its lanes
(``boardgen_dagster.lane``, one process per core, started first so their
imports overlap the set-up) execute the runs. Nothing of a row passes
through this process. A lane that dies fails only the runs it was
executing (this process holds its handle); another process's or host's run
is left alone. Then the summary (``steps.summary``) and the exit code
(``boardgen_pipeline.exits``).
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from boardgen_pipeline import settings as boardgen_settings
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.steps import night, summary


def main(argv=None) -> int:
    """``python -m boardgen_dagster.nightly ARGS``: ``boardgen nightly ARGS``."""
    from boardgen_pipeline import cli

    return cli.main(["nightly", *(sys.argv[1:] if argv is None else argv)])


@dataclass
class Lane:
    """One lane process: its handle, the runs sent and not yet answered."""

    proc: subprocess.Popen
    pending: list = field(default_factory=list)
    buffer: bytes = b""
    dead: bool = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, launch) -> None:
        order = {"job": launch.job, "tags": launch.tags, "run_config": launch.run_config}
        self.pending.append(launch)
        self.proc.stdin.write((json.dumps(order) + "\n").encode())
        self.proc.stdin.flush()


def _spawn(home: Path) -> Lane:
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "boardgen_dagster.lane"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env)
    return Lane(proc)


def _lanes(found, rows: int) -> int:
    """How many lane processes: the rows computed at once (``--workers``, else
    every core, fewer on a small table), or one that records what a Dask
    cluster computes; without ``--workers``, at least two where there are two
    cores, so the node-map draws run beside the rows."""
    from boardgen_pipeline.steps.pool import default_workers, parallelism

    if found.dask:
        return 1
    if found.workers:
        return parallelism(rows, found.workers)
    return max(parallelism(rows), min(2, default_workers()))


def check_settings(args) -> int:
    """``boardgen nightly --check-settings``: every setting, where it came
    from, and every violation (the schedule's cron and time zone included)."""
    from .automation import cron_problem

    given = {n: getattr(args, n, None) for n in boardgen_settings.NIGHTLY}
    names = (*boardgen_settings.NIGHTLY, *boardgen_settings.SCHEDULE, "rows_per_run")
    found, bad = boardgen_settings.resolve(given, names=names, cron_problem=cron_problem)
    for setting, value, came in found.describe():
        print(f"{setting:48} {value:32} {came}")
    for v in bad:
        print(f"  - {v}", file=sys.stderr)
    return Exit.USAGE if bad else Exit.OK


def run(args) -> int:
    """``boardgen nightly``, its arguments checked (``cli_args.check_nightly``)."""
    if args.check_settings:
        return check_settings(args)
    wall0 = time.perf_counter()
    from boardgen_pipeline import catalog as catalogs
    from boardgen_pipeline.steps.pool import connect
    from boardgen_pipeline.warehouse import datasets, publish

    found, _ = boardgen_settings.resolve({n: getattr(args, n, None) for n in boardgen_settings.NIGHTLY})
    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 80)  # a log file reads like an 80-column terminal
    try:
        catalog, invalid = catalogs.load_catalog(found.tables), None
    except TableError as exc:
        catalog, invalid = None, exc
    rows = len(catalog.board_gen.rows) if catalog is not None else 0
    # the lanes start now: their imports (Dagster, the code location, the kernels) overlap the set-up below
    lanes = [_spawn(found.dagster_home) for _ in range(_lanes(found, rows) if catalog is not None else 0)]
    try:
        if found.dask:  # a scheduler that does not answer fails here, before anything is created or written
            connect(found.dask, source=(found.source or {}).get("dask", "--dask").lstrip("$")).close()
        datasets.check_writable(found.warehouse)  # a bad warehouse path fails here, before any row runs
        publish.sweep_temp_files(found.warehouse)  # what a killed writer of this host left behind
        return _night(console, found, catalog, invalid, lanes, wall0)
    finally:
        for lane in lanes:
            if lane.proc.stdin and not lane.proc.stdin.closed:
                lane.proc.stdin.close()
        for lane in lanes:
            lane.proc.wait()
            if lane.proc.stdout:
                lane.proc.stdout.close()


def _night(console, found, catalog, invalid, lanes: list[Lane], wall0: float) -> int:
    from .home import ensure_dagster_home

    home = ensure_dagster_home(found.dagster_home)
    import dagster as dg

    from . import nights

    console.print("[bold]boardgen nightly[/]: one night through Dagster")
    with dg.DagsterInstance.get() as instance:
        night_id = night.new_night(trigger=night.NIGHTLY)
        base = nights.night_tags(night_id, night.NIGHTLY, night.PROCESS)
        if invalid is not None:
            run_id = _validation_run(instance, found, base)
            print(invalid.report(), file=sys.stderr)
            console.print(f"[red]table validation failed[/] (run {run_id[:8]}); nothing was generated or written")
            return Exit.INPUT
        table = catalog.board_gen
        nights.register(instance, table)
        first, config = nights.start(found, night_id, night.NIGHTLY, night.PROCESS)
        rows = nights.follow(instance, night_id, base, config, len(lanes))
        for lane, specs in zip(lanes, night.lanes_of([first.spec, *(r.spec for r in rows)], len(lanes)), strict=False):
            for spec in specs:
                lane.send(first if spec == first.spec else next(r for r in rows if r.spec == spec))
        console.print(f"tables valid and pinned: {len(table.rows)} rows x {found.samples} boards; "
                      f"{len(rows)} rows run(s) on {len(lanes)} lane(s), each recording its own rows, then the "
                      f"table's checks (runs tagged {night.NIGHT_TAG}={night_id})")
        t0 = time.perf_counter()
        progress = Progress(instance, night_id, {r.spec.first: r.spec.rows for r in rows})
        _drive(console, instance, lanes, progress, len(table.rows), found)
        # what follows the rows, decided as the daemon's sensor decides it
        while True:
            launches = nights.follow(instance, night_id, base, config, len(lanes))
            if not launches:
                break
            live = [lane for lane in lanes if not lane.dead] or [_respawn(lanes)]
            for launch in launches:
                live[0].send(launch)
            _drive(console, instance, lanes, None, 0, found)
        outcomes, checks, made, forgotten = night_outcome(instance, night_id)
    timings = (f"wall {time.perf_counter() - wall0:.1f} s (runs {time.perf_counter() - t0:.1f} s); retention: "
               f"{forgotten} old run(s) forgotten")
    return summary.print_nightly(console, found.warehouse, catalog, found.samples, found.master_seed, checks,
                                 outcomes, made, timings, home, summary.shown(Path(sys.executable).with_name("boardgen")))


def _respawn(lanes: list[Lane]) -> Lane:
    lane = _spawn(Path(os.environ["DAGSTER_HOME"]))
    lanes.append(lane)
    return lane


def _drive(console, instance, lanes: list[Lane], progress, total: int, found) -> None:
    """Wait until every lane has answered every run it was sent (reading the
    lanes' answers as they come; the progress bar between them). A lane that
    dies fails the runs it was executing, and its unsent work goes to
    another lane."""
    from boardgen_pipeline.steps.progress import RowsProgress

    bar = RowsProgress(console, total, found.samples, f"{len(lanes)} lane(s)") if progress is not None else None
    selector = selectors.DefaultSelector()
    for lane in lanes:
        if not lane.dead:
            selector.register(lane.proc.stdout, selectors.EVENT_READ, lane)
    try:
        if bar is not None:
            bar.__enter__()
        while any(lane.pending for lane in lanes if not lane.dead):
            for key, _ in selector.select(timeout=found.progress_seconds):
                lane = key.data
                chunk = lane.proc.stdout.read1(65536)
                if not chunk:  # the lane's output ended: it died
                    selector.unregister(lane.proc.stdout)
                    _lost(console, instance, lanes, lane)
                    for other in lanes:
                        if not other.dead and other.proc.stdout not in selector.get_map():
                            selector.register(other.proc.stdout, selectors.EVENT_READ, other)
                    continue
                lane.buffer += chunk
                *lines, lane.buffer = lane.buffer.split(b"\n")
                for line in lines:
                    answer = json.loads(line)
                    if "run_id" in answer and lane.pending:
                        lane.pending.pop(0)
            if bar is not None:
                bar.update(progress.rows_done())
    finally:
        if bar is not None:
            bar.update(progress.rows_done())
            bar.__exit__(None, None, None)
        selector.close()


def _lost(console, instance, lanes: list[Lane], lane: Lane) -> None:
    """A lane died (killed, out of memory): the runs it was executing are
    marked failed (their rows read as failed, nothing waits on them), and the
    runs it had not begun go to a live lane (or a new one)."""
    import dagster as dg

    lane.proc.wait()
    lane.dead = True
    failed = []
    for record in instance.get_run_records(dg.RunsFilter(tags={night.PID_TAG: str(lane.pid)},
                                                         statuses=[dg.DagsterRunStatus.STARTING,
                                                                   dg.DagsterRunStatus.STARTED])):
        run = record.dagster_run
        if run.tags.get(night.HOST_TAG) == night.here()[night.HOST_TAG]:
            instance.report_run_failed(run, message=f"its lane process (pid {lane.pid}) died; marked failed by "
                                                    "the boardgen nightly that started it")
            failed.append(run.tags.get(night.KEY_TAG, run.run_id[:8]))
    begun = {r.dagster_run.tags.get(night.KEY_TAG) for r in instance.get_run_records(
        dg.RunsFilter(tags={night.PID_TAG: str(lane.pid)}))}
    rest = [launch for launch in lane.pending if launch.spec.key not in begun]
    lane.pending = []
    console.print(f"[red]a lane died[/] (pid {lane.pid}, exit {lane.proc.returncode}): its run(s) "
                  f"{', '.join(failed) or '-'} marked failed; {len(rest)} run(s) it had not begun go to another lane")
    if rest:
        live = [other for other in lanes if not other.dead] or [_respawn(lanes)]
        for launch in rest:
            live[0].send(launch)


def _validation_run(instance, found, base: dict) -> str:
    """The tables' run, when they do not validate: the UI shows its failure."""
    import dagster as dg

    from . import definitions
    from .lane import QUIET
    from .names import TABLES
    from .resources import run_config

    result = dg.execute_job(dg.reconstructable(definitions.prepare_job_def), instance,
                            run_config={**run_config(found), **QUIET}, tags={**base, **night.here()},
                            asset_selection=[dg.AssetKey(a) for a in TABLES])
    return result.run_id


class Progress:
    """The rows the night's runs have recorded, as the engine counts them: a
    finished run its range, a running one its materializations so far."""

    def __init__(self, instance, night_id: str, sizes: dict):
        self.instance, self.night_id, self.sizes = instance, night_id, sizes
        self.finished: dict[str, int] = {}

    def rows_done(self) -> int:
        import dagster as dg

        from .names import RANGE_START, ROWS_JOB

        done = sum(self.finished.values())
        for record in self.instance.get_run_records(dg.RunsFilter(tags={night.NIGHT_TAG: self.night_id},
                                                                  job_name=ROWS_JOB)):
            run = record.dagster_run
            if run.run_id in self.finished:
                continue
            rows = self.sizes.get(run.tags.get(RANGE_START), 0)
            if run.is_finished:
                self.finished[run.run_id] = rows
                done += rows
            else:
                done += min(rows, self.instance.get_run_stats(run.run_id).materializations)
        return done


def night_outcome(instance, night_id: str):
    """Each run of the night (label, success, what its failed steps said),
    the checks it evaluated, the metadata of the table's assets it made
    (counts summed over the runs that made them), and how many old runs its
    retention forgot."""
    import dagster as dg

    from .names import DRAWS, OVERLAYS, RANGE_END, RANGE_START, ROWS_JOB, STRATA

    records = sorted(instance.get_run_records(dg.RunsFilter(tags={night.NIGHT_TAG: night_id})),
                     key=lambda r: r.create_timestamp)
    outcomes, checks, forgotten = [], {}, 0
    for record in records:
        run = record.dagster_run
        label = (f"rows {run.tags[RANGE_START]}..{run.tags[RANGE_END]}" if RANGE_START in run.tags
                 else run.tags.get(night.STAGE_TAG, run.job_name))
        failures = []
        if not run.is_success:
            of = dg.DagsterEventType.STEP_FAILURE
            for rec in instance.get_records_for_run(run.run_id, of_type=of).records:
                data = rec.event_log_entry.dagster_event.step_failure_data
                failures.append((data.user_failure_data.description if data.user_failure_data else None)
                                or _cause(data.error))
            failures = failures or [f"the run ended {run.status.value}"]
        outcomes.append(summary.RunOutcome(label, run.run_id, run.is_success, "; ".join(failures)))
        if run.tags.get(night.STAGE_TAG) == night.RETENTION:
            of = dg.DagsterEventType.STEP_OUTPUT
            for rec in instance.get_records_for_run(run.run_id, of_type=of).records:
                data = rec.event_log_entry.dagster_event.step_output_data
                value = (data.metadata or {}).get("forgotten_runs")
                forgotten = int(getattr(value, "value", value) or 0)
        elif run.job_name != ROWS_JOB:  # a rows run evaluates no check: its events are its rows
            of = dg.DagsterEventType.ASSET_CHECK_EVALUATION
            for rec in instance.get_records_for_run(run.run_id, of_type=of).records:
                data = rec.event_log_entry.dagster_event.event_specific_data
                checks[data.check_name] = {
                    "passed": data.passed, "severity": data.severity.value,
                    "description": (data.description or "").split("\n\n")[0],
                    "metadata": {k: getattr(v, "value", v) for k, v in (data.metadata or {}).items()}}
    run_ids = {r.dagster_run.run_id for r in records}
    made = {}
    for asset in (DRAWS, OVERLAYS, STRATA):
        seen = {}
        for rec in instance.fetch_materializations(dg.AssetKey(asset), limit=len(run_ids)).records:
            if rec.run_id not in run_ids:
                continue
            for k, v in rec.asset_materialization.metadata.items():
                v = getattr(v, "value", v)
                # the table's assets are made a range at a time: their counts add up over the runs
                summed = isinstance(v, int) and not isinstance(v, bool) and isinstance(seen.get(k), int)
                seen[k] = seen[k] + v if summed else v
        made[asset] = seen or None
    return outcomes, checks, made, forgotten


def _cause(error) -> str:
    """The innermost message of an engine error (the wrapper says only "error in op")."""
    if error is None:
        return "failed"
    while error.cause is not None:
        error = error.cause
    return error.message.strip()


if __name__ == "__main__":
    sys.exit(main())
