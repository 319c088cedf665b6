"""Instantiation and step-2 slot rolls (seed 004 "实例化 = 把模板原样照抄落成该
关的行集——零变换"; 台阶二 "节点类型在候选槽位内掷定", "候选槽位掷定消费同一条图模板
抽签流的后续 scope"; SPEC 4 "Step 2").

Instantiation copies the template verbatim: same node ids (battle addressing
by node number is unchanged), same types, same tutorial marks, same edges,
in file order. The only change step 2 allows is the type of a slot node.

Slot order: slots are rolled in ascending node-id order, each with one
``below(len(candidates))`` on the level's ``node_map`` stream right after the
template draw, the candidate list read in file order. The rolls stay inside
the level's one scope (SPEC 4 "one node_map scope" per level start): opening
a new scope per slot would make the adventure's scope counter depend on
which template was drawn, and shift every later stream of the adventure
(boards included) whenever a designer adds a slot.

Without a stream (the first-adventure script) nothing is rolled and every
node keeps its declared type; the fixed template has no slots anyway (rule
``slot_on_fixed``), so the script is today's map bit for bit.
"""

from __future__ import annotations

from boardgen_pipeline.board.rng import Stream
from boardgen_pipeline.nodemap.model import MapNode, NodeMap, Template
from boardgen_pipeline.nodemap.validate import template_depths


def roll_slots(t: Template, stream: Stream) -> dict[int, str]:
    """The rolled type of every slot of ``t``, drawing from ``stream``."""
    return {n.id: n.slot[stream.below(len(n.slot))] for n in t.slots}


def instantiate(t: Template, *, source: str, scope: int | None, stream: Stream | None = None) -> NodeMap:
    """The row set of template ``t`` (slots rolled from ``stream`` if given)."""
    rolled = roll_slots(t, stream) if stream is not None else {}
    depth = template_depths(t)
    nodes = tuple(
        MapNode(n.id, rolled.get(n.id, n.type), depth[n.id], n.tutorial, n.id in rolled) for n in t.nodes
    )
    return NodeMap(t.level, t.id, source, scope, nodes, tuple(t.edges))
