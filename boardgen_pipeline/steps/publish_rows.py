"""The per-row chain as one call, for ``boardgen calibrate`` (issue 12 "one
publishing path"; SPEC 9 order: boards -> variant overlays -> report).

The Dagster assets run the same three steps as three assets (``boards``,
``variant_overlays``, ``calibration_report``); ``boardgen calibrate`` runs
them here, one row after the other. Same functions, so the same
fingerprints and the same rule: a batch with an illegal board (assertion A')
is never published, and publishing a row's boards replaces its overlays and
report in the same pass, so no overlay row ever joins to no board.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from boardgen_pipeline.calibration.seeds import seed_batch
from boardgen_pipeline.steps import calibrate_row, overlay_row, report_row


@dataclass
class PublishedRow:
    """One row's boards (and their checks), its overlays and its report record."""

    boards: calibrate_row.RowResult
    overlays: overlay_row.OverlayResult | None
    report: dict | None


def publish_row(root, catalog, key: tuple[int, int], samples: int, master_seed: int = 0, client=None) -> PublishedRow:
    """Generate, check and publish one row, then its overlays and report; a
    rejected batch (A') withdraws the row's files and stops there."""
    batch = seed_batch(catalog.board_gen, key, samples, master_seed)
    boards = calibrate_row.run_batch(root, batch, client)
    if not boards.published:
        return PublishedRow(boards, None, None)
    overlays = overlay_row.run_overlays(root, catalog, key, samples, master_seed)
    record, _ = report_row.write_row_report(root, batch)
    return PublishedRow(boards, overlays, record)


def publish_rows(root, catalog, keys: Iterable[tuple[int, int]], samples: int, master_seed: int = 0,
                 client=None, on_row: Callable[[PublishedRow], None] | None = None) -> list[PublishedRow]:
    out = []
    for key in keys:
        out.append(publish_row(root, catalog, key, samples, master_seed, client))
        if on_row is not None:
            on_row(out[-1])
    return out
