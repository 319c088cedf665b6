"""The perfect player on standard minesweeper boards, beside published
solvers' win rates (docs/fairness.md). Not a test: it prints
figures.

Boards: beginner 9x9/10, intermediate 16x16/40, expert 30x16/99, mines
uniform over every cell but the mine-free 3x3 square at the centre
``((W-1)//2, (H-1)//2)`` (the "zero start" rule: the first click at the
centre is an opening), drawn from ``numpy.random.Generator(PCG64(seed))``
with one fixed seed per preset (no global random state). Each board is
played by ``board.player.play_batch`` (spawn side 3): R0, logic, and the
lowest exact mine probability when a guess is forced.

With ``--tables`` it also plays the default tables' nightly batches (every
row's 256 scopes) and prints, per row, what ``inferability_target`` means
for a perfect player: how many boards need a guess, how many guesses, how
often they kill.

    .venv/bin/python benchmarks/fairness_winrates.py [--boards 3000] [--presets beginner expert] [--tables]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from boardgen_pipeline.board import player

# (name, width, height, mines, seed, published safe-start win rates with
# their rule and source; docs/fairness.md has the links)
PRESETS = {
    "beginner": (9, 9, 10, 30_009, "MineSweeperProb PSEQ, 9x9/10 zero start at the centre (5,5): 96.25%"),
    "intermediate": (16, 16, 40, 30_016, "MineSweeperProb PSEQ, 16x16/40 zero start at (8,8): 87.44%"),
    "expert": (30, 16, 99, 30_030, "MineSweeperProb PSEQ, 30x16/99 zero start at (8,14): 51.38%; "
                                   "JSMinesweeper 54% (zero start at (3,3)), 40.7% classic (safe start in a corner, "
                                   "3.3 guesses a win)"),
}

CHUNK = 500  # boards per kernel call


def boards(width: int, height: int, mines: int, count: int, seed: int) -> np.ndarray:
    """``count`` layouts (rows of uint8 cells): ``mines`` distinct cells
    drawn uniformly outside the 3x3 square at the centre."""
    rng = np.random.Generator(np.random.PCG64(seed))
    cx, cy = (width - 1) // 2, (height - 1) // 2
    cells = np.arange(width * height)
    outside = cells[(np.abs(cells % width - cx) > 1) | (np.abs(cells // width - cy) > 1)]
    out = np.zeros((count, width * height), np.uint8)
    for b in range(count):
        out[b, rng.choice(outside, mines, replace=False)] = 1
    return out


def sweep(name: str, count: int) -> dict:
    width, height, mines, seed, published = PRESETS[name]
    layouts = boards(width, height, mines, count, seed)
    player.play_batch(width, height, 3, layouts[:1])  # compiled (or loaded) before the timer
    t0 = time.process_time()
    cols: dict[str, list] = {k: [] for k in player.FIELDS}
    for start in range(0, count, CHUNK):
        part = player.play_batch(width, height, 3, layouts[start:start + CHUNK])
        for k in player.FIELDS:
            cols[k] += part[k]
    seconds = time.process_time() - t0
    analysed = [w for w in cols["won"] if w is not None]
    won = sum(analysed)
    n = len(analysed)
    rate = won / n
    guesses = cols["forced_guesses"]
    wins_guesses = [g for g, w in zip(guesses, cols["won"]) if w]
    first = [float(p) for p in cols["first_guess_p_safe"] if p is not None]
    return {
        "preset": f"{name} {width}x{height}/{mines}",
        "boards": count,
        "not_analysed": count - n,
        "win_rate": rate,
        "stderr": math.sqrt(rate * (1 - rate) / n),
        "no_guess_share": sum(g == 0 for g in guesses) / count,
        "guesses_per_game": sum(guesses) / count,
        "guesses_per_win": sum(wins_guesses) / max(1, len(wins_guesses)),
        "mean_survival": float(np.mean([s for s in cols["survival"] if s is not None])),
        "mean_first_guess_p_safe": float(np.mean(first)) if first else float("nan"),
        "cpu_seconds": seconds,
        "published": published,
    }


def tables_figures(samples: int) -> None:
    """The perfect player on the default tables' batches, a line a row."""
    from boardgen_pipeline.board.generator import generate_batch_from_row
    from boardgen_pipeline.calibration.batch import batch_scopes
    from boardgen_pipeline.tables.board_gen import load_board_gen_dir

    table = load_board_gen_dir()
    print("| row | board | density | fog | target | R∞ = S | needs a guess | guesses a board | guesses a guessing board "
          "| won | mean survival | first guess P(safe) | open at first guess |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key, row in sorted(table.rows.items()):
        out = generate_batch_from_row(row, table.spawn_side, batch_scopes(*key, samples), 0, table.header.dig_ap_cost)
        mines = np.stack([np.frombuffer(b.mines, np.uint8) for b, _ in out])
        fog = np.zeros_like(mines)
        for i, (b, _) in enumerate(out):
            fog[i, list(b.fog)] = 1
        ms = [m for _, m in out]
        cols = player.play_batch(row.board_width, row.board_height, table.spawn_side, mines, fog,
                                 [m["revealed"] for m in ms], [m["safe_count"] for m in ms],
                                 [m["solvable_full_logic"] for m in ms])
        g = cols["forced_guesses"]
        guessing = [x for x in g if x]
        won = [w for w in cols["won"] if w is not None]
        first = [float(p) for p in cols["first_guess_p_safe"] if p is not None]
        share = [float(s) for s in cols["open_share_at_first_guess"] if s is not None]
        fog_text = f"{row.fog_region_count}, {row.fog_target_ratio}" if row.fog_region_count else "-"
        print(f"| {key} | {row.board_width}x{row.board_height} | {row.mine_density} | {fog_text} | "
              f"{row.inferability_target} | {sum(m['revealed'] == m['safe_count'] for m in ms) / samples:.2f} | "
              f"{len(guessing) / samples:.2f} | {sum(g) / samples:.2f} | {np.mean(guessing):.2f} | "
              f"{sum(won) / len(won):.3f} | {np.mean([s for s in cols['survival'] if s is not None]):.3f} | "
              f"{np.mean(first):.3f} | {np.mean(share):.3f} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", type=int, default=3000, help="boards per preset (default: 3000)")
    p.add_argument("--presets", nargs="*", choices=sorted(PRESETS), default=list(PRESETS))
    p.add_argument("--tables", action="store_true", help="also the default tables' rows (256 boards a row)")
    args = p.parse_args(argv)
    for name in args.presets:
        r = sweep(name, args.boards)
        print(f"{r['preset']}: won {100 * r['win_rate']:.2f}% +- {100 * r['stderr']:.2f} of {r['boards']} "
              f"(not analysed {r['not_analysed']}); no guess {100 * r['no_guess_share']:.1f}%; "
              f"guesses {r['guesses_per_game']:.2f} a game, {r['guesses_per_win']:.2f} a win; "
              f"mean survival {r['mean_survival']:.4f}; first guess P(safe) {r['mean_first_guess_p_safe']:.4f}; "
              f"{r['cpu_seconds']:.1f} CPU s")
        print(f"    published: {r['published']}")
    if args.tables:
        tables_figures(256)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
