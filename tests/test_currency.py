"""One module answers "is this partition current, and if not,
why": ``steps.currency`` says current or not, and why, for a row's boards,
its overlays, the node-map draws and the strata; and a second look at
unchanged files reads nothing again (the sensor asks every second), while a
rewritten or damaged file is read again."""

from __future__ import annotations

import os
from dataclasses import replace

import pyarrow as pa
import pytest

from boardgen_pipeline import catalog
from boardgen_pipeline.calibration.fingerprints import NO_VARIANTS, fingerprints_now
from boardgen_pipeline.steps import currency
from boardgen_pipeline.tables.board_gen import load_board_gen
from boardgen_pipeline.warehouse import datasets, publish

from .conftest import BASE_ROW, write_table
from .faults_support import REPO, flip_byte

SAMPLES = 8


def _table(tmp_path, **changes):
    rows = [BASE_ROW, {**BASE_ROW, "node_depth": 1}]
    rows[0] = {**rows[0], **changes}
    return load_board_gen(write_table(tmp_path / "tables" / "board_gen.toml", rows))


def _publish(root, table, key, fingerprint=None, rejected=False):
    """A row's boards file as the chain writes it: two boards carrying the
    batch fingerprint (``fingerprint``, default the one the table gives now)
    and the row fingerprint."""
    fp = fingerprint or fingerprints_now(table, SAMPLES, 0)[f"{key[0]}-{key[1]}"]
    records = [{"scope": s, "layout": "*..", "batch_fingerprint": fp, "row_fingerprint": table.row_fingerprint(key)}
               for s in (1, 2)]
    data = datasets.encode(datasets.records_table(records))
    (publish.reject_boards if rejected else publish.publish_boards)(root, key, data)


@pytest.fixture(autouse=True)
def fresh_facts():
    currency.FACTS.clear()  # another test's files may have had the same path and signature
    yield
    currency.FACTS.clear()


def test_rows_say_current_or_why_not(tmp_path):
    root = tmp_path / "wh"
    table = _table(tmp_path)
    _publish(root, table, (1, 0))
    assert currency.rows(root, table, SAMPLES) == {"1-0": currency.CURRENT,
                                                   "1-1": currency.Currency(False, "never generated")}

    # a rejected batch is built too: current, until its inputs change
    _publish(root, table, (1, 1), rejected=True)
    assert currency.rows(root, table, SAMPLES)["1-1"].current

    edited = _table(tmp_path, mine_density=0.2)
    assert currency.rows(root, edited, SAMPLES) == {
        "1-0": currency.Currency(False, "the row's parameters changed"), "1-1": currency.CURRENT}
    # the same row under another N (or seed, or generator version): the row is as it was
    assert currency.rows(root, table, SAMPLES * 2)["1-0"] == currency.Currency(
        False, "N, the master seed or the generator version changed")
    assert currency.rows(root, table, SAMPLES, master_seed=1)["1-0"].why.startswith("N, the master seed")

    boards = datasets.partition_path(root, "boards", (1, 0))
    flip_byte(boards)
    why = currency.rows(root, table, SAMPLES)["1-0"]
    assert not why.current and why.why.startswith("damaged file boards/level_index=1/node_depth=0/part.parquet")
    assert currency.fingerprints_stored(root, ["1-0", "1-1"]).keys() == {"1-1"}


def test_a_damaged_report_or_overlays_file_makes_its_row_stale(tmp_path):
    root = tmp_path / "wh"
    table = _table(tmp_path)
    _publish(root, table, (1, 0))
    fp = fingerprints_now(table, SAMPLES, 0)["1-0"]
    datasets.write_partition(root, "calibration_report", (1, 0), [{"p50": 0.5, "batch_fingerprint": fp}])
    datasets.write_partition(root, "variant_overlays", (1, 0), [{"board_scope": 1, "overlay_fingerprint": "ov1"}])
    assert currency.rows(root, table, SAMPLES)["1-0"].current
    assert currency.report_fingerprints(root) == {(1, 0): fp}
    assert currency.overlays(root, {"1-0": "ov1", "1-1": NO_VARIANTS}) == {"1-0": currency.CURRENT,
                                                                           "1-1": currency.CURRENT}
    assert currency.overlays(root, {"1-0": "ov2"})["1-0"].why.startswith("the variation table")

    flip_byte(datasets.partition_path(root, "variant_overlays", (1, 0)))
    assert currency.overlays(root, {"1-0": "ov1"})["1-0"] == currency.Currency(False, "damaged overlays file")
    assert currency.rows(root, table, SAMPLES)["1-0"].why.startswith("damaged file variant_overlays/")

    datasets.write_partition(root, "variant_overlays", (1, 0), [{"board_scope": 1, "overlay_fingerprint": "ov1"}])
    flip_byte(datasets.partition_path(root, "calibration_report", (1, 0)))
    assert currency.rows(root, table, SAMPLES)["1-0"].why.startswith("damaged file calibration_report/")
    assert currency.report_fingerprints(root) == {}


def test_a_damaged_row_checks_file_makes_its_row_stale(tmp_path):
    """Every row dataset (``datasets.ROW_DATASETS``) is one the row is rebuilt
    for, the row's check verdicts too (one list of them)."""
    root = tmp_path / "wh"
    table = _table(tmp_path)
    _publish(root, table, (1, 0))
    datasets.write_partition(root, "row_checks", (1, 0), [{"check": "a", "passed": True, "fingerprint": "x"}])
    assert currency.rows(root, table, SAMPLES)["1-0"].current
    flip_byte(datasets.partition_path(root, "row_checks", (1, 0)))
    assert currency.rows(root, table, SAMPLES)["1-0"].why.startswith("damaged file row_checks/")
    assert "row_checks" in datasets.ROW_DATASETS


def test_draws_and_strata_follow_their_own_inputs_only(tmp_path):
    cat = catalog.load_catalog(REPO / "tables")
    root = tmp_path / "wh"
    assert currency.draws(root, cat, 4) == currency.Currency(False, "never drawn, or damaged")
    now = currency.draws_fingerprint_now(cat, 4)
    datasets.write_atomic(pa.table({"template": ["a"], "draws_fingerprint": [now]}),
                          datasets.flat_path(root, currency.DRAWS, currency.DRAWS_FILE))
    assert currency.draws(root, cat, 4).current
    assert not currency.draws(root, cat, 5).current  # another number of adventures

    # a row's parameters are not an input of the draws (only the table's row keys are) ...
    rows = dict(cat.board_gen.rows)
    first = min(rows)
    edited = replace(cat.board_gen, rows={**rows, first: rows[first].model_copy(update={"mine_density": 0.2})})
    assert currency.draws(root, replace(cat, board_gen=edited), 4).current
    # ... but the rows there are: the template check reads them
    fewer = replace(cat.board_gen, rows={k: v for k, v in rows.items() if k != first})
    assert currency.draws(root, replace(cat, board_gen=fewer), 4).why.startswith("the pools")

    # the strata read the current reports: a report of the row's current batch changes them
    strata_now = currency.strata_fingerprint_now(root, cat, SAMPLES, 0, 4)
    datasets.write_atomic(pa.table({"template": ["a"], "inputs_fingerprint": [strata_now]}),
                          datasets.flat_path(root, currency.STRATA, currency.STRATA_FILE))
    assert currency.strata(root, cat, SAMPLES, 0, 4).current
    fp = fingerprints_now(cat.board_gen, SAMPLES, 0)[f"{first[0]}-{first[1]}"]
    datasets.write_partition(root, "calibration_report", first, [{"p50": 0.5, "batch_fingerprint": fp}])
    assert currency.strata(root, cat, SAMPLES, 0, 4).why.startswith("a row's report")
    # a report of another batch is not current, so it is not an input
    datasets.write_partition(root, "calibration_report", first, [{"p50": 0.5, "batch_fingerprint": "old"}])
    assert currency.strata(root, cat, SAMPLES, 0, 4).current


def test_a_second_look_reads_no_unchanged_file_and_every_changed_one(tmp_path, monkeypatch):
    root = tmp_path / "wh"
    table = _table(tmp_path)
    _publish(root, table, (1, 0))
    _publish(root, table, (1, 1))
    checked = []
    real = datasets.file_problem
    monkeypatch.setattr(datasets, "file_problem", lambda r, p: checked.append(p) or real(r, p))

    first = currency.rows(root, table, SAMPLES)
    assert sorted(p.name for p in checked) == ["part.parquet", "part.parquet"] and all(v.current for v in first.values())
    checked.clear()
    assert currency.rows(root, table, SAMPLES) == first and checked == []  # nothing hashed again

    # a rewrite (new inode, size or time) is read again, and only that file
    _publish(root, table, (1, 1), fingerprint="other")
    assert currency.rows(root, table, SAMPLES)["1-1"].why.startswith("N, the master seed")
    assert checked == [datasets.partition_path(root, "boards", (1, 1))]

    # a byte flipped in place (same size, same inode) moves the file's modification time; the clock the
    # kernel stamps files with ticks every few ms, so the test moves it by hand rather than wait a tick
    checked.clear()
    path = datasets.partition_path(root, "boards", (1, 0))
    st = os.stat(path)
    flip_byte(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert currency.rows(root, table, SAMPLES)["1-0"].why.startswith("damaged file")
    assert checked == [path]

    # a removed file is never answered from memory
    path.unlink()
    assert currency.rows(root, table, SAMPLES)["1-0"].why.startswith("damaged file")  # its manifest entry stays
    datasets.digest_path(root, path).unlink()
    assert currency.rows(root, table, SAMPLES)["1-0"] == currency.Currency(False, "never generated")


def test_a_damaged_history_version_regenerates_no_row(tmp_path):
    from boardgen_pipeline.steps import history

    root = tmp_path / "wh"
    table = _table(tmp_path)
    _publish(root, table, (1, 0))
    record = {"row_fingerprint": "r", "batch_fingerprint": "b", "samples": 8, "passed": 8, "p10": 0.9,
              "p50": 0.95, "p90": 1.0}
    kept = history.keep(root, (1, 0), history.version_of(record))
    flip_byte(kept)
    damage = currency.damaged_partitions(root)
    # a past version is not recomputed by running its row again: it is reported, nothing is rerun for it
    assert damage.history == [kept] and damage.partitions == set() and damage.by_dataset == {}
    assert [p for p, _ in damage.files] == [kept]
    assert currency.rows(root, table, SAMPLES)["1-0"].current
