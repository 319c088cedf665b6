"""The measure entry point, independent of the generator (SPEC 8; seed 001
AC-8 "度量独立入口", AC-9 order invariance).

A layout in, the counts out: R0, R∞, |S|, the inferability pair, the safe
cells that cannot be reached from the spawn, and the mines the solver proved.
The layout may be given as text (rows by line or ``/``-joined) or as a
mapping from cells to mines in any order: the result depends only on the set
of mines (and fog cells), never on how they were listed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

from boardgen_pipeline.board import kernels
from boardgen_pipeline.board.geometry import neighbour_arrays, parse_layout
from boardgen_pipeline.board.solver import RULE_SETS, spawn_square


@dataclass(frozen=True)
class Measure:
    width: int
    height: int
    r0_size: int
    revealed: int
    safe_count: int
    unreachable_safe: int
    known_mines: int
    fog_cells: int = 0
    revealed_core: int = 0  # |R∞ - F|
    safe_core: int = 0  # |S - F|

    @property
    def inferability(self) -> tuple[int, int]:
        """The integer pair ``(|R∞|, |S|)``: golden tests compare these."""
        return (self.revealed, self.safe_count)

    @property
    def inferability_core(self) -> tuple[int, int]:
        return (self.revealed_core, max(1, self.safe_core))

    def as_json(self) -> dict:
        out = {
            "r0_size": self.r0_size,
            "revealed": self.revealed,
            "safe_count": self.safe_count,
            "inferability": list(self.inferability),
            "unreachable_safe": self.unreachable_safe,
            "known_mines": self.known_mines,
        }
        if self.fog_cells:
            out["fog_cells"] = self.fog_cells
            out["inferability_core"] = list(self.inferability_core)
        return out


def measure_cells(
    width: int,
    height: int,
    mines: Iterable[tuple[int, int]] | Iterable[int],
    *,
    fog: Iterable[tuple[int, int]] | Iterable[int] = (),
    rules: str = "single_subset",
    spawn_side: int = 3,
) -> Measure:
    """Measure a board given as mine cells, ``(x, y)`` pairs or cell indices,
    in any order (duplicates are the same cell)."""
    if rules not in RULE_SETS:
        raise ValueError(f"unknown solver rules {rules!r}; one of {', '.join(RULE_SETS)}")

    def index(c):
        if isinstance(c, tuple):
            x, y = c
            if not (0 <= x < width and 0 <= y < height):
                raise ValueError(f"cell {c} outside a {width}x{height} board")
            return y * width + x
        if not 0 <= c < width * height:
            raise ValueError(f"cell {c} outside a {width}x{height} board")
        return c

    nc = width * height
    m = np.zeros(nc, np.uint8)
    for c in mines:
        m[index(c)] = 1
    f = np.zeros(nc, np.uint8)
    for c in fog:
        i = index(c)
        if m[i]:
            raise ValueError(f"cell {c} is both a mine and fog; fog cells are safe")
        f[i] = 1
    ws = kernels.Workspace(width, height, spawn_square(width, height, spawn_side), (),
                           *neighbour_arrays(width, height))
    safe, r0, revealed = ws.measure(m, f, use_subset=rules == "single_subset")
    unreachable = ws.unreachable(safe, m) if not m[ws.centre] else safe
    nfog = int(f.sum())
    return Measure(
        width=width,
        height=height,
        r0_size=int(r0),
        revealed=int(revealed),
        safe_count=int(safe),
        unreachable_safe=int(unreachable),
        known_mines=int(ws.known.sum()),
        fog_cells=nfog,
        revealed_core=int(revealed) - int((ws.rev & f).sum()),
        safe_core=int(safe) - nfog,
    )


def measure_layout(text: str, *, rules: str = "single_subset", spawn_side: int = 3) -> Measure:
    """Measure a layout text (``*`` mine, ``.`` safe, ``f`` fog)."""
    width, height, mines, fog = parse_layout(text)
    return measure_cells(
        width, height, [i for i, v in enumerate(mines) if v], fog=fog, rules=rules, spawn_side=spawn_side
    )


__all__ = ["Measure", "measure_cells", "measure_layout", "asdict"]
