"""BASE and HEAD of a calibration diff: two states of the tables (seed 001 P2
"C3 全行审计（曲线导出工具全行矩阵 diff）"; docs/review.md "BASE and HEAD").

A state is one of:

- a **git revision** of the repository the tables folder lives in
  (``origin/main``, ``HEAD~1``): its table files are listed with ``git
  ls-tree`` and read with ``git show``, loaded and validated as ``boardgen
  validate`` would; no checkout, index or working file is touched;
- a **tables folder**;
- the **warehouse's current calibration** (``@warehouse``): each row as its
  stored report says it was calibrated, its boards the stored ones.

A spec that names an existing folder is a folder, ``@warehouse`` the
warehouse, anything else a revision. Whatever cannot be read is one
:class:`~boardgen_pipeline.errors.SourceError` sentence naming it.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import ValidationError

from boardgen_pipeline import canonical
from boardgen_pipeline.calibration.fingerprints import pools_digest, table_files, variation_digest
from boardgen_pipeline.catalog import Catalog, load_catalog
from boardgen_pipeline.errors import SourceError, TableError
from boardgen_pipeline.tables.board_gen import DEFAULT_TABLE, REPORTED_PARAMETERS, BoardGenRow, BoardGenTable, Header
from boardgen_pipeline.warehouse import publish

WAREHOUSE = "@warehouse"
REPORT = "calibration_report"
CODE = "boardgen_pipeline"  # the code a revision's calibration would run: compared, never run


@dataclass(frozen=True)
class SourceRow:
    """A row as one state holds it: the row, the fingerprint of what decides
    its boards, and whether ``row`` under the state's header makes exactly
    those boards (a row rebuilt from a stored report may lack a field that
    does: ``exact`` False, and its boards are only the stored ones)."""

    key: tuple[int, int]
    row: BoardGenRow
    fingerprint: str
    exact: bool = True
    boss: bool = False
    survival_criterion: bool = False
    report: dict | None = None


@dataclass
class Source:
    """One state of the tables (module docstring)."""

    spec: str
    kind: str  # "git", "folder" or "warehouse"
    label: str
    rows: dict[tuple[int, int], SourceRow]
    header: Header
    catalog: Catalog | None = None
    files: dict[str, str] = field(default_factory=dict)  # table file -> sha256 of its bytes
    contents: dict[str, str] = field(default_factory=dict)  # table -> digest of what it parses to
    commit: str | None = None
    code: str | None = None  # git tree of the package at the revision
    notes: list[str] = field(default_factory=list)

    @property
    def table(self) -> BoardGenTable | None:
        return self.catalog.board_gen if self.catalog is not None else None

    def describe(self) -> dict:
        return {"spec": self.spec, "kind": self.kind, "label": self.label, "commit": self.commit}


def resolve(spec: str, role: str, tables_dir: Path, root: Path | None, like: BoardGenTable | None = None) -> Source:
    """The state ``spec`` names (module docstring); ``role``: "BASE" or "HEAD"
    (for the sentences); ``tables_dir``: the working tables, whose repository a
    revision is read from; ``root``: the warehouse; ``like``: the other
    state's table, whose header rebuilds the warehouse's rows."""
    if spec == WAREHOUSE:
        if root is None:
            raise SourceError(f"{role} {WAREHOUSE}: no warehouse given")
        return from_warehouse(root, role, like)
    path = Path(spec)
    if path.is_dir():
        return from_folder(path, role)
    return from_git(spec, role, tables_dir)


def from_folder(path: Path, role: str, spec: str | None = None) -> Source:
    if not (path / DEFAULT_TABLE).is_file():
        raise SourceError(f"{role} {spec or str(path)!r}: the folder holds no {DEFAULT_TABLE}")
    catalog = load_catalog(path)
    return of_catalog(spec or str(path), "folder", f"tables folder {path}", catalog, _file_digests(path))


def of_catalog(spec: str, kind: str, label: str, catalog: Catalog, files: dict[str, str], **more) -> Source:
    table = catalog.board_gen
    rows = {key: SourceRow(key, row, table.row_fingerprint(key), True, table.is_boss_row(key),
                           table.header.survival_is_criterion)
            for key, row in table.rows.items()}
    return Source(spec, kind, label, rows, table.header, catalog, files, contents(catalog), **more)


def contents(catalog: Catalog) -> dict[str, str]:
    """What each table parses to, as a digest: a comment or whitespace edit
    leaves it, a changed value moves it."""
    out = {DEFAULT_TABLE: canonical.digest({"header": catalog.board_gen.header,
                                            "rows": [r.fields() for _, r in sorted(catalog.board_gen.rows.items())]})}
    if catalog.variation is not None:
        out["variation.toml"] = variation_digest(catalog.variation)
    if catalog.resources is not None:
        out["resource_weights.toml"] = canonical.digest(replace(catalog.resources, source=""))
    if catalog.pools:
        out["nodemaps/"] = pools_digest(catalog.pools)
    return out


def _file_digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()[:16]
            for p in table_files(folder)}


# --- a git revision -----------------------------------------------------------------------------------------------

def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, timeout=60)
    except FileNotFoundError:
        raise SourceError("git is not installed: a revision cannot be read") from None


def repository(tables_dir: Path) -> tuple[Path, str] | None:
    """The git repository holding ``tables_dir``, and the folder's path in it."""
    top = _git(tables_dir, "rev-parse", "--show-toplevel") if tables_dir.is_dir() else None
    if top is None or top.returncode != 0:
        return None
    root = Path(top.stdout.decode().strip())
    return root, tables_dir.resolve().relative_to(root.resolve()).as_posix()


def from_git(spec: str, role: str, tables_dir: Path) -> Source:
    """The tables at revision ``spec`` of the repository holding ``tables_dir``."""
    found = repository(Path(tables_dir))
    if found is None:
        raise SourceError(f"{role} {spec!r}: not a folder, and {tables_dir} is in no git repository to read a "
                          "revision from")
    repo, prefix = found
    rev = _git(repo, "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    if rev.returncode != 0:
        raise SourceError(f"{role} {spec!r}: unknown git revision in {repo} (and no folder of that name)")
    commit = rev.stdout.decode().strip()
    listed = _git(repo, "ls-tree", "-r", "--name-only", commit, "--", f"{prefix}/")
    names = [n for n in listed.stdout.decode().splitlines() if n.endswith(".toml")]
    if f"{prefix}/{DEFAULT_TABLE}" not in names:
        raise SourceError(f"{role} {spec!r} (commit {commit[:12]}): the revision has no {prefix}/{DEFAULT_TABLE}")
    shown = f"{spec}:{prefix}"
    with tempfile.TemporaryDirectory(prefix="boardgen-diff-") as tmp:
        for name in names:
            target = Path(tmp) / Path(name).relative_to(prefix)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_git(repo, "show", f"{commit}:{name}").stdout)
        try:
            catalog = load_catalog(tmp)
        except TableError as exc:  # name the revision's files, not the temporary copy
            raise TableError([replace(v, file=v.file.replace(tmp, shown)) for v in exc.violations]) from None
        files = _file_digests(Path(tmp))
    catalog = replace(catalog, tables_dir=Path(shown),
                      board_gen=replace(catalog.board_gen, path=f"{shown}/{DEFAULT_TABLE}"))
    code = _git(repo, "rev-parse", "--verify", "--quiet", f"{commit}:{CODE}")
    return of_catalog(spec, "git", f"git {spec} ({commit[:12]})", catalog, files, commit=commit,
                       code=code.stdout.decode().strip() if code.returncode == 0 else None)


def code_differs(base: Source, head: Source, tables_dir: Path) -> bool | None:
    """Whether the package differs between two revisions, or between a
    revision and the working tree; None when it cannot be told (a folder or
    the warehouse against a folder, or no package in the repository)."""
    found = repository(Path(tables_dir))
    if found is None:
        return None
    repo = found[0]
    revisions = [s for s in (base, head) if s.kind == "git"]
    if len(revisions) == 2:
        return None if None in (base.code, head.code) else base.code != head.code
    if len(revisions) == 1 and revisions[0].code is not None and (repo / CODE).is_dir():
        return _git(repo, "diff", "--quiet", revisions[0].commit, "--", CODE).returncode != 0
    return None


# --- the warehouse's current calibration ------------------------------------------------------------------------

def rebuild_row(values: dict, key: tuple[int, int], like: BoardGenRow | None, header: Header | None,
                fingerprint: str | None) -> tuple[BoardGenRow, bool]:
    """A row from the parameters a stored report (or a history version)
    keeps, with what they leave out taken from ``like`` (the same row in the
    other state: its reserved fields, its survival floor) or the defaults;
    and whether it is exactly the row stored, i.e. whether under ``header``
    its fingerprint is ``fingerprint``."""
    fields = {name: values[name] for name in REPORTED_PARAMETERS if values.get(name) is not None}
    kept = {"min_mean_survival": values.get("min_mean_survival", like.min_mean_survival if like else None),
            "reserved": like.reserved if like is not None else {}}
    try:
        row = BoardGenRow(level_index=key[0], node_depth=key[1], **fields, **kept)
    except ValidationError:
        row = BoardGenRow.model_construct(level_index=key[0], node_depth=key[1], **fields, **kept)
        return row, False
    if header is None or fingerprint is None:
        return row, False
    table = BoardGenTable("", header, {key: row})
    return row, table.row_fingerprint(key) == fingerprint


def stored_reports(root: Path) -> dict[tuple[int, int], list[dict]]:
    """Every intact row report of the warehouse at ``root``, by key."""
    keys = publish.intact_keys(root, REPORT) if (Path(root) / REPORT).is_dir() else set()
    return publish.read_row_records(root, REPORT, keys) if keys else {}


def report_columns(root: Path, columns) -> dict[tuple[int, int], dict]:
    """A few columns of every stored row report, by key, in one scan of the
    dataset (a picture's points: the HTML page draws the rows a diff did not
    recompute); files that cannot be read in one scan are read one by one and
    the unreadable left out (``publish.read_row_records``)."""
    import pyarrow.dataset as ds

    folder = Path(root) / REPORT
    if not folder.is_dir():
        return {}
    try:
        table = ds.dataset(folder, format="parquet", partitioning="hive").to_table(
            columns=["level_index", "node_depth", *columns])
    except (OSError, ValueError):
        found = publish.read_row_records(root, REPORT, publish.keys_in(root, REPORT), columns)
        return {key: records[0] for key, records in found.items()}
    return {(r.pop("level_index"), r.pop("node_depth")): r for r in table.to_pylist()}


def from_warehouse(root: Path, role: str, like: BoardGenTable | None = None,
                   reports: dict[tuple[int, int], list[dict]] | None = None) -> Source:
    """The warehouse's current calibration: every row with an intact report
    (``reports``: those already read, ``stored_reports``)."""
    root = Path(root)
    reports = stored_reports(root) if reports is None else reports
    if not reports:
        raise SourceError(f"{role} {WAREHOUSE}: no calibration report in {root} (run `boardgen calibrate` or "
                          "`make run` first)")
    header = like.header if like is not None else Header()
    rows = {}
    for key, (report, *_) in sorted(reports.items()):
        other = like.rows.get(key) if like is not None else None
        row, exact = rebuild_row(report, key, other, header, report.get("row_fingerprint"))
        rows[key] = SourceRow(key, row, str(report.get("row_fingerprint")), exact, bool(report.get("boss_row")),
                              bool(report.get("survival_is_criterion")), report)
    return Source(WAREHOUSE, "warehouse", f"the calibration in {root}", rows, header)
