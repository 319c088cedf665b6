"""``make run``: the whole calibration graph on the tables, through Dagster
(SPEC 8 ``make run``; issue 3; issue 12 "Dagster-native execution").

``python -m assets.nightly [--tables DIR] [--warehouse DIR] [--samples N]
[--master-seed M] [--adventures A] [--dagster-home DIR]``

1. creates/migrates ``$DAGSTER_HOME`` (default ``<repo>/.dagster_home``) once;
2. runs ``calibration_job`` on the table assets only: observe the table
   files, validate them (a bad table stops here with the ``boardgen validate``
   message, exit 1, nothing written), register one partition per row;
3. runs ``calibration_job`` once over the range of every row partition, as a
   backfill with ``BackfillPolicy.single_run()`` runs it: each step loops
   over the rows and records one materialization and one set of checks per
   row partition (boards, variant overlays, report), then the node-map draws
   and the stratified figures, in the same run. A progress bar reads the
   run's event log while it runs (rows done / total, boards per second,
   time left);
4. prints the per-row summary (80 columns), a line per check group and
   every failed check, read back from the run, and where to look next.

Generation goes to a Dask cluster when ``BOARDGEN_DASK`` holds its scheduler
address (``assets.resources.DaskCluster``); the boards are the same.

Exit codes: 0 all checks hold (E warnings allowed); 1 the table is invalid;
3 a check of error severity failed; 4 a run failed for another reason.
"""

import argparse
import os
import sys
import threading
import time
import uuid
from pathlib import Path

from boardgen_pipeline.steps import summary
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
                        (args.adventures, "BOARDGEN_NODE_MAP_ADVENTURES")):
        if value is not None:
            os.environ[name] = str(value)


def _execute(job, instance, tags: dict, asset_selection=None):
    import dagster as dg

    return dg.execute_job(job, instance, run_config=QUIET, tags=tags, asset_selection=asset_selection)


# --- progress, read from the run's event log ----------------------------------------------------


class RunProgress(threading.Thread):
    """Follows the run tagged ``batch`` in the event log and moves a rich
    progress bar by the boards step's per-row log lines (``PROGRESS``)."""

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

    def run(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        from assets.boards import PROGRESS

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
                    conn = self.instance.get_records_for_run(run_id, cursor=cursor)
                    cursor = conn.cursor
                    for rec in conn.records:
                        event = rec.event_log_entry.dagster_event
                        msg = rec.event_log_entry.user_message or ""
                        if event is None and msg.startswith(PROGRESS + " "):
                            self.done += 1
                            show()
                        elif event is not None and event.event_type_value == "STEP_START":
                            # say which step runs: the node-map draws may run before the first row
                            bar.update(task, description=f"{event.step_key:<18}")
                            if event.step_key == "boards":
                                t0 = time.perf_counter()  # boards per second of the boards step
                            show()
                    show()
                if stopping:
                    return
                self.stop.wait(0.5)


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


def collect(instance, run_id: str) -> tuple[dict, dict]:
    """``(rows, table)`` of one run: per row partition, its materializations'
    figures and its check results; for the run as a whole, the unpartitioned
    assets' metadata and checks (node maps, strata, the table-wide F4 check)."""
    from dagster import DagsterEventType

    rows: dict = {}
    table = {"checks": {}, "steps_failed": [], "failure": ""}

    def row(partition):
        return rows.setdefault(partition, {"checks": {}, "generation_seconds": 0.0})

    types = {DagsterEventType.ASSET_MATERIALIZATION, DagsterEventType.ASSET_CHECK_EVALUATION,
             DagsterEventType.STEP_FAILURE}
    for rec in instance.get_records_for_run(run_id, of_type=types).records:
        ev = rec.event_log_entry.dagster_event
        if ev.event_type == DagsterEventType.ASSET_MATERIALIZATION:
            mat = ev.event_specific_data.materialization
            meta = {k: _plain(v) for k, v in mat.metadata.items()}
            name = mat.asset_key.to_user_string()
            if mat.partition is None:
                table[name] = meta
                continue
            figures = meta.get("figures") if isinstance(meta.get("figures"), dict) else meta
            row(mat.partition)[name] = figures
            if name == "boards":
                row(mat.partition)["generation_seconds"] = float((meta.get("seconds") or {}).get("generate", 0.0))
        elif ev.event_type == DagsterEventType.ASSET_CHECK_EVALUATION:
            check = ev.event_specific_data
            # the first paragraph: the verdict line (the rest is the overview's pictures, for the UI)
            result = {"passed": check.passed, "severity": check.severity.value,
                      "description": (check.description or "").split("\n\n")[0],
                      "partition": check.partition,
                      "metadata": _figures({k: _plain(v) for k, v in (check.metadata or {}).items()
                                            if not isinstance(_plain(v), str) or len(_plain(v)) < 200})}
            (row(check.partition)["checks"] if check.partition else table["checks"])[check.check_name] = result
        else:
            table["steps_failed"].append(ev.step_key)
    if table["steps_failed"]:
        table["failure"] = _failure_text(instance, run_id)
    return rows, table


# --- main ------------------------------------------------------------------------------------------


def _summary(console, run, rows: dict, table: dict, samples: int) -> Verdict:
    """Print the per-row table, the group lines and the verdict."""
    from boardgen_pipeline.calibration.fingerprints import row_key

    verdict = Verdict()
    console.print(summary.row_table(rows, f"F4 calibration: {len(rows)} rows x {samples} boards"))
    for key in sorted(rows, key=row_key):
        verdict.add_run(key, run.run_id, True, rows[key])
    pools = {k: v for k, v in table.items() if k != "checks"}
    pools["checks"] = {n: c for n, c in table["checks"].items() if n in summary.POOL_CHECKS}
    verdict.add_run("table", run.run_id, run.success, table)
    for line in summary.group_lines(rows, pools):
        console.print(line)
    n_checks = sum(len(i["checks"]) for i in rows.values()) + len(table["checks"])
    for line in verdict.lines(n_checks):
        console.print(line)
    return verdict


def _shown(path) -> str:
    """A path relative to the working directory when it is below it."""
    path = Path(path)
    return os.path.relpath(path) if path.absolute().is_relative_to(Path.cwd()) else str(path)


def main(argv=None) -> int:
    """The nightly; a storage fault (disk full, read-only file system, a bad
    warehouse path, a corrupt instance database) ends in one sentence, exit 5."""
    from boardgen_pipeline.errors import WarehouseError
    from boardgen_pipeline.steps.summary import EXIT_STORAGE

    try:
        return _main(argv)
    except WarehouseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_STORAGE


def _main(argv=None) -> int:
    args = parse_args(argv)
    _configure_env(args)
    wall0 = time.perf_counter()
    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 80)  # a log file reads like an 80-column terminal
    console.print("[bold]boardgen nightly[/]: loading Dagster and the generator's compiled kernels ...")

    from assets.home import ensure_dagster_home, fail_orphaned_runs

    home = ensure_dagster_home(args.dagster_home)

    import dagster as dg

    _quiet_warnings()
    from assets import definitions
    from assets.automation import ALL_SELECTION, TRIGGER_TAG, VALIDATE_SELECTION, partition_range_tags
    from assets.partitions import board_rows
    from assets.resources import settings_from_env
    from boardgen_pipeline.board.generator import warm_up
    from boardgen_pipeline.warehouse import datasets, publish, views

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
        if not validate.success:
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
        rows, table = collect(instance, run.run_id)
        db = views.refresh_views_atomic(settings.root)
    wall = time.perf_counter() - wall0

    verdict = _summary(console, run, rows, table, settings.samples)
    generation = sum(i["generation_seconds"] for i in rows.values())
    console.print(f"wall {wall:.1f} s: validate {t_validate:.1f} s, run {t_run:.1f} s (board generation "
                  f"{generation:.1f} s), set-up + summary {wall - t_validate - t_run:.1f} s")
    console.print(f"warehouse:    {_shown(settings.root)}   Dagster home: {_shown(home)}")
    console.print(f"report chart: {_shown(settings.root / 'calibration_report.png')}")
    console.print(f"the UI:       make ui  ->  http://127.0.0.1:3000, Assets, run {run.run_id[:8]}")
    console.print(f'SQL:          {_shown(sys.executable).replace(".venv/bin/python", ".venv/bin/boardgen")} sql '
                  f'"select * from calibration_report"   (DuckDB file {_shown(db)})')
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())
