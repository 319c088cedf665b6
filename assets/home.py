"""The local ``DAGSTER_HOME`` (SPEC 10: create it once, with migrations, before
several processes use it; issue 3 "a local DAGSTER_HOME under the repo that is
created before first use").

``python -m assets.home`` creates ``$DAGSTER_HOME`` (default
``<repo>/.dagster_home``) with a ``dagster.yaml`` if it has none, and brings
its storage up to date (what ``dagster instance migrate`` does), under a file
lock so that ``make ui`` and ``make run`` started together do not race. The
migration is stamped per Dagster version, so later calls cost nothing.
"""

import contextlib
import fcntl
import io
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DAGSTER_YAML = """\
# Written by assets/home.py (boardgen). Local instance: SQLite storage in this folder.
# Runs launched from the UI, the nightly schedule and the table-edit sensor are queued and
# run two at a time (this machine has 2 cores); `make run` executes its runs directly.
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 2
telemetry:
  enabled: false
"""


def dagster_home() -> Path:
    env = os.environ.get("DAGSTER_HOME")
    return Path(env).resolve() if env else REPO / ".dagster_home"


def ensure_dagster_home(path: Path | str | None = None) -> Path:
    """Create and migrate the instance folder once; set ``DAGSTER_HOME``."""
    import dagster as dg

    home = Path(path).resolve() if path else dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    stamp = home / f".boardgen-migrated-{dg.__version__}"
    with open(home / ".boardgen-init.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yaml = home / "dagster.yaml"
            if not yaml.exists():
                yaml.write_text(DAGSTER_YAML)
            if not stamp.exists():
                with contextlib.redirect_stdout(io.StringIO()), dg.DagsterInstance.get() as instance:
                    instance.upgrade()  # what `dagster instance migrate` does
                stamp.touch()
                print(f"Dagster home ready (dagster {dg.__version__}): {home}", file=sys.stderr)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    return home


def main() -> int:
    print(f"DAGSTER_HOME={ensure_dagster_home()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
