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
    low, high = stats.paired_bootstrap(40, lambda idx, axis=-1: np.stack([head[idx].mean(-1) - base[idx].mean(-1)]),
                                       0.95, 7, 999)
    assert low[0] == pytest.approx(0.2) and high[0] == pytest.approx(0.2)


def test_bootstrap_interval_covers_a_known_difference_and_equals_scipy():
    """50 boards, 10 of them flipped from 0 to 1: the difference of the shares is
    exactly 10/50 = 0.2; its percentile interval covers it, is about as wide
    as the normal one (sd of the per-board differences 0.4: 1.96 * 0.4 / sqrt(50)
    = 0.11 each side), and is scipy's paired bootstrap to the last digit."""
    base = np.array([0] * 30 + [1] * 20, dtype=float)
    head = base.copy()
    head[:10] = 1
    stat = lambda idx, axis=-1: np.stack([head[idx].mean(-1) - base[idx].mean(-1)])  # noqa: E731
    low, high = stats.paired_bootstrap(50, stat, 0.95, 11, 1999)
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


def test_wilcoxon_equals_scipy_and_is_one_when_nothing_moved():
    base = np.array([0.9, 0.95, 1.0, 0.88, 0.92, 1.0, 0.97, 0.91, 0.9, 0.99])
    head = base - np.array([0.02, 0.0, 0.01, 0.03, 0.0, 0.0, 0.02, 0.04, 0.01, 0.0])
    assert stats.wilcoxon_p(base, head) == pytest.approx(st.wilcoxon(head - base, zero_method="pratt").pvalue)
    assert stats.wilcoxon_p(base, base) == 1.0


def test_stuart_maxwell_equals_statsmodels_and_drops_unused_exits():
    base = np.array([0] * 30 + [1] * 6 + [0] * 4)
    head = np.array([0] * 30 + [0] * 6 + [1] * 4)
    p, table = stats.marginal_homogeneity_p(base, head, 3)
    assert table == [[30, 4, 0], [6, 0, 0], [0, 0, 0]]
    assert p == pytest.approx(SquareTable(np.array([[30, 4], [6, 0]]), shift_zeros=False).homogeneity().pvalue)
    # with two categories Stuart-Maxwell is McNemar's chi-square without correction: (6-4)^2 / (6+4)
    assert p == pytest.approx(st.chi2.sf(0.4, 1))
    assert stats.marginal_homogeneity_p(base, base, 3)[0] == 1.0


def test_benjamini_hochberg_by_hand_and_as_statsmodels():
    """p sorted 0.01, 0.02, 0.03, 0.5 over m = 4: p_(i) * m / i = 0.04, 0.04, 0.04,
    0.5, made monotone from the top: the q-values are 0.04, 0.04, 0.04, 0.5."""
    q = stats.benjamini_hochberg([0.03, 0.01, 0.5, 0.02], 0.05)
    assert q == pytest.approx([0.04, 0.04, 0.5, 0.04])
    assert q == pytest.approx(list(multipletests([0.03, 0.01, 0.5, 0.02], method="fdr_bh")[1]))


def test_looks_adjusted_is_bonferroni_over_the_planned_looks():
    assert stats.looks_adjusted([0.04, 0.01, 0.2], 5) == pytest.approx(0.05)
    assert stats.looks_adjusted([0.5], 5) == 1.0
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
