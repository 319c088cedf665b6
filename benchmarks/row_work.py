"""A row's chain against generating its boards, stage by stage, in one process
(the goal: a row's chain costs little more than its boards). Not a test: it prints figures and ratios.

For the default tables (and, with ``--rows 600``, a table of 600 rows built as
``benchmarks/scale.py`` builds it) it measures, in this process, one core:

1. ``generation``: CPU seconds of the batch entry point alone
   (``generate_batch_from_row``) over every row's 256 scopes, the figure the
   other paths are held against (``benchmarks/scale.py``'s "generator alone"),
   and of its attempt loop alone (``figures=False``: no difficulty figures,
   no player; the rest is the figures and the player);
2. ``run_row``: CPU seconds of ``steps.chain.run_row`` on the same rows (the
   whole chain: boards, F4 checks, overlays and their checks, report, every
   dataset encoded as Parquet bytes), and of each of its stages, read from
   the chain's own stage clock (``RowResult.seconds``), switched to CPU time
   for the run: ``generate``, ``checks``, ``encode``, ``overlays``, ``report``;
3. the bytes a row keeps per dataset (the encoded files the publisher writes);
4. once, what a process's first rows cost more than the next ones (pyarrow
   imports pandas on its first array: ~0.27 s a worker).

The rounds of the generation and of the chain alternate (``--repeat`` of
each); the generation is its best round, the chain its best round with that
round's stages (the machine is shared), and every stage is printed as a ratio
to the generation. The goal:
``run_row`` within ~2x the generation.

    .venv/bin/python benchmarks/row_work.py                  # the default tables, 4 rounds
    .venv/bin/python benchmarks/row_work.py --rows 600 --repeat 2
    .venv/bin/python benchmarks/row_work.py --profile 30     # cProfile of run_row, the 30 costliest calls
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from boardgen_pipeline import catalog as cat
from boardgen_pipeline.board.generator import generate_batch_from_row
from boardgen_pipeline.steps import chain, publish_rows

REPO = Path(__file__).resolve().parent.parent
STAGES = ("generate", "checks", "encode", "overlays", "report")


def generation(tasks, figures: bool = True) -> float:
    """CPU of the batch entry point over ``tasks``; ``figures`` False: the attempt
    loop alone, without the difficulty figures and the player (NaN on code
    whose entry point cannot leave them out)."""
    extra = {} if figures else {"figures": False}
    t0 = time.process_time()
    for t in tasks:
        b = t.batch
        try:
            generate_batch_from_row(b.row, b.spawn_side, b.scopes, b.master_seed, b.header.dig_ap_cost, **extra)
        except TypeError:
            return float("nan")
    return time.process_time() - t0


def chain_round(tasks) -> tuple[float, dict, dict]:
    """CPU of ``run_row`` over ``tasks``, per stage, and the bytes kept per dataset."""
    stages: dict = defaultdict(float)
    kept: dict = defaultdict(int)
    clock = chain.perf_counter
    chain.perf_counter = time.process_time  # the chain's stage clock, in CPU seconds for this run
    try:
        t0 = time.process_time()
        for t in tasks:
            result = chain.run_row(t)
            for k, v in result.seconds.items():
                stages[k] += v
            for f in result.files:
                kept[f.dataset] += len(f.data or b"")
        total = time.process_time() - t0
    finally:
        chain.perf_counter = clock
    return total, dict(stages), dict(kept)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=0, help="also a table of this many rows (scale.py's make_tables)")
    ap.add_argument("--samples", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=4, help="rounds; each figure is the best round")
    ap.add_argument("--profile", type=int, default=0, help="print cProfile's N costliest calls of one round")
    args = ap.parse_args(argv)
    chain.warm_up()
    print(f"python {platform.python_version()} on {platform.machine()}; best of {args.repeat} rounds, CPU seconds")
    tables = [("default", REPO / "tables")]
    tmp = None
    if args.rows:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from scale import make_tables

        tmp = tempfile.TemporaryDirectory()
        tables.append((f"{args.rows} rows", make_tables(Path(tmp.name), args.rows)))
    for name, path in tables:
        c = cat.load_catalog(path)
        keys = c.board_gen.keys()
        tasks = list(publish_rows.row_tasks(None, c, keys, args.samples, 0))
        n = len(tasks)
        print(f"\n{name}: {n} rows x {args.samples} boards")
        if name == "default":  # first use in this process, outside the rounds: pyarrow imports pandas then
            cold = chain_round(tasks[:2])[0]
            print(f"  first 2 rows of a fresh process: {cold - chain_round(tasks[:2])[0]:.3f} s more than warm")
        gens, loops, rounds = [], [], []
        for _ in range(args.repeat):  # alternated, so that a busy spell of the machine hits both alike
            gens.append(generation(tasks))
            loops.append(generation(tasks, figures=False))
            rounds.append(chain_round(tasks))
        gen = min(gens)
        loop = min(loops)
        total, stages, kept = min(rounds, key=lambda r: r[0])
        stages = {s: stages.get(s, 0.0) for s in STAGES}
        print(f"  generation alone  {gen:7.3f} s  {gen / n * 1e3:6.2f} ms a row   1.00x")
        print(f"    attempt loop    {loop:7.3f} s  {loop / n * 1e3:6.2f} ms a row  {loop / gen:5.2f}x")
        print(f"    figures+player  {gen - loop:7.3f} s  {(gen - loop) / n * 1e3:6.2f} ms a row  {(gen - loop) / gen:5.2f}x")
        print(f"  run_row           {total:7.3f} s  {total / n * 1e3:6.2f} ms a row  {total / gen:5.2f}x")
        for s in STAGES:
            print(f"    {s:<15} {stages[s]:7.3f} s  {stages[s] / n * 1e3:6.2f} ms a row  {stages[s] / gen:5.2f}x")
        rest = total - sum(stages.values())
        print(f"    {'(between)':<15} {rest:7.3f} s  {rest / n * 1e3:6.2f} ms a row  {rest / gen:5.2f}x")
        print("  bytes kept a row  " + ", ".join(f"{d} {b / n:,.0f}" for d, b in kept.items())
              + f"; total {sum(kept.values()) / n:,.0f}")
        if args.profile:
            prof = cProfile.Profile()
            prof.runcall(chain_round, tasks)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(args.profile)
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
