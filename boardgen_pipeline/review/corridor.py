"""The rows a table change takes out of their corridor (SPEC 12: the target
curve is "a corridor the nightly checks"; ``diff`` and ``watch`` say it
before the nightly does; docs/review.md).

A modified row is judged on both versions' boards of the diff (the very
records the diff compared, read back from its store: nothing generated
again), an added row on its head boards, by the corridor's one rule
(``tuning.corridor.judge``); a row that is out at HEAD and was not at BASE
(or is new) *leaves* its corridor, and is named in the diff's notes, which
every format prints. The targets are HEAD's (``curve_targets.toml`` of the
tables compared to).
"""

from __future__ import annotations

from boardgen_pipeline.calibration.batch import batch_scopes, evaluate_row
from boardgen_pipeline.review import diff, pairing
from boardgen_pipeline.tuning import corridor, figures


def _verdict(target, version, header, scopes, master_seed, store) -> corridor.Verdict | None:
    try:
        records = pairing.boards(version, header, scopes, master_seed, store).records
    except pairing.NotRebuildable:
        return None
    report = evaluate_row(version.row, records).as_dict()
    return corridor.judge(target, figures.estimate(target.figure, records, report))


def departures(result: diff.CalibrationDiff, store: pairing.StoredBoards) -> list[str]:
    """One note a row that leaves its corridor (module docstring)."""
    catalog = result.head.catalog
    targets = catalog.targets if catalog is not None else None
    if targets is None:
        return []
    s = result.settings
    out = []
    for row in result.rows:
        target = targets.rows.get(row.key)
        if target is None or row.state not in (diff.MODIFIED, diff.ADDED):
            continue
        scopes = batch_scopes(*row.key, s.samples)
        after = _verdict(target, result.head.rows[row.key], result.head.header, scopes, s.master_seed, store)
        before = (_verdict(target, result.base.rows[row.key], result.base.header, scopes, s.master_seed, store)
                  if row.state == diff.MODIFIED else None)
        if after is not None and corridor.left(before, after):
            was = "" if before is None else f" (was {before.estimate.value:.3f}, {before.state})"
            out.append(f"corridor: row {after.key_text} leaves its corridor: {after.text()}{was}")
    return out
