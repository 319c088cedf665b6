"""The exit codes of every ``boardgen`` command, in one table (SPEC 8
"Interfaces"; docs/operations.md "Exit codes").

A script or a scheduler that runs a command reads its exit code to decide
what to do next, so a code names a *cause* and means the same thing in every
command: ``make run`` (``boardgen nightly``), ``calibrate``, ``diff``,
``verify``, ``prune``. Two rules hold the table together:

* ``USAGE`` (2) is said only before any work began: nothing was read beyond
  the command line and the settings, nothing was written. A failure after
  work began is ``RUN_FAILED``, ``STORAGE`` or ``UNAVAILABLE``, whatever its
  cause, so a caller that reads 2 knows that fixing the command is enough.
* A check that ran and failed (``CHECK_FAILED``) is told apart from a run that
  could not finish (``RUN_FAILED``): the first is a verdict on the tables, the
  second a fault to rerun.

``README.md`` prints :data:`TABLE`; a test keeps the two equal.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    INPUT = 1
    USAGE = 2
    CHECK_FAILED = 3
    RUN_FAILED = 4
    STORAGE = 5
    UNAVAILABLE = 6
    INTERRUPTED = 130


TABLE: dict[Exit, str] = {
    Exit.OK: "done; every check of error severity holds (warnings allowed)",
    Exit.INPUT: "bad input, nothing written: a table that does not validate (every violation listed), a layout that "
                "is not a board, an unknown row or level, a file that cannot be read",
    Exit.USAGE: "a bad command line or setting (an option or environment variable outside its domain), said before "
                "any work began",
    Exit.CHECK_FAILED: "the work ran and a check of error severity failed: an F4 assertion, an overlay or node-map "
                       "check, boards that changed without a change of their row; `diff`: an F4 verdict got worse (or "
                       "`--fail-on flagged` and a change is flagged); `advise --apply`: a failing row with no fix; "
                       "`tune`: a target no value of its knob reaches (keeping F4)",
    Exit.RUN_FAILED: "the work began and part of it failed for another reason: a row raised, a run of the night "
                     "failed or lost its process, a cluster lost mid-run; the warehouse holds only whole rows: rerun",
    Exit.STORAGE: "a storage fault: the warehouse or the Dagster instance cannot be read or written (disk full, "
                  "read-only, damaged file), or the instance's schema is behind the installed Dagster "
                  "(`dagster instance migrate`)",
    Exit.UNAVAILABLE: "something the command needs is not there: a PostgreSQL server or Dask scheduler that does not "
                      "answer, the pipeline's packages not installed (`pip install 'boardgen[pipeline]'`)",
    Exit.INTERRUPTED: "interrupted (Ctrl-C); the warehouse holds only whole rows",
}


def markdown_table() -> str:
    """:data:`TABLE` as the Markdown table the README prints."""
    lines = ["| code | meaning |", "|---|---|"]
    lines += [f"| {int(code)} | {text} |" for code, text in TABLE.items()]
    return "\n".join(lines)
