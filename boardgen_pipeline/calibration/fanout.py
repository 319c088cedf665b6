"""Fan a row's batch out over a Dask cluster (issue 7 "Fan-out"; SPEC 9
"one partition = one unit of work ... a Dask cluster can spread it").

A batch is scopes ``sigma(L, D) + i``; each board depends only on its own
scope (``derive_at`` is pure), so the scopes can be generated anywhere, in
any order, and put back in scope order: the records are bit-identical to
the in-process path. The cluster is reached through a ``distributed.Client``
the caller owns (the Dagster resource in ``assets/resources.py`` makes one
from a scheduler address, or a ``LocalCluster``); nothing here starts or
stops a cluster.
"""

from __future__ import annotations

from boardgen_pipeline.board.generator import generate_batch_from_row
from boardgen_pipeline.tables.board_gen import BoardGenRow

DEFAULT_CHUNK = 32


def _chunk(row: BoardGenRow, spawn_side: int, dig_ap_cost: int, scopes: range, master_seed: int) -> list[dict]:
    """Worker side: the metrics records of a run of scopes."""
    return [g.metrics for g in generate_batch_from_row(row, spawn_side, scopes, master_seed, dig_ap_cost)]


def chunks(scopes: range, size: int = DEFAULT_CHUNK) -> list[range]:
    return [range(s, min(s + size, scopes.stop)) for s in range(scopes.start, scopes.stop, size)]


def generate_on_cluster(client, row: BoardGenRow, spawn_side: int, dig_ap_cost: int, scopes: range,
                        master_seed: int = 0, chunk: int = DEFAULT_CHUNK) -> list[dict]:
    """The records of ``scopes`` computed on the cluster behind ``client``,
    in scope order."""
    parts = chunks(scopes, chunk)
    futures = [client.submit(_chunk, row, spawn_side, dig_ap_cost, part, master_seed, pure=False)
               for part in parts]
    out: list[dict] = []
    for part in client.gather(futures):
        out.extend(part)
    return out
