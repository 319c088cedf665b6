"""The row chain's faster paths give what the code before them gave (the
same, only faster): each is held against the code it replaced, copied here
verbatim as the reference, on random inputs and on real batches of the
small pipeline fixture (fog rows included).

- ``datasets.records_table`` (a column at a time) is ``pa.Table.from_pylist``
  over the records without their hive keys, schema and values;
- ``datasets.encode`` (its settings changed) reads back as the same records;
- ``batch.evaluate_row`` (integers and one percentile call for several
  columns) is the Fraction-per-board report, field for field;
- ``drawings.inferability_histogram`` (integer bins) is the Fraction one,
  character for character, boards exactly on a bin edge or on the target
  included;
- ``report.report_schema`` (types read off plain values) is the schema
  ``pa.array([value]).type`` gave;
- the overlays: string columns of one value built as such
  (``variants.batch._take``), and the overlay checks given the chain's R0
  (``outcomes.check_row(r0=...)``) are the checks computing it themselves.
"""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boardgen_pipeline.board.generator import target_fraction
from boardgen_pipeline.board.r0 import layouts_to_arrays, r0_batch
from boardgen_pipeline.calibration import seeds
from boardgen_pipeline.calibration.batch import (
    FAIRNESS_FIGURES,
    RowReport,
    below_target,
    below_target_scopes,
    evaluate_row,
    percentiles,
    percentiles_of,
    worst_record,
)
from boardgen_pipeline.calibration.report import report_record, report_schema
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.pictures import drawings
from boardgen_pipeline.tables.board_gen import load_board_gen
from boardgen_pipeline.variants import batch as overlay_batch
from boardgen_pipeline.variants import outcomes
from boardgen_pipeline.warehouse import datasets

SMALL = Path(__file__).resolve().parent / "fixtures" / "pipeline" / "small" / "board_gen.toml"


@pytest.fixture(scope="module")
def batches():
    table = load_board_gen(SMALL)
    out = {}
    for key in table.keys():
        batch = seeds.seed_batch(table, key, 48)
        out[key] = (batch, seeds.generate_batch(batch))
    return out


def random_records(rng: random.Random, n: int, fog: bool) -> list[dict]:
    """Board records with random figures in their domains (ties and boards
    on the target likely: small boards)."""
    out = []
    for i in range(n):
        safe = rng.randint(1, 40)
        revealed = rng.randint(0, safe)
        fog_cells = rng.randint(0, min(5, safe)) if fog else 0
        r = {"scope": rng.choice([i, rng.randint(0, 9)]), "revealed": revealed, "safe_count": safe,
             "inferability": revealed / safe, "exit": rng.choice(["passed", "best_legal", "least_bad"]),
             "attempts_used": rng.randint(1, 8), "r0_cap_rejected": rng.randint(0, 3), "illegal": rng.random() < .1,
             "revealed_core": max(0, revealed - rng.randint(0, fog_cells)), "safe_core": safe - fog_cells,
             "fog_cells": fog_cells, "fog_regions_placed": rng.randint(0, 2), "fog_shortfall": rng.randint(0, 2),
             "delta_budget_fog": rng.randint(0, 9), "fog_burden_ratio": rng.random(),
             "bbbv": rng.randint(1, 30), "subset_steps": rng.randint(0, 6), "solve_rounds": rng.randint(1, 9),
             "solvable_full_logic": rng.random() < .7}
        if rng.random() < .1:  # a record without the fog or difficulty fields (written before them)
            for k in ("revealed_core", "safe_core", "fog_cells", "delta_budget_fog", "bbbv"):
                r.pop(k)
        out.append(r)
    return out


# ---------------------------------------------------------------- the code before the faster paths


def records_table_before(records, drop=("level_index", "node_depth"), schema=None):
    rows = [{k: v for k, v in r.items() if k not in drop} for r in records]
    return pa.Table.from_pylist(rows, schema=schema)


def difficulty_figures_before(records: list[dict]) -> dict:
    recs = [r for r in records if r.get("bbbv") is not None]
    if not recs:
        return {}
    out = {}
    for name, values in (("bbbv", [r["bbbv"] for r in recs]),
                         ("bbbv_per_safe", [r["bbbv"] / max(1, r["safe_count"]) for r in recs]),
                         ("subset_steps", [r["subset_steps"] for r in recs])):
        out.update({f"{name}_p{q}": v for q, v in zip((10, 50, 90), percentiles(values))})
    out["solve_rounds_p50"] = percentiles([r["solve_rounds"] for r in recs], (50,))[0]
    out["solvable_full_logic_share"] = sum(1 for r in recs if r["solvable_full_logic"]) / len(recs)
    return out


def evaluate_row_before(row, records: list[dict]) -> RowReport:
    target = target_fraction(row.inferability_target)
    infer = [r["inferability"] for r in records]
    p10, p50, p90 = percentiles(infer)
    exits = Counter(r["exit"] for r in records)
    has_fog = row.fog_region_count >= 1
    deltas = [r.get("delta_budget_fog", 0) for r in records]
    burdens = [r.get("fog_burden_ratio", 0.0) for r in records]
    d50, d90 = percentiles(deltas, (50, 90))
    b50, b90 = percentiles(burdens, (50, 90))
    full = sum(1 for r in records if r.get("fog_regions_placed", 0) >= row.fog_region_count)
    worst = min(records, key=lambda r: (Fraction(r["revealed"], max(1, r["safe_count"])), r["scope"]), default=None)
    return RowReport(
        key=row.key, samples=len(records), target=row.inferability_target, p10=p10, p50=p50, p90=p90,
        exits={e: exits.get(e, 0) for e in ("passed", "best_legal", "least_bad")},
        retry_rate=sum(1 for r in records if r["attempts_used"] >= 2) / max(1, len(records)),
        mean_attempts=float(np.mean([r["attempts_used"] for r in records])) if records else 0.0,
        cap_rejections=sum(r["r0_cap_rejected"] for r in records),
        below_target_scopes=[r["scope"] for r in records if below_target(r, target)],
        illegal_scopes=[r["scope"] for r in records if r["illegal"]],
        has_fog=has_fog, fog_full_share=full / max(1, len(records)) if has_fog else 1.0,
        fog_boards_on_fogless_row=0 if has_fog else sum(1 for r in records if r.get("fog_cells", 0) > 0),
        fog_budget={"delta_p50": d50, "delta_p90": d90, "burden_p50": b50, "burden_p90": b90},
        shortfall=dict(Counter(r.get("fog_shortfall", 0) for r in records)),
        worst_scope=worst["scope"] if worst else None,
        difficulty=difficulty_figures_before(records),
    )


def _pair_before(record: dict) -> Fraction:
    main = Fraction(record["revealed"], max(1, record["safe_count"]))
    if record.get("revealed_core") is None or not record.get("safe_core"):
        return main
    return min(main, Fraction(record["revealed_core"], record["safe_core"]))


def histogram_before(records: list[dict], target: float, width: float = 0.025, bar: int = 40) -> str:
    step = Fraction(width).limit_denominator(1000)
    t = Fraction(target).limit_denominator(10**6)
    values = [_pair_before(r) for r in records]
    if not values:
        return "_no boards_"
    lo = min(min(values), t)
    k_lo = (lo - t) // step
    k_hi = max((Fraction(1) - t) // step, k_lo)
    counts = {k: 0 for k in range(int(k_lo), int(k_hi) + 1)}
    for v in values:
        counts[min(int((v - t) // step), int(k_hi))] += 1
    peak = max(counts.values())
    lines = ["inferability      boards"]
    for k in sorted(counts):
        a, b = t + k * step, t + (k + 1) * step
        if k == 0:
            lines.append(f"{'-' * 14} target {float(t):.3f} {'-' * 14}")
        n = counts[k]
        hashes = "#" * (round(bar * n / peak) if n else 0)
        if n and not hashes:
            hashes = "#"
        hi = "1.000]" if k == k_hi else f"{float(b):.3f})"
        flag = " !" if k < 0 and n else ""
        lines.append(f"[{float(a):.3f}, {hi} {hashes:<{bar}} {n}{flag}")
    below = sum(n for k, n in counts.items() if k < 0)
    summary = f"{len(values)} boards, {below} below target {float(t):.3f} (`!`)"
    return "\n".join(["```", *lines, "```", summary])


# ---------------------------------------------------------------- the tables


def same_table(a: pa.Table, b: pa.Table) -> None:
    assert a.schema == b.schema and a.schema.metadata == b.schema.metadata
    assert a.equals(b)


def test_records_table_is_from_pylist_on_real_records(batches):
    for _, records in batches.values():
        same_table(datasets.records_table(records), records_table_before(records))
        same_table(datasets.records_table(records, drop=()), records_table_before(records, drop=()))
        schema = records_table_before(records).schema
        same_table(datasets.records_table(records, schema=schema), records_table_before(records, schema=schema))


@pytest.mark.parametrize("records", [
    [], [{"x": 1}], [{"x": 1}, {"y": 2}], [{"x": 1, "y": None}, {"x": 2.5, "y": "a"}], [{"a": None}, {"a": None}],
    [{"level_index": 1, "a": [1, 2]}, {"a": []}], [{"a": True, "b": 1}, {"a": False, "b": 2**40}],
    [{"node_depth": 3}], [{"a": {"k": 1}}, {"a": {"k": None}}],
])
def test_records_table_is_from_pylist_on_odd_records(records):
    same_table(datasets.records_table(records), records_table_before(records))


SCHEMA = pa.schema([pa.field("a", pa.int64()), pa.field("level_index", pa.int64()), pa.field("b", pa.list_(pa.string()))])


@pytest.mark.parametrize("records", [[], [{"a": 1, "level_index": 3, "b": ["x"]}], [{"a": None}, {"b": []}],
                                     [{"level_index": 2}], [{"a": 1, "not_in_the_schema": 2}]])
@pytest.mark.parametrize("drop", [("level_index", "node_depth"), ()])
@pytest.mark.parametrize("schema", [SCHEMA, SCHEMA.with_metadata({"k": "v"}),
                                    pa.schema([pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.float64())])])
def test_records_table_is_from_pylist_with_a_schema(records, drop, schema):
    def built(make):
        try:
            return make(records, drop=drop, schema=schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # a value the schema cannot hold
            return type(exc)

    new, before = built(datasets.records_table), built(records_table_before)
    if isinstance(before, type):
        assert new is before
    else:
        same_table(new, before)


def test_encode_keeps_every_record(batches):
    for _, records in batches.values():
        for recs in (records, records[:1]):
            table = datasets.records_table(recs)
            back = pq.read_table(pa.BufferReader(datasets.encode(table)))
            same_table(back, table)
            assert back.to_pylist() == records_table_before(recs).to_pylist()
            assert datasets.encode(table) == datasets.encode(datasets.records_table(recs))  # same records, same bytes


# ---------------------------------------------------------------- report C and assertion A's figures


# what the perfect player added to the report after this reference was written: held by tests/test_check_f.py
PLAYER_COLUMNS = {*FAIRNESS_FIGURES, "assertion_f", "min_mean_survival", "survival_is_criterion"}


def same_report(a: RowReport, b: RowReport) -> None:
    def older(report: RowReport) -> dict:
        return {k: v for k, v in report.as_dict().items() if k not in PLAYER_COLUMNS}

    assert older(a) == older(b)
    assert (a.below_target_scopes, a.illegal_scopes, a.shortfall, a.exits) == \
        (b.below_target_scopes, b.illegal_scopes, b.shortfall, b.exits)
    assert list(a.shortfall) == list(b.shortfall)  # the order a report lists them in


def test_evaluate_row_is_the_report_before_on_real_batches(batches):
    for batch, records in batches.values():
        same_report(evaluate_row(batch.row, records), evaluate_row_before(batch.row, records))
        same_report(evaluate_row(batch.row, []), evaluate_row_before(batch.row, []))


@pytest.mark.parametrize("seed", range(12))
def test_evaluate_row_is_the_report_before_on_random_records(batches, seed):
    rng = random.Random(seed)
    (batch, _), (fog_batch, _) = batches[(1, 0)], batches[(2, 0)]
    for b in (batch, fog_batch):
        for target in (0.85, 0.9, 0.875, 1.0, 0.8500000000000001, 2 / 3):
            row = b.row.model_copy(update={"inferability_target": target})
            records = random_records(rng, rng.choice([1, 2, 37, 256]), fog=b.row.fog_region_count > 0)
            same_report(evaluate_row(row, records), evaluate_row_before(row, records))


@pytest.mark.parametrize("seed", range(6))
def test_integer_rules_are_the_fraction_rules(seed):
    rng = random.Random(seed)
    records = random_records(rng, 300, fog=True)
    for target in (Fraction(17, 20), Fraction(1), Fraction(0), Fraction(8500000000000001, 10**16)):
        assert below_target_scopes(records, target) == [r["scope"] for r in records if below_target(r, target)]
    key = lambda r: (Fraction(r["revealed"], max(1, r["safe_count"])), r["scope"])  # noqa: E731
    assert worst_record(records) is min(records, key=key)
    assert worst_record([]) is None


# ---------------------------------------------------------------- assertion A's histogram


def test_histogram_is_the_fraction_histogram_on_real_batches(batches):
    for batch, records in batches.values():
        for target in (batch.row.inferability_target, 0.5, 0.85, 0.95, 1.0):  # 0.5: every board bins above it
            assert drawings.inferability_histogram(records, target) == histogram_before(records, target)
    assert drawings.inferability_histogram([], 0.85) == histogram_before([], 0.85) == "_no boards_"


@pytest.mark.parametrize("seed", range(12))
def test_histogram_is_the_fraction_histogram_on_random_records(seed):
    rng = random.Random(seed)
    records = random_records(rng, rng.choice([1, 5, 256]), fog=seed % 2 == 0)
    # boards exactly on the target and on bin edges: 17/20 and 35/40, 9/10, 37/40, 1
    records += [{"revealed": a, "safe_count": b} for a, b in ((17, 20), (35, 40), (9, 10), (37, 40), (40, 40), (0, 3))]
    rng.shuffle(records)
    for target in (0.85, 0.9, 0.875, 0.86, 1.0, 0.123456789):
        for width in (0.025, 0.1, 0.033):
            assert drawings.inferability_histogram(records, target, width) == histogram_before(records, target, width)


def test_percentiles_of_several_columns_are_those_of_each_column():
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 256):
        columns = [rng.integers(0, 50, n).tolist(), rng.random(n).tolist(), (rng.random(n) * 1e6).tolist()]
        for qs in ((10, 50, 90), (50, 90), (50,)):
            assert percentiles_of(columns, qs) == [percentiles(c, qs) for c in columns]
    assert percentiles_of([[], []]) == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


# ---------------------------------------------------------------- the files


def test_encode_chooses_its_settings_by_column_type(batches):
    """Integers delta-packed and uncompressed (under zstd in a list), booleans
    uncompressed, the rest under zstd; no dictionary, no statistics; one
    record: all plain."""
    _, records = batches[(2, 0)]
    table = datasets.records_table(records)
    meta = pq.ParquetFile(pa.BufferReader(datasets.encode(table))).metadata
    kinds = {f.name: f.type for f in table.schema}
    for i in range(meta.num_columns):
        col = meta.row_group(0).column(i)
        kind = kinds[col.path_in_schema.split(".")[0]]
        listed = pa.types.is_list(kind)  # the player's guesses: a list column's leaf
        while pa.types.is_list(kind):
            kind = kind.value_type
        assert col.statistics is None and "RLE_DICTIONARY" not in col.encodings, col.path_in_schema
        if pa.types.is_integer(kind):
            assert (col.compression, "DELTA_BINARY_PACKED" in col.encodings) == (
                "ZSTD" if listed else "UNCOMPRESSED", True), col.path_in_schema
        else:
            assert col.compression == ("UNCOMPRESSED" if pa.types.is_boolean(kind) else "ZSTD"), col.path_in_schema
    one = pq.ParquetFile(pa.BufferReader(datasets.encode(datasets.records_table(records[:1])))).metadata
    assert {one.row_group(0).column(i).compression for i in range(one.num_columns)} == {"UNCOMPRESSED"}
    lists = pa.table({"n": list(range(20)), "cells": [[1, 2, 9], [4]] * 10, "packs": [[[1, 2], [9]], []] * 10,
                      "pool": [["a", "b"]] * 20})
    meta = pq.ParquetFile(pa.BufferReader(datasets.encode(lists))).metadata.row_group(0)
    got = {meta.column(i).path_in_schema: (meta.column(i).compression, "DELTA_BINARY_PACKED" in meta.column(i).encodings)
           for i in range(meta.num_columns)}
    assert got == {"n": ("UNCOMPRESSED", True), "cells.list.element": ("ZSTD", True),
                   "packs.list.element.list.element": ("ZSTD", True), "pool.list.element": ("ZSTD", False)}


def test_encode_gives_the_same_bytes_for_the_same_records_however_the_table_was_cut(batches):
    _, records = batches[(2, 0)]
    table = datasets.records_table(records)
    assert datasets.encode(table.slice(5, 30)) == datasets.encode(datasets.records_table(records[5:35]))
    halves = pa.concat_tables([table.slice(0, 20), table.slice(20)])
    assert halves.column("layout").num_chunks == 2
    assert datasets.encode(halves) == datasets.encode(table)


def test_duckdb_reads_every_encoded_dataset_as_written(tmp_path, batches):
    """The warehouse is read through DuckDB: its reader of the settings
    chosen (delta-packed integers, plain zstd pages, nested lists) gives the
    records back."""
    import duckdb

    from boardgen_pipeline.steps import chain

    catalog = load_catalog(SMALL.parent)
    batch, _ = batches[(2, 0)]
    result = chain.run_row(chain.RowTask(batch, variation=catalog.variation, resources=catalog.resources))
    con = duckdb.connect()
    for f in result.files:
        path = tmp_path / f"{f.dataset}.parquet"
        path.write_bytes(f.data)
        want = pq.read_table(path).to_pylist()
        rows = con.execute(f"select * from read_parquet('{path}')")
        names = [d[0] for d in rows.description]
        got = [dict(zip(names, r)) for r in rows.fetchall()]
        assert got == want, f.dataset


def report_schema_before(record: dict):
    from boardgen_pipeline.calibration.report import NULLABLE_TYPES

    fields = []
    for name, value in record.items():
        if name in ("level_index", "node_depth"):
            continue
        declared = NULLABLE_TYPES.get(name)
        fields.append(pa.field(name, pa.type_for_alias(declared) if declared else pa.array([value]).type))
    return pa.schema(fields)


def test_report_schema_is_the_one_pa_array_inferred(batches):
    for batch, records in batches.values():
        record = report_record(batch, evaluate_row(batch.row, records), records)
        assert report_schema(record) == report_schema_before(record)
    odd = {"a": True, "b": 2**63 - 1, "c": -(2**63), "d": 1.5, "e": "x", "f": None, "g": np.int64(3), "h": [1, 2],
           "i": np.float64(2.5), "advice_target": None, "level_index": 1}
    assert report_schema(odd) == report_schema_before(odd)
    with pytest.raises(OverflowError):
        report_schema({"big": 2**63})  # as pa.array([2**63]) refuses it


# ---------------------------------------------------------------- the overlays


@pytest.mark.parametrize("codes, vocab", [
    ([0, 0, 0], ("a",)), ([1, 1], ("a", "b")), ([-1, -1], ()), ([-1, -1], ("a",)), ([0, -1, 0], ("a",)),
    ([0, 1, 0], ("a", "b")), ([], ()), ([], ("a",)), ([2, 2, 2, 2], ("x", "y", "z")),
])
def test_a_string_column_of_one_value_is_the_taken_column(codes, vocab):
    codes = np.asarray(codes, np.int32)
    taken = pa.array(list(vocab), pa.string()).take(pa.array(codes, pa.int32(), mask=codes < 0))
    built = overlay_batch._take(vocab, codes)
    assert built.type == pa.string() and built.equals(taken) and built.null_count == taken.null_count


def test_overlay_checks_given_the_chains_r0_are_the_checks_computing_it(batches):
    catalog = load_catalog(SMALL.parent)
    for (level, depth), (batch, records) in batches.items():
        row = batch.row
        W, H = row.board_width, row.board_height
        mines, fog = layouts_to_arrays([r["layout"] for r in records], W, H)
        scopes = [r["scope"] for r in records]
        placed = overlay_batch.place_row(mines, fog, scopes=scopes, width=W, height=H, spawn_side=batch.spawn_side,
                                         level_index=level, node_depth=depth, board_type=row.board_type,
                                         is_boss=batch.boss, table=catalog.variation)
        r0 = r0_batch(mines, fog, W, H, batch.spawn_side)
        order = list(range(len(scopes)))[::-1]  # the checks align the boards to the overlays by scope
        kw = dict(width=W, height=H, spawn_side=batch.spawn_side, variation=catalog.variation,
                  weights=catalog.resources, board_scopes=[scopes[i] for i in order])
        rows = [outcomes.check_row(placed, mines[order], fog[order], width=W, height=H, spawn_side=batch.spawn_side,
                                   board_scopes=kw["board_scopes"], r0=r) for r in (r0[order], None)]
        assert np.array_equal(rows[0].r0, rows[1].r0) and np.array_equal(rows[0].flags, rows[1].flags)
        assert np.array_equal(rows[0].r0, r0_batch(rows[0].mines, rows[0].fog, W, H, batch.spawn_side))  # aligned
        given = outcomes.overlay_outcomes(placed, mines[order], fog[order], r0=r0[order], **kw)
        computed = outcomes.overlay_outcomes(placed, mines[order], fog[order], **kw)
        assert [(o.name, o.passed, o.description, o.metadata, o.pictures) for o in given] == \
            [(o.name, o.passed, o.description, o.metadata, o.pictures) for o in computed]
        with pytest.raises(ValueError, match="R0 of shape"):
            outcomes.check_row(placed, mines, fog, width=W, height=H, spawn_side=batch.spawn_side, r0=r0[:-1])
