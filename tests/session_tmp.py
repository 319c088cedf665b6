"""A temporary directory of the test session's own (``$TMPDIR`` for the
session and every process it starts), removed when the session ends.

The suite starts processes and kills some of them on purpose (SIGKILL, a
grace period run out): what a killed process had made in the temporary
directory (an ephemeral Dagster instance's folder, ``dagster dev``'s
workspace and sockets, dask's scratch space) stays there. In a folder of the
session's own, it goes with the folder. A session that is itself killed
leaves its folder, with its owner's pid inside: the next session removes it,
once the throwaway PostgreSQL servers in it are gone (``postgres_server``
stops and sweeps those). pytest's own ``tmp_path`` folders stay where pytest
keeps them (its last three sessions), for the files of a failed test.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from tests import postgres_server

PREFIX = "boardgen-tests-"
OWNER_FILE = "owner.pid"


def start() -> Path:
    """Make the session's folder under the machine's temporary directory,
    after removing those of sessions that are gone; point ``$TMPDIR`` (and
    this process's ``tempfile``) at it. Returns it."""
    base = Path(tempfile.gettempdir())
    sweep(base)
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    folder.chmod(0o755)  # the throwaway PostgreSQL server runs as another user and makes its folder in here
    (folder / OWNER_FILE).write_text(str(os.getpid()), encoding="ascii")
    # pytest's tmp_path root is read from the environment when first needed: it stays where it was
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", str(base))
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # read $TMPDIR again
    return folder


def finish(folder: Path) -> None:
    """Remove the session's folder (the session has ended: nothing of it runs)."""
    shutil.rmtree(folder, ignore_errors=True)


def sweep(base: Path) -> list[Path]:
    """Remove the folders of sessions whose process is gone, but for one that
    still holds a running PostgreSQL server; the folders removed."""
    removed = []
    for folder in sorted(base.glob(PREFIX + "*")):
        owner = postgres_server._pid_in(folder / OWNER_FILE)
        if owner is None or postgres_server._alive(owner):
            continue  # a session running now (or a folder not made here)
        postgres_server.sweep_stale(folder)
        if any(folder.glob(postgres_server.PREFIX + "*")):
            continue  # its server is still stopping: the next session removes it
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed
