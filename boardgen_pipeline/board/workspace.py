"""The arrays the compiled kernels read and write, for one board size and
spawn side (sized so that no input makes a kernel write out of
bounds; handed to the kernels by name, so none is swapped).

A :class:`Workspace` builds the kernels' named tuples once -
``kernels.Grid`` (the geometry tables), ``kernels.Scratch`` (the board an
attempt builds and the closure's scratch), ``kernels.FogScratch`` (the fog
step's) - every field by keyword, and passes them whole: a kernel reads
``s.mines`` or ``g.nb`` by name, so no array can land in another's place,
as one could among the 46 positional arrays ``run_batch`` took before.
Every per-cell array has W*H entries, every per-attempt array at least the
attempt budget, every per-board array at least the batch; the kernels check
the same again (``kernels.check_arrays``, ``check_sizes``).

Methods are the generator's stages in the seed's words; each calls one
compiled kernel. Not shared between threads.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from boardgen_pipeline.board import kernels
from boardgen_pipeline.board.closure_rows import PAD
from boardgen_pipeline.board.fog_rows import FOG_BITS_ROWS
from boardgen_pipeline.board.geometry import Geometry, neighbour_arrays
from boardgen_pipeline.board.kernels import (
    LOG_SIZE,
    SUMMARY,
    AttemptLog,
    BatchResult,
    FogRule,
    FogScratch,
    Grid,
    Plan,
    Scratch,
)
from boardgen_pipeline.board.placement import candidate_cells


def _fields() -> dict[str, str]:
    """Which structure holds each field name (no name is in two of them, so
    ``ws.mines`` says which array it is)."""
    owner: dict[str, str] = {}
    for attr, cls in (("grid", Grid), ("scratch", Scratch), ("fog_scratch", FogScratch)):
        for name in cls._fields:
            if name in owner:
                raise TypeError(f"field {name!r} is in both {owner[name]} and {attr}")
            owner[name] = attr
    return owner


_OWNER = _fields()


class Workspace:
    """One board size and spawn side: ``grid``, ``scratch`` and
    ``fog_scratch`` (the kernels' named tuples), and the attempt log and
    batch outputs, grown to the largest budget and batch asked for. Every
    field of the three tuples is also an attribute (``ws.mines`` is
    ``ws.scratch.mines``)."""

    def __init__(self, width: int, height: int, spawn_cells, candidate_cells, neighbours, neighbour_counts):
        # plain ints: a numpy integer of another width would compile the kernels again
        width, height = int(width), int(height)
        nc = width * height
        cx, cy = (width - 1) // 2, (height - 1) // 2
        self.grid = Grid(
            width=width, height=height, cx=cx, cy=cy, centre=cy * width + cx,
            spawn=np.asarray(spawn_cells, dtype=np.int32), cand=np.asarray(candidate_cells, dtype=np.int32),
            nb=neighbours, nbn=neighbour_counts,
            widen=kernels.WIDEN, partners=kernels.PARTNERS, partner_count=kernels.PARTNER_COUNT,
        )
        u8, i32 = np.uint8, np.int32
        self.scratch = Scratch(
            mines=_cells(nc, u8), num=_cells(nc, i32), rev=_cells(nc, u8), known=_cells(nc, u8),
            fog=_cells(nc, u8), seen=_cells(nc, u8), work=_cells(max(nc, 1), i32), queue=_cells(nc, i32),
            stack=_cells(nc, i32), fq=_cells(nc, i32), inq=_cells(nc, u8), cmask=_cells(nc, np.int64),
            cm=_cells(nc, i32), ccnt=np.full(nc, -1, i32), rows=_cells(2 * height, np.uint64),
            bits=np.zeros((FOG_BITS_ROWS, height + 2 * PAD), np.uint64),
        )
        self.fog_scratch = FogScratch(
            r0=_cells(nc, u8), allowed=_cells(nc, u8), wcount=_cells(max(1, (width - 2) * (height - 2)), i32),
            comp=_cells(nc, i32), buf=_cells(nc, i32), region=_cells(nc, i32), mark=_cells(nc, np.int64),
            chain=_cells(nc, u8),
        )
        self._state = np.zeros(1, np.uint64)
        self._summary = np.zeros(1, SUMMARY)  # the replay's
        self._batch: BatchResult | None = None

    @classmethod
    def for_board(cls, width: int, height: int, spawn_side: int) -> Workspace:
        """The workspace of a board size and spawn side, its tables from
        ``geometry`` (ValueError for a size no kernel can run)."""
        kernels.check_board(width, height, spawn_side)
        g = Geometry(width, height, spawn_side)
        return cls(width, height, g.spawn_cells, candidate_cells(g), *neighbour_arrays(width, height))

    def __getattr__(self, name: str):
        # only reached for names that are not attributes of the workspace itself
        owner = _OWNER.get(name)
        if owner is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.__dict__[owner], name)

    def _plan(self, n: int, shave_radius: int, min_safe: int = 0, r0_cap: int = 0, budget: int = 1,
              target: Fraction = Fraction(0)) -> Plan:
        return Plan(mines_target=int(n), shave=int(shave_radius), min_safe=int(min_safe), r0_cap=int(r0_cap),
                    budget=int(budget), target_num=target.numerator, target_den=target.denominator)

    def run_attempts(self, stream, n: int, shave_radius: int, min_safe: int, r0_cap: int, budget: int,
                     target: Fraction, fog=(0, 0)) -> AttemptLog:
        """Place-then-verify attempts on ``stream`` (advanced in place) up to
        the first that passes or the budget (seed 000 "生成重试与成本闸");
        ``fog`` is ``(regions, aimed cells)`` on a fog row."""
        # a batch of one: the batch kernel is the only compiled entry to the attempt loop (one layer less
        # to compile on first use); its draw counts start at 0, the stream's go on
        self._state[0] = stream.state
        done = self.run_batch(self._state, n, shave_radius, min_safe, r0_cap, budget, target, fog)
        stream.state, stream.draws = int(done.state[0]), stream.draws + int(done.draws[0])
        return done.attempts(0)

    def run_batch(self, states: np.ndarray, n: int, shave_radius: int, min_safe: int, r0_cap: int, budget: int,
                  target: Fraction, fog=(0, 0)) -> BatchResult:
        """``run_attempts`` for each stream state of ``states`` in one kernel
        call; every output array is sized from the batch and the budget."""
        kernels.check_board(self.width, self.height, 1, None, budget)
        boards = states.shape[0]
        nc = self.width * self.height
        b = self._batch
        if b is None or b.summary.shape[0] < boards or b.attempt_state.shape[1] < budget:
            rows = max(boards, b.summary.shape[0] if b else 0)
            cols = max(budget, b.attempt_state.shape[1] if b else 0)
            b = self._batch = BatchResult(
                summary=np.zeros(rows, SUMMARY), draws=np.zeros(rows, np.int64), state=np.zeros(rows, np.uint64),
                mines=np.zeros((rows, nc), np.uint8), fog=np.zeros((rows, nc), np.uint8),
                attempt_state=np.zeros((rows, cols), np.uint64), log=np.zeros((rows, cols, LOG_SIZE), np.int64))
        kernels.run_batch(np.ascontiguousarray(states, dtype=np.uint64), self.grid,
                          self._plan(n, shave_radius, min_safe, r0_cap, budget, target), _fog_rule(fog),
                          self.scratch, self.fog_scratch, b)
        return BatchResult(*(column[:boards] for column in b))

    def replay(self, state: int, n: int, shave_radius: int, fog=(0, 0)) -> np.ndarray:
        """Replay the attempt that starts at stream state ``state`` and
        measure it with its fog whatever its legality; the board stays in
        the workspace and the summary (one ``SUMMARY`` record) is returned."""
        st = np.array([state], dtype=np.uint64)
        dr = np.zeros(1, dtype=np.int64)
        out = self._summary
        kernels.replay_board(st, dr, self.grid, self._plan(n, shave_radius), _fog_rule(fog), self.scratch,
                             self.fog_scratch, out)
        return out

    def place(self, state: int, n: int, shave_radius: int, draws: int = 0) -> tuple[int, int, int]:
        """Place-then-shave from stream state ``state`` into ``self.mines``;
        returns ``(ring_removed, state after, draws after)``."""
        if not 0 <= n <= self.cand.shape[0]:
            raise ValueError(f"{n} mines do not fit the {self.cand.shape[0]} candidate cells")
        st = np.array([state], dtype=np.uint64)
        dr = np.array([draws], dtype=np.int64)
        removed = kernels.place(st, dr, self.grid, self.scratch, int(n), int(shave_radius))
        return int(removed), int(st[0]), int(dr[0])

    def numbers(self, mines=None) -> int:
        """Numbers of ``mines`` (default the workspace's board) into ``self.num``; returns |S|."""
        return int(kernels.numbers_of(self.mines if mines is None else mines, self.nb, self.nbn, self.num))

    def flood_r0(self, fog=None) -> int:
        """R0 from the spawn square into ``self.rev`` (numbers must be current)."""
        self.rev[:] = 0
        fog = self.fog if fog is None else fog
        return int(kernels.flood(self.spawn, self.spawn.shape[0], self.rev, self.num, fog, self.nb, self.nbn,
                                 self.queue))

    def unreachable(self, safe: int, mines=None) -> int:
        """Safe cells not 8-connected through safe cells to the spawn centre."""
        m = self.mines if mines is None else mines
        return int(kernels.unreachable_safe(m, self.nb, self.nbn, self.centre, safe, self.seen, self.queue))

    def measure(self, mines=None, fog=None, use_subset: bool = True) -> tuple[int, int, int]:
        """Numbers, R0 and R∞ of a layout (default the workspace's board, no
        fog), copied into the workspace; returns ``(safe, r0, revealed)``,
        leaving R∞ in ``self.rev`` and the proven mines in ``self.known``."""
        if mines is not None:
            self.mines[:] = mines
        self.fog[:] = 0 if fog is None else fog
        safe, r0, revealed = kernels.measure_into(self.grid, self.scratch, use_subset)
        return int(safe), int(r0), int(revealed)


def _cells(n: int, dtype) -> np.ndarray:
    return np.zeros(n, dtype)


def _fog_rule(fog) -> FogRule:
    regions, aim = fog
    return FogRule(regions=int(regions), aim=int(aim))
