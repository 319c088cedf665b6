"""The warehouse: Parquet per partition, DuckDB views over it (SPEC 8, 10).

Layout (hive): ``<root>/<dataset>/level_index=L/node_depth=D/part.parquet``
for the per-row datasets; ``<root>/<dataset>/<name>.parquet`` for the
datasets that are not per row (``FLAT_DATASETS``: the node-map draws and the
stratified figures); ``calibration_history`` holds one file per version of a
row's report, ``.../level_index=L/node_depth=D/<version>.parquet``
(``steps.history``).
Every file is replaced with ``files.atomic_write`` (a temporary name in the
same folder, fsync, ``os.replace``, fsync of the folder), so a crash mid-write
never leaves a partial ``*.parquet`` visible and readers see either the old
file or the new one. Files are written with fixed settings and no wall-clock
metadata, so the same records give the same bytes: a rerun is idempotent.

DuckDB holds only *views* over ``read_parquet(..., hive_partitioning=true)``:
the database file is written once, when the views are (re)created, so many
processes can write partitions at once while readers query the views.

Integrity (bit rot is found): every file written here gets its
sha256 recorded in a manifest tree beside the datasets,
``<root>/_manifest/<dataset>/.../part.parquet.sha256`` (``sha256sum``
format, so ``cd _manifest/...; sha256sum -c`` works by hand too). It lives
outside the partition folders so the views' globs and the partition layout
are untouched, and it travels with a copied warehouse. The digest is renamed
into place *before* the Parquet file: a crash between the two renames leaves
a mismatch, which reads as "damaged" and gets the file regenerated, never a
new file vouched for by nothing.

Storage faults (clear errors): ``storage_faults`` turns an
``OSError`` (disk full, read-only file system, a path under a file, ...)
into one ``WarehouseError`` naming the path and the cause;
``check_writable`` finds a bad warehouse path before any partition runs.
"""

from __future__ import annotations

import errno
import hashlib
import os
from contextlib import contextmanager
from functools import lru_cache
from operator import itemgetter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from boardgen_pipeline import files
from boardgen_pipeline.errors import WarehouseError

# Every dataset of the warehouse, by kind: the one list every module reads.
# One file per parameter row, hive keys in the path; a removed row's files are pruned and a
# rejected batch withdraws them all (the overlays of an older row version must not stand beside
# no boards). ``row_checks``: the verdict of each of the row's checks (``steps.row_checks``).
ROW_DATASETS = ("boards", "variant_overlays", "calibration_report", "row_checks")
# One file for the whole table, not one per row (no hive keys).
FLAT_DATASETS = ("node_map_draws", "calibration_strata")
# One file per version of a row's report (``steps.history``), kept when the row leaves the table.
HISTORY = "calibration_history"
# A row whose boards changed without a change of the row (``steps.determinism``): one record, its first
# differing board; kept until the row reproduces or its version changes.
DRIFT = "row_drift"
# One file, the last calibration diff written with ``boardgen diff --save`` (``review.saved``): no run
# makes it, nothing regenerates it.
REVIEW = "calibration_diff"
DATASETS = (*ROW_DATASETS, *FLAT_DATASETS, HISTORY, DRIFT, REVIEW)


DB_NAME = "boardgen.duckdb"


MANIFEST = "_manifest"
DIGEST_SUFFIX = ".sha256"


# errno -> the words a person reads; the rest fall back to strerror
CAUSES = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.ENOTDIR: "a parent of the path is a file, not a folder",
    errno.EEXIST: "the path is a file, not a folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error (failing disk?)",
    errno.EFBIG: "file too large for the file system or the process limit",
}
# DuckDB reports the same faults as text inside its own exceptions
TEXT_CAUSES = {
    "no space left on device": "disk full",
    "disk quota exceeded": "disk quota exceeded",
    "read-only file system": "read-only file system",
    "not a directory": CAUSES[errno.ENOTDIR],
    "permission denied": "permission denied",
    "file too large": CAUSES[errno.EFBIG],
    "not a valid duckdb database file": "not a DuckDB database file (damaged or overwritten: `boardgen calibrate` "
                                        "or `make run` writes it again)",
}


def warehouse_error(exc: BaseException, path) -> WarehouseError:
    """``exc`` (an ``OSError``, or a DuckDB error carrying one as text) as one
    ``WarehouseError`` naming ``path`` (or the path the error names) and the cause."""
    if isinstance(exc, WarehouseError):
        return exc
    if isinstance(exc, OSError) and exc.errno is not None:
        where = exc.filename or path
        if exc.errno == errno.EEXIST and where and Path(where).exists() and not Path(where).is_dir():
            return WarehouseError(where, CAUSES[errno.EEXIST])
        return WarehouseError(where, CAUSES.get(exc.errno, exc.strerror or str(exc)))
    text = str(exc).lower()
    for needle, cause in TEXT_CAUSES.items():
        if needle in text:
            return WarehouseError(path, cause)
    return WarehouseError(path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


@contextmanager
def storage_faults(path):
    """Raise every ``OSError`` of the block as a ``WarehouseError`` about ``path``."""
    try:
        yield
    except OSError as exc:
        raise warehouse_error(exc, path) from exc


def check_writable(root: Path | str) -> Path:
    """Fail early, before any partition runs, when ``root`` cannot hold a
    warehouse: a path under a file, a read-only or full file system, no
    permission. Creates ``root`` and writes, syncs and removes a probe file."""
    root = Path(root)
    with storage_faults(root):
        for parent in [root, *root.parents]:
            if parent.exists():
                if not parent.is_dir():
                    cause = CAUSES[errno.EEXIST] if parent == root else f"{parent} is a file, not a folder"
                    raise WarehouseError(root, cause)
                break
        root.mkdir(parents=True, exist_ok=True)
        probe = files.temp_name(root / "probe")
        try:
            with open(probe, "wb") as fh:
                fh.write(b"\0" * 4096)  # a few blocks: a full disk fails here, not after a row is computed
                fh.flush()
                os.fsync(fh.fileno())
        finally:
            probe.unlink(missing_ok=True)
    return root


def digest_path(root: Path | str, path: Path | str) -> Path:
    """Where the manifest records ``path``'s digest (``path`` under ``root``)."""
    try:  # a path built from root (the usual case) needs no resolving, which costs two realpath walks
        rel = Path(path).relative_to(root)
        if ".." in rel.parts:
            raise ValueError(rel)
    except ValueError:
        rel = Path(path).resolve().relative_to(Path(root).resolve())
    return Path(root) / MANIFEST / rel.parent / (rel.name + DIGEST_SUFFIX)


def recorded_digest(root: Path | str, path: Path | str) -> str | None:
    try:
        text = digest_path(root, path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None
    return text.split()[0] if text.split() else None


def file_problem(root: Path | str, path: Path | str) -> str | None:
    """Why a published file cannot be trusted (``"missing"``, ``"no recorded
    digest"``, ``"digest mismatch"``, ``"unreadable: ..."``), or None when its
    bytes are the ones written. A mismatch is read twice: a writer between
    its two renames shows one for an instant."""
    for attempt in range(2):
        expected = recorded_digest(root, path)
        if not Path(path).exists():
            return "missing" if expected else "missing, and no recorded digest"
        if expected is None:
            return "no recorded digest"
        try:
            actual = files.sha256_file(path)
        except OSError as exc:
            return f"unreadable: {warehouse_error(exc, path).cause}"
        if actual == expected:
            return None
    return "digest mismatch (the file changed after it was written)"


def write_digest(root: Path | str, path: Path, digest: str) -> Path:
    target = digest_path(root, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return files.atomic_write(target, f"{digest}  {path.name}\n", encoding="ascii")


def remove_digest(root: Path | str, path: Path) -> None:
    target = digest_path(root, path)
    target.unlink(missing_ok=True)
    for d in target.parents:
        if d == Path(root) / MANIFEST or not d.is_relative_to(Path(root) / MANIFEST):
            break
        try:
            d.rmdir()
        except OSError:
            break


def warehouse_root_of(path: Path) -> Path:
    """The warehouse a dataset file belongs to: the folder holding its
    dataset folder (``<root>/<dataset>/...``), else the file's folder."""
    path = Path(path)
    for parent in path.parents:
        if parent.name in DATASETS:
            return parent.parent
    return path.parent


def partition_dir(root: Path, dataset: str, key: tuple[int, int]) -> Path:
    return Path(root) / dataset / f"level_index={key[0]}" / f"node_depth={key[1]}"


def partition_path(root: Path, dataset: str, key: tuple[int, int]) -> Path:
    return partition_dir(root, dataset, key) / "part.parquet"


def encode(table: pa.Table) -> bytes:
    """The Parquet bytes of ``table``: fixed settings and no wall-clock
    metadata, so the same records always give the same bytes (a worker
    encodes, the publisher writes: ``write_bytes_atomic``).

    The settings are chosen by column type (measured on the
    default rows and a 600-row table: ``benchmarks/row_work.py``): integers
    delta bit-packed (scopes count up, counts vary little: a few bits a
    value) and booleans bit-packed, both left uncompressed, where zstd would
    only add its per-page cost, but for the integers of a list column (an
    overlay's cells: many a record, in packs of neighbouring cells, whose
    deltas zstd shrinks by a tenth more); floats, strings and the rest plain
    under zstd. No
    dictionary pages (zstd over plain values is as small, for half the
    work) and no min/max statistics: a file is one row group of one row's
    records, so statistics would prune nothing the hive path does not, and
    a layout's min and max are two more layouts in the footer. A table of
    one record (a row's report, a history version) is written plain and
    uncompressed: a column of one value cannot shrink, zstd would only add
    its frame. The Arrow schema is stored, so list fields and time zones
    read back as written."""
    buf = pa.BufferOutputStream()
    if table.num_rows <= 1:
        pq.write_table(table, buf, compression="none", use_dictionary=False, write_statistics=False, store_schema=True)
    else:
        zstd, delta = _column_settings(table.schema)
        # unnamed columns are left uncompressed: naming only the zstd ones is fewer settings to apply
        pq.write_table(table, buf, compression=dict.fromkeys(zstd, "zstd"),
                       column_encoding=dict.fromkeys(delta, "DELTA_BINARY_PACKED") or None, use_dictionary=False,
                       write_statistics=False, store_schema=True)
    return buf.getvalue().to_pybytes()


@lru_cache(maxsize=64)
def _column_settings(schema: pa.Schema) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The leaf columns of ``schema`` that ``encode`` compresses with zstd,
    and those it delta-packs (the integers); a dataset's files share their
    schema, so this is worked out once a schema."""
    zstd, delta = [], []
    for path, kind in _leaf_columns(schema):
        if pa.types.is_integer(kind):
            delta.append(path)
            if ".list." in path:  # a list's integers, many a record: zstd finds the patterns of their deltas
                zstd.append(path)
        elif not pa.types.is_boolean(kind):
            zstd.append(path)
    return tuple(zstd), tuple(delta)


def _leaf_columns(schema: pa.Schema) -> list[tuple[str, pa.DataType]]:
    """The Parquet leaf columns of ``schema`` as ``(dotted path, Arrow type)``
    (a list's values are ``<name>.list.element``: the compliant layout)."""
    out = []

    def walk(path: str, kind: pa.DataType) -> None:
        if pa.types.is_list(kind) or pa.types.is_large_list(kind):
            walk(f"{path}.list.element", kind.value_type)
        elif pa.types.is_struct(kind):
            for f in kind:
                walk(f"{path}.{f.name}", f.type)
        else:
            out.append((path, kind))

    for f in schema:
        walk(f.name, f.type)
    return out


def write_atomic(table: pa.Table, path: Path, root: Path | str | None = None) -> Path:
    """``write_bytes_atomic`` of ``encode(table)``."""
    return write_bytes_atomic(encode(table), path, root)


def write_bytes_atomic(data: bytes, path: Path, root: Path | str | None = None, digest: str | None = None) -> Path:
    """Replace ``path`` with ``data`` (``files.atomic_write``), its digest
    (``digest``, or computed here) recorded in ``root``'s manifest first,
    once the new bytes are synced and before they are renamed into place
    (``root``: the warehouse the file belongs to; found from the path when
    not given). A file that already holds exactly these bytes, with their
    digest recorded, is left alone (same bytes, same mtime): a rerun that
    computes the same data rewrites nothing, so a run over several assets
    touches only what changed."""
    path = Path(path)
    root = Path(root) if root is not None else warehouse_root_of(path)
    digest = digest or hashlib.sha256(data).hexdigest()
    with storage_faults(path):
        try:
            if (path.stat().st_size == len(data) and recorded_digest(root, path) == digest
                    and path.read_bytes() == data):
                return path
        except OSError:
            pass  # no file yet (or unreadable): write it
        path.parent.mkdir(parents=True, exist_ok=True)
        files.atomic_write(path, data, before_replace=lambda _tmp: write_digest(root, path, digest))
    return path


def read_file(source, columns=None) -> pa.Table:
    """One Parquet file (a path, or a buffer as ``pa.BufferReader``) as a
    table; with ``columns``, those of them the file has (a file of an older
    schema lacks some), from one opening. Read as one file, not through
    ``pq.read_table``: that builds a dataset, and its first call in a
    process imports ``pyarrow.dataset`` (half a second, on the path of the
    night's table run); a partition's hive keys are not in its file either
    way (``publish.read_partition`` puts them back)."""
    with pq.ParquetFile(source) as file:
        return file.read(columns=columns)  # a column the file lacks is left out (read_table would raise)


def records_table(records: list[dict], drop=("level_index", "node_depth"), schema: pa.Schema | None = None) -> pa.Table:
    """Records to an Arrow table; the hive keys live in the path, not the file.
    With ``schema`` the columns are exactly its fields (typed even when every
    value is null or an empty list).

    The very table ``pa.Table.from_pylist`` gives on the records without the
    ``drop`` keys (the columns of the first record, or of ``schema``; a
    record without a column holds null there; each column's type inferred
    as ``pa.array`` infers it), built a column at a time: the records are
    read by C-level getters in one pass instead of being copied without
    their hive keys first; with a schema, as one struct array of
    its fields."""
    if schema is None:
        names = [k for k in records[0] if k not in drop] if records else []
        return pa.Table.from_arrays([pa.array(c) for c in _columns(records, names)], names=names)
    if all(f.nullable and f.name not in drop for f in schema):
        # the records as one struct array of the schema's fields: one conversion call, not one a column
        table = pa.Table.from_struct_array(pa.array(records, type=pa.struct(list(schema))))
        return table.replace_schema_metadata(schema.metadata) if schema.metadata else table
    columns = iter(_columns(records, [n for n in schema.names if n not in drop]))
    empty = [None] * len(records)
    return pa.Table.from_arrays([pa.array(empty if f.name in drop else next(columns), type=f.type) for f in schema],
                                schema=schema)


def _columns(records: list[dict], names: list[str]) -> list:
    """The values of each column ``names[i]`` over the records, in order
    (``None`` where a record lacks the key, as ``from_pylist`` reads it)."""
    if not names:
        return []
    if not records:
        return [[] for _ in names]
    get = itemgetter(*names)
    try:
        rows = list(map(get, records))
    except KeyError:  # some record lacks a column
        return [[r.get(n) for r in records] for n in names]
    return [rows] if len(names) == 1 else list(zip(*rows))


def write_partition(root: Path, dataset: str, key: tuple[int, int], records: list[dict],
                    schema: pa.Schema | None = None) -> Path:
    return write_atomic(records_table(records, schema=schema), partition_path(root, dataset, key), root)


def flat_path(root: Path, dataset: str, name: str) -> Path:
    """The one file of a dataset that is not per row (``FLAT_DATASETS``)."""
    return Path(root) / dataset / f"{name}.parquet"


def remove_partition(root: Path, dataset: str, key: tuple[int, int]) -> None:
    """Drop a partition whose row left the table."""
    path = partition_path(root, dataset, key)
    with storage_faults(path):
        path.unlink(missing_ok=True)
        remove_digest(root, path)
    for d in (path.parent, path.parent.parent):
        try:
            d.rmdir()
        except OSError:
            break
