"""Registered seeds for seed 001 AC-11 and AC-12, searched, never picked by
hand (SPEC 11): the registry is what the search finds; ``boardgen
conformance seeds`` checks it (exit 0) and fails loudly (exit 3) on a
registered seed that no longer meets its precondition, naming the seed the
search finds now; the kit is not exported on such a seed."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from boardgen_pipeline import cli
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.conformance import kit, seeds

from .conformance_support import REPO


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def table():
    return load_catalog(REPO / "tables").board_gen


def test_the_registry_is_what_the_search_finds(table):
    registry = seeds.load_registry()
    for case in seeds.CASES:
        found = seeds.search(case, table)
        assert registry[case.ac] == found, case.ac
    assert registry["AC-11"]["why"]["exit_at_2"] == "best_legal"
    assert registry["AC-12"]["why"]["exits"] == ["least_bad"] * 4


def test_the_check_passes_on_the_registered_seeds():
    code, out, err = run("conformance", "seeds")
    assert (code, err) == (0, "")
    assert [line.split(":")[0] for line in out.splitlines()] == ["AC-11", "AC-12"]
    assert all(" still qualifies: " in line for line in out.splitlines())


def test_a_seed_that_no_longer_qualifies_fails_loudly(tmp_path, monkeypatch, table):
    registry = seeds.load_registry()
    stale = dict(registry["AC-11"], scope=0)  # scope 0: attempt 2 fails the R0 cap, so best_legal has one board
    ok, why = seeds.CASES[0].holds(table, 0)
    assert not ok and why["attempt_2"] == "r0_cap"
    path = tmp_path / "registered_seeds.json"
    path.write_text(seeds.registry_text([stale, registry["AC-12"]], "x"))
    monkeypatch.setattr(seeds, "REGISTRY", path)
    code, out, err = run("conformance", "seeds")
    assert code == 3
    first = out.splitlines()[0]
    assert first.startswith("AC-11: registered scope 0 NO LONGER qualifies (")
    assert first.endswith(f"the search finds scope {registry['AC-11']['scope']}: run `boardgen conformance seeds "
                          "--register`")
    code, out, err = run("conformance", "export", str(tmp_path / "kit"))
    assert (code, out) == (3, "")
    assert err.startswith("error: AC-11: registered scope 0 no longer meets its precondition")
    assert err.endswith("nothing was written\n")
    assert not (tmp_path / "kit").exists()
    code, out, err = run("conformance", "seeds", "--register")
    assert code == 0
    assert json.loads(path.read_text())["seeds"][0]["scope"] == registry["AC-11"]["scope"]


def test_a_kit_is_built_on_the_registered_seeds(table):
    k = kit.load(REPO / "conformance" / "kit")
    ids = {v["id"]: v for _, _, v in k.vectors()}
    registry = seeds.load_registry()
    assert ids["AC-11/a1_high_target@2"]["inputs"]["scope"] == str(registry["AC-11"]["scope"])
    assert ids["AC-11/a1_high_target@2"]["expected"]["exit"]["exit"] == "best_legal"
    assert ids["AC-11/a1_high_target@2"]["expected"]["exit"]["attempts_used"] == 2
    sequence = ids["AC-12/badness_sequence"]["expected"]["badness"]
    assert all(a[:4] >= b[:4] for a, b in zip(sequence, sequence[1:])) and sequence[0][:4] > sequence[-1][:4]
