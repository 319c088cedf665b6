"""Run settings as configurable resources: tables directory, warehouse root,
batch size N and master seed (SPEC 7; issue 3 "configurable"); where the
rows run (issue 22).

Defaults come from the environment when the code location loads
(``BOARDGEN_TABLES``, ``BOARDGEN_WAREHOUSE`` as honoured by
``board_gen.default_tables_dir`` and ``datasets.default_root``, plus
``BOARDGEN_SAMPLES``, ``BOARDGEN_MASTER_SEED`` and
``BOARDGEN_NODE_MAP_ADVENTURES``); a run can override them
in its run config (``resources: {settings: {config: {samples: 64}}}``).
"""


import os
from pathlib import Path

import dagster as dg

from boardgen_pipeline import catalog
from boardgen_pipeline.calibration.batch import DEFAULT_SAMPLES
from boardgen_pipeline.steps.draw_node_maps import DEFAULT_ADVENTURES
from boardgen_pipeline.steps.pool import RowPool, default_workers, workers_for
from boardgen_pipeline.tables import board_gen
from boardgen_pipeline.warehouse import datasets


class BoardgenSettings(dg.ConfigurableResource):
    """Where the tables and the warehouse are, how big a batch is, and how
    many adventures the node-map draws simulate."""

    tables_dir: str
    warehouse_root: str
    samples: int = DEFAULT_SAMPLES
    master_seed: int = 0
    node_map_adventures: int = DEFAULT_ADVENTURES

    @property
    def table_file(self) -> Path:
        return Path(self.tables_dir) / board_gen.DEFAULT_TABLE

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
    """Where a run's rows run (issue 22 "Every core", "Past one machine").

    ``dask_scheduler`` (``tcp://host:port``): every row's whole chain (boards,
    checks, overlays, report) runs on that Dask cluster; the step writes what
    the workers return, so the workers need no access to the warehouse.
    ``dask_local_workers``: a ``distributed.LocalCluster`` of that many
    processes for the step. Otherwise ``workers`` local processes (0: every
    core, fewer when the run has few rows; 1: in the step's own process).
    The files are the same bytes wherever the rows run. Set from the
    environment with ``BOARDGEN_DASK`` (alias ``BOARDGEN_DASK_SCHEDULER``),
    ``BOARDGEN_DASK_LOCAL_WORKERS`` and ``BOARDGEN_WORKERS``, or per run in
    run config."""

    workers: int = 0
    dask_scheduler: str = ""
    dask_local_workers: int = 0
    # how long a run waits for a cluster that lost every worker before it fails (the next run makes the rows)
    dask_wait_seconds: float = 60.0

    def pool(self, rows: int) -> RowPool:
        if self.dask_scheduler:
            return RowPool(dask_address=self.dask_scheduler, workerless_seconds=self.dask_wait_seconds)
        if self.dask_local_workers:
            return RowPool(dask_local_workers=self.dask_local_workers)
        if self.workers:
            return RowPool(max(1, min(self.workers, rows)))
        return RowPool(workers_for(rows, default_workers()))


def workers_from_env() -> RowWorkers:
    address = os.environ.get("BOARDGEN_DASK", "") or os.environ.get("BOARDGEN_DASK_SCHEDULER", "")
    return RowWorkers(workers=int(os.environ.get("BOARDGEN_WORKERS") or 0), dask_scheduler=address,
                      dask_local_workers=int(os.environ.get("BOARDGEN_DASK_LOCAL_WORKERS") or 0),
                      dask_wait_seconds=float(os.environ.get("BOARDGEN_DASK_WAIT_SECONDS") or 60))


def settings_from_env() -> BoardgenSettings:
    return BoardgenSettings(
        tables_dir=str(board_gen.default_tables_dir()),
        warehouse_root=str(datasets.default_root()),
        samples=int(os.environ.get("BOARDGEN_SAMPLES", DEFAULT_SAMPLES)),
        master_seed=int(os.environ.get("BOARDGEN_MASTER_SEED", 0)),
        node_map_adventures=int(os.environ.get("BOARDGEN_NODE_MAP_ADVENTURES", DEFAULT_ADVENTURES)),
    )
