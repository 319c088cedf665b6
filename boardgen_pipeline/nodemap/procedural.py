"""Step 3: building a map from parameters (seed 004 台阶三 "读参数（深度、分支密度、
节点类型配比）直接构造图，构造失败重掷（重掷预算同棋盘生成 max_gen_attempts 纪律）…
图合法性校验作最终守门"; SPEC 4 "Step 3").

Construction builds the cheap guarantees in and leaves the rest to the
validator, the final gate (the Slay the Spire pattern of STYLE.md):

- layered: depth 0 is the entry (a battle with the tutorial mark, as every
  skeleton's first battle), depths ``1 .. layers-2`` are built layer by
  layer, depth ``layers-1`` is the boss. The shop is one node of layer
  ``layers-2``, drawn uniformly; the other nodes of that layer lead into it.
  Edges go one layer down (or into the shop), so the graph is acyclic, has
  one boss, and the shop is the boss's only parent by construction;
- each parent has out-degree 2 with probability ``branching`` (else 1). Its
  edges ("stubs", in parent order) map monotonically onto the next layer's
  children, which never crosses and never leaves a child without a parent;
  the next width is uniform over what that allows, capped at 4. Four
  out-degree-2 parents would need five children: that attempt is left to
  the validator (``layer_width``) rather than repaired;
- middle node types are drawn from ``type_mix`` (integer weights);
- quality gate: at least ``min_routes`` entry -> boss routes (rule
  ``min_routes``), so a procedural level offers a real choice.

All attempts draw from the level's one ``node_map`` stream, in order, as the
board generator's attempts share one stream (SPEC 2.5). When the budget is
spent, a template is drawn uniformly from the pool on the same stream (and
its slots rolled) and the map is flagged ``procedural_fallback``.
"""

from __future__ import annotations

from dataclasses import replace

from boardgen_pipeline.board.rng import Stream
from boardgen_pipeline.nodemap import graph
from boardgen_pipeline.nodemap.model import MAX_LAYER_WIDTH, Node, NodeMap, Pool, ProceduralParams, Template
from boardgen_pipeline.nodemap.slots import instantiate
from boardgen_pipeline.nodemap.validate import validate_template

PROCEDURAL_ID = "procedural"
PPM = 1_000_000


def _roll_type(stream: Stream, mix: tuple[tuple[str, int], ...], total: int) -> str:
    x = stream.below(total)
    for ty, w in mix:
        if x < w:
            return ty
        x -= w
    raise AssertionError("weights exhausted")  # unreachable: x < total


def _sample(stream: Stream, items: list[int], m: int) -> list[int]:
    """``m`` distinct items chosen uniformly (partial Fisher-Yates)."""
    items = list(items)
    for i in range(m):
        j = i + stream.below(len(items) - i)
        items[i], items[j] = items[j], items[i]
    return sorted(items[:m])


def build_attempt(p: ProceduralParams, level: int, stream: Stream) -> Template:
    """One construction attempt (not yet gated)."""
    branch_ppm = round(p.branching * PPM)
    total = sum(w for _, w in p.type_mix)
    nodes = [Node(1, "battle", tutorial=True)]
    edges: list[tuple[int, int]] = []
    layer = [1]
    next_id = 2
    shop_depth = p.layers - 2
    shop = 0
    for depth in range(1, shop_depth + 1):
        degrees = [2 if stream.below(PPM) < branch_ppm else 1 for _ in layer]
        stubs = [parent for parent, k in zip(layer, degrees) for _ in range(k)]
        # Stubs in parent order map monotonically onto the children: a new
        # child starts at every cut between consecutive stubs. The cut inside
        # a degree-2 parent is forced (its two edges need two children); the
        # other cuts are drawn. Monotone wiring never crosses and covers every
        # child, so every node keeps a parent.
        gaps = range(len(stubs) - 1)
        forced = [g for g in gaps if stubs[g] == stubs[g + 1]]
        free = [g for g in gaps if stubs[g] != stubs[g + 1]]
        low = len(forced) + 1
        high = max(low, min(len(stubs), MAX_LAYER_WIDTH))
        # Four degree-2 parents need five children: the width rule rejects
        # that attempt (no repair; the validator is the gate).
        width = low + stream.below(high - low + 1)
        cuts = set(forced) | set(_sample(stream, free, width - low))
        children = list(range(next_id, next_id + width))
        next_id += width
        child = 0
        for g, parent in enumerate(stubs):
            edges.append((parent, children[child]))
            if g in cuts:
                child += 1
        if depth == shop_depth:
            # The shop is one of the last layer's nodes; the others stand
            # beside it and lead into it (as in the 1-2-3-2-1 skeletons).
            shop = children[stream.below(width)]
            edges.extend((c, shop) for c in children if c != shop)
        nodes.extend(Node(c, "shop" if c == shop else _roll_type(stream, p.type_mix, total)) for c in children)
        layer = children
    boss = next_id
    edges.append((shop, boss))
    nodes.append(Node(boss, "boss"))
    return Template(PROCEDURAL_ID, level, tuple(nodes), tuple(edges))


def attempt_rejections(t: Template, p: ProceduralParams) -> tuple[str, ...]:
    """Rule names an attempt breaks (empty = accepted): the validator's, then
    the quality gate."""
    reasons = sorted({v.rule for v in validate_template(t)})
    if reasons:
        return tuple(reasons)
    ids = [n.id for n in t.nodes]
    children, _ = graph.adjacency(ids, t.edges)
    boss = next(n.id for n in t.nodes if n.type == "boss")
    if graph.count_routes(1, boss, children) < p.min_routes:
        return ("min_routes",)
    return ()


def build_procedural(pool: Pool, stream: Stream, params: ProceduralParams | None = None) -> NodeMap:
    """Step 3 on ``stream``: the first accepted attempt, or the flagged
    template fallback when ``retry_budget`` attempts are all rejected."""
    p = params or pool.procedural
    rejections: list[tuple[str, ...]] = []
    for attempt in range(1, p.retry_budget + 1):
        t = build_attempt(p, pool.level, stream)
        reasons = attempt_rejections(t, p)
        if not reasons:
            m = instantiate(t, source=PROCEDURAL_ID, scope=stream.scope)
            return replace(m, attempts=attempt, rejections=tuple(rejections))
        rejections.append(reasons)
    fallback = pool.templates[stream.below(len(pool.templates))]
    m = instantiate(fallback, source="procedural_fallback", scope=stream.scope, stream=stream)
    return replace(m, attempts=p.retry_budget, rejections=tuple(rejections))
