"""What the test suite must leave as it found it (docs/decisions/test-postgres.md):
the listening sockets of this machine, and its own PostgreSQL clusters (up or
down, and the roles of those that run).

``tests/conftest.py`` takes a :func:`snapshot` when pytest starts and
:func:`leaks` compares one taken after the last test. A leak is: a listening
TCP port or unix socket held by a process of this test session (every process
the session starts inherits :data:`MARKER` in its environment, and so does
whatever it starts in turn), or by a PostgreSQL server that carries no
session's marker (the machine's cluster, started through ``pg_ctlcluster`` or
a service manager); a machine cluster started or created; a role added to a
running one. Sockets of other processes of a shared machine (another user's,
another test session's) are named, not blamed.

Reads ``/proc`` (Linux), ``pg_lsclusters`` and, for the roles of a running
cluster, ``psql`` as the cluster's owner (root only: another user cannot read
them without a password, and is told the roles were not compared).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

MARKER = "BOARDGEN_TEST_SESSION"  # set by tests/conftest.py when pytest starts; inherited by every process it starts
UNIX_LISTENING = 0x00010000  # __SO_ACCEPTCON in /proc/net/unix's Flags column
TCP_LISTEN = "0A"


@dataclass(frozen=True)
class Socket:
    kind: str  # "tcp" or "unix"
    address: str  # "127.0.0.1:5432", "[::1]:8786" or a socket path ("@name" for the abstract namespace)
    inode: int = field(compare=False)

    def __str__(self) -> str:
        return f"{self.kind} {self.address}"


@dataclass
class Snapshot:
    sockets: set[Socket]
    clusters: dict[str, str]  # "15/main" -> "online" / "down"
    roles: dict[str, set[str]]  # "15/main" -> its roles (running clusters, read as root)
    notes: list[str]


def _hex_address(text: str) -> str:
    host, port = text.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        ip = ".".join(str(b) for b in raw[::-1])
    else:  # IPv6: four little-endian 32-bit words
        words = [raw[i:i + 4][::-1] for i in range(0, 16, 4)]
        full = b"".join(words).hex()
        ip = "[" + ":".join(full[i:i + 4] for i in range(0, 32, 4)) + "]"
    return f"{ip}:{int(port, 16)}"


def listening_sockets(proc_net: Path = Path("/proc/net")) -> set[Socket]:
    """Every listening TCP socket and unix socket of this network namespace."""
    out: set[Socket] = set()
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc_net / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == TCP_LISTEN:
                out.add(Socket("tcp", _hex_address(cols[1]), int(cols[9])))
    try:
        lines = (proc_net / "unix").read_text().splitlines()[1:]
    except OSError:
        lines = []
    for line in lines:
        cols = line.split()
        if len(cols) >= 8 and int(cols[3], 16) & UNIX_LISTENING:
            out.add(Socket("unix", cols[7], int(cols[6])))
    return out


def owners(inodes: set[int]) -> dict[int, list[int]]:
    """The processes holding each socket inode (every process's, as root)."""
    found: dict[int, list[int]] = {}
    wanted = {f"socket:[{i}]": i for i in inodes}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fds = list((proc / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target in wanted:
                found.setdefault(wanted[target], []).append(int(proc.name))
    return found


def _environ(pid: int) -> dict[str, str] | None:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def clusters() -> dict[str, str]:
    """The machine's PostgreSQL clusters (Debian's ``pg_lsclusters``) and whether each runs."""
    tool = shutil.which("pg_lsclusters")
    if tool is None:
        return {}
    done = subprocess.run([tool, "--no-header"], capture_output=True, text=True, check=False)
    out = {}
    for line in done.stdout.splitlines():
        cols = line.split()
        if len(cols) >= 4:
            out[f"{cols[0]}/{cols[1]}"] = cols[3]
    return out


def roles(cluster: str) -> set[str] | None:
    """The roles of a running machine cluster, read as its owner; None when they cannot be read."""
    psql, runuser = shutil.which("psql"), shutil.which("runuser")
    if os.geteuid() != 0 or psql is None or runuser is None:
        return None
    owner = "postgres"
    tool = shutil.which("pg_lsclusters")
    if tool:
        for line in subprocess.run([tool, "--no-header"], capture_output=True, text=True, check=False).stdout.splitlines():
            cols = line.split()
            if len(cols) >= 5 and f"{cols[0]}/{cols[1]}" == cluster:
                owner = cols[4]
    done = subprocess.run([runuser, "-u", owner, "--", psql, "--cluster", cluster, "-XAtq", "-d", "postgres",
                           "-c", "select rolname from pg_roles"], capture_output=True, text=True, check=False,
                          cwd="/")
    if done.returncode != 0:
        return None
    return set(done.stdout.split())


def snapshot() -> Snapshot:
    state = clusters()
    notes, found = [], {}
    for name, status in state.items():
        if status != "online":
            continue
        got = roles(name)
        if got is None:
            notes.append(f"the roles of the running cluster {name} cannot be read here (root reads them): not compared")
        else:
            found[name] = got
    return Snapshot(listening_sockets(), state, found, notes)


def _blame(pid: int, marker: str) -> bool:
    """Whether a process holding a new listening socket is this session's
    fault: it carries this session's marker, or it is a PostgreSQL server that
    carries no session's (started outside any test session's environment, as
    ``pg_ctlcluster`` or a service manager starts the machine's cluster). A
    process whose environment cannot be read is another user's."""
    env = _environ(pid)
    if env is None:
        return False
    if env.get(MARKER) == marker:
        return True
    return MARKER not in env and _comm(pid) in ("postgres", "postmaster")


def leaks(before: Snapshot, after: Snapshot, marker: str) -> tuple[list[str], list[str]]:
    """``(leaks, notes)``: what this session left (each a sentence), and what
    changed on the machine that was not this session's doing."""
    bad, notes = [], list(after.notes)
    new = sorted(after.sockets - before.sockets, key=str)
    held = owners({s.inode for s in new}) if new else {}
    for sock in new:
        pids = held.get(sock.inode, [])
        who = ", ".join(f"pid {p} ({_command(p)[:160]})" for p in pids) or "no process seen"
        # root sees every process's sockets: one held by no process it can see is not explained away
        unseen = not pids and os.geteuid() == 0
        if unseen or any(_blame(p, marker) for p in pids):
            bad.append(f"a listening socket was added and left open: {sock}, held by {who}")
        else:
            notes.append(f"a listening socket of another process appeared meanwhile (not this session's): {sock}, {who}")
    for name, status in sorted(after.clusters.items()):
        was = before.clusters.get(name)
        if was is None:
            bad.append(f"a PostgreSQL cluster was created on this machine: {name} ({status})")
        elif was != "online" and status == "online":
            bad.append(f"the machine's PostgreSQL cluster {name} was started (it was {was})")
    for name, now in sorted(after.roles.items()):
        added = now - before.roles.get(name, now)
        if added:
            # a role does not say who made it: on a machine shared with another test session, name the suspect
            bad.append(f"role(s) added to the machine's cluster {name} while the tests ran: {', '.join(sorted(added))}"
                       + (" (an earlier set-up's superuser: scripts/ensure_postgres_binaries.sh drops it)"
                          if "boardgen_test" in added else ""))
    return bad, notes
