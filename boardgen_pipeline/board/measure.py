"""The measure entry point, independent of the generator (SPEC 8; seed 001
AC-8 "度量独立入口", AC-9 order invariance).

A layout in, the counts out: R0, R∞, |S|, the inferability pair, the safe
cells that cannot be reached from the spawn, and the mines the solver proved.
The layout may be given as text (rows by line or ``/``-joined) or as a
mapping from cells to mines in any order: the result depends only on the set
of mines (and fog cells), never on how they were listed.

Only layouts that can be boards are measured: a rectangle of
known characters (``geometry.parse_layout``), the spawn square on the board
and free of mines (seed 000 "出生区安全"), at least one safe cell. Anything
else is a :class:`~boardgen_pipeline.board.geometry.LayoutError` naming what
is wrong, never a count such as ``revealed 16 > safe_count 15``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

from boardgen_pipeline.board.geometry import Board, LayoutError, parse_layout
from boardgen_pipeline.board.solver import RULE_SETS, spawn_square
from boardgen_pipeline.board.workspace import Workspace
from boardgen_pipeline.words import count


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
    return _measured(width, height, mines, fog, rules, spawn_side)[0]


def _measured(width, height, mines, fog, rules: str, spawn_side: int) -> tuple[Measure, Workspace, np.ndarray]:
    """The measure, the workspace left at R∞ (``rev``, ``known``) and the
    board's fog cells (uint8 a cell)."""
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

    _check_size(width, height, spawn_side)
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
    _check_board(width, height, spawn_side, m)
    ws = Workspace.for_board(width, height, spawn_side)
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
    ), ws, f


SPAWN_SIDES = (3, 5)  # the header's spawn_side domain (SPEC 2.7)


def _check_size(width, height, spawn_side) -> None:
    if spawn_side not in SPAWN_SIDES or isinstance(spawn_side, bool):
        raise LayoutError(f"spawn side {spawn_side!r} is not one of {SPAWN_SIDES}")
    for name, v in (("width", width), ("height", height)):
        if not isinstance(v, int) or isinstance(v, bool) or v < spawn_side:
            raise LayoutError(f"a {width}x{height} layout cannot be a board: its {name} must be at least the "
                              f"spawn side {spawn_side}, so that the spawn square lies on the board")


def _check_board(width: int, height: int, spawn_side: int, mines: np.ndarray) -> None:
    """Seed 000: the spawn square is mine-free, so a board has safe cells."""
    if mines.all():
        raise LayoutError(f"no safe cell: all {width * height} cells are mines; a board has a mine-free spawn square")
    inside = [c for c in spawn_square(width, height, spawn_side) if mines[c]]
    if inside:
        cx, cy = (width - 1) // 2, (height - 1) // 2
        where = ", ".join(f"({c % width},{c // width})" for c in inside)
        raise LayoutError(f"{count(len(inside), 'mine')} inside the {spawn_side}x{spawn_side} spawn square around the "
                          f"centre ({cx},{cy}): {where} (x,y from the top left); the spawn square is mine-free")


def measure_layout(text: str, *, rules: str = "single_subset", spawn_side: int = 3) -> Measure:
    """Measure a layout text (``*`` mine, ``.`` safe, ``f`` fog)."""
    width, height, mines, fog = parse_layout(text)
    return measure_cells(
        width, height, [i for i, v in enumerate(mines) if v], fog=fog, rules=rules, spawn_side=spawn_side
    )


def probability_grid(text: str, *, rules: str = "single_subset", spawn_side: int = 3) -> dict:
    """The exact mine probabilities at the position after R∞ (for
    ``boardgen measure --probabilities``): what a player sees there - the
    opened cells' numbers, the mines the solver proved, the fog, the board's
    mine count - through ``probability.probabilities``. ``probabilities``
    holds H rows of W entries: None for a cell opened in R∞, else the float
    of the exact P(mine) (proven mines 1, unopened fog 0). A position with a
    component over the node budget claims nothing: ``probabilities`` is None
    and ``probabilities_too_big`` counts the components."""
    from boardgen_pipeline.board.geometry import numbers_of
    from boardgen_pipeline.board.probability import Position, probabilities

    width, height, mines, fog = parse_layout(text)
    _, ws, f = _measured(width, height, [i for i, v in enumerate(mines) if v], fog, rules, spawn_side)
    rev = np.array(ws.rev[:width * height], np.uint8)
    numbers = np.where(rev == 1, np.array(numbers_of(mines, width, height), np.int32), 0).astype(np.int32)
    position = Position(width, height, rev, numbers, np.array(ws.known[:width * height], np.uint8), f,
                        int(sum(mines)))
    p = probabilities(position)
    grid = None
    if p.exact:
        grid = [[None if rev[y * width + x] else p.weights[y * width + x] / p.total for x in range(width)]
                for y in range(height)]
    return {"probabilities": grid, "probability_components": p.components, "probabilities_too_big": p.too_big}


def board_of_layout(text: str, *, spawn_side: int = 3) -> Board:
    """A layout text as a :class:`Board`, once it is shown to be one (the
    checks of :func:`measure_cells`: on the board, spawn square mine-free)."""
    width, height, mines, fog = parse_layout(text)
    _check_size(width, height, spawn_side)
    _check_board(width, height, spawn_side, np.frombuffer(bytes(mines), np.uint8))
    return Board(width, height, spawn_side, bytes(mines), tuple(sorted(fog)))


__all__ = ["Measure", "board_of_layout", "measure_cells", "measure_layout", "probability_grid", "asdict"]
