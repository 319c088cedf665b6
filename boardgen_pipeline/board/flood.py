"""Flood and reachability, compiled (SPEC 2.3-2.4): R0 (the spawn square
and its chain through zeros; fog never chains) and the safe cells not
8-connected to the spawn centre (a BFS, or word rows on boards up to 64
wide: the same count). Twins of ``solver.flood`` and ``solver.unreachable``.
"""

from __future__ import annotations

from numba import njit, uint64

from boardgen_pipeline.board.bitops import popcount


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
