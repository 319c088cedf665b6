"""The statistics of the paired calibration diff, as thin wrappers over
scipy and statsmodels (docs/review.md "Statistics"; seed 004 on
attribution: a moved reading is pinned on the numbers only when it is more
than noise).

The two versions of a row are measured on the same seed scopes, so every
figure is compared *paired*, board by board (common random numbers). Each
test speaks of the quantity its interval shows:

- :func:`paired_bootstrap`: the interval of every figure's difference in one
  ``scipy.stats.bootstrap`` call that resamples *board indices* (a resampled
  board keeps its base and its head together), percentile method (it stays
  defined when the bootstrap distribution is degenerate: many boards sit at
  inferability 1.0, so a p90 difference is 0 in every resample, where BCa
  divides by zero); with each interval its own p-value, :func:`interval_p`:
  the smallest ``a`` at which the ``1 - a`` interval leaves out zero;
- :func:`mcnemar_midp`: binary figures, McNemar's test on the discordant
  boards with the mid-p of the exact binomial test (Fagerland, Lydersen &
  Laake, BMC Med. Res. Methodol. 2013), from ``scipy.stats.binom``;
- :func:`sign_flip_mean_p`: mean figures, a sign-flip permutation test of
  the mean difference (``scipy.stats.permutation_test``, one sample,
  ``permutation_type="samples"``: each board's difference keeps or flips its
  sign), exact when at most :data:`EXACT_MOVES` boards moved;
- :func:`sign_flip_p`: percentile figures, the same test (base and head of a
  board swapped at random) whose statistic is the figure itself;
- :func:`marginal_homogeneity`: categorical figures (the exits, the overlay
  types), the Stuart-Maxwell statistic with the generalised inverse of its
  covariance, on the categories some board leaves or enters, its degrees of
  freedom the covariance's rank (a category nobody moves from or to makes
  the full covariance singular: statsmodels' ``SquareTable.homogeneity``
  answers NaN there); exact over the board swaps when at most
  :data:`EXACT_MOVES` boards moved, chi-square beyond;
- :func:`benjamini_hochberg`: the q-values over every figure of every
  modified row (``statsmodels.stats.multitest.multipletests``, ``fdr_bh``);
- :func:`looks_adjusted`: Bonferroni over the looks of ``--until-decided``.

A figure's p-value (``paired``) is the larger of its test's p and its
interval's own p: the larger of a valid p-value and any other number is a
valid p-value, and a figure whose p is at most ``a`` then has a ``1 - a``
interval that leaves out zero. A test that cannot be computed is said so,
never read as "no evidence".

Resampling is seeded (``seed``, an integer the caller derives from the row
and the look), so the same diff gives the same numbers. The ``rng=``
keyword of ``bootstrap`` and ``permutation_test`` is scipy 1.15's
(:data:`NEEDS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

RESAMPLES = 1999  # bootstrap and permutation resamples: a permutation p-value is at least 2 / (RESAMPLES + 1)
EXACT_MOVES = 12  # at most this many moved boards: the 2**12 = 4,096 sign arrangements are enumerated
# The oldest release of each library whose API this module calls, and what it added (tests/test_pins.py
# holds pyproject.toml's lower bounds to them).
NEEDS = {"scipy": ("1.15", "the rng= keyword of bootstrap and permutation_test"),
         "statsmodels": ("0.14", "multipletests, SquareTable and mcnemar as called here and in the tests")}


def mcnemar_midp(b, c):
    """Two-sided mid-p of McNemar's exact test on ``b`` and ``c`` discordant
    pairs: ``2 P(X <= min(b, c)) - P(X = min(b, c))``, ``X ~ Bin(b + c, 1/2)``
    (arrays of counts give an array); 1 where no pair is discordant."""
    from scipy.stats import binom

    b, c = np.asarray(b), np.asarray(c)
    n, k = b + c, np.minimum(b, c)
    with np.errstate(invalid="ignore"):
        p = np.where(n == 0, 1.0, np.minimum(1.0, 2 * binom.cdf(k, n, 0.5) - binom.pmf(k, n, 0.5)))
    return float(p) if p.ndim == 0 else p


def discordant(base: np.ndarray, head: np.ndarray) -> tuple[int, int]:
    """``(b, c)``: boards 1 in base and 0 in head, and 0 in base and 1 in head."""
    return int(np.sum((base == 1) & (head == 0))), int(np.sum((base == 0) & (head == 1)))


def _sum(x, axis=-1):
    return np.sum(x, axis=axis)


def sign_flip_mean_p(diff: np.ndarray, seed: int, resamples: int = RESAMPLES) -> np.ndarray | float:
    """Two-sided p of the sign-flip test of the mean of the paired differences
    ``diff`` (boards on the last axis; leading axes are data sets, each with
    its own p). The statistic is the sum (the mean times the boards): a board
    whose value did not change flips to itself, so only the moved boards
    count, and where at most :data:`EXACT_MOVES` of them moved every sign
    arrangement is enumerated (exact p); otherwise ``resamples`` random ones.
    Valid when a board's base and head are exchangeable under the null."""
    from scipy.stats import permutation_test

    diff = np.asarray(diff, dtype=float)
    flat = diff.reshape(-1, diff.shape[-1]) if diff.ndim else diff.reshape(1, 1)
    moved = np.count_nonzero(flat, axis=-1)
    out = np.ones(len(flat))
    exact = (moved > 0) & (moved <= EXACT_MOVES)
    if exact.any():
        # the moved boards first, padded with zeros (which flip to themselves) to EXACT_MOVES columns
        rows = flat[exact]
        order = np.argsort(rows == 0, axis=-1, kind="stable")
        compact = np.take_along_axis(rows, order, axis=-1)[:, :EXACT_MOVES]
        compact = np.pad(compact, ((0, 0), (0, EXACT_MOVES - compact.shape[1])))
        out[exact] = permutation_test((compact,), _sum, permutation_type="samples", vectorized=True,
                                      n_resamples=2**EXACT_MOVES, axis=-1,
                                      batch=max(1, min(2**EXACT_MOVES, 2_000_000 // (EXACT_MOVES * len(rows))))).pvalue
    rest = moved > EXACT_MOVES
    if rest.any():
        n = flat.shape[-1]
        out[rest] = permutation_test((flat[rest],), _sum, permutation_type="samples", vectorized=True,
                                     n_resamples=resamples, axis=-1, rng=seed,
                                     batch=max(1, min(resamples, 2_000_000 // max(1, n * int(rest.sum()))))).pvalue
    out = out.reshape(diff.shape[:-1]) if diff.ndim else out.reshape(())
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class Intervals:
    """Percentile intervals of a vector of differences and each one's own
    p-value (:func:`interval_p`)."""

    low: np.ndarray
    high: np.ndarray
    p: np.ndarray


def interval_p(distribution: np.ndarray) -> np.ndarray:
    """The p-value of a percentile interval: the smallest ``a`` at which the
    ``1 - a`` interval of the bootstrap ``distribution`` (resamples on the
    last axis, quantiles as ``scipy.stats.quantile``'s default, numpy's
    linear interpolation) leaves out zero, rounded up by a hair so that
    "p <= a" always means "zero is outside the 1 - a interval", floating
    point included.

    The ``q``-quantile sits at position ``h = q (B - 1)`` of the sorted
    distribution, linearly interpolated; it is above zero exactly when ``h``
    passes ``h0``, where the interpolated curve leaves zero (the last
    resample at or below zero, plus the fraction of the step to the next
    that is still at or below zero). The low end ``q = a / 2`` passes it for
    ``a > 2 h0 / (B - 1)``; the high end, below zero, by symmetry."""
    x = np.sort(np.asarray(distribution, dtype=float), axis=-1)
    b = x.shape[-1]
    if b < 2:
        return np.ones(x.shape[:-1])

    def crossing(y):  # the position where the interpolated sorted curve of y leaves values <= 0
        j = np.sum(y <= 0, axis=-1) - 1  # the last index at or below zero (-1: none)
        inside = (j >= 0) & (j < b - 1)
        jj = np.clip(j, 0, b - 2)
        lo, hi = np.take_along_axis(y, jj[..., None], -1)[..., 0], np.take_along_axis(y, jj[..., None] + 1, -1)[..., 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(hi > lo, -lo / (hi - lo), 0.0)
        return np.where(j < 0, -np.inf, np.where(inside, jj + step, b - 1.0))

    up = crossing(x)  # the low end is above zero for a > 2 up / (B - 1)
    down = (b - 1) - crossing(-x[..., ::-1])  # the high end is below zero for a > 2 (1 - down / (B - 1))
    p = np.minimum(2 * np.maximum(up, 0) / (b - 1), 2 * (1 - np.minimum(down, b - 1) / (b - 1)))
    return np.clip(p * (1 + 1e-9) + 1e-12, 0.0, 1.0)


def paired_bootstrap(n: int, statistic: Callable[[np.ndarray], np.ndarray], level: float, seed: int,
                     resamples: int = RESAMPLES) -> Intervals:
    """Percentile intervals of a vector of differences, resampling board
    indices ``0..n-1``: ``statistic(idx)`` takes indices of shape
    ``(..., n)`` and returns the differences, figures first, resamples after;
    with each interval's own p (:func:`interval_p`)."""
    from scipy.stats import bootstrap

    result = bootstrap((np.arange(n),), statistic, vectorized=True, n_resamples=resamples, method="percentile",
                       confidence_level=level, rng=seed, batch=max(1, min(resamples, 400_000 // max(1, n))))
    distribution = np.atleast_2d(result.bootstrap_distribution)
    return Intervals(np.atleast_1d(result.confidence_interval.low), np.atleast_1d(result.confidence_interval.high),
                     interval_p(distribution))


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


@dataclass(frozen=True)
class Homogeneity:
    """A paired categorical comparison: the ``categories`` x ``categories``
    table (base in rows, head in columns), the boards that changed category,
    the Stuart-Maxwell statistic and its degrees of freedom (the rank of its
    covariance), the p-value, and whether it is exact (every swap
    arrangement enumerated) or chi-square."""

    table: list[list[int]]
    moved: int
    statistic: float
    df: int
    p: float
    exact: bool


def _covariance(off: np.ndarray) -> np.ndarray:
    """Stuart-Maxwell's covariance of the margins' difference, in counts: the
    Laplacian of the graph whose edge ``i - j`` weighs the boards that moved
    between ``i`` and ``j`` either way."""
    sym = off + off.T
    return np.diag(sym.sum(axis=1)) - sym


def marginal_homogeneity(base: np.ndarray, head: np.ndarray, categories: int, seed: int = 0) -> Homogeneity:
    """The paired test of "base and head take the categories in the same
    shares" (module docstring). The statistic ``d' V^+ d``: ``d`` the head's
    counts minus the base's, ``V`` their covariance (:func:`_covariance`),
    ``V^+`` its generalised inverse; the rank of ``V`` is the moving
    categories less the groups they move within (each group's counts sum to
    its own total). A category no board leaves or enters adds nothing to
    ``d`` nor ``V``, and the test is the same with or without it. With 2
    moving categories it is McNemar's chi-square, uncorrected; on a table
    whose moving categories all connect, statsmodels' Stuart-Maxwell
    (tests). Up to :data:`EXACT_MOVES` moved boards the p-value is exact:
    the moved boards' base and head swapped in every arrangement
    (``scipy.stats.permutation_test``), ``V`` the same in each."""
    from scipy.sparse.csgraph import connected_components
    from scipy.stats import chi2, permutation_test

    base, head = np.asarray(base, dtype=np.int64), np.asarray(head, dtype=np.int64)
    table = np.zeros((categories, categories), dtype=np.int64)
    np.add.at(table, (base, head), 1)
    off = table - np.diag(np.diag(table))
    moved = int(off.sum())
    if moved == 0:  # every board kept its category: every share's difference is exactly 0
        return Homogeneity(table.tolist(), 0, 0.0, 0, 1.0, True)
    moving = (off.sum(axis=0) + off.sum(axis=1)) > 0
    sub = off[np.ix_(moving, moving)]
    groups = connected_components((sub + sub.T) > 0, directed=False)[0]
    df = int(moving.sum() - groups)
    inverse = np.linalg.pinv(_covariance(sub).astype(float))

    def quadratic(d):
        return np.einsum("...i,ij,...j->...", d, inverse, d)

    d = (sub.sum(axis=0) - sub.sum(axis=1)).astype(float)  # head's counts minus base's
    statistic = float(quadratic(d))
    if moved == 1:  # one board's move and its swap give the same statistic
        return Homogeneity(table.tolist(), 1, statistic, df, 1.0, True)
    if moved <= EXACT_MOVES:
        index = np.cumsum(moving) - 1
        rows, cols = np.nonzero(off)
        pairs = np.repeat(np.stack([index[rows], index[cols]]), off[rows, cols], axis=1)  # a column a moved board
        k = int(moving.sum())

        def stat(x, y, axis=-1):
            counts = (y[..., None] == np.arange(k)).sum(axis=-2) - (x[..., None] == np.arange(k)).sum(axis=-2)
            return quadratic(counts.astype(float))

        p = float(permutation_test((pairs[0], pairs[1]), stat, permutation_type="samples", vectorized=True,
                                   n_resamples=2**EXACT_MOVES, alternative="greater").pvalue)
        return Homogeneity(table.tolist(), moved, statistic, df, p, True)
    return Homogeneity(table.tolist(), moved, statistic, df, float(chi2.sf(statistic, df)), False)


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


def looks_adjusted(p_last: float, looks: int) -> float:
    """The p-value of a figure looked at up to ``looks`` times (optional
    stopping, ``--until-decided``), from its p at the look where the row
    stopped: Bonferroni over the planned looks, ``min(1, looks * p_last)``.
    Valid whatever rule stops the looks: the last look's p is one of the
    looks' p, and ``P(some p_k <= t / looks) <= t``; and it agrees with the
    last look's interval, drawn at level ``1 - alpha / looks`` (docs/review.md
    "Decided, not guessed")."""
    return float(min(1.0, looks * p_last))
