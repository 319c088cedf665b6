"""Generator throughput on one parameter row (the speed goal against the C baseline).

Builds the row the C baseline of ``../shared/bench`` runs (spawn side 3,
min_safe_count 1), refuses parameters no board can have (ValueError before
any kernel runs), warms the compiled kernels up before the timer starts
(reported apart: on an empty numba cache that is the compilation), then
times ``boards`` generations on scopes ``0..boards-1`` through the batch
entry point the calibration uses (``generate_batch_from_row``: the same
boards and records as the per-board API) without the difficulty figures
and the player: the attempt loop, the same work as the C baseline.
``figures`` also times the entry point whole (figures and player), on the
same boards, reported beside. Wall-clock time is only *measured* here; it
never influences a board.
"""

from __future__ import annotations

import time

from boardgen_pipeline.board.generator import generate_batch_from_row, warm_up
from boardgen_pipeline.board.kernel_args import check_board
from boardgen_pipeline.processes import freeze_long_lived
from boardgen_pipeline.tables.board_gen import BoardGenRow, mines_target

SPAWN_SIDE = 3


def bench_row(width, height, density, target, cap, attempts, shave=1, fog_regions=0, fog_ratio=0.0) -> BoardGenRow:
    """The row benchmarked, refused with ValueError when no board can have it."""
    check_board(width, height, SPAWN_SIDE, None, attempts)
    for name, v, lo in (("density", density, 0.0), ("target", target, 0.0), ("fog ratio", fog_ratio, 0.0)):
        if not (isinstance(v, (int, float)) and lo <= v <= 1.0):
            raise ValueError(f"{name} must be a number in [0, 1], got {v!r}")
    for name, v in (("cap", cap), ("shave", shave), ("fog regions", fog_regions)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
    check_board(width, height, SPAWN_SIDE, mines_target(density, width, height, SPAWN_SIDE), attempts)
    # built directly (not through the table loader): the presets exceed the
    # cost gate and the table's attempt domain on purpose (64x64, budget 400)
    return BoardGenRow.model_construct(
        level_index=1, node_depth=0, board_width=width, board_height=height, mine_density=density,
        inferability_target=target, solver_rules="single_subset", min_safe_count=1,
        max_gen_attempts=attempts, board_type="dungeon", shave_ring_radius=shave, r0_max_cap=cap,
        fog_region_count=fog_regions, fog_target_ratio=fog_ratio, reserved={},
    )


def _timed(row: BoardGenRow, boards: int, figures: bool) -> tuple[float, list]:
    t0 = time.perf_counter()
    outs = generate_batch_from_row(row, SPAWN_SIDE, range(boards), figures=figures)
    return time.perf_counter() - t0, outs


def bench(width, height, density, target, cap, attempts, boards, shave=1, fog_regions=0, fog_ratio=0.0,
          figures=False) -> dict:
    """The attempt loop's throughput (``seconds``, ``boards_per_s``); with
    ``figures``, also the calibration's whole entry point on the same boards
    (``figures_seconds``, ``figures_boards_per_s``), timed after it."""
    if isinstance(boards, bool) or not isinstance(boards, int) or boards < 1:
        raise ValueError(f"boards must be an integer >= 1, got {boards!r}")
    row = bench_row(width, height, density, target, cap, attempts, shave, fog_regions, fog_ratio)
    t0 = time.perf_counter()
    warm_up()  # every kernel compiled or loaded before the timer starts
    # and this board size's workspace made, on boards of other scopes; enough of them that the paths a
    # few boards take have run once: loading a kernel from numba's cache inside the timer cost 0.1 s, a
    # third of 3,000 10x10 boards
    warm = range(boards, boards + 256)
    generate_batch_from_row(row, SPAWN_SIDE, warm, figures=False)
    if figures:
        generate_batch_from_row(row, SPAWN_SIDE, warm)
    freeze_long_lived()  # as a worker does once its kernels are loaded (steps.pool)
    warmup = time.perf_counter() - t0
    seconds, outs = _timed(row, boards, False)
    passed = sum(m["exit"] == "passed" for _, m in outs)
    used = sum(m["attempts_used"] for _, m in outs)
    out = {
        "boards": boards,
        "passed": passed,
        "mean_attempts": used / boards,
        "seconds": round(seconds, 4),
        "boards_per_s": round(boards / seconds, 1),
        "warmup_seconds": round(warmup, 3),
    }
    if figures:
        seconds, _ = _timed(row, boards, True)
        out["figures_seconds"] = round(seconds, 4)
        out["figures_boards_per_s"] = round(boards / seconds, 1)
    return out
