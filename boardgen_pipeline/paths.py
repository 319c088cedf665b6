"""Where the tables, the warehouse, the Dagster home and the compiled
kernels' cache are when nobody says (SPEC 1 "the generator as a plain
function the game's tools can call"; SPEC 8 ``make run`` "into warehouse/";
docs/decisions/packaging.md).

A **checkout** is the repository itself, installed editable (``make run``,
``make test``): the folder above this package holds a ``pyproject.toml``
naming the project ``boardgen`` and the table ``tables/board_gen.toml``. There
the defaults are the checkout's own folders, as the repository lays them
out: ``tables/``, ``warehouse/``, ``.dagster_home/``.

An **installation** (a wheel in a game tool's environment) has neither: its
default tables are the package data ``boardgen_pipeline/default_tables``,
which the wheel builds from the repository's ``tables/`` (one source, no
copy), read through ``importlib.resources`` and never written; what a run
writes goes to the working folder (``./warehouse``, ``./.dagster_home``),
never inside site-packages.

An environment variable wins over both: ``BOARDGEN_TABLES``,
``BOARDGEN_WAREHOUSE``, ``DAGSTER_HOME``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tomllib
from functools import cache
from pathlib import Path

PROJECT = "boardgen"
TABLE_FILE = "board_gen.toml"
PACKAGE_TABLES = "default_tables"  # the wheel's copy of the repository's tables/ (pyproject.toml package-dir)


@cache
def checkout() -> Path | None:
    """The repository this package runs from, or None for an installation."""
    root = Path(__file__).resolve().parent.parent
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    except (OSError, ValueError):
        return None
    if project.get("name") == PROJECT and (root / "tables" / TABLE_FILE).is_file():
        return root
    return None


_RESOURCES = contextlib.ExitStack()
atexit.register(_RESOURCES.close)


@cache
def package_tables() -> Path:
    """The default tables shipped in the package, as a folder on disk."""
    from importlib.resources import as_file, files

    return _RESOURCES.enter_context(as_file(files("boardgen_pipeline").joinpath(PACKAGE_TABLES)))


def default_tables_dir() -> Path:
    """``$BOARDGEN_TABLES``, else the checkout's ``tables/``, else the package's tables."""
    env = os.environ.get("BOARDGEN_TABLES")
    if env:
        return Path(env)
    root = checkout()
    return root / "tables" if root is not None else package_tables()


def tables_are_the_package_default(tables_dir: Path | str) -> bool:
    """Whether ``tables_dir`` is the installed package's own read-only copy."""
    if checkout() is not None:
        return False
    try:
        return Path(tables_dir).resolve() == package_tables().resolve()
    except OSError:
        return False


def _working(name: str) -> Path:
    root = checkout()
    return root / name if root is not None else Path.cwd() / name


def default_warehouse() -> Path:
    """``$BOARDGEN_WAREHOUSE``, else the checkout's ``warehouse/``, else ``./warehouse``."""
    env = os.environ.get("BOARDGEN_WAREHOUSE")
    return Path(env) if env else _working("warehouse")


def default_dagster_home() -> Path:
    """``$DAGSTER_HOME``, else the checkout's ``.dagster_home/``, else ``./.dagster_home``."""
    env = os.environ.get("DAGSTER_HOME")
    return Path(env).resolve() if env else _working(".dagster_home")
