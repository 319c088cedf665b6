"""One helper per file job, for every writer of the project (a crash
never leaves a half-written file, faults cost nothing; one way to
do each thing): replace a file atomically, rename durably, hold a lock,
digest a file.

- :func:`atomic_write` (bytes or text) and :func:`replacing` (a temporary
  path for a writer of its own, e.g. DuckDB): the new content goes to a
  temporary file in the same folder, is fsynced, renamed over the target
  (``os.replace``, atomic on POSIX), and the folder is fsynced, so that after
  a crash a reader finds the old file or the new one, and a rename that
  returned survives a power loss. The new file keeps the old one's
  permission bits and, where the process may, its owner. ``before_replace``
  runs once the temporary file is complete and before the rename: the
  warehouse records the file's digest there (digest first, so a crash
  between the two renames reads as "damaged", never as a file vouched for
  by nothing), the table editor validates the edited table there.
- :func:`rename`: the one rename of the project (``os.replace``, then the
  folders fsynced), which :func:`atomic_write` ends with and every other
  move into place calls (a staged ``dagster.yaml``, a pinned tables folder,
  a damaged file into quarantine).
- Temporary names (:func:`temp_name`, :func:`temp_owner`) carry the writer's
  host and pid, so a later run can tell a dead writer's leftovers on this
  host from a live one's, and leaves another host's alone
  (:func:`writer_gone`, ``warehouse.publish.sweep_temp_files``).
- :func:`lock`: an exclusive lock for a ``with`` block (the ``filelock``
  library): on a lock file, or on a folder itself (no lock file is left in a
  folder a person keeps, e.g. the tables). It ends with the process that
  holds it, so a killed writer never blocks the next one.
- :func:`sha256_file`: a file's sha256 (``hashlib.file_digest``).
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def _host_tag() -> str:
    """This host, as 8 hex digits (a host name may hold dots, which a temporary name uses to split)."""
    import socket

    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def temp_tag() -> str:
    """``<host>_<pid>.<nonce>``: who writes a temporary file or folder."""
    return f"{_host_tag()}_{os.getpid()}.{uuid.uuid4().hex}"


def temp_name(path: Path | str) -> Path:
    """A temporary sibling of ``path``: ``.<name>.<host>_<pid>.<nonce>.tmp``
    (hidden, and not ``*.parquet`` nor ``*.toml``: no glob of a dataset or a
    tables folder ever sees it)."""
    path = Path(path)
    return path.with_name(f".{path.name}.{temp_tag()}{TEMP_SUFFIX}")


def temp_owner(path: Path | str) -> tuple[str, int] | None:
    """``(host tag, pid)`` that :func:`temp_name` put in a temporary file's
    name, or None (a name it did not make)."""
    parts = Path(path).name.split(".")
    try:
        host, _, pid = parts[-3].rpartition("_")
        return (host, int(pid)) if host else None
    except (IndexError, ValueError):
        return None


FOREIGN_TEMP_MAX_AGE = 86400.0  # another host's writer renames its file within seconds, never a day later


def writer_gone(path: Path | str, max_age: float = FOREIGN_TEMP_MAX_AGE) -> bool:
    """Whether the writer of a temporary file is certainly gone: this host's
    process named in it is dead, or (another host's, or a name without an
    owner) it is older than ``max_age``. A live writer's file, or a young
    one another host's writer may still own, is never "gone"."""
    owner = temp_owner(Path(str(path).removesuffix(".wal")))  # DuckDB's log beside a temporary database
    try:
        age = time.time() - Path(path).stat().st_mtime
    except FileNotFoundError:
        return False
    if owner is None or owner[0] != _host_tag():
        return age > max_age
    if owner[1] == os.getpid():
        return False
    try:
        os.kill(owner[1], 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def fsync_dir(folder: Path | str) -> None:
    """Make a rename in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _kept(path: Path, mode: int | None) -> tuple[int | None, tuple[int, int] | None]:
    """The permission bits (``mode``, else the old file's) and the owner the new file keeps."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return mode, None
    return (st.st_mode & 0o7777 if mode is None else mode), (st.st_uid, st.st_gid)


def rename(source: Path | str, target: Path | str) -> Path:
    """Move ``source`` to ``target`` in one step and make it last: the one
    rename of the project (a written file over its old self, a staged
    ``dagster.yaml`` into place, a pinned tables folder, a damaged file into
    quarantine). ``os.replace``: atomic on POSIX, a file replaces a file, a
    folder takes a name no folder or an empty one holds (a non-empty one:
    OSError, and nothing moved); then both ends' folders are fsynced, so a
    rename that returned survives a power loss."""
    source, target = Path(source), Path(target)
    os.replace(source, target)
    fsync_dir(target.parent)
    if source.parent.resolve() != target.parent.resolve():
        fsync_dir(source.parent)
    return target


def _commit(tmp: Path, path: Path, mode: int | None, owner: tuple[int, int] | None) -> None:
    if mode is not None:
        os.chmod(tmp, mode)
    if owner is not None and owner != (os.geteuid(), os.getegid()):
        try:
            os.chown(tmp, *owner)
        except OSError:
            pass  # only root may give a file away: the new file is the writer's then
    rename(tmp, path)


def atomic_write(path: Path | str, data: bytes | str, encoding: str = "utf-8", mode: int | None = None,
                 before_replace: Callable[[Path], None] | None = None) -> Path:
    """Replace ``path`` with ``data`` in one step (module docstring).
    ``mode``: the new file's permission bits (default: the old file's, else
    the umask's); ``before_replace(temporary path)``: runs on the complete,
    synced temporary file before the rename (an exception there leaves
    ``path`` untouched and removes the temporary file)."""
    path = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else data
    mode, owner = _kept(path, mode)
    tmp = temp_name(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if before_replace is not None:
            before_replace(tmp)
        _commit(tmp, path, mode, owner)
    finally:
        tmp.unlink(missing_ok=True)
    return path


@contextmanager
def replacing(path: Path | str, mode: int | None = None) -> Iterator[Path]:
    """A temporary path for the block to write ``path``'s new content into
    (a writer that opens files itself: a database); when the block ends
    without an exception the file is synced and renamed over ``path`` as
    :func:`atomic_write` does, else it is removed and ``path`` is untouched."""
    path = Path(path)
    mode, owner = _kept(path, mode)
    tmp = temp_name(path)
    try:
        yield tmp
        _fsync_file(tmp)
        _commit(tmp, path, mode, owner)
    finally:
        tmp.unlink(missing_ok=True)


LOCK_POLL_SECONDS = 0.05


@contextmanager
def lock(path: Path | str, timeout: float = -1) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` for the block: a lock file (made
    when absent, and left there), or an existing folder, locked itself
    (``timeout`` seconds at most, -1: wait as long as it takes;
    ``filelock.Timeout`` when it runs out)."""
    from filelock import FileLock, Timeout, lock_descriptor, unlock_descriptor

    path = Path(path)
    if not path.is_dir():
        with FileLock(str(path), timeout=timeout):
            yield
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        deadline = None if timeout < 0 else time.monotonic() + timeout
        while not lock_descriptor(fd, blocking=False):
            if deadline is not None and time.monotonic() >= deadline:
                raise Timeout(str(path))
            time.sleep(LOCK_POLL_SECONDS)
        try:
            yield
        finally:
            unlock_descriptor(fd)
    finally:
        os.close(fd)  # also releases the lock, should the unlock have failed


def sha256_file(path: Path | str) -> str:
    """The hex sha256 of a file's bytes."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
