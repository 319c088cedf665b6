"""The history of every calibration: each published report version of a row,
kept (SPEC 7 "report C",
"diagnostics D"; seed 001 F4; SPEC 8 "queried through DuckDB").

A row's report is replaced each time the row is published; its history keeps
every *version* of it: what the row was (row and batch fingerprints, its
table parameters, N, the metric version) and what it gave (p10/p50/p90, the
pass rate, the exits, retry rate, the F4 verdicts, the difficulty figures),
with the time the version was first published (UTC).

- **A version is its content, not its time.** ``version_of`` takes the
  figures above from the report record and names them by a digest of their
  canonical JSON (``canonical.digest``: ``version``). A rerun of an unchanged row computes the
  same report, hence the same version, and writes nothing; an edit that puts
  a row back as it was meets its earlier version, which stays where it was
  in the trajectory (``Trajectory.current`` says which version the row's
  report is now). What the report holds besides (the advisor's search, the
  Boss flag, the table-wide monotone warnings) is left out, so an edit of
  another row adds no version to this one.
- **Nothing grows with the past.** One small file per version,
  ``calibration_history/level_index=L/node_depth=D/<version>.parquet``,
  written once, when absent (``keep``), with the warehouse's atomic writer
  and digest manifest: a run looks at one path per row (and its digest), and
  never rewrites a file that grows.
- **A damaged version is never served.** ``trajectory`` checks each file's
  bytes against the manifest (a flipped byte in a Parquet page often still
  reads) and lists the damaged and the missing ones apart; ``boardgen
  verify`` names them too. A damaged file of the version the row publishes
  again is rewritten by that publication, dated then (its first date went
  with its bytes); an older one cannot be remade, as its row is no longer
  what it was.
- **Written where the report is published** (``chain.publish_result``, in
  the process that owns the warehouse: ``boardgen calibrate``, the Dagster
  step and so the nightly), after the report file, never on a worker. A
  rejected batch (assertion A') publishes no report, so it adds no version.
- **One schema** (``SCHEMA``, every column typed even when empty), so the
  DuckDB view ``calibration_history`` reads every file with the first file's
  schema (``warehouse.views``: no ``union_by_name``).
- A row's history outlives the row: pruning a row that left the table keeps
  its versions (they are the past, and a row put back continues them).
"""

from __future__ import annotations

import math
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from boardgen_pipeline import canonical, files
from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.calibration.batch import DIFFICULTY_FIGURES, FAIRNESS_FIGURES
from boardgen_pipeline.tables.board_gen import REPORTED_PARAMETERS, BoardGenRow
from boardgen_pipeline.warehouse import datasets, publish

DATASET = "calibration_history"
REPORT = "calibration_report"  # the dataset whose records a version is taken from
LOCK = ".versions.lock"

# The row's table parameters (``board_gen.REPORTED_PARAMETERS``: the report's and its target), each
# typed as its field of the row (an int, a float, or one of a set of words).
ARROW_TYPES = {int: pa.int64(), float: pa.float64()}
PARAMETERS = {name: ARROW_TYPES.get(BoardGenRow.model_fields[name].annotation, pa.string())
              for name in REPORTED_PARAMETERS}
# What a version says of the batch besides its parameters: N and the code that measured it.
INPUTS = {"row_fingerprint": pa.string(), "batch_fingerprint": pa.string(), "metric_version": pa.int64(),
          "samples": pa.int64()}
VERDICTS = ("assertion_a", "assertion_a2", "assertion_a1", "assertion_b", "assertion_b1", "assertion_f", "green")
FIGURES = {
    "p10": pa.float64(), "p50": pa.float64(), "p90": pa.float64(),
    "passed": pa.int64(), "best_legal": pa.int64(), "least_bad": pa.int64(), "pass_rate": pa.float64(),
    "retry_rate": pa.float64(), "mean_attempts": pa.float64(), "below_target": pa.int64(), "illegal": pa.int64(),
    **{name: pa.bool_() for name in VERDICTS},  # B and B' are null on the rows they do not apply to
    **{name: pa.float64() for name in DIFFICULTY_FIGURES},  # null in reports written before the difficulty figures
    # what a perfect player risks; null in reports written before the player existed
    **{name: pa.int64() if name in ("fairness_boards", "fairness_not_analysed") else pa.float64()
       for name in FAIRNESS_FIGURES},
}
CONTENT = {**INPUTS, **PARAMETERS, **FIGURES}  # what names a version
LATER = frozenset({"assertion_f", *FAIRNESS_FIGURES})  # columns added after the first versions (check F, the perfect player)
SCHEMA = pa.schema([pa.field("version", pa.string()), pa.field("published_at", pa.timestamp("us", tz="UTC")),
                    *(pa.field(name, kind) for name, kind in CONTENT.items())])


def pass_rate(passed: int, samples: int) -> float:
    """The share of a row's boards that left the generator through ``passed``."""
    return passed / max(1, samples)


def _plain(value, kind: pa.DataType):
    """``value`` as the Python type its column holds (a worker's numpy number
    and the value read back from the file give the same JSON)."""
    if value is None:
        return None
    if pa.types.is_integer(kind):
        return int(value)
    if pa.types.is_floating(kind):
        return float(value)
    if pa.types.is_boolean(kind):
        return bool(value)
    return str(value)


def version_of(report: dict) -> dict:
    """The version a report record is: its content (``CONTENT``) and the digest
    that names it. ``report``: a record of ``calibration_report``, as the
    chain makes it or as read back from its file."""
    values = {**report, "metric_version": report.get("metric_version", METRIC_VERSION),
              "pass_rate": pass_rate(report["passed"], report["samples"])}
    content = {name: _plain(values.get(name), kind) for name, kind in CONTENT.items()}
    # a column added after versions were first written names a version only where it holds a value:
    # the versions kept before it keep their names
    named = {k: v for k, v in content.items() if v is not None or k not in LATER}
    return {"version": canonical.digest(named), **content}


def version_path(root, key: tuple[int, int], version: str) -> Path:
    return datasets.partition_dir(Path(root), DATASET, key) / f"{version}.parquet"


def keep(root, key: tuple[int, int], version: dict, now: datetime | None = None) -> Path | None:
    """Keep a published report version of row ``key``: its file, written with
    the time it is first published (``now``, default the clock, UTC), or
    nothing when the warehouse holds it already (returns where it was written,
    else None). Publishers of one warehouse write a version one at a time."""
    path = version_path(root, key, version["version"])
    if publish.intact(root, path):  # a rerun: the same content is a version already
        return None
    with _exclusive(Path(root) / DATASET / LOCK):
        if publish.intact(root, path):  # another publisher kept it meanwhile
            return None
        when = now or datetime.now(UTC)
        table = pa.Table.from_pylist([{**version, "published_at": when}], schema=SCHEMA)
        return datasets.write_atomic(table, path, root)


@contextmanager
def _exclusive(lock: Path):
    """``files.lock``, a fault taking it (a read-only warehouse) named as a storage fault."""
    with ExitStack() as held:
        with datasets.storage_faults(lock):
            held.enter_context(files.lock(lock))
        yield


@dataclass
class Trajectory:
    """A row's versions, oldest first; ``current``: the version its published
    report is (None: no report, or one the history does not hold);
    ``damaged``: ``(path, problem)`` of the version files left out, whose
    bytes are not the ones written or that are gone (``boardgen verify``);
    ``rejected``: the row's latest batch lies in ``_rejected/`` (assertion A')."""

    key: tuple[int, int]
    versions: list[dict] = field(default_factory=list)
    current: str | None = None
    damaged: list[tuple[Path, str]] = field(default_factory=list)
    rejected: bool = False


def trajectory(root, key: tuple[int, int], report: dict | None = None) -> Trajectory:
    """Row ``key``'s intact versions in the warehouse at ``root``, oldest first
    (by the time each was first published); ``report``: the row's current
    report record, if it has one."""
    root = Path(root)
    out = Trajectory(key, current=version_of(report)["version"] if report is not None else None)
    folder = datasets.partition_dir(root, DATASET, key)
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else ():
        if path.name.startswith("."):
            continue
        problem = datasets.file_problem(root, path)
        if problem is None:
            try:
                out.versions.extend(datasets.read_file(path).to_pylist())
                continue
            except (OSError, ValueError) as exc:
                problem = f"unreadable: {exc}"
        out.damaged.append((path, problem))
    # versions the manifest vouches for whose file is gone (moved to _damaged/, deleted)
    recorded = datasets.digest_path(root, folder / "_").parent
    for digest in sorted(recorded.glob("*.parquet" + datasets.DIGEST_SUFFIX)) if recorded.is_dir() else ():
        path = folder / digest.name.removesuffix(datasets.DIGEST_SUFFIX)
        if not path.exists():
            out.damaged.append((path, "missing"))
    out.versions.sort(key=lambda v: (v["published_at"], v["version"]))
    return out


def of_row(root, key: tuple[int, int]) -> Trajectory:
    """Row ``key``'s trajectory with what the warehouse publishes for it now:
    its current report (when that file is intact) and whether its latest
    batch was rejected. An absent warehouse has no versions."""
    root = Path(root)
    report = None
    if publish.intact(root, datasets.partition_path(root, REPORT, key)):
        try:
            report = publish.read_partition(root, REPORT, key)[0]
        except (OSError, ValueError, IndexError):
            report = None
    out = trajectory(root, key, report)
    out.rejected = datasets.partition_path(publish.rejected_root(root), "boards", key).exists()
    return out


def parameter_changes(before: dict | None, after: dict) -> list[tuple[str, object, object]]:
    """``(name, before, after)`` of each input of a row that differs between
    two versions (or a version and the row's fields now); none for the first."""
    if before is None:
        return []
    names = [n for n in (*PARAMETERS, "samples", "metric_version") if n in before and n in after]
    return [(name, before[name], after[name]) for name in names if before[name] != after[name]]


def changes(before: dict | None, after: dict) -> list[str]:
    """What differs between two versions of a row among its inputs:
    ``"mine_density 0.22->0.3"``, ...; the first version has none."""
    return [f"{name} {_text(old)}->{_text(new)}" for name, old, new in parameter_changes(before, after)]


def edit_text(changed: list[tuple[str, object, object]]) -> str:
    """Changed fields as a designer reads them: ``max_gen_attempts 32 -> 1,
    inferability_target 0.85 -> 0.99``."""
    return ", ".join(f"{name} {_text(old)} -> {_text(new)}" for name, old, new in changed)


def row_parameters(row) -> dict:
    """A table row's fields as a version holds them (``PARAMETERS``)."""
    return {name: getattr(row, name) for name in PARAMETERS}


def before_edit(path: Trajectory, row) -> dict | None:
    """The version the row was last calibrated as before it became what
    ``row`` (its fields now) is: the newest version whose parameters differ
    from the row's; None when every version is the row as it is (nothing
    edited since) or there is none."""
    now = row_parameters(row)
    edited = [v for v in path.versions if any(v.get(n) != now[n] for n in PARAMETERS)]
    return max(edited, key=lambda v: (v["published_at"], v["version"])) if edited else None


def edit_hint(path: Trajectory, row) -> str:
    """What a designer reads beside a failing row that was edited since its
    last calibration: ``edited since its calibration of 2026-12-06 (F4 passed
    then): max_gen_attempts 32 -> 1 (restore 32)``; empty when the row is as
    it was last calibrated, or has no version."""
    previous = before_edit(path, row)
    if previous is None:
        return ""
    changed = parameter_changes(previous, row_parameters(row))
    if not changed:
        return ""
    when = previous["published_at"].astimezone(UTC).strftime("%Y-%m-%d")
    then = "F4 passed then" if previous.get("green") else "F4 failed then too"
    fields = ", ".join(f"{name} {_text(old)} -> {_text(new)} (restore {_text(old)})" for name, old, new in changed)
    return f"edited since its calibration of {when} ({then}): {fields}"


def edit_hints(root, table, keys) -> dict[tuple[int, int], str]:
    """``{key: edit_hint}`` of the rows of ``keys`` (those ``table`` holds)
    edited since their last calibration: one history folder read a row, its
    versions only."""
    out = {}
    for key in keys:
        if key in table.rows and (hint := edit_hint(trajectory(root, key), table.rows[key])):
            out[key] = hint
    return out


def _text(value) -> str:
    if isinstance(value, float) and not math.isnan(value):
        return f"{value:g}"
    return str(value)


YES = {True: "ok", False: "FAIL", None: "-"}


def verdicts(version: dict) -> str:
    """The F4 verdicts of a version, as ``boardgen calibrate`` prints them."""
    fog = version["assertion_b"] is not None
    b = f"B {YES[version['assertion_b']]}" if fog else f"B' {YES[version['assertion_b1']]}"
    return (f"A {YES[version['assertion_a']]}  A'' {YES[version['assertion_a2']]}  "
            f"A' {YES[version['assertion_a1']]}  {b}")


def lines(path: Trajectory) -> list[str]:
    """The trajectory as text, one line per version, oldest first: when it was
    first published, the version (``calibration_history.version``), the
    parameters that changed, p10/p50/p90, the pass rate and the F4 verdicts."""
    rows, before = [], None
    for v in path.versions:
        changed = ", ".join(changes(before, v)) or ("first version" if before is None else "no parameter changed")
        rows.append((v["published_at"].astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ"), changed, v))
        before = v
    width = max([len("changed"), *(len(r[1]) for r in rows)])
    out = [f"{'published (UTC)':<20}  {'version':<16}  {'changed':<{width}}  {'p10':>5}  {'p50':>5}  {'p90':>5}  "
           f"{'pass':>6}  F4"]
    for when, changed, v in rows:
        mark = "  <- current report" if v["version"] == path.current else ""
        out.append(f"{when:<20}  {v['version']:<16}  {changed:<{width}}  {v['p10']:.3f}  {v['p50']:.3f}  "
                   f"{v['p90']:.3f}  {v['pass_rate']:>6.1%}  {verdicts(v)}{mark}")
    return out


def current_note(path: Trajectory) -> str:
    """Which version the row's published report is now."""
    if path.current is None:
        return ("no current report: the row's latest batch was rejected (assertion A'), so it added no version"
                if path.rejected else "no current report: the row is not published now")
    if path.versions and path.current == path.versions[-1]["version"]:
        return "the row's current report is the newest version"
    if any(v["version"] == path.current for v in path.versions):
        return "the row's current report is an earlier version (marked): the row was set back to it"
    return "the row's current report is not in the history (published before it was kept, or its file is damaged)"
