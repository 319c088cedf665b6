"""Pool draws at level start and the first-adventure script (seed 004 "抽签时机
与可复现", "首次冒险的固定脚本", "回滚档"; SPEC 4 "Draw", "First adventure").

- At each level start (not once per adventure) the adventure opens exactly
  one ``node_map`` scope from its counter (``SeedSpace.open_stream``) and
  draws ``stream.below(N)`` over the pool in file order; step-2 slots and
  step-3 attempts continue on that same stream. A pool of one still opens
  its scope: the map is the fixed map bit for bit, and the scopes of every
  later stream stay where they are when a designer grows or shrinks a pool.
- ``first_adventure_done = false``: every level takes its fixed template, no
  draw, no stream opened. The flag is read once at adventure start (it is
  read-only during the adventure) and written exactly once, at the first
  adventure end of any outcome (completed, failed, abandoned). Quitting
  mid-adventure writes nothing, so the next adventure replays the script.
- A drawn scope replays alone: :func:`replay_level` with the recorded scope
  gives the same map (seed 004 "抽签 scope 可独立回放").

Every map leaves through the validator (:func:`gate`): templates were checked
at load, but slot rolls and step 3 produce new row sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from boardgen_pipeline.board.rng import SeedSpace, Stream, derive_at
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.nodemap.model import NodeMap, Pool
from boardgen_pipeline.nodemap.procedural import build_procedural
from boardgen_pipeline.nodemap.slots import instantiate
from boardgen_pipeline.nodemap.validate import validate_template

LABEL = "node_map"
OUTCOMES = ("completed", "failed", "abandoned")


def gate(m: NodeMap) -> NodeMap:
    """The validator as the final gate of every produced map."""
    violations = _violations(*m.row_set)
    if violations:
        raise TableError(list(violations))
    return m


@lru_cache(maxsize=4096)
def _violations(level: int, template_id: str, nodes: tuple, edges: tuple) -> tuple:
    # A map's verdict is a function of its row set (its nodes and edges, frozen values), and a batch
    # of draws meets the same few row sets thousands of times: each is validated once, and the
    # template the validator reads is built only then.
    return tuple(validate_template(NodeMap(level, template_id, "", None, nodes, edges).as_template()))


def fixed_map(pool: Pool) -> NodeMap:
    """The first-adventure script map: the fixed template, nothing drawn."""
    return gate(instantiate(pool.fixed, source="fixed", scope=None))


def draw_template(pool: Pool, stream: Stream) -> NodeMap:
    """Step 1 (+ step 2): a uniform draw over the pool in file order, then the
    drawn template's slots, all on ``stream``."""
    t = pool.templates[stream.below(len(pool.templates))]
    return gate(instantiate(t, source="draw", scope=stream.scope, stream=stream))


def level_map(pool: Pool, stream: Stream) -> NodeMap:
    """The map of a level start that draws (not the first-adventure script)."""
    if pool.procedural.enabled:
        return gate(build_procedural(pool, stream))
    return draw_template(pool, stream)


def replay_level(pool: Pool, master_seed: int, scope: int) -> NodeMap:
    """The map drawn at ``scope`` under ``master_seed``, replayed alone."""
    return level_map(pool, derive_at(LABEL, scope, master_seed))


def level_scope(pools: Mapping[int, Pool], level: int) -> int:
    """The scope of level ``level``'s draw in :func:`draw_adventure` (its
    levels start in order, each opening the adventure's next stream): with
    :func:`replay_level`, one level's map without drawing the others."""
    return sorted(pools).index(level)


@dataclass
class Adventure:
    """One adventure: its scope counter and the maps of its level starts."""

    pools: Mapping[int, Pool]
    seeds: SeedSpace
    scripted: bool
    maps: list[NodeMap] = field(default_factory=list)
    outcome: str | None = None

    def start_level(self, level: int) -> NodeMap:
        """Seed 004: "抽签时点 = 开始关卡处理内、加载节点图之前，逐关各抽一次"."""
        if self.outcome is not None:
            raise RuntimeError(f"the adventure has ended ({self.outcome}); start a new one")
        if level not in self.pools:
            raise KeyError(f"no node-map pool for level {level} (levels: {sorted(self.pools)})")
        pool = self.pools[level]
        m = fixed_map(pool) if self.scripted else level_map(pool, self.seeds.open_stream(LABEL))
        self.maps.append(m)
        return m


@dataclass
class SaveState:
    """The save slice this system owns: the ``first_adventure_done`` flag.
    ``flag_writes`` counts writes of the flag, so "set exactly once" can be
    checked."""

    first_adventure_done: bool = False
    flag_writes: int = 0
    adventure: Adventure | None = None

    def start_adventure(self, pools: Mapping[int, Pool], master_seed: int = 0,
                        seeds: SeedSpace | None = None) -> Adventure:
        """Begin an adventure. ``seeds`` is the adventure's shared RNG service
        (other systems open their streams on it too); by default a fresh one
        under ``master_seed``. An adventure left without an end (the game was
        quit) is simply replaced: nothing was written."""
        space = seeds if seeds is not None else SeedSpace(master_seed)
        self.adventure = Adventure(pools, space, scripted=not self.first_adventure_done)
        return self.adventure

    def end_adventure(self, outcome: str) -> None:
        """The adventure's convergence point (seed 004 "冒险收束点置位（完成/失败/
        放弃三结局同写）"): set the flag if it is not set yet."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
        if self.adventure is None or self.adventure.outcome is not None:
            raise RuntimeError("no adventure in progress to end")
        self.adventure.outcome = outcome
        if not self.first_adventure_done:
            self.first_adventure_done = True
            self.flag_writes += 1


def script_maps(pools: Mapping[int, Pool]) -> list[NodeMap]:
    """The maps of a first adventure whose actions are the level starts 1..n,
    whatever its seed: the script takes each level's fixed template and opens
    no stream, so ``draw_adventure(pools, seed, True)`` is this list for every
    seed (a batch of draws builds it once)."""
    return [fixed_map(pools[level]) for level in sorted(pools)]


def draw_adventure(pools: Mapping[int, Pool], master_seed: int, first_adventure: bool) -> list[NodeMap]:
    """The maps of one adventure whose only actions are the level starts
    1..n in order (the CLI and the draw records use this action sequence)."""
    save = SaveState(first_adventure_done=not first_adventure)
    adventure = save.start_adventure(pools, master_seed)
    return [adventure.start_level(level) for level in sorted(pools)]
