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
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import numpy as np
from numba import njit, uint64

from boardgen_pipeline.board.closure_rows import PAD, _popcount, close_rows, count_rows, load_rows, store_rows
from boardgen_pipeline.board.fog_rows import FOG_BITS_ROWS, place_fog_rows, region_size, windows_around
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


@njit(cache=True, error_model="numpy")
def place(st, draws, cand, work, mines, N, W, cx, cy, shave_radius):
    """Place-then-shave (SPEC 2.2): N distinct cells of ``cand`` by partial
    Fisher-Yates, then drop those within Chebyshev ``shave_radius`` of the
    centre. Returns the number removed (``ring_removed``)."""
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
def numbers_from_placed(work, N, mines, nb, nbn, num):
    """Numbers of a freshly placed board by scattering from its mines (the
    first N cells of ``work`` that were not shaved): 8 increments a mine
    instead of 8 loads a cell. Returns |S|."""
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
def unreachable_count(mines, W, H, nb, nbn, centre, safe, seen, queue, rows):
    """``unreachable_safe``, on boards at most 64 wide with one machine word
    a row: the reached set grows row by row (a row takes what its own and
    the two adjacent rows reach, widened by one column, within its safe
    cells) in down and up sweeps until a sweep changes nothing. The same
    count as the BFS, a few word operations a row instead of 8 loads a cell."""
    if W > 64 or rows.shape[0] < 2 * H:
        return unreachable_safe(mines, nb, nbn, centre, safe, seen, queue)
    for y in range(H):
        m = uint64(0)
        for x in range(W):
            if mines[y * W + x] == 0:
                m |= _ONE << uint64(x)
        rows[y] = m
        rows[H + y] = 0
    rows[H + centre // W] = _ONE << uint64(centre % W)
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
        reached += _popcount(rows[H + y])
    return safe - reached


@njit(cache=True, inline="always", error_model="numpy")
def _touch(c, rev, num, fog, nb, nbn, stack, sp, inq):
    """Every revealed numbered cell within distance 1 of ``c`` (and ``c``
    itself) has a changed constraint: mark it stale (bit 2) and queue it
    (bit 1) unless it is queued already. (Read through the neighbour table:
    no division by the width on the closure's hottest path.)"""
    if rev[c] == 1 and num[c] > 0 and fog[c] == 0:
        if inq[c] & 1 == 0:
            stack[sp] = c
            sp += 1
        inq[c] |= 3
    for k in range(nbn[c]):
        n = nb[c, k]
        if rev[n] == 1 and num[n] > 0 and fog[n] == 0:
            if inq[n] & 1 == 0:
                stack[sp] = n
                sp += 1
            inq[n] |= 3
    return sp


@njit(cache=True, error_model="numpy")
def _reveal(c, rev, num, fog, W, H, nb, nbn, fq, stack, sp, inq):
    """Open a cell proven safe: chain through zeros (fog never chains), open
    fog cells next to anything opened (fog is known safe), queue the
    constraints that changed."""
    if rev[c] == 1:
        return sp
    rev[c] = 1
    fq[0] = c
    qh = 0
    qt = 1
    while qh < qt:
        v = fq[qh]
        qh += 1
        sp = _touch(v, rev, num, fog, nb, nbn, stack, sp, inq)
        chain = num[v] == 0 and fog[v] == 0
        for k in range(nbn[v]):
            n = nb[v, k]
            if rev[n] == 0 and (chain or fog[n] == 1):
                rev[n] = 1
                fq[qt] = n
                qt += 1
    return sp


@njit(cache=True, inline="always", error_model="numpy")
def _constraint(c, rev, known, num, W, H, nb, nbn):
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
def _apply(diff, safe, x, y, W, rev, known, num, fog, H, nb, nbn, fq, stack, sp, inq):
    """Apply a deduction to the cells of a 49-bit window mask centred on
    (x, y): all safe (``safe``) or all mines."""
    for b in range(49):
        if (diff >> uint64(b)) & uint64(1):
            n = (y + b // 7 - 3) * W + (x + b % 7 - 3)
            if safe:
                sp = _reveal(n, rev, num, fog, W, H, nb, nbn, fq, stack, sp, inq)
            elif known[n] == 0:
                known[n] = 1
                sp = _touch(n, rev, num, fog, nb, nbn, stack, sp, inq)
    return sp


@njit(cache=True, error_model="numpy")
def _subset_scan(c, ma, m, cnt, rev, known, num, fog, W, H, nb, nbn, widen, partners, pcount,
                 stack, sp, inq, fq, cmask, cm, ccnt):
    """The subset rule between constraint ``c`` and every constraint that
    shares a cell with it, in both directions."""
    x = c % W
    y = c // W
    wa = widen[ma]
    for k in range(pcount[ma]):
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
            mb, m2, cnt2 = _constraint(b, rev, known, num, W, H, nb, nbn)
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
        s = oy * 7 + ox
        wb = widen[mb]
        if s >= 0:
            wb = wb << uint64(s)
        else:
            wb = wb >> uint64(-s)
        if cnt < cnt2 and (wa & ~wb) == 0:
            dm = m2 - m  # A inside B: B - A holds m_B - m_A mines
            if dm == 0 or dm == cnt2 - cnt:
                sp = _apply(wb & ~wa, dm == 0, x, y, W, rev, known, num, fog, H, nb, nbn, fq, stack, sp, inq)
        elif cnt2 < cnt and (wb & ~wa) == 0:
            dm = m - m2  # B inside A
            if dm == 0 or dm == cnt - cnt2:
                sp = _apply(wa & ~wb, dm == 0, x, y, W, rev, known, num, fog, H, nb, nbn, fq, stack, sp, inq)
    return sp


@njit(cache=True, error_model="numpy")
def closure_cells(rev, known, num, fog, has_fog, use_subset, W, H, nb, nbn, widen, partners, pcount,
                  stack, inq, fq, pend, cmask, cm, ccnt):
    """Grow ``rev`` (revealed) and ``known`` (proven mines) to the least fixed
    point of chain + single (+ subset) + fog meta-knowledge.

    A worklist of numbered cells whose constraint may have changed: a cell is
    queued when a neighbour is opened or proven a mine. Deductions apply at
    once; every fact used is true of the board, so applying them early never
    changes the fixed point (seed 001 F1 note 5: the closure is order-free).
    The single rule drains first; a constraint it cannot settle waits in a
    second list for the (dearer) subset scan, which runs only when no single
    deduction is left, so a constraint is not scanned again and again while a
    cascade is still changing it. Flags in ``inq``: 1 queued, 2 stale cache,
    4 waiting for the subset scan. The loop ends when both lists are empty:
    every constraint has had both rules applied since its last change."""
    NC = W * H
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
                        sp = _reveal(n, rev, num, fog, W, H, nb, nbn, fq, stack, sp, inq)
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
            ma, m, cnt = _constraint(c, rev, known, num, W, H, nb, nbn)
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
                        sp = _reveal(n, rev, num, fog, W, H, nb, nbn, fq, stack, sp, inq)
                    elif known[n] == 0:
                        known[n] = 1
                        sp = _touch(n, rev, num, fog, nb, nbn, stack, sp, inq)
            continue
        if not use_subset:
            continue
        if single_only:
            if inq[c] & 4 == 0:
                inq[c] |= 4
                pend[pp] = c
                pp += 1
            continue
        sp = _subset_scan(c, ma, m, cnt, rev, known, num, fog, W, H, nb, nbn, widen, partners, pcount,
                          stack, sp, inq, fq, cmask, cm, ccnt)


@njit(cache=True, error_model="numpy")
def closure(rev, known, num, fog, mines, has_fog, use_subset, W, H, nb, nbn, widen, stack, inq, fq, pend, cmask, cm,
            ccnt, bits, store):
    """Grow ``rev`` and ``known`` to the closure's least fixed point (R∞ and
    the proven mines): on bit rows (``closure_rows``) when the board fits
    them, cell by cell (``closure_cells``) otherwise - the same fixed point
    either way. Returns ``(|R∞|, |R∞ ∩ F|, proven mines, held)``; ``held``
    says the fixed point is still only in ``bits`` (``store`` False: an
    attempt that fails is counted, never looked at again) and
    ``store_rows`` writes it to ``rev`` and ``known``."""
    if load_rows(bits, rev, known, mines, fog, has_fog, W, H):
        close_rows(bits, has_fog, use_subset, H)
        if store:
            store_rows(bits, rev, known, W, H)
        revealed, in_fog, nk = count_rows(bits, H)
        return revealed, in_fog, nk, not store
    closure_cells(rev, known, num, fog, has_fog, use_subset, W, H, nb, nbn, widen, PARTNERS, PARTNER_COUNT,
                  stack, inq, fq, pend, cmask, cm, ccnt)
    revealed = 0
    in_fog = 0
    nk = 0
    for c in range(W * H):
        revealed += rev[c]
        in_fog += rev[c] & fog[c]
        nk += known[c]
    return revealed, in_fog, nk, False


@njit(cache=True, error_model="numpy")
def measure_into(mines, fog, has_fog, use_subset, spawn, W, H, nb, nbn, widen,
                 num, rev, known, fq, cmask, cm, ccnt, stack, inq, queue, bits):
    """Numbers, R0 and R∞ of a layout (R∞ left in ``rev``, the proven mines
    in ``known``). Returns ``(safe, r0, revealed)``."""
    safe = numbers_of(mines, nb, nbn, num)
    rev[:] = 0
    known[:] = 0
    r0 = flood(spawn, spawn.shape[0], rev, num, fog, nb, nbn, queue)
    revealed, _, _, _ = closure(rev, known, num, fog, mines, has_fog, use_subset, W, H, nb, nbn, widen, stack, inq,
                                fq, queue, cmask, cm, ccnt, bits, True)
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


# the fog rule of a row, as run_board reads it: regions, aimed cells
# (round_half_up(ratio x W x H), before the 8 x mines cap)
FOG_REGIONS, FOG_AIM = range(2)


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
def place_fog(st, draws, mines, num, r0, nb, nbn, W, H, region_count, aim, allowed, fog, wcount, comp, buf,
              region, mark):
    """The fog step of one attempt, exactly as ``fog.place_fog`` (the
    readable reference): allowed cells, region sizes, seeds where the free
    area can hold the region, growth through the sorted frontier, roll-back
    of a region that runs out of room. ``r0`` marks R0 (flooded through no
    fog). Writes ``fog``; returns ``(fog cells, regions placed)``."""
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
    total = min(aim, 8 * mine_count)
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
def fog_step(st, draws, mines, num, r0, nb, nbn, W, H, region_count, aim, allowed, fog, wcount, comp, buf, region,
             mark, bits):
    """The fog step of an attempt: on bit rows (``fog_rows``) when the board
    fits them, cell by cell (``place_fog``) otherwise - the same regions from
    the same draws. Returns ``(fog cells, regions placed)``."""
    nfog, placed = place_fog_rows(st, draws, mines, num, r0, W, H, region_count, aim, fog, wcount, region, bits)
    if nfog >= 0:
        return nfog, placed
    return place_fog(st, draws, mines, num, r0, nb, nbn, W, H, region_count, aim, allowed, fog, wcount, comp, buf,
                     region, mark)


@njit(cache=True, error_model="numpy")
def fog_budget(mines, num, r0, fog, nb, nbn, chain):
    """Seed 001 F3 (``fog.fog_budget``): ``(|F - Chain0|, max(1, |S - Chain0|))``
    where Chain0 is R0, every safe zero and every safe neighbour of one."""
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
def check_sizes(cand, spawn, N, W, H, budget, nb, mines, a_state, log):
    """Refuse a call whose arguments do not fit its arrays (issue 15: no
    input may make a kernel write out of bounds)."""
    NC = W * H
    if W < 1 or H < 1:
        raise ValueError("board width and height must be >= 1")
    if mines.shape[0] != NC or nb.shape[0] != NC or cand.shape[0] + spawn.shape[0] != NC:
        raise ValueError("workspace arrays do not match the board size")
    if N < 0 or N > cand.shape[0]:
        raise ValueError("mine count must lie in [0, candidate cells]")
    if budget < 1 or budget > a_state.shape[0] or budget > log.shape[0]:
        raise ValueError("attempt budget must be >= 1 and fit the attempt log")


@njit(cache=True, error_model="numpy")
def run_board(st, draws, cand, spawn, N, W, H, shave_radius, min_safe, cap, budget, t_num, t_den, fogp,
              nb, nbn, widen, mines, num, rev, known, fog, seen, work, fq, cmask, cm, ccnt, stack, inq, queue,
              r0m, allowed, wcount, comp, buf, region, mark, chain, rows, bits, a_state, log, out):
    """The attempt loop of SPEC 2.5 (and of SPEC 5 on a fog row) up to the
    first passing attempt.

    Per attempt k the log row records the draw count at its start (the
    stream state goes to ``a_state[k]``, so any attempt can be replayed),
    ring_removed, actual mines, |S|, |R0|, unreachable safe cells, |R∞| and
    |R∞ - F| (-1 when illegal: legality is checked before quality and an
    illegal attempt is never measured) and |F|. ``out`` gets the attempts
    run, whether the last one passed, the rejection counts per gate and
    what the passing attempt measured; the workspace arrays keep its board
    (``mines``, ``fog``, ``num``, ``rev`` = R∞, ``known``).

    Without fog (``fogp[FOG_REGIONS] == 0``) an attempt draws only its mines
    and the unreachable count is computed only when the cheaper gates pass
    (-1 otherwise). With fog every attempt draws its fog from the same
    stream right after its mines, whatever its legality (seed 001: fog is a
    step of every attempt), and every gate is evaluated."""
    check_sizes(cand, spawn, N, W, H, budget, nb, mines, a_state, log)
    NC = W * H
    cx = (W - 1) // 2
    cy = (H - 1) // 2
    centre = cy * W + cx
    regions = fogp[FOG_REGIONS]
    out[:] = 0
    for k in range(budget):
        a_state[k] = st[0]
        log[k, LOG_DRAWS] = draws[0]
        removed = place(st, draws, cand, work, mines, N, W, cx, cy, shave_radius)
        safe = numbers_from_placed(work, N, mines, nb, nbn, num)
        rev[:] = 0
        known[:] = 0
        fog[:] = 0
        r0 = flood(spawn, spawn.shape[0], rev, num, fog, nb, nbn, queue)
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
            unreach = unreachable_count(mines, W, H, nb, nbn, centre, safe, seen, queue, rows)
            log[k, LOG_UNREACH] = unreach
            for c in range(NC):
                r0m[c] = rev[c]
            nfog, placed = fog_step(st, draws, mines, num, r0m, nb, nbn, W, H, regions, fogp[FOG_AIM],
                                    allowed, fog, wcount, comp, buf, region, mark, bits)
            log[k, LOG_FOG] = nfog
        # legality gates, cheapest first; an illegal attempt is counted under
        # the first gate it fails (GATE_ORDER), and never scored
        if r0 == safe:
            out[OUT_FREE] += 1
            continue
        if r0 > cap:
            out[OUT_CAP] += 1
            continue
        if safe < min_safe:
            out[OUT_MINSAFE] += 1
            continue
        if regions == 0:
            unreach = unreachable_count(mines, W, H, nb, nbn, centre, safe, seen, queue, rows)
            log[k, LOG_UNREACH] = unreach
        if unreach > 0:
            out[OUT_UNREACH] += 1
            continue
        # R∞ grows from R0 as flooded above: fog cells are never zeros (fog
        # hides a number), so flooding through fog would give the same R0
        revealed, in_fog, nk, held = closure(rev, known, num, fog, mines, nfog > 0, True, W, H, nb, nbn, widen,
                                             stack, inq, fq, queue, cmask, cm, ccnt, bits, False)
        core = revealed - in_fog
        log[k, LOG_REVEALED] = revealed
        log[k, LOG_REVEALED_CORE] = core
        # seed 001 F5: both inferability and its core meet the target
        if (np.int64(revealed) * t_den >= t_num * np.int64(max(1, safe))
                and np.int64(core) * t_den >= t_num * np.int64(max(1, safe - nfog))):
            out[OUT_PASSED] = 1
            if held:
                store_rows(bits, rev, known, W, H)  # the workspace keeps the passing board's R∞
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
                unpaid, paid = fog_budget(mines, num, r0m, fog, nb, nbn, chain)
                out[OUT_UNPAID] = unpaid
                out[OUT_PAID] = paid
            return


@njit(cache=True, error_model="numpy")
def replay_board(st, draws, cand, spawn, N, W, H, shave_radius, fogp, nb, nbn, widen, mines, num, rev, known,
                 fog, seen, work, fq, cmask, cm, ccnt, stack, inq, queue, r0m, allowed, wcount, comp, buf, region,
                 mark, chain, rows, bits, out):
    """One attempt from the stream state in ``st``, measured whatever its
    legality (the chosen attempt of a ``best_legal`` or ``least_bad`` exit):
    mines, fog when the row has it, then R∞ with fog. Fills ``out`` like a
    passing ``run_board``."""
    NC = W * H
    if mines.shape[0] != NC or nb.shape[0] != NC or cand.shape[0] + spawn.shape[0] != NC:
        raise ValueError("workspace arrays do not match the board size")
    if N < 0 or N > cand.shape[0]:
        raise ValueError("mine count must lie in [0, candidate cells]")
    cx = (W - 1) // 2
    cy = (H - 1) // 2
    out[:] = 0
    removed = place(st, draws, cand, work, mines, N, W, cx, cy, shave_radius)
    safe = numbers_from_placed(work, N, mines, nb, nbn, num)
    rev[:] = 0
    fog[:] = 0
    flood(spawn, spawn.shape[0], rev, num, fog, nb, nbn, queue)
    for c in range(NC):
        r0m[c] = rev[c]
    nfog = 0
    placed = 0
    if fogp[FOG_REGIONS] > 0:
        nfog, placed = fog_step(st, draws, mines, num, r0m, nb, nbn, W, H, fogp[FOG_REGIONS], fogp[FOG_AIM],
                                allowed, fog, wcount, comp, buf, region, mark, bits)
    safe, r0, revealed = measure_into(mines, fog, nfog > 0, True, spawn, W, H, nb, nbn, widen,
                                      num, rev, known, fq, cmask, cm, ccnt, stack, inq, queue, bits)
    in_fog = 0
    nk = 0
    for c in range(NC):
        in_fog += rev[c] & fog[c]
        nk += known[c]
    out[OUT_KNOWN] = nk
    out[OUT_REVEALED] = revealed
    out[OUT_SAFE] = safe
    out[OUT_R0] = r0
    out[OUT_REMOVED] = removed
    out[OUT_REVEALED_CORE] = revealed - in_fog
    out[OUT_FOG] = nfog
    out[OUT_PLACED] = placed
    if fogp[FOG_REGIONS] > 0:
        unpaid, paid = fog_budget(mines, num, r0m, fog, nb, nbn, chain)
        out[OUT_UNPAID] = unpaid
        out[OUT_PAID] = paid


@njit(cache=True, error_model="numpy")
def run_batch(states, cand, spawn, N, W, H, shave_radius, min_safe, cap, budget, t_num, t_den, fogp,
              nb, nbn, widen, mines, num, rev, known, fog, seen, work, fq, cmask, cm, ccnt, stack, inq, queue,
              r0m, allowed, wcount, comp, buf, region, mark, chain, rows, bits, b_astate, b_log,
              b_out, b_state, b_mines, b_fog):
    """``run_board`` for every stream state of ``states`` (draw counts start
    at 0): one call for a row's whole batch, so the per-call cost of a
    kernel is paid once. Board b's summary goes to ``b_out[b]`` (its last column: the draws taken),
    the stream state after it to ``b_state[b]``, its attempt log to
    ``b_astate[b]`` and ``b_log[b]`` (so the caller picks the exit of a board
    that did not pass without running it again) and, when it passed, its
    mines and fog to ``b_mines[b]`` and ``b_fog[b]``."""
    B = states.shape[0]
    NC = W * H
    if (b_out.shape[0] < B or b_state.shape[0] < B or b_mines.shape[0] < B or b_fog.shape[0] < B
            or b_astate.shape[0] < B or b_log.shape[0] < B or b_out.shape[1] != OUT_SIZE + 1):
        raise ValueError("batch output arrays do not fit the batch")
    if b_mines.shape[1] != NC or b_fog.shape[1] != NC:
        raise ValueError("batch output arrays do not match the board size")
    st = np.zeros(1, np.uint64)
    draws = np.zeros(1, np.int64)
    out = np.zeros(OUT_SIZE, np.int64)
    for b in range(B):
        st[0] = states[b]
        draws[0] = 0
        run_board(st, draws, cand, spawn, N, W, H, shave_radius, min_safe, cap, budget, t_num, t_den, fogp,
                  nb, nbn, widen, mines, num, rev, known, fog, seen, work, fq, cmask, cm, ccnt, stack, inq, queue,
                  r0m, allowed, wcount, comp, buf, region, mark, chain, rows, bits, b_astate[b], b_log[b], out)
        for i in range(OUT_SIZE):
            b_out[b, i] = out[i]
        b_state[b] = st[0]
        b_out[b, OUT_SIZE] = draws[0]
        if out[OUT_PASSED] == 1:
            for c in range(NC):
                b_mines[b, c] = mines[c]
                b_fog[b, c] = fog[c]


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
        out = self.summary[b, :OUT_SIZE]
        ran = int(out[OUT_RAN])
        lg = self.log[b, :ran]
        rejected = {"r0_cap_rejected": int(out[OUT_CAP]), "unreachable_rejected": int(out[OUT_UNREACH]),
                    "free_open_rejected": int(out[OUT_FREE]), "min_safe_rejected": int(out[OUT_MINSAFE])}
        return AttemptLog(ran, bool(out[OUT_PASSED]), rejected, int(out[OUT_KNOWN]), self.attempt_state[b, :ran],
                          lg[:, LOG_REMOVED], lg[:, LOG_MINES], lg[:, LOG_SAFE], lg[:, LOG_R0], lg[:, LOG_UNREACH],
                          lg[:, LOG_REVEALED], lg[:, LOG_REVEALED_CORE], lg[:, LOG_FOG], out)


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


class Workspace:
    """One board size and spawn side: the geometry the kernels read and the
    scratch arrays they write, sized from the call's own arguments (every
    per-cell array has W*H entries, every per-attempt array at least the
    attempt budget, every per-board array at least the batch), so no input
    makes a kernel write out of bounds.

    Methods are the generator's stages in the seed's words; each unpacks the
    arrays into one compiled kernel. Not shared between threads."""

    def __init__(self, width: int, height: int, spawn_cells, candidate_cells, neighbours, neighbour_counts):
        nc = width * height
        self.width, self.height = width, height
        self.cx, self.cy = (width - 1) // 2, (height - 1) // 2
        self.centre = self.cy * width + self.cx
        self.spawn = np.asarray(spawn_cells, dtype=np.int32)
        self.cand = np.asarray(candidate_cells, dtype=np.int32)
        self.nb, self.nbn = neighbours, neighbour_counts
        self.mines = np.zeros(nc, np.uint8)
        self.num = np.zeros(nc, np.int32)
        self.rev = np.zeros(nc, np.uint8)
        self.known = np.zeros(nc, np.uint8)
        self.fog = np.zeros(nc, np.uint8)
        self.seen = np.zeros(nc, np.uint8)
        self.inq = np.zeros(nc, np.uint8)
        self.queue = np.zeros(nc, np.int32)
        self.stack = np.zeros(nc, np.int32)
        self.fq = np.zeros(nc, np.int32)
        self.cmask = np.zeros(nc, np.int64)
        self.cm = np.zeros(nc, np.int32)
        self.ccnt = np.full(nc, -1, np.int32)
        self.work = np.zeros(max(nc, 1), np.int32)
        # the fog step's scratch
        self.r0m = np.zeros(nc, np.uint8)
        self.allowed = np.zeros(nc, np.uint8)
        self.wcount = np.zeros(max(1, (width - 2) * (height - 2)), np.int32)
        self.comp = np.zeros(nc, np.int32)
        self.buf = np.zeros(nc, np.int32)
        self.region = np.zeros(nc, np.int32)
        self.mark = np.zeros(nc, np.int64)
        self.chain = np.zeros(nc, np.uint8)
        self.rows = np.zeros(2 * height, np.uint64)
        self.bits = np.zeros((FOG_BITS_ROWS, height + 2 * PAD), np.uint64)  # the closure's and fog step's bit rows
        self._state = np.zeros(1, np.uint64)
        self._draws = np.zeros(1, np.int64)
        self._out = np.zeros(OUT_SIZE, np.int64)
        self._a_state = np.zeros(0, np.uint64)
        self._log = np.zeros((0, LOG_SIZE), np.int64)
        self._batch: tuple[np.ndarray, ...] = ()

    def _attempt_arrays(self, budget: int) -> tuple[np.ndarray, np.ndarray]:
        if self._a_state.shape[0] < budget:
            self._a_state = np.zeros(budget, np.uint64)
            self._log = np.zeros((budget, LOG_SIZE), np.int64)
        return self._a_state, self._log

    def _scratch(self) -> tuple:
        return (self.nb, self.nbn, WIDEN, self.mines, self.num, self.rev, self.known, self.fog, self.seen,
                self.work, self.fq, self.cmask, self.cm, self.ccnt, self.stack, self.inq, self.queue,
                self.r0m, self.allowed, self.wcount, self.comp, self.buf, self.region, self.mark, self.chain, self.rows, self.bits)

    def run_attempts(self, stream, n: int, shave_radius: int, min_safe: int, r0_cap: int, budget: int,
                     target: Fraction, fog=(0, 0)) -> AttemptLog:
        """Place-then-verify attempts on ``stream`` (advanced in place) up to
        the first that passes or the budget (seed 000 "生成重试与成本闸");
        ``fog`` is ``(regions, aimed cells)`` on a fog row."""
        check_board(self.width, self.height, 1, None, budget)
        a_state, log = self._attempt_arrays(budget)
        self._state[0], self._draws[0] = stream.state, stream.draws
        run_board(
            self._state, self._draws, self.cand, self.spawn, n, self.width, self.height, shave_radius, min_safe,
            r0_cap, budget, target.numerator, target.denominator, np.asarray(fog, np.int64), *self._scratch(),
            a_state, log, self._out,
        )
        stream.state, stream.draws = int(self._state[0]), int(self._draws[0])
        out = self._out
        ran = int(out[OUT_RAN])
        rejected = {"r0_cap_rejected": int(out[OUT_CAP]), "unreachable_rejected": int(out[OUT_UNREACH]),
                    "free_open_rejected": int(out[OUT_FREE]), "min_safe_rejected": int(out[OUT_MINSAFE])}
        lg = log[:ran]
        return AttemptLog(ran, bool(out[OUT_PASSED]), rejected, int(out[OUT_KNOWN]), a_state[:ran],
                          lg[:, LOG_REMOVED], lg[:, LOG_MINES], lg[:, LOG_SAFE], lg[:, LOG_R0], lg[:, LOG_UNREACH],
                          lg[:, LOG_REVEALED], lg[:, LOG_REVEALED_CORE], lg[:, LOG_FOG], out)

    def run_batch(self, states: np.ndarray, n: int, shave_radius: int, min_safe: int, r0_cap: int, budget: int,
                  target: Fraction, fog=(0, 0)) -> BatchResult:
        """``run_attempts`` for each stream state of ``states`` in one kernel
        call; every output array is sized from the batch and the budget."""
        check_board(self.width, self.height, 1, None, budget)
        boards = states.shape[0]
        nc = self.width * self.height
        b = self._batch
        if not b or b[0].shape[0] < boards or b[4].shape[1] < budget:
            rows, cols = max(boards, b[0].shape[0] if b else 0), max(budget, b[4].shape[1] if b else 0)
            b = self._batch = (np.zeros((rows, OUT_SIZE + 1), np.int64), np.zeros(rows, np.uint64),
                               np.zeros((rows, nc), np.uint8), np.zeros((rows, nc), np.uint8),
                               np.zeros((rows, cols), np.uint64), np.zeros((rows, cols, LOG_SIZE), np.int64))
        b_out, b_state, b_mines, b_fog, b_astate, b_log = b
        run_batch(
            np.ascontiguousarray(states, dtype=np.uint64), self.cand, self.spawn, n, self.width, self.height,
            shave_radius, min_safe, r0_cap, budget, target.numerator, target.denominator,
            np.asarray(fog, np.int64), *self._scratch(), b_astate, b_log, b_out, b_state, b_mines, b_fog,
        )
        return BatchResult(b_out[:boards], b_state[:boards], b_mines[:boards], b_fog[:boards], b_astate[:boards],
                           b_log[:boards])

    def replay(self, state: int, n: int, shave_radius: int, fog=(0, 0)) -> np.ndarray:
        """Replay the attempt that starts at stream state ``state`` and
        measure it with its fog whatever its legality; the board stays in
        the workspace and the summary (OUT_*) is returned."""
        st = np.array([state], dtype=np.uint64)
        dr = np.zeros(1, dtype=np.int64)
        replay_board(st, dr, self.cand, self.spawn, n, self.width, self.height, shave_radius,
                     np.asarray(fog, np.int64), *self._scratch(), self._out)
        return self._out

    def place(self, state: int, n: int, shave_radius: int, draws: int = 0) -> tuple[int, int, int]:
        """Place-then-shave from stream state ``state`` into ``self.mines``;
        returns ``(ring_removed, state after, draws after)``."""
        if not 0 <= n <= self.cand.shape[0]:
            raise ValueError(f"{n} mines do not fit the {self.cand.shape[0]} candidate cells")
        st = np.array([state], dtype=np.uint64)
        dr = np.array([draws], dtype=np.int64)
        removed = place(st, dr, self.cand, self.work, self.mines, n, self.width, self.cx, self.cy, shave_radius)
        return int(removed), int(st[0]), int(dr[0])

    def numbers(self, mines=None) -> int:
        """Numbers of ``mines`` (default the workspace's board) into ``self.num``; returns |S|."""
        return int(numbers_of(self.mines if mines is None else mines, self.nb, self.nbn, self.num))

    def flood_r0(self, fog=None) -> int:
        """R0 from the spawn square into ``self.rev`` (numbers must be current)."""
        self.rev[:] = 0
        fog = self.fog if fog is None else fog
        return int(flood(self.spawn, self.spawn.shape[0], self.rev, self.num, fog, self.nb, self.nbn, self.queue))

    def unreachable(self, safe: int, mines=None) -> int:
        """Safe cells not 8-connected through safe cells to the spawn centre."""
        m = self.mines if mines is None else mines
        return int(unreachable_safe(m, self.nb, self.nbn, self.centre, safe, self.seen, self.queue))

    def measure(self, mines=None, fog=None, use_subset: bool = True) -> tuple[int, int, int]:
        """Numbers, R0 and R∞ of a layout (default the workspace's board, no
        fog); returns ``(safe, r0, revealed)``, leaving R∞ in ``self.rev`` and
        the proven mines in ``self.known``."""
        m = self.mines if mines is None else mines
        if fog is None:
            self.fog[:] = 0
            fog = self.fog
        safe, r0, revealed = measure_into(
            m, fog, bool(fog.any()), use_subset, self.spawn, self.width, self.height, self.nb, self.nbn, WIDEN,
            self.num, self.rev, self.known, self.fq, self.cmask, self.cm, self.ccnt, self.stack, self.inq, self.queue,
            self.bits,
        )
        return int(safe), int(r0), int(revealed)
