"""The history of every calibration: each published report
version of a row is kept, once per distinct content, and read back through
``boardgen history --row L,D`` and the DuckDB view ``calibration_history``.

Real calibrations throughout (``boardgen calibrate`` on a copy of the
pipeline's ``small`` fixture, N = 8, the copy edited between runs), and once
through the Dagster pipeline. A version file with a flipped byte is found by
``boardgen verify`` and left out of the trajectory; pruning a row keeps its
history; ``--row`` of an unknown or never calibrated row is one sentence."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import numpy as np
import pyarrow.parquet as pq
import pytest

from boardgen_pipeline.steps import history
from boardgen_pipeline.warehouse import datasets, publish, views
from boardgen_pipeline.words import rounded

from .test_cli_args import run
from .test_pipeline_support import copy_fixture, defs_for, materialize_graph, run_rows, run_validate

N = 8
ROW = (1, 0)
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ  (?P<version>[0-9a-f]{16})  (?P<rest>.*)$")


def edit(tables: Path, key: tuple[int, int], field: str, value) -> None:
    """Set one field of one row of the copied board_gen.toml."""
    path = tables / "board_gen.toml"
    blocks = path.read_text().split("[[rows]]")
    for i, block in enumerate(blocks):
        if f"level_index = {key[0]}\n" in block and re.search(rf"node_depth = {key[1]}\b", block):
            blocks[i], n = re.subn(rf"(?m)^{field} = .*$", f"{field} = {value}", block)
            assert n == 1, (key, field)
            break
    else:
        raise AssertionError(f"row {key} not found")
    path.write_text("[[rows]]".join(blocks))


def calibrate(tables: Path, root: Path, rows: str = "1,0") -> None:
    code, out, err = run("calibrate", "--tables", str(tables), "--warehouse", str(root), "--rows", rows,
                         "--samples", str(N), "--workers", "1")
    assert code == 0, out + err


def version_files(root: Path, key=ROW) -> dict[str, bytes]:
    folder = datasets.partition_dir(root, history.DATASET, key)
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.parquet"))}


def history_lines(root: Path, key=ROW, tables: Path | None = None) -> tuple[list[re.Match], str, str]:
    argv = ["history", "--row", f"{key[0]},{key[1]}", "--warehouse", str(root)]
    code, out, err = run(*argv, *(["--tables", str(tables)] if tables else []))
    assert code == 0, out + err
    return [m for m in map(LINE.match, out.splitlines()) if m], out, err


def sql(root: Path, query: str) -> list[dict]:
    code, out, err = run("sql", query, "--warehouse", str(root), "--format", "json")
    assert code == 0, out + err
    return json.loads(out)


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    """Row (1,0) calibrated, edited twice (recalibrated after each edit), then
    rerun unchanged; row (2,0) calibrated once. ``files``: the version files
    of (1,0) before the rerun."""
    base = tmp_path_factory.mktemp("history")
    tables, root = copy_fixture("small", base), base / "warehouse"
    calibrate(tables, root, "1,0 2,0")
    edit(tables, ROW, "mine_density", 0.23)
    calibrate(tables, root)
    edit(tables, ROW, "inferability_target", 0.9)
    calibrate(tables, root)
    files = version_files(root)
    calibrate(tables, root)  # the rerun
    return tables, root, files


def test_two_edits_and_a_rerun_give_three_versions_in_order(edited):
    tables, root, before_rerun = edited
    lines, out, _ = history_lines(root)
    assert len(lines) == 3 and out.startswith("row (1,0): 3 versions in ")
    assert [m["rest"].split("  ")[0] for m in lines] == [
        "first version", "mine_density 0.21->0.23", "inferability_target 0.85->0.9"]
    assert lines[-1]["rest"].endswith("<- current report") and "<- current" not in "".join(
        m["rest"] for m in lines[:-1])
    assert "the row's current report is the newest version" in out

    # the same three through the view, in the same order, with the parameters each was run with
    got = sql(root, "select version, mine_density, inferability_target, published_at, samples "
                    "from calibration_history where level_index = 1 and node_depth = 0 order by published_at")
    assert [g["version"] for g in got] == [m["version"] for m in lines]
    assert [(g["mine_density"], g["inferability_target"]) for g in got] == [(0.21, 0.85), (0.23, 0.85), (0.23, 0.9)]
    assert len({g["published_at"] for g in got}) == 3 and all(g["samples"] == N for g in got)
    assert sql(root, "select level_index, node_depth, count(*) as n from calibration_history "
                     "group by all order by all") == [
        {"level_index": 1, "node_depth": 0, "n": 3}, {"level_index": 2, "node_depth": 0, "n": 1}]

    # the newest version is the row's current report, read back from its file: same name, same figures
    report = publish.read_partition(root, "calibration_report", ROW)[0]
    assert history.version_of(report)["version"] == lines[-1]["version"]
    con = views.connect(root)  # full floats (the CLI's JSON rounds them to 10 digits)
    try:
        cur = con.execute("select * from calibration_history where version = ?", [lines[-1]["version"]])
        newest = dict(zip([d[0] for d in cur.description], cur.fetchone()))
    finally:
        con.close()
    for name in ("p10", "p50", "p90", "passed", "retry_rate", "green", "assertion_a", "bbbv_p50", "mine_density",
                 "row_fingerprint", "batch_fingerprint"):
        assert newest[name] == report[name], name
    assert newest["pass_rate"] == report["passed"] / N


def test_a_rerun_of_an_unchanged_row_adds_nothing_and_rewrites_nothing(edited):
    _, root, before_rerun = edited
    assert len(before_rerun) == 3
    assert version_files(root) == before_rerun  # same files, same bytes: first publication times kept


def test_a_row_set_back_meets_its_earlier_version(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    calibrate(tables, root)
    edit(tables, ROW, "mine_density", 0.23)
    calibrate(tables, root)
    edit(tables, ROW, "mine_density", 0.21)  # back as it was
    calibrate(tables, root)
    lines, out, _ = history_lines(root)
    assert len(lines) == 2 and len(version_files(root)) == 2
    assert lines[0]["rest"].endswith("<- current report") and not lines[1]["rest"].endswith("<- current report")
    assert "the row was set back to it" in out


def test_an_edit_of_another_row_adds_no_version():
    """What the report holds besides the row's own content (the Boss flag,
    the table-wide monotone warnings, the advisor's search) does not name a
    version: a row added deeper in the level changes none of this row's."""
    record = dict(GOLDEN_RECORD)
    same = {**record, "boss_row": True, "monotone_warnings": 2, "advice_status": "thin", "advice_density": 0.2}
    assert history.version_of(same) == history.version_of(record)
    assert history.version_of({**record, "mine_density": 0.22})["version"] != history.version_of(record)["version"]


# A fixed report record: its version must not change while the content is the same (a changed digest
# would make every row's next publication a new version).
GOLDEN_RECORD = {
    "samples": 8, "inferability_target": 0.85, "p10": 0.9766791303143609, "p50": 1.0, "p90": 1.0,
    "passed": 8, "best_legal": 0, "least_bad": 0, "retry_rate": 0.625, "mean_attempts": 2.75,
    "below_target": 0, "illegal": 0, "assertion_a": True, "assertion_a2": True, "assertion_a1": True,
    "assertion_b": None, "assertion_b1": True, "green": True,
    "bbbv_p10": 20.0, "bbbv_p50": 24.5, "bbbv_p90": 30.0, "bbbv_per_safe_p10": 0.25, "bbbv_per_safe_p50": 0.3,
    "bbbv_per_safe_p90": 0.37, "subset_steps_p10": 0.0, "subset_steps_p50": 1.0, "subset_steps_p90": 3.0,
    "solve_rounds_p50": 4.0, "solvable_full_logic_share": 1.0,
    "board_width": 10, "board_height": 10, "mine_density": 0.21, "r0_max_cap": 50, "max_gen_attempts": 32,
    "min_safe_count": 40, "shave_ring_radius": 1, "board_type": "dungeon", "fog_region_count": 0,
    "fog_target_ratio": 0.0, "row_fingerprint": "583b727d0a1c", "batch_fingerprint": "9f1e2d3c4b5a",
    "metric_version": 1,
}
GOLDEN_VERSION = "c43a309cfa10c031"
# The same row's report as metric version 2 writes it: the perfect player's figures beside
FAIRNESS = {"fairness_boards": 8, "fairness_not_analysed": 0, "no_guess_share": 0.75, "mean_guesses": 0.25,
            "win_rate": 0.875, "win_rate_ci_low": 0.5291, "win_rate_ci_high": 0.9776, "mean_survival": 0.9,
            "mean_survival_ci_low": 0.5958, "mean_survival_ci_high": 0.9821, "mean_first_guess_p_safe": 0.6,
            "assertion_f": None}
GOLDEN_VERSION_2 = "0597759fe688e358"


def test_a_column_added_later_names_a_version_only_where_it_holds_a_value():
    """Versions kept before the perfect player keep their names (its columns are null
    there); a report that has them is another version, pinned."""
    assert history.version_of({**GOLDEN_RECORD, **dict.fromkeys(FAIRNESS)})["version"] == GOLDEN_VERSION
    v2 = history.version_of({**GOLDEN_RECORD, "metric_version": 2, **FAIRNESS})
    assert v2["version"] == GOLDEN_VERSION_2 and v2["mean_survival"] == 0.9
    assert history.version_of({**GOLDEN_RECORD, "metric_version": 2, **FAIRNESS, "mean_survival": 0.91})[
        "version"] != GOLDEN_VERSION_2


def test_a_version_is_named_by_its_content_alone_and_survives_a_round_trip(tmp_path):
    v = history.version_of(GOLDEN_RECORD)
    assert v["version"] == GOLDEN_VERSION
    assert v["pass_rate"] == 1.0 and v["metric_version"] == 1
    # a worker's numpy numbers name the same version as plain ones
    numpy_record = {**GOLDEN_RECORD, "p10": np.float64(GOLDEN_RECORD["p10"]), "passed": np.int64(8),
                    "green": np.bool_(True), "board_width": np.int64(10)}
    assert history.version_of(numpy_record) == v
    # written and read back: the record in the file names the version it is kept under
    t0 = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    path = history.keep(tmp_path, ROW, v, now=t0)
    assert path.name == f"{GOLDEN_VERSION}.parquet"
    [back] = pq.read_table(path).to_pylist()
    assert back["published_at"] == t0
    assert history.version_of(back) == v
    assert history.keep(tmp_path, ROW, v, now=datetime(2027, 1, 1, tzinfo=UTC)) is None
    assert pq.read_table(path).to_pylist()[0]["published_at"] == t0  # published_at: the first publication
    assert publish.verify(tmp_path) == []  # written with its digest, like every warehouse file


def _flip_a_byte_that_still_reads(path: Path) -> None:
    """Flip one byte of ``path`` so that Parquet still reads it (the case only
    the digest catches)."""
    data = path.read_bytes()
    for offset in range(len(data) // 2, len(data) - 8):
        damaged = bytearray(data)
        damaged[offset] ^= 0x01
        path.write_bytes(bytes(damaged))
        try:
            pq.read_table(path).to_pylist()
            return
        except (OSError, ValueError):
            continue
    raise AssertionError(f"no byte of {path} flips into a readable file")


def test_a_version_file_with_a_flipped_byte_is_found_and_never_served(edited, tmp_path):
    import shutil

    root = tmp_path / "warehouse"
    shutil.copytree(edited[1], root)
    lines, _, _ = history_lines(root)
    middle = datasets.partition_dir(root, history.DATASET, ROW) / f"{lines[1]['version']}.parquet"
    _flip_a_byte_that_still_reads(middle)

    code, out, err = run("verify", "--warehouse", str(root))
    assert code == 5 and f"damaged: {middle}: digest mismatch" in out
    assert "1 of them calibration history version, which no run makes again" in err

    damaged, out, err = history_lines(root)
    assert [m["version"] for m in damaged] == [lines[0]["version"], lines[2]["version"]]
    assert out.startswith("row (1,0): 2 versions")
    assert err.strip() == f"left out: {middle}: digest mismatch (the file changed after it was written) " \
                          "(`boardgen verify` lists every damaged file)"
    path = history.trajectory(root, ROW)
    assert [p for p, _ in path.damaged] == [middle]

    # moved aside (publish.quarantine), the version the manifest vouches for is missing, not silently gone
    publish.quarantine(root, [middle])
    path = history.trajectory(root, ROW)
    assert path.damaged == [(middle, "missing")] and len(path.versions) == 2


def test_a_damaged_file_of_the_current_version_is_rewritten_by_its_next_publication(tmp_path):
    v = history.version_of(GOLDEN_RECORD)
    path = history.keep(tmp_path, ROW, v, now=datetime(2026, 1, 1, tzinfo=UTC))
    _flip_a_byte_that_still_reads(path)
    assert publish.verify(tmp_path) != []
    t1 = datetime(2026, 2, 1, tzinfo=UTC)
    assert history.keep(tmp_path, ROW, v, now=t1) == path
    assert publish.verify(tmp_path) == []
    [again] = history.trajectory(tmp_path, ROW).versions
    assert again["published_at"] == t1 and history.version_of(again) == v


def test_pruning_a_row_that_left_the_table_keeps_its_history(edited, tmp_path):
    import shutil

    root = tmp_path / "warehouse"
    shutil.copytree(edited[1], root)
    kept = version_files(root)
    removed = publish.prune(root, keep={(2, 0)})
    assert "calibration_report/(1,0)" in removed and not any("history" in r for r in removed)
    assert version_files(root) == kept
    lines, out, _ = history_lines(root)
    assert len(lines) == 3 and "no current report: the row is not published now" in out
    assert not any(m["rest"].endswith("<- current report") for m in lines)
    views.refresh_views_atomic(root)
    assert len(sql(root, "select * from calibration_history where level_index = 1")) == 3


def test_views_without_history_have_no_history_view_and_sql_says_so_in_one_line(tmp_path):
    root = tmp_path / "warehouse"
    datasets.write_partition(root, "calibration_report", ROW, [{"p10": 0.9}])
    (root / history.DATASET).mkdir()  # a folder with no version (e.g. only its lock)
    assert "calibration_history" not in views.view_statements(root)
    views.refresh_views_atomic(root)
    code, out, err = run("sql", "select * from calibration_history", "--warehouse", str(root))
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1 and "calibration_history" in err
    history.keep(root, ROW, history.version_of(GOLDEN_RECORD))
    assert "calibration_history" in views.view_statements(root)


def test_history_of_an_unknown_or_uncalibrated_row_is_one_sentence(edited):
    tables, root, _ = edited
    cases = {
        ("7,1",): r"error: --row: no row \(7,1\) in .*board_gen\.toml, and no history of it in .*",
        ("1,1",): r"error: row \(1,1\) has no published report version in .*: it was never calibrated, or every "
                  r"batch was rejected by assertion A' \(`boardgen calibrate --rows 1,1`\)",
    }
    for (row,), pattern in cases.items():
        code, out, err = run("history", "--row", row, "--warehouse", str(root), "--tables", str(tables))
        assert code == 1 and out == "", row
        assert len(err.strip().splitlines()) == 1 and re.fullmatch(pattern, err.strip()), err
        assert "Traceback" not in err
    code, out, err = run("history", "--row", "1,0", "--warehouse", str(root.parent / "nowhere"))
    assert code == 1 and err.strip() == (f"error: no calibration history in {root.parent / 'nowhere'}: run "
                                         "`boardgen calibrate` (or `make run`) first")
    assert not (root.parent / "nowhere").exists()


# ------------------------------------------------------------------- through the Dagster pipeline


def test_the_pipeline_keeps_the_same_history(tmp_path):
    """The calibration job, as the sensor runs it after each edit: two edits
    and a rerun of row (1,0) give three versions; setting the row back adds
    none. The report's key figures travel as numbers the UI plots."""
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    defs = defs_for(tables, root, samples=N)

    def rerun():
        assert run_validate(defs, instance).success
        result = run_rows(defs, instance, ["1-0"])
        assert result.success
        return result

    with dg.instance_for_test() as instance:
        materialize_graph(defs, instance)
        edit(tables, ROW, "mine_density", 0.23)
        rerun()
        edit(tables, ROW, "inferability_target", 0.9)
        rerun()
        files = version_files(root)
        result = rerun()
        assert version_files(root) == files and len(files) == 3
        edit(tables, ROW, "mine_density", 0.21)
        edit(tables, ROW, "inferability_target", 0.85)
        rerun()
        assert version_files(root) == files

    lines, out, _ = history_lines(root, tables=tables)
    assert [m["rest"].split("  ")[0] for m in lines] == [
        "first version", "mine_density 0.21->0.23", "inferability_target 0.85->0.9"]
    assert lines[0]["rest"].endswith("<- current report") and "set back" in out
    got = sql(root, "select level_index, node_depth, version from calibration_history order by published_at")
    assert [(g["level_index"], g["node_depth"]) for g in got].count((1, 0)) == 3 and len(got) == 5

    # the third run's boards materialization: the row's key figures as plain numbers the UI plots by
    # partition, those of the newest version
    [report] = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == "boards"]
    entries = report.materialization.metadata
    newest = history.trajectory(root, ROW).versions[-1]
    for name in ("p10", "p50", "p90", "pass_rate", "retry_rate"):
        assert isinstance(entries[name], dg.FloatMetadataValue), name
        # rounded for reading (words.rounded); the history keeps the figure whole
        assert entries[name].value == rounded(newest[name]) and entries[name].value == pytest.approx(newest[name], rel=1e-3)


def test_the_parameters_a_version_and_a_report_carry_are_the_tables_in_their_order():
    """One list of the row's reported parameters (``board_gen.REPORTED_PARAMETERS``):
    the history's typed columns and the report's columns are read
    from it, in the order and with the types they had when each was a copy
    (the files and views of an existing warehouse keep their schema)."""
    from boardgen_pipeline.calibration import report
    from boardgen_pipeline.tables.board_gen import REPORTED_PARAMETERS, BoardGenRow

    assert [(name, str(kind)) for name, kind in history.PARAMETERS.items()] == [
        ("board_width", "int64"), ("board_height", "int64"), ("mine_density", "double"),
        ("inferability_target", "double"), ("r0_max_cap", "int64"), ("max_gen_attempts", "int64"),
        ("min_safe_count", "int64"), ("shave_ring_radius", "int64"), ("board_type", "string"),
        ("fog_region_count", "int64"), ("fog_target_ratio", "double")]
    assert report.TABLE_PARAMETERS == ("board_width", "board_height", "mine_density", "r0_max_cap",
                                       "max_gen_attempts", "min_safe_count", "shave_ring_radius", "board_type",
                                       "fog_region_count", "fog_target_ratio")
    assert set(REPORTED_PARAMETERS) <= set(BoardGenRow.model_fields)
