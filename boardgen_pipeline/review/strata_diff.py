"""The stratified figures of a node-map pool change, compared where the draws
pair (SPEC 4 "Draw", "First adventure", "Stratified measurement"; seed 004
"测量对账：分层出数" and "抽签时机与可复现"; docs/review.md "Strata").

Seed 004's worry is attribution: with random maps, a moved reading cannot be
told apart between "the numbers moved" and "the map moved". So the strata
diff compares the *pools* alone: every row figure is held at HEAD's (the
row's calibration batch, its report C and difficulty figures, as
``steps.stratify`` reads them), on both sides, and only the maps change.
What a row change does is the row diff's answer, not this one.

Adventure ``s`` draws level ``L``'s map from its ``node_map`` scope under
master seed ``s``: the adventure opens one scope a level start, in level
order, so level ``L``'s is its place among the pool's levels, and the map
replays alone from it (``nodemap.replay_level``, the function the
pipeline's determinism check holds the draws to). Only the changed levels
are drawn, and base and head draw with the same stream: a drawn map's figure (the mean of its board nodes' row figures, one
node one board) is compared **paired by adventure** (the sign-flip test of
the mean, paired bootstrap: ``paired.measure``), and joins the diff's false discovery
control. Where nothing pairs, the output says ``paired: false`` and gives no
test rather than pretend:

- the **pool** figure and each changed **template**'s figure
  (``steps.stratify.strata_records``, what ``calibration_strata`` holds) are
  sums over nodes, not draws: base, head and the difference, exact;
- the **first adventure** takes the fixed template with no draw: one map a
  level, the same in every adventure, compared exactly;
- a level only one state has a pool for: that state's figures only.

Nothing is compared when the pools' content is the same (a comment, order or
whitespace edit): no draw, no row figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from boardgen_pipeline import canonical
from boardgen_pipeline.calibration.batch import batch_scopes, difficulty_figures, evaluate_row
from boardgen_pipeline.nodemap import fixed_map, replay_level
from boardgen_pipeline.nodemap.draw import level_scope
from boardgen_pipeline.nodemap.model import BOARD_TYPES
from boardgen_pipeline.review import figures as F
from boardgen_pipeline.review import pairing
from boardgen_pipeline.review.paired import FigureDiff, measure, resample_seed
from boardgen_pipeline.review.sources import Source
from boardgen_pipeline.steps import stratify

if TYPE_CHECKING:
    from boardgen_pipeline.review.asked import Settings

RESAMPLE_LABEL = "review_resample_strata"  # its own stream, one scope a level
ROW_FIGURES = "head"  # whose row figures both sides stand on (module docstring)


def exact(base, head) -> dict:
    """A figure compared without a test: a sum over nodes, or one map."""
    delta = None if base is None or head is None else head - base
    return {"base": base, "head": head, "delta": delta, "paired": False}


@dataclass
class LevelStrata:
    """One level whose pool changed: the drawn maps' figures paired by
    adventure (``figures``), the pool's, the first adventure's and each
    changed template's exactly."""

    level: int
    state: str  # "modified", "added" or "removed": the level's pool
    adventures: int = 0  # pairs compared
    figures: dict[str, FigureDiff] = field(default_factory=dict)
    pool: dict[str, dict] = field(default_factory=dict)
    first_adventure: dict[str, dict] = field(default_factory=dict)
    templates: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def flagged(self) -> list[str]:
        return [name for name, f in self.figures.items() if f.flagged]

    def to_json(self) -> dict:
        return {"level_index": self.level, "state": self.state, "adventures": self.adventures,
                "flagged": self.flagged, "notes": self.notes,
                "figures": {name: {**f.to_json(), "paired": True, "branch": "drawn"}
                            for name, f in self.figures.items()},
                "pool": self.pool, "first_adventure": self.first_adventure, "templates": self.templates}


@dataclass
class StrataDiff:
    """The strata of both states: compared when the pools' content differs."""

    compared: bool = False
    adventures: int = 0
    levels: list[LevelStrata] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def flagged(self) -> list[tuple[int, str]]:
        return [(lv.level, name) for lv in self.levels for name in lv.flagged]

    def to_json(self) -> dict:
        return {"compared": self.compared, "adventures": self.adventures, "row_figures": ROW_FIGURES,
                "notes": self.notes, "levels": [lv.to_json() for lv in self.levels]}


def _level_digest(pool) -> str | None:
    if pool is None:
        return None
    return canonical.digest([[replace(t, file="") for t in pool.templates], pool.procedural])


def row_figures(source: Source, key: tuple[int, int], samples: int, master_seed: int,
                store: pairing.StoredBoards) -> dict[str, float] | None:
    """Row ``key``'s stratified figures (``steps.stratify.FIGURES``) in
    ``source``, from its calibration batch (stored boards where they are
    the very boards, else generated); None when the state has no such row
    or its boards cannot be rebuilt."""
    version = source.rows.get(key)
    if version is None:
        return None
    try:
        records = pairing.boards(version, source.header, batch_scopes(*key, samples), master_seed, store).records
    except pairing.NotRebuildable:
        return None
    report = evaluate_row(version.row, records)
    values = {"p10": report.p10, "p50": report.p50, "p90": report.p90, "retry_rate": report.retry_rate,
              "mean_attempts": report.mean_attempts, **difficulty_figures(records)}
    return {name: float(values[name]) for name in stratify.FIGURES if values.get(name) is not None}


def board_depths(m) -> tuple[int, ...]:
    """The depths of a map's board nodes (battle and boss), one a node."""
    return tuple(sorted(n.depth for n in m.nodes if n.type in BOARD_TYPES))


def drawn_depths(pools: dict, level: int, adventures: range) -> list[tuple[int, ...]]:
    """The board-node depths of level ``level``'s drawn map in each adventure
    (its scope as the pipeline's draws give it: ``nodemap.draw.level_scope``)."""
    scope, pool = level_scope(pools, level), pools[level]
    return [board_depths(replay_level(pool, seed, scope)) for seed in adventures]


def map_figures(level: int, depths: tuple[int, ...], figures: dict) -> dict[str, float]:
    """A map's figures: the mean over its board nodes of their rows' figures
    (NaN where a node's row has none)."""
    rows = [figures.get((level, d)) for d in depths]
    return {f.column: (sum(row[f.column] for row in rows) / len(rows)
                       if rows and all(row is not None and f.column in row for row in rows) else float("nan"))
            for f in F.STRATA_FIGURES}


def _by_template(records: list[dict]) -> dict[tuple[int, str], dict]:
    return {(r["level_index"], r["template_id"]): r for r in records if r["kind"] == "template"}


def compare(base: Source, head: Source, settings: Settings, margins: dict[str, float],
            store: pairing.StoredBoards) -> StrataDiff:
    """The strata diff (module docstring; ``settings``: the diff's, whose
    ``adventures`` draw the maps; ``margins``: the margins it resolved)."""
    samples, master_seed, adventures = settings.samples, settings.master_seed, settings.adventures
    out = StrataDiff(adventures=adventures)
    bp = base.catalog.pools if base.catalog is not None else None
    hp = head.catalog.pools if head.catalog is not None else None
    if not bp and not hp:
        return out
    levels = sorted(lv for lv in set(bp or {}) | set(hp or {})
                    if _level_digest((bp or {}).get(lv)) != _level_digest((hp or {}).get(lv)))
    if not levels:
        return out
    out.compared = True
    seeds = range(adventures)
    sides = {"base": bp or {}, "head": hp or {}}
    drawn = {(side, lv): drawn_depths(pools, lv, seeds) for side, pools in sides.items() for lv in levels if lv in pools}
    first = {(side, lv): board_depths(fixed_map(pools[lv])) for side, pools in sides.items() for lv in levels
             if lv in pools}
    wanted = sorted({(lv, d) for (_, lv), maps in drawn.items() for m in {*maps} for d in m}
                    | {(lv, d) for (_, lv), m in first.items() for d in m})
    figures = {key: row_figures(head, key, samples, master_seed, store) for key in wanted}
    missing = [f"{k[0]}-{k[1]}" for k, v in figures.items() if v is None]
    figures = {k: v for k, v in figures.items() if v is not None}
    if missing:
        out.notes.append(f"rows {', '.join(missing)} have no figures in HEAD: the maps standing on them are left out")
    strata = {side: stratify.strata_records({lv: p for lv, p in (pools or {}).items() if lv in levels},
                                            stratify.row_figures_of(figures) if figures else {})
              for side, pools in (("base", bp), ("head", hp))}
    for level in levels:
        has_b, has_h = level in (bp or {}), level in (hp or {})
        lv = LevelStrata(level, "modified" if has_b and has_h else "added" if has_h else "removed")
        out.levels.append(lv)
        pool_b = next((r for r in strata["base"] if r["level_index"] == level and r["kind"] == "pool"), {})
        pool_h = next((r for r in strata["head"] if r["level_index"] == level and r["kind"] == "pool"), {})
        first_b, first_h = ({} if ("base", level) not in first else map_figures(level, first["base", level], figures),
                            {} if ("head", level) not in first else map_figures(level, first["head", level], figures))
        for f in F.STRATA_FIGURES:
            lv.pool[f.name] = exact(pool_b.get(f.column), pool_h.get(f.column))
            lv.first_adventure[f.name] = exact(_number(first_b.get(f.column)), _number(first_h.get(f.column)))
        tb, th = _by_template(strata["base"]), _by_template(strata["head"])
        base_t = {t.id: replace(t, file="") for t in _templates(bp, level)}
        head_t = {t.id: replace(t, file="") for t in _templates(hp, level)}
        for tid in sorted(set(base_t) | set(head_t)):
            if base_t.get(tid) == head_t.get(tid):
                continue
            change = "added" if tid not in base_t else "removed" if tid not in head_t else "modified"
            b, h = tb.get((level, tid), {}), th.get((level, tid), {})
            lv.templates.append({"template_id": tid, "change": change, "paired": False,
                                 "figures": {f.name: exact(b.get(f.column), h.get(f.column))
                                             for f in F.STRATA_FIGURES}})
        if not (has_b and has_h):
            lv.notes.append(f"only {'HEAD' if has_h else 'BASE'} has a pool for level {level}: nothing to pair")
            continue
        # a pool draws few distinct maps: each map's figures once
        known = {m: map_figures(level, m, figures) for m in {*drawn["base", level], *drawn["head", level]}}
        pairs = [(known[b], known[h]) for b, h in zip(drawn["base", level], drawn["head", level])]
        ok = [(b, h) for b, h in pairs
              if not any(np.isnan(b[f.column]) or np.isnan(h[f.column]) for f in F.STRATA_FIGURES)]
        if len(ok) < len(pairs):
            lv.notes.append(f"{len(pairs) - len(ok)} of {len(pairs)} adventures left out: a drawn map stands on a "
                            "row without figures")
        lv.adventures = len(ok)
        if not ok:
            continue
        cols = {side: {f.column: np.array([pair[i][f.column] for pair in ok]) for f in F.STRATA_FIGURES}
                for i, side in enumerate(("base", "head"))}
        lv.figures = measure(cols["base"], cols["head"], False, margins, 1 - settings.alpha,
                             resample_seed(RESAMPLE_LABEL, level, master_seed), settings.resamples, F.STRATA_FIGURES)
    return out


def _templates(pools: dict | None, level: int) -> tuple:
    pool = (pools or {}).get(level)
    return pool.templates if pool is not None else ()


def _number(x):
    return None if x is None or np.isnan(x) else x
