"""No-guess boards against ms-toollib's ``laymine_solvable``, side by side in
one run. Not a test: it prints figures and ratios.

For each size (expert 30x16/99, intermediate 16x16/40, beginner 9x9/10) it
generates boards with every safe cell inferable (target 1.0, spawn 3x3 at
the centre, shave 0, no R0 cap) through ``generate_batch_from_row`` with an
attempt budget large enough that every board passes, then asks
``ms_toollib.laymine_solvable`` (a Rust no-guess generator; benchmark-only
extra ``bench``) for boards of the same size and mine count, opened at the
same centre cell. The two solvers differ: ms-toollib's also enumerates, ours
is single_subset, so our boards are the stricter kind (inferable by the
subset rule alone). Usage:

    .venv/bin/python benchmarks/expert_vs_mstoollib.py [--boards 300] [--repeat 3] [--budget 3000]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import time

import ms_toollib

from boardgen_pipeline.board.bench import bench_row
from boardgen_pipeline.board.generator import generate_batch_from_row, warm_up
from boardgen_pipeline.tables.board_gen import mines_target

SIZES = [("expert 30x16/99", 30, 16, 99), ("intermediate 16x16/40", 16, 16, 40), ("beginner 9x9/10", 9, 9, 10)]


def ours(width, height, mines, boards, budget) -> dict:
    density = mines / (width * height - 9)
    assert mines_target(density, width, height, 3) == mines
    row = bench_row(width, height, density, 1.0, width * height, budget, shave=0)
    generate_batch_from_row(row, 3, range(1))
    t0 = time.perf_counter()
    outs = generate_batch_from_row(row, 3, range(boards))
    seconds = time.perf_counter() - t0
    ms = [m for _, m in outs]
    assert all(m["mines_actual"] == mines for m in ms)
    return {"boards_per_s": boards / seconds, "passed": sum(m["exit"] == "passed" for m in ms),
            "mean_attempts": sum(m["attempts_used"] for m in ms) / boards,
            "max_attempts": max(m["attempts_used"] for m in ms)}


def theirs(width, height, mines, boards) -> dict:
    x0, y0 = (height - 1) // 2, (width - 1) // 2  # (row, column) of the centre cell
    ok = 0
    t0 = time.perf_counter()
    for _ in range(boards):
        _, solvable = ms_toollib.laymine_solvable(height, width, mines, x0, y0, 1_000_000)
        ok += bool(solvable)
    seconds = time.perf_counter() - t0
    return {"boards_per_s": boards / seconds, "passed": ok}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs, for both sides")
    ap.add_argument("--budget", type=int, default=3000, help="attempt budget of our row")
    args = ap.parse_args()
    warm_up()
    print(f"machine: {platform.machine()} python {platform.python_version()} ms-toollib "
          f"{importlib.metadata.version('ms-toollib')}")
    rows = []
    for name, w, h, m in SIZES:
        a = max((ours(w, h, m, args.boards, args.budget) for _ in range(args.repeat)), key=lambda r: r["boards_per_s"])
        b = max((theirs(w, h, m, args.boards) for _ in range(args.repeat)), key=lambda r: r["boards_per_s"])
        ratio = a["boards_per_s"] / b["boards_per_s"]
        rows.append({"size": name, "boards": args.boards, "boardgen_boards_per_s": round(a["boards_per_s"], 1),
                     "ms_toollib_boards_per_s": round(b["boards_per_s"], 1), "ratio": round(ratio, 2),
                     "boardgen_passed": a["passed"], "ms_toollib_solvable": b["passed"],
                     "boardgen_mean_attempts": round(a["mean_attempts"], 1), "boardgen_max_attempts": a["max_attempts"]})
        print(f"{name:24s} boardgen {a['boards_per_s']:>8.0f}/s ({a['passed']}/{args.boards} passed, mean attempts "
              f"{a['mean_attempts']:.1f}, max {a['max_attempts']})   ms-toollib {b['boards_per_s']:>8.0f}/s "
              f"({b['passed']}/{args.boards} solvable)   ratio {ratio:.1f}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
