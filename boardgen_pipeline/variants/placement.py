"""Variant placement: one overlay per board (SPEC 3; seed 003 "布置段（战斗初始化
第 4 步）", "全局作用域型", "数据生命周期").

The overlay is a record *beside* the board: the generator's board is never
touched (``Board`` is frozen) and carries zero variant cells; a new board gets
a new overlay from its own ``variant_place`` scope, so nothing persists from
one board to the next.

Routing is by scope only:

* **global** (Boss / elite node, global pool non-empty): the first global row
  in table order becomes the whole-board variant; no stream draw, no cell,
  region placement skipped (replacement rule). An empty global pool falls
  back to region placement (Level 1 Boss is immune by data).
* **region**: one type drawn uniformly from the region pool, then packs grown
  on the candidate cells ``safe - R0`` up to the target count.

Draw protocol of the region path (the contract a replay relies on; every
list below is in row-major order, every draw is ``stream.below(n)``):

1. ``type = region_pool[below(len(region_pool))]``: always exactly one draw,
   even for a pool of one, so the pack draws start at the same position
   whatever the pool size.
2. ``target = min(|C|, round_half_up(|C| * percent_of_cells / 100)
   + (level_index - 1) * per_level_bonus)`` over the candidates ``C``, in
   exact rational arithmetic.
3. Before each pack, *free* cells are the candidates not yet used and not
   8-adjacent to a placed pack; free fragments (8-connected components)
   smaller than ``pack_min`` are dropped for good (seed: "a fragment too small
   for pack_min is skipped"). Stop when ``remaining < pack_min`` or nothing is
   free; what is left of the target is the shortfall.
4. Pack size: the admissible sizes are ``s`` in
   ``[pack_min, min(pack_max, remaining)]`` that leave ``remaining - s``
   either 0 or ``>= pack_min`` (a size that strands a remainder too small for
   any pack is avoided while another size exists; if none does, every size
   of the range is admissible). ``size = admissible[below(len(admissible))]``.
5. Seed: ``free[below(len(free))]``.
6. Growth: while the pack is smaller than ``size`` and its frontier (free
   cells 8-adjacent to the pack) is non-empty,
   ``pack += frontier[below(len(frontier))]``. The seed's fragment holds at
   least ``pack_min`` cells, so a pack cut short by its fragment still has at
   least ``pack_min`` cells.
7. The pack and its 8-neighbourhood leave the free set: packs never touch, so
   every pack is exactly one connected piece on the board, the unit whose
   size the seed bounds by ``[pack_min, pack_max]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from boardgen_pipeline.board.geometry import Board, neighbour_table
from boardgen_pipeline.board.rng import Stream
from boardgen_pipeline.variants.table import VariantType, VariationTable, candidate_pools

STREAM_LABEL = "variant_place"


def round_half_up(x: Fraction) -> int:
    """``floor(x + 1/2)`` on an exact rational (SPEC 2.2: not banker's round)."""
    return math.floor(x + Fraction(1, 2))


def target_count(candidates: int, level_index: int, table: VariationTable) -> int:
    """Seed 003 count rule, capped at the candidate count.

    The base is the candidate count, not the board: R0 is usually over half
    the board, and a share of the whole board would crowd what is left to dig
    (seed 003, 2026-09-21 base correction)."""
    base = round_half_up(Fraction(candidates) * table.percent_of_cells / 100)
    return min(candidates, base + (level_index - 1) * table.per_level_bonus)


@dataclass(frozen=True)
class Overlay:
    """The variant overlay of one board: a read-only record.

    ``variant_type`` is the board's one type (the drawn region type or the
    whole-board global type; ``None`` when the pool is empty). ``cells`` is the
    row-major union of ``packs``; each pack is row-major, packs in placement
    order. ``global_variant`` is set only by the replacement rule, and then
    ``cells`` is empty."""

    width: int
    height: int
    level_index: int
    board_type: str
    is_boss: bool
    is_elite: bool
    variant_type: str | None = None
    scope: str | None = None
    effect: str | None = None
    effect_value: int | None = None
    trigger: str | None = None
    placement: str | None = None
    global_variant: str | None = None
    global_fallback: bool = False
    cells: tuple[int, ...] = ()
    packs: tuple[tuple[int, ...], ...] = ()
    target: int = 0
    shortfall: int = 0
    candidate_count: int = 0
    global_pool: tuple[str, ...] = ()
    region_pool: tuple[str, ...] = ()
    stream_label: str = STREAM_LABEL
    stream_scope: int | None = None
    master_seed: int | None = None
    draws: int = 0
    pack_min: int = 0
    pack_max: int = 0

    @property
    def cell_count(self) -> int:
        return len(self.cells)

    def to_record(self) -> dict:
        """A flat, JSON-able dict for Parquet (``variant_overlays`` view)."""
        return {
            "level_index": self.level_index,
            "board_type": self.board_type,
            "is_boss": self.is_boss,
            "is_elite": self.is_elite,
            "stream_label": self.stream_label,
            "stream_scope": self.stream_scope,
            "master_seed": self.master_seed,
            "width": self.width,
            "height": self.height,
            "variant_type": self.variant_type,
            "scope": self.scope,
            "effect": self.effect,
            "effect_value": self.effect_value,
            "trigger": self.trigger,
            "placement": self.placement,
            "global_variant": self.global_variant,
            "global_fallback": self.global_fallback,
            "cells": list(self.cells),
            "cell_count": len(self.cells),
            "packs": [list(p) for p in self.packs],
            "pack_count": len(self.packs),
            "pack_sizes": [len(p) for p in self.packs],
            "pack_min": self.pack_min,
            "pack_max": self.pack_max,
            "target": self.target,
            "shortfall": self.shortfall,
            "candidate_count": self.candidate_count,
            "global_pool": list(self.global_pool),
            "region_pool": list(self.region_pool),
            "draws": self.draws,
        }


def overlay_record_schema():
    """The pyarrow schema of :meth:`Overlay.to_record` (explicit, so that a
    partition whose overlays all have empty lists still gets typed columns)."""
    import pyarrow as pa  # imported here: the placement itself needs no pyarrow

    s, i, b = pa.string(), pa.int64(), pa.bool_()
    return pa.schema(
        [
            ("level_index", i), ("board_type", s), ("is_boss", b), ("is_elite", b),
            ("stream_label", s), ("stream_scope", i), ("master_seed", i),
            ("width", i), ("height", i),
            ("variant_type", s), ("scope", s), ("effect", s), ("effect_value", i),
            ("trigger", s), ("placement", s), ("global_variant", s), ("global_fallback", b),
            ("cells", pa.list_(i)), ("cell_count", i),
            ("packs", pa.list_(pa.list_(i))), ("pack_count", i), ("pack_sizes", pa.list_(i)),
            ("pack_min", i), ("pack_max", i),
            ("target", i), ("shortfall", i), ("candidate_count", i),
            ("global_pool", pa.list_(s)), ("region_pool", pa.list_(s)), ("draws", i),
        ]
    )


@dataclass
class PackResult:
    packs: list[tuple[int, ...]] = field(default_factory=list)
    placed: int = 0
    shortfall: int = 0


def _fragments(cells: list[int], free: set[int], table) -> list[list[int]]:
    """8-connected components of ``cells`` within ``free``, each started from
    its lowest row-major cell (``cells`` is sorted), so the split is
    deterministic."""
    seen: set[int] = set()
    out = []
    for start in cells:
        if start in seen or start not in free:
            continue
        comp = [start]
        seen.add(start)
        k = 0
        while k < len(comp):
            for n in table[comp[k]]:
                if n in free and n not in seen:
                    seen.add(n)
                    comp.append(n)
            k += 1
        out.append(comp)
    return out


def grow_packs(
    candidates: list[int],
    width: int,
    height: int,
    target: int,
    pack_min: int,
    pack_max: int,
    stream: Stream,
) -> PackResult:
    """Steps 3-7 of the draw protocol (module docstring) over ``candidates``."""
    table = neighbour_table(width, height)
    result = PackResult()
    free: set[int] = set(candidates)
    # The fragment each free cell belongs to; only the fragment a pack was cut
    # from can split, so re-labelling is local to it.
    fragment_of: dict[int, int] = {}
    fragments: dict[int, list[int]] = {}
    next_id = 0

    def settle(cells: list[int]) -> None:
        nonlocal next_id
        for comp in _fragments(sorted(cells), free, table):
            if len(comp) < pack_min:
                free.difference_update(comp)
                for c in comp:
                    fragment_of.pop(c, None)
                continue
            fragments[next_id] = comp
            for c in comp:
                fragment_of[c] = next_id
            next_id += 1

    settle(list(candidates))
    remaining = target
    while remaining >= pack_min and free:
        hi = min(pack_max, remaining)
        sizes = [s for s in range(pack_min, hi + 1) if remaining - s == 0 or remaining - s >= pack_min]
        if not sizes:
            sizes = list(range(pack_min, hi + 1))
        size = sizes[stream.below(len(sizes))]
        free_sorted = sorted(free)
        seed = free_sorted[stream.below(len(free_sorted))]
        pack = [seed]
        in_pack = {seed}
        while len(pack) < size:
            frontier = sorted({n for c in pack for n in table[c] if n in free and n not in in_pack})
            if not frontier:
                break
            cell = frontier[stream.below(len(frontier))]
            pack.append(cell)
            in_pack.add(cell)
        result.packs.append(tuple(sorted(pack)))
        result.placed += len(pack)
        remaining -= len(pack)
        # The pack and its halo leave the free set; what is left of the
        # fragment is re-split and its too-small pieces dropped.
        old = fragments.pop(fragment_of[seed])
        halo = set(pack)
        for c in pack:
            halo.update(table[c])
        for c in halo:
            if c in free:
                free.discard(c)
                fragment_of.pop(c, None)
        settle([c for c in old if c in free])
    result.shortfall = target - result.placed
    return result


def _with_type(base: dict, vt: VariantType) -> dict:
    # The enums travel with the overlay, so a reader routes on them without a
    # table lookup and never on the id.
    return {
        **base,
        "variant_type": vt.id,
        "scope": vt.scope,
        "effect": vt.effect,
        "effect_value": vt.effect_value,
        "trigger": vt.trigger,
        "placement": vt.placement,
    }


def place_overlay(
    board: Board,
    r0,
    *,
    level_index: int,
    is_boss: bool,
    board_type: str,
    table: VariationTable,
    stream: Stream,
    is_elite: bool = False,
) -> Overlay:
    """The variant overlay of ``board`` (seed 003 setup step 4).

    ``r0`` is the board's R0 cell set (``solver.reveal_r0``); ``stream`` the
    board's own ``variant_place`` scope (``rng.derive_at("variant_place",
    scope, master_seed)``), fresh: it is consumed. The board is not modified.
    """
    if stream.label != STREAM_LABEL:
        raise ValueError(f"place_overlay needs a {STREAM_LABEL!r} stream, got {stream.label!r}")
    pools = candidate_pools(table, level_index=level_index, board_type=board_type, is_boss=is_boss, is_elite=is_elite)
    start_draws = stream.draws
    base = dict(
        width=board.width,
        height=board.height,
        level_index=level_index,
        board_type=board_type,
        is_boss=is_boss,
        is_elite=is_elite,
        global_pool=tuple(t.id for t in pools.global_pool),
        region_pool=tuple(t.id for t in pools.region_pool),
        stream_scope=stream.scope,
        master_seed=stream.master_seed,
        pack_min=table.pack_min,
        pack_max=table.pack_max,
    )
    if pools.global_pool:
        # Replacement rule: the whole-board type is a configuration fact, not
        # a draw, so it consumes nothing from the stream.
        vt = pools.global_pool[0]
        return Overlay(**_with_type(base, vt), global_variant=vt.id)

    fallback = is_boss or is_elite
    if not pools.region_pool:
        return Overlay(**base, global_fallback=fallback)

    vt = pools.region_pool[stream.below(len(pools.region_pool))]
    r0 = frozenset(r0)
    candidates = [c for c, m in enumerate(board.mines) if not m and c not in r0]
    target = target_count(len(candidates), level_index, table)
    res = grow_packs(candidates, board.width, board.height, target, table.pack_min, table.pack_max, stream)
    cells = tuple(sorted(c for p in res.packs for c in p))
    return Overlay(
        **_with_type(base, vt),
        global_fallback=fallback,
        cells=cells,
        packs=tuple(res.packs),
        target=target,
        shortfall=res.shortfall,
        candidate_count=len(candidates),
        draws=stream.draws - start_draws,
    )


def type_letter(type_id: str | None) -> str:
    """The drawing letter of a type: its id's first letter, upper case (one
    type per board, so the letter never needs to tell two types apart)."""
    if type_id and type_id[0].isalpha():
        return type_id[0].upper()
    return "V"


def render_overlay(board: Board, overlay: Overlay, *, legend: bool = True) -> str:
    """Text drawing: ``*`` mine, the type's letter on variant cells, ``.``
    safe; rows top to bottom. With ``legend`` a first line names the variant
    (for ``boardgen generate --variants``)."""
    letter = type_letter(overlay.variant_type)
    cells = set(overlay.cells)
    rows = []
    for y in range(board.height):
        row = []
        for x in range(board.width):
            c = y * board.width + x
            row.append("*" if board.mines[c] else (letter if c in cells else "."))
        rows.append("".join(row))
    if not legend:
        return "\n".join(rows)
    if overlay.global_variant is not None:
        head = f"whole-board variant: {overlay.global_variant} ({overlay.effect} {overlay.effect_value}); no variant cells"
    elif overlay.variant_type is None:
        head = "no variant (empty candidate pool)"
    else:
        head = (
            f"variant {overlay.variant_type} = {letter} ({overlay.effect}, {overlay.trigger}): "
            f"{len(overlay.cells)}/{overlay.target} cells in {len(overlay.packs)} packs, "
            f"shortfall {overlay.shortfall}"
        )
    return "\n".join([head, *rows])
