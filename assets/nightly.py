"""``make run``: the nightly calibration through Dagster, into the warehouse
(SPEC 8 ``make run``; issue 3; issue 28 "bookkeeping that scales out").

``python -m boardgen_dagster.nightly [--tables DIR] [--warehouse DIR] [--samples N]
[--master-seed M] [--adventures A] [--dagster-home DIR] [--workers N]
[--dask ADDRESS] [--keep-days D] [--keep-runs K]`` (``cli_args.nightly_parser``).

1. the Dagster home (``boardgen_dagster.home``: the user's ``dagster.yaml`` respected);
   the tables validated (a bad table: the validation run the UI shows, the
   ``boardgen validate`` message, exit 1, nothing written); new rows
   registered as partitions;
2. the rows cut into ranges of about equal cost (``steps.runs.plan``), one
   lane of runs per core (``--workers``), each lane a process of its own
   (``boardgen_dagster.worker``) whose runs record their own rows: nothing of a row
   passes through this process, whose work does not grow with the rows;
3. the last lane to finish runs the table-wide checks and figures; a
   progress bar counts the rows the runs have recorded (the engine's run
   statistics);
4. the summary (``steps.summary``: the per-row table, the checks, the
   failed runs), the runs older than the retention policy forgotten
   (``boardgen_dagster.retention``), and where to look.

Exit codes: 0 all checks hold (E warnings allowed); 1 the table is invalid;
2 a bad argument (a Dask address that does not answer included); 3 a check
of error severity failed; 4 a run failed for another reason; 5 a storage
fault (the warehouse, or the instance's storage: a corrupt runs.db, a
PostgreSQL server that does not answer).
"""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from boardgen_pipeline.cli_args import nightly_environment, nightly_settings
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.steps import summary
from boardgen_pipeline.steps.summary import RunOutcome

TRIGGER = "make_run"
# the bar's refresh: a look at the batch's runs costs the coordinator a few queries
POLL_SECONDS = float(os.environ.get("BOARDGEN_PROGRESS_SECONDS") or 2.0)


def check_cluster() -> None:
    """Reach the Dask scheduler the environment names, if any, before any run:
    a ``ClusterError`` (one sentence) when it does not answer."""
    from boardgen_pipeline.steps.pool import connect, dask_address_from

    address, source = dask_address_from(os.environ)
    if address:
        connect(address, source=source).close()


def _validation_run(instance, tags: dict) -> str:
    """The tables' run, when they do not validate: the UI shows its failure."""
    import dagster as dg

    from boardgen_dagster import definitions
    from boardgen_dagster.names import TABLES
    from boardgen_dagster.worker import QUIET

    result = dg.execute_job(dg.reconstructable(definitions.prepare_job_def), instance, run_config=QUIET, tags=tags,
                            asset_selection=[dg.AssetKey(a) for a in TABLES])
    return result.run_id


def _register(instance, table) -> list[str]:
    """Register the table's new rows; every registered partition, in order."""
    from boardgen_dagster.names import PARTITIONS
    from boardgen_pipeline.calibration.fingerprints import partition_key

    registered = list(instance.get_dynamic_partitions(PARTITIONS))
    new = [partition_key(k) for k in sorted(table.keys()) if partition_key(k) not in set(registered)]
    if new:
        instance.add_dynamic_partitions(PARTITIONS, new)
    return registered + new


class Runs:
    """The batch's runs as the engine keeps them: found by their batch tag,
    each read until it finishes (its rows counted from the run's statistics),
    then not again."""

    def __init__(self, instance, batch: str, sizes: dict):
        self.instance, self.batch, self.sizes = instance, batch, sizes
        self.finished: dict = {}  # run id -> record

    def rows_done(self) -> int:
        """Rows the batch's runs have recorded: a finished run counts its range,
        a running one its materializations so far."""
        import dagster as dg

        from boardgen_dagster.names import BATCH_TAG, RANGE_START

        done = 0
        for record in self.instance.get_run_records(dg.RunsFilter(tags={BATCH_TAG: self.batch})):
            run = record.dagster_run
            rows = self.sizes.get(run.tags.get(RANGE_START), 0)
            if run.is_finished:
                self.finished[run.run_id] = record
                done += rows
            elif rows:
                done += min(rows, self.instance.get_run_stats(run.run_id).materializations)
        return done

    def outcomes(self) -> tuple[list[RunOutcome], dict, dict]:
        """Each run (label, success, what its failed steps said), the checks
        the batch evaluated, and the metadata of the table's assets it made
        (the counts summed over the runs that made them)."""
        import dagster as dg

        from boardgen_dagster.names import BATCH_TAG, RANGE_END, RANGE_START, ROWS_JOB

        records = sorted(self.instance.get_run_records(dg.RunsFilter(tags={BATCH_TAG: self.batch})),
                         key=lambda r: r.create_timestamp)
        outcomes, checks = [], {}
        for record in records:
            run = record.dagster_run
            label = (f"rows {run.tags[RANGE_START]}..{run.tags[RANGE_END]}" if RANGE_START in run.tags
                     else run.job_name.replace("calibration_", ""))
            failures = []
            if not run.is_success:
                of = dg.DagsterEventType.STEP_FAILURE
                for rec in self.instance.get_records_for_run(run.run_id, of_type=of).records:
                    data = rec.event_log_entry.dagster_event.step_failure_data
                    failures.append((data.user_failure_data.description if data.user_failure_data else None)
                                    or _cause(data.error))
                failures = failures or [f"the run ended {run.status.value}"]
            outcomes.append(RunOutcome(label, run.run_id, run.is_success, "; ".join(failures)))
            if run.job_name != ROWS_JOB:  # a rows run evaluates no check: its events are its rows
                of = dg.DagsterEventType.ASSET_CHECK_EVALUATION
                for rec in self.instance.get_records_for_run(run.run_id, of_type=of).records:
                    data = rec.event_log_entry.dagster_event.event_specific_data
                    checks[data.check_name] = {
                        "passed": data.passed, "severity": data.severity.value,
                        "description": (data.description or "").split("\n\n")[0],
                        "metadata": {k: getattr(v, "value", v) for k, v in (data.metadata or {}).items()}}
        return outcomes, checks, self._made({r.dagster_run.run_id for r in records})

    def _made(self, run_ids: set) -> dict:
        import dagster as dg

        from boardgen_dagster.names import DRAWS, OVERLAYS, STRATA

        made = {}
        for asset in (DRAWS, OVERLAYS, STRATA):
            seen = {}
            for rec in self.instance.fetch_materializations(dg.AssetKey(asset), limit=len(run_ids)).records:
                if rec.run_id not in run_ids:
                    continue
                for k, v in rec.asset_materialization.metadata.items():
                    v = getattr(v, "value", v)
                    # the table's assets are made a range at a time: their counts add up over the runs
                    summed = isinstance(v, int) and not isinstance(v, bool) and isinstance(seen.get(k), int)
                    seen[k] = seen[k] + v if summed else v
            made[asset] = seen or None
        return made


def _cause(error) -> str:
    """The innermost message of an engine error (the wrapper says only "error in op")."""
    if error is None:
        return "failed"
    while error.cause is not None:
        error = error.cause
    return error.message.strip()


def _spawn(plan_path: Path, lane: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "boardgen_dagster.worker", str(plan_path), lane], stdin=subprocess.DEVNULL)


def main(argv=None) -> int:
    """``python -m boardgen_dagster.nightly ARGS``: ``boardgen nightly ARGS``."""
    from boardgen_pipeline import cli

    return cli.main(["nightly", *(sys.argv[1:] if argv is None else argv)])


def run(args) -> int:
    """``boardgen nightly``, its arguments checked (``cli_args.check_nightly``)."""
    return _main(args)


def _main(args) -> int:
    os.environ.update(nightly_environment(args))
    wall0 = time.perf_counter()
    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 80)  # a log file reads like an 80-column terminal
    console.print("[bold]boardgen nightly[/]: loading Dagster ...")
    check_cluster()  # a Dask address that does not answer fails here, before anything is created or written
    from boardgen_pipeline import catalog as catalogs
    from boardgen_pipeline.paths import default_dagster_home, default_tables_dir, default_warehouse
    from boardgen_pipeline.steps import runs
    from boardgen_pipeline.steps.pool import parallelism
    from boardgen_pipeline.warehouse import datasets, publish

    samples, master_seed = nightly_settings(args)
    root = default_warehouse()
    datasets.check_writable(root)  # a bad warehouse path fails here, before any row runs
    publish.sweep_temp_files(root)  # what a killed run left behind
    try:
        catalog, invalid = catalogs.load_catalog(default_tables_dir()), None
    except TableError as exc:
        catalog, invalid = None, exc
    batch = uuid.uuid4().hex[:12]
    home = Path(args.dagster_home).resolve() if args.dagster_home else default_dagster_home()
    os.environ["DAGSTER_HOME"] = str(home)  # the lanes' instance, which they open once the plan is written
    plan_path = home / "nightly" / f"{batch}.json"
    # the lanes start now: their imports (Dagster, the code location, the kernels) overlap the set-up below
    slots = parallelism(len(catalog.board_gen.rows), args.workers) if catalog is not None else 0
    procs = [_spawn(plan_path, str(i)) for i in range(slots)]
    try:
        code, result = _coordinate(args, console, catalog, invalid, samples, batch, plan_path, procs)
    finally:
        if not plan_path.exists():
            runs.cancel_plan(plan_path)
        for p in procs:
            p.wait()
        runs.forget(plan_path)
    if result is None:
        return code
    home, t_runs, outcomes, checks, made, gone = result
    timings = (f"wall {time.perf_counter() - wall0:.1f} s (runs {t_runs:.1f} s); retention: {gone} old run(s) "
               "forgotten")
    return summary.print_nightly(console, root, catalog, samples, master_seed, checks, outcomes, made, timings, home,
                                 summary.shown(Path(sys.executable).with_name("boardgen")))



def _coordinate(args, console, catalog, invalid, samples: int, batch: str, plan_path: Path, procs: list):
    """The instance's part of the nightly: ``(exit code, None)`` when it stops
    before the runs, else ``(None, (home, seconds, runs, checks, made, pruned))``."""
    from boardgen_dagster.home import ensure_dagster_home, fail_orphaned_runs

    home = ensure_dagster_home(args.dagster_home)
    import dagster as dg

    from boardgen_dagster.names import BATCH_TAG, TRIGGER_TAG
    from boardgen_pipeline.steps import runs
    from boardgen_pipeline.steps.progress import RowsProgress

    tags = {TRIGGER_TAG: TRIGGER, BATCH_TAG: batch}
    with dg.DagsterInstance.get() as instance:
        orphans = fail_orphaned_runs(instance)  # runs of a killed nightly would hold the run queue forever
        if orphans:
            console.print(f"marked {len(orphans)} orphaned run(s) of a dead process as failed: "
                          + ", ".join(r[:8] for r in orphans))
        if invalid is not None:
            run_id = _validation_run(instance, tags)
            print(invalid.report(), file=sys.stderr)
            console.print(f"[red]table validation failed[/] (run {run_id[:8]}); nothing was generated or written")
            return Exit.INPUT, None
        table = catalog.board_gen
        order = _register(instance, table)
        lanes = runs.plan(order, runs.row_costs(table, samples), len(procs), first_extra=runs.PREPARE_COST)
        runs.write_plan(plan_path, tags, lanes, keep_days=args.keep_days, keep_runs=args.keep_runs)
        sizes = {r.first: r.rows for lane in lanes for r in lane}
        console.print(f"tables valid: {len(table.rows)} rows x {samples} boards; {sum(map(len, lanes))} "
                      f"run(s) in {len(lanes)} process(es), each recording its own rows, then the table's checks")
        t0 = time.perf_counter()
        batch_runs = Runs(instance, batch, sizes)
        with RowsProgress(console, len(table.rows), samples, f"{len(lanes)} lane(s)") as bar:
            while any(p.poll() is None for p in procs):
                bar.update(batch_runs.rows_done())
                time.sleep(POLL_SECONDS)
            bar.update(batch_runs.rows_done())
        # a lane that died (killed, out of memory) left its run STARTED: failed now, so that the rows it did
        # not finish read as failed in the UI, and nothing waits on it
        dead = fail_orphaned_runs(instance, tags={BATCH_TAG: batch})
        if dead:
            console.print(f"[red]{len(dead)} run(s) lost their process[/]: " + ", ".join(r[:8] for r in dead))
        if runs.arrived(plan_path) < len(lanes):  # a lane died before the table's run: run it now
            console.print("[yellow]a lane ended before its runs were done; the table's checks run now[/]")
            _spawn(plan_path, "table").wait()
        outcomes, checks, made = batch_runs.outcomes()
        return None, (home, time.perf_counter() - t0, outcomes, checks, made, runs.noted(plan_path, "pruned"))


if __name__ == "__main__":
    sys.exit(main())
