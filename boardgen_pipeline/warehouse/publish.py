"""Publishing calibration partitions into the warehouse (SPEC 8, 9, 10;
A' blocks an illegal batch).

``warehouse`` writes and removes single Parquet partitions; this module holds
the pipeline's rules on top of it:

- **Validate before publishing** (SPEC 10: a failed blocking check does not
  un-write what it checked). A batch with an illegal board is never written
  under ``boards/``: it goes to ``_rejected/boards/`` (outside every view's
  glob, kept for digging), and the row's previously published ``boards`` and
  ``calibration_report`` partitions are withdrawn, so nothing downstream can
  read boards of an older row version as if they were current.
- **Views without contention**. The DuckDB file holds views only. It is
  rebuilt in a temporary file and renamed over ``boardgen.duckdb`` (atomic on
  POSIX), under a file lock shared by the pipeline's writers only. A writer
  therefore never opens the live database file: a reader holding it (the
  ``duckdb`` shell opens read-write by default) cannot make a run fail with
  "Could not set lock on file", and a run cannot make a reader fail; a reader
  that opened the file before a swap keeps the previous inode, whose views
  read the same Parquet globs.
- **Pruning**: partitions whose row left the table are removed.
- **Integrity**: ``verify`` names every published file whose
  bytes differ from the digest recorded when it was written;
  ``intact_keys`` is what a reader of a whole dataset may read;
  ``sweep_temp_files`` removes a killed run's temporary files.
- **Flat datasets** (``datasets.FLAT_DATASETS``: the node-map draws and the
  stratified figures, one file each for the whole table) are written with
  the same temp-and-rename (``write_flat``) and an explicit schema.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq

from boardgen_pipeline import files
from boardgen_pipeline.warehouse import datasets

REJECTED = "_rejected"


ROW_DATASETS = datasets.ROW_DATASETS


def rejected_root(root: Path | str) -> Path:
    return Path(root) / REJECTED


def sweep_temp(root: Path | str, dataset: str, key: tuple[int, int]) -> list[Path]:
    """Delete temporary files a killed writer left in a partition folder (they
    are invisible to readers: hidden names ending in ``.tmp``). Only those
    whose writer is certainly gone (``files.writer_gone``): a file of a live
    writer, or one another host's writer may still own, stays."""
    folder = datasets.partition_dir(Path(root), dataset, key)
    old = [p for p in folder.glob(".*.tmp") if files.writer_gone(p)] if folder.exists() else []
    for p in old:
        p.unlink(missing_ok=True)
    return old


def sweep_temp_files(root: Path | str) -> list[Path]:
    """Sweep the whole warehouse (datasets, manifest, rejected batches, the
    views database's folder) of temporary files left by killed writers (issue
    14 "stray temp files are swept at the next run"); returns what was removed.
    Call it at the start of a run."""
    root = Path(root)
    if not root.is_dir():
        return []
    gone = [p for pattern in (".*.tmp", ".*.tmp.wal", ".probe.*.tmp") for p in root.rglob(pattern)
            if p.is_file() and files.writer_gone(p)]
    for p in gone:
        with datasets.storage_faults(p):
            p.unlink(missing_ok=True)
    return sorted(set(gone))


def published_files(root: Path | str) -> list[Path]:
    """Every Parquet file the warehouse publishes or keeps (datasets and
    rejected batches), and every file its manifest names that is gone."""
    root = Path(root)
    out = set()
    for base in (root, rejected_root(root)):
        for dataset in datasets.DATASETS:
            out.update(p for p in (base / dataset).rglob("*.parquet") if not p.name.startswith("."))
        manifest = base / datasets.MANIFEST
        if manifest.is_dir():
            for d in manifest.rglob("*" + datasets.DIGEST_SUFFIX):
                rel = d.relative_to(manifest)
                out.add(base / rel.parent / rel.name.removesuffix(datasets.DIGEST_SUFFIX))
    return sorted(out)


def _base_of(root: Path, path: Path) -> Path:
    rej = rejected_root(root)
    return rej if path.is_relative_to(rej) else root


def verify(root: Path | str) -> list[tuple[Path, str]]:
    """``(path, problem)`` for every published file whose bytes are not the
    ones written (bit rot, a truncated copy), that has no recorded digest, or
    that the manifest names and is gone (bit rot is found)."""
    root = Path(root)
    out = []
    for path in published_files(root):
        problem = datasets.file_problem(_base_of(root, path), path)
        if problem:
            out.append((path, problem))
    return out


DAMAGED = "_damaged"


def quarantine(root: Path | str, paths) -> list[Path]:
    """Move damaged files out of the views' globs into ``<root>/_damaged/``
    (kept for digging, like ``_rejected``), so one bad file fails no query
    over the rest and no reader of a whole dataset (the report, the strata)
    trips on it; its manifest entry stays, so it reads as "missing" and its
    row is regenerated. Returns where the files went."""
    root = Path(root)
    moved = []
    for path in paths:
        path = Path(path)
        if not path.exists():
            continue
        target = root / DAMAGED / path.resolve().relative_to(root.resolve())
        with datasets.storage_faults(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            files.rename(path, target)
        moved.append(target)
    return moved


def intact(root: Path | str, path: Path | str) -> bool:
    """Whether ``path`` (a file of the warehouse at ``root``) exists and has the bytes written."""
    return datasets.file_problem(_base_of(Path(root), Path(path)), path) is None


def intact_keys(root: Path | str, dataset: str) -> set[tuple[int, int]]:
    """``keys_in`` without the partitions whose file is damaged: what a
    reader of the whole dataset (e.g. the report) may read; the others fail
    only their own row."""
    return {k for k in keys_in(root, dataset) if intact(root, datasets.partition_path(Path(root), dataset, k))}


def write_row_file(root: Path | str, dataset: str, key: tuple[int, int], data: bytes, digest: str | None = None) -> Path:
    """Write one row partition's Parquet bytes (encoded by the worker that
    computed them: ``datasets.encode``), atomically, digest first."""
    sweep_temp(root, dataset, key)
    return datasets.write_bytes_atomic(data, datasets.partition_path(Path(root), dataset, key), root, digest)


def publish_boards(root: Path | str, key: tuple[int, int], data: bytes, digest: str | None = None) -> Path:
    """Write a legal batch to ``boards/`` and drop any rejected copy of the row."""
    path = write_row_file(root, "boards", key, data, digest)
    datasets.remove_partition(rejected_root(root), "boards", key)
    return path


def reject_boards(root: Path | str, key: tuple[int, int], data: bytes, digest: str | None = None) -> Path:
    """Write a batch holding illegal boards to ``_rejected/boards/`` and withdraw
    the row's published partitions (they belong to an older row version)."""
    path = write_row_file(rejected_root(root), "boards", key, data, digest)
    for dataset in ROW_DATASETS:
        datasets.remove_partition(Path(root), dataset, key)
    return path


def read_row_bytes(root: Path | str, dataset: str, key: tuple[int, int]) -> bytes:
    """The bytes of one published row partition (FileNotFoundError when it has none)."""
    path = datasets.partition_path(Path(root), dataset, key)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"no published {dataset} partition for row ({key[0]},{key[1]}): {path}") from None


def withdraw(root: Path | str, dataset: str, key: tuple[int, int]) -> None:
    """Remove one published row partition (e.g. overlays of a row whose
    tables no longer declare variants)."""
    datasets.remove_partition(Path(root), dataset, key)


def write_flat(root: Path | str, dataset: str, name: str, records: list[dict], schema) -> Path:
    """Write the one file of a dataset that is not per row
    (``datasets.FLAT_DATASETS``), atomically, with an explicit schema."""
    path = datasets.flat_path(Path(root), dataset, name)
    if path.parent.exists():
        for p in path.parent.glob(".*.tmp"):
            if files.writer_gone(p):
                p.unlink(missing_ok=True)
    return datasets.write_atomic(datasets.records_table(records, drop=(), schema=schema), path, root)


def read_flat(root: Path | str, dataset: str, name: str) -> list[dict] | None:
    """The records of a flat dataset's file, or None when it was never written."""
    path = datasets.flat_path(Path(root), dataset, name)
    if not path.exists():
        return None
    return datasets.read_file(path).to_pylist()


def read_partition(root: Path | str, dataset: str, key: tuple[int, int]) -> list[dict]:
    """The records of one published partition, hive keys put back in."""
    path = datasets.partition_path(Path(root), dataset, key)
    if not path.exists():
        raise FileNotFoundError(f"no published {dataset} partition for row ({key[0]},{key[1]}): {path}")
    rows = datasets.read_file(path).to_pylist()
    for r in rows:
        r["level_index"], r["node_depth"] = key
    return rows


def read_row_records(root: Path | str, dataset: str, keys, columns=None) -> dict[tuple[int, int], list[dict]]:
    """The records of many row partitions at once (``keys`` that have no
    readable file are left out), hive keys put back in: DuckDB scans of
    ``FILES_PER_SCAN`` files rather than one read a row (a report of each of
    6,000 rows is 6,000 small files)."""
    import duckdb

    paths = {str(datasets.partition_path(Path(root), dataset, k)): k for k in keys}
    files = sorted(p for p in paths if Path(p).is_file())
    select = "*" if columns is None else ", ".join(f'"{c}"' for c in columns)
    out: dict[tuple[int, int], list[dict]] = {}
    con = duckdb.connect()
    try:
        for start in range(0, len(files), FILES_PER_SCAN):
            chunk = files[start:start + FILES_PER_SCAN]
            try:
                table = con.sql(f"select {select}, filename from read_parquet($files, filename=true)",
                                params={"files": chunk}).to_arrow_table()
            except duckdb.Error:
                # a damaged file: read these one by one, leaving out the ones that fail
                for key in (paths[p] for p in chunk):
                    if (recs := _try_read(root, dataset, key, columns)) is not None:
                        out[key] = recs
                continue
            for record in table.to_pylist():
                key = paths[record.pop("filename")]
                record["level_index"], record["node_depth"] = key
                out.setdefault(key, []).append(record)
    finally:
        con.close()
    return out


# A scan keeps every file's reader until it ends: ~100 KB a file, so 6,000 files in one scan
# peaked at 700 MB; 256 at a time, 190 MB, at the same speed.
FILES_PER_SCAN = 256


def _try_read(root, dataset: str, key: tuple[int, int], columns) -> list[dict] | None:
    """One partition's records, or None when its file cannot be read; of
    ``columns``, those the file has (a file of an older schema lacks some)."""
    path = datasets.partition_path(Path(root), dataset, key)
    try:
        rows = datasets.read_file(path, columns=columns).to_pylist()
    except (OSError, ValueError, KeyError):
        return None
    for r in rows:
        r["level_index"], r["node_depth"] = key
    return rows


def keys_in(root: Path | str, dataset: str) -> set[tuple[int, int]]:
    """Row keys that have a ``part.parquet`` under ``<root>/<dataset>/``."""
    out = set()
    for path in Path(root, dataset).glob("level_index=*/node_depth=*/part.parquet"):
        try:
            level = int(path.parent.parent.name.split("=", 1)[1])
            depth = int(path.parent.name.split("=", 1)[1])
        except (IndexError, ValueError):
            continue
        out.add((level, depth))
    return out


def prune(root: Path | str, keep: set[tuple[int, int]]) -> list[str]:
    """Remove every row partition (published or rejected) whose key is not in
    ``keep``; returns what was removed as ``dataset/(L,D)`` strings."""
    removed = []
    places = [(Path(root), d) for d in (*ROW_DATASETS, datasets.DRIFT)] + [(rejected_root(root), "boards")]
    for base, dataset in places:
        for key in sorted(keys_in(base, dataset) - set(keep)):
            datasets.remove_partition(base, dataset, key)
            prefix = f"{REJECTED}/" if base != Path(root) else ""
            removed.append(f"{prefix}{dataset}/({key[0]},{key[1]})")
    return removed


def file_digest(path: Path | str) -> str:
    """Content hash of a published file (its data version): the first 16
    hex digits of its sha256 (``files.sha256_file``)."""
    return files.sha256_file(path)[:16]
