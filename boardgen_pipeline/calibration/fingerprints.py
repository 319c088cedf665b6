"""Fingerprints: what decides each published dataset, as a short content hash
(SPEC 1 "regeneration after a table edit", SPEC 9; seed 000 "生成入口" purity).

A partition is regenerated exactly when the fingerprint of its inputs now
differs from the one stored beside its data. Pure functions of the tables,
the batch size, the master seed and the code versions; the warehouse side
(what is stored, and whether it is current) lives in ``steps.currency``.

- rows: ``batch_fingerprint`` (row content, N, master seed, metric version),
  keyed ``"L-D"`` (``partition_key`` / ``row_key``);
- overlays: ``overlay_fingerprint`` (the row's boards, the variation table,
  the Boss flag and board type, the overlay version);
- node-map draws: ``draws_fingerprint`` (pools, adventures, the row keys);
- strata: ``inputs_fingerprint`` (pools, adventures, the current row reports).

**One encoding**: what a fingerprint hashes is plain data in
``canonical.canonical_json`` (sorted keys, numpy scalars as the numbers they
hold, dataclasses as their fields), never a ``repr()``, whose text moves with
a numpy release (``np.float64(0.5)`` under numpy 2, ``0.5`` before) or a
dataclass's field order. One exception, on purpose: ``batch_fingerprint``
keeps its text form, as every stored board carries it and a new encoding
would be a new value on every board of every warehouse (moving to one encoding changed no
board); it joins a digest and three integers, which text renders exactly.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.canonical import digest, files_digest
from boardgen_pipeline.tables.board_gen import BoardGenTable

OVERLAY_VERSION = 1  # bump when the overlay placement code changes what it places


def table_files(tables_dir) -> list[Path]:
    """Every table file of a tables directory (``*.toml``, sub-folders included)."""
    return sorted(p for p in Path(tables_dir).rglob("*.toml") if p.is_file())


def tables_digest(tables_dir) -> tuple[str, dict[str, str]]:
    """Content hash of the whole tables directory, and of each file in it."""
    return files_digest(Path(tables_dir), table_files(tables_dir))


def partition_key(key: tuple[int, int]) -> str:
    return f"{key[0]}-{key[1]}"


def row_key(partition: str) -> tuple[int, int]:
    """``"1-0"`` -> ``(1, 0)``; anything else is a ValueError."""
    parts = partition.split("-")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"partition key {partition!r} is not L-D (e.g. 1-0)")
    return int(parts[0]), int(parts[1])


def batch_fingerprint(row_fingerprint: str, samples: int, master_seed: int) -> str:
    text = f"{row_fingerprint}|n={samples}|seed={master_seed}|metric_version={METRIC_VERSION}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprints_now(table: BoardGenTable, samples: int, master_seed: int) -> dict[str, str]:
    return {
        partition_key(k): batch_fingerprint(table.row_fingerprint(k), samples, master_seed) for k in table.keys()
    }


NO_VARIANTS = "no-variation-table"
NO_POOLS = "no-node-map-pools"


def overlay_fingerprints_now(catalog, samples: int, master_seed: int) -> dict[str, str]:
    """The overlay fingerprint every row's overlays should carry now."""
    table = catalog.board_gen
    if catalog.variation is None:
        return {partition_key(k): NO_VARIANTS for k in table.keys()}
    return {
        partition_key(k): overlay_fingerprint(batch_fingerprint(table.row_fingerprint(k), samples, master_seed),
                                              catalog.variation, table.is_boss_row(k), table.rows[k].board_type)
        for k in table.keys()
    }


def variation_digest(variation) -> str:
    """Content hash of a variation table (its parsed rows and header, not the
    file's bytes nor its path: a comment edit places the same overlays)."""
    return digest(replace(variation, source=""))


def overlay_fingerprint(batch_fingerprint: str, variation, is_boss: bool, board_type: str) -> str:
    """Everything that decides a row's overlays besides the placement code:
    its boards, the variation table, and the row's Boss flag and board type
    (the Boss flag moves when a deeper row is added to the level, without the
    row's own fingerprint changing)."""
    return digest({"batch": batch_fingerprint, "variation": variation_digest(variation), "boss": is_boss,
                   "type": board_type, "overlay_version": OVERLAY_VERSION})


def pools_digest(pools) -> str:
    """Content hash of the pools (templates and step-3 parameters, not file
    paths or comments)."""
    return digest([[level, [replace(t, file="") for t in p.templates], p.procedural]
                   for level, p in sorted((pools or {}).items())])


def reports_fingerprint(report_fps: dict[tuple[int, int], str]) -> str:
    """Hash of which row reports (by batch fingerprint) the figures used."""
    return digest({partition_key(k): fp for k, fp in report_fps.items()})


def draws_fingerprint(pools, adventures: int, row_keys) -> str:
    """What the node-map draws are built from: the pools' content, the number
    of simulated adventures, and the table's row keys (the templates check
    reads them: a battle node needs an exact row). Not the rows' parameters:
    editing a row redraws no map."""
    return digest({"pools": pools_digest(pools), "adventures": adventures,
                   "rows": [partition_key(k) for k in sorted(row_keys)]})


def inputs_fingerprint(pools, adventures: int, report_fps: dict[tuple[int, int], str]) -> str:
    """Everything the stratified figures are built from: the pools' content,
    the number of simulated adventures and the current row reports (the draws
    have their own, :func:`draws_fingerprint`). Stored in every record; the
    table-edit sensor compares it with the one now."""
    return digest({"pools": pools_digest(pools), "adventures": adventures,
                   "reports": reports_fingerprint(report_fps)})
