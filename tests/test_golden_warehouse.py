"""A restructure changes no board: every row of the default tables,
calibrated by the row chain on 1 and on 2 worker processes, gives the
records the code before the row chain wrote (the digests below were taken from
that code: ``boardgen calibrate --samples 16`` at commit 627bf0e), and the
two worker counts write the very same bytes.

A record digest is the sha256 of the partition's records as canonical JSON,
so it pins every value of every board, overlay and report, and not the
Parquet encoder's version string.

Bookkeeping apart (one canonical encoding): the overlays' column
``overlay_fingerprint`` hashes the variation table, whose encoding was
changed (canonical JSON, not a ``repr()``), so the overlay digests below are
of the records without that column (``FINGERPRINT_COLUMNS``), taken from the
code before that change (commit 054da6b, whose full-record digests were still
those of 627bf0e in the same run): every board, overlay and report value is
pinned as before. The fingerprints themselves are pinned apart
(``OVERLAY_FINGERPRINTS``, with the variation and pools digests they and the
node-map draws are built from).

The perfect player added its columns to the boards and the reports
and bumped ``METRIC_VERSION`` to 2 (so that a warehouse made before
regenerates): the digests above are of the records without those columns
(``PLAYER_COLUMNS``) and with the version-1 batch fingerprint and metric
version put back (``as_before_the_player``), so they still pin every value the
code before wrote, to the character; the new columns are pinned apart
(``FAIRNESS_DIGESTS``), as are the new batch fingerprints
(``BATCH_FINGERPRINTS``) and the overlay fingerprints built on them."""

from __future__ import annotations

import hashlib
import json

import pyarrow.parquet as pq
import pytest

from boardgen_pipeline.board import player
from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.calibration.batch import FAIRNESS_FIGURES
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.steps import chain, history
from boardgen_pipeline.steps.pool import RowPool
from boardgen_pipeline.steps.publish_rows import publish_rows
from boardgen_pipeline.warehouse import datasets

SAMPLES = 16
BEFORE_THE_ROW_CHAIN = {
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
# The canonical encoding of the variation table and the pools (they were 1ab7ffba13e6bfa1 and
# 06a48d5857ba9b7d as repr() text), and each row's overlay fingerprint built on them (and on the
# row's batch fingerprint, which metric version 2 changed).
VARIATION_DIGEST = "d049bb7de3cc525e"
POOLS_DIGEST = "d8ca8965c5a53fdd"
OVERLAY_FINGERPRINTS = {  # on the batch fingerprints of metric version 2
    "1-0": "dbaaa51b6aa8eb8a",
    "1-1": "1c9d3996a2b4e5c6",
    "1-2": "f1864935b8ac42ef",
    "1-3": "ae3aa5d4ec21cb2b",
    "1-4": "73f461deedc19c7e",
    "2-0": "97ff18185478e813",
    "2-1": "6d122067cea13e85",
    "2-2": "7a7e3e1d708ab5e9",
    "2-3": "273d199c28a41ed4",
    "2-4": "e8f9594555577dd8",
    "3-0": "fa12a3962e87f998",
    "3-1": "433063bc3f6b9885",
    "3-2": "5d7b37e98017c7be",
    "3-3": "4c7fcf5441bc1ca2",
    "3-4": "d4faf350471921ef",
}


# What the perfect player added: its figures of each board, the row's figures and check F's columns.
PLAYER_COLUMNS = {"boards": player.METRICS,
                    "calibration_report": (*FAIRNESS_FIGURES, "assertion_f", "min_mean_survival",
                                           "survival_is_criterion")}
BATCH_FINGERPRINTS = {  # metric version 2 (the perfect player's)
    "1-0": "6281ad4c962a5cf8",
    "1-1": "8d5089e7f0dbab9b",
    "1-2": "44919fa734e06580",
    "1-3": "6f4d5ec62b542b24",
    "1-4": "d536eb95ada78c83",
    "2-0": "9c10de6196e1093e",
    "2-1": "bc0a294701a69062",
    "2-2": "b79ee3241f2e1306",
    "2-3": "8e2c370d783b5d42",
    "2-4": "73e28b9dcccb76f1",
    "3-0": "d31861a0a7dfc7ab",
    "3-1": "1b35fc96e6440db1",
    "3-2": "26c9046cca61cd28",
    "3-3": "1fb9a2ec2b200d89",
    "3-4": "ae1d25aa66a3d8f6",
}
FAIRNESS_DIGESTS = {  # the PLAYER_COLUMNS of each partition
    "boards/1-0": "5ce556b65684ec60",
    "boards/1-1": "150fa5528a56859e",
    "boards/1-2": "3b44106788aa5e9b",
    "boards/1-3": "a1d89f91a1b5c14f",
    "boards/1-4": "353794cc791afde2",
    "boards/2-0": "f09825b080db3080",
    "boards/2-1": "3776526c66e7a00d",
    "boards/2-2": "05c85d341eff322f",
    "boards/2-3": "dfdbb82c448613a1",
    "boards/2-4": "ce1fd69c2ee5a70e",
    "boards/3-0": "59c9ac9ed91612cb",
    "boards/3-1": "1ea51cff215e1c30",
    "boards/3-2": "8a25a6e7fa29fa08",
    "boards/3-3": "0db257651e417dff",
    "boards/3-4": "aa6625a62fe1be90",
    "calibration_report/1-0": "fb501e634a333e49",
    "calibration_report/1-1": "b1ef46c4a9fdc8ef",
    "calibration_report/1-2": "879762556b803d53",
    "calibration_report/1-3": "bdbb1cc67566d5e0",
    "calibration_report/1-4": "2ccd0005733ac6fb",
    "calibration_report/2-0": "5c6ea3200337e7e8",
    "calibration_report/2-1": "b0fe9388019f8f6e",
    "calibration_report/2-2": "1de82c0d95907baa",
    "calibration_report/2-3": "3015c080a2c6a82b",
    "calibration_report/2-4": "8572f962417cf5c7",
    "calibration_report/3-0": "641f2aa3b14b175f",
    "calibration_report/3-1": "556f4551ea10e57d",
    "calibration_report/3-2": "2fbe8ef4e7a2470c",
    "calibration_report/3-3": "3cf7936bdaf82be1",
    "calibration_report/3-4": "d4f08d82ac62b60e",
}


def _digest(records: list[dict]) -> str:
    text = json.dumps(records, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _version_1_fingerprint(row_fingerprint: str) -> str:
    """The batch fingerprint the code before the perfect player gave a row (metric version 1)."""
    text = f"{row_fingerprint}|n={SAMPLES}|seed=0|metric_version=1"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def as_before_the_player(record: dict, old_fingerprint: dict[str, str]) -> dict:
    """A record as the code before the perfect player wrote it: its batch fingerprint
    and metric version those of metric version 1 (the new columns are left
    out by the caller)."""
    out = dict(record)
    if "batch_fingerprint" in out:
        out["batch_fingerprint"] = old_fingerprint[out["batch_fingerprint"]]
    if "metric_version" in out:
        assert out["metric_version"] == 2
        out["metric_version"] = 1
    return out


def _records(root):
    for dataset in chain.STAGES:
        for path in sorted((root / dataset).rglob("part.parquet")):
            key = "-".join(part.split("=")[1] for part in path.parent.parts[-2:])
            yield dataset, key, pq.read_table(path).to_pylist()


def record_digests(root) -> dict[str, str]:
    table = load_catalog().board_gen
    old = {fingerprints.batch_fingerprint(table.row_fingerprint(k), SAMPLES, 0):
           _version_1_fingerprint(table.row_fingerprint(k)) for k in table.keys()}
    out = {}
    for dataset, key, records in _records(root):
        drop = (*FINGERPRINT_COLUMNS.get(dataset, ()), *PLAYER_COLUMNS.get(dataset, ()))
        out[f"{dataset}/{key}"] = _digest([as_before_the_player({k: v for k, v in r.items() if k not in drop}, old)
                                           for r in records])
    return out


def fairness_digests(root) -> dict[str, str]:
    """The digest of the perfect player's columns alone, a partition each."""
    return {f"{dataset}/{key}": _digest([{k: r[k] for k in PLAYER_COLUMNS[dataset]} for r in records])
            for dataset, key, records in _records(root) if dataset in PLAYER_COLUMNS}


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
    assert record_digests(warehouses[1]) == BEFORE_THE_ROW_CHAIN


def test_the_perfect_players_columns_are_the_pinned_ones(warehouses):
    assert fairness_digests(warehouses[1]) == FAIRNESS_DIGESTS
    table = load_catalog().board_gen
    assert fingerprints.fingerprints_now(table, SAMPLES, 0) == BATCH_FINGERPRINTS


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
    for dataset in (*chain.STAGES, history.DATASET):  # the history: one file per version
        schemas = {str(pq.read_schema(p).remove_metadata()) for p in (warehouses[1] / dataset).rglob("*.parquet")}
        assert len(schemas) == 1, (dataset, schemas)


def test_two_workers_keep_the_versions_one_worker_keeps(warehouses):
    """Every row's report is kept as one version, named by its
    content: the same names and records whatever the worker count, but for
    the time each was first published."""
    def versions(root):
        return {str(p.relative_to(root)): {k: v for k, v in pq.read_table(p).to_pylist()[0].items()
                                            if k != "published_at"}
                for p in sorted((root / history.DATASET).rglob("*.parquet"))}

    one, two = versions(warehouses[1]), versions(warehouses[2])
    assert len(one) == 15 and one == two
