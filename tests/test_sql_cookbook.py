"""The SQL cookbook (docs/sql.md): every query of the page, run as
written against a fixture warehouse, and its answer checked against figures
computed here from the Parquet files on their own (not through SQL).

The queries are parsed out of docs/sql.md (fenced ``sql`` blocks whose first
line is ``-- name: <name>``), so the page and the tests cannot drift: a query
added to the page without a test here, or renamed, fails
``test_every_query_of_the_page_is_tested``.

The fixture warehouse is built once for the module by the pipeline itself
(``calibration_job`` in process, tests/fixtures/pipeline/cookbook with the
repo's variation table, N = 8): rows that pass, fail A through best_legal,
carry fog, lose many attempts to the R0 cap, and one rejected by A'
(least_bad boards under ``_rejected/``). The ``variant_overlays`` dataset
must come from its asset: a run that wrote none fails the fixture (writing
it here would hide that). The fixture's tables have no node-map pools, so
``node_map_draws`` is written here over the repo's pools by the asset's own
step (``draw_node_maps.run_draws``). For queries 11 and 12 (history) the
warehouse holds history: row (2,1) was first calibrated with a larger R0
cap, a version dated ``HISTORY_AGE`` back, before the fixture's own tables.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import os
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boardgen_pipeline import catalog, cli
from boardgen_pipeline.nodemap import load_pools
from boardgen_pipeline.steps import history
from boardgen_pipeline.warehouse import datasets, publish, views

from .test_pipeline_support import copy_fixture, defs_for, materialize_graph, meta, run_rows, run_validate, step_failures

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "sql.md"
N = 8
DRAW_SEEDS = range(40)
QUERIES = {
    "worst-rows", "retry-rates-by-level", "degraded-exits", "cap-rejections", "inferability-distribution",
    "rebuild-board", "fog-budget", "overlay-coverage", "node-map-templates", "failing-rows-advice",
    "row-history", "worse-since-yesterday", "perfect-player-guesses", "moved-since-last-week",
}
BLOCK = re.compile(r"```sql\n-- name: ([\w-]+)\n(.*?)```", re.S)


def doc_queries() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found = BLOCK.findall(text)
    names = [n for n, _ in found]
    assert len(names) == len(set(names)), f"duplicate query names in {DOC}: {names}"
    return {name: sql for name, sql in found}


@dataclass
class Warehouse:
    base: Path  # the folder holding tables/ and warehouse/ (the "repository root" of the queries)
    tables: Path
    root: Path
    boards: list[dict]  # published boards, hive keys put back
    rejected: list[dict]  # boards of rejected batches
    reports: list[dict]
    overlays: list[dict]
    draws: list[dict]
    built_here: tuple[str, ...]  # datasets this module had to write itself
    history: list[dict] = dataclasses.field(default_factory=list)  # every kept version, hive keys put back

    def query(self, name: str) -> list[dict]:
        """Run one query of the page exactly as written, from ``base``, on a
        read-only connection (as the page says); rows as dicts."""
        sql = doc_queries()[name]
        old = os.getcwd()
        os.chdir(self.base)
        try:
            con = duckdb.connect(str(self.root / datasets.DB_NAME), read_only=True)
            try:
                cur = con.execute(sql)
                cols = [d[0] for d in cur.description]
                return [dict(zip(cols, row)) for row in cur.fetchall()]
            finally:
                con.close()
        finally:
            os.chdir(old)


def _read_dataset(root: Path, dataset: str) -> list[dict]:
    out = []
    for key in sorted(publish.keys_in(root, dataset)):
        out += publish.read_partition(root, dataset, key)
    return out


def _flat_records(root: Path, dataset: str) -> list[dict]:
    return [r for p in sorted((root / dataset).glob("*.parquet")) for r in pq.read_table(p).to_pylist()]


def _write_draws(root: Path, tables: Path) -> None:
    """The ``node_map_draws`` dataset over the repo's node-map pools (the
    fixture's tables have none): the asset's own step when the library has
    it (``draw_node_maps.run_draws``), else the domain's draw records
    (``nodemap.simulate_draws``) written as the asset writes them (one flat
    file, ``level`` stored as ``level_index``)."""
    pools = load_pools(REPO / "tables")
    from boardgen_pipeline.steps import draw_node_maps

    draw_node_maps.run_draws(root, dataclasses.replace(catalog.load_catalog(tables), pools=pools), len(DRAW_SEEDS))


# Rows as they were before the fixture's tables (query 12: both got worse since then): (2,1) with a
# larger R0 cap (it passed then), (1,0) with fewer mines (it passes still, with a lower p10 now).
EARLIER = {(2, 1): ("r0_max_cap = 20\n", "r0_max_cap = 60\n"),
           (1, 0): ("level_index = 1\nnode_depth = 0\nmine_density = 0.2\n",
                    "level_index = 1\nnode_depth = 0\nmine_density = 0.18\n")}
HISTORY_AGE = timedelta(days=2)


def _earlier_history(defs, instance, tables: Path, root: Path) -> None:
    """The ``EARLIER`` rows calibrated by the pipeline, their versions dated
    ``HISTORY_AGE`` back (the nightly of two days ago); the tables are the
    fixture's own again afterwards."""
    board_gen = tables / "board_gen.toml"
    text = earlier = board_gen.read_text()
    for now, then in EARLIER.values():
        assert text.count(now) == 1, now
        earlier = earlier.replace(now, then)
    board_gen.write_text(earlier)
    try:
        assert run_validate(defs, instance).success
        for level, depth in EARLIER:
            assert run_rows(defs, instance, [f"{level}-{depth}"]).success
    finally:
        board_gen.write_text(text)
    for key in EARLIER:
        [path] = datasets.partition_dir(root, history.DATASET, key).glob("*.parquet")
        [record] = pq.read_table(path).to_pylist()
        record["published_at"] -= HISTORY_AGE
        datasets.write_atomic(pa.Table.from_pylist([record], schema=history.SCHEMA), path, root)


def _history_records(root: Path) -> list[dict]:
    out = []
    for path in sorted((root / history.DATASET).rglob("*.parquet")):
        [record] = pq.read_table(path).to_pylist()
        record["level_index"], record["node_depth"] = (int(p.split("=")[1]) for p in path.parent.parts[-2:])
        out.append(record)
    return out


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Warehouse:
    base = tmp_path_factory.mktemp("cookbook")
    tables = copy_fixture("cookbook", base)
    shutil.copy(REPO / "tables" / "variation.toml", tables / "variation.toml")
    root = base / "warehouse"
    with dg.DagsterInstance.ephemeral() as instance:
        _earlier_history(defs_for(tables, root, samples=N), instance, tables, root)
        _prepare, rows, _table = materialize_graph(defs_for(tables, root, samples=N), instance)
        assert instance.get_dynamic_partitions("board_gen_rows") == ["1-0", "1-1", "2-0", "2-1", "3-0"]
    # the fixture's failing rows (the queries' answers: 3-0's batch withheld, 1-1 and 2-1 failing) fail the rows run on their
    # verdicts alone, once every row is recorded; nothing raised
    failure = meta(step_failures(rows)["calibrate"].user_failure_data)
    assert not rows.success and failure["verdict_only"] is True and sorted(failure["failing_rows"]) == ["1-1", "2-1", "3-0"]
    assert publish.keys_in(root, "boards") == {(1, 0), (1, 1), (2, 0), (2, 1)}
    assert publish.keys_in(publish.rejected_root(root), "boards") == {(3, 0)}

    # the pipeline wrote the overlays of every published row itself
    assert publish.keys_in(root, "variant_overlays") == publish.keys_in(root, "boards")
    built = []
    if not _flat_records(root, "node_map_draws"):  # no asset, or no pools in the fixture's tables: empty file
        _write_draws(root, tables)
        built.append("node_map_draws")
    views.refresh_views_atomic(root)

    draws = _flat_records(root, "node_map_draws")
    return Warehouse(
        base=base, tables=tables, root=root,
        boards=_read_dataset(root, "boards"),
        rejected=_read_dataset(publish.rejected_root(root), "boards"),
        reports=_read_dataset(root, "calibration_report"),
        overlays=_read_dataset(root, "variant_overlays"),
        draws=draws,
        built_here=tuple(built),
        history=_history_records(root),
    )


def by_row(records: list[dict]) -> dict[tuple[int, int], list[dict]]:
    out: dict = {}
    for r in records:
        out.setdefault((r["level_index"], r["node_depth"]), []).append(r)
    return out


def approx(x):
    return pytest.approx(x, rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------- the page itself


def test_every_query_of_the_page_is_tested():
    assert set(doc_queries()) == QUERIES


def test_fixture_has_the_answers_the_queries_look_for(wh):
    """Each query has something to find: otherwise its test proves little."""
    exits = Counter(b["exit"] for b in wh.boards)
    assert exits["passed"] and exits["best_legal"], exits
    assert {b["exit"] for b in wh.rejected} == {"least_bad"}
    assert any(b["fog_cells"] for b in wh.boards)
    assert {o["scope"] for o in wh.overlays} >= {"region", "global"}
    assert len({(d["level_index"], d["template_id"]) for d in wh.draws}) > 3
    assert not all(r["green"] for r in wh.reports) and any(r["green"] for r in wh.reports)


# ---------------------------------------------------------------- one test per query


def test_worst_rows(wh):
    got = wh.query("worst-rows")
    expected = []
    rows = by_row(wh.boards)
    for rep in wh.reports:
        key = (rep["level_index"], rep["node_depth"])
        worst = min(min(b["inferability"], b["inferability_core"]) for b in rows[key])
        t = rep["inferability_target"]
        expected.append({"key": key, "worst_margin": worst - t, "p10_margin": rep["p10"] - t,
                         "below_target": rep["below_target"]})
    expected.sort(key=lambda e: (e["worst_margin"], e["p10_margin"], e["key"]))
    assert [(g["level_index"], g["node_depth"]) for g in got] == [e["key"] for e in expected]
    for g, e in zip(got, expected):
        assert g["worst_margin"] == approx(e["worst_margin"])
        assert g["p10_margin"] == approx(e["p10_margin"])
        # below target somewhere <=> a negative worst margin (assertion A)
        assert (g["worst_margin"] < 0) == (e["below_target"] > 0), g
    assert (got[0]["level_index"], got[0]["node_depth"]) == (2, 1)  # p10 0.16: the cap-starved row
    assert got[0]["green"] is False and got[-1]["worst_margin"] >= 0


def test_retry_rates_by_level(wh):
    got = wh.query("retry-rates-by-level")
    levels = sorted({b["level_index"] for b in wh.boards})
    assert [g["level_index"] for g in got] == levels == [1, 2]  # level 3 was rejected: not in the views
    for g in got:
        boards = [b for b in wh.boards if b["level_index"] == g["level_index"]]
        assert g["boards"] == len(boards) == 2 * N
        assert g["retry_rate"] == approx(sum(b["attempts_used"] >= 2 for b in boards) / len(boards))
        assert g["mean_attempts"] == approx(sum(b["attempts_used"] for b in boards) / len(boards))
        assert g["max_attempts"] == max(b["attempts_used"] for b in boards)
        assert g["degraded_share"] == approx(sum(b["exit"] != "passed" for b in boards) / len(boards))
    # pooled over a level, it agrees with the reports' per-row retry_rate
    for g in got:
        reps = [r for r in wh.reports if r["level_index"] == g["level_index"]]
        assert g["retry_rate"] == approx(sum(r["retry_rate"] * r["samples"] for r in reps) / (N * len(reps)))


def test_degraded_exits(wh):
    got = wh.query("degraded-exits")
    expected = {(b["scope"], "best_legal", False) for b in wh.boards if b["exit"] == "best_legal"}
    expected |= {(b["scope"], "least_bad", True) for b in wh.rejected if b["exit"] == "least_bad"}
    assert {(g["scope"], g["exit"], g["rejected"]) for g in got} == expected
    assert len(got) == len(expected)
    least_bad = [g for g in got if g["exit"] == "least_bad"]
    assert len(least_bad) == N and {(g["level_index"], g["node_depth"]) for g in least_bad} == {(3, 0)}
    assert all(g["rejected"] for g in least_bad)
    best = [g for g in got if g["exit"] == "best_legal"]
    assert {(g["level_index"], g["node_depth"]) for g in best} >= {(1, 1)}
    assert all(not g["rejected"] for g in best)
    assert [g["inferability"] for g in best if (g["level_index"], g["node_depth"]) == (1, 1)] == sorted(
        b["inferability"] for b in wh.boards if (b["level_index"], b["node_depth"]) == (1, 1)
        and b["exit"] == "best_legal")
    # every rejected attempt is accounted for by one of the four reasons
    for g in least_bad:
        assert g["r0_cap_rejected"] + g["unreachable_rejected"] + g["free_open_rejected"] \
            + g["min_safe_rejected"] >= g["attempts_used"]


def test_cap_rejections(wh):
    got = wh.query("cap-rejections")
    rows = by_row(wh.boards)
    reports = {(r["level_index"], r["node_depth"]): r for r in wh.reports}
    expected = sorted(rows, key=lambda k: (-sum(b["r0_cap_rejected"] for b in rows[k]), k))
    assert [(g["level_index"], g["node_depth"]) for g in got] == expected
    assert expected[0] == (2, 1)  # r0_max_cap 20 without the shave ring
    for g in got:
        key = (g["level_index"], g["node_depth"])
        boards = rows[key]
        cap = sum(b["r0_cap_rejected"] for b in boards)
        assert g["cap_rejections"] == cap == reports[key]["cap_rejections"]
        assert g["attempts"] == sum(b["attempts_used"] for b in boards)
        assert g["cap_rejected_share"] == approx(cap / g["attempts"])
        assert g["boards_hit"] == sum(1 for b in boards if b["r0_cap_rejected"] > 0)
        assert g["r0_size_max"] == max(b["r0_size"] for b in boards)
        sizes = sorted(b["r0_size"] for b in boards)
        assert g["r0_size_p50"] == approx((sizes[N // 2 - 1] + sizes[N // 2]) / 2)
    assert got[0]["cap_rejected_share"] > 0.2


def test_inferability_distribution(wh):
    got = wh.query("inferability-distribution")  # row (1,1), as the page's SET VARIABLE lines say
    boards = by_row(wh.boards)[(1, 1)]
    bins = Counter((20 * b["revealed"] // b["safe_count"]) / 20 for b in boards)
    assert [(g["bin_from"], g["boards"]) for g in got] == sorted(bins.items())
    assert sum(g["boards"] for g in got) == N
    below = {(20 * b["revealed"] // b["safe_count"]) / 20 for b in boards
             if min(b["inferability"], b["inferability_core"]) < b["inferability_target"]}
    assert {g["bin_from"] for g in got if g["below_target"]} == below
    assert below and 1.0 not in below  # target 1.0: every board not fully solved is below it
    for g in got:
        assert g["picture"].strip(), g  # a bar for every non-empty bin
        assert g["lowest"] >= g["bin_from"] - 1e-12 and g["lowest"] < g["bin_from"] + 0.05
        assert len(g["picture"].rstrip()) == pytest.approx(30 * g["boards"] / N, abs=1)


def test_rebuild_board(wh, capsys):
    got = wh.query("rebuild-board")
    report = next(r for r in wh.reports if (r["level_index"], r["node_depth"]) == (1, 1))
    board = next(b for b in wh.boards if b["scope"] == report["worst_scope"])
    assert {g["scope"] for g in got} == {board["scope"]}
    assert [g["board_row"] for g in got] == list(range(1, board["height"] + 1))
    assert "/".join(g["cells"] for g in got) == board["layout"]
    assert all(len(g["cells"]) == board["width"] for g in got)
    assert sum(g["cells"].count("*") for g in got) == board["mines_actual"]
    # "boardgen generate --seed SCOPE" rebuilds the same board from the tables
    capsys.readouterr()
    rc = cli.main(["generate", "--level", "1", "--depth", "1", "--seed", str(board["scope"]),
                   "--tables", str(wh.tables), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["layout"] == board["layout"] and out["exit"] == board["exit"]


def test_fog_budget(wh):
    got = wh.query("fog-budget")
    fog_rows = [r for r in wh.reports if r["assertion_b"] is not None]
    assert [(g["level_index"], g["node_depth"]) for g in got] == [(2, 0)] == \
        [(r["level_index"], r["node_depth"]) for r in fog_rows]
    g, rep = got[0], fog_rows[0]
    boards = by_row(wh.boards)[(2, 0)]
    assert g["fog_full_share"] == approx(rep["fog_full_share"])
    assert g["fog_cells_mean"] == approx(sum(b["fog_cells"] for b in boards) / N) and g["fog_cells_mean"] > 0
    assert g["fog_ratio_mean"] == approx(sum(b["fog_ratio"] for b in boards) / N)
    assert g["boards_short"] == sum(1 for b in boards if b["fog_shortfall"] > 0)
    for col in ("delta_budget_fog_p50", "delta_budget_fog_p90", "fog_burden_ratio_p50", "fog_burden_ratio_p90"):
        assert g[col] == approx(rep[col])
    assert g["delta_budget_fog_p90"] >= g["delta_budget_fog_p50"]


def test_overlay_coverage(wh):
    got = wh.query("overlay-coverage")
    by_type: dict = {}
    for o in wh.overlays:
        by_type.setdefault(o["variant_type"] or "(none)", []).append(o)
    assert {g["variant_type"] for g in got} == set(by_type)
    assert [g["boards"] for g in got] == sorted((len(v) for v in by_type.values()), reverse=True)
    assert sum(g["boards"] for g in got) == len(wh.boards)  # one overlay per published board
    for g in got:
        ovs = by_type[g["variant_type"]]
        cells = sum(o["cell_count"] for o in ovs)
        cand = sum(o["candidate_count"] for o in ovs)
        assert g["boards"] == len(ovs) and g["cells"] == cells
        assert g["rows"] == len({(o["level_index"], o["node_depth"]) for o in ovs})
        assert g["scope"] == ovs[0]["scope"]
        assert g["cells_per_board"] == approx(cells / len(ovs))
        assert g["share_of_board"] == approx(cells / sum(o["width"] * o["height"] for o in ovs))
        assert g["shortfall_cells"] == sum(o["shortfall"] for o in ovs)
        assert g["boards_short"] == sum(1 for o in ovs if o["shortfall"] > 0)
        if cand:
            assert g["share_of_candidates"] == approx(cells / cand)
        else:
            assert g["share_of_candidates"] is None
    region = [g for g in got if g["scope"] == "region"]
    assert region and all(0 < g["share_of_candidates"] < 0.5 for g in region)
    whole = [g for g in got if g["scope"] == "global"]
    assert whole and all(g["cells"] == 0 for g in whole)  # the Boss row of level 2: whole-board type


def test_node_map_templates(wh):
    got = wh.query("node-map-templates")
    drawn = [d for d in wh.draws if not d["first_adventure"]]
    counts = Counter((d["level_index"], d["template_id"]) for d in drawn)
    assert {(g["level_index"], g["template_id"]): g["draws"] for g in got} == dict(counts)
    assert [(g["level_index"], -g["draws"], g["template_id"]) for g in got] == sorted(
        (lv, -n, t) for (lv, t), n in counts.items())
    per_level = Counter(d["level_index"] for d in drawn)
    pool = {d["level_index"]: d["pool_size"] for d in drawn}
    for g in got:
        assert g["share"] == approx(g["draws"] / per_level[g["level_index"]])
        assert g["expected_share"] == approx(1 / pool[g["level_index"]])
    for level in per_level:
        assert math.fsum(g["share"] for g in got if g["level_index"] == level) == approx(1.0)
    # the first adventure's fixed script is left out: its template is drawn no more than the others
    fixed = {d["level_index"]: d["template_id"] for d in wh.draws if d["first_adventure"]}
    assert all(counts[(lv, t)] < per_level[lv] for lv, t in fixed.items())


def test_failing_rows_advice(wh):
    got = wh.query("failing-rows-advice")
    expected = [r for r in wh.reports if not r["green"] or r["advice_status"] != "ok"]
    expected.sort(key=lambda r: (r["board_pass_chance"], r["level_index"], r["node_depth"]))
    assert [(g["level_index"], g["node_depth"]) for g in got] == \
        [(r["level_index"], r["node_depth"]) for r in expected]
    keys = {(g["level_index"], g["node_depth"]) for g in got}
    assert {(1, 1), (2, 1)} <= keys and (3, 0) not in keys  # (3,0) was rejected: no report
    for g, r in zip(got, expected):
        for col in ("advice_status", "advice_r0_max_cap", "below_target", "green"):
            assert g[col] == r[col]
        for col in ("pass_rate_per_attempt", "pass_rate_ci_low", "pass_rate_ci_high", "board_pass_chance",
                    "advice_density", "advice_target"):
            assert g[col] == (None if r[col] is None else approx(r[col]))
        assert g["pass_rate_ci_low"] <= g["pass_rate_per_attempt"] <= g["pass_rate_ci_high"]
        if not g["green"]:
            assert g["advice_status"] == "fails" and g["board_pass_chance"] < 0.999
    # row (1,1) fails A at target 1.0; the advisor's largest passing target is below it
    g11 = next(g for g in got if (g["level_index"], g["node_depth"]) == (1, 1))
    assert g11["below_target"] > 0 and g11["advice_target"] is not None and g11["advice_target"] < 1.0


def test_queries_run_on_a_warehouse_without_rejected_batches(wh, tmp_path):
    """Query 3 reads files by glob: with no rejected batch it still answers
    (the published boards alone), rather than failing on an empty glob."""
    base = tmp_path / "repo"
    shutil.copytree(wh.root, base / "warehouse", ignore=shutil.ignore_patterns("_rejected", "boardgen.duckdb"))
    views.refresh_views_atomic(base / "warehouse")
    other = Warehouse(base, wh.tables, base / "warehouse", [], [], [], [], [], ())
    got = other.query("degraded-exits")
    assert {g["exit"] for g in got} == {"best_legal"} and not any(g["rejected"] for g in got)


def test_query_helper_runs_the_page_verbatim(wh):
    """The runner the page shows (Python client, read-only, the whole block on
    stdin) gives the same answer as the tests' helper."""
    sql = doc_queries()["inferability-distribution"]
    con = duckdb.connect(str(wh.root / datasets.DB_NAME), read_only=True)
    try:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            con.sql(sql).show(max_rows=100)
        rows = con.sql(sql).fetchall()
    finally:
        con.close()
    assert len(rows) == len(wh.query("inferability-distribution"))
    assert "bin_from" in out.getvalue()


def test_row_history(wh):
    got = wh.query("row-history")  # row (2,1), as the page's SET VARIABLE lines say
    kept = sorted((h for h in wh.history if (h["level_index"], h["node_depth"]) == (2, 1)),
                  key=lambda h: h["published_at"])
    assert len(kept) == 2  # the earlier cap, then the fixture's own
    assert [g["version"] for g in got] == [h["version"] for h in kept] and [g["n"] for g in got] == [1, 2]
    assert [g["changed"] for g in got] == ["first version", "r0_max_cap 60->20"]
    assert [g["current"] for g in got] == [False, True]
    report = next(r for r in wh.reports if (r["level_index"], r["node_depth"]) == (2, 1))
    assert got[1]["p10"] == report["p10"] and got[1]["pass_rate"] == approx(report["passed"] / N)
    assert got[0]["p10_change"] is None and got[1]["p10_change"] == approx(kept[1]["p10"] - kept[0]["p10"])
    assert got[1]["pass_rate_change"] == approx(kept[1]["pass_rate"] - kept[0]["pass_rate"])
    assert got[1]["p10_change"] < 0  # the smaller cap: the cap-starved row of query 4


def test_worse_since_yesterday(wh):
    got = wh.query("worse-since-yesterday")
    cutoff = datetime.now(UTC) - timedelta(days=1)
    reports = {(r["level_index"], r["node_depth"]): r for r in wh.reports}
    then = {}
    for h in sorted(wh.history, key=lambda h: h["published_at"]):
        if h["published_at"] < cutoff:
            then[(h["level_index"], h["node_depth"])] = h  # the newest before the cutoff
    expected = []
    for key, t in then.items():
        r = reports.get(key)
        if r is None or (t["green"] and not r["green"]) or r["p10"] < t["p10"] or r["passed"] / r["samples"] < t["pass_rate"]:
            expected.append(key)
    # the two rows edited since (the others are as they were): (2,1) lost assertion A, listed first;
    # (1,0) still passes, with a lower p10
    assert sorted(expected) == sorted(EARLIER) and then[(2, 1)]["green"] and not reports[(2, 1)]["green"]
    assert reports[(1, 0)]["green"] and reports[(1, 0)]["p10"] < then[(1, 0)]["p10"]
    assert [(g["level_index"], g["node_depth"]) for g in got] == [(2, 1), (1, 0)]
    g, t, r = got[0], then[(2, 1)], reports[(2, 1)]
    assert g["no_report_now"] is False and g["row_edited"] is True
    assert (g["then_green"], g["now_green"]) == (t["green"], r["green"])
    assert g["then_p10"] == t["p10"] and g["now_p10"] == r["p10"] and g["p10_change"] == approx(r["p10"] - t["p10"])
    assert g["now_pass_rate"] == approx(r["passed"] / N) and g["then_pass_rate"] == t["pass_rate"]
    assert g["below_target_change"] == r["below_target"] - t["below_target"]
    assert g["then_published_at"] == t["published_at"] and t["published_at"] < cutoff


def test_perfect_player_guesses(wh):
    """Query 13 against the boards' own player figures and the reports."""
    got = wh.query("perfect-player-guesses")
    rows = by_row(wh.boards)
    reports = {(r["level_index"], r["node_depth"]): r for r in wh.reports}
    expected = []
    for key, rep in reports.items():
        analysed = [b for b in rows[key] if b["won"] is not None]
        assert len(analysed) == rep["fairness_boards"] == N - rep["fairness_not_analysed"]
        least = min(analysed, key=lambda b: (b["survival"], b["scope"]))
        expected.append({"key": key, "max_guesses": max(b["forced_guesses"] for b in analysed),
                         "least_survival_scope": least["scope"], "least_survival": least["survival"],
                         "mean_guesses": sum(b["forced_guesses"] for b in analysed) / len(analysed),
                         "win_rate": sum(bool(b["won"]) for b in analysed) / len(analysed),
                         "mean_survival": sum(b["survival"] for b in analysed) / len(analysed)})
    expected.sort(key=lambda e: (-e["mean_guesses"], e["mean_survival"], e["key"]))
    assert [(g["level_index"], g["node_depth"]) for g in got] == [e["key"] for e in expected]
    for g, e in zip(got, expected):
        for col in ("max_guesses", "least_survival_scope"):
            assert g[col] == e[col], (e["key"], col)
        for col in ("least_survival", "mean_guesses", "win_rate", "mean_survival"):
            assert g[col] == approx(e[col]), (e["key"], col)
        assert g["win_rate_ci_low"] <= g["win_rate"] <= g["win_rate_ci_high"]
        assert g["mean_survival_ci_low"] <= g["mean_survival"] <= g["mean_survival_ci_high"]
        # a board won without a guess survives with certainty; a guess is never certain
        assert g["no_guess_share"] == approx(sum(b["forced_guesses"] == 0 for b in rows[e["key"]]) / N)
    # the fixture's fog row sets min_mean_survival 0.99: its verdict is the report's, the others have none
    by_key = {(g["level_index"], g["node_depth"]): g for g in got}
    assert by_key[(2, 0)]["min_mean_survival"] == 0.99
    assert by_key[(2, 0)]["assertion_f"] == (by_key[(2, 0)]["mean_survival"] >= 0.99)
    assert all(g["assertion_f"] is None for k, g in by_key.items() if k != (2, 0))
    assert any(g["mean_guesses"] > 0 for g in got)  # the fixture has rows that need guesses



def test_moved_since_last_week(wh):
    """Query 14 against the history's records and the reports, read here: the
    two rows edited since their earlier versions (dated HISTORY_AGE back, inside
    the week) are held against those versions, the largest move first."""
    got = wh.query("moved-since-last-week")
    cutoff = datetime.now(UTC) - timedelta(days=7)
    expected = []
    for r in wh.reports:
        key = (r["level_index"], r["node_depth"])
        versions = sorted((h for h in wh.history if (h["level_index"], h["node_depth"]) == key),
                          key=lambda h: h["published_at"])
        before = [h for h in versions if h["published_at"] < cutoff]
        then = before[-1] if before else versions[0]
        if then["batch_fingerprint"] == r["batch_fingerprint"]:
            continue
        moves = (r["p10"] - then["p10"], r["passed"] / r["samples"] - then["pass_rate"], r["win_rate"] - then["win_rate"])
        expected.append((key, max(abs(m) for m in moves), moves, then))
    expected.sort(key=lambda e: (-e[1], e[0]))
    assert sorted(e[0] for e in expected) == sorted(EARLIER)  # every other row is as it was
    assert [(g["level_index"], g["node_depth"]) for g in got] == [e[0] for e in expected]
    for g, (key, moved, (p10, pass_rate, win_rate), then) in zip(got, expected):
        assert g["moved"] == approx(moved) and g["p10_change"] == approx(p10)
        assert g["pass_rate_change"] == approx(pass_rate) and g["win_rate_change"] == approx(win_rate)
        assert g["then_published_at"] == then["published_at"] and g["then_before_since"] is False
        assert g["row_edited"] is True
    # a cutoff after the earlier versions: they are now the rows' newest versions before it
    sql = doc_queries()["moved-since-last-week"].replace("interval 7 day", "interval 1 day")
    con = duckdb.connect(str(wh.root / datasets.DB_NAME), read_only=True)
    try:
        day = con.execute(sql).fetchall()
        names = [d[0] for d in con.description]
    finally:
        con.close()
    day = [dict(zip(names, row)) for row in day]
    assert [(d["level_index"], d["node_depth"], d["then_published_at"]) for d in day] == \
        [(g["level_index"], g["node_depth"], g["then_published_at"]) for g in got]
    assert all(d["then_before_since"] is True for d in day)
