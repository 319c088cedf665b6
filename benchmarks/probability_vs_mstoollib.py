"""The probability engine beside ms-toollib, and the perfect player's cost
beside the generator, side by side in one run (issue 30; docs/fairness.md).
Not a test: it prints figures.

1. Positions of the default tables' rows without fog (ms-toollib has no
   fog): each board's state at R∞ and at the player's forced guesses, with
   something unknown left. Positions per second of
   ``probability.probabilities`` (the reference: compiled enumeration,
   Python-integer combination, Fractions), of the compiled path the player
   runs (``probability.tables`` + ``probability.combine``) and of
   ``ms_toollib.cal_probability_onboard`` (floats), on the same positions;
   inputs are built before the timers. Best of ``--repeat`` runs, CPU time.
2. Every row of the default tables: ``generate_batch_from_row`` over the
   row's 256 scopes (as ``benchmarks/scale.py`` ``generator_alone``), then
   ``player.play_batch`` on the boards it made, given each board's
   ``revealed``, ``safe_count`` and ``solvable_full_logic`` (so boards that
   need no guess cost nothing). CPU milliseconds a row and the ratio.

    .venv/bin/python benchmarks/probability_vs_mstoollib.py [--boards 50] [--repeat 3] [--samples 256]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import ms_toollib
import numpy as np

from boardgen_pipeline import generate
from boardgen_pipeline.board import limbs, player
from boardgen_pipeline.board import probability as pr
from boardgen_pipeline.board.generator import generate_batch_from_row, warm_up
from boardgen_pipeline.board.solver import closures
from boardgen_pipeline.calibration.batch import batch_scopes
from boardgen_pipeline.tables.board_gen import load_board_gen_dir

# the nightly's work a row and the generator's share of it (issue 30's brief,
# docs/performance.md): the player's share of the row work is estimated from
# its ratio to generation measured here
NIGHTLY_ROW_MS, GENERATION_ROW_MS = 47.0, 9.0


def positions(boards_per_row: int) -> list[pr.Position]:
    table = load_board_gen_dir()
    out = []
    for (level, depth), row in sorted(table.rows.items()):
        if row.fog_region_count:
            continue
        for seed in range(boards_per_row):
            b = generate(level, depth, 7000 + seed).board
            c = closures(b.mines, b.width, b.height, b.spawn_side)
            rev = np.zeros(b.width * b.height, np.uint8)
            rev[list(c.r_infinity)] = 1
            known = np.zeros_like(rev)
            known[list(c.known_mines)] = 1
            num = np.asarray(b.numbers, np.int32)
            found = [pr.Position(b.width, b.height, rev, num * rev, known, np.zeros_like(rev), b.mine_count)]
            g = 0
            while (q := player.position_at_guess(b, g)) is not None:
                found.append(q)
                g += 1
            out += [q for q in found if ((q.revealed == 0) & (q.known_mines == 0)).any()]
    return out


def game_board(p: pr.Position) -> list[list[int]]:
    g = np.where(p.revealed == 1, p.numbers, 10)
    return np.where(p.known_mines == 1, 11, g).reshape(p.height, p.width).tolist()


def best(f, repeat: int) -> tuple[float, object]:
    """The least CPU seconds of ``repeat`` calls of ``f``, and its result."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        result = f()
        times.append(time.process_time() - t0)
    return min(times), result


def engines(boards_per_row: int, repeat: int) -> None:
    ps = positions(boards_per_row)
    boards = [game_board(p) for p in ps]
    mines = [float(p.mines_total) for p in ps]
    compiled = []
    for p in ps:
        args = pr._arrays(p)
        compiled.append((args, p.mines_total - int(p.known_mines.sum()), limbs.limbs_for(p.width * p.height)))

    def reference():
        for p in ps:
            pr.probabilities(p)

    def twin():
        for args, remaining, L in compiled:
            _, _, starts, coff, counts, moff, cc, interior, _, _ = pr.tables(*args, pr.NODE_BUDGET)
            pr.combine(counts, coff, cc, moff, starts, interior, remaining, L)

    def theirs():
        for b, m in zip(boards, mines):
            ms_toollib.cal_probability_onboard(b, m)

    for f in (reference, twin, theirs):
        f()  # compiled, caches warm
    t_ref, t_twin, t_ms = (best(f, repeat)[0] for f in (reference, twin, theirs))
    n = len(ps)
    print(f"{n} positions (fog-free default rows, {boards_per_row} boards a row: R∞ and every forced guess)")
    print(f"  probability.probabilities (Fractions):  {n / t_ref:10,.0f} positions/s")
    print(f"  tables + combine (the player's path):   {n / t_twin:10,.0f} positions/s")
    print(f"  ms_toollib.cal_probability_onboard:     {n / t_ms:10,.0f} positions/s")
    print(f"  ratio reference / ms-toollib {t_ms / t_ref:.2f}, player's path / ms-toollib {t_ms / t_twin:.2f}")


def player_cost(samples: int, repeat: int) -> None:
    warm_up()
    table = load_board_gen_dir()
    total_gen = total_play = 0.0
    print(f"player on the default tables, {samples} boards a row (CPU ms a row)")
    for key, row in sorted(table.rows.items()):
        scopes = batch_scopes(*key, samples)
        t_gen, out = best(partial(generate_batch_from_row, row, table.spawn_side, scopes, 0, table.header.dig_ap_cost),
                          repeat)
        mines = np.stack([np.frombuffer(b.mines, np.uint8) for b, _ in out])
        fog = np.zeros_like(mines)
        for i, (b, _) in enumerate(out):
            fog[i, list(b.fog)] = 1
        revealed = [m["revealed"] for _, m in out]
        safe = [m["safe_count"] for _, m in out]
        solvable = [m["solvable_full_logic"] for _, m in out]
        W, H = row.board_width, row.board_height
        player.play_batch(W, H, table.spawn_side, mines[:2], fog[:2])  # this size compiled / loaded
        t_play, cols = best(partial(player.play_batch, W, H, table.spawn_side, mines, fog, revealed, safe, solvable),
                            repeat)
        total_gen += t_gen
        total_play += t_play
        played = sum(1 for r, s, v in zip(revealed, safe, solvable) if r != s and not v)
        won = [w for w in cols["won"] if w is not None]
        print(f"  {key}: generate {1000 * t_gen:6.1f}  play {1000 * t_play:6.1f}  ({played} boards played, "
              f"{sum(cols['forced_guesses'])} guesses, won {sum(won)}/{len(won)}, "
              f"not analysed {sum(w is None for w in cols['won'])})")
    rows = len(table.rows)
    ratio = total_play / total_gen
    print(f"  mean a row: generate {1000 * total_gen / rows:.1f} ms, play {1000 * total_play / rows:.1f} ms, "
          f"play / generate {ratio:.2f}")
    print(f"  share of the nightly's row work ({NIGHTLY_ROW_MS:.0f} ms a row, {GENERATION_ROW_MS:.0f} of it "
          f"generation): ~{100 * ratio * GENERATION_ROW_MS / NIGHTLY_ROW_MS:.0f}% (target <= 25%)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", type=int, default=50, help="boards a fog-free row for the positions (default: 50)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each timing, best kept (default: 3)")
    p.add_argument("--samples", type=int, default=256, help="boards a row for the player's cost (default: 256)")
    args = p.parse_args(argv)
    engines(args.boards, args.repeat)
    player_cost(args.samples, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
