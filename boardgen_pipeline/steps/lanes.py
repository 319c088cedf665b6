"""The processes that execute a night's runs for ``boardgen nightly`` (SPEC 8
``make run``; docs/pipeline.md "One nightly"): started first, so that their
imports overlap the nightly's own set-up; each sent its runs on its standard
input, one JSON object a line, answering one line a run on its standard
output. The nightly waits on their answers (a ``select`` on their pipes,
never a poll of files), reads the engine between them (the progress bar),
and, when a lane's output ends before it answered every run it was sent,
says so: the caller fails the runs that lane was executing (it holds the
lane's handle, so they are certainly its own) and hands the runs it had not
begun to a live lane, or a new one.

Plain processes and pipes, no Dagster: the runs' content is the caller's.
"""

from __future__ import annotations

import json
import selectors
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Lane:
    """One lane process: its handle, the runs sent and not yet answered (each
    ``(key, order)``), what it has said so far."""

    proc: subprocess.Popen
    pending: list = field(default_factory=list)
    buffer: bytes = b""
    dead: bool = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, key: str, order: dict) -> None:
        self.pending.append((key, order))
        self.proc.stdin.write((json.dumps(order) + "\n").encode())
        self.proc.stdin.flush()


class Lanes:
    """The night's lanes. ``spawn()`` starts one process (stdin and stdout
    pipes); ``lost(lane)`` is called when one dies and returns the keys of
    the runs it had begun (the engine knows)."""

    def __init__(self, spawn: Callable[[], subprocess.Popen], count: int,
                 lost: Callable[[Lane], set[str]] | None = None):
        self._spawn, self.on_lost = spawn, lost
        self.lanes = [Lane(spawn()) for _ in range(count)]
        self.notes: list[str] = []

    def live(self) -> Lane:
        """A live lane (a new one when every lane has died)."""
        for lane in self.lanes:
            if not lane.dead:
                return lane
        lane = Lane(self._spawn())
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
        selector = selectors.DefaultSelector()
        try:
            while self.busy():
                for lane in self.lanes:
                    if not lane.dead and lane.proc.stdout not in selector.get_map():
                        selector.register(lane.proc.stdout, selectors.EVENT_READ, lane)
                for key, _ in selector.select(timeout=seconds):
                    lane = key.data
                    chunk = lane.proc.stdout.read1(65536)
                    if not chunk:  # the lane's output ended: it died
                        selector.unregister(lane.proc.stdout)
                        self._died(lane)
                        continue
                    lane.buffer += chunk
                    *lines, lane.buffer = lane.buffer.split(b"\n")
                    for line in lines:
                        if "run_id" in json.loads(line) and lane.pending:
                            lane.pending.pop(0)
                if tick is not None:
                    tick()
        finally:
            selector.close()

    def _died(self, lane: Lane) -> None:
        lane.proc.wait()
        lane.dead = True
        begun = self.on_lost(lane) if self.on_lost is not None else set()
        rest = [(key, order) for key, order in lane.pending if key not in begun]
        lane.pending = []
        self.notes.append(f"a lane died (pid {lane.pid}, exit {lane.proc.returncode}); {len(rest)} run(s) it had "
                          "not begun go to another lane")
        if rest:
            other = self.live()
            for key, order in rest:
                other.send(key, order)

    def close(self) -> None:
        """End every lane's input (a lane exits when it ends) and wait for them."""
        for lane in self.lanes:
            if lane.proc.stdin and not lane.proc.stdin.closed:
                try:
                    lane.proc.stdin.close()
                except BrokenPipeError:
                    pass
        for lane in self.lanes:
            lane.proc.wait()
            if lane.proc.stdout:
                lane.proc.stdout.close()
