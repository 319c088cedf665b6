"""Many rows' chains, streamed through a pool of workers, each published as it
arrives: what ``boardgen calibrate`` runs (SPEC 7, 8 ``calibrate``; SPEC 9
order; one publishing path, on every core).

The Dagster step ``calibrate`` runs the same chain (``steps.chain``) through
the same pool (``steps.pool``) and publishes with the same function, so both
paths write the same bytes and keep the same rule: a batch with an illegal
board (assertion A') is never published, and a row's overlays and report
are made from the boards it publishes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from boardgen_pipeline.calibration.batch import RowReport
from boardgen_pipeline.calibration.seeds import seed_batch
from boardgen_pipeline.steps import chain, summary
from boardgen_pipeline.steps.pool import RowPool
from boardgen_pipeline.warehouse import publish


def row_tasks(root, catalog, keys: Iterable[tuple[int, int]], samples: int, master_seed: int = 0,
              stages=chain.STAGES) -> Iterator[chain.RowTask]:
    """One task per row, made as the pool asks for them (a task without the
    boards stage carries the row's published boards file, read then)."""
    stages = frozenset(stages)
    for key in keys:
        batch = seed_batch(catalog.board_gen, key, samples, master_seed)
        boards = None
        if chain.BOARDS not in stages:
            try:
                boards = publish.read_row_bytes(root, chain.BOARDS, key)
            except FileNotFoundError:
                boards = None
        yield chain.RowTask(batch, stages, catalog.variation, catalog.resources, boards)


def run_rows(root, catalog, keys: Iterable[tuple[int, int]], samples: int, master_seed: int = 0,
             pool: RowPool | None = None, stages=chain.STAGES) -> Iterator[tuple[chain.RowTask, chain.RowResult | None,
                                                                               BaseException | None]]:
    """Run and publish every row of ``keys`` on ``pool`` (default: this
    process), yielding ``(task, result, error)`` once each row is published.

    A thread writes the files (their fsyncs wait on the disk, not on the
    interpreter) while the caller records the rows written before: the
    rows arrive in the order they were published, at most
    ``WRITES_AHEAD`` of them between the two."""
    own = pool is None
    pool = pool or RowPool(1)
    if own:
        pool.__enter__()
    written: deque = deque()
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="publish") as writer:
            tasks = row_tasks(root, catalog, keys, samples, master_seed, stages)
            for outcome in pool.map_unordered(chain.run_row, tasks, window=QUEUED_PER_WORKER * pool.parallel):
                if outcome.error is not None:
                    written.append((outcome.item, None, outcome.error))
                else:
                    written.append((outcome.item, writer.submit(chain.publish_result, root, outcome.result), None))
                while written and (len(written) > WRITES_AHEAD or _done(written[0])):
                    yield _published(written.popleft())
            while written:
                yield _published(written.popleft())
    finally:
        if own:
            pool.__exit__(None, None, None)


WRITES_AHEAD = 4
# Rows queued a worker: enough that the workers never wait while the caller records a chunk of
# rows (the Dagster step records up to 32 at a time), few enough that memory stays flat.
QUEUED_PER_WORKER = 24


def _done(entry) -> bool:
    return entry[1] is None or entry[1].done()


def _published(entry):
    task, future, error = entry
    if future is None:
        return task, None, error
    return task, future.result(), None  # a storage fault raises here, in the caller's thread


@dataclass
class Published:
    """What ``publish_rows`` hands back: counts for every row, reports for the
    rows worth printing (every row of a table of at most
    ``summary.SHOW_ALL_ROWS`` rows, else the failing ones, the first
    ``summary.LISTED_MAX``), so a table of any size streams through."""

    rows: int = 0
    failed: int = 0
    listed: list[RowReport] = field(default_factory=list)
    list_all: bool = True

    def add(self, report: RowReport) -> None:
        self.rows += 1
        self.failed += not report.green
        if (self.list_all or not report.green) and len(self.listed) < summary.LISTED_MAX:
            self.listed.append(report)


def publish_rows(root, catalog, keys: Iterable[tuple[int, int]], samples: int, master_seed: int = 0,
                 pool: RowPool | None = None, on_row: Callable[[chain.RowResult], None] | None = None
                 ) -> Published:
    """Every row of ``keys``, published; the reports C / diagnostics D worth
    printing in table order (:class:`Published`). A row that raised
    re-raises here, after the other rows were published."""
    keys = list(keys)
    out, first_error = Published(list_all=len(keys) <= summary.SHOW_ALL_ROWS), None
    for _task, result, error in run_rows(root, catalog, keys, samples, master_seed, pool):
        if error is not None:
            first_error = first_error or error
            continue
        out.add(result.report)
        if on_row is not None:
            on_row(result)
    if first_error is not None:
        raise first_error
    out.listed.sort(key=lambda r: r.key)
    return out
