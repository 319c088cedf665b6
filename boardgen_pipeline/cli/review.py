"""``boardgen diff`` and ``watch``: a table change's calibration, paired on the same scopes
(docs/review.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from boardgen_pipeline.cli.common import tables_dir, warehouse_dir, writable
from boardgen_pipeline.cli_args import TABLES_HELP
from boardgen_pipeline.exits import Exit


def cmd_diff(args) -> int:
    """The calibration of a table change (``review.diff``): BASE and HEAD
    resolved (a bad one is one sentence, exit 1, nothing written), the
    modified rows compared paired, the outputs written, exit 3 when an F4
    verdict gets worse (or, with ``--fail-on flagged``, when a change is
    flagged)."""
    from rich.console import Console
    from rich.progress import Progress

    from boardgen_pipeline.cli_args import parse_margins
    from boardgen_pipeline.review import diff, pairing, render, saved, sources

    tables = tables_dir(args)
    root = warehouse_dir(args)
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
        store = pairing.StoredBoards(stored)
        result = diff.compare(base, head, settings, stored, sources.code_differs(base, head, tables),
                              on_row=lambda _row: progress.advance(task), store=store)
    reports = _stored_reports(stored) if "html" in {args.format, *map(_output_format, args.output)} else {}
    outputs = {"terminal": lambda: render.terminal(result), "json": lambda: render.json_text(result),
               "markdown": lambda: render.markdown(result, args.full_report or ""),
               "html": lambda: render.html(result, reports)}
    for name in args.output:
        from boardgen_pipeline import files

        files.atomic_write(Path(name), outputs[_output_format(name)]())
    sys.stdout.write(outputs[args.format]())
    if args.save:
        with writable(root):
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

    root = warehouse_dir(args)
    settings = diff.Settings(args.samples, args.master_seed, margins=parse_margins(args.margin),
                             resamples=args.resamples)
    try:
        watch.run(tables_dir(args), root, settings, poll=args.poll)
    except KeyboardInterrupt:
        print("stopped watching", file=sys.stderr)
    return Exit.OK



def register(sub) -> None:
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
