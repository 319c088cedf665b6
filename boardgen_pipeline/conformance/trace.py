"""The attempt loop traced, stage by stage, by the readable references
(SPEC 2.2-2.5 and 5; seed 000 "四阶段管线"; seed 001 AC-4, F1-F5; SPEC 11:
the kit's per-attempt vectors).

The generator runs compiled (``board.kernels``); the kit must hold what a
port computes step by step, so its traces come from the readable twins the
suite already holds equal to the kernels: ``placement.draw_placed`` and
``placement.shave``, ``solver`` (R0, R∞, the unreachable count), ``fog``
(the fog step and its budget) and ``generator.choose_exit``. Every bounded
draw goes through a :class:`TracingStream`, so each attempt records the
stream state it started from and the values its draws gave.

:func:`trace_row` then asks the compiled generator for the same board
(``generate_batch_from_row``) and refuses to give a trace that differs from
it in the board, the exit, the chosen attempt or ``attempts_used``
(:class:`TwinsDisagree`): the kit never pins what the product does not do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from boardgen_pipeline.board import fog as fog_ref
from boardgen_pipeline.board import placement, solver
from boardgen_pipeline.board.generator import Attempt, choose_exit, generate_batch_from_row, target_fraction
from boardgen_pipeline.board.geometry import Geometry, format_layout, numbers_of
from boardgen_pipeline.board.kernel_args import GATE_ORDER
from boardgen_pipeline.board.rng import Stream, derive_at
from boardgen_pipeline.tables.board_gen import BoardGenRow, mines_target, round_half_up


@dataclass
class TracingStream(Stream):
    """A :class:`Stream` that keeps the value of every ``below(n)`` it gave."""

    bounded: list[int] = field(default_factory=list)

    def below(self, n: int) -> int:
        value = super().below(n)
        self.bounded.append(value)
        return value


def tracing(stream: Stream) -> TracingStream:
    return TracingStream(stream.label, stream.scope, stream.master_seed, stream.state, stream.draws)


class TwinsDisagree(AssertionError):
    """The readable trace and the compiled generator gave different boards."""


@dataclass(frozen=True)
class Plan:
    """Stage 1, the row's snapshot in integers (what a port derives from the
    row before its first draw)."""

    mines_target: int
    target: Fraction
    shave_radius: int
    candidates: int
    fog_aim: int

    def as_kit(self) -> dict:
        return {"mines_target": self.mines_target, "target": [self.target.numerator, self.target.denominator],
                "shave_radius": self.shave_radius, "candidates": self.candidates, "fog_aim": self.fog_aim}


def plan_of(row: BoardGenRow, spawn_side: int) -> Plan:
    W, H = row.board_width, row.board_height
    aim = round_half_up(row.fog_target_ratio * W * H) if row.fog_region_count else 0
    return Plan(mines_target(row.mine_density, W, H, spawn_side), target_fraction(row.inferability_target),
                spawn_side // 2 + row.shave_ring_radius, W * H - spawn_side**2, aim)


def meets(revealed: int, safe: int, target: Fraction) -> bool:
    """The pass test ``revealed / max(1, safe) >= target``, in integers."""
    return revealed * target.denominator >= target.numerator * max(1, safe)


def failed_gates(safe: int, r0: int, unreachable: int, row: BoardGenRow) -> list[str]:
    """Every legality gate an attempt fails, in the gates' order (its gate: the first)."""
    failed = {"free_open": r0 == safe, "r0_cap": r0 > row.r0_max_cap, "min_safe": safe < row.min_safe_count,
              "unreachable": unreachable > 0}
    return [name for name in GATE_ORDER if failed[name]]


@dataclass
class AttemptTrace:
    k: int
    state: int
    draws_before: int
    placement_draws: list[int]
    placed: list[int]
    removed: list[int]
    mines: bytes
    safe: int
    r0: int
    unreachable: int
    fog_draws: list[int]
    fog_cells: tuple[int, ...]
    fog_regions_placed: int
    gate: str | None
    revealed: int | None
    revealed_core: int | None
    known: int | None
    verdict: str
    draws_after: int
    fog_step: fog_ref.FogResult | None = None  # how the fog step went (the kit's flags read it)

    def attempt(self, row: BoardGenRow) -> Attempt:
        fog = bool(row.fog_region_count)
        return Attempt(k=self.k, ring_removed=len(self.removed), mines_actual=len(self.placed) - len(self.removed),
                       safe_count=self.safe, r0_size=self.r0, unreachable_safe=self.unreachable,
                       revealed=self.revealed, min_safe_gap=max(0, row.min_safe_count - self.safe),
                       cap_excess=max(0, self.r0 - row.r0_max_cap), free_open=self.r0 == self.safe,
                       revealed_core=self.revealed_core if fog else None,
                       safe_core=self.safe - len(self.fog_cells) if fog else None)

    def as_kit(self) -> dict:
        """The attempt's stages in the order a port computes them."""
        return {
            "k": self.k,
            "stream": {"state": str(self.state), "draws_before": self.draws_before},
            "placement": {"draws": self.placement_draws, "placed": self.placed},
            "shave": {"removed": self.removed, "mines_actual": len(self.placed) - len(self.removed)},
            "legality": {"safe_count": self.safe, "r0_size": self.r0, "unreachable_safe": self.unreachable},
            "fog": {"draws": self.fog_draws, "cells": list(self.fog_cells), "regions_placed": self.fog_regions_placed},
            "gate": {"failed": self.gate},
            "closure": {"revealed": self.revealed, "revealed_core": self.revealed_core, "known_mines": self.known},
            "verdict": {"verdict": self.verdict, "draws_after": self.draws_after},
        }


def trace_attempt(stream: TracingStream, row: BoardGenRow, spawn_side: int, plan: Plan, k: int) -> AttemptTrace:
    """One attempt of SPEC 2.5 (with SPEC 5's fog step on a fog row)."""
    W, H = row.board_width, row.board_height
    g = Geometry(W, H, spawn_side)
    state, draws_before, mark = stream.state, stream.draws, len(stream.bounded)
    placed = placement.draw_placed(stream, g, plan.mines_target)
    placement_draws = stream.bounded[mark:]
    mines, removed = placement.shave(placed, g, row.shave_ring_radius)
    numbers = numbers_of(mines, W, H)
    r0 = solver.reveal_r0(mines, W, H, spawn_side)
    safe = W * H - sum(mines)
    unreachable = solver.unreachable_safe(mines, W, H)
    fog_cells: tuple[int, ...] = ()
    regions = 0
    placed_fog = None
    mark = len(stream.bounded)
    if row.fog_region_count:
        # seed 001: the fog step is part of every attempt, legal or not, right after the mines
        placed_fog = fog_ref.place_fog(stream, mines, numbers, r0, W, H, row.fog_region_count, row.fog_target_ratio)
        fog_cells, regions = placed_fog.cells, placed_fog.regions_placed
    fog_draws = stream.bounded[mark:]
    gate = next(iter(failed_gates(safe, len(r0), unreachable, row)), None)
    revealed = core = known = None
    verdict = gate
    if gate is None:  # legality before quality: an illegal attempt is never measured
        c = solver.closures(mines, W, H, spawn_side, fog=fog_cells)
        revealed, known = len(c.r_infinity), len(c.known_mines)
        core = len(c.r_infinity - set(fog_cells))
        ok = meets(revealed, safe, plan.target) and meets(core, safe - len(fog_cells), plan.target)
        verdict = "passed" if ok else "below_target"
    return AttemptTrace(k, state, draws_before, placement_draws, placed, removed, mines, safe, len(r0), unreachable,
                        fog_draws, fog_cells, regions, gate, revealed, core, known, verdict, stream.draws, placed_fog)


@dataclass
class BoardTrace:
    """Every attempt run, the exit and the board of one generate call."""

    row: BoardGenRow
    spawn_side: int
    scope: int
    master_seed: int
    plan: Plan
    attempts: list[AttemptTrace]
    exit: str
    chosen: int
    board: dict
    measure: dict

    def as_kit(self) -> dict:
        rejected = {f"{name}_rejected": sum(1 for a in self.attempts if a.gate == name) for name in GATE_ORDER}
        return {
            "plan": self.plan.as_kit(),
            "attempts": [a.as_kit() for a in self.attempts],
            "exit": {"exit": self.exit, "chosen_attempt": self.chosen, "attempts_used": len(self.attempts),
                     **rejected},
            "board": self.board,
            "measure": self.measure,
        }


def _board_of(a: AttemptTrace, W: int, H: int) -> dict:
    numbers = numbers_of(a.mines, W, H)
    fog = set(a.fog_cells)
    rows = ["".join("*" if a.mines[y * W + x] else ("f" if y * W + x in fog else str(numbers[y * W + x]))
                    for x in range(W)) for y in range(H)]
    return {"layout": format_layout(a.mines, W, H, a.fog_cells), "numbers": rows,
            "mines": [c for c in range(W * H) if a.mines[c]], "fog": list(a.fog_cells)}


def _measure_of(a: AttemptTrace, row: BoardGenRow, spawn_side: int) -> dict:
    """What the chosen board measures (whatever its legality: a board that did
    not pass is measured as it is returned)."""
    W, H = row.board_width, row.board_height
    c = solver.closures(a.mines, W, H, spawn_side, fog=a.fog_cells)
    fog = set(a.fog_cells)
    out = {"r0_size": len(c.r0), "revealed": len(c.r_infinity), "safe_count": a.safe,
           "revealed_core": len(c.r_infinity - fog), "safe_core": a.safe - len(fog),
           "known_mines": len(c.known_mines), "unreachable_safe": a.unreachable, "ring_removed": len(a.removed),
           "mines_actual": len(a.placed) - len(a.removed)}
    if row.fog_region_count:
        numbers = numbers_of(a.mines, W, H)
        r0 = solver.reveal_r0(a.mines, W, H, spawn_side)
        budget = fog_ref.fog_budget(a.mines, numbers, r0, a.fog_cells, W, H)
        out.update(fog_regions_placed=a.fog_regions_placed, fog_shortfall=row.fog_region_count - a.fog_regions_placed,
                   fog_unpaid=budget.unpaid, fog_paid=budget.paid_denominator)
    return out


def trace_board(row: BoardGenRow, spawn_side: int, scope: int, master_seed: int = 0) -> BoardTrace:
    """``generate`` of ``row`` on ``derive_at("board_gen", scope, master_seed)``,
    every attempt traced by the readable references."""
    plan = plan_of(row, spawn_side)
    stream = tracing(derive_at("board_gen", scope, master_seed))
    attempts: list[AttemptTrace] = []
    for k in range(1, row.max_gen_attempts + 1):
        attempts.append(trace_attempt(stream, row, spawn_side, plan, k))
        if attempts[-1].verdict == "passed":
            break
    exit_, chosen = choose_exit([a.attempt(row) for a in attempts], plan.target)
    a = attempts[chosen.k - 1]
    return BoardTrace(row, spawn_side, scope, master_seed, plan, attempts, exit_, chosen.k,
                      _board_of(a, row.board_width, row.board_height), _measure_of(a, row, spawn_side))


def trace_row(row: BoardGenRow, spawn_side: int, scopes, master_seed: int = 0) -> list[BoardTrace]:
    """:func:`trace_board` of every scope, each held to the compiled
    generator's board of the same scope (:class:`TwinsDisagree` otherwise)."""
    scopes = list(scopes)
    traces = [trace_board(row, spawn_side, s, master_seed) for s in scopes]
    compiled = generate_batch_from_row(row, spawn_side, scopes, master_seed, figures=False)
    for t, (_, m) in zip(traces, compiled, strict=True):
        ours = (t.board["layout"], t.exit, t.chosen, len(t.attempts), t.measure["revealed"], t.measure["r0_size"])
        theirs = (m["layout"], m["exit"], m["chosen_attempt"], m["attempts_used"], m["revealed"], m["r0_size"])
        if ours != theirs:
            raise TwinsDisagree(f"row {row.key_text} scope {t.scope} master seed {master_seed}: the readable trace "
                                f"gives {ours[1:]} and the compiled generator {theirs[1:]}"
                                + ("" if ours[0] == theirs[0] else " (and another board)"))
    return traces
