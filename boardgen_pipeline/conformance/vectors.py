"""The kit's vectors, file by file (SPEC 11; seed 001's acceptance table
AC-2..AC-12 and "黄金图回归向量协议"; seed 004 "新随机流补一组校验用黄金向量";
STYLE.md's Wycheproof: groups of vectors with shared inputs, each vector
with an id, a comment, flags naming its edge cases, its inputs in full and
its expected outputs).

A vector is ``{"id", "kind", "comment", "flags", "inputs", "expected"}``;
``kind`` names the function a port runs on ``inputs`` (docs/conformance.md
gives each), and ``expected`` lists the outputs in the order the port
computes them, which is the order ``check`` reads them in to name the first
divergence. A group's ``shared`` inputs belong to each of its vectors.

Each builder returns a file's groups; every figure in them is computed by
the product's readable references (``trace``), held to the compiled
generator where the generator makes them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import tomlkit

from boardgen_pipeline.board import rng, solver
from boardgen_pipeline.board.geometry import Board, parse_layout
from boardgen_pipeline.board.measure import measure_cells
from boardgen_pipeline.catalog import Catalog
from boardgen_pipeline.conformance import cases, edges, seeds
from boardgen_pipeline.conformance.trace import BoardTrace, trace_row, tracing
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.scopes import sigma
from boardgen_pipeline.tables.board_gen import BoardGenRow, load_board_gen

STREAM_LABELS = ("board_gen", "variant_place", "node_map")
REDUCED_SAMPLES = 8  # seed 001 AC-6/AC-10: N = 8 boards of L1-D0 and L2-D0
ROW_SAMPLES = 2  # the other default rows: two boards each
ADVENTURES = 12  # node-map draws: the master seeds 0..11


def decimal(value: float) -> str:
    """A table's float as the decimal the designer wrote (shortest repr)."""
    return edges.decimal_text(value)


def decimals(fields: dict, texts=()) -> dict:
    """A row's fields as the kit writes them: each float as its decimal
    text, or as ``texts`` gives it (the designer's own spelling of the same
    double, such as ``"1"``)."""
    out = {name: decimal(value) if isinstance(value, float) else value for name, value in fields.items()}
    for name, text in texts:
        if float(text) != fields[name]:
            raise ValueError(f"{name} written {text!r} is not the row's {fields[name]!r}")
        out[name] = text
    return out


def row_inputs(row: BoardGenRow, texts=()) -> dict:
    return decimals(row.fields(), texts)


def decimal_flags(row: dict) -> list[str]:
    """How the row's decimal texts are spelt, where a port's parser may trip."""
    texts = [v for v in row.values() if isinstance(v, str) and v[:1].isdigit()]
    out = []
    if any("e" in t for t in texts):
        out.append("decimal_exponent")
    if any("." not in t and "e" not in t for t in texts):
        out.append("decimal_no_point")
    return out


def vector(vid: str, kind: str, comment: str, inputs: dict, expected: dict, flags=()) -> dict:
    return {"id": vid, "kind": kind, "comment": comment, "flags": sorted(set(flags)), "inputs": inputs,
            "expected": expected}


def group(name: str, kind: str, comment: str, vectors: list[dict], shared: dict | None = None) -> dict:
    return {"group": name, "kind": kind, "comment": comment, "shared": shared or {}, "vectors": vectors}


# ------------------------------------------------------------------ streams


BELOW_BOUNDS = (1, 2, 3, 7, 10, 81, 4096, 1_000_000, 2**31 - 1, 2**62 + 1, 3 * 2**61, 5 * 2**60, 2**63 - 1)


def stream_vectors() -> list[dict]:
    derive = []
    for label in STREAM_LABELS:
        for master in (0, 42):
            for scope in (0, 1, 7, sigma(1, 0), 2**63 - 1):
                s = rng.derive_at(label, scope, master)
                state = s.state
                outputs = [str(s.next_u64()) for _ in range(8)]
                flags = ["max_scope"] if scope == 2**63 - 1 else []
                if state >= 2**63:
                    flags.append("state_sign_bit")
                derive.append(vector(
                    f"stream/{label}/m{master}/s{scope}", "derive_at",
                    f"{label} stream at scope {scope} under master seed {master}: its name's SHA-256, the state, "
                    f"the first 8 outputs", {"label": label, "scope": str(scope), "master_seed": str(master)},
                    {"name_hex": rng.stream_name(label, scope, master).hex(), "state": str(state), "outputs": outputs},
                    flags))
    below = []
    for label, scope, master in (("board_gen", 0, 0), ("variant_place", 7, 42), ("node_map", 3, 9)):
        s = rng.derive_at(label, scope, master)
        values, used = [], []
        for n in BELOW_BOUNDS:
            for _ in range(4):
                values.append(str(s.below(n)))
                used.append(s.draws)
        below.append(vector(
            f"below/{label}/m{master}/s{scope}", "below",
            "each bound four times in turn; a bound above 2^62 rejects a quarter to a half of the outputs, so "
            "`draws_after` (64-bit outputs taken so far) shows every rejection",
            {"label": label, "scope": str(scope), "master_seed": str(master),
             "bounds": [str(n) for n in BELOW_BOUNDS], "repeat": 4},
            {"values": values, "draws_after": used}, ["rejection", "bound_one", "bound_above_2_62"]))
    space = rng.SeedSpace(master_seed=42)
    order = ["board_gen", "board_gen", "variant_place", "node_map"]
    opened = [space.open_stream(label) for label in order]
    opens = [vector(
        "open_stream/m42", "open_stream",
        "seed 001 AC-5: the k-th open_stream of an adventure is derive_at(label, k); the counter moves one per "
        "open, whatever the label", {"master_seed": "42", "labels": order},
        {"scopes": [s.scope for s in opened], "states": [str(s.state) for s in opened],
         "states_by_derive_at": [str(rng.derive_at(lbl, k, 42).state) for k, lbl in enumerate(order)],
         "counter": space.counter}, ["AC-5"])]
    return [group("derive_at", "derive_at", "SPEC 6: a stream named (master seed, label, scope), SplitMix64", derive),
            group("below", "below", "bounded draws by rejection (rng.Stream.below)", below),
            group("open_stream", "open_stream", "the scope counter of the RNG service", opens)]


# ------------------------------------------------------------------ generate


def _flags(t: BoardTrace) -> list[str]:
    flags = [t.exit, *edges.flags(t)]
    if t.row.fog_region_count:
        flags.append("fog")
    if len(t.attempts) > 1:
        flags.append("retries")
    gates = {a.gate for a in t.attempts if a.gate}
    flags += [f"gate_{g}" for g in sorted(gates)]
    if any(a.removed for a in t.attempts):
        flags.append("shave_removed")
    if t.spawn_side != 3:
        flags.append(f"spawn_side_{t.spawn_side}")
    if t.row.board_width > 58:
        flags.append("wide_board")
    return flags


def generate_inputs(t: BoardTrace, texts=()) -> dict:
    level, depth = t.row.key
    return {"header": {"spawn_side": t.spawn_side, "dig_ap_cost": 1}, "row": row_inputs(t.row, texts),
            "level_index": level, "node_depth": depth, "label": "board_gen", "scope": str(t.scope),
            "master_seed": str(t.master_seed)}


def generate_vector(vid: str, t: BoardTrace, comment: str, flags=(), texts=()) -> dict:
    inputs = generate_inputs(t, texts)
    return vector(vid, "generate", comment, inputs, t.as_kit(), [*_flags(t), *decimal_flags(inputs["row"]), *flags])


def _batch(row: BoardGenRow, spawn_side: int, scopes, master_seed: int = 0) -> list[BoardTrace]:
    return trace_row(row, spawn_side, scopes, master_seed)


def generate_groups(catalog: Catalog) -> tuple[list[dict], dict[str, BoardTrace]]:
    """The generate vectors, and their traces by id (the overlay vectors
    place variants on these boards)."""
    table = catalog.board_gen
    side = table.spawn_side
    traces: dict[str, BoardTrace] = {}
    groups = []
    reduced = []
    for key in ((1, 0), (2, 0)):
        scopes = [sigma(*key) + i for i in range(REDUCED_SAMPLES)]
        for i, t in enumerate(_batch(table.rows[key], side, scopes)):
            vid = f"generate/L{key[0]}D{key[1]}/i{i}"
            traces[vid] = t
            reduced.append(generate_vector(vid, t, f"seed 001 AC-6/AC-10 reduced batch: row {t.row.key_text}, "
                                                   f"board {i} of {REDUCED_SAMPLES} (scope sigma + {i})",
                                           ["AC-6", "AC-10"]))
    groups.append(group("reduced_batches", "generate", "seed 001 AC-6 and AC-10: the default rows L1-D0 and L2-D0, "
                        f"N = {REDUCED_SAMPLES}, scopes sigma(L, D) + i", reduced))
    rows = []
    for key in table.keys():
        if key in ((1, 0), (2, 0)):
            continue
        scopes = [sigma(*key) + i for i in range(ROW_SAMPLES)]
        for i, t in enumerate(_batch(table.rows[key], side, scopes)):
            vid = f"generate/L{key[0]}D{key[1]}/i{i}"
            traces[vid] = t
            rows.append(generate_vector(vid, t, f"default row {t.row.key_text}, scope sigma + {i}"))
    groups.append(group("default_rows", "generate", f"every other default row, {ROW_SAMPLES} boards", rows))
    edge = []
    for fixture in cases.EDGE_ROWS:
        for i, t in enumerate(_batch(fixture.row(table), fixture.spawn_side, range(ROW_SAMPLES))):
            vid = f"generate/{fixture.name}/s{i}"
            traces[vid] = t
            edge.append(generate_vector(vid, t, f"{fixture.comment} (row {fixture.base} changed: "
                                                f"{fixture.changed(table)}), scope {i}", [fixture.name]))
    groups.append(group("edge_rows", "generate", "rows the default table does not exercise", edge))
    pinned = []
    taken: dict[str, list[int]] = {}
    for pin in cases.PINS:
        f = pin.fixture
        row = f.row(table)
        scope = edges.first_scope(row, f.spawn_side, pin.shows, taken.setdefault(f.name, []))
        taken[f.name].append(scope)
        (t,) = _batch(row, f.spawn_side, [scope])
        vid = f"generate/pin/{pin.name}"
        traces[vid] = t
        why = f", the first scope from 0 whose board shows {', '.join(pin.shows)}" if pin.shows else ""
        pinned.append(generate_vector(vid, t, f"{pin.comment} (row {f.base} changed: {f.changed(table)}; scope "
                                              f"{scope}{why})", ["pinned", *pin.shows], f.texts))
    groups.append(group("pinned_rules", "generate", "rules no default row exercises, each pinned by a fixture row "
                        "on the first scope that shows it", pinned))
    return groups, traces


# ------------------------------------------------------------------ acceptance


def _toml_row(fields: dict) -> str:
    doc = tomlkit.document()
    doc["header"] = {"spawn_side": 3}
    rows = tomlkit.aot()
    rows.append(tomlkit.item(fields))
    doc["rows"] = rows
    return tomlkit.dumps(doc)


def validation_verdict(fields: dict) -> list[dict]:
    """The table loader's verdict on a one-row table: each violation's field
    and rule (its fatal category), sorted; [] for a legal row."""
    with tempfile.TemporaryDirectory(prefix="boardgen-kit-") as tmp:
        path = Path(tmp) / "board_gen.toml"
        path.write_text(_toml_row(fields), encoding="utf-8")
        try:
            load_board_gen(path)
        except TableError as exc:
            return sorted(({"field": v.field, "rule": v.rule} for v in exc.violations),
                          key=lambda v: (v["field"], v["rule"]))
    return []


def _measure_expected(m) -> dict:
    return {"r0_size": m.r0_size, "revealed": m.revealed, "safe_count": m.safe_count,
            "unreachable_safe": m.unreachable_safe, "known_mines": m.known_mines, "fog_cells": m.fog_cells,
            "revealed_core": m.revealed_core, "safe_core": m.safe_core}


def _layout_inputs(case: cases.LayoutCase) -> dict:
    w, h, _, _ = parse_layout(case.layout)
    return {"layout": case.layout, "width": w, "height": h, "spawn_side": case.spawn_side, "rules": case.rules,
            "min_safe_count": case.min_safe_count,
            "r0_max_cap": case.r0_max_cap if case.r0_max_cap is not None else w * h}


def _batch_summary(vid: str, comment: str, ids: list[str], traces: list[BoardTrace], flags) -> dict:
    """Seed 001 AC-10's counts over the boards of the vectors ``ids``."""
    return vector(vid, "batch_summary", comment, {"vectors": ids},
                  {"boards": len(traces), "illegal": sum(t.exit == "least_bad" for t in traces),
                   "below_target": sum(t.exit != "passed" for t in traces),
                   "fog_boards": sum(bool(t.board["fog"]) for t in traces),
                   "attempts_used": [len(t.attempts) for t in traces]}, flags)


def acceptance_groups(catalog: Catalog, registry: dict | None, traces: dict[str, BoardTrace]) -> list[dict]:
    """The acceptance vectors; ``traces`` are the generate vectors' (AC-10's
    mixed batch counts the pinned ones)."""
    table = catalog.board_gen
    side = table.spawn_side
    # seed 001's L2 reference row has one fog region: the default (2,0) row with fog, edited set by set
    base = {**table.rows[(2, 0)].fields(), "fog_region_count": 1, "fog_target_ratio": 0.05}
    ac2 = []
    for case in cases.AC2_SETS:
        fields = {**base, **case.changes}
        verdict = validation_verdict(fields)
        if bool(verdict) != case.fatal:
            raise AssertionError(f"AC-2 set {case.name} ({case.what}): the loader says {verdict}")
        row = decimals(fields, case.texts)
        rules = sorted({v["rule"] for v in verdict})
        ac2.append(vector(f"AC-2/{case.name}", "validate_row", f"seed 001 AC-2: {case.what}",
                          {"header": {"spawn_side": 3}, "row": row}, {"violations": verdict},
                          ["AC-2", "fatal" if case.fatal else "legal", *rules, *decimal_flags(row),
                           *(["several_violations"] if len(verdict) > 1 else [])]))
    ac4 = []
    row = table.rows[(2, 0)]
    s0 = sigma(2, 0)
    t0, t0_again, t1 = _batch(row, side, [s0, s0, s0 + 1])
    if t1.board["layout"] == t0.board["layout"]:
        raise AssertionError("AC-4: the boards of sigma_0 and sigma_1 are the same")
    ac4.append(generate_vector("AC-4/sigma0/run1", t0, "seed 001 AC-4: default L2 row, sigma_0 = sigma(2,0)", ["AC-4"]))
    ac4.append(generate_vector("AC-4/sigma0/run2", t0_again, "seed 001 AC-4: the same call again: the same board "
                               "cell by cell and the same figures, attempts_used included", ["AC-4"]))
    ac4.append(generate_vector("AC-4/sigma1", t1, "seed 001 AC-4: sigma_1 = sigma_0 + 1: another board", ["AC-4"]))
    ac5 = []
    fixture = cases.HIGH_TARGET[2]
    for scope, t in zip((0, 1), _batch(fixture.row(table), side, [0, 1], master_seed=42)):
        ac5.append(generate_vector(f"AC-5/open_stream_{scope + 1}", t,
                                   f"seed 001 AC-5: {fixture.name} under master seed 42 on the stream of the "
                                   f"{scope + 1}st open_stream('board_gen') = derive_at('board_gen', {scope})",
                                   ["AC-5"]))
    ac7 = []
    for case, categories in cases.PATHOLOGICAL_BOARDS:
        verdict = cases.legality(case)
        if verdict["categories"] != list(categories):
            raise AssertionError(f"AC-7 {case.name}: {verdict}, not the categories {categories}")
        ac7.append(vector(f"AC-7/{case.name}", "legality",
                          f"seed 001 AC-7: {case.comment}; {'categories' if len(categories) > 1 else 'category'} "
                          f"{', '.join(categories)}", _layout_inputs(case), verdict,
                          ["AC-7", "illegal", *categories, *verdict["structure"]]))
    for case in cases.GOLDEN_BOARDS:
        verdict = cases.legality(case)
        if not verdict["legal"]:
            raise AssertionError(f"AC-7 {case.name}: {verdict}")
        ac7.append(vector(f"AC-7/{case.name}", "legality", f"seed 001 AC-7: golden board, legal: {case.comment}",
                          _layout_inputs(case), verdict, ["AC-7", "legal"]))
    ac8, ac9 = [], []
    for case in (*cases.GOLDEN_BOARDS, *(c for c, _ in cases.PATHOLOGICAL_BOARDS)):
        w, h, mines, fog = parse_layout(case.layout)
        cells = [c for c in range(w * h) if mines[c]]
        broken = cases.structure_violations(w, h, mines, fog, case.spawn_side)
        if (broken and fog) or "spawn_mine" in broken:
            # measured by no one: a board that breaks the fog rules, or one with a mine in the spawn square (the
            # measure entry point refuses it, seed 000 "出生区安全"); AC-7 names its category
            continue
        m = measure_cells(w, h, cells, fog=fog, rules=case.rules, spawn_side=case.spawn_side)
        expected = _measure_expected(m)
        ac8.append(vector(f"AC-8/{case.name}", "measure", f"seed 001 AC-8: the measure entry point: {case.comment}",
                          _layout_inputs(case), expected, ["AC-8", "integer_pairs"]))
        orders = {"row_major": cells, "reversed": cells[::-1],
                  "column_major": sorted(cells, key=lambda c: (c % w, c // w))}
        for order, listed in orders.items():
            again = measure_cells(w, h, listed, fog=fog, rules=case.rules, spawn_side=case.spawn_side)
            if _measure_expected(again) != expected:
                raise AssertionError(f"AC-9 {case.name} {order}: the measure depends on the order")
            ac9.append(vector(f"AC-9/{case.name}/{order}", "measure_cells",
                              f"seed 001 AC-9: {case.name} given as mine cells in {order.replace('_', ' ')} order",
                              {"width": w, "height": h, "mines": listed, "fog": list(fog),
                               "spawn_side": case.spawn_side, "rules": case.rules}, expected, ["AC-9"]))
    registry = seeds.load_registry() if registry is None else registry
    ac11 = []
    sigma11 = seeds.registered_scope("AC-11", table, registry)
    for k in (2, 1):
        f = cases.HIGH_TARGET[k]
        (t,) = _batch(f.row(table), side, [sigma11])
        ac11.append(generate_vector(f"AC-11/{f.name}", t, f"seed 001 AC-11: {f.comment}, registered sigma "
                                    f"{sigma11} ({registry['AC-11']['precondition']})", ["AC-11", "registered_seed"]))
    ac12 = []
    sigma12 = seeds.registered_scope("AC-12", table, registry)
    sequence = []
    for k in cases.EC5_ATTEMPTS:
        f = cases.EC5[k]
        (t,) = _batch(f.row(table), side, [sigma12])
        sequence.append(seeds.badness(t))
        ac12.append(generate_vector(f"AC-12/{f.name}", t, f"seed 001 AC-12: {f.comment}, registered sigma* {sigma12}",
                                    ["AC-12", "registered_seed"]))
    ac12.append(vector("AC-12/badness_sequence", "least_bad_sequence",
                       "seed 001 AC-12(c): the chosen board's least-bad key (unreachable safe cells, safe cells short "
                       "of the minimum, R0 over the cap, free open, attempt) for k = 1, 2, 8, 16 attempts: it never "
                       "rises", {"fixtures": [cases.EC5[k].name for k in cases.EC5_ATTEMPTS],
                                 "vectors": [f"AC-12/{cases.EC5[k].name}" for k in cases.EC5_ATTEMPTS]},
                       {"badness": sequence}, ["AC-12"]))
    batches = []
    for key in ((1, 0), (2, 0)):
        ids = [f"generate/L{key[0]}D{key[1]}/i{i}" for i in range(REDUCED_SAMPLES)]
        batches.append(_batch_summary(
            f"AC-10/L{key[0]}D{key[1]}", f"seed 001 AC-10: the F4 assertions on the reduced batch of row "
            f"({key[0]},{key[1]}) (its boards are the vectors generate/L{key[0]}D{key[1]}/i*)", ids,
            [traces[i] for i in ids], ["AC-10"]))
    ids = [f"generate/pin/{name}" for name in cases.MIXED_BATCH]
    mixed = [traces[i] for i in ids]
    if not ({t.exit for t in mixed} == {"passed", "best_legal", "least_bad"} and any(t.board["fog"] for t in mixed)
            and any(not t.board["fog"] for t in mixed)):
        raise AssertionError(f"AC-10 mixed batch: {[(t.exit, len(t.board['fog'])) for t in mixed]}")
    batches.append(_batch_summary(
        "AC-10/mixed_exits", "seed 001 AC-10's counts on a batch with every exit and boards with and without fog "
        "(the pinned vectors named): illegal counts least_bad, below_target every exit but passed", ids, mixed,
        ["AC-10", "fixture_batch"]))
    return [group("AC-2", "validate_row", "table validation: each violation set with its fatal category", ac2),
            group("AC-4", "generate", "determinism: the same seed twice, another seed", ac4),
            group("AC-5", "generate", "open_stream equals derive_at (the stream vector open_stream/m42 has the "
                  "states)", ac5),
            group("AC-7", "legality", "the legality predicate on pathological and golden boards", ac7),
            group("AC-8", "measure", "the measure entry point on the golden and pathological boards, integer pairs", ac8),
            group("AC-9", "measure_cells", "each board in several cell orders: equal outputs", ac9),
            group("AC-10", "batch_summary", "the reduced batches' F4 figures", batches),
            group("AC-11", "generate", "the registered seed of a1_high_target", ac11),
            group("AC-12", "generate", "the registered seed of a1_ec5", ac12)]


# ------------------------------------------------------------------ variants


def _variation_inputs(variation) -> dict:
    p = variation.percent_of_cells
    return {"percent_of_cells": [p.numerator, p.denominator], "per_level_bonus": variation.per_level_bonus,
            "pack_min": variation.pack_min, "pack_max": variation.pack_max,
            "types": [{"id": t.id, "unlock_level": t.unlock_level, "scope": t.scope, "effect": t.effect,
                       "effect_value": t.effect_value, "trigger": t.trigger, "placement": t.placement,
                       "board_types": list(t.board_types)} for t in variation.types]}


def _overlay(t: BoardTrace, variation, level_index: int, board_type: str, is_boss: bool, spawn_side: int):
    """The overlay of ``t``'s board and the draws it took."""
    from boardgen_pipeline.variants.placement import place_overlay

    W, H = t.row.board_width, t.row.board_height
    mines = set(t.board["mines"])
    board = Board(W, H, spawn_side, bytes(1 if c in mines else 0 for c in range(W * H)), tuple(t.board["fog"]))
    r0 = solver.reveal_r0(board.mines, W, H, spawn_side, board.fog) | set(board.fog)
    stream = tracing(rng.derive_at("variant_place", t.scope, t.master_seed))
    ov = place_overlay(board, r0, level_index=level_index, is_boss=is_boss, board_type=board_type, table=variation,
                       stream=stream)
    return {"pools": {"global": list(ov.global_pool), "region": list(ov.region_pool)},
            "global_variant": ov.global_variant, "draws": stream.bounded, "variant_type": ov.variant_type,
            "candidates": ov.candidate_count, "target": ov.target, "packs": [list(p) for p in ov.packs],
            "shortfall": ov.shortfall, "cells": list(ov.cells)}


def _overlay_vector(oid: str, vid: str, t: BoardTrace, variation, level_index: int, board_type: str, is_boss: bool,
                    comment: str, flags=()) -> dict:
    out = _overlay(t, variation, level_index, board_type, is_boss, t.spawn_side)
    kind = "global" if out["global_variant"] else ("no_variant" if out["variant_type"] is None else "region")
    more = [kind, *(["shortfall"] if out["shortfall"] else []), *(["boss"] if is_boss else [])]
    return vector(oid, "overlay", comment,
                  {"board": vid, "layout": t.board["layout"], "spawn_side": t.spawn_side, "level_index": level_index,
                   "board_type": board_type, "is_boss": is_boss, "label": "variant_place", "scope": str(t.scope),
                   "master_seed": str(t.master_seed)}, out, [*more, *flags])


def variant_groups(catalog: Catalog, traces: dict[str, BoardTrace]) -> list[dict]:
    from boardgen_pipeline.variants.skew import skew_weights

    table = catalog.board_gen
    variation = catalog.variation
    overlays = []
    for vid, t in traces.items():
        if t.row.key not in table.rows or t.row is not table.rows[t.row.key]:
            continue  # fixture rows are no level's node (those below say which node they stand for)
        overlays.append(_overlay_vector(
            f"overlay/{vid.removeprefix('generate/')}", vid, t, variation, t.row.level_index, t.row.board_type,
            table.is_boss_row(t.row.key), f"the variant overlay of board {vid} (its variant_place stream: the "
                                          f"board's scope)"))
    fixtures = []
    # the spawn side changes R0 only where the 5x5 square around the centre may hold mines: a board made with
    # spawn side 3 and no shave ring (with a ring, or with spawn side 5, both squares flood to the same R0)
    for i in range(ROW_SAMPLES):
        vid = f"generate/edge_shave_0/s{i}"
        t = traces[vid]
        if _overlay(t, variation, 1, "dungeon", False, 3) == _overlay(t, variation, 1, "dungeon", False, 5):
            raise AssertionError(f"the overlay of {vid} does not depend on its spawn side")
        fixtures.append(_overlay_vector(
            f"overlay/edge_shave_0/s{i}", vid, t, variation, 1, "dungeon", False,
            f"the overlay of {vid} (spawn side 3, no shave ring) as a level-1 dungeon board: R0 floods from the 3x3 "
            f"square; read with spawn side 5 the candidates would differ", ["spawn_side_matters"]))
    vid = "generate/L1D0/i0"
    fixtures.append(_overlay_vector(
        "overlay/no_variant/L1D0/i0", vid, traces[vid], variation, 1, "deep_underdark", False,
        f"the board of {vid} as a level-1 deep_underdark board: no type of the table qualifies, both pools are "
        f"empty: no variant, no draw"))
    skews = []
    for value in (0, 1, 30, 50, 99, 100):
        skewed = skew_weights(catalog.resources, value)
        skews.append(vector(f"skew/{value}", "skew", f"the resource-face skew by {value}% (largest remainder, total 77)",
                            {"effect_value": value}, {"weights": [r.weight for r in skewed.rows],
                                                       "total": sum(r.weight for r in skewed.rows)},
                            ["identity"] if value == 0 else []))
    tie_weights = cases.skew_weights()
    ties = []
    for value in cases.SKEW_TIE_VALUES:
        skewed = skew_weights(tie_weights, value)
        ties.append(vector(f"skew/remainder_tie/{value}", "skew",
                           f"the skew by {value}% of weights where three offense rows of weight 10 share their "
                           f"remainder and two units are left for them: the earlier rows take them",
                           {"effect_value": value}, {"weights": [r.weight for r in skewed.rows],
                                                     "total": sum(r.weight for r in skewed.rows)}, ["remainder_tie"]))
    return [group("overlays", "overlay", "SPEC 3: pools, the type draw, packs grown on safe - R0 - fog",
                  overlays, {"variation": _variation_inputs(variation)}),
            group("overlays_fixture", "overlay", "SPEC 3 on boards no default row gives: no shave ring (the spawn "
                  "side decides R0), a board type no variant type lists", fixtures, {"variation": _variation_inputs(variation)}),
            group("skew", "skew", "SPEC 3: resource face skew", skews, {"resources": _resource_inputs(catalog.resources)}),
            group("skew_ties", "skew", "SPEC 3: the largest remainder's tie to the earlier row (fixture weights)",
                  ties, {"resources": _resource_inputs(tie_weights)})]


def _resource_inputs(weights) -> list[dict]:
    return [{"id": r.id, "family": r.family, "weight": r.weight} for r in weights.rows]


# ------------------------------------------------------------------ node maps


def _pool_inputs(pool) -> dict:
    return {"level": pool.level, "fixed": pool.fixed.id,
            "templates": [{"id": t.id, "fixed": t.fixed,
                           "nodes": [{"id": n.id, "type": n.type, "tutorial": n.tutorial, "slot": list(n.slot)}
                                     for n in t.nodes], "edges": [list(e) for e in t.edges]}
                          for t in pool.templates]}


def _map_expected(m, draws: list[int]) -> dict:
    return {"draws": draws, "template": m.template_id,
            "nodes": [{"id": n.id, "type": n.type, "depth": n.depth, "tutorial": n.tutorial, "rolled": n.rolled}
                      for n in m.nodes], "edges": [list(e) for e in m.edges]}


def nodemap_groups(catalog: Catalog) -> list[dict]:
    from boardgen_pipeline.nodemap.draw import fixed_map, level_map, level_scope

    out = []
    for level in sorted(catalog.pools):
        pool = catalog.pools[level]
        if pool.procedural.enabled:
            raise ValueError(f"level {level}'s pool builds maps by step 3, which the kit does not cover yet")
        vectors = [vector(f"node_map/L{level}/first_adventure", "node_map",
                          "the first adventure: the fixed template, no stream opened, no draw",
                          {"level": level, "first_adventure": True},
                          _map_expected(fixed_map(pool), []), ["first_adventure", "no_draw"])]
        for master in range(ADVENTURES):
            scope = level_scope(catalog.pools, level)
            stream = tracing(rng.derive_at("node_map", scope, master))
            m = level_map(pool, stream)
            vectors.append(vector(
                f"node_map/L{level}/m{master}", "node_map",
                f"level {level}'s map in the adventure of master seed {master}: the level's start opens scope "
                f"{scope} (levels start in order); below(templates) then the slots in node-id order",
                {"level": level, "first_adventure": False, "label": "node_map", "scope": str(scope),
                 "master_seed": str(master)}, _map_expected(m, stream.bounded),
                ["slots"] if any(n.rolled for n in m.nodes) else []))
        out.append(group(f"level_{level}", "node_map", f"SPEC 4: level {level}'s pool, its draws",
                         vectors, {"pool": _pool_inputs(pool)}))
    out.append(_fixture_pool_group())
    return out


def _fixture_pool_group() -> dict:
    """The fixture pool's draws (cases.fixture_pool: slots, a direction-sensitive template)."""
    from boardgen_pipeline.nodemap.draw import fixed_map, level_map
    from boardgen_pipeline.nodemap.validate import validate_pool

    pool = cases.fixture_pool()
    if validate_pool(pool):
        raise AssertionError(f"the fixture pool breaks its rules: {validate_pool(pool)}")
    vectors = [vector("node_map/fixture/first_adventure", "node_map",
                      "the fixture pool's first adventure: its fixed template, no draw",
                      {"level": pool.level, "first_adventure": True}, _map_expected(fixed_map(pool), []),
                      ["first_adventure", "no_draw"])]
    drawn = set()
    for master in range(ADVENTURES):
        stream = tracing(rng.derive_at("node_map", 0, master))
        m = level_map(pool, stream)
        drawn.add(m.template_id)
        flags = (["slots"] if any(n.rolled for n in m.nodes) else []) + {
            "three_slots": ["slots_listed_out_of_id_order"], "directed_entry_6": ["entry_not_first", "edge_direction"],
        }.get(m.template_id, [])
        vectors.append(vector(
            f"node_map/fixture/m{master}", "node_map",
            f"the fixture pool (level 1, scope 0) under master seed {master}: below(3) for the template, then one "
            f"below(len(slot)) a slot node in ascending id", {"level": pool.level, "first_adventure": False,
                                                             "label": "node_map", "scope": "0",
                                                             "master_seed": str(master)},
            _map_expected(m, stream.bounded), flags))
    if drawn != {t.id for t in pool.templates}:
        raise AssertionError(f"the fixture pool's draws never take {sorted({t.id for t in pool.templates} - drawn)}")
    return group("fixture_pool", "node_map", "SPEC 4 step 2 on a fixture pool: slots rolled in node-id order, depths "
                 "along the edges from the one node no edge enters", vectors, {"pool": _pool_inputs(pool)})
