"""Writing changes into rows of the ``board_gen`` table file
(``boardgen advise --row L,D --apply``: the fix written into the table
keeping every comment, key order and formatting; nothing written unless the
result validates, nor into a read-only file; two ``--apply`` at once never
leave a half-written table).

The file is edited through tomlkit, which keeps the text around the values it
is told to change, and only lines holding a changed value may differ: any
other difference is refused, so no comment can be lost. The edited text is
validated by the table's own loader before the table is touched; the table is
then replaced in one step (``files.atomic_write``: a temporary file in the
same folder, validated there, fsync, rename, fsync of the folder), under a
lock on the folder itself (``files.lock``: no lock file is left among the
tables), from the file as it is then, so one run's write never overwrites
another run's rows with stale text.
"""

from __future__ import annotations

import codecs
import difflib
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import tomlkit

from boardgen_pipeline import files
from boardgen_pipeline.errors import TableError, not_utf8
from boardgen_pipeline.tables.board_gen import KEY_FIELDS, BoardGenTable, load_board_gen


class EditRefused(Exception):
    """Nothing was written; ``str()`` is one sentence saying why."""


@dataclass(frozen=True)
class RowChange:
    """One field of one row, from ``old`` to ``new``."""

    key: tuple[int, int]
    field: str
    old: object
    new: object

    def text(self) -> str:
        return f"row ({self.key[0]},{self.key[1]}): {self.field} {self.old} -> {self.new}"


@dataclass(frozen=True)
class Edit:
    """The outcome of :func:`apply_changes`: the unified diff, the validated
    table it gives, and whether the file was replaced."""

    path: Path
    diff: str
    table: BoardGenTable
    written: bool


def read_only_reason(path: Path) -> str | None:
    """Why ``path`` (the table file) cannot be replaced, or None. A file or
    folder without write permission counts even for root, who could write it:
    a designer who made the table read-only meant it."""
    for what, target in (("file", path), ("folder", path.parent)):
        try:
            mode = target.stat().st_mode
        except OSError as exc:
            return f"the {what} cannot be read ({exc.strerror})"
        if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
            return f"the {what} {target} is read-only"
    return None


def check_writable(path: Path | str) -> None:
    """Refuse, before any work, a table that ``--apply`` could not replace."""
    path = Path(path)
    reason = read_only_reason(path)
    if reason:
        raise EditRefused(f"{path}: {reason}; nothing written")


def edited_text(text: str, changes: Sequence[RowChange], path: str = "board_gen.toml") -> str:
    """``text`` with every change made by tomlkit; the row must exist and hold
    the field on a line of its own (a key field is never changed)."""
    doc = tomlkit.parse(text)
    rows = doc.get("rows", [])
    for change in changes:
        if change.field in KEY_FIELDS:
            raise EditRefused(f"{path}: row ({change.key[0]},{change.key[1]}): {change.field} names the row and is "
                              "never changed; nothing written")
        entry = next((r for r in rows if tuple(r.get(f) for f in KEY_FIELDS) == change.key), None)
        if entry is None:
            raise EditRefused(f"{path}: no row ({change.key[0]},{change.key[1]}); nothing written")
        if change.field not in entry:
            raise EditRefused(f"{path}: row ({change.key[0]},{change.key[1]}) has no {change.field} line to change; "
                              "nothing written")
        entry[change.field] = change.new  # tomlkit keeps the line's indent and comment
    return tomlkit.dumps(doc)


def _only_changed_lines(old: str, new: str, changes: Sequence[RowChange], path: Path) -> None:
    """The promise that every comment and all formatting are kept: the texts
    differ only on lines holding a changed value."""
    a, b = old.splitlines(), new.splitlines()
    differing = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    fields = {c.field for c in changes}
    if len(a) != len(b) or len(differing) > len(changes) or \
            any(b[i].split("=", 1)[0].strip() not in fields for i in differing):
        raise EditRefused(f"{path}: the edit would change more than the values' lines (comments or formatting); "
                          "nothing written")


def _new_text(path: Path, text: str, changes: Sequence[RowChange]) -> str:
    new = edited_text(text, changes, str(path))
    _only_changed_lines(text, new, changes, path)
    return new


def unified_diff(path: Path, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=str(path), tofile=str(path)))


def _read(path: Path) -> tuple[str, bool]:
    """The table's text (line endings as they are) and whether it starts with
    a UTF-8 byte-order mark, kept on writing."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise EditRefused(f"{path}: cannot read: {exc.strerror}; nothing written") from None
    try:
        return raw.decode("utf-8-sig"), raw.startswith(codecs.BOM_UTF8)
    except UnicodeDecodeError as exc:
        raise EditRefused(f"{path}: {not_utf8(exc)}; nothing written") from None


def _validated(temp: Path, path: Path) -> BoardGenTable:
    """The table's own loader on the edited text (in ``temp``), its
    violations named after the table file."""
    try:
        return load_board_gen(temp)
    except TableError as exc:
        first = replace(exc.violations[0], file=str(path))
        more = f" (and {len(exc.violations) - 1} more)" if len(exc.violations) > 1 else ""
        raise EditRefused(f"the edited table would not validate: {first}{more}; nothing written") from None


def _unchanged_rows(path: Path, based_on: BoardGenTable, changes: Sequence[RowChange]) -> None:
    """The rows to change are still those the changes were computed from."""
    try:
        now = load_board_gen(path)
    except TableError as exc:
        raise EditRefused(f"the table no longer validates: {exc.violations[0]}; nothing written") from None
    for change in changes:
        if now.rows.get(change.key) != based_on.rows.get(change.key):
            raise EditRefused(f"{path}: row ({change.key[0]},{change.key[1]}) changed since its advice was computed; "
                              "nothing written (run the command again)")


def apply_changes(path: Path | str, changes: Sequence[RowChange], *, based_on: BoardGenTable | None = None,
                  dry_run: bool = False) -> Edit:
    """Make ``changes`` in the table file at ``path`` and return the diff.

    The edited text must pass the table loader, else :class:`EditRefused` and
    the file is untouched. With ``based_on`` (the table the changes were
    computed from) a changed row must still be as it was there. With
    ``dry_run`` the edit is validated (in a temporary folder) but not written.
    """
    path = Path(path)
    if not changes:
        raise EditRefused(f"{path}: no change to apply; nothing written")
    if dry_run:
        text, _ = _read(path)
        new = _new_text(path, text, changes)
        with tempfile.TemporaryDirectory() as scratch:
            temp = Path(scratch) / path.name
            temp.write_bytes(new.encode())
            table = _validated(temp, path)
        return Edit(path, unified_diff(path, text, new), table, written=False)
    check_writable(path)
    folder = path.parent
    validated: list[BoardGenTable] = []
    with files.lock(folder):  # two --apply runs edit the table one after the other
        text, bom = _read(path)  # as it is now: another run may have written it since
        if based_on is not None:
            _unchanged_rows(path, based_on, changes)
        new = _new_text(path, text, changes)
        try:
            files.atomic_write(path, (codecs.BOM_UTF8 if bom else b"") + new.encode(),
                               before_replace=lambda temp: validated.append(_validated(temp, path)))
        except OSError as exc:
            where = f"cannot replace the table: {exc.strerror}" if validated else f"cannot write in {folder}: {exc.strerror}"
            raise EditRefused(f"{path}: {where}; nothing written") from None
    return Edit(path, unified_diff(path, text, new), validated[0], written=True)
