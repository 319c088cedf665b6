"""Which partitions a table edit touches (SPEC 1 "regeneration after a table
edit", SPEC 9; issue 3 "Regeneration after a table edit").

One partition per ``board_gen`` row, keyed ``"L-D"`` (``"1-0"`` for row
``(1,0)``). What decides a row's boards is its *batch fingerprint*: the row's
content hash (``BoardGenTable.row_fingerprint``: every field of the row and
the header's spawn side), the batch size N, the master seed and the metric
version. The fingerprint a partition was built from is stored in the
warehouse itself (the ``batch_fingerprint`` column of its ``boards`` file),
so the plan compares *fingerprints now* (the table on disk) with
*fingerprints stored* (what the warehouse holds) and nothing else:

- a row whose fingerprint is unchanged is left alone (its files are not
  touched, byte for byte);
- a changed or new row is regenerated;
- a row that left the table loses its partition and its files.

Editing one row changes one fingerprint; editing the header's spawn side
changes them all, as it should.

A *damaged* file (issue 14 "Bit rot is found": its bytes differ from the
digest recorded when it was written, or the manifest records it and it is
gone) counts as not stored: a row with a damaged ``boards``,
``calibration_report`` or ``variant_overlays`` file has no stored
fingerprint, so the sensor and the nightly regenerate exactly that row; a
damaged node-map draws or strata file leaves the pools with no stored
fingerprint. ``damaged_partitions`` says which, for a runner to request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from boardgen_pipeline.calibration.fingerprints import (
    NO_POOLS,
    NO_VARIANTS,
    fingerprints_now,
    inputs_fingerprint,
    partition_key,
    row_key,
)
from boardgen_pipeline.steps.stratify import DATASET, FILE
from boardgen_pipeline.warehouse import datasets, publish
from boardgen_pipeline.warehouse.publish import stored_fingerprint, stored_overlay_fingerprint

ROW_FILES = ("boards", "calibration_report", "variant_overlays")


@dataclass(frozen=True)
class Damage:
    """Damaged published files (``publish.verify``) by what regenerates them:
    ``partitions``: row partition keys (``"1-0"``) with any damaged row file;
    ``by_dataset``: the same per dataset (asset names are dataset names);
    ``unpartitioned``: damaged datasets that are not per row
    (``node_map_draws``, ``calibration_strata``); ``files``: ``(path, problem)``."""

    partitions: set = field(default_factory=set)
    by_dataset: dict = field(default_factory=dict)
    unpartitioned: set = field(default_factory=set)
    files: list = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.files


def damaged_partitions(root, quarantine: bool = False) -> Damage:
    """Which partitions and unpartitioned assets to regenerate because a file
    of theirs is damaged or gone (rejected batches are not published: they
    are reported by ``boardgen verify`` but regenerate nothing here). With
    ``quarantine`` the damaged files are moved to ``_damaged/`` so that no
    view or whole-dataset reader trips on them meanwhile (refresh the views
    afterwards)."""
    root = Path(root)
    damage = Damage()
    for path, problem in publish.verify(root):
        if path.is_relative_to(publish.rejected_root(root)):
            continue
        damage.files.append((path, problem))
        dataset = path.relative_to(root).parts[0]
        if dataset in datasets.FLAT_DATASETS:
            damage.unpartitioned.add(dataset)
            continue
        try:
            key = (int(path.parent.parent.name.split("=", 1)[1]), int(path.parent.name.split("=", 1)[1]))
        except (IndexError, ValueError):
            continue
        damage.partitions.add(partition_key(key))
        damage.by_dataset.setdefault(dataset, set()).add(partition_key(key))
    if quarantine:
        publish.quarantine(root, [path for path, _ in damage.files])
    return damage


def _row_damaged(root, key: tuple[int, int]) -> bool:
    for dataset in ROW_FILES:
        path = datasets.partition_path(Path(root), dataset, key)
        if (path.exists() or datasets.recorded_digest(root, path)) and not publish.intact(root, path):
            return True
    return False


def fingerprints_stored(root, keys) -> dict[str, str]:
    """What the warehouse holds for each of ``keys`` (row keys or partition
    keys); a row with a damaged file holds nothing."""
    out = {}
    for k in keys:
        key = row_key(k) if isinstance(k, str) else k
        fp = stored_fingerprint(root, key)
        if fp is not None and _row_damaged(root, key):
            fp = None
        if fp is not None:
            out[partition_key(key)] = fp
    return out


@dataclass(frozen=True)
class RegenPlan:
    """``add``/``remove``: partitions to register/delete; ``regenerate``: rows
    whose stored fingerprint differs from the table's (new rows included);
    ``keep``: rows left alone. All lists sorted by row key."""

    add: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    regenerate: list[str] = field(default_factory=list)
    keep: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.add or self.remove or self.regenerate)


def _sorted(keys) -> list[str]:
    return sorted(keys, key=row_key)


def plan(now: dict[str, str], stored: dict[str, str], registered, in_flight: dict[str, str] | None = None) -> RegenPlan:
    """Compare fingerprints now with fingerprints stored.

    ``registered``: the partition keys the orchestrator knows. ``in_flight``:
    fingerprints already requested and not yet stored (a sensor's cursor), so
    a row is requested once per version, not on every tick while it runs."""
    in_flight = in_flight or {}
    registered = set(registered)
    stale = {k for k, fp in now.items() if stored.get(k) != fp and in_flight.get(k) != fp}
    return RegenPlan(
        add=_sorted(set(now) - registered),
        remove=_sorted(registered - set(now)),
        regenerate=_sorted(stale),
        keep=_sorted(k for k in now if stored.get(k) == now[k]),
    )


IN_FLIGHT_TTL_SECONDS = 900  # a request not stored after this long (a crashed run) is made again


def load_cursor(text: str | None) -> dict:
    """A sensor cursor: ``{"in_flight": {partition: [fingerprint, requested_at]}, "invalid": digest}``."""
    if not text:
        return {"in_flight": {}}
    data = json.loads(text)
    data.setdefault("in_flight", {})
    return data


def dump_cursor(cursor: dict) -> str:
    return json.dumps(cursor, sort_keys=True, separators=(",", ":"))


def advance(cursor_text: str | None, now: dict[str, str], stored: dict[str, str], registered,
            clock: float, ttl: float = IN_FLIGHT_TTL_SECONDS) -> tuple[RegenPlan, str]:
    """One evaluation of the table-edit sensor: the plan, and the next cursor.

    A partition is requested once per fingerprint: while its request is in
    flight (younger than ``ttl`` and not yet stored) it is not requested
    again; once the warehouse stores that fingerprint it leaves the cursor."""
    cursor = load_cursor(cursor_text)
    cursor.pop("invalid", None)
    live = {k: v[0] for k, v in cursor["in_flight"].items() if clock - v[1] < ttl}
    p = plan(now, stored, registered, live)
    in_flight = {k: v for k, v in cursor["in_flight"].items()
                 if k in now and v[0] == now[k] and stored.get(k) != now[k] and clock - v[1] < ttl}
    for k in p.regenerate:
        in_flight[k] = [now[k], clock]
    cursor["in_flight"] = in_flight
    return p, dump_cursor(cursor)


DAMAGED = "damaged"  # the stored fingerprint of a damaged file: equal to no fingerprint now


def overlay_fingerprints_stored(root, keys) -> dict[str, str]:
    out = {}
    for k in keys:
        key = row_key(k) if isinstance(k, str) else k
        path = datasets.partition_path(Path(root), "variant_overlays", key)
        if (path.exists() or datasets.recorded_digest(root, path)) and not publish.intact(root, path):
            out[partition_key(key)] = DAMAGED
            continue
        fp = stored_overlay_fingerprint(root, key)
        out[partition_key(key)] = fp if fp is not None else NO_VARIANTS
    return out


def report_fingerprints(root) -> dict[tuple[int, int], str]:
    """The batch fingerprint of every row report the warehouse holds."""
    import pyarrow.parquet as pq

    out = {}
    for key in publish.intact_keys(root, "calibration_report"):
        try:
            col = pq.read_table(datasets.partition_path(Path(root), "calibration_report", key),
                                columns=["batch_fingerprint"]).column(0)
        except (KeyError, ValueError, OSError):
            continue
        if len(col):
            out[key] = str(col[0])
    return out


def pools_fingerprint_now(root, catalog, samples: int, master_seed: int, adventures: int) -> str:
    """What the node-map draws and the stratified figures should be built
    from now: the pools, the number of adventures and the current reports."""
    if not catalog.pools:
        return NO_POOLS
    now = fingerprints_now(catalog.board_gen, samples, master_seed)
    current = {k: fp for k, fp in report_fingerprints(root).items() if now.get(partition_key(k)) == fp}
    return inputs_fingerprint(catalog.pools, adventures, current)


def pools_fingerprint_stored(root) -> str | None:
    """The inputs fingerprint the stratified figures were built from (None
    when never built)."""
    import pyarrow.parquet as pq

    path = datasets.flat_path(Path(root), DATASET, FILE)
    if not path.exists():
        return None
    for dataset in datasets.FLAT_DATASETS:
        for flat in Path(root, dataset).glob("*.parquet"):
            if not publish.intact(root, flat):
                return None  # a damaged draws or strata file: build the pools again
    try:
        col = pq.read_table(path, columns=["inputs_fingerprint"]).column(0)
    except (KeyError, ValueError, OSError):
        return None
    return str(col[0]) if len(col) else NO_POOLS


def advance_stale(cursor: dict, name: str, now: dict[str, str], stored: dict[str, str], clock: float,
                  ttl: float = IN_FLIGHT_TTL_SECONDS) -> list[str]:
    """Keys of ``now`` whose stored fingerprint differs and that were not
    requested for that fingerprint within ``ttl``; records the requests in
    ``cursor[name]`` (the same once-per-version rule as the boards')."""
    entries = cursor.get(name, {})
    live = {k: v for k, v in entries.items()
            if k in now and v[0] == now[k] and stored.get(k) != now[k] and clock - v[1] < ttl}
    stale = sorted((k for k, fp in now.items() if stored.get(k) != fp and k not in live), key=str)
    for k in stale:
        live[k] = [now[k], clock]
    cursor[name] = live
    return stale
