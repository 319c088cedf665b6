"""The boards of a row's two versions, on the same seed scopes (SPEC 7: row
``(L, D)``'s batch is ``derive_at("board_gen", sigma(L, D) + i)``; seed 000
"生成入口": a board is a pure function of the row, the master seed and the
scope; docs/review.md "Pairing").

Board ``i`` of the base version and board ``i`` of the head version are
drawn from the same stream, so the two are compared as a pair (common
random numbers): where a change leaves the stream's draws in step (a
target, a cap, the attempts), most pairs are the same board and a small
effect shows; where it moves them (``N`` changes), the pairs decorrelate
and the comparison is as noisy as an unpaired one. :func:`realised` says
which happened.

A version's boards come from the warehouse wherever it holds them for
exactly that version (the stored records carry the row fingerprint, the
master seed and the metric version that made them); the rest are
generated here, in this process, and never published.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from boardgen_pipeline.board.generator import generate_batch_from_row
from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.review.sources import SourceRow
from boardgen_pipeline.tables.board_gen import Header
from boardgen_pipeline.warehouse import datasets, publish
from boardgen_pipeline.words import count

BOARDS = "boards"


class StoredBoards:
    """The warehouse's published boards, read once a row (``root`` None: no
    warehouse), and the boards generated here, kept by version (the rows, the
    overlays and the strata of one diff read the same boards; made once)."""

    def __init__(self, root: Path | None):
        self.root = Path(root) if root is not None else None
        self._rows: dict[tuple[int, int], list[dict]] = {}
        self.made: dict[tuple[str, int], dict[int, dict]] = {}  # (row fingerprint, master seed) -> scope -> record

    def of(self, key: tuple[int, int]) -> list[dict]:
        if self.root is None:
            return []
        if key not in self._rows:
            path = datasets.partition_path(self.root, BOARDS, key)
            intact = path.is_file() and publish.intact(self.root, path)
            self._rows[key] = publish.read_partition(self.root, BOARDS, key) if intact else []
        return self._rows[key]

    def matching(self, version: SourceRow, master_seed: int) -> dict[int, dict]:
        """The stored boards of exactly this version of the row, by scope."""
        return {r["scope"]: r for r in self.of(version.key)
                if r.get("row_fingerprint") == version.fingerprint and r.get("master_seed") == master_seed
                and r.get("metric_version") == METRIC_VERSION}


@dataclass
class Boards:
    """One version's boards on a range of scopes, in scope order, and how many
    of them the warehouse held."""

    records: list[dict] = field(default_factory=list)
    stored: int = 0

    def extend(self, more: Boards) -> None:
        self.records.extend(more.records)
        self.stored += more.stored


class NotRebuildable(Exception):
    """A version whose boards are neither stored nor reproducible here."""


def boards(version: SourceRow, header: Header, scopes: range, master_seed: int, store: StoredBoards) -> Boards:
    """The version's boards on ``scopes``: the stored ones, the others generated."""
    stored = store.matching(version, master_seed)
    missing = [s for s in scopes if s not in stored]
    made = store.made.setdefault((version.fingerprint, master_seed), {}) if version.exact else {}
    todo = [s for s in missing if s not in made]
    if todo:
        if not version.exact:
            raise NotRebuildable(f"row {version.row.key_text}: the warehouse lacks "
                                 f"{count(len(missing), 'board')} of the stored version, and its stored report does not say "
                                 "all that made them")
        made.update((m["scope"], m) for _, m in generate_batch_from_row(version.row, header.spawn_side, todo, master_seed,
                                                                         header.dig_ap_cost))
    return Boards([stored.get(s) or made[s] for s in scopes], len(scopes) - len(missing))


def realised(base: list[dict], head: list[dict]) -> float:
    """The share of pairs that are the very same board (same layout)."""
    if not base:
        return float("nan")
    return float(np.mean([b["layout"] == h["layout"] for b, h in zip(base, head)]))


def correlation(base: np.ndarray, head: np.ndarray) -> float | None:
    """Pearson's correlation of a figure's per-board values across the pairs;
    None where a version's values do not vary (no correlation is defined)."""
    ok = ~(np.isnan(base) | np.isnan(head))
    b, h = base[ok], head[ok]
    if len(b) < 2 or np.ptp(b) == 0 or np.ptp(h) == 0:
        return None
    return float(np.corrcoef(b, h)[0, 1])
