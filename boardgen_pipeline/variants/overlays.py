"""Variant overlays of generated boards (SPEC 3 "setup order": generate ->
R0 -> variant cells; seed 003 "布置段").

The overlay of a board uses its own ``variant_place`` stream. Decided here:
its scope is the board's ``board_gen`` scope number (one scope per board, a
different label, so the two streams never share a state), under the same
master seed. Fog cells (fog rows) are excluded like R0: a cell carries at
most one variant. A board is a Boss board when its row is its level's Boss row
(seed 000: the deepest row of a level).
"""

from __future__ import annotations

from boardgen_pipeline.board.geometry import Board, parse_layout
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.board.solver import reveal_r0
from boardgen_pipeline.tables.board_gen import BoardGenTable
from boardgen_pipeline.variants.placement import Overlay, place_overlay


def overlay_for(board: Board, metrics: dict, board_gen: BoardGenTable, variation) -> Overlay:
    """The overlay of one generated board (the board is not touched)."""
    key = (metrics["level_index"], metrics["node_depth"])
    row = board_gen.resolve(*key)
    # fog cells are taken: a cell carries at most one variant (decision)
    r0 = reveal_r0(board.mines, board.width, board.height, board.spawn_side, board.fog) | set(board.fog)
    stream = derive_at("variant_place", metrics["scope"], metrics["master_seed"])
    return place_overlay(board, r0, level_index=key[0], is_boss=board_gen.is_boss_row(row.key),
                         board_type=row.board_type, table=variation, stream=stream)


def board_from_record(record: dict, spawn_side: int) -> Board:
    """Rebuild a board from its metrics record (the ``boards`` dataset)."""
    w, h, mines, fog = parse_layout(record["layout"])
    return Board(w, h, spawn_side, mines, fog)


def overlay_records(records: list[dict], board_gen: BoardGenTable, variation) -> list[dict]:
    """Overlay records for a batch of board records, keyed by board scope."""
    out = []
    for rec in records:
        board = board_from_record(rec, board_gen.spawn_side)
        ov = overlay_for(board, rec, board_gen, variation)
        out.append({"board_scope": rec["scope"], "node_depth": rec["node_depth"], **ov.to_record()})
    return out
