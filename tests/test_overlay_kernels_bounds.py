"""No input makes the overlay kernels index out of bounds (for
``board.r0``, ``variants.placement_kernels`` and
``variants.check_kernels``).

The fuzz runs in a subprocess with ``NUMBA_BOUNDSCHECK=1`` and a numba cache
of its own (so the cached, unchecked kernels are not reused): an index out
of bounds there raises IndexError instead of writing past an array. It draws
board sizes from 1 x 1 up (both placement kernels: bit rows up to 58
columns, cell by cell beyond), spawn sides that do not fit, tables with packs
larger than the board, and overlays holding any cells at all (off the board,
negative, repeated, in empty or disconnected packs, on a board of another
size), and holds the compiled rule bits equal to the readable checks on
every board."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

FUZZ = textwrap.dedent("""
    import dataclasses, json, sys
    from fractions import Fraction
    import numpy as np
    from numba import config
    assert config.BOUNDSCHECK, "the fuzz must run with NUMBA_BOUNDSCHECK=1"
    from boardgen_pipeline.board.r0 import r0_batch
    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.variants import outcomes
    from boardgen_pipeline.variants.batch import OverlayBatch, place_row
    from boardgen_pipeline.variants.check_kernels import rules_of
    rng = np.random.default_rng(int(sys.argv[1]))
    variation = load_catalog().variation
    seen = {"cases": 0, "boards": 0, "flagged": 0, "placed_cells": 0}
    # 58 columns: the widest board the bit-row placement holds; 61: the cell-by-cell placement
    sizes = [(1, 1, 1), (1, 7, 3), (2, 2, 1), (3, 3, 3), (4, 9, 5), (9, 4, 1), (17, 3, 3), (58, 2, 3), (61, 2, 1)] + [
        (int(rng.integers(1, 20)), int(rng.integers(1, 20)), int(rng.choice([1, 3, 5]))) for _ in range(8)]
    for w, h, side in sizes:
        nc = w * h
        for trial in range(4):
            pack_min = int(rng.integers(1, 10))
            table = dataclasses.replace(variation, percent_of_cells=Fraction(int(rng.integers(0, 51))),
                                        per_level_bonus=int(rng.integers(0, 10)), pack_min=pack_min,
                                        pack_max=int(rng.integers(pack_min, 10)))
            mines = (rng.random((6, nc)) < rng.uniform(0, 0.5)).astype(np.uint8)
            fog = ((rng.random((6, nc)) < 0.1) & (mines == 0)).astype(np.uint8)
            r0_batch(mines, fog, w, h, side)
            level = int(rng.integers(1, 4))
            board_type = ("dungeon", "underdark", "deep_underdark")[level - 1]
            batch = place_row(mines, fog, scopes=list(range(6)), width=w, height=h, spawn_side=side,
                              level_index=level, node_depth=0, board_type=board_type,
                              is_boss=bool(rng.integers(0, 2)), table=table)
            overlays = []
            for i in range(6):
                ov = batch.overlay(i)
                seen["placed_cells"] += len(ov.cells)
                if rng.random() < 0.5:  # anything at all in the cells and packs
                    cells = tuple(int(c) for c in rng.integers(-3, nc + 3, int(rng.integers(0, 12))))
                    packs = tuple(tuple(int(c) for c in rng.integers(-3, nc + 3, int(rng.integers(0, 5))))
                                  for _ in range(int(rng.integers(0, 4))))
                    ov = dataclasses.replace(ov, cells=cells, packs=packs, width=int(rng.choice([w, w + 1])))
                overlays.append(ov)
            faulty = OverlayBatch.from_overlays(overlays, board_scopes=list(range(6)), node_depth=0)
            row = outcomes.check_row(faulty, mines, fog, width=w, height=h, spawn_side=side)
            for i in range(6):
                rules = {x.rule for v in outcomes.board_issues(row.placed(i)).values() for x in v}
                assert set(rules_of(row.flags[i])) == rules, (w, h, overlays[i], rules, rules_of(row.flags[i]))
                seen["flagged"] += bool(rules)
            seen["boards"] += 6
            seen["cases"] += 1
    print(json.dumps(seen))
""")


@pytest.mark.slow  # every overlay kernel compiled again with bounds checks
def test_fuzz_the_overlay_kernels_under_numba_boundscheck(tmp_path):
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "BOARDGEN_NUMBA_CACHE": str(tmp_path / "numba-cache"),
           "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", FUZZ, "11"], env=env, capture_output=True, text=True, cwd=tmp_path,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["cases"] == 17 * 4 and seen["boards"] == 17 * 4 * 6
    assert seen["flagged"] > 100 and seen["placed_cells"] > 300
