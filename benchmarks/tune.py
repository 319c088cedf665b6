"""``boardgen tune`` against its goals, side by side in one run (SPEC 12;
docs/performance.md "Tuning"). Not a test: it prints figures.

1. The default table, every row aimed at a win rate within +-0.03 (a
   designer's curve: level 1 from 0.92 to 0.80, level 2 from 0.85 to 0.55,
   level 3 from 0.80 to 0.35, linear in depth): ``boardgen tune --workers 2``
   timed (wall, the process tree's CPU), its boards a row (search and
   held-out proof), what it reached and what held out. Goals: <= 60 s wall
   on 2 cores, <= 2,048 boards a row on average.
2. The same rows tuned by a grid sweep at equal precision: every mine count
   of the density range the table uses (0.10..0.35) measured on as many
   boards as the tune's last look gives a candidate (``--max-boards``, 1,024),
   the closest one kept; its boards counted, and its CPU measured in this
   process against the tune's rows run in this process too (one core each,
   alternated, best of ``--repeat``).
3. The 600-row table of ``benchmarks/scale.py`` (levels 4.. copied from level
   3), every level aimed as level 3 is: ``boardgen tune --workers 2`` against
   the nightly's wall on the same table (``scale.run_path``), one after the
   other. Goal: <= 2x the nightly.

    .venv/bin/python benchmarks/tune.py                 # all three
    .venv/bin/python benchmarks/tune.py --skip-scale    # 1 and 2 only (about a minute)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
BOARDGEN = str(Path(sys.executable).with_name("boardgen"))
CURVE = {1: (0.92, 0.80), 2: (0.85, 0.55), 3: (0.80, 0.35)}
TOLERANCE = 0.03


def targets_text(levels: int) -> str:
    out = []
    for level in range(1, levels + 1):
        a, b = CURVE.get(level, CURVE[3])
        out.append(f'[[targets]]\nlevel_index = {level}\nfigure = "win_rate"\nlinear = {{ from = {a}, to = {b} }}\n'
                   f"tolerance = {TOLERANCE}\n")
    return "".join(out)


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds (the process tree) of ``cmd``, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 3):
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def tune_cli(tables: Path, workers: int) -> tuple[float, float, dict]:
    wall, cpu, out = timed([BOARDGEN, "tune", "--tables", str(tables), "--workers", str(workers), "--format", "json"])
    return wall, cpu, json.loads(out)


def sweep(catalog, max_boards: int) -> tuple[int, dict]:
    """Every mine count of densities 0.10..0.35 on ``max_boards`` probe boards, the closest kept (one core)."""
    from boardgen_pipeline.tuning import knobs
    from boardgen_pipeline.tuning.sampler import RowSampler

    boards, best = 0, {}
    for key, target in catalog.targets.rows.items():
        row = catalog.board_gen.rows[key]
        grid = knobs.grid(row, "mine_density", catalog.board_gen.spawn_side)
        sampler = RowSampler(row, grid, target.figure, catalog.board_gen.spawn_side)
        found = []
        for k, value in enumerate(grid.values):
            if 0.10 <= value <= 0.35:
                m = sampler.measure(k, max_boards)
                if not m.failing:
                    found.append((abs(m.estimate.value - target.value), value))
        boards += sampler.boards
        best[key] = min(found)[1] if found else None
    return boards, best


def tune_here(catalog) -> int:
    """The tune's rows in this process, one after the other (one core)."""
    from boardgen_pipeline.steps.pool import RowPool
    from boardgen_pipeline.tuning import run

    with RowPool(1) as pool:
        return run.tune(catalog, run.tasks(catalog), pool).summary()["boards"]


def cpu_of(fn) -> tuple[float, object]:
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out



def outcome(s: dict) -> str:
    """What a tune run's JSON summary says of its boards and its rows."""
    return (f"{s['boards_per_row']:,.0f} boards a row ({s['boards']:,} in all); {s['reached']} reached, "
            f"{s['unchanged']} unchanged, {s['unreachable']} unreachable; held out: {s['heldout_hold']} of "
            f"{s['heldout_proven']} hold")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, default=2, help="local workers of the timed runs (default: 2)")
    p.add_argument("--repeat", type=int, default=2, help="alternated runs of the one-core comparison (default: 2)")
    p.add_argument("--skip-scale", action="store_true", help="leave out the 600-row table (default: off)")
    p.add_argument("--rows", type=int, default=600, help="rows of the scale table (default: 600)")
    args = p.parse_args(argv)
    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.steps.chain import warm_up
    from boardgen_pipeline.tuning.search import DEFAULT_MAX_BOARDS

    warm_up()
    print(f"machine: {os.cpu_count()} cores (shared with other sessions: ratios, not seconds, are the figures)")
    with tempfile.TemporaryDirectory(prefix="boardgen-tune-bench-") as tmp:
        tables = Path(tmp) / "tables"
        shutil.copytree(REPO / "tables", tables)
        (tables / "curve_targets.toml").write_text(targets_text(3))
        wall, cpu, out = tune_cli(tables, args.workers)
        s = out["summary"]
        print(f"default table, win rate +-{TOLERANCE}: wall {wall:.1f} s ({100 * cpu / wall:.0f}% CPU) on "
              f"{args.workers} workers; {outcome(s)}")
        catalog = load_catalog(tables)
        tune_cpu, sweep_cpu = [], []
        for _ in range(args.repeat):
            c, tune_boards = cpu_of(lambda: tune_here(catalog))
            tune_cpu.append(c)
            c, (sweep_boards, _) = cpu_of(lambda: sweep(catalog, DEFAULT_MAX_BOARDS))
            sweep_cpu.append(c)
        print(f"grid sweep at equal precision ({DEFAULT_MAX_BOARDS} boards a density, 0.10..0.35): "
              f"{sweep_boards} boards against the tune's {tune_boards} ({sweep_boards / tune_boards:.1f}x); one core, "
              f"best of {args.repeat}: sweep {min(sweep_cpu):.1f} s CPU, tune {min(tune_cpu):.1f} s "
              f"({min(sweep_cpu) / min(tune_cpu):.1f}x)")
        if args.skip_scale:
            return 0
        import scale

        work = Path(tmp) / "scale"
        big = scale.make_tables(work, args.rows)
        (big / "curve_targets.toml").write_text(targets_text(args.rows // 5))
        scale.become_subreaper()
        night = scale.run_path("nightly", big, work, 256, args.workers, None)
        wall, cpu, out = tune_cli(big, args.workers)
        s = out["summary"]
        print(f"{args.rows} rows: nightly {night['wall']:.1f} s wall, tune {wall:.1f} s wall "
              f"({wall / night['wall']:.2f}x the nightly; {100 * cpu / wall:.0f}% CPU); {outcome(s)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
