"""A targeted figure measured on a set of boards, with its interval (SPEC 12;
SPEC 7 report C; docs/review.md "The curve export"; docs/decisions/tuning.md
"Intervals").

The *value* is report C's own: the figure's column of ``evaluate_row``'s
report (``batch``: the perfect player's shares and means, numpy's linear
percentiles, the retry rate), the number ``boardgen curve`` exports and the
nightly stores; nothing here computes it again. The *interval* (95% unless
asked) comes from the boards' per-board values, one function a kind, each
from scipy:

- a **share** (win rate, no-guess share, retry rate): Jeffreys' interval,
  the Beta(k + 1/2, n - k + 1/2) quantiles (``scipy.stats.beta``), with the
  end at 0 or 1 when no board or every board counts (Brown, Cai & DasGupta
  2001: its coverage stays near nominal at small n and rates near 0 or 1,
  where the tuner's win rates often are);
- a **mean** (mean survival, mean guesses): Student's t on the per-board
  values (``scipy.stats.t``), clipped to the figure's domain;
- a **percentile** (inferability p10/p50, 3BV p50): the distribution-free
  interval between two order statistics (``scipy.stats.quantile_test``),
  an end it cannot give on too few boards being the figure's domain end.

The perfect player's figures count the boards it could analyse, as report C
does (``batch.fairness``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from boardgen_pipeline.tables.curve_targets import FIGURES

SHARE, MEAN, PERCENTILE = "share", "mean", "percentile"
LEVEL = 0.95


@dataclass(frozen=True)
class Kind:
    """How a figure reads its boards: its kind, the record field, and for a
    percentile its q; ``analysed``: only boards the perfect player analysed."""

    kind: str
    field: str
    q: float = 0.5
    analysed: bool = False


KINDS: dict[str, Kind] = {
    "win_rate": Kind(SHARE, "won", analysed=True),
    "no_guess_share": Kind(SHARE, "forced_guesses", analysed=True),  # a board counts when it needed none
    "retry_rate": Kind(SHARE, "attempts_used"),  # a board counts when it needed a second attempt
    "mean_survival": Kind(MEAN, "survival", analysed=True),
    "mean_guesses": Kind(MEAN, "forced_guesses", analysed=True),
    "inferability_p10": Kind(PERCENTILE, "inferability", q=0.1),
    "inferability_p50": Kind(PERCENTILE, "inferability", q=0.5),
    "bbbv_p50": Kind(PERCENTILE, "bbbv", q=0.5),
}


@dataclass(frozen=True)
class Estimate:
    """A figure on ``n`` boards: report C's value and its interval at ``level``."""

    value: float | None
    low: float
    high: float
    n: int
    level: float = LEVEL

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def as_dict(self) -> dict:
        finite = lambda x: x if x is not None and math.isfinite(x) else None  # noqa: E731
        return {"value": finite(self.value), "interval": [finite(self.low), finite(self.high)], "boards": self.n,
                "level": self.level}

    def text(self, digits: int = 3) -> str:
        if self.value is None:
            return "not measured (no board analysed)"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}] on {self.n} boards"


def column(figure: str, records: list[dict]) -> np.ndarray:
    """The per-board values the figure's interval is read from (a share: 0/1)."""
    k = KINDS[figure]
    recs = [r for r in records if r.get("won") is not None] if k.analysed else records
    values = [r.get(k.field) for r in recs]
    if figure == "no_guess_share":
        return np.array([v == 0 for v in values], dtype=float)
    if figure == "retry_rate":
        return np.array([v >= 2 for v in values], dtype=float)
    return np.array([float(v) for v in values if v is not None], dtype=float)


def jeffreys(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Jeffreys' interval of a share of ``successes`` in ``n`` (``(0, 1)`` with none)."""
    from scipy.stats import beta

    if n <= 0:
        return (0.0, 1.0)
    a = (1 - level) / 2
    low = 0.0 if successes == 0 else float(beta.ppf(a, successes + 0.5, n - successes + 0.5))
    high = 1.0 if successes == n else float(beta.ppf(1 - a, successes + 0.5, n - successes + 0.5))
    return (low, high)


def interval(figure: str, values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The figure's interval from its per-board values (module docstring)."""
    k = KINDS[figure]
    domain = FIGURES[figure]
    n = len(values)
    if n == 0:
        return (domain.low, domain.high)
    if k.kind == SHARE:
        return jeffreys(int(values.sum()), n, level)
    if k.kind == MEAN:
        from scipy.stats import t

        mean = float(values.mean())
        sd = float(values.std(ddof=1)) if n >= 2 else 0.0
        half = float(t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n) if n >= 2 else math.inf
        return (max(domain.low, mean - half), min(domain.high, mean + half))
    from scipy.stats import quantile_test

    ci = quantile_test(values, p=k.q).confidence_interval(level)
    low, high = float(ci.low), float(ci.high)
    return (domain.low if math.isnan(low) else low, domain.high if math.isnan(high) else high)


def estimate(figure: str, records: list[dict], report: dict, level: float = LEVEL) -> Estimate:
    """The figure on ``records``: ``report``'s value (report C of those very
    boards, ``evaluate_row(...).as_dict()`` or the stored report) and the
    interval of the boards' values."""
    values = column(figure, records)
    value = report.get(FIGURES[figure].report)
    low, high = interval(figure, values, level)
    return Estimate(None if value is None else float(value), low, high, len(values), level)


def share_estimate(successes: int, n: int, level: float = LEVEL) -> Estimate:
    """A share's estimate from its counts (a synthetic figure, the tests' known curves)."""
    low, high = jeffreys(successes, n, level)
    return Estimate(successes / n if n else None, low, high, n, level)
