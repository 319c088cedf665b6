"""Hypothesis strategies for TOML documents of arbitrary shape.

Two kinds of documents reach the table loaders: documents of any shape built
from the table's own vocabulary (so that the loader meets its field names
holding values of every TOML kind), and the shipped tables with one value
somewhere inside replaced, removed or wrapped (so that the deep checks, which
only run on an otherwise valid document, meet a wrong shape too). Documents
are written with tomlkit and read back by the loaders through ``tomllib``,
as a designer's file would be.
"""

from __future__ import annotations

import datetime
import tomllib
from pathlib import Path

import tomlkit
from hypothesis import strategies as st

# Every field name any table uses: arbitrary documents pick keys from here
# most of the time, so they exercise the loaders' known-field paths.
VOCABULARY = (
    "header", "rows", "spawn_side", "monotone_in_depth", "dig_ap_cost", "level_index", "node_depth",
    "board_width", "board_height", "mine_density", "inferability_target", "solver_rules", "min_safe_count",
    "max_gen_attempts", "board_type", "shave_ring_radius", "r0_max_cap", "fog_region_count",
    "fog_target_ratio", "boss_x", "types", "percent_of_cells", "per_level_bonus", "pack_min", "pack_max",
    "id", "name", "unlock_level", "scope", "effect", "effect_value", "trigger", "placement", "board_types",
    "counter_items", "resources", "family", "weight", "level", "templates", "procedural", "fixed", "nodes",
    "edges", "type", "tutorial", "slot", "enabled", "layers", "branching", "type_mix", "retry_budget",
    "min_routes", "battle", "reward", "rest",
)

WORDS = ("dungeon", "region", "global", "flat_damage", "on_open", "closed_only", "always", "offense",
         "battle", "boss", "shop", "rest", "reward", "single_subset", "level_index")

keys = st.one_of(st.sampled_from(VOCABULARY), st.text(max_size=6))

scalars = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(min_value=-3, max_value=70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0]),
    st.booleans(),
    st.sampled_from(WORDS),
    st.text(max_size=8),
    st.dates(min_value=datetime.date(1, 1, 1)),
)

values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)),
    max_leaves=12,
)

documents = st.dictionaries(keys, values, max_size=6)


def dump(data: dict) -> str:
    return tomlkit.dumps(data)


def read(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _paths(node, prefix=()):
    """Every path (tuple of keys / indices) inside a parsed document."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


@st.composite
def mutated(draw, base: dict) -> dict:
    """``base`` with one to three edits: a value replaced by any value, a
    key or item removed, a value wrapped in a list or a table, or a key
    added."""
    import copy

    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            doc = draw(documents)
            continue
        path = draw(st.sampled_from(paths))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        action = draw(st.sampled_from(("replace", "remove", "wrap_list", "wrap_table", "add")))
        if action == "replace":
            parent[last] = draw(values)
        elif action == "remove":
            del parent[last]
        elif action == "wrap_list":
            parent[last] = [parent[last]]
        elif action == "wrap_table":
            parent[last] = {draw(keys): parent[last]}
        elif isinstance(parent, dict):
            parent[draw(keys)] = draw(values)
        else:
            parent.append(draw(values))
    return doc
