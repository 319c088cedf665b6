"""Generator throughput on one parameter row (issue 2 "Speed"; issue 7).

Builds the row the C baseline of ``../shared/bench`` runs (spawn side 3,
min_safe_count 1), warms the compiled kernels up (reported apart), then
times ``boards`` generations on scopes ``0..boards-1``. Wall-clock time is
only *measured* here; it never influences a board.
"""

from __future__ import annotations

import time

from boardgen_pipeline.board.generator import generate_from_row
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.tables.board_gen import BoardGenRow


def bench_row(width, height, density, target, cap, attempts, shave=1) -> BoardGenRow:
    # built directly (not through the table loader): the presets exceed the
    # cost gate on purpose (30x16 x 16 attempts = 7680 is fine; 64x64 is not)
    return BoardGenRow.model_construct(
        level_index=1, node_depth=0, board_width=width, board_height=height, mine_density=density,
        inferability_target=target, solver_rules="single_subset", min_safe_count=1,
        max_gen_attempts=attempts, board_type="dungeon", shave_ring_radius=shave, r0_max_cap=cap,
        fog_region_count=0, fog_target_ratio=0.0, reserved={},
    )


def bench(width, height, density, target, cap, attempts, boards, shave=1) -> dict:
    row = bench_row(width, height, density, target, cap, attempts, shave)
    t0 = time.perf_counter()
    generate_from_row(row, 3, derive_at("board_gen", 0))  # JIT load/compile
    warmup = time.perf_counter() - t0
    passed = 0
    used = 0
    t0 = time.perf_counter()
    for scope in range(boards):
        _, m = generate_from_row(row, 3, derive_at("board_gen", scope))
        passed += m["exit"] == "passed"
        used += m["attempts_used"]
    seconds = time.perf_counter() - t0
    return {
        "boards": boards,
        "passed": passed,
        "mean_attempts": used / boards,
        "seconds": round(seconds, 4),
        "boards_per_s": round(boards / seconds, 1),
        "warmup_seconds": round(warmup, 3),
    }
