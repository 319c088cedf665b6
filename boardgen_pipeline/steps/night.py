"""One night of calibration, whatever starts it (SPEC 7 "nightly calibration
runs: every parameter row sampled, the F4 assertions evaluated, results
kept"; SPEC 9 "a nightly schedule runs the calibration"; docs/pipeline.md
"One nightly").

A night is one batch of runs, tagged with the night's id:

1. ``prepare``: the tables observed and validated, the node-map draws;
2. ``rows``: every row, in ranges of about equal cost (``steps.runs.plan``),
   each run recording its own rows;
3. ``table``: once every run of 1 and 2 has finished, whether it succeeded
   or not, the table-wide checks and figures, which name the rows that did
   not finish;
4. ``retention``: once the table run has finished, the old runs forgotten.

:func:`plan` gives 1 and 2; :func:`follow_up` says what starts next, from
the night's runs as the engine keeps them. The schedule (under the daemon)
and ``boardgen nightly`` (without one) call the same functions: the
schedule asks for ``prepare``, and a run-status sensor asks
:func:`follow_up` each time a run of the night ends (the rows once
``prepare`` has, the table run once every row run has, ...);
``boardgen nightly`` asks for the same ``prepare``, asks :func:`follow_up`
at once (the rows), executes them in its own processes and asks again when
they are done. Who asks is written on every run of the night
(:data:`FOLLOW_TAG`), so a daemon never follows a night that a ``boardgen
nightly`` process follows itself.

Liveness (:func:`in_flight`): a run that has not finished is in flight
unless it was executed on this host by a process that is gone. A run of
another host, or launched by the daemon, is Dagster's to judge (its run
monitoring) or the operator's: nothing here marks it failed.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from boardgen_pipeline.steps.runs import Range, process_alive
from boardgen_pipeline.steps.runs import plan as plan_ranges

PREPARE, ROWS, TABLE, RETENTION = "prepare", "rows", "table", "retention"
STAGES = (PREPARE, ROWS, TABLE, RETENTION)

# A run's tags are few: the Runs page shows every tag of the boardgen/ kind on each run (a night's rows run
# carried eleven). What one tag says is not said again by another: the stage is the run key's first word,
# and where a run is executed is one host:pid.
NIGHT_TAG = "boardgen/night"  # the night's id: the Runs page filtered by it lists the night
KEY_TAG = "boardgen/run"  # the run's key in its night: prepare, rows-000, table, retention (its stage first)
OF_TAG = "boardgen/of"  # on a rows run: how many rows runs the night has
TRIGGER_TAG = "boardgen/trigger"  # schedule, nightly (boardgen nightly), table_edit, ui
FOLLOW_TAG = "boardgen/follow"  # who starts what follows the rows: "daemon" or "process"
EXECUTOR_TAG = "boardgen/executor"  # host:pid of the process executing the run, when a boardgen process does it
LAUNCHER_TAG = "boardgen/launcher"  # host:pid of the process that asked for the run (a schedule, a nightly)
SCHEDULE, NIGHTLY, TABLE_EDIT = "schedule", "nightly", "table_edit"
DAEMON, PROCESS = "daemon", "process"
TRIGGERS = (SCHEDULE, NIGHTLY)


@dataclass(frozen=True)
class RunSpec:
    """One run of a night: its stage, its key in the night, and for a rows
    run the range of partitions it records (registration order)."""

    stage: str
    key: str
    first: str | None = None
    last: str | None = None
    rows: int = 0
    of: int = 0  # a rows run: how many rows runs the night has

    def tags(self, night: str) -> dict[str, str]:
        tags = {KEY_TAG: self.key, NIGHT_TAG: night}
        return {**tags, OF_TAG: str(self.of)} if self.stage == ROWS else tags


def stage_of(key: str) -> str:
    """A night's run's stage, from its key (``rows-003`` is a rows run); empty
    for a run that is no run of a night."""
    stage = (key or "").split("-", 1)[0]
    return stage if stage in STAGES else ""


@dataclass(frozen=True)
class NightRun:
    """What :func:`follow_up` reads of one run of the night."""

    key: str
    stage: str
    finished: bool
    success: bool = False
    of: int = 0  # a rows run: how many rows runs the night has (its tag)


def new_night(when: datetime | None = None, trigger: str = NIGHTLY) -> str:
    """A night's id: when it started (UTC), what started it, and a few random
    characters, so two nights never share one (two ``boardgen nightly`` at
    once on one instance are two nights)."""
    when = (when or datetime.now(UTC)).astimezone(UTC)
    return f"{when:%Y-%m-%dT%H%M%S}-{trigger}-{uuid.uuid4().hex[:6]}"


def plan(order: list[str], costs: dict[str, float], slots: int, max_rows: int | None = None,
         prepare_cost: float = 0.0) -> list[RunSpec]:
    """The night's first runs: ``prepare``, then the rows in ranges
    (``steps.runs.plan`` over the registered partitions ``order``), each
    range one run; the ranges come lane by lane, so runs taken in order by
    ``slots`` executors walk the table from both ends of its cost. The lane
    that also runs ``prepare`` (the last, :func:`lanes_of`) gets rows for
    what is left of its share after ``prepare_cost``."""
    kwargs = {"max_rows": max_rows} if max_rows else {}
    lanes = plan_ranges(order, costs, slots, tail=prepare_cost, **kwargs)
    ranges: list[Range] = [r for lane in lanes for r in lane]
    return [RunSpec(PREPARE, PREPARE), *(RunSpec(ROWS, f"rows-{i:03d}", r.first, r.last, r.rows, len(ranges))
                                         for i, r in enumerate(ranges))]


def lanes_of(specs: list[RunSpec], slots: int) -> list[list[RunSpec]]:
    """``specs`` dealt to ``slots`` executors: the rows runs in order, a
    contiguous stretch of the table each; ``prepare``, which only the table
    run waits for, last on the last executor (alone on one, when there are
    fewer rows runs than executors)."""
    rows = [s for s in specs if s.stage == ROWS]
    others = [s for s in specs if s.stage != ROWS]
    slots = max(1, slots)
    used = max(1, min(slots - (1 if others and len(rows) < slots else 0), len(rows)))
    per = -(-len(rows) // used) if rows else 0
    lanes: list[list[RunSpec]] = [[] for _ in range(slots)]
    for i, spec in enumerate(rows):
        lanes[min(used - 1, i // per)].append(spec)
    lanes[min(slots - 1, used if len(rows) < slots else slots - 1)].extend(others)
    return [lane for lane in lanes if lane]


def follow_up(runs: list[NightRun], rows: list[RunSpec]) -> list[RunSpec]:
    """What the night starts now, given its runs and its rows plan: the rows
    runs when none has started (they need the tables validated and pinned,
    which happened before ``prepare`` was asked for, not ``prepare``
    itself); nothing while a prepare or rows run is unfinished, or while one
    of the night's rows runs (their tag says how many) is yet to be created;
    then the table run; once it has ended, the retention run (after it, so
    that tonight's checks have replaced last night's, which it may then
    forget); then nothing (the night is over)."""
    by_stage: dict[str, list[NightRun]] = {s: [] for s in STAGES}
    for r in runs:
        by_stage.setdefault(r.stage, []).append(r)
    if not by_stage[ROWS] and rows and not by_stage[TABLE]:
        return list(rows)
    if any(not r.finished for s in (PREPARE, ROWS) for r in by_stage[s]):
        return []
    if by_stage[ROWS] and len({r.key for r in by_stage[ROWS]}) < max(r.of for r in by_stage[ROWS]):
        return []  # a rows run of the night is yet to be created
    if not by_stage[TABLE]:
        return [RunSpec(TABLE, TABLE)]
    if any(not r.finished for r in by_stage[TABLE]):
        return []
    if not by_stage[RETENTION]:
        return [RunSpec(RETENTION, RETENTION)]
    return []


def over(runs: list[NightRun]) -> bool:
    """Whether the night has run its retention to the end."""
    return any(r.stage == RETENTION and r.finished for r in runs)


def here() -> dict[str, str]:
    """The tags of a run this process executes: this host and process."""
    return {EXECUTOR_TAG: launcher()}


def executor_of(tags: dict[str, str]) -> tuple[str, int] | None:
    """``(host, pid)`` of the boardgen process that executes a run (its
    executor tag), None when no boardgen process does (the daemon launched it)."""
    host, _, pid = tags.get(EXECUTOR_TAG, "").rpartition(":")
    return (host, int(pid)) if host and pid.isdigit() else None


def launcher(pid: int | None = None) -> str:
    """``host:pid`` of a process of this host (default: this process, the one asking for a run)."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def pid_here(tags: dict[str, str]) -> int | None:
    """The pid of the process of this host that executes a run (its executor
    tag); None for another host's, or a run the daemon launched."""
    executor = executor_of(tags)
    return executor[1] if executor is not None and executor[0] == socket.gethostname() else None


def executor_alive(tags: dict[str, str], started: float) -> bool:
    """Whether the process that executes a run (its executor tag) may be
    alive: True for another host, a run without the tags (launched by the
    daemon: Dagster's run monitoring judges it), or a live process here."""
    pid = pid_here(tags)
    return pid is None or process_alive(pid, started)


def unfinished_rows(order: list[str], ranges: list[tuple[str, str]], made: set[str]) -> list[str]:
    """The rows of the night's failed or cancelled rows runs (``ranges``,
    first and last partition in ``order``) that no run of the night recorded
    (``made``): the rows that did not finish."""
    index = {k: i for i, k in enumerate(order)}
    out = []
    for first, last in ranges:
        if first not in index or last not in index:
            continue
        out.extend(k for k in order[index[first]:index[last] + 1] if k not in made)
    return sorted(set(out), key=index.__getitem__)
