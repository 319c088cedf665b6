"""Helpers shared by the pipeline tests (tests/test_pipeline_*.py): fixture
tables copied to a temporary tables directory, the Definitions pointed at a
temporary warehouse, and the runs the nightly makes (the tables and draws,
the rows over a range of partitions, the table-wide checks), executed in
process. No tests here."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import Counter
from fractions import Fraction
from pathlib import Path

import dagster as dg
import numpy as np
import pyarrow.parquet as pq

from boardgen_dagster.definitions import build_definitions
from boardgen_dagster.names import CALIBRATION_JOB, PARTITIONS, PREPARE_JOB, ROWS_JOB, TABLE_JOB, TABLES, range_tags
from boardgen_dagster.resources import BoardgenSettings

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pipeline"
N = 8  # boards per row in the tests: small and fast


def copy_fixture(name: str, dest: Path) -> Path:
    tables = dest / "tables"
    shutil.copytree(FIXTURES / name, tables)
    return tables


def settings_for(tables: Path, root: Path, samples: int = N, **extra) -> BoardgenSettings:
    return BoardgenSettings(tables_dir=str(tables), warehouse_root=str(root), samples=samples, master_seed=0, **extra)


def defs_for(tables: Path, root: Path, samples: int = N, **extra) -> dg.Definitions:
    return build_definitions(settings_for(tables, root, samples, **extra))


def execute(defs, instance, job: str = CALIBRATION_JOB, asset_selection=None, check_selection=None, **kwargs):
    """One run of ``job`` in process (its selection narrowed as a launched run
    request narrows it: assets and, explicitly, checks)."""
    job_def = defs.resolve_job_def(job)
    if asset_selection is not None or check_selection is not None:
        job_def = job_def.get_subset(
            asset_selection=set(dg.AssetKey(a) if isinstance(a, str) else a for a in (asset_selection or ())),
            asset_check_selection=None if check_selection is None else set(check_selection))
    return job_def.execute_in_process(instance=instance, raise_on_error=False, **kwargs)


def run_prepare(defs, instance, **kwargs):
    """The tables observed and validated (partitions registered), the draws."""
    return execute(defs, instance, PREPARE_JOB, **kwargs)


def run_validate(defs, instance):
    return execute(defs, instance, PREPARE_JOB, asset_selection=TABLES)


def run_rows(defs, instance, keys: list[str] | None = None, **kwargs):
    """A ``calibration_rows`` run over ``keys`` (default: every registered
    partition): one partition, or the range that covers them."""
    keys = keys or list(instance.get_dynamic_partitions(PARTITIONS))
    if len(keys) == 1:
        return execute(defs, instance, ROWS_JOB, partition_key=keys[0], **kwargs)
    return execute(defs, instance, ROWS_JOB, tags={**range_tags(keys[0], keys[-1]), **kwargs.pop("tags", {})},
                   **kwargs)


def run_table(defs, instance):
    """The table-wide checks and the stratified figures."""
    return execute(defs, instance, TABLE_JOB)


def run_pools(defs, instance):
    """The node-map draws and the stratified figures with their checks, in one
    run (what the sensor asks for when the pools change)."""
    from boardgen_dagster.names import DRAWS, STRATA
    from boardgen_pipeline.steps import draw_node_maps, stratify

    checks = [dg.AssetCheckKey(dg.AssetKey(DRAWS), n) for n in draw_node_maps.CHECKS]
    checks.append(dg.AssetCheckKey(dg.AssetKey(STRATA), stratify.CHECK_COMPLETE))
    return execute(defs, instance, CALIBRATION_JOB, asset_selection=[DRAWS, STRATA], check_selection=checks)


def materialize_graph(defs, instance) -> tuple:
    """What ``python -m boardgen_dagster.nightly`` does, in one process: the prepare run,
    one run over every row, the table run. Returns the three results."""
    prepare = run_prepare(defs, instance)
    assert prepare.success, "prepare run failed"
    rows = run_rows(defs, instance)
    return prepare, rows, run_table(defs, instance)


def run_request(defs, instance, request: dg.RunRequest, job: str | None = None):
    """Execute what a sensor or schedule asked for, as the daemon would launch
    it: its job (``job`` for a schedule's or sensor's default), assets,
    checks, partition or range tags, run config."""
    job = request.job_name or job or CALIBRATION_JOB
    return execute(defs, instance, job, asset_selection=request.asset_selection,
                   check_selection=request.asset_check_keys, partition_key=request.partition_key,
                   tags=dict(request.tags), run_config=request.run_config or None)


def request_rows(request: dg.RunRequest, order: list[str]) -> list[str]:
    """The row partitions a request covers, in ``order``."""
    from boardgen_dagster.names import RANGE_END, RANGE_START

    if request.partition_key is not None:
        return [request.partition_key]
    if RANGE_START not in request.tags:
        return []
    start, end = order.index(request.tags[RANGE_START]), order.index(request.tags[RANGE_END])
    return order[start:end + 1]


def checks_of(result) -> dict:
    """``{check_name: AssetCheckEvaluation}`` of one run."""
    return {c.check_name: c for c in result.get_asset_check_evaluations()}


def meta(evaluation) -> dict:
    """Plain metadata values of a check evaluation or materialization, with a
    ``figures`` JSON entry spread out."""
    out = {k: getattr(v, "value", v) for k, v in evaluation.metadata.items()}
    figures = out.pop("figures", None)
    return {**out, **figures} if isinstance(figures, dict) else out


def materialized(result) -> set[str]:
    return {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}


def boards_partitions(result) -> set[str]:
    """The row partitions whose boards the run recorded."""
    return {e.partition for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey("boards")}


def boards_observations(result) -> dict:
    """``{partition: metadata}`` of the ``boards`` observations of one run: the
    verdicts of the rows that fail (recorded instead of a materialization)."""
    return {e.asset_observation_data.asset_observation.partition: e.asset_observation_data.asset_observation.metadata
            for e in result.all_events if e.event_type_value == "ASSET_OBSERVATION"
            and e.asset_observation_data.asset_observation.asset_key == dg.AssetKey("boards")}


def step_failures(result) -> dict:
    return {e.step_key: e.step_failure_data for e in result.all_events if e.event_type_value == "STEP_FAILURE"}


def row_checks(root: Path, key: tuple[int, int]) -> dict:
    """``{check: record}`` of one row's stored verdicts, figures and pictures parsed."""
    from boardgen_pipeline.steps.row_checks import DATASET
    from boardgen_pipeline.warehouse import datasets

    out = {}
    for r in parquet_records(datasets.partition_path(root, DATASET, key)):
        out[r["check"]] = {**r, "figures": json.loads(r["figures"]), "pictures": json.loads(r["pictures"])}
    return out


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


def tick(instance, defs, settings, cursor=None):
    """One sensor evaluation, with its partition requests applied as the daemon would."""
    from boardgen_dagster.automation import table_edit_sensor

    with dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs,
                                 resources={"settings": settings}) as context:
        result = table_edit_sensor(context)
    if isinstance(result, dg.SkipReason):
        return result, [], cursor
    for req in result.dynamic_partitions_requests or []:
        if isinstance(req, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
        else:
            for key in req.partition_keys:
                instance.delete_dynamic_partition(req.partitions_def_name, key)
    return result, list(result.run_requests or []), result.cursor


def edit_row(tables, key, field, value):
    """Change one field of one row in the copied board_gen.toml."""
    path = tables / "board_gen.toml"
    blocks = path.read_text().split("[[rows]]")
    for i, block in enumerate(blocks):
        if f"level_index = {key[0]}\n" in block and re.search(rf"node_depth = {key[1]}\b", block):
            blocks[i] = re.sub(rf"(?m)^{field} = .*$", f"{field} = {value}", block)
            break
    else:
        raise AssertionError(f"row {key} not found")
    path.write_text("[[rows]]".join(blocks))
