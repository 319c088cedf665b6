"""The overlay checks of a whole row as one bitmask a board (seed 003 "验收标准"
line 4 "布置域" and the "全局作用域型" lines; SPEC 3; SPEC 9 "overlay checks").

``checks`` is the readable reference: one board at a time, it names every
broken rule with its cells and a message. Here every rule of it becomes one
bit (:data:`RULES`), computed for all boards of a row at once: the domain
and pack rules in one compiled pass over the boards, the one-type and Boss
rules as numpy expressions over the row's columns. The outcomes
(``variants.outcomes``) run the readable checks only on boards with a bit
set, for their messages; the tests hold the bits equal to the readable rules
on planted faults of every rule and on every board of default rows.

The rules, by check group (as ``outcomes.board_issues`` groups them):

* ``domain``: ``board_mismatch`` (the overlay's size is not the board's;
  nothing else of the group is then looked at), ``variant_outside_board``,
  ``variant_on_mine``, ``variant_in_r0``, ``variant_on_fog`` (decision: a
  cell carries one variant, so fog is taken like R0);
* ``packs``: ``pack_off_board`` (a pack cell or a cell off the board: no
  pack rule can be evaluated), ``pack_board_mismatch`` (the overlay's size
  is not the board's: neither), else ``pack_overlap``,
  ``cells_not_union_of_packs``, ``pack_disconnected``, ``pack_size``,
  ``packs_touch``, ``count_over_target``, ``shortfall_mismatch``;
* ``one_type``: ``more_than_one_type``, ``global_with_cells``,
  ``global_consumed_draws``, ``cells_without_type``;
* ``boss_rule`` (against the pool each overlay recorded): ``global_off_boss``,
  ``boss_without_global``, ``boss_wrong_global``, ``boss_with_cells``,
  ``level1_boss_global``, ``boss_global_from_empty_pool``.

R0 is the caller's, recomputed from the boards (``board.r0``), never the
placement's own.

The compiled pass takes its arrays by name: the boards as
:class:`Boards`, the overlays' columns as :class:`OverlayColumns`, the
scratch as :class:`CheckScratch`; a board's fog read as its R0, or one
overlay column read as another, would flag other boards without an error.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boardgen_pipeline.board.geometry import neighbour_arrays
from boardgen_pipeline.board.r0 import board_arrays

RULE_GROUPS = {
    "domain": ("board_mismatch", "variant_outside_board", "variant_on_mine", "variant_in_r0", "variant_on_fog"),
    "packs": ("pack_off_board", "pack_board_mismatch", "pack_overlap", "cells_not_union_of_packs", "pack_disconnected",
              "pack_size", "packs_touch", "count_over_target", "shortfall_mismatch"),
    "one_type": ("more_than_one_type", "global_with_cells", "global_consumed_draws", "cells_without_type"),
    "boss_rule": ("global_off_boss", "boss_without_global", "boss_wrong_global", "boss_with_cells",
                  "level1_boss_global", "boss_global_from_empty_pool"),
}


RULES = tuple(rule for rules in RULE_GROUPS.values() for rule in rules)


BIT = {rule: 1 << i for i, rule in enumerate(RULES)}


GROUP_OF = {rule: group for group, rules in RULE_GROUPS.items() for rule in rules}


GROUP_BITS = {group: sum(BIT[r] for r in rules) for group, rules in RULE_GROUPS.items()}


(B_MISMATCH, B_OUTSIDE, B_ON_MINE, B_IN_R0, B_ON_FOG, B_PACK_OFF, B_PACK_MISMATCH, B_OVERLAP, B_NOT_UNION,
 B_DISCONNECTED, B_SIZE, B_TOUCH, B_OVER_TARGET, B_SHORTFALL) = (BIT[r] for r in RULES[:14])


class Boards(NamedTuple):
    """The boards of a row: their size and one row of W*H cells a board
    (uint8 masks)."""

    width: int
    height: int
    mines: np.ndarray
    fog: np.ndarray
    r0: np.ndarray  # recomputed from the boards


class OverlayColumns(NamedTuple):
    """An ``OverlayBatch``'s columns the domain and pack rules read (int64)."""

    width: np.ndarray  # [boards]: the size each overlay says it is for
    height: np.ndarray  # [boards]
    cell_offsets: np.ndarray  # [boards + 1]: each board's slice of cells
    cells: np.ndarray
    pack_offsets: np.ndarray  # [boards + 1]: each board's packs
    pack_cell_offsets: np.ndarray  # [packs + 1]: each pack's slice of pack_cells
    pack_cells: np.ndarray
    pack_min: np.ndarray  # [boards]
    pack_max: np.ndarray  # [boards]
    target: np.ndarray  # [boards]
    shortfall: np.ndarray  # [boards]


class CheckScratch(NamedTuple):
    """Per-cell scratch, all zero on entry (int64)."""

    count: np.ndarray  # how many pack cells sit on a cell; left zero after each board
    in_cells: np.ndarray  # stamps, never cleared: a stamp is used once
    member: np.ndarray  # stamps
    mark: np.ndarray  # stamps
    label: np.ndarray  # the piece a cell belongs to
    piece_size: np.ndarray
    queue: np.ndarray


@njit(cache=True, error_model="numpy")
def _piece(start, member, mark, stamp, nb, nbn, queue, label, piece_id):
    """Mark under ``stamp`` (and label ``piece_id``) the 8-connected piece of
    cells with ``member == stamp`` that holds ``start``; returns its size."""
    mark[start] = stamp
    label[start] = piece_id
    queue[0] = start
    qh = 0
    qt = 1
    while qh < qt:
        c = queue[qh]
        qh += 1
        for k in range(nbn[c]):
            n = nb[c, k]
            if member[n] == stamp and mark[n] != stamp:
                mark[n] = stamp
                label[n] = piece_id
                queue[qt] = n
                qt += 1
    return qt


@njit(cache=True, error_model="numpy")
def domain_pack_flags(bd, ov, nb, nbn, flags, scratch):
    """The ``domain`` and ``packs`` bits of every board of ``bd`` (its
    overlay's columns in ``ov``) into ``flags``."""
    mines = bd.mines
    fog = bd.fog
    r0 = bd.r0
    W = bd.width
    H = bd.height
    ow = ov.width
    oh = ov.height
    cell_offsets = ov.cell_offsets
    cells = ov.cells
    pack_offsets = ov.pack_offsets
    pack_cell_offsets = ov.pack_cell_offsets
    pack_cells = ov.pack_cells
    pack_min = ov.pack_min
    pack_max = ov.pack_max
    target = ov.target
    shortfall = ov.shortfall
    count = scratch.count
    in_cells = scratch.in_cells
    member = scratch.member
    mark = scratch.mark
    label = scratch.label
    piece_size = scratch.piece_size
    queue = scratch.queue
    boards, nc = mines.shape
    if fog.shape != mines.shape or r0.shape != mines.shape or W * H != nc or nb.shape[0] != nc or nbn.shape[0] != nc:
        raise ValueError("fog, R0 and neighbour table must match the boards")
    if min(ow.shape[0], oh.shape[0], pack_min.shape[0], pack_max.shape[0], target.shape[0], shortfall.shape[0],
           flags.shape[0]) < boards:
        raise ValueError("per-board arrays must hold every board")
    if min(count.shape[0], in_cells.shape[0], member.shape[0], mark.shape[0], label.shape[0], piece_size.shape[0],
           queue.shape[0]) < nc:
        raise ValueError("scratch arrays must hold one entry a cell")
    if cell_offsets.shape[0] < boards + 1 or pack_offsets.shape[0] < boards + 1 or pack_cell_offsets.shape[0] < 1:
        raise ValueError("offsets must hold one entry a board and one more")
    n_packs = pack_cell_offsets.shape[0] - 1
    for b in range(boards):
        if not (0 <= cell_offsets[b] <= cell_offsets[b + 1] <= cells.shape[0]
                and 0 <= pack_offsets[b] <= pack_offsets[b + 1] <= n_packs):
            raise ValueError("cell and pack offsets must rise within their arrays")
    for p in range(n_packs):
        if not 0 <= pack_cell_offsets[p] <= pack_cell_offsets[p + 1] <= pack_cells.shape[0]:
            raise ValueError("pack cell offsets must rise within the pack cells")
    stamp = 0
    for b in range(boards):
        f = 0
        c0, c1 = cell_offsets[b], cell_offsets[b + 1]
        p0, p1 = pack_offsets[b], pack_offsets[b + 1]
        mismatch = ow[b] != W or oh[b] != H
        off = False
        for i in range(c0, c1):
            c = cells[i]
            if c < 0 or c >= nc:
                off = True
                if not mismatch:
                    f |= B_OUTSIDE
                continue
            if not mismatch:
                if mines[b, c] != 0:
                    f |= B_ON_MINE
                if r0[b, c] != 0:
                    f |= B_IN_R0
            if fog[b, c] != 0:
                f |= B_ON_FOG
        if mismatch:
            f |= B_MISMATCH
        for i in range(pack_cell_offsets[p0], pack_cell_offsets[p1]):
            if pack_cells[i] < 0 or pack_cells[i] >= nc:
                off = True
        if off:
            flags[b] = f | B_PACK_OFF
            continue
        if mismatch:
            flags[b] = f | B_PACK_MISMATCH
            continue
        # every cell below is on the board
        n_cells = c1 - c0
        dup = False
        for i in range(pack_cell_offsets[p0], pack_cell_offsets[p1]):
            c = pack_cells[i]
            count[c] += 1
            if count[c] > 1:
                dup = True
        if dup:
            f |= B_OVERLAP
        # cells equal the sorted union exactly when they are the union's
        # distinct cells, each once
        stamp += 1
        cells_stamp = stamp
        distinct_cells = 0
        twice = False
        not_in_union = False
        for i in range(c0, c1):
            c = cells[i]
            if in_cells[c] == cells_stamp:
                twice = True
            else:
                in_cells[c] = cells_stamp
                distinct_cells += 1
            if count[c] == 0:
                not_in_union = True
        union = 0
        for i in range(pack_cell_offsets[p0], pack_cell_offsets[p1]):
            c = pack_cells[i]
            if count[c] > 0:
                union += 1
                count[c] = -count[c]  # counted once; restored below
        for i in range(pack_cell_offsets[p0], pack_cell_offsets[p1]):
            count[pack_cells[i]] = 0
        if twice or not_in_union or distinct_cells != union:
            f |= B_NOT_UNION
        lo = pack_min[b]
        hi = pack_max[b]
        for p in range(p0, p1):
            s0, s1 = pack_cell_offsets[p], pack_cell_offsets[p + 1]
            size = s1 - s0
            if size < lo or size > hi:
                f |= B_SIZE
            if size == 0:
                f |= B_DISCONNECTED
                continue
            stamp += 1
            distinct = 0
            for i in range(s0, s1):
                c = pack_cells[i]
                if member[c] != stamp:
                    member[c] = stamp
                    distinct += 1
            if _piece(pack_cells[s0], member, mark, stamp, nb, nbn, queue, label, np.int64(0)) != distinct:
                f |= B_DISCONNECTED
        if not dup:
            # the connected pieces of the cells must be the packs themselves:
            # every pack non-empty, inside the cells, within one piece that is
            # exactly its size, and as many pieces as packs
            stamp += 1
            pieces = 0
            for i in range(c0, c1):
                c = cells[i]
                member[c] = stamp
            for i in range(c0, c1):
                c = cells[i]
                if mark[c] != stamp:
                    piece_size[pieces] = _piece(c, member, mark, stamp, nb, nbn, queue, label, pieces)
                    pieces += 1
            same = pieces == p1 - p0
            for p in range(p0, p1):
                s0, s1 = pack_cell_offsets[p], pack_cell_offsets[p + 1]
                if s1 == s0:
                    same = False
                    break
                first = pack_cells[s0]
                if member[first] != stamp or piece_size[label[first]] != s1 - s0:
                    same = False
                    break
                for i in range(s0 + 1, s1):
                    c = pack_cells[i]
                    if member[c] != stamp or label[c] != label[first]:
                        same = False
                        break
                if not same:
                    break
            if not same:
                f |= B_TOUCH
        if n_cells > target[b]:
            f |= B_OVER_TARGET
        if shortfall[b] != target[b] - n_cells:
            f |= B_SHORTFALL
        flags[b] = f


def _offsets(name: str, offsets, values_len: int, boards: int) -> np.ndarray:
    o = np.ascontiguousarray(offsets, dtype=np.int64)
    if o.shape != (boards + 1,) or o[0] != 0 or o[-1] != values_len or (np.diff(o) < 0).any():
        raise ValueError(f"{name} must be {boards + 1} non-decreasing offsets from 0 to {values_len}")
    return o


def _per_board(name: str, values, boards: int) -> np.ndarray:
    v = np.ascontiguousarray(values, dtype=np.int64)
    if v.shape != (boards,):
        raise ValueError(f"{name} must hold one value a board ({boards}), got shape {v.shape}")
    return v


def rule_flags(batch, mines, fog, r0, width: int, height: int) -> np.ndarray:
    """``uint32 [B]``: the :data:`RULES` bits each board of ``batch`` (an
    ``OverlayBatch``) breaks, board ``b`` of the batch on row ``b`` of
    ``mines``, ``fog`` and ``r0`` (``[B, W*H]`` masks; R0 recomputed from
    the boards). ValueError when the arrays disagree."""
    mines, fog = board_arrays(mines, fog, width, height)
    r0, _ = board_arrays(r0, None, width, height)
    boards, nc = mines.shape
    if len(batch) != boards or r0.shape != mines.shape:
        raise ValueError(f"{len(batch)} overlays, {boards} boards and R0 of {r0.shape[0]} boards")
    cells = np.ascontiguousarray(batch.cells, dtype=np.int64)
    pack_cells = np.ascontiguousarray(batch.pack_cells, dtype=np.int64)
    cell_offsets = _offsets("cell offsets", batch.cell_offsets, cells.shape[0], boards)
    pack_cell_offsets = np.ascontiguousarray(batch.pack_cell_offsets, dtype=np.int64)
    n_packs = pack_cell_offsets.shape[0] - 1
    if n_packs < 0:
        raise ValueError("pack cell offsets must hold at least one entry")
    pack_cell_offsets = _offsets("pack cell offsets", pack_cell_offsets, pack_cells.shape[0], n_packs)
    pack_offsets = _offsets("pack offsets", batch.pack_offsets, n_packs, boards)
    per = {name: _per_board(name, getattr(batch, name), boards)
           for name in ("width", "height", "pack_min", "pack_max", "target", "shortfall")}
    nb, nbn = neighbour_arrays(int(width), int(height))
    flags = np.zeros(boards, np.int64)
    if boards:
        columns = OverlayColumns(*map(_read_only, OverlayColumns(
            cell_offsets=cell_offsets, cells=cells, pack_offsets=pack_offsets, pack_cell_offsets=pack_cell_offsets,
            pack_cells=pack_cells, **per)))
        scratch = CheckScratch._make(np.zeros(nc, np.int64) for _ in CheckScratch._fields)
        domain_pack_flags(Boards(width=int(width), height=int(height), mines=mines, fog=fog, r0=r0), columns, nb,
                          nbn, flags, scratch)
    return (flags | _one_type_flags(batch) | _boss_flags(batch)).astype(np.uint32)


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (``a`` itself left as it is): the columns reach
    the kernel read-only whether they were read back from Arrow or just placed,
    so ``domain_pack_flags`` compiles once."""
    v = a.view()
    v.flags.writeable = False
    return v


def _one_type_flags(batch) -> np.ndarray:
    """``checks.check_one_type`` over the row's columns."""
    vt, gv = np.asarray(batch.variant_type), np.asarray(batch.global_variant)
    has_global = gv >= 0
    has_cells = np.diff(batch.cell_offsets) > 0
    return (np.where(has_global & (vt != gv), BIT["more_than_one_type"], 0)
            | np.where(has_global & has_cells, BIT["global_with_cells"], 0)
            | np.where(has_global & (np.asarray(batch.draws) != 0), BIT["global_consumed_draws"], 0)
            | np.where(has_cells & (vt < 0), BIT["cells_without_type"], 0)).astype(np.int64)


def _boss_flags(batch) -> np.ndarray:
    """``checks.check_boss_rule`` (without a table: the pool each overlay
    recorded) over the row's columns."""
    gv = np.asarray(batch.global_variant)
    has_global = gv >= 0
    has_cells = np.diff(batch.cell_offsets) > 0
    whole_board_node = np.asarray(batch.is_boss) | np.asarray(batch.is_elite)
    starts = np.asarray(batch.global_pool_offsets)
    has_pool = np.diff(starts) > 0
    first = np.full(gv.shape[0], -1, np.int64)
    first[has_pool] = np.asarray(batch.global_pool)[starts[:-1][has_pool]]
    level1 = np.asarray(batch.level_index) == 1
    boss_pool = whole_board_node & has_pool
    boss_empty = whole_board_node & ~has_pool & has_global
    return (np.where(~whole_board_node & has_global, BIT["global_off_boss"], 0)
            | np.where(boss_pool & ~has_global, BIT["boss_without_global"], 0)
            | np.where(boss_pool & has_global & (gv != first), BIT["boss_wrong_global"], 0)
            | np.where(boss_pool & has_cells, BIT["boss_with_cells"], 0)
            | np.where(boss_empty & level1, BIT["level1_boss_global"], 0)
            | np.where(boss_empty & ~level1, BIT["boss_global_from_empty_pool"], 0)).astype(np.int64)


def rules_of(flags: int) -> tuple[str, ...]:
    """The rule names of one board's bits, in :data:`RULES` order."""
    return tuple(rule for rule in RULES if int(flags) & BIT[rule])
