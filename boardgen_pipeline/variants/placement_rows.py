"""Region placement on bit rows (SPEC 3 "Region placement"; seed 003
"布置段（战斗初始化第 4 步）"; for speed): the same packs, from the same
draws, as ``placement_kernels.place_region_cells`` and its readable reference
``placement.place_overlay``, on boards up to ``closure_rows.MAX_WIDTH``
wide, with every set of cells a row of one machine word (``closure_rows``'
padded layout, as ``board.fog_rows`` does for the fog step).

The cell-by-cell kernel spent its time on branches that no predictor
learns from one board to the next: a test per cell to find the k-th free
cell, per neighbour to list a frontier, to cut a halo and to re-split what
is left. On rows each of these is a few word operations a row:

* the k-th free cell, the k-th frontier cell: the k-th set bit counting rows
  from the top and bits from the right, which is row-major order, so a
  frontier needs no sort;
* the frontier: the pack grown by one cell in every direction, within the
  free cells, less the pack;
* the pack and its halo leave the free set as the pack grown by one cell;
* the re-split keeps the invariant the reference keeps: the free set is the
  union of the pieces (8-connected) of at least ``pack_min`` cells. Only a
  piece next to a cell that just left can have become small; each is grown
  one ring at a time from a free cell next to those cells until it holds
  ``pack_min`` cells, meets a piece found big this round, or stops growing
  (small: it leaves the free set). Which cells leave does not depend on the
  order the pieces are looked at, so the free set, and every draw after,
  is the cell-by-cell kernel's.

The tests hold the two kernels and the reference equal on every board of
default rows and on random layouts (``tests/test_overlay_batch.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from boardgen_pipeline.board.bitops import popcount, trailing_zeros
from boardgen_pipeline.board.closure_rows import MAX_WIDTH, PAD, _around, _wide, cell_bit, kth_cell, row_of
from boardgen_pipeline.board.rng_kernels import below

# per-board columns of the placement kernels' ``summary`` output
OUT_TYPE, OUT_TARGET, OUT_CANDIDATES, OUT_DRAWS, OUT_SHORTFALL, OUT_PACKS = range(6)
OUT_SIZE = 6

# rows of the scratch ``bits`` (each ``H + 2 * PAD`` words, zero outside the board)
R_FREE, R_PACK, R_FRONT, R_LEFT, R_KNOWN, R_COMP, R_PLACED = range(7)
ROWS = 7

_ONE = uint64(1)


@njit(cache=True, inline="always", error_model="numpy")
def pack_size(st, draws, remaining, biggest, pack_min):
    """The size of the next pack, drawn among the admissible ones (protocol
    step 3 of ``placement``): ``[pack_min, min(biggest, remaining) -
    pack_min]`` (sizes that leave room for another pack), then ``remaining``
    itself when it fits; every size from ``pack_min`` when none avoids
    stranding a remainder."""
    hi = min(biggest, remaining)
    top = min(hi, remaining - pack_min)
    n_low = max(0, top - pack_min + 1)
    n_sizes = n_low + (1 if remaining <= hi else 0)
    if n_sizes == 0:
        n_low = hi - pack_min + 1
        n_sizes = n_low
    j = below(st, draws, n_sizes)
    return pack_min + j if j < n_low else remaining


@njit(cache=True, error_model="numpy")
def check_batch(states, boards_in, rule, out):
    """What both placement kernels require of their arguments before they
    write (``placement_kernels``' named tuples): ValueError for taken cells or
    stream states that do not match the boards, a rule the protocol cannot run
    on, a target above its candidate count, or outputs too small for the
    batch (a board places at most its cells, and every pack holds one)."""
    mines = boards_in.mines
    targets = rule.targets
    boards, nc = mines.shape
    if boards_in.taken.shape != mines.shape or states.shape[0] < boards:
        raise ValueError("taken cells and stream states must match the boards")
    if targets.shape[0] != nc + 1 or rule.pool_size < 1 or rule.pack_min < 1 or rule.pack_max < rule.pack_min:
        raise ValueError("targets must cover 0..W*H candidates; pool size >= 1; 1 <= pack_min <= pack_max")
    for c in range(nc + 1):
        if targets[c] > c:
            raise ValueError("a target above its candidate count")
    if out.summary.shape[0] < boards or out.summary.shape[1] < OUT_SIZE or out.cell_ends.shape[0] < boards or \
            min(out.pack_ends.shape[0], out.pack_cells.shape[0], out.cells.shape[0]) < boards * nc:
        raise ValueError("output arrays do not fit the batch")


@njit(cache=True, error_model="numpy")
def _small_piece(bits, p, seed, H, pack_min):
    """Grow ``R_COMP`` from ``seed`` (bits of padded row ``p``) within the free
    cells, a ring at a time, until it holds ``pack_min`` cells or meets
    ``R_KNOWN`` (a big piece: its cells join ``R_KNOWN``, returns 0), or
    stops growing (a small piece: its cells leave ``R_FREE``, returns how
    many). ``R_COMP`` is empty again on return."""
    bits[R_COMP, p] = seed
    lo = p
    hi = p
    n = 1
    big = n >= pack_min
    grew = True
    # flags, not returns from inside the loops (see placement_kernels._drop_small)
    while grew and not big:
        grew = False
        n = 0
        first = max(PAD, lo - 1)
        last = min(H + PAD - 1, hi + 1)
        for q in range(first, last + 1):
            g = _around(bits, R_COMP, q) & bits[R_FREE, q]
            if g & bits[R_KNOWN, q]:
                big = True
            if g != bits[R_COMP, q]:
                bits[R_COMP, q] = g
                grew = True
                lo = min(lo, q)
                hi = max(hi, q)
            n += popcount(g)
        big = big or n >= pack_min
    for q in range(lo, hi + 1):
        c = bits[R_COMP, q]
        if big:
            bits[R_KNOWN, q] |= c
        else:
            bits[R_FREE, q] &= ~c
        bits[R_COMP, q] = 0
    return 0 if big else n


@njit(cache=True, error_model="numpy")
def _drop_small_near(bits, first, last, H, pack_min, seeds, near):
    """Take out of the free set every piece smaller than ``pack_min`` with a
    cell in padded rows ``first..last`` next to (``near``) or in (not
    ``near``) the cells of set ``seeds``; returns the cells taken out.
    ``R_KNOWN`` is empty before and after."""
    out = 0
    if pack_min == 2:
        # a piece of one cell: a free cell without a free neighbour, found a row at a time (taking it out
        # changes no other cell's neighbours)
        for q in range(first, last + 1):
            free = bits[R_FREE, q]
            alone = free & ~(_wide(bits[R_FREE, q - 1]) | _wide(bits[R_FREE, q + 1]) | (free << _ONE) | (free >> _ONE))
            alone &= _around(bits, seeds, q) if near else bits[seeds, q]
            bits[R_FREE, q] = free & ~alone
            out += popcount(alone)
    elif pack_min > 2:
        for q in range(first, last + 1):
            while True:
                around = _around(bits, seeds, q) if near else bits[seeds, q]
                v = around & bits[R_FREE, q] & ~bits[R_KNOWN, q]
                if v == 0:
                    break
                out += _small_piece(bits, q, v & (~v + _ONE), H, pack_min)
        for q in range(PAD, H + PAD):
            bits[R_KNOWN, q] = 0
    return out


@njit(cache=True, error_model="numpy")
def _list_cells(bits, row, first, last, W, out, at):
    """The cells of rows ``first..last`` of set ``row``, row-major, into
    ``out`` from ``at``; returns the end."""
    for q in range(first, last + 1):
        v = bits[row, q]
        while v:
            low = v & (~v + _ONE)
            v ^= low
            out[at] = (q - PAD) * W + int(trailing_zeros(low)) - PAD
            at += 1
    return at


@njit(cache=True, error_model="numpy")
def place_region_bits(states, boards_in, rule, W, H, out, bits):
    """``placement_kernels.place_region_cells`` on rows, over the same named
    tuples (``boards_in`` its ``Candidates``, ``rule`` its ``PackRule``,
    ``out`` its ``PlacementOut``) with ``bits`` (``ROWS`` rows of ``H + 2 *
    PAD`` words) for scratch. Returns the pack count."""
    mines = boards_in.mines
    taken = boards_in.taken
    targets = rule.targets
    pack_min = rule.pack_min
    summary = out.summary
    pack_ends = out.pack_ends
    pack_cells = out.pack_cells
    cells = out.cells
    cell_ends = out.cell_ends
    boards, nc = mines.shape
    biggest = min(rule.pack_max, nc)
    if W < 1 or H < 1 or W > MAX_WIDTH or nc != W * H or bits.shape[0] < ROWS or bits.shape[1] < H + 2 * PAD:
        raise ValueError("the rows cannot hold the board")
    check_batch(states, boards_in, rule, out)
    bits[:ROWS, :] = 0
    full = ((_ONE << uint64(W)) - _ONE) << uint64(PAD)
    top = H + PAD - 1
    st = np.zeros(1, np.uint64)
    draws = np.zeros(1, np.int64)
    n_packs = 0
    n_cells = 0
    for b in range(boards):
        st[0] = states[b]
        draws[0] = 0
        # one draw for the type even from a pool of one (protocol step 1)
        summary[b, OUT_TYPE] = below(st, draws, rule.pool_size)
        n_free = 0
        for y in range(H):
            free = ~(row_of(mines[b], y, W) | row_of(taken[b], y, W)) & full
            bits[R_FREE, y + PAD] = free
            bits[R_PLACED, y + PAD] = 0
            n_free += popcount(free)
        candidates = n_free
        target = targets[candidates]
        n_free -= _drop_small_near(bits, PAD, top, H, pack_min, R_FREE, False)  # every piece, once
        remaining = target
        board_packs = 0
        while remaining >= pack_min and n_free > 0:
            size = pack_size(st, draws, remaining, biggest, pack_min)
            seed = kth_cell(bits, below(st, draws, n_free), R_FREE, H, W)
            p, bit = cell_bit(seed, W)
            bits[R_PACK, p] = bit
            lo = p
            hi = p
            size_now = 1
            while size_now < size:
                nf = 0
                for q in range(max(PAD, lo - 1), min(top, hi + 1) + 1):
                    front = _around(bits, R_PACK, q) & bits[R_FREE, q] & ~bits[R_PACK, q]
                    bits[R_FRONT, q] = front
                    nf += popcount(front)
                if nf == 0:
                    break
                cell = kth_cell(bits, below(st, draws, nf), R_FRONT, H, W)
                q, bit = cell_bit(cell, W)
                bits[R_PACK, q] |= bit
                lo = min(lo, q)
                hi = max(hi, q)
                size_now += 1
            for q in range(max(PAD, lo - 1), min(top, hi + 1) + 1):
                bits[R_FRONT, q] = 0
            n_cells = _list_cells(bits, R_PACK, lo, hi, W, pack_cells, n_cells)
            pack_ends[n_packs] = n_cells
            n_packs += 1
            board_packs += 1
            remaining -= size_now
            # the pack and its halo leave the free set (packs never touch)
            first = max(PAD, lo - 1)
            last = min(top, hi + 1)
            for q in range(first, last + 1):
                gone = _around(bits, R_PACK, q) & bits[R_FREE, q]
                bits[R_LEFT, q] = gone
                bits[R_FREE, q] &= ~gone
                n_free -= popcount(gone)
            for q in range(lo, hi + 1):
                bits[R_PLACED, q] |= bits[R_PACK, q]
                bits[R_PACK, q] = 0
            n_free -= _drop_small_near(bits, max(PAD, first - 1), min(top, last + 1), H, pack_min, R_LEFT, True)
            for q in range(first, last + 1):
                bits[R_LEFT, q] = 0
        summary[b, OUT_TARGET] = target
        summary[b, OUT_CANDIDATES] = candidates
        summary[b, OUT_DRAWS] = draws[0]
        summary[b, OUT_SHORTFALL] = remaining
        summary[b, OUT_PACKS] = board_packs
        start = cell_ends[b - 1] if b > 0 else 0
        cell_ends[b] = _list_cells(bits, R_PLACED, PAD, top, W, cells, start)
    return n_packs
