"""The processes that execute a night's runs for ``boardgen nightly`` (SPEC 8
``make run``; docs/pipeline.md "One nightly").

A lane is a fork of one server process that imported what every lane needs
once (the standard library's ``forkserver``: :func:`start_server` starts it
with its ``preload`` modules while the nightly does its own set-up; each
lane then starts with them loaded, and two lanes cost one import). Each is
sent its runs on a pipe of its own (one object a run) and answers one
object a run on another. The nightly waits on their answers (never a poll
of files), reads the engine between them (the progress bar), and, when a
lane's answers end before it answered every run it was sent, says so: the
caller fails the runs that lane was executing (it holds the lane's handle,
so they are certainly its own) and hands the runs it had not begun to a
live lane, or a new one.

Plain processes and pipes, no Dagster: the runs' content is the caller's.
"""

from __future__ import annotations

import multiprocessing
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_for
from pathlib import Path

from boardgen_pipeline.words import count as counted


def _context(preload: list[str], method: str | None = None):
    """A context whose processes fork from one server that imported
    ``preload`` (``spawn`` where the platform has no fork server, or when
    ``method`` says so)."""
    if method is None:
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(preload)
    return ctx


def start_server(preload: list[str]) -> Path | None:
    """Start the lanes' fork server now, so that its imports overlap the
    caller's set-up (starting the first lane waits for them); it inherits
    this process's environment as it is now. Returns the folder holding the
    server's socket, for :func:`remove_server_folder` (None: no fork server
    on this platform)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    from multiprocessing import forkserver, util

    _context(preload)
    forkserver.ensure_running()
    return Path(util.get_temp_dir())  # this process's folder, where the server's socket was made


def remove_server_folder(folder: Path | None) -> None:
    """Remove the fork server's socket folder (``pymp-*`` in the temporary
    directory). The standard library removes it when the interpreter ends
    normally; the nightly ends without that teardown (``os._exit``), and
    every night would leave one behind."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Lane:
    """One lane process: its handle, its two pipes, the runs sent and not yet
    answered (each ``(key, order)``)."""

    proc: multiprocessing.process.BaseProcess
    orders: Connection  # ours to write: the lane's runs
    answers: Connection  # ours to read: one answer a run
    pending: list = field(default_factory=list)
    dead: bool = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        """The lane's exit code once it has ended (minus the signal that killed it)."""
        return self.proc.exitcode

    def send(self, key: str, order: dict) -> None:
        self.pending.append((key, order))
        try:
            self.orders.send(order)
        except OSError:  # the lane is gone: the wait notices its end and hands its runs on
            pass


def lane_spawner(target: Callable, *args, preload: list[str] = (), method: str | None = None) -> Callable[[], Lane]:
    """``spawn()`` for :class:`Lanes`: a new process running
    ``target(orders, answers, *args)`` (a module-level function), forked
    from the server :func:`start_server` started (started here if not);
    ``method`` another of ``multiprocessing``'s start methods."""
    ctx = _context(list(preload), method)

    def spawn() -> Lane:
        orders_in, orders = ctx.Pipe(duplex=False)
        answers, answers_out = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=target, args=(orders_in, answers_out, *args), daemon=False)
        proc.start()
        orders_in.close()  # the lane's ends are the lane's alone: its death then ends our reads
        answers_out.close()
        return Lane(proc, orders, answers)

    return spawn


class Lanes:
    """The night's lanes. ``spawn()`` starts one (:func:`lane_spawner`);
    ``lost(lane)`` is called when one dies and returns the keys of the runs
    it had begun (the engine knows)."""

    def __init__(self, spawn: Callable[[], Lane], count: int, lost: Callable[[Lane], set[str]] | None = None):
        self._spawn, self.on_lost = spawn, lost
        self.lanes = [spawn() for _ in range(count)]
        self.notes: list[str] = []

    def live(self) -> Lane:
        """A live lane (a new one when every lane has died)."""
        for lane in self.lanes:
            if not lane.dead:
                return lane
        lane = self._spawn()
        self.lanes.append(lane)
        return lane

    def deal(self, orders: list[tuple[str, dict]]) -> None:
        """Each ``(key, order)`` to the next live lane in turn: runs asked for
        together execute at once, one a lane."""
        live = [lane for lane in self.lanes if not lane.dead] or [self.live()]
        for i, (key, order) in enumerate(orders):
            live[i % len(live)].send(key, order)

    def busy(self) -> bool:
        return any(lane.pending for lane in self.lanes if not lane.dead)

    def wait(self, tick: Callable[[], None] | None = None, seconds: float = 2.0) -> None:
        """Until every run sent has been answered; ``tick()`` between the answers,
        at most ``seconds`` apart."""
        while self.busy():
            by_pipe = {lane.answers: lane for lane in self.lanes if not lane.dead}
            for pipe in wait_for(list(by_pipe), timeout=seconds):
                lane = by_pipe[pipe]
                try:
                    answer = pipe.recv()
                except (EOFError, OSError):  # the lane's answers ended: it died
                    self._died(lane)
                    continue
                if "run_id" in answer and lane.pending:
                    lane.pending.pop(0)
            if tick is not None:
                tick()

    def _died(self, lane: Lane) -> None:
        lane.proc.join()
        lane.dead = True
        lane.answers.close()
        begun = self.on_lost(lane) if self.on_lost is not None else set()
        rest = [(key, order) for key, order in lane.pending if key not in begun]
        lane.pending = []
        self.notes.append(f"a lane died (pid {lane.pid}, exit {lane.returncode}); {counted(len(rest), 'run')} it "
                          "had not begun go to another lane")
        if rest:
            other = self.live()
            for key, order in rest:
                other.send(key, order)

    def close(self) -> None:
        """End every lane's orders (a lane exits when they end) and wait for them."""
        for lane in self.lanes:
            lane.orders.close()
        for lane in self.lanes:
            lane.proc.join()
            if not lane.answers.closed:
                lane.answers.close()
