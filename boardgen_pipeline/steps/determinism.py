"""The nightly proves the generator has not drifted (seed 000 "同种子同参数必
产同图": the same seed and the same parameters always give the same board;
SPEC 6 "bit-identical output"; docs/pipeline.md "Determinism").

Boards are a pure function of (row, master seed, scope), and a row's batch
fingerprint names the first two. So when a row's fingerprint did not change,
tonight's boards must be last night's, record for record. Before a row's
files are published, :func:`compare` holds the new boards against the stored
ones:

- the same bytes (the recorded digest): *identical*, nothing is written;
- no stored boards, a damaged file (it is repaired), or boards of another
  row version: *new*, published as usual;
- other bytes but the same records (a new Parquet encoder writes other bytes
  for the same values): *re-encoded*, published;
- other records: *drift*. Nothing of the row is published, the stored files
  are kept, and the difference is written to the ``row_drift`` dataset
  (the first differing scope, the fields that differ, both boards): the
  table-wide check ``boards_deterministic`` fails and names it, until the
  metric version is bumped on purpose (a new fingerprint) or the
  regression is found.

The records are compared as values (a canonical digest of the layouts and
metrics, :func:`records_digest`), never as Parquet bytes, which carry the
encoder's version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from boardgen_pipeline.canonical import digest
from boardgen_pipeline.check_names import CHECK_BOARDS_DETERMINISTIC
from boardgen_pipeline.warehouse import datasets, publish
from boardgen_pipeline.words import count, noun

IDENTICAL, NEW, REENCODED, DRIFT = "identical", "new", "re-encoded", "drift"
DATASET = datasets.DRIFT
CHECK = CHECK_BOARDS_DETERMINISTIC
DESCRIPTION = ("The boards of every row whose fingerprint did not change are the stored ones, record for record "
               "(seed 000: the same seed and parameters always give the same board). A row that drifted keeps "
               "its stored files; bump the metric version on purpose, or find the regression.")
SCHEMA = pa.schema([
    ("scope", pa.int64()),
    ("fields", pa.list_(pa.string())),
    ("stored_layout", pa.string()),
    ("new_layout", pa.string()),
    ("stored_digest", pa.string()),
    ("new_digest", pa.string()),
    ("boards_differing", pa.int64()),
    ("batch_fingerprint", pa.string()),
])


@dataclass(frozen=True)
class Reproduction:
    """How a row's new boards compare with its stored ones; for a drift, the
    first differing board (by scope) and how many differ."""

    kind: str
    scope: int | None = None
    fields: tuple[str, ...] = ()
    stored_layout: str = ""
    new_layout: str = ""
    stored_digest: str = ""
    new_digest: str = ""
    differing: int = 0
    batch_fingerprint: str = ""
    notes: dict = field(default_factory=dict)

    def record(self) -> dict:
        return {"scope": self.scope, "fields": list(self.fields), "stored_layout": self.stored_layout,
                "new_layout": self.new_layout, "stored_digest": self.stored_digest, "new_digest": self.new_digest,
                "boards_differing": self.differing, "batch_fingerprint": self.batch_fingerprint}


def _plain(value):
    """A value as compared: a NaN equals a NaN (the records hold nulls, not NaNs, but a float column may)."""
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def _records(table: pa.Table) -> dict[int, dict]:
    cols = sorted(n for n in table.column_names if n not in ("level_index", "node_depth"))
    out = {}
    for record in table.select(cols).to_pylist():
        out[record["scope"]] = {k: _plain(v) for k, v in record.items()}
    return out


def records_digest(table: pa.Table) -> str:
    """A canonical digest of a batch's records (every column but the hive
    keys, the records in scope order): what two encoders of the same values
    share."""
    records = _records(table)
    return digest([records[s] for s in sorted(records)])


def first_difference(stored: pa.Table, new: pa.Table) -> Reproduction | None:
    """None when the two batches hold the same records; else the first
    differing scope with the fields that differ and both layouts."""
    a, b = _records(stored), _records(new)
    if a == b:
        return None
    scopes = sorted(set(a) | set(b))
    differing = [s for s in scopes if a.get(s) != b.get(s)]
    first = differing[0]
    old, now = a.get(first, {}), b.get(first, {})
    fields = tuple(sorted(k for k in set(old) | set(now) if old.get(k) != now.get(k)))
    return Reproduction(DRIFT, first, fields, str(old.get("layout", "")), str(now.get("layout", "")),
                        records_digest(stored), records_digest(new), len(differing))


def compare(root, key: tuple[int, int], data: bytes, digest_: str, batch_fingerprint: str) -> Reproduction:
    """How the new boards file ``data`` (sha256 ``digest_``) of row ``key``
    compares with the published one (module docstring)."""
    path = datasets.partition_path(root, "boards", key)
    if datasets.recorded_digest(root, path) == digest_ and path.exists():
        if publish.intact(root, path):
            return Reproduction(IDENTICAL, batch_fingerprint=batch_fingerprint)
        return Reproduction(NEW, batch_fingerprint=batch_fingerprint, notes={"repaired": True})
    if not path.exists() or not publish.intact(root, path):
        return Reproduction(NEW, batch_fingerprint=batch_fingerprint)
    try:
        stored = datasets.read_file(path)
    except (OSError, ValueError):
        return Reproduction(NEW, batch_fingerprint=batch_fingerprint)
    if "batch_fingerprint" not in stored.column_names or \
            set(stored.column("batch_fingerprint").to_pylist()) != {batch_fingerprint}:
        return Reproduction(NEW, batch_fingerprint=batch_fingerprint)
    new = datasets.read_file(pa.BufferReader(data))
    found = first_difference(stored, new)
    if found is None:
        return Reproduction(REENCODED, batch_fingerprint=batch_fingerprint)
    return Reproduction(DRIFT, found.scope, found.fields, found.stored_layout, found.new_layout, found.stored_digest,
                        found.new_digest, found.differing, batch_fingerprint)


def write_drift(root, key: tuple[int, int], found: Reproduction):
    """Record a row's drift (one record: its first differing board)."""
    table = datasets.records_table([found.record()], drop=(), schema=SCHEMA)
    return datasets.write_atomic(table, datasets.partition_path(root, DATASET, key), root)


def clear_drift(root, key: tuple[int, int]) -> None:
    """The row reproduced (or its row version changed): no drift stands."""
    if datasets.partition_path(root, DATASET, key).exists():
        publish.withdraw(root, DATASET, key)


def drifted(root, keys) -> dict[tuple[int, int], dict]:
    """The recorded drift of each of ``keys`` that has one."""
    return {k: recs[0] for k, recs in publish.read_row_records(root, DATASET, keys).items() if recs}


def drawing(pk: str, found: dict) -> str:
    """Markdown: the stored board beside the new one (numbers as a player sees them)."""
    from boardgen_pipeline.pictures.drawings import number_grid

    stored, new = number_grid(found["stored_layout"]), number_grid(found["new_layout"])
    if not stored or not new:
        return f"row {pk}: scope {found['scope']} (no layout to draw)"
    gap = "   "
    body = [f"{'stored'.ljust(len(stored[0]))}{gap}tonight"]
    body += [f"{a}{gap}{b}" for a, b in zip(stored, new)]
    fields = ", ".join(found["fields"])
    return "\n".join([f"**row {pk}**: {count(found['boards_differing'], 'board')} "
                      f"{noun(found['boards_differing'], 'differs', 'differ')}; the first, scope "
                      f"`{found['scope']}`, differs in {fields}", "", "```", *body, "```"])


def outcome(root, table, samples: int, master_seed: int = 0):
    """The table-wide check ``boards_deterministic``: every row whose current
    batch drifted (module docstring), named with its first differing scope,
    the first one drawn stored beside new."""
    from boardgen_pipeline.calibration.fingerprints import fingerprints_now, row_key
    from boardgen_pipeline.outcomes import CheckOutcome

    now = fingerprints_now(table, samples, master_seed)
    keys = [row_key(pk) for pk in now] if (Path(root) / DATASET).is_dir() else []
    stored = drifted(root, keys)  # one scan of the rows that have a drift record
    found = {pk: rec for pk in now if (rec := stored.get(row_key(pk))) and rec["batch_fingerprint"] == now[pk]}
    order = sorted(found, key=row_key)
    named = "; ".join(f"{pk} (scope {found[pk]['scope']}: {', '.join(found[pk]['fields'])})" for pk in order[:10])
    return CheckOutcome(
        name=CHECK, assertion="determinism", passed=not found, severity="error", blocking=False,
        description=(f"boards changed without a change of their row: {count(len(found), 'row')}: {named}. The stored files "
                     "are kept. Bump METRIC_VERSION on purpose (a new fingerprint recalibrates every row), or find "
                     "the regression (`boardgen verify --regenerate --rows ...` checks a fix)" if found else
                     f"every row's boards reproduce ({len(now)} rows; a row whose fingerprint changed is new)"),
        metadata={"rows": len(now), "drifted_rows": order,
                  "first_scopes": {pk: found[pk]["scope"] for pk in order}},
        pictures={"drift": "\n\n".join(drawing(pk, found[pk]) for pk in order[:3]) or "_no drift_"},
    )
