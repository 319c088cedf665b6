"""The calibration advisor: rates, intervals, and searches whose
answers are known by construction."""

from __future__ import annotations

import subprocess
import sys

import pytest

from boardgen_pipeline.board.generator import generate_from_row
from boardgen_pipeline.board.rng import derive_at, sigma
from boardgen_pipeline.calibration import advisor
from boardgen_pipeline.calibration.advisor import PassRate, advise, board_pass_chance, rate_from_records, required_rate
from boardgen_pipeline.calibration.batch import evaluate_row, run_row
from boardgen_pipeline.tables.board_gen import BoardGenRow, load_board_gen_dir

from .conftest import BASE_ROW

DEFAULT = load_board_gen_dir()


def test_wilson_interval_textbook_values():
    assert PassRate(50, 100).wilson() == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert PassRate(0, 100).wilson() == pytest.approx((0.0, 0.0370), abs=1e-4)
    assert PassRate(100, 100).wilson() == pytest.approx((0.9630, 1.0), abs=1e-4)


def test_required_rate_and_board_chance_are_inverse():
    assert required_rate(32) == pytest.approx(0.194158, abs=1e-6)
    assert board_pass_chance(required_rate(8), 8) == pytest.approx(0.999)


def test_rate_from_records_counts_attempts():
    recs = [{"exit": "passed", "attempts_used": 3}, {"exit": "best_legal", "attempts_used": 8},
            {"exit": "passed", "attempts_used": 1}]
    assert rate_from_records(recs) == PassRate(2, 12)


def test_a_passing_row_is_ok_and_not_searched():
    key = (1, 0)
    recs = run_row(DEFAULT, key, 256)
    a = advise(DEFAULT.rows[key], 3, recs, failing=False)
    assert a.status == "ok" and not a.searched
    assert a.rate.passes == 256
    lo, hi = a.rate.wilson()
    assert lo < a.rate.p < hi
    assert board_pass_chance(lo, 32) >= 0.999


def test_a_row_failing_by_a_known_margin():
    """Cap 30 on a 10x10 board: R0 is ~40 with the ring shaved, so almost no
    attempt is legal and the row fails. The advice must (1) show a pass rate
    far below what 8 attempts need, (2) name a cap that passes while the cap
    just below it does not (the search's defining property), and (3) find no
    target that helps (the cap, not the target, is binding)."""
    row = BoardGenRow(**{**BASE_ROW, "r0_max_cap": 30, "max_gen_attempts": 32})
    recs = [generate_from_row(row, 3, derive_at("board_gen", sigma(1, 0) + i)).metrics for i in range(64)]
    rep = evaluate_row(row, recs)
    assert not (rep.assertion_a and rep.assertion_a1)
    a = advise(row, 3, recs, failing=True, samples=64)
    assert a.status == "fails" and a.searched
    assert board_pass_chance(a.rate.p, 32) < 0.999 and a.rate.p < required_rate(32)
    assert a.cap is not None and 30 < a.cap <= 50
    good = lambda cap: advisor._good(row.model_copy(update={"r0_max_cap": cap}), 3, 64, 0)  # noqa: E731
    assert good(a.cap) and not good(a.cap - 1)
    assert a.target is None
    # no density rescues a cap of 30 either: R0 stays too big or the board too hard
    assert a.density is None
    assert not any(advisor._good(row.model_copy(update={"mine_density": d}), 3, 64, 0) for d in (0.2, 0.3, 0.4))


def test_largest_density_is_the_boundary():
    row = BoardGenRow(**BASE_ROW)
    d = advisor.largest_density(row, 3, samples=64)
    assert d is not None and d >= row.mine_density
    ok = lambda v: advisor._good(row.model_copy(update={"mine_density": v}), 3, 64, 0)  # noqa: E731
    assert ok(d) and not ok(round(d + 0.01, 2))


def test_largest_target_is_the_boundary():
    row = BoardGenRow(**{**BASE_ROW, "max_gen_attempts": 32})
    t = advisor.largest_target(row, 3, samples=64)
    assert t is not None and 0.85 <= t < 1.0
    ok = lambda v: advisor._good(row.model_copy(update={"inferability_target": v}), 3, 64, 0)  # noqa: E731
    assert ok(t) and not ok(round(t + 0.01, 2))


def test_cli_advise_one_row():
    p = subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", "advise", "--row", "1,0", "--samples", "64",
                        "--probes", "32"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "row (1,0): ok" in p.stdout and "largest mine_density" in p.stdout


def _batch_streams(row, n: int) -> set[tuple[str, int]]:
    base = sigma(row.level_index, row.node_depth)
    return {("board_gen", base + i) for i in range(n)}


@pytest.mark.parametrize("n", [1, 16, 256, 2048])
def test_probes_of_a_batch_up_to_2048_boards_are_the_scopes_they_always_were(n):
    """So no report record changes (the golden warehouse runs N = 16, the nightly 256)."""
    row = BoardGenRow(**BASE_ROW)
    base = sigma(row.level_index, row.node_depth)
    for i in (0, 1, advisor.DEFAULT_PROBES - 1, 2047):
        s = advisor.probe_stream(row, i, n)
        assert (s.label, s.scope, s.state) == ("board_gen", base + 2048 + i, derive_at("board_gen", base + 2048 + i).state)


@pytest.mark.parametrize("n", [2049, 3000, 4096])
def test_the_advisor_never_probes_the_boards_it_is_judged_on(n, monkeypatch):
    """A batch of ``n`` boards up to 4096 (``calibrate --samples``): every
    stream the advisor's searches draw a probe board from is none of the
    batch's, nor of another row's (the probes of a row whose batch passes 2048
    boards have a stream label of their own)."""
    row = BoardGenRow(**{**BASE_ROW, "level_index": 2, "node_depth": 3})
    seen: set[tuple[str, int]] = set()
    real = advisor.generate_from_row

    def spy(r, side, stream, *args, **kwargs):
        seen.add((stream.label, stream.scope))
        return real(r, side, stream, *args, **kwargs)

    monkeypatch.setattr(advisor, "generate_from_row", spy)
    records = [{"exit": "best_legal", "attempts_used": 32}] * n  # a failing batch: every search runs
    a = advise(row, 3, records, failing=True, samples=16)
    assert a.searched and seen
    assert not seen & _batch_streams(row, n)
    assert {label for label, _ in seen} == {advisor.PROBE_LABEL}
    # not another row's either: the label is no batch's, and the scopes are the row's own
    lo = sigma(row.level_index, row.node_depth)
    assert all(lo <= scope < lo + 2048 for _, scope in seen)
