"""The kernels read their arrays by name, and every name holds what it says
(not, as before, by position and luck).

``run_batch`` took 46 positional arrays, fed in the same order from a tuple
the workspace built: two of one kind swapped (a board's fog for its R0,
R∞ for the proven mines, the spawn square for the candidates, one scratch
array for a shorter one) compute other boards without an error, or write
past an array's end. The kernels now take the workspace as named tuples
(``kernels.Grid``, ``Scratch``, ``FogScratch``, ``Plan``, ``FogRule``,
``Attempts``). These tests pin each name to its meaning:

- every field has the dtype and size its kernels index it with, and no two
  fields share memory;
- after a generated board, a replayed attempt or a measured layout, each
  field the caller reads holds exactly what the readable references compute
  for it (``placement.place_mines``, the numbers, R0, ``fog.place_fog``,
  ``solver.closures``, ``fog.chain0``), and every attempt's gate and pass
  verdict is the reference's for the row's numbers.

A field swapped anywhere - where the workspace builds a tuple, or where a
kernel hands arrays to another - fails here under the field's name. The
boards are not square, so a width taken for a height (or one centre
coordinate for the other) fails too, and one is wider than the bit rows,
so the cell-by-cell closure and fog step are held as well.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from boardgen_pipeline.board import fog, kernels
from boardgen_pipeline.board.closure_rows import MAX_WIDTH, PAD
from boardgen_pipeline.board.fog_rows import FOG_BITS_ROWS
from boardgen_pipeline.board.generator import _WORKSPACES
from boardgen_pipeline.board.geometry import Geometry, neighbour_table, numbers_of
from boardgen_pipeline.board.placement import candidate_cells, place_mines
from boardgen_pipeline.board.rng import Stream, derive_at
from boardgen_pipeline.board.solver import closures, reveal_r0, spawn_square, unreachable_safe
from boardgen_pipeline.tables.board_gen import mines_target, round_half_up

# width, height, spawn side, density, shave ring, min_safe, cap, fog regions, fog ratio, target: rows
# whose attempts meet the cap, min_safe and unreachable gates, legal boards below the target and
# passing ones
ROWS = [
    (13, 9, 3, 0.22, 1, 96, 60, 0, 0.0, Fraction(9, 10)),
    (9, 14, 5, 0.25, 0, 0, 55, 0, 0.0, Fraction(9, 10)),
    (15, 11, 3, 0.2, 1, 137, 75, 2, 0.06, Fraction(9, 10)),
    (MAX_WIDTH + 3, 6, 3, 0.17, 1, 307, 80, 3, 0.05, Fraction(1, 2)),  # past the bit rows: the cell versions
]
BUDGET = 6


def _kinds(W: int, H: int, side: int) -> dict:
    """The dtype and shape each field is indexed with (the kernels' contract,
    written out independently of the workspace)."""
    nc, spawn = W * H, side * side
    cells = {"u8": (np.uint8, (nc,)), "i32": (np.int32, (nc,)), "i64": (np.int64, (nc,))}
    u8, i32, i64 = cells["u8"], cells["i32"], cells["i64"]
    return {
        "grid": {"spawn": (np.int32, (spawn,)), "cand": (np.int32, (nc - spawn,)), "nb": (np.int32, (nc, 8)),
                 "nbn": i32, "widen": (np.uint64, (512,)), "partners": (np.int8, (512, 24)),
                 "partner_count": (np.int8, (512,))},
        "scratch": {"mines": u8, "num": i32, "rev": u8, "known": u8, "fog": u8, "seen": u8, "work": i32,
                    "queue": i32, "stack": i32, "fq": i32, "inq": u8, "cmask": i64, "cm": i32, "ccnt": i32,
                    "rows": (np.uint64, (2 * H,)), "bits": (np.uint64, (FOG_BITS_ROWS, H + 2 * PAD))},
        "fog_scratch": {"r0": u8, "allowed": u8, "wcount": (np.int32, (max(1, (W - 2) * (H - 2)),)),
                        "comp": i32, "buf": i32, "region": i32, "mark": i64, "chain": u8},
    }


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r[0]}x{r[1]}")
def test_every_field_has_the_kind_and_size_its_kernels_read(row):
    W, H, side = row[:3]
    ws = _WORKSPACES.get(W, H, side)
    g = ws.grid
    assert (g.width, g.height) == (W, H)
    assert (g.cx, g.cy, g.centre) == ((W - 1) // 2, (H - 1) // 2, ((H - 1) // 2) * W + (W - 1) // 2)
    arrays = []
    for part, kinds in _kinds(W, H, side).items():
        tup = getattr(ws, part)
        fields = {name for name in tup._fields if isinstance(getattr(tup, name), np.ndarray)}
        assert fields == set(kinds), part
        for name, (dtype, shape) in kinds.items():
            a = getattr(tup, name)
            assert (a.dtype, a.shape) == (np.dtype(dtype), shape), f"{part}.{name}"
            assert a.flags.c_contiguous, f"{part}.{name}"
            assert getattr(ws, name) is a  # ws.<field> is the tuple's array, not a copy
            arrays.append((f"{part}.{name}", a))
    for (na, a), (nb, b) in combinations(arrays, 2):
        assert not np.shares_memory(a, b), f"{na} and {nb} are one array"
    # the tables are the board's: the spawn square, the candidates in order, the neighbours
    assert g.spawn.tolist() == spawn_square(W, H, side)
    assert g.cand.tolist() == candidate_cells(Geometry(W, H, side))
    table = neighbour_table(W, H)
    assert [tuple(g.nb[c, : g.nbn[c]]) for c in range(W * H)] == [tuple(t) for t in table]


def _mask(cells, nc: int) -> list[int]:
    out = [0] * nc
    for c in cells:
        out[c] = 1
    return out


def _reference_attempt(state: int, row, n: int):
    """One attempt from stream state ``state`` by the readable references:
    ``(mines, removed, numbers, r0 without fog, fog cells, closures with fog,
    stream after)``."""
    W, H, side, _, ring, _, _, regions, ratio, _ = row
    stream = Stream("board_gen", 0, 0, state)
    mines, removed = place_mines(stream, Geometry(W, H, side), n, ring)
    numbers = numbers_of(mines, W, H)
    r0 = reveal_r0(mines, W, H, side)
    fog_cells = fog.place_fog(stream, mines, numbers, r0, W, H, regions, ratio).cells if regions else ()
    return mines, removed, numbers, r0, fog_cells, closures(mines, W, H, side, fog=fog_cells), stream


def _verdict(row, mines, r0, fog_cells, cl) -> str:
    """The first gate the attempt fails (``kernels.GATE_ORDER``), or
    ``passed`` / ``below target`` for a legal one."""
    W, H, _, _, _, min_safe, cap, _, _, target = row
    safe = W * H - sum(mines)
    failed = {"free_open": len(r0) == safe, "r0_cap": len(r0) > cap, "min_safe": safe < min_safe,
              "unreachable": unreachable_safe(mines, W, H) > 0}
    gate = next((g for g in kernels.GATE_ORDER if failed[g]), None)
    if gate:
        return gate
    core = len(cl.r_infinity - set(fog_cells))
    ok = (Fraction(len(cl.r_infinity), max(1, safe)) >= target
          and Fraction(core, max(1, safe - len(fog_cells))) >= target)
    return "passed" if ok else "below target"


def _assert_holds(ws, row, mines, numbers, r0, fog_cells, cl) -> None:
    """Each named array of the workspace holds what its name says."""
    W, H, *_ = row
    nc = W * H
    regions = row[7]
    assert ws.scratch.mines.tolist() == list(mines), "scratch.mines"
    assert ws.scratch.num.tolist() == numbers, "scratch.num"
    assert ws.scratch.fog.tolist() == _mask(fog_cells, nc), "scratch.fog"
    assert ws.scratch.rev.tolist() == _mask(cl.r_infinity, nc), "scratch.rev"
    assert ws.scratch.known.tolist() == _mask(cl.known_mines, nc), "scratch.known"
    if regions:  # the fog step's inputs and the budget's Chain0
        assert ws.fog_scratch.r0.tolist() == _mask(r0, nc), "fog_scratch.r0"
        assert ws.fog_scratch.chain.tolist() == _mask(fog.chain0(mines, numbers, r0, W, H), nc), \
            "fog_scratch.chain"


def _summary_of(row, removed, mines, r0, fog_cells, cl) -> dict:
    safe = row[0] * row[1] - sum(mines)
    return {"safe": safe, "r0": len(r0), "removed": removed, "revealed": len(cl.r_infinity),
            "known": len(cl.known_mines), "fog": len(fog_cells), "revealed_core": len(cl.r_infinity - set(fog_cells))}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r[0]}x{r[1]}")
def test_the_named_arrays_hold_what_the_references_compute(row):
    W, H, side, density, ring, min_safe, cap, regions, ratio, target = row
    ws = _WORKSPACES.get(W, H, side)
    n = mines_target(density, W, H, side)
    rule = (regions, round_half_up(ratio * W * H) if regions else 0)
    seen = set()
    for scope in range(6):
        stream = derive_at("board_gen", scope)
        log = ws.run_attempts(stream, n, side // 2 + ring, min_safe, cap, BUDGET, target, rule)
        verdicts = []
        for k in range(log.ran):
            mines, removed, numbers, r0, fog_cells, cl, after = _reference_attempt(int(log.state[k]), row, n)
            verdicts.append(_verdict(row, mines, r0, fog_cells, cl))
            # the attempt log: each column as its name says, each verdict the reference's
            assert (log.removed[k], log.mines[k], log.safe[k], log.r0[k], log.fog[k]) == \
                (removed, sum(mines), W * H - sum(mines), len(r0), len(fog_cells)), k
            assert (verdicts[k] == "passed") == (log.passed and k == log.ran - 1), (k, verdicts[k])
            legal = verdicts[k] in ("passed", "below target")
            assert log.revealed[k] == (len(cl.r_infinity) if legal else -1), k
        seen.update(verdicts)
        assert log.rejected == {f"{g}_rejected": verdicts.count(g) for g in
                                ("r0_cap", "unreachable", "free_open", "min_safe")}
        assert stream.state == after.state  # the stream stops after the last attempt run
        if log.passed:
            # the workspace keeps the passing board, field by field
            _assert_holds(ws, row, mines, numbers, r0, fog_cells, cl)
            expected = _summary_of(row, removed, mines, r0, fog_cells, cl)
            assert {k: int(log.summary[0][k]) for k in expected} == expected
        # the replay of the last attempt, passing or not, leaves the same board
        summary = ws.replay(int(log.state[log.ran - 1]), n, side // 2 + ring, rule)
        _assert_holds(ws, row, mines, numbers, r0, fog_cells, cl)
        expected = _summary_of(row, removed, mines, r0, fog_cells, cl)
        assert {k: int(summary[0][k]) for k in expected} == expected
        # and measuring that layout (with its fog) fills the same fields
        fog_mask = np.array(_mask(fog_cells, W * H), np.uint8)
        safe, r0_size, revealed = ws.measure(np.frombuffer(mines, np.uint8), fog_mask)
        assert (safe, r0_size, revealed) == (W * H - sum(mines), len(cl.r0), len(cl.r_infinity))
        assert ws.scratch.rev.tolist() == _mask(cl.r_infinity, W * H), "scratch.rev"
        assert ws.scratch.known.tolist() == _mask(cl.known_mines, W * H), "scratch.known"
    # the rows meet a gate, a legal board below the target and a passing one
    assert {"passed", "below target"} < seen, seen


def test_the_batch_writes_each_board_under_its_own_name():
    # run_batch's BatchResult: each board's mines and fog rows, its stream
    # state after, its attempt log, as the per-board loop gives them
    row = ROWS[2]
    W, H, side, density, ring, min_safe, cap, regions, ratio, target = row
    ws = _WORKSPACES.get(W, H, side)
    n = mines_target(density, W, H, side)
    rule = (regions, round_half_up(ratio * W * H))
    states = np.array([derive_at("board_gen", s).state for s in range(8)], np.uint64)
    res = ws.run_batch(states, n, side // 2 + ring, min_safe, cap, BUDGET, target, rule)
    for b in range(len(states)):
        stream = derive_at("board_gen", b)
        log = ws.run_attempts(stream, n, side // 2 + ring, min_safe, cap, BUDGET, target, rule)
        assert (int(res.state[b]), int(res.draws[b])) == (stream.state, stream.draws)
        assert res.summary[b].tolist() == log.summary[0].tolist()
        one = res.attempts(b)
        assert one.state.tolist() == log.state.tolist() and one.rejected == log.rejected
        if log.passed:
            assert res.mines[b].tolist() == ws.mines.tolist() and res.fog[b].tolist() == ws.fog.tolist()
