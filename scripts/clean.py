"""``make clean`` and ``make clean-all``: delete what a run makes again, and
only that, unless asked (docs/operations.md "Cleaning up").

``make clean`` (no argument) deletes what a run writes into the warehouse (its
datasets, its DuckDB file, its bookkeeping) and into the Dagster home (the
instance's runs, schedules and logs), which the next ``make run`` makes
again, and keeps what no run can make again: the warehouse's
``calibration_history`` (every past version of every row's report, with its
recorded digests in ``_manifest/calibration_history``) and a
``dagster.yaml`` that is not the one boardgen writes (the user's: a
PostgreSQL storage, a run launcher). It says what it deleted and what it kept.

``make clean-all`` (``--all``) names what will be lost, asks (or, where
nobody can answer, needs ``FORCE=1``), then deletes those too.

Neither touches a file no run writes: a folder named by mistake (a
``BOARDGEN_WAREHOUSE`` or ``DAGSTER_HOME`` that points at something else) keeps
everything that is not a warehouse's or a Dagster home's, and the script names
what it left.

Standard library only: it runs before ``make`` has installed anything (so the
names below are written out; tests/test_clean.py holds them to the library's).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from boardgen_pipeline.warehouse.instance import is_own_yaml  # noqa: E402 - stdlib only underneath

HISTORY = "calibration_history"  # warehouse.datasets.HISTORY
REVIEW = "calibration_diff"  # warehouse.datasets.REVIEW: the last `boardgen diff --save`, which no run makes
MANIFEST = "_manifest"  # warehouse.datasets.MANIFEST
# What a run writes at the top of a warehouse (warehouse.datasets, warehouse.publish, warehouse.views)
WAREHOUSE_MADE = frozenset({
    "boards", "variant_overlays", "calibration_report", "row_checks",  # datasets.ROW_DATASETS
    "node_map_draws", "calibration_strata",  # datasets.FLAT_DATASETS
    "row_drift",  # datasets.DRIFT: made again by the next nightly that finds the drift
    "_tables",  # steps.pinned_tables.PINNED: the tables a night pinned
    "boardgen.duckdb", "boardgen.duckdb.wal",  # datasets.DB_NAME, and DuckDB's log beside it
    ".boardgen.views.lock",  # views.VIEWS_LOCK
    "_rejected", "_damaged",  # publish.REJECTED, publish.DAMAGED
    "godot",  # export.godot.NIGHT_FOLDER: the nightly's Godot export on green
    MANIFEST,
})
# What Dagster and boardgen write at the top of a Dagster home
HOME_MADE = frozenset({
    "history", "storage", "schedules", "logs", ".logs_queue", ".nux", ".telemetry",  # Dagster's SQLite instance
    ".boardgen-init.lock",  # boardgen_dagster.home's lock
})
YAML = "dagster.yaml"
TEMP_SUFFIX = ".tmp"  # files.TEMP_SUFFIX: a write interrupted half-way leaves `.<name>.<pid>.<nonce>.tmp`


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _made_by_a_run(entry: Path, names: frozenset[str]) -> bool:
    return entry.name in names or (entry.name.startswith(".") and entry.name.endswith(TEMP_SUFFIX))


def irreplaceable(warehouse: Path, home: Path) -> list[Path]:
    """What no run makes again, where it exists: the calibration history, its
    digests, a ``dagster.yaml`` the user wrote."""
    found = [p for name in (HISTORY, REVIEW) for p in (warehouse / name, warehouse / MANIFEST / name) if p.exists()]
    yaml_path = home / YAML
    if yaml_path.is_file() and not is_own_yaml(yaml_path.read_text(encoding="utf-8", errors="replace")):
        found.append(yaml_path)
    return found


def plan(warehouse: Path, home: Path, everything: bool = False) -> tuple[list[Path], list[Path], list[Path]]:
    """``(delete, keep, foreign)``: what ``clean`` deletes, the irreplaceable
    entries it keeps (``everything``: deletes them too), and the entries no run
    writes, which it leaves alone."""
    keep = irreplaceable(warehouse, home)
    delete, foreign = [], []
    if warehouse.is_dir():
        for entry in sorted(warehouse.iterdir()):
            if entry.name == MANIFEST and entry.is_dir() and not entry.is_symlink():
                delete += [sub for sub in sorted(entry.iterdir()) if sub.name != HISTORY]
            elif entry.name == HISTORY:
                continue
            elif _made_by_a_run(entry, WAREHOUSE_MADE):
                delete.append(entry)
            else:
                foreign.append(entry)
    if home.is_dir():
        for entry in sorted(home.iterdir()):
            if entry.name == YAML:
                if entry not in keep:
                    delete.append(entry)  # boardgen's own, unedited: the next run writes it again
            elif _made_by_a_run(entry, HOME_MADE):
                delete.append(entry)
            else:
                foreign.append(entry)
    if everything:
        delete, keep = delete + keep, []
    return delete, keep, foreign


def _remove_if_empty(folder: Path) -> None:
    """The folder itself, once nothing is left in it (a link to a folder stays: it is the user's)."""
    for path in (folder / MANIFEST, folder):
        if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()


def clean(warehouse: Path, home: Path, everything: bool = False) -> tuple[list[Path], list[Path], list[Path]]:
    """Delete what :func:`plan` says; returns it."""
    delete, keep, foreign = plan(warehouse, home, everything)
    for path in delete:
        _remove(path)
    for folder in (warehouse, home):
        _remove_if_empty(folder)
    return delete, keep, foreign


def _size(path: Path) -> int:
    if not path.is_dir():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file())


def _report(deleted: list[Path], kept: list[Path], foreign: list[Path], warehouse: Path, home: Path) -> None:
    if deleted:
        print(f"deleted {len(deleted)} entr{'y' if len(deleted) == 1 else 'ies'} of {warehouse} and {home} "
              f"(a run makes them again)")
    else:
        print(f"nothing to delete in {warehouse} nor {home}")
    for path in kept:
        print(f"kept: {path} (no run makes it again; `make clean-all` deletes it)")
    for path in foreign:
        print(f"left alone: {path} (not something a run writes)")


def _answer(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:  # Ctrl-D, or a terminal that closed: no answer is no
        print()
        return False


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="scripts/clean.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--all", action="store_true", help="also what no run makes again (asks first)")
    p.add_argument("--warehouse", default=os.environ.get("BOARDGEN_WAREHOUSE") or str(REPO / "warehouse"))
    p.add_argument("--dagster-home", default=os.environ.get("DAGSTER_HOME") or str(REPO / ".dagster_home"))
    args = p.parse_args(argv)
    warehouse, home = Path(args.warehouse), Path(args.dagster_home)
    if not args.all:
        _report(*clean(warehouse, home), warehouse, home)
        return 0
    lost = irreplaceable(warehouse, home)
    if lost:
        print("make clean-all deletes what no run can make again:")
        for path in lost:
            print(f"  {path} ({_size(path):,} bytes)")
        if os.environ.get("FORCE") != "1":
            if not sys.stdin.isatty():
                print("nothing deleted: run `make clean-all FORCE=1` to delete them without a question", file=sys.stderr)
                return 1
            if not _answer("delete them? [y/N] "):
                print("nothing deleted")
                return 1
    _report(*clean(warehouse, home, everything=True), warehouse, home)
    return 0


if __name__ == "__main__":
    sys.exit(main())
