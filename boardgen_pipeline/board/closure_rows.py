"""The ``single_subset`` closure on bit rows (seed 001 F1, SPEC 2.3; for speed).

The same least fixed point as ``kernels.closure_cells`` - chain through
zeros, the single rule, the subset rule between constraints at Chebyshev
distance <= 2, fog meta-knowledge (fog is known safe, opened next to
anything opened, hides its number so is never a constraint) - computed on
boards up to ``MAX_WIDTH`` wide with one machine word a row.

Why it is the same fixed point: every fact the closure derives is true of
the board (revealed cells are safe, proven cells are mines), so the mines
still to find around a constraint are exactly the board's mines among its
unknown neighbours. The single rule on constraint ``c`` ("m == 0: every
unknown neighbour is safe"; "m == unknowns: all are mines") is therefore
"no unknown mine next to c" / "no unknown safe cell next to c", and the
subset rule between ``a`` and ``b`` (U(a) inside U(b), D = U(b) - U(a)
holds m_b - m_a mines; 0 or |D| settles D) is "D holds no mine" / "D holds
only mines". Each rule now tests a whole row of constraints with a few word
operations (the 3x3 neighbourhoods are shifted ORs of rows), without
counting. The fixed point does not depend on the order the rules are
applied in (seed 001 F1 note 5), so the rows and known mines come out equal
to the cell-by-cell closure's, bit for bit; the tests hold them equal on
random boards with and without fog.

Rows are stored with ``PAD`` empty bits on the right and ``PAD`` empty rows
above and below, so the 7x7 window of any cell is read without a bound test.
The other bit-row kernels (``fog_rows``, ``variants.placement_rows``) keep
their sets in the same layout and read cells in and out of it with
``row_of``, ``cell_bit`` and ``kth_cell`` (the k-th cell of a set in
row-major order).
Layout of the scratch ``bits`` (rows of ``H + 2 * PAD`` words): ``B_REV``
revealed, ``B_KNOWN`` proven mines, ``B_MINE`` the board's mines, ``B_FOG``
fog, ``B_FULL`` the board's cells, ``B_SUBSET`` constraints whose subset
relations may have changed, ``B_DIRTY`` rows whose single rule and fog rule
must run again (0 / 1); for ``waves_rows``: ``B_ZERO`` the zeros that chain
(not fog), ``B_SAFE_MARK`` / ``B_MINE_MARK`` a wave's deductions,
``B_NEW`` the cells opened last.

``waves_rows`` is ``difficulty.waves`` on the same rows (the difficulty figures
``solve_rounds`` and ``subset_steps``): each wave reads every constraint as
it was at the wave's start, which on rows is one pass over the board.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from boardgen_pipeline.board.bitops import popcount, trailing_zeros

PAD = 3
MAX_WIDTH = 64 - 2 * PAD
(B_REV, B_KNOWN, B_MINE, B_FOG, B_FULL, B_SUBSET, B_DIRTY, B_ZERO, B_SAFE_MARK, B_MINE_MARK, B_NEW) = range(11)
BITS_ROWS = 11

_ONE = uint64(1)
_SEVEN = uint64(0x7F)


def _window_tables():
    """In the 7x7 window of constraint ``a`` (bit ``7 * dy + dx``, ``a`` at
    (3, 3)), indexed by the window bit of a second constraint ``b`` within
    Chebyshev 2: the cells around ``a`` but not ``b`` (``A_ONLY``) and around
    ``b`` but not ``a`` (``B_ONLY``); ``RING`` holds the 24 bits where ``b``
    can be, ``AROUND`` the cells around ``a``."""

    def block(cx, cy):
        return {(cx + dx, cy + dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1)}

    def bits(cells):
        return sum(1 << (7 * y + x) for x, y in cells)

    a = block(3, 3)
    a_only = np.zeros(49, dtype=np.uint64)
    b_only = np.zeros(49, dtype=np.uint64)
    ring = 0
    for oy in range(-2, 3):
        for ox in range(-2, 3):
            if (ox, oy) != (0, 0):
                at = 7 * (3 + oy) + 3 + ox
                a_only[at] = bits(a - block(3 + ox, 3 + oy))
                b_only[at] = bits(block(3 + ox, 3 + oy) - a)
                ring |= 1 << at
    return a_only, b_only, uint64(ring), uint64(bits(a))


A_ONLY, B_ONLY, RING, AROUND = _window_tables()


@njit(cache=True, inline="always", error_model="numpy")
def _wide(x):
    """A row's cells and their left and right neighbours."""
    return x | (x << _ONE) | (x >> _ONE)


@njit(cache=True, inline="always", error_model="numpy")
def _around(bits, k, p):
    """Row ``p`` of set ``k`` grown by one cell in every direction (its 3x3
    neighbourhoods): rows p-1..p+1, each widened."""
    return _wide(bits[k, p - 1]) | _wide(bits[k, p]) | _wide(bits[k, p + 1])


@njit(cache=True, inline="always", error_model="numpy")
def _mark(bits, r, new):
    """Cells ``new`` of padded row ``r`` changed: the single and fog rules of
    rows r-1..r+1 run again, and the subset relations of every constraint
    within Chebyshev 3 (whose 7x7 window holds a changed cell)."""
    for q in range(r - 1, r + 2):
        bits[B_DIRTY, q] = 1
    w = _wide(_wide(_wide(new)))
    for q in range(r - 3, r + 4):
        bits[B_SUBSET, q] |= w


@njit(cache=True, inline="always", error_model="numpy")
def _unknown(bits, q):
    """Row ``q``'s cells neither revealed nor proven mines."""
    return bits[B_FULL, q] & ~(bits[B_REV, q] | bits[B_KNOWN, q])


@njit(cache=True, inline="always", error_model="numpy")
def _settled(bits, p):
    """The single rule on the constraints of padded row ``p``: the unknown
    cells of rows p-1, p, p+1, and the cells next to a constraint with no
    unknown mine around it (all its unknown neighbours are safe) and next to
    one with no unknown safe cell around it (all are mines)."""
    u0 = _unknown(bits, p - 1)
    u1 = _unknown(bits, p)
    u2 = _unknown(bits, p + 1)
    near_mine = _wide(u0 & bits[B_MINE, p - 1]) | _wide(u1 & bits[B_MINE, p]) | _wide(u2 & bits[B_MINE, p + 1])
    near_safe = _wide(u0 & ~bits[B_MINE, p - 1]) | _wide(u1 & ~bits[B_MINE, p]) | _wide(u2 & ~bits[B_MINE, p + 1])
    cons = bits[B_REV, p] & ~bits[B_FOG, p]
    return u0, u1, u2, _wide(cons & ~near_mine & near_safe), _wide(cons & ~near_safe & near_mine)


@njit(cache=True, error_model="numpy")
def _single_row(bits, p, has_fog):
    """The single rule for the constraints of padded row ``p`` and the fog
    rule for its cells; what changes is marked (``_mark``). (Safe and mine
    deductions touch disjoint cells, so the unknowns read first stay valid.)"""
    u0, u1, u2, to_safe, to_mine = _settled(bits, p)
    if to_safe | to_mine:
        for q, u in ((p - 1, u0), (p, u1), (p + 1, u2)):
            safe = to_safe & u & ~bits[B_MINE, q]
            mines = to_mine & u & bits[B_MINE, q]
            if safe | mines:
                bits[B_REV, q] |= safe
                bits[B_KNOWN, q] |= mines
                _mark(bits, q, safe | mines)
    if has_fog:
        new = bits[B_FOG, p] & ~bits[B_REV, p] & _around(bits, B_REV, p)
        if new:
            bits[B_REV, p] |= new
            _mark(bits, p, new)


@njit(cache=True, inline="always", error_model="numpy")
def _windows(bits, p, s):
    """The 7x7 windows around padded row ``p``, column ``s + PAD`` (bit
    ``7 * dy + dx``): unknown cells, the board's mines, constraints (revealed
    cells that show a number)."""
    unknown = uint64(0)
    mine_w = uint64(0)
    cons_w = uint64(0)
    for dy in range(7):
        q = p - PAD + dy
        at = uint64(7 * dy)
        rk = bits[B_REV, q]
        unknown |= (((bits[B_FULL, q] & ~(rk | bits[B_KNOWN, q])) >> s) & _SEVEN) << at
        mine_w |= ((bits[B_MINE, q] >> s) & _SEVEN) << at
        cons_w |= (((rk & ~bits[B_FOG, q]) >> s) & _SEVEN) << at
    return unknown, mine_w, cons_w


@njit(cache=True, inline="always", error_model="numpy")
def _subset_rule(unknown, mine_w, at, a_only, b_only):
    """The subset rule between the window's centre ``a`` and the constraint
    ``b`` at window bit ``at``: ``(D, 1)`` when U(a) is a proper subset of U(b)
    and D = U(b) - U(a) holds no mine (m_b - m_a == 0: all safe), ``(D, 2)``
    when it holds only mines (m_b - m_a == |D|), ``(0, 0)`` otherwise."""
    if unknown & a_only[at]:
        return uint64(0), 0  # U(a) is not inside U(b)
    d = unknown & b_only[at]
    if d == 0:
        return d, 0  # U(a) == U(b): nothing to learn
    if d & mine_w == 0:
        return d, 1
    if d & ~mine_w == 0:
        return d, 2
    return uint64(0), 0


@njit(cache=True, error_model="numpy")
def _subset_at(bits, p, x, wave, a_only, b_only, ring, around):
    """The subset rule between the constraint at (padded) ``x, p`` and each
    constraint within Chebyshev 2, in window-bit order (the offsets' row by
    row order; only the constraints are visited). In the closure (``wave`` False) each
    deduction applies at once and the windows are read again; in a wave the
    deductions go to the wave's marks and the board stays as it was at the
    wave's start. Returns whether anything was deduced."""
    deduced = False
    s = uint64(x - PAD)
    while True:
        unknown, mine_w, cons_w = _windows(bits, p, s)
        if unknown & around == 0:
            return deduced
        found = False
        todo = cons_w & ring
        while todo:
            low = todo & (~todo + _ONE)
            todo ^= low
            d, kind = _subset_rule(unknown, mine_w, trailing_zeros(low), a_only, b_only)
            if kind == 0:
                continue
            if wave:
                target = B_SAFE_MARK if kind == 1 else B_MINE_MARK
            else:
                target = B_REV if kind == 1 else B_KNOWN
            for dy in range(7):
                new = ((d >> uint64(7 * dy)) & _SEVEN) << s
                if new:
                    q = p - PAD + dy
                    bits[target, q] |= new
                    if not wave:
                        _mark(bits, q, new)
            found = True
            if not wave:
                break  # the windows changed: read them again
        deduced = deduced or found
        if wave or not found:
            return deduced


@njit(cache=True, error_model="numpy")
def _open_new(bits, H):
    """Chain from the cells in ``B_NEW`` (just opened): a zero opens its
    neighbours (fog never chains), fog next to anything opened opens (fog is
    known safe), until nothing more opens."""
    more = True
    while more:
        more = False
        for p in range(PAD, H + PAD):
            f0 = bits[B_NEW, p - 1]
            f1 = bits[B_NEW, p]
            f2 = bits[B_NEW, p + 1]
            zeros = _wide(f0 & bits[B_ZERO, p - 1]) | _wide(f1 & bits[B_ZERO, p]) | _wide(f2 & bits[B_ZERO, p + 1])
            near = _around(bits, B_NEW, p)
            bits[B_SAFE_MARK, p] = (zeros | (near & bits[B_FOG, p])) & _unknown(bits, p)
        for p in range(PAD, H + PAD):
            new = bits[B_SAFE_MARK, p]
            bits[B_NEW, p] = new
            bits[B_SAFE_MARK, p] = 0
            if new:
                bits[B_REV, p] |= new
                more = True


@njit(cache=True, error_model="numpy")
def waves_rows(bits, has_fog, H):
    """``difficulty.waves`` on rows filled by ``load_rows`` (in place):
    returns ``(solve_rounds, subset_steps)``, both counted up to the last
    wave that revealed a cell."""
    for p in range(PAD, H + PAD):
        bits[B_ZERO, p] = bits[B_FULL, p] & ~_around(bits, B_MINE, p) & ~bits[B_FOG, p]
        bits[B_SAFE_MARK, p] = 0
        bits[B_MINE_MARK, p] = 0
        bits[B_NEW, p] = 0
    if has_fog:  # fog next to the revealed cells opens before the first wave
        for p in range(PAD, H + PAD):
            bits[B_NEW, p] = bits[B_FOG, p] & ~bits[B_REV, p] & _around(bits, B_REV, p)
        for p in range(PAD, H + PAD):
            bits[B_REV, p] |= bits[B_NEW, p]
        _open_new(bits, H)
    rounds = 0
    subset = 0
    last_rounds = 0
    last_subset = 0
    while True:
        marked = False
        for p in range(PAD, H + PAD):  # a single wave: every constraint at once
            u0, u1, u2, to_safe, to_mine = _settled(bits, p)
            if to_safe | to_mine:
                marked = True
                for q, u in ((p - 1, u0), (p, u1), (p + 1, u2)):
                    bits[B_SAFE_MARK, q] |= to_safe & u & ~bits[B_MINE, q]
                    bits[B_MINE_MARK, q] |= to_mine & u & bits[B_MINE, q]
        by_subset = not marked
        if by_subset:  # nothing single: a subset wave, every pair at once
            for p in range(PAD, H + PAD):
                u = _unknown(bits, p - 1) | _unknown(bits, p) | _unknown(bits, p + 1)
                todo = bits[B_REV, p] & ~bits[B_FOG, p] & _wide(u)
                while todo:
                    low = todo & (~todo + _ONE)
                    todo ^= low
                    _subset_at(bits, p, int(trailing_zeros(low)), True, A_ONLY, B_ONLY, RING, AROUND)
            for p in range(PAD, H + PAD):
                if bits[B_SAFE_MARK, p] | bits[B_MINE_MARK, p]:
                    marked = True
                    break
        if not marked:
            return last_rounds, last_subset
        rounds += 1
        revealed_any = False
        for p in range(PAD, H + PAD):
            safe = bits[B_SAFE_MARK, p]
            mines = bits[B_MINE_MARK, p]
            if by_subset:
                subset += popcount(safe | mines)
            bits[B_KNOWN, p] |= mines
            bits[B_REV, p] |= safe
            bits[B_NEW, p] = safe
            bits[B_SAFE_MARK, p] = 0
            bits[B_MINE_MARK, p] = 0
            if safe:
                revealed_any = True
        if revealed_any:
            _open_new(bits, H)
            last_rounds = rounds
            last_subset = subset


@njit(cache=True, inline="always", error_model="numpy")
def row_of(cells, y, W):
    """Row ``y`` of a per-cell array as a padded word: bit ``x + PAD`` set
    where the cell is non-zero."""
    w = uint64(0)
    for x in range(W):
        w |= uint64(cells[y * W + x] != 0) << uint64(x + PAD)
    return w


@njit(cache=True, inline="always", error_model="numpy")
def cell_bit(c, W):
    """Cell ``c`` as its padded row and the bit that holds it there."""
    return c // W + PAD, _ONE << uint64(c % W + PAD)


@njit(cache=True, error_model="numpy")
def kth_cell(bits, k, row, H, W):
    """The cell of the ``k``-th set bit (from 0) of rows ``row`` of
    ``bits``, counting rows from the top and bits from the right: the k-th
    cell of the set in row-major order (-1: the set holds k cells or fewer)."""
    for p in range(PAD, H + PAD):
        v = bits[row, p]
        n = popcount(v)
        if k < n:
            for _ in range(k):
                v &= v - _ONE
            return (p - PAD) * W + int(trailing_zeros(v)) - PAD
        k -= n
    return -1


@njit(cache=True, error_model="numpy")
def load_rows(bits, rev, known, mines, fog, has_fog, W, H):
    """Fill ``bits`` from the cell arrays. Returns False (and the caller
    keeps to the cell-by-cell closure) when the rows cannot hold the board or
    a fact given is not true of it (a revealed mine, a proven safe cell)."""
    if W < 1 or W > MAX_WIDTH or bits.shape[0] < BITS_ROWS or bits.shape[1] < H + 2 * PAD:
        return False
    bits[:BITS_ROWS, :] = 0
    for y in range(H):
        p = y + PAD
        r = row_of(rev, y, W)
        k = row_of(known, y, W)
        m = row_of(mines, y, W)
        if (r & m) or (k & ~m):
            return False
        bits[B_REV, p] = r
        bits[B_KNOWN, p] = k
        bits[B_MINE, p] = m
        bits[B_FOG, p] = row_of(fog, y, W) if has_fog else uint64(0)
        bits[B_FULL, p] = ((_ONE << uint64(W)) - _ONE) << uint64(PAD)
        bits[B_SUBSET, p] = bits[B_FULL, p]
        bits[B_DIRTY, p] = 1
    return True


@njit(cache=True, error_model="numpy")
def close_rows(bits, has_fog, use_subset, H):
    """Grow ``B_REV`` and ``B_KNOWN`` to the least fixed point: single and
    fog rules row by row until no row is dirty, then the subset rule on the
    constraints whose surroundings changed; again until neither changes."""
    while True:
        pending = True
        while pending:
            for p in range(PAD, H + PAD):
                if bits[B_DIRTY, p]:
                    bits[B_DIRTY, p] = 0
                    _single_row(bits, p, has_fog)
            pending = False
            for p in range(PAD, H + PAD):
                if bits[B_DIRTY, p]:
                    pending = True  # a row changed after its turn in this pass
                    break
        if not use_subset:
            return
        changed = False
        for p in range(PAD, H + PAD):
            u = _unknown(bits, p - 1) | _unknown(bits, p) | _unknown(bits, p + 1)
            todo = bits[B_SUBSET, p] & bits[B_REV, p] & ~bits[B_FOG, p] & _wide(u)
            bits[B_SUBSET, p] = 0
            while todo:
                low = todo & (~todo + _ONE)
                todo ^= low
                x = int(trailing_zeros(low))
                if _subset_at(bits, p, x, False, A_ONLY, B_ONLY, RING, AROUND):
                    changed = True
        if not changed:
            return


@njit(cache=True, error_model="numpy")
def count_rows(bits, H):
    """``(revealed, revealed fog cells, proven mines)`` of the rows."""
    revealed = 0
    in_fog = 0
    known = 0
    for p in range(PAD, H + PAD):
        revealed += popcount(bits[B_REV, p])
        in_fog += popcount(bits[B_REV, p] & bits[B_FOG, p])
        known += popcount(bits[B_KNOWN, p])
    return revealed, in_fog, known


@njit(cache=True, error_model="numpy")
def store_rows(bits, rev, known, W, H):
    """Write the revealed and proven cells back to the cell arrays."""
    for y in range(H):
        r = bits[B_REV, y + PAD] >> uint64(PAD)
        k = bits[B_KNOWN, y + PAD] >> uint64(PAD)
        for x in range(W):
            c = y * W + x
            rev[c] = np.uint8((r >> uint64(x)) & _ONE)
            known[c] = np.uint8((k >> uint64(x)) & _ONE)
