"""``boardgen advise``: what would make a failing row pass (seed 001 F4 A; the advisor and its fix in
``calibration``), and ``--apply``, the fix written into the table. A failing row edited since its last
calibration is told what the edit changed and the value to restore (the warehouse's
``calibration_history``: ``steps.history.edit_hint``), before the advisor's search."""

from __future__ import annotations

import sys
from pathlib import Path

from boardgen_pipeline.cli.common import UserError, parse_rows, tables_dir, warehouse_dir
from boardgen_pipeline.cli_args import TABLES_HELP, WAREHOUSE_HELP
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.words import count


def cmd_advise(args) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from boardgen_pipeline.calibration import advisor, batch
    from boardgen_pipeline.tables.board_gen import load_board_gen_dir

    if args.apply:
        return _advise_apply(args)
    table = load_board_gen_dir(tables_dir(args))
    keys = parse_rows(args.row, table, "--row")
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
        hint = _edit_hint(args, table, a.key) if a.status == "fails" else ""
        if hint:
            console.print(f"row ({a.key[0]},{a.key[1]}) {hint}", highlight=False, soft_wrap=True)
        console.print(a.text(), highlight=False)
    for line in advisor.difficulty_findings(reports):
        console.print(line, highlight=False)
    return 0


def _edit_hint(args, table, key) -> str:
    """What an edit changed in row ``key`` since its last calibration in the
    warehouse, and what to restore (``history.edit_hint``); empty without a
    warehouse or a version to compare with."""
    from boardgen_pipeline.steps import history

    root = warehouse_dir(args)
    if not root.is_dir():
        return ""
    return history.edit_hints(root, table, [key]).get(key, "")


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

    if not args.dry_run and tables_are_the_package_default(tables_dir(args)):
        raise UserError("--apply edits a tables folder you name: the installed package's default tables are read "
                        "only (copy them, then give --tables DIR, or --dry-run to see the change)")
    try:
        table = load_board_gen_dir(tables_dir(args))
    except TableError as exc:
        more = f" (and {len(exc.violations) - 1} more: `boardgen validate` lists them)" if len(exc.violations) > 1 else ""
        raise UserError(f"the table does not validate, so --apply writes nothing: {exc.violations[0]}{more}") from None
    keys = parse_rows(None if args.all else args.row, table, "--row")
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
            hint = "" if f.passes else _edit_hint(args, table, f.key)
            if hint:
                print(f"row ({f.key[0]},{f.key[1]}) {hint}")
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
                  f"wrote {path} ({count(len(changes), 'change')}, validated); the sensor regenerates the changed rows")
    except edit.EditRefused as exc:
        raise UserError(str(exc)) from None
    return Exit.CHECK_FAILED if any(not f.passes and f.change is None for f in fixes) else 0



def register(sub) -> None:
    a = sub.add_parser("advise", help="what would make a row pass (density, cap, target)")
    a.add_argument("--row", help="row keys L,D (default: every row; searches run for failing or thin rows)")
    a.add_argument("--tables", help=TABLES_HELP)
    a.add_argument("--warehouse", help=WAREHOUSE_HELP + "; its calibration history says what an edit changed")
    a.add_argument("--samples", type=int, default=256, help="calibration boards measured per row, 1..4096 (default: 256)")
    a.add_argument("--probes", type=int, default=128, help="boards per probe of a candidate value, 1..2048 (default: 128)")
    a.add_argument("--master-seed", type=int, default=0, help="master seed, >= 0 (default: 0)")
    a.add_argument("--apply", action="store_true",
                   help="write the fix of each failing row into the table (needs --row or --all; default: off)")
    a.add_argument("--all", action="store_true", help="with --apply: every failing row of the table (default: off)")
    a.add_argument("--dry-run", action="store_true", help="with --apply: print the diff, write nothing (default: off)")
    a.set_defaults(func=cmd_advise)
