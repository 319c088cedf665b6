"""docs/conformance.md is complete enough for a port: the port
``tests/conformance_port``, written from the document alone in signed 64-bit
arithmetic, agrees with every vector of the kit, and ``boardgen conformance
check`` says so (exit 0).

Each rule the clean-room port's findings named is then read otherwise, one
at a time (``readings.Readings``), and the vector that pins it turns red,
named by the check; the rules the document says never act are read
otherwise too, and no vector moves (the kit cannot tell them apart, and the
document says a port may leave them out)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from boardgen_pipeline import cli
from boardgen_pipeline.conformance import check, kit

from . import conformance_port as port
from .conformance_port.gdint import i64, lsr, udec, ult, umod
from .conformance_port.readings import Readings
from .conformance_support import KIT, committed


@pytest.fixture(scope="module")
def the_kit() -> kit.Kit:
    return committed()


@pytest.fixture(scope="module")
def files() -> dict:
    return {name: json.loads((KIT / name).read_text()) for name in kit.FILES}


def test_the_port_written_from_the_document_agrees_with_the_whole_kit(tmp_path, the_kit, files):
    results = port.results(files, the_kit.manifest)
    verdict = check.check(the_kit, results["results"])
    assert verdict.agrees, verdict.report()
    kinds = {v["kind"] for _, _, v in the_kit.vectors()}
    assert {v["kind"] for _, _, v in the_kit.vectors() if v["id"] in results["results"]} == kinds
    path = tmp_path / "port.json"
    path.write_text(json.dumps(results))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["conformance", "check", str(KIT), str(path)])
    assert (code, err.getvalue()) == (0, "")
    assert out.getvalue() == f"{verdict.vectors} of {verdict.vectors} vectors agree\n"


def test_the_ports_signed_arithmetic_is_the_documents():
    """The recipes of docs/conformance.md "GDScript traps", held to plain
    unsigned arithmetic on the values where they are easiest to get wrong."""
    values = [0, 1, 9, 10, 2**62, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 10, 2**64 - 1, 0xBF58476D1CE4E5B9]
    for u in values:
        s = i64(u)
        assert udec(s) == str(u)
        for n in (1, 3, 2**62 + 1, 3 * 2**61, 2**63 - 1):
            assert umod(s, n) == u % n, (u, n)
        for shift in (1, 27, 30, 31, 63):
            assert lsr(s, shift) % 2**64 == u >> shift
        for v in values:
            assert ult(s, i64(v)) == (u < v)


# Each finding of the clean-room port (its number in cleanroom-findings.md), the reading it named, and the
# vectors that tell that reading from the document's.
OTHER_READINGS = [
    ("1: below values as numbers", {"below_values_as_numbers": True}, ["below/board_gen/m0/s0"]),
    ("4: u64 printed signed", {"signed_print": True}, ["stream/board_gen/m0/s0", "AC-4/sigma0/run1"]),
    ("6: below repeats the whole list", {"below_whole_list_repeated": True}, ["below/board_gen/m0/s0"]),
    ("7: N and fog aim in exact decimals", {"exact_decimals": True},
     ["generate/pin/n_half_boundary", "generate/pin/fog_aim_half_boundary"]),
    ("7: fog aim as ratio * (W * H)", {"fog_aim_area_first": True},
     ["generate/pin/fog_aim_product_order", "generate/pin/fog_aim_half_boundary"]),
    ("8: a decimal with no point", {"fraction_from_last_part": True}, ["generate/pin/decimal_no_point"]),
    ("8: a decimal with an exponent", {"decimal_ignores_exponent": True},
     ["generate/pin/decimal_exponent", "AC-2/density_exponent"]),
    ("10: seeds need no room", {"no_room_test": True}, ["generate/pin/fog_region_skipped"]),
    ("12: shortfall without size-0 regions", {"shortfall_ignores_size_0": True},
     ["generate/pin/fog_region_size_0", "generate/pin/decimal_exponent"]),
    ("13: Chain0 without fog neighbours", {"chain0_without_fog": True}, ["generate/L2D2/i1"]),
    ("14: r0_cap before free_open", {"gate_order": ("r0_cap", "free_open", "min_safe", "unreachable")},
     ["generate/pin/gate_free_open"]),
    ("14: unreachable before min_safe", {"gate_order": ("free_open", "r0_cap", "unreachable", "min_safe")},
     ["generate/pin/gate_min_safe"]),
    ("14: min_safe before r0_cap", {"gate_order": ("free_open", "min_safe", "r0_cap", "unreachable")},
     ["generate/pin/gate_r0_cap_min_safe"]),
    ("15: the verdict without its core condition", {"verdict_plain_only": True}, ["generate/pin/verdict_by_core"]),
    ("16: best_legal takes the first legal", {"best_legal_first": True}, ["generate/pin/best_legal_later"]),
    ("16: best_legal ties to the latest", {"best_legal_ties_to_latest": True}, ["generate/pin/best_legal_tie"]),
    ("16: best_legal by the core ratio", {"best_legal_core_ratio": True}, ["generate/pin/best_legal_not_core"]),
    ("16: best_legal by |R∞| alone", {"best_legal_by_count": True}, ["generate/pin/best_legal_not_count"]),
    ("17: least_bad gap before unreachable", {"least_bad_order": (1, 0, 2, 3)},
     ["generate/pin/least_bad_unreachable_before_gap"]),
    ("17: least_bad cap excess before gap", {"least_bad_order": (0, 2, 1, 3)},
     ["generate/pin/least_bad_gap_before_cap"]),
    ("17: least_bad cap excess before unreachable", {"least_bad_order": (2, 1, 0, 3)},
     ["generate/pin/least_bad_unreachable_before_cap"]),
    ("17: least_bad free_open before cap excess", {"least_bad_order": (0, 1, 3, 2)},
     ["generate/pin/least_bad_cap_before_free_open"]),
    ("17: least_bad ties to the latest", {"least_bad_ties_to_latest": True}, ["generate/pin/least_bad_tie"]),
    ("18: a revealed mine never floods", {"mines_never_chain": True}, ["AC-7/pathological_spawn_mine_chains"]),
    ("18: |R0| leaves the mine out", {"r0_without_mines": True}, ["AC-7/pathological_spawn_mine_chains"]),
    ("18: a mined centre searched all the same", {"centre_mine_searched": True}, ["AC-7/pathological_centre_mine"]),
    ("20: overlays read with spawn side 5", {"overlay_spawn_side": 5}, ["overlay/edge_shave_0/s0"]),
    ("21: the global variant's type null", {"global_variant_type_null": True}, ["overlay/L2D4/i0"]),
    ("22: no variant still counts candidates", {"no_variant_counts_candidates": True},
     ["overlay/no_variant/L1D0/i0"]),
    ("23: global types on every board", {"global_pool_on_any_board": True}, ["overlay/L2D0/i0"]),
    ("24: a short pack dropped", {"short_pack_dropped": True}, ["overlay/L3D2/i0"]),
    ("26: skew ties to the later row", {"skew_ties_to_later": True}, ["skew/remainder_tie/30"]),
    ("27: node-map edges read both ways", {"nodemap_undirected": True}, ["node_map/fixture/m1"]),
    ("27: the entry is the first node listed", {"entry_first_listed": True}, ["node_map/fixture/m1"]),
    ("28: slots rolled in file order", {"slots_in_file_order": True}, ["node_map/fixture/m0"]),
    ("29: nodes listed by id", {"nodes_sorted_by_id": True}, ["node_map/fixture/m0"]),
    ("30: widths from the spawn side up", {"guessed_width_domain": True}, ["AC-2/width_below_8"]),
    ("31: cost_gate under board_width", {"cost_gate_under_board_width": True}, ["AC-2/cost_gate"]),
    ("32: a domain silences its own field only", {"domain_silences_own_field": True},
     ["AC-2/domain_silences_rules"]),
    ("32: the cap's bound silences the rules", {"cap_bound_silences": True}, ["AC-2/cap_bound_keeps_rules"]),
    ("33: violations sorted by rule", {"violations_by_rule": True}, ["AC-2/sorted_by_field"]),
    ("33: a violation listed once", {"violations_deduplicated": True}, ["AC-2/fog_two_bounds"]),
    ("34: the first category only", {"legality_first_category": True}, ["AC-7/pathological_two_categories"]),
    ("35: r0_mine outside the spawn square only", {"r0_mine_outside_spawn_only": True},
     ["AC-7/pathological_spawn_mine_chains"]),
    ("36: below_target counts best_legal only", {"below_target_is_best_legal": True}, ["AC-10/mixed_exits"]),
    ("36: illegal counts boards with a rejection", {"illegal_counts_rejections": True}, ["AC-10/L1D0"]),
    ("36: fog_boards counts fog rows", {"fog_boards_are_fog_rows": True}, ["AC-10/mixed_exits"]),
]


@pytest.mark.parametrize("finding, reading, pinned", OTHER_READINGS, ids=[r[0] for r in OTHER_READINGS])
def test_each_other_reading_turns_its_vector_red(the_kit, files, finding, reading, pinned):
    results = port.results(files, the_kit.manifest, Readings(**reading), only=set(pinned))
    by_id = {v["id"]: v for _, _, v in the_kit.vectors()}
    for vid in pinned:
        d = check.first_divergence(by_id[vid], results["results"][vid])
        assert d is not None, f"{finding}: {vid} agrees under the other reading"
        assert d.vector == vid
    assert check.first_divergence(by_id[pinned[0]], port.results(files, the_kit.manifest, only={pinned[0]})
                                  ["results"][pinned[0]]) is None  # and agrees under the document's


# the rules docs/conformance.md says never act on a generated board (section 3 step 5, section 4, section 8
# "What no vector pins"): read otherwise, the whole kit still agrees
NEVER_ACT = [
    ("9: no 3x3 window test", {"no_window_test": True}),
    ("10: a short region kept", {"keep_short_regions": True}),
    ("11: no 8 x mines skip", {"no_fog_bound_skip": True}),
    ("19: no flood in the closure's step 5", {"closure_no_flood": True}),
    ("18: revealed mines no constraint", {"closure_skips_mines": True}),
    ("25: fog chains in the overlay's R0", {"overlay_fog_chains": True}),
]


@pytest.mark.parametrize("finding, reading", NEVER_ACT, ids=[r[0] for r in NEVER_ACT])
def test_the_rules_that_never_act_move_no_vector(the_kit, files, finding, reading):
    results = port.results(files, the_kit.manifest, Readings(**reading))
    verdict = check.check(the_kit, results["results"])
    assert verdict.agrees, f"{finding}: {verdict.report(limit=3)}"
