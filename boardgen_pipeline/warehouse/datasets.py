"""The warehouse: Parquet per partition, DuckDB views over it (SPEC 8, 10;
issue 3 "Warehouse").

Layout (hive): ``<root>/<dataset>/level_index=L/node_depth=D/part.parquet``
for the per-row datasets; ``<root>/<dataset>/<name>.parquet`` for the
datasets that are not per row (``FLAT_DATASETS``: the node-map draws and the
stratified figures).
Every file is written to a temporary name in the same folder and renamed
into place (``os.replace`` is atomic on POSIX), so a crash mid-write never
leaves a partial ``*.parquet`` visible and readers see either the old file or
the new one. Files are written with fixed settings and no wall-clock
metadata, so the same records give the same bytes: a rerun is idempotent.

DuckDB holds only *views* over ``read_parquet(..., hive_partitioning=true)``:
the database file is written once, when the views are (re)created, so many
processes can write partitions at once while readers query the views.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DATASETS = ("boards", "variant_overlays", "node_map_draws", "calibration_report", "calibration_strata")


# Datasets with one file for the whole table, not one per row (no hive keys).
FLAT_DATASETS = ("node_map_draws", "calibration_strata")


DB_NAME = "boardgen.duckdb"


def default_root() -> Path:
    env = os.environ.get("BOARDGEN_WAREHOUSE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "warehouse"  # <repo>/boardgen_pipeline/warehouse/datasets.py


def partition_dir(root: Path, dataset: str, key: tuple[int, int]) -> Path:
    return Path(root) / dataset / f"level_index={key[0]}" / f"node_depth={key[1]}"


def partition_path(root: Path, dataset: str, key: tuple[int, int]) -> Path:
    return partition_dir(root, dataset, key) / "part.parquet"


def write_atomic(table: pa.Table, path: Path) -> Path:
    """Write ``table`` to ``path`` through a temporary file and a rename. A file
    that already holds exactly these bytes is left alone (same bytes, same
    mtime): a rerun that computes the same data rewrites nothing, so a run
    over several assets touches only what changed (issue 13)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf, compression="zstd", write_statistics=True, store_schema=True)
    data = buf.getvalue().to_pybytes()
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return path
    except OSError:
        pass  # no file yet (or unreadable): write it
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def records_table(records: list[dict], drop=("level_index", "node_depth"), schema: pa.Schema | None = None) -> pa.Table:
    """Records to an Arrow table; the hive keys live in the path, not the file.
    With ``schema`` the columns are exactly its fields (typed even when every
    value is null or an empty list)."""
    rows = [{k: v for k, v in r.items() if k not in drop} for r in records]
    return pa.Table.from_pylist(rows, schema=schema)


def write_partition(root: Path, dataset: str, key: tuple[int, int], records: list[dict],
                    schema: pa.Schema | None = None) -> Path:
    return write_atomic(records_table(records, schema=schema), partition_path(root, dataset, key))


def flat_path(root: Path, dataset: str, name: str) -> Path:
    """The one file of a dataset that is not per row (``FLAT_DATASETS``)."""
    return Path(root) / dataset / f"{name}.parquet"


def remove_partition(root: Path, dataset: str, key: tuple[int, int]) -> None:
    """Drop a partition whose row left the table."""
    path = partition_path(root, dataset, key)
    if path.exists():
        path.unlink()
    for d in (path.parent, path.parent.parent):
        try:
            d.rmdir()
        except OSError:
            break
