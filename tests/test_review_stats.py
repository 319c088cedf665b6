"""The calibration diff's statistics (docs/review.md "Statistics";
``review.stats``): hand-worked cases, and the same numbers as scipy and
statsmodels called directly."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.stats as st
from statsmodels.stats.contingency_tables import SquareTable, mcnemar
from statsmodels.stats.multitest import multipletests

from boardgen_pipeline.review import diff, stats
from boardgen_pipeline.review import figures as F


def test_mcnemar_midp_by_hand():
    """A 2x2 paired table: 10 boards won in both versions, 20 lost in both, b = 2
    won only in base, c = 9 won only in head. Under H0 the 11 discordant boards
    fall on either side with probability 1/2: P(X <= 2) = (1 + 11 + 55) / 2^11,
    P(X = 2) = 55 / 2^11, mid-p = 2 * 67/2048 - 55/2048 = 79/2048."""
    base = np.array([1] * 10 + [1] * 2 + [0] * 9 + [0] * 20)
    head = np.array([1] * 10 + [0] * 2 + [1] * 9 + [0] * 20)
    assert stats.discordant(base, head) == (2, 9)
    assert stats.mcnemar_midp(2, 9) == pytest.approx(float(Fraction(79, 2048)), abs=1e-15)
    assert stats.mcnemar_midp(9, 2) == stats.mcnemar_midp(2, 9)
    # statsmodels' exact McNemar p minus the probability of the observed count is the mid-p
    exact = mcnemar([[10, 2], [9, 20]], exact=True).pvalue
    assert stats.mcnemar_midp(2, 9) == pytest.approx(exact - st.binom.pmf(2, 11, 0.5), abs=1e-15)
    # balanced discordance: no evidence at all; no discordance: nothing to test
    assert stats.mcnemar_midp(5, 5) == pytest.approx(1.0) and stats.mcnemar_midp(0, 0) == 1.0
    # one discordant board: 2 * 1/2 - 1/2 = 1/2
    assert stats.mcnemar_midp(0, 1) == pytest.approx(0.5)


def test_bootstrap_interval_of_a_constructed_pair():
    """Every head value is its base plus 0.2: each resample's mean difference is
    exactly 0.2, so the interval is [0.2, 0.2] (the percentile method keeps a
    degenerate bootstrap distribution, where BCa divides by zero)."""
    base = np.linspace(0, 1, 40)
    head = base + 0.2
    got = stats.paired_bootstrap(40, lambda idx, axis=-1: np.stack([head[idx].mean(-1) - base[idx].mean(-1)]),
                                 0.95, 7, 999)
    assert got.low[0] == pytest.approx(0.2) and got.high[0] == pytest.approx(0.2)
    assert got.p[0] < 1e-9  # every level's interval is [0.2, 0.2]: zero is left out at any level


def test_bootstrap_interval_covers_a_known_difference_and_equals_scipy():
    """50 boards, 10 of them flipped from 0 to 1: the difference of the shares is
    exactly 10/50 = 0.2; its percentile interval covers it, is about as wide
    as the normal one (sd of the per-board differences 0.4: 1.96 * 0.4 / sqrt(50)
    = 0.11 each side), and is scipy's paired bootstrap to the last digit."""
    base = np.array([0] * 30 + [1] * 20, dtype=float)
    head = base.copy()
    head[:10] = 1
    stat = lambda idx, axis=-1: np.stack([head[idx].mean(-1) - base[idx].mean(-1)])  # noqa: E731
    got = stats.paired_bootstrap(50, stat, 0.95, 11, 1999)
    low, high = got.low, got.high
    assert low[0] < 0.2 < high[0]
    assert high[0] - low[0] == pytest.approx(2 * 1.96 * 0.4 / np.sqrt(50), rel=0.15)
    direct = st.bootstrap((base, head), lambda x, y, axis=-1: y.mean(axis) - x.mean(axis), paired=True,
                          vectorized=True, n_resamples=1999, method="percentile", rng=11)
    assert (low[0], high[0]) == (direct.confidence_interval.low, direct.confidence_interval.high)


def test_sign_flip_equals_scipy_permutation_test():
    rng_values = np.linspace(0, 1, 60) ** 2
    base, head = rng_values, np.roll(rng_values, 3) + 0.05
    both = np.concatenate([base, head])
    p = stats.sign_flip_p(60, lambda x, y: np.stack([np.percentile(both[y], 10, axis=-1)
                                                     - np.percentile(both[x], 10, axis=-1)]), 5, 999)
    direct = st.permutation_test((base, head), lambda x, y, axis=-1: np.percentile(y, 10, axis=axis)
                                 - np.percentile(x, 10, axis=axis), permutation_type="samples", vectorized=True,
                                 n_resamples=999, rng=5)
    assert p[0] == direct.pvalue


def test_interval_p_by_hand():
    """Five resamples -1, 0, 1, 2, 3 (B = 5, quantile positions q (B - 1)): the
    interpolated curve leaves zero at position 1 (the value 0, then 1), so the
    low end a / 2 is above zero once 4 a / 2 > 1, a > 0.5; the high end never
    goes below zero (it would need a > 1.5). With half a step: -1, -0.5, 1, 2,
    3 leaves zero at 1 + 0.5 / 1.5 = 4/3: a > 2 (4/3) / 4 = 2/3."""
    assert stats.interval_p(np.array([-1.0, 0.0, 1.0, 2.0, 3.0])) == pytest.approx(0.5, rel=1e-6)
    assert stats.interval_p(np.array([3.0, 2.0, -0.5, 1.0, -1.0])) == pytest.approx(2 / 3, rel=1e-6)
    assert stats.interval_p(np.array([1.0, -3.0, -2.0, -1.0, 0.0])) == pytest.approx(0.5, rel=1e-6)  # mirrored
    assert stats.interval_p(np.array([0.1, 0.2, 0.3])) < 1e-9 and stats.interval_p(np.zeros(4)) == 1.0
    # vectorised: one p a distribution
    both = stats.interval_p(np.array([[-1.0, 0.0, 1.0, 2.0, 3.0], [0.1, 0.2, 0.3, 0.4, 0.5]]))
    assert both[0] == pytest.approx(0.5, rel=1e-6) and both[1] < 1e-9


@pytest.mark.parametrize("seed", range(40))
def test_interval_p_is_the_level_at_which_scipys_interval_leaves_out_zero(seed):
    """For a random bootstrap distribution (ties, zeros, skew), scipy's own
    percentile interval at level 1 - a leaves out zero exactly when a is above
    ``interval_p``: checked at a just above and just below it, and at the
    levels a diff draws (0.05, 0.01)."""
    rng = np.random.default_rng(seed)
    b = int(rng.integers(5, 400))
    x = np.round(rng.normal(rng.normal(0, 1), 1, b) * rng.choice([1, 4]), int(rng.integers(0, 3)))
    x[rng.random(b) < rng.random() * 0.5] = 0.0
    p = float(stats.interval_p(x))

    def leaves_out_zero(a):
        low, high = st.quantile(x, [a / 2, 1 - a / 2])
        return low > 0 or high < 0

    for a in (0.05, 0.01, p * 1.001 + 1e-9, p * 0.999 - 1e-9):
        if 0 < a < 1:
            assert leaves_out_zero(a) == (a >= p), (a, p)


def test_sign_flip_mean_is_exact_for_few_moved_boards():
    """Five boards each +1: of the 2^5 sign arrangements, 2 give a sum as far
    from 0 as 5, so p = 2/32 = 0.0625 (a normal approximation says 0.025).
    Zeros flip to themselves: 5 boards +1 among 200 unchanged give the same p.
    Beyond 12 moved boards, scipy's random sign flips (the same numbers as
    ``permutation_test`` called directly)."""
    assert stats.sign_flip_mean_p(np.ones(5), 0) == pytest.approx(2 / 32)
    assert stats.sign_flip_mean_p(np.r_[np.ones(5), np.zeros(200)], 0) == pytest.approx(2 / 32)
    assert stats.sign_flip_mean_p(np.zeros(10), 0) == 1.0
    d = np.linspace(-1, 2, 40)
    direct = st.permutation_test((d,), lambda x, axis=-1: x.sum(axis), permutation_type="samples", vectorized=True,
                                 n_resamples=999, rng=5, axis=-1)
    assert stats.sign_flip_mean_p(d, 5, 999) == direct.pvalue
    # one p a data set, as each alone
    batch = np.stack([np.r_[np.ones(5), np.zeros(35)], d, -d])
    assert list(stats.sign_flip_mean_p(batch, 5, 999)) == [2 / 32, direct.pvalue, direct.pvalue]


def test_stuart_maxwell_equals_statsmodels_where_statsmodels_can_answer():
    """A connected table of moving categories: statsmodels' Stuart-Maxwell.
    Two categories: McNemar's chi-square, uncorrected, (16 - 9)^2 / (16 + 9)."""
    base = np.array([0] * 30 + [1] * 6 + [0] * 4 + [2] * 5 + [1] * 3 + [2] * 10)
    head = np.array([0] * 30 + [0] * 6 + [1] * 4 + [0] * 5 + [2] * 3 + [2] * 10)
    got = stats.marginal_homogeneity(base, head, 3)
    assert got.table == [[30, 4, 0], [6, 0, 3], [5, 0, 10]] and got.df == 2 and not got.exact
    assert got.p == pytest.approx(SquareTable(np.array(got.table), shift_zeros=False).homogeneity().pvalue)
    base = np.array([0] * 30 + [1] * 16 + [0] * 9 + [1] * 9)
    head = np.array([0] * 30 + [0] * 16 + [1] * 9 + [1] * 9)
    two = stats.marginal_homogeneity(base, head, 3)
    assert two.statistic == pytest.approx(49 / 25) and two.p == pytest.approx(st.chi2.sf(49 / 25, 1))
    assert stats.marginal_homogeneity(base, base, 3).p == 1.0


def test_categories_that_stay_put_do_not_hide_a_move():
    """Issue 51's two tables. Exits: 100 boards stay passed, 20 go best_legal ->
    least_bad and 2 back: McNemar's chi-square on the moving pair, 18^2 / 22,
    p = 1.2e-4 (statsmodels on the whole table answers NaN: ``passed`` makes the
    covariance singular). Overlay types, 5 types: 30 boards A -> B, 5 B -> A,
    three types unchanged: 25^2 / 35, p = 2.4e-5. Boards that stay in a
    category, or a category nobody takes, change nothing."""
    base = np.array([0] * 100 + [1] * 20 + [2] * 2)
    head = np.array([0] * 100 + [2] * 20 + [1] * 2)
    exits = stats.marginal_homogeneity(base, head, 3)
    assert exits.p == pytest.approx(st.chi2.sf(18**2 / 22, 1)) and exits.p < 2e-4 and exits.df == 1
    with np.errstate(all="ignore"), pytest.warns(Warning):
        assert np.isnan(SquareTable(np.array(exits.table), shift_zeros=False).homogeneity().pvalue)
    base = np.array([0] * 30 + [1] * 5 + [2] * 40 + [3] * 20 + [4] * 10)
    head = np.array([1] * 30 + [0] * 5 + [2] * 40 + [3] * 20 + [4] * 10)
    types = stats.marginal_homogeneity(base, head, 5)
    assert types.p == pytest.approx(st.chi2.sf(25**2 / 35, 1)) and types.p < 3e-5
    alone = stats.marginal_homogeneity(base[:35], head[:35], 2)
    assert alone.p == pytest.approx(types.p) and stats.marginal_homogeneity(base, head, 9).p == pytest.approx(types.p)


def test_two_groups_of_moves_add_their_degrees_of_freedom():
    """A <-> B moves (20 one way, 4 back) and, apart, C <-> D (15 each way): the
    covariance has rank 2 (two groups of two categories), the statistic is the
    two McNemar chi-squares' sum, 16^2 / 24 + 0^2 / 30, on 2 degrees of freedom."""
    base = np.array([0] * 20 + [1] * 4 + [2] * 15 + [3] * 15 + [4] * 50)
    head = np.array([1] * 20 + [0] * 4 + [3] * 15 + [2] * 15 + [4] * 50)
    got = stats.marginal_homogeneity(base, head, 5)
    assert got.df == 2 and got.statistic == pytest.approx(16**2 / 24)
    assert got.p == pytest.approx(st.chi2.sf(16**2 / 24, 2))


def test_few_moved_boards_are_tested_exactly():
    """3 boards A -> B and none back: of the 2^3 swaps, 2 put all three on one
    side, p = 2/8 = 0.25 (chi-square would say 0.083). 6 boards: 2/64. One
    board: p = 1. Thirteen: chi-square, 13^2 / 13 on 1 degree of freedom."""
    def one_way(k):
        return stats.marginal_homogeneity(np.array([0] * k + [2] * 50), np.array([1] * k + [2] * 50), 4)

    assert one_way(3).exact and one_way(3).p == pytest.approx(0.25)
    assert one_way(6).p == pytest.approx(2 / 64) and one_way(1).p == 1.0
    assert not one_way(13).exact and one_way(13).p == pytest.approx(st.chi2.sf(13, 1))


def test_benjamini_hochberg_by_hand_and_as_statsmodels():
    """p sorted 0.01, 0.02, 0.03, 0.5 over m = 4: p_(i) * m / i = 0.04, 0.04, 0.04,
    0.5, made monotone from the top: the q-values are 0.04, 0.04, 0.04, 0.5."""
    q = stats.benjamini_hochberg([0.03, 0.01, 0.5, 0.02], 0.05)
    assert q == pytest.approx([0.04, 0.04, 0.5, 0.04])
    assert q == pytest.approx(list(multipletests([0.03, 0.01, 0.5, 0.02], method="fdr_bh")[1]))


def test_looks_adjusted_is_bonferroni_over_the_planned_looks():
    assert stats.looks_adjusted(0.01, 5) == pytest.approx(0.05)
    assert stats.looks_adjusted(0.5, 5) == 1.0
    # 256 boards a row doubles to 512, 1024, 2048, 4096: five looks; without optional stopping one
    assert diff.planned_looks(256, True) == 5 and diff.planned_looks(256, False) == 1
    assert diff.planned_looks(4096, True) == 1 and diff.planned_looks(3000, True) == 1


def test_figures_are_the_reports_on_the_same_boards():
    """A figure's value on a batch is report C's (``batch.evaluate_row``) on it."""
    from boardgen_pipeline.calibration.batch import evaluate_row, run_row
    from boardgen_pipeline.tables.board_gen import load_board_gen_dir

    table = load_board_gen_dir()
    for key in ((1, 2), (2, 3)):
        records = run_row(table, key, 64)
        report = evaluate_row(table.rows[key], records).as_dict()
        cols = F.board_columns(records, table.rows[key])
        got = {f.name: F.value(f, cols[f.column]) for f in F.FIGURES if f.kind != F.CATEGORIES}
        assert got["inferability_p10"] == pytest.approx(report["p10"]) and got["inferability_p90"] == report["p90"]
        assert got["win_rate"] == report["win_rate"] and got["mean_survival"] == pytest.approx(report["mean_survival"])
        assert got["retry_rate"] == report["retry_rate"] and got["mean_attempts"] == report["mean_attempts"]
        assert got["below_target_share"] * 64 == report["below_target"]
        assert got["bbbv_p50"] == report["bbbv_p50"] and got["no_guess_share"] == report["no_guess_share"]
        assert F.exit_shares(cols["exit"])["passed"] * 64 == report["passed"]


def test_percentiles_by_rank_codes_are_numpys_to_the_bit():
    """``stats.percentiles`` sorts rank codes instead of partitioning floats (the
    resamples' cost): the same numbers as ``np.percentile``, ties, single
    boards and the 0th and 100th percentiles included."""
    values = np.array([0.95, 1.0, 1.0, 0.9, 0.875, 1.0, 0.9, 0.95, 0.99, 1.0, 0.875, 0.91])
    levels = np.unique(values)
    codes = stats.ranks(values, levels)
    idx = np.array([np.roll(np.arange(12), k) % (k + 1) for k in range(12)])  # resamples with many repeats
    qs = [0, 10, 33.3, 50, 90, 100]
    assert np.array_equal(stats.percentiles(codes[idx], levels, qs), np.percentile(values[idx], qs, axis=-1))
    assert np.array_equal(stats.percentiles(codes, levels, qs), np.percentile(values, qs))
    one = stats.ranks(np.array([0.5]), np.array([0.5]))
    assert np.array_equal(stats.percentiles(one, np.array([0.5]), [10, 90]), [0.5, 0.5])
