"""Compiled twin of the generator's hot loop (issue 2 "the solver is the hot
loop"; SPEC 2.2-2.5).

One attempt = place N mines (partial Fisher-Yates over the candidate cells),
shave the ring, compute numbers, flood R0, check legality, and - only for a
legal attempt - run the ``single_subset`` closure. These kernels are numba
``njit`` functions over flat arrays; they implement exactly the rules of
``rng`` (SplitMix64, rejection sampling), ``placement`` and ``solver``, and
the tests hold them equal to those readable references on random boards and
on the golden vectors.

Constraint sets are 3x3 masks around their numbered cell (9 bits). For the
subset rule two constraints can only be nested when their centres are at
Chebyshev distance <= 2, so both fit in a 7x7 window centred on the smaller
one: the masks are widened to 49 bits there and compared with two ANDs.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import numpy as np
from numba import njit, uint64

_GAMMA = uint64(0x9E3779B97F4A7C15)


_M1 = uint64(0xBF58476D1CE4E5B9)


_M2 = uint64(0x94D049BB133111EB)


_S30 = uint64(30)


_S27 = uint64(27)


_S31 = uint64(31)


@njit(cache=True, inline="always", error_model="numpy")
def _next(st):
    """SplitMix64 step on a one-element uint64 array; returns the output."""
    s = st[0] + _GAMMA
    st[0] = s
    z = s
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, error_model="numpy")
def below(st, draws, n):
    """Uniform in [0, n) by rejection (rng.Stream.below)."""
    nn = uint64(n)
    threshold = (uint64(0) - nn) % nn  # 2**64 mod n
    while True:
        x = _next(st)
        draws[0] += 1
        if x >= threshold:
            return np.int64(x % nn)


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


@njit(cache=True, inline="always", error_model="numpy")
def _touch(c, rev, num, fog, W, H, stack, sp, inq):
    """Every revealed numbered cell within distance 1 of ``c`` (and ``c``
    itself) has a changed constraint: mark it stale (bit 2) and queue it
    (bit 1) unless it is queued already."""
    x = c % W
    y = c // W
    for yy in range(max(0, y - 1), min(H, y + 2)):
        for xx in range(max(0, x - 1), min(W, x + 2)):
            n = yy * W + xx
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
        sp = _touch(v, rev, num, fog, W, H, stack, sp, inq)
        chain = num[v] == 0 and fog[v] == 0
        for k in range(nbn[v]):
            n = nb[v, k]
            if rev[n] == 0 and (chain or fog[n] == 1):
                rev[n] = 1
                fq[qt] = n
                qt += 1
    return sp


@njit(cache=True, inline="always", error_model="numpy")
def _constraint(c, rev, known, num, W, H):
    """``(mask, m, count)`` of numbered cell ``c``: its unknown neighbours as a
    3x3 mask, the mines still to find among them, and how many there are."""
    x = c % W
    y = c // W
    mask = 0
    cnt = 0
    m = num[c]
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
def _cached(c, rev, known, num, W, H, inq, cmask, cm, ccnt):
    """The constraint of ``c``, recomputed only when stale."""
    if inq[c] & 2:
        ma, m, cnt = _constraint(c, rev, known, num, W, H)
        cmask[c] = ma
        cm[c] = m
        ccnt[c] = cnt
        inq[c] &= 1
    return cmask[c], cm[c], ccnt[c]


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
                sp = _touch(n, rev, num, fog, W, H, stack, sp, inq)
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
        mb, m2, cnt2 = _cached(b, rev, known, num, W, H, inq, cmask, cm, ccnt)
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
def closure(rev, known, num, fog, has_fog, use_subset, W, H, nb, nbn, widen, partners, pcount,
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
        ma, m, cnt = _cached(c, rev, known, num, W, H, inq, cmask, cm, ccnt)
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
                        sp = _touch(n, rev, num, fog, W, H, stack, sp, inq)
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
def measure_into(mines, fog, has_fog, use_subset, spawn, W, H, nb, nbn, widen,
                 num, rev, known, fq, cmask, cm, ccnt, stack, inq, queue):
    """Numbers, R0 and R∞ of a layout. Returns ``(safe, r0, revealed)``."""
    safe = numbers_of(mines, nb, nbn, num)
    rev[:] = 0
    known[:] = 0
    r0 = flood(spawn, spawn.shape[0], rev, num, fog, nb, nbn, queue)
    closure(rev, known, num, fog, has_fog, use_subset, W, H, nb, nbn, widen, PARTNERS, PARTNER_COUNT,
            stack, inq, fq, queue, cmask, cm, ccnt)
    revealed = 0
    for c in range(mines.shape[0]):
        revealed += rev[c]
    return safe, r0, revealed


# The legality gates in the order an attempt meets them (SPEC 2.4), cheapest
# first; each rejected attempt counts under the first one it fails. Free-open
# comes before the cap: a free-open board (R0 = S) nearly always exceeds the
# cap too, and "free open" is the more telling name for it.
GATE_ORDER = ("free_open", "r0_cap", "min_safe", "unreachable")


# run_attempts' summary array ``out``
OUT_RAN, OUT_PASSED, OUT_CAP, OUT_UNREACH, OUT_FREE, OUT_MINSAFE, OUT_KNOWN = range(7)


OUT_SIZE = 8


@njit(cache=True, error_model="numpy")
def run_attempts(st, draws, cand, spawn, N, W, H, shave_radius, min_safe, cap,
                 max_attempts, t_num, t_den, nb, nbn, widen,
                 mines, num, rev, known, fog, seen, work,
                 fq, cmask, cm, ccnt, stack, inq, queue,
                 a_state, a_draws, a_removed, a_mines, a_safe, a_r0, a_unreach, a_revealed, out):
    """The attempt loop of SPEC 2.5 up to the first passing attempt.

    Per attempt k it records the stream state and draw count at its start
    (so any attempt can be replayed), ring_removed, actual mines, |S|, |R0|,
    unreachable safe cells and |R∞| (-1 when illegal: legality is checked
    before quality and an illegal attempt is never measured). ``out`` gets
    the attempts run, whether the last one passed, the rejection counts per
    gate and the mines the solver proved on the last attempt."""
    cx = (W - 1) // 2
    cy = (H - 1) // 2
    centre = cy * W + cx
    out[:] = 0
    for k in range(max_attempts):
        a_state[k] = st[0]
        a_draws[k] = draws[0]
        removed = place(st, draws, cand, work, mines, N, W, cx, cy, shave_radius)
        safe = numbers_from_placed(work, N, mines, nb, nbn, num)
        rev[:] = 0
        known[:] = 0
        r0 = flood(spawn, spawn.shape[0], rev, num, fog, nb, nbn, queue)
        a_removed[k] = removed
        a_mines[k] = N - removed
        a_safe[k] = safe
        a_r0[k] = r0
        a_unreach[k] = -1  # not computed: an earlier gate already rejected the attempt
        a_revealed[k] = -1
        out[OUT_RAN] = k + 1
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
        unreach = unreachable_safe(mines, nb, nbn, centre, safe, seen, queue)
        a_unreach[k] = unreach
        if unreach > 0:
            out[OUT_UNREACH] += 1
            continue
        closure(rev, known, num, fog, False, True, W, H, nb, nbn, widen, PARTNERS, PARTNER_COUNT,
                stack, inq, fq, queue, cmask, cm, ccnt)
        revealed = 0
        for c in range(W * H):
            revealed += rev[c]
        a_revealed[k] = revealed
        if np.int64(revealed) * t_den >= t_num * np.int64(safe):
            out[OUT_PASSED] = 1
            nk = 0
            for c in range(W * H):
                nk += known[c]
            out[OUT_KNOWN] = nk
            return


class AttemptLog(NamedTuple):
    """What ``run_attempts`` recorded, one entry per attempt run (arrays are
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


class Workspace:
    """One board size and spawn side: the geometry the kernels read and the
    scratch arrays they write, sized from the call's own arguments (every
    per-cell array has W*H entries, every per-attempt array at least the
    attempt budget), so no input makes a kernel write out of bounds.

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
        self._state = np.zeros(1, np.uint64)
        self._draws = np.zeros(1, np.int64)
        self._out = np.zeros(OUT_SIZE, np.int64)
        self._log: dict[str, np.ndarray] = {}

    def _attempt_arrays(self, budget: int) -> dict[str, np.ndarray]:
        if len(self._log.get("state", ())) < budget:
            size = max(budget, 32)
            self._log = {name: np.zeros(size, dtype) for name, dtype in (
                ("state", np.uint64), ("draws", np.int64), ("removed", np.int64), ("mines", np.int64),
                ("safe", np.int64), ("r0", np.int64), ("unreachable", np.int64), ("revealed", np.int64))}
        return self._log

    def run_attempts(self, stream, n: int, shave_radius: int, min_safe: int, r0_cap: int, budget: int,
                     target: Fraction) -> AttemptLog:
        """Place-then-verify attempts on ``stream`` (advanced in place) up to
        the first that passes or the budget (seed 000 "生成重试与成本闸")."""
        a = self._attempt_arrays(budget)
        self.fog[:] = 0  # the fog-free loop floods through no fog
        self._state[0], self._draws[0] = stream.state, stream.draws
        run_attempts(
            self._state, self._draws, self.cand, self.spawn, n, self.width, self.height, shave_radius, min_safe,
            r0_cap, budget, target.numerator, target.denominator, self.nb, self.nbn, WIDEN,
            self.mines, self.num, self.rev, self.known, self.fog, self.seen, self.work,
            self.fq, self.cmask, self.cm, self.ccnt, self.stack, self.inq, self.queue,
            a["state"], a["draws"], a["removed"], a["mines"], a["safe"], a["r0"], a["unreachable"], a["revealed"],
            self._out,
        )
        stream.state, stream.draws = int(self._state[0]), int(self._draws[0])
        ran, passed, cap, unreach, free, minsafe, known = self._out.tolist()[:7]
        rejected = {"r0_cap_rejected": cap, "unreachable_rejected": unreach, "free_open_rejected": free,
                    "min_safe_rejected": minsafe}
        return AttemptLog(ran, bool(passed), rejected, known, a["state"][:ran], a["removed"][:ran], a["mines"][:ran],
                          a["safe"][:ran], a["r0"][:ran], a["unreachable"][:ran], a["revealed"][:ran])

    def place(self, state: int, n: int, shave_radius: int, draws: int = 0) -> tuple[int, int, int]:
        """Place-then-shave from stream state ``state`` into ``self.mines``;
        returns ``(ring_removed, state after, draws after)``."""
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
        )
        return int(safe), int(r0), int(revealed)
