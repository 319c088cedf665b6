"""Board geometry and the board value (SPEC 2.1, 2.6; seed 000
"出生区安全与反退化布雷").

Cells are indexed row-major: ``cell = y * width + x``. The spawn centre is
``((W-1)//2, (H-1)//2)`` and the spawn square is every cell within Chebyshev
distance ``side//2`` of it. A board is only its mines; numbers are always
computed from them (seed 000: "数字恒真"), never stored apart.

Layout text: rows top to bottom, ``*`` mine, ``.`` safe, rows joined by
``/`` (SPEC 2.6). ``f`` marks a fog cell (a safe cell) where fog is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class Geometry:
    width: int
    height: int
    spawn_side: int

    @property
    def cells(self) -> int:
        return self.width * self.height

    @property
    def centre(self) -> tuple[int, int]:
        return ((self.width - 1) // 2, (self.height - 1) // 2)

    @property
    def centre_cell(self) -> int:
        cx, cy = self.centre
        return cy * self.width + cx

    def chebyshev_from_centre(self, cell: int) -> int:
        cx, cy = self.centre
        x, y = cell % self.width, cell // self.width
        return max(abs(x - cx), abs(y - cy))

    def square(self, radius: int) -> list[int]:
        """Cells within Chebyshev ``radius`` of the centre, row-major."""
        return [c for c in range(self.cells) if self.chebyshev_from_centre(c) <= radius]

    @property
    def spawn_cells(self) -> list[int]:
        return self.square(self.spawn_side // 2)

    def neighbours(self, cell: int) -> list[int]:
        return list(neighbour_table(self.width, self.height)[cell])


@lru_cache(maxsize=256)
def neighbour_table(width: int, height: int) -> tuple[tuple[int, ...], ...]:
    """The 8-neighbours of every cell, in row-major order of the neighbours."""
    out = []
    for y in range(height):
        for x in range(width):
            out.append(
                tuple(
                    ny * width + nx
                    for ny in (y - 1, y, y + 1)
                    for nx in (x - 1, x, x + 1)
                    if (nx, ny) != (x, y) and 0 <= nx < width and 0 <= ny < height
                )
            )
    return tuple(out)


@lru_cache(maxsize=256)
def neighbour_arrays(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """``(nb, nbn)``: an ``int32[cells, 8]`` table padded with -1 and the
    neighbour counts, for the compiled kernels."""
    table = neighbour_table(width, height)
    nb = np.full((width * height, 8), -1, dtype=np.int32)
    nbn = np.zeros(width * height, dtype=np.int32)
    for c, ns in enumerate(table):
        nb[c, : len(ns)] = ns
        nbn[c] = len(ns)
    nb.setflags(write=False)
    nbn.setflags(write=False)
    return nb, nbn


def numbers_of(mines: bytes | np.ndarray, width: int, height: int) -> list[int]:
    """Every cell's count of mines among its 8 neighbours (mines included)."""
    table = neighbour_table(width, height)
    return [sum(1 for n in table[c] if mines[n]) for c in range(width * height)]


def format_layout(mines, width: int, height: int, fog=None) -> str:
    """Rows top to bottom, ``*`` mine, ``.`` safe (``f`` fog), joined by ``/``."""
    fog = fog or ()
    fogset = set(fog)
    rows = []
    for y in range(height):
        rows.append(
            "".join(
                "*" if mines[y * width + x] else ("f" if (y * width + x) in fogset else ".")
                for x in range(width)
            )
        )
    return "/".join(rows)


class LayoutError(ValueError):
    """A layout text that is not a rectangle of ``*``, ``.`` (and ``f``)."""


def parse_layout(text: str, allow_fog: bool = True) -> tuple[int, int, bytes, tuple[int, ...]]:
    """``(width, height, mines, fog_cells)`` of a layout: one row per line or
    rows joined by ``/``. Blank lines and surrounding spaces are ignored."""
    rows = [r.strip() for part in text.strip().splitlines() for r in part.split("/")]
    rows = [r for r in rows if r]
    if not rows:
        raise LayoutError("empty layout")
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise LayoutError(f"rows of unequal length: {[len(r) for r in rows]}")
    allowed = "*.f" if allow_fog else "*."
    bad = sorted({ch for r in rows for ch in r if ch not in allowed})
    if bad:
        raise LayoutError(f"unknown cell characters {bad}; use {' '.join(allowed)}")
    flat = "".join(rows)
    mines = bytes(1 if ch == "*" else 0 for ch in flat)
    fog = tuple(i for i, ch in enumerate(flat) if ch == "f")
    return width, len(rows), mines, fog


@dataclass(frozen=True)
class Board:
    """A generated board: geometry plus mines (1 = mine), immutable."""

    width: int
    height: int
    spawn_side: int
    mines: bytes
    fog: tuple[int, ...] = ()

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.width, self.height, self.spawn_side)

    @property
    def layout(self) -> str:
        return format_layout(self.mines, self.width, self.height, self.fog)

    @property
    def numbers(self) -> list[int]:
        return numbers_of(self.mines, self.width, self.height)

    @property
    def mine_count(self) -> int:
        return sum(self.mines)

    def safe_cells(self) -> list[int]:
        return [c for c, m in enumerate(self.mines) if not m]
