"""Helpers shared by the pipeline tests (tests/test_pipeline_*.py): fixture
tables copied to a temporary tables directory, the Definitions pointed at a
temporary warehouse, and running the calibration job the way the nightly
does (one validate-only run, then one run per row partition). No tests here."""

from __future__ import annotations

import hashlib
import shutil
from collections import Counter
from fractions import Fraction
from pathlib import Path

import dagster as dg
import numpy as np
import pyarrow.parquet as pq

from assets.automation import CALIBRATION_JOB, OVERLAY_SELECTION, POOLS_SELECTION, ROW_SELECTION, VALIDATE_SELECTION
from assets.definitions import build_definitions
from assets.partitions import board_rows
from assets.resources import BoardgenSettings
from boardgen_pipeline.steps.table_check import CHECK_EVERY_ROW

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pipeline"
N = 8  # boards per row in the tests: small and fast

# Dagster flags the preview/beta APIs the code location uses (partitioned check
# specs, observable source assets); the tests do not need to hear it every time.
QUIET = [
    "ignore::dagster.PreviewWarning",
    "ignore::dagster.BetaWarning",
]


def copy_fixture(name: str, dest: Path) -> Path:
    tables = dest / "tables"
    shutil.copytree(FIXTURES / name, tables)
    return tables


def settings_for(tables: Path, root: Path, samples: int = N, **extra) -> BoardgenSettings:
    return BoardgenSettings(tables_dir=str(tables), warehouse_root=str(root), samples=samples, master_seed=0, **extra)


def defs_for(tables: Path, root: Path, samples: int = N, **extra) -> dg.Definitions:
    return build_definitions(settings_for(tables, root, samples, **extra))


def job(defs: dg.Definitions) -> dg.JobDefinition:
    return defs.resolve_job_def(CALIBRATION_JOB)


class StoredRun:
    """An in-process run's result whose events are the ones its run stored
    (the instance's event log, in order). A step over a range of rows records
    its rows' events straight into the run's log, not through the step's
    event stream (``assets.calibration.emit``), so the log, which the UI and
    the nightly read, is the truth to test; the rest is the result's."""

    all_events: list

    def __init__(self, result, instance):
        self._result = result
        # read now: tests look at a result after its (temporary) instance is gone
        self.all_events = [e.dagster_event for e in instance.all_logs(result.run_id) if e.dagster_event is not None]

    def __getattr__(self, name):
        return getattr(self._result, name)

    def get_asset_check_evaluations(self):
        return dg.ExecuteInProcessResult.get_asset_check_evaluations(self)

    def get_asset_materialization_events(self):
        return dg.ExecuteInProcessResult.get_asset_materialization_events(self)


def execute(defs, instance, **kwargs) -> StoredRun:
    """``execute_in_process`` on the calibration job, its events read back from the run's log."""
    return StoredRun(job(defs).execute_in_process(instance=instance, raise_on_error=False, **kwargs), instance)


def run_validate(defs, instance):
    return execute(defs, instance, asset_selection=VALIDATE_SELECTION)


def run_partition(defs, instance, partition: str, selection=None):
    """One row partition's run, as the nightly, the schedule and the sensor
    launch it (``ROW_SELECTION``; ``OVERLAY_SELECTION`` for overlays alone)."""
    return execute(defs, instance, partition_key=partition, asset_selection=selection or ROW_SELECTION)


def run_request(defs, instance, request: dg.RunRequest):
    """Execute what a sensor or schedule asked for, as the daemon would launch
    it: one partition, a range of partitions (range tags) or none."""
    return execute(defs, instance, partition_key=request.partition_key, tags=dict(request.tags),
                   asset_selection=list(request.asset_selection))


def request_rows(request: dg.RunRequest, order: list[str]) -> list[str]:
    """The row partitions a request covers, in ``order``."""
    from assets.automation import RANGE_END, RANGE_START

    if request.partition_key is not None:
        return [request.partition_key]
    if RANGE_START not in request.tags:
        return []
    start, end = order.index(request.tags[RANGE_START]), order.index(request.tags[RANGE_END])
    return order[start:end + 1]


def run_overlays(defs, instance, partition: str):
    return run_partition(defs, instance, partition, OVERLAY_SELECTION)


def run_pools(defs, instance):
    """The unpartitioned run after every row: node-map draws and stratified figures."""
    return execute(defs, instance, asset_selection=POOLS_SELECTION)


def materialize_graph(defs, instance) -> tuple[dict, object]:
    """What ``python -m assets.nightly`` does, in process: validate, every
    partition, then the pools run. Returns the partition results and the
    pools run's result."""
    validate = run_validate(defs, instance)
    assert validate.success, "validation run failed"
    keys = instance.get_dynamic_partitions(board_rows.name)
    partitions = {k: run_partition(defs, instance, k) for k in keys}
    return partitions, run_pools(defs, instance)


def materialize_all(defs, instance) -> dict:
    """``materialize_graph``, the partition results only."""
    return materialize_graph(defs, instance)[0]


def checks_of(result) -> dict:
    """``{check_name: AssetCheckEvaluation}`` of one run, without the table-wide
    ``every_row_passes_f4`` (see :func:`table_check_of`)."""
    return {c.check_name: c for c in result.get_asset_check_evaluations() if c.check_name != CHECK_EVERY_ROW}


def table_check_of(result):
    """The run's ``every_row_passes_f4`` evaluation (issue 13), or None."""
    return next((c for c in result.get_asset_check_evaluations() if c.check_name == CHECK_EVERY_ROW), None)


def meta(evaluation) -> dict:
    """Plain metadata values of a check evaluation or materialization, with a
    row partition's ``figures`` JSON entry spread out (``assets.metadata``)."""
    out = {k: getattr(v, "value", v) for k, v in evaluation.metadata.items()}
    figures = out.pop("figures", None)
    return {**out, **figures} if isinstance(figures, dict) else out


def materialized(result) -> set[str]:
    return {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}


def step_failures(result) -> dict:
    return {e.step_key: e.step_failure_data for e in result.all_events if e.event_type_value == "STEP_FAILURE"}


def files_state(root: Path) -> dict:
    """``{relative path: (sha256, mtime_ns)}`` of every Parquet file under ``root``."""
    out = {}
    for path in sorted(Path(root).rglob("*.parquet")):
        out[str(path.relative_to(root))] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return out


def parquet_records(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def expected_figures(records: list[dict], target: float) -> dict:
    """The numbers the checks must report, computed here from the Parquet
    records on their own (not through ``batch.evaluate_row``)."""
    t = Fraction(str(target))
    below = [r["scope"] for r in records
             if Fraction(r["revealed"], r["safe_count"]) < t or Fraction(r["revealed_core"], r["safe_core"]) < t]
    infer = np.array([r["inferability"] for r in records], dtype=float)
    exits = Counter(r["exit"] for r in records)
    return {
        "below": below,
        "illegal": [r["scope"] for r in records if r["illegal"]],
        "p10": float(np.percentile(infer, 10)),
        "p50": float(np.percentile(infer, 50)),
        "p90": float(np.percentile(infer, 90)),
        "exits": {e: exits.get(e, 0) for e in ("passed", "best_legal", "least_bad")},
    }
