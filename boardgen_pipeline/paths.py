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
import re
import shutil
import sys
import time
import tomllib
from functools import cache
from pathlib import Path

from boardgen_pipeline.canonical import digest, files_digest

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


# The compiled kernels' cache. Numba invalidates a cached function only when
# its own file changes, and the kernels call each other across files: a cached
# caller would keep running an edited callee's old code. So the cache folder is
# named by a digest of every kernel module and of every module of this package
# they import (transitively): any edit there starts a new folder, and nothing
# compiled from older sources can be found. docs/decisions/kernels.md.
KERNEL_PACKAGES = ("board", "variants")  # where the @njit modules live
KERNEL_CACHE_KEEP = 4  # digest folders kept, the most recently used first
KERNEL_CACHE_GRACE_S = 3600  # a folder used within the last hour is never pruned (a process may run from it)
_IMPORT = re.compile(r"^\s*(?:from\s+(boardgen_pipeline(?:\.\w+)*)\s+import\s+(\([^)]*\)|[^\n]*)"
                     r"|import\s+(boardgen_pipeline(?:\.\w+)*))", re.M)


def _module_file(package: Path, dotted: str) -> Path | None:
    """The file of module ``boardgen_pipeline.<dotted>`` (a package's ``__init__.py``)."""
    path = package.joinpath(*dotted.split(".")[1:]) if "." in dotted else package
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    init = path / "__init__.py"
    return init if init.is_file() else None


def kernel_sources() -> list[Path]:
    """Every module holding a compiled kernel, and every module of this package
    they import, directly or not (their constants are frozen into the kernels)."""
    package = Path(__file__).resolve().parent
    todo = [p for sub in KERNEL_PACKAGES for p in sorted((package / sub).glob("*.py"))
            if "njit" in p.read_text(encoding="utf-8")]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for base, names, plain in _IMPORT.findall(path.read_text(encoding="utf-8")):
            dotted = [plain] if plain else [base] + [f"{base}.{n.split()[0]}" for n in
                                                     names.strip("()").replace("\n", " ").split(",") if n.strip()]
            for d in dotted:
                found = _module_file(package, d)
                if found is not None and found not in seen:
                    todo.append(found)
    return sorted(seen)


def kernel_digest() -> str:
    """16 hex digits naming the kernels' sources (and bounds checking, which
    changes the code compiled from them; numba's own index already refuses a
    cache written by another numba version)."""
    sources, _ = files_digest(Path(__file__).resolve().parent, kernel_sources())
    return digest({"boundscheck": os.environ.get("NUMBA_BOUNDSCHECK", ""), "sources": sources})


def kernel_cache_mark() -> Path:
    """The file a finished warm-up leaves in the kernel cache folder for the
    sources at this path. Numba keeps the kernels of each source folder in
    a subfolder named by that folder's path (and checks each file's
    content), so one digest folder serves every checkout of the same
    sources, and each checkout compiles its own (a fresh clone beside this
    one compiles every kernel again)."""
    package = Path(__file__).resolve().parent
    return kernel_cache_dir() / f".warm-{digest(str(package))}"


def kernel_cache_base() -> Path:
    """``$BOARDGEN_NUMBA_CACHE``, else ``$NUMBA_CACHE_DIR``, else the user's
    cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``; ``%LOCALAPPDATA%`` on
    Windows, ``~/Library/Caches`` on macOS) ``/boardgen/numba``."""
    for name in ("BOARDGEN_NUMBA_CACHE", "NUMBA_CACHE_DIR"):
        env = os.environ.get(name)
        if env:
            return Path(env)
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        root = Path(os.environ["LOCALAPPDATA"])
    elif sys.platform == "darwin":
        root = Path.home() / "Library" / "Caches"
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / PROJECT / "numba"


def prune_kernel_caches(base: Path, keep: Path) -> list[Path]:
    """Delete the digest folders of ``base`` beyond the ``KERNEL_CACHE_KEEP``
    most recently used, except ``keep`` and any used within the grace period.
    Returns the folders deleted."""
    now = time.time()
    try:
        folders = [p for p in base.iterdir() if p.is_dir() and re.fullmatch(r"[0-9a-f]{16}", p.name)]
        folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    gone = []
    for path in folders[KERNEL_CACHE_KEEP:]:
        try:
            if path == keep or now - path.stat().st_mtime < KERNEL_CACHE_GRACE_S:
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        gone.append(path)
    return gone


@cache
def kernel_cache_dir() -> Path:
    """The numba cache folder for these kernel sources, ``<base>/<digest>``,
    set as numba's cache folder (``NUMBA_CACHE_DIR``; numba's own setting when
    numba is loaded already) before any kernel module is compiled or loaded.
    ``BOARDGEN_NUMBA_CACHE`` is set to the base, so child processes find the
    same base. Called by ``board`` and ``variants`` on import."""
    base = kernel_cache_base()
    path = base / kernel_digest()
    new = not path.is_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
        os.utime(path)  # "most recently used"
    except OSError:
        pass  # numba falls back to its own locations when the folder cannot be written
    os.environ["BOARDGEN_NUMBA_CACHE"] = str(base)
    os.environ["NUMBA_CACHE_DIR"] = str(path)
    numba_config = sys.modules.get("numba.core.config")
    if numba_config is not None:
        numba_config.CACHE_DIR = str(path)
    if new:
        prune_kernel_caches(base, path)
    return path
