"""Run settings as a configurable resource: tables directory, warehouse root,
batch size N and master seed (SPEC 7; issue 3 "configurable").

Defaults come from the environment when the code location loads
(``BOARDGEN_TABLES``, ``BOARDGEN_WAREHOUSE`` as honoured by
``board_gen.default_tables_dir`` and ``datasets.default_root``, plus
``BOARDGEN_SAMPLES``, ``BOARDGEN_MASTER_SEED`` and
``BOARDGEN_NODE_MAP_ADVENTURES``); a run can override them
in its run config (``resources: {settings: {config: {samples: 64}}}``).
"""


import os
from contextlib import contextmanager
from pathlib import Path

import dagster as dg

from boardgen_pipeline import catalog
from boardgen_pipeline.calibration.batch import DEFAULT_SAMPLES
from boardgen_pipeline.steps.draw_node_maps import DEFAULT_ADVENTURES
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


class DaskCluster(dg.ConfigurableResource):
    """Where a row's batch is generated (issue 7 "Fan-out").

    ``mode``: ``in_process`` (default: no cluster, the batch runs in the step's
    process), ``local`` (a ``distributed.LocalCluster`` of ``local_workers``
    processes for the step), or ``scheduler`` (an existing cluster at
    ``scheduler_address``, e.g. ``tcp://dask-scheduler:8786``). The records
    are identical in every mode. Set from the environment with
    ``BOARDGEN_DASK`` or ``BOARDGEN_DASK_SCHEDULER`` (scheduler mode) or ``BOARDGEN_DASK_LOCAL_WORKERS``
    (local mode), or per run in run config."""

    mode: str = "in_process"
    scheduler_address: str = ""
    local_workers: int = 2

    @contextmanager
    def client(self):
        if self.mode == "in_process":
            yield None
            return
        from distributed import Client, LocalCluster

        if self.mode == "scheduler":
            if not self.scheduler_address:
                raise dg.Failure("dask mode 'scheduler' needs scheduler_address", allow_retries=False)
            with Client(self.scheduler_address) as client:
                yield client
        elif self.mode == "local":
            with LocalCluster(n_workers=self.local_workers, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                yield client
        else:
            raise dg.Failure(f"unknown dask mode {self.mode!r}: in_process, local or scheduler",
                             allow_retries=False)


def dask_from_env() -> DaskCluster:
    # BOARDGEN_DASK (issue 12) and BOARDGEN_DASK_SCHEDULER (issue 7) name the same thing.
    address = os.environ.get("BOARDGEN_DASK", "") or os.environ.get("BOARDGEN_DASK_SCHEDULER", "")
    local = os.environ.get("BOARDGEN_DASK_LOCAL_WORKERS", "")
    if address:
        return DaskCluster(mode="scheduler", scheduler_address=address)
    if local:
        return DaskCluster(mode="local", local_workers=int(local))
    return DaskCluster()


def settings_from_env() -> BoardgenSettings:
    return BoardgenSettings(
        tables_dir=str(board_gen.default_tables_dir()),
        warehouse_root=str(datasets.default_root()),
        samples=int(os.environ.get("BOARDGEN_SAMPLES", DEFAULT_SAMPLES)),
        master_seed=int(os.environ.get("BOARDGEN_MASTER_SEED", 0)),
        node_map_adventures=int(os.environ.get("BOARDGEN_NODE_MAP_ADVENTURES", DEFAULT_ADVENTURES)),
    )
