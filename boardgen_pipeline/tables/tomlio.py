"""Reading the TOML table files (SPEC 2.7, 3, 4: "human-editable text").

Every table of ``tables/`` is TOML: diff-friendly, commentable, and parsed
by the standard library. A syntax error is a user error like any other: it
becomes a :class:`~boardgen_pipeline.errors.Violation` naming the file and the
line, never a traceback. A UTF-8 byte-order mark (which some Windows editors
write) is accepted: it is not part of the text.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from boardgen_pipeline.errors import TableError, Violation, not_utf8


def load_toml(path: Path | str) -> dict:
    """Parse one TOML file; a missing file or bad syntax raises TableError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TableError([Violation(str(path), "-", "-", None, "file_missing", "table file not found")]) from None
    except IsADirectoryError:
        raise TableError([Violation(str(path), "-", "-", None, "file_missing", "a directory, not a table file")]) from None
    except OSError as exc:  # unreadable (permissions, a broken link): the designer's to fix, no traceback
        raise TableError([Violation(str(path), "-", "-", None, "file_unreadable", f"cannot read: {exc.strerror}")]) from None
    except UnicodeDecodeError as exc:
        raise TableError([Violation(str(path), "-", "-", None, "encoding", not_utf8(exc))]) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TableError([Violation(str(path), "-", "-", None, "toml_syntax", str(exc))]) from None
