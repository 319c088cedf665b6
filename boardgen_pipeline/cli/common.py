"""What every ``boardgen`` command shares: the user's error, where the tables and the warehouse are,
the rows a ``--rows`` option names, the warehouse checked before work, and where rows run (SPEC 8
"Interfaces": every user error a message and exit 1, never a traceback)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from boardgen_pipeline.paths import default_warehouse


class UserError(Exception):
    """A problem with what the user asked for: printed without a traceback."""


def tables_dir(args) -> Path:
    from boardgen_pipeline.paths import default_tables_dir

    return Path(args.tables) if args.tables else default_tables_dir()


def warehouse_dir(args) -> Path:
    return Path(args.warehouse) if args.warehouse else default_warehouse()


def parse_rows(text: str | None, table, option: str = "--rows") -> list[tuple[int, int]]:
    """The keys a ``--rows`` / ``--row`` value names (every row when it names none), each a row of
    ``table``: the option's syntax was checked by ``cli_args`` before any work."""
    if not text:
        return table.keys()
    from boardgen_pipeline.cli_args import parse_row_key, split_row_keys

    keys = []
    for part in split_row_keys(text):
        key = parse_row_key(part)
        if key is None:
            raise UserError(f"{option}: {part!r} is not L,D (e.g. {option} 1,0 2,4)")
        if key not in table.rows:
            raise UserError(f"{option}: no row ({key[0]},{key[1]}) in {table.path}")
        keys.append(key)
    return keys


@contextmanager
def writable(root: Path):
    """The warehouse checked writable and swept of a killed run's temporary files, before any row is
    computed: a bad warehouse path fails first."""
    from boardgen_pipeline.warehouse import datasets, publish

    datasets.check_writable(root)
    publish.sweep_temp_files(root)
    yield root


def row_pool(args, rows: int):
    """Where a command's rows run: the Dask cluster of ``--dask`` /
    ``$BOARDGEN_DASK`` (reached before any row runs: an address that does not
    answer is one sentence, exit 6), else local workers (``--workers`` /
    ``$BOARDGEN_WORKERS``, checked before any work by ``cli_args``)."""
    from boardgen_pipeline import settings
    from boardgen_pipeline.steps import pool

    names = ("workers", "dask")
    chosen, _ = settings.resolve({"workers": args.workers, "dask": args.dask}, names=names, prog="boardgen calibrate")
    source = (chosen.source or {}).get("dask", "--dask").lstrip("$")
    return pool.build(rows, chosen.workers, chosen.dask, source)
