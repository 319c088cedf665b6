"""Which rows a run shows red, and what it says of them (SPEC 9 "asset
checks"; seed 001 F4; docs/decisions/partition-verdicts.md).

A row is red when its batch fails an F4 assertion of error severity,
published (A, A'', B, B', F as a criterion) or withheld (A'), or when its
boards changed without a change of the row (``steps.determinism``): the code
location records it as an observation, not a materialization, and fails its
step once everything is recorded (``boardgen_dagster.calibration``). This
module holds the words: why a row is red (:func:`why_red`), what the step's
failure says (:func:`failure_text`), and the verdicts that read other rows
judged again for the rows an edit did not make (:func:`rejudged`). Plain
data in, plain text out; no Dagster.
"""

from __future__ import annotations

from boardgen_pipeline.steps import determinism, row_checks
from boardgen_pipeline.steps.chain import BOARDS, RowResult
from boardgen_pipeline.tables.board_gen import key_text
from boardgen_pipeline.words import count, noun


def why_red(result: RowResult) -> dict[str, str]:
    """Why a row is red, ``{what: words}``: each failing F4 assertion of error
    severity (``{"A": "14 of 256 boards below target 0.99"}``), or its boards
    changed without a change of the row (``drift``); empty for a row that
    passes (warnings allowed)."""
    if result.reproduction is not None and result.reproduction.kind == determinism.DRIFT:
        return {"drift": f"{result.reproduction.differing} boards changed without a change of the row (first: "
                         f"scope {result.reproduction.scope}); the stored files are kept"}
    return {o.assertion: o.description for o in row_checks.failing(result.outcomes.get(BOARDS, ()))}


def verdict(result: RowResult) -> str:
    """The row's F4 line as its page leads with it: ``FAIL:`` and each reason
    it is red, else ``row_checks.verdict_line``."""
    red = why_red(result)
    if red:
        return "FAIL: " + "; ".join(f"{k}: {v}" for k, v in red.items())
    return row_checks.verdict_line(result.outcomes.get(BOARDS, ()))


def published(result: RowResult) -> str:
    """Whether a red row's boards are in the warehouse, in words."""
    if not result.published:
        return "no: the batch is withheld (A'), in _rejected/"
    if BOARDS not in result.digests:
        return "no: the stored boards are kept"
    return "yes: the boards are in the warehouse, failing"


def red(made: list[RowResult]) -> dict[str, dict[str, str]]:
    """The red rows of ``made``, ``{partition: why_red}``."""
    return {r.partition_key: why for r in made if (why := why_red(r))}


def run_failure(made: list[RowResult], raised: list[str], edited: dict[str, str]) -> tuple[str, dict] | None:
    """What fails a step once everything is recorded: its words
    (:func:`failure_text`) and metadata (``verdict_only``: nothing raised, the
    run failed on its rows' verdicts, which ``boardgen nightly`` counts as
    failed checks, exit 3, not as a failed run; ``failing_rows``; ``edited``),
    None when no row is red and none raised."""
    found = red(made)
    if not found and not raised:
        return None
    metadata = {"verdict_only": not raised, "failing_rows": found, **({"edited": edited} if edited else {})}
    return failure_text(found, len(made) + len(raised), raised, edited), metadata


def failure_text(red: dict[str, dict[str, str]], rows: int, raised: list[str], edited: dict[str, str]) -> str:
    """What a run's failure says: the ``red`` rows (``{partition: why_red}``)
    of its ``rows``, with what an edit changed in each, and the rows that
    raised; empty when there are neither."""
    parts = []
    if red:
        named = "; ".join(f"{pk} ({', '.join(why)}" + (f"; edited: {edited[pk]}" if pk in edited else "") + ")"
                          for pk, why in red.items())
        parts.append(f"F4 fails on {len(red)} of {count(rows, 'row')}: {named}. "
                     + noun(len(red), "It reads", "Each reads")
                     + " as failed in the Partitions tab of boards, its verdict and figures on its partition page")
    if raised:
        parts.append(f"{len(raised)} of {count(rows, 'row')} failed: " + "; ".join(raised[:5]))
    return ". ".join(parts)


def rejudged(catalog, current: dict[str, dict], made: list[tuple[int, int]]) -> dict[str, dict]:
    """``{partition: {label: text}}``: for each row of an edited row's level
    that the run did not make (``made``: the rows it did), its verdicts that
    read other rows (E) judged again on the table now, and its F4 line with
    them (``row_checks.cross_row_records``: its stored E was judged with its
    neighbours as they were). Every such row, whether its E changed or not,
    so a revert puts its page back too. ``current``: every row's current
    verdicts, E judged on the table now (``table_check.TableVerdicts.current``,
    what the run's checks read). Rows without a current verdict are left to
    their own run."""
    from boardgen_pipeline.calibration.fingerprints import partition_key

    table = catalog.board_gen
    if not table.header.monotone_in_depth or not made:
        return {}
    done = set(made)
    keys = [k for k in table.keys() if k[0] in {key[0] for key in done} and k not in done]
    changed = ", ".join(key_text(k) for k in sorted(done))
    out = {}
    for key in keys:
        pk = partition_key(key)
        checks = current.get(pk, {})
        found = [row_checks.outcome_of(r) for name, r in checks.items()
                 if name not in row_checks.CROSS_ROW and r["asset"] == BOARDS]
        if not found:
            continue
        again = [row_checks.outcome_of(r) for name, r in checks.items() if name in row_checks.CROSS_ROW]
        page = {"F4": row_checks.verdict_line([*found, *again])}
        page.update({f"{o.assertion} ({o.name})": "pass" if o.passed else f"warning: {o.description}" for o in again})
        page["re-judged"] = (f"row {changed} changed: E compares the rows of level {key[0]}, so row "
                             f"{key_text(key)} is judged again on the table now (its boards did not change)")
        out[pk] = page
    return out
