"""Every setting of a calibration, read and checked in one place (SPEC 7 the
batch, SPEC 8 the commands, SPEC 9 the schedule; docs/operations.md
"Settings").

A setting has an option (``--samples``), an environment variable
(``BOARDGEN_SAMPLES``), a domain and a default; :func:`resolve` takes what a
caller was given (a command line, a run's config from the launchpad) and the
environment, and returns the settings with every value outside its domain as
a :class:`~boardgen_pipeline.errors.Violation`, all at once. The command
line, ``make run``, the Dagster code location and the launchpad all call it,
so a value gets the same domain and the same one sentence wherever it comes
from: ``--samples 9999`` on the command line, ``BOARDGEN_SAMPLES=9999`` in
the environment, ``samples: 9999`` in a run's config.

Nothing here is read when a module is imported: a bad environment value
fails the command or the run that reads it, never the code location's
loading.

Why the bounds are what they are:

* ``samples`` in ``[1, 4096]``: a row's batch is scopes ``sigma(L, D) + i``
  and ``sigma`` puts adjacent depths 4096 apart (``scopes.DEPTH_SPACING``):
  a larger batch would share scopes with the next row's;
* seeds are non-negative (the stream hash names them) and stored in 64-bit
  Parquet columns;
* ``workers`` is one thing: how many rows are computed at once, each in a
  process of its own (the nightly's runs at once; ``calibrate``'s worker
  processes; the ranges the schedule cuts the table into);
* ``keep_days`` at most a century: a typo of a year in days, not a policy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path

from boardgen_pipeline import paths
from boardgen_pipeline.errors import Violation
from boardgen_pipeline.scopes import DEFAULT_SAMPLES, DEPTH_SPACING

RULE = "argument_domain"
SEED_MAX = 2**63 - 1  # scopes and master seeds are Parquet int64 columns
KEEP_DAYS_MAX = 36500
DEFAULT_ADVENTURES = 2000
DEFAULT_CRON = "0 2 * * *"
DEFAULT_TIMEZONE = "UTC"
DEFAULT_KEEP_DAYS = 30
DEFAULT_ROWS_PER_RUN = 250
BATCH_WHY = f"a row's batch is scopes sigma(L,D)+i and adjacent depths are {DEPTH_SPACING} apart"


@dataclass(frozen=True)
class Setting:
    """One setting: its name (the option ``--name`` with ``-`` for ``_``), its
    environment variable, its kind and domain, and why."""

    name: str
    env: str
    kind: str  # int, float, dir, path, text, dask, cron, timezone
    default: object = None
    lo: float | None = None
    hi: float | None = None
    why: str = ""

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")


SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("tables", "BOARDGEN_TABLES", "dir", why="the tables folder"),
    Setting("warehouse", "BOARDGEN_WAREHOUSE", "path", why="the warehouse folder"),
    Setting("dagster_home", "DAGSTER_HOME", "path", why="the Dagster instance folder"),
    Setting("samples", "BOARDGEN_SAMPLES", "int", DEFAULT_SAMPLES, 1, DEPTH_SPACING, BATCH_WHY),
    Setting("master_seed", "BOARDGEN_MASTER_SEED", "int", 0, 0, SEED_MAX, "the master seed"),
    Setting("adventures", "BOARDGEN_NODE_MAP_ADVENTURES", "int", DEFAULT_ADVENTURES, 1, 10**6,
            "adventures simulated by the node-map draws"),
    Setting("workers", "BOARDGEN_WORKERS", "int", None, 1, 1024, "rows computed at once, each in a process of its own"),
    Setting("run_workers", "BOARDGEN_RUN_WORKERS", "int", 1, 1, 1024, "worker processes inside one run"),
    Setting("dask", "BOARDGEN_DASK", "dask", "", why="a Dask scheduler tcp://host:port"),
    Setting("dask_wait_seconds", "BOARDGEN_DASK_WAIT_SECONDS", "float", 60.0, 1, 86400,
            "how long a run waits for a cluster without workers"),
    Setting("cron", "BOARDGEN_NIGHTLY_CRON", "cron", DEFAULT_CRON, why="when the nightly schedule runs"),
    Setting("timezone", "BOARDGEN_TIMEZONE", "timezone", DEFAULT_TIMEZONE, why="the nightly schedule's time zone"),
    Setting("keep_days", "BOARDGEN_KEEP_DAYS", "int", DEFAULT_KEEP_DAYS, 1, KEEP_DAYS_MAX,
            "days of calibration runs the Dagster home keeps"),
    Setting("keep_runs", "BOARDGEN_KEEP_RUNS", "int", None, 1, None, "newest calibration runs the Dagster home keeps"),
    Setting("rows_per_run", "BOARDGEN_ROWS_PER_RUN", "int", DEFAULT_ROWS_PER_RUN, 1, 100000,
            "rows a run of a backfill launched from the UI covers"),
    Setting("progress_seconds", "BOARDGEN_PROGRESS_SECONDS", "float", 2.0, 0.05, 3600,
            "how often the nightly's progress bar reads the runs"),
)}

NIGHTLY = ("tables", "warehouse", "dagster_home", "samples", "master_seed", "adventures", "workers", "run_workers",
           "dask", "dask_wait_seconds", "keep_days", "keep_runs", "progress_seconds")
SCHEDULE = ("cron", "timezone")


@dataclass(frozen=True)
class Settings:
    """Resolved settings (every value in its domain)."""

    tables: Path
    warehouse: Path
    dagster_home: Path
    samples: int = DEFAULT_SAMPLES
    master_seed: int = 0
    adventures: int = DEFAULT_ADVENTURES
    workers: int | None = None
    run_workers: int = 1
    dask: str = ""
    dask_wait_seconds: float = 60.0
    cron: str = DEFAULT_CRON
    timezone: str = DEFAULT_TIMEZONE
    keep_days: int = DEFAULT_KEEP_DAYS
    keep_runs: int | None = None
    rows_per_run: int = DEFAULT_ROWS_PER_RUN
    progress_seconds: float = 2.0
    source: Mapping[str, str] | None = None  # name -> where its value came from ("--samples", "$BOARDGEN_SAMPLES")
    # a night's pinned tables: the folder they were copied from, which messages and commands name
    tables_source: Path | None = None

    def describe(self) -> list[tuple[str, str, str]]:
        """``(setting, value, from)`` for every setting, for ``--check-settings``."""
        out = []
        for f in fields(self):
            if f.name not in SETTINGS:  # bookkeeping of where values came from, not a setting
                continue
            spec = SETTINGS[f.name]
            came = (self.source or {}).get(f.name, "default")
            out.append((f"{spec.option} / ${spec.env}", str(getattr(self, f.name)), came))
        return out


def _domain(spec: Setting) -> str:
    def shown(x) -> str:
        return "2^63-1" if x == SEED_MAX else (str(int(x)) if float(x).is_integer() else f"{x:g}")

    if spec.lo is None:
        return ""
    return f"[{shown(spec.lo)}, {shown(spec.hi)}]" if spec.hi is not None else f">= {shown(spec.lo)}"


def _number(spec: Setting, value, from_text: bool) -> tuple[object, str | None]:
    """``value`` as the setting's number, or the sentence of its domain."""
    kind = "an integer" if spec.kind == "int" else "a number"
    if from_text:
        try:
            value = int(value) if spec.kind == "int" else float(value)
        except (TypeError, ValueError):
            return None, f"must be {kind} {_domain(spec)}".rstrip()
    is_int = isinstance(value, int) and not isinstance(value, bool)
    ok = is_int if spec.kind == "int" else (is_int or isinstance(value, float))
    if not ok or (spec.lo is not None and value < spec.lo) or (spec.hi is not None and value > spec.hi):
        return None, f"must be {kind} {_domain(spec)}".rstrip()
    return value, None


def check_address(address: str) -> str | None:
    """Why ``address`` cannot name a Dask scheduler (None when it can):
    ``tcp://host:port`` (or ``tls://``, ``inproc://``), or ``host:port``."""
    text = address.strip()
    if not text:
        return "empty address"
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme not in ("tcp", "tls", "inproc", "ws", "wss"):
        return f"unknown protocol {scheme!r} (tcp://host:port)"
    if scheme == "inproc":
        return None
    host, colon, port = rest.rpartition(":")
    if not colon or not host:
        return "no port (tcp://host:port, e.g. tcp://127.0.0.1:8786)"
    if not port.isdigit() or not 0 < int(port) < 65536:
        return f"port {port!r} is not a number in [1, 65535]"
    return None



def check_value(spec: Setting, value, from_text: bool = False,
                cron_problem: Callable[[str], str | None] | None = None) -> tuple[object, str | None]:
    """One value of ``spec``: ``(value, None)`` or ``(None, why it is outside its domain)``."""
    if spec.kind in ("int", "float"):
        return _number(spec, value, from_text)
    text = str(value)
    if spec.kind == "dir":
        path = Path(text)
        if not path.is_dir():
            return None, "must be an existing directory" + (" (it is a file)" if path.exists() else " (not found)")
        return path, None
    if spec.kind == "path":
        path = Path(text)
        return (None, "must be a directory (it is a file)") if path.exists() and not path.is_dir() else (path, None)
    if spec.kind == "dask":
        problem = check_address(text) if text else None
        return (None, f"must be a Dask scheduler address tcp://host:port ({problem})") if problem else (text, None)
    if spec.kind == "timezone":
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(text)
        except (ZoneInfoNotFoundError, ValueError):
            return None, "must be an IANA time zone, e.g. UTC or Europe/Paris"
        return text, None
    if spec.kind == "cron":
        problem = cron_problem(text) if cron_problem is not None else None
        return (None, f"must be a cron expression, e.g. \"0 2 * * *\" ({problem})") if problem else (text, None)
    return text, None


def resolve(given: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None,
            names=NIGHTLY, prog: str = "boardgen nightly", given_as: str = "option",
            cron_problem: Callable[[str], str | None] | None = None) -> tuple[Settings, list[Violation]]:
    """The settings ``names`` from ``given`` (an option's value wins), else the
    environment, else the default; with every violation, one sentence each.
    ``given_as``: how a given value is named in a violation (``option``:
    ``--samples``; ``config``: ``settings.samples`` of a run's config)."""
    environ = os.environ if environ is None else environ
    given = given or {}
    values: dict[str, object] = {}
    source: dict[str, str] = {}
    violations: list[Violation] = []
    for name in names:
        spec = SETTINGS[name]
        value, text = given.get(name), None
        if value is not None and value != "":
            where = spec.option if given_as == "option" else f"settings.{name}"
            file = prog if given_as == "option" else "run config"
        elif environ.get(spec.env, "") != "":
            text = environ[spec.env]
            value, where, file = text, f"${spec.env}", "environment"
        else:
            continue
        checked, problem = check_value(spec, value, from_text=text is not None, cron_problem=cron_problem)
        if problem is not None:
            why = f" ({spec.why})" if spec.why and spec.kind in ("int", "float") else ""
            of = f" (the default of {spec.option})" if file == "environment" else ""
            violations.append(Violation(file, "-", where, value, RULE, f"{problem}{why}{of}"))
            continue
        values[name] = checked
        source[name] = where
    settings = Settings(
        tables=values.get("tables") or paths.default_tables_dir(),
        warehouse=Path(values["warehouse"]).resolve() if "warehouse" in values else paths.default_warehouse(),
        dagster_home=Path(values["dagster_home"]).resolve() if "dagster_home" in values else paths.default_dagster_home(),
        **{n: values[n] for n in values if n not in ("tables", "warehouse", "dagster_home")},
        source=source, tables_source=Path(given["tables_source"]) if given.get("tables_source") else None)
    return settings, violations


def schedule_settings(environ: Mapping[str, str] | None = None,
                      cron_problem: Callable[[str], str | None] | None = None) -> tuple[str, str, list[Violation]]:
    """The nightly schedule's cron and time zone, for a code location that must
    load whatever the environment says: a bad value falls back to its
    default and comes back as a violation, which the schedule's ticks report."""
    settings, bad = resolve({}, environ, SCHEDULE, prog="the nightly schedule", cron_problem=cron_problem)
    return settings.cron, settings.timezone, bad
