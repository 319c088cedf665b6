"""Text drawing of node maps (SPEC 8 CLI; wired by the lead as ``boardgen
nodemap draw --seed S [--first-adventure]``).

Layers top to bottom, one line per BFS depth; each node as ``id type`` with
its children after ``->``, so every edge is written exactly once. Marks:
``[tutorial]`` for the tutorial battle, ``[slot]`` for a type rolled by step
2. A header says where the map came from (template, source, scope), so a
printed map can be replayed.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from boardgen_pipeline.nodemap import graph
from boardgen_pipeline.nodemap.draw import draw_adventure
from boardgen_pipeline.nodemap.model import NodeMap, Pool
from boardgen_pipeline.nodemap.templates import load_pools


def map_routes(m: NodeMap) -> int:
    """The entry -> boss routes of a map (a function of its graph alone: the
    few graphs of a batch of draws are counted once each)."""
    entry = next(n.id for n in m.nodes if n.depth == 0)
    boss = next(n.id for n in m.nodes if n.type == "boss")
    return _routes(tuple(n.id for n in m.nodes), tuple(m.edges), entry, boss)


@lru_cache(maxsize=4096)
def _routes(ids: tuple, edges: tuple, entry: int, boss: int) -> int:
    children, _ = graph.adjacency(list(ids), edges)
    return graph.count_routes(entry, boss, children)


def describe_source(m: NodeMap) -> str:
    if m.source == "fixed":
        return "fixed template, first-adventure script, no draw"
    text = f"{m.source}, node_map scope {m.scope}"
    if m.source.startswith("procedural"):
        text += f", {m.attempts} attempt{'s' if m.attempts != 1 else ''}"
    if m.fallback:
        text += ", FALLBACK: step-3 budget spent, template drawn"
    return text


def render_map(m: NodeMap) -> str:
    children: dict[int, list[int]] = {n.id: [] for n in m.nodes}
    for a, b in m.edges:
        children[a].append(b)
    widths = "-".join(str(w) for w in m.layer_widths())
    lines = [
        f"level {m.level}: {m.template_id} ({describe_source(m)})",
        f"  layer widths {widths}, {map_routes(m)} routes entry -> boss",
    ]
    for depth, layer in enumerate(m.layers()):
        cells = []
        for n in sorted(layer, key=lambda n: n.id):
            marks = (" [tutorial]" if n.tutorial else "") + (" [slot]" if n.rolled else "")
            kids = sorted(children[n.id])
            cells.append(f"{n.id} {n.type}{marks}" + (f" -> {' '.join(map(str, kids))}" if kids else ""))
        lines.append(f"  d{depth} | " + " | ".join(cells))
    return "\n".join(lines)


def render_adventure(maps: list[NodeMap], master_seed: int, first_adventure: bool) -> str:
    head = (f"node maps of one adventure, master seed {master_seed}, "
            f"{'first adventure (fixed script)' if first_adventure else 'drawn (first_adventure_done = true)'}")
    return "\n\n".join([head, *(render_map(m) for m in maps)]) + "\n"


def draw_adventure_text(seed: int, first_adventure: bool, tables_dir: Path | str,
                        board_gen_keys: set[tuple[int, int]] | None = None,
                        pools: Mapping[int, Pool] | None = None) -> str:
    """Load the pools (TableError on any violation), draw the level maps of
    one adventure under master seed ``seed`` and draw them as text."""
    pools = pools if pools is not None else load_pools(tables_dir, board_gen_keys)
    return render_adventure(draw_adventure(pools, seed, first_adventure), seed, first_adventure)
