"""Fog rows against the same rows without fog, side by side in one run
(goal: a fog row costs at most 2x a fog-free row of the same size and
density, per board). Not a test: it prints figures and ratios.

For every row of the default table with fog it times the row's batch scopes
through the batch entry point (``generate_batch_from_row``, the calibration's
path) and through the per-board API (``generate_from_row``), then the same
for the row with its fog fields zeroed, and prints CPU µs a board and the
ratio (best of N for each side). Usage:

    .venv/bin/python benchmarks/fog_vs_fogfree.py [--boards 256] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import time

from boardgen_pipeline.board.generator import generate_batch_from_row, generate_from_row, warm_up
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.calibration.batch import batch_scopes
from boardgen_pipeline.tables.board_gen import load_board_gen_dir

SPAWN_SIDE = 3


def per_board_us(row, scopes, repeat: int, batch: bool) -> float:
    """Best-of-``repeat`` CPU µs a board over ``scopes``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        if batch:
            generate_batch_from_row(row, SPAWN_SIDE, scopes)
        else:
            for s in scopes:
                generate_from_row(row, SPAWN_SIDE, derive_at("board_gen", s))
        best = min(best, (time.process_time() - t0) / len(scopes) * 1e6)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs, for both sides")
    args = ap.parse_args()
    warm_up()
    table = load_board_gen_dir()
    out = []
    for row in table.rows.values():
        if not row.fog_region_count:
            continue
        clear = row.model_copy(update={"fog_region_count": 0, "fog_target_ratio": 0.0})
        scopes = list(batch_scopes(row.level_index, row.node_depth, args.boards))
        generate_batch_from_row(row, SPAWN_SIDE, scopes[:1])  # this size's workspace made before the timers
        figures = {"row": f"{row.level_index}-{row.node_depth}",
                   "size": f"{row.board_width}x{row.board_height}", "density": row.mine_density,
                   "fog": f"{row.fog_region_count} regions {row.fog_target_ratio:.0%}"}
        for name, batch in (("batch", True), ("per_board", False)):
            fog_us = per_board_us(row, scopes, args.repeat, batch)
            clear_us = per_board_us(clear, scopes, args.repeat, batch)
            figures[name] = {"fog_us": round(fog_us, 1), "fog_free_us": round(clear_us, 1),
                             "ratio": round(fog_us / clear_us, 2)}
        out.append(figures)
        b, p = figures["batch"], figures["per_board"]
        print(f"row {figures['row']:5s} {figures['size']:6s} d={row.mine_density:.2f} {figures['fog']:16s} "
              f"batch {b['fog_us']:7.1f} / {b['fog_free_us']:7.1f} us ({b['ratio']:.2f}x)   "
              f"per-board {p['fog_us']:7.1f} / {p['fog_free_us']:7.1f} us ({p['ratio']:.2f}x)")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
