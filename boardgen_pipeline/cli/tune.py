"""``boardgen tune``: the target curve (``curve_targets.toml``) turned into
parameter rows, each proposal proven on its calibration batch, and
``--apply``, the values written into the table with the ``boardgen diff`` of
the change (SPEC 12; ``tuning``; docs/designer.md "Aim the curve")."""

from __future__ import annotations

import sys
from pathlib import Path

from boardgen_pipeline.cli.common import UserError, parse_rows, row_pool, tables_dir
from boardgen_pipeline.cli_args import TABLES_HELP, WAREHOUSE_HELP
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.tables.board_gen import key_text
from boardgen_pipeline.words import count, noun

FORMATS = ("terminal", "markdown", "json")


def _targets(args, catalog):
    """The targets the command aims at: ``--targets``, else the tables folder's file."""
    from boardgen_pipeline.catalog import TARGETS_TABLE
    from boardgen_pipeline.tables.curve_targets import load_curve_targets

    if args.targets is None:
        if catalog.targets is None:
            raise UserError(f"no target curve: {Path(catalog.tables_dir) / TARGETS_TABLE} does not exist (give "
                            "--targets FILE, or write one: docs/designer.md \"Aim the curve\")")
        return catalog.targets
    return load_curve_targets(args.targets, catalog.board_gen)


def _keys(args, catalog) -> list[tuple[int, int]]:
    keys = parse_rows(args.rows, catalog.board_gen) if args.rows else catalog.targets.keys()
    untargeted = [k for k in keys if k not in catalog.targets.rows]
    if untargeted:
        names = ", ".join(key_text(k) for k in untargeted)
        raise UserError(f"--rows: {names} {noun(len(untargeted), 'has', 'have')} no target in "
                        f"{catalog.targets.path}")
    return keys


def cmd_tune(args) -> int:
    """Every targeted row (or ``--rows``) searched and proven, the proposals
    printed; ``--apply`` writes the reached ones. Refusals (a table or
    targets file that does not validate, an untargeted row, a read-only
    table) come before any board is drawn and write nothing. Exit 3 when a
    target is unreachable, 4 when a row failed to run."""
    from dataclasses import replace

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.paths import tables_are_the_package_default
    from boardgen_pipeline.tables import edit
    from boardgen_pipeline.tuning import render, run

    tables = tables_dir(args)
    if args.apply and tables_are_the_package_default(tables):
        raise UserError("--apply edits a tables folder you name: the installed package's default tables are read "
                        "only (copy them, then give --tables DIR)")
    catalog = load_catalog(tables)
    catalog = replace(catalog, targets=_targets(args, catalog))
    keys = _keys(args, catalog)
    path = Path(catalog.board_gen.path)
    try:
        if args.apply:
            edit.check_writable(path)
    except edit.EditRefused as exc:
        raise UserError(str(exc)) from None
    work = run.tasks(catalog, keys, args.samples, args.master_seed, args.max_boards)
    console = Console(stderr=True)
    with row_pool(args, len(work)) as pool, Progress(
            TextColumn("tuning"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
            console=console, transient=True) as progress:
        bar = progress.add_task("", total=len(work))

        def advance(proposal, task):
            progress.update(bar, advance=1, description=f"row {task.key[0]}-{task.key[1]}: "
                                                        f"{proposal.state if proposal else 'failed'}")

        tuning = run.tune(catalog, work, pool, advance)
        notes = list(pool.notes)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    extra: dict = {}
    after = ""
    if args.apply:
        after, extra = _apply(args, catalog, tuning, path)
    out = {"terminal": lambda: render.terminal(tuning), "markdown": lambda: render.markdown(tuning),
           "json": lambda: render.json_text(tuning, extra)}[args.format]()
    sys.stdout.write(out)
    if after and args.format != "json":
        sys.stdout.write(after)
    if tuning.errors:
        return Exit.RUN_FAILED
    return Exit.CHECK_FAILED if tuning.of("unreachable") else Exit.OK


def _apply(args, catalog, tuning, path: Path) -> tuple[str, dict]:
    """The reached rows' values written into the table (validated, atomic,
    comments kept: ``tables.edit``, as ``advise --apply`` writes), and the
    ``boardgen diff`` of the change: the tables with it against the tables
    without it (``review.proposal``, computed on a copy first)."""
    from boardgen_pipeline.cli.common import warehouse_dir
    from boardgen_pipeline.review import proposal, render
    from boardgen_pipeline.tables import edit

    changes = tuning.changes
    if not changes:
        return "--apply: no reached row changes a value; nothing written\n", {"written": False}
    try:
        result = proposal.calibration_diff(catalog.tables_dir, changes, catalog.board_gen, args.samples,
                                           args.master_seed, warehouse_dir(args))
        done = edit.apply_changes(path, changes, based_on=catalog.board_gen)
    except edit.EditRefused as exc:
        raise UserError(str(exc)) from None
    if args.format == "json":
        import json

        return "", {"written": True, "table_diff": done.diff, "calibration_diff": json.loads(render.json_text(result))}
    text = (render.markdown if args.format == "markdown" else render.terminal)(result)
    wrote = f"wrote {path} ({count(len(changes), 'value')}, validated); the sensor regenerates the changed rows\n"
    return f"\n{done.diff}{wrote}\nboardgen diff of the change:\n{text}", {"written": True}


def register(sub) -> None:
    t = sub.add_parser("tune", help="turn the target curve (curve_targets.toml) into parameter rows, each proposal "
                                    "proven on its calibration batch")
    t.add_argument("--tables", help=TABLES_HELP)
    t.add_argument("--targets", help="the target curve (default: curve_targets.toml in the tables folder)")
    t.add_argument("--rows", help="row keys L,D separated by spaces, each aimed at by a target (default: every "
                                  "targeted row)")
    t.add_argument("--apply", action="store_true",
                   help="write the reached rows' values into the table and print the boardgen diff of the change "
                        "(default: off)")
    t.add_argument("--format", choices=FORMATS, default="terminal", help="what stdout gets (default: terminal)")
    t.add_argument("--samples", type=int, default=256,
                   help="boards of the calibration batch a proposal is proven on, 1..2048 (default: 256)")
    t.add_argument("--max-boards", type=int, default=1024,
                   help="probe boards one candidate value is measured on at most, 64..2048 (default: 1024)")
    t.add_argument("--master-seed", type=int, default=0, help="master seed, >= 0 (default: 0)")
    t.add_argument("--warehouse", help=WAREHOUSE_HELP + "; with --apply, the diff reads its stored boards")
    t.add_argument("--workers", type=int, default=None,
                   help="local worker processes, >= 1 (default: $BOARDGEN_WORKERS, else every core; fewer on "
                        "small tables)")
    t.add_argument("--dask", default=None, help="Dask scheduler address tcp://host:port (default: $BOARDGEN_DASK, "
                                                "else local workers)")
    t.set_defaults(func=cmd_tune)
