"""The probability engine beside ms-toollib, and the perfect player's cost
beside the generator, side by side in one run (docs/fairness.md).
Not a test: it prints figures.

1. Positions of the default tables' rows without fog (ms-toollib has no
   fog): each board's state at R∞ and at the player's forced guesses, with
   something unknown left. Positions per second of
   ``probability.probabilities`` (the reference: compiled enumeration,
   Python-integer combination, Fractions), of the compiled path the player
   runs (``probability.tables`` + ``probability.combine``) and of
   ``ms_toollib.cal_probability_onboard`` (floats), on the same positions;
   inputs are built before the timers. Best of ``--repeat`` runs, CPU time.
2. The nightly's row work (``steps.chain.run_row``, every stage, as
   ``benchmarks/row_work.py`` measures it) on the default tables (and, with
   ``--rows``, a table of that many rows), with the perfect player's figures
   and without them (``player.board_figures_batch`` answering the difficulty
   figures alone: no board played, no fairness column encoded), rounds alternated, best of each, CPU
   seconds: the figures' share of the row work (goal: at most 25%).
   Boards with R∞ = S, or solved by complete logic, are never played.

    .venv/bin/python benchmarks/probability_vs_mstoollib.py [--boards 50] [--repeat 3] [--samples 256] [--rows 600]
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

import ms_toollib
import numpy as np

from boardgen_pipeline import generate
from boardgen_pipeline.board import limbs, player
from boardgen_pipeline.board import probability as pr
from boardgen_pipeline.board.solver import closures
from boardgen_pipeline.tables.board_gen import load_board_gen_dir

REPO = Path(__file__).resolve().parent.parent


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


@contextlib.contextmanager
def without_player():
    """The row work as it was before the perfect player: the batch path's one call
    (``player.board_figures_batch``) answers the difficulty figures alone
    (``difficulty.figures_batch``), so nothing is played and no fairness
    column is encoded."""
    from boardgen_pipeline.board import difficulty

    real = player.board_figures_batch
    player.board_figures_batch = difficulty.figures_batch
    try:
        yield
    finally:
        player.board_figures_batch = real


def row_work_cost(samples: int, repeat: int, rows: int) -> None:
    """The nightly's row work (``steps.chain.run_row``: boards, checks,
    overlays, report, every file encoded) with the player's figures and
    without, rounds alternated, best of each, CPU seconds in this process."""
    import sys
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from row_work import chain_round
    from scale import make_tables

    from boardgen_pipeline import catalog as cat
    from boardgen_pipeline.steps import chain, publish_rows

    chain.warm_up()
    tables = [("default tables", REPO / "tables")]
    tmp = tempfile.TemporaryDirectory()
    if rows:
        tables.append((f"{rows} rows (scale.py)", make_tables(Path(tmp.name), rows)))
    for name, path in tables:
        c = cat.load_catalog(path)
        tasks = list(publish_rows.row_tasks(None, c, c.board_gen.keys(), samples, 0))
        chain_round(tasks[:4])  # every size compiled / loaded
        with without_player():
            chain_round(tasks[:4])
        on, off = [], []
        for _ in range(repeat):  # alternated: a busy spell of the machine hits both alike
            on.append(chain_round(tasks)[0])
            with without_player():
                off.append(chain_round(tasks)[0])
        t_on, t_off = min(on), min(off)
        n = len(tasks)
        print(f"{name}: {n} rows x {samples} boards, run_row CPU, best of {repeat}")
        print(f"  without the figures {t_off:7.3f} s  {1000 * t_off / n:6.2f} ms a row")
        print(f"  with the figures    {t_on:7.3f} s  {1000 * t_on / n:6.2f} ms a row")
        print(f"  the figures' share of the row work: {100 * (t_on - t_off) / t_on:.1f}% "
              f"(+{100 * (t_on - t_off) / t_off:.1f}% over the work without them; target <= 25%)")
    tmp.cleanup()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", type=int, default=50, help="boards a fog-free row for the positions (default: 50)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each timing, best kept (default: 3)")
    p.add_argument("--samples", type=int, default=256, help="boards a row for the row work (default: 256)")
    p.add_argument("--rows", type=int, default=0, help="also a table of this many rows (scale.py's make_tables)")
    args = p.parse_args(argv)
    engines(args.boards, args.repeat)
    row_work_cost(args.samples, args.repeat, args.rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
