"""Section 3 of docs/conformance.md: one ``generate`` call, attempt by
attempt (placement, shave, legality, the fog step, gate, closure, verdict),
then the exit, the chosen board and its measure."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import boards, plan
from .boards import Grid
from .gdint import to_int
from .readings import rd
from .streams import Stream, u64


@dataclass
class Attempt:
    k: int
    state: int
    before: int
    draws: list[int]
    placed: list[int]
    removed: list[int]
    mines: set[int]
    num: list[int]
    safe: int
    r0: set[int]
    r0_size: int
    unreachable: int
    fog_draws: list[int] = field(default_factory=list)
    fog: set[int] = field(default_factory=set)
    fog_placed: int = 0
    gate: str | None = None
    revealed: int | None = None
    core: int | None = None
    known: int | None = None
    verdict: str = ""
    after: int = 0

    def badness(self, row: dict) -> list[int]:
        return [self.unreachable, max(0, row["min_safe_count"] - self.safe), max(0, self.r0_size - row["r0_max_cap"]),
                int(self.r0_size == self.safe)]


def fog_step(g: Grid, stream: Stream, a: Attempt, count: int, aim: int) -> None:
    """Step 5: the fog regions of one attempt."""
    near = set(a.r0)
    for c in a.r0:
        near.update(g.nbrs[c])
    allowed = {c for c in range(g.n) if c not in a.mines and a.num[c] > 0 and c not in near}
    total = min(aim, 8 * len(a.mines))
    base, extra = total // count, total % count
    mark = len(stream.values)
    blocks = (lambda c, fog: False) if rd().no_window_test else g.completes_window
    for i in range(count):
        s = base + (1 if i < extra else 0)
        if s == 0:
            continue
        free = allowed - a.fog
        room = _components(g, free)
        seeds = [c for c in sorted(free) if (rd().no_room_test or room[c] >= s) and not blocks(c, a.fog)]
        if not seeds or (not rd().no_fog_bound_skip and len(a.fog) + s > 8 * len(a.mines)):
            continue
        region = [seeds[stream.below(len(seeds))]]
        a.fog.add(region[0])
        while len(region) < s:
            frontier = sorted({n for c in region for n in g.nbrs[c] if n in allowed and n not in a.fog
                               and not blocks(n, a.fog)})
            if not frontier:
                break
            region.append(frontier[stream.below(len(frontier))])
            a.fog.add(region[-1])
        if len(region) < s and not rd().keep_short_regions:
            a.fog -= set(region)
        else:
            a.fog_placed += 1
    a.fog_draws = stream.values[mark:]


def _components(g: Grid, cells: set[int]) -> dict[int, int]:
    """Each cell of ``cells`` with the size of its piece."""
    return {c: len(piece) for piece in boards.fragments(g, cells) for c in piece}


def _failed(a: Attempt, row: dict) -> str | None:
    broken = {"free_open": a.r0_size == a.safe, "r0_cap": a.r0_size > row["r0_max_cap"],
              "min_safe": a.safe < row["min_safe_count"], "unreachable": a.unreachable > 0}
    return next((gate for gate in rd().gate_order if broken[gate]), None)


def _ratio_key(a: Attempt):
    if rd().best_legal_by_count:
        return (a.revealed, 1)
    if rd().best_legal_core_ratio:
        return (a.core, max(1, a.safe - len(a.fog)))
    return (a.revealed, max(1, a.safe))


def choose(attempts: list[Attempt], row: dict) -> tuple[str, Attempt]:
    """Step 9: the exit and the chosen attempt."""
    if attempts[-1].verdict == "passed":
        return "passed", attempts[-1]
    legal = [a for a in attempts if a.gate is None]
    if legal:
        if rd().best_legal_first:
            return "best_legal", legal[0]
        best = legal[0]
        for a in legal[1:]:
            (ra, sa), (rb, sb) = _ratio_key(a), _ratio_key(best)
            if ra * sb > rb * sa or (rd().best_legal_ties_to_latest and ra * sb == rb * sa):
                best = a
        return "best_legal", best
    order = rd().least_bad_order
    late = -1 if rd().least_bad_ties_to_latest else 1
    return "least_bad", min(attempts, key=lambda a: ([a.badness(row)[i] for i in order], late * a.k))


def run_attempt(g: Grid, stream: Stream, row: dict, p: dict, candidates: list[int], k: int) -> Attempt:
    state, before = stream.state, stream.draws
    mark = len(stream.values)
    work = list(candidates)
    n = p["mines_target"]
    for i in range(n):
        j = i + stream.below(len(work) - i)
        work[i], work[j] = work[j], work[i]
    placed = work[:n]
    removed = [c for c in placed if g.cheb(c) <= p["shave_radius"]]
    mines = set(placed) - set(removed)
    num = g.numbers(mines)
    r = boards.r0(g, mines, num)
    a = Attempt(k, state, before, stream.values[mark:], placed, removed, mines, num, g.n - len(mines), r,
                boards.r0_size(r, mines), boards.unreachable(g, mines))
    if row["fog_region_count"]:
        fog_step(g, stream, a, row["fog_region_count"], p["fog_aim"])
    a.gate = _failed(a, row)
    a.verdict = a.gate
    if a.gate is None:
        _, rinf, proven = boards.closure(g, mines, num, a.fog)
        a.revealed, a.core, a.known = len(rinf), len(rinf - a.fog), len(proven)
        num_t, den_t = p["target"]
        plain = a.revealed * den_t >= num_t * max(1, a.safe)
        core = a.core * den_t >= num_t * max(1, a.safe - len(a.fog))
        a.verdict = "passed" if plain and (core or rd().verdict_plain_only) else "below_target"
    a.after = stream.draws
    return a


def generate(inputs: dict) -> tuple[dict, Attempt]:
    row, side = inputs["row"], inputs["header"]["spawn_side"]
    w, h = row["board_width"], row["board_height"]
    g = Grid(w, h, side)
    spawn = set(g.spawn)
    candidates = [c for c in range(g.n) if c not in spawn]
    p = {"mines_target": plan.mines_target(row["mine_density"], g.n, side),
         "target": list(plan.fraction(row["inferability_target"])), "shave_radius": side // 2 + row["shave_ring_radius"],
         "candidates": len(candidates), "fog_aim": plan.fog_aim(row)}
    stream = Stream(inputs["label"], to_int(inputs["scope"]), to_int(inputs["master_seed"]))
    attempts: list[Attempt] = []
    for k in range(1, row["max_gen_attempts"] + 1):
        attempts.append(run_attempt(g, stream, row, p, candidates, k))
        if attempts[-1].verdict == "passed":
            break
    exit_, chosen = choose(attempts, row)
    return {"plan": p, "attempts": [_attempt_out(a, rd().signed_print) for a in attempts],
            "exit": {"exit": exit_, "chosen_attempt": chosen.k, "attempts_used": len(attempts),
                     **{f"{gate}_rejected": sum(1 for a in attempts if a.gate == gate)
                        for gate in ("free_open", "r0_cap", "min_safe", "unreachable")}},
            "board": _board(g, chosen), "measure": _measure(g, chosen, row)}, chosen


def _attempt_out(a: Attempt, signed: bool) -> dict:
    return {"k": a.k, "stream": {"state": u64(a.state, signed), "draws_before": a.before},
            "placement": {"draws": a.draws, "placed": a.placed},
            "shave": {"removed": a.removed, "mines_actual": len(a.mines)},
            "legality": {"safe_count": a.safe, "r0_size": a.r0_size, "unreachable_safe": a.unreachable},
            "fog": {"draws": a.fog_draws, "cells": sorted(a.fog), "regions_placed": a.fog_placed},
            "gate": {"failed": a.gate},
            "closure": {"revealed": a.revealed, "revealed_core": a.core, "known_mines": a.known},
            "verdict": {"verdict": a.verdict, "draws_after": a.after}}


def _board(g: Grid, a: Attempt) -> dict:
    def ch(c: int, digit: bool) -> str:
        return "*" if c in a.mines else "f" if c in a.fog else (str(a.num[c]) if digit else ".")

    rows = [range(y * g.w, (y + 1) * g.w) for y in range(g.h)]
    return {"layout": "/".join("".join(ch(c, False) for c in r) for r in rows),
            "numbers": ["".join(ch(c, True) for c in r) for r in rows],
            "mines": sorted(a.mines), "fog": sorted(a.fog)}


def _measure(g: Grid, a: Attempt, row: dict) -> dict:
    first, rinf, proven = boards.closure(g, a.mines, a.num, a.fog)
    out = {"r0_size": boards.r0_size(first, a.mines), "revealed": len(rinf), "safe_count": a.safe,
           "revealed_core": len(rinf - a.fog), "safe_core": a.safe - len(a.fog), "known_mines": len(proven),
           "unreachable_safe": a.unreachable, "ring_removed": len(a.removed), "mines_actual": len(a.mines)}
    count = row["fog_region_count"]
    if count:
        chain = boards.chain0(g, a.mines, a.num, a.r0, a.fog)
        zeros = max(0, count - min(plan.fog_aim(row), 8 * len(a.mines)))  # the regions of size 0
        short = count - a.fog_placed - (zeros if rd().shortfall_ignores_size_0 else 0)
        safe = {c for c in range(g.n) if c not in a.mines}
        out.update(fog_regions_placed=a.fog_placed, fog_shortfall=short, fog_unpaid=len(a.fog - chain),
                   fog_paid=max(1, len(safe - chain)))
    return out

