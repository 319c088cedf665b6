"""The calibration of a table change: every row of two states of the tables,
matched and compared paired (seed 001 P2 "C3 全行审计（曲线导出工具全行矩阵 diff）";
seed 001 F4; seed 004 on attribution; docs/review.md).

Rows are matched by key into *added*, *removed*, *modified* and
*identical*. A row whose fingerprint (``BoardGenTable.row_fingerprint``:
everything that decides its boards) did not change is identical: its boards
are the same bytes, so it is neither recomputed nor tested. Each modified
row runs both versions on the same scopes (``pairing``) and every figure
(``figures``) gets base, head, the difference, a paired interval and a
p-value (``stats``). The false discovery rate is controlled over every
figure of every modified row (Benjamini-Hochberg); a change is **flagged**
when its q-value is at most ``alpha`` *and* its estimate exceeds the
figure's margin (``paired.FLAG_RULE``: a flag says whether its interval
lies beyond the margin too). An F4 verdict that changes, and an added row
that fails F4, are verdict changes, reported before any statistic (they
decide the exit code, not the statistics). Assertion E (monotone in depth)
reads the table, not the boards: its verdict is compared on every row both
states hold, identical ones included (a neighbour's edit can break it), and
a worse E is shown, as a warning that leaves the exit code alone.

**Decided, not guessed** (``until_decided``): a figure is *decided* when
its interval lies beyond the margin on one side, or within it. A modified
row with an undecided figure is extended on its own further scopes
(``sigma(L, D) + i``, doubling up to the row's ``DEPTH_SPACING``), both
versions, until every figure is decided or the scopes run out. Error rates
hold under this optional stopping by Bonferroni over the planned looks:
with ``K`` possible looks a figure's p-value is ``K`` times its p at the
look where the row stopped, and its intervals are at level
``1 - alpha / K`` (``stats.looks_adjusted``), so a p-value and the interval
shown beside it agree; the Benjamini-Hochberg control then runs on those
p-values (docs/review.md "Decided, not guessed"; benchmarks/until_decided.py
measures it against a confidence sequence).

**The overlays and the strata** (seed 003, seed 004 "测量对账"): a row whose
overlay inputs differ (its boards, its variation pools, its Boss flag, the
resource weights a resource-face type reads) has its overlays of both states
placed on its boards of the same scopes and compared paired
(``overlay_diff``); a changed node-map pool has its drawn maps' figures
compared paired by adventure, on HEAD's row figures (``strata_diff``). Their
tested figures join the same false discovery control; they never change the
exit code but through ``--fail-on flagged``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from boardgen_pipeline.calibration.batch import batch_scopes, evaluate_row
from boardgen_pipeline.errors import TableError, Violation
from boardgen_pipeline.review import corridor, overlay_diff, pairing, stats, strata_diff
from boardgen_pipeline.review import figures as F
from boardgen_pipeline.review.asked import ALPHA, Settings  # noqa: F401 - diff.ALPHA, diff.Settings: the diff's API
from boardgen_pipeline.review.paired import FLAG_RULE, FigureDiff, RowFigures, measure, resample_seed
from boardgen_pipeline.review.sources import Source, SourceRow
from boardgen_pipeline.scopes import DEPTH_SPACING, sigma
from boardgen_pipeline.tables.board_gen import DEFAULT_TABLE, key_text

ADDED, REMOVED, MODIFIED, IDENTICAL = "added", "removed", "modified", "identical"
STATES = (ADDED, REMOVED, MODIFIED, IDENTICAL)
RESAMPLE_LABEL = "review_resample"  # the seed of a row's resampling (stats): (master seed, label, sigma + look)
# Each F4 assertion the diff compares, and the field of a row report (``RowReport.as_dict``, a stored report)
# that holds its verdict. E reads the table (``e_verdict``); it is a warning, never a failure.
REPORT_FIELDS = {"A": "assertion_a", "A''": "assertion_a2", "A'": "assertion_a1", "B": "assertion_b",
                 "B'": "assertion_b1", "F": "assertion_f"}
ASSERTIONS = (*REPORT_FIELDS, "E")
WARNINGS = ("E",)  # shown when worse, never a worse verdict for the exit code
VERDICT_WORDS = {True: "pass", False: "FAIL"}  # an F4 verdict in every format (each adds its word for none)


@dataclass(frozen=True)
class VerdictChange:
    """An F4 assertion whose verdict differs between base and head (``base``
    None: the row was added)."""

    key: tuple[int, int]
    assertion: str
    base: bool | None
    head: bool | None

    @property
    def worsened(self) -> bool:
        """Whether the head fails where the base did not."""
        return self.head is False and self.base is not False

    @property
    def worse(self) -> bool:
        """A worse verdict: one that fails the diff (``--fail-on verdict``);
        a warning's (E) is shown, never counted."""
        return self.worsened and self.assertion not in WARNINGS

    @property
    def direction(self) -> str:
        if self.worsened:
            return "worse" if self.worse else "worse (a warning: the exit code is not moved)"
        return "better"

    def to_json(self) -> dict:
        return {"assertion": self.assertion, "base": self.base, "head": self.head, "worse": self.worse,
                "warning": self.assertion in WARNINGS}

    def text(self) -> str:
        said = {**VERDICT_WORDS, None: "-"}
        return f"{key_text(self.key)} {self.assertion}: {said[self.base]} -> {said[self.head]}"


@dataclass
class RowDiff(RowFigures):
    """One row of the diff."""

    key: tuple[int, int]
    state: str
    changes: list[str] = field(default_factory=list)
    base_verdicts: dict | None = None
    head_verdicts: dict | None = None
    figures: dict[str, FigureDiff] = field(default_factory=dict)
    samples: int = 0
    looks: int = 0
    identical_boards: float | None = None
    stored: dict = field(default_factory=dict)  # version -> boards read from the warehouse
    notes: list[str] = field(default_factory=list)
    corridor: tuple = (None, None)  # the row's corridor verdicts (base, head): review.corridor

    @property
    def verdict_changes(self) -> list[VerdictChange]:
        base, head = self.base_verdicts or {}, self.head_verdicts or {}
        if self.state == REMOVED or not head:
            return []
        if self.state == ADDED:
            return [VerdictChange(self.key, a, None, False) for a in ASSERTIONS if head.get(a) is False]
        return [VerdictChange(self.key, a, base.get(a), head.get(a)) for a in ASSERTIONS
                if base.get(a) is not None and head.get(a) is not None and base.get(a) != head.get(a)]

    def to_json(self) -> dict:
        return {"key": self.text_key, "level_index": self.key[0], "node_depth": self.key[1], "state": self.state,
                "flagged": self.flagged, "verdict_changes": [v.to_json() for v in self.verdict_changes],
                "changes": self.changes, "base_verdicts": self.base_verdicts, "head_verdicts": self.head_verdicts,
                "samples": self.samples, "looks": self.looks, "identical_boards": self.identical_boards,
                "stored_boards": self.stored, "notes": self.notes,
                "figures": {name: f.to_json() for name, f in self.figures.items()}}


@dataclass
class CalibrationDiff:
    """Every row of a diff, the other tables' changes, and the notes."""

    base: Source
    head: Source
    settings: Settings
    rows: list[RowDiff]
    tables: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    looks: int = 1
    margins: dict[str, float] = field(default_factory=dict)
    overlays: list[overlay_diff.OverlayDiff] = field(default_factory=list)
    strata: strata_diff.StrataDiff = field(default_factory=strata_diff.StrataDiff)

    def of(self, state: str) -> list[RowDiff]:
        return [r for r in self.rows if r.state == state]

    @property
    def verdict_changes(self) -> list[VerdictChange]:
        found = [v for r in self.rows for v in r.verdict_changes]
        return sorted(found, key=lambda v: (not v.worse, not v.worsened, v.key, ASSERTIONS.index(v.assertion)))

    @property
    def worse(self) -> bool:
        return any(v.worse for v in self.verdict_changes)

    @property
    def flagged_rows(self) -> list[RowDiff]:
        return [r for r in self.rows if r.flagged]

    @property
    def flagged(self) -> bool:
        """Whether any change is flagged: a row's, an overlay's or a stratum's
        (``--fail-on flagged``)."""
        return bool(self.flagged_rows or any(o.flagged for o in self.overlays) or self.strata.flagged)

    def counts(self) -> dict:
        out = {state: len(self.of(state)) for state in STATES}
        out.update(flagged_rows=len(self.flagged_rows), flagged_figures=sum(len(r.flagged) for r in self.rows),
                   verdicts_worse=sum(v.worse for v in self.verdict_changes), overlay_rows=len(self.overlays),
                   flagged_overlay_rows=sum(bool(o.flagged) for o in self.overlays),
                   flagged_overlay_figures=sum(len(o.flagged) for o in self.overlays),
                   strata_levels=len(self.strata.levels), flagged_strata_figures=len(self.strata.flagged))
        return out

    def to_json(self) -> dict:
        s = self.settings
        return {"schema": "boardgen.calibration_diff/1", "base": self.base.describe(), "head": self.head.describe(),
                "samples": s.samples, "master_seed": s.master_seed, "alpha": s.alpha, "flag_rule": FLAG_RULE,
                "until_decided": s.until_decided,
                "looks": self.looks, "resamples": s.resamples, "margins": self.margins, "counts": self.counts(),
                "verdict_changes": [{"key": f"{v.key[0]}-{v.key[1]}", **v.to_json()} for v in self.verdict_changes],
                "tables": self.tables, "notes": self.notes, "rows": [r.to_json() for r in self.rows],
                "overlays": [o.to_json() for o in self.overlays], "strata": self.strata.to_json()}


# --- margins ----------------------------------------------------------------------------------------------------

def margins_of(head: Source, asked: dict[str, float]) -> dict[str, float]:
    """Each figure's margin: the default, else the head table header's
    ``review_margins``, else ``--margin`` (the last named wins). An unknown
    figure in the header is a table violation."""
    header = dict(head.header.review_margins)
    unknown = sorted(set(header) - set(F.KNOWN))
    if unknown:
        where = str(head.table.path) if head.table is not None else DEFAULT_TABLE
        raise TableError([Violation(where, "header", f"review_margins.{name}", header[name], "unknown_figure",
                                    f"{F.unknown_figure(name)}; figures: {', '.join(F.KNOWN)}")
                          for name in unknown])
    return {**F.DEFAULT_MARGINS, **header, **asked}


def planned_looks(samples: int, until_decided: bool) -> int:
    """How many times a row may be looked at: once, or once per doubling of
    ``samples`` that stays within the row's ``DEPTH_SPACING`` scopes."""
    looks, n = 1, samples
    while until_decided and n * 2 <= DEPTH_SPACING:
        looks, n = looks + 1, n * 2
    return looks


# --- one row ----------------------------------------------------------------------------------------------------

def report_verdicts(report: dict) -> dict:
    """The F4 verdicts a row report holds (``RowReport.as_dict``, or a stored
    report), by assertion (F only where it is an error)."""
    out = {a: report.get(name) for a, name in REPORT_FIELDS.items()}
    if not report.get("survival_is_criterion"):
        out["F"] = None
    return {**out, "green": report.get("green")}


def row_report(version: SourceRow, records: list[dict]) -> dict:
    """The row's report on its calibration batch (its F4 verdicts and figures)."""
    return evaluate_row(version.row, records, version.survival_criterion).as_dict()


def e_verdict(source: Source, key: tuple[int, int]) -> bool | None:
    """Assertion E of row ``key`` in one state: whether its table's
    ``monotone_in_depth`` warnings leave the row alone (a stored report: its
    count of them); None where the state cannot say."""
    if source.table is not None:
        text = source.table.rows[key].key_text
        return not any(w.row == text for w in source.table.warnings)
    report = source.rows[key].report
    if report is None or report.get("monotone_warnings") is None:
        return None
    return report["monotone_warnings"] == 0


def changed_fields(base: Source, head: Source, key: tuple[int, int]) -> list[str]:
    """What differs between the row's two versions: its fields, and the header's
    spawn side."""
    b, h = base.rows[key].row.fields(), head.rows[key].row.fields()
    out = [f"{name} {_short(b.get(name))}->{_short(h.get(name))}" for name in sorted(set(b) | set(h))
           if b.get(name) != h.get(name)]
    if base.header.spawn_side != head.header.spawn_side:
        out.append(f"spawn_side {base.header.spawn_side}->{head.header.spawn_side} (header)")
    if not out:
        out.append("what the stored report does not keep (e.g. the header's dig_ap_cost)")
    return out


def _short(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def modified_row(base: Source, head: Source, key: tuple[int, int], settings: Settings, margins: dict,
                 looks: int, store: pairing.StoredBoards, keep: dict | None = None) -> RowDiff:
    """One modified row: both versions on the same scopes, every figure
    compared, extended while undecided under ``until_decided``. ``keep``:
    receives ``{key: (base records, head records)}`` of the calibration batch
    (the overlays are placed on these very boards)."""
    out = RowDiff(key, MODIFIED, changes=changed_fields(base, head, key))
    old, new = base.rows[key], head.rows[key]
    n, seed = settings.samples, settings.master_seed
    scopes = batch_scopes(*key, n)

    def both(scopes: range) -> tuple[pairing.Boards, pairing.Boards]:
        return (pairing.boards(old, base.header, scopes, seed, store),
                pairing.boards(new, head.header, scopes, seed, store))

    out.base_verdicts, out.head_verdicts = {"E": e_verdict(base, key)}, {"E": e_verdict(head, key)}
    try:
        bb, hb = both(scopes)
    except pairing.NotRebuildable as exc:
        out.notes.append(f"not compared: {exc}")
        return out
    base_report, head_report = row_report(old, bb.records), row_report(new, hb.records)
    out.base_verdicts.update(report_verdicts(base_report))
    out.head_verdicts.update(report_verdicts(head_report))
    target = corridor.target_of(head, key)  # HEAD's targets judge both versions
    out.corridor = (corridor.verdict(target, bb.records, base_report), corridor.verdict(target, hb.records, head_report))
    if keep is not None:
        keep[key] = (list(bb.records), list(hb.records))
    fog = bool(old.row.fog_region_count or new.row.fog_region_count)
    level = 1 - settings.alpha / looks
    history: dict[str, list[float]] = {}
    look = 0
    while True:
        figures = measure(F.board_columns(bb.records, old.row), F.board_columns(hb.records, new.row), fog, margins,
                          level, resample_seed(RESAMPLE_LABEL, sigma(*key) + look, seed), settings.resamples)
        for name, d in figures.items():
            history.setdefault(name, []).extend(d.looked)
            d.looked = list(history[name])
        look += 1
        if not settings.until_decided or all(d.decided for d in figures.values()) or n * 2 > DEPTH_SPACING:
            break
        try:
            extra_b, extra_h = both(range(scopes.start + n, scopes.start + 2 * n))
        except pairing.NotRebuildable as exc:
            out.notes.append(f"not extended past {n} boards: {exc}")
            break
        bb.extend(extra_b)
        hb.extend(extra_h)
        n *= 2
    if settings.until_decided:
        for d in figures.values():
            if d.p is not None:
                d.p = stats.looks_adjusted(d.p, looks)
    out.figures, out.samples, out.looks = figures, n, look
    out.identical_boards = pairing.realised(bb.records, hb.records)
    out.stored = {"base": bb.stored, "head": hb.stored}
    return out


def added_row(head: Source, key: tuple[int, int], settings: Settings, store: pairing.StoredBoards) -> RowDiff:
    """A row only HEAD has: its F4 verdicts on its calibration batch (an added
    row that fails F4 is a verdict change) and its figures' values."""
    version = head.rows[key]
    out = RowDiff(key, ADDED)
    try:
        hb = pairing.boards(version, head.header, batch_scopes(*key, settings.samples), settings.master_seed, store)
    except pairing.NotRebuildable as exc:
        out.notes.append(f"not calibrated: {exc}")
        return out
    report = row_report(version, hb.records)
    out.head_verdicts = {**report_verdicts(report), "E": e_verdict(head, key)}
    out.corridor = (None, corridor.verdict(corridor.target_of(head, key), hb.records, report))
    cols = F.board_columns(hb.records, version.row)
    fog = bool(version.row.fog_region_count)
    for f in F.FIGURES:
        if F.applies(f, fog):
            col = cols[f.column][~np.isnan(cols["won"])] if f.analysed_only else cols[f.column]
            value = F.exit_shares(col) if f.kind == F.CATEGORIES else F.value(f, col)
            out.figures[f.name] = FigureDiff(f.name, f.kind, 0.0, base=None, head=value, delta=None, boards=len(col))
    out.samples, out.stored = settings.samples, {"head": hb.stored}
    return out


def removed_row(base: Source, key: tuple[int, int]) -> RowDiff:
    out = RowDiff(key, REMOVED)
    report = base.rows[key].report
    if report is not None:
        out.base_verdicts = report_verdicts(report)
    return out


def identical_row(base: Source, head: Source, key: tuple[int, int]) -> RowDiff:
    """A row whose boards did not change: only E, which reads its neighbours
    in the table, can change its verdict."""
    out = RowDiff(key, IDENTICAL, base_verdicts={"E": e_verdict(base, key)}, head_verdicts={"E": e_verdict(head, key)})
    if base.rows[key].boss != head.rows[key].boss:
        out.notes.append(f"Boss flag {base.rows[key].boss}->{head.rows[key].boss}: its overlays change, its boards do not")
    return out


# --- the whole diff ---------------------------------------------------------------------------------------------

def state_of(base: Source, head: Source, key: tuple[int, int]) -> str:
    if key not in base.rows:
        return ADDED
    if key not in head.rows:
        return REMOVED
    return IDENTICAL if base.rows[key].fingerprint == head.rows[key].fingerprint else MODIFIED


def compare(base: Source, head: Source, settings: Settings, root: Path | None = None,
            code_differs: bool | None = None, on_row: Callable[[RowDiff], None] | None = None,
            store: pairing.StoredBoards | None = None, memo: dict | None = None) -> CalibrationDiff:
    """The diff of two states of the tables (module docstring). ``root``: the
    warehouse whose stored boards serve where they are the very boards;
    ``on_row``: called as each computed row is done (a progress bar);
    ``store``: stored boards already read; ``memo``: rows computed before,
    kept by the versions they compared (the watch recomputes only the rows a
    save changed)."""
    margins = margins_of(head, settings.margins)
    looks = planned_looks(settings.samples, settings.until_decided)
    store = store or pairing.StoredBoards(root)
    store.made.clear()  # boards generated for an earlier diff (the watch's last save) are not this one's to keep
    memo = {} if memo is None else memo
    rows = []
    kept: dict = {}
    for key in sorted(set(base.rows) | set(head.rows)):
        state = state_of(base, head, key)
        if state in (MODIFIED, ADDED):
            versions = (key, state, base.rows[key].fingerprint if state == MODIFIED else None,
                        head.rows[key].fingerprint, tuple(sorted(margins.items())), corridor.target_of(head, key))
            if versions not in memo:
                memo[versions] = (modified_row(base, head, key, settings, margins, looks, store, kept)
                                  if state == MODIFIED
                                  else added_row(head, key, settings, store))
                if on_row is not None:
                    on_row(memo[versions])
            row = memo[versions]
        elif state == REMOVED:
            row = removed_row(base, key)
        else:
            row = identical_row(base, head, key)
        rows.append(row)
    out = CalibrationDiff(base, head, settings, rows, table_changes(base, head), list(base.notes + head.notes), looks,
                          margins)
    out.notes += corridor.departures(rows)  # the rows the change takes out of their target corridor
    s = settings
    if base.catalog is not None and head.catalog is not None:
        compared = {r.key: r.state for r in rows if r.state in (MODIFIED, IDENTICAL)}
        out.overlays, notes = overlay_diff.compare(base, head, compared, s, margins, store, kept)
        out.notes += notes
        out.strata = strata_diff.compare(base, head, s, margins, store)
    elif any(c is not None and (c.variation is not None or c.pools) for c in (base.catalog, head.catalog)):
        out.notes.append("overlays and strata not compared: the warehouse keeps neither the variation table nor the "
                         "node-map pools its calibration was made with")
    flag(out)
    if code_differs:
        out.notes.append("the code differs between BASE and HEAD: this diff compares the two tables under the code "
                         "checked out; comparing two versions of the code is the nightly's drift check")
    return out


def flag(diff: CalibrationDiff) -> None:
    """Benjamini-Hochberg over every tested figure of every modified row, every
    compared row's overlays and every changed pool's drawn maps, then the
    flags (``paired.FLAG_RULE``): q <= alpha and the estimate beyond the
    margin. q is at least p, and p at least the interval's own p, so a
    flagged figure's interval leaves out zero; whether it lies beyond the
    margin too, each flag says (``FigureDiff.flag_reading``)."""
    tested = [f for r in diff.of(MODIFIED) for f in r.figures.values() if f.p is not None]
    tested += [f for o in diff.overlays for f in o.figures.values() if f.p is not None]
    tested += [f for lv in diff.strata.levels for f in lv.figures.values() if f.p is not None]
    for f, q in zip(tested, stats.benjamini_hochberg([f.p for f in tested], diff.settings.alpha)):
        f.q = q
        f.flagged = q <= diff.settings.alpha and f.size > f.margin


def table_changes(base: Source, head: Source) -> list[dict]:
    """Each table file or table that differs between the states: ``added``,
    ``removed``, ``modified``, or ``layout`` (its bytes changed, not what it
    says: comments, whitespace, order)."""
    if not base.contents or not head.contents:
        return []
    out = []
    for name in sorted(set(base.contents) | set(head.contents)):
        b, h = base.contents.get(name), head.contents.get(name)
        if b == h:
            files = [f for f in set(base.files) | set(head.files) if f == name or f.startswith(name)]
            if any(base.files.get(f) != head.files.get(f) for f in files):
                out.append({"table": name, "change": "layout"})
            continue
        out.append({"table": name, "change": ADDED if b is None else REMOVED if h is None else MODIFIED})
    return out
