"""The conformance kit (SPEC 11; seed 001 acceptance table; seed 000
"整数对比对"): the committed kit is what the code exports, byte for byte; a
changed stream constant, placement order or shave ring turns named vectors
red at the stage it changed; every traced board is the compiled generator's;
an independent BFS in this file gives each exported board's R0, R∞ and
counts."""

from __future__ import annotations

import itertools
import json
import re
from collections import deque

import pytest

from boardgen_pipeline.board import placement, rng
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.conformance import check, edges, kit, kitjson, vectors
from boardgen_pipeline.conformance.trace import TwinsDisagree, trace_board, trace_row

from .conformance_support import KIT, REPO, committed, expected, generate_vectors, row_of

FRESH = "boardgen conformance export conformance/kit"


@pytest.fixture(scope="module")
def the_kit() -> kit.Kit:
    return committed()


@pytest.fixture(scope="module")
def built() -> dict[str, str]:
    return kit.build(load_catalog(REPO / "tables"))


def test_the_committed_kit_is_what_the_code_exports_byte_for_byte(built):
    for name, text in built.items():
        assert (KIT / name).read_bytes() == text.encode("utf-8"), f"{name} differs: run `{FRESH}` and review the diff"
    assert sorted(p.name for p in KIT.iterdir()) == sorted(built)


def test_the_kit_covers_the_acceptance_cases_with_integers_only(the_kit):
    flags = {f for _, _, v in the_kit.vectors() for f in v["flags"]}
    assert {"AC-2", "AC-4", "AC-5", "AC-6", "AC-7", "AC-8", "AC-9", "AC-10", "AC-11", "AC-12"} <= flags
    kinds = {v["kind"] for _, _, v in the_kit.vectors()}
    assert kinds == {"derive_at", "below", "open_stream", "generate", "validate_row", "legality", "measure",
                     "measure_cells", "batch_summary", "least_bad_sequence", "overlay", "skew", "node_map"}
    exits = {v["expected"]["exit"]["exit"] for v in generate_vectors(the_kit)}
    assert exits == {"passed", "best_legal", "least_bad"}
    assert {"fog", "rejection", "spawn_side_5", "wide_board", "gate_unreachable", "gate_r0_cap"} <= flags
    # the edge cases the clean-room port found no vector for (docs/decisions/conformance.md)
    assert {"n_half_boundary", "fog_aim_half_boundary", "fog_aim_product_order", "decimal_no_point",
            "decimal_exponent", "fog_region_size_0", "fog_region_skipped", "fog_shortfall", "gate_free_open",
            "gate_min_safe", "gates_free_open+r0_cap", "gates_min_safe+unreachable", "gates_r0_cap+min_safe",
            "verdict_by_core", "best_legal_later", "best_legal_tie", "best_legal_not_core", "best_legal_not_count",
            "least_bad_tie", "spawn_mine", "r0_mine", "fixture_batch", "spawn_side_matters", "no_variant",
            "remainder_tie", "slots", "slots_listed_out_of_id_order", "edge_direction", "entry_not_first",
            "several_violations", "missing_anchor", "seed_scopes"} <= flags

    def no_float(value, where):
        assert not isinstance(value, float), where
        if isinstance(value, dict):
            for k, v in value.items():
                no_float(v, f"{where}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                no_float(v, f"{where}[{i}]")
        elif isinstance(value, int) and not isinstance(value, bool):
            assert abs(value) <= kitjson.INT32_MAX, where

    for name in kit.FILES:
        no_float(json.loads((KIT / name).read_text()), name)
    ids = [v["id"] for _, _, v in the_kit.vectors()]
    assert len(ids) == len(set(ids))


def test_kit_text_refuses_a_float_and_a_wide_integer():
    with pytest.raises(TypeError, match="float"):
        kitjson.dumps({"a": 0.5})
    with pytest.raises(TypeError, match="32 bits"):
        kitjson.dumps({"a": [2**40]})
    assert kitjson.dumps({"a": [1, "2"], "b": {}}) == '{\n  "a": [1, "2"],\n  "b": {}\n}\n'


def _results_of_streams() -> dict:
    return {v["id"]: v["expected"] for g in vectors.stream_vectors() for v in g["vectors"]}


def _results_of_generate(the_kit) -> dict:
    """Every generate vector computed again from its inputs alone by the readable references."""
    out = {}
    for v in generate_vectors(the_kit):
        inp = v["inputs"]
        t = trace_board(row_of(inp), inp["header"]["spawn_side"], int(inp["scope"]), int(inp["master_seed"]))
        out[v["id"]] = t.as_kit()
    return out


def test_the_inputs_of_every_generate_vector_are_enough_to_compute_it(the_kit):
    verdict = check.check(the_kit, {**expected(the_kit), **_results_of_generate(the_kit)})
    assert verdict.agrees, verdict.report()


def test_a_changed_stream_constant_turns_the_stream_vectors_red(the_kit, monkeypatch):
    monkeypatch.setattr(rng, "GOLDEN_GAMMA", rng.GOLDEN_GAMMA ^ 2)
    verdict = check.check(the_kit, {**expected(the_kit), **_results_of_streams()})
    named = {d.vector: d for d in verdict.divergences}
    stream_ids = {v["id"] for _, g, v in the_kit.vectors() if g["kind"] in ("derive_at", "below")}
    assert set(named) == stream_ids
    first = named["stream/board_gen/m0/s0"]
    assert (first.stage, first.path) == ("stream draw (SplitMix64)", "outputs[0]")  # the state (SHA-256) still agrees
    assert named["below/board_gen/m0/s0"].stage == "bounded draw (below by rejection)"


def test_a_changed_placement_order_turns_generate_vectors_red_at_placement(the_kit, monkeypatch):
    real = placement.draw_placed

    def column_major(stream, geometry, n):
        cells = real(stream, geometry, n)
        w, h = geometry.width, geometry.height
        return [(c % w) * h + c // w if w == h else c for c in cells]  # the same draws, cells read column-major

    monkeypatch.setattr(placement, "draw_placed", column_major)
    verdict = check.check(the_kit, {**expected(the_kit), **_results_of_generate(the_kit)})
    square = {v["id"] for v in generate_vectors(the_kit)
              if v["inputs"]["row"]["board_width"] == v["inputs"]["row"]["board_height"]}
    assert {d.vector for d in verdict.divergences} == square
    d = next(d for d in verdict.divergences if d.vector == "generate/L1D0/i0")
    assert (d.stage, d.path) == ("attempt 1 placement", "attempts[0].placement.placed[0]")
    assert d.expected == 85 and d.got == 58 and "expected cell (5,8), got cell (8,5)" in d.detail


def test_a_changed_shave_ring_turns_generate_vectors_red_at_the_shave(the_kit, monkeypatch):
    real = placement.shave
    monkeypatch.setattr(placement, "shave", lambda placed, geometry, ring: real(placed, geometry, ring + 1))
    verdict = check.check(the_kit, {**expected(the_kit), **_results_of_generate(the_kit)})
    d = next(d for d in verdict.divergences if d.vector == "generate/L1D0/i0")
    # the ring of radius 3 also takes (7,6), drawn second, before (2,3)
    assert (d.stage, d.path, d.expected, d.got) == ("attempt 1 shave", "attempts[0].shave.removed[0]", 32, 67)
    assert len(verdict.divergences) >= 0.9 * len(generate_vectors(the_kit))
    assert all(d.stage.endswith("shave") for d in verdict.divergences)


def test_every_traced_board_is_the_compiled_generators(monkeypatch):
    """trace_row refuses a trace the compiled generator does not give: a
    planted change of the readable placement (only) is caught there."""
    table = load_catalog(REPO / "tables").board_gen
    row = table.rows[(1, 0)]
    assert len(trace_row(row, 3, range(4))) == 4
    real = placement.shave
    monkeypatch.setattr(placement, "shave", lambda placed, geometry, ring: real(placed, geometry, ring + 1))
    with pytest.raises(TwinsDisagree, match=r"row \(1,0\) scope 0"):
        trace_row(row, 3, range(4))


# ------------------------------------------------------------------ an independent measure


def _nbrs(c, w, h):
    x, y = c % w, c // w
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if (dx or dy) and 0 <= x + dx < w and 0 <= y + dy < h:
                yield (y + dy) * w + x + dx


def _bfs_measure(w, h, mines: set, fog: set, side: int) -> dict:
    num = {c: sum(n in mines for n in _nbrs(c, w, h)) for c in range(w * h)}
    cx, cy = (w - 1) // 2, (h - 1) // 2
    r = side // 2

    def open_from(cells, opened):
        todo = deque(c for c in cells if c not in opened)
        opened.update(todo)
        while todo:
            c = todo.popleft()
            if num[c] or c in fog:
                continue
            for n in _nbrs(c, w, h):
                if n not in opened:
                    opened.add(n)
                    todo.append(n)

    opened: set = set()
    open_from([y * w + x for y in range(cy - r, cy + r + 1) for x in range(cx - r, cx + r + 1)], opened)
    r0 = len(opened)
    flagged: set = set()
    changed = True
    while changed:
        facts = []
        for c in opened - fog:
            hidden = frozenset(n for n in _nbrs(c, w, h) if n not in opened and n not in flagged)
            if hidden:
                facts.append((hidden, num[c] - sum(n in flagged for n in _nbrs(c, w, h))))
        safe, bomb = set(), set()
        for a, ma in facts:
            pairs = [(a, ma)] + [(b - a, mb - ma) for b, mb in facts if a < b]
            for cells, m in pairs:
                if m == 0:
                    safe |= cells
                elif m == len(cells):
                    bomb |= cells
        safe |= {f for f in fog - opened if any(n in opened for n in _nbrs(f, w, h))}
        changed = bool(safe - opened or bomb - flagged)
        flagged |= bomb
        open_from(sorted(safe - opened), opened)
    centre = cy * w + cx
    seen, todo = {centre}, deque([centre])
    while todo:
        for n in _nbrs(todo.popleft(), w, h):
            if n not in mines and n not in seen:
                seen.add(n)
                todo.append(n)
    safe_count = w * h - len(mines)
    return {"r0_size": r0, "revealed": len(opened), "safe_count": safe_count, "revealed_core": len(opened - fog),
            "safe_core": safe_count - len(fog), "known_mines": len(flagged),
            "unreachable_safe": safe_count - len(seen), "numbers": num}


def test_an_independent_bfs_gives_each_exported_boards_r0_r_infinity_and_counts(the_kit):
    checked = 0
    for v in generate_vectors(the_kit):
        row, side = v["inputs"]["row"], v["inputs"]["header"]["spawn_side"]
        w, h = row["board_width"], row["board_height"]
        board, m = v["expected"]["board"], v["expected"]["measure"]
        ours = _bfs_measure(w, h, set(board["mines"]), set(board["fog"]), side)
        num = ours.pop("numbers")
        assert {k: m[k] for k in ours} == ours, v["id"]
        fog = set(board["fog"])
        assert board["numbers"] == ["".join("*" if y * w + x in set(board["mines"]) else
                                            ("f" if y * w + x in fog else str(num[y * w + x])) for x in range(w))
                                    for y in range(h)], v["id"]
        chosen = v["expected"]["attempts"][v["expected"]["exit"]["chosen_attempt"] - 1]
        assert chosen["legality"] == {"safe_count": ours["safe_count"], "r0_size": ours["r0_size"],
                                      "unreachable_safe": ours["unreachable_safe"]}, v["id"]
        checked += 1
    for _, g, v in the_kit.vectors():
        if v["kind"] == "measure":
            rows = v["inputs"]["layout"].split("/")
            w, flat = len(rows[0]), "".join(rows)
            ours = _bfs_measure(w, len(rows), {i for i, ch in enumerate(flat) if ch == "*"},
                                {i for i, ch in enumerate(flat) if ch == "f"}, v["inputs"]["spawn_side"])
            ours.pop("numbers")
            assert {k: v["expected"][k] for k in ours} == ours, v["id"]
            checked += 1
    assert checked >= 60


# ------------------------------------------------------------------ what the pinned vectors pin


GATES = ("free_open", "r0_cap", "min_safe", "unreachable")


def _failed(attempt: dict, row: dict) -> dict:
    legality = attempt["legality"]
    return {"free_open": legality["r0_size"] == legality["safe_count"],
            "r0_cap": legality["r0_size"] > row["r0_max_cap"], "min_safe": legality["safe_count"] < row["min_safe_count"],
            "unreachable": legality["unreachable_safe"] > 0}


def test_every_other_order_of_the_gates_names_another_gate_in_some_vector(the_kit):
    caught = set()
    for v in generate_vectors(the_kit):
        row = v["inputs"]["row"]
        for order in itertools.permutations(GATES):
            for a in v["expected"]["attempts"]:
                failed = _failed(a, row)
                if next((g for g in GATES if failed[g]), None) != next((g for g in order if failed[g]), None):
                    caught.add(order)
    assert caught == set(itertools.permutations(GATES)) - {GATES}


def _badness(a: dict, row: dict) -> tuple[int, int, int, int]:
    legality = a["legality"]
    return (legality["unreachable_safe"], max(0, row["min_safe_count"] - legality["safe_count"]),
            max(0, legality["r0_size"] - row["r0_max_cap"]), int(legality["r0_size"] == legality["safe_count"]))


def test_every_other_order_of_the_least_bad_key_chooses_another_attempt_in_some_vector(the_kit):
    caught = set()
    for v in generate_vectors(the_kit):
        if v["expected"]["exit"]["exit"] != "least_bad":
            continue
        row = v["inputs"]["row"]
        keys = {a["k"]: _badness(a, row) for a in v["expected"]["attempts"]}
        for order in itertools.permutations(range(4)):
            chosen = min(keys, key=lambda k: ([keys[k][i] for i in order], k))
            assert order != (0, 1, 2, 3) or chosen == v["expected"]["exit"]["chosen_attempt"], v["id"]
            if chosen != v["expected"]["exit"]["chosen_attempt"]:
                caught.add(order)
    assert caught == set(itertools.permutations(range(4))) - {(0, 1, 2, 3)}


def test_the_fog_rules_the_document_calls_inert_never_act():
    """docs/conformance.md section 3 step 5: the window test never refuses a
    cell and no region stops short; on the kit's fog rows and on rows whose
    fog is as dense as the domain allows."""
    table = load_catalog(REPO / "tables").board_gen
    rows = [table.rows[k] for k in table.keys() if table.rows[k].fog_region_count]
    base = table.rows[(2, 0)].fields()
    for count, ratio, density in ((1, 0.25, 0.3), (4, 0.25, 0.5), (32, 0.25, 0.2), (2, 0.2, 0.1)):
        rows.append(row_of({"row": {**base, "fog_region_count": count, "fog_target_ratio": ratio,
                                    "mine_density": density, "max_gen_attempts": 4}}))
    steps = 0
    for row in rows:
        for scope in range(12):
            for a in trace_board(row, 3, scope).attempts:
                assert (a.fog_step.window_refusals, a.fog_step.regions_short) == (0, 0), (row.key_text, scope, a.k)
                steps += 1
    assert steps > 200


def test_a_pin_that_no_scope_shows_fails_loudly():
    row = load_catalog(REPO / "tables").board_gen.rows[(1, 0)]
    with pytest.raises(ValueError, match=r"no scope in \[0, 3\) of row \(1,0\) shows \['verdict_by_core'\]"):
        edges.first_scope(row, 3, ("verdict_by_core",), limit=3)


def test_each_fixture_comment_names_only_the_fields_it_changed(built):
    """An edge or pinned vector's comment lists ``field old -> new`` for each
    field that differs from its base row, and nothing else (the kit as the
    code builds it)."""
    table = load_catalog(REPO / "tables").board_gen
    named = 0
    for v in (v for g in json.loads(built["generate.json"])["groups"] for v in g["vectors"]):
        if "changed: " not in v["comment"]:
            continue
        base = re.search(r"\(row \((\d+), (\d+)\) changed: ", v["comment"])
        fields = table.rows[(int(base[1]), int(base[2]))].fields()
        for name, old, new in re.findall(r"(\w+) (\S+) -> ([^,;)]+)", v["comment"]):
            if name == "spawn_side":
                assert (int(old), int(new)) == (3, v["inputs"]["header"]["spawn_side"])
                continue
            assert str(fields[name]) == old and old != new, (v["id"], name)
            assert str(row_of(v["inputs"]).fields()[name]) == new, (v["id"], name)
            named += 1
        differing = {k for k, value in row_of(v["inputs"]).fields().items() if fields[k] != value}
        assert differing == set(re.findall(r"(\w+) \S+ -> ", v["comment"])) - {"spawn_side"}, v["id"]
    assert named >= 40


def test_the_spawn_side_moves_an_overlay_only_without_a_shave_ring(the_kit):
    """docs/conformance.md section 5: on a board the generator made with a
    shave ring, R0 from the 3x3 and from the 5x5 square is the same."""
    catalog = load_catalog(REPO / "tables")
    traces = vectors.generate_groups(catalog)[1]
    moved = set()
    for _, g, v in the_kit.vectors():
        if v["kind"] != "overlay":
            continue
        t = traces[v["inputs"]["board"]]
        args = (catalog.variation, v["inputs"]["level_index"], v["inputs"]["board_type"], v["inputs"]["is_boss"])
        if vectors._overlay(t, *args, 3) != vectors._overlay(t, *args, 5):
            moved.add(v["id"])
    assert moved == {"overlay/edge_shave_0/s0", "overlay/edge_shave_0/s1"}
