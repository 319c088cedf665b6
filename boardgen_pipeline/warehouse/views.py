"""The DuckDB views over the Parquet datasets (SPEC 8 "queried through
DuckDB", SPEC 10; issue 3 "Warehouse").

The DuckDB file holds views only, over ``read_parquet`` globs of each
dataset. It is rebuilt in a temporary file and renamed over
``boardgen.duckdb`` (atomic on POSIX), under a file lock shared by the
pipeline's writers only, so a writer never opens the live database file: a
reader holding it cannot make a run fail, and a run cannot make a reader
fail. A view over an empty glob cannot be bound, so only datasets with files
get a view.
"""

from __future__ import annotations

import fcntl
import glob
import os
import uuid
from contextlib import contextmanager
from pathlib import Path

from boardgen_pipeline.warehouse import datasets


def glob_for(root: Path, dataset: str) -> str:
    if dataset in datasets.FLAT_DATASETS:
        return str(Path(root).resolve() / dataset / "*.parquet")
    return str(Path(root).resolve() / dataset / "*" / "*" / "*.parquet")


VIEW_SQL = {
    "boards": "select * from read_parquet('{boards}', hive_partitioning=true, union_by_name=true)",
    "board_metrics": (
        "select * exclude (layout) from read_parquet('{boards}', hive_partitioning=true, union_by_name=true)"
    ),
    "variant_overlays": "select * from read_parquet('{variant_overlays}', hive_partitioning=true, union_by_name=true)",
    "node_map_draws": "select * from read_parquet('{node_map_draws}', union_by_name=true)",
    "calibration_report": (
        "select * from read_parquet('{calibration_report}', hive_partitioning=true, union_by_name=true)"
    ),
    "calibration_strata": "select * from read_parquet('{calibration_strata}', union_by_name=true)",
}


def refresh_views(root: Path) -> Path:
    """(Re)create the DuckDB views over whichever datasets have files: built
    in a temporary database file and renamed into place, so a reader holding
    the database open never blocks a writer (``publish.refresh_views_atomic``)."""
    return refresh_views_atomic(root)


VIEWS_LOCK = ".boardgen.views.lock"


def view_statements(root: Path | str) -> dict[str, str]:
    """The views ``refresh_views`` would create, for the datasets
    that have files now (a view over an empty glob cannot be bound)."""
    root = Path(root)
    globs = {name: glob_for(root, name) for name in datasets.DATASETS}
    out = {}
    for view, sql in VIEW_SQL.items():
        dataset = "boards" if view == "board_metrics" else view
        if glob.glob(globs[dataset]):
            out[view] = sql.format(**globs)
    return out


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def refresh_views_atomic(root: Path | str) -> Path:
    """Rebuild ``<root>/boardgen.duckdb`` (views only) in a temporary file and
    rename it into place. Writers serialise on a lock file; readers never wait."""
    import duckdb

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    db = root / datasets.DB_NAME
    with _locked(root / VIEWS_LOCK):
        statements = view_statements(root)
        tmp = root / f".{datasets.DB_NAME}.{uuid.uuid4().hex}.tmp"
        try:
            con = duckdb.connect(str(tmp))
            try:
                for view, sql in statements.items():
                    con.execute(f"create view {view} as {sql}")
            finally:
                con.close()
            os.replace(tmp, db)
        finally:
            for leftover in (tmp, Path(f"{tmp}.wal")):
                if leftover.exists():
                    leftover.unlink()
    return db
