"""The DuckDB views over the Parquet datasets (SPEC 8 "queried through
DuckDB", SPEC 10; a full disk never removes the
views; a warehouse can be moved and copied).

The DuckDB file holds views only, over ``read_parquet`` globs of each
dataset. It is rebuilt in a temporary file and renamed over
``boardgen.duckdb`` (``files.replacing``: fsync, atomic rename, fsync of the
folder), under a file lock shared by the pipeline's writers only
(``files.lock``), so a writer never opens the live database file: a
reader holding it cannot make a run fail, and a run cannot make a reader
fail. A view over an empty glob cannot be bound, so only datasets with files
get a view.

**Nothing replaces a good database but a verified one.** The new file is
checkpointed explicitly (DuckDB swallows a failed checkpoint at close and
leaves the views in a WAL), synced, reopened read-only and checked to hold
every view, each answering ``limit 0``; only then is it renamed into place.
Any failure (a full disk, a read-only file system) leaves the old database
where it was and raises one ``WarehouseError`` naming the path and the cause.

**Where the views look** (docs/decisions.md): each glob is
``coalesce(getvariable('boardgen_root'), '<absolute root at build time>')
|| '/<dataset>/...'``. ``connect(root)`` -- the one way the pipeline,
``boardgen`` and the tests open the database -- sets ``boardgen_root`` to the
folder the database file is in *now*, so a copied or moved warehouse reads
its own files even on read-only media; a plain ``duckdb warehouse/boardgen.duckdb``
session (no variable) falls back to the build-time path, which is right for
the warehouse where it was built, and ``connect`` rebuilds the views of a
writable copy so that plain sessions read the copy's files from then on.
(DuckDB resolves a relative path against the process's working directory,
not the database file's, so relative globs would break the documented
``duckdb warehouse/boardgen.duckdb`` from the repo root.)
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
from pathlib import Path

from boardgen_pipeline import files, paths
from boardgen_pipeline.errors import WarehouseError
from boardgen_pipeline.warehouse import datasets

ROOT_VARIABLE = "boardgen_root"


def _pattern(dataset: str) -> str:
    one_file = (*datasets.FLAT_DATASETS, datasets.REVIEW)
    return f"/{dataset}/*.parquet" if dataset in one_file else f"/{dataset}/*/*/*.parquet"


def glob_for(root: Path, dataset: str) -> str:
    """The absolute glob of a dataset's files under ``root``."""
    return str(Path(root).resolve()) + _pattern(dataset)


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _located(root: Path, dataset: str) -> str:
    """The SQL expression of a dataset's glob: the session's warehouse root
    when ``connect`` set one, else the root the views were built at."""
    return (f"coalesce(getvariable('{ROOT_VARIABLE}'), {_sql_literal(str(Path(root).resolve()))})"
            f" || {_sql_literal(_pattern(dataset))}")


# Every file of a dataset has the dataset's one schema (the code writes typed columns: a test holds
# every row's files to it), so a view reads the first file's schema only. ``union_by_name`` would
# open every file when the view is bound, in every query: ~80 KB of memory a file, 0.7 GB at 6,000
# rows. Files of an older schema fail the query with DuckDB's "schema mismatch", which
# ``boardgen sql`` turns into "run make run" (the nightly rewrites every row).
VIEW_SQL = {
    "boards": "select * from read_parquet({boards}, hive_partitioning=true)",
    "board_metrics": (
        "select * exclude (layout) from read_parquet({boards}, hive_partitioning=true)"
    ),
    "variant_overlays": "select * from read_parquet({variant_overlays}, hive_partitioning=true)",
    "node_map_draws": "select * from read_parquet({node_map_draws})",
    "calibration_report": (
        "select * from read_parquet({calibration_report}, hive_partitioning=true)"
    ),
    "calibration_strata": "select * from read_parquet({calibration_strata})",
    "calibration_history": (
        "select * from read_parquet({calibration_history}, hive_partitioning=true)"
    ),
    "row_checks": "select * from read_parquet({row_checks}, hive_partitioning=true)",
    "row_drift": "select * from read_parquet({row_drift}, hive_partitioning=true)",
    "calibration_diff": "select * from read_parquet({calibration_diff})",
}


def refresh_views(root: Path) -> Path:
    """(Re)create the DuckDB views over whichever datasets have files: built
    in a temporary database file and renamed into place, so a reader holding
    the database open never blocks a writer (``refresh_views_atomic``)."""
    return refresh_views_atomic(root)


VIEWS_LOCK = ".boardgen.views.lock"


def view_statements(root: Path | str) -> dict[str, str]:
    """The views ``refresh_views`` would create, for the datasets
    that have files now (a view over an empty glob cannot be bound)."""
    root = Path(root)
    located = {name: _located(root, name) for name in datasets.DATASETS}
    out = {}
    for view, sql in VIEW_SQL.items():
        dataset = "boards" if view == "board_metrics" else view
        if glob.glob(glob_for(root, dataset)):
            out[view] = sql.format(**located)
    return out


def _verify_database(path: Path, statements: dict[str, str]) -> None:
    """Reopen ``path`` read-only: every expected view is there, each with the
    digest of its whole statement. (Binding each view would read the schema of
    every file it globs: a cost that grows with the table.)"""
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        found = dict(con.execute("select view_name, comment from duckdb_views() where not internal").fetchall())
    finally:
        con.close()
    if found != {view: _digest(sql) for view, sql in statements.items()}:
        raise WarehouseError(path, f"the rebuilt database holds views {sorted(found)}, "
                                   f"not the {len(statements)} expected ones (disk full?)")


def _digest(sql: str) -> str:
    return hashlib.sha256(sql.encode()).hexdigest()[:16]


def _current(db: Path, statements: dict[str, str]) -> bool:
    """Whether ``db`` holds exactly these views (each carries the digest of its
    statement as its comment): then there is nothing to rebuild."""
    import duckdb

    if not db.is_file():
        return False
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:
        return False
    try:
        found = dict(con.execute("select view_name, comment from duckdb_views() where not internal").fetchall())
    except duckdb.Error:
        return False
    finally:
        con.close()
    return found == {view: _digest(sql) for view, sql in statements.items()}


def refresh_views_atomic(root: Path | str, force: bool = False) -> Path:
    """Rebuild ``<root>/boardgen.duckdb`` (views only) in a temporary file,
    check it, and rename it into place. Writers serialise on a lock file;
    readers never wait. Raises ``WarehouseError`` (old database untouched)
    when the new one cannot be written completely.

    A database that already holds the very views the datasets call for is
    left alone (``force``: rebuild anyway): a view reads its dataset's files
    through a glob, so new files need no rebuild, and the check of a rebuilt
    database reads every file's schema (a run writes what it
    keeps, and no step costs more as the table grows)."""
    import duckdb

    root = Path(root)
    db = root / datasets.DB_NAME
    with datasets.storage_faults(root):
        root.mkdir(parents=True, exist_ok=True)
    wal = None
    try:
        with files.lock(root / VIEWS_LOCK):
            statements = view_statements(root)
            if not force and _current(db, statements):
                return db
            with files.replacing(db) as tmp:
                wal = Path(f"{tmp}.wal")
                con = duckdb.connect(str(tmp))
                try:
                    for view, sql in statements.items():
                        con.execute(f"create view {view} as {sql}")
                        con.execute(f"comment on view {view} is '{_digest(sql)}'")
                    con.execute("checkpoint")  # fails loudly here, where close() would swallow it
                finally:
                    con.close()
                if wal.exists() and wal.stat().st_size:
                    raise WarehouseError(db, "the new views were not checkpointed into the database file (disk full?)")
                _verify_database(tmp, statements)
    except WarehouseError:
        raise
    except (OSError, duckdb.IOException) as exc:
        raise datasets.warehouse_error(exc, db) from exc
    except duckdb.Error as exc:
        if not _storage_text(exc):
            raise
        raise datasets.warehouse_error(exc, db) from exc
    finally:
        if wal is not None:
            try:
                wal.unlink(missing_ok=True)
            except OSError:
                pass
    return db


def _storage_text(exc: BaseException) -> bool:
    return any(needle in str(exc).lower() for needle in datasets.TEXT_CAUSES)


def built_root(con) -> str | None:
    """The root a database's views were built at (from their SQL), or None."""
    for (sql,) in con.execute("select sql from duckdb_views() where not internal").fetchall():
        m = re.search(rf"getvariable\('{ROOT_VARIABLE}'\), '((?:[^']|'')*)'\)", sql or "")
        if m:
            return m.group(1).replace("''", "'")
    return None


def connect(root: Path | str | None = None, read_only: bool = True):
    """Open the warehouse's DuckDB database so that its views read the
    Parquet files beside it, wherever the warehouse now lies (copied, moved).
    A writable warehouse whose views were built elsewhere gets them rebuilt
    first, so plain ``duckdb`` sessions read its own files too."""
    import duckdb

    root = Path(root) if root is not None else paths.default_warehouse()
    db = root / datasets.DB_NAME
    if not db.exists():
        raise WarehouseError(db, "no warehouse database here (run `boardgen calibrate` or `make run` first)")
    here = str(root.resolve())
    try:
        con = duckdb.connect(str(db), read_only=True)
        try:
            moved = built_root(con) not in (None, here)
        finally:
            con.close()
        if moved and os.access(root, os.W_OK):
            try:
                refresh_views_atomic(root)
            except WarehouseError:
                pass  # the session variable below still points the views here
        con = duckdb.connect(str(db), read_only=read_only)
        con.execute(f"set variable {ROOT_VARIABLE} = {_sql_literal(here)}")
    except (OSError, duckdb.IOException) as exc:
        raise datasets.warehouse_error(exc, db) from exc
    return con
