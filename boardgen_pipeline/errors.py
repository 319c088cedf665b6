"""Errors as values (SPEC 2.7 "all reported together"; STYLE: errors carry a
rule name, a location and the offending value).

Load-time checks of every table return lists of :class:`Violation`; the
caller raises one :class:`TableError` holding all of them, so a designer sees
every problem of an edit at once, and the CLI prints them without a
traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

from boardgen_pipeline.exits import Exit


@dataclass(frozen=True)
class Violation:
    """One broken rule: where (file, row key, field), what (value), which rule."""

    file: str
    row: str
    field: str
    value: object
    rule: str
    message: str
    severity: str = "fatal"  # "fatal" or "warning" (assertion E)

    def __str__(self) -> str:
        # TOML has no null: None means the field has no value to show (missing, or unreadable file)
        value = "" if self.value is None else f" = {self.value!r}"
        return f"{self.file}: row {self.row}: field {self.field}{value}: [{self.rule}] {self.message}"

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "row": self.row,
            "field": self.field,
            "value": self.value if isinstance(self.value, (int, float, str, bool, type(None))) else repr(self.value),
            "rule": self.rule,
            "message": self.message,
            "severity": self.severity,
        }


def not_utf8(exc: UnicodeDecodeError) -> str:
    """The cause a person reads when a file they gave is not UTF-8 text
    (every file a command reads fails in one sentence, never a
    ``UnicodeDecodeError`` traceback): the first bad byte and its offset."""
    return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}: {exc.reason}); save it as UTF-8"


class TableError(Exception):
    """A table failed its load-time checks; ``violations`` lists them all."""

    def __init__(self, violations: list[Violation]):
        self.violations = list(violations)
        super().__init__(self.report())

    def report(self) -> str:
        n = len(self.violations)
        head = f"{n} table violation{'s' if n != 1 else ''}:"
        return "\n".join([head, *(f"  - {v}" for v in self.violations)])


class WarehouseError(Exception):
    """A storage fault (a clear error with its own exit code): the
    warehouse or the Dagster instance cannot be written or read. ``path`` is
    the file or folder concerned, ``cause`` a few words a person can act on
    ("disk full", "read-only file system"); ``str()`` is one sentence, which
    the CLI and the nightly print without a traceback."""

    def __init__(self, path, cause: str):
        self.path = str(path)
        self.cause = cause
        super().__init__(f"storage fault at {self.path}: {cause}.")


class ServiceUnavailable(Exception):
    """A service the command needs does not answer (a PostgreSQL server, a
    Dask scheduler): exit ``UNAVAILABLE``, whichever error class says it."""


class ClusterError(ServiceUnavailable):
    """A Dask cluster that cannot take rows (caught before any row runs,
    nothing written): the address does not parse, nobody answers there, or the scheduler
    has no worker. ``str()`` is one sentence naming the address, printed
    without a traceback before any row runs."""

    def __init__(self, address: str, cause: str, source: str = "BOARDGEN_DASK"):
        self.address = address
        self.cause = cause
        super().__init__(f"{source}={address}: {cause}")


class ClusterLost(ClusterError):
    """The Dask cluster went away after rows began: the work is incomplete
    (exit ``RUN_FAILED``: the warehouse holds only whole rows, a rerun makes
    the others), not a bad address."""


class InstanceUnavailable(WarehouseError, ServiceUnavailable):
    """The Dagster instance's PostgreSQL server does not answer or refuses
    the login: one sentence naming the setting and the server's words."""

    def __init__(self, setting, cause: str):
        super().__init__(setting, cause)
        Exception.__init__(self, f"the Dagster instance is unavailable: {setting}: {cause}.")


class PipelineMissing(ServiceUnavailable):
    """A command of the Dagster code location in an installation without the
    ``pipeline`` extra."""

    def __init__(self, command: str, missing: str):
        super().__init__(f"`boardgen {command}` runs the Dagster pipeline, whose packages are not installed (no module "
                         f"{missing!r}): pip install 'boardgen[pipeline]'")


class SourceError(Exception):
    """A state of the tables that ``boardgen diff`` cannot read (docs/review.md
    "BASE and HEAD"): an unknown git revision, a revision without tables, a
    folder without ``board_gen.toml``, a warehouse without a calibration.
    ``str()`` is one sentence naming it; exit ``INPUT``, nothing written."""


def exit_code(exc: BaseException) -> Exit | None:
    """The exit code (``exits.TABLE``) an error a person can act on stands
    for; None for a bug (which keeps its traceback)."""
    if isinstance(exc, ClusterLost):
        return Exit.RUN_FAILED
    if isinstance(exc, ServiceUnavailable):
        return Exit.UNAVAILABLE
    if isinstance(exc, WarehouseError):
        return Exit.STORAGE
    if isinstance(exc, TableError):
        return Exit.USAGE if getattr(exc, "usage", False) else Exit.INPUT
    if isinstance(exc, SourceError):
        return Exit.INPUT
    if isinstance(exc, KeyboardInterrupt):
        return Exit.INTERRUPTED
    return None
