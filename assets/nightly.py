"""``boardgen nightly`` (``make run``): one night of calibration through
Dagster, without a daemon (SPEC 8 ``make run``; docs/pipeline.md "One
nightly").

The same night the schedule starts under ``dagster-daemon``
(``boardgen_pipeline.steps.night``, ``nights``): the tables validated and
pinned, the ``prepare`` run, the rows in ranges, the table-wide checks once
every row run has ended, retention. Here this process takes the decisions
the daemon's sensors take (the same functions) and its lanes
(``boardgen_dagster.lane``, one process per core, forks of one server
started first, so that its imports overlap the set-up and are paid once)
execute the runs. Nothing of a row passes
through this process. A lane that dies fails only the runs it was
executing (this process holds its handle); another process's or host's run
is left alone. Then the summary (``steps.summary``) and the exit code
(``boardgen_pipeline.exits``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from boardgen_pipeline import settings as boardgen_settings
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.steps import night, summary
from boardgen_pipeline.words import count as counted


def main(argv=None) -> int:
    """``python -m boardgen_dagster.nightly ARGS``: ``boardgen nightly ARGS``."""
    from boardgen_pipeline import cli

    return cli.main(["nightly", *(sys.argv[1:] if argv is None else argv)])


def _order(launch) -> dict:
    return {"job": launch.job, "tags": launch.tags, "run_config": launch.run_config}


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
    from boardgen_pipeline.steps.lanes import remove_server_folder, start_server

    from .lane import PRELOAD

    found, _ = boardgen_settings.resolve({n: getattr(args, n, None) for n in boardgen_settings.NIGHTLY})
    try:
        catalog, invalid = catalogs.load_catalog(found.tables), None
    except TableError as exc:
        catalog, invalid = None, exc
    count = _lanes(found, len(catalog.board_gen.rows)) if catalog is not None else 0
    # the lanes' server starts first: its imports (Dagster, the code location, the kernels) overlap the rest
    server = start_server(PRELOAD) if count else None
    try:
        return _set_up_and_run(found, catalog, invalid, count, wall0)
    finally:
        remove_server_folder(server)


def _set_up_and_run(found, catalog, invalid, count: int, wall0: float) -> int:
    from rich.console import Console

    from boardgen_pipeline.steps.pool import connect
    from boardgen_pipeline.warehouse import datasets, publish

    console = Console(width=None if sys.stdout.isatty() else 80)  # a log file reads like an 80-column terminal
    if found.dask:  # a scheduler that does not answer fails here, before anything is created or written
        connect(found.dask, source=(found.source or {}).get("dask", "--dask").lstrip("$")).close()
    if invalid is None:  # tables that do not validate write nothing, not even an empty warehouse folder
        datasets.check_writable(found.warehouse)  # a bad warehouse path fails here, before any row runs
        publish.sweep_temp_files(found.warehouse)  # what a killed writer of this host left behind
    return _night(console, found, catalog, invalid, count, wall0)


def _night(console, found, catalog, invalid, count: int, wall0: float) -> int:
    from boardgen_pipeline.steps.lanes import Lanes, lane_spawner

    from .home import ensure_dagster_home
    from .lane import PRELOAD, serve

    home = ensure_dagster_home(found.dagster_home)
    import dagster as dg

    from boardgen_pipeline.steps.progress import RowsProgress

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
        nights.fail_dead_here(instance)
        nights.register(instance, table)
        first, config = nights.start(found, night_id, night.NIGHTLY, night.PROCESS)
        rows = nights.follow(instance, night_id, base, config, count)
        by_key = {launch.spec.key: launch for launch in (first, *rows)}
        # the lanes fork from their server now (its imports have had the set-up's time)
        lanes = Lanes(lane_spawner(serve, str(home), preload=PRELOAD), count,
                      lost=lambda lane: nights.fail_runs_of(instance, lane.pid, "the boardgen nightly that started it"))
        try:
            for lane, specs in zip(lanes.lanes, night.lanes_of([first.spec, *(r.spec for r in rows)], count),
                                   strict=False):
                for spec in specs:
                    lane.send(spec.key, _order(by_key[spec.key]))
            console.print(f"tables valid and pinned: {len(table.rows)} rows x {found.samples} boards; "
                          f"{counted(len(rows), 'run')} of rows on {counted(count, 'lane')}, each recording its "
                          "own rows, then "
                          f"the table's checks (runs tagged {night.NIGHT_TAG}={night_id})")
            t0 = time.perf_counter()
            progress = nights.Progress(instance, night_id, {r.spec.first: r.spec.rows for r in rows})
            with RowsProgress(console, len(table.rows), found.samples, counted(count, "lane")) as bar:
                lanes.wait(lambda: bar.update(progress.rows_done()), found.progress_seconds)
                bar.update(progress.rows_done())
            # what follows the rows, decided as the daemon's sensors decide it
            while launches := nights.follow(instance, night_id, base, config, count):
                lanes.deal([(launch.spec.key, _order(launch)) for launch in launches])
                lanes.wait(seconds=found.progress_seconds)
        finally:
            lanes.close()
        for note in lanes.notes:
            console.print(f"[red]{note}[/]")
        outcomes, checks, made, forgotten = nights.outcome(instance, night_id)
    timings = (f"wall {time.perf_counter() - wall0:.1f} s (runs {time.perf_counter() - t0:.1f} s); retention: "
               f"{counted(forgotten, 'old run')} forgotten")
    return summary.print_nightly(console, found.warehouse, catalog, found.samples, found.master_seed, checks,
                                 outcomes, made, timings, home, summary.shown(Path(sys.executable).with_name("boardgen")))


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


if __name__ == "__main__":
    sys.exit(main())
