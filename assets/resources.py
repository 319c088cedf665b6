"""Run settings as a configurable resource: tables directory, warehouse root,
batch size N and master seed (SPEC 7; issue 3 "configurable").

Defaults come from the environment when the code location loads
(``BOARDGEN_TABLES``, ``BOARDGEN_WAREHOUSE`` as honoured by
``tables.default_tables_dir`` and ``warehouse.default_root``, plus
``BOARDGEN_SAMPLES``, ``BOARDGEN_MASTER_SEED`` and
``BOARDGEN_NODE_MAP_ADVENTURES``); a run can override them
in its run config (``resources: {settings: {config: {samples: 64}}}``).
"""


import os
from pathlib import Path

import dagster as dg

from boardgen_pipeline import catalog, tables, warehouse
from boardgen_pipeline.batch import DEFAULT_SAMPLES
from boardgen_pipeline.nodemap_batch import DEFAULT_ADVENTURES


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
        return Path(self.tables_dir) / tables.DEFAULT_TABLE

    @property
    def root(self) -> Path:
        return Path(self.warehouse_root)

    def load_catalog(self) -> catalog.Catalog:
        """Every table of the directory, validated together: exactly what
        ``boardgen validate`` checks (a TableError lists every violation)."""
        return catalog.load_catalog(self.tables_dir)

    def load_table(self) -> tables.BoardGenTable:
        return self.load_catalog().board_gen


def settings_from_env() -> BoardgenSettings:
    return BoardgenSettings(
        tables_dir=str(tables.default_tables_dir()),
        warehouse_root=str(warehouse.default_root()),
        samples=int(os.environ.get("BOARDGEN_SAMPLES", DEFAULT_SAMPLES)),
        master_seed=int(os.environ.get("BOARDGEN_MASTER_SEED", 0)),
        node_map_adventures=int(os.environ.get("BOARDGEN_NODE_MAP_ADVENTURES", DEFAULT_ADVENTURES)),
    )
