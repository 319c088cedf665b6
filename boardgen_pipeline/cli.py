"""The ``boardgen`` command line (SPEC 8 "Interfaces").

Every user error (bad table, bad layout, unknown level) is printed as a
message and exit code 1, never a traceback. ``--json`` field names are a
contract other tools read: they are the metrics names of SPEC 2.6.

Exit codes: one table for every command, ``boardgen_pipeline.exits`` (the
README prints it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from boardgen_pipeline.board.geometry import LayoutError
from boardgen_pipeline.errors import TableError, WarehouseError, not_utf8
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.paths import default_warehouse


class UserError(Exception):
    """A problem with what the user asked for: printed without a traceback."""


def _tables_dir(args) -> Path:
    from boardgen_pipeline.paths import default_tables_dir

    return Path(args.tables) if args.tables else default_tables_dir()


def _board_text(board, metrics) -> str:
    lines = [
        f"board {metrics['width']}x{metrics['height']} {metrics['board_type']}  row {metrics['row_key']}  "
        f"scope {metrics['scope']} (master seed {metrics['master_seed']})",
        f"exit {metrics['exit']}  alert {metrics['alert']}  attempts {metrics['attempts_used']}  "
        f"inferability {metrics['revealed']}/{metrics['safe_count']} = {metrics['inferability']:.3f} "
        f"(target {metrics['inferability_target']})",
        f"mines {metrics['mines_actual']}/{metrics['mines_target']} (ring removed {metrics['ring_removed']})  "
        f"R0 {metrics['r0_size']}",
        "",
    ]
    numbers = board.numbers
    fog = set(board.fog)
    for y in range(board.height):
        row = []
        for x in range(board.width):
            c = y * board.width + x
            row.append("*" if board.mines[c] else ("f" if c in fog else (str(numbers[c]) if numbers[c] else ".")))
        lines.append(" ".join(row))
    return "\n".join(lines)


def cmd_generate(args) -> int:
    from boardgen_pipeline.board.generator import generate

    if args.variants:
        from boardgen_pipeline.catalog import load_catalog

        catalog = load_catalog(_tables_dir(args))
        table = catalog.board_gen
        if catalog.variation is None:
            raise UserError(f"--variants: no variation.toml in {catalog.tables_dir}")
    else:
        from boardgen_pipeline.tables.board_gen import load_board_gen_dir

        table = load_board_gen_dir(_tables_dir(args))
    try:
        board, metrics = generate(args.level, args.depth, args.seed, master_seed=args.master_seed, table=table)
    except KeyError as exc:
        raise UserError(exc.args[0]) from None
    overlay = None
    if args.variants:
        from boardgen_pipeline.variants.overlays import overlay_for

        overlay = overlay_for(board, metrics, table, catalog.variation)
    if args.json:
        row = table.resolve(args.level, args.depth)
        out = {**metrics, "row": {"key": list(row.key), **row.fields()}}
        if overlay is not None:
            out["overlay"] = overlay.to_record()
        print(json.dumps(out, sort_keys=False))
    else:
        print(_board_text(board, metrics))
        if overlay is not None:
            from boardgen_pipeline.variants.placement import render_overlay

            print()
            print(render_overlay(board, overlay))
    return 0


def cmd_nodemap_draw(args) -> int:
    from boardgen_pipeline.nodemap import draw_adventure_text
    from boardgen_pipeline.tables.board_gen import load_board_gen_dir

    tables = _tables_dir(args)
    keys = set(load_board_gen_dir(tables).keys())
    print(draw_adventure_text(args.seed, args.first_adventure, tables, keys))
    return 0


def _read_layout(name: str) -> str:
    """A layout file's text (``-``: stdin), read as bytes and decoded here:
    stdin's own decoding would turn bad bytes into cells it cannot name."""
    try:
        return (sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()).decode("utf-8-sig")
    except OSError as exc:
        raise UserError(f"cannot read {name}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{name}: {not_utf8(exc)}") from None


def cmd_measure(args) -> int:
    from boardgen_pipeline.board.measure import measure_layout, probability_grid

    text = _read_layout(args.file)
    try:
        result = measure_layout(text, rules=args.rules, spawn_side=args.spawn_side).as_json()
        if args.probabilities:
            result.update(probability_grid(text, rules=args.rules, spawn_side=args.spawn_side))
    except (LayoutError, ValueError) as exc:
        raise UserError(f"{args.file}: {exc}") from None
    print(json.dumps(result))
    return 0


def cmd_play(args) -> int:
    """One JSON line a layout: the perfect player's game. Every
    file is read and checked before the first game, so a bad one costs no
    output."""
    from boardgen_pipeline.board.measure import board_of_layout
    from boardgen_pipeline.board.player import game_json

    boards = []
    for name in args.files:
        try:
            boards.append(board_of_layout(_read_layout(name), spawn_side=args.spawn_side))
        except (LayoutError, ValueError) as exc:
            raise UserError(f"{name}: {exc}") from None
    for name, board in zip(args.files, boards, strict=True):
        print(json.dumps({"file": name, **game_json(board)}))
    return 0


def cmd_validate(args) -> int:
    from boardgen_pipeline.catalog import load_catalog

    cat = load_catalog(_tables_dir(args))
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
    return 0


def _parse_rows(text: str | None, table, option: str = "--rows") -> list[tuple[int, int]]:
    if not text:
        return table.keys()
    from boardgen_pipeline.cli_args import parse_row_key, split_row_keys

    keys = []
    for part in split_row_keys(text):
        key = parse_row_key(part)
        if key is None:
            raise UserError(f"{option}: {part!r} is not L,D (e.g. {option} 1,0 2,4)")
        if key not in table.rows:
            raise UserError(f"{option}: no row ({key[0]},{key[1]}) in {table.path}")
        keys.append(key)
    return keys


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
    catalog = load_catalog(_tables_dir(args))
    table = catalog.board_gen
    keys = _parse_rows(args.rows, table)
    root = Path(args.warehouse) if args.warehouse else default_warehouse()
    console = Console(width=None if sys.stdout.isatty() else 120)
    columns = (TextColumn("calibrating"), BarColumn(bar_width=24), MofNCompleteColumn(),
               TextColumn("rows  {task.fields[rate]:>7} boards/s  {task.fields[where]}"), TimeRemainingColumn())
    # the cluster is reached, then the warehouse checked, before any row is computed or anything written
    with _row_pool(args, len(keys)) as pool, _writable(root), Progress(*columns, console=console,
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
        console.print(f"[red]{published.failed} row(s) failed an assertion{more}:[/] "
                      + ", ".join(f"({r.key[0]},{r.key[1]})" for r in failed))
        return Exit.CHECK_FAILED
    console.print("[green]all assertions hold[/]")
    return 0


@contextmanager
def _writable(root: Path):
    from boardgen_pipeline.warehouse import datasets, publish

    datasets.check_writable(root)  # a bad warehouse path fails before any row is computed
    publish.sweep_temp_files(root)
    yield root


def _row_pool(args, rows: int):
    """Where ``calibrate``'s rows run: the Dask cluster of ``--dask`` /
    ``$BOARDGEN_DASK`` (reached before any row runs: an address that does not
    answer is one sentence, exit 6), else local workers (``--workers`` /
    ``$BOARDGEN_WORKERS``, checked before any work by ``cli_args``)."""
    from boardgen_pipeline import settings
    from boardgen_pipeline.steps import pool

    names = ("workers", "dask")
    chosen, _ = settings.resolve({"workers": args.workers, "dask": args.dask}, names=names, prog="boardgen calibrate")
    source = (chosen.source or {}).get("dask", "--dask").lstrip("$")
    return pool.build(rows, chosen.workers, chosen.dask, source)


def cmd_verify(args) -> int:
    from boardgen_pipeline.warehouse import publish

    root = Path(args.warehouse) if args.warehouse else default_warehouse()
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
        note = (f"; {past} of them calibration history version(s), which no run makes again (the current one is "
                "rewritten when its row is next published)" if past else "")
        print(f"{len(bad)} of {len(files)} file(s) damaged in {root}; the nightly regenerates them "
              f"(or rerun `boardgen calibrate` for their rows){note}", file=sys.stderr)
        return Exit.STORAGE
    print(f"ok: {len(files)} file(s) in {root} match their recorded sha256")
    return 0


def _verify_regenerate(args, root: Path) -> int:
    """``verify --regenerate``: the nightly's determinism check on demand
    (``steps.determinism``): each row whose fingerprint did not change is
    generated again and held against its stored boards; nothing is
    written. Exit 3 when a row drifted."""
    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.steps import determinism, reproduce

    catalog = load_catalog(_tables_dir(args))
    keys = _parse_rows(args.rows, catalog.board_gen)
    drifted = stale = 0
    with _row_pool(args, len(keys)) as pool:
        for row in sorted(reproduce.regenerate(root, catalog, keys, args.samples, args.master_seed, pool),
                          key=lambda r: r.key):
            name = f"({row.key[0]},{row.key[1]})"
            if row.kind == determinism.DRIFT:
                drifted += 1
                print(f"drift: row {name}: {row.found.differing} board(s) differ; the first, scope {row.found.scope}, "
                      f"in {', '.join(row.found.fields)}")
            elif row.kind == "stale":
                stale += 1
                print(f"not compared: row {name}: its stored boards are of another version of the row (calibrate it)")
            else:
                print(f"ok: row {name}: {row.kind}")
    if drifted:
        print(f"{drifted} of {len(keys)} row(s) changed without a change of their row: bump METRIC_VERSION on "
              "purpose, or find the regression", file=sys.stderr)
        return Exit.CHECK_FAILED
    print(f"{len(keys) - stale} row(s) reproduce their stored boards" + (f"; {stale} not compared" if stale else ""))
    return Exit.OK


def cmd_advise(args) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from boardgen_pipeline.calibration import advisor, batch
    from boardgen_pipeline.tables.board_gen import load_board_gen_dir

    if args.apply:
        return _advise_apply(args)
    table = load_board_gen_dir(_tables_dir(args))
    keys = _parse_rows(args.row, table, "--row")
    console = Console(width=None if sys.stdout.isatty() else 120)
    out = []
    reports = []
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("advising", total=len(keys))
        for key in keys:
            row = table.rows[key]
            records = batch.run_row(table, key, args.samples, args.master_seed)
            report = batch.evaluate_row(row, records)
            reports.append(report.as_dict())
            failing = not (report.assertion_a and report.assertion_a1)
            out.append(advisor.advise(row, table.spawn_side, records, failing=failing, samples=args.probes,
                                      master_seed=args.master_seed, force=bool(args.row)))
            progress.advance(task)
    for a in out:
        console.print(a.text(), highlight=False)
    for line in advisor.difficulty_findings(reports):
        console.print(line, highlight=False)
    return 0


def _advise_apply(args) -> int:
    """``advise --apply``: the fix of each failing row named (or,
    with ``--all``, of every failing row) written into the table in one
    validated, atomic edit, its diff printed; ``--dry-run`` prints the diff
    only. Refusals (a table that does not validate, an unknown row, a
    read-only table) come before any board is drawn and write nothing."""
    from rich.console import Console
    from rich.progress import Progress

    from boardgen_pipeline.calibration import fix
    from boardgen_pipeline.paths import tables_are_the_package_default
    from boardgen_pipeline.tables import edit
    from boardgen_pipeline.tables.board_gen import load_board_gen_dir

    if not args.dry_run and tables_are_the_package_default(_tables_dir(args)):
        raise UserError("--apply edits a tables folder you name: the installed package's default tables are read "
                        "only (copy them, then give --tables DIR, or --dry-run to see the change)")
    try:
        table = load_board_gen_dir(_tables_dir(args))
    except TableError as exc:
        more = f" (and {len(exc.violations) - 1} more: `boardgen validate` lists them)" if len(exc.violations) > 1 else ""
        raise UserError(f"the table does not validate, so --apply writes nothing: {exc.violations[0]}{more}") from None
    keys = _parse_rows(None if args.all else args.row, table, "--row")
    path = Path(table.path)
    try:
        if not args.dry_run:
            edit.check_writable(path)
        console = Console(width=None if sys.stdout.isatty() else 120)
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("advising", total=len(keys))
            fixes = []
            for key in keys:
                fixes.append(fix.fix_row(table, key, args.samples, args.probes, args.master_seed))
                progress.advance(task)
        for f in fixes:
            if f.passes and args.all:
                continue  # --all: passing rows are left alone, counted below
            if f.advice is not None:
                print(f.advice.text())
            print(f.text())
        passing = sum(f.passes for f in fixes)
        if args.all:
            print(f"{passing} of {len(fixes)} rows pass F4 on their {args.samples} calibration boards: left alone")
        changes = [f.change for f in fixes if f.change is not None]
        if changes:
            done = edit.apply_changes(path, changes, based_on=table, dry_run=args.dry_run)
            print(done.diff, end="")
            print("dry run: nothing written" if args.dry_run else
                  f"wrote {path} ({len(changes)} change(s), validated); the sensor regenerates the changed rows")
    except edit.EditRefused as exc:
        raise UserError(str(exc)) from None
    return Exit.CHECK_FAILED if any(not f.passes and f.change is None for f in fixes) else 0


def cmd_sql(args) -> int:
    """One SQL statement against the warehouse's DuckDB views, read only (so
    the README's query works with what the project installs)."""
    import duckdb

    from boardgen_pipeline.warehouse import datasets, views

    root = Path(args.warehouse) if args.warehouse else default_warehouse()
    if not (root / datasets.DB_NAME).is_file():
        raise UserError(f"no warehouse database at {root / datasets.DB_NAME}: run `make run` (or `boardgen "
                        "calibrate`) first")
    con = views.connect(root)  # the views read this warehouse's files, wherever it was copied or moved
    try:
        rel = con.sql(args.query)
        if rel is None:
            return 0
        if args.format == "csv":
            rel.to_df().to_csv(sys.stdout, index=False)
        elif args.format == "json":
            print(rel.to_df().to_json(orient="records", double_precision=15))  # pandas keeps 10 digits by default
        else:
            rel.show(max_rows=args.max_rows, max_width=10_000)
    except duckdb.Error as exc:
        text = str(exc).splitlines()[0]
        if "schema mismatch" in text:
            text += (" (the warehouse holds files written by an older version of the code: `make run` "
                     "rewrites every row's files)")
        raise UserError(f"SQL: {text}") from None
    finally:
        con.close()
    return 0


def cmd_chart(args) -> int:
    """The report chart (p10/p50/p90 against the target, per row) and the
    difficulty curves, drawn on demand from the warehouse's current reports
    (a picture is drawn where it is looked at, not every night)."""
    from boardgen_pipeline.pictures.charts import write_difficulty_chart, write_report_chart
    from boardgen_pipeline.warehouse import datasets, publish

    root = Path(args.warehouse) if args.warehouse else default_warehouse()
    reports = []
    for key in sorted(publish.intact_keys(root, "calibration_report")):
        reports.extend(publish.read_partition(root, "calibration_report", key))
    if not reports:
        raise UserError(f"no calibration report in {root}: run `make run` (or `boardgen calibrate`) first")
    with datasets.storage_faults(root):
        paths = [write_report_chart(root, reports), write_difficulty_chart(root, reports)]
    for path in paths:
        print(path)
    return 0


def cmd_curve(args) -> int:
    """The difficulty curve (seed 001 P2 "C3 全行审计"): one record per row from
    the warehouse alone (``review.curve``), as CSV, Parquet or JSON, or one
    picture per level (PNG files, or one self-contained HTML page)."""
    from boardgen_pipeline.review import curve

    root = Path(args.warehouse) if args.warehouse else default_warehouse()
    records = curve.records(root)
    if args.format == "png":
        folder = Path(args.output) if args.output else root / curve.PNG_FOLDER
        for path in curve.write_pngs(records, folder):
            print(path)
        return 0
    data = curve.encode(records, args.format)
    if args.output:
        from boardgen_pipeline import files

        files.atomic_write(Path(args.output), data)
        print(args.output, file=sys.stderr)
    elif isinstance(data, bytes):
        sys.stdout.buffer.write(data)
    else:
        sys.stdout.write(data)
    return 0


def cmd_diff(args) -> int:
    """The calibration of a table change (``review.diff``): BASE and HEAD
    resolved (a bad one is one sentence, exit 1, nothing written), the
    modified rows compared paired, the outputs written, exit 3 when an F4
    verdict gets worse (or, with ``--fail-on flagged``, when a change is
    flagged)."""
    from rich.console import Console
    from rich.progress import Progress

    from boardgen_pipeline.cli_args import parse_margins
    from boardgen_pipeline.review import diff, render, saved, sources

    tables = _tables_dir(args)
    root = Path(args.warehouse) if args.warehouse else default_warehouse()
    head_spec = args.head or str(tables)
    head = sources.resolve(head_spec, "HEAD", tables, root) if head_spec != sources.WAREHOUSE else None
    base = sources.resolve(args.base, "BASE", tables, root, like=head.table if head is not None else None)
    if head is None:
        head = sources.resolve(head_spec, "HEAD", tables, root, like=base.table)
    settings = diff.Settings(args.samples, args.master_seed, args.alpha, parse_margins(args.margin),
                             args.until_decided, args.resamples)
    stored = root if root.is_dir() else None
    console = Console(stderr=True)
    with Progress(console=console, transient=True) as progress:
        work = [k for k in set(base.rows) | set(head.rows) if diff.state_of(base, head, k) in (diff.MODIFIED, diff.ADDED)]
        task = progress.add_task("comparing rows", total=len(work))
        result = diff.compare(base, head, settings, stored, sources.code_differs(base, head, tables),
                              on_row=lambda _row: progress.advance(task))
    reports = _stored_reports(stored) if "html" in {args.format, *map(_output_format, args.output)} else {}
    outputs = {"terminal": lambda: render.terminal(result), "json": lambda: render.json_text(result),
               "markdown": lambda: render.markdown(result, args.full_report or ""),
               "html": lambda: render.html(result, reports)}
    for name in args.output:
        from boardgen_pipeline import files

        files.atomic_write(Path(name), outputs[_output_format(name)]())
    sys.stdout.write(outputs[args.format]())
    if args.save:
        with _writable(root):
            print(f"saved: {saved.save(root, result)} (view calibration_diff)", file=sys.stderr)
    if result.worse or (args.fail_on == "flagged" and result.flagged):
        return Exit.CHECK_FAILED
    return Exit.OK


def _output_format(name: str) -> str:
    from boardgen_pipeline.review.render import SUFFIXES

    return SUFFIXES[Path(name).suffix.lower()]


def _stored_reports(root: Path | None) -> dict:
    """The columns of the warehouse's row reports the HTML page draws the rows
    the diff did not recompute from."""
    from boardgen_pipeline.review.render import REPORT_COLUMNS
    from boardgen_pipeline.review.sources import report_columns

    return report_columns(root, REPORT_COLUMNS) if root is not None else {}


def cmd_watch(args) -> int:
    """The designer's preview (``review.watch``): on every save of the tables,
    the changed rows recomputed in this process, nothing published, their
    verdicts and the diff against the stored calibration printed; a save that
    breaks the table prints the validation report and keeps watching.
    Ctrl-C stops it (exit 0)."""
    from boardgen_pipeline.cli_args import parse_margins
    from boardgen_pipeline.review import diff, watch

    root = Path(args.warehouse) if args.warehouse else default_warehouse()
    settings = diff.Settings(args.samples, args.master_seed, margins=parse_margins(args.margin),
                             resamples=args.resamples)
    try:
        watch.run(_tables_dir(args), root, settings, poll=args.poll)
    except KeyboardInterrupt:
        print("stopped watching", file=sys.stderr)
    return Exit.OK


def cmd_history(args) -> int:
    """One row's calibration history: a line per published report version,
    oldest first, newest last (``steps.history``). ``--row`` was
    checked by ``cli_args``; a row with no version is one sentence, exit 1."""
    from boardgen_pipeline.cli_args import parse_row_key
    from boardgen_pipeline.steps import history

    root = Path(args.warehouse) if args.warehouse else default_warehouse()
    key = parse_row_key("".join(args.row.split()))
    path = history.of_row(root, key)
    if not path.versions:
        if not (root / history.DATASET).is_dir():
            raise UserError(f"no calibration history in {root}: run `boardgen calibrate` (or `make run`) first")
        from boardgen_pipeline.tables.board_gen import load_board_gen_dir

        table = load_board_gen_dir(_tables_dir(args))
        damaged = f" ({len(path.damaged)} damaged version file(s): `boardgen verify`)" if path.damaged else ""
        if key not in table.rows:
            raise UserError(f"--row: no row ({key[0]},{key[1]}) in {table.path}, and no history of it in {root}"
                            f"{damaged}")
        raise UserError(f"row ({key[0]},{key[1]}) has no published report version in {root}{damaged}: it was never "
                        f"calibrated, or every batch was rejected by assertion A' (`boardgen calibrate --rows "
                        f"{key[0]},{key[1]}`)")
    print(f"row ({key[0]},{key[1]}): {len(path.versions)} version(s) in {root}, oldest first")
    for line in history.lines(path):
        print(line)
    print(history.current_note(path))
    for file, problem in path.damaged:
        print(f"left out: {file}: {problem} (`boardgen verify` lists every damaged file)", file=sys.stderr)
    return 0


def cmd_bench(args) -> int:
    from boardgen_pipeline.board.bench import bench

    print(json.dumps(bench(args.width, args.height, args.density, args.target, args.cap,
                           args.attempts, args.boards, args.shave, figures=args.figures)))
    return 0


TABLES_HELP = "tables directory (default: $BOARDGEN_TABLES, else the checkout's tables/, else the package's own)"
WAREHOUSE_HELP = "warehouse directory (default: $BOARDGEN_WAREHOUSE, else the checkout's warehouse/, else ./warehouse)"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="boardgen", description="Minesweeper board generation and calibration.")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="generate one board")
    g.add_argument("--level", type=int, required=True, help="level_index >= 1 (required)")
    g.add_argument("--depth", type=int, required=True, help="node depth >= 0; the floor rule picks the row (required)")
    g.add_argument("--seed", type=int, required=True, help="board_gen scope under the master seed, >= 0 (required)")
    g.add_argument("--master-seed", type=int, default=0, help="master seed, >= 0 (default: 0)")
    g.add_argument("--tables", help=TABLES_HELP)
    g.add_argument("--json", action="store_true", help="one JSON object: layout, metrics, row (default: text)")
    g.add_argument("--variants", action="store_true", help="also draw the board's variant overlay (default: off)")
    g.set_defaults(func=cmd_generate)

    m = sub.add_parser("measure", help="measure a layout (R0, R∞, counts)")
    m.add_argument("file", help="layout file ('-' for stdin): * mine, . safe, f fog; rows by line or / (required)")
    m.add_argument("--rules", choices=("single_subset", "single"), default="single_subset",
                   help="solver rules (default: single_subset)")
    m.add_argument("--spawn-side", type=int, choices=(3, 5), default=3,
                   help="side of the mine-free spawn square (default: 3)")
    m.add_argument("--probabilities", action="store_true",
                   help="add each cell's exact mine probability at the position after R∞ (null: opened; "
                        "default: off)")
    m.set_defaults(func=cmd_measure)

    pl = sub.add_parser("play", help="play layouts with the perfect player (one JSON line a file)")
    pl.add_argument("files", nargs="+", help="layout files ('-' for stdin): * mine, . safe, f fog (required)")
    pl.add_argument("--spawn-side", type=int, choices=(3, 5), default=3,
                    help="side of the mine-free spawn square at the centre (default: 3)")
    pl.set_defaults(func=cmd_play)

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

    a = sub.add_parser("advise", help="what would make a row pass (density, cap, target)")
    a.add_argument("--row", help="row keys L,D (default: every row; searches run for failing or thin rows)")
    a.add_argument("--tables", help=TABLES_HELP)
    a.add_argument("--samples", type=int, default=256, help="calibration boards measured per row, 1..4096 (default: 256)")
    a.add_argument("--probes", type=int, default=128, help="boards per probe of a candidate value, 1..2048 (default: 128)")
    a.add_argument("--master-seed", type=int, default=0, help="master seed, >= 0 (default: 0)")
    a.add_argument("--apply", action="store_true",
                   help="write the fix of each failing row into the table (needs --row or --all; default: off)")
    a.add_argument("--all", action="store_true", help="with --apply: every failing row of the table (default: off)")
    a.add_argument("--dry-run", action="store_true", help="with --apply: print the diff, write nothing (default: off)")
    a.set_defaults(func=cmd_advise)

    n = sub.add_parser("nodemap", help="node maps")
    nsub = n.add_subparsers(dest="nodemap_command", required=True)
    nd = nsub.add_parser("draw", help="draw the three level maps of one adventure")
    nd.add_argument("--seed", type=int, required=True, help="master seed of the adventure, >= 0 (required)")
    nd.add_argument("--first-adventure", action="store_true",
                    help="the save has not finished an adventure yet: fixed templates, no draw (default: off)")
    nd.add_argument("--tables", help=TABLES_HELP)
    nd.set_defaults(func=cmd_nodemap_draw)

    q = sub.add_parser("sql", help="run one SQL query on the warehouse's DuckDB views (read only)",
                       description="Views: boards, board_metrics, variant_overlays, calibration_report, "
                                   "calibration_history, calibration_diff, "
                                   "node_map_draws, calibration_strata (docs/sql.md).")
    q.add_argument("query", help='one SQL statement, e.g. "select * from calibration_report" (required)')
    q.add_argument("--warehouse", help=WAREHOUSE_HELP)
    q.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="output format (default: table)")
    q.add_argument("--max-rows", type=int, default=100, help="rows shown in table format (default: 100)")
    q.set_defaults(func=cmd_sql)

    ch = sub.add_parser("chart", help="draw the report chart and the difficulty curves from the warehouse (PNG)")
    ch.add_argument("--warehouse", help=WAREHOUSE_HELP)
    ch.set_defaults(func=cmd_chart)

    cu = sub.add_parser("curve", help="the difficulty curve: one record per row from the warehouse (CSV, Parquet, "
                                      "JSON; PNG or HTML pictures per level)")
    cu.add_argument("--warehouse", help=WAREHOUSE_HELP)
    cu.add_argument("--format", choices=("csv", "parquet", "json", "png", "html"), default="csv",
                    help="csv (on stdout), parquet, json, png (one file per level) or html (one self-contained page) "
                         "(default: csv)")
    cu.add_argument("--output", help="the file to write (png: the folder; default: stdout, for png the warehouse's "
                                     "curve/ folder; parquet and html need it unless stdout is a file or pipe)")
    cu.set_defaults(func=cmd_curve)

    from boardgen_pipeline.cli_args import add_review_options

    df = sub.add_parser("diff", help="the calibration of a table change: every row of BASE against HEAD, paired",
                        description="BASE and HEAD: a git revision (origin/main, HEAD~1), a tables folder, or "
                                    "@warehouse (the warehouse's current calibration). docs/review.md.")
    df.add_argument("base", help="the state compared from: git revision, tables folder or @warehouse (required)")
    df.add_argument("head", nargs="?", help="the state compared to (default: the working tables, --tables)")
    df.add_argument("--tables", help=TABLES_HELP + "; the repository a revision is read from")
    add_review_options(df)
    df.add_argument("--alpha", type=float, default=0.05,
                    help="false discovery rate of the flags, and 1 - the intervals' level, in (0, 0.5] (default: 0.05)")
    df.add_argument("--until-decided", action="store_true",
                    help="extend a row whose figure is undecided on its further scopes, doubling up to 4096 boards "
                         "(default: off)")
    df.add_argument("--fail-on", choices=("verdict", "flagged"), default="verdict",
                    help="exit 3 when an F4 verdict gets worse (verdict), or also when a change is flagged (flagged) "
                         "(default: verdict)")
    df.add_argument("--format", choices=("terminal", "markdown", "html", "json"), default="terminal",
                    help="what stdout gets (default: terminal, 80 columns)")
    df.add_argument("--output", action="append", default=[],
                    help="also write the diff to this file, its format from its suffix: .txt, .md, .html, .json "
                         "(repeatable; default: none)")
    df.add_argument("--full-report", help="where the full report is, named by a markdown comment cut at GitHub's "
                                          "limit (a URL; default: the command that makes it)")
    df.add_argument("--save", action="store_true",
                    help="write the diff into the warehouse as dataset and view calibration_diff (default: off)")
    df.set_defaults(func=cmd_diff)

    wa = sub.add_parser("watch", help="the designer's preview: each save of the tables, the changed rows' verdicts "
                                      "and their diff against the stored calibration (nothing published)")
    wa.add_argument("--tables", help=TABLES_HELP)
    add_review_options(wa)
    wa.add_argument("--poll", type=float, default=0.1, help="seconds between looks at the tables, (0, 10] "
                                                            "(default: 0.1)")
    wa.set_defaults(func=cmd_watch)

    hi = sub.add_parser("history", help="one row's calibration history: a line per report version, newest last")
    hi.add_argument("--row", required=True, help="the row key L,D, e.g. 2,4 (required)")
    hi.add_argument("--warehouse", help=WAREHOUSE_HELP)
    hi.add_argument("--tables", help=TABLES_HELP + "; read only to tell an unknown row from an uncalibrated one")
    hi.set_defaults(func=cmd_history)

    b = sub.add_parser("bench", help="attempt-loop throughput on one parameter row (board_gen field domains), "
                                     "the work of ../shared/bench/baseline.c")
    b.add_argument("--width", type=int, required=True, help="board_width, 8..64 (required)")
    b.add_argument("--height", type=int, required=True, help="board_height, 8..64 (required)")
    b.add_argument("--density", type=float, required=True, help="mine_density, (0, 0.5] (required)")
    b.add_argument("--target", type=float, required=True, help="inferability_target, [0.85, 1] (required)")
    b.add_argument("--cap", type=int, required=True, help="r0_max_cap, [9, floor(W*H/2)] (required)")
    b.add_argument("--attempts", type=int, required=True, help="max_gen_attempts, 1..32 (required)")
    b.add_argument("--boards", type=int, required=True, help="boards timed, >= 1 (required)")
    b.add_argument("--shave", type=int, default=1, help="shave_ring_radius, 0..2 (default: 1)")
    b.add_argument("--figures", action="store_true",
                   help="also time the calibration's whole entry point (difficulty figures and the perfect player) "
                        "on the same boards, reported beside the attempt loop (figures_seconds, figures_boards_per_s); "
                        "default: off")
    b.set_defaults(func=cmd_bench)

    ni = sub.add_parser("nightly", help="the nightly calibration through Dagster into the warehouse (what make run runs)")
    from boardgen_pipeline.cli_args import add_nightly_options

    add_nightly_options(ni)
    ni.set_defaults(func=_pipeline_command("nightly"))

    ui = sub.add_parser("ui", help="the Dagster UI and daemon on the same instance (what make ui runs); Ctrl-C stops both")
    ui.add_argument("-p", "--port", type=int, default=3000, help="the UI's port, 1..65535 (default: 3000)")
    ui.add_argument("--host", default="127.0.0.1", help="the address the UI listens on (default: 127.0.0.1)")
    ui.add_argument("--dagster-home", help="the Dagster home (default: $DAGSTER_HOME, else the checkout's "
                                           ".dagster_home, else ./.dagster_home)")
    ui.set_defaults(func=_pipeline_command("ui"))

    pr = sub.add_parser("prune", help="forget old calibration runs of a Dagster home (the warehouse keeps every figure)")
    pr.add_argument("--dagster-home", help="the Dagster home (default: $DAGSTER_HOME, else the checkout's "
                                           ".dagster_home, else ./.dagster_home)")
    pr.add_argument("--keep-runs", type=int, help="keep the newest K calibration runs, K >= 1 (default: "
                                                  "$BOARDGEN_KEEP_RUNS, else the days of --keep-days)")
    pr.add_argument("--keep-days", type=int, help="keep the runs of the last N days, 1..36500 (default: "
                                                  "$BOARDGEN_KEEP_DAYS, else 30)")
    pr.set_defaults(func=_pipeline_command("prune"))
    return p


PLUGINS = "boardgen.commands"  # the commands of the Dagster code location (pyproject.toml entry points)


def _pipeline_command(name: str):
    """A command the Dagster code location provides (the library imports no
    Dagster): found through the package's entry points, loaded on use."""

    def run(args) -> int:
        from importlib.metadata import entry_points

        from boardgen_pipeline.errors import PipelineMissing

        found = [e for e in entry_points(group=PLUGINS) if e.name == name]
        if not found:
            raise PipelineMissing(name, "boardgen_dagster")
        try:
            command = found[0].load()
        except ModuleNotFoundError as exc:
            raise PipelineMissing(name, exc.name or str(exc)) from None
        return command(args)

    return run


def main(argv: list[str] | None = None) -> int:
    from boardgen_pipeline.cli_args import ArgumentError, check_command
    from boardgen_pipeline.errors import exit_code

    args = build_parser().parse_args(argv)
    command = args.command + (f" {args.nodemap_command}" if args.command == "nodemap" else "")
    bad = check_command(command, vars(args))
    if bad:  # before any work: nothing read, nothing written
        print(ArgumentError(bad).report(), file=sys.stderr)
        return Exit.USAGE
    try:
        return int(args.func(args))
    except (TableError, UserError) as exc:
        print(exc.report() if isinstance(exc, TableError) else f"error: {exc}", file=sys.stderr)
        return exit_code(exc) or Exit.INPUT
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: not an error of ours
        sys.stderr.close()
        return Exit.OK
    except (Exception, KeyboardInterrupt) as exc:
        code = exit_code(exc)
        if code is None:
            raise  # a bug: its traceback is what a maintainer needs
        print("interrupted" if code == Exit.INTERRUPTED else f"error: {exc}", file=sys.stderr)
        return code


QUICK_EXIT = {"nightly"}  # the commands after which the process ends without the interpreter's teardown


def console() -> None:
    """The ``boardgen`` executable: ``main()``, and its exit code. After
    ``nightly`` the process ends without the interpreter's teardown: the
    modules of Dagster and numba take most of a second to tear down, while
    everything the night made is written, renamed and closed by then (a
    run's files by its lane, the instance by the block that opened it)."""
    argv = sys.argv[1:]
    code = main(argv)  # arguments that do not parse never return here (argparse exits 2)
    if build_parser().parse_known_args(argv)[0].command not in QUICK_EXIT:
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    console()
