"""``boardgen curve`` and ``boardgen diff`` as a person and a CI job run them
(docs/review.md): bad input in one sentence with its exit code and nothing
written; the outputs (80 columns, a markdown comment within GitHub's limit,
a self-contained page, the JSON schema); ``--save`` and its view; exit codes."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from boardgen_pipeline import cli
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.review import curve, render
from boardgen_pipeline.warehouse import datasets, views

from .review_support import calibrate, copy_tables, set_field

SAMPLES = 32


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """A repository whose first commit has no tables and whose second has the
    repo's tables; the working tables then edit row (1,1) so that A and A' fail."""
    repo = tmp_path_factory.mktemp("repo")
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("no tables yet\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    copy_tables(repo / "tables")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "tables")
    set_field(repo / "tables" / "board_gen.toml", (1, 1), "r0_max_cap", 40)
    return repo


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("warehouse")
    return calibrate(copy_tables(base / "tables"), base / "warehouse", SAMPLES)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv, code, said", [
    (["diff", "no-such-rev", "--tables", "{repo}/tables"], Exit.INPUT,
     "BASE 'no-such-rev': unknown git revision in {repo}"),
    (["diff", "HEAD~1", "--tables", "{repo}/tables"], Exit.INPUT,
     "BASE 'HEAD~1' (commit "),
    (["diff", "HEAD", "--tables", "{repo}/tables", "--margin", "win_rate=-0.1"], Exit.USAGE,
     "--margin = 'win_rate=-0.1'"),
    (["diff", "HEAD", "--tables", "{repo}/tables", "--margin", "winrate=0.1"], Exit.USAGE,
     "boardgen diff: row -: field --margin = 'winrate=0.1': [unknown_figure] unknown figure 'winrate': did you mean "
     "win_rate?"),
    (["diff", "HEAD", "--tables", "{repo}/tables", "--margin", "mean_guesess=0.1"], Exit.USAGE,
     "--margin = 'mean_guesess=0.1': [unknown_figure] unknown figure 'mean_guesess': did you mean mean_guesses?\n"),
    (["diff", "HEAD", "--tables", "{repo}/tables", "--margin", "mean_guesses"], Exit.USAGE,
     "--margin = 'mean_guesses': [argument_domain] must be FIGURE=VALUE, e.g. mean_guesses=0.1"),
    (["diff", "HEAD", "--tables", "{repo}/tables", "--alpha", "0"], Exit.USAGE, "--alpha = 0.0"),
])
def test_bad_input_is_one_sentence_an_exit_code_and_nothing_written(repo, tmp_path, capsys, argv, code, said):
    out, root = tmp_path / "diff.md", tmp_path / "warehouse"
    argv = [a.format(repo=repo) for a in argv] + ["--output", out, "--warehouse", root, "--save"]
    got, stdout, stderr = run(capsys, *argv)
    assert got == code and stdout == ""
    assert said.format(repo=repo) in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == (1 if code == Exit.INPUT else 2)  # USAGE: the count, then the one violation
    assert "Traceback" not in stderr
    assert not out.exists() and not root.exists()
    if "HEAD~1" in argv:
        assert "has no tables/board_gen.toml" in stderr


def test_diff_of_a_revision_against_the_working_tables(repo, tmp_path, capsys):
    """HEAD against the working tables: read with git show, no checkout touched;
    the worse verdicts make it exit 3 and lead every output."""
    status = git(repo, "status", "--porcelain")
    files = {f: tmp_path / f"diff{f}" for f in (".md", ".html", ".json", ".txt")}
    code, stdout, stderr = run(capsys, "diff", "HEAD", "--tables", repo / "tables", "--samples", SAMPLES,
                               "--resamples", 199, *[x for f in files.values() for x in ("--output", f)])
    assert code == Exit.CHECK_FAILED
    assert git(repo, "status", "--porcelain") == status  # nothing of the checkout changed
    assert all(len(line) <= 80 for line in stdout.splitlines()), max(stdout.splitlines(), key=len)
    assert stdout.index("(1,1) A: pass -> FAIL") < stdout.index("(1,1) modified")
    assert files[".txt"].read_text() == stdout
    md = files[".md"].read_text()
    assert md.index("F4 verdict changes") < md.index("Flagged changes") < md.index("<details>")
    assert "| (1,1) | A | pass | **FAIL** | worse |" in md and len(md) <= render.COMMENT_LIMIT
    page = files[".html"].read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|file:)""", page)  # self-contained
    assert page.count("<h3>level ") == 3
    data = json.loads(files[".json"].read_text())
    assert data["schema"] == "boardgen.calibration_diff/1" and data["base"]["kind"] == "git"
    assert data["counts"]["modified"] == 1 and data["counts"]["identical"] == 14
    row = next(r for r in data["rows"] if r["key"] == "1-1")
    assert set(row) >= {"key", "state", "flagged", "verdict_changes", "figures"} and row["state"] == "modified"
    assert {"assertion": "A", "base": True, "head": False, "worse": True, "warning": False} in row["verdict_changes"]
    for name, figure in row["figures"].items():
        assert {"base", "head", "delta", "ci", "p", "q"} <= set(figure), name
    assert {"b", "c"} <= set(row["figures"]["win_rate"]) and "b" not in row["figures"]["mean_attempts"]
    identical = next(r for r in data["rows"] if r["key"] == "2-2")
    assert identical["state"] == "identical" and identical["figures"] == {}


def test_markdown_past_the_limit_says_so_and_points_to_the_full_report(repo, capsys):
    from boardgen_pipeline.review import diff, sources

    tables = repo / "tables"
    base = sources.resolve("HEAD", "BASE", tables, None)
    head = sources.from_folder(tables, "HEAD")
    result = diff.compare(base, head, diff.Settings(samples=SAMPLES, resamples=199))
    whole = render.markdown(result, "https://ci.example/run/1")
    cut = render.markdown(result, "https://ci.example/run/1", limit=len(whole) - 200)
    assert len(cut) <= len(whole) - 200 and "The comment stops here: 1 row more would exceed" in cut
    assert "The full report: https://ci.example/run/1" in cut
    assert cut.index("F4 verdict changes") < cut.index("Flagged changes")  # the head survives the cut
    assert "The comment stops here" not in whole
    # a limit the verdict changes alone exceed: the comment keeps its head, and says what it leaves out
    limit = len(whole.split("| (1,1) | A' |")[0]) + render.RESERVE + len("\n".join(render.LEGEND)) + 5
    tight = render.markdown(result, "", limit=limit)
    assert len(tight) <= limit
    assert "| (1,1) | A |" in tight and "| (1,1) | A' |" not in tight
    assert re.search(r"stops here: 1 verdict change, \d+ flagged changes?, 1 row more would exceed", tight)
    assert "</details>" not in tight and "--format html` or `--format json`" in tight


def test_save_writes_the_calibration_diff_view_and_fail_on_flagged(warehouse, tmp_path, capsys):
    tables = copy_tables(tmp_path / "tables")
    set_field(tables / "board_gen.toml", (3, 0), "mine_density", 0.24)
    code, stdout, stderr = run(capsys, "diff", "@warehouse", "--tables", tables, "--warehouse", warehouse,
                               "--samples", SAMPLES, "--resamples", 199, "--save", "--format", "json")
    assert code == Exit.OK  # no verdict worse
    data = json.loads(stdout)
    flagged = data["counts"]["flagged_rows"]
    assert data["base"]["kind"] == "warehouse" and flagged == 1
    assert "saved:" in stderr
    con = views.connect(warehouse)
    try:
        rows = con.sql("select key, state, figure, flagged, delta, q, beyond_margin, p_test, p_interval "
                       "from calibration_diff order by key, figure").fetchall()
    finally:
        con.close()
    assert {r[0] for r in rows} == {r["key"] for r in data["rows"]}
    win = next(r for r in rows if r[0] == "3-0" and r[2] == "win_rate")
    figure = next(r for r in data["rows"] if r["key"] == "3-0")["figures"]["win_rate"]
    assert win[3] == figure["flagged"] and win[4] == pytest.approx(figure["delta"]) and win[5] == pytest.approx(figure["q"])
    # the flag's reading and both p-values it is the larger of, as the JSON gives them
    assert win[6] == figure["beyond_margin"] and win[7] == pytest.approx(figure["p_test"])
    assert win[8] == pytest.approx(figure["p_interval"])
    assert datasets.file_problem(warehouse, datasets.flat_path(warehouse, "calibration_diff", "last")) is None
    code, _, _ = run(capsys, "diff", "@warehouse", "--tables", tables, "--warehouse", warehouse, "--samples", SAMPLES,
                     "--resamples", 199, "--fail-on", "flagged")
    assert code == Exit.CHECK_FAILED


def test_curve_export_reads_the_warehouse_alone(warehouse, tmp_path, capsys):
    code, stdout, _ = run(capsys, "curve", "--warehouse", warehouse)
    assert code == 0
    header, *lines = stdout.strip().splitlines()
    assert header.split(",") == list(curve.COLUMNS) and len(lines) == 15
    records = curve.records(warehouse)
    con = duckdb.connect()
    try:  # the core's percentiles are the boards' own, numpy's interpolation
        got = con.execute("select quantile_cont(coalesce(inferability_core, inferability), 0.1) from read_parquet(?)",
                          [str(datasets.partition_path(warehouse, "boards", (2, 3)))]).fetchone()[0]
    finally:
        con.close()
    row = next(r for r in records if r["key"] == "2-3")
    assert row["inferability_core_p10"] == pytest.approx(got) and row["boss_row"] is False
    assert row["no_guess_share_ci_low"] <= row["no_guess_share"] <= row["no_guess_share_ci_high"]
    assert row["mean_guesses_ci_low"] <= row["mean_guesses"] <= row["mean_guesses_ci_high"]
    assert next(r for r in records if r["key"] == "2-4")["boss_row"] is True
    for fmt in ("json", "parquet", "html"):
        out = tmp_path / f"curve.{fmt}"
        assert run(capsys, "curve", "--warehouse", warehouse, "--format", fmt, "--output", out)[0] == 0
    assert json.loads((tmp_path / "curve.json").read_text())[0]["key"] == "1-0"
    assert pq.read_table(tmp_path / "curve.parquet").num_rows == 15
    # every panel of every level, but the fog's two on level 1, which has no fog
    assert not curve.has_fog(curve.levels(records)[1]) and curve.has_fog(curve.levels(records)[2])
    assert (tmp_path / "curve.html").read_text().count("<svg") == 3 * len(curve.PANELS) - 2
    code, stdout, _ = run(capsys, "curve", "--warehouse", warehouse, "--format", "png", "--output", tmp_path / "png")
    assert code == 0 and sorted(p.name for p in (tmp_path / "png").iterdir()) == [
        "curve_level_1.png", "curve_level_2.png", "curve_level_3.png"]
    assert (tmp_path / "png" / "curve_level_1.png").read_bytes()[:4] == b"\x89PNG"


def test_curve_of_an_empty_warehouse_is_one_sentence(tmp_path, capsys):
    code, stdout, stderr = run(capsys, "curve", "--warehouse", tmp_path / "none")
    assert code == Exit.INPUT and stdout == "" and "no calibration report in" in stderr
    assert not (tmp_path / "none").exists()


def test_exits_that_move_while_a_category_stays_put_are_flagged_through_the_command_line(tmp_path, capsys):
    """Issue 51, end to end. Row (1,0), target 0.99: one attempt fewer (4 -> 3)
    moves boards from best_legal to least_bad while most boards stay passed.
    Row (1,1): its target raised to 0.99 moves boards from passed to best_legal
    while every least_bad board stays least_bad (the target decides no
    legality): a category boards take but never leave nor enter, which made
    Stuart-Maxwell's covariance singular and the exits read "p = 1". Both rows'
    exits are flagged, with p below 0.001 (256 boards a row, the default)."""
    base, head = copy_tables(tmp_path / "base"), copy_tables(tmp_path / "head")
    for tables in (base, head):
        set_field(tables / "board_gen.toml", (1, 0), "inferability_target", 0.99)
        set_field(tables / "board_gen.toml", (1, 0), "max_gen_attempts", 4)
        set_field(tables / "board_gen.toml", (1, 1), "max_gen_attempts", 3)
    set_field(head / "board_gen.toml", (1, 0), "max_gen_attempts", 3)
    set_field(head / "board_gen.toml", (1, 1), "inferability_target", 0.99)
    out = tmp_path / "diff.json"
    code, stdout, _ = run(capsys, "diff", base, "--tables", head, "--resamples", 199, "--output", out)
    assert code == Exit.OK, stdout  # A and A' fail in both versions: no verdict gets worse
    rows = {r["key"]: r for r in json.loads(out.read_text())["rows"]}
    moved = rows["1-0"]["figures"]["exits"]
    assert moved["flagged"] and moved["p"] < 0.001 and moved["q"] < 0.001
    assert moved["delta"]["least_bad"] > 0.05 and moved["head"]["passed"] > 0.4  # most boards stay passed
    put = rows["1-1"]["figures"]["exits"]
    assert put["delta"]["least_bad"] == 0.0 and put["base"]["least_bad"] > 0.2  # taken, never left nor entered
    assert put["flagged"] and put["p"] < 0.001 and put["untested"] is None
    assert put["beyond_margin"] is None and put["flag_reading"].startswith("no interval")
    exits = [line for line in stdout.splitlines() if line.lstrip().startswith("exits")]
    assert len(exits) == 2 and all(line.split()[1] == "*?" for line in exits)  # flagged, no interval to clear
    assert "*? flagged, but interval reaches inside the margin" in stdout
