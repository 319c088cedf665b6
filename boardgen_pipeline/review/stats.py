"""The statistics of the paired calibration diff, as thin wrappers over
scipy and statsmodels (docs/review.md "Statistics"; seed 004 on
attribution: a moved reading is pinned on the numbers only when it is more
than noise).

The two versions of a row are measured on the same seed scopes, so every
figure is compared *paired*, board by board (common random numbers):

- :func:`mcnemar_midp`: binary figures, McNemar's test on the discordant
  boards (``b`` boards that were 1 in base and 0 in head, ``c`` the other
  way), with the mid-p of the exact binomial test (Fagerland, Lydersen &
  Laake, BMC Med. Res. Methodol. 2013): ``2 * P(X <= min(b, c)) - P(X =
  min(b, c))``, ``X ~ Binomial(b + c, 1/2)``, from ``scipy.stats.binom``;
- :func:`paired_bootstrap`: the interval of every figure's difference in one
  ``scipy.stats.bootstrap`` call that resamples *board indices* (a resampled
  board keeps its base and its head together), percentile method: it stays
  defined when the bootstrap distribution is degenerate (many boards sit at
  inferability 1.0, so a p90 difference is 0 in every resample), where BCa
  divides by zero;
- :func:`sign_flip_p`: percentile figures, a sign-flip permutation test
  (``scipy.stats.permutation_test``, ``permutation_type="samples"``: base and
  head of a board swapped at random), whose statistic is the figure itself;
- :func:`wilcoxon_p`: mean figures, the Wilcoxon signed-rank test
  (``scipy.stats.wilcoxon``, ``zero_method="pratt"``: boards whose value did
  not change are ranked, then left out of the statistic, so a change that
  moves few boards is neither drowned by the unchanged ones nor credited
  with them);
- :func:`marginal_homogeneity_p`: the exit categories, Stuart-Maxwell
  (``statsmodels`` ``SquareTable(...).homogeneity()``);
- :func:`benjamini_hochberg`: the q-values over every figure of every
  modified row (``statsmodels.stats.multitest.multipletests``, ``fdr_bh``).

Resampling is seeded (``seed``, an integer the caller derives from the row
and the look), so the same diff gives the same numbers.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

RESAMPLES = 1999  # bootstrap and permutation resamples: a permutation p-value is at least 2 / (RESAMPLES + 1)


def mcnemar_midp(b: int, c: int) -> float:
    """Two-sided mid-p of McNemar's exact test on ``b`` and ``c`` discordant pairs."""
    from scipy.stats import binom

    n, k = b + c, min(b, c)
    if n == 0:
        return 1.0
    return float(min(1.0, 2 * binom.cdf(k, n, 0.5) - binom.pmf(k, n, 0.5)))


def discordant(base: np.ndarray, head: np.ndarray) -> tuple[int, int]:
    """``(b, c)``: boards 1 in base and 0 in head, and 0 in base and 1 in head."""
    return int(np.sum((base == 1) & (head == 0))), int(np.sum((base == 0) & (head == 1)))


def wilcoxon_p(base: np.ndarray, head: np.ndarray) -> float:
    """Two-sided p of the Wilcoxon signed-rank test of ``head - base``; 1 when
    no board moved (the test is undefined there, and nothing differs)."""
    from scipy.stats import wilcoxon

    diff = head - base
    if not np.any(diff != 0):
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "exact p not available with zeros": the normal one is used
        return float(wilcoxon(diff, zero_method="pratt").pvalue)


def paired_bootstrap(n: int, statistic: Callable[[np.ndarray], np.ndarray], level: float, seed: int,
                     resamples: int = RESAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """Percentile intervals of a vector of differences, resampling board
    indices ``0..n-1``: ``statistic(idx)`` takes indices of shape
    ``(..., n)`` and returns the differences, figures first, resamples after."""
    from scipy.stats import bootstrap

    result = bootstrap((np.arange(n),), statistic, vectorized=True, n_resamples=resamples, method="percentile",
                       confidence_level=level, rng=seed, batch=max(1, min(resamples, 400_000 // max(1, n))))
    return np.atleast_1d(result.confidence_interval.low), np.atleast_1d(result.confidence_interval.high)


def sign_flip_p(n: int, statistic: Callable[[np.ndarray, np.ndarray], np.ndarray], seed: int,
                resamples: int = RESAMPLES) -> np.ndarray:
    """Two-sided p-values of a vector of paired differences by sign flips:
    ``statistic(base_idx, head_idx)`` reads base values at ``base_idx`` and
    head values at ``head_idx`` (indices into the two versions' columns laid
    end to end: ``0..n-1`` base, ``n..2n-1`` head) and returns the differences.
    The test swaps a board's two indices at random."""
    from scipy.stats import permutation_test

    def batch_first(x, y, axis=-1):
        out = statistic(x, y)
        return np.moveaxis(out, 0, -1) if out.ndim > 1 else out  # scipy stacks resamples on the first axis

    result = permutation_test((np.arange(n), np.arange(n, 2 * n)), batch_first, permutation_type="samples",
                              vectorized=True, n_resamples=resamples, rng=seed,
                              batch=max(1, min(resamples, 400_000 // max(1, n))))
    return np.atleast_1d(result.pvalue)


def marginal_homogeneity_p(base: np.ndarray, head: np.ndarray, categories: int) -> tuple[float, list[list[int]]]:
    """Stuart-Maxwell p of the paired ``categories`` x ``categories`` table
    (base category in rows, head in columns), and the table. Categories that
    no board takes in either version are left out (their row and column of
    zeros make the covariance singular); 1 when no board changed category."""
    from statsmodels.stats.contingency_tables import SquareTable

    table = np.zeros((categories, categories), dtype=np.int64)
    np.add.at(table, (base, head), 1)
    used = (table.sum(axis=0) + table.sum(axis=1)) > 0
    square = table[np.ix_(used, used)]
    if square.shape[0] < 2 or not np.any(square - np.diag(np.diag(square))):
        return 1.0, table.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(SquareTable(square, shift_zeros=False).homogeneity().pvalue)
    return (1.0 if np.isnan(p) else p), table.tolist()


def ranks(values: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Each value's index among ``levels`` (its sorted distinct values), as the
    smallest integer type that holds them (a batch has at most 4,096 boards)."""
    codes = np.searchsorted(levels, values)
    return codes.astype(np.int16 if len(levels) < 2**15 else np.int32)


def percentiles(codes: np.ndarray, levels: np.ndarray, qs) -> np.ndarray:
    """``np.percentile(levels[codes], qs, axis=-1)``, to the bit (numpy's
    default, linear interpolation between the order statistics around
    ``(n - 1) * q``, with numpy's own interpolation formula), computed by
    sorting the small integer rank codes instead of partitioning floats: a
    radix sort, 20 times faster on a matrix of resamples, where the
    bootstrap and the permutation test spend most of their time."""
    ordered = np.sort(codes, axis=-1)
    n = ordered.shape[-1]
    virtual = (n - 1) * (np.asarray(qs, dtype=float) / 100)
    below = np.floor(virtual).astype(np.intp)
    above = np.minimum(below + 1, n - 1)
    gamma = virtual - below
    a = np.moveaxis(levels[ordered[..., below]], -1, 0)
    b = np.moveaxis(levels[ordered[..., above]], -1, 0)
    t = gamma.reshape((-1,) + (1,) * (a.ndim - 1))
    out = a + (b - a) * t
    return np.where(t >= 0.5, b - (b - a) * (1 - t), out)  # numpy's _lerp: exact at both ends


def benjamini_hochberg(pvalues: list[float], alpha: float) -> list[float]:
    """Benjamini-Hochberg q-values (adjusted p-values) of ``pvalues``."""
    from statsmodels.stats.multitest import multipletests

    if not pvalues:
        return []
    return [float(q) for q in multipletests(pvalues, alpha=alpha, method="fdr_bh")[1]]


def looks_adjusted(pvalues: list[float], looks: int) -> float:
    """The p-value of a figure looked at up to ``looks`` times (optional
    stopping, ``--until-decided``): Bonferroni over the planned looks,
    ``min(1, looks * min(p_k))``. Valid whatever rule stops the looks,
    since ``P(some p_k <= t / looks) <= t`` (docs/review.md)."""
    return float(min(1.0, looks * min(pvalues)))
