"""Section 7 of docs/conformance.md: a level's node map, drawn or scripted."""

from __future__ import annotations

from collections import deque

from .gdint import to_int
from .readings import rd
from .streams import Stream


def node_map(inp: dict, pool: dict) -> dict:
    if inp["first_adventure"]:
        template = next(t for t in pool["templates"] if t["id"] == pool["fixed"])
        stream = None
    else:
        stream = Stream(inp["label"], to_int(inp["scope"]), to_int(inp["master_seed"]))
        template = pool["templates"][stream.below(len(pool["templates"]))]
    nodes = template["nodes"]
    types = {n["id"]: n["type"] for n in nodes}
    rolled: set[int] = set()
    if stream is not None:
        slots = [n for n in nodes if n["slot"]]
        for n in (slots if rd().slots_in_file_order else sorted(slots, key=lambda n: n["id"])):
            types[n["id"]] = n["slot"][stream.below(len(n["slot"]))]
            rolled.add(n["id"])
    depth = _depths([n["id"] for n in nodes], template["edges"])
    listed = sorted(nodes, key=lambda n: n["id"]) if rd().nodes_sorted_by_id else nodes
    return {"draws": stream.values if stream else [], "template": template["id"],
            "nodes": [{"id": n["id"], "type": types[n["id"]], "depth": depth.get(n["id"]), "tutorial": n["tutorial"],
                       "rolled": n["id"] in rolled} for n in listed],
            "edges": [list(e) for e in template["edges"]]}


def _depths(ids: list[int], edges: list[list[int]]) -> dict[int, int]:
    children: dict[int, list[int]] = {i: [] for i in ids}
    for a, b in edges:
        children[a].append(b)
        if rd().nodemap_undirected:
            children[b].append(a)
    entered = {b for _, b in edges}
    entry = ids[0] if rd().entry_first_listed else next(i for i in ids if i not in entered)
    depth = {entry: 0}
    todo = deque([entry])
    while todo:
        a = todo.popleft()
        for b in children[a]:
            if b not in depth:
                depth[b] = depth[a] + 1
                todo.append(b)
    return depth
