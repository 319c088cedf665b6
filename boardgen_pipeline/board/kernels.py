"""Compiled twin of the generator's hot loop (issue 2 "the solver is the hot
loop"; SPEC 2.2-2.5).

One attempt = place N mines (partial Fisher-Yates over the candidate cells),
shave the ring, compute numbers, flood R0, check legality, and - only for a
legal attempt - run the ``single_subset`` closure. These kernels are numba
``njit`` functions over flat arrays; they implement exactly the rules of
``rng`` (SplitMix64, rejection sampling), ``placement`` and ``solver``, and
the tests hold them equal to those readable references on random boards and
on the golden vectors (the stream itself is in ``rng_kernels``). On a fog
row each attempt also runs seed 001's fog step (``fog_step``: on bit rows,
``fog_rows``, or cell by cell, ``place_fog``, both twins of
``fog.place_fog``; SPEC 5) and is measured with fog. ``run_batch`` runs many
boards of one row in one call (issue 16). Every array is sized from the
call's arguments and checked before use, so no input writes out of bounds
(issue 15).

The closure runs on bit rows (``closure_rows``, one machine word a row) on
boards up to 58 wide, and cell by cell (``closure_cells``) on wider ones:
the same fixed point (issue 16). In the cell closure constraint sets are
3x3 masks around their numbered cell (9 bits). For the subset rule two
constraints can only be nested when their centres are at Chebyshev
distance <= 2, so both fit in a 7x7 window centred on the smaller one: the
masks are widened to 49 bits there and compared with two ANDs.

Arguments by name (issue 29 "held by luck"): a kernel that reads the
workspace takes it as named tuples, never as a long positional list, and
reads every array by its field name (``s.mines``, ``g.nb``): ``Grid`` (the
board size's geometry tables), ``Scratch`` (the board an attempt builds and
the closure's scratch), ``FogScratch`` (the fog step's), ``Plan`` (the row's
numbers), ``FogRule`` and ``Attempts`` (one board's attempt log);
``BatchResult`` is the batch's output. Two arrays of one type side by side
in a call could be swapped without an error and compute other boards; a
field read by name cannot. Positional arguments are left to the primitives
over a layout's own arrays (``numbers_of``, ``flood``, ``unreachable_safe``:
a handful each, called with other arrays than the workspace's by
``difficulty`` and the tests) and to the small helpers inside one stage (the
fog step's window counts, the bit rows' internals over ``bits``). The tuples
are built once, field by field, by
:class:`~boardgen_pipeline.board.workspace.Workspace`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, uint64

from boardgen_pipeline.board.bitops import popcount
from boardgen_pipeline.board.closure_rows import close_rows, count_rows, load_rows, store_rows
from boardgen_pipeline.board.fog_rows import place_fog_rows, region_size, windows_around
from boardgen_pipeline.board.rng_kernels import below


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


class Grid(NamedTuple):
    """One board size and spawn side: the tables every kernel reads and none
    writes. ``cx, cy`` is the spawn centre, ``centre`` its cell."""

    width: int
    height: int
    cx: int
    cy: int
    centre: int
    spawn: np.ndarray  # int32 [spawn cells]: the spawn square, where R0 starts
    cand: np.ndarray  # int32 [W*H - spawn cells]: the cells a mine may be drawn on, in order
    nb: np.ndarray  # int32 [W*H, 8]: each cell's neighbours (-1 past the count)
    nbn: np.ndarray  # int32 [W*H]: how many neighbours each cell has
    widen: np.ndarray  # uint64 [512]: WIDEN
    partners: np.ndarray  # int8 [512, 24]: PARTNERS
    partner_count: np.ndarray  # int8 [512]: PARTNER_COUNT


class Scratch(NamedTuple):
    """The board an attempt builds and what the closure needs to measure it,
    one entry a cell unless said otherwise. After a passing attempt (or a
    replay, or a measure) the first five hold its board."""

    mines: np.ndarray  # uint8: the board's mines
    num: np.ndarray  # int32: every cell's number
    rev: np.ndarray  # uint8: revealed cells, R0 and then R∞
    known: np.ndarray  # uint8: cells proven mines
    fog: np.ndarray  # uint8: fog cells
    seen: np.ndarray  # uint8: the unreachable count's marks
    work: np.ndarray  # int32 [max(1, W*H)]: the candidates shuffled by the placement
    queue: np.ndarray  # int32: the flood's queue, then the closure's list of constraints waiting for the subset rule
    stack: np.ndarray  # int32: the closure's list of changed constraints
    fq: np.ndarray  # int32: the queue of a reveal inside the closure
    inq: np.ndarray  # uint8: the closure's flags (1 queued, 2 stale, 4 waiting for the subset rule)
    cmask: np.ndarray  # int64: cached constraint masks
    cm: np.ndarray  # int32: cached mines still to find
    ccnt: np.ndarray  # int32: cached unknown counts
    rows: np.ndarray  # uint64 [2 H]: the unreachable count's word rows
    bits: np.ndarray  # uint64 [FOG_BITS_ROWS, H + 2 PAD]: the closure's and the fog step's bit rows


class FogScratch(NamedTuple):
    """The fog step's arrays (seed 001; SPEC 5), one entry a cell unless said
    otherwise."""

    r0: np.ndarray  # uint8: R0 flooded through no fog, the fog step's and the fog budget's input
    allowed: np.ndarray  # uint8: cells fog may take
    wcount: np.ndarray  # int32 [max(1, (W-2)(H-2))]: fog cells in each 3x3 window
    comp: np.ndarray  # int32: component sizes of the free allowed cells
    buf: np.ndarray  # int32: candidate cells
    region: np.ndarray  # int32: the cells of the region being grown
    mark: np.ndarray  # int64: frontier stamps
    chain: np.ndarray  # uint8: Chain0 of the fog budget


class Plan(NamedTuple):
    """A row's numbers as the attempt loop reads them (SPEC 2.2-2.5)."""

    mines_target: int  # N
    shave: int  # Chebyshev radius shaved around the centre: side // 2 + shave_ring_radius
    min_safe: int
    r0_cap: int
    budget: int  # attempts at most
    target_num: int  # the inferability target as a fraction
    target_den: int


class FogRule(NamedTuple):
    """A row's fog (seed 001; SPEC 5): no fog when ``regions`` is 0."""

    regions: int
    aim: int  # round_half_up(ratio x W x H), before the 8 x mines cap


class Attempts(NamedTuple):
    """One board's attempt log, one row an attempt run."""

    state: np.ndarray  # uint64 [budget]: the stream state at each attempt's start (to replay it)
    log: np.ndarray  # int64 [budget, LOG_SIZE]: LOG_* columns
    summary: np.ndarray  # int64 [OUT_SIZE]: OUT_* columns


@njit(cache=True, error_model="numpy")
def place(st, draws, g, s, N, shave_radius):
    """Place-then-shave (SPEC 2.2) into ``s.mines``: N distinct cells of
    ``g.cand`` by partial Fisher-Yates, then drop those within Chebyshev
    ``shave_radius`` of the centre. Returns the number removed
    (``ring_removed``)."""
    cand = g.cand
    work = s.work
    mines = s.mines
    W = g.width
    cx = g.cx
    cy = g.cy
    nc = cand.shape[0]
    for i in range(nc):
        work[i] = cand[i]
    mines[:] = 0
    for i in range(N):
        j = i + below(st, draws, nc - i)
        t = work[i]
        work[i] = work[j]
        work[j] = t
    removed = 0
    for i in range(N):
        c = work[i]
        x = c % W
        y = c // W
        if abs(x - cx) <= shave_radius and abs(y - cy) <= shave_radius:
            removed += 1
        else:
            mines[c] = 1
    return removed


@njit(cache=True, error_model="numpy")
def numbers_from_placed(g, s, N):
    """Numbers of a freshly placed board by scattering from its mines (the
    first N cells of ``s.work`` that were not shaved): 8 increments a mine
    instead of 8 loads a cell. Returns |S|."""
    work = s.work
    mines = s.mines
    num = s.num
    nb = g.nb
    nbn = g.nbn
    num[:] = 0
    placed = 0
    for i in range(N):
        c = work[i]
        if mines[c] == 1:
            placed += 1
            for k in range(nbn[c]):
                num[nb[c, k]] += 1
    return mines.shape[0] - placed


@njit(cache=True, error_model="numpy")
def numbers_of(mines, nb, nbn, num):
    safe = 0
    for c in range(mines.shape[0]):
        n = 0
        for k in range(nbn[c]):
            n += mines[nb[c, k]]
        num[c] = n
        if mines[c] == 0:
            safe += 1
    return safe


@njit(cache=True, error_model="numpy")
def flood(start, ns, rev, num, fog, nb, nbn, queue):
    """Reveal ``start[:ns]`` and chain through zeros; fog never chains.
    Returns the count newly revealed."""
    qh = 0
    qt = 0
    added = 0
    for i in range(ns):
        c = start[i]
        if rev[c] == 0:
            rev[c] = 1
            added += 1
            if num[c] == 0 and fog[c] == 0:
                queue[qt] = c
                qt += 1
    while qh < qt:
        c = queue[qh]
        qh += 1
        for k in range(nbn[c]):
            n = nb[c, k]
            if rev[n] == 0:
                rev[n] = 1
                added += 1
                if num[n] == 0 and fog[n] == 0:
                    queue[qt] = n
                    qt += 1
    return added


@njit(cache=True, inline="always", error_model="numpy")
def flood_r0(g, s):
    """R0 into ``s.rev`` (cleared first) from ``s.num`` and ``s.fog``: the
    spawn square and its flood. Returns |R0|."""
    s.rev[:] = 0
    return flood(g.spawn, g.spawn.shape[0], s.rev, s.num, s.fog, g.nb, g.nbn, s.queue)


@njit(cache=True, error_model="numpy")
def unreachable_safe(mines, nb, nbn, centre, safe, seen, queue):
    """Safe cells not 8-connected through safe cells to ``centre`` (BFS)."""
    seen[:] = 0
    seen[centre] = 1
    queue[0] = centre
    qh = 0
    qt = 1
    while qh < qt:
        c = queue[qh]
        qh += 1
        for k in range(nbn[c]):
            n = nb[c, k]
            if mines[n] == 0 and seen[n] == 0:
                seen[n] = 1
                queue[qt] = n
                qt += 1
    return safe - qt


_ONE = uint64(1)


@njit(cache=True, error_model="numpy")
def unreachable_count(g, s, safe):
    """``unreachable_safe`` of ``s.mines`` from the spawn centre, on boards at
    most 64 wide with one machine word a row: the reached set grows row by
    row (a row takes what its own and the two adjacent rows reach, widened
    by one column, within its safe cells) in down and up sweeps until a
    sweep changes nothing. The same count as the BFS, a few word operations
    a row instead of 8 loads a cell."""
    W = g.width
    H = g.height
    mines = s.mines
    rows = s.rows
    if W > 64 or rows.shape[0] < 2 * H:
        return unreachable_safe(mines, g.nb, g.nbn, g.centre, safe, s.seen, s.queue)
    for y in range(H):
        m = uint64(0)
        for x in range(W):
            if mines[y * W + x] == 0:
                m |= _ONE << uint64(x)
        rows[y] = m
        rows[H + y] = 0
    rows[H + g.centre // W] = _ONE << uint64(g.centre % W)
    changed = True
    while changed:
        changed = False
        for step in range(2 * H):
            y = step if step < H else 2 * H - 1 - step
            src = rows[H + y]
            if y > 0:
                src |= rows[H + y - 1]
            if y < H - 1:
                src |= rows[H + y + 1]
            if src == 0:
                continue
            sm = rows[y]
            new = sm & (src | (src << _ONE) | (src >> _ONE))
            while True:
                nxt = sm & (new | (new << _ONE) | (new >> _ONE))
                if nxt == new:
                    break
                new = nxt
            if new != rows[H + y]:
                rows[H + y] = new
                changed = True
    reached = 0
    for y in range(H):
        reached += popcount(rows[H + y])
    return safe - reached


@njit(cache=True, inline="always", error_model="numpy")
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


@njit(cache=True, inline="always", error_model="numpy")
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
        sp = _touch(v, g, s, sp)
        chain = num[v] == 0 and fog[v] == 0
        for k in range(nbn[v]):
            n = nb[v, k]
            if rev[n] == 0 and (chain or fog[n] == 1):
                rev[n] = 1
                fq[qt] = n
                qt += 1
    return sp


@njit(cache=True, inline="always", error_model="numpy")
def _constraint(c, g, s):
    """``(mask, m, count)`` of numbered cell ``c``: its unknown neighbours as a
    3x3 mask, the mines still to find among them, and how many there are.
    On a board at least 3 wide a neighbour's row offset follows from its
    index offset alone (-1 below -1, +1 above +1), so the mask is read
    through the neighbour table without dividing by the width."""
    rev = s.rev
    known = s.known
    W = g.width
    H = g.height
    nb = g.nb
    mask = 0
    cnt = 0
    m = s.num[c]
    if W >= 3:
        for k in range(g.nbn[c]):
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


@njit(cache=True, inline="always", error_model="numpy")
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


@njit(cache=True, inline="always", error_model="numpy")
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
    sp = 0
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
                        sp = _reveal(n, g, s, sp)
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
            ma, m, cnt = _constraint(c, g, s)
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
def measure_into(g, s, use_subset):
    """Numbers, R0 and R∞ of the layout in ``s.mines`` and ``s.fog`` (R∞
    left in ``s.rev``, the proven mines in ``s.known``). Returns ``(safe,
    r0, revealed)``."""
    check_arrays(g, s)
    safe = numbers_of(s.mines, g.nb, g.nbn, s.num)
    s.known[:] = 0
    r0 = flood_r0(g, s)
    has_fog = False
    for c in range(s.fog.shape[0]):
        if s.fog[c]:
            has_fog = True
            break
    revealed, _, _, _ = closure(g, s, has_fog, use_subset, True)
    return safe, r0, revealed


# The legality gates in the order an attempt meets them (SPEC 2.4), cheapest
# first; each rejected attempt counts under the first one it fails. Free-open
# comes before the cap: a free-open board (R0 = S) nearly always exceeds the
# cap too, and "free open" is the more telling name for it.
GATE_ORDER = ("free_open", "r0_cap", "min_safe", "unreachable")


# run_board's summary array ``out``: counts of the run, then what the
# passing attempt measured (valid when OUT_PASSED is 1)
(OUT_RAN, OUT_PASSED, OUT_CAP, OUT_UNREACH, OUT_FREE, OUT_MINSAFE, OUT_KNOWN, OUT_REVEALED, OUT_SAFE, OUT_R0,
 OUT_REMOVED, OUT_UNREACHABLE, OUT_REVEALED_CORE, OUT_FOG, OUT_PLACED, OUT_UNPAID, OUT_PAID) = range(17)


OUT_SIZE = 17


# run_board's per-attempt log (one row an attempt; the stream state at the
# attempt's start is kept apart, in a uint64 array)
(LOG_DRAWS, LOG_REMOVED, LOG_MINES, LOG_SAFE, LOG_R0, LOG_UNREACH, LOG_REVEALED, LOG_REVEALED_CORE,
 LOG_FOG) = range(9)


LOG_SIZE = 9


@njit(cache=True, inline="always", error_model="numpy")
def _completes(c, W, H, wcount):
    """Would fogging ``c`` make some 3x3 window inside the board all fog?"""
    ww = W - 2
    wy0, wy1, wx0, wx1 = windows_around(c, W, H)
    for wy in range(wy0, wy1 + 1):
        for wx in range(wx0, wx1 + 1):
            if wcount[wy * ww + wx] == 8:
                return True
    return False


@njit(cache=True, inline="always", error_model="numpy")
def _window_add(c, W, H, wcount, step):
    ww = W - 2
    wy0, wy1, wx0, wx1 = windows_around(c, W, H)
    for wy in range(wy0, wy1 + 1):
        for wx in range(wx0, wx1 + 1):
            wcount[wy * ww + wx] += step


@njit(cache=True, error_model="numpy")
def place_fog(st, draws, g, s, f, rule):
    """The fog step of one attempt, exactly as ``fog.place_fog`` (the
    readable reference): allowed cells, region sizes, seeds where the free
    area can hold the region, growth through the sorted frontier, roll-back
    of a region that runs out of room, on the board of ``s.mines`` and
    ``s.num`` with ``f.r0`` marking R0 (flooded through no fog). Writes
    ``s.fog``; returns ``(fog cells, regions placed)``."""
    mines = s.mines
    num = s.num
    fog = s.fog
    r0 = f.r0
    allowed = f.allowed
    wcount = f.wcount
    comp = f.comp
    buf = f.buf
    region = f.region
    mark = f.mark
    nb = g.nb
    nbn = g.nbn
    W = g.width
    H = g.height
    region_count = rule.regions
    NC = W * H
    mine_count = 0
    for c in range(NC):
        mine_count += mines[c]
        allowed[c] = 1 if mines[c] == 0 and num[c] > 0 else 0
        fog[c] = 0
        mark[c] = 0
    for c in range(NC):
        if r0[c] == 1:
            allowed[c] = 0
            for k in range(nbn[c]):
                allowed[nb[c, k]] = 0
    wcount[:] = 0
    total = min(rule.aim, 8 * mine_count)
    nfog = 0
    placed = 0
    stamp = 0
    for i in range(region_count):
        size = region_size(total, region_count, i)
        if size == 0:
            continue
        # the size of every free allowed cell's 8-connected component
        comp[:] = 0
        for s in range(NC):
            if allowed[s] == 0 or fog[s] == 1 or comp[s] != 0:
                continue
            comp[s] = -1
            buf[0] = s
            qh = 0
            qt = 1
            while qh < qt:
                c = buf[qh]
                qh += 1
                for k in range(nbn[c]):
                    n = nb[c, k]
                    if allowed[n] == 1 and fog[n] == 0 and comp[n] == 0:
                        comp[n] = -1
                        buf[qt] = n
                        qt += 1
            for q in range(qt):
                comp[buf[q]] = qt
        ns = 0
        for c in range(NC):
            if allowed[c] == 1 and fog[c] == 0 and comp[c] >= size and not _completes(c, W, H, wcount):
                buf[ns] = c
                ns += 1
        if ns == 0 or nfog + size > 8 * mine_count:
            continue
        c = buf[below(st, draws, ns)]
        region[0] = c
        rl = 1
        fog[c] = 1
        nfog += 1
        _window_add(c, W, H, wcount, 1)
        while rl < size:
            stamp += 1
            nf = 0
            for r in range(rl):
                c = region[r]
                for k in range(nbn[c]):
                    n = nb[c, k]
                    if allowed[n] == 1 and fog[n] == 0 and mark[n] != stamp:
                        mark[n] = stamp
                        buf[nf] = n
                        nf += 1
            buf[:nf].sort()
            kept = 0
            for f in range(nf):
                if not _completes(buf[f], W, H, wcount):
                    buf[kept] = buf[f]
                    kept += 1
            if kept == 0:
                break
            c = buf[below(st, draws, kept)]
            region[rl] = c
            rl += 1
            fog[c] = 1
            nfog += 1
            _window_add(c, W, H, wcount, 1)
        if rl < size:
            # roll back: a region is placed whole or not at all
            for r in range(rl):
                fog[region[r]] = 0
                _window_add(region[r], W, H, wcount, -1)
            nfog -= rl
        else:
            placed += 1
    return nfog, placed


@njit(cache=True, error_model="numpy")
def fog_step(st, draws, g, s, f, rule):
    """The fog step of an attempt: on bit rows (``fog_rows``) when the board
    fits them, cell by cell (``place_fog``) otherwise - the same regions from
    the same draws. Returns ``(fog cells, regions placed)``."""
    nfog, placed = place_fog_rows(st, draws, g, s, f, rule)
    if nfog >= 0:
        return nfog, placed
    return place_fog(st, draws, g, s, f, rule)


@njit(cache=True, error_model="numpy")
def fog_budget(g, s, f):
    """Seed 001 F3 (``fog.fog_budget``) of the board in ``s`` with R0 in
    ``f.r0``: ``(|F - Chain0|, max(1, |S - Chain0|))`` where Chain0 (left in
    ``f.chain``) is R0, every safe zero and every safe neighbour of one."""
    mines = s.mines
    num = s.num
    fog = s.fog
    r0 = f.r0
    chain = f.chain
    nb = g.nb
    nbn = g.nbn
    NC = mines.shape[0]
    for c in range(NC):
        chain[c] = r0[c]
    for c in range(NC):
        if mines[c] == 0 and num[c] == 0:
            chain[c] = 1
            for k in range(nbn[c]):
                n = nb[c, k]
                if mines[n] == 0:
                    chain[n] = 1
    unpaid = 0
    paid = 0
    for c in range(NC):
        if chain[c] == 0:
            if fog[c] == 1:
                unpaid += 1
            if mines[c] == 0:
                paid += 1
    return unpaid, max(1, paid)


@njit(cache=True, error_model="numpy")
def check_arrays(g, s):
    """Refuse a workspace whose tables or scratch do not fit its board
    (issue 15: no input may make a kernel write out of bounds)."""
    W = g.width
    H = g.height
    NC = W * H
    if W < 1 or H < 1:
        raise ValueError("board width and height must be >= 1")
    if (g.nb.shape[0] != NC or g.nb.shape[1] != 8 or g.nbn.shape[0] != NC
            or g.cand.shape[0] + g.spawn.shape[0] != NC):
        raise ValueError("workspace tables do not match the board size")
    if not (0 <= g.cx < W and 0 <= g.cy < H and g.centre == g.cy * W + g.cx):
        raise ValueError("the spawn centre must lie on the board")
    for i in range(g.spawn.shape[0]):
        if g.spawn[i] < 0 or g.spawn[i] >= NC:
            raise ValueError("spawn and candidate cells must lie on the board")
    for i in range(g.cand.shape[0]):
        if g.cand[i] < 0 or g.cand[i] >= NC:
            raise ValueError("spawn and candidate cells must lie on the board")
    if g.widen.shape[0] != 512 or g.partners.shape[0] != 512 or g.partners.shape[1] != 24 \
            or g.partner_count.shape[0] != 512:
        raise ValueError("the window tables must cover every 3x3 mask")
    for a in (s.mines, s.rev, s.known, s.fog, s.seen, s.inq):
        if a.shape[0] != NC:
            raise ValueError("workspace arrays do not match the board size")
    for b in (s.num, s.queue, s.stack, s.fq, s.cm, s.ccnt):
        if b.shape[0] != NC:
            raise ValueError("workspace arrays do not match the board size")
    if s.cmask.shape[0] != NC or s.work.shape[0] < g.cand.shape[0]:
        raise ValueError("workspace arrays do not match the board size")


@njit(cache=True, error_model="numpy")
def check_fog_arrays(g, f):
    """``check_arrays`` for the fog step's scratch."""
    W = g.width
    H = g.height
    NC = W * H
    for a in (f.r0, f.allowed, f.chain):
        if a.shape[0] != NC:
            raise ValueError("fog arrays do not match the board size")
    for b in (f.comp, f.buf, f.region):
        if b.shape[0] != NC:
            raise ValueError("fog arrays do not match the board size")
    if f.mark.shape[0] != NC or f.wcount.shape[0] < max(1, (W - 2) * (H - 2)):
        raise ValueError("fog arrays do not match the board size")


@njit(cache=True, error_model="numpy")
def check_board_arrays(g, plan, s, f):
    """``check_arrays`` and ``check_fog_arrays``, and the plan's mines fit
    the candidate cells."""
    check_arrays(g, s)
    check_fog_arrays(g, f)
    if plan.mines_target < 0 or plan.mines_target > g.cand.shape[0]:
        raise ValueError("mine count must lie in [0, candidate cells]")


@njit(cache=True, error_model="numpy")
def check_sizes(g, plan, s, f, attempts):
    """Refuse a call whose arguments do not fit its arrays (issue 15: no
    input may make a kernel write out of bounds)."""
    check_board_arrays(g, plan, s, f)
    if (plan.budget < 1 or plan.budget > attempts.state.shape[0] or plan.budget > attempts.log.shape[0]
            or attempts.log.shape[1] != LOG_SIZE or attempts.summary.shape[0] != OUT_SIZE):
        raise ValueError("attempt budget must be >= 1 and fit the attempt log")


@njit(cache=True, error_model="numpy")
def run_board(st, draws, g, plan, fog_rule, s, f, attempts):
    """``attempt_loop`` after ``check_sizes``."""
    check_sizes(g, plan, s, f, attempts)
    attempt_loop(st, draws, g, plan, fog_rule, s, f, attempts)


@njit(cache=True, error_model="numpy")
def attempt_loop(st, draws, g, plan, fog_rule, s, f, attempts):
    """The attempt loop of SPEC 2.5 (and of SPEC 5 on a fog row) up to the
    first passing attempt, on arrays ``check_sizes`` accepted.

    Per attempt k the log row (``attempts.log[k]``) records the draw count
    at its start (the stream state goes to ``attempts.state[k]``, so any
    attempt can be replayed), ring_removed, actual mines, |S|, |R0|,
    unreachable safe cells, |R∞| and |R∞ - F| (-1 when illegal: legality is
    checked before quality and an illegal attempt is never measured) and
    |F|. ``attempts.summary`` gets the attempts run, whether the last one
    passed, the rejection counts per gate and what the passing attempt
    measured; ``s`` keeps its board (``mines``, ``fog``, ``num``, ``rev`` =
    R∞, ``known``).

    Without fog (``fog_rule.regions == 0``) an attempt draws only its mines
    and the unreachable count is computed only when the cheaper gates pass
    (-1 otherwise). With fog every attempt draws its fog from the same
    stream right after its mines, whatever its legality (seed 001: fog is a
    step of every attempt), and every gate is evaluated."""
    NC = g.width * g.height
    N = plan.mines_target
    regions = fog_rule.regions
    a_state = attempts.state
    log = attempts.log
    out = attempts.summary
    rev = s.rev
    fog = s.fog
    out[:] = 0
    for k in range(plan.budget):
        a_state[k] = st[0]
        log[k, LOG_DRAWS] = draws[0]
        removed = place(st, draws, g, s, N, plan.shave)
        safe = numbers_from_placed(g, s, N)
        s.known[:] = 0
        fog[:] = 0
        r0 = flood_r0(g, s)
        log[k, LOG_REMOVED] = removed
        log[k, LOG_MINES] = N - removed
        log[k, LOG_SAFE] = safe
        log[k, LOG_R0] = r0
        log[k, LOG_UNREACH] = -1  # not computed: an earlier gate already rejected the attempt
        log[k, LOG_REVEALED] = -1
        log[k, LOG_REVEALED_CORE] = -1
        log[k, LOG_FOG] = 0
        out[OUT_RAN] = k + 1
        unreach = -1
        nfog = 0
        placed = 0
        if regions > 0:
            unreach = unreachable_count(g, s, safe)
            log[k, LOG_UNREACH] = unreach
            for c in range(NC):
                f.r0[c] = rev[c]
            nfog, placed = fog_step(st, draws, g, s, f, fog_rule)
            log[k, LOG_FOG] = nfog
        # legality gates, cheapest first; an illegal attempt is counted under
        # the first gate it fails (GATE_ORDER), and never scored
        if r0 == safe:
            out[OUT_FREE] += 1
            continue
        if r0 > plan.r0_cap:
            out[OUT_CAP] += 1
            continue
        if safe < plan.min_safe:
            out[OUT_MINSAFE] += 1
            continue
        if regions == 0:
            unreach = unreachable_count(g, s, safe)
            log[k, LOG_UNREACH] = unreach
        if unreach > 0:
            out[OUT_UNREACH] += 1
            continue
        # R∞ grows from R0 as flooded above: fog cells are never zeros (fog
        # hides a number), so flooding through fog would give the same R0
        revealed, in_fog, nk, held = closure(g, s, nfog > 0, True, False)
        core = revealed - in_fog
        log[k, LOG_REVEALED] = revealed
        log[k, LOG_REVEALED_CORE] = core
        # seed 001 F5: both inferability and its core meet the target
        if (np.int64(revealed) * plan.target_den >= plan.target_num * np.int64(max(1, safe))
                and np.int64(core) * plan.target_den >= plan.target_num * np.int64(max(1, safe - nfog))):
            out[OUT_PASSED] = 1
            if held:
                store_rows(s.bits, rev, s.known, g.width, g.height)  # the workspace keeps the passing board's R∞
            out[OUT_KNOWN] = nk
            out[OUT_REVEALED] = revealed
            out[OUT_SAFE] = safe
            out[OUT_R0] = r0
            out[OUT_REMOVED] = removed
            out[OUT_UNREACHABLE] = unreach
            out[OUT_REVEALED_CORE] = core
            out[OUT_FOG] = nfog
            out[OUT_PLACED] = placed
            if regions > 0:
                out[OUT_UNPAID], out[OUT_PAID] = fog_budget(g, s, f)
            return


@njit(cache=True, error_model="numpy")
def replay_board(st, draws, g, plan, fog_rule, s, f, out):
    """One attempt from the stream state in ``st``, measured whatever its
    legality (the chosen attempt of a ``best_legal`` or ``least_bad`` exit):
    mines, fog when the row has it, then R∞ with fog. Fills ``out`` like a
    passing ``run_board``; only the plan's mines and shave are read."""
    check_board_arrays(g, plan, s, f)
    if out.shape[0] != OUT_SIZE:
        raise ValueError("the summary must hold OUT_SIZE entries")
    NC = g.width * g.height
    out[:] = 0
    removed = place(st, draws, g, s, plan.mines_target, plan.shave)
    numbers_from_placed(g, s, plan.mines_target)
    s.fog[:] = 0
    flood_r0(g, s)
    for c in range(NC):
        f.r0[c] = s.rev[c]
    nfog = 0
    placed = 0
    if fog_rule.regions > 0:
        nfog, placed = fog_step(st, draws, g, s, f, fog_rule)
    safe, r0, revealed = measure_into(g, s, True)
    in_fog = 0
    nk = 0
    for c in range(NC):
        in_fog += s.rev[c] & s.fog[c]
        nk += s.known[c]
    out[OUT_KNOWN] = nk
    out[OUT_REVEALED] = revealed
    out[OUT_SAFE] = safe
    out[OUT_R0] = r0
    out[OUT_REMOVED] = removed
    out[OUT_REVEALED_CORE] = revealed - in_fog
    out[OUT_FOG] = nfog
    out[OUT_PLACED] = placed
    if fog_rule.regions > 0:
        out[OUT_UNPAID], out[OUT_PAID] = fog_budget(g, s, f)


@njit(cache=True, error_model="numpy")
def run_batch(states, g, plan, fog_rule, s, f, res):
    """``run_board`` for every stream state of ``states`` (draw counts start
    at 0): one call for a row's whole batch, so the per-call cost of a
    kernel is paid once. ``res`` is a :class:`BatchResult`: board b's
    summary goes to ``res.summary[b]`` (its last column: the draws taken),
    the stream state after it to ``res.state[b]``, its attempt log to
    ``res.attempt_state[b]`` and ``res.log[b]`` (so the caller picks the
    exit of a board that did not pass without running it again) and, when
    it passed, its mines and fog to ``res.mines[b]`` and ``res.fog[b]``."""
    B = states.shape[0]
    NC = g.width * g.height
    if (res.summary.shape[0] < B or res.state.shape[0] < B or res.mines.shape[0] < B or res.fog.shape[0] < B
            or res.attempt_state.shape[0] < B or res.log.shape[0] < B or res.summary.shape[1] != OUT_SIZE + 1):
        raise ValueError("batch output arrays do not fit the batch")
    if res.mines.shape[1] != NC or res.fog.shape[1] != NC:
        raise ValueError("batch output arrays do not match the board size")
    st = np.zeros(1, np.uint64)
    draws = np.zeros(1, np.int64)
    out = np.zeros(OUT_SIZE, np.int64)
    if B > 0:  # every board's log has the first one's shape: the arrays are checked once
        check_sizes(g, plan, s, f, Attempts(res.attempt_state[0], res.log[0], out))
    for b in range(B):
        st[0] = states[b]
        draws[0] = 0
        attempt_loop(st, draws, g, plan, fog_rule, s, f, Attempts(res.attempt_state[b], res.log[b], out))
        for i in range(OUT_SIZE):
            res.summary[b, i] = out[i]
        res.state[b] = st[0]
        res.summary[b, OUT_SIZE] = draws[0]
        if out[OUT_PASSED] == 1:
            for c in range(NC):
                res.mines[b, c] = s.mines[c]
                res.fog[b, c] = s.fog[c]


class AttemptLog(NamedTuple):
    """What ``run_board`` recorded, one entry per attempt run (arrays are
    views of the workspace's, valid until its next call)."""

    ran: int
    passed: bool
    rejected: dict  # attempts rejected per gate, under their first failed gate
    known: int  # mines the solver proved on the last attempt (when it passed)
    state: np.ndarray  # stream state at the attempt's start (to replay it)
    removed: np.ndarray
    mines: np.ndarray
    safe: np.ndarray
    r0: np.ndarray
    unreachable: np.ndarray  # -1: not computed, an earlier gate rejected the attempt
    revealed: np.ndarray  # -1: illegal, never scored
    revealed_core: np.ndarray  # |R∞ - F|; -1: illegal
    fog: np.ndarray  # |F| of the attempt (0 on a row without fog)
    summary: np.ndarray  # the kernel's ``out`` (OUT_*): what the passing attempt measured


class BatchResult(NamedTuple):
    """What ``run_batch`` recorded for a batch of stream states (arrays are
    views of the workspace's, valid until its next call)."""

    summary: np.ndarray  # [boards, OUT_SIZE + 1]: OUT_* columns, then the draws taken
    state: np.ndarray  # stream state after each board
    mines: np.ndarray  # [boards, cells]: the passing attempt's mines (rows of boards that passed)
    fog: np.ndarray  # [boards, cells]: its fog
    attempt_state: np.ndarray  # [boards, budget]: stream state at each attempt's start
    log: np.ndarray  # [boards, budget, LOG_SIZE]: each board's attempt log

    def attempts(self, b: int) -> AttemptLog:
        """Board ``b``'s attempt log, as ``Workspace.run_attempts`` gives it."""
        return attempt_log(self.summary[b, :OUT_SIZE], self.attempt_state[b], self.log[b])


def attempt_log(summary: np.ndarray, state: np.ndarray, log: np.ndarray) -> AttemptLog:
    """The :class:`AttemptLog` of one board from its summary (OUT_*), the
    stream state at each attempt's start and its log rows (LOG_*), cut to the
    attempts run."""
    ran = int(summary[OUT_RAN])
    lg = log[:ran]
    rejected = {"r0_cap_rejected": int(summary[OUT_CAP]), "unreachable_rejected": int(summary[OUT_UNREACH]),
                "free_open_rejected": int(summary[OUT_FREE]), "min_safe_rejected": int(summary[OUT_MINSAFE])}
    return AttemptLog(ran, bool(summary[OUT_PASSED]), rejected, int(summary[OUT_KNOWN]), state[:ran],
                      lg[:, LOG_REMOVED], lg[:, LOG_MINES], lg[:, LOG_SAFE], lg[:, LOG_R0], lg[:, LOG_UNREACH],
                      lg[:, LOG_REVEALED], lg[:, LOG_REVEALED_CORE], lg[:, LOG_FOG], summary)


MAX_SIDE = 1024  # widest board the workspace accepts (a 128x128 benchmark board is well inside)


def check_board(width: int, height: int, spawn_side: int, mines: int | None = None, budget: int | None = None) -> None:
    """ValueError unless the kernels can run this board: the spawn square
    fits, the mines fit the candidate cells, the budget is at least one
    attempt (issue 15: refused before any kernel is called)."""
    for name, v in (("width", width), ("height", height), ("spawn side", spawn_side)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise ValueError(f"board {name} must be an integer, got {v!r}")
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise ValueError(f"board size {width}x{height} is outside [1, {MAX_SIDE}] on a side")
    if spawn_side < 1 or spawn_side % 2 == 0 or spawn_side > min(width, height):
        raise ValueError(f"spawn side {spawn_side} must be odd, >= 1 and fit a {width}x{height} board")
    free = width * height - spawn_side**2
    if mines is not None and not 0 <= mines <= free:
        raise ValueError(f"{mines} mines do not fit the {free} cells outside the spawn square of a "
                         f"{width}x{height} board")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1):
        raise ValueError(f"attempt budget must be an integer >= 1, got {budget!r}")
