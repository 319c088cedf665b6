"""``make ui``: the Dagster UI and daemon on the local instance, stopped cleanly
by Ctrl-C or SIGTERM (issue 13).

``dagster dev`` starts a webserver and a daemon as child processes; a
SIGTERM that reaches ``dagster dev`` alone (``kill``, ``make`` passing it
on, a supervisor) left the daemon running, holding the instance. This
launcher creates the instance folder (``boardgen_dagster.home``), starts ``dagster
dev`` in a process group of its own, and on SIGINT or SIGTERM signals the
whole group, waits, and kills what is left.
"""

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

GRACE_SECONDS = 15


def main(argv=None) -> int:
    """``python -m boardgen_dagster.ui ARGS``: ``boardgen ui ARGS``."""
    from boardgen_pipeline import cli

    return cli.main(["ui", *(sys.argv[1:] if argv is None else argv)])


WORKSPACE = """\
# The boardgen code location, imported by its package name (the repository keeps it in assets/).
# `boardgen ui` (make ui) runs `dagster dev -w workspace.yaml`.
load_from:
  - python_module:
      module_name: boardgen_dagster.definitions
      attribute: defs
      location_name: boardgen
"""


def workspace_file(stack) -> Path:
    """The checkout's ``workspace.yaml``; in an installation, the same text in
    a temporary file that lives as long as ``stack``."""
    from boardgen_pipeline.paths import checkout

    root = checkout()
    if root is not None:
        return root / "workspace.yaml"
    import tempfile

    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="boardgen-ui-")))
    (folder / "workspace.yaml").write_text(WORKSPACE, encoding="utf-8")
    return folder / "workspace.yaml"


def run(args) -> int:
    """``boardgen ui``: ``dagster dev`` on the code location, in a process group
    of its own (arguments checked by ``boardgen``)."""
    from boardgen_dagster.home import ensure_dagster_home

    home = ensure_dagster_home(args.dagster_home)
    print(f"DAGSTER_HOME={home}", flush=True)
    with contextlib.ExitStack() as stack:
        return _serve(workspace_file(stack), args)


def _serve(workspace: Path, args) -> int:
    exe = Path(sys.executable).with_name("dagster")
    cmd = [str(exe), "dev", "-w", str(workspace), "-p", str(args.port), "-h", args.host]
    proc = subprocess.Popen(cmd, start_new_session=True)
    stopping = []

    def stop(signum, _frame):
        stopping.append(signum)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    while not stopping:
        try:
            code = proc.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            continue
    if stopping:
        # dagster dev may take its time (or ignore SIGTERM while it starts): the group gets GRACE_SECONDS
        stop_group(proc.pid)
        proc.wait()
        print("boardgen UI stopped", flush=True)
        return 0
    return code


def stop_group(pgid: int, grace: float = GRACE_SECONDS) -> None:
    """Wait up to ``grace`` seconds for every process of the group (the daemon,
    the webserver) to exit after SIGTERM, then SIGKILL what is left."""
    import time

    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            os.killpg(pgid, 0)  # raises once no process of the group is left
            time.sleep(0.2)
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    sys.exit(main())
