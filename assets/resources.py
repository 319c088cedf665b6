"""Run settings as configurable resources: tables directory, warehouse root,
batch size N, master seed, node-map adventures (SPEC 7; issue 3
"configurable"), and where a run's rows are computed (issue 22, 28).

Defaults come from the environment when the code location loads
(``BOARDGEN_TABLES``, ``BOARDGEN_WAREHOUSE``, ``BOARDGEN_SAMPLES``,
``BOARDGEN_MASTER_SEED``, ``BOARDGEN_NODE_MAP_ADVENTURES``,
``BOARDGEN_DASK``); a run can override them in its run config
(``resources: {settings: {config: {samples: 64}}}``).
"""

import os
from pathlib import Path

import dagster as dg

from boardgen_pipeline import catalog, paths
from boardgen_pipeline.board.rng import DEFAULT_SAMPLES
from boardgen_pipeline.steps import pool
from boardgen_pipeline.steps.draw_node_maps import DEFAULT_ADVENTURES
from boardgen_pipeline.tables import board_gen


class BoardgenSettings(dg.ConfigurableResource):
    """Where the tables and the warehouse are, how big a batch is, and how
    many adventures the node-map draws simulate."""

    tables_dir: str
    warehouse_root: str
    samples: int = DEFAULT_SAMPLES
    master_seed: int = 0
    node_map_adventures: int = DEFAULT_ADVENTURES

    @property
    def root(self) -> Path:
        return Path(self.warehouse_root)

    def load_catalog(self) -> catalog.Catalog:
        """Every table of the directory, validated together: exactly what
        ``boardgen validate`` checks (a TableError lists every violation)."""
        return catalog.load_catalog(self.tables_dir)

    def load_table(self) -> board_gen.BoardGenTable:
        return self.load_catalog().board_gen


class RowWorkers(dg.ConfigurableResource):
    """Where a run computes its rows: in its own process (the default: runs
    are what spreads the work, each recording its own rows), in ``workers``
    local processes, or on the Dask cluster at ``dask_scheduler``, whose
    workers need the package but not the warehouse (the run writes what they
    return). The files are the same bytes wherever the rows run."""

    workers: int = 1
    dask_scheduler: str = ""
    # how long a run waits for a cluster that lost every worker before it fails (the next run makes the rows)
    dask_wait_seconds: float = 60.0

    def pool(self, rows: int) -> pool.RowPool:
        return pool.build(rows, self.workers, self.dask_scheduler, workerless_seconds=self.dask_wait_seconds)


def workers_from_env() -> RowWorkers:
    return RowWorkers(workers=int(os.environ.get("BOARDGEN_RUN_WORKERS") or 1),
                      dask_scheduler=pool.dask_address_from(os.environ)[0],
                      dask_wait_seconds=float(os.environ.get("BOARDGEN_DASK_WAIT_SECONDS") or 60))


def settings_from_env() -> BoardgenSettings:
    return BoardgenSettings(
        tables_dir=str(paths.default_tables_dir()),
        warehouse_root=str(paths.default_warehouse()),
        samples=int(os.environ.get("BOARDGEN_SAMPLES") or DEFAULT_SAMPLES),
        master_seed=int(os.environ.get("BOARDGEN_MASTER_SEED") or 0),
        node_map_adventures=int(os.environ.get("BOARDGEN_NODE_MAP_ADVENTURES") or DEFAULT_ADVENTURES),
    )
