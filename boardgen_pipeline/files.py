"""One helper per file job, for every writer of the project (issue 14 "a crash
never leaves a half-written file", "faults cost nothing"; issue 29 "one way to
do each thing"): write a file atomically, hold a lock, digest a file.

- :func:`atomic_write`: the bytes go to a temporary file in the same folder,
  are flushed and fsynced, renamed over the target (``os.replace``, atomic on
  POSIX), and the folder is fsynced, so that after a crash a reader finds the
  old file or the new one, and a rename that returned survives a power loss.
  The temporary name carries the writer's pid (``temp_name``), so a later run
  can tell a dead writer's leftovers from a live one's.
- :func:`lock`: an exclusive lock on a lock file (the ``filelock`` library),
  held for a ``with`` block; it ends with the process that holds it, so a
  killed writer never blocks the next one.
- :func:`sha256_file`: a file's sha256 (``hashlib.file_digest``).
"""

from __future__ import annotations

import hashlib
import os
import uuid
from contextlib import contextmanager
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def temp_name(path: Path) -> Path:
    """A temporary sibling of ``path``: ``.<name>.<pid>.<nonce>.tmp``."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}{TEMP_SUFFIX}")


def fsync_dir(folder: Path | str) -> None:
    """Make a rename in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path | str, data: bytes | str, encoding: str = "utf-8", mode: int | None = None) -> Path:
    """Replace ``path`` with ``data`` in one step (module docstring).
    ``mode``: the new file's permission bits (default: the old file's, else
    the umask's)."""
    path = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else data
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
    tmp = temp_name(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    return path


@contextmanager
def lock(path: Path | str, timeout: float = -1):
    """Hold an exclusive lock on the lock file ``path`` for the block
    (``timeout`` seconds at most, -1: wait as long as it takes)."""
    from filelock import FileLock

    with FileLock(str(path), timeout=timeout):
        yield


def sha256_file(path: Path | str) -> str:
    """The hex sha256 of a file's bytes."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
