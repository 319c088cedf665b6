"""The fog step and the fog budget, compiled (seed 001; SPEC 5): on bit rows
(``fog_rows``) when the board fits them, cell by cell (``place_fog``)
otherwise - the same regions from the same draws, twins of ``fog.place_fog``
and ``fog.fog_budget``.
"""

from __future__ import annotations

from numba import njit

from boardgen_pipeline.board.fog_rows import place_fog_rows, region_size, windows_around
from boardgen_pipeline.board.rng_kernels import below


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
