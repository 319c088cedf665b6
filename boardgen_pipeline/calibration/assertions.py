"""The F4 batch assertions of one row, one small function each (seed 001 "F4
批量统计断言"; SPEC 7 "assertions", SPEC 9 "asset checks").

- A: no board below target (inferability and, on fog rows, its core);
- A'': the row's target is at least 0.85;
- A': no board flagged illegal (blocking: such a batch is never published);
- B: on fog rows, every fog region placed on at least 95% of boards;
- B': on rows without fog, no board carries fog;
- E: the table's ``monotone_in_depth`` fields rise with depth (a warning);
- F: a perfect player's mean survival on the row's boards is at least the
  row's ``min_mean_survival`` (a warning unless the header's
  ``survival_is_criterion`` makes it an error; not applicable where unset).

Each check reads one :class:`RowEvidence` (the batch, its records and their
report; the pictures and the advisor's reading are computed once, on first
use) and returns one :class:`CheckOutcome`. :data:`ASSERTIONS` lists them in
the order the report and the UI show them; :func:`check_outcomes` runs them.
A failing A (or A') carries, beside the advice, ``fix_command``: the command
that writes the advisor's fix into the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from boardgen_pipeline import check_names
from boardgen_pipeline.calibration.advisor import Advice
from boardgen_pipeline.calibration.batch import FOG_PLACEMENT_FLOOR, RowReport, evaluate_row, judged_inferability
from boardgen_pipeline.calibration.fix import apply_command
from boardgen_pipeline.calibration.report import row_advice
from boardgen_pipeline.calibration.seeds import SeedBatch
from boardgen_pipeline.check_names import CHECK_A, CHECK_A1, CHECK_A2, CHECK_B, CHECK_B1, CHECK_E, CHECK_F
from boardgen_pipeline.outcomes import CheckOutcome, _scopes
from boardgen_pipeline.pictures import charts, drawings, fairness

TARGET_FLOOR = 0.85  # assertion A'' (seed 001 F4)

CHECKS = check_names.F4


@dataclass
class RowEvidence:
    """What the assertions of one row read: its batch plan, its board records
    (in scope order) and their report."""

    batch: SeedBatch
    records: list[dict]
    report: RowReport

    @cached_property
    def by_scope(self) -> dict[int, dict]:
        return {r["scope"]: r for r in self.records}

    @cached_property
    def common(self) -> dict:
        report = self.report
        return {
            "samples": report.samples,
            "target": report.target,
            "p10": report.p10,
            "p50": report.p50,
            "p90": report.p90,
            "exit_passed": report.exits.get("passed", 0),
            "exit_best_legal": report.exits.get("best_legal", 0),
            "exit_least_bad": report.exits.get("least_bad", 0),
        }

    @cached_property
    def looked_at(self) -> bool:
        """Whether a person will look at this row's pictures: it fails, or passes
        with a thin margin (the advisor's reading). Rendering a PNG costs more
        than generating the row's boards (measured), and drawing the worst
        board (R∞ by the readable solver) a tenth of it, so only
        those rows get them; every row keeps its histogram and its reading."""
        return self.advice.status != "ok"

    @cached_property
    def histograms(self) -> dict[str, str]:
        report = self.report
        out = {"inferability_histogram": drawings.inferability_histogram(self.records, report.target)}
        if self.looked_at:
            title = (f"row {self.batch.row.key_text}: {report.samples} boards, "
                     f"{len(report.below_target_scopes)} below target")
            # what A judges (the core too, on fog rows) and A's own count
            png = charts.inferability_histogram_png([judged_inferability(r) for r in self.records], report.target,
                                                    title, below=len(report.below_target_scopes))
            out["inferability_chart"] = charts.png_markdown(png, "inferability histogram")
        return out

    @cached_property
    def advice(self) -> Advice:
        return row_advice(self.batch, self.records, self.report)

    @cached_property
    def advice_metadata(self) -> dict:
        out = {k: v for k, v in self.advice.as_dict().items() if k not in ("level_index", "node_depth")}
        if self.advice.status == "fails":  # the row's description stays one line: the command rides here
            b = self.batch
            out["fix_command"] = apply_command([b.key], b.table_path, b.samples, b.master_seed)
        return out

    @cached_property
    def reading(self) -> dict[str, str]:
        """The pictures A and A' both lead with: the histograms and the advice."""
        return {**self.histograms, "advice": self.advice.text()}

    @property
    def fog(self) -> dict:
        row = self.batch.row
        return {"fog_region_count": row.fog_region_count, "fog_target_ratio": row.fog_target_ratio,
                "applicable": self.report.has_fog}


def assertion_a(ev: RowEvidence) -> CheckOutcome:
    """A: every board meets the row's target (seed 001 F4-A)."""
    report, below = ev.report, ev.report.below_target_scopes
    worst = ev.by_scope.get(report.worst_scope)
    outcome = CheckOutcome(
        name=CHECK_A,
        assertion="A",
        passed=not below,
        severity="error",
        blocking=False,
        description=(f"{len(below)} of {report.samples} boards below target {report.target}"
                     if below else f"all {report.samples} boards meet target {report.target}"),
        metadata={
            **ev.common,
            "below_target": len(below),
            "failing_scopes": _scopes(below),
            "failing_scopes_total": len(below),
            "worst_scope": report.worst_scope,
            "worst_inferability": [worst["revealed"], worst["safe_count"]] if worst else None,
            **ev.advice_metadata,
        },
    )
    outcome.pictures = dict(ev.reading)
    if worst is None:
        return outcome
    if not ev.looked_at:
        # a row that passes with margin names its worst board instead of drawing it
        outcome.metadata["worst_board_command"] = drawings.reproduce_command(worst)
        return outcome
    board_png = charts.png_markdown(charts.board_png(worst["layout"], ev.batch.spawn_side,
                                                     title=f"worst board, scope {worst['scope']}"), "worst board")
    outcome.pictures["worst_board"] = drawings.draw_board(worst, ev.batch.spawn_side)
    outcome.pictures["worst_board_picture"] = board_png
    return outcome


def assertion_a2(ev: RowEvidence) -> CheckOutcome:
    """A'': the target itself is at least 0.85 (seed 001 F4-A'')."""
    target = ev.report.target
    return CheckOutcome(
        name=CHECK_A2,
        assertion="A''",
        passed=target >= TARGET_FLOOR,
        severity="error",
        blocking=False,
        description=f"target {target} {'>=' if target >= TARGET_FLOOR else '<'} {TARGET_FLOOR}",
        metadata={"target": target, "floor": TARGET_FLOOR},
    )


def assertion_a1(ev: RowEvidence) -> CheckOutcome:
    """A': no board left through the least-bad exit; blocking (seed 001
    F4-A': an illegal batch is never published)."""
    report, records, illegal = ev.report, ev.records, ev.report.illegal_scopes
    # A passing A' carries its own numbers; the row's figures, its reading and the advice ride on A
    # (each row's events are stored once a night)
    shared = {**ev.common, **ev.advice_metadata} if illegal else {}
    outcome = CheckOutcome(
        name=CHECK_A1,
        assertion="A'",
        passed=not illegal,
        severity="error",
        blocking=True,
        description=(f"{len(illegal)} of {report.samples} boards illegal (exit least_bad): batch not published"
                     if illegal else f"no illegal board in {report.samples}"),
        metadata={
            **shared,
            "illegal": len(illegal),
            "illegal_scopes": _scopes(illegal),
            "illegal_scopes_total": len(illegal),
            "r0_cap_rejected": sum(r["r0_cap_rejected"] for r in records),
            "unreachable_rejected": sum(r["unreachable_rejected"] for r in records),
            "free_open_rejected": sum(r["free_open_rejected"] for r in records),
            "min_safe_rejected": sum(r.get("min_safe_rejected", 0) for r in records),
            "published": not illegal,
        },
    )
    if illegal:
        outcome.pictures = dict(ev.reading)
        outcome.pictures["first_illegal_board"] = drawings.draw_board(
            ev.by_scope[illegal[0]], ev.batch.spawn_side, title="first illegal board")
    return outcome


def assertion_b(ev: RowEvidence) -> CheckOutcome:
    """B: on a fog row, all its fog regions are placed on >= 95% of boards
    (seed 001 F4-B); not applicable on rows without fog."""
    report, row = ev.report, ev.batch.row
    budget = {f"fog_{k}": v for k, v in report.fog_budget.items()}
    return CheckOutcome(
        name=CHECK_B,
        assertion="B",
        passed=report.assertion_b is not False,
        severity="error",
        blocking=False,
        description=(f"all {row.fog_region_count} fog regions placed on {report.fog_full_share:.1%} of boards "
                     f"(floor {FOG_PLACEMENT_FLOOR:.0%})" if report.has_fog else "not applicable: row without fog"),
        metadata={**ev.fog, "full_placement_share": report.fog_full_share, "floor": FOG_PLACEMENT_FLOOR, **budget,
                  "shortfall_distribution": {str(k): v for k, v in sorted(report.shortfall.items())}},
    )


def assertion_b1(ev: RowEvidence) -> CheckOutcome:
    """B': a row without fog never carries fog (seed 001 F4-B')."""
    report = ev.report
    return CheckOutcome(
        name=CHECK_B1,
        assertion="B'",
        passed=report.assertion_b1 is not False,
        severity="error",
        blocking=False,
        description=("not applicable: fog row" if report.has_fog
                     else f"{report.fog_boards_on_fogless_row} boards carry fog on a row without fog"),
        metadata={**ev.fog, "applicable": not report.has_fog, "boards_with_fog": report.fog_boards_on_fogless_row},
    )


def assertion_e(ev: RowEvidence) -> CheckOutcome:
    """E: the declared ``monotone_in_depth`` fields do not fall with depth
    within the level (seed 000 调参表; a warning, never blocking), as the
    table stood when the row's batch was drawn."""
    batch = ev.batch
    return monotone_outcome(batch.key, batch.monotone_fields, batch.monotone_findings, batch.level_chain)


def monotone_outcome(key: tuple[int, int], fields, findings, chain) -> CheckOutcome:
    """E of row ``key`` from the table's ``monotone_in_depth`` ``fields``, the
    row's ``findings`` (``BoardGenTable.warnings`` of the row) and its level's
    ``chain`` (``(depth, ((field, value), ...))`` per row of the level)."""
    findings = list(findings)
    return CheckOutcome(
        name=CHECK_E,
        assertion="E",
        passed=not findings,
        severity="warning",
        blocking=False,
        description=("; ".join(findings) if findings
                     else f"monotone in depth: {', '.join(fields) or 'no fields declared'}"),
        metadata={"fields": list(fields), "findings": findings, "violations": len(findings)},
        pictures={"level_chain": _monotone_picture(key, fields, chain)} if findings else {},
    )


def monotone_outcomes(table) -> dict[tuple[int, int], CheckOutcome]:
    """E of every row of ``table`` as the table stands now: E reads the rows
    of a level together, so an edit of row (L, D) can turn row (L, D+1)'s
    verdict, whose own batch did not change (docs/decisions/partition-verdicts.md
    "Verdicts that read other rows")."""
    fields = tuple(table.header.monotone_in_depth)
    findings: dict[str, list[str]] = {}
    for w in table.warnings:
        findings.setdefault(w.row, []).append(str(w))
    keys = table.keys()
    chains = {level: tuple((d, tuple((f, getattr(table.rows[(lv, d)], f)) for f in fields))
                           for (lv, d) in keys if lv == level) for level in {k[0] for k in keys}}
    return {key: monotone_outcome(key, fields, findings.get(table.rows[key].key_text, ()), chains[key[0]])
            for key in keys}


def _monotone_picture(key: tuple[int, int], fields, chain) -> str:
    if not fields:
        return "_the table declares no monotone_in_depth fields_"
    head = "| depth | " + " | ".join(fields) + " |"
    rule = "|---|" + "---|" * len(fields)
    lines = [head, rule]
    for depth, values in chain:
        mark = "**" if depth == key[1] else ""
        cells = " | ".join(f"{mark}{v}{mark}" for _, v in values)
        lines.append(f"| {mark}{depth}{mark} | {cells} |")
    return f"level {key[0]} (this row in bold):\n\n" + "\n".join(lines)


def assertion_f(ev: RowEvidence) -> CheckOutcome:
    """F: the mean survival of a perfect player (``board.player``) on the
    row's boards is at least ``min_mean_survival``. Advisory (a
    warning) unless the header's ``survival_is_criterion`` is set; a row
    without a floor passes as not applicable. Its pictures are drawn on every
    row (text, a few lists walked): the survival histogram and the board of
    least survival with the guessed cells and their P(safe)."""
    report = ev.report
    floor, verdict, fair = report.survival_floor, report.assertion_f, report.fairness
    survival = fair.get("mean_survival")
    shown = "none analysed" if survival is None else f"{survival:.3f}"
    if floor is None:
        text = f"not applicable: no min_mean_survival set (mean survival {shown})"
    elif verdict:
        text = f"mean survival {shown} >= min_mean_survival {floor}"
    else:
        text = f"mean survival {shown} below min_mean_survival {floor}"
    worst = fairness.worst_guess_record(ev.records)
    pictures = {"survival_histogram": fairness.survival_histogram(ev.records, floor)}
    if worst is not None:
        pictures["least_survival_board"] = fairness.draw_guesses(worst)
    return CheckOutcome(
        name=CHECK_F,
        assertion="F",
        passed=verdict is not False,
        severity="error" if report.survival_criterion else "warning",
        blocking=False,
        description=text,
        metadata={"applicable": floor is not None, "min_mean_survival": floor, "criterion": report.survival_criterion,
                  **fair, "least_survival_scope": worst["scope"] if worst else None},
        pictures=pictures,
    )


ASSERTIONS: tuple[Callable[[RowEvidence], CheckOutcome], ...] = (
    assertion_a, assertion_a2, assertion_a1, assertion_b, assertion_b1, assertion_e, assertion_f,
)


def check_outcomes(batch: SeedBatch, records: list[dict], report: RowReport | None = None) -> list[CheckOutcome]:
    """Assertions A, A'', A', B, B', E and F of one row, in that order. B applies to
    fog rows and B' to rows without fog; the other one passes as not applicable."""
    report = report or evaluate_row(batch.row, records, batch.header.survival_is_criterion)
    return evidence_outcomes(RowEvidence(batch, records, report))


def evidence_outcomes(evidence: RowEvidence) -> list[CheckOutcome]:
    """:func:`check_outcomes` on evidence the caller keeps (its advice then
    serves the row's report too: ``report.report_record``)."""
    return [check(evidence) for check in ASSERTIONS]
