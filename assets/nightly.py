"""``make run``: the whole calibration graph on the tables, through Dagster
(SPEC 8 ``make run``; issue 3).

``python -m assets.nightly [--tables DIR] [--warehouse DIR] [--samples N]
[--master-seed M] [--workers W] [--dagster-home DIR]``

1. creates/migrates ``$DAGSTER_HOME`` (default ``<repo>/.dagster_home``) once;
2. runs ``calibration_job`` on the table assets only: observe the table
   files, validate them (a bad table stops here with the ``boardgen validate``
   message, exit 1, nothing written), register one partition per row;
3. runs ``calibration_job`` once per row partition (boards, variant overlays,
   report: ``ROW_SELECTION``), ``W`` runs at a time (default: 2, the cores of
   this machine) in worker processes; every run is a persisted Dagster run
   (``execute_job`` against the instance), visible in the UI afterwards with
   its check results;
4. runs ``calibration_job`` once more without a partition
   (``POOLS_SELECTION``): the node-map draws and the stratified figures,
   which read every row's report;
5. prints the per-row summary, a line per check group (overlays, node maps,
   strata) and every failed check read back from the instance, the timing
   split, and where to look next.

Exit codes: 0 all checks hold (E warnings allowed); 1 the table is invalid;
3 a check of error severity failed; 4 a run failed for another reason.
"""

import argparse
import multiprocessing
import os
import sys
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from boardgen_pipeline.steps import summary
from boardgen_pipeline.steps.summary import EXIT_TABLE, Verdict

TRIGGER = "make_run"
# Run logs go to the event log (the UI shows them); the terminal gets the summary only.
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
    p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                   help="partition runs at a time (default: min(2, cores))")
    p.add_argument("--dagster-home", help="Dagster instance folder (default: $DAGSTER_HOME or <repo>/.dagster_home)")
    args = p.parse_args(argv)
    from boardgen_pipeline.cli_args import EXIT_BAD_ARGUMENTS, ArgumentError, check_nightly

    bad = check_nightly(vars(args))  # issue 15: every argument in its domain before any work
    if bad:
        p.exit(EXIT_BAD_ARGUMENTS, ArgumentError(bad).report() + "\n")
    return args


def _configure_env(args) -> None:
    """Settings travel to the worker processes (and the code location) as env vars."""
    if args.tables:  # as given: validation messages name it as `boardgen validate --tables` does
        os.environ["BOARDGEN_TABLES"] = args.tables
    if args.warehouse:
        os.environ["BOARDGEN_WAREHOUSE"] = str(Path(args.warehouse).resolve())
    for value, name in ((args.samples, "BOARDGEN_SAMPLES"), (args.master_seed, "BOARDGEN_MASTER_SEED"),
                        (args.adventures, "BOARDGEN_NODE_MAP_ADVENTURES")):
        if value is not None:
            os.environ[name] = str(value)


# --- worker processes ---------------------------------------------------------------------------

_WORKER: dict = {}


def _worker_init(barrier=None) -> None:
    import dagster as dg

    _quiet_warnings()
    from assets import definitions

    _WORKER["instance"] = dg.DagsterInstance.get()
    _WORKER["job"] = dg.reconstructable(definitions.calibration_job_def)
    _warm_up()
    if barrier is not None:
        barrier.wait()  # every worker is ready before the first run starts


def _warm_up() -> None:
    """Load the generator's compiled kernels (numba cache) before the first
    run, so that a row's generation time measures generation only."""
    from boardgen_pipeline.board.generator import warm_up

    warm_up()


def _execute(job, instance, tags: dict, partition: str | None = None, asset_selection=None):
    import dagster as dg

    run_tags = dict(tags)
    if partition is not None:
        run_tags["dagster/partition"] = partition
    return dg.execute_job(job, instance, run_config=QUIET, tags=run_tags, asset_selection=asset_selection)


def _ready(_: int) -> int:
    return os.getpid()


def _run_partition(partition: str, tags: dict) -> tuple[str, str, bool]:
    from assets.automation import ROW_SELECTION

    if not _WORKER:
        _worker_init()
    result = _execute(_WORKER["job"], _WORKER["instance"], tags, partition, asset_selection=ROW_SELECTION)
    return partition, result.run_id, result.success


# --- reading results back from the instance -------------------------------------------------------


def _events(instance, run_id: str, event_type):
    return [e.dagster_event for e in instance.all_logs(run_id, of_type=event_type) if e.dagster_event]


def _failure_text(instance, run_id: str) -> str:
    from dagster import DagsterEventType

    out = []
    for ev in _events(instance, run_id, DagsterEventType.STEP_FAILURE):
        data = ev.step_failure_data
        if data.user_failure_data is not None and data.user_failure_data.description:
            out.append(data.user_failure_data.description)
        elif data.error is not None:
            out.append(f"{ev.step_key}: {data.error.message.strip()}")
    return "\n".join(out)


def _plain(value):
    return getattr(value, "value", value)


def collect(instance, run_id: str) -> dict:
    """The boards materialization metadata and the check results of one run."""
    from dagster import DagsterEventType

    out = {"boards": None, "checks": {}, "steps_failed": [], "generation_seconds": 0.0}
    for ev in _events(instance, run_id, DagsterEventType.ASSET_MATERIALIZATION):
        mat = ev.event_specific_data.materialization
        out[mat.asset_key.to_user_string()] = {k: _plain(v) for k, v in mat.metadata.items()}
        if mat.asset_key.path == ["boards"]:
            out["generation_seconds"] = float(out["boards"].get("generation_seconds", 0.0))
    for ev in _events(instance, run_id, DagsterEventType.ASSET_CHECK_EVALUATION):
        check = ev.event_specific_data
        out["checks"][check.check_name] = {
            "passed": check.passed,
            "severity": check.severity.value,
            "description": check.description,
            "partition": check.partition,
            "metadata": {k: _plain(v) for k, v in (check.metadata or {}).items()
                         if not isinstance(_plain(v), str) or len(_plain(v)) < 200},
        }
    out["steps_failed"] = [ev.step_key for ev in _events(instance, run_id, DagsterEventType.STEP_FAILURE)]
    out["failure"] = _failure_text(instance, run_id) if out["steps_failed"] else ""
    return out


# --- main ------------------------------------------------------------------------------------------


def _run_partitions(keys: list[str], tags: dict, workers: int) -> tuple[list, float, float]:
    """Every partition run, ``workers`` at a time; returns the results, the
    worker start-up time and the time of the runs themselves."""
    t0 = time.perf_counter()
    if workers == 1:
        _worker_init()
        t_start = time.perf_counter() - t0
        t0 = time.perf_counter()
        results = [_run_partition(k, tags) for k in keys]
        return results, t_start, time.perf_counter() - t0
    # compile the kernels once here (numba's on-disk cache), so that on a fresh
    # clone the workers load them instead of both compiling at the same time
    _warm_up()
    ctx = multiprocessing.get_context("spawn")  # never fork a process holding SQLite handles
    barrier = ctx.Barrier(workers)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init,
                             initargs=(barrier,)) as pool:
        list(pool.map(_ready, range(workers)))  # workers up (imports, instance, kernels) before timing
        t_start = time.perf_counter() - t0
        t0 = time.perf_counter()
        results = list(pool.map(_run_partition, keys, [tags] * len(keys)))
    return results, t_start, time.perf_counter() - t0


def _summary(console, results, rows: dict, samples: int, workers: int, pools: tuple | None = None) -> Verdict:
    """Print the per-row table, the group lines and the verdict; ``pools``:
    (run id, success, collected) of the pools run, if it ran."""
    from rich.table import Table

    out = Table(title=f"F4 calibration through Dagster: {len(results)} rows x {samples} boards, "
                      f"{workers} worker(s)")
    for col in summary.ROW_COLUMNS:
        out.add_column(col, justify="right")
    verdict = Verdict()
    for key, run_id, success in results:
        verdict.add_run(key, run_id, success, rows[key])
        out.add_row(*summary.row_cells(key, rows[key]))
    console.print(out)
    pools_info = None
    if pools is not None:
        run_id, success, pools_info = pools
        verdict.add_run("pools", run_id, success, pools_info)
    for line in summary.group_lines(rows, pools_info):
        console.print(line)
    n_checks = sum(len(i["checks"]) for i in rows.values()) + (len(pools_info["checks"]) if pools_info else 0)
    for line in verdict.lines(n_checks):
        console.print(line)
    return verdict


def _shown(path) -> str:
    """A path relative to the working directory when it is below it."""
    path = Path(path)
    return os.path.relpath(path) if path.absolute().is_relative_to(Path.cwd()) else str(path)


def main(argv=None) -> int:
    args = parse_args(argv)
    _configure_env(args)
    wall0 = time.perf_counter()

    from assets.home import ensure_dagster_home

    home = ensure_dagster_home(args.dagster_home)

    import dagster as dg

    _quiet_warnings()
    from rich.console import Console

    from assets import definitions
    from assets.automation import POOLS_SELECTION, TRIGGER_TAG, VALIDATE_SELECTION
    from assets.partitions import board_rows
    from assets.resources import settings_from_env
    from boardgen_pipeline.calibration import fingerprints
    from boardgen_pipeline.warehouse import views

    console = Console(width=None if sys.stdout.isatty() else 150)
    settings = settings_from_env()
    tags = {TRIGGER_TAG: TRIGGER, "boardgen/batch": uuid.uuid4().hex[:12]}

    with dg.DagsterInstance.get() as instance:
        t0 = time.perf_counter()
        job = dg.reconstructable(definitions.calibration_job_def)
        validate = _execute(job, instance, tags, asset_selection=VALIDATE_SELECTION)
        t_validate = time.perf_counter() - t0
        if not validate.success:
            print(_failure_text(instance, validate.run_id), file=sys.stderr)
            console.print(f"[red]table validation failed[/] (run {validate.run_id}); nothing was generated or written")
            return EXIT_TABLE
        keys = sorted(instance.get_dynamic_partitions(board_rows.name), key=fingerprints.row_key)
        workers = max(1, min(args.workers, len(keys)))
        results, t_start, t_runs = _run_partitions(keys, tags, workers)
        t0 = time.perf_counter()  # after every row's report: node-map draws and stratified figures
        pools_run = _execute(job, instance, tags, asset_selection=POOLS_SELECTION)
        t_pools = time.perf_counter() - t0
        db = views.refresh_views_atomic(settings.root)
        rows = {k: collect(instance, run_id) for k, run_id, _ in results}
        pools = (pools_run.run_id, pools_run.success, collect(instance, pools_run.run_id))
    wall = time.perf_counter() - wall0

    verdict = _summary(console, results, rows, settings.samples, workers, pools)
    generation = sum(i["generation_seconds"] for i in rows.values())
    console.print(
        f"wall {wall:.1f} s: set-up + summary {wall - t_validate - t_start - t_runs - t_pools:.1f} s, validate run "
        f"{t_validate:.1f} s, worker start-up {t_start:.1f} s, {len(keys)} partition runs {t_runs:.1f} s "
        f"on {workers} worker(s), node-map/strata run {t_pools:.1f} s"
    )
    console.print(
        f"  board generation {generation:.2f} s summed over rows (~{generation / workers:.2f} s of wall on "
        f"{workers} workers, {100 * generation / workers / wall:.0f}%); the rest is Dagster (run and event "
        f"storage, steps), process start-up and I/O"
    )
    console.print(f"warehouse: {settings.root}   Dagster home: {home}")
    console.print(f"report chart:  {settings.root / 'calibration_report.png'}  (p10/p50/p90 vs target per row)")
    console.print("open the UI:   make ui   (http://127.0.0.1:3000 -> Assets, group 'calibration'; "
                  f"runs tagged {TRIGGER_TAG}={TRIGGER})")
    console.print(f'query DuckDB:  duckdb {_shown(db)} "select * from calibration_report"   (also: variant_overlays, '
                  'node_map_draws, calibration_strata)')
    console.print(f"          or:  {_shown(sys.executable)} -c \"import duckdb; print(duckdb.connect("
                  f"'{_shown(db)}', read_only=True).sql('select * from calibration_report'))\"")
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())
