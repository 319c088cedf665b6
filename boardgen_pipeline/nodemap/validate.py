"""Template validation at load (SPEC 4 "Validation"; seed 004 "池内全部模板
加载期预校验（违规致命）", the fan-out rule "fanout_violation", the shop rule
"商店房每关恰 1、关底 Boss 前一位必经位", "内容纪律", and step 2's "商店房所在位
排除出候选槽位").

Every rule returns :class:`~boardgen_pipeline.errors.Violation` values; none
raises, so one load reports every broken rule of every template of every
pool. Each violation's ``row`` is ``<template id>/<node id>`` when a node is
to blame (the template id alone otherwise), and its message repeats the
template and node in words, so the report reads on its own.

Rules that need a sound premise (a unique entry for depths, a unique boss
and shop for the shop rules) are skipped when the premise is itself broken:
the broken premise is already reported, and a cascade of follow-on errors
would hide it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType

from boardgen_pipeline.errors import Violation
from boardgen_pipeline.nodemap import graph
from boardgen_pipeline.nodemap.model import (
    BOARD_TYPES,
    MAX_FANOUT,
    MAX_LAYER_WIDTH,
    NODE_TYPES,
    SLOT_TYPES,
    Pool,
    Template,
)


def _row(t: Template, node_id: int | None = None) -> str:
    return t.id if node_id is None else f"{t.id}/{node_id}"


def _where(t: Template, node_id: int | None = None) -> str:
    return f"template {t.id!r}" + ("" if node_id is None else f" node {node_id}")


def validate_template(t: Template) -> list[Violation]:
    """Every structural rule of SPEC 4 on one template."""
    out: list[Violation] = []

    def bad(node_id, field, value, rule, message):
        out.append(Violation(t.file, _row(t, node_id), field, value, rule, f"{_where(t, node_id)}: {message}"))

    # Ids and types.
    id_counts = Counter(n.id for n in t.nodes)
    for nid, k in sorted(id_counts.items()):
        if k > 1:
            bad(nid, "id", nid, "duplicate_node_id", f"id {nid} is used by {k} nodes; ids are unique in the level")
    for n in t.nodes:
        if n.type not in NODE_TYPES:
            bad(n.id, "type", n.type, "unknown_type", f"type {n.type!r} is not one of {', '.join(NODE_TYPES)}")
        if n.tutorial and (n.type != "battle" or n.slot):
            bad(n.id, "tutorial", True, "tutorial_not_battle",
                "the tutorial mark belongs to a battle node with a fixed type (the first battle of the skeleton)")
        if n.slot:
            _check_slot(t, n, bad)

    ids = list(id_counts)
    known = set(ids)
    edge_counts = Counter(t.edges)
    for (a, b), k in sorted(edge_counts.items()):
        for end in (a, b):
            if end not in known:
                bad(a if a in known else end, "edges", [a, b], "unknown_node",
                    f"edge {a} -> {b} names node {end}, which does not exist")
        if k > 1:
            bad(a, "edges", [a, b], "duplicate_edge", f"edge {a} -> {b} is listed {k} times")
    children, parents = graph.adjacency(ids, edge_counts)

    cycle = graph.on_cycle(children)
    if cycle:
        bad(cycle[0], "edges", cycle, "cycle", f"nodes {cycle} lie on a directed cycle; a node map is acyclic")

    for nid in ids:
        if len(children[nid]) > MAX_FANOUT:
            bad(nid, "edges", sorted(children[nid]), "fanout_violation",
                f"out-degree {len(children[nid])} > {MAX_FANOUT} (children {sorted(children[nid])})")

    entries = sorted(i for i in ids if not parents[i])
    for nid in _count_culprits(entries):
        bad(nid, "edges", entries, "entry_count",
            f"exactly one entry (node without parents) is required, found {len(entries)}: {entries}")

    by_type: dict[str, list[int]] = {ty: sorted(n.id for n in t.nodes if n.type == ty) for ty in NODE_TYPES}
    bosses = by_type["boss"]
    for nid in _count_culprits(bosses):
        bad(nid, "type", bosses, "boss_count", f"exactly one boss node is required, found {len(bosses)}: {bosses}")
    boss = bosses[0] if len(bosses) == 1 else None

    sinks = sorted(i for i in ids if not children[i])
    if boss is not None:
        for s in sinks:
            if s != boss:
                bad(s, "edges", [], "boss_only_sink",
                    f"node {s} has no children; the boss (node {boss}) is the only sink")
        if children[boss]:
            bad(boss, "edges", sorted(children[boss]), "boss_only_sink",
                "the boss has children; it must be the only sink")
        reach_boss = graph.reaching(boss, parents)
        for nid in ids:
            if nid not in reach_boss:
                bad(nid, "edges", None, "cannot_reach_boss", f"no path from node {nid} to the boss (node {boss})")

    if len(entries) == 1:
        entry = entries[0]
        depth = graph.bfs_depths(entry, children)
        for nid in ids:
            if nid not in depth:
                bad(nid, "edges", None, "unreachable", f"node {nid} is not reachable from the entry (node {entry})")
        layers: dict[int, list[int]] = {}
        for nid, d in depth.items():
            layers.setdefault(d, []).append(nid)
        for d, members in sorted(layers.items()):
            if len(members) > MAX_LAYER_WIDTH:
                members.sort()
                bad(members[0], f"depth {d}", len(members), "layer_width",
                    f"BFS layer {d} holds {len(members)} nodes {members}; the width limit is {MAX_LAYER_WIDTH}")

    shops = by_type["shop"]
    for nid in _count_culprits(shops):
        bad(nid, "type", shops, "shop_count",
            f"exactly one shop node per level is required, found {len(shops)}: {shops}")
    if len(shops) == 1 and boss is not None:
        shop = shops[0]
        for p in sorted(parents[boss]):
            if p != shop:
                bad(p, "edges", [p, boss], "shop_boss_parent",
                    f"node {p} is a parent of the boss (node {boss}); the shop (node {shop}) must be its only parent")
        if shop not in parents[boss]:
            bad(shop, "edges", sorted(children[shop]), "shop_boss_parent",
                f"the shop (node {shop}) is not a parent of the boss (node {boss})")
        if len(entries) == 1:
            bypass = graph.path_avoiding(entries[0], boss, shop, children)
            if bypass is not None:
                bad(shop, "edges", bypass, "shop_every_path",
                    f"route {graph.format_path(bypass)} reaches the boss without the shop (node {shop})")
    return out


def _count_culprits(members: list[int]) -> list[int | None]:
    """Where an "exactly one" rule is broken: every member when there are
    several (each is a place to fix), the template itself when there is none."""
    if len(members) == 1:
        return []
    return list(members) if members else [None]


def _check_slot(t: Template, n, bad) -> None:
    if n.type == "shop":
        bad(n.id, "slot", list(n.slot), "slot_on_shop", "the shop may not be a slot: it is the boss's fixed gate")
        return
    problems = []
    if t.fixed:
        bad(n.id, "slot", list(n.slot), "slot_on_fixed",
            "the fixed template is the rollback member and must equal today's map bit for bit: no slots")
    dupes = sorted(ty for ty, k in Counter(n.slot).items() if k > 1)
    if dupes:
        problems.append(f"candidates {dupes} are repeated (that would skew the uniform roll)")
    outside = [ty for ty in n.slot if ty not in SLOT_TYPES]
    if outside:
        problems.append(f"candidates {outside} are not slot types {list(SLOT_TYPES)}")
    if n.type not in n.slot:
        problems.append(f"the declared type {n.type!r} is not among the candidates")
    if len(set(n.slot)) < 2:
        problems.append("a slot needs at least two distinct candidates")
    for p in problems:
        bad(n.id, "slot", list(n.slot), "slot_candidates", p)


def validate_pool(pool: Pool) -> list[Violation]:
    """Every template of the pool, plus the pool rules."""
    out = pool_rules(pool.file, pool.level, [(t.id, t.fixed) for t in pool.templates])
    for t in pool.templates:
        out.extend(validate_template(t))
    return out


def pool_rules(file: str, level: int, members: list[tuple[str, bool]]) -> list[Violation]:
    """Pool rules over ``(template id, fixed)`` of every member: at least one
    template, unique template ids, exactly one fixed template (the rollback
    member of seed 004 回滚档)."""
    out: list[Violation] = []
    where = f"level {level}"
    if not members:
        out.append(Violation(file, where, "templates", 0, "empty_pool", f"{where}: a pool holds N >= 1 templates"))
        return out
    counts = Counter(tid for tid, _ in members)
    for tid, k in counts.items():
        if k > 1:
            out.append(Violation(file, tid, "id", tid, "duplicate_template_id",
                                 f"template {tid!r} appears {k} times in the {where} pool"))
    fixed = [tid for tid, f in members if f]
    if len(fixed) != 1:
        out.append(Violation(file, fixed[1] if len(fixed) > 1 else where, "fixed", fixed, "fixed_count",
                             f"{where}: exactly one template is flagged fixed = true (the rollback member), "
                             f"found {len(fixed)}: {fixed}"))
    return out


def template_depths(t: Template) -> Mapping[int, int]:
    """BFS depth of every node of a template with a unique entry ({} if the
    entry is not unique; the validator reports that). Read only: a batch of
    draws meets the same few templates thousands of times, each measured once."""
    return _depths(t)


@lru_cache(maxsize=4096)
def _depths(t: Template) -> Mapping[int, int]:
    ids = [n.id for n in t.nodes]
    children, parents = graph.adjacency(ids, t.edges)
    entries = [i for i in ids if not parents[i]]
    if len(entries) != 1:
        return MappingProxyType({})
    return MappingProxyType(graph.bfs_depths(entries[0], children))


def board_nodes(t: Template) -> list[tuple[int, str, int]]:
    """``(node id, type, depth)`` of every node that is or may roll a board
    node (battle or boss), in id order."""
    depth = template_depths(t)
    out = []
    for n in sorted(t.nodes, key=lambda n: n.id):
        if (n.type in BOARD_TYPES or any(c in BOARD_TYPES for c in n.slot)) and n.id in depth:
            out.append((n.id, n.type, depth[n.id]))
    return out


def check_content_discipline(pools: Mapping[int, Pool] | Iterable[Pool],
                             board_gen_keys: set[tuple[int, int]]) -> list[Violation]:
    """Seed 004 内容纪律: every battle and boss node (and every slot that can
    roll a battle) of every template has an exact ``board_gen`` row
    ``(level, depth)``; the floor rule of SPEC 2.7 does not count here. The
    boss, and only the boss, stands on the level's Boss row (its deepest).
    For an enabled step-3 pool, every depth a battle or the boss can stand
    at."""
    out: list[Violation] = []
    pool_list = list(pools.values()) if isinstance(pools, Mapping) else list(pools)
    for pool in pool_list:
        level_depths = [d for lv, d in board_gen_keys if lv == pool.level]
        boss_row = max(level_depths) if level_depths else None
        for t in pool.templates:
            for nid, ty, d in board_nodes(t):
                if (pool.level, d) not in board_gen_keys:
                    out.append(Violation(
                        t.file, _row(t, nid), "depth", [pool.level, d], "missing_board_gen_row",
                        f"{_where(t, nid)} ({ty}) stands at depth {d}: board_gen has no exact row "
                        f"(level {pool.level}, depth {d})"))
                elif (ty == "boss") != (d == boss_row):
                    # SPEC 2.7: the deepest row of a level is its Boss row; a
                    # boss elsewhere, or a battle on it, gets the wrong board.
                    out.append(Violation(
                        t.file, _row(t, nid), "depth", [pool.level, d], "boss_row_mismatch",
                        f"{_where(t, nid)} ({ty}) stands at depth {d}, but the Boss row of level "
                        f"{pool.level} is depth {boss_row}: only the boss stands there"))
        p = pool.procedural
        if p.enabled:
            battle_weight = dict(p.type_mix).get("battle", 0)
            # The entry is always a battle; every other layer but the boss's
            # (the shop's layer included: the shop has neighbours) can roll one.
            depths = [0] + (list(range(1, p.boss_depth)) if battle_weight > 0 else []) + [p.boss_depth]
            if boss_row is not None and p.boss_depth != boss_row:
                out.append(Violation(
                    pool.file, f"level {pool.level}/procedural", "layers", p.layers, "boss_row_mismatch",
                    f"level {pool.level} step 3 puts the boss at depth {p.boss_depth}, but the Boss row "
                    f"is depth {boss_row}"))
            for d in depths:
                if (pool.level, d) not in board_gen_keys:
                    out.append(Violation(
                        pool.file, f"level {pool.level}/procedural", "layers", p.layers, "missing_board_gen_row",
                        f"level {pool.level} step 3 can place a {'boss' if d == p.boss_depth else 'battle'} "
                        f"at depth {d}: "
                        f"board_gen has no exact row (level {pool.level}, depth {d})"))
    return out
