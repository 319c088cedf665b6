"""One row's calibration chain, as a task any worker can run (SPEC 7; SPEC 9
order: seed batch -> boards -> F4 checks -> variant overlays -> overlay
checks -> report; seed 001 "F4 批量统计断言"; seed 003 "布置段").

:func:`run_row` is the whole chain of one row and a pure function of its
:class:`RowTask`: it generates the row's boards, evaluates assertions A, A'',
A', B, B', E on them, places and checks their variant overlays and computes
report C and diagnostics D, and returns every file the row publishes as
encoded Parquet bytes with its digest (:class:`RowResult`). It reads and
writes no file, so it runs in this process, in a local worker process or on
a Dask worker on another machine alike, and running it twice gives the same
bytes. :func:`publish_result` (the caller's process) writes those bytes with
the warehouse's publishing rules:

- validate before publishing (SPEC 10): a batch with an illegal board
  (assertion A', blocking) is written to ``_rejected/`` and the row's
  published files are withdrawn; no overlay or report is made from it;
- a row's overlays and report are made from the very boards it publishes,
  so no overlay joins to boards of another row version;
- a published report is kept as a version of the row's history
  (``steps.history``), once per distinct content.

``stages`` says which of the row's datasets to make. Without ``boards`` the
chain starts from the row's published boards (their bytes travel in the
task), e.g. when only the variation table changed.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from time import perf_counter

import numpy as np

from boardgen_pipeline.board.r0 import layouts_to_arrays, r0_batch
from boardgen_pipeline.calibration.assertions import CHECK_A1, RowEvidence, evidence_outcomes
from boardgen_pipeline.calibration.batch import RowReport, evaluate_row
from boardgen_pipeline.calibration.fingerprints import NO_VARIANTS, overlay_fingerprint
from boardgen_pipeline.calibration.report import report_record, report_schema
from boardgen_pipeline.calibration.seeds import SeedBatch, generate_batch
from boardgen_pipeline.outcomes import CheckOutcome
from boardgen_pipeline.steps import determinism, history, row_checks
from boardgen_pipeline.variants import batch as overlay_batch
from boardgen_pipeline.variants import outcomes as overlay_checks
from boardgen_pipeline.variants.skew import ResourceWeights
from boardgen_pipeline.variants.table import VariationTable
from boardgen_pipeline.warehouse import datasets, publish

BOARDS, OVERLAYS, REPORT = "boards", "variant_overlays", "calibration_report"
STAGES = (BOARDS, OVERLAYS, REPORT)
CHECKS = row_checks.DATASET
# What a row's report materialization records (the whole record is a query away, `boardgen sql`).
REPORT_FIGURES = ("samples", "inferability_target", "p10", "p50", "p90", "green", "below_target", "illegal",
                  "retry_rate", "mean_attempts", "advice_status", "pass_rate_per_attempt", "bbbv_per_safe_p50",
                  "solvable_full_logic_share", "batch_fingerprint")


@dataclass(frozen=True)
class RowTask:
    """What one row's chain needs: its seed batch, the stages to run, the
    variation and resource weight tables (overlays), and, when ``boards`` is
    not a stage, the bytes of the row's published boards file."""

    batch: SeedBatch
    stages: frozenset = frozenset(STAGES)
    variation: VariationTable | None = None
    resources: ResourceWeights | None = None
    published_boards: bytes | None = None

    @property
    def key(self) -> tuple[int, int]:
        return self.batch.key


@dataclass(frozen=True)
class RowFile:
    """One file of the row: Parquet bytes and their sha256, or ``data=None``
    to withdraw the row's file of that dataset."""

    dataset: str
    data: bytes | None
    digest: str = ""

    @staticmethod
    def of(dataset: str, table) -> RowFile:
        data = datasets.encode(table)
        return RowFile(dataset, data, hashlib.sha256(data).hexdigest())


@dataclass
class RowResult:
    """What one row's chain made: its files (in publishing order), its check
    outcomes and materialization figures per dataset, why a stage made
    nothing, whether its batch may be published (A'), and seconds per stage."""

    key: tuple[int, int]
    files: list[RowFile] = field(default_factory=list)
    outcomes: dict[str, list[CheckOutcome]] = field(default_factory=dict)
    figures: dict[str, dict] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    published: bool = True
    seconds: dict[str, float] = field(default_factory=dict)
    report: RowReport | None = None
    written: dict[str, str] = field(default_factory=dict)  # dataset -> path, once published
    digests: dict[str, str] = field(default_factory=dict)  # dataset -> sha256 of what was written
    history: dict | None = None  # the report's version (steps.history), kept where the report is published
    reproduction: determinism.Reproduction | None = None  # the boards against the stored ones, once published

    @property
    def partition_key(self) -> str:
        return f"{self.key[0]}-{self.key[1]}"

    def outcome(self, name: str) -> CheckOutcome:
        return next(o for found in self.outcomes.values() for o in found if o.name == name)

    def file(self, dataset: str) -> RowFile | None:
        return next((f for f in self.files if f.dataset == dataset), None)


def boards_figures(batch: SeedBatch, report: RowReport, published: bool) -> dict:
    """The figures a row's boards materialization records."""
    r = report
    return {
        "row": batch.row.key_text,
        "samples": r.samples,
        "target": r.target,
        "p10": r.p10,
        "p50": r.p50,
        "p90": r.p90,
        "exit_passed": r.exits.get("passed", 0),
        "exit_best_legal": r.exits.get("best_legal", 0),
        "exit_least_bad": r.exits.get("least_bad", 0),
        "pass_rate": history.pass_rate(r.exits.get("passed", 0), r.samples),
        "retry_rate": r.retry_rate,
        "mean_attempts": r.mean_attempts,
        "cap_rejections": r.cap_rejections,
        "below_target": len(r.below_target_scopes),
        "illegal": len(r.illegal_scopes),
        "published": published,
        # what a perfect player risks: null where no board was analysed
        **{k: r.fairness.get(k) for k in ("mean_survival", "win_rate", "mean_guesses", "no_guess_share")},
        "row_fingerprint": batch.row_fingerprint,
        "batch_fingerprint": batch.batch_fingerprint,
    }


def _published_records(task: RowTask) -> list[dict]:
    """The row's published board records, from the bytes in the task; they must
    come from the row's current batch."""
    import pyarrow as pa

    batch = task.batch
    if task.published_boards is None:
        raise FileNotFoundError(f"row {batch.row.key_text} has no published boards: generate them first")
    records = datasets.read_file(pa.BufferReader(task.published_boards)).to_pylist()
    for r in records:
        r["level_index"], r["node_depth"] = batch.key
    fps = {r.get("batch_fingerprint") for r in records}
    if fps != {batch.batch_fingerprint}:
        raise ValueError(f"published boards of row {batch.row.key_text} were made from batch {sorted(map(str, fps))}, "
                         f"not {batch.batch_fingerprint}: regenerate the boards first")
    return records


def run_row(task: RowTask) -> RowResult:
    """The chain of one row (module docstring). Raises only on a bug or bad
    input; a row whose boards cannot be published says so in ``skipped``."""
    batch = task.batch
    out = RowResult(batch.key)
    t0 = perf_counter()
    report = advice = None
    if BOARDS in task.stages:
        records = generate_batch(batch)
        t1 = perf_counter()
        report = evaluate_row(batch.row, records, batch.header.survival_is_criterion)
        evidence = RowEvidence(batch, records, report)
        outcomes = evidence_outcomes(evidence)
        advice = evidence.advice  # A read it: the report's figures are the same reading
        legal = next(o for o in outcomes if o.name == CHECK_A1).passed
        t2 = perf_counter()
        out.files.append(RowFile.of(BOARDS, datasets.records_table(records)))
        out.outcomes[BOARDS] = outcomes
        out.figures[BOARDS] = boards_figures(batch, report, legal)
        out.published = legal
        out.seconds.update({"generate": t1 - t0, "checks": t2 - t1, "encode": perf_counter() - t2})
        if not legal:
            why = f"batch rejected: {len(report.illegal_scopes)} illegal boards (assertion A')"
            out.skipped.update({s: why for s in (OVERLAYS, REPORT) if s in task.stages})
            out.report = report
            _checks_file(batch, out)
            return out
    else:
        try:
            records = _published_records(task)
        except (FileNotFoundError, ValueError) as exc:
            out.skipped.update({s: str(exc) for s in (OVERLAYS, REPORT) if s in task.stages})
            return out
        # the row's F4 verdicts again, from the very boards it publishes: its checks file holds them all
        report = evaluate_row(batch.row, records, batch.header.survival_is_criterion)
        evidence = RowEvidence(batch, records, report)
        out.outcomes[BOARDS] = evidence_outcomes(evidence)
        advice = evidence.advice
    if OVERLAYS in task.stages:
        t3 = perf_counter()
        _overlays(task, records, out)
        out.seconds["overlays"] = perf_counter() - t3
    if REPORT in task.stages:
        t4 = perf_counter()
        report = report or evaluate_row(batch.row, records, batch.header.survival_is_criterion)
        record = report_record(batch, report, records, advice)
        out.files.append(RowFile.of(REPORT, datasets.records_table([record], schema=report_schema(record))))
        out.history = history.version_of(record)
        out.figures[REPORT] = {"row": batch.row.key_text, "pass_rate": out.history["pass_rate"],
                               **{k: record[k] for k in REPORT_FIGURES if record.get(k) is not None}}
        out.seconds["report"] = perf_counter() - t4
    out.report = report
    _checks_file(batch, out)
    return out


def _checks_file(batch: SeedBatch, out: RowResult) -> None:
    """The row's check verdicts as one file (``steps.row_checks``), each with
    the fingerprint of what it judged."""
    fingerprints = {BOARDS: batch.batch_fingerprint,
                    OVERLAYS: (out.figures.get(OVERLAYS) or {}).get("overlay_fingerprint", "")}
    out.files.append(RowFile.of(CHECKS, row_checks.table(row_checks.records(out.outcomes, fingerprints))))


def _overlays(task: RowTask, records: list[dict], out: RowResult) -> None:
    """The row's variant overlays, placed over the whole row at once, written to
    a table, and checked as read back from that table (seed 003;
    ``variants.batch``, ``variants.outcomes``)."""
    batch, variation = task.batch, task.variation
    if variation is None:
        out.files.append(RowFile(OVERLAYS, None))
        out.outcomes[OVERLAYS] = overlay_checks.not_applicable_outcomes("the tables have no variation.toml")
        out.figures[OVERLAYS] = {"row": batch.row.key_text, "boards": 0, "published": False,
                                 "overlay_fingerprint": NO_VARIANTS}
        return
    row, (level, depth) = batch.row, batch.key
    width, height = row.board_width, row.board_height
    mines, fog = layouts_to_arrays([r["layout"] for r in records], width, height)
    # R0 of the boards as written, once: the placement's candidates and the checks' domain both
    # read it (read-only), the one computation ``board.r0`` makes of these masks either way
    r0 = r0_batch(mines, fog, width, height, batch.spawn_side)
    r0.flags.writeable = False
    scopes = [r["scope"] for r in records]
    placed = overlay_batch.place_row(mines, fog, scopes=scopes, master_seed=batch.master_seed, width=width,
                                     height=height, spawn_side=batch.spawn_side, level_index=level, node_depth=depth,
                                     board_type=row.board_type, is_boss=batch.boss, table=variation, r0=r0)
    fp = overlay_fingerprint(batch.batch_fingerprint, variation, batch.boss, row.board_type)
    batch_fps = [r.get("batch_fingerprint") for r in records]
    table = placed.to_arrow(batch_fps[0] if len(set(batch_fps)) == 1 else batch_fps, fp)  # one a row, as a rule
    written = overlay_batch.OverlayBatch.from_arrow(table, level_index=level, node_depth=depth)
    out.outcomes[OVERLAYS] = overlay_checks.overlay_outcomes(written, mines, fog, width=width, height=height,
                                                             spawn_side=batch.spawn_side, variation=variation,
                                                             weights=task.resources, board_scopes=scopes, r0=r0)
    out.files.append(RowFile.of(OVERLAYS, table))
    out.figures[OVERLAYS] = overlay_figures(batch, written, fp)


def overlay_figures(batch: SeedBatch, overlays: overlay_batch.OverlayBatch, fingerprint: str) -> dict:
    """The figures a row's overlays materialization records."""
    codes, counts = np.unique(overlays.variant_type, return_counts=True)
    types = {overlays.type_ids[c] if c >= 0 else "(none)": n for c, n in zip(codes.tolist(), counts.tolist())}
    return {
        "row": batch.row.key_text,
        "boards": len(overlays),
        "variant_cells": int(overlays.cell_count().sum()),
        "packs": int(overlays.pack_count().sum()),
        "shortfall_cells": int(overlays.shortfall.sum()),
        "whole_board_boards": int((overlays.global_variant >= 0).sum()),
        "type_counts": dict(sorted(types.items())),
        "overlay_fingerprint": fingerprint,
        "published": True,
    }


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel a row's chain runs:
    the generator's and the overlays'. A worker calls it before its first
    row; a first run compiles once, before the workers start. Processes
    that start together on a cold cache (the nightly's lanes) compile one at
    a time: the first compiles, the others wait and then load what it
    wrote, rather than each compiling every kernel at once (twice the CPU,
    and no sooner done). The one that compiles has a second process compile
    from the other end meanwhile, on a machine with a second core
    (``board.kernel_cache``)."""
    from boardgen_pipeline import files, paths
    from boardgen_pipeline.board import kernel_cache

    with files.lock(paths.kernel_cache_dir() / ".compiling.lock") if kernels_cold() else contextlib.nullcontext():
        if kernels_cold():  # checked again under the lock: another process may have compiled them meanwhile
            with kernel_cache.other_end_compiling(f"{__name__}:warm_up_from_the_other_end"):
                _warm_up_kernels()
            with contextlib.suppress(OSError):  # a folder numba cannot write either: each process compiles
                paths.kernel_cache_mark().touch()
            return
    _warm_up_kernels()  # warm: load what the cache holds


def _warm_up_kernels(from_the_other_end: bool = False) -> None:
    from boardgen_pipeline.board import generator

    if from_the_other_end:
        # the overlays first (their own kernels): by then the first process has compiled the closures,
        # which the figures share with the attempt loop (4 s sooner, 8% less CPU, two pairs measured)
        overlay_batch.warm_up()
        generator.warm_up_figures()
        generator.warm_up(from_the_other_end=True)
    else:
        generator.warm_up()
        overlay_batch.warm_up()


def warm_up_from_the_other_end() -> None:
    """The second process of a cold compile (``warm_up``): every kernel, in
    the other order (the overlays and the figures first), its saves
    serialized with the first process's."""
    from boardgen_pipeline.board import kernel_cache

    kernel_cache.serialize_cache_writes()
    _warm_up_kernels(from_the_other_end=True)


def kernels_cold() -> bool:
    """Whether numba's cache folder for these kernel sources may lack a
    kernel a row runs, for the sources at this path: no ``warm_up`` has
    compiled them all into it yet from here (``paths.kernel_cache_mark``).
    A folder holding only some of them (the kernels a few tests compiled),
    or holding them for another checkout of the same sources (numba keeps
    each source folder's kernels apart), is cold too: what is missing is
    compiled under the compile lock, from both ends, not by whichever
    process meets it first."""
    from boardgen_pipeline import paths

    return not paths.kernel_cache_mark().exists()


def publish_result(root, result: RowResult) -> RowResult:
    """Write a row's files into the warehouse at ``root`` with the publishing
    rules (module docstring), in order, and let go of their bytes: the
    result keeps where each file went (``written``) and its digest. Runs
    where the warehouse is (the caller's process), never on a worker.

    First the new boards are held against the stored ones
    (``steps.determinism``): boards that changed without a change of their
    row publish nothing, and the drift is recorded instead."""
    boards = result.file(BOARDS)
    if boards is not None:
        result.reproduction = determinism.compare(root, result.key, boards.data, boards.digest,
                                                  result.figures[BOARDS]["batch_fingerprint"])
        if result.reproduction.kind == determinism.DRIFT:
            determinism.write_drift(root, result.key, result.reproduction)
            result.files = []
            return result
        determinism.clear_drift(root, result.key)
    for f in result.files:
        if f.dataset == BOARDS:
            write = publish.publish_boards if result.published else publish.reject_boards
            result.written[BOARDS] = str(write(root, result.key, f.data, f.digest))
        elif f.data is None:
            publish.withdraw(root, f.dataset, result.key)
            continue
        else:
            result.written[f.dataset] = str(publish.write_row_file(root, f.dataset, result.key, f.data, f.digest))
            if f.dataset == REPORT and result.history is not None:  # after the report it records
                kept = history.keep(root, result.key, result.history)
                if kept is not None:
                    result.written[history.DATASET] = str(kept)
        result.digests[f.dataset] = f.digest
    result.files = []
    return result
