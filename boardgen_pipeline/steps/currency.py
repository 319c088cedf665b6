"""Is a partition current, and if not, why (SPEC 1 "regeneration after a
table edit", SPEC 9; bit rot is found too;
one module answers, for every caller).

Everything the warehouse holds was built from inputs with a fingerprint
(``calibration.fingerprints``), and the fingerprint is stored in the data
itself, so "current" means: the fingerprint the tables give *now* equals the
one *stored*, in a file whose bytes are the ones written (its sha256 equals
the manifest's: ``datasets.file_problem``). Four things are built:

- a row's boards and report: the row's *batch fingerprint* (the row's
  content and the header's spawn side, N, the master seed, the metric
  version), stored in the ``batch_fingerprint`` column of its boards file
  (or of its rejected batch), next to the row fingerprint;
- a row's overlays: the *overlay fingerprint* (the batch, the variation
  table, the Boss flag and board type, the overlay version), in its
  ``variant_overlays`` file;
- the node-map draws: the *draws fingerprint* (the pools' content, the
  number of adventures, the table's row keys, which the template check
  reads), in the draws file;
- the stratified figures: the *inputs fingerprint* (pools, adventures, the
  current reports), in the strata file.

``rows``, ``overlays``, ``draws`` and ``strata`` answer with a
:class:`Currency` each: current or not, and why not in words ("new row",
"the row's parameters changed", "N, the master seed or the generator
changed", "damaged file ...", ...). The sensor, the nightly's repair and the
history ask here; ``steps.regen`` keeps only the sensor's bookkeeping (what
is in flight).

**What a look costs.** Reading a stored fingerprint is a Parquet footer and
a sha256 of the file; at 6,000 rows that was 28 s a sensor tick. A process
that asks again (the code server evaluates the sensor every few seconds)
reuses what it read of a file while the file and its manifest entry keep
their size, modification time and inode (``_FileFacts``): a rewrite, a
removal or a flipped byte written through the file system changes them.
Bit rot below the file system does not; the nightly's full ``publish.verify``
finds that (and ``boardgen verify``).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from boardgen_pipeline.calibration.fingerprints import (
    NO_POOLS,
    NO_VARIANTS,
    draws_fingerprint,
    fingerprints_now,
    inputs_fingerprint,
    partition_key,
    row_key,
)
from boardgen_pipeline.warehouse import datasets, publish

DRAWS, DRAWS_FILE = "node_map_draws", "draws"
STRATA, STRATA_FILE = "calibration_strata", "strata"
DAMAGED = "damaged"  # the stored fingerprint of a damaged file: equal to no fingerprint now


@dataclass(frozen=True)
class Currency:
    """Whether a partition (or an unpartitioned dataset) is current; ``why``
    says what changed when it is not."""

    current: bool
    why: str = ""


CURRENT = Currency(True)


@dataclass(frozen=True)
class _Facts:
    problem: str | None  # datasets.file_problem: None when the bytes are the ones written
    columns: dict  # the first record's values of the columns asked for


class _FileFacts:
    """What was read of each file (its integrity and some columns of its
    first record), reused while the file and its manifest entry are
    unchanged on disk. One per process; threads share it."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, tuple], tuple[tuple, _Facts]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _signature(root: Path, path: Path) -> tuple | None:
        out = []
        for p in (path, datasets.digest_path(root, path)):
            try:
                st = os.stat(p)
            except OSError:
                out.append(None)
                continue
            out.append((st.st_size, st.st_mtime_ns, st.st_ino))
        return None if out == [None, None] else tuple(out)

    def read(self, root: Path, path: Path, columns: tuple[str, ...]) -> _Facts | None:
        """None when neither the file nor its manifest entry exists."""
        sig = self._signature(root, path)
        key = (str(path), columns)
        if sig is None:
            with self._lock:
                self._seen.pop(key, None)
            return None
        with self._lock:
            hit = self._seen.get(key)
        if hit is not None and hit[0] == sig:
            return hit[1]
        facts = _read(root, path, columns)
        with self._lock:
            self._seen[key] = (sig, facts)
        return facts

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


def _read(root: Path, path: Path, columns: tuple[str, ...]) -> _Facts:
    problem = datasets.file_problem(root, path)
    if problem is not None:
        return _Facts(problem, {})
    try:
        table = datasets.read_file(path, columns=columns)
    except (OSError, ValueError) as exc:
        return _Facts(f"unreadable: {exc}", {})
    first = table.slice(0, 1).to_pylist()
    return _Facts(None, first[0] if first else {})


FACTS = _FileFacts()


def _facts(base, path: Path, columns: tuple[str, ...]) -> _Facts | None:
    """What ``path`` holds; ``base``: the warehouse whose manifest vouches for
    it (the warehouse, or its ``_rejected/`` part, which has its own)."""
    return FACTS.read(Path(base), path, columns)


# --- rows: boards and report ------------------------------------------------------------------------------------

BATCH_COLUMNS = ("batch_fingerprint", "row_fingerprint")
# What is read of each row file (one read a file, whatever is asked of it). Every row dataset
# (datasets.ROW_DATASETS) is looked at, a damaged file making its row stale; the others (a row's
# checks) are read for their integrity only, their verdicts following the boards and overlays.
COLUMNS = {"boards": BATCH_COLUMNS, "calibration_report": ("batch_fingerprint",),
           "variant_overlays": ("overlay_fingerprint",)}


def stored_batch(root, key: tuple[int, int]) -> dict | None:
    """The fingerprints the warehouse holds for a row: its published boards'
    first, else its rejected batch's (``{"batch_fingerprint", "row_fingerprint",
    "rejected"}``), ``{"damaged": path}`` when a row file is damaged, None
    when the row was never generated."""
    root = Path(root)
    for dataset in datasets.ROW_DATASETS:
        path = datasets.partition_path(root, dataset, key)
        facts = _facts(root, path, COLUMNS.get(dataset, ()))
        if facts is not None and facts.problem is not None:
            return {"damaged": f"{path.relative_to(root)}: {facts.problem}"}
    for base, rejected in ((root, False), (publish.rejected_root(root), True)):
        facts = _facts(base, datasets.partition_path(base, "boards", key), COLUMNS["boards"])
        if facts is None:
            continue
        if facts.problem is not None or not facts.columns.get("batch_fingerprint"):
            return None  # unreadable, or written without fingerprints: build it again
        return {**facts.columns, "rejected": rejected}
    return None


def stored_fingerprint(root, key: tuple[int, int]) -> str | None:
    """The batch fingerprint a row's boards were built from (published or
    rejected), None when never built or damaged."""
    stored = stored_batch(root, key)
    return None if stored is None or "damaged" in stored else stored["batch_fingerprint"]


def fingerprints_stored(root, keys) -> dict[str, str]:
    """``{partition: stored batch fingerprint}`` for ``keys`` (row keys or
    partition keys); a row with a damaged file holds nothing."""
    out = {}
    for k in keys:
        key = row_key(k) if isinstance(k, str) else k
        fp = stored_fingerprint(root, key)
        if fp is not None:
            out[partition_key(key)] = fp
    return out


def rows(root, table, samples: int, master_seed: int = 0) -> dict[str, Currency]:
    """Every row of ``table``: are its boards and report current, and why not."""
    out = {}
    for pk, fp in fingerprints_now(table, samples, master_seed).items():
        key = row_key(pk)
        stored = stored_batch(root, key)
        if stored is None:
            out[pk] = Currency(False, "never generated")
        elif "damaged" in stored:
            out[pk] = Currency(False, f"damaged file {stored['damaged']}")
        elif stored["batch_fingerprint"] == fp:
            out[pk] = CURRENT
        elif stored.get("row_fingerprint") != table.row_fingerprint(key):
            out[pk] = Currency(False, "the row's parameters changed")
        else:
            out[pk] = Currency(False, "N, the master seed or the generator version changed")
    return out


# --- overlays ---------------------------------------------------------------------------------------------------

def stored_overlay_fingerprint(root, key: tuple[int, int]) -> str | None:
    """The overlay fingerprint a row's overlays carry; ``DAMAGED`` for a
    damaged file, None when there is none."""
    facts = _facts(root, datasets.partition_path(Path(root), "variant_overlays", key), COLUMNS["variant_overlays"])
    if facts is None:
        return None
    if facts.problem is not None:
        return DAMAGED
    return facts.columns.get("overlay_fingerprint")


def overlay_fingerprints_stored(root, keys) -> dict[str, str]:
    """``{partition: stored overlay fingerprint}``: ``NO_VARIANTS`` when the
    row has no overlays file, ``DAMAGED`` when it is damaged."""
    out = {}
    for k in keys:
        key = row_key(k) if isinstance(k, str) else k
        fp = stored_overlay_fingerprint(root, key)
        out[partition_key(key)] = fp if fp is not None else NO_VARIANTS
    return out


def overlays(root, now: dict[str, str]) -> dict[str, Currency]:
    """Rows' overlays against ``now`` (``fingerprints.overlay_fingerprints_now``)."""
    stored = overlay_fingerprints_stored(root, now)
    out = {}
    for pk, fp in now.items():
        if stored[pk] == fp:
            out[pk] = CURRENT
        elif stored[pk] == DAMAGED:
            out[pk] = Currency(False, "damaged overlays file")
        else:
            out[pk] = Currency(False, "the variation table, the row's Boss flag or its boards changed")
    return out


# --- reports, draws and strata ----------------------------------------------------------------------------------

def report_fingerprints(root) -> dict[tuple[int, int], str]:
    """The batch fingerprint of every intact row report the warehouse holds."""
    root = Path(root)
    out = {}
    for key in publish.keys_in(root, "calibration_report"):
        facts = _facts(root, datasets.partition_path(root, "calibration_report", key), COLUMNS["calibration_report"])
        if facts is not None and facts.problem is None and facts.columns.get("batch_fingerprint"):
            out[key] = str(facts.columns["batch_fingerprint"])
    return out


def _flat_fingerprint(root, dataset: str, name: str, column: str) -> str | None:
    """A flat dataset's stored fingerprint: None when the file is missing,
    damaged or has none; ``NO_POOLS`` for an empty file (no pools)."""
    path = datasets.flat_path(Path(root), dataset, name)
    facts = _facts(root, path, (column,))
    if facts is None or facts.problem is not None:
        return None
    if not facts.columns:
        return NO_POOLS
    value = facts.columns.get(column)
    return None if value is None else str(value)


def draws_fingerprint_now(catalog, adventures: int) -> str:
    return NO_POOLS if not catalog.pools else draws_fingerprint(catalog.pools, adventures, catalog.board_gen.keys())


def draws_fingerprint_stored(root) -> str | None:
    return _flat_fingerprint(root, DRAWS, DRAWS_FILE, "draws_fingerprint")


def strata_fingerprint_now(root, catalog, samples: int, master_seed: int, adventures: int) -> str:
    """What the stratified figures should be built from now: the pools, the
    number of adventures and the current reports."""
    if not catalog.pools:
        return NO_POOLS
    now = fingerprints_now(catalog.board_gen, samples, master_seed)
    current = {k: fp for k, fp in report_fingerprints(root).items() if now.get(partition_key(k)) == fp}
    return inputs_fingerprint(catalog.pools, adventures, current)


def strata_fingerprint_stored(root) -> str | None:
    return _flat_fingerprint(root, STRATA, STRATA_FILE, "inputs_fingerprint")


def draws(root, catalog, adventures: int) -> Currency:
    now, stored = draws_fingerprint_now(catalog, adventures), draws_fingerprint_stored(root)
    if stored == now:
        return CURRENT
    return Currency(False, "never drawn, or damaged" if stored is None
                    else "the pools, the number of adventures or the table's rows changed")


def strata(root, catalog, samples: int, master_seed: int, adventures: int) -> Currency:
    now, stored = strata_fingerprint_now(root, catalog, samples, master_seed, adventures), strata_fingerprint_stored(root)
    if stored == now:
        return CURRENT
    return Currency(False, "never computed, or damaged" if stored is None
                    else "a row's report, the pools or the number of adventures changed")


# --- damaged files ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Damage:
    """Damaged published files (``publish.verify``) by what regenerates them:
    ``partitions``: row partition keys (``"1-0"``) with any damaged row file;
    ``by_dataset``: the same per dataset (asset names are dataset names);
    ``unpartitioned``: damaged datasets that are not per row
    (``node_map_draws``, ``calibration_strata``); ``history``: damaged
    versions of ``calibration_history``, which no run makes again (a past
    version is not recomputed; the current one is rewritten when its row is
    next published), so they regenerate nothing; ``files``: ``(path, problem)``."""

    partitions: set = field(default_factory=set)
    by_dataset: dict = field(default_factory=dict)
    unpartitioned: set = field(default_factory=set)
    history: list = field(default_factory=list)
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
        if dataset not in publish.ROW_DATASETS:
            damage.history.append(path)
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


def stale_rows(root, catalog, samples: int, master_seed: int, dataset: str) -> list[tuple[int, int]]:
    """Rows whose boards are current and published but whose ``dataset``
    (``variant_overlays`` or ``calibration_report``) file is not: what a run of
    that dataset alone makes current."""
    from boardgen_pipeline.calibration.fingerprints import (
        fingerprints_now,
        overlay_fingerprints_now,
        partition_key,
        row_key,
    )
    from boardgen_pipeline.warehouse import publish

    now = fingerprints_now(catalog.board_gen, samples, master_seed)
    published = publish.keys_in(root, "boards")
    keys = [row_key(pk) for pk, c in rows(root, catalog.board_gen, samples, master_seed).items()
            if c.current and row_key(pk) in published]
    if dataset == "variant_overlays":
        over_now = {pk: fp for pk, fp in overlay_fingerprints_now(catalog, samples, master_seed).items() if pk in now}
        stale = {pk for pk, c in overlays(root, over_now).items() if not c.current}
        return [k for k in keys if partition_key(k) in stale]
    reports = report_fingerprints(root)
    return [k for k in keys if reports.get(k) != now[partition_key(k)]]
