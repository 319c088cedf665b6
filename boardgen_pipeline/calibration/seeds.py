"""A row's seed batch: the plan of which boards calibrate it, and their
generation (SPEC 7 "batch"; seed 001 "F4 批量统计断言"; seed 000 "生成入口").

The batch of row ``(L, D)`` is ``derive_at("board_gen", sigma(L, D) + i)`` for
``i < N``: :func:`seed_batch` fixes it with everything that decides its
boards (row fields, spawn side, N, master seed) and their fingerprint;
:func:`generate_batch` makes the boards, each record tagged with the
fingerprints so the warehouse says which row version made it (where a row
runs is ``steps.pool``'s business).
"""

from __future__ import annotations

from dataclasses import dataclass

from boardgen_pipeline.calibration.batch import batch_scopes, run_row
from boardgen_pipeline.calibration.fingerprints import batch_fingerprint, partition_key
from boardgen_pipeline.tables.board_gen import BoardGenRow, BoardGenTable, Header


@dataclass(frozen=True)
class SeedBatch:
    """The batch plan of one row: scopes ``sigma(L, D) + i`` for ``i < samples``."""

    key: tuple[int, int]
    row: BoardGenRow
    header: Header
    samples: int
    master_seed: int
    row_fingerprint: str
    table_path: str
    boss: bool = False
    monotone_fields: tuple[str, ...] = ()
    monotone_findings: tuple[str, ...] = ()
    level_chain: tuple[tuple[int, tuple[tuple[str, float], ...]], ...] = ()

    @property
    def spawn_side(self) -> int:
        return self.header.spawn_side

    @property
    def partition_key(self) -> str:
        return partition_key(self.key)

    @property
    def batch_fingerprint(self) -> str:
        return batch_fingerprint(self.row_fingerprint, self.samples, self.master_seed)

    @property
    def scopes(self) -> range:
        return batch_scopes(*self.key, self.samples)

    def describe(self) -> dict:
        return {
            "row": self.row.key_text,
            "samples": self.samples,
            "master_seed": self.master_seed,
            "scope_first": self.scopes.start,
            "scope_last": self.scopes.stop - 1,
            "row_fingerprint": self.row_fingerprint,
            "batch_fingerprint": self.batch_fingerprint,
            "boss_row": self.boss,
            "table": self.table_path,
        }


def seed_batch(table: BoardGenTable, key: tuple[int, int], samples: int, master_seed: int = 0) -> SeedBatch:
    if key not in table.rows:
        raise KeyError(f"row ({key[0]},{key[1]}) is not in {table.path} (rows: {table.keys()})")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    row = table.rows[key]
    fields = table.header.monotone_in_depth
    chain = tuple(
        (d, tuple((f, getattr(table.rows[(lv, d)], f)) for f in fields))
        for (lv, d) in table.keys()
        if lv == key[0]
    )
    return SeedBatch(
        key=key,
        row=row,
        header=table.header,
        samples=samples,
        master_seed=master_seed,
        row_fingerprint=table.row_fingerprint(key),
        table_path=str(table.path),
        boss=table.is_boss_row(key),
        monotone_fields=tuple(fields),
        monotone_findings=tuple(str(w) for w in table.warnings if w.row == row.key_text),
        level_chain=chain,
    )


def generate_batch(batch: SeedBatch) -> list[dict]:
    """The batch's boards, one metrics record each, in scope order."""
    table = BoardGenTable(batch.table_path, batch.header, {batch.key: batch.row})
    records = run_row(table, batch.key, batch.samples, batch.master_seed)
    row_fp, batch_fp = batch.row_fingerprint, batch.batch_fingerprint  # a digest each: computed once, not a board
    for r in records:
        r["row_fingerprint"] = row_fp
        r["batch_fingerprint"] = batch_fp
    return records
