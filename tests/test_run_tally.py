"""The nightly's summary of a run's rows (issue 22 "nothing grows with the rows"):
the row step sums its rows up in a ``Tally`` (counts per check, the words of
the failures, the figures of the rows worth printing) that travels as one
event; what the nightly prints and the exit code follow from it."""

from __future__ import annotations

import json

from boardgen_pipeline.outcomes import CheckOutcome
from boardgen_pipeline.steps import summary
from boardgen_pipeline.steps.chain import RowResult


def outcome(name: str, passed: bool = True, severity: str = "error") -> CheckOutcome:
    return CheckOutcome(name=name, assertion=name, passed=passed, severity=severity, blocking=False,
                        description=f"{name} {'holds' if passed else 'fails'}")


def result(level: int, depth: int, *failing: str, warn: str | None = None) -> RowResult:
    r = RowResult((level, depth))
    r.outcomes["boards"] = [outcome(n, n not in failing) for n in ("a", "b")]
    if warn:
        r.outcomes["boards"].append(outcome(warn, False, "warning"))
    r.outcomes["variant_overlays"] = [outcome("ovl")]
    r.figures["boards"] = {"target": 0.85, "p10": 0.9, "p50": 1.0, "p90": 1.0, "exit_passed": 8, "retry_rate": 0.5,
                           "published": True, "row_fingerprint": "not printed"}
    r.figures["variant_overlays"] = {"variant_cells": 10, "whole_board_boards": 1}
    r.seconds["generate"] = 0.25
    return r


def test_a_tally_counts_every_row_and_keeps_words_for_the_failures():
    t = summary.Tally(list_all=False)
    t.add(result(1, 0))
    t.add(result(1, 1, "a"))
    t.add(result(1, 2, warn="e"))
    assert t.rows == 3 and t.checks_evaluated == 10
    assert dict(t.evaluated) == {"a": 3, "b": 3, "ovl": 3, "e": 1} and dict(t.failed) == {"a": 1, "e": 1}
    assert t.failures == [("1-1", "a", "ERROR", "a fails"), ("1-2", "e", "WARN", "e fails")]
    assert sorted(t.listed) == ["1-1", "1-2"]  # only the rows that fail or warn, when not every row is listed
    assert t.listed["1-1"]["boards"] == {k: v for k, v in result(1, 1).figures["boards"].items()
                                         if k in summary.ROW_FIGURES}
    assert t.variant_cells == 30 and t.whole_board_boards == 3 and t.generation_seconds == 0.75


def test_a_small_run_lists_every_row_and_only_the_checks_it_recorded():
    t = summary.Tally(list_all=True)
    t.add(result(1, 0), recorded={"a", "b"})
    assert sorted(t.listed) == ["1-0"] and set(t.listed["1-0"]["checks"]) == {"a", "b"}
    assert "ovl" not in t.evaluated


def test_a_tally_travels_as_json_and_merges():
    t = summary.Tally(list_all=False)
    t.add(result(1, 1, "a"))
    back = summary.Tally.from_dict(json.loads(json.dumps(t.as_dict())))
    assert back == summary.Tally.from_dict(t.as_dict())
    assert back.failures == t.failures and back.listed == t.listed and back.evaluated == t.evaluated
    back.merge(t)
    assert back.rows == 2 and back.failed["a"] == 2 and len(back.failures) == 2


def test_the_words_stop_at_the_cap_and_the_count_does_not(monkeypatch):
    monkeypatch.setattr(summary, "LISTED_MAX", 2)
    t = summary.Tally(list_all=False)
    for depth in range(5):
        t.add(result(1, depth, "a"))
    assert t.failed["a"] == 5 and len(t.failures) == 2 and len(t.listed) == 2
    verdict = summary.Verdict()
    verdict.add_tally(t)
    assert verdict.exit_code == summary.EXIT_CHECK
    assert [k for k, _, _ in verdict.failed_checks] == ["1-0", "1-1", "..."]
    assert verdict.failed_checks[-1][1] == "3 more"


def test_warnings_alone_do_not_fail_the_nightly():
    t = summary.Tally()
    t.add(result(1, 0, warn="e"))
    verdict = summary.Verdict()
    verdict.add_tally(t)
    assert verdict.exit_code == summary.EXIT_OK and verdict.warnings == [("1-0", "e", "e fails")]


def test_the_overlay_line_counts_each_check_over_the_rows():
    from boardgen_pipeline.variants import outcomes as overlay_checks

    t = summary.Tally()
    for depth in range(3):
        r = result(1, depth)
        r.outcomes["variant_overlays"] = [outcome(n, not (depth == 2 and n == overlay_checks.CHECK_PACKS))
                                          for n in overlay_checks.CHECKS]
        t.add(r)
    line = summary.group_lines(t, None)[0]
    assert "packs [red]FAIL[/] (2/3)" in line and "skew [green]ok[/] (3/3)" in line
    assert line.endswith("30 variant cells, 3 whole-board boards")


def report(level: int, depth: int, below: tuple = ()):
    from boardgen_pipeline.calibration.batch import RowReport

    return RowReport(key=(level, depth), samples=8, target=0.9, p10=0.9, p50=1.0, p90=1.0, exits={}, retry_rate=0.0,
                     mean_attempts=1.0, cap_rejections=0, below_target_scopes=list(below), illegal_scopes=[])


def test_calibrate_keeps_every_report_of_a_small_table_and_only_the_failing_ones_of_a_large_one():
    from boardgen_pipeline.steps.publish_rows import Published

    small = Published(list_all=True)
    for d in range(3):
        small.add(report(1, d, below=(7,) if d == 1 else ()))
    assert (small.rows, small.failed, [r.key for r in small.listed]) == (3, 1, [(1, 0), (1, 1), (1, 2)])
    large = Published(list_all=False)
    for i in range(summary.LISTED_MAX * 3):
        large.add(report(i, 0, below=(1,) if i % 2 else ()))
    assert large.rows == 3 * summary.LISTED_MAX and large.failed == 3 * summary.LISTED_MAX // 2
    assert len(large.listed) == summary.LISTED_MAX and all(not r.green for r in large.listed)
    assert large.listed[0].key == (1, 0)
