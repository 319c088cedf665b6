"""``boardgen sql``, ``chart``, ``curve`` and ``history``: reading the warehouse (SPEC 8's DuckDB
views; seed 001 P2 "C3 全行审计" for the difficulty curve)."""

from __future__ import annotations

import sys
from pathlib import Path

from boardgen_pipeline.cli.common import UserError, tables_dir, warehouse_dir
from boardgen_pipeline.cli_args import TABLES_HELP, WAREHOUSE_HELP
from boardgen_pipeline.words import count


def cmd_sql(args) -> int:
    """One SQL statement against the warehouse's DuckDB views, read only (so
    the README's query works with what the project installs)."""
    import duckdb

    from boardgen_pipeline.warehouse import datasets, views

    root = warehouse_dir(args)
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

    root = warehouse_dir(args)
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

    root = warehouse_dir(args)
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



def cmd_history(args) -> int:
    """One row's calibration history: a line per published report version,
    oldest first, newest last (``steps.history``). ``--row`` was
    checked by ``cli_args``; a row with no version is one sentence, exit 1."""
    from boardgen_pipeline.cli_args import parse_row_key
    from boardgen_pipeline.steps import history

    root = warehouse_dir(args)
    key = parse_row_key("".join(args.row.split()))
    path = history.of_row(root, key)
    if not path.versions:
        if not (root / history.DATASET).is_dir():
            raise UserError(f"no calibration history in {root}: run `boardgen calibrate` (or `make run`) first")
        from boardgen_pipeline.tables.board_gen import load_board_gen_dir

        table = load_board_gen_dir(tables_dir(args))
        damaged = f" ({count(len(path.damaged), 'damaged version file')}: `boardgen verify`)" if path.damaged else ""
        if key not in table.rows:
            raise UserError(f"--row: no row ({key[0]},{key[1]}) in {table.path}, and no history of it in {root}"
                            f"{damaged}")
        raise UserError(f"row ({key[0]},{key[1]}) has no published report version in {root}{damaged}: it was never "
                        f"calibrated, or every batch was rejected by assertion A' (`boardgen calibrate --rows "
                        f"{key[0]},{key[1]}`)")
    print(f"row ({key[0]},{key[1]}): {count(len(path.versions), 'version')} in {root}, oldest first")
    for line in history.lines(path):
        print(line)
    print(history.current_note(path))
    for file, problem in path.damaged:
        print(f"left out: {file}: {problem} (`boardgen verify` lists every damaged file)", file=sys.stderr)
    return 0



def register(sub) -> None:
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

    hi = sub.add_parser("history", help="one row's calibration history: a line per report version, newest last")
    hi.add_argument("--row", required=True, help="the row key L,D, e.g. 2,4 (required)")
    hi.add_argument("--warehouse", help=WAREHOUSE_HELP)
    hi.add_argument("--tables", help=TABLES_HELP + "; read only to tell an unknown row from an uncalibrated one")
    hi.set_defaults(func=cmd_history)
