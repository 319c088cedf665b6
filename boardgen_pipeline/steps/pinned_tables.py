"""The tables a night calibrates, pinned (SPEC 9 "an edit of a table row
regenerates only the partitions whose row changed"; docs/pipeline.md "One
nightly").

A night calibrates the tables it started with, even if a designer saves an
edit at 03:00: the night's first step copies every table file (the files
``fingerprints.table_files`` hashes) into the warehouse, under
``_tables/<digest>/`` (the digest of their contents), and every run of the
night reads that copy. The copy lives in the warehouse because every run
worker reads the warehouse already, wherever it runs. A copy is written once
(a temporary folder renamed into place; the same tables give the same
folder), never changed, and let go by retention once no kept night reads it.

The tables are validated from the folder the designer edits before they are
pinned, so a violation names the designer's own file.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from boardgen_pipeline import files
from boardgen_pipeline.calibration.fingerprints import table_files, tables_digest
from boardgen_pipeline.warehouse import datasets

PINNED = "_tables"
KEEP_SECONDS = 2 * 86400.0  # a copy younger than this may belong to a night still running


def pinned_root(root) -> Path:
    return Path(root) / PINNED


def pin(root, tables_dir) -> Path:
    """The folder holding a copy of every table file of ``tables_dir``, made
    once per content (its digest names it)."""
    tables_dir = Path(tables_dir)
    digest, _ = tables_digest(tables_dir)
    target = pinned_root(root) / digest
    if target.is_dir():
        os.utime(target)  # its age is when a night last used it (retention reads it)
        return target
    with datasets.storage_faults(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.parent / f".{digest}.{files.temp_tag()}.tmp"
        for path in table_files(tables_dir):
            copy = temp / path.relative_to(tables_dir)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        try:
            files.rename(temp, target)
        except OSError:
            if not target.is_dir():  # another night pinned the same tables first: theirs is the same bytes
                raise
            shutil.rmtree(temp, ignore_errors=True)
    return target


def forget(root, keep: set[str] | None = None, now: float | None = None) -> list[str]:
    """Delete the pinned copies no night has used for ``KEEP_SECONDS`` (and
    not in ``keep``); their digests."""
    base = pinned_root(root)
    if not base.is_dir():
        return []
    now = time.time() if now is None else now
    gone = []
    for folder in sorted(base.iterdir()):
        if folder.name.startswith(".") or folder.name in (keep or set()):
            continue
        if now - folder.stat().st_mtime > KEEP_SECONDS:
            shutil.rmtree(folder, ignore_errors=True)
            gone.append(folder.name)
    return gone
