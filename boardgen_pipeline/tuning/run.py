"""The target curve's rows tuned together (SPEC 12; SPEC 9 "scale-out: one
partition = one unit of work"): one task a targeted row, run where the
calibration's rows run (``steps.pool``: this process, local workers, a Dask
cluster), the proposals as they arrive, and the table edit they make
(``tables.edit``, as ``advise --apply`` writes a fix: one value a row,
comments and order kept, validated before the file is touched).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from boardgen_pipeline.calibration.fingerprints import partition_key
from boardgen_pipeline.catalog import Catalog
from boardgen_pipeline.scopes import DEFAULT_SAMPLES
from boardgen_pipeline.tables.edit import RowChange
from boardgen_pipeline.tuning import corridor, search
from boardgen_pipeline.tuning.proposal import Proposal, RowTask, tune_row


@dataclass
class Tuning:
    """Every targeted row's proposal, in key order, and the rows that failed to run."""

    targets_path: str
    table_path: str
    samples: int
    master_seed: int
    proposals: list[Proposal] = field(default_factory=list)
    errors: dict[tuple[int, int], str] = field(default_factory=dict)

    def add(self, task: RowTask, proposal: Proposal | None, error: BaseException | None) -> None:
        """One task's outcome: its proposal, or the error it raised."""
        if error is not None:
            self.errors[task.key] = f"{type(error).__name__}: {error}"
        else:
            self.proposals.append(proposal)

    def of(self, state: str) -> list[Proposal]:
        return [p for p in self.proposals if p.state == state]

    @property
    def changes(self) -> list[RowChange]:
        return [RowChange(p.key, p.task.target.knob, p.old, p.new) for p in self.proposals if p.changes]

    @property
    def holding(self) -> list[Proposal]:
        """Rows whose proposal holds the corridor on the held-out calibration batch."""
        return [p for p in self.proposals if p.heldout is not None and p.heldout.holds]

    def summary(self) -> dict:
        proven = [p for p in self.proposals if p.heldout is not None]
        boards = [p.boards for p in self.proposals]
        return {"rows": len(self.proposals), "reached": len(self.of(search.REACHED)),
                "unchanged": len(self.of(search.UNCHANGED)), "unreachable": len(self.of(search.UNREACHABLE)),
                "failed": len(self.errors), "heldout_proven": len(proven), "heldout_hold": len(self.holding),
                "heldout_inside": sum(p.heldout.verdict.state == corridor.INSIDE for p in self.holding),
                "boards": sum(boards), "boards_per_row": sum(boards) / len(boards) if boards else 0.0,
                "changes": len(self.changes)}

    def as_dict(self) -> dict:
        return {"schema": "boardgen.tune/1", "targets": self.targets_path, "table": self.table_path,
                "samples": self.samples, "master_seed": self.master_seed, "summary": self.summary(),
                "rows": [p.as_dict() for p in self.proposals],
                "errors": {partition_key(k): e for k, e in sorted(self.errors.items())}}


def tasks(catalog: Catalog, keys: list[tuple[int, int]] | None = None, samples: int = DEFAULT_SAMPLES,
          master_seed: int = 0, max_boards: int = search.DEFAULT_MAX_BOARDS) -> list[RowTask]:
    """One task a targeted row of ``keys`` (default: every targeted row), in key order."""
    targets, table = catalog.targets, catalog.board_gen
    chosen = targets.keys() if keys is None else [k for k in keys if k in targets.rows]
    return [RowTask(table.rows[k], table.header, targets.rows[k], samples, master_seed, max_boards) for k in chosen]


def tune(catalog: Catalog, work: list[RowTask], pool, on_row: Callable[[Proposal | None, RowTask], None] | None = None,
         ) -> Tuning:
    """Every task on ``pool`` (a ``steps.pool.RowPool``, entered), the proposals in key order."""
    out = Tuning(catalog.targets.path, catalog.board_gen.path, work[0].samples if work else DEFAULT_SAMPLES,
                 work[0].master_seed if work else 0)
    for task, proposal, error in run(work, pool):
        out.add(task, proposal, error)
        if on_row is not None:
            on_row(proposal, task)
    out.proposals.sort(key=lambda p: p.key)
    return out


def run(work: list[RowTask], pool) -> Iterator[tuple[RowTask, Proposal | None, BaseException | None]]:
    """The tasks' proposals as they complete."""
    for o in pool.map_unordered(tune_row, work):
        yield o.item, o.result, o.error
