"""Boards: geometry, numbers, the flood and R0, the unreachable count, the
closure R∞ (docs/conformance.md sections 3 and 4), Chain0, and the AC-7
predicate and the AC-8/AC-9 measure (section 8)."""

from __future__ import annotations

from collections import deque

from .readings import rd


class Grid:
    """A W x H board's cells (c = y * W + x), neighbours and spawn square."""

    def __init__(self, w: int, h: int, spawn_side: int):
        self.w, self.h, self.n = w, h, w * h
        self.cx, self.cy = (w - 1) // 2, (h - 1) // 2
        self.centre = self.cy * w + self.cx
        self.nbrs = [[ny * w + nx for ny in (c // w - 1, c // w, c // w + 1) for nx in (c % w - 1, c % w, c % w + 1)
                      if (nx, ny) != (c % w, c // w) and 0 <= nx < w and 0 <= ny < h] for c in range(self.n)]
        self.spawn = [c for c in range(self.n) if self.cheb(c) <= spawn_side // 2]

    def cheb(self, c: int) -> int:
        return max(abs(c % self.w - self.cx), abs(c // self.w - self.cy))

    def numbers(self, mines: set[int]) -> list[int]:
        return [sum(1 for m in self.nbrs[c] if m in mines) for c in range(self.n)]

    def windows_of(self, c: int):
        """The 3x3 windows inside the board that hold cell c."""
        x, y = c % self.w, c // self.w
        for y0 in range(max(0, y - 2), min(self.h - 3, y) + 1):
            for x0 in range(max(0, x - 2), min(self.w - 3, x) + 1):
                yield [(y0 + j) * self.w + x0 + i for j in range(3) for i in range(3)]

    def completes_window(self, c: int, fog: set[int]) -> bool:
        return any(all(v == c or v in fog for v in win) for win in self.windows_of(c))

    def any_window_all(self, cells: set[int]) -> bool:
        return any(all((y + j) * self.w + x + i in cells for j in range(3) for i in range(3))
                   for y in range(self.h - 2) for x in range(self.w - 2))


def flood(g: Grid, revealed: set[int], start, num: list[int], fog, mines) -> None:
    """Reveal ``start`` and flood: a revealed cell with number 0 that is not
    fog reveals its neighbours (a mine with number 0 too)."""
    todo = deque()
    for c in start:
        if c not in revealed:
            revealed.add(c)
            todo.append(c)
    while todo:
        c = todo.popleft()
        if num[c] != 0 or c in fog or (rd().mines_never_chain and c in mines):
            continue
        for n in g.nbrs[c]:
            if n not in revealed:
                revealed.add(n)
                todo.append(n)


def r0(g: Grid, mines: set[int], num: list[int], fog=frozenset()) -> set[int]:
    revealed: set[int] = set()
    flood(g, revealed, g.spawn, num, fog, mines)
    return revealed


def r0_size(r: set[int], mines: set[int]) -> int:
    return len(r - mines) if rd().r0_without_mines else len(r)


def unreachable(g: Grid, mines: set[int]) -> int:
    safe = g.n - len(mines)
    if g.centre in mines and not rd().centre_mine_searched:
        return safe
    seen = {g.centre}
    todo = deque([g.centre])
    while todo:
        for n in g.nbrs[todo.popleft()]:
            if n not in mines and n not in seen:
                seen.add(n)
                todo.append(n)
    return safe - len(seen - mines)


def closure(g: Grid, mines: set[int], num: list[int], fog=frozenset(), subset: bool = True):
    """(R0, R∞, proven mines), section 4."""
    fog = set(fog)
    revealed = r0(g, mines, num, fog)
    first = set(revealed)
    proven: set[int] = set()
    while True:
        cons = []
        for c in sorted(revealed):
            if c in fog or (rd().closure_skips_mines and c in mines):
                continue
            u = frozenset(n for n in g.nbrs[c] if n not in revealed and n not in proven)
            if u:
                cons.append((u, num[c] - sum(1 for n in g.nbrs[c] if n in proven)))
        safe, new = set(), set()
        pairs = list(cons)
        if subset:
            pairs += [(ub - ua, mb - ma) for ua, ma in cons for ub, mb in cons if ua < ub]
        for cells, m in pairs:
            if m == 0:
                safe |= cells
            elif m == len(cells):
                new |= cells
        safe |= {f for f in fog if f not in revealed and any(n in revealed for n in g.nbrs[f])}
        safe -= revealed
        new -= proven
        if not safe and not new:
            return first, revealed, proven
        proven |= new
        if rd().closure_no_flood:
            revealed |= safe
        else:
            flood(g, revealed, sorted(safe), num, fog, mines)


def chain0(g: Grid, mines: set[int], num: list[int], r: set[int], fog: set[int]) -> set[int]:
    """R0, every safe zero, every safe neighbour of a safe zero (fog included)."""
    out = set(r)
    for c in range(g.n):
        if c not in mines and num[c] == 0:
            out.add(c)
            out |= {n for n in g.nbrs[c] if n not in mines and not (rd().chain0_without_fog and n in fog)}
    return out


def parse_layout(layout: str) -> tuple[int, int, set[int], set[int]]:
    rows = layout.split("/")
    w, flat = len(rows[0]), "".join(rows)
    return w, len(rows), {i for i, ch in enumerate(flat) if ch == "*"}, {i for i, ch in enumerate(flat) if ch == "f"}


def legality(inp: dict) -> dict:
    """AC-7's predicate."""
    w, h, mines, fog = parse_layout(inp["layout"])
    g = Grid(w, h, inp["spawn_side"])
    num = g.numbers(mines)
    r = r0(g, mines, num, fog)
    size, safe = r0_size(r, mines), g.n - len(mines)
    categories = [name for name, broken in (
        ("unreachable", unreachable(g, mines) > 0), ("min_safe", safe < inp["min_safe_count"]),
        ("r0_cap", size > inp["r0_max_cap"]), ("free_open", size == safe)) if broken]
    structure = [name for name, broken in (
        ("spawn_mine", any(c in mines for c in g.spawn)),
        ("r0_mine", any(c in mines for c in (r - set(g.spawn) if rd().r0_mine_outside_spawn_only else r))),
        ("fog_cell", any(f in mines or num[f] == 0 for f in fog)), ("fog_in_r0", bool(fog & r)),
        ("fog_window", g.any_window_all(fog)), ("fog_bound", len(fog) > 8 * len(mines))) if broken]
    if structure:
        categories.append("structure")
    if rd().legality_first_category:
        categories = categories[:1]
    return {"legal": not categories, "categories": categories, "structure": structure}


def measure(w: int, h: int, mines: set[int], fog: set[int], spawn_side: int, rules: str) -> dict:
    """AC-8/AC-9's measure entry point."""
    g = Grid(w, h, spawn_side)
    num = g.numbers(mines)
    first, rinf, proven = closure(g, mines, num, fog, subset=rules == "single_subset")
    safe = g.n - len(mines)
    return {"r0_size": len(first), "revealed": len(rinf), "safe_count": safe, "unreachable_safe": unreachable(g, mines),
            "known_mines": len(proven), "fog_cells": len(fog), "revealed_core": len(rinf - fog),
            "safe_core": safe - len(fog)}


def fragments(g: Grid, cells: set[int]) -> list[list[int]]:
    """The pieces of ``cells`` connected through ``g.nbrs``, each from its lowest cell, breadth first."""
    seen: set[int] = set()
    out = []
    for start in sorted(cells):
        if start in seen:
            continue
        comp, i = [start], 0
        seen.add(start)
        while i < len(comp):
            for n in g.nbrs[comp[i]]:
                if n in cells and n not in seen:
                    seen.add(n)
                    comp.append(n)
            i += 1
        out.append(comp)
    return out
