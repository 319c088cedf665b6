"""``make clean`` and ``make clean-all``: delete what a run makes again, and
only that, unless asked (docs/operations.md "Cleaning up").

``make clean`` (no argument) deletes the warehouse's datasets, its DuckDB
file and the Dagster home's runs, which the next ``make run`` makes again,
and keeps what no run can make again: the warehouse's
``calibration_history`` (every past version of every row's report, with
its recorded digests) and a ``dagster.yaml`` that is not the one boardgen
writes (the user's: a PostgreSQL storage, a run launcher). It says what it
kept.

``make clean-all`` (``--all``) names what will be lost, asks (or, where
nobody can answer, needs ``FORCE=1``), then deletes the warehouse and the
Dagster home whole.

Standard library only: it runs before ``make`` has installed anything.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from boardgen_pipeline.warehouse.instance import is_own_yaml  # noqa: E402

HISTORY = "calibration_history"
MANIFEST = "_manifest"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _irreplaceable(warehouse: Path, home: Path) -> list[Path]:
    found = [p for p in (warehouse / HISTORY, warehouse / MANIFEST / HISTORY) if p.exists()]
    yaml_path = home / "dagster.yaml"
    if yaml_path.is_file() and not is_own_yaml(yaml_path.read_text(encoding="utf-8", errors="replace")):
        found.append(yaml_path)
    return found


def clean(warehouse: Path, home: Path) -> list[Path]:
    """Delete what a run makes again; the paths kept."""
    kept = _irreplaceable(warehouse, home)
    if warehouse.is_dir():
        for entry in warehouse.iterdir():
            if entry.name == HISTORY:
                continue
            if entry.name == MANIFEST and entry.is_dir():
                for sub in entry.iterdir():
                    if sub.name != HISTORY:
                        _remove(sub)
                continue
            _remove(entry)
    if home.is_dir():
        for entry in home.iterdir():
            if entry not in kept:
                _remove(entry)
        if not any(home.iterdir()):
            home.rmdir()
    if warehouse.is_dir() and not any(warehouse.iterdir()):
        warehouse.rmdir()
    return kept


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="scripts/clean.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--all", action="store_true", help="also what no run makes again (asks first)")
    p.add_argument("--warehouse", default=os.environ.get("BOARDGEN_WAREHOUSE") or str(REPO / "warehouse"))
    p.add_argument("--dagster-home", default=os.environ.get("DAGSTER_HOME") or str(REPO / ".dagster_home"))
    args = p.parse_args(argv)
    warehouse, home = Path(args.warehouse), Path(args.dagster_home)
    if not args.all:
        kept = clean(warehouse, home)
        print(f"cleaned {warehouse} and {home} (a run makes them again)")
        for path in kept:
            print(f"kept: {path} (no run makes it again; `make clean-all` deletes it)")
        return 0
    lost = _irreplaceable(warehouse, home)
    if lost:
        print("make clean-all deletes what no run can make again:")
        for path in lost:
            print(f"  {path} ({_size(path):,} bytes)")
        if os.environ.get("FORCE") != "1":
            if not sys.stdin.isatty():
                print("nothing deleted: run `make clean-all FORCE=1` to delete them without a question", file=sys.stderr)
                return 1
            if input("delete them? [y/N] ").strip().lower() not in ("y", "yes"):
                print("nothing deleted")
                return 1
    for path in (warehouse, home):
        if path.exists():
            _remove(path)
    print(f"deleted {warehouse} and {home}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
