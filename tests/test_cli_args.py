"""Every command-line argument is checked against its domain before any
work: exit code 2, one violation line per bad argument in the
table-violation style, nothing read or written, no traceback; ``--help``
states every option's default."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from boardgen_pipeline import cli
from boardgen_pipeline.board.rng import DEPTH_SPACING, sigma
from boardgen_pipeline.calibration.advisor import PROBE_OFFSET
from boardgen_pipeline.cli_args import check_bench, check_command, check_nightly
from boardgen_pipeline.tables.board_gen import load_board_gen_dir

REPO = Path(__file__).resolve().parent.parent
BENCH = ["bench", "--width", "10", "--height", "10", "--density", "0.25", "--target", "0.95", "--cap", "45",
         "--attempts", "16", "--boards", "1"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def with_option(argv: list[str], option: str, value: str) -> list[str]:
    out = list(argv)
    out[out.index(option) + 1] = value
    return out


CASES = {
    # the reported bad arguments (and their neighbours): argv, (field, value) reported
    "generate --seed -1": (["generate", "--level", "1", "--depth", "0", "--seed", "-1"], ("--seed", "-1")),
    "generate --master-seed -1": (["generate", "--level", "1", "--depth", "0", "--seed", "1", "--master-seed", "-1"],
                                  ("--master-seed", "-1")),
    "generate --level 0": (["generate", "--level", "0", "--depth", "0", "--seed", "1"], ("--level", "0")),
    "generate --depth -1": (["generate", "--level", "1", "--depth", "-1", "--seed", "1"], ("--depth", "-1")),
    "nodemap draw --seed -1": (["nodemap", "draw", "--seed", "-1"], ("--seed", "-1")),
    "calibrate --samples 0": (["calibrate", "--samples", "0"], ("--samples", "0")),
    "calibrate --samples 4097": (["calibrate", "--samples", "4097"], ("--samples", "4097")),
    "calibrate --master-seed -5": (["calibrate", "--master-seed", "-5"], ("--master-seed", "-5")),
    "calibrate --rows 1": (["calibrate", "--rows", "1"], ("--rows", "'1'")),
    "calibrate --rows 0,0": (["calibrate", "--rows", "1,0 0,0"], ("--rows", "'0,0'")),
    "calibrate --workers 0": (["calibrate", "--workers", "0"], ("--workers", "0")),
    "calibrate --dask no-port": (["calibrate", "--dask", "tcp://scheduler"], ("--dask", "'tcp://scheduler'")),
    "advise --samples 4097": (["advise", "--samples", "4097"], ("--samples", "4097")),
    "advise --probes 2049": (["advise", "--probes", "2049"], ("--probes", "2049")),
    "advise --probes 0": (["advise", "--probes", "0"], ("--probes", "0")),
    "history --row x": (["history", "--row", "x"], ("--row", "'x'")),
    "history --row of two rows": (["history", "--row", "1,0 2,4"], ("--row", "'1,0 2,4'")),
    "history --row 2,-1": (["history", "--row", "2,-1"], ("--row", "'2,-1'")),
    "validate --tables missing": (["validate", "--tables", "/no/such/tables"], ("--tables", "'/no/such/tables'")),
    "bench --density 2": (with_option(BENCH, "--density", "2"), ("--density", "2.0")),
    "bench --density 0": (with_option(BENCH, "--density", "0"), ("--density", "0.0")),
    "bench --density nan": (with_option(BENCH, "--density", "nan"), ("--density", "nan")),
    "bench --width 0": (with_option(BENCH, "--width", "0"), ("--width", "0")),
    "bench --height 65": (with_option(BENCH, "--height", "65"), ("--height", "65")),
    "bench --attempts 0": (with_option(BENCH, "--attempts", "0"), ("--attempts", "0")),
    "bench --attempts 33": (with_option(BENCH, "--attempts", "33"), ("--attempts", "33")),
    "bench --target 0.5": (with_option(BENCH, "--target", "0.5"), ("--target", "0.5")),
    "bench --cap 51": (with_option(BENCH, "--cap", "51"), ("--cap", "51")),
    "bench --cap 8": (with_option(BENCH, "--cap", "8"), ("--cap", "8")),
    "bench --shave 3": (BENCH + ["--shave", "3"], ("--shave", "3")),
    "bench --boards 0": (with_option(BENCH, "--boards", "0"), ("--boards", "0")),
    "bench no mine": (with_option(BENCH, "--density", "0.001"), ("--density", "0.001")),
    "export --samples 0": (["export", "--godot", "godot_out", "--samples", "0"], ("--samples", "0")),
    "export --master-seed -1": (["export", "--godot", "godot_out", "--master-seed", "-1"], ("--master-seed", "-1")),
}


class WorkStarted(Exception):
    """Raised by the guard: a command began its work."""


def _no_work(*args, **kwargs):
    raise WorkStarted("work started before the arguments were checked")


def _guard(monkeypatch):
    """Make any work at all raise :class:`WorkStarted`: what each command calls
    first, by the name it calls it through. ``generate``, ``nodemap draw`` and
    ``advise`` read the table through ``load_board_gen_dir``, whose per-process
    cache other modules fill at import, so guarding ``load_board_gen`` alone
    never fires for them in a full run."""
    for target in ("boardgen_pipeline.tables.board_gen.load_board_gen",
                   "boardgen_pipeline.tables.board_gen.load_board_gen_dir",
                   "boardgen_pipeline.catalog.load_catalog",
                   "boardgen_pipeline.board.generator.generate",
                   "boardgen_pipeline.board.bench.bench",
                   "boardgen_pipeline.steps.history.of_row"):  # history reads the warehouse first
        monkeypatch.setattr(target, _no_work)


# One good command line for each command CASES tries: the guard must fire on each of them.
GOOD = {
    "generate": ["generate", "--level", "1", "--depth", "0", "--seed", "1"],
    "nodemap draw": ["nodemap", "draw", "--seed", "0"],
    "calibrate": ["calibrate", "--samples", "1"],
    "advise": ["advise", "--samples", "1", "--probes", "1"],
    "validate": ["validate", "--tables", str(REPO / "tables")],
    "bench": BENCH,
    "history": ["history", "--row", "1,0"],
    "export": ["export", "--godot", "godot_out"],
}


def _command(argv: list[str]) -> str:
    return argv[0] if argv[0] != "nodemap" else "nodemap draw"


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_argument_outside_its_domain_exits_2_with_a_violation_line(case, monkeypatch, tmp_path):
    argv, (field, value) = CASES[case]
    _guard(monkeypatch)  # any work at all would fail the test: no table read, no board generated
    monkeypatch.setenv("BOARDGEN_WAREHOUSE", str(tmp_path / "wh"))
    code, out, err = run(*argv)
    assert code == 2
    assert out == ""
    command = _command(argv)
    assert err.startswith("1 command-line violation:\n") or err.startswith("2 command-line violations:\n")
    assert f"  - boardgen {command}: row -: field {field} = {value}: [argument_domain] " in err
    assert "Traceback" not in err
    assert not (tmp_path / "wh").exists()


@pytest.mark.parametrize("command", sorted(GOOD))
def test_the_guard_fires_when_a_command_starts_its_work(command, monkeypatch, tmp_path):
    """The guard above proves something only if it can fire: with good
    arguments, and the table cache already filled as in a full run, each
    command's first piece of work raises it."""
    assert {_command(argv) for argv, _ in CASES.values()} == set(GOOD)
    load_board_gen_dir(REPO / "tables")  # filled, as other test modules leave it
    _guard(monkeypatch)
    monkeypatch.setenv("BOARDGEN_WAREHOUSE", str(tmp_path / "wh"))
    with pytest.raises(WorkStarted):
        run(*GOOD[command])
    assert not (tmp_path / "wh").exists()


def test_every_bad_argument_is_reported_at_once():
    code, _, err = run("bench", "--width", "0", "--height", "8", "--density", "2", "--target", "0.9", "--cap", "20",
                       "--attempts", "0", "--boards", "0")
    assert code == 2
    assert err.startswith("4 command-line violations:")
    for field in ("--width", "--density", "--attempts", "--boards"):
        assert f"field {field} = " in err


def test_calibrate_with_zero_samples_writes_nothing(tmp_path):
    wh = tmp_path / "wh"
    code, _, err = run("calibrate", "--samples", "0", "--warehouse", str(wh))
    assert code == 2 and "--samples = 0" in err
    assert not wh.exists()


def test_a_warehouse_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    code, _, err = run("calibrate", "--warehouse", str(f))
    assert code == 2 and "must be a directory (it is a file)" in err


@pytest.mark.parametrize("argv", [
    ["generate", "--level", "1", "--depth", "0", "--seed", "0", "--master-seed", str(2**63 - 1)],
    ["calibrate", "--samples", "4096", "--rows", "1,0 2,4"],
    ["calibrate", "--samples", "1"],
    ["advise", "--samples", "4096", "--probes", "2048", "--row", "1,0"],
    ["nodemap", "draw", "--seed", "0"],
    BENCH,
    ["bench", "--width", "30", "--height", "16", "--density", "0.206", "--target", "0.85", "--cap", "240",
     "--attempts", "16", "--boards", "1", "--shave", "0"],
    ["bench", "--width", "64", "--height", "64", "--density", "0.18", "--target", "0.85", "--cap", "2048",
     "--attempts", "4", "--boards", "1"],  # beyond the cost gate, as the speed presets are on purpose
    ["validate", "--tables", str(REPO / "tables")],
    ["history", "--row", "2,4"],
])
def test_arguments_inside_their_domains_pass(argv):
    args = cli.build_parser().parse_args(argv)
    command = args.command + (f" {args.nodemap_command}" if args.command == "nodemap" else "")
    assert check_command(command, vars(args)) == []


def test_the_bounds_are_those_of_the_scope_layout():
    """The bounds are read from the scope layout, not copied: a layout that
    moves moves them."""
    assert DEPTH_SPACING == sigma(1, 1) - sigma(1, 0) == sigma(2, 3) - sigma(2, 2)
    assert "adjacent depths are 4096 apart" in check_command("calibrate", {"samples": DEPTH_SPACING + 1})[0].message
    assert check_command("advise", {"probes": DEPTH_SPACING - PROBE_OFFSET}) == []
    assert check_command("advise", {"probes": DEPTH_SPACING - PROBE_OFFSET + 1})[0].field == "--probes"


def test_bench_takes_the_table_domains_for_each_field():
    good = dict(width=10, height=10, density=0.25, target=0.95, cap=45, attempts=16, boards=1, shave=1)
    assert check_bench(good) == []
    for option, value in (("width", 7), ("height", 65), ("density", 0.51), ("target", 0.84), ("attempts", 33),
                          ("shave", 3)):
        found = check_bench({**good, option: value})
        assert [(v.field, v.value) for v in found] == [(f"--{option}", value)], option


def test_every_option_of_every_subcommand_states_its_default():
    parser = cli.build_parser()
    missing = []

    def walk(p: argparse.ArgumentParser, name: str):
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(sub, f"{name} {sub_name}")
            elif not isinstance(action, argparse._HelpAction) and name != "boardgen":
                text = action.help or ""
                if "default:" not in text and "(required)" not in text:
                    missing.append(f"{name} {action.option_strings or action.dest}")

    walk(parser, "boardgen")
    assert missing == []
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit):
        cli.build_parser().parse_args(["calibrate", "--help"])
    assert "boards per row, 1..4096 (default: 256)" in " ".join(out.getvalue().split())


def test_calibrate_takes_workers_and_a_dask_address_from_the_environment():
    from boardgen_pipeline.cli_args import check_calibrate_environment

    assert check_calibrate_environment({"workers": None, "dask": None}, {}) == []
    found = check_calibrate_environment({"workers": None, "dask": None},
                                        {"BOARDGEN_WORKERS": "0", "BOARDGEN_DASK": "udp://x:1"})
    assert sorted((v.file, v.field) for v in found) == [("environment", "$BOARDGEN_DASK"),
                                                        ("environment", "$BOARDGEN_WORKERS")]
    assert "unknown protocol 'udp'" in next(v.message for v in found if v.field == "$BOARDGEN_DASK")
    # an option given on the command line wins over its variable
    assert check_calibrate_environment({"workers": 2, "dask": "tcp://h:1"}, {"BOARDGEN_WORKERS": "x"}) == []


def test_nightly_arguments_and_their_environment_defaults():
    ok = dict(tables=None, warehouse=None, samples=None, master_seed=None, adventures=None,
              dagster_home=None, workers=None, dask=None)
    assert check_nightly(ok, {}) == []
    found = check_nightly({**ok, "samples": 0, "adventures": 0, "master_seed": -1, "workers": 0,
                           "dask": "tcp://nohost"}, {})
    assert sorted(v.field for v in found) == ["--adventures", "--dask", "--master-seed", "--samples", "--workers"]
    from_env = check_nightly(ok, {"BOARDGEN_SAMPLES": "5000", "BOARDGEN_MASTER_SEED": "x",
                                  "BOARDGEN_NODE_MAP_ADVENTURES": "0"})
    assert sorted((v.file, v.field) for v in from_env) == [
        ("environment", "$BOARDGEN_MASTER_SEED"), ("environment", "$BOARDGEN_NODE_MAP_ADVENTURES"),
        ("environment", "$BOARDGEN_SAMPLES")]
    # an option given on the command line wins over its variable
    assert check_nightly({**ok, "samples": 8}, {"BOARDGEN_SAMPLES": "0"}) == []


def test_nightly_bad_arguments_exit_2_before_any_work(capsys, monkeypatch, tmp_path):
    from boardgen_pipeline.cli import main as boardgen

    monkeypatch.delenv("BOARDGEN_SAMPLES", raising=False)
    home = tmp_path / "home"
    assert boardgen(["nightly", "--samples", "0", "--master-seed", "-1", "--dagster-home", str(home)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("2 command-line violations:")
    assert "boardgen nightly: row -: field --samples = 0: [argument_domain]" in err
    assert not home.exists()  # nothing created


@pytest.mark.parametrize("argv, env, field", [
    (["--keep-runs", "0"], {}, "--keep-runs"),
    (["--keep-days", "0"], {}, "--keep-days"),
    ([], {"BOARDGEN_KEEP_DAYS": "-3"}, "$BOARDGEN_KEEP_DAYS"),
    ([], {"BOARDGEN_KEEP_DAYS": "a month"}, "$BOARDGEN_KEEP_DAYS"),
    ([], {"BOARDGEN_KEEP_RUNS": "0"}, "$BOARDGEN_KEEP_RUNS"),
])
def test_an_out_of_domain_retention_setting_is_one_sentence_and_exit_2(argv, env, field, capsys, monkeypatch):
    """``--keep-runs`` and ``$BOARDGEN_KEEP_DAYS`` out of their domain,
    for the nightly and for ``boardgen prune``, before anything is opened."""
    from boardgen_pipeline.cli import main as boardgen

    for name in ("BOARDGEN_KEEP_DAYS", "BOARDGEN_KEEP_RUNS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert boardgen(["nightly", "--dagster-home", "/nonexistent/home", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("1 command-line violation:") and field in err
    assert boardgen(["prune", "--dagster-home", "/nonexistent/home", *argv]) == 2
    err = capsys.readouterr().err
    assert field in err and "prune" in err


def test_bench_outside_the_domains_exits_2_in_a_fresh_process():
    # each of these once segfaulted or aborted with "double free"
    argv = with_option(with_option(with_option(BENCH, "--density", "2"), "--width", "0"), "--attempts", "400")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    p = subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", *argv], capture_output=True, text=True,
                       env=env, cwd=REPO, timeout=120)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("3 command-line violations:") and "Traceback" not in p.stderr
