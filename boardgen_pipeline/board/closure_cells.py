"""The ``single_subset`` closure, compiled, one per board shape (SPEC 2.3;
seed 001 F1 for fog): ``closure`` runs it on bit rows (``closure_rows``, one
machine word a row) on boards up to 58 wide and cell by cell
(``closure_cells``) on wider ones - the same fixed point, which
``solver.closures`` (the readable reference) defines.

In the cell closure constraint sets are 3x3 masks around their numbered
cell (9 bits). For the subset rule two constraints can only be nested when
their centres are at Chebyshev distance <= 2, so both fit in a 7x7 window
centred on the smaller one: the masks are widened to 49 bits there and
compared with two ANDs.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from boardgen_pipeline.board.closure_rows import close_rows, count_rows, load_rows, store_rows
from boardgen_pipeline.board.kernel_args import Grid, Scratch


def _widen_table():
    """9-bit 3x3 neighbourhood mask -> 49-bit mask in a 7x7 window whose
    centre (3,3) is the constraint's cell."""
    out = np.zeros(512, dtype=np.uint64)
    for m in range(512):
        w = 0
        for b in range(9):
            if m >> b & 1:
                dx, dy = b % 3 - 1, b // 3 - 1
                w |= 1 << ((dy + 3) * 7 + (dx + 3))
        out[m] = w
    return out


WIDEN = _widen_table()


def _partner_table():
    """For a 9-bit neighbourhood mask: the offsets (ox, oy) of every centre
    within Chebyshev 1 of one of its cells, i.e. every numbered cell whose
    constraint can share a cell with it (encoded (ox+2) + 5*(oy+2)). Subset
    partners are only ever among these."""
    offs = np.zeros((512, 24), dtype=np.int8)
    count = np.zeros(512, dtype=np.int8)
    for m in range(512):
        seen = set()
        for b in range(9):
            if m >> b & 1:
                cx, cy = b % 3 - 1, b // 3 - 1
                for oy in range(cy - 1, cy + 2):
                    for ox in range(cx - 1, cx + 2):
                        if (ox, oy) != (0, 0):
                            seen.add((oy, ox))
        for i, (oy, ox) in enumerate(sorted(seen)):
            offs[m, i] = (ox + 2) + 5 * (oy + 2)
        count[m] = len(seen)
    return offs, count


PARTNERS, PARTNER_COUNT = _partner_table()
# read-only, as the kernels see them when they read them as globals: one compiled type of the
# tables whether a caller passes them or a kernel reads them (closure_cells_of)
for _table in (WIDEN, PARTNERS, PARTNER_COUNT):
    _table.flags.writeable = False


@njit(cache=True, error_model="numpy")
def _touch(c, g, s, sp):
    """Every revealed numbered cell within distance 1 of ``c`` (and ``c``
    itself) has a changed constraint: mark it stale (bit 2) and queue it
    (bit 1) unless it is queued already. (Read through the neighbour table:
    no division by the width on the closure's hottest path.)"""
    rev = s.rev
    num = s.num
    fog = s.fog
    inq = s.inq
    stack = s.stack
    nb = g.nb
    if rev[c] == 1 and num[c] > 0 and fog[c] == 0:
        if inq[c] & 1 == 0:
            stack[sp] = c
            sp += 1
        inq[c] |= 3
    for k in range(g.nbn[c]):
        n = nb[c, k]
        if rev[n] == 1 and num[n] > 0 and fog[n] == 0:
            if inq[n] & 1 == 0:
                stack[sp] = n
                sp += 1
            inq[n] |= 3
    return sp


@njit(cache=True, error_model="numpy")
def _reveal(c, g, s, sp):
    """Open a cell proven safe: chain through zeros (fog never chains), open
    fog cells next to anything opened (fog is known safe), queue the
    constraints that changed."""
    rev = s.rev
    num = s.num
    fog = s.fog
    fq = s.fq
    nb = g.nb
    nbn = g.nbn
    if rev[c] == 1:
        return sp
    rev[c] = 1
    fq[0] = c
    qh = 0
    qt = 1
    while qh < qt:
        v = fq[qh]
        qh += 1
        sp = _touch(np.int64(v), g, s, sp)
        chain = num[v] == 0 and fog[v] == 0
        for k in range(nbn[v]):
            n = nb[v, k]
            if rev[n] == 0 and (chain or fog[n] == 1):
                rev[n] = 1
                fq[qt] = n
                qt += 1
    return sp


@njit(cache=True, inline="always", error_model="numpy")
def constraint_at(c, rev, known, num, nb, nbn, W, H):
    """``(mask, m, count)`` of numbered cell ``c``: its unknown neighbours as a
    3x3 mask, the mines still to find among them, and how many there are.
    On a board at least 3 wide a neighbour's row offset follows from its
    index offset alone (-1 below -1, +1 above +1), so the mask is read
    through the neighbour table without dividing by the width."""
    mask = 0
    cnt = 0
    m = num[c]
    if W >= 3:
        for k in range(nbn[c]):
            n = nb[c, k]
            if known[n] == 1:
                m -= 1
            elif rev[n] == 0:
                d = n - c
                dy = 1 if d > 1 else (-1 if d < -1 else 0)
                mask |= 1 << ((dy + 1) * 3 + (d - dy * W) + 1)
                cnt += 1
        return mask, m, cnt
    x = c % W
    y = c // W
    for dy in range(-1, 2):
        yy = y + dy
        if yy < 0 or yy >= H:
            continue
        for dx in range(-1, 2):
            xx = x + dx
            if (dx == 0 and dy == 0) or xx < 0 or xx >= W:
                continue
            n = yy * W + xx
            if known[n] == 1:
                m -= 1
            elif rev[n] == 0:
                mask |= 1 << ((dy + 1) * 3 + (dx + 1))
                cnt += 1
    return mask, m, cnt


@njit(cache=True, error_model="numpy")
def _constraint(c, g, s):
    """``constraint_at`` on the workspace's board."""
    return constraint_at(c, s.rev, s.known, s.num, g.nb, g.nbn, g.width, g.height)


@njit(cache=True, error_model="numpy")
def _apply(diff, safe, x, y, g, s, sp):
    """Apply a deduction to the cells of a 49-bit window mask centred on
    (x, y): all safe (``safe``) or all mines."""
    W = g.width
    known = s.known
    for b in range(49):
        if (diff >> uint64(b)) & uint64(1):
            n = (y + b // 7 - 3) * W + (x + b % 7 - 3)
            if safe:
                sp = _reveal(n, g, s, sp)
            elif known[n] == 0:
                known[n] = 1
                sp = _touch(n, g, s, sp)
    return sp


@njit(cache=True, error_model="numpy")
def _subset_scan(c, ma, m, cnt, g, s, sp):
    """The subset rule between constraint ``c`` and every constraint that
    shares a cell with it, in both directions."""
    W = g.width
    H = g.height
    rev = s.rev
    num = s.num
    fog = s.fog
    inq = s.inq
    cmask = s.cmask
    cm = s.cm
    ccnt = s.ccnt
    widen = g.widen
    partners = g.partners
    x = c % W
    y = c // W
    wa = widen[ma]
    for k in range(g.partner_count[ma]):
        code = partners[ma, k]
        ox = code % 5 - 2
        oy = code // 5 - 2
        xx = x + ox
        yy = y + oy
        if xx < 0 or xx >= W or yy < 0 or yy >= H:
            continue
        b = yy * W + xx
        if rev[b] == 0 or num[b] == 0 or fog[b] == 1:
            continue
        # the constraint of b, recomputed only when stale (written out here:
        # numba's inlining of a helper returning it cost ~0.2 µs a call)
        if inq[b] & 2:
            mb, m2, cnt2 = _constraint(b, g, s)
            cmask[b] = mb
            cm[b] = m2
            ccnt[b] = cnt2
            inq[b] &= 1
        else:
            mb = cmask[b]
            m2 = cm[b]
            cnt2 = ccnt[b]
        if cnt2 == 0 or cnt2 == cnt:
            continue  # equal sizes: neither can be a proper subset
        sh = oy * 7 + ox
        wb = widen[mb]
        if sh >= 0:
            wb = wb << uint64(sh)
        else:
            wb = wb >> uint64(-sh)
        if cnt < cnt2 and (wa & ~wb) == 0:
            dm = m2 - m  # A inside B: B - A holds m_B - m_A mines
            if dm == 0 or dm == cnt2 - cnt:
                sp = _apply(wb & ~wa, dm == 0, x, y, g, s, sp)
        elif cnt2 < cnt and (wb & ~wa) == 0:
            dm = m - m2  # B inside A
            if dm == 0 or dm == cnt - cnt2:
                sp = _apply(wa & ~wb, dm == 0, x, y, g, s, sp)
    return sp


@njit(cache=True, error_model="numpy")
def closure_cells(g, s, has_fog, use_subset):
    """Grow ``s.rev`` (revealed) and ``s.known`` (proven mines) to the least
    fixed point of chain + single (+ subset) + fog meta-knowledge.

    A worklist of numbered cells whose constraint may have changed: a cell is
    queued when a neighbour is opened or proven a mine. Deductions apply at
    once; every fact used is true of the board, so applying them early never
    changes the fixed point (seed 001 F1 note 5: the closure is order-free).
    The single rule drains first; a constraint it cannot settle waits in a
    second list (``s.queue``, free once R0 is flooded) for the (dearer)
    subset scan, which runs only when no single deduction is left, so a
    constraint is not scanned again and again while a cascade is still
    changing it. Flags in ``s.inq``: 1 queued, 2 stale cache, 4 waiting for
    the subset scan. The loop ends when both lists are empty: every
    constraint has had both rules applied since its last change."""
    rev = s.rev
    known = s.known
    num = s.num
    fog = s.fog
    inq = s.inq
    stack = s.stack
    pend = s.queue
    cmask = s.cmask
    cm = s.cm
    ccnt = s.ccnt
    nb = g.nb
    nbn = g.nbn
    W = g.width
    NC = W * g.height
    sp = np.int64(0)  # not a literal 0: the helpers compile for one type of ``sp``
    pp = 0
    for c in range(NC):
        # every revealed numbered cell starts queued, every cache stale
        if rev[c] == 1 and num[c] > 0 and fog[c] == 0:
            inq[c] = 3
            stack[sp] = c
            sp += 1
        else:
            inq[c] = 2
    if has_fog:
        for c in range(NC):
            if rev[c] == 1:
                for k in range(nbn[c]):
                    n = nb[c, k]
                    if fog[n] == 1 and rev[n] == 0:
                        sp = _reveal(np.int64(n), g, s, sp)
    while sp > 0 or pp > 0:
        if sp > 0:
            sp -= 1
            c = stack[sp]
            inq[c] &= 6
            single_only = True
        else:
            pp -= 1
            c = pend[pp]
            inq[c] &= 3
            if inq[c] & 1:
                continue  # changed again: it is back in the first list
            single_only = False
        if inq[c] & 2:  # the cached constraint is stale
            ma, m, cnt = _constraint(np.int64(c), g, s)
            cmask[c] = ma
            cm[c] = m
            ccnt[c] = cnt
            inq[c] &= 1
        else:
            ma = cmask[c]
            m = cm[c]
            cnt = ccnt[c]
        if cnt == 0:
            continue
        if m == 0 or m == cnt:
            x = c % W
            y = c // W
            for b in range(9):
                if ma >> b & 1:
                    n = (y + b // 3 - 1) * W + (x + b % 3 - 1)
                    if m == 0:
                        sp = _reveal(n, g, s, sp)
                    elif known[n] == 0:
                        known[n] = 1
                        sp = _touch(n, g, s, sp)
            continue
        if not use_subset:
            continue
        if single_only:
            if inq[c] & 4 == 0:
                inq[c] |= 4
                pend[pp] = c
                pp += 1
            continue
        sp = _subset_scan(c, ma, m, cnt, g, s, sp)


@njit(cache=True, error_model="numpy")
def closure(g, s, has_fog, use_subset, store):
    """Grow ``s.rev`` and ``s.known`` to the closure's least fixed point (R∞
    and the proven mines) of the board in ``s.mines``, ``s.num`` and
    ``s.fog``: on bit rows (``closure_rows``) when the board fits them, cell
    by cell (``closure_cells``) otherwise - the same fixed point either way.
    Returns ``(|R∞|, |R∞ ∩ F|, proven mines, held)``; ``held`` says the
    fixed point is still only in ``s.bits`` (``store`` False: an attempt
    that fails is counted, never looked at again) and ``store_rows`` writes
    it to ``s.rev`` and ``s.known``."""
    W = g.width
    H = g.height
    rev = s.rev
    known = s.known
    fog = s.fog
    bits = s.bits
    if load_rows(bits, rev, known, s.mines, fog, has_fog, W, H):
        close_rows(bits, has_fog, use_subset, H)
        if store:
            store_rows(bits, rev, known, W, H)
        revealed, in_fog, nk = count_rows(bits, H)
        return revealed, in_fog, nk, not store
    closure_cells(g, s, has_fog, use_subset)
    revealed = 0
    in_fog = 0
    nk = 0
    for c in range(W * H):
        revealed += rev[c]
        in_fog += rev[c] & fog[c]
        nk += known[c]
    return revealed, in_fog, nk, False


@njit(cache=True, error_model="numpy")
def closure_cells_of(rev, known, num, fog, mines, has_fog, W, H, nb, nbn):
    """``closure_cells`` on a board's own arrays, its scratch made here: the
    wide boards' closure for the callers that hold no workspace (complete
    logic of the difficulty figures, the perfect player), so that every
    caller runs the one compiled closure of its board shape."""
    nc = W * H
    none = np.empty(0, np.int32)
    g = Grid(W, H, 0, 0, 0, none, none, nb, nbn, WIDEN, PARTNERS, PARTNER_COUNT)
    s = Scratch(mines, num, rev, known, fog, np.zeros(nc, np.uint8), np.zeros(max(1, nc), np.int32),
                np.zeros(nc, np.int32), np.zeros(nc, np.int32), np.zeros(nc, np.int32), np.zeros(nc, np.uint8),
                np.zeros(nc, np.int64), np.zeros(nc, np.int32), np.full(nc, -1, np.int32), np.zeros(0, np.uint64),
                np.zeros((1, 1), np.uint64))
    closure_cells(g, s, has_fog, True)
