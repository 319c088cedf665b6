"""``boardgen validate``, ``calibrate`` and ``verify``: the tables checked, the F4 batch of seed 001
(SPEC 7) into the warehouse without Dagster, and the warehouse held against its digests and against a
new generation."""

from __future__ import annotations

import sys
from pathlib import Path

from boardgen_pipeline.cli.common import (
    parse_rows,
    row_pool,
    tables_dir,
    warehouse_dir,
    writable,
)
from boardgen_pipeline.cli_args import TABLES_HELP, WAREHOUSE_HELP
from boardgen_pipeline.errors import WarehouseError
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.words import count, noun


def cmd_validate(args) -> int:
    from boardgen_pipeline.catalog import load_catalog

    cat = load_catalog(tables_dir(args))
    for w in cat.warnings:
        print(f"warning: {w}")
    print(f"ok: {cat.board_gen.path}: {len(cat.board_gen.rows)} rows, levels {cat.board_gen.levels()}")
    if cat.variation is not None:
        print(f"ok: {cat.variation.source}: {len(cat.variation.types)} variant types")
    if cat.resources is not None:
        print(f"ok: {cat.resources.source}: {len(cat.resources.rows)} resource weights")
    if cat.pools is not None:
        sizes = ", ".join(f"level {lv}: {len(p.templates)}" for lv, p in sorted(cat.pools.items()))
        print(f"ok: node-map pools ({sizes} templates), content discipline holds")
    if cat.targets is not None:
        print(f"ok: {cat.targets.path}: {len(cat.targets.rows)} targeted rows (corridor severity "
              f"{cat.targets.severity})")
    return 0



def cmd_calibrate(args) -> int:
    """The F4 batch of every row asked for, published, then the nightly's
    per-row table read back from the warehouse (``steps.summary``: one table,
    whoever ran the rows), the assertion E warnings, and the verdict: exit 3
    when a row fails an assertion."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.steps import summary
    from boardgen_pipeline.steps.publish_rows import publish_rows
    from boardgen_pipeline.warehouse import views

    # Every table, validated together (as the nightly does): the overlays need the variation table.
    catalog = load_catalog(tables_dir(args))
    table = catalog.board_gen
    keys = parse_rows(args.rows, table)
    root = warehouse_dir(args)
    console = Console(width=None if sys.stdout.isatty() else 120)
    columns = (TextColumn("calibrating"), BarColumn(bar_width=24), MofNCompleteColumn(),
               TextColumn("rows  {task.fields[rate]:>7} boards/s  {task.fields[where]}"), TimeRemainingColumn())
    # the cluster is reached, then the warehouse checked, before any row is computed or anything written
    with row_pool(args, len(keys)) as pool, writable(root), Progress(*columns, console=console,
                                                                       transient=False) as progress:
        import time

        task = progress.add_task("calibrating", total=len(keys), rate="-", where=f"on {pool.describe()}")
        t0, done = time.perf_counter(), [0]

        def advance(_result):
            while pool.notes:
                progress.console.print(f"[yellow]{pool.notes.pop(0)}[/]")
            done[0] += 1
            progress.update(task, advance=1, rate=f"{done[0] * args.samples / (time.perf_counter() - t0):,.0f}")

        published = publish_rows(root, catalog, keys, args.samples, args.master_seed, pool=pool, on_row=advance)
    db = views.refresh_views_atomic(root)
    summary.print_rows(console, summary.table_rows(root, catalog, args.samples, args.master_seed, keys), args.samples)
    for w in table.warnings:
        console.print(f"[yellow]assertion E (warning):[/] {w}")
    failed = [r for r in published.listed if not r.green]
    console.print(f"warehouse: {root}  (DuckDB: {db})")
    console.print('query: boardgen sql "select * from calibration_report"   charts: boardgen chart')
    if published.failed:
        more = f" (first {len(failed)})" if len(failed) < published.failed else ""
        console.print(f"[red]{count(published.failed, 'row')} failed an assertion{more}:[/] "
                      + ", ".join(f"({r.key[0]},{r.key[1]})" for r in failed))
        return Exit.CHECK_FAILED
    console.print("[green]all assertions hold[/]")
    return 0




def cmd_verify(args) -> int:
    from boardgen_pipeline.warehouse import publish

    root = warehouse_dir(args)
    if not root.is_dir():
        raise WarehouseError(root, "no warehouse folder here")
    if args.regenerate:
        return _verify_regenerate(args, root)
    files = publish.published_files(root)
    bad = publish.verify(root)
    for path, problem in bad:
        print(f"damaged: {path}: {problem}")
    if bad:
        past = sum(1 for path, _ in bad if Path(path).relative_to(root).parts[0] == "calibration_history")
        note = (f"; {past} of them calibration history {noun(past, 'version')}, which no run makes again (the current one is "
                "rewritten when its row is next published)" if past else "")
        print(f"{len(bad)} of {count(len(files), 'file')} damaged in {root}; the nightly regenerates them "
              f"(or rerun `boardgen calibrate` for their rows){note}", file=sys.stderr)
        return Exit.STORAGE
    print(f"ok: {count(len(files), 'file')} in {root} match their recorded sha256")
    return 0


def _verify_regenerate(args, root: Path) -> int:
    """``verify --regenerate``: the nightly's determinism check on demand
    (``steps.determinism``): each row whose fingerprint did not change is
    generated again and held against its stored boards; nothing is
    written. Exit 3 when a row drifted."""
    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.steps import determinism, reproduce

    catalog = load_catalog(tables_dir(args))
    keys = parse_rows(args.rows, catalog.board_gen)
    drifted = stale = 0
    with row_pool(args, len(keys)) as pool:
        for row in sorted(reproduce.regenerate(root, catalog, keys, args.samples, args.master_seed, pool),
                          key=lambda r: r.key):
            name = f"({row.key[0]},{row.key[1]})"
            if row.kind == determinism.DRIFT:
                drifted += 1
                print(f"drift: row {name}: {count(row.found.differing, 'board')} differ; the first, scope {row.found.scope}, "
                      f"in {', '.join(row.found.fields)}")
            elif row.kind == "stale":
                stale += 1
                print(f"not compared: row {name}: its stored boards are of another version of the row (calibrate it)")
            else:
                print(f"ok: row {name}: {row.kind}")
    if drifted:
        print(f"{drifted} of {count(len(keys), 'row')} changed without a change of their row: bump METRIC_VERSION on "
              "purpose, or find the regression", file=sys.stderr)
        return Exit.CHECK_FAILED
    print(f"{count(len(keys) - stale, 'row')} reproduce their stored boards" + (f"; {stale} not compared" if stale else ""))
    return Exit.OK



def register(sub) -> None:
    v = sub.add_parser("validate", help="validate the tables")
    v.add_argument("--tables", help=TABLES_HELP)
    v.set_defaults(func=cmd_validate)

    c = sub.add_parser("calibrate", help="run the F4 batch and write the warehouse")
    c.add_argument("--tables", help=TABLES_HELP)
    c.add_argument("--samples", type=int, default=256, help="boards per row, 1..4096 (default: 256)")
    c.add_argument("--rows", help="row keys L,D separated by spaces (default: all rows)")
    c.add_argument("--master-seed", type=int, default=0, help="master seed, >= 0 (default: 0)")
    c.add_argument("--warehouse", help=WAREHOUSE_HELP)
    c.add_argument("--workers", type=int, default=None,
                   help="local worker processes, >= 1 (default: $BOARDGEN_WORKERS, else every core; "
                        "fewer on small tables)")
    c.add_argument("--dask", default=None,
                   help="Dask scheduler address tcp://host:port: every row's chain runs on that cluster "
                        "(default: $BOARDGEN_DASK, else local workers)")
    c.set_defaults(func=cmd_calibrate)

    vf = sub.add_parser("verify", help="check every warehouse file against its recorded sha256 (--regenerate: "
                                       "every row's boards against a new generation)")
    vf.add_argument("--warehouse", help=WAREHOUSE_HELP)
    vf.add_argument("--regenerate", action="store_true",
                    help="generate the rows again and hold them against their stored boards (the nightly's "
                         "determinism check), writing nothing (default: off)")
    vf.add_argument("--rows", help="with --regenerate: row keys L,D separated by spaces (default: all rows)")
    vf.add_argument("--tables", help=TABLES_HELP)
    vf.add_argument("--samples", type=int, default=256, help="with --regenerate: boards per row, 1..4096 (default: 256)")
    vf.add_argument("--master-seed", type=int, default=0, help="with --regenerate: master seed, >= 0 (default: 0)")
    vf.add_argument("--workers", type=int, default=None,
                    help="with --regenerate: local worker processes, >= 1 (default: $BOARDGEN_WORKERS, else every core)")
    vf.add_argument("--dask", default=None, help="with --regenerate: a Dask scheduler tcp://host:port (default: "
                                                 "$BOARDGEN_DASK, else local workers)")
    vf.set_defaults(func=cmd_verify)
