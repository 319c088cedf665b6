"""The figures of one modified row, compared paired: base and head measured
on the same boards' scopes, each figure's difference with its interval and
its test (seed 001 F4 report C; seed 004 on attribution; docs/review.md
"Statistics").

:func:`measure` takes the per-board columns of both versions
(``figures.board_columns``) and gives a :class:`FigureDiff` a figure: the
binary figures' McNemar mid-p and discordant boards, the means' Wilcoxon
signed-rank p, the percentiles' sign-flip p, the exits' Stuart-Maxwell p,
and every figure's paired bootstrap interval, all from ``stats``. A figure
whose column no board moved differs by 0 in every resample: it gets
``[0, 0]`` and p = 1 without resampling. The overlays and the strata are
measured by the same function on their own figures (a pair is then a
board's two overlays, or an adventure's two maps).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from boardgen_pipeline.review import figures as F
from boardgen_pipeline.review import pairing, stats


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
    (for ``exits``: each exit's share); ``ci`` the paired interval of the
    difference; ``p`` the test's p-value (adjusted for the looks under
    optional stopping); ``q`` the Benjamini-Hochberg q-value; ``b``/``c``
    the discordant boards of a binary figure."""

    name: str
    kind: str
    margin: float
    base: float | dict
    head: float | dict
    delta: float | dict
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

    @property
    def size(self) -> float:
        """The estimate the margin is held against: ``|delta|`` (for the exits,
        the largest move of one exit's share)."""
        if isinstance(self.delta, dict):
            return max(abs(v) for v in self.delta.values())
        return abs(self.delta)

    def to_json(self) -> dict:
        out = {"base": self.base, "head": self.head, "delta": self.delta,
               "ci": list(self.ci) if self.ci is not None else None, "p": self.p, "q": self.q,
               "margin": self.margin, "flagged": self.flagged, "decided": self.decided, "boards": self.boards,
               "correlation": self.correlation}
        if self.kind == F.BINARY:
            out.update(b=self.b, c=self.c)
        return out


def measure(base_cols: dict, head_cols: dict, fog: bool, margins: dict[str, float], level: float, seed: int,
            resamples: int, figures: tuple[F.Figure, ...] = F.FIGURES) -> dict[str, FigureDiff]:
    """Every figure of ``figures`` that applies, compared paired on the
    columns (one value a pair: a board, or an adventure for the strata)."""
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
    return {f.name: out[f.name] for f in figures if f.name in out}


def _group(group: list[F.Figure], b: dict, h: dict, margins: dict, level: float, seed: int,
           resamples: int) -> dict[str, FigureDiff]:
    n = len(next(iter(b.values()))) if b else 0
    out = {}
    moving = []  # figures whose column moved on some board: the others differ by 0 in every resample
    for f in group:
        base_col, head_col = b[f.column], h[f.column]
        d = FigureDiff(f.name, f.kind, margins[f.name], F.value(f, base_col), F.value(f, head_col), 0.0, (0.0, 0.0),
                       1.0, boards=n, correlation=pairing.correlation(base_col.astype(float), head_col.astype(float)))
        d.delta = d.head - d.base
        if f.kind == F.BINARY:
            d.b, d.c = stats.discordant(base_col, head_col)
            d.p = stats.mcnemar_midp(d.b, d.c)
        elif f.kind == F.MEAN:
            d.p = stats.wilcoxon_p(base_col, head_col)
        elif f.kind == F.CATEGORIES:
            d.base, d.head = F.shares(base_col, f.categories), F.shares(head_col, f.categories)
            d.delta = {k: d.head[k] - d.base[k] for k in d.base}
            d.ci = None
            d.p, _ = stats.marginal_homogeneity_p(base_col, head_col, len(f.categories))
        out[f.name] = d
        if f.kind != F.CATEGORIES and n and np.any(base_col != head_col):
            moving.append(f)
    if moving:
        base, head, both = columns(moving, b, h)
        low, high = stats.paired_bootstrap(
            n, lambda idx, axis=-1: figure_values(moving, head, idx) - figure_values(moving, base, idx),
            level, seed, resamples)
        for f, lo, hi in zip(moving, low, high):
            out[f.name].ci = (float(lo), float(hi))
        percentiles = [f for f in moving if f.kind == F.PERCENTILE]
        if percentiles:
            ps = stats.sign_flip_p(n, lambda x, y: figure_values(percentiles, both, y)
                                   - figure_values(percentiles, both, x), seed + 1, resamples)
            for f, p in zip(percentiles, ps):
                out[f.name].p = float(p)
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
    openings) move by whole steps."""
    if d.ci is None:
        return True
    lo, hi, m = d.ci[0], d.ci[1], d.margin
    return not (lo < m < hi or lo < -m < hi)
