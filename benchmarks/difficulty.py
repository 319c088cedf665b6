"""Cost of the per-board difficulty figures (full logic must stay
cheap): ``board.difficulty.compute`` against the generation of the same
boards, both measured here, in this process (best of 5 passes over the same
boards, in CPU time of this process, so another process stealing the CPU
inflates neither). Not a test.

    .venv/bin/python benchmarks/difficulty.py [boards]

Per 16x16 row: generation and figures in µs per board (the generator's own
time, which includes one figures call, minus that call), the
ratio, the exact solver's share (figures with a zero enumeration budget),
the boards single_subset leaves unfinished (where complete logic runs at
all), the share complete logic solves, and the largest enumeration.
"""

from __future__ import annotations

import sys
import time

from boardgen_pipeline.board import difficulty
from boardgen_pipeline.board.generator import generate_from_row, warm_up
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.tables.board_gen import BoardGenRow


def best(fn, repeats: int = 5) -> float:
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return min(out)


def row(density: float, fog: bool) -> BoardGenRow:
    extra = {"fog_region_count": 1, "fog_target_ratio": 0.05} if fog else {}
    return BoardGenRow(level_index=1, node_depth=0, board_width=16, board_height=16, mine_density=density,
                       inferability_target=0.85, min_safe_count=1, board_type="dungeon", shave_ring_radius=1,
                       r0_max_cap=80, max_gen_attempts=32, **extra)


def main(n: int = 256) -> None:
    warm_up()
    print("| 16x16 row | generate µs/board | figures µs/board | ratio | enumeration µs | unfinished by "
          "single_subset | solvable by full logic | max nodes |")
    print("|---|---|---|---|---|---|---|---|")
    over = 0
    for density, fog in ((0.15, False), (0.20, False), (0.25, False), (0.20, True)):
        r = row(density, fog)
        boards = [generate_from_row(r, 3, derive_at("board_gen", i)).board for i in range(n)]
        calls = [(b.mines, b.fog) for b in boards]
        fig = best(lambda calls=calls: [difficulty.compute(16, 16, 3, m, f) for m, f in calls]) / n
        no_exact = best(lambda calls=calls: [difficulty.compute(16, 16, 3, m, f, budget=0) for m, f in calls]) / n
        gen = best(lambda r=r: [generate_from_row(r, 3, derive_at("board_gen", i)) for i in range(n)], 3) / n - fig
        outs = [difficulty.compute(16, 16, 3, m, f) for m, f in calls]
        safe = [b.width * b.height - sum(b.mines) for b in boards]
        unfinished = sum(o["r_infinity"] < s for o, s in zip(outs, safe))
        solvable = sum(o["solvable_full_logic"] for o in outs)
        nodes = max(o["nodes"] for o in outs)
        print(f"| density {density}{' + fog' if fog else ''} | {gen * 1e6:.0f} | {fig * 1e6:.0f} | {fig / gen:.2f} | "
              f"{max(0.0, fig - no_exact) * 1e6:.0f} | {unfinished}/{n} | {solvable}/{n} | {nodes} |")
        over += sum(o["nodes"] < 0 for o in outs)
    print(f"boards over the enumeration budget: {over}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 256)
