"""How the port reads each rule docs/conformance.md states, and the other
readings a porter might take where the document was once silent (the
clean-room port's findings, /docs/decisions/conformance.md).

``Readings()`` is the document's reading everywhere. A field set otherwise
swaps one rule for the reading a finding names, so the suite can show that
the kit tells the two apart (a vector turns red) or, for the rules the
document says never act, that it cannot (tests/test_conformance_port.py).
"""

from __future__ import annotations

from dataclasses import dataclass

GATE_ORDER = ("free_open", "r0_cap", "min_safe", "unreachable")


@dataclass(frozen=True)
class Readings:
    # results
    below_values_as_numbers: bool = False  # a `below` value written as a JSON number
    # streams
    signed_print: bool = False  # a u64 printed with str() of the signed int
    below_whole_list_repeated: bool = False  # `repeat`: the bound list again, not each bound in a row
    # the plan
    exact_decimals: bool = False  # N and the fog aim in exact decimals, not doubles
    fog_aim_area_first: bool = False  # ratio * (W * H) instead of (ratio * W) * H
    fraction_from_last_part: bool = False  # "1" read as digits after a point: 1/10
    decimal_ignores_exponent: bool = False  # "5e-05" read as 5
    # the fog step
    no_window_test: bool = False  # never acts (a window's centre would be a zero)
    keep_short_regions: bool = False  # never acts (no region stops short)
    no_fog_bound_skip: bool = False  # never acts (the sizes add up to at most 8 x mines)
    no_room_test: bool = False  # seed candidates need no room for the whole region
    shortfall_ignores_size_0: bool = False  # regions of size 0 not counted short
    chain0_without_fog: bool = False  # Chain0's neighbours of zeros exclude fog cells
    # gates, verdict and exit
    gate_order: tuple[str, ...] = GATE_ORDER
    verdict_plain_only: bool = False  # the core condition left out
    best_legal_first: bool = False  # the first legal attempt
    best_legal_ties_to_latest: bool = False
    best_legal_core_ratio: bool = False  # ranked by |R∞ - F| / |S - F|
    best_legal_by_count: bool = False  # ranked by |R∞| alone
    least_bad_order: tuple[int, ...] = (0, 1, 2, 3)  # the key's first four parts, in this order
    least_bad_ties_to_latest: bool = False
    # floods and the closure
    mines_never_chain: bool = False  # a revealed mine with number 0 does not flood
    r0_without_mines: bool = False  # |R0| leaves a revealed mine out
    centre_mine_searched: bool = False  # unreachable: a BFS from a mined centre all the same
    closure_no_flood: bool = False  # never acts (step 5's flood is implied by the single rule)
    closure_skips_mines: bool = False  # never acts (no mine is revealed in a closure)
    # overlays
    overlay_spawn_side: int | None = None  # the spawn side assumed instead of the input's
    overlay_fog_chains: bool = False  # never acts (fog cells are never zeros)
    global_variant_type_null: bool = False  # the whole-board variant leaves variant_type null
    no_variant_counts_candidates: bool = False  # an empty region pool still counts candidates
    global_pool_on_any_board: bool = False  # global types listed on every board
    short_pack_dropped: bool = False  # a pack whose frontier empties before its size is dropped
    # skew
    skew_ties_to_later: bool = False
    # node maps
    nodemap_undirected: bool = False  # depths over edges read both ways
    entry_first_listed: bool = False  # the entry is the first node listed
    slots_in_file_order: bool = False
    nodes_sorted_by_id: bool = False
    # table validation
    violations_by_rule: bool = False  # sorted by (rule, field)
    violations_deduplicated: bool = False
    domain_silences_own_field: bool = False  # a domain violation silences only rules under its field
    cap_bound_silences: bool = False  # the r0_max_cap bound silences the row's rules like a domain
    cost_gate_under_board_width: bool = False
    guessed_width_domain: bool = False  # board_width and board_height >= spawn_side, not >= 8
    # acceptance
    legality_first_category: bool = False
    r0_mine_outside_spawn_only: bool = False
    below_target_is_best_legal: bool = False  # AC-10's below_target counts best_legal exits only
    illegal_counts_rejections: bool = False  # AC-10's illegal: boards with any illegal attempt
    fog_boards_are_fog_rows: bool = False  # AC-10's fog_boards: boards of rows with fog regions


_ACTIVE = [Readings()]


def rd() -> Readings:
    """The readings the port runs with now."""
    return _ACTIVE[-1]


class reading:
    """``with reading(Readings(...)):`` runs the port with those readings."""

    def __init__(self, readings: Readings):
        self.readings = readings

    def __enter__(self):
        _ACTIVE.append(self.readings)
        return self.readings

    def __exit__(self, *exc):
        _ACTIVE.pop()
