"""Running ``boardgen nightly`` as a user does, and comparing the
warehouses it writes (shared by the tests that start nightlies: scale-out,
PostgreSQL, concurrency, the publishing path). No tests here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
BOARDGEN = str(Path(sys.executable).with_name("boardgen"))  # the command a user runs (pyproject.toml scripts)
SAMPLES = "64"
# A nightly is waited on to its end; a hung one fails its test instead of the CI job. No claim
# about speed: a cold numba cache alone compiles the kernels for minutes.
TIMEOUT = 1200


def nightly_command(tables: Path, root: Path, home: Path, *extra: str, samples: str = SAMPLES) -> list[str]:
    """The ``boardgen nightly`` command line of :func:`nightly`."""
    return [BOARDGEN, "nightly", "--tables", str(tables), "--warehouse", str(root), "--dagster-home", str(home),
            "--samples", samples, *extra]


def nightly(tables: Path, root: Path, home: Path, *extra: str, env: dict | None = None, wait: bool = True,
            samples: str = SAMPLES):
    """``boardgen nightly`` on ``tables`` into ``root`` with the
    Dagster home ``home``: ``(exit code, stdout, stderr)``, or the process
    itself with ``wait=False``."""
    proc = subprocess.Popen(nightly_command(tables, root, home, *extra, samples=samples), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    if not wait:
        return proc
    out, err = proc.communicate(timeout=TIMEOUT)
    return proc.returncode, out, err


def parquet_files(root: Path) -> dict[str, bytes]:
    """Every published file's bytes; a calibration history version's records
    but the time it was first published, which is the only thing that differs
    between two warehouses built at different times."""
    out = {}
    for p in sorted(Path(root).rglob("*.parquet")):
        if "_rejected" in p.parts or "_damaged" in p.parts:
            continue
        rel = str(p.relative_to(root))
        if rel.startswith("calibration_history/"):
            out[rel] = repr(pq.read_table(p).drop_columns(["published_at"]).to_pylist()).encode()
        else:
            out[rel] = p.read_bytes()
    return out
