"""The figures of one modified row, compared paired: base and head measured
on the same boards' scopes, each figure's difference with its interval and
its test (seed 001 F4 report C; seed 004 on attribution; docs/review.md
"Statistics").

:func:`measure` takes the per-board columns of both versions
(``figures.board_columns``) and gives a :class:`FigureDiff` a figure, each
kind with its test (``stats``): the binary figures' McNemar mid-p and
discordant boards, the means' sign-flip test of the mean, the percentiles'
sign-flip test of the percentile, the categories' Stuart-Maxwell test; and
every binary, mean and percentile figure's paired bootstrap interval. A
figure's p is never below its interval's own p (``stats`` module
docstring), so a figure whose p is at most ``a`` has a ``1 - a`` interval
that leaves out zero. A figure whose column no board moved differs by 0 in
every resample: it gets ``[0, 0]`` and p = 1 without resampling; a figure
with no board to compare is *untested*, and says so. :func:`measure` also
says whether each figure is decided (:func:`decided`). The overlays and
the strata are measured by the same function on their own figures (a pair
is then a board's two overlays, or an adventure's two maps).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from boardgen_pipeline.board.rng import initial_state
from boardgen_pipeline.review import figures as F
from boardgen_pipeline.review import pairing, stats

# The flag rule, in the words every output prints beside a flag (docs/review.md "The flag rule").
FLAG_RULE = ("flagged: q <= the FDR level (a change, not noise) and |delta| > the figure's margin (the estimate, "
             "not the interval, beyond it)")
BEYOND = "interval beyond the margin: the change exceeds it"
MAY_BE_WITHIN = "interval reaches inside the margin: the change may be smaller than the margin"


def resample_seed(label: str, index: int, master_seed: int) -> int:
    """The seed of one comparison's resampling: the project's stream naming
    (``label``: whose comparison, a row's, its overlays', a level's strata;
    ``index``: which one, and which look), under the master seed. The
    bootstrap takes it, the sign-flip tests the next ones."""
    return initial_state(label, index, master_seed)


class RowFigures:
    """What a row's comparison (board figures, overlay figures) shares: its
    key as "L-D" and the names of its flagged figures. Its holder has
    ``key`` and ``figures``."""

    @property
    def text_key(self) -> str:
        return f"{self.key[0]}-{self.key[1]}"

    @property
    def flagged(self) -> list[str]:
        return [name for name, f in self.figures.items() if f.flagged]


@dataclass
class FigureDiff:
    """One figure of one modified row. ``base``/``head``/``delta`` are numbers
    (for categories: each category's share); ``ci`` the paired interval of
    the difference; ``p`` the figure's p-value (adjusted for the looks under
    optional stopping): the larger of its test's (``p_test``) and its
    interval's own (``p_interval``); ``q`` the Benjamini-Hochberg q-value;
    ``b``/``c`` the discordant boards of a binary figure; ``untested``: why
    no test could be computed (``p`` is then None)."""

    name: str
    kind: str
    margin: float
    base: float | dict | None
    head: float | dict | None
    delta: float | dict | None
    ci: tuple[float, float] | None = None
    p: float | None = None
    q: float | None = None
    b: int | None = None
    c: int | None = None
    boards: int = 0
    correlation: float | None = None
    flagged: bool = False
    decided: bool = True
    looked: list[float] = field(default_factory=list)  # p at each look
    p_test: float | None = None
    p_interval: float | None = None
    untested: str | None = None

    @property
    def size(self) -> float:
        """The estimate the margin is held against: ``|delta|`` (for the
        categories, the largest move of one category's share)."""
        if isinstance(self.delta, dict):
            return max(abs(v) for v in self.delta.values())
        return abs(self.delta) if self.delta is not None else 0.0

    @property
    def beyond_margin(self) -> bool | None:
        """Whether the interval lies wholly beyond the margin, on either side
        (None: no interval, the categories)."""
        if self.ci is None:
            return None
        return self.ci[0] > self.margin or self.ci[1] < -self.margin

    @property
    def flag_reading(self) -> str | None:
        """What a flag says of the size of the change (None: not flagged)."""
        if not self.flagged:
            return None
        if self.beyond_margin is None:
            return "no interval: the test and the estimate only; the change may be smaller than the margin"
        return BEYOND if self.beyond_margin else MAY_BE_WITHIN

    def to_json(self) -> dict:
        out = {"base": self.base, "head": self.head, "delta": self.delta,
               "ci": list(self.ci) if self.ci is not None else None, "p": self.p, "q": self.q,
               "p_test": self.p_test, "p_interval": self.p_interval, "untested": self.untested,
               "margin": self.margin, "flagged": self.flagged, "beyond_margin": self.beyond_margin,
               "flag_reading": self.flag_reading, "decided": self.decided, "boards": self.boards,
               "correlation": self.correlation}
        if self.kind == F.BINARY:
            out.update(b=self.b, c=self.c)
        return out


def measure(base_cols: dict, head_cols: dict, fog: bool, margins: dict[str, float], level: float, seed: int,
            resamples: int, figures: tuple[F.Figure, ...] = F.FIGURES) -> dict[str, FigureDiff]:
    """Every figure of ``figures`` that applies, compared paired on the
    columns (one value a pair: a board, or an adventure for the strata),
    intervals at ``level``, each figure decided or not (:func:`decided`)."""
    n = len(next(iter(base_cols.values()))) if base_cols else 0
    everyone = np.ones(n, dtype=bool)
    wanted = [f for f in figures if F.applies(f, fog)]
    # the perfect player's figures: the boards it could analyse in both versions
    analysed = (~(np.isnan(base_cols["won"]) | np.isnan(head_cols["won"])) if any(f.analysed_only for f in wanted)
                else everyone)
    out: dict[str, FigureDiff] = {}
    for mask, group in ((everyone, [f for f in wanted if not f.analysed_only]),
                        (analysed, [f for f in wanted if f.analysed_only])):
        if not group:
            continue
        cols = {f.column for f in group}
        b = {c: base_cols[c][mask] for c in cols}
        h = {c: head_cols[c][mask] for c in cols}
        out.update(_group(group, b, h, margins, level, seed, resamples))
    for d in out.values():
        d.decided = decided(d)
    return {f.name: out[f.name] for f in figures if f.name in out}


def _figure(f: F.Figure, base: np.ndarray, head: np.ndarray, margin: float, seed: int, resamples: int) -> FigureDiff:
    """One figure's values and its test (the interval and the percentiles'
    test come after, on the figures whose column moved)."""
    n = len(base)
    common = {"name": f.name, "kind": f.kind, "margin": margin, "boards": n,
              "correlation": pairing.correlation(base.astype(float), head.astype(float))}
    if n == 0:
        return FigureDiff(**common, base=None, head=None, delta=None, untested="no board to compare on both sides")
    if f.kind == F.CATEGORIES:
        shares_b, shares_h = F.shares(base, f.categories), F.shares(head, f.categories)
        p = stats.marginal_homogeneity(base, head, len(f.categories)).p
        return FigureDiff(**common, base=shares_b, head=shares_h, delta={k: shares_h[k] - shares_b[k] for k in shares_b},
                          p=p, p_test=p)
    value_b, value_h = F.value(f, base), F.value(f, head)
    if f.kind == F.BINARY:
        b, c = stats.discordant(base, head)
        p = stats.mcnemar_midp(b, c)
        return FigureDiff(**common, base=value_b, head=value_h, delta=value_h - value_b, ci=(0.0, 0.0), p=p, p_test=p,
                          b=b, c=c)
    # means: the sign-flip test of the mean (its own seed, after the bootstrap's and the percentiles'); the
    # percentiles' test runs below, on those whose column moved (p = 1 for the others: every swap gives 0)
    p = stats.sign_flip_mean_p(head - base, seed + 2, resamples) if f.kind == F.MEAN else 1.0
    return FigureDiff(**common, base=value_b, head=value_h, delta=value_h - value_b, ci=(0.0, 0.0), p=p, p_test=p)


def _group(group: list[F.Figure], b: dict, h: dict, margins: dict, level: float, seed: int,
           resamples: int) -> dict[str, FigureDiff]:
    n = len(next(iter(b.values()))) if b else 0
    out = {f.name: _figure(f, b[f.column], h[f.column], margins[f.name], seed, resamples) for f in group}
    # the figures whose column moved on some board: the others differ by 0 in every resample
    moving = [f for f in group if f.kind != F.CATEGORIES and n and np.any(b[f.column] != h[f.column])]
    if moving:
        base, head, both = columns(moving, b, h)
        intervals = stats.paired_bootstrap(
            n, lambda idx, axis=-1: figure_values(moving, head, idx) - figure_values(moving, base, idx),
            level, seed, resamples)
        percentiles = [f for f in moving if f.kind == F.PERCENTILE]
        tested = dict(zip((f.name for f in percentiles), stats.sign_flip_p(
            n, lambda x, y: figure_values(percentiles, both, y) - figure_values(percentiles, both, x), seed + 1,
            resamples))) if percentiles else {}
        for f, lo, hi, p_ci in zip(moving, intervals.low, intervals.high, intervals.p):
            d = out[f.name]
            d.ci, d.p_interval = (float(lo), float(hi)), float(p_ci)
            d.p_test = float(tested.get(f.name, d.p_test))
            d.p = max(d.p_test, d.p_interval)
    for d in out.values():
        d.looked.append(d.p)
    return out


@dataclass(frozen=True)
class Column:
    """A column of per-board values laid out for resampling: the values (the
    means read them) and their rank codes among the distinct values of both
    versions (the percentiles sort them: ``stats.percentiles``)."""

    values: np.ndarray
    codes: np.ndarray
    levels: np.ndarray


def columns(figures: list[F.Figure], b: dict, h: dict) -> tuple[dict, dict, dict]:
    """The figures' columns of base, of head, and of both laid end to end
    (base's boards, then head's: the sign-flip test's indices)."""
    base, head, both = {}, {}, {}
    for c in dict.fromkeys(f.column for f in figures):
        levels = np.unique(np.concatenate([b[c], h[c]]))
        base[c] = Column(b[c], stats.ranks(b[c], levels), levels)
        head[c] = Column(h[c], stats.ranks(h[c], levels), levels)
        both[c] = Column(np.concatenate([b[c], h[c]]), np.concatenate([base[c].codes, head[c].codes]), levels)
    return base, head, both


def figure_values(figures: list[F.Figure], cols: dict[str, Column], idx: np.ndarray) -> np.ndarray:
    """Each figure's value on the boards ``idx`` picks from its column (boards on
    the last axis, resamples before), figures first; the percentiles of one
    column in one sort."""
    out: dict[str, np.ndarray] = {}
    for column in dict.fromkeys(f.column for f in figures):
        mine, col = [f for f in figures if f.column == column], cols[column]
        percentiles = [f for f in mine if f.kind == F.PERCENTILE]
        if percentiles:
            out.update(zip((f.name for f in percentiles),
                           stats.percentiles(col.codes[idx], col.levels, [f.q for f in percentiles])))
        if len(percentiles) < len(mine):
            mean = col.values[idx].mean(axis=-1)
            out.update((f.name, mean) for f in mine if f.kind != F.PERCENTILE)
    return np.stack([out[f.name] for f in figures])


def decided(d: FigureDiff) -> bool:
    """Whether the interval settles the figure: it does not straddle the
    margin on either side (it lies at or beyond it, or within it). An
    interval may end on the margin: percentiles of whole numbers (3BV,
    openings) move by whole steps. A figure without an interval (the
    categories, an untested figure) has nothing more to settle."""
    if d.ci is None:
        return True
    lo, hi, m = d.ci[0], d.ci[1], d.margin
    return not (lo < m < hi or lo < -m < hi)
