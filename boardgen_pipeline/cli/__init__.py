"""The ``boardgen`` command line (SPEC 8 "Interfaces"): one module a family of commands, each with
its parsers (``register``) beside the functions they call.

Every user error (bad table, bad layout, unknown level) is printed as a
message and exit code 1, never a traceback. ``--json`` field names are a
contract other tools read: they are the metrics names of SPEC 2.6. Every
argument is checked against its domain (``cli_args``) before any work.

Exit codes: one table for every command, ``boardgen_pipeline.exits`` (the
README prints it).
"""

from __future__ import annotations

import argparse
import os
import sys

from boardgen_pipeline.cli import advise, boards, calibrate, conformance, pipeline, review, warehouse
from boardgen_pipeline.cli.common import UserError
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.exits import Exit

__all__ = ["UserError", "build_parser", "console", "main"]

# the order of `boardgen --help`: one board, the tables and the calibration, reading and reviewing it, Dagster,
# what the game's port is held to and its tables
COMMANDS = (boards, calibrate, advise, warehouse, review, pipeline, conformance)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="boardgen", description="Minesweeper board generation and calibration.")
    sub = p.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    from boardgen_pipeline.cli_args import ArgumentError, check_command
    from boardgen_pipeline.errors import exit_code

    args = build_parser().parse_args(argv)
    family = getattr(args, f"{args.command}_command", None)  # `nodemap draw`, `conformance check`: a family's command
    command = args.command + (f" {family}" if family else "")
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

