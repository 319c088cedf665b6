"""Plain graph facts of a node map (SPEC 4: "Node depth = BFS distance from
the entry"; route counts for the step-3 report).

Graphs are given as node ids and ``(parent, child)`` edges. Every function is
total: it works on broken graphs too (cycles, several entries, dangling
edges), because the validator calls them before it knows the graph is sound.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

Adjacency = dict[int, list[int]]


def adjacency(ids: Iterable[int], edges: Iterable[tuple[int, int]]) -> tuple[Adjacency, Adjacency]:
    """Children and parents of every id; edges touching unknown ids are
    dropped (the validator reports them separately)."""
    children: dict[int, list[int]] = {i: [] for i in ids}
    parents: dict[int, list[int]] = {i: [] for i in children}
    for a, b in edges:
        if a in children and b in children:
            children[a].append(b)
            parents[b].append(a)
    return children, parents


def bfs_depths(entry: int, children: dict[int, list[int]]) -> dict[int, int]:
    """BFS distance from ``entry`` of every node it reaches."""
    depth = {entry: 0}
    queue = deque([entry])
    while queue:
        a = queue.popleft()
        for b in sorted(children[a]):
            if b not in depth:
                depth[b] = depth[a] + 1
                queue.append(b)
    return depth


def reaching(target: int, parents: dict[int, list[int]]) -> set[int]:
    """Every node with a path to ``target`` (``target`` included)."""
    seen = {target}
    stack = [target]
    while stack:
        b = stack.pop()
        for a in parents[b]:
            if a not in seen:
                seen.add(a)
                stack.append(a)
    return seen


def on_cycle(children: dict[int, list[int]]) -> list[int]:
    """Nodes that lie on a directed cycle (strongly connected components of
    size > 1, or self-loops), by Tarjan's algorithm written iteratively."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    result: list[int] = []
    counter = 0
    for root in sorted(children):
        if root in index:
            continue
        work = [(root, iter(sorted(children[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(children[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in children[v]:
                    result.extend(comp)
    return sorted(result)


def count_routes(entry: int, boss: int, children: dict[int, list[int]]) -> int:
    """Number of distinct entry -> boss paths of an acyclic graph."""
    memo: dict[int, int] = {}

    def routes(a: int) -> int:
        if a == boss:
            return 1
        if a not in memo:
            memo[a] = sum(routes(b) for b in children[a])
        return memo[a]

    return routes(entry)


def layer_widths(depths: dict[int, int]) -> tuple[int, ...]:
    if not depths:
        return ()
    widths = [0] * (max(depths.values()) + 1)
    for d in depths.values():
        widths[d] += 1
    return tuple(widths)


def path_avoiding(entry: int, target: int, avoid: int, children: dict[int, list[int]]) -> list[int] | None:
    """A shortest entry -> target path that does not pass ``avoid``, if any
    (the witness of a shop that is not on every route)."""
    if avoid in (entry, target):
        return None
    prev: dict[int, int | None] = {entry: None}
    queue = deque([entry])
    while queue:
        a = queue.popleft()
        if a == target:
            path = [a]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])  # type: ignore[arg-type]
            return path[::-1]
        for b in sorted(children[a]):
            if b != avoid and b not in prev:
                prev[b] = a
                queue.append(b)
    return None


def format_path(path: Sequence[int]) -> str:
    return " -> ".join(str(i) for i in path)
