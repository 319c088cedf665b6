"""The held-out proof is honest (SPEC 12; tuning.figures, tuning.corridor):
over simulated rows with a known curve, the intervals ``tune`` states on a
calibration batch cover the true figure at their stated level, and a row
whose true figure lies in its corridor is almost never called out of it.
Each simulated row is 256 boards drawn from a known distribution (a seeded
generator, one a row), measured by the same functions as a real row's
held-out boards: report C's value (``batch.fairness``, ``batch.percentiles``)
and the figure's interval."""

from __future__ import annotations

import numpy as np

from boardgen_pipeline.calibration.batch import fairness, percentiles
from boardgen_pipeline.tables.curve_targets import RowTarget
from boardgen_pipeline.tuning import corridor, figures

ROWS, BOARDS = 2000, 256


def player_records(rng, win: float, guesses_mean: float) -> list[dict]:
    """Boards a perfect player won with chance ``win``, each with a count of forced guesses."""
    out = []
    for _ in range(BOARDS):
        won = bool(rng.random() < win)
        guesses = int(rng.poisson(guesses_mean))
        out.append({"won": won, "forced_guesses": guesses, "survival": 1.0 if won else float(rng.random()),
                    "first_guess_p_safe": None})
    return out


def coverage(hits: list[bool]) -> float:
    return sum(hits) / len(hits)


def test_the_win_rates_interval_covers_the_truth_at_its_stated_level():
    rng = np.random.default_rng(54)
    hits = []
    for _ in range(ROWS):
        truth = float(rng.uniform(0.05, 0.95))
        records = player_records(rng, truth, 1.0)
        e = figures.estimate("win_rate", records, fairness(records))
        assert e.value == sum(r["won"] for r in records) / BOARDS and e.level == 0.95
        hits.append(e.low <= truth <= e.high)
    # 2,000 rows: a 95% interval covers 1,900 +- 29 (3 standard deviations: 0.935..0.965)
    assert 0.935 <= coverage(hits) <= 0.965


def test_the_mean_guesses_interval_covers_the_truth():
    rng = np.random.default_rng(7)
    hits = []
    for _ in range(ROWS):
        truth = float(rng.uniform(0.2, 3.0))
        records = player_records(rng, 0.5, truth)
        e = figures.estimate("mean_guesses", records, fairness(records))
        hits.append(e.low <= truth <= e.high)
    assert 0.935 <= coverage(hits) <= 0.965


def test_the_percentile_interval_covers_the_truth_at_least_at_its_level():
    # order statistics give at least the stated level (a discrete interval rounds outward)
    rng = np.random.default_rng(11)
    hits = []
    for _ in range(ROWS):
        spread = float(rng.uniform(0.02, 0.1))
        values = 1 - rng.exponential(spread, BOARDS)
        truth = 1 + spread * np.log(0.1)  # the p10 of 1 - Exp(spread): P(X < x) = exp(-(1 - x) / spread) = 0.1
        records = [{"inferability": float(v)} for v in values]
        report = {"p10": percentiles([r["inferability"] for r in records])[0]}
        e = figures.estimate("inferability_p10", records, report)
        hits.append(e.low <= truth <= e.high)
    assert 0.94 <= coverage(hits) <= 0.975


def test_a_row_inside_its_corridor_is_called_out_at_most_at_the_intervals_error_rate():
    # the worst case: the true win rate on the band's edge; the corridor's rule (its whole interval outside) errs
    # at most as often as the interval misses on that side (2.5%)
    rng = np.random.default_rng(3)
    target = RowTarget((1, 0), 1, "win_rate", 0.8, 0.03, "mine_density")
    outs = []
    for _ in range(ROWS):
        records = player_records(rng, target.high, 1.0)
        outs.append(corridor.judge(target, figures.estimate("win_rate", records, fairness(records))).state
                    == corridor.OUT)
    assert coverage(outs) <= 0.035
    # and a row truly out by twice its sampling error is called out most of the time
    far = []
    for _ in range(200):
        records = player_records(rng, target.high + 0.12, 1.0)
        far.append(corridor.judge(target, figures.estimate("win_rate", records, fairness(records))).state
                   == corridor.OUT)
    assert coverage(far) >= 0.9
