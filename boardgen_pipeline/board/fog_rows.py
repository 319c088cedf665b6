"""Seed 001's fog step on bit rows (SPEC 5; seed 001 "变异布置与雾形边界",
rules 3-4, EC2; the goal: a fog row costs at most 2x a fog-free row).

The same regions, drawn from the same stream with the same draws, as
``kernels.place_fog`` and its readable reference ``fog.place_fog``: where
fog may go (safe, non-zero, outside R0 and its ring), region sizes, a seed
drawn among the free allowed cells whose 8-connected free area holds the
whole region, growth one cell at a time drawn among the free allowed cells
8-adjacent to the region in row-major order, no 3x3 window all fog, roll
back of a region that runs out of room. Sets of cells are rows of one
machine word (``closure_rows``' padded layout), so every candidate list is
a few word operations a row instead of a branch per cell: on this machine
kind the branches, unpredictable from one board to the next, were the
cost. "The k-th candidate in row-major order" is the k-th set bit counting
rows from the top and bits from the right.

A cell completes a window when the window holds 8 fog cells and not it;
those cells are kept as a row set (``F_COMPLETE``), grown when a window
reaches 8 and rebuilt after a roll-back (windows only lose fog then).
"""

from __future__ import annotations

from numba import njit, uint64

from boardgen_pipeline.board.bitops import popcount, trailing_zeros
from boardgen_pipeline.board.closure_rows import BITS_ROWS, MAX_WIDTH, PAD, _around, _wide, cell_bit, kth_cell, row_of
from boardgen_pipeline.board.rng_kernels import below

# rows of the shared scratch ``bits`` after the closure's
(F_ALLOWED, F_FOG, F_FREE, F_BIG, F_REST, F_COMP, F_REGION, F_COMPLETE) = range(BITS_ROWS, BITS_ROWS + 8)
FOG_BITS_ROWS = BITS_ROWS + 8

_ONE = uint64(1)
_THREE = uint64(7)


@njit(cache=True, inline="always", error_model="numpy")
def region_size(total, region_count, i):
    """Region ``i``'s share of ``total`` fog cells: split as evenly as
    possible, the first ``total % region_count`` regions one cell larger
    (``fog.region_sizes``)."""
    return total // region_count + (1 if i < total % region_count else 0)


@njit(cache=True, inline="always", error_model="numpy")
def windows_around(c, W, H):
    """The 3x3 windows inside the board that hold cell ``c``: their top-left
    corners span rows ``wy0..wy1`` and columns ``wx0..wx1`` (empty on a board
    narrower or lower than 3)."""
    x = c % W
    y = c // W
    return max(0, y - 2), min(H - 3, y), max(0, x - 2), min(W - 3, x)


@njit(cache=True, error_model="numpy")
def _missing(bits, wx, wy):
    """The one cell of window (wx, wy) that is not fog, as (row, bit)."""
    for q in range(wy + PAD, wy + PAD + 3):
        m = ~bits[F_FOG, q] & (_THREE << uint64(wx + PAD))
        if m:
            return q, m
    return -1, uint64(0)


@njit(cache=True, error_model="numpy")
def _window_add(bits, c, W, H, wcount, step):
    """Fog count of every window holding ``c``; a window reaching 8 makes its
    last cell a completing one."""
    ww = W - 2
    wy0, wy1, wx0, wx1 = windows_around(c, W, H)
    for wy in range(wy0, wy1 + 1):
        for wx in range(wx0, wx1 + 1):
            wcount[wy * ww + wx] += step
            if step > 0 and wcount[wy * ww + wx] == 8:
                q, m = _missing(bits, wx, wy)
                if q >= 0:
                    bits[F_COMPLETE, q] |= m


@njit(cache=True, error_model="numpy")
def _rebuild_complete(bits, W, H, wcount):
    for p in range(PAD, H + PAD):
        bits[F_COMPLETE, p] = 0
    ww = W - 2
    for wy in range(0, H - 2):
        for wx in range(0, ww):
            if wcount[wy * ww + wx] == 8:
                q, m = _missing(bits, wx, wy)
                if q >= 0:
                    bits[F_COMPLETE, q] |= m


@njit(cache=True, error_model="numpy")
def _component(bits, p, seed, H):
    """Grow ``F_COMP`` (empty) from ``seed`` in row ``p`` to its 8-connected
    component within ``F_REST``: down and up sweeps over the rows it spans,
    each row closed horizontally, until a sweep changes nothing. Returns
    the component's first and last rows."""
    bits[F_COMP, p] = seed
    lo = p
    hi = p
    changed = True
    while changed:
        changed = False
        first = max(PAD, lo - 1)
        last = min(H + PAD - 1, hi + 1)
        for step in range(2 * (last - first + 1)):
            q = first + step if step <= last - first else last - (step - (last - first + 1))
            src = bits[F_COMP, q - 1] | bits[F_COMP, q] | bits[F_COMP, q + 1]
            if src == 0:
                continue
            rest = bits[F_REST, q]
            new = rest & _wide(src)
            while True:
                nxt = rest & _wide(new)
                if nxt == new:
                    break
                new = nxt
            if new != bits[F_COMP, q]:
                bits[F_COMP, q] = new
                changed = True
                lo = min(lo, q)
                hi = max(hi, q)
    return lo, hi


@njit(cache=True, error_model="numpy")
def _holding(bits, size, H):
    """``F_BIG``: the free cells whose 8-connected free area has at least
    ``size`` cells."""
    for p in range(PAD - 1, H + PAD + 1):
        bits[F_BIG, p] = 0
        bits[F_REST, p] = bits[F_FREE, p]
        bits[F_COMP, p] = 0
    if size <= 1:
        for p in range(PAD, H + PAD):
            bits[F_BIG, p] = bits[F_FREE, p]
        return
    for p in range(PAD, H + PAD):
        while bits[F_REST, p]:
            v = bits[F_REST, p]
            lo, hi = _component(bits, p, v & (~v + _ONE), H)
            n = 0
            for q in range(lo, hi + 1):
                n += popcount(bits[F_COMP, q])
            for q in range(lo, hi + 1):
                c = bits[F_COMP, q]
                bits[F_REST, q] &= ~c
                if n >= size:
                    bits[F_BIG, q] |= c
                bits[F_COMP, q] = 0


@njit(cache=True, error_model="numpy")
def place_fog_rows(st, draws, g, s, f, rule):
    """``kernels.place_fog`` on rows, over the same named tuples (``g`` a
    ``kernels.Grid``, ``s`` its ``Scratch``, ``f`` its ``FogScratch``,
    ``rule`` a ``FogRule``). Returns ``(fog cells, regions placed)``, or
    ``(-1, 0)`` without drawing when the rows cannot hold the board."""
    W = g.width
    H = g.height
    mines = s.mines
    fog = s.fog
    bits = s.bits
    wcount = f.wcount
    region = f.region
    region_count = rule.regions
    if W > MAX_WIDTH or bits.shape[0] < FOG_BITS_ROWS or bits.shape[1] < H + 2 * PAD:
        return -1, 0
    mine_count = 0
    for p in range(PAD - 1, H + PAD + 1):
        for r in (F_ALLOWED, F_FOG, F_FREE, F_REGION, F_COMPLETE):
            bits[r, p] = 0
    for y in range(H):
        m = row_of(mines, y, W)
        mine_count += popcount(m)
        bits[F_ALLOWED, y + PAD] = row_of(s.num, y, W) & ~m  # safe and non-zero
        bits[F_REGION, y + PAD] = row_of(f.r0, y, W)  # R0 for now: its ring is taken out below
    fog[: W * H] = 0
    for p in range(PAD, H + PAD):
        bits[F_FREE, p] = bits[F_ALLOWED, p] & ~_around(bits, F_REGION, p)
    for p in range(PAD, H + PAD):
        bits[F_ALLOWED, p] = bits[F_FREE, p]
        bits[F_REGION, p] = 0
    wcount[:] = 0
    total = min(rule.aim, 8 * mine_count)
    nfog = 0
    placed = 0
    for i in range(region_count):
        size = region_size(total, region_count, i)
        if size == 0:
            continue
        for p in range(PAD, H + PAD):
            bits[F_FREE, p] = bits[F_ALLOWED, p] & ~bits[F_FOG, p]
        _holding(bits, size, H)
        ns = 0
        for p in range(PAD, H + PAD):
            bits[F_BIG, p] &= ~bits[F_COMPLETE, p]
            ns += popcount(bits[F_BIG, p])
        if ns == 0 or nfog + size > 8 * mine_count:
            continue
        c = kth_cell(bits, below(st, draws, ns), F_BIG, H, W)
        region[0] = c
        rl = 1
        p, b = cell_bit(c, W)
        bits[F_FOG, p] |= b
        bits[F_REGION, p] |= b
        nfog += 1
        _window_add(bits, c, W, H, wcount, 1)
        lo = p
        hi = p
        for q in range(PAD, H + PAD):
            bits[F_BIG, q] = 0  # from here on: the growth candidates
        while rl < size:
            # the free allowed cells next to the region that complete no window
            kept = 0
            for q in range(max(PAD, lo - 1), min(H + PAD - 1, hi + 1) + 1):
                front = _around(bits, F_REGION, q) & bits[F_ALLOWED, q] & ~bits[F_FOG, q] & ~bits[F_COMPLETE, q]
                bits[F_BIG, q] = front
                kept += popcount(front)
            if kept == 0:
                break
            c = kth_cell(bits, below(st, draws, kept), F_BIG, H, W)
            region[rl] = c
            rl += 1
            p, b = cell_bit(c, W)
            bits[F_FOG, p] |= b
            bits[F_REGION, p] |= b
            lo = min(lo, p)
            hi = max(hi, p)
            nfog += 1
            _window_add(bits, c, W, H, wcount, 1)
        if rl < size:
            # roll back: a region is placed whole or not at all
            for q in range(lo, hi + 1):
                bits[F_FOG, q] &= ~bits[F_REGION, q]
            for r in range(rl):
                _window_add(bits, region[r], W, H, wcount, -1)
            _rebuild_complete(bits, W, H, wcount)
            nfog -= rl
        else:
            placed += 1
        for q in range(lo, hi + 1):
            bits[F_REGION, q] = 0
    for p in range(PAD, H + PAD):
        v = bits[F_FOG, p]
        while v:
            low = v & (~v + _ONE)
            v ^= low
            fog[(p - PAD) * W + int(trailing_zeros(low)) - PAD] = 1
    return nfog, placed
