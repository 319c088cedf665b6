"""The Dagster instance's SQL storage, tuned in each of the project's own
processes before it opens the instance (docs/performance.md "The nightly",
"Where the bytes go"; docs/decisions/private-dagster-api.md): SQLite pages
of 1 KB for the databases it creates, and Dagster's migration scripts read
once. No Dagster here: SQLAlchemy's and alembic's public API, which
Dagster's storage uses. The webserver, the daemon and the run workers they
launch are Dagster's own processes and keep Dagster's defaults.
"""

from __future__ import annotations

import sqlite3


def tune_instance_storage() -> None:
    """Both tunings below, in this process, before it opens the instance
    (``ensure_dagster_home``, each of ``boardgen nightly``'s lanes); a
    second call adds nothing."""
    small_sqlite_pages()
    alembic_scripts_read_once()


SQLITE_PAGE_SIZE = 1024  # bytes; SQLite's default is 4,096


def small_sqlite_pages() -> None:
    """Every SQLite database this process creates through SQLAlchemy gets
    pages of ``SQLITE_PAGE_SIZE`` bytes: Dagster's storage on a SQLite home
    (the event log's index, each run's own file, runs, schedules). Why: an
    event changes about 13 pages (its row, five indexes, its tags and theirs,
    the asset's row), each written whole to the write-ahead log and again at
    the checkpoint, so the bytes a night writes follow the page size more
    than the event's ~6 KB (docs/performance.md "Where the bytes go"). SQLite
    applies the size only to a database that has no table yet: an existing
    file keeps its pages, a PostgreSQL or DuckDB connection is not touched,
    and a second call adds nothing."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    if not event.contains(Engine, "connect", _page_size):
        event.listen(Engine, "connect", _page_size)


def _page_size(dbapi_connection, _record) -> None:
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.execute(f"PRAGMA page_size = {SQLITE_PAGE_SIZE}")


def alembic_scripts_read_once() -> None:
    """Dagster's migration scripts read once in this process, not at each
    storage it opens. Why: every SQL storage checks its schema's alembic
    revision against the scripts' head, and each check builds a new
    ``alembic.script.ScriptDirectory`` (alembic's public API), which reads
    and executes every script (about 90 files) again: creating a home read
    them 14 times, and each run's own SQLite file once more (making and
    opening a home 1.59 -> 1.32 s, the default table's night 11.6 -> 11.0 s:
    docs/performance.md "The nightly"). The scripts are the
    installed Dagster's and do not change while a process runs, so
    ``ScriptDirectory.from_config`` keeps one directory per configuration
    (its options, its hooks, its messaging options): a migration
    (``instance.upgrade``) reads the same scripts, and the database's own
    revision is read from the database at every check, as before. A second
    call adds nothing."""
    from alembic.script import ScriptDirectory

    if getattr(ScriptDirectory.from_config, "boardgen_read_once", False):
        return
    read = ScriptDirectory.from_config.__func__
    directories: dict = {}

    def options(config, name) -> tuple:
        # ``here`` is the ini file's folder: Dagster's storages each have an ini file of the same
        # options, and the values that name a path hold it already, interpolated
        return tuple(sorted((k, v) for k, v in (config.get_section(name) or {}).items() if k != "here"))

    def from_config(cls, config):
        key = (cls, options(config, config.config_ini_section), options(config, "post_write_hooks"),
               tuple(sorted(config.messaging_opts.items())))
        found = directories.get(key)
        if found is None:
            found = directories[key] = read(cls, config)
        return found

    from_config.boardgen_read_once = True
    ScriptDirectory.from_config = classmethod(from_config)
