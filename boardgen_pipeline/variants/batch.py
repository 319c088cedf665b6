"""The variant overlays of a whole row of boards, as columns (SPEC 3 "Overlay
output per board"; seed 003 "布置段", "全局作用域型"; SPEC 9
``variant_overlays``).

:func:`place_row` places the overlays of a row's boards with the same
routing as ``placement.place_overlay`` and the same cells, draw for draw:

* routing depends only on the row (level, board type, Boss flag): the gate
  (``table.candidate_pools``) runs once, in Python;
* a global pool: its first row is every board's whole-board variant (no draw,
  no cell: replacement rule);
* an empty pool: no variant, no draw (a legal, silent state);
* otherwise region placement, compiled over the row
  (``placement_kernels``), from each board's own ``variant_place`` scope
  (the board's ``board_gen`` scope number: ``overlays`` module docstring)
  on the candidates ``safe - (R0 | fog)``, R0 from ``board.r0``.

:class:`OverlayBatch` holds the row column by column (numpy arrays; the packs
as flat cells with offsets) and converts to and from the Arrow table of a
``variant_overlays`` partition: :meth:`OverlayBatch.to_arrow` gives the very
table (and Parquet bytes) the per-record path gives
(``Overlay.to_record`` through ``pa.Table.from_pylist`` with
:func:`overlay_dataset_schema`), and :meth:`OverlayBatch.from_arrow` reads one
back, so the checks hold what a reader of the warehouse gets.
:meth:`OverlayBatch.overlay` is one board's readable :class:`Overlay`, for
drawings and the readable checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from boardgen_pipeline.board.r0 import board_arrays, r0_batch
from boardgen_pipeline.board.rng import initial_states
from boardgen_pipeline.variants.placement import STREAM_LABEL, Overlay, overlay_record_schema
from boardgen_pipeline.variants.placement_kernels import place_regions, target_table
from boardgen_pipeline.variants.table import VariantType, VariationTable, candidate_pools


@lru_cache(maxsize=1)
def overlay_dataset_schema():
    """The explicit schema of a ``variant_overlays`` partition file:
    ``board_scope`` (joins ``boards.scope``), the overlay record
    (``placement.overlay_record_schema``; ``level_index`` and ``node_depth``
    live in the hive path) and the fingerprints."""
    record = [f for f in overlay_record_schema() if f.name != "level_index"]
    return pa.schema([pa.field("board_scope", pa.int64()), *record,
                      pa.field("batch_fingerprint", pa.string()), pa.field("overlay_fingerprint", pa.string())])


@dataclass(frozen=True, eq=False)
class Labels:
    """A string column as codes into ``vocab`` (-1: null)."""

    codes: np.ndarray
    vocab: tuple[str, ...]

    @classmethod
    def constant(cls, value: str | None, boards: int) -> Labels:
        if value is None:
            return cls(np.full(boards, -1, np.int32), ())
        return cls(np.zeros(boards, np.int32), (value,))

    def value(self, i: int) -> str | None:
        code = int(self.codes[i])
        return None if code < 0 else self.vocab[code]

    def to_arrow(self):
        return _take(self.vocab, self.codes)


def _take(vocab: Sequence[str], codes: np.ndarray):
    """The string column of ``codes`` into ``vocab`` (-1: null). A column of
    one value or of nulls only, as most of a row's are (its board type, its
    stream label, a type drawn from a pool of one), is built as such: the
    same values, a quarter of the work of a take."""
    codes = np.asarray(codes, np.int32)
    null = codes < 0
    if codes.size and (null.all() or (not null.any() and (codes == codes[0]).all())):
        if null[0]:
            return pa.nulls(codes.size, pa.string())
        return pa.repeat(pa.scalar(vocab[int(codes[0])], pa.string()), codes.size)
    return pa.array(list(vocab), pa.string()).take(pa.array(codes, pa.int32(), mask=null))


def _lists(offsets: np.ndarray, values):
    """A ``list<...>`` Arrow array from int64 offsets and its values."""
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError("more list entries than a list<...> column can hold")
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32), pa.int32()), values)


def _ends_to_offsets(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=out[1:])
    return out


# columns an Overlay may leave None (the record is then null); every other
# column must be present on every board
NULLABLE_INTS = ("stream_scope", "master_seed", "effect_value")


@dataclass(frozen=True, eq=False)
class OverlayBatch:
    """The overlays of one row's boards, board ``i`` in position ``i``.

    Per-board columns are numpy arrays (``int64``; ``bool`` for flags).
    Type ids (``variant_type``, ``global_variant``, both pools) are codes
    into the shared ``type_ids`` (-1: none); the other strings are
    :class:`Labels`. Board ``i``'s cells are ``cells[cell_offsets[i]:
    cell_offsets[i + 1]]``; its packs are packs ``pack_offsets[i]`` to
    ``pack_offsets[i + 1]``, pack ``k`` being ``pack_cells[pack_cell_offsets[k]:
    pack_cell_offsets[k + 1]]``. ``valid`` maps a nullable int column
    (``NULLABLE_INTS``) to its validity mask, when it has a null."""

    node_depth: int
    level_index: np.ndarray
    board_scope: np.ndarray
    board_type: Labels
    is_boss: np.ndarray
    is_elite: np.ndarray
    stream_label: Labels
    stream_scope: np.ndarray
    master_seed: np.ndarray
    width: np.ndarray
    height: np.ndarray
    type_ids: tuple[str, ...]
    variant_type: np.ndarray
    scope: Labels
    effect: Labels
    effect_value: np.ndarray
    trigger: Labels
    placement: Labels
    global_variant: np.ndarray
    global_fallback: np.ndarray
    cell_offsets: np.ndarray
    cells: np.ndarray
    pack_offsets: np.ndarray
    pack_cell_offsets: np.ndarray
    pack_cells: np.ndarray
    pack_min: np.ndarray
    pack_max: np.ndarray
    target: np.ndarray
    shortfall: np.ndarray
    candidate_count: np.ndarray
    draws: np.ndarray
    global_pool_offsets: np.ndarray
    global_pool: np.ndarray
    region_pool_offsets: np.ndarray
    region_pool: np.ndarray
    valid: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.board_scope.shape[0])

    # --- one board ------------------------------------------------------------------------------

    def cell_count(self) -> np.ndarray:
        return np.diff(self.cell_offsets)

    def pack_count(self) -> np.ndarray:
        return np.diff(self.pack_offsets)

    def pack_sizes(self) -> np.ndarray:
        """The size of every pack of the row, in pack order."""
        return np.diff(self.pack_cell_offsets)

    def cells_of(self, i: int) -> tuple[int, ...]:
        return tuple(self.cells[self.cell_offsets[i] : self.cell_offsets[i + 1]].tolist())

    def packs_of(self, i: int) -> tuple[tuple[int, ...], ...]:
        ends = self.pack_cell_offsets[self.pack_offsets[i] : self.pack_offsets[i + 1] + 1].tolist()
        return tuple(tuple(self.pack_cells[a:b].tolist()) for a, b in zip(ends, ends[1:]))

    def _type(self, code) -> str | None:
        return None if code < 0 else self.type_ids[code]

    def _int(self, name: str, i: int) -> int | None:
        mask = self.valid.get(name)
        return None if mask is not None and not mask[i] else int(getattr(self, name)[i])

    def master_seed_of(self, i: int) -> int | None:
        """Board ``i``'s ``master_seed`` (what its :meth:`overlay` holds)."""
        return self._int("master_seed", i)

    def overlay(self, i: int) -> Overlay:
        """Board ``i``'s readable overlay (what ``Overlay.to_record`` wrote)."""
        gp = self.global_pool[self.global_pool_offsets[i] : self.global_pool_offsets[i + 1]]
        rp = self.region_pool[self.region_pool_offsets[i] : self.region_pool_offsets[i + 1]]
        return Overlay(
            width=int(self.width[i]), height=int(self.height[i]), level_index=int(self.level_index[i]),
            board_type=self.board_type.value(i), is_boss=bool(self.is_boss[i]), is_elite=bool(self.is_elite[i]),
            variant_type=self._type(self.variant_type[i]), scope=self.scope.value(i), effect=self.effect.value(i),
            effect_value=self._int("effect_value", i), trigger=self.trigger.value(i),
            placement=self.placement.value(i), global_variant=self._type(self.global_variant[i]),
            global_fallback=bool(self.global_fallback[i]), cells=self.cells_of(i), packs=self.packs_of(i),
            target=int(self.target[i]), shortfall=int(self.shortfall[i]),
            candidate_count=int(self.candidate_count[i]),
            global_pool=tuple(self.type_ids[c] for c in gp.tolist()),
            region_pool=tuple(self.type_ids[c] for c in rp.tolist()),
            stream_label=self.stream_label.value(i), stream_scope=self._int("stream_scope", i),
            master_seed=self.master_seed_of(i), draws=int(self.draws[i]),
            pack_min=int(self.pack_min[i]), pack_max=int(self.pack_max[i]),
        )

    # --- Arrow ----------------------------------------------------------------------------------

    def to_arrow(self, batch_fingerprints: str | Sequence[str | None] | None, overlay_fingerprint: str | None):
        """The ``variant_overlays`` table of the row (schema
        :func:`overlay_dataset_schema`): equal, value for value and in its
        Parquet bytes, to ``pa.Table.from_pylist`` over the records
        ``{"board_scope": scope, **overlay.to_record(), "batch_fingerprint":
        ..., "overlay_fingerprint": ...}``. ``batch_fingerprints``: one a
        board, or one for the whole row."""
        n = len(self)
        if batch_fingerprints is None or isinstance(batch_fingerprints, str):
            batch_fp = Labels.constant(batch_fingerprints, n).to_arrow()
        else:
            batch_fp = pa.array(list(batch_fingerprints), pa.string())
            if len(batch_fp) != n:
                raise ValueError(f"{len(batch_fp)} batch fingerprints for {n} boards")

        def ints(name):
            values = getattr(self, name)
            mask = self.valid.get(name)
            return pa.array(values, pa.int64(), mask=None if mask is None else ~mask)

        ids = pa.array(list(self.type_ids), pa.string())
        pack_sizes = self.pack_sizes()
        columns = {
            "board_scope": ints("board_scope"),
            "board_type": self.board_type.to_arrow(),
            "is_boss": pa.array(self.is_boss, pa.bool_()),
            "is_elite": pa.array(self.is_elite, pa.bool_()),
            "stream_label": self.stream_label.to_arrow(),
            "stream_scope": ints("stream_scope"),
            "master_seed": ints("master_seed"),
            "width": ints("width"),
            "height": ints("height"),
            "variant_type": _take(self.type_ids, self.variant_type),
            "scope": self.scope.to_arrow(),
            "effect": self.effect.to_arrow(),
            "effect_value": ints("effect_value"),
            "trigger": self.trigger.to_arrow(),
            "placement": self.placement.to_arrow(),
            "global_variant": _take(self.type_ids, self.global_variant),
            "global_fallback": pa.array(self.global_fallback, pa.bool_()),
            "cells": _lists(self.cell_offsets, pa.array(self.cells, pa.int64())),
            "cell_count": pa.array(self.cell_count(), pa.int64()),
            "packs": _lists(self.pack_offsets, _lists(self.pack_cell_offsets, pa.array(self.pack_cells, pa.int64()))),
            "pack_count": pa.array(self.pack_count(), pa.int64()),
            "pack_sizes": _lists(self.pack_offsets, pa.array(pack_sizes, pa.int64())),
            "pack_min": ints("pack_min"),
            "pack_max": ints("pack_max"),
            "target": ints("target"),
            "shortfall": ints("shortfall"),
            "candidate_count": ints("candidate_count"),
            "global_pool": _lists(self.global_pool_offsets, ids.take(pa.array(self.global_pool, pa.int32()))),
            "region_pool": _lists(self.region_pool_offsets, ids.take(pa.array(self.region_pool, pa.int32()))),
            "draws": ints("draws"),
            "batch_fingerprint": batch_fp,
            "overlay_fingerprint": Labels.constant(overlay_fingerprint, n).to_arrow(),
        }
        schema = overlay_dataset_schema()
        return pa.Table.from_arrays([columns[f.name] for f in schema], schema=schema)

    @classmethod
    def from_arrow(cls, table, *, level_index: int, node_depth: int) -> OverlayBatch:
        """A row's overlays read back from a ``variant_overlays`` table
        (``level_index`` and ``node_depth`` are the partition's hive keys).
        The derived columns (``cell_count``, ``pack_count``, ``pack_sizes``)
        are not read: the cells and packs are. A null list reads as empty
        (as ``Overlay`` values rebuilt from records do); a null where the
        record never holds one is a ValueError."""
        return _from_arrow(table, level_index, node_depth)

    @classmethod
    def from_overlays(cls, overlays: Sequence[Overlay], *, board_scopes: Sequence[int], node_depth: int) -> OverlayBatch:
        """A batch of given overlays (hand-built ones in tests, or the
        readable placement's): through their records, as the warehouse
        would hold them."""
        overlays = list(overlays)
        if len(board_scopes) != len(overlays):
            raise ValueError(f"{len(board_scopes)} board scopes for {len(overlays)} overlays")
        rows = [{"board_scope": s, **ov.to_record()} for s, ov in zip(board_scopes, overlays)]
        table = pa.Table.from_pylist(rows, schema=overlay_dataset_schema())
        batch = _from_arrow(table, 0, node_depth)
        levels = np.fromiter((ov.level_index for ov in overlays), np.int64, count=len(overlays))
        return replace(batch, level_index=levels)


def _column(table, name: str):
    col = table.column(name)
    return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)


def _no_nulls(name: str, arr) -> None:
    if arr.null_count:
        raise ValueError(f"variant_overlays column {name!r} holds {arr.null_count} nulls; every overlay record "
                         "has a value there")


def _codes(index) -> np.ndarray:
    """``int32`` codes of an index array (``pc.index_in``, a dictionary's
    indices), -1 where it is null (the fill costs a compute call: only made
    when there is a null)."""
    if index.null_count:
        index = pc.fill_null(index, -1)
    return np.asarray(index.to_numpy(zero_copy_only=False), np.int32)


def _int64s(arr):
    return arr if arr.type == pa.int64() else arr.cast(pa.int64())


def _from_arrow(table, level_index: int, node_depth: int) -> OverlayBatch:
    n = table.num_rows
    names = set(table.column_names)
    missing = [f.name for f in overlay_dataset_schema() if f.name not in names]
    if missing:
        raise ValueError(f"not a variant_overlays table: columns {missing} are missing")
    valid: dict[str, np.ndarray] = {}

    def ints(name: str) -> np.ndarray:
        arr = _column(table, name)
        if name in NULLABLE_INTS and arr.null_count:
            valid[name] = arr.is_valid().to_numpy(zero_copy_only=False)
            arr = pc.fill_null(arr, 0)
        _no_nulls(name, arr)
        return np.asarray(_int64s(arr).to_numpy(zero_copy_only=False), np.int64)

    def bools(name: str) -> np.ndarray:
        arr = _column(table, name)
        _no_nulls(name, arr)
        return np.asarray(arr.to_numpy(zero_copy_only=False), np.bool_)

    def labels(name: str) -> Labels:
        # the values in order of first appearance, and each one's code (a null: -1)
        encoded = _column(table, name).dictionary_encode()
        return Labels(_codes(encoded.indices), tuple(encoded.dictionary.to_pylist()))

    def lists(name: str, arr=None):
        """``(offsets, values)`` of a list column; a null list is empty."""
        arr = _column(table, name) if arr is None else arr
        if arr.null_count:
            lengths = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False)
        else:  # read off the offsets (a slice's start where it starts), not computed
            lengths = np.diff(arr.offsets.to_numpy(zero_copy_only=False))
        return _ends_to_offsets(np.asarray(lengths, np.int64)), arr.flatten()

    def cell_values(name: str, values) -> np.ndarray:
        _no_nulls(name, values)
        return np.asarray(_int64s(values).to_numpy(zero_copy_only=False), np.int64)

    # one vocabulary for every column that names a type, so the checks
    # compare codes
    type_cols = {name: _column(table, name) for name in ("variant_type", "global_variant")}
    gp_offsets, gp_values = lists("global_pool")
    rp_offsets, rp_values = lists("region_pool")
    every = pa.chunked_array([type_cols["variant_type"], type_cols["global_variant"], gp_values, rp_values],
                             type=pa.string())
    type_ids = pc.unique(every.drop_null())

    def type_codes(arr) -> np.ndarray:
        return _codes(pc.index_in(arr, value_set=type_ids))

    for name, values in (("global_pool", gp_values), ("region_pool", rp_values)):
        _no_nulls(name, values)
    cell_offsets, cells = lists("cells")
    pack_offsets, pack_lists = lists("packs")
    pack_cell_offsets, pack_cells = lists("packs", pack_lists)
    return OverlayBatch(
        node_depth=int(node_depth),
        level_index=np.full(n, level_index, np.int64),
        board_scope=ints("board_scope"),
        board_type=labels("board_type"),
        is_boss=bools("is_boss"),
        is_elite=bools("is_elite"),
        stream_label=labels("stream_label"),
        stream_scope=ints("stream_scope"),
        master_seed=ints("master_seed"),
        width=ints("width"),
        height=ints("height"),
        type_ids=tuple(type_ids.to_pylist()),
        variant_type=type_codes(type_cols["variant_type"]),
        scope=labels("scope"),
        effect=labels("effect"),
        effect_value=ints("effect_value"),
        trigger=labels("trigger"),
        placement=labels("placement"),
        global_variant=type_codes(type_cols["global_variant"]),
        global_fallback=bools("global_fallback"),
        cell_offsets=cell_offsets,
        cells=cell_values("cells", cells),
        pack_offsets=pack_offsets,
        pack_cell_offsets=pack_cell_offsets,
        pack_cells=cell_values("packs", pack_cells),
        pack_min=ints("pack_min"),
        pack_max=ints("pack_max"),
        target=ints("target"),
        shortfall=ints("shortfall"),
        candidate_count=ints("candidate_count"),
        draws=ints("draws"),
        global_pool_offsets=gp_offsets,
        global_pool=type_codes(gp_values),
        region_pool_offsets=rp_offsets,
        region_pool=type_codes(rp_values),
        valid=valid,
    )


def _type_labels(types: Sequence[VariantType], index: np.ndarray, attr: str) -> Labels:
    """The ``attr`` of the type each board drew (``index`` into ``types``)."""
    vocab: list = []
    where = []
    for t in types:
        v = getattr(t, attr)
        if v not in vocab:
            vocab.append(v)
        where.append(vocab.index(v))
    return Labels(np.asarray(where, np.int32)[index], tuple(vocab))


def place_row(mines, fog, *, scopes: Sequence[int], master_seed: int = 0, width: int, height: int, spawn_side: int,
              level_index: int, node_depth: int, board_type: str, is_boss: bool, table: VariationTable,
              is_elite: bool = False, r0=None) -> OverlayBatch:
    """The overlays of a row's boards (``mines``, ``fog``: ``[B, W*H]``
    masks, board ``b`` drawn from ``board_gen`` scope ``scopes[b]``), equal
    to ``overlays.overlay_for`` on each board. ``r0``: the boards' R0 masks
    when the caller has them (else computed here, ``board.r0``)."""
    mines, fog = board_arrays(mines, fog, width, height)
    boards = mines.shape[0]
    board_scope = np.asarray(list(scopes), np.int64)
    if board_scope.shape != (boards,):
        raise ValueError(f"one scope a board: {boards} boards, {board_scope.shape[0]} scopes")
    pools = candidate_pools(table, level_index=level_index, board_type=board_type, is_boss=is_boss, is_elite=is_elite)
    type_ids = tuple(dict.fromkeys([t.id for t in pools.region_pool] + [t.id for t in pools.global_pool]))
    code = {t: i for i, t in enumerate(type_ids)}

    def full(value, dtype=np.int64):
        return np.full(boards, value, dtype)

    def pool(types):
        offsets = np.arange(boards + 1, dtype=np.int64) * len(types)
        return offsets, np.tile(np.asarray([code[t.id] for t in types], np.int32), boards)

    zeros = full(0)
    empty_offsets = np.zeros(boards + 1, np.int64)
    none = np.empty(0, np.int64)
    gp_offsets, gp_codes = pool(pools.global_pool)
    rp_offsets, rp_codes = pool(pools.region_pool)
    row = dict(
        node_depth=int(node_depth), level_index=full(level_index), board_scope=board_scope,
        board_type=Labels.constant(board_type, boards), is_boss=full(bool(is_boss), np.bool_),
        is_elite=full(bool(is_elite), np.bool_), stream_label=Labels.constant(STREAM_LABEL, boards),
        stream_scope=board_scope.copy(), master_seed=full(master_seed), width=full(width), height=full(height),
        type_ids=type_ids, pack_min=full(table.pack_min), pack_max=full(table.pack_max),
        global_pool_offsets=gp_offsets, global_pool=gp_codes, region_pool_offsets=rp_offsets, region_pool=rp_codes,
    )
    fallback = bool(is_boss or is_elite)
    if pools.global_pool:
        # replacement rule: the first global row, no draw, no cell
        vt = pools.global_pool[0]
        return OverlayBatch(
            **row, variant_type=full(code[vt.id], np.int32), scope=Labels.constant(vt.scope, boards),
            effect=Labels.constant(vt.effect, boards), effect_value=full(vt.effect_value),
            trigger=Labels.constant(vt.trigger, boards), placement=Labels.constant(vt.placement, boards),
            global_variant=full(code[vt.id], np.int32), global_fallback=full(False, np.bool_),
            cell_offsets=empty_offsets, cells=none, pack_offsets=empty_offsets, pack_cell_offsets=np.zeros(1, np.int64),
            pack_cells=none, target=zeros, shortfall=zeros, candidate_count=zeros, draws=zeros)
    if not pools.region_pool:
        return OverlayBatch(
            **row, variant_type=full(-1, np.int32), scope=Labels.constant(None, boards),
            effect=Labels.constant(None, boards), effect_value=zeros, trigger=Labels.constant(None, boards),
            placement=Labels.constant(None, boards), global_variant=full(-1, np.int32),
            global_fallback=full(fallback, np.bool_), cell_offsets=empty_offsets, cells=none,
            pack_offsets=empty_offsets, pack_cell_offsets=np.zeros(1, np.int64), pack_cells=none, target=zeros,
            shortfall=zeros, candidate_count=zeros, draws=zeros, valid={"effect_value": full(False, np.bool_)})
    if r0 is None:
        r0 = r0_batch(mines, fog, width, height, spawn_side)
    else:
        r0, _ = board_arrays(r0, None, width, height)
        if r0.shape != mines.shape:
            raise ValueError(f"r0 of shape {r0.shape} for boards of shape {mines.shape}")
    states = initial_states(STREAM_LABEL, board_scope, master_seed)
    pct = table.percent_of_cells
    targets = target_table(width * height, pct.numerator, pct.denominator, (level_index - 1) * table.per_level_bonus)
    region = pools.region_pool
    res = place_regions(states, mines, r0 | fog, width=width, height=height, pool_size=len(region), targets=targets,
                        pack_min=table.pack_min, pack_max=table.pack_max)
    drawn = res.type_index
    return OverlayBatch(
        **row, variant_type=np.asarray([code[t.id] for t in region], np.int32)[drawn],
        scope=_type_labels(region, drawn, "scope"), effect=_type_labels(region, drawn, "effect"),
        effect_value=np.asarray([t.effect_value for t in region], np.int64)[drawn],
        trigger=_type_labels(region, drawn, "trigger"), placement=_type_labels(region, drawn, "placement"),
        global_variant=full(-1, np.int32), global_fallback=full(fallback, np.bool_),
        cell_offsets=_ends_to_offsets(res.cell_counts), cells=res.cells,
        pack_offsets=_ends_to_offsets(res.pack_count), pack_cell_offsets=_ends_to_offsets(res.pack_sizes),
        pack_cells=res.pack_cells, target=res.target.copy(), shortfall=res.shortfall.copy(),
        candidate_count=res.candidate_count.copy(), draws=res.draws.copy())


def warm_up() -> None:
    """Compile (or load from numba's on-disk cache) the overlay kernels: R0,
    region placement and the rule bits. Calling it once before starting
    worker processes lets them load the cache instead of compiling side by
    side (as ``generator.warm_up`` does for the generator's kernels)."""
    from fractions import Fraction

    from boardgen_pipeline.variants.check_kernels import rule_flags

    probe = VariantType(id="probe", name="probe", unlock_level=1, scope="region", effect="hide_number",
                        effect_value=0, trigger="on_number_shown", placement="any", board_types=())
    table = VariationTable(percent_of_cells=Fraction(50), per_level_bonus=0, pack_min=1, pack_max=2, types=(probe,))
    mines = np.zeros((1, 16), np.uint8)
    mines[0, 0] = 1
    batch = place_row(mines, None, scopes=[0], width=4, height=4, spawn_side=1, level_index=1, node_depth=0,
                      board_type="dungeon", is_boss=False, table=table)
    rule_flags(batch, mines, np.zeros_like(mines), r0_batch(mines, None, 4, 4, 1), 4, 4)
