"""The conformance kit (SPEC 11; seed 001 acceptance table; seed 000
"整数对比对"): the committed kit is what the code exports, byte for byte; a
changed stream constant, placement order or shave ring turns named vectors
red at the stage it changed; every traced board is the compiled generator's;
an independent BFS in this file gives each exported board's R0, R∞ and
counts."""

from __future__ import annotations

import json
from collections import deque

import pytest

from boardgen_pipeline.board import placement, rng
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.conformance import check, kit, kitjson, vectors
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
