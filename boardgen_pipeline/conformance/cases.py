"""The inputs the kit's acceptance vectors are built from (seed 001 acceptance
table AC-2, AC-7, AC-8, AC-9, AC-11, AC-12; SPEC 11).

Seed 001 names fixture roots (``a1_high_target``, ``a1_ec5``) and a
"golden five" board set whose specifications sit in an appendix the seed
does not carry. They are defined here, as data, and every figure the kit
states about them is computed by the product (never written by hand here);
the suite holds those figures to hand-derived ones and to a plain BFS of
its own (``tests/test_solver_golden.py``, ``tests/test_conformance_kit.py``).

- :data:`FIXTURE_ROWS`: the fixture roots as rows of the default table with
  the field the seed names changed (``a1_high_target``: target 1.0, two
  attempts and one; ``a1_ec5``: an R0 cap no board can meet, so no attempt is
  ever legal) and the edge rows the generate vectors add (shave rings 0 and
  2, a 5x5 spawn square, a 64-wide board);
- :data:`AC2_SETS`: seed 001 AC-2's violation sets and legal set, each a row
  edit of the default (2,0) row;
- :data:`GOLDEN_BOARDS` and :data:`PATHOLOGICAL_BOARDS`: AC-7/AC-8 boards;
- :func:`legality`: the legality predicate of a finished board (SPEC 2.4
  with seed 001 AC-6's structural rules for fog), by category;
- :data:`PINS`: generate vectors that pin a rule no default row exercises
  (a decimal on a .5 boundary, the gates' order, the verdict's core
  condition, best_legal's and least_bad's choice, fog regions of size 0 or
  skipped), each on the first scope whose trace shows it (``edges``);
- :data:`FIXTURE_POOL`, :data:`SKEW_WEIGHTS`: a node-map pool with slots and
  a template whose depths depend on the edges' direction, resource weights
  whose skew meets a remainder tie (the default tables have neither).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from boardgen_pipeline.board import solver
from boardgen_pipeline.board.generator import legality_reasons
from boardgen_pipeline.board.geometry import numbers_of, parse_layout
from boardgen_pipeline.tables.board_gen import RESERVED_PREFIXES, BoardGenRow, BoardGenTable


@dataclass(frozen=True)
class FixtureRow:
    """A fixture root's row: a default row with some fields replaced.
    ``texts`` gives a decimal field as the designer wrote it where that is
    not the double's shortest form (``"1"`` for 1.0): the kit writes it so."""

    name: str
    base: tuple[int, int]
    changes: dict
    spawn_side: int = 3
    comment: str = ""
    texts: tuple[tuple[str, str], ...] = ()

    def row(self, table: BoardGenTable) -> BoardGenRow:
        fields = {**table.rows[self.base].fields(), **self.changes}
        reserved = {k: v for k, v in fields.items() if k.startswith(RESERVED_PREFIXES)}
        return BoardGenRow(**{k: v for k, v in fields.items() if k not in reserved}, reserved=reserved)

    def changed(self, table: BoardGenTable) -> str:
        """The fields that differ from the base row, ``name old -> new``
        (a change that keeps the base's value is no change)."""
        base = table.rows[self.base].fields()
        diffs = [f"{k} {base.get(k)} -> {v}" for k, v in sorted(self.changes.items()) if base.get(k) != v]
        if self.spawn_side != table.spawn_side:
            diffs.append(f"spawn_side {table.spawn_side} -> {self.spawn_side}")
        return ", ".join(diffs) or "nothing"


# AC-11: "a1_high_target@2 + registered σ (target = 1.0 inside the domain)"; the @1 twin runs the same σ
HIGH_TARGET = {1: FixtureRow("a1_high_target@1", (2, 0), {"inferability_target": 1.0, "max_gen_attempts": 1},
                             comment="seed 001 AC-11 @1: target 1.0, one attempt"),
               2: FixtureRow("a1_high_target@2", (2, 0), {"inferability_target": 1.0, "max_gen_attempts": 2},
                             comment="seed 001 AC-11 @2: target 1.0, two attempts")}
# AC-12: "a1_ec5@k, k in {1, 2, 8, 16}, zero legal attempts": the R0 cap is the spawn square (9 cells),
# while a shave ring of 1 keeps every spawn cell a zero, so R0 always floods past it
EC5_ATTEMPTS = (1, 2, 8, 16)
EC5 = {k: FixtureRow(f"a1_ec5@{k}", (1, 0), {"r0_max_cap": 9, "max_gen_attempts": k},
                     comment=f"seed 001 AC-12 EC5 @{k}: no attempt can be legal (R0 cap 9, ring 1)")
       for k in EC5_ATTEMPTS}
# edge rows of the generate vectors: what the default rows never exercise
EDGE_ROWS = (
    FixtureRow("edge_shave_0", (1, 0), {"shave_ring_radius": 0}, comment="no shave ring: mines may touch the spawn"),
    FixtureRow("edge_shave_2", (1, 0), {"shave_ring_radius": 2, "r0_max_cap": 50},
               comment="the widest shave ring (Chebyshev radius 3 cleared)"),
    FixtureRow("edge_spawn_5", (1, 0), {"r0_max_cap": 50}, spawn_side=5, comment="a 5x5 spawn square"),
    FixtureRow("edge_wide_64", (3, 0), {"board_width": 64, "board_height": 8, "max_gen_attempts": 32,
                                       "r0_max_cap": 256, "min_safe_count": 40},
               comment="the widest board (64 columns: a port's 64-bit row words meet their edge)"),
    FixtureRow("edge_two_fog_regions", (2, 0), {"fog_region_count": 2, "fog_target_ratio": 0.1},
               comment="two fog regions (seed 001 AC-14): the second region's draws follow the first's"),
)


@dataclass(frozen=True)
class Ac2Set:
    """One AC-2 table: the edit of the base row that makes it, fatal or legal."""

    name: str
    what: str
    changes: dict
    fatal: bool
    texts: tuple[tuple[str, str], ...] = ()  # a decimal written otherwise than the double's shortest form


# seed 001 AC-2: each violation set as the edit of the default (2,0) row with one fog region at 0.05 that
# makes it, and the legal set; then the sets that pin how the violations are listed (sorted by field, then
# rule; one entry a violation; a field outside its domain silencing the cross-field rules)
_AC2_SETS = (
    ("fog_ratio_above_8d", "f > 8d", {"mine_density": 0.02, "fog_target_ratio": 0.2}, True),
    ("fog_count_without_ratio", "count >= 1 and f = 0", {"fog_region_count": 1, "fog_target_ratio": 0.0}, True),
    ("fog_ratio_one", "f >= 1", {"fog_target_ratio": 1.0}, True),
    ("fog_ratio_without_count", "count = 0 and f > 0", {"fog_region_count": 0, "fog_target_ratio": 0.05}, True),
    ("fog_ratio_above_ceiling", "f = 0.30 and d = 0.15: above the 0.25 ceiling",
     {"mine_density": 0.15, "fog_target_ratio": 0.3}, True),
    ("no_mine_after_rounding", "round(d * (W*H - 9)) = 0", {"mine_density": 0.003}, True),
    ("cost_gate", "attempts * W * H > 16384", {"board_width": 24, "board_height": 24, "max_gen_attempts": 32,
                                                "r0_max_cap": 200}, True),
    ("min_safe_infeasible", "F2b: 10x10, d = 0.10, min_safe = 92",
     {"board_width": 10, "board_height": 10, "mine_density": 0.1, "min_safe_count": 92, "r0_max_cap": 50,
      "fog_region_count": 0, "fog_target_ratio": 0.0}, True),
    ("board_type_empty", "board_biome = {} (here: board_type empty)", {"board_type": ""}, True),
    ("legal_no_fog", "count = 0 and f = 0", {"fog_region_count": 0, "fog_target_ratio": 0.0}, False),
    ("legal_fog_at_8d", "f = 8d exactly", {"mine_density": 0.03, "fog_target_ratio": 0.24}, False),
    ("legal_fog_at_ceiling", "f = 0.25 exactly, the ceiling", {"mine_density": 0.2, "fog_target_ratio": 0.25}, False),
    ("legal_min_safe_at_bound", "min_safe = W*H - N exactly",
     {"board_width": 10, "board_height": 10, "mine_density": 0.1, "min_safe_count": 91, "r0_max_cap": 50,
      "fog_region_count": 0, "fog_target_ratio": 0.0}, False),
    ("legal_board_type", "board_biome placeholder non-empty (here: board_type underdark)",
     {"board_type": "underdark"}, False),
    ("sorted_by_field", "the cost gate (field max_gen_attempts) and the fog ceiling (field fog_target_ratio): "
     "listed by field first, so fog_target_ratio comes first although cost_gate sorts before fog_predicate",
     {"board_width": 24, "board_height": 24, "max_gen_attempts": 32, "r0_max_cap": 200, "mine_density": 0.15,
      "fog_target_ratio": 0.3}, True),
    ("fog_two_bounds", "f = 0.3 above both 8d = 0.16 and the 0.25 ceiling: two violations, both listed",
     {"mine_density": 0.02, "fog_target_ratio": 0.3}, True),
    ("domain_silences_rules", "board_type empty and N = 0: a field outside its domain silences every cross-field "
     "rule of the row", {"board_type": "", "mine_density": 0.003}, True),
    ("width_below_8", "board_width 7, below the domain's 8 (a 3x3 spawn square would fit)", {"board_width": 7},
     True),
    ("two_domains", "two fields outside their domains (target 0.84, shave ring 3): both listed",
     {"inferability_target": 0.84, "shave_ring_radius": 3}, True),
    ("cap_bound_keeps_rules", "r0_max_cap 300 above floor(W*H/2) = 288 is a domain violation checked with the "
     "cross-field rules, so the cost gate is listed too",
     {"board_width": 24, "board_height": 24, "max_gen_attempts": 32, "r0_max_cap": 300}, True),
    ("cap_below_spawn", "r0_max_cap 5 below the spawn square's 9 cells", {"r0_max_cap": 5}, True),
    ("depth_beyond_scopes", "node_depth 256 beyond the 255 the scope layout gives a level (and, the table's one "
     "row, no depth-0 anchor for its level)", {"node_depth": 256}, True),
    ("anchor_despite_domain", "node_depth 3 and board_type empty: the domain violation silences the row's rules, "
     "not the table's: the level still has no depth-0 anchor", {"node_depth": 3, "board_type": ""}, True),
    ("density_exponent", "mine_density 5e-05 (a decimal the kit writes with an exponent): N = 0",
     {"mine_density": 5e-05}, True),
    ("legal_target_no_point", "inferability_target written 1, a decimal with no point: legal",
     {"inferability_target": 1.0}, False, (("inferability_target", "1"),)),
)
AC2_SETS = tuple(Ac2Set(*entry) for entry in _AC2_SETS)


@dataclass(frozen=True)
class LayoutCase:
    """A board given by its layout, with the row figures its legality needs."""

    name: str
    layout: str
    comment: str
    min_safe_count: int = 1
    r0_max_cap: int | None = None  # None: W*H, no cap (these boards are smaller than a table's)
    spawn_side: int = 3
    rules: str = "single_subset"


EMPTY3 = "........./........./........./"
# seed 001 AC-7/AC-8 "golden five": legal boards whose measures are pinned as integer pairs (the figures are
# derived by hand in tests/test_solver_golden.py); board iii has fog touching the spawn square (EC3)
GOLDEN_BOARDS = (
    LayoutCase("golden_i_single_rule", "......./......./......./.*.....",
               "R0 26; the single rule proves (1,3) a mine, then (0,3) safe: R∞ = S = 27", r0_max_cap=26),
    LayoutCase("golden_ii_subset", EMPTY3 + "*..*..*.*", "no single rule fires; the subset rule opens all: R∞ 32 of 32"),
    LayoutCase("golden_iii_fog_by_spawn", "......*../......f../........./......*..",
               "fog at (6,1), next to the spawn square's (5,0..2), all numbered: adjacency is no violation (EC3); "
               "the fog cell opens by meta-knowledge (information source b) and never chains"),
    LayoutCase("golden_iv_fifty_fifty", "........./........./......*../......**.",
               "a 50/50 no rule can choose: R∞ 32 of 33"),
    LayoutCase("golden_v_partial_overlap", ".....*./......*/......./.....**",
               "partial overlap: no wing rule in single_subset, R∞ 22 of 24"),
)
# AC-7: each pathological board and the categories the predicate must raise (all of them, in order)
PATHOLOGICAL_BOARDS = (
    (LayoutCase("pathological_enclosed_safe", "........./........./**......./.*.......",
                "a mine wall isolates the safe cell (0,3)"), ("unreachable",)),
    (LayoutCase("pathological_min_safe", EMPTY3 + "*..*..*.*", "32 safe cells against a minimum of 33",
                min_safe_count=33), ("min_safe",)),
    (LayoutCase("pathological_fog_window", "........./........./........./fff....*./fff....../fff......",
                "a 3x3 window all fog"), ("structure",)),
    (LayoutCase("pathological_two_categories", "........./........./**......./.*.......",
                "the enclosed safe cell (0,3) and 33 safe cells against a minimum of 34: both categories, "
                "in the predicate's order", min_safe_count=34), ("unreachable", "min_safe")),
    # the spawn square may hold a mine only on a board no generator made: the predicate still answers
    (LayoutCase("pathological_spawn_mine_chains", "......./...*.../......./.*...../....*../......./.......",
                "a mine at the spawn corner (4,4) with no mine around it: revealed with the spawn square, it is a "
                "zero and floods its five outer neighbours, so R0 is 14 cells (the mine counted) against a cap "
                "of 13", r0_max_cap=13), ("r0_cap", "structure")),
    (LayoutCase("pathological_centre_mine", "......./......./......./...*.../......./......./.......",
                "the centre cell (3,3) is a mine: no safe cell is reachable from it, every safe cell counts as "
                "unreachable"), ("unreachable", "structure")),
)


def structure_violations(width: int, height: int, mines, fog, spawn_side: int) -> list[str]:
    """Seed 000 and seed 001 AC-6's structural rules of a finished board, by
    name: the spawn square and R0 mine-free, and fog cells safe, numbered,
    outside R0, no 3x3 window all fog, ``|F| <= 8 x mines``."""
    numbers = numbers_of(mines, width, height)
    spawn = solver.spawn_square(width, height, spawn_side)
    r0 = solver.reveal_r0(mines, width, height, spawn_side, fog)
    fog = set(fog)
    out = []
    if any(mines[c] for c in spawn):
        out.append("spawn_mine")
    if any(mines[c] for c in r0):
        out.append("r0_mine")
    if any(mines[c] or numbers[c] == 0 for c in fog):
        out.append("fog_cell")
    if fog & r0:
        out.append("fog_in_r0")
    full = any(all((yy * width + xx) in fog for yy in range(y, y + 3) for xx in range(x, x + 3))
               for y in range(height - 2) for x in range(width - 2))
    if full:
        out.append("fog_window")
    if len(fog) > 8 * sum(mines):
        out.append("fog_bound")
    return out


def legality(case: LayoutCase) -> dict:
    """The legality predicate of a finished board (SPEC 2.4 and seed 001
    AC-6/AC-7) with each failing category: ``unreachable``, ``min_safe``,
    ``r0_cap``, ``free_open`` (SPEC 2.4's gates, in the least-bad order)
    and ``structure`` (with the structural rules it breaks)."""
    w, h, mines, fog = parse_layout(case.layout)
    cap = case.r0_max_cap if case.r0_max_cap is not None else w * h
    c = solver.closures(mines, w, h, case.spawn_side, case.rules, fog=fog)
    safe = w * h - sum(mines)
    measured = SimpleNamespace(unreachable_safe=solver.unreachable_safe(mines, w, h), safe_count=safe,
                               r0_size=len(c.r0))
    categories = legality_reasons(measured, case.min_safe_count, cap)  # the generator's gates, in its order
    structure = structure_violations(w, h, mines, fog, case.spawn_side)
    if structure:
        categories.append("structure")
    return {"legal": not categories, "categories": categories, "structure": structure}


# ------------------------------------------------------------------ pinned rules


@dataclass(frozen=True)
class Pin:
    """A generate vector that pins a rule the default rows never exercise:
    ``fixture``'s board on the first scope from 0 (not taken by an earlier
    pin of the same fixture) whose trace shows every edge case in ``shows``
    (``edges.flags`` names them). The kit's flags then name them too."""

    name: str
    fixture: FixtureRow
    shows: tuple[str, ...]
    comment: str


# each fixture below is a default row with the fields named changed (and a small attempt budget: a vector per
# attempt is what a port reads)
_N_HALF = FixtureRow("pin_n_half", (1, 0), {"board_width": 9, "board_height": 11, "mine_density": 0.35,
                                            "r0_max_cap": 49, "max_gen_attempts": 2})
_FOG_AIM_HALF = FixtureRow("pin_fog_aim_half", (1, 0), {"fog_region_count": 1, "fog_target_ratio": 0.235,
                                                        "max_gen_attempts": 2})
_FOG_AIM_ORDER = FixtureRow("pin_fog_aim_order", (1, 0), {"fog_region_count": 1, "fog_target_ratio": 0.145,
                                                          "max_gen_attempts": 2})
_NO_POINT = FixtureRow("pin_no_point", (2, 0), {"inferability_target": 1.0, "max_gen_attempts": 2},
                       texts=(("inferability_target", "1"),))
_EXPONENT = FixtureRow("pin_exponent", (2, 0), {"fog_region_count": 2, "fog_target_ratio": 5e-05,
                                                "max_gen_attempts": 2})
_FOG_SIZE_0 = FixtureRow("pin_fog_size_0", (2, 0), {"fog_region_count": 10, "fog_target_ratio": 0.05,
                                                    "max_gen_attempts": 2})
_FOG_DENSE = FixtureRow("pin_fog_dense", (2, 0), {"mine_density": 0.25, "fog_region_count": 2,
                                                  "fog_target_ratio": 0.145, "max_gen_attempts": 3})
_BEST_LEGAL = FixtureRow("pin_best_legal", (2, 0), {"inferability_target": 1.0, "mine_density": 0.25,
                                                    "fog_region_count": 2, "fog_target_ratio": 0.145,
                                                    "max_gen_attempts": 4})
_FREE_OPEN = FixtureRow("pin_free_open", (1, 0), {"board_width": 8, "board_height": 8, "mine_density": 0.08,
                                                  "r0_max_cap": 20, "max_gen_attempts": 4})
_FREE_OPEN_2 = FixtureRow("pin_free_open_2", (1, 0), {"board_width": 8, "board_height": 8, "mine_density": 0.08,
                                                      "r0_max_cap": 20, "max_gen_attempts": 2})
# min_safe_count above W*H - N: AC-2's min_safe_feasible refuses these rows, and only such a row can fail
# the min_safe gate (|S| >= W*H - N always); the generator runs whatever row it is given
_MIN_SAFE = FixtureRow("pin_min_safe", (2, 0), {"shave_ring_radius": 0, "min_safe_count": 118,
                                                "max_gen_attempts": 4})
_LEAST_BAD = FixtureRow("pin_least_bad", (1, 0), {"mine_density": 0.24, "min_safe_count": 80, "r0_max_cap": 9,
                                                  "max_gen_attempts": 2})

PINS = (
    Pin("n_half_boundary", _N_HALF, ("n_half_boundary",),
        "N = 0.35 x (99 - 9) = 31.5 in decimals but 31.499... in doubles: N = 31"),
    Pin("fog_aim_half_boundary", _FOG_AIM_HALF, ("fog_aim_half_boundary", "fog_aim_product_order"),
        "fog aim 0.235 x 100 = 23.5 in decimals; (0.235 x 10) x 10 = 23.499... in doubles: 23 (0.235 x 100 would "
        "give 24)"),
    Pin("fog_aim_product_order", _FOG_AIM_ORDER, ("fog_aim_product_order",),
        "fog aim (0.145 x 10) x 10 = 14.5 in doubles: 15, as in decimals; 0.145 x 100 = 14.499... would give 14"),
    Pin("decimal_no_point", _NO_POINT, (), "inferability_target written 1, with no point: target [1, 1]"),
    Pin("decimal_exponent", _EXPONENT, ("fog_region_size_0",),
        "fog_target_ratio 5e-05 (the kit writes it with an exponent): fog aim 0, both regions of size 0, no fog "
        "draw, shortfall 2"),
    Pin("fog_region_size_0", _FOG_SIZE_0, ("fog_region_size_0", "fog_shortfall"),
        "10 fog regions for an aim of 7 cells: seven regions of 1 cell, three of size 0, never placed"),
    Pin("fog_region_skipped", _FOG_DENSE, ("fog_region_skipped",),
        "a fog region no free cell has room for: skipped, no draw"),
    Pin("gate_free_open", _FREE_OPEN, ("gates_free_open+r0_cap",),
        "an attempt fails free_open and r0_cap: the gate is free_open, the first in the order"),
    Pin("gate_min_safe", _MIN_SAFE, ("gates_min_safe+unreachable",),
        "an attempt fails min_safe and unreachable: the gate is min_safe (a row AC-2 refuses: min_safe_count above "
        "W*H - N)"),
    Pin("gate_r0_cap_min_safe", _MIN_SAFE, ("gates_r0_cap+min_safe",),
        "an attempt fails r0_cap and min_safe: the gate is r0_cap"),
    Pin("verdict_by_core", _FOG_DENSE, ("verdict_by_core",),
        "a legal attempt meets the target on |R∞| / |S| but not on |R∞ - F| / |S - F|: below_target"),
    Pin("best_legal_later", _BEST_LEGAL, ("best_legal_later",),
        "best_legal chooses a later attempt than the first legal one (target 1.0)"),
    Pin("best_legal_tie", _BEST_LEGAL, ("best_legal_tie",),
        "two legal attempts share the highest |R∞| / |S|: the earlier is chosen"),
    Pin("best_legal_not_core", _BEST_LEGAL, ("best_legal_not_core",),
        "best_legal ranks by |R∞| / |S|: ranked by the core ratio another attempt would win"),
    Pin("best_legal_not_count", _BEST_LEGAL, ("best_legal_not_count",),
        "best_legal ranks by the ratio |R∞| / |S|: ranked by |R∞| alone another attempt would win"),
    Pin("least_bad_unreachable_before_cap", _LEAST_BAD, ("least_bad_swap_unreachable_cap_excess",),
        "the least-bad key's order decides: unreachable before the cap excess"),
    Pin("least_bad_gap_before_cap", _LEAST_BAD, ("least_bad_swap_min_safe_gap_cap_excess",),
        "the least-bad key's order decides: the min-safe gap before the cap excess"),
    Pin("least_bad_unreachable_before_gap", _LEAST_BAD, ("least_bad_swap_unreachable_min_safe_gap",),
        "the least-bad key's order decides: unreachable before the min-safe gap"),
    Pin("least_bad_tie", _LEAST_BAD, ("least_bad_tie",),
        "two attempts share the least-bad key but for k: the earlier is chosen"),
    Pin("least_bad_cap_before_free_open", _FREE_OPEN_2, ("least_bad_swap_cap_excess_free_open",),
        "the least-bad key's order decides: the cap excess before free_open"),
)
# AC-10's counts on a batch that has every exit and fog boards (the reduced batches of the default rows are
# all passed): the pins' vectors by name
MIXED_BATCH = ("verdict_by_core", "best_legal_later", "fog_region_size_0", "decimal_exponent", "least_bad_tie",
               "gate_free_open")


# ------------------------------------------------------------------ node maps and skew


def _template(tid: str, nodes, edges, fixed: bool = False):
    from boardgen_pipeline.nodemap.model import Node, Template

    return Template(tid, 1, tuple(Node(*n) for n in nodes), tuple(edges), fixed)


def fixture_pool():
    """A level-1 pool the default pools cannot give: templates with step-2
    slots (rolled in node-id order, listed out of it) and one whose entry is
    neither its first nor its smallest node and whose depths depend on the
    edges' direction (node 4: 3 along the edges, 2 if they were undirected)."""
    from boardgen_pipeline.nodemap.model import Pool

    plain = [(1, "battle", True), (2, "battle"), (3, "reward"), (4, "battle"), (5, "rest"), (6, "battle"),
             (7, "reward"), (8, "shop"), (9, "boss")]
    plain_edges = [(1, 2), (1, 3), (2, 4), (2, 5), (3, 6), (3, 7), (4, 8), (5, 8), (6, 8), (7, 8), (8, 9)]
    return Pool(1, (
        _template("fixed_plain", plain, plain_edges, fixed=True),
        _template("three_slots", [(1, "battle", True), (2, "battle"), (3, "reward", False, ("reward", "rest")),
                                  (4, "battle"), (7, "rest", False, ("battle", "reward", "rest")),
                                  (5, "rest", False, ("rest", "reward")), (6, "battle"), (8, "shop"), (9, "boss")],
                  plain_edges),
        _template("directed_entry_6", [(2, "battle"), (3, "reward", False, ("reward", "rest")), (4, "rest"),
                                       (6, "battle", True), (7, "battle"), (8, "shop"), (9, "boss")],
                  [(6, 2), (6, 7), (2, 3), (3, 4), (4, 7), (7, 8), (8, 9)]),
    ), "fixture:slots_and_direction")


def skew_weights():
    """Resource weights (total 77) whose skew by 30% meets a tie: three
    offense rows of weight 10 get ideals with the same fraction, and the
    largest remainder has two units for the three of them."""
    from boardgen_pipeline.variants.skew import parse_resource_weights

    rows = [("damage_up", "offense", 11), ("burst", "offense", 10), ("pierce", "offense", 10),
            ("arcane", "offense", 10), ("heal", "survival", 13), ("armor", "survival", 10),
            ("weaken", "whitelist", 6), ("gp", "whitelist", 5), ("action_points", "whitelist", 2)]
    return parse_resource_weights({"resources": [{"id": i, "name": i, "family": f, "weight": w} for i, f, w in rows]},
                                  "fixture:skew_ties")


SKEW_TIE_VALUES = (30,)
