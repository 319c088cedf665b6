"""Which local pool runs the rows (the earlier pool leaned on CPython's
private attributes). Not a test: it prints figures.

For each pool it runs every row of the default tables (15 rows x 256
boards: ``chain.run_row``, what ``boardgen calibrate`` sends a worker) on 2
workers, pool start-up included, and prints the median wall seconds and rows
per second of ``--repeat`` runs, twice: with no worker dying, and with the
worker that first runs row (2,2) killed (``os._exit(9)``, as an out-of-memory
kill would) -- the cost of a killed worker is the difference. Runs of the
pools alternate, so a neighbour's load falls on all of them alike.

Pools: ``pebble`` (``steps.pool.RowPool``, the one in use), ``dask`` (the same
class on a ``distributed.LocalCluster`` of 2 single-threaded processes), and
``--baseline FILE``: another ``RowPool`` implementation from a file, e.g. the
``concurrent.futures`` pool that came before pebble::

    git show 054da6b:boardgen_pipeline/steps/pool.py > /tmp/futures_pool.py
    .venv/bin/python benchmarks/pool_choice.py --baseline /tmp/futures_pool.py
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boardgen_pipeline.catalog import load_catalog  # noqa: E402
from boardgen_pipeline.steps import chain  # noqa: E402
from boardgen_pipeline.steps.pool import RowPool  # noqa: E402
from boardgen_pipeline.steps.publish_rows import row_tasks  # noqa: E402

VICTIM = (2, 2)


def run_or_die(item):
    """``chain.run_row`` of the task, but the first run of the victim row kills its worker."""
    task, marker = item
    if marker and task.key == VICTIM and not Path(marker).exists():
        Path(marker).touch()
        os._exit(9)
    return chain.run_row(task)


def _baseline(path: str):
    """The ``RowPool`` of the module file at ``path``, imported by its name (spawned
    workers import it again by that name, from the folder put on ``PYTHONPATH``)."""
    folder = str(Path(path).resolve().parent)
    sys.path.insert(0, folder)
    os.environ["PYTHONPATH"] = os.pathsep.join([folder, *filter(None, [os.environ.get("PYTHONPATH")])])
    return importlib.import_module(Path(path).stem).RowPool


def one_run(make, catalog, samples: int, kill: bool) -> tuple[float, int, list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        marker = str(Path(tmp) / "killed") if kill else ""
        tasks = [(t, marker) for t in row_tasks(tmp, catalog, catalog.board_gen.keys(), samples)]
        t0 = time.perf_counter()
        with make() as pool:
            outcomes = list(pool.map_unordered(run_or_die, tasks))
            notes = list(pool.notes)
        seconds = time.perf_counter() - t0
    failed = [o for o in outcomes if o.error is not None]
    assert len(outcomes) == len(tasks) and not failed, failed
    return seconds, len(outcomes), notes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=256)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--baseline", help="a file defining another RowPool (e.g. the concurrent.futures one)")
    p.add_argument("--pools", default="pebble,dask", help="comma-separated: pebble, dask (default: both)")
    args = p.parse_args()
    catalog = load_catalog()
    chain.warm_up()  # compile once, before any pool is timed
    pools = {}
    if args.baseline:
        pools["baseline"] = (lambda cls: lambda: cls(2))(_baseline(args.baseline))
    if "pebble" in args.pools:
        pools["pebble"] = lambda: RowPool(2)
    if "dask" in args.pools:
        pools["dask"] = lambda: RowPool(dask_local_workers=2)
    seconds = {(name, kill): [] for name in pools for kill in (False, True)}
    notes = {}
    for _ in range(args.repeat):
        for kill in (False, True):
            for name, make in pools.items():
                s, rows, said = one_run(make, catalog, args.samples, kill)
                seconds[(name, kill)].append(s)
                notes[(name, kill)] = said
    print(f"{len(catalog.board_gen.keys())} rows x {args.samples} boards, 2 workers, median of {args.repeat} runs")
    print(f"{'pool':<10} {'no death s':>10} {'rows/s':>7} {'one death s':>11} {'rows/s':>7} {'death costs s':>13}")
    for name in pools:
        a, b = statistics.median(seconds[(name, False)]), statistics.median(seconds[(name, True)])
        print(f"{name:<10} {a:>10.2f} {rows / a:>7.2f} {b:>11.2f} {rows / b:>7.2f} {b - a:>13.2f}")
    for (name, kill), said in notes.items():
        if kill:
            print(f"  {name}: {' | '.join(said) or '(no note)'}")


if __name__ == "__main__":
    main()
