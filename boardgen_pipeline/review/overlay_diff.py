"""The overlay figures of a table change, compared paired (SPEC 3 "Overlay
output per board"; seed 003 "布置段"; SPEC 7's scopes; seed 004 on
attribution; docs/review.md "Overlays").

A row's overlays are a pure function of its boards, the variation table's
routing and placement header, the row's Boss flag and board type, and, for
a resource-face variant, the resource weights. Board ``i`` of row ``(L, D)``
is the board of scope ``sigma(L, D) + i`` and its overlay is placed from the
``variant_place`` stream of that same scope (``variants.overlays``), so the
base and head overlays of a row are placed on the boards of the same scopes
and compared board by board, as the boards themselves are (``pairing``):
on the very same board when the row's boards did not change (a variation,
resource or Boss-flag change), on the two versions' boards of one scope
when they did (a modified row).

The overlays are placed and checked by the pipeline's own functions
(``variants.batch.place_row``, ``variants.outcomes.check_row``), never a
second path. Per board: the variant cells and packs placed, a shortfall, a
whole-board variant, a rule of the overlay checks broken, the type drawn,
and the survival weight its resource draw keeps (``skew.weights_for_overlay``).
The figures (``figures.OVERLAY_FIGURES``) are compared by ``paired.measure``
and join the diff's false discovery control.

A row is compared only when something that decides its overlays differs
between the states (:func:`causes`): its boards, its candidate pools or the
placement header, its Boss flag, or, when its pools hold a resource-face
type, the resource weights. A comment, whitespace or order edit of a table,
or a change to types the row's gate never admits, places the same overlays:
no overlay work.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from boardgen_pipeline import canonical
from boardgen_pipeline.board.r0 import layouts_to_arrays, r0_batch
from boardgen_pipeline.calibration.batch import batch_scopes
from boardgen_pipeline.review import figures as F
from boardgen_pipeline.review import pairing
from boardgen_pipeline.review.paired import FigureDiff, RowFigures, measure, resample_seed
from boardgen_pipeline.review.sources import Source
from boardgen_pipeline.scopes import sigma
from boardgen_pipeline.variants.table import candidate_pools

if TYPE_CHECKING:
    from boardgen_pipeline.review.asked import Settings
    from boardgen_pipeline.variants.batch import OverlayBatch

TABLES = ("variation.toml", "resource_weights.toml")  # the tables besides board_gen that decide overlays
RESAMPLE_LABEL = "review_resample_overlay"  # its own stream: a row's board figures keep theirs
NONE = "(none)"  # the type of a board without a variant


@dataclass
class OverlayDiff(RowFigures):
    """One row's overlays, base against head on the same scopes. ``state``:
    the board row's (modified or identical); ``causes``: what differs that
    decides its overlays."""

    key: tuple[int, int]
    state: str
    causes: list[str] = field(default_factory=list)
    figures: dict[str, FigureDiff] = field(default_factory=dict)
    samples: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"key": self.text_key, "level_index": self.key[0], "node_depth": self.key[1], "state": self.state,
                "causes": self.causes, "flagged": self.flagged, "samples": self.samples, "notes": self.notes,
                "figures": {name: f.to_json() for name, f in self.figures.items()}}


def has_variation(source: Source) -> bool:
    return source.catalog is not None and source.catalog.variation is not None


def _gate(source: Source, level: int, board_type: str, boss: bool, memo: dict) -> tuple[str, str | None]:
    """The digest of a row's pools with the placement header, and of the
    resource weights when a resource-face type can reach it: one a gate
    (level, board type, Boss flag), which many rows share."""
    at = (id(source), level, board_type, boss)
    if at not in memo:
        catalog = source.catalog
        variation, resources = catalog.variation, catalog.resources
        pools = candidate_pools(variation, level_index=level, board_type=board_type, is_boss=boss)
        face = any(t.effect == "resource_face" for t in (*pools.global_pool, *pools.region_pool))
        header = (variation.percent_of_cells, variation.per_level_bonus, variation.pack_min, variation.pack_max)
        memo[at] = (canonical.digest({"header": header, "pools": pools}),
                    canonical.digest(replace(resources, source="")) if face and resources is not None else None)
    return memo[at]


def inputs(source: Source, key: tuple[int, int], memo: dict | None = None) -> dict | None:
    """What decides row ``key``'s overlays in one state (None: the state has
    no variation table, so no overlays): the row's boards, its gate's pools
    with the placement header, its Boss flag, the resource weights when a
    resource-face type can reach it."""
    catalog = source.catalog
    if catalog is None or catalog.variation is None or key not in source.rows:
        return None
    version = source.rows[key]
    placement, resources = _gate(source, key[0], version.row.board_type, version.boss, {} if memo is None else memo)
    return {"boards": version.fingerprint, "placement": placement, "boss": version.boss, "resources": resources}


def causes(base: Source, head: Source, key: tuple[int, int], memo: dict | None = None) -> list[str]:
    """What differs between the states that decides row ``key``'s overlays
    (empty: the same overlays, nothing to compare)."""
    if not any(base.contents.get(t) != head.contents.get(t) for t in TABLES):
        # the same variation and resource tables (their content): only the boards and the Boss flag can differ,
        # and a diff of a board change on a large table pays no gate digest a row
        b, h = base.rows.get(key), head.rows.get(key)
        if b is None or h is None or not (has_variation(base) and has_variation(head)):
            return []
        return ((["its boards (row modified)"] if b.fingerprint != h.fingerprint else [])
                + ([f"Boss flag {b.boss}->{h.boss}"] if b.boss != h.boss else []))
    b, h = inputs(base, key, memo), inputs(head, key, memo)
    if b is None or h is None:
        return []
    out = []
    if b["boards"] != h["boards"]:
        out.append("its boards (row modified)")
    if b["placement"] != h["placement"]:
        out.append("variation.toml (its pools or the placement header)")
    if b["boss"] != h["boss"]:
        out.append(f"Boss flag {b['boss']}->{h['boss']}")
    if b["resources"] != h["resources"]:
        out.append("resource_weights.toml")
    return out


def place(source: Source, key: tuple[int, int], records: list[dict], master_seed: int) -> tuple[OverlayBatch, dict]:
    """The row's overlays on ``records`` (its boards, in scope order) as the
    pipeline places them (``steps.chain``: R0 once, then ``place_row``), and
    the overlay checks' rule bits of every board (``check_row``)."""
    # imported here: every diff loads this module, and only one that places overlays needs the kernels' modules
    from boardgen_pipeline.variants.batch import place_row
    from boardgen_pipeline.variants.outcomes import check_row

    version, variation = source.rows[key], source.catalog.variation
    row, spawn = version.row, source.header.spawn_side
    width, height = row.board_width, row.board_height
    mines, fog = layouts_to_arrays([r["layout"] for r in records], width, height)
    r0 = r0_batch(mines, fog, width, height, spawn)
    placed = place_row(mines, fog, scopes=[r["scope"] for r in records], master_seed=master_seed, width=width,
                       height=height, spawn_side=spawn, level_index=key[0], node_depth=key[1],
                       board_type=row.board_type, is_boss=version.boss, table=variation, r0=r0)
    checked = check_row(placed, mines, fog, width=width, height=height, spawn_side=spawn, r0=r0)
    return placed, {"flags": checked.flags}


def _survival(placed: OverlayBatch, weights) -> np.ndarray:
    """Each board's survival weight after its resource-face skew, through
    ``skew.weights_for_overlay`` once a distinct variant (a row draws few)."""
    from boardgen_pipeline.variants.skew import weights_for_overlay

    n = len(placed)
    if weights is None or not n:
        return np.zeros(n)
    kind = np.stack([placed.variant_type, placed.global_variant, placed.effect.codes,
                     np.where(placed.valid.get("effect_value", np.ones(n, bool)), placed.effect_value, -1)], axis=1)
    _, first, inverse = np.unique(kind, axis=0, return_index=True, return_inverse=True)
    totals = np.array([weights_for_overlay(weights, placed.overlay(int(i))).family_total("survival") for i in first],
                      dtype=float)
    return totals[np.asarray(inverse).reshape(-1)]


def columns(placed: OverlayBatch, checks: dict, weights, types: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The per-board columns ``figures.OVERLAY_FIGURES`` read; ``types``: the
    type names the ``overlay_type`` codes index (both versions')."""
    index = {name: i for i, name in enumerate(types)}
    drawn = np.array([index[placed.type_ids[c]] if c >= 0 else index[NONE] for c in placed.variant_type.tolist()],
                     dtype=np.int64)
    return {"overlay_cells": placed.cell_count().astype(float),
            "overlay_packs": placed.pack_count().astype(float),
            "overlay_shortfall": (placed.shortfall > 0).astype(float),
            "overlay_whole_board": (placed.global_variant >= 0).astype(float),
            "overlay_rule_broken": (np.asarray(checks["flags"]) != 0).astype(float),
            "overlay_survival_weight": _survival(placed, weights),
            "overlay_type": drawn}


def compare_row(base: Source, head: Source, key: tuple[int, int], state: str, why: list[str],
                base_records: list[dict], head_records: list[dict], settings: Settings,
                margins: dict[str, float]) -> OverlayDiff:
    """Row ``key``'s overlays of both states on their boards of the same
    scopes (``base_records``/``head_records``: the calibration batch, the
    same boards when the row is identical), every overlay figure compared
    (``settings``: the diff's; ``margins``: the margins it resolved)."""
    out = OverlayDiff(key, state, why, samples=len(head_records))
    placed_b, checks_b = place(base, key, base_records, settings.master_seed)
    placed_h, checks_h = place(head, key, head_records, settings.master_seed)
    types = (NONE, *sorted(set(placed_b.type_ids) | set(placed_h.type_ids)))
    figures = tuple(replace(f, categories=types) if f.kind == F.CATEGORIES else f for f in F.OVERLAY_FIGURES)
    out.figures = measure(columns(placed_b, checks_b, base.catalog.resources, types),
                          columns(placed_h, checks_h, head.catalog.resources, types), False, margins,
                          1 - settings.alpha, resample_seed(RESAMPLE_LABEL, sigma(*key), settings.master_seed),
                          settings.resamples, figures)
    return out


def compare(base: Source, head: Source, keys: dict[tuple[int, int], str], settings: Settings,
            margins: dict[str, float], store: pairing.StoredBoards,
            boards: dict | None = None) -> tuple[list[OverlayDiff], list[str]]:
    """The overlay diff of every row of ``keys`` (key -> the row's state) whose
    overlay inputs differ (module docstring), and the notes. ``boards``:
    ``{key: (base records, head records)}`` of the calibration batch already
    made (the modified rows'); the others are read or generated here."""
    notes = []
    has = [has_variation(s) for s in (base, head)]
    if has[0] != has[1]:
        notes.append(f"overlays not compared: only {'BASE' if has[0] else 'HEAD'} has a variation table")
    if not all(has):
        return [], notes
    boards = boards or {}
    out = []
    memo: dict = {}
    for key, state in sorted(keys.items()):
        why = causes(base, head, key, memo)
        if not why:
            continue
        try:
            if key in boards:
                b, h = boards[key]
            else:
                scopes, seed = batch_scopes(*key, settings.samples), settings.master_seed
                b = pairing.boards(base.rows[key], base.header, scopes, seed, store).records
                h = b if state == "identical" else pairing.boards(head.rows[key], head.header, scopes, seed,
                                                                  store).records
        except pairing.NotRebuildable as exc:
            out.append(OverlayDiff(key, state, why, notes=[f"not compared: {exc}"]))
            continue
        n = settings.samples
        out.append(compare_row(base, head, key, state, why, b[:n], h[:n], settings, margins))
    return out, notes
