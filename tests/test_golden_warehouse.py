"""A restructure changes no board (issue 22): every row of the default tables,
calibrated by the row chain on 1 and on 2 worker processes, gives the
records the code before issue 22 wrote (the digests below were taken from
that code: ``boardgen calibrate --samples 16`` at commit 627bf0e), and the
two worker counts write the very same bytes.

A record digest is the sha256 of the partition's records as canonical JSON,
so it pins every value of every board, overlay and report, and not the
Parquet encoder's version string.

Bookkeeping apart (issue 29 "one canonical encoding"): the overlays' column
``overlay_fingerprint`` hashes the variation table, whose encoding issue 29
changed (canonical JSON, not a ``repr()``), so the overlay digests below are
of the records without that column (``FINGERPRINT_COLUMNS``), taken from the
code before issue 29 (commit 054da6b, whose full-record digests were still
those of 627bf0e in the same run): every board, overlay and report value is
pinned as before. The fingerprints themselves are pinned apart
(``OVERLAY_FINGERPRINTS``, with the variation and pools digests they and the
node-map draws are built from)."""

from __future__ import annotations

import hashlib
import json

import pyarrow.parquet as pq
import pytest

from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.steps import chain, history
from boardgen_pipeline.steps.pool import RowPool
from boardgen_pipeline.steps.publish_rows import publish_rows
from boardgen_pipeline.warehouse import datasets

SAMPLES = 16
BEFORE_ISSUE_22 = {
    "boards/1-0": "088e64afdaea7f3c",
    "boards/1-1": "bb37a8e0fa8673a1",
    "boards/1-2": "11c5839a3c5b9efb",
    "boards/1-3": "b9c654e09ce0a6f9",
    "boards/1-4": "6bce9613cc0dd772",
    "boards/2-0": "bf261c93f2c6ed87",
    "boards/2-1": "c8a2980e9174b4e8",
    "boards/2-2": "255dab4db2080f6d",
    "boards/2-3": "2536c32b4b60eca1",
    "boards/2-4": "00cb46a46f6706c8",
    "boards/3-0": "7cbeed07f7289d0b",
    "boards/3-1": "9575e021afcb49a4",
    "boards/3-2": "fd4db6b48eb7cd45",
    "boards/3-3": "185782a991dafcc9",
    "boards/3-4": "f12a949f21058bda",
    "calibration_report/1-0": "97836f43c5244ba5",
    "calibration_report/1-1": "e9ac8b9271b0d538",
    "calibration_report/1-2": "de6087f829d0a605",
    "calibration_report/1-3": "7e77f0997d3788cc",
    "calibration_report/1-4": "43aab914c94fada1",
    "calibration_report/2-0": "109a27afc2e7c1fa",
    "calibration_report/2-1": "8bb66a12b018a766",
    "calibration_report/2-2": "dedb55ff97dd8a5e",
    "calibration_report/2-3": "d95fb5fe41ef7ae1",
    "calibration_report/2-4": "cb1ca0442580f759",
    "calibration_report/3-0": "a91da8351ad45647",
    "calibration_report/3-1": "6ab5d099cef6b32e",
    "calibration_report/3-2": "4cfe31ccf8a9b872",
    "calibration_report/3-3": "1136978be7c991aa",
    "calibration_report/3-4": "90d6e492d595c88e",
    "variant_overlays/1-0": "7f0fc8a22114af27",
    "variant_overlays/1-1": "3dc761f3ce76a7d0",
    "variant_overlays/1-2": "c17f2fe7efaf2389",
    "variant_overlays/1-3": "74ec9d0eca6277a5",
    "variant_overlays/1-4": "ff29c3f2cb367a2e",
    "variant_overlays/2-0": "7e23563ab775844f",
    "variant_overlays/2-1": "3457bdf8470020f9",
    "variant_overlays/2-2": "7ced5f611dedd230",
    "variant_overlays/2-3": "f27fbc451a51fa3f",
    "variant_overlays/2-4": "e20fdcd2ea53451a",
    "variant_overlays/3-0": "4336ad505d4bba73",
    "variant_overlays/3-1": "ac9b910d4dd413fd",
    "variant_overlays/3-2": "aed1fe8ca8d6dfb9",
    "variant_overlays/3-3": "20c8cfcd6f60afdb",
    "variant_overlays/3-4": "7d5739c713b66916",
}

# Columns that hash tables, not boards: left out of the record digests above (module docstring).
FINGERPRINT_COLUMNS = {"variant_overlays": ("overlay_fingerprint",)}
# Issue 29's canonical encoding of the variation table and the pools (they were 1ab7ffba13e6bfa1 and
# 06a48d5857ba9b7d as repr() text), and each row's overlay fingerprint built on them.
VARIATION_DIGEST = "d049bb7de3cc525e"
POOLS_DIGEST = "d8ca8965c5a53fdd"
OVERLAY_FINGERPRINTS = {
    "1-0": "b443889e1cdccbbb",
    "1-1": "5e15b03944fb5606",
    "1-2": "f582d945d43d5d06",
    "1-3": "42d2760664f975dd",
    "1-4": "4fe802df00662f8f",
    "2-0": "a866da1507b061d7",
    "2-1": "239e23fb732489d3",
    "2-2": "f9de9ff6d421a5a3",
    "2-3": "a694252e5407a8b0",
    "2-4": "4ae2479df6fc2514",
    "3-0": "999a8669e4402f0d",
    "3-1": "dbfac5158e860c45",
    "3-2": "3b77071272795a96",
    "3-3": "dece410a7b7ad969",
    "3-4": "f9539c37313366cb",
}


def record_digests(root) -> dict[str, str]:
    out = {}
    for dataset in chain.STAGES:
        drop = FINGERPRINT_COLUMNS.get(dataset, ())
        for path in sorted((root / dataset).rglob("part.parquet")):
            key = "-".join(part.split("=")[1] for part in path.parent.parts[-2:])
            records = [{k: v for k, v in r.items() if k not in drop} for r in pq.read_table(path).to_pylist()]
            text = json.dumps(records, sort_keys=True, separators=(",", ":"), default=str)
            out[f"{dataset}/{key}"] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return out


def file_bytes(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for dataset in chain.STAGES
            for p in sorted((root / dataset).rglob("part.parquet"))}


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory):
    catalog = load_catalog()
    keys = catalog.board_gen.keys()
    out = {}
    for workers in (1, 2):
        root = tmp_path_factory.mktemp(f"w{workers}")
        with RowPool(workers) as pool:
            published = publish_rows(root, catalog, keys, SAMPLES, pool=pool)
        assert [r.key for r in published.listed] == keys and published.failed == 0 == sum(
            not r.green for r in published.listed)
        out[workers] = root
    return out


def test_every_row_gives_the_records_of_the_code_before_the_restructure(warehouses):
    assert record_digests(warehouses[1]) == BEFORE_ISSUE_22


def test_the_fingerprints_of_the_tables_are_the_canonical_ones(warehouses):
    catalog = load_catalog()
    assert fingerprints.variation_digest(catalog.variation) == VARIATION_DIGEST
    assert fingerprints.pools_digest(catalog.pools) == POOLS_DIGEST
    stored = {}
    for path in sorted((warehouses[1] / "variant_overlays").rglob("part.parquet")):
        key = "-".join(part.split("=")[1] for part in path.parent.parts[-2:])
        stored[key] = {r["overlay_fingerprint"] for r in pq.read_table(path).to_pylist()}
    assert stored == {k: {v} for k, v in OVERLAY_FINGERPRINTS.items()}
    assert fingerprints.overlay_fingerprints_now(catalog, SAMPLES, 0) == OVERLAY_FINGERPRINTS


def test_two_workers_write_the_bytes_one_worker_writes(warehouses):
    one, two = file_bytes(warehouses[1]), file_bytes(warehouses[2])
    assert len(one) == 45 and one == two
    assert sorted(datasets.partition_path(warehouses[2], "boards", (1, 0)).parent.iterdir()) == [
        datasets.partition_path(warehouses[2], "boards", (1, 0))]  # no temporary file left beside it


def test_every_file_of_a_dataset_has_the_one_schema_the_views_rely_on(warehouses):
    """The views read each dataset's first file's schema only (no ``union_by_name``,
    whose cost grows with the files): a column typed in one row's file and left
    ``null`` in another's (a fog assertion on a fogless row) would fail queries."""
    for dataset in (*chain.STAGES, history.DATASET):  # the history: one file per version (issue 23)
        schemas = {str(pq.read_schema(p).remove_metadata()) for p in (warehouses[1] / dataset).rglob("*.parquet")}
        assert len(schemas) == 1, (dataset, schemas)


def test_two_workers_keep_the_versions_one_worker_keeps(warehouses):
    """Every row's report is kept as one version (issue 23), named by its
    content: the same names and records whatever the worker count, but for
    the time each was first published."""
    def versions(root):
        return {str(p.relative_to(root)): {k: v for k, v in pq.read_table(p).to_pylist()[0].items()
                                            if k != "published_at"}
                for p in sorted((root / history.DATASET).rglob("*.parquet"))}

    one, two = versions(warehouses[1]), versions(warehouses[2])
    assert len(one) == 15 and one == two
