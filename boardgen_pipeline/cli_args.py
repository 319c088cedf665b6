"""Domains of the command-line arguments (every argument is
checked against its domain before any work; SPEC 8; SPEC 2.7's report
style; seed 001 F4 for the batch sizes).

``boardgen`` and ``boardgen nightly`` call :func:`check_command` /
:func:`check_nightly` right after parsing, before reading a table or
generating a board. Every argument outside its domain becomes a
:class:`~boardgen_pipeline.errors.Violation` (file = the command, field = the
option, value, rule ``argument_domain``), all reported together, exit code 2
(argparse's code for a bad command line), no traceback.

Why the bounds are what they are:

* seeds and scopes are non-negative (the stream hash names them) and stored
  in 64-bit Parquet columns: ``[0, 2^63 - 1]``;
* ``calibrate --samples`` and ``advise --samples`` in ``[1, 4096]``: a row's
  batch is scopes ``sigma(L, D) + i`` and ``sigma`` puts adjacent depths
  4096 apart (``scopes.DEPTH_SPACING``), so a larger batch would share scopes
  with the next row's;
* ``advise --probes`` in ``[1, 2048]``: the probes of a batch of up to 2048
  boards are the row's scopes ``sigma(L, D) + 2048 + i``
  (``scopes.PROBE_OFFSET``, the advisor's), which end where the next row's
  begin;
* ``advise --apply`` writes the table, so it needs its rows (``--row`` or
  ``--all``); ``--all`` and ``--dry-run`` only qualify ``--apply``;
* ``tune --samples`` in ``[1, 2048]`` and ``--max-boards`` in ``[64, 2048]``:
  the proposal is proven on the calibration batch ``sigma(L, D) + i`` and
  searched on the probe scopes ``sigma(L, D) + 2048 + i``, which must not
  meet; a candidate's first look is 64 boards (``tuning.search.LOOKS``);
* ``history --row`` is one row key (a trajectory is one row's);
* ``diff`` and ``watch`` (docs/review.md): ``--samples`` as ``calibrate``'s;
  ``--margin FIGURE=VALUE`` names a figure of the diff (a name that is none
  is an ``unknown_figure``, told the nearest names) and a number >= 0;
  ``--alpha`` in ``(0, 0.5]`` (a false discovery rate above one half flags
  noise); ``--resamples`` in ``[99, 99999]`` (fewer cannot reach a p-value of
  0.02; more costs minutes a row); an ``--output`` file's suffix names its
  format; ``watch --poll`` in ``(0, 10]`` seconds;
* ``bench`` takes the ``board_gen`` table's own field domains (SPEC 2.7) and
  its cross-field rules (``r0_max_cap`` range, at least one mine, one safe
  cell); only the cost gate is left out, as the speed presets exceed it on
  purpose (``board/bench.py``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from boardgen_pipeline import settings
from boardgen_pipeline.errors import TableError, Violation
from boardgen_pipeline.scopes import DEPTH_SPACING, PROBE_OFFSET
from boardgen_pipeline.settings import BATCH_WHY, SEED_MAX
from boardgen_pipeline.tables.board_gen import DOMAINS, BoardGenRow, Header, mines_target

# Where a command looks when the option is not given (paths.py's defaults), said once for every parser.
TABLES_HELP = "tables directory (default: $BOARDGEN_TABLES, else the checkout's tables/, else the package's own)"
WAREHOUSE_HELP = "warehouse directory (default: $BOARDGEN_WAREHOUSE, else the checkout's warehouse/, else ./warehouse)"
DAGSTER_HOME_HELP = "the Dagster home (default: $DAGSTER_HOME, else the checkout's .dagster_home, else ./.dagster_home)"

RULE = "argument_domain"


BENCH_SPAWN_SIDE = 3  # the C baseline's spawn square (board/bench.py)



class ArgumentError(TableError):
    """Command-line arguments outside their domains; ``violations`` lists them all."""

    usage = True  # exit USAGE: said before any work began

    def report(self) -> str:
        n = len(self.violations)
        head = f"{n} command-line violation{'s' if n != 1 else ''}:"
        return "\n".join([head, *(f"  - {v}" for v in self.violations)])


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Checker:
    def __init__(self, prog: str, values: Mapping[str, object]):
        self.prog = prog
        self.values = values
        self.violations: list[Violation] = []

    def bad(self, option: str, value, message: str) -> None:
        self.violations.append(Violation(self.prog, "-", option, value, RULE, message))

    def int_range(self, dest: str, lo: int, hi: int | None, why: str = "") -> None:
        value = self.values.get(dest)
        if value is None:
            return
        if not _is_int(value) or value < lo or (hi is not None and value > hi):
            top = "2^63-1" if hi == SEED_MAX else hi
            domain = f"[{lo}, {top}]" if hi is not None else f">= {lo}"
            self.bad(_option(dest), value, f"must be an integer {domain}" + (f" ({why})" if why else ""))

    def seed(self, dest: str, what: str) -> None:
        self.int_range(dest, 0, SEED_MAX, what)

    def directory(self, dest: str, must_exist: bool) -> None:
        value = self.values.get(dest)
        if value is None:
            return
        path = Path(value)
        if must_exist and not path.is_dir():
            self.bad(_option(dest), value, "must be an existing directory"
                     + (" (it is a file)" if path.exists() else " (not found)"))
        elif path.exists() and not path.is_dir():
            self.bad(_option(dest), value, "must be a directory (it is a file)")

    def dask_address(self, dest: str) -> None:
        value = self.values.get(dest)
        if value is None:
            return
        from boardgen_pipeline.settings import check_address

        problem = check_address(str(value))
        if problem:
            self.bad(_option(dest), value, f"must be a Dask scheduler address tcp://host:port ({problem})")

    def row_keys(self, dest: str) -> None:
        text = self.values.get(dest)
        if not text:
            return
        for part in split_row_keys(str(text)):
            key = parse_row_key(part)
            if key is None:
                self.bad(_option(dest), part, "must be row keys L,D separated by spaces, e.g. \"1,0 2,4\"")
            elif not row_key_in_domain(key):
                self.bad(_option(dest), part, "a row key L,D has level_index >= 1 and node_depth >= 0")

    def row_key(self, dest: str) -> None:
        """Exactly one row key L,D (``history --row``: one row's trajectory)."""
        text = self.values.get(dest)
        if text is None:
            return
        keys = split_row_keys(str(text))
        key = parse_row_key("".join(keys))
        if len(keys) > 1 and all("," in k for k in keys):
            self.bad(_option(dest), text, "must be one row key L,D, e.g. 2,4 (a trajectory is one row's)")
        elif key is None or not row_key_in_domain(key):
            self.bad(_option(dest), text, "must be a row key L,D with level_index >= 1 and node_depth >= 0, e.g. 2,4")


def split_row_keys(text: str) -> list[str]:
    """The row keys of a ``--rows`` / ``--row`` value: separated by spaces (or ``;``)."""
    return text.replace(";", " ").split()


def parse_row_key(text: str) -> tuple[int, int] | None:
    """The row key ``L,D`` that ``text`` spells, or None when it spells none."""
    try:
        level, depth = (int(p) for p in text.split(","))
    except ValueError:
        return None
    return level, depth


def row_key_in_domain(key: tuple[int, int]) -> bool:
    return key[0] >= 1 and key[1] >= 0


def _option(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def check_command(command: str, values: Mapping[str, object]) -> list[Violation]:
    """Every domain violation of one ``boardgen`` subcommand's parsed
    arguments (``vars(args)``); ``command`` is e.g. ``"generate"`` or
    ``"nodemap draw"``."""
    c = _Checker(f"boardgen {command}", values)
    c.directory("tables", must_exist=True)
    c.directory("warehouse", must_exist=False)  # every command that has the option (nightly checks its own)
    if command == "generate":
        c.int_range("level", 1, None, "level_index of a board_gen row")
        c.int_range("depth", 0, None, "node_depth; the floor rule picks the row")
        c.seed("seed", "a board_gen scope")
        c.seed("master_seed", "the master seed")
    elif command == "calibrate":
        c.violations.extend(check_calibrate_environment(values))
        c.int_range("samples", 1, DEPTH_SPACING, BATCH_WHY)
        c.seed("master_seed", "the master seed")
        c.row_keys("rows")
    elif command == "advise":
        c.int_range("samples", 1, DEPTH_SPACING, BATCH_WHY)
        c.int_range("probes", 1, DEPTH_SPACING - PROBE_OFFSET,
                    f"probe scopes sigma(L,D)+{PROBE_OFFSET}+i stay inside the row's {DEPTH_SPACING} scopes")
        c.seed("master_seed", "the master seed")
        c.row_keys("row")
        c.violations.extend(check_advise_apply(values, c.prog))
    elif command == "tune":
        c.int_range("samples", 1, PROBE_OFFSET, f"the calibration batch sigma(L,D)+i ends before the probe scopes "
                                                f"sigma(L,D)+{PROBE_OFFSET}+i the search measures on")
        c.int_range("max_boards", 64, DEPTH_SPACING - PROBE_OFFSET,
                    f"a candidate's first look is 64 boards; the probe scopes sigma(L,D)+{PROBE_OFFSET}+i stay "
                    f"inside the row's {DEPTH_SPACING} scopes")
        c.seed("master_seed", "the master seed")
        c.row_keys("rows")
        names = ("workers", "dask")
        c.violations.extend(settings.resolve(_given(values, names), None, names, prog=c.prog)[1])
    elif command == "nodemap draw":
        c.seed("seed", "the adventure's master seed")
    elif command == "verify":
        c.int_range("samples", 1, DEPTH_SPACING, BATCH_WHY)
        c.seed("master_seed", "the master seed")
        c.row_keys("rows")
        c.violations.extend(check_calibrate_environment(values))
        if values.get("rows") is not None and not values.get("regenerate"):
            c.bad("--rows", values["rows"], "names the rows --regenerate generates: give --regenerate --rows ...")
    elif command in ("diff", "watch"):
        c.violations.extend(check_review(values, c.prog))
    elif command == "history":
        c.row_key("row")
    elif command == "sql":
        c.int_range("max_rows", 1, None, "rows shown in table format")
    elif command == "bench":
        c.violations.extend(check_bench(values, c.prog))
    elif command == "prune":
        home = values.get("dagster_home") or os.environ.get("DAGSTER_HOME") or None
        c.violations.extend(check_prune({**values, "dagster_home": home}))
    elif command == "nightly":
        # its --tables too, and the environment behind its defaults; --check-settings prints them itself
        c.violations = [] if values.get("check_settings") else check_nightly(values)
    elif command == "export":
        c.int_range("samples", 1, DEPTH_SPACING, BATCH_WHY)
        c.seed("master_seed", "the master seed")
    elif command == "ui":
        c.int_range("port", 1, 65535, "a TCP port")
        c.directory("dagster_home", must_exist=False)
    return c.violations


def add_review_options(p) -> None:
    """The options ``diff`` and ``watch`` share (docs/review.md)."""
    p.add_argument("--warehouse", help=WAREHOUSE_HELP + "; the stored boards and reports @warehouse names")
    p.add_argument("--samples", type=int, default=256, help="boards per row, 1..4096, on the row's calibration scopes "
                                                            "(default: 256)")
    p.add_argument("--master-seed", type=int, default=0, help="master seed, >= 0 (default: 0)")
    p.add_argument("--margin", action="append", default=[], metavar="FIGURE=VALUE",
                   help="a figure's practical margin, >= 0 (repeatable; default: docs/review.md, or the table "
                        "header's review_margins)")
    p.add_argument("--resamples", type=int, default=1999,
                   help="bootstrap and permutation resamples, 99..99999 (default: 1999)")


def parse_margins(items) -> dict[str, float]:
    """``--margin FIGURE=VALUE`` options as ``{figure: margin}`` (checked by :func:`check_review`)."""
    out = {}
    for item in items or ():
        name, _, value = str(item).partition("=")
        out[name.strip()] = float(value)
    return out


def check_review(values: Mapping[str, object], prog: str) -> list[Violation]:
    """``diff`` and ``watch``'s arguments (module docstring)."""
    import math

    from boardgen_pipeline.review.figures import KNOWN, unknown_figure
    from boardgen_pipeline.review.render import SUFFIXES

    c = _Checker(prog, values)
    c.int_range("samples", 1, DEPTH_SPACING, BATCH_WHY)
    c.seed("master_seed", "the master seed")
    c.int_range("resamples", 99, 99_999, "bootstrap and permutation resamples")
    for item in values.get("margin") or ():
        name, eq, value = str(item).partition("=")
        if not eq:
            c.bad("--margin", item, "must be FIGURE=VALUE, e.g. mean_guesses=0.1 (the figures: docs/review.md)")
            continue
        if name.strip() not in KNOWN:
            c.violations.append(Violation(prog, "-", "--margin", item, "unknown_figure", unknown_figure(name.strip())))
            continue
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not math.isfinite(number) or number < 0:
            c.bad("--margin", item, "the margin must be a number >= 0 (the smallest move worth flagging)")
    alpha = values.get("alpha")
    if alpha is not None and not (isinstance(alpha, (int, float)) and 0 < alpha <= 0.5):
        c.bad("--alpha", alpha, "must be in (0, 0.5]: the false discovery rate of the flags")
    poll = values.get("poll")
    if poll is not None and not (isinstance(poll, (int, float)) and 0 < poll <= 10):
        c.bad("--poll", poll, "must be in (0, 10] seconds")
    for name in values.get("output") or ():
        if Path(str(name)).suffix.lower() not in SUFFIXES:
            c.bad("--output", name, f"the suffix names the format: one of {', '.join(SUFFIXES)}")
    return c.violations


def check_advise_apply(values: Mapping[str, object], prog: str = "boardgen advise") -> list[Violation]:
    """``advise``'s ``--apply``, ``--all`` and ``--dry-run``:
    ``--apply`` writes the table, so it names its rows (``--row``, or
    ``--all`` for every failing row); the two others only qualify it."""
    out: list[Violation] = []
    apply, every, dry, row = (values.get(k) for k in ("apply", "all", "dry_run", "row"))
    if dry and not apply:
        out.append(Violation(prog, "-", "--dry-run", True, RULE, "previews --apply: give --apply --dry-run"))
    if every and not apply:
        out.append(Violation(prog, "-", "--all", True, RULE,
                             "names the rows --apply fixes: give --apply --all (without --apply, advise reads every row)"))
    if every and row is not None:
        out.append(Violation(prog, "-", "--all", True, RULE, "and --row both name the rows: give one of them"))
    if apply and not every and row is None:
        out.append(Violation(prog, "-", "--apply", True, RULE,
                             "writes the table: name the rows with --row L,D, or give --all for every failing row"))
    if apply and row is not None and not str(row).replace(";", " ").split():
        out.append(Violation(prog, "-", "--row", row, RULE, "names no row: --apply has nothing to apply"))
    return out


BENCH_FIELDS = {
    # bench option -> board_gen field whose domain it takes
    "width": "board_width",
    "height": "board_height",
    "density": "mine_density",
    "target": "inferability_target",
    "attempts": "max_gen_attempts",
    "shave": "shave_ring_radius",
    "cap": "r0_max_cap",
}


def check_bench(values: Mapping[str, object], prog: str = "boardgen bench") -> list[Violation]:
    """``bench`` arguments against the ``board_gen`` field domains (the
    table's own pydantic model decides) and its cross-field rules."""
    out: list[Violation] = []

    def bad(option, value, message):
        out.append(Violation(prog, "-", option, value, RULE, message))

    fields = {f: values.get(opt) for opt, f in BENCH_FIELDS.items()}
    raw = dict(level_index=1, node_depth=0, solver_rules="single_subset", min_safe_count=1,
               board_type="dungeon", **fields)
    # argparse gives Python ints for type=int options and floats for type=float
    # ones; the table's strict model must not refuse a density given as "1".
    if _is_int(raw["mine_density"]):
        raw["mine_density"] = float(raw["mine_density"])
    if _is_int(raw["inferability_target"]):
        raw["inferability_target"] = float(raw["inferability_target"])
    broken = set()
    try:
        BoardGenRow(**raw)
    except ValidationError as exc:
        for err in exc.errors():
            field = str(err["loc"][0]) if err["loc"] else "-"
            option = next((o for o, f in BENCH_FIELDS.items() if f == field), field)
            broken.add(option)
            bad(f"--{option}", values.get(option), f"must be {DOMAINS.get(field, '?')}, the domain of {field}")
    boards = values.get("boards")
    if boards is not None and (not _is_int(boards) or boards < 1):
        bad("--boards", boards, "must be an integer >= 1")
    if broken & {"width", "height", "density", "cap"}:
        return out  # the cross-field rules need sound sizes
    w, h, d, cap = values.get("width"), values.get("height"), values.get("density"), values.get("cap")
    spawn = Header(spawn_side=BENCH_SPAWN_SIDE).spawn_cells
    if not spawn <= cap <= (w * h) // 2:
        bad("--cap", cap, f"must be in [spawn_cells, floor(W*H/2)] = [{spawn}, {(w * h) // 2}], the domain of r0_max_cap")
    n = mines_target(d, w, h, BENCH_SPAWN_SIDE)
    if n < 1:
        bad("--density", d, f"N = round(density * (W*H - spawn_cells)) = {n}; a board needs N >= 1")
    elif w * h - n < 1:
        bad("--density", d, f"W*H - N = {w * h - n}; a board needs a safe cell")
    return out


def _given(values: Mapping[str, object], names) -> dict:
    return {n: values.get(n) for n in names if values.get(n) is not None}


def check_calibrate_environment(values: Mapping[str, object], environ: Mapping[str, str] | None = None
                                ) -> list[Violation]:
    """``boardgen calibrate``'s ``--workers`` and ``--dask``, given or from
    ``$BOARDGEN_WORKERS`` and ``$BOARDGEN_DASK`` (``settings``)."""
    names = ("workers", "dask")
    return settings.resolve(_given(values, names), environ, names, prog="boardgen calibrate")[1]


def check_nightly(values: Mapping[str, object], environ: Mapping[str, str] | None = None) -> list[Violation]:
    """``boardgen nightly``'s arguments, and the environment variables that
    stand for the options not given (``settings.resolve``)."""
    return settings.resolve(_given(values, settings.NIGHTLY), environ, settings.NIGHTLY, prog="boardgen nightly")[1]


def check_prune(values: Mapping[str, object], environ: Mapping[str, str] | None = None) -> list[Violation]:
    """``boardgen prune``: the Dagster home (which must exist), and how many
    runs it keeps (``--keep-runs``, else ``$BOARDGEN_KEEP_RUNS``, else the
    days of ``$BOARDGEN_KEEP_DAYS``)."""
    names = ("keep_days", "keep_runs")
    out = settings.resolve(_given(values, names), environ, names, prog="boardgen prune")[1]
    c = _Checker("boardgen prune", values)
    c.directory("dagster_home", must_exist=True)
    return c.violations + out


def add_nightly_options(p) -> None:
    """The options of ``boardgen nightly`` (``make run``)."""
    p.add_argument("--tables", help=TABLES_HELP)
    p.add_argument("--warehouse", help=WAREHOUSE_HELP)
    p.add_argument("--samples", type=int, help="boards per row, 1..4096 (default: $BOARDGEN_SAMPLES, else 256)")
    p.add_argument("--master-seed", type=int, help="master seed, >= 0 (default: $BOARDGEN_MASTER_SEED, else 0)")
    p.add_argument("--adventures", type=int, help="adventures the node-map draws simulate, >= 1 (default: "
                                                  "$BOARDGEN_NODE_MAP_ADVENTURES, else 2000)")
    p.add_argument("--dagster-home", help=DAGSTER_HOME_HELP)
    p.add_argument("--workers", type=int,
                   help="runs at once, each recording its rows in a process of its own (default: $BOARDGEN_WORKERS, "
                        "else every core the process may use)")
    p.add_argument("--dask", help="Dask scheduler address tcp://host:port: the rows' chains run on that cluster "
                                  "(default: $BOARDGEN_DASK)")
    p.add_argument("--keep-days", type=int, help="keep the calibration runs of the last N days, 1..36500 (default: "
                                                   "$BOARDGEN_KEEP_DAYS, else 30)")
    p.add_argument("--keep-runs", type=int, help="keep the newest N calibration runs instead, >= 1 (default: "
                                                   "$BOARDGEN_KEEP_RUNS)")
    p.add_argument("--check-settings", action="store_true",
                   help="print every setting (the schedule's cron and time zone too), where it came from, and every "
                        "value outside its domain; run nothing (exit 0, or 2; default: off)")
