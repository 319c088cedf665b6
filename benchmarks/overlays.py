"""Variant overlays of a row against generating its boards, side by side in
one run (goal: the overlays of a board cost no more than generating it).
Not a test: it prints figures and ratios.

For a few default rows it times, per board (CPU µs, best of N):

- ``generate``: the row's calibration scopes through the batch entry point
  (``generate_batch_from_row``);
- ``overlays``: what the chain does after the boards are published: the
  layouts read into arrays (``board.r0.layouts_to_arrays``), placement
  (``variants.batch.place_row``), the Arrow table (``to_arrow``), then the
  checks on what was written (``OverlayBatch.from_arrow``, R0 recomputed,
  compiled rule bits, the five outcomes); split into ``place``, ``arrow``
  and ``checks``.

The per-board Python path this replaced cost 200-620 µs a board (see
docs/performance.md).

Usage:

    .venv/bin/python benchmarks/overlays.py [--boards 256] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from boardgen_pipeline.board.generator import generate_batch_from_row, warm_up
from boardgen_pipeline.board.r0 import layouts_to_arrays
from boardgen_pipeline.calibration.batch import batch_scopes
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.variants import outcomes
from boardgen_pipeline.variants.batch import OverlayBatch, place_row

ROWS = [(1, 0), (1, 4), (2, 2), (2, 4), (3, 0), (3, 3)]


def best_us(fn, repeat: int, boards: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best / boards * 1e6


def bench_row(key, table, variation, weights, args) -> dict:
    """The figures of one row (see the module docstring)."""
    row = table.rows[key]
    spawn = table.spawn_side
    W, H = row.board_width, row.board_height
    scopes = list(batch_scopes(*key, args.boards))
    gens = generate_batch_from_row(row, spawn, scopes)
    records = [{**g.metrics, "level_index": key[0], "node_depth": key[1], "batch_fingerprint": "bfp"} for g in gens]
    layouts = [r["layout"] for r in records]
    place_kw = dict(scopes=scopes, master_seed=0, width=W, height=H, spawn_side=spawn, level_index=key[0],
                    node_depth=key[1], board_type=row.board_type, is_boss=table.is_boss_row(key), table=variation)
    state = {}

    def place():
        mines, fog = layouts_to_arrays(layouts, W, H)
        state["batch"] = place_row(mines, fog, **place_kw)

    def arrow():
        state["table"] = state["batch"].to_arrow("bfp", "ofp")

    def checks():
        # what the chain does: read the written table back, the boards from their layouts
        batch = OverlayBatch.from_arrow(state["table"], level_index=key[0], node_depth=key[1])
        mines, fog = layouts_to_arrays(layouts, W, H)
        state["outcomes"] = outcomes.overlay_outcomes(batch, mines, fog, width=W, height=H, spawn_side=spawn,
                                                      variation=variation, weights=weights, board_scopes=scopes)

    def everything():
        place()
        arrow()
        checks()

    everything()
    assert all(o.passed for o in state["outcomes"]), [o.description for o in state["outcomes"] if not o.passed]
    figures = {"row": f"{key[0]}-{key[1]}", "size": f"{W}x{H}", "fog": row.fog_region_count,
               "boss": table.is_boss_row(key)}
    figures["generate_us"] = best_us(lambda: generate_batch_from_row(row, spawn, scopes), args.repeat, args.boards)
    figures["overlays_us"] = best_us(everything, args.repeat, args.boards)
    figures["place_us"] = best_us(place, args.repeat, args.boards)
    figures["arrow_us"] = best_us(arrow, args.repeat, args.boards)
    figures["checks_us"] = best_us(checks, args.repeat, args.boards)
    figures["ratio"] = figures["overlays_us"] / figures["generate_us"]
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=7, help="best of N runs")
    args = ap.parse_args()
    print(f"machine: {platform.platform()} {platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}")
    warm_up()
    catalog = load_catalog()
    table, variation, weights = catalog.board_gen, catalog.variation, catalog.resources
    out = []
    for key in ROWS:
        f = bench_row(key, table, variation, weights, args)
        out.append(f)
        print(f"row {f['row']:4s} {f['size']:5s} fog {f['fog']} boss {str(f['boss']):5s}  generate {f['generate_us']:6.1f} us"
              f"   overlays {f['overlays_us']:5.1f} us (place {f['place_us']:4.1f} + arrow {f['arrow_us']:4.1f} + "
              f"checks {f['checks_us']:4.1f})  ratio {f['ratio']:.2f}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
