"""Sections 5 and 6 of docs/conformance.md: the variant overlay of a board
and the resource-face skew."""

from __future__ import annotations

from . import boards
from .boards import Grid
from .gdint import to_int
from .readings import rd
from .streams import Stream


def pools(inp: dict, variation: dict) -> tuple[list[str], list[str]]:
    eligible = [t for t in variation["types"] if t["unlock_level"] <= inp["level_index"]
                and (not t["board_types"] or inp["board_type"] in t["board_types"])]
    whole_board = inp["is_boss"] or rd().global_pool_on_any_board
    return ([t["id"] for t in eligible if t["scope"] == "global" and whole_board],
            [t["id"] for t in eligible if t["scope"] == "region"])




def _prune(g: Grid, free: set[int], pack_min: int) -> set[int]:
    return {c for comp in boards.fragments(g, free) if len(comp) >= pack_min for c in comp}


def overlay(inp: dict, variation: dict) -> dict:
    global_pool, region_pool = pools(inp, variation)
    out = {"pools": {"global": global_pool, "region": region_pool}, "global_variant": None, "draws": [],
           "variant_type": None, "candidates": 0, "target": 0, "packs": [], "shortfall": 0, "cells": []}
    if global_pool:
        out["global_variant"] = global_pool[0]
        out["variant_type"] = None if rd().global_variant_type_null else global_pool[0]
        return out
    w, h, mines, fog = boards.parse_layout(inp["layout"])
    g = Grid(w, h, rd().overlay_spawn_side or inp["spawn_side"])
    num = g.numbers(mines)
    r = boards.r0(g, mines, num, frozenset() if rd().overlay_fog_chains else fog)
    cands = [c for c in range(g.n) if c not in mines and c not in r and c not in fog]
    if not region_pool:
        if rd().no_variant_counts_candidates:
            out["candidates"] = len(cands)
        return out
    stream = Stream(inp["label"], to_int(inp["scope"]), to_int(inp["master_seed"]))
    out["variant_type"] = region_pool[stream.below(len(region_pool))]
    pnum, pden = variation["percent_of_cells"]
    nc = len(cands)
    target = min(nc, (2 * nc * pnum + 100 * pden) // (200 * pden) + (inp["level_index"] - 1)
                 * variation["per_level_bonus"])
    pmin, pmax = variation["pack_min"], variation["pack_max"]
    free = _prune(g, set(cands), pmin)
    packs, placed = [], 0
    while target - placed >= pmin and free:
        remaining = target - placed
        span = list(range(pmin, min(pmax, remaining) + 1))
        sizes = [s for s in span if remaining - s == 0 or remaining - s >= pmin] or span
        size = sizes[stream.below(len(sizes))]
        ordered = sorted(free)
        pack = [ordered[stream.below(len(ordered))]]
        while len(pack) < size:
            frontier = sorted({n for c in pack for n in g.nbrs[c] if n in free and n not in pack})
            if not frontier:
                break
            pack.append(frontier[stream.below(len(frontier))])
        gone = set(pack)
        for c in pack:
            gone.update(g.nbrs[c])
        free = _prune(g, free - gone, pmin)
        if rd().short_pack_dropped and len(pack) < size:
            continue
        packs.append(sorted(pack))
        placed += len(pack)
    out.update(draws=stream.values, candidates=nc, target=target, packs=packs, shortfall=target - placed,
               cells=sorted(c for p in packs for c in p))
    return out


def skew(value: int, resources: list[dict]) -> dict:
    weights = [r["weight"] for r in resources]
    if value == 0:
        return {"weights": weights, "total": sum(weights)}
    family = [r["family"] for r in resources]
    offense = sum(w for w, f in zip(weights, family) if f == "offense")
    removed = sum(w * value for w, f in zip(weights, family) if f == "survival")  # over 100
    d = 100 * offense
    movable = [i for i, f in enumerate(family) if f != "whitelist"]
    ideal = {i: weights[i] * (100 - value) * offense if family[i] == "survival"
             else 100 * weights[i] * offense + weights[i] * removed for i in movable}
    out = list(weights)
    for i in movable:
        out[i] = ideal[i] // d
    left = sum(weights[i] for i in movable) - sum(out[i] for i in movable)
    later = -1 if rd().skew_ties_to_later else 1
    for i in sorted(movable, key=lambda i: (-(ideal[i] % d), later * i))[:left]:
        out[i] += 1
    return {"weights": out, "total": sum(out)}
