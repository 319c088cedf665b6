"""``boardgen verify --regenerate``: the nightly's determinism check on
demand, writing nothing (seed 000 "同种子同参数必产同图"; ``steps.determinism``).
Each row whose fingerprint did not change is generated again on the row pool
and held against its stored boards."""

from __future__ import annotations

from dataclasses import dataclass

from boardgen_pipeline.steps.determinism import Reproduction, compare


@dataclass(frozen=True)
class Regenerated:
    """``verify --regenerate`` of one row: ``kind`` as :func:`compare` says
    (``stale``: the row's stored boards are of another row version, nothing
    to compare)."""

    key: tuple[int, int]
    kind: str
    found: Reproduction | None = None


def regenerate(root, catalog, keys, samples: int, master_seed: int = 0, pool=None):
    """Regenerate the boards of ``keys`` (on ``pool``) and compare each row with
    its stored boards, writing nothing; yields a :class:`Regenerated` per
    row as it is done."""
    from boardgen_pipeline.calibration.fingerprints import fingerprints_now, partition_key
    from boardgen_pipeline.steps import chain, currency, publish_rows
    from boardgen_pipeline.steps.pool import RowPool

    now = fingerprints_now(catalog.board_gen, samples, master_seed)
    stored = currency.fingerprints_stored(root, {partition_key(k): now[partition_key(k)] for k in keys})
    comparable = [k for k in keys if stored.get(partition_key(k)) == now[partition_key(k)]]
    for key in keys:
        if key not in comparable:
            yield Regenerated(key, "stale")
    own = pool is None
    pool = pool or RowPool(1).__enter__()
    try:
        tasks = publish_rows.row_tasks(root, catalog, comparable, samples, master_seed, stages=(chain.BOARDS,))
        for outcome in pool.map_unordered(chain.run_row, tasks):
            if outcome.error is not None:
                raise outcome.error
            result = outcome.result
            boards = result.file(chain.BOARDS)
            found = compare(root, result.key, boards.data, boards.digest, result.figures[chain.BOARDS]["batch_fingerprint"])
            yield Regenerated(result.key, found.kind, found)
    finally:
        if own:
            pool.__exit__(None, None, None)
