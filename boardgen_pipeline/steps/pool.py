"""Where rows run: in this process, in a pool of local processes, or on a Dask
cluster (SPEC 9 "Scale-out: one partition = one unit of work";
every core, and past one machine).

Rows are independent: a row's chain (``steps.chain.run_row``) reads its task
and returns its result, and touches no file, so it can run anywhere, in any
order, and be run again. The caller (the Dagster step, ``boardgen
calibrate``) publishes each result as it arrives, so the rows stream through:
at most ``window`` tasks are in flight, whatever the size of the table.

- ``workers = 1``: in this process, one row after the other (no start-up);
- ``workers = N``: a ``pebble.ProcessPool`` of N spawned processes (spawn,
  not fork: the caller has threads). A worker that dies (killed, out of
  memory) fails only the row it was running, on that row's own future
  (``ProcessExpired``), and pebble starts a new worker: that row runs again,
  ``RETRIES`` times at most, and the other rows never notice (a row is a
  pure function of its task: running it twice gives the same bytes). The
  standard library's pool cannot say which row killed its worker (it breaks,
  losing every row in flight), which is why pebble (docs/decisions.md,
  "One way to do each thing"). Should the pool itself break
  (a worker dying before it took a row, a pipe torn), it is started again
  and its rows run again, uncounted; a pool that breaks ``RETRIES + 1``
  times in a row without finishing a row fails the rows it held;
- a Dask scheduler address: ``distributed.Client(address)``; Dask reschedules
  the rows of a worker that dies on the others (``retries`` on top).

At most ``window`` rows are in flight. A row that raises is reported with
its exception, and the other rows go on; ``notes`` says what happened to
the workers, for the caller's log.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from boardgen_pipeline.errors import ClusterError, ClusterLost
from boardgen_pipeline.processes import default_workers
from boardgen_pipeline.settings import check_address
from boardgen_pipeline.words import noun

RETRIES = 2  # runs again of a row whose worker died; the row fails when it kills its worker once more
CONNECT_TIMEOUT_SECONDS = 10
POLL_SECONDS = 2.0
WORKERLESS_SECONDS = 60  # a cluster that lost every worker fails the run after this long
# Below this many rows a worker costs more to start (~1 s: imports and the
# kernels' cache) than it saves; measured in benchmarks/scale.py.
MIN_ROWS_PER_WORKER = 12


def build(rows: int, workers: int | None = None, dask: str = "", source: str = "BOARDGEN_DASK",
          workerless_seconds: float | None = None) -> RowPool:
    """Where ``rows`` rows run, decided in one place for every caller
    (``boardgen calibrate`` and the Dagster step): the Dask cluster
    at ``dask`` when given; else ``workers`` local processes when given (never
    more than the rows); else every core, fewer on a small batch
    (:func:`workers_for`)."""
    if dask:
        return RowPool(dask_address=dask, source=source, workerless_seconds=workerless_seconds)
    return RowPool(parallelism(rows, workers))


def parallelism(rows: int, workers: int | None = None) -> int:
    """How many processes ``rows`` rows get: ``workers`` when asked (never
    more than the rows), else every core, fewer on a small batch: one the
    nightly's runs and ``boardgen calibrate``'s workers both follow."""
    return max(1, min(workers, rows)) if workers else workers_for(rows, default_workers())


def workers_for(rows: int, workers: int) -> int:
    """How many local workers ``rows`` rows deserve: never more than asked,
    never one that would cost more to start than the rows it takes."""
    return max(1, min(workers, rows // MIN_ROWS_PER_WORKER))


@dataclass(frozen=True)
class Outcome:
    """What became of one item: its result, or the exception it raised."""

    item: object
    result: object = None
    error: BaseException | None = None


def _warm() -> None:
    # A worker loads the compiled kernels from numba's cache once, before its first row, and keeps
    # them (and its modules) out of its collections.
    from boardgen_pipeline.processes import freeze_long_lived
    from boardgen_pipeline.steps.chain import warm_up

    warm_up()
    freeze_long_lived()


class RowPool:
    """Runs ``fn(item)`` for many items on ``workers`` local processes or on a
    Dask cluster, yielding :class:`Outcome` values in completion order.

    Use as a context manager; ``describe()`` says where the rows run."""

    def __init__(self, workers: int = 1, dask_address: str = "", dask_local_workers: int = 0,
                 source: str = "BOARDGEN_DASK", workerless_seconds: float | None = None):
        self.workers = max(1, int(workers))
        self.dask_address = dask_address
        self.source = source  # where the address came from, for the error a bad one gets
        self.workerless_seconds = WORKERLESS_SECONDS if workerless_seconds is None else workerless_seconds
        self.dask_local_workers = dask_local_workers
        self._executor = None  # a pebble.ProcessPool, started on first use
        self._client = None
        self._cluster = None
        self._workers_seen: set = set()
        self.notes: list[str] = []  # what happened to the workers (a death, a retry), for the caller's log

    # --- life cycle ------------------------------------------------------------------------------

    def __enter__(self) -> RowPool:
        if self.dask_address:
            self._client = connect(self.dask_address, source=self.source)
        elif self.dask_local_workers:
            from distributed import Client, LocalCluster

            self._cluster = LocalCluster(n_workers=self.dask_local_workers, threads_per_worker=1, processes=True,
                                         dashboard_address=None)
            self._client = Client(self._cluster)
        return self

    def __exit__(self, *exc) -> None:
        if self._executor is not None:
            _close(self._executor)
            self._executor = None
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def describe(self) -> str:
        if self.dask_address:
            return f"Dask cluster {self.dask_address}"
        if self.dask_local_workers:
            return f"Dask LocalCluster of {self.dask_local_workers} processes"
        return "this process" if self.workers == 1 else f"{self.workers} worker processes"

    @property
    def parallel(self) -> int:
        """Rows that may run at once."""
        if self._client is not None:
            return max(1, sum(self._client.nthreads().values()))
        return self.workers

    # --- running ---------------------------------------------------------------------------------

    def map_unordered(self, fn: Callable, items: Iterable, window: int | None = None) -> Iterator[Outcome]:
        """``fn(item)`` for every item; at most ``window`` (default: twice the
        rows that may run at once) in flight, results as they complete."""
        window = window or 2 * self.parallel
        if self._client is not None:
            yield from self._map_dask(fn, items, window)
        elif self.workers == 1:
            for item in items:
                try:
                    yield Outcome(item, fn(item))
                except Exception as exc:  # the row fails, the others go on
                    yield Outcome(item, error=exc)
        else:
            yield from self._map_processes(fn, items, window)

    def _start(self):
        import multiprocessing

        from pebble import ProcessPool

        # spawn, not fork: the parent (a Dagster step) has threads, and a forked child inherits
        # whatever locks they held
        self._executor = ProcessPool(max_workers=self.workers, initializer=_warm,
                                     context=multiprocessing.get_context("spawn"))
        return self._executor

    def _restart(self):
        _close(self._executor)
        return self._start()

    def _map_processes(self, fn, items, window) -> Iterator[Outcome]:
        """Each row on its own future (module docstring): a row whose worker
        died goes to the front of the queue, and fails once it has killed
        ``RETRIES + 1`` workers; only that row pays for it."""
        from pebble import ProcessExpired

        executor = self._executor or self._start()
        pending: dict[Future, tuple[object, int]] = {}  # future -> (item, workers it killed)
        again: deque[tuple[object, int]] = deque()  # rows to run again, before any new row
        source = iter(items)
        exhausted, breaks = False, 0
        while True:
            broken = None
            while len(pending) < window and (again or not exhausted):
                if again:
                    item, deaths = again.popleft()
                else:
                    try:
                        item, deaths = next(source), 0
                    except StopIteration:
                        exhausted = True
                        break
                try:
                    pending[executor.schedule(fn, args=(item,))] = (item, deaths)
                except RuntimeError as exc:  # pebble refuses rows once its pool broke
                    again.appendleft((item, deaths))
                    broken = BrokenProcessPool(str(exc))
                    break
            if not pending and broken is None:
                return
            done = set() if broken else wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)[0]
            if not done and broken is None and not executor.active:  # a broken pool may drop rows not yet sent
                broken = BrokenProcessPool("the worker pool stopped")
            for future in done:
                item, deaths = pending.pop(future)
                try:
                    result = future.result()
                except ProcessExpired as exc:  # an OSError: before the row's own errors
                    if deaths >= RETRIES:
                        self.notes.append(f"a worker process died running {_label(item)} (exit code {exc.exitcode}) "
                                          f"again: it killed {deaths + 1} workers, so it fails ({RETRIES} retries)")
                        yield Outcome(item, error=exc)
                    else:
                        self.notes.append(f"a worker process died running {_label(item)} (exit code {exc.exitcode}); "
                                          f"it runs again ({RETRIES - deaths} retries left), the other rows go on")
                        again.appendleft((item, deaths + 1))
                    continue
                except BrokenProcessPool as exc:
                    broken = exc
                    again.appendleft((item, deaths))
                    continue
                except Exception as exc:  # the row fails, the others go on
                    breaks = 0
                    yield Outcome(item, error=exc)
                    continue
                breaks = 0
                yield Outcome(item, result)
            if broken is not None:
                # which row (if any) broke the pool is unknown: its rows run again on a new pool, uncounted
                again.extend(pending.values())
                pending.clear()
                breaks += 1
                if breaks > RETRIES:
                    self.notes.append(f"the worker pool broke {breaks} times without finishing a row ({broken}): "
                                      f"its {len(again)} rows fail")
                    while again:
                        yield Outcome(again.popleft()[0], error=broken)
                    executor = self._restart()
                    breaks = 0
                    continue
                self.notes.append(f"the worker pool broke ({broken}); a new one runs its {len(again)} rows again")
                executor = self._restart()

    def _map_dask(self, fn, items, window) -> Iterator[Outcome]:
        from distributed import wait as dask_wait

        client = self._client
        source = iter(items)
        pending: dict = {}  # future -> item
        workerless_since = None
        while True:
            for item in source:
                pending[client.submit(fn, item, pure=False, retries=RETRIES)] = item
                if len(pending) >= window:
                    break
            if not pending:
                return
            try:
                done, _ = dask_wait(list(pending), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            for future in done:
                item = pending.pop(future)
                try:
                    yield Outcome(item, future.result())
                except Exception as exc:  # KilledWorker once the retries ran out, or the row's own error
                    yield Outcome(item, error=exc)
                finally:
                    future.release()
            if done:
                workerless_since = None
            elif not client.nthreads():
                # Dask keeps the rows of a cluster without workers waiting for one forever
                workerless_since = workerless_since or time.monotonic()
                if time.monotonic() - workerless_since > self.workerless_seconds:
                    for future in pending:
                        future.release()
                    raise ClusterLost(self.dask_address or "LocalCluster",
                                       f"the cluster has had no worker for {self.workerless_seconds:.0f} s; "
                                       f"{len(pending)} rows were not run (the next run makes them)", self.source)
            else:
                workerless_since = None
            workers = set(client.nthreads())
            gone = (self._workers_seen or workers) - workers
            if gone:
                named = ", ".join(sorted(gone))
                self.notes.append(f"Dask {noun(len(gone), 'worker')} {named} left the cluster; Dask runs their rows "
                                  f"again on the others ({RETRIES} retries a row)")
            self._workers_seen = workers


def _label(item) -> str:
    key = getattr(item, "key", None)
    return f"row ({key[0]},{key[1]})" if isinstance(key, tuple) and len(key) == 2 else "a row"


def _close(executor) -> None:
    """Stop a pebble pool: its workers are stopped (a row in flight writes
    nothing, so nothing is lost that a rerun does not make again) and its
    threads joined."""
    executor.stop()
    executor.join()


def _refused(address: str) -> str | None:
    """The refusal of a TCP connection to a ``tcp://host:port`` address (the
    port closed there), else None: a host that does not answer in time, or
    another scheme, is left to Dask's own connect and its timeout."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address)
    if parts.scheme != "tcp" or not parts.hostname or not parts.port:
        return None
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=CONNECT_TIMEOUT_SECONDS).close()
    except ConnectionRefusedError as exc:
        return exc.strerror or str(exc)
    except OSError:
        return None
    return None


def connect(address: str, timeout: float = CONNECT_TIMEOUT_SECONDS, source: str = "the Dask address"):
    """A ``distributed.Client`` on the scheduler at ``address``, or one
    :class:`ClusterError` sentence naming ``source`` (where the address came
    from: an option, an environment variable): the address does not parse,
    nobody answers, or the cluster has no worker."""
    problem = check_address(address)
    if problem:
        raise ClusterError(address, problem, source)
    refused = _refused(address)
    if refused:  # Dask would retry a refused connection until its timeout: a closed port is an answer
        raise ClusterError(address, f"no Dask scheduler answers there (ConnectionRefusedError: {refused})", source)
    from distributed import Client

    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else "timed out"
        raise ClusterError(address, f"no Dask scheduler answers there ({type(exc).__name__}: {first})",
                           source) from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError):
        client.close()
        raise ClusterError(address, f"the scheduler answers but has no worker (waited {timeout:.0f} s)",
                           source) from None
    return client
