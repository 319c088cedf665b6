"""A run's settings as configurable resources (SPEC 7 the batch; SPEC 9;
``boardgen_pipeline.settings`` decides every domain).

A field left unset takes its value from the environment *when the run
starts*, never when the code location loads: a bad ``BOARDGEN_SAMPLES`` or a
launchpad value out of its domain fails the run with the same one sentence
``boardgen nightly`` prints, and the code location keeps loading. The nightly
(``boardgen nightly``, the schedule) passes every setting as run config.
"""

import dagster as dg

from boardgen_pipeline import catalog, settings
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.steps import pool

# resource field -> the setting it gives (boardgen_pipeline.settings)
SETTING_OF = {"tables_dir": "tables", "warehouse_root": "warehouse", "samples": "samples",
              "master_seed": "master_seed", "node_map_adventures": "adventures", "keep_days": "keep_days",
              "keep_runs": "keep_runs"}
WORKER_SETTING_OF = {"workers": "run_workers", "dask_scheduler": "dask", "dask_wait_seconds": "dask_wait_seconds"}


def _resolve(resource, mapping: dict, names) -> settings.Settings:
    given = {mapping[f]: getattr(resource, f) for f in mapping if getattr(resource, f) is not None}
    if getattr(resource, "tables_source", None):
        given["tables_source"] = resource.tables_source
    found, bad = settings.resolve(given, names=names, prog="run config", given_as="config")
    if bad:
        raise dg.Failure(description=TableError(bad).report().replace("table violation", "setting violation"),
                         allow_retries=False)
    return found


class BoardgenSettings(dg.ConfigurableResource):
    """Where the tables and the warehouse are, how big a batch is, how many
    adventures the node-map draws simulate, what retention keeps. Unset:
    the environment's value when the run starts, else the default."""

    tables_dir: str | None = None
    warehouse_root: str | None = None
    samples: int | None = None
    master_seed: int | None = None
    node_map_adventures: int | None = None
    keep_days: int | None = None
    keep_runs: int | None = None
    # a night's tables are a pinned copy: the folder it was copied from, which messages and commands name
    tables_source: str | None = None

    def resolved(self) -> settings.Settings:
        """Every setting, checked (a ``dg.Failure`` with one sentence a violation)."""
        return _resolve(self, SETTING_OF, tuple(SETTING_OF.values()))

    def load_catalog(self, resolved: settings.Settings | None = None) -> catalog.Catalog:
        """Every table of the folder, validated together: exactly what
        ``boardgen validate`` checks (a TableError lists every violation)."""
        found = resolved or self.resolved()
        return catalog.load_catalog(found.tables, shown_as=found.tables_source)


class RowWorkers(dg.ConfigurableResource):
    """Where a run computes its rows: in its own process (the default: runs
    are what spreads the work, each recording its own rows), in ``workers``
    local processes, or on the Dask cluster at ``dask_scheduler``, whose
    workers need the package but not the warehouse (the run writes what they
    return). The files are the same bytes wherever the rows run."""

    workers: int | None = None
    dask_scheduler: str | None = None
    # how long a run waits for a cluster that lost every worker before it fails (the next run makes the rows)
    dask_wait_seconds: float | None = None

    def pool(self, rows: int) -> pool.RowPool:
        found = _resolve(self, WORKER_SETTING_OF, tuple(WORKER_SETTING_OF.values()))
        return pool.build(rows, found.run_workers, found.dask, workerless_seconds=found.dask_wait_seconds)


def run_config(found: settings.Settings) -> dict:
    """The run config that carries ``found`` to every run of a night."""
    config = {"tables_dir": str(found.tables), "warehouse_root": str(found.warehouse), "samples": found.samples,
              "master_seed": found.master_seed, "node_map_adventures": found.adventures,
              "keep_days": found.keep_days}
    if found.keep_runs is not None:
        config["keep_runs"] = found.keep_runs
    if found.tables_source is not None:
        config["tables_source"] = str(found.tables_source)
    workers = {"workers": found.run_workers, "dask_scheduler": found.dask, "dask_wait_seconds": found.dask_wait_seconds}
    return {"resources": {"settings": {"config": config}, "workers": {"config": workers}}}
