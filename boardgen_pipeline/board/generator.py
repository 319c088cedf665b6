"""The generator: parameter snapshot -> place -> generate-verify -> output
(SPEC 2.4-2.6; seed 000 "四阶段管线", "生成重试与成本闸"; seed 001 F5 and the
least-bad order).

``generate(level_index, node_depth, seed)`` is a pure function: it opens one
``board_gen`` stream and uses it for every attempt (retries never open a new
stream), checks legality before quality, and leaves through one of three
exits:

- ``passed``: the first legal attempt whose inferability meets the target
  (the earliest, not the best);
- ``best_legal``: none passed but some were legal: the legal attempt with the
  highest inferability, ties to the earliest; flagged ``degraded``, alert
  ``warning``;
- ``least_bad``: nothing legal: the attempt minimising
  ``(unreachable_safe, min_safe gap, cap excess, [R0 == S], k)``; flagged
  ``illegal``, alert ``critical``. A board is still returned: the player is
  never stuck, and the flag is never silent.

Wall-clock time never influences the output. The attempt loop runs in the
compiled kernels of ``kernels``; this module holds the rules for choosing
the exit and for the metrics record.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from boardgen_pipeline.board import difficulty, kernels
from boardgen_pipeline.board.geometry import Board, Geometry, format_layout, neighbour_arrays
from boardgen_pipeline.board.placement import candidate_cells
from boardgen_pipeline.board.rng import Stream, derive_at
from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.tables.board_gen import BoardGenRow, BoardGenTable, load_board_gen_dir, mines_target

EXITS = ("passed", "best_legal", "least_bad")


ALERTS = {"passed": "none", "best_legal": "warning", "least_bad": "critical"}


class Generated(NamedTuple):
    board: Board
    metrics: dict


@dataclass(frozen=True)
class Attempt:
    """What one attempt measured (``revealed`` is None when it was illegal:
    an illegal attempt is never scored)."""

    k: int
    ring_removed: int
    mines_actual: int
    safe_count: int
    r0_size: int
    unreachable_safe: int
    revealed: int | None
    min_safe_gap: int
    cap_excess: int
    free_open: bool
    revealed_core: int | None = None  # |R∞ - F| (fog rows only)
    safe_core: int | None = None  # |S - F|

    @property
    def legal(self) -> bool:
        return self.revealed is not None

    @property
    def inferability(self) -> Fraction:
        return Fraction(self.revealed or 0, max(1, self.safe_count))

    @property
    def inferability_core(self) -> Fraction:
        if self.safe_core is None:
            return self.inferability
        return Fraction(self.revealed_core or 0, max(1, self.safe_core))

    def passes(self, target: Fraction) -> bool:
        """Seed 001 F5: legal, and both inferability and its core meet the target."""
        return self.legal and self.inferability >= target and self.inferability_core >= target

    def badness(self) -> tuple:
        """The least-bad order of SPEC 2.5 (lexicographic, smaller is better)."""
        return (self.unreachable_safe, self.min_safe_gap, self.cap_excess, int(self.free_open), self.k)


@lru_cache(maxsize=1024)
def target_fraction(target: float) -> Fraction:
    """The target as the decimal the designer wrote (0.95 -> 19/20), so the
    pass test ``|R∞| / |S| >= target`` is exact integer arithmetic."""
    return Fraction(repr(float(target)))


def choose_exit(attempts: list[Attempt], target: Fraction) -> tuple[str, Attempt]:
    """Exit and chosen attempt among the attempts run (SPEC 2.5)."""
    for a in attempts:
        if a.passes(target):
            return "passed", a
    legal = [a for a in attempts if a.legal]
    if legal:
        best = max(a.inferability for a in legal)
        return "best_legal", next(a for a in legal if a.inferability == best)
    return "least_bad", min(attempts, key=Attempt.badness)


class _Workspaces(threading.local):
    """One :class:`kernels.Workspace` per board size and spawn side, reused
    across calls; each thread gets its own (the arrays are scratch)."""

    def get(self, width: int, height: int, spawn_side: int) -> kernels.Workspace:
        cache = self.__dict__.setdefault("cache", {})
        ws = cache.get((width, height, spawn_side))
        if ws is None:
            g = Geometry(width, height, spawn_side)
            ws = cache[(width, height, spawn_side)] = kernels.Workspace(
                width, height, g.spawn_cells, candidate_cells(g), *neighbour_arrays(width, height))
        return ws


_WORKSPACES = _Workspaces()


def generate_from_row(row: BoardGenRow, spawn_side: int, stream: Stream, dig_ap_cost: int = 1) -> Generated:
    """Run the generate-verify loop of one row on ``stream`` (advanced in place)."""
    if row.fog_region_count:
        return _generate_with_fog(row, spawn_side, stream, dig_ap_cost)
    # stage 1, parameter snapshot: N fixed first, the target as an exact fraction
    W, H = row.board_width, row.board_height
    ws = _WORKSPACES.get(W, H, spawn_side)
    n = mines_target(row.mine_density, W, H, spawn_side)
    target = target_fraction(row.inferability_target)
    shave = spawn_side // 2 + row.shave_ring_radius
    # stages 2-3, place and generate-verify: compiled, up to the first pass
    log = ws.run_attempts(stream, n, shave, row.min_safe_count, row.r0_max_cap, row.max_gen_attempts, target)
    # stage 4, output: the exit, and the chosen attempt's board and closure
    if log.passed:
        # the common case: the last attempt passed, and the workspace still
        # holds its board and closure
        exit_, k = "passed", log.ran - 1
        revealed, safe, r0, known = int(log.revealed[k]), int(log.safe[k]), int(log.r0[k]), log.known
    else:
        def unreachable(k):
            ws.place(int(log.state[k]), n, shave)
            return ws.unreachable(ws.numbers())

        exit_, chosen = choose_exit(_attempts(log, row, unreachable), target)
        k = chosen.k - 1
        # replay the chosen attempt from the stream state recorded at its start
        ws.place(int(log.state[k]), n, shave)
        safe, r0, revealed = ws.measure()
        known = int(ws.known.sum())
    mines = ws.mines.tobytes()
    metrics = metrics_record(
        row, stream, n, revealed=revealed, safe=safe, revealed_core=revealed, safe_core=safe, r0=r0,
        removed=int(log.removed[k]), unreachable=max(0, int(log.unreachable[k])), known=known,
        attempts_used=log.ran, rejections=log.rejected, chosen=k + 1, exit_=exit_, layout=fast_layout(mines, W))
    board = Board(W, H, spawn_side, mines)
    return Generated(board, {**metrics, **difficulty.figures(board)})


def metrics_record(row: BoardGenRow, stream: Stream, n: int, *, revealed: int, safe: int, revealed_core: int,
                   safe_core: int, r0: int, removed: int, unreachable: int, known: int, attempts_used: int,
                   rejections: dict, chosen: int, exit_: str, layout: str, fog=None, budget=None) -> dict:
    """The metrics record of one board (SPEC 2.6, with seed 001's fog
    metrics of SPEC 5; rows without fog report them as 0 and core =
    inferability). Field names are a contract: ``generate --json`` and the
    warehouse carry them as they are."""
    W, H = row.board_width, row.board_height
    return {
        "metric_version": METRIC_VERSION,
        "inferability": revealed / safe,
        "revealed": revealed,
        "safe_count": safe,
        "inferability_core": revealed_core / max(1, safe_core),
        "revealed_core": revealed_core,
        "safe_core": safe_core,
        "r0_size": r0,
        "mines_target": n,
        "mines_actual": n - removed,
        "ring_removed": removed,
        "unreachable_safe": unreachable,
        "known_mines": known,
        "attempts_used": attempts_used,
        **rejections,
        "chosen_attempt": chosen,
        "exit": exit_,
        "degraded": exit_ == "best_legal",
        "illegal": exit_ == "least_bad",
        "alert": ALERTS[exit_],
        "board_type": row.board_type,
        "inferability_target": row.inferability_target,
        "level_index": row.level_index,
        "node_depth": row.node_depth,
        "row_key": row.key_text,
        "label": stream.label,
        "scope": stream.scope,
        "master_seed": stream.master_seed,
        "width": W,
        "height": H,
        "fog_cells": len(fog.cells) if fog else 0,
        "fog_ratio": len(fog.cells) / (W * H) if fog else 0.0,
        "fog_regions_placed": fog.regions_placed if fog else 0,
        "fog_shortfall": fog.shortfall if fog else 0,
        "delta_budget_fog": budget.delta_budget_fog if budget else 0,
        "fog_burden_ratio": budget.fog_burden_ratio if budget else 0.0,
        "layout": layout,
    }


_LAYOUT_CHARS = bytes.maketrans(b"\x00\x01", b".*")


def fast_layout(mines: bytes, width: int) -> str:
    """``format_layout`` for boards without fog, without a per-cell loop."""
    text = mines.translate(_LAYOUT_CHARS).decode("ascii")
    return "/".join(text[i : i + width] for i in range(0, len(text), width))


def _attempts(log: kernels.AttemptLog, row: BoardGenRow, unreachable=None) -> list[Attempt]:
    """The attempt records of a kernel run. ``unreachable(k)`` supplies the
    unreachable count the kernel skipped (-1: an earlier gate rejected the
    attempt); it is only needed to rank attempts for the least-bad exit."""
    if unreachable is not None and not (log.revealed >= 0).any():
        for k in range(log.ran):
            if log.unreachable[k] < 0:
                log.unreachable[k] = unreachable(k)
    return [
        Attempt(
            k=k + 1,
            ring_removed=int(log.removed[k]),
            mines_actual=int(log.mines[k]),
            safe_count=int(log.safe[k]),
            r0_size=int(log.r0[k]),
            unreachable_safe=max(0, int(log.unreachable[k])),
            revealed=None if log.revealed[k] < 0 else int(log.revealed[k]),
            min_safe_gap=max(0, row.min_safe_count - int(log.safe[k])),
            cap_excess=max(0, int(log.r0[k]) - row.r0_max_cap),
            free_open=int(log.r0[k]) == int(log.safe[k]),
        )
        for k in range(log.ran)
    ]


def generate(
    level_index: int,
    node_depth: int,
    seed: int | Stream,
    *,
    master_seed: int = 0,
    table: BoardGenTable | None = None,
    tables_dir: Path | str | None = None,
) -> Generated:
    """A board for node ``(level_index, node_depth)``.

    ``seed`` is the ``board_gen`` scope under ``master_seed``
    (``derive_at("board_gen", seed, master_seed)``), or an already opened
    stream (``SeedSpace.open_stream("board_gen")``). The row is resolved by
    the floor rule and snapshotted for the whole call."""
    table = table or load_board_gen_dir(tables_dir)
    row = table.resolve(level_index, node_depth)
    stream = seed if isinstance(seed, Stream) else derive_at("board_gen", seed, master_seed)
    out = generate_from_row(row, table.spawn_side, stream, table.header.dig_ap_cost)
    out.metrics["level_index"] = level_index
    out.metrics["node_depth"] = node_depth
    return out


def first_failed_gate(a: Attempt) -> str | None:
    """The gate that rejected an attempt, in ``kernels.GATE_ORDER``."""
    failed = {"r0_cap": a.cap_excess > 0, "free_open": a.free_open, "min_safe": a.min_safe_gap > 0,
              "unreachable": a.unreachable_safe > 0}
    return next((g for g in kernels.GATE_ORDER if failed[g]), None)


def rejection_counts(attempts: list[Attempt]) -> dict:
    """Rejected attempts per gate (each counted once, under its first failed
    gate): the four counts add up to the illegal attempts."""
    gates = [first_failed_gate(a) for a in attempts]
    return {
        "r0_cap_rejected": gates.count("r0_cap"),
        "unreachable_rejected": gates.count("unreachable"),
        "free_open_rejected": gates.count("free_open"),
        "min_safe_rejected": gates.count("min_safe"),
    }


def legality_reasons(measure, min_safe_count: int, r0_max_cap: int) -> list[str]:
    """Why a measured layout is illegal (SPEC 2.4), in the order of the
    least-bad key; empty when legal. The attempt loop applies the same gates
    in ``kernels.run_attempts``."""
    reasons = []
    if measure.unreachable_safe > 0:
        reasons.append("unreachable")
    if measure.safe_count < min_safe_count:
        reasons.append("min_safe")
    if measure.r0_size > r0_max_cap:
        reasons.append("r0_cap")
    if measure.r0_size == measure.safe_count:
        reasons.append("free_open")
    return reasons


def _generate_with_fog(row: BoardGenRow, spawn_side: int, stream: Stream, dig_ap_cost: int) -> Generated:
    """The attempt loop for rows with fog (SPEC 5): every attempt places its
    mines, then its fog from the same stream, then checks legality and
    measures with fog. Runs in Python around the compiled kernels."""
    from boardgen_pipeline.board.fog import fog_budget, place_fog

    W, H = row.board_width, row.board_height
    ws = _WORKSPACES.get(W, H, spawn_side)
    n = mines_target(row.mine_density, W, H, spawn_side)
    target = target_fraction(row.inferability_target)
    shave = spawn_side // 2 + row.shave_ring_radius
    attempts: list[Attempt] = []
    layouts: list[tuple[bytes, object]] = []
    for k in range(1, row.max_gen_attempts + 1):
        # place the mines, then the fog, from the one stream
        removed, stream.state, stream.draws = ws.place(stream.state, n, shave, stream.draws)
        safe = ws.numbers()
        ws.fog[:] = 0
        r0 = ws.flood_r0()
        r0_cells = np.flatnonzero(ws.rev).tolist()
        unreach = ws.unreachable(safe)
        mines = ws.mines.tobytes()
        fog = place_fog(stream, mines, ws.num.tolist(), r0_cells, W, H, row.fog_region_count, row.fog_target_ratio)
        # legality before quality: an illegal attempt is never measured
        legal = unreach == 0 and safe >= row.min_safe_count and r0 != safe and r0 <= row.r0_max_cap
        revealed = revealed_core = None
        if legal:
            ws.fog[list(fog.cells)] = 1
            _, _, revealed = ws.measure(ws.mines, ws.fog)
            revealed_core = revealed - int((ws.rev & ws.fog).sum())
        a = Attempt(k, removed, n - removed, safe, r0, unreach, revealed,
                    max(0, row.min_safe_count - safe), max(0, r0 - row.r0_max_cap), r0 == safe,
                    revealed_core, safe - len(fog.cells))
        attempts.append(a)
        layouts.append((mines, fog))
        if a.passes(target):
            break
    exit_, chosen = choose_exit(attempts, target)
    mines, fog = layouts[chosen.k - 1]
    m = np.frombuffer(mines, dtype=np.uint8).copy()
    f = np.zeros(W * H, np.uint8)
    f[list(fog.cells)] = 1
    safe, r0, revealed = ws.measure(m, f)
    revealed_core = revealed - int((ws.rev & f).sum())
    safe_core = safe - len(fog.cells)
    known = int(ws.known.sum())
    numbers = ws.num.tolist()
    # the fog budget reads R0 as the player opens it, through no fog
    ws.fog[:] = 0
    ws.flood_r0()
    budget = fog_budget(mines, numbers, np.flatnonzero(ws.rev).tolist(), fog.cells, W, H, dig_ap_cost)
    board = Board(W, H, spawn_side, mines, fog.cells)
    metrics = metrics_record(
        row, stream, n, revealed=revealed, safe=safe, revealed_core=revealed_core, safe_core=safe_core, r0=r0,
        removed=chosen.ring_removed, unreachable=chosen.unreachable_safe, known=known,
        attempts_used=len(attempts), rejections=rejection_counts(attempts), chosen=chosen.k, exit_=exit_,
        layout=format_layout(mines, W, H, fog.cells), fog=fog, budget=budget)
    return Generated(board, {**metrics, **difficulty.figures(board)})


def warm_up() -> None:
    """Compile (or load from numba's on-disk cache) every kernel the
    generator uses: the attempt loop, the fog path, the replay and the
    measure. Calling it once before starting worker processes lets them load
    the cache instead of compiling side by side."""
    base = dict(level_index=1, node_depth=0, board_width=8, board_height=8, mine_density=0.2,
                inferability_target=0.85, min_safe_count=1, board_type="dungeon", shave_ring_radius=1,
                r0_max_cap=32)
    for extra in ({"max_gen_attempts": 2}, {"max_gen_attempts": 1, "r0_max_cap": 9},
                  {"max_gen_attempts": 1, "fog_region_count": 1, "fog_target_ratio": 0.05}):
        generate_from_row(BoardGenRow(**{**base, **extra}), 3, derive_at("board_gen", 0))
