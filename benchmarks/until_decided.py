"""``--until-decided``: Bonferroni over the looks against an anytime-valid
confidence sequence (docs/review.md "Decided, not guessed"). Not a test: it
prints figures.

Simulated rows, each a figure's per-board pairs on up to 4,096 boards (a
row's scopes), shaped like the diff's: a share (win rate: 0.85 of boards,
70% of pairs the very same board, margin 0.05) and a bounded mean
(inferability: 45% of boards at 1.0, whole cells of 84, half the pairs the
same board, margin 0.01), with a planted move ``delta`` of 0, half the
margin, 1.5, 2 and 3 margins. Both rules decide a figure the diff's way: its
interval beyond the margin on one side, or within it; both at alpha = 0.05.

- **Bonferroni over the looks** (what the diff does): looks at 256, 512,
  1,024, 2,048 and 4,096 boards, the paired percentile bootstrap interval
  (``stats.paired_bootstrap``) at level ``1 - alpha / 5`` at each;
- **a betting confidence sequence** for the mean of a bounded paired
  difference (Waudby-Smith & Ramdas, "Estimating means of bounded random
  variables by betting", JRSS-B 2023: the hedged capital process with the
  predictable plug-in bets, ``c = 1/2``, ``theta = 1/2``), the difference in
  [-1, 1] mapped to [0, 1]; valid at every board, so it is read at the same
  five looks and, separately, at every board.

For each rule: the boards spent to a decision (4,096 when none came), the
share left undecided at 4,096, and the share decided wrongly (beyond the
margin when the move is within it, or the other way).

    .venv/bin/python benchmarks/until_decided.py            # 200 rows a case
    .venv/bin/python benchmarks/until_decided.py --rows 50 --resamples 199
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from boardgen_pipeline.review import stats  # noqa: E402

ALPHA = 0.05
LOOKS = (256, 512, 1024, 2048, 4096)
N = LOOKS[-1]
BEYOND_UP, BEYOND_DOWN, WITHIN, UNDECIDED = "beyond +", "beyond -", "within", "undecided"


def share_rows(rng, rows: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Win/loss pairs: 0.85 won; 70% of pairs the same board; the move planted
    by turning won boards lost (delta < 0) or lost boards won."""
    base = rng.random((rows, N)) < 0.85
    head = np.where(rng.random((rows, N)) < 0.7, base, rng.random((rows, N)) < 0.85)
    flip = rng.random((rows, N))
    if delta < 0:
        head &= ~(flip < -delta / 0.85)
    elif delta > 0:
        head |= flip < delta / 0.15
    return base.astype(float), head.astype(float)


def inferability_rows(rng, rows: int, delta: float, safe: int = 84) -> tuple[np.ndarray, np.ndarray]:
    """Inferability pairs (1.0 on 45% of boards, else whole cells near the
    top); half the pairs the same board; the move planted as a few cells
    fewer (delta < 0) on the share of boards that gives it."""
    def draw():
        cells = np.minimum(safe, np.round(rng.beta(9, 1, (rows, N)) * safe))
        return np.where(rng.random((rows, N)) < 0.45, 1.0, cells / safe)

    base = draw()
    head = np.where(rng.random((rows, N)) < 0.5, base, draw())
    cells = max(1, math.ceil(abs(delta) * safe))
    moved = rng.random((rows, N)) < abs(delta) * safe / cells
    step = np.sign(delta) * cells / safe
    return base, np.clip(head + moved * step, 0.0, 1.0)


def verdict(low, high, margin: float):
    """The diff's reading of an interval (``paired.decided``), per row."""
    out = np.full(low.shape, UNDECIDED, dtype=object)
    out[(low >= margin)] = BEYOND_UP
    out[(high <= -margin)] = BEYOND_DOWN
    out[(low >= -margin) & (high <= margin)] = WITHIN
    return out


def bonferroni(base, head, margin: float, resamples: int, seed: int):
    """Per row, the first look whose ``1 - alpha / 5`` interval decides it, and how."""
    rows = base.shape[0]
    spent, said = np.full(rows, N), np.full(rows, UNDECIDED, dtype=object)
    open_ = np.ones(rows, dtype=bool)
    for look, n in enumerate(LOOKS):
        todo = np.flatnonzero(open_)
        if not len(todo):
            break
        b, h = base[todo, :n], head[todo, :n]
        for chunk in np.array_split(np.arange(len(todo)), max(1, len(todo) * n // 200_000)):
            hc, bc = h[chunk], b[chunk]
            got = stats.paired_bootstrap(n, lambda idx, axis=-1, hc=hc, bc=bc: hc[:, idx].mean(-1) - bc[:, idx].mean(-1),
                                         1 - ALPHA / len(LOOKS), seed + look, resamples)
            v = verdict(got.low, got.high, margin)
            for r, word in zip(todo[chunk], v):
                if word != UNDECIDED:
                    spent[r], said[r], open_[r] = n, word, False
    return spent, said


def capitals(x: np.ndarray, m: float, c: float = 0.5):
    """The two log-capital processes of the hedged betting CS at ``m``
    (x in [0, 1], boards on the last axis): ``log K+`` (evidence the mean is
    above m) and ``log K-`` (below), cumulative over the boards, with the
    predictable plug-in bets (WSR 2023, eq. (26)-(27))."""
    rows, n = x.shape
    i = np.arange(1, n + 1)
    mu = (0.5 + np.cumsum(x, axis=1)) / (i + 1)  # mu_hat_i
    mu_prev = np.concatenate([np.full((rows, 1), 0.5), mu[:, :-1]], axis=1)
    sq = np.cumsum((x - mu_prev) ** 2, axis=1)
    var = (0.25 + sq) / (i + 1)  # sigma_hat^2_i
    var_prev = np.concatenate([np.full((rows, 1), 0.25), var[:, :-1]], axis=1)
    lam = np.sqrt(2 * math.log(2 / ALPHA) / (var_prev * i * np.log(1 + i)))
    up = np.minimum(lam, c / m)
    down = np.minimum(lam, c / (1 - m))
    return np.cumsum(np.log1p(up * (x - m)), axis=1), np.cumsum(np.log1p(-down * (x - m)), axis=1)


def sequence(base, head, margin: float, at=None):
    """Per row, the first board (or look of ``at``) where the confidence
    sequence decides it, and how; theta = 1/2: a side rejects at capital
    2 / alpha."""
    x = (head - base + 1) / 2
    top, bottom = (margin + 1) / 2, (1 - margin) / 2
    bar = math.log(2 / ALPHA)
    up_top, down_top = capitals(x, top)
    up_bottom, down_bottom = capitals(x, bottom)
    # the running intersection: a point once left out stays out
    above_top = np.maximum.accumulate(up_top, axis=1) >= bar
    below_top = np.maximum.accumulate(down_top, axis=1) >= bar
    above_bottom = np.maximum.accumulate(up_bottom, axis=1) >= bar
    below_bottom = np.maximum.accumulate(down_bottom, axis=1) >= bar
    words = np.full(x.shape, UNDECIDED, dtype=object)
    words[above_bottom & below_top] = WITHIN
    words[below_bottom] = BEYOND_DOWN
    words[above_top] = BEYOND_UP
    cols = np.arange(N) if at is None else np.array(at) - 1
    decided = words[:, cols] != UNDECIDED
    first = np.where(decided.any(axis=1), decided.argmax(axis=1), len(cols) - 1)
    spent = np.where(decided.any(axis=1), cols[first] + 1, N)
    return spent, words[np.arange(len(x)), cols[first]]


def truth(delta: float, margin: float) -> str:
    return BEYOND_UP if delta > margin else BEYOND_DOWN if delta < -margin else WITHIN


def summary(spent, said, delta: float, margin: float) -> str:
    wrong = np.mean([s not in (UNDECIDED, truth(delta, margin)) for s in said])
    return f"{np.mean(spent):7.0f} {np.mean(said == UNDECIDED):6.0%} {wrong:6.1%}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200, help="simulated rows a case (default: 200)")
    ap.add_argument("--resamples", type=int, default=499, help="bootstrap resamples of a look (default: 499)")
    args = ap.parse_args()
    rng = np.random.Generator(np.random.PCG64(2026))
    print(f"{args.rows} rows a case, alpha {ALPHA}, looks {', '.join(map(str, LOOKS))}; "
          "boards spent (mean; undecided rows count 4,096), share undecided, share decided wrongly")
    print(f"{'figure':<14}{'delta':>8}  {'Bonferroni + bootstrap':>22}  {'CS at the looks':>22}  {'CS every board':>22}")
    started = time.perf_counter()
    for name, make, margin in (("win_rate", share_rows, 0.05), ("inferability", inferability_rows, 0.01)):
        for k in (0.0, 0.5, 1.5, 2.0, 3.0):
            delta = -k * margin
            base, head = make(rng, args.rows, delta)
            b = summary(*bonferroni(base, head, margin, args.resamples, 7), delta, margin)
            looks = summary(*sequence(base, head, margin, LOOKS), delta, margin)
            every = summary(*sequence(base, head, margin), delta, margin)
            print(f"{name:<14}{delta:>+8.3f}  {b:>22}  {looks:>22}  {every:>22}", flush=True)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
