"""Numba's on-disk cache of the kernels, written by two processes at once on
a first run (docs/decisions/kernels.md, "Compiling a cold cache from both
ends": a fresh clone's first run compiles in half the time of one process).

A cold cache costs one process 50-80 s of compiling (a quiet host to a
busy one), and each kernel module's helpers are compiled, and cached, on
their own before the kernels that call them. The row's kernels fall into
two halves of about equal cost that share a few helpers (the closures,
small limb and bit helpers): the attempt loop (placement, the closures,
fog) and the figures (difficulty, probability, the perfect player).
:func:`other_end_compiling` starts a second process that compiles from the
other end (the caller names what it runs) while this one compiles in its
usual order; each finds in the cache what the other has saved by then and
loads it instead of compiling it, so a two-core machine compiles both
halves at once and the two meet in the middle.

Numba writes a function's index (``.nbi``: each compiled signature and the
data file holding its code) by reading it, adding an entry and writing it
back, with no lock: two processes saving two signatures of one function at
once could both take data file 1, and the index would then name the other's
code. :func:`serialize_cache_writes` makes every save of this process hold a
lock on the cache folder, so a save reads the index as the last save left
it; both processes call it before they compile. It replaces a method of
numba's ``IndexDataCacheFile``, which numba does not document: a debt,
written down in docs/decisions/kernels.md, and held by a test that fails
when the lock stops working (tests/test_kernel_cache_writes.py).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from boardgen_pipeline import files, paths

SAVE_LOCK = ".save.lock"
# The second process has compiled what this one needs by the time it is done; a second process that
# still compiles after that long is stopped (what it saved stays valid: every save is whole or absent).
JOIN_SECONDS = 120.0


def serialize_cache_writes() -> None:
    """Make every save into numba's cache, in this process, hold a lock on
    the folder it writes (``SAVE_LOCK`` there), so two processes saving
    signatures of one function never take the same data file. Once a
    process; a save costs a lock file's open and close more."""
    from numba.core import caching

    save = caching.IndexDataCacheFile.save
    if getattr(save, "boardgen_serialized", False):
        return

    def locked_save(self, key, data):
        with files.lock(Path(self._cache_path) / SAVE_LOCK):
            save(self, key, data)

    locked_save.boardgen_serialized = True
    caching.IndexDataCacheFile.save = locked_save


@contextlib.contextmanager
def other_end_compiling(entry: str) -> Iterator[subprocess.Popen | None]:
    """For the block (this process compiling the kernels on a cold cache),
    a second process running ``entry`` (``"module:function"``, imported by
    a fresh interpreter from this copy of the package) on the same cache,
    when this process may use more than one core; yields it, or None. At the
    end of the block the second process is waited for (``JOIN_SECONDS`` at
    most, then stopped; at once when the block raised), so none outlives
    the compile. The second process failing costs nothing but time: this
    process compiles whatever it needs itself."""
    from boardgen_pipeline.processes import default_workers

    serialize_cache_writes()
    if default_workers() < 2:
        yield None
        return
    module, function = entry.split(":")
    # Run from the folder this copy of the package is imported from (``-c`` puts the working folder first on
    # the path), with the same cache folder named absolutely there.
    package_root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "BOARDGEN_NUMBA_CACHE": str(paths.kernel_cache_base().resolve())}
    proc = subprocess.Popen([sys.executable, "-c", f"import {module} as m; m.{function}()"], cwd=package_root,
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield proc
    except BaseException:  # the block failed: the second process goes with it
        proc.kill()
        proc.wait()
        raise
    try:
        proc.wait(timeout=JOIN_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
