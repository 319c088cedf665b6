"""Revealed closures R0 and R∞ with the frozen rule set ``single_subset``
(SPEC 2.3; seed 000 "可推理率承诺", seed 001 F1).

This is the *reference* solver: plain Python over sets, written to be read
against the seed line by line. The generator runs a compiled twin
(``kernels``) that the tests hold equal to this one on random boards.

Knowledge is the revealed cells plus the cells proven to be mines. The solver
sees only what a player sees: revealed cells' numbers, never the mines.

Why the rules are sound (each one is a consequence of true numbers only):
- chain: a revealed zero has no mine among its neighbours, so all of them are
  safe; the game opens them for free.
- single: for a revealed cell with unknown neighbours ``U`` and ``m`` mines
  still to find among them, ``m == 0`` makes every cell of ``U`` safe and
  ``m == |U|`` makes every cell of ``U`` a mine.
- subset: if ``U_A`` is a proper subset of ``U_B``, the ``m_A`` mines of A
  are all inside ``U_B``, so ``U_B - U_A`` holds exactly ``m_B - m_A`` mines;
  the single rule applies to that difference.
There is no partial-overlap ("wing") rule and no global mine count: they are
not part of metric_version 1. All rules only ever add knowledge, so the
closure is the least fixed point and does not depend on the order in which
rules fire (seed 001 F1 note ⑤).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from boardgen_pipeline.board.geometry import neighbour_table

RULE_SETS = ("single_subset", "single")


# The version of what a board's metrics record holds; part of every batch fingerprint, so a
# warehouse made before a change regenerates its rows. 2: the perfect player's figures.
METRIC_VERSION = 2


@dataclass(frozen=True)
class Closures:
    r0: frozenset[int]
    r_infinity: frozenset[int]
    known_mines: frozenset[int]


def _chain(start, revealed: set[int], numbers, table, blocked=frozenset()) -> None:
    """Reveal ``start`` and flood through zeros (in place).

    ``blocked`` cells (fog) are revealed but never propagate: they show no
    number (seed 001 F1 operator ①: "雾格可被链开但不传播")."""
    queue = deque()
    for c in start:
        if c not in revealed:
            revealed.add(c)
            if numbers[c] == 0 and c not in blocked:
                queue.append(c)
    while queue:
        c = queue.popleft()
        for n in table[c]:
            if n not in revealed:
                revealed.add(n)
                if numbers[n] == 0 and n not in blocked:
                    queue.append(n)


def spawn_square(width: int, height: int, spawn_side: int) -> list[int]:
    cx, cy = (width - 1) // 2, (height - 1) // 2
    r = spawn_side // 2
    return [
        y * width + x
        for y in range(max(0, cy - r), min(height, cy + r + 1))
        for x in range(max(0, cx - r), min(width, cx + r + 1))
    ]


def reveal_r0(mines, width: int, height: int, spawn_side: int = 3, fog=frozenset()) -> frozenset[int]:
    """R0: the spawn square plus its flood through zero cells."""
    table = neighbour_table(width, height)
    numbers = [sum(mines[n] for n in table[c]) for c in range(width * height)]
    revealed: set[int] = set()
    _chain(spawn_square(width, height, spawn_side), revealed, numbers, table, frozenset(fog))
    return frozenset(revealed)


def constraints(revealed, known_mines, numbers, table, fog=frozenset()):
    """Every revealed numbered cell's constraint ``(U, m)`` with ``U`` non-empty."""
    out = []
    for c in revealed:
        if c in fog:
            continue  # a fog cell shows no number
        unknown = frozenset(n for n in table[c] if n not in revealed and n not in known_mines)
        if not unknown:
            continue
        m = numbers[c] - sum(1 for n in table[c] if n in known_mines)
        out.append((unknown, m))
    return out


def deduce(cons, use_subset: bool):
    """One round of the rules over a constraint list: ``(safe, mines)``."""
    safe: set[int] = set()
    mines: set[int] = set()

    def single(cells, m):
        if m == 0:
            safe.update(cells)
        elif m == len(cells):
            mines.update(cells)

    for cells, m in cons:
        single(cells, m)
    if use_subset:
        for ua, ma in cons:
            for ub, mb in cons:
                if ua < ub:  # proper subset
                    single(ub - ua, mb - ma)
    return safe, mines


def closures(
    mines,
    width: int,
    height: int,
    spawn_side: int = 3,
    rules: str = "single_subset",
    fog=frozenset(),
) -> Closures:
    """R0 and R∞ of a layout. ``fog`` cells are safe cells with no number that
    do not chain; one adjacent to a revealed cell is known safe (seed 001 F1
    information source (b)). Without fog this is exactly SPEC 2.3."""
    if rules not in RULE_SETS:
        raise ValueError(f"unknown solver rules {rules!r}; one of {RULE_SETS}")
    fog = frozenset(fog)
    table = neighbour_table(width, height)
    numbers = [sum(mines[n] for n in table[c]) for c in range(width * height)]
    revealed: set[int] = set()
    _chain(spawn_square(width, height, spawn_side), revealed, numbers, table, fog)
    r0 = frozenset(revealed)
    known: set[int] = set()
    while True:
        cons = constraints(revealed, known, numbers, table, fog)
        safe, new_mines = deduce(cons, rules == "single_subset")
        if fog:
            # meta-knowledge: fog is known safe, so a fog cell next to R opens
            safe |= {f for f in fog if f not in revealed and any(n in revealed for n in table[f])}
        safe -= revealed
        new_mines -= known
        if not safe and not new_mines:
            break
        known |= new_mines
        _chain(sorted(safe), revealed, numbers, table, fog)
    return Closures(r0, frozenset(revealed), frozenset(known))


def unreachable_safe(mines, width: int, height: int) -> int:
    """Safe cells not 8-connected to the spawn centre through safe cells."""
    table = neighbour_table(width, height)
    start = ((height - 1) // 2) * width + (width - 1) // 2
    if mines[start]:
        return sum(1 for m in mines if not m)
    seen = {start}
    queue = deque([start])
    while queue:
        c = queue.popleft()
        for n in table[c]:
            if not mines[n] and n not in seen:
                seen.add(n)
                queue.append(n)
    return sum(1 for m in mines if not m) - len(seen)
