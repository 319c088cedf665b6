"""The last calibration diff written with ``boardgen diff --save``: the
``calibration_diff`` dataset and DuckDB view (SPEC 8 "queried through
DuckDB"; seed 001 P2 "C3 全行审计"; docs/review.md "SQL").

One flat Parquet file, ``<warehouse>/calibration_diff/last.parquet``, one
record per figure of each modified row and one (``figure`` null) per other
row, replaced whole by the next ``--save`` with the warehouse's atomic
writer and digest manifest (``publish.write_flat``), so ``boardgen verify``
vouches for it like any other file. Every column is typed (``SCHEMA``) even
where a diff leaves it empty.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from boardgen_pipeline.review import figures as F
from boardgen_pipeline.review.diff import CalibrationDiff, RowDiff
from boardgen_pipeline.review.paired import FigureDiff
from boardgen_pipeline.warehouse import datasets, publish, views

DATASET = datasets.REVIEW
NAME = "last"

SCHEMA = pa.schema([
    ("key", pa.string()), ("level_index", pa.int64()), ("node_depth", pa.int64()), ("state", pa.string()),
    ("figure", pa.string()), ("kind", pa.string()), ("base", pa.float64()), ("head", pa.float64()),
    ("delta", pa.float64()), ("ci_low", pa.float64()), ("ci_high", pa.float64()), ("p", pa.float64()),
    ("q", pa.float64()), ("p_test", pa.float64()), ("p_interval", pa.float64()), ("untested", pa.string()),
    ("b", pa.int64()), ("c", pa.int64()), ("margin", pa.float64()), ("flagged", pa.bool_()),
    ("beyond_margin", pa.bool_()),
    ("decided", pa.bool_()), ("boards", pa.int64()), ("identical_boards", pa.float64()),
    ("verdict_changes", pa.string()), ("verdict_worse", pa.bool_()), ("changes", pa.string()),
    ("base_source", pa.string()), ("head_source", pa.string()), ("samples", pa.int64()), ("master_seed", pa.int64()),
    ("alpha", pa.float64()),
])


def _number(value):
    """A figure's value as its column holds it (the exits: the share of ``passed``)."""
    if isinstance(value, dict):
        return value.get("passed")
    return value


def _figure(f: FigureDiff | None) -> dict:
    if f is None:
        return {}
    delta = f.size if f.kind == F.CATEGORIES else f.delta
    return {"figure": f.name, "kind": f.kind, "base": _number(f.base), "head": _number(f.head), "delta": delta,
            "ci_low": f.ci[0] if f.ci else None, "ci_high": f.ci[1] if f.ci else None, "p": f.p, "q": f.q,
            "p_test": f.p_test, "p_interval": f.p_interval, "untested": f.untested, "b": f.b, "c": f.c,
            "margin": f.margin, "flagged": f.flagged, "beyond_margin": f.beyond_margin, "decided": f.decided, "boards": f.boards}


def _row(diff: CalibrationDiff, row: RowDiff) -> dict:
    changes = row.verdict_changes
    return {"key": row.text_key, "level_index": row.key[0], "node_depth": row.key[1], "state": row.state,
            "identical_boards": row.identical_boards,
            "verdict_changes": "; ".join(v.text() for v in changes) or None,
            "verdict_worse": any(v.worse for v in changes), "changes": ", ".join(row.changes) or None,
            "base_source": diff.base.label, "head_source": diff.head.label, "samples": diff.settings.samples,
            "master_seed": diff.settings.master_seed, "alpha": diff.settings.alpha}


def records(diff: CalibrationDiff) -> list[dict]:
    """The dataset's records (module docstring)."""
    out = []
    for row in diff.rows:
        figures = list(row.figures.values()) if row.state == "modified" and row.figures else [None]
        out += [{**_row(diff, row), **_figure(f)} for f in figures]
    return out


def save(root: Path, diff: CalibrationDiff) -> Path:
    """Write the diff as the warehouse's ``calibration_diff`` and refresh the views."""
    datasets.check_writable(root)
    path = publish.write_flat(root, DATASET, NAME, records(diff), SCHEMA)
    views.refresh_views_atomic(root)
    return path
