"""``make run``: the whole calibration graph on the tables, through Dagster
(SPEC 8 ``make run``; issue 3; issue 12 "Dagster-native execution").

``python -m assets.nightly [--tables DIR] [--warehouse DIR] [--samples N]
[--master-seed M] [--adventures A] [--dagster-home DIR] [--workers N]
[--dask ADDRESS]``

1. creates/migrates ``$DAGSTER_HOME`` (default ``<repo>/.dagster_home``) once;
2. runs ``calibration_job`` on the table assets only: observe the table
   files, validate them (a bad table stops here with the ``boardgen validate``
   message, exit 1, nothing written), register one partition per row;
3. runs ``calibration_job`` once over the range of every row partition, as a
   backfill with ``BackfillPolicy.single_run()`` runs it: the row step hands
   the rows to its workers (every core, or a Dask cluster) and records each
   row's materializations and checks as it is published (seed batch, boards,
   variant overlays, report), then the node-map draws and the stratified
   figures, in the same run. A progress bar reads the run's event log while
   it runs (rows done / total, boards per second, time left);
4. prints the per-row summary (80 columns), a line per check group and
   every failed check, read back from the run, and where to look next.

Every row's chain goes to a Dask cluster when ``--dask`` / ``BOARDGEN_DASK``
holds its scheduler address (``assets.resources.RowWorkers``), reached before
any row runs; the files are the same bytes.

Exit codes: 0 all checks hold (E warnings allowed); 1 the table is invalid;
2 a bad argument (a Dask address that does not answer included); 3 a check
of error severity failed; 4 a run failed for another reason; 5 a storage
fault.
"""

import argparse
import os
import sys
import threading
import time
import uuid
from pathlib import Path

from boardgen_pipeline.steps import draw_node_maps, stratify, summary, table_check
from boardgen_pipeline.steps.summary import EXIT_TABLE, Verdict

TRIGGER = "make_run"
# Run logs go to the event log (the UI shows them); the terminal gets the progress bar and the summary.
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def _quiet_warnings() -> None:
    """Dagster flags the beta/preview APIs used here on every import; once is in the docs."""
    import warnings

    import dagster as dg

    for category in (dg.BetaWarning, dg.PreviewWarning):
        warnings.filterwarnings("ignore", category=category)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m assets.nightly", description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", help="tables directory (default: $BOARDGEN_TABLES or the repo's tables/)")
    p.add_argument("--warehouse", help="warehouse root (default: $BOARDGEN_WAREHOUSE or the repo's warehouse/)")
    p.add_argument("--samples", type=int, help="boards per row (default: $BOARDGEN_SAMPLES or 256)")
    p.add_argument("--master-seed", type=int, help="master seed (default: $BOARDGEN_MASTER_SEED or 0)")
    p.add_argument("--adventures", type=int,
                   help="adventures the node-map draws simulate (default: $BOARDGEN_NODE_MAP_ADVENTURES or 2000)")
    p.add_argument("--dagster-home", help="Dagster instance folder (default: $DAGSTER_HOME or <repo>/.dagster_home)")
    p.add_argument("--workers", type=int,
                   help="local worker processes for the rows (default: $BOARDGEN_WORKERS, else every core; "
                        "fewer on small tables)")
    p.add_argument("--dask", help="Dask scheduler address tcp://host:port: every row's chain runs on that cluster "
                                  "(default: $BOARDGEN_DASK, else local workers)")
    args = p.parse_args(argv)
    from boardgen_pipeline.cli_args import EXIT_BAD_ARGUMENTS, ArgumentError, check_nightly

    bad = check_nightly(vars(args))  # issue 15: every argument in its domain before any work
    if bad:
        p.exit(EXIT_BAD_ARGUMENTS, ArgumentError(bad).report() + "\n")
    return args


def _configure_env(args) -> None:
    """Settings travel to the code location as env vars (the run's resources read them)."""
    if args.tables:  # as given: validation messages name it as `boardgen validate --tables` does
        os.environ["BOARDGEN_TABLES"] = args.tables
    if args.warehouse:
        os.environ["BOARDGEN_WAREHOUSE"] = str(Path(args.warehouse).resolve())
    for value, name in ((args.samples, "BOARDGEN_SAMPLES"), (args.master_seed, "BOARDGEN_MASTER_SEED"),
                        (args.adventures, "BOARDGEN_NODE_MAP_ADVENTURES"), (args.workers, "BOARDGEN_WORKERS"),
                        (args.dask, "BOARDGEN_DASK")):
        if value is not None:
            os.environ[name] = str(value)
    # One planned-materialization event per asset for the run's whole range of rows, not one per row
    # and asset (2,400 events before the first step at 600 rows; Dagster's own switch)
    os.environ.setdefault("DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS", "1")


def check_cluster() -> None:
    """Reach the Dask scheduler that ``BOARDGEN_DASK`` names, if any, before any
    row runs: a ``ClusterError`` (one sentence) when it does not answer."""
    address = os.environ.get("BOARDGEN_DASK", "") or os.environ.get("BOARDGEN_DASK_SCHEDULER", "")
    if address:
        from boardgen_pipeline.steps.pool import connect

        connect(address, source="BOARDGEN_DASK").close()


def _execute(job, instance, tags: dict, asset_selection=None):
    """Run ``job`` in this process and return the finished run. The events go
    to the instance's event log only: ``dagster.execute_job`` also keeps every
    event of the run in its result, which grows with the rows (issue 22
    "bounded memory"); this is what the run worker (``dagster api
    execute_run``) runs, without the list."""
    from dagster._core.execution.api import execute_run_iterator

    run = instance.create_run_for_job(job_def=job.get_definition(), run_config=QUIET, tags=tags,
                                      job_code_origin=job.get_python_origin(),
                                      asset_selection=frozenset(asset_selection) if asset_selection else None)
    for _event in execute_run_iterator(job, run, instance):
        pass
    return instance.get_run_by_id(run.run_id)


# --- progress, read from the run's event log ----------------------------------------------------


class RunProgress(threading.Thread):
    """Follows the run tagged ``batch`` in the event log and moves a rich
    progress bar by the rows' ``boards`` materializations (rows are recorded
    as they are published)."""

    def __init__(self, instance, batch: str, rows: int, samples: int, console):
        super().__init__(daemon=True)
        self.instance, self.batch, self.rows, self.samples = instance, batch, rows, samples
        self.console = console
        self.stop = threading.Event()
        self.done = 0

    def _run_id(self):
        import dagster as dg

        runs = self.instance.get_run_records(dg.RunsFilter(tags={"boardgen/batch": self.batch}), limit=2)
        return next((r.dagster_run.run_id for r in runs if r.dagster_run.asset_selection and
                     dg.AssetKey("boards") in r.dagster_run.asset_selection), None)

    def _rows_done(self, run_id: str) -> int:
        """Rows recorded so far: the run's ``boards`` materializations, counted by
        the event log's database (none of them is read: a count stays cheap
        at any number of rows)."""
        import sqlalchemy as sa
        from dagster import AssetKey
        from dagster._core.storage.event_log.schema import SqlEventLogStorageTable as events

        query = sa.select(sa.func.count()).select_from(events).where(
            events.c.run_id == run_id, events.c.dagster_event_type == "ASSET_MATERIALIZATION",
            events.c.asset_key == AssetKey("boards").to_string())
        with self.instance.event_log_storage.index_connection() as conn:
            return int(conn.execute(query).scalar() or 0)

    def run(self) -> None:
        from dagster import DagsterEventType
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        columns = (TextColumn("{task.description}"), BarColumn(bar_width=24), MofNCompleteColumn(),
                   TextColumn("rows  {task.fields[rate]:>7} boards/s"), TimeRemainingColumn())
        with Progress(*columns, console=self.console, transient=False) as bar:
            task = bar.add_task(f"{'starting':<18}", total=self.rows, rate="-")
            run_id, cursor, t0 = None, None, time.perf_counter()

            def show():  # every change is drawn, even when several rows finished between two polls
                rate = self.done * self.samples / max(1e-9, time.perf_counter() - t0)
                bar.update(task, completed=self.done, rate=f"{rate:,.0f}" if self.done else "-")
                bar.refresh()

            while True:
                stopping = self.stop.is_set()
                run_id = run_id or self._run_id()
                if run_id:
                    conn = self.instance.get_records_for_run(run_id, cursor=cursor, of_type=DagsterEventType.STEP_START)
                    cursor = conn.cursor
                    for rec in conn.records:
                        # say which step runs: the node-map draws may run before the first row
                        step = rec.event_log_entry.dagster_event.step_key
                        bar.update(task, description=f"{step:<18}")
                        if step == "calibrate":
                            t0 = time.perf_counter()  # boards per second of the rows' step
                        show()
                    done = self._rows_done(run_id)
                    while self.done < done:  # every row counted is drawn, even when several came at once
                        self.done += 1
                        show()
                    show()
                if stopping:
                    return
                self.stop.wait(POLL_SECONDS)


# --- reading results back from the run ------------------------------------------------------------


def _plain(value):
    return getattr(value, "value", value)


def _failure_text(instance, run_id: str) -> str:
    from dagster import DagsterEventType

    out = []
    for rec in instance.get_records_for_run(run_id, of_type=DagsterEventType.STEP_FAILURE).records:
        ev = rec.event_log_entry.dagster_event
        data = ev.step_failure_data
        if data.user_failure_data is not None and data.user_failure_data.description:
            out.append(data.user_failure_data.description)
        elif data.error is not None:
            out.append(f"{ev.step_key}: {data.error.message.strip()}")
    return "\n".join(out)


def _figures(meta: dict) -> dict:
    """A row check's metadata with its ``figures`` JSON entry spread back out."""
    figures = meta.pop("figures", None)
    return {**meta, **figures} if isinstance(figures, dict) else meta


POOL_ASSETS = ("node_map_draws", "calibration_strata")
POLL_SECONDS = 1.0  # the bar's refresh; each look commits the run's open group of events (assets/storage.py)
UNPARTITIONED_CHECKS = (("node_map_draws", draw_node_maps.CHECKS), ("calibration_strata", (stratify.CHECK_COMPLETE,)),
                        ("calibration_report", (table_check.CHECK_EVERY_ROW,)))


def collect(instance, run_id: str) -> tuple[summary.Tally, dict]:
    """``(rows, table)`` of one run: the row step's tally (``summary.Tally``,
    one event of the run's log); for the run as a whole, the unpartitioned
    assets' metadata and checks (node maps, strata, the table-wide F4 check)
    and the failed steps. Reads a handful of records, whatever the number of
    rows."""
    import dagster as dg

    tally = summary.Tally()
    table = {"checks": {}, "steps_failed": [], "failure": ""}
    types = {dg.DagsterEventType.ENGINE_EVENT, dg.DagsterEventType.STEP_FAILURE}
    for rec in instance.get_records_for_run(run_id, of_type=types).records:
        entry = rec.event_log_entry
        ev = entry.dagster_event
        if ev.event_type == dg.DagsterEventType.STEP_FAILURE:
            table["steps_failed"].append(ev.step_key)
        elif (entry.user_message or ev.message or "").startswith(summary.TALLY_MESSAGE):
            data = ev.engine_event_data.metadata["tally"]
            tally.merge(summary.Tally.from_dict(_plain(data)))
    for name in POOL_ASSETS:
        records = instance.fetch_materializations(dg.AssetKey(name), limit=1).records
        if records and records[0].run_id == run_id:
            mat = records[0].asset_materialization
            table[name] = {k: _plain(v) for k, v in mat.metadata.items()}
    keys = [dg.AssetCheckKey(dg.AssetKey(asset), name) for asset, names in UNPARTITIONED_CHECKS for name in names]
    for key, record in instance.event_log_storage.get_latest_asset_check_execution_by_key(keys).items():
        if record.run_id != run_id or record.event is None or record.event.dagster_event is None:
            continue
        check = record.event.dagster_event.event_specific_data
        if not isinstance(check, dg.AssetCheckEvaluation):  # planned, never evaluated: its step failed
            continue
        # the first paragraph: the verdict line (the rest is the overview's pictures, for the UI)
        table["checks"][key.name] = {
            "passed": check.passed, "severity": check.severity.value,
            "description": (check.description or "").split("\n\n")[0],
            "metadata": _figures({k: _plain(v) for k, v in (check.metadata or {}).items()
                                  if not isinstance(_plain(v), str) or len(_plain(v)) < 200})}
    if table["steps_failed"]:
        table["failure"] = _failure_text(instance, run_id)
    return tally, table


# --- main ------------------------------------------------------------------------------------------


def _summary(console, run, tally: summary.Tally, table: dict, samples: int) -> Verdict:
    """Print the per-row table, the group lines and the verdict."""
    verdict = Verdict()
    title = f"F4 calibration: {tally.rows} rows x {samples} boards"
    if tally.list_all:
        console.print(summary.row_table(tally.listed, title))
    else:
        console.print(summary.row_table(tally.listed, f"{title}: the {len(tally.listed)} rows that fail or warn"))
        console.print(f"{tally.rows - len(tally.listed)} rows pass every check (not listed: {tally.rows} > "
                      f"{summary.SHOW_ALL_ROWS}; boardgen sql \"select * from calibration_report\")")
    verdict.add_tally(tally)
    pools = {k: v for k, v in table.items() if k != "checks"}
    pools["checks"] = {n: c for n, c in table["checks"].items() if n in summary.POOL_CHECKS}
    verdict.add_run("table", run.run_id, run.is_success, table)
    for line in summary.group_lines(tally, pools):
        console.print(line)
    for line in verdict.lines(tally.checks_evaluated + len(table["checks"])):
        console.print(line)
    return verdict


def _boardgen() -> str:
    return _shown(Path(sys.executable).with_name("boardgen"))


def _shown(path) -> str:
    """A path relative to the working directory when it is below it."""
    path = Path(path)
    return os.path.relpath(path) if path.absolute().is_relative_to(Path.cwd()) else str(path)


def main(argv=None) -> int:
    """The nightly; a storage fault (disk full, read-only file system, a bad
    warehouse path, a corrupt instance database) ends in one sentence, exit 5."""
    from boardgen_pipeline.cli_args import EXIT_BAD_ARGUMENTS
    from boardgen_pipeline.errors import ClusterError, WarehouseError
    from boardgen_pipeline.steps.summary import EXIT_STORAGE

    try:
        return _main(argv)
    except WarehouseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_STORAGE
    except ClusterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS


def _main(argv=None) -> int:
    args = parse_args(argv)
    _configure_env(args)
    wall0 = time.perf_counter()
    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 80)  # a log file reads like an 80-column terminal
    console.print("[bold]boardgen nightly[/]: loading Dagster and the generator's compiled kernels ...")
    check_cluster()  # a Dask address that does not answer fails here, before anything is created or written

    from assets.home import ensure_dagster_home, fail_orphaned_runs, pooled_event_log

    home = ensure_dagster_home(args.dagster_home)
    if not pooled_event_log(home):
        console.print(f"note: the Dagster home {_shown(home)} keeps one event log per run, which costs ~6 ms and "
                      "~200 KiB of writes per event; move it aside (or `make clean`) to start one with the pooled "
                      "log (docs/decisions.md)")

    import dagster as dg

    _quiet_warnings()
    from assets import definitions
    from assets.automation import ALL_SELECTION, TRIGGER_TAG, VALIDATE_SELECTION, partition_range_tags
    from assets.partitions import board_rows
    from assets.resources import settings_from_env
    from boardgen_pipeline.steps.chain import warm_up
    from boardgen_pipeline.warehouse import datasets, publish

    settings = settings_from_env()
    datasets.check_writable(settings.root)  # a bad warehouse path fails here, before any row runs
    publish.sweep_temp_files(settings.root)  # what a killed run left behind
    warm_up()  # compile or load the kernels before the bar starts: the rate is then the generator's
    batch = uuid.uuid4().hex[:12]
    tags = {TRIGGER_TAG: TRIGGER, "boardgen/batch": batch}

    with dg.DagsterInstance.get() as instance:
        orphans = fail_orphaned_runs(instance)  # runs of a killed nightly would hold the run queue forever
        if orphans:
            console.print(f"marked {len(orphans)} orphaned run(s) of a dead process as failed: "
                          + ", ".join(r[:8] for r in orphans))
        t0 = time.perf_counter()
        job = dg.reconstructable(definitions.calibration_job_def)
        validate = _execute(job, instance, tags, asset_selection=VALIDATE_SELECTION)
        t_validate = time.perf_counter() - t0
        if not validate.is_success:
            print(_failure_text(instance, validate.run_id), file=sys.stderr)
            console.print(f"[red]table validation failed[/] (run {validate.run_id}); nothing was generated or written")
            return EXIT_TABLE
        keys = instance.get_dynamic_partitions(board_rows.name)
        console.print(f"tables valid: {len(keys)} rows x {settings.samples} boards; one Dagster run over every "
                      f"row partition (validate {t_validate:.1f} s)")
        # Dagster sends the run's stdout to its compute logs (a dup2 of fd 1): the bar writes to a
        # duplicate of the terminal's descriptor, taken before the run, so that it stays live
        terminal = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
        bar_console = Console(file=terminal, width=console.width if not sys.stdout.isatty() else None,
                              force_terminal=sys.stdout.isatty() or None)
        progress = RunProgress(instance, batch, len(keys), settings.samples, bar_console)
        progress.start()
        t0 = time.perf_counter()
        try:
            run = _execute(job, instance, {**tags, **partition_range_tags(keys, keys)}, asset_selection=ALL_SELECTION)
        finally:
            progress.stop.set()
            progress.join()
            terminal.close()
        t_run = time.perf_counter() - t0
        tally, table = collect(instance, run.run_id)
        db = settings.root / datasets.DB_NAME  # the views were rebuilt by the run's last step
    wall = time.perf_counter() - wall0

    verdict = _summary(console, run, tally, table, settings.samples)
    generation = tally.generation_seconds
    console.print(f"wall {wall:.1f} s: validate {t_validate:.1f} s, run {t_run:.1f} s (board generation "
                  f"{generation:.1f} s), set-up + summary {wall - t_validate - t_run:.1f} s")
    console.print(f"warehouse:    {_shown(settings.root)}   Dagster home: {_shown(home)}")
    console.print(f"charts:       {_boardgen()} chart   (the report chart and the difficulty curves, as PNG)")
    console.print(f"the UI:       make ui  ->  http://127.0.0.1:3000, Assets, run {run.run_id[:8]}")
    console.print(f'SQL:          {_boardgen()} sql "select * from calibration_report"   (DuckDB file {_shown(db)})')
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())
