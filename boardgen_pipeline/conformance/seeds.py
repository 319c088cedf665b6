"""Registered seeds for seed 001 AC-11 and AC-12, found by search, never
picked by hand ("登记 σ … σ 失效即重搜并登记"; SPEC 11 "registered seeds for
AC-11/12 found by search").

Each acceptance case states a precondition its seed must meet; the search
walks the ``board_gen`` scopes from ``SEARCH_START`` up (master seed 0) and
takes the first that meets it. The registry (``registered_seeds.json``
beside this module) records, for each case, the seed, where the search
began, how many scopes it examined, the precondition in words and the
integers that show it holds. ``boardgen conformance seeds`` runs the search
again: a registered seed that no longer meets its precondition (a change of
the generator or of the row the fixture is built on) fails loudly (exit 3)
with the seed the search finds now; ``--register`` writes that one.

- **AC-11** (fixture ``a1_high_target``, target 1.0): with two attempts,
  attempt 1 is legal but below the target (B1 in Lm, the leg's
  precondition) and attempt 2 is legal and below it too, so the board
  leaves by ``best_legal`` after exactly 2 attempts, chosen between two
  scored boards.
- **AC-12** (fixture ``a1_ec5``, no attempt can be legal): the least-bad
  board's badness over ``k`` in {1, 2, 8, 16} attempts falls at least once,
  so the vector shows the least-bad choice at work, not a constant.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from boardgen_pipeline.conformance import kitjson
from boardgen_pipeline.conformance.cases import EC5, EC5_ATTEMPTS, HIGH_TARGET
from boardgen_pipeline.conformance.trace import BoardTrace, trace_board
from boardgen_pipeline.tables.board_gen import BoardGenTable

REGISTRY = Path(__file__).with_name("registered_seeds.json")
FORMAT = "boardgen-registered-seeds"
SEARCH_START = 0
SEARCH_LIMIT = 4096  # scopes examined before the search gives up
MASTER_SEED = 0


def badness(t: BoardTrace) -> list[int]:
    """The least-bad key of a board's chosen attempt (SPEC 2.5)."""
    return list(t.attempts[t.chosen - 1].attempt(t.row).badness())


def _ac11(table: BoardGenTable, scope: int) -> tuple[bool, dict]:
    two = trace_board(HIGH_TARGET[2].row(table), table.spawn_side, scope, MASTER_SEED)
    one = trace_board(HIGH_TARGET[1].row(table), table.spawn_side, scope, MASTER_SEED)
    first = two.attempts[0]
    why = {"attempt_1": first.verdict, "attempt_2": two.attempts[1].verdict if len(two.attempts) > 1 else None,
           "exit_at_2": two.exit, "attempts_used_at_2": len(two.attempts), "exit_at_1": one.exit,
           "inferability_at_2": [two.measure["revealed"], two.measure["safe_count"]],
           "inferability_at_1": [one.measure["revealed"], one.measure["safe_count"]]}
    # attempt 2 legal too: best_legal then chooses between two scored boards, which is what the leg's
    # inferability(@2) >= inferability(@1) is about
    ok = (first.verdict == "below_target" and len(two.attempts) == 2 and two.attempts[1].verdict == "below_target"
          and two.exit == "best_legal")
    return ok, why


def _ac12(table: BoardGenTable, scope: int) -> tuple[bool, dict]:
    traces = [trace_board(EC5[k].row(table), table.spawn_side, scope, MASTER_SEED) for k in EC5_ATTEMPTS]
    keys = [badness(t) for t in traces]
    firsts = [key[:4] for key in keys]  # the attempt number aside: it grows with k by construction
    why = {"badness_by_attempts": {str(k): key for k, key in zip(EC5_ATTEMPTS, keys)},
           "exits": [t.exit for t in traces]}
    ok = (traces[0].attempts[0].gate is not None and all(t.exit == "least_bad" for t in traces)
          and all(a >= b for a, b in zip(firsts, firsts[1:])) and firsts[0] != firsts[-1])
    return ok, why


@dataclass(frozen=True)
class Case:
    ac: str
    fixtures: tuple[str, ...]
    precondition: str
    holds: object  # (table, scope) -> (bool, why)


CASES = (
    Case("AC-11", tuple(f.name for f in HIGH_TARGET.values()),
         "with 2 attempts, attempt 1 is legal and below the target (B1 in Lm), attempt 2 is legal and below the "
         "target too, so the board leaves by best_legal after 2 attempts", _ac11),
    Case("AC-12", tuple(f.name for f in EC5.values()),
         "attempt 1 is illegal (Lm = {} at attempts = 1) and the least-bad badness over k = 1, 2, 8, 16 attempts "
         "never rises and falls at least once", _ac12),
)


class SearchFailed(Exception):
    """No scope in the search range meets a case's precondition."""


def search(case: Case, table: BoardGenTable, start: int = SEARCH_START) -> dict:
    """The first scope from ``start`` meeting ``case``'s precondition, as a registry entry."""
    for scope in range(start, start + SEARCH_LIMIT):
        ok, why = case.holds(table, scope)
        if ok:
            return {"ac": case.ac, "fixtures": list(case.fixtures), "master_seed": MASTER_SEED, "scope": scope,
                    "search_start": start, "examined": scope - start + 1, "precondition": case.precondition,
                    "why": why}
    raise SearchFailed(f"{case.ac}: no scope in [{start}, {start + SEARCH_LIMIT}) meets its precondition "
                       f"({case.precondition})")


class RegistryError(Exception):
    """The registry file cannot be read as one."""


def load_registry(path: Path | None = None) -> dict[str, dict]:
    path = REGISTRY if path is None else path
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RegistryError(f"{path} cannot be read as the registered seeds: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("seeds"), list):
        raise RegistryError(f"{path} is not a registered-seeds file (format {FORMAT!r})")
    return {entry["ac"]: entry for entry in data["seeds"]}


def registry_text(entries: list[dict], tables_digest: str) -> str:
    return kitjson.dumps({"format": FORMAT, "tables_digest": tables_digest,
                          "note": "written by `boardgen conformance seeds --register`: found by search, never edited "
                                  "by hand", "seeds": entries})


@dataclass(frozen=True)
class Verdict:
    ac: str
    registered: int | None
    holds: bool
    why: dict
    found: dict | None  # the search's entry now (None when the registered seed holds and no search was asked)

    def line(self) -> str:
        if self.registered is None:
            return f"{self.ac}: no seed registered; the search finds scope {self.found['scope']}"
        if self.holds:
            return f"{self.ac}: registered scope {self.registered} still qualifies: {json.dumps(self.why)}"
        new = f"scope {self.found['scope']}" if self.found else "no scope"
        return (f"{self.ac}: registered scope {self.registered} NO LONGER qualifies ({json.dumps(self.why)}); "
                f"the search finds {new}: run `boardgen conformance seeds --register`")


def verify(table: BoardGenTable, registry: dict[str, dict], search_all: bool = False) -> list[Verdict]:
    """Each case's registered seed, checked against its precondition; the
    search runs for a case whose seed fails or is missing (or for every case
    with ``search_all``)."""
    out = []
    for case in CASES:
        entry = registry.get(case.ac)
        if entry is None:
            out.append(Verdict(case.ac, None, False, {}, search(case, table)))
            continue
        ok, why = case.holds(table, int(entry["scope"]))
        found = None
        if not ok or search_all:
            try:
                found = search(case, table, int(entry.get("search_start", SEARCH_START)))
            except SearchFailed:
                found = None
        out.append(Verdict(case.ac, int(entry["scope"]), ok, why, found))
    return out


def registered_scope(ac: str, table: BoardGenTable, registry: dict[str, dict] | None = None) -> int:
    """The registered seed of ``ac``, checked: a seed that no longer meets its
    precondition raises :class:`StaleSeed` (the kit is not written on it)."""
    registry = load_registry() if registry is None else registry
    case = next(c for c in CASES if c.ac == ac)
    entry = registry.get(ac)
    if entry is None:
        raise StaleSeed(f"{ac} has no registered seed: run `boardgen conformance seeds --register`")
    ok, why = case.holds(table, int(entry["scope"]))
    if not ok:
        raise StaleSeed(f"{ac}: registered scope {entry['scope']} no longer meets its precondition "
                        f"({case.precondition}): {json.dumps(why)}; run `boardgen conformance seeds --register`")
    return int(entry["scope"])


class StaleSeed(Exception):
    """A registered seed no longer meets its precondition."""
