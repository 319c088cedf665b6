"""Region placement of a batch of boards, compiled (SPEC 3 "Region placement";
seed 003 "布置段（战斗初始化第 4 步）": one type drawn from the region pool,
8-connected packs of ``[pack_min, pack_max]`` cells grown on the candidate
cells up to the count, a fragment too small for ``pack_min`` skipped, the
shortfall reported, never forced).

``placement.place_overlay`` / ``grow_packs`` are the readable reference and
their module docstring states the draw protocol; :func:`place_region_cells`
follows it draw for draw on every board of a row in one kernel call, from
each board's own ``variant_place`` stream (``rng_kernels.below``, the twin of
``rng.Stream.below``). The tests hold it equal to the reference on boards
wider than the bit rows and to its bit-row twin on random boards of every
pack range. How the protocol maps onto masks:

* the *free* set is a mask; the reference re-splits only the fragment a pack
  was cut from, and every piece of that fragment left after the pack and its
  halo leave touches a cell that just left, so a search from the free
  neighbours of the cells that left finds exactly the pieces to re-split;
  pieces smaller than ``pack_min`` leave the free set for good;
* ``free[below(len(free))]`` over the sorted free list is the k-th free cell
  in row-major order, so no list is kept;
* the admissible sizes are a range ``[pack_min, min(hi, remaining -
  pack_min)]`` followed by ``remaining`` itself when it fits, so the drawn
  index is turned into a size without a list;
* the frontier is rebuilt and sorted before every growth draw, as in the
  reference.

:func:`place_regions` runs this kernel on boards wider than one machine
word a row holds (``closure_rows.MAX_WIDTH``) and its bit-row twin
(``placement_rows.place_region_bits``: the same packs from the same draws,
4.3x faster on the 600-row table's boards) on every other board. The pack
size draw (:func:`~boardgen_pipeline.variants.placement_rows.pack_size`)
and the summary's columns are the two kernels' one copy.

Routing (global type, empty pool, region placement) depends only on the row
and stays in Python (``variants.batch``); only region rows reach this kernel.
The target of a candidate count is read from a table computed in exact
Python integers (``percent_of_cells`` is a Fraction whose numerator times the
cell count need not fit 64 bits).

The kernel takes its arrays by name: the boards as
:class:`Candidates`, the row's rule as :class:`PackRule`, its outputs as
:class:`PlacementOut` and its scratch as :class:`PlacementScratch`, so that
no two arrays of one kind stand side by side where one could take the
other's place (the neighbour table and its counts stay positional: swapped,
they do not compile).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit

from boardgen_pipeline.board.closure_rows import MAX_WIDTH, PAD
from boardgen_pipeline.board.geometry import neighbour_arrays
from boardgen_pipeline.board.r0 import board_arrays
from boardgen_pipeline.board.rng_kernels import below
from boardgen_pipeline.variants.placement_rows import (
    OUT_CANDIDATES,
    OUT_DRAWS,
    OUT_PACKS,
    OUT_SHORTFALL,
    OUT_SIZE,
    OUT_TARGET,
    OUT_TYPE,
    ROWS,
    check_batch,
    pack_size,
    place_region_bits,
)


class Candidates(NamedTuple):
    """The boards of a batch, one row of W*H cells a board (uint8 masks)."""

    mines: np.ndarray
    taken: np.ndarray  # R0 and fog cells: safe, but no candidates


class PackRule(NamedTuple):
    """The region placement rule of a row."""

    pool_size: int  # types in the region pool
    pack_min: int
    pack_max: int
    targets: np.ndarray  # int64 [W*H + 1]: the target for each candidate count (``target_table``)


class PlacementOut(NamedTuple):
    """Where the kernel writes (see ``place_region_cells``)."""

    summary: np.ndarray  # int64 [boards, OUT_SIZE]
    pack_ends: np.ndarray  # int64: the end of each pack in pack_cells
    pack_cells: np.ndarray  # int64: the packs' cells, pack after pack, each sorted
    cells: np.ndarray  # int64: each board's cells, sorted, board after board
    cell_ends: np.ndarray  # int64 [boards]: the end of each board's cells


class PlacementScratch(NamedTuple):
    """The kernel's scratch, one entry a cell unless said otherwise."""

    free: np.ndarray  # uint8: cells still free for a pack
    in_pack: np.ndarray  # uint8: 1 in the pack, 2 listed in the frontier, 3 placed
    seen: np.ndarray  # int64: search stamps
    queue: np.ndarray  # int64
    frontier: np.ndarray  # int64 [8 x the largest pack]
    left: np.ndarray  # int64: cells that left the free set
    pack: np.ndarray  # int64 [the largest pack]


@njit(cache=True, inline="always", error_model="numpy")
def _sort_head(a, n):
    """Sort ``a[:n]`` in place: a frontier or a pack, a handful of cells (insertion sort)."""
    for i in range(1, n):
        v = a[i]
        p = i - 1
        while p >= 0 and a[p] > v:
            a[p + 1] = a[p]
            p -= 1
        a[p + 1] = v


@njit(cache=True, error_model="numpy")
def _drop_small(start, free, nb, nbn, seen, round_base, stamp, queue, pack_min):
    """Take the free piece holding ``start`` out of the free set when it
    holds fewer than ``pack_min`` cells; returns the cells taken out.

    Only a piece's smallness matters, so the search stops as soon as it has
    ``pack_min`` cells, or when it meets a cell an earlier search of this
    round (stamps above ``round_base``) marked: that piece was big enough
    (a small one left the free set), and this is the same piece."""
    seen[start] = stamp
    queue[0] = start
    qh = 0
    qt = 1
    big = False
    # a flag, not a return from inside the loops: numba compiles the early
    # return into a much slower loop (measured 3.5x on a row)
    while qh < qt and qt < pack_min and not big:
        c = queue[qh]
        qh += 1
        for k in range(nbn[c]):
            n = nb[c, k]
            if free[n] != 0 and seen[n] != stamp:
                if seen[n] > round_base:
                    big = True
                    break
                seen[n] = stamp
                queue[qt] = n
                qt += 1
    if big or qt >= pack_min:
        return 0
    for i in range(qt):
        free[queue[i]] = 0
    return qt


@njit(cache=True, error_model="numpy")
def place_region_cells(states, boards_in, rule, nb, nbn, out, scratch):
    """Region placement of each board (row) of ``boards_in.mines``.

    ``states[b]``: the initial state of board b's ``variant_place`` stream;
    ``boards_in.taken``: R0 and fog cells (not candidates);
    ``rule.targets[C]``: the target for ``C`` candidates. Per board into
    ``out.summary[b, OUT_*]``; the packs of all boards one after another,
    each pack's cells sorted, into ``out.pack_cells`` with ``out.pack_ends``
    (the end of each pack there); each board's sorted cells into
    ``out.cells`` with ``out.cell_ends``. Returns the pack count."""
    mines = boards_in.mines
    taken = boards_in.taken
    pool_size = rule.pool_size
    targets = rule.targets
    pack_min = rule.pack_min
    pack_max = rule.pack_max
    summary = out.summary
    pack_ends = out.pack_ends
    pack_cells = out.pack_cells
    cells = out.cells
    cell_ends = out.cell_ends
    free = scratch.free
    in_pack = scratch.in_pack
    seen = scratch.seen
    queue = scratch.queue
    frontier = scratch.frontier
    left = scratch.left
    pack = scratch.pack
    boards, nc = mines.shape
    biggest = min(pack_max, nc)
    if nb.shape[0] != nc or nbn.shape[0] != nc:
        raise ValueError("the neighbour table must match the boards")
    check_batch(states, boards_in, rule, out)
    if free.shape[0] < nc or in_pack.shape[0] < nc or seen.shape[0] < nc or queue.shape[0] < nc or \
            left.shape[0] < nc or pack.shape[0] < biggest or frontier.shape[0] < 8 * biggest:
        raise ValueError("scratch arrays do not fit the board")
    st = np.zeros(1, np.uint64)
    draws = np.zeros(1, np.int64)
    n_packs = 0
    n_cells = 0
    stamp = 0
    for b in range(boards):
        st[0] = states[b]
        draws[0] = 0
        # one draw for the type even from a pool of one (protocol step 1)
        summary[b, OUT_TYPE] = below(st, draws, pool_size)
        n_free = 0
        for c in range(nc):
            cand = mines[b, c] == 0 and taken[b, c] == 0
            free[c] = 1 if cand else 0
            in_pack[c] = 0
            n_free += free[c]
        candidates = n_free
        target = targets[candidates]
        round_base = stamp
        for c in range(nc):
            if free[c] != 0 and seen[c] <= round_base:
                stamp += 1
                n_free -= _drop_small(c, free, nb, nbn, seen, round_base, stamp, queue, pack_min)
        remaining = target
        board_packs = 0
        while remaining >= pack_min and n_free > 0:
            size = pack_size(st, draws, remaining, biggest, pack_min)
            k = below(st, draws, n_free)
            # the k-th free cell in row-major order (k < n_free: it exists)
            seed = 0
            while free[seed] == 0 or k > 0:
                if free[seed] != 0:
                    k -= 1
                seed += 1
            pack[0] = seed
            in_pack[seed] = 1
            size_now = 1
            while size_now < size:
                nf = 0
                for i in range(size_now):
                    c = pack[i]
                    for q in range(nbn[c]):
                        n = nb[c, q]
                        if free[n] != 0 and in_pack[n] == 0:
                            # in_pack 2 marks a frontier cell already listed
                            in_pack[n] = 2
                            frontier[nf] = n
                            nf += 1
                if nf == 0:
                    break
                _sort_head(frontier, nf)
                for i in range(nf):
                    in_pack[frontier[i]] = 0
                cell = frontier[below(st, draws, nf)]
                pack[size_now] = cell
                in_pack[cell] = 1
                size_now += 1
            _sort_head(pack, size_now)
            for i in range(size_now):
                pack_cells[n_cells] = pack[i]
                n_cells += 1
            pack_ends[n_packs] = n_cells
            n_packs += 1
            board_packs += 1
            remaining -= size_now
            # the pack and its halo leave the free set (packs never touch)
            n_left = 0
            for i in range(size_now):
                c = pack[i]
                free[c] = 0
                in_pack[c] = 3  # placed: the board's cell list below is read off these
                left[n_left] = c
                n_left += 1
            for i in range(size_now):
                c = pack[i]
                for q in range(nbn[c]):
                    n = nb[c, q]
                    if free[n] != 0:
                        free[n] = 0
                        left[n_left] = n
                        n_left += 1
            n_free -= n_left
            round_base = stamp
            for i in range(n_left):
                c = left[i]
                for q in range(nbn[c]):
                    n = nb[c, q]
                    if free[n] != 0 and seen[n] <= round_base:
                        stamp += 1
                        n_free -= _drop_small(n, free, nb, nbn, seen, round_base, stamp, queue, pack_min)
        summary[b, OUT_TARGET] = target
        summary[b, OUT_CANDIDATES] = candidates
        summary[b, OUT_SHORTFALL] = remaining
        summary[b, OUT_PACKS] = board_packs
        summary[b, OUT_DRAWS] = draws[0]
        u = cell_ends[b - 1] if b > 0 else 0
        for c in range(nc):
            if in_pack[c] == 3:
                cells[u] = c
                u += 1
        cell_ends[b] = u
    return n_packs


@lru_cache(maxsize=256)
def target_table(cells: int, percent_num: int, percent_den: int, bonus_cells: int) -> np.ndarray:
    """``targets[C]`` for ``C`` in ``[0, cells]``: ``min(C, round_half_up(C *
    percent / 100) + bonus_cells)`` with ``percent = percent_num /
    percent_den``, in exact integers (``placement.target_count``;
    round half up is ``floor(x + 1/2) = (2 C p + 100 q) // (200 q)``)."""
    if percent_den <= 0:
        raise ValueError(f"percent_of_cells needs a positive denominator, got {percent_den}")
    q200, q100, p2 = 200 * percent_den, 100 * percent_den, 2 * percent_num
    out = np.array([min(c, (p2 * c + q100) // q200 + bonus_cells) for c in range(cells + 1)], dtype=np.int64)
    out.setflags(write=False)
    return out


class RegionPlacement:
    """The kernel's output for a batch: per board ``type_index`` (into the
    region pool), ``target``, ``candidate_count``, ``draws``, ``shortfall``,
    ``pack_count``; every pack's size (``pack_sizes``, in placement order,
    board after board) and cells (``pack_cells``, each pack sorted); each
    board's cell count (``cell_counts``) and sorted cells (``cells``, board
    after board)."""

    def __init__(self, summary, pack_sizes, pack_cells, cell_counts, cells):
        self.type_index = summary[:, OUT_TYPE]
        self.target = summary[:, OUT_TARGET]
        self.candidate_count = summary[:, OUT_CANDIDATES]
        self.draws = summary[:, OUT_DRAWS]
        self.shortfall = summary[:, OUT_SHORTFALL]
        self.pack_count = summary[:, OUT_PACKS]
        self.pack_sizes = pack_sizes
        self.pack_cells = pack_cells
        self.cell_counts = cell_counts
        self.cells = cells


BATCH_CELLS = 1 << 22  # board cells per kernel call: bounds the output arrays (3 x 32 MB)


def place_regions(states, mines, taken, *, width: int, height: int, pool_size: int, targets, pack_min: int,
                  pack_max: int) -> RegionPlacement:
    """Region placement of every board of ``mines`` (``uint8 [B, W*H]``);
    ``taken`` (same shape): the cells that are no candidates besides mines
    (R0 and fog); ``states``: ``uint64 [B]`` initial ``variant_place`` states;
    ``targets``: :func:`target_table` of ``W*H`` cells. ValueError for
    arrays that disagree or parameters the protocol cannot run on."""
    mines, taken = board_arrays(mines, taken, width, height)
    boards, nc = mines.shape
    states = np.ascontiguousarray(states, dtype=np.uint64)
    if states.shape != (boards,):
        raise ValueError(f"one stream state a board: {boards} boards, states of shape {states.shape}")
    for name, v in (("pool size", pool_size), ("pack_min", pack_min), ("pack_max", pack_max)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {v!r}")
    if pool_size < 1:
        raise ValueError(f"region placement needs a non-empty region pool, got {pool_size} types")
    if not 1 <= pack_min <= pack_max < 2**31:
        raise ValueError(f"pack sizes need 1 <= pack_min <= pack_max < 2**31, got [{pack_min}, {pack_max}]")
    targets = np.ascontiguousarray(targets, dtype=np.int64)
    if targets.shape != (nc + 1,):
        raise ValueError(f"targets must hold one entry per candidate count 0..{nc}, got shape {targets.shape}")
    if (targets > np.arange(nc + 1)).any():
        raise ValueError("a target above its candidate count (the count is capped at |C|)")
    width, height = int(width), int(height)
    bits = nb = nbn = scratch = None
    if width <= MAX_WIDTH:  # one machine word a row: the bit-row kernel
        bits = np.zeros((ROWS, height + 2 * PAD), np.uint64)
    else:
        nb, nbn = neighbour_arrays(width, height)
        # a pack never exceeds the target, which never exceeds W*H
        pack_cap = min(int(pack_max), nc)
        scratch = PlacementScratch(free=np.zeros(nc, np.uint8), in_pack=np.zeros(nc, np.uint8),
                                   seen=np.zeros(nc, np.int64), queue=np.zeros(nc, np.int64),
                                   frontier=np.zeros(8 * pack_cap, np.int64), left=np.zeros(nc, np.int64),
                                   pack=np.zeros(pack_cap, np.int64))
    rule = PackRule(pool_size=int(pool_size), pack_min=int(pack_min), pack_max=int(pack_max), targets=targets)
    chunk = max(1, BATCH_CELLS // nc)
    parts = []
    for start in range(0, boards, chunk):
        part = slice(start, min(boards, start + chunk))
        size = part.stop - part.start
        # a board places at most its candidates, and every pack holds a cell
        cap = size * nc
        out = PlacementOut(summary=np.zeros((size, OUT_SIZE), np.int64), pack_ends=np.empty(cap, np.int64),
                           pack_cells=np.empty(cap, np.int64), cells=np.empty(cap, np.int64),
                           cell_ends=np.zeros(size, np.int64))
        boards_in = Candidates(mines=mines[part], taken=taken[part])
        if bits is not None:
            n_packs = place_region_bits(states[part], boards_in, rule, width, height, out, bits)
        else:
            n_packs = place_region_cells(states[part], boards_in, rule, nb, nbn, out, scratch)
        n_cells = int(out.cell_ends[-1])
        parts.append((out.summary, np.diff(out.pack_ends[:n_packs], prepend=0), out.pack_cells[:n_cells],
                      np.diff(out.cell_ends, prepend=0), out.cells[:n_cells]))
    if not parts:
        empty = np.zeros(0, np.int64)
        return RegionPlacement(np.zeros((0, OUT_SIZE), np.int64), empty, empty, empty, empty)
    return RegionPlacement(*(np.concatenate(col) for col in zip(*parts)))
