"""The verdict of each check of one row, kept as data beside the row's files
(SPEC 7 "assertions", SPEC 9 "asset checks"; seed 001 F4; seed 003
"验收"; fewer, richer events).

A row's chain evaluates the F4 assertions on its boards and the overlay
checks on its overlays (``steps.chain``); each verdict becomes one record of
the row's ``row_checks`` file: which asset and check, passed or not, its
severity, its one-line description, its figures (the outcome's metadata, as
canonical JSON) and, when it failed, its pictures (markdown), with the
fingerprint of what it judged (the batch for F4, the overlays for the overlay
checks). The Dagster checks are table-wide (``steps.table_check``): each reads
every row's record of its check in one scan, so a run records a handful of
check events however many rows it holds, and ``select * from row_checks where
not passed`` answers "which rows fail what" in SQL.
"""

from __future__ import annotations

import json

import pyarrow as pa

from boardgen_pipeline.canonical import canonical_json
from boardgen_pipeline.outcomes import CheckOutcome

DATASET = "row_checks"
ALWAYS_PICTURED = frozenset({"f_mean_survival"})  # checks whose pictures a passing row keeps
CROSS_ROW = frozenset({"e_monotone_in_depth"})  # checks whose verdict reads the row's neighbours
SCHEMA = pa.schema([
    ("asset", pa.string()),
    ("check", pa.string()),
    ("assertion", pa.string()),
    ("passed", pa.bool_()),
    ("severity", pa.string()),
    ("description", pa.string()),
    ("figures", pa.string()),
    ("pictures", pa.string()),
    ("fingerprint", pa.string()),
])


def records(outcomes: dict[str, list[CheckOutcome]], fingerprints: dict[str, str]) -> list[dict]:
    """One record per outcome, asset by asset in the order given. Pictures are
    kept for a failed check only: a passing row's histogram is one query away
    (``board_metrics``), and a file of pictures per row would be most of it.
    Check F keeps its two text pictures on every row: the row's page shows
    what a perfect player risks whether or not a floor is set."""
    out = []
    for asset, found in outcomes.items():
        for o in found:
            kept = o.pictures if not o.passed or o.name in ALWAYS_PICTURED else {}
            out.append({"asset": asset, "check": o.name, "assertion": o.assertion, "passed": bool(o.passed),
                        "severity": o.severity, "description": o.description, "figures": canonical_json(o.metadata),
                        "pictures": canonical_json(kept),
                        "fingerprint": fingerprints.get(asset, "")})
    return out


def table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def outcome_of(record: dict) -> CheckOutcome:
    """A stored verdict back as an outcome (its figures and pictures parsed)."""
    return CheckOutcome(name=record["check"], assertion=record["assertion"], passed=bool(record["passed"]),
                        severity=record["severity"], blocking=False, description=record["description"],
                        metadata=json.loads(record["figures"] or "{}"), pictures=json.loads(record["pictures"] or "{}"))


def verdict_line(outcomes: list[CheckOutcome]) -> str:
    """A row's F4 verdict in one line (what its partition page leads with):
    ``pass``, ``pass (warning: E)``, or ``FAIL:`` and each failing assertion's
    one-line description."""
    failed = [o for o in outcomes if not o.passed and o.severity == "error"]
    warned = [o for o in outcomes if not o.passed and o.severity != "error"]
    if failed:
        return "FAIL: " + "; ".join(f"{o.assertion}: {o.description}" for o in failed)
    return "pass" + (" (warning: " + "; ".join(o.assertion for o in warned) + ")" if warned else "")


def failing(outcomes: list[CheckOutcome]) -> list[CheckOutcome]:
    """The outcomes of error severity that fail: what turns a row red."""
    return [o for o in outcomes if not o.passed and o.severity == "error"]


def cross_row_records(table, fingerprints: dict[str, str]) -> dict[str, dict]:
    """``{partition: {check: record}}``: every row's verdicts of
    :data:`CROSS_ROW` judged on ``table`` as it is now, as records of this
    dataset; ``fingerprints``: each row's batch fingerprint now (a record says
    what it judged)."""
    from boardgen_pipeline.calibration.assertions import monotone_outcomes
    from boardgen_pipeline.calibration.fingerprints import partition_key

    out = {}
    for key, outcome in monotone_outcomes(table).items():
        pk = partition_key(key)
        [record] = records({"boards": [outcome]}, {"boards": fingerprints.get(pk, "")})
        out[pk] = {outcome.name: record}
    return out
