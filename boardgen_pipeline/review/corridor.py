"""The rows a table change takes out of their corridor (SPEC 12: the target
curve is "a corridor the nightly checks"; ``diff`` and ``watch`` say it
before the nightly does; docs/review.md).

A modified row is judged on both versions' boards of the diff, an added row
on its head boards, by the corridor's one rule (``tuning.corridor.judge``),
as ``review.diff`` computes the row: on the very records and the very report
its F4 verdicts read, so nothing is generated or evaluated again, and a row
the watch remembers keeps its verdicts. A row that is out at HEAD and was not
at BASE (or is new) *leaves* its corridor, and is named in the diff's notes,
which every format prints. The targets are HEAD's (``curve_targets.toml`` of
the tables compared to).
"""

from __future__ import annotations

from boardgen_pipeline.tuning import corridor, figures


def target_of(source, key: tuple[int, int]):
    """Row ``key``'s target in ``source``'s targets file (None: no file, or no target for the row)."""
    targets = source.catalog.targets if source.catalog is not None else None
    return targets.rows.get(key) if targets is not None else None


def verdict(target, records: list[dict], report: dict) -> corridor.Verdict | None:
    """The row's corridor verdict on ``records`` (``report``: their row report), None without a target."""
    return None if target is None else corridor.judge(target, figures.estimate(target.figure, records, report))


def departures(rows) -> list[str]:
    """One note a row of ``rows`` (the diff's) that leaves its corridor (module docstring)."""
    out = []
    for row in rows:
        before, after = row.corridor
        if after is not None and corridor.left(before, after):
            was = "" if before is None else f" (was {before.estimate.value:.3f}, {before.state})"
            out.append(f"corridor: row {after.key_text} leaves its corridor: {after.text()}{was}")
    return out
