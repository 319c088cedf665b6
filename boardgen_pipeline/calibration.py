"""One row's calibration as plain steps: seed batch -> boards -> F4 checks ->
report (SPEC 7, 9; seed 001 "F4 批量统计断言"; issue 3).

The Dagster assets in ``assets/`` are thin wiring over these functions; the
CLI (``boardgen calibrate``) and the tests can call them without Dagster.

- :func:`seed_batch`: the row's batch plan, ``derive_at("board_gen",
  sigma(L, D) + i)`` for ``i < N``, with everything that decides its boards
  (row fields, spawn side, N, master seed) and their fingerprint.
- :func:`generate_batch`: the boards of a batch (``batch.run_row``), each record
  tagged with the fingerprints, so the warehouse says which row version made it.
- :func:`check_outcomes`: assertions A, A'', A', B, B' and E of one row as values with
  the numbers a designer needs and the pictures (``pictures``).
- :func:`report_record`: report C and diagnostics D of one row (one record of
  the ``calibration_report`` dataset).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import advisor, charts, pictures
from .batch import FOG_PLACEMENT_FLOOR, RowReport, batch_scopes, evaluate_row, run_row
from .regen import batch_fingerprint, partition_key
from .tables import BoardGenRow, BoardGenTable, Header

TARGET_FLOOR = 0.85  # assertion A'' (seed 001 F4)
SCOPES_SHOWN = 64  # scopes listed in a check's metadata (the count is always complete)

CHECK_A = "a_no_board_below_target"
CHECK_A2 = "a_double_prime_target_floor"
CHECK_A1 = "a_prime_no_illegal_board"
CHECK_B = "b_fog_regions_placed"
CHECK_B1 = "b_prime_no_fog_on_fogless_row"
CHECK_E = "e_monotone_in_depth"
CHECKS = (CHECK_A, CHECK_A2, CHECK_A1, CHECK_B, CHECK_B1, CHECK_E)


@dataclass(frozen=True)
class SeedBatch:
    """The batch plan of one row: scopes ``sigma(L, D) + i`` for ``i < samples``."""

    key: tuple[int, int]
    row: BoardGenRow
    header: Header
    samples: int
    master_seed: int
    row_fingerprint: str
    table_path: str
    boss: bool = False
    monotone_fields: tuple[str, ...] = ()
    monotone_findings: tuple[str, ...] = ()
    level_chain: tuple[tuple[int, tuple[tuple[str, float], ...]], ...] = ()

    @property
    def spawn_side(self) -> int:
        return self.header.spawn_side

    @property
    def partition_key(self) -> str:
        return partition_key(self.key)

    @property
    def batch_fingerprint(self) -> str:
        return batch_fingerprint(self.row_fingerprint, self.samples, self.master_seed)

    @property
    def scopes(self) -> range:
        return batch_scopes(*self.key, self.samples)

    def describe(self) -> dict:
        return {
            "row": self.row.key_text,
            "samples": self.samples,
            "master_seed": self.master_seed,
            "scope_first": self.scopes.start,
            "scope_last": self.scopes.stop - 1,
            "row_fingerprint": self.row_fingerprint,
            "batch_fingerprint": self.batch_fingerprint,
            "boss_row": self.boss,
            "table": self.table_path,
        }


def seed_batch(table: BoardGenTable, key: tuple[int, int], samples: int, master_seed: int = 0) -> SeedBatch:
    if key not in table.rows:
        raise KeyError(f"row ({key[0]},{key[1]}) is not in {table.path} (rows: {table.keys()})")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    row = table.rows[key]
    fields = table.header.monotone_in_depth
    chain = tuple(
        (d, tuple((f, getattr(table.rows[(lv, d)], f)) for f in fields))
        for (lv, d) in table.keys()
        if lv == key[0]
    )
    return SeedBatch(
        key=key,
        row=row,
        header=table.header,
        samples=samples,
        master_seed=master_seed,
        row_fingerprint=table.row_fingerprint(key),
        table_path=str(table.path),
        boss=table.is_boss_row(key),
        monotone_fields=tuple(fields),
        monotone_findings=tuple(str(w) for w in table.warnings if w.row == row.key_text),
        level_chain=chain,
    )


def generate_batch(batch: SeedBatch, client=None) -> list[dict]:
    """The batch's boards, one metrics record each, in scope order; on the
    Dask cluster behind ``client`` when one is given (same records)."""
    if client is not None:
        from .fanout import generate_on_cluster

        records = generate_on_cluster(client, batch.row, batch.spawn_side, batch.header.dig_ap_cost,
                                      batch.scopes, batch.master_seed)
    else:
        table = BoardGenTable(batch.table_path, batch.header, {batch.key: batch.row})
        records = run_row(table, batch.key, batch.samples, batch.master_seed)
    for r in records:
        r["row_fingerprint"] = batch.row_fingerprint
        r["batch_fingerprint"] = batch.batch_fingerprint
    return records


@dataclass
class CheckOutcome:
    """One assertion on one row. ``metadata`` holds plain values, ``pictures``
    markdown text."""

    name: str
    assertion: str
    passed: bool
    severity: str  # "error" or "warning"
    blocking: bool
    description: str
    metadata: dict = field(default_factory=dict)
    pictures: dict = field(default_factory=dict)


def _scopes(scopes: list[int]) -> list[int]:
    return list(scopes[:SCOPES_SHOWN])


def _common(report: RowReport) -> dict:
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


def _monotone_picture(batch: SeedBatch) -> str:
    if not batch.monotone_fields:
        return "_the table declares no monotone_in_depth fields_"
    head = "| depth | " + " | ".join(batch.monotone_fields) + " |"
    rule = "|---|" + "---|" * len(batch.monotone_fields)
    lines = [head, rule]
    for depth, values in batch.level_chain:
        mark = "**" if depth == batch.key[1] else ""
        cells = " | ".join(f"{mark}{v}{mark}" for _, v in values)
        lines.append(f"| {mark}{depth}{mark} | {cells} |")
    return f"level {batch.key[0]} (this row in bold):\n\n" + "\n".join(lines)


def check_outcomes(batch: SeedBatch, records: list[dict], report: RowReport | None = None) -> list[CheckOutcome]:
    """Assertions A, A'', A', B, B' and E of one row, in that order. B applies to
    fog rows and B' to rows without fog; the other one passes as not applicable."""
    report = report or evaluate_row(batch.row, records)
    by_scope = {r["scope"]: r for r in records}
    common = _common(report)
    worst = by_scope.get(report.worst_scope)
    histogram = pictures.inferability_histogram(records, report.target)
    histogram_png = charts.png_markdown(
        charts.inferability_histogram_png([r["inferability"] for r in records], report.target,
                                          f"row {batch.row.key_text}: {report.samples} boards, "
                                          f"{len(report.below_target_scopes)} below target"), "inferability histogram")
    advice = row_advice(batch, records, report)
    advice_meta = {k: v for k, v in advice.as_dict().items() if k not in ("level_index", "node_depth")}

    below = report.below_target_scopes
    a = CheckOutcome(
        name=CHECK_A,
        assertion="A",
        passed=not below,
        severity="error",
        blocking=False,
        description=(f"{len(below)} of {report.samples} boards below target {report.target}"
                     if below else f"all {report.samples} boards meet target {report.target}"),
        metadata={
            **common,
            "below_target": len(below),
            "failing_scopes": _scopes(below),
            "failing_scopes_total": len(below),
            "worst_scope": report.worst_scope,
            "worst_inferability": [worst["revealed"], worst["safe_count"]] if worst else None,
        },
        pictures={"inferability_histogram": histogram, "inferability_chart": histogram_png},
    )
    a.metadata.update(advice_meta)
    a.pictures["advice"] = advice.text()
    if worst is not None:
        a.pictures["worst_board"] = pictures.draw_board(worst, batch.spawn_side)
        a.pictures["worst_board_picture"] = charts.png_markdown(
            charts.board_png(worst["layout"], batch.spawn_side), "worst board")

    a2 = CheckOutcome(
        name=CHECK_A2,
        assertion="A''",
        passed=report.target >= TARGET_FLOOR,
        severity="error",
        blocking=False,
        description=f"target {report.target} {'>=' if report.target >= TARGET_FLOOR else '<'} {TARGET_FLOOR}",
        metadata={"target": report.target, "floor": TARGET_FLOOR},
    )

    illegal = report.illegal_scopes
    a1 = CheckOutcome(
        name=CHECK_A1,
        assertion="A'",
        passed=not illegal,
        severity="error",
        blocking=True,
        description=(f"{len(illegal)} of {report.samples} boards illegal (exit least_bad): batch not published"
                     if illegal else f"no illegal board in {report.samples}"),
        metadata={
            **common,
            "illegal": len(illegal),
            "illegal_scopes": _scopes(illegal),
            "illegal_scopes_total": len(illegal),
            "r0_cap_rejected": sum(r["r0_cap_rejected"] for r in records),
            "unreachable_rejected": sum(r["unreachable_rejected"] for r in records),
            "free_open_rejected": sum(r["free_open_rejected"] for r in records),
            "min_safe_rejected": sum(r.get("min_safe_rejected", 0) for r in records),
            "published": not illegal,
        },
        pictures={"inferability_histogram": histogram, "inferability_chart": histogram_png},
    )
    a1.metadata.update(advice_meta)
    a1.pictures["advice"] = advice.text()
    if illegal:
        a1.pictures["first_illegal_board"] = pictures.draw_board(by_scope[illegal[0]], batch.spawn_side,
                                                                 title="first illegal board")

    fog = {
        "fog_region_count": batch.row.fog_region_count,
        "fog_target_ratio": batch.row.fog_target_ratio,
        "applicable": report.has_fog,
    }
    budget = {f"fog_{k}": v for k, v in report.fog_budget.items()}
    b = CheckOutcome(
        name=CHECK_B,
        assertion="B",
        passed=report.assertion_b is not False,
        severity="error",
        blocking=False,
        description=(f"all {batch.row.fog_region_count} fog regions placed on {report.fog_full_share:.1%} of boards "
                     f"(floor {FOG_PLACEMENT_FLOOR:.0%})" if report.has_fog else "not applicable: row without fog"),
        metadata={**fog, "full_placement_share": report.fog_full_share, "floor": FOG_PLACEMENT_FLOOR, **budget,
                  "shortfall_distribution": {str(k): v for k, v in sorted(report.shortfall.items())}},
    )
    b1 = CheckOutcome(
        name=CHECK_B1,
        assertion="B'",
        passed=report.assertion_b1 is not False,
        severity="error",
        blocking=False,
        description=("not applicable: fog row" if report.has_fog
                     else f"{report.fog_boards_on_fogless_row} boards carry fog on a row without fog"),
        metadata={**fog, "applicable": not report.has_fog, "boards_with_fog": report.fog_boards_on_fogless_row},
    )

    findings = list(batch.monotone_findings)
    e = CheckOutcome(
        name=CHECK_E,
        assertion="E",
        passed=not findings,
        severity="warning",
        blocking=False,
        description=("; ".join(findings) if findings
                     else f"monotone in depth: {', '.join(batch.monotone_fields) or 'no fields declared'}"),
        metadata={"fields": list(batch.monotone_fields), "findings": findings, "violations": len(findings)},
        pictures={"level_chain": _monotone_picture(batch)},
    )
    return [a, a2, a1, b, b1, e]


def row_advice(batch: SeedBatch, records: list[dict], report: RowReport) -> advisor.Advice:
    """The advisor's reading of a row (issue 8): measured pass rate and its
    interval always; the searches only for rows failing A or A' or passing
    with little margin. Probes scale with the batch (tests use small N)."""
    failing = not (report.assertion_a and report.assertion_a1)
    probes = min(advisor.DEFAULT_PROBES, max(32, batch.samples))
    return advisor.advise(batch.row, batch.spawn_side, records, failing=failing, samples=probes,
                          master_seed=batch.master_seed)


def report_record(batch: SeedBatch, report: RowReport, records: list[dict] | None = None) -> dict:
    """Report C and diagnostics D of one row, with the fingerprints it came from
    (and the advisor's figures when the records are given)."""
    extra = {}
    if records is not None:
        extra = {k: v for k, v in row_advice(batch, records, report).as_dict().items()
                 if k not in ("level_index", "node_depth")}
    return {
        **report.as_dict(),
        **extra,
        "cap_rejections": report.cap_rejections,
        "boss_row": batch.boss,
        "monotone_warnings": len(batch.monotone_findings),
        "row_fingerprint": batch.row_fingerprint,
        "batch_fingerprint": batch.batch_fingerprint,
    }


@dataclass
class RowResult:
    """What one row's calibration produced: its boards, report, check outcomes,
    and where the boards went (published, or rejected for illegal boards)."""

    batch: SeedBatch
    records: list[dict]
    report: RowReport
    outcomes: list[CheckOutcome]
    published: bool
    path: str
    seconds: dict = field(default_factory=dict)  # wall time per stage, for the run's metadata only

    def outcome(self, name: str) -> CheckOutcome:
        return next(o for o in self.outcomes if o.name == name)

    def summary(self) -> dict:
        r = self.report
        return {
            "row": self.batch.row.key_text,
            "samples": r.samples,
            "target": r.target,
            "p10": r.p10,
            "p50": r.p50,
            "p90": r.p90,
            "exit_passed": r.exits.get("passed", 0),
            "exit_best_legal": r.exits.get("best_legal", 0),
            "exit_least_bad": r.exits.get("least_bad", 0),
            "retry_rate": r.retry_rate,
            "mean_attempts": r.mean_attempts,
            "cap_rejections": r.cap_rejections,
            "below_target": len(r.below_target_scopes),
            "illegal": len(r.illegal_scopes),
            "published": self.published,
            "row_fingerprint": self.batch.row_fingerprint,
            "batch_fingerprint": self.batch.batch_fingerprint,
        }


def run_batch(root, batch: SeedBatch, client=None) -> RowResult:
    """Generate a row's boards, evaluate its checks, then publish them, or,
    when any board is illegal (assertion A', blocking), reject them: validate
    before publishing (SPEC 10)."""
    from time import perf_counter

    from . import publish

    t0 = perf_counter()
    records = generate_batch(batch, client)
    t1 = perf_counter()
    report = evaluate_row(batch.row, records)
    outcomes = check_outcomes(batch, records, report)
    t2 = perf_counter()
    legal = next(o for o in outcomes if o.name == CHECK_A1).passed
    if legal:
        path = publish.publish_boards(root, batch.key, records)
    else:
        path = publish.reject_boards(root, batch.key, records)
    seconds = {"generate": t1 - t0, "checks": t2 - t1, "write": perf_counter() - t2}
    return RowResult(batch, records, report, outcomes, legal, str(path), seconds)


def write_row_report(root, batch: SeedBatch) -> tuple[dict, str]:
    """Report C and diagnostics D of a row, computed from its *published*
    boards (a rejected batch has none: FileNotFoundError), written to the
    ``calibration_report`` dataset."""
    from . import publish

    records = publish.read_partition(root, "boards", batch.key)
    fps = {r.get("batch_fingerprint") for r in records}
    if fps != {batch.batch_fingerprint}:
        raise ValueError(f"published boards of row {batch.row.key_text} were made from batch {sorted(map(str, fps))}, "
                         f"not {batch.batch_fingerprint}: regenerate the boards first")
    record = report_record(batch, evaluate_row(batch.row, records), records)
    path = publish.write_report(root, batch.key, record)
    return record, str(path)
