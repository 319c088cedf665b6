"""Overlays of a whole row, compiled, against the readable reference (SPEC 3;
seed 003 "布置段", "验收标准").

- ``board.r0``: the batch R0 equals ``solver.reveal_r0`` on every board, fog
  boards included; ``layouts_to_arrays`` equals ``geometry.parse_layout``;
- ``variants.batch.place_row`` equals ``overlays.overlay_for`` (the readable
  ``place_overlay``) on every board of default rows: level 1, the level-1
  Boss (immune: region fallback), fog rows of levels 2 and 3, the level-2
  Boss (global type); and on random boards under random tables, on bit
  rows (``placement_rows``) and, wider than the rows hold, cell by cell;
  the two placement kernels place the same packs on random boards of every
  pack range;
- ``OverlayBatch.to_arrow`` is the table (and the Parquet bytes) the records
  path writes, and ``from_arrow`` reads it back to the same overlays;
- ``variants.check_kernels``: each rule's bit fires on a planted fault of
  that rule, on that board only, and agrees with the readable checks; a
  correct row has no bit;
- ``variants.outcomes``: a failing check names the offending boards and
  rules and draws the first; a passing one draws nothing and names its
  example board.
"""

from __future__ import annotations

import dataclasses
import io
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boardgen_pipeline.board.closure_rows import MAX_WIDTH, PAD
from boardgen_pipeline.board.generator import generate_batch_from_row
from boardgen_pipeline.board.geometry import Board, neighbour_arrays, parse_layout
from boardgen_pipeline.board.r0 import layouts_to_arrays, r0_batch
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.board.solver import reveal_r0
from boardgen_pipeline.calibration.batch import batch_scopes
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.variants import outcomes, placement_kernels, placement_rows
from boardgen_pipeline.variants.batch import OverlayBatch, overlay_dataset_schema, place_row
from boardgen_pipeline.variants.check_kernels import RULE_GROUPS, RULES, rule_flags, rules_of
from boardgen_pipeline.variants.overlays import overlay_for
from boardgen_pipeline.variants.placement import Overlay, place_overlay
from boardgen_pipeline.variants.placement_kernels import place_regions, target_table
from boardgen_pipeline.variants.table import load_variation_table
from boardgen_pipeline.warehouse import datasets

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog()
BOARD_GEN, VARIATION, WEIGHTS = CATALOG.board_gen, CATALOG.variation, CATALOG.resources
SPAWN = BOARD_GEN.spawn_side
BOARDS = 64
# level 1; level-1 Boss (immune: region fallback); fog rows of levels 2 and 3;
# level-2 Boss (global type, fog); level-3 Boss (global type, 16 x 16, fog)
ROWS = [(1, 0), (1, 4), (2, 2), (2, 4), (3, 3), (3, 4)]


@cache
def row_boards(key):
    """The first 64 boards of a default row's calibration batch, with their
    records as the ``boards`` dataset holds them."""
    row = BOARD_GEN.rows[key]
    scopes = list(batch_scopes(*key, BOARDS))
    gens = generate_batch_from_row(row, SPAWN, scopes)
    records = [{**g.metrics, "level_index": key[0], "node_depth": key[1], "batch_fingerprint": "bfp"} for g in gens]
    mines, fog = layouts_to_arrays([r["layout"] for r in records], row.board_width, row.board_height)
    return row, scopes, gens, records, mines, fog


def placed_row(key, table=VARIATION) -> OverlayBatch:
    row, scopes, _, _, mines, fog = row_boards(key)
    return place_row(mines, fog, scopes=scopes, master_seed=0, width=row.board_width, height=row.board_height,
                     spawn_side=SPAWN, level_index=key[0], node_depth=key[1], board_type=row.board_type,
                     is_boss=BOARD_GEN.is_boss_row(key), table=table)


def parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", write_statistics=True, store_schema=True)
    return buf.getvalue()


# --- R0 and layouts -----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ROWS)
def test_layouts_to_arrays_equals_parse_layout(key):
    row, _, gens, records, mines, fog = row_boards(key)
    assert mines.shape == fog.shape == (BOARDS, row.board_width * row.board_height)
    assert mines.dtype == fog.dtype == np.uint8
    for i, rec in enumerate(records):
        w, h, m, f = parse_layout(rec["layout"])
        assert (w, h) == (row.board_width, row.board_height)
        assert mines[i].tobytes() == m == gens[i].board.mines
        assert tuple(np.flatnonzero(fog[i]).tolist()) == f == gens[i].board.fog


def test_the_rows_cover_fog_and_both_boss_routes():
    assert not row_boards((1, 0))[5].any() and not row_boards((1, 4))[5].any()
    for key in ((2, 2), (2, 4), (3, 3), (3, 4)):
        assert row_boards(key)[5].any(axis=1).sum() > BOARDS * 3 // 4  # fog on most boards of a fog row
    assert placed_row((1, 4)).global_fallback.all() and (placed_row((1, 4)).cell_count() > 0).any()
    assert (placed_row((2, 4)).global_variant >= 0).all() and (placed_row((3, 4)).global_variant >= 0).all()


@pytest.mark.parametrize("text, match", [
    ("..../....", "characters"),  # 4 x 2 given for 3 x 3
    (".../.x./...", "rows of 3 cells"),
    ("...|.../...", "rows of 3 cells"),
    (".../.é./...", "character"),
])
def test_layouts_to_arrays_refuses_other_texts(text, match):
    with pytest.raises(ValueError, match=match):
        layouts_to_arrays([".../.../...", text], 3, 3)
    with pytest.raises(ValueError, match="width"):
        layouts_to_arrays(["..."], 0, 1)
    assert [a.shape for a in layouts_to_arrays([], 4, 5)] == [(0, 20), (0, 20)]


@pytest.mark.parametrize("key", ROWS)
def test_r0_batch_equals_reveal_r0_on_every_board(key):
    row, _, gens, _, mines, fog = row_boards(key)
    r0 = r0_batch(mines, fog, row.board_width, row.board_height, SPAWN)
    for i, g in enumerate(gens):
        b = g.board
        expected = reveal_r0(b.mines, b.width, b.height, b.spawn_side, frozenset(b.fog))
        assert set(np.flatnonzero(r0[i]).tolist()) == expected
        assert r0[i].sum() == g.metrics["r0_size"]


def test_r0_batch_fog_is_opened_but_never_chains_and_the_spawn_is_clamped():
    # 5 x 1 corridor: the spawn square clamps to cells 1..3; cell 3 is fog
    # with number 0, so cell 4 stays closed (seed 001 F1 operator ①)
    mines = np.zeros((1, 5), np.uint8)
    fog = np.array([[0, 0, 0, 1, 0]], np.uint8)
    assert r0_batch(mines, fog, 5, 1, 3).tolist() == [[1, 1, 1, 1, 0]]
    assert reveal_r0(bytes(5), 5, 1, 3, {3}) == {0, 1, 2, 3}
    rng = np.random.default_rng(3)
    for w, h, side in ((1, 1, 1), (2, 7, 3), (9, 4, 5), (13, 11, 3)):
        m = (rng.random((20, w * h)) < 0.2).astype(np.uint8)
        f = ((rng.random((20, w * h)) < 0.1) & (m == 0)).astype(np.uint8)
        got = r0_batch(m, f, w, h, side)
        for i in range(20):
            want = reveal_r0(m[i].tobytes(), w, h, side, frozenset(np.flatnonzero(f[i]).tolist()))
            assert set(np.flatnonzero(got[i]).tolist()) == want


def test_r0_batch_refuses_arrays_that_disagree():
    with pytest.raises(ValueError, match="mines"):
        r0_batch(np.zeros((2, 9), np.uint8), None, 4, 2)
    with pytest.raises(ValueError, match="fog"):
        r0_batch(np.zeros((2, 8), np.uint8), np.zeros((3, 8), np.uint8), 4, 2)
    with pytest.raises(ValueError, match="mines"):
        r0_batch(np.zeros(8, np.uint8), None, 4, 2)
    with pytest.raises(ValueError, match="spawn"):
        r0_batch(np.zeros((1, 8), np.uint8), None, 4, 2, 1.5)


# --- placement ----------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ROWS)
def test_place_row_equals_the_readable_placement_on_every_board(key):
    _, _, gens, records, _, _ = row_boards(key)
    batch = placed_row(key)
    assert len(batch) == BOARDS
    for i, (g, rec) in enumerate(zip(gens, records)):
        assert batch.overlay(i) == overlay_for(g.board, rec, BOARD_GEN, VARIATION), i


def test_place_row_on_a_row_whose_pool_is_empty():
    # level 1, underdark: no type passes the gate (a legal, silent state)
    row, scopes, gens, records, mines, fog = row_boards((1, 0))
    batch = place_row(mines, fog, scopes=scopes, width=10, height=10, spawn_side=SPAWN, level_index=1, node_depth=0,
                      board_type="underdark", is_boss=True, table=VARIATION)
    for i, g in enumerate(gens):
        want = place_overlay(g.board, set(), level_index=1, is_boss=True, board_type="underdark", table=VARIATION,
                             stream=derive_at("variant_place", scopes[i]))
        assert batch.overlay(i) == want and want.global_fallback and want.variant_type is None


def test_place_row_equals_the_readable_placement_on_random_boards_and_tables():
    """The draw protocol under other pack ranges, percents (exact
    fractions, halves rounded up) and level bonuses, on odd board sizes."""
    rng = np.random.default_rng(2024)
    types = [(1, "dungeon"), (2, "underdark"), (3, "deep_underdark")]
    percents = [Fraction(0), Fraction(25, 2), Fraction(1, 3), Fraction(50), Fraction("0.1"), Fraction(37)]
    checked = placed = 0
    for case in range(24):
        w, h = int(rng.integers(3, 15)), int(rng.integers(3, 15))
        pack_min = int(rng.integers(1, 5))
        table = dataclasses.replace(VARIATION, percent_of_cells=percents[case % len(percents)],
                                    per_level_bonus=int(rng.integers(0, 10)), pack_min=pack_min,
                                    pack_max=int(rng.integers(pack_min, 10)))
        level, board_type = types[case % 3]
        mines = (rng.random((16, w * h)) < rng.uniform(0.05, 0.3)).astype(np.uint8)
        fog = ((rng.random((16, w * h)) < 0.08) & (mines == 0)).astype(np.uint8)
        scopes = [int(s) for s in rng.integers(0, 2**40, 16)]
        master = int(rng.integers(0, 5))
        batch = place_row(mines, fog, scopes=scopes, master_seed=master, width=w, height=h, spawn_side=3,
                          level_index=level, node_depth=1, board_type=board_type, is_boss=False, table=table)
        for i in range(16):
            board = Board(w, h, 3, mines[i].tobytes(), tuple(np.flatnonzero(fog[i]).tolist()))
            r0 = reveal_r0(board.mines, w, h, 3, frozenset(board.fog)) | set(board.fog)
            want = place_overlay(board, r0, level_index=level, is_boss=False, board_type=board_type, table=table,
                                 stream=derive_at("variant_place", scopes[i], master))
            assert batch.overlay(i) == want, (case, i)
            checked += 1
            placed += len(want.cells)
    assert checked == 24 * 16 and placed > 500


PLACEMENT_FIELDS = ("type_index", "target", "candidate_count", "draws", "shortfall", "pack_count", "pack_sizes",
                    "pack_cells", "cell_counts", "cells")


def random_candidates(rng, boards, w, h):
    """Boards with mines and taken cells of random densities: open fields,
    mazes of small pieces, boards with no candidate."""
    mines = (rng.random((boards, w * h)) < rng.uniform(0.0, 0.6)).astype(np.uint8)
    taken = ((rng.random((boards, w * h)) < rng.uniform(0.0, 0.3)) & (mines == 0)).astype(np.uint8)
    return mines, taken


def test_the_bit_row_kernel_places_what_the_cell_kernel_places(monkeypatch):
    """``placement_rows`` against ``place_region_cells`` on the same boards,
    field by field, for every pack range from 1 (nothing is too small) to
    pieces of 6, on boards from one row or column to the widest the rows
    hold: the re-split's ring-by-ring growth, its one-cell shortcut
    (``pack_min`` 2) and the k-th set bit must pick the cells the cell
    kernel's searches and scans pick."""
    rng = np.random.default_rng(34)
    shapes = [(1, 9), (9, 1), (2, 2), (5, 7), (16, 16), (30, 16), (MAX_WIDTH, 3), (MAX_WIDTH - 1, 5)]
    placed = 0
    for case in range(96):
        w, h = shapes[case % len(shapes)]
        pack_min = 1 + case % 6
        pack_max = pack_min + int(rng.integers(0, 5))
        mines, taken = random_candidates(rng, 12, w, h)
        states = rng.integers(0, 2**63, 12, dtype=np.uint64)
        targets = target_table(w * h, int(rng.integers(1, 100)), 1, int(rng.integers(0, 6)))
        kw = dict(width=w, height=h, pool_size=1 + case % 3, targets=targets, pack_min=pack_min, pack_max=pack_max)
        rows = place_regions(states, mines, taken, **kw)
        with monkeypatch.context() as m:
            m.setattr(placement_kernels, "MAX_WIDTH", 0)
            cells = place_regions(states, mines, taken, **kw)
        for name in PLACEMENT_FIELDS:
            assert np.array_equal(getattr(rows, name), getattr(cells, name)), (case, name)
        placed += int(rows.cell_counts.sum())
    assert placed > 2000


def test_boards_wider_than_the_rows_take_the_cell_kernel_and_equal_the_readable_placement():
    rng = np.random.default_rng(58)
    for w, h, pack_min in ((MAX_WIDTH + 1, 3, 2), (64, 2, 3), (70, 4, 1)):
        table = dataclasses.replace(VARIATION, percent_of_cells=Fraction(40), per_level_bonus=0, pack_min=pack_min,
                                    pack_max=pack_min + 3)
        mines = (rng.random((4, w * h)) < 0.15).astype(np.uint8)
        scopes = [int(s) for s in rng.integers(0, 2**40, 4)]
        batch = place_row(mines, None, scopes=scopes, width=w, height=h, spawn_side=2, level_index=2, node_depth=1,
                          board_type="underdark", is_boss=False, table=table)
        for i in range(4):
            board = Board(w, h, 2, mines[i].tobytes(), ())
            want = place_overlay(board, reveal_r0(board.mines, w, h, 2, frozenset()), level_index=2, is_boss=False,
                                 board_type="underdark", table=table, stream=derive_at("variant_place", scopes[i]))
            assert batch.overlay(i) == want and len(want.cells) > 0, (w, i)


@pytest.mark.parametrize("kernel", ["rows", "cells"])
def test_the_placement_kernels_refuse_arrays_they_would_write_past(kernel):
    """Called directly, past ``place_regions``' checks: outputs or scratch too
    small for the batch, or a board the bit rows cannot hold, raise instead
    of writing out of bounds."""
    w, h, boards = 6, 5, 3
    nc = w * h
    mines, taken = np.zeros((boards, nc), np.uint8), np.zeros((boards, nc), np.uint8)
    states = np.arange(boards, dtype=np.uint64)
    rule = placement_kernels.PackRule(pool_size=2, pack_min=2, pack_max=3, targets=target_table(nc, 50, 1, 0))

    def out(short=""):
        """Outputs that fit the batch, but for the one named ``short``: one entry short."""
        def size(name, n):
            return n - 1 if name == short else n
        return placement_kernels.PlacementOut(
            summary=np.zeros((size("summary", boards), placement_kernels.OUT_SIZE), np.int64),
            **{name: np.zeros(size(name, boards * nc), np.int64) for name in ("pack_ends", "pack_cells", "cells")},
            cell_ends=np.zeros(size("cell_ends", boards), np.int64))

    def run(o, small_scratch=False, width=w):
        boards_in = placement_kernels.Candidates(mines=mines, taken=taken)
        if kernel == "rows":
            bits = np.zeros((placement_rows.ROWS, h + 2 * PAD - (1 if small_scratch else 0)), np.uint64)
            return placement_rows.place_region_bits(states, boards_in, rule, width, nc // width, o, bits)
        nb, nbn = neighbour_arrays(w, h)
        n = nc - (1 if small_scratch else 0)
        scratch = placement_kernels.PlacementScratch(
            free=np.zeros(n, np.uint8), in_pack=np.zeros(n, np.uint8), seen=np.zeros(n, np.int64),
            queue=np.zeros(n, np.int64), frontier=np.zeros(24, np.int64), left=np.zeros(n, np.int64),
            pack=np.zeros(3, np.int64))
        return placement_kernels.place_region_cells(states, boards_in, rule, nb, nbn, o, scratch)

    assert run(out()) > 0
    for kw, match in (*((dict(o=out(short)), "output") for short in placement_kernels.PlacementOut._fields),
                      (dict(o=out(), small_scratch=True), "scratch" if kernel == "cells" else "rows")):
        with pytest.raises(ValueError, match=match):
            run(**kw)
    if kernel == "rows":
        with pytest.raises(ValueError, match="rows"):
            run(out(), width=1)  # 1 x 30 cells read as 30 x 1: the scratch's rows are too few


def test_target_table_is_the_exact_count_rule():
    from boardgen_pipeline.variants.placement import target_count

    for pct in (Fraction(8), Fraction(25, 2), Fraction(1, 3), Fraction("12.345678901234567")):
        table = dataclasses.replace(VARIATION, percent_of_cells=pct, per_level_bonus=3)
        got = target_table(300, pct.numerator, pct.denominator, 2 * 3).tolist()
        assert got == [target_count(c, 3, table) for c in range(301)]


def test_place_regions_refuses_what_the_protocol_cannot_run():
    mines, taken = np.zeros((2, 9), np.uint8), np.zeros((2, 9), np.uint8)
    states, targets = np.zeros(2, np.uint64), target_table(9, 10, 1, 0)
    kw = dict(width=3, height=3, pool_size=2, targets=targets, pack_min=2, pack_max=4)
    place_regions(states, mines, taken, **kw)
    for change, match in ((dict(pack_min=5), "pack_min"), (dict(pack_min=0), "pack_min"), (dict(pool_size=0), "pool"),
                          (dict(targets=targets[:5]), "targets"), (dict(width=4), "mines"),
                          (dict(targets=np.arange(10) + 1), "above")):
        with pytest.raises(ValueError, match=match):
            place_regions(states, mines, taken, **{**kw, **change})
    with pytest.raises(ValueError, match="state"):
        place_regions(states[:1], mines, taken, **kw)


# --- Arrow --------------------------------------------------------------------------------------


def records_path_table(key, fingerprint="ofp") -> pa.Table:
    """The reference: one record a board from the readable placement
    (``overlays.overlay_records``: board scope, node depth, the overlay
    record), the row keys and fingerprints, through ``records_table``."""
    _, _, gens, records, _, _ = row_boards(key)
    recs = [{"board_scope": rec["scope"], "node_depth": rec["node_depth"],
             **overlay_for(g.board, rec, BOARD_GEN, VARIATION).to_record(),
             "level_index": key[0], "batch_fingerprint": rec["batch_fingerprint"], "overlay_fingerprint": fingerprint}
            for g, rec in zip(gens, records)]
    return datasets.records_table(recs, schema=overlay_dataset_schema())


@pytest.mark.parametrize("key", ROWS)
def test_to_arrow_is_the_records_table_and_its_parquet_bytes(key):
    batch = placed_row(key)
    table = batch.to_arrow("bfp", "ofp")
    want = records_path_table(key)
    assert table.schema == want.schema == overlay_dataset_schema()
    assert table.equals(want)
    assert table.to_pylist() == want.to_pylist()
    assert parquet_bytes(table) == parquet_bytes(want)
    # one batch fingerprint a board gives the same table
    assert batch.to_arrow(["bfp"] * BOARDS, "ofp").equals(want)


@pytest.mark.parametrize("key", ROWS)
def test_from_arrow_reads_back_the_written_overlays(key):
    batch = placed_row(key)
    table = pq.read_table(io.BytesIO(parquet_bytes(batch.to_arrow("bfp", "ofp"))))
    back = OverlayBatch.from_arrow(table, level_index=key[0], node_depth=key[1])
    assert back.to_arrow("bfp", "ofp").equals(table)
    assert [back.overlay(i) for i in range(BOARDS)] == [batch.overlay(i) for i in range(BOARDS)]


def test_from_arrow_refuses_a_null_where_a_record_always_has_a_value():
    table = placed_row((1, 0)).to_arrow("bfp", "ofp")
    target = table.column("target").to_pylist()
    target[3] = None
    bad = table.set_column(table.schema.get_field_index("target"), "target", pa.array(target, pa.int64()))
    with pytest.raises(ValueError, match="target"):
        OverlayBatch.from_arrow(bad, level_index=1, node_depth=0)
    with pytest.raises(ValueError, match="missing"):
        OverlayBatch.from_arrow(table.drop_columns(["packs"]), level_index=1, node_depth=0)


def test_from_overlays_keeps_hand_built_overlays():
    overlays = [GOOD, dataclasses.replace(GOOD, level_index=2, stream_scope=5, master_seed=3), GLOBAL]
    batch = OverlayBatch.from_overlays(overlays, board_scopes=[1, 2, 3], node_depth=4)
    assert [batch.overlay(i) for i in range(3)] == overlays
    assert batch.node_depth == 4 and batch.board_scope.tolist() == [1, 2, 3]


# --- compiled checks: planted faults -------------------------------------------------------------

# An 8 x 8 board, mines on column x = 6: R0 floods x = 0..5 from the centre;
# the candidates are column x = 7 (cells 7, 15, ..., 63).
W = 8
MINES = bytes(1 if c % W == 6 else 0 for c in range(W * W))
GOOD = Overlay(
    width=W, height=W, level_index=1, board_type="dungeon", is_boss=False, is_elite=False,
    variant_type="bramble", scope="region", effect="flat_damage", effect_value=1, trigger="on_open",
    placement="closed_only", cells=(7, 15, 47, 55), packs=((7, 15), (47, 55)), target=4, shortfall=0,
    candidate_count=8, pack_min=2, pack_max=4, draws=7,
)
# a level-2 Boss overlay with its whole-board type
GLOBAL = dataclasses.replace(
    GOOD, is_boss=True, level_index=2, board_type="underdark", variant_type="veins", global_variant="veins",
    scope="global", effect="resource_face", effect_value=30, trigger="always", placement="any", cells=(), packs=(),
    target=0, candidate_count=0, draws=0, global_pool=("veins",))


def fault(base=GOOD, **changes):
    return base, changes


# (fault, fog cells of the board, the rules the readable checks give) for
# every rule of check_kernels.RULES
FAULTS = {
    "on_mine": (fault(cells=(6, 7, 47, 55), packs=((6, 7), (47, 55))), (), {"variant_on_mine"}),
    "in_r0": (fault(cells=(4, 5, 47, 55), packs=((4, 5), (47, 55))), (), {"variant_in_r0"}),
    "on_fog": (fault(cells=(15, 23, 47, 55), packs=((15, 23), (47, 55))), (23,), {"variant_on_fog"}),
    "off_board": (fault(cells=(7, 64), packs=((7, 64),), target=2), (), {"variant_outside_board", "pack_off_board"}),
    "negative_cell": (fault(cells=(-1, 7, 15, 47, 55), target=5), (), {"variant_outside_board", "pack_off_board"}),
    "wrong_size": (fault(width=9), (), {"board_mismatch", "pack_board_mismatch"}),
    "split_pack": (fault(cells=(7, 23, 47, 55), packs=((7, 23), (47, 55))), (), {"pack_disconnected", "packs_touch"}),
    "empty_pack": (fault(packs=((7, 15), (47, 55), ())), (), {"pack_disconnected", "pack_size", "packs_touch"}),
    "oversized": (fault(cells=(7, 15, 23, 31, 39), packs=((7, 15, 23, 31, 39),), target=5), (), {"pack_size"}),
    "touching": (fault(cells=(7, 15, 23, 31), packs=((7, 15), (23, 31))), (), {"packs_touch"}),
    "overlap": (fault(cells=(7, 15, 23), packs=((7, 15), (15, 23)), target=3), (), {"pack_overlap"}),
    "not_union": (fault(cells=(7, 15, 47)), (), {"cells_not_union_of_packs", "shortfall_mismatch", "packs_touch"}),
    "cell_twice": (fault(cells=(7, 7, 15, 47, 55), target=5), (), {"cells_not_union_of_packs"}),
    "shortfall_lie": (fault(shortfall=1), (), {"shortfall_mismatch"}),
    "over_target": (fault(target=3), (), {"count_over_target", "shortfall_mismatch"}),
    "two_types": (fault(GLOBAL, variant_type="bramble"), (), {"more_than_one_type"}),
    "global_cells": (fault(GLOBAL, cells=(7, 15), packs=((7, 15),), target=2), (),
                     {"global_with_cells", "boss_with_cells"}),
    "global_draws": (fault(GLOBAL, draws=1), (), {"global_consumed_draws"}),
    "no_type": (fault(variant_type=None), (), {"cells_without_type"}),
    "global_off_boss": (fault(GLOBAL, is_boss=False), (), {"global_off_boss"}),
    "boss_region": (fault(is_boss=True, level_index=2, global_pool=("veins",)), (),
                    {"boss_without_global", "boss_with_cells"}),
    "wrong_global": (fault(GLOBAL, global_pool=("other", "veins")), (), {"boss_wrong_global"}),
    "level1_global": (fault(GLOBAL, level_index=1, global_pool=()), (), {"level1_boss_global"}),
    "empty_pool_global": (fault(GLOBAL, global_pool=()), (), {"boss_global_from_empty_pool"}),
}


def checked(overlays, fog=(), scopes=None, depth=0):
    scopes = scopes or [101 + i for i in range(len(overlays))]
    batch = OverlayBatch.from_overlays(overlays, board_scopes=scopes, node_depth=depth)
    mines = np.frombuffer(MINES, np.uint8)[None].repeat(len(overlays), axis=0)
    fogs = np.zeros_like(mines)
    fogs[:, list(fog)] = 1
    return outcomes.check_row(batch, mines, fogs, width=W, height=W, spawn_side=3)


def readable_rules(row, i) -> set[str]:
    return {issue.rule for issues in outcomes.board_issues(row.placed(i)).values() for issue in issues}


def test_the_faults_cover_every_rule():
    assert set().union(*(rules for _, _, rules in FAULTS.values())) == set(RULES)
    assert len(RULES) == sum(len(r) for r in RULE_GROUPS.values()) == len(set(RULES)) <= 32


@pytest.mark.parametrize("name", FAULTS)
def test_a_planted_fault_sets_exactly_its_rules_on_its_board(name):
    (base, changes), fog, rules = FAULTS[name]
    good = base if base is GLOBAL else GOOD
    row = checked([good, dataclasses.replace(base, **changes), good], fog)
    assert [rules_of(f) for f in row.flags] == [(), tuple(r for r in RULES if r in rules), ()]
    assert readable_rules(row, 1) == rules
    assert readable_rules(row, 0) == readable_rules(row, 2) == set()
    assert sorted(row.issues) == [1]
    assert {i.rule for issues in row.issues[1].values() for i in issues} == rules


def test_a_correct_row_has_no_flag():
    for key in ROWS:
        row_, scopes, _, _, mines, fog = row_boards(key)
        batch = OverlayBatch.from_arrow(placed_row(key).to_arrow("bfp", "ofp"), level_index=key[0], node_depth=key[1])
        row = outcomes.check_row(batch, mines, fog, width=row_.board_width, height=row_.board_height, spawn_side=SPAWN,
                                 board_scopes=scopes)
        assert not row.flags.any() and row.issues == {}
        assert all(readable_rules(row, i) == set() for i in range(BOARDS))


def _mutate(ov: Overlay, rng, nc: int) -> Overlay:
    """One random fault of the kinds a writer or a disk could make."""
    cells, packs = list(ov.cells), [list(p) for p in ov.packs]
    kind = int(rng.integers(0, 10))
    if kind == 0 and packs:  # a pack cell moves anywhere (on or off the board)
        p = int(rng.integers(0, len(packs)))
        j = int(rng.integers(0, len(packs[p])))
        old, new = packs[p][j], int(rng.integers(-2, nc + 2))
        packs[p][j] = new
        cells = sorted(new if c == old else c for c in cells)
    elif kind == 1:  # a cell grows a pack
        c = int(rng.integers(0, nc))
        if packs:
            packs[-1].append(c)
        cells = sorted([*cells, c])
    elif kind == 2 and len(packs) > 1:  # two packs merge
        packs = [packs[0] + packs[1], *packs[2:]]
    elif kind == 3:
        return dataclasses.replace(ov, shortfall=ov.shortfall + int(rng.integers(-2, 3)))
    elif kind == 4:
        return dataclasses.replace(ov, target=max(0, ov.target + int(rng.integers(-3, 2))))
    elif kind == 5:
        return dataclasses.replace(ov, is_boss=not ov.is_boss)
    elif kind == 6:
        return dataclasses.replace(ov, global_variant=ov.variant_type, draws=int(rng.integers(0, 3)))
    elif kind == 7:
        return dataclasses.replace(ov, variant_type=None)
    elif kind == 8 and cells:  # a cell drops out of the list
        cells.pop(int(rng.integers(0, len(cells))))
    else:
        return dataclasses.replace(ov, pack_max=ov.pack_max - 1)
    return dataclasses.replace(ov, cells=tuple(cells), packs=tuple(tuple(p) for p in packs))


@pytest.mark.parametrize("key", [(1, 0), (2, 2), (3, 4)])
def test_random_faults_flag_exactly_the_boards_and_rules_the_readable_checks_find(key):
    row_, scopes, _, _, mines, fog = row_boards(key)
    good = placed_row(key)
    rng = np.random.default_rng(key[0] * 10 + key[1])
    nc = row_.board_width * row_.board_height
    overlays = [good.overlay(i) for i in range(BOARDS)]
    bad = sorted(rng.choice(BOARDS, 24, replace=False).tolist())
    for i in bad:
        overlays[i] = _mutate(overlays[i], rng, nc)
    batch = OverlayBatch.from_overlays(overlays, board_scopes=scopes, node_depth=key[1])
    row = outcomes.check_row(batch, mines, fog, width=row_.board_width, height=row_.board_height, spawn_side=SPAWN,
                             board_scopes=scopes)
    found = {i: readable_rules(row, i) for i in range(BOARDS)}
    assert {i: set(rules_of(f)) for i, f in enumerate(row.flags)} == found
    assert set(row.issues) == {i for i, rules in found.items() if rules}
    assert len(row.issues) >= 12


def test_rule_flags_refuse_arrays_that_disagree():
    row = checked([GOOD, GOOD])
    b = row.batch
    with pytest.raises(ValueError, match="overlays"):
        rule_flags(b, row.mines[:1], row.fog[:1], row.r0[:1], W, W)
    with pytest.raises(ValueError, match="cell offsets"):
        rule_flags(dataclasses.replace(b, cell_offsets=np.array([0, 4, 9])), row.mines, row.fog, row.r0, W, W)
    with pytest.raises(ValueError, match="pack offsets"):
        rule_flags(dataclasses.replace(b, pack_offsets=np.array([0, 3, 2])), row.mines, row.fog, row.r0, W, W)
    with pytest.raises(ValueError, match="pack cell offsets"):
        rule_flags(dataclasses.replace(b, pack_cell_offsets=np.array([0, 2, 4, 6, 9])), row.mines, row.fog, row.r0,
                   W, W)
    with pytest.raises(ValueError, match="target"):
        rule_flags(dataclasses.replace(b, target=np.zeros(3, np.int64)), row.mines, row.fog, row.r0, W, W)
    with pytest.raises(ValueError, match="no board"):
        outcomes.check_row(b, row.mines, row.fog, width=W, height=W, spawn_side=3, board_scopes=[101, 7])


# --- outcomes -----------------------------------------------------------------------------------


def test_passing_checks_name_an_example_board_and_draw_nothing():
    row = checked([GOOD, dataclasses.replace(GOOD, master_seed=9)], scopes=[102, 101], depth=3)
    outs = outcomes.row_outcomes(row, VARIATION, WEIGHTS)
    assert [o.name for o in outs] == list(outcomes.CHECKS) and all(o.passed for o in outs)
    dom, packs, one, boss, skew = outs
    assert all("overlaid_board" not in o.pictures for o in outs)
    # the most variant cells (a tie), then the lowest scope: board 101
    assert dom.metadata["example_board"] == "boardgen generate --level 1 --depth 3 --seed 101 --master-seed 9 --variants"
    assert packs.metadata["example_board"] == dom.metadata["example_board"]
    assert boss.metadata["example_board"] == dom.metadata["example_board"]
    assert dom.description == "8 variant cells on 2 of 2 boards, all safe and outside R0"
    assert dom.metadata == {
        "boards": 2, "level_index": 1, "board_type": "dungeon", "is_boss": False, "variant_cells": 8,
        "boards_with_cells": 2, "r0_cells_mean": 48.0, "issues": 0, "issues_by_rule": {}, "failing_scopes": [],
        "failing_scopes_total": 0, "first_issues": [],
        "example_board": "boardgen generate --level 1 --depth 3 --seed 101 --master-seed 9 --variants"}
    assert packs.description == "4 packs, sizes {2: 4} within [2, 4], 8-connected, never touching"
    assert packs.metadata["pack_size_distribution"] == {"2": 4} and packs.metadata["candidate_cells"] == 16
    assert one.description == "one type per board: {'bramble': 2}"
    assert one.pictures == {"types": "| variant type | scope | boards |\n|---|---|---|\n| bramble | region | 2 |"}
    assert boss.description == "non-Boss row, level 1: no whole-board variant (not a Boss row)"
    assert skew.description == "total 77 at effect values [0, 30]; 0 is the unskewed table itself; whitelist unchanged"
    assert outcomes.boss_outcome(row, applies=False).description == (
        "not applicable: the variation table declares no global type")


def test_a_failing_check_names_its_boards_and_rules_and_draws_the_first():
    on_mine = dataclasses.replace(GOOD, cells=(6, 7, 47, 55), packs=((6, 7), (47, 55)))
    in_r0 = dataclasses.replace(GOOD, cells=(4, 5, 47, 55), packs=((4, 5), (47, 55)))
    row = checked([GOOD, on_mine, GOOD, in_r0])
    dom = outcomes.domain_outcome(row)
    assert not dom.passed and dom.severity == "error" and not dom.blocking
    assert dom.description == "2 domain issues on 2 boards"
    assert dom.metadata["issues_by_rule"] == {"variant_in_r0": 1, "variant_on_mine": 1}
    assert dom.metadata["failing_scopes"] == [102, 104] and dom.metadata["failing_scopes_total"] == 2
    assert dom.metadata["first_issues"] == ["102: variant_on_mine: 1 variant cells are mines",
                                            "104: variant_in_r0: 2 variant cells inside R0"]
    assert "example_board" not in dom.metadata
    drawing = dom.pictures["overlaid_board"]
    assert drawing.startswith("**first offending board**: board scope `102`")
    grid = drawing.split("```")[1].strip().splitlines()
    assert [line.split()[6:] for line in grid[:2]] == [["B", "B"], ["*", "."]]
    assert "reproduce: `boardgen generate --level 1 --depth 0 --seed 102 --variants`" in drawing
    # the other checks hold on these boards
    assert outcomes.packs_outcome(row).passed and outcomes.one_type_outcome(row).passed


def test_outcomes_on_default_rows_pass_with_their_figures():
    for key in ROWS:
        row_, scopes, _, records, mines, fog = row_boards(key)
        batch = OverlayBatch.from_arrow(placed_row(key).to_arrow("bfp", "ofp"), level_index=key[0], node_depth=key[1])
        outs = outcomes.overlay_outcomes(batch, mines[::-1], fog[::-1], width=row_.board_width,
                                         height=row_.board_height, spawn_side=SPAWN, variation=VARIATION,
                                         weights=WEIGHTS, board_scopes=scopes[::-1])
        assert all(o.passed for o in outs), [o.description for o in outs if not o.passed]
        dom, packs, one, boss, skew = outs
        assert dom.metadata["r0_cells_mean"] == sum(r["r0_size"] for r in records) / BOARDS
        overlays = [batch.overlay(i) for i in range(BOARDS)]
        assert dom.metadata["variant_cells"] == sum(len(o.cells) for o in overlays)
        assert packs.metadata["shortfall_cells"] == sum(o.shortfall for o in overlays)
        best = max(range(BOARDS), key=lambda i: (len(overlays[i].cells), -scopes[i]))
        assert dom.metadata["example_board"] == (f"boardgen generate --level {key[0]} --depth {key[1]} "
                                                 f"--seed {scopes[best]} --variants")
        assert skew.metadata["effect_values"] == [0, 30]
        if key in ((2, 4), (3, 4)):
            assert boss.metadata["global_variants"] == {VARIATION.types[-1].id: BOARDS}
            assert boss.metadata["expected"] == "the global type on every board, zero variant cells"


def test_not_applicable_outcomes_pass_for_every_check():
    outs = outcomes.not_applicable_outcomes("the tables have no variation.toml")
    assert [o.name for o in outs] == list(outcomes.CHECKS) and all(o.passed for o in outs)
    assert outcomes.boss_rule_applies(VARIATION) and not outcomes.boss_rule_applies(None)
    no_global = dataclasses.replace(VARIATION, types=tuple(t for t in VARIATION.types if t.scope != "global"))
    assert not outcomes.boss_rule_applies(no_global)
    assert outcomes.skew_effect_values(no_global, None) == [0]
    assert outcomes.skew_effect_values(None, checked([dataclasses.replace(GLOBAL, effect_value=12)]).batch) == [0, 12]


def test_the_default_table_routes_like_the_acceptance_fixture():
    # a table whose eighth row joins the level-1 deep_underdark pool alone
    table = load_variation_table(ROOT / "tests" / "fixtures" / "variants" / "eight_types.toml")
    row, scopes, gens, records, mines, fog = row_boards((1, 0))
    batch = place_row(mines, fog, scopes=scopes, width=10, height=10, spawn_side=SPAWN, level_index=1, node_depth=0,
                      board_type="deep_underdark", is_boss=False, table=table)
    for i, g in enumerate(gens):
        r0 = reveal_r0(g.board.mines, 10, 10, SPAWN)
        want = place_overlay(g.board, r0, level_index=1, is_boss=False, board_type="deep_underdark", table=table,
                             stream=derive_at("variant_place", scopes[i]))
        assert batch.overlay(i) == want
    assert set(batch.type_ids) == {table.types[-1].id}


def test_warm_up_compiles_the_overlay_kernels():
    from boardgen_pipeline.variants.batch import warm_up

    assert warm_up() is None
