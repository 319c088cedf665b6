"""Node-map values: templates, pools, step-3 parameters and instantiated maps
(SPEC 4 "Template", "Pools"; seed 004 "概念三件套").

A template is a hand-authored skeleton: nodes (an integer id unique in the
level, a type from the closed set, an optional tutorial mark, an optional
slot candidate set) and directed edges. Ids are integers because seed 004
addresses battles by node number ("3 号位"): the encounter table is keyed by
it, so instantiation must keep ids verbatim.

A :class:`NodeMap` is what a level start produces: the row set handed to the
level's node map, plus its provenance (template, scope, source). Only the row
set (:meth:`NodeMap.rows`) takes part in "bit-identical map" comparisons;
provenance naturally differs between, say, the scripted first adventure and a
draw from a pool of one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

# Closed type set (seed 004: "五类节点封闭枚举"). Order is the rendering order
# of per-type counts, nothing else.
NODE_TYPES = ("battle", "reward", "rest", "shop", "boss")
# Types whose nodes are boards: each needs an exact board_gen row.
BOARD_TYPES = ("battle", "boss")
# Types a slot may roll: shop and boss are placed by structure (one each, the
# shop the boss's only parent), so a slot rolling either would break it.
SLOT_TYPES = ("battle", "reward", "rest")

MAX_FANOUT = 2
MAX_LAYER_WIDTH = 4


@dataclass(frozen=True)
class Node:
    """One template node. ``slot`` is the candidate set of a step-2 slot
    (empty = not a slot); ``type`` is then the value used when no stream is
    available, and must be one of the candidates."""

    id: int
    type: str
    tutorial: bool = False
    slot: tuple[str, ...] = ()


@dataclass(frozen=True)
class Template:
    id: str
    level: int
    nodes: tuple[Node, ...]
    edges: tuple[tuple[int, int], ...]
    fixed: bool = False
    name: str = ""
    file: str = ""

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    @property
    def slots(self) -> tuple[Node, ...]:
        """Slot nodes in node-id order: the order their types are rolled."""
        return tuple(sorted((n for n in self.nodes if n.slot), key=lambda n: n.id))


@dataclass(frozen=True)
class ProceduralParams:
    """Step 3 parameters (seed 004 台阶三: depth, branching density, type mix;
    retry budget under the max_gen_attempts discipline)."""

    enabled: bool = False
    layers: int = 5
    branching: float = 0.5
    type_mix: tuple[tuple[str, int], ...] = (("battle", 6), ("reward", 2), ("rest", 2))
    retry_budget: int = 8
    min_routes: int = 2

    @property
    def boss_depth(self) -> int:
        return self.layers - 1


@dataclass(frozen=True)
class Pool:
    """All templates of one level, in file order (the draw order)."""

    level: int
    templates: tuple[Template, ...]
    file: str = ""
    procedural: ProceduralParams = field(default_factory=ProceduralParams)

    @property
    def fixed(self) -> Template:
        """The rollback member (seed 004 回滚档); validation guarantees one."""
        return next(t for t in self.templates if t.fixed)

    def template(self, template_id: str) -> Template:
        for t in self.templates:
            if t.id == template_id:
                return t
        raise KeyError(template_id)

    def rollback(self) -> Pool:
        """The pool shrunk to its fixed template (N = 1): the baseline-batch
        form of seed 004 测量对账 rule 2."""
        return Pool(self.level, (self.fixed,), self.file, ProceduralParams())


@dataclass(frozen=True)
class MapNode:
    id: int
    type: str
    depth: int
    tutorial: bool = False
    rolled: bool = False  # the type came from a step-2 slot roll


@dataclass(frozen=True)
class NodeMap:
    """One level's instantiated map and where it came from.

    ``source``: ``fixed`` (first-adventure script, no draw), ``draw`` (pool
    draw, step 1/2), ``procedural`` (step 3), ``procedural_fallback`` (step 3
    ran out of budget; a template drawn from the same stream)."""

    level: int
    template_id: str
    source: str
    scope: int | None
    nodes: tuple[MapNode, ...]
    edges: tuple[tuple[int, int], ...]
    attempts: int = 0
    rejections: tuple[tuple[str, ...], ...] = ()

    @property
    def fallback(self) -> bool:
        return self.source == "procedural_fallback"

    @property
    def row_set(self) -> tuple:
        """What the map is as a row set, whatever drew it (a key: its level,
        template, nodes and edges; not its source, scope or attempts)."""
        return (self.level, self.template_id, self.nodes, self.edges)

    def rows(self) -> bytes:
        """The row set handed to the level (ids, types, tutorial marks, edges;
        depths follow from the edges) as canonical bytes: the unit of
        "bit-identical" comparisons."""
        payload = {
            "nodes": [[n.id, n.type, n.tutorial] for n in self.nodes],
            "edges": [list(e) for e in self.edges],
        }
        return json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()

    def node(self, node_id: int) -> MapNode:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def layers(self) -> list[list[MapNode]]:
        out: list[list[MapNode]] = []
        for n in self.nodes:
            while len(out) <= n.depth:
                out.append([])
            out[n.depth].append(n)
        return out

    def layer_widths(self) -> tuple[int, ...]:
        return tuple(len(layer) for layer in self.layers())

    def as_template(self) -> Template:
        """The map as a slot-free template, so the validator can gate it."""
        return Template(
            id=self.template_id,
            level=self.level,
            nodes=tuple(Node(n.id, n.type, n.tutorial) for n in self.nodes),
            edges=self.edges,
        )
