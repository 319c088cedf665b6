"""A clean-room port of the generator, written from docs/conformance.md alone
(SPEC 11: "documents each stage so that a port can be written from the
document alone"). It imports nothing of ``boardgen_pipeline``: it reads the
kit's inputs and writes results in the kit's result schema, which
``boardgen conformance check`` then judges (tests/test_conformance_port.py).

It does what a GDScript port must: every 64-bit value lives in a signed
64-bit integer (``i64`` wraps each result as GDScript's ``int`` does), right
shifts are arithmetic and the logical shift, the unsigned comparison and the
unsigned remainder are built from them by the document's recipes, and
integer division only ever meets non-negative operands.

Covered: streams (``derive_at``, ``below``, ``open_stream``), the attempt
loop of rows without fog (plan, placement, shave, legality, gate, closure,
verdict, exit, board, measure), the measure entry point (with fog cells) and
the least-bad sequence. Not covered (left to the game's port): the fog step,
overlays, the skew, node maps, table validation and the legality predicate's
structural rules.
"""

from __future__ import annotations

import hashlib
import math
from collections import deque
from fractions import Fraction

MIN = -(2**63)


def i64(x: int) -> int:
    """Wrap to a signed 64-bit integer (GDScript's int arithmetic)."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def lsr(x: int, s: int) -> int:
    """Logical right shift by 1 <= s <= 63, from the arithmetic one."""
    return (x >> s) & ((1 << (64 - s)) - 1)


def ult(a: int, b: int) -> bool:
    return (a ^ MIN) < (b ^ MIN)


def umod(x: int, n: int) -> int:
    """x (an unsigned value held signed) mod n, 0 < n <= 2^63 - 1."""
    r = lsr(x, 1) % n
    r2 = r - (n - r) if r >= n - r else r + r
    out = r2 + (x & 1)
    return out - n if out >= n else out


GAMMA = -7046029254386353131
M1 = -4658895280553007687
M2 = -7723592293110705685


def unsigned(x: int) -> int:
    return x + (1 << 64) if x < 0 else x


class Stream:
    def __init__(self, label: str, scope: int, master_seed: int):
        name = b"boardgen-stream-v1" + b"\x00" + str(master_seed).encode() + b"\x00" + label.encode() + b"\x00" \
            + str(scope).encode()
        self.name = name
        self.state = i64(int.from_bytes(hashlib.sha256(name).digest()[:8], "little"))
        self.draws = 0
        self.values: list[int] = []

    def next(self) -> int:
        self.state = i64(self.state + GAMMA)
        z = self.state
        z = i64((z ^ lsr(z, 30)) * M1)
        z = i64((z ^ lsr(z, 27)) * M2)
        self.draws += 1
        return z ^ lsr(z, 31)

    def below(self, n: int) -> int:
        t = umod(i64(-n), n)
        while True:
            x = self.next()
            if not ult(x, t):
                v = umod(x, n)
                self.values.append(v)
                return v


# ------------------------------------------------------------------ boards


def neighbours(c: int, w: int, h: int) -> list[int]:
    x, y = c % w, c // w
    return [ny * w + nx for ny in (y - 1, y, y + 1) for nx in (x - 1, x, x + 1)
            if (nx, ny) != (x, y) and 0 <= nx < w and 0 <= ny < h]


def numbers(mines: set[int], w: int, h: int) -> list[int]:
    return [sum(1 for n in neighbours(c, w, h) if n in mines) for c in range(w * h)]


def spawn(w: int, h: int, side: int) -> list[int]:
    cx, cy = (w - 1) // 2, (h - 1) // 2
    return [c for c in range(w * h) if max(abs(c % w - cx), abs(c // w - cy)) <= side // 2]


def flood(start, revealed: set[int], num: list[int], fog: set[int], w: int, h: int) -> None:
    queue = deque()
    for c in start:
        if c not in revealed:
            revealed.add(c)
            if num[c] == 0 and c not in fog:
                queue.append(c)
    while queue:
        c = queue.popleft()
        for n in neighbours(c, w, h):
            if n not in revealed:
                revealed.add(n)
                if num[n] == 0 and n not in fog:
                    queue.append(n)


def r0_of(mines, w, h, side, fog=frozenset()) -> set[int]:
    num = numbers(mines, w, h)
    rev: set[int] = set()
    flood(spawn(w, h, side), rev, num, set(fog), w, h)
    return rev


def closure(mines: set[int], w: int, h: int, side: int, fog=frozenset(), subset=True):
    """R0, R∞ and the proven mines (docs/conformance.md section 4)."""
    fog = set(fog)
    num = numbers(mines, w, h)
    rev: set[int] = set()
    flood(spawn(w, h, side), rev, num, fog, w, h)
    r0 = set(rev)
    known: set[int] = set()
    while True:
        cons = []
        for c in sorted(rev):
            if c in fog:
                continue
            u = frozenset(n for n in neighbours(c, w, h) if n not in rev and n not in known)
            if u:
                cons.append((u, num[c] - sum(1 for n in neighbours(c, w, h) if n in known)))
        safe, new = set(), set()
        pairs = list(cons)
        if subset:
            pairs += [(ub - ua, mb - ma) for ua, ma in cons for ub, mb in cons if ua < ub]
        for cells, m in pairs:  # the single rule, on each constraint and each subset difference
            if m == 0:
                safe.update(cells)
            elif m == len(cells):
                new.update(cells)
        safe |= {f for f in fog if f not in rev and any(n in rev for n in neighbours(f, w, h))}
        safe -= rev
        new -= known
        if not safe and not new:
            return r0, rev, known
        known |= new
        flood(sorted(safe), rev, num, fog, w, h)


def unreachable(mines: set[int], w: int, h: int) -> int:
    centre = ((h - 1) // 2) * w + (w - 1) // 2
    safe = w * h - len(mines)
    seen = {centre}
    queue = deque([centre])
    while queue:
        c = queue.popleft()
        for n in neighbours(c, w, h):
            if n not in mines and n not in seen:
                seen.add(n)
                queue.append(n)
    return safe - len(seen)


def decimal_fraction(text: str) -> tuple[int, int]:
    whole, _, frac = text.partition(".")
    f = Fraction(int(whole + frac), 10 ** len(frac))
    return f.numerator, f.denominator


def generate(inputs: dict) -> dict:
    row, side = inputs["row"], inputs["header"]["spawn_side"]
    if row["fog_region_count"]:
        raise NotImplementedError("fog")
    w, h = row["board_width"], row["board_height"]
    cells = w * h
    cx, cy = (w - 1) // 2, (h - 1) // 2
    sq = set(spawn(w, h, side))
    candidates = [c for c in range(cells) if c not in sq]
    n = math.floor(float(row["mine_density"]) * float(cells - side * side) + 0.5)
    num_, den = decimal_fraction(row["inferability_target"])
    radius = side // 2 + row["shave_ring_radius"]
    stream = Stream("board_gen", int(inputs["scope"]), int(inputs["master_seed"]))
    attempts = []
    for k in range(1, row["max_gen_attempts"] + 1):
        state, before = stream.state, stream.draws
        stream.values = []
        work = list(candidates)
        for i in range(n):
            j = i + stream.below(len(work) - i)
            work[i], work[j] = work[j], work[i]
        placed = work[:n]
        removed = [c for c in placed if max(abs(c % w - cx), abs(c // w - cy)) <= radius]
        mines = {c for c in placed if c not in removed}
        safe = cells - len(mines)
        r0 = r0_of(mines, w, h, side)
        unreach = unreachable(mines, w, h)
        gate = ("free_open" if len(r0) == safe else "r0_cap" if len(r0) > row["r0_max_cap"]
                else "min_safe" if safe < row["min_safe_count"] else "unreachable" if unreach > 0 else None)
        revealed = core = known = None
        verdict = gate
        if gate is None:
            _, rinf, kn = closure(mines, w, h, side)
            revealed, core, known = len(rinf), len(rinf), len(kn)
            ok = revealed * den >= num_ * max(1, safe) and core * den >= num_ * max(1, safe)
            verdict = "passed" if ok else "below_target"
        attempts.append({"k": k, "state": state, "before": before, "draws": list(stream.values), "placed": placed,
                         "removed": removed, "mines": mines, "safe": safe, "r0": len(r0), "unreach": unreach,
                         "gate": gate, "revealed": revealed, "core": core, "known": known, "verdict": verdict,
                         "after": stream.draws})
        if verdict == "passed":
            break
    legal = [a for a in attempts if a["gate"] is None]
    if attempts[-1]["verdict"] == "passed":
        exit_, chosen = "passed", attempts[-1]
    elif legal:
        exit_, chosen = "best_legal", legal[0]
        for a in legal[1:]:
            if a["revealed"] * chosen["safe"] > chosen["revealed"] * a["safe"]:
                chosen = a
    else:
        exit_ = "least_bad"
        chosen = min(attempts, key=lambda a: (a["unreach"], max(0, row["min_safe_count"] - a["safe"]),
                                              max(0, a["r0"] - row["r0_max_cap"]), int(a["r0"] == a["safe"]), a["k"]))
    mines = chosen["mines"]
    numbers_ = numbers(mines, w, h)
    grid = ["".join("*" if y * w + x in mines else str(numbers_[y * w + x]) for x in range(w)) for y in range(h)]
    r0, rinf, kn = closure(mines, w, h, side)
    safe = chosen["safe"]
    return {
        "plan": {"mines_target": n, "target": [num_, den], "shave_radius": radius, "candidates": len(candidates),
                 "fog_aim": 0},
        "attempts": [{
            "k": a["k"], "stream": {"state": str(unsigned(a["state"])), "draws_before": a["before"]},
            "placement": {"draws": a["draws"], "placed": a["placed"]},
            "shave": {"removed": a["removed"], "mines_actual": n - len(a["removed"])},
            "legality": {"safe_count": a["safe"], "r0_size": a["r0"], "unreachable_safe": a["unreach"]},
            "fog": {"draws": [], "cells": [], "regions_placed": 0},
            "gate": {"failed": a["gate"]},
            "closure": {"revealed": a["revealed"], "revealed_core": a["core"], "known_mines": a["known"]},
            "verdict": {"verdict": a["verdict"], "draws_after": a["after"]},
        } for a in attempts],
        "exit": {"exit": exit_, "chosen_attempt": chosen["k"], "attempts_used": len(attempts),
                 **{f"{g}_rejected": sum(1 for a in attempts if a["gate"] == g)
                    for g in ("free_open", "r0_cap", "min_safe", "unreachable")}},
        "board": {"layout": "/".join(r.replace("0", ".").translate(str.maketrans("12345678", "........"))
                                     for r in grid),
                  "numbers": grid, "mines": sorted(mines), "fog": []},
        "measure": {"r0_size": len(r0), "revealed": len(rinf), "safe_count": safe, "revealed_core": len(rinf),
                    "safe_core": safe, "known_mines": len(kn), "unreachable_safe": chosen["unreach"],
                    "ring_removed": len(chosen["removed"]), "mines_actual": n - len(chosen["removed"])},
    }


def measure(w: int, h: int, mines: set[int], fog: set[int], side: int, rules: str) -> dict:
    r0, rinf, kn = closure(mines, w, h, side, fog, subset=rules == "single_subset")
    safe = w * h - len(mines)
    return {"r0_size": len(r0), "revealed": len(rinf), "safe_count": safe, "unreachable_safe": unreachable(mines, w, h),
            "known_mines": len(kn), "fog_cells": len(fog), "revealed_core": len(rinf - fog),
            "safe_core": safe - len(fog)}


def layout_cells(layout: str) -> tuple[int, int, set[int], set[int]]:
    rows = layout.split("/")
    w = len(rows[0])
    flat = "".join(rows)
    return w, len(rows), {i for i, ch in enumerate(flat) if ch == "*"}, {i for i, ch in enumerate(flat) if ch == "f"}


def run(v: dict, done: dict):
    kind, inp = v["kind"], v["inputs"]
    if kind == "derive_at":
        s = Stream(inp["label"], int(inp["scope"]), int(inp["master_seed"]))
        state = str(unsigned(s.state))
        return {"name_hex": s.name.hex(), "state": state, "outputs": [str(unsigned(s.next())) for _ in range(8)]}
    if kind == "below":
        s = Stream(inp["label"], int(inp["scope"]), int(inp["master_seed"]))
        values, after = [], []
        for bound in inp["bounds"]:
            for _ in range(inp["repeat"]):
                values.append(str(s.below(int(bound))))
                after.append(s.draws)
        return {"values": values, "draws_after": after}
    if kind == "open_stream":
        master = int(inp["master_seed"])
        opened = [Stream(label, k, master) for k, label in enumerate(inp["labels"])]
        return {"scopes": list(range(len(opened))), "states": [str(unsigned(s.state)) for s in opened],
                "states_by_derive_at": [str(unsigned(s.state)) for s in opened], "counter": len(opened)}
    if kind == "generate":
        return generate(inp)
    if kind == "measure":
        w, h, mines, fog = layout_cells(inp["layout"])
        return measure(w, h, mines, fog, inp["spawn_side"], inp["rules"])
    if kind == "measure_cells":
        return measure(inp["width"], inp["height"], set(inp["mines"]), set(inp["fog"]), inp["spawn_side"],
                       inp["rules"])
    raise NotImplementedError(kind)


def results(kit_files: dict[str, dict], manifest: dict) -> dict:
    """The port's results for every vector it covers."""
    done: dict = {}
    inputs_of: dict = {}
    for name in ("streams.json", "generate.json", "acceptance.json", "variants.json", "nodemaps.json"):
        for g in kit_files[name]["groups"]:
            for v in g["vectors"]:
                inputs_of[v["id"]] = v["inputs"]
                try:
                    if v["kind"] == "least_bad_sequence":
                        seq = []
                        for vid in v["inputs"]["vectors"]:
                            r, row = done[vid], inputs_of[vid]["row"]
                            a = r["attempts"][r["exit"]["chosen_attempt"] - 1]
                            safe, r0 = a["legality"]["safe_count"], a["legality"]["r0_size"]
                            seq.append([a["legality"]["unreachable_safe"], max(0, row["min_safe_count"] - safe),
                                        max(0, r0 - row["r0_max_cap"]), int(r0 == safe), a["k"]])
                        done[v["id"]] = {"badness": seq}
                    else:
                        done[v["id"]] = run(v, done)
                except (NotImplementedError, KeyError):
                    continue
    return {"format": "boardgen-conformance-results", "kit_version": manifest["kit_version"],
            "kit_digest": manifest["kit_digest"], "results": done}
