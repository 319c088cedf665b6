"""``boardgen ui`` (``make ui``): the Dagster UI and daemon on the instance,
stopped cleanly by Ctrl-C or SIGTERM (SPEC 8 ``make ui``).

Creates the instance folder (``home``), then runs ``dagster dev`` on the
code location under ``boardgen_pipeline.processes.supervise``, in a
process group of its own: ``dagster dev`` gets the SIGTERM and stops its
webserver, daemon and code servers itself, removing their temporary
folders; whatever of the group is left after the grace period is killed,
so no daemon outlives the launcher holding the instance. (Signalled whole,
the group's code servers died under ``dagster dev`` and left their socket
folders; and a ``dagster dev`` started with SIGINT ignored, as a background
job of a script, ignored SIGTERM too: it was killed at the end of the grace
period, leaving its workspace behind.) Once ``dagster dev`` has gone, what it
left in its group (a run worker the daemon launched) is asked to stop at once
(``processes.TAIL_SECONDS``), not waited for until the end of the grace period.

``dagster dev`` is superseded in Dagster 1.13 by ``dg dev`` (the
``dagster-dg-cli`` package, for projects in its own layout, which this code
location is not); it warns so on every start (``SupersessionWarning``), which
a designer running ``make ui`` cannot act on. That one warning is filtered in
that one process (``-W`` with its message): every other warning is shown.
"""

import contextlib
import sys
from pathlib import Path


def main(argv=None) -> int:
    """``python -m boardgen_dagster.ui ARGS``: ``boardgen ui ARGS``."""
    from boardgen_pipeline import cli

    return cli.main(["ui", *(sys.argv[1:] if argv is None else argv)])


# Python's -W filter: the start of the one message dagster dev prints at every start (its own supersession)
DEV_SUPERSEDED = "ignore:Function `dev_command` is superseded"

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
    from boardgen_pipeline.processes import supervise

    with contextlib.ExitStack() as stack:
        cmd = [sys.executable, "-W", DEV_SUPERSEDED, "-m", "dagster", "dev", "-w", str(workspace_file(stack)),
               "-p", str(args.port), "-h", args.host]
        code = supervise(cmd)
    print("boardgen UI stopped", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
